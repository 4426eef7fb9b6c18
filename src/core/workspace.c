/* The call's files around the sandbox run (see workspace.h). */
#include "core/workspace.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/limits.h"
#include "fs/sync.h"
#include "util/base64.h"
#include "util/utf8.h"

#define BAD(...) fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, __VA_ARGS__)

static const char *const k_scratch_roots[] = {"/tmp", "/dev/shm"}; /* besides the workdir */

/* ---- the request's files ---- */

static int decode_base64(const char *key, const char *s, size_t len, unsigned char **out, size_t *out_len,
                         fb_error *err)
{
    int rc = fb_base64_decode(s, len, out, out_len);
    if (rc == -2)
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "files[\"%.200s\"]: decoding base64", key);
    return rc < 0 ? BAD("files[\"%.200s\"].base64: not valid base64", key) : 0;
}

static int file_content(const char *key, json_t *v, unsigned char **data, size_t *len, fb_error *err)
{
    if (json_is_string(v)) {
        *len = json_string_length(v);
        *data = malloc(*len + 1);
        if (!*data)
            return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "files[\"%.200s\"]", key);
        memcpy(*data, json_string_value(v), *len);
        return 0;
    }
    json_t *b64 = json_is_object(v) ? json_object_get(v, "base64") : NULL;
    if (!json_is_string(b64) || json_object_size(v) != 1)
        return BAD("files[\"%.200s\"]: must be a string (text) or {\"base64\": \"...\"} (binary)", key);
    return decode_base64(key, json_string_value(b64), json_string_length(b64), data, len, err);
}

