/* The init of a long-lived sandbox (fb_sandbox_create): once the root is built, it serves spawn requests
 * from the parent, one per control-socket message, until the parent closes the socket.
 *
 *   parent (fb_sandbox_exec)                 init (PID 1 of the sandbox)       command init            program
 *   ────────────────────────                 ───────────────────────────       ────────────            ───────
 *   pipes + socket; request + fds on ctl  ─► clone(NEWPID) ─────────────────► "c" (with creds) ─┐
 *   pidfd_open(command init), "g"       ◄──────────────────────────────────────────────────────┘
 *                                                                              fork ───────────────────► as in a
 *   supervise (output, deadline, cancel:                                       reap; "S<status>",        one-shot
 *     kill the command init => its whole                                       kill the rest,            sandbox
 *     PID namespace dies); its "U" report                                      "U<rusage>", exit
 *     gives the cpu time
 *
 * init itself runs nothing of the caller's: it only clones. Each program gets a PID namespace of its own
 * with a small init (a fork of ours) as PID 1, so that whatever the program leaves running (a daemon, a
 * background job) dies with it, and one command cannot signal another's processes (it cannot name them).
 * The program is not PID 1 itself: a PID 1 ignores the signals it has no handler for, so `kill -9 $$` in
 * a shell would do nothing. init ignores SIGCHLD, so its children are reaped by the kernel: the parent
 * follows a command init through a pidfd, which it opens while that init waits for "g" (so the pid cannot
 * have been reused), and learns its fate from its report pipe.
 *
 * Like init's other code this runs in a raw clone of a possibly multithreaded host: nothing here may
 * allocate (a malloc lock held by another host thread at the clone stays held forever), hence the static
 * buffers. */
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox/internal.h"
#include "util/defences.h"

static char g_msg[sizeof(fb_spawn_hdr) + (size_t)FB_SPAWN_MAX_BYTES];
static char *g_argv[FB_SPAWN_MAX_ARGS + 1];
static char *g_envp[FB_SPAWN_MAX_ARGS + 1];

typedef struct spawn_req {
    const char *exec_path, *cwd;
    int fds[FB_SPAWN_FDS]; /* -1 where none came */
    size_t nfds;
    bool stdin_pipe, result, input4;
} spawn_req;

/* Points out[0..n) at the next n strings of [*p, end); false if they are not all there. */
static bool take_strings(char **p, const char *end, unsigned n, char **out)
{
    for (unsigned i = 0; i < n; i++) {
        size_t room = (size_t)(end - *p);
        const char *nul = memchr(*p, '\0', room);
        if (!nul)
            return false;
        out[i] = *p;
        *p += (nul - *p) + 1;
    }
    out[n] = NULL;
    return true;
}

/* Checks and decodes one request of len bytes in g_msg. */
static bool parse_request(size_t len, spawn_req *r)
{
    fb_spawn_hdr h;
    if (len < sizeof h)
        return false;
    memcpy(&h, g_msg, sizeof h);
    if (h.tag != 'x' || h.argc == 0 || h.argc > FB_SPAWN_MAX_ARGS || h.envc > FB_SPAWN_MAX_ARGS ||
        h.len != len - sizeof h ||
        r->nfds != 4U + (h.flags & FB_SPAWN_STDIN ? 1U : 0U) + (h.flags & FB_SPAWN_RESULT ? 1U : 0U))
        return false;
    char *p = g_msg + sizeof h, *end = g_msg + len, *head[3];
    if (!take_strings(&p, end, 2, head) || !take_strings(&p, end, h.argc, g_argv) ||
        !take_strings(&p, end, h.envc, g_envp) || p != end || head[0][0] != '/')
        return false;
    r->exec_path = head[0];
    r->cwd = head[1][0] ? head[1] : NULL;
    r->stdin_pipe = (h.flags & FB_SPAWN_STDIN) != 0;
    r->result = (h.flags & FB_SPAWN_RESULT) != 0;
    r->input4 = (h.flags & FB_SPAWN_INPUT4) != 0;
    return true;
}

/* Receives one request with its descriptors. Returns its length, 0 at EOF (the parent is gone or done),
 * -1 on error. */
static ssize_t receive(int ctl, spawn_req *r)
{
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE(sizeof(int) * FB_SPAWN_FDS)];
    } ctl_buf;
    struct iovec iov = {.iov_base = g_msg, .iov_len = sizeof g_msg};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl_buf.buf,
                         .msg_controllen = sizeof ctl_buf.buf};
    ssize_t n;
    while ((n = recvmsg(ctl, &msg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
        ;
    r->nfds = 0;
    for (int i = 0; i < FB_SPAWN_FDS; i++)
        r->fds[i] = -1;
    for (struct cmsghdr *cm = n > 0 ? CMSG_FIRSTHDR(&msg) : NULL; cm; cm = CMSG_NXTHDR(&msg, cm))
        if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
            size_t k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            r->nfds = k > FB_SPAWN_FDS ? FB_SPAWN_FDS : k;
            memcpy(r->fds, CMSG_DATA(cm), r->nfds * sizeof(int));
        }
    if (n > 0 && (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)))
        r->nfds = 0; /* refused below; the parent sees its command socket close */
    return n;
}

