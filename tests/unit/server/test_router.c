/* The route table (server/http/router.c): each route with its method, the 405 with the path's methods
 * listed for Allow, the 404 for everything else (near misses included), and the metrics labels. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "server/http/router.h"

typedef struct row {
    const char *method, *path;
    fb_http_match_kind kind;
    fb_http_route_id route;
    bool public, takes_body;
    const char *allow;
} row;

static const row k_rows[] = {
    {"GET", "/v1/health", FB_HTTP_MATCH_OK, FB_HTTP_ROUTE_HEALTH, true, false, ""},
    {"HEAD", "/v1/health", FB_HTTP_MATCH_OK, FB_HTTP_ROUTE_HEALTH, true, false, ""},
    {"POST", "/v1/health", FB_HTTP_MATCH_NO_METHOD, FB_HTTP_ROUTE_HEALTH, true, false, "GET, HEAD"},
    {"GET", "/v1/openapi.json", FB_HTTP_MATCH_OK, FB_HTTP_ROUTE_OPENAPI, true, false, ""},
    {"HEAD", "/v1/openapi.json", FB_HTTP_MATCH_OK, FB_HTTP_ROUTE_OPENAPI, true, false, ""},
    {"PUT", "/v1/openapi.json", FB_HTTP_MATCH_NO_METHOD, FB_HTTP_ROUTE_OPENAPI, true, false, "GET, HEAD"},
    {"GET", "/v1/openapi.yaml", FB_HTTP_MATCH_NO_PATH, FB_HTTP_ROUTE_NONE, false, false, ""},
    {"POST", "/v1/call", FB_HTTP_MATCH_OK, FB_HTTP_ROUTE_CALL, false, true, ""},
    {"GET", "/v1/call", FB_HTTP_MATCH_NO_METHOD, FB_HTTP_ROUTE_CALL, false, false, "POST"},
    {"PUT", "/v1/call", FB_HTTP_MATCH_NO_METHOD, FB_HTTP_ROUTE_CALL, false, false, "POST"},
    {"post", "/v1/call", FB_HTTP_MATCH_NO_METHOD, FB_HTTP_ROUTE_CALL, false, false, "POST"}, /* methods are case-sensitive */
    {"GET", "/metrics", FB_HTTP_MATCH_OK, FB_HTTP_ROUTE_METRICS, false, false, ""},
    {"DELETE", "/metrics", FB_HTTP_MATCH_NO_METHOD, FB_HTTP_ROUTE_METRICS, false, false, "GET, HEAD"},
    {"GET", "/", FB_HTTP_MATCH_NO_PATH, FB_HTTP_ROUTE_NONE, false, false, ""},
    {"GET", "", FB_HTTP_MATCH_NO_PATH, FB_HTTP_ROUTE_NONE, false, false, ""},
    {"GET", "/v1/health/", FB_HTTP_MATCH_NO_PATH, FB_HTTP_ROUTE_NONE, false, false, ""},
    {"GET", "/V1/health", FB_HTTP_MATCH_NO_PATH, FB_HTTP_ROUTE_NONE, false, false, ""},
    {"GET", "//v1/health", FB_HTTP_MATCH_NO_PATH, FB_HTTP_ROUTE_NONE, false, false, ""},
    {"POST", "/v1/call/x", FB_HTTP_MATCH_NO_PATH, FB_HTTP_ROUTE_NONE, false, false, ""},
    {"POST", "/v1/execute", FB_HTTP_MATCH_OK, FB_HTTP_ROUTE_EXECUTE, false, true, ""},
    {"GET", "/v1/execute", FB_HTTP_MATCH_NO_METHOD, FB_HTTP_ROUTE_EXECUTE, false, false, "POST"},
    {"POST", "/v1/sync", FB_HTTP_MATCH_OK, FB_HTTP_ROUTE_SYNC, false, true, ""},
    {"GET", "/v1/sync", FB_HTTP_MATCH_NO_METHOD, FB_HTTP_ROUTE_SYNC, false, false, "POST"},
    {"POST", "/v1/sync/", FB_HTTP_MATCH_NO_PATH, FB_HTTP_ROUTE_NONE, false, false, ""},
    {"GET", "/api/v2/runtimes", FB_HTTP_MATCH_OK, FB_HTTP_ROUTE_PISTON_RUNTIMES, false, false, ""},
    {"POST", "/mcp", FB_HTTP_MATCH_OK, FB_HTTP_ROUTE_MCP, false, true, ""},
    {"DELETE", "/mcp", FB_HTTP_MATCH_OK, FB_HTTP_ROUTE_MCP, false, false, ""},
    {"GET", "/mcp", FB_HTTP_MATCH_NO_METHOD, FB_HTTP_ROUTE_MCP, false, false, "POST, DELETE"},
    {"POST", "/mcp/", FB_HTTP_MATCH_NO_PATH, FB_HTTP_ROUTE_NONE, false, false, ""},
    {"POST", "/api/v2/runtimes", FB_HTTP_MATCH_NO_METHOD, FB_HTTP_ROUTE_PISTON_RUNTIMES, false, false, "GET, HEAD"},
    {"POST", "/api/v2/execute", FB_HTTP_MATCH_OK, FB_HTTP_ROUTE_PISTON_EXECUTE, false, true, ""},
    {"GET", "/api/v2/packages", FB_HTTP_MATCH_NO_PATH, FB_HTTP_ROUTE_NONE, false, false, ""},
    {"GET", "/v1/sessions", FB_HTTP_MATCH_NO_METHOD, FB_HTTP_ROUTE_SESSIONS, false, false, "POST"},
    {"POST", "/v1/sessions", FB_HTTP_MATCH_OK, FB_HTTP_ROUTE_SESSIONS, false, true, ""},
    {"GET", "/v1/sessions/abc", FB_HTTP_MATCH_OK, FB_HTTP_ROUTE_SESSION, false, false, ""},
    {"DELETE", "/v1/sessions/abc", FB_HTTP_MATCH_OK, FB_HTTP_ROUTE_SESSION, false, false, ""},
    {"POST", "/v1/sessions/abc", FB_HTTP_MATCH_NO_METHOD, FB_HTTP_ROUTE_SESSION, false, false, "GET, HEAD, DELETE"},
    {"GET", "/v1/sessions/", FB_HTTP_MATCH_NO_PATH, FB_HTTP_ROUTE_NONE, false, false, ""},
    {"GET", "/v1/sessions//files", FB_HTTP_MATCH_NO_PATH, FB_HTTP_ROUTE_NONE, false, false, ""},
    {"POST", "/v1/sessions/abc/commands", FB_HTTP_MATCH_OK, FB_HTTP_ROUTE_SESSION_COMMANDS, false, true, ""},
    {"POST", "/v1/sessions/abc/code", FB_HTTP_MATCH_OK, FB_HTTP_ROUTE_SESSION_CODE, false, true, ""},
    {"PUT", "/v1/sessions/abc/files", FB_HTTP_MATCH_OK, FB_HTTP_ROUTE_SESSION_FILES, false, true, ""},
    {"GET", "/v1/sessions/abc/files", FB_HTTP_MATCH_OK, FB_HTTP_ROUTE_SESSION_FILES, false, false, ""},
    {"POST", "/v1/sessions/abc/files", FB_HTTP_MATCH_NO_METHOD, FB_HTTP_ROUTE_SESSION_FILES, false, false,
     "GET, HEAD, PUT, DELETE"},
    {"GET", "/v1/sessions/abc/files/list", FB_HTTP_MATCH_OK, FB_HTTP_ROUTE_SESSION_LIST, false, false, ""},
    {"GET", "/v1/sessions/abc/files/x", FB_HTTP_MATCH_NO_PATH, FB_HTTP_ROUTE_NONE, false, false, ""},
    {"GET", "/v1/sessions/a/b/files", FB_HTTP_MATCH_NO_PATH, FB_HTTP_ROUTE_NONE, false, false, ""},
    {"GET",
     "/v1/sessions/0123456789012345678901234567890123456789012345678901234567890123456789",
     FB_HTTP_MATCH_NO_PATH, FB_HTTP_ROUTE_NONE, false, false, ""}, /* an {id} over 64 characters */
    {"POST", "/v1/sessions/abc/kernels/python/execute", FB_HTTP_MATCH_OK, FB_HTTP_ROUTE_SESSION_KERNEL_EXEC, false,
     true, ""},
    {"DELETE", "/v1/sessions/abc/kernels/python", FB_HTTP_MATCH_OK, FB_HTTP_ROUTE_SESSION_KERNEL, false, false, ""},
    {"GET", "/v1/sessions/abc/kernels/python", FB_HTTP_MATCH_NO_METHOD, FB_HTTP_ROUTE_SESSION_KERNEL, false, false,
     "DELETE"},
    {"GET", "/v1/sessions/abc/kernels/python/execute", FB_HTTP_MATCH_NO_METHOD, FB_HTTP_ROUTE_SESSION_KERNEL_EXEC,
     false, false, "POST"},
    {"POST", "/v1/sessions/abc/kernels//execute", FB_HTTP_MATCH_NO_PATH, FB_HTTP_ROUTE_NONE, false, false, ""},
    {"POST", "/v1/sessions/abc/kernels/python/execute/", FB_HTTP_MATCH_NO_PATH, FB_HTTP_ROUTE_NONE, false, false, ""},
    {"POST", "/v1/sessions/abc/kernels/python/x/execute", FB_HTTP_MATCH_NO_PATH, FB_HTTP_ROUTE_NONE, false, false, ""},
    {"POST", "/v1/sessions/abc/kernels/012345678901234567890123456789012/execute", FB_HTTP_MATCH_NO_PATH,
     FB_HTTP_ROUTE_NONE, false, false, ""}, /* a {lang} over 32 characters */
};

