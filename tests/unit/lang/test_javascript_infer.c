/* JavaScript signature inference: a table of tricky sources and the exact signatures expected from each, then
 * a fuzz-style pass (garbage, truncated prefixes, mutations, deep template nesting) that must never crash,
 * overrun or leak. Sources are copied into exactly-sized heap buffers with no NUL terminator. */
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
#define REST FB_PARAM_VAR_POSITIONAL
#define DES FB_PARAM_DESTRUCTURED

static const infer_case cases[] = {
    {"empty input", "", {{0}}},
    {"only comments", "// function a(x) {}\n/* function b(y) {} */\n/** function c() {} */\n", {{0}}},
    {"seed calculate",
     "function calculate(a, b, options = {}) {\n  return (a + b) * (options.multiplier || 1);\n}\n",
     {{"calculate", 1, false, NULL, {{"a", POS, NULL, NULL}, {"b", POS, NULL, NULL}, {"options", POS, "{}", NULL}}}}},
    {"fakes in strings, comments, templates and regexes",
     "const s1 = \"function fake1(a) {}\";\n"
     "const s2 = 'function fake2(b) { \\' }';\n"
     "// function fake3(c) {}\n"
     "/* function fake4(d) {} */\n"
     "const t = `function fake5(e) {} ${ { k: `function fake6(f) {}` }.k } }{ ${\"}\"} ${'`'}`;\n"
     "const r1 = /function fake7\\(g\\) {/g;\n"
     "const r2 = /[/{]function fake8(h) {/;\n"
     "function real(x) {}\n",
     {{"real", 8, false, NULL, {{"x", POS, NULL, NULL}}}}},
    {"nested functions, class methods, object literals and call sites",
     "function outer(a) {\n"
     "  function inner(b) { function innermost(c) {} }\n"
     "  const arrowInner = (d) => d;\n"
     "  return inner;\n"
     "}\n"
     "class K extends Base {\n"
     "  constructor(x) { super(x); }\n"
     "  method(y) {}\n"
     "  static s(z) {}\n"
     "  async am() {}\n"
     "}\n"
     "const obj = { m(a) {}, f: function (b) {}, g: (c) => c };\n"
     "foo(1, 2);\n"
     "foo(function cb(err) {});\n"
     "(function iife(q) { function hidden() {} })();\n"
     "x = function assigned(a) {};\n"
     "module.exports = function exported(b) {};\n"
     "function after() {}\n",
     {{"outer", 1, false, NULL, {{"a", POS, NULL, NULL}}}, {"after", 18, false, NULL, {{0}}}}},
    {"async, generator and async generator functions",
     "async function a1(x) {}\n"
     "function* g1(y) {}\n"
     "function *g2() {}\n"
     "async function* ag(z) {}\n",
     {{"a1", 1, true, NULL, {{"x", POS, NULL, NULL}}},
      {"g1", 2, false, NULL, {{"y", POS, NULL, NULL}}},
      {"g2", 3, false, NULL, {{0}}},
      {"ag", 4, true, NULL, {{"z", POS, NULL, NULL}}}}},
    {"exports",
     "export function e1(a) {}\n"
     "export async function e2(b) {}\n"
     "export default function e3(c = 1) {}\n"
     "export const e4 = (d) => d;\n"
     "export default function (anonymous) {}\n"
     "export { e1 as other };\n",
     {{"e1", 1, false, NULL, {{"a", POS, NULL, NULL}}},
      {"e2", 2, true, NULL, {{"b", POS, NULL, NULL}}},
      {"e3", 3, false, NULL, {{"c", POS, "1", NULL}}},
      {"e4", 4, false, NULL, {{"d", POS, NULL, NULL}}}}},
    {"const/let/var function and arrow forms",
     "const f1 = function (a) {};\n"
     "let f2 = async function named(b) {};\n"
     "var f3 = (c, d = 2) => c + d;\n"
     "const f4 = async (e) => { await e; };\n"
     "const f5 = x => x * 2;\n"
     "const f6 = async y => y;\n"
     "const f7 = async => async;\n"
     "const f8 = function* () {};\n",
     {{"f1", 1, false, NULL, {{"a", POS, NULL, NULL}}},
      {"f2", 2, true, NULL, {{"b", POS, NULL, NULL}}},
      {"f3", 3, false, NULL, {{"c", POS, NULL, NULL}, {"d", POS, "2", NULL}}},
      {"f4", 4, true, NULL, {{"e", POS, NULL, NULL}}},
      {"f5", 5, false, NULL, {{"x", POS, NULL, NULL}}},
      {"f6", 6, true, NULL, {{"y", POS, NULL, NULL}}},
      {"f7", 7, false, NULL, {{"async", POS, NULL, NULL}}},
      {"f8", 8, false, NULL, {{0}}}}},
    {"several declarators in one statement",
     "const a = 1, f = (x) => x, [b, c] = [1, 2], g = function (y, z = [1, 2]) {};\n"
     "export let h = async (u) => u,\n  /** doc */\n  i = v => v\n"
     "j = (w) => w, k = 2\n"
     "var m = 0; n = (q) => q;\n",
     {{"f", 1, false, NULL, {{"x", POS, NULL, NULL}}},
      {"g", 1, false, NULL, {{"y", POS, NULL, NULL}, {"z", POS, "[1, 2]", NULL}}},
      {"h", 2, true, NULL, {{"u", POS, NULL, NULL}}},
      {"i", 4, false, "doc", {{"v", POS, NULL, NULL}}}}},
    {"const values that are not functions",
     "const n1 = (1 + 2);\n"
     "const n2 = (a, b);\n"
     "const n3 = foo(x => x);\n"
     "const n4 = async(1);\n"
     "let n5;\n"
     "const { d1, d2 } = obj;\n"
     "const n6 = cond ? function () {} : null;\n"
     "obj.var = function (z) {};\n",
     {{0}}},
    {"rest, defaults and destructuring patterns",
     "function d({a, b = 1, c: renamed, 'd-e': de, [k]: comp, ...others}, [x, y] = [], {z} = {}, ...rest) {}\n",
     {{"d",
       1,
       false,
       NULL,
       {{"$0", DES, NULL, "a,b,c,d-e"}, {"$1", DES, "[]", NULL}, {"$2", DES, "{}", "z"}, {"rest", REST, NULL, NULL}}}}},
    {"nested patterns, complex defaults, trailing comma",
     "function n({a: {b, c}, d = {e: 1}} = {}, f = (g, h) => [g, h], i = `t${j}`, k = /,\\)/,) {}\n",
     {{"n",
       1,
       false,
       NULL,
       {{"$0", DES, "{}", "a,d"},
        {"f", POS, "(g, h) => [g, h]", NULL},
        {"i", POS, "`t${j}`", NULL},
        {"k", POS, "/,\\)/", NULL}}}}},
    {"empty object pattern and rest pattern",
     "function e({}, ...[first]) {}\n",
     {{"e", 1, false, NULL, {{"$0", DES, NULL, ""}, {"$1", REST, NULL, NULL}}}}},
    {"multi-line parameters with comments",
     "function multi(\n"
     "  a, // the first\n"
     "  /* second */ b = {\n"
     "    x: 1,\n"
     "  },\n"
     "  ...rest\n"
     ") {}\n",
     {{"multi",
       1,
       false,
       NULL,
       {{"a", POS, NULL, NULL}, {"b", POS, "{\n    x: 1,\n  }", NULL}, {"rest", REST, NULL, NULL}}}}},
    {"doc comments",
     "/**\n"
     " * Adds two numbers.\n"
     " *\n"
     " * @param {number} a\n"
     " */\n"
     "function add(a, b) {}\n"
     "\n"
     "// Line doc one\n"
     "//   indented two\n"
     "async function lines() {}\n"
     "\n"
     "/** detached by a blank line */\n"
     "\n"
     "function detached() {}\n"
     "/* plain block: not a doc */\n"
     "function plain() {}\n"
     "const v = 1; // trailing, about v\n"
     "function afterTrailing() {}\n"
     "/** one-liner */ const arrow = () => 1;\n"
     "// first block\n"
     "\n"
     "// second block\n"
     "export function exp() {}\n",
     {{"add", 6, false, "Adds two numbers.\n\n@param {number} a", {{"a", POS, NULL, NULL}, {"b", POS, NULL, NULL}}},
      {"lines", 10, true, "Line doc one\n  indented two", {{0}}},
      {"detached", 14, false, NULL, {{0}}},
      {"plain", 16, false, NULL, {{0}}},
      {"afterTrailing", 18, false, NULL, {{0}}},
      {"arrow", 19, false, "one-liner", {{0}}},
      {"exp", 23, false, "second block", {{0}}}}},
    {"regex versus division",
     "const q = a / b / c; function afterDiv(z) {}\n"
     "const w = (x) / 2; function afterParenDiv() {}\n"
     "function ret() { return /}/.test(s) }\n"
     "function tyof() { return typeof /{/ }\n"
     "const cls = /[/]{/; function afterClass() {}\n"
     "const esc = /\\/{/; function afterEsc() {}\n",
     {{"afterDiv", 1, false, NULL, {{"z", POS, NULL, NULL}}},
      {"afterParenDiv", 2, false, NULL, {{0}}},
      {"ret", 3, false, NULL, {{0}}},
      {"tyof", 4, false, NULL, {{0}}},
      {"afterClass", 5, false, NULL, {{0}}},
      {"afterEsc", 6, false, NULL, {{0}}}}},
    {"template literals with nested braces, strings and templates",
     "const t1 = `a ${ {x: `b ${ (() => { return '}'; })() } c`}.x } d`;\n"
     "const t2 = `multi\n"
     "line ${ 1 }\n"
     "function notReal() {}\n"
     "`;\n"
     "function afterTemplates(a) {}\n",
     {{"afterTemplates", 6, false, NULL, {{"a", POS, NULL, NULL}}}}},
    {"statement starts and automatic semicolon insertion",
     "const a = 1\n"
     "function asi1() {}\n"
     "let b = foo()\n"
     "function asi2() {}\n"
     "x = y; function afterSemi() {}\n"
     "if (ok) { function inBlock() {} }\n"
     "const c = d ?\n"
     "  function notStmt() {} : null\n",
     {{"asi1", 2, false, NULL, {{0}}}, {"asi2", 4, false, NULL, {{0}}}, {"afterSemi", 5, false, NULL, {{0}}}}},
    {"unicode identifiers",
     "function grüße(naïve, 名前 = 'ü') {}\n"
     "const ƒ = (π) => π;\n"
     "function $dollar(_u, $v) {}\n",
     {{"grüße", 1, false, NULL, {{"naïve", POS, NULL, NULL}, {"名前", POS, "'ü'", NULL}}},
      {"ƒ", 2, false, NULL, {{"π", POS, NULL, NULL}}},
      {"$dollar", 3, false, NULL, {{"_u", POS, NULL, NULL}, {"$v", POS, NULL, NULL}}}}},
    {"CRLF line endings and tabs",
     "// Doc line\r\n"
     "function crlf(a,\tb = 2)\t{\r\n"
     "\tfunction nested() {}\r\n"
     "}\r\n"
     "\r\n"
     "const\tt = (x) =>\tx;\r\n",
     {{"crlf", 2, false, "Doc line", {{"a", POS, NULL, NULL}, {"b", POS, "2", NULL}}},
      {"t", 6, false, NULL, {{"x", POS, NULL, NULL}}}}},
    {"hashbang and byte order mark",
     "\xEF\xBB\xBF#!/usr/bin/env node\n"
     "function main(argv) {}\n",
     {{"main", 2, false, NULL, {{"argv", POS, NULL, NULL}}}}},
    {"truncated input keeps what came before",
     "function good(a) {}\n"
     "function bad(a, b",
     {{"good", 1, false, NULL, {{"a", POS, NULL, NULL}}}}},
    {"unterminated string and regex end at the line",
     "const s = 'oops\n"
     "function one() {}\n"
     "const r = /oops\n"
     "function two() {}\n",
     {{"one", 2, false, NULL, {{0}}}, {"two", 4, false, NULL, {{0}}}}},
};

