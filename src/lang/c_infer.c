/* C and C++ signature inference: the function definitions at file scope, with each parameter's type.
 *
 * The scanner first blanks what can never hold a definition (comments, string and character literals,
 * preprocessor lines, attributes `__attribute__((...))` / `[[...]]` / `__declspec(...)`), keeping line breaks
 * so line numbers stay right, then walks the text at brace depth 0: a `{` whose preceding token is `)`
 * (optionally followed by `noexcept`, `const`, `throw()` or `-> type`) closes a function header. The header's
 * name is the identifier before the matching `(`; the return type is the text since the previous `;`, `}` or
 * `{` at depth 0. In C++, `namespace N {`, `inline namespace N {`, `namespace A::B {`, `namespace {` and
 * `extern "C" {` / `extern "C++" {` blocks are transparent: the functions inside are found too. fb_infer_cpp
 * names them plainly (`f`: what functionName says, and a valid tool name); fb_infer_cpp_qualified
 * (c_dispatch.h) gives the qualified name the generated main calls (`N::f`, `A::B::f`; plain `f` in an
 * anonymous namespace or a linkage block). A definition outside its namespace (`int N::f(int a) {`) is not
 * found: `N::` could as well be a class. Types are stored canonically: tokens separated by one space only between two identifier
 * tokens (`const char *s` and `const char* s` both give "const char*"). fb_param.annotation holds a parameter's
 * type, fb_function_sig.returns the return type (storage-class words like static/inline removed). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lang/c_dispatch.h"
#include "lang/signature.h"
#include "lang/source_scan.h"

static bool ident_start(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}

static bool ident_byte(unsigned char c)
{
    return fb_scan_is_ident_byte(c);
}

static bool is_ws(unsigned char c)
{
    return fb_scan_is_space(c) || c == '\n';
}

/* Blank s[a..b) (keeping newlines). */
static void blank(char *s, size_t a, size_t b)
{
    for (size_t i = a; i < b; i++)
        if (s[i] != '\n')
            s[i] = ' ';
}

/* Index just past the bracket matching the one at s[i] (open/close given), bounded by n. */
static size_t skip_balanced(const char *s, size_t n, size_t i, char open, char close)
{
    int depth = 0;
    for (; i < n; i++) {
        if (s[i] == open)
            depth++;
        else if (s[i] == close && --depth == 0)
            return i + 1;
    }
    return n;
}

