/* The call's files, around the sandbox run (docs/design.md: core/workspace -> sandbox -> fs/track -> fs/sync):
 *   prepare: decode the request's `files`, open every mount's view (fs/mountfs), note what the scratch
 *            space starts with;
 *   attach:  tell the sandbox spec what to place and mount;
 *   collect: once every sandboxed process is gone, stop the mount servers, list what changed and emit
 *            the permissionDenied events;
 *   sync:    batch mode, after a successful call: apply the permitted changes to the host (fs/sync),
 *            emitting beforeSync / afterSync / syncError;
 *   report:  the result's `files` object (and `sync`, `events`).
 * One owner: the executor's fb_workspace, released by fb_workspace_free on every path. */
#ifndef FB_CORE_WORKSPACE_H
#define FB_CORE_WORKSPACE_H
#include <jansson.h>
#include <stdbool.h>

#include "request/request.h"
#include "fnbox.h"
#include "fs/change.h"
#include "fs/mountfs.h"
#include "fs/track.h"
#include "sandbox/sandbox.h"

typedef struct fb_workspace {
    const fb_request *req;
    fb_mountfs *fs[FB_SANDBOX_MAX_FUSE];
    const char *fuse_paths[FB_SANDBOX_MAX_FUSE];
    size_t nfs;
    fb_sandbox_file *user_files;   /* data owned (decoded from the request) */
    size_t nuser;
    fb_baseline baseline;          /* what the scratch space starts with */
    fb_change_list changes;        /* after collect */
    json_t *sync_report;           /* after sync: {synced, failed, skipped}; NULL when nothing was synced */
    bool synced;
    fb_fs_check check;             /* the host's say per access and before sync (NULL: the rules alone) */
    void *check_ctx;
    json_t *events;                /* the result's ordered `events` log (NULL until the first) */
    fnbox_event_fn on_event;       /* the host's event callback (NULL: the log only) */
    void *event_ctx;
    bool allow_abort;              /* beforeSync may abort the sync (syncEventConfig.allowAbort) */
} fb_workspace;

int fb_workspace_prepare(fb_workspace *ws, const fb_request *req, const fb_sandbox_limits *lim, fb_error *err);
/* The host's callback (fnbox_call_options' fs): asked by every mount server at each operation its rules
 * allow, and by sync for each change its rules allow. Call after prepare, before the sandbox runs. */
void fb_workspace_set_check(fb_workspace *ws, fb_fs_check check, void *ctx);
/* The host's event callback (fnbox_call_options' event; fnbox.h says which events, in which order). Every
 * event is also logged in the result's `events` (permissionDenied only with includeDenied). */
void fb_workspace_set_events(fb_workspace *ws, fnbox_event_fn fn, void *ctx, bool allow_abort);
void fb_workspace_attach(fb_workspace *ws, fb_sandbox_spec *spec);
int fb_workspace_collect(fb_workspace *ws, const fb_sandbox_outcome *out, fb_error *err);
/* Applies the changes when the mount's sync mode and the call's outcome allow it. */
int fb_workspace_sync(fb_workspace *ws, bool call_succeeded, fb_error *err);
/* Adds `files` (and `sync`, `events`) to the result object per the request's reporting options: no `files`
 * at all under includeChanges false, no `files.denied` under includeDenied false. */
int fb_workspace_report(const fb_workspace *ws, json_t *result, fb_error *err);
void fb_workspace_free(fb_workspace *ws);

#endif
