/* fb_sandbox_run: create the call's namespaces, build its root, start the program and supervise it.
 *
 *   parent (fnbox)                          init (PID 1 of the new namespaces)        program
 *   ──────────────                          ──────────────────────────────────        ───────
 *   compile seccomp, make cgroup
 *   clone(NEWUSER|NEWNS|NEWPID|NEWNET|...) ─► wait for "go"
 *   write uid/gid maps, "go"              ─► become inner uid, build root, lo up
 *   [v2, not inert: move init into the       [v2, not inert: wait for "joined"]
 *     call's cgroup, "joined"]
 *                                            fork ───────────────────────────────────► [v1: join the cgroup]
 *   on "started": [v2, inert: move the                                                  "started" (with creds),
 *     program into the call's cgroup],                                                  setsid, fds 0-4,
 *     then stream the input to its fd 4                                                 rlimits, drop caps,
 *                                                                                       seccomp, execve; the
 *   supervise (output, deadline, cancel)     reap; report program's wait status          harness waits for its
 *   reap init => every process is gone  ◄── exit (kernel kills the rest of the ns)      input on fd 4
 *
 * Every process of the call must be inside its cgroup before it runs any of the caller's code: a process
 * forked outside stays outside, with all its children, and a program may run the caller's code before it
 * reads anything (a C constructor, a compiler forking its passes). Moving another process (`cgroup.procs`)
 * takes the global cgroup_threadgroup_rwsem for writing, which waits for an RCU grace period (9-15 ms
 * measured on v1); a single-threaded process moving itself through v1's `tasks` file does not (0.02 ms).
 * So on v1 the program moves itself, first thing after the fork, through `tasks` fds the parent opened
 * (the kernel checks the opener's credentials). v2 has no such move, so there the parent moves init while
 * it builds the root and the program is born inside; only for an interpreter's harness
 * (inert_until_input: the user's code is in its input) does the parent move the program instead, while
 * the runtime starts up, and hold back the input until the move is done, which hides the wait.
 * Failures before execve travel back on a close-on-exec pipe as "E<type>: <message>". */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/internal.h"
#include "util/defences.h"
#include "util/fd.h"
#include "util/mapped.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

#define NS_FLAGS (CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS)


__attribute__((noreturn)) void fb_child_fail(int report_fd, const fb_error *err)
{
    char msg[FB_SANDBOX_MAX_SETUP_MSG];
    int n = snprintf(msg, sizeof msg, "E%s: %s", fb_errkind_name(err->kind), err->message);
    /* with its NUL: when the program fails, init appends the program's wait status ("S<int>") after it */
    if (n > 0)
        (void)fb_write_all(report_fd, msg, (size_t)n < sizeof msg ? (size_t)n + 1 : sizeof msg);
    _exit(127);
}

/* Moves the program's descriptors into place: 0 /dev/null, 1-2 pipes, 3 result, 4 input; or, for a
 * command (input_on_stdin), 0 its input (or /dev/null), 1-2 pipes, and 3 the result channel if it has
 * one. */
static int setup_fds(const fb_child_ctx *c, fb_error *err)
{
    int devnull = -1;
    if (!(c->input_on_stdin && c->input_r >= 0) && (devnull = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0)
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "open /dev/null");
    int src[5] = {devnull, c->out_w, c->err_w, c->result_fd, c->input_r};
    unsigned n = 5;
    if (c->input_on_stdin) {
        src[0] = c->input_r >= 0 ? c->input_r : devnull;
        n = c->result_fd >= 0 ? 4 : 3;
    }
    int high[5];
    for (unsigned i = 0; i < n; i++) { /* first lift every source above the targets to avoid clobbering */
        high[i] = src[i] < 0 ? -1 : fcntl(src[i], F_DUPFD_CLOEXEC, 16);
        if (src[i] >= 0 && high[i] < 0)
            return fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "dup fd %d", src[i]);
    }
    for (unsigned i = 0; i < n; i++)
        if (high[i] >= 0 && dup2(high[i], (int)i) < 0)
            return fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "dup2 to fd %u", i);
    /* Everything else (including fds a library caller leaked without O_CLOEXEC) closes at execve. */
    if (!fb_defence_disabled("fds") && syscall(SYS_close_range, n, ~0U, CLOSE_RANGE_CLOEXEC) < 0)
        return fb_set_error(err, FB_ERR_KERNEL_FEATURE, errno, "close_range");
    return 0;
}

/* Signal dispositions set to "ignore" and blocked masks survive execve: give the program clean ones. */
static void reset_signals(void)
{
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    for (int sig = 1; sig < NSIG; sig++)
        if (sig != SIGKILL && sig != SIGSTOP)
            signal(sig, SIG_DFL);
}

/* Test builds ("env" switch): the call's environment followed by the host's (no allocation: a clone). */
static char *const *with_host_environ(char *const *envp)
{
    static char *merged[4096];
    size_t n = 0;
    for (char *const *p = envp; *p && n < 2048; p++)
        merged[n++] = *p;
    for (char **p = environ; p && *p && n < sizeof merged / sizeof *merged - 1; p++)
        merged[n++] = *p;
    merged[n] = NULL;
    return merged;
}

/* [child] Gives the program back the host's oom_score_adj (init's was lowered so that the cgroup's OOM
 * killer never picks init: see protect_init). Raising it needs no privilege, but our /proc files belong
 * to root while we are non-dumpable like init: dumpable now, as execve would make us anyway (no other
 * process of the call exists yet). What stays is oom_score_adj_min at -1000, so a program could lower
 * itself again by writing the file; Landlock gives it no write right anywhere under /proc. */
