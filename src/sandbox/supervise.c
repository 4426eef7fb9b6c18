/* Supervision: drain the program's output under caps, enforce the wall-clock deadline and cancellation,
 * and reap the namespace's init. Killing init (PID 1 of the call's PID namespace) makes the kernel kill
 * every process of the call, daemonized ones included; wait4() on init returns only once they are gone. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/internal.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Reads what is available; returns 1 on EOF/error (stop polling this fd), 0 otherwise. */
static int drain(int fd, fb_buf *buf)
{
    char chunk[65536];
    ssize_t n = read(fd, chunk, sizeof chunk);
    if (n < 0)
        return errno == EINTR || errno == EAGAIN ? 0 : 1;
    if (n == 0)
        return 1;
    if (buf && fb_buf_append(buf, chunk, (size_t)n) < 0)
        return 1;
    return 0;
}

enum { SV_OUT, SV_ERR, SV_REPORT, SV_PID, SV_CANCEL, SV_N };

int fb_supervise(const fb_supervise_io *io, const fb_sandbox_limits *lim, fb_sandbox_outcome *out,
                 char *report_msg, size_t report_cap, int *child_wait_status, fb_error *err)
{
    struct pollfd pfd[SV_N] = {
        [SV_OUT] = {.fd = io->out_fd, .events = POLLIN},
        [SV_ERR] = {.fd = io->err_fd, .events = POLLIN},
        [SV_REPORT] = {.fd = io->report_fd, .events = POLLIN},
        [SV_PID] = {.fd = io->pidfd, .events = POLLIN},
        [SV_CANCEL] = {.fd = io->cancel_fd, .events = POLLIN},
    };
    fb_buf report;
    fb_buf_init(&report, report_cap > 0 ? report_cap - 1 : 0);
    double start = now_ms();
    double deadline = start + lim->timeout_s * 1e3;
    bool killed = false;

    while (pfd[SV_PID].fd >= 0 || pfd[SV_OUT].fd >= 0 || pfd[SV_ERR].fd >= 0 || pfd[SV_REPORT].fd >= 0) {
        int timeout = -1;
        if (!killed) {
            double left = deadline - now_ms();
            timeout = left <= 0 ? 0 : (int)(left + 1);
        }
        int n = poll(pfd, SV_N, timeout);
        if (n < 0 && errno != EINTR) {
            fb_buf_free(&report);
            return fb_set_error(err, "SandboxSetupFailed", errno, "poll");
        }
        if (!killed && (now_ms() >= deadline || (pfd[SV_CANCEL].fd >= 0 && (pfd[SV_CANCEL].revents & POLLIN)))) {
            if (now_ms() >= deadline)
                out->timed_out = true;
            else
                out->cancelled = true;
            kill(io->init_pid, SIGKILL);
            killed = true;
            pfd[SV_CANCEL].fd = -1;
        }
        if (n <= 0)
            continue;
        fb_buf *bufs[] = {[SV_OUT] = &out->out, [SV_ERR] = &out->errout, [SV_REPORT] = &report};
        for (int i = SV_OUT; i <= SV_REPORT; i++)
            if (pfd[i].fd >= 0 && (pfd[i].revents & (POLLIN | POLLHUP | POLLERR)) && drain(pfd[i].fd, bufs[i]))
                pfd[i].fd = -1;
        if (pfd[SV_PID].fd >= 0 && (pfd[SV_PID].revents & POLLIN)) {
            /* init is gone; every other process of the namespace is already dead. Keep draining
             * the pipes until EOF, which comes now that no writer is left. */
            pfd[SV_PID].fd = -1;
            killed = true;
        }
    }

    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    int st = 0;
    while (wait4(io->init_pid, &st, 0, &ru) < 0) {
        if (errno != EINTR) {
            fb_buf_free(&report);
            return fb_set_error(err, "SandboxSetupFailed", errno, "wait4(init)");
        }
    }
    out->wall_ms = now_ms() - start;
    out->cpu_ms = (double)ru.ru_utime.tv_sec * 1e3 + (double)ru.ru_utime.tv_usec / 1e3 +
                  (double)ru.ru_stime.tv_sec * 1e3 + (double)ru.ru_stime.tv_usec / 1e3;
    if (out->peak_memory_bytes == 0)
        out->peak_memory_bytes = (uint64_t)ru.ru_maxrss * 1024;

    /* init reports either a setup failure ("E<text>") or the program's wait status ("S<int>"). */
    *child_wait_status = -1;
    if (report.len > 0 && report.data[0] == 'E' && report_cap > 0) {
        size_t len = report.len - 1 < report_cap - 1 ? report.len - 1 : report_cap - 1;
        memcpy(report_msg, report.data + 1, len);
        report_msg[len] = '\0';
    } else if (report.len >= 1 + sizeof(int) && report.data[0] == 'S') {
        memcpy(child_wait_status, report.data + 1, sizeof(int));
    }
    fb_buf_free(&report);
    return 0;
}
