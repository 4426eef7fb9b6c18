/* Python signature inference: finds the top-level `def` / `async def` statements of a source text and their
 * parameters, defaults, annotations and docstrings, without running or fully parsing the code.
 *
 * The scan works on logical lines (Python's own unit): a logical line ends at a newline outside brackets,
 * strings and backslash continuations. A logical line that starts at column 0 with `def` or `async def` is a
 * top-level function; everything indented (class bodies, nested defs, method bodies) is skipped wholesale.
 * Strings of every form (prefixes, triple quotes, escapes) and comments are skipped by a small tokenizer, so a
 * `def fake(` inside a string or comment is never reported. All reads are bounded by `len`. */
#include <string.h>

#include "lang/signature.h"
#include "lang/source_scan.h"

typedef struct py_scan {
    const char *s;
    size_t len;
    size_t pos;
    int line; /* 1-based line of s[pos] */
} py_scan;

static int at(const py_scan *sc, size_t i)
{
    return i < sc->len ? (unsigned char)sc->s[i] : -1;
}

static size_t ident_end(const py_scan *sc, size_t p)
{
    while (p < sc->len && fb_scan_is_ident_byte((unsigned char)sc->s[p]))
        p++;
    return p;
}

static bool word_is(const py_scan *sc, size_t a, size_t b, const char *w)
{
    size_t n = strlen(w);
    return b - a == n && memcmp(sc->s + a, w, n) == 0;
}

static bool is_quote(int c)
{
    return c == '\'' || c == '"';
}

/* A string prefix (r, b, f, u, t and the two-letter raw combinations, any case)? *plain_str is set when the
 * prefix keeps the literal a plain str (only such literals can be docstrings). */
static bool is_string_prefix(const py_scan *sc, size_t a, size_t b, bool *plain_str)
{
    size_t n = b - a;
    *plain_str = true;
    if (n == 0 || n > 2)
        return false;
    int c0 = sc->s[a] | 0x20; /* ASCII lower case; non-letters never match below */
    if (n == 1) {
        if (c0 == 'b' || c0 == 'f' || c0 == 't')
            *plain_str = false;
        return c0 == 'r' || c0 == 'u' || c0 == 'b' || c0 == 'f' || c0 == 't';
    }
    int c1 = sc->s[a + 1] | 0x20;
    *plain_str = false;
    if (c0 == 'r')
        return c1 == 'b' || c1 == 'f' || c1 == 't';
    if (c1 == 'r')
        return c0 == 'b' || c0 == 'f' || c0 == 't';
    return false;
}

/* A backslash continuation at pos (`\` then LF or CRLF)? Consumes it and returns true. */
static bool skip_continuation(py_scan *sc)
{
    if (at(sc, sc->pos) != '\\')
        return false;
    if (at(sc, sc->pos + 1) == '\n') {
        sc->pos += 2;
        sc->line++;
        return true;
    }
    if (at(sc, sc->pos + 1) == '\r' && at(sc, sc->pos + 2) == '\n') {
        sc->pos += 3;
        sc->line++;
        return true;
    }
    return false;
}

static void skip_comment(py_scan *sc)
{
    while (sc->pos < sc->len && sc->s[sc->pos] != '\n')
        sc->pos++;
}

/* pos is at the opening quote. Skips the literal; [*cs, *ce) is its contents. Returns false when the literal
 * is unterminated (a single-quoted one then stops before the newline, a triple-quoted one at the end). */
static bool skip_string(py_scan *sc, size_t *cs, size_t *ce)
{
    int q = at(sc, sc->pos);
    bool triple = at(sc, sc->pos + 1) == q && at(sc, sc->pos + 2) == q;
    sc->pos += triple ? 3 : 1;
    *cs = sc->pos;
    while (sc->pos < sc->len) {
        int c = (unsigned char)sc->s[sc->pos];
        if (c == '\\') {
            int n = at(sc, sc->pos + 1);
            if (n == '\r' && at(sc, sc->pos + 2) == '\n') {
                sc->pos += 3;
                sc->line++;
                continue;
            }
            if (n == '\n')
                sc->line++;
            sc->pos += n < 0 ? 1 : 2;
            continue;
        }
        if (c == '\n') {
            if (!triple) {
                *ce = sc->pos;
                return false;
            }
            sc->line++;
        } else if (c == q && (!triple || (at(sc, sc->pos + 1) == q && at(sc, sc->pos + 2) == q))) {
            *ce = sc->pos;
            sc->pos += triple ? 3 : 1;
            return true;
        }
        sc->pos++;
    }
    *ce = sc->len;
    return false;
}