static int restore_oom_adj(const fb_child_ctx *c, fb_error *err)
{
    if (!c->oom_restore)
        return 0;
    if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0)
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "prctl(PR_SET_DUMPABLE)");
    char num[16];
    int n = snprintf(num, sizeof num, "%d", c->oom_adj);
    int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write(fd, num, (size_t)n) != n) {
        fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "restoring the program's oom_score_adj");
        if (fd >= 0)
            close(fd);
        return -1;
    }
    close(fd);
    return 0;
}

/* A prepared program hands its exit listener (seccomp.c) to the parent, before the main filter (which has
 * no seccomp() to allow) and its execve. Best effort: without it the call ends on the supervisor's timer. */
static int send_exit_listener(const fb_child_ctx *c)
{
    if (!c->exit_listener)
        return 0;
    int fd = fb_seccomp_exit_listener();
    if (fd < 0)
        return 0;
    fb_error ignored = {0};
    (void)fb_sock_send_fds(c->sync_fd, "x", 1, &fd, 1, &ignored);
    close(fd);
    return 0;
}

/* A prepared program whose file comes with its call (spec.program_later): its exit listener now (its
 * Landlock ruleset cannot be made before the file exists), then "w" (waiting), then it blocks until the
 * parent's "g" (the file is written). Nothing of anyone's has run here: this is fnbox's own code. */
static int await_program_file(const fb_child_ctx *c, fb_error *err)
{
    if (!c->program_later)
        return 0;
    (void)send_exit_listener(c);
    if (send(c->sync_fd, "w", 1, MSG_NOSIGNAL) != 1)
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "announcing the waiting program");
    char go = 0;
    ssize_t n;
    while ((n = recv(c->sync_fd, &go, 1, 0)) < 0 && errno == EINTR)
        ;
    if (n != 1 || go != 'g')
        _exit(126); /* the sandbox is being destroyed unused: nothing to report */
    return 0;
}

/* execve, and for a prepared program whose file the host wrote just before (program_later) again on ETXTBSY:
 * a clone another thread of the host made meanwhile (another sandbox's init, until it closes what it
 * inherited; a fork of an embedding application, until its exec) may hold a copy of the write descriptor for
 * a moment. Returns only on failure, errno set. */
static void exec_program(const fb_child_ctx *c, char *const *envp)
{
    for (int tries = 0; tries < 500; tries++) { /* 0.5 s at most */
        execve(c->exec_path, c->argv, envp);
        if (errno != ETXTBSY || !c->program_later)
            return;
        struct timespec ms = {0, 1000000L};
        nanosleep(&ms, NULL);
    }
}

__attribute__((noreturn)) void fb_program_main(const fb_child_ctx *c)
{
    fb_error err = {0};
    const fb_sandbox_spec *spec = c->spec;
    fb_sandbox_spec landlocked = *spec; /* may execute this program (a spawned one is not spec's) */
    landlocked.exec_path = c->exec_path;
    /* First of all, before anything of the caller's can run (v1; the other ways happen in the parent). */
    if (fb_cgroup_join_self(c->tasks_fd, &err) < 0)
        fb_child_fail(c->report_w, &err);
    reset_signals();
    if (restore_oom_adj(c, &err) < 0)
        fb_child_fail(c->report_w, &err);
    /* Tell the parent we exist; the kernel attaches our credentials, pid included. */
    if (send(c->sync_fd, "p", 1, MSG_NOSIGNAL) != 1)
        fb_set_error(&err, FB_ERR_SANDBOX_SETUP, errno, "announcing the program");
    else if (setsid() < 0)
        fb_set_error(&err, FB_ERR_SANDBOX_SETUP, errno, "setsid");
    else if (c->cwd && chdir(c->cwd) < 0)
        fb_set_error(&err, FB_ERR_SANDBOX_SETUP, errno, "chdir %s", c->cwd);
    else if (fb_userns_lock_mounts(&err) == 0 && fb_rootfs_seal_proc(&err) == 0 && setup_fds(c, &err) == 0 &&
             fb_rlimits_apply(&spec->limits, c->memory_by_cgroup, c->pids_by_cgroup, &err) == 0 &&
             await_program_file(c, &err) == 0 && fb_landlock_apply(&landlocked, &err) == 0 &&
             fb_caps_drop_all(&err) == 0 && (c->program_later || send_exit_listener(c) == 0) &&
             fb_seccomp_load(c->bpf, &err) == 0) {
        exec_program(c, fb_defence_disabled("env") ? with_host_environ(c->envp) : c->envp);
        fb_set_error(&err, FB_ERR_SANDBOX_SETUP, errno, "execve %s", c->exec_path);
    }
    fb_child_fail(c->report_w, &err);
}

/* init is a fork of whatever program called the library: blank out its command line (our copy of it,
 * after fork) so /proc/1/cmdline does not show the host's binary path and arguments. */
static void hide_cmdline(void)
{
    char stat[2048];
    int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = read(fd, stat, sizeof stat - 1);
    close(fd);
    if (n <= 0)
        return;
    stat[n] = '\0';
    char *p = strrchr(stat, ')'); /* the command name may contain spaces and parentheses */
    unsigned long start = 0, end = 0;
    for (int field = 2; p && field < 49; field++) { /* arg_start and arg_end are fields 48 and 49 */
        p = strchr(p + 1, ' ');
        if (p && field == 47)
            start = strtoul(p + 1, NULL, 10);
        if (p && field == 48)
            end = strtoul(p + 1, NULL, 10);
    }
    if (start && end > start + 12) {
        memset((void *)start, 0, end - start);
        memcpy((void *)start, "fnbox-init", 11);
    }
}

