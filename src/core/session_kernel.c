/* Session kernels: a long-lived interpreter per session and language that keeps its state between executes
 * (docs/internals/kernels.md has the design). The kernel is a program of the session's sandbox, started by
 * fb_sandbox_exec on a thread of its own (its supervisor: the kernel's life, deadline, reaping) with our own
 * pipes as its fds 1-4 (fb_sandbox_program.own_io); an execute talks to it over those pipes:
 *   start      the kernel's files written into the session's /tmp, the supervisor thread started, its
 *              "ready" frame awaited (files removed then)
 *   request    one frame {"code"} on fd 4
 *   wait       its output read from fds 1/2 (capped, told to the output callback) until its result frame
 *              comes on fd 3; at the timeout or cancel SIGINT, after the grace period the kernel is killed
 *   result     the call harness's report judged by core/result as a call's, plus kernelRestarted */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/host.h"
#include "core/kernel_cpu.h"
#include "core/output.h"
#include "core/result.h"
#include "core/session.h"
#include "lang/lang.h"
#include "request/kernel.h"
#include "request/limits.h"
#include "util/fd.h"
#include "util/json.h"

#define FRAME_HEADER_MAX 24 /* "<decimal length>\n" */
#define READY_FRAME "{\"ready\":true}\n"

struct fb_kernel {
    const fb_lang_driver *lang;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool busy;                    /* an execute or restart holds the kernel (the rest below is its) */
    bool started;                 /* the supervisor thread exists (joined by the holder once it is over) */
    bool over;                    /* the supervisor thread's fb_sandbox_exec returned: the kernel is gone */
    pthread_t thread;
    int pidfd;                    /* a dup of the kernel's command init's pidfd (guarded by mu), or -1 */
    fb_kernel_cpu cpu;            /* where its CPU time is read (found once it is ready) */
    int req_w, res_r, out_r, err_r; /* our ends of its fds 4, 3, 1, 2 */
    fb_buf frame;                 /* bytes read from fd 3 not yet used */
    char dir[64];                 /* its files' directory in the session's /tmp, "" once removed */
    const char *argv[FB_LANG_MAX_ARGV];
    const char *envp[SESSION_ENV_CAP];
    char path_kernel[128], path_harness[128];
    fb_sandbox_program prog;
    fb_sandbox_outcome outcome;   /* the supervisor's, valid once over */
    uint64_t oom_seen;            /* the session cgroup's OOM kills when its last execute ended */
    fb_error err;
    fnbox_session *s;
};

/* ---- the kernel's life ---- */

static void on_spawned(void *ctx, int pidfd)
{
    fb_kernel *k = ctx;
    pthread_mutex_lock(&k->mu);
    k->pidfd = fcntl(pidfd, F_DUPFD_CLOEXEC, 3);
    pthread_mutex_unlock(&k->mu);
}

static void *supervise(void *arg)
{
    fb_kernel *k = arg;
    (void)fb_sandbox_exec(k->s->sb, &k->prog, &k->outcome, &k->err);
    pthread_mutex_lock(&k->mu);
    k->over = true;
    pthread_cond_broadcast(&k->cv);
    pthread_mutex_unlock(&k->mu);
    return NULL;
}

static void signal_kernel(fb_kernel *k, int sig)
{
    pthread_mutex_lock(&k->mu);
    if (k->pidfd >= 0)
        (void)syscall(SYS_pidfd_send_signal, k->pidfd, sig, NULL, 0);
    pthread_mutex_unlock(&k->mu);
}

/* Kills the kernel (its whole PID namespace) and waits for its supervisor; the holder's. */
static void kernel_stop(fb_kernel *k)
{
    if (!k->started)
        return;
    signal_kernel(k, SIGKILL);
    pthread_join(k->thread, NULL);
    int *fds[] = {&k->req_w, &k->res_r, &k->out_r, &k->err_r, &k->pidfd};
    pthread_mutex_lock(&k->mu);
    for (size_t i = 0; i < sizeof fds / sizeof *fds; i++)
        fb_close(fds[i]);
    k->started = k->over = false;
    memset(&k->cpu, 0, sizeof k->cpu);
    pthread_mutex_unlock(&k->mu);
    fb_sandbox_outcome_free(&k->outcome);
    fb_buf_free(&k->frame);
    fb_session_remove_dir(k->s, k->dir);
    k->dir[0] = '\0';
}

