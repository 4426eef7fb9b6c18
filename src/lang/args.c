/* Argument normalization: applies a language's calling convention to a request's args + kwargs before any
 * code runs, so that a mismatch that is certain from the signature is reported naming the parameter (with
 * the type the language itself would raise, fb_arg_errors) instead of surfacing later as the user's
 * function failing somewhere inside.
 *
 * Conventions shared by both languages:
 *  - hole-filling: a JSON null at positional index i whose parameter is named in kwargs takes the keyword's
 *    value (clients that cannot express "skip this positional" send null plus the keyword);
 *  - inputs are never modified: out holds deep copies (or fresh values) owned by out. */
#include "lang/args.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

/* A mismatch reported with the language's own type (fb_arg_errors): `types` must be in scope. */
#define COUNT_ERR(...) fb_set_arg_error(err, fb_arg_error_type(types, true), __VA_ARGS__)
#define NAME_ERR(...) fb_set_arg_error(err, fb_arg_error_type(types, false), __VA_ARGS__)

const char *fb_arg_error_type(const fb_arg_errors *types, bool count)
{
    const char *t = types ? (count ? types->count : types->name) : NULL;
    return t; /* NULL: fnbox's own ArgumentError (fb_set_arg_error) */
}

static const char *fname(const fb_function_sig *sig)
{
    return sig && sig->name ? sig->name : "function";
}

static bool is_positional_kind(fb_param_kind k)
{
    return k == FB_PARAM_POSITIONAL || k == FB_PARAM_POSITIONAL_ONLY;
}

/* Python: the parameter bound by positional index i (the i-th positional-kind parameter), or NULL. */
static const fb_param *py_positional(const fb_function_sig *sig, size_t i)
{
    size_t n = 0;
    for (size_t j = 0; j < sig->nparams; j++) {
        if (!is_positional_kind(sig->params[j].kind))
            continue;
        if (n++ == i)
            return &sig->params[j];
    }
    return NULL;
}

/* The first parameter named `name` (and, if index is non-NULL, its positional index), or NULL. */
static const fb_param *py_find(const fb_function_sig *sig, const char *name, size_t *index)
{
    size_t n = 0;
    for (size_t j = 0; j < sig->nparams; j++) {
        const fb_param *p = &sig->params[j];
        if (p->name && strcmp(p->name, name) == 0) {
            if (index)
                *index = n;
            return p;
        }
        if (is_positional_kind(p->kind))
            n++;
    }
    return NULL;
}

/* A JS parameter a keyword can name: a plain one, or a destructuring pattern by the name `fnbox infer`
 * gives it ("$<index>"), which then takes the whole object. */
static bool js_named(const fb_param *p)
{
    return p->name && (p->kind == FB_PARAM_POSITIONAL || p->kind == FB_PARAM_DESTRUCTURED);
}

/* Step shared by both languages: fill JSON-null holes in args from kwargs (removing the keys used). Which
 * parameter index i binds differs: python counts positional kinds only, js uses the i-th parameter if a
 * keyword can name it (js_named). */
static int fill_holes(const fb_function_sig *sig, fb_call_args *ca, bool python)
{
    size_t nargs = json_array_size(ca->args);
    for (size_t i = 0; i < nargs; i++) {
        if (!json_is_null(json_array_get(ca->args, i)))
            continue;
        const fb_param *p;
        if (python)
            p = py_positional(sig, i);
        else
            p = i < sig->nparams && js_named(&sig->params[i]) ? &sig->params[i] : NULL;
        if (!p || !p->name)
            continue;
        json_t *v = json_object_get(ca->kwargs, p->name);
        if (!v)
            continue;
        if (json_array_set(ca->args, i, v) < 0 || json_object_del(ca->kwargs, p->name) < 0)
            return -1;
    }
    return 0;
}

