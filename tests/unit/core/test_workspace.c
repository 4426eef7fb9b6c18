/* The workspace stage (core/workspace.h) around a sandbox run, without the sandbox: requests are parsed
 * for real (fb_request_parse), the scratch areas the sandbox would hand out are temp directories here,
 * and a mount is a temp host directory.
 *   staging: the request's `files` become the sandbox's user files (text and base64, relative to the
 *            workdir or absolute anywhere but the read-only system directories), or go into a mount's
 *            view; a table of refused entries with the message each must give;
 *   attach:  what the sandbox spec is told;
 *   collect: what the function changed in the scratch areas (a request file left alone is no change; the
 *            root's system entries, /tmp, the workdir and mount points are set-up, not changes);
 *   report:  `files` per includeChanges / includeContents, sorted, text and binary contents;
 *   sync:    batch mode writes the changes inside mounts to the host (none outside them), only after a
 *            successful call unless onFunctionError says "sync", never in manual mode; beforeSync /
 *            afterSync events in the log and through the host's callback, which can skip a change. */
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

#include "core/limits.h"
#include "core/workspace.h"

static char g_top[64];                              /* per test: a fresh temp dir */
static char g_host[128], g_work[128], g_tmp[128], g_root[128]; /* a mount's host dir; scratch areas */

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(p);
}

static int setup(void **state)
{
    (void)state;
    snprintf(g_top, sizeof g_top, "/tmp/fnbox-workspace-test.XXXXXX");
    if (!mkdtemp(g_top))
        return -1;
    snprintf(g_host, sizeof g_host, "%s/host", g_top);
    snprintf(g_work, sizeof g_work, "%s/workspace", g_top);
    snprintf(g_tmp, sizeof g_tmp, "%s/tmp", g_top);
    snprintf(g_root, sizeof g_root, "%s/root", g_top);
    umask(022);
    return mkdir(g_host, 0755) || mkdir(g_work, 0755) || mkdir(g_tmp, 0755) || mkdir(g_root, 0755) ? -1 : 0;
}

static int teardown(void **state)
{
    (void)state;
    return nftw(g_top, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static const fb_sandbox_limits k_lim = {.workspace_bytes = 1 << 20};

/* A request around `extra` (JSON members after the code, ' for "; "HOST" is the mount's host dir). */
static int parse(const char *extra, fb_request *req, fb_error *err)
{
    char text[16384];
    int n = snprintf(text, sizeof text, "{'language': 'python', 'code': 'def f():\\n    return 1'%s%s}",
                     *extra ? ", " : "", extra);
    assert_true(n > 0 && (size_t)n < sizeof text);
    char out[16384];
    size_t o = 0;
    for (const char *p = text; *p; p++) { /* ' -> ", HOST -> the host dir */
        if (strncmp(p, "HOST", 4) == 0) {
            o += (size_t)snprintf(out + o, sizeof out - o, "%s", g_host);
            p += 3;
        } else {
            out[o++] = *p == '\'' ? '"' : *p;
        }
    }
    out[o] = '\0';
    return fb_request_parse(out, o, req, err);
}

static void parse_ok(const char *extra, fb_request *req)
{
    fb_error err = {0};
    if (parse(extra, req, &err) < 0)
        fail_msg("request refused: %s", err.message);
}

static void put(const char *dir, const char *rel, const char *text)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    FILE *f = fopen(p, "w");
    if (!f)
        fail_msg("%s: %s", p, strerror(errno));
    fputs(text, f);
    fclose(f);
}

static void mkdir_in(const char *dir, const char *rel)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    if (mkdir(p, 0755) < 0 && errno != EEXIST)
        fail_msg("mkdir %s: %s", p, strerror(errno));
}

static const fb_sandbox_file *user_file(const fb_workspace *ws, const char *path)
{
    for (size_t i = 0; i < ws->nuser; i++)
        if (strcmp(ws->user_files[i].path, path) == 0)
            return &ws->user_files[i];
    return NULL;
}

/* ---- staging ---- */

