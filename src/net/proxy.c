/* The call's network proxy (net/proxy.h, docs/internals/network.md).
 *
 * One thread, one poll loop over: an eventfd (stop requests and finished name look-ups), the listening
 * socket (inside the sandbox's network namespace) and two sockets per connection. A connection goes
 *   HEAD (HTTP request head, or SOCKS5 greeting) [-> SOCKS_REQ] -> RESOLVING -> CONNECTING -> RELAY
 * or, when refused or failed, -> CLOSING (flush our reply) -> LINGER (discard input until EOF, so that
 * close() does not reset the connection before the client read the reply) -> closed.
 * getaddrinfo blocks and cannot be cancelled, so each look-up runs on a detached thread that owns half
 * of a reference-counted job: a look-up still running when the proxy stops finishes on its own and frees
 * the job; nothing waits for it. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "net/proxy.h"

#define PROXY_URL_HOSTPORT "127.0.0.1:3128"
_Static_assert(FB_PROXY_PORT == 3128, "PROXY_URL_HOSTPORT names FB_PROXY_PORT");
#define LINGER_MS 2000
#define REASON_MAX 320
#define ACCEPTS_PER_ROUND 16

const char *const fb_proxy_env[] = {
    "HTTP_PROXY=http://" PROXY_URL_HOSTPORT, "HTTPS_PROXY=http://" PROXY_URL_HOSTPORT,
    "http_proxy=http://" PROXY_URL_HOSTPORT, "https_proxy=http://" PROXY_URL_HOSTPORT,
    "ALL_PROXY=socks5h://" PROXY_URL_HOSTPORT, "all_proxy=socks5h://" PROXY_URL_HOSTPORT,
    "NO_PROXY=", "no_proxy=", NULL,
};

typedef enum conn_state { ST_HEAD, ST_SOCKS_REQ, ST_RESOLVING, ST_CONNECTING, ST_RELAY, ST_CLOSING, ST_LINGER,
                          ST_DONE } conn_state;
typedef enum proto { PROTO_NONE, PROTO_HTTP, PROTO_CONNECT, PROTO_SOCKS5 } proto;
static const char *const k_proto_names[] = {NULL, "http", "connect", "socks5"};

typedef struct dir_buf {
    char data[FB_PROXY_BUF_BYTES];
    size_t off, len; /* pending bytes are data[off .. off+len) */
    bool eof;        /* the source ended */
    bool shut;       /* ... and everything was passed on, the sink's write side shut down */
} dir_buf;

typedef struct resolve_job {
    pthread_mutex_t mu;
    int refs;        /* the resolver thread's and the connection's */
    bool done;
    int rc;
    struct addrinfo *res;
    int notify_fd;   /* a dup of the proxy's eventfd, owned by the job */
    char host[FB_NET_MAX_HOST + 1];
    char port[8];
} resolve_job;

typedef struct log_entry {
    proto proto;
    char host[FB_NET_MAX_HOST + 1];
    uint16_t port;
    char address[INET6_ADDRSTRLEN];
    bool allowed;
    char reason[REASON_MAX];
    char error[REASON_MAX];
    uint64_t up, down;
} log_entry;

typedef struct conn {
    conn_state state;
    proto proto;
    int client, server;
    dir_buf up;      /* client -> server (during HEAD: the request head being read) */
    dir_buf down;    /* server -> client, and our own replies */
    char host[FB_NET_MAX_HOST + 1];
    uint16_t port;
    resolve_job *job;
    struct sockaddr_storage addrs[FB_PROXY_MAX_ADDRS];
    socklen_t addrlen[FB_PROXY_MAX_ADDRS];
    size_t naddrs, next;
    char allow_reason[REASON_MAX];
    char last_error[REASON_MAX];
    double deadline;  /* CONNECTING / LINGER */
    uint64_t bytes_up, bytes_down;
    long log;         /* index into the log, -1 if none */
} conn;

