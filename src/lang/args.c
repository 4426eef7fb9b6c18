/* Argument normalization: applies a language's calling convention to a request's args + kwargs before any
 * code runs, so that a mismatch that is certain from the signature is reported naming the parameter (with
 * the type the language itself would raise, fb_arg_errors) instead of surfacing later as the user's
 * function failing somewhere inside. This file holds the steps every language takes and those several
 * share; each convention is its driver's `normalize` (args_<language>.c).
 *
 * Conventions shared by all languages:
 *  - hole-filling: a JSON null at positional index i whose parameter is named in kwargs takes the keyword's
 *    value (clients that cannot express "skip this positional" send null plus the keyword);
 *  - inputs are never modified: out holds deep copies (or fresh values) owned by out. */
#include "lang/args.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "lang/lang.h"

const char *fb_arg_error_type(const fb_arg_errors *types, bool count)
{
    const char *t = types ? (count ? types->count : types->name) : NULL;
    return t; /* NULL: fnbox's own ArgumentError (fb_set_arg_error) */
}

static int oom(fb_error *err)
{
    return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "argument normalization");
}

static bool is_positional_kind(fb_param_kind k)
{
    return k == FB_PARAM_POSITIONAL || k == FB_PARAM_POSITIONAL_ONLY;
}

bool fb_args_is_positional(const fb_param *p)
{
    return is_positional_kind(p->kind);
}

fb_args_shape fb_args_shape_of(const fb_function_sig *sig)
{
    fb_args_shape s = {0};
    for (size_t j = 0; j < sig->nparams; j++) {
        const fb_param *p = &sig->params[j];
        s.npos += fb_args_is_positional(p);
        s.nreq += fb_args_is_positional(p) && !p->has_default;
        s.var_positional |= p->kind == FB_PARAM_VAR_POSITIONAL;
        s.var_keyword |= p->kind == FB_PARAM_VAR_KEYWORD;
    }
    return s;
}

const char *fb_args_fname(const fb_function_sig *sig)
{
    return sig && sig->name ? sig->name : "function";
}

const fb_param *fb_args_positional(const fb_function_sig *sig, size_t i)
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

const fb_param *fb_args_find(const fb_function_sig *sig, const char *name, size_t *index)
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

int fb_args_fill_holes(const fb_function_sig *sig, fb_call_args *ca, fb_error *err)
{
    size_t nargs = json_array_size(ca->args);
    for (size_t i = 0; i < nargs; i++) {
        if (!json_is_null(json_array_get(ca->args, i)))
            continue;
        const fb_param *p = fb_args_positional(sig, i);
        json_t *v = p && p->name ? json_object_get(ca->kwargs, p->name) : NULL;
        if (v && (json_array_set(ca->args, i, v) < 0 || json_object_del(ca->kwargs, p->name) < 0))
            return oom(err);
    }
    return 0;
}

/* 1 + the furthest positional index a keyword names past the given arguments (0: none). */
static size_t furthest_named(const fb_function_sig *sig, const fb_call_args *ca)
{
    size_t nargs = json_array_size(ca->args), furthest = 0;
    const char *key;
    json_t *v;
    json_object_foreach(ca->kwargs, key, v) {
        size_t idx = 0;
        const fb_param *p = fb_args_find(sig, key, &idx);
        if (p && is_positional_kind(p->kind) && idx >= nargs && idx + 1 > furthest)
            furthest = idx + 1;
    }
    return furthest;
}

/* The gap at positional index i, before a parameter named further on: missing when required, else the
 * language cannot skip it. */
static int gap_error(const fb_function_sig *sig, const fb_arg_errors *types, const char *why,
                     const fb_call_args *ca, size_t i, size_t furthest, fb_error *err)
{
    const fb_param *p = fb_args_positional(sig, i);
    const char *named = "?";
    for (size_t k = i + 1; k < furthest; k++) {
        const fb_param *q = fb_args_positional(sig, k);
        if (q && q->name && json_object_get(ca->kwargs, q->name)) {
            named = q->name;
            break;
        }
    }
    if (p && !p->has_default)
        return FB_ARGS_COUNT_ERR("%s() missing required argument '%s'", fb_args_fname(sig), p->name ? p->name : "?");
    return FB_ARGS_NAME_ERR("%s() cannot skip optional parameter '%s' to pass '%s' by name: %s, so give '%s' too",
                            fb_args_fname(sig),
                            p && p->name ? p->name : "?", named, why, p && p->name ? p->name : "?");
}

