/* One host mount as the function sees it: a FUSE file system served by fnbox for the duration of a call.
 * Reads come from the host directory, resolved beneath its root (never outside it, whatever links or
 * `..` the tree holds); every create, modify and delete lands in an in-memory upper layer (overlay.c)
 * and is checked against the mount's permission rules at the moment it is attempted. After the call the
 * upper layer is turned into a change list; the host is only written by sync.c, later.
 * Life cycle: open -> [add_file...] -> serve(fd from the sandbox) -> (call runs) -> stop -> changes -> free. */
#ifndef FB_FS_MOUNTFS_H
#define FB_FS_MOUNTFS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
/* Stops serving and joins the thread. Call only once every sandboxed process is gone. Idempotent. */
void fb_mountfs_stop(fb_mountfs *fs);
/* Appends what the function changed (sorted by path). Contents kept when with_content. */
int fb_mountfs_changes(fb_mountfs *fs, bool with_content, fb_change_list *out, fb_error *err);
const fb_denial_list *fb_mountfs_denials(const fb_mountfs *fs);
const fb_skipped *fb_mountfs_skipped(const fb_mountfs *fs, size_t *n);
/* A failure inside the server (e.g. out of memory) that the function saw as EIO; NULL if none. */
const char *fb_mountfs_failure(const fb_mountfs *fs);
void fb_mountfs_free(fb_mountfs *fs);

#endif
