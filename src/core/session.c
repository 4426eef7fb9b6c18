/* Sessions (fnbox.h): one long-lived sandbox (sandbox/sandbox.h's create / exec / destroy) that commands,
 * code and file operations share. The stages of a command are an execute request's (core/execute.c):
 *   request    request/command  decode + validate into fb_command (files, limits, permissions refused:
 *                               they are the session's, request/session.c)
 *   program    core/command     what runs; the code's file is written into the session (its /tmp)
 *   run        sandbox/exec     in the session's sandbox, its own PID namespace, output streamed
 *   result     core/result      judged by the exit status
 * File operations go through fs/inroot: resolved inside the session's root, as the sandbox's user. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/call_files.h"
#include "core/command.h"
#include "core/launch.h"
#include "core/result.h"
#include "core/session.h"
#include "request/limits.h"
#include "util/json.h"

double fb_session_clock_ms(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---- errors as JSON ---- */

int fb_session_code_of(const fb_error *err)
{
    switch (err->kind) {
    case FB_ERR_SESSION_DEAD:
        return FNBOX_SESSION_DEAD;
    case FB_ERR_INVALID_REQUEST:
    case FB_ERR_FILE_SIZE_LIMIT:
        return FNBOX_INVALID_REQUEST;
    case FB_ERR_NOT_FOUND:
        return FNBOX_NOT_FOUND;
    case FB_ERR_PERMISSION_DENIED:
        return FNBOX_DENIED;
    case FB_ERR_OUT_OF_MEMORY:
        return FNBOX_NO_RESULT;
    default:
        return FNBOX_SANDBOX_FAILED;
    }
}

/* Renders err as {"error": {type, message}} into *error (when asked for) and returns its code. */
int fb_session_fail(const fb_error *err, char **error, size_t *error_len)
{
    int code = fb_session_code_of(err);
    if (!error)
        return code;
    json_t *doc = json_pack("{s:{s:s, s:s}}", "error", "type", fb_error_type(err), "message", err->message);
    *error = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
    json_decref(doc);
    if (*error && error_len)
        *error_len = strlen(*error);
    return *error ? code : FNBOX_NO_RESULT;
}

static void clear_out(char **p, size_t *len)
{
    if (p)
        *p = NULL;
    if (len)
        *len = 0;
}

/* ---- the session's life ---- */

/* Why init ended, as the session's info and errors say it. */
static void describe_end(const fb_sandbox_end *end, char *out, size_t cap)
{
    if (end->memory_limit)
        snprintf(out, cap, "memory limit");
    else if (end->term_signal)
        snprintf(out, cap, "killed by signal %d", end->term_signal);
    else
        snprintf(out, cap, "exited with code %d", end->exit_code);
}

bool fb_session_is_dead(fnbox_session *s, char *reason, size_t cap)
{
    pthread_mutex_lock(&s->mu);
    fb_sandbox_end end;
    if (!s->dead && !s->closing && s->sb && fb_sandbox_ended(s->sb, &end)) {
        s->dead = true;
        describe_end(&end, s->dead_reason, sizeof s->dead_reason);
    }
    bool dead = s->dead;
    if (dead && reason && cap)
        snprintf(reason, cap, "%s", s->dead_reason);
    pthread_mutex_unlock(&s->mu);
    return dead;
}

static int dead_error(const char *reason, fb_error *err)
{
    return fb_set_error(err, FB_ERR_SESSION_DEAD, 0,
                        "session: its sandbox died (%s): its processes, kernels and files are gone; open a new "
                        "session", reason);
}

int fb_session_dead_result(fnbox_session *s, int code, double duration_ms, char **result, size_t *result_len)
{
    char reason[96];
    if (!fb_session_is_dead(s, reason, sizeof reason))
        return code;
    fb_error err = {0};
    dead_error(reason, &err);
    free(*result);
    *result = NULL;
    return fb_result_fail(&err, FNBOX_SESSION_DEAD, duration_ms, NULL, result, result_len);
}

