#include "server/http/metrics.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const unsigned k_statuses[FB_HTTP_STATUS_SLOTS - 1] = {0, 200, 201, 204, 400, 401, 403, 404, 405, 413, 500, 503};
static const char *const k_exec_status[FB_HTTP_EXEC_SLOTS] = {"success", "error", "crash", "timeout",
                                                              "terminated", "unknown"};
/* Upper bounds in seconds: a health probe is well under 5 ms, a cold call 10-30 ms, a long call up to
 * the one-hour timeout falls into +Inf. */
static const double k_bounds[FB_HTTP_LATENCY_BUCKETS - 1] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                                             1,     2.5,  5,     10,   30,  60};

int fb_http_metrics_init(fb_http_metrics *m)
{
    memset(m, 0, sizeof *m);
    return pthread_mutex_init(&m->mu, NULL) == 0 ? 0 : -1;
}

void fb_http_metrics_destroy(fb_http_metrics *m)
{
    pthread_mutex_destroy(&m->mu);
}

static size_t status_slot(unsigned status)
{
    for (size_t i = 0; i < FB_HTTP_STATUS_SLOTS - 1; i++)
        if (k_statuses[i] == status)
            return i;
    return FB_HTTP_STATUS_SLOTS - 1;
}

static size_t bucket_of(double seconds)
{
    size_t b = 0;
    while (b < FB_HTTP_LATENCY_BUCKETS - 1 && seconds > k_bounds[b])
        b++;
    return b;
}

void fb_http_metrics_request(fb_http_metrics *m, fb_http_route_id route, unsigned status, double seconds)
{
    if ((unsigned)route >= FB_HTTP_ROUTE_COUNT)
        route = FB_HTTP_ROUTE_NONE;
    if (seconds < 0)
        seconds = 0;
    pthread_mutex_lock(&m->mu);
    m->requests[route][status_slot(status)]++;
    m->latency[route][bucket_of(seconds)]++;
    m->latency_sum[route] += seconds;
    pthread_mutex_unlock(&m->mu);
}

void fb_http_metrics_execution(fb_http_metrics *m, const char *status)
{
    size_t i = 0;
    while (i < FB_HTTP_EXEC_SLOTS - 1 && !(status && strcmp(status, k_exec_status[i]) == 0))
        i++;
    pthread_mutex_lock(&m->mu);
    m->executions[i]++;
    pthread_mutex_unlock(&m->mu);
}

static int put(fb_buf *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int put(fb_buf *out, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof line)
        return -1; /* every line is made of fixed labels and numbers: cannot happen */
    return fb_buf_append(out, line, (size_t)n);
}

static void status_label(size_t slot, char *buf, size_t cap)
{
    if (slot == FB_HTTP_STATUS_SLOTS - 1)
        snprintf(buf, cap, "other");
    else if (k_statuses[slot] == 0)
        snprintf(buf, cap, "none");
    else
        snprintf(buf, cap, "%u", k_statuses[slot]);
}

static int render_requests(const fb_http_metrics *m, fb_buf *out)
{
    int rc = put(out, "# HELP fnbox_http_requests_total HTTP requests answered, by route and status "
                      "(status \"none\": the connection ended before an answer).\n"
                      "# TYPE fnbox_http_requests_total counter\n");
    for (size_t r = 0; r < FB_HTTP_ROUTE_COUNT; r++)
        for (size_t s = 0; s < FB_HTTP_STATUS_SLOTS; s++) {
            if (!m->requests[r][s])
                continue;
            char label[16];
            status_label(s, label, sizeof label);
            rc |= put(out, "fnbox_http_requests_total{route=\"%s\",status=\"%s\"} %" PRIu64 "\n",
                      fb_http_route_name((fb_http_route_id)r), label, m->requests[r][s]);
        }
    return rc;
}

static int render_executions(const fb_http_metrics *m, fb_buf *out)
{
    int rc = put(out, "# HELP fnbox_executions_total Function executions, by the result's status.\n"
                      "# TYPE fnbox_executions_total counter\n");
    for (size_t i = 0; i < FB_HTTP_EXEC_SLOTS; i++)
        rc |= put(out, "fnbox_executions_total{status=\"%s\"} %" PRIu64 "\n", k_exec_status[i], m->executions[i]);
    return rc;
}

