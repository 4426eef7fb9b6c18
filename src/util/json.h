/* JSON wrappers around jansson that keep numbers jansson cannot hold (integers beyond 64 bits, reals
 * beyond double range) exact: they are carried through the document as marked strings and written back
 * verbatim. The marker starts with a NUL character and holds a per-process random nonce, so no string a
 * request contains can be mistaken for one. */
#ifndef FB_JSON_H
#define FB_JSON_H
#include <jansson.h>
#include <stddef.h>

/* Like json_loadb (flags are jansson's), but out-of-range numbers become marked strings. */
json_t *fb_json_loadb(const char *text, size_t len, size_t flags, json_error_t *jerr);
/* Like json_dumps, with marked strings written back as the original number text. Caller frees. */
char *fb_json_dumps(const json_t *v, size_t flags);
/* The number text of a marked string, or NULL if v is not one. */
const char *fb_json_bignum(const json_t *v);
/* Dumps v compactly into *out (the caller frees it) with its length in *len (len may be NULL), and
 * releases v (NULL is taken as an allocation failure). 0, or -1 when out of memory. */
int fb_json_dump_out(json_t *v, char **out, size_t *len);
/* The JSON type of v as a request error names it: "object", "array", "string", "number" (big numbers
 * included), "boolean" or "null". */
const char *fb_json_type_name(const json_t *v);

#endif
