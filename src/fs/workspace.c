/* The call's files around the sandbox run (see workspace.h). */
#include "fs/workspace.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define BAD(...) fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, __VA_ARGS__)

static const char *const k_scratch_roots[] = {"/tmp", "/dev/shm"}; /* besides the workdir */

static bool at_or_under(const char *path, const char *root)
{
    size_t n = strlen(root);
    return strlen(path) >= n && memcmp(path, root, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* Whether the workdir is (inside) a mount: then it is no tmpfs of its own and not scratch space. */
static bool workdir_in_mount(const fb_workspace *ws)
{
    const char *rel;
    return ws->cfg.mount && fb_mount_find(ws->cfg.mount, ws->cfg.workdir, &rel) != NULL;
}

/* The scratch area a path outside every mount lies in: the workdir, /tmp, /dev/shm, or the root ("/", the
 * sandbox's own tmpfs: any other path the layout does not reserve). NULL for a reserved path. */
static const char *scratch_root_of(const fb_workspace *ws, const char *path)
{
    const char *workdir = ws->cfg.workdir;
    if (!workdir_in_mount(ws) && at_or_under(path, workdir) && strcmp(path, workdir) != 0)
        return workdir;
    for (size_t i = 0; i < sizeof k_scratch_roots / sizeof *k_scratch_roots; i++)
        if (at_or_under(path, k_scratch_roots[i]) && strcmp(path, k_scratch_roots[i]) != 0)
            return k_scratch_roots[i];
    return ws->cfg.layout.reserved(path) ? NULL : "/";
}

/* A request file in the root's scratch space must not take the place of a directory the sandbox needs: the
 * workdir, /tmp, a mount point, or one of their parents. */
static const char *blocked_by(const fb_workspace *ws, const char *path)
{
    if (at_or_under(ws->cfg.workdir, path))
        return ws->cfg.workdir;
    for (size_t i = 0; i < sizeof k_scratch_roots / sizeof *k_scratch_roots; i++)
        if (at_or_under(k_scratch_roots[i], path))
            return k_scratch_roots[i];
    const fb_mount_config *m = ws->cfg.mount;
    for (size_t i = 0; m && i < m->ndirs; i++)
        if (at_or_under(m->dirs[i].virtual_path, path))
            return m->dirs[i].virtual_path;
    return NULL;
}

/* ---- the request's files ---- */

/* In a mount's view (the view keeps a copy), or staged for the sandbox to write into a scratch area. */
static int place_file(fb_workspace *ws, const fb_ws_file *f, fb_error *err)
{
    const fb_mount_config *m = ws->cfg.mount;
    const char *rel;
    const fb_mount_dir *d = m ? fb_mount_find(m, f->path, &rel) : NULL;
    if (d) {
        for (size_t i = 0; i < ws->nmounts; i++)
            if (ws->mount_paths[i] == d->virtual_path)
                return *rel ? fb_mountfs_add_file(ws->fs[i], rel, f->data, f->len, err)
                            : BAD("files[\"%.200s\"]: is a mount's root directory", f->name);
    }
    const char *root = scratch_root_of(ws, f->path);
    const char *needed = root && strcmp(root, "/") == 0 ? blocked_by(ws, f->path) : NULL;
    if (!root)
        return BAD("files[\"%.200s\"]: %s is in a read-only system directory (/usr, /etc, /proc, /dev, /.fnbox and "
                   "the like); files may go anywhere else", f->name, f->path);
    if (needed)
        return BAD("files[\"%.200s\"]: %s would stand where the directory %s must be", f->name, f->path, needed);
    ws->staged[ws->nstaged++] = *f;
    return fb_baseline_add(&ws->baseline, root, f->path, false, false, f->data, f->len, err);
}

/* Whether a preset file gives way: a request file stands at its path or at one of its parents (the request's
 * own wins), it would land in a mount (nothing of fnbox's may reach a mount's view, which syncs) or where a
 * directory the sandbox needs must be, or in a reserved path. */
static bool preset_left_out(const fb_workspace *ws, const fb_ws_file *f)
{
    const fb_ws_files *files = ws->cfg.files;
    for (size_t i = 0; files && i < files->n; i++)
        if (at_or_under(f->path, files->v[i].path))
            return true;
    const char *rel;
    if (ws->cfg.mount && fb_mount_find(ws->cfg.mount, f->path, &rel) != NULL)
        return true;
    const char *root = scratch_root_of(ws, f->path);
    return !root || (strcmp(root, "/") == 0 && blocked_by(ws, f->path));
}

static int stage_files(fb_workspace *ws, fb_error *err)
{
    const fb_ws_files *files = ws->cfg.files, *preset = ws->cfg.preset;
    size_t n = (files ? files->n : 0) + (preset ? preset->n : 0);
    if (n == 0)
        return 0;
    ws->staged = calloc(n, sizeof *ws->staged);
    if (!ws->staged)
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "files");
    for (size_t i = 0; preset && i < preset->n; i++)
        if (!preset_left_out(ws, &preset->v[i]) && place_file(ws, &preset->v[i], err) < 0)
            return -1;
    for (size_t i = 0; files && i < files->n; i++)
        if (place_file(ws, &files->v[i], err) < 0)
            return -1;
    return 0;
}

/* ---- mounts ---- */

static int open_mounts(fb_workspace *ws, fb_error *err)
{
    const fb_mount_config *m = ws->cfg.mount;
    if (!m)
        return 0;
    if (m->ndirs > FB_WORKSPACE_MAX_MOUNTS)
        return BAD("mount.dirs: %zu mounts is more than the maximum of %d", m->ndirs, FB_WORKSPACE_MAX_MOUNTS);
    for (size_t i = 0; i < m->ndirs; i++) {
        if (fb_mountfs_open(m, &m->dirs[i], ws->cfg.view_bytes, &ws->fs[i], err) < 0)
            return -1;
        ws->mount_paths[i] = m->dirs[i].virtual_path;
        ws->nmounts++;
        /* a mount point inside a scratch area is set-up, not a change the function made */
        const char *root = scratch_root_of(ws, m->dirs[i].virtual_path);
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
    const fb_ws_layout *l = &ws->cfg.layout;
    for (size_t i = 0; i < l->nreserved_roots; i++)
        if (fb_baseline_add(&ws->baseline, "/", l->reserved_roots[i], true, true, NULL, 0, err) < 0)
            return -1;
    if (fb_baseline_add(&ws->baseline, "/", "/tmp", true, true, NULL, 0, err) < 0 ||
        fb_baseline_add(&ws->baseline, "/", ws->cfg.workdir, true, true, NULL, 0, err) < 0)
        return -1;
    const fb_mount_config *m = ws->cfg.mount;
    for (size_t i = 0; m && i < m->ndirs; i++)
        if (fb_baseline_add(&ws->baseline, "/", m->dirs[i].virtual_path, true, true, NULL, 0, err) < 0)
            return -1;
    return 0;
}

int fb_workspace_prepare(fb_workspace *ws, const fb_workspace_config *cfg, fb_error *err)
{
    memset(ws, 0, sizeof *ws);
    ws->cfg = *cfg;
    if (open_mounts(ws, err) < 0 || baseline_root_area(ws, err) < 0 || stage_files(ws, err) < 0)
        return -1;
    fb_baseline_seal(&ws->baseline);
    return 0;
}

void fb_workspace_set_check(fb_workspace *ws, fb_fs_check check, void *ctx)
{
    ws->check = check;
    ws->check_ctx = ctx;
    for (size_t i = 0; i < ws->nmounts; i++)
        fb_mountfs_set_check(ws->fs[i], check, ctx);
}

void fb_workspace_set_events(fb_workspace *ws, fb_ws_event_fn fn, void *ctx)
{
    ws->on_event = fn;
    ws->event_ctx = ctx;
}

int fb_workspace_serve_mount(void *ctx, size_t index, int fd, fb_error *err)
{
    fb_workspace *ws = ctx;
    return fb_mountfs_serve(ws->fs[index], fd, err);
}

/* ---- events: logged in order, and told to the host ---- */

static void event_strings_free(fb_ws_event *e)
{
    free((char *)e->path);
    free((char *)e->real_path);
    free((char *)e->rule);
    free((char *)e->error);
}

/* A copy of ev for the log (its static strings shared); 0, or -1 when out of memory. */
static int log_event(fb_ws_event_log *log, const fb_ws_event *ev)
{
    if (log->n == log->cap) {
        size_t ncap = log->cap ? log->cap * 2 : 16;
        fb_ws_event *nv = reallocarray(log->v, ncap, sizeof *nv);
        if (!nv)
            return -1;
        log->v = nv;
        log->cap = ncap;
    }
    fb_ws_event c = *ev;
    c.path = ev->path ? strdup(ev->path) : NULL;
    c.real_path = ev->real_path ? strdup(ev->real_path) : NULL;
    c.rule = ev->rule ? strdup(ev->rule) : NULL;
    c.error = ev->error ? strdup(ev->error) : NULL;
    if ((ev->path && !c.path) || (ev->real_path && !c.real_path) || (ev->rule && !c.rule) ||
        (ev->error && !c.error)) {
        event_strings_free(&c);
        return -1;
    }
    log->v[log->n++] = c;
    return 0;
}

/* Logs ev (when log; an entry that does not fit in memory is left out, as the event still reaches the
 * host) and asks the host's callback: its answer (GO without a callback). */
static fb_sync_decision emit(fb_workspace *ws, const fb_ws_event *ev, bool log)
{
    if (log)
        (void)log_event(&ws->events, ev);
    return ws->on_event ? ws->on_event(ws->event_ctx, ev) : FB_SYNC_GO;
}

static fb_sync_decision before_sync(void *ctx, const fb_change *ch, const char *host_path)
{
    fb_ws_event ev = {.type = "beforeSync", .path = ch->path, .real_path = host_path,
                      .change = fb_change_kind_name(ch->kind), .file_type = fb_file_type_name(ch->type)};
    return emit(ctx, &ev, true);
}

static void after_sync(void *ctx, const fb_change *ch, const fb_sync_item *it)
{
    bool ok = it->state == FB_SYNC_ITEM_SYNCED;
    fb_ws_event ev = {.type = "afterSync", .path = ch->path, .real_path = it->host_path,
                      .change = fb_change_kind_name(ch->kind), .file_type = fb_file_type_name(ch->type),
                      .success = ok, .error = ok ? NULL : it->error};
    emit(ctx, &ev, true);
    if (!ok) {
        fb_ws_event e2 = {.type = "syncError", .path = ch->path, .real_path = it->host_path,
                          .change = ev.change, .file_type = ev.file_type, .error = it->error};
        emit(ctx, &e2, true);
    }
}

static void emit_denials(fb_workspace *ws)
{
    for (size_t i = 0; i < ws->nmounts; i++) {
        const fb_denial_list *d = ws->logs[i].denials;
        for (size_t j = 0; j < d->n; j++) {
            fb_ws_event ev = {.type = "permissionDenied", .path = d->v[j].path, .operation = d->v[j].operation,
                              .rule = d->v[j].rule};
            emit(ws, &ev, ws->cfg.log_denied);
        }
    }
}

/* ---- after the call ---- */

static void read_mount_logs(fb_workspace *ws)
{
    for (size_t i = 0; i < ws->nmounts; i++) {
        fb_ws_mount_log *l = &ws->logs[i];
        l->path = ws->mount_paths[i];
        l->denials = fb_mountfs_denials(ws->fs[i]);
        l->skipped = fb_mountfs_skipped(ws->fs[i], &l->nskipped);
        l->failure = fb_mountfs_failure(ws->fs[i]);
    }
}

int fb_workspace_collect(fb_workspace *ws, const int *scratch_fd, const char *const *scratch_path, size_t nscratch,
                         fb_error *err)
{
    for (size_t i = 0; i < ws->nmounts; i++)
        fb_mountfs_stop(ws->fs[i]);
    /* contents are needed to report them, and to sync (batch now, or manual later from the report) */
    const fb_mount_config *m = ws->cfg.mount;
    bool with_content = ws->cfg.with_content || ws->cfg.mount_content || (m && m->sync == FB_SYNC_BATCH);
    for (size_t i = 0; i < ws->nmounts; i++)
        if (fb_track_mount(ws->fs[i], with_content, &ws->changes, err) < 0)
            return -1;
    for (size_t i = 0; i < nscratch; i++)
        if (fb_track_scratch(scratch_fd[i], scratch_path[i], &ws->baseline, ws->cfg.with_content,
                             ws->cfg.track_max_entries, &ws->changes, err) < 0)
            return -1;
    fb_track_sort(&ws->changes);
    read_mount_logs(ws);
    emit_denials(ws);
    return 0;
}

/* ---- sync ---- */

/* The changes inside mounts, copied into in (each with the host entry it was based on): the rest is
 * scratch space, never the host's. */
static int changes_in_mounts(const fb_workspace *ws, fb_change_list *in, fb_error *err)
{
    for (size_t i = 0; i < ws->changes.n; i++) {
        const fb_change *c = &ws->changes.v[i];
        const char *rel;
        if (!fb_mount_find(ws->cfg.mount, c->path, &rel))
            continue;
        unsigned char *content = NULL;
        if (c->has_content && c->content_len && !(content = malloc(c->content_len)))
            return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "sync of %s", c->path);
        if (content)
            memcpy(content, c->content, c->content_len);
        if (fb_change_add(in, c->kind, c->type, c->path, c->size, c->mode, content, c->content_len, c->has_content,
                          err) < 0)
            return -1;
        in->v[in->n - 1].base = c->base; /* what the change was based on: sync refuses it if the host moved on */
    }
    return 0;
}

int fb_workspace_sync(fb_workspace *ws, bool call_succeeded, fb_error *err)
{
    const fb_mount_config *m = ws->cfg.mount;
    if (!m || m->sync != FB_SYNC_BATCH || (!call_succeeded && !m->sync_on_function_error))
        return 0; /* manual: the caller applies a subset later (`fnbox sync`); failed call: nothing by default */
    for (size_t i = 0; i < ws->nmounts; i++)
        if (fb_mountfs_failure(ws->fs[i]))
            return fb_set_error(err, FB_ERR_SYNC_FAILED, EIO, "mount %s failed during the call (%s): nothing synced",
                                ws->fs[i] ? ws->mount_paths[i] : "?", fb_mountfs_failure(ws->fs[i]));
    fb_change_list in_mounts = {0};
    int rc = changes_in_mounts(ws, &in_mounts, err);
    if (rc == 0 && in_mounts.n > 0) {
        /* the rules, and the host's callback, are asked once more for each change */
        fb_sync_options opt = {.on_error = -1, .before = before_sync, .after = after_sync, .ctx = ws,
                               .check = ws->check, .check_ctx = ws->check_ctx};
        rc = fb_sync_apply_ex(m, &in_mounts, &opt, &ws->sync, err);
        ws->synced = true;
    }
    fb_change_list_free(&in_mounts);
    return rc;
}

/* ---- a session's sync: the servers paused, not stopped ---- */

static int take_denials(fb_workspace *ws, fb_ws_live_sync *out, fb_error *err)
{
    int rc = 0;
    for (size_t i = 0; i < ws->nmounts; i++) {
        fb_denial_list d;
        size_t dropped;
        fb_mountfs_take_denials(ws->fs[i], &d, &dropped);
        out->denied_dropped += dropped;
        for (size_t j = 0; rc == 0 && j < d.n; j++)
            rc = fb_denial_add(&out->denied, d.v[j].path, d.v[j].operation, d.v[j].rule, err);
        fb_denial_list_free(&d);
    }
    return rc;
}

/* What the sync wrote is the host's now: the base of the view's later changes there. */
static void rebase_synced(fb_workspace *ws, const fb_sync_report *rep)
{
    for (size_t i = 0; i < rep->n; i++) {
        const char *rel;
        const fb_mount_dir *d = rep->items[i].state == FB_SYNC_ITEM_SYNCED
                                    ? fb_mount_find(ws->cfg.mount, rep->items[i].path, &rel)
                                    : NULL;
        size_t mi = d ? (size_t)(d - ws->cfg.mount->dirs) : ws->nmounts;
        if (mi < ws->nmounts)
            fb_mountfs_rebase(ws->fs[mi], rel);
    }
}

static int sync_paused(fb_workspace *ws, int on_error, fb_ws_live_sync *out, fb_error *err)
{
    for (size_t i = 0; i < ws->nmounts; i++)
        if (fb_mountfs_failure(ws->fs[i]))
            return fb_set_error(err, FB_ERR_SYNC_FAILED, EIO, "mount %s failed (%s): nothing synced",
                                ws->mount_paths[i], fb_mountfs_failure(ws->fs[i]));
    for (size_t i = 0; i < ws->nmounts; i++)
        if (fb_track_mount(ws->fs[i], true, &out->changes, err) < 0)
            return -1;
    fb_track_sort(&out->changes);
    if (take_denials(ws, out, err) < 0)
        return -1;
    fb_sync_options opt = {.on_error = on_error, .check = ws->check, .check_ctx = ws->check_ctx};
    int rc = fb_sync_apply_ex(ws->cfg.mount, &out->changes, &opt, &out->report, err);
    rebase_synced(ws, &out->report);
    return rc;
}

int fb_workspace_sync_live(fb_workspace *ws, int on_error, fb_ws_live_sync *out, fb_error *err)
{
    memset(out, 0, sizeof *out);
    out->report.on_error = on_error >= 0 ? (fb_sync_on_error)on_error
                           : ws->cfg.mount ? ws->cfg.mount->on_error : FB_ON_ERROR_ROLLBACK;
    if (!ws->cfg.mount)
        return fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, "sync: the session has no mount");
    for (size_t i = 0; i < ws->nmounts; i++)
        fb_mountfs_pause(ws->fs[i]);
    int rc = sync_paused(ws, on_error, out, err);
    for (size_t i = ws->nmounts; i-- > 0;)
        fb_mountfs_resume(ws->fs[i]);
    return rc;
}

void fb_ws_live_sync_free(fb_ws_live_sync *s)
{
    fb_change_list_free(&s->changes);
    fb_denial_list_free(&s->denied);
    fb_sync_report_free(&s->report);
    memset(s, 0, sizeof *s);
}

void fb_workspace_free(fb_workspace *ws)
{
    if (ws->preset_release)
        ws->preset_release(ws->preset_ctx);
    for (size_t i = 0; i < ws->events.n; i++)
        event_strings_free(&ws->events.v[i]);
    free(ws->events.v);
    for (size_t i = 0; i < ws->nmounts; i++)
        fb_mountfs_free(ws->fs[i]);
    free(ws->staged);
    fb_baseline_free(&ws->baseline);
    fb_change_list_free(&ws->changes);
    fb_sync_report_free(&ws->sync);
    memset(ws, 0, sizeof *ws);
}
