/* The validating JSON scanner (json_scan.h): a recursive descent over the text that allocates nothing but
 * the duplicate check's key list. Each rule below is jansson's (load.c, utf.c), since a text this accepts
 * is one fnbox would otherwise have parsed with jansson: tests/unit/util/test_json_scan.c checks both
 * verdicts agree. */
#include "util/json_scan.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct key_ref {
    const char *raw; /* between the quotes, as written */
    size_t len;
    uint64_t hash;   /* of the decoded key */
    bool escaped;
} key_ref;

typedef struct scanner {
    const unsigned char *p, *end, *base;
    fb_json_scan *s;
    int depth;
    key_ref *keys; /* the keys of every object open now, innermost last (reject_duplicates) */
    size_t nkeys, cap;
} scanner;

static int fail(scanner *sc)
{
    sc->s->error_at = (size_t)(sc->p - sc->base);
    return -1;
}

static void skip_ws(scanner *sc)
{
    while (sc->p < sc->end && (*sc->p == ' ' || *sc->p == '\t' || *sc->p == '\n' || *sc->p == '\r'))
        sc->p++;
}

/* Length of the valid UTF-8 sequence at p (2 to 4 bytes), 0 if invalid: no overlong form, nothing
 * beyond U+10FFFF, no UTF-16 surrogate (jansson's utf8_check_first/utf8_check_full). */
