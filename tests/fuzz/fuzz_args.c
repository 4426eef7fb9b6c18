/* Fuzz target: argument normalization (lang/args.h: fb_normalize_args with every driver's convention),
 * driven by a signature and args/kwargs decoded from the input. Input: up to three JSON documents
 * separated by a line "--":
 *
 *   {"style": "python", "name": "f", "params": [["a", 0, false], ["opts", 5, true, ["x", "y"]]]}
 *   --
 *   [1, null]          <- args (absent or empty: none)
 *   --
 *   {"a": 2}           <- kwargs
 *
 * The spec's "style" is a language name or alias (fb_lang_lookup; unknown: python). The signature comes
 * from the first of:
 *   "code"    - fb_plan_call with that language, "functionName" and "schema" (inference included), or
 *   "schema"  - fb_sig_from_schema + fb_validate_args when "strict" is true, then fb_normalize_args, or
 *   "params"  - built by hand: [name|null, kind (fb_param_kind, 0-5), has_default, keys|null], so kinds
 *               and shapes that inference never produces (no name, a JS **kwargs...) are reached too;
 *               "params": null or absent means the signature is unknown.
 * Checked: no crash, leak or UB; inputs never modified; outputs of the right types; JS leaves kwargs
 * empty and `undefined` holds distinct indexes of null arguments; other languages leave `undefined` empty. */
#include "fuzz_common.h"

#include "lang/args.h"
#include "lang/lang.h"
#include "lang/plan.h"
#include "lang/validate.h"

#define MAX_PARAMS 64

static char *str_or_null(json_t *v)
{
    const char *s = json_string_value(v);
    if (!s)
        return NULL;
    char *d = strdup(s);
    if (!d)
        abort();
    return d;
}

/* A hand-built signature (owned strings; fb_function_sig_free releases them). */
static void build_sig(json_t *spec, fb_function_sig *sig)
{
    memset(sig, 0, sizeof *sig);
    json_t *params = json_object_get(spec, "params");
    size_t n = json_array_size(params);
    if (n > MAX_PARAMS)
        n = MAX_PARAMS;
    sig->name = str_or_null(json_object_get(spec, "name"));
    sig->params = calloc(n ? n : 1, sizeof *sig->params);
    if (!sig->params)
        abort();
    sig->nparams = n;
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(params, i);
        fb_param *p = &sig->params[i];
        p->name = str_or_null(json_array_get(e, 0));
        json_int_t kind = json_integer_value(json_array_get(e, 1));
        p->kind = (fb_param_kind)((kind % 6 + 6) % 6);
        p->has_default = json_is_true(json_array_get(e, 2));
        if (p->has_default)
            p->default_text = strdup("0");
        json_t *keys = json_array_get(e, 3);
        if (json_is_array(keys)) {
            size_t nk = json_array_size(keys);
            p->keys = calloc(nk ? nk : 1, sizeof *p->keys);
            if (!p->keys)
                abort();
            for (size_t k = 0; k < nk; k++) {
                char *key = str_or_null(json_array_get(keys, k));
                if (key)
                    p->keys[p->nkeys++] = key;
            }
        }
    }
}

/* A mismatch is an ArgumentError, or the class the language itself raises (a driver's fb_arg_errors). */
static bool is_ok_error(const fb_error *err)
{
    static const char *const ok[] = {"ArgumentError", "InvalidRequest", "OutOfMemory", "AmbiguousFunction",
                                     "TypeError",     "ArgumentCountError", "Error"};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
        if (strcmp(fb_error_type(err), ok[i]) == 0)
            return true;
    return false;
}

static void check_output(const fb_lang_driver *lang, const fb_call_args *out)
{
    FUZZ_CHECK(json_is_array(out->args) && json_is_object(out->kwargs) && json_is_array(out->undefined),
               "outputs of the wrong type");
    if (lang != &fb_lang_javascript) {
        FUZZ_CHECK(json_array_size(out->undefined) == 0, "undefined filled for %s", lang->name);
        return;
    }
    FUZZ_CHECK(json_object_size(out->kwargs) == 0, "JS kwargs left non-empty");
    size_t n = json_array_size(out->undefined);
    for (size_t i = 0; i < n; i++) {
        json_t *u = json_array_get(out->undefined, i);
        FUZZ_CHECK(json_is_integer(u), "undefined[%zu] is not an integer", i);
        json_int_t k = json_integer_value(u);
        FUZZ_CHECK(k >= 0 && (size_t)k < json_array_size(out->args), "undefined index %lld out of range",
                   (long long)k);
        FUZZ_CHECK(json_is_null(json_array_get(out->args, (size_t)k)), "undefined index %lld is not null",
                   (long long)k);
        for (size_t j = 0; j < i; j++)
            FUZZ_CHECK(json_integer_value(json_array_get(out->undefined, j)) != k, "undefined index repeated");
    }
}

