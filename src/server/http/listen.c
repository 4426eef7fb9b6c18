#include "server/http/listen.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static int parse_port(const char *s, char *out, size_t cap, const char *text, fb_error *err)
{
    size_t n = strlen(s);
    unsigned v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9' || n > 5)
            return fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, "--listen '%s': the port must be a number", text);
        v = v * 10 + (unsigned)(s[i] - '0');
    }
    if (n == 0 || v > 65535)
        return fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, "--listen '%s': the port must be 0 to 65535", text);
    snprintf(out, cap, "%u", v);
    return 0;
}

static int parse_unix(const char *text, fb_http_listen_spec *out, fb_error *err)
{
    const char *path = text + 5;
    size_t n = strlen(path);
    if (n == 0)
        return fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, "--listen 'unix:': a socket path is needed (unix:PATH)");
    if (n >= sizeof out->path)
        return fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, "--listen: the socket path is longer than %zu bytes",
                            sizeof out->path - 1);
    out->unix_socket = true;
    memcpy(out->path, path, n + 1);
    return 0;
}

int fb_http_listen_parse(const char *text, fb_http_listen_spec *out, fb_error *err)
{
    memset(out, 0, sizeof *out);
    if (!text || !*text)
        return fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, "--listen: empty (HOST:PORT or unix:PATH)");
    if (strncmp(text, "unix:", 5) == 0)
        return parse_unix(text, out, err);
    const char *host = text, *colon;
    size_t hlen;
    if (text[0] == '[') {
        const char *close = strchr(text, ']');
        if (!close || close[1] != ':')
            return fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, "--listen '%s': expected [IPV6]:PORT", text);
        host = text + 1;
        hlen = (size_t)(close - host);
        colon = close + 1;
    } else {
        colon = strrchr(text, ':');
        if (!colon)
            return fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, "--listen '%s': expected HOST:PORT or unix:PATH", text);
        hlen = (size_t)(colon - text);
        if (memchr(text, ':', hlen))
            return fb_set_error(err, FB_ERR_INVALID_REQUEST, 0,
                                "--listen '%s': an IPv6 address goes in brackets ([::1]:8080)", text);
    }
    if (hlen >= sizeof out->host)
        return fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, "--listen: the host is longer than %zu bytes",
                            sizeof out->host - 1);
    memcpy(out->host, host, hlen);
    out->host[hlen] = '\0';
    return parse_port(colon + 1, out->port, sizeof out->port, text, err);
}

static bool is_loopback(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)(const void *)sa)->sin_addr.s_addr) >> 24) == 127;
    if (sa->sa_family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
        return IN6_IS_ADDR_LOOPBACK(a) || (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
    }
    return false;
}

/* sa points to a sockaddr_storage getsockname filled. */
static void describe(const struct sockaddr *sa, char *buf, size_t cap)
{
    char host[INET6_ADDRSTRLEN] = "?";
    if (sa->sa_family == AF_INET) {
        struct sockaddr_in in;
        memcpy(&in, sa, sizeof in);
        inet_ntop(AF_INET, &in.sin_addr, host, sizeof host);
        snprintf(buf, cap, "%s:%u", host, (unsigned)ntohs(in.sin_port));
    } else {
        struct sockaddr_in6 in6;
        memcpy(&in6, sa, sizeof in6);
        inet_ntop(AF_INET6, &in6.sin6_addr, host, sizeof host);
        snprintf(buf, cap, "[%s]:%u", host, (unsigned)ntohs(in6.sin6_port));
    }
}

static int bind_one(const struct addrinfo *ai)
{
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0)
        return -1;
    int one = 1;
    /* A restart must not wait for the previous run's connections in TIME_WAIT. */
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 ||
        listen(fd, FB_HTTP_LISTEN_BACKLOG) < 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

