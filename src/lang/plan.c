/* Call planning: pick the function, its signature and the final arguments. */
#include "lang/plan.h"

#include <stdlib.h>
#include <string.h>

#include "lang/validate.h"

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
    if (fb_normalize_args(in->lang, name ? sig : NULL, in->args, in->kwargs, &out->args, err) < 0)
        goto done;
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
    memset(p, 0, sizeof *p);
}
