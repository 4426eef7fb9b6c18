/* PHP signature inference: finds the top-level `function name(params)` declarations of a source text.
 *
 * One forward scan that knows PHP's lexical layers: inline HTML outside `<?php ... ?>` (a text that does not
 * start with `<?` is PHP from the first byte, as the harness runs it), `//` and `#` comments (ending at a
 * newline or `?>`; `#[` starts an attribute, not a comment), block and doc comments, '...', "..." and `...`
 * strings (with `{$expr}` interpolation that may hold quotes), heredoc and nowdoc.
 * Braces are kept on a stack that says what each one opened: a function body (named or closure), a class-like
 * body (class, interface, trait, enum, anonymous class) or any other block. A declaration is top-level when no
 * function or class body encloses it; functions inside top-level blocks (`if (!function_exists('f')) {...}`,
 * `namespace X {...}`) count, as PHP defines them when that code runs. Nothing after `__halt_compiler` counts.
 * Parameters: `[#[attr]] [modifiers] [type] [&] [...] $name [= default]`; the type text goes to `annotation`,
 * `...$rest` is FB_PARAM_VAR_POSITIONAL. A parameter that does not parse drops its function (an unknown
 * signature is better than a wrong one). The doc is the `/ ** ... * /` block right before the declaration
 * (attributes may sit between), with the comment markers and leading `*` removed. */
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lang/signature.h"
#include "lang/source_scan.h"

#define BRACE_STACK_MAX 4096

enum { K_BLOCK = 0, K_FUNC = 1, K_CLASS = 2 };

typedef struct php_scan {
    const char *s;
    size_t n;
    unsigned char stack[BRACE_STACK_MAX];
    size_t depth;        /* braces open (may exceed BRACE_STACK_MAX: deeper ones count as blocks) */
    size_t func_or_class; /* how many entries of the stack are K_FUNC or K_CLASS */
    int pending;         /* what the next `{` opens */
    size_t doc_start, doc_end; /* last doc comment, valid while has_doc */
    bool has_doc;
    char prev;           /* last significant byte seen ('M' for `::`, '>' for `->`) */
} php_scan;

static bool is_ident(unsigned char c)
{
    return fb_scan_is_ident_byte(c);
}

static bool word_at(const php_scan *sc, size_t i, const char *w)
{
    size_t l = strlen(w);
    if (i + l > sc->n || strncasecmp(sc->s + i, w, l) != 0)
        return false;
    if (i > 0 && (is_ident((unsigned char)sc->s[i - 1]) || sc->s[i - 1] == '$'))
        return false;
    return i + l == sc->n || !is_ident((unsigned char)sc->s[i + l]);
}

static size_t skip_dq(const php_scan *sc, size_t i, char quote, int nest);

/* Skips a PHP expression inside `{$...}` up to and past its closing brace. */
static size_t skip_interp(const php_scan *sc, size_t i, int nest)
{
    int depth = 1;
    while (i < sc->n) {
        char c = sc->s[i];
        if (c == '\'' || c == '"') {
            if (nest >= FB_SCAN_MAX_NESTING)
                return sc->n;
            i = skip_dq(sc, i + 1, c, nest + 1);
            continue;
        }
        i++;
        if (c == '{')
            depth++;
        else if (c == '}' && --depth == 0)
            return i;
    }
    return sc->n;
}

/* i is just past the opening quote; returns the index past the closing one. ' strings have no
 * interpolation; " and ` strings may hold `{$expr}`. */
static size_t skip_dq(const php_scan *sc, size_t i, char quote, int nest)
{
    while (i < sc->n) {
        char c = sc->s[i];
        if (c == '\\') {
            i += 2;
            continue;
        }
        if (c == quote)
            return i + 1;
        if (quote != '\'' && c == '{' && i + 1 < sc->n && sc->s[i + 1] == '$') {
            i = skip_interp(sc, i + 1, nest);
            continue;
        }
        i++;
    }
    return sc->n;
}

