/* The call's files around the sandbox run: DESIGN's `fs` stage (docs/design.md: fs/workspace -> sandbox ->
 * fs/track -> fs/sync):
 *   prepare: open every mount's view (fs/mountfs), place the request's files (in a mount's view, or staged
 *            for the sandbox to write into a scratch area), note what the scratch space starts with;
 *   serve:   each mount's FUSE connection, as the sandbox hands it out (fb_workspace_serve_mount);
 *   collect: once every sandboxed process is gone, stop the mount servers, list what changed (fs/track)
 *            and emit the permissionDenied events;
 *   sync:    batch mode, after a successful call: apply the permitted changes to the host (fs/sync),
 *            emitting beforeSync / afterSync / syncError.
 * Everything it takes and leaves is plain data: the caller decodes the request into fb_workspace_config,
 * fills the sandbox spec from mount_paths / staged, and renders the report (changes, mount logs, sync,
 * events) as JSON. fs/ includes neither core/ nor sandbox/: what it must know of the sandbox's layout comes
 * in fb_ws_layout.
 * One owner: the caller's fb_workspace, released by fb_workspace_free on every path. */
#ifndef FB_FS_WORKSPACE_H
#define FB_FS_WORKSPACE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fs/change.h"
#include "fs/mount.h"
#include "fs/mountfs.h"
#include "fs/sync.h"
#include "fs/track.h"
#include "util/error.h"

#define FB_WORKSPACE_MAX_MOUNTS 16 /* mount.dirs entries: one FUSE connection each, passed out of the sandbox */

/* One entry of the request's `files`, decoded: the data the function finds at path before it starts. */
typedef struct fb_ws_file {
    char *name;             /* the key as the request gave it (messages name it) */
    char *path;             /* absolute, normalized path inside the sandbox (relative keys: under the workdir) */
    unsigned char *data;
    size_t len;
} fb_ws_file;

typedef struct fb_ws_files {
    fb_ws_file *v;
    size_t n;
} fb_ws_files;

/* What the sandbox keeps for itself (sandbox/sandbox.h knows; the caller passes it on): no request file
 * may go there, and the root's scratch area starts with these entries, which are not the function's. */
typedef struct fb_ws_layout {
    bool (*reserved)(const char *path);   /* at or under what the root keeps read-only */
    const char *const *reserved_roots;    /* the top-level paths it reserves */
    size_t nreserved_roots;
} fb_ws_layout;

typedef struct fb_workspace_config {
    const char *workdir;               /* absolute; the function's cwd */
    const fb_mount_config *mount;      /* NULL: no mount. Borrowed: outlives the workspace */
    const fb_ws_files *files;          /* the request's files (NULL: none). Borrowed: outlives the workspace */
    /* Files the environment puts in the scratch space before the request's: the caches its libraries would
     * otherwise rebuild at every start (core/env_caches.h). Like the request's, each is in the baseline
     * with its data, so it is reported only if the function changes it; one a request file covers, or that
     * would land in a mount or in a directory the sandbox needs, is left out. NULL: none. Borrowed:
     * outlives the workspace (preset_release). */
    const fb_ws_files *preset;
    uint64_t view_bytes;               /* what the function may write into each mount's view (ENOSPC beyond) */
    size_t track_max_entries;          /* scratch entries walked per area after the call */
    bool with_content;                 /* report contents (reporting includeContents) */
    bool mount_content;                /* the mounts' changes keep their contents whatever with_content says
                                          (an execute's report: its scratch space without, its mounts with) */
    bool log_denied;                   /* permissionDenied events go in the log (reporting includeDenied) */
    fb_ws_layout layout;
} fb_workspace_config;

/* One event of the files stage, in the seed's vocabulary: "permissionDenied" (path, operation, rule),
 * "beforeSync" (path, real_path, change, file_type), "afterSync" (the same, success, error when it failed),
 * "syncError" (the same, error). Fields an event does not have are NULL. */
typedef struct fb_ws_event {
    const char *type, *path, *real_path, *change, *file_type, *operation, *rule, *error;
    bool success;
} fb_ws_event;

/* The host's say, told each event as it happens (on the calling thread, after the function ended); the
 * answer matters for beforeSync only. The strings live until it returns. */
typedef fb_sync_decision (*fb_ws_event_fn)(void *ctx, const fb_ws_event *ev);

typedef struct fb_ws_event_log {   /* the result's `events`, in order; the strings are the log's own */
    fb_ws_event *v;
    size_t n, cap;
} fb_ws_event_log;

