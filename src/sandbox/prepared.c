/* A one-shot sandbox started ahead of its call (a warm pool's, core/pool.c): fb_sandbox_run cut in two.
 *
 *   fb_sandbox_prepare        everything fb_sandbox_run does before the input: the cgroup, init cloned into
 *                             fresh namespaces, the root built, the program (an interpreter's harness,
 *                             inert until its input) started and inside the call's cgroup; then it waits,
 *                             blocked on its fd 4, having run nothing of anyone's
 *   fb_sandbox_run_prepared   the call: the request's files placed, the input written, supervised to the
 *                             end exactly as fb_sandbox_run supervises (deadline from here), the outcome
 *
 * The sandbox serves that one call and is then destroyed: nothing of a call is ever seen by another. The
 * request's files are written here, from the host, through the scratch roots init handed out, which is
 * safe only because nothing but the harness has run in the sandbox yet: no path in it can have been
 * planted (they are still resolved beneath their area, without symlinks). */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/internal.h"
#include "util/defences.h"
#include "util/fd.h"

/* Waits for the program's "started" (it is set up and about to execve) and moves it into the call's
 * cgroup when that is the parent's job; or reads why init failed. */
static int await_started(fb_sandbox *sb, fb_error *err)
{
    struct pollfd p[2] = {{.fd = sb->f.sync[1], .events = POLLIN}, {.fd = sb->f.pidfd, .events = POLLIN}};
    int n;
    while ((n = poll(p, 2, FB_SANDBOX_CREATE_TIMEOUT_S * 1000)) < 0 && errno == EINTR)
        ;
    if (n == 0)
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, ETIMEDOUT, "the prepared sandbox did not start within %d s",
                            FB_SANDBOX_CREATE_TIMEOUT_S);
    pid_t program = (p[0].revents & POLLIN) ? fb_sock_recv_pid(sb->f.sync[1], NULL) : 0;
    if (program > 0) {
        sb->program = program;
        /* the program's own pidfd: init outlives it a moment, and a sandbox whose program died idle must
         * not be handed to a call */
        sb->program_fd = (int)syscall(SYS_pidfd_open, program, 0);
        if (sb->program_fd < 0)
            return fb_set_error(err, FB_ERR_KERNEL_FEATURE, errno, "pidfd_open (Linux >= 5.3)");
        return sb->cg.join == FB_JOIN_PARENT_PROGRAM ? fb_sandbox_join_program(&sb->cg, program, err) : 0;
    }
    char report[FB_SANDBOX_MAX_SETUP_MSG];
    ssize_t len = read(sb->f.report[0], report, sizeof report - 1);
    if (len > 1 && report[0] == 'E') {
        report[len] = '\0';
        char *colon = strstr(report + 1, ": ");
        fb_errkind kind = FB_ERR_NONE;
        if (colon) {
            *colon = '\0';
            kind = fb_errkind_from_name(report + 1);
        }
        return fb_set_error(err, kind != FB_ERR_NONE ? kind : FB_ERR_SANDBOX_SETUP, 0, "sandbox set-up failed: %s",
                            colon ? colon + 2 : report + 1);
    }
    return fb_set_error(err, FB_ERR_SANDBOX_SETUP, 0, "the prepared sandbox's program ended before it started");
}

static bool read_comm(pid_t pid, char comm[17])
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
    if (fb_read_small(path, comm, 17) <= 0)
        return false;
    comm[strcspn(comm, "\n")] = '\0';
    return true;
}

/* Waits until the program has called execve: until then it is still setting itself up (its rlimits,
 * Landlock, seccomp come after "started"), and a call must not begin before that is done (lowering its CPU
 * limit first would make its own setrlimit fail). Its name tells: it is this thread's, which init and the
 * program inherit, until execve gives it the runtime's (the pool names its thread so that they differ). */
