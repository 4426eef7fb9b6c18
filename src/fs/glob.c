/* minimatch-compatible glob matching; see glob.h for the semantics and where they come from.
 *
 * Compiling: the leading `!`s are counted, braces are expanded into alternatives (brace-expansion's
 * rules, worked on the raw text so backslash escapes survive for the segment parser), each alternative
 * is split on runs of '/', `x/..` pairs and repeated `**` are folded, and each segment becomes a literal
 * string, a token list (char, `?`, `*`, class), `**`, or "never" (a class with nothing valid in it).
 * Everything a compiled glob holds lives in one arena; brace expansion works in a second, capped one.
 *
 * Matching: a segment's tokens are simulated with a bitset of positions (no backtracking), and a row of
 * segments against the path's segments with a bitset of reachable pattern positions, so `*a*a*a*b` or
 * `**` chains cost O(input x pattern) at most. Matching allocates nothing. */
#include "fs/glob.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ERR_TYPE FB_ERR_INVALID_PATTERN
#define MAX_REWRITES 64                     /* bash's `{a},b}` quirk: restarts of the scan per set */
#define TMP_ARENA_LIMIT ((size_t)16 << 20) /* all the work of one brace expansion */
#define ROW_WORDS ((FB_GLOB_MAX_SEGMENTS + 1 + 63) / 64)
#define TOK_WORDS ((FB_GLOB_MAX_PATTERN + 1 + 63) / 64)

/* ---- arena ---- */

typedef struct arena_block {
    struct arena_block *next;
    size_t cap, used;
} arena_block;

#define BLOCK_HEAD ((sizeof(arena_block) + 15) & ~(size_t)15)

typedef struct arena {
    arena_block *head;
    size_t total, limit;
    bool over_limit; /* the last failure was the limit, not malloc */
} arena;

static void *arena_alloc(arena *a, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (!a->head || a->head->cap - a->head->used < n) {
        size_t cap = n > 8192 ? n : 8192;
        if (a->total + cap > a->limit) {
            a->over_limit = true;
            return NULL;
        }
        arena_block *b = malloc(BLOCK_HEAD + cap);
        if (!b)
            return NULL;
        b->next = a->head;
        b->cap = cap;
        b->used = 0;
        a->head = b;
        a->total += cap;
    }
    void *p = (char *)a->head + BLOCK_HEAD + a->head->used;
    a->head->used += n;
    return p;
}

static void arena_free(arena *a)
{
    while (a->head) {
        arena_block *next = a->head->next;
        free(a->head);
        a->head = next;
    }
    a->total = 0;
}

/* ---- compiled form ---- */

enum { TK_CHAR, TK_ANY, TK_STAR, TK_CLASS };
enum { PART_LITERAL, PART_MATCHER, PART_NEVER, PART_GLOBSTAR };

enum {
    PX_ALNUM = 1 << 0, PX_ALPHA = 1 << 1, PX_ASCII = 1 << 2, PX_BLANK = 1 << 3, PX_CNTRL = 1 << 4,
    PX_DIGIT = 1 << 5, PX_GRAPH = 1 << 6, PX_LOWER = 1 << 7, PX_PRINT = 1 << 8, PX_PUNCT = 1 << 9,
    PX_SPACE = 1 << 10, PX_UPPER = 1 << 11, PX_WORD = 1 << 12, PX_XDIGIT = 1 << 13,
};

static const struct {
    const char *name;
    unsigned bit;
} posix_names[] = {
    {"[:alnum:]", PX_ALNUM}, {"[:alpha:]", PX_ALPHA}, {"[:ascii:]", PX_ASCII}, {"[:blank:]", PX_BLANK},
    {"[:cntrl:]", PX_CNTRL}, {"[:digit:]", PX_DIGIT}, {"[:graph:]", PX_GRAPH}, {"[:lower:]", PX_LOWER},
    {"[:print:]", PX_PRINT}, {"[:punct:]", PX_PUNCT}, {"[:space:]", PX_SPACE}, {"[:upper:]", PX_UPPER},
    {"[:word:]", PX_WORD},   {"[:xdigit:]", PX_XDIGIT},
};

typedef struct cls_range {
    uint32_t lo, hi;
} cls_range;

typedef struct glob_class {
    bool negate;
    unsigned posix; /* PX_* bits */
    size_t nranges;
    cls_range *ranges;
} glob_class;

typedef struct tok {
    int kind;
    uint32_t cp;               /* TK_CHAR */
    const glob_class *cls;     /* TK_CLASS */
} tok;

typedef struct part {
    int kind;
    const char *lit; /* PART_LITERAL: the bytes it matches */
    size_t lit_len;
    const tok *toks; /* PART_MATCHER */
    size_t ntoks;
} part;

typedef struct row {
    part *parts;
    size_t nparts;
} row;

struct fb_glob {
    bool comment; /* starts with '#': matches nothing */
    bool empty;   /* "": matches only "" */
    bool negate;
    row *rows;
    size_t nrows;
    arena mem;
};

/* A bad UTF-8 byte becomes a code point of its own above Unicode, so it equals only the same byte. */
#define BAD_BYTE_CP(b) (0x110000u + (uint32_t)(b))

