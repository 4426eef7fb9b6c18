/* Resource limits: a per-call cgroup (memory including tmpfs pages, and pids) where one can be made,
 * and rlimits. The cgroup is emptied (cgroup.kill on v2) and removed when the call ends. RLIMIT_AS would kill Node/V8 (it reserves huge address ranges), so without a cgroup the
 * memory fallback is RLIMIT_DATA, which counts only committed writable private memory. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/internal.h"
#include "util/defences.h"
#include "util/fd.h"

/* How long destroying a call's cgroups waits for its last processes to leave (see remove_dir). */
#define FB_CGROUP_DRAIN_SECONDS 15.0

#define CGROOT "/sys/fs/cgroup"

static int write_text(const char *dir, const char *file, const char *text)
{
    char path[640];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = fb_write_all(fd, text, strlen(text));
    int saved = errno;
    close(fd);
    errno = saved;
    return rc;
}

static int read_u64(const char *dir, const char *file, const char *key, uint64_t *out)
{
    char path[640], buf[4096];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    const char *p = buf;
    if (key) {
        size_t klen = strlen(key);
        for (p = buf; (p = strstr(p, key)) != NULL; p += klen)
            if ((p == buf || p[-1] == '\n') && p[klen] == ' ')
                break;
        if (!p)
            return -1;
        p += klen + 1;
    }
    char *end;
    errno = 0;
    unsigned long long v = strtoull(p, &end, 10);
    if (errno || end == p)
        return -1;
    *out = v;
    return 0;
}

/* Finds our own cgroup path for a v1 controller ("memory") or v2 (controller NULL) in /proc/self/cgroup. */
static int own_cgroup(const char *controller, char *out, size_t cap)
{
    FILE *f = fopen("/proc/self/cgroup", "re");
    if (!f)
        return -1;
    char line[1024];
    int rc = -1;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        char *c1 = strchr(line, ':');
        char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2)
            continue;
        *c2 = '\0';
        const char *ctrls = c1 + 1, *path = c2 + 1;
        bool match = controller ? strcmp(ctrls, controller) == 0 : (strcmp(line, "0") == 0 && *ctrls == '\0');
        if (match) {
            rc = snprintf(out, cap, "%s", strcmp(path, "/") == 0 ? "" : path) < (int)cap ? 0 : -1;
            break;
        }
    }
    fclose(f);
    return rc;
}

/* A new call cgroup under base, named for its maker (fb_cgroup_sweep_orphans reads the name back): PID,
 * a counter and the time make it unique; the PID namespace says whose PID it is. The first one under base
 * sweeps what makers that are gone left there (swept: that base's once-flag). */
static int make_child_dir(const char *base, int *swept, char *out, size_t cap)
{
    static unsigned counter;
    fb_cgroup_sweep_orphans(base, swept);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    int n = snprintf(out, cap, "%s/fnbox-%d-%u-%ld-%lu", base, (int)getpid(),
                     __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED), (long)ts.tv_nsec, fb_cgroup_pidns_id());
    if (n < 0 || (size_t)n >= cap)
        return -1;
    return mkdir(out, 0755);
}

/* v1's `tasks` file of dir, opened for writing now, by us (the kernel checks a migration against the
 * credentials of whoever opened the file, so init can use it from inside its user namespace). */
static int open_tasks(const char *dir)
{
    char path[640];
    snprintf(path, sizeof path, "%s/tasks", dir);
    return open(path, O_WRONLY | O_CLOEXEC);
}

/* v1: how the program gets in (fds for FB_JOIN_PROGRAM_ITSELF when every directory has its `tasks` open). */
static void choose_v1_join(fb_cgroup *cg, bool inert)
{
    const char *dirs[2] = {cg->memory_dir, cg->pids_dir};
    bool all = !fb_defence_disabled("cgroup-early");
    for (int i = 0; i < 2 && all; i++)
        if (dirs[i][0] && (cg->tasks_fd[i] = open_tasks(dirs[i])) < 0)
            all = false;
    if (all) {
        cg->join = FB_JOIN_PROGRAM_ITSELF;
        return;
    }
    for (int i = 0; i < 2; i++)
        fb_close(&cg->tasks_fd[i]);
    cg->join = inert || fb_defence_disabled("cgroup-early") ? FB_JOIN_PARENT_PROGRAM : FB_JOIN_PARENT_INIT;
}

