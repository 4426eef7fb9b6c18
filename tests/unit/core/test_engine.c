/* Engines (fnbox_engine_*) through the public C API, on the real kernel with real interpreters: a pooled
 * sandbox serves a call warm and is never used twice (no file, global, environment variable or PID
 * namespace of one call is seen by the next), the pool refills after calls that crash, time out or run out
 * of memory and after an idle sandbox dies, files behave as in a cold call, requests a pooled sandbox was
 * not built for run cold, bad options are refused naming the field, and concurrent calls leave nothing
 * running once the engine is closed. */
#include <dirent.h>
#include <jansson.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "call_testlib.h"
#include "fnbox.h"

#define WARM_TIMEOUT_S 30.0
/* wait_warm reports a pool full once each sandbox's program is forked, before its interpreter has
 * loaded the harness: a call at once pays the interpreter's start (and has raced its set-up, see
 * test_call_right_after_wait_warm). The tests about other behaviours let the harness settle first. */
#define SETTLE_US 300000

static const char ADD_PY[] = "def add(a, b):\n    return a + b\n";

static bool can_run;          /* fnbox doctor's verdict, asked once */
static fnbox_engine *opened;  /* the test's engine, closed by teardown when an assertion ended the test */

static void need_sandboxes(void)
{
    if (!can_run)
        skip();
}

static fnbox_engine *open_engine(const char *options)
{
    need_sandboxes();
    fnbox_engine *e = NULL;
    char *error = NULL;
    int rc = fnbox_engine_open(options, strlen(options), &e, &error, NULL);
    if (rc != FNBOX_OK)
        fprintf(stderr, "engine_open %s: %d %s\n", options, rc, error ? error : "(no error)");
    assert_int_equal(rc, FNBOX_OK);
    assert_non_null(e);
    fnbox_free(error);
    opened = e;
    return e;
}

static void wait_full(fnbox_engine *e)
{
    assert_int_equal(fnbox_engine_wait_warm(e, WARM_TIMEOUT_S), FNBOX_OK);
}

static void wait_settled(fnbox_engine *e)
{
    wait_full(e);
    usleep(SETTLE_US);
}

/* Runs request (a JSON object, consumed) through the engine, or through fnbox_call when e is NULL;
 * returns the parsed result (caller decrefs). */
static json_t *call(fnbox_engine *e, json_t *request)
{
    char *text = json_dumps(request, JSON_COMPACT);
    json_decref(request);
    assert_non_null(text);
    char *result = NULL;
    size_t len = 0;
    int rc = e ? fnbox_engine_call(e, text, strlen(text), NULL, &result, &len)
               : fnbox_call(text, strlen(text), NULL, &result, &len);
    if (rc != FNBOX_OK)
        fprintf(stderr, "call %.300s: %d %.800s\n", text, rc, result ? result : "");
    free(text);
    assert_int_equal(rc, FNBOX_OK);
    json_t *doc = json_loadb(result, len, 0, NULL);
    assert_non_null(doc);
    fnbox_free(result);
    return doc;
}

static json_t *python(const char *code)
{
    return json_pack("{s:s, s:s}", "language", "python", "code", code);
}

static const char *str(json_t *doc, const char *key)
{
    json_t *v = json_object_get(doc, key);
    return json_is_string(v) ? json_string_value(v) : "";
}

static bool warm(json_t *doc)
{
    return json_is_true(json_object_get(json_object_get(doc, "meta"), "warm"));
}

static bool has_warm_key(json_t *doc)
{
    return json_object_get(json_object_get(doc, "meta"), "warm") != NULL;
}

static void expect_success(json_t *doc)
{
    if (strcmp(str(doc, "status"), "success") != 0) {
        char *d = json_dumps(doc, JSON_COMPACT);
        fprintf(stderr, "not a success: %.1000s\n", d);
        free(d);
    }
    assert_string_equal(str(doc, "status"), "success");
}

/* add(a, b) warm, checked. */
static void warm_add(fnbox_engine *e, int a, int b)
{
    json_t *r = call(e, json_pack("{s:s, s:s, s:[i,i]}", "language", "python", "code", ADD_PY, "args", a, b));
    expect_success(r);
    assert_int_equal(json_integer_value(json_object_get(r, "result")), a + b);
    assert_true(warm(r));
    json_decref(r);
}

