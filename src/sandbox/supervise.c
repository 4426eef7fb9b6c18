/* Supervision: release the input once the program is inside its cgroup, drain its output under caps,
 * enforce the wall-clock deadline and cancellation, and reap the namespace's init. Killing init (PID 1
 * of the call's PID namespace) makes the kernel kill every process of the call, daemonized ones
 * included; wait4() on init returns only once they are gone. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <sys/uio.h>
#include <unistd.h>

#include "sandbox/internal.h"
#include "util/defences.h"
#include "util/fd.h"

enum { SV_OUT, SV_ERR, SV_REPORT, SV_PID, SV_CANCEL, SV_STARTED, SV_INPUT, SV_EXIT, SV_N };

typedef struct sv_state {
    struct pollfd pfd[SV_N];
    fb_buf report;
    size_t input_off;
    bool killed;
    bool ended_early;  /* io->ended said so: init is alive, not ours to reap */
    double early_wait; /* ms until the next ask of io->ended */
    bool early_fast;   /* stdout and stderr were closed when early_wait was set */
    bool sampled_closed; /* io->sample was called for their closing */
    double deadline;
} sv_state;

/* How often io->ended is asked: from EARLY_FIRST_MS, doubling, up to EARLY_MAX_MS once stdout and stderr are
 * closed (a harness closes them right before it exits: the answer is near) and EARLY_SLOW_MS before (a
 * runtime that leaves them to its exit is found exiting on this schedule; a long call is asked this seldom). */
#define EARLY_FIRST_MS 0.1
#define EARLY_MAX_MS 4.0
#define EARLY_SLOW_FIRST_MS 0.25
#define EARLY_SLOW_MS 20.0
/* With an exit listener (fb_supervise_io.exit_fd) its hang-up is when to ask: not when the input is written
 * nor when the streams close (the program has not exited yet, and on a 2-core machine the question takes
 * the CPU it is about to exit on), and the timer only from EARLY_LISTENED_FIRST_MS, in case the kernel
 * never hangs it up (before Linux 5.9). */
#define EARLY_LISTENED_FIRST_MS 2.0

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Reads what is available into buf, telling io's on_output what was kept of stream 1 or 2 (0: the
 * report, not told); returns 1 on EOF/error (stop polling this fd), 0 otherwise. */
static int drain(const fb_supervise_io *io, int stream, int fd, fb_buf *buf)
{
    char chunk[65536];
    ssize_t n = read(fd, chunk, sizeof chunk);
    if (n < 0)
        return errno == EINTR || errno == EAGAIN ? 0 : 1;
    if (n == 0)
        return 1;
    size_t before = buf->len;
    if (fb_buf_append(buf, chunk, (size_t)n) < 0)
        return 1;
    if (stream && io->on_output && buf->len > before)
        io->on_output(io->output_ctx, stream, buf->data + before, buf->len - before);
    return 0;
}


static int on_started(const fb_supervise_io *io, sv_state *st, fb_error *err)
{
    pid_t program = fb_sock_recv_pid(io->started_fd, NULL); /* its pid as cgroup.procs wants it */
    st->pfd[SV_STARTED].fd = -1;
    if (program <= 0) /* the program died before starting: its failure is on the report pipe */
        return 0;
    if (io->on_started && io->on_started(io->ctx, program, err) < 0)
        return -1;
    st->pfd[SV_INPUT].fd = *io->input_fd; /* now the input may flow */
    return 0;
}

/* A large input crosses the pipe in 1 MiB steps instead of 64 KiB ones: each step is a wake-up of the
 * harness and of this loop (a 64 MB argument: 1,000 round trips otherwise). 1 MiB is what any user may ask
 * (fs.pipe-max-size's default); the pages count against fnbox's memory, not the call's. A refusal only
 * leaves the default. */
#define INPUT_PIPE_BYTES (1 << 20)

static void grow_input_pipe(const fb_supervise_io *io)
{
    if (io->input_fd && *io->input_fd >= 0 && io->input_len > (size_t)INPUT_PIPE_BYTES / 4)
        (void)fcntl(*io->input_fd, F_SETPIPE_SZ,
                    io->input_len < (size_t)INPUT_PIPE_BYTES ? (int)io->input_len : INPUT_PIPE_BYTES);
}

#define INPUT_IOV_STEP 16 /* pieces per writev: a pipe takes at most INPUT_PIPE_BYTES anyway */