/* The absolute, normalized sandbox path of a files key. */
static int file_path(const char *key, const char *workdir, char *out, size_t cap, fb_error *err)
{
    if (!*key)
        return BAD("files: a file name is empty");
    int n = key[0] == '/' ? snprintf(out, cap, "%s", key) : snprintf(out, cap, "%s/%s", workdir, key);
    if (n < 0 || (size_t)n >= cap)
        return BAD("files[\"%.200s\"]: path longer than %zu bytes", key, cap - 1);
    for (const char *seg = out + 1; seg;) {
        const char *end = strchr(seg, '/');
        size_t sl = end ? (size_t)(end - seg) : strlen(seg);
        if (sl == 0 || (sl == 1 && seg[0] == '.') || (sl == 2 && seg[0] == '.' && seg[1] == '.'))
            return BAD("files[\"%.200s\"]: must be a normalized path (no empty, '.' or '..' parts)", key);
        if (sl > 255)
            return BAD("files[\"%.200s\"]: a path part is longer than 255 bytes", key);
        seg = end ? end + 1 : NULL;
    }
    for (const char *p = out; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            return BAD("files[\"%.200s\"]: control characters are not allowed in file names", key);
    if (strlen(out) != (size_t)n)
        return BAD("files[\"%.200s\"]: NUL in a file name", key);
    return 0;
}

static bool at_or_under(const char *path, const char *root)
{
    size_t n = strlen(root);
    return strlen(path) >= n && memcmp(path, root, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static const fb_mount_config *mount_of(const fb_request *req)
{
    return req->mount;
}

/* Whether the workdir is (inside) a mount: then it is no tmpfs of its own and not scratch space. */
static bool workdir_in_mount(const fb_request *req)
{
    const char *rel;
    return mount_of(req) && fb_mount_find(mount_of(req), req->workdir, &rel) != NULL;
}

/* The scratch area a path outside every mount lies in: the workdir, /tmp, /dev/shm, or the root ("/", the
 * sandbox's own tmpfs: any other path not reserved for the system, sandbox.h). NULL for a reserved path. */
static const char *scratch_root_of(const fb_request *req, const char *path)
{
    if (!workdir_in_mount(req) && at_or_under(path, req->workdir) && strcmp(path, req->workdir) != 0)
        return req->workdir;
    for (size_t i = 0; i < sizeof k_scratch_roots / sizeof *k_scratch_roots; i++)
        if (at_or_under(path, k_scratch_roots[i]) && strcmp(path, k_scratch_roots[i]) != 0)
            return k_scratch_roots[i];
    return fb_sandbox_reserved_path(path) ? NULL : "/";
}

/* A request file in the root's scratch space must not take the place of a directory the sandbox needs: the
 * workdir, /tmp, a mount point, or one of their parents. */
static const char *blocked_by(const fb_request *req, const char *path)
{
    if (at_or_under(req->workdir, path))
        return req->workdir;
    for (size_t i = 0; i < sizeof k_scratch_roots / sizeof *k_scratch_roots; i++)
        if (at_or_under(k_scratch_roots[i], path))
            return k_scratch_roots[i];
    const fb_mount_config *m = mount_of(req);
    for (size_t i = 0; m && i < m->ndirs; i++)
        if (at_or_under(m->dirs[i].virtual_path, path))
            return m->dirs[i].virtual_path;
    return NULL;
}

static int place_file(fb_workspace *ws, const char *key, const char *path, unsigned char *data, size_t len,
                      fb_error *err)
{
    const fb_mount_config *m = mount_of(ws->req);
    const char *rel;
    const fb_mount_dir *d = m ? fb_mount_find(m, path, &rel) : NULL;
    if (d) {
        for (size_t i = 0; i < ws->nfs; i++)
            if (ws->fuse_paths[i] == d->virtual_path) {
                int rc = *rel ? fb_mountfs_add_file(ws->fs[i], rel, data, len, err)
                              : BAD("files[\"%.200s\"]: is a mount's root directory", key);
                free(data);
                return rc;
            }
    }
    const char *root = scratch_root_of(ws->req, path);
    const char *needed = root && strcmp(root, "/") == 0 ? blocked_by(ws->req, path) : NULL;
    if (!root || needed) {
        free(data);
        return root ? BAD("files[\"%.200s\"]: %s would stand where the directory %s must be", key, path, needed)
                    : BAD("files[\"%.200s\"]: %s is in a read-only system directory (/usr, /etc, /proc, /dev, "
                          "/.fnbox and the like); files may go anywhere else", key, path);
    }
    fb_sandbox_file *f = &ws->user_files[ws->nuser];
    char *p = strdup(path);
    if (!p) {
        free(data);
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "files[\"%.200s\"]", key);
    }
    *f = (fb_sandbox_file){.path = p, .data = (const char *)data, .len = len};
    ws->nuser++;
    return fb_baseline_add(&ws->baseline, root, path, false, false, data, len, err);
}

static int stage_files(fb_workspace *ws, const fb_sandbox_limits *lim, fb_error *err)
{
    json_t *files = ws->req->files;
    if (!files)
        return 0;
    size_t n = json_object_size(files);
    if (n > FB_MAX_REQUEST_FILES)
        return BAD("files: %zu entries is more than the maximum of %d", n, FB_MAX_REQUEST_FILES);
    ws->user_files = calloc(n ? n : 1, sizeof *ws->user_files);
    if (!ws->user_files)
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "files");
    uint64_t total = 0;
    const char *key;
    json_t *v;
    json_object_foreach(files, key, v) {
        char path[4096] = ""; /* file_path fills it; clang-analyzer cannot see that on every path */
        unsigned char *data = NULL;
        size_t len = 0;
        if (file_path(key, ws->req->workdir, path, sizeof path, err) < 0 || file_content(key, v, &data, &len, err) < 0)
            return -1;
        total += len;
        if (total > lim->workspace_bytes) {
            free(data);
            return BAD("files: %llu bytes in all is more than the workspace limit of %llu bytes",
                       (unsigned long long)total, (unsigned long long)lim->workspace_bytes);
        }
        if (place_file(ws, key, path, data, len, err) < 0)
            return -1;
    }
    return 0;
}

/* ---- mounts ---- */

static int open_mounts(fb_workspace *ws, const fb_sandbox_limits *lim, fb_error *err)
{
    const fb_mount_config *m = mount_of(ws->req);
    if (!m)
        return 0;
    if (m->ndirs > FB_SANDBOX_MAX_FUSE)
        return BAD("mount.dirs: %zu mounts is more than the maximum of %d", m->ndirs, FB_SANDBOX_MAX_FUSE);
    for (size_t i = 0; i < m->ndirs; i++) {
        if (fb_mountfs_open(m, &m->dirs[i], lim->workspace_bytes, &ws->fs[i], err) < 0)
            return -1;
        ws->fuse_paths[i] = m->dirs[i].virtual_path;
        ws->nfs++;
        /* a mount point inside a scratch area is set-up, not a change the function made */
        const char *root = scratch_root_of(ws->req, m->dirs[i].virtual_path);
        if (root && fb_baseline_add(&ws->baseline, root, m->dirs[i].virtual_path, true, true, NULL, 0, err) < 0)
            return -1;
    }
    return 0;
}

/* The root's scratch area starts with what the sandbox puts there itself: the system entries (the
 * merged-usr links among them), /tmp, the workdir and the mount points with their parents. None of it is
 * the function's change. */
static int baseline_root_area(fb_workspace *ws, fb_error *err)
{
    const char *const *reserved;
    size_t n = fb_sandbox_reserved_roots(&reserved);
    for (size_t i = 0; i < n; i++)
        if (fb_baseline_add(&ws->baseline, "/", reserved[i], true, true, NULL, 0, err) < 0)
            return -1;
    if (fb_baseline_add(&ws->baseline, "/", "/tmp", true, true, NULL, 0, err) < 0 ||
        fb_baseline_add(&ws->baseline, "/", ws->req->workdir, true, true, NULL, 0, err) < 0)
        return -1;
    const fb_mount_config *m = mount_of(ws->req);
    for (size_t i = 0; m && i < m->ndirs; i++)
        if (fb_baseline_add(&ws->baseline, "/", m->dirs[i].virtual_path, true, true, NULL, 0, err) < 0)
            return -1;
    return 0;
}

int fb_workspace_prepare(fb_workspace *ws, const fb_request *req, const fb_sandbox_limits *lim, fb_error *err)
{
    memset(ws, 0, sizeof *ws);
    ws->req = req;
    if (open_mounts(ws, lim, err) < 0 || baseline_root_area(ws, err) < 0 || stage_files(ws, lim, err) < 0)
        return -1;
    fb_baseline_seal(&ws->baseline);
    return 0;
}

void fb_workspace_set_check(fb_workspace *ws, fb_fs_check check, void *ctx)
{
    ws->check = check;
    ws->check_ctx = ctx;
    for (size_t i = 0; i < ws->nfs; i++)
        fb_mountfs_set_check(ws->fs[i], check, ctx);
}

void fb_workspace_set_events(fb_workspace *ws, fnbox_event_fn fn, void *ctx, bool allow_abort)
{
    ws->on_event = fn;
    ws->event_ctx = ctx;
    ws->allow_abort = allow_abort;
}

/* ---- events: logged in order, and handed to the host's callback ---- */

/* The log entry for ev. Paths are shown with U+FFFD for bytes that are not UTF-8 (json_string refuses
 * them). */
static json_t *event_json(const fnbox_event *ev)
{
    json_t *o = json_pack("{s:s}", "type", ev->type);
    if (!o)
        return NULL;
    const char *keys[] = {"path", "realPath", "change", "fileType", "operation", "rule"};
    const char *vals[] = {ev->path, ev->real_path, ev->change, ev->file_type, ev->operation, ev->rule};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        if (!vals[i])
            continue;
        size_t n = 0;
        char *clean = fb_utf8_sanitize(vals[i], strlen(vals[i]), &n);
        if (clean)
            json_object_set_new(o, keys[i], json_stringn(clean, n));
        free(clean);
    }
    if (strcmp(ev->type, "afterSync") == 0)
        json_object_set_new(o, "success", json_boolean(ev->success));
    if (ev->error)
        json_object_set_new(o, "error", json_string(ev->error));
    return o;
}

