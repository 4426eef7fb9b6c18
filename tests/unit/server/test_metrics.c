/* Metrics (server/http/metrics.c): the Prometheus text for known counts (requests by route and status,
 * executions by status, gauges, a cumulative histogram per route), and the result-status skimmer that
 * reads a result's top-level "status" without parsing the rest. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "server/http/metrics.h"

static char *render(fb_http_metrics *m, unsigned running, unsigned queued)
{
    fb_buf b;
    fb_buf_init(&b, FB_HTTP_METRICS_MAX);
    assert_int_equal(fb_http_metrics_render(m, running, queued, 3, 2, &b), 0);
    assert_false(b.truncated);
    char *text = fb_buf_steal(&b, NULL);
    assert_non_null(text);
    return text;
}

static void has_line(const char *text, const char *line)
{
    char want[512];
    snprintf(want, sizeof want, "\n%s\n", line);
    if (!strstr(text, want))
        fail_msg("no line '%s' in:\n%s", line, text);
}

static void test_render(void **state)
{
    (void)state;
    fb_http_metrics m;
    assert_int_equal(fb_http_metrics_init(&m), 0);
    fb_http_metrics_request(&m, FB_HTTP_ROUTE_CALL, 200, 0.012);
    fb_http_metrics_request(&m, FB_HTTP_ROUTE_CALL, 200, 0.3);
    fb_http_metrics_request(&m, FB_HTTP_ROUTE_CALL, 503, 0.001);
    fb_http_metrics_request(&m, FB_HTTP_ROUTE_NONE, 404, 0.0001);
    fb_http_metrics_request(&m, FB_HTTP_ROUTE_HEALTH, 0, 0.002);   /* no answer went out */
    fb_http_metrics_request(&m, FB_HTTP_ROUTE_HEALTH, 418, 100.0); /* another status; past the last bound */
    fb_http_metrics_execution(&m, "success");
    fb_http_metrics_execution(&m, "success");
    fb_http_metrics_execution(&m, "timeout");
    fb_http_metrics_execution(&m, "bogus");
    fb_http_metrics_execution(&m, NULL);
    char *t = render(&m, 3, 7);
    has_line(t, "# TYPE fnbox_http_requests_total counter");
    has_line(t, "fnbox_http_requests_total{route=\"/v1/call\",status=\"200\"} 2");
    has_line(t, "fnbox_http_requests_total{route=\"/v1/call\",status=\"503\"} 1");
    has_line(t, "fnbox_http_requests_total{route=\"unmatched\",status=\"404\"} 1");
    has_line(t, "fnbox_http_requests_total{route=\"/v1/health\",status=\"none\"} 1");
    has_line(t, "fnbox_http_requests_total{route=\"/v1/health\",status=\"other\"} 1");
    assert_null(strstr(t, "status=\"401\"")); /* counters never touched are left out */
    has_line(t, "fnbox_executions_total{status=\"success\"} 2");
    has_line(t, "fnbox_executions_total{status=\"timeout\"} 1");
    has_line(t, "fnbox_executions_total{status=\"error\"} 0");
    has_line(t, "fnbox_executions_total{status=\"unknown\"} 2");
    has_line(t, "fnbox_executions_in_flight 3");
    has_line(t, "fnbox_sessions_open 3");
    has_line(t, "fnbox_sessions_dead_total 2");
    has_line(t, "fnbox_executions_queued 7");
    has_line(t, "# TYPE fnbox_http_request_duration_seconds histogram");
    has_line(t, "fnbox_http_request_duration_seconds_bucket{route=\"/v1/call\",le=\"0.005\"} 1");
    has_line(t, "fnbox_http_request_duration_seconds_bucket{route=\"/v1/call\",le=\"0.01\"} 1");
    has_line(t, "fnbox_http_request_duration_seconds_bucket{route=\"/v1/call\",le=\"0.025\"} 2");
    has_line(t, "fnbox_http_request_duration_seconds_bucket{route=\"/v1/call\",le=\"0.25\"} 2");
    has_line(t, "fnbox_http_request_duration_seconds_bucket{route=\"/v1/call\",le=\"0.5\"} 3");
    has_line(t, "fnbox_http_request_duration_seconds_bucket{route=\"/v1/call\",le=\"+Inf\"} 3");
    has_line(t, "fnbox_http_request_duration_seconds_sum{route=\"/v1/call\"} 0.313000");
    has_line(t, "fnbox_http_request_duration_seconds_count{route=\"/v1/call\"} 3");
    has_line(t, "fnbox_http_request_duration_seconds_bucket{route=\"/v1/health\",le=\"60\"} 1");
    has_line(t, "fnbox_http_request_duration_seconds_bucket{route=\"/v1/health\",le=\"+Inf\"} 2");
    has_line(t, "fnbox_http_request_duration_seconds_count{route=\"/metrics\"} 0");
    /* every line is a comment or "name{labels} value" with a value */
    for (char *line = strtok(t, "\n"); line; line = strtok(NULL, "\n"))
        if (line[0] != '#' && !strchr(line, ' '))
            fail_msg("line without a value: '%s'", line);
    free(t);
    fb_http_metrics_destroy(&m);
}

