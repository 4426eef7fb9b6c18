/* The launch stage (launch.h): argv, environment, files and input of one call, and its sandbox spec. What
 * differs between languages comes from the driver (lang.h: exec, harness_input); fnbox adds its base
 * environment, the request's permissions.env and the proxy's variables. */
#include "core/launch.h"

#include "core/call_files.h"
#include "core/env_caches.h"
#include "core/pool.h"
#include "core/result.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>


/* Both streams are captured up to the larger cap; core/result.c cuts each to its own. */
void fb_launch_limits(const fb_request *req, fb_sandbox_limits *lim)
{
    fb_launch_limits_of(req->timeout_s, &req->limits, lim);
}

void fb_launch_limits_of(double timeout_s, const fb_call_limits *l, fb_sandbox_limits *lim)
{
    *lim = (fb_sandbox_limits){
        .timeout_s = timeout_s,
        .memory_bytes = l->memory_bytes,
        .pids = l->pids,
        .nofile = l->open_files,
        .fsize_bytes = l->file_size_bytes,
        .workspace_bytes = l->workspace_bytes,
        .tmp_bytes = l->tmp_bytes,
        .tmpfs_inodes = l->inodes,
        .output_bytes = (size_t)(l->stdout_bytes > l->stderr_bytes ? l->stdout_bytes : l->stderr_bytes),
        .result_bytes = (size_t)l->result_bytes,
        .cpu_seconds = l->cpu_seconds,
    };
}

int fb_launch_env_put(const char **envp, size_t *e, size_t cap, const char *kv, fb_error *err)
{
    size_t klen = strcspn(kv, "=");
    for (size_t i = 0; i < *e; i++)
        if (strncmp(envp[i], kv, klen) == 0 && envp[i][klen] == '=') {
            envp[i] = kv;
            return 0;
        }
    if (*e >= cap - 1)
        return fb_set_error(err, FB_ERR_INTERNAL, E2BIG, "more than %zu environment variables", cap - 1);
    envp[(*e)++] = kv;
    envp[*e] = NULL;
    return 0;
}

int fb_launch_env_defaults(const char **envp, size_t cap, const char *const *defaults, fb_error *err)
{
    size_t e = 0;
    while (envp[e])
        e++;
    for (const char *const *d = defaults; d && *d; d++) {
        size_t klen = strcspn(*d, "=");
        bool set = false;
        for (size_t i = 0; i < e && !set; i++)
            set = strncmp(envp[i], *d, klen) == 0 && envp[i][klen] == '=';
        if (!set && fb_launch_env_put(envp, &e, cap, *d, err) < 0)
            return -1;
    }
    return 0;
}

/* fnbox's minimal environment: nothing comes from fnbox's own. MPLCONFIGDIR: matplotlib's config and cache
 * directory in one, where the environment's font list is placed (core/env_caches.h); without it matplotlib
 * also makes $HOME/.config/matplotlib, which a call would report as its own. PYTHONDONTWRITEBYTECODE: a
 * Python program run by a command writes no __pycache__ of the workspace's modules, which the call would
 * report as its files (the libraries' own bytecode is Debian's, read from /usr: nothing is compiled). */
const char *const fb_launch_base_env[] = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/tmp", "TMPDIR=/tmp",
                                          "LANG=C.UTF-8", "USER=sandbox", "LOGNAME=sandbox",
                                          FB_ENV_CACHE_MPLCONFIGDIR, "PYTHONDONTWRITEBYTECODE=1", NULL};

int fb_launch_env_build(const char *const *const *layers, size_t nlayers, const char **envp, size_t cap,
                        fb_error *err)
{
    size_t e = 0;
    envp[0] = NULL;
    for (size_t l = 0; l < nlayers; l++)
        for (const char *const *p = layers[l]; p && *p; p++)
            if (fb_launch_env_put(envp, &e, cap, *p, err) < 0)
                return -1;
    return 0;
}

/* The function's whole environment: fnbox's minimal one, the driver's, then the request's permissions.env
 * (which may replace the first two only under allowAllEnv: request/permissions.c refuses reserved keys
 * otherwise). */
static int build_env(const char *const *driver_env, const fb_env_launch *envl, const fb_permissions *perm,
                     const char **envp, fb_error *err)
{
    const char *const *const layers[] = {fb_launch_base_env, driver_env, envl->vars, perm->env};
    return fb_launch_env_build(layers, 4, envp, FB_LAUNCH_MAX_ENV, err);
}

/* The files the driver places, as the sandbox takes them. */
static void launch_files(fb_launch *l)
{
    for (size_t i = 0; i < l->exec.nfiles; i++) {
        const fb_lang_file *f = &l->exec.files[i];
        l->files[i] = (fb_sandbox_file){.path = f->path, .data = f->data, .len = f->len, .executable = f->executable};
    }
    l->nfiles = l->exec.nfiles;
}

int fb_launch_prepare(const fb_request *req, const fb_call_plan *plan, const fb_compiled *prog, fb_launch *l,
                      fb_error *err)
{
    const fb_lang_driver *lang = req->lang;
    fb_env_launch_init(&l->envl, req->environment);
    if (l->deps && fb_deps_place(l->deps, &l->envl, err) < 0)
        return -1;
    fb_lang_runnable run = {.runtime = fb_env_runtime(l->envl.env, lang, err), .program = prog->data,
                            .program_len = prog->len};
    if (!run.runtime)
        return -1;
    if (lang->exec(lang, &run, &l->exec, err) < 0 ||
        build_env(l->exec.env, &l->envl, &req->permissions, l->envp, err) < 0)
        return -1;
    launch_files(l);
    fb_lang_call call = {.code = req->code, .code_len = req->code_len, .function_name = plan->function_name,
                         .args = &plan->args, .texts = &req->texts, .workdir = req->workdir,
                         .stream = l->stream};
    size_t len = 0;
    if (fb_json_pieces_make(lang->harness_input(&call, &len), &req->texts, &l->input) < 0)
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, 0, "out of memory building the call input");
    return 0;
}

