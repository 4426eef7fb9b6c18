/* Exact big numbers through jansson (util/json.h): a table of documents that must load and dump back to
 * the same compact text with the listed numbers carried as big numbers (and nothing else touched, numbers
 * inside strings and keys included); malformed documents that must still fail; the marker's nonce; flags
 * passed through.
 *
 * Every document is loaded from a buffer of exactly its length (no NUL) so ASan sees any over-read. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util/json.h"

/* Records one case's outcome: prints a failed case and counts it in *failed. */
static void verdict(int *failed, const char *label, bool ok, const char *why)
{
    if (!ok) {
        print_message("# FAIL %s: %s\n", label, why);
        (*failed)++;
    }
}

/* fb_json_loadb from a buffer of exactly strlen(text) bytes. */
static json_t *load(const char *text, size_t flags, json_error_t *jerr)
{
    size_t len = strlen(text);
    char *buf = malloc(len ? len : 1);
    assert_non_null(buf);
    memcpy(buf, text, len);
    memset(jerr, 0, sizeof *jerr);
    json_t *v = fb_json_loadb(buf, len, flags, jerr);
    memset(buf, 'Z', len); /* the document must not point into the caller's text */
    free(buf);
    return v;
}

/* The big numbers of v in document order (arrays by index, objects in insertion order), space-separated. */
static void collect_bignums(const json_t *v, char *out, size_t n)
{
    const char *big = fb_json_bignum(v);
    if (big) {
        size_t used = strlen(out);
        snprintf(out + used, n - used, "%s%s", used ? " " : "", big);
    } else if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++)
            collect_bignums(json_array_get(v, i), out, n);
    } else if (json_is_object(v)) {
        const char *key;
        json_t *child;
        json_object_foreach((json_t *)v, key, child) collect_bignums(child, out, n);
    }
}

/* ---- round trips ---- */

typedef struct rt_case {
    const char *label;
    const char *in;
    const char *out;      /* compact dump wanted; NULL = same as in */
    const char *bignums;  /* the big numbers fb_json_bignum must find, in order; "" = none */
    size_t flags;         /* load flags (dump adds JSON_ENCODE_ANY when JSON_DECODE_ANY is given) */
} rt_case;

