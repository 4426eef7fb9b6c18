/* Argument normalization: a table of (signature source, args, kwargs) -> (args, kwargs, undefined) or the
 * ArgumentError expected, for the Python and JavaScript conventions (Ruby, PHP, C/C++: test_args_<lang>.c);
 * then checks that inputs are never modified, that
 * malformed inputs are refused, and an allocation-failure torture pass (every jansson allocation failed in
 * turn) that must end in a clean error with nothing leaked. */
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
#include "lang/plan.h"
#include "lang/signature.h"

typedef struct args_case {
    const char *label;
    const fb_lang_driver *lang;
    const char *code;   /* source defining the called function `f` (inferred); NULL = signature unknown */
    const char *args;   /* JSON text; NULL = absent */
    const char *kwargs; /* JSON text; NULL = absent */
    const char *want_args, *want_kwargs, *want_undefined; /* on success */
    const char *want_error; /* substring of the ArgumentError message; NULL = success expected */
} args_case;

/* The Python and JavaScript drivers with fnbox's own ArgumentError for every mismatch (main() fills them
 * in), so that the table's messages are compared under one type; test_language_error_types checks the
 * drivers' own classes. */
static fb_lang_driver g_py, g_js;
#define PY (&g_py)
#define JS (&g_js)
#define OK(a, k, u) a, k, u, NULL
#define ERR(msg) NULL, NULL, NULL, msg

