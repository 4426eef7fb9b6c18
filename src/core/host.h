/* The host's say over one call (fnbox_call_options): which requested env keys and commands it accepts
 * before anything runs, and the per-access callbacks the proxy and the mount servers ask. */
#ifndef FB_CORE_HOST_H
#define FB_CORE_HOST_H
#include <stddef.h>
#include <stdint.h>

#include "fnbox.h"
#include "request/permissions.h"
#include "util/error.h"

/* The options the caller's struct is large enough to hold (older callers pass a smaller size); the rest
 * stay at their defaults (cancel_fd -1). NULL: all defaults. */
fnbox_call_options fb_host_options(const fnbox_call_options *o);

/* Asks the host's env and command callbacks about each requested key and command: 0, or -1 with
 * "PermissionDenied" naming what and the host's reason. */
int fb_host_ask(const fb_permissions *p, const fnbox_call_options *o, fb_error *err);
/* The env callback alone, for n "KEY=value" entries; field names them in a denial ("env": `env.KEY: ...`). */
int fb_host_ask_env(const char *const *env, size_t n, const char *field, const fnbox_call_options *o, fb_error *err);

/* The proxy's and the mount servers' per-access checks (ctx: the call's fnbox_call_options): nonzero
 * allows. The reason comes back NUL-terminated and valid UTF-8, since it ends up in the result's JSON. */
int fb_host_network_check(void *ctx, const char *host, uint16_t port, const char *address, char *reason,
                          size_t cap);
int fb_host_fs_check(void *ctx, const char *path, const char *operation, char *reason, size_t cap);

#endif