/* Each parent directory is swept once per process (make_child_dir). */
static int swept_memory_v1, swept_pids_v1, swept_v2;

static void try_v1(fb_cgroup *cg, const fb_sandbox_limits *lim, bool inert)
{
    char rel[400], base[512], num[32];
    if (own_cgroup("memory", rel, sizeof rel) == 0) {
        snprintf(base, sizeof base, CGROOT "/memory%s", rel);
        if (make_child_dir(base, &swept_memory_v1, cg->memory_dir, sizeof cg->memory_dir) == 0) {
            snprintf(num, sizeof num, "%" PRIu64, lim->memory_bytes);
            if (write_text(cg->memory_dir, "memory.limit_in_bytes", num) < 0) {
                rmdir(cg->memory_dir);
                cg->memory_dir[0] = '\0';
            } else {
                (void)write_text(cg->memory_dir, "memory.memsw.limit_in_bytes", num); /* absent without swap accounting */
                (void)write_text(cg->memory_dir, "memory.swappiness", "0");
                cg->mechanism = "cgroup v1";
            }
        } else {
            cg->memory_dir[0] = '\0';
        }
    }
    if (own_cgroup("pids", rel, sizeof rel) == 0) {
        snprintf(base, sizeof base, CGROOT "/pids%s", rel);
        if (make_child_dir(base, &swept_pids_v1, cg->pids_dir, sizeof cg->pids_dir) < 0)
            cg->pids_dir[0] = '\0';
    }
    if (!cg->memory_dir[0] && !cg->pids_dir[0])
        return;
    choose_v1_join(cg, inert);
    if (cg->pids_dir[0]) { /* with init inside, it is one more: the program's tree still gets lim->pids */
        snprintf(num, sizeof num, "%" PRIu64, lim->pids + (cg->join == FB_JOIN_PARENT_INIT ? 1 : 0));
        if (write_text(cg->pids_dir, "pids.max", num) < 0) {
            fb_close(&cg->tasks_fd[1]);
            rmdir(cg->pids_dir);
            cg->pids_dir[0] = '\0';
        }
    }
}

/* v2 moves a thread only within its threaded domain (cgroup.threads), so the cheap self-move of v1 does not
 * exist here: the parent moves init (or, for an inert program, the program while it starts). */
static void try_v2(fb_cgroup *cg, const fb_sandbox_limits *lim, bool inert)
{
    char rel[400], base[512], num[32];
    struct stat st;
    if (stat(CGROOT "/cgroup.controllers", &st) < 0 || own_cgroup(NULL, rel, sizeof rel) < 0)
        return;
    snprintf(base, sizeof base, CGROOT "%s", rel);
    char dir[512];
    if (make_child_dir(base, &swept_v2, dir, sizeof dir) < 0)
        return;
    snprintf(num, sizeof num, "%" PRIu64, lim->memory_bytes);
    bool mem = write_text(dir, "memory.max", num) == 0;
    (void)write_text(dir, "memory.swap.max", "0");
    /* An out-of-memory kill takes the whole call, not one process of it (Linux 4.19+): a function whose
     * child was killed would otherwise go on with half its work gone. */
    (void)write_text(dir, "memory.oom.group", "1");
    cg->join = inert || fb_defence_disabled("cgroup-early") ? FB_JOIN_PARENT_PROGRAM : FB_JOIN_PARENT_INIT;
    snprintf(num, sizeof num, "%" PRIu64, lim->pids + (cg->join == FB_JOIN_PARENT_INIT ? 1 : 0));
    bool pids = write_text(dir, "pids.max", num) == 0;
    if (!mem && !pids) {
        rmdir(dir);
        cg->join = FB_JOIN_NONE;
        return;
    }
    cg->v2 = true;
    if (mem) {
        snprintf(cg->memory_dir, sizeof cg->memory_dir, "%s", dir);
        cg->mechanism = "cgroup v2";
    }
    if (pids)
        snprintf(cg->pids_dir, sizeof cg->pids_dir, "%s", dir);
}

