/* The ExecutionResult (core/result.h) from a sandbox outcome: a table of outcomes (the harness's report on
 * the result channel, how the process ended, what it printed) and the result each must render to: status,
 * success, error.type / message / limit / reason, exitCode, the return value spliced in verbatim (big
 * integers keep every digit), stdout/stderr cut to their own caps (truncated.*) and made valid UTF-8.
 * Then what the table cannot say: results for calls that did not run (fb_result_from_error), meta and
 * meta.compile, field order, and a return value whose text could pass for the splice marker. Every
 * rendered result must parse as JSON. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "core/result.h"

#define KiB 1024ULL
#define MiB (1024ULL * 1024ULL)

static const fb_result_limits k_limits = {
    .timeout_s = 2.5,
    .memory_bytes = 256 * MiB,
    .result_bytes = 1536,          /* "1.5 KiB" */
    .file_size_bytes = 64 * MiB,
    .cpu_seconds = 5,
    .stdout_bytes = 10,
    .stderr_bytes = 1000,          /* "1000 bytes" */
};

typedef struct outcome_case {
    const char *label;
    /* the outcome */
    const char *channel;  /* what the result channel holds (NULL: nothing) */
    bool channel_truncated;
    bool exited;
    int exit_code, term_signal;
    bool oom, timed_out, cancelled;
    const char *out, *errout;
    /* the result */
    const char *status;
    const char *type;     /* error.type; NULL: no error */
    const char *message;  /* a piece of error.message */
    const char *limit;    /* error.limit; NULL: none */
    const char *reason;   /* a piece of error.reason */
    int want_exit;
    const char *result;   /* the exact text after "result": (NULL: no result key) */
    const char *want_out; /* stdout as rendered (JSON-decoded); NULL: "" */
    bool out_cut;
} outcome_case;

