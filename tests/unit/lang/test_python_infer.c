/* Python signature inference: a table of tricky sources and the exact signatures expected from each, then a
 * fuzz-style pass (garbage, truncated prefixes, mutations) that must never crash, overrun or leak. Every
 * source is copied into an exactly-sized heap buffer with no NUL terminator so ASan/valgrind catch overruns. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lang/signature.h"
#include "lang/source_scan.h"

typedef struct xparam {
    const char *name;
    fb_param_kind kind;
    const char *def; /* expected default_text, NULL = no default */
    const char *ann; /* expected annotation, NULL = none */
} xparam;

typedef struct xfunc {
    const char *name; /* NULL ends the list */
    int line;
    bool is_async;
    const char *doc;
    xparam params[10]; /* name NULL ends the list */
} xfunc;

typedef struct infer_case {
    const char *label;
    const char *code;
    xfunc funcs[6];
} infer_case;

#define POS FB_PARAM_POSITIONAL
#define PONLY FB_PARAM_POSITIONAL_ONLY
#define KWONLY FB_PARAM_KEYWORD_ONLY
#define VARPOS FB_PARAM_VAR_POSITIONAL
#define VARKW FB_PARAM_VAR_KEYWORD

static const infer_case cases[] = {
    {"empty input", "", {{0}}},
    {"only comments and blank lines", "# def nope(a):\n\n   # another\n\n", {{0}}},
    {"only a module docstring", "\"\"\"def fake(a):\n    pass\n\"\"\"\n", {{0}}},
    {"seed greet",
     "def greet(name, greeting=\"Hello\"):\n    return f\"{greeting}, {name}!\"\n",
     {{"greet", 1, false, NULL, {{"name", POS, NULL, NULL}, {"greeting", POS, "\"Hello\"", NULL}}}}},
    {"fakes in strings and comments",
     "s = 'def fake1(a):'\n"
     "t = \"\"\"\n"
     "def fake2(b):\n"
     "    pass\n"
     "\"\"\"\n"
     "# def fake3(c):\n"
     "u = rB'''\n"
     "def fake4(d):'''\n"
     "v = F\"\"\"\n"
     "def fake5(e):{x}\"\"\"\n"
     "w = 'it\\'s def fake6(f):'\n"
     "def real(x):\n"
     "    pass\n",
     {{"real", 12, false, NULL, {{"x", POS, NULL, NULL}}}}},
    {"nested defs, classes and methods are not top-level",
     "def outer(a):\n"
     "    def inner(b):\n"
     "        def innermost(c): pass\n"
     "    return inner\n"
     "class C:\n"
     "    def method(self, x):\n"
     "        pass\n"
     "    async def amethod(self): pass\n"
     "def after(): pass\n",
     {{"outer", 1, false, NULL, {{"a", POS, NULL, NULL}}}, {"after", 9, false, NULL, {{0}}}}},
    {"call sites, lambdas and look-alike names",
     "foo(1, 2)\n"
     "f = lambda x, y: x\n"
     "define = 3\n"
     "def_x = 4\n"
     "undef(5)\n"
     "print(def_x)\n",
     {{0}}},
    {"decorators, including multi-line ones",
     "@app.route('/x', methods=['GET',\n"
     "                          'POST'])\n"
     "@cache\n"
     "def handler(req):\n"
     "    return req\n",
     {{"handler", 4, false, NULL, {{"req", POS, NULL, NULL}}}}},
    {"async def",
     "import asyncio\n"
     "async  def fetch(url, *, timeout=10.0):\n"
     "    await asyncio.sleep(0)\n",
     {{"fetch", 2, true, NULL, {{"url", POS, NULL, NULL}, {"timeout", KWONLY, "10.0", NULL}}}}},
    {"brief example: nested brackets, strings, lambda in defaults",
     "def f(a: Dict[str, int] = {\"x\": (1, 2)}, *, b=lambda x, y: x, **kw) -> \"str\":\n    return a\n",
     {{"f",
       1,
       false,
       NULL,
       {{"a", POS, "{\"x\": (1, 2)}", "Dict[str, int]"},
        {"b", KWONLY, "lambda x, y: x", NULL},
        {"kw", VARKW, NULL, NULL}}}}},
    {"positional-only, *args, keyword-only, **kwargs",
     "def g(a, b=1, /, c=2, *args, d, e=3, **kwargs): pass\n",
     {{"g",
       1,
       false,
       NULL,
       {{"a", PONLY, NULL, NULL},
        {"b", PONLY, "1", NULL},
        {"c", POS, "2", NULL},
        {"args", VARPOS, NULL, NULL},
        {"d", KWONLY, NULL, NULL},
        {"e", KWONLY, "3", NULL},
        {"kwargs", VARKW, NULL, NULL}}}}},
    {"multi-line signature with comments and trailing comma",
     "def multi(\n"
     "    a,  # first, with a comma\n"
     "    b: int = (1,\n"
     "              2),  # tuple\n"
     "    c: \"x, y\" = 'p,q',\n"
     "    *args: int,\n"
     "    d=[1, [2, 3]],\n"
     "    **kw,\n"
     "):\n"
     "    pass\n"
     "def next_one(): pass\n",
     {{"multi",
       1,
       false,
       NULL,
       {{"a", POS, NULL, NULL},
        {"b", POS, "(1,\n              2)", "int"},
        {"c", POS, "'p,q'", "\"x, y\""},
        {"args", VARPOS, NULL, "int"},
        {"d", KWONLY, "[1, [2, 3]]", NULL},
        {"kw", VARKW, NULL, NULL}}},
      {"next_one", 11, false, NULL, {{0}}}}},
    {"comparison and walrus-like operators in defaults",
     "def cmp(a=1 <= 2, b=x != y, c=(z := 3), d=\"=\"): pass\n",
     {{"cmp",
       1,
       false,
       NULL,
       {{"a", POS, "1 <= 2", NULL},
        {"b", POS, "x != y", NULL},
        {"c", POS, "(z := 3)", NULL},
        {"d", POS, "\"=\"", NULL}}}}},
    {"lambda with defaults and nested lambda in a default",
     "def lam(f=lambda a, b=lambda: 1, *c: a, g=2): pass\n",
     {{"lam", 1, false, NULL, {{"f", POS, "lambda a, b=lambda: 1, *c: a", NULL}, {"g", POS, "2", NULL}}}}},
    {"docstrings: triple-quoted, cleaned like inspect.cleandoc",
     "def d1():\n"
     "    \"\"\"Summary line.\n"
     "\n"
     "    Details, indented:\n"
     "        more indented\n"
     "    \"\"\"\n"
     "def d2():\n"
     "    # a comment first\n"
     "\n"
     "    'single quoted doc'\n"
     "def d3(): \"one-liner\"\n"
     "def d4():\n"
     "    r'''raw \\d doc'''\n"
     "def d5():\n"
     "    f\"not a doc {x}\"\n"
     "def d6():\n"
     "    \"x\".join([])\n",
     {{"d1", 1, false, "Summary line.\n\nDetails, indented:\n    more indented", {{0}}},
      {"d2", 7, false, "single quoted doc", {{0}}},
      {"d3", 11, false, "one-liner", {{0}}},
      {"d4", 12, false, "raw \\d doc", {{0}}},
      {"d5", 14, false, NULL, {{0}}},
      {"d6", 16, false, NULL, {{0}}}}},
    {"docstring: a body that is not indented has none; empty docstring is empty",
     "def d7():\n"
     "    return \"not a doc\"\n"
     "def d8():\n"
     "    \"\"\"\"\"\"\n"
     "def d9():\n"
     "\"not the doc of d9\"\n",
     {{"d7", 1, false, NULL, {{0}}}, {"d8", 3, false, "", {{0}}}, {"d9", 5, false, NULL, {{0}}}}},
    {"CRLF line endings",
     "import os\r\n"
     "\r\n"
     "def crlf(a, b=2):\r\n"
     "    \"\"\"Doc.\r\n"
     "    More.\r\n"
     "    \"\"\"\r\n"
     "    def nested(): pass\r\n"
     "def two(x): pass\r\n",
     {{"crlf", 3, false, "Doc.\nMore.", {{"a", POS, NULL, NULL}, {"b", POS, "2", NULL}}},
      {"two", 8, false, NULL, {{"x", POS, NULL, NULL}}}}},
    {"tabs: indented with tabs is not top-level",
     "def tabbed(a,\tb):\n"
     "\tdef nested(c):\n"
     "\t\tpass\n"
     "\t'''not a doc: after a statement'''\n"
     "class K:\n"
     "\tdef m(self): pass\n",
     {{"tabbed", 1, false, NULL, {{"a", POS, NULL, NULL}, {"b", POS, NULL, NULL}}}}},
    {"unicode identifiers",
     "def grüße(naïve, 名前=\"ü\"):\n"
     "    \"\"\"Grüße.\"\"\"\n",
     {{"grüße", 1, false, "Grüße.", {{"naïve", POS, NULL, NULL}, {"名前", POS, "\"ü\"", NULL}}}}},
    {"backslash continuations",
     "x = 1 + \\\n"
     "    2\n"
     "def cont(a, \\\n"
     "         b) \\\n"
     "        -> int:\n"
     "    pass\n",
     {{"cont", 3, false, NULL, {{"a", POS, NULL, NULL}, {"b", POS, NULL, NULL}}}}},
    {"PEP 695 type parameters and return annotations",
     "def first[T: (int, str)](xs: list[T], d: dict[str, T] = {}) -> T | None:\n"
     "    return xs[0]\n",
     {{"first", 1, false, NULL, {{"xs", POS, NULL, "list[T]"}, {"d", POS, "{}", "dict[str, T]"}}}}},
    {"line numbers after multi-line strings and bracketed expressions",
     "DATA = {\n"
     "    'a': '''x\n"
     "y''',\n"
     "    'b': [1,\n"
     "          2],\n"
     "}\n"
     "def late(): pass\n",
     {{"late", 7, false, NULL, {{0}}}}},
    {"unbalanced bracket: resynchronize at the next def",
     "x = foo(1,\n"
     "def ok(a): pass\n",
     {{"ok", 2, false, NULL, {{"a", POS, NULL, NULL}}}}},
    {"truncated header keeps what came before",
     "def good(a): pass\n"
     "def bad(a, b",
     {{"good", 1, false, NULL, {{"a", POS, NULL, NULL}}}}},
    {"header without colon is not recorded",
     "def nocolon(a)\n"
     "def yes(): pass\n",
     {{"yes", 2, false, NULL, {{0}}}}},
    {"UTF-8 byte order mark",
     "\xEF\xBB\xBF"
     "def bom(): pass\n",
     {{"bom", 1, false, NULL, {{0}}}}},
    {"bare star and garbage parameters",
     "def star(a, *, b): pass\n"
     "def junk(1, a, ): pass\n",
     {{"star", 1, false, NULL, {{"a", POS, NULL, NULL}, {"b", KWONLY, NULL, NULL}}},
      {"junk", 2, false, NULL, {{"a", POS, NULL, NULL}}}}},
    {"redefinition: both reported in order",
     "def dup(a): pass\n"
     "def dup(a, b): pass\n",
     {{"dup", 1, false, NULL, {{"a", POS, NULL, NULL}}},
      {"dup", 2, false, NULL, {{"a", POS, NULL, NULL}, {"b", POS, NULL, NULL}}}}},
};

