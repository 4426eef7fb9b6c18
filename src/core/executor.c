/* One call, stage by stage (docs/design.md draws the path); each stage is one call below:
 *   request    core/request    decode + validate the JSON; nothing runs yet
 *   host       ask_host        the caller's callbacks decide the requested env keys and commands
 *   network    net/policy      permissions.network as the proxy's policy
 *   plan       lang/plan       function, signature, normalized arguments (the language's driver)
 *   workspace  core/workspace  stage the files, open the mounts
 *   compile    core/compile    C and C++ only: the program, from the cache or a compiler sandbox
 *   launch     core/launch     argv, environment, files and input of the call; run in the sandbox
 *   result     core/result     judge the outcome; then the workspace collects, syncs and reports
 * and one ExecutionResult JSON comes out, also when a stage fails (fail_result). */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/compile.h"
#include "core/launch.h"
#include "core/limits.h"
#include "core/request.h"
#include "core/result.h"
#include "core/workspace.h"
#include "fnbox.h"
#include "lang/plan.h"
#include "net/proxy.h"
#include "sandbox/sandbox.h"
#include "util/fd.h"
#include "util/json.h"
#include "util/utf8.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
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
    fb_launch launch = {0};
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
    fb_launch_limits(&req, &lim);
    if (ask_host(&req, &opts, &err) < 0 ||
        fb_net_policy_from_patterns(req.permissions.network_all, req.permissions.network_allow,
                                    req.permissions.nnetwork, "permissions.network", &netpol, &err) < 0 ||
        fb_plan_call(&pin, &plan, &err) < 0 ||
        fb_workspace_prepare(&ws, &req, &lim, &err) < 0) {
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
    fb_workspace_set_events(&ws, opts.event, opts.event_ctx, opts.sync_allow_abort != 0);
    if (req.lang->compiler && fb_compile(req.lang, req.code, req.code_len, plan.function_name, req.timeout_s,
                                         cancel_fd, &prog, &err) < 0) {
        code = fail_result(&err, setup_code(&err), 1, t0, plan.signature_source, result, result_len);
        goto done;
    }
    if (fb_launch_prepare(&req, &plan, &prog, &launch, &err) < 0 ||
        fb_launch_run(&req, &launch, &ws, cancel_fd, &net, &outcome, &err) < 0) {
        code = fail_result(&err, FNBOX_SANDBOX_FAILED, 1, t0, plan.signature_source, result, result_len);
        goto done;
    }
    /* Every sandboxed process is gone: what they left behind can be read, judged and synced. */
    fb_result_limits rlim = result_limits(&req);
    if (fb_result_from_outcome(&res, &outcome, &rlim, &err) < 0 || fb_workspace_collect(&ws, &outcome, &err) < 0 ||
        fb_workspace_sync(&ws, fb_result_succeeded(&res), &err) < 0 || fb_workspace_report(&ws, res.obj, &err) < 0) {
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
    fb_launch_free(&launch);
    fb_proxy_free(net.proxy);
    fb_net_policy_free(netpol);
    fb_workspace_free(&ws);
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