static void test_staging(void **state)
{
    (void)state;
    fb_request req;
    parse_ok("'files': {'input.txt': 'text', 'sub/dir/x.csv': '', '/tmp/blob.bin': {'base64': 'AAEC/w=='}, "
             "'/dev/shm/s': 's', '/custom/path/file.txt': 'anywhere else', '/data/in.txt': 'into the mount'}, "
             "'mount': {'dirs': {'/data': 'HOST'}}, 'workdir': '/work'",
             &req);
    fb_workspace ws;
    fb_error err = {0};
    if (fb_workspace_prepare(&ws, &req, &k_lim, &err) < 0)
        fail_msg("prepare: %s", err.message);
    assert_int_equal(ws.nuser, 5); /* the mount's file is in its view, not a sandbox file */
    const fb_sandbox_file *f = user_file(&ws, "/work/input.txt");
    assert_non_null(f);
    assert_int_equal(f->len, 4);
    assert_memory_equal(f->data, "text", 4);
    assert_false(f->executable);
    assert_non_null(f = user_file(&ws, "/work/sub/dir/x.csv"));
    assert_int_equal(f->len, 0);
    assert_non_null(f = user_file(&ws, "/tmp/blob.bin"));
    assert_int_equal(f->len, 4);
    assert_memory_equal(f->data, "\x00\x01\x02\xff", 4);
    assert_non_null(user_file(&ws, "/dev/shm/s"));
    assert_non_null(f = user_file(&ws, "/custom/path/file.txt"));
    assert_memory_equal(f->data, "anywhere else", 13);
    assert_null(user_file(&ws, "/data/in.txt"));
    assert_int_equal(ws.nfs, 1);
    assert_string_equal(ws.fuse_paths[0], "/data");

    fb_sandbox_spec spec = {0};
    fb_workspace_attach(&ws, &spec);
    assert_ptr_equal(spec.user_files, ws.user_files);
    assert_int_equal(spec.nuser_files, 5);
    assert_int_equal(spec.nfuse, 1);
    assert_string_equal(spec.fuse_paths[0], "/data");
    assert_non_null(spec.on_fuse);
    assert_ptr_equal(spec.fuse_ctx, &ws);
    assert_true(spec.keep_scratch); /* includeChanges defaults to true */
    fb_workspace_free(&ws);
    fb_request_free(&req);

    /* without includeChanges the scratch areas are not kept */
    parse_ok("'resultOptions': {'includeChanges': false}", &req);
    assert_int_equal(fb_workspace_prepare(&ws, &req, &k_lim, &err), 0);
    memset(&spec, 0, sizeof spec);
    fb_workspace_attach(&ws, &spec);
    assert_false(spec.keep_scratch);
    assert_int_equal(spec.nuser_files, 0);
    assert_int_equal(spec.nfuse, 0);
    fb_workspace_free(&ws);
    fb_request_free(&req);
}

/* A workdir inside a mount: relative files go into the mount's view. */
static void test_workdir_in_mount(void **state)
{
    (void)state;
    fb_request req;
    parse_ok("'files': {'rel.txt': 'r'}, 'mount': {'dirs': {'/data': 'HOST'}}, 'workdir': '/data/sub'", &req);
    fb_workspace ws;
    fb_error err = {0};
    if (fb_workspace_prepare(&ws, &req, &k_lim, &err) < 0)
        fail_msg("prepare: %s", err.message);
    assert_int_equal(ws.nuser, 0);
    assert_int_equal(ws.nfs, 1);
    fb_workspace_free(&ws);
    fb_request_free(&req);
}

typedef struct bad_files_case {
    const char *extra; /* request members */
    const char *error; /* a piece of the InvalidRequest message */
} bad_files_case;

