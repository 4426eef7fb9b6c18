/* Fuzz target: the network proxy's HTTP request-head and SOCKS5 parsers (net/proxy.h), driven as a client
 * drives them: the input is everything one client sends on one connection (then its write side is shut),
 * to a real proxy thread started once. The first byte picks the protocol, as in the proxy (0x05: SOCKS5).
 *
 *   CONNECT 127.0.0.1:8080 HTTP/1.1\r\n\r\nbytes for the tunnel
 *   \x05\x01\x00 \x05\x01\x00\x01 \x7f\x00\x00\x01 \x1f\x90 bytes for the tunnel     (spaces for reading)
 *
 * Where it may (root, or unprivileged user namespaces), the target first moves into a network namespace of
 * its own with only `lo`, so the proxy can be allowed to reach an upstream without reaching this machine's
 * services: the policy allows 127.0.0.1:8080, [::1]:8080, localhost:8080 (resolved from /etc/hosts on a
 * look-up thread) and 127.0.0.1:8081; a sink listens on 8080 (reads to the end, answers a small HTTP
 * response), nothing on 8081 (connection refused). Elsewhere the policy allows nothing, and only the
 * refusals are reached. Checked besides the sanitizers: the proxy closes every connection (no hang); an
 * HTTP reply is empty or starts with "HTTP/1.1 " and a status the proxy or the sink gives; a SOCKS5 reply
 * is empty or starts with version 5 and a method choice of 0 or 0xff, then version 5 and a code 0-8. */
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "fuzz_common.h"

#include "net/proxy.h"

#define SINK_PORT 8080
#define REPLY_WAIT_MS 4000 /* the proxy's own waits are shorter (LINGER 2 s); -timeout is 5 s */

int LLVMFuzzerInitialize(int *argc, char ***argv);

static struct sockaddr_un g_addr;
static socklen_t g_addr_len;

/* Brings lo up in this (new) network namespace. */
static bool lo_up(void)
{
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct ifreq ifr = {0};
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
    bool ok = s >= 0 && ioctl(s, SIOCGIFFLAGS, &ifr) == 0 && ((ifr.ifr_flags |= IFF_UP), ioctl(s, SIOCSIFFLAGS, &ifr) == 0);
    if (s >= 0)
        close(s);
    return ok;
}

/* A network namespace of our own with lo up (first a user namespace if need be). */
static bool own_netns(void)
{
    if (unshare(CLONE_NEWNET) != 0 && unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0)
        return false;
    return lo_up();
}