/* Python: f(*args, **kwargs) with the signature's arity checked. */
static int normalize_python(const fb_function_sig *sig, const fb_arg_errors *types, fb_call_args *ca,
                            fb_error *err)
{
    size_t npos = 0;
    bool varargs = false, varkw = false;
    for (size_t j = 0; j < sig->nparams; j++) {
        fb_param_kind k = sig->params[j].kind;
        npos += is_positional_kind(k);
        varargs |= k == FB_PARAM_VAR_POSITIONAL;
        varkw |= k == FB_PARAM_VAR_KEYWORD;
    }
    if (fill_holes(sig, ca, true) < 0)
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "argument normalization");
    size_t nargs = json_array_size(ca->args);
    if (nargs > npos && !varargs)
        return COUNT_ERR("too many positional arguments: %s() takes %zu but %zu were given", fname(sig), npos, nargs);

    const char *key;
    json_t *v;
    json_object_foreach(ca->kwargs, key, v) {
        size_t idx = 0;
        const fb_param *p = py_find(sig, key, &idx);
        if (p && p->kind == FB_PARAM_POSITIONAL_ONLY) {
            if (varkw)
                continue; /* Python binds it to **kwargs */
            return NAME_ERR("%s() got positional-only argument '%s' passed as keyword argument", fname(sig), key);
        }
        if (p && p->kind == FB_PARAM_POSITIONAL) {
            if (idx < nargs)
                return NAME_ERR("%s() got multiple values for parameter '%s'", fname(sig), key);
            continue;
        }
        if (p && p->kind == FB_PARAM_KEYWORD_ONLY)
            continue;
        if (!varkw) /* unknown, or the name of *args / **kwargs themselves */
            return NAME_ERR("%s() got an unexpected keyword argument '%s'", fname(sig), key);
    }

    size_t idx = 0;
    for (size_t j = 0; j < sig->nparams; j++) {
        const fb_param *p = &sig->params[j];
        bool by_kw = p->name && json_object_get(ca->kwargs, p->name) != NULL;
        bool given;
        switch (p->kind) {
        case FB_PARAM_POSITIONAL_ONLY:
            given = idx++ < nargs;
            break;
        case FB_PARAM_POSITIONAL:
            given = idx++ < nargs || by_kw;
            break;
        case FB_PARAM_KEYWORD_ONLY:
            given = by_kw;
            break;
        default:
            continue; /* *args, **kwargs (and js-only kinds) are never required */
        }
        if (!given && !p->has_default)
            return COUNT_ERR("%s() missing required argument '%s'", fname(sig), p->name ? p->name : "?");
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
        goto oom;
    }
    size_t len = json_array_size(ca->args);
    if (index >= len) {
        if (pad_undefined(ca, index) < 0) {
            json_decref(opts);
            goto oom;
        }
        if (json_array_append_new(ca->args, opts) < 0)
            goto oom;
        return 0;
    }
    json_t *cur = json_array_get(ca->args, index);
    if (json_is_object(cur)) {
        /* cur belongs to ca (a deep copy of the request's argument), so updating it in place is safe */
        int r = json_object_update(cur, opts);
        json_decref(opts);
        return r < 0 ? fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "argument normalization") : 0;
    }
    if (json_is_null(cur)) {
        unmark_undefined(ca, index);
        if (json_array_set_new(ca->args, index, opts) < 0)
            goto oom;
        return 0;
    }
    json_decref(opts);
    return fb_set_error(err, FB_ERR_ARGUMENT, 0,
                        "%s(): keyword arguments cannot be merged into argument %zu, which is not an object",
                        fname(sig), index);
oom:
    return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "argument normalization");
}

/* JavaScript: kwargs mapped onto named parameters; leftovers become one options object. No arity checks. */
static int normalize_js(const fb_function_sig *sig, const fb_arg_errors *types, fb_call_args *ca, fb_error *err)
{
    if (fill_holes(sig, ca, false) < 0)
        goto oom;
    size_t nargs = json_array_size(ca->args);

    /* Keywords naming a parameter: extend args up to the furthest one, gaps are `undefined`. */
    size_t newlen = nargs;
    for (size_t j = 0; j < sig->nparams; j++) {
        const fb_param *p = &sig->params[j];
        if (!js_named(p) || !json_object_get(ca->kwargs, p->name))
            continue;
        if (j < nargs)
            return NAME_ERR("%s() got multiple values for parameter '%s'", fname(sig), p->name);
        if (j + 1 > newlen)
            newlen = j + 1;
    }
    for (size_t k = nargs; k < newlen; k++) {
        const fb_param *p = &sig->params[k];
        json_t *v = js_named(p) ? json_object_get(ca->kwargs, p->name) : NULL;
        if (v) {
            if (json_array_append(ca->args, v) < 0)
                goto oom;
        } else if (pad_undefined(ca, k + 1) < 0) {
            goto oom;
        }
    }
    for (size_t k = nargs; k < newlen; k++)
        if (js_named(&sig->params[k]))
            json_object_del(ca->kwargs, sig->params[k].name); /* absent (a gap) is fine */

    if (json_object_size(ca->kwargs) == 0)
        return 0;
    /* Leftovers: into the last object pattern `{a, b}` if any, else the last parameter if it was not passed
     * and is not a rest parameter, else after all arguments.
     * An object pattern is recognised by keys != NULL (even `{}` or `{...rest}`, which have no names).
     * A VAR_KEYWORD parameter (only a schema can give a JS function one) takes no argument slot. */
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
    if (target == (size_t)-1)
        target = len;
    return place_options(sig, ca, target, err);
oom:
    return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "argument normalization");
}

/* The value for slot `k`, which no argument fills, before a keyword placed further on: the schema's default
 * when it gives one, else null (in JS `undefined`, so the function's own default applies). A required
 * parameter there is missing, except in JS, which binds a missing argument to `undefined` and raises
 * nothing (as without a schema). */
