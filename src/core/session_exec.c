/* fnbox_session_exec: one command or program's code in a session's sandbox (core/session.c has the
 * stages). A one-shot execute places the code read-only under /.fnbox before the sandbox starts; a session's
 * sandbox is already running, so the code is written into its /tmp (a directory per run, removed after it)
 * and the program's arguments point there instead. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/command.h"
#include "core/host.h"
#include "core/output.h"
#include "core/result.h"
#include "core/session.h"
#include "request/limits.h"
#include "util/json.h"

#define CODE_DIR "/tmp/.fnbox-run"              /* <CODE_DIR>/<n>/main.<ext> (and a compiled prog) */
#define ONE_SHOT_CODE_PREFIX "/.fnbox/main"     /* where core/command.c places the code */
#define ONE_SHOT_PROGRAM "/tmp/.fnbox_main"     /* where its compile step puts the program */

/* The fields an execute request has that a session owns. */
static const char *const k_session_owned[] = {"files", "mount", "limits", "permissions", "environment",
                                              "dependencies"};

typedef struct exec_state {
    fb_command cmd;
    fb_command_program prog;
    char *cwd;                    /* absolute, normalised against the session's workdir; NULL: the workdir */
    char dir[64];                 /* this run's code directory, "" when there is no code */
    char *argv_owned[8];          /* relocated arguments */
    const char *envp[SESSION_ENV_CAP];
    fb_sandbox_outcome outcome;
    fb_result res;
} exec_state;

static void exec_state_free(exec_state *e)
{
    fb_result_free(&e->res);
    fb_sandbox_outcome_free(&e->outcome);
    for (size_t i = 0; i < sizeof e->argv_owned / sizeof *e->argv_owned; i++)
        free(e->argv_owned[i]);
    free(e->cwd);
    fb_command_program_free(&e->prog);
    fb_command_free(&e->cmd);
}

static int refuse_owned(json_t *obj, fb_error *err)
{
    if (json_object_get(obj, "main")) /* it names one of a one-shot run's files, which a session has not */
        return fb_set_error(err, FB_ERR_INVALID_REQUEST, 0,
                            "main: a one-shot execute's; in a session, run the file with a command "
                            "(python3 app.py) or send its code");
    for (size_t i = 0; i < sizeof k_session_owned / sizeof *k_session_owned; i++)
        if (json_object_get(obj, k_session_owned[i]))
            return fb_set_error(err, FB_ERR_INVALID_REQUEST, 0,
                                "%s: a session's own (set when it is opened), not a command's", k_session_owned[i]);
    return 0;
}

/* Decodes the request; cwd is resolved against the session's workdir and made there when missing (as
 * `fnbox exec` makes it), as the sandbox user: never on a read-only system path. */
static int decode(fnbox_session *s, const char *request, size_t len, exec_state *e, fb_error *err)
{
    if (len > FB_MAX_REQUEST_BYTES)
        return fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, "request: %zu bytes is more than the maximum of %llu", len,
                            (unsigned long long)FB_MAX_REQUEST_BYTES);
    json_error_t jerr;
    json_t *root = fb_json_loadb(request, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &jerr);
    if (!root)
        return fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, "request: malformed JSON at line %d, column %d: %s",
                            jerr.line, jerr.column, jerr.text);
    if (refuse_owned(root, err) < 0 || fb_command_decode(root, NULL, &e->cmd, err) < 0) {
        json_decref(root);
        return -1;
    }
    e->cmd.root = root;
    e->cmd.environment = s->opt.environment; /* the session's sandbox's (a command's own is refused above):
                                                its interpreters are found there */
    json_t *cwd = json_object_get(root, "cwd");
    if (!json_is_string(cwd))
        return 0;
    if (fb_inroot_normalize(s->opt.workdir, json_string_value(cwd), json_string_length(cwd), "cwd", &e->cwd, err) < 0 ||
        fb_inroot_make_dir(&s->root, e->cwd, err) < 0) {
        err->kind = FB_ERR_INVALID_REQUEST; /* not a directory, or not the user's to make: the request's to fix */
        return fb_wrap_error(err, "cwd");
    }
    return 0;
}

/* s with every `from` replaced by `to` (allocated), or NULL when it has none. */
char *fb_session_replace_all(const char *s, const char *from, const char *to)
{
    size_t flen = strlen(from), tlen = strlen(to), n = 0;
    for (const char *p = s; (p = strstr(p, from)) != NULL; p += flen)
        n++;
    if (n == 0)
        return NULL;
    char *out = malloc(strlen(s) + n * (tlen > flen ? tlen - flen : 0) + 1);
    if (!out)
        return NULL;
    char *w = out;
    for (const char *p = s, *hit; *p;) {
        hit = strstr(p, from);
        size_t keep = hit ? (size_t)(hit - p) : strlen(p);
        memcpy(w, p, keep);
        w += keep;
        if (!hit)
            break;
        memcpy(w, to, tlen);
        w += tlen;
        p = hit + flen;
    }
    *w = '\0';
    return out;
}