/* Logs ev (when log) and asks the host's callback; its answer (0 without a callback). */
static int emit(fb_workspace *ws, const fnbox_event *ev, bool log)
{
    if (log) {
        if (!ws->events)
            ws->events = json_array();
        if (ws->events)
            json_array_append_new(ws->events, event_json(ev));
    }
    return ws->on_event ? ws->on_event(ws->event_ctx, ev) : 0;
}

static fb_sync_decision before_sync(void *ctx, const fb_change *ch, const char *host_path)
{
    fb_workspace *ws = ctx;
    fnbox_event ev = {.type = "beforeSync", .path = ch->path, .real_path = host_path,
                      .change = fb_change_kind_name(ch->kind), .file_type = fb_file_type_name(ch->type)};
    switch (emit(ws, &ev, true)) {
    case FNBOX_SYNC_SKIP: return FB_SYNC_SKIP;
    case FNBOX_SYNC_ABORT: return ws->allow_abort ? FB_SYNC_ABORT : FB_SYNC_SKIP;
    default: return FB_SYNC_GO;
    }
}

static void after_sync(void *ctx, const fb_change *ch, const fb_sync_item *it)
{
    fb_workspace *ws = ctx;
    bool ok = it->state == FB_SYNC_ITEM_SYNCED;
    fnbox_event ev = {.type = "afterSync", .path = ch->path, .real_path = it->host_path,
                      .change = fb_change_kind_name(ch->kind), .file_type = fb_file_type_name(ch->type),
                      .success = ok, .error = ok ? NULL : it->error};
    emit(ws, &ev, true);
    if (!ok) {
        fnbox_event e2 = {.type = "syncError", .path = ch->path, .real_path = it->host_path,
                          .change = ev.change, .file_type = ev.file_type, .error = it->error};
        emit(ws, &e2, true);
    }
}