static int write_files(fb_kernel *k, fb_error *err)
{
    const fb_lang_driver *d = k->lang;
    const char *harness_name = strrchr(d->interpreter->harness_path, '/') + 1;
    fb_session_run_dir(k->s, k->dir, sizeof k->dir);
    snprintf(k->path_kernel, sizeof k->path_kernel, "%s/%s", k->dir, d->kernel_file);
    snprintf(k->path_harness, sizeof k->path_harness, "%s/%s", k->dir, harness_name);
    size_t klen, hlen;
    const char *ksrc = d->kernel_source(&klen), *hsrc = d->harness_source(&hlen);
    if (fb_inroot_write(&k->s->root, k->path_harness, hsrc, hlen, err) < 0 ||
        fb_inroot_write(&k->s->root, k->path_kernel, ksrc, klen, err) < 0)
        return fb_wrap_error(err, "writing the %s kernel into the session", d->name);
    return 0;
}

/* argv: the runtime, the interpreter's args, the kernel; the session's environment, then the language's. */
static int build_command(fb_kernel *k, const char *runtime, fb_error *err)
{
    const fb_lang_interpreter *in = k->lang->interpreter;
    size_t n = 0;
    k->argv[n++] = runtime;
    for (size_t i = 0; in->args[i] && n < FB_LANG_MAX_ARGV - 2; i++)
        k->argv[n++] = in->args[i];
    k->argv[n++] = k->path_kernel;
    k->argv[n] = NULL;
    const char *const *layers[] = {k->s->env, in->env};
    return fb_launch_env_build(layers, 2, k->envp, SESSION_ENV_CAP, err);
}

/* Four pipes: the kernel's ends go to the sandbox (own_fds: fd 1, 2, 3, 4), ours stay. */
static int make_pipes(fb_kernel *k, fb_error *err)
{
    int p[4][2] = {{-1, -1}, {-1, -1}, {-1, -1}, {-1, -1}};
    for (int i = 0; i < 4; i++)
        if (pipe2(p[i], O_CLOEXEC) < 0) {
            int e = errno;
            for (int j = 0; j < i; j++) {
                close(p[j][0]);
                close(p[j][1]);
            }
            return fb_set_error(err, FB_ERR_SANDBOX_SETUP, e, "pipe2 (a kernel's channels)");
        }
    k->out_r = p[0][0];
    k->err_r = p[1][0];
    k->res_r = p[2][0];
    k->req_w = p[3][1];
    k->prog.own_fds[0] = p[0][1];
    k->prog.own_fds[1] = p[1][1];
    k->prog.own_fds[2] = p[2][1];
    k->prog.own_fds[3] = p[3][0];
    (void)fcntl(k->out_r, F_SETFL, O_NONBLOCK);
    (void)fcntl(k->err_r, F_SETFL, O_NONBLOCK);
    (void)fcntl(k->req_w, F_SETFL, O_NONBLOCK);
    return 0;
}

static double now_ms(void)
{
    return fb_session_clock_ms(CLOCK_MONOTONIC);
}

/* ---- one execute's wait: output, the result frame, the deadline ---- */

/* The cell mark: the kernel writes it to fds 1 and 2 when it takes the cell (after flushing its own buffers), so
 * that what it wrote before, while no execute ran, is told apart and dropped. "\x1e" + 16 random hex digits +
 * "\x1f": its first byte occurs nowhere else in it, so a byte-at-a-time match never misses one. */
#define MARK_LEN 18

typedef struct exec_io {
    fb_buf out, errout;           /* this execute's output, capped as a command's */
    char mark[MARK_LEN + 1];      /* "" for no mark (the ready frame's wait) */
    size_t matched[2];            /* bytes of the mark seen so far on fds 1, 2 */
    bool marked[2];               /* the mark was seen: what follows is this execute's */
    fb_output output;             /* told as it arrives (when the caller asked) */
    bool tell;
    fb_buf payload;               /* the result frame's payload */
    bool got_frame, eof;
} exec_io;

/* How many bytes of data precede this execute's output on stream (1 or 2): all of it until the mark is seen,
 * then none. Nothing is kept meanwhile: the dropped output needs no buffer. */
static size_t before_mark(exec_io *io, int stream, const char *data, size_t n)
{
    size_t *m = &io->matched[stream - 1];
    for (size_t i = 0; i < n && !io->marked[stream - 1]; i++) {
        *m = data[i] == io->mark[*m] ? *m + 1 : data[i] == io->mark[0];
        if (*m == MARK_LEN) {
            io->marked[stream - 1] = true;
            return i + 1;
        }
    }
    return io->marked[stream - 1] ? 0 : n;
}

