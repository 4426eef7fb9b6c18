#include "util/json.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/random.h>

#include "util/buf.h"

static char g_marker[40];       /* "\0fnbox-num-<16 hex>:" (NUL first) */
static size_t g_marker_len;
static char g_ref[40];          /* "\0fnbox-txt-<16 hex>:" (NUL first): a reference to a text, fb_json_texts */
static size_t g_ref_len;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void marker_init(void)
{
    unsigned char rnd[8] = {0};
    if (getrandom(rnd, sizeof rnd, 0) != sizeof rnd) /* never fails for 8 bytes after boot; keep going */
        memset(rnd, 0x5a, sizeof rnd);
    int n = snprintf(g_marker + 1, sizeof g_marker - 1, "fnbox-num-%02x%02x%02x%02x%02x%02x%02x%02x:", rnd[0], rnd[1],
                     rnd[2], rnd[3], rnd[4], rnd[5], rnd[6], rnd[7]);
    g_marker[0] = '\0';
    g_marker_len = (size_t)n + 1;
    n = snprintf(g_ref + 1, sizeof g_ref - 1, "fnbox-txt-%s", g_marker + 1 + strlen("fnbox-num-"));
    g_ref[0] = '\0';
    g_ref_len = (size_t)n + 1;
}

static size_t digits(const char *s, size_t i, size_t n)
{
    while (i < n && s[i] >= '0' && s[i] <= '9')
        i++;
    return i;
}

/* Is s[0..n) exactly a JSON number (RFC 8259: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?)? Only
 * such tokens are ever rewritten; anything else is left for jansson to refuse. */
static bool is_json_number(const char *s, size_t n)
{
    size_t i = 0, j;
    if (i < n && s[i] == '-')
        i++;
    if (i < n && s[i] == '0')
        i++;
    else if (i < n && s[i] >= '1' && s[i] <= '9')
        i = digits(s, i, n);
    else
        return false;
    if (i < n && s[i] == '.') {
        if ((j = digits(s, i + 1, n)) == i + 1)
            return false;
        i = j;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-'))
            i++;
        if ((j = digits(s, i, n)) == i)
            return false;
        i = j;
    }
    return i == n;
}

/* Does the number token s[0..n) fit jansson: an int64 integer, or a real of finite double range? */
static bool number_fits(const char *s, size_t n)
{
    char tok[400];
    if (!is_json_number(s, n))
        return true; /* not a number: jansson reports it */
    if (n >= sizeof tok)
        return false;
    memcpy(tok, s, n);
    tok[n] = '\0';
    bool is_int = strpbrk(tok, ".eE") == NULL;
    errno = 0;
    if (is_int) {
        (void)strtoll(tok, NULL, 10);
        return errno != ERANGE;
    }
    double d = strtod(tok, NULL);
    return !(errno == ERANGE && isinf(d));
}

static size_t number_len(const char *s, size_t left)
{
    size_t i = 0;
    while (i < left && (strchr("0123456789+-.eE", s[i]) != NULL))
        i++;
    return i;
}

/* Append `"<marker><token>"`, the marker's NUL written as the JSON escape \u0000. */
static int append_marked(fb_buf *b, const char *tok, size_t n)
{
    return fb_buf_append(b, "\"\\u0000", 7) < 0 || fb_buf_append(b, g_marker + 1, g_marker_len - 1) < 0 ||
                   fb_buf_append(b, tok, n) < 0 || fb_buf_append(b, "\"", 1) < 0
               ? -1
               : 0;
}

/* Where the rewritten text grew, so that jansson's error positions can be mapped back. */
typedef struct edits {
    struct edit {
        size_t new_end; /* offset just past the marked string in the rewritten text */
        size_t grew;    /* bytes added */
        int line;       /* 1-based line (numbers never span lines) */
    } *e;
    size_t n, cap;
} edits;

static int edits_add(edits *ed, size_t new_end, size_t grew, int line)
{
    if (ed->n == ed->cap) {
        size_t cap = ed->cap ? ed->cap * 2 : 8;
        struct edit *p = realloc(ed->e, cap * sizeof *p);
        if (!p)
            return -1;
        ed->e = p;
        ed->cap = cap;
    }
    ed->e[ed->n++] = (struct edit){new_end, grew, line};
    return 0;
}

