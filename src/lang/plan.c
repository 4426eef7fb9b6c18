/* Call planning: pick the function, its signature and the final arguments. */
#include "lang/plan.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lang/validate.h"
#include "util/json.h"

#define SAFE_INT_MAX 9007199254740991LL /* 2^53 - 1: the largest integer a JS number holds exactly */

static int choose_function(const fb_plan_input *in, const fb_sig_list *found, const char **name, fb_error *err)
{
    *name = in->function_name;
    if (*name)
        return 0;
    char list[1024];
    size_t n = 0;
    const fb_function_sig *only = fb_sig_list_choose(found, in->lang->underscore_private, &n, list, sizeof list);
    if (only) {
        *name = only->name;
        return 0;
    }
    if (n == 0)
        return 0; /* body mode */
    return fb_set_error(err, FB_ERR_AMBIGUOUS_FUNCTION, 0,
                        "functionName: the code defines %zu top-level functions (%s); name the one to call", n,
                        list);
}

/* JS numbers lose integers beyond 2^53: send those as decimal strings with their paths, and the
 * harness makes them BigInts. */
static int collect_bigints(json_t *v, json_t *path, json_t *out)
{
    if (fb_json_bignum(v) && !strpbrk(fb_json_bignum(v), ".eE"))
        return json_array_append_new(out, json_copy(path));
    if (json_is_integer(v)) {
        json_int_t i = json_integer_value(v);
        if (i > SAFE_INT_MAX || i < -SAFE_INT_MAX)
            return json_array_append_new(out, json_copy(path));
        return 0;
    }
    if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++) {
            json_array_append_new(path, json_integer((json_int_t)i));
            int rc = collect_bigints(json_array_get(v, i), path, out);
            json_array_remove(path, json_array_size(path) - 1);
            if (rc < 0)
                return -1;
        }
    } else if (json_is_object(v)) {
        const char *key;
        json_t *child;
        json_object_foreach(v, key, child) {
            json_array_append_new(path, json_string(key));
            int rc = collect_bigints(child, path, out);
            json_array_remove(path, json_array_size(path) - 1);
            if (rc < 0)
                return -1;
        }
    }
    return 0;
}

static json_t *stringify_bigints(json_t *v)
{
    const char *big = fb_json_bignum(v);
    if (big && !strpbrk(big, ".eE"))
        return json_string(big);
    if (json_is_integer(v)) {
        json_int_t i = json_integer_value(v);
        if (i > SAFE_INT_MAX || i < -SAFE_INT_MAX) {
            char num[32];
            snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, i);
            return json_string(num);
        }
        return json_incref(v);
    }
    if (json_is_array(v)) {
        json_t *a = json_array();
        for (size_t i = 0; i < json_array_size(v); i++)
            json_array_append_new(a, stringify_bigints(json_array_get(v, i)));
        return a;
    }
    if (json_is_object(v)) {
        json_t *o = json_object();
        const char *key;
        json_t *child;
        json_object_foreach(v, key, child) {
            json_object_set_new(o, key, stringify_bigints(child));
        }
        return o;
    }
    return json_incref(v);
}

static int js_bigints(fb_call_plan *p)
{
    p->bigints = json_array();
    json_t *path = json_array();
    int rc = p->bigints && path ? collect_bigints(p->args.args, path, p->bigints) : -1;
    json_decref(path);
    if (rc == 0 && json_array_size(p->bigints) > 0) {
        json_t *s = stringify_bigints(p->args.args);
        json_decref(p->args.args);
        p->args.args = s;
    }
    return rc;
}

int fb_plan_call(const fb_plan_input *in, fb_call_plan *out, fb_error *err)
{
    memset(out, 0, sizeof *out);
    fb_sig_list found = {0};
    fb_function_sig schema_sig = {0};
    const fb_function_sig *sig = NULL;
    const char *name = NULL;
    int rc = -1;

    if (in->lang->infer(in->code, in->code_len, &found, err) < 0 || choose_function(in, &found, &name, err) < 0)
        goto done;
    if (in->schema) {
        if (fb_sig_from_schema(in->schema, name, &schema_sig, err) < 0)
            goto done;
        json_t *strict = json_object_get(in->schema, "strict");
        if (strict && !json_is_boolean(strict)) {
            fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, "schema.strict: must be a boolean");
            goto done;
        }
        if (json_is_true(strict) && fb_validate_args(in->schema, &schema_sig, in->args, in->kwargs, err) < 0)
            goto done;
        sig = &schema_sig;
        out->signature_source = "schema";
    } else if (name && (sig = fb_sig_list_find(&found, name)) != NULL) {
        out->signature_source = "inferred";
    } else {
        out->signature_source = name ? "convention" : "inferred";
    }
    if (!name && (json_array_size(in->args) > 0 || json_object_size(in->kwargs) > 0)) {
        fb_set_error(err, FB_ERR_ARGUMENT, 0,
                     "args: given, but the code defines no top-level function to call; set functionName");
        goto done;
    }
    if (name && !(out->function_name = strdup(name))) {
        fb_set_error(err, FB_ERR_OUT_OF_MEMORY, 0, "out of memory");
        goto done;
    }
    if (fb_normalize_args(in->lang->arg_style, &in->lang->arg_errors, name ? sig : NULL, in->args, in->kwargs,
                          &out->args, err) < 0)
        goto done;
    if (in->lang->arg_style == FB_ARGS_JAVASCRIPT && js_bigints(out) < 0) {
        fb_set_error(err, FB_ERR_OUT_OF_MEMORY, 0, "out of memory");
        goto done;
    }
    rc = 0;
done:
    fb_function_sig_free(&schema_sig);
    fb_sig_list_free(&found);
    if (rc < 0)
        fb_call_plan_free(out);
    return rc;
}

void fb_call_plan_free(fb_call_plan *p)
{
    free(p->function_name);
    fb_call_args_free(&p->args);
    json_decref(p->bigints);
    memset(p, 0, sizeof *p);
}
