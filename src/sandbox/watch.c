/* A long-lived sandbox watched from outside (sandbox.h): whether its init has ended by itself, and why, and
 * the most memory its cgroup held over a window (a session's command or kernel cell).
 *
 * Init is our child and stays unreaped until fb_sandbox_destroy (waitid's WNOWAIT leaves it a zombie), so its
 * pid cannot be reused meanwhile and fb_sandbox_kill stays safe. Why it died: a signal from its wait status;
 * the memory limit when that signal was SIGKILL and the cgroup's OOM killer has killed since the last exec
 * began (where init is in the cgroup without an OOM exemption, cgroup v2 when fnbox could not lower init's
 * oom_score_adj, memory.oom.group takes init with the rest). A command's own OOM kill, earlier, is not
 * counted: each exec takes the counter as it begins (exec.c). */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "sandbox/internal.h"
#include "util/fd.h"

#define PF_EXITING_FLAG 0x4u   /* include/linux/sched.h's PF_EXITING, in /proc/<pid>/stat's flags */
#define DYING_WAIT_MS 5000     /* how long a dying init may take to become a zombie (its namespace's teardown) */

/* Whether pid has begun to exit (PF_EXITING). A dying PID namespace's init kills and reaps every other
 * process of it before it becomes a zombie (zap_pid_ns_processes), and unmaps its memory too: a program's
 * run can end (its own init killed with the rest) while our init is still not waitable. */
static bool exiting(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    if (fb_read_small(path, buf, sizeof buf) <= 0)
        return false;
    const char *p = strrchr(buf, ')');
    for (int field = 2; p && field < 9; field++) /* ")" ends field 2; flags is field 9 */
        p = strchr(p + 1, ' ');
    return p && (strtoul(p + 1, NULL, 10) & PF_EXITING_FLAG) != 0;
}

bool fb_sandbox_ended(fb_sandbox *sb, fb_sandbox_end *end)
{
    memset(end, 0, sizeof *end);
    if (sb->pid <= 0)
        return false;
    if (exiting(sb->pid)) { /* being torn down: wait until it is waitable, and say how it died */
        struct pollfd p = {.fd = sb->f.pidfd, .events = POLLIN};
        while (poll(&p, 1, DYING_WAIT_MS) < 0 && errno == EINTR)
            ;
    }
    siginfo_t info;
    memset(&info, 0, sizeof info);
    int rc;
    while ((rc = waitid(P_PID, (id_t)sb->pid, &info, WEXITED | WNOHANG | WNOWAIT)) < 0 && errno == EINTR)
        ;
    if (rc < 0 || info.si_pid != sb->pid)
        return false;
    if (info.si_code == CLD_EXITED) {
        end->exit_code = info.si_status;
    } else {
        end->term_signal = info.si_status;
        end->memory_limit = info.si_status == SIGKILL &&
                            fb_cgroup_oom_kills(&sb->cg) > __atomic_load_n(&sb->oom_seen, __ATOMIC_RELAXED);
    }
    return true;
}

int fb_sandbox_pidfd(const fb_sandbox *sb)
{
    return sb->f.pidfd;
}

uint64_t fb_sandbox_oom_kills(const fb_sandbox *sb)
{
    return fb_cgroup_oom_kills(&sb->cg);
}

void fb_sandbox_peak_begin(fb_sandbox *sb, fb_sandbox_peak *w)
{
    bool alone = __atomic_fetch_add(&sb->peak_windows, 1, __ATOMIC_ACQ_REL) == 0;
    w->fd = fb_cgroup_peak_open(&sb->cg, alone);
}

uint64_t fb_sandbox_peak_end(fb_sandbox *sb, fb_sandbox_peak *w)
{
    uint64_t peak = fb_cgroup_peak_read(&sb->cg, w->fd);
    fb_close(&w->fd);
    __atomic_fetch_sub(&sb->peak_windows, 1, __ATOMIC_ACQ_REL);
    return peak;
}