/* Opens one /dev/fuse connection per FUSE mount. Done before we take the inner ids: the device is
 * usually root-only, and a connection opened here belongs to our user namespace, as the kernel requires
 * of a FUSE mount made in it. */
static int open_fuse_devices(const fb_sandbox_spec *spec, int *fds, fb_error *err)
{
    if (spec->nfuse > FB_SANDBOX_MAX_FUSE)
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, E2BIG, "more than %d mounts", FB_SANDBOX_MAX_FUSE);
    for (size_t i = 0; i < spec->nfuse; i++) {
        fds[i] = open("/dev/fuse", O_RDWR | O_CLOEXEC);
        if (fds[i] < 0)
            return fb_set_error(err, FB_ERR_KERNEL_FEATURE, errno,
                                "open /dev/fuse (host mounts are served over FUSE: fnbox needs read-write "
                                "access to /dev/fuse; see `fnbox doctor`)");
    }
    return 0;
}

/* FUSE, proxy, scratch roots, /.fnbox (program_later) */
#define MAX_PASSED_FDS (FB_SANDBOX_MAX_FUSE + 1 + FB_SANDBOX_MAX_SCRATCH + 1)


/* Builds the root, passes the mounts' connections, the proxy's socket and the scratch roots out, enters
 * the workdir. */
static int prepare_root(const fb_child_ctx *c, fb_error *err)
{
    const fb_sandbox_spec *spec = c->spec;
    int fds[MAX_PASSED_FDS];
    size_t nscratch = 0, nproxy = spec->proxy_listen ? 1 : 0;
    if (nproxy && fb_netns_proxy_listener(&fds[spec->nfuse], err) < 0)
        return -1;
    if (fb_rootfs_build(spec, c->fuse_fds, fds + spec->nfuse + nproxy, &nscratch, err) < 0)
        return -1;
    memcpy(fds, c->fuse_fds, sizeof(int) * spec->nfuse);
    size_t n = spec->nfuse + nproxy + nscratch;
    /* One message 'f' with the FUSE connections, the proxy's socket, the scratch roots and /.fnbox, in that
     * order. */
    if (n > 0 && fb_sock_send_fds(c->sync_fd, "f", 1, fds, n, err) < 0)
        return fb_wrap_error(err, "handing mounts to the supervisor");
    for (size_t i = 0; i < n; i++)
        close(fds[i]);
    /* A FUSE root starts with owner 0, which has no mapping in our namespace, and the kernel refuses
     * writes to inodes with unmapped owners before asking the server: fetch the real attributes now. */
    for (size_t i = 0; i < spec->nfuse; i++) {
        struct stat st;
        if (stat(spec->fuse_paths[i], &st) < 0)
            return fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "mount %s is not served", spec->fuse_paths[i]);
    }
    return fb_rootfs_enter_cwd(spec, err);
}

/* [child] Closes every descriptor init inherited except its own ends of the call's pipes. init is a
 * clone of the host process, so it starts with all of the host's descriptors: the parent's ends of our
 * pipes, but also other calls' pipes when the host runs calls from several threads (a copy of another
 * call's input write end held here would keep that call's harness from ever seeing EOF, and that call's
 * init could hold ours: a deadlock), and whatever else the host has open. */
static void close_inherited_fds(const fb_child_ctx *c)
{
    if (fb_defence_disabled("fds")) { /* test builds: keep the host's, close only what would hang us */
        for (size_t i = 0; i < sizeof c->parent_ends / sizeof *c->parent_ends; i++)
            close(c->parent_ends[i]);
        return;
    }
    int keep[] = {c->out_w, c->err_w, c->report_w, c->sync_fd, c->result_fd, c->input_r, c->tasks_fd[0],
                  c->tasks_fd[1], c->ctl_fd};
    size_t n = sizeof keep / sizeof *keep;
    for (size_t i = 1; i < n; i++) /* insertion sort: nine entries */
        for (size_t j = i; j > 0 && keep[j - 1] > keep[j]; j--) {
            int t = keep[j];
            keep[j] = keep[j - 1];
            keep[j - 1] = t;
        }
    unsigned first = 0;
    for (size_t i = 0; i < n; i++) {
        if (keep[i] < 0)
            continue;
        if ((unsigned)keep[i] > first)
            (void)syscall(SYS_close_range, first, (unsigned)keep[i] - 1, 0U);
        first = (unsigned)keep[i] + 1;
    }
    (void)syscall(SYS_close_range, first, ~0U, 0U);
}

