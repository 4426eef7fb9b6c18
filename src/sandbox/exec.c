/* fb_sandbox_exec: the parent's half of running one program in a long-lived sandbox (serve.c has init's
 * half and the picture): send the request with the program's pipes, take a pidfd of its command init,
 * then supervise it as a one-shot sandbox's init is supervised. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox/internal.h"
#include "util/buf.h"
#include "util/fd.h"

#define HANDSHAKE_TIMEOUT_MS 10000 /* for the command init to say "c" (it does so right after the clone) */

typedef struct exec_fds {
    int out[2], err[2], report[2], sock[2], input[2];
    int result, pidfd;
} exec_fds;

static void exec_fds_close(exec_fds *f)
{
    int *all[] = {&f->out[0], &f->out[1], &f->err[0], &f->err[1], &f->report[0], &f->report[1],
                  &f->sock[0], &f->sock[1], &f->input[0], &f->input[1], &f->result, &f->pidfd};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        fb_close(all[i]);
}

/* Takes a caller's own descriptors (fb_sandbox_program.own_io) in place of the pipes we would make. */
static void take_own_fds(exec_fds *f, const fb_sandbox_program *prog)
{
    f->out[1] = prog->own_fds[0];
    f->err[1] = prog->own_fds[1];
    f->result = prog->own_fds[2];
    f->input[0] = prog->own_fds[3];
}

static int exec_fds_open(exec_fds *f, const fb_sandbox_program *prog, fb_error *err)
{
    bool input = prog->input != NULL || prog->input_iov, result = prog->result_bytes > 0;
    if (prog->own_io) {
        take_own_fds(f, prog);
        if (pipe2(f->report, O_CLOEXEC) < 0)
            return fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "pipe2");
        input = result = false;
    }
    if (result && (f->result = memfd_create("fnbox-result", MFD_CLOEXEC)) < 0)
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "memfd_create(result)");
    if ((!prog->own_io && (pipe2(f->out, O_CLOEXEC) < 0 || pipe2(f->err, O_CLOEXEC) < 0 ||
                           pipe2(f->report, O_CLOEXEC) < 0)) ||
        (input && pipe2(f->input, O_CLOEXEC) < 0))
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "pipe2");
    if (input && fcntl(f->input[1], F_SETFL, O_NONBLOCK) < 0)
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "fcntl(O_NONBLOCK)");
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, f->sock) < 0)
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "socketpair");
    int one = 1;
    if (setsockopt(f->sock[1], SOL_SOCKET, SO_PASSCRED, &one, sizeof one) < 0)
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "setsockopt(SO_PASSCRED)");
    return 0;
}

static size_t count(char *const *v)
{
    size_t n = 0;
    while (v && v[n])
        n++;
    return n;
}

/* Lays the request out as serve.c reads it: header, exec_path, cwd, argv, envp. */
static int encode(const fb_sandbox_program *prog, fb_buf *msg, fb_error *err)
{
    size_t argc = count(prog->argv), envc = count(prog->envp);
    if (argc == 0 || !prog->exec_path || prog->exec_path[0] != '/')
        return fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, "a program needs an absolute path and an argv[0]");
    if (argc > FB_SPAWN_MAX_ARGS || envc > FB_SPAWN_MAX_ARGS)
        return fb_set_error(err, FB_ERR_INVALID_REQUEST, E2BIG, "more than %d arguments or environment variables",
                            FB_SPAWN_MAX_ARGS);
    bool input = prog->input || prog->input_iov || prog->own_io, result = prog->result_bytes || prog->own_io;
    fb_spawn_hdr h = {.tag = 'x',
                      .flags = (unsigned char)((input ? FB_SPAWN_STDIN : 0) | (result ? FB_SPAWN_RESULT : 0) |
                                               (prog->input_on_fd4 || prog->own_io ? FB_SPAWN_INPUT4 : 0)),
                      .argc = (unsigned)argc,
                      .envc = (unsigned)envc};
    if (fb_buf_append(msg, &h, sizeof h) < 0 || fb_buf_append(msg, prog->exec_path, strlen(prog->exec_path) + 1) < 0 ||
        fb_buf_append(msg, prog->cwd ? prog->cwd : "", strlen(prog->cwd ? prog->cwd : "") + 1) < 0)
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "encoding a spawn request");
    for (size_t i = 0; i < argc + envc; i++) {
        const char *s = i < argc ? prog->argv[i] : prog->envp[i - argc];
        if (fb_buf_append(msg, s, strlen(s) + 1) < 0)
            return fb_set_error(err, msg->truncated ? FB_ERR_INVALID_REQUEST : FB_ERR_OUT_OF_MEMORY, E2BIG,
                                "the command line and environment are over %zu bytes", FB_SPAWN_MAX_BYTES);
    }
    if (msg->truncated)
        return fb_set_error(err, FB_ERR_INVALID_REQUEST, E2BIG, "the command line and environment are over %zu bytes",
                            FB_SPAWN_MAX_BYTES);
    h.len = (unsigned)(msg->len - sizeof h);
    memcpy(msg->data, &h, sizeof h);
    return 0;
}


/* The command init's "c", with its pid in our namespace (its credentials). 0 when it never came. */
static pid_t await_command_init(int sock)
{
    struct pollfd p = {.fd = sock, .events = POLLIN};
    int n;
    while ((n = poll(&p, 1, HANDSHAKE_TIMEOUT_MS)) < 0 && errno == EINTR)
        ;
    char tag = 0;
    pid_t pid = n > 0 ? fb_sock_recv_pid(sock, &tag) : 0;
    return pid > 0 && tag == 'c' ? pid : 0;
}

