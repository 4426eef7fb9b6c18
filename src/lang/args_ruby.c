/* Ruby argument normalization (FB_ARGS_RUBY): the harness calls `f(*args, **kwargs)` with kwargs keys as
 * Symbols, so what Ruby itself cannot do must be settled here, before any code runs:
 *  - a keyword naming a positional parameter (`def f(a, b = 2)` with {"b": 3}) becomes a positional argument:
 *    Ruby has no call syntax that passes a positional parameter by name. It is placed at its index when every
 *    positional parameter before it is given too; otherwise the call is refused (Ruby cannot skip an
 *    optional positional parameter, so silently shifting the value into the wrong parameter is worse);
 *  - hole-filling as in args.c: a JSON null at index i whose parameter is named in kwargs takes that value;
 *  - keywords naming keyword parameters (`k:`, `k: 1`) stay keywords, others need `**opts`;
 *  - arity, missing required positional or keyword parameters, and a parameter given twice are reported as
 *    ArgumentError naming the parameter.
 * Without a signature everything passes through: Ruby's own ArgumentError then reports any mismatch. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "lang/args.h"

static const char *fname(const fb_function_sig *sig)
{
    return sig->name ? sig->name : "function";
}

/* The i-th positional parameter (required or optional), or NULL. */
static const fb_param *positional(const fb_function_sig *sig, size_t i)
{
    size_t n = 0;
    for (size_t j = 0; j < sig->nparams; j++) {
        if (sig->params[j].kind != FB_PARAM_POSITIONAL && sig->params[j].kind != FB_PARAM_POSITIONAL_ONLY)
            continue;
        if (n++ == i)
            return &sig->params[j];
    }
    return NULL;
}

/* The parameter named `name`, with its positional index in *index when it is positional. */
static const fb_param *find(const fb_function_sig *sig, const char *name, size_t *index)
{
    size_t n = 0;
    for (size_t j = 0; j < sig->nparams; j++) {
        const fb_param *p = &sig->params[j];
        bool pos = p->kind == FB_PARAM_POSITIONAL || p->kind == FB_PARAM_POSITIONAL_ONLY;
        if (p->name && strcmp(p->name, name) == 0) {
            *index = n;
            return p;
        }
        n += pos;
    }
    return NULL;
}

static int oom(fb_error *err)
{
    return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "argument normalization");
}

/* Also C and C++ (positional by declaration), whose driver gives no types: "ArgumentError" either way. */
#define COUNT_ERR(...) fb_set_arg_error(err, fb_arg_error_type(types, true), __VA_ARGS__)
#define NAME_ERR(...) fb_set_arg_error(err, fb_arg_error_type(types, false), __VA_ARGS__)

int fb_normalize_ruby(const fb_function_sig *sig, const fb_arg_errors *types, fb_call_args *ca, fb_error *err)
{
    if (!sig)
        return 0;
    size_t npos = 0, nreq = 0;
    bool varargs = false, varkw = false;
    for (size_t j = 0; j < sig->nparams; j++) {
        const fb_param *p = &sig->params[j];
        if (p->kind == FB_PARAM_POSITIONAL || p->kind == FB_PARAM_POSITIONAL_ONLY) {
            npos++;
            nreq += !p->has_default;
        }
        varargs |= p->kind == FB_PARAM_VAR_POSITIONAL;
        varkw |= p->kind == FB_PARAM_VAR_KEYWORD;
    }

    /* Hole-filling. */
    size_t nargs = json_array_size(ca->args);
    for (size_t i = 0; i < nargs; i++) {
        if (!json_is_null(json_array_get(ca->args, i)))
            continue;
        const fb_param *p = positional(sig, i);
        json_t *v = p && p->name ? json_object_get(ca->kwargs, p->name) : NULL;
        if (!v)
            continue;
        if (json_array_set(ca->args, i, v) < 0 || json_object_del(ca->kwargs, p->name) < 0)
            return oom(err);
    }

    /* Every keyword: a positional parameter (placed below), a keyword parameter, or **opts. */
    size_t furthest = 0; /* 1 + the furthest positional index named by a keyword */
    const char *key;
    json_t *v;
    json_object_foreach(ca->kwargs, key, v) {
        size_t idx = 0;
        const fb_param *p = find(sig, key, &idx);
        if (p && (p->kind == FB_PARAM_POSITIONAL || p->kind == FB_PARAM_POSITIONAL_ONLY)) {
            if (idx < nargs)
                return NAME_ERR("%s() got multiple values for parameter '%s'", fname(sig), key);
            if (idx + 1 > furthest)
                furthest = idx + 1;
            continue;
        }
        if (p && p->kind == FB_PARAM_KEYWORD_ONLY)
            continue;
        if (!varkw) /* unknown, or the name of *rest / **opts themselves */
            return NAME_ERR("%s() got an unexpected keyword argument '%s'", fname(sig), key);
    }

    /* Positional parameters named by keywords: appended in order, with no gap before them. */
    for (size_t i = nargs; i < furthest; i++) {
        const fb_param *p = positional(sig, i);
        json_t *val = p && p->name ? json_object_get(ca->kwargs, p->name) : NULL;
        if (!val) {
            const char *named = "?";
            for (size_t k = i + 1; k < furthest; k++) {
                const fb_param *q = positional(sig, k);
                if (q && q->name && json_object_get(ca->kwargs, q->name)) {
                    named = q->name;
                    break;
                }
            }
            if (p && !p->has_default)
                return COUNT_ERR("%s() missing required argument '%s'", fname(sig), p->name ? p->name : "?");
            return NAME_ERR("%s() cannot skip optional parameter '%s' to pass '%s' by name: Ruby binds "
                            "positional parameters in order, so give '%s' too",
                            fname(sig), p && p->name ? p->name : "?", named, p && p->name ? p->name : "?");
        }
        if (json_array_append(ca->args, val) < 0)
            return oom(err);
    }
    for (size_t i = nargs; i < furthest; i++)
        json_object_del(ca->kwargs, positional(sig, i)->name);
    nargs = json_array_size(ca->args);

    if (nargs > npos && !varargs)
        return COUNT_ERR("too many positional arguments: %s() takes %zu but %zu were given", fname(sig), npos,
                         nargs);
    if (nargs < nreq) {
        /* Ruby fills required parameters first (also those after optional ones: `def f(a, b = 1, c)`), so
         * the first required one past the given count is missing; failing that, the last required one. */
        const fb_param *miss = NULL, *last = NULL;
        for (size_t i = 0; i < npos; i++) {
            const fb_param *p = positional(sig, i);
            if (p->has_default)
                continue;
            last = p;
            if (i >= nargs && !miss)
                miss = p;
        }
        if (!miss)
            miss = last;
        return COUNT_ERR("%s() missing required argument '%s'", fname(sig), miss && miss->name ? miss->name : "?");
    }
    for (size_t j = 0; j < sig->nparams; j++) {
        const fb_param *p = &sig->params[j];
        if (p->kind == FB_PARAM_KEYWORD_ONLY && !p->has_default && p->name && !json_object_get(ca->kwargs, p->name))
            return COUNT_ERR("%s() missing required keyword argument '%s'", fname(sig), p->name);
    }
    return 0;
}
