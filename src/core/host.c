/* The host's say over one call: the caller's fnbox_call_options, read at the size the caller built them,
 * and the adapters through which its callbacks are asked (core/host.h). */
#include "core/host.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "request/limits.h"
#include "util/utf8.h"

/* The host's callbacks (fnbox_call_options) decide each requested env key and command before anything
 * runs: a denial refuses the call with "PermissionDenied", naming what and why. */
int fb_host_ask_env(const char *const *env, size_t n, const char *field, const fnbox_call_options *o, fb_error *err)
{
    char reason[512];
    for (size_t i = 0; o->env && i < n; i++) {
        const char *kv = env[i];
        size_t klen = strcspn(kv, "=");
        char key[FB_MAX_NAME_BYTES + 1];
        snprintf(key, sizeof key, "%.*s", (int)klen, kv);
        reason[0] = '\0';
        if (!o->env(o->permission_ctx, key, kv + klen + 1, reason, sizeof reason))
            return fb_set_error(err, FB_ERR_PERMISSION_DENIED, 0, "%s.%s: denied by the host%s%.400s", field, key,
                                reason[0] ? ": " : "", reason);
    }
    return 0;
}

int fb_host_ask(const fb_permissions *p, const fnbox_call_options *o, fb_error *err)
{
    char reason[512];
    if (fb_host_ask_env(p->env, p->nenv, "permissions.env", o, err) < 0)
        return -1;
    if (!o->command)
        return 0;
    if (p->exec_any) {
        reason[0] = '\0';
        if (!o->command(o->permission_ctx, "*", NULL, reason, sizeof reason))
            return fb_set_error(err, FB_ERR_PERMISSION_DENIED, 0, "permissions.childProcess: running any command was "
                                "denied by the host%s%.400s", reason[0] ? ": " : "", reason);
        return 0;
    }
    for (size_t i = 0; i < p->nexec_names; i++) {
        reason[0] = '\0';
        if (!o->command(o->permission_ctx, p->exec_names[i], p->exec_allow[p->exec_index[i]], reason, sizeof reason))
            return fb_set_error(err, FB_ERR_PERMISSION_DENIED, 0,
                                "permissions.childProcess[%zu]: command '%.64s' denied by "
                                "the host%s%.400s", i, p->exec_names[i], reason[0] ? ": " : "", reason);
    }
    return 0;
}

/* The host's per-access callbacks (fnbox_call_options network and fs) as the proxy and the mount servers
 * call them (ctx: the call's options): the reason comes back NUL-terminated and valid UTF-8, since it
 * ends up in the result's JSON. */
static void clean_reason(char *reason, size_t cap)
{
    reason[cap - 1] = '\0';
    size_t n = 0;
    char *s = fb_utf8_sanitize(reason, strlen(reason), &n);
    if (!s) {
        reason[0] = '\0';
        return;
    }
    if (n >= cap) { /* U+FFFD is longer than the byte it replaces: cut at a character boundary */
        n = cap - 1;
        while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
            n--;
    }
    memcpy(reason, s, n);
    reason[n] = '\0';
    free(s);
}

int fb_host_network_check(void *ctx, const char *host, uint16_t port, const char *address, char *reason, size_t cap)
{
    const fnbox_call_options *o = ctx;
    reason[0] = '\0';
    int allowed = o->network(o->permission_ctx, host, port, address, reason, cap);
    clean_reason(reason, cap);
    return allowed != 0;
}

int fb_host_fs_check(void *ctx, const char *path, const char *operation, char *reason, size_t cap)
{
    const fnbox_call_options *o = ctx;
    reason[0] = '\0';
    int allowed = o->fs(o->permission_ctx, path, operation, reason, cap);
    clean_reason(reason, cap);
    return allowed != 0;
}

/* The options the caller's struct is large enough to hold (older callers pass a smaller size); the rest
 * stay at their defaults. */
fnbox_call_options fb_host_options(const fnbox_call_options *o)
{
    fnbox_call_options v = {.size = sizeof v, .cancel_fd = -1};
    if (!o)
        return v;
    size_t n = o->size < sizeof v ? o->size : sizeof v;
    if (n > sizeof v.size)
        memcpy((char *)&v + sizeof v.size, (const char *)o + sizeof v.size, n - sizeof v.size);
    if (n < offsetof(fnbox_call_options, cancel_fd) + sizeof v.cancel_fd)
        v.cancel_fd = -1;
    return v;
}
