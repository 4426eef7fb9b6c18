/* fnbox_session_call: a FunctionCallRequest run in a session, in the session's files. The stages are a
 * call's (core/executor.c) less the ones the session owns (files, mounts, permissions, limits):
 *   request    request/request  decode + validate (files, mount, permissions, limits, workdir refused)
 *   plan       lang/plan        language, signature, arguments
 *   compile    core/compile     C and C++ only, in the compiler's own sandbox (or the cache)
 *   launch     core/launch      the driver's argv, environment, files and the harness's input
 *   place      core/session     the harness's files written into the session's /tmp (a directory per run),
 *                               the arguments and environment pointed there
 *   run        sandbox/exec     in the session's sandbox: input on fd 4, result on fd 3
 *   result     core/result      as a call's, without `files` (the session keeps them) */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/compile.h"
#include "core/launch.h"
#include "core/result.h"
#include "core/session.h"
#include "lang/plan.h"
#include "request/limits.h"
#include "request/request.h"

#define ONE_SHOT_DIR "/.fnbox/" /* where the drivers place the harness's files */
#define MAX_OWNED (FB_LANG_MAX_ARGV + FB_LANG_MAX_ENV)

static const char *const k_session_owned[] = {"files", "mount", "permissions", "limits", "workdir",
                                              "environment", "dependencies"};

typedef struct call_state {
    fb_request req;
    fb_call_plan plan;
    fb_compiled prog;
    fb_launch launch;
    char dir[64];
    char *owned[MAX_OWNED];       /* relocated arguments and environment entries */
    size_t nowned;
    const char *envp[SESSION_ENV_CAP];
    fb_sandbox_outcome outcome;
    fb_result res;
} call_state;

static void call_state_free(call_state *c)
{
    fb_result_free(&c->res);
    fb_sandbox_outcome_free(&c->outcome);
    for (size_t i = 0; i < c->nowned; i++)
        free(c->owned[i]);
    fb_launch_free(&c->launch);
    fb_compiled_free(&c->prog);
    fb_call_plan_free(&c->plan);
    fb_request_free(&c->req);
}

/* A field the session owns, given at the top level or in v0.2's `options`. */
static int refuse_owned(const fb_request *req, fb_error *err)
{
    json_t *options = json_object_get(req->root, "options");
    for (size_t i = 0; i < sizeof k_session_owned / sizeof *k_session_owned; i++)
        if (json_object_get(req->root, k_session_owned[i]) || json_object_get(options, k_session_owned[i]))
            return fb_set_error(err, FB_ERR_INVALID_REQUEST, 0,
                                "%s: the session's own (set when it is opened), not a call's", k_session_owned[i]);
    return 0;
}

/* env: the session's named environment, which its calls run in (a request's own is refused). */
static int plan(call_state *c, const fb_environment *env, const fnbox_call_options *opts, fb_error *err)
{
    c->req.environment = env;
    const fb_request *r = &c->req;
    fb_plan_input pin = {.lang = r->lang, .code = r->code, .code_len = r->code_len, .function_name = r->function_name,
                         .schema = r->schema, .args = r->args, .kwargs = r->kwargs};
    if (refuse_owned(r, err) < 0 || fb_plan_call(&pin, &c->plan, err) < 0)
        return -1;
    if (r->lang->compiler && fb_compile(r->lang, env, r->code, r->code_len, c->plan.function_name,
                                        r->timeout_s, opts->cancel_fd, NULL, &c->prog, err) < 0)
        return -1;
    c->launch.stream = opts->output != NULL;
    return fb_launch_prepare(r, &c->plan, &c->prog, &c->launch, err);
}

/* s pointed at this run's directory instead of /.fnbox/ (s itself when it does not name it). */
static const char *relocate(call_state *c, const char *s, fb_error *err)
{
    if (!strstr(s, ONE_SHOT_DIR))
        return s;
    char to[80];
    snprintf(to, sizeof to, "%s/", c->dir);
    char *moved = c->nowned < MAX_OWNED ? fb_session_replace_all(s, ONE_SHOT_DIR, to) : NULL;
    if (!moved) {
        fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "placing the harness");
        return NULL;
    }
    c->owned[c->nowned++] = moved;
    return moved;
}

