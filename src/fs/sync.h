/* Applying a change list to the host (docs/internals/sync.md). Every change is mapped to its mount, checked
 * against the mount's rules once more (and the host's callback, fb_sync_options.check: the final check, a
 * forbidden change is never written, whatever happened at operation time), and written atomically beneath
 * the mount root:
 *   files and symlinks: a temporary (O_EXCL) in the target's directory, fsync, then renameat2 over the
 *                       target (RENAME_NOREPLACE when the target is absent, so a file that appeared on the
 *                       host meanwhile is a conflict, never silently overwritten);
 *   directories:        mkdirat; missing parents of any change are created one component at a time;
 *   deletions:          unlinkat / unlinkat(AT_REMOVEDIR), children before parents.
 * Deletions run first (deepest first), then creations and modifications (shallowest first), so a path
 * whose type changed (file -> directory) is removed before it is created again.
 *
 * Run only after every sandboxed process is dead: nothing in the sandbox may race these writes. Host paths
 * are reached through resolve.c only (no symlink followed anywhere; never outside the mount root). */
#ifndef FB_FS_SYNC_H
#define FB_FS_SYNC_H
#include <stdbool.h>
#include <stddef.h>

#include "fs/change.h"
#include "fs/mount.h"
#include "util/error.h"

typedef enum {
    FB_SYNC_ITEM_NOT_ATTEMPTED, /* the sync stopped before this change (onError abort/rollback, or beforeSync) */
    FB_SYNC_ITEM_SYNCED,        /* the host now has it (also when there was nothing to do, e.g. already deleted) */
    FB_SYNC_ITEM_FAILED,        /* tried and failed; error says why; nothing of it is left on the host */
    FB_SYNC_ITEM_SKIPPED,       /* never tried by policy: outside every mount, a rule forbids it, the symlink
                                   policy refuses it, or the beforeSync hook skipped it; reason says which */
    FB_SYNC_ITEM_ROLLED_BACK,   /* applied, then undone because another change failed (onError rollback) */
} fb_sync_state;

typedef struct fb_sync_item {
    char *path;             /* the change's virtual path */
    char *host_path;        /* host file it maps to (mount's host dir + relative path); NULL outside mounts */
    fb_change_kind kind;
    fb_file_type type;
    const char *operation;  /* static: the operation the rules were asked about ("create", "modify",
                               "delete"), by the host's state at sync time; NULL if not reached */
    fb_sync_state state;
    char *error;            /* FAILED: why; ROLLED_BACK / SYNCED: an undo or clean-up step that failed */
    char *reason;           /* SKIPPED / NOT_ATTEMPTED: why */
    char *rule;             /* SKIPPED by the rules: the deciding rule */
} fb_sync_item;

typedef struct fb_sync_report {
    fb_sync_item *items;    /* one per change, in the change list's order */
    size_t n;
    size_t synced, failed, skipped, not_attempted, undone; /* items per state (undone = ROLLED_BACK) */
    fb_sync_on_error on_error;  /* the policy that was applied */
    bool rolled_back;       /* a failure made the sync undo what it had applied: the host is as before */
    bool rollback_failed;   /* an undo step failed (its item's error says which): the host may differ */
} fb_sync_report;

/* The beforeSync hook's answer for one change. */
typedef enum { FB_SYNC_GO, FB_SYNC_SKIP, FB_SYNC_ABORT } fb_sync_decision;

typedef struct fb_sync_options {
    int on_error; /* an fb_sync_on_error overriding the mount's sync.onError; -1 keeps the mount's */
    /* Called for each change that passed the path and mount checks, in application order, before the
     * rules check. SKIP: reported as skipped ("skipped by beforeSync"); ABORT: this change and the rest
     * are not attempted and the sync ends as on a failure (rolled back under "rollback", kept otherwise).
     * NULL: every change goes. */
    fb_sync_decision (*before)(void *ctx, const fb_change *change, const char *host_path);
    /* Called for each change right after it was tried (item state SYNCED or FAILED), in application
     * order; a later rollback does not call it again. NULL: none. ctx is shared with before. */
    void (*after)(void *ctx, const fb_change *change, const fb_sync_item *item);
    void *ctx;
    /* The host's say (fnbox_call_options' fs callback), asked for each change the rules allow, after the
     * rules check, with the change's virtual path and the operation the rules were asked about; 0 skips
     * the change like a rule would (rule "callback: <reason>"). NULL: the rules alone decide. */
    int (*check)(void *check_ctx, const char *path, const char *operation, char *reason, size_t reason_cap);
    void *check_ctx;
} fb_sync_options;

/* Applies changes to the host per m (m->on_error unless opt overrides it). Returns 0 when the sync ran,
 * whatever happened to each change (the report says; rep->failed > 0 means some failed); -1 with err
 * when it could not run at all (out of memory, openat2 missing: "KernelFeatureMissing"), in which case
 * the report is still valid and nothing was written. rep is filled in either case; free it with
 * fb_sync_report_free. */
int fb_sync_apply(const fb_mount_config *m, const fb_change_list *changes, fb_sync_report *rep, fb_error *err);
int fb_sync_apply_ex(const fb_mount_config *m, const fb_change_list *changes, const fb_sync_options *opt,
                     fb_sync_report *rep, fb_error *err);
void fb_sync_report_free(fb_sync_report *rep);

const char *fb_sync_state_name(fb_sync_state s); /* "notAttempted", "synced", "failed", "skipped", "rolledBack" */
const char *fb_sync_on_error_name(fb_sync_on_error e); /* "rollback", "continue", "abort" */


#endif