struct fb_proxy {
    const fb_net_policy *policy;
    fb_proxy_check check;
    void *check_ctx;
    int listen_fd, event_fd;
    pthread_t thread;
    bool running;
    atomic_bool stop;
    conn *conns[FB_PROXY_MAX_CONNS];
    size_t nconns;
    log_entry *log;
    size_t nlog, log_cap, dropped;
};

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void addr_text(const struct sockaddr *sa, char *out, size_t cap)
{
    const void *raw = sa->sa_family == AF_INET ? (const void *)&((const struct sockaddr_in *)(const void *)sa)->sin_addr
                                               : (const void *)&((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
    if (!inet_ntop(sa->sa_family, raw, out, (socklen_t)cap))
        snprintf(out, cap, "?");
}

/* ---- the log ---- */

static long log_add(fb_proxy *p, const conn *c, const char *address, bool allowed, const char *reason)
{
    if (p->nlog >= FB_PROXY_MAX_LOG) {
        p->dropped++;
        return -1;
    }
    if (p->nlog == p->log_cap) {
        size_t cap = p->log_cap ? p->log_cap * 2 : 16;
        log_entry *grown = realloc(p->log, cap * sizeof *grown);
        if (!grown) {
            p->dropped++;
            return -1;
        }
        p->log = grown;
        p->log_cap = cap;
    }
    log_entry *e = &p->log[p->nlog];
    memset(e, 0, sizeof *e);
    e->proto = c ? c->proto : PROTO_NONE;
    if (c) {
        snprintf(e->host, sizeof e->host, "%s", c->host);
        for (char *h = e->host; *h; h++) /* a SOCKS5 name may hold any byte; the log is JSON text */
            if ((unsigned char)*h < 0x20 || (unsigned char)*h >= 0x7f)
                *h = '?';
        e->port = c->port;
    }
    snprintf(e->address, sizeof e->address, "%s", address ? address : "");
    e->allowed = allowed;
    snprintf(e->reason, sizeof e->reason, "%s", reason);
    return (long)p->nlog++;
}

/* ---- name look-ups ---- */

static void job_release(resolve_job *j)
{
    pthread_mutex_lock(&j->mu);
    bool last = --j->refs == 0;
    pthread_mutex_unlock(&j->mu);
    if (!last)
        return;
    if (j->res)
        freeaddrinfo(j->res);
    close(j->notify_fd);
    pthread_mutex_destroy(&j->mu);
    free(j);
}

static void *resolve_main(void *arg)
{
    resolve_job *j = arg;
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV};
    struct addrinfo *res = NULL;
    int rc = getaddrinfo(j->host, j->port, &hints, &res);
    pthread_mutex_lock(&j->mu);
    j->rc = rc;
    j->res = rc == 0 ? res : NULL;
    j->done = true;
    uint64_t one = 1;
    (void)!write(j->notify_fd, &one, sizeof one);
    pthread_mutex_unlock(&j->mu);
    job_release(j);
    return NULL;
}

static resolve_job *job_start(const fb_proxy *p, const char *host, uint16_t port)
{
    resolve_job *j = calloc(1, sizeof *j);
    if (!j)
        return NULL;
    j->notify_fd = fcntl(p->event_fd, F_DUPFD_CLOEXEC, 3);
    if (j->notify_fd < 0) {
        free(j);
        return NULL;
    }
    pthread_mutex_init(&j->mu, NULL);
    j->refs = 2;
    snprintf(j->host, sizeof j->host, "%s", host);
    snprintf(j->port, sizeof j->port, "%u", (unsigned)port);
    pthread_attr_t attr;
    pthread_t t;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&t, &attr, resolve_main, j);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        j->refs = 1;
        job_release(j);
        return NULL;
    }
    return j;
}

/* ---- buffers ---- */

/* Reads what fits (at most limit bytes pending). >0 read, 0 EOF, -1 error, -2 nothing now. */
static ssize_t fill(int fd, dir_buf *b, size_t limit)
{
    if (b->off > 0 && b->off + b->len == sizeof b->data) {
        memmove(b->data, b->data + b->off, b->len);
        b->off = 0;
    }
    size_t lim = limit < sizeof b->data ? limit : sizeof b->data;
    if (b->off + b->len >= lim)
        return -2;
    size_t room = lim - (b->off + b->len);
    ssize_t n = recv(fd, b->data + b->off + b->len, room, MSG_DONTWAIT);
    if (n > 0)
        b->len += (size_t)n;
    if (n < 0)
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? -2 : -1;
    return n;
}

/* Writes what the socket takes. >=0 written, -1 error. */
static ssize_t drain(int fd, dir_buf *b)
{
    size_t total = 0;
    while (b->len > 0) {
        ssize_t n = send(fd, b->data + b->off, b->len, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
                break;
            return -1;
        }
        b->off += (size_t)n;
        b->len -= (size_t)n;
        total += (size_t)n;
    }
    if (b->len == 0)
        b->off = 0;
    return (ssize_t)total;
}

static void put(dir_buf *b, const void *data, size_t n)
{
    if (b->off + b->len + n > sizeof b->data) {
        memmove(b->data, b->data + b->off, b->len);
        b->off = 0;
    }
    if (b->len + n > sizeof b->data)
        n = sizeof b->data - b->len;
    memcpy(b->data + b->off + b->len, data, n);
    b->len += n;
}