/* Writes the driver's files (harness, program, runtime pieces) into the run's directory and points the
 * arguments and the driver's environment there. */
static int place(fnbox_session *s, call_state *c, fb_error *err)
{
    fb_lang_exec *x = &c->launch.exec;
    fb_session_run_dir(s, c->dir, sizeof c->dir);
    for (size_t i = 0; i < x->nfiles; i++) {
        const char *path = relocate(c, x->files[i].path, err);
        if (!path || fb_inroot_write_mode(&s->root, path, x->files[i].data, x->files[i].len,
                                          x->files[i].executable ? 0555 : 0444, err) < 0)
            return fb_wrap_error(err, "placing the harness in the session");
    }
    for (size_t i = 0; x->argv[i]; i++)
        if (!(x->argv[i] = relocate(c, x->argv[i], err)))
            return -1;
    for (size_t i = 0; x->env[i]; i++)
        if (!(x->env[i] = relocate(c, x->env[i], err)))
            return -1;
    /* The session's environment (base, permissions.env, the proxy's), then the driver's. */
    const char *const *layers[] = {s->env, x->env};
    return fb_launch_env_build(layers, 2, c->envp, SESSION_ENV_CAP, err);
}

static int run(fnbox_session *s, call_state *c, const fnbox_call_options *opts, fb_error *err)
{
    fb_sandbox_program p = {
        .exec_path = c->launch.exec.argv[0],
        .argv = (char *const *)c->launch.exec.argv,
        .envp = (char *const *)c->envp,
        .input_iov = c->launch.input.iov,
        .input_iovcnt = c->launch.input.n,
        .input_len = c->launch.input.len,
        .input_on_fd4 = true,
        .timeout_s = c->req.timeout_s,
        .result_bytes = (size_t)c->req.limits.result_bytes,
    };
    return fb_session_run_program(s, &p, &c->req.limits, opts, &c->outcome, err);
}

static int judge(call_state *c, fb_error *err)
{
    fb_result_limits rlim = fb_result_limits_of(c->req.timeout_s, &c->req.limits);
    return fb_result_from_outcome(&c->res, &c->outcome, &rlim, err);
}

static int call_in(fnbox_session *s, const char *request, size_t len, const fnbox_call_options *opts, double t0,
                   char **result, size_t *result_len)
{
    call_state c = {0};
    fb_error err = {0};
    int code;
    if (fb_request_parse(request, len, &c.req, &err) < 0 || plan(&c, s->opt.environment, opts, &err) < 0 || place(s, &c, &err) < 0) {
        code = fb_result_fail(&err, fb_result_code_of(&err), fb_session_clock_ms(CLOCK_MONOTONIC) - t0,
                              c.plan.signature_source, result, result_len);
    } else if (run(s, &c, opts, &err) < 0 || judge(&c, &err) < 0) {
        code = fb_result_fail(&err, FNBOX_SANDBOX_FAILED, fb_session_clock_ms(CLOCK_MONOTONIC) - t0,
                              c.plan.signature_source, result, result_len);
    } else {
        fb_result_set_meta(&c.res, fb_session_clock_ms(CLOCK_MONOTONIC) - t0, c.plan.signature_source);
        if (c.req.lang->compiler)
            fb_result_set_compile(&c.res, c.prog.cache);
        *result = fb_result_render_final(&c.res, result_len);
        code = *result ? FNBOX_OK : FNBOX_NO_RESULT;
    }
    fb_session_remove_dir(s, c.dir);
    call_state_free(&c);
    return code;
}

FNBOX_API int fnbox_session_call(fnbox_session *s, const char *request, size_t request_len,
                                 const fnbox_call_options *options, char **result, size_t *result_len)
{
    return fb_session_api(s, call_in, request, request_len, options, result, result_len);
}
