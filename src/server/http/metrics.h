/* The server's counters and their Prometheus text rendering (GET /metrics): requests by route and
 * status, executions by the result's status, a latency histogram per route; the admission gauges are
 * passed in at rendering. Every label set is from a fixed list, so the output is bounded. */
#ifndef FB_HTTP_METRICS_H
#define FB_HTTP_METRICS_H
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "server/http/router.h"
#include "util/buf.h"

#define FB_HTTP_STATUS_SLOTS 13  /* none, 200, 201, 204, 400, 401, 403, 404, 405, 413, 500, 503, other */
#define FB_HTTP_EXEC_SLOTS 6     /* success, error, crash, timeout, terminated, unknown */
#define FB_HTTP_LATENCY_BUCKETS 14 /* 13 upper bounds (5 ms ... 60 s) and +Inf */
#define FB_HTTP_METRICS_MAX (256UL * 1024) /* bytes of rendered text, far above what the labels make */

typedef struct fb_http_metrics {
    pthread_mutex_t mu;
    uint64_t requests[FB_HTTP_ROUTE_COUNT][FB_HTTP_STATUS_SLOTS];
    uint64_t executions[FB_HTTP_EXEC_SLOTS];
    uint64_t latency[FB_HTTP_ROUTE_COUNT][FB_HTTP_LATENCY_BUCKETS]; /* per bucket, not cumulative */
    double latency_sum[FB_HTTP_ROUTE_COUNT];                       /* seconds */
} fb_http_metrics;

int fb_http_metrics_init(fb_http_metrics *m);
void fb_http_metrics_destroy(fb_http_metrics *m);
/* One request answered (status 0: none was sent), seconds from its headers to its end. */
void fb_http_metrics_request(fb_http_metrics *m, fb_http_route_id route, unsigned status, double seconds);
/* One execution's result, by its status field ("success", ...; NULL or other text: "unknown"). */
void fb_http_metrics_execution(fb_http_metrics *m, const char *status);
/* Appends the exposition text (format 0.0.4) to out. -1 on allocation failure. */
int fb_http_metrics_render(fb_http_metrics *m, unsigned running, unsigned queued, unsigned sessions,
                           unsigned long sessions_dead, fb_buf *out);

/* The top-level "status" string of a result JSON, without parsing the rest (a result may be hundreds of
 * megabytes): copied into out (at most cap - 1 bytes). False when there is none or the text is not a
 * JSON object as far as it was read. */
bool fb_http_result_status(const char *json, size_t len, char *out, size_t cap);

#endif