static void test_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof k_rows / sizeof *k_rows; i++) {
        const row *r = &k_rows[i];
        fb_http_match m;
        fb_http_route_match(r->method, r->path, &m);
        if (m.kind != r->kind || m.route != r->route || m.public != r->public || m.takes_body != r->takes_body ||
            strcmp(m.allow, r->allow) != 0)
            fail_msg("%s %s: kind %d route %d public %d body %d allow '%s'", r->method, r->path, m.kind, m.route,
                     m.public, m.takes_body, m.allow);
    }
}

/* Both path parameters come out of the path. */
static void test_kernel_params(void **state)
{
    (void)state;
    fb_http_match m;
    fb_http_route_match("POST", "/v1/sessions/s1d/kernels/javascript/execute", &m);
    assert_int_equal(m.kind, FB_HTTP_MATCH_OK);
    assert_string_equal(m.id, "s1d");
    assert_string_equal(m.lang, "javascript");
    fb_http_route_match("DELETE", "/v1/sessions/x/kernels/py", &m);
    assert_string_equal(m.id, "x");
    assert_string_equal(m.lang, "py");
}

static void test_null(void **state)
{
    (void)state;
    fb_http_match m;
    fb_http_route_match(NULL, "/v1/health", &m);
    assert_int_equal(m.kind, FB_HTTP_MATCH_NO_PATH);
    fb_http_route_match("GET", NULL, &m);
    assert_int_equal(m.kind, FB_HTTP_MATCH_NO_PATH);
}

