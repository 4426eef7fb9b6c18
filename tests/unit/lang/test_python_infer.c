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

#include "infer_testlib.h"
#include "lang/signature.h"
#include "lang/source_scan.h"

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

/* xparam.extra is the expected annotation. */
static void check_python_param(const char *label, const xfunc *x, const xparam *xp, const fb_param *p)
{
    expect_str(label, "annotation", xp->extra, p->annotation);
    if (p->keys || p->nkeys)
        fail_msg("%s: %s.%s: python params have no keys", label, x->name, xp->name);
}

/* ---- fuzz-style robustness ---- */

static const char *const frags[] = {"def ", "async ", "def f(", "(", ")", "[", "]", "{", "}", ",", ":", "=",
                                    "*", "**", "/", "'", "\"", "'''", "\"\"\"", "\\", "\\\n", "\n", "\r\n",
                                    "    ", "\t", "#", "@", "lambda ", "r", "b", "f", "x", "->", "\xC3\xA9",
                                    "\xFF", "\0", " ", "\"\"\"doc\"\"\"", "class C:"};

static void test_pathological(void **state)
{
    static const repeated_input inputs[] = {{"", "("}, {"def f(", "("}, {"", "\\"}, {"", "'"}};
    check_long_inputs(*state, inputs, sizeof inputs / sizeof inputs[0], "def f(a): pass\n");
}

static infer_suite suite = {
    .infer = fb_infer_python,
    .check_param = check_python_param,
    .cases = cases,
    .ncases = sizeof cases / sizeof cases[0],
    /* the later definition is the one Python calls */
    .find_src = "def a(): pass\ndef b(x): pass\ndef a(y, z): pass\n",
    .frags = frags,
    .nfrags = sizeof frags / sizeof frags[0],
    .cap_head = "def big(",
    .cap_tail = "): pass\ndef small(x): pass\n",
    .rng = 0x9E3779B97F4A7C15ull,
    .test_pathological = test_pathological,
};

int main(void)
{
    return run_infer_tests(&suite);
}
