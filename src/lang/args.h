/* Argument normalization: turns a request's args + kwargs into exactly what the harness passes to the
 * function, applying the language's calling convention (its driver's `normalize`, lang.h). Runs before any
 * code. */
#ifndef FB_ARGS_H
#define FB_ARGS_H
#include <jansson.h>
#include <stdbool.h>

#include "lang/signature.h"
#include "util/error.h"

struct fb_lang_driver;

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
    json_t *kwargs;     /* object: keyword arguments (owned; always empty for JavaScript, C and C++) */
    json_t *undefined;  /* array of indexes into args that must be `undefined` in JS, not null (owned) */
} fb_call_args;

/* sig may be NULL (signature unknown: pass through, JS appends kwargs as a trailing object).
 * args: JSON array or NULL; kwargs: JSON object or NULL. Neither is modified or stolen.
 * On a mismatch that is certain from the signature (too many positionals, unknown keyword, missing
 * required parameter, a parameter given twice) returns -1 with FB_ERR_ARGUMENT and the class from
 * lang->arg_errors and a message naming the parameter. On success fills *out (caller frees with
 * fb_call_args_free). */
int fb_normalize_args(const struct fb_lang_driver *lang, const fb_function_sig *sig, json_t *args, json_t *kwargs,
                      fb_call_args *out, fb_error *err);
void fb_call_args_free(fb_call_args *ca);

/* The language's class for a mismatch of kind `count` (true) or `name` (false): types' member, or NULL
 * for fnbox's own ArgumentError (fb_set_arg_error takes either). */
const char *fb_arg_error_type(const fb_arg_errors *types, bool count);

/* The calling conventions, one per driver's `normalize` (args_<language>.c). fb_normalize_args has put
 * copies of the request's args (array) and kwargs (object) and an empty `undefined` in ca, and placed the
 * keywords a v0.2 schema places by position; sig may be NULL. Errors: as fb_normalize_args. */
int fb_normalize_python(const fb_function_sig *sig, const fb_arg_errors *types, fb_call_args *ca, fb_error *err);
int fb_normalize_javascript(const fb_function_sig *sig, const fb_arg_errors *types, fb_call_args *ca,
                            fb_error *err);
int fb_normalize_ruby(const fb_function_sig *sig, const fb_arg_errors *types, fb_call_args *ca, fb_error *err);
int fb_normalize_php(const fb_function_sig *sig, const fb_arg_errors *types, fb_call_args *ca, fb_error *err);
int fb_normalize_c(const fb_function_sig *sig, const fb_arg_errors *types, fb_call_args *ca, fb_error *err);

/* Steps the conventions share (args.c); sig is not NULL. */
/* A mismatch reported with the language's own class (fb_arg_errors): `err` and `types` in scope. */
#define FB_ARGS_COUNT_ERR(...) fb_set_arg_error(err, fb_arg_error_type(types, true), __VA_ARGS__)
#define FB_ARGS_NAME_ERR(...) fb_set_arg_error(err, fb_arg_error_type(types, false), __VA_ARGS__)
/* The function's name for messages ("function" when the signature has none). */
const char *fb_args_fname(const fb_function_sig *sig);
/* Whether p is bound by position (positional or positional-only). */
bool fb_args_is_positional(const fb_param *p);
/* What a signature takes: positional parameters, how many of them are required, and whether it has a
 * rest parameter (*args, ...) and a keyword catch-all (**kwargs). */
typedef struct fb_args_shape {
    size_t npos, nreq;
    bool var_positional, var_keyword;
} fb_args_shape;
fb_args_shape fb_args_shape_of(const fb_function_sig *sig);
/* The i-th positional (or positional-only) parameter, or NULL. */
const fb_param *fb_args_positional(const fb_function_sig *sig, size_t i);
/* The first parameter named `name`, or NULL; *index (when index is not NULL) gets its positional index. */
const fb_param *fb_args_find(const fb_function_sig *sig, const char *name, size_t *index);
/* Hole-filling by positional index: a null at i takes the keyword naming the i-th positional parameter. */
int fb_args_fill_holes(const fb_function_sig *sig, fb_call_args *ca, fb_error *err);
/* Keywords naming positional parameters past the given arguments become positional arguments, in order;
 * a parameter left out before one of them is missing (required) or refused, saying `why` it cannot be
 * skipped (e.g. "Ruby binds positional parameters in order"). */
int fb_args_place_named(const fb_function_sig *sig, const fb_arg_errors *types, const char *why, fb_call_args *ca,
                        fb_error *err);

#endif