static int await_exec(fb_sandbox *sb, fb_error *err)
{
    char ours[17] = "", now[17];
    if (prctl(PR_GET_NAME, ours, 0, 0, 0) < 0 || !ours[0])
        return 0; /* nothing to compare with: the call may then wait for the runtime's start, that is all */
    struct pollfd p = {.fd = sb->f.pidfd, .events = POLLIN};
    for (int waited_ms = 0; waited_ms < FB_SANDBOX_CREATE_TIMEOUT_S * 1000; waited_ms++) {
        if (!read_comm(sb->program, now) || strcmp(now, ours) != 0)
            return 0; /* exec'd (or gone: the next step finds out) */
        if (poll(&p, 1, 1) > 0)
            return fb_set_error(err, FB_ERR_SANDBOX_SETUP, 0, "the prepared sandbox's program ended while it started");
    }
    return fb_set_error(err, FB_ERR_SANDBOX_SETUP, ETIMEDOUT, "the prepared sandbox's program did not start within %d s",
                        FB_SANDBOX_CREATE_TIMEOUT_S);
}


/* Waits (at most IDLE_WAIT_MS) until the runtime has loaded and blocks on its input: asleep, its CPU time
 * unchanged for IDLE_STABLE_MS. Only speed depends on it (a call that comes earlier waits for the
 * runtime's start), so a guess is enough; it keeps a pool from counting a sandbox as ready before it is. */
#define IDLE_WAIT_MS 5000
#define IDLE_STABLE_MS 3
static void await_idle(const fb_sandbox *sb)
{
    double cpu = -1;
    int stable = 0;
    struct pollfd p = {.fd = sb->program_fd, .events = POLLIN};
    for (int waited = 0; waited < IDLE_WAIT_MS && stable < IDLE_STABLE_MS; waited++) {
        if (poll(&p, 1, 1) != 0)
            return; /* gone: fb_sandbox_waiting says so */
        double now = fb_proc_cpu_ms(sb->program);
        stable = fb_proc_state(sb->program) == 'S' && now == cpu ? stable + 1 : 0;
        cpu = now;
    }
}

/* A program whose file comes with its call (spec.program_later): its exit listener ('x', when the kernel
 * made one), then "w": it is set up and waits for the file. */
static int await_waiting(fb_sandbox *sb, fb_error *err)
{
    for (int msg = 0; msg < 2; msg++) {
        struct pollfd p[2] = {{.fd = sb->f.sync[1], .events = POLLIN}, {.fd = sb->f.pidfd, .events = POLLIN}};
        int n;
        while ((n = poll(p, 2, FB_SANDBOX_CREATE_TIMEOUT_S * 1000)) < 0 && errno == EINTR)
            ;
        if (n == 0)
            return fb_set_error(err, FB_ERR_SANDBOX_SETUP, ETIMEDOUT, "the prepared sandbox's program did not start "
                                "within %d s", FB_SANDBOX_CREATE_TIMEOUT_S);
        char tag = 0;
        int fd = -1;
        if (!(p[0].revents & POLLIN) || fb_sock_recv_tagged(sb->f.sync[1], &tag, &fd) != 1)
            break;
        if (tag == 'x' && fd >= 0 && sb->exit_fd < 0) {
            sb->exit_fd = fd;
            continue;
        }
        fb_close(&fd);
        if (tag == 'w')
            return 0;
        break;
    }
    return fb_set_error(err, FB_ERR_SANDBOX_SETUP, 0, "the prepared sandbox's program ended while it started");
}

/* Holds the mount namespaces of the program and of init until the sandbox is destroyed. The last process
 * to leave a mount namespace tears it down on its way out (every mount unmounted, then an RCU grace period),
 * and the call waits for both to be gone: about 0.3 ms each here, on every warm call. Held, that work
 * moves to fb_sandbox_stop, which the pool runs after the answer has gone. Best effort: a namespace that
 * cannot be opened is only torn down the slow way. */
static void hold_namespaces(fb_sandbox *sb)
{
    pid_t pids[2] = {sb->program, sb->pid};
    for (int i = 0; i < 2; i++) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/ns/mnt", (int)pids[i]);
        sb->ns_held[i] = open(path, O_RDONLY | O_CLOEXEC);
    }
}

