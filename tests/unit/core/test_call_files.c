/* The files stage as one call runs it (core/call_files.h around fs/workspace.h), without the sandbox, in
 * core/executor.c's order: fb_request_parse -> fb_request_files_decode -> fb_call_files_prepare ->
 * fb_call_files_events -> fb_call_files_attach (what core/launch.c hands the sandbox) -> [the sandbox] ->
 * fb_workspace_collect -> fb_workspace_sync -> fb_result_add_files. Requests are parsed for real; the
 * sandbox's part is played here: it writes the staged files into the scratch areas, which are temp
 * directories, builds the root area, and the function's changes are made in those directories and in the
 * mount's view (its in-memory upper layer, as the mount's server would). A mount is a temp host directory.
 *   staging: the request's `files` reach the sandbox spec (text and base64, relative to the workdir or
 *            absolute anywhere but the read-only system directories of the real layout) or a mount's view
 *            (also through a workdir inside the mount); a table of refused entries with the message each
 *            must give at call level (what tests/unit/core/test_request_files.c and
 *            tests/unit/fs/test_workspace.c check on their own are not repeated); the caps on names,
 *            entries and bytes (the request's limits.workspaceBytes);
 *   attach:  what the sandbox spec is told (user files, FUSE mounts and who serves them, keep_scratch);
 *   collect: what the function changed (a request file left alone is no change, in a scratch area or a
 *            mount; the root's system entries, /tmp, the workdir and the mount points are set-up, not
 *            changes; a reserved area and a mount point are not walked);
 *   report:  `files` per includeChanges / includeContents / includeDenied, sorted across areas, text and
 *            binary contents, rendered by fb_result_add_files into an fb_result;
 *   sync:    batch mode writes the mount's changes to the host (nothing outside mounts), only after a
 *            successful call unless onFunctionError is "sync", never in manual mode or without a sync
 *            section; beforeSync / afterSync in the result's `events` and through the host's callback
 *            (fnbox_call_options.event via fb_call_files_events), which can skip a change. */
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

#include "core/call_files.h"
#include "core/launch.h"
#include "request/limits.h"
#include "request/files.h"
#include "core/result.h"
#include "core/result_files.h"
#include "fs/overlay.h"

static char g_top[64];                                   /* per test: a fresh temp dir */
static char g_host[128];                                 /* the mount's host dir ("HOST" in requests) */
static char g_work[128], g_tmp[128], g_shm[128], g_root[128]; /* the scratch areas: workdir, /tmp, /dev/shm, / */

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(p);
}