static const bad_files_case k_bad[] = {
    {"'files': {'': 'x'}", "a file name is empty"},
    {"'files': {'a/../b': 'x'}", "must be a normalized path"},
    {"'files': {'a//b': 'x'}", "normalized path"},
    {"'files': {'./a': 'x'}", "normalized path"},
    {"'files': {'a/': 'x'}", "normalized path"},
    {"'files': {'/': 'x'}", "normalized path"},
    {"'files': {'/usr/lib/x': 'x'}", "read-only system directory"},
    {"'files': {'/usr': 'x'}", "read-only system directory"},
    {"'files': {'/etc/passwd': 'x'}", "read-only system directory"},
    {"'files': {'/proc/self/x': 'x'}", "read-only system directory"},
    {"'files': {'/dev/null': 'x'}", "read-only system directory"},
    {"'files': {'/.fnbox/harness.py': 'x'}", "read-only system directory"},
    {"'files': {'/bin/sh': 'x'}", "read-only system directory"},
    {"'files': {'/workspace': 'x'}", "would stand where the directory /workspace must be"},
    {"'files': {'/tmp': 'x'}", "where the directory /tmp must be"},
    {"'files': {'/dev/shm': 'x'}", "where the directory /dev/shm must be"},
    {"'files': {'/work': 'x'}, 'workdir': '/work/inner'", "where the directory /work/inner must be"},
    {"'files': {'/data': 'x'}, 'mount': {'dirs': {'/data/x': 'HOST'}}", "where the directory /data/x must be"},
    {"'files': {'/data': 'x'}, 'mount': {'dirs': {'/data': 'HOST'}}", "is a mount's root directory"},
    {"'files': {'a\\nb': 'x'}", "control characters are not allowed"},
    {"'files': {'a\\u007fb': 'x'}", "control characters"},
    {"'files': {'x': 5}", "must be a string (text) or {\"base64\": \"...\"} (binary)"},
    {"'files': {'x': null}", "must be a string (text)"},
    {"'files': {'x': {'base64': 'AA==', 'mode': 1}}", "must be a string (text)"},
    {"'files': {'x': {'text': 'a'}}", "must be a string (text)"},
    {"'files': {'x': {'base64': '!!'}}", "files[\"x\"].base64: not valid base64"},
    {"'files': {'x': {'base64': 'A'}}", "not valid base64"},
    {"'files': {'x': {'base64': 'AA=A'}}", "not valid base64"},
};

static void test_bad_files(void **state)
{
    (void)state;
    int failed = 0;
    for (size_t i = 0; i < sizeof k_bad / sizeof k_bad[0]; i++) {
        fb_request req;
        fb_error err = {0};
        if (parse(k_bad[i].extra, &req, &err) < 0) {
            print_message("# FAIL %s: the request itself was refused: %s\n", k_bad[i].extra, err.message);
            failed++;
            continue;
        }
        fb_workspace ws;
        int rc = fb_workspace_prepare(&ws, &req, &k_lim, &err);
        if (rc == 0 || strcmp(fb_error_type(&err), "InvalidRequest") != 0 || !strstr(err.message, k_bad[i].error)) {
            print_message("# FAIL %s: %s %s, expected InvalidRequest with '%s'\n", k_bad[i].extra,
                          rc == 0 ? "accepted" : fb_error_type(&err), rc == 0 ? "" : err.message, k_bad[i].error);
            failed++;
        }
        fb_workspace_free(&ws); /* also after a failed prepare */
        fb_request_free(&req);
    }
    assert_int_equal(failed, 0);
}