static void read_stream(fb_kernel *k, exec_io *io, int stream)
{
    int fd = stream == 1 ? k->out_r : k->err_r;
    fb_buf *buf = stream == 1 ? &io->out : &io->errout;
    char chunk[65536];
    ssize_t n;
    while ((n = read(fd, chunk, sizeof chunk)) > 0) {
        size_t skip = before_mark(io, stream, chunk, (size_t)n), before = buf->len;
        (void)fb_buf_append(buf, chunk + skip, (size_t)n - skip); /* past the cap: dropped, buf->truncated says so */
        if (io->tell && buf->len > before)
            fb_output_chunk(&io->output, stream, buf->data + before, buf->len - before);
    }
}

/* A whole frame at the start of k->frame moved into io->payload; 1 when there was one, -1 when the frame
 * is malformed or too large (the kernel is then not to be trusted: it is restarted). */
static int take_frame(fb_kernel *k, exec_io *io)
{
    const char *nl = k->frame.len ? memchr(k->frame.data, '\n', k->frame.len) : NULL;
    if (!nl)
        return k->frame.len > FRAME_HEADER_MAX ? -1 : 0;
    char *end = NULL;
    unsigned long long len = strtoull(k->frame.data, &end, 10);
    if (end != nl || len > FB_KERNEL_MAX_RESULT_BYTES)
        return -1;
    size_t head = (size_t)(nl - k->frame.data) + 1;
    if (k->frame.len - head < len)
        return 0;
    if (fb_buf_append(&io->payload, k->frame.data + head, (size_t)len) < 0)
        return -1;
    memmove(k->frame.data, k->frame.data + head + len, k->frame.len - head - len);
    k->frame.len -= head + (size_t)len;
    return 1;
}

static int read_result(fb_kernel *k, exec_io *io)
{
    char chunk[65536];
    ssize_t n = read(k->res_r, chunk, sizeof chunk);
    if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
        io->eof = true;
        return 0;
    }
    if (n > 0 && fb_buf_append(&k->frame, chunk, (size_t)n) < 0)
        return -1;
    int got = take_frame(k, io);
    if (got < 0)
        return -1;
    io->got_frame = got == 1;
    return 0;
}

typedef enum { W_FRAME, W_EOF, W_TIMEOUT } wait_end;

/* Reads output and fd 3 until a frame, EOF, or until_ms (then W_TIMEOUT); cancel_fd readable also ends it
 * (*cancelled). */
static wait_end wait_frame(fb_kernel *k, exec_io *io, double until_ms, int cancel_fd, bool *cancelled)
{
    for (;;) {
        struct pollfd p[4] = {{.fd = k->res_r, .events = POLLIN}, {.fd = k->out_r, .events = POLLIN},
                              {.fd = k->err_r, .events = POLLIN}, {.fd = cancel_fd, .events = POLLIN}};
        double left = until_ms - now_ms();
        if (left <= 0)
            return W_TIMEOUT;
        int n = poll(p, 4, (int)left + 1);
        if (n < 0 && errno != EINTR)
            return W_EOF;
        if (p[1].revents)
            read_stream(k, io, 1);
        if (p[2].revents)
            read_stream(k, io, 2);
        if (p[0].revents && read_result(k, io) < 0)
            return W_EOF;
        if (io->got_frame || io->eof) {
            read_stream(k, io, 1); /* what it printed before its result is in the pipes by now */
            read_stream(k, io, 2);
            return io->got_frame ? W_FRAME : W_EOF;
        }
        if (cancel_fd >= 0 && (p[3].revents & POLLIN)) {
            *cancelled = true;
            return W_TIMEOUT;
        }
    }
}