/* What one mount's server recorded during the call (borrowed from its view; valid until
 * fb_workspace_free), in mount order. */
typedef struct fb_ws_mount_log {
    const char *path;                  /* the mount's virtual root */
    const fb_denial_list *denials;     /* every refused operation */
    const fb_skipped *skipped;         /* host files the view left out */
    size_t nskipped;
    const char *failure;               /* a failure inside the server the function saw as EIO; NULL if none */
} fb_ws_mount_log;

typedef struct fb_workspace {
    fb_workspace_config cfg;
    fb_mountfs *fs[FB_WORKSPACE_MAX_MOUNTS];
    const char *mount_paths[FB_WORKSPACE_MAX_MOUNTS]; /* each view's virtual root: the FUSE mount points */
    size_t nmounts;
    fb_ws_file *staged;            /* request files outside mounts, for the sandbox to write (the array is
                                      the workspace's; the strings and data in it are borrowed from cfg.files) */
    size_t nstaged;
    fb_baseline baseline;          /* what the scratch space starts with */
    void (*preset_release)(void *ctx); /* called by fb_workspace_free: the owner of cfg.preset lets it go */
    void *preset_ctx;
    fb_fs_check check;             /* the host's say per access and before sync (NULL: the rules alone) */
    void *check_ctx;
    fb_ws_event_fn on_event;       /* NULL: the log only */
    void *event_ctx;
    /* after collect */
    fb_change_list changes;        /* every area, sorted by path */
    fb_ws_mount_log logs[FB_WORKSPACE_MAX_MOUNTS]; /* nmounts of them */
    /* after sync */
    bool synced;                   /* a batch sync ran: sync is its report */
    fb_sync_report sync;
    fb_ws_event_log events;
} fb_workspace;

/* Opens the mounts' views and places the request's files. cfg is copied; what it points to is borrowed. */
int fb_workspace_prepare(fb_workspace *ws, const fb_workspace_config *cfg, fb_error *err);
/* The host's callback (fnbox_call_options' fs): asked by every mount server at each operation its rules
 * allow, and by sync for each change its rules allow. Call after prepare, before the sandbox runs. */
void fb_workspace_set_check(fb_workspace *ws, fb_fs_check check, void *ctx);
/* The host's event callback. Every event is also logged (permissionDenied only with cfg.log_denied). */
void fb_workspace_set_events(fb_workspace *ws, fb_ws_event_fn fn, void *ctx);
/* Serves mount index's FUSE connection fd (ownership passes, even on failure). ctx: the workspace. Shaped
 * as the sandbox spec's on_fuse. */
int fb_workspace_serve_mount(void *ctx, size_t index, int fd, fb_error *err);
/* Once every sandboxed process is gone: stops the servers and lists the changes. scratch_fd / scratch_path:
 * the writable tmpfs roots the sandbox handed out (O_PATH) and where the function saw them. */
int fb_workspace_collect(fb_workspace *ws, const int *scratch_fd, const char *const *scratch_path, size_t nscratch,
                         fb_error *err);
/* Applies the changes when the mount's sync mode and the call's outcome allow it. */
int fb_workspace_sync(fb_workspace *ws, bool call_succeeded, fb_error *err);
/* A session's sync, while its sandbox runs (sessions keep the mounts' servers for their whole life; sync is
 * explicit and closing never syncs). One sync at a time per workspace (the caller serializes). */
typedef struct fb_ws_live_sync {
    fb_change_list changes;        /* what changed in the mounts since they opened, as the host stands now
                                      (what an earlier sync wrote is no longer a change), sorted by path */
    fb_denial_list denied;         /* refusals recorded since the last sync, every mount's, in mount order */
    size_t denied_dropped;         /* refusals past the servers' cap, counted only */
    fb_sync_report report;         /* the sync of changes */
} fb_ws_live_sync;
/* Pauses every mount's server (the sandboxed processes wait), lists the changes, applies them as batch
 * sync does (the rules and the host's check once more; on_error an fb_sync_on_error, -1 keeps the mount's),
 * takes the refusals, resumes. 0 when the sync ran (out->report says what happened to each change); -1
 * with err when it could not (a mount server failed: "SyncFailed", nothing written; out of memory). out is
 * filled either way; free it with fb_ws_live_sync_free. */
int fb_workspace_sync_live(fb_workspace *ws, int on_error, fb_ws_live_sync *out, fb_error *err);
void fb_ws_live_sync_free(fb_ws_live_sync *s);
void fb_workspace_free(fb_workspace *ws);

#endif
