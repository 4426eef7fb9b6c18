/* The files stage (fs/workspace.h) on plain structs, without a sandbox:
 *   placement: each request file goes into a mount's view (not staged), or is staged for the sandbox in a
 *     scratch area (workdir, /tmp, /dev/shm, the root), or is refused naming the entry: a reserved path
 *     (the layout given, as the sandbox would), a mount's root, the place of the workdir, /tmp or a mount
 *     point (or one of their parents);
 *   collect: a request file the function left alone is no change, a new file in the scratch area is;
 *   sync: a batch sync writes the change to the host and logs beforeSync / afterSync in order; the host's
 *     callback hears them, and its SKIP keeps the change off the host. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
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

#include "request/mount.h"
#include "fs/overlay.h"
#include "fs/workspace.h"

static char g_top[64];                   /* per test: a fresh temp dir */
static char g_host[128], g_scratch[128]; /* <top>/host (mounted at /data), <top>/scratch (seen as /workspace) */

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(p);
}

static int setup(void **state)
{
    (void)state;
    snprintf(g_top, sizeof g_top, "/tmp/fnbox-ws-test.XXXXXX");
    if (!mkdtemp(g_top))
        return -1;
    snprintf(g_host, sizeof g_host, "%s/host", g_top);
    snprintf(g_scratch, sizeof g_scratch, "%s/scratch", g_top);
    return mkdir(g_host, 0755) < 0 || mkdir(g_scratch, 0755) < 0 ? -1 : 0;
}