static const rt_case rt_cases[] = {
    /* ---- integers beyond int64 ---- */
    {"2^64+7", "[18446744073709551623]", NULL, "18446744073709551623", 0},
    {"-2^63-1", "[-9223372036854775809]", NULL, "-9223372036854775809", 0},
    {"2^63", "[9223372036854775808]", NULL, "9223372036854775808", 0},
    {"10^40", "[10000000000000000000000000000000000000000]", NULL, "10000000000000000000000000000000000000000", 0},
    {"-10^40", "[-10000000000000000000000000000000000000000]", NULL, "-10000000000000000000000000000000000000000", 0},
    /* ---- reals beyond double range ---- */
    {"1e400 and -1e400", "[1e400,-1e400]", NULL, "1e400 -1e400", 0},
    {"exponent spellings", "[1E400,1e+400,2.5E+999,1.8e308]", NULL, "1E400 1e+400 2.5E+999 1.8e308", 0},
    {"10^309 written out", "[1000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000.0]", NULL,
     "1000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000.0", 0},
    /* ---- numbers jansson holds are left alone ---- */
    {"int64 bounds", "[9223372036854775807,-9223372036854775808]", NULL, "", 0},
    {"ordinary values", "[0,1,-1,42,2.5,-0.125,true,false,null,\"s\",[],{}]", NULL, "", 0},
    {"largest double", "[1.7976931348623157e308]", NULL, "", 0},
    {"underflow is not a big number", "[1e-400]", "[0.0]", "", 0},
    {"whitespace is dropped", " [ 18446744073709551623 ,\n\t1 ] ", "[18446744073709551623,1]",
     "18446744073709551623", 0},
    /* ---- placement ---- */
    {"object value", "{\"a\":99999999999999999999,\"b\":1}", NULL, "99999999999999999999", 0},
    {"several depths",
     "{\"a\":[1,{\"b\":[18446744073709551623,{\"c\":1e400}]}],\"d\":-1e999,\"e\":[[[[100000000000000000000]]]]}",
     NULL, "18446744073709551623 1e400 -1e999 100000000000000000000", 0},
    {"adjacent", "[1e400,1e400,99999999999999999999,-99999999999999999999]", NULL,
     "1e400 1e400 99999999999999999999 -99999999999999999999", 0},
    {"bare, with JSON_DECODE_ANY", "18446744073709551623", NULL, "18446744073709551623", JSON_DECODE_ANY},
    {"bare real, with JSON_DECODE_ANY", "-1e400", NULL, "-1e400", JSON_DECODE_ANY},
    /* ---- strings and keys are not numbers ---- */
    {"digits in a string", "[\"123456789012345678901234567890\",\"1e400\",\"-99999999999999999999\"]", NULL, "", 0},
    {"digits as a key", "{\"123456789012345678901234567890\":1,\"1e400\":[]}", NULL, "", 0},
    {"escaped quote then digits", "[\"a\\\"99999999999999999999\",\"\\\\\",99999999999999999999]", NULL,
     "99999999999999999999", 0},
    {"escaped backslash then quote", "[\"\\\\\",\"\\\\\\\"1e400\",1e400]", NULL, "1e400", 0},
    {"unicode-escaped digits", "[\"\\u0031\\u0032e400\"]", "[\"12e400\"]", "", 0},
    {"after non-ASCII text", "[\"\xC3\xA9\",1e400,\"\xF0\x9F\x98\x80\"]", NULL, "1e400", 0},
    {"a string with NUL", "[\"\\u0000\",99999999999999999999]", NULL, "99999999999999999999", 0},
    {"the marker's words in a string", "[\"\\u0000fnbox-num-\",\"fnbox-num-0011223344556677:1\"]", NULL, "", 0},
};

static void test_roundtrip_table(void **state)
{
    (void)state;
    int failed = 0;
    for (size_t i = 0; i < sizeof rt_cases / sizeof *rt_cases; i++) {
        const rt_case *c = &rt_cases[i];
        const char *want = c->out ? c->out : c->in;
        json_error_t jerr;
        char why[1400] = "", got_big[1024] = "";
        bool ok = false;
        json_t *v = load(c->in, c->flags, &jerr);
        char *dump = v ? fb_json_dumps(v, JSON_COMPACT | (c->flags & JSON_DECODE_ANY ? JSON_ENCODE_ANY : 0)) : NULL;
        if (v)
            collect_bignums(v, got_big, sizeof got_big);
        if (!v) {
            snprintf(why, sizeof why, "load failed: %s", jerr.text);
        } else if (!dump || strcmp(dump, want) != 0) {
            snprintf(why, sizeof why, "dump: want %s got %s", want, dump ? dump : "(null)");
        } else if (strcmp(got_big, c->bignums) != 0) {
            snprintf(why, sizeof why, "big numbers: want [%s] got [%s]", c->bignums, got_big);
        } else if (!*c->bignums) {
            /* without big numbers the document is exactly jansson's (fb_json_loadb always allows NUL) */
            json_t *plain = json_loads(c->in, c->flags | JSON_ALLOW_NUL, NULL);
            ok = plain && json_equal(plain, v);
            if (!ok)
                snprintf(why, sizeof why, "differs from json_loads");
            json_decref(plain);
        } else {
            /* a second load gives an equal document (same marker within the process) */
            json_t *again = load(c->in, c->flags, &jerr);
            ok = again && json_equal(again, v);
            if (!ok)
                snprintf(why, sizeof why, "two loads differ");
            json_decref(again);
        }
        verdict(&failed, c->label, ok, why);
        free(dump);
        json_decref(v);
    }
    if (failed)
        fail_msg("%d round-trip case(s) failed", failed);
}

/* ---- malformed documents ---- */