/* Starts the kernel and waits for its ready frame. */
static int kernel_start(fb_kernel *k, fb_error *err)
{
    const fb_environment *env = k->s->envl.env;
    const char *runtime = fb_lang_find_runtime_in(k->lang, env ? env->root : NULL);
    if (!runtime && env && env->root)
        return fb_set_error(err, FB_ERR_INVALID_REQUEST, ENOENT,
                            "language: Language interpreter not found in environment %s: %s", env->name,
                            k->lang->name);
    if (!runtime)
        return fb_set_error(err, FB_ERR_INVALID_REQUEST, ENOENT, "language: no %s interpreter is installed",
                            k->lang->name);
    memset(&k->prog, 0, sizeof k->prog);
    if (write_files(k, err) < 0 || build_command(k, runtime, err) < 0 || make_pipes(k, err) < 0) {
        fb_session_remove_dir(k->s, k->dir);
        k->dir[0] = '\0';
        return -1;
    }
    k->prog = (fb_sandbox_program){
        .exec_path = runtime, .argv = (char *const *)k->argv, .envp = (char *const *)k->envp,
        .timeout_s = k->s->opt.max_lifetime_s + 60, .cancel_fd = -1, .own_io = true,
        .own_fds = {k->prog.own_fds[0], k->prog.own_fds[1], k->prog.own_fds[2], k->prog.own_fds[3]},
        .on_spawned = on_spawned, .spawned_ctx = k};
    fb_buf_init(&k->frame, FB_KERNEL_MAX_RESULT_BYTES + FRAME_HEADER_MAX);
    k->over = false;
    memset(&k->err, 0, sizeof k->err);
    if (pthread_create(&k->thread, NULL, supervise, k) != 0) {
        for (int i = 0; i < 4; i++)
            close(k->prog.own_fds[i]);
        k->started = true; /* so that kernel_stop closes our ends and removes the files; nothing to join */
        k->over = true;
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, EAGAIN, "pthread_create (a kernel's supervisor)");
    }
    k->started = true;
    exec_io io = {.marked = {true, true}};
    fb_buf_init(&io.out, 0);
    fb_buf_init(&io.errout, 4096);
    fb_buf_init(&io.payload, 64);
    bool cancelled = false;
    wait_end w = wait_frame(k, &io, now_ms() + FB_KERNEL_START_TIMEOUT_S * 1e3, -1, &cancelled);
    bool ready = w == W_FRAME && io.payload.len == strlen(READY_FRAME) &&
                 memcmp(io.payload.data, READY_FRAME, io.payload.len) == 0;
    int rc = 0;
    if (!ready) {
        pthread_mutex_lock(&k->mu); /* the supervisor's error, if it could not start the kernel at all */
        while (w == W_EOF && !k->over)
            pthread_cond_wait(&k->cv, &k->mu);
        pthread_mutex_unlock(&k->mu);
        rc = fb_set_error(err, FB_ERR_SANDBOX_SETUP, 0, "the %s kernel did not start: %s%.*s", k->lang->name,
                          k->err.message[0] ? k->err.message : "", (int)(io.errout.len > 1024 ? 1024 : io.errout.len),
                          io.errout.data ? io.errout.data : "");
        kernel_stop(k);
    } else {
        fb_session_remove_dir(k->s, k->dir); /* loaded: the files are no longer needed */
        k->dir[0] = '\0';
        pthread_mutex_lock(&k->mu);
        (void)fb_kernel_cpu_find(&k->cpu, k->pidfd); /* not found: its executes report no CPU time */
        pthread_mutex_unlock(&k->mu);
    }
    fb_buf_free(&io.out);
    fb_buf_free(&io.errout);
    fb_buf_free(&io.payload);
    return rc;
}

/* ---- holding a kernel ---- */

static fb_kernel *kernel_new(fnbox_session *s, const fb_lang_driver *d)
{
    fb_kernel *k = calloc(1, sizeof *k);
    if (!k)
        return NULL;
    pthread_mutex_init(&k->mu, NULL);
    pthread_cond_init(&k->cv, NULL);
    k->lang = d;
    k->s = s;
    k->pidfd = k->req_w = k->res_r = k->out_r = k->err_r = -1;
    return k;
}

/* The session's kernel for language (created, not started, on first use). */
static fb_kernel *kernel_of(fnbox_session *s, const char *language, fb_error *err)
{
    const fb_lang_driver *d = language ? fb_lang_lookup(language) : NULL;
    if (!d || !d->kernel_source)
        return fb_set_error(err, FB_ERR_INVALID_REQUEST, 0,
                            "language: '%s' has no kernel (kernels: python (py, python3), javascript (js, node), "
                            "ruby (rb), php)",
                            language ? language : "(null)"),
               NULL;
    size_t slot = 0;
    while (fb_lang_at(slot) && fb_lang_at(slot) != d)
        slot++;
    if (slot >= FB_KERNEL_MAX_LANGS)
        return fb_set_error(err, FB_ERR_INTERNAL, 0, "kernel table: %s beyond its %d slots", d->name,
                            FB_KERNEL_MAX_LANGS),
               NULL;
    pthread_mutex_lock(&s->mu);
    if (!s->kernels[slot])
        s->kernels[slot] = kernel_new(s, d);
    fb_kernel *k = s->kernels[slot];
    pthread_mutex_unlock(&s->mu);
    if (!k)
        fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "a kernel");
    return k;
}

static bool closing(fnbox_session *s)
{
    pthread_mutex_lock(&s->mu);
    bool c = s->closing;
    pthread_mutex_unlock(&s->mu);
    return c;
}

/* Waits until the kernel is free and takes it: one execute at a time. The wait ends early, with -1, when the
 * caller cancels or the session closes. */
