/* Ruby signature inference: the top-level `def`s of a source text (`def f(a, b = 2, *r, k:, j: 1, **o, &blk)`,
 * `def f a, b`, endless `def f(a) = a`, `def self.f`), with the `#` comment block right above each as its doc.
 *
 * Ruby has no indentation rule to lean on, so the scanner tokenizes just enough to count the blocks that
 * `end` closes: `def`, `class`, `module`, `begin`, `case`, `do`, `for`, and `if`/`unless`/`while`/`until`
 * when they start an expression (after an operator, `(`, `=`, or at a statement start) rather than follow
 * one as modifiers (`return x if y`). A `def` is top-level when no such block and no bracket is open. It
 * skips what can hide a fake `def` or `end`: comments, `=begin`/`=end`, strings with `#{}` interpolation
 * (scanned recursively, bounded by FB_SCAN_MAX_NESTING), %-literals, regexps, heredocs, symbols, labels
 * (`end:`), method calls (`x.class`), character literals and everything after `__END__`.
 * Every read is bounded by the given length (no NUL terminator needed). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lang/signature.h"
#include "lang/source_scan.h"

/* PREV_JUMP: `return`, `break`, `next`: a modifier may follow (`return if x`), and so may a literal
 * (`return /x/`, `return <<~EOS`, `return %w[a]`). */
enum { PREV_BOL, PREV_OP, PREV_VALUE, PREV_IDENT, PREV_JUMP };

#define RB_MAX_HEREDOCS 16

typedef struct rb_heredoc {
    size_t id, idlen;  /* the terminator word in the source */
    bool indented;     /* <<- or <<~: the terminator may be indented */
} rb_heredoc;

typedef struct rb_scan {
    const char *s;
    size_t n, i;
    int line;
    int depth;      /* open blocks closed by `end` */
    int brackets;   /* open ( [ { */
    int prev;       /* what the last token was (PREV_*) */
    bool loop_do;   /* a while/until/for opened on this line: its optional `do` belongs to it */
    bool stop;      /* __END__, or nesting past the cap */
    bool oom;
    size_t line_start;
    rb_heredoc here[RB_MAX_HEREDOCS];
    size_t nhere;
    fb_scan_buf doc;  /* the comment block being collected */
    int doc_line;     /* its last line (0: none) */
    fb_sig_list *out;
} rb_scan;

static int at(const rb_scan *sc, size_t i)
{
    return i < sc->n ? (unsigned char)sc->s[i] : -1;
}

static bool ident_byte(int c)
{
    return c >= 0 && fb_scan_is_ident_byte((unsigned char)c);
}

static size_t ident_end(const rb_scan *sc, size_t p)
{
    while (p < sc->n && fb_scan_is_ident_byte((unsigned char)sc->s[p]))
        p++;
    return p;
}

static bool word_is(const rb_scan *sc, size_t a, size_t b, const char *w)
{
    size_t l = strlen(w);
    return b - a == l && memcmp(sc->s + a, w, l) == 0;
}

static void skip_inline_space(rb_scan *sc)
{
    for (;;) {
        int c = at(sc, sc->i);
        if (c >= 0 && fb_scan_is_space((unsigned char)c)) {
            sc->i++;
        } else if (c == '\\' && at(sc, sc->i + 1) == '\n') {
            sc->i += 2;
            sc->line++;
        } else {
            return;
        }
    }
}

static void scan_code(rb_scan *sc, int level);

/* sc->i is just past an opening delimiter; skips to just past the matching close. Bracket pairs nest. */
static void skip_delimited(rb_scan *sc, int open, int close, bool interp, int level)
{
    int nest = 0;
    while (sc->i < sc->n && !sc->stop) {
        int c = at(sc, sc->i);
        if (c == '\\') {
            if (at(sc, sc->i + 1) == '\n')
                sc->line++;
            sc->i += 2;
            continue;
        }
        if (c == '\n')
            sc->line++;
        if (interp && c == '#' && at(sc, sc->i + 1) == '{') {
            sc->i += 2;
            if (level + 1 >= FB_SCAN_MAX_NESTING) {
                sc->stop = true;
                return;
            }
            scan_code(sc, level + 1);
            continue;
        }
        sc->i++;
        if (c == close && open != close) {
            if (nest-- == 0)
                return;
        } else if (c == close) {
            return;
        } else if (c == open && open != close) {
            nest++;
        }
    }
    if (sc->i > sc->n)
        sc->i = sc->n;
}

