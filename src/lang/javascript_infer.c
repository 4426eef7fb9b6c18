/* JavaScript signature inference: finds the top-level function declarations of a source text (function,
 * async/generator functions, exports, and `const|let|var NAME =` function or arrow expressions), their
 * parameters (defaults, rest, destructuring patterns) and the doc comment just before them.
 *
 * A small lexer produces tokens while skipping comments, strings, template literals (recursing into `${...}`
 * with a depth cap) and regex literals (the usual "previous significant token" heuristic). A streaming parser
 * tracks bracket depth and looks for declarations only at depth 0 and at the start of a statement, so class
 * bodies, object literals, nested functions and call sites are never reported. Lookahead copies the lexer
 * state (a few words) instead of buffering tokens. All reads are bounded by `len`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lang/signature.h"
#include "lang/source_scan.h"

enum js_tok_type { JT_EOF = 0, JT_IDENT, JT_NUM, JT_STR, JT_TEMPLATE, JT_REGEX, JT_PUNCT };
enum js_doc_kind { DOC_NONE = 0, DOC_LINE, DOC_BLOCK };

typedef struct js_tok {
    int type;
    bool nl_before;          /* a line terminator between the previous token and this one (ASI) */
    int doc_kind;            /* comment block immediately before this token */
    size_t doc_start, doc_end;
    size_t start, end;
    int line;
} js_tok;

typedef struct js_lex {
    const char *s;
    size_t len;
    size_t pos;
    int line;
    int prev_type;           /* previous significant token, for the regex heuristic */
    size_t prev_start, prev_end;
    int prev_end_line;
    int nesting;             /* template `${` depth */
    bool stop;               /* nesting cap reached: the scan ends here */
} js_lex;

static int at(const js_lex *lx, size_t i)
{
    return i < lx->len ? (unsigned char)lx->s[i] : -1;
}

static bool text_is(const char *s, size_t a, size_t b, const char *w)
{
    size_t n = strlen(w);
    return b - a == n && memcmp(s + a, w, n) == 0;
}

static bool tok_is(const js_lex *lx, const js_tok *t, int type, const char *w)
{
    return t->type == type && text_is(lx->s, t->start, t->end, w);
}

static bool punct_is(const js_lex *lx, const js_tok *t, const char *w)
{
    return tok_is(lx, t, JT_PUNCT, w);
}

static bool ident_is(const js_lex *lx, const js_tok *t, const char *w)
{
    return tok_is(lx, t, JT_IDENT, w);
}

static bool is_digit(int c)
{
    return c >= '0' && c <= '9';
}

static bool is_ident_start(const js_lex *lx, size_t i)
{
    int c = at(lx, i);
    if (c < 0)
        return false;
    if (c == '$' || (c == '\\' && at(lx, i + 1) == 'u'))
        return true;
    return fb_scan_is_ident_byte((unsigned char)c) && !is_digit(c);
}

/* Keywords after which an expression (so a regex literal) may follow, although they look like identifiers. */
static bool is_expr_keyword(const char *s, size_t a, size_t b)
{
    static const char *const kw[] = {"return", "typeof", "case", "in", "of", "new", "delete", "void", "throw",
                                     "instanceof", "yield", "await", "do", "else", "extends"};
    for (size_t i = 0; i < sizeof kw / sizeof kw[0]; i++)
        if (text_is(s, a, b, kw[i]))
            return true;
    return false;
}

static bool regex_allowed(const js_lex *lx)
{
    switch (lx->prev_type) {
    case JT_EOF:
        return true;
    case JT_IDENT:
        return is_expr_keyword(lx->s, lx->prev_start, lx->prev_end);
    case JT_PUNCT: {
        const char *s = lx->s;
        size_t a = lx->prev_start, b = lx->prev_end;
        return !(text_is(s, a, b, ")") || text_is(s, a, b, "]") || text_is(s, a, b, "}") || text_is(s, a, b, "++") ||
                 text_is(s, a, b, "--"));
    }
    default:
        return false; /* number, string, template, regex: `/` divides */
    }
}