/* The input from offset off on: one write, or a writev of the pieces that remain. */
static ssize_t write_from(const fb_supervise_io *io, size_t off)
{
    if (!io->input_iov)
        return fb_write_nosigpipe(*io->input_fd, io->input + off, io->input_len - off);
    struct iovec v[INPUT_IOV_STEP];
    int k = 0;
    for (size_t i = 0; i < io->input_iovcnt && k < INPUT_IOV_STEP; i++) {
        const struct iovec *p = &io->input_iov[i];
        if (off >= p->iov_len) {
            off -= p->iov_len;
            continue;
        }
        v[k++] = (struct iovec){.iov_base = (char *)p->iov_base + off, .iov_len = p->iov_len - off};
        off = 0;
    }
    return fb_writev_nosigpipe(*io->input_fd, v, k);
}

static void write_input(const fb_supervise_io *io, sv_state *st)
{
    ssize_t n = write_from(io, st->input_off);
    if (n > 0)
        st->input_off += (size_t)n;
    if ((n < 0 && errno != EAGAIN && errno != EINTR) || st->input_off >= io->input_len) {
        st->pfd[SV_INPUT].fd = -1;
        fb_close(io->input_fd); /* EOF for the harness (or it stopped reading) */
        if (st->input_off >= io->input_len && io->on_input_written)
            io->on_input_written(io->input_ctx);
    }
}

/* Kills init, and with it every process of its PID namespace. A foreign init is not our child, so its pid
 * could be reused once it is gone: it is signalled through its pidfd. */
static void kill_init(const fb_supervise_io *io)
{
    if (io->foreign)
        (void)syscall(SYS_pidfd_send_signal, io->pidfd, SIGKILL, NULL, 0);
    else
        kill(io->init_pid, SIGKILL);
}

static void check_deadline(const fb_supervise_io *io, sv_state *st, fb_sandbox_outcome *out)
{
    if (st->killed)
        return;
    bool late = now_ms() >= st->deadline;
    bool cancel = st->pfd[SV_CANCEL].fd >= 0 && (st->pfd[SV_CANCEL].revents & POLLIN);
    if (!late && !cancel)
        return;
    out->timed_out = late;
    out->cancelled = !late;
    kill_init(io);
    st->killed = true;
    st->pfd[SV_CANCEL].fd = -1;
}

static bool busy(const sv_state *st)
{
    return st->pfd[SV_PID].fd >= 0 || st->pfd[SV_OUT].fd >= 0 || st->pfd[SV_ERR].fd >= 0 ||
           st->pfd[SV_REPORT].fd >= 0;
}

/* The call may have ended before init did: its input is in and nothing killed it; io->ended decides. */
static bool may_end_early(const fb_supervise_io *io, const sv_state *st)
{
    return io->ended && !st->killed && st->pfd[SV_STARTED].fd < 0 && (!io->input_fd || *io->input_fd < 0);
}

/* The next wait before asking io->ended again, on the schedule above. */
static double next_early_wait(sv_state *st)
{
    bool fast = st->pfd[SV_OUT].fd < 0 && st->pfd[SV_ERR].fd < 0;
    if (fast && !st->early_fast) { /* the streams just closed: ask soon */
        st->early_fast = true;
        st->early_wait = EARLY_FIRST_MS;
    }
    double wait = st->early_wait, cap = fast ? EARLY_MAX_MS : EARLY_SLOW_MS;
    st->early_wait = wait * 2 < cap ? wait * 2 : cap;
    return wait;
}

/* Ended early: what the program wrote before it began exiting is in the pipes, and no process of the call
 * writes any more; read it all without waiting for EOF (the exiting processes still hold the write ends). */
static void drain_rest(const fb_supervise_io *io, sv_state *st, fb_sandbox_outcome *out)
{
    fb_buf *bufs[] = {[SV_OUT] = &out->out, [SV_ERR] = &out->errout};
    for (int i = SV_OUT; i <= SV_ERR; i++) {
        struct pollfd p = {.fd = st->pfd[i].fd, .events = POLLIN};
        while (p.fd >= 0 && poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLHUP | POLLERR)))
            if (drain(io, i == SV_OUT ? 1 : 2, p.fd, bufs[i]))
                p.fd = st->pfd[i].fd = -1;
    }
}

static struct timespec ms_to_timespec(double ms)
{
    long long ns = ms > 0 ? (long long)(ms * 1e6) : 0;
    return (struct timespec){.tv_sec = (time_t)(ns / 1000000000LL), .tv_nsec = (long)(ns % 1000000000LL)};
}

