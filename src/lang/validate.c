/* Strict argument validation against a request schema. Runs in the planner, before the sandbox. */
#include "lang/validate.h"

#include <stdbool.h>
#include <string.h>

#include "lang/jsonschema.h"

#define ARG_ERR(...) fb_set_error(err, FB_ERR_ARGUMENT, 0, __VA_ARGS__)

static bool type_ok(unsigned mask, const json_t *v)
{
    unsigned got = fb_jt_from_name(fb_json_type_of(v));
    if (mask & got)
        return true;
    return got == FB_JT_INTEGER && (mask & FB_JT_NUMBER); /* every integer is a number */
}

static int check_value(json_t *schema, const fb_param *p, const json_t *v, fb_error *err)
{
    json_t *spec = fb_schema_param_spec(schema, p->name);
    unsigned mask;
    const char *bad;
    if (fb_jt_parse(json_object_get(spec, "type"), &mask, &bad) < 0)
        return fb_set_error(err, FB_ERR_INVALID_REQUEST, 0,
                            "schema: parameter '%s': unknown type '%.64s' (use string, number, integer, boolean, "
                            "array, object, null or any)", p->name, bad);
    if (json_is_true(json_object_get(spec, "nullable")))
        mask |= FB_JT_NULL;
    if (type_ok(mask, v))
        return 0;
    char want[96];
    return ARG_ERR("argument '%s': expected %s, got %s", p->name, fb_jt_describe(mask, want, sizeof want),
                   fb_json_type_of(v));
}

static bool is_named(const fb_param *p)
{
    return p->kind != FB_PARAM_VAR_POSITIONAL && p->kind != FB_PARAM_VAR_KEYWORD;
}

int fb_validate_args(json_t *schema, const fb_function_sig *sig, json_t *args, json_t *kwargs, fb_error *err)
{
    size_t nnamed = 0;
    bool variadic = false, var_kw = false;
    for (size_t i = 0; i < sig->nparams; i++) {
        if (is_named(&sig->params[i]))
            nnamed++;
        variadic |= sig->params[i].kind == FB_PARAM_VAR_POSITIONAL;
        var_kw |= sig->params[i].kind == FB_PARAM_VAR_KEYWORD;
    }
    size_t nargs = json_array_size(args);
    if (nargs > nnamed && !variadic)
        return ARG_ERR("too many positional arguments: the schema declares %zu parameter%s but %zu were given",
                       nnamed, nnamed == 1 ? "" : "s", nargs);
    const char *key;
    json_t *v;
    json_object_foreach(kwargs, key, v) {
        const fb_function_sig *s = sig;
        bool known = false;
        for (size_t i = 0; i < s->nparams && !known; i++)
            known = is_named(&s->params[i]) && strcmp(s->params[i].name, key) == 0;
        if (!known && !var_kw)
            return ARG_ERR("unknown parameter '%s': the schema does not declare it", key);
    }
    /* Schema parameters are positional in declaration order: params[i] takes args[i]. */
    for (size_t i = 0, pos = 0; i < sig->nparams; i++) {
        const fb_param *p = &sig->params[i];
        if (!is_named(p))
            continue;
        json_t *given = pos < nargs ? json_array_get(args, pos) : NULL;
        json_t *named = json_object_get(kwargs, p->name);
        pos++;
        if (named && (!given || json_is_null(given)))
            given = named; /* a keyword fills a null hole */
        if (!given) {
            if (!p->has_default)
                return ARG_ERR("missing required argument '%s'", p->name);
            continue;
        }
        if (check_value(schema, p, given, err) < 0)
            return -1;
    }
    return 0;
}
