/* The call's network proxy (net/proxy.h), for real: the proxy serves a listening socket on 127.0.0.1 and
 * talks to a real upstream TCP server on 127.0.0.1 (a thread here, which records what reached it and
 * answers "pong"); each exchange sends a whole client request, shuts the write side and reads the reply to
 * the end. The policy allows only "127.0.0.1:<upstream port>" (and localhost:<port> where the test says).
 *   HTTP: CONNECT tunnels (bytes sent ahead go through); absolute http:// requests forwarded in origin
 *         form with the proxy's hop-by-hop headers dropped, Host added when missing, Connection: close;
 *         a table of refused and malformed heads with their status (403 / 400 / 431) and what the log
 *         says (policy refusals are logged with no address: nothing was resolved).
 *   SOCKS5: greeting and CONNECT (IPv4, IPv6, domain), no acceptable method, unsupported command and
 *         address type, bad domain names (NUL, empty, longer than a DNS name can be).
 *   Both: the host's callback narrowing the policy, a connection refused upstream (502 / reply 5), a
 *         name resolved on a look-up thread (localhost), the connection cap, the log's JSON shape. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/result.h"
#include "net/proxy.h"

#define IO_TIMEOUT_MS 5000
#define REPLY_MAX 65536

/* ---- the upstream server ---- */

static struct {
    int listen_fd, stop_pipe[2];
    uint16_t port;
    pthread_t thread;
    pthread_mutex_t mu;
    char last[REPLY_MAX]; /* what the last connection sent, NUL-terminated */
    size_t last_len;
    int connections;
} up;

static void *upstream_main(void *arg)
{
    (void)arg;
    for (;;) {
        struct pollfd p[2] = {{.fd = up.listen_fd, .events = POLLIN}, {.fd = up.stop_pipe[0], .events = POLLIN}};
        if (poll(p, 2, -1) < 0 && errno != EINTR)
            return NULL;
        if (p[1].revents)
            return NULL;
        if (!(p[0].revents & POLLIN))
            continue;
        int fd = accept4(up.listen_fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0)
            continue;
        char buf[REPLY_MAX];
        size_t n = 0;
        for (;;) { /* until the proxy passes the client's EOF on */
            struct pollfd q = {.fd = fd, .events = POLLIN};
            if (poll(&q, 1, IO_TIMEOUT_MS) <= 0)
                break;
            ssize_t r = recv(fd, buf + n, sizeof buf - 1 - n, 0);
            if (r <= 0)
                break;
            n += (size_t)r;
        }
        pthread_mutex_lock(&up.mu);
        memcpy(up.last, buf, n);
        up.last[n] = '\0';
        up.last_len = n;
        up.connections++;
        pthread_mutex_unlock(&up.mu);
        (void)!send(fd, "pong", 4, MSG_NOSIGNAL);
        close(fd);
    }
}

/* A listening TCP socket on 127.0.0.1, any port; *port gets it. */
static int listen_loopback(uint16_t *port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof sa;
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(fd, 128) < 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &len) < 0)
        fail_msg("listening socket: %s", strerror(errno));
    *port = ntohs(sa.sin_port);
    return fd;
}

/* A port nothing listens on (bound, then closed). */
static uint16_t closed_port(void)
{
    uint16_t port;
    close(listen_loopback(&port));
    return port;
}

static int group_setup(void **state)
{
    (void)state;
    pthread_mutex_init(&up.mu, NULL);
    up.listen_fd = listen_loopback(&up.port);
    if (pipe2(up.stop_pipe, O_CLOEXEC) < 0)
        return -1;
    return pthread_create(&up.thread, NULL, upstream_main, NULL) == 0 ? 0 : -1;
}

static int group_teardown(void **state)
{
    (void)state;
    (void)!write(up.stop_pipe[1], "x", 1);
    pthread_join(up.thread, NULL);
    close(up.listen_fd);
    close(up.stop_pipe[0]);
    close(up.stop_pipe[1]);
    pthread_mutex_destroy(&up.mu);
    return 0;
}

static void upstream_last(char *out, size_t cap)
{
    pthread_mutex_lock(&up.mu);
    snprintf(out, cap, "%s", up.last);
    pthread_mutex_unlock(&up.mu);
}

/* tmpl with each "%u" replaced by port_u and each "%c" by port_c (no printf: the tables hold the text). */
static void fill_ports(char *out, size_t cap, const char *tmpl, unsigned port_u, unsigned port_c)
{
    size_t n = 0;
    for (const char *t = tmpl; *t && n + 6 < cap; t++) {
        if (t[0] == '%' && (t[1] == 'u' || t[1] == 'c')) {
            n += (size_t)snprintf(out + n, cap - n, "%u", t[1] == 'u' ? port_u : port_c);
            t++;
        } else {
            out[n++] = *t;
        }
    }
    out[n] = '\0';
}