static void consume(dir_buf *b, size_t n)
{
    memmove(b->data + b->off, b->data + b->off + n, b->len - n);
    b->len -= n;
}

/* ---- connection life ---- */

static void conn_close(fb_proxy *p, conn *c)
{
    if (c->client >= 0)
        close(c->client);
    if (c->server >= 0)
        close(c->server);
    c->client = c->server = -1;
    if (c->job) {
        job_release(c->job);
        c->job = NULL;
    }
    if (c->log >= 0) {
        p->log[c->log].up = c->bytes_up;
        p->log[c->log].down = c->bytes_down;
    }
    c->state = ST_DONE;
}

/* Sends our reply (an HTTP status with the reason, or a SOCKS5 reply code), then closes. */
static void reply_fail(conn *c, int http_status, unsigned char socks_rep, const char *reason)
{
    if (c->proto == PROTO_SOCKS5) {
        unsigned char r[10] = {5, socks_rep, 0, 1, 0, 0, 0, 0, 0, 0};
        put(&c->down, r, sizeof r);
    } else {
        const char *text = http_status == 403 ? "Forbidden" : http_status == 400 ? "Bad Request"
                         : http_status == 431 ? "Request Header Fields Too Large" : http_status == 504 ? "Gateway Timeout"
                         : http_status == 503 ? "Service Unavailable" : "Bad Gateway";
        char body[REASON_MAX + 32];
        int blen = snprintf(body, sizeof body, "fnbox proxy: %s\n", reason);
        char head[256];
        int hlen = snprintf(head, sizeof head,
                            "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\n"
                            "Connection: close\r\n\r\n", http_status, text, blen);
        put(&c->down, head, (size_t)hlen);
        put(&c->down, body, (size_t)blen);
    }
    if (c->server >= 0) {
        close(c->server);
        c->server = -1;
    }
    c->state = ST_CLOSING;
}

static void refuse(fb_proxy *p, conn *c, const char *address, const char *reason)
{
    c->log = log_add(p, c, address, false, reason);
    reply_fail(c, 403, 2 /* connection not allowed by ruleset */, reason);
}

static void try_connect(fb_proxy *p, conn *c);

static void connected(fb_proxy *p, conn *c)
{
    char addr[INET6_ADDRSTRLEN];
    addr_text((const struct sockaddr *)&c->addrs[c->next], addr, sizeof addr);
    c->log = log_add(p, c, addr, true, c->allow_reason);
    c->state = ST_RELAY;
    if (c->proto == PROTO_CONNECT) {
        static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
        put(&c->down, ok, sizeof ok - 1);
    } else if (c->proto == PROTO_SOCKS5) {
        unsigned char r[10] = {5, 0, 0, 1, 0, 0, 0, 0, 0, 0};
        put(&c->down, r, sizeof r);
    }
}

static void connect_failed(fb_proxy *p, conn *c, int e)
{
    char addr[INET6_ADDRSTRLEN];
    addr_text((const struct sockaddr *)&c->addrs[c->next], addr, sizeof addr);
    snprintf(c->last_error, sizeof c->last_error, "connect %s: %s", addr, strerror(e));
    if (c->server >= 0) {
        close(c->server);
        c->server = -1;
    }
    c->next++;
    try_connect(p, c);
}

static void try_connect(fb_proxy *p, conn *c)
{
    while (c->next < c->naddrs) {
        const struct sockaddr *sa = (const struct sockaddr *)&c->addrs[c->next];
        c->server = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (c->server < 0) {
            connect_failed(p, c, errno);
            return;
        }
        if (connect(c->server, sa, c->addrlen[c->next]) == 0) {
            connected(p, c);
            return;
        }
        if (errno == EINPROGRESS) {
            c->state = ST_CONNECTING;
            c->deadline = now_ms() + FB_PROXY_CONNECT_TIMEOUT_MS;
            return;
        }
        connect_failed(p, c, errno);
        return;
    }
    /* every allowed address failed */
    char addr[INET6_ADDRSTRLEN] = "";
    if (c->naddrs)
        addr_text((const struct sockaddr *)&c->addrs[c->naddrs - 1], addr, sizeof addr);
    c->log = log_add(p, c, addr, true, c->allow_reason);
    if (c->log >= 0)
        snprintf(p->log[c->log].error, sizeof p->log[c->log].error, "%s", c->last_error);
    bool timeout = strstr(c->last_error, "timed out") != NULL;
    reply_fail(c, timeout ? 504 : 502, timeout ? 6 : 5, c->last_error);
}