static const outcome_case cases[] = {
    {"a number", "{\"ok\":true}\n42", .exited = true, .status = "success", .want_exit = 0, .result = "42"},
    {"big integers keep every digit", "{\"ok\":true}\n[123456789012345678901234567890,-9007199254740993]",
     .exited = true, .status = "success", .result = "[123456789012345678901234567890,-9007199254740993]"},
    {"the value's own text is kept", "{\"ok\":true}\n{ \"a\" : [1, 2.50, \"x\\u00e9\"] }", .exited = true,
     .status = "success", .result = "{ \"a\" : [1, 2.50, \"x\\u00e9\"] }"},
    {"null", "{\"ok\":true}\nnull", .exited = true, .status = "success", .result = "null"},
    {"a string with NUL", "{\"ok\":true}\n\"a\\u0000b\"", .exited = true, .status = "success",
     .result = "\"a\\u0000b\""},
    {"not JSON", "{\"ok\":true}\n{\"a\":", .exited = true, .status = "error", .type = "SerializationError",
     .message = "not valid JSON", .want_exit = 1},
    {"an empty value", "{\"ok\":true}\n", .exited = true, .status = "error", .type = "SerializationError",
     .message = "not valid JSON", .want_exit = 1},
    {"cut at resultBytes", "{\"ok\":true}\n[1,2,3", .channel_truncated = true, .exited = true, .status = "error",
     .type = "ResultTooLarge", .message = "larger than the result limit of 1.5 KiB", .limit = "resultBytes",
     .reason = "limits.resultBytes (1.5 KiB)", .want_exit = 1},
    {"cut by the file size limit, then SIGXFSZ", "{\"ok\":true}\n[1,2", .term_signal = SIGXFSZ, .status = "error",
     .type = "ResultTooLarge", .message = "larger than 64 MiB", .limit = "fileSizeBytes", .reason = "fileSizeBytes",
     .want_exit = 1},
    {"killed for memory while writing the value", "{\"ok\":true}\n[1,2", .term_signal = SIGKILL, .oom = true,
     .status = "crash", .type = "MemoryLimitExceeded", .message = "memory limit of 256 MiB", .limit = "memoryBytes",
     .reason = "limits.memoryBytes (256 MiB)", .want_exit = 128 + SIGKILL},
    {"killed by a signal while writing the value", "{\"ok\":true}\n[1,2", .term_signal = SIGSEGV,
     .status = "crash", .type = "Crash", .message = "signal 11 (SIGSEGV", .want_exit = 128 + SIGSEGV},
    {"the function raised", "{\"ok\":false,\"error\":{\"type\":\"ZeroDivisionError\",\"message\":\"division by zero\","
     "\"stack\":\"user_code.py, line 2\"},\"exitCode\":1}\n", .exited = true, .exit_code = 1, .status = "error",
     .type = "ZeroDivisionError", .message = "division by zero", .want_exit = 1},
    {"sys.exit(3)", "{\"ok\":false,\"error\":{\"type\":\"SystemExit\",\"message\":\"3\"},\"exitCode\":3}\n",
     .exited = true, .exit_code = 3, .status = "error", .type = "SystemExit", .message = "3", .want_exit = 3},
    {"an error without type or exit code", "{\"ok\":false,\"error\":{}}\n", .exited = true, .status = "error",
     .type = "Error", .want_exit = 1},
    {"no report, exit 3", NULL, .exited = true, .exit_code = 3, .status = "error", .type = "NoResult",
     .message = "exited with code 3 without returning a result", .want_exit = 3},
    {"no report, exit 0", NULL, .exited = true, .status = "error", .type = "NoResult", .message = "code 0",
     .want_exit = 1},
    {"a header that is no object", "[1]\n2", .exited = true, .status = "error", .type = "NoResult", .want_exit = 1},
    {"a header without its newline", "{\"ok\":true}", .exited = true, .status = "error", .type = "NoResult",
     .want_exit = 1},
    {"timeout, whatever the channel holds", "{\"ok\":true}\n1", .timed_out = true, .term_signal = SIGKILL,
     .status = "timeout", .type = "TimeoutError", .message = "within the 2.5 s timeout", .limit = "timeout",
     .reason = "at most 3600 s", .want_exit = 124},
    {"cancelled", "{\"ok\":true}\n1", .cancelled = true, .term_signal = SIGKILL, .status = "terminated",
     .type = "Terminated", .message = "terminated before the function finished", .want_exit = 143},
    {"SIGSEGV", NULL, .term_signal = SIGSEGV, .status = "crash", .type = "Crash",
     .message = "killed by signal 11 (SIGSEGV: Segmentation fault)", .want_exit = 139},
    {"SIGKILL, not the memory limit", NULL, .term_signal = SIGKILL, .status = "crash", .type = "Crash",
     .message = "SIGKILL", .want_exit = 137},
    {"the memory limit", NULL, .term_signal = SIGKILL, .oom = true, .status = "crash",
     .type = "MemoryLimitExceeded", .limit = "memoryBytes", .want_exit = 137},
    {"OOM noted, but another signal", NULL, .term_signal = SIGSEGV, .oom = true, .status = "crash", .type = "Crash",
     .want_exit = 139},
    {"the CPU limit", NULL, .term_signal = SIGXCPU, .status = "crash", .type = "CpuLimitExceeded",
     .message = "more than 5 s of CPU time", .limit = "cpuSeconds", .reason = "limits.cpuSeconds (5 s",
     .want_exit = 128 + SIGXCPU},
    {"the file size limit", NULL, .term_signal = SIGXFSZ, .status = "crash", .type = "FileSizeLimitExceeded",
     .message = "a file larger than 64 MiB", .limit = "fileSizeBytes", .want_exit = 128 + SIGXFSZ},
    {"stdout cut at its own cap, stderr kept", "{\"ok\":true}\n1", .exited = true, .out = "0123456789abcdef",
     .errout = "warning", .status = "success", .result = "1", .want_out = "0123456789", .out_cut = true},
    {"stdout exactly at its cap", "{\"ok\":true}\n1", .exited = true, .out = "0123456789", .status = "success",
     .result = "1", .want_out = "0123456789"},
    {"bytes that are not UTF-8", "{\"ok\":true}\n1", .exited = true, .out = "a\xff\xfe" "b", .status = "success",
     .result = "1", .want_out = "a\xef\xbf\xbd\xef\xbf\xbd" "b"},
    {"a multi-byte character cut by the cap", "{\"ok\":true}\n1", .exited = true, .out = "123456789\xc3\xa9",
     .status = "success", .result = "1", .want_out = "123456789\xef\xbf\xbd", .out_cut = true},
};