/* A call into the session begins: refused once it is closing, or dead. */
int fb_session_enter(fnbox_session *s, fb_error *err)
{
    char reason[96];
    if (fb_session_is_dead(s, reason, sizeof reason))
        return dead_error(reason, err);
    pthread_mutex_lock(&s->mu);
    bool closing = s->closing;
    if (!closing)
        s->busy++;
    pthread_mutex_unlock(&s->mu);
    return closing ? fb_set_error(err, FB_ERR_NOT_FOUND, 0, "session: it is closed") : 0;
}

void fb_session_leave(fnbox_session *s)
{
    pthread_mutex_lock(&s->mu);
    s->busy--;
    s->last_used_ms = fb_session_clock_ms(CLOCK_REALTIME);
    s->last_used_mono = fb_session_clock_ms(CLOCK_MONOTONIC);
    pthread_cond_broadcast(&s->idle);
    pthread_mutex_unlock(&s->mu);
}

/* The environment every command starts from: fnbox's base, the session's permissions.env, and the
 * proxy's variables when the network allows anything. */
static int build_env(fnbox_session *s, bool network, fb_error *err)
{
    const char *const *layers[] = {fb_launch_base_env, s->envl.vars, s->opt.permissions.env,
                                   network ? fb_proxy_env : NULL};
    return fb_launch_env_build(layers, network ? 4 : 3, s->env, SESSION_ENV_CAP, err);
}

static int configure(fnbox_session *s, fb_error *err)
{
    const fb_permissions *p = &s->opt.permissions;
    if (fb_net_policy_from_patterns(p->network_all, p->network_allow, p->nnetwork, "permissions.network", &s->netpol,
                                    err) < 0)
        return -1;
    bool network = fb_net_policy_allows_any(s->netpol);
    s->net.policy = s->netpol;
    fb_env_launch_init(&s->envl, s->opt.environment);
    if (fb_deps_prepare(&s->opt.dependencies, s->opt.environment, -1, &s->deps, err) < 0 ||
        fb_deps_place(&s->deps, &s->envl, err) < 0)
        return -1;
    if (build_env(s, network, err) < 0)
        return -1;
    s->spec = (fb_sandbox_spec){
        .workdir = s->opt.workdir,
        .cancel_fd = -1,
        .exec_allow = p->exec_allow,
        .exec_any = p->exec_any,
        .proxy_listen = network,
        .on_proxy = fb_proxy_on_listen,
        .proxy_ctx = &s->net,
        /* a streamed command's preloads (fb_command_stream_env): commands stream one by one */
        .files = fb_command_stream_files,
        .nfiles = FB_COMMAND_STREAM_FILES,
    };
    fb_launch_limits_of(FB_MAX_TIMEOUT_S, &s->opt.limits, &s->spec.limits);
    fb_env_launch_apply(&s->envl, &s->spec);
    return 0;
}

/* The files stage as a call's (core/call_files): the options' files under a mount placed in its view (what
 * the host had: not a change), the mounts' servers started with the sandbox. */
static int prepare_files(fnbox_session *s, fb_error *err)
{
    fb_reporting rep = {.include_denied = true};
    if (fb_files_prepare(&s->ws, s->opt.workdir, s->opt.mount, &rep, false, &s->opt.files,
                         !(s->opt.environment && s->opt.environment->root), &s->spec.limits, err) < 0)
        return -1;
    s->spec.fuse_paths = s->ws.mount_paths;
    s->spec.nfuse = s->ws.nmounts;
    s->spec.on_fuse = fb_workspace_serve_mount;
    s->spec.fuse_ctx = &s->ws;
    return 0;
}

/* The other files, written as if the session's user wrote them. */
static int write_files(fnbox_session *s, fb_error *err)
{
    for (size_t i = 0; i < s->ws.nstaged; i++) {
        const fb_ws_file *f = &s->ws.staged[i];
        if (fb_inroot_write(&s->root, f->path, f->data, f->len, err) < 0)
            return fb_wrap_error(err, "files.%s", f->name);
    }
    return 0;
}