static int open_tcp(const fb_http_listen_spec *spec, bool require_loopback, fb_http_listener *l, fb_error *err)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
    struct addrinfo *res = NULL;
    int gai = getaddrinfo(spec->host[0] ? spec->host : NULL, spec->port, &hints, &res);
    if (gai != 0)
        return fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, "--listen: cannot resolve '%s': %s", spec->host,
                            gai_strerror(gai));
    int e = 0;
    bool refused = false;
    for (const struct addrinfo *ai = res; ai && l->fd < 0; ai = ai->ai_next) {
        if (require_loopback && !is_loopback(ai->ai_addr)) {
            refused = true;
            continue;
        }
        l->fd = bind_one(ai);
        e = errno;
    }
    freeaddrinfo(res);
    if (l->fd < 0 && refused && e == 0)
        return fb_set_error(err, FB_ERR_INVALID_REQUEST, 0,
                            "--listen %s%s%s:%s is not a loopback address: other hosts could connect and run code, "
                            "so --token-file is required",
                            strchr(spec->host, ':') ? "[" : "", spec->host, strchr(spec->host, ':') ? "]" : "",
                            spec->port);
    if (l->fd < 0)
        return fb_set_error(err, FB_ERR_INTERNAL, e, "cannot listen on %s:%s", spec->host, spec->port);
    struct sockaddr_storage ss = {0};
    socklen_t sl = sizeof ss;
    if (getsockname(l->fd, (struct sockaddr *)&ss, &sl) < 0)
        return fb_set_error(err, FB_ERR_INTERNAL, errno, "getsockname");
    l->loopback = is_loopback((struct sockaddr *)&ss);
    describe((struct sockaddr *)&ss, l->address, sizeof l->address);
    return 0;
}

/* A socket file already at the path: replaced when nothing answers on it (a server that died), an
 * error when something does or when it is not a socket. */
static int clear_stale(const char *path, const struct sockaddr_un *sa, fb_error *err)
{
    struct stat st;
    if (lstat(path, &st) < 0)
        return errno == ENOENT ? 0 : fb_set_error(err, FB_ERR_INVALID_REQUEST, errno, "--listen unix:%s", path);
    if (!S_ISSOCK(st.st_mode))
        return fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, "--listen unix:%s: exists and is not a socket", path);
    int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (probe < 0)
        return fb_set_error(err, FB_ERR_INTERNAL, errno, "socket");
    int rc = connect(probe, (const struct sockaddr *)sa, sizeof *sa);
    int e = errno;
    close(probe);
    if (rc == 0)
        return fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, "--listen unix:%s: a server already answers there", path);
    if (e != ECONNREFUSED)
        return fb_set_error(err, FB_ERR_INVALID_REQUEST, e, "--listen unix:%s", path);
    if (unlink(path) < 0 && errno != ENOENT)
        return fb_set_error(err, FB_ERR_INVALID_REQUEST, errno, "--listen unix:%s: removing the stale socket", path);
    return 0;
}

static int open_unix(const fb_http_listen_spec *spec, fb_http_listener *l, fb_error *err)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    memcpy(sa.sun_path, spec->path, strlen(spec->path) + 1);
    if (clear_stale(spec->path, &sa, err) < 0)
        return -1;
    l->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (l->fd < 0)
        return fb_set_error(err, FB_ERR_INTERNAL, errno, "socket");
    /* 0600 from the start (no window between bind and chmod): only the owner may connect. umask is the
     * process's; this runs at start-up, before any thread exists. */
    mode_t old = umask(0177);
    int rc = bind(l->fd, (const struct sockaddr *)&sa, sizeof sa);
    int e = errno;
    umask(old);
    if (rc < 0)
        return fb_set_error(err, FB_ERR_INVALID_REQUEST, e, "--listen unix:%s", spec->path);
    memcpy(l->path, spec->path, sizeof l->path);
    struct stat st;
    if (lstat(spec->path, &st) == 0) {
        l->dev = st.st_dev;
        l->ino = st.st_ino;
        l->ctime = st.st_ctim;
    }
    if (listen(l->fd, FB_HTTP_LISTEN_BACKLOG) < 0)
        return fb_set_error(err, FB_ERR_INTERNAL, errno, "listen on unix:%s", spec->path);
    l->loopback = true;
    snprintf(l->address, sizeof l->address, "unix:%s", spec->path);
    return 0;
}

int fb_http_listener_open(const fb_http_listen_spec *spec, bool require_loopback, fb_http_listener *l,
                          fb_error *err)
{
    memset(l, 0, sizeof *l);
    l->fd = -1;
    int rc = spec->unix_socket ? open_unix(spec, l, err) : open_tcp(spec, require_loopback, l, err);
    if (rc < 0)
        fb_http_listener_close(l);
    return rc;
}

void fb_http_listener_close(fb_http_listener *l)
{
    if (l->fd >= 0)
        close(l->fd);
    l->fd = -1;
    struct stat st;
    /* Only the file this server made: another one may have replaced it since. */
    if (l->path[0] && lstat(l->path, &st) == 0 && st.st_dev == l->dev && st.st_ino == l->ino &&
        st.st_ctim.tv_sec == l->ctime.tv_sec && st.st_ctim.tv_nsec == l->ctime.tv_nsec)
        unlink(l->path);
    l->path[0] = '\0';
}
