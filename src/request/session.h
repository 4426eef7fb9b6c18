/* A session's options decoded (POST /v1/sessions, fnbox_session_open): the long-lived sandbox's workdir,
 * first files, mount, permissions, limits and lifetimes. Plain data from here on. Nothing runs here. */
#ifndef FB_REQUEST_SESSION_H
#define FB_REQUEST_SESSION_H
#include <jansson.h>
#include <stdbool.h>

#include "fs/workspace.h"
#include "request/dependencies.h"
#include "request/environments.h"
#include "request/permissions.h"
#include "request/request.h"
#include "util/error.h"

typedef struct fb_session_options {
    json_t *root;                 /* the parsed document (owned) */
    const char *workdir;          /* borrowed, or the default /workspace */
    fb_ws_files files;            /* `files`: written once the sandbox is up (owned) */
    fb_mount_config *mount;       /* `mount` as a call's, or NULL (owned): served for the session's life,
                                     synced only when asked */
    fb_permissions permissions;   /* `permissions`: env and network as a call's; childProcess allowed unless
                                     it says otherwise (a session is a shell) (owned) */
    fb_call_limits limits;        /* memory, pids, disk: the session's (one cgroup for all its processes);
                                     stdoutBytes / stderrBytes: per command */
    double idle_timeout_s;        /* closed after this long without a request */
    double max_lifetime_s;        /* closed this long after it opened, busy or not */
    const fb_environment *environment; /* `environment`: its sandbox's (its commands', calls' and kernels'), one
                                          of the process's set (borrowed), or NULL: the host's system tree */
    fb_dependencies dependencies; /* `dependencies`: layers installed when the session opens, on its
                                     sandbox's search paths (owned) */
} fb_session_options;

/* Parses text (len bytes; "" or only whitespace means {}: every default). Failures are InvalidRequest
 * naming the field. On success the caller owns *out (fb_session_options_free); on failure it is released. */
int fb_session_options_parse(const char *text, size_t len, fb_session_options *out, fb_error *err);
void fb_session_options_free(fb_session_options *o);
/* A session sync's body `{onError?}` ("" means {}): *on_error an fb_sync_on_error, or -1 for the mount's. */
int fb_session_sync_parse(const char *text, size_t len, int *on_error, fb_error *err);

#endif