static void map_error(const edits *ed, json_error_t *jerr)
{
    size_t pos = (size_t)jerr->position, back = 0;
    int col_back = 0;
    for (size_t i = 0; i < ed->n && ed->e[i].new_end <= pos; i++) {
        back += ed->e[i].grew;
        if (ed->e[i].line == jerr->line)
            col_back += (int)ed->e[i].grew;
    }
    jerr->position = (int)(pos - back);
    jerr->column -= col_back;
}

/* Returns a rewritten copy when some number does not fit, NULL (and *none=1) when none needs it. */
static char *mark_numbers(const char *text, size_t len, size_t *out_len, int *none, edits *ed)
{
    fb_buf b;
    fb_buf_init(&b, (size_t)-1 / 2);
    size_t copied = 0;
    bool in_str = false;
    int line = 1;
    *none = 1;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (c == '\n')
            line++;
        if (in_str) {
            if (c == '\\')
                i++;
            else if (c == '"')
                in_str = false;
            continue;
        }
        if (c == '"') {
            in_str = true;
            continue;
        }
        if (c != '-' && (c < '0' || c > '9'))
            continue;
        size_t n = number_len(text + i, len - i);
        if (!number_fits(text + i, n)) {
            *none = 0;
            size_t before = b.len + (i - copied);
            if (fb_buf_append(&b, text + copied, i - copied) < 0 || append_marked(&b, text + i, n) < 0 ||
                edits_add(ed, b.len, b.len - before - n, line) < 0) {
                fb_buf_free(&b);
                return NULL;
            }
            copied = i + n;
        }
        i += n - 1;
    }
    if (*none)
        return NULL;
    if (fb_buf_append(&b, text + copied, len - copied) < 0) {
        fb_buf_free(&b);
        return NULL;
    }
    return fb_buf_steal(&b, out_len);
}

json_t *fb_json_loadb(const char *text, size_t len, size_t flags, json_error_t *jerr)
{
    pthread_once(&g_once, marker_init);
    int none = 1;
    size_t mlen = 0;
    edits ed = {0};
    char *marked = mark_numbers(text, len, &mlen, &none, &ed);
    if (!marked && !none) {
        free(ed.e);
        if (jerr)
            snprintf(jerr->text, sizeof jerr->text, "out of memory");
        return NULL;
    }
    json_t *v = json_loadb(marked ? marked : text, marked ? mlen : len, flags | JSON_ALLOW_NUL, jerr);
    if (!v && marked && jerr)
        map_error(&ed, jerr); /* its positions refer to the rewritten text */
    free(marked);
    free(ed.e);
    return v;
}

const char *fb_json_bignum(const json_t *v)
{
    pthread_once(&g_once, marker_init);
    if (!json_is_string(v) || json_string_length(v) <= g_marker_len)
        return NULL;
    const char *s = json_string_value(v);
    return memcmp(s, g_marker, g_marker_len) == 0 ? s + g_marker_len : NULL;
}

/* The end of a splice: what follows the last hit, the dumped text s freed, b's text (NULL on failure). */
static char *splice_end(fb_buf *b, const char *rest, char *s, int rc, size_t *len)
{
    if (rc == 0)
        rc = fb_buf_append(b, rest, strlen(rest));
    free(s);
    if (rc < 0) {
        fb_buf_free(b);
        return NULL;
    }
    return fb_buf_steal(b, len);
}

char *fb_json_dumps(const json_t *v, size_t flags)
{
    pthread_once(&g_once, marker_init);
    char *s = json_dumps(v, flags);
    if (!s)
        return NULL;
    /* In jansson's output the marker appears as "\u0000fnbox-num-...:TOKEN" */
    char needle[64];
    int nl = snprintf(needle, sizeof needle, "\"\\u0000%s", g_marker + 1);
    if (!strstr(s, needle))
        return s;
    fb_buf b;
    fb_buf_init(&b, (size_t)-1 / 2);
    const char *p = s, *hit;
    int rc = 0;
    while (rc == 0 && (hit = strstr(p, needle)) != NULL) {
        const char *tok = hit + nl;
        size_t n = strcspn(tok, "\"");
        rc = fb_buf_append(&b, p, (size_t)(hit - p)) < 0 || fb_buf_append(&b, tok, n) < 0 ? -1 : 0;
        p = tok + n + 1;
    }
    return splice_end(&b, p, s, rc, NULL);
}