static int kernel_hold(fb_kernel *k, int cancel_fd, fb_error *err)
{
    pthread_mutex_lock(&k->mu);
    while (k->busy) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 100 * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&k->cv, &k->mu, &ts);
        struct pollfd p = {.fd = cancel_fd, .events = POLLIN};
        if ((cancel_fd >= 0 && poll(&p, 1, 0) > 0) || closing(k->s)) {
            pthread_mutex_unlock(&k->mu);
            return fb_set_error(err, FB_ERR_TERMINATED, ECANCELED,
                                "cancelled while waiting for the %s kernel's previous execute", k->lang->name);
        }
    }
    k->busy = true;
    pthread_mutex_unlock(&k->mu);
    return 0;
}

static void kernel_release(fb_kernel *k)
{
    pthread_mutex_lock(&k->mu);
    k->busy = false;
    pthread_cond_broadcast(&k->cv);
    pthread_mutex_unlock(&k->mu);
}

static bool kernel_over(fb_kernel *k)
{
    pthread_mutex_lock(&k->mu);
    bool over = k->over;
    pthread_mutex_unlock(&k->mu);
    return over;
}

/* ---- one execute ---- */

/* stream: the caller takes the output as it arrives; the kernel line-buffers the cell's stdout then (the
 * harness protocol's "stream", docs/internals/kernels.md). */
static int send_request(fb_kernel *k, const fb_kernel_request *req, const char *mark, bool stream, double until_ms,
                        fb_error *err)
{
    json_t *doc = json_pack("{s:s%, s:s, s:b}", "code", req->code, req->code_len, "mark", mark, "stream", stream);
    char *text = doc ? json_dumps(doc, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
    json_decref(doc);
    if (!text)
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "a kernel request");
    size_t len = strlen(text);
    char head[FRAME_HEADER_MAX + 1];
    int hn = snprintf(head, sizeof head, "%zu\n", len);
    size_t off = 0, total = (size_t)hn + len;
    int rc = 0;
    while (off < total && rc == 0) {
        const char *src = off < (size_t)hn ? head + off : text + (off - (size_t)hn);
        size_t n = off < (size_t)hn ? (size_t)hn - off : total - off;
        ssize_t w = fb_write_nosigpipe(k->req_w, src, n);
        if (w > 0) {
            off += (size_t)w;
            continue;
        }
        struct pollfd p = {.fd = k->req_w, .events = POLLOUT};
        double left = until_ms - now_ms();
        if ((w < 0 && errno != EAGAIN && errno != EINTR) || left <= 0 || poll(&p, 1, (int)left + 1) < 0)
            rc = fb_set_error(err, FB_ERR_CRASH, errno, "the %s kernel stopped reading its requests", k->lang->name);
    }
    free(text);
    return rc;
}

typedef struct exec_end {
    bool timed_out, cancelled, restarted, died;
    double cpu_start, cpu_end;    /* the kernel's CPU ms before and after the execute; -1: not known */
    uint64_t oom_start;           /* the session cgroup's OOM kills as the execute began */
    uint64_t peak_memory_bytes;   /* the session's cgroup at its highest during the execute */
    char restart_why[240];        /* kernelRestartReason, when restarted */
} exec_end;

/* The kernel's CPU ms so far; once it is gone, its init's report of what its children used (the kernel's
 * whole life), so that an execute the kernel died in still says what it used. */
static double cpu_now(fb_kernel *k)
{
    double ms = fb_kernel_cpu_ms(&k->cpu);
    return ms < 0 && kernel_over(k) ? k->outcome.cpu_ms : ms;
}

/* How the kernel's process ended (it is over): the memory limit when it was killed and the session cgroup's
 * OOM killer has killed since oom_before, else its signal or exit code. */
static void kernel_death(fb_kernel *k, uint64_t oom_before, char *out, size_t cap)
{
    const fb_sandbox_outcome *o = &k->outcome;
    if (o->term_signal == SIGKILL && fb_sandbox_oom_kills(k->s->sb) > oom_before)
        snprintf(out, cap, "the memory limit");
    else if (o->term_signal)
        snprintf(out, cap, "killed by signal %d", o->term_signal);
    else if (o->exited)
        snprintf(out, cap, "exited with code %d", o->exit_code);
    else
        snprintf(out, cap, "%.60s", k->err.message[0] ? k->err.message : "ended");
}