/* The resolved addresses: keep the allowed ones (in order, no duplicates), refuse if none is. */
static void on_addrs(fb_proxy *p, conn *c, const struct addrinfo *res)
{
    char first_reason[REASON_MAX] = "", first_addr[INET6_ADDRSTRLEN] = "";
    for (const struct addrinfo *ai = res; ai && c->naddrs < FB_PROXY_MAX_ADDRS; ai = ai->ai_next) {
        if ((ai->ai_family != AF_INET && ai->ai_family != AF_INET6) || ai->ai_addrlen > sizeof c->addrs[0])
            continue;
        bool dup = false;
        for (size_t i = 0; i < c->naddrs; i++)
            dup = dup || (c->addrlen[i] == ai->ai_addrlen && memcmp(&c->addrs[i], ai->ai_addr, ai->ai_addrlen) == 0);
        if (dup)
            continue;
        char reason[REASON_MAX];
        if (fb_net_policy_allows(p->policy, c->host, c->port, ai->ai_addr, reason, sizeof reason)) {
            if (c->naddrs == 0)
                snprintf(c->allow_reason, sizeof c->allow_reason, "%s", reason);
            memcpy(&c->addrs[c->naddrs], ai->ai_addr, ai->ai_addrlen);
            c->addrlen[c->naddrs++] = ai->ai_addrlen;
        } else if (!first_reason[0]) {
            snprintf(first_reason, sizeof first_reason, "%s", reason);
            addr_text(ai->ai_addr, first_addr, sizeof first_addr);
        }
    }
    if (c->naddrs == 0) {
        refuse(p, c, first_addr[0] ? first_addr : NULL, first_reason[0] ? first_reason : "no usable address");
        return;
    }
    if (p->check) {
        char addr[INET6_ADDRSTRLEN], why[REASON_MAX - 32] = "";
        addr_text((const struct sockaddr *)&c->addrs[0], addr, sizeof addr);
        if (!p->check(p->check_ctx, c->host, c->port, addr, why, sizeof why)) {
            char reason[REASON_MAX];
            why[sizeof why - 1] = '\0';
            snprintf(reason, sizeof reason, "denied by the host%s%s", why[0] ? ": " : "", why);
            refuse(p, c, addr, reason);
            return;
        }
    }
    try_connect(p, c);
}

/* The client named host:port: decide by name, then resolve (numeric at once, names on a thread). */
static void begin_connect(fb_proxy *p, conn *c)
{
    char reason[REASON_MAX];
    if (!fb_net_policy_allows(p->policy, c->host, c->port, NULL, reason, sizeof reason)) {
        refuse(p, c, NULL, reason);
        return;
    }
    char port[8];
    snprintf(port, sizeof port, "%u", (unsigned)c->port);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV};
    struct addrinfo *res = NULL;
    if (getaddrinfo(c->host, port, &hints, &res) == 0) {
        on_addrs(p, c, res);
        freeaddrinfo(res);
        return;
    }
    c->job = job_start(p, c->host, c->port);
    if (!c->job) {
        c->log = log_add(p, c, NULL, true, reason);
        if (c->log >= 0)
            snprintf(p->log[c->log].error, sizeof p->log[c->log].error, "could not start a name look-up");
        reply_fail(c, 503, 1, "could not start a name look-up");
        return;
    }
    c->state = ST_RESOLVING;
}

static void on_resolved(fb_proxy *p, conn *c)
{
    resolve_job *j = c->job;
    pthread_mutex_lock(&j->mu);
    bool done = j->done;
    int rc = j->rc;
    struct addrinfo *res = j->res;
    j->res = NULL;
    pthread_mutex_unlock(&j->mu);
    if (!done)
        return;
    job_release(j);
    c->job = NULL;
    if (rc != 0) {
        char why[REASON_MAX];
        snprintf(why, sizeof why, "cannot resolve %s: %s", c->host, gai_strerror(rc));
        c->log = log_add(p, c, NULL, true, "name allowed; look-up failed");
        if (c->log >= 0)
            snprintf(p->log[c->log].error, sizeof p->log[c->log].error, "%s", why);
        reply_fail(c, 502, 4 /* host unreachable */, why);
        return;
    }
    on_addrs(p, c, res);
    freeaddrinfo(res);
}

/* ---- protocols ---- */

