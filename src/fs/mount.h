/* The request's `mount` object, decoded and checked (request/mount.c decodes it): which host directories
 * appear where, what the function may do there, how they are loaded and how changes go back. Plain data;
 * fb_mount_config_free releases everything. Rule evaluation itself lives in rules.c. */
#ifndef FB_FS_MOUNT_H
#define FB_FS_MOUNT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fs/rules.h"
#include "util/error.h"

typedef enum { FB_LOAD_EAGER, FB_LOAD_LAZY, FB_LOAD_EXPLICIT } fb_load_mode;
typedef enum { FB_SYNC_BATCH, FB_SYNC_MANUAL } fb_sync_mode;
typedef enum { FB_ON_ERROR_ROLLBACK, FB_ON_ERROR_CONTINUE, FB_ON_ERROR_ABORT } fb_sync_on_error;
typedef enum { FB_SYMLINKS_NO, FB_SYMLINKS_YES, FB_SYMLINKS_RESTRICTED } fb_symlinks;
typedef enum { FB_DENIED_THROW, FB_DENIED_IGNORE, FB_DENIED_VIRTUAL } fb_on_denied;

typedef struct fb_mount_dir {
    char *virtual_path;      /* absolute, normalized, no trailing slash, e.g. "/data" */
    char *host_path;         /* absolute canonical host directory (realpath of the request's path) */
} fb_mount_dir;

typedef struct fb_mount_config {
    fb_mount_dir *dirs;      /* sorted by virtual_path; never nested in one another */
    size_t ndirs;
    fb_rules *rules;         /* permissions (defaults when the request gave none); never NULL after parse */
    fb_load_mode load;       /* default lazy */
    char **include;          /* loading.include patterns (explicit mode), relative to each mount's root */
    size_t ninclude;
    uint64_t max_file_size;  /* 0 = no limit */
    uint64_t max_total_size; /* 0 = no limit */
    fb_sync_mode sync;                 /* default manual: only sync.mode "batch" writes to the host */
    fb_sync_on_error on_error;         /* default rollback */
    bool sync_on_function_error;       /* sync.onFunctionError == "sync"; default false */
    fb_symlinks symlinks;              /* security.followSymlinks; default false */
    fb_on_denied on_denied;            /* onPermissionDenied; default throw */
} fb_mount_config;

void fb_mount_config_free(fb_mount_config *m);

/* The mount whose virtual root is vpath or an ancestor of it; *rel gets the path relative to that root
 * ("" for the root itself). vpath must be normalized (absolute, no "//", ".", ".." or trailing '/'), as
 * every caller's is: then *rel never starts with a slash. NULL when vpath is outside every mount. */
const fb_mount_dir *fb_mount_find(const fb_mount_config *m, const char *vpath, const char **rel);

#endif
