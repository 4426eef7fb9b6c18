/* Session kernels through the public C API, on the real kernel with real interpreters: state persists
 * between executes, two sessions never share it, interrupts keep it (KeyboardInterrupt) or lose it (a
 * kernel that ignores SIGINT is killed: kernelRestarted), restart, output, last-expression values
 * converted as call results are, exceptions with the language's type, bad input named. */
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "fnbox.h"

static fnbox_session *open_session(void)
{
    fnbox_session *s = NULL;
    char *error = NULL;
    int rc = fnbox_session_open("", 0, &s, &error, NULL);
    if (rc != FNBOX_OK)
        fprintf(stderr, "open: %s\n", error ? error : "(no error)");
    assert_int_equal(rc, FNBOX_OK);
    fnbox_free(error);
    return s;
}

typedef struct chunks {
    char text[4096];
} chunks;

static void collect(void *ctx, const char *stream, const char *data, size_t len)
{
    chunks *c = ctx;
    size_t n = strlen(c->text);
    snprintf(c->text + n, sizeof c->text - n, "%s:%.*s|", stream, (int)len, data);
}

/* Runs code in the kernel; returns the parsed result (caller decrefs). */
static json_t *run_opts(fnbox_session *s, const char *lang, const char *code, double timeout, int want_rc,
                        const fnbox_call_options *opts)
{
    json_t *req = timeout > 0 ? json_pack("{s:s, s:f}", "code", code, "timeout", timeout) : json_pack("{s:s}", "code", code);
    char *text = json_dumps(req, 0);
    json_decref(req);
    char *result = NULL;
    size_t len = 0;
    int rc = fnbox_session_kernel_exec(s, lang, text, strlen(text), opts, &result, &len);
    if (rc != want_rc)
        fprintf(stderr, "kernel %s %s: %d %s\n", lang, text, rc, result ? result : "");
    free(text);
    assert_int_equal(rc, want_rc);
    json_t *doc = json_loadb(result, len, 0, NULL);
    assert_non_null(doc);
    fnbox_free(result);
    return doc;
}

/* Runs request (JSON text) in the kernel; returns the parsed result (caller decrefs). */
static json_t *run_request(fnbox_session *s, const char *lang, const char *request)
{
    char *result = NULL;
    size_t len = 0;
    int rc = fnbox_session_kernel_exec(s, lang, request, strlen(request), NULL, &result, &len);
    if (rc != FNBOX_OK)
        fprintf(stderr, "kernel %s %s: %d %s\n", lang, request, rc, result ? result : "");
    assert_int_equal(rc, FNBOX_OK);
    json_t *doc = json_loadb(result, len, 0, NULL);
    assert_non_null(doc);
    fnbox_free(result);
    return doc;
}

static json_t *run(fnbox_session *s, const char *lang, const char *code)
{
    return run_opts(s, lang, code, 0, FNBOX_OK, NULL);
}

static const char *str(json_t *doc, const char *key)
{
    json_t *v = json_object_get(doc, key);
    return json_is_string(v) ? json_string_value(v) : "";
}

static const char *error_type(json_t *doc)
{
    return str(json_object_get(doc, "error"), "type");
}

/* The result's `result` as compact JSON text (static buffer). */
static const char *value(json_t *doc)
{
    static char text[1024];
    char *d = json_dumps(json_object_get(doc, "result"), JSON_COMPACT | JSON_ENCODE_ANY);
    snprintf(text, sizeof text, "%s", d ? d : "(none)");
    free(d);
    return text;
}

static bool restarted(json_t *doc)
{
    return json_is_true(json_object_get(doc, "kernelRestarted"));
}