/* One counter of the language's pool (stats). */
static long long pool_stat(fnbox_engine *e, const char *lang, const char *key)
{
    char *text = NULL;
    size_t len = 0;
    assert_int_equal(fnbox_engine_stats(e, &text, &len), 0);
    json_t *doc = json_loadb(text, len, 0, NULL);
    assert_non_null(doc);
    fnbox_free(text);
    json_t *v = json_object_get(json_object_get(json_object_get(doc, "pools"), lang), key);
    assert_true(json_is_integer(v));
    long long n = json_integer_value(v);
    json_decref(doc);
    return n;
}

/* ---- processes of this test, seen from /proc ---- */

static pid_t parent_of(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')'); /* the command name may hold spaces and parentheses */
    int ppid = 0;
    return p && sscanf(p + 1, " %*c %d", &ppid) == 1 ? (pid_t)ppid : 0;
}

/* Whether pid descends from this process: only our own sandboxes may be counted or killed (other
 * fnbox processes run on this machine too). */
static bool mine(pid_t pid)
{
    for (int depth = 0; pid > 1 && depth < 64; depth++) {
        pid = parent_of(pid);
        if (pid == getpid())
            return true;
    }
    return false;
}

static bool cmdline_has(pid_t pid, const char *needle)
{
    char path[64], buf[4096];
    snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    for (size_t i = 0; i < n; i++) /* the arguments are NUL-separated */
        if (buf[i] == '\0')
            buf[i] = ' ';
    buf[n] = '\0';
    return strstr(buf, needle) != NULL;
}

/* Our descendant processes (needle NULL) or those whose command line holds needle; the last one's pid in
 * *last. */
static int count_mine(const char *needle, pid_t *last)
{
    DIR *d = opendir("/proc");
    assert_non_null(d);
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        pid_t pid = (pid_t)atoi(de->d_name);
        if (pid <= 0 || pid == getpid() || !mine(pid) || (needle && !cmdline_has(pid, needle)))
            continue;
        n++;
        if (last)
            *last = pid;
    }
    closedir(d);
    return n;
}

static void close_engine(fnbox_engine *e)
{
    fnbox_engine_close(e);
    opened = NULL;
    assert_int_equal(count_mine(NULL, NULL), 0); /* a closed engine leaves no process behind */
}

/* After a failed assertion the test's engine is still open: close it, so that the next test starts with
 * no process of this one (they count them). */
static int teardown(void **state)
{
    (void)state;
    fnbox_engine_close(opened);
    opened = NULL;
    return 0;
}

/* ---- (a) a call after wait_warm is served warm ---- */

static void test_trivial_call_is_warm(void **state)
{
    (void)state;
    fnbox_engine *e = open_engine("{\"warm\": {\"python\": 1}}");
    wait_settled(e);
    warm_add(e, 2, 3);
    assert_int_equal(pool_stat(e, "python", "served"), 1);
    close_engine(e);
}

/* wait_warm's promise taken at its word: "every pool is full" means a call may come at once. */
static void test_call_right_after_wait_warm(void **state)
{
    (void)state;
    fnbox_engine *e = open_engine("{\"warm\": {\"python\": 1}}");
    for (int i = 0; i < 5; i++) {
        wait_full(e);
        warm_add(e, i, 10);
    }
    close_engine(e);
}

/* ---- (b) a pooled sandbox serves one call only ---- */

/* Reports what it finds of an earlier call (files in /tmp and /workspace, a module global, an attribute
 * on sys, an environment variable) and its PID namespace, then leaves all of them for the next call. The
 * namespace is named by its inode and its init's start time (clock ticks since boot): the kernel reuses a
 * freed namespace's inode number at once, so consecutive sandboxes often show the same one. */