static void test_file_limits(void **state)
{
    (void)state;
    /* names: 255 bytes per part, 4095 in all */
    char name[300], extra[5000];
    memset(name, 'n', 256);
    name[256] = '\0';
    snprintf(extra, sizeof extra, "'files': {'%s': 'x'}", name);
    fb_request req;
    fb_error err = {0};
    fb_workspace ws;
    parse_ok(extra, &req);
    assert_int_equal(fb_workspace_prepare(&ws, &req, &k_lim, &err), -1);
    assert_non_null(strstr(err.message, "a path part is longer than 255 bytes"));
    fb_workspace_free(&ws);
    fb_request_free(&req);
    name[255] = '\0';
    snprintf(extra, sizeof extra, "'files': {'%s': 'x'}", name);
    parse_ok(extra, &req);
    assert_int_equal(fb_workspace_prepare(&ws, &req, &k_lim, &err), 0);
    fb_workspace_free(&ws);
    fb_request_free(&req);
    char deep[4300];
    size_t n = 0;
    while (n < 4200) {
        memcpy(deep + n, "abcdefghi/", 10);
        n += 10;
    }
    memcpy(deep + n, "z", 2);
    snprintf(extra, sizeof extra, "'files': {'%s': 'x'}", deep);
    parse_ok(extra, &req);
    assert_int_equal(fb_workspace_prepare(&ws, &req, &k_lim, &err), -1);
    assert_non_null(strstr(err.message, "path longer than 4095 bytes"));
    fb_workspace_free(&ws);
    fb_request_free(&req);

    /* bytes: all files together within the workspace limit */
    fb_sandbox_limits small = {.workspace_bytes = 10};
    parse_ok("'files': {'a': '12345', 'b': '12345'}", &req);
    assert_int_equal(fb_workspace_prepare(&ws, &req, &small, &err), 0);
    fb_workspace_free(&ws);
    fb_request_free(&req);
    parse_ok("'files': {'a': '12345', 'b': '123456'}", &req);
    assert_int_equal(fb_workspace_prepare(&ws, &req, &small, &err), -1);
    assert_non_null(strstr(err.message, "11 bytes in all is more than the workspace limit of 10 bytes"));
    fb_workspace_free(&ws);
    fb_request_free(&req);

    /* entries: at most FB_MAX_REQUEST_FILES */
    size_t cap = (size_t)(FB_MAX_REQUEST_FILES + 1) * 16 + 64;
    char *many = malloc(cap);
    assert_non_null(many);
    size_t m = (size_t)snprintf(many, cap, "'files': {");
    for (int i = 0; i <= FB_MAX_REQUEST_FILES; i++)
        m += (size_t)snprintf(many + m, cap - m, "%s'f%d': ''", i ? ", " : "", i);
    snprintf(many + m, cap - m, "}");
    char *text = malloc(cap + 200);
    assert_non_null(text);
    snprintf(text, cap + 200, "{'language': 'python', 'code': 'def f(): pass', %s}", many);
    for (char *p = text; *p; p++)
        if (*p == '\'')
            *p = '"';
    if (fb_request_parse(text, strlen(text), &req, &err) < 0)
        fail_msg("request refused: %s", err.message);
    assert_int_equal(fb_workspace_prepare(&ws, &req, &k_lim, &err), -1);
    assert_non_null(strstr(err.message, "10001 entries is more than the maximum of 10000"));
    fb_workspace_free(&ws);
    fb_request_free(&req);
    free(text);
    free(many);
}

/* ---- collect and report ---- */

/* The outcome a sandbox would report: the workdir, /tmp and the root as O_PATH descriptors. */
static void scratch_outcome(fb_sandbox_outcome *o, const char *workdir)
{
    memset(o, 0, sizeof *o);
    const char *dirs[] = {g_work, g_tmp, g_root};
    const char *paths[] = {workdir, "/tmp", "/"};
    for (size_t i = 0; i < 3; i++) {
        o->scratch_fd[i] = open(dirs[i], O_PATH | O_DIRECTORY | O_CLOEXEC);
        assert_true(o->scratch_fd[i] >= 0);
        o->scratch_path[i] = paths[i];
    }
    o->nscratch = 3;
}

static void close_outcome(fb_sandbox_outcome *o)
{
    for (size_t i = 0; i < o->nscratch; i++)
        close(o->scratch_fd[i]);
}

/* The root area as the sandbox builds it: the reserved entries, /tmp, the workdir and the mount points. */
static void build_root_area(const char *workdir_top)
{
    const char *const *reserved;
    size_t n = fb_sandbox_reserved_roots(&reserved);
    for (size_t i = 0; i < n; i++)
        mkdir_in(g_root, reserved[i] + 1);
    mkdir_in(g_root, "tmp");
    mkdir_in(g_root, workdir_top);
    mkdir_in(g_root, "data");
}

static json_t *files_of(const fb_workspace *ws, json_t **result)
{
    *result = json_object();
    fb_error err = {0};
    assert_int_equal(fb_workspace_report(ws, *result, &err), 0);
    return json_object_get(*result, "files");
}

/* "path=content" of each entry of list, joined by " " ("-" for no content, "b64:..." for binary). */
static void list_text(const json_t *list, char *out, size_t cap)
{
    size_t n = 0;
    out[0] = '\0';
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
    }
}

