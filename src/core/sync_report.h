/* Rendering fs/sync's report as JSON. */
#ifndef FB_CORE_SYNC_REPORT_H
#define FB_CORE_SYNC_REPORT_H
#include <jansson.h>

#include "fs/sync.h"

/* The report as the result's `files.sync` / `fnbox sync` prints it:
 *   {"success": bool, "synced": [path...], "failed": [{path, error}...], "skipped": [{path, reason[, rule]}...],
 *    "notAttempted": [path...], "rolledBack": bool, "undone": [path...], "onError": "rollback|continue|abort",
 *    "details": [{path, realPath, type, kind, status, operation?, error?, reason?, rule?}...],
 *    "deniedByPermissions": n, "message": "..."}
 * success is true when no change failed and no undo step failed. A skip by a rule or the host's callback
 * also has rule and operation (deniedByPermissions counts them); message says in one sentence what
 * reached the host ("nothing was written: the mount's permissions refused all 2 changes (...)"). Paths
 * that are not valid UTF-8 are shown with U+FFFD in place of the bad bytes. NULL on allocation failure. */
json_t *fb_sync_report_json(const fb_sync_report *rep);

#endif
