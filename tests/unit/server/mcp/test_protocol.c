/* The MCP protocol (server/mcp/server.c, tools.c, config.c, cap.c) through its message entry point, with
 * the answers captured as the client would read them: version negotiation, ping, tools/list's definitions,
 * every protocol error code, the tools' argument errors as isError results, the configuration's errors, and
 * the output cap. No sandbox runs here (the integration tests run them). */
#include <jansson.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "server/mcp/mcp.h"

typedef struct capture_ctx {
    pthread_mutex_t mu;
    json_t *lines; /* every message sent, parsed */
    int bad;       /* a message that was not one line of JSON */
} capture_ctx;

/* Called from the runs' threads too. */
static int capture(void *ctx, const char *line, size_t len, bool final)
{
    (void)final;
    capture_ctx *s = ctx;
    json_t *m = json_loadb(line, len, 0, NULL);
    pthread_mutex_lock(&s->mu);
    if (!m || len == 0 || line[len - 1] != '\n' || memchr(line, '\n', len - 1))
        s->bad++;
    json_array_append_new(s->lines, m ? m : json_null());
    pthread_mutex_unlock(&s->mu);
    return 0;
}

/* Sends each message, waits (up to 10 s) for `expect` messages back, ends the connection, returns them. */
static json_t *exchange(const fb_mcp_config *cfg, const char *const *msgs, size_t expect)
{
    capture_ctx s = {.lines = json_array()};
    pthread_mutex_init(&s.mu, NULL);
    fb_mcp_sink sink = {.send = capture, .ctx = &s};
    fb_mcp_server *srv = fb_mcp_server_new(cfg, NULL, &sink);
    assert_non_null(srv);
    for (; *msgs; msgs++)
        fb_mcp_server_handle(srv, *msgs, strlen(*msgs), &sink);
    for (int i = 0; i < 1000; i++) {
        pthread_mutex_lock(&s.mu);
        size_t n = json_array_size(s.lines);
        pthread_mutex_unlock(&s.mu);
        if (n >= expect)
            break;
        usleep(10000);
    }
    fb_mcp_server_free(srv);
    pthread_mutex_destroy(&s.mu);
    assert_int_equal(s.bad, 0);
    assert_int_equal(json_array_size(s.lines), expect);
    return s.lines;
}

static json_t *answer(json_t *lines, json_int_t id)
{
    size_t i;
    json_t *m;
    json_array_foreach(lines, i, m) {
        if (json_integer_value(json_object_get(m, "id")) == id && json_object_get(m, "id"))
            return m;
    }
    fail_msg("no answer to id %lld", (long long)id);
    return NULL;
}

static int error_code(json_t *m)
{
    return (int)json_integer_value(json_object_get(json_object_get(m, "error"), "code"));
}

static void test_lifecycle_and_errors(void **state)
{
    (void)state;
    fb_mcp_config cfg;
    fb_mcp_config_init(&cfg);
    const char *msgs[] = {
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-03-26\"}}",
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"1999-01-01\"}}",
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
        "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}",
        "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"server/discover\"}",
        "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"logging/setLevel\",\"params\":{\"level\":\"warning\"}}",
        "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"logging/setLevel\",\"params\":{\"level\":\"loud\"}}",
        "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"rm_rf\"}}",
        "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":{}}",
        "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{\"name\":\"run_code\",\"arguments\":[]}}",
        "[{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"ping\"}]",
        "{\"jsonrpc\":\"2.0\",\"id\":11,\"result\":{}}",
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":99}}",
        "{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"resources/list\"}",
        NULL,
    };
    json_t *lines = exchange(&cfg, msgs, 11);
    json_t *r = json_object_get(answer(lines, 1), "result");
    assert_string_equal(json_string_value(json_object_get(r, "protocolVersion")), "2025-03-26");
    assert_string_equal(json_string_value(json_object_get(json_object_get(r, "serverInfo"), "name")), "fnbox");
    assert_non_null(json_object_get(json_object_get(r, "capabilities"), "tools"));
    r = json_object_get(answer(lines, 2), "result");
    assert_string_equal(json_string_value(json_object_get(r, "protocolVersion")), "2025-11-25");
    assert_true(json_is_object(json_object_get(answer(lines, 3), "result")));
    assert_int_equal(error_code(answer(lines, 4)), -32601);
    assert_true(json_is_object(json_object_get(answer(lines, 5), "result")));
    assert_int_equal(error_code(answer(lines, 6)), -32602);
    assert_int_equal(error_code(answer(lines, 7)), -32602);
    assert_int_equal(error_code(answer(lines, 8)), -32602);
    assert_int_equal(error_code(answer(lines, 9)), -32602);
    assert_int_equal(error_code(answer(lines, 12)), -32601);
    /* the batch: one error with a null id; the response and the notifications: nothing */
    size_t nulls = 0, i;
    json_t *m;
    json_array_foreach(lines, i, m) {
        if (json_is_null(json_object_get(m, "id"))) {
            nulls++;
            assert_int_equal(error_code(m), -32600);
        }
    }
    assert_int_equal(nulls, 1);
    json_decref(lines);
}