static bool lex_next(js_lex *lx, js_tok *t, bool want_doc);

/* pos is just after the opening backquote. Skips to after the closing one, lexing `${ ... }` expressions
 * (which may hold braces, strings and nested templates) up to their matching `}`. */
static void skip_template(js_lex *lx)
{
    while (lx->pos < lx->len) {
        int c = (unsigned char)lx->s[lx->pos];
        if (c == '\\') {
            if (at(lx, lx->pos + 1) == '\n')
                lx->line++;
            lx->pos += at(lx, lx->pos + 1) < 0 ? 1 : 2;
        } else if (c == '`') {
            lx->pos++;
            return;
        } else if (c == '$' && at(lx, lx->pos + 1) == '{') {
            lx->pos += 2;
            if (lx->nesting >= FB_SCAN_MAX_NESTING) {
                lx->stop = true;
                lx->pos = lx->len;
                return;
            }
            lx->nesting++;
            int pt = lx->prev_type;
            size_t ps = lx->prev_start, pe = lx->prev_end;
            int pl = lx->prev_end_line;
            lx->prev_type = JT_EOF; /* start of an expression */
            size_t braces = 0;
            js_tok t;
            while (!lx->stop && lex_next(lx, &t, false)) {
                if (t.type != JT_PUNCT)
                    continue;
                if (punct_is(lx, &t, "{")) {
                    braces++;
                } else if (punct_is(lx, &t, "}")) {
                    if (braces == 0)
                        break;
                    braces--;
                }
            }
            lx->prev_type = pt;
            lx->prev_start = ps;
            lx->prev_end = pe;
            lx->prev_end_line = pl;
            lx->nesting--;
            if (lx->stop)
                return;
        } else {
            if (c == '\n')
                lx->line++;
            lx->pos++;
        }
    }
}

static void skip_string(js_lex *lx)
{
    int q = (unsigned char)lx->s[lx->pos++];
    while (lx->pos < lx->len) {
        int c = (unsigned char)lx->s[lx->pos];
        if (c == '\\') {
            int n = at(lx, lx->pos + 1);
            if (n == '\r' && at(lx, lx->pos + 2) == '\n') {
                lx->pos += 3;
                lx->line++;
                continue;
            }
            if (n == '\n')
                lx->line++;
            lx->pos += n < 0 ? 1 : 2;
            continue;
        }
        if (c == '\n')
            return; /* unterminated: the line ends it */
        lx->pos++;
        if (c == q)
            return;
    }
}

static void skip_regex(js_lex *lx)
{
    bool in_class = false;
    lx->pos++; /* the opening slash */
    while (lx->pos < lx->len) {
        int c = (unsigned char)lx->s[lx->pos];
        if (c == '\n')
            return; /* unterminated */
        if (c == '\\') {
            lx->pos += at(lx, lx->pos + 1) < 0 || at(lx, lx->pos + 1) == '\n' ? 1 : 2;
            continue;
        }
        lx->pos++;
        if (c == '[')
            in_class = true;
        else if (c == ']')
            in_class = false;
        else if (c == '/' && !in_class)
            break;
    }
    while (lx->pos < lx->len && (fb_scan_is_ident_byte((unsigned char)lx->s[lx->pos]) || lx->s[lx->pos] == '$'))
        lx->pos++; /* flags */
}

/* Longest punctuator at pos (brackets are always single bytes). */
static size_t punct_len(const js_lex *lx)
{
    static const char *const ops[] = {">>>=", "...", "===", "!==", "**=", "<<=", ">>=", ">>>", "&&=", "||=", "?\?=",
                                      "=>",   "==",  "!=",  "<=",  ">=",  "&&",  "||",  "??",  "?.",  "++",  "--",
                                      "+=",   "-=",  "*=",  "/=",  "%=",  "&=",  "|=",  "^=",  "**",  "<<",  ">>"};
    size_t left = lx->len - lx->pos;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        size_t n = strlen(ops[i]);
        if (n <= left && memcmp(lx->s + lx->pos, ops[i], n) == 0) {
            if (n == 2 && ops[i][0] == '?' && ops[i][1] == '.' && is_digit(at(lx, lx->pos + 2)))
                continue; /* `a?.5:b` is a conditional */
            return n;
        }
    }
    return 1;
}