/* i is at `<<<`; returns the index past the closing marker, or i + 3 if this is not a heredoc. */
static size_t skip_heredoc(const php_scan *sc, size_t i)
{
    size_t j = i + 3;
    while (j < sc->n && (sc->s[j] == ' ' || sc->s[j] == '\t'))
        j++;
    char q = 0;
    if (j < sc->n && (sc->s[j] == '\'' || sc->s[j] == '"'))
        q = sc->s[j++];
    size_t id = j;
    while (j < sc->n && is_ident((unsigned char)sc->s[j]))
        j++;
    size_t idlen = j - id;
    if (idlen == 0 || (q && (j >= sc->n || sc->s[j] != q)))
        return i + 3;
    if (q)
        j++;
    if (j < sc->n && sc->s[j] == '\r')
        j++;
    if (j >= sc->n || sc->s[j] != '\n')
        return i + 3;
    /* the closing marker: a line whose first non-blank text is the identifier, not followed by an ident byte */
    while (j < sc->n) {
        j++; /* past '\n' */
        size_t k = j;
        while (k < sc->n && (sc->s[k] == ' ' || sc->s[k] == '\t'))
            k++;
        if (k + idlen <= sc->n && memcmp(sc->s + k, sc->s + id, idlen) == 0 &&
            (k + idlen == sc->n || !is_ident((unsigned char)sc->s[k + idlen])))
            return k + idlen;
        const char *nl = memchr(sc->s + j, '\n', sc->n - j);
        if (!nl)
            return sc->n;
        j = (size_t)(nl - sc->s);
    }
    return sc->n;
}

/* i is past `?>`: skips inline HTML up to and past the next open tag. */
static size_t skip_html(const php_scan *sc, size_t i)
{
    while (i + 1 < sc->n) {
        const char *p = memchr(sc->s + i, '<', sc->n - i - 1);
        if (!p)
            return sc->n;
        i = (size_t)(p - sc->s);
        if (sc->s[i + 1] == '?') {
            if (i + 5 <= sc->n && strncasecmp(sc->s + i + 2, "php", 3) == 0)
                return i + 5;
            return i + 2 + (i + 2 < sc->n && sc->s[i + 2] == '=');
        }
        i++;
    }
    return sc->n;
}

/* Skips a comment at i (`//`, `#` not followed by `[`, `/ *`); returns i when there is none. */
static size_t skip_comment(const php_scan *sc, size_t i)
{
    const char *s = sc->s;
    if (i < sc->n && (s[i] == '#' || (s[i] == '/' && i + 1 < sc->n && s[i + 1] == '/'))) {
        if (s[i] == '#' && i + 1 < sc->n && s[i + 1] == '[')
            return i;
        while (i < sc->n && s[i] != '\n' && !(s[i] == '?' && i + 1 < sc->n && s[i + 1] == '>'))
            i++;
        return i;
    }
    if (i + 1 < sc->n && s[i] == '/' && s[i + 1] == '*') {
        size_t j = i + 2;
        while (j + 1 < sc->n && !(s[j] == '*' && s[j + 1] == '/'))
            j++;
        return j + 1 < sc->n ? j + 2 : sc->n;
    }
    return i;
}

/* Skips blanks, newlines and comments from i. */
static size_t skip_ws(const php_scan *sc, size_t i)
{
    for (;;) {
        while (i < sc->n && (fb_scan_is_space((unsigned char)sc->s[i]) || sc->s[i] == '\n'))
            i++;
        size_t j = skip_comment(sc, i);
        if (j == i)
            return i;
        i = j;
    }
}

/* Skips one balanced (), [] or {} group starting at i (at the opener), strings and comments inside. */
static size_t skip_group(const php_scan *sc, size_t i)
{
    size_t depth = 0;
    while (i < sc->n) {
        char c = sc->s[i];
        size_t j = skip_comment(sc, i);
        if (j != i) {
            i = j;
            continue;
        }
        if (c == '\'' || c == '"' || c == '`') {
            i = skip_dq(sc, i + 1, c, 0);
            continue;
        }
        if (c == '<' && i + 2 < sc->n && sc->s[i + 1] == '<' && sc->s[i + 2] == '<') {
            i = skip_heredoc(sc, i);
            continue;
        }
        i++;
        if (c == '(' || c == '[' || c == '{')
            depth++;
        else if ((c == ')' || c == ']' || c == '}') && depth > 0 && --depth == 0)
            return i;
    }
    return sc->n;
}