int fb_cgroup_create(fb_cgroup *cg, const fb_sandbox_limits *limits, bool inert, fb_error *err)
{
    memset(cg, 0, sizeof *cg);
    cg->mechanism = "rlimit";
    cg->join = FB_JOIN_NONE;
    cg->tasks_fd[0] = cg->tasks_fd[1] = -1;
    fb_sandbox_limits weak = *limits, *lim = &weak; /* test builds: a switched-off limit is set very high */
    if (fb_defence_disabled("memory"))
        weak.memory_bytes = (uint64_t)64 << 30;
    if (fb_defence_disabled("pids"))
        weak.pids = 1u << 22;
    try_v2(cg, lim, inert);
    if (!cg->v2)
        try_v1(cg, lim, inert);
    return 0;
}

int fb_cgroup_join_self(const int tasks_fd[2], fb_error *err)
{
    int rc = 0;
    for (int i = 0; i < 2; i++) {
        /* "0" is the writer itself. Moving one thread that is the caller skips the global
         * cgroup_threadgroup_rwsem, whose write side waits for an RCU grace period (9-15 ms measured
         * here); we are single-threaded (a raw clone), so the thread is the whole process. */
        if (rc == 0 && tasks_fd[i] >= 0 && write(tasks_fd[i], "0", 1) != 1)
            rc = fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "joining the call's cgroup");
        if (tasks_fd[i] >= 0)
            close(tasks_fd[i]);
    }
    return rc;
}

int fb_cgroup_attach(const fb_cgroup *cg, pid_t pid, fb_error *err)
{
    char num[32];
    snprintf(num, sizeof num, "%d", (int)pid);
    const char *dirs[2] = {cg->memory_dir, cg->pids_dir};
    for (int i = 0; i < 2; i++) {
        if (!dirs[i][0] || (i == 1 && cg->v2 && strcmp(dirs[0], dirs[1]) == 0))
            continue;
        if (write_text(dirs[i], "cgroup.procs", num) < 0)
            return fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "joining cgroup %s", dirs[i]);
    }
    return 0;
}

void fb_cgroup_read_stats(const fb_cgroup *cg, uint64_t *peak_bytes, bool *oom_killed, uint64_t *pids_refused)
{
    uint64_t v = 0;
    *oom_killed = false;
    if (pids_refused)
        *pids_refused = 0;
    if (pids_refused && cg->pids_dir[0] && read_u64(cg->pids_dir, "pids.events", "max", &v) == 0)
        *pids_refused = v; /* fork or clone failures at pids.max, threads included (v1 and v2 alike) */
    if (!cg->memory_dir[0])
        return;
    if (cg->v2) {
        if (read_u64(cg->memory_dir, "memory.peak", NULL, &v) == 0)
            *peak_bytes = v;
        if (read_u64(cg->memory_dir, "memory.events", "oom_kill", &v) == 0 && v > 0)
            *oom_killed = true;
    } else {
        if (read_u64(cg->memory_dir, "memory.max_usage_in_bytes", NULL, &v) == 0)
            *peak_bytes = v;
        if (read_u64(cg->memory_dir, "memory.oom_control", "oom_kill", &v) == 0 && v > 0)
            *oom_killed = true;
    }
}

bool fb_cgroup_can_relimit(const fb_cgroup *cg)
{
    return cg->memory_dir[0] && cg->pids_dir[0];
}

/* v1 wants memory.limit_in_bytes <= memory.memsw.limit_in_bytes at every step: raising, memsw goes first. */
static int set_memory_max(const fb_cgroup *cg, uint64_t old_bytes, uint64_t bytes)
{
    char num[32];
    snprintf(num, sizeof num, "%" PRIu64, bytes);
    if (cg->v2)
        return write_text(cg->memory_dir, "memory.max", num);
    if (bytes > old_bytes)
        (void)write_text(cg->memory_dir, "memory.memsw.limit_in_bytes", num); /* absent without swap accounting */
    if (write_text(cg->memory_dir, "memory.limit_in_bytes", num) < 0)
        return -1;
    if (bytes < old_bytes)
        (void)write_text(cg->memory_dir, "memory.memsw.limit_in_bytes", num);
    return 0;
}

