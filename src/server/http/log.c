#include "server/http/log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/utf8.h"

json_t *fb_http_log_string(const char *s, size_t max)
{
    if (!s)
        return json_null();
    size_t n = strnlen(s, max), clean_len = 0;
    char *clean = fb_utf8_sanitize(s, n, &clean_len);
    json_t *v = clean ? json_stringn(clean, clean_len) : NULL;
    free(clean);
    return v;
}

char *fb_http_log_line(const char *time, const json_t *fields)
{
    json_t *line = json_pack("{s:s}", "time", time);
    if (!line || json_object_update(line, (json_t *)fields) < 0) {
        json_decref(line);
        return NULL;
    }
    char *text = json_dumps(line, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
    json_decref(line);
    if (!text)
        return NULL;
    size_t n = strlen(text);
    char *out = realloc(text, n + 2);
    if (!out) {
        free(text);
        return NULL;
    }
    out[n] = '\n';
    out[n + 1] = '\0';
    return out;
}

static void now_text(char *buf, size_t cap)
{
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    size_t n = strftime(buf, cap, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + n, cap - n, ".%03ldZ", ts.tv_nsec / 1000000L);
}

static void write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return; /* a log that cannot be written is not a reason to stop serving */
        p += w;
        n -= (size_t)w;
    }
}

void fb_http_log(json_t *fields)
{
    if (!fields)
        return;
    char when[40];
    now_text(when, sizeof when);
    char *line = fb_http_log_line(when, fields);
    json_decref(fields);
    if (line)
        write_all(STDERR_FILENO, line, strlen(line));
    free(line);
}

void fb_http_log_request(const char *method, const char *path, unsigned status, double duration_ms,
                         uint64_t bytes, const char *error)
{
    json_t *f = json_pack("{s:o, s:o, s:i, s:f, s:I}", "method", fb_http_log_string(method, 32), "path",
                          fb_http_log_string(path, FB_HTTP_LOG_PATH_MAX), "status", (int)status, "durationMs",
                          (double)(int64_t)(duration_ms * 1000) / 1000, "bytes", (json_int_t)bytes);
    if (f && error)
        json_object_set_new(f, "error", json_string(error));
    fb_http_log(f);
}

void fb_http_log_event(const char *event, const char *message)
{
    json_t *f = json_pack("{s:s}", "event", event);
    if (f && message)
        json_object_set_new(f, "message", fb_http_log_string(message, 4096));
    fb_http_log(f);
}
