/* A request's args and kwargs kept as the request's own text (issue 16, large payloads). Decoded with
 * jansson, a 10 MB argument of small records is a tree of ~40x its size, deep-copied by normalization and
 * dumped again for the harness. Instead the whole request is validated by util/json_scan.h (jansson's
 * rules, duplicate keys refused), jansson decodes the request without them (a skeleton: `[]` / `{}` in
 * their place), and each argument is a reference to its text (util/json.h's fb_json_texts), which the
 * harness input then carries byte for byte. Where a tree is needed (a schema, a language whose
 * normalization looks inside values: args_as_text), the arguments are decoded as before, so nothing
 * changes but the cost. */
#ifndef FB_REQUEST_ARGS_TEXT_H
#define FB_REQUEST_ARGS_TEXT_H
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "lang/lang.h"
#include "util/json.h"

typedef struct fb_args_spans {
    const char *args, *kwargs; /* the text of the root's "args" and "kwargs" (any type), or NULL */
    size_t args_len, kwargs_len;
} fb_args_spans;

/* Whether text is one valid JSON object (jansson's rules, duplicate keys refused); fills *sp. When not, the
 * request takes jansson's path, which words the rejection. */
bool fb_args_text_scan(const char *text, size_t len, fb_args_spans *sp);
/* Whether *sp holds an array or object to leave out. */
bool fb_args_text_any(const fb_args_spans *sp);
/* A copy of text with those spans replaced by `[]` / `{}` (caller frees), or NULL when out of memory. */
char *fb_args_text_skeleton(const char *text, size_t len, const fb_args_spans *sp, size_t *out_len);
/* The arguments as references to their texts (borrowed from the request: it must outlive texts), when lang
 * allows it and `schema` is absent: 1 (*args, *kwargs set), 0 when they need a tree, -1 out of memory. */
int fb_args_text_take(const fb_args_spans *sp, const fb_lang_driver *lang, bool schema, fb_json_texts *texts,
                      json_t **args, json_t **kwargs);
/* The skeleton's stand-ins replaced in root by the decoded arguments. -1 when out of memory. */
int fb_args_text_restore(json_t *root, const fb_args_spans *sp);

#endif