static void test_state_persists_python(void **state)
{
    (void)state;
    fnbox_session *s = open_session();
    json_t *r = run(s, "python", "import math\nx = 41");
    assert_string_equal(str(r, "status"), "success");
    assert_string_equal(value(r), "null");
    assert_false(restarted(r));
    json_decref(r);
    r = run(s, "python", "x + 1");
    assert_string_equal(value(r), "42");
    json_decref(r);
    r = run(s, "py", "math.floor(math.pi * 100)");
    assert_string_equal(value(r), "314");
    json_decref(r);
    /* non-JSON values converted as call results are */
    r = run(s, "python", "import datetime\n({1, 2}, b'hi', datetime.date(2024, 1, 2), float('nan'))");
    assert_string_equal(value(r), "[[1,2],{\"base64\":\"aGk=\"},\"2024-01-02\",null]");
    json_decref(r);
    r = run(s, "python", "print('out'); import sys; print('err', file=sys.stderr); 7");
    assert_string_equal(str(r, "stdout"), "out\n");
    assert_string_equal(str(r, "stderr"), "err\n");
    assert_string_equal(value(r), "7");
    json_decref(r);
    r = run(s, "python", "1/0");
    assert_string_equal(str(r, "status"), "error");
    assert_string_equal(error_type(r), "ZeroDivisionError");
    assert_non_null(strstr(str(json_object_get(r, "error"), "stack"), "File \"<cell 6>\", line 1"));
    json_decref(r);
    r = run(s, "python", "x");
    assert_string_equal(value(r), "41");
    json_decref(r);
    fnbox_session_close(s);
}

static void test_state_persists_javascript(void **state)
{
    (void)state;
    fnbox_session *s = open_session();
    json_t *r = run(s, "javascript", "let x = 41; globalThis.y = 1");
    assert_string_equal(str(r, "status"), "success");
    json_decref(r);
    r = run(s, "js", "x + y");
    assert_string_equal(value(r), "42");
    json_decref(r);
    r = run(s, "node", "console.log('hi'); new Map([['a', 1n]])");
    assert_string_equal(str(r, "stdout"), "hi\n");
    assert_string_equal(value(r), "{\"a\":1}");
    json_decref(r);
    r = run(s, "javascript", "await new Promise((res) => setTimeout(() => res(x * 2), 5))");
    assert_string_equal(value(r), "82");
    json_decref(r);
    r = run(s, "javascript", "null.foo");
    assert_string_equal(error_type(r), "TypeError");
    json_decref(r);
    fnbox_session_close(s);
}

static void test_state_persists_ruby(void **state)
{
    (void)state;
    fnbox_session *s = open_session();
    json_t *r = run(s, "ruby", "require 'set'\nx = 41\ndef twice(n) = n * 2");
    assert_string_equal(str(r, "status"), "success");
    json_decref(r);
    r = run(s, "rb", "puts 'out'\n$stderr.puts 'err'\n[Set[x + 1], :s, twice(x), 1.0 / 0]");
    assert_string_equal(value(r), "[[42],\"s\",82,null]");
    assert_string_equal(str(r, "stdout"), "out\n");
    assert_string_equal(str(r, "stderr"), "err\n");
    json_decref(r);
    r = run(s, "ruby", "1 / 0");
    assert_string_equal(error_type(r), "ZeroDivisionError");
    assert_non_null(strstr(str(json_object_get(r, "error"), "stack"), "<cell 3>:1"));
    json_decref(r);
    r = run_opts(s, "ruby", "loop { }", 0.3, FNBOX_OK, NULL);
    assert_string_equal(str(r, "status"), "timeout");
    assert_false(restarted(r)); /* Interrupt raised in the cell: the binding is kept */
    json_decref(r);
    r = run(s, "ruby", "x");
    assert_string_equal(value(r), "41");
    json_decref(r);
    fnbox_session_close(s);
}