/* Pass 1: comments, literals, preprocessor lines (with continuations). Pass 2: attributes. */
static void clean(char *s, size_t n, bool cpp)
{
    bool line_start = true;
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        if (c == '/' && i + 1 < n && s[i + 1] == '/') {
            size_t j = i;
            while (j < n && s[j] != '\n')
                j += (s[j] == '\\' && j + 1 < n) ? 2 : 1;
            blank(s, i, j);
            i = j;
            continue;
        }
        if (c == '/' && i + 1 < n && s[i + 1] == '*') {
            size_t j = i + 2;
            while (j + 1 < n && !(s[j] == '*' && s[j + 1] == '/'))
                j++;
            j = j + 1 < n ? j + 2 : n;
            blank(s, i, j);
            i = j;
            continue;
        }
        if (c == 'R' && cpp && i + 1 < n && s[i + 1] == '"' && (i == 0 || !ident_byte((unsigned char)s[i - 1]))) {
            /* raw string R"delim( ... )delim" */
            size_t d0 = i + 2, d1 = d0;
            while (d1 < n && s[d1] != '(' && d1 - d0 < 16)
                d1++;
            size_t j = d1 + 1;
            for (; j < n; j++) {
                if (s[j] == ')' && j + 1 + (d1 - d0) < n && memcmp(s + j + 1, s + d0, d1 - d0) == 0 &&
                    s[j + 1 + (d1 - d0)] == '"') {
                    j += 2 + (d1 - d0);
                    break;
                }
            }
            j = j < n ? j : n;
            blank(s, i, j);
            i = j;
            continue;
        }
        if (c == '"' || c == '\'') {
            size_t j = i + 1;
            while (j < n && s[j] != (char)c && s[j] != '\n')
                j += (s[j] == '\\' && j + 1 < n) ? 2 : 1;
            j = j < n ? j + 1 : n;
            blank(s, i, j);
            i = j;
            continue;
        }
        if (c == '#' && line_start) {
            size_t j = i;
            while (j < n && s[j] != '\n') {
                if (s[j] == '\\' && j + 1 < n && s[j + 1] == '\n')
                    j++;
                j++;
            }
            blank(s, i, j);
            i = j;
            continue;
        }
        if (c == '\n')
            line_start = true;
        else if (!is_ws(c))
            line_start = false;
        i++;
    }
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '[' && i + 1 < n && s[i + 1] == '[') {
            size_t j = skip_balanced(s, n, i, '[', ']');
            blank(s, i, j);
            i = j ? j - 1 : j;
            continue;
        }
        if (!ident_start((unsigned char)s[i]) || (i > 0 && ident_byte((unsigned char)s[i - 1])))
            continue;
        size_t j = i;
        while (j < n && ident_byte((unsigned char)s[j]))
            j++;
        size_t w = j - i;
        bool attr = (w == 13 && memcmp(s + i, "__attribute__", 13) == 0) ||
                    (w == 11 && memcmp(s + i, "__attribute", 11) == 0) ||
                    (w == 10 && memcmp(s + i, "__declspec", 10) == 0) || (w == 8 && memcmp(s + i, "_Alignas", 8) == 0) ||
                    (w == 7 && memcmp(s + i, "alignas", 7) == 0);
        if (!attr) {
            i = j - 1;
            continue;
        }
        size_t k = j;
        while (k < n && is_ws((unsigned char)s[k]))
            k++;
        size_t end = k < n && s[k] == '(' ? skip_balanced(s, n, k, '(', ')') : j;
        blank(s, i, end);
        i = end ? end - 1 : end;
    }
}

/* Canonical type text of s[a..b): tokens, one space only between two identifier-ish tokens. Words in
 * `drop` (NULL-terminated) are left out. */
static char *canon(const char *s, size_t a, size_t b, const char *const *drop)
{
    fb_scan_buf out = {0};
    bool prev_word = false;
    size_t i = a;
    while (i < b) {
        unsigned char c = (unsigned char)s[i];
        if (is_ws(c)) {
            i++;
            continue;
        }
        if (ident_byte(c)) {
            size_t j = i;
            while (j < b && ident_byte((unsigned char)s[j]))
                j++;
            bool dropped = false;
            for (const char *const *d = drop; d && *d; d++)
                if (strlen(*d) == j - i && memcmp(*d, s + i, j - i) == 0)
                    dropped = true;
            if (!dropped) {
                if (prev_word)
                    fb_scan_buf_append(&out, " ", 1);
                fb_scan_buf_append(&out, s + i, j - i);
                prev_word = true;
            }
            i = j;
            continue;
        }
        fb_scan_buf_append(&out, s + i, 1);
        prev_word = false;
        i++;
    }
    return fb_scan_buf_take(&out);
}

static const char *const k_param_drop[] = {"register", "restrict", "__restrict", "__restrict__", NULL};
static const char *const k_ret_drop[] = {"static", "inline", "__inline", "__inline__", "extern", "_Noreturn",
                                         "constexpr", "virtual", "explicit", "__extension__", NULL};