/* host[:port] or [v6][:port] into c->host / c->port (default_port 0 = the port is required). */
static int parse_authority(conn *c, const char *s, size_t len, uint16_t default_port)
{
    const char *end = s + len, *colon = NULL, *hs = s, *he;
    if (len > 0 && s[0] == '[') {
        const char *close = memchr(s, ']', len);
        if (!close)
            return -1;
        hs = s + 1;
        he = close;
        if (close + 1 < end) {
            if (close[1] != ':')
                return -1;
            colon = close + 1;
        }
    } else {
        colon = memchr(s, ':', len);
        he = colon ? colon : end;
    }
    size_t hlen = (size_t)(he - hs);
    if (hlen == 0 || hlen > FB_NET_MAX_HOST || memchr(hs, '\0', hlen))
        return -1;
    memcpy(c->host, hs, hlen);
    c->host[hlen] = '\0';
    unsigned long port = default_port;
    if (colon) {
        port = 0;
        if (colon + 1 == end || end - colon > 6)
            return -1;
        for (const char *q = colon + 1; q < end; q++) {
            if (*q < '0' || *q > '9')
                return -1;
            port = port * 10 + (unsigned long)(*q - '0');
        }
    }
    if (port == 0 || port > 65535)
        return -1;
    c->port = (uint16_t)port;
    return 0;
}

static bool header_is(const char *line, size_t len, const char *name)
{
    size_t n = strlen(name);
    return len > n && line[n] == ':' && strncasecmp(line, name, n) == 0;
}

/* An HTTP request head is complete in c->up: CONNECT, or an absolute http:// URI to forward with the
 * request line in origin form, hop-by-hop proxy headers dropped and "Connection: close" (one request
 * per upstream connection: a later request on the same client connection could name another host). */
static void http_head(fb_proxy *p, conn *c)
{
    char *d = c->up.data + c->up.off;
    size_t len = c->up.len;
    char *end = memmem(d, len, "\r\n\r\n", 4);
    if (!end) {
        if (len >= FB_PROXY_HEAD_BYTES || c->up.eof) {
            c->proto = PROTO_HTTP;
            if (c->up.eof)
                c->state = ST_DONE;
            else
                reply_fail(c, 431, 1, "request head too large");
        }
        return;
    }
    size_t head_len = (size_t)(end - d) + 4;
    char *line_end = memmem(d, head_len, "\r\n", 2);
    char *sp1 = memchr(d, ' ', (size_t)(line_end - d));
    char *sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(line_end - sp1 - 1)) : NULL;
    c->proto = PROTO_HTTP;
    if (!sp1 || !sp2 || line_end - sp2 < 9 || strncmp(sp2 + 1, "HTTP/1.", 7) != 0) {
        reply_fail(c, 400, 1, "malformed request line");
        return;
    }
    const char *target = sp1 + 1;
    size_t tlen = (size_t)(sp2 - target);
    if ((size_t)(sp1 - d) == 7 && strncmp(d, "CONNECT", 7) == 0) {
        c->proto = PROTO_CONNECT;
        if (parse_authority(c, target, tlen, 0) < 0) {
            reply_fail(c, 400, 1, "CONNECT needs host:port");
            return;
        }
        consume(&c->up, head_len); /* bytes the client sent ahead go through the tunnel */
        begin_connect(p, c);
        return;
    }
    if (tlen < 8 || strncasecmp(target, "http://", 7) != 0) {
        reply_fail(c, 400, 1, tlen >= 8 && strncasecmp(target, "https://", 8) == 0
                                  ? "https:// URLs go through CONNECT (use the proxy as HTTPS_PROXY)"
                                  : "this is a proxy: the request target must be an absolute http:// URL");
        return;
    }
    const char *auth = target + 7, *tend = target + tlen;
    const char *path = auth;
    while (path < tend && *path != '/' && *path != '?' && *path != '#')
        path++;
    if (memchr(auth, '@', (size_t)(path - auth)) || parse_authority(c, auth, (size_t)(path - auth), 80) < 0) {
        reply_fail(c, 400, 1, "bad host in the request URL");
        return;
    }
    /* the rewritten head: request line, kept headers, Host if missing, Connection: close */
    size_t cap = head_len + (size_t)(path - auth) + 64;
    char *out = malloc(cap);
    if (!out) {
        reply_fail(c, 503, 1, "out of memory");
        return;
    }
    size_t n = 0;
    n += (size_t)snprintf(out + n, cap - n, "%.*s %s%.*s %.*s\r\n", (int)(sp1 - d), d, *path == '/' ? "" : "/",
                          (int)(tend - path), path, (int)(line_end - sp2 - 1), sp2 + 1);
    bool has_host = false;
    for (char *line = line_end + 2; line < end + 2;) {
        char *le = memmem(line, (size_t)(end + 2 - line), "\r\n", 2);
        size_t llen = (size_t)(le - line);
        if (header_is(line, llen, "Host"))
            has_host = true;
        if (!header_is(line, llen, "Proxy-Connection") && !header_is(line, llen, "Proxy-Authorization") &&
            !header_is(line, llen, "Connection") && !header_is(line, llen, "Keep-Alive")) {
            memcpy(out + n, line, llen + 2);
            n += llen + 2;
        }
        line = le + 2;
    }
    if (!has_host)
        n += (size_t)snprintf(out + n, cap - n, "Host: %.*s\r\n", (int)(path - auth), auth);
    n += (size_t)snprintf(out + n, cap - n, "Connection: close\r\n\r\n");
    consume(&c->up, head_len);
    /* prepend: what remains is at most FB_PROXY_HEAD_BYTES - head_len, so both fit */
    memmove(c->up.data + n, c->up.data + c->up.off, c->up.len);
    memcpy(c->up.data, out, n);
    c->up.off = 0;
    c->up.len += n;
    free(out);
    begin_connect(p, c);
}

