/* The request's `permissions`: what the function may reach beyond its own sandbox, decoded strictly.
 * Everything is denied unless the request allows it (docs/guide/permissions-and-limits.md):
 *   env           {KEY: value}: variables added to the minimal environment; never fnbox's own
 *   childProcess  false | true | ["git", "sh"]: which other programs the function may execute
 *   network       false | true | ["api.example.com:443", "*.example.org"]: destinations (the proxy that
 *                 serves them consumes network_allow / network_all)
 *   preset        secure-exec's names: allowAll, allowAllFs, allowAllNetwork, allowAllChildProcess,
 *                 allowAllEnv; a field given explicitly overrides its preset (like `{...allowAll, network: false}`)
 * The whole value may also be a preset name or a list of them: "permissions": "allowAll".
 * Plain data; fb_permissions_free releases it. Nothing runs here; commands are resolved to files. */
#ifndef FB_PERMISSIONS_H
#define FB_PERMISSIONS_H
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "util/error.h"

enum {
    FB_PRESET_FS = 1 << 0,      /* allowAllFs: mounts without mount.permissions allow every operation */
    FB_PRESET_NETWORK = 1 << 1, /* allowAllNetwork: network true unless `network` is given */
    FB_PRESET_CHILD = 1 << 2,   /* allowAllChildProcess: childProcess true unless `childProcess` is given */
    FB_PRESET_ENV = 1 << 3,     /* allowAllEnv: env may also set the reserved keys (fb_env_key_reserved) */
    FB_PRESET_ALL = FB_PRESET_FS | FB_PRESET_NETWORK | FB_PRESET_CHILD | FB_PRESET_ENV,
};

typedef struct fb_permissions {
    unsigned presets;                  /* FB_PRESET_* bits the request named */
    /* env: "KEY=value" strings in request order, NULL-terminated (owned); NULL when none */
    const char *const *env;
    size_t nenv;
    /* childProcess: exec_any (true), or the commands as requested (exec_names) and the files they
     * resolved to (exec_allow: absolute real paths under /usr, deduplicated, NULL-terminated). Both
     * owned; NULL when none. exec_names[i] resolved to exec_allow[exec_index[i]]. */
    bool exec_any;
    const char *const *exec_names;
    const char *const *exec_allow;
    size_t *exec_index;
    size_t nexec_names, nexec;
    /* network: every destination, or the validated patterns (lower-cased `host[:port]`, `*.suffix[:port]`,
     * `1.2.3.4[:port]` or `[v6][:port]`), NULL-terminated (owned); NULL when none */
    bool network_all;
    const char *const *network_allow;
    size_t nnetwork;
    bool fs_all;                       /* allowAllFs (see FB_PRESET_FS) */
} fb_permissions;

/* Decodes v (NULL or null: the defaults, everything denied). field is its JSON path for messages
 * ("permissions" or "options.permissions"); every error is an InvalidRequest naming the field, e.g.
 * `permissions.env.LD_PRELOAD: reserved ...`. Commands are not resolved yet (fb_permissions_resolve).
 * On failure *out is zeroed. */
int fb_permissions_parse(const json_t *v, const char *field, fb_permissions *out, fb_error *err);

/* Resolves exec_names to files: a name is looked up in search_dirs (NULL-terminated, in order), an
 * absolute path is taken as is; symlinks are followed and the real file must be a regular executable
 * file beneath visible_prefix (e.g. "/usr/", what the sandbox binds). An unknown command is an
 * InvalidRequest naming it (`permissions.childProcess[1]: command 'gti' not found in /usr/bin, /bin`). */
int fb_permissions_resolve(fb_permissions *p, const char *field, const char *const *search_dirs,
                           const char *visible_prefix, fb_error *err);

void fb_permissions_free(fb_permissions *p);

/* Whether key may be set only under allowAllEnv: the variables fnbox sets itself (PATH, HOME, TMPDIR,
 * USER, LOGNAME), the dynamic loader's and libc's (LD_*, GLIBC_TUNABLES, GCONV_PATH, ... glibc's
 * unsecure-envvars list), the runtimes' start-up hooks (NODE_OPTIONS, RUBYOPT, PYTHON*, PHPRC, ...) and
 * the proxy variables (HTTP_PROXY, ...): they change how the runtime, the harness or the network path
 * work, not only what the function sees. */
bool fb_env_key_reserved(const char *key);

/* The preset names, for messages: "allowAll, allowAllFs, ...". */
const char *fb_permissions_presets(void);

#endif
