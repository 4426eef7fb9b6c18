/* Argument normalization: one shared module that turns a request's args + kwargs into exactly what the
 * harness passes to the function, applying the language's calling convention. Runs before any code. */
#ifndef FB_ARGS_H
#define FB_ARGS_H
#include <jansson.h>
#include <stdbool.h>

#include "lang/signature.h"
#include "util/error.h"

typedef enum fb_arg_style {
    FB_ARGS_PYTHON,      /* f(*args, **kwargs); hole-filling; keyword-only stay keywords */
    FB_ARGS_JAVASCRIPT,  /* kwargs mapped onto parameters by name; leftovers as a trailing options object */
    FB_ARGS_RUBY,        /* positional + hole-filling; kwargs naming keyword parameters stay keywords */
    FB_ARGS_PHP,         /* kwargs naming parameters become named arguments; the rest a trailing array */
} fb_arg_style;

/* The exception classes the language itself raises for a call that does not fit the function, so that a
 * mismatch fnbox finds before running anything reads as the language's own error. NULL (or a NULL
 * member): "ArgumentError", fnbox's type, for languages with no such runtime check (C, C++) or none for
 * that case (JavaScript has no named arguments, so a keyword clash is fnbox's to report). */
typedef struct fb_arg_errors {
    const char *count;  /* too many or too few arguments, a required parameter not given */
    const char *name;   /* an unknown keyword, a parameter given twice or by a name it cannot take */
} fb_arg_errors;

typedef struct fb_call_args {
    json_t *args;       /* array: positional arguments, in order (owned) */
    json_t *kwargs;     /* object: keyword arguments (owned; always empty for FB_ARGS_JAVASCRIPT) */
    json_t *undefined;  /* array of indexes into args that must be `undefined` in JS, not null (owned) */
} fb_call_args;

/* sig may be NULL (signature unknown: pass through, JS appends kwargs as a trailing object).
 * args: JSON array or NULL; kwargs: JSON object or NULL. Neither is modified or stolen.
 * On a mismatch that is certain from the signature (too many positionals, unknown keyword, missing
 * required parameter, a parameter given twice) returns -1 with FB_ERR_ARGUMENT and the class from `types` (NULL: all
 * "ArgumentError") and a message naming the parameter. On success fills *out (caller frees with
 * fb_call_args_free). */
int fb_normalize_args(fb_arg_style style, const fb_arg_errors *types, const fb_function_sig *sig, json_t *args,
                      json_t *kwargs, fb_call_args *out, fb_error *err);
void fb_call_args_free(fb_call_args *ca);

/* The language's class for a mismatch of kind `count` (true) or `name` (false): types' member, or NULL
 * for fnbox's own ArgumentError (fb_set_arg_error takes either). */
const char *fb_arg_error_type(const fb_arg_errors *types, bool count);

/* Per-language steps of fb_normalize_args (args_ruby.c, args_php.c): out already holds copies of the
 * request's args (array) and kwargs (object) and an empty `undefined`; sig may be NULL. */
int fb_normalize_ruby(const fb_function_sig *sig, const fb_arg_errors *types, fb_call_args *out, fb_error *err);
int fb_normalize_php(const fb_function_sig *sig, const fb_arg_errors *types, fb_call_args *out, fb_error *err);

#endif
