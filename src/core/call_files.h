/* The files stage (fs/workspace.h) as one call runs it: configured from the request and the sandbox's
 * layout, handed to the sandbox spec, its events told to the host through the C API's callback. Only glue:
 * what the stage does is fs/workspace.c's; its report is rendered by core/result_files.c. */
#ifndef FB_CORE_CALL_FILES_H
#define FB_CORE_CALL_FILES_H
#include <stdbool.h>

#include "request/request.h"
#include "fnbox.h"
#include "fs/workspace.h"
#include "sandbox/sandbox.h"

/* fb_workspace_prepare for req: its workdir, mount and reporting options, its decoded files (borrowed:
 * they must outlive ws), the environment's caches with env_caches (the language's: lang.h), the workspace
 * limit of lim. */
int fb_call_files_prepare(fb_workspace *ws, const fb_request *req, const fb_ws_files *files, bool env_caches,
                          const fb_sandbox_limits *lim, fb_error *err);
/* The same from its parts. mount_content: the mounts' changes keep their contents whatever rep says (an
 * execute request reports its scratch space by size, its mounts as a call does: fb_workspace_config).
 * env_caches: the environment's library caches go in /tmp first (core/env_caches.h; a Python call, and
 * anything a command or a session may run). */
int fb_files_prepare(fb_workspace *ws, const char *workdir, const fb_mount_config *mount, const fb_reporting *rep,
                     bool mount_content, const fb_ws_files *files, bool env_caches, const fb_sandbox_limits *lim,
                     fb_error *err);
/* The host's event callback (fnbox_call_options' event, sync_allow_abort; opts borrowed, outliving ws):
 * each event of the stage as fnbox_event. No callback: the log only. */
void fb_call_files_events(fb_workspace *ws, const fnbox_call_options *opts);
/* Tells spec what to write into the scratch areas, which FUSE mounts to make and who serves them, and
 * whether to hand the scratch roots out (keep_scratch: the changes are reported). *staged: the array
 * spec->user_files points to, the caller's to free once fb_sandbox_run returned (NULL when empty). */
int fb_call_files_attach(fb_workspace *ws, bool keep_scratch, fb_sandbox_spec *spec, fb_sandbox_file **staged,
                         fb_error *err);

#endif
