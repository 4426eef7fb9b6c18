/* core/output.c: the output callback's chunks. Property: whatever the reads look like (any split, even
 * inside a character) and whatever the bytes (valid, invalid, truncated UTF-8), a stream's chunks joined
 * are fb_utf8_sanitize of its first `cap` bytes, which is what core/result.c puts in the result; every
 * chunk is valid UTF-8 and none is empty. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/output.h"
#include "util/utf8.h"

typedef struct sink {
    char data[2][1 << 16];
    size_t len[2];
    size_t chunks;
    int bad; /* empty or invalid chunks seen */
} sink;

static void collect(void *ctx, const char *stream, const char *data, size_t len)
{
    sink *s = ctx;
    int i = strcmp(stream, "stdout") == 0 ? 0 : 1;
    size_t clean_len = 0;
    char *clean = fb_utf8_sanitize(data, len, &clean_len);
    if (len == 0 || !clean || clean_len != len || memcmp(clean, data, len) != 0)
        s->bad++; /* a chunk must already be valid UTF-8 */
    free(clean);
    if (s->len[i] + len <= sizeof s->data[i]) {
        memcpy(s->data[i] + s->len[i], data, len);
        s->len[i] += len;
    }
    s->chunks++;
}

/* Feeds raw to stream 1 in pieces of the given sizes (cycled), then finishes; checks the property. */
static void check(const unsigned char *raw, size_t n, uint64_t cap, const size_t *sizes, size_t nsizes)
{
    static sink s;
    memset(&s, 0, sizeof s);
    fb_output o;
    fb_output_init(&o, collect, &s, cap, 1);
    for (size_t off = 0, k = 0; off < n; k++) {
        size_t step = sizes[k % nsizes];
        if (step > n - off)
            step = n - off;
        fb_output_chunk(&o, 1, (const char *)raw + off, step);
        off += step;
    }
    fb_output_finish(&o);
    size_t keep = n < cap ? n : (size_t)cap, want_len = 0;
    char *want = fb_utf8_sanitize((const char *)raw, keep, &want_len);
    assert_non_null(want);
    assert_int_equal(s.bad, 0);
    assert_int_equal(s.len[0], want_len);
    assert_memory_equal(s.data[0], want, want_len);
    assert_int_equal(s.len[1], 0);
    free(want);
}

static const char *const k_texts[] = {
    "plain ascii\n",
    "h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80 end",      /* 2-, 3- and 4-byte characters */
    "\xff\xfe\x80\xbf bad \xc0\xaf \xed\xa0\x80 \xf4\x90\x80\x80", /* invalid, overlong, surrogate, > U+10FFFF */
    "cut \xe2\x82",                                         /* truncated at the end */
    "\xf0\x9f\x98",                                         /* nothing but a truncated character */
    "\xc3\xc3\xa9\xe2\xe2\x82\xac",                         /* a lead byte followed by another lead */
};

static void test_every_split(void **state)
{
    (void)state;
    for (size_t t = 0; t < sizeof k_texts / sizeof *k_texts; t++) {
        const unsigned char *raw = (const unsigned char *)k_texts[t];
        size_t n = strlen(k_texts[t]);
        for (size_t a = 1; a <= n; a++)
            for (size_t b = 1; b <= 4; b++) {
                size_t sizes[] = {a, b};
                for (uint64_t cap = 0; cap <= n + 1; cap++)
                    check(raw, n, cap, sizes, 2);
            }
    }
}

/* Random bytes biased towards UTF-8 structure, random reads, random caps. */
static void test_random(void **state)
{
    (void)state;
    static unsigned char raw[4096];
    srand(12345);
    for (int round = 0; round < 300; round++) {
        size_t n = (size_t)(rand() % (int)sizeof raw);
        for (size_t i = 0; i < n; i++) {
            static const unsigned char pool[] = {'a', '\n', 0xc3, 0xa9, 0xe2, 0x82, 0xac, 0xf0, 0x9f, 0x98,
                                                 0x80, 0xff, 0xc0, 0xed, 0xa0, 0xf4, 0x90, 0xbf};
            raw[i] = pool[rand() % (int)sizeof pool];
        }
        size_t sizes[3] = {(size_t)(rand() % 7 + 1), (size_t)(rand() % 300 + 1), 1};
        uint64_t cap = rand() % 2 ? n : (uint64_t)(rand() % (int)(n + 1));
        check(raw, n, cap, sizes, 3);
    }
}

/* Streams are independent: a character split on stdout is not completed by stderr's bytes. */
static void test_streams_apart(void **state)
{
    (void)state;
    static sink s;
    memset(&s, 0, sizeof s);
    fb_output o;
    fb_output_init(&o, collect, &s, 100, 100);
    fb_output_chunk(&o, 1, "\xc3", 1);
    fb_output_chunk(&o, 2, "\xa9", 1);
    fb_output_chunk(&o, 1, "\xa9", 1);
    fb_output_chunk(&o, 3, "ignored", 7);
    fb_output_finish(&o);
    assert_int_equal(s.len[0], 2);
    assert_memory_equal(s.data[0], "\xc3\xa9", 2);
    assert_int_equal(s.len[1], 3);
    assert_memory_equal(s.data[1], "\xef\xbf\xbd", 3);
    assert_int_equal(s.bad, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_split),
        cmocka_unit_test(test_random),
        cmocka_unit_test(test_streams_apart),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