static void buf_set(fb_buf *b, const char *text)
{
    fb_buf_init(b, 1 << 20);
    if (text)
        assert_int_equal(fb_buf_append(b, text, strlen(text)), 0);
}

static void make_outcome(const outcome_case *c, fb_sandbox_outcome *o)
{
    memset(o, 0, sizeof *o);
    buf_set(&o->result, c->channel);
    o->result.truncated = c->channel_truncated;
    buf_set(&o->out, c->out);
    buf_set(&o->errout, c->errout);
    o->exited = c->exited;
    o->exit_code = c->exit_code;
    o->term_signal = c->term_signal;
    o->oom_killed = c->oom;
    o->timed_out = c->timed_out;
    o->cancelled = c->cancelled;
    o->wall_ms = 12.5;
    o->cpu_ms = 3.25;
    o->peak_memory_bytes = 5341184;
}

static void free_outcome(fb_sandbox_outcome *o)
{
    fb_buf_free(&o->result);
    fb_buf_free(&o->out);
    fb_buf_free(&o->errout);
}

/* Renders r and parses it back (the text must be JSON); *text gets the rendering (caller frees). */
static json_t *render(const fb_result *r, char **text)
{
    size_t len = 0;
    char *s = fb_result_render(r, &len);
    assert_non_null(s);
    assert_int_equal(len, strlen(s));
    json_error_t jerr;
    json_t *v = json_loadb(s, len, JSON_DECODE_INT_AS_REAL | JSON_ALLOW_NUL, &jerr);
    if (!v)
        fail_msg("not JSON (%s): %s", jerr.text, s);
    *text = s;
    return v;
}

static const char *str_at(json_t *obj, const char *key)
{
    return json_string_value(json_object_get(obj, key));
}

/* One case; a description of the first difference, or NULL. */
static const char *check_case(const outcome_case *c, char *why, size_t cap)
{
    fb_sandbox_outcome o;
    make_outcome(c, &o);
    fb_result r;
    fb_error err = {0};
    assert_int_equal(fb_result_from_outcome(&r, &o, &k_limits, &err), 0);
    char *text = NULL;
    json_t *v = render(&r, &text);
    json_t *e = json_object_get(v, "error");
    const char *bad = NULL;
    char rtext[600];
    snprintf(rtext, sizeof rtext, "\"result\":%s,", c->result ? c->result : "");
    const char *out = str_at(v, "stdout");
    if (!str_at(v, "status") || strcmp(str_at(v, "status"), c->status) != 0)
        bad = "status";
    else if (json_is_true(json_object_get(v, "success")) != (strcmp(c->status, "success") == 0) ||
             fb_result_succeeded(&r) != (strcmp(c->status, "success") == 0))
        bad = "success";
    else if (json_number_value(json_object_get(v, "exitCode")) != c->want_exit)
        bad = "exitCode";
    else if (c->type ? !str_at(e, "type") || strcmp(str_at(e, "type"), c->type) != 0 : e != NULL)
        bad = "error.type";
    else if (c->message && (!str_at(e, "message") || !strstr(str_at(e, "message"), c->message)))
        bad = "error.message";
    else if (c->limit ? !str_at(e, "limit") || strcmp(str_at(e, "limit"), c->limit) != 0
                      : json_object_get(e, "limit") != NULL)
        bad = "error.limit";
    else if (c->limit && (!str_at(e, "reason") || (c->reason && !strstr(str_at(e, "reason"), c->reason))))
        bad = "error.reason";
    else if (c->result ? !strstr(text, rtext) : json_object_get(v, "result") != NULL)
        bad = "result";
    else if (!out || strcmp(out, c->want_out ? c->want_out : (c->out ? c->out : "")) != 0)
        bad = "stdout";
    else if (json_is_true(json_object_get(json_object_get(v, "truncated"), "stdout")) != c->out_cut ||
             !json_is_false(json_object_get(json_object_get(v, "truncated"), "stderr")))
        bad = "truncated";
    else if (!str_at(v, "stderr") || strcmp(str_at(v, "stderr"), c->errout ? c->errout : "") != 0)
        bad = "stderr";
    else if (json_real_value(json_object_get(json_object_get(v, "usage"), "wallMs")) != 12.5 ||
             json_real_value(json_object_get(json_object_get(v, "usage"), "cpuMs")) != 3.25 ||
             json_number_value(json_object_get(json_object_get(v, "usage"), "peakMemoryBytes")) != 5341184)
        bad = "usage";
    if (bad)
        snprintf(why, cap, "%s differs in %s", bad, text);
    json_decref(v);
    free(text);
    fb_result_free(&r);
    free_outcome(&o);
    return bad ? why : NULL;
}