/* xparam.extra is the object pattern's keys joined with ',' ("" = an object pattern without names). */
static void expect_keys(const char *label, const xparam *xp, const fb_param *p)
{
    if (!xp->extra) {
        if (p->keys || p->nkeys)
            fail_msg("%s: %s: want no keys", label, xp->name);
        return;
    }
    if (!p->keys)
        fail_msg("%s: %s: want keys [%s], got NULL", label, xp->name, xp->extra);
    char joined[256] = "";
    for (size_t k = 0; k < p->nkeys; k++) {
        if (k)
            strncat(joined, ",", sizeof joined - strlen(joined) - 1);
        strncat(joined, p->keys[k], sizeof joined - strlen(joined) - 1);
    }
    expect_str(label, "keys", xp->extra, joined);
}

static void check_javascript_param(const char *label, const xfunc *x, const xparam *xp, const fb_param *p)
{
    if (p->annotation)
        fail_msg("%s: %s.%s: js params have no annotation", label, x->name, xp->name);
    expect_keys(label, xp, p);
}

/* ---- fuzz-style robustness ---- */

static const char *const frags[] = {"function ", "async ", "const f = ", "=>", "(", ")", "[", "]", "{", "}",
                                    ",", "=", "...", "/", "/*", "*/", "//", "/**", "'", "\"", "`", "${",
                                    "\\", "\n", "\r\n", "\t", " ", "x", "return ", "export ", "default ",
                                    "\xC3\xA9", "\xFF", "\0", ";", "*", "[/", "1", ".", "?."};