static void test_state_persists_php(void **state)
{
    (void)state;
    fnbox_session *s = open_session();
    json_t *r = run(s, "php", "$x = 41;\nfunction twice($n) { return $n * 2; }");
    assert_string_equal(str(r, "status"), "success");
    assert_string_equal(value(r), "null");
    json_decref(r);
    r = run(s, "php", "echo \"out\\n\";\nfwrite(STDERR, \"err\\n\");\n[twice($x), 'a' => NAN]");
    assert_string_equal(value(r), "{\"0\":82,\"a\":null}");
    assert_string_equal(str(r, "stdout"), "out\n");
    assert_string_equal(str(r, "stderr"), "err\n");
    json_decref(r);
    r = run(s, "php", "1 % 0;");
    assert_string_equal(error_type(r), "DivisionByZeroError");
    json_decref(r);
    r = run(s, "php", "function twice($n) { return 0; }"); /* PHP's fatal error, answered without dying */
    assert_string_equal(error_type(r), "FatalError");
    assert_false(restarted(r));
    json_decref(r);
    r = run_opts(s, "php", "while (true) {}", 0.3, FNBOX_OK, NULL);
    assert_string_equal(str(r, "status"), "timeout");
    assert_false(restarted(r)); /* pcntl's SIGINT handler throws into the cell: the globals are kept */
    json_decref(r);
    /* the interrupted cell's stack: where it was interrupted, and the calls that led there */
    json_decref(run(s, "php", "function spin() {\n    while (true) {\n    }\n}"));
    r = run_opts(s, "php", "$y = 1;\nspin();", 0.3, FNBOX_OK, NULL);
    const char *stack = str(json_object_get(r, "error"), "stack");
    assert_non_null(strstr(stack, ":2"));
    assert_non_null(strstr(stack, "(2): spin()"));
    assert_null(strstr(stack, "Kernel"));
    json_decref(r);
    r = run(s, "php", "twice($x)");
    assert_string_equal(value(r), "82");
    json_decref(r);
    fnbox_session_close(s);
}

static double cpu_ms(json_t *doc)
{
    return json_number_value(json_object_get(json_object_get(doc, "usage"), "cpuMs"));
}

/* usage.cpuMs is the CPU time of the execute: the kernel's own (any language), and that of the processes it
 * waited for; a trivial cell's is small. */
static void test_cpu_time(void **state)
{
    (void)state;
    fnbox_session *s = open_session();
    json_t *r = run(s, "python", "import time, subprocess, sys\nt = time.process_time()\n"
                                 "while time.process_time() - t < 0.25: pass");
    assert_true(cpu_ms(r) >= 150);
    assert_true(cpu_ms(r) < 5000);
    json_decref(r);
    r = run(s, "python", "1");
    assert_true(cpu_ms(r) < 100);
    json_decref(r);
    r = run(s, "python", "subprocess.run([sys.executable, '-c', 'import time\\nt = time.process_time()\\n"
                         "while time.process_time() - t < 0.25: pass'], check=True).returncode");
    assert_string_equal(value(r), "0");
    assert_true(cpu_ms(r) >= 150);
    json_decref(r);
    r = run(s, "javascript", "const t0 = process.cpuUsage(); while (process.cpuUsage(t0).user < 250000) {}");
    assert_true(cpu_ms(r) >= 150);
    json_decref(r);
    r = run(s, "javascript", "1");
    assert_true(cpu_ms(r) < 100);
    json_decref(r);
    fnbox_session_close(s);
}

static const char *stack_of(json_t *doc)
{
    return str(json_object_get(doc, "error"), "stack");
}

/* Each cell has its own name: a function defined in cell 1 and called from cell 2 shows cell 1's line (and
 * its source, where the language shows it) and cell 2's call. */
static void test_cells_have_their_own_lines(void **state)
{
    (void)state;
    fnbox_session *s = open_session();
    json_decref(run(s, "python", "x = 1\ndef f():\n    raise ValueError('x')"));
    json_t *r = run(s, "python", "y = 2\nf()");
    assert_non_null(strstr(stack_of(r), "File \"<cell 2>\", line 2, in <module>\n    f()\n"));
    assert_non_null(strstr(stack_of(r), "File \"<cell 1>\", line 3, in f\n    raise ValueError('x')\n"));
    json_decref(r);
    /* the cell's own traceback module sees the cells' sources too */
    r = run(s, "python", "import traceback\ntry:\n    f()\nexcept ValueError:\n    traceback.print_exc()");
    assert_non_null(strstr(str(r, "stderr"), "File \"<cell 1>\", line 3, in f\n    raise ValueError('x')\n"));
    json_decref(r);
    json_decref(run(s, "javascript", "let x = 1;\nfunction f() {\n  throw new Error('x');\n}"));
    r = run(s, "javascript", "let y = 2;\nf()");
    assert_non_null(strstr(stack_of(r), "at f (<cell 1>:3:9)\n    at <cell 2>:2:1"));
    json_decref(r);
    json_decref(run(s, "ruby", "x = 1\ndef f\n  raise 'x'\nend"));
    r = run(s, "ruby", "y = 2\nf");
    assert_non_null(strstr(stack_of(r), "<cell 1>:3:in `f'\n<cell 2>:2:in `<main>'"));
    json_decref(r);
    json_decref(run(s, "php", "$x = 1;\nfunction f() {\n  throw new Exception('x');\n}"));
    r = run(s, "php", "$y = 2;\nf();");
    assert_non_null(strstr(stack_of(r), "Exception: x in <cell 1>:3\n#0 <cell 2>(2): f()"));
    json_decref(r);
    fnbox_session_close(s);
}