static void session_free(fnbox_session *s)
{
    fb_session_kernels_free(s); /* their supervisors run fb_sandbox_exec on s->sb */
    fb_sandbox_destroy(s->sb); /* its FUSE connections end with it: the mounts' servers return */
    fb_workspace_free(&s->ws);
    fb_proxy_free(s->net.proxy);
    fb_net_policy_free(s->netpol);
    fb_session_options_free(&s->opt);
    fb_deps_layers_free(&s->deps);
    pthread_mutex_destroy(&s->mu);
    pthread_mutex_destroy(&s->sync_mu);
    pthread_cond_destroy(&s->idle);
    free(s);
}

FNBOX_API int fnbox_session_open(const char *options, size_t len, fnbox_session **session, char **error,
                                 size_t *error_len)
{
    fb_error err = {0};
    *session = NULL;
    clear_out(error, error_len);
    fnbox_session *s = calloc(1, sizeof *s);
    if (!s) {
        fb_set_error(&err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "session");
        return fb_session_fail(&err, error, error_len);
    }
    pthread_mutex_init(&s->mu, NULL);
    pthread_mutex_init(&s->sync_mu, NULL);
    pthread_cond_init(&s->idle, NULL);
    s->created_ms = s->last_used_ms = fb_session_clock_ms(CLOCK_REALTIME);
    s->created_mono = s->last_used_mono = fb_session_clock_ms(CLOCK_MONOTONIC);
    if (fb_session_options_parse(options, len, &s->opt, &err) < 0 || configure(s, &err) < 0 ||
        prepare_files(s, &err) < 0 || fb_sandbox_create(&s->spec, &s->sb, &err) < 0) {
        session_free(s);
        return fb_session_fail(&err, error, error_len);
    }
    fb_sandbox_user user;
    s->root = (fb_inroot){.root_fd = fb_sandbox_root(s->sb, &user)};
    s->root.uid = user.uid;
    s->root.gid = user.gid;
    s->root.switch_creds = user.privileged;
    if (write_files(s, &err) < 0) {
        session_free(s);
        return fb_session_fail(&err, error, error_len);
    }
    *session = s;
    return FNBOX_OK;
}

FNBOX_API void fnbox_session_shutdown(fnbox_session *s)
{
    pthread_mutex_lock(&s->mu);
    s->closing = true;
    pthread_mutex_unlock(&s->mu);
    fb_sandbox_kill(s->sb); /* running commands end now; their calls return */
}

FNBOX_API void fnbox_session_close(fnbox_session *s)
{
    if (!s)
        return;
    fnbox_session_shutdown(s);
    pthread_mutex_lock(&s->mu);
    while (s->busy > 0)
        pthread_cond_wait(&s->idle, &s->mu);
    pthread_mutex_unlock(&s->mu);
    session_free(s);
}

FNBOX_API int fnbox_session_dead(fnbox_session *s, char *reason, size_t cap)
{
    return fb_session_is_dead(s, reason, cap) ? 1 : 0;
}

FNBOX_API int fnbox_session_watch_fd(fnbox_session *s)
{
    return fb_sandbox_pidfd(s->sb);
}

FNBOX_API int fnbox_session_expired(fnbox_session *s)
{
    double now = fb_session_clock_ms(CLOCK_MONOTONIC);
    pthread_mutex_lock(&s->mu);
    bool idle_over = s->busy == 0 && now - s->last_used_mono >= s->opt.idle_timeout_s * 1e3;
    bool life_over = now - s->created_mono >= s->opt.max_lifetime_s * 1e3;
    pthread_mutex_unlock(&s->mu);
    return idle_over || life_over;
}

static json_t *iso_time(double epoch_ms)
{
    time_t secs = (time_t)(epoch_ms / 1e3);
    struct tm tm;
    gmtime_r(&secs, &tm);
    char text[40];
    size_t n = strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(text + n, sizeof text - n, ".%03dZ", (int)((long long)epoch_ms % 1000));
    return json_string(text);
}