/* Waits for the result; at the deadline or cancel, SIGINT; after the grace period, kills the kernel. */
static void await_result(fb_kernel *k, exec_io *io, double deadline, int cancel_fd, exec_end *end)
{
    bool cancelled = false;
    wait_end w = wait_frame(k, io, deadline, cancel_fd, &cancelled);
    if (w == W_TIMEOUT) {
        end->timed_out = !cancelled;
        end->cancelled = cancelled;
        /* Again every 100 ms of the grace: a SIGINT that lands before the cell has started (the kernel
         * not yet at it) is dropped by the kernel, as one after the cell's end must be. */
        double grace_end = now_ms() + FB_KERNEL_INTERRUPT_GRACE_MS;
        do {
            signal_kernel(k, SIGINT);
            double step = now_ms() + 100;
            w = wait_frame(k, io, step < grace_end ? step : grace_end, -1, &cancelled);
        } while (w == W_TIMEOUT && now_ms() < grace_end);
        if (w == W_TIMEOUT) {
            end->cpu_end = cpu_now(k);
            kernel_stop(k); /* it ignores SIGINT, or is stuck where a signal does not reach */
            end->restarted = true;
            snprintf(end->restart_why, sizeof end->restart_why,
                     "the code did not stop within %d ms of SIGINT, so the kernel was killed: its state is lost",
                     FB_KERNEL_INTERRUPT_GRACE_MS);
            return;
        }
    }
    if (w == W_EOF) { /* it died under the execute (os._exit, the memory limit, a restart, the session) */
        pthread_mutex_lock(&k->mu);
        while (!k->over)
            pthread_cond_wait(&k->cv, &k->mu);
        pthread_mutex_unlock(&k->mu);
        end->died = end->restarted = true;
        char how[64];
        kernel_death(k, end->oom_start, how, sizeof how);
        snprintf(end->restart_why, sizeof end->restart_why,
                 "the %s kernel's process ended during this execute (%s): its state is lost; the next execute "
                 "starts a fresh kernel", k->lang->name, how);
    }
    end->cpu_end = cpu_now(k);
}

/* The execute's outcome as the sandbox would have reported a call's: core/result judges it. */
static void fill_outcome(fb_kernel *k, exec_io *io, const exec_end *end, double t0, fb_sandbox_outcome *o)
{
    memset(o, 0, sizeof *o);
    o->out = io->out;
    o->errout = io->errout;
    o->result = io->payload;
    o->wall_ms = now_ms() - t0;
    if (end->cpu_start >= 0 && end->cpu_end > end->cpu_start)
        o->cpu_ms = end->cpu_end - end->cpu_start;
    o->timed_out = end->timed_out;
    o->cancelled = end->cancelled || (end->died && closing(k->s));
    o->exited = !end->died;
    if (end->died && k->started) {
        o->exited = k->outcome.exited;
        o->exit_code = k->outcome.exit_code;
        o->term_signal = k->outcome.term_signal;
        o->oom_killed = k->outcome.oom_killed || (o->term_signal == SIGKILL && fb_sandbox_oom_kills(k->s->sb) > end->oom_start);
    }
    o->peak_memory_bytes = end->peak_memory_bytes;
    o->memory_limit_mechanism = k->outcome.memory_limit_mechanism;
}

/* The stack the kernel reported for the interrupted code (the first line of its answer: the call harness's
 * header), or NULL (caller decrefs). */
static json_t *interrupted_stack(const exec_io *io)
{
    const char *nl = io->payload.len ? memchr(io->payload.data, '\n', io->payload.len) : NULL;
    json_t *h = nl ? json_loadb(io->payload.data, (size_t)(nl - io->payload.data), 0, NULL) : NULL;
    json_t *stack = json_object_get(json_object_get(h, "error"), "stack");
    stack = json_is_string(stack) && json_string_length(stack) ? json_incref(stack) : NULL;
    json_decref(h);
    return stack;
}

/* A timeout or cancel: core/result judges it as a call's (TimeoutError, "terminated"), whose process is gone;
 * a kernel's was interrupted instead, and either kept its state or was killed. The error says which, and keeps
 * the stack where the code was interrupted. */
static void describe_interrupt(json_t *obj, const exec_io *io, const exec_end *end, double timeout_s)
{
    json_t *e = json_object_get(obj, "error");
    if (!e || !(end->timed_out || end->cancelled))
        return;
    char why[400];
    const char *what = end->timed_out ? "the execute reached its timeout" : "the execute was cancelled";
    if (end->restarted)
        snprintf(why, sizeof why, "%s; the code did not stop within %d ms of SIGINT, so the kernel was killed: its "
                 "state is lost and the next execute starts a fresh kernel", what, FB_KERNEL_INTERRUPT_GRACE_MS);
    else
        snprintf(why, sizeof why, "%s and the code was interrupted (SIGINT, as Ctrl-C); the kernel kept its state",
                 what);
    if (end->timed_out && strlen(why) + 64 < sizeof why)
        snprintf(why + strlen(why), sizeof why - strlen(why), "; raise `timeout` (%g s now, at most %g s)", timeout_s,
                 (double)FB_MAX_TIMEOUT_S);
    json_object_set_new(e, "reason", json_string(why));
    json_t *stack = end->restarted ? NULL : interrupted_stack(io);
    if (stack)
        json_object_set_new(e, "stack", stack);
}