static int closing_of(int c)
{
    switch (c) {
    case '(': return ')';
    case '[': return ']';
    case '{': return '}';
    case '<': return '>';
    default: return c;
    }
}

/* `%q(...)`, `%w[...]`, `%(...)`... at sc->i (the '%'). Returns false (nothing consumed) if it is not one. */
static bool try_percent_literal(rb_scan *sc, int level)
{
    size_t p = sc->i + 1;
    int c = at(sc, p);
    bool interp = true;
    if (c > 0 && strchr("qQwWiIrsx", c)) {
        interp = !strchr("qwis", c);
        p++;
        c = at(sc, p);
    }
    if (c < 0 || ident_byte(c) || c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '=')
        return false;
    sc->i = p + 1;
    skip_delimited(sc, c, closing_of(c), interp, level);
    return true;
}

/* `<<~ID`, `<<-ID`, `<<ID`, `<<~'ID'`... at sc->i. Records the terminator; the body is skipped at the next
 * newline. Returns false (nothing consumed) if it is not a heredoc start. */
static bool try_heredoc(rb_scan *sc)
{
    size_t p = sc->i + 2;
    bool indented = false;
    int c = at(sc, p);
    if (c == '~' || c == '-') {
        indented = true;
        p++;
        c = at(sc, p);
    }
    size_t id, idlen;
    if (c == '\'' || c == '"' || c == '`') {
        size_t q = p + 1;
        while (q < sc->n && sc->s[q] != c && sc->s[q] != '\n')
            q++;
        if (at(sc, q) != c)
            return false;
        id = p + 1;
        idlen = q - id;
        p = q + 1;
    } else if (ident_byte(c) && !(c >= '0' && c <= '9')) {
        if (!indented && !((c >= 'A' && c <= 'Z') || c == '_'))
            return false; /* `x <<foo` is more likely a shift or an append than a heredoc */
        id = p;
        p = ident_end(sc, p);
        idlen = p - id;
    } else {
        return false;
    }
    if (sc->nhere < RB_MAX_HEREDOCS)
        sc->here[sc->nhere++] = (rb_heredoc){id, idlen, indented};
    sc->i = p;
    return true;
}

/* At the start of a line (sc->i): skip the bodies of the heredocs begun on the line before. */
static void skip_heredoc_bodies(rb_scan *sc)
{
    for (size_t h = 0; h < sc->nhere; h++) {
        const rb_heredoc *hd = &sc->here[h];
        while (sc->i < sc->n) {
            size_t a = sc->i, e = a;
            while (e < sc->n && sc->s[e] != '\n')
                e++;
            sc->i = e < sc->n ? e + 1 : e;
            if (e < sc->n)
                sc->line++;
            size_t b = e;
            if (hd->indented)
                while (a < b && (sc->s[a] == ' ' || sc->s[a] == '\t'))
                    a++;
            if (b > a && sc->s[b - 1] == '\r')
                b--;
            if (b - a == hd->idlen && memcmp(sc->s + a, sc->s + hd->id, hd->idlen) == 0)
                break;
        }
    }
    sc->nhere = 0;
    sc->line_start = sc->i;
}

static bool line_starts_with(const rb_scan *sc, size_t p, const char *w)
{
    size_t l = strlen(w);
    if (p + l > sc->n || memcmp(sc->s + p, w, l) != 0)
        return false;
    int c = at(sc, p + l);
    return c < 0 || c == '\n' || c == ' ' || c == '\t' || c == '\r';
}

