/* The C API's events (fnbox_call_options event / sync_allow_abort), end to end: real calls through
 * fnbox_call, a host directory mounted at /data whose rules allow creating and modifying files in out/.
 * The function writes out/a.txt, out/b.txt and out/c.txt and tries to modify the read-only top.txt.
 *   order:  permissionDenied (top.txt) first, then beforeSync / afterSync per change in sync order, on the
 *           calling thread; the result's `events` log lists the same, in the same order;
 *   skip:   beforeSync answers SKIP for b.txt: not written, sync.skipped says "skipped by beforeSync";
 *   abort:  ABORT at b.txt with sync_allow_abort: nothing of the sync stays on the host (rollback);
 *           without sync_allow_abort the same answer only skips b.txt;
 *   error:  the callback creates c.txt on the host just before sync writes it: a conflict, reported as
 *           afterSync success 0 with the error, then syncError; rollback leaves the host as before;
 *   trimmed: includeChanges and includeDenied false: the result has no `files` and no permissionDenied
 *           event, yet every change is synced and the callback still hears every event.
 * Skipped when this machine cannot run calls (fnbox doctor) or has no /dev/fuse. */
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "call_testlib.h"
#include "fnbox.h"

/* ---- the host's side: what it was told, and how it answers ---- */

typedef struct host {
    pthread_t caller;
    bool off_thread;         /* an event came on another thread than fnbox_call's */
    char log[4096];          /* "TYPE PATH[ success=N];" per event */
    const char *skip;        /* beforeSync: SKIP this path */
    const char *abort_at;    /* beforeSync: ABORT at this path */
    const char *clash;       /* beforeSync: create this path's real file first (a conflict) */
} host;

static int on_event(void *ctx, const fnbox_event *ev)
{
    host *h = ctx;
    if (!pthread_equal(pthread_self(), h->caller))
        h->off_thread = true;
    size_t n = strlen(h->log);
    snprintf(h->log + n, sizeof h->log - n, "%s %s", ev->type, ev->path ? ev->path : "(null)");
    n = strlen(h->log);
    if (strcmp(ev->type, "afterSync") == 0)
        snprintf(h->log + n, sizeof h->log - n, " success=%d", ev->success);
    n = strlen(h->log);
    snprintf(h->log + n, sizeof h->log - n, ";");
    if (strcmp(ev->type, "permissionDenied") == 0) {
        assert_non_null(ev->operation);
        assert_non_null(ev->rule);
        assert_null(ev->real_path);
    }
    if (strcmp(ev->type, "beforeSync") != 0)
        return FNBOX_SYNC_GO;
    assert_non_null(ev->real_path);
    assert_non_null(ev->change);
    assert_non_null(ev->file_type);
    if (h->clash && strcmp(ev->path, h->clash) == 0) {
        FILE *f = fopen(ev->real_path, "wx");
        assert_non_null(f);
        fputs("host's own", f);
        fclose(f);
    }
    if (h->skip && strcmp(ev->path, h->skip) == 0)
        return FNBOX_SYNC_SKIP;
    if (h->abort_at && strcmp(ev->path, h->abort_at) == 0)
        return FNBOX_SYNC_ABORT;
    return FNBOX_SYNC_GO;
}

/* ---- a host tree and one call ---- */

static void make_tree(char *dir)
{
    assert_non_null(mkdtemp(dir));
    char out[512];
    snprintf(out, sizeof out, "%s/out", dir);
    assert_int_equal(mkdir(out, 0755), 0);
    fbt_write_file(dir, "top.txt", "top");
    fbt_write_file(dir, "out/a.txt", "old a");
}

static void remove_tree(const char *dir)
{
    const char *files[] = {"top.txt", "out/a.txt", "out/b.txt", "out/c.txt"};
    char path[512];
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        unlink(path);
    }
    snprintf(path, sizeof path, "%s/out", dir);
    rmdir(path);
    rmdir(dir);
}

static const char k_code[] =
    "def f():\n"
    "    for name in ('a', 'b', 'c'):\n"
    "        with open('/data/out/%s.txt' % name, 'w') as fh:\n"
    "            fh.write('new ' + name)\n"
    "    try:\n"
    "        open('/data/top.txt', 'w').write('changed')\n"
    "        return 'top written'\n"
    "    except PermissionError:\n"
    "        return 'top refused'\n";

