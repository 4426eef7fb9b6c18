/* UTF-8 sanitizing (util/utf8.h): a table of byte strings and the exact bytes fb_utf8_sanitize must
 * return. Valid RFC 3629 UTF-8 is copied unchanged; each byte that does not start a valid sequence becomes
 * U+FFFD (EF BF BD) and decoding resumes at the next byte, so an overlong, surrogate or out-of-range
 * sequence of n bytes gives n replacements, and so does a sequence truncated after n bytes. Input is
 * length-based: NUL is an ordinary character. Inputs are copied into buffers of exactly their length so
 * ASan sees any over-read. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util/utf8.h"

#define R "\xEF\xBF\xBD" /* U+FFFD */
#define B(s) s, sizeof(s) - 1 /* a literal with its length, embedded NULs included */

typedef struct utf8_case {
    const char *label;
    const char *in;
    size_t in_len;
    const char *want;
    size_t want_len;
} utf8_case;

static const utf8_case cases[] = {
    {"empty", B(""), B("")},
    {"ASCII", B("hello, world\n\t~"), B("hello, world\n\t~")},
    {"every ASCII control and DEL", B("\x01\x1f\x7f"), B("\x01\x1f\x7f")},
    /* valid sequences, at the edges of each length */
    {"2-byte U+0080", B("\xC2\x80"), B("\xC2\x80")},
    {"2-byte U+00E9", B("caf\xC3\xA9"), B("caf\xC3\xA9")},
    {"2-byte U+07FF", B("\xDF\xBF"), B("\xDF\xBF")},
    {"3-byte U+0800", B("\xE0\xA0\x80"), B("\xE0\xA0\x80")},
    {"3-byte U+20AC", B("\xE2\x82\xAC"), B("\xE2\x82\xAC")},
    {"3-byte U+D7FF (below the surrogates)", B("\xED\x9F\xBF"), B("\xED\x9F\xBF")},
    {"3-byte U+E000 (above the surrogates)", B("\xEE\x80\x80"), B("\xEE\x80\x80")},
    {"3-byte U+FEFF (BOM)", B("\xEF\xBB\xBF"), B("\xEF\xBB\xBF")},
    {"3-byte U+FFFD itself", B(R), B(R)},
    {"3-byte U+FFFF", B("\xEF\xBF\xBF"), B("\xEF\xBF\xBF")},
    {"4-byte U+10000", B("\xF0\x90\x80\x80"), B("\xF0\x90\x80\x80")},
    {"4-byte U+1F600", B("\xF0\x9F\x98\x80"), B("\xF0\x9F\x98\x80")},
    {"4-byte U+10FFFF", B("\xF4\x8F\xBF\xBF"), B("\xF4\x8F\xBF\xBF")},
    {"mixed valid", B("a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80z"), B("a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80z")},
    /* overlongs */
    {"overlong NUL C0 80", B("\xC0\x80"), B(R R)},
    {"overlong C1 BF", B("\xC1\xBF"), B(R R)},
    {"overlong slash C0 AF", B("\xC0\xAF"), B(R R)},
    {"overlong 3-byte E0 80 80", B("\xE0\x80\x80"), B(R R R)},
    {"overlong 3-byte E0 9F BF", B("\xE0\x9F\xBF"), B(R R R)},
    {"overlong 4-byte F0 80 80 80", B("\xF0\x80\x80\x80"), B(R R R R)},
    {"overlong 4-byte F0 8F BF BF", B("\xF0\x8F\xBF\xBF"), B(R R R R)},
    /* surrogates */
    {"surrogate U+D800", B("\xED\xA0\x80"), B(R R R)},
    {"surrogate U+DFFF", B("\xED\xBF\xBF"), B(R R R)},
    {"surrogate pair (CESU-8)", B("\xED\xA0\xBD\xED\xB8\x80"), B(R R R R R R)},
    /* beyond U+10FFFF, and bytes that never start a sequence */
    {"U+110000", B("\xF4\x90\x80\x80"), B(R R R R)},
    {"F5 lead", B("\xF5\x80\x80\x80"), B(R R R R)},
    {"F7 lead", B("\xF7\xBF\xBF\xBF"), B(R R R R)},
    {"5-byte form", B("\xF8\x88\x80\x80\x80"), B(R R R R R)},
    {"6-byte form", B("\xFC\x84\x80\x80\x80\x80"), B(R R R R R R)},
    {"FE", B("\xFE"), B(R)},
    {"FF", B("\xFF"), B(R)},
    /* truncated at the end */
    {"2-byte lead at the end", B("a\xC3"), B("a" R)},
    {"3-byte cut after 2", B("a\xE2\x82"), B("a" R R)},
    {"3-byte cut after 1", B("\xE2"), B(R)},
    {"4-byte cut after 3", B("\xF0\x9F\x98"), B(R R R)},
    /* truncated in the middle: the next character survives */
    {"2-byte lead then ASCII", B("\xC3" "A"), B(R "A")},
    {"3-byte cut then ASCII", B("\xE2\x82" "A"), B(R R "A")},
    {"4-byte cut then a valid 2-byte", B("\xF0\x9F\xC3\xA9"), B(R R "\xC3\xA9")},
    {"lead then a lead", B("\xE2\xE2\x82\xAC"), B(R "\xE2\x82\xAC")},
    /* lone continuation bytes */
    {"lone 80", B("\x80"), B(R)},
    {"lone BF between ASCII", B("a\xBF" "b"), B("a" R "b")},
    {"two continuations", B("\x80\x80"), B(R R)},
    {"continuation after a complete character", B("\xC3\xA9\xA9"), B("\xC3\xA9" R)},
    /* NUL is data */
    {"embedded NUL", B("a\0b"), B("a\0b")},
    {"only NUL", B("\0"), B("\0")},
    {"NUL after an invalid byte", B("\xFF\0\xFF"), B(R "\0" R)},
    {"NUL inside a sequence", B("\xE2\0\xAC"), B(R "\0" R)},
};