static int setup(void **state)
{
    (void)state;
    snprintf(g_top, sizeof g_top, "/tmp/fnbox-call-files-test.XXXXXX");
    if (!mkdtemp(g_top))
        return -1;
    snprintf(g_host, sizeof g_host, "%s/host", g_top);
    snprintf(g_work, sizeof g_work, "%s/workdir", g_top);
    snprintf(g_tmp, sizeof g_tmp, "%s/tmp", g_top);
    snprintf(g_shm, sizeof g_shm, "%s/shm", g_top);
    snprintf(g_root, sizeof g_root, "%s/root", g_top);
    umask(022);
    const char *dirs[] = {g_host, g_work, g_tmp, g_shm, g_root};
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++)
        if (mkdir(dirs[i], 0755) < 0)
            return -1;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return nftw(g_top, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---- one call's files, stage by stage ---- */

typedef struct call {
    fb_request req;
    bool parsed;
    fb_sandbox_limits lim;
    fb_ws_files files;
    fb_workspace ws;
    fb_sandbox_spec spec;
    fb_sandbox_file *staged;                        /* spec.user_files (the caller's to free) */
    int scratch_fd[FB_SANDBOX_MAX_SCRATCH];         /* what the sandbox hands out with keep_scratch */
    const char *scratch_path[FB_SANDBOX_MAX_SCRATCH];
    size_t nscratch;
    fb_result res;
} call;

/* A request around extra (JSON members after the code, ' for "; "HOST" is the mount's host dir). */
static void parse(call *c, const char *extra)
{
    size_t hosts = 0;
    for (const char *h = strstr(extra, "HOST"); h; h = strstr(h + 4, "HOST"))
        hosts++;
    size_t cap = strlen(extra) + 256, o = 0;
    char *text = malloc(cap), *out = malloc(cap + strlen(g_host) * hosts);
    assert_non_null(text);
    assert_non_null(out);
    snprintf(text, cap, "{'language': 'python', 'code': 'def f():\\n    return 1'%s%s}", *extra ? ", " : "", extra);
    for (const char *p = text; *p; p++) { /* ' -> ", HOST -> the host dir */
        if (strncmp(p, "HOST", 4) == 0) {
            o += (size_t)sprintf(out + o, "%s", g_host);
            p += 3;
        } else {
            out[o++] = *p == '\'' ? '"' : *p;
        }
    }
    out[o] = '\0';
    fb_error err = {0};
    if (fb_request_parse(out, o, &c->req, &err) < 0)
        fail_msg("request refused: %s", err.message);
    c->parsed = true;
    free(out);
    free(text);
}

/* The steps before the sandbox runs, as the executor and fb_launch_run take them: decode, prepare, the
 * host's event callback (opts; NULL: none), attach. -1 with err at the first that fails. */
static int start(call *c, const char *extra, const fnbox_call_options *opts, fb_error *err)
{
    memset(c, 0, sizeof *c);
    parse(c, extra);
    fb_launch_limits(&c->req, &c->lim);
    if (fb_request_files_decode(c->req.files, c->req.workdir, c->lim.workspace_bytes, &c->files, err) < 0 ||
        fb_call_files_prepare(&c->ws, &c->req, &c->files, false, &c->lim, err) < 0)
        return -1;
    static const fnbox_call_options k_none = {.size = sizeof k_none, .cancel_fd = -1}; /* the executor's default */
    fb_call_files_events(&c->ws, opts ? opts : &k_none);
    if (!opts && c->ws.on_event)
        fail_msg("no event callback, yet the stage has one");
    c->spec.workdir = c->req.workdir;
    return fb_call_files_attach(&c->ws, c->req.reporting.include_changes, &c->spec, &c->staged, err);
}

static void start_ok(call *c, const char *extra, const fnbox_call_options *opts)
{
    fb_error err = {0};
    if (start(c, extra, opts, &err) < 0)
        fail_msg("%s: %s", extra, err.message);
}

static void finish(call *c)
{
    for (size_t i = 0; i < c->nscratch; i++)
        close(c->scratch_fd[i]);
    fb_result_free(&c->res);
    free(c->staged);
    fb_workspace_free(&c->ws);
    fb_request_files_free(&c->files);
    if (c->parsed)
        fb_request_free(&c->req);
    memset(c, 0, sizeof *c);
}

/* The temp dir standing for a scratch area the sandbox names. */
static const char *area_dir(const char *area)
{
    if (strcmp(area, "/tmp") == 0)
        return g_tmp;
    if (strcmp(area, "/dev/shm") == 0)
        return g_shm;
    return strcmp(area, "/") == 0 ? g_root : g_work;
}

/* dir/rel, with the missing parents made. */
static void mkdirs(const char *dir, const char *rel)
{
    char p[4200];
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    for (char *s = p + strlen(dir) + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        if (mkdir(p, 0755) < 0 && errno != EEXIST)
            fail_msg("mkdir %s: %s", p, strerror(errno));
        *s = '/';
    }
    if (mkdir(p, 0755) < 0 && errno != EEXIST)
        fail_msg("mkdir %s: %s", p, strerror(errno));
}

static void put_n(const char *dir, const char *rel, const char *data, size_t len)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    FILE *f = fopen(p, "w");
    if (!f) {
        fail_msg("%s: %s", p, strerror(errno));
        return;
    }
    assert_int_equal(fwrite(data, 1, len, f), len);
    fclose(f);
}

static void put(const char *dir, const char *rel, const char *text)
{
    put_n(dir, rel, text, strlen(text));
}

/* Which scratch area a sandbox path lies in (the longest of fb_sandbox_scratch_areas that holds it), and
 * the path relative to it. */
static const char *area_of(const call *c, const char *path, const char **rel)
{
    const char *areas[FB_SANDBOX_MAX_SCRATCH];
    size_t n = fb_sandbox_scratch_areas(&c->spec, areas), best = 0, best_len = 0;
    bool found = false;
    for (size_t i = 0; i < n; i++) {
        size_t l = strcmp(areas[i], "/") == 0 ? 0 : strlen(areas[i]);
        if (strncmp(path, areas[i], l) == 0 && path[l] == '/' && (!found || l > best_len)) {
            best = i, best_len = l, found = true;
        }
    }
    assert_true(found);
    *rel = path + best_len + 1;
    return areas[best];
}