/* Decodes one code point at s[0..n), n > 0; *len gets its byte length. */
static uint32_t utf8_decode(const char *s, size_t n, size_t *len)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t need;
    uint32_t cp;
    if (u[0] < 0x80) {
        *len = 1;
        return u[0];
    } else if (u[0] >= 0xc2 && u[0] <= 0xdf) {
        need = 2;
        cp = u[0] & 0x1f;
    } else if (u[0] >= 0xe0 && u[0] <= 0xef) {
        need = 3;
        cp = u[0] & 0x0f;
    } else if (u[0] >= 0xf0 && u[0] <= 0xf4) {
        need = 4;
        cp = u[0] & 0x07;
    } else {
        *len = 1;
        return BAD_BYTE_CP(u[0]);
    }
    if (n < need)
        goto bad;
    for (size_t i = 1; i < need; i++) {
        if ((u[i] & 0xc0) != 0x80)
            goto bad;
        cp = (cp << 6) | (u[i] & 0x3f);
    }
    /* overlong forms, surrogates and values past U+10FFFF are not UTF-8 */
    if ((need == 3 && cp < 0x800) || (need == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff))
        goto bad;
    *len = need;
    return cp;
bad:
    *len = 1;
    return BAD_BYTE_CP(u[0]);
}

/* ---- brace expansion (npm brace-expansion's rules) ---- */

typedef struct sv {
    const char *p;
    size_t n;
} sv;

typedef struct svlist {
    sv *v;
    size_t n, cap;
} svlist;

typedef struct xctx {
    arena *tmp;
    fb_error *err;
} xctx;

static int x_fail_alloc(xctx *x)
{
    if (x->tmp->over_limit)
        return fb_set_error(x->err, ERR_TYPE, 0, "brace expansion is too large");
    return fb_set_error(x->err, FB_ERR_OUT_OF_MEMORY, 12 /* ENOMEM */, "brace expansion");
}

static int sv_push(xctx *x, svlist *l, const char *p, size_t n)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        sv *v = arena_alloc(x->tmp, cap * sizeof *v);
        if (!v)
            return x_fail_alloc(x);
        if (l->n)
            memcpy(v, l->v, l->n * sizeof *v);
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n].p = p;
    l->v[l->n].n = n;
    l->n++;
    return 0;
}

/* A new string a + b + c in the temporary arena. */
static const char *x_concat(xctx *x, sv a, sv b, sv c, size_t *len)
{
    size_t n = a.n + b.n + c.n;
    char *s = arena_alloc(x->tmp, n + 1);
    if (!s)
        return NULL;
    if (a.n)
        memcpy(s, a.p, a.n);
    if (b.n)
        memcpy(s + a.n, b.p, b.n);
    if (c.n)
        memcpy(s + a.n + b.n, c.p, c.n);
    s[n] = '\0';
    *len = n;
    return s;
}

/* out = { a + pre + v : a in acc, v in values }, without empty results when drop is set. */
static int combine(xctx *x, const svlist *acc, sv pre, const svlist *values, bool drop, svlist *out)
{
    svlist r = {0};
    size_t bytes = 0;
    for (size_t i = 0; i < acc->n; i++) {
        for (size_t j = 0; j < values->n; j++) {
            size_t n = acc->v[i].n + pre.n + values->v[j].n;
            if (drop && n == 0)
                continue;
            if (r.n >= FB_GLOB_MAX_ALTERNATIVES)
                return fb_set_error(x->err, ERR_TYPE, 0, "brace expansion gives more than %d alternatives",
                                    FB_GLOB_MAX_ALTERNATIVES);
            bytes += n + 1;
            if (bytes > FB_GLOB_MAX_EXPANDED)
                return fb_set_error(x->err, ERR_TYPE, 0, "brace expansion gives more than %d bytes",
                                    FB_GLOB_MAX_EXPANDED);
            const char *s = x_concat(x, acc->v[i], pre, values->v[j], &n);
            if (!s || sv_push(x, &r, s, n) < 0)
                return x_fail_alloc(x);
        }
    }
    *out = r;
    return 0;
}

static int combine_literal(xctx *x, const svlist *acc, sv lit, bool drop, svlist *out)
{
    svlist one = {0};
    if (sv_push(x, &one, "", 0) < 0)
        return -1;
    return combine(x, acc, lit, &one, drop, out);
}

/* The first `{` (by position) that has a matching `}`, skipping backslash-escaped characters. A `{` is
 * matched when a later `}` brings the depth counted from it back to zero; unmatched ones are literal,
 * as brace-expansion's balanced-match (with its masking of unmatched opens) decides. */
static bool find_group(const char *s, size_t n, size_t *open, size_t *close)
{
    /* Each scanned string is a piece of the pattern plus at most MAX_REWRITES inserted bytes. */
    uint16_t stack[FB_GLOB_MAX_PATTERN + MAX_REWRITES + 4];
    size_t depth = 0;
    bool found = false;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\\') {
            i++;
        } else if (s[i] == '{') {
            if (depth < sizeof stack / sizeof stack[0])
                stack[depth++] = (uint16_t)i;
        } else if (s[i] == '}' && depth > 0) {
            size_t o = stack[--depth];
            if (!found || o < *open) {
                *open = o;
                *close = i;
                found = true;
            }
        }
    }
    return found;
}

/* brace-expansion's `{a},b}` test: a `,` not followed by another `,`, then a `}` on the same line. */
static bool comma_set_follows(const char *s, size_t n)
{
    bool pending = false;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\\') {
            i++;
        } else if (s[i] == '\n' || s[i] == '\r') {
            pending = false;
        } else if (s[i] == ',' && (i + 1 >= n || s[i + 1] != ',')) {
            pending = true;
        } else if (s[i] == '}' && pending) {
            return true;
        }
    }
    return false;
}