static int line_of(const php_scan *sc, size_t pos)
{
    int line = 1;
    for (size_t i = 0; i < pos && i < sc->n; i++)
        line += sc->s[i] == '\n';
    return line;
}

static char *clean_doc(const char *s, size_t n)
{
    /* s[0..n) is the whole comment, `/ **` ... `* /` */
    if (n < 5)
        return fb_scan_dup("", 0);
    s += 3;
    n -= 5;
    fb_scan_buf b = {0};
    size_t i = 0;
    bool first = true;
    while (i <= n) {
        const char *nl = memchr(s + i, '\n', n - i);
        size_t e = nl ? (size_t)(nl - s) : n;
        size_t a = i;
        while (a < e && (fb_scan_is_space((unsigned char)s[a])))
            a++;
        if (a < e && s[a] == '*')
            a++;
        if (a < e && s[a] == ' ')
            a++;
        size_t z = e;
        while (z > a && fb_scan_is_space((unsigned char)s[z - 1]))
            z--;
        if (!first)
            fb_scan_buf_append(&b, "\n", 1);
        fb_scan_buf_append(&b, s + a, z - a);
        first = false;
        if (!nl)
            break;
        i = e + 1;
    }
    char *all = fb_scan_buf_take(&b);
    if (!all)
        return NULL;
    char *t = fb_scan_dup_trim(all, strlen(all));
    free(all);
    return t;
}

/* The `&` at i makes the parameter by-reference (`&$x`, `&...$xs`), as opposed to joining an intersection
 * type (`A&B $x`): PHP's own lexer tells them apart the same way, by what follows. */
static bool by_ref_amp(const php_scan *sc, size_t i, size_t e)
{
    size_t j = skip_ws(sc, i + 1);
    return j < e && (sc->s[j] == '$' || (j + 2 < e && memcmp(sc->s + j, "...", 3) == 0));
}

/* Parses one parameter from [a, e). Returns 0, 1 if it does not parse, -1 on ENOMEM/over cap. */
static int parse_param(const php_scan *sc, size_t a, size_t e, fb_function_sig *sig)
{
    php_scan sub = *sc;
    sub.n = e; /* bound every helper by the parameter's end */
    size_t i = skip_ws(&sub, a);
    while (i + 1 < e && sub.s[i] == '#' && sub.s[i + 1] == '[')
        i = skip_ws(&sub, skip_group(&sub, i + 1));
    static const char *const mods[] = {"public", "private", "protected", "readonly"};
    for (bool again = true; again;) {
        again = false;
        for (size_t m = 0; m < sizeof mods / sizeof mods[0]; m++) {
            if (word_at(&sub, i, mods[m])) {
                i = skip_ws(&sub, i + strlen(mods[m]));
                again = true;
            }
        }
    }
    size_t type_start = i;
    while (i < e && sub.s[i] != '$' && !(sub.s[i] == '&' && by_ref_amp(&sub, i, e)) &&
           !(sub.s[i] == '.' && i + 2 < e && sub.s[i + 1] == '.'))
        i++;
    size_t type_end = i;
    bool variadic = false;
    for (;;) {
        i = skip_ws(&sub, i);
        if (i < e && sub.s[i] == '&') {
            i++;
        } else if (i + 2 < e && memcmp(sub.s + i, "...", 3) == 0) {
            variadic = true;
            i += 3;
        } else {
            break;
        }
    }
    if (i >= e || sub.s[i] != '$')
        return 1;
    size_t name = ++i;
    while (i < e && is_ident((unsigned char)sub.s[i]))
        i++;
    if (i == name || (unsigned char)sub.s[name] <= '9')
        return 1;
    size_t name_end = i;
    i = skip_ws(&sub, i);
    bool has_default = false;
    if (i < e && sub.s[i] == '=') {
        has_default = true;
        i++;
    } else if (i < e) {
        return 1;
    }
    bool over = false;
    fb_param *p = fb_scan_add_param(sig, &over);
    if (!p)
        return over ? 2 : -1;
    p->kind = variadic ? FB_PARAM_VAR_POSITIONAL : FB_PARAM_POSITIONAL;
    p->name = fb_scan_dup(sc->s + name, name_end - name);
    if (!p->name)
        return -1;
    if (type_end > type_start) {
        p->annotation = fb_scan_dup_trim(sc->s + type_start, type_end - type_start);
        if (!p->annotation)
            return -1;
        if (!p->annotation[0]) {
            free(p->annotation);
            p->annotation = NULL;
        }
    }
    if (has_default) {
        p->default_text = fb_scan_dup_trim(sc->s + i, e - i);
        if (!p->default_text)
            return -1;
        p->has_default = true;
    }
    return 0;
}

