/* Python argument normalization (fb_lang_python's normalize): the harness calls `f(*args, **kwargs)`, which
 * binds keywords to parameters as Python does, so only what Python would refuse is checked here, before any
 * code runs: too many positionals, an unknown keyword, a positional-only parameter passed by keyword, a
 * parameter given twice, a required one not given (with the driver's TypeError). Hole-filling as args.c
 * describes it. Without a signature everything passes through: Python then reports any mismatch. */
#include <stdbool.h>

#include "lang/args.h"


/* Every keyword names a positional parameter not given by position, a keyword-only one, or goes to
 * **kwargs. */
static int check_keywords(const fb_function_sig *sig, const fb_arg_errors *types, const fb_call_args *ca,
                          bool varkw, fb_error *err)
{
    size_t nargs = json_array_size(ca->args);
    const char *key;
    json_t *v;
    json_object_foreach(ca->kwargs, key, v) {
        size_t idx = 0;
        const fb_param *p = fb_args_find(sig, key, &idx);
        if (p && p->kind == FB_PARAM_POSITIONAL_ONLY) {
            if (varkw)
                continue; /* Python binds it to **kwargs */
            return FB_ARGS_NAME_ERR("%s() got positional-only argument '%s' passed as keyword argument",
                                    fb_args_fname(sig), key);
        }
        if (p && p->kind == FB_PARAM_POSITIONAL) {
            if (idx < nargs)
                return FB_ARGS_NAME_ERR("%s() got multiple values for parameter '%s'", fb_args_fname(sig), key);
            continue;
        }
        if (p && p->kind == FB_PARAM_KEYWORD_ONLY)
            continue;
        if (!varkw) /* unknown, or the name of *args / **kwargs themselves */
            return FB_ARGS_NAME_ERR("%s() got an unexpected keyword argument '%s'", fb_args_fname(sig), key);
    }
    return 0;
}

/* Every parameter without a default is given, by position or by keyword as its kind allows. */
static int check_required(const fb_function_sig *sig, const fb_arg_errors *types, const fb_call_args *ca,
                          fb_error *err)
{
    size_t nargs = json_array_size(ca->args), idx = 0;
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
            return FB_ARGS_COUNT_ERR("%s() missing required argument '%s'", fb_args_fname(sig),
                                     p->name ? p->name : "?");
    }
    return 0;
}

int fb_normalize_python(const fb_function_sig *sig, const fb_arg_errors *types, fb_call_args *ca, fb_error *err)
{
    if (!sig)
        return 0;
    size_t npos = 0;
    bool varargs = false, varkw = false;
    for (size_t j = 0; j < sig->nparams; j++) {
        fb_param_kind k = sig->params[j].kind;
        npos += k == FB_PARAM_POSITIONAL || k == FB_PARAM_POSITIONAL_ONLY;
        varargs |= k == FB_PARAM_VAR_POSITIONAL;
        varkw |= k == FB_PARAM_VAR_KEYWORD;
    }
    if (fb_args_fill_holes(sig, ca, err) < 0)
        return -1;
    size_t nargs = json_array_size(ca->args);
    if (nargs > npos && !varargs)
        return FB_ARGS_COUNT_ERR("too many positional arguments: %s() takes %zu but %zu were given",
                                 fb_args_fname(sig), npos, nargs);
    if (check_keywords(sig, types, ca, varkw, err) < 0)
        return -1;
    return check_required(sig, types, ca, err);
}