static bool has_unescaped(const char *s, size_t n, char c)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\\')
            i++;
        else if (s[i] == c)
            return true;
    }
    return false;
}

/* Parses `-?\d+` at s[*i..n) (alpha: one ASCII letter instead). */
static bool seq_atom(const char *s, size_t n, size_t *i, bool alpha)
{
    size_t j = *i;
    if (alpha) {
        if (j < n && ((s[j] >= 'a' && s[j] <= 'z') || (s[j] >= 'A' && s[j] <= 'Z'))) {
            *i = j + 1;
            return true;
        }
        return false;
    }
    if (j < n && s[j] == '-')
        j++;
    size_t d = j;
    while (j < n && s[j] >= '0' && s[j] <= '9')
        j++;
    if (j == d)
        return false;
    *i = j;
    return true;
}

typedef struct seq_spec {
    bool alpha;
    sv part[3];
    size_t nparts;
} seq_spec;

/* `x..y` or `x..y..step`, numeric (`-?\d+`) or one letter each (with a numeric step). */
static bool parse_sequence(const char *s, size_t n, seq_spec *q)
{
    for (int alpha = 0; alpha <= 1; alpha++) {
        size_t i = 0, start = 0;
        q->alpha = alpha;
        q->nparts = 0;
        for (;;) {
            bool as_alpha = alpha && q->nparts < 2;
            if (!seq_atom(s, n, &i, as_alpha))
                break;
            q->part[q->nparts].p = s + start;
            q->part[q->nparts].n = i - start;
            q->nparts++;
            if (i == n) {
                if (q->nparts >= 2)
                    return true;
                break;
            }
            if (q->nparts == 3 || i + 2 > n || s[i] != '.' || s[i + 1] != '.')
                break;
            i += 2;
            start = i;
        }
    }
    return false;
}

#define SEQ_BOUND 1000000000000000LL /* 10^15: beyond it JS numbers stop being exact */

static int seq_number(xctx *x, sv a, long long *out)
{
    char buf[32];
    if (a.n >= sizeof buf)
        return fb_set_error(x->err, ERR_TYPE, 0, "brace sequence bound %.*s is too large", (int)a.n, a.p);
    memcpy(buf, a.p, a.n);
    buf[a.n] = '\0';
    long long v = strtoll(buf, NULL, 10);
    if (v > SEQ_BOUND || v < -SEQ_BOUND)
        return fb_set_error(x->err, ERR_TYPE, 0, "brace sequence bound %s is too large", buf);
    *out = v;
    return 0;
}

static bool is_padded(sv a)
{
    size_t i = (a.n > 0 && a.p[0] == '-') ? 1 : 0;
    return a.n >= i + 2 && a.p[i] == '0' && a.p[i + 1] >= '0' && a.p[i + 1] <= '9';
}

static int expand_sequence(xctx *x, const seq_spec *q, svlist *out)
{
    long long from = 0, to = 0, step = 1;
    if (q->alpha) {
        from = (unsigned char)q->part[0].p[0];
        to = (unsigned char)q->part[1].p[0];
    } else if (seq_number(x, q->part[0], &from) < 0 || seq_number(x, q->part[1], &to) < 0) {
        return -1;
    }
    if (q->nparts == 3) {
        if (seq_number(x, q->part[2], &step) < 0)
            return -1;
        step = step < 0 ? -step : step;
        if (step == 0)
            step = 1;
    }
    long long span = from <= to ? to - from : from - to;
    if (span / step + 1 > FB_GLOB_MAX_ALTERNATIVES)
        return fb_set_error(x->err, ERR_TYPE, 0, "brace sequence gives more than %d alternatives",
                            FB_GLOB_MAX_ALTERNATIVES);
    bool pad = false;
    for (size_t i = 0; i < q->nparts; i++)
        pad = pad || (!q->alpha && is_padded(q->part[i]));
    size_t width = q->part[0].n > q->part[1].n ? q->part[0].n : q->part[1].n;
    if (from > to)
        step = -step;
    for (long long v = from; from <= to ? v <= to : v >= to; v += step) {
        char buf[64];
        size_t len;
        if (q->alpha) {
            /* brace-expansion yields '' for a backslash inside a letter range */
            buf[0] = (char)v;
            len = v == '\\' ? 0 : 1;
        } else {
            int k = snprintf(buf, sizeof buf, "%lld", v < 0 ? -v : v);
            size_t digits = k > 0 ? (size_t)k : 0;
            size_t sign = v < 0 ? 1 : 0;
            size_t zeros = pad && width > digits + sign ? width - digits - sign : 0;
            if (zeros + digits + sign >= sizeof buf)
                zeros = 0;
            memmove(buf + sign + zeros, buf, digits);
            memset(buf + sign, '0', zeros);
            if (sign)
                buf[0] = '-';
            len = sign + zeros + digits;
        }
        char *s = arena_alloc(x->tmp, len + 1);
        if (!s)
            return x_fail_alloc(x);
        memcpy(s, buf, len);
        s[len] = '\0';
        if (sv_push(x, out, s, len) < 0)
            return -1;
    }
    return 0;
}

static int expand(xctx *x, const char *s, size_t n, bool top, int depth, svlist *out);