/* One parameter s[a..b): fills p (name, annotation, default). Returns -1 on ENOMEM. */
static int parse_param(const char *s, const char *orig, size_t a, size_t b, size_t index, fb_param *p)
{
    /* a default `= value` at nesting depth 0 */
    size_t eq = b;
    int depth = 0;
    for (size_t i = a; i < b; i++) {
        char c = s[i];
        if (c == '(' || c == '[' || c == '{' || c == '<')
            depth++;
        else if (c == ')' || c == ']' || c == '}' || c == '>')
            depth--;
        else if (c == '=' && depth == 0) {
            eq = i;
            break;
        }
    }
    if (eq < b) {
        p->has_default = true;
        /* from the original text: the cleaned one has its string literals blanked */
        if (!(p->default_text = fb_scan_dup_trim(orig + eq + 1, b - eq - 1)))
            return -1;
    }
    size_t e = eq;
    while (e > a && is_ws((unsigned char)s[e - 1]))
        e--;
    /* the name: the last identifier, unless it is the whole type (unnamed parameter) */
    size_t ns = e;
    while (ns > a && ident_byte((unsigned char)s[ns - 1]))
        ns--;
    bool named = ns < e && ident_start((unsigned char)s[ns]);
    if (named) {
        /* `unsigned`, `int`... alone: a type without a name */
        size_t k = ns;
        while (k > a && is_ws((unsigned char)s[k - 1]))
            k--;
        bool only_word = k == a;
        static const char *const k_type_words[] = {"int", "char", "short", "long", "unsigned", "signed", "float",
                                                   "double", "bool", "_Bool", "void", NULL};
        for (const char *const *w = k_type_words; *w; w++)
            if (strlen(*w) == e - ns && memcmp(*w, s + ns, e - ns) == 0)
                named = false;
        if (only_word)
            named = false;
    }
    if (named) {
        p->name = fb_scan_dup(s + ns, e - ns);
        p->annotation = canon(s, a, ns, k_param_drop);
    } else {
        char buf[32];
        snprintf(buf, sizeof buf, "arg%zu", index);
        p->name = strdup(buf);
        p->annotation = canon(s, a, e, k_param_drop);
    }
    return p->name && p->annotation ? 0 : -1;
}

/* The parameter list s[a..b) (between the parentheses). Returns -1 on ENOMEM, 1 if over the cap. */
static int parse_params(const char *s, const char *orig, size_t a, size_t b, fb_function_sig *sig)
{
    char *whole = canon(s, a, b, NULL);
    if (!whole)
        return -1;
    bool none = whole[0] == '\0' || strcmp(whole, "void") == 0;
    free(whole);
    if (none)
        return 0;
    int depth = 0;
    size_t start = a;
    for (size_t i = a; i <= b; i++) {
        char c = i < b ? s[i] : ',';
        if (c == '(' || c == '[' || c == '{' || c == '<')
            depth++;
        else if (c == ')' || c == ']' || c == '}' || c == '>')
            depth--;
        else if (c == ',' && depth <= 0) {
            size_t k = start;
            while (k < i && is_ws((unsigned char)s[k]))
                k++;
            if (k == i && i == b)
                break; /* a trailing comma (invalid C, but keep the count right) */
            bool over = false;
            fb_param *p = fb_scan_add_param(sig, &over);
            if (!p)
                return over ? 1 : -1;
            if (parse_param(s, orig, start, i, sig->nparams - 1, p) < 0)
                return -1;
            /* `...`: variadic */
            if (strcmp(p->annotation, "...") == 0 || strstr(p->annotation, "..."))
                p->kind = FB_PARAM_VAR_POSITIONAL;
            start = i + 1;
        }
    }
    return 0;
}

/* The line of pos, given that position `at` (>= pos) is on line `at_line`: counts only the text between. */
static int line_of(const char *s, size_t pos, size_t at, int at_line)
{
    for (size_t i = pos; i < at; i++)
        at_line -= s[i] == '\n';
    return at_line;
}