static const char *const bad_cases[] = {
    "",
    "[",
    "[1e400",
    "[1e400 1]",
    "{\"a\":}",
    "[1,]",
    "[99999999999999999999,]",
    "[\"abc]",
    "[01]",
    "[1e400 1e400]",
    "{\"a\" 99999999999999999999}",
    "{99999999999999999999:1}", /* NUL-first marker: jansson refuses it as a key */
    "[--1e400]",
    "[- 99999999999999999999]",
    "[+1e400]",
    "[.1e400]",
    "[0x1e400]",
    "[1e400]]",
    "[true99999999999999999999]",
    "99999999999999999999", /* a bare value needs JSON_DECODE_ANY */
    "[\"\\",
    /* a malformed number token whose prefix overflows is refused too, not carried through as a big number */
    "[1e400e400]",
    "[1.e400]",
    "[01e400]",
    "[1e400.5]",
    "[99999999999999999999-]",
    "[-99999999999999999999e]", /* the prefix -99999999999999999999 fits a double */
};

static void test_malformed_table(void **state)
{
    (void)state;
    int failed = 0;
    for (size_t i = 0; i < sizeof bad_cases / sizeof *bad_cases; i++) {
        const char *in = bad_cases[i];
        json_error_t jerr, jerr2;
        char why[1200] = "";
        json_t *v = load(in, 0, &jerr);
        /* sanity: jansson itself refuses it */
        json_t *plain = json_loadb(in, strlen(in), 0, &jerr2);
        if (plain)
            fail_msg("test table: jansson accepts %s", in);
        bool ok = !v && jerr.text[0] != '\0' && !strstr(jerr.text, "fnbox-num-");
        if (v) {
            char *d = fb_json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
            snprintf(why, sizeof why, "accepted, dumps as %s", d ? d : "(null)");
            free(d);
        } else if (!ok) {
            snprintf(why, sizeof why, "error text empty or shows the marker: [%s]", jerr.text);
        }
        char label[200];
        snprintf(label, sizeof label, "malformed %s", in);
        verdict(&failed, label, ok, why);
        json_decref(v);
    }
    if (failed)
        fail_msg("%d malformed case(s) failed", failed);
}

/* The error position names the place in the caller's text: what jansson reports for the same text with
 * each big number replaced by a string token of the same length. */
typedef struct pos_case {
    const char *in, *shadow;
} pos_case;

static const pos_case pos_cases[] = {
    {"[1,}", "[1,}"},
    {"[\"a\" 1]", "[\"a\" 1]"},
    {"[1e400 1]", "[\"123\" 1]"},
    {"[99999999999999999999,}", "[\"123456789012345678\",}"},
    {"{\"a\":1e400 \"b\"}", "{\"a\":\"123\" \"b\"}"},
};

static void test_error_position(void **state)
{
    (void)state;
    int failed = 0;
    for (size_t i = 0; i < sizeof pos_cases / sizeof *pos_cases; i++) {
        const pos_case *c = &pos_cases[i];
        json_error_t got, want;
        assert_null(load(c->in, 0, &got));
        assert_null(json_loads(c->shadow, 0, &want));
        char why[300], label[200];
        snprintf(why, sizeof why, "want line %d column %d position %d, got line %d column %d position %d", want.line,
                 want.column, want.position, got.line, got.column, got.position);
        snprintf(label, sizeof label, "error position in %s", c->in);
        verdict(&failed, label,
                got.line == want.line && got.column == want.column && got.position == want.position, why);
    }
    if (failed)
        fail_msg("%d error-position case(s) failed", failed);
}

/* ---- the marker ---- */

/* The marker text ("\0fnbox-num-<16 hex>:") of this process, read off a loaded big number. */
static size_t real_marker(char *out, size_t n)
{
    json_error_t jerr;
    json_t *v = load("[123456789012345678901234567890]", 0, &jerr);
    assert_non_null(v);
    const json_t *s = json_array_get(v, 0);
    assert_true(json_is_string(s));
    size_t ml = json_string_length(s) - strlen("123456789012345678901234567890");
    assert_true(ml < n);
    memcpy(out, json_string_value(s), ml);
    json_decref(v);
    assert_int_equal(out[0], '\0');
    assert_memory_equal(out + 1, "fnbox-num-", 10);
    assert_int_equal(ml, 1 + 10 + 16 + 1);
    assert_int_equal(out[ml - 1], ':');
    return ml;
}