static void test_outcomes(void **state)
{
    (void)state;
    int failed = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char why[4096];
        const char *bad = check_case(&cases[i], why, sizeof why);
        if (bad) {
            print_message("# FAIL %s: %s\n", cases[i].label, bad);
            failed++;
        }
    }
    assert_int_equal(failed, 0);
}

/* A value nested deeper than jansson's limit is a SerializationError that says so. */
static void test_too_deep(void **state)
{
    (void)state;
    size_t depth = 5000;
    char *chan = malloc(16 + 2 * depth);
    assert_non_null(chan);
    size_t n = (size_t)sprintf(chan, "{\"ok\":true}\n");
    memset(chan + n, '[', depth);
    memset(chan + n + depth, ']', depth);
    chan[n + 2 * depth] = '\0';
    outcome_case c = {"deep", chan, .exited = true};
    fb_sandbox_outcome o;
    make_outcome(&c, &o);
    fb_result r;
    assert_int_equal(fb_result_from_outcome(&r, &o, &k_limits, NULL), 0);
    char *text;
    json_t *v = render(&r, &text);
    assert_string_equal(str_at(json_object_get(v, "error"), "type"), "SerializationError");
    assert_non_null(strstr(str_at(json_object_get(v, "error"), "message"), "nests deeper than"));
    json_decref(v);
    free(text);
    fb_result_free(&r);
    free_outcome(&o);
    free(chan);
}

/* The result channel ran into the file size limit without being cut at resultBytes: still too large. */
static void test_channel_at_file_size(void **state)
{
    (void)state;
    fb_result_limits lim = k_limits;
    lim.file_size_bytes = 16;
    outcome_case c = {"fsize", "{\"ok\":true}\n[1,2,3,", .exited = true};
    fb_sandbox_outcome o;
    make_outcome(&c, &o);
    fb_result r;
    assert_int_equal(fb_result_from_outcome(&r, &o, &lim, NULL), 0);
    char *text;
    json_t *v = render(&r, &text);
    json_t *e = json_object_get(v, "error");
    assert_string_equal(str_at(e, "type"), "ResultTooLarge");
    assert_string_equal(str_at(e, "limit"), "fileSizeBytes");
    assert_non_null(strstr(str_at(e, "message"), "larger than 16 bytes"));
    json_decref(v);
    free(text);
    fb_result_free(&r);
    free_outcome(&o);
}