/* SOCKS5 (RFC 1928): greeting, then one CONNECT request. */
static void socks_step(fb_proxy *p, conn *c)
{
    const unsigned char *d = (const unsigned char *)c->up.data + c->up.off;
    size_t len = c->up.len;
    if (c->state == ST_HEAD) {
        if (len < 2 || len < 2u + d[1])
            return;
        bool none = false;
        for (size_t i = 0; i < d[1]; i++)
            none = none || d[2 + i] == 0;
        if (!none) {
            static const unsigned char no[2] = {5, 0xff};
            put(&c->down, no, 2);
            c->state = ST_CLOSING;
            return;
        }
        static const unsigned char yes[2] = {5, 0};
        put(&c->down, yes, 2);
        consume(&c->up, 2u + d[1]);
        c->state = ST_SOCKS_REQ;
        d = (const unsigned char *)c->up.data + c->up.off;
        len = c->up.len;
    }
    if (len < 5)
        return;
    size_t need = d[3] == 1 ? 10 : d[3] == 4 ? 22 : d[3] == 3 ? 7u + d[4] : 0;
    if (d[0] != 5) {
        c->state = ST_DONE;
        return;
    }
    if (need == 0) {
        reply_fail(c, 0, 8 /* address type not supported */, "address type not supported");
        return;
    }
    if (len < need)
        return;
    if (d[1] != 1) {
        reply_fail(c, 0, 7 /* command not supported */, "only CONNECT is supported");
        return;
    }
    if (d[3] == 3) {
        if (d[4] == 0 || d[4] > FB_NET_MAX_HOST || memchr(d + 5, 0, d[4])) { /* c->host holds a DNS name */
            reply_fail(c, 0, 1, "bad domain name");
            return;
        }
        memcpy(c->host, d + 5, d[4]);
        c->host[d[4]] = '\0';
    } else {
        inet_ntop(d[3] == 1 ? AF_INET : AF_INET6, d + 4, c->host, sizeof c->host);
    }
    c->port = (uint16_t)((d[need - 2] << 8) | d[need - 1]);
    consume(&c->up, need);
    begin_connect(p, c);
}

static void head_step(fb_proxy *p, conn *c, short crev)
{
    if (crev & (POLLIN | POLLHUP | POLLERR)) {
        ssize_t r = fill(c->client, &c->up, FB_PROXY_HEAD_BYTES);
        if (r == -1) {
            c->state = ST_DONE;
            return;
        }
        if (r == 0)
            c->up.eof = true;
    }
    if (c->up.len == 0) {
        if (c->up.eof)
            c->state = ST_DONE;
        return;
    }
    if (c->state == ST_HEAD && c->proto == PROTO_NONE && (unsigned char)c->up.data[c->up.off] == 5)
        c->proto = PROTO_SOCKS5;
    if (c->proto == PROTO_SOCKS5)
        socks_step(p, c);
    else
        http_head(p, c);
    if ((c->state == ST_HEAD || c->state == ST_SOCKS_REQ) && c->up.eof)
        c->state = ST_DONE; /* the client gave up half-way */
}