static void test_bignum_detection(void **state)
{
    (void)state;
    char marker[64];
    size_t ml = real_marker(marker, sizeof marker);
    char buf[128];

    /* not strings, or ordinary strings */
    assert_null(fb_json_bignum(NULL));
    json_t *v = json_integer(5);
    assert_null(fb_json_bignum(v));
    json_decref(v);
    v = json_real(1.5);
    assert_null(fb_json_bignum(v));
    json_decref(v);
    v = json_string("123456789012345678901234567890");
    assert_null(fb_json_bignum(v));
    json_decref(v);
    v = json_stringn("", 0);
    assert_null(fb_json_bignum(v));
    json_decref(v);

    /* the marker with a number after it is one, wherever the string came from */
    memcpy(buf, marker, ml);
    memcpy(buf + ml, "42", 2);
    v = json_stringn(buf, ml + 2);
    assert_non_null(fb_json_bignum(v));
    assert_string_equal(fb_json_bignum(v), "42");
    json_decref(v);

    /* the marker alone is not */
    v = json_stringn(marker, ml);
    assert_null(fb_json_bignum(v));
    json_decref(v);

    /* nor the marker without its NUL, nor with a different nonce (each hex digit changed in turn) */
    v = json_stringn(buf + 1, ml + 1);
    assert_null(fb_json_bignum(v));
    json_decref(v);
    for (size_t i = 11; i < 27; i++) {
        memcpy(buf, marker, ml);
        memcpy(buf + ml, "42", 2);
        buf[i] = buf[i] == '0' ? '1' : '0';
        v = json_stringn(buf, ml + 2);
        if (fb_json_bignum(v))
            fail_msg("a marker with nonce digit %zu changed is taken for a big number", i - 11);
        json_decref(v);
    }
}

/* A request's string that imitates the marker (the nonce is secret, so it guesses) stays a string and is
 * dumped as a string. */
static void test_forged_marker(void **state)
{
    (void)state;
    char marker[64];
    size_t ml = real_marker(marker, sizeof marker);
    char nonce[17];
    memcpy(nonce, marker + 11, 16);
    nonce[16] = '\0';
    nonce[0] = nonce[0] == 'a' ? 'b' : 'a'; /* surely wrong */
    (void)ml;
    char text[256], want[256];
    snprintf(text, sizeof text, "[\"\\u0000fnbox-num-%s:123\",\"\\u0000fnbox-num-0000000000000000:1\"]", nonce);
    json_error_t jerr;
    json_t *v = load(text, 0, &jerr);
    assert_non_null(v);
    assert_null(fb_json_bignum(json_array_get(v, 0)));
    assert_null(fb_json_bignum(json_array_get(v, 1)));
    char *d = fb_json_dumps(v, JSON_COMPACT);
    snprintf(want, sizeof want, "[\"\\u0000fnbox-num-%s:123\",\"\\u0000fnbox-num-0000000000000000:1\"]", nonce);
    assert_string_equal(d, want);
    free(d);
    json_decref(v);

    /* the marker is not in the text a dump writes */
    v = load("{\"a\":[1e400,99999999999999999999]}", 0, &jerr);
    d = fb_json_dumps(v, JSON_INDENT(2) | JSON_ENSURE_ASCII);
    assert_null(strstr(d, "fnbox-num-"));
    assert_null(strstr(d, "\\u0000"));
    free(d);
    json_decref(v);
}