/* pos is at an identifier byte: skips the identifier, or the whole string literal if it is a prefix. */
static void skip_word_or_string(py_scan *sc)
{
    size_t b = ident_end(sc, sc->pos);
    bool plain;
    if (is_string_prefix(sc, sc->pos, b, &plain) && is_quote(at(sc, b))) {
        size_t cs, ce;
        sc->pos = b;
        skip_string(sc, &cs, &ce);
        return;
    }
    sc->pos = b;
}

/* Skips spaces, tabs and backslash continuations on the current logical line. */
static void skip_inline_space(py_scan *sc)
{
    for (;;) {
        int c = at(sc, sc->pos);
        if (c >= 0 && fb_scan_is_space((unsigned char)c))
            sc->pos++;
        else if (!skip_continuation(sc))
            return;
    }
}

/* Skips the comment, line continuation, string literal or word that starts at sc->pos. Returns false, with
 * sc unchanged, when none starts there (a newline, a bracket, an operator, a lone backslash). */
static bool skip_lexeme(py_scan *sc)
{
    int c = at(sc, sc->pos);
    if (c == '#') {
        skip_comment(sc);
    } else if (c == '\\') {
        return skip_continuation(sc);
    } else if (is_quote(c)) {
        size_t cs, ce;
        skip_string(sc, &cs, &ce);
    } else if (c >= 0 && fb_scan_is_ident_byte((unsigned char)c)) {
        skip_word_or_string(sc);
    } else {
        return false;
    }
    return true;
}

/* Does a `def` or `async def` statement start at p? `def` is a keyword: it can never appear inside an
 * expression, so this is also used to recover from unbalanced brackets. */
static bool def_starts_at(const py_scan *sc, size_t p)
{
    size_t b = ident_end(sc, p);
    if (word_is(sc, p, b, "async")) {
        if (b >= sc->len || !fb_scan_is_space((unsigned char)sc->s[b]))
            return false;
        while (b < sc->len && fb_scan_is_space((unsigned char)sc->s[b]))
            b++;
        p = b;
        b = ident_end(sc, p);
    }
    return word_is(sc, p, b, "def") && b < sc->len && (fb_scan_is_space((unsigned char)sc->s[b]) || sc->s[b] == '\\');
}

/* Skips to the start of the next logical line. */
static void skip_logical_line(py_scan *sc)
{
    size_t depth = 0;
    while (sc->pos < sc->len) {
        int c = (unsigned char)sc->s[sc->pos];
        if (c == '\n') {
            sc->pos++;
            sc->line++;
            /* Unbalanced brackets: a `def` at column 0 cannot be inside an expression, so resynchronize. */
            if (depth == 0 || def_starts_at(sc, sc->pos))
                return;
        } else if (!skip_lexeme(sc)) {
            if (c == '(' || c == '[' || c == '{')
                depth++;
            else if ((c == ')' || c == ']' || c == '}') && depth > 0)
                depth--;
            sc->pos++;
        }
    }
}

/* ---- docstrings ---- */

static bool is_blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!fb_scan_is_space((unsigned char)s[i]))
            return false;
    return true;
}

static size_t leading_ws(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n && (s[i] == ' ' || s[i] == '\t'))
        i++;
    return i;
}

/* Length of the line starting at s (up to n), not counting the '\n'. */
static size_t line_len(const char *s, size_t n)
{
    const char *nl = memchr(s, '\n', n);
    return nl ? (size_t)(nl - s) : n;
}

/* inspect.cleandoc(): strip the first line's leading whitespace and the common indentation of the others,
 * trailing whitespace of every line, and leading/trailing blank lines. */
static char *clean_doc(const char *s, size_t n)
{
    size_t margin = (size_t)-1;
    size_t first = (size_t)-1, last = 0;
    for (size_t off = 0, i = 0; off <= n; i++) {
        size_t ll = line_len(s + off, n - off);
        if (!is_blank(s + off, ll)) {
            if (first == (size_t)-1)
                first = i;
            last = i;
            if (i > 0) {
                size_t w = leading_ws(s + off, ll);
                if (w < margin)
                    margin = w;
            }
        }
        off += ll + 1;
    }
    fb_scan_buf b = {0};
    if (first != (size_t)-1) {
        for (size_t off = 0, i = 0; off <= n && i <= last; i++) {
            size_t ll = line_len(s + off, n - off);
            if (i >= first) {
                const char *l = s + off;
                size_t cut = i == 0 ? leading_ws(l, ll) : leading_ws(l, ll < margin ? ll : margin);
                size_t end = ll;
                while (end > cut && fb_scan_is_space((unsigned char)l[end - 1]))
                    end--;
                if (i > first)
                    fb_scan_buf_append(&b, "\n", 1);
                fb_scan_buf_append(&b, l + cut, end - cut);
            }
            off += ll + 1;
        }
    }
    return fb_scan_buf_take(&b);
}

