/* PHP argument normalization: (source, args, kwargs) -> (args, named arguments) or the error PHP itself
 * would raise (the driver's types: ArgumentCountError, Error). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lang/args.h"
#include "lang/lang.h"
#include "lang/signature.h"

typedef struct php_case {
    const char *label, *code, *args, *kwargs, *want_args, *want_kwargs, *want_error;
    const char *want_type; /* with want_error; NULL: "Error" */
} php_case;

static const php_case cases[] = {
    {"named argument", "function f($a, $b = 2) {}", "[1]", "{\"b\": 3}", "[1]", "{\"b\": 3}", NULL, NULL},
    {"hole filling", "function f($a, $b) {}", "[null, 2]", "{\"a\": 1}", "[1, 2]", "{}", NULL, NULL},
    {"leftovers become a trailing array", "function f($a, $opts = []) {}", "[1]", "{\"x\": 1, \"y\": [2]}",
     "[1, {\"x\": 1, \"y\": [2]}]", "{}", NULL, NULL},
    {"named and leftovers", "function f($a, array $o = [], $c = 0) {}", "[1]", "{\"c\": 3, \"z\": true}",
     "[1, {\"z\": true}]", "{\"c\": 3}", NULL, NULL},
    {"variadic takes extra positionals", "function f($a, ...$rest) {}", "[1, 2, 3]", NULL, "[1, 2, 3]", "{}", NULL,
     NULL},
    {"kwarg naming the variadic is a leftover", "function f(...$rest) {}", "[]", "{\"rest\": 1}",
     "[{\"rest\": 1}]", "{}", NULL, NULL},
    /* PHP passes extra positional arguments to a user function without complaint (func_get_args) */
    {"extra positionals are passed", "function f($a) {}", "[1, 2]", NULL, "[1, 2]", "{}", NULL, NULL},
    {"extra positionals leave no room for the trailing array", "function f($a) {}", "[1, 2]", "{\"x\": 1}", NULL,
     NULL, "unexpected keyword argument 'x'", NULL},
    {"multiple values", "function f($a, $b) {}", "[1, 2]", "{\"a\": 3}", NULL, NULL,
     "f() got multiple values for parameter 'a'", NULL},
    {"missing required", "function f($a, $b, $c = 1) {}", "[1]", NULL, NULL, NULL,
     "f() missing required argument 'b'", "ArgumentCountError"},
    {"no room for the trailing array", "function f($a) {}", "[1]", "{\"x\": 1}", NULL, NULL,
     "unexpected keyword argument 'x'", NULL},
    {"named parameter where the trailing array goes", "function f($a, $b = 1, $c = 2) {}", "[1]",
     "{\"b\": 2, \"q\": 1}", NULL, NULL, "multiple values for parameter 'b'", NULL},
    {"unknown signature: all kwargs trail", NULL, "[1]", "{\"a\": 1}", "[1, {\"a\": 1}]", "{}", NULL, NULL},
    {"unknown signature: empty kwargs", NULL, "[1]", "{}", "[1]", "{}", NULL, NULL},
    {"nothing given", "function f() {}", NULL, NULL, "[]", "{}", NULL, NULL},
};

static json_t *parse(const char *t)
{
    return t ? json_loads(t, JSON_DECODE_ANY, NULL) : NULL;
}

static void test_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const php_case *c = &cases[i];
        fb_sig_list list = {0};
        fb_error err = {0};
        const fb_function_sig *sig = NULL;
        if (c->code) {
            assert_int_equal(fb_infer_php(c->code, strlen(c->code), &list, &err), 0);
            sig = fb_sig_list_find(&list, "f");
            assert_non_null(sig);
        }
        json_t *args = parse(c->args), *kwargs = parse(c->kwargs);
        json_t *args0 = json_deep_copy(args), *kwargs0 = json_deep_copy(kwargs);
        fb_call_args out;
        int r = fb_normalize_args(&fb_lang_php, sig, args, kwargs, &out, &err);
        if (c->want_error) {
            const char *want = c->want_type ? c->want_type : "Error";
            if (r != -1 || strcmp(fb_error_type(&err), want) != 0 || !strstr(err.message, c->want_error))
                fail_msg("%s: want %s [%s], got %d %s [%s]", c->label, want, c->want_error, r, fb_error_type(&err),
                         err.message);
        } else {
            if (r != 0)
                fail_msg("%s: %s [%s]", c->label, fb_error_type(&err), err.message);
            json_t *wa = parse(c->want_args), *wk = parse(c->want_kwargs);
            if (!json_equal(wa, out.args) || !json_equal(wk, out.kwargs)) {
                char *ga = json_dumps(out.args, JSON_COMPACT), *gk = json_dumps(out.kwargs, JSON_COMPACT);
                fail_msg("%s: got args %s kwargs %s", c->label, ga, gk);
            }
            json_decref(wa);
            json_decref(wk);
            fb_call_args_free(&out);
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

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_table)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
