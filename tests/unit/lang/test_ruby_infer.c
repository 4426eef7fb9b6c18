/* Ruby signature inference: a table of tricky sources and the exact signatures expected from each, then the
 * shared fuzz-style passes (prefixes, mutations, garbage, pathological repetitions, the parameter cap) that
 * must never crash, overrun or leak. Sources are copied into exactly-sized heap buffers (infer_testlib.h). */
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
#define KWONLY FB_PARAM_KEYWORD_ONLY
#define VARPOS FB_PARAM_VAR_POSITIONAL
#define VARKW FB_PARAM_VAR_KEYWORD

static const infer_case cases[] = {
    {"empty input", "", {{0}}},
    {"only comments", "# def nope(a)\n\n   # def another\n", {{0}}},
    {"seed greet",
     "def greet(name, greeting = \"Hello\")\n  \"#{greeting}, #{name}!\"\nend\n",
     {{"greet", 1, false, NULL, {{"name", POS, NULL, NULL}, {"greeting", POS, "\"Hello\"", NULL}}}}},
    {"every parameter kind",
     "def all(a, b = 2, *rest, c, k:, j: {x: 1}, **opts, &blk)\nend\n",
     {{"all", 1, false, NULL,
       {{"a", POS, NULL, NULL},
        {"b", POS, "2", NULL},
        {"rest", VARPOS, NULL, NULL},
        {"c", POS, NULL, NULL},
        {"k", KWONLY, NULL, NULL},
        {"j", KWONLY, "{x: 1}", NULL},
        {"opts", VARKW, NULL, NULL}}}}},
    {"regexps and character literals in defaults",
     "def lit(pat = /a,\\(b/i, sep = ?,, q = ?\", half = n / 2, t = x ? 1 : 2, k: /x,y/)\nend\n",
     {{"lit", 1, false, NULL,
       {{"pat", POS, "/a,\\(b/i", NULL},
        {"sep", POS, "?,", NULL},
        {"q", POS, "?\"", NULL},
        {"half", POS, "n / 2", NULL},
        {"t", POS, "x ? 1 : 2", NULL},
        {"k", KWONLY, "/x,y/", NULL}}}}},
    {"anonymous splats, forwarding and **nil",
     "def anon(*, **, &)\nend\n"
     "def fwd(...)\n  other(...)\nend\n"
     "def nokw(a, **nil)\nend\n",
     {{"anon", 1, false, NULL, {{"*", VARPOS, NULL, NULL}, {"**", VARKW, NULL, NULL}}},
      {"fwd", 3, false, NULL, {{"...", VARPOS, NULL, NULL}, {"...", VARKW, NULL, NULL}}},
      {"nokw", 6, false, NULL, {{"a", POS, NULL, NULL}}}}},
    {"no parentheses, endless defs, predicates",
     "def bare a, b = 1\n  a\nend\n"
     "def sq(x) = x * x\n"
     "def answer = 42\n"
     "def ok?(v) = !v.nil?\n"
     "def none\nend\n",
     {{"bare", 1, false, NULL, {{"a", POS, NULL, NULL}, {"b", POS, "1", NULL}}},
      {"sq", 4, false, NULL, {{"x", POS, NULL, NULL}}},
      {"answer", 5, false, NULL, {{0}}},
      {"ok?", 6, false, NULL, {{"v", POS, NULL, NULL}}},
      {"none", 7, false, NULL, {{0}}}}},
    {"def self. is top-level; other receivers, setters and operators are not",
     "def self.s(a)\nend\n"
     "def obj.o(b)\nend\n"
     "def x=(v)\nend\n"
     "def +(o)\nend\n"
     "def [](i) = i\n"
     "def after(z)\nend\n",
     {{"s", 1, false, NULL, {{"a", POS, NULL, NULL}}}, {"after", 10, false, NULL, {{"z", POS, NULL, NULL}}}}},
    {"nested defs, classes, modules and blocks are not top-level",
     "def outer(a)\n"
     "  def inner(b)\n  end\n"
     "  [1].each do |x|\n    def in_block(c); end\n  end\n"
     "end\n"
     "class C < Base\n  def method(x)\n  end\n  class << self\n    def cm(y) = y\n  end\nend\n"
     "module M\n  def self.mm(z)\n  end\nend\n"
     "foo { def braced(q) end }\n"
     "def after() end\n",
     {{"outer", 1, false, NULL, {{"a", POS, NULL, NULL}}}, {"after", 20, false, NULL, {{0}}}}},
    {"modifiers do not open blocks, statements do",
     "def m(a)\n"
     "  return 1 if a\n"
     "  x = if a then 2 else 3 end\n"
     "  y = 5 unless a\n"
     "  i += 1 while i < 3\n"
     "  while i < 10 do i += 1 end\n"
     "  until i > 20\n    i += 1\n  end\n"
     "  for v in [1, 2] do p v end\n"
     "  begin\n    z\n  rescue => e\n    nil\n  end while false\n"
     "  case a\n  when 1 then :one\n  end\n"
     "  puts(if a then 1 end)\n"
     "end\n"
     "def n(b)\nend\n",
     {{"m", 1, false, NULL, {{"a", POS, NULL, NULL}}}, {"n", 21, false, NULL, {{"b", POS, NULL, NULL}}}}},
    {"fakes in strings, symbols, labels, method names",
     "s = 'def fake1(a)'\n"
     "t = \"def fake2(#{\"}\"} end end\"\n"
     "u = %q{def fake3(c) {nested} end}\n"
     "v = %w[def fake4 end]\n"
     "w = %Q(end #{x.end} (def fake5))\n"
     "r = /def fake6 end/i\n"
     "sy = [:end, :def, :\"end\", :class]\n"
     "h = {end: 1, if: 2, class: 3, def: 4}\n"
     "o = obj.class.end.if\n"
     "c = ?'\n"
     "g = $'\n"
     "def real(x)\nend\n",
     {{"real", 12, false, NULL, {{"x", POS, NULL, NULL}}}}},
    {"heredocs",
     "a = <<~EOS\n  def fake1(a)\n  end\n  EOS\n"
     "b = <<-'RAW' + <<EOT\n def fake2(b)\n RAW\ndef fake3 #{x}\nEOT\n"
     "puts <<~\"Q\"\n  end\n  Q\n"
     "def real(y)\nend\n"
     "x = 1 << 2\n"
     "def after(z)\nend\n",
     {{"real", 13, false, NULL, {{"y", POS, NULL, NULL}}}, {"after", 16, false, NULL, {{"z", POS, NULL, NULL}}}}},
    {"=begin blocks and __END__",
     "=begin\ndef fake(a)\nend\n=end\n"
     "def real(b)\nend\n"
     "__END__\ndef after_end(c)\nend\n",
     {{"real", 5, false, NULL, {{"b", POS, NULL, NULL}}}}},
    {"doc comments",
     "# frozen_string_literal: true\n\n"
     "# Adds two numbers.\n#\n#   add(1, 2) # => 3\ndef add(a, b)\n  a + b\nend\n"
     "x = 1 # trailing\n"
     "def nodoc\nend\n"
     "# detached\n\ndef also_nodoc\nend\n"
     "   # indented doc\ndef indented\nend\n",
     {{"add", 6, false, "Adds two numbers.\n\n  add(1, 2) # => 3", {{"a", POS, NULL, NULL}, {"b", POS, NULL, NULL}}},
      {"nodoc", 10, false, NULL, {{0}}},
      {"also_nodoc", 14, false, NULL, {{0}}},
      {"indented", 17, false, "indented doc", {{0}}}}},
    {"multi-line parameters with comments and tricky defaults",
     "def multi(a, # the first\n"
     "          b = \"x, y)\",\n"
     "          c = [1, (2)],\n"
     "          d: ->(q) { q },\n"
     "          e: %w[), (])\n"
     "end\n"
     "def last(z)\nend\n",
     {{"multi", 1, false, NULL,
       {{"a", POS, NULL, NULL},
        {"b", POS, "\"x, y)\"", NULL},
        {"c", POS, "[1, (2)]", NULL},
        {"d", KWONLY, "->(q) { q }", NULL},
        {"e", KWONLY, "%w[), (]", NULL}}},
      {"last", 7, false, NULL, {{"z", POS, NULL, NULL}}}}},
    {"destructuring parameter and unicode names",
     "def pair((a, b), c)\nend\n"
     "def caf\xC3\xA9(\xC3\xA9t\xC3\xA9)\nend\n",
     {{"pair", 1, false, NULL, {{"$0", POS, NULL, NULL}, {"c", POS, NULL, NULL}}},
      {"caf\xC3\xA9", 3, false, NULL, {{"\xC3\xA9t\xC3\xA9", POS, NULL, NULL}}}}},
    {"call sites and look-alikes",
     "define(1)\n"
     "undef_x = 2\n"
     "f = lambda { |a| a }\n"
     "private def priv(a)\nend\n"
     "define_method(:dm) { |x| x }\n",
     {{"priv", 4, false, NULL, {{"a", POS, NULL, NULL}}}}},
    {"one-line defs with semicolons and CRLF",
     "def one(a); a; end\r\ndef two(b) b end\r\n",
     {{"one", 1, false, NULL, {{"a", POS, NULL, NULL}}}, {"two", 2, false, NULL, {{"b", POS, NULL, NULL}}}}},
    {"lessons from the standard library",
     "class Coder\n"
     "  def map= map\n    @map = map\n  end\n"
     "  def /(x); memberwise(:/, x) end\n"
     "  IGN = [:to_s, :=~, :!~, :===]\n"
     "  def a\n    return <<-TEXT\n    end\n    TEXT\n  end\n"
     "  def b\n    until x.empty? or\n          y do\n      z\n    end\n  end\n"
     "  def c\n    next if specs.\n      for(1).\n      none? { |s| s }\n  end\n"
     "  def d(x)\n    x ? :[] : :[]=\n  end\n"
     "end\n"
     "def top(v)\nend\n",
     {{"top", 27, false, NULL, {{"v", POS, NULL, NULL}}}}},
    {"redefinition: both reported in order",
     "def dup(a)\nend\ndef dup(a, b)\nend\n",
     {{"dup", 1, false, NULL, {{"a", POS, NULL, NULL}}},
      {"dup", 3, false, NULL, {{"a", POS, NULL, NULL}, {"b", POS, NULL, NULL}}}}},
    {"unterminated parameter list is unknown",
     "def broken(a, b\n",
     {{0}}},
    {"byte order mark",
     "\xEF\xBB\xBF"
     "def bom\nend\n",
     {{"bom", 1, false, NULL, {{0}}}}},
};

