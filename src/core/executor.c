/* One call, stage by stage, as DESIGN.md draws it:
 *   request (decode + validate) -> plan (language, signature, arguments) -> sandbox (run the harness)
 *   -> result (one ExecutionResult JSON). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/compile.h"
#include "core/limits.h"
#include "core/request.h"
#include "core/result.h"
#include "core/workspace.h"
#include "fnbox.h"
#include "lang/plan.h"
#include "sandbox/sandbox.h"
#include "util/fd.h"
#include "util/json.h"

#define MAX_ARGV 32
#define MAX_ENV 32

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

static void default_limits(fb_sandbox_limits *lim, double timeout_s)
{
    *lim = (fb_sandbox_limits){
        .timeout_s = timeout_s,
        .memory_bytes = FB_DEFAULT_MEMORY_BYTES,
        .pids = FB_DEFAULT_PIDS,
        .nofile = FB_DEFAULT_NOFILE,
        .fsize_bytes = FB_DEFAULT_FSIZE_BYTES,
        .workspace_bytes = FB_DEFAULT_WORKSPACE_BYTES,
        .tmp_bytes = FB_DEFAULT_TMP_BYTES,
        .tmpfs_inodes = FB_DEFAULT_TMPFS_INODES,
        .output_bytes = FB_DEFAULT_OUTPUT_BYTES,
        .result_bytes = FB_DEFAULT_RESULT_BYTES,
    };
}

/* argv: runtime, its fixed arguments, the harness. envp: a clean environment. Both point into
 * static or driver storage; the arrays live in the caller's frame. */
static int build_exec(const fb_lang_driver *lang, const char *runtime, const char **argv, const char **envp,
                      fb_error *err)
{
    size_t a = 0, e = 0;
    argv[a++] = runtime;
    for (const char *const *p = lang->runtime_args; *p; p++) {
        if (a >= MAX_ARGV - 2)
            return fb_set_error(err, "InternalError", E2BIG, "%s driver: more than %d runtime arguments", lang->name,
                                MAX_ARGV - 3);
        argv[a++] = *p;
    }
    argv[a++] = lang->harness_path;
    argv[a] = NULL;
    static const char *const base_env[] = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/tmp", "TMPDIR=/tmp",
                                           "LANG=C.UTF-8", "USER=sandbox", "LOGNAME=sandbox"};
    for (size_t i = 0; i < sizeof base_env / sizeof *base_env; i++)
        envp[e++] = base_env[i];
    for (const char *const *p = lang->env; *p; p++) {
        if (e >= MAX_ENV - 1)
            return fb_set_error(err, "InternalError", E2BIG, "%s driver: too many environment variables", lang->name);
        envp[e++] = *p;
    }
    envp[e] = NULL;
    return 0;
}

/* What runs: an interpreter with its harness, or the program core/compile.c built (as /.fnbox/prog, same
 * fd 3/4 protocol). The strings point into static, driver or plan storage; input is the caller's to free. */
typedef struct run_target {
    const char *argv[MAX_ARGV], *envp[MAX_ENV];
    fb_sandbox_file file;
    char *input;
    size_t input_len;
} run_target;

static int target_interpreted(const fb_request *req, const fb_call_plan *plan, run_target *t, fb_error *err)
{
    const char *runtime = fb_lang_find_runtime(req->lang);
    if (!runtime)
        return fb_set_error(err, "KernelFeatureMissing", 0, "no %s runtime found (looked for %s); run `fnbox doctor`",
                            req->lang->name, req->lang->runtimes[0]);
    if (build_exec(req->lang, runtime, t->argv, t->envp, err) < 0)
        return -1;
    size_t hlen = 0;
    const char *hsrc = req->lang->harness_source(&hlen);
    t->file = (fb_sandbox_file){.path = req->lang->harness_path, .data = hsrc, .len = hlen};
    t->input = harness_input(req, plan, &t->input_len);
    if (!t->input)
        return fb_set_error(err, "InternalError", 0, "out of memory building the harness input");
    return 0;
}

