/* Ending a prepared call before its processes are gone (prepared.c asks; docs/internals/pools.md).
 * A warm call's answer is ready about when its harness exits, but the process's teardown (unmapping the
 * runtime: Python ~1 ms, PHP ~1.6 ms, Node ~3 ms here) used to come first. What the call left is final
 * once every process of it has entered the kernel's exit path (PF_EXITING in /proc/PID/stat: no thread of
 * it runs user code again, so nothing more is written: not its output, its files or its result) and its
 * result is complete. The harness closes stdout and stderr just before it exits, which is when this is
 * asked; anything else (a process still running, a result cut short, a killed program) waits for init as
 * before, so a crash or a limit still reads from the wait status. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/internal.h"
#include "util/defences.h"
#include "util/fd.h"

/* /proc/<id>/stat read into text, from just after the command name (which may hold spaces and parentheses:
 * the last ')' ends it): " S ppid pgrp ...". NULL if it cannot be read (errno says why). */
static const char *stat_fields(const char *id, char *text, size_t cap)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%s/stat", id);
    if (fb_read_small(path, text, cap) <= 0)
        return NULL;
    const char *p = strrchr(text, ')');
    return p && p[1] == ' ' ? p + 1 : NULL;
}

/* Field n of stat_fields' text (1: the state, 2: ppid... proc(5)'s field n + 2) as a number, or 0. */
static unsigned long long stat_number(const char *fields, int n)
{
    const char *p = fields;
    for (int i = 0; p && i < n; i++)
        if ((p = strchr(p, ' ')) != NULL)
            p++;
    if (!p)
        return 0;
    char *end = NULL;
    unsigned long long v = strtoull(p, &end, 10);
    return end != p && (*end == ' ' || *end == '\n' || *end == '\0') ? v : 0;
}

static const char *pid_stat_fields(pid_t pid, char *text, size_t cap)
{
    char id[16];
    snprintf(id, sizeof id, "%d", (int)pid);
    return stat_fields(id, text, cap);
}

char fb_proc_state(pid_t pid)
{
    char text[512];
    const char *p = pid_stat_fields(pid, text, sizeof text);
    return p ? p[1] : 0;
}

/* The process's CPU clock, made as the kernel defines it (MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED),
 * ~pid << 3 | 2) rather than by clock_getcpuclockid, which first asks clock_getres whether pid exists: a
 * syscall more on a warm call's path, where clock_gettime's EINVAL says the same. */
