/* Messages on the sandbox's own sockets that carry more than bytes: descriptors (SCM_RIGHTS) one way, the
 * sender's credentials (SCM_CREDENTIALS, on an SO_PASSCRED socket: the kernel gives its pid as seen from
 * the receiver's PID namespace) the other. [child]-safe: no allocation. */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sandbox/internal.h"

#define MAX_FDS 32

int fb_sock_send_fds(int sock, const void *data, size_t len, const int *fds, size_t n, fb_error *err)
{
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE(sizeof(int) * MAX_FDS)];
    } ctl;
    if (n > MAX_FDS)
        return fb_set_error(err, FB_ERR_INTERNAL, E2BIG, "more than %d descriptors in one message", MAX_FDS);
    memset(&ctl, 0, sizeof ctl);
    struct iovec iov = {.iov_base = (void *)data, .iov_len = len};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = n ? ctl.buf : NULL,
                         .msg_controllen = n ? CMSG_SPACE(sizeof(int) * n) : 0};
    if (n) {
        struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(sizeof(int) * n);
        memcpy(CMSG_DATA(cm), fds, sizeof(int) * n);
    }
    ssize_t sent;
    while ((sent = sendmsg(sock, &msg, MSG_NOSIGNAL)) < 0 && errno == EINTR)
        ;
    if (sent != (ssize_t)len)
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, sent < 0 ? errno : EIO, "sendmsg");
    return 0;
}

pid_t fb_sock_recv_pid(int sock, char *tag)
{
    char byte = 0;
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE(sizeof(struct ucred))];
    } ctl;
    struct iovec iov = {.iov_base = &byte, .iov_len = 1};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof ctl.buf};
    ssize_t n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
    if (n <= 0)
        return n == 0 ? 0 : -1;
    if (tag)
        *tag = byte;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS) {
            struct ucred cred;
            memcpy(&cred, CMSG_DATA(c), sizeof cred);
            return cred.pid;
        }
    return -1;
}

/* One one-byte message and the descriptor it carries (-1: none); recvmsg's count. */
static ssize_t recv_tagged(int sock, int flags, char *tag, int *fd)
{
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE(sizeof(int)) + CMSG_SPACE(sizeof(struct ucred))];
    } ctl;
    struct iovec iov = {.iov_base = tag, .iov_len = 1};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof ctl.buf};
    *fd = -1;
    ssize_t n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC | flags);
    if (n != 1)
        return n;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(sizeof(int)))
            memcpy(fd, CMSG_DATA(c), sizeof *fd);
    return n;
}

int fb_sock_recv_fd_now(int sock, char tag)
{
    char byte = 0;
    int fd = -1;
    if (recv_tagged(sock, MSG_DONTWAIT, &byte, &fd) != 1)
        return -1;
    if (fd >= 0 && byte != tag) {
        close(fd);
        fd = -1;
    }
    return fd;
}

int fb_sock_recv_tagged(int sock, char *tag, int *fd)
{
    ssize_t n;
    while ((n = recv_tagged(sock, 0, tag, fd)) < 0 && errno == EINTR)
        ;
    return n == 1 ? 1 : (int)n;
}