/* sc is just after the `:` of a def header. Looks (without moving sc) for a string literal that is the first
 * statement of the body. Returns 0 with *doc set (or NULL if there is none), -1 on ENOMEM. */
static int find_docstring(const py_scan *sc0, char **doc)
{
    py_scan d = *sc0;
    *doc = NULL;
    skip_inline_space(&d);
    if (at(&d, d.pos) == '#')
        skip_comment(&d);
    if (at(&d, d.pos) == '\n') {
        /* The body starts on a following line: the first line that is not blank or a comment. */
        for (;;) {
            d.pos++;
            d.line++;
            size_t ls = d.pos;
            while (d.pos < d.len && fb_scan_is_space((unsigned char)d.s[d.pos]))
                d.pos++;
            int c = at(&d, d.pos);
            if (c == '#') {
                skip_comment(&d);
                c = at(&d, d.pos);
            }
            if (c < 0)
                return 0;
            if (c == '\n')
                continue;
            if (d.pos == ls)
                return 0; /* not indented: there is no body */
            break;
        }
    }
    int c = at(&d, d.pos);
    if (c >= 0 && fb_scan_is_ident_byte((unsigned char)c)) {
        size_t b = ident_end(&d, d.pos);
        bool plain;
        if (!is_string_prefix(&d, d.pos, b, &plain) || !plain || !is_quote(at(&d, b)))
            return 0;
        d.pos = b;
    } else if (!is_quote(c)) {
        return 0;
    }
    size_t cs, ce;
    if (!skip_string(&d, &cs, &ce))
        return 0;
    skip_inline_space(&d);
    c = at(&d, d.pos);
    if (c >= 0 && c != '\n' && c != ';' && c != '#')
        return 0; /* an expression that merely starts with a string: "x".join(...) */
    *doc = clean_doc(d.s + cs, ce - cs);
    return *doc ? 0 : -1;
}

/* ---- parameters ---- */

typedef struct py_seg {
    bool used;
    size_t start, end; /* first significant byte .. one past the last significant byte */
    size_t colon, eq;  /* annotation `:` / default `=` at depth 0, or SIZE_MAX */
} py_seg;

static void seg_reset(py_seg *g)
{
    g->used = false;
    g->start = g->end = 0;
    g->colon = g->eq = (size_t)-1;
}

static void seg_mark(py_seg *g, size_t a, size_t b)
{
    if (!g->used) {
        g->used = true;
        g->start = a;
    }
    g->end = b;
}

/* Is the `=` at a the second byte of `<=`, `>=`, `!=` (or garbage like `:=` / `==`)? */
static bool is_operator_before(const py_scan *sc, size_t a)
{
    if (a == 0)
        return false;
    char p = sc->s[a - 1];
    return p == '<' || p == '>' || p == '!' || p == '=' || p == ':';
}

/* Turns one comma-separated piece of a parameter list into a parameter. *mode is the kind plain names get
 * (positional, or keyword-only after `*`). Returns 0, or -1 on ENOMEM / 1 when over FB_SIG_MAX_PARAMS. */