int fb_cgroup_relimit(const fb_cgroup *cg, const fb_sandbox_limits *from, const fb_sandbox_limits *to, fb_error *err)
{
    uint64_t v = 0;
    if (to->memory_bytes != from->memory_bytes && !fb_defence_disabled("memory")) {
        if (!cg->memory_dir[0])
            return fb_set_error(err, FB_ERR_SANDBOX_SETUP, ENOTSUP, "no memory cgroup to change the limit in");
        /* The start-up's peak, which the call's peak counts as a cold call's does: over the new limit, a cold
         * call would not have started as this one did (and the kernel would reclaim, or kill the idle program). */
        if (read_u64(cg->memory_dir, cg->v2 ? "memory.peak" : "memory.max_usage_in_bytes", NULL, &v) < 0)
            (void)read_u64(cg->memory_dir, cg->v2 ? "memory.current" : "memory.usage_in_bytes", NULL, &v);
        if (v >= to->memory_bytes)
            return fb_set_error(err, FB_ERR_SANDBOX_SETUP, EBUSY,
                                "the started runtime took %" PRIu64 " bytes, over memoryBytes", v);
        if (set_memory_max(cg, from->memory_bytes, to->memory_bytes) < 0)
            return fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "setting the memory limit");
    }
    if (to->pids != from->pids && !fb_defence_disabled("pids")) {
        if (!cg->pids_dir[0])
            return fb_set_error(err, FB_ERR_SANDBOX_SETUP, ENOTSUP, "no pids cgroup to change the limit in");
        v = 0;
        (void)read_u64(cg->pids_dir, "pids.current", NULL, &v);
        uint64_t max = to->pids + (cg->join == FB_JOIN_PARENT_INIT ? 1 : 0);
        if (v > max) /* the runtime's own threads: a cold start under this limit would have failed */
            return fb_set_error(err, FB_ERR_SANDBOX_SETUP, EBUSY, "the started runtime has %" PRIu64 " tasks, over pids", v);
        char num[32];
        snprintf(num, sizeof num, "%" PRIu64, max);
        if (write_text(cg->pids_dir, "pids.max", num) < 0)
            return fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "setting the pids limit");
    }
    return 0;
}

uint64_t fb_cgroup_read_current(const fb_cgroup *cg)
{
    uint64_t v = 0;
    if (cg->memory_dir[0])
        (void)read_u64(cg->memory_dir, cg->v2 ? "memory.current" : "memory.usage_in_bytes", NULL, &v);
    return v;
}

uint64_t fb_cgroup_oom_kills(const fb_cgroup *cg)
{
    uint64_t v = 0;
    if (cg->memory_dir[0])
        (void)read_u64(cg->memory_dir, cg->v2 ? "memory.events" : "memory.oom_control", "oom_kill", &v);
    return v;
}

int fb_cgroup_peak_open(const fb_cgroup *cg, bool reset)
{
    if (!cg->memory_dir[0])
        return -1;
    if (!cg->v2) {
        /* v1: writing 0 sets the cgroup's peak to its usage now (memory.max_usage_in_bytes) */
        if (reset)
            (void)write_text(cg->memory_dir, "memory.max_usage_in_bytes", "0");
        return -1;
    }
    /* v2 (Linux 6.12+): a write to an open memory.peak resets the peak that file reads, not the others' */
    char path[640];
    snprintf(path, sizeof path, "%s/memory.peak", cg->memory_dir);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd >= 0 && write(fd, "reset\n", 6) != 6)
        fb_close(&fd);
    return fd;
}

uint64_t fb_cgroup_peak_read(const fb_cgroup *cg, int fd)
{
    uint64_t v = 0;
    if (!cg->memory_dir[0])
        return 0;
    if (fd < 0) {
        (void)read_u64(cg->memory_dir, cg->v2 ? "memory.peak" : "memory.max_usage_in_bytes", NULL, &v);
        return v;
    }
    char buf[32];
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    if (n > 0) {
        buf[n] = '\0';
        v = strtoull(buf, NULL, 10);
    }
    return v;
}

/* Kills every process still listed in dir's cgroup.procs (v1 has no cgroup.kill). Each pid is pinned with a
 * pidfd and checked to be listed still after that, so a pid reused by an unrelated process is never hit.
 * Returns how many were listed. */