/* Writes the code into this run's directory and points the arguments at it. */
static int place_code(fnbox_session *s, exec_state *e, fb_error *err)
{
    fb_session_run_dir(s, e->dir, sizeof e->dir);
    char prefix[96], program[96], path[160];
    snprintf(prefix, sizeof prefix, "%s/main", e->dir);
    snprintf(program, sizeof program, "%s/prog", e->dir);
    const char *ext = strrchr(e->prog.file.path, '.');
    snprintf(path, sizeof path, "%s%s", prefix, ext ? ext : "");
    if (fb_inroot_write(&s->root, path, e->prog.file.data, e->prog.file.len, err) < 0)
        return fb_wrap_error(err, "writing the code into the session");
    size_t owned = 0;
    for (size_t i = 0; e->prog.argv[i] && owned < sizeof e->argv_owned / sizeof *e->argv_owned; i++) {
        char *a = fb_session_replace_all(e->prog.argv[i], ONE_SHOT_CODE_PREFIX, prefix);
        char *b = fb_session_replace_all(a ? a : e->prog.argv[i], ONE_SHOT_PROGRAM, program);
        if (b) {
            free(a);
            a = b;
        }
        if (a) {
            e->argv_owned[owned++] = a;
            e->prog.argv[i] = a;
        }
    }
    return 0;
}

void fb_session_run_dir(fnbox_session *s, char *dir, size_t cap)
{
    pthread_mutex_lock(&s->mu);
    unsigned long n = ++s->seq;
    pthread_mutex_unlock(&s->mu);
    snprintf(dir, cap, CODE_DIR "/%lu", n);
}

/* Removes dir and what it holds, `depth` levels down at most. */
static void remove_tree(fnbox_session *s, const char *dir, int depth)
{
    fb_inroot_entry *ent = NULL;
    size_t n = 0;
    fb_error ignored = {0};
    if (depth > 0 && fb_inroot_list(&s->root, dir, 256, &ent, &n, &ignored) == 0)
        for (size_t i = 0; i < n; i++) {
            char path[512];
            snprintf(path, sizeof path, "%s/%s", dir, ent[i].name);
            if (ent[i].is_dir)
                remove_tree(s, path, depth - 1);
            else
                (void)fb_inroot_remove(&s->root, path, &ignored);
        }
    fb_inroot_entries_free(ent, n);
    (void)fb_inroot_remove(&s->root, dir, &ignored);
}

void fb_session_remove_dir(fnbox_session *s, const char *dir)
{
    if (dir[0])
        remove_tree(s, dir, 4);
}

/* The session's environment, then the command's env. */
static int build_env(fnbox_session *s, exec_state *e, fb_error *err)
{
    const char *const *layers[] = {s->env, e->cmd.env};
    return fb_launch_env_build(layers, 2, e->envp, SESSION_ENV_CAP, err);
}

/* A streamed command: the program's own runtime writes as it goes (fb_command_stream_env). */
static int stream_env(exec_state *e, const fnbox_call_options *opts, fb_error *err)
{
    return opts->output ? fb_command_stream_env(e->envp, SESSION_ENV_CAP, err) : 0;
}

static void count_running(fnbox_session *s, int delta)
{
    pthread_mutex_lock(&s->mu);
    s->running = (unsigned)((int)s->running + delta);
    pthread_mutex_unlock(&s->mu);
}

int fb_session_run_program(fnbox_session *s, fb_sandbox_program *p, const fb_call_limits *lim,
                           const fnbox_call_options *opts, fb_sandbox_outcome *out, fb_error *err)
{
    fb_output output;
    p->output_bytes = (size_t)(lim->stdout_bytes > lim->stderr_bytes ? lim->stdout_bytes : lim->stderr_bytes);
    p->cancel_fd = opts->cancel_fd;
    if (opts->output) {
        fb_output_init(&output, opts->output, opts->output_ctx, lim->stdout_bytes, lim->stderr_bytes);
        p->on_output = fb_output_chunk;
        p->output_ctx = &output;
    }
    count_running(s, 1);
    fb_sandbox_peak window;
    fb_sandbox_peak_begin(s->sb, &window);
    int rc = fb_sandbox_exec(s->sb, p, out, err);
    /* The session's cgroup at its highest while this ran (its other programs and files included): the
     * program's own maxrss misses its tmpfs pages, and counts the copy of fnbox it was forked from */
    uint64_t peak = fb_sandbox_peak_end(s->sb, &window);
    if (peak > out->peak_memory_bytes)
        out->peak_memory_bytes = peak;
    count_running(s, -1);
    /* Killed because the session was shut down under it (DELETE, the reaper, the server stopping): the
     * program was cancelled ("terminated"), it did not crash. */
    pthread_mutex_lock(&s->mu);
    bool closing = s->closing;
    pthread_mutex_unlock(&s->mu);
    if (rc == 0 && closing && out->term_signal == SIGKILL && !out->exited && !out->timed_out)
        out->cancelled = true;
    if (opts->output)
        fb_output_finish(&output);
    return rc;
}