/* A call that did not run: status error, the error as given, empty output, the exit code given; meta. */
static void test_from_error(void **state)
{
    (void)state;
    fb_error err = {0};
    fb_set_error(&err, FB_ERR_INVALID_REQUEST, 0, "language: unknown language \"cobol\"");
    fb_result r;
    assert_int_equal(fb_result_from_error(&r, &err, 2, 1.5), 0);
    assert_int_equal(fb_result_set_meta(&r, 1.5, NULL), 0);
    char *text;
    json_t *v = render(&r, &text);
    assert_string_equal(text, "{\"status\":\"error\",\"success\":false,\"error\":{\"message\":\"language: unknown "
                              "language \\\"cobol\\\"\",\"type\":\"InvalidRequest\"},\"stdout\":\"\",\"stderr\":\"\","
                              "\"exitCode\":2,\"meta\":{\"duration\":1.5}}");
    assert_false(fb_result_succeeded(&r));
    json_decref(v);
    free(text);
    fb_result_free(&r);

    fb_error untyped = {0};
    snprintf(untyped.message, sizeof untyped.message, "bad bytes \xff here");
    assert_int_equal(fb_result_from_error(&r, &untyped, 1, 0), 0);
    v = render(&r, &text);
    assert_string_equal(str_at(json_object_get(v, "error"), "type"), "Error");
    assert_string_equal(str_at(json_object_get(v, "error"), "message"), "bad bytes \xef\xbf\xbd here");
    json_decref(v);
    free(text);
    fb_result_free(&r);
}

/* Field order of a success, meta with signatureSource and compile, and the value in its place. */
static void test_render_order_and_meta(void **state)
{
    (void)state;
    outcome_case c = {"order", "{\"ok\":true}\n{\"k\": 1.5e300}", .exited = true, .out = "hi"};
    fb_sandbox_outcome o;
    make_outcome(&c, &o);
    fb_result r;
    assert_int_equal(fb_result_from_outcome(&r, &o, &k_limits, NULL), 0);
    assert_int_equal(fb_result_set_compile(&r, "hit"), -1); /* no meta yet */
    assert_int_equal(fb_result_set_meta(&r, 17.25, "inferred"), 0);
    assert_int_equal(fb_result_set_compile(&r, "hit"), 0);
    size_t len;
    char *text = fb_result_render(&r, &len);
    assert_non_null(text);
    assert_string_equal(text, "{\"status\":\"success\",\"success\":true,\"result\":{\"k\": 1.5e300},\"stdout\":\"hi\","
                              "\"stderr\":\"\",\"exitCode\":0,\"usage\":{\"wallMs\":12.5,\"cpuMs\":3.25,"
                              "\"peakMemoryBytes\":5341184},\"truncated\":{\"stdout\":false,\"stderr\":false},"
                              "\"meta\":{\"duration\":17.25,\"signatureSource\":\"inferred\",\"compile\":\"hit\"}}");
    assert_int_equal(len, strlen(text));
    free(text);
    /* rendering twice gives the same text (the marker is gone each time) */
    char *again = fb_result_render(&r, NULL);
    assert_non_null(again);
    assert_null(strstr(again, "fnbox-result-"));
    free(again);
    fb_result_free(&r);
    free_outcome(&o);
}

/* Output that looks like the splice marker, or like a result, changes nothing. */
static void test_marker_lookalikes(void **state)
{
    (void)state;
    outcome_case c = {"marker", "{\"ok\":true}\n\"fnbox-result-00000000000000000000000000000000\"", .exited = true,
                      .out = "\"fnbox-result-00000000000000000000000000000000\" \"result\":1,",
                      .errout = "fnbox-result-"};
    fb_sandbox_outcome o;
    make_outcome(&c, &o);
    o.out.max = 1 << 20;
    fb_result_limits lim = k_limits;
    lim.stdout_bytes = 1000;
    fb_result r;
    assert_int_equal(fb_result_from_outcome(&r, &o, &lim, NULL), 0);
    char *text;
    json_t *v = render(&r, &text);
    assert_string_equal(json_string_value(json_object_get(v, "result")),
                        "fnbox-result-00000000000000000000000000000000");
    assert_string_equal(str_at(v, "stdout"), c.out);
    assert_string_equal(str_at(v, "stderr"), "fnbox-result-");
    json_decref(v);
    free(text);
    fb_result_free(&r);
    free_outcome(&o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_outcomes),
        cmocka_unit_test(test_too_deep),
        cmocka_unit_test(test_channel_at_file_size),
        cmocka_unit_test(test_from_error),
        cmocka_unit_test(test_render_order_and_meta),
        cmocka_unit_test(test_marker_lookalikes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