static int kill_listed(const char *dir)
{
    char path[640], buf[4096];
    snprintf(path, sizeof path, "%s/cgroup.procs", dir);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    int listed = 0;
    for (char *p = buf, *end; *p; p = end) {
        long pid = strtol(p, &end, 10);
        if (end == p)
            break;
        while (*end == '\n')
            end++;
        listed++;
        int pfd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
        if (pfd < 0)
            continue;
        char again[4096];
        int f2 = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t m = f2 >= 0 ? read(f2, again, sizeof again - 1) : -1;
        if (f2 >= 0)
            close(f2);
        char needle[32];
        int len = snprintf(needle, sizeof needle, "%ld\n", pid);
        if (m > 0) {
            again[m] = '\0';
            for (const char *q = again; (q = strstr(q, needle)) != NULL; q += len)
                if (q == again || q[-1] == '\n') {
                    (void)syscall(SYS_pidfd_send_signal, pfd, SIGKILL, NULL, 0);
                    break;
                }
        }
        close(pfd);
    }
    return listed;
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Empties and removes one cgroup. Normally every process is gone already (killing the PID namespace's init
 * kills them all, and fnbox reaped init), but the last ones may still be leaving: a memory-killed process
 * on cgroup v1 was seen listed for 2-4 s after its init was reaped, on a loaded 2-core machine. Kill
 * whatever is left (cgroup.kill on v2, Linux 5.14+; each listed pid on v1), wait until it is empty, remove
 * it. Bounded by `deadline` (shared by the call's cgroups): a cgroup that will not empty by then is left
 * behind rather than hang the call forever. */
static void remove_dir(char *dir, bool v2, double deadline)
{
    if (!dir[0])
        return;
    if (fb_defence_disabled("cgroup-sweep")) { /* test builds: leave whatever is left running */
        (void)rmdir(dir);
        dir[0] = '\0';
        return;
    }
    for (int i = 0; rmdir(dir) < 0 && errno == EBUSY && now_seconds() < deadline; i++) {
        if (i == 2 || i % 50 == 49) { /* not at once: the exiting tasks usually leave within a millisecond */
            if (!v2 || write_text(dir, "cgroup.kill", "1") < 0)
                (void)kill_listed(dir);
        }
        struct timespec ts = {0, i < 20 ? 500000 : 5000000};
        nanosleep(&ts, NULL);
    }
    dir[0] = '\0';
}

void fb_cgroup_destroy(fb_cgroup *cg)
{
    fb_close(&cg->tasks_fd[0]);
    fb_close(&cg->tasks_fd[1]);
    if (cg->v2 && strcmp(cg->memory_dir, cg->pids_dir) == 0)
        cg->pids_dir[0] = '\0';
    double deadline = now_seconds() + FB_CGROUP_DRAIN_SECONDS;
    remove_dir(cg->memory_dir, cg->v2, deadline);
    remove_dir(cg->pids_dir, cg->v2, deadline);
}

static int set_limit(int resource, rlim_t soft, rlim_t hard, const char *name, fb_error *err)
{
    struct rlimit rl = {.rlim_cur = soft, .rlim_max = hard};
    if (setrlimit(resource, &rl) < 0)
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "setrlimit(%s)", name);
    return 0;
}

int fb_rlimits_apply(const fb_sandbox_limits *lim, bool memory_by_cgroup, bool pids_by_cgroup, fb_error *err)
{
    /* by default a backstop: a single-threaded function reaches the wall-clock deadline first */
    rlim_t cpu = lim->cpu_seconds ? (rlim_t)lim->cpu_seconds : (rlim_t)lim->timeout_s + 2;
    if (set_limit(RLIMIT_CORE, 0, 0, "CORE", err) < 0 ||
        set_limit(RLIMIT_NOFILE, lim->nofile, lim->nofile, "NOFILE", err) < 0 ||
        set_limit(RLIMIT_FSIZE, lim->fsize_bytes, lim->fsize_bytes, "FSIZE", err) < 0 ||
        (fb_defence_disabled("timeout") ? 0 /* test builds: no CPU backstop either */
                                        : set_limit(RLIMIT_CPU, cpu, cpu + 1, "CPU", err)) < 0)
        return -1;
    if (!memory_by_cgroup && !fb_defence_disabled("memory") && set_limit(RLIMIT_DATA, lim->memory_bytes, lim->memory_bytes, "DATA", err) < 0)
        return -1;
    /* RLIMIT_NPROC counts every process of the (outer) uid, across concurrent calls: only a fallback. */
    if (!pids_by_cgroup && !fb_defence_disabled("pids") && set_limit(RLIMIT_NPROC, lim->pids * 16, lim->pids * 16, "NPROC", err) < 0)
        return -1;
    return 0;
}