/* The header ending at close (the index of its `)`), starting after `from`: pushes one signature. */
static int take_function(const char *s, const char *orig, size_t from, size_t close, size_t at, int at_line,
                         const char *prefix, fb_sig_list *out, fb_error *err)
{
    int depth = 0;
    size_t open = close;
    for (size_t i = close + 1; i-- > from;) {
        if (s[i] == ')')
            depth++;
        else if (s[i] == '(' && --depth == 0) {
            open = i;
            break;
        }
    }
    if (open == close)
        return 0;
    size_t ne = open;
    while (ne > from && is_ws((unsigned char)s[ne - 1]))
        ne--;
    size_t ns = ne;
    while (ns > from && ident_byte((unsigned char)s[ns - 1]))
        ns--;
    if (ns == ne || !ident_start((unsigned char)s[ns]))
        return 0; /* `(*fp)(...)`, operators: not a plain function */
    if (ns >= 2 && s[ns - 1] == ':' && s[ns - 2] == ':')
        return 0; /* `T::method(...)`: a member definition */
    static const char *const k_not_names[] = {"if", "while", "for", "switch", "return", "sizeof", "catch",
                                              "operator", NULL};
    for (const char *const *w = k_not_names; *w; w++)
        if (strlen(*w) == ne - ns && memcmp(*w, s + ns, ne - ns) == 0)
            return 0;
    fb_function_sig sig = {0};
    size_t plen = strlen(prefix);
    if ((sig.name = malloc(plen + (ne - ns) + 1)) != NULL) {
        memcpy(sig.name, prefix, plen);
        memcpy(sig.name + plen, s + ns, ne - ns);
        sig.name[plen + (ne - ns)] = '\0';
    }
    sig.returns = canon(s, from, ns, k_ret_drop);
    sig.line = line_of(s, ns, at, at_line);
    if (!sig.name || !sig.returns)
        goto oom;
    int rc = parse_params(s, orig, open + 1, close, &sig);
    if (rc < 0)
        goto oom;
    if (rc > 0) {
        fb_function_sig_free(&sig); /* over the cap: signature unknown */
        return 0;
    }
    if (fb_scan_push_func(out, &sig) < 0)
        goto oom;
    return 0;
oom:
    fb_function_sig_free(&sig);
    return fb_scan_oom(err);
}

/* If s[i] == '{' ends a function header, the index of the header's `)`; else (size_t)-1. */
static size_t header_close(const char *s, size_t from, size_t i)
{
    size_t j = i;
    for (;;) {
        while (j > from && is_ws((unsigned char)s[j - 1]))
            j--;
        if (j <= from)
            return (size_t)-1;
        if (s[j - 1] == ')') {
            /* `throw()` / `noexcept(...)` after the parameter list: look further back */
            size_t close = j - 1, k, depth = 0;
            for (k = close + 1; k-- > from;) {
                if (s[k] == ')')
                    depth++;
                else if (s[k] == '(' && --depth == 0)
                    break;
            }
            if (k == (size_t)-1 || k < from)
                return (size_t)-1;
            size_t w = k;
            while (w > from && is_ws((unsigned char)s[w - 1]))
                w--;
            size_t ws = w;
            while (ws > from && ident_byte((unsigned char)s[ws - 1]))
                ws--;
            if ((w - ws == 5 && memcmp(s + ws, "throw", 5) == 0) ||
                (w - ws == 8 && memcmp(s + ws, "noexcept", 8) == 0)) {
                j = ws;
                continue;
            }
            return close;
        }
        size_t ws = j;
        while (ws > from && ident_byte((unsigned char)s[ws - 1]))
            ws--;
        if (ws < j && ((j - ws == 8 && memcmp(s + ws, "noexcept", 8) == 0) ||
                       (j - ws == 5 && memcmp(s + ws, "const", 5) == 0) ||
                       (j - ws == 8 && memcmp(s + ws, "override", 8) == 0))) {
            j = ws;
            continue;
        }
        return (size_t)-1;
    }
}

/* C++ scopes that hold functions callable from the generated main: if s[from..brace) is the header of a
 * namespace or linkage block, returns true and sets *name / *name_len to the namespace's (qualified) name,
 * empty for `namespace {` and `extern "C" {` (its string literal is blanked by clean()). */
static bool scope_header(const char *s, size_t from, size_t brace, const char **name, size_t *name_len)
{
    size_t i = from, e = brace;
    while (i < e && is_ws((unsigned char)s[i]))
        i++;
    while (e > i && is_ws((unsigned char)s[e - 1]))
        e--;
    *name = s + e;
    *name_len = 0;
    if (e - i == 6 && memcmp(s + i, "extern", 6) == 0)
        return true;
    if (e - i >= 6 && memcmp(s + i, "inline", 6) == 0 && is_ws((unsigned char)s[i + 6])) {
        i += 6;
        while (i < e && is_ws((unsigned char)s[i]))
            i++;
    }
    if (e - i < 9 || memcmp(s + i, "namespace", 9) != 0 || (e - i > 9 && !is_ws((unsigned char)s[i + 9])))
        return false;
    i += 9;
    while (i < e && is_ws((unsigned char)s[i]))
        i++;
    /* `A`, `A::B` (C++17), `A::inline B` (C++20) */
    for (size_t k = i; k < e; k++) {
        if (!ident_byte((unsigned char)s[k]) && s[k] != ':' && !is_ws((unsigned char)s[k]))
            return false;
    }
    *name = s + i;
    *name_len = e - i;
    return true;
}

