/* The C API's per-access permission callbacks (fnbox_call_options network and fs), end to end: real calls
 * through fnbox_call, in the real sandbox, with the host's answers deciding.
 *   network: an HTTP server on this process's 127.0.0.1 (reachable from the sandbox only through fnbox's
 *            proxy, and only because the policy names it literally); the callback refuses a named host or
 *            an address, the function's request fails (HTTP 403), the result's `network` log says
 *            "denied by the host: <reason>", and the server never sees the refused request.
 *   fs:      a host directory mounted at /data whose rules allow creating and modifying files in out/; the
 *            callback refuses "modify" of one file (PermissionError / EACCES in the function, files.denied
 *            with rule "callback: <reason>", the host file untouched) and, asked again just before sync on
 *            the calling thread, one created file (not synced: sync.skipped); the other file is written.
 * Skipped when this machine cannot run calls (fnbox doctor) or has no /dev/fuse. */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
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
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "call_testlib.h"
#include "fnbox.h"
#include "net/proxy.h"
#include "sandbox/sandbox.h"

/* The proxy's environment (net/) names the port the sandbox's init listens on (sandbox/); neither layer
 * includes the other, so the two constants are held together here, where the network tests join them. */
_Static_assert(FB_PROXY_PORT == FB_SANDBOX_PROXY_PORT, "fb_proxy_env must name the sandbox's proxy port");

/* ---- what the callbacks were asked, and how they answer ---- */

typedef struct host {
    pthread_mutex_t mu;      /* the callbacks run on fnbox's threads, possibly at once */
    pthread_t caller;        /* the thread that called fnbox_call */
    char log[8192];          /* "net HOST PORT ADDRESS;" / "fs OP PATH @mount|@caller;" */
    const char *deny_host;   /* network: refuse this host name */
    const char *deny_address;/* network: refuse this resolved address */
    const char *deny_modify; /* fs: refuse "modify" of this path */
    const char *deny_read;   /* fs: refuse "read" of this path */
    const char *deny_late;   /* fs: refuse anything on this path, but only when asked on the calling thread */
} host;