/* Output the kernel writes while no execute runs (a thread, a timer, after its cell returned) is no execute's:
 * the next one has only its own. */
static void test_output_between_executes_is_dropped(void **state)
{
    (void)state;
    fnbox_session *s = open_session();
    json_t *r = run(s, "python", "import threading, time, sys\ndef late():\n    time.sleep(0.2)\n"
                                 "    print('late', flush=True)\n    sys.stderr.write('late-err\\n')\n"
                                 "    print('buffered')\nthreading.Thread(target=late).start()\nprint('own')");
    assert_string_equal(str(r, "stdout"), "own\n");
    json_decref(r);
    json_decref(run(s, "javascript", "setTimeout(() => { console.log('late'); console.error('late-err'); }, 200); 1"));
    json_decref(run(s, "ruby", "Thread.new { sleep 0.2; puts 'late'; $stderr.puts 'late-err' }; 1"));
    usleep(700 * 1000);
    const char *langs[] = {"python", "javascript", "ruby"};
    const char *code[] = {"print('now')", "console.log('now')", "puts 'now'"};
    for (size_t i = 0; i < 3; i++) {
        r = run(s, langs[i], code[i]);
        assert_string_equal(str(r, "stdout"), "now\n");
        assert_string_equal(str(r, "stderr"), "");
        json_decref(r);
    }
    fnbox_session_close(s);
}

static void test_sessions_are_isolated(void **state)
{
    (void)state;
    fnbox_session *a = open_session(), *b = open_session();
    json_decref(run(a, "python", "secret = 'only-in-a'"));
    json_t *r = run(b, "python", "'secret' in globals()");
    assert_string_equal(value(r), "false");
    json_decref(r);
    /* nor can b's kernel see a's processes: its PID namespace holds only itself */
    r = run(b, "python", "import os\nsorted(int(p) for p in os.listdir('/proc') if p.isdigit())");
    assert_string_equal(value(r), "[1,2]");
    json_decref(r);
    fnbox_session_close(a);
    fnbox_session_close(b);
}

static void test_interrupt_keeps_state(void **state)
{
    (void)state;
    fnbox_session *s = open_session();
    json_decref(run(s, "python", "kept = 'yes'"));
    json_t *r = run_opts(s, "python", "while True: pass", 0.3, FNBOX_OK, NULL);
    assert_string_equal(str(r, "status"), "timeout");
    assert_false(restarted(r));
    /* the error says the kernel kept its state, and where the code was interrupted */
    assert_non_null(strstr(str(json_object_get(r, "error"), "reason"), "the kernel kept its state"));
    assert_non_null(strstr(str(json_object_get(r, "error"), "stack"), "KeyboardInterrupt"));
    json_decref(r);
    r = run(s, "python", "import time\nkept");
    assert_string_equal(value(r), "\"yes\"");
    json_decref(r);
    r = run_opts(s, "python", "time.sleep(100)", 0.3, FNBOX_OK, NULL);
    assert_string_equal(str(r, "status"), "timeout");
    assert_false(restarted(r));
    json_decref(r);
    json_decref(run(s, "javascript", "var kept = 'js'"));
    r = run_opts(s, "javascript", "while (true) {}", 0.3, FNBOX_OK, NULL);
    assert_string_equal(str(r, "status"), "timeout");
    assert_false(restarted(r));
    json_decref(r);
    r = run(s, "javascript", "kept");
    assert_string_equal(value(r), "\"js\"");
    json_decref(r);
    /* busy after an await: Node cannot break into it (breakOnSigint covers synchronous code only, and the
     * kernel's SIGINT listener never runs while the loop spins): killed, and the result says so */
    r = run_opts(s, "javascript", "await null; while (true) {}", 0.3, FNBOX_OK, NULL);
    assert_string_equal(str(r, "status"), "timeout");
    assert_true(restarted(r));
    assert_non_null(strstr(str(json_object_get(r, "error"), "reason"), "the kernel was killed: its state is lost"));
    json_decref(r);
    r = run(s, "javascript", "typeof kept");
    assert_string_equal(value(r), "\"undefined\"");
    assert_false(restarted(r));
    json_decref(r);
    fnbox_session_close(s);
}

