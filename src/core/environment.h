/* What a named environment (request/environments.h) changes in a launch: the sandbox's system tree (its
 * root instead of the host's), its package directories placed read-only on each language's search path,
 * the variables that tell the harnesses and interpreters where those are, and where a language's
 * interpreter is found. docs/internals/environments.md. */
#ifndef FB_CORE_ENVIRONMENT_H
#define FB_CORE_ENVIRONMENT_H
#include <stddef.h>

#include "lang/lang.h"
#include "request/environments.h"
#include "sandbox/sandbox.h"
#include "util/error.h"

/* Where each language's paths appear inside the sandbox: one read-only overlay of all of them (the first
 * listed on top), so a name in two of them is the first's, as on a search path. */
#define FB_ENV_PYTHON_DIR "/.fnbox/lib/python"
#define FB_ENV_RUBY_DIR "/.fnbox/lib/ruby"
#define FB_ENV_PHP_DIR "/.fnbox/lib/php"
/* Node walks up from every module's directory to /node_modules, for require and import alike (NODE_PATH
 * serves only require). */
#define FB_ENV_NODE_DIR "/node_modules"
#define FB_ENV_MAX_VARS 6

/* The launch's share of an environment: storage the sandbox spec points to (it lives as long as the spec). */
typedef struct fb_env_launch {
    const fb_environment *env;                 /* borrowed; NULL: the host's */
    fb_sandbox_layer layers[FB_ENV_NLANGS];
    size_t nlayers;
    const char *vars[FB_ENV_MAX_VARS + 1];     /* KEY=VALUE, NULL-terminated: static strings */
    const char *srcs[FB_ENV_NLANGS][FB_SANDBOX_MAX_LAYER_SRCS]; /* a layer's directories when a dependency
                                                                  layer joins the paths (fb_env_launch_add) */
} fb_env_launch;

/* Fills el for env (NULL: the host's, nothing changes). */
void fb_env_launch_init(fb_env_launch *el, const fb_environment *env);
/* Puts dir (a host directory: a dependency layer, core/dependencies.h) on top of lang's layer, so its
 * packages come first on the search path; the language's variables are set as for paths. dir must outlive
 * the spec. -1 when the layer already has FB_SANDBOX_MAX_LAYER_SRCS directories. */
int fb_env_launch_add(fb_env_launch *el, fb_env_lang lang, const char *dir);
/* The spec's system tree and layers. */
void fb_env_launch_apply(const fb_env_launch *el, fb_sandbox_spec *spec);
/* The runtime of lang in the environment's root (the host's without one). NULL with err set: the host's
 * missing-runtime error (KernelFeatureMissing), or for a root "Language interpreter not found in
 * environment NAME". */
const char *fb_env_runtime(const fb_environment *env, const fb_lang_driver *lang, fb_error *err);

#endif