/* Skips whitespace and comments, recording the comment block that ends right before the next token. */
static void skip_space(js_lex *lx, js_tok *t, bool want_doc)
{
    size_t nl_since = 0; /* line terminators since the last comment */
    t->nl_before = false;
    t->doc_kind = DOC_NONE;
    t->doc_start = t->doc_end = 0;
    while (lx->pos < lx->len) {
        int c = (unsigned char)lx->s[lx->pos];
        if (c == '\n') {
            lx->line++;
            lx->pos++;
            t->nl_before = true;
            nl_since++;
        } else if (fb_scan_is_space((unsigned char)c)) {
            lx->pos++;
        } else if (c == '/' && at(lx, lx->pos + 1) == '/') {
            size_t start = lx->pos;
            bool trailing = lx->prev_type != JT_EOF && lx->line == lx->prev_end_line;
            while (lx->pos < lx->len && lx->s[lx->pos] != '\n')
                lx->pos++;
            if (trailing) {
                t->doc_kind = DOC_NONE; /* `x = 1; // about x` documents x, not what follows */
            } else if (t->doc_kind == DOC_LINE && nl_since <= 1) {
                t->doc_end = lx->pos;
            } else {
                t->doc_kind = DOC_LINE;
                t->doc_start = start;
                t->doc_end = lx->pos;
            }
            nl_since = 0;
        } else if (c == '/' && at(lx, lx->pos + 1) == '*') {
            size_t start = lx->pos;
            bool jsdoc = at(lx, start + 2) == '*' && at(lx, start + 3) != '/';
            bool closed = false;
            lx->pos += 2;
            while (lx->pos < lx->len) {
                if (lx->s[lx->pos] == '*' && at(lx, lx->pos + 1) == '/') {
                    lx->pos += 2;
                    closed = true;
                    break;
                }
                if (lx->s[lx->pos] == '\n') {
                    lx->line++;
                    t->nl_before = true;
                }
                lx->pos++;
            }
            t->doc_kind = jsdoc && closed ? DOC_BLOCK : DOC_NONE;
            t->doc_start = start;
            t->doc_end = lx->pos;
            nl_since = 0;
        } else if (c == '#' && lx->pos == 0 && at(lx, 1) == '!') {
            while (lx->pos < lx->len && lx->s[lx->pos] != '\n')
                lx->pos++; /* hashbang */
        } else {
            break;
        }
    }
    if (!want_doc || nl_since >= 2)
        t->doc_kind = DOC_NONE; /* a blank line separates the comment from the code */
}

/* Lexes the next significant token into *t. Returns false at the end of input. */
static bool lex_next(js_lex *lx, js_tok *t, bool want_doc)
{
    if (lx->pos == 0 && lx->len >= 3 && memcmp(lx->s, "\xEF\xBB\xBF", 3) == 0)
        lx->pos = 3; /* UTF-8 byte order mark */
    skip_space(lx, t, want_doc);
    t->start = lx->pos;
    t->line = lx->line;
    if (lx->pos >= lx->len || lx->stop) {
        t->type = JT_EOF;
        t->end = lx->pos;
        return false;
    }
    int c = (unsigned char)lx->s[lx->pos];
    if (is_ident_start(lx, lx->pos)) {
        t->type = JT_IDENT;
        while (lx->pos < lx->len) {
            int d = (unsigned char)lx->s[lx->pos];
            if (d == '\\' && at(lx, lx->pos + 1) == 'u')
                lx->pos += 2;
            else if (fb_scan_is_ident_byte((unsigned char)d) || d == '$')
                lx->pos++;
            else
                break;
        }
    } else if (is_digit(c) || (c == '.' && is_digit(at(lx, lx->pos + 1)))) {
        t->type = JT_NUM;
        while (lx->pos < lx->len && (fb_scan_is_ident_byte((unsigned char)lx->s[lx->pos]) || lx->s[lx->pos] == '.'))
            lx->pos++;
    } else if (c == '"' || c == '\'') {
        t->type = JT_STR;
        skip_string(lx);
    } else if (c == '`') {
        t->type = JT_TEMPLATE;
        lx->pos++;
        skip_template(lx);
    } else if (c == '/' && regex_allowed(lx)) {
        t->type = JT_REGEX;
        skip_regex(lx);
    } else {
        t->type = JT_PUNCT;
        lx->pos += punct_len(lx);
    }
    t->end = lx->pos;
    lx->prev_type = t->type;
    lx->prev_start = t->start;
    lx->prev_end = t->end;
    lx->prev_end_line = lx->line;
    return true;
}