static __attribute__((noreturn)) void init_main(fb_child_ctx *c)
{
    fb_error err = {0};
    close_inherited_fds(c);
    hide_cmdline();
    char go = 0;
    if (read(c->sync_fd, &go, 1) != 1) /* the parent failed to set us up: it reports why */
        _exit(126);
    if (open_fuse_devices(c->spec, c->fuse_fds, &err) < 0)
        fb_child_fail(c->report_w, &err);
    /* Non-dumpable (only now: the parent needed our /proc files to write the id maps). The program
     * runs as the same uid and could otherwise open /proc/1/mem, take over init and forge its report.
     * execve() makes the program itself dumpable again. */
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0) {
        fb_set_error(&err, FB_ERR_SANDBOX_SETUP, errno, "prctl(PR_SET_DUMPABLE)");
        fb_child_fail(c->report_w, &err);
    }
    if (fb_userns_become_inner(&c->idmap, &err) < 0)
        fb_child_fail(c->report_w, &err);
    /* If fnbox dies (even by SIGKILL), its call dies with it. Set after the credential change, which
     * clears it; the parent keeps its end of the sync socket open until it reaps us, so a hang-up there
     * means it died before the prctl took effect. A long-lived sandbox outlives the thread that made it
     * (the death signal follows the creating thread, not the process): it ends when the control socket
     * reaches EOF instead, which the kernel does when fnbox dies. */
    struct pollfd parent = {.fd = c->sync_fd, .events = POLLRDHUP};
    if ((!c->serve && prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0) || poll(&parent, 1, 0) != 0)
        _exit(126);
    /* Our cgroup namespace's root is fnbox's own cgroup: /proc/self/cgroup inside shows no host path above
     * it, only the call's cgroup below it. */
    if (unshare(CLONE_NEWCGROUP) < 0) {
        fb_set_error(&err, FB_ERR_KERNEL_FEATURE, errno, "unshare(CLONE_NEWCGROUP)");
        fb_child_fail(c->report_w, &err);
    }
    if (sethostname("fnbox", 5) < 0) {
        fb_set_error(&err, FB_ERR_SANDBOX_SETUP, errno, "sethostname");
        fb_child_fail(c->report_w, &err);
    }
    if (prepare_root(c, &err) < 0 || fb_netns_up(&err) < 0)
        fb_child_fail(c->report_w, &err);
    if (c->await_cgroup && (read(c->sync_fd, &go, 1) != 1 || go != 'j'))
        _exit(126); /* the parent could not move us into the call's cgroup: it reports why */
    if (c->serve)
        fb_init_serve(c);
    fb_init_run_program(c);
}

static volatile pid_t g_program; /* [child] the program a command init forwards SIGINT to */

static void forward_signal(int sig)
{
    if (g_program > 0)
        kill(g_program, sig);
}

/* [child] A command init is PID 1 of its namespace, and a PID 1 drops every signal it has no handler for:
 * with this one, a SIGINT sent to it through its pidfd (a session kernel's interrupt) reaches the program. */
static void forward_sigint(pid_t program)
{
    g_program = program;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = forward_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    (void)sigaction(SIGINT, &sa, NULL);
    sigset_t intr; /* we are a clone of a host thread, which may block it (fnbox serve blocks every signal) */
    sigemptyset(&intr);
    sigaddset(&intr, SIGINT);
    sigprocmask(SIG_UNBLOCK, &intr, NULL);
}

/* [child] The init of one program (of a one-shot sandbox, or of a spawned program's own PID namespace):
 * start it, report how it ended, leave nothing behind. */
__attribute__((noreturn)) void fb_init_run_program(const fb_child_ctx *c)
{
    fb_error err = {0};
    /* A raw clone, not fork(): glibc's fork takes every malloc arena lock first, and in this clone of a
     * multithreaded host a lock another host thread held at the moment of our clone stays held forever.
     * Nothing between here and execve allocates. */
    pid_t pid = (pid_t)syscall(SYS_clone, (unsigned long)SIGCHLD, NULL, NULL, NULL, NULL);
    if (pid < 0) {
        fb_set_error(&err, FB_ERR_SANDBOX_SETUP, errno, "fork program");
        fb_child_fail(c->report_w, &err);
    }
    if (pid == 0)
        fb_program_main(c);
    if (c->serve)
        forward_sigint(pid);
    for (int i = 0; i < 2; i++)
        if (c->tasks_fd[i] >= 0)
            close(c->tasks_fd[i]);
    close(c->out_w);
    close(c->err_w);
    close(c->result_fd);
    close(c->sync_fd);
    if (c->input_r >= 0)
        close(c->input_r);
    (void)fb_caps_drop_all(&err); /* init only reaps from now on */
    for (;;) { /* reap everything; orphans are re-parented to us */
        int st;
        pid_t r = waitpid(-1, &st, 0);
        if (r == pid) {
            char msg[1 + sizeof(int)] = {'S'};
            memcpy(msg + 1, &st, sizeof st);
            (void)fb_write_all(c->report_w, msg, sizeof msg);
            break;
        }
        if (r < 0 && errno != EINTR)
            _exit(125);
    }
    /* Kill and reap what the program left behind ourselves (rather than leave it to the kernel when we
     * exit), so that its CPU time is in our children's rusage, which the parent reads. */
    if (!fb_defence_disabled("pidns")) /* test builds without a PID namespace: -1 would be the host */
        kill(-1, SIGKILL);
    while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
        ;
    if (c->serve) { /* a spawned program's init is not the parent's child: its rusage goes in the report */
        struct rusage ru;
        char msg[1 + sizeof ru] = {'U'};
        if (getrusage(RUSAGE_CHILDREN, &ru) == 0) {
            memcpy(msg + 1, &ru, sizeof ru);
            (void)fb_write_all(c->report_w, msg, sizeof msg);
        }
    }
    _exit(0);
}

static void run_fds_close(fb_run_fds *f)
{
    int *all[] = {&f->out[0], &f->out[1], &f->err[0], &f->err[1], &f->report[0], &f->report[1],
                  &f->sync[0], &f->sync[1], &f->input[0], &f->input[1], &f->ctl[0], &f->ctl[1], &f->result,
                  &f->pidfd};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        fb_close(all[i]);
}