static int sink_listen(int family)
{
    int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    struct sockaddr_in v4 = {.sin_family = AF_INET, .sin_port = htons(SINK_PORT),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    struct sockaddr_in6 v6 = {.sin6_family = AF_INET6, .sin6_port = htons(SINK_PORT), .sin6_addr = IN6ADDR_LOOPBACK_INIT};
    if (fd < 0)
        return -1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (family == AF_INET6)
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    int rc = family == AF_INET ? bind(fd, (struct sockaddr *)&v4, sizeof v4) : bind(fd, (struct sockaddr *)&v6, sizeof v6);
    if (rc < 0 || listen(fd, 64) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* The upstream: each connection is read to its end (or a pause), answered and closed. */
static void *sink_main(void *arg)
{
    int *fds = arg;
    static const char answer[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
    for (;;) {
        struct pollfd p[2] = {{.fd = fds[0], .events = POLLIN}, {.fd = fds[1], .events = POLLIN}};
        if (poll(p, fds[1] >= 0 ? 2 : 1, -1) < 0)
            continue;
        for (int i = 0; i < 2; i++) {
            if (!(p[i].revents & POLLIN))
                continue;
            int c = accept4(fds[i], NULL, NULL, SOCK_CLOEXEC);
            if (c < 0)
                continue;
            char buf[4096];
            for (;;) {
                struct pollfd q = {.fd = c, .events = POLLIN};
                if (poll(&q, 1, 1000) <= 0 || recv(c, buf, sizeof buf, 0) <= 0)
                    break;
            }
            (void)!send(c, answer, sizeof answer - 1, MSG_NOSIGNAL);
            close(c);
        }
    }
    return NULL;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    static const char *const allow[] = {"127.0.0.1:8080", "[::1]:8080", "localhost:8080", "127.0.0.1:8081"};
    static int sink_fds[2] = {-1, -1};
    bool isolated = own_netns();
    fb_net_policy *policy = NULL;
    fb_error err = {0};
    if (fb_net_policy_from_patterns(false, allow, isolated ? sizeof allow / sizeof allow[0] : 0,
                                    "permissions.network", &policy, &err) < 0)
        abort();
    if (isolated) {
        sink_fds[0] = sink_listen(AF_INET);
        sink_fds[1] = sink_listen(AF_INET6);
        pthread_t t;
        if (sink_fds[0] < 0 || pthread_create(&t, NULL, sink_main, sink_fds) != 0)
            abort();
    } else {
        fprintf(stderr, "fuzz_proxy: no network namespace of its own (%s): the policy allows nothing\n",
                strerror(errno));
    }
    /* the proxy listens on an abstract unix socket: no TCP ports used up by the many client connections */
    int lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    g_addr.sun_family = AF_UNIX;
    int n = snprintf(g_addr.sun_path + 1, sizeof g_addr.sun_path - 1, "fnbox-fuzz-proxy-%d", (int)getpid());
    g_addr_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&g_addr, g_addr_len) < 0 || listen(lfd, 64) < 0)
        abort();
    fb_proxy *proxy = NULL; /* runs until the process ends, as do the policy and the sink */
    if (fb_proxy_start(lfd, policy, &proxy, &err) < 0) {
        fprintf(stderr, "fuzz_proxy: %s\n", err.message);
        abort();
    }
    return 0;
}

/* Reads the reply to its end; its length (at most cap bytes kept). */
static size_t read_reply(int fd, unsigned char *out, size_t cap)
{
    size_t n = 0;
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int r = poll(&p, 1, REPLY_WAIT_MS);
        FUZZ_CHECK(r != 0, "the proxy kept the connection open for %d ms", REPLY_WAIT_MS);
        if (r < 0)
            continue;
        unsigned char sink[4096];
        ssize_t k = recv(fd, n < cap ? out + n : sink, n < cap ? cap - n : sizeof sink, 0);
        if (k <= 0)
            return n; /* the end, or a reset after the proxy's reply */
        n += n < cap ? (size_t)k : 0;
    }
}

static bool http_status_ok(const unsigned char *r, size_t n)
{
    static const char *const statuses[] = {"200", "400", "403", "431", "502", "503", "504"};
    if (n < 12 || memcmp(r, "HTTP/1.1 ", 9) != 0)
        return false;
    for (size_t i = 0; i < sizeof statuses / sizeof statuses[0]; i++)
        if (memcmp(r + 9, statuses[i], 3) == 0)
            return true;
    return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&g_addr, g_addr_len) < 0)
        abort();
    size_t off = 0;
    while (off < size) { /* the proxy reads while we write: a head over its cap is answered early */
        ssize_t k = send(fd, data + off, size - off, MSG_NOSIGNAL);
        if (k <= 0)
            break; /* it answered and closed */
        off += (size_t)k;
    }
    shutdown(fd, SHUT_WR);
    unsigned char reply[64];
    size_t n = read_reply(fd, reply, sizeof reply);
    close(fd);
    if (n == 0 || size == 0)
        return 0;
    if (data[0] == 5) {
        FUZZ_CHECK(reply[0] == 5 && n >= 2 && (reply[1] == 0 || reply[1] == 0xff), "SOCKS5 method reply %02x %02x",
                   reply[0], n >= 2 ? reply[1] : 0);
        if (n >= 4)
            FUZZ_CHECK(reply[1] == 0 && reply[2] == 5 && reply[3] <= 8, "SOCKS5 reply %02x %02x", reply[2], reply[3]);
    } else {
        FUZZ_CHECK(http_status_ok(reply, n), "HTTP reply '%.*s'", (int)(n < 16 ? n : 16), (const char *)reply);
    }
    return 0;
}