static void hex(const char *s, size_t n, char *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < n && o + 4 < cap; i++)
        o += (size_t)snprintf(out + o, cap - o, "%02X ", (unsigned char)s[i]);
    out[o] = '\0';
}

static void test_table(void **state)
{
    (void)state;
    int failed = 0;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const utf8_case *c = &cases[i];
        char *in = malloc(c->in_len ? c->in_len : 1);
        assert_non_null(in);
        memcpy(in, c->in, c->in_len);
        size_t got_len = (size_t)-1;
        char *got = fb_utf8_sanitize(in, c->in_len, &got_len);
        bool ok = got && got_len == c->want_len && memcmp(got, c->want, got_len) == 0 && got[got_len] == '\0' &&
                  memcmp(in, c->in, c->in_len) == 0;
        if (!ok) {
            char w[256], g[256];
            hex(c->want, c->want_len, w, sizeof w);
            if (got)
                hex(got, got_len, g, sizeof g);
            print_message("# FAIL %s: want [%s] got [%s]%s\n", c->label, w, got ? g : "NULL",
                          got && got[got_len] != '\0' ? " (not NUL-terminated)" : "");
            failed++;
        }
        free(got);
        free(in);
    }
    if (failed)
        fail_msg("%d case(s) failed", failed);
}

/* Worst case: every byte replaced (3 bytes out per byte in); and a large valid input unchanged. */
static void test_large(void **state)
{
    (void)state;
    size_t n = 1 << 20;
    char *in = malloc(n);
    assert_non_null(in);
    memset(in, 0xFF, n);
    size_t got_len = 0;
    char *got = fb_utf8_sanitize(in, n, &got_len);
    assert_non_null(got);
    assert_int_equal(got_len, 3 * n);
    for (size_t i = 0; i < got_len; i += 3)
        assert_memory_equal(got + i, R, 3);
    assert_int_equal(got[got_len], '\0');
    free(got);

    /* 4-byte characters back to back; the last one cut short */
    for (size_t i = 0; i + 4 <= n; i += 4)
        memcpy(in + i, "\xF0\x9F\x98\x80", 4);
    got = fb_utf8_sanitize(in, n - 1, &got_len);
    assert_non_null(got);
    assert_int_equal(got_len, n - 4 + 9);
    assert_memory_equal(got, in, n - 4);
    assert_memory_equal(got + n - 4, R R R, 9);
    free(got);
    free(in);
}