static int run_fds_open(fb_run_fds *f, bool serve, fb_error *err)
{
    if (pipe2(f->out, O_CLOEXEC) < 0 || pipe2(f->err, O_CLOEXEC) < 0 || pipe2(f->report, O_CLOEXEC) < 0 ||
        pipe2(f->input, O_CLOEXEC) < 0)
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "pipe2");
    if (fcntl(f->input[1], F_SETFL, O_NONBLOCK) < 0)
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "fcntl(O_NONBLOCK)");
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, f->sync) < 0)
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "socketpair");
    /* A long-lived sandbox's control socket: one spawn request per message, with its descriptors. */
    if (serve && socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, f->ctl) < 0)
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "socketpair(control)");
    int sndbuf = 512 * 1024; /* room for the largest request (best effort: the default is ~208 KiB) */
    if (serve)
        (void)setsockopt(f->ctl[1], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
    int one = 1;
    if (setsockopt(f->sync[1], SOL_SOCKET, SO_PASSCRED, &one, sizeof one) < 0)
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "setsockopt(SO_PASSCRED)");
    f->result = memfd_create("fnbox-result", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (f->result < 0)
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "memfd_create(result)");
    return 0;
}

void fb_sandbox_decode_status(int st, fb_sandbox_outcome *out)
{
    if (st < 0)
        return;
    if (WIFEXITED(st)) {
        out->exited = true;
        out->exit_code = WEXITSTATUS(st);
    } else if (WIFSIGNALED(st)) {
        out->term_signal = WTERMSIG(st);
    }
}

int fb_sandbox_join_program(void *ctx, pid_t program, fb_error *err)
{
    if (fb_cgroup_attach(ctx, program, err) == 0)
        return 0;
    if (err->err_no != ESRCH)
        return -1;
    fb_error_clear(err); /* the program already exited (it never read its input): its status tells */
    return 0;
}

/* Receives init's 'f' message: the FUSE connections (handed to spec->on_fuse, which starts serving them)
 * and the scratch roots (kept in out). If init failed before sending, its report says why: not an error
 * here. */
static int receive_fds(const fb_sandbox_spec *spec, int sock, int pidfd, fb_sandbox_outcome *out, int *fnbox_dir,
                       fb_error *err)
{
    size_t nproxy = spec->proxy_listen ? 1 : 0;
    size_t want = spec->nfuse + nproxy + (spec->keep_scratch ? FB_SANDBOX_MAX_SCRATCH : 0) + spec->program_later;
    if (want == 0)
        return 0;
    struct pollfd p[2] = {{.fd = sock, .events = POLLIN}, {.fd = pidfd, .events = POLLIN}};
    int timeout_ms = (int)(spec->limits.timeout_s * 1000) + 1000;
    if (poll(p, 2, timeout_ms) <= 0 || !(p[0].revents & POLLIN))
        return 0;
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE(sizeof(int) * MAX_PASSED_FDS) + CMSG_SPACE(sizeof(struct ucred))];
    } ctl;
    char byte = 0;
    struct iovec iov = {.iov_base = &byte, .iov_len = 1};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof ctl.buf};
    if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != 1 || byte != 'f')
        return 0;
    int fds[MAX_PASSED_FDS];
    size_t n = 0;
    /* the order in which fb_rootfs_build opens them */
    const char *scratch_paths[FB_SANDBOX_MAX_SCRATCH];
    size_t nareas = fb_sandbox_scratch_areas(spec, scratch_paths);
    for (struct cmsghdr *cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm))
        if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
            n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            if (n > MAX_PASSED_FDS) /* cannot happen: the buffer holds no more (MSG_CTRUNC) */
                n = MAX_PASSED_FDS;
            memcpy(fds, CMSG_DATA(cm), n * sizeof(int));
        }
    int rc = 0;
    if (spec->program_later && n > spec->nfuse + nproxy) /* the last one */
        *fnbox_dir = fds[--n];
    for (size_t i = 0; i < n; i++) {
        if (i < spec->nfuse) {
            if (rc == 0 && spec->on_fuse(spec->fuse_ctx, i, fds[i], err) < 0)
                rc = -1; /* the callee owns fds[i] either way */
            else if (rc < 0)
                close(fds[i]);
        } else if (i < spec->nfuse + nproxy) {
            if (rc == 0 && spec->on_proxy(spec->proxy_ctx, fds[i], err) < 0)
                rc = -1; /* the callee owns fds[i] either way */
            else if (rc < 0)
                close(fds[i]);
        } else if (out->nscratch < nareas) {
            out->scratch_path[out->nscratch] = scratch_paths[out->nscratch];
            out->scratch_fd[out->nscratch++] = fds[i];
        } else {
            close(fds[i]);
        }
    }
    return rc;
}

/* The host's oom_score_adj (what the program gets), or 0. */
static int own_oom_adj(void)
{
    char buf[16] = "";
    if (fb_read_small("/proc/self/oom_score_adj", buf, sizeof buf) <= 0)
        return 0;
    char *end;
    long v = strtol(buf, &end, 10);
    return end != buf && v >= -1000 && v <= 1000 ? (int)v : 0;
}

/* When init is inside the call's cgroup, the cgroup's OOM killer could pick it: init is a copy of the host
 * process, and the host's memory it still maps counts in its RSS (a call with a 50 MB argument gave init
 * ~200 MB), so it looks like the biggest process. Killing init ends the call with no report of the
 * program's fate. -1000 exempts it; the program sets its own back (restore_oom_adj). Best effort: without
 * CAP_SYS_RESOURCE it fails and init stays a candidate, as it is on a host that cannot lower it. */
static bool protect_init(pid_t init)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/oom_score_adj", (int)init);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    bool ok = write(fd, "-1000", 5) == 5;
    close(fd);
    return ok;
}

/* Moves init into the call's cgroup (while it builds the root) and tells it so: everything it forks
 * from then on is born inside. */
