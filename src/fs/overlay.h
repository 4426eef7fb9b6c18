/* The in-memory upper layer of a mount's view: every file, directory, symlink and deletion the function
 * made, keyed by the path relative to the mount root. Owned by one mountfs; single-threaded. Kept sorted
 * by path so that a directory's entries are one contiguous range (readdir) and lookups are O(log n). */
#ifndef FB_FS_OVERLAY_H
#define FB_FS_OVERLAY_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "fs/change.h"

typedef enum { OV_FILE, OV_DIR, OV_SYMLINK, OV_WHITEOUT } ov_kind;

typedef struct ov_entry {
    char *rel;              /* relative to the mount root, no leading slash ("" is the root) */
    ov_kind kind;
    unsigned char *data;    /* file content or symlink target */
    size_t len, cap;
    mode_t mode;            /* permission bits */
    struct timespec mtime;
    bool opaque;            /* a directory made where a deleted one was: hides the host's entries below */
    bool unreported;        /* made under onPermissionDenied "virtual" or "ignore": never reported/synced */
    bool baseline;          /* a request `files` entry: present before the call, not itself a change */
    unsigned char *baseline_data; /* content the baseline started with (to tell whether it changed) */
    size_t baseline_len;
    int open_count;         /* open handles (an "ignore" ghost disappears with its last handle) */
    bool ghost;             /* exists only while open (onPermissionDenied "ignore") */
    bool detached;          /* removed from the store while open: freed by the last ov_release */
    fb_host_stamp base;     /* mountfs' store of bases only: the host entry as first changed */
} ov_entry;

typedef struct ov_store {
    ov_entry **v;           /* sorted by rel (strcmp) */
    size_t n, cap;
    uint64_t bytes;         /* total content held */
    uint64_t max_bytes;     /* writes beyond this fail with ENOSPC */
} ov_store;

ov_entry *ov_find(const ov_store *s, const char *rel);
/* Inserts (or resets, keeping the position) the entry for rel; NULL on OOM. */
ov_entry *ov_put(ov_store *s, const char *rel, ov_kind kind, mode_t mode);
/* Removes rel from the store; the entry is freed now, or by ov_release when handles still hold it. */
void ov_remove(ov_store *s, const char *rel);
/* Moves the entry at from to the key to (replacing whatever is there); -ENOENT, -ENOMEM. */
int ov_rename(ov_store *s, const char *from, const char *to);
void ov_hold(ov_entry *e);
void ov_release(ov_store *s, ov_entry *e);
/* Sets content; -ENOSPC past the store's cap, -ENOMEM. */
int ov_write(ov_store *s, ov_entry *e, const void *buf, size_t len, off_t off);
int ov_truncate(ov_store *s, ov_entry *e, off_t size);
int ov_set_data(ov_store *s, ov_entry *e, const void *buf, size_t len);
/* Index of the first entry strictly inside directory dir ("" = root), for walking its range. */
size_t ov_children_start(const ov_store *s, const char *dir);
/* Whether e (at index i from ov_children_start) is inside dir; *direct set when it is a direct child. */
bool ov_in_dir(const ov_entry *e, const char *dir, bool *direct);
/* The host's entry at rel is hidden: rel or one of its ancestors is deleted or an opaque directory. */
bool ov_hides_lower(const ov_store *s, const char *rel);
void ov_store_free(ov_store *s);

#endif