int fb_sandbox_prepare(const fb_sandbox_spec *spec, fb_sandbox **out, fb_error *err)
{
    *out = NULL;
    if (!spec->inert_until_input || spec->nuser_files || spec->nfuse || spec->proxy_listen || spec->input_on_stdin)
        return fb_set_error(err, FB_ERR_INTERNAL, EINVAL,
                            "a prepared sandbox runs an inert program with no files, mounts or proxy of its own");
    if (spec->program_later && (strncmp(spec->exec_path, "/.fnbox/", 8) != 0 || !spec->exec_path[8] ||
                                strchr(spec->exec_path + 8, '/')))
        return fb_set_error(err, FB_ERR_INTERNAL, EINVAL, "a program that comes with its call is a file of /.fnbox");
    fb_sandbox *sb = malloc(sizeof *sb);
    if (!sb)
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "allocating a sandbox");
    fb_sandbox_struct_init(sb, spec);
    sb->input_later = true;
    fb_sandbox_outcome_init(spec, &sb->setup);
    /* init is a copy of us: its peak RSS, which the call's usage is read from, starts at ours now, which a
     * later call's supervisor could no longer tell (a large request handled meanwhile and freed) */
    uint64_t before = fb_own_rss_bytes();
    int started = fb_sandbox_start(sb, false, &sb->setup, err);
    uint64_t after = fb_own_rss_bytes();
    sb->inherited_rss = before > after ? before : after;
    if (started < 0 || await_started(sb, err) < 0 ||
        (spec->program_later ? await_waiting(sb, err) : await_exec(sb, err)) < 0) {
        fb_sandbox_destroy(sb);
        return -1;
    }
    hold_namespaces(sb);
    if (!spec->program_later) {
        sb->exit_fd = fb_sock_recv_fd_now(sb->f.sync[1], 'x'); /* sent before its execve, which is behind us */
        await_idle(sb);
    }
    sb->prepared = true;
    *out = sb;
    return 0;
}

const fb_sandbox_spec *fb_sandbox_spec_of(const fb_sandbox *sb)
{
    return sb->spec;
}

bool fb_sandbox_waiting(const fb_sandbox *sb)
{
    struct pollfd p[2] = {{.fd = sb->f.pidfd, .events = POLLIN}, {.fd = sb->program_fd, .events = POLLIN}};
    return sb->prepared && sb->pid > 0 && sb->program_fd >= 0 && poll(p, 2, 0) == 0; /* init and program */
}

bool fb_sandbox_can_relimit(const fb_sandbox *sb)
{
    return fb_cgroup_can_relimit(&sb->cg);
}

uint64_t fb_sandbox_memory_now(const fb_sandbox *sb)
{
    return fb_cgroup_read_current(&sb->cg);
}

/* The scratch area a request file lands in: the longest area that is its path's prefix. */
static int area_of(const fb_sandbox_outcome *s, const char *path, const char **rel)
{
    int best = -1;
    size_t best_len = 0;
    for (size_t i = 0; i < s->nscratch; i++) {
        const char *a = s->scratch_path[i];
        size_t len = strcmp(a, "/") == 0 ? 0 : strlen(a);
        if (strncmp(path, a, len) == 0 && path[len] == '/' && (best < 0 || len > best_len)) {
            best = (int)i;
            best_len = len;
        }
    }
    if (best >= 0)
        *rel = path + best_len + 1;
    return best;
}