static int join_init(const fb_cgroup *cg, pid_t init, int sync_fd, fb_error *err)
{
    if (fb_cgroup_attach(cg, init, err) < 0) {
        if (err->err_no != ESRCH)
            return -1;
        fb_error_clear(err); /* init already failed: its report says why */
        return 0;
    }
    if (send(sync_fd, "j", 1, MSG_NOSIGNAL) != 1)
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "telling the sandbox init it joined its cgroup");
    return 0;
}

/* Parent half after clone: release init into its namespaces, move it into the cgroup, take the mounts'
 * connections and the scratch roots it hands out. */
static int release(fb_sandbox *sb, fb_sandbox_outcome *out, fb_error *err)
{
    const fb_sandbox_spec *spec = sb->spec;
    fb_run_fds *f = &sb->f;
    if (fb_userns_write_maps(sb->pid, &sb->idmap, err) < 0)
        return -1;
    if (sb->cg.join == FB_JOIN_PARENT_INIT)
        (void)protect_init(sb->pid); /* before "go": init forks nothing before it */
    f->pidfd = (int)syscall(SYS_pidfd_open, sb->pid, 0);
    if (f->pidfd < 0)
        return fb_set_error(err, FB_ERR_KERNEL_FEATURE, errno, "pidfd_open (Linux >= 5.3)");
    if (send(f->sync[1], "g", 1, MSG_NOSIGNAL) != 1)
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "releasing the sandbox init");
    fb_close(&sb->cg.tasks_fd[0]); /* init's and the program's now (FB_JOIN_PROGRAM_ITSELF) */
    fb_close(&sb->cg.tasks_fd[1]);
    if (sb->cg.join == FB_JOIN_PARENT_INIT && join_init(&sb->cg, sb->pid, f->sync[1], err) < 0)
        return -1;
    if (!spec->input && !spec->input_iov && !sb->input_later)
        fb_close(&f->input[1]);
    return receive_fds(spec, f->sync[1], f->pidfd, out, &sb->fnbox_dir_fd, err);
}

/* A set-up failure init reported ("<kind>: <message>") as an error. */
static int report_error(char *report, fb_error *err)
{
    char *colon = strstr(report, ": ");
    if (colon)
        *colon = '\0';
    fb_errkind kind = colon ? fb_errkind_from_name(report) : FB_ERR_NONE;
    return fb_set_error(err, kind != FB_ERR_NONE ? kind : FB_ERR_SANDBOX_SETUP, 0, "sandbox set-up failed: %s",
                        colon ? colon + 2 : report);
}

/* One-shot: supervise init's one program to the end, with run's input, deadline, caps and cancel fd. */
int fb_sandbox_supervise_one(fb_sandbox *sb, const fb_sandbox_oneshot *run, fb_sandbox_outcome *out, fb_error *err)
{
    fb_run_fds *f = &sb->f;
    char report[FB_SANDBOX_MAX_SETUP_MSG] = "";
    int st = -1;
    fb_supervise_io io = {.init_pid = sb->pid, .pidfd = f->pidfd, .out_fd = f->out[0], .err_fd = f->err[0],
                          .report_fd = f->report[0], .cancel_fd = run->cancel_fd,
                          .started_fd = run->started ? -1 : f->sync[1], .input_fd = &f->input[1],
                          .input = run->input, .input_len = run->input_len, .input_iov = run->input_iov,
                          .input_iovcnt = run->input_iovcnt,
                          .on_input_written = run->on_input_written, .input_ctx = run->input_ctx,
                          .on_started = sb->cg.join == FB_JOIN_PARENT_PROGRAM ? fb_sandbox_join_program : NULL,
                          .ctx = &sb->cg, .on_output = run->on_output, .output_ctx = run->output_ctx,
                          .inherited_rss = run->inherited_rss, .ended = run->ended, .ended_ctx = run->ended_ctx,
                          .exit_fd = run->ended ? run->exit_fd : -1, .sample = run->ended ? run->sample : NULL};
    int rc = fb_supervise(&io, run->limits, out, report, sizeof report, &st, err);
    if (!out->ended_early)
        sb->pid = -1; /* reaped, even on error; else fb_sandbox_stop kills and reaps it */
    if (rc < 0)
        return -1;
    if (report[0])
        return report_error(report, err);
    fb_sandbox_decode_status(st, out);
    return 0;
}

/* After the one program's end: the peak memory, the larger of the biggest process's RSS and the cgroup's
 * peak (which adds tmpfs and page cache, but starts counting only once the program joined it), whether the
 * memory limit killed it, and its result channel. */
int fb_sandbox_read_outcome(fb_sandbox *sb, fb_sandbox_outcome *out, fb_error *err)
{
    uint64_t cg_peak = 0;
    /* a call that ended early ended with its result, on its own: no error for pids.max to explain */
    fb_cgroup_read_stats(&sb->cg, &cg_peak, &out->oom_killed, out->ended_early ? NULL : &out->pids_refused);
    if (cg_peak > out->peak_memory_bytes)
        out->peak_memory_bytes = cg_peak;
    return fb_sandbox_read_result(sb->f.result, &out->result, err);
}

int fb_sandbox_read_result(int fd, fb_buf *result, fb_error *err)
{
    /* The channel is a file of known size: a large one is mapped, not copied (util/mapped.h); otherwise, or
     * when it cannot be sealed, its buffer is allocated once, not grown by doubling (which holds old and new
     * copies, and leaves freed heap behind, in the largest answers). */
    struct stat st;
    size_t size = fstat(fd, &st) == 0 && st.st_size > 0 ? (size_t)st.st_size : 0;
    if (size >= FB_MAPPED_MIN && size <= result->max && fb_buf_map_sealed(result, fd, size) == 0)
        return 0;
    if (size && fb_buf_reserve(result, size < result->max ? size : result->max) < 0)
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "the result channel (%zu bytes)", size);
    if (lseek(fd, 0, SEEK_SET) < 0 || fb_read_all(fd, result) < 0)
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "reading the result channel");
    return 0;
}