/* An exactly-sized copy without a terminator: reading past len is an ASan/valgrind error. */
static char *exact_copy(const char *s, size_t n)
{
    char *p = malloc(n ? n : 1);
    assert_non_null(p);
    if (n)
        memcpy(p, s, n);
    return p;
}

static size_t count_funcs(const infer_case *c)
{
    size_t n = 0;
    while (n < sizeof c->funcs / sizeof c->funcs[0] && c->funcs[n].name)
        n++;
    return n;
}

static void expect_str(const char *label, const char *what, const char *want, const char *got)
{
    if (!want && !got)
        return;
    if (!want || !got || strcmp(want, got) != 0)
        fail_msg("%s: %s: want [%s] got [%s]", label, what, want ? want : "(null)", got ? got : "(null)");
}

static void check_case(const infer_case *c)
{
    size_t n = strlen(c->code);
    char *code = exact_copy(c->code, n);
    fb_sig_list list;
    fb_error err = {0};
    int r = fb_infer_python(code, n, &list, &err);
    free(code);
    if (r != 0)
        fail_msg("%s: returned %d (%s)", c->label, r, err.message);
    size_t nf = count_funcs(c);
    if (list.nfuncs != nf)
        fail_msg("%s: want %zu functions, got %zu", c->label, nf, list.nfuncs);
    for (size_t i = 0; i < nf; i++) {
        const xfunc *x = &c->funcs[i];
        const fb_function_sig *f = &list.funcs[i];
        expect_str(c->label, "name", x->name, f->name);
        if (f->line != x->line)
            fail_msg("%s: %s: want line %d got %d", c->label, x->name, x->line, f->line);
        if (f->is_async != x->is_async)
            fail_msg("%s: %s: is_async mismatch", c->label, x->name);
        expect_str(c->label, "doc", x->doc, f->doc);
        size_t np = 0;
        while (np < sizeof x->params / sizeof x->params[0] && x->params[np].name)
            np++;
        if (f->nparams != np)
            fail_msg("%s: %s: want %zu params, got %zu", c->label, x->name, np, f->nparams);
        for (size_t j = 0; j < np; j++) {
            const xparam *xp = &x->params[j];
            const fb_param *p = &f->params[j];
            expect_str(c->label, "param name", xp->name, p->name);
            if (p->kind != xp->kind)
                fail_msg("%s: %s.%s: want kind %d got %d", c->label, x->name, xp->name, (int)xp->kind, (int)p->kind);
            if (p->has_default != (xp->def != NULL))
                fail_msg("%s: %s.%s: has_default mismatch", c->label, x->name, xp->name);
            expect_str(c->label, "default", xp->def, p->default_text);
            expect_str(c->label, "annotation", xp->ann, p->annotation);
            if (p->keys || p->nkeys)
                fail_msg("%s: %s.%s: python params have no keys", c->label, x->name, xp->name);
        }
    }
    fb_sig_list_free(&list);
}