static int fill_gap(fb_arg_style style, const fb_arg_errors *types, const fb_function_sig *sig, const fb_param *p,
                    size_t k, fb_call_args *ca, fb_error *err)
{
    if (!p->has_default && style != FB_ARGS_JAVASCRIPT)
        return COUNT_ERR("%s() missing required argument '%s'", fname(sig), p->name ? p->name : "?");
    /* default_text is json_dumps of the schema's value: a big number in it is util/json.h's marked string,
     * which holds a NUL, so the text is read back with JSON_ALLOW_NUL and stays that number */
    json_t *v = p->default_text ? json_loads(p->default_text, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL) : json_null();
    if (!v || json_array_set_new(ca->args, k, v) < 0)
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "argument normalization");
    if (!p->default_text && style == FB_ARGS_JAVASCRIPT &&
        json_array_append_new(ca->undefined, json_integer((json_int_t)k)) < 0)
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "argument normalization");
    return 0;
}

/* A v0.2 schema `input` is positional (fb_param.by_position): a keyword naming one of its parameters goes to
 * that parameter's slot before the call, as the seed's normalizeArguments does, so a function declared with
 * only `*args` / `...rest` gets it too. Slots already given stay; a keyword for one is left for the
 * language step to report as "multiple values". A null slot takes the keyword (hole-filling). */
static int place_by_position(fb_arg_style style, const fb_arg_errors *types, const fb_function_sig *sig,
                             fb_call_args *ca, fb_error *err)
{
    /* Walks the parameters with a slot counter (not py_positional per slot): a schema may list many. */
    size_t nargs = json_array_size(ca->args), furthest = 0, slot = 0;
    for (size_t j = 0; j < sig->nparams; j++) {
        const fb_param *p = &sig->params[j];
        if (!is_positional_kind(p->kind))
            continue;
        json_t *given = json_array_get(ca->args, slot++);
        if (p->by_position && p->name && json_object_get(ca->kwargs, p->name) && (!given || json_is_null(given)))
            furthest = slot;
    }
    slot = 0;
    for (size_t j = 0; j < sig->nparams && slot < furthest; j++) {
        const fb_param *p = &sig->params[j];
        if (!is_positional_kind(p->kind))
            continue;
        size_t i = slot++;
        json_t *given = json_array_get(ca->args, i);
        if (given && !json_is_null(given))
            continue;
        /* before the furthest placed keyword every slot is positional, whoever named it */
        json_t *v = p->name ? json_object_get(ca->kwargs, p->name) : NULL;
        if (!v) {
            if (i < nargs)
                continue; /* a null the caller gave stays null */
            if (json_array_append_new(ca->args, json_null()) < 0)
                return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "argument normalization");
            if (fill_gap(style, types, sig, p, i, ca, err) < 0)
                return -1;
            continue;
        }
        int r = i < nargs ? json_array_set(ca->args, i, v) : json_array_append(ca->args, v);
        if (r < 0 || json_object_del(ca->kwargs, p->name) < 0)
            return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "argument normalization");
    }
    return 0;
}

static bool any_by_position(const fb_function_sig *sig)
{
    for (size_t j = 0; sig && j < sig->nparams; j++)
        if (sig->params[j].by_position)
            return true;
    return false;
}

int fb_normalize_args(fb_arg_style style, const fb_arg_errors *types, const fb_function_sig *sig, json_t *args,
                      json_t *kwargs, fb_call_args *out, fb_error *err)
{
    memset(out, 0, sizeof *out);
    if (args && !json_is_null(args) && !json_is_array(args))
        return fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, "args must be a JSON array");
    if (kwargs && !json_is_null(kwargs) && !json_is_object(kwargs))
        return fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, "kwargs must be a JSON object");
    out->args = json_is_array(args) ? json_deep_copy(args) : json_array();
    out->kwargs = json_is_object(kwargs) ? json_deep_copy(kwargs) : json_object();
    out->undefined = json_array();
    if (!out->args || !out->kwargs || !out->undefined) {
        fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "argument normalization");
        goto fail;
    }
    int r = 0;
    if (any_by_position(sig) && place_by_position(style, types, sig, out, err) < 0)
        goto fail;
    if (style == FB_ARGS_PYTHON) {
        if (sig)
            r = normalize_python(sig, types, out, err);
    } else if (style == FB_ARGS_RUBY) {
        r = fb_normalize_ruby(sig, types, out, err);
    } else if (style == FB_ARGS_PHP) {
        r = fb_normalize_php(sig, types, out, err);
    } else if (sig) {
        r = normalize_js(sig, types, out, err);
    } else if (json_object_size(out->kwargs) > 0) {
        r = place_options(NULL, out, json_array_size(out->args), err);
    }
    if (r < 0)
        goto fail;
    return 0;
fail:
    fb_call_args_free(out);
    return -1;
}

void fb_call_args_free(fb_call_args *ca)
{
    if (!ca)
        return;
    json_decref(ca->args);
    json_decref(ca->kwargs);
    json_decref(ca->undefined);
    memset(ca, 0, sizeof *ca);
}