static void relay_step(conn *c, short crev, short srev)
{
    /* A hang-up after the stream's end means the peer is gone both ways (RST, or both sides shut). */
    if ((crev & (POLLHUP | POLLERR)) && c->up.eof)
        return (void)(c->state = ST_DONE);
    if ((srev & (POLLHUP | POLLERR)) && c->down.eof) {
        c->up.eof = c->up.shut = true; /* nothing more can reach the server */
        c->up.len = 0;
    }
    if ((crev & (POLLIN | POLLHUP | POLLERR)) && !c->up.eof) {
        ssize_t r = fill(c->client, &c->up, sizeof c->up.data);
        if (r == -1)
            return (void)(c->state = ST_DONE);
        if (r == 0)
            c->up.eof = true;
    }
    ssize_t w = drain(c->server, &c->up);
    if (w < 0)
        return (void)(c->state = ST_DONE);
    c->bytes_up += (uint64_t)w;
    if (c->up.eof && c->up.len == 0 && !c->up.shut) {
        shutdown(c->server, SHUT_WR);
        c->up.shut = true;
    }
    if ((srev & (POLLIN | POLLHUP | POLLERR)) && !c->down.eof) {
        size_t before = c->down.len;
        ssize_t r = fill(c->server, &c->down, sizeof c->down.data);
        if (r == -1)
            return (void)(c->state = ST_DONE);
        if (r == 0)
            c->down.eof = true;
        c->bytes_down += c->down.len - before;
    }
    if (drain(c->client, &c->down) < 0)
        return (void)(c->state = ST_DONE);
    if (c->down.eof && c->down.len == 0 && !c->down.shut) {
        shutdown(c->client, SHUT_WR);
        c->down.shut = true;
    }
    if (c->up.shut && c->down.shut)
        c->state = ST_DONE;
}

static void conn_step(fb_proxy *p, conn *c, short crev, short srev)
{
    switch (c->state) {
    case ST_HEAD:
    case ST_SOCKS_REQ:
        if (c->down.len > 0 && drain(c->client, &c->down) < 0)
            return (void)(c->state = ST_DONE);
        head_step(p, c, crev);
        break;
    case ST_RESOLVING:
    case ST_CONNECTING:
        if (crev & (POLLHUP | POLLERR))
            return (void)(c->state = ST_DONE); /* the client is gone */
        if (c->down.len > 0 && drain(c->client, &c->down) < 0)
            return (void)(c->state = ST_DONE);
        if (c->state == ST_RESOLVING)
            on_resolved(p, c);
        else if (srev & (POLLOUT | POLLERR | POLLHUP)) {
            int e = 0;
            socklen_t el = sizeof e;
            if (getsockopt(c->server, SOL_SOCKET, SO_ERROR, &e, &el) < 0)
                e = errno;
            if (e == 0)
                connected(p, c);
            else
                connect_failed(p, c, e);
        } else if (now_ms() >= c->deadline) {
            connect_failed(p, c, ETIMEDOUT);
        }
        break;
    case ST_RELAY:
        relay_step(c, crev, srev);
        break;
    case ST_CLOSING:
        if (drain(c->client, &c->down) < 0)
            return (void)(c->state = ST_DONE);
        if (c->down.len == 0) {
            shutdown(c->client, SHUT_WR);
            c->state = ST_LINGER;
            c->deadline = now_ms() + LINGER_MS;
        }
        break;
    case ST_LINGER: {
        char sink[4096];
        ssize_t r = 1;
        while (r > 0)
            r = recv(c->client, sink, sizeof sink, MSG_DONTWAIT);
        if (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) || now_ms() >= c->deadline)
            c->state = ST_DONE;
        break;
    }
    default:
        break;
    }
}

static short client_events(const conn *c)
{
    short ev = c->down.len > 0 ? POLLOUT : 0;
    if (((c->state == ST_HEAD || c->state == ST_SOCKS_REQ) && !c->up.eof) ||
        (c->state == ST_RELAY && !c->up.eof && c->up.len < sizeof c->up.data) || c->state == ST_LINGER)
        ev |= POLLIN;
    return ev;
}

static short server_events(const conn *c)
{
    if (c->state == ST_CONNECTING)
        return POLLOUT;
    if (c->state != ST_RELAY)
        return 0;
    short ev = c->up.len > 0 ? POLLOUT : 0;
    if (!c->down.eof && c->down.len < sizeof c->down.data)
        ev |= POLLIN;
    return ev;
}