static void test_tools_list(void **state)
{
    (void)state;
    fb_mcp_config cfg;
    fb_mcp_config_init(&cfg);
    const char *msgs[] = {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}", NULL};
    json_t *lines = exchange(&cfg, msgs, 1);
    json_t *tools = json_object_get(json_object_get(answer(lines, 1), "result"), "tools"), *t;
    const char *names[] = {"run_code", "call_function", "exec_command", "read_file", "write_file", "list_files",
                           "remove_file", "list_languages", "run_in_kernel"};
    const bool read_only[] = {false, false, false, true, false, true, false, true, false};
    assert_int_equal(json_array_size(tools), 9);
    size_t i;
    json_array_foreach(tools, i, t) {
        assert_string_equal(json_string_value(json_object_get(t, "name")), names[i]);
        assert_true(strlen(json_string_value(json_object_get(t, "description"))) > 40);
        json_t *in = json_object_get(t, "inputSchema"), *out = json_object_get(t, "outputSchema");
        assert_string_equal(json_string_value(json_object_get(in, "type")), "object");
        assert_true(json_is_false(json_object_get(in, "additionalProperties")));
        assert_string_equal(json_string_value(json_object_get(out, "type")), "object");
        json_t *ann = json_object_get(t, "annotations");
        assert_int_equal(json_is_true(json_object_get(ann, "readOnlyHint")), read_only[i]);
        assert_true(json_is_false(json_object_get(ann, "openWorldHint"))); /* no network by default */
    }
    json_decref(lines);
    /* a configuration: some tools only, network for the session */
    char err[256];
    const char *conf = "{\"tools\": [\"exec_command\", \"read_file\"], \"session\": {\"permissions\": {\"network\": "
                       "{\"allow\": [\"example.com\"]}}}}";
    assert_int_equal(fb_mcp_config_parse(conf, strlen(conf), &cfg, err, sizeof err), 0);
    const char *call[] = {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}",
                          "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"run_code\","
                          "\"arguments\":{\"language\":\"python\",\"code\":\"print(1)\"}}}",
                          NULL};
    lines = exchange(&cfg, call, 2);
    tools = json_object_get(json_object_get(answer(lines, 1), "result"), "tools");
    assert_int_equal(json_array_size(tools), 2);
    assert_true(json_is_true(json_object_get(json_object_get(json_array_get(tools, 0), "annotations"),
                                             "openWorldHint")));
    assert_int_equal(error_code(answer(lines, 2)), -32602); /* disabled is unknown */
    json_decref(lines);
    fb_mcp_config_free(&cfg);
}