/* Every single byte value: < 0x80 copied, anything else alone is invalid. */
static void test_every_byte(void **state)
{
    (void)state;
    for (int b = 0; b < 256; b++) {
        char in = (char)b;
        size_t got_len = 0;
        char *got = fb_utf8_sanitize(&in, 1, &got_len);
        assert_non_null(got);
        if (b < 0x80) {
            assert_int_equal(got_len, 1);
            assert_int_equal((unsigned char)got[0], b);
        } else {
            assert_int_equal(got_len, 3);
            assert_memory_equal(got, R, 3);
        }
        free(got);
    }
}

/* Every 2-byte pair: the result matches an independent decoder of the RFC 3629 rules. */
static void test_every_pair(void **state)
{
    (void)state;
    for (int a = 0; a < 256; a++) {
        for (int b = 0; b < 256; b++) {
            char in[2] = {(char)a, (char)b};
            char want[8];
            size_t wl = 0;
            if (a >= 0xC2 && a <= 0xDF && (b & 0xC0) == 0x80) {
                memcpy(want, in, 2);
                wl = 2;
            } else {
                for (int k = 0; k < 2; k++) {
                    int x = k ? b : a;
                    if (x < 0x80)
                        want[wl++] = (char)x;
                    else {
                        memcpy(want + wl, R, 3);
                        wl += 3;
                    }
                }
            }
            size_t got_len = 0;
            char *got = fb_utf8_sanitize(in, 2, &got_len);
            assert_non_null(got);
            if (got_len != wl || memcmp(got, want, wl) != 0)
                fail_msg("bytes %02X %02X: got %zu bytes, want %zu", a, b, got_len, wl);
            free(got);
        }
    }
}

/* fb_utf8_valid says valid exactly where fb_utf8_sanitize would change nothing: the table's cases and every
 * 3-byte string of the bytes that matter (ASCII, continuation bytes, each lead byte's edges). */
static bool sanitize_keeps(const char *in, size_t len)
{
    size_t got_len = 0;
    char *got = fb_utf8_sanitize(in, len, &got_len);
    assert_non_null(got);
    bool same = got_len == len && memcmp(got, in, len) == 0;
    free(got);
    return same;
}

static void test_valid_agrees_with_sanitize(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        if (fb_utf8_valid(cases[i].in, cases[i].in_len) != sanitize_keeps(cases[i].in, cases[i].in_len))
            fail_msg("%s: fb_utf8_valid disagrees with fb_utf8_sanitize", cases[i].label);
    static const unsigned char bytes[] = {0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2,
                                          0xDF, 0xE0, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF};
    size_t n = sizeof bytes;
    for (size_t a = 0; a < n; a++)
        for (size_t b = 0; b < n; b++)
            for (size_t c = 0; c < n; c++) {
                char in[3] = {(char)bytes[a], (char)bytes[b], (char)bytes[c]};
                for (size_t len = 1; len <= 3; len++)
                    if (fb_utf8_valid(in, len) != sanitize_keeps(in, len))
                        fail_msg("%02X %02X %02X (%zu bytes): fb_utf8_valid disagrees", bytes[a], bytes[b],
                                 bytes[c], len);
            }
    assert_true(fb_utf8_valid("", 0));
    assert_true(fb_utf8_valid("a\0b", 3));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_large),
        cmocka_unit_test(test_every_byte),
        cmocka_unit_test(test_every_pair),
        cmocka_unit_test(test_valid_agrees_with_sanitize),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