/* An interrupted execute that kept the kernel: timeout, not restarted. */
static void assert_interrupted_kept(fnbox_session *s, const char *lang, const char *code)
{
    json_t *r = run_opts(s, lang, code, 0.3, FNBOX_OK, NULL);
    assert_string_equal(str(r, "status"), "timeout");
    if (restarted(r))
        fail_msg("%s: the kernel was restarted: %s", code, str(json_object_get(r, "error"), "reason"));
    json_decref(r);
}

/* The JavaScript kernel holds Node's SIGINT watchdog between cells, and lets it go while a cell's own SIGINT
 * listener exists (libuv then owns the signal): every mode, and each change between them, must still break
 * into both a synchronous loop and an await. */
static void test_javascript_interrupts_in_every_sigint_mode(void **state)
{
    (void)state;
    fnbox_session *s = open_session();
    json_decref(run(s, "javascript", "var kept = 'js'; globalThis.heard = 0"));
    assert_interrupted_kept(s, "javascript", "await new Promise(() => {})");
    assert_interrupted_kept(s, "javascript", "while (true) {}");
    /* a listener added by the cell that then waits: the kernel notices it while the cell waits */
    assert_interrupted_kept(s, "javascript", "process.on('SIGINT', () => { heard++; });\nawait new Promise(() => {})");
    assert_interrupted_kept(s, "javascript", "while (true) {}");
    assert_interrupted_kept(s, "javascript", "await new Promise(() => {})");
    /* the cell's listener heard the signals too, and is still there (vm takes the listeners off while the
     * synchronous part runs) */
    json_t *r = run(s, "javascript", "await null;\nheard > 0 && process.listeners('SIGINT').some((l) => String(l).includes('heard++'))");
    assert_string_equal(value(r), "true");
    json_decref(r);
    json_decref(run(s, "javascript", "process.removeAllListeners('SIGINT'); 1"));
    assert_interrupted_kept(s, "javascript", "while (true) {}");
    assert_interrupted_kept(s, "javascript", "await new Promise(() => {})");
    r = run(s, "javascript", "kept");
    assert_string_equal(value(r), "\"js\"");
    assert_false(restarted(r));
    json_decref(r);
    fnbox_session_close(s);
}

static void test_ignored_sigint_restarts(void **state)
{
    (void)state;
    fnbox_session *s = open_session();
    json_decref(run(s, "python", "lost = 1"));
    json_t *r = run_opts(s, "python", "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True: pass",
                         0.3, FNBOX_OK, NULL);
    assert_string_equal(str(r, "status"), "timeout");
    assert_true(restarted(r));
    assert_non_null(strstr(str(json_object_get(r, "error"), "reason"), "the kernel was killed: its state is lost"));
    json_decref(r);
    r = run(s, "python", "'lost' in globals()");
    assert_string_equal(value(r), "false");
    assert_false(restarted(r));
    json_decref(r);
    /* a kernel that dies by itself: the execute crashes, the next one starts afresh and says so */
    r = run(s, "python", "import os\nos._exit(3)");
    assert_true(restarted(r));
    assert_string_not_equal(str(r, "status"), "success");
    json_decref(r);
    r = run(s, "python", "1 + 1");
    assert_string_equal(value(r), "2");
    json_decref(r);
    fnbox_session_close(s);
}