/* ---- the proxy under test ---- */

typedef struct fixture {
    fb_net_policy *policy;
    fb_proxy *proxy;
    uint16_t port;
} fixture;

static int (*g_check)(void *, const char *, uint16_t, const char *, char *, size_t);

/* A proxy allowing the patterns (a "%u" in one is the upstream's port). */
static void start(fixture *f, const char *const *patterns, size_t n)
{
    char buf[8][128];
    const char *pats[8];
    assert_true(n <= 8);
    for (size_t i = 0; i < n; i++) {
        fill_ports(buf[i], sizeof buf[i], patterns[i], up.port, 0);
        pats[i] = buf[i];
    }
    fb_error err = {0};
    if (fb_net_policy_from_patterns(false, pats, n, "permissions.network", &f->policy, &err) < 0)
        fail_msg("policy: %s", err.message);
    int fd = listen_loopback(&f->port);
    if (fb_proxy_start_checked(fd, f->policy, g_check, NULL, &f->proxy, &err) < 0)
        fail_msg("proxy: %s", err.message);
}

static void start_default(fixture *f)
{
    static const char *const pats[] = {"127.0.0.1:%u"};
    start(f, pats, 1);
}

/* The proxy's log as the result's `network` renders it (core/result.c; caller decrefs). */
static json_t *log_json(const fb_proxy *p)
{
    fb_result r = {.obj = json_object()};
    fb_error err = {0};
    assert_int_equal(fb_result_set_network(&r, p, &err), 0);
    json_t *log = json_incref(json_object_get(r.obj, "network"));
    json_decref(r.obj);
    return log;
}

/* Stops the proxy and returns its log (caller decrefs). */
static json_t *stop(fixture *f)
{
    fb_proxy_stop(f->proxy);
    fb_proxy_stop(f->proxy); /* idempotent */
    json_t *log = log_json(f->proxy);
    assert_non_null(log);
    assert_int_equal(fb_proxy_log_dropped(f->proxy), 0);
    fb_proxy_free(f->proxy);
    fb_net_policy_free(f->policy);
    return log;
}

static int connect_proxy(const fixture *f)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(f->port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0)
        fail_msg("connect to the proxy: %s", strerror(errno));
    return fd;
}

/* Reads fd to its end (or a reset); the bytes read. */
static size_t read_all(int fd, char *out, size_t cap)
{
    size_t n = 0;
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, IO_TIMEOUT_MS) <= 0)
            fail_msg("no reply within %d ms (got %zu bytes)", IO_TIMEOUT_MS, n);
        ssize_t r = recv(fd, out + n, cap - 1 - n, 0);
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    out[n] = '\0';
    return n;
}

/* One whole exchange: send req, shut the write side, read the reply to its end. */
static size_t exchange(const fixture *f, const void *req, size_t len, char *reply, size_t cap)
{
    int fd = connect_proxy(f);
    assert_int_equal(send(fd, req, len, MSG_NOSIGNAL), (ssize_t)len);
    shutdown(fd, SHUT_WR);
    size_t n = read_all(fd, reply, cap);
    close(fd);
    return n;
}

static size_t exchange_text(const fixture *f, const char *req, char *reply, size_t cap)
{
    return exchange(f, req, strlen(req), reply, cap);
}

/* ---- log checks ---- */

static const char *log_str(const json_t *e, const char *key)
{
    const char *s = json_string_value(json_object_get(e, key));
    return s ? s : "(null)";
}

/* entry i of log is {protocol, host, port, allowed} with address addr (NULL: null) and a reason holding
 * reason (NULL: anything). */
static void expect_entry(const json_t *log, size_t i, const char *protocol, const char *host, unsigned port,
                         const char *addr, bool allowed, const char *reason)
{
    const json_t *e = json_array_get(log, i);
    if (!e)
        fail_msg("log entry %zu missing (%zu entries)", i, json_array_size(log));
    if (strcmp(log_str(e, "protocol"), protocol) != 0 || strcmp(log_str(e, "host"), host) != 0 ||
        json_integer_value(json_object_get(e, "port")) != port ||
        strcmp(log_str(e, "address"), addr ? addr : "(null)") != 0 ||
        json_is_true(json_object_get(e, "allowed")) != allowed ||
        (reason && !strstr(log_str(e, "reason"), reason))) {
        char *dump = json_dumps(e, JSON_COMPACT);
        fail_msg("log entry %zu is %s; expected %s %s:%u address %s allowed %d reason ~ %s", i, dump, protocol,
                 host, port, addr ? addr : "null", allowed, reason ? reason : "*");
    }
    assert_true(json_is_integer(json_object_get(e, "bytesUp")));
    assert_true(json_is_integer(json_object_get(e, "bytesDown")));
}

