/* Request schemas: v0.1 {"params": [{name, type, required, default}], "variadic", "acceptsKwargs"} and
 * v0.2 {"input": [{name, index?, ...}] | {name: {index, ...}}}. In v0.2 an array, or a record entry with an
 * `index`, places keyword arguments by position (fb_param.by_position). */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lang/plan.h"

#define BAD(...) fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, __VA_ARGS__)

static int add_param(fb_function_sig *sig, const char *name, json_t *spec, size_t at, bool by_position,
                     fb_error *err)
{
    if (!name || !*name)
        return BAD("schema: parameter %zu has no name", at);
    fb_param *p = &sig->params[at];
    if (p->name)
        return BAD("schema: parameter index %zu is given twice", at);
    p->name = strdup(name);
    if (!p->name)
        return BAD("schema: out of memory");
    p->kind = FB_PARAM_POSITIONAL;
    p->by_position = by_position;
    json_t *req = json_object_get(spec, "required");
    json_t *dflt = json_object_get(spec, "default");
    if (req && !json_is_boolean(req))
        return BAD("schema: parameter '%s': required must be a boolean", name);
    p->has_default = dflt != NULL || json_is_false(req);
    if (dflt)
        p->default_text = json_dumps(dflt, JSON_ENCODE_ANY | JSON_COMPACT);
    return 0;
}

static int from_list(json_t *list, const char *field, fb_function_sig *sig, fb_error *err)
{
    size_t n = json_array_size(list);
    sig->params = calloc(n + 2, sizeof *sig->params);
    if (!sig->params)
        return BAD("schema: out of memory");
    sig->nparams = n;
    for (size_t i = 0; i < n; i++) {
        json_t *spec = json_array_get(list, i);
        if (!json_is_object(spec))
            return BAD("schema.%s[%zu]: must be an object", field, i);
        json_t *idx = json_object_get(spec, "index");
        size_t at = i;
        if (idx) {
            if (!json_is_integer(idx) || json_integer_value(idx) < 0 || (size_t)json_integer_value(idx) >= n)
                return BAD("schema.%s[%zu].index: must be an integer from 0 to %zu", field, i, n - 1);
            at = (size_t)json_integer_value(idx);
        }
        /* v0.2 `input` is positional (the seed's normalizeArguments); v0.1 `params` names parameters only */
        bool by_position = strcmp(field, "input") == 0;
        if (add_param(sig, json_string_value(json_object_get(spec, "name")), spec, at, by_position, err) < 0)
            return -1;
    }
    return 0;
}

static int from_record(json_t *rec, fb_function_sig *sig, fb_error *err)
{
    size_t n = json_object_size(rec), i = 0;
    sig->params = calloc(n + 2, sizeof *sig->params);
    if (!sig->params)
        return BAD("schema: out of memory");
    sig->nparams = n;
    const char *key;
    json_t *spec;
    json_object_foreach(rec, key, spec) {
        if (!json_is_object(spec))
            return BAD("schema.input.%s: must be an object", key);
        json_t *idx = json_object_get(spec, "index");
        size_t at = i;
        if (idx) {
            if (!json_is_integer(idx) || json_integer_value(idx) < 0 || (size_t)json_integer_value(idx) >= n)
                return BAD("schema.input.%s.index: must be an integer from 0 to %zu", key, n - 1);
            at = (size_t)json_integer_value(idx);
        }
        if (add_param(sig, key, spec, at, idx != NULL, err) < 0) /* only an `index` makes it positional */
            return -1;
        i++;
    }
    return 0;
}

static int add_var(fb_function_sig *sig, const char *name, fb_param_kind kind)
{
    fb_param *p = &sig->params[sig->nparams];
    p->name = strdup(name);
    p->kind = kind;
    if (!p->name)
        return -1;
    sig->nparams++;
    return 0;
}

int fb_sig_from_schema(json_t *schema, const char *name, fb_function_sig *out, fb_error *err)
{
    memset(out, 0, sizeof *out);
    out->name = strdup(name ? name : "");
    json_t *params = json_object_get(schema, "params");
    json_t *input = json_object_get(schema, "input");
    int rc;
    if (params && input)
        rc = BAD("schema: give params (v0.1) or input (v0.2), not both");
    else if (json_is_array(params))
        rc = from_list(params, "params", out, err);
    else if (params)
        rc = BAD("schema.params: must be an array");
    else if (json_is_array(input))
        rc = from_list(input, "input", out, err);
    else if (json_is_object(input))
        rc = from_record(input, out, err);
    else if (input)
        rc = BAD("schema.input: must be an array or an object");
    else
        rc = from_list(NULL, "params", out, err); /* no parameters declared */
    if (rc == 0) {
        for (size_t i = 0; i < out->nparams; i++)
            if (!out->params[i].name) {
                rc = BAD("schema: no parameter has index %zu", i);
                break;
            }
    }
    if (rc == 0 && json_is_true(json_object_get(schema, "variadic")) && add_var(out, "args", FB_PARAM_VAR_POSITIONAL) < 0)
        rc = BAD("schema: out of memory");
    if (rc == 0 && json_is_true(json_object_get(schema, "acceptsKwargs")) && add_var(out, "kwargs", FB_PARAM_VAR_KEYWORD) < 0)
        rc = BAD("schema: out of memory");
    if (rc < 0)
        fb_function_sig_free(out);
    return rc;
}