static int loop(const fb_supervise_io *io, sv_state *st, fb_sandbox_outcome *out, fb_error *err)
{
    bool listened = st->pfd[SV_EXIT].fd >= 0;
    st->early_wait = listened ? EARLY_LISTENED_FIRST_MS : EARLY_SLOW_FIRST_MS;
    st->early_fast = listened; /* the streams' closing is no reason to ask */
    double next_ask = listened ? now_ms() + EARLY_LISTENED_FIRST_MS : 0;
    while (busy(st)) {
        bool early = may_end_early(io, st);
        /* the exit listener hung up: every process of the program has begun to exit, ask now (once) */
        bool exiting = st->pfd[SV_EXIT].fd >= 0 && (st->pfd[SV_EXIT].revents & (POLLHUP | POLLERR));
        if (exiting)
            st->pfd[SV_EXIT].fd = -1;
        bool streams_closed = st->pfd[SV_OUT].fd < 0 && st->pfd[SV_ERR].fd < 0;
        if (early && io->sample && streams_closed && !st->sampled_closed) {
            st->sampled_closed = true; /* the harness's last step before its exit: its memory is all there */
            io->sample(io->ended_ctx);
        }
        if (early && (now_ms() >= next_ask || exiting ||
                      (st->pfd[SV_OUT].fd < 0 && st->pfd[SV_ERR].fd < 0 && !st->early_fast))) {
            if (io->ended(io->ended_ctx)) {
                drain_rest(io, st, out);
                st->ended_early = true;
                return 0;
            }
            next_ask = now_ms() + next_early_wait(st);
        }
        struct timespec ts, *timeout = NULL;
        if (!st->killed) {
            double left = st->deadline - now_ms();
            if (early && next_ask - now_ms() < left)
                left = next_ask - now_ms();
            ts = ms_to_timespec(left);
            timeout = &ts;
        }
        int n = ppoll(st->pfd, SV_N, timeout, NULL);
        if (n < 0 && errno != EINTR)
            return fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "poll");
        check_deadline(io, st, out);
        if (n <= 0)
            continue;
        fb_buf *bufs[] = {[SV_OUT] = &out->out, [SV_ERR] = &out->errout, [SV_REPORT] = &st->report};
        static const int streams[] = {[SV_OUT] = 1, [SV_ERR] = 2, [SV_REPORT] = 0};
        for (int i = SV_OUT; i <= SV_REPORT; i++)
            if (st->pfd[i].fd >= 0 && (st->pfd[i].revents & (POLLIN | POLLHUP | POLLERR)) &&
                drain(io, streams[i], st->pfd[i].fd, bufs[i]))
                st->pfd[i].fd = -1;
        if (st->pfd[SV_STARTED].fd >= 0 && (st->pfd[SV_STARTED].revents & (POLLIN | POLLHUP)) &&
            on_started(io, st, err) < 0)
            return -1;
        if (st->pfd[SV_INPUT].fd >= 0 && (st->pfd[SV_INPUT].revents & (POLLOUT | POLLERR | POLLHUP)))
            write_input(io, st);
        if (st->pfd[SV_PID].fd >= 0 && (st->pfd[SV_PID].revents & POLLIN)) {
            /* init is gone, so is every other process of the namespace: the pipes reach EOF now. */
            st->pfd[SV_PID].fd = -1;
            st->pfd[SV_STARTED].fd = -1;
            st->killed = true;
        }
    }
    return 0;
}

/* Our own resident set now, right after the clone: the namespace's init is a copy of this process and the
 * program a fork of init, so both start with a copy of every page we hold (the request, the call input...)
 * and the kernel counts that copy in their ru_maxrss (the program's, through exec). 0 if unknown. */
uint64_t fb_own_rss_bytes(void)
{
    int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    char text[128];
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    if (n <= 0)
        return 0;
    text[n] = '\0';
    char *end = NULL;
    (void)strtoull(text, &end, 10); /* the first field is the total size */
    if (end == text || *end != ' ')
        return 0;
    char *p = end;
    unsigned long long resident = strtoull(p, &end, 10);
    if (end == p)
        return 0;
    long page = sysconf(_SC_PAGESIZE);
    return (uint64_t)resident * (uint64_t)(page > 0 ? page : 4096);
}

static double rusage_cpu_ms(const struct rusage *ru)
{
    return (double)ru->ru_utime.tv_sec * 1e3 + (double)ru->ru_utime.tv_usec / 1e3 +
           (double)ru->ru_stime.tv_sec * 1e3 + (double)ru->ru_stime.tv_usec / 1e3;
}

