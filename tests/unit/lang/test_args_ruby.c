/* Ruby argument normalization: a table of (Ruby source, args, kwargs) -> (args, kwargs) or the ArgumentError
 * expected; the inputs are never modified; signatures built by hand (as a schema gives them); and the
 * allocation-failure torture pass (every jansson allocation failed in turn) that must end in a clean error. */
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
    const char *code;   /* source defining the called method `f` (inferred); NULL = signature unknown */
    const char *args;   /* JSON text; NULL = absent */
    const char *kwargs; /* JSON text; NULL = absent */
    const char *want_args, *want_kwargs; /* on success */
    const char *want_error; /* substring of the ArgumentError message; NULL = success expected */
} args_case;

#define OK(a, k) a, k, NULL
#define ERR(msg) NULL, NULL, msg

static const args_case cases[] = {
    /* ---- signature known ---- */
    {"greet: optional positional by name after the required one", "def f(name, greeting = \"Hello\")\nend",
     "[\"World\"]", "{\"greeting\": \"Hi\"}", OK("[\"World\", \"Hi\"]", "{}")},
    {"all positionals by name, any order", "def f(a, b)\nend", "[]", "{\"b\": 2, \"a\": 1}", OK("[1, 2]", "{}")},
    {"hole filling", "def f(a, b)\nend", "[null, 2]", "{\"a\": 1}", OK("[1, 2]", "{}")},
    {"explicit null without keyword stays nil", "def f(a, b)\nend", "[null, 2]", "{}", OK("[null, 2]", "{}")},
    {"absent args and kwargs", "def f\nend", NULL, NULL, OK("[]", "{}")},
    {"defaults make parameters optional", "def f(a, b = 2, k: 3)\nend", "[1]", NULL, OK("[1]", "{}")},
    {"keyword parameter stays a keyword", "def f(a, k:)\nend", "[1]", "{\"k\": 2}", OK("[1]", "{\"k\": 2}")},
    {"optional keyword stays a keyword", "def f(a, k: 1)\nend", "[1]", "{\"k\": 2}", OK("[1]", "{\"k\": 2}")},
    {"mixed: positional placed, keyword kept", "def f(a, b = 1, k: 2)\nend", "[1]", "{\"b\": 5, \"k\": 6}",
     OK("[1, 5]", "{\"k\": 6}")},
    {"**opts takes unknown keywords", "def f(a, **opts)\nend", "[1]", "{\"x\": 1, \"y\": [2]}",
     OK("[1]", "{\"x\": 1, \"y\": [2]}")},
    {"*rest takes extra positionals", "def f(a, *rest)\nend", "[1, 2, 3]", NULL, OK("[1, 2, 3]", "{}")},
    {"argument forwarding takes anything", "def f(...)\n  g(...)\nend", "[1, 2]", "{\"x\": 1}",
     OK("[1, 2]", "{\"x\": 1}")},
    {"post-required parameter: Ruby fills required ones first", "def f(a, b = 1, c)\nend", "[1, 2]", NULL,
     OK("[1, 2]", "{}")},
    {"block parameter takes no argument", "def f(a, &blk)\nend", "[1, 2]", NULL,
     ERR("too many positional arguments: f() takes 1 but 2 were given")},
    {"endless def", "def f(a, b = 2) = a + b", "[]", "{\"a\": 1}", OK("[1]", "{}")},
    {"def without parentheses", "def f a, b = 2\nend", "[1]", "{\"b\": 3}", OK("[1, 3]", "{}")},
    {"too many positionals", "def f(a, b)\nend", "[1, 2, 3]", NULL,
     ERR("too many positional arguments: f() takes 2 but 3 were given")},
    {"too many, keywords do not count", "def f(a, k: 1)\nend", "[1, 2]", NULL,
     ERR("too many positional arguments: f() takes 1 but 2 were given")},
    {"cannot skip an optional positional", "def f(a, b = 2, c = 3)\nend", "[1]", "{\"c\": 9}",
     ERR("cannot skip optional parameter 'b' to pass 'c' by name")},
    {"skipping a required positional names it", "def f(a, b)\nend", "[]", "{\"b\": 2}",
     ERR("missing required argument 'a'")},
    {"multiple values", "def f(a, b)\nend", "[1]", "{\"a\": 2}", ERR("multiple values for parameter 'a'")},
    {"multiple values after hole filling", "def f(a, b)\nend", "[null, 2]", "{\"a\": 1, \"b\": 3}",
     ERR("multiple values for parameter 'b'")},
    {"unexpected keyword", "def f(a)\nend", "[1]", "{\"x\": 1}", ERR("unexpected keyword argument 'x'")},
    {"keyword naming *rest is unexpected", "def f(*rest)\nend", "[]", "{\"rest\": 1}",
     ERR("unexpected keyword argument 'rest'")},
    {"keyword naming the block is unexpected", "def f(&blk)\nend", "[]", "{\"blk\": 1}",
     ERR("unexpected keyword argument 'blk'")},
    {"missing required positional", "def f(a, b)\nend", "[1]", NULL, ERR("missing required argument 'b'")},
    {"missing required keyword", "def f(a, k:)\nend", "[1]", "{}", ERR("missing required keyword argument 'k'")},
    {"missing post-required positional", "def f(a, b = 1, c)\nend", "[1]", NULL,
     ERR("missing required argument 'c'")},
    {"**opts does not swallow a positional's name", "def f(a, **opts)\nend", "[1]", "{\"a\": 2}",
     ERR("multiple values for parameter 'a'")},
    {"method without parameters", "def f\nend", "[]", "{\"x\": 1}", ERR("unexpected keyword argument 'x'")},
    {"self. method", "def self.f(a, k: 1)\nend", "[]", "{\"a\": 1, \"k\": 2}", OK("[1]", "{\"k\": 2}")},
    /* ---- signature unknown ---- */
    {"unknown signature passes through", NULL, "[1, null]", "{\"x\": 1}", OK("[1, null]", "{\"x\": 1}")},
    {"unknown signature, nothing given", NULL, NULL, NULL, OK("[]", "{}")},
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

/* Infers c->code into *list and returns the signature of `f` in it, or NULL when the case has no code. */
static const fb_function_sig *case_sig(const args_case *c, fb_sig_list *list)
{
    memset(list, 0, sizeof *list);
    if (!c->code)
        return NULL;
    fb_error err = {0};
    assert_int_equal(fb_infer_ruby(c->code, strlen(c->code), list, &err), 0);
    const fb_function_sig *sig = fb_sig_list_find(list, "f");
    if (!sig)
        fail_msg("%s: no method f inferred from the test's code", c->label);
    return sig;
}

static void expect_json(const char *label, const char *what, const char *want_text, json_t *got)
{
    json_t *want = parse(want_text);
    if (!json_equal(want, got)) {
        char *g = json_dumps(got, JSON_ENCODE_ANY | JSON_COMPACT);
        print_message("%s: %s: want %s got %s\n", label, what, want_text ? want_text : "(null)", g ? g : "(null)");
        free(g);
        json_decref(want);
        fail_msg("%s: %s mismatch", label, what);
    }
    json_decref(want);
}

static int run_case(const args_case *c, const fb_function_sig *sig, json_t *args, json_t *kwargs, fb_error *err,
                    bool check)
{
    fb_call_args out;
    memset(&out, 0xAB, sizeof out); /* must be fully initialized by the callee */
    int r = fb_normalize_args(&fb_lang_ruby, sig, args, kwargs, &out, err);
    if (r == 0) {
        if (check) {
            expect_json(c->label, "args", c->want_args, out.args);
            expect_json(c->label, "kwargs", c->want_kwargs, out.kwargs);
            expect_json(c->label, "undefined", "[]", out.undefined);
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
            if (r != -1)
                fail_msg("%s: want error [%s], got success", c->label, c->want_error);
            if (strcmp(fb_error_type(&err), "ArgumentError") != 0 || !strstr(err.message, c->want_error))
                fail_msg("%s: want ArgumentError [%s], got %s [%s]", c->label, c->want_error, fb_error_type(&err), err.message);
        } else if (r != 0) {
            fail_msg("%s: want success, got %s [%s]", c->label, fb_error_type(&err), err.message);
        }
        if ((args || args0) && !json_equal(args, args0))
            fail_msg("%s: args was modified", c->label);
        if ((kwargs || kwargs0) && !json_equal(kwargs, kwargs0))
            fail_msg("%s: kwargs was modified", c->label);
        json_decref(args);
        json_decref(kwargs);
        json_decref(args0);
        json_decref(kwargs0);
        fb_sig_list_free(&list);
    }
}

/* Signatures built by hand, as a request schema gives them: no name, names missing, positional-only. */
static void test_hand_built_signatures(void **state)
{
    (void)state;
    fb_param params[] = {{.name = "a", .kind = FB_PARAM_POSITIONAL},
                         {.name = NULL, .kind = FB_PARAM_POSITIONAL, .has_default = true},
                         {.name = "c", .kind = FB_PARAM_POSITIONAL_ONLY, .has_default = true}};
    fb_function_sig anon = {.name = NULL, .params = params, .nparams = 3};
    json_t *args = parse("[1, 2, 3, 4]");
    fb_call_args out;
    fb_error err = {0};
    assert_int_equal(fb_normalize_args(&fb_lang_ruby, &anon, args, NULL, &out, &err), -1);
    assert_non_null(strstr(err.message, "function() takes 3 but 4 were given"));
    fb_error_clear(&err);
    json_decref(args);

    /* a keyword for a parameter past an unnamed one cannot be placed */
    args = parse("[1]");
    json_t *kw = parse("{\"c\": 3}");
    assert_int_equal(fb_normalize_args(&fb_lang_ruby, &anon, args, kw, &out, &err), -1);
    assert_string_equal(fb_error_type(&err), "ArgumentError");
    assert_non_null(strstr(err.message, "cannot skip optional parameter '?'"));
    fb_error_clear(&err);
    json_decref(kw);

    /* hole filling skips an unnamed parameter */
    json_decref(args);
    args = parse("[null, null]");
    kw = parse("{\"a\": 1}");
    assert_int_equal(fb_normalize_args(&fb_lang_ruby, &anon, args, kw, &out, &err), 0);
    expect_json("hand-built", "args", "[1, null]", out.args);
    expect_json("hand-built", "kwargs", "{}", out.kwargs);
    fb_call_args_free(&out);
    json_decref(args);
    json_decref(kw);
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
                fail_msg("%s: budget %ld: want OutOfMemory, got %s [%s]", c->label, budget, fb_error_type(&err), err.message);
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
        cmocka_unit_test(test_hand_built_signatures),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