static long long log_int(const json_t *log, size_t i, const char *key)
{
    return json_integer_value(json_object_get(json_array_get(log, i), key));
}

/* ---- HTTP ---- */

static void test_http_connect_tunnel(void **state)
{
    (void)state;
    fixture f;
    start_default(&f);
    char req[256], reply[REPLY_MAX], got[REPLY_MAX];
    snprintf(req, sizeof req, "CONNECT 127.0.0.1:%u HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n\r\nping", up.port, up.port);
    exchange_text(&f, req, reply, sizeof reply);
    assert_string_equal(reply, "HTTP/1.1 200 Connection established\r\n\r\npong");
    upstream_last(got, sizeof got);
    assert_string_equal(got, "ping"); /* bytes sent ahead of the 200 go through the tunnel */
    json_t *log = stop(&f);
    assert_int_equal(json_array_size(log), 1);
    expect_entry(log, 0, "connect", "127.0.0.1", up.port, "127.0.0.1", true, "127.0.0.1");
    assert_int_equal(log_int(log, 0, "bytesUp"), 4);
    assert_int_equal(log_int(log, 0, "bytesDown"), 4);
    assert_null(json_object_get(json_array_get(log, 0), "error"));
    json_decref(log);
}

typedef struct forward_case {
    const char *request;  /* "%u" = the upstream's port (fill_ports) */
    const char *upstream; /* what must reach the upstream, same convention */
} forward_case;

static const forward_case k_forward[] = {
    {"GET http://127.0.0.1:%u/path?q=1 HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nProxy-Connection: keep-alive\r\n"
     "Proxy-Authorization: Basic eDp5\r\nConnection: keep-alive\r\nKeep-Alive: 5\r\nX-Keep: yes\r\n\r\nBODY",
     "GET /path?q=1 HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nX-Keep: yes\r\nConnection: close\r\n\r\nBODY"},
    /* no Host: one is added from the URL; no path: "/" */
    {"POST http://127.0.0.1:%u HTTP/1.0\r\nContent-Length: 2\r\n\r\nhi",
     "POST / HTTP/1.0\r\nContent-Length: 2\r\nHost: 127.0.0.1:%u\r\nConnection: close\r\n\r\nhi"},
    {"GET HTTP://127.0.0.1:%u?x=1 HTTP/1.1\r\nproxy-connection: x\r\nCONNECTION: y\r\nConnection-Id: 7\r\n\r\n",
     "GET /?x=1 HTTP/1.1\r\nConnection-Id: 7\r\nHost: 127.0.0.1:%u\r\nConnection: close\r\n\r\n"},
    {"HEAD http://127.0.0.1:%u#frag HTTP/1.1\r\n\r\n",
     "HEAD /#frag HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nConnection: close\r\n\r\n"},
};

static void test_http_forward(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof k_forward / sizeof k_forward[0]; i++) {
        fixture f;
        start_default(&f);
        char req[1024], want[1024], reply[REPLY_MAX], got[REPLY_MAX];
        fill_ports(req, sizeof req, k_forward[i].request, up.port, 0);
        fill_ports(want, sizeof want, k_forward[i].upstream, up.port, 0);
        exchange_text(&f, req, reply, sizeof reply);
        assert_string_equal(reply, "pong"); /* the upstream's answer, as it came */
        upstream_last(got, sizeof got);
        if (strcmp(got, want) != 0)
            fail_msg("case %zu: upstream got\n%s\nexpected\n%s", i, got, want);
        json_t *log = stop(&f);
        assert_int_equal(json_array_size(log), 1);
        expect_entry(log, 0, "http", "127.0.0.1", up.port, "127.0.0.1", true, NULL);
        assert_int_equal(log_int(log, 0, "bytesUp"), (long long)strlen(want));
        json_decref(log);
    }
}

typedef struct refusal_case {
    const char *request;   /* "%u": the upstream's port; "%c": another port */
    const char *status;    /* the reply's first line */
    const char *body;      /* a piece of the body */
    const char *log_host;  /* NULL: nothing logged (malformed); else a policy refusal with this host */
    unsigned log_port;     /* 1: the upstream's port; 2: the other port; else as is */
} refusal_case;