static void test_collect_and_report(void **state)
{
    (void)state;
    fb_request req;
    parse_ok("'files': {'a.txt': 'alpha', 'keep.txt': 'same', '/tmp/t.txt': 'tmp', '/opt/o.txt': 'o'}, "
             "'mount': {'dirs': {'/data': 'HOST'}}",
             &req);
    fb_workspace ws;
    fb_error err = {0};
    if (fb_workspace_prepare(&ws, &req, &k_lim, &err) < 0)
        fail_msg("prepare: %s", err.message);
    /* the sandbox places the request files ... */
    put(g_work, "a.txt", "alpha");
    put(g_work, "keep.txt", "same");
    put(g_tmp, "t.txt", "tmp");
    build_root_area("workspace");
    mkdir_in(g_root, "opt");
    put(g_root, "opt/o.txt", "o");
    /* ... and the function changes some */
    put(g_work, "a.txt", "ALPHA!");
    put(g_work, "new.txt", "created");
    mkdir_in(g_work, "d");
    put(g_work, "d/bin", "\xff\xfe");
    unlink(strcat(strcpy((char[256]){0}, g_tmp), "/t.txt"));
    mkdir_in(g_root, "database");
    put(g_root, "database/x.txt", "db");
    put(g_root, "etc/ignored", "a reserved area is not walked");
    put(g_root, "data/ignored", "a mount point is not walked");
    fb_sandbox_outcome o;
    scratch_outcome(&o, "/workspace");
    if (fb_workspace_collect(&ws, &o, &err) < 0)
        fail_msg("collect: %s", err.message);
    json_t *result;
    json_t *files = files_of(&ws, &result);
    char text[2048];
    list_text(json_object_get(files, "created"), text, sizeof text);
    assert_string_equal(text, "/database:directory:0=- /database/x.txt:file:2=db /workspace/d:directory:0=- "
                              "/workspace/d/bin:file:2=b64://4= /workspace/new.txt:file:7=created");
    list_text(json_object_get(files, "modified"), text, sizeof text);
    assert_string_equal(text, "/workspace/a.txt:file:6=ALPHA!");
    list_text(json_object_get(files, "deleted"), text, sizeof text);
    assert_string_equal(text, "/tmp/t.txt:file:3=-");
    assert_int_equal(json_array_size(json_object_get(files, "denied")), 0);
    assert_null(json_object_get(files, "skipped"));
    assert_null(json_object_get(result, "sync"));
    assert_null(json_object_get(result, "events"));
    json_decref(result);
    close_outcome(&o);
    fb_workspace_free(&ws);
    fb_request_free(&req);
}

static void test_report_options(void **state)
{
    (void)state;
    const char *const opts[] = {"'resultOptions': {'includeContents': false, 'includeDenied': false}",
                                "'resultOptions': {'includeChanges': false}"};
    for (size_t k = 0; k < 2; k++) {
        fb_request req;
        parse_ok(opts[k], &req);
        fb_workspace ws;
        fb_error err = {0};
        assert_int_equal(fb_workspace_prepare(&ws, &req, &k_lim, &err), 0);
        put(g_work, "new.txt", "created");
        fb_sandbox_outcome o;
        scratch_outcome(&o, "/workspace");
        o.nscratch = 1;
        assert_int_equal(fb_workspace_collect(&ws, &o, &err), 0);
        json_t *result;
        json_t *files = files_of(&ws, &result);
        if (k == 0) {
            char text[256];
            list_text(json_object_get(files, "created"), text, sizeof text);
            assert_string_equal(text, "/workspace/new.txt:file:7=-");
            assert_null(json_object_get(files, "denied"));
        } else {
            assert_null(files);
        }
        json_decref(result);
        close_outcome(&o);
        fb_workspace_free(&ws);
        fb_request_free(&req);
    }
}

/* ---- sync ---- */

static int g_events;
static char g_event_log[1024];

static int on_event(void *ctx, const fnbox_event *ev)
{
    (void)ctx;
    size_t n = strlen(g_event_log);
    snprintf(g_event_log + n, sizeof g_event_log - n, "%s%s %s", n ? "; " : "", ev->type, ev->path);
    g_events++;
    return strstr(ev->path, "skipme") && strcmp(ev->type, "beforeSync") == 0 ? FNBOX_SYNC_SKIP : FNBOX_SYNC_GO;
}

