/* fnbox_execute: one command or program's code run in a fresh sandbox, stage by stage like a call
 * (executor.c) but with no function, harness or plan:
 *   request    request/command  decode + validate into fb_command
 *   program    core/command     what runs: exec path, argv, environment, the code's file
 *   host       core/host        the caller's callbacks decide the requested env keys and commands
 *   network    net/policy       permissions.network as the proxy's policy
 *   workspace  fs/workspace     the request's files and mounts (core/call_files configures it)
 *   run        core/launch      the sandbox with the workspace, proxy and output attached; stdin is the input
 *   result     core/result      judged by the exit status; the workdir's and mounts' changes, synced as a
 *                               call's; the compile report */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/call_files.h"
#include "core/command.h"
#include "core/host.h"
#include "core/launch.h"
#include "core/output.h"
#include "lang/lang.h"
#include "core/result.h"
#include "core/result_files.h"
#include "fnbox.h"
#include "net/proxy.h"
#include "request/command.h"
#include "request/files.h"
#include "sandbox/sandbox.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The files a result reports: the workdir's with sizes, not contents (an execute request is a shell's
 * work: what it left in /tmp is scratch, the compiled program included), and the mounts' as a call reports
 * them, contents included, so that a manual sync can apply them later (fb_files_prepare's mount_content).
 * Rendered with contents on: only the mounts' changes have them. */
static const fb_reporting k_reporting = {.include_changes = true, .include_contents = false,
                                         .include_denied = true};
static const fb_reporting k_rendering = {.include_changes = true, .include_contents = true,
                                         .include_denied = true};

/* Everything one execution owns, released by run_free on every path. */
typedef struct run_state {
    fb_command cmd;
    fb_command_program prog;
    fb_ws_files files;
    fb_workspace ws;
    fb_net_policy *netpol;
    fb_proxy_call net;
    fb_output output;
    fb_sandbox_outcome outcome;
    fb_result res;
    fb_deps_layers deps;
} run_state;

static void run_free(run_state *s)
{
    fb_result_free(&s->res);
    fb_deps_layers_free(&s->deps);
    fb_proxy_free(s->net.proxy);
    fb_net_policy_free(s->netpol);
    fb_workspace_free(&s->ws);
    fb_request_files_free(&s->files);
    fb_sandbox_outcome_free(&s->outcome);
    fb_command_program_free(&s->prog);
    fb_command_free(&s->cmd);
}

/* The language cannot run here: nothing starts, the answer is a shell's for a missing command. */
static int missing_result(run_state *s, fb_error *err)
{
    fb_sandbox_outcome *o = &s->outcome;
    if (fb_command_missing_outcome(&s->prog, o, err) < 0)
        return -1;
    fb_result_limits lim = fb_result_limits_of(s->cmd.timeout_s, &s->cmd.limits);
    lim.what = s->cmd.command ? "command" : "code";
    if (fb_result_from_program(&s->res, o, &lim, err) < 0)
        return -1;
    json_t *files = json_pack("{s:[], s:[], s:[], s:[]}", "created", "modified", "deleted", "denied");
    if (!files || json_object_set_new(s->res.obj, "files", files) < 0)
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "result");
    return 0;
}

/* The environment's library caches (core/env_caches.h) go to a command (it may run anything) and to code of
 * a language whose libraries keep them; another language's code does without. They are the host's system
 * tree's: a named environment's root (another matplotlib, other fonts) does without them too. */
static bool wants_env_caches(const fb_command *c)
{
    const fb_lang_driver *lang = c->language ? fb_lang_lookup(c->language) : NULL;
    return (!lang || lang->env_caches) && !(c->environment && c->environment->root);
}

/* The host's say, the network policy and the files, before anything runs. */
static int prepare(run_state *s, const fnbox_call_options *opts, fb_sandbox_limits *lim, fb_error *err)
{
    const fb_command *c = &s->cmd;
    fb_launch_limits_of(c->timeout_s, &c->limits, lim);
    if (fb_host_ask(&c->permissions, opts, err) < 0 || fb_host_ask_env(c->env, c->nenv, "env", opts, err) < 0 ||
        fb_net_policy_from_patterns(c->permissions.network_all, c->permissions.network_allow,
                                    c->permissions.nnetwork, "permissions.network", &s->netpol, err) < 0 ||
        fb_request_files_decode(c->files, c->workdir, lim->workspace_bytes, &s->files, err) < 0 ||
        fb_files_prepare(&s->ws, c->workdir, c->mount, &k_reporting, true, &s->files, wants_env_caches(c), lim,
                         err) < 0)
        return -1;
    if (opts->fs) /* asked by the mount servers at each operation, and by sync for each change */
        fb_workspace_set_check(&s->ws, fb_host_fs_check, (void *)opts);
    fb_call_files_events(&s->ws, opts);
    s->net.policy = s->netpol;
    if (opts->network) {
        s->net.check = fb_host_network_check;
        s->net.check_ctx = (void *)opts;
    }
    return 0;
}