static const refusal_case k_refusals[] = {
    {"CONNECT example.com:443 HTTP/1.1\r\n\r\n", "HTTP/1.1 403 Forbidden", "example.com:443 is not allowed",
     "example.com", 443},
    {"CONNECT 127.0.0.1:%c HTTP/1.1\r\n\r\n", "HTTP/1.1 403 Forbidden", "not allowed", "127.0.0.1", 2},
    {"CONNECT [::1]:%u HTTP/1.1\r\n\r\n", "HTTP/1.1 403 Forbidden", "not allowed", "::1", 1},
    {"CONNECT LOCALHOST:%u HTTP/1.1\r\n\r\n", "HTTP/1.1 403 Forbidden", "not allowed", "LOCALHOST", 1},
    {"GET http://127.0.0.1/ HTTP/1.1\r\n\r\n", "HTTP/1.1 403 Forbidden", "127.0.0.1:80", "127.0.0.1", 80},
    {"GET http://example.com:%u/x HTTP/1.1\r\n\r\n", "HTTP/1.1 403 Forbidden", "not allowed", "example.com", 1},
    {"GET https://127.0.0.1:%u/ HTTP/1.1\r\n\r\n", "HTTP/1.1 400 Bad Request", "go through CONNECT", NULL, 0},
    {"GET /relative HTTP/1.1\r\nHost: x\r\n\r\n", "HTTP/1.1 400 Bad Request", "absolute http:// URL", NULL, 0},
    {"GET http://user@127.0.0.1:%u/ HTTP/1.1\r\n\r\n", "HTTP/1.1 400 Bad Request", "bad host", NULL, 0},
    {"GET http://127.0.0.1:99999/ HTTP/1.1\r\n\r\n", "HTTP/1.1 400 Bad Request", "bad host", NULL, 0},
    {"GET http://127.0.0.1:/ HTTP/1.1\r\n\r\n", "HTTP/1.1 400 Bad Request", "bad host", NULL, 0},
    {"GET http://:80/ HTTP/1.1\r\n\r\n", "HTTP/1.1 400 Bad Request", "bad host", NULL, 0},
    {"GET http:///x HTTP/1.1\r\n\r\n", "HTTP/1.1 400 Bad Request", "bad host", NULL, 0},
    {"CONNECT 127.0.0.1 HTTP/1.1\r\n\r\n", "HTTP/1.1 400 Bad Request", "CONNECT needs host:port", NULL, 0},
    {"CONNECT 127.0.0.1:0 HTTP/1.1\r\n\r\n", "HTTP/1.1 400 Bad Request", "host:port", NULL, 0},
    {"CONNECT 127.0.0.1:000080 HTTP/1.1\r\n\r\n", "HTTP/1.1 400 Bad Request", "host:port", NULL, 0},
    {"CONNECT 127.0.0.1:8o HTTP/1.1\r\n\r\n", "HTTP/1.1 400 Bad Request", "host:port", NULL, 0},
    {"CONNECT [::1 HTTP/1.1\r\n\r\n", "HTTP/1.1 400 Bad Request", "host:port", NULL, 0},
    {"CONNECT [::1]x:80 HTTP/1.1\r\n\r\n", "HTTP/1.1 400 Bad Request", "host:port", NULL, 0},
    {"CONNECT []:80 HTTP/1.1\r\n\r\n", "HTTP/1.1 400 Bad Request", "host:port", NULL, 0},
    {"CONNECT 127.0.0.1:%u HTTP/2.0\r\n\r\n", "HTTP/1.1 400 Bad Request", "malformed request line", NULL, 0},
    {"CONNECT 127.0.0.1:%u\r\n\r\n", "HTTP/1.1 400 Bad Request", "malformed request line", NULL, 0},
    {"GARBAGE\r\n\r\n", "HTTP/1.1 400 Bad Request", "malformed request line", NULL, 0},
    {"\r\n\r\n", "HTTP/1.1 400 Bad Request", "malformed request line", NULL, 0},
};