static void test_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_case(&cases[i]);
}

static void test_find(void **state)
{
    (void)state;
    const char *src = "def a(): pass\ndef b(x): pass\ndef a(y, z): pass\n";
    fb_sig_list list;
    fb_error err = {0};
    assert_int_equal(fb_infer_python(src, strlen(src), &list, &err), 0);
    const fb_function_sig *a = fb_sig_list_find(&list, "a");
    assert_non_null(a);
    assert_int_equal(a->nparams, 2); /* the later definition is the one Python calls */
    assert_non_null(fb_sig_list_find(&list, "b"));
    assert_null(fb_sig_list_find(&list, "c"));
    assert_null(fb_sig_list_find(&list, NULL));
    assert_null(fb_sig_list_find(NULL, "a"));
    fb_sig_list_free(&list);
    fb_sig_list_free(&list); /* idempotent */
    assert_int_equal(fb_infer_python(NULL, 0, &list, &err), 0);
    assert_int_equal(list.nfuncs, 0);
    fb_sig_list_free(&list);
}

/* ---- fuzz-style robustness ---- */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint32_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 16);
}

/* Runs inference on s[0..n) and checks the invariants every result must keep. */
static size_t infer_and_check(const char *s, size_t n)
{
    char *code = exact_copy(s, n);
    fb_sig_list list;
    fb_error err = {0};
    assert_int_equal(fb_infer_python(code, n, &list, &err), 0);
    int lines = 1;
    for (size_t i = 0; i < n; i++)
        lines += s[i] == '\n';
    for (size_t i = 0; i < list.nfuncs; i++) {
        const fb_function_sig *f = &list.funcs[i];
        assert_non_null(f->name);
        assert_true(f->name[0] != '\0');
        assert_true(f->line >= 1 && f->line <= lines);
        for (size_t j = 0; j < f->nparams; j++) {
            assert_non_null(f->params[j].name);
            assert_true(f->params[j].has_default == (f->params[j].default_text != NULL));
        }
    }
    free(code);
    size_t nfuncs = list.nfuncs;
    fb_sig_list_free(&list);
    return nfuncs;
}

