/* File operations inside a sandbox's root, done by fnbox on the host's behalf (a session's read, write,
 * remove and list). The sandbox's code may have planted anything there (symlinks to "/", "..", FIFOs,
 * huge or endless files), and fnbox may be host root, so every operation:
 *   - resolves its path with openat2(RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS) from an fd of the sandbox's
 *     root: symlinks and ".." resolve as they would inside, never to a host path, and /proc's magic links
 *     are refused;
 *   - runs on a thread of its own whose file-system credentials are the sandbox user's (setfsuid and
 *     setfsgid, no supplementary groups: per thread in Linux), so the kernel checks each access as if the
 *     sandboxed code made it: root's capabilities are not used to read a file the sandbox itself cannot,
 *     and what it writes belongs to the sandbox user;
 *   - opens only regular files (non-blocking, so a FIFO cannot hang it) and reads at most a given size.
 * Paths are absolute and lexically normalised by fb_inroot_normalize. openat2 (Linux 5.6) is required:
 * without it they fail closed with KernelFeatureMissing. */
#ifndef FB_FS_INROOT_H
#define FB_FS_INROOT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/buf.h"
#include "util/error.h"

typedef struct fb_inroot {
    int root_fd;            /* O_PATH fd of the sandbox's root directory (not owned) */
    uid_t uid;              /* the sandbox user, as the host sees it */
    gid_t gid;
    bool switch_creds;      /* fnbox runs as root: act as uid/gid (otherwise it already is that user) */
} fb_inroot;

typedef struct fb_inroot_entry {
    char *name;
    bool is_dir;
    uint64_t size;
} fb_inroot_entry;

/* Resolves path (absolute, or relative to cwd, itself absolute) lexically: no "." or ".." segments, no
 * doubled or trailing '/'. "/" stays "/". *out is allocated. Errors name `field`: empty path, a NUL,
 * over PATH_MAX. */
int fb_inroot_normalize(const char *cwd, const char *path, size_t len, const char *field, char **out,
                        fb_error *err);

/* Reads the regular file at path into out (at most max bytes: a larger file is FB_ERR_INVALID_REQUEST
 * naming the limit). FB_ERR_NOT_FOUND when it does not exist (or is not a regular file: err says so). */
int fb_inroot_read(const fb_inroot *r, const char *path, size_t max, fb_buf *out, fb_error *err);
/* Writes data as the file at path (mode 0644), creating missing parent directories (0755). The file is
 * replaced whole, through a temporary name and rename, so no reader ever sees half of it. */
int fb_inroot_write(const fb_inroot *r, const char *path, const void *data, size_t len, fb_error *err);
/* The same with another mode (& 0777), e.g. 0755 for a program. */
int fb_inroot_write_mode(const fb_inroot *r, const char *path, const void *data, size_t len, mode_t mode,
                         fb_error *err);
/* Removes the file (or empty directory) at path. FB_ERR_NOT_FOUND when there is none. */
int fb_inroot_remove(const fb_inroot *r, const char *path, fb_error *err);
/* Lists the directory at path, sorted by name, without "." and "..": *entries (allocated, *n of them) for
 * fb_inroot_entries_free. A symlink is listed as itself (not a directory, its own size). At most max
 * entries (more: FB_ERR_INVALID_REQUEST). FB_ERR_NOT_FOUND when path is missing or not a directory. */
int fb_inroot_list(const fb_inroot *r, const char *path, size_t max, fb_inroot_entry **entries, size_t *n,
                   fb_error *err);
void fb_inroot_entries_free(fb_inroot_entry *entries, size_t n);
/* The directory path, made (with its missing parents, as the sandbox user) when it is not there: 0 once it
 * is a directory the sandbox user can enter; PermissionDenied where that user may not create it. */
int fb_inroot_make_dir(const fb_inroot *r, const char *path, fb_error *err);

#endif