static const args_case cases[] = {
    /* ---- Python, signature known ---- */
    {"py seed: greet keyword stays keyword", PY, "def f(name, greeting=\"Hello\"): pass", "[\"World\"]",
     "{\"greeting\": \"Hi\"}", OK("[\"World\"]", "{\"greeting\": \"Hi\"}", "[]")},
    {"py seed: hole filling", PY, "def f(a, b): pass", "[null, 2]", "{\"a\": 1}", OK("[1, 2]", "{}", "[]")},
    {"py explicit null without keyword is None", PY, "def f(a, b): pass", "[null, 2]", "{}",
     OK("[null, 2]", "{}", "[]")},
    {"py hole filling a positional-only parameter", PY, "def f(a, /, b): pass", "[null, 2]", "{\"a\": 1}",
     OK("[1, 2]", "{}", "[]")},
    {"py all by keyword", PY, "def f(a, b): pass", "[]", "{\"a\": 1, \"b\": 2}",
     OK("[]", "{\"a\": 1, \"b\": 2}", "[]")},
    {"py absent args and kwargs", PY, "def f(): pass", NULL, NULL, OK("[]", "{}", "[]")},
    {"py defaults make parameters optional", PY, "def f(a, b=2, *, c=3): pass", "[1]", NULL, OK("[1]", "{}", "[]")},
    {"py keyword-only stays in kwargs", PY, "def f(a, *, b): pass", "[1]", "{\"b\": 2}", OK("[1]", "{\"b\": 2}", "[]")},
    {"py *args takes extra positionals", PY, "def f(a, *rest): pass", "[1, 2, 3]", NULL, OK("[1, 2, 3]", "{}", "[]")},
    {"py **kwargs takes unknown keywords", PY, "def f(a, **kw): pass", "[1]", "{\"x\": 1}",
     OK("[1]", "{\"x\": 1}", "[]")},
    {"py positional-only name goes to **kwargs", PY, "def f(a, /, **kw): pass", "[1]", "{\"a\": 2}",
     OK("[1]", "{\"a\": 2}", "[]")},
    {"py too many positionals", PY, "def f(a, b): pass", "[1, 2, 3]", NULL,
     ERR("too many positional arguments: f() takes 2 but 3 were given")},
    {"py too many, keyword-only do not count", PY, "def f(a, *, b=1): pass", "[1, 2]", NULL,
     ERR("too many positional arguments: f() takes 1 but 2 were given")},
    {"py positional-only passed by keyword", PY, "def f(a, /, b): pass", "[]", "{\"a\": 1, \"b\": 2}",
     ERR("positional-only argument 'a'")},
    {"py multiple values", PY, "def f(a, b): pass", "[1]", "{\"a\": 2}", ERR("multiple values for parameter 'a'")},
    {"py multiple values after hole filling", PY, "def f(a, b): pass", "[null, 2]", "{\"a\": 1, \"b\": 3}",
     ERR("multiple values for parameter 'b'")},
    {"py unexpected keyword", PY, "def f(a): pass", "[1]", "{\"x\": 1}", ERR("unexpected keyword argument 'x'")},
    {"py keyword naming *args is unexpected", PY, "def f(*args): pass", "[]", "{\"args\": 1}",
     ERR("unexpected keyword argument 'args'")},
    {"py missing required", PY, "def f(a, b): pass", "[1]", NULL, ERR("missing required argument 'b'")},
    {"py missing keyword-only", PY, "def f(a, *, b): pass", "[1]", "{}", ERR("missing required argument 'b'")},
    {"py missing positional-only", PY, "def f(a, /): pass", NULL, NULL, ERR("missing required argument 'a'")},
    /* ---- Python, signature unknown ---- */
    {"py unknown signature passes through", PY, NULL, "[1, null]", "{\"x\": 1}",
     OK("[1, null]", "{\"x\": 1}", "[]")},
    {"py unknown signature, nothing given", PY, NULL, NULL, NULL, OK("[]", "{}", "[]")},
    /* ---- JavaScript, signature known ---- */
    {"js seed: leftovers become the options object", JS, "function f(a, b, options = {}) {}", "[5, 3]",
     "{\"multiplier\": 10}", OK("[5, 3, {\"multiplier\": 10}]", "{}", "[]")},
    {"js seed: named parameter past a gap", JS, "function f(a, b = 2, c) {}", "[1]", "{\"c\": 3}",
     OK("[1, null, 3]", "{}", "[1]")},
    {"js hole filling", JS, "function f(a, b) {}", "[null, 2]", "{\"a\": 1}", OK("[1, 2]", "{}", "[]")},
    {"js all by name, any order", JS, "function f(a, b) {}", "[]", "{\"b\": 2, \"a\": 1}", OK("[1, 2]", "{}", "[]")},
    {"js named and leftovers with a gap", JS, "function f(a, b, opts) {}", NULL, "{\"b\": 2, \"extra\": true}",
     OK("[null, 2, {\"extra\": true}]", "{}", "[0]")},
    {"js multiple values", JS, "function f(a, b) {}", "[1]", "{\"a\": 2}", ERR("multiple values for parameter 'a'")},
    {"js arity is not checked", JS, "function f(a) {}", "[1, 2, 3]", NULL, OK("[1, 2, 3]", "{}", "[]")},
    {"js object pattern receives keywords", JS, "function f({a, b}) {}", "[]", "{\"a\": 1, \"b\": 2}",
     OK("[{\"a\": 1, \"b\": 2}]", "{}", "[]")},
    {"js keywords merged over a passed object", JS, "function f(x, {a, b}) {}", "[1, {\"a\": 1, \"b\": 0}]",
     "{\"b\": 2}", OK("[1, {\"a\": 1, \"b\": 2}]", "{}", "[]")},
    {"js object pattern after padding", JS, "function f(x, y, {a}) {}", "[1]", "{\"a\": 5}",
     OK("[1, null, {\"a\": 5}]", "{}", "[1]")},
    {"js object pattern fills a gap left by a named parameter", JS, "function f(a, {k}, c) {}", "[]",
     "{\"c\": 1, \"z\": 2}", OK("[null, {\"z\": 2}, 1]", "{}", "[0]")},
    {"js object pattern replaces an explicit null", JS, "function f(x, {a}) {}", "[1, null]", "{\"a\": 1}",
     OK("[1, {\"a\": 1}]", "{}", "[]")},
    {"js last object pattern wins", JS, "function f({a}, x, {b} = {}, y) {}", "[]", "{\"q\": 1}",
     OK("[null, null, {\"q\": 1}]", "{}", "[0, 1]")},
    {"js object pattern by the name fnbox infer gives it", JS, "function f({a, b = 2}, c) {}", "[]",
     "{\"$0\": {\"a\": 1}, \"c\": 3}", OK("[{\"a\": 1}, 3]", "{}", "[]")},
    {"js object pattern by name, then keywords merged into it", JS, "function f({a, b}, c) {}", NULL,
     "{\"$0\": {\"a\": 1}, \"b\": 2}", OK("[{\"a\": 1, \"b\": 2}]", "{}", "[]")},
    {"js object pattern by name fills a hole", JS, "function f({a}, c) {}", "[null, 3]", "{\"$0\": {\"a\": 1}}",
     OK("[{\"a\": 1}, 3]", "{}", "[]")},
    {"js object pattern named and passed", JS, "function f({a}) {}", "[{}]", "{\"$0\": {\"a\": 1}}",
     ERR("multiple values for parameter '$0'")},
    {"js object pattern given a non-object", JS, "function f({a}) {}", "[5]", "{\"a\": 1}",
     ERR("cannot be merged into argument 0")},
    {"js rest parameter: leftovers appended", JS, "function f(a, ...rest) {}", "[1, 2]", "{\"x\": 1}",
     OK("[1, 2, {\"x\": 1}]", "{}", "[]")},
    {"js last parameter already passed: appended", JS, "function f(a, opts) {}", "[1, {\"y\": 1}]", "{\"x\": 1}",
     OK("[1, {\"y\": 1}, {\"x\": 1}]", "{}", "[]")},
    {"js no parameters: appended", JS, "function f() {}", "[]", "{\"x\": 1}", OK("[{\"x\": 1}]", "{}", "[]")},
    {"js array pattern as last parameter takes the object", JS, "function f([a, b]) {}", NULL, "{\"x\": 1}",
     OK("[{\"x\": 1}]", "{}", "[]")},
    {"js keyword naming the rest parameter is a leftover", JS, "function f(...rest) {}", NULL, "{\"rest\": [1]}",
     OK("[{\"rest\": [1]}]", "{}", "[]")},
    {"js arrow with an object pattern default", JS, "const f = async (x, {a} = {}) => a;", "[1]", "{\"a\": 2}",
     OK("[1, {\"a\": 2}]", "{}", "[]")},
    {"js nothing given", JS, "function f(a, b) {}", NULL, NULL, OK("[]", "{}", "[]")},
    /* ---- JavaScript, signature unknown ---- */
    {"js unknown signature appends kwargs", JS, NULL, "[1]", "{\"x\": 1}", OK("[1, {\"x\": 1}]", "{}", "[]")},
    {"js unknown signature, empty kwargs", JS, NULL, "[1]", "{}", OK("[1]", "{}", "[]")},
    {"js unknown signature, only kwargs", JS, NULL, NULL, "{\"a\": 1}", OK("[{\"a\": 1}]", "{}", "[]")},
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

/* Infers c->code and returns a copy of the list holding `f` (sig points into *list), or NULL sig. */
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

/* Runs one case; returns the call's result code (and leaves err filled). Checks outputs on success. */
static int run_case(const args_case *c, const fb_function_sig *sig, json_t *args, json_t *kwargs, fb_error *err,
                    bool check)
{
    fb_call_args out;
    memset(&out, 0xAB, sizeof out); /* must be fully initialized by the callee */
    int r = fb_normalize_args(c->lang, sig, args, kwargs, &out, err);
    if (r == 0) {
        if (check) {
            expect_json(c->label, "args", c->want_args, out.args);
            expect_json(c->label, "kwargs", c->want_kwargs, out.kwargs);
            expect_json(c->label, "undefined", c->want_undefined, out.undefined);
            assert_true(out.args != args);
            assert_true(out.kwargs != kwargs);
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
        /* the inputs are never modified */
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

/* The outputs are independent of the inputs: changing one never shows in the other. */
static void test_outputs_are_copies(void **state)
{
    (void)state;
    const char *src = "function f(x, {a}) {}";
    fb_sig_list list;
    fb_error err = {0};
    assert_int_equal(fb_infer_javascript(src, strlen(src), &list, &err), 0);
    json_t *args = parse("[[1, 2], {\"a\": {\"deep\": true}}]");
    json_t *kwargs = parse("{\"b\": [3]}");
    fb_call_args out;
    assert_int_equal(fb_normalize_args(JS, &list.funcs[0], args, kwargs, &out, &err), 0);
    json_array_append_new(json_array_get(out.args, 0), json_integer(9));
    json_object_set_new(json_object_get(json_array_get(out.args, 1), "a"), "deep", json_false());
    json_array_append_new(json_object_get(json_array_get(out.args, 1), "b"), json_integer(4));
    expect_json("copies", "input args", "[[1, 2], {\"a\": {\"deep\": true}}]", args);
    expect_json("copies", "input kwargs", "{\"b\": [3]}", kwargs);
    assert_int_equal(args->refcount, 1);
    assert_int_equal(kwargs->refcount, 1);
    fb_call_args_free(&out);
    fb_call_args_free(&out); /* idempotent */
    json_decref(args);
    json_decref(kwargs);
    fb_sig_list_free(&list);
}

static void test_malformed_inputs(void **state)
{
    (void)state;
    json_t *obj = parse("{}"), *arr = parse("[]"), *null = json_null();
    fb_call_args out;
    fb_error err = {0};
    assert_int_equal(fb_normalize_args(PY, NULL, obj, NULL, &out, &err), -1);
    assert_string_equal(fb_error_type(&err), "InvalidRequest");
    fb_error_clear(&err);
    assert_int_equal(fb_normalize_args(JS, NULL, NULL, arr, &out, &err), -1);
    assert_string_equal(fb_error_type(&err), "InvalidRequest");
    /* JSON null counts as absent */
    assert_int_equal(fb_normalize_args(JS, NULL, null, null, &out, &err), 0);
    expect_json("null inputs", "args", "[]", out.args);
    fb_call_args_free(&out);
    json_decref(obj);
    json_decref(arr);
}

/* Signatures built by hand, as a request schema would give them: no name, a VAR_KEYWORD in JS, a
 * destructured parameter without keys (array pattern). */
static void test_hand_built_signatures(void **state)
{
    (void)state;
    fb_param py_params[] = {{.name = "a", .kind = FB_PARAM_POSITIONAL}};
    fb_function_sig anon = {.name = NULL, .params = py_params, .nparams = 1};
    json_t *args = parse("[1, 2]");
    fb_call_args out;
    fb_error err = {0};
    assert_int_equal(fb_normalize_args(PY, &anon, args, NULL, &out, &err), -1);
    assert_non_null(strstr(err.message, "function() takes 1 but 2 were given"));
    json_decref(args);

    fb_param js_params[] = {{.name = "a", .kind = FB_PARAM_POSITIONAL},
                            {.name = "args", .kind = FB_PARAM_VAR_POSITIONAL},
                            {.name = "kwargs", .kind = FB_PARAM_VAR_KEYWORD}};
    fb_function_sig schema = {.name = "g", .params = js_params, .nparams = 3};
    json_t *kw = parse("{\"x\": 1}");
    args = parse("[1]");
    assert_int_equal(fb_normalize_args(JS, &schema, args, kw, &out, &err), 0);
    expect_json("schema js", "args", "[1, {\"x\": 1}]", out.args); /* *args is last in JS terms: appended */
    fb_call_args_free(&out);

    js_params[1].kind = FB_PARAM_POSITIONAL;
    js_params[1].name = "opts";
    assert_int_equal(fb_normalize_args(JS, &schema, args, kw, &out, &err), 0);
    expect_json("schema js opts", "args", "[1, {\"x\": 1}]", out.args);
    fb_call_args_free(&out);
    json_decref(args);
    json_decref(kw);
}

/* A driver's fb_arg_errors decide the type: `count` for arity and missing parameters, `name` for keyword
 * clashes; without them every mismatch is an ArgumentError (the table above). */
static void test_language_error_types(void **state)
{
    (void)state;
    static const struct {
        const char *code, *args, *kwargs, *want_type;
    } rows[] = {
        {"def f(a, b): pass", "[1]", "{}", "Count"},
        {"def f(a): pass", "[1, 2]", "{}", "Count"},
        {"def f(a, *, k): pass", "[1]", "{}", "Count"},
        {"def f(a): pass", "[1]", "{\"z\": 1}", "Name"},
        {"def f(a): pass", "[1]", "{\"a\": 1}", "Name"},
        {"def f(a, /): pass", "[]", "{\"a\": 1}", "Name"},
    };
    fb_lang_driver types = fb_lang_python, half = fb_lang_python;
    types.arg_errors = (fb_arg_errors){.count = "Count", .name = "Name"};
    half.arg_errors = (fb_arg_errors){.count = "Count", .name = NULL};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        fb_sig_list list = {0};
        fb_error err = {0};
        assert_int_equal(fb_infer_python(rows[i].code, strlen(rows[i].code), &list, &err), 0);
        json_t *args = parse(rows[i].args), *kw = parse(rows[i].kwargs);
        fb_call_args out;
        assert_int_equal(fb_normalize_args(&types, &list.funcs[0], args, kw, &out, &err), -1);
        assert_string_equal(fb_error_type(&err), rows[i].want_type);
        assert_int_equal(fb_normalize_args(&half, &list.funcs[0], args, kw, &out, &err), -1);
        assert_string_equal(fb_error_type(&err), strcmp(rows[i].want_type, "Count") == 0 ? "Count" : "ArgumentError");
        json_decref(args);
        json_decref(kw);
        fb_sig_list_free(&list);
    }
}

/* A v0.2 schema `input` places keywords by position before the language step (fb_param.by_position). */
static void test_schema_input_by_position(void **state)
{
    (void)state;
    static const fb_arg_errors types = {.count = "Count", .name = "Name"};
    static const struct {
        const fb_lang_driver *lang;
        const char *schema, *args, *kwargs;
        const char *want_args, *want_kwargs, *want_undefined; /* NULL want_args: error */
        const char *want_error;
    } rows[] = {
        {PY, "{\"input\": [{\"name\": \"a\"}, {\"name\": \"b\"}]}", "[]", "{\"b\": 2, \"a\": 1}", "[1, 2]",
         "{}", "[]", NULL},
        {PY, "{\"input\": {\"b\": {\"index\": 1}, \"a\": {\"index\": 0}}}", "[]", "{\"b\": 2, \"a\": 1}",
         "[1, 2]", "{}", "[]", NULL},
        {PY, "{\"input\": [{\"name\": \"a\"}, {\"name\": \"b\"}, {\"name\": \"c\"}]}", "[1]",
         "{\"c\": 3, \"b\": 2}", "[1, 2, 3]", "{}", "[]", NULL},
        {PY, "{\"input\": [{\"name\": \"a\"}, {\"name\": \"b\", \"required\": false}]}", "[null]", "{\"a\": 1}",
         "[1]", "{}", "[]", NULL},
        {PY, "{\"input\": [{\"name\": \"a\"}, {\"name\": \"b\", \"default\": [7]}, {\"name\": \"c\"}]}", "[1]",
         "{\"c\": 3}", "[1, [7], 3]", "{}", "[]", NULL},
        {JS, "{\"input\": [{\"name\": \"a\"}, {\"name\": \"b\", \"required\": false}, {\"name\": \"c\"}]}",
         "[1]", "{\"c\": 3}", "[1, null, 3]", "{}", "[1]", NULL},
        {PY, "{\"input\": [{\"name\": \"a\"}, {\"name\": \"b\", \"required\": false}, {\"name\": \"c\"}]}",
         "[1]", "{\"c\": 3}", "[1, null, 3]", "{}", "[]", NULL},
        {PY, "{\"input\": [{\"name\": \"a\"}, {\"name\": \"b\"}]}", "[]", "{\"b\": 2}", NULL, NULL, NULL,
         "Count: f() missing required argument 'a'"},
        /* JS raises nothing for a missing argument: `undefined` */
        {JS, "{\"input\": [{\"name\": \"a\"}, {\"name\": \"b\"}]}", "[]", "{\"b\": 2}", "[null, 2]", "{}", "[0]",
         NULL},
        {PY, "{\"input\": [{\"name\": \"a\"}, {\"name\": \"b\"}]}", "[1]", "{\"a\": 2}", NULL, NULL, NULL,
         "Name: f() got multiple values for parameter 'a'"},
        /* v0.1 params and a record without index name parameters only: keywords stay keywords */
        {PY, "{\"params\": [{\"name\": \"a\"}, {\"name\": \"b\"}]}", "[]", "{\"b\": 2, \"a\": 1}", "[]",
         "{\"b\": 2, \"a\": 1}", "[]", NULL},
        {PY, "{\"input\": {\"a\": {}, \"b\": {}}}", "[]", "{\"b\": 2, \"a\": 1}", "[]", "{\"b\": 2, \"a\": 1}",
         "[]", NULL},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        json_t *schema = parse(rows[i].schema), *args = parse(rows[i].args), *kw = parse(rows[i].kwargs);
        fb_function_sig sig;
        fb_error err = {0};
        assert_int_equal(fb_sig_from_schema(schema, "f", &sig, &err), 0);
        fb_call_args out;
        fb_lang_driver lang = *rows[i].lang;
        lang.arg_errors = types;
        int r = fb_normalize_args(&lang, &sig, args, kw, &out, &err);
        if (rows[i].want_args) {
            if (r != 0)
                fail_msg("row %zu: %s: %s", i, fb_error_type(&err), err.message);
            expect_json("by position", "args", rows[i].want_args, out.args);
            expect_json("by position", "kwargs", rows[i].want_kwargs, out.kwargs);
            expect_json("by position", "undefined", rows[i].want_undefined, out.undefined);
            fb_call_args_free(&out);
        } else {
            char got[FB_ERROR_TYPE_MAX + FB_ERROR_MSG_MAX + 2];
            snprintf(got, sizeof got, "%s: %s", fb_error_type(&err), err.message);
            if (r != -1 || strcmp(got, rows[i].want_error) != 0)
                fail_msg("row %zu: want [%s], got %d [%s]", i, rows[i].want_error, r, got);
        }
        fb_function_sig_free(&sig);
        json_decref(schema);
        json_decref(args);
        json_decref(kw);
    }
}

/* Choosing without functionName (lang/signature.h): `_helpers` are no candidates next to a public function. */
static void test_sig_list_choose(void **state)
{
    (void)state;
    static const struct {
        const char *code;
        bool skip;
        const char *want;   /* the chosen function, or NULL */
        size_t count;
        const char *names;
    } rows[] = {
        {"def _h(): pass\ndef main(): pass\n", true, "main", 1, "main"},
        {"def _h(): pass\ndef main(): pass\n", false, NULL, 2, "_h, main"},
        {"def _only(): pass\n", true, "_only", 1, "_only"},
        {"def _a(): pass\ndef _b(): pass\n", true, NULL, 2, "_a, _b"},
        {"def _h(): pass\ndef a(): pass\ndef b(): pass\n", true, NULL, 2, "a, b"},
        {"x = 1\n", true, NULL, 0, ""},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        fb_sig_list list = {0};
        fb_error err = {0};
        assert_int_equal(fb_infer_python(rows[i].code, strlen(rows[i].code), &list, &err), 0);
        char names[64];
        size_t n = 99;
        const fb_function_sig *f = fb_sig_list_choose(&list, rows[i].skip, &n, names, sizeof names);
        if (rows[i].want) {
            assert_non_null(f);
            assert_string_equal(f->name, rows[i].want);
        } else {
            assert_null(f);
        }
        assert_int_equal(n, rows[i].count);
        assert_string_equal(names, rows[i].names);
        char tiny[4]; /* a list longer than the buffer is cut, still terminated */
        fb_sig_list_choose(&list, rows[i].skip, &n, tiny, sizeof tiny);
        assert_true(strlen(tiny) < sizeof tiny);
        fb_sig_list_free(&list);
    }
}

/* ---- allocation failure torture ---- */

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
                /* with enough memory the answer is the table's */
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
    g_py = fb_lang_python;
    g_py.arg_errors = (fb_arg_errors){0};
    g_js = fb_lang_javascript;
    g_js.arg_errors = (fb_arg_errors){0};
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_outputs_are_copies),
        cmocka_unit_test(test_malformed_inputs),
        cmocka_unit_test(test_hand_built_signatures),
        cmocka_unit_test(test_language_error_types),
        cmocka_unit_test(test_sig_list_choose),
        cmocka_unit_test(test_schema_input_by_position),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