static int run(fnbox_session *s, exec_state *e, const fnbox_call_options *opts, fb_error *err)
{
    fb_sandbox_program p = {
        .exec_path = e->prog.exec_path,
        .argv = (char *const *)e->prog.argv,
        .envp = (char *const *)e->envp,
        .cwd = e->cwd,
        .input = e->cmd.stdin_data,
        .input_len = e->cmd.stdin_len,
        .timeout_s = e->cmd.timeout_s,
        .result_bytes = e->prog.compiled ? 1 << 20 : 0,
    };
    return fb_session_run_program(s, &p, &s->opt.limits, opts, &e->outcome, err);
}

static int judge(fnbox_session *s, exec_state *e, fb_error *err)
{
    fb_result_limits rlim = fb_result_limits_of(e->cmd.timeout_s, &s->opt.limits);
    rlim.what = e->cmd.command ? "command" : "code";
    if (e->prog.missing)
        return fb_command_missing_outcome(&e->prog, &e->outcome, err) < 0 ? -1
                                                                           : fb_result_from_program(&e->res, &e->outcome,
                                                                                                    &rlim, err);
    if (fb_result_from_program(&e->res, &e->outcome, &rlim, err) < 0)
        return -1;
    if (!e->prog.compiled)
        return 0;
    json_t *c = fb_command_compile_json(&e->outcome.result);
    if (!c || json_object_set_new(e->res.obj, "compile", c) < 0)
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "compile report");
    return 0;
}

static int exec_in(fnbox_session *s, const char *request, size_t len, const fnbox_call_options *opts, double t0,
                   char **result, size_t *result_len)
{
    exec_state e = {0};
    fb_error err = {0};
    int code;
    if (decode(s, request, len, &e, &err) < 0 || fb_command_prepare(&e.cmd, &e.prog, &err) < 0 ||
        build_env(s, &e, &err) < 0 || stream_env(&e, opts, &err) < 0 || (!e.prog.missing && e.prog.nfiles && place_code(s, &e, &err) < 0)) {
        code = fb_result_fail(&err, fb_result_code_of(&err), fb_session_clock_ms(CLOCK_MONOTONIC) - t0, NULL, result,
                              result_len);
    } else if ((!e.prog.missing && run(s, &e, opts, &err) < 0) || judge(s, &e, &err) < 0) {
        code = fb_result_fail(&err, FNBOX_SANDBOX_FAILED, fb_session_clock_ms(CLOCK_MONOTONIC) - t0, NULL, result,
                              result_len);
    } else {
        fb_result_set_meta(&e.res, fb_session_clock_ms(CLOCK_MONOTONIC) - t0, NULL);
        *result = fb_result_render(&e.res, result_len);
        code = *result ? FNBOX_OK : FNBOX_NO_RESULT;
    }
    fb_session_remove_dir(s, e.dir);
    exec_state_free(&e);
    return code;
}

int fb_session_api(fnbox_session *s, fb_session_fn fn, const char *request, size_t len,
                   const fnbox_call_options *options, char **result, size_t *result_len)
{
    double t0 = fb_session_clock_ms(CLOCK_MONOTONIC);
    fnbox_call_options opts = fb_host_options(options);
    fb_error err = {0};
    *result = NULL;
    if (fb_session_enter(s, &err) < 0)
        return fb_result_fail(&err, fb_session_code_of(&err), 0, NULL, result, result_len);
    int code = fn(s, request, len, &opts, t0, result, result_len);
    code = fb_session_dead_result(s, code, fb_session_clock_ms(CLOCK_MONOTONIC) - t0, result, result_len);
    fb_session_leave(s);
    return code;
}

FNBOX_API int fnbox_session_exec(fnbox_session *s, const char *request, size_t request_len,
                                 const fnbox_call_options *options, char **result, size_t *result_len)
{
    return fb_session_api(s, exec_in, request, request_len, options, result, result_len);
}