/* What begins a line: heredoc bodies, `=begin` blocks, `__END__`. */
static void at_line_start(rb_scan *sc)
{
    if (sc->nhere)
        skip_heredoc_bodies(sc);
    while (line_starts_with(sc, sc->i, "=begin")) {
        for (;;) {
            while (sc->i < sc->n && sc->s[sc->i] != '\n')
                sc->i++;
            if (sc->i >= sc->n)
                break;
            sc->i++;
            sc->line++;
            if (line_starts_with(sc, sc->i, "=end")) {
                while (sc->i < sc->n && sc->s[sc->i] != '\n')
                    sc->i++;
                break;
            }
        }
        sc->doc_line = 0;
        if (sc->i < sc->n) {
            sc->i++;
            sc->line++;
        }
    }
    if (line_starts_with(sc, sc->i, "__END__"))
        sc->stop = true;
    sc->line_start = sc->i;
}

/* A `#` comment at sc->i; collected as doc when nothing precedes it on its line. */
static void comment(rb_scan *sc, int level)
{
    size_t a = sc->i;
    while (sc->i < sc->n && sc->s[sc->i] != '\n')
        sc->i++;
    if (level > 0)
        return;
    for (size_t k = sc->line_start; k < a; k++)
        if (!fb_scan_is_space((unsigned char)sc->s[k]))
            return;
    size_t t = a + 1, e = sc->i;
    if (t < e && sc->s[t] == ' ')
        t++;
    if (e > t && sc->s[e - 1] == '\r')
        e--;
    if (sc->doc_line != 0 && sc->doc_line == sc->line - 1) {
        fb_scan_buf_append(&sc->doc, "\n", 1);
    } else {
        sc->doc.len = 0;
        fb_scan_buf_append(&sc->doc, "", 0);
    }
    fb_scan_buf_append(&sc->doc, sc->s + t, e - t);
    sc->doc_line = sc->line;
}

/* ---- parameters ---- */

static int add_param(fb_function_sig *sig, const char *name, size_t nlen, fb_param_kind kind, const char *def,
                     size_t dlen, bool has_def)
{
    bool over = false;
    fb_param *p = fb_scan_add_param(sig, &over);
    if (!p)
        return over ? 1 : -1;
    p->kind = kind;
    p->name = fb_scan_dup(name, nlen);
    if (!p->name)
        return -1;
    if (has_def) {
        p->has_default = true;
        p->default_text = fb_scan_dup_trim(def, dlen);
        if (!p->default_text)
            return -1;
    }
    return 0;
}

static void trim(const char **s, size_t *n)
{
    while (*n && (fb_scan_is_space((unsigned char)**s) || **s == '\n')) {
        (*s)++;
        (*n)--;
    }
    while (*n && (fb_scan_is_space((unsigned char)(*s)[*n - 1]) || (*s)[*n - 1] == '\n'))
        (*n)--;
}

static size_t seg_ident(const char *s, size_t n)
{
    size_t k = 0;
    while (k < n && fb_scan_is_ident_byte((unsigned char)s[k]))
        k++;
    return k;
}

