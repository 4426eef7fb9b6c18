/* The launch stage (launch.h): argv, environment, files and input of one call, and its sandbox spec. */
#include "core/launch.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/json.h"

/* The call input the harness reads on fd 4 (docs/internals/harness-protocol.md). */
static char *harness_input(const fb_request *req, const fb_call_plan *plan, size_t *len)
{
    json_t *in = json_object();
    json_object_set_new(in, "code", json_stringn(req->code, req->code_len));
    json_object_set_new(in, "functionName", plan->function_name ? json_string(plan->function_name) : json_null());
    json_object_set(in, "args", plan->args.args);
    json_object_set(in, "kwargs", plan->args.kwargs);
    json_object_set(in, "undefined", plan->args.undefined ? plan->args.undefined : json_array());
    json_object_set_new(in, "bigints", plan->bigints ? json_incref(plan->bigints) : json_array());
    json_object_set_new(in, "workdir", json_string(req->workdir));
    char *text = fb_json_dumps(in, JSON_COMPACT | JSON_ENCODE_ANY);
    json_decref(in);
    if (text)
        *len = strlen(text);
    return text;
}

/* Both streams are captured up to the larger cap; core/result.c cuts each to its own. */
void fb_launch_limits(const fb_request *req, fb_sandbox_limits *lim)
{
    const fb_call_limits *l = &req->limits;
    *lim = (fb_sandbox_limits){
        .timeout_s = req->timeout_s,
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

/* Appends "KEY=value" to envp (e entries so far), replacing an entry of the same KEY. */
static int env_put(const char **envp, size_t *e, const char *kv, fb_error *err)
{
    size_t klen = strcspn(kv, "=");
    for (size_t i = 0; i < *e; i++)
        if (strncmp(envp[i], kv, klen) == 0 && envp[i][klen] == '=') {
            envp[i] = kv;
            return 0;
        }
    if (*e >= FB_LAUNCH_MAX_ENV - 1)
        return fb_set_error(err, FB_ERR_INTERNAL, E2BIG, "more than %d environment variables", FB_LAUNCH_MAX_ENV - 1);
    envp[(*e)++] = kv;
    envp[*e] = NULL;
    return 0;
}

/* The function's whole environment: fnbox's minimal one, the driver's, then the request's permissions.env
 * (which may replace the first two only under allowAllEnv: core/permissions.c refuses reserved keys
 * otherwise). Nothing comes from fnbox's own environment. */
static const char *const k_base_env[] = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/tmp", "TMPDIR=/tmp",
                                         "LANG=C.UTF-8", "USER=sandbox", "LOGNAME=sandbox", NULL};

static int build_env(const char *const *driver_env, const char *extra_env, const fb_permissions *perm,
                     const char **envp, fb_error *err)
{
    size_t e = 0;
    envp[0] = NULL;
    for (const char *const *p = k_base_env; *p; p++)
        if (env_put(envp, &e, *p, err) < 0)
            return -1;
    for (const char *const *p = driver_env; p && *p; p++)
        if (env_put(envp, &e, *p, err) < 0)
            return -1;
    if (extra_env && env_put(envp, &e, extra_env, err) < 0)
        return -1;
    for (size_t i = 0; i < perm->nenv; i++)
        if (env_put(envp, &e, perm->env[i], err) < 0)
            return -1;
    return 0;
}

/* argv: runtime, its fixed arguments, the harness. envp: see build_env. Both point into static, driver or
 * request storage; the arrays live in the caller's frame. */
static int build_exec(const fb_lang_driver *lang, const char *runtime, const char *extra_env,
                      const fb_permissions *perm, const char **argv, const char **envp, fb_error *err)
{
    size_t a = 0;
    argv[a++] = runtime;
    for (const char *const *p = lang->runtime_args; *p; p++) {
        if (a >= FB_LAUNCH_MAX_ARGV - 2)
            return fb_set_error(err, FB_ERR_INTERNAL, E2BIG, "%s driver: more than %d runtime arguments", lang->name,
                                FB_LAUNCH_MAX_ARGV - 3);
        argv[a++] = *p;
    }
    argv[a++] = lang->harness_path;
    argv[a] = NULL;
    return build_env(lang->env, extra_env, perm, envp, err);
}

static int target_interpreted(const fb_request *req, const fb_call_plan *plan, fb_launch *t, fb_error *err)
{
    const char *runtime = fb_lang_find_runtime(req->lang);
    if (!runtime)
        return fb_set_error(err, FB_ERR_KERNEL_FEATURE, 0, "no %s runtime found (looked for %s); run `fnbox doctor`",
                            req->lang->name, req->lang->runtimes[0]);
    if (req->lang->extra)
        req->lang->extra(runtime, &t->extra);
    if (build_exec(req->lang, runtime, t->extra.env, &req->permissions, t->argv, t->envp, err) < 0)
        return -1;
    size_t hlen = 0;
    const char *hsrc = req->lang->harness_source(&hlen);
    t->files[t->nfiles++] = (fb_sandbox_file){.path = req->lang->harness_path, .data = hsrc, .len = hlen};
    if (t->extra.path)
        t->files[t->nfiles++] = (fb_sandbox_file){.path = t->extra.path, .data = t->extra.data, .len = t->extra.len};
    t->inert_until_input = true; /* the user's code is in the input; harnesses start nothing before it */
    t->input = harness_input(req, plan, &t->input_len);
    if (!t->input)
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, 0, "out of memory building the harness input");
    return 0;
}