/* reporting: extra root fields of the request (",\"resultOptions\":{...}"), or "". */
static json_t *call_with(const char *dir, host *h, bool allow_abort, const char *reporting)
{
    char *code_json = fbt_json_quote(k_code);
    char request[2048];
    snprintf(request, sizeof request,
             "{\"language\":\"python\",\"code\":%s,\"mount\":{\"dirs\":{\"/data\":\"%s\"},"
             "\"permissions\":{\"rules\":[{\"pattern\":\"out/**\",\"allow\":[\"create\",\"modify\"]}]},"
             "\"sync\":{\"mode\":\"batch\"}}%s}",
             code_json, dir, reporting);
    free(code_json);
    h->caller = pthread_self();
    fnbox_call_options o = {.size = sizeof o, .cancel_fd = -1, .event = on_event, .event_ctx = h,
                            .sync_allow_abort = allow_abort};
    char *text = NULL;
    size_t len = 0;
    int rc = fnbox_call(request, strlen(request), &o, &text, &len);
    assert_int_equal(rc, FNBOX_OK);
    json_t *res = json_loads(text, 0, NULL);
    assert_non_null(res);
    if (strcmp(json_string_value(json_object_get(res, "result")) ?: "", "top refused") != 0)
        fail_msg("the call did not run as expected: %s", text);
    fnbox_free(text);
    assert_false(h->off_thread);
    return res;
}

static json_t *call(const char *dir, host *h, bool allow_abort)
{
    return call_with(dir, h, allow_abort, "");
}

/* The result's `events` log in the callback's format, to compare with what the callback saw. */
static void log_of(json_t *res, char *out, size_t cap)
{
    out[0] = '\0';
    json_t *e;
    size_t i;
    json_array_foreach(json_object_get(res, "events"), i, e) {
        size_t n = strlen(out);
        snprintf(out + n, cap - n, "%s %s", json_string_value(json_object_get(e, "type")),
                 json_string_value(json_object_get(e, "path")));
        n = strlen(out);
        if (json_object_get(e, "success"))
            snprintf(out + n, cap - n, " success=%d", json_is_true(json_object_get(e, "success")));
        n = strlen(out);
        snprintf(out + n, cap - n, ";");
    }
}

static void expect_host(const char *dir, const char *a, const char *b, const char *c)
{
    const char *rel[] = {"out/a.txt", "out/b.txt", "out/c.txt"};
    const char *want[] = {a, b, c};
    for (int i = 0; i < 3; i++) {
        char text[64];
        bool exists;
        fbt_read_file(dir, rel[i], text, sizeof text, &exists);
        if (!want[i])
            assert_false(exists);
        else
            assert_string_equal(text, want[i]);
    }
    char top[64];
    bool exists;
    fbt_read_file(dir, "top.txt", top, sizeof top, &exists);
    assert_string_equal(top, "top");
}

static void test_order(void **state)
{
    (void)state;
    if (!fbt_can_run(true))
        skip();
    char dir[] = "/tmp/fnbox-events.XXXXXX";
    make_tree(dir);
    host h = {0};
    json_t *res = call(dir, &h, false);
    assert_string_equal(h.log, "permissionDenied /data/top.txt;"
                               "beforeSync /data/out/a.txt;afterSync /data/out/a.txt success=1;"
                               "beforeSync /data/out/b.txt;afterSync /data/out/b.txt success=1;"
                               "beforeSync /data/out/c.txt;afterSync /data/out/c.txt success=1;");
    char logged[4096];
    log_of(res, logged, sizeof logged);
    assert_string_equal(logged, h.log);
    json_t *first = json_array_get(json_object_get(res, "events"), 1);
    assert_string_equal(json_string_value(json_object_get(first, "change")), "modified");
    assert_string_equal(json_string_value(json_object_get(first, "fileType")), "file");
    expect_host(dir, "new a", "new b", "new c");
    json_decref(res);
    remove_tree(dir);
}