static int add_segment(const py_scan *sc, const py_seg *g, fb_function_sig *sig, fb_param_kind *mode)
{
    if (!g->used)
        return 0; /* empty: `()` or a trailing comma */
    const char *s = sc->s;
    size_t p = g->start, e = g->end;
    if (s[p] == '/' && p + 1 == e) {
        for (size_t i = 0; i < sig->nparams; i++)
            if (sig->params[i].kind == FB_PARAM_POSITIONAL)
                sig->params[i].kind = FB_PARAM_POSITIONAL_ONLY;
        return 0;
    }
    fb_param_kind kind = *mode;
    if (s[p] == '*') {
        if (p + 1 < e && s[p + 1] == '*') {
            kind = FB_PARAM_VAR_KEYWORD;
            p += 2;
        } else {
            kind = FB_PARAM_VAR_POSITIONAL;
            p++;
            *mode = FB_PARAM_KEYWORD_ONLY;
        }
        while (p < e && (fb_scan_is_space((unsigned char)s[p]) || s[p] == '\n'))
            p++;
        if (p >= e && kind == FB_PARAM_VAR_POSITIONAL)
            return 0; /* bare `*` */
    }
    size_t ne = ident_end(sc, p);
    if (ne == p || (s[p] >= '0' && s[p] <= '9') || ne > e)
        return 0; /* not a parameter name: garbage is skipped, not guessed at */
    bool over;
    fb_param *prm = fb_scan_add_param(sig, &over);
    if (!prm)
        return over ? 1 : -1;
    prm->kind = kind;
    prm->name = fb_scan_dup(s + p, ne - p);
    if (!prm->name)
        return -1;
    if (g->colon != (size_t)-1) {
        size_t ae = g->eq != (size_t)-1 ? g->eq : e;
        prm->annotation = fb_scan_dup_trim(s + g->colon + 1, ae - g->colon - 1);
        if (!prm->annotation)
            return -1;
    }
    if (g->eq != (size_t)-1) {
        prm->has_default = true;
        prm->default_text = fb_scan_dup_trim(s + g->eq + 1, e - g->eq - 1);
        if (!prm->default_text)
            return -1;
    }
    return 0;
}

/* sc is just after the `(`. Reads the parameters up to the matching `)`. Returns 0 when the list is complete,
 * 1 when it is not (unterminated, or over the parameter cap), -1 on ENOMEM. */
static int scan_params(py_scan *sc, fb_function_sig *sig)
{
    size_t depth = 0, lambdas = 0; /* `lambda x, y: ...` in a default: its commas and colon are its own */
    fb_param_kind mode = FB_PARAM_POSITIONAL;
    py_seg g;
    seg_reset(&g);
    while (sc->pos < sc->len) {
        size_t a = sc->pos;
        int c = (unsigned char)sc->s[a];
        if (c == '\n') {
            sc->line++;
            sc->pos++;
        } else if (fb_scan_is_space((unsigned char)c)) {
            sc->pos++;
        } else if (c == '#') {
            skip_comment(sc);
        } else if (c == '\\' && skip_continuation(sc)) {
            /* continuation inside brackets: harmless */
        } else if (is_quote(c)) {
            size_t cs, ce;
            skip_string(sc, &cs, &ce);
            seg_mark(&g, a, sc->pos);
        } else if (fb_scan_is_ident_byte((unsigned char)c)) {
            size_t b = ident_end(sc, a);
            if (depth == 0 && word_is(sc, a, b, "lambda"))
                lambdas++;
            skip_word_or_string(sc);
            seg_mark(&g, a, sc->pos);
        } else if (c == '(' || c == '[' || c == '{') {
            depth++;
            sc->pos++;
            seg_mark(&g, a, sc->pos);
        } else if (c == ')' || c == ']' || c == '}') {
            sc->pos++;
            if (depth == 0 && c == ')') {
                int r = add_segment(sc, &g, sig, &mode);
                return r < 0 ? -1 : r;
            }
            if (depth > 0)
                depth--;
            seg_mark(&g, a, sc->pos);
        } else if (depth == 0 && c == ',' && lambdas == 0) {
            sc->pos++;
            int r = add_segment(sc, &g, sig, &mode);
            if (r != 0)
                return r;
            seg_reset(&g);
        } else if (depth == 0 && c == ':' && at(sc, a + 1) != '=') {
            if (lambdas > 0)
                lambdas--;
            else if (g.used && g.colon == (size_t)-1 && g.eq == (size_t)-1)
                g.colon = a;
            sc->pos++;
            seg_mark(&g, a, sc->pos);
        } else if (depth == 0 && c == '=' && at(sc, a + 1) != '=' && !is_operator_before(sc, a)) {
            if (g.used && g.eq == (size_t)-1 && lambdas == 0)
                g.eq = a;
            sc->pos++;
            seg_mark(&g, a, sc->pos);
        } else {
            sc->pos += (c == '=' && at(sc, a + 1) == '=') ? 2 : 1;
            seg_mark(&g, a, sc->pos);
        }
    }
    return 1;
}