/* ---- parser ---- */

typedef struct js_parser {
    js_lex lx;
    js_tok cur;
    js_tok prev;    /* the token before cur (type JT_EOF at the start) */
} js_parser;

static void advance(js_parser *p)
{
    p->prev = p->cur;
    if (!lex_next(&p->lx, &p->cur, true) || p->lx.stop)
        p->cur.type = JT_EOF;
}

static bool is_open(const js_parser *p)
{
    const js_tok *t = &p->cur;
    return punct_is(&p->lx, t, "(") || punct_is(&p->lx, t, "[") || punct_is(&p->lx, t, "{");
}

static bool is_close(const js_parser *p)
{
    const js_tok *t = &p->cur;
    return punct_is(&p->lx, t, ")") || punct_is(&p->lx, t, "]") || punct_is(&p->lx, t, "}");
}

/* cur is an opening bracket: moves past its matching close. Returns false at the end of input. */
static bool skip_balanced(js_parser *p)
{
    size_t depth = 0;
    do {
        if (p->cur.type == JT_EOF)
            return false;
        if (is_open(p))
            depth++;
        else if (is_close(p))
            depth--;
        advance(p);
    } while (depth > 0);
    return true;
}

/* Could cur begin a statement? (Declarations only count there, so `x = function f() {}` is not one.) */
static bool at_statement_start(const js_parser *p)
{
    const js_lex *lx = &p->lx;
    const js_tok *pv = &p->prev;
    switch (pv->type) {
    case JT_EOF:
        return true;
    case JT_PUNCT:
        if (punct_is(lx, pv, ";") || punct_is(lx, pv, "}"))
            return true;
        if (punct_is(lx, pv, ")") || punct_is(lx, pv, "]") || punct_is(lx, pv, "++") || punct_is(lx, pv, "--"))
            return p->cur.nl_before; /* automatic semicolon insertion */
        return false;                /* an operator: an expression continues */
    case JT_IDENT:
        if (is_expr_keyword(lx->s, pv->start, pv->end))
            return false;
        return p->cur.nl_before;
    default:
        return p->cur.nl_before;
    }
}

/* ---- doc comments ---- */

static char *clean_comment(const char *s, size_t a, size_t b, int kind)
{
    if (kind == DOC_BLOCK) {
        a += 3; /* slash-star-star */
        b = b >= a + 2 ? b - 2 : a;
    }
    fb_scan_buf out = {0};
    size_t pending_blank = 0;
    bool any = false;
    size_t off = a;
    while (off <= b) {
        const char *nl = memchr(s + off, '\n', b - off);
        size_t le = nl ? (size_t)(nl - s) : b;
        size_t i = off;
        while (i < le && fb_scan_is_space((unsigned char)s[i]))
            i++;
        if (kind == DOC_LINE) {
            if (i + 1 < le && s[i] == '/' && s[i + 1] == '/')
                i += 2;
        } else if (i < le && s[i] == '*') {
            i++;
        }
        if (i < le && s[i] == ' ')
            i++;
        size_t e = le;
        while (e > i && fb_scan_is_space((unsigned char)s[e - 1]))
            e--;
        if (e == i) {
            pending_blank++;
        } else {
            if (any)
                for (size_t k = 0; k <= pending_blank; k++)
                    fb_scan_buf_append(&out, "\n", 1);
            fb_scan_buf_append(&out, s + i, e - i);
            any = true;
            pending_blank = 0;
        }
        off = le + 1;
    }
    return fb_scan_buf_take(&out);
}