static const char PROBE_PY[] =
    "import os, sys\n"
    "def probe():\n"
    "    seen = [p for p in ('/tmp/marker', '/workspace/marker') if os.path.exists(p)]\n"
    "    if 'MARK' in globals(): seen.append('global')\n"
    "    if hasattr(sys, 'fnbox_mark'): seen.append('sys')\n"
    "    if 'FNBOX_MARK' in os.environ: seen.append('env')\n"
    "    try:\n"
    "        ns = str(os.stat('/proc/self/ns/pid').st_ino)\n"
    "    except OSError:\n"
    "        ns = '?'\n"
    "    ns += ' ' + open('/proc/1/stat').read().rsplit(')', 1)[1].split()[19]\n"
    "    for p in ('/tmp/marker', '/workspace/marker'):\n"
    "        with open(p, 'w') as f: f.write('x')\n"
    "    globals()['MARK'] = 1\n"
    "    sys.fnbox_mark = 1\n"
    "    os.environ['FNBOX_MARK'] = '1'\n"
    "    return {'seen': seen, 'ns': ns}\n";

/* The probe's findings as text ("" when it found nothing); its namespace into ns. */
static void run_probe(json_t *r, char *seen, size_t seen_cap, char *ns, size_t ns_cap)
{
    expect_success(r);
    json_t *v = json_object_get(r, "result");
    char *s = json_dumps(json_object_get(v, "seen"), JSON_COMPACT);
    snprintf(seen, seen_cap, "%s", s && strcmp(s, "[]") != 0 ? s : "");
    free(s);
    snprintf(ns, ns_cap, "%s", str(v, "ns"));
    assert_true(ns[0] != '\0');
}

static void test_never_used_twice(void **state)
{
    (void)state;
    enum { CALLS = 4 };
    char ns[CALLS][64], seen[256];
    fnbox_engine *e = open_engine("{\"warm\": {\"python\": 1}}");
    for (int i = 0; i < CALLS; i++) {
        wait_settled(e);
        json_t *r = call(e, python(PROBE_PY));
        assert_true(warm(r));
        run_probe(r, seen, sizeof seen, ns[i], sizeof ns[i]);
        json_decref(r);
        if (seen[0])
            fprintf(stderr, "call %d found an earlier call's %s\n", i, seen);
        assert_string_equal(seen, "");
        for (int j = 0; j < i; j++)
            assert_string_not_equal(ns[i], ns[j]);
    }
    long long served = pool_stat(e, "python", "served"), built = pool_stat(e, "python", "built");
    assert_int_equal(served, CALLS);
    assert_true(built >= served); /* a sandbox built for each call served */
    close_engine(e);
}

/* The probe can see an earlier call: two calls in one session share /tmp and /workspace. Without this
 * the test above could pass with a probe that never finds anything. */
static void test_probe_sees_a_shared_sandbox(void **state)
{
    (void)state;
    need_sandboxes();
    fnbox_session *s = NULL;
    assert_int_equal(fnbox_session_open("", 0, &s, NULL, NULL), FNBOX_OK);
    char seen[256], ns[64];
    for (int i = 0; i < 2; i++) {
        json_t *req = python(PROBE_PY);
        char *text = json_dumps(req, JSON_COMPACT), *result = NULL;
        json_decref(req);
        size_t len = 0;
        assert_int_equal(fnbox_session_call(s, text, strlen(text), NULL, &result, &len), FNBOX_OK);
        free(text);
        json_t *r = json_loadb(result, len, 0, NULL);
        fnbox_free(result);
        run_probe(r, seen, sizeof seen, ns, sizeof ns);
        json_decref(r);
    }
    assert_non_null(strstr(seen, "/tmp/marker"));
    assert_non_null(strstr(seen, "/workspace/marker"));
    fnbox_session_close(s);
}

/* ---- (c) the pool refills after a call that failed ---- */

typedef struct failing_call {
    const char *code;
    double timeout;        /* 0: the default */
    const char *status;
    const char *error_type;
} failing_call;

static void test_refill_after_failure(void **state)
{
    (void)state;
    static const failing_call cases[] = {
        {"import os\ndef f():\n    os.kill(os.getpid(), 9)\n", 0, "crash", "Crash"},
        {"def f():\n    while True:\n        pass\n", 1, "timeout", "TimeoutError"},
        /* as a cold call reports it: the cgroup's OOM killer, named as the memory limit */
        {"def f():\n    return len(b'x' * (400 << 20))\n", 0, "crash", "MemoryLimitExceeded"},
    };
    fnbox_engine *e = open_engine("{\"warm\": {\"python\": 1}}");
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        wait_settled(e);
        json_t *req = python(cases[i].code);
        if (cases[i].timeout > 0)
            json_object_set_new(req, "timeout", json_real(cases[i].timeout));
        json_t *r = call(e, req);
        assert_true(warm(r));
        assert_string_equal(str(r, "status"), cases[i].status);
        assert_string_equal(str(json_object_get(r, "error"), "type"), cases[i].error_type);
        json_decref(r);
        wait_settled(e); /* refilled */
        warm_add(e, (int)i, 1);
    }
    close_engine(e);
}

