/* JSON Schema for function signatures: what `fnbox infer` prints and what `schema.strict` checks against.
 * Types use JSON Schema's names (string, number, integer, boolean, array, object, null) plus "any"; common
 * aliases (int, float, str, bool, list, dict, None...) are accepted where a request names a type. */
#ifndef FB_JSONSCHEMA_H
#define FB_JSONSCHEMA_H
#include <jansson.h>
#include <stdbool.h>

#include "lang/signature.h"
#include "util/error.h"

enum {
    FB_JT_STRING = 1 << 0,
    FB_JT_NUMBER = 1 << 1,  /* any number, integers included */
    FB_JT_INTEGER = 1 << 2,
    FB_JT_BOOLEAN = 1 << 3,
    FB_JT_ARRAY = 1 << 4,
    FB_JT_OBJECT = 1 << 5,
    FB_JT_NULL = 1 << 6,
    FB_JT_ANY = (1 << 7) - 1,
};

/* One type name (canonical or alias, case-insensitive) -> its FB_JT_ bit, 0 if unknown. */
unsigned fb_jt_from_name(const char *name);
/* The canonical JSON Schema name of one FB_JT_ bit ("any" for FB_JT_ANY). */
const char *fb_jt_name(unsigned bit);
/* A schema "type": a name or an array of names. Sets *mask (FB_JT_ANY when type is NULL); on an unknown name
 * returns -1 with *bad pointing at it. */
int fb_jt_parse(const json_t *type, unsigned *mask, const char **bad);
/* The JSON Schema type of a value: "integer" for whole numbers (2.0 included), else "number", ... */
const char *fb_json_type_of(const json_t *v);
/* Renders a mask as text: "integer", "string or null". buf must hold 96 bytes. */
const char *fb_jt_describe(unsigned mask, char *buf, size_t size);

/* The request schema's entry for parameter `name` (v0.1 params list, v0.2 input list or record); borrowed,
 * NULL if none. */
json_t *fb_schema_param_spec(json_t *schema, const char *name);

/* A JSON Schema fragment ({"type": ...}, maybe with "items"/"additionalProperties") for a type annotation
 * (Python or PHP syntax); {} when nothing is known. New reference, NULL on ENOMEM. */
json_t *fb_schema_from_annotation(const char *annotation);
/* What a default's source text says: *type the FB_JT_ bits (0 if unknown), *value the default as JSON
 * when the text is a literal (new reference) or NULL. */
void fb_schema_from_default(const char *text, unsigned *type, json_t **value);

/* The first paragraph of a doc comment, whitespace-trimmed (caller frees); "" for NULL. NULL on ENOMEM. */
char *fb_doc_summary(const char *doc);

/* The description a doc comment gives parameter `name` (`@param [type] [$]name desc`, `:param name: desc`, or a
 * Google-style `Args:` section); caller frees; NULL if none or on ENOMEM. */
char *fb_doc_param(const char *doc, const char *name);

/* The "parameters" object {"type": "object", "properties", "required"} of a signature. schema: the request
 * schema the signature came from (its types, descriptions and defaults are used), or NULL for an inferred
 * signature. doc: the function's doc comment, mined for parameter descriptions (may be NULL). *note receives
 * a sentence about variadic parameters for the description (static), or NULL.
 * New reference; NULL with err set on ENOMEM. */
json_t *fb_sig_jsonschema(const fb_function_sig *sig, json_t *schema, const char *doc, const char **note,
                          fb_error *err);

#endif