/* Sets sig->doc from the comment before decl. Returns -1 on ENOMEM. */
static int take_doc(const js_lex *lx, const js_tok *decl, fb_function_sig *sig)
{
    if (decl->doc_kind == DOC_NONE)
        return 0;
    sig->doc = clean_comment(lx->s, decl->doc_start, decl->doc_end, decl->doc_kind);
    if (!sig->doc)
        return -1;
    if (sig->doc[0] == '\0') {
        free(sig->doc);
        sig->doc = NULL;
    }
    return 0;
}

/* ---- parameters ---- */

/* Appends a property name to an object pattern's keys. Returns -1 on ENOMEM. */
static int add_key(fb_param *prm, const char *s, size_t n)
{
    if (prm->nkeys >= FB_SIG_MAX_PARAMS)
        return 0; /* keys only mark the pattern as an object; more of them change nothing */
    char **k = realloc(prm->keys, (prm->nkeys + 1) * sizeof *k);
    if (!k)
        return -1;
    prm->keys = k;
    k[prm->nkeys] = fb_scan_dup(s, n);
    if (!k[prm->nkeys])
        return -1;
    prm->nkeys++;
    return 0;
}

/* cur is the `{` of an object pattern: records its property names into prm and moves past the `}`.
 * Returns 0, 1 if unterminated, -1 on ENOMEM. */
static int scan_object_pattern(js_parser *p, fb_param *prm)
{
    const char *s = p->lx.s;
    prm->keys = calloc(1, sizeof *prm->keys); /* non-NULL marks an object pattern, even `{}` */
    if (!prm->keys)
        return -1;
    size_t depth = 0;
    bool expect_key = false;
    do {
        const js_tok *t = &p->cur;
        if (t->type == JT_EOF)
            return 1;
        if (depth == 1 && expect_key) {
            expect_key = false;
            if (t->type == JT_IDENT || t->type == JT_NUM) {
                if (add_key(prm, s + t->start, t->end - t->start) < 0)
                    return -1;
            } else if (t->type == JT_STR && t->end - t->start >= 2) {
                if (add_key(prm, s + t->start + 1, t->end - t->start - 2) < 0)
                    return -1;
            } /* `...rest` and computed `[key]` name no key */
        }
        if (is_open(p)) {
            depth++;
            if (depth == 1)
                expect_key = true;
        } else if (is_close(p)) {
            depth--;
        } else if (depth == 1 && punct_is(&p->lx, t, ",")) {
            expect_key = true;
        }
        advance(p);
    } while (depth > 0);
    return 0;
}

/* Skips the rest of one parameter: up to (not past) the `,` or `)` at the list's own level. Returns false at
 * the end of input. *last_end is the end of the last token skipped (unchanged if none). */
static bool skip_to_param_end(js_parser *p, size_t *last_end)
{
    for (;;) {
        if (p->cur.type == JT_EOF)
            return false;
        if (punct_is(&p->lx, &p->cur, ",") || punct_is(&p->lx, &p->cur, ")"))
            return true;
        if (is_open(p)) {
            if (!skip_balanced(p))
                return false;
            *last_end = p->prev.end;
            continue;
        }
        if (is_close(p))
            return true; /* a stray `]` or `}`: let the caller stop */
        *last_end = p->cur.end;
        advance(p);
    }
}

/* cur is the `(` of a parameter list: fills sig and moves past the `)`. Returns 0, 1 if the list is
 * incomplete (or over the parameter cap), -1 on ENOMEM. */