static size_t utf8_seq(const unsigned char *p, size_t left)
{
    unsigned c = p[0], n, cp;
    if (c >= 0xC2 && c <= 0xDF)
        n = 2, cp = c & 0x1F;
    else if (c >= 0xE0 && c <= 0xEF)
        n = 3, cp = c & 0x0F;
    else if (c >= 0xF0 && c <= 0xF4)
        n = 4, cp = c & 0x07;
    else
        return 0;
    if (left < n)
        return 0;
    for (unsigned i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (p[i] & 0x3F);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return n;
}

static int hex4(const unsigned char *p, const unsigned char *end)
{
    if (end - p < 4)
        return -1;
    int v = 0;
    for (int i = 0; i < 4; i++) {
        unsigned c = p[i];
        int d = c >= '0' && c <= '9' ? (int)c - '0' : c >= 'a' && c <= 'f' ? (int)c - 'a' + 10
                                                      : c >= 'A' && c <= 'F' ? (int)c - 'A' + 10 : -1;
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    return v;
}

/* At the 'u' of \uXXXX: a code point, a lone low surrogate refused, a high one only with its low pair;
 * U+0000 only outside keys. Leaves p after the escape. */
static int unicode_escape(scanner *sc, bool key)
{
    int u = hex4(sc->p + 1, sc->end);
    if (u < 0 || (u == 0 && key) || (u >= 0xDC00 && u <= 0xDFFF))
        return fail(sc);
    sc->p += 5;
    if (u >= 0xD800 && u <= 0xDBFF) {
        if (sc->end - sc->p < 6 || sc->p[0] != '\\' || sc->p[1] != 'u')
            return fail(sc);
        int lo = hex4(sc->p + 2, sc->end);
        if (lo < 0xDC00 || lo > 0xDFFF)
            return fail(sc);
        sc->p += 6;
    }
    return 0;
}

static int escape(scanner *sc, bool key)
{
    if (sc->p >= sc->end)
        return fail(sc);
    switch (*sc->p) {
    case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
        sc->p++;
        return 0;
    case 'u':
        return unicode_escape(sc, key);
    default:
        return fail(sc);
    }
}

/* Byte-wise masks over a 64-bit word (the classic bit tricks). */
static inline uint64_t bytes_of(unsigned char b)
{
    return 0x0101010101010101ULL * b;
}

/* Nonzero exactly when some byte of w is zero. */
static inline uint64_t has_zero(uint64_t w)
{
    return (w - bytes_of(0x01)) & ~w & bytes_of(0x80);
}

/* The first byte at or after p that a string cannot pass over without a look: a control character, a
 * quote, a backslash or a byte of a multi-byte sequence. Eight bytes a step (a 64 MB string argument is
 * scanned twice per call, as the request's and as the result's). */
static const unsigned char *plain_run(const unsigned char *p, const unsigned char *end)
{
    while ((size_t)(end - p) >= sizeof(uint64_t)) {
        uint64_t w;
        memcpy(&w, p, sizeof w);
        /* high bit set | below 0x20 (w - 0x20 borrows into the high bit only there, high bytes ruled out
         * by the first term) | '"' | '\\' */
        uint64_t stop = (w | ((w - bytes_of(0x20)) & ~w)) & bytes_of(0x80);
        stop |= has_zero(w ^ bytes_of('"')) | has_zero(w ^ bytes_of('\\'));
        if (stop)
            break;
        p += sizeof w;
    }
    while (p < end && *p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\')
        p++;
    return p;
}

/* At the opening quote; leaves p after the closing one. */
static int string(scanner *sc, bool key, bool *escaped)
{
    sc->p++;
    for (;;) {
        const unsigned char *p = plain_run(sc->p, sc->end), *end = sc->end;
        sc->p = p;
        if (p >= end || *p < 0x20)
            return fail(sc);
        if (*p == '"') {
            sc->p++;
            return 0;
        }
        if (*p == '\\') {
            *escaped = true;
            sc->p++;
            if (escape(sc, key) < 0)
                return -1;
            continue;
        }
        size_t n = utf8_seq(p, (size_t)(end - p));
        if (!n)
            return fail(sc);
        sc->p += n;
    }
}

static const unsigned char *digits(const unsigned char *p, const unsigned char *end)
{
    while (p < end && *p >= '0' && *p <= '9')
        p++;
    return p;
}

/* A number's double overflows (jansson's jsonp_strtod refuses HUGE_VAL with ERANGE). */
static bool overflows(const unsigned char *tok, size_t n)
{
    char *copy = malloc(n + 1);
    if (!copy)
        return true;
    memcpy(copy, tok, n);
    copy[n] = '\0';
    errno = 0;
    double d = strtod(copy, NULL);
    bool over = errno == ERANGE && isinf(d);
    free(copy);
    return over;
}

static int number(scanner *sc)
{
    const unsigned char *start = sc->p, *p = sc->p, *end = sc->end;
    if (p < end && *p == '-')
        p++;
    const unsigned char *int_start = p;
    if (p < end && *p == '0')
        p++;
    else if (p < end && *p >= '1' && *p <= '9')
        p = digits(p, end);
    else
        return sc->p = p, fail(sc);
    size_t int_digits = (size_t)(p - int_start);
    bool is_int = true, has_exp = false;
    if (p < end && *p == '.') {
        const unsigned char *f = digits(p + 1, end);
        if (f == p + 1)
            return sc->p = f, fail(sc);
        p = f, is_int = false;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < end && (*p == '+' || *p == '-'))
            p++;
        const unsigned char *e = digits(p, end);
        if (e == p)
            return sc->p = e, fail(sc);
        p = e, is_int = false, has_exp = true;
    }
    sc->p = p;
    if (is_int && (int_digits > 16 || (int_digits == 16 && memcmp(int_start, "9007199254740991", 16) > 0)))
        sc->s->big_int = true;
    /* fewer than 300 digits and no exponent cannot pass DBL_MAX (~1.8e308) */
    if (sc->s->reals_in_range && (has_exp || (size_t)(p - start) > 300) && overflows(start, (size_t)(p - start)))
        return sc->p = start, fail(sc);
    return 0;
}

static int literal(scanner *sc, const char *word, size_t n)
{
    if ((size_t)(sc->end - sc->p) < n || memcmp(sc->p, word, n) != 0)
        return fail(sc);
    sc->p += n;
    return 0;
}

static int value(scanner *sc);

/* The decoded bytes of a key already validated; out has room for len bytes (decoding never grows). */
static size_t decode_key(const char *raw, size_t len, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        if (raw[i] != '\\') {
            out[o++] = raw[i];
            continue;
        }
        char c = raw[++i];
        const char *simple = strchr("\"\"\\\\//b\bf\fn\nr\rt\t", c);
        if (c != 'u') {
            out[o++] = simple[1];
            continue;
        }
        unsigned u = (unsigned)hex4((const unsigned char *)raw + i + 1, (const unsigned char *)raw + len);
        i += 4;
        if (u >= 0xD800 && u <= 0xDBFF) {
            unsigned lo = (unsigned)hex4((const unsigned char *)raw + i + 3, (const unsigned char *)raw + len);
            u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
            i += 6;
        }
        if (u < 0x80) {
            out[o++] = (char)u;
        } else if (u < 0x800) {
            out[o++] = (char)(0xC0 | (u >> 6));
            out[o++] = (char)(0x80 | (u & 0x3F));
        } else if (u < 0x10000) {
            out[o++] = (char)(0xE0 | (u >> 12));
            out[o++] = (char)(0x80 | ((u >> 6) & 0x3F));
            out[o++] = (char)(0x80 | (u & 0x3F));
        } else {
            out[o++] = (char)(0xF0 | (u >> 18));
            out[o++] = (char)(0x80 | ((u >> 12) & 0x3F));
            out[o++] = (char)(0x80 | ((u >> 6) & 0x3F));
            out[o++] = (char)(0x80 | (u & 0x3F));
        }
    }
    return o;
}

static uint64_t fnv1a(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
    return h;
}

/* A key's decoded text: itself when it has no escape, else a copy (*owned, to free). */
static const char *key_text(const key_ref *k, size_t *n, char **owned)
{
    *owned = NULL;
    *n = k->len;
    if (!k->escaped)
        return k->raw;
    *owned = malloc(k->len ? k->len : 1);
    if (!*owned)
        return NULL;
    *n = decode_key(k->raw, k->len, *owned);
    return *owned;
}

static int push_key(scanner *sc, const char *raw, size_t len, bool escaped)
{
    if (sc->nkeys == sc->cap) {
        size_t cap = sc->cap ? sc->cap * 2 : 64;
        key_ref *k = realloc(sc->keys, cap * sizeof *k);
        if (!k)
            return sc->s->oom = true, fail(sc);
        sc->keys = k, sc->cap = cap;
    }
    key_ref k = {.raw = raw, .len = len, .escaped = escaped};
    char *owned;
    size_t n;
    const char *text = key_text(&k, &n, &owned);
    if (!text)
        return sc->s->oom = true, fail(sc);
    k.hash = fnv1a(text, n);
    free(owned);
    sc->keys[sc->nkeys++] = k;
    return 0;
}

static bool same_key(const key_ref *a, const key_ref *b)
{
    if (a->hash != b->hash)
        return false;
    char *oa, *ob;
    size_t na, nb;
    const char *ta = key_text(a, &na, &oa), *tb = key_text(b, &nb, &ob);
    bool same = ta && tb && na == nb && memcmp(ta, tb, na) == 0;
    free(oa);
    free(ob);
    return same || !ta || !tb; /* out of memory: refuse rather than accept unchecked */
}

static int by_hash(const void *a, const void *b)
{
    uint64_t x = ((const key_ref *)a)->hash, y = ((const key_ref *)b)->hash;
    return x < y ? -1 : x > y;
}

/* Whether keys[from..nkeys) hold one key twice: pairwise for a few keys, else sorted by hash. */
static bool has_duplicate(scanner *sc, size_t from)
{
    key_ref *k = sc->keys + from;
    size_t n = sc->nkeys - from;
    if (n <= 8) {
        for (size_t i = 0; i < n; i++)
            for (size_t j = i + 1; j < n; j++)
                if (same_key(&k[i], &k[j]))
                    return true;
        return false;
    }
    qsort(k, n, sizeof *k, by_hash);
    for (size_t i = 0; i + 1 < n; i++)
        for (size_t j = i + 1; j < n && k[j].hash == k[i].hash; j++)
            if (same_key(&k[i], &k[j]))
                return true;
    return false;
}

static int report(scanner *sc, const char *key, size_t key_len, const unsigned char *v)
{
    if (sc->depth != 1 || !sc->s->member)
        return 0;
    if (sc->s->member(sc->s->ctx, key, key_len, (const char *)v, (size_t)(sc->p - v)) != 0)
        return fail(sc);
    return 0;
}

static int member(scanner *sc)
{
    if (sc->p >= sc->end || *sc->p != '"')
        return fail(sc);
    const unsigned char *k = sc->p + 1;
    bool escaped = false;
    if (string(sc, true, &escaped) < 0)
        return -1;
    size_t klen = (size_t)(sc->p - 1 - k);
    if (sc->s->reject_duplicates && push_key(sc, (const char *)k, klen, escaped) < 0)
        return -1;
    skip_ws(sc);
    if (sc->p >= sc->end || *sc->p != ':')
        return fail(sc);
    sc->p++;
    skip_ws(sc);
    const unsigned char *v = sc->p;
    if (value(sc) < 0)
        return -1;
    return report(sc, (const char *)k, klen, v);
}

/* Object or array, at its opening bracket. */
static int container(scanner *sc, bool object)
{
    unsigned char close = object ? '}' : ']';
    size_t from = sc->nkeys;
    sc->p++;
    skip_ws(sc);
    if (sc->p < sc->end && *sc->p == close) {
        sc->p++;
        return 0;
    }
    for (;;) {
        const unsigned char *v = sc->p;
        if (object ? member(sc) < 0 : value(sc) < 0 || report(sc, NULL, 0, v) < 0)
            return -1;
        skip_ws(sc);
        if (sc->p < sc->end && *sc->p == ',') {
            sc->p++;
            skip_ws(sc);
            continue;
        }
        if (sc->p < sc->end && *sc->p == close)
            break;
        return fail(sc);
    }
    if (object && sc->s->reject_duplicates) {
        if (has_duplicate(sc, from))
            return fail(sc);
        sc->nkeys = from;
    }
    sc->p++;
    return 0;
}

/* Every value counts one level, a scalar too (jansson's parse_value). */
static int value(scanner *sc)
{
    if (++sc->depth > FB_JSON_SCAN_MAX_DEPTH || sc->p >= sc->end)
        return fail(sc);
    int rc;
    bool escaped = false;
    switch (*sc->p) {
    case '{': rc = container(sc, true); break;
    case '[': rc = container(sc, false); break;
    case '"': rc = string(sc, false, &escaped); break;
    case 't': rc = literal(sc, "true", 4); break;
    case 'f': rc = literal(sc, "false", 5); break;
    case 'n': rc = literal(sc, "null", 4); break;
    default: rc = number(sc); break;
    }
    sc->depth--;
    return rc;
}

int fb_json_scan_text(const char *text, size_t len, fb_json_scan *s)
{
    s->big_int = s->oom = false;
    s->error_at = 0;
    scanner sc = {.p = (const unsigned char *)text, .end = (const unsigned char *)text + len,
                  .base = (const unsigned char *)text, .s = s};
    skip_ws(&sc);
    int rc = value(&sc);
    if (rc == 0) {
        skip_ws(&sc);
        if (sc.p != sc.end)
            rc = fail(&sc);
    }
    free(sc.keys);
    return rc;
}