static int reap(pid_t pid, double start, uint64_t inherited, fb_sandbox_outcome *out, int *wait_status,
                fb_error *err)
{
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    while (wait4(pid, wait_status, 0, &ru) < 0)
        if (errno != EINTR)
            return fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "wait4(init)");
    out->wall_ms = now_ms() - start;
    out->cpu_ms = rusage_cpu_ms(&ru);
    /* Of the largest process. A figure no larger than the copy of fnbox that every process of the call starts
     * with says nothing about the program (a 64 MB argument would read as 4x that whatever the runtime did):
     * where a memory cgroup measures the call (fb_sandbox_run takes the larger of both), it is left out. */
    uint64_t rss = (uint64_t)ru.ru_maxrss * 1024;
    bool by_cgroup = out->memory_limit_mechanism && strncmp(out->memory_limit_mechanism, "cgroup", 6) == 0;
    out->peak_memory_bytes = by_cgroup && rss <= inherited + (1ULL << 20) ? 0 : rss;
    return 0;
}

/* A foreign init (not our child) reports its children's rusage after its status: "S<int>U<rusage>". Its
 * memory figure is that of the largest process, as reap() reads it. */
static void foreign_usage(const fb_buf *report, double start, uint64_t inherited, fb_sandbox_outcome *out)
{
    out->wall_ms = now_ms() - start;
    size_t at = 1 + sizeof(int);
    struct rusage ru;
    if (report->len < at + 1 + sizeof ru || report->data[0] != 'S' || report->data[at] != 'U')
        return;
    memcpy(&ru, report->data + at + 1, sizeof ru);
    out->cpu_ms = rusage_cpu_ms(&ru);
    uint64_t rss = (uint64_t)ru.ru_maxrss * 1024;
    out->peak_memory_bytes = rss <= inherited + (1ULL << 20) ? 0 : rss;
}

int fb_supervise(const fb_supervise_io *io, const fb_sandbox_limits *lim, fb_sandbox_outcome *out,
                 char *report_msg, size_t report_cap, int *child_wait_status, fb_error *err)
{
    sv_state st = {.pfd = {
                       [SV_OUT] = {.fd = io->out_fd, .events = POLLIN},
                       [SV_ERR] = {.fd = io->err_fd, .events = POLLIN},
                       [SV_REPORT] = {.fd = io->report_fd, .events = POLLIN},
                       [SV_PID] = {.fd = io->pidfd, .events = POLLIN},
                       [SV_CANCEL] = {.fd = io->cancel_fd, .events = POLLIN},
                       [SV_STARTED] = {.fd = io->started_fd, .events = POLLIN},
                       /* without a "started" to wait for, the program is ready for its input now */
                       [SV_INPUT] = {.fd = io->started_fd < 0 && io->input_fd ? *io->input_fd : -1,
                                     .events = POLLOUT},
                       /* no events asked: its hang-up is reported whatever is asked */
                       [SV_EXIT] = {.fd = io->ended ? io->exit_fd : -1},
                   }};
    fb_buf_init(&st.report, report_cap > 0 ? report_cap - 1 : 0);
    grow_input_pipe(io);
    double start = now_ms();
    uint64_t inherited = io->inherited_rss ? io->inherited_rss : fb_own_rss_bytes();
    st.deadline = start + lim->timeout_s * 1e3;
    if (fb_defence_disabled("timeout")) /* test builds: no deadline (a year) */
        st.deadline = start + 365 * 86400e3;
    int rc = loop(io, &st, out, err);
    if (rc < 0)
        kill_init(io); /* never leave a call running unsupervised */
    int wst = -1;
    out->ended_early = rc == 0 && st.ended_early;
    if (out->ended_early) /* usage: the caller reads it from /proc and the cgroup */
        out->wall_ms = now_ms() - start;
    else if (io->foreign)
        foreign_usage(&st.report, start, inherited, out);
    else if (reap(io->init_pid, start, inherited, out, &wst, rc < 0 ? NULL : err) < 0)
        rc = -1;
    /* init reports either a setup failure ("E<text>") or the program's wait status ("S<int>"). */
    *child_wait_status = -1;
    if (st.report.len > 0 && st.report.data[0] == 'E' && report_cap > 0) {
        size_t len = st.report.len - 1 < report_cap - 1 ? st.report.len - 1 : report_cap - 1;
        memcpy(report_msg, st.report.data + 1, len);
        report_msg[len] = '\0';
    } else if (st.report.len >= 1 + sizeof(int) && st.report.data[0] == 'S') {
        memcpy(child_wait_status, st.report.data + 1, sizeof(int));
    }
    (void)wst;
    fb_buf_free(&st.report);
    return rc;
}