void fb_sandbox_outcome_init(const fb_sandbox_spec *spec, fb_sandbox_outcome *out)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < FB_SANDBOX_MAX_SCRATCH; i++)
        out->scratch_fd[i] = -1;
    size_t output_cap = fb_defence_disabled("output-limit") ? SIZE_MAX : spec->limits.output_bytes;
    fb_buf_init(&out->out, output_cap);
    fb_buf_init(&out->errout, output_cap);
    fb_buf_init(&out->result, spec->limits.result_bytes);
}

/* Makes the cgroup and clones init into fresh namespaces, then releases it (release()). serve: init
 * builds the root and serves spawn requests (serve.c) instead of starting spec's program. */
int fb_sandbox_start(fb_sandbox *sb, bool serve, fb_sandbox_outcome *out, fb_error *err)
{
    const fb_sandbox_spec *spec = sb->spec;
    fb_run_fds *f = &sb->f;
    fb_idmap_choose(&sb->idmap);
    /* Test builds ("cgroup-early" switch): every program joins while it starts, as an interpreter does. */
    /* A program that may fork before its input (exec_any: a compiler's driver starts its passes) is born in
     * its cgroup: moved while it starts, what it forked first would stay outside. */
    if (fb_cgroup_create(&sb->cg, &spec->limits, spec->inert_until_input && !spec->exec_any && !serve, err) < 0)
        return -1;
    out->memory_limit_mechanism = sb->cg.mechanism;
    (void)fb_landlock_abi(NULL); /* probed once per process, here: the children inherit the answer */
    if (fb_seccomp_compile(&sb->bpf, err) < 0 || run_fds_open(f, serve, err) < 0)
        return -1;
    fb_child_ctx c = {.spec = spec, .bpf = &sb->bpf, .idmap = sb->idmap, .memory_by_cgroup = sb->cg.memory_dir[0] != '\0',
                      .pids_by_cgroup = sb->cg.pids_dir[0] != '\0', .await_cgroup = sb->cg.join == FB_JOIN_PARENT_INIT,
                      .tasks_fd = {sb->cg.tasks_fd[0], sb->cg.tasks_fd[1]}, .oom_restore = sb->cg.join == FB_JOIN_PARENT_INIT,
                      .oom_adj = sb->cg.join == FB_JOIN_PARENT_INIT ? own_oom_adj() : 0, .out_w = f->out[1],
                      .err_w = f->err[1], .report_w = f->report[1], .sync_fd = f->sync[0],
                      .result_fd = spec->no_result_fd ? -1 : f->result, .input_on_stdin = spec->input_on_stdin,
                      .input_r = f->input[0], .parent_ends = {f->out[0], f->err[0], f->report[0], f->sync[1], f->input[1]},
                      .exec_path = spec->exec_path, .argv = spec->argv, .envp = spec->envp, .serve = serve,
                      .ctl_fd = f->ctl[0], .exit_listener = sb->input_later && !serve,
                      .program_later = spec->program_later && sb->input_later && !serve};
    unsigned long ns = NS_FLAGS;
    if (fb_defence_disabled("netns")) /* test builds: the host's network */
        ns &= ~(unsigned long)CLONE_NEWNET;
    if (fb_defence_disabled("ipcns"))
        ns &= ~(unsigned long)CLONE_NEWIPC;
    if (fb_defence_disabled("pidns"))
        ns &= ~(unsigned long)CLONE_NEWPID;
    if (fb_defence_disabled("userns")) /* test builds, as root only: the sandbox is host root */
        ns &= ~(unsigned long)CLONE_NEWUSER;
    sb->pid = (pid_t)syscall(SYS_clone, ns | SIGCHLD, NULL, NULL, NULL, NULL);
    if (sb->pid < 0)
        return fb_set_error(err, errno == EPERM || errno == EINVAL || errno == ENOSPC ? FB_ERR_KERNEL_FEATURE
                                                                                      : FB_ERR_SANDBOX_SETUP,
                            errno, "clone with new user, mount, pid, net, ipc and uts namespaces");
    if (sb->pid == 0)
        init_main(&c);
    fb_close(&f->out[1]);
    fb_close(&f->err[1]);
    fb_close(&f->report[1]);
    fb_close(&f->sync[0]);
    fb_close(&f->input[0]);
    fb_close(&f->ctl[0]);
    if (serve) { /* a spawn request brings its own pipes */
        fb_close(&f->out[0]);
        fb_close(&f->err[0]);
        fb_close(&f->input[1]);
        fb_close(&f->result);
    }
    return release(sb, out, err);
}

/* Kills init if it still runs (the kernel kills the rest of its namespace), reaps it, releases the rest. */
void fb_sandbox_stop(fb_sandbox *sb)
{
    fb_close(&sb->f.ctl[1]); /* a serving init exits at this EOF */
    if (sb->pid > 0) {
        kill(sb->pid, SIGKILL);
        while (waitpid(sb->pid, NULL, 0) < 0 && errno == EINTR)
            ;
        sb->pid = -1;
    }
    run_fds_close(&sb->f);
    fb_close(&sb->program_fd);
    fb_close(&sb->ns_held[0]);
    fb_close(&sb->ns_held[1]);
    fb_close(&sb->exit_fd);
    fb_close(&sb->fnbox_dir_fd);
    fb_bpf_free(&sb->bpf);
    fb_cgroup_destroy(&sb->cg);
}