/* One parameter's text (comments removed). Returns 0, 1 (over the cap: signature unknown) or -1 (ENOMEM). */
static int add_segment(fb_function_sig *sig, const char *s, size_t n)
{
    trim(&s, &n);
    if (n == 0 || s[0] == '&')
        return 0; /* a block parameter takes no argument */
    if (n >= 3 && memcmp(s, "...", 3) == 0) {
        int r = add_param(sig, "...", 3, FB_PARAM_VAR_POSITIONAL, NULL, 0, false);
        return r ? r : add_param(sig, "...", 3, FB_PARAM_VAR_KEYWORD, NULL, 0, false);
    }
    if (n >= 2 && s[0] == '*' && s[1] == '*') {
        const char *nm = s + 2;
        size_t l = n - 2;
        trim(&nm, &l);
        l = seg_ident(nm, l);
        if (l == 3 && memcmp(nm, "nil", 3) == 0)
            return 0; /* `**nil`: no keywords accepted */
        return l ? add_param(sig, nm, l, FB_PARAM_VAR_KEYWORD, NULL, 0, false)
                 : add_param(sig, "**", 2, FB_PARAM_VAR_KEYWORD, NULL, 0, false);
    }
    if (s[0] == '*') {
        const char *nm = s + 1;
        size_t l = n - 1;
        trim(&nm, &l);
        l = seg_ident(nm, l);
        return l ? add_param(sig, nm, l, FB_PARAM_VAR_POSITIONAL, NULL, 0, false)
                 : add_param(sig, "*", 1, FB_PARAM_VAR_POSITIONAL, NULL, 0, false);
    }
    if (s[0] == '(') {
        char nm[24];
        int l = snprintf(nm, sizeof nm, "$%zu", sig->nparams);
        return add_param(sig, nm, (size_t)l, FB_PARAM_POSITIONAL, NULL, 0, false);
    }
    size_t l = seg_ident(s, n);
    if (l == 0)
        return 0;
    const char *rest = s + l;
    size_t rl = n - l;
    if (rl && rest[0] == ':') { /* `k:` or `k: default` */
        const char *d = rest + 1;
        size_t dl = rl - 1;
        trim(&d, &dl);
        return add_param(sig, s, l, FB_PARAM_KEYWORD_ONLY, d, dl, dl > 0);
    }
    trim(&rest, &rl);
    if (rl && rest[0] == '=') {
        const char *d = rest + 1;
        size_t dl = rl - 1;
        return add_param(sig, s, l, FB_PARAM_POSITIONAL, d, dl, true);
    }
    return add_param(sig, s, l, FB_PARAM_POSITIONAL, NULL, 0, false);
}

/* Whether the parameter text so far ends with an operand (a name, a number, a closing bracket or quote): then
 * `/` divides and `?` asks; otherwise they open a regexp (`pat = /a,b/`) or a character literal (`sep = ?,`). */
static bool seg_operand_before(const fb_scan_buf *seg)
{
    size_t k = seg->data ? seg->len : 0;
    while (k > 0 && (seg->data[k - 1] == ' ' || seg->data[k - 1] == '\t'))
        k--;
    if (k == 0)
        return false;
    unsigned char c = (unsigned char)seg->data[k - 1];
    return fb_scan_is_ident_byte(c) || c == ')' || c == ']' || c == '}' || c == '"' || c == '\'' || c == '`';
}

/* Scans a parameter list from sc->i: up to the matching ')' when parens, else to the end of the line or `;`.
 * Splits at top-level commas; strings and brackets inside defaults are skipped whole. Returns 0, 1 (over
 * the cap) or -1 (ENOMEM); sc->i ends after the ')' (parens) or at the newline / ';'. */