/* Where skip_bracketed stops. */
typedef enum skip_stop {
    STOP_AT_HEADER_COLON, /* the first `:` outside brackets; a newline outside brackets ends the header */
    STOP_AFTER_CLOSE,     /* the bracket that closes the one sc starts at */
} skip_stop;

/* Skips code (see skip_lexeme), keeping count of brackets, up to `stop`:
 * - STOP_AT_HEADER_COLON: after the parameter list, skips an optional `-> annotation`. Returns true if the
 *   header's `:` was found (sc is then just after it).
 * - STOP_AFTER_CLOSE: sc is at the `[` of PEP 695 type parameters. Returns true if the brackets balance and
 *   the last one is `]` (sc is then just after it).
 * Returns false at the end of the input. */
static bool skip_bracketed(py_scan *sc, skip_stop stop)
{
    size_t depth = 0;
    while (sc->pos < sc->len) {
        int c = (unsigned char)sc->s[sc->pos];
        if (c == '\n') {
            if (depth == 0)
                return false;
            sc->line++;
            sc->pos++;
        } else if (!skip_lexeme(sc)) {
            sc->pos++;
            if (c == '(' || c == '[' || c == '{') {
                depth++;
            } else if (c == ')' || c == ']' || c == '}') {
                if (stop == STOP_AFTER_CLOSE && depth <= 1)
                    return c == ']' && depth == 1;
                if (depth > 0)
                    depth--;
            } else if (c == ':' && depth == 0 && stop == STOP_AT_HEADER_COLON) {
                return true;
            }
        }
    }
    return false;
}

/* sc is at column 0 of a logical line. If it is a def statement, records it and leaves sc after the header's
 * `:` (returns 1 even for an incomplete header, whose function is simply not recorded); returns 0 with sc
 * unchanged when it is not a def; -1 on ENOMEM. */
static int try_def(py_scan *sc, fb_sig_list *out)
{
    if (!def_starts_at(sc, sc->pos))
        return 0;
    fb_function_sig sig = {0};
    sig.line = sc->line;
    size_t b = ident_end(sc, sc->pos);
    if (word_is(sc, sc->pos, b, "async")) {
        sig.is_async = true;
        sc->pos = b;
        skip_inline_space(sc);
        b = ident_end(sc, sc->pos);
    }
    sc->pos = b; /* after `def` */
    skip_inline_space(sc);
    size_t na = sc->pos, nb = ident_end(sc, na);
    if (nb == na || (sc->s[na] >= '0' && sc->s[na] <= '9'))
        return 1;
    sc->pos = nb;
    skip_inline_space(sc);
    if (at(sc, sc->pos) == '[') {
        if (!skip_bracketed(sc, STOP_AFTER_CLOSE))
            return 1;
        skip_inline_space(sc);
    }
    if (at(sc, sc->pos) != '(')
        return 1;
    sc->pos++;
    sig.name = fb_scan_dup(sc->s + na, nb - na);
    if (!sig.name)
        goto oom;
    int r = scan_params(sc, &sig);
    if (r < 0)
        goto oom;
    if (r > 0 || !skip_bracketed(sc, STOP_AT_HEADER_COLON)) {
        fb_function_sig_free(&sig);
        return 1;
    }
    if (find_docstring(sc, &sig.doc) < 0)
        goto oom;
    if (fb_scan_push_func(out, &sig) < 0)
        goto oom;
    return 1;
oom:
    fb_function_sig_free(&sig);
    return -1;
}

int fb_infer_python(const char *code, size_t len, fb_sig_list *out, fb_error *err)
{
    memset(out, 0, sizeof *out);
    py_scan sc = {.s = code, .len = code ? len : 0, .pos = 0, .line = 1};
    if (sc.len >= 3 && memcmp(code, "\xEF\xBB\xBF", 3) == 0)
        sc.pos = 3; /* UTF-8 byte order mark */
    while (sc.pos < sc.len) {
        size_t ls = sc.pos;
        while (sc.pos < sc.len && fb_scan_is_space((unsigned char)sc.s[sc.pos]))
            sc.pos++;
        int c = at(&sc, sc.pos);
        if (c < 0)
            break;
        if (c == '\n') {
            sc.pos++;
            sc.line++;
            continue;
        }
        if (c == '#') {
            skip_comment(&sc);
            continue;
        }
        if (sc.pos == ls) {
            if (try_def(&sc, out) < 0) {
                fb_sig_list_free(out);
                return fb_scan_oom(err);
            }
        }
        skip_logical_line(&sc);
    }
    return 0;
}