/* Very long number tokens. */
static void test_long_numbers(void **state)
{
    (void)state;
    char text[4096], digits[1024];
    json_error_t jerr;
    for (size_t n = 390; n < 410; n++) {
        memset(digits, '9', n);
        digits[n] = '\0';
        snprintf(text, sizeof text, "[%s,-%s]", digits, digits);
        json_t *v = load(text, 0, &jerr);
        assert_non_null(v);
        assert_string_equal(fb_json_bignum(json_array_get(v, 0)), digits);
        char *d = fb_json_dumps(v, JSON_COMPACT);
        assert_string_equal(d, text);
        free(d);
        json_decref(v);
    }
    /* a long real that fits a double still comes back as written */
    memset(digits, '0', 600);
    digits[600] = '\0';
    snprintf(text, sizeof text, "[1.%s1]", digits);
    json_t *v = load(text, 0, &jerr);
    assert_non_null(v);
    char *d = fb_json_dumps(v, JSON_COMPACT);
    assert_true(strcmp(d, text) == 0 || strcmp(d, "[1.0]") == 0);
    free(d);
    json_decref(v);
}

/* jansson's flags still apply, on load and on dump. */
static void test_flags(void **state)
{
    (void)state;
    json_error_t jerr;
    json_t *v = load("{\"a\":1e400,\"a\":1}", JSON_REJECT_DUPLICATES, &jerr);
    assert_null(v);
    assert_non_null(strstr(jerr.text, "duplicate"));
    v = load("{\"a\":1e400,\"a\":1}", 0, &jerr);
    assert_non_null(v);
    assert_int_equal(json_integer_value(json_object_get(v, "a")), 1);
    json_decref(v);

    v = load("{\"b\":1e400,\"a\":[18446744073709551623,\"\xC3\xA9\"]}", 0, &jerr);
    assert_non_null(v);
    char *d = fb_json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII);
    assert_string_equal(d, "{\"a\":[18446744073709551623,\"\\u00E9\"],\"b\":1e400}");
    free(d);
    d = fb_json_dumps(v, JSON_INDENT(1) | JSON_SORT_KEYS);
    assert_string_equal(d, "{\n \"a\": [\n  18446744073709551623,\n  \"\xC3\xA9\"\n ],\n \"b\": 1e400\n}");
    free(d);
    json_decref(v);

    /* a big number alone needs JSON_ENCODE_ANY to be dumped, like any scalar */
    v = load("1e400", JSON_DECODE_ANY, &jerr);
    assert_non_null(v);
    assert_null(fb_json_dumps(v, 0));
    json_decref(v);
    assert_null(fb_json_dumps(NULL, JSON_ENCODE_ANY));

    /* the loaded length bounds the text */
    const char *text = "[99999999999999999999]99999999999999999999";
    v = fb_json_loadb(text, 22, 0, &jerr);
    assert_non_null(v);
    d = fb_json_dumps(v, JSON_COMPACT);
    assert_string_equal(d, "[99999999999999999999]");
    free(d);
    json_decref(v);
}

/* Documents without big numbers dump exactly as jansson dumps them. */
static void test_plain_documents(void **state)
{
    (void)state;
    json_t *v = json_pack("{s:[i,f,s,b,n], s:{s:s#}}", "a", 1, 2.5, "x\"y", 1, "b", "c", "\0z", (size_t)2);
    assert_non_null(v);
    size_t flags[] = {0, JSON_COMPACT, JSON_INDENT(3) | JSON_SORT_KEYS, JSON_ENSURE_ASCII | JSON_ESCAPE_SLASH};
    for (size_t i = 0; i < sizeof flags / sizeof *flags; i++) {
        char *a = fb_json_dumps(v, flags[i]), *b = json_dumps(v, flags[i]);
        assert_string_equal(a, b);
        free(a);
        free(b);
    }
    json_decref(v);
}

/* A string that looks like a text reference but names none (a forged index) is written back as it was: the
 * fuzzer learned the process's marker and made one, and the harness input could not be built. */