static int teardown(void **state)
{
    (void)state;
    return nftw(g_top, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---- a layout like the sandbox's ---- */

static const char *const k_reserved[] = {"/usr", "/etc", "/proc", "/dev", "/.fnbox"};

static bool at_or_under(const char *path, const char *root)
{
    size_t n = strlen(root);
    return strncmp(path, root, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static bool reserved(const char *path)
{
    if (at_or_under(path, "/dev/shm"))
        return false;
    for (size_t i = 0; i < sizeof k_reserved / sizeof *k_reserved; i++)
        if (at_or_under(path, k_reserved[i]))
            return true;
    return false;
}

static fb_mount_config *load_mount(const char *vpath, const char *extra)
{
    char text[1024];
    snprintf(text, sizeof text, "{\"dirs\": {\"%s\": \"%s\"}%s}", vpath, g_host, extra ? extra : "");
    json_error_t jerr;
    json_t *j = json_loads(text, 0, &jerr);
    if (!j)
        fail_msg("test JSON: %s: %s", jerr.text, text);
    fb_mount_config *m = calloc(1, sizeof *m);
    assert_non_null(m);
    fb_error err = {0};
    if (fb_mount_config_parse(j, "mount", m, &err) < 0)
        fail_msg("mount: %s", err.message);
    json_decref(j);
    return m;
}

static void free_mount(fb_mount_config *m)
{
    if (m)
        fb_mount_config_free(m);
    free(m);
}

/* One request file (name = path), data borrowed from a static string. */
static fb_ws_file file_at(const char *path, const char *data)
{
    return (fb_ws_file){.name = (char *)path, .path = (char *)path, .data = (unsigned char *)data,
                        .len = strlen(data)};
}

static fb_workspace_config config(const fb_ws_files *files, const fb_mount_config *m)
{
    return (fb_workspace_config){.workdir = "/workspace", .mount = m, .files = files, .view_bytes = 1 << 20,
                                 .track_max_entries = 1000, .with_content = true, .log_denied = true,
                                 .layout = {.reserved = reserved, .reserved_roots = k_reserved,
                                            .nreserved_roots = sizeof k_reserved / sizeof *k_reserved}};
}

/* ---- placement ---- */

typedef struct place_case {
    const char *path;
    const char *mount;     /* mount point of the host dir; NULL: none */
    const char *error;     /* NULL: placed; else the InvalidRequest message starts with this */
    bool staged;           /* placed: staged for the sandbox (else: in the mount's view) */
} place_case;

static const place_case place_cases[] = {
    {"/workspace/a.txt", NULL, NULL, true},
    {"/workspace/deep/er/b", NULL, NULL, true},
    {"/tmp/x", NULL, NULL, true},
    {"/dev/shm/x", NULL, NULL, true},
    {"/database/x.txt", NULL, NULL, true},
    {"/usr/lib/x", NULL, "files[\"/usr/lib/x\"]: /usr/lib/x is in a read-only system directory", false},
    {"/etc/passwd", NULL, "files[\"/etc/passwd\"]: /etc/passwd is in a read-only system directory", false},
    {"/dev/null", NULL, "files[\"/dev/null\"]: /dev/null is in a read-only", false},
    {"/tmp", NULL, "files[\"/tmp\"]: /tmp would stand where the directory /tmp must be", false},
    {"/workspace", NULL, "files[\"/workspace\"]: /workspace would stand where the directory /workspace", false},
    {"/data/f.txt", "/data", NULL, false},
    {"/data", "/data", "files[\"/data\"]: is a mount's root directory", false},
    {"/database/x", "/data", NULL, true},
    {"/mnt", "/mnt/data", "files[\"/mnt\"]: /mnt would stand where the directory /mnt/data must be", false},
    {"/workspace/in/f", "/workspace/in", NULL, false},
};

static void test_placement(void **state)
{
    (void)state;
    for (size_t c = 0; c < sizeof place_cases / sizeof *place_cases; c++) {
        const place_case *pc = &place_cases[c];
        fb_mount_config *m = pc->mount ? load_mount(pc->mount, NULL) : NULL;
        fb_ws_file f = file_at(pc->path, "data");
        fb_ws_files files = {.v = &f, .n = 1};
        fb_workspace_config cfg = config(&files, m);
        fb_workspace ws;
        fb_error err = {0};
        int rc = fb_workspace_prepare(&ws, &cfg, &err);
        if (pc->error) {
            if (rc == 0 || err.kind != FB_ERR_INVALID_REQUEST || strncmp(err.message, pc->error, strlen(pc->error)))
                fail_msg("[%s] rc %d '%s', expected '%s...'", pc->path, rc, err.message, pc->error);
        } else {
            if (rc < 0)
                fail_msg("[%s] %s", pc->path, err.message);
            assert_int_equal(ws.nstaged, pc->staged ? 1 : 0);
            if (pc->staged)
                assert_ptr_equal(ws.staged[0].data, f.data);
            else /* in the view, at its path relative to the mount */
                assert_non_null(ov_find(fb_mountfs_upper(ws.fs[0]), pc->path + strlen(pc->mount) + 1));
        }
        fb_workspace_free(&ws);
        free_mount(m);
    }
}

/* ---- collect ---- */

static void write_file(const char *dir, const char *name, const char *data)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *fp = fopen(p, "w");
    assert_non_null(fp);
    fputs(data, fp);
    fclose(fp);
}

static void test_collect_scratch(void **state)
{
    (void)state;
    fb_ws_file f = file_at("/workspace/in.txt", "given");
    fb_ws_files files = {.v = &f, .n = 1};
    fb_workspace_config cfg = config(&files, NULL);
    fb_workspace ws;
    fb_error err = {0};
    assert_int_equal(fb_workspace_prepare(&ws, &cfg, &err), 0);
    write_file(g_scratch, "in.txt", "given"); /* as the sandbox wrote it */
    write_file(g_scratch, "out.txt", "made");  /* what the function made */
    int fd = open(g_scratch, O_PATH | O_DIRECTORY | O_CLOEXEC);
    assert_true(fd >= 0);
    const char *paths[] = {"/workspace"};
    assert_int_equal(fb_workspace_collect(&ws, &fd, paths, 1, &err), 0);
    close(fd);
    assert_int_equal(ws.changes.n, 1);
    assert_string_equal(ws.changes.v[0].path, "/workspace/out.txt");
    assert_int_equal(ws.changes.v[0].kind, FB_CHANGE_CREATED);
    assert_int_equal(ws.events.n, 0);
    fb_workspace_free(&ws);
}

/* ---- sync and its events ---- */

typedef struct heard {
    char log[512];
    fb_sync_decision answer;
} heard;

static fb_sync_decision on_event(void *ctx, const fb_ws_event *ev)
{
    heard *h = ctx;
    size_t n = strlen(h->log);
    snprintf(h->log + n, sizeof h->log - n, "%s %s;", ev->type, ev->path);
    return strcmp(ev->type, "beforeSync") == 0 ? h->answer : FB_SYNC_GO;
}

static void sync_once(fb_sync_decision answer, const char *want_heard, size_t want_logged, bool want_on_host)
{
    fb_mount_config *m = load_mount("/data", ", \"permissions\": {\"default\": {\"read\": true, \"list\": true, "
                                             "\"create\": true, \"modify\": true}}, \"sync\": {\"mode\": \"batch\"}");
    fb_ws_file f = file_at("/data/new.txt", "req");
    fb_ws_files files = {.v = &f, .n = 1};
    fb_workspace_config cfg = config(&files, m);
    fb_workspace ws;
    fb_error err = {0};
    assert_int_equal(fb_workspace_prepare(&ws, &cfg, &err), 0);
    heard h = {.answer = answer};
    fb_workspace_set_events(&ws, on_event, &h);
    /* the function rewrites the request file (the test stands in for the view's server thread) */
    ov_store *ov = (ov_store *)fb_mountfs_upper(ws.fs[0]);
    assert_int_equal(ov_set_data(ov, ov_find(ov, "new.txt"), "REQ!", 4), 0);
    assert_int_equal(fb_workspace_collect(&ws, NULL, NULL, 0, &err), 0);
    assert_int_equal(ws.changes.n, 1);
    assert_int_equal(fb_workspace_sync(&ws, true, &err), 0);
    assert_true(ws.synced);
    assert_string_equal(h.log, want_heard);
    assert_int_equal(ws.events.n, want_logged);
    assert_string_equal(ws.events.v[0].type, "beforeSync");
    assert_string_equal(ws.events.v[0].path, "/data/new.txt");
    char p[256];
    snprintf(p, sizeof p, "%s/new.txt", g_host);
    assert_int_equal(access(p, F_OK) == 0, want_on_host);
    fb_workspace_free(&ws);
    free_mount(m);
    unlink(p);
}

static void test_sync_events(void **state)
{
    (void)state;
    sync_once(FB_SYNC_GO, "beforeSync /data/new.txt;afterSync /data/new.txt;", 2, true);
    sync_once(FB_SYNC_SKIP, "beforeSync /data/new.txt;", 1, false);
}

/* A call that failed syncs nothing by default: no report, no event. */
static void test_no_sync_after_failure(void **state)
{
    (void)state;
    fb_mount_config *m = load_mount("/data", ", \"sync\": {\"mode\": \"batch\"}");
    fb_workspace_config cfg = config(NULL, m);
    fb_workspace ws;
    fb_error err = {0};
    assert_int_equal(fb_workspace_prepare(&ws, &cfg, &err), 0);
    assert_int_equal(fb_workspace_collect(&ws, NULL, NULL, 0, &err), 0);
    assert_int_equal(fb_workspace_sync(&ws, false, &err), 0);
    assert_false(ws.synced);
    assert_int_equal(ws.events.n, 0);
    fb_workspace_free(&ws);
    free_mount(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_placement, setup, teardown),
        cmocka_unit_test_setup_teardown(test_collect_scratch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sync_events, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_sync_after_failure, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
