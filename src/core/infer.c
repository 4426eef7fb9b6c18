/* fnbox_infer: request -> which function -> signature (schema > inferred) -> JSON Schema / tool definition.
 * Nothing is run: this is the planner's first half plus lang/jsonschema.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "request/limits.h"
#include "core/result.h"
#include "fnbox.h"
#include "lang/jsonschema.h"
#include "lang/lang.h"
#include "lang/plan.h"
#include "util/json.h"

#define BAD(...) fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, __VA_ARGS__)

typedef struct infer_input {
    json_t *root; /* owned */
    const fb_lang_driver *lang;
    const char *code;
    size_t code_len;
    const char *name; /* borrowed from root; NULL when not given */
    json_t *schema;   /* borrowed; NULL when absent */
} infer_input;

static const char *const k_formats[] = {"jsonschema", "openai", "anthropic", "mcp"};

static int parse_input(const char *text, size_t len, infer_input *in, fb_error *err)
{
    if (len > FB_MAX_REQUEST_BYTES)
        return BAD("request: %zu bytes is more than the maximum of %llu", len, (unsigned long long)FB_MAX_REQUEST_BYTES);
    json_error_t jerr;
    in->root = fb_json_loadb(text, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &jerr);
    if (!in->root)
        return BAD("request: malformed JSON at line %d, column %d: %s", jerr.line, jerr.column, jerr.text);
    if (!json_is_object(in->root))
        return BAD("request: must be a JSON object");
    json_t *lang = json_object_get(in->root, "language");
    if (!json_is_string(lang))
        return BAD("language: required, a string (supported: %s)", fb_lang_supported());
    in->lang = fb_lang_lookup(json_string_value(lang));
    if (!in->lang)
        return BAD("language: unsupported language '%.64s'; supported: %s", json_string_value(lang),
                   fb_lang_supported());
    json_t *code = json_object_get(in->root, "code");
    if (!json_is_string(code))
        return BAD("code: required, a string");
    in->code = json_string_value(code);
    in->code_len = json_string_length(code);
    if (in->code_len > FB_MAX_CODE_BYTES)
        return BAD("code: %zu bytes is more than the maximum of %llu", in->code_len,
                   (unsigned long long)FB_MAX_CODE_BYTES);
    json_t *fn = json_object_get(in->root, "functionName");
    if (fn && !json_is_null(fn)) {
        if (!json_is_string(fn) || json_string_length(fn) == 0 || json_string_length(fn) > FB_MAX_NAME_BYTES)
            return BAD("functionName: must be a non-empty string");
        in->name = json_string_value(fn);
    }
    json_t *schema = json_object_get(in->root, "schema");
    if (schema && !json_is_null(schema)) {
        if (!json_is_object(schema))
            return BAD("schema: must be an object");
        in->schema = schema;
    }
    return 0;
}

static void list_names(const fb_sig_list *found, char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < found->nfuncs && n < size; i++)
        n += (size_t)snprintf(buf + n, size - n, "%s%s", i ? ", " : "", found->funcs[i].name);
}

/* Which function: the named one, else the only candidate (fb_sig_list_choose: the same rule as a call).
 * *sig is NULL when only a schema describes it. */
static int choose(const infer_input *in, const fb_sig_list *found, const char **name, const fb_function_sig **sig,
                  fb_error *err)
{
    char list[1024];
    list_names(found, list, sizeof list);
    if (in->name) {
        *name = in->name;
        *sig = fb_sig_list_find(found, in->name);
        if (!*sig && !in->schema)
            return fb_set_error(err, FB_ERR_FUNCTION_NOT_FOUND, 0,
                                "functionName: no top-level function '%.64s' in the code%s%s%s",
                                in->name, found->nfuncs ? " (it defines " : "", list, found->nfuncs ? ")" : "");
        return 0;
    }
    if (found->nfuncs == 0)
        return fb_set_error(err, FB_ERR_FUNCTION_NOT_FOUND, 0, "code: defines no top-level function to describe");
    size_t n = 0;
    *sig = fb_sig_list_choose(found, in->lang->underscore_private, &n, list, sizeof list); /* as a call does */
    if (!*sig)
        return fb_set_error(err, FB_ERR_AMBIGUOUS_FUNCTION, 0,
                            "functionName: the code defines %zu top-level functions (%s); name the one to describe",
                            n, list);
    *name = (*sig)->name;
    return 0;
}