int fb_args_place_named(const fb_function_sig *sig, const fb_arg_errors *types, const char *why, fb_call_args *ca,
                        fb_error *err)
{
    size_t nargs = json_array_size(ca->args), furthest = furthest_named(sig, ca);
    for (size_t i = nargs; i < furthest; i++) {
        const fb_param *p = fb_args_positional(sig, i);
        json_t *val = p && p->name ? json_object_get(ca->kwargs, p->name) : NULL;
        if (!val)
            return gap_error(sig, types, why, ca, i, furthest, err);
        if (json_array_append(ca->args, val) < 0)
            return oom(err);
    }
    for (size_t i = nargs; i < furthest; i++)
        json_object_del(ca->kwargs, fb_args_positional(sig, i)->name);
    return 0;
}

/* The value for slot `k`, which no argument fills, before a keyword placed further on: the schema's default
 * when it gives one, else null (`undefined` in a language that has it, so the function's own default
 * applies). A required parameter there is missing, except in a language that binds a missing argument to
 * `undefined` and raises nothing (as without a schema). */
static int fill_gap(const fb_lang_driver *lang, const fb_function_sig *sig, const fb_param *p, size_t k,
                    fb_call_args *ca, fb_error *err)
{
    const fb_arg_errors *types = &lang->arg_errors;
    if (!p->has_default && !lang->missing_is_undefined)
        return FB_ARGS_COUNT_ERR("%s() missing required argument '%s'", fb_args_fname(sig), p->name ? p->name : "?");
    /* default_text is json_dumps of the schema's value: a big number in it is util/json.h's marked string,
     * which holds a NUL, so the text is read back with JSON_ALLOW_NUL and stays that number */
    json_t *v = p->default_text ? json_loads(p->default_text, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL) : json_null();
    if (!v || json_array_set_new(ca->args, k, v) < 0)
        return oom(err);
    if (!p->default_text && lang->missing_is_undefined &&
        json_array_append_new(ca->undefined, json_integer((json_int_t)k)) < 0)
        return oom(err);
    return 0;
}

/* 1 + the furthest positional slot a by-position keyword fills (a slot not given, or given null). */
static size_t furthest_by_position(const fb_function_sig *sig, const fb_call_args *ca)
{
    size_t furthest = 0, slot = 0;
    for (size_t j = 0; j < sig->nparams; j++) {
        const fb_param *p = &sig->params[j];
        if (!is_positional_kind(p->kind))
            continue;
        json_t *given = json_array_get(ca->args, slot++);
        if (p->by_position && p->name && json_object_get(ca->kwargs, p->name) && (!given || json_is_null(given)))
            furthest = slot;
    }
    return furthest;
}

/* A v0.2 schema `input` is positional (fb_param.by_position): a keyword naming one of its parameters goes to
 * that parameter's slot before the call, as the seed's normalizeArguments does, so a function declared with
 * only `*args` / `...rest` gets it too. Slots already given stay; a keyword for one is left for the
 * language step to report as "multiple values". A null slot takes the keyword (hole-filling). */
static int place_by_position(const fb_lang_driver *lang, const fb_function_sig *sig, fb_call_args *ca,
                             fb_error *err)
{
    /* Walks the parameters with a slot counter (not fb_args_positional per slot): a schema may list many. */
    size_t nargs = json_array_size(ca->args), furthest = furthest_by_position(sig, ca), slot = 0;
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
                return oom(err);
            if (fill_gap(lang, sig, p, i, ca, err) < 0)
                return -1;
            continue;
        }
        int r = i < nargs ? json_array_set(ca->args, i, v) : json_array_append(ca->args, v);
        if (r < 0 || json_object_del(ca->kwargs, p->name) < 0)
            return oom(err);
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

int fb_normalize_args(const fb_lang_driver *lang, const fb_function_sig *sig, json_t *args, json_t *kwargs,
                      fb_call_args *out, fb_error *err)
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
        oom(err);
        goto fail;
    }
    if (any_by_position(sig) && place_by_position(lang, sig, out, err) < 0)
        goto fail;
    if (lang->normalize(sig, &lang->arg_errors, out, err) < 0)
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