static void note(host *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(host *h, const char *fmt, ...)
{
    pthread_mutex_lock(&h->mu);
    size_t n = strlen(h->log);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(h->log + n, sizeof h->log - n, fmt, ap);
    va_end(ap);
    pthread_mutex_unlock(&h->mu);
}

static int net_cb(void *ctx, const char *hostname, unsigned port, const char *address, char *reason, size_t cap)
{
    host *h = ctx;
    note(h, "net %s %u %s;", hostname, port, address);
    if (h->deny_host && strcmp(hostname, h->deny_host) == 0) {
        snprintf(reason, cap, "tenant may not use %s", hostname);
        return 0;
    }
    if (h->deny_address && strcmp(address, h->deny_address) == 0) {
        snprintf(reason, cap, "address %s is off limits", address);
        return 0;
    }
    return 1;
}

static int fs_cb(void *ctx, const char *path, const char *op, char *reason, size_t cap)
{
    host *h = ctx;
    bool on_caller = pthread_equal(pthread_self(), h->caller) != 0;
    note(h, "fs %s %s @%s;", op, path, on_caller ? "caller" : "mount");
    if (h->deny_modify && strcmp(op, "modify") == 0 && strcmp(path, h->deny_modify) == 0) {
        snprintf(reason, cap, "%s is frozen", path);
        return 0;
    }
    if (h->deny_read && strcmp(op, "read") == 0 && strcmp(path, h->deny_read) == 0)
        return 0; /* no reason given */
    if (h->deny_late && on_caller && strcmp(path, h->deny_late) == 0) {
        snprintf(reason, cap, "late check");
        return 0;
    }
    return 1;
}

static void host_init(host *h)
{
    memset(h, 0, sizeof *h);
    pthread_mutex_init(&h->mu, NULL);
    h->caller = pthread_self();
}

static bool logged(host *h, const char *entry)
{
    pthread_mutex_lock(&h->mu);
    bool found = strstr(h->log, entry) != NULL;
    pthread_mutex_unlock(&h->mu);
    return found;
}

static size_t count_logged(host *h, const char *entry)
{
    size_t n = 0;
    pthread_mutex_lock(&h->mu);
    for (const char *p = strstr(h->log, entry); p; p = strstr(p + 1, entry))
        n++;
    pthread_mutex_unlock(&h->mu);
    return n;
}

/* ---- one call ---- */

static json_t *run(const char *request, host *h, size_t size)
{
    fnbox_call_options o = {.size = size, .cancel_fd = -1, .permission_ctx = h, .network = net_cb, .fs = fs_cb};
    char *text = NULL;
    size_t len = 0;
    int rc = fnbox_call(request, strlen(request), &o, &text, &len);
    assert_int_not_equal(rc, FNBOX_NO_RESULT);
    json_error_t e;
    json_t *res = json_loads(text, 0, &e);
    if (!res)
        fail_msg("result is not JSON: %s: %s", e.text, text);
    if (rc != FNBOX_OK)
        fail_msg("fnbox_call returned %d: %s", rc, text);
    const char *status = json_string_value(json_object_get(res, "status"));
    if (!status || strcmp(status, "success") != 0)
        fail_msg("call did not succeed: %s", text);
    fnbox_free(text);
    return res;
}

static const char *str_at(json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    if (!s) {
        char *dump = json_dumps(o, JSON_COMPACT);
        fail_msg("no string \"%s\" in %s", key, dump ? dump : "?");
    }
    return s;
}

/* ---- a host HTTP server: answers "hello <path>" and records every path it served ---- */

typedef struct server {
    int fd;
    unsigned port;
    pthread_t thread;
    pthread_mutex_t mu;
    char seen[1024];
} server;

static void *serve(void *arg)
{
    server *s = arg;
    for (;;) {
        int c = accept(s->fd, NULL, NULL);
        if (c < 0)
            break; /* shut down */
        char head[4096];
        size_t n = 0;
        while (n < sizeof head - 1 && !memmem(head, n, "\r\n\r\n", 4)) {
            ssize_t r = read(c, head + n, sizeof head - 1 - n);
            if (r <= 0)
                break;
            n += (size_t)r;
        }
        head[n] = '\0';
        char path[256] = "?";
        sscanf(head, "GET %255s", path);
        pthread_mutex_lock(&s->mu);
        snprintf(s->seen + strlen(s->seen), sizeof s->seen - strlen(s->seen), "%s;", path);
        pthread_mutex_unlock(&s->mu);
        char reply[512];
        int body = (int)strlen("hello ") + (int)strlen(path);
        int len = snprintf(reply, sizeof reply, "HTTP/1.0 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n"
                           "hello %s", body, path);
        (void)!send(c, reply, (size_t)len, MSG_NOSIGNAL);
        close(c);
    }
    return NULL;
}

static void server_start(server *s)
{
    memset(s, 0, sizeof *s);
    pthread_mutex_init(&s->mu, NULL);
    s->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(s->fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    assert_int_equal(bind(s->fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(s->fd, 16), 0);
    assert_int_equal(getsockname(s->fd, (struct sockaddr *)&a, &alen), 0);
    s->port = ntohs(a.sin_port);
    assert_int_equal(pthread_create(&s->thread, NULL, serve, s), 0);
}

static void server_stop(server *s)
{
    shutdown(s->fd, SHUT_RDWR); /* wakes accept() */
    pthread_join(s->thread, NULL);
    close(s->fd);
    pthread_mutex_destroy(&s->mu);
}

/* The `network` log entry for host, or fail. */
static json_t *log_entry(json_t *res, const char *hostname)
{
    json_t *log = json_object_get(res, "network"), *e;
    size_t i;
    json_array_foreach(log, i, e) {
        if (strcmp(str_at(e, "host"), hostname) == 0)
            return e;
    }
    char *dump = json_dumps(log, JSON_COMPACT);
    fail_msg("no network log entry for %s in %s", hostname, dump ? dump : "null");
    return NULL;
}

/* ---- network ---- */

/* Calls f(port) in lang with permissions.network = [network] (JSON strings, comma-separated), the host's
 * callbacks deciding each connection. */
static json_t *run_fetch(const char *lang, const char *code, unsigned port, const char *network, host *h)
{
    char *code_json = fbt_json_quote(code);
    char request[4096];
    snprintf(request, sizeof request,
             "{\"language\":\"%s\",\"code\":%s,\"functionName\":\"f\",\"args\":[%u],"
             "\"permissions\":{\"network\":[%s]}}", lang, code_json, port, network);
    free(code_json);
    return run(request, h, sizeof(fnbox_call_options));
}

static const char k_py_fetch[] =
    "import urllib.request, urllib.error\n"
    "def f(port):\n"
    "    out = {}\n"
    "    for key, url in (('ip', 'http://127.0.0.1:%d/ip' % port), ('again', 'http://127.0.0.1:%d/again' % port),\n"
    "                     ('name', 'http://localhost:%d/name' % port)):\n"
    "        try:\n"
    "            out[key] = urllib.request.urlopen(url, timeout=10).read().decode()\n"
    "        except urllib.error.HTTPError as e:\n"
    "            out[key] = 'HTTP %d %s' % (e.code, e.read().decode())\n"
    "        except Exception as e:\n"
    "            out[key] = 'ERR ' + type(e).__name__ + ' ' + str(e)\n"
    "    return out\n";

/* Python (urllib, HTTP_PROXY): the callback refuses the named host "localhost", allows 127.0.0.1. */
static void test_network_python(void **state)
{
    (void)state;
    if (!fbt_can_run(false))
        skip();
    server s;
    server_start(&s);
    host h;
    host_init(&h);
    h.deny_host = "localhost";
    char network[128];
    snprintf(network, sizeof network, "\"127.0.0.1:%u\",\"localhost:%u\"", s.port, s.port);
    json_t *res = run_fetch("python", k_py_fetch, s.port, network, &h);
    json_t *out = json_object_get(res, "result");
    char want[64];

    /* allowed: fetched, and asked each time (nothing cached) */
    snprintf(want, sizeof want, "hello /ip");
    assert_string_equal(str_at(out, "ip"), want);
    assert_string_equal(str_at(out, "again"), "hello /again");
    snprintf(want, sizeof want, "net 127.0.0.1 %u 127.0.0.1;", s.port);
    assert_int_equal(count_logged(&h, want), 2);

    /* refused by the host: the function sees a 403 carrying the reason, the server sees nothing */
    const char *name = str_at(out, "name");
    if (strncmp(name, "HTTP 403", 8) != 0 || !strstr(name, "denied by the host: tenant may not use localhost"))
        fail_msg("the refused fetch got: %s", name);
    snprintf(want, sizeof want, "net localhost %u ", s.port);
    assert_true(logged(&h, want));
    pthread_mutex_lock(&s.mu);
    assert_string_equal(s.seen, "/ip;/again;");
    pthread_mutex_unlock(&s.mu);

    /* the result's log */
    json_t *e = log_entry(res, "localhost");
    assert_false(json_is_true(json_object_get(e, "allowed")));
    assert_string_equal(str_at(e, "reason"), "denied by the host: tenant may not use localhost");
    assert_non_null(json_string_value(json_object_get(e, "address"))); /* refused after resolution */
    e = log_entry(res, "127.0.0.1");
    assert_true(json_is_true(json_object_get(e, "allowed")));

    json_decref(res);
    server_stop(&s);
    pthread_mutex_destroy(&h.mu);
}

static const char k_js_fetch[] =
    "const http = require('http');\n"
    "function viaProxy(url) {\n"
    "  return new Promise((resolve) => {\n"
    "    const u = new URL(url);\n"
    "    const r = http.request({ host: '127.0.0.1', port: 3128, path: url, headers: { Host: u.host } },\n"
    "      (res) => { let b = ''; res.setEncoding('utf8'); res.on('data', (d) => { b += d; });\n"
    "                 res.on('end', () => resolve({ status: res.statusCode, body: b })); });\n"
    "    r.on('error', (e) => resolve({ status: 0, body: String(e.code || e.message) }));\n"
    "    r.end();\n"
    "  });\n"
    "}\n"
    "async function f(port) { return await viaProxy('http://127.0.0.1:' + port + '/js'); }\n";

/* JavaScript (http.request through the proxy): the callback refuses by resolved address. */
static void test_network_javascript(void **state)
{
    (void)state;
    if (!fbt_can_run(false))
        skip();
    server s;
    server_start(&s);
    host h;
    host_init(&h);
    h.deny_address = "127.0.0.1";
    char network[64];
    snprintf(network, sizeof network, "\"127.0.0.1:%u\"", s.port);
    json_t *res = run_fetch("javascript", k_js_fetch, s.port, network, &h);
    json_t *out = json_object_get(res, "result");
    assert_int_equal(json_integer_value(json_object_get(out, "status")), 403);
    assert_non_null(strstr(str_at(out, "body"), "denied by the host: address 127.0.0.1 is off limits"));
    json_t *e = log_entry(res, "127.0.0.1");
    assert_false(json_is_true(json_object_get(e, "allowed")));
    assert_string_equal(str_at(e, "reason"), "denied by the host: address 127.0.0.1 is off limits");
    assert_string_equal(str_at(e, "address"), "127.0.0.1");
    pthread_mutex_lock(&s.mu);
    assert_string_equal(s.seen, "");
    pthread_mutex_unlock(&s.mu);
    json_decref(res);
    server_stop(&s);
    pthread_mutex_destroy(&h.mu);
}

/* ---- fs ---- */

static void remove_tree(const char *dir)
{
    const char *names[] = {"out/a.txt", "out/b.txt", "out/late.txt", "in/secret.txt", "out", "in"};
    char p[512];
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        if (unlink(p) < 0)
            rmdir(p);
    }
    rmdir(dir);
}

static void make_tree(char *dir)
{
    assert_non_null(mkdtemp(dir));
    chmod(dir, 0755);
    char p[512];
    snprintf(p, sizeof p, "%s/out", dir);
    assert_int_equal(mkdir(p, 0755), 0);
    snprintf(p, sizeof p, "%s/in", dir);
    assert_int_equal(mkdir(p, 0755), 0);
    fbt_write_file(dir, "out/a.txt", "old a");
    fbt_write_file(dir, "out/b.txt", "old b");
    fbt_write_file(dir, "in/secret.txt", "secret");
}

static const char k_py_write[] =
    "def f():\n"
    "    out = {}\n"
    "    for name in ('a', 'b', 'late'):\n"
    "        try:\n"
    "            with open('/data/out/%s.txt' % name, 'w') as fh:\n"
    "                fh.write('new ' + name)\n"
    "            out[name] = 'ok'\n"
    "        except OSError as e:\n"
    "            out[name] = '%s %d' % (type(e).__name__, e.errno)\n"
    "    for key, path in (('b_now', '/data/out/b.txt'), ('secret', '/data/in/secret.txt')):\n"
    "        try:\n"
    "            out[key] = open(path).read()\n"
    "        except OSError as e:\n"
    "            out[key] = '%s %d' % (type(e).__name__, e.errno)\n"
    "    return out\n";

static json_t *fs_call(const char *dir, const char *on_denied, host *h, size_t size)
{
    char *code_json = fbt_json_quote(k_py_write);
    char request[4096];
    snprintf(request, sizeof request,
             "{\"language\":\"python\",\"code\":%s,\"functionName\":\"f\",\"mount\":{\"dirs\":{\"/data\":\"%s\"},"
             "\"permissions\":{\"default\":{\"read\":true,\"list\":true},"
             "\"rules\":[{\"pattern\":\"out/**\",\"allow\":[\"create\",\"modify\"]}]},"
             "\"sync\":{\"mode\":\"batch\"},\"onPermissionDenied\":\"%s\"}}", code_json, dir, on_denied);
    json_t *res = run(request, h, size);
    free(code_json);
    return res;
}

static void assert_denied(json_t *res, const char *path, const char *op, const char *rule)
{
    json_t *denied = json_object_get(json_object_get(res, "files"), "denied"), *d;
    size_t i;
    json_array_foreach(denied, i, d) {
        if (strcmp(str_at(d, "path"), path) == 0 && strcmp(str_at(d, "operation"), op) == 0) {
            assert_string_equal(str_at(d, "rule"), rule);
            return;
        }
    }
    char *dump = json_dumps(denied, JSON_COMPACT);
    fail_msg("no denial of %s %s in files.denied: %s", op, path, dump ? dump : "null");
}

static bool in_array(json_t *arr, const char *path)
{
    json_t *v;
    size_t i;
    json_array_foreach(arr, i, v) {
        const char *s = json_is_string(v) ? json_string_value(v) : json_string_value(json_object_get(v, "path"));
        if (s && strcmp(s, path) == 0)
            return true;
    }
    return false;
}

/* onPermissionDenied "throw": EACCES at the operation, recorded, never synced; the rest is synced. */
static void test_fs_throw(void **state)
{
    (void)state;
    if (!fbt_can_run(true))
        skip();
    char dir[] = "/tmp/fnbox-callbacks.XXXXXX";
    make_tree(dir);
    host h;
    host_init(&h);
    h.deny_modify = "/data/out/b.txt";
    h.deny_read = "/data/in/secret.txt";
    h.deny_late = "/data/out/late.txt";
    json_t *res = fs_call(dir, "throw", &h, sizeof(fnbox_call_options));
    json_t *out = json_object_get(res, "result");

    /* at the operation */
    assert_string_equal(str_at(out, "a"), "ok");
    assert_string_equal(str_at(out, "b"), "PermissionError 13");
    assert_string_equal(str_at(out, "late"), "ok"); /* allowed on the mount thread */
    assert_string_equal(str_at(out, "b_now"), "old b");
    assert_string_equal(str_at(out, "secret"), "PermissionError 13");
    assert_denied(res, "/data/out/b.txt", "modify", "callback: /data/out/b.txt is frozen");
    assert_denied(res, "/data/in/secret.txt", "read", "callback");
    assert_int_equal(json_array_size(json_object_get(json_object_get(res, "files"), "denied")), 2);
    assert_true(logged(&h, "fs modify /data/out/a.txt @mount;"));
    assert_true(logged(&h, "fs read /data/out/b.txt @mount;"));

    /* before sync, on the calling thread: asked again for each change */
    assert_true(logged(&h, "fs modify /data/out/a.txt @caller;"));
    assert_true(logged(&h, "fs create /data/out/late.txt @caller;"));
    assert_false(logged(&h, "/data/out/b.txt @caller;")); /* never a change */
    json_t *sync = json_object_get(res, "sync");
    assert_true(in_array(json_object_get(sync, "synced"), "/data/out/a.txt"));
    assert_false(in_array(json_object_get(sync, "synced"), "/data/out/late.txt"));
    json_t *skipped = json_object_get(sync, "skipped"), *sk;
    size_t i;
    bool found = false;
    json_array_foreach(skipped, i, sk) {
        if (strcmp(str_at(sk, "path"), "/data/out/late.txt") == 0) {
            assert_string_equal(str_at(sk, "rule"), "callback: late check");
            found = true;
        }
    }
    assert_true(found);

    /* the host */
    char text[64];
    bool exists;
    fbt_read_file(dir, "out/a.txt", text, sizeof text, &exists);
    assert_string_equal(text, "new a");
    fbt_read_file(dir, "out/b.txt", text, sizeof text, &exists);
    assert_string_equal(text, "old b");
    fbt_read_file(dir, "out/late.txt", text, sizeof text, &exists);
    assert_false(exists);

    json_decref(res);
    remove_tree(dir);
    pthread_mutex_destroy(&h.mu);
}

/* onPermissionDenied "ignore": the refused write seems to work, has no effect, is recorded, not synced. */
static void test_fs_ignore(void **state)
{
    (void)state;
    if (!fbt_can_run(true))
        skip();
    char dir[] = "/tmp/fnbox-callbacks.XXXXXX";
    make_tree(dir);
    host h;
    host_init(&h);
    h.deny_modify = "/data/out/b.txt";
    json_t *res = fs_call(dir, "ignore", &h, sizeof(fnbox_call_options));
    json_t *out = json_object_get(res, "result");
    assert_string_equal(str_at(out, "b"), "ok");
    assert_string_equal(str_at(out, "b_now"), "old b");
    assert_denied(res, "/data/out/b.txt", "modify", "callback: /data/out/b.txt is frozen");
    assert_false(in_array(json_object_get(json_object_get(res, "files"), "modified"), "/data/out/b.txt"));
    char text[64];
    bool exists;
    fbt_read_file(dir, "out/b.txt", text, sizeof text, &exists);
    assert_string_equal(text, "old b");
    fbt_read_file(dir, "out/a.txt", text, sizeof text, &exists);
    assert_string_equal(text, "new a");
    json_decref(res);
    remove_tree(dir);
    pthread_mutex_destroy(&h.mu);
}

/* An older caller's smaller struct: network and fs are beyond its size, so they are absent (never asked,
 * whatever the memory after it holds). */
static void test_fs_old_struct(void **state)
{
    (void)state;
    if (!fbt_can_run(true))
        skip();
    char dir[] = "/tmp/fnbox-callbacks.XXXXXX";
    make_tree(dir);
    host h;
    host_init(&h);
    h.deny_modify = "/data/out/b.txt";
    json_t *res = fs_call(dir, "throw", &h, offsetof(fnbox_call_options, network));
    assert_string_equal(str_at(json_object_get(res, "result"), "b"), "ok");
    assert_string_equal(h.log, "");
    char text[64];
    bool exists;
    fbt_read_file(dir, "out/b.txt", text, sizeof text, &exists);
    assert_string_equal(text, "new b");
    json_decref(res);
    remove_tree(dir);
    pthread_mutex_destroy(&h.mu);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_network_python), cmocka_unit_test(test_network_javascript),
        cmocka_unit_test(test_fs_throw),       cmocka_unit_test(test_fs_ignore),
        cmocka_unit_test(test_fs_old_struct),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