static void add_change(fb_workspace *ws, fb_change_kind kind, const char *path, const char *content)
{
    fb_error err = {0};
    unsigned char *c = NULL;
    size_t len = content ? strlen(content) : 0;
    if (content) {
        c = malloc(len ? len : 1);
        assert_non_null(c);
        memcpy(c, content, len);
    }
    assert_int_equal(fb_change_add(&ws->changes, kind, FB_FILE_REGULAR, path, len, content ? 0644 : 0, c, len,
                                   content != NULL, &err), 0);
}

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

/* The changes a call reported, as the sandbox would have left them, synced (or not) per mode and outcome. */
static void run_sync(const char *mount_extra, bool call_ok, bool with_events)
{
    char extra[512];
    snprintf(extra, sizeof extra, "'mount': {'dirs': {'/data': 'HOST'}, 'permissions': {'rules': "
                                  "[{'pattern': '**', 'allow': '*'}]}%s}",
             mount_extra);
    fb_request req;
    parse_ok(extra, &req);
    fb_workspace ws;
    fb_error err = {0};
    assert_int_equal(fb_workspace_prepare(&ws, &req, &k_lim, &err), 0);
    if (with_events)
        fb_workspace_set_events(&ws, on_event, NULL, false);
    add_change(&ws, FB_CHANGE_CREATED, "/data/out.txt", "written");
    add_change(&ws, FB_CHANGE_MODIFIED, "/data/old.txt", "new text");
    add_change(&ws, FB_CHANGE_DELETED, "/data/gone.txt", NULL);
    add_change(&ws, FB_CHANGE_CREATED, "/data/skipme.txt", "no");
    add_change(&ws, FB_CHANGE_CREATED, "/workspace/scratch.txt", "never synced");
    if (fb_workspace_sync(&ws, call_ok, &err) < 0)
        fail_msg("sync: %s", err.message);
    json_t *result;
    json_t *files = files_of(&ws, &result);
    (void)files;
    json_t *sync = json_object_get(result, "sync");
    if (ws.synced || sync) {
        assert_non_null(sync);
        assert_true(json_is_array(json_object_get(sync, "synced")));
    }
    if (with_events && sync) {
        json_t *events = json_object_get(result, "events");
        assert_true(json_is_array(events));
        assert_int_equal(json_array_size(events), (size_t)g_events);
    }
    json_decref(result);
    fb_workspace_free(&ws);
    fb_request_free(&req);
}

static void reset_host(void)
{
    char p[512];
    const char *names[] = {"out.txt", "skipme.txt", "old.txt", "gone.txt"};
    for (size_t i = 0; i < 4; i++) {
        snprintf(p, sizeof p, "%s/%s", g_host, names[i]);
        unlink(p);
    }
    put(g_host, "old.txt", "old text");
    put(g_host, "gone.txt", "doomed");
    g_events = 0;
    g_event_log[0] = '\0';
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
    assert_non_null(strstr(g_event_log, "beforeSync /data/gone.txt"));
    assert_non_null(strstr(g_event_log, "afterSync /data/out.txt"));
    assert_non_null(strstr(g_event_log, "beforeSync /data/skipme.txt"));
    assert_null(strstr(g_event_log, "afterSync /data/skipme.txt"));
    assert_null(strstr(g_event_log, "scratch.txt"));

    /* batch, a failed call: nothing; unless onFunctionError is "sync" */
    reset_host();
    run_sync(", 'sync': {'mode': 'batch'}", false, true);
    assert_false(host_has("out.txt", NULL));
    assert_true(host_has("old.txt", "old text"));
    assert_true(host_has("gone.txt", "doomed"));
    assert_int_equal(g_events, 0);
    reset_host();
    run_sync(", 'sync': {'mode': 'batch', 'onFunctionError': 'sync'}", false, false);
    assert_true(host_has("out.txt", "written"));
    assert_true(host_has("skipme.txt", "no")); /* no callback: nothing skips it */

    /* manual (or no sync section): the host is never touched */
    reset_host();
    run_sync(", 'sync': {'mode': 'manual'}", true, true);
    assert_false(host_has("out.txt", NULL));
    assert_true(host_has("gone.txt", "doomed"));
    assert_int_equal(g_events, 0);
    reset_host();
    run_sync("", true, true);
    assert_false(host_has("out.txt", NULL));
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
        cmocka_unit_test_setup_teardown(test_report_options, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sync, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
