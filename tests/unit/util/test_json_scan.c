/* The validating scanner (util/json_scan.h) against jansson itself: for a table of documents (tricky UTF-8,
 * escapes, surrogates, numbers, depth at the limit, duplicate keys) and for many random mutations of them,
 * the scanner's verdict must be jansson's with the same rules (the request's: REJECT_DUPLICATES; the
 * result's: DECODE_INT_AS_REAL), but for one quirk of jansson's, where the scanner is stricter. The top-level member callback and the big-integer flag are checked too.
 *
 * Every document is scanned from a buffer of exactly its length (no NUL) so ASan sees any over-read. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "util/json.h"
#include "util/json_scan.h"

typedef struct doc {
    const char *text;
    size_t len; /* 0: strlen(text) */
} doc;

static const char *const k_texts[] = {
    "{}", "[]", " [1, 2.5, -0, -0.0, 1e5, 1E+5, 2e-5] ", "\"x\"", "true", "null", "false",
    "123", "-", "01", "1.", ".5", "+1", "1e", "1e+", "-01", "[1,]", "[,1]", "{\"a\":1,}",
    "{\"a\" 1}", "{1:2}", "[1 2]", "tru", "truex", "nul", "[true false]", "", "   ",
    "[1]x", "[1] [2]", "\"\\u0000\"", "{\"\\u0000\":1}", "{\"a\\u0000b\":1}",
    "\"\\ud83d\\ude00\"", "\"\\ud83d\"", "\"\\ude00\"", "\"\\ud83d\\u0041\"", "\"\\ud83dx\"",
    "\"\\uD83D\\uDE00\"", "\"\\u12\"", "\"\\u12g4\"", "\"\\x\"", "\"\\/\\b\\f\\n\\r\\t\\\"\\\\\"",
    "\"\xc3\xa9\"", "\"\xc3\"", "\"\xc0\xaf\"", "\"\xe0\x80\xaf\"", "\"\xed\xa0\x80\"",
    "\"\xf4\x90\x80\x80\"", "\"\xf0\x9f\x98\x80\"", "\"\xf5\x80\x80\x80\"", "\"\xff\"", "\"\x80\"",
    "\"\x7f\"", "\"a\tb\"", "\"a\nb\"", "\"abc", "[\"abc\\\"]", "\"\xe2\x82\"",
    "{\"a\":1,\"a\":2}", "{\"a\":1,\"\\u0061\":2}", "{\"a\":{\"a\":1},\"b\":{\"a\":2}}",
    "{\"\\ud83d\\ude00\":1,\"\xf0\x9f\x98\x80\":2}", "{\"\\/\":1,\"/\":2}", "{\"\\n\":1,\"n\":2}",
    "{\"a\":1,\"b\":2,\"c\":3,\"d\":4,\"e\":5,\"f\":6,\"g\":7,\"h\":8,\"i\":9,\"j\":10,\"a\":11}",
    "{\"a\":1,\"b\":2,\"c\":3,\"d\":4,\"e\":5,\"f\":6,\"g\":7,\"h\":8,\"i\":9,\"j\":10,\"k\":11}",
    "[{\"x\":[{\"x\":1}],\"y\":{\"x\":{\"x\":2,\"y\":3}}}]",
    "123456789012345678901234567890", "-9223372036854775809", "1e308", "1e309", "-1e400", "1e-400",
    "17976931348623157081452742373170435679807056752584499659891747680315726078002853876058955863276687817154045895351438246423432132688946418276846754670353751698604991057655128207624549009038932894407586850845513394230458323690322294816580855933212334827479782620414472316873817718091929988125040402618412485836",
    "179769313486231580814527423731704356798070567525844996598917476803157260780028538760589558632766878171540458953514382464234321326889464182768467546703537516986049910576551282076245490090389328944075868508455133942304583236903222948165808559332123348274797826204144723168738177180919299881250404026184124858368",
    "[0.1, 1.7976931348623157e308, 1.8e308]",
};

/* documents with a NUL byte inside */
static const doc k_nul_docs[] = {{"\"a\0b\"", 5}, {"[1,\0]", 5}};

#define N_TEXTS (sizeof k_texts / sizeof *k_texts)
#define N_DOCS (N_TEXTS + sizeof k_nul_docs / sizeof *k_nul_docs)

static doc doc_at(size_t i)
{
    return i < N_TEXTS ? (doc){k_texts[i], 0} : k_nul_docs[i - N_TEXTS];
}

static char *copy(const doc *d, size_t *len)
{
    *len = d->len ? d->len : strlen(d->text);
    char *buf = malloc(*len ? *len : 1);
    assert_non_null(buf);
    memcpy(buf, d->text, *len);
    return buf;
}

