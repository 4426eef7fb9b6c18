/* C / C++ dispatch generation (c_dispatch.c): which declared types are accepted, what the generated program
 * contains (and what it never contains: argument values), the errors raised before compiling, and the call
 * input. Nothing is compiled here; tests/integration/test_lang_c*.py compile for real. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lang/c_dispatch.h"
#include "util/json.h"

static void test_types(void **state)
{
    static const struct {
        const char *type;
        bool c_ok, cpp_ok;
    } rows[] = {
        {"int", true, true}, {"const int", true, true}, {"unsigned", true, true}, {"long unsigned int", true, true},
        {"unsigned long long", true, true}, {"short int", true, true}, {"signed char", true, true},
        {"char", true, true}, {"unsigned char", true, true}, {"int64_t", true, true}, {"uint64_t", true, true},
        {"size_t", true, true}, {"bool", true, true}, {"_Bool", true, true}, {"float", true, true},
        {"double", true, true}, {"long double", true, true}, {"const char*", true, true}, {"char*", true, true},
        {"char const*", true, true}, {"const char*const", true, true},
        {"int*", false, false}, {"void*", false, false}, {"char**", false, false}, {"struct p", false, false},
        {"long long long", false, false}, {"short long", false, false}, {"unsigned signed", false, false},
        {"int[]", false, false}, {"FILE*", false, false}, {"...", false, false}, {"void", false, false},
        {"std::string", false, true}, {"string", false, true}, {"const std::string&", false, true},
        {"std::vector<int>", false, true}, {"std::vector<std::vector<std::string>>", false, true},
        {"std::map<std::string,double>", false, true}, {"map<string,vector<bool>>", false, true},
        {"std::map<int,int>", false, false}, {"std::set<int>", false, false}, {"std::vector<int*>", false, false},
        {"std::vector<void>", false, false}, {"int&", false, true}, {"std::uint64_t", false, true},
        {"std::vector<", false, false}, {"", false, false},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        if (fb_c_type_supported(rows[i].type, false, false) != rows[i].c_ok)
            fail_msg("C: [%s] want %d", rows[i].type, rows[i].c_ok);
        if (fb_c_type_supported(rows[i].type, true, false) != rows[i].cpp_ok)
            fail_msg("C++: [%s] want %d", rows[i].type, rows[i].cpp_ok);
    }
    assert_true(fb_c_type_supported("void", false, true));
    assert_false(fb_c_type_supported(NULL, false, true));
}

static char *gen(bool cpp, const char *code, const char *fn, fb_error *err)
{
    char *src = NULL;
    size_t len = 0;
    if (fb_c_generate(cpp, code, strlen(code), fn, &src, &len, err) < 0) {
        assert_null(src);
        return NULL;
    }
    assert_int_equal(strlen(src), len);
    return src;
}

static void test_generate_c(void **state)
{
    fb_error err = {0};
    char *src = gen(false, "#include <stdint.h>\nuint64_t add(uint64_t a, const char *s) { return a; }\n", "add", &err);
    assert_non_null(src);
    assert_non_null(strstr(src, "#line 1 \"user_code.c\"\n#include <stdint.h>"));
    assert_non_null(strstr(src, "#line 1 \"fnbox_main.c\""));
    assert_non_null(strstr(src, "fnbox__read_args(2, 2, \"add\")"));
    assert_non_null(strstr(src, "fnbox__get_u64(fnbox__arg(fnbox__args, 0), (int)(sizeof(uint64_t) * CHAR_BIT)"));
    assert_non_null(strstr(src, "fnbox__get_str(fnbox__arg(fnbox__args, 1), \"s\", \"const char*\")"));
    assert_non_null(strstr(src, "add(fnbox__a0, fnbox__a1)"));
    assert_non_null(strstr(src, "fnbox__put_u64"));
    assert_null(strstr(src, "std::"));
    assert_null(strstr(src, "#include <jansson.h>")); /* the runtime object does the JSON work */
    free(src);
}

/* The C runtime is one translation unit whose functions become extern with -DFNBOX__FN=. */
static void test_runtime_source(void **state)
{
    size_t len = 0;
    const char *rt = fb_c_runtime_source(&len);
    assert_int_equal(strlen(rt), len);
    assert_non_null(strstr(rt, "#include <jansson.h>"));
    assert_non_null(strstr(rt, "FNBOX__FN json_t *fnbox__arg(json_t *args, size_t i)"));
    assert_non_null(strstr(rt, "FNBOX__FN void fnbox__free_args(void)"));
    assert_non_null(strstr(rt, "FNBOX__FN void fnbox__finish_ok(fnbox__buf *value)"));
    /* only the runtime's own state, its read callback and a streamed call's flusher are private */
    size_t nstatic = 0;
    for (const char *p = rt; (p = strstr(p, "\nstatic ")) != NULL; p++)
        nstatic++;
    assert_int_equal(nstatic, 6);
    assert_non_null(strstr(rt, "\nstatic int fnbox__ok_sent;"));
    assert_non_null(strstr(rt, "\nstatic json_t *fnbox__root;"));
    assert_non_null(strstr(rt, "\nstatic size_t fnbox__read4("));
    assert_non_null(strstr(rt, "\nstatic void *fnbox__flusher("));
    assert_non_null(strstr(rt, "\nstatic void fnbox__start_flusher(void)"));
    assert_non_null(strstr(rt, "\nstatic void fnbox__timed_flush(void)"));
}

