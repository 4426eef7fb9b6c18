/* The capped byte buffer (util/buf.h): a table of (maximum, append sizes) with the bytes kept and whether
 * `truncated` is set, checked after every append (exactly min(total, max) bytes kept, in order, always
 * NUL-terminated); then steal/free and reuse. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util/buf.h"

#define MAX_STEPS 8

typedef struct buf_case {
    const char *label;
    size_t max;
    size_t steps[MAX_STEPS]; /* append sizes */
    size_t nsteps;           /* how many of them */
} buf_case;

#define STEPS(...) {__VA_ARGS__}, sizeof((size_t[]){__VA_ARGS__}) / sizeof(size_t)

static const buf_case cases[] = {
    {"under the maximum", 10, STEPS(3)},
    {"exactly the maximum", 10, STEPS(10)},
    {"one over the maximum", 10, STEPS(11)},
    {"far over the maximum", 10, STEPS(1000)},
    {"two appends reaching the maximum", 10, STEPS(5, 5)},
    {"the append that crosses the maximum", 10, STEPS(5, 6)},
    {"an append after the maximum", 10, STEPS(5, 5, 1)},
    {"an empty append at the maximum", 10, STEPS(10, 0)},
    {"truncated stays set", 10, STEPS(11, 0, 0)},
    {"empty appends only", 10, STEPS(0, 0)},
    {"maximum 0, empty append", 0, STEPS(0)},
    {"maximum 0, one byte", 0, STEPS(1)},
    {"maximum 1", 1, STEPS(1, 1)},
    {"growing past the first allocation", 1000, STEPS(255, 1, 1, 300, 443)},
    {"growing and truncated", 1000, STEPS(600, 600)},
    {"many small appends", 300, STEPS(37, 37, 37, 37, 37, 37, 37, 37)},
    {"large", 1 << 20, STEPS(1 << 19, 1 << 19, 1)},
    {"no real maximum", SIZE_MAX / 2, STEPS(100, 100000)},
};

/* The bytes appended in step s: a pattern that differs per step and per offset, with NULs in it. */
static void fill(char *p, size_t n, size_t s)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (char)((i * 7 + s * 31) % 251);
}

static void test_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const buf_case *c = &cases[i];
        fb_buf b;
        memset(&b, 0x5A, sizeof b);
        fb_buf_init(&b, c->max);
        assert_null(b.data);
        assert_int_equal(b.len, 0);
        assert_int_equal(b.max, c->max);
        assert_false(b.truncated);
        size_t total = 0;
        size_t keep_cap = 0;
        for (size_t s = 0; s < c->nsteps; s++)
            keep_cap += c->steps[s];
        char *want = malloc(keep_cap + 1);
        assert_non_null(want);
        size_t want_len = 0;
        for (size_t s = 0; s < c->nsteps; s++) {
            size_t n = c->steps[s];
            char *chunk = malloc(n ? n : 1);
            assert_non_null(chunk);
            fill(chunk, n, s);
            assert_int_equal(fb_buf_append(&b, chunk, n), 0);
            total += n;
            size_t room = c->max - want_len;
            size_t kept = n < room ? n : room;
            memcpy(want + want_len, chunk, kept);
            want_len += kept;
            free(chunk);
            if (b.len != want_len)
                fail_msg("%s, step %zu: len %zu, want %zu", c->label, s, b.len, want_len);
            if (b.truncated != (total > c->max))
                fail_msg("%s, step %zu: truncated %d, want %d", c->label, s, b.truncated, total > c->max);
            if (!b.data)
                fail_msg("%s, step %zu: no data after an append", c->label, s);
            if (memcmp(b.data, want, want_len) != 0)
                fail_msg("%s, step %zu: wrong bytes", c->label, s);
            if (b.data[b.len] != '\0')
                fail_msg("%s, step %zu: not NUL-terminated", c->label, s);
            if (b.cap <= b.len)
                fail_msg("%s, step %zu: cap %zu not above len %zu", c->label, s, b.cap, b.len);
        }
        size_t got_len = (size_t)-1;
        char *got = fb_buf_steal(&b, &got_len);
        assert_non_null(got);
        assert_int_equal(got_len, want_len);
        assert_memory_equal(got, want, want_len);
        assert_int_equal(got[got_len], '\0');
        /* the buffer is empty again, keeps its maximum, and can be freed or reused */
        assert_null(b.data);
        assert_int_equal(b.len, 0);
        assert_int_equal(b.cap, 0);
        assert_int_equal(b.max, c->max);
        fb_buf_free(&b);
        free(got);
        free(want);
    }
}

static void test_steal_then_reuse(void **state)
{
    (void)state;
    fb_buf b;
    fb_buf_init(&b, 8);
    assert_int_equal(fb_buf_append(&b, "abc", 3), 0);
    size_t n = 0;
    char *first = fb_buf_steal(&b, &n);
    assert_string_equal(first, "abc");
    assert_int_equal(n, 3);
    /* the stolen data is the caller's: later appends do not touch it */
    assert_int_equal(fb_buf_append(&b, "xyz12345", 8), 0);
    assert_string_equal(first, "abc");
    assert_int_equal(b.len, 8);
    assert_string_equal(b.data, "xyz12345");
    char *second = fb_buf_steal(&b, NULL); /* len is optional */
    assert_string_equal(second, "xyz12345");
    free(first);
    free(second);
    fb_buf_free(&b);
}

static void test_free_twice(void **state)
{
    (void)state;
    fb_buf b;
    fb_buf_init(&b, 100);
    fb_buf_free(&b); /* never used */
    assert_null(b.data);
    assert_int_equal(fb_buf_append(&b, "hello", 5), 0);
    fb_buf_free(&b);
    assert_null(b.data);
    assert_int_equal(b.len, 0);
    assert_int_equal(b.cap, 0);
    fb_buf_free(&b); /* twice is harmless */
    /* usable after a free */
    assert_int_equal(fb_buf_append(&b, "hi", 2), 0);
    assert_string_equal(b.data, "hi");
    fb_buf_free(&b);
}

/* An append of nothing to a fresh buffer gives an empty string, not NULL data. */
static void test_empty_append(void **state)
{
    (void)state;
    fb_buf b;
    fb_buf_init(&b, 4);
    assert_int_equal(fb_buf_append(&b, NULL, 0), 0);
    assert_non_null(b.data);
    assert_string_equal(b.data, "");
    size_t n = 1;
    char *s = fb_buf_steal(&b, &n);
    assert_string_equal(s, "");
    assert_int_equal(n, 0);
    free(s);
}

/* Stealing from a buffer nothing was appended to: "Never NULL unless OOM" and the data is NUL-terminated,
 * so the caller gets "" (valgrind reports it if the block comes back uninitialized). */
static void test_steal_fresh(void **state)
{
    (void)state;
    fb_buf b;
    fb_buf_init(&b, 4);
    size_t n = 1;
    char *s = fb_buf_steal(&b, &n);
    assert_non_null(s);
    assert_int_equal(n, 0);
    assert_int_equal(s[0], '\0');
    free(s);
    fb_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),        cmocka_unit_test(test_steal_then_reuse),
        cmocka_unit_test(test_free_twice),       cmocka_unit_test(test_empty_append),
        cmocka_unit_test(test_steal_fresh),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
