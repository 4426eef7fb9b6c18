/* Planning a call: which function, with which signature (schema > inferred > convention), and the
 * normalized arguments the harness will pass. Runs before anything is sandboxed. */
#ifndef FB_PLAN_H
#define FB_PLAN_H
#include <jansson.h>

#include "lang/args.h"
#include "lang/lang.h"
#include "lang/signature.h"

typedef struct fb_call_plan {
    char *function_name;          /* NULL => body mode (owned) */
    const char *signature_source; /* "schema", "inferred" or "convention" (static) */
    fb_call_args args;            /* normalized (owned) */
} fb_call_plan;

typedef struct fb_plan_input {
    const fb_lang_driver *lang;
    const char *code;
    size_t code_len;
    const char *function_name;    /* NULL: choose (one function => it; none => body; several => error) */
    json_t *schema;               /* NULL or the request's schema object */
    json_t *args;                 /* array */
    json_t *kwargs;               /* object */
} fb_plan_input;

/* Errors: "AmbiguousFunction" (several candidates, none named), "ArgumentError" (a strict schema's check)
 * or the language's own type for arguments that do not fit (in->lang->arg_errors), "InvalidRequest" (a
 * malformed schema). */
int fb_plan_call(const fb_plan_input *in, fb_call_plan *out, fb_error *err);
void fb_call_plan_free(fb_call_plan *p);

/* Builds a signature from a request schema (v0.1 `params` list or v0.2 `input`). */
int fb_sig_from_schema(json_t *schema, const char *name, fb_function_sig *out, fb_error *err);

#endif