/* Deeply nested `${`...`}` recurses in the lexer: past FB_SCAN_MAX_NESTING the scan stops instead of
 * exhausting the stack. Long runs of brackets must not recurse at all. */
static void test_pathological(void **state)
{
    static const repeated_input inputs[] = {{"", "`${"}, {"", "{"}, {"", "/"}, {"", "`"}};
    check_long_inputs(*state, inputs, sizeof inputs / sizeof inputs[0], "function f(a) {}\n ");

    /* within the cap, nesting is followed correctly */
    const char *ok = "const t = `${`${`${`${'}'}`}`}`}`;\nfunction after(a) {}\n";
    fb_sig_list list;
    fb_error err = {0};
    assert_int_equal(fb_infer_javascript(ok, strlen(ok), &list, &err), 0);
    assert_int_equal(list.nfuncs, 1);
    assert_string_equal(list.funcs[0].name, "after");
    fb_sig_list_free(&list);
}

static infer_suite suite = {
    .infer = fb_infer_javascript,
    .check_param = check_javascript_param,
    .cases = cases,
    .ncases = sizeof cases / sizeof cases[0],
    /* hoisting: the later declaration wins */
    .find_src = "function a() {}\nconst b = (x) => x;\nfunction a(y, z) {}\n",
    .frags = frags,
    .nfrags = sizeof frags / sizeof frags[0],
    .cap_head = "function big(",
    .cap_tail = "  ) { function inner(q) {} }\nfunction small(x) {}\n",
    .rng = 0x2545F4914F6CDD1Dull,
    .test_pathological = test_pathological,
};

int main(void)
{
    return run_infer_tests(&suite);
}