/* The members of a comma set's body: split on the commas outside nested braces (a body is balanced). */
static int comma_values(xctx *x, const char *body, size_t n, int depth, svlist *values)
{
    svlist parts = {0};
    size_t start = 0, d = 0;
    for (size_t i = 0; i < n; i++) {
        if (body[i] == '\\') {
            i++;
        } else if (body[i] == '{') {
            d++;
        } else if (body[i] == '}') {
            d -= d > 0;
        } else if (body[i] == ',' && d == 0) {
            if (sv_push(x, &parts, body + start, i - start) < 0)
                return -1;
            start = i + 1;
        }
    }
    if (sv_push(x, &parts, body + start, n - start) < 0)
        return -1;
    if (parts.n == 1) {
        /* x{{a,b}}y is x{a}y x{b}y: the single member is expanded and re-wrapped in braces */
        svlist inner = {0};
        if (expand(x, parts.v[0].p, parts.v[0].n, false, depth + 1, &inner) < 0)
            return -1;
        sv open = {"{", 1}, close = {"}", 1};
        for (size_t i = 0; i < inner.n; i++) {
            size_t len;
            const char *w = x_concat(x, open, inner.v[i], close, &len);
            if (!w || sv_push(x, values, w, len) < 0)
                return x_fail_alloc(x);
        }
        return 0;
    }
    for (size_t i = 0; i < parts.n; i++) {
        svlist one = {0};
        if (expand(x, parts.v[i].p, parts.v[i].n, false, depth + 1, &one) < 0)
            return -1;
        for (size_t j = 0; j < one.n; j++) {
            if (values->n >= FB_GLOB_MAX_ALTERNATIVES)
                return fb_set_error(x->err, ERR_TYPE, 0, "brace expansion gives more than %d alternatives",
                                    FB_GLOB_MAX_ALTERNATIVES);
            if (sv_push(x, values, one.v[j].p, one.v[j].n) < 0)
                return -1;
        }
    }
    return 0;
}

/* Expands s[0..n) left to right: acc holds the results so far, each brace set multiplies it. */
static int expand(xctx *x, const char *s, size_t n, bool top, int depth, svlist *out)
{
    if (depth > FB_GLOB_MAX_BRACE_DEPTH)
        return fb_set_error(x->err, ERR_TYPE, 0, "braces nested deeper than %d", FB_GLOB_MAX_BRACE_DEPTH);
    svlist acc = {0};
    if (sv_push(x, &acc, "", 0) < 0)
        return -1;
    bool drop = false, first = true;
    int rewrites = 0;
    for (;;) {
        size_t o = 0, c = 0;
        if (!find_group(s, n, &o, &c))
            return combine_literal(x, &acc, (sv){s, n}, drop, out);
        sv body = {s + o + 1, c - o - 1};
        sv post = {s + c + 1, n - c - 1};
        if (o > 0 && s[o - 1] == '$') {
            /* `${...}` is a shell variable, never a set */
            if (combine_literal(x, &acc, (sv){s, c + 1}, drop && post.n == 0, &acc) < 0)
                return -1;
        } else {
            seq_spec q;
            bool seq = parse_sequence(body.p, body.n, &q);
            if (!seq && !has_unescaped(body.p, body.n, ',')) {
                if (rewrites < MAX_REWRITES && comma_set_follows(post.p, post.n)) {
                    /* bash's `{a},b}`: this `}` becomes literal and the scan starts again */
                    size_t len;
                    const char *r = x_concat(x, (sv){s, c}, (sv){"\\", 1}, (sv){s + c, n - c}, &len);
                    if (!r)
                        return x_fail_alloc(x);
                    s = r;
                    n = len;
                    rewrites++;
                    top = true;
                    continue;
                }
                return combine_literal(x, &acc, (sv){s, n}, drop, out);
            }
            if (first) {
                /* bash drops empty words only when the first set is a comma set */
                drop = top && !seq;
                first = false;
            }
            svlist values = {0};
            if ((seq ? expand_sequence(x, &q, &values) : comma_values(x, body.p, body.n, depth, &values)) < 0)
                return -1;
            if (combine(x, &acc, (sv){s, o}, &values, drop && post.n == 0, &acc) < 0)
                return -1;
        }
        if (post.n == 0)
            break;
        s = post.p;
        n = post.n;
    }
    *out = acc;
    return 0;
}

/* ---- segments ---- */