static int render(fb_kernel *k, exec_io *io, const exec_end *end, const fb_kernel_request *req, double t0,
                  char **result, size_t *result_len, fb_error *err)
{
    fb_sandbox_outcome o;
    fill_outcome(k, io, end, t0, &o);
    fb_result_limits lim = fb_result_limits_of(req->timeout_s, &k->s->opt.limits);
    lim.result_bytes = FB_KERNEL_MAX_RESULT_BYTES;
    lim.what = "code"; /* a cell, not a function */
    fb_result res = {0};
    int rc = fb_result_from_outcome(&res, &o, &lim, err);
    /* o's buffers are io's, freed by the caller: as fb_result_from_outcome left them (it takes the value's
     * text out of the result buffer, which is then empty) */
    io->out = o.out;
    io->errout = o.errout;
    io->payload = o.result;
    if (rc == 0)
        describe_interrupt(res.obj, io, end, req->timeout_s);
    if (rc == 0 && (json_object_set_new(res.obj, "kernelRestarted", json_boolean(end->restarted)) < 0 ||
                    (end->restarted && end->restart_why[0] &&
                     json_object_set_new(res.obj, "kernelRestartReason", json_string(end->restart_why)) < 0)))
        rc = fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "a kernel result");
    if (rc == 0) {
        fb_result_set_meta(&res, now_ms() - t0, NULL);
        *result = fb_result_render(&res, result_len);
        if (!*result)
            rc = fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "a kernel result");
    }
    fb_result_free(&res);
    return rc;
}

static void exec_io_init(exec_io *io, fnbox_session *s, const fnbox_call_options *opts)
{
    memset(io, 0, sizeof *io);
    fb_buf_init(&io->out, (size_t)s->opt.limits.stdout_bytes);
    fb_buf_init(&io->errout, (size_t)s->opt.limits.stderr_bytes);
    fb_buf_init(&io->payload, FB_KERNEL_MAX_RESULT_BYTES);
    uint64_t rnd = 0;
    if (getrandom(&rnd, sizeof rnd, 0) != sizeof rnd) /* never fails for 8 bytes after boot; still a mark */
        rnd = (uint64_t)now_ms() * 2654435761u;
    snprintf(io->mark, sizeof io->mark, "\x1e%016llx\x1f", (unsigned long long)rnd);
    io->tell = opts->output != NULL;
    if (io->tell)
        fb_output_init(&io->output, opts->output, opts->output_ctx, s->opt.limits.stdout_bytes,
                       s->opt.limits.stderr_bytes);
}

static void exec_io_free(exec_io *io)
{
    if (io->tell)
        fb_output_finish(&io->output);
    fb_buf_free(&io->out);
    fb_buf_free(&io->errout);
    fb_buf_free(&io->payload);
}

/* A kernel whose process is gone while its supervisor has not yet returned (its init still reaping): the
 * request pipe's reader is closed (POLLERR). Waits, at most the interrupt grace, for the supervisor, so that
 * the execute starts a fresh kernel and says why rather than fail on the broken pipe. */
static void await_if_gone(fb_kernel *k)
{
    struct pollfd p = {.fd = k->req_w, .events = POLLOUT};
    if (!k->started || k->req_w < 0 || poll(&p, 1, 0) != 1 || !(p.revents & POLLERR))
        return;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += FB_KERNEL_INTERRUPT_GRACE_MS / 1000 + 1;
    pthread_mutex_lock(&k->mu);
    while (!k->over && pthread_cond_timedwait(&k->cv, &k->mu, &until) == 0)
        ;
    pthread_mutex_unlock(&k->mu);
}

/* Runs req in k (held): a kernel that died since the last execute, or one the request restarts, is started
 * afresh, which the result says; a restart with no kernel started yet discards nothing, and says so. */