static void test_http_refusals(void **state)
{
    (void)state;
    uint16_t other = closed_port();
    for (size_t i = 0; i < sizeof k_refusals / sizeof k_refusals[0]; i++) {
        const refusal_case *c = &k_refusals[i];
        fixture f;
        start_default(&f);
        char req[512], reply[REPLY_MAX];
        fill_ports(req, sizeof req, c->request, up.port, other);
        exchange_text(&f, req, reply, sizeof reply);
        if (strncmp(reply, c->status, strlen(c->status)) != 0 || !strstr(reply, c->body) ||
            !strstr(reply, "\r\nConnection: close\r\n") || !strstr(reply, "\r\n\r\nfnbox proxy: "))
            fail_msg("case %zu (%s): reply\n%s", i, req, reply);
        /* Content-Length is the body's */
        const char *body = strstr(reply, "\r\n\r\n") + 4;
        char cl[64];
        snprintf(cl, sizeof cl, "Content-Length: %zu\r\n", strlen(body));
        if (!strstr(reply, cl))
            fail_msg("case %zu: no '%s' in\n%s", i, cl, reply);
        json_t *log = stop(&f);
        if (!c->log_host) {
            assert_int_equal(json_array_size(log), 0);
        } else {
            unsigned port = c->log_port == 1 ? up.port : c->log_port == 2 ? other : c->log_port;
            assert_int_equal(json_array_size(log), 1);
            expect_entry(log, 0, strncmp(req, "CONNECT", 7) == 0 ? "connect" : "http", c->log_host, port, NULL,
                         false, NULL);
        }
        json_decref(log);
    }
    /* the upstream saw none of it */
    char got[REPLY_MAX];
    upstream_last(got, sizeof got);
    assert_null(strstr(got, "GARBAGE"));
}

static void test_http_head_limits(void **state)
{
    (void)state;
    fixture f;
    start_default(&f);
    char *big = malloc(FB_PROXY_HEAD_BYTES + 100);
    assert_non_null(big);
    memset(big, 'a', FB_PROXY_HEAD_BYTES + 100);
    memcpy(big, "GET http://127.0.0.1/ HTTP/1.1\r\nX: ", 35);
    char reply[REPLY_MAX];
    exchange(&f, big, FB_PROXY_HEAD_BYTES + 100, reply, sizeof reply);
    assert_true(strncmp(reply, "HTTP/1.1 431 Request Header Fields Too Large\r\n", 46) == 0);
    assert_non_null(strstr(reply, "request head too large"));
    /* a head cut short by the client's end: closed without a word */
    size_t n = exchange_text(&f, "GET http://127.0.0.1/ HTTP/1.1\r\nHost: x\r\n", reply, sizeof reply);
    assert_int_equal(n, 0);
    n = exchange_text(&f, "", reply, sizeof reply);
    assert_int_equal(n, 0);
    json_t *log = stop(&f);
    assert_int_equal(json_array_size(log), 0);
    json_decref(log);
    free(big);
}

/* ---- SOCKS5 ---- */

static const unsigned char k_hello[] = {5, 1, 0}; /* one method: no authentication */

/* hello + CONNECT (atyp, addr, alen bytes) port + trailing bytes, into out; its length. */
static size_t socks_request(unsigned char *out, unsigned char cmd, unsigned char atyp, const void *addr, size_t alen,
                            uint16_t port, const char *tail)
{
    size_t n = 0;
    memcpy(out, k_hello, sizeof k_hello);
    n += sizeof k_hello;
    out[n++] = 5;
    out[n++] = cmd;
    out[n++] = 0;
    out[n++] = atyp;
    memcpy(out + n, addr, alen);
    n += alen;
    out[n++] = (unsigned char)(port >> 8);
    out[n++] = (unsigned char)port;
    memcpy(out + n, tail, strlen(tail));
    return n + strlen(tail);
}

static size_t socks_domain(unsigned char *out, const char *name, size_t len, uint16_t port, const char *tail)
{
    unsigned char addr[300];
    addr[0] = (unsigned char)len;
    memcpy(addr + 1, name, len);
    return socks_request(out, 1, 3, addr, len + 1, port, tail);
}

static void test_socks5_connect(void **state)
{
    (void)state;
    fixture f;
    start_default(&f);
    unsigned char req[512];
    char reply[REPLY_MAX], got[REPLY_MAX];
    unsigned char v4[4] = {127, 0, 0, 1};
    size_t n = socks_request(req, 1, 1, v4, 4, up.port, "ping");
    size_t r = exchange(&f, req, n, reply, sizeof reply);
    static const unsigned char ok[] = {5, 0, 5, 0, 0, 1, 0, 0, 0, 0, 0, 0};
    assert_int_equal(r, sizeof ok + 4);
    assert_memory_equal(reply, ok, sizeof ok);
    assert_memory_equal(reply + sizeof ok, "pong", 4);
    upstream_last(got, sizeof got);
    assert_string_equal(got, "ping");
    json_t *log = stop(&f);
    assert_int_equal(json_array_size(log), 1);
    expect_entry(log, 0, "socks5", "127.0.0.1", up.port, "127.0.0.1", true, NULL);
    assert_int_equal(log_int(log, 0, "bytesUp"), 4);
    json_decref(log);
}