static int run_sandbox(run_state *s, const fnbox_call_options *opts, const fb_sandbox_limits *lim, fb_error *err)
{
    fb_sandbox_spec spec = {.workdir = s->cmd.workdir, .input = s->cmd.stdin_data, .input_len = s->cmd.stdin_len,
                            .cancel_fd = opts->cancel_fd, .limits = *lim};
    fb_command_program_spec(&s->prog, &spec);
    fb_launch_attach a = {.envp = s->prog.envp, .env_cap = s->prog.env_cap, .ws = &s->ws, .keep_scratch = true,
                          .net = &s->net, .environment = s->cmd.environment};
    if (opts->output) {
        fb_output_init(&s->output, opts->output, opts->output_ctx, s->cmd.limits.stdout_bytes,
                       s->cmd.limits.stderr_bytes);
        a.output = &s->output;
    }
    return fb_launch_attached(&spec, &a, &s->outcome, err);
}

static int add_compile(run_state *s, fb_error *err)
{
    json_t *c = fb_command_compile_json(&s->outcome.result);
    if (!c || json_object_set_new(s->res.obj, "compile", c) < 0)
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "compile report");
    return 0;
}

/* What the program left in the mounts and the workdir: the only scratch area reported
 * (fb_sandbox_scratch_areas lists it first, unless a mount covers it). */
static int collect(run_state *s, fb_error *err)
{
    const fb_sandbox_outcome *o = &s->outcome;
    size_t n = o->nscratch > 0 && strcmp(o->scratch_path[0], s->cmd.workdir) == 0 ? 1 : 0;
    return fb_workspace_collect(&s->ws, o->scratch_fd, o->scratch_path, n, err);
}

static int judge(run_state *s, fb_error *err)
{
    fb_result_limits rlim = fb_result_limits_of(s->cmd.timeout_s, &s->cmd.limits);
    rlim.what = s->cmd.command ? "command" : "code";
    if (fb_result_from_program(&s->res, &s->outcome, &rlim, err) < 0 || collect(s, err) < 0 ||
        fb_workspace_sync(&s->ws, fb_result_succeeded(&s->res), err) < 0 ||
        fb_result_add_files(&s->res, &s->ws, &k_rendering, err) < 0)
        return -1;
    if (s->prog.compiled && add_compile(s, err) < 0)
        return -1;
    return s->net.proxy ? fb_result_set_network(&s->res, s->net.proxy, err) : 0;
}

static int render(run_state *s, double t0, char **result, size_t *result_len)
{
    fb_result_set_meta(&s->res, now_ms() - t0, NULL);
    fb_result_set_dependencies(&s->res, fb_deps_meta(&s->deps));
    *result = fb_result_render(&s->res, result_len);
    return *result ? FNBOX_OK : FNBOX_NO_RESULT;
}

FNBOX_API int fnbox_execute(const char *request, size_t request_len, const fnbox_call_options *options,
                            char **result, size_t *result_len)
{
    double t0 = now_ms();
    fnbox_call_options opts = fb_host_options(options);
    fb_error err = {0};
    run_state s = {0};
    fb_sandbox_limits lim;
    int code;

    *result = NULL;
    /* Before the run, the error's family decides the code; from the run on, a failure is the sandbox's. */
    bool before_run = true;
    int rc = fb_command_parse(request, request_len, &s.cmd, &err);
    if (rc == 0)
        rc = fb_deps_prepare(&s.cmd.dependencies, s.cmd.environment, opts.cancel_fd, &s.deps, &err);
    s.prog.deps = &s.deps;
    if (rc == 0)
        rc = fb_command_prepare(&s.cmd, &s.prog, &err);
    if (rc == 0 && opts.output) /* streamed: the program's own runtime writes as it goes */
        rc = fb_command_stream(&s.prog, &err);
    if (rc == 0 && s.prog.missing) {
        before_run = false;
        rc = missing_result(&s, &err);
    } else if (rc == 0 && (rc = prepare(&s, &opts, &lim, &err)) == 0) {
        before_run = false;
        rc = run_sandbox(&s, &opts, &lim, &err) < 0 || judge(&s, &err) < 0 ? -1 : 0;
    }
    if (rc < 0)
        code = fb_result_fail(&err, before_run ? fb_result_code_of(&err) : FNBOX_SANDBOX_FAILED, now_ms() - t0, NULL,
                              result, result_len);
    else
        code = render(&s, t0, result, result_len);
    run_free(&s);
    return code;
}
