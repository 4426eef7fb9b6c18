/* C / C++ declaration inference (c_infer.c): names, parameter types in canonical form (fb_param.annotation),
 * return types (fb_function_sig.returns), whatever the spacing, comments, attributes, storage classes,
 * preprocessor lines and literals; plus the shared tests of infer_testlib.h (truncations, garbage, caps). */
#include "infer_testlib.h"
#include "lang/c_dispatch.h"

#define P(n, t) {n, FB_PARAM_POSITIONAL, NULL, t}
#define PD(n, t, d) {n, FB_PARAM_POSITIONAL, d, t}

static const infer_case cases[] = {
    {"plain", "int f(int a, int b) { return a + b; }\n", {{"f", 1, false, NULL, {P("a", "int"), P("b", "int")}}}},
    {"spacing", "const char *f(const char *s, char* t, char*u, const   char  *  v){return s;}",
     {{"f", 1, false, NULL,
       {P("s", "const char*"), P("t", "char*"), P("u", "char*"), P("v", "const char*")}}}},
    {"star before name", "char *f(\n  unsigned long long x,\n  long\n  double y\n)\n{\n}\n",
     {{"f", 1, false, NULL, {P("x", "unsigned long long"), P("y", "long double")}}}},
    {"void params", "int f(void) { return 1; }\nint g() { return 2; }\n",
     {{"f", 1, false, NULL, {{0}}}, {"g", 2, false, NULL, {{0}}}}},
    {"comments", "/* int nope(int x) { } */\n// int nope2(int y) {\nint /* c */ f(int /* a */ a, // b\n int b) {}\n",
     {{"f", 3, false, NULL, {P("a", "int"), P("b", "int")}}}},
    {"strings and chars", "const char *s = \"int nope(int x) {\";\nchar c = '{';\nint f(int a) { return '}'; }\n",
     {{"f", 3, false, NULL, {P("a", "int")}}}},
    {"preprocessor", "#include <stdio.h>\n#define F(x) int nope(int x) { \\\n }\nint f(int a) { return a; }\n",
     {{"f", 4, false, NULL, {P("a", "int")}}}},
    {"attributes", "__attribute__((noinline)) static inline int f(int a __attribute__((unused))) { return 0; }\n"
                   "[[nodiscard]] int g([[maybe_unused]] int b) { return 1; }\n",
     {{"f", 1, false, NULL, {P("a", "int")}}, {"g", 2, false, NULL, {P("b", "int")}}}},
    {"static inline extern", "static int f(int a) {}\ninline long g(long b) {}\nextern short h(short c) {}\n",
     {{"f", 1, false, NULL, {P("a", "int")}}, {"g", 2, false, NULL, {P("b", "long")}},
      {"h", 3, false, NULL, {P("c", "short")}}}},
    {"prototypes and calls are not definitions",
     "int f(int a);\nint main(void) { return f(1); }\nint f(int a) { if (a) { while (a) {} } return g(a); }\n",
     {{"main", 2, false, NULL, {{0}}}, {"f", 3, false, NULL, {P("a", "int")}}}},
    {"struct and typedef", "struct s { int x; };\ntypedef struct { int y; } T;\nint f(struct s v, T t) {}\n",
     {{"f", 3, false, NULL, {P("v", "struct s"), P("t", "T")}}}},
    {"unnamed", "int f(int, const char *) {}\n", {{"f", 1, false, NULL, {P("arg0", "int"), P("arg1", "const char*")}}}},
    {"variadic", "int f(int n, ...) {}\n", {{"f", 1, false, NULL, {P("n", "int"), {"arg1", FB_PARAM_VAR_POSITIONAL, NULL, "..."}}}}},
    {"cpp templates and refs",
     "std::map<std::string, std::vector<int>> f(const std::vector<std::string> &names, std::map<std::string,int>&& m)"
     " { return {}; }\n",
     {{"f", 1, false, NULL,
       {P("names", "const std::vector<std::string>&"), P("m", "std::map<std::string,int>&&")}}}},
    {"cpp defaults", "int f(int a, int b = 10, std::string s = \"x,y\") noexcept { return a; }\n",
     {{"f", 1, false, NULL, {P("a", "int"), PD("b", "int", "10"), PD("s", "std::string", "\"x,y\"")}}}},
    {"member definitions are skipped, namespace functions are found",
     "struct A { int m(int x) { return x; } };\nint A::n(int y) { return y; }\nnamespace ns { int h(int z) {} }\n"
     "int f(int a) {}\n",
     {{"h", 3, false, NULL, {P("z", "int")}}, {"f", 4, false, NULL, {P("a", "int")}}}},
    {"extern C declaration", "extern \"C\" int f(int a) { return a; }\nextern \"C\"  const char *g(const char*s) {}\n",
     {{"f", 1, false, NULL, {P("a", "int")}}, {"g", 2, false, NULL, {P("s", "const char*")}}}},
    {"extern C block", "extern \"C\" {\nint f(int a) { return a; }\nstatic long g(long b) { { } return b; }\n}\n"
                       "extern\"C\"{int h(int c){return c;}}\n",
     {{"f", 2, false, NULL, {P("a", "int")}}, {"g", 3, false, NULL, {P("b", "long")}},
      {"h", 5, false, NULL, {P("c", "int")}}}},
    {"nested, inline, C++17 and anonymous namespaces",
     "namespace a { namespace b\n{\nint f(int x) {}\n}\nint g(int y) {}\n}\n"
     "namespace c::d { inline namespace v1 { int h(int z) {} } }\nnamespace { int k(int w) {} }\n"
     "int top(int t) {}\n",
     {{"f", 3, false, NULL, {P("x", "int")}}, {"g", 5, false, NULL, {P("y", "int")}},
      {"h", 7, false, NULL, {P("z", "int")}}, {"k", 8, false, NULL, {P("w", "int")}},
      {"top", 9, false, NULL, {P("t", "int")}}}},
    {"classes and prototypes inside a namespace",
     "namespace m {\nstruct S { int in(int q) { return q; } };\nint f(int);\nclass C;\n"
     "int f(int a) { return a; }\n}\nint m::g(int b) { return b; }\n",
     {{"f", 5, false, NULL, {P("a", "int")}}}},
    {"extern C++ block holding a namespace",
     "extern \"C++\" {\n  namespace  m  {\n    std::string f(const std::string &s) { return s; }\n  }\n}\n",
     {{"f", 3, false, NULL, {P("s", "const std::string&")}}}},
    {"unbalanced closing braces", "}\n}\nnamespace m { }\n}\nint f(int a) {}\n",
     {{"f", 5, false, NULL, {P("a", "int")}}}},
    {"function pointer variable is not a function", "int (*fp)(int) = 0;\nint f(int a) {}\n",
     {{"f", 2, false, NULL, {P("a", "int")}}}},
    {"raw string", "const char *r = R\"x(int nope(int a) { )x\";\nint f(int a) {}\n",
     {{"f", 2, false, NULL, {P("a", "int")}}}},
    {"restrict and register", "int f(char *restrict p, register int n) {}\n",
     {{"f", 1, false, NULL, {P("p", "char*"), P("n", "int")}}}},
    {"empty", "", {{0}}},
};