int fb_launch_template(const fb_lang_driver *lang, const fb_environment *env, fb_launch *l, fb_sandbox_spec *spec,
                       fb_error *err)
{
    fb_lang_runnable run = {.runtime = fb_env_runtime(env, lang, err)};
    fb_call_limits defaults;
    fb_permissions none = {0};
    if (!run.runtime)
        return -1;
    fb_env_launch_init(&l->envl, env); /* a pool of that environment's */
    if (lang->exec(lang, &run, &l->exec, err) < 0 || build_env(l->exec.env, &l->envl, &none, l->envp, err) < 0 ||
        fb_request_limits_parse(NULL, "limits", FB_DEFAULT_TIMEOUT_S, &defaults, err) < 0)
        return -1;
    launch_files(l);
    *spec = (fb_sandbox_spec){.exec_path = l->exec.argv[0], .argv = (char *const *)l->exec.argv,
                              .envp = (char *const *)l->envp, .workdir = FB_EXECUTE_WORKDIR, .files = l->files,
                              .nfiles = l->nfiles, .cancel_fd = -1, .keep_scratch = true,
                              .inert_until_input = l->exec.inert_until_input};
    if (lang->compiler) {
        /* the program (the driver placed an empty one) comes with the call; until then nothing runs */
        size_t kept = 0;
        for (size_t i = 0; i < l->nfiles; i++)
            if (strcmp(l->files[i].path, spec->exec_path) != 0)
                l->files[kept++] = l->files[i];
        spec->nfiles = l->nfiles = kept;
        spec->program_later = true;
        spec->inert_until_input = true;
    }
    /* the widest deadline and CPU limit: each call lowers the CPU limit to its own */
    defaults.cpu_seconds = FB_MAX_CPU_SECONDS;
    fb_launch_limits_of(FB_MAX_TIMEOUT_S, &defaults, &spec->limits);
    fb_env_launch_apply(&l->envl, spec);
    return 0;
}

/* permissions.network: when anything is allowed, the sandbox's init opens 127.0.0.1:3128 inside and the
 * proxy (net/proxy.h) serves it from here; the function's environment points its clients there (these
 * replace any same-named permissions.env entry). Stopped as soon as every sandboxed process is gone. */
int fb_launch_attached(fb_sandbox_spec *spec, const fb_launch_attach *a, fb_sandbox_outcome *out, fb_error *err)
{
    bool network = fb_net_policy_allows_any(a->net->policy);
    size_t e = 0;
    while (a->envp[e])
        e++;
    for (const char *const *v = fb_proxy_env; network && *v; v++)
        if (fb_launch_env_put(a->envp, &e, a->env_cap, *v, err) < 0)
            return -1;
    spec->envp = (char *const *)a->envp;
    fb_sandbox_file *staged = NULL; /* the request's files outside mounts, as the sandbox takes them */
    if (fb_call_files_attach(a->ws, a->keep_scratch, spec, &staged, err) < 0)
        return -1;
    spec->proxy_listen = network;
    spec->on_proxy = fb_proxy_on_listen;
    spec->proxy_ctx = a->net;
    if (a->output) {
        spec->on_output = fb_output_chunk;
        spec->output_ctx = a->output;
    }
    int rc = fb_pool_run(a->pool, a->environment, spec, fb_result_channel_complete, out, err);
    if (a->output)
        fb_output_finish(a->output);
    free(staged);
    fb_proxy_stop(a->net->proxy);
    return rc;
}

/* The input is dead once written: a large one is not held while the result is read and rendered. */
static void input_written(void *ctx)
{
    fb_launch *l = ctx;
    fb_json_pieces_free(&l->input);
}

int fb_launch_run(const fb_request *req, fb_launch *l, fb_workspace *ws, int cancel_fd, fb_proxy_call *net,
                  fb_pool *pool, fb_sandbox_outcome *out, fb_error *err)
{
    fb_sandbox_spec spec = {
        .exec_path = l->exec.argv[0],
        .argv = (char *const *)l->exec.argv,
        .workdir = req->workdir,
        .files = l->files,
        .nfiles = l->nfiles,
        .input_iov = l->input.iov,
        .input_iovcnt = l->input.n,
        .input_len = l->input.len,
        .on_input_written = input_written,
        .input_ctx = l,
        .cancel_fd = cancel_fd,
        /* permissions.childProcess: the files its commands resolved to, or anything */
        .exec_allow = req->permissions.exec_allow,
        .exec_any = req->permissions.exec_any,
        .inert_until_input = l->exec.inert_until_input,
    };
    fb_launch_limits(req, &spec.limits);
    fb_env_launch_apply(&l->envl, &spec);
    fb_launch_attach a = {.envp = l->envp, .env_cap = FB_LAUNCH_MAX_ENV, .ws = ws,
                          .keep_scratch = req->reporting.include_changes, .net = net, .output = l->output,
                          .pool = pool, .environment = req->environment};
    int rc = fb_launch_attached(&spec, &a, out, err);
    input_written(l); /* also when the harness stopped reading early */
    return rc;
}

void fb_launch_free(fb_launch *l)
{
    fb_json_pieces_free(&l->input);
    fb_lang_exec_free(&l->exec);
    *l = (fb_launch){0};
}
