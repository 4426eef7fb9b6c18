/* JavaScript argument normalization (fb_lang_javascript's normalize): JS has no keyword arguments, so every
 * keyword becomes a positional argument before the call. A keyword naming a parameter takes that
 * parameter's slot (slots skipped on the way are `undefined`, so the function's defaults apply); the
 * leftovers become one options object, placed in the last object pattern `{a, b}`, else in the last
 * parameter when it was not passed, else after all arguments. JS checks no arity, so neither does this;
 * out->kwargs is always empty afterwards. Hole-filling as args.c describes it. */
#include <errno.h>
#include <stdbool.h>

#include "lang/args.h"


static int oom(fb_error *err)
{
    return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "argument normalization");
}

/* A JS parameter a keyword can name: a plain one, or a destructuring pattern by the name `fnbox infer`
 * gives it ("$<index>"), which then takes the whole object. */
static bool js_named(const fb_param *p)
{
    return p->name && (p->kind == FB_PARAM_POSITIONAL || p->kind == FB_PARAM_DESTRUCTURED);
}

/* A JSON null at index i takes the keyword naming the i-th parameter (every parameter has a slot in JS). */
static int fill_holes(const fb_function_sig *sig, fb_call_args *ca)
{
    size_t nargs = json_array_size(ca->args);
    for (size_t i = 0; i < nargs && i < sig->nparams; i++) {
        const fb_param *p = &sig->params[i];
        json_t *v = js_named(p) && json_is_null(json_array_get(ca->args, i)) ? json_object_get(ca->kwargs, p->name)
                                                                              : NULL;
        if (v && (json_array_set(ca->args, i, v) < 0 || json_object_del(ca->kwargs, p->name) < 0))
            return -1;
    }
    return 0;
}

/* Appends JSON nulls to ca->args until it holds `upto` elements, recording each new index as undefined. */
static int pad_undefined(fb_call_args *ca, size_t upto)
{
    for (size_t k = json_array_size(ca->args); k < upto; k++) {
        if (json_array_append_new(ca->args, json_null()) < 0 ||
            json_array_append_new(ca->undefined, json_integer((json_int_t)k)) < 0)
            return -1;
    }
    return 0;
}

static void unmark_undefined(fb_call_args *ca, size_t index)
{
    for (size_t u = 0; u < json_array_size(ca->undefined); u++) {
        if (json_integer_value(json_array_get(ca->undefined, u)) == (json_int_t)index) {
            json_array_remove(ca->undefined, u);
            return;
        }
    }
}

/* Moves all of ca->kwargs (as one object) to args[index]: appended after padding, merged over an object
 * already there, or put in place of a null. Returns -1 with err set. */
static int place_options(const fb_function_sig *sig, fb_call_args *ca, size_t index, fb_error *err)
{
    json_t *opts = ca->kwargs;
    ca->kwargs = json_object();
    if (!ca->kwargs) {
        ca->kwargs = opts;
        return oom(err);
    }
    size_t len = json_array_size(ca->args);
    if (index >= len) {
        if (pad_undefined(ca, index) < 0) {
            json_decref(opts);
            return oom(err);
        }
        return json_array_append_new(ca->args, opts) < 0 ? oom(err) : 0;
    }
    json_t *cur = json_array_get(ca->args, index);
    if (json_is_object(cur)) {
        /* cur belongs to ca (a deep copy of the request's argument), so updating it in place is safe */
        int r = json_object_update(cur, opts);
        json_decref(opts);
        return r < 0 ? oom(err) : 0;
    }
    if (json_is_null(cur)) {
        unmark_undefined(ca, index);
        return json_array_set_new(ca->args, index, opts) < 0 ? oom(err) : 0;
    }
    json_decref(opts);
    return fb_set_error(err, FB_ERR_ARGUMENT, 0,
                        "%s(): keyword arguments cannot be merged into argument %zu, which is not an object",
                        fb_args_fname(sig), index);
}

/* Keywords naming a parameter: args extended up to the furthest one, gaps `undefined`. */
static int place_named(const fb_function_sig *sig, const fb_arg_errors *types, fb_call_args *ca, fb_error *err)
{
    size_t nargs = json_array_size(ca->args), newlen = nargs;
    for (size_t j = 0; j < sig->nparams; j++) {
        const fb_param *p = &sig->params[j];
        if (!js_named(p) || !json_object_get(ca->kwargs, p->name))
            continue;
        if (j < nargs)
            return FB_ARGS_NAME_ERR("%s() got multiple values for parameter '%s'", fb_args_fname(sig), p->name);
        if (j + 1 > newlen)
            newlen = j + 1;
    }
    for (size_t k = nargs; k < newlen; k++) {
        const fb_param *p = &sig->params[k];
        json_t *v = js_named(p) ? json_object_get(ca->kwargs, p->name) : NULL;
        if (v ? json_array_append(ca->args, v) < 0 : pad_undefined(ca, k + 1) < 0)
            return oom(err);
    }
    for (size_t k = nargs; k < newlen; k++)
        if (js_named(&sig->params[k]))
            json_object_del(ca->kwargs, sig->params[k].name); /* absent (a gap) is fine */
    return 0;
}

/* Where the leftovers go: the last object pattern if any, else the last parameter if it was not passed
 * and is not a rest parameter, else after all arguments. An object pattern is recognised by keys != NULL
 * (even `{}` or `{...rest}`, which have no names). A VAR_KEYWORD parameter (only a schema can give a JS
 * function one) takes no argument slot. */
static size_t options_slot(const fb_function_sig *sig, const fb_call_args *ca)
{
    size_t target = (size_t)-1, last = (size_t)-1;
    for (size_t j = 0; j < sig->nparams; j++) {
        if (sig->params[j].kind == FB_PARAM_DESTRUCTURED && sig->params[j].keys)
            target = j;
        if (sig->params[j].kind != FB_PARAM_VAR_KEYWORD)
            last = j;
    }
    size_t len = json_array_size(ca->args);
    if (target == (size_t)-1 && last != (size_t)-1 && sig->params[last].kind != FB_PARAM_VAR_POSITIONAL && last >= len)
        target = last;
    return target == (size_t)-1 ? len : target;
}

int fb_normalize_javascript(const fb_function_sig *sig, const fb_arg_errors *types, fb_call_args *ca,
                            fb_error *err)
{
    if (!sig) /* unknown signature: the keywords are a trailing options object */
        return json_object_size(ca->kwargs) > 0 ? place_options(NULL, ca, json_array_size(ca->args), err) : 0;
    if (fill_holes(sig, ca) < 0)
        return oom(err);
    if (place_named(sig, types, ca, err) < 0)
        return -1;
    if (json_object_size(ca->kwargs) == 0)
        return 0;
    return place_options(sig, ca, options_slot(sig, ca), err);
}