/* The sandbox's part before the program starts: the root area (its reserved entries, /tmp, the workdir
 * and the mount points, all directories), then the request's files as the spec lists them. */
static void sandbox_places(const call *c)
{
    const char *const *reserved;
    size_t n = fb_sandbox_reserved_roots(&reserved);
    for (size_t i = 0; i < n; i++)
        mkdirs(g_root, reserved[i] + 1);
    mkdirs(g_root, "tmp");
    mkdirs(g_root, "dev/shm");
    mkdirs(g_root, c->req.workdir + 1);
    for (size_t i = 0; i < c->spec.nfuse; i++)
        mkdirs(g_root, c->spec.fuse_paths[i] + 1);
    for (size_t i = 0; i < c->spec.nuser_files; i++) {
        const fb_sandbox_file *f = &c->spec.user_files[i];
        const char *rel;
        const char *dir = area_dir(area_of(c, f->path, &rel));
        const char *slash = strrchr(rel, '/');
        if (slash) {
            char parent[512];
            snprintf(parent, sizeof parent, "%.*s", (int)(slash - rel), rel);
            mkdirs(dir, parent);
        }
        put_n(dir, rel, f->data, f->len);
    }
}

/* The sandbox's part after the program: every process gone, the scratch roots handed out (only with
 * keep_scratch), then collect as the executor calls it. */
static void collect(call *c)
{
    c->nscratch = 0;
    if (c->spec.keep_scratch) {
        c->nscratch = fb_sandbox_scratch_areas(&c->spec, c->scratch_path);
        for (size_t i = 0; i < c->nscratch; i++) {
            c->scratch_fd[i] = open(area_dir(c->scratch_path[i]), O_PATH | O_DIRECTORY | O_CLOEXEC);
            assert_true(c->scratch_fd[i] >= 0);
        }
    }
    fb_error err = {0};
    if (fb_workspace_collect(&c->ws, c->scratch_fd, c->scratch_path, c->nscratch, &err) < 0)
        fail_msg("collect: %s", err.message);
}

/* Sync for a call that succeeded or not, then the result's file sections. */
static json_t *sync_and_report(call *c, bool call_ok)
{
    fb_error err = {0};
    if (fb_workspace_sync(&c->ws, call_ok, &err) < 0)
        fail_msg("sync: %s", err.message);
    c->res.obj = json_object();
    assert_non_null(c->res.obj);
    if (fb_result_add_files(&c->res, &c->ws, &c->req.reporting, &err) < 0)
        fail_msg("report: %s", err.message);
    return c->res.obj;
}

/* The function writes rel in the mount's view (what the mount's server does for it); data NULL deletes. */
/* The function changes rel in the mount's view, as the FUSE server would: the host entry there (if any) is
 * first noted as the change's base. */
static void view_put(call *c, const char *rel, const char *data)
{
    fb_mountfs_rebase(c->ws.fs[0], rel);
    ov_store *ov = (ov_store *)fb_mountfs_upper(c->ws.fs[0]);
    ov_entry *e = ov_put(ov, rel, data ? OV_FILE : OV_WHITEOUT, data ? 0644 : 0);
    assert_non_null(e);
    if (data)
        assert_int_equal(ov_set_data(ov, e, data, strlen(data)), 0);
}

/* Whether the mount's host dir has rel (with the content want, unless NULL). */
static bool host_has(const char *rel, const char *want)
{
    char p[512], buf[256] = "";
    snprintf(p, sizeof p, "%s/%s", g_host, rel);
    FILE *f = fopen(p, "r");
    if (!f)
        return false;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return !want || strcmp(buf, want) == 0;
}

static const fb_sandbox_file *user_file(const call *c, const char *path)
{
    for (size_t i = 0; i < c->spec.nuser_files; i++)
        if (strcmp(c->spec.user_files[i].path, path) == 0)
            return &c->spec.user_files[i];
    return NULL;
}

/* ---- staging and attach ---- */