/* ---- (d) an idle sandbox that died is replaced ---- */

static void test_idle_death_replaced(void **state)
{
    (void)state;
    fnbox_engine *e = open_engine("{\"warm\": {\"python\": 1}}");
    wait_settled(e);
    pid_t harness = 0;
    assert_int_equal(count_mine("/.fnbox/harness.py", &harness), 1);
    assert_int_equal(kill(harness, SIGKILL), 0);
    /* Once it is gone (a kill is not instant: a call that takes the sandbox before the program is dead runs
     * in it and sees the kill, as a function killed during its call would), but before the pool's sweep
     * may have noticed: the call must not be given the dead sandbox (it runs warm elsewhere or cold). */
    char proc_path[64];
    snprintf(proc_path, sizeof proc_path, "/proc/%d/stat", (int)harness);
    for (int i = 0; i < 2000 && access(proc_path, F_OK) == 0; i++)
        usleep(1000);
    json_t *r = call(e, json_pack("{s:s, s:s, s:[i,i]}", "language", "python", "code", ADD_PY, "args", 20, 22));
    expect_success(r);
    assert_int_equal(json_integer_value(json_object_get(r, "result")), 42);
    json_decref(r);
    for (int i = 0; i < 100 && pool_stat(e, "python", "died") < 1; i++)
        usleep(100000);
    assert_true(pool_stat(e, "python", "died") >= 1);
    wait_settled(e);
    warm_add(e, 1, 2);
    close_engine(e);
}

/* ---- (e) files: as in a cold call ---- */

static const char FILES_PY[] =
    "def f():\n"
    "    a = open('/workspace/in.txt').read()\n"
    "    b = open('/tmp/x/y.txt').read()\n"
    "    with open('/workspace/out.txt', 'w') as o:\n"
    "        o.write(a + b)\n"
    "    return a + b\n";

/* One kind of change of the files report, as sorted "path type size content" lines (no timestamps). */
static char *changes(json_t *doc, const char *kind)
{
    json_t *list = json_object_get(json_object_get(doc, "files"), kind);
    assert_true(json_is_array(list));
    size_t n = json_array_size(list), cap = 64 + n * 256, at = 0;
    char **lines = calloc(n + 1, sizeof *lines), *out = calloc(1, cap);
    assert_true(lines && out);
    for (size_t i = 0; i < n; i++) {
        json_t *c = json_array_get(list, i);
        char *content = json_dumps(json_object_get(c, "content"), JSON_COMPACT | JSON_ENCODE_ANY);
        assert_int_not_equal(asprintf(&lines[i], "%s %s %lld %.100s", str(c, "path"), str(c, "type"),
                                      json_integer_value(json_object_get(c, "size")), content ? content : "-"), -1);
        free(content);
    }
    qsort(lines, n, sizeof *lines, (int (*)(const void *, const void *))strcmp);
    for (size_t i = 0; i < n; i++) {
        at += (size_t)snprintf(out + at, cap - at, "%s\n", lines[i]);
        free(lines[i]);
    }
    free(lines);
    return out;
}

static json_t *files_request(void)
{
    return json_pack("{s:s, s:s, s:{s:s, s:s}}", "language", "python", "code", FILES_PY, "files",
                     "/workspace/in.txt", "hello", "/tmp/x/y.txt", "z");
}

static void test_files_as_cold(void **state)
{
    (void)state;
    fnbox_engine *e = open_engine("{\"warm\": {\"python\": 1}}");
    wait_settled(e);
    json_t *w = call(e, files_request()), *c = call(NULL, files_request());
    assert_true(warm(w));
    assert_false(has_warm_key(c));
    expect_success(w);
    assert_string_equal(str(w, "result"), "helloz");
    assert_string_equal(str(c, "result"), "helloz");
    static const char *const kinds[] = {"created", "modified", "deleted"};
    for (size_t i = 0; i < 3; i++) {
        char *a = changes(w, kinds[i]), *b = changes(c, kinds[i]);
        assert_string_equal(a, b);
        if (i == 0)
            assert_non_null(strstr(a, "/workspace/out.txt file 6 \"helloz\""));
        free(a);
        free(b);
    }
    json_decref(w);
    json_decref(c);
    close_engine(e);
}

