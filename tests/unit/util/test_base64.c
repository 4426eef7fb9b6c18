/* util/base64.c: nettle-backed decode (standard and URL-safe, padding optional) and encode. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util/base64.h"

static const struct {
    const char *in;
    const char *out; /* NULL: invalid */
    size_t out_len;
} k_decode[] = {
    {"", "", 0},
    {"Zg==", "f", 1},
    {"Zg", "f", 1},
    {"Zm8=", "fo", 2},
    {"Zm8", "fo", 2},
    {"Zm9v", "foo", 3},
    {"Zm9vYg==", "foob", 4},
    {"Zm9vYmFy", "foobar", 6},
    {"AP8A", "\x00\xff\x00", 3},
    {"+/+/", "\xfb\xff\xbf", 3},
    {"-_-_", "\xfb\xff\xbf", 3},   /* URL-safe alphabet */
    {"Z", NULL, 0},                 /* one character is never valid */
    {"Zm9v!", NULL, 0},
    {"Zm 9v", NULL, 0},
    {"Zg===", NULL, 0},
    {"=Zg=", NULL, 0},
    {"+_", NULL, 0},                /* alphabets mixed */
};

static void test_decode_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof k_decode / sizeof *k_decode; i++) {
        unsigned char *out = NULL;
        size_t n = 0;
        int rc = fb_base64_decode(k_decode[i].in, strlen(k_decode[i].in), &out, &n);
        if (!k_decode[i].out) {
            if (rc != -1)
                fail_msg("row %zu (%s): accepted", i, k_decode[i].in);
            continue;
        }
        if (rc != 0)
            fail_msg("row %zu (%s): refused", i, k_decode[i].in);
        assert_int_equal(n, k_decode[i].out_len);
        if (n)
            assert_memory_equal(out, k_decode[i].out, n);
        free(out);
    }
}

static void test_round_trip_all_lengths(void **state)
{
    (void)state;
    unsigned char data[300];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (unsigned char)(i * 37 + 11);
    for (size_t len = 0; len <= sizeof data; len++) {
        char *enc = fb_base64_encode(data, len);
        assert_non_null(enc);
        assert_int_equal(strlen(enc), (len + 2) / 3 * 4);
        unsigned char *dec = NULL;
        size_t n = 0;
        assert_int_equal(fb_base64_decode(enc, strlen(enc), &dec, &n), 0);
        assert_int_equal(n, len);
        if (len)
            assert_memory_equal(dec, data, len);
        free(dec);
        free(enc);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decode_table),
        cmocka_unit_test(test_round_trip_all_lengths),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
