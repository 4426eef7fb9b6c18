/* The launch stage of one call: what runs in the sandbox (argv, environment, files, the input on fd 4,
 * limits; docs/internals/harness-protocol.md), built from the request, the plan and the language's driver,
 * then run with the workspace and the network proxy attached. */
#ifndef FB_CORE_LAUNCH_H
#define FB_CORE_LAUNCH_H
#include <stdbool.h>
#include <stddef.h>

#include "core/compile.h"
#include "core/dependencies.h"
#include "core/environment.h"
#include "core/output.h"
#include "core/pool.h"
#include "request/limits.h"
#include "request/environments.h"
#include "request/request.h"
#include "fs/workspace.h"
#include "lang/plan.h"
#include "net/proxy.h"
#include "sandbox/sandbox.h"
#include "util/error.h"

#define FB_LAUNCH_MAX_ENV (32 + FB_MAX_ENV_VARS) /* fnbox's and the driver's, then the request's permissions.env */

/* What runs: an interpreter with its harness, or the program core/compile.c built, as the driver's exec
 * says (lang.h), with the environment fnbox completes and the input on fd 4. One owner: the executor's
 * fb_launch, released by fb_launch_free on every path. */
typedef struct fb_launch {
    fb_lang_exec exec;                      /* the driver's argv, environment entries and files (owned) */
    const char *envp[FB_LAUNCH_MAX_ENV];    /* the whole environment: static, driver or request strings */
    fb_sandbox_file files[FB_LANG_MAX_FILES];
    size_t nfiles;
    fb_json_pieces input;                   /* the call input: the driver's text and the request's (owned) */
    fb_output *output;                      /* NULL, or told the output as it arrives (borrowed) */
    bool stream;                            /* the caller takes the output as it arrives (fb_lang_call.stream):
                                               set before fb_launch_prepare */
    fb_env_launch envl;                     /* the request's environment: system tree, layers, variables */
    const fb_deps_layers *deps;             /* NULL, or the request's dependency layers, placed on the search
                                               paths (borrowed; set before fb_launch_prepare) */
} fb_launch;

/* The request's limits (defaults filled in by request/request.c) as the sandbox takes them. */
void fb_launch_limits(const fb_request *req, fb_sandbox_limits *lim);
void fb_launch_limits_of(double timeout_s, const fb_call_limits *limits, fb_sandbox_limits *lim);
/* Builds what runs for the call planned by plan: the interpreter of req->lang, or prog when the language
 * is compiled. Errors: "KernelFeatureMissing" (no runtime), "OutOfMemory", "InternalError" (too many
 * arguments or environment entries). *l is released by fb_launch_free on every path. */
int fb_launch_prepare(const fb_request *req, const fb_call_plan *plan, const fb_compiled *prog, fb_launch *l,
                      fb_error *err);
/* Runs it in a new sandbox with the workspace attached and, when permissions.network allows anything, the
 * proxy of `net` serving it; the proxy is stopped before this returns. l->output, when set, is told the
 * output as it arrives and finished before this returns. */
int fb_launch_run(const fb_request *req, fb_launch *l, fb_workspace *ws, int cancel_fd, fb_proxy_call *net,
                  fb_pool *pool, fb_sandbox_outcome *out, fb_error *err);
void fb_launch_free(fb_launch *l);
/* What a call in lang runs when its request changes nothing a sandbox is built with (no permissions, the
 * default workdir and limits; the widest deadline and CPU limit, which each call lowers): a warm pool's
 * template (core/pool.c). l owns what spec points to. An interpreted language's harness; for a compiled
 * one, its program's sandbox (spec.program_later: the program comes with the call, from the compile cache
 * or its compiler). */
int fb_launch_template(const fb_lang_driver *lang, const fb_environment *env, fb_launch *l, fb_sandbox_spec *spec,
                       fb_error *err);

/* What every program fnbox runs shares (calls and execute requests, core/execute.c). */
/* fnbox's minimal environment (PATH, HOME, TMPDIR, LANG, USER, LOGNAME), NULL-terminated. */
extern const char *const fb_launch_base_env[];
/* Appends "KEY=value" to envp (*n entries so far, room for cap pointers with the NULL), replacing an entry
 * of the same KEY; "InternalError" when full. */
int fb_launch_env_put(const char **envp, size_t *n, size_t cap, const char *kv, fb_error *err);
/* Adds each "KEY=value" of defaults (NULL-terminated) whose KEY envp (NULL-terminated, cap slots) lacks: the
 * caller's own setting stands. */
int fb_launch_env_defaults(const char **envp, size_t cap, const char *const *defaults, fb_error *err);
/* envp = the layers' entries in order, a later one replacing an earlier one of the same KEY. */
int fb_launch_env_build(const char *const *const *layers, size_t nlayers, const char **envp, size_t cap,
                        fb_error *err);

/* What a run takes besides its spec: the environment built so far (the proxy's variables are added when
 * the network policy allows anything: leave room for them), the workspace (its files, mounts, and the
 * scratch roots handed out with keep_scratch), the proxy and the output told as it arrives (NULL: none). */
typedef struct fb_launch_attach {
    const char **envp;
    size_t env_cap;
    fb_workspace *ws;
    bool keep_scratch;
    fb_proxy_call *net;
    fb_output *output;
    fb_pool *pool;       /* NULL, or warm pools to take a prepared sandbox from when one fits */
    const fb_environment *environment; /* the request's named environment, or NULL: the host's (borrowed) */
} fb_launch_attach;
/* Runs spec (what runs, limits, cancel fd set by the caller) with a's parts attached; the proxy is stopped
 * and the output finished before this returns. */
int fb_launch_attached(fb_sandbox_spec *spec, const fb_launch_attach *a, fb_sandbox_outcome *out, fb_error *err);

#endif
