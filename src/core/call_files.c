/* The files stage as one call runs it (see call_files.h). */
#include "core/call_files.h"

#include <errno.h>
#include <stdlib.h>

#include "core/env_caches.h"
#include "request/limits.h"

/* fs/ does not include sandbox/: the stage's own cap must fit what the sandbox passes out. */
_Static_assert(FB_WORKSPACE_MAX_MOUNTS <= FB_SANDBOX_MAX_FUSE, "each mount is one FUSE connection");

int fb_files_prepare(fb_workspace *ws, const char *workdir, const fb_mount_config *mount, const fb_reporting *rep,
                     bool mount_content, const fb_ws_files *files, bool env_caches, const fb_sandbox_limits *lim,
                     fb_error *err)
{
    fb_env_caches *caches = env_caches ? fb_env_caches_get("/") : NULL;
    const char *const *reserved;
    size_t nreserved = fb_sandbox_reserved_roots(&reserved);
    fb_workspace_config cfg = {
        .workdir = workdir,
        .mount = mount,
        .files = files,
        .view_bytes = lim->workspace_bytes,
        .track_max_entries = FB_DEFAULT_TMPFS_INODES,
        .with_content = rep->include_contents,
        .mount_content = mount_content,
        .log_denied = rep->include_denied,
        .layout = {.reserved = fb_sandbox_reserved_path, .reserved_roots = reserved, .nreserved_roots = nreserved},
        .preset = caches ? fb_env_caches_files(caches) : NULL,
    };
    int rc = fb_workspace_prepare(ws, &cfg, err);
    ws->preset_release = fb_env_caches_release; /* the workspace holds the reference from here, on every path */
    ws->preset_ctx = caches;
    return rc;
}

int fb_call_files_prepare(fb_workspace *ws, const fb_request *req, const fb_ws_files *files, bool env_caches,
                          const fb_sandbox_limits *lim, fb_error *err)
{
    return fb_files_prepare(ws, req->workdir, req->mount, &req->reporting, false, files, env_caches, lim, err);
}

/* The stage's event as the C API's, and the host's answer as the stage's: ABORT only when the caller
 * allowed it (the seed's syncEventConfig.allowAbort), else it skips. */
static fb_sync_decision tell_host(void *ctx, const fb_ws_event *ev)
{
    const fnbox_call_options *o = ctx;
    fnbox_event e = {.type = ev->type, .path = ev->path, .real_path = ev->real_path, .change = ev->change,
                     .file_type = ev->file_type, .operation = ev->operation, .rule = ev->rule,
                     .success = ev->success, .error = ev->error};
    switch (o->event(o->event_ctx, &e)) {
    case FNBOX_SYNC_SKIP: return FB_SYNC_SKIP;
    case FNBOX_SYNC_ABORT: return o->sync_allow_abort ? FB_SYNC_ABORT : FB_SYNC_SKIP;
    default: return FB_SYNC_GO;
    }
}

void fb_call_files_events(fb_workspace *ws, const fnbox_call_options *opts)
{
    fb_workspace_set_events(ws, opts->event ? tell_host : NULL, (void *)opts);
}

int fb_call_files_attach(fb_workspace *ws, bool keep_scratch, fb_sandbox_spec *spec, fb_sandbox_file **staged,
                         fb_error *err)
{
    *staged = NULL;
    if (ws->nstaged && !(*staged = calloc(ws->nstaged, sizeof **staged)))
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "files: %zu to place", ws->nstaged);
    for (size_t i = 0; i < ws->nstaged; i++) {
        const fb_ws_file *f = &ws->staged[i];
        (*staged)[i] = (fb_sandbox_file){.path = f->path, .data = (const char *)f->data, .len = f->len};
    }
    spec->user_files = *staged;
    spec->nuser_files = ws->nstaged;
    spec->fuse_paths = ws->mount_paths;
    spec->nfuse = ws->nmounts;
    spec->on_fuse = fb_workspace_serve_mount;
    spec->fuse_ctx = ws;
    spec->keep_scratch = keep_scratch;
    return 0;
}