FNBOX_API int fnbox_session_info(fnbox_session *s, char **json, size_t *json_len)
{
    clear_out(json, json_len);
    pthread_mutex_lock(&s->mu);
    double created = s->created_ms, used = s->last_used_ms;
    unsigned running = s->running;
    pthread_mutex_unlock(&s->mu);
    char reason[96];
    bool dead = fb_session_is_dead(s, reason, sizeof reason);
    double expires = created + s->opt.max_lifetime_s * 1e3;
    if (used + s->opt.idle_timeout_s * 1e3 < expires)
        expires = used + s->opt.idle_timeout_s * 1e3;
    json_t *doc = json_pack("{s:o, s:o, s:o, s:I, s:f, s:f, s:s}", "createdAt", iso_time(created), "lastUsedAt",
                            iso_time(used), "expiresAt", iso_time(expires), "running", (json_int_t)running,
                            "idleTimeout", s->opt.idle_timeout_s, "maxLifetime", s->opt.max_lifetime_s, "workdir",
                            s->opt.workdir);
    if (doc && (json_object_set_new(doc, "state", json_string(dead ? "dead" : "running")) < 0 ||
                (dead && json_object_set_new(doc, "reason", json_string(reason)) < 0))) {
        json_decref(doc);
        doc = NULL;
    }
    return fb_json_dump_out(doc, json, json_len);
}

/* ---- files ---- */

typedef enum { F_READ, F_WRITE, F_REMOVE, F_LIST } file_op;

static int list_json(fb_inroot_entry *e, size_t n, char **json, size_t *json_len, fb_error *err)
{
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < n; i++) {
        json_t *item = json_pack("{s:s, s:b, s:I}", "name", e[i].name, "isDir", e[i].is_dir, "size",
                                 (json_int_t)e[i].size);
        if (!item || json_array_append_new(arr, item) < 0) {
            json_decref(arr);
            arr = NULL;
        }
    }
    if (fb_json_dump_out(arr, json, json_len) < 0)
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "listing");
    return 0;
}

typedef struct file_args {
    file_op op;
    const void *data;
    size_t len;
    char **out;
    size_t *out_len;
} file_args;

/* A path under a mount goes to the sandbox (session_mounted.c); the rest is resolved in its root here. */
static int mounted_file(fnbox_session *s, const char *abs, const file_args *a, size_t *out_len, fb_error *err)
{
    static const fb_mounted_op ops[] = {[F_READ] = FB_MOUNTED_READ, [F_WRITE] = FB_MOUNTED_WRITE,
                                        [F_REMOVE] = FB_MOUNTED_REMOVE, [F_LIST] = FB_MOUNTED_LIST};
    const char *rel;
    const fb_mount_dir *m = fb_mount_find(s->opt.mount, abs, &rel);
    if (a->op == F_REMOVE && !*rel)
        return fb_set_error(err, FB_ERR_INVALID_REQUEST, EBUSY, "path: '%s' is the mount %s's root: not removed", abs,
                            m->virtual_path);
    fb_session_mounted_out o = {0};
    if (fb_session_mounted(s, ops[a->op], abs, a->data, a->len, &o, err) < 0)
        return -1;
    int rc = 0;
    if (a->op == F_READ) {
        *a->out = o.data ? o.data : strdup("");
        *out_len = o.data ? o.len : 0;
        if (!*a->out)
            rc = fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "reading");
    } else if (a->op == F_LIST) {
        rc = list_json(o.entries, o.nentries, a->out, out_len, err);
    }
    fb_inroot_entries_free(o.entries, o.nentries);
    return rc;
}