static int scan_params(js_parser *p, fb_function_sig *sig)
{
    const char *s = p->lx.s;
    advance(p);
    for (;;) {
        const js_tok *t = &p->cur;
        if (t->type == JT_EOF)
            return 1;
        if (punct_is(&p->lx, t, ")")) {
            advance(p);
            return 0;
        }
        if (punct_is(&p->lx, t, ",")) {
            advance(p);
            continue;
        }
        bool rest = punct_is(&p->lx, t, "...");
        if (rest)
            advance(p);
        t = &p->cur;
        bool pattern = punct_is(&p->lx, t, "{") || punct_is(&p->lx, t, "[");
        if (!pattern && t->type != JT_IDENT) {
            size_t ignored = 0;
            if (!skip_to_param_end(p, &ignored))
                return 1;
            if (is_close(p) && !punct_is(&p->lx, &p->cur, ")"))
                advance(p); /* garbage: step over a stray close so the list can still end */
            continue;
        }
        bool over;
        fb_param *prm = fb_scan_add_param(sig, &over);
        if (!prm)
            return over ? 1 : -1;
        prm->kind = rest ? FB_PARAM_VAR_POSITIONAL : FB_PARAM_POSITIONAL;
        if (pattern) {
            char name[32];
            snprintf(name, sizeof name, "$%zu", sig->nparams - 1);
            prm->name = fb_scan_dup(name, strlen(name));
            if (!prm->name)
                return -1;
            if (!rest)
                prm->kind = FB_PARAM_DESTRUCTURED;
            if (punct_is(&p->lx, t, "{")) {
                int r = scan_object_pattern(p, prm);
                if (r != 0)
                    return r;
            } else if (!skip_balanced(p)) {
                return 1;
            }
        } else {
            prm->name = fb_scan_dup(s + t->start, t->end - t->start);
            if (!prm->name)
                return -1;
            advance(p);
        }
        if (punct_is(&p->lx, &p->cur, "=")) {
            advance(p);
            size_t ds = p->cur.start, de = ds;
            if (!skip_to_param_end(p, &de))
                return 1;
            prm->has_default = true;
            prm->default_text = fb_scan_dup_trim(s + ds, de > ds ? de - ds : 0);
            if (!prm->default_text)
                return -1;
        } else {
            size_t ignored = 0;
            if (!skip_to_param_end(p, &ignored)) /* e.g. a type annotation: not ours to read */
                return 1;
        }
        if (is_close(p) && !punct_is(&p->lx, &p->cur, ")"))
            advance(p);
    }
}

/* ---- declarations ---- */

/* Finishes a function whose parameter list starts at cur (`(`) or, when single_ident, is the identifier at
 * cur. Returns 1 when recorded (or incomplete), -1 on ENOMEM. sig is consumed either way. */
static int finish_function(js_parser *p, fb_function_sig *sig, bool single_ident, fb_sig_list *out)
{
    int r;
    if (single_ident) {
        bool over;
        fb_param *prm = fb_scan_add_param(sig, &over);
        r = -1;
        if (prm) {
            prm->kind = FB_PARAM_POSITIONAL;
            prm->name = fb_scan_dup(p->lx.s + p->cur.start, p->cur.end - p->cur.start);
            r = prm->name ? 0 : -1;
        }
        advance(p);
    } else {
        js_parser open = *p;
        r = scan_params(p, sig);
        if (r > 0) {
            *p = open; /* incomplete or over the cap: resume after the whole list, not inside it */
            skip_balanced(p);
        }
    }
    if (r == 0)
        r = fb_scan_push_func(out, sig) < 0 ? -1 : 1;
    else if (r > 0)
        r = 1;
    fb_function_sig_free(sig);
    return r;
}

/* Looks past the parenthesized list at cur (without moving p): is it an arrow function's parameter list? */
static bool parens_then_arrow(const js_parser *p)
{
    js_parser q = *p;
    if (!skip_balanced(&q))
        return false;
    return punct_is(&q.lx, &q.cur, "=>") && !q.cur.nl_before;
}

