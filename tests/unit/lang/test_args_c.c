/* C and C++ argument normalization (args_c.c, the normalize of both drivers): a table of (declaration,
 * args, kwargs) -> args or the ArgumentError expected, run through each driver with the signature its own
 * inference gives; kwargs are always empty afterwards (the program reads only `args`). Then signatures a
 * schema gives (acceptsKwargs, an optional parameter in C), the inputs never modified, and the
 * allocation-failure torture pass. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../alloc_fail.h"
#include "lang/args.h"
#include "lang/lang.h"
#include "lang/signature.h"

typedef struct args_case {
    const char *label;
    const fb_lang_driver *lang;
    const char *code;       /* defines `f` (inferred); NULL = signature unknown */
    const char *args;       /* JSON text; NULL = absent */
    const char *kwargs;     /* JSON text; NULL = absent */
    const char *want_args;  /* on success */
    const char *want_error; /* substring of the ArgumentError message; NULL = success expected */
} args_case;

#define C (&fb_lang_c)
#define CPP (&fb_lang_cpp)
#define OK(a) a, NULL
#define ERR(msg) NULL, msg

static const args_case cases[] = {
    /* ---- positional by declaration, keywords naming parameters ---- */
    {"positional", C, "int f(int a, int b) { return a; }", "[1, 2]", NULL, OK("[1, 2]")},
    {"all by name, any order", C, "int f(int a, int b) { return a; }", "[]", "{\"b\": 1, \"a\": 10}",
     OK("[10, 1]")},
    {"the rest by name", C, "int f(int a, int b) { return a; }", "[1]", "{\"b\": 2}", OK("[1, 2]")},
    {"hole filling", C, "int f(int a, int b) { return a; }", "[null, 2]", "{\"a\": 1}", OK("[1, 2]")},
    {"explicit null without keyword stays", C, "int f(const char *s, int b) { return b; }", "[null, 2]", "{}",
     OK("[null, 2]")},
    {"nothing for no parameters", C, "int f(void) { return 1; }", NULL, NULL, OK("[]")},
    {"missing required", C, "int f(int a, int b) { return a; }", "[1]", NULL, ERR("f() missing required argument 'b'")},
    {"missing before a named one", C, "int f(int a, int b) { return a; }", "[]", "{\"b\": 2}",
     ERR("f() missing required argument 'a'")},
    {"too many", C, "int f(int a) { return a; }", "[1, 2]", NULL,
     ERR("too many positional arguments: f() takes 1 but 2 were given")},
    {"too many for (void)", C, "int f(void) { return 1; }", "[1]", NULL,
     ERR("too many positional arguments: f() takes 0 but 1 were given")},
    {"unknown keyword", C, "int f(int a) { return a; }", "[1]", "{\"z\": 1}",
     ERR("f() got an unexpected keyword argument 'z'")},
    {"multiple values", C, "int f(int a, int b) { return a; }", "[1]", "{\"a\": 2}",
     ERR("f() got multiple values for parameter 'a'")},
    {"multiple values after hole filling", C, "int f(int a, int b) { return a; }", "[null, 2]",
     "{\"a\": 1, \"b\": 3}", ERR("f() got multiple values for parameter 'b'")},
    /* ---- C++: default arguments ---- */
    {"c++ defaults may be left out", CPP, "int f(int a, int b = 2, int c = 3) { return a; }", "[1]", NULL,
     OK("[1]")},
    {"c++ a default given by name", CPP, "int f(int a, int b = 2, int c = 3) { return a; }", "[1]",
     "{\"b\": 5}", OK("[1, 5]")},
    {"c++ a default cannot be skipped", CPP, "int f(int a, int b = 2, int c = 3) { return a; }", "[1]",
     "{\"c\": 9}",
     ERR("f() cannot skip optional parameter 'b' to pass 'c' by name: arguments are passed by position, so "
         "give 'b' too")},
    {"c++ required before defaults", CPP, "int f(int a, int b = 2) { return a; }", "[]", NULL,
     ERR("f() missing required argument 'a'")},
    {"c++ references by name", CPP, "#include <string>\nint f(const std::string &s, int n) { return n; }", "[]",
     "{\"n\": 1, \"s\": \"x\"}", OK("[\"x\", 1]")},
    {"c++ too many", CPP, "int f(int a = 1) { return a; }", "[1, 2]", NULL,
     ERR("too many positional arguments: f() takes 1 but 2 were given")},
    /* ---- signature unknown: the program's own count check decides ---- */
    {"unknown signature passes through", C, NULL, "[1, null]", NULL, OK("[1, null]")},
};

static json_t *parse(const char *text)
{
    if (!text)
        return NULL;
    json_error_t e;
    json_t *v = json_loads(text, JSON_DECODE_ANY, &e);
    if (!v)
        fail_msg("bad JSON in test table: %s: %s", text, e.text);
    return v;
}

static const fb_function_sig *case_sig(const args_case *c, fb_sig_list *list)
{
    memset(list, 0, sizeof *list);
    if (!c->code)
        return NULL;
    fb_error err = {0};
    assert_int_equal(c->lang->infer(c->code, strlen(c->code), list, &err), 0);
    const fb_function_sig *sig = fb_sig_list_find(list, "f");
    if (!sig)
        fail_msg("%s: no function f inferred from the test's code", c->label);
    return sig;
}