static bool posix_has(unsigned bits, uint32_t cp)
{
    if (cp >= 0x80) /* approximation: a non-ASCII character counts as a letter */
        return cp < 0x110000 && (bits & (PX_ALPHA | PX_ALNUM | PX_WORD | PX_GRAPH | PX_PRINT));
    int c = (int)cp;
    bool upper = c >= 'A' && c <= 'Z', lower = c >= 'a' && c <= 'z', digit = c >= '0' && c <= '9';
    bool alpha = upper || lower, graph = c > 0x20 && c < 0x7f;
    return ((bits & PX_ALNUM) && (alpha || digit)) || ((bits & PX_ALPHA) && alpha) || (bits & PX_ASCII) ||
           ((bits & PX_BLANK) && (c == ' ' || c == '\t')) || ((bits & PX_CNTRL) && (c < 0x20 || c == 0x7f)) ||
           ((bits & PX_DIGIT) && digit) || ((bits & PX_GRAPH) && graph) || ((bits & PX_LOWER) && lower) ||
           ((bits & PX_PRINT) && (graph || c == ' ')) ||
           ((bits & PX_PUNCT) && graph && !alpha && !digit) ||
           ((bits & PX_SPACE) && (c == ' ' || (c >= '\t' && c <= '\r'))) || ((bits & PX_UPPER) && upper) ||
           ((bits & PX_WORD) && (alpha || digit || c == '_')) ||
           ((bits & PX_XDIGIT) && (digit || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')));
}

static bool class_has(const glob_class *k, uint32_t cp)
{
    bool in = posix_has(k->posix, cp);
    for (size_t i = 0; !in && i < k->nranges; i++)
        in = cp >= k->ranges[i].lo && cp <= k->ranges[i].hi;
    return in != k->negate;
}

enum { CLASS_OK, CLASS_UNCLOSED, CLASS_NEVER, CLASS_NOMEM };

static void class_add(glob_class *k, uint32_t lo, uint32_t hi)
{
    k->ranges[k->nranges].lo = lo;
    k->ranges[k->nranges].hi = hi;
    k->nranges++;
}

/* Parses the class starting at s[pos] == '[' (minimatch's parseClass): leading `!`/`^` negates, a `]`
 * first is a member, `\` escapes, `[:name:]` are POSIX classes, `a-z` ranges (reversed ones are dropped),
 * `a-]` is `a` and `-`. *end gets the index after the closing `]`; *single is set when minimatch would
 * treat the class as the literal character (one unnegated member, written as one character). */
/* Which scan states of one segment are known to reach its end without closing a class: bit
 * (escaping | have_start << 1) of dead[i]. Once the first member is read, whether a class closes depends only
 * on (i, escaping, have_start), so a scan that enters a state an earlier unclosed scan passed through is
 * unclosed too. Without this, a segment of many unclosed `[` costs O(n^2) (a fuzz find: 100 `[` in 256
 * brace alternatives took 12 s in the fuzz build); with it each state is scanned once per segment. */
typedef struct class_memo {
    uint8_t *dead;        /* n + 1 entries, zeroed; owned by the compile's arena */
    uint32_t *seen;       /* the current scan's states, i << 2 | state, to mark dead if it ends unclosed */
    size_t nseen;
} class_memo;

static int class_unclosed(class_memo *m)
{
    for (size_t j = 0; j < m->nseen; j++)
        m->dead[m->seen[j] >> 2] |= (uint8_t)(1u << (m->seen[j] & 3));
    m->nseen = 0;
    return CLASS_UNCLOSED;
}

/* The POSIX class name starting at s[i] (index into posix_names), or -1. */
static int posix_name_at(const char *s, size_t n, size_t i)
{
    if (n - i < 2 || s[i + 1] != ':')
        return -1;
    for (size_t p = 0; p < sizeof posix_names / sizeof posix_names[0]; p++) {
        size_t len = strlen(posix_names[p].name);
        if (n - i >= len && memcmp(s + i, posix_names[p].name, len) == 0)
            return (int)p;
    }
    return -1;
}

static int parse_class(arena *mem, class_memo *memo, const char *s, size_t n, size_t pos, glob_class **out,
                       size_t *end, bool *single)
{
    /* each member consumes at least one byte, so a segment's length bounds the ranges */
    cls_range ranges[FB_GLOB_MAX_PATTERN];
    glob_class tmp = {.ranges = ranges}, *k = &tmp;
    size_t i = pos + 1, clen;
    bool saw_start = false, escaping = false, have_start = false, closed = false;
    uint32_t range_start = 0;
    memo->nseen = 0;
    while (i < n) {
        if (saw_start) {
            unsigned state = (unsigned)escaping | (unsigned)have_start << 1;
            if (memo->dead[i] & (1u << state))
                return class_unclosed(memo);
            memo->seen[memo->nseen++] = (uint32_t)(i << 2 | state);
        }
        uint32_t c = utf8_decode(s + i, n - i, &clen);
        if ((c == '!' || c == '^') && i == pos + 1) {
            k->negate = true;
            i++;
            continue;
        }
        if (c == ']' && saw_start && !escaping) {
            closed = true;
            *end = i + 1;
            break;
        }
        saw_start = true;
        if (c == '\\' && !escaping) {
            escaping = true;
            i++;
            continue;
        }
        int px = c == '[' && !escaping ? posix_name_at(s, n, i) : -1;
        if (px >= 0) {
            if (have_start) /* `[a-[:alpha:]]` is invalid */
                return CLASS_NEVER;
            k->posix |= posix_names[px].bit;
            i += strlen(posix_names[px].name);
            continue;
        }
        escaping = false;
        if (have_start) {
            if (c >= range_start)
                class_add(k, range_start, c);
            have_start = false;
            i += clen;
            continue;
        }
        if (i + clen + 1 < n && s[i + clen] == '-' && s[i + clen + 1] == ']') {
            class_add(k, c, c);
            class_add(k, '-', '-');
            i += clen + 1;
            continue;
        }
        if (i + clen < n && s[i + clen] == '-') {
            range_start = c;
            have_start = true;
            i += clen + 1;
            continue;
        }
        class_add(k, c, c);
        i += clen;
    }
    if (!closed)
        return class_unclosed(memo);
    if (k->nranges == 0 && k->posix == 0)
        return CLASS_NEVER;
    k = arena_alloc(mem, sizeof *k);
    cls_range *kept = k ? arena_alloc(mem, (tmp.nranges ? tmp.nranges : 1) * sizeof *kept) : NULL;
    if (!kept)
        return CLASS_NOMEM;
    *k = tmp;
    if (tmp.nranges)
        memcpy(kept, ranges, tmp.nranges * sizeof *kept);
    k->ranges = kept;
    /* minimatch's literal(): the body, less one leading backslash, is one character and not negated */
    size_t b = pos + 1, e = *end - 1;
    if (b < e && s[b] == '\\')
        b++;
    *single = false;
    if (!k->negate && b < e && (s[pos + 1] != '!' && s[pos + 1] != '^')) {
        utf8_decode(s + b, e - b, &clen);
        *single = b + clen == e;
    }
    *out = k;
    return CLASS_OK;
}

/* Compiles one segment (no '/', not "**"). */
static int compile_segment(arena *mem, const char *s, size_t n, part *p, fb_error *err)
{
    tok *toks = arena_alloc(mem, (n + 1) * sizeof *toks);
    char *lit = arena_alloc(mem, n + 1);
    class_memo memo = {.dead = NULL};
    if (!toks || !lit)
        goto nomem;
    size_t nt = 0, nl = 0, i = 0, clen;
    bool literal = true;
    while (i < n) {
        char c = s[i];
        if (c == '\\' && i + 1 < n) {
            toks[nt].kind = TK_CHAR;
            toks[nt++].cp = utf8_decode(s + i + 1, n - i - 1, &clen);
            memcpy(lit + nl, s + i + 1, clen);
            nl += clen;
            i += 1 + clen;
        } else if (c == '*') {
            literal = false;
            if (nt == 0 || toks[nt - 1].kind != TK_STAR)
                toks[nt++].kind = TK_STAR;
            i++;
        } else if (c == '?') {
            literal = false;
            toks[nt++].kind = TK_ANY;
            i++;
        } else if (c == '[') {
            glob_class *k = NULL;
            size_t end = 0;
            bool single = false;
            if (!memo.dead) { /* only segments with a class pay for it */
                memo.dead = arena_alloc(mem, n + 1);
                memo.seen = arena_alloc(mem, (n + 1) * sizeof *memo.seen);
                if (!memo.dead || !memo.seen)
                    goto nomem;
                memset(memo.dead, 0, n + 1);
            }
            int r = parse_class(mem, &memo, s, n, i, &k, &end, &single);
            if (r == CLASS_NOMEM)
                goto nomem;
            if (r == CLASS_NEVER) {
                p->kind = PART_NEVER;
                return 0;
            }
            if (r == CLASS_UNCLOSED) {
                toks[nt].kind = TK_CHAR;
                toks[nt++].cp = '[';
                lit[nl++] = '[';
                i++;
                continue;
            }
            toks[nt].kind = TK_CLASS;
            toks[nt++].cls = k;
            if (single) {
                size_t b = i + 1 + (s[i + 1] == '\\');
                memcpy(lit + nl, s + b, end - 1 - b);
                nl += end - 1 - b;
            } else {
                literal = false;
            }
            i = end;
        } else {
            /* a trailing backslash is a literal backslash */
            toks[nt].kind = TK_CHAR;
            toks[nt++].cp = utf8_decode(s + i, n - i, &clen);
            memcpy(lit + nl, s + i, clen);
            nl += clen;
            i += clen;
        }
    }
    if (literal) {
        p->kind = PART_LITERAL;
        p->lit = lit;
        p->lit_len = nl;
    } else {
        p->kind = PART_MATCHER;
        p->toks = toks;
        p->ntoks = nt;
    }
    return 0;
nomem:
    return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, 12 /* ENOMEM */, "compiling a glob");
}

/* Splits like JS `s.split(/\/+/)`: "" is [""], "/a" is ["", "a"], "a/" is ["a", ""]. */
typedef struct seg_iter {
    const char *s;
    size_t n, i;
    bool done;
} seg_iter;

static bool seg_next(seg_iter *it, const char **f, size_t *fl)
{
    if (it->done)
        return false;
    size_t start = it->i;
    while (it->i < it->n && it->s[it->i] != '/')
        it->i++;
    *f = it->s + start;
    *fl = it->i - start;
    if (it->i == it->n)
        it->done = true;
    while (it->i < it->n && it->s[it->i] == '/')
        it->i++;
    return true;
}

/* Skips leading "./" (and the slashes after it): fnbox treats it as the current directory. */
static size_t skip_dot_slash(const char *s, size_t n)
{
    size_t i = 0;
    while (i + 1 < n && s[i] == '.' && s[i + 1] == '/') {
        i += 2;
        while (i < n && s[i] == '/')
            i++;
    }
    return i;
}

static bool seg_eq(sv a, const char *lit)
{
    return a.n == strlen(lit) && memcmp(a.p, lit, a.n) == 0;
}

/* One alternative: split on runs of '/', fold `**` repeats and `x/..`, compile each segment. */
static int compile_row(fb_glob *g, const char *s, size_t n, row *r, fb_error *err)
{
    size_t skip = skip_dot_slash(s, n);
    s += skip;
    n -= skip;
    sv segs[FB_GLOB_MAX_SEGMENTS];
    size_t nsegs = 0;
    seg_iter it = {s, n, 0, false};
    sv seg;
    while (seg_next(&it, &seg.p, &seg.n)) {
        /* minimatch's default optimisation: a `**` after `**` adds nothing, `x/..` cancels out */
        sv prev = nsegs ? segs[nsegs - 1] : (sv){"", 0};
        if (seg_eq(seg, "..") && prev.n > 0 && !seg_eq(prev, "..") && !seg_eq(prev, ".") &&
            !seg_eq(prev, "**")) {
            nsegs--;
            continue;
        }
        if (seg_eq(seg, "**") && seg_eq(prev, "**"))
            continue;
        if (nsegs == FB_GLOB_MAX_SEGMENTS)
            return fb_set_error(err, ERR_TYPE, 0, "pattern has more than %d path segments",
                                FB_GLOB_MAX_SEGMENTS);
        segs[nsegs++] = seg;
    }
    if (nsegs == 0)
        segs[nsegs++] = (sv){s, 0};
    r->parts = arena_alloc(&g->mem, nsegs * sizeof *r->parts);
    if (!r->parts)
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, 12 /* ENOMEM */, "compiling a glob");
    r->nparts = nsegs;
    for (size_t k = 0; k < nsegs; k++) {
        memset(&r->parts[k], 0, sizeof r->parts[k]);
        if (seg_eq(segs[k], "**"))
            r->parts[k].kind = PART_GLOBSTAR;
        else if (compile_segment(&g->mem, segs[k].p, segs[k].n, &r->parts[k], err) < 0)
            return -1;
    }
    return 0;
}

