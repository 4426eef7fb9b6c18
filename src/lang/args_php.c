/* PHP argument normalization (fb_lang_php's normalize): positional arguments stay positional; kwargs naming
 * a declared parameter become PHP 8 named arguments (out->kwargs, passed as `$f(...$args, ...$kwargs)`);
 * every other kwarg is collected into ONE associative array appended after the positional arguments (the
 * seed's convention).
 *
 * With a known signature: JSON-null holes at index i take the kwarg naming parameter i (hole-filling); a
 * required parameter (no default, not variadic) given neither way is PHP's ArgumentCountError, a parameter
 * given both positionally and by name, or a trailing array with no parameter left to take it, PHP's Error
 * ("Named parameter $a overwrites previous argument", "Unknown named parameter $x"), each naming the
 * parameter (types from the driver, fb_arg_errors). Extra positional arguments are passed on: PHP accepts
 * them for a user function (func_get_args() sees them) and so does fnbox. A kwarg naming the variadic
 * parameter is not a named argument (PHP would collect it into the variadic array under that key): it goes
 * to the trailing array like any unknown name. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "lang/args.h"

static int oom(fb_error *err)
{
    return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "argument normalization");
}

/* Moves every kwarg not named in `keep` (a parameter list, or none) into one object appended to args. */
static int trailing_array(const fb_function_sig *sig, fb_call_args *ca, fb_error *err)
{
    json_t *named = json_object(), *rest = json_object();
    if (!named || !rest)
        goto fail;
    const char *key;
    json_t *v;
    json_object_foreach(ca->kwargs, key, v) {
        bool param = false;
        for (size_t j = 0; sig && j < sig->nparams; j++) {
            const fb_param *p = &sig->params[j];
            if (p->name && p->kind == FB_PARAM_POSITIONAL && strcmp(p->name, key) == 0) {
                param = true;
                break;
            }
        }
        if (json_object_set(param ? named : rest, key, v) < 0)
            goto fail;
    }
    if (json_object_size(rest) > 0) {
        if (json_array_append_new(ca->args, rest) < 0) {
            rest = NULL;
            goto fail;
        }
    } else {
        json_decref(rest);
    }
    json_decref(ca->kwargs);
    ca->kwargs = named;
    return 0;
fail:
    json_decref(named);
    json_decref(rest);
    return oom(err);
}


int fb_normalize_php(const fb_function_sig *sig, const fb_arg_errors *types, fb_call_args *out, fb_error *err)
{
    if (!sig)
        return trailing_array(NULL, out, err);

    size_t npos = 0;
    bool variadic = false;
    for (size_t j = 0; j < sig->nparams; j++) {
        if (sig->params[j].kind == FB_PARAM_VAR_POSITIONAL)
            variadic = true;
        else
            npos++;
    }
    /* hole-filling: a null at i whose parameter is named in kwargs takes the kwarg's value */
    size_t nargs = json_array_size(out->args);
    for (size_t i = 0; i < nargs && i < sig->nparams; i++) {
        const fb_param *p = &sig->params[i];
        if (!json_is_null(json_array_get(out->args, i)) || p->kind != FB_PARAM_POSITIONAL || !p->name)
            continue;
        json_t *v = json_object_get(out->kwargs, p->name);
        if (!v)
            continue;
        if (json_array_set(out->args, i, v) < 0 || json_object_del(out->kwargs, p->name) < 0)
            return oom(err);
    }
    /* the trailing array (kwargs naming no parameter) takes the next positional slot */
    const char *key, *leftover = NULL;
    json_t *v;
    json_object_foreach(out->kwargs, key, v) {
        bool param = false;
        for (size_t j = 0; j < sig->nparams && !param; j++)
            param = sig->params[j].kind == FB_PARAM_POSITIONAL && sig->params[j].name &&
                    strcmp(sig->params[j].name, key) == 0;
        if (!param) {
            leftover = key;
            break;
        }
    }
    size_t taken = nargs + (leftover != NULL);
    if (leftover && taken > npos && !variadic)
        return FB_ARGS_NAME_ERR("%s() got an unexpected keyword argument '%s' (no parameter is left for the trailing array)",
                                fb_args_fname(sig), leftover);
    for (size_t j = 0; j < sig->nparams; j++) {
        const fb_param *p = &sig->params[j];
        if (p->kind != FB_PARAM_POSITIONAL)
            continue;
        bool by_name = p->name && json_object_get(out->kwargs, p->name) != NULL;
        if (by_name && j < taken)
            return FB_ARGS_NAME_ERR("%s() got multiple values for parameter '%s'%s", fb_args_fname(sig), p->name,
                                    j >= nargs ? " (its position holds the trailing array)" : "");
        if (!by_name && j >= taken && !p->has_default)
            return FB_ARGS_COUNT_ERR("%s() missing required argument '%s'", fb_args_fname(sig),
                                     p->name ? p->name : "?");
    }
    return trailing_array(sig, out, err);
}