void fb_sandbox_struct_init(fb_sandbox *sb, const fb_sandbox_spec *spec)
{
    memset(sb, 0, sizeof *sb);
    sb->spec = spec;
    sb->pid = -1;
    fb_run_fds none = {{-1, -1}, {-1, -1}, {-1, -1}, {-1, -1}, {-1, -1}, {-1, -1}, -1, -1};
    sb->f = none;
    sb->cg.tasks_fd[0] = sb->cg.tasks_fd[1] = -1;
    sb->root_fd = -1;
    sb->program_fd = -1;
    sb->ns_held[0] = sb->ns_held[1] = -1;
    sb->exit_fd = -1;
    sb->fnbox_dir_fd = -1;
}

int fb_sandbox_run(const fb_sandbox_spec *spec, fb_sandbox_outcome *out, fb_error *err)
{
    fb_sandbox_outcome_init(spec, out);
    fb_sandbox sb;
    fb_sandbox_struct_init(&sb, spec);
    fb_sandbox_oneshot run = {.input = spec->input, .input_len = spec->input_len, .input_iov = spec->input_iov,
                              .input_iovcnt = spec->input_iovcnt, .cancel_fd = spec->cancel_fd,
                              .limits = &spec->limits, .on_output = spec->on_output, .output_ctx = spec->output_ctx,
                              .on_input_written = spec->on_input_written, .input_ctx = spec->input_ctx,
                              .exit_fd = -1};
    int rc = -1;
    if (fb_sandbox_start(&sb, false, out, err) < 0 || fb_sandbox_supervise_one(&sb, &run, out, err) < 0)
        goto done;
    rc = fb_sandbox_read_outcome(&sb, out, err);
done:
    fb_sandbox_stop(&sb); /* after a set-up failure too: init must not outlive us */
    return rc;
}

/* Waits for a serving init's "ready" (its root is built; its root descriptor comes with it) or its set-up
 * failure. */
static int await_ready(fb_sandbox *sb, fb_error *err)
{
    double limit_ms = FB_SANDBOX_CREATE_TIMEOUT_S * 1000.0;
    struct pollfd p[2] = {{.fd = sb->f.ctl[1], .events = POLLIN}, {.fd = sb->f.report[0], .events = POLLIN}};
    int n;
    while ((n = poll(p, 2, (int)limit_ms)) < 0 && errno == EINTR)
        ;
    if (n == 0)
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, ETIMEDOUT, "the sandbox was not ready within %d s",
                            FB_SANDBOX_CREATE_TIMEOUT_S);
    char ready = 0;
    int root = -1;
    if ((p[0].revents & POLLIN) && fb_sock_recv_tagged(sb->f.ctl[1], &ready, &root) == 1 && ready == 'r' &&
        root >= 0) {
        sb->root_fd = root; /* init's root, sent with "ready" (serve.c) */
        return 0;
    }
    if (root >= 0)
        close(root);
    char report[FB_SANDBOX_MAX_SETUP_MSG];
    ssize_t len = read(sb->f.report[0], report, sizeof report - 1);
    if (len > 1 && report[0] == 'E') {
        report[len] = '\0';
        return report_error(report + 1, err);
    }
    return fb_set_error(err, FB_ERR_SANDBOX_SETUP, 0, "the sandbox's init ended during set-up");
}

int fb_sandbox_create(const fb_sandbox_spec *spec, fb_sandbox **out, fb_error *err)
{
    *out = NULL;
    fb_sandbox *sb = malloc(sizeof *sb);
    if (!sb)
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "allocating a sandbox");
    fb_sandbox_struct_init(sb, spec);
    fb_sandbox_outcome_init(spec, &sb->setup);
    if (fb_sandbox_start(sb, true, &sb->setup, err) < 0 || await_ready(sb, err) < 0) {
        fb_sandbox_destroy(sb);
        return -1;
    }
    sb->oom_seen = fb_cgroup_oom_kills(&sb->cg); /* what its set-up cost: not what ends it (watch.c) */
    fb_close(&sb->f.report[0]); /* init's set-up report: nothing more comes on it */
    fb_close(&sb->f.sync[1]);
    *out = sb;
    return 0;
}

void fb_sandbox_destroy(fb_sandbox *sb)
{
    if (!sb)
        return;
    fb_sandbox_stop(sb);
    fb_close(&sb->root_fd);
    fb_sandbox_outcome_free(&sb->setup);
    free(sb);
}

void fb_sandbox_kill(fb_sandbox *sb)
{
    if (sb->pid > 0) /* still our child, unreaped: the pid cannot have been reused */
        kill(sb->pid, SIGKILL);
}

int fb_sandbox_root(const fb_sandbox *sb, fb_sandbox_user *user)
{
    user->uid = sb->idmap.outer_uid;
    user->gid = sb->idmap.outer_gid;
    user->privileged = sb->idmap.privileged;
    return sb->root_fd;
}

const fb_sandbox_outcome *fb_sandbox_scratch(const fb_sandbox *sb)
{
    return &sb->setup;
}

void fb_sandbox_outcome_free(fb_sandbox_outcome *out)
{
    for (size_t i = 0; i < out->nscratch; i++)
        fb_close(&out->scratch_fd[i]);
    out->nscratch = 0;
    fb_buf_free(&out->out);
    fb_buf_free(&out->errout);
    fb_buf_free(&out->result);
}
