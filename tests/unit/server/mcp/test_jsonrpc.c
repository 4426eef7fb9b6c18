/* The JSON-RPC layer (server/mcp/jsonrpc.c): every message shape classified, every error code it answers
 * with, and the messages it builds. */
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "server/mcp/jsonrpc.h"

typedef struct row {
    const char *text;
    fb_rpc_kind kind;
    int code;           /* FB_RPC_INVALID: the code */
    const char *said;   /* FB_RPC_INVALID: a part of the message */
    const char *method; /* requests and notifications */
    const char *id;     /* the id as JSON, or NULL for none */
} row;

static const row k_rows[] = {
    {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", FB_RPC_REQUEST, 0, NULL, "ping", "1"},
    {"{\"jsonrpc\":\"2.0\",\"id\":\"a-1\",\"method\":\"tools/list\",\"params\":{}}", FB_RPC_REQUEST, 0, NULL,
     "tools/list", "\"a-1\""},
    {"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"x\",\"params\":null}", FB_RPC_REQUEST, 0, NULL, "x", "0"},
    {"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", FB_RPC_NOTIFICATION, 0, NULL,
     "notifications/initialized", NULL},
    {"{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}", FB_RPC_RESPONSE, 0, NULL, NULL, "7"},
    {"{\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":1,\"message\":\"m\"}}", FB_RPC_RESPONSE, 0, NULL, NULL, "7"},
    {"", FB_RPC_INVALID, FB_RPC_PARSE_ERROR, "parse error", NULL, NULL},
    {"{\"jsonrpc\":", FB_RPC_INVALID, FB_RPC_PARSE_ERROR, "parse error", NULL, NULL},
    {"{\"jsonrpc\":\"2.0\",\"id\":1,\"id\":2,\"method\":\"x\"}", FB_RPC_INVALID, FB_RPC_PARSE_ERROR, "duplicate", NULL,
     NULL},
    {"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", FB_RPC_INVALID, FB_RPC_INVALID_REQUEST, "batch", NULL,
     NULL},
    {"[]", FB_RPC_INVALID, FB_RPC_INVALID_REQUEST, "batch", NULL, NULL},
    {"42", FB_RPC_INVALID, FB_RPC_PARSE_ERROR, "parse error", NULL, NULL}, /* jansson: a document is an object/array */
    {"{\"id\":1,\"method\":\"ping\"}", FB_RPC_INVALID, FB_RPC_INVALID_REQUEST, "jsonrpc", NULL, "1"},
    {"{\"jsonrpc\":\"1.0\",\"id\":\"q\",\"method\":\"ping\"}", FB_RPC_INVALID, FB_RPC_INVALID_REQUEST, "jsonrpc", NULL,
     "\"q\""},
    {"{\"jsonrpc\":2,\"method\":\"ping\"}", FB_RPC_INVALID, FB_RPC_INVALID_REQUEST, "jsonrpc", NULL, NULL},
    {"{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", FB_RPC_INVALID, FB_RPC_INVALID_REQUEST, "id", NULL, NULL},
    {"{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}", FB_RPC_INVALID, FB_RPC_INVALID_REQUEST, "id", NULL, NULL},
    {"{\"jsonrpc\":\"2.0\",\"id\":[1],\"method\":\"ping\"}", FB_RPC_INVALID, FB_RPC_INVALID_REQUEST, "id", NULL, NULL},
    {"{\"jsonrpc\":\"2.0\",\"id\":3}", FB_RPC_INVALID, FB_RPC_INVALID_REQUEST, "method", NULL, "3"},
    {"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":5}", FB_RPC_INVALID, FB_RPC_INVALID_REQUEST, "method", NULL, "3"},
    {"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"x\",\"params\":[1]}", FB_RPC_INVALID, FB_RPC_INVALID_PARAMS,
     "params", NULL, "4"},
    {"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"x\",\"params\":\"s\"}", FB_RPC_INVALID, FB_RPC_INVALID_PARAMS,
     "params", NULL, "4"},
};

static void test_every_shape(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof k_rows / sizeof *k_rows; i++) {
        const row *r = &k_rows[i];
        fb_rpc_msg m;
        fb_rpc_parse(r->text, strlen(r->text), &m);
        if (m.kind != r->kind || (r->kind == FB_RPC_INVALID && m.error_code != r->code))
            fail_msg("row %zu (%s): kind %d code %d (%s)", i, r->text, m.kind, m.error_code, m.error);
        if (r->said && !strstr(m.error, r->said))
            fail_msg("row %zu: '%s' does not say '%s'", i, m.error, r->said);
        if (r->method)
            assert_string_equal(m.method, r->method);
        if (r->id) {
            json_t *want = json_loads(r->id, JSON_DECODE_ANY, NULL);
            assert_true(m.id && json_equal(m.id, want));
            json_decref(want);
        } else if (r->kind != FB_RPC_INVALID) {
            assert_null(m.id);
        }
        fb_rpc_msg_free(&m);
    }
}

static char *line_of(json_t *msg)
{
    size_t len = 0;
    char *line = fb_rpc_line(msg, &len);
    assert_non_null(line);
    assert_int_equal(len, strlen(line));
    assert_int_equal(line[len - 1], '\n');
    assert_null(memchr(line, '\n', len - 1)); /* one message, one line */
    return line;
}

static void test_built_messages(void **state)
{
    (void)state;
    json_t *id = json_string("r\n1");
    char *line = line_of(fb_rpc_result(id, json_pack("{s:s}", "text", "two\nlines")));
    assert_string_equal(line, "{\"jsonrpc\":\"2.0\",\"id\":\"r\\n1\",\"result\":{\"text\":\"two\\nlines\"}}\n");
    free(line);
    line = line_of(fb_rpc_error(id, FB_RPC_METHOD_NOT_FOUND, "Method not found: %s", "x/y"));
    assert_string_equal(line, "{\"jsonrpc\":\"2.0\",\"id\":\"r\\n1\",\"error\":{\"code\":-32601,\"message\":"
                              "\"Method not found: x/y\"}}\n");
    free(line);
    line = line_of(fb_rpc_error(NULL, FB_RPC_PARSE_ERROR, "bad"));
    assert_string_equal(line, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"bad\"}}\n");
    free(line);
    line = line_of(fb_rpc_notification("notifications/progress", json_pack("{s:i}", "progress", 1)));
    assert_string_equal(line, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":1}}\n");
    free(line);
    size_t len = 0;
    assert_null(fb_rpc_line(NULL, &len)); /* an allocation failure upstream */
    assert_null(fb_rpc_result(id, NULL));
    json_decref(id);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_shape),
        cmocka_unit_test(test_built_messages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