static int exec_held(fb_kernel *k, const fb_kernel_request *req, const fnbox_call_options *opts, double t0,
                     char **result, size_t *result_len, fb_error *err)
{
    exec_end end = {.cpu_start = -1, .cpu_end = -1};
    await_if_gone(k);
    if (k->started && kernel_over(k)) { /* it died since the last execute: say how, once */
        char how[64];
        kernel_death(k, k->oom_seen, how, sizeof how);
        snprintf(end.restart_why, sizeof end.restart_why,
                 "the %s kernel's process had ended since the last execute (%s): its state was lost; this code ran "
                 "in a fresh kernel", k->lang->name, how);
    } else if (k->started && req->restart) {
        snprintf(end.restart_why, sizeof end.restart_why,
                 "restart: true: the kernel was killed, its state discarded; this code ran in a fresh kernel");
    }
    if (k->started && (req->restart || kernel_over(k))) {
        kernel_stop(k);
        end.restarted = true;
    }
    if (!k->started && kernel_start(k, err) < 0)
        return -1;
    exec_io io;
    exec_io_init(&io, k->s, opts);
    double deadline = now_ms() + req->timeout_s * 1e3;
    end.cpu_start = cpu_now(k);
    end.oom_start = fb_sandbox_oom_kills(k->s->sb);
    fb_sandbox_peak window;
    fb_sandbox_peak_begin(k->s->sb, &window);
    int rc = send_request(k, req, io.mark, io.tell, deadline, err);
    if (rc == 0) {
        await_result(k, &io, deadline, opts->cancel_fd, &end);
        end.peak_memory_bytes = fb_sandbox_peak_end(k->s->sb, &window);
        rc = render(k, &io, &end, req, t0, result, result_len, err); /* before the stop: it reads the outcome */
        if (end.died)
            kernel_stop(k);
    } else {
        (void)fb_sandbox_peak_end(k->s->sb, &window);
        kernel_stop(k);
    }
    k->oom_seen = fb_sandbox_oom_kills(k->s->sb);
    exec_io_free(&io);
    return rc;
}

FNBOX_API int fnbox_session_kernel_exec(fnbox_session *s, const char *language, const char *request,
                                        size_t request_len, const fnbox_call_options *options, char **result,
                                        size_t *result_len)
{
    double t0 = now_ms();
    fnbox_call_options opts = fb_host_options(options);
    fb_error err = {0};
    *result = NULL;
    if (fb_session_enter(s, &err) < 0)
        return fb_result_fail(&err, fb_session_code_of(&err), 0, NULL, result, result_len);
    fb_kernel_request req = {0};
    fb_kernel *k = NULL;
    int code = FNBOX_OK;
    if (fb_kernel_request_parse(request, request_len, &req, &err) < 0 || !(k = kernel_of(s, language, &err)) ||
        kernel_hold(k, opts.cancel_fd, &err) < 0) {
        code = fb_result_fail(&err, fb_result_code_of(&err), now_ms() - t0, NULL, result, result_len);
    } else {
        if (exec_held(k, &req, &opts, t0, result, result_len, &err) < 0)
            code = fb_result_fail(&err, err.kind == FB_ERR_INVALID_REQUEST ? FNBOX_INVALID_REQUEST : FNBOX_SANDBOX_FAILED,
                                  now_ms() - t0, NULL, result, result_len);
        kernel_release(k);
    }
    fb_kernel_request_free(&req);
    code = fb_session_dead_result(s, code, now_ms() - t0, result, result_len);
    fb_session_leave(s);
    return code;
}

FNBOX_API int fnbox_session_kernel_restart(fnbox_session *s, const char *language, char **error,
                                           size_t *error_len)
{
    fb_error err = {0};
    if (error)
        *error = NULL;
    if (error_len)
        *error_len = 0;
    if (fb_session_enter(s, &err) < 0)
        return fb_session_fail(&err, error, error_len);
    fb_kernel *k = kernel_of(s, language, &err);
    int rc = FNBOX_OK;
    if (!k) {
        rc = fb_session_fail(&err, error, error_len);
    } else {
        signal_kernel(k, SIGKILL); /* a running execute ends now (kernelRestarted), then we hold it */
        if (kernel_hold(k, -1, &err) < 0) {
            rc = fb_session_fail(&err, error, error_len);
        } else {
            kernel_stop(k);
            kernel_release(k);
        }
    }
    fb_session_leave(s);
    return rc;
}

void fb_session_kernels_free(fnbox_session *s)
{
    for (size_t i = 0; i < FB_KERNEL_MAX_LANGS; i++) {
        fb_kernel *k = s->kernels[i];
        if (!k)
            continue;
        kernel_stop(k); /* no execute holds it: the session has no call in progress */
        pthread_mutex_destroy(&k->mu);
        pthread_cond_destroy(&k->cv);
        free(k);
        s->kernels[i] = NULL;
    }
}