/* The brace alternatives of s[0..n) (a pattern after its leading '!'s, at most FB_GLOB_MAX_PATTERN bytes);
 * buf holds FB_GLOB_MAX_PATTERN + 3 bytes for the rewritten text. */
static int expand_pattern(xctx *x, const char *s, size_t n, char *buf, svlist *alts)
{
    if (n >= 2 && s[0] == '{' && s[1] == '}') {
        /* brace-expansion (like bash) keeps a leading `{}` literal */
        buf[0] = buf[2] = '\\';
        buf[1] = '{';
        buf[3] = '}';
        memcpy(buf + 4, s + 2, n - 2);
        s = buf;
        n += 2;
    }
    return n == 0 ? sv_push(x, alts, "", 0) : expand(x, s, n, true, 0, alts);
}

fb_glob *fb_glob_compile_n(const char *pattern, size_t len, fb_error *err)
{
    arena tmp = {.limit = TMP_ARENA_LIMIT};
    if (len > FB_GLOB_MAX_PATTERN) {
        fb_set_error(err, ERR_TYPE, 0, "pattern is longer than %d bytes", FB_GLOB_MAX_PATTERN);
        return NULL;
    }
    if (memchr(pattern, '\0', len)) {
        fb_set_error(err, ERR_TYPE, 0, "pattern contains a NUL character");
        return NULL;
    }
    fb_glob *g = calloc(1, sizeof *g);
    if (!g) {
        fb_set_error(err, FB_ERR_OUT_OF_MEMORY, 12 /* ENOMEM */, "compiling a glob");
        return NULL;
    }
    g->mem.limit = SIZE_MAX;
    if (len > 0 && pattern[0] == '#') {
        g->comment = true;
        return g;
    }
    if (len == 0) {
        g->empty = true;
        return g;
    }
    size_t k = 0;
    while (k < len && pattern[k] == '!')
        k++;
    g->negate = k % 2 == 1;
    const char *s = pattern + k;
    size_t n = len - k;

    xctx x = {&tmp, err};
    svlist alts = {0};
    char buf[FB_GLOB_MAX_PATTERN + 3];
    if (expand_pattern(&x, s, n, buf, &alts) < 0)
        goto fail;
    g->rows = arena_alloc(&g->mem, (alts.n ? alts.n : 1) * sizeof *g->rows);
    if (!g->rows) {
        fb_set_error(err, FB_ERR_OUT_OF_MEMORY, 12 /* ENOMEM */, "compiling a glob");
        goto fail;
    }
    memset(g->rows, 0, (alts.n ? alts.n : 1) * sizeof *g->rows);
    for (size_t i = 0; i < alts.n; i++)
        if (compile_row(g, alts.v[i].p, alts.v[i].n, &g->rows[i], err) < 0)
            goto fail;
    g->nrows = alts.n;
    arena_free(&tmp);
    return g;
fail:
    arena_free(&tmp);
    fb_glob_free(g);
    return NULL;
}