static void accept_some(fb_proxy *p)
{
    for (int i = 0; i < ACCEPTS_PER_ROUND; i++) {
        int fd = accept4(p->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        conn *c = p->nconns < FB_PROXY_MAX_CONNS ? calloc(1, sizeof *c) : NULL;
        if (!c) {
            char why[96];
            snprintf(why, sizeof why, "too many concurrent connections (at most %d)", FB_PROXY_MAX_CONNS);
            (void)log_add(p, NULL, NULL, false, why);
            close(fd);
            continue;
        }
        c->client = fd;
        c->server = -1;
        c->log = -1;
        c->state = ST_HEAD;
        p->conns[p->nconns++] = c;
    }
}

static void *proxy_main(void *arg)
{
    fb_proxy *p = arg;
    struct pollfd pfd[2 + 2 * FB_PROXY_MAX_CONNS];
    while (!atomic_load(&p->stop)) {
        nfds_t n = 0;
        pfd[n++] = (struct pollfd){.fd = p->event_fd, .events = POLLIN};
        pfd[n++] = (struct pollfd){.fd = p->listen_fd, .events = POLLIN};
        double next = -1, now = now_ms();
        for (size_t i = 0; i < p->nconns; i++) {
            conn *c = p->conns[i];
            pfd[n++] = (struct pollfd){.fd = c->client, .events = client_events(c)};
            pfd[n++] = (struct pollfd){.fd = c->server, .events = server_events(c)}; /* -1: ignored */
            if ((c->state == ST_CONNECTING || c->state == ST_LINGER) && (next < 0 || c->deadline < next))
                next = c->deadline;
        }
        int timeout = next < 0 ? -1 : next <= now ? 0 : (int)(next - now) + 1;
        if (poll(pfd, n, timeout) < 0 && errno != EINTR)
            break;
        if (pfd[0].revents & POLLIN) {
            uint64_t v;
            (void)!read(p->event_fd, &v, sizeof v);
        }
        for (size_t i = 0; i < p->nconns; i++)
            conn_step(p, p->conns[i], pfd[2 + 2 * i].revents, pfd[3 + 2 * i].revents);
        for (size_t i = 0; i < p->nconns;) { /* reap, keeping order */
            if (p->conns[i]->state != ST_DONE) {
                i++;
                continue;
            }
            conn_close(p, p->conns[i]);
            free(p->conns[i]);
            memmove(&p->conns[i], &p->conns[i + 1], (p->nconns - i - 1) * sizeof(conn *));
            p->nconns--;
        }
        if (pfd[1].revents & POLLIN) /* after reaping: a finished connection frees its slot first */
            accept_some(p);
    }
    for (size_t i = 0; i < p->nconns; i++) {
        conn_close(p, p->conns[i]);
        free(p->conns[i]);
    }
    p->nconns = 0;
    return NULL;
}

/* ---- API ---- */

int fb_proxy_start(int listen_fd, const fb_net_policy *policy, fb_proxy **out, fb_error *err)
{
    return fb_proxy_start_checked(listen_fd, policy, NULL, NULL, out, err);
}

int fb_proxy_start_checked(int listen_fd, const fb_net_policy *policy, fb_proxy_check check, void *check_ctx,
                           fb_proxy **out, fb_error *err)
{
    *out = NULL;
    fb_proxy *p = calloc(1, sizeof *p);
    if (!p) {
        close(listen_fd);
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "network proxy");
    }
    p->policy = policy;
    p->check = check;
    p->check_ctx = check_ctx;
    p->listen_fd = listen_fd;
    p->event_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    atomic_init(&p->stop, false);
    if (p->event_fd < 0 || fcntl(listen_fd, F_SETFL, fcntl(listen_fd, F_GETFL) | O_NONBLOCK) < 0) {
        fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "network proxy: eventfd/fcntl");
        fb_proxy_free(p);
        return -1;
    }
    /* The thread (and the resolver threads it starts) takes no signals: they are the caller's. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&p->thread, NULL, proxy_main, p);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        fb_set_error(err, FB_ERR_SANDBOX_SETUP, rc, "network proxy: pthread_create");
        fb_proxy_free(p);
        return -1;
    }
    p->running = true;
    *out = p;
    return 0;
}

void fb_proxy_stop(fb_proxy *p)
{
    if (!p)
        return;
    if (p->running) {
        atomic_store(&p->stop, true);
        uint64_t one = 1;
        (void)!write(p->event_fd, &one, sizeof one);
        pthread_join(p->thread, NULL);
        p->running = false;
    }
    if (p->listen_fd >= 0)
        close(p->listen_fd);
    if (p->event_fd >= 0)
        close(p->event_fd);
    p->listen_fd = p->event_fd = -1;
}

void fb_proxy_free(fb_proxy *p)
{
    if (!p)
        return;
    fb_proxy_stop(p);
    free(p->log);
    free(p);
}

size_t fb_proxy_log_dropped(const fb_proxy *p)
{
    return p ? p->dropped : 0;
}

bool fb_proxy_log_at(const fb_proxy *p, size_t i, fb_proxy_log_entry *out)
{
    if (!p || i >= p->nlog)
        return false;
    const log_entry *e = &p->log[i];
    *out = (fb_proxy_log_entry){.protocol = k_proto_names[e->proto], .host = e->host, .port = e->port,
                                .address = e->address, .allowed = e->allowed, .reason = e->reason,
                                .error = e->error, .up = e->up, .down = e->down};
    return true;
}

int fb_proxy_on_listen(void *ctx, int fd, fb_error *err)
{
    fb_proxy_call *call = ctx;
    return fb_proxy_start_checked(fd, call->policy, call->check, call->check_ctx, &call->proxy, err);
}