static void test_prefixes_and_mutations(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *s = cases[i].code;
        size_t n = strlen(s);
        for (size_t k = 0; k <= n; k++)
            infer_and_check(s, k);
        char *m = exact_copy(s, n);
        for (int round = 0; round < 40 && n > 0; round++) {
            memcpy(m, s, n);
            for (int f = 0; f < 3; f++)
                m[rnd() % n] = (char)(rnd() & 0xFF);
            infer_and_check(m, n);
        }
        free(m);
    }
}

static void test_garbage(void **state)
{
    (void)state;
    static const char *const frags[] = {"def ", "async ", "def f(", "(", ")", "[", "]", "{", "}", ",", ":", "=",
                                        "*", "**", "/", "'", "\"", "'''", "\"\"\"", "\\", "\\\n", "\n", "\r\n",
                                        "    ", "\t", "#", "@", "lambda ", "r", "b", "f", "x", "->", "\xC3\xA9",
                                        "\xFF", "\0", " ", "\"\"\"doc\"\"\"", "class C:"};
    char buf[512];
    for (int iter = 0; iter < 4000; iter++) {
        size_t n = 0, want = rnd() % sizeof buf;
        while (n < want) {
            if (rnd() % 4 == 0) {
                buf[n++] = (char)(rnd() & 0xFF);
                continue;
            }
            const char *f = frags[rnd() % (sizeof frags / sizeof frags[0])];
            size_t fl = f[0] ? strlen(f) : 1;
            if (n + fl > want)
                break;
            memcpy(buf + n, f, fl);
            n += fl;
        }
        infer_and_check(buf, n);
    }
}