static void close_request(spawn_req *r)
{
    for (int i = 0; i < FB_SPAWN_FDS; i++)
        if (r->fds[i] >= 0)
            close(r->fds[i]);
}

/* Moves *fd to 16 or above: what we received may sit on 0-4 (init closed the host's descriptors), where
 * the program's stdio goes, and a dup2 there would replace it. */
static void lift(int *fd)
{
    if (*fd < 0 || *fd >= 16)
        return;
    int high = fcntl(*fd, F_DUPFD_CLOEXEC, 16);
    if (high < 0)
        _exit(126);
    close(*fd);
    *fd = high;
}

/* [command init] PID 1 of the program's own namespace: say who we are, wait for the parent's "g" (it has
 * a pidfd of us by then), then run the program as a one-shot init does. */
static __attribute__((noreturn)) void command_init(const fb_child_ctx *sandbox, const spawn_req *r)
{
    fb_child_ctx c = *sandbox;
    c.out_w = r->fds[0];
    c.err_w = r->fds[1];
    c.report_w = r->fds[2];
    c.sync_fd = r->fds[3];
    c.input_r = r->stdin_pipe ? r->fds[4] : -1;
    c.result_fd = r->result ? r->fds[r->stdin_pipe ? 5 : 4] : -1;
    c.exec_path = r->exec_path;
    c.argv = g_argv;
    c.envp = g_envp;
    c.cwd = r->cwd;
    c.input_on_stdin = !r->input4; /* a harness reads its input on fd 4, as in a one-shot sandbox */
    int *mine[] = {&c.out_w,    &c.err_w,       &c.report_w,     &c.sync_fd,
                   &c.input_r,  &c.result_fd, &c.tasks_fd[0], &c.tasks_fd[1]};
    for (size_t i = 0; i < sizeof mine / sizeof *mine; i++)
        lift(mine[i]);
    close(sandbox->ctl_fd);
    signal(SIGCHLD, SIG_DFL); /* we wait for our program */
    char go = 0;
    if (send(c.sync_fd, "c", 1, MSG_NOSIGNAL) != 1 || read(c.sync_fd, &go, 1) != 1 || go != 'g')
        _exit(126);
    fb_error err = {0};
    if (fb_rootfs_fresh_proc(&err) < 0)
        fb_child_fail(c.report_w, &err);
    fb_init_run_program(&c);
}

/* Says "ready" with our root attached, an O_PATH descriptor the parent keeps for the session's file
 * operations (fb_sandbox_root). The parent cannot open /proc/<init>/root for itself unless it has
 * CAP_SYS_PTRACE: we are non-dumpable (spawn.c), and the kernel then lets only a holder of that capability
 * in our mm's user namespace (the host's: we are a clone, not an exec) reach our root, so an unprivileged
 * fnbox got EACCES there (issue 29). The descriptor goes outwards only: nothing inside gains anything. */
static void send_ready(const fb_child_ctx *c)
{
    fb_error err = {0};
    int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (root < 0) {
        fb_set_error(&err, FB_ERR_SANDBOX_SETUP, errno, "open / (the sandbox's root, for the parent)");
        fb_child_fail(c->report_w, &err);
    }
    if (fb_sock_send_fds(c->ctl_fd, "r", 1, &root, 1, &err) < 0)
        _exit(126); /* the parent is gone or gave up on us */
    close(root);
}

__attribute__((noreturn)) void fb_init_serve(fb_child_ctx *c)
{
    /* The one-shot program's pipes are not used here: each request brings its own. */
    int unused[] = {c->out_w, c->err_w, c->result_fd, c->input_r, c->sync_fd};
    for (size_t i = 0; i < sizeof unused / sizeof *unused; i++)
        if (unused[i] >= 0)
            close(unused[i]);
    c->out_w = c->err_w = c->result_fd = c->input_r = c->sync_fd = -1;
    signal(SIGCHLD, SIG_IGN); /* the kernel reaps our command inits */
    unsigned long flags = CLONE_NEWPID;
    if (fb_defence_disabled("pidns")) /* test builds: no PID namespace of its own (kill -1 is skipped too) */
        flags = 0;
    send_ready(c);
    close(c->report_w); /* set-up is over: nothing more to report */
    c->report_w = -1;
    for (;;) {
        spawn_req r;
        ssize_t n = receive(c->ctl_fd, &r);
        if (n <= 0)
            _exit(0); /* EOF: the sandbox is destroyed (or fnbox died); the kernel kills the rest */
        if (!parse_request((size_t)n, &r)) {
            close_request(&r);
            continue;
        }
        pid_t pid = (pid_t)syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, NULL);
        if (pid == 0)
            command_init(c, &r);
        close_request(&r); /* on failure too: the parent sees its command socket close */
    }
}
