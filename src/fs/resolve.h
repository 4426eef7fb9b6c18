/* Beneath-only host path operations: every host path fnbox writes (sync) is reached from an O_PATH fd of
 * the mount root with openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS), so no
 * symlink, `..` or absolute path anywhere in it can lead outside the root (or anywhere else): a symlink in
 * the way is an error (ELOOP), never followed. The last component is then handled with *at() calls on
 * the parent's fd and a single name, with O_NOFOLLOW / AT_SYMLINK_NOFOLLOW.
 *
 * openat2 (Linux 5.6) is required: without it these functions fail closed with "KernelFeatureMissing"
 * (there is no path-walking fallback, see docs/internals/sync.md). Every fd returned is O_CLOEXEC and
 * owned by the caller. Relative paths ("rel") are '/'-separated, with no leading slash; "" is the root. */
#ifndef FB_FS_RESOLVE_H
#define FB_FS_RESOLVE_H
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "util/error.h"

/* 0 when openat2 with the beneath flags works here (probed once, cached); -1 with a
 * "KernelFeatureMissing" error naming the fix otherwise. */
int fb_resolve_available(fb_error *err);

/* Tests only: pretend openat2 is missing (true) or probe again (false). */
void fb_resolve_force_missing(bool missing);

/* Checks rel's syntax without touching the filesystem: no leading or doubled '/', no trailing '/', no
 * "." or ".." segment, no segment longer than NAME_MAX (255 bytes), shorter than PATH_MAX in all.
 * "" (the root) is valid. Errors are "HostPathError" naming what is wrong; `what` prefixes them. */
int fb_resolve_check_rel(const char *rel, const char *what, fb_error *err);

/* Opens the mount root (an absolute host directory, itself not a symlink) as O_PATH | O_DIRECTORY. */
int fb_resolve_open_root(const char *host_path, fb_error *err);

/* openat2(root_fd, rel) beneath the root, never following a symlink (not even in the last component).
 * flags are open(2)'s (O_CLOEXEC and O_NOCTTY are added); mode is used with O_CREAT only. -1 with err
 * (err->err_no is the errno: ELOOP for a symlink in the way, ENOENT, ENOTDIR, EXDEV, ...). */
int fb_resolve_open(int root_fd, const char *rel, int flags, mode_t mode, fb_error *err);

/* Opens the directory that holds rel's last component (O_RDONLY | O_DIRECTORY, so it can be fsync'ed)
 * and points *base at that component inside rel. rel must not be "". */
int fb_resolve_open_parent(int root_fd, const char *rel, const char **base, fb_error *err);

/* Opens directory rel_dir beneath the root ("" = the root), creating its missing components one at a
 * time (mkdirat with mode & 0777, then opened beneath the root again, so a symlink swapped in meanwhile
 * is an error, not followed). *created_from receives the offset in rel_dir of the first component this
 * call created (strlen(rel_dir) when none was), so the caller can undo them. Returns an O_DIRECTORY fd. */
int fb_resolve_mkdirs(int root_fd, const char *rel_dir, mode_t mode, size_t *created_from, fb_error *err);

#endif