static int target_compiled(const fb_request *req, const fb_call_plan *plan, const fb_compiled *prog, run_target *t,
                           fb_error *err)
{
    static const char *const envp[] = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/tmp", "TMPDIR=/tmp",
                                       "LANG=C.UTF-8", "USER=sandbox", "LOGNAME=sandbox", NULL};
    t->argv[0] = "/.fnbox/prog";
    t->argv[1] = NULL;
    memcpy(t->envp, envp, sizeof envp);
    t->file = (fb_sandbox_file){.path = t->argv[0], .data = prog->data, .len = prog->len, .executable = true};
    t->input = req->lang->compiler->call_input(plan->args.args, &t->input_len);
    if (!t->input)
        return fb_set_error(err, "InternalError", 0, "out of memory building the call input");
    return 0;
}

static int run_in_sandbox(const fb_request *req, const run_target *t, fb_workspace *ws, int cancel_fd,
                          fb_sandbox_outcome *out, fb_error *err)
{
    fb_sandbox_spec spec = {
        .exec_path = t->argv[0],
        .argv = (char *const *)t->argv,
        .envp = (char *const *)t->envp,
        .workdir = req->workdir,
        .files = &t->file,
        .nfiles = 1,
        .input = t->input,
        .input_len = t->input_len,
        .cancel_fd = cancel_fd,
    };
    default_limits(&spec.limits, req->timeout_s);
    fb_workspace_attach(ws, &spec);
    return fb_sandbox_run(&spec, out, err);
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
    bool setup = strcmp(err->type, "SandboxSetupFailed") == 0 || strcmp(err->type, "KernelFeatureMissing") == 0;
    return setup ? FNBOX_SANDBOX_FAILED : strcmp(err->type, "InvalidRequest") == 0 ? FNBOX_INVALID_REQUEST : FNBOX_OK;
}

FNBOX_API int fnbox_call(const char *request, size_t request_len, const fnbox_call_options *options, char **result,
                         size_t *result_len)
{
    double t0 = now_ms();
    int cancel_fd = options && options->size >= sizeof *options ? options->cancel_fd : -1;
    fb_error err = {0};
    fb_request req;
    fb_call_plan plan = {0};
    fb_sandbox_outcome outcome = {0};
    fb_result res = {0};
    fb_compiled prog = {0};
    fb_workspace ws = {0};
    run_target target = {0};
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
    default_limits(&lim, req.timeout_s);
    if (fb_plan_call(&pin, &plan, &err) < 0 || fb_workspace_prepare(&ws, &req, &lim, &err) < 0) {
        code = fail_result(&err, setup_code(&err), 1, t0, plan.signature_source, result, result_len);
        goto done;
    }
    if (req.lang->compiler && fb_compile(req.lang, req.code, req.code_len, plan.function_name, req.timeout_s,
                                         cancel_fd, &prog, &err) < 0) {
        code = fail_result(&err, setup_code(&err), 1, t0, plan.signature_source, result, result_len);
        goto done;
    }
    if ((req.lang->compiler ? target_compiled(&req, &plan, &prog, &target, &err)
                            : target_interpreted(&req, &plan, &target, &err)) < 0 ||
        run_in_sandbox(&req, &target, &ws, cancel_fd, &outcome, &err) < 0) {
        code = fail_result(&err, FNBOX_SANDBOX_FAILED, 1, t0, plan.signature_source, result, result_len);
        goto done;
    }
    /* Every sandboxed process is gone: what they left behind can be read, judged and synced. */
    if (fb_result_from_outcome(&res, &outcome, req.timeout_s, &err) < 0 || fb_workspace_collect(&ws, &outcome, &err) < 0 ||
        fb_workspace_sync(&ws, fb_result_succeeded(&res), &err) < 0 || fb_workspace_report(&ws, res.obj, &err) < 0) {
        fb_result_free(&res);
        code = fail_result(&err, FNBOX_SANDBOX_FAILED, 1, t0, plan.signature_source, result, result_len);
        goto done;
    }
    fb_result_set_meta(&res, now_ms() - t0, plan.signature_source);
    if (req.lang->compiler)
        fb_result_set_compile(&res, prog.cache);
    code = finish(&res, FNBOX_OK, result, result_len);
done:
    free(target.input);
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
