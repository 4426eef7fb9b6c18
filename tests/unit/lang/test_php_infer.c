/* PHP signature inference: a table of tricky sources and the exact signatures expected from each, then a
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
#define VARPOS FB_PARAM_VAR_POSITIONAL

static const infer_case cases[] = {
    {"empty input", "", {{0}}},
    {"seed add, no tag", "function add($a, $b = 2) { return $a + $b; }",
     {{"add", 1, false, NULL, {{"a", POS, NULL, NULL}, {"b", POS, "2", NULL}}}}},
    {"with tag and leading html",
     "<html>function fake($x) {}\n<?php\nfunction real(int $x, ?string $y = null, int|string $z = [1, 2]) {}\n",
     {{"real", 3, false, NULL, {{"x", POS, NULL, "int"}, {"y", POS, "null", "?string"}, {"z", POS, "[1, 2]", "int|string"}}}}},
    {"fakes in comments and strings",
     "<?php\n// function c1($a) {}\n# function c2($a) {}\n/* function c3($a) {} */\n"
     "$s = 'function s1($a) {}';\n$t = \"function s2($a) {$b[\"}\"]}\";\n"
     "$h = <<<EOT\nfunction h1($a) {}\n  EOT;\n$n = <<<'NOW'\nfunction h2($a) {}\nNOW;\n"
     "$b = `function b1($a) {}`;\nfunction real($x) {}\n",
     {{"real", 14, false, NULL, {{"x", POS, NULL, NULL}}}}},
    {"inline html between tags",
     "<?php function a() {} ?>\nfunction fake($q) {}\n<?php function b($z) {}\n",
     {{"a", 1, false, NULL, {{0}}}, {"b", 3, false, NULL, {{"z", POS, NULL, NULL}}}}},
    {"nested functions, methods, closures and arrow fns",
     "function outer($a) {\n  function inner($b) {}\n  $c = function ($x) { return $x; };\n  return fn($y) => $y;\n}\n"
     "class C {\n  public function method($m) {}\n  static function st() {}\n}\n"
     "$o = new class { function anon() {} };\ninterface I { function i1($x); }\ntrait T { function t1() {} }\n"
     "enum E: string { case A = 'a'; function label() {} }\nfunction after() {}\n",
     {{"outer", 1, false, NULL, {{"a", POS, NULL, NULL}}}, {"after", 14, false, NULL, {{0}}}}},
    {"conditional top-level function counts",
     "if (!function_exists('g')) {\n    function g($x) {}\n}\nnamespace Foo {\n function h() {}\n}\n",
     {{"g", 2, false, NULL, {{"x", POS, NULL, NULL}}}, {"h", 5, false, NULL, {{0}}}}},
    {"alternative syntax and case labels",
     "if (PHP_VERSION_ID > 80000):\n    function alt($a) {}\nendif;\nswitch (1) { case 1: function in_case($b) {} }\n"
     "$x = Foo::function();\n$y = $o->function;\n$z = $o?->function;\n",
     {{"alt", 2, false, NULL, {{"a", POS, NULL, NULL}}}, {"in_case", 4, false, NULL, {{"b", POS, NULL, NULL}}}}},
    {"__halt_compiler ends the code",
     "function before($a) {}\n$x->__halt_compiler;\n__HALT_COMPILER();\nfunction after($b) {}\n",
     {{"before", 1, false, NULL, {{"a", POS, NULL, NULL}}}}},
    {"call sites, use function, member names",
     "f($a);\nuse function Foo\\bar;\n$x->function($y);\nFoo::function();\n$function = 1;\nfunction real() {}\n",
     {{"real", 6, false, NULL, {{0}}}}},
    {"by-reference, variadic, attributes, promoted, by-ref function",
     "function &refs(&$a, int &$b, #[SensitiveParameter] string $pw, public readonly int $x = 0, "
     "#[A(1, [2])] int ...$rest) {}\n",
     {{"refs", 1, false, NULL,
       {{"a", POS, NULL, NULL}, {"b", POS, NULL, "int"}, {"pw", POS, NULL, "string"}, {"x", POS, "0", "int"},
        {"rest", VARPOS, NULL, "int"}}}}},
    {"intersection types are not by-reference",
     "function i(Countable&Traversable $a, A & B &$b, (A&B)|null ...$c) {}\n",
     {{"i", 1, false, NULL,
       {{"a", POS, NULL, "Countable&Traversable"}, {"b", POS, NULL, "A & B"}, {"c", VARPOS, NULL, "(A&B)|null"}}}}},
    {"a default before a required parameter is not one",
     "function legacy($a = 1, ?int $b = null, $c, $d = 2, ...$e) {}\n",
     {{"legacy", 1, false, NULL,
       {{"a", POS, NULL, NULL}, {"b", POS, NULL, "?int"}, {"c", POS, NULL, NULL}, {"d", POS, "2", NULL},
        {"e", VARPOS, NULL, NULL}}}}},
    {"defaults with commas, parens and strings",
     "function d($a = array(1, 2), $b = ['x' => ',', 'y' => \")\"], $c = PHP_INT_MAX, $d = new Foo(1, 2),) {}\n",
     {{"d", 1, false, NULL,
       {{"a", POS, "array(1, 2)", NULL}, {"b", POS, "['x' => ',', 'y' => \")\"]", NULL}, {"c", POS, "PHP_INT_MAX", NULL},
        {"d", POS, "new Foo(1, 2)", NULL}}}}},
    {"docblock right above, attributes between",
     "/**\n * Adds numbers.\n *\n * @param int $a\n */\n#[Pure]\nfunction add($a) {}\n/** not mine */\n$x = 1;\n"
     "function nodoc() {}\n",
     {{"add", 7, false, "Adds numbers.\n\n@param int $a", {{"a", POS, NULL, NULL}}}, {"nodoc", 10, false, NULL, {{0}}}}},
    {"case-insensitive keyword, unicode names, multi-line params",
     "FUNCTION Gr\xC3\xBC\xC3\x9F(\n  $n\xC3\xA4me,\n  // comment, with comma\n  $b = 1 /* c */\n) {}\n",
     {{"Gr\xC3\xBC\xC3\x9F", 1, false, NULL, {{"n\xC3\xA4me", POS, NULL, NULL}, {"b", POS, "1 /* c */", NULL}}}}},
    {"malformed parameter drops the function",
     "function bad($a $b) {}\nfunction bad2(,) {}\nfunction ok($a) {}\n",
     {{"ok", 3, false, NULL, {{"a", POS, NULL, NULL}}}}},
    {"unterminated constructs never overrun", "function f($a = 'unterminated", {{0}}},
    {"comment ends at ?>",
     "<?php // function fake() {} ?>\n<?php function real() {}\n",
     {{"real", 2, false, NULL, {{0}}}}},
};