static void emit_denials(fb_workspace *ws)
{
    for (size_t i = 0; i < ws->nfs; i++) {
        const fb_denial_list *d = fb_mountfs_denials(ws->fs[i]);
        for (size_t j = 0; j < d->n; j++) {
            fnbox_event ev = {.type = "permissionDenied", .path = d->v[j].path, .operation = d->v[j].operation,
                              .rule = d->v[j].rule};
            emit(ws, &ev, ws->req->reporting.include_denied);
        }
    }
}

static int serve_mount(void *ctx, size_t index, int fd, fb_error *err)
{
    fb_workspace *ws = ctx;
    return fb_mountfs_serve(ws->fs[index], fd, err);
}

void fb_workspace_attach(fb_workspace *ws, fb_sandbox_spec *spec)
{
    spec->user_files = ws->user_files;
    spec->nuser_files = ws->nuser;
    spec->fuse_paths = ws->fuse_paths;
    spec->nfuse = ws->nfs;
    spec->on_fuse = serve_mount;
    spec->fuse_ctx = ws;
    spec->keep_scratch = ws->req->reporting.include_changes;
}

/* ---- after the call ---- */

int fb_workspace_collect(fb_workspace *ws, const fb_sandbox_outcome *out, fb_error *err)
{
    for (size_t i = 0; i < ws->nfs; i++)
        fb_mountfs_stop(ws->fs[i]);
    /* contents are needed to report them, and to sync (batch now, or manual later from the report) */
    bool with_content = ws->req->reporting.include_contents || (ws->req->mount && ws->req->mount->sync == FB_SYNC_BATCH);
    for (size_t i = 0; i < ws->nfs; i++)
        if (fb_track_mount(ws->fs[i], with_content, &ws->changes, err) < 0)
            return -1;
    for (size_t i = 0; i < out->nscratch; i++)
        if (fb_track_scratch(out->scratch_fd[i], out->scratch_path[i], &ws->baseline, ws->req->reporting.include_contents,
                             FB_DEFAULT_TMPFS_INODES, &ws->changes, err) < 0)
            return -1;
    fb_track_sort(&ws->changes);
    emit_denials(ws);
    return 0;
}

/* ---- sync ---- */

int fb_workspace_sync(fb_workspace *ws, bool call_succeeded, fb_error *err)
{
    const fb_mount_config *m = mount_of(ws->req);
    if (!m || m->sync != FB_SYNC_BATCH || (!call_succeeded && !m->sync_on_function_error))
        return 0; /* manual: the caller applies a subset later (`fnbox sync`); failed call: nothing by default */
    for (size_t i = 0; i < ws->nfs; i++)
        if (fb_mountfs_failure(ws->fs[i]))
            return fb_set_error(err, FB_ERR_SYNC_FAILED, EIO, "mount %s failed during the call (%s): nothing synced",
                                ws->fs[i] ? ws->fuse_paths[i] : "?", fb_mountfs_failure(ws->fs[i]));
    fb_change_list in_mounts = {0};
    int rc = 0;
    /* only changes inside mounts go to the host: the rest is scratch space */
    for (size_t i = 0; i < ws->changes.n && rc == 0; i++) {
        const fb_change *c = &ws->changes.v[i];
        const char *rel;
        if (!fb_mount_find(m, c->path, &rel))
            continue;
        unsigned char *content = NULL;
        if (c->has_content && c->content_len && !(content = malloc(c->content_len)))
            rc = fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "sync of %s", c->path);
        else if (content)
            memcpy(content, c->content, c->content_len);
        if (rc == 0)
            rc = fb_change_add(&in_mounts, c->kind, c->type, c->path, c->size, c->mode, content, c->content_len,
                               c->has_content, err);
    }
    fb_sync_report rep = {0};
    if (rc == 0 && in_mounts.n > 0) {
        /* the rules, and the host's callback, are asked once more for each change */
        fb_sync_options opt = {.on_error = -1, .before = before_sync, .after = after_sync, .ctx = ws,
                               .check = ws->check, .check_ctx = ws->check_ctx};
        rc = fb_sync_apply_ex(m, &in_mounts, &opt, &rep, err);
        ws->sync_report = fb_sync_report_json(&rep);
        if (rc == 0 && !ws->sync_report)
            rc = fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "sync report");
    }
    fb_sync_report_free(&rep);
    fb_change_list_free(&in_mounts);
    return rc;
}