typedef struct socks_case {
    const char *label;
    unsigned char req[300];
    size_t len;
    unsigned char want[2]; /* the first reply's version and code after the method choice */
    const char *log_host;  /* NULL: nothing logged */
} socks_case;

static void expect_socks(const char *label, const fixture *f, const unsigned char *req, size_t len,
                         unsigned char code)
{
    char reply[REPLY_MAX];
    size_t r = exchange(f, req, len, reply, sizeof reply);
    /* [5, 0] (no authentication chosen), then [5, code, 0, 1, 0 x 6] (and the upstream's bytes on success) */
    if ((code == 0 ? r < 12 : r != 12) || reply[0] != 5 || reply[1] != 0 || reply[2] != 5 || (unsigned char)reply[3] != code)
        fail_msg("%s: reply of %zu bytes, code %d, expected 12 bytes (and more for 0) with code %d", label, r,
                 r >= 4 ? (unsigned char)reply[3] : -1, code);
}

static void test_socks5_refusals(void **state)
{
    (void)state;
    unsigned char req[600];
    size_t n;
    fixture f;
    start_default(&f);
    char reply[REPLY_MAX];

    /* no acceptable method: [5, 0xff], then closed, nothing logged */
    static const unsigned char userpass_only[] = {5, 1, 2};
    size_t r = exchange(&f, userpass_only, sizeof userpass_only, reply, sizeof reply);
    assert_int_equal(r, 2);
    assert_int_equal((unsigned char)reply[1], 0xff);
    static const unsigned char many[] = {5, 3, 2, 1, 0}; /* no-auth offered last */
    n = socks_request(req, 1, 1, (unsigned char[4]){127, 0, 0, 1}, 4, up.port, "");
    unsigned char req2[64];
    memcpy(req2, many, sizeof many);
    memcpy(req2 + sizeof many, req + sizeof k_hello, n - sizeof k_hello);
    r = exchange(&f, req2, n - sizeof k_hello + sizeof many, reply, sizeof reply);
    assert_true(r >= 12);
    assert_int_equal(reply[1], 0);
    assert_int_equal(reply[3], 0);

    /* refused by the policy: reply 2, logged without an address */
    n = socks_domain(req, "example.com", 11, 443, "");
    expect_socks("a name not allowed", &f, req, n, 2);
    unsigned char v6[16] = {0};
    v6[15] = 1;
    n = socks_request(req, 1, 4, v6, 16, up.port, "");
    expect_socks("::1, not allowed", &f, req, n, 2);
    n = socks_request(req, 1, 1, (unsigned char[4]){127, 0, 0, 1}, 4, (uint16_t)(up.port + 1), "");
    expect_socks("another port", &f, req, n, 2);
    char longest[FB_NET_MAX_HOST + 3];
    memset(longest, 'a', sizeof longest);
    for (size_t i = 63; i < FB_NET_MAX_HOST; i += 64)
        longest[i] = '.';
    n = socks_domain(req, longest, FB_NET_MAX_HOST, 443, "");
    expect_socks("a 253-byte name", &f, req, n, 2);
    n = socks_domain(req, "ctl\x01name", 8, 443, "");
    expect_socks("a name with a control byte", &f, req, n, 2);

    /* malformed or unsupported: their own codes, nothing logged */
    n = socks_request(req, 2, 1, (unsigned char[4]){127, 0, 0, 1}, 4, up.port, "");
    expect_socks("BIND", &f, req, n, 7);
    n = socks_request(req, 3, 1, (unsigned char[4]){127, 0, 0, 1}, 4, up.port, "");
    expect_socks("UDP ASSOCIATE", &f, req, n, 7);
    n = socks_request(req, 1, 9, (unsigned char[4]){127, 0, 0, 1}, 4, up.port, "");
    expect_socks("address type 9", &f, req, n, 8);
    n = socks_domain(req, "a\0b.com", 7, 443, "");
    expect_socks("a NUL in the name", &f, req, n, 1);
    n = socks_domain(req, "", 0, 443, "");
    expect_socks("an empty name", &f, req, n, 1);
    /* longer than any DNS name: refused as a bad name (it used to overflow the host buffer) */
    char toolong[256];
    memset(toolong, 'b', sizeof toolong);
    n = socks_domain(req, toolong, 254, 443, "");
    expect_socks("a 254-byte name", &f, req, n, 1);
    n = socks_domain(req, toolong, 255, 443, "");
    expect_socks("a 255-byte name", &f, req, n, 1);

    /* a request of another version: closed, with no reply to it (the method choice, when it was sent
     * before the request arrived, is all the client gets) */
    n = socks_request(req, 1, 1, (unsigned char[4]){127, 0, 0, 1}, 4, up.port, "");
    req[3] = 4;
    r = exchange(&f, req, n, reply, sizeof reply);
    assert_true(r == 0 || (r == 2 && reply[1] == 0));
    /* a greeting cut short: closed without a word */
    r = exchange(&f, "\x05\x02\x00", 3, reply, sizeof reply);
    assert_int_equal(r, 0);

    json_t *log = stop(&f);
    assert_int_equal(json_array_size(log), 6);
    expect_entry(log, 0, "socks5", "127.0.0.1", up.port, "127.0.0.1", true, NULL);
    expect_entry(log, 1, "socks5", "example.com", 443, NULL, false, "not allowed");
    expect_entry(log, 2, "socks5", "::1", up.port, NULL, false, NULL);
    expect_entry(log, 3, "socks5", "127.0.0.1", up.port + 1, NULL, false, NULL);
    assert_int_equal(strlen(log_str(json_array_get(log, 4), "host")), FB_NET_MAX_HOST);
    expect_entry(log, 5, "socks5", "ctl?name", 443, NULL, false, NULL); /* the log is text */
    json_decref(log);
}