static bool next_is(const js_parser *p, int type, const char *w, bool same_line)
{
    js_parser q = *p;
    advance(&q);
    return tok_is(&q.lx, &q.cur, type, w) && (!same_line || !q.cur.nl_before);
}

/* cur is `function` (after any `async`). With need_name (a declaration) the function must have its own name;
 * a function expression assigned to a variable keeps the variable's name, already in sig->name. Returns 1
 * when the header was read (recorded, or incomplete), 0 when it is not a function header, -1 on ENOMEM. */
static int function_form(js_parser *p, fb_function_sig *sig, bool need_name, fb_sig_list *out)
{
    advance(p); /* function */
    if (punct_is(&p->lx, &p->cur, "*"))
        advance(p);
    if (p->cur.type == JT_IDENT) {
        if (!sig->name) {
            sig->name = fb_scan_dup(p->lx.s + p->cur.start, p->cur.end - p->cur.start);
            if (!sig->name)
                return -1;
        }
        advance(p);
    } else if (need_name) {
        return 0;
    }
    if (!punct_is(&p->lx, &p->cur, "("))
        return 0;
    return finish_function(p, sig, false, out);
}

/* cur is the NAME of one `NAME = ...` declarator of a const/let/var statement (decl: the statement's first
 * token, whose doc comment a function gets). Returns 1 if it is a function or arrow expression, recorded
 * (p is past its parameters), 0 if not (p must then be restored by the caller), -1 on ENOMEM. */
static int declarator(js_parser *p, const js_tok *decl, fb_sig_list *out)
{
    fb_function_sig sig = {0};
    sig.line = decl->line;
    int r = 0;
    if (p->cur.type != JT_IDENT)
        goto done;
    sig.name = fb_scan_dup(p->lx.s + p->cur.start, p->cur.end - p->cur.start);
    if (!sig.name)
        goto oom;
    advance(p);
    if (!punct_is(&p->lx, &p->cur, "="))
        goto done;
    advance(p);
    if (take_doc(&p->lx, decl, &sig) < 0)
        goto oom;
    /* `x => ...` (even `async => ...`, where async is the parameter's name) */
    if (p->cur.type == JT_IDENT && next_is(p, JT_PUNCT, "=>", true)) {
        r = finish_function(p, &sig, true, out);
        goto done;
    }
    if (ident_is(&p->lx, &p->cur, "async")) {
        js_parser q = *p;
        advance(&q);
        if (q.cur.nl_before)
            goto done;
        if (ident_is(&q.lx, &q.cur, "function")) {
            *p = q;
            sig.is_async = true;
            r = function_form(p, &sig, false, out);
            goto done;
        }
        if (q.cur.type == JT_IDENT && next_is(&q, JT_PUNCT, "=>", true)) {
            *p = q;
            sig.is_async = true;
            r = finish_function(p, &sig, true, out);
            goto done;
        }
        if (punct_is(&q.lx, &q.cur, "(") && parens_then_arrow(&q)) {
            *p = q;
            sig.is_async = true;
            r = finish_function(p, &sig, false, out);
            goto done;
        }
        goto done;
    }
    if (ident_is(&p->lx, &p->cur, "function")) {
        r = function_form(p, &sig, false, out);
        goto done;
    }
    if (punct_is(&p->lx, &p->cur, "(") && parens_then_arrow(p)) {
        r = finish_function(p, &sig, false, out);
        goto done;
    }
done:
    fb_function_sig_free(&sig);
    return r;
oom:
    fb_function_sig_free(&sig);
    return -1;
}

/* cur is a `function`/`async`/`const`/`let`/`var` at depth 0 (decl is the statement's first token, maybe
 * `export`). Returns 1 if a function was recorded (p is past its parameters), 0 if not a function
 * declaration (p must then be restored by the caller), -1 on ENOMEM. */
