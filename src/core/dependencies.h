/* Dependencies on demand (request/dependencies.h): each ecosystem's list installed once, by the
 * environment's own installer (pip install --target, npm install --prefix) in a build sandbox whose network
 * reaches only the environment's configured index, into a content-addressed layer of a bounded cache;
 * then placed read-only on the language's search path of the run (core/environment.h's layers).
 * docs/internals/dependencies.md. */
#ifndef FB_CORE_DEPENDENCIES_H
#define FB_CORE_DEPENDENCIES_H
#include <jansson.h>
#include <stdbool.h>

#include "core/environment.h"
#include "lang/compile_cache.h"
#include "request/dependencies.h"
#include "request/environments.h"
#include "util/error.h"

#define FB_DEPS_MAX_LAYERS 64                    /* layers kept in the cache; least recently used out first */
#define FB_DEPS_MAX_BYTES (4096ULL * 1024 * 1024) /* their total size */
#define FB_DEPS_MAX_LAYER_BYTES (1024ULL * 1024 * 1024) /* one layer (an install writing more fails) */
#define FB_DEPS_MAX_LAYER_FILES 200000           /* one layer's entries */
#define FB_DEPS_INSTALL_TIMEOUT_S 600.0          /* one installer run, wall clock */
/* The name of the environment whose `indexes` serve requests without an `environment` (the host's): the
 * environments file's entry of that name, if any. */
#define FB_DEPS_HOST_ENVIRONMENT "host"

typedef struct fb_deps_layer {
    char *dir;                  /* the layer's directory in the cache (owned); NULL: no list for it */
    char key[FB_CACHE_KEY_SIZE];
    bool hit;                   /* found built (also after waiting for another request's build) */
    double ms;                  /* spent on it by this request: the lookup, a wait, an install */
} fb_deps_layer;

typedef struct fb_deps_layers {
    fb_deps_layer eco[FB_DEPS_NECOS];
} fb_deps_layers;

/* The layers of d for a run in env (NULL: the host's), built when missing; cancel_fd (-1: none) ends an
 * install. Errors: InvalidRequest `dependencies.python: no package index ...` (no index configured),
 * DependencyInstallFailed (the installer's output; nothing is cached), KernelFeatureMissing (no installer
 * in the environment, no cache directory), SandboxSetupFailed. *out is released by fb_deps_layers_free on
 * every path. */
int fb_deps_prepare(const fb_dependencies *d, const fb_environment *env, int cancel_fd, fb_deps_layers *out,
                    fb_error *err);
/* Puts each layer on its language's search path in el (the run's environment share). */
int fb_deps_place(const fb_deps_layers *l, fb_env_launch *el, fb_error *err);
/* meta.dependencies: {"python": {"layer", "cache": "hit"|"miss", "installMs"}, ...}, or NULL when none. */
json_t *fb_deps_meta(const fb_deps_layers *l);
void fb_deps_layers_free(fb_deps_layers *l);

#endif