/* ---- both ---- */

static char g_checked[256];

static int deny_check(void *ctx, const char *host, uint16_t port, const char *address, char *reason, size_t cap)
{
    (void)ctx;
    snprintf(g_checked, sizeof g_checked, "%s %u %s", host, (unsigned)port, address);
    snprintf(reason, cap, "not today");
    return 0;
}

static int allow_check(void *ctx, const char *host, uint16_t port, const char *address, char *reason, size_t cap)
{
    (void)ctx, (void)reason, (void)cap;
    snprintf(g_checked, sizeof g_checked, "%s %u %s", host, (unsigned)port, address);
    return 1;
}

static void test_host_callback(void **state)
{
    (void)state;
    fixture f;
    char req[256], reply[REPLY_MAX], want[128];
    g_check = deny_check;
    start_default(&f);
    snprintf(req, sizeof req, "CONNECT 127.0.0.1:%u HTTP/1.1\r\n\r\n", up.port);
    exchange_text(&f, req, reply, sizeof reply);
    assert_true(strncmp(reply, "HTTP/1.1 403 ", 13) == 0);
    assert_non_null(strstr(reply, "fnbox proxy: denied by the host: not today"));
    snprintf(want, sizeof want, "127.0.0.1 %u 127.0.0.1", up.port);
    assert_string_equal(g_checked, want);
    g_checked[0] = '\0';
    exchange_text(&f, "CONNECT example.com:443 HTTP/1.1\r\n\r\n", reply, sizeof reply);
    assert_string_equal(g_checked, ""); /* the policy refused first: the host is not asked */
    json_t *log = stop(&f);
    expect_entry(log, 0, "connect", "127.0.0.1", up.port, "127.0.0.1", false, "denied by the host: not today");
    json_decref(log);

    g_check = allow_check;
    start_default(&f);
    exchange_text(&f, req, reply, sizeof reply);
    assert_string_equal(reply, "HTTP/1.1 200 Connection established\r\n\r\npong");
    log = stop(&f);
    expect_entry(log, 0, "connect", "127.0.0.1", up.port, "127.0.0.1", true, NULL);
    json_decref(log);
    g_check = NULL;
}

static void test_upstream_refused(void **state)
{
    (void)state;
    uint16_t port = closed_port();
    char pat[64];
    snprintf(pat, sizeof pat, "127.0.0.1:%u", (unsigned)port);
    const char *pats[] = {pat};
    fixture f;
    start(&f, pats, 1); /* no "%u": the closed port itself */
    char req[256], reply[REPLY_MAX];
    snprintf(req, sizeof req, "CONNECT 127.0.0.1:%u HTTP/1.1\r\n\r\n", port);
    exchange_text(&f, req, reply, sizeof reply);
    assert_true(strncmp(reply, "HTTP/1.1 502 Bad Gateway\r\n", 26) == 0);
    assert_non_null(strstr(reply, "connect 127.0.0.1: Connection refused"));
    unsigned char sreq[64];
    size_t n = socks_request(sreq, 1, 1, (unsigned char[4]){127, 0, 0, 1}, 4, port, "");
    expect_socks("refused upstream", &f, sreq, n, 5);
    json_t *log = stop(&f);
    assert_int_equal(json_array_size(log), 2);
    expect_entry(log, 0, "connect", "127.0.0.1", port, "127.0.0.1", true, NULL);
    assert_string_equal(log_str(json_array_get(log, 0), "error"), "connect 127.0.0.1: Connection refused");
    expect_entry(log, 1, "socks5", "127.0.0.1", port, "127.0.0.1", true, NULL);
    json_decref(log);
}