static int render_latency(const fb_http_metrics *m, fb_buf *out)
{
    int rc = put(out, "# HELP fnbox_http_request_duration_seconds Time from a request's headers to the end "
                      "of its answer, by route.\n"
                      "# TYPE fnbox_http_request_duration_seconds histogram\n");
    for (size_t r = 0; r < FB_HTTP_ROUTE_COUNT; r++) {
        const char *name = fb_http_route_name((fb_http_route_id)r);
        uint64_t cum = 0;
        for (size_t b = 0; b < FB_HTTP_LATENCY_BUCKETS; b++) {
            cum += m->latency[r][b];
            if (b < FB_HTTP_LATENCY_BUCKETS - 1)
                rc |= put(out, "fnbox_http_request_duration_seconds_bucket{route=\"%s\",le=\"%g\"} %" PRIu64 "\n",
                          name, k_bounds[b], cum);
            else
                rc |= put(out, "fnbox_http_request_duration_seconds_bucket{route=\"%s\",le=\"+Inf\"} %" PRIu64 "\n",
                          name, cum);
        }
        rc |= put(out, "fnbox_http_request_duration_seconds_sum{route=\"%s\"} %.6f\n", name, m->latency_sum[r]);
        rc |= put(out, "fnbox_http_request_duration_seconds_count{route=\"%s\"} %" PRIu64 "\n", name, cum);
    }
    return rc;
}

int fb_http_metrics_render(fb_http_metrics *m, unsigned running, unsigned queued, unsigned sessions,
                           unsigned long sessions_dead, fb_buf *out)
{
    pthread_mutex_lock(&m->mu);
    fb_http_metrics snap = *m; /* a consistent copy; rendering holds no lock */
    pthread_mutex_unlock(&m->mu);
    int rc = render_requests(&snap, out);
    rc |= render_executions(&snap, out);
    rc |= put(out, "# HELP fnbox_executions_in_flight Executions running now.\n"
                   "# TYPE fnbox_executions_in_flight gauge\nfnbox_executions_in_flight %u\n", running);
    rc |= put(out, "# HELP fnbox_executions_queued Requests admitted and waiting for an execution slot "
                   "(their bodies being read included).\n"
                   "# TYPE fnbox_executions_queued gauge\nfnbox_executions_queued %u\n", queued);
    rc |= put(out, "# HELP fnbox_sessions_open Sessions open now.\n"
                   "# TYPE fnbox_sessions_open gauge\nfnbox_sessions_open %u\n", sessions);
    rc |= put(out, "# HELP fnbox_sessions_dead_total Sessions whose sandbox died by itself (the memory limit, a "
                   "signal): closed by the server, their requests answered 410.\n"
                   "# TYPE fnbox_sessions_dead_total counter\nfnbox_sessions_dead_total %lu\n", sessions_dead);
    rc |= render_latency(&snap, out);
    return rc ? -1 : 0;
}

/* ---- the result's status, skimmed ---- */

static size_t skip_ws(const char *s, size_t i, size_t n)
{
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
        i++;
    return i;
}

#define NOT_JSON SIZE_MAX /* what the skimmers return when the text ends, or is not JSON, first */

/* s[i] is '"': the index after the closing quote. */
static size_t skip_string(const char *s, size_t i, size_t n)
{
    for (i++; i < n; i++) {
        if (s[i] == '\\')
            i++;
        else if (s[i] == '"')
            return i + 1;
    }
    return NOT_JSON;
}

/* One value of any kind, iteratively (a result nests up to 2048 levels: no recursion): the index after
 * it. A scalar may end the text (the caller then finds nothing after it). */
static size_t skip_value(const char *s, size_t i, size_t n)
{
    size_t depth = 0;
    while (i < n) {
        char c = s[i];
        if (c == '"') {
            i = skip_string(s, i, n);
            if (i == NOT_JSON || depth == 0)
                return i;
            continue;
        }
        if (c == '{' || c == '[') {
            depth++;
        } else if (c == '}' || c == ']') {
            if (depth == 0)
                return i; /* the end of the enclosing object, after a scalar */
            if (--depth == 0)
                return i + 1;
        } else if (depth == 0 && (c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r')) {
            return i;
        }
        i++;
    }
    return depth == 0 ? n : NOT_JSON;
}

bool fb_http_result_status(const char *json, size_t len, char *out, size_t cap)
{
    static const char k_key[] = "\"status\"";
    size_t i = skip_ws(json, 0, len);
    if (cap == 0 || i >= len || json[i] != '{')
        return false;
    for (i++;;) {
        i = skip_ws(json, i, len);
        if (i >= len || json[i] != '"')
            return false;
        size_t key = i;
        i = skip_string(json, i, len);
        if (i == NOT_JSON)
            return false;
        bool is_status = i - key == sizeof k_key - 1 && memcmp(json + key, k_key, i - key) == 0;
        i = skip_ws(json, i, len);
        if (i >= len || json[i] != ':')
            return false;
        i = skip_ws(json, i + 1, len);
        size_t start = i;
        i = skip_value(json, i, len);
        if (i == NOT_JSON || i == start)
            return false;
        if (is_status) {
            if (json[start] != '"' || memchr(json + start, '\\', i - start))
                return false; /* not a plain string: no status we know */
            size_t n = i - start - 2 < cap - 1 ? i - start - 2 : cap - 1;
            memcpy(out, json + start + 1, n);
            out[n] = '\0';
            return true;
        }
        i = skip_ws(json, i, len);
        if (i >= len || json[i] != ',')
            return false;
        i++;
    }
}