static void test_staging(void **state)
{
    (void)state;
    call c;
    start_ok(&c,
             "'files': {'input.txt': 'text', 'sub/dir/x.csv': '', '/tmp/blob.bin': {'base64': 'AAEC/w=='}, "
             "'/dev/shm/s': 's', '/custom/path/file.txt': 'anywhere else', '/data/in.txt': 'into the mount'}, "
             "'mount': {'dirs': {'/data': 'HOST'}}, 'workdir': '/work'",
             NULL);
    /* the sandbox is told to write five files; the mount's one is in its view, not a sandbox file */
    assert_int_equal(c.spec.nuser_files, 5);
    assert_ptr_equal(c.spec.user_files, c.staged);
    const fb_sandbox_file *f = user_file(&c, "/work/input.txt");
    assert_non_null(f);
    assert_int_equal(f->len, 4);
    assert_memory_equal(f->data, "text", 4);
    assert_false(f->executable);
    assert_non_null(f = user_file(&c, "/work/sub/dir/x.csv"));
    assert_int_equal(f->len, 0);
    assert_non_null(f = user_file(&c, "/tmp/blob.bin"));
    assert_int_equal(f->len, 4);
    assert_memory_equal(f->data, "\x00\x01\x02\xff", 4);
    assert_non_null(f = user_file(&c, "/dev/shm/s"));
    assert_memory_equal(f->data, "s", 1);
    assert_non_null(f = user_file(&c, "/custom/path/file.txt"));
    assert_int_equal(f->len, 13);
    assert_memory_equal(f->data, "anywhere else", 13);
    assert_null(user_file(&c, "/data/in.txt"));
    const ov_entry *e = ov_find(fb_mountfs_upper(c.ws.fs[0]), "in.txt");
    assert_non_null(e);
    assert_int_equal(e->len, 14);
    assert_memory_equal(e->data, "into the mount", 14);
    /* the FUSE mounts and who serves them */
    assert_int_equal(c.spec.nfuse, 1);
    assert_string_equal(c.spec.fuse_paths[0], "/data");
    assert_ptr_equal(c.spec.on_fuse, fb_workspace_serve_mount);
    assert_ptr_equal(c.spec.fuse_ctx, &c.ws);
    assert_true(c.spec.keep_scratch); /* includeChanges defaults to true */
    finish(&c);

    /* without includeChanges the scratch areas are not kept; no files, no mounts: nothing to place */
    start_ok(&c, "'resultOptions': {'includeChanges': false}", NULL);
    assert_false(c.spec.keep_scratch);
    assert_int_equal(c.spec.nuser_files, 0);
    assert_null(c.staged);
    assert_int_equal(c.spec.nfuse, 0);
    finish(&c);
}

/* A workdir inside a mount: relative files go into the mount's view, and the workdir is no scratch area. */
static void test_workdir_in_mount(void **state)
{
    (void)state;
    call c;
    start_ok(&c, "'files': {'rel.txt': 'r'}, 'mount': {'dirs': {'/data': 'HOST'}}, 'workdir': '/data/sub'", NULL);
    assert_int_equal(c.spec.nuser_files, 0);
    assert_int_equal(c.spec.nfuse, 1);
    assert_non_null(ov_find(fb_mountfs_upper(c.ws.fs[0]), "sub/rel.txt"));
    const char *areas[FB_SANDBOX_MAX_SCRATCH];
    size_t n = fb_sandbox_scratch_areas(&c.spec, areas);
    for (size_t i = 0; i < n; i++)
        assert_string_not_equal(areas[i], "/data/sub");
    finish(&c);
}

typedef struct bad_files_case {
    const char *extra; /* request members */
    const char *error; /* a piece of the InvalidRequest message */
} bad_files_case;

/* Refused at call level, with the sandbox's real layout (fs/test_workspace.c uses one of its own). Rows
 * that test_request_files.c or fs/test_workspace.c hold as they are here are left to them. */
