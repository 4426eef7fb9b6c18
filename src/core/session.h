/* What the session's files share (core/session.c: its life and files; core/session_exec.c: commands). The
 * public API is fnbox.h's. */
#ifndef FB_CORE_SESSION_H
#define FB_CORE_SESSION_H
#include <pthread.h>
#include <stdbool.h>
#include <time.h>

#include "core/launch.h"
#include "fnbox.h"
#include "fs/inroot.h"
#include "fs/workspace.h"
#include "net/policy.h"
#include "net/proxy.h"
#include "core/dependencies.h"
#include "request/limits.h"
#include "request/session.h"
#include "sandbox/sandbox.h"

#define SESSION_ENV_CAP (FB_LAUNCH_MAX_ENV)

struct fnbox_session {
    fb_session_options opt;
    fb_sandbox_spec spec;
    fb_env_launch envl;               /* the session's environment: system tree, layers, variables */
    fb_deps_layers deps;              /* its `dependencies`' layers (in envl) */
    fb_sandbox *sb;
    fb_net_policy *netpol;
    fb_proxy_call net;
    const char *env[SESSION_ENV_CAP]; /* base + permissions.env + the proxy's, NULL-terminated */
    fb_inroot root;
    fb_workspace ws;                  /* the files stage: the options' files, the mounts' servers (fs/workspace) */
    pthread_mutex_t sync_mu;          /* one sync at a time */
    pthread_mutex_t mu;
    pthread_cond_t idle;              /* signalled when busy drops */
    unsigned busy;                    /* API calls in progress */
    unsigned running;                 /* commands in progress */
    unsigned long seq;                /* numbers each run's code directory */
    bool closing;
    bool dead;                        /* its sandbox died by itself (fb_session_is_dead): why in dead_reason */
    char dead_reason[96];
    double created_ms, last_used_ms;  /* CLOCK_REALTIME, for info */
    double created_mono, last_used_mono;
    struct fb_kernel *kernels[FB_KERNEL_MAX_LANGS]; /* session_kernel.c: one per language, made on first use */
};

/* Whether the session's sandbox has died by itself (noted once, checked now; never once it is closing:
 * a shutdown's kill is not a death); reason (cap bytes, when not NULL) gets why. */
bool fb_session_is_dead(fnbox_session *s, char *reason, size_t cap);
/* The FNBOX_ code of an error a session call ends with. */
int fb_session_code_of(const fb_error *err);
/* A run the sandbox's death ended (or that ended as it died) is not the run's own outcome: when s is dead,
 * *result is replaced by the SessionDead error and FNBOX_SESSION_DEAD returned; otherwise code. */
int fb_session_dead_result(fnbox_session *s, int code, double duration_ms, char **result, size_t *result_len);
/* A call into the session begins (NotFound once it is closing, SessionDead once it died) / ends (it counts
 * as use). */
int fb_session_enter(fnbox_session *s, fb_error *err);
void fb_session_leave(fnbox_session *s);
/* Renders err as {"error": {type, message}} into *error (when error is not NULL); returns its FNBOX_ code. */
int fb_session_fail(const fb_error *err, char **error, size_t *error_len);
double fb_session_clock_ms(clockid_t c);
/* session_exec.c: what commands and function calls share. A run inside the API's enter/leave, its start
 * time t0 (ms, monotonic) given. */
typedef int (*fb_session_fn)(fnbox_session *s, const char *request, size_t len, const fnbox_call_options *opts,
                             double t0, char **result, size_t *result_len);
int fb_session_api(fnbox_session *s, fb_session_fn fn, const char *request, size_t len,
                   const fnbox_call_options *options, char **result, size_t *result_len);
/* Runs p in the session's sandbox: output caps from lim (told to opts->output as it arrives), opts'
 * cancel fd, counted as running; killed by the session's shutdown, it was cancelled. */
int fb_session_run_program(fnbox_session *s, fb_sandbox_program *p, const fb_call_limits *lim,
                           const fnbox_call_options *opts, fb_sandbox_outcome *out, fb_error *err);
/* What a run that brings files shares. A fresh directory for this run's files in the
 * session's /tmp ("/tmp/.fnbox-run/<n>"), and its removal (best effort: what ran may have changed it; four
 * levels down at most). */
void fb_session_run_dir(fnbox_session *s, char *dir, size_t cap);
void fb_session_remove_dir(fnbox_session *s, const char *dir);
/* session_mounted.c: a file operation on a path under a mount (path absolute, normalized), run as a program
 * in the sandbox because only the sandbox can reach a mount's view. Errors as fs/inroot's. */
typedef enum { FB_MOUNTED_READ, FB_MOUNTED_WRITE, FB_MOUNTED_REMOVE, FB_MOUNTED_LIST } fb_mounted_op;
typedef struct fb_session_mounted_out {
    char *data;                   /* READ: the bytes (NULL when empty), the caller's to free */
    size_t len;
    fb_inroot_entry *entries;     /* LIST: sorted by name (fb_inroot_entries_free) */
    size_t nentries;
} fb_session_mounted_out;
int fb_session_mounted(fnbox_session *s, fb_mounted_op op, const char *path, const void *data, size_t len,
                       fb_session_mounted_out *out, fb_error *err);
/* session_kernel.c: kills every kernel, waits for their supervisors, frees them; before the sandbox goes. */
typedef struct fb_kernel fb_kernel;
void fb_session_kernels_free(fnbox_session *s);
/* s with every `from` replaced by `to` (allocated), or NULL when it has none (or out of memory). */
char *fb_session_replace_all(const char *s, const char *from, const char *to);

#endif