/* Do jansson and the scanner agree on text under the request's rules, and under the result's? */
static bool agree(const char *text, size_t len, char *why, size_t cap)
{
    static const struct {
        size_t flags;
        bool dups, reals;
    } rules[] = {
        {JSON_DECODE_ANY | JSON_ALLOW_NUL | JSON_REJECT_DUPLICATES, true, false},
        {JSON_DECODE_ANY | JSON_ALLOW_NUL | JSON_DECODE_INT_AS_REAL, false, true},
    };
    for (size_t r = 0; r < 2; r++) {
        json_error_t jerr;
        /* the request's rule is fb_json_loadb's: what does not fit int64 / a double is a big number */
        json_t *v = rules[r].reals ? json_loadb(text, len, rules[r].flags, &jerr)
                                   : fb_json_loadb(text, len, rules[r].flags, &jerr);
        bool jansson_ok = v != NULL;
        json_decref(v);
        fb_json_scan s = {.reject_duplicates = rules[r].dups, .reals_in_range = rules[r].reals};
        bool scan_ok = fb_json_scan_text(text, len, &s) == 0;
        /* jansson drops a NUL byte that follows a number ("[1\0]" loads): the scanner refuses it, the
         * stricter verdict (a harness given that text would refuse it too) */
        if (!scan_ok && jansson_ok && memchr(text, '\0', len))
            continue;
        if (scan_ok != jansson_ok) {
            snprintf(why, cap, "rules %zu: scanner %s, jansson %s (%s)", r, scan_ok ? "accepts" : "refuses",
                     jansson_ok ? "accepts" : "refuses", jansson_ok ? "" : jerr.text);
            return false;
        }
    }
    return true;
}

static void test_table_agrees_with_jansson(void **state)
{
    (void)state;
    int failed = 0;
    char why[300];
    for (size_t i = 0; i < N_DOCS; i++) {
        size_t len;
        doc d = doc_at(i);
        char *buf = copy(&d, &len);
        if (!agree(buf, len, why, sizeof why)) {
            print_message("# FAIL %.80s: %s\n", d.text, why);
            failed++;
        }
        free(buf);
    }
    assert_int_equal(failed, 0);
}

/* Strings are passed over eight bytes a step: one byte that needs a look (a control character, a quote, an
 * escape, the start or the middle of a UTF-8 sequence, a byte no UTF-8 has) at every offset of a long run
 * of plain bytes, and the string's end at every offset, must get jansson's verdict. */
static void test_string_runs_at_every_offset(void **state)
{
    (void)state;
    static const char *const k_special[] = {"\x01", "\x1f", "\\\"", "\\n", "\\u00e9", "\\ud83d\\ude00", "\\", "\"",
                                            "\xc3\xa9", "\xe2\x98\x83", "\xf0\x9d\x84\x9e", "\xc3", "\xa9", "\xff",
                                            "\x7f", " ", "\xed\xa0\x80", "\xc0\xaf"};
    int failed = 0;
    char why[300], buf[64];
    for (size_t k = 0; k < sizeof k_special / sizeof *k_special; k++) {
        for (size_t at = 0; at <= 24; at++) {
            size_t slen = strlen(k_special[k]);
            size_t len = 0;
            buf[len++] = '"';
            memset(buf + len, 'a', at);
            len += at;
            memcpy(buf + len, k_special[k], slen);
            len += slen;
            memset(buf + len, 'b', 17);
            len += 17;
            buf[len++] = '"';
            /* the whole string, and the string cut at each length (an unterminated run ends the text) */
            for (size_t cut = 1; cut <= len; cut++) {
                if (!agree(buf, cut, why, sizeof why)) {
                    print_message("# FAIL special %zu at %zu cut %zu: %s\n", k, at, cut, why);
                    failed++;
                }
            }
        }
    }
    assert_int_equal(failed, 0);
}

/* Nesting at jansson's limit: 2048 values deep passes, 2049 fails, as arrays and as objects. */
static void test_depth_limit(void **state)
{
    (void)state;
    char why[300];
    for (int extra = -1; extra <= 1; extra++) {
        for (int obj = 0; obj < 2; obj++) {
            size_t n = (size_t)(FB_JSON_SCAN_MAX_DEPTH + extra - 1); /* containers around one scalar */
            size_t cap = n * 6 + 8, len = 0;
            char *buf = malloc(cap);
            assert_non_null(buf);
            for (size_t i = 0; i < n; i++)
                len += (size_t)sprintf(buf + len, "%s", obj ? "{\"k\":" : "[");
            buf[len++] = '1';
            for (size_t i = 0; i < n; i++)
                buf[len++] = obj ? '}' : ']';
            if (!agree(buf, len, why, sizeof why))
                fail_msg("depth %zu (%s): %s", n + 1, obj ? "objects" : "arrays", why);
            free(buf);
        }
    }
}