static const bad_files_case k_bad[] = {
    {"'files': {'/': 'x'}", "must be a normalized path"},
    {"'files': {'./a': 'x'}", "must be a normalized path"},
    {"'files': {'a/../b': 'x'}", "must be a normalized path"},
    {"'files': {'a\\u007fb': 'x'}", "control characters are not allowed"},
    {"'files': {'x': null}", "files[\"x\"]: must be a string (text) or {\"base64\": \"...\"} (binary)"},
    {"'files': {'x': {'text': 'a'}}", "must be a string (text)"},
    {"'files': {'x': {'base64': 'A'}}", "files[\"x\"].base64: not valid base64"},
    {"'files': {'x': {'base64': 'AA=A'}}", "not valid base64"},
    {"'files': {'/usr': 'x'}", "files[\"/usr\"]: /usr is in a read-only system directory"},
    {"'files': {'/usr/lib/x': 'x'}", "read-only system directory"},
    {"'files': {'/etc/passwd': 'x'}", "read-only system directory"},
    {"'files': {'/proc/self/x': 'x'}", "read-only system directory"},
    {"'files': {'/dev/null': 'x'}", "read-only system directory"},
    {"'files': {'/.fnbox/harness.py': 'x'}", "read-only system directory"},
    {"'files': {'/bin/sh': 'x'}", "read-only system directory"},
    {"'files': {'/lib/x.so': 'x'}", "read-only system directory"},
    {"'files': {'/dev/shm': 'x'}", "/dev/shm would stand where the directory /dev/shm must be"},
    {"'files': {'/dev': 'x'}", "read-only system directory"},
    {"'files': {'/work': 'x'}, 'workdir': '/work/inner'", "where the directory /work/inner must be"},
    {"'files': {'/srv/data': 'x'}, 'mount': {'dirs': {'/srv/data/x': 'HOST'}}",
     "where the directory /srv/data/x must be"},
};

static void test_bad_files(void **state)
{
    (void)state;
    int failed = 0;
    for (size_t i = 0; i < sizeof k_bad / sizeof k_bad[0]; i++) {
        call c;
        fb_error err = {0};
        int rc = start(&c, k_bad[i].extra, NULL, &err);
        if (rc == 0 || strcmp(fb_error_type(&err), "InvalidRequest") != 0 || !strstr(err.message, k_bad[i].error)) {
            print_message("# FAIL %s: %s %s, expected InvalidRequest with '%s'\n", k_bad[i].extra,
                          rc == 0 ? "accepted" : fb_error_type(&err), rc == 0 ? "" : err.message, k_bad[i].error);
            failed++;
        }
        finish(&c); /* also after a failed step */
    }
    assert_int_equal(failed, 0);
}

/* Names: 255 bytes per part, 4095 in all; entries: FB_MAX_REQUEST_FILES; bytes: the request's
 * limits.workspaceBytes, all files together, mount files included. */
static void test_file_limits(void **state)
{
    (void)state;
    call c;
    fb_error err = {0};
    char name[300], extra[5000];
    memset(name, 'n', 256);
    name[256] = '\0';
    snprintf(extra, sizeof extra, "'files': {'%s': 'x'}", name);
    assert_int_equal(start(&c, extra, NULL, &err), -1);
    assert_non_null(strstr(err.message, "a path part is longer than 255 bytes"));
    finish(&c);
    name[255] = '\0';
    snprintf(extra, sizeof extra, "'files': {'%s': 'x'}", name);
    start_ok(&c, extra, NULL);
    assert_int_equal(c.spec.nuser_files, 1);
    finish(&c);

    char deep[4300];
    size_t n = 0;
    while (n < 4200) {
        memcpy(deep + n, "abcdefghi/", 10);
        n += 10;
    }
    deep[n] = 'z';
    deep[n + 1] = '\0';
    snprintf(extra, sizeof extra, "'files': {'%s': 'x'}", deep);
    assert_int_equal(start(&c, extra, NULL, &err), -1);
    assert_non_null(strstr(err.message, "path longer than 4095 bytes"));
    finish(&c);

    /* 4096 is the smallest workspaceBytes a request may give */
    char big[4200];
    memset(big, 'b', 4096);
    big[4096] = '\0';
    snprintf(extra, sizeof extra, "'files': {'a': '%.4000s', '/data/b': '%s'}, 'limits': {'workspaceBytes': 4096}, "
                                  "'mount': {'dirs': {'/data': 'HOST'}}", big, big + 4000);
    start_ok(&c, extra, NULL);
    finish(&c);
    snprintf(extra, sizeof extra, "'files': {'a': '%.4000s', '/data/b': '%sb'}, 'limits': {'workspaceBytes': 4096}, "
                                  "'mount': {'dirs': {'/data': 'HOST'}}", big, big + 4000);
    assert_int_equal(start(&c, extra, NULL, &err), -1);
    assert_non_null(strstr(err.message, "4097 bytes in all is more than the workspace limit of 4096 bytes"));
    finish(&c);

    size_t cap = (size_t)(FB_MAX_REQUEST_FILES + 1) * 16 + 64;
    char *many = malloc(cap);
    assert_non_null(many);
    size_t m = (size_t)snprintf(many, cap, "'files': {");
    for (int i = 0; i <= FB_MAX_REQUEST_FILES; i++)
        m += (size_t)snprintf(many + m, cap - m, "%s'f%d': ''", i ? ", " : "", i);
    snprintf(many + m, cap - m, "}");
    assert_int_equal(start(&c, many, NULL, &err), -1);
    assert_non_null(strstr(err.message, "10001 entries is more than the maximum of 10000"));
    finish(&c);
    m = (size_t)snprintf(many, cap, "'files': {");
    for (int i = 0; i < FB_MAX_REQUEST_FILES; i++)
        m += (size_t)snprintf(many + m, cap - m, "%s'f%d': ''", i ? ", " : "", i);
    snprintf(many + m, cap - m, "}");
    start_ok(&c, many, NULL);
    assert_int_equal(c.spec.nuser_files, FB_MAX_REQUEST_FILES);
    finish(&c);
    free(many);
}

