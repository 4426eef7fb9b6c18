/* What cancels a running execution: its client hanging up, or the server cancelling every call once the
 * drain's grace is over (and, for a streamed answer, the answer going away: stream.c). */
#include <errno.h>
#include <poll.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "server/http/internal.h"

int fb_http_client_fd(const fb_http_exchange *x)
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(x->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    return ci ? ci->connect_fd : -1;
}

/* The peer shut its side (RDHUP), or the socket broke. Unread data alone (a pipelined request) is not a
 * hang-up: only RDHUP, HUP and ERR count. */
bool fb_http_client_gone(void *x)
{
    struct pollfd p = {.fd = fb_http_client_fd(x), .events = POLLRDHUP};
    return p.fd >= 0 && poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL));
}

/* An epoll set, readable when the client hangs up (its socket's RDHUP, HUP or ERR; not its data), when
 * the server cancels every call (the cancel pipe) or when extra_fd is readable. fnbox_call only polls
 * it. One fd per call, owned by the caller. */
int fb_http_cancel_watch(const fb_http_exchange *x, int extra_fd, fb_error *err)
{
    int client = fb_http_client_fd(x);
    int ep = epoll_create1(EPOLL_CLOEXEC);
    if (ep < 0)
        return fb_set_error(err, FB_ERR_INTERNAL, errno, "epoll_create1");
    struct epoll_event hangup = {.events = EPOLLRDHUP, .data.fd = client};
    struct epoll_event stop = {.events = EPOLLIN, .data.fd = x->srv->cancel_pipe[0]};
    struct epoll_event extra = {.events = EPOLLIN, .data.fd = extra_fd};
    if ((client >= 0 && epoll_ctl(ep, EPOLL_CTL_ADD, client, &hangup) < 0) ||
        epoll_ctl(ep, EPOLL_CTL_ADD, x->srv->cancel_pipe[0], &stop) < 0 ||
        (extra_fd >= 0 && epoll_ctl(ep, EPOLL_CTL_ADD, extra_fd, &extra) < 0)) {
        int e = errno;
        close(ep);
        return fb_set_error(err, FB_ERR_INTERNAL, e, "epoll_ctl");
    }
    return ep;
}