/* isError results naming the argument, before anything runs. */
static void test_bad_arguments(void **state)
{
    (void)state;
    fb_mcp_config cfg;
    fb_mcp_config_init(&cfg);
    const char *msgs[] = {
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"run_code\",\"arguments\":"
        "{\"language\":\"python\"}}}",
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"run_code\",\"arguments\":"
        "{\"language\":\"cobol\",\"code\":\"x\"}}}",
        "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"run_code\",\"arguments\":"
        "{\"language\":\"python\",\"code\":\"x\",\"sudo\":true}}}",
        "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"run_code\",\"arguments\":"
        "{\"language\":\"python\",\"code\":\"x\",\"timeout\":-1}}}",
        "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"call_function\","
        "\"arguments\":{\"language\":\"python\",\"code\":\"x\",\"args\":\"no\"}}}",
        "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{\"name\":\"write_file\",\"arguments\":"
        "{\"path\":\"a\",\"content\":\"%%%\",\"encoding\":\"hex\"}}}",
        "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"read_file\",\"arguments\":{}}}",
        "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":{\"name\":\"list_languages\"}}",
        NULL,
    };
    const char *said[] = {"'code' is required", "language 'cobol'", "unknown argument 'sudo'", "'timeout'",
                          "'args' must be an array or an object", "'encoding'", "'path' is required"};
    json_t *lines = exchange(&cfg, msgs, 8);
    for (int id = 1; id <= 7; id++) {
        json_t *r = json_object_get(answer(lines, id), "result");
        assert_true(json_is_true(json_object_get(r, "isError")));
        const char *text = json_string_value(json_object_get(json_array_get(json_object_get(r, "content"), 0), "text"));
        if (!text || !strstr(text, said[id - 1]))
            fail_msg("id %d: '%s' does not say '%s'", id, text ? text : "(none)", said[id - 1]);
    }
    json_t *langs = json_object_get(json_object_get(json_object_get(answer(lines, 8), "result"), "structuredContent"),
                                    "languages");
    assert_true(json_array_size(langs) >= 6);
    json_decref(lines);
}

static void test_config_errors(void **state)
{
    (void)state;
    const char *bad[] = {"{", "[]", "{\"outputBytes\": 1}", "{\"outputBytes\": \"big\"}", "{\"tools\": [\"rm\"]}",
                         "{\"tools\": \"all\"}", "{\"session\": 3}", "{\"timeout\": 0}", "{\"maxTimeout\": 99999}",
                         "{\"network\": true}"};
    const char *field[] = {"malformed", "object", "outputBytes", "outputBytes", "tools[0]", "tools", "session",
                           "timeout", "maxTimeout", "network"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        fb_mcp_config cfg;
        fb_mcp_config_init(&cfg);
        char err[256] = "";
        assert_int_equal(fb_mcp_config_parse(bad[i], strlen(bad[i]), &cfg, err, sizeof err), -1);
        if (!strstr(err, field[i]))
            fail_msg("%s: '%s' does not name '%s'", bad[i], err, field[i]);
        fb_mcp_config_free(&cfg);
    }
}

static void test_cap(void **state)
{
    (void)state;
    bool cut = true;
    char *s = fb_mcp_cap("short", 5, 256, &cut);
    assert_string_equal(s, "short");
    assert_false(cut);
    free(s);
    char big[1000];
    memset(big, 'a', sizeof big);
    /* 256 - 64 bytes for the mark: a head of 96 and a tail of 96 */
    memcpy(big + 95, "\xc3\xa9", 2);                 /* é across the head's end */
    memcpy(big + sizeof big - 97, "\xe2\x82\xac", 3); /* € across the tail's start */
    s = fb_mcp_cap(big, sizeof big, 256, &cut);
    assert_true(cut);
    assert_non_null(strstr(s, "bytes left out"));
    json_t *j = json_string(s); /* valid UTF-8: no character was cut */
    assert_non_null(j);
    json_decref(j);
    assert_true(strlen(s) <= 256);
    assert_memory_equal(s, big, 95);
    assert_int_equal(s[95], '\n');
    assert_memory_equal(s + strlen(s) - 94, big + sizeof big - 94, 94); /* from after the euro sign */
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lifecycle_and_errors),
        cmocka_unit_test(test_tools_list),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_config_errors),
        cmocka_unit_test(test_cap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
