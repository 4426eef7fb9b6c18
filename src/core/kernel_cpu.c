/* A session kernel's CPU time from /proc/<pid>/stat: utime + stime (every thread of the process) and cutime +
 * cstime (the children it has waited for, with theirs), in clock ticks. The kernel's figures plus its init's
 * cutime + cstime (orphans reparented to the init and reaped by it) are everything that ran under the kernel
 * and is over or still the kernel's own: a delta across an execute is that execute's CPU time. */
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/kernel_cpu.h"

typedef struct stat_fields {
    pid_t ppid;
    unsigned long long utime, stime, cutime, cstime, start;
} stat_fields;

/* A pid written in decimal at text (after blanks); 0 when there is none. */
static pid_t pid_at(const char *text)
{
    char *end;
    long v = strtol(text, &end, 10);
    return end != text && v > 0 && v <= 0x7fffffff ? (pid_t)v : 0;
}

static ssize_t read_small(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, cap - 1);
    close(fd);
    if (n >= 0)
        buf[n] = '\0';
    return n;
}

/* Fields 4 (ppid), 14-17 (utime, stime, cutime, cstime) and 22 (starttime) of /proc/<pid>/stat. The command
 * name (field 2) may hold spaces and parentheses, so the fields are counted from its last ')'. */
static bool read_stat(pid_t pid, stat_fields *f)
{
    char path[64], text[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    if (read_small(path, text, sizeof text) <= 0)
        return false;
    char *p = strrchr(text, ')');
    if (!p || p[1] != ' ' || !p[2])
        return false;
    unsigned long long v[20] = {0}; /* v[i]: field i + 4 */
    p += 2;                         /* past ") " and the state (field 3) */
    while (*p && *p != ' ')
        p++;
    for (int i = 0; i < 19 && *p; i++) {
        char *end;
        v[i] = strtoull(p, &end, 10);
        if (end == p)
            return false;
        p = end;
    }
    *f = (stat_fields){.ppid = (pid_t)v[0], .utime = v[10], .stime = v[11], .cutime = v[12], .cstime = v[13],
                       .start = v[18]};
    return true;
}

/* The pid of the process pidfd refers to, in our namespace: "Pid:" in its fdinfo (Linux 5.3+). */
static pid_t pid_of_pidfd(int pidfd)
{
    char path[64], text[2048];
    snprintf(path, sizeof path, "/proc/self/fdinfo/%d", pidfd);
    if (read_small(path, text, sizeof text) <= 0)
        return 0;
    const char *p = strstr(text, "\nPid:");
    return p ? pid_at(p + 5) : 0;
}

/* The first child of pid: its init has exactly one (the kernel). /proc/<pid>/task/<pid>/children needs
 * CONFIG_PROC_CHILDREN; without it the processes are searched for their parent. */
static pid_t child_of(pid_t pid)
{
    char path[64], text[256];
    snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)pid, (int)pid);
    if (read_small(path, text, sizeof text) > 0 && isdigit((unsigned char)text[0]))
        return pid_at(text);
    DIR *d = opendir("/proc");
    pid_t found = 0;
    struct dirent *e;
    /* readdir on a DIR only this thread uses is safe (glibc); readdir_r is deprecated */
    // cppcheck-suppress readdirCalled
    while (d && !found && (e = readdir(d))) {
        stat_fields f;
        pid_t p = pid_at(e->d_name);
        if (p > 0 && read_stat(p, &f) && f.ppid == pid)
            found = p;
    }
    if (d)
        closedir(d);
    return found;
}

bool fb_kernel_cpu_find(fb_kernel_cpu *cpu, int pidfd)
{
    memset(cpu, 0, sizeof *cpu);
    stat_fields f;
    pid_t init = pidfd >= 0 ? pid_of_pidfd(pidfd) : 0;
    pid_t kernel = init > 0 ? child_of(init) : 0;
    if (kernel <= 0 || !read_stat(kernel, &f) || f.ppid != init)
        return false;
    *cpu = (fb_kernel_cpu){.init = init, .kernel = kernel, .start = f.start};
    return true;
}

double fb_kernel_cpu_ms(const fb_kernel_cpu *cpu)
{
    stat_fields k, i;
    if (cpu->kernel <= 0 || !read_stat(cpu->kernel, &k) || k.start != cpu->start || k.ppid != cpu->init ||
        !read_stat(cpu->init, &i))
        return -1;
    long hz = sysconf(_SC_CLK_TCK);
    unsigned long long ticks = k.utime + k.stime + k.cutime + k.cstime + i.cutime + i.cstime;
    return (double)ticks * 1e3 / (double)(hz > 0 ? hz : 100);
}