static void test_result_status(void **state)
{
    (void)state;
    static const struct {
        const char *json, *status; /* status NULL: none found */
    } k_rows[] = {
        {"{\"status\":\"success\",\"success\":true}", "success"},
        {"  {\n \"status\" : \"timeout\" }", "timeout"},
        {"{\"result\":{\"status\":\"fake\"},\"status\":\"error\"}", "error"},     /* nested keys are skipped */
        {"{\"stdout\":\"\\\"status\\\":\\\"x\\\"\",\"status\":\"crash\"}", "crash"}, /* escaped quotes */
        {"{\"a\":[1,{\"b\":[]},\"]}\"],\"n\":-1.5e3,\"t\":true,\"z\":null,\"status\":\"terminated\"}", "terminated"},
        {"{\"result\":\"x\"}", NULL},
        {"{\"status\":1}", NULL},
        {"{\"status\":\"a\\u0041\"}", NULL}, /* escapes: not a status we know */
        {"[\"status\",\"success\"]", NULL},
        {"{\"status\":\"success\"", "success"}, /* the rest is not read */
        {"{\"status\":\"succ", NULL},
        {"{\"a\":{\"b\":1}", NULL},
        {"{\"a\" 1, \"status\":\"success\"}", NULL},
        {"", NULL},
        {"{", NULL},
    };
    for (size_t i = 0; i < sizeof k_rows / sizeof *k_rows; i++) {
        char out[16] = "unset";
        bool found = fb_http_result_status(k_rows[i].json, strlen(k_rows[i].json), out, sizeof out);
        if (found != (k_rows[i].status != NULL) || (found && strcmp(out, k_rows[i].status) != 0))
            fail_msg("row %zu (%s): found %d '%s'", i, k_rows[i].json, found, out);
    }
    char out[4];
    assert_true(fb_http_result_status("{\"status\":\"success\"}", 20, out, sizeof out));
    assert_string_equal(out, "suc"); /* cut to the buffer */
    /* deep nesting before the key: iterative, no stack growth */
    size_t depth = 100000, n = 0;
    char *deep = malloc(2 * depth + 64);
    n += (size_t)sprintf(deep, "{\"r\":");
    memset(deep + n, '[', depth);
    n += depth;
    memset(deep + n, ']', depth);
    n += depth;
    n += (size_t)sprintf(deep + n, ",\"status\":\"error\"}");
    char st[16];
    assert_true(fb_http_result_status(deep, n, st, sizeof st));
    assert_string_equal(st, "error");
    free(deep);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_render),
        cmocka_unit_test(test_result_status),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