/* Appends a namespace name to the prefix (`A::B` + "::"), dropping spaces and `inline`. */
static void prefix_push(fb_scan_buf *prefix, const char *name, size_t n)
{
    if (n == 0)
        return;
    for (size_t i = 0; i < n;) {
        if (is_ws((unsigned char)name[i])) {
            i++;
            continue;
        }
        size_t j = i;
        while (j < n && !is_ws((unsigned char)name[j]))
            j++;
        if (!(j - i == 6 && memcmp(name + i, "inline", 6) == 0))
            fb_scan_buf_append(prefix, name + i, j - i);
        i = j;
    }
    fb_scan_buf_append(prefix, "::", 2);
}

#define MAX_SCOPES 64

static int infer(const char *code, size_t len, bool cpp, bool qualified, fb_sig_list *out, fb_error *err)
{
    memset(out, 0, sizeof *out);
    char *s = malloc(len + 1);
    if (!s)
        return fb_scan_oom(err);
    if (len)
        memcpy(s, code, len);
    s[len] = '\0';
    clean(s, len, cpp);
    /* depth: open braces; the first nscopes of them are namespace / linkage blocks, whose prefix lengths
     * (in `prefix`) are in scope_len */
    int depth = 0, line = 1, nscopes = 0;
    size_t scope_len[MAX_SCOPES + 1] = {0};
    fb_scan_buf prefix = {0};
    fb_scan_buf_append(&prefix, "", 0);
    size_t from = 0;
    int rc = 0;
    for (size_t i = 0; i < len && rc == 0; i++) {
        char c = s[i];
        if (c == '\n') {
            line++;
        } else if (c == '{') {
            const char *ns;
            size_t ns_len;
            if (depth == nscopes && cpp && nscopes < MAX_SCOPES && scope_header(s, from, i, &ns, &ns_len)) {
                prefix_push(&prefix, ns, ns_len);
                scope_len[++nscopes] = prefix.len;
                depth++;
                from = i + 1;
                continue;
            }
            if (depth == nscopes) {
                size_t close = header_close(s, from, i);
                if (close != (size_t)-1) {
                    /* C++ trailing return `auto f() -> T {` is not recognised: close is then not found */
                    rc = take_function(s, code, from, close, i, line, qualified && prefix.data ? prefix.data : "",
                                       out, err);
                }
            }
            depth++;
        } else if (c == '}') {
            if (depth > 0)
                depth--;
            if (depth < nscopes) { /* a namespace / linkage block ends */
                nscopes--;
                prefix.len = scope_len[nscopes];
                if (prefix.data)
                    prefix.data[prefix.len] = '\0';
            }
            if (depth == nscopes)
                from = i + 1;
        } else if (c == ';' && depth == nscopes) {
            from = i + 1;
        } else if (c == '\0') {
            s[i] = ' ';
        }
    }
    if (prefix.oom && rc == 0)
        rc = fb_scan_oom(err);
    fb_scan_buf_free(&prefix);
    free(s);
    if (rc < 0)
        fb_sig_list_free(out);
    return rc < 0 ? -1 : 0;
}

int fb_infer_c(const char *code, size_t len, fb_sig_list *out, fb_error *err)
{
    return infer(code, len, false, false, out, err);
}

int fb_infer_cpp(const char *code, size_t len, fb_sig_list *out, fb_error *err)
{
    return infer(code, len, true, false, out, err);
}

int fb_infer_cpp_qualified(const char *code, size_t len, fb_sig_list *out, fb_error *err)
{
    return infer(code, len, true, true, out, err);
}