static void check_c_param(const char *label, const xfunc *x, const xparam *xp, const fb_param *p)
{
    if (!xp->extra)
        return;
    if (!p->annotation || strcmp(p->annotation, xp->extra) != 0)
        fail_msg("%s: %s.%s: want type [%s] got [%s]", label, x->name, xp->name, xp->extra,
                 p->annotation ? p->annotation : "(null)");
}

static const char *const frags[] = {"int ", "int f(", "char *", "const ", "(", ")", "{", "}", ";", ",", "/*", "*/",
                                    "//", "\n", "#", "#define X \\\n", "\"", "'", "\\", "[[", "]]",
                                    "__attribute__((", "R\"(", ")\"", "<", ">", "::", "=", "...", "&", "*",
                                    "\xC3\xA9", "\xFF", "\0", " ", "x", "void", "noexcept", "throw()", "static "};

static void test_pathological(void **state)
{
    static const repeated_input inputs[] = {
        {"", "("}, {"int f(", "("}, {"", ")"}, {"", ") {"}, {"", "{"}, {"", "}"}, {"", "\""}, {"", "'"},
        {"", "/*"}, {"", "[["}, {"", "__attribute__(("}, {"", "#x\\\n"}, {"int f ", "a, "}, {"", "R\"("},
    };
    check_long_inputs(*state, inputs, sizeof inputs / sizeof inputs[0], "int f(int a) {}\n");
}

static infer_suite suite = {
    .infer = fb_infer_cpp,
    .check_param = check_c_param,
    .cases = cases,
    .ncases = sizeof cases / sizeof cases[0],
    .find_src = "void a() {}\nint b(int x) {}\nvoid a(int y, int z) {}\n",
    .frags = frags,
    .nfrags = sizeof frags / sizeof frags[0],
    .cap_head = "int big(",
    .cap_tail = ") {}\nint small(int x) {}\n",
    .rng = 0x9E3779B97F4A7C15ull,
    .test_pathological = test_pathological,
};