const char *fb_json_type_name(const json_t *v)
{
    if (fb_json_bignum(v))
        return "number";
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "object";
    case JSON_ARRAY: return "array";
    case JSON_STRING: return "string";
    case JSON_INTEGER:
    case JSON_REAL: return "number";
    case JSON_TRUE:
    case JSON_FALSE: return "boolean";
    default: return "null";
    }
}

int fb_json_dump_out(json_t *v, char **out, size_t *len)
{
    *out = v ? fb_json_dumps_shortest(v, JSON_COMPACT) : NULL;
    json_decref(v);
    if (!*out)
        return -1;
    if (len)
        *len = strlen(*out);
    return 0;
}

json_t *fb_json_texts_ref(fb_json_texts *t, const char *text, size_t len)
{
    pthread_once(&g_once, marker_init);
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 16;
        struct fb_json_text *v = realloc(t->v, cap * sizeof *v);
        if (!v)
            return NULL;
        t->v = v;
        t->cap = cap;
    }
    char ref[64];
    memcpy(ref, g_ref, g_ref_len);
    int n = snprintf(ref + g_ref_len, sizeof ref - g_ref_len, "%zu", t->n);
    json_t *s = json_stringn(ref, g_ref_len + (size_t)n);
    if (s)
        t->v[t->n++] = (struct fb_json_text){text, len};
    return s;
}

bool fb_json_is_text_ref(const json_t *v)
{
    pthread_once(&g_once, marker_init);
    return json_is_string(v) && json_string_length(v) > g_ref_len &&
           memcmp(json_string_value(v), g_ref, g_ref_len) == 0;
}

void fb_json_texts_free(fb_json_texts *t)
{
    free(t->v);
    *t = (fb_json_texts){0};
}

/* The index after a reference's escaped marker in dumped text: "\u0000fnbox-txt-<hex>:<index>" */
static bool ref_index(const char *p, const fb_json_texts *t, size_t *index, size_t *used)
{
    char *end = NULL;
    errno = 0;
    unsigned long long i = strtoull(p, &end, 10);
    if (end == p || *end != '"' || errno || !t || i >= t->n)
        return false;
    *index = (size_t)i;
    *used = (size_t)(end - p) + 1;
    return true;
}

/* in dumped text a reference reads "\u0000fnbox-txt-...:N" (jansson escapes the NUL) */
static int ref_needle(char needle[64])
{
    return snprintf(needle, 64, "\"\\u0000%s", g_ref + 1);
}

int fb_json_pieces_make(char *dumped, const fb_json_texts *t, fb_json_pieces *out)
{
    *out = (fb_json_pieces){.dumped = dumped};
    if (!dumped)
        return -1;
    char needle[64];
    size_t nl = (size_t)ref_needle(needle);
    size_t refs = 0;
    for (const char *h = strstr(dumped, needle); h; h = strstr(h + nl, needle))
        refs++;
    out->iov = malloc((2 * refs + 1) * sizeof *out->iov);
    if (!out->iov) {
        fb_json_pieces_free(out);
        return -1;
    }
    /* A string that only looks like a reference (the marker is random per process: a request cannot know
     * it, but a fuzzer that watches comparisons learns it) is not one: it stays as it was. */
    const char *p = dumped, *hit = strstr(dumped, needle);
    for (; hit; hit = strstr(hit + nl, needle)) {
        size_t i = 0, used = 0;
        if (!ref_index(hit + nl, t, &i, &used))
            continue;
        out->iov[out->n++] = (struct iovec){.iov_base = (void *)p, .iov_len = (size_t)(hit - p)};
        out->iov[out->n++] = (struct iovec){.iov_base = (void *)t->v[i].text, .iov_len = t->v[i].len};
        p = hit + nl + used;
        hit = p - nl; /* the next search starts after the reference */
    }
    out->iov[out->n++] = (struct iovec){.iov_base = (void *)p, .iov_len = strlen(p)};
    for (size_t k = 0; k < out->n; k++)
        out->len += out->iov[k].iov_len;
    return 0;
}