/* At `(` of a named top-level function: parses the list into sig. Returns 0, 1 (skip this function), 2 (over
 * the parameter cap: skip), -1 (ENOMEM). *end is set past `)`. */
static int parse_params(const php_scan *sc, size_t open, fb_function_sig *sig, size_t *end)
{
    size_t close = skip_group(sc, open);
    *end = close;
    if (close > sc->n || close == 0 || sc->s[close - 1] != ')')
        return 1;
    size_t i = open + 1, start = i, stop = close - 1;
    while (i <= stop) {
        size_t j = i;
        if (j < stop) {
            char c = sc->s[j];
            size_t k = skip_comment(sc, j);
            if (k != j) {
                i = k;
                continue;
            }
            if (c == '(' || c == '[' || c == '{') {
                i = skip_group(sc, j);
                continue;
            }
            if (c == '\'' || c == '"' || c == '`') {
                i = skip_dq(sc, j + 1, c, 0);
                continue;
            }
            if (c == '<' && j + 2 < stop && sc->s[j + 1] == '<' && sc->s[j + 2] == '<') {
                i = skip_heredoc(sc, j);
                continue;
            }
            if (c != ',') {
                i++;
                continue;
            }
        }
        /* a comma or the end: [start, j) is one parameter (empty only as a trailing comma or `()`) */
        size_t a = skip_ws(sc, start);
        if (a < j) {
            int r = parse_param(sc, start, j, sig);
            if (r != 0)
                return r;
        } else if (j < stop) {
            return 1; /* `(,` or `,,` */
        }
        start = i = j + 1;
    }
    /* PHP 8: a default before a required parameter is never used, the parameter is required too (a
     * deprecation; ReflectionParameter::isDefaultValueAvailable() is false for it). */
    bool required_after = false;
    for (size_t k = sig->nparams; k > 0; k--) {
        fb_param *p = &sig->params[k - 1];
        if (p->has_default && required_after) {
            p->has_default = false;
            free(p->default_text);
            p->default_text = NULL;
        }
        required_after |= !p->has_default && p->kind != FB_PARAM_VAR_POSITIONAL;
    }
    return 0;
}

/* At `function` (top-level). Returns the index to continue from, or (size_t)-1 on ENOMEM. */
static size_t declaration(php_scan *sc, size_t kw, fb_sig_list *out, int *rc)
{
    size_t i = skip_ws(sc, kw + 8);
    if (i < sc->n && sc->s[i] == '&')
        i = skip_ws(sc, i + 1);
    size_t name = i;
    while (i < sc->n && is_ident((unsigned char)sc->s[i]))
        i++;
    if (i == name || (unsigned char)sc->s[name] <= '9')
        return kw + 8; /* a closure, or not a declaration */
    size_t name_end = i;
    i = skip_ws(sc, i);
    if (i >= sc->n || sc->s[i] != '(')
        return kw + 8; /* `use function a\b;` and the like */
    fb_function_sig sig = {0};
    sig.line = line_of(sc, kw);
    sig.name = fb_scan_dup(sc->s + name, name_end - name);
    if (!sig.name)
        goto oom;
    if (sc->has_doc) {
        sig.doc = clean_doc(sc->s + sc->doc_start, sc->doc_end - sc->doc_start);
        if (!sig.doc)
            goto oom;
    }
    sc->has_doc = false;
    size_t end;
    int r = parse_params(sc, i, &sig, &end);
    if (r < 0)
        goto oom;
    if (r == 0) {
        if (fb_scan_push_func(out, &sig) < 0)
            goto oom;
    }
    fb_function_sig_free(&sig);
    return end;
oom:
    fb_function_sig_free(&sig);
    *rc = -1;
    return sc->n;
}

