/* The server's log: one JSON object per line on stderr, for each request answered (time, method, path,
 * status, durationMs, bytes) and for the server's own events (listening, draining, stopped, warnings).
 * Each line goes out in one write(2), so lines of different threads never interleave. */
#ifndef FB_HTTP_LOG_H
#define FB_HTTP_LOG_H
#include <jansson.h>
#include <stdint.h>

#define FB_HTTP_LOG_PATH_MAX 1024 /* bytes of a request's path kept in its line */

/* Writes {"time": ..., <fields>} and a newline to fd 2; takes the reference to fields. */
void fb_http_log(json_t *fields);
/* A request's line; error (NULL when the answer went out) says why it did not. */
void fb_http_log_request(const char *method, const char *path, unsigned status, double duration_ms,
                         uint64_t bytes, const char *error);
/* {"event": event, "message": message} (message may be NULL). */
void fb_http_log_event(const char *event, const char *message);

/* The text of one line: the time (RFC 3339, UTC, milliseconds) first, then fields in their order, then a
 * newline. Caller frees; NULL on allocation failure. */
char *fb_http_log_line(const char *time, const json_t *fields);
/* A string from a client (any bytes) as a JSON string: cut at max bytes, invalid UTF-8 replaced. */
json_t *fb_http_log_string(const char *s, size_t max);

#endif
