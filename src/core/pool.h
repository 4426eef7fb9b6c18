/* Warm pools (docs/internals/pools.md): per language, sandboxes built ahead of their calls
 * (fb_sandbox_prepare), the runtime started with the harness loaded and waiting for its input. A call
 * whose sandbox would be built exactly as a pooled one was takes one (fb_pool_take), runs in it once
 * (fb_sandbox_run_prepared) and gives it back spent (fb_pool_spent): it is destroyed, never reused, and a
 * new one is built in its place in the background. A call that needs anything else (mounts, permissions,
 * another workdir or limits set at creation), or finds its pool empty, takes the cold path. */
#ifndef FB_CORE_POOL_H
#define FB_CORE_POOL_H
#include <jansson.h>
#include <stdint.h>

#include "request/environments.h"
#include "sandbox/sandbox.h"
#include "util/error.h"

#define FB_POOL_MAX_LANGS 8
#define FB_POOL_MAX_SIZE 64                         /* sandboxes per language */
#define FB_POOL_DEFAULT_MAX_MEMORY (1024ULL << 20)  /* the idle sandboxes' memory, all pools together */

typedef struct fb_pool fb_pool;

typedef struct fb_pool_config {
    const char *langs[FB_POOL_MAX_LANGS]; /* canonical language names (lang/lang.c) */
    unsigned sizes[FB_POOL_MAX_LANGS];    /* 1..FB_POOL_MAX_SIZE each */
    const fb_environment *envs[FB_POOL_MAX_LANGS]; /* the named environment each pool's sandboxes are built in
                                                      (`--warm python@py313=2`), NULL: the host's */
    size_t nlangs;
    uint64_t max_memory_bytes;            /* no new sandbox while the idle ones hold this much */
} fb_pool_config;

/* Checks the config (a language without a runtime, or a compiled one, is InvalidRequest naming it) and
 * starts the thread that fills the pools. */
int fb_pool_start(const fb_pool_config *cfg, fb_pool **out, fb_error *err);
/* A prepared sandbox that runs spec exactly as fb_sandbox_run would build it (same program, environment,
 * files, workdir, limits set at creation; no mounts, proxy, exec rights), or NULL (run it cold). The
 * caller runs it once and hands it to fb_pool_spent. Thread-safe. */
fb_sandbox *fb_pool_take(fb_pool *p, const fb_environment *env, const fb_sandbox_spec *spec);
/* Runs spec in a prepared sandbox of p when one was built exactly as spec would be (it serves this call only:
 * spent, the pool destroys it), else in a new one (fb_sandbox_run; also when p is NULL, or when the prepared
 * one could not take the call). result_complete: fb_sandbox_call's (NULL: wait for every process). */
/* env: the run's named environment (NULL: the host's); only a pool built in it fits. */
int fb_pool_run(fb_pool *p, const fb_environment *env, const fb_sandbox_spec *spec,
                bool (*result_complete)(const char *data, size_t len), fb_sandbox_outcome *out, fb_error *err);
/* A call through the engine starts and ends (warm or cold): while as many run as there are CPUs, nothing is
 * built ahead (next_to_build). NULL is a no-op. */
void fb_pool_call_begin(fb_pool *p);
void fb_pool_call_end(fb_pool *p);
/* Takes back a sandbox fb_pool_take gave out: it is destroyed on the pool's thread. ran: the call ran in it
 * (served), or it could not take the call, which ran cold (missed). */
void fb_pool_spent(fb_pool *p, fb_sandbox *sb, bool ran);
/* Waits until every pool is full (0) or timeout_s passed (-1). */
int fb_pool_wait_full(fb_pool *p, double timeout_s);
/* {language: {size, idle, served, missed, built, failed, died, idleMemoryBytes, memoryPerSandboxBytes,
 * lastError?}, "maxMemoryBytes": n}; NULL when out of memory. */
json_t *fb_pool_stats(fb_pool *p);
/* Stops the thread and destroys every sandbox; no take may run. NULL is a no-op. */
void fb_pool_stop(fb_pool *p);

#endif