/* ---- (f) what a pooled sandbox was not built with runs cold (memory and pids limits it can take:
 * tests/integration/test_serve_warm.py) ---- */

static void expect_cold(fnbox_engine *e, json_t *req, const char *want)
{
    json_t *r = call(e, req);
    expect_success(r);
    assert_string_equal(str(r, "result"), want);
    assert_false(has_warm_key(r));
    json_decref(r);
}

static void test_cold_fallbacks(void **state)
{
    (void)state;
    need_sandboxes();
    char dir[] = "/tmp/fnbox-engine-test.XXXXXX";
    assert_non_null(mkdtemp(dir));
    chmod(dir, 0755);
    fbt_write_file(dir, "a.txt", "mounted");
    fnbox_engine *e = open_engine("{\"warm\": {\"python\": 1}}");
    wait_settled(e);
    expect_cold(e, json_pack("{s:s, s:s, s:{s:{s:s}}}", "language", "python", "code",
                             "import os\ndef f():\n    return os.environ['FOO']\n", "permissions", "env", "FOO", "bar"),
                "bar");
    if (fbt_can_run(true))
        expect_cold(e, json_pack("{s:s, s:s, s:{s:{s:s}}}", "language", "python", "code",
                                 "def f():\n    return open('/data/a.txt').read()\n", "mount", "dirs", "/data", dir),
                    "mounted");
    expect_cold(e, json_pack("{s:s, s:s, s:{s:I}}", "language", "python", "code", "def f():\n    return 'm'\n",
                             "limits", "openFiles", (json_int_t)100),
                "m");
    expect_cold(e, json_pack("{s:s, s:s, s:s}", "language", "python", "code",
                             "import os\ndef f():\n    return os.getcwd()\n", "workdir", "/work"),
                "/work");
    /* none of them took the pooled sandbox */
    assert_int_equal(pool_stat(e, "python", "served"), 0);
    assert_int_equal(pool_stat(e, "python", "idle"), 1);
    close_engine(e);
    char file[64];
    snprintf(file, sizeof file, "%s/a.txt", dir);
    unlink(file);
    rmdir(dir);
}

/* ---- (g) bad options are refused, naming the field ---- */

typedef struct bad_options {
    const char *options;
    const char *named;     /* in the error's message */
} bad_options;

