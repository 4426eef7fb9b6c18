/* One host mount as the function sees it: a FUSE file system served by fnbox for the duration of a call.
 * Reads come from the host directory, resolved beneath its root (never outside it, whatever links or
 * `..` the tree holds); every create, modify and delete lands in an in-memory upper layer (overlay.c)
 * and is checked against the mount's permission rules at the moment it is attempted. After the call
 * fs/track.c compares the upper layer with the host and lists what changed; the host is only written by
 * sync.c, later.
 * Life cycle: open -> [add_file...] -> serve(fd from the sandbox) -> (call runs) -> stop -> fb_track_mount
 * -> free; a session's: ... serve -> (pause -> fb_track_mount -> sync -> resume)* -> stop -> free. */
#ifndef FB_FS_MOUNTFS_H
#define FB_FS_MOUNTFS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "fs/change.h"
#include "fs/mount.h"
#include "util/error.h"

typedef struct fb_mountfs fb_mountfs;

/* A host file the view leaves out (loading limits, host symlinks under followSymlinks:false, ...). */
typedef struct fb_skipped {
    char *path;             /* absolute virtual path */
    const char *reason;     /* static: "maxFileSize", "maxTotalSize", "symlink" */
    uint64_t size;
} fb_skipped;

/* Opens the host directory of dir (which must stay alive, as must cfg) and, in eager mode, walks it to
 * decide up front which files the loading limits leave out. max_upper_bytes caps what the function can
 * write into the view (ENOSPC beyond). */
int fb_mountfs_open(const fb_mount_config *cfg, const fb_mount_dir *dir, uint64_t max_upper_bytes,
                    fb_mountfs **out, fb_error *err);
/* The host's say per operation (fnbox_call_options' fs callback): called on the server thread for each
 * operation the mount's rules allow, with the virtual path ("/data/out/x.txt") and the operation's name
 * ("read", "list", "create", "modify", "delete"); nonzero allows, 0 denies (treated exactly as a rule's
 * denial, recorded with the rule "callback: <reason>"). reason is NUL-terminated by the caller. */
typedef int (*fb_fs_check)(void *ctx, const char *path, const char *operation, char *reason, size_t reason_cap);
#define FB_FS_REASON_MAX 256
/* Sets the callback (NULL: the rules alone decide). Call before fb_mountfs_serve. */
void fb_mountfs_set_check(fb_mountfs *fs, fb_fs_check check, void *ctx);
/* Places a request `files` entry (rel to the mount root) in the view before the call. */
int fb_mountfs_add_file(fb_mountfs *fs, const char *rel, const void *data, size_t len, fb_error *err);
/* Starts serving the FUSE connection fd (ownership passes to fs) on a thread of its own. */
int fb_mountfs_serve(fb_mountfs *fs, int fuse_fd, fb_error *err);
/* A session's mounts live on while their changes are synced: pause waits for the request being handled
 * (the next ones wait in the kernel: the sandboxed processes block) and holds the server until resume, so
 * fb_track_mount and fb_mountfs_take_denials may read the view as if stopped. Not while stopped. */
void fb_mountfs_pause(fb_mountfs *fs);
void fb_mountfs_resume(fb_mountfs *fs);
/* Stops serving and joins the thread. Call only once every sandboxed process is gone. Idempotent. */
void fb_mountfs_stop(fb_mountfs *fs);
#define FB_MOUNTFS_MAX_DENIALS 10000 /* refusals kept for the report; the rest are only counted */
const fb_denial_list *fb_mountfs_denials(const fb_mountfs *fs);
size_t fb_mountfs_denials_dropped(const fb_mountfs *fs);
/* Moves the refusals recorded so far into *out (the caller frees it) and starts a new list (paused). */
void fb_mountfs_take_denials(fb_mountfs *fs, fb_denial_list *out, size_t *dropped);
const fb_skipped *fb_mountfs_skipped(const fb_mountfs *fs, size_t *n);
/* A failure inside the server (e.g. out of memory) that the function saw as EIO; NULL if none. */
const char *fb_mountfs_failure(const fb_mountfs *fs);
void fb_mountfs_free(fb_mountfs *fs);

/* The view as change tracking reads it (fs/track.c, fb_track_mount), only once fb_mountfs_stop returned:
 * nothing changes it any more. */
const char *fb_mountfs_vroot(const fb_mountfs *fs);       /* the mount's virtual root, e.g. "/data" */
struct ov_store;                                          /* fs/overlay.h */
const struct ov_store *fb_mountfs_upper(const fb_mountfs *fs); /* what the function made, keyed by rel */
/* The host's entry at rel now, reached beneath the mount root as the view reaches it (followSymlinks);
 * the upper layer hides nothing from this question. 0 and *st, or -ENOENT. */
int fb_mountfs_host_stat(const fb_mountfs *fs, const char *rel, struct stat *st);
/* Opens the host's entry at rel the same way (flags as for openat2, O_CLOEXEC added): an fd, or -1. */
int fb_mountfs_host_open(const fb_mountfs *fs, const char *rel, int flags);
/* The host entry the view's change at rel was based on (fb_change.base): false when none was noted. */
bool fb_mountfs_base(const fb_mountfs *fs, const char *rel, fb_host_stamp *out);
/* After a sync wrote rel (paused): what the host has now is the base of later changes. */
void fb_mountfs_rebase(fb_mountfs *fs, const char *rel);
/* Whether `exclude` leaves rel out of the view: never the host's to change, whatever made the entry. */
bool fb_mountfs_excluded(const fb_mountfs *fs, const char *rel);

#endif