static int in_root_file(fnbox_session *s, const char *abs, const file_args *a, size_t *out_len, fb_error *err)
{
    int rc = -1;
    if (a->op == F_READ) {
        fb_buf buf;
        fb_buf_init(&buf, FB_SESSION_MAX_READ_BYTES);
        rc = fb_inroot_read(&s->root, abs, FB_SESSION_MAX_READ_BYTES, &buf, err);
        if (rc == 0 && !buf.data && fb_buf_append(&buf, "", 0) < 0) /* an empty file: still a string */
            rc = fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "reading");
        if (rc == 0)
            *a->out = fb_buf_steal(&buf, out_len);
        fb_buf_free(&buf);
    } else if (a->op == F_WRITE) {
        rc = fb_inroot_write(&s->root, abs, a->data, a->len, err);
    } else if (a->op == F_REMOVE) {
        rc = fb_inroot_remove(&s->root, abs, err);
    } else if (a->out) {
        fb_inroot_entry *e = NULL;
        size_t n = 0;
        rc = fb_inroot_list(&s->root, abs, FB_SESSION_MAX_LIST_ENTRIES, &e, &n, err);
        if (rc == 0)
            rc = list_json(e, n, a->out, out_len, err);
        fb_inroot_entries_free(e, n);
    }
    return rc;
}

static int do_file(fnbox_session *s, const char *path, size_t path_len, const file_args *a, fb_error *err)
{
    char *abs = NULL;
    const char *rel;
    size_t ignored_len = 0, *out_len = a->out_len ? a->out_len : &ignored_len;
    if ((a->op == F_READ || a->op == F_LIST) && !a->out)
        return fb_set_error(err, FB_ERR_INVALID_REQUEST, EINVAL, "%s: NULL where the answer goes",
                            a->op == F_READ ? "data" : "json");
    if (fb_inroot_normalize(s->opt.workdir, path ? path : "", path ? path_len : 0, "path", &abs, err) < 0)
        return -1;
    int rc;
    if (a->op == F_REMOVE && strcmp(abs, s->opt.workdir) == 0)
        rc = fb_set_error(err, FB_ERR_INVALID_REQUEST, EBUSY, "path: '%s' is the session's workdir: not removed", abs);
    else if (s->opt.mount && fb_mount_find(s->opt.mount, abs, &rel))
        rc = mounted_file(s, abs, a, out_len, err);
    else
        rc = in_root_file(s, abs, a, out_len, err);
    free(abs);
    return rc;
}

static int file_call(fnbox_session *s, const char *path, size_t path_len, const file_args *a, char **error,
                     size_t *error_len)
{
    fb_error err = {0};
    clear_out(error, error_len);
    if (fb_session_enter(s, &err) < 0)
        return fb_session_fail(&err, error, error_len);
    int rc = do_file(s, path, path_len, a, &err);
    fb_session_leave(s);
    return rc < 0 ? fb_session_fail(&err, error, error_len) : FNBOX_OK;
}

FNBOX_API int fnbox_session_read(fnbox_session *s, const char *path, size_t path_len, char **data,
                                 size_t *data_len, char **error, size_t *error_len)
{
    clear_out(data, data_len);
    file_args a = {.op = F_READ, .out = data, .out_len = data_len};
    return file_call(s, path, path_len, &a, error, error_len);
}

FNBOX_API int fnbox_session_write(fnbox_session *s, const char *path, size_t path_len, const void *data,
                                  size_t len, char **error, size_t *error_len)
{
    file_args a = {.op = F_WRITE, .data = data ? data : "", .len = data ? len : 0};
    return file_call(s, path, path_len, &a, error, error_len);
}

FNBOX_API int fnbox_session_remove(fnbox_session *s, const char *path, size_t path_len, char **error,
                                   size_t *error_len)
{
    file_args a = {.op = F_REMOVE};
    return file_call(s, path, path_len, &a, error, error_len);
}

FNBOX_API int fnbox_session_list(fnbox_session *s, const char *path, size_t path_len, char **json,
                                 size_t *json_len, char **error, size_t *error_len)
{
    clear_out(json, json_len);
    file_args a = {.op = F_LIST, .out = json, .out_len = json_len};
    return file_call(s, path, path_len, &a, error, error_len);
}