static void normalize(const fb_lang_driver *lang, const fb_function_sig *sig, json_t *args, json_t *kwargs)
{
    fb_call_args out;
    fb_error err = {0};
    memset(&out, 0xAB, sizeof out); /* the callee must initialize everything */
    if (fb_normalize_args(lang, sig, args, kwargs, &out, &err) == 0) {
        check_output(lang, &out);
        fb_call_args_free(&out);
    } else {
        FUZZ_CHECK(is_ok_error(&err), "unexpected error type %s: %s", fb_error_type(&err), err.message);
        FUZZ_CHECK(!out.args && !out.kwargs && !out.undefined, "a failed normalization left data behind");
    }
}

/* As fnbox_call: args is an array and kwargs an object (fb_request_parse guarantees both). */
static void via_plan(const fb_lang_driver *lang, json_t *spec, json_t *args, json_t *kwargs)
{
    json_t *a = json_is_array(args) ? json_incref(args) : json_array();
    json_t *k = json_is_object(kwargs) ? json_incref(kwargs) : json_object();
    json_t *code = json_object_get(spec, "code");
    json_t *schema = json_object_get(spec, "schema");
    fb_plan_input in = {.lang = lang, .code = json_string_value(code), .code_len = json_string_length(code),
                        .function_name = json_string_value(json_object_get(spec, "functionName")),
                        .schema = json_is_object(schema) ? schema : NULL,
                        .args = a, .kwargs = k};
    fb_call_plan plan;
    fb_error err = {0};
    if (fb_plan_call(&in, &plan, &err) == 0) {
        check_output(lang, &plan.args);
        fb_call_plan_free(&plan);
    } else {
        FUZZ_CHECK(is_ok_error(&err), "unexpected error type %s: %s", fb_error_type(&err), err.message);
    }
    json_decref(a);
    json_decref(k);
}

static void via_schema(const fb_lang_driver *lang, json_t *spec, json_t *args, json_t *kwargs)
{
    json_t *schema = json_object_get(spec, "schema");
    fb_function_sig sig;
    fb_error err = {0};
    if (fb_sig_from_schema(schema, json_string_value(json_object_get(spec, "name")), &sig, &err) < 0) {
        FUZZ_CHECK(is_ok_error(&err), "unexpected error type %s: %s", fb_error_type(&err), err.message);
        return;
    }
    if (json_is_true(json_object_get(schema, "strict")) && json_is_array(args) && json_is_object(kwargs)) {
        fb_error verr = {0};
        if (fb_validate_args(schema, &sig, args, kwargs, &verr) < 0)
            FUZZ_CHECK(is_ok_error(&verr), "unexpected error type %s: %s", fb_error_type(&verr), verr.message);
    }
    normalize(lang, &sig, args, kwargs);
    fb_function_sig_free(&sig);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_piece pc[3] = {{0}};
    size_t n = fuzz_split(data, size, pc, 3);
    json_t *spec = fuzz_json(pc[0]);
    if (!json_is_object(spec)) {
        json_decref(spec);
        return 0;
    }
    json_t *args = n > 1 ? fuzz_json(pc[1]) : NULL;
    json_t *kwargs = n > 2 ? fuzz_json(pc[2]) : NULL;
    json_t *args0 = json_deep_copy(args), *kwargs0 = json_deep_copy(kwargs);

    const char *style_name = json_string_value(json_object_get(spec, "style"));
    const fb_lang_driver *lang = style_name ? fb_lang_lookup(style_name) : NULL;
    if (!lang)
        lang = &fb_lang_python;
    if (json_is_string(json_object_get(spec, "code"))) {
        via_plan(lang, spec, args, kwargs);
    } else if (json_is_object(json_object_get(spec, "schema"))) {
        via_schema(lang, spec, args, kwargs);
    } else {
        fb_function_sig sig;
        bool known = json_is_array(json_object_get(spec, "params"));
        if (known)
            build_sig(spec, &sig);
        normalize(lang, known ? &sig : NULL, args, kwargs);
        if (known)
            fb_function_sig_free(&sig);
    }

    FUZZ_CHECK(json_equal(args, args0) || (!args && !args0), "args were modified");
    FUZZ_CHECK(json_equal(kwargs, kwargs0) || (!kwargs && !kwargs0), "kwargs were modified");
    json_decref(args0);
    json_decref(kwargs0);
    json_decref(args);
    json_decref(kwargs);
    json_decref(spec);
    return 0;
}