fb_glob *fb_glob_compile(const char *pattern, fb_error *err)
{
    return fb_glob_compile_n(pattern, strlen(pattern), err);
}

void fb_glob_free(fb_glob *g)
{
    if (!g)
        return;
    arena_free(&g->mem);
    free(g);
}

/* ---- matching ---- */

static inline void bit_set(uint64_t *b, size_t i)
{
    b[i / 64] |= (uint64_t)1 << (i % 64);
}

static inline bool bit_get(const uint64_t *b, size_t i)
{
    return (b[i / 64] >> (i % 64)) & 1;
}

/* A segment holding a wildcard never matches "", "." or ".." (minimatch with dot:true). */
static bool dots_or_empty(const char *f, size_t n)
{
    return n == 0 || (n == 1 && f[0] == '.') || (n == 2 && f[0] == '.' && f[1] == '.');
}

/* All token positions at once: cur holds the positions reachable after the characters read so far. */
static bool matcher_match(const part *p, const char *f, size_t n)
{
    uint64_t cur[TOK_WORDS], nxt[TOK_WORDS];
    size_t words = p->ntoks / 64 + 1, clen;
    memset(cur, 0, words * sizeof cur[0]);
    bit_set(cur, 0);
    if (p->ntoks > 0 && p->toks[0].kind == TK_STAR)
        bit_set(cur, 1);
    for (size_t i = 0; i < n; i += clen) {
        uint32_t c = utf8_decode(f + i, n - i, &clen);
        bool any = false;
        memset(nxt, 0, words * sizeof nxt[0]);
        for (size_t w = 0; w < words; w++) {
            for (uint64_t bits = cur[w]; bits; bits &= bits - 1) {
                size_t k = w * 64 + (size_t)__builtin_ctzll(bits);
                if (k >= p->ntoks)
                    continue;
                const tok *t = &p->toks[k];
                if (t->kind == TK_STAR) {
                    bit_set(nxt, k);
                    bit_set(nxt, k + 1); /* stars never follow stars, so this closes over them */
                    any = true;
                } else if (t->kind == TK_ANY || (t->kind == TK_CHAR && t->cp == c) ||
                           (t->kind == TK_CLASS && class_has(t->cls, c))) {
                    bit_set(nxt, k + 1);
                    if (k + 1 < p->ntoks && p->toks[k + 1].kind == TK_STAR)
                        bit_set(nxt, k + 2);
                    any = true;
                }
            }
        }
        if (!any)
            return false;
        memcpy(cur, nxt, words * sizeof cur[0]);
    }
    return bit_get(cur, p->ntoks);
}