void fb_json_pieces_free(fb_json_pieces *p)
{
    free(p->dumped);
    free(p->iov);
    *p = (fb_json_pieces){0};
}

char *fb_json_dumps_texts(const json_t *v, size_t flags, const fb_json_texts *t, size_t *len)
{
    fb_json_pieces pc;
    if (fb_json_pieces_make(fb_json_dumps(v, flags), t, &pc) < 0)
        return NULL;
    if (pc.n == 1) { /* no reference: the dumped text itself */
        char *s = pc.dumped;
        *len = pc.len;
        pc.dumped = NULL;
        fb_json_pieces_free(&pc);
        return s;
    }
    char *s = malloc(pc.len + 1);
    if (s) {
        size_t at = 0;
        for (size_t k = 0; k < pc.n; k++) {
            memcpy(s + at, pc.iov[k].iov_base, pc.iov[k].iov_len);
            at += pc.iov[k].iov_len;
        }
        s[at] = '\0';
        *len = at;
    }
    fb_json_pieces_free(&pc);
    return s;
}

int fb_json_real_text(double d, char *buf, size_t cap)
{
    char t[40], out[48];
    /* DBL_DIG (15) digits: any decimal of as many reads back as written, so for a normal double the first
     * precision from 15 that reads back as d is the shortest (%g drops the trailing zeros); 17 always does.
     * A subnormal holds fewer digits: from 1. */
    bool subnormal = d != 0 && fabs(d) < DBL_MIN;
    for (int prec = subnormal ? 1 : 15; prec <= 17; prec++) {
        snprintf(t, sizeof t, "%.*g", prec, d);
        if (strtod(t, NULL) == d)
            break;
    }
    const char *e = strchr(t, 'e');
    size_t o = e ? (size_t)(e - t) : strlen(t);
    memcpy(out, t, o);
    if (e) { /* jansson's form: 1e300, 1e-5 */
        const char *x = e + 1;
        out[o++] = 'e';
        if (*x == '-')
            out[o++] = *x++;
        else if (*x == '+')
            x++;
        while (x[0] == '0' && x[1])
            x++;
        size_t n = strlen(x);
        memcpy(out + o, x, n);
        o += n;
    } else if (!memchr(t, '.', o)) { /* a real stays one: 3.0 */
        out[o++] = '.';
        out[o++] = '0';
    }
    out[o] = '\0';
    return snprintf(buf, cap, "%s", out);
}

/* The JSON number token at s (outside any string), its length. */
static size_t token_len(const char *s)
{
    size_t n = 0;
    while (s[n] && strchr("0123456789+-.eE", s[n]))
        n++;
    return n;
}

char *fb_json_shortest_reals(char *text)
{
    if (!text)
        return NULL;
    fb_buf b;
    fb_buf_init(&b, SIZE_MAX);
    size_t len = strlen(text), from = 0;
    bool in_str = false, esc = false;
    int rc = fb_buf_reserve(&b, len + 1);
    for (size_t i = 0; rc == 0 && i < len; i++) {
        char c = text[i];
        if (in_str) {
            in_str = esc || c != '"';
            esc = !esc && c == '\\';
            continue;
        }
        if (c == '"') {
            in_str = true;
            continue;
        }
        if (c != '-' && (c < '0' || c > '9'))
            continue;
        size_t n = token_len(text + i);
        if (memchr(text + i, '.', n) || memchr(text + i, 'e', n) || memchr(text + i, 'E', n)) {
            char num[48];
            int m = fb_json_real_text(strtod(text + i, NULL), num, sizeof num);
            rc = fb_buf_append(&b, text + from, i - from) < 0 || fb_buf_append(&b, num, (size_t)m) < 0 ? -1 : 0;
            from = i + n;
        }
        i += n - 1;
    }
    if (rc == 0)
        rc = fb_buf_append(&b, text + from, len - from);
    free(text);
    if (rc < 0) {
        fb_buf_free(&b);
        return NULL;
    }
    return fb_buf_steal(&b, NULL);
}

char *fb_json_dumps_shortest(const json_t *v, size_t flags)
{
    return fb_json_shortest_reals(json_dumps(v, flags));
}