static void test_skip(void **state)
{
    (void)state;
    if (!fbt_can_run(true))
        skip();
    char dir[] = "/tmp/fnbox-events.XXXXXX";
    make_tree(dir);
    host h = {.skip = "/data/out/b.txt"};
    json_t *res = call(dir, &h, false);
    assert_non_null(strstr(h.log, "beforeSync /data/out/b.txt;beforeSync /data/out/c.txt;"));
    json_t *sk = json_array_get(json_object_get(json_object_get(res, "sync"), "skipped"), 0);
    assert_string_equal(json_string_value(json_object_get(sk, "path")), "/data/out/b.txt");
    assert_string_equal(json_string_value(json_object_get(sk, "reason")), "skipped by beforeSync");
    expect_host(dir, "new a", NULL, "new c");
    json_decref(res);
    remove_tree(dir);
}

static void test_abort(void **state)
{
    (void)state;
    if (!fbt_can_run(true))
        skip();
    char dir[] = "/tmp/fnbox-events.XXXXXX";
    make_tree(dir);
    host h = {.abort_at = "/data/out/b.txt"};
    json_t *res = call(dir, &h, true);
    assert_non_null(strstr(h.log, "afterSync /data/out/a.txt success=1;beforeSync /data/out/b.txt;"));
    assert_null(strstr(h.log, "/data/out/c.txt"));
    assert_true(json_is_true(json_object_get(json_object_get(res, "sync"), "rolledBack")));
    expect_host(dir, "old a", NULL, NULL);
    json_decref(res);
    remove_tree(dir);

    /* without sync_allow_abort, ABORT only skips that change */
    char dir2[] = "/tmp/fnbox-events.XXXXXX";
    make_tree(dir2);
    host h2 = {.abort_at = "/data/out/b.txt"};
    res = call(dir2, &h2, false);
    assert_non_null(strstr(h2.log, "afterSync /data/out/c.txt success=1;"));
    expect_host(dir2, "new a", NULL, "new c");
    json_decref(res);
    remove_tree(dir2);
}

static void test_sync_error(void **state)
{
    (void)state;
    if (!fbt_can_run(true))
        skip();
    char dir[] = "/tmp/fnbox-events.XXXXXX";
    make_tree(dir);
    host h = {.clash = "/data/out/c.txt"};
    json_t *res = call(dir, &h, false);
    assert_non_null(strstr(h.log, "beforeSync /data/out/c.txt;afterSync /data/out/c.txt success=0;"
                                  "syncError /data/out/c.txt;"));
    json_t *events = json_object_get(res, "events"), *e;
    size_t i;
    bool found = false;
    json_array_foreach(events, i, e) {
        if (strcmp(json_string_value(json_object_get(e, "type")), "syncError") == 0) {
            assert_non_null(json_string_value(json_object_get(e, "error")));
            found = true;
        }
    }
    assert_true(found);
    /* onError rollback (the default): a and b undone, the host's own c kept */
    char text[64];
    bool exists;
    fbt_read_file(dir, "out/a.txt", text, sizeof text, &exists);
    assert_string_equal(text, "old a");
    fbt_read_file(dir, "out/b.txt", text, sizeof text, &exists);
    assert_false(exists);
    fbt_read_file(dir, "out/c.txt", text, sizeof text, &exists);
    assert_string_equal(text, "host's own");
    json_decref(res);
    remove_tree(dir);
}

static void test_trimmed_reporting(void **state)
{
    (void)state;
    if (!fbt_can_run(true))
        skip();
    char dir[] = "/tmp/fnbox-events.XXXXXX";
    make_tree(dir);
    host h = {0};
    json_t *res = call_with(dir, &h, false, ",\"resultOptions\":{\"includeChanges\":false,\"includeDenied\":false}");
    /* the seed leaves files undefined: no key at all, not an empty summary */
    assert_null(json_object_get(res, "files"));
    /* the sync ran on the full change list: its report and the host say so */
    json_t *synced = json_object_get(json_object_get(res, "sync"), "synced");
    assert_int_equal(json_array_size(synced), 3);
    expect_host(dir, "new a", "new b", "new c");
    /* the result logs no permissionDenied; the host's callback still heard it, first */
    char logged[4096];
    log_of(res, logged, sizeof logged);
    assert_null(strstr(logged, "permissionDenied"));
    assert_int_equal(strncmp(h.log, "permissionDenied /data/top.txt;", 31), 0);
    assert_string_equal(h.log + 31, logged);
    json_decref(res);
    remove_tree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order),
        cmocka_unit_test(test_skip),
        cmocka_unit_test(test_abort),
        cmocka_unit_test(test_sync_error),
        cmocka_unit_test(test_trimmed_reporting),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
