/* One call, stage by stage, as docs/design.md draws it:
 *   request (decode + validate) -> plan (language, signature, arguments) -> sandbox (run the harness)
 *   -> result (one ExecutionResult JSON). */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/call_files.h"
#include "core/compile.h"
#include "core/limits.h"
#include "core/request.h"
#include "core/request_files.h"
#include "core/result.h"
#include "core/result_files.h"
#include "fnbox.h"
#include "lang/plan.h"
#include "net/proxy.h"
#include "sandbox/sandbox.h"
#include "util/fd.h"
#include "util/json.h"
#include "util/utf8.h"

#define MAX_ARGV 32
#define MAX_ENV (32 + FB_MAX_ENV_VARS) /* fnbox's and the driver's, then the request's permissions.env */

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

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

/* The request's limits (defaults filled in by core/request.c) as the sandbox takes them. Both streams are
 * captured up to the larger cap; core/result.c cuts each to its own. */
static void call_limits(const fb_request *req, fb_sandbox_limits *lim)
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

static fb_result_limits result_limits(const fb_request *req)
{
    const fb_call_limits *l = &req->limits;
    return (fb_result_limits){
        .timeout_s = req->timeout_s,
        .memory_bytes = l->memory_bytes,
        .result_bytes = l->result_bytes,
        .file_size_bytes = l->file_size_bytes,
        .cpu_seconds = l->cpu_seconds,
        .stdout_bytes = l->stdout_bytes,
        .stderr_bytes = l->stderr_bytes,
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
    if (*e >= MAX_ENV - 1)
        return fb_set_error(err, FB_ERR_INTERNAL, E2BIG, "more than %d environment variables", MAX_ENV - 1);
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
        if (a >= MAX_ARGV - 2)
            return fb_set_error(err, FB_ERR_INTERNAL, E2BIG, "%s driver: more than %d runtime arguments", lang->name,
                                MAX_ARGV - 3);
        argv[a++] = *p;
    }
    argv[a++] = lang->harness_path;
    argv[a] = NULL;
    return build_env(lang->env, extra_env, perm, envp, err);
}

/* What runs: an interpreter with its harness, or the program core/compile.c built (as /.fnbox/prog, same
 * fd 3/4 protocol). The strings point into static, driver or plan storage; input is the caller's to free. */
typedef struct run_target {
    const char *argv[MAX_ARGV], *envp[MAX_ENV];
    fb_sandbox_file files[2]; /* the harness or program, and the driver's extra */
    size_t nfiles;
    fb_lang_extra extra;      /* owns the extra file's data */
    char *input;
    size_t input_len;
    bool inert_until_input; /* fb_sandbox_spec's: a harness runs no user code before its input */
} run_target;

static int target_interpreted(const fb_request *req, const fb_call_plan *plan, run_target *t, fb_error *err)
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

