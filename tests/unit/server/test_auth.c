/* Bearer tokens (server/http/auth.c): the token file's grammar (blank lines and surrounding whitespace
 * ignored, an empty file refused, bad lines named by number and never echoed), loading from a file (the
 * group/world-readable warning), and the header check (scheme, spaces, every token, near misses). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "server/http/auth.h"

#define TOK_A "0123456789abcdef0123"
#define TOK_B "Zm5ib3gtc2VjcmV0LXRva2Vu/+=="

static fb_http_tokens g_t; /* 16 KiB: not on the stack */

static int parse(const char *text, fb_error *err)
{
    return fb_http_tokens_parse(text, strlen(text), &g_t, err);
}

static void test_parse_ok(void **state)
{
    (void)state;
    fb_error err = {0};
    assert_int_equal(parse("\n  " TOK_A "  \r\n\n\t" TOK_B "\n\n", &err), 0);
    assert_int_equal(g_t.n, 2);
    assert_int_equal(g_t.len[0], strlen(TOK_A));
    assert_memory_equal(g_t.tok[0], TOK_A, strlen(TOK_A));
    assert_memory_equal(g_t.tok[1], TOK_B, strlen(TOK_B));
    assert_int_equal(parse(TOK_A, &err), 0); /* no final newline */
    assert_int_equal(g_t.n, 1);
}

static void test_parse_refused(void **state)
{
    (void)state;
    static const struct {
        const char *text, *message;
    } k_bad[] = {
        {"", "no token in it"},
        {"\n\n   \n\t\n", "no token in it"},
        {TOK_A "\nshort\n", "line 2: a token is 16 to 256 characters, this one has 5"},
        {"secret token with spaces\n", "line 1: a token is visible ASCII characters without spaces"},
        {"\n\n" TOK_A "\xc3\xa9\n", "line 3: a token is visible ASCII"},
    };
    for (size_t i = 0; i < sizeof k_bad / sizeof *k_bad; i++) {
        fb_error err = {0};
        if (parse(k_bad[i].text, &err) != -1 || err.kind != FB_ERR_INVALID_REQUEST ||
            strncmp(err.message, k_bad[i].message, strlen(k_bad[i].message)) != 0)
            fail_msg("case %zu: '%s'", i, err.message);
        assert_null(strstr(err.message, "spaces\n")); /* the line itself is never echoed */
    }
    char nul[] = TOK_A "\n" TOK_B;
    nul[3] = '\0';
    fb_error err = {0};
    assert_int_equal(fb_http_tokens_parse(nul, sizeof nul - 1, &g_t, &err), -1);
    assert_string_equal(err.message, "line 1: a NUL byte");
}

static void test_parse_bounds(void **state)
{
    (void)state;
    char longest[FB_HTTP_TOKEN_MAX + 2];
    memset(longest, 'x', FB_HTTP_TOKEN_MAX);
    longest[FB_HTTP_TOKEN_MAX] = '\0';
    fb_error err = {0};
    assert_int_equal(parse(longest, &err), 0);
    longest[FB_HTTP_TOKEN_MAX] = 'x';
    longest[FB_HTTP_TOKEN_MAX + 1] = '\0';
    assert_int_equal(parse(longest, &err), -1);
    /* FB_HTTP_TOKENS_MAX lines pass, one more does not */
    size_t cap = (FB_HTTP_TOKENS_MAX + 1) * 20 + 1;
    char *many = calloc(1, cap);
    for (int i = 0; i < FB_HTTP_TOKENS_MAX; i++)
        snprintf(many + strlen(many), cap - strlen(many), "token-%012d\n", i);
    assert_int_equal(parse(many, &err), 0);
    assert_int_equal(g_t.n, FB_HTTP_TOKENS_MAX);
    snprintf(many + strlen(many), cap - strlen(many), "token-one-too-many\n");
    assert_int_equal(parse(many, &err), -1);
    assert_non_null(strstr(err.message, "more than 64 tokens"));
    free(many);
}

static void test_check(void **state)
{
    (void)state;
    fb_error err = {0};
    assert_int_equal(parse(TOK_A "\n" TOK_B "\n", &err), 0);
    assert_true(fb_http_tokens_check(&g_t, "Bearer " TOK_A));
    assert_true(fb_http_tokens_check(&g_t, "Bearer " TOK_B));
    assert_true(fb_http_tokens_check(&g_t, "bearer " TOK_A));   /* the scheme is case-insensitive */
    assert_true(fb_http_tokens_check(&g_t, "BEARER   " TOK_A " ")); /* spaces around the token */
    assert_false(fb_http_tokens_check(&g_t, NULL));
    assert_false(fb_http_tokens_check(&g_t, ""));
    assert_false(fb_http_tokens_check(&g_t, "Bearer"));
    assert_false(fb_http_tokens_check(&g_t, "Bearer "));
    assert_false(fb_http_tokens_check(&g_t, TOK_A));
    assert_false(fb_http_tokens_check(&g_t, "Basic " TOK_A));
    assert_false(fb_http_tokens_check(&g_t, "Bearer" TOK_A));
    assert_false(fb_http_tokens_check(&g_t, "Bearer " TOK_A "x"));     /* longer */
    assert_false(fb_http_tokens_check(&g_t, "Bearer 0123456789abcdef012")); /* a prefix */
    assert_false(fb_http_tokens_check(&g_t, "Bearer 0123456789abcdef0124")); /* last byte differs */
    assert_false(fb_http_tokens_check(&g_t, "Bearer 1123456789abcdef0123")); /* first byte differs */
    assert_false(fb_http_tokens_check(&g_t, "Bearer " TOK_A " " TOK_B));
    assert_false(fb_http_tokens_check(NULL, "Bearer " TOK_A));
    /* an empty presented token never matches an unused (zero) slot */
    char longer[FB_HTTP_TOKEN_MAX + 16] = "Bearer ";
    memset(longer + 7, 'x', FB_HTTP_TOKEN_MAX + 1);
    assert_false(fb_http_tokens_check(&g_t, longer));
}

static void test_load(void **state)
{
    (void)state;
    char path[] = "/tmp/fnbox-test-tokens.XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, TOK_A "\n", strlen(TOK_A) + 1), (ssize_t)strlen(TOK_A) + 1);
    close(fd);
    bool insecure = true;
    fb_error err = {0};
    assert_int_equal(chmod(path, 0600), 0);
    assert_int_equal(fb_http_tokens_load(path, &g_t, &insecure, &err), 0);
    assert_false(insecure);
    assert_true(fb_http_tokens_check(&g_t, "Bearer " TOK_A));
    assert_int_equal(chmod(path, 0640), 0);
    assert_int_equal(fb_http_tokens_load(path, &g_t, &insecure, &err), 0);
    assert_true(insecure);
    assert_int_equal(truncate(path, 0), 0);
    assert_int_equal(fb_http_tokens_load(path, &g_t, &insecure, &err), -1);
    assert_non_null(strstr(err.message, "no token in it"));
    assert_non_null(strstr(err.message, path));
    unlink(path);
    assert_int_equal(fb_http_tokens_load(path, &g_t, &insecure, &err), -1);
    assert_non_null(strstr(err.message, "No such file"));
    assert_int_equal(fb_http_tokens_load("/tmp", &g_t, &insecure, &err), -1);
    assert_non_null(strstr(err.message, "not a regular file"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_ok),   cmocka_unit_test(test_parse_refused), cmocka_unit_test(test_parse_bounds),
        cmocka_unit_test(test_check),      cmocka_unit_test(test_load),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