/* ---- the report ---- */

static json_t *content_json(const fb_change *c)
{
    json_t *s = json_stringn((const char *)c->content, c->content_len); /* NULL unless valid UTF-8 */
    if (s)
        return s;
    char *b64 = fb_base64_encode(c->content, c->content_len);
    if (!b64)
        return NULL;
    json_t *o = json_pack("{s:s}", "base64", b64);
    free(b64);
    return o;
}

static json_t *change_json(const fb_change *c, bool with_content)
{
    json_t *o = json_pack("{s:s, s:s, s:I}", "path", c->path, "type", fb_file_type_name(c->type), "size",
                          (json_int_t)c->size);
    if (o && with_content && c->has_content && c->kind != FB_CHANGE_DELETED)
        json_object_set_new(o, "content", content_json(c));
    return o;
}

static int add_denials(const fb_workspace *ws, json_t *files)
{
    json_t *denied = json_array();
    for (size_t i = 0; i < ws->nfs; i++) {
        const fb_denial_list *d = fb_mountfs_denials(ws->fs[i]);
        for (size_t j = 0; j < d->n; j++) {
            json_array_append_new(denied, json_pack("{s:s, s:s, s:s}", "path", d->v[j].path, "operation",
                                                    d->v[j].operation, "rule", d->v[j].rule));
        }
    }
    return json_object_set_new(files, "denied", denied);
}

static void add_skipped(const fb_workspace *ws, json_t *files)
{
    json_t *skipped = json_array();
    for (size_t i = 0; i < ws->nfs; i++) {
        size_t n;
        const fb_skipped *s = fb_mountfs_skipped(ws->fs[i], &n);
        for (size_t j = 0; j < n; j++)
            json_array_append_new(skipped, json_pack("{s:s, s:s, s:I}", "path", s[j].path, "reason", s[j].reason,
                                                     "size", (json_int_t)s[j].size));
    }
    if (json_array_size(skipped))
        json_object_set_new(files, "skipped", skipped);
    else
        json_decref(skipped);
}

static json_t *files_json(const fb_workspace *ws)
{
    const fb_reporting *rep = &ws->req->reporting;
    json_t *files = json_object();
    json_t *lists[3] = {json_array(), json_array(), json_array()}; /* created, modified, deleted */
    for (size_t i = 0; i < ws->changes.n; i++)
        json_array_append_new(lists[ws->changes.v[i].kind], change_json(&ws->changes.v[i], rep->include_contents));
    json_object_set_new(files, "created", lists[0]);
    json_object_set_new(files, "modified", lists[1]);
    json_object_set_new(files, "deleted", lists[2]);
    if (rep->include_denied)
        add_denials(ws, files);
    add_skipped(ws, files);
    for (size_t i = 0; i < ws->nfs; i++)
        if (fb_mountfs_failure(ws->fs[i]))
            json_object_set_new(files, "error", json_string(fb_mountfs_failure(ws->fs[i])));
    return files;
}

int fb_workspace_report(const fb_workspace *ws, json_t *result, fb_error *err)
{
    /* includeChanges false: no `files` at all, as the seed leaves it undefined (issue 11); a batch sync
     * has already run on the full change list, its report is `sync`. */
    if (ws->req->reporting.include_changes)
        json_object_set_new(result, "files", files_json(ws));
    if (ws->sync_report)
        json_object_set(result, "sync", ws->sync_report);
    if (json_array_size(ws->events))
        json_object_set(result, "events", ws->events);
    (void)err;
    return 0;
}

void fb_workspace_free(fb_workspace *ws)
{
    json_decref(ws->events);
    for (size_t i = 0; i < ws->nfs; i++)
        fb_mountfs_free(ws->fs[i]);
    for (size_t i = 0; i < ws->nuser; i++) {
        free((char *)ws->user_files[i].path);
        free((char *)ws->user_files[i].data);
    }
    free(ws->user_files);
    fb_baseline_free(&ws->baseline);
    fb_change_list_free(&ws->changes);
    json_decref(ws->sync_report);
    memset(ws, 0, sizeof *ws);
}