int fb_infer_php(const char *code, size_t len, fb_sig_list *out, fb_error *err)
{
    memset(out, 0, sizeof *out);
    if (!code)
        return 0;
    php_scan *sc = calloc(1, sizeof *sc);
    if (!sc)
        return fb_scan_oom(err);
    sc->s = code;
    sc->n = len;
    int rc = 0;
    size_t i = skip_ws(sc, 0);
    if (i + 1 < len && code[i] == '<' && code[i + 1] == '?')
        i = skip_html(sc, 0);
    else
        i = 0;
    while (i < len && rc == 0) {
        char c = code[i];
        if (c == '\n' || fb_scan_is_space((unsigned char)c)) {
            i++;
            continue;
        }
        if (c == '/' && i + 2 < len && code[i + 1] == '*' && code[i + 2] == '*') {
            size_t e = skip_comment(sc, i);
            sc->doc_start = i;
            sc->doc_end = e;
            sc->has_doc = e <= len && e >= i + 5 && code[e - 1] == '/';
            i = e;
            continue;
        }
        size_t j = skip_comment(sc, i);
        if (j != i) {
            i = j;
            continue;
        }
        if (c == '#' && i + 1 < len && code[i + 1] == '[') {
            i = skip_group(sc, i + 1); /* an attribute: keeps the doc comment before it */
            continue;
        }
        bool keep_doc = false;
        if (c == '\'' || c == '"' || c == '`') {
            i = skip_dq(sc, i + 1, c, 0);
        } else if (c == '<' && i + 2 < len && code[i + 1] == '<' && code[i + 2] == '<') {
            i = skip_heredoc(sc, i);
        } else if (c == '?' && i + 1 < len && code[i + 1] == '>') {
            i = skip_html(sc, i + 2);
            sc->prev = ';';
            sc->pending = K_BLOCK;
        } else if (c == '{') {
            if (sc->depth < BRACE_STACK_MAX)
                sc->stack[sc->depth] = (unsigned char)sc->pending;
            if (sc->pending != K_BLOCK)
                sc->func_or_class++;
            sc->depth++;
            sc->pending = K_BLOCK;
            sc->prev = '{';
            i++;
        } else if (c == '}') {
            if (sc->depth > 0) {
                sc->depth--;
                if (sc->depth < BRACE_STACK_MAX && sc->stack[sc->depth] != K_BLOCK)
                    sc->func_or_class--;
            }
            sc->prev = '}';
            i++;
        } else if (c == ';') {
            sc->pending = K_BLOCK;
            sc->prev = ';';
            i++;
        } else if (is_ident((unsigned char)c) || c == '$') {
            size_t s0 = i;
            bool var = c == '$';
            i++;
            while (i < len && is_ident((unsigned char)code[i]))
                i++;
            bool member = sc->prev == 'M' || sc->prev == '>' || var; /* not after `if (x):`, `case 1:` */
            if (!member && word_at(sc, s0, "__halt_compiler"))
                break; /* PHP compiles nothing after it (the rest of the file is data) */
            if (!member && word_at(sc, s0, "function")) {
                sc->pending = K_FUNC;
                if (sc->func_or_class == 0) {
                    i = declaration(sc, s0, out, &rc);
                    keep_doc = false;
                }
            } else if (!member && (word_at(sc, s0, "class") || word_at(sc, s0, "interface") ||
                                   word_at(sc, s0, "trait") || word_at(sc, s0, "enum"))) {
                sc->pending = K_CLASS;
            }
            sc->prev = 'a';
        } else {
            if (c == ':' && i + 1 < len && code[i + 1] == ':') {
                sc->prev = 'M';
                i += 2;
            } else if (c == '>' && i > 0 && code[i - 1] == '-') {
                sc->prev = '>';
                i++;
            } else {
                sc->prev = c;
                i++;
            }
        }
        if (!keep_doc)
            sc->has_doc = false;
    }
    free(sc);
    if (rc < 0) {
        fb_sig_list_free(out);
        return fb_scan_oom(err);
    }
    return 0;
}