static bool part_match(const part *p, const char *f, size_t n)
{
    switch (p->kind) {
    case PART_LITERAL:
        return n == p->lit_len && memcmp(f, p->lit, n) == 0;
    case PART_MATCHER:
        return !dots_or_empty(f, n) && matcher_match(p, f, n);
    default:
        return false;
    }
}

/* A `**` before the last part may match no segment: reaching it reaches the part after it too. */
static void row_close(const row *r, uint64_t *set)
{
    for (size_t j = 0; j + 1 < r->nparts; j++)
        if (bit_get(set, j) && r->parts[j].kind == PART_GLOBSTAR)
            bit_set(set, j + 1);
}

/* The path's segments one at a time against every reachable pattern position. A path ending in '/' also
 * matches when the pattern was complete before that empty last segment (`a/<star>` matches `a/b/`). */
static bool row_match(const row *r, const char *path, size_t n)
{
    uint64_t cur[ROW_WORDS] = {0}, nxt[ROW_WORDS];
    size_t P = r->nparts, count = 0, fl;
    bool end_before_last = false, last_empty = false;
    seg_iter it = {path, n, 0, false};
    const char *f;
    bit_set(cur, 0);
    row_close(r, cur);
    while (seg_next(&it, &f, &fl)) {
        end_before_last = bit_get(cur, P);
        memset(nxt, 0, sizeof nxt);
        for (size_t j = 0; j < P; j++) {
            if (!bit_get(cur, j))
                continue;
            if (r->parts[j].kind == PART_GLOBSTAR) {
                /* `**` walks any segment but `.` and `..` (the empty one included) */
                if (!(fl == 1 && f[0] == '.') && !(fl == 2 && f[0] == '.' && f[1] == '.')) {
                    bit_set(nxt, j);
                    bit_set(nxt, j + 1);
                }
            } else if (part_match(&r->parts[j], f, fl)) {
                bit_set(nxt, j + 1);
            }
        }
        row_close(r, nxt);
        memcpy(cur, nxt, sizeof cur);
        count++;
        last_empty = fl == 0;
    }
    return bit_get(cur, P) || (last_empty && count >= 2 && end_before_last);
}

bool fb_glob_test(const fb_glob *g, const char *path)
{
    if (g->comment)
        return false;
    if (g->empty)
        return path[0] == '\0';
    size_t n = strlen(path);
    size_t skip = skip_dot_slash(path, n);
    bool hit = false;
    for (size_t i = 0; !hit && i < g->nrows; i++)
        hit = row_match(&g->rows[i], path + skip, n - skip);
    return hit != g->negate;
}

bool fb_glob_match(const char *pattern, const char *path)
{
    fb_glob *g = fb_glob_compile(pattern, NULL);
    if (!g)
        return false;
    bool hit = fb_glob_test(g, path);
    fb_glob_free(g);
    return hit;
}

/* Extglob syntax in p[i..len): `+(`, `@(`, `!(` with a `)` after them; `*(` and `?(` closed or not
 * (minimatch, extglobs on, reads an unclosed one as literal text where noext reads a wildcard and `(`). */
static bool extglob_in(const char *p, size_t len, size_t i)
{
    for (; i + 1 < len; i++) {
        if (p[i] == '\\') {
            i++;
        } else if (p[i + 1] == '(' && p[i] != '\0' && strchr("*?+@!", p[i]) &&
                   (p[i] == '*' || p[i] == '?' || memchr(p + i + 2, ')', len - i - 2))) {
            return true;
        }
    }
    return false;
}

bool fb_glob_has_extglob(const char *pattern, size_t len)
{
    size_t k = 0;
    while (k < len && pattern[k] == '!')
        k++;
    if (extglob_in(pattern, len, k))
        return true;
    /* Braces are expanded before extglobs are read: `{a,*}(b)` holds `*(b)`. A pattern too long to expand
     * or holding a NUL does not compile anyway. */
    if (len > FB_GLOB_MAX_PATTERN || !memchr(pattern + k, '{', len - k) || memchr(pattern, '\0', len))
        return false;
    arena tmp = {.limit = TMP_ARENA_LIMIT};
    xctx x = {&tmp, NULL};
    svlist alts = {0};
    char buf[FB_GLOB_MAX_PATTERN + 3];
    bool hit = false;
    if (expand_pattern(&x, pattern + k, len - k, buf, &alts) == 0)
        for (size_t i = 0; !hit && i < alts.n; i++)
            hit = extglob_in(alts.v[i].p, alts.v[i].n, 0);
    arena_free(&tmp);
    return hit;
}
