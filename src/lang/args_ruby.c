/* Ruby argument normalization (fb_lang_ruby's normalize): the harness calls `f(*args, **kwargs)` with kwargs
 * keys as Symbols, so what Ruby itself cannot do must be settled here, before any code runs:
 *  - a keyword naming a positional parameter (`def f(a, b = 2)` with {"b": 3}) becomes a positional argument:
 *    Ruby has no call syntax that passes a positional parameter by name. It is placed at its index when every
 *    positional parameter before it is given too; otherwise the call is refused (Ruby cannot skip an
 *    optional positional parameter, so silently shifting the value into the wrong parameter is worse);
 *  - hole-filling as in args.c: a JSON null at index i whose parameter is named in kwargs takes that value;
 *  - keywords naming keyword parameters (`k:`, `k: 1`) stay keywords, others need `**opts`;
 *  - arity, missing required positional or keyword parameters, and a parameter given twice are reported as
 *    ArgumentError naming the parameter.
 * Without a signature everything passes through: Ruby's own ArgumentError then reports any mismatch. */
#include <stdbool.h>

#include "lang/args.h"


/* Every keyword: a positional parameter not given by position (placed by fb_args_place_named), a keyword
 * parameter, or **opts. */
static int check_keywords(const fb_function_sig *sig, const fb_arg_errors *types, const fb_call_args *ca,
                          bool varkw, fb_error *err)
{
    size_t nargs = json_array_size(ca->args);
    const char *key;
    json_t *v;
    json_object_foreach(ca->kwargs, key, v) {
        size_t idx = 0;
        const fb_param *p = fb_args_find(sig, key, &idx);
        if (p && fb_args_is_positional(p)) {
            if (idx < nargs)
                return FB_ARGS_NAME_ERR("%s() got multiple values for parameter '%s'", fb_args_fname(sig), key);
            continue;
        }
        if (p && p->kind == FB_PARAM_KEYWORD_ONLY)
            continue;
        if (!varkw) /* unknown, or the name of *rest / **opts themselves */
            return FB_ARGS_NAME_ERR("%s() got an unexpected keyword argument '%s'", fb_args_fname(sig), key);
    }
    return 0;
}

/* Too few positional arguments: Ruby fills required parameters first (also those after optional ones:
 * `def f(a, b = 1, c)`), so the first required one past the given count is missing; failing that, the
 * last required one. */
static int missing_positional(const fb_function_sig *sig, const fb_arg_errors *types, size_t nargs, size_t npos,
                              fb_error *err)
{
    const fb_param *miss = NULL, *last = NULL;
    for (size_t i = 0; i < npos; i++) {
        const fb_param *p = fb_args_positional(sig, i);
        if (p->has_default)
            continue;
        last = p;
        if (i >= nargs && !miss)
            miss = p;
    }
    if (!miss)
        miss = last;
    return FB_ARGS_COUNT_ERR("%s() missing required argument '%s'", fb_args_fname(sig),
                             miss && miss->name ? miss->name : "?");
}

int fb_normalize_ruby(const fb_function_sig *sig, const fb_arg_errors *types, fb_call_args *ca, fb_error *err)
{
    if (!sig)
        return 0;
    fb_args_shape shape = fb_args_shape_of(sig);
    size_t npos = shape.npos, nreq = shape.nreq;
    bool varargs = shape.var_positional, varkw = shape.var_keyword;
    if (fb_args_fill_holes(sig, ca, err) < 0 || check_keywords(sig, types, ca, varkw, err) < 0 ||
        fb_args_place_named(sig, types, "Ruby binds positional parameters in order", ca, err) < 0)
        return -1;
    size_t nargs = json_array_size(ca->args);
    if (nargs > npos && !varargs)
        return FB_ARGS_COUNT_ERR("too many positional arguments: %s() takes %zu but %zu were given",
                                 fb_args_fname(sig), npos, nargs);
    if (nargs < nreq)
        return missing_positional(sig, types, nargs, npos, err);
    for (size_t j = 0; j < sig->nparams; j++) {
        const fb_param *p = &sig->params[j];
        if (p->kind == FB_PARAM_KEYWORD_ONLY && !p->has_default && p->name && !json_object_get(ca->kwargs, p->name))
            return FB_ARGS_COUNT_ERR("%s() missing required keyword argument '%s'", fb_args_fname(sig), p->name);
    }
    return 0;
}