static void test_bad_options(void **state)
{
    (void)state;
    static const bad_options cases[] = {
        {"{\"warm\": {\"cobol\": 1}}", "warm.cobol: unknown language"},
        {"{\"warm\": {\"python\": 65}}", "warm.python: must be an integer from 0 to 64"},
        {"{\"warm\": {\"python\": -1}}", "warm.python: must be"},
        {"{\"warm\": {\"python\": 1.5}}", "warm.python: must be"},
        {"{\"warm\": [\"python\"]}", "warm: must be an object"},
        {"{\"warm\": \"all\"}", "warm: must be an object"},
        {"{\"warm\": 2}", "warm: must be an object"},
        {"{\"warm\": {\"python\": 1}, \"colour\": 1}", "unknown field 'colour'"},
        {"{\"maxMemoryBytes\": 0}", "maxMemoryBytes: must be a positive integer"},
        {"{\"maxMemoryBytes\": \"1G\"}", "maxMemoryBytes: must be a positive integer"},
        {"{\"warm\": {\"python\": 1}", "invalid JSON"},
        {"[]", "must be an object"},
        {"{\"warm\": {\"python\": 1, \"py\": 1}}", "python is given twice"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        static fnbox_engine *const unset = (fnbox_engine *)&cases; /* open must set it to NULL */
        fnbox_engine *e = unset;
        char *error = NULL;
        size_t len = 0;
        int rc = fnbox_engine_open(cases[i].options, strlen(cases[i].options), &e, &error, &len);
        json_t *doc = error ? json_loadb(error, len, 0, NULL) : NULL;
        json_t *err = json_object_get(doc, "error");
        if (rc != FNBOX_INVALID_REQUEST || !strstr(str(err, "message"), cases[i].named))
            fprintf(stderr, "options %s: %d %s\n", cases[i].options, rc, error ? error : "(no error)");
        assert_int_equal(rc, FNBOX_INVALID_REQUEST);
        assert_null(e);
        assert_string_equal(str(err, "type"), "InvalidRequest");
        assert_non_null(strstr(str(err, "message"), cases[i].named));
        json_decref(doc);
        fnbox_free(error);
        fnbox_engine_close(e);
    }
    assert_int_equal(count_mine(NULL, NULL), 0);
}

/* No options: an engine without pools, whose calls all run cold. */
static void test_no_pools(void **state)
{
    (void)state;
    fnbox_engine *e = open_engine("");
    assert_int_equal(fnbox_engine_wait_warm(e, 1), FNBOX_OK); /* nothing to fill */
    expect_cold(e, json_pack("{s:s, s:s}", "language", "python", "code", "def f():\n    return 'x'\n"), "x");
    close_engine(e);
}

/* ---- (h) concurrent calls through one engine ---- */

enum { THREADS = 4, CALLS_EACH = 10 };

typedef struct worker {
    fnbox_engine *e;
    int id, ok, warm;
} worker;

/* No cmocka asserts here (they longjmp across threads): counts what was right. */
static void *work(void *arg)
{
    worker *w = arg;
    for (int i = 0; i < CALLS_EACH; i++) {
        json_t *req = json_pack("{s:s, s:s, s:[i,i]}", "language", "python", "code", ADD_PY, "args", w->id * 100, i);
        char *text = json_dumps(req, JSON_COMPACT), *result = NULL;
        json_decref(req);
        size_t len = 0;
        int rc = text ? fnbox_engine_call(w->e, text, strlen(text), NULL, &result, &len) : -1;
        json_t *r = rc == FNBOX_OK ? json_loadb(result, len, 0, NULL) : NULL;
        if (r && strcmp(str(r, "status"), "success") == 0 &&
            json_integer_value(json_object_get(r, "result")) == w->id * 100 + i) {
            w->ok++;
            w->warm += warm(r);
        } else {
            fprintf(stderr, "thread %d call %d: %d %.500s\n", w->id, i, rc, result ? result : "");
        }
        json_decref(r);
        fnbox_free(result);
        free(text);
    }
    return NULL;
}

static void test_concurrent_calls(void **state)
{
    (void)state;
    fnbox_engine *e = open_engine("{\"warm\": {\"python\": 2}}");
    wait_settled(e);
    pthread_t t[THREADS];
    worker w[THREADS];
    for (int i = 0; i < THREADS; i++) {
        w[i] = (worker){.e = e, .id = i + 1};
        assert_int_equal(pthread_create(&t[i], NULL, work, &w[i]), 0);
    }
    int ok = 0, warm_calls = 0;
    for (int i = 0; i < THREADS; i++) {
        pthread_join(t[i], NULL);
        ok += w[i].ok;
        warm_calls += w[i].warm;
    }
    assert_int_equal(ok, THREADS * CALLS_EACH);
    assert_true(warm_calls >= 2); /* the two sandboxes ready at the start served */
    assert_int_equal(pool_stat(e, "python", "served"), warm_calls);
    close_engine(e);
    assert_int_equal(count_mine("/.fnbox/harness", NULL), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_trivial_call_is_warm, teardown),
        cmocka_unit_test_teardown(test_call_right_after_wait_warm, teardown),
        cmocka_unit_test_teardown(test_never_used_twice, teardown),
        cmocka_unit_test_teardown(test_probe_sees_a_shared_sandbox, teardown),
        cmocka_unit_test_teardown(test_refill_after_failure, teardown),
        cmocka_unit_test_teardown(test_idle_death_replaced, teardown),
        cmocka_unit_test_teardown(test_files_as_cold, teardown),
        cmocka_unit_test_teardown(test_cold_fallbacks, teardown),
        cmocka_unit_test_teardown(test_bad_options, teardown),
        cmocka_unit_test_teardown(test_no_pools, teardown),
        cmocka_unit_test_teardown(test_concurrent_calls, teardown),
    };
    can_run = fbt_can_run(false);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