static void test_restart_and_bad_input(void **state)
{
    (void)state;
    fnbox_session *s = open_session();
    char *error = NULL;
    assert_int_equal(fnbox_session_kernel_restart(s, "python", &error, NULL), FNBOX_OK); /* never started */
    json_decref(run(s, "python", "gone = 1"));
    assert_int_equal(fnbox_session_kernel_restart(s, "python", &error, NULL), FNBOX_OK);
    json_t *r = run(s, "python", "'gone' in globals()");
    assert_string_equal(value(r), "false");
    json_decref(r);
    /* restart in the request: kernelRestarted only when a started kernel's state was discarded */
    json_decref(run(s, "javascript", "1"));
    r = run_request(s, "ruby", "{\"code\": \"kept = 1\", \"restart\": true}"); /* none was running */
    assert_false(restarted(r));
    json_decref(r);
    r = run_request(s, "ruby", "{\"code\": \"defined?(kept)\", \"restart\": true}");
    assert_true(restarted(r));
    assert_string_equal(value(r), "null");
    json_decref(r);
    r = run_request(s, "javascript", "{\"code\": \"2\", \"restart\": false}");
    assert_false(restarted(r));
    json_decref(r);
    assert_int_equal(fnbox_session_kernel_restart(s, "cobol", &error, NULL), FNBOX_INVALID_REQUEST);
    assert_non_null(strstr(error, "cobol"));
    fnbox_free(error);
    char *result = NULL;
    size_t len = 0;
    const char *bad[][2] = {{"{}", "code"}, {"{\"code\": 1}", "code"}, {"{\"code\": \"1\", \"timeout\": \"x\"}", "timeout"},
                            {"{\"code\": \"1\", \"args\": []}", "args"}, {"{\"code\": \"1\", \"restart\": 1}", "restart"},
                            {"[", "malformed"}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_equal(fnbox_session_kernel_exec(s, "python", bad[i][0], strlen(bad[i][0]), NULL, &result, &len),
                         FNBOX_INVALID_REQUEST);
        assert_non_null(strstr(result, bad[i][1]));
        fnbox_free(result);
    }
    /* a language without a kernel: named, with the kernels there are */
    assert_int_equal(fnbox_session_kernel_exec(s, "c", "{\"code\": \"1\"}", 13, NULL, &result, &len),
                     FNBOX_INVALID_REQUEST);
    assert_non_null(strstr(result, "'c' has no kernel"));
    assert_non_null(strstr(result, "ruby (rb), php"));
    fnbox_free(result);
    fnbox_session_close(s);
}

static void test_output_streams_and_cancel(void **state)
{
    (void)state;
    fnbox_session *s = open_session();
    chunks c = {{0}};
    fnbox_call_options opts = {.size = sizeof opts, .cancel_fd = -1, .output = collect, .output_ctx = &c};
    json_t *r = run_opts(s, "python", "print('a', flush=True)\nimport sys\nsys.stderr.write('b')\n3", 0, FNBOX_OK, &opts);
    assert_string_equal(value(r), "3");
    assert_non_null(strstr(c.text, "stdout:a\n|"));
    assert_non_null(strstr(c.text, "stderr:b|"));
    json_decref(r);
    int p[2];
    assert_int_equal(pipe(p), 0);
    assert_int_equal(write(p[1], "x", 1), 1);
    fnbox_call_options cancel = {.size = sizeof cancel, .cancel_fd = p[0]};
    r = run_opts(s, "python", "while True: pass", 0, FNBOX_OK, &cancel);
    assert_string_equal(str(r, "status"), "terminated");
    assert_false(restarted(r));
    json_decref(r);
    close(p[0]);
    close(p[1]);
    fnbox_session_close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_state_persists_python),
        cmocka_unit_test(test_state_persists_javascript),
        cmocka_unit_test(test_state_persists_ruby),
        cmocka_unit_test(test_state_persists_php),
        cmocka_unit_test(test_cpu_time),
        cmocka_unit_test(test_cells_have_their_own_lines),
        cmocka_unit_test(test_output_between_executes_is_dropped),
        cmocka_unit_test(test_sessions_are_isolated),
        cmocka_unit_test(test_interrupt_keeps_state),
        cmocka_unit_test(test_javascript_interrupts_in_every_sigint_mode),
        cmocka_unit_test(test_ignored_sigint_restarts),
        cmocka_unit_test(test_restart_and_bad_input),
        cmocka_unit_test(test_output_streams_and_cancel),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