/* ---- collect and report ---- */

/* "path:type:size=content" of each entry of list, joined by " " ("-" for no content, "b64:..." for
 * binary). */
static void list_text(const json_t *list, char *out, size_t cap)
{
    size_t n = 0;
    out[0] = '\0';
    assert_true(json_is_array(list));
    for (size_t i = 0; i < json_array_size(list); i++) {
        const json_t *e = json_array_get(list, i);
        const json_t *c = json_object_get(e, "content");
        const char *ct = json_is_string(c) ? json_string_value(c) : NULL;
        const char *b64 = json_string_value(json_object_get(c, "base64"));
        n += (size_t)snprintf(out + n, cap - n, "%s%s:%s:%lld=%s%s", i ? " " : "",
                              json_string_value(json_object_get(e, "path")),
                              json_string_value(json_object_get(e, "type")),
                              (long long)json_integer_value(json_object_get(e, "size")), b64 ? "b64:" : "",
                              ct ? ct : b64 ? b64 : "-");
        assert_true(n < cap);
    }
}

static void test_collect_and_report(void **state)
{
    (void)state;
    call c;
    start_ok(&c,
             "'files': {'a.txt': 'alpha', 'keep.txt': 'same', '/tmp/t.txt': 'tmp', '/opt/o.txt': 'o', "
             "'/data/in.txt': 'given'}, 'mount': {'dirs': {'/data': 'HOST'}}",
             NULL);
    sandbox_places(&c);
    /* the function changes some */
    put(g_work, "a.txt", "ALPHA!");
    put(g_work, "new.txt", "created");
    mkdirs(g_work, "d");
    put(g_work, "d/bin", "\xff\xfe");
    char p[256];
    snprintf(p, sizeof p, "%s/t.txt", g_tmp);
    assert_int_equal(unlink(p), 0);
    put(g_shm, "s.txt", "shm");
    mkdirs(g_root, "database");
    put(g_root, "database/x.txt", "db");
    put(g_root, "etc/ignored", "a reserved area is not walked");
    put(g_root, "data/ignored", "a mount point is not walked");
    view_put(&c, "m.txt", "in the mount");
    collect(&c);
    json_t *result = sync_and_report(&c, true);
    json_t *files = json_object_get(result, "files");
    char text[2048];
    list_text(json_object_get(files, "created"), text, sizeof text);
    assert_string_equal(text, "/data/m.txt:file:12=in the mount /database:directory:0=- /database/x.txt:file:2=db "
                              "/dev/shm/s.txt:file:3=shm /workspace/d:directory:0=- /workspace/d/bin:file:2=b64://4= "
                              "/workspace/new.txt:file:7=created");
    list_text(json_object_get(files, "modified"), text, sizeof text);
    assert_string_equal(text, "/workspace/a.txt:file:6=ALPHA!");
    list_text(json_object_get(files, "deleted"), text, sizeof text);
    assert_string_equal(text, "/tmp/t.txt:file:3=-");
    assert_true(json_is_array(json_object_get(files, "denied")));
    assert_int_equal(json_array_size(json_object_get(files, "denied")), 0);
    assert_null(json_object_get(files, "skipped"));
    assert_null(json_object_get(files, "error"));
    assert_null(json_object_get(result, "sync"));   /* no sync section: nothing synced */
    assert_null(json_object_get(result, "events"));
    finish(&c);
}

/* A call that changed nothing: every set-up entry of the root area and the request files left alone are
 * no change (the lists are there, empty). */