static int scan_params(rb_scan *sc, fb_function_sig *sig, bool parens)
{
    fb_scan_buf seg = {0};
    int nest = 0, r = 0;
    fb_scan_buf_append(&seg, "", 0);
    while (sc->i < sc->n && !sc->stop) {
        size_t a = sc->i;
        int c = at(sc, a);
        if (c == '\\' && at(sc, a + 1) == '\n') {
            sc->i += 2;
            sc->line++;
            fb_scan_buf_append(&seg, " ", 1);
            continue;
        }
        if (!parens && nest == 0 && (c == '\n' || c == ';'))
            break;
        if (c == '#') {
            while (sc->i < sc->n && sc->s[sc->i] != '\n')
                sc->i++;
            continue;
        }
        if (c == '\n') {
            sc->line++;
            sc->i++;
            fb_scan_buf_append(&seg, " ", 1);
            if (sc->nhere)
                skip_heredoc_bodies(sc);
            continue;
        }
        if (c == '"' || c == '\'' || c == '`') {
            sc->i++;
            skip_delimited(sc, c, c, c != '\'', 0);
        } else if (c == '%' && try_percent_literal(sc, 0)) {
            /* skipped */
        } else if (c == '/' && !seg_operand_before(&seg)) {
            sc->i++;
            skip_delimited(sc, '/', '/', true, 0);
            while (ident_byte(at(sc, sc->i)))
                sc->i++; /* flags */
        } else if (c == '?' && !seg_operand_before(&seg) && at(sc, a + 1) > ' ' &&
                   (at(sc, a + 1) == '\\' || !ident_byte(at(sc, a + 2)))) {
            sc->i = at(sc, a + 1) == '\\' ? a + 3 : a + 2; /* ?, ?" ?\n */
            if (sc->i > sc->n)
                sc->i = sc->n;
        } else if (c == '(' || c == '[' || c == '{') {
            nest++;
            sc->i++;
        } else if (c == ')' || c == ']' || c == '}') {
            sc->i++;
            if (nest == 0 && parens && c == ')') {
                bool oom = seg.oom;
                if (r == 0)
                    r = oom ? -1 : add_segment(sig, seg.data ? seg.data : "", seg.len);
                fb_scan_buf_free(&seg);
                return r;
            }
            if (nest > 0)
                nest--;
        } else if (c == ',' && nest == 0) {
            sc->i++;
            if (seg.oom)
                break;
            if (r == 0)
                r = add_segment(sig, seg.data ? seg.data : "", seg.len);
            if (r < 0)
                break;
            seg.len = 0; /* over the cap (r == 1): scan on to the end of the list, adding nothing */
            if (seg.data)
                seg.data[0] = '\0';
            continue;
        } else {
            sc->i++;
        }
        if (sc->i > sc->n)
            sc->i = sc->n;
        fb_scan_buf_append(&seg, sc->s + a, sc->i - a);
    }
    if (r == 0 && !seg.oom && !parens)
        r = add_segment(sig, seg.data ? seg.data : "", seg.len);
    else if (r >= 0 && !seg.oom && parens)
        r = 1; /* unterminated list: the signature is unknown */
    bool oom = seg.oom;
    fb_scan_buf_free(&seg);
    return oom ? -1 : r;
}

/* `=` that makes an endless def (not `==`, `=~`, `=>`). */
static bool endless_eq(const rb_scan *sc)
{
    int c = at(sc, sc->i), d = at(sc, sc->i + 1);
    return c == '=' && d != '=' && d != '~' && d != '>';
}

/* After the `def` keyword. Returns whether a block (closed by `end`) was opened; records a top-level def. */
static bool try_def(rb_scan *sc, bool top)
{
    fb_function_sig sig = {0};
    int line = sc->line;
    char *doc = NULL;
    bool want_doc = top && sc->doc_line != 0 && sc->doc_line == line - 1;
    skip_inline_space(sc);
    size_t na = sc->i, nb = ident_end(sc, na);
    bool named = nb > na && !(sc->s[na] >= '0' && sc->s[na] <= '9');
    if (named && at(sc, nb) == '.' && at(sc, nb + 1) != '.') {
        /* a singleton method: `def self.f` is callable like a top-level method, `def obj.f` is not */
        if (!word_is(sc, na, nb, "self"))
            top = false;
        na = nb + 1;
        nb = ident_end(sc, na);
        named = nb > na;
    }
    if (named && (at(sc, nb) == '?' || at(sc, nb) == '!') && at(sc, nb + 1) != '=')
        nb++;
    else if (named && at(sc, nb) == '=' && at(sc, nb + 1) != '=' && at(sc, nb + 1) != '~' && at(sc, nb + 1) != '>')
        nb++, top = false; /* a setter (`def x=(v)`, `def x= v`; `=` attached to the name): not callable as f(x) */
    if (!named) { /* an operator method (`def +(o)`, `def []=(k, v)`): skip its name */
        top = false;
        while (sc->i < sc->n && !strchr("( \t\r\n;", sc->s[sc->i]))
            sc->i++;
        nb = sc->i;
    }
    sc->i = nb;
    skip_inline_space(sc);
    int r = 0;
    bool endless = false;
    if (top) {
        sig.name = fb_scan_dup(sc->s + na, nb - na);
        sig.line = line;
        if (!sig.name)
            r = -1;
    }
    if (r == 0 && at(sc, sc->i) == '(') {
        sc->i++;
        r = scan_params(sc, &sig, true);
        skip_inline_space(sc);
        endless = endless_eq(sc);
    } else if (r == 0 && endless_eq(sc)) {
        endless = true;
    } else if (r == 0 && at(sc, sc->i) != '\n' && at(sc, sc->i) != ';' && at(sc, sc->i) != '#' && sc->i < sc->n) {
        r = scan_params(sc, &sig, false);
    }
    if (endless) {
        sc->i++; /* the `=` */
        sc->prev = PREV_OP;
    } else {
        sc->prev = PREV_BOL;
    }
    if (top && r == 0) {
        if (want_doc) {
            doc = fb_scan_dup(sc->doc.data ? sc->doc.data : "", sc->doc.len);
            if (!doc)
                r = -1;
            sig.doc = doc;
        }
        if (r == 0 && fb_scan_push_func(sc->out, &sig) < 0)
            r = -1;
    }
    if (r < 0)
        sc->oom = true;
    fb_function_sig_free(&sig);
    return !endless;
}