static void test_pathological(void **state)
{
    (void)state;
    size_t n = 200000;
    char *s = malloc(n);
    assert_non_null(s);
    memset(s, '(', n);
    infer_and_check(s, n);
    memcpy(s, "def f(", 6);
    infer_and_check(s, n);
    memset(s, '\\', n);
    infer_and_check(s, n);
    memset(s, '\'', n);
    infer_and_check(s, n);
    for (size_t i = 0; i + 15 <= n; i += 15)
        memcpy(s + i, "def f(a): pass\n", 15);
    assert_int_equal(infer_and_check(s, n - n % 15), FB_SIG_MAX_FUNCS); /* capped, not an error */
    free(s);
}

/* A function with more than FB_SIG_MAX_PARAMS parameters is not reported (a truncated signature would make
 * argument checks wrong); the scan carries on after it. */
static void test_param_cap(void **state)
{
    (void)state;
    size_t cap = 16 * (FB_SIG_MAX_PARAMS + 10) + 64;
    char *s = malloc(cap);
    assert_non_null(s);
    int n = snprintf(s, cap, "def big(");
    for (int i = 0; i < FB_SIG_MAX_PARAMS + 1; i++)
        n += snprintf(s + n, cap - (size_t)n, "p%d, ", i);
    n += snprintf(s + n, cap - (size_t)n, "): pass\ndef small(x): pass\n");
    fb_sig_list list;
    fb_error err = {0};
    assert_int_equal(fb_infer_python(s, (size_t)n, &list, &err), 0);
    assert_int_equal(list.nfuncs, 1);
    assert_string_equal(list.funcs[0].name, "small");
    fb_sig_list_free(&list);

    /* exactly at the cap is fine */
    n = snprintf(s, cap, "def big(");
    for (int i = 0; i < FB_SIG_MAX_PARAMS; i++)
        n += snprintf(s + n, cap - (size_t)n, "p%d, ", i);
    n += snprintf(s + n, cap - (size_t)n, "): pass\ndef small(x): pass\n");
    assert_int_equal(fb_infer_python(s, (size_t)n, &list, &err), 0);
    assert_int_equal(list.nfuncs, 2);
    assert_int_equal(list.funcs[0].nparams, FB_SIG_MAX_PARAMS);
    fb_sig_list_free(&list);
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_find),
        cmocka_unit_test(test_prefixes_and_mutations),
        cmocka_unit_test(test_garbage),
        cmocka_unit_test(test_pathological),
        cmocka_unit_test(test_param_cap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
