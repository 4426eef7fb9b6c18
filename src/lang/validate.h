/* Strict schemas: with `schema.strict: true` the request's arguments are checked against the schema's
 * parameters before anything runs. */
#ifndef FB_VALIDATE_H
#define FB_VALIDATE_H
#include <jansson.h>

#include "lang/signature.h"
#include "util/error.h"

/* sig: the signature built from schema (fb_sig_from_schema); args: array, kwargs: object, as the request
 * gave them (a null positional filled by a keyword of the same parameter is the keyword's value).
 * Checks: every value's type against the parameter's `type` (string, number, integer, boolean, array,
 * object, null, any, a list of them, or an alias; `nullable: true` admits null), every required parameter
 * given, no unknown keyword and no extra positional (unless the schema is variadic / acceptsKwargs).
 * Returns 0, or -1 with FB_ERR_ARGUMENT naming the parameter and the expected and actual types,
 * or "InvalidRequest" when the schema names an unknown type. */
int fb_validate_args(json_t *schema, const fb_function_sig *sig, json_t *args, json_t *kwargs, fb_error *err);

#endif