static void test_names(void **state)
{
    (void)state;
    assert_string_equal(fb_http_route_name(FB_HTTP_ROUTE_NONE), "unmatched");
    assert_string_equal(fb_http_route_name(FB_HTTP_ROUTE_HEALTH), "/v1/health");
    assert_string_equal(fb_http_route_name(FB_HTTP_ROUTE_CALL), "/v1/call");
    assert_string_equal(fb_http_route_name(FB_HTTP_ROUTE_METRICS), "/metrics");
    assert_string_equal(fb_http_route_name(FB_HTTP_ROUTE_EXECUTE), "/v1/execute");
    assert_string_equal(fb_http_route_name(FB_HTTP_ROUTE_SYNC), "/v1/sync");
    assert_string_equal(fb_http_route_name(FB_HTTP_ROUTE_OPENAPI), "/v1/openapi.json");
    assert_string_equal(fb_http_route_name(FB_HTTP_ROUTE_PISTON_RUNTIMES), "/api/v2/runtimes");
    assert_string_equal(fb_http_route_name(FB_HTTP_ROUTE_PISTON_EXECUTE), "/api/v2/execute");
    assert_string_equal(fb_http_route_name(FB_HTTP_ROUTE_SESSION_FILES), "/v1/sessions/{id}/files");
    assert_string_equal(fb_http_route_name(FB_HTTP_ROUTE_SESSION_KERNEL_EXEC), "/v1/sessions/{id}/kernels/{lang}/execute");
    assert_string_equal(fb_http_route_name((fb_http_route_id)99), "unmatched");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_kernel_params),
        cmocka_unit_test(test_null),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
