/* The result's file sections, rendered from the files stage's plain data (fs/workspace.h): `files`
 * (created / modified / deleted, denied, skipped, a mount server's error), `sync` (a batch sync's report)
 * and `events` (the ordered log). */
#ifndef FB_CORE_RESULT_FILES_H
#define FB_CORE_RESULT_FILES_H
#include "request/request.h"
#include "core/result.h"
#include "fs/workspace.h"
#include "util/error.h"

/* Adds them to r per the request's reporting options: no `files` at all under includeChanges false, no
 * `files.denied` under includeDenied false, no content under includeContents false. `sync` when a batch
 * sync ran, `events` when there is any. -1 (out of memory) when the sync report cannot be rendered. */
int fb_result_add_files(fb_result *r, const fb_workspace *ws, const fb_reporting *rep, fb_error *err);
/* Their parts, also a session sync's report: {created, modified, deleted} of l (contents when asked), and
 * [{path, operation, rule}] of d. NULL when out of memory. */
json_t *fb_result_changes_json(const fb_change_list *l, bool with_content);
json_t *fb_result_denials_json(const fb_denial_list *d);

#endif