/* xparam.extra is the expected type declaration (annotation). */
static void check_php_param(const char *label, const xfunc *x, const xparam *xp, const fb_param *p)
{
    expect_str(label, "annotation", xp->extra, p->annotation);
    if (p->keys || p->nkeys)
        fail_msg("%s: %s.%s: php params have no keys", label, x->name, xp->name);
}

static const char *const frags[] = {"function ", "function f(", "fn(", "(", ")", "[", "]", "{", "}", ",", "=",
                                    "$a", "&", "...", "?int ", "'", "\"", "`", "\\", "\n", "<<<EOT\n", "EOT",
                                    "<<<'X'\n", "X;", "?>", "<?php ", "#", "#[A]", "//", "/*", "*/", "/** d */",
                                    "{$", "class C ", "\xC3\xA9", "\xFF", "\0", " ", ";"};

static void test_pathological(void **state)
{
    static const repeated_input inputs[] = {{"", "{"}, {"", "}"}, {"function f(", "("}, {"", "\""},
                                            {"\"", "{$a[\""}, {"", "<<<A\n"}, {"", "?><?php "}};
    check_long_inputs(*state, inputs, sizeof inputs / sizeof inputs[0], "function f($a) {}\n");
}

static infer_suite suite = {
    .infer = fb_infer_php,
    .check_param = check_php_param,
    .cases = cases,
    .ncases = sizeof cases / sizeof cases[0],
    .find_src = "function a() {}\nfunction b($x) {}\nfunction a($y, $z) {}\n",
    .frags = frags,
    .nfrags = sizeof frags / sizeof frags[0],
    .cap_head = "function big(",
    .cap_tail = "$last) {}\nfunction small($x) {}\n",
    .rng = 0xD1B54A32D192ED03ull,
    .test_pathological = test_pathological,
};

int main(void)
{
    (void)run_infer_tests; /* the shared runner includes test_param_cap */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_prestate(test_table, &suite),
        cmocka_unit_test_prestate(test_find, &suite),
        cmocka_unit_test_prestate(test_prefixes_and_mutations, &suite),
        cmocka_unit_test_prestate(test_garbage, &suite),
        {"test_pathological", test_pathological, NULL, NULL, &suite},
        /* test_param_cap writes parameters without `$`, which PHP never accepts: not run here */
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