/* Random single-byte edits, insertions and cuts of every table document: both must still agree. */
static void test_mutations_agree_with_jansson(void **state)
{
    (void)state;
    static const char alphabet[] = "{}[],:\"\\u0123456789abcdefABCDEF-+.eE tnrl \x80\xbf\xc3\xed\xf0\xf4\xff";
    unsigned seed = 12345;
    int failed = 0;
    char why[300];
    for (int round = 0; round < 20000 && failed < 5; round++) {
        doc d = doc_at((size_t)round % N_DOCS);
        size_t len;
        char *src = copy(&d, &len);
        char *buf = malloc(len + 2);
        assert_non_null(buf);
        memcpy(buf, src, len);
        seed = seed * 1103515245u + 12345u;
        size_t at = len ? (seed >> 8) % (len + 1) : 0;
        char c = alphabet[(seed >> 20) % (sizeof alphabet - 1)];
        switch ((seed >> 4) % 3) {
        case 0:
            if (at < len)
                buf[at] = c;
            break;
        case 1:
            memmove(buf + at + 1, buf + at, len - at);
            buf[at] = c;
            len++;
            break;
        default:
            len = at;
            break;
        }
        if (!agree(buf, len, why, sizeof why)) {
            print_message("# FAIL mutation of %.60s: %.*s: %s\n", d.text, (int)(len > 80 ? 80 : len), buf, why);
            failed++;
        }
        free(buf);
        free(src);
    }
    assert_int_equal(failed, 0);
}

typedef struct seen {
    char keys[8][16];
    char values[8][32];
    int n;
} seen;

static int record(void *ctx, const char *key, size_t key_len, const char *value, size_t value_len)
{
    seen *s = ctx;
    if (s->n >= 8)
        return 1;
    snprintf(s->keys[s->n], sizeof s->keys[0], "%.*s", key ? (int)key_len : 1, key ? key : "-");
    snprintf(s->values[s->n], sizeof s->values[0], "%.*s", (int)value_len, value);
    s->n++;
    return 0;
}

static void test_member_callback(void **state)
{
    (void)state;
    const char text[] = " { \"a\" : [1, {\"x\": 2}] ,\"b\\n\":\"s\" , \"c\":null} ";
    seen s = {0};
    fb_json_scan sc = {.member = record, .ctx = &s};
    assert_int_equal(fb_json_scan_text(text, sizeof text - 1, &sc), 0);
    assert_int_equal(s.n, 3);
    assert_string_equal(s.keys[0], "a");
    assert_string_equal(s.values[0], "[1, {\"x\": 2}]");
    assert_string_equal(s.keys[1], "b\\n");
    assert_string_equal(s.values[1], "\"s\"");
    assert_string_equal(s.values[2], "null");
    seen a = {0};
    sc.ctx = &a;
    assert_int_equal(fb_json_scan_text("[1,\"2\" , [3]]", strlen("[1,\"2\" , [3]]"), &sc), 0);
    assert_int_equal(a.n, 3);
    assert_string_equal(a.keys[0], "-");
    assert_string_equal(a.values[2], "[3]");
    /* a callback's refusal fails the scan */
    const char many[] = "[1,2,3,4,5,6,7,8,9]";
    seen m = {0};
    sc.ctx = &m;
    assert_int_equal(fb_json_scan_text(many, sizeof many - 1, &sc), -1);
}

static void test_big_int_flag(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        bool big;
    } cases[] = {
        {"[9007199254740991, -9007199254740991]", false}, {"[9007199254740992]", true}, {"[-9007199254740992]", true},
        {"[12345678901234567]", true}, {"[1e300, 9007199254740992.0]", false}, {"[\"9007199254740992\"]", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        fb_json_scan s = {0};
        assert_int_equal(fb_json_scan_text(cases[i].text, strlen(cases[i].text), &s), 0);
        if (s.big_int != cases[i].big)
            fail_msg("%s: big_int %d", cases[i].text, s.big_int);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_agrees_with_jansson),
        cmocka_unit_test(test_depth_limit),
        cmocka_unit_test(test_string_runs_at_every_offset),
        cmocka_unit_test(test_mutations_agree_with_jansson),
        cmocka_unit_test(test_member_callback),
        cmocka_unit_test(test_big_int_flag),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