static void test_forged_text_reference(void **state)
{
    (void)state;
    fb_json_texts t = {0};
    json_t *ref = fb_json_texts_ref(&t, "[1,2]", 5);
    assert_non_null(ref);
    const char *r = json_string_value(ref);
    size_t rlen = json_string_length(ref);
    char forged[128];
    assert_true(rlen + 4 < sizeof forged);
    memcpy(forged, r, rlen);
    size_t at = rlen;
    while (at > 0 && forged[at - 1] >= '0' && forged[at - 1] <= '9')
        at--; /* the index's digits: replaced by one that names nothing, then by junk */
    json_t *doc = json_array();
    json_array_append_new(doc, ref);
    memcpy(forged + at, "7", 2);
    json_array_append_new(doc, json_stringn(forged, at + 1));
    memcpy(forged + at, "x;", 3);
    json_array_append_new(doc, json_stringn(forged, at + 2));
    size_t len = 0;
    char *out = fb_json_dumps_texts(doc, JSON_COMPACT, &t, &len);
    assert_non_null(out);
    json_error_t jerr;
    json_t *back = json_loadb(out, len, JSON_ALLOW_NUL, &jerr);
    assert_non_null(back);
    assert_int_equal(json_array_size(back), 3);
    assert_true(json_is_array(json_array_get(back, 0)) && json_array_size(json_array_get(back, 0)) == 2);
    assert_true(json_equal(json_array_get(back, 1), json_array_get(doc, 1)));
    assert_true(json_equal(json_array_get(back, 2), json_array_get(doc, 2)));
    json_decref(back);
    free(out);
    json_decref(doc);
    fb_json_texts_free(&t);
}

/* The input in pieces: each reference cut out and its text borrowed as it is (the very pointer, no copy),
 * a forged one kept; together the pieces are fb_json_dumps_texts's text. */
static void test_text_pieces(void **state)
{
    (void)state;
    static const char a[] = "\"large\"", b[] = "[1,{\"k\":null}]";
    fb_json_texts t = {0};
    json_t *doc = json_array();
    json_array_append_new(doc, fb_json_texts_ref(&t, a, sizeof a - 1));
    json_array_append_new(doc, json_string("plain"));
    json_array_append_new(doc, fb_json_texts_ref(&t, b, sizeof b - 1));
    json_array_append_new(doc, fb_json_texts_ref(&t, a, sizeof a - 1)); /* the same text twice */
    const json_t *ref = json_array_get(doc, 0); /* "\0fnbox-txt-<hex>:0": a marked string */
    char fake[128];
    size_t flen = json_string_length(ref);
    assert_true(flen < sizeof fake);
    memcpy(fake, json_string_value(ref), flen);
    fake[flen - 1] = '9'; /* names no text of t */
    json_array_append_new(doc, json_stringn(fake, flen));
    fb_json_pieces pc;
    assert_int_equal(fb_json_pieces_make(fb_json_dumps(doc, JSON_COMPACT), &t, &pc), 0);
    assert_int_equal(pc.n, 7); /* three references: three texts between four pieces of the dump */
    assert_ptr_equal(pc.iov[1].iov_base, a);
    assert_ptr_equal(pc.iov[3].iov_base, b);
    assert_ptr_equal(pc.iov[5].iov_base, a);
    size_t len = 0;
    char *flat = fb_json_dumps_texts(doc, JSON_COMPACT, &t, &len);
    assert_non_null(flat);
    assert_int_equal(pc.len, len);
    size_t at = 0;
    for (size_t i = 0; i < pc.n; i++) {
        assert_memory_equal(flat + at, pc.iov[i].iov_base, pc.iov[i].iov_len);
        at += pc.iov[i].iov_len;
    }
    assert_int_equal(at, len);
    static const char head[] = "[\"large\",\"plain\",[1,{\"k\":null}],\"large\",\"\\u0000";
    assert_true(strncmp(flat, head, sizeof head - 1) == 0); /* the forged one stays a string */
    free(flat);
    fb_json_pieces_free(&pc);
    assert_int_equal(fb_json_pieces_make(NULL, &t, &pc), -1); /* a failed dump */
    json_decref(doc);
    fb_json_texts_free(&t);
}