/* Sends the request and takes hold of the command init it starts (f->pidfd). */
static int launch(fb_sandbox *sb, const fb_sandbox_program *prog, exec_fds *f, pid_t *init, fb_error *err)
{
    fb_buf msg;
    fb_buf_init(&msg, sizeof(fb_spawn_hdr) + (size_t)FB_SPAWN_MAX_BYTES);
    int rc = encode(prog, &msg, err);
    int fds[FB_SPAWN_FDS] = {f->out[1], f->err[1], f->report[1], f->sock[0]};
    size_t nfds = 4;
    if (prog->input || prog->input_iov || prog->own_io)
        fds[nfds++] = f->input[0];
    if (prog->result_bytes || prog->own_io)
        fds[nfds++] = f->result;
    if (rc == 0)
        rc = fb_sock_send_fds(sb->f.ctl[1], msg.data, msg.len, fds, nfds, err);
    if (rc < 0)
        fb_wrap_error(err, "sending a spawn request to the sandbox");
    fb_buf_free(&msg);
    fb_close(&f->out[1]); /* the command init's now */
    fb_close(&f->err[1]);
    fb_close(&f->report[1]);
    fb_close(&f->sock[0]);
    fb_close(&f->input[0]);
    if (prog->own_io)
        fb_close(&f->result); /* the caller reads its own end */
    if (rc < 0)
        return -1;
    *init = await_command_init(f->sock[1]);
    if (*init <= 0)
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, ECHILD, "the sandbox did not start the program (it is gone?)");
    f->pidfd = (int)syscall(SYS_pidfd_open, *init, 0); /* it waits for our "g": the pid is still its */
    if (f->pidfd < 0)
        return fb_set_error(err, FB_ERR_KERNEL_FEATURE, errno, "pidfd_open (Linux >= 5.3)");
    if (send(f->sock[1], "g", 1, MSG_NOSIGNAL) != 1)
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "releasing the program's init");
    return 0;
}

static void outcome_init(const fb_sandbox *sb, const fb_sandbox_program *prog, fb_sandbox_outcome *out)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < FB_SANDBOX_MAX_SCRATCH; i++)
        out->scratch_fd[i] = -1;
    fb_buf_init(&out->out, prog->output_bytes);
    fb_buf_init(&out->errout, prog->output_bytes);
    fb_buf_init(&out->result, prog->result_bytes);
    out->memory_limit_mechanism = sb->cg.mechanism;
}

int fb_sandbox_exec(fb_sandbox *sb, const fb_sandbox_program *prog, fb_sandbox_outcome *out, fb_error *err)
{
    outcome_init(sb, prog, out);
    /* An OOM kill from here on may be what ends init (watch.c tells the memory limit by it) */
    __atomic_store_n(&sb->oom_seen, fb_cgroup_oom_kills(&sb->cg), __ATOMIC_RELAXED);
    exec_fds f = {{-1, -1}, {-1, -1}, {-1, -1}, {-1, -1}, {-1, -1}, -1, -1};
    pid_t init = -1;
    int rc = -1;
    if (exec_fds_open(&f, prog, err) < 0 || launch(sb, prog, &f, &init, err) < 0)
        goto done;
    if (prog->on_spawned)
        prog->on_spawned(prog->spawned_ctx, f.pidfd);
    fb_sandbox_limits lim = sb->spec->limits;
    lim.timeout_s = prog->timeout_s;
    char report[FB_SANDBOX_MAX_SETUP_MSG] = "";
    int st = -1;
    fb_supervise_io io = {.init_pid = init, .pidfd = f.pidfd, .foreign = true, .out_fd = f.out[0],
                          .err_fd = f.err[0], .report_fd = f.report[0], .cancel_fd = prog->cancel_fd,
                          .started_fd = f.sock[1], .input_fd = &f.input[1], .input = prog->input,
                          .input_len = prog->input_len, .input_iov = prog->input_iov,
                          .input_iovcnt = prog->input_iovcnt, .on_output = prog->on_output,
                          .output_ctx = prog->output_ctx, .exit_fd = -1};
    if (fb_supervise(&io, &lim, out, report, sizeof report, &st, err) < 0)
        goto done;
    if (report[0]) {
        fb_set_error(err, FB_ERR_SANDBOX_SETUP, 0, "the program could not start: %s", report);
        goto done;
    }
    fb_sandbox_decode_status(st, out);
    /* The command's init reports its program's status before it exits; gone without a word, it was killed
     * (the session was shut down under it, or the kernel killed it): not an exit of the program's own. */
    if (st < 0 && !out->timed_out && !out->cancelled)
        out->term_signal = SIGKILL;
    if (f.result >= 0 && (lseek(f.result, 0, SEEK_SET) < 0 || fb_read_all(f.result, &out->result) < 0)) {
        fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "reading the result channel");
        goto done;
    }
    rc = 0;
done:
    if (rc < 0 && f.pidfd >= 0) /* never leave a program running unsupervised */
        (void)syscall(SYS_pidfd_send_signal, f.pidfd, SIGKILL, NULL, 0);
    exec_fds_close(&f);
    return rc;
}