static int declaration(js_parser *p, const js_tok *decl, fb_sig_list *out)
{
    fb_function_sig sig = {0};
    sig.line = decl->line;
    int r = 0;
    if (ident_is(&p->lx, &p->cur, "async") && next_is(p, JT_IDENT, "function", true)) {
        sig.is_async = true;
        advance(p);
    }
    if (ident_is(&p->lx, &p->cur, "function")) {
        if (take_doc(&p->lx, decl, &sig) < 0)
            goto oom;
        r = function_form(p, &sig, true, out);
        goto done;
    }
    if (sig.is_async || !(ident_is(&p->lx, &p->cur, "const") || ident_is(&p->lx, &p->cur, "let") ||
                          ident_is(&p->lx, &p->cur, "var")))
        goto done;
    advance(p);
    fb_function_sig_free(&sig);
    return declarator(p, decl, out);
done:
    fb_function_sig_free(&sig);
    return r;
oom:
    fb_function_sig_free(&sig);
    return -1;
}
/* cur is an identifier at depth 0. Returns 1 if it began a recorded function (p moved past its parameter
 * list), 0 if not (p unchanged), -1 on ENOMEM. */
static int try_declaration(js_parser *p, fb_sig_list *out)
{
    const js_lex *lx = &p->lx;
    const js_tok *t = &p->cur;
    if (punct_is(lx, &p->prev, ".") || punct_is(lx, &p->prev, "?."))
        return 0; /* a property: obj.function, obj.var */
    bool is_export = ident_is(lx, t, "export");
    bool is_var = ident_is(lx, t, "const") || ident_is(lx, t, "let") || ident_is(lx, t, "var");
    if (!is_export && !is_var && !ident_is(lx, t, "function") && !ident_is(lx, t, "async"))
        return 0;
    if (!is_var && !at_statement_start(p))
        return 0;
    js_parser save = *p;
    js_tok decl = p->cur;
    if (is_export) {
        advance(p);
        if (ident_is(&p->lx, &p->cur, "default"))
            advance(p);
    }
    int r = declaration(p, &decl, out);
    if (r == 0)
        *p = save;
    return r;
}

/* cur starts a const/let/var statement, exported or not. */
static bool var_statement(const js_parser *p)
{
    const js_lex *lx = &p->lx;
    if (ident_is(lx, &p->cur, "export")) {
        js_parser q = *p;
        advance(&q);
        return ident_is(&q.lx, &q.cur, "const") || ident_is(&q.lx, &q.cur, "let") || ident_is(&q.lx, &q.cur, "var");
    }
    return ident_is(lx, &p->cur, "const") || ident_is(lx, &p->cur, "let") || ident_is(lx, &p->cur, "var");
}

int fb_infer_javascript(const char *code, size_t len, fb_sig_list *out, fb_error *err)
{
    memset(out, 0, sizeof *out);
    js_parser p;
    memset(&p, 0, sizeof p);
    p.lx.s = code ? code : "";
    p.lx.len = code ? len : 0;
    p.lx.line = 1;
    p.prev.type = JT_EOF;
    advance(&p);
    p.prev.type = JT_EOF;
    size_t depth = 0;
    bool in_var = false; /* in a top-level const/let/var statement: `, NAME = ...` declares one more name */
    while (p.cur.type != JT_EOF) {
        int r = 0;
        if (depth == 0 && in_var && !punct_is(&p.lx, &p.cur, ",") && at_statement_start(&p))
            in_var = false;
        if (is_open(&p)) {
            depth++;
        } else if (is_close(&p)) {
            if (depth > 0)
                depth--;
        } else if (depth == 0 && in_var && punct_is(&p.lx, &p.cur, ",")) {
            js_parser save = p;
            advance(&p);
            js_tok decl = p.cur;
            r = declarator(&p, &decl, out);
            if (r == 0)
                p = save;
        } else if (depth == 0 && p.cur.type == JT_IDENT) {
            in_var |= var_statement(&p);
            r = try_declaration(&p, out);
        }
        if (r < 0) {
            fb_sig_list_free(out);
            return fb_scan_oom(err);
        }
        if (r == 0)
            advance(&p);
    }
    return 0;
}