static json_t *render(const char *format, const char *name, const char *desc, json_t *params, const char *source)
{
    if (strcmp(format, "openai") == 0)
        return json_pack("{s:s,s:{s:s,s:s,s:O}}", "type", "function", "function", "name", name, "description", desc,
                         "parameters", params);
    if (strcmp(format, "anthropic") == 0)
        return json_pack("{s:s,s:s,s:O}", "name", name, "description", desc, "input_schema", params);
    if (strcmp(format, "mcp") == 0)
        return json_pack("{s:s,s:s,s:O}", "name", name, "description", desc, "inputSchema", params);
    return json_pack("{s:s,s:s,s:O,s:s}", "name", name, "description", desc, "parameters", params,
                     "signatureSource", source);
}

static json_t *describe(const infer_input *in, const char *format, fb_error *err)
{
    fb_sig_list found = {0};
    fb_function_sig schema_sig = {0};
    const fb_function_sig *inferred = NULL, *sig;
    const char *name = NULL, *note = NULL;
    json_t *params = NULL, *out = NULL;
    char *summary = NULL, *desc = NULL;

    if (in->lang->infer(in->code, in->code_len, &found, err) < 0 || choose(in, &found, &name, &inferred, err) < 0)
        goto done;
    sig = inferred;
    if (in->schema) {
        if (fb_sig_from_schema(in->schema, name, &schema_sig, err) < 0)
            goto done;
        sig = &schema_sig;
    }
    params = fb_sig_jsonschema(sig, in->schema, inferred ? inferred->doc : NULL, &note, err);
    if (!params)
        goto done;
    const char *given = json_string_value(json_object_get(in->schema, "description"));
    summary = given ? strdup(given) : fb_doc_summary(inferred ? inferred->doc : NULL);
    if (summary && note) {
        size_t n = strlen(summary) + strlen(note) + 2;
        if ((desc = malloc(n)) != NULL)
            snprintf(desc, n, "%s%s%s", summary, *summary ? " " : "", note);
    } else if (summary) {
        desc = strdup(summary);
    }
    if (desc)
        out = render(format, name, desc, params, in->schema ? "schema" : "inferred");
    if (!out)
        fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "out of memory describing the function");
done:
    free(summary);
    free(desc);
    json_decref(params);
    fb_function_sig_free(&schema_sig);
    fb_sig_list_free(&found);
    return out;
}

FNBOX_API int fnbox_infer(const char *request, size_t request_len, const char *format, char **result,
                          size_t *result_len)
{
    fb_error err = {0};
    infer_input in = {0};
    json_t *out = NULL;
    *result = NULL;
    *result_len = 0;
    if (!format)
        format = k_formats[0];
    bool known = false;
    for (size_t i = 0; i < sizeof k_formats / sizeof *k_formats; i++)
        known |= strcmp(format, k_formats[i]) == 0;
    if (!known)
        fb_set_error(&err, FB_ERR_INVALID_REQUEST, 0,
                     "format: unknown format '%.64s' (jsonschema, openai, anthropic, mcp)",
                     format);
    else if (parse_input(request, request_len, &in, &err) == 0)
        out = describe(&in, format, &err);
    json_decref(in.root);
    if (out) {
        *result = fb_json_dumps(out, JSON_COMPACT | JSON_PRESERVE_ORDER);
        json_decref(out);
        if (!*result)
            return FNBOX_NO_RESULT;
        *result_len = strlen(*result);
        return FNBOX_OK;
    }
    if (fb_errkind_family(err.kind) == FB_ERRFAM_FNBOX)
        return FNBOX_NO_RESULT;
    fb_result res;
    if (fb_result_from_error(&res, &err, 1, 0) < 0)
        return FNBOX_NO_RESULT;
    *result = fb_result_render(&res, result_len);
    fb_result_free(&res);
    return *result ? FNBOX_INVALID_REQUEST : FNBOX_NO_RESULT;
}