/* A name the policy allows is resolved on a look-up thread; here localhost (/etc/hosts), whose loopback
 * address an exact name pattern may reach. */
static void test_resolved_name(void **state)
{
    (void)state;
    static const char *const pats[] = {"localhost:%u"};
    fixture f;
    start(&f, pats, 1);
    char req[256], reply[REPLY_MAX];
    snprintf(req, sizeof req, "CONNECT localhost:%u HTTP/1.1\r\n\r\nping", up.port);
    exchange_text(&f, req, reply, sizeof reply);
    assert_string_equal(reply, "HTTP/1.1 200 Connection established\r\n\r\npong");
    unsigned char sreq[64];
    size_t n = socks_domain(sreq, "localhost", 9, up.port, "");
    expect_socks("socks5h localhost", &f, sreq, n, 0);
    json_t *log = stop(&f);
    expect_entry(log, 0, "connect", "localhost", up.port, "127.0.0.1", true, "localhost");
    expect_entry(log, 1, "socks5", "localhost", up.port, "127.0.0.1", true, "localhost");
    json_decref(log);
}

/* FB_PROXY_MAX_CONNS at once: the next one is accepted, closed and logged. */
static void test_connection_cap(void **state)
{
    (void)state;
    fixture f;
    start_default(&f);
    int fds[FB_PROXY_MAX_CONNS + 1];
    for (int i = 0; i < FB_PROXY_MAX_CONNS; i++) {
        fds[i] = connect_proxy(&f);
        assert_int_equal(send(fds[i], "G", 1, MSG_NOSIGNAL), 1); /* a head begun, never finished */
    }
    usleep(200 * 1000); /* the proxy takes them all in (16 per round) */
    fds[FB_PROXY_MAX_CONNS] = connect_proxy(&f);
    char reply[64];
    assert_int_equal(read_all(fds[FB_PROXY_MAX_CONNS], reply, sizeof reply), 0);
    for (int i = 0; i <= FB_PROXY_MAX_CONNS; i++)
        close(fds[i]);
    json_t *log = stop(&f);
    assert_int_equal(json_array_size(log), 1);
    const json_t *e = json_array_get(log, 0);
    assert_true(json_is_null(json_object_get(e, "protocol")));
    assert_true(json_is_null(json_object_get(e, "host")));
    assert_true(json_is_false(json_object_get(e, "allowed")));
    assert_non_null(strstr(log_str(e, "reason"), "too many concurrent connections (at most 64)"));
    json_decref(log);
}

static void test_api_edges(void **state)
{
    (void)state;
    json_t *log = log_json(NULL);
    assert_true(json_is_array(log));
    assert_int_equal(json_array_size(log), 0);
    json_decref(log);
    assert_int_equal(fb_proxy_log_dropped(NULL), 0);
    fb_proxy_stop(NULL);
    fb_proxy_free(NULL);
    static const char *const want[] = {
        "HTTP_PROXY=http://127.0.0.1:3128", "HTTPS_PROXY=http://127.0.0.1:3128", "http_proxy=http://127.0.0.1:3128",
        "https_proxy=http://127.0.0.1:3128", "ALL_PROXY=socks5h://127.0.0.1:3128",
        "all_proxy=socks5h://127.0.0.1:3128", "NO_PROXY=", "no_proxy=", NULL,
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        if (!want[i]) {
            assert_null(fb_proxy_env[i]);
            break;
        }
        assert_string_equal(fb_proxy_env[i], want[i]);
    }
    /* a socket that cannot be made non-blocking is refused (and closed) */
    fb_proxy *p = NULL;
    fb_error err = {0};
    assert_int_equal(fb_proxy_start(-1, NULL, &p, &err), -1);
    assert_null(p);
    assert_string_equal(fb_error_type(&err), "SandboxSetupFailed");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_http_connect_tunnel), cmocka_unit_test(test_http_forward),
        cmocka_unit_test(test_http_refusals),       cmocka_unit_test(test_http_head_limits),
        cmocka_unit_test(test_socks5_connect),      cmocka_unit_test(test_socks5_refusals),
        cmocka_unit_test(test_host_callback),       cmocka_unit_test(test_upstream_refused),
        cmocka_unit_test(test_resolved_name),       cmocka_unit_test(test_connection_cap),
        cmocka_unit_test(test_api_edges),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