static void check_ruby_param(const char *label, const xfunc *x, const xparam *xp, const fb_param *p)
{
    if (p->annotation)
        fail_msg("%s: %s.%s: ruby params have no annotation", label, x->name, xp->name);
    if (p->keys || p->nkeys)
        fail_msg("%s: %s.%s: ruby params have no keys", label, x->name, xp->name);
}

static const char *const frags[] = {"def ",  "def f(", "class ", "module ", "end",  "end\n", "do ",  "if ",
                                    " if ",  "while ", "(",      ")",       "[",    "]",     "{",    "}",
                                    ",",     ":",      "=",      "*",       "**",   "&",     "...",  "'",
                                    "\"",    "#{",     "%q(",    "%w[",     "%",    "/",     "<<~E", "<<-E",
                                    "<<E",   "E\n",    "\\",     "\\\n",    "\n",   "\r\n",  "  ",   "\t",
                                    "#",     "=begin", "=end",   "__END__", "?",    "$",     "@",    "self.",
                                    ".",     "x",      "k:",     "\xC3\xA9", "\xFF", "\0",   " ",    "->"};

static void test_pathological(void **state)
{
    static const repeated_input inputs[] = {
        {"", "("}, {"def f(", "("}, {"", "\\"}, {"", "'"},
        {"", "\"#{"}, /* nesting past the cap stops the scan */
        {"", "<<~A "}, {"", "end\n"}, {"", "# c\n"}, {"", "%q("}, {"", "do "}, {"def f ", "a, "},
    };
    check_long_inputs(*state, inputs, sizeof inputs / sizeof inputs[0], "def f(a) end\n");
}

static infer_suite suite = {
    .infer = fb_infer_ruby,
    .check_param = check_ruby_param,
    .cases = cases,
    .ncases = sizeof cases / sizeof cases[0],
    /* the later definition is the one Ruby calls */
    .find_src = "def a\nend\ndef b(x)\nend\ndef a(y, z)\nend\n",
    .frags = frags,
    .nfrags = sizeof frags / sizeof frags[0],
    .cap_head = "def big(",
    .cap_tail = ")\nend\ndef small(x)\nend\n",
    .rng = 0xD1B54A32D192ED03ull,
    .test_pathological = test_pathological,
};

int main(void)
{
    return run_infer_tests(&suite);
}
