/* C and C++ argument normalization (the normalize of fb_lang_c and fb_lang_cpp): the generated main passes
 * arguments by position in declaration order (c_dispatch.c), and the program reads only `args`, so every
 * keyword must become a positional argument here, before anything is compiled:
 *  - a keyword names a parameter and is placed at its index, when every parameter before it is given too
 *    (a C++ default argument cannot be skipped to reach a later one);
 *  - hole-filling as in args.c: a JSON null at index i whose parameter is named in kwargs takes that value;
 *  - too many or too few arguments, an unknown keyword and a parameter given twice are fnbox's ArgumentError
 *    (the languages have no runtime check of their own to mirror), naming the parameter.
 * A keyword naming no parameter is accepted only when a schema says the function takes any (acceptsKwargs);
 * it then reaches nothing, as C has no way to receive it. Without a signature everything passes through and
 * the program's own count check (fnbox__read_args) reports a mismatch. */
#include <stdbool.h>

#include "lang/args.h"


/* Every keyword names a parameter not given by position (placed by fb_args_place_named). */
static int check_keywords(const fb_function_sig *sig, const fb_arg_errors *types, const fb_call_args *ca,
                          bool any_keyword, fb_error *err)
{
    size_t nargs = json_array_size(ca->args);
    const char *key;
    json_t *v;
    json_object_foreach(ca->kwargs, key, v) {
        size_t idx = 0;
        const fb_param *p = fb_args_find(sig, key, &idx);
        if (p && fb_args_is_positional(p) && idx < nargs)
            return FB_ARGS_NAME_ERR("%s() got multiple values for parameter '%s'", fb_args_fname(sig), key);
        if (!(p && fb_args_is_positional(p)) && !any_keyword)
            return FB_ARGS_NAME_ERR("%s() got an unexpected keyword argument '%s'", fb_args_fname(sig), key);
    }
    return 0;
}

/* The first required parameter past the arguments given (one exists when fewer than the required count
 * were given). */
static int missing(const fb_function_sig *sig, const fb_arg_errors *types, size_t nargs, fb_error *err)
{
    size_t i = nargs;
    const fb_param *p = fb_args_positional(sig, i);
    while (p && p->has_default)
        p = fb_args_positional(sig, ++i);
    return FB_ARGS_COUNT_ERR("%s() missing required argument '%s'", fb_args_fname(sig), p && p->name ? p->name : "?");
}

int fb_normalize_c(const fb_function_sig *sig, const fb_arg_errors *types, fb_call_args *ca, fb_error *err)
{
    if (!sig)
        return 0;
    fb_args_shape shape = fb_args_shape_of(sig); /* a `...` rest is refused later, before compiling */
    size_t npos = shape.npos, nreq = shape.nreq;
    bool variadic = shape.var_positional, any_keyword = shape.var_keyword;
    if (fb_args_fill_holes(sig, ca, err) < 0 || check_keywords(sig, types, ca, any_keyword, err) < 0 ||
        fb_args_place_named(sig, types, "arguments are passed by position", ca, err) < 0)
        return -1;
    size_t nargs = json_array_size(ca->args);
    if (nargs > npos && !variadic)
        return FB_ARGS_COUNT_ERR("too many positional arguments: %s() takes %zu but %zu were given",
                                 fb_args_fname(sig), npos, nargs);
    return nargs < nreq ? missing(sig, types, nargs, err) : 0;
}