double fb_proc_cpu_ms(pid_t pid)
{
    clockid_t clock = (clockid_t)((~(unsigned)pid << 3) | 2u);
    struct timespec ts;
    if (pid <= 0 || clock_gettime(clock, &ts) != 0)
        return 0;
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

#define EARLY_RESULT_MAX ((off_t)1 << 20) /* larger answers are read once, after the teardown */
#define PF_EXITING_FLAG 0x4u               /* include/linux/sched.h, shown in /proc/PID/stat's 9th field */


/* Whether the task has entered its exit path (a task already gone counts as such). */
static bool task_exiting(const char *tid)
{
    char text[512];
    errno = 0;
    const char *p = stat_fields(tid, text, sizeof text);
    if (!p)
        return errno == ENOENT || errno == ESRCH;
    return (stat_number(p, 7) & PF_EXITING_FLAG) != 0; /* after the name: state ppid pgrp session tty tpgid flags */
}

/* Every task of the call's cgroup (the program and all it started: none can leave it), init aside, is
 * exiting. False without a cgroup to list them. */
static bool all_exiting(const fb_sandbox *sb)
{
    const char *dir = sb->cg.memory_dir[0] ? sb->cg.memory_dir : sb->cg.pids_dir;
    if (!dir[0])
        return false;
    char path[600], tids[4096];
    snprintf(path, sizeof path, "%s/%s", dir, sb->cg.v2 ? "cgroup.threads" : "tasks");
    ssize_t n = fb_read_small(path, tids, sizeof tids);
    if (n < 0 || (size_t)n >= sizeof tids - 1) /* unreadable, or too many to list here */
        return false;
    char init[16];
    snprintf(init, sizeof init, "%d", (int)sb->pid);
    char *save = NULL;
    for (char *tid = strtok_r(tids, "\n", &save); tid; tid = strtok_r(NULL, "\n", &save))
        if (strcmp(tid, init) != 0 && !task_exiting(tid))
            return false;
    return true;
}

/* The program's peak resident set (VmHWM), while its memory is still there; 0 once it is gone. */
static uint64_t program_peak_rss(pid_t pid)
{
    char path[64], text[4096];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    if (fb_read_small(path, text, sizeof text) <= 0)
        return 0;
    const char *p = strstr(text, "\nVmHWM:");
    if (!p)
        return 0;
    p += 7;
    p += strspn(p, " \t");
    char *end = NULL;
    unsigned long long kb = strtoull(p, &end, 10);
    return end != p ? (uint64_t)kb * 1024 : 0;
}

static bool early_result_complete(const fb_early_end *c)
{
    struct stat st;
    int fd = c->sb->f.result;
    if (fstat(fd, &st) < 0 || st.st_size <= 0 || st.st_size > EARLY_RESULT_MAX)
        return false;
    char *data = malloc((size_t)st.st_size);
    bool complete = data && pread(fd, data, (size_t)st.st_size, 0) == st.st_size &&
                    c->result_complete(data, (size_t)st.st_size);
    free(data);
    return complete;
}

/* The program itself must still be on its way out, not gone: once it is, init has started killing and
 * reaping what it left (whose CPU time init's wait status then carries), and its end is near anyway. */
static bool program_exiting(const fb_sandbox *sb)
{
    struct pollfd p = {.fd = sb->program_fd, .events = POLLIN};
    char pid[16];
    snprintf(pid, sizeof pid, "%d", (int)sb->program);
    return sb->program_fd >= 0 && poll(&p, 1, 0) == 0 && task_exiting(pid);
}

void fb_early_end_sample(void *ctx)
{
    fb_early_end *c = ctx;
    uint64_t peak = program_peak_rss(c->sb->program);
    if (peak > c->peak_rss)
        c->peak_rss = peak;
}

bool fb_early_end_ask(void *ctx)
{
    fb_early_end *c = ctx;
    fb_early_end_sample(c);
    /* test builds can skip the wait for every process to exit, to show what it keeps out */
    if (fb_defence_disabled("early-end-exiting"))
        return early_result_complete(c);
    return program_exiting(c->sb) && all_exiting(c->sb) && early_result_complete(c);
}

/* /proc/PID/stat's cutime + cstime (children it reaped), in ms. */
static double reaped_children_cpu_ms(pid_t pid)
{
    char text[1024];
    const char *p = pid_stat_fields(pid, text, sizeof text);
    if (!p)
        return 0;
    /* state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime */
    unsigned long long cutime = stat_number(p, 14), cstime = stat_number(p, 15);
    long hz = sysconf(_SC_CLK_TCK);
    return hz > 0 ? (double)(cutime + cstime) * 1e3 / (double)hz : 0;
}

/* An early end's usage, which init's wait status would have carried: the CPU time of init and the program
 * (their threads, and the children each reaped), the program's peak. */
void fb_early_end_usage(const fb_early_end *early, fb_sandbox_outcome *out)
{
    const fb_sandbox *sb = early->sb;
    /* init may reap the program meanwhile, and its pid then be anyone's: init's figures first, then the
     * program's, kept only if it is still unreaped after (a zombie answers signal 0); else init's again,
     * which now count the program. */
    double init_ms = fb_proc_cpu_ms(sb->pid) + reaped_children_cpu_ms(sb->pid);
    double program_ms = fb_proc_cpu_ms(sb->program) + reaped_children_cpu_ms(sb->program);
    uint64_t peak = program_peak_rss(sb->program);
    out->peak_memory_bytes = early->peak_rss; /* read while the pid was surely the program's */
    if (syscall(SYS_pidfd_send_signal, sb->program_fd, 0, NULL, 0) == 0) {
        out->cpu_ms = init_ms + program_ms;
        if (peak > out->peak_memory_bytes)
            out->peak_memory_bytes = peak;
    } else {
        out->cpu_ms = fb_proc_cpu_ms(sb->pid) + reaped_children_cpu_ms(sb->pid);
    }
}