/* ---- the token loop ---- */

/* Whether an `if`/`while`... here is a modifier. */
static bool value_before(const rb_scan *sc)
{
    return sc->prev == PREV_VALUE || sc->prev == PREV_IDENT || sc->prev == PREV_JUMP;
}

/* Whether `/`, `%`, `<<` here would be an operator rather than start a literal. */
static bool operand_before(const rb_scan *sc)
{
    return sc->prev == PREV_VALUE || sc->prev == PREV_IDENT;
}

/* `puts %w[a]`, `split /,/`, `puts <<EOS`: an identifier, a space, then the literal with no space after. */
static bool command_arg(const rb_scan *sc)
{
    if (sc->prev != PREV_IDENT || sc->i == 0)
        return false;
    int before = at(sc, sc->i - 1), after = at(sc, sc->i + 1);
    return (before == ' ' || before == '\t') && after != ' ' && after != '=' && after != '\n' && after >= 0;
}

static void keyword(rb_scan *sc, size_t a, size_t b, int level)
{
    bool top = sc->depth == 0 && sc->brackets == 0 && level == 0;
    if (word_is(sc, a, b, "def")) {
        if (try_def(sc, top))
            sc->depth++;
        return;
    }
    if (word_is(sc, a, b, "class") || word_is(sc, a, b, "module") || word_is(sc, a, b, "case")) {
        sc->depth++;
        sc->prev = PREV_OP;
    } else if (word_is(sc, a, b, "begin")) {
        sc->depth++;
        sc->prev = PREV_BOL;
    } else if (word_is(sc, a, b, "if") || word_is(sc, a, b, "unless") || word_is(sc, a, b, "while") ||
               word_is(sc, a, b, "until")) {
        if (!value_before(sc)) {
            sc->depth++;
            if (word_is(sc, a, b, "while") || word_is(sc, a, b, "until"))
                sc->loop_do = true;
        }
        sc->prev = PREV_OP;
    } else if (word_is(sc, a, b, "for")) {
        sc->depth++;
        sc->loop_do = true;
        sc->prev = PREV_OP;
    } else if (word_is(sc, a, b, "do")) {
        if (sc->loop_do)
            sc->loop_do = false;
        else
            sc->depth++;
        sc->prev = PREV_BOL;
    } else if (word_is(sc, a, b, "end")) {
        if (sc->depth > 0)
            sc->depth--;
        sc->prev = PREV_VALUE;
    } else if (word_is(sc, a, b, "then") || word_is(sc, a, b, "else") || word_is(sc, a, b, "elsif") ||
               word_is(sc, a, b, "when") || word_is(sc, a, b, "in") || word_is(sc, a, b, "and") ||
               word_is(sc, a, b, "or") || word_is(sc, a, b, "not") || word_is(sc, a, b, "rescue") ||
               word_is(sc, a, b, "ensure")) {
        sc->prev = PREV_OP;
    } else if (word_is(sc, a, b, "return") || word_is(sc, a, b, "break") || word_is(sc, a, b, "next")) {
        sc->prev = PREV_JUMP;
    } else if (word_is(sc, a, b, "self") || word_is(sc, a, b, "nil") || word_is(sc, a, b, "true") ||
               word_is(sc, a, b, "false") || word_is(sc, a, b, "redo") || word_is(sc, a, b, "retry")) {
        sc->prev = PREV_VALUE;
    } else {
        sc->prev = PREV_IDENT;
    }
}