/* Reals as they read: the shortest text that reads back as the same double (not jansson's 17 digits),
 * in jansson's own form (1e300, 1e-5, 3.0). */
static void test_real_text(void **state)
{
    (void)state;
    static const struct {
        double d;
        const char *want;
    } cases[] = {
        {0.1, "0.1"}, {6.866578, "6.866578"}, {3.0, "3.0"}, {-2.5, "-2.5"}, {0.0, "0.0"}, {-0.0, "-0.0"},
        {1e300, "1e300"}, {1e-5, "1e-5"}, {1.5e-7, "1.5e-7"}, {1.0 / 3, "0.3333333333333333"},
        {2.0 / 3, "0.6666666666666666"}, {0.1 + 0.2, "0.30000000000000004"}, {1e16, "1e16"},
        {123456789012.5, "123456789012.5"}, {1.7976931348623157e308, "1.7976931348623157e308"},
        {5e-324, "5e-324"}, {9007199254740993.0, "9007199254740992.0"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char buf[48];
        int n = fb_json_real_text(cases[i].d, buf, sizeof buf);
        if (strcmp(buf, cases[i].want) != 0 || n != (int)strlen(buf))
            fail_msg("%.17g: got %s, want %s", cases[i].d, buf, cases[i].want);
        assert_true(strtod(buf, NULL) == cases[i].d);
    }
    /* every double of a sample reads back from its text */
    uint64_t x = 0x9E3779B97F4A7C15u;
    for (int i = 0; i < 100000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        double d;
        memcpy(&d, &x, sizeof d);
        if (d != d || d - d != 0) /* NaN, infinities: not JSON */
            continue;
        char buf[48], full[48];
        fb_json_real_text(d, buf, sizeof buf);
        snprintf(full, sizeof full, "%.17g", d);
        if (strtod(buf, NULL) != d || strlen(buf) > 24)
            fail_msg("%s does not read back as %s", buf, full);
    }
}

static void test_shortest_reals(void **state)
{
    (void)state;
    json_t *v = json_pack("{s:f, s:[f, f, i, s], s:s, s:f}", "a", 0.1, "b", 6.866578, 1e300, (json_int_t)42,
                          "7.10000000000000001 \\\" 0.1", "c", "x\"0.30000000000000004", "d", 1.0 / 3);
    assert_non_null(v);
    char *text = json_dumps(v, JSON_COMPACT);
    assert_non_null(strstr(text, "0.10000000000000001"));
    free(text);
    char *s = fb_json_dumps_shortest(v, JSON_COMPACT);
    /* strings (with escaped quotes and backslashes) and integers unchanged */
    assert_string_equal(s, "{\"a\":0.1,\"b\":[6.866578,1e300,42,\"7.10000000000000001 \\\\\\\" 0.1\"],"
                           "\"c\":\"x\\\"0.30000000000000004\",\"d\":0.3333333333333333}");
    json_t *back = json_loads(s, 0, NULL);
    assert_true(json_equal(back, v));
    json_decref(back);
    free(s);
    char *out = NULL;
    assert_int_equal(fb_json_dump_out(json_pack("[f]", 0.1), &out, NULL), 0);
    assert_string_equal(out, "[0.1]");
    free(out);
    json_decref(v);
    assert_null(fb_json_shortest_reals(NULL));
    char *plain = strdup("[-1,2e5,\"-0.5\",-0.50000000000000000]");
    char *r = fb_json_shortest_reals(plain);
    assert_string_equal(r, "[-1,200000.0,\"-0.5\",-0.5]");
    free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip_table), cmocka_unit_test(test_malformed_table),
        cmocka_unit_test(test_error_position),  cmocka_unit_test(test_bignum_detection),
        cmocka_unit_test(test_forged_marker),   cmocka_unit_test(test_forged_text_reference), cmocka_unit_test(test_text_pieces),   cmocka_unit_test(test_long_numbers),
        cmocka_unit_test(test_flags),           cmocka_unit_test(test_plain_documents),
        cmocka_unit_test(test_real_text),       cmocka_unit_test(test_shortest_reals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