static int target_compiled(const fb_request *req, const fb_call_plan *plan, const fb_compiled *prog, fb_launch *t,
                           fb_error *err)
{
    t->argv[0] = "/.fnbox/prog";
    t->argv[1] = NULL;
    if (build_env(NULL, NULL, &req->permissions, t->envp, err) < 0)
        return -1;
    t->files[t->nfiles++] = (fb_sandbox_file){.path = t->argv[0], .data = prog->data, .len = prog->len,
                                              .executable = true};
    t->input = req->lang->compiler->call_input(plan->args.args, &t->input_len);
    if (!t->input)
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, 0, "out of memory building the call input");
    return 0;
}

int fb_launch_prepare(const fb_request *req, const fb_call_plan *plan, const fb_compiled *prog, fb_launch *l,
                      fb_error *err)
{
    return req->lang->compiler ? target_compiled(req, plan, prog, l, err) : target_interpreted(req, plan, l, err);
}

/* permissions.network: when anything is allowed, the sandbox's init opens 127.0.0.1:3128 inside and the
 * proxy (net/proxy.h) serves it from here; the function's environment points its clients there (these
 * replace any same-named permissions.env entry). Stopped as soon as every sandboxed process is gone. */
int fb_launch_run(const fb_request *req, fb_launch *t, fb_workspace *ws, int cancel_fd, fb_proxy_call *net,
                  fb_sandbox_outcome *out, fb_error *err)
{
    bool network = fb_net_policy_allows_any(net->policy);
    size_t e = 0;
    while (t->envp[e])
        e++;
    for (const char *const *v = fb_proxy_env; network && *v; v++)
        if (env_put(t->envp, &e, *v, err) < 0)
            return -1;
    fb_sandbox_spec spec = {
        .exec_path = t->argv[0],
        .argv = (char *const *)t->argv,
        .envp = (char *const *)t->envp,
        .workdir = req->workdir,
        .files = t->files,
        .nfiles = t->nfiles,
        .input = t->input,
        .input_len = t->input_len,
        .cancel_fd = cancel_fd,
        /* permissions.childProcess: the files its commands resolved to, or anything */
        .exec_allow = req->permissions.exec_allow,
        .exec_any = req->permissions.exec_any,
        .inert_until_input = t->inert_until_input,
    };
    fb_launch_limits(req, &spec.limits);
    fb_workspace_attach(ws, &spec);
    spec.proxy_listen = network;
    spec.on_proxy = fb_proxy_on_listen;
    spec.proxy_ctx = net;
    int rc = fb_sandbox_run(&spec, out, err);
    fb_proxy_stop(net->proxy);
    return rc;
}

void fb_launch_free(fb_launch *l)
{
    free(l->input);
    free(l->extra.data);
    *l = (fb_launch){0};
}