static int open_beneath(int dirfd, const char *name, int flags, mode_t mode)
{
    struct open_how how = {.flags = (unsigned long long)flags | O_CLOEXEC | O_NOFOLLOW, .mode = mode,
                           .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
    return (int)syscall(SYS_openat2, dirfd, name, &how, sizeof how);
}

/* Writes one request file, its missing parents first (0755), mode 0644 or 0755, as init writes them for a
 * cold call (rootfs.c write_user_files). */
static int place_file(int area_fd, const char *rel, const fb_sandbox_file *f, fb_error *err)
{
    char dir[1024];
    if (snprintf(dir, sizeof dir, "%s", rel) >= (int)sizeof dir)
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, ENAMETOOLONG, "write %s", f->path);
    for (char *p = dir; (p = strchr(p, '/')) != NULL; p++) {
        *p = '\0';
        if (mkdirat(area_fd, dir, 0755) < 0 && errno != EEXIST)
            return fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "mkdir for %s", f->path);
        *p = '/';
    }
    int fd = open_beneath(area_fd, rel, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "write %s", f->path);
    int rc = 0;
    if (fb_write_all(fd, f->data, f->len) < 0 || fchmod(fd, f->executable ? 0755 : 0644) < 0)
        rc = fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "write %s", f->path);
    close(fd);
    return rc;
}

typedef struct fsids {
    int uid, gid;
} fsids;

/* Files are created as the sandbox's user: when fnbox is root, its own ids are not mapped in the sandbox's
 * user namespace, which owns the tmpfs (the kernel refuses to create an inode for an unmapped owner), so
 * this thread's filesystem ids become the user's meanwhile (setfsuid and setfsgid are per thread); the ids
 * it had are returned for restore_fsids. */
static fsids become_sandbox_user(const fb_sandbox *sb)
{
    fsids before = {-1, -1};
    if (sb->idmap.privileged) {
        before.gid = (int)syscall(SYS_setfsgid, sb->idmap.outer_gid);
        before.uid = (int)syscall(SYS_setfsuid, sb->idmap.outer_uid);
    }
    return before;
}

static void restore_fsids(const fb_sandbox *sb, fsids before)
{
    if (sb->idmap.privileged) {
        (void)syscall(SYS_setfsuid, before.uid);
        (void)syscall(SYS_setfsgid, before.gid);
    }
}

static int place_files(const fb_sandbox *sb, const fb_sandbox_file *files, size_t n, fb_error *err)
{
    if (n == 0)
        return 0;
    fsids before = become_sandbox_user(sb);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        const char *rel = NULL;
        int area = area_of(&sb->setup, files[i].path, &rel);
        if (area < 0 || !*rel)
            rc = fb_set_error(err, FB_ERR_SANDBOX_SETUP, EINVAL, "write %s: not in a writable area of the sandbox",
                              files[i].path);
        else
            rc = place_file(sb->setup.scratch_fd[area], rel, &files[i], err);
    }
    restore_fsids(sb, before);
    return rc;
}

/* spec.program_later: the call's program, at exec_path, as init writes a cold call's (0555, read-only for
 * the program: /.fnbox is sealed in its view; written here through the root's own mount). A new file: the
 * program's Landlock ruleset, made after this, names its inode. A clone another thread makes while the
 * file is open holds its write descriptor for a moment: the program retries its execve on ETXTBSY. */
static int place_program(const fb_sandbox *sb, const fb_sandbox_file *prog, fb_error *err)
{
    const char *path = sb->spec->exec_path;
    if (!prog || !prog->len || sb->fnbox_dir_fd < 0)
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, EINVAL, "the prepared sandbox waits for a program (%s)", path);
    fsids before = become_sandbox_user(sb);
    int rc = 0;
    int fd = open_beneath(sb->fnbox_dir_fd, path + 8, O_WRONLY | O_CREAT | O_EXCL, 0500);
    if (fd < 0 || fb_write_all(fd, prog->data, prog->len) < 0 || fchmod(fd, 0555) < 0)
        rc = fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "write %s", path);
    if (fd >= 0)
        close(fd);
    restore_fsids(sb, before);
    return rc;
}

/* spec.program_later: the program's file is there; it finishes its set-up and execs it. */
static int release_program(const fb_sandbox *sb, fb_error *err)
{
    if (send(sb->f.sync[1], "g", 1, MSG_NOSIGNAL) != 1)
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "releasing the prepared program");
    return 0;
}