static int target_compiled(const fb_request *req, const fb_call_plan *plan, const fb_compiled *prog, run_target *t,
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

/* permissions.network: when anything is allowed, the sandbox's init opens 127.0.0.1:3128 inside and the
 * proxy (net/proxy.h) serves it from here; the function's environment points its clients there (these
 * replace any same-named permissions.env entry). Stopped as soon as every sandboxed process is gone. */
static int run_in_sandbox(const fb_request *req, run_target *t, fb_workspace *ws, int cancel_fd, fb_proxy_call *net,
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
    call_limits(req, &spec.limits);
    fb_sandbox_file *staged = NULL; /* the request's files outside mounts, as the sandbox takes them */
    if (fb_call_files_attach(ws, req->reporting.include_changes, &spec, &staged, err) < 0)
        return -1;
    spec.proxy_listen = network;
    spec.on_proxy = fb_proxy_on_listen;
    spec.proxy_ctx = net;
    int rc = fb_sandbox_run(&spec, out, err);
    free(staged);
    fb_proxy_stop(net->proxy);
    return rc;
}

/* The host's callbacks (fnbox_call_options) decide each requested env key and command before anything
 * runs: a denial refuses the call with "PermissionDenied", naming what and why. */
static int ask_host(const fb_request *req, const fnbox_call_options *o, fb_error *err)
{
    char reason[512];
    const fb_permissions *p = &req->permissions;
    for (size_t i = 0; o->env && i < p->nenv; i++) {
        const char *kv = p->env[i];
        size_t klen = strcspn(kv, "=");
        char key[FB_MAX_NAME_BYTES + 1];
        snprintf(key, sizeof key, "%.*s", (int)klen, kv);
        reason[0] = '\0';
        if (!o->env(o->permission_ctx, key, kv + klen + 1, reason, sizeof reason))
            return fb_set_error(err, FB_ERR_PERMISSION_DENIED, 0, "permissions.env.%s: denied by the host%s%.400s", key,
                                reason[0] ? ": " : "", reason);
    }
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
            return fb_set_error(err, FB_ERR_PERMISSION_DENIED, 0, "permissions.childProcess[%zu]: command '%.64s' denied by "
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

static int network_check(void *ctx, const char *host, uint16_t port, const char *address, char *reason, size_t cap)
{
    const fnbox_call_options *o = ctx;
    reason[0] = '\0';
    int allowed = o->network(o->permission_ctx, host, port, address, reason, cap);
    clean_reason(reason, cap);
    return allowed != 0;
}

static int fs_check(void *ctx, const char *path, const char *operation, char *reason, size_t cap)
{
    const fnbox_call_options *o = ctx;
    reason[0] = '\0';
    int allowed = o->fs(o->permission_ctx, path, operation, reason, cap);
    clean_reason(reason, cap);
    return allowed != 0;
}

/* The options the caller's struct is large enough to hold (older callers pass a smaller size); the rest
 * stay at their defaults. */
static fnbox_call_options read_options(const fnbox_call_options *o)
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

static int finish(fb_result *res, int code, char **result, size_t *result_len)
{
    *result = fb_result_render(res, result_len);
    fb_result_free(res);
    return *result ? code : FNBOX_NO_RESULT;
}

static int fail_result(const fb_error *err, int code, int exit_code, double t0, const char *sigsrc, char **result,
                       size_t *result_len)
{
    fb_result res;
    if (fb_result_from_error(&res, err, exit_code, now_ms() - t0) < 0)
        return FNBOX_NO_RESULT;
    fb_result_set_meta(&res, now_ms() - t0, sigsrc);
    return finish(&res, code, result, result_len);
}

static int setup_code(const fb_error *err)
{
    switch (fb_errkind_family(err->kind)) {
    case FB_ERRFAM_SETUP:
        return FNBOX_SANDBOX_FAILED;
    case FB_ERRFAM_REQUEST:
        return FNBOX_INVALID_REQUEST;
    default:
        return FNBOX_OK;
    }
}

FNBOX_API int fnbox_call(const char *request, size_t request_len, const fnbox_call_options *options, char **result,
                         size_t *result_len)
{
    double t0 = now_ms();
    fnbox_call_options opts = read_options(options);
    int cancel_fd = opts.cancel_fd;
    fb_error err = {0};
    fb_request req;
    fb_call_plan plan = {0};
    fb_sandbox_outcome outcome = {0};
    fb_result res = {0};
    fb_compiled prog = {0};
    fb_workspace ws = {0};
    fb_ws_files files = {0}; /* the request's `files`, decoded; ws borrows them */
    run_target target = {0};
    fb_proxy_call net = {0};
    fb_net_policy *netpol = NULL;
    fb_sandbox_limits lim;
    int code;

    *result = NULL;
    if (fb_request_parse(request, request_len, &req, &err) < 0) {
        code = fail_result(&err, setup_code(&err), 1, t0, NULL, result, result_len);
        fb_request_free(&req);
        return code;
    }
    fb_plan_input pin = {.lang = req.lang, .code = req.code, .code_len = req.code_len,
                         .function_name = req.function_name, .schema = req.schema, .args = req.args,
                         .kwargs = req.kwargs};
    call_limits(&req, &lim);
    if (ask_host(&req, &opts, &err) < 0 ||
        fb_net_policy_from_patterns(req.permissions.network_all, req.permissions.network_allow,
                                    req.permissions.nnetwork, "permissions.network", &netpol, &err) < 0 ||
        fb_plan_call(&pin, &plan, &err) < 0 ||
        fb_request_files_decode(req.files, req.workdir, lim.workspace_bytes, &files, &err) < 0 ||
        fb_call_files_prepare(&ws, &req, &files, &lim, &err) < 0) {
        code = fail_result(&err, setup_code(&err), 1, t0, plan.signature_source, result, result_len);
        goto done;
    }
    net.policy = netpol;
    if (opts.network) { /* asked by the proxy for each connection the policy allows */
        net.check = network_check;
        net.check_ctx = &opts;
    }
    if (opts.fs) /* asked by the mount servers at each operation, and by sync for each change */
        fb_workspace_set_check(&ws, fs_check, &opts);
    fb_call_files_events(&ws, &opts);
    if (req.lang->compiler && fb_compile(req.lang, req.code, req.code_len, plan.function_name, req.timeout_s,
                                         cancel_fd, &prog, &err) < 0) {
        code = fail_result(&err, setup_code(&err), 1, t0, plan.signature_source, result, result_len);
        goto done;
    }
    if ((req.lang->compiler ? target_compiled(&req, &plan, &prog, &target, &err)
                            : target_interpreted(&req, &plan, &target, &err)) < 0 ||
        run_in_sandbox(&req, &target, &ws, cancel_fd, &net, &outcome, &err) < 0) {
        code = fail_result(&err, FNBOX_SANDBOX_FAILED, 1, t0, plan.signature_source, result, result_len);
        goto done;
    }
    /* Every sandboxed process is gone: what they left behind can be read, judged and synced. */
    fb_result_limits rlim = result_limits(&req);
    if (fb_result_from_outcome(&res, &outcome, &rlim, &err) < 0 ||
        fb_workspace_collect(&ws, outcome.scratch_fd, outcome.scratch_path, outcome.nscratch, &err) < 0 ||
        fb_workspace_sync(&ws, fb_result_succeeded(&res), &err) < 0 ||
        fb_result_add_files(&res, &ws, &req.reporting, &err) < 0) {
        fb_result_free(&res);
        code = fail_result(&err, FNBOX_SANDBOX_FAILED, 1, t0, plan.signature_source, result, result_len);
        goto done;
    }
    if (net.proxy) /* every connection the proxy allowed or refused */
        json_object_set_new(res.obj, "network", fb_proxy_log_json(net.proxy));
    fb_result_set_meta(&res, now_ms() - t0, plan.signature_source);
    if (req.lang->compiler)
        fb_result_set_compile(&res, prog.cache);
    code = finish(&res, FNBOX_OK, result, result_len);
done:
    free(target.input);
    free(target.extra.data);
    fb_proxy_free(net.proxy);
    fb_net_policy_free(netpol);
    fb_workspace_free(&ws);
    fb_request_files_free(&files);
    fb_compiled_free(&prog);
    fb_sandbox_outcome_free(&outcome);
    fb_call_plan_free(&plan);
    fb_request_free(&req);
    return code;
}

FNBOX_API void fnbox_free(void *p)
{
    free(p);
}

FNBOX_API const char *fnbox_version(void)
{
    return FNBOX_VERSION;
}