static void test_generate_cpp_defaults_and_exceptions(void **state)
{
    fb_error err = {0};
    char *src = gen(true, "int f(const std::vector<int> &v, int k = 2) { return k; }", "f", &err);
    assert_non_null(src);
    assert_non_null(strstr(src, "#line 1 \"user_code.cpp\""));
    assert_non_null(strstr(src, "fnbox__read_args(1, 2, \"f\")"));
    assert_non_null(strstr(src, "std::remove_cv_t<std::remove_reference_t<const std::vector<int>&>> fnbox__a0{};"));
    assert_non_null(strstr(src, "case 1:"));
    assert_non_null(strstr(src, "case 2:"));
    assert_null(strstr(src, "case 0:"));
    assert_non_null(strstr(src, "catch (const std::exception &fnbox__e)"));
    assert_non_null(strstr(src, "UnknownException"));
    free(src);
}

static void test_errors_before_compiling(void **state)
{
    static const struct {
        bool cpp;
        const char *code, *fn, *type, *needle;
    } rows[] = {
        {false, "struct p { int x; };\nint f(struct p v) { return 0; }", "f", "UnsupportedType", "'v' has type 'struct p'"},
        {false, "int f(int *v) { return 0; }", "f", "UnsupportedType", "'v' has type 'int*'"},
        {false, "int f(int n, ...) { return 0; }", "f", "UnsupportedType", "'...'"},
        {false, "int *f(void) { return 0; }", "f", "UnsupportedType", "return type 'int*'"},
        {false, "int f(std::string s) { return 0; }", "f", "UnsupportedType", "std::string"},
        {true, "template <class T> T f(T x) { return x; }", "f", "UnsupportedType", "'x' has type 'T'"},
        {false, "int g(int x) { return x; }", "f", "FunctionNotFound", "f()"},
        {false, "int g(int x) { return x; }", NULL, "FunctionNotFound", "must define a function"},
        {false, "int f(int x) { return x; } /* \\0 */", "f", NULL, NULL},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        fb_error err = {0};
        char *src = gen(rows[i].cpp, rows[i].code, rows[i].fn, &err);
        if (!rows[i].type) {
            assert_non_null(src);
            free(src);
            continue;
        }
        if (src)
            fail_msg("row %zu: generated, want %s", i, rows[i].type);
        assert_string_equal(fb_error_type(&err), rows[i].type);
        if (!strstr(err.message, rows[i].needle))
            fail_msg("row %zu: [%s] not in [%s]", i, rows[i].needle, err.message);
    }
    /* an embedded NUL byte is refused */
    fb_error err = {0};
    char *src = NULL;
    size_t len = 0;
    assert_int_equal(fb_c_generate(false, "int f(void) {}\0x", 16, "f", &src, &len, &err), -1);
    assert_string_equal(fb_error_type(&err), "CompileError");
}

/* Names and type texts reach the source as escaped literals; a hostile parameter name is impossible (it is
 * an identifier), but the generated text is the same whatever the arguments: they are not an input. */
static void test_source_independent_of_arguments(void **state)
{
    fb_error err = {0};
    char *a = gen(false, "int f(const char *s) { return 0; }", "f", &err);
    char *b = gen(false, "int f(const char *s) { return 0; }", "f", &err);
    assert_non_null(a);
    assert_string_equal(a, b);
    free(a);
    free(b);
}

static void test_call_input(void **state)
{
    json_error_t jerr;
    const char *text = "[18446744073709551615, -1, \"s\", [340282366920938463463374607431768211456], {\"k\": 1}]";
    json_t *args = fb_json_loadb(text, strlen(text), 0, &jerr);
    assert_non_null(args);
    size_t len = 0;
    fb_call_args ca = {.args = args};
    fb_lang_call call = {.code = "int f(void);", .code_len = 12, .function_name = "f", .args = &ca};
    char *in = fb_c_call_input(&call, &len);
    assert_non_null(in);
    assert_int_equal(strlen(in), len);
    assert_string_equal(in, "{\"args\":[\"18446744073709551615\",-1,\"s\",[\"340282366920938463463374607431768211456\"],"
                            "{\"k\":1}]}");
    free(in);
    json_decref(args);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_types),
        cmocka_unit_test(test_generate_c),
        cmocka_unit_test(test_runtime_source),
        cmocka_unit_test(test_generate_cpp_defaults_and_exceptions),
        cmocka_unit_test(test_errors_before_compiling),
        cmocka_unit_test(test_source_independent_of_arguments),
        cmocka_unit_test(test_call_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