static void test_setup_is_no_change(void **state)
{
    (void)state;
    call c;
    start_ok(&c, "'files': {'in.txt': 'x', '/opt/deep/o.txt': 'o', '/data/in.txt': 'y'}, "
                 "'mount': {'dirs': {'/data': 'HOST', '/mnt/more/m': 'HOST'}}, 'workdir': '/srv/app'",
             NULL);
    sandbox_places(&c);
    collect(&c);
    json_t *files = json_object_get(sync_and_report(&c, true), "files");
    const char *lists[] = {"created", "modified", "deleted"};
    for (size_t i = 0; i < 3; i++) {
        char text[1024];
        list_text(json_object_get(files, lists[i]), text, sizeof text);
        assert_string_equal(text, "");
    }
    finish(&c);
}

/* includeContents / includeDenied false: the lists without contents (also for a mount change whose content a
 * batch sync needed), no `denied`; includeChanges false: no `files` and the scratch areas are not even
 * handed out, yet a batch sync still applies the mount's changes and reports them in `sync`. */
static void test_report_options(void **state)
{
    (void)state;
    const char *const opts[] = {"'resultOptions': {'includeContents': false, 'includeDenied': false}",
                                "'resultOptions': {'includeChanges': false}"};
    for (size_t k = 0; k < 2; k++) {
        char extra[512];
        snprintf(extra, sizeof extra, "%s, 'mount': {'dirs': {'/data': 'HOST'}, 'permissions': {'rules': "
                                      "[{'pattern': '**', 'allow': '*'}]}, 'sync': {'mode': 'batch'}}", opts[k]);
        call c;
        start_ok(&c, extra, NULL);
        sandbox_places(&c);
        put(g_work, "new.txt", "created");
        view_put(&c, "v.txt", "v");
        collect(&c);
        assert_int_equal(c.nscratch, k == 0 ? 4 : 0); /* includeChanges false: the areas are not handed out */
        json_t *result = sync_and_report(&c, true);
        json_t *files = json_object_get(result, "files");
        if (k == 0) {
            char text[256];
            list_text(json_object_get(files, "created"), text, sizeof text);
            assert_string_equal(text, "/data/v.txt:file:1=- /workspace/new.txt:file:7=-");
            assert_null(json_object_get(files, "denied"));
        } else {
            assert_null(files);
        }
        json_t *synced = json_object_get(json_object_get(result, "sync"), "synced");
        assert_int_equal(json_array_size(synced), 1);
        assert_string_equal(json_string_value(json_array_get(synced, 0)), "/data/v.txt");
        assert_true(host_has("v.txt", "v"));
        finish(&c);
        char p[256];
        snprintf(p, sizeof p, "%s/new.txt", g_work);
        assert_int_equal(unlink(p), 0);
        snprintf(p, sizeof p, "%s/v.txt", g_host);
        assert_int_equal(unlink(p), 0);
    }
}

/* ---- sync ---- */

static int g_events;
static char g_event_log[1024];

static int on_event(void *ctx, const fnbox_event *ev)
{
    assert_ptr_equal(ctx, &g_events);
    size_t n = strlen(g_event_log);
    snprintf(g_event_log + n, sizeof g_event_log - n, "%s%s %s", n ? "; " : "", ev->type, ev->path);
    g_events++;
    return strstr(ev->path, "skipme") && strcmp(ev->type, "beforeSync") == 0 ? FNBOX_SYNC_SKIP : FNBOX_SYNC_GO;
}

static void reset_host(void)
{
    char p[512];
    const char *names[] = {"out.txt", "skipme.txt", "old.txt", "gone.txt", "workspace/scratch.txt"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        snprintf(p, sizeof p, "%s/%s", g_host, names[i]);
        unlink(p);
    }
    snprintf(p, sizeof p, "%s/scratch.txt", g_work);
    unlink(p);
    put(g_host, "old.txt", "old text");
    put(g_host, "gone.txt", "doomed");
    g_events = 0;
    g_event_log[0] = '\0';
}

/* One call whose function created, modified and deleted files in the mount and wrote one in the workdir,
 * synced (or not) per the mount's sync section and the call's outcome. Checks the result's `sync` and
 * `events` against what the host's callback heard. */