/* Scans code from sc->i. At level > 0 (inside `#{}`) returns just after the `}` that closes it. */
static void scan_code(rb_scan *sc, int level)
{
    int braces = 0;
    while (sc->i < sc->n && !sc->stop && !sc->oom) {
        size_t p = sc->i;
        int c = at(sc, p), d = at(sc, p + 1);
        if (c == '\n') {
            sc->i++;
            sc->line++;
            if (sc->prev != PREV_OP) /* `while a or\n b do`: the condition goes on */
                sc->loop_do = false;
            sc->prev = PREV_BOL;
            at_line_start(sc);
            continue;
        }
        if (fb_scan_is_space((unsigned char)c)) {
            sc->i++;
            continue;
        }
        if (c == '\\' && d == '\n') {
            sc->i += 2;
            sc->line++;
            continue;
        }
        if (c == '#') {
            comment(sc, level);
            continue;
        }
        if (c == '"' || c == '`' || c == '\'') {
            sc->i++;
            skip_delimited(sc, c, c, c != '\'', level);
            sc->prev = PREV_VALUE;
            continue;
        }
        if (c == ':') {
            if (d == ':') {
                sc->i += 2;
                sc->prev = PREV_OP;
            } else if (d == '"' || d == '\'') {
                sc->i += 2;
                skip_delimited(sc, d, d, d == '"', level);
                sc->prev = PREV_VALUE;
            } else if (ident_byte(d)) {
                sc->i = ident_end(sc, p + 1);
                if (at(sc, sc->i) == '?' || at(sc, sc->i) == '!' || at(sc, sc->i) == '=')
                    sc->i++;
                sc->prev = PREV_VALUE;
            } else if (d == '[' && at(sc, p + 2) == ']') { /* :[] and :[]= */
                sc->i = p + 3 + (at(sc, p + 3) == '=');
                sc->prev = PREV_VALUE;
            } else if (d > 0 && strchr("+-*/%<>=!~^&|", d)) { /* an operator's symbol: :/, :<=>, :-@ */
                sc->i = p + 1;
                while (sc->i < sc->n && sc->s[sc->i] && strchr("+-*/%<>=!~^&|@", sc->s[sc->i]))
                    sc->i++;
                sc->prev = PREV_VALUE;
            } else {
                sc->i++;
                sc->prev = PREV_OP;
            }
            continue;
        }
        if (c == '%' && (!operand_before(sc) || command_arg(sc)) && try_percent_literal(sc, level)) {
            sc->prev = PREV_VALUE;
            continue;
        }
        if (c == '/' && (!operand_before(sc) || command_arg(sc))) {
            sc->i++;
            skip_delimited(sc, '/', '/', true, level);
            while (ident_byte(at(sc, sc->i)))
                sc->i++;
            sc->prev = PREV_VALUE;
            continue;
        }
        bool spaced = p > 0 && (sc->s[p - 1] == ' ' || sc->s[p - 1] == '\t');
        if (c == '<' && d == '<' &&
            (!operand_before(sc) || command_arg(sc) || at(sc, p + 2) == '~' || (at(sc, p + 2) == '-' && spaced)) &&
            try_heredoc(sc)) {
            sc->prev = PREV_VALUE;
            continue;
        }
        if (c == '?' && !operand_before(sc) && d >= 0 && d != ' ' && d != '\n' && d != '\t') {
            size_t q = d == '\\' ? p + 3 : p + 2;
            if (!ident_byte(at(sc, q)) || d == '\\') { /* a character literal: ?a ?" ?\n */
                sc->i = q < sc->n ? q : sc->n;
                sc->prev = PREV_VALUE;
                continue;
            }
        }
        if (c == '$') {
            sc->i = ident_byte(d) ? ident_end(sc, p + 1) : p + 2;
            if (sc->i > sc->n)
                sc->i = sc->n;
            sc->prev = PREV_VALUE;
            continue;
        }
        if (c == '@') {
            size_t q = d == '@' ? p + 2 : p + 1;
            sc->i = ident_end(sc, q);
            sc->prev = PREV_VALUE;
            continue;
        }
        if (c == '.' || (c == '&' && d == '.')) {
            if (c == '.' && d == '.') {
                sc->i += at(sc, p + 2) == '.' ? 3 : 2;
                sc->prev = PREV_OP;
                continue;
            }
            sc->i += c == '&' ? 2 : 1;
            for (;;) { /* a trailing dot: the method name is on the next line (`specs.\n  for(x)`) */
                skip_inline_space(sc);
                if (at(sc, sc->i) != '\n')
                    break;
                sc->i++;
                sc->line++;
                sc->line_start = sc->i;
            }
            size_t e = ident_end(sc, sc->i);
            if (e > sc->i) { /* a method name, never a keyword: x.class, x.end, x.if */
                sc->i = e;
                if (at(sc, sc->i) == '?' || at(sc, sc->i) == '!')
                    sc->i++;
                sc->prev = PREV_IDENT;
            } else {
                sc->prev = PREV_OP;
            }
            continue;
        }
        if (c >= '0' && c <= '9') {
            size_t q = p;
            while (q < sc->n && (ident_byte(at(sc, q)) || (sc->s[q] == '.' && at(sc, q + 1) >= '0' &&
                                                            at(sc, q + 1) <= '9')))
                q++;
            sc->i = q;
            sc->prev = PREV_VALUE;
            continue;
        }
        if (ident_byte(c)) {
            size_t b = ident_end(sc, p);
            int e = at(sc, b);
            if ((e == '?' || e == '!') && at(sc, b + 1) != '=')
                b++;
            sc->i = b;
            if (at(sc, b) == ':' && at(sc, b + 1) != ':') { /* a label: `end: 1`, `if: x`, `k:` */
                sc->i++;
                sc->prev = PREV_OP;
                continue;
            }
            keyword(sc, p, b, level);
            continue;
        }
        sc->i++;
        switch (c) {
        case '(':
        case '[':
            sc->brackets++;
            sc->prev = PREV_OP;
            break;
        case '{':
            sc->brackets++;
            braces++;
            sc->prev = PREV_OP;
            break;
        case '}':
            if (level > 0 && braces == 0)
                return;
            if (braces > 0)
                braces--;
            /* fall through */
        case ')':
        case ']':
            if (sc->brackets > 0)
                sc->brackets--;
            sc->prev = PREV_VALUE;
            break;
        case ';':
            sc->prev = PREV_BOL;
            sc->loop_do = false;
            break;
        default:
            sc->prev = PREV_OP;
            break;
        }
    }
}

int fb_infer_ruby(const char *code, size_t len, fb_sig_list *out, fb_error *err)
{
    memset(out, 0, sizeof *out);
    rb_scan sc = {.s = code, .n = code ? len : 0, .line = 1, .prev = PREV_BOL, .out = out};
    if (sc.n >= 3 && memcmp(code, "\xEF\xBB\xBF", 3) == 0)
        sc.i = 3; /* UTF-8 byte order mark */
    at_line_start(&sc);
    scan_code(&sc, 0);
    bool oom = sc.oom || sc.doc.oom;
    fb_scan_buf_free(&sc.doc);
    if (oom) {
        fb_sig_list_free(out);
        return fb_scan_oom(err);
    }
    return 0;
}