/* The return type, canonical and without storage classes or attributes. */
static void test_returns(void **state)
{
    static const struct {
        const char *code, *want;
    } rows[] = {
        {"static inline const char *f(void) {}", "const char*"},
        {"__attribute__((noinline))\nunsigned   long\nlong f(void) {}", "unsigned long long"},
        {"int main(void) {}\nvoid f(void) {}", "void"},
        {"extern std::vector< std::string >f() {}", "std::vector<std::string>"},
        {"[[nodiscard]] constexpr bool f() { return true; }", "bool"},
        {"extern \"C\" { static inline unsigned f(void) {} }", "unsigned"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        fb_sig_list list;
        fb_error err = {0};
        assert_int_equal(fb_infer_cpp(rows[i].code, strlen(rows[i].code), &list, &err), 0);
        const fb_function_sig *f = fb_sig_list_find(&list, "f");
        assert_non_null(f);
        if (strcmp(f->returns, rows[i].want) != 0)
            fail_msg("row %zu: want [%s] got [%s]", i, rows[i].want, f->returns);
        fb_sig_list_free(&list);
    }
}

/* C mode does not know raw strings: R"(...)" is an identifier R and a string. */
static void test_c_mode(void **state)
{
    const char *code = "int R = 0;\nint f(const char *s) { return 0; }\n";
    fb_sig_list list;
    fb_error err = {0};
    assert_int_equal(fb_infer_c(code, strlen(code), &list, &err), 0);
    assert_int_equal(list.nfuncs, 1);
    assert_string_equal(list.funcs[0].params[0].annotation, "const char*");
    fb_sig_list_free(&list);
    /* C has no namespaces: `namespace` is an ordinary identifier, and a block after it is no scope */
    const char *ns = "struct namespace { int x; };\nint f(int a) { return a; }\n";
    assert_int_equal(fb_infer_c(ns, strlen(ns), &list, &err), 0);
    assert_int_equal(list.nfuncs, 1);
    assert_string_equal(list.funcs[0].name, "f");
    fb_sig_list_free(&list);
}

/* The qualified names the dispatcher calls (fb_infer_cpp_qualified), in order of definition. */
static void test_qualified_names(void **state)
{
    static const struct {
        const char *code, *want; /* names joined by ',' */
    } rows[] = {
        {"namespace m { int f(int a) { return a; } }", "m::f"},
        {"namespace a { namespace b\n{\nint f(int x) {}\n}\nint g(int y) {}\n}\nint top() {}", "a::b::f,a::g,top"},
        {"namespace c::d { inline namespace v1 { int h(int z) {} } }", "c::d::v1::h"},
        {"namespace   spaced\t::  name {int f(){}}", "spaced::name::f"},
        {"namespace { int k(int w) {} }\nextern \"C\" { int e(int v) {} }", "k,e"},
        {"extern \"C++\" { namespace m { extern \"C\" { int f() {} } } }\nint g() {}", "m::f,g"},
        {"namespace m { struct S { int in() { return 1; } }; int f() {} }\nint m::g() {}\n", "m::f"},
        {"namespace m {\n#define X }\nint f() {} }", "m::f"},
        {"namespace m { int f() { return 0; } } } } int g() {}", "m::f,g"},
        {"namespace /* c */ m // d\n{ int f() {} }", "m::f"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        fb_sig_list list;
        fb_error err = {0};
        assert_int_equal(fb_infer_cpp_qualified(rows[i].code, strlen(rows[i].code), &list, &err), 0);
        char got[256] = "";
        for (size_t k = 0; k < list.nfuncs; k++) {
            if (k)
                strncat(got, ",", sizeof got - strlen(got) - 1);
            strncat(got, list.funcs[k].name, sizeof got - strlen(got) - 1);
        }
        if (strcmp(got, rows[i].want) != 0)
            fail_msg("row %zu: want [%s] got [%s]", i, rows[i].want, got);
        fb_sig_list_free(&list);
    }
}

int main(void)
{
    int failed = run_infer_tests(&suite);
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_returns), cmocka_unit_test(test_c_mode),
                                       cmocka_unit_test(test_qualified_names)};
    return failed + cmocka_run_group_tests(tests, NULL, NULL);
}