static void run_sync(const char *sync_section, bool call_ok, bool with_callback)
{
    char extra[512];
    snprintf(extra, sizeof extra,
             "'mount': {'dirs': {'/data': 'HOST'}, 'permissions': {'rules': [{'pattern': '**', 'allow': '*'}]}%s}",
             sync_section);
    fnbox_call_options opts = {.size = sizeof opts, .cancel_fd = -1, .event = on_event, .event_ctx = &g_events};
    call c;
    start_ok(&c, extra, with_callback ? &opts : NULL);
    sandbox_places(&c);
    view_put(&c, "out.txt", "written");
    view_put(&c, "old.txt", "new text");
    view_put(&c, "gone.txt", NULL);
    view_put(&c, "skipme.txt", "no");
    put(g_work, "scratch.txt", "never synced");
    collect(&c);
    assert_int_equal(c.ws.changes.n, 5);
    json_t *result = sync_and_report(&c, call_ok);
    json_t *sync = json_object_get(result, "sync");
    assert_int_equal(sync != NULL, c.ws.synced);
    if (sync) { /* it speaks of the mount's four changes only: the workdir's is no business of sync */
        assert_true(json_is_array(json_object_get(sync, "synced")));
        json_t *details = json_object_get(sync, "details");
        assert_int_equal(json_array_size(details), 4);
        for (size_t i = 0; i < json_array_size(details); i++)
            assert_int_equal(strncmp(json_string_value(json_object_get(json_array_get(details, i), "path")), "/data/", 6),
                             0);
    }
    json_t *events = json_object_get(result, "events");
    if (with_callback) {
        assert_int_equal(json_array_size(events), (size_t)g_events); /* every event logged, and heard */
        for (size_t i = 0; i < json_array_size(events); i++)
            assert_non_null(strstr(g_event_log, json_string_value(json_object_get(json_array_get(events, i), "path"))));
    }
    finish(&c);
}

static void test_sync(void **state)
{
    (void)state;
    /* batch, a successful call: written, the skipped one not, nothing outside the mount */
    reset_host();
    run_sync(", 'sync': {'mode': 'batch'}", true, true);
    assert_true(host_has("out.txt", "written"));
    assert_true(host_has("old.txt", "new text"));
    assert_false(host_has("gone.txt", NULL));
    assert_false(host_has("skipme.txt", NULL));
    assert_false(host_has("workspace/scratch.txt", NULL));
    assert_false(host_has("scratch.txt", NULL));
    assert_non_null(strstr(g_event_log, "beforeSync /data/gone.txt"));
    assert_non_null(strstr(g_event_log, "afterSync /data/gone.txt"));
    assert_non_null(strstr(g_event_log, "beforeSync /data/out.txt; afterSync /data/out.txt"));
    assert_non_null(strstr(g_event_log, "beforeSync /data/skipme.txt"));
    assert_null(strstr(g_event_log, "afterSync /data/skipme.txt"));
    assert_null(strstr(g_event_log, "scratch.txt"));
    assert_int_equal(g_events, 7); /* before + after for three, before only for the skipped one */

    /* batch, a failed call: nothing, no event; unless onFunctionError is "sync" */
    reset_host();
    run_sync(", 'sync': {'mode': 'batch'}", false, true);
    assert_false(host_has("out.txt", NULL));
    assert_true(host_has("old.txt", "old text"));
    assert_true(host_has("gone.txt", "doomed"));
    assert_int_equal(g_events, 0);
    reset_host();
    run_sync(", 'sync': {'mode': 'batch', 'onFunctionError': 'sync'}", false, false);
    assert_true(host_has("out.txt", "written"));
    assert_true(host_has("old.txt", "new text"));
    assert_false(host_has("gone.txt", NULL));
    assert_true(host_has("skipme.txt", "no")); /* no callback: nothing skips it */
    assert_int_equal(g_events, 0);

    /* manual (or no sync section): the host is never touched */
    reset_host();
    run_sync(", 'sync': {'mode': 'manual'}", true, true);
    assert_false(host_has("out.txt", NULL));
    assert_true(host_has("old.txt", "old text"));
    assert_true(host_has("gone.txt", "doomed"));
    assert_int_equal(g_events, 0);
    reset_host();
    run_sync("", true, true);
    assert_false(host_has("out.txt", NULL));
    assert_true(host_has("gone.txt", "doomed"));
    assert_int_equal(g_events, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_staging, setup, teardown),
        cmocka_unit_test_setup_teardown(test_workdir_in_mount, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_file_limits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_collect_and_report, setup, teardown),
        cmocka_unit_test_setup_teardown(test_setup_is_no_change, setup, teardown),
        cmocka_unit_test_setup_teardown(test_report_options, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sync, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
