/* What the function changed, for every area it could write: one module owns the change list and the rules
 * of what counts as a change (docs/internals/mounts.md, "After the call"). Runs after every sandboxed
 * process is gone, so nothing moves underneath it.
 *   scratch space (the writable tmpfs areas outside every mount): the tree as left behind, walked beneath
 *     the tmpfs roots the sandbox handed out (no link followed), against what it started with (the
 *     baseline: the request's files and the sandbox's own entries);
 *   mounts: the view's upper layer (fs/overlay.h, what the function made) against the host now, read
 *     beneath the mount root as the view reads it (fs/mountfs.h).
 * In both, content equal to what was there before is no change: an identical rewrite is never reported. */
#ifndef FB_FS_TRACK_H
#define FB_FS_TRACK_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fs/change.h"
#include "fs/mountfs.h"
#include "util/error.h"

typedef struct fb_baseline_entry {
    char *path;             /* absolute virtual path */
    const char *area;       /* the scratch root it was added under (borrowed, as given to fb_baseline_add) */
    bool dir;
    bool skip;              /* a mount point: neither walked nor reported */
    const unsigned char *data; /* a file's starting content (borrowed) */
    size_t len;
} fb_baseline_entry;

typedef struct fb_baseline {
    fb_baseline_entry *v;   /* sorted by path once fb_baseline_seal ran */
    size_t n, cap;
} fb_baseline;

/* Adds a file (data borrowed: it must outlive the baseline) and its missing parent directories up to
 * (not including) root, all in root's area (root borrowed too); or a directory (data NULL, dir true). */
int fb_baseline_add(fb_baseline *b, const char *root, const char *path, bool dir, bool skip,
                    const unsigned char *data, size_t len, fb_error *err);
void fb_baseline_seal(fb_baseline *b);
void fb_baseline_free(fb_baseline *b);

/* Walks the tree under root_fd, which the function saw at vroot, and appends the differences from b
 * (created, modified, deleted) to out. Contents kept when with_content. At most max_entries are walked. */
int fb_track_scratch(int root_fd, const char *vroot, const fb_baseline *b, bool with_content, size_t max_entries,
                     fb_change_list *out, fb_error *err);

/* Appends what the function changed in the mount fs (stopped: fb_mountfs_stop): created and modified
 * entries of the upper layer that differ from the host (type, content, mode), deletions (a whiteout over
 * an entry the host has). Not reported: what was made under onPermissionDenied "virtual"/"ignore", a
 * request file left as it came, an excluded path. Contents kept when with_content. */
int fb_track_mount(const fb_mountfs *fs, bool with_content, fb_change_list *out, fb_error *err);

/* Sorts by path: the order the result lists changes in and sync takes them in. */
void fb_track_sort(fb_change_list *l);

#endif