static void expect_json(const char *label, const char *want_text, json_t *got)
{
    json_t *want = parse(want_text);
    if (!json_equal(want, got)) {
        char *g = json_dumps(got, JSON_ENCODE_ANY | JSON_COMPACT);
        fail_msg("%s: want %s got %s", label, want_text, g ? g : "(null)");
    }
    json_decref(want);
}

static int run_case(const args_case *c, const fb_function_sig *sig, json_t *args, json_t *kwargs, fb_error *err,
                    bool check)
{
    fb_call_args out;
    memset(&out, 0xAB, sizeof out); /* must be fully initialized by the callee */
    int r = fb_normalize_args(c->lang, sig, args, kwargs, &out, err);
    if (r == 0) {
        if (check) {
            expect_json(c->label, c->want_args, out.args);
            if (sig)
                expect_json(c->label, "{}", out.kwargs);
            expect_json(c->label, "[]", out.undefined);
        }
        fb_call_args_free(&out);
    } else {
        assert_null(out.args);
        assert_null(out.kwargs);
        assert_null(out.undefined);
    }
    return r;
}

static void test_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const args_case *c = &cases[i];
        fb_sig_list list;
        const fb_function_sig *sig = case_sig(c, &list);
        json_t *args = parse(c->args), *kwargs = parse(c->kwargs);
        json_t *args0 = json_deep_copy(args), *kwargs0 = json_deep_copy(kwargs);
        fb_error err = {0};
        int r = run_case(c, sig, args, kwargs, &err, true);
        if (c->want_error) {
            if (r != -1 || strcmp(fb_error_type(&err), "ArgumentError") != 0 || !strstr(err.message, c->want_error))
                fail_msg("%s: want ArgumentError [%s], got %d %s [%s]", c->label, c->want_error, r,
                         fb_error_type(&err), err.message);
        } else if (r != 0) {
            fail_msg("%s: want success, got %s [%s]", c->label, fb_error_type(&err), err.message);
        }
        if ((args && !json_equal(args, args0)) || (kwargs && !json_equal(kwargs, kwargs0)))
            fail_msg("%s: inputs modified", c->label);
        json_decref(args);
        json_decref(kwargs);
        json_decref(args0);
        json_decref(kwargs0);
        fb_sig_list_free(&list);
    }
}

/* Signatures a schema gives a C function: acceptsKwargs takes any keyword (which reaches nothing), a
 * parameter the schema makes optional may be left out but not skipped. */
static void test_schema_signatures(void **state)
{
    (void)state;
    fb_param params[] = {{.name = "a", .kind = FB_PARAM_POSITIONAL},
                         {.name = "b", .kind = FB_PARAM_POSITIONAL, .has_default = true},
                         {.name = "c", .kind = FB_PARAM_POSITIONAL, .has_default = true},
                         {.name = "kwargs", .kind = FB_PARAM_VAR_KEYWORD}};
    fb_function_sig sig = {.name = "f", .params = params, .nparams = 4};
    json_t *args = parse("[1]"), *kw = parse("{\"x\": 1}");
    fb_call_args out;
    fb_error err = {0};
    assert_int_equal(fb_normalize_args(&fb_lang_c, &sig, args, kw, &out, &err), 0);
    expect_json("acceptsKwargs", "[1]", out.args);
    expect_json("acceptsKwargs", "{\"x\": 1}", out.kwargs);
    fb_call_args_free(&out);
    json_decref(kw);

    kw = parse("{\"c\": 3}");
    assert_int_equal(fb_normalize_args(&fb_lang_c, &sig, args, kw, &out, &err), -1);
    assert_string_equal(fb_error_type(&err), "ArgumentError");
    assert_non_null(strstr(err.message, "cannot skip optional parameter 'b' to pass 'c'"));
    json_decref(kw);
    json_decref(args);

    sig.nparams = 3; /* without acceptsKwargs an unknown keyword is refused */
    args = parse("[1]");
    kw = parse("{\"x\": 1}");
    assert_int_equal(fb_normalize_args(&fb_lang_cpp, &sig, args, kw, &out, &err), -1);
    assert_non_null(strstr(err.message, "unexpected keyword argument 'x'"));
    json_decref(kw);
    json_decref(args);
}

static void test_allocation_failures(void **state)
{
    (void)state;
    alloc_fail_begin();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const args_case *c = &cases[i];
        fb_sig_list list;
        const fb_function_sig *sig = case_sig(c, &list);
        json_t *args = parse(c->args), *kwargs = parse(c->kwargs);
        for (long budget = 0;; budget++) {
            fb_error err = {0};
            alloc_budget = budget;
            int r = run_case(c, sig, args, kwargs, &err, false);
            alloc_budget = -1;
            if (r == 0 || (c->want_error && strcmp(fb_error_type(&err), "ArgumentError") == 0)) {
                assert_int_equal(run_case(c, sig, args, kwargs, &err, !c->want_error), c->want_error ? -1 : 0);
                break;
            }
            if (err.kind != FB_ERR_OUT_OF_MEMORY)
                fail_msg("%s: budget %ld: want OutOfMemory, got %s [%s]", c->label, budget, fb_error_type(&err),
                         err.message);
            assert_true(budget < 1000);
        }
        json_decref(args);
        json_decref(kwargs);
        fb_sig_list_free(&list);
    }
    alloc_fail_end();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_schema_signatures),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