/* The scratch roots pass from the sandbox to the call's outcome (or stay, closed at destroy). */
static void hand_scratch(fb_sandbox *sb, fb_sandbox_outcome *out)
{
    for (size_t i = 0; i < sb->setup.nscratch; i++) {
        out->scratch_fd[i] = sb->setup.scratch_fd[i];
        out->scratch_path[i] = sb->setup.scratch_path[i];
        sb->setup.scratch_fd[i] = -1;
    }
    out->nscratch = sb->setup.nscratch;
    sb->setup.nscratch = 0;
}

int fb_sandbox_run_prepared(fb_sandbox *sb, const fb_sandbox_call *call, fb_sandbox_outcome *out, fb_error *err)
{
    fb_sandbox_limits lim = sb->spec->limits;
    if (call->memory_bytes)
        lim.memory_bytes = call->memory_bytes;
    if (call->pids)
        lim.pids = call->pids;
    lim.timeout_s = call->timeout_s;
    lim.output_bytes = call->output_bytes;
    lim.result_bytes = call->result_bytes;
    fb_sandbox_spec caps = *sb->spec;
    caps.limits = lim;
    fb_sandbox_outcome_init(&caps, out);
    out->memory_limit_mechanism = sb->cg.mechanism;
    if (!fb_sandbox_waiting(sb)) {
        fb_set_error(err, FB_ERR_SANDBOX_SETUP, ESRCH, "the prepared sandbox is no longer waiting");
        return 1;
    }
    sb->prepared = false; /* one call, whatever happens now */
    if (place_files(sb, call->user_files, call->nuser_files, err) < 0 ||
        (sb->spec->program_later && place_program(sb, call->program, err) < 0))
        return 1;
    if (fb_cgroup_relimit(&sb->cg, &sb->spec->limits, &lim, err) < 0)
        return 1;
    if (call->keep_scratch)
        hand_scratch(sb, out);
    /* as fb_rlimits_apply sets it in a cold call's program */
    struct rlimit cpu = {.rlim_cur = call->cpu_seconds, .rlim_max = call->cpu_seconds + 1};
    if (!fb_defence_disabled("timeout") && prlimit(sb->program, RLIMIT_CPU, &cpu, NULL) < 0) {
        fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "prlimit(CPU) on the prepared program");
        return errno == ESRCH ? 1 : -1; /* it died since: nothing of the call ran */
    }
    /* what init (building the root) and the program (starting) spent before the call: a cold call's
     * usage counts it, but it was not this call's */
    double startup_cpu_ms = fb_proc_cpu_ms(sb->pid) + fb_proc_cpu_ms(sb->program);
    if (sb->spec->program_later && release_program(sb, err) < 0)
        return 1; /* it died meanwhile */
    out->prepared = true;
    fb_early_end early = {.sb = sb, .result_complete = call->result_complete};
    fb_sandbox_oneshot run = {.input = call->input, .input_len = call->input_len, .input_iov = call->input_iov,
                              .input_iovcnt = call->input_iovcnt, .cancel_fd = call->cancel_fd,
                              .limits = &lim, .on_output = call->on_output, .output_ctx = call->output_ctx,
                              .on_input_written = call->on_input_written, .input_ctx = call->input_ctx,
                              .started = true, .inherited_rss = sb->inherited_rss,
                              .ended = call->result_complete ? fb_early_end_ask : NULL,
                              .ended_ctx = &early, .exit_fd = sb->exit_fd, .sample = fb_early_end_sample};
    if (!sb->spec->program_later) /* before its execve, the program's peak is the fork's of ours */
        fb_early_end_sample(&early); /* the runtime started: the pages it holds count as a cold call's would */
    if (fb_sandbox_supervise_one(sb, &run, out, err) < 0)
        return -1;
    if (out->ended_early)
        fb_early_end_usage(&early, out);
    /* the call's CPU time, not the start-up that ran before it was asked for */
    out->cpu_ms = out->cpu_ms > startup_cpu_ms ? out->cpu_ms - startup_cpu_ms : 0;
    return fb_sandbox_read_outcome(sb, out, err);
}
