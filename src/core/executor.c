/* One call, stage by stage (docs/design.md draws the path); each stage is one call below:
 *   request    request/        decode + validate the JSON into plain structs; nothing runs yet
 *   host       core/host       the caller's callbacks decide the requested env keys and commands
 *   network    net/policy      permissions.network as the proxy's policy
 *   plan       lang/plan       function, signature, normalized arguments (the language's driver)
 *   workspace  fs/workspace    stage the files, open the mounts (core/call_files configures it)
 *   compile    core/compile    C and C++ only: the program, from the cache or a compiler sandbox
 *   deps       core/dependencies  `dependencies` only: each list's layer, cached or installed once in a
 *                              build sandbox (docs/internals/dependencies.md)
 *   launch     core/launch     argv, environment, files and input of the call; run in the sandbox (a
 *                              warm pool's prepared one when it fits: core/pool), its output told to
 *                              the host as it arrives (core/output)
 *   result     core/result     judge the outcome; fs/ collects and syncs; core/result_files reports
 * and one ExecutionResult JSON comes out, also when a stage fails (fail_result). */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/call_files.h"
#include "core/compile.h"
#include "core/executor.h"
#include "core/host.h"
#include "core/launch.h"
#include "request/limits.h"
#include "request/files.h"
#include "core/result.h"
#include "core/result_files.h"
#include "fnbox.h"
#include "lang/plan.h"
#include "net/proxy.h"
#include "request/request.h"
#include "sandbox/sandbox.h"
#include "util/mapped.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int finish(fb_result *res, int code, char **result, size_t *result_len)
{
    *result = fb_result_render_final(res, result_len);
    fb_result_free(res);
    return *result ? code : FNBOX_NO_RESULT;
}

/* The function did not run: exitCode 1, the error, meta. */
static int fail_result(const fb_error *err, int code, double t0, const char *sigsrc, char **result,
                       size_t *result_len)
{
    return fb_result_fail(err, code, now_ms() - t0, sigsrc, result, result_len);
}

FNBOX_API int fnbox_call(const char *request, size_t request_len, const fnbox_call_options *options, char **result,
                         size_t *result_len)
{
    return fb_executor_call(request, request_len, options, NULL, result, result_len);
}

int fb_executor_call(const char *request, size_t request_len, const fnbox_call_options *options, fb_pool *pool,
                     char **result, size_t *result_len)
{
    double t0 = now_ms();
    fnbox_call_options opts = fb_host_options(options);
    int cancel_fd = opts.cancel_fd;
    fb_error err = {0};
    fb_request req;
    fb_call_plan plan = {0};
    fb_sandbox_outcome outcome = {0};
    fb_result res = {0};
    fb_compiled prog = {0};
    fb_workspace ws = {0};
    fb_ws_files files = {0}; /* the request's `files`, decoded; ws borrows them */
    fb_launch launch = {0};
    fb_deps_layers deps = {0};
    fb_output output;
    fb_proxy_call net = {0};
    fb_net_policy *netpol = NULL;
    fb_sandbox_limits lim;
    int code;

    *result = NULL;
    if (fb_request_parse(request, request_len, &req, &err) < 0) {
        code = fail_result(&err, fb_result_code_of(&err), t0, NULL, result, result_len);
        fb_request_free(&req);
        return code;
    }
    fb_plan_input pin = {.lang = req.lang, .code = req.code, .code_len = req.code_len,
                         .function_name = req.function_name, .schema = req.schema, .args = req.args,
                         .kwargs = req.kwargs};
    fb_launch_limits(&req, &lim);
    if (fb_host_ask(&req.permissions, &opts, &err) < 0 ||
        fb_net_policy_from_patterns(req.permissions.network_all, req.permissions.network_allow,
                                    req.permissions.nnetwork, "permissions.network", &netpol, &err) < 0 ||
        fb_plan_call(&pin, &plan, &err) < 0 ||
        fb_request_files_decode(req.files, req.workdir, lim.workspace_bytes, &files, &err) < 0 ||
        fb_call_files_prepare(&ws, &req, &files, req.lang->env_caches && !(req.environment && req.environment->root), &lim,
                              &err) < 0) {
        code = fail_result(&err, fb_result_code_of(&err), t0, plan.signature_source, result, result_len);
        goto done;
    }
    net.policy = netpol;
    if (opts.network) { /* asked by the proxy for each connection the policy allows */
        net.check = fb_host_network_check;
        net.check_ctx = &opts;
    }
    if (opts.fs) /* asked by the mount servers at each operation, and by sync for each change */
        fb_workspace_set_check(&ws, fb_host_fs_check, &opts);
    fb_call_files_events(&ws, &opts);
    if (req.lang->compiler && fb_compile(req.lang, req.environment, req.code, req.code_len, plan.function_name, req.timeout_s,
                                         cancel_fd, pool, &prog, &err) < 0) {
        code = fail_result(&err, fb_result_code_of(&err), t0, plan.signature_source, result, result_len);
        goto done;
    }
    if (fb_deps_prepare(&req.dependencies, req.environment, cancel_fd, &deps, &err) < 0) {
        code = fail_result(&err, fb_result_code_of(&err), t0, plan.signature_source, result, result_len);
        goto done;
    }
    launch.deps = &deps;
    if (opts.output) {
        fb_output_init(&output, opts.output, opts.output_ctx, req.limits.stdout_bytes, req.limits.stderr_bytes);
        launch.output = &output;
        launch.stream = true;
    }
    if (fb_launch_prepare(&req, &plan, &prog, &launch, &err) < 0 ||
        fb_launch_run(&req, &launch, &ws, cancel_fd, &net, pool, &outcome, &err) < 0) {
        code = fail_result(&err, FNBOX_SANDBOX_FAILED, t0, plan.signature_source, result, result_len);
        goto done;
    }
    /* Every sandboxed process is gone: what they left behind can be read, judged and synced. */
    fb_result_limits rlim = fb_result_limits_of(req.timeout_s, &req.limits);
    if (fb_result_from_outcome(&res, &outcome, &rlim, &err) < 0 ||
        fb_workspace_collect(&ws, outcome.scratch_fd, outcome.scratch_path, outcome.nscratch, &err) < 0 ||
        fb_workspace_sync(&ws, fb_result_succeeded(&res), &err) < 0 ||
        fb_result_add_files(&res, &ws, &req.reporting, &err) < 0) {
        fb_result_free(&res);
        code = fail_result(&err, FNBOX_SANDBOX_FAILED, t0, plan.signature_source, result, result_len);
        goto done;
    }
    if (net.proxy && fb_result_set_network(&res, net.proxy, &err) < 0) {
        fb_result_free(&res);
        code = fail_result(&err, FNBOX_SANDBOX_FAILED, t0, plan.signature_source, result, result_len);
        goto done;
    }
    fb_result_set_meta(&res, now_ms() - t0, plan.signature_source);
    if (outcome.prepared)
        fb_result_set_warm(&res);
    if (req.lang->compiler)
        fb_result_set_compile(&res, prog.cache);
    fb_result_set_dependencies(&res, fb_deps_meta(&deps));
    code = finish(&res, FNBOX_OK, result, result_len);
done:
    fb_launch_free(&launch);
    fb_deps_layers_free(&deps);
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
    if (!fb_mapped_release(p)) /* a large result is laid out in a mapping (util/mapped.h) */
        free(p);
}

FNBOX_API const char *fnbox_version(void)
{
    return FNBOX_VERSION;
}
