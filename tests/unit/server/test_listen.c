/* `--listen` (server/http/listen.c): the spec's grammar, the loopback rule when no token is configured,
 * and a unix socket's life (mode 0600, a stale file replaced, a live one refused, removed at the end). */
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
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "server/http/listen.h"

static void test_parse(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        bool unix_socket;
        const char *host, *port, *path;
    } k_ok[] = {
        {"127.0.0.1:8080", false, "127.0.0.1", "8080", ""},
        {"localhost:0", false, "localhost", "0", ""},
        {":8080", false, "", "8080", ""},
        {"[::1]:65535", false, "::1", "65535", ""},
        {"0.0.0.0:00080", false, "0.0.0.0", "80", ""},
        {"unix:/run/fnbox.sock", true, "", "", "/run/fnbox.sock"},
        {"unix:rel.sock", true, "", "", "rel.sock"},
    };
    for (size_t i = 0; i < sizeof k_ok / sizeof *k_ok; i++) {
        fb_http_listen_spec s;
        fb_error err = {0};
        if (fb_http_listen_parse(k_ok[i].text, &s, &err) != 0)
            fail_msg("%s: %s", k_ok[i].text, err.message);
        assert_int_equal(s.unix_socket, k_ok[i].unix_socket);
        assert_string_equal(s.host, k_ok[i].host);
        assert_string_equal(s.port, k_ok[i].port);
        assert_string_equal(s.path, k_ok[i].path);
    }
    static const struct {
        const char *text, *message;
    } k_bad[] = {
        {"", "--listen: empty"},
        {"8080", "expected HOST:PORT"},
        {"127.0.0.1:", "the port must be 0 to 65535"},
        {"127.0.0.1:65536", "the port must be 0 to 65535"},
        {"127.0.0.1:80x", "the port must be a number"},
        {"127.0.0.1:-1", "the port must be a number"},
        {"127.0.0.1:123456", "the port must be a number"},
        {"::1:8080", "an IPv6 address goes in brackets"},
        {"[::1]8080", "expected [IPV6]:PORT"},
        {"[::1", "expected [IPV6]:PORT"},
        {"unix:", "a socket path is needed"},
    };
    for (size_t i = 0; i < sizeof k_bad / sizeof *k_bad; i++) {
        fb_http_listen_spec s;
        fb_error err = {0};
        if (fb_http_listen_parse(k_bad[i].text, &s, &err) != -1 || !strstr(err.message, k_bad[i].message) ||
            err.kind != FB_ERR_INVALID_REQUEST)
            fail_msg("%s: '%s'", k_bad[i].text, err.message);
    }
    char longpath[200] = "unix:/";
    memset(longpath + 6, 'a', 150);
    fb_http_listen_spec s;
    fb_error err = {0};
    assert_int_equal(fb_http_listen_parse(longpath, &s, &err), -1);
    assert_non_null(strstr(err.message, "longer than 107 bytes"));
}

static int open_spec(const char *text, bool require_loopback, fb_http_listener *l, fb_error *err)
{
    fb_http_listen_spec s;
    if (fb_http_listen_parse(text, &s, err) < 0)
        return -1;
    int rc = fb_http_listener_open(&s, require_loopback, l, err);
    if (rc < 0)
        print_message("%s: %s\n", text, err->message);
    return rc;
}

static void test_loopback_rule(void **state)
{
    (void)state;
    fb_http_listener l;
    fb_error err = {0};
    assert_int_equal(open_spec("127.0.0.1:0", true, &l, &err), 0);
    assert_true(l.loopback);
    assert_true(strncmp(l.address, "127.0.0.1:", 10) == 0);
    assert_string_not_equal(l.address, "127.0.0.1:0"); /* the port the kernel chose */
    fb_http_listener_close(&l);
    fb_http_listener_close(&l); /* idempotent */
    assert_int_equal(open_spec("0.0.0.0:0", true, &l, &err), -1);
    assert_non_null(strstr(err.message, "is not a loopback address"));
    assert_non_null(strstr(err.message, "--token-file"));
    assert_int_equal(l.fd, -1);
    assert_int_equal(open_spec(":0", true, &l, &err), -1);
    assert_int_equal(open_spec("0.0.0.0:0", false, &l, &err), 0); /* with tokens */
    assert_false(l.loopback);
    fb_http_listener_close(&l);
}

static void test_unix_socket(void **state)
{
    (void)state;
    char dir[] = "/tmp/fnbox-test-listen.XXXXXX";
    assert_non_null(mkdtemp(dir));
    char spec[160], path[128];
    snprintf(path, sizeof path, "%s/s.sock", dir);
    snprintf(spec, sizeof spec, "unix:%s", path);
    fb_http_listener l, other;
    fb_error err = {0};
    assert_int_equal(open_spec(spec, true, &l, &err), 0);
    assert_true(l.loopback);
    struct stat st;
    assert_int_equal(lstat(path, &st), 0);
    assert_true(S_ISSOCK(st.st_mode));
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_int_equal(open_spec(spec, true, &other, &err), -1); /* a server answers there */
    assert_non_null(strstr(err.message, "already answers"));
    /* the socket closed but its file left behind, as after a crash: replaced */
    close(l.fd);
    l.fd = -1;
    assert_int_equal(open_spec(spec, true, &other, &err), 0);
    fb_http_listener_close(&l); /* not its file any more: left alone */
    assert_int_equal(lstat(path, &st), 0);
    fb_http_listener_close(&other);
    assert_int_equal(lstat(path, &st), -1); /* removed */
    /* not a socket: refused, untouched */
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fclose(f);
    assert_int_equal(open_spec(spec, true, &l, &err), -1);
    assert_non_null(strstr(err.message, "exists and is not a socket"));
    assert_int_equal(lstat(path, &st), 0);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_loopback_rule),
        cmocka_unit_test(test_unix_socket),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
