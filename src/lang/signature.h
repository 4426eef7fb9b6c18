/* Function signatures: what inference finds in source code or what a request's schema declares.
 * Owned data: every string is heap-allocated and freed by fb_sig_list_free / fb_function_sig_free. */
#ifndef FB_SIGNATURE_H
#define FB_SIGNATURE_H
#include <stdbool.h>
#include <stddef.h>

#include "util/error.h"

typedef enum fb_param_kind {
    FB_PARAM_POSITIONAL = 0,   /* python: positional-or-keyword; js: a plain identifier parameter */
    FB_PARAM_POSITIONAL_ONLY,  /* python: before `/` */
    FB_PARAM_KEYWORD_ONLY,     /* python: after `*` or `*args` */
    FB_PARAM_VAR_POSITIONAL,   /* python `*args`; js `...rest` */
    FB_PARAM_VAR_KEYWORD,      /* python `**kwargs` */
    FB_PARAM_DESTRUCTURED,     /* js: `{a, b = 1}` or `[x, y]` pattern; name is NULL-free synthetic "$0", "$1"... */
} fb_param_kind;

typedef struct fb_param {
    char *name;          /* parameter name (for a destructured js param: "$<index>") */
    fb_param_kind kind;
    bool has_default;    /* `= value` present */
    char *default_text;  /* the default's source text, trimmed; NULL if none */
    char *annotation;    /* python annotation / js none; source text, NULL if none */
    char **keys;         /* FB_PARAM_DESTRUCTURED object pattern: the property names; NULL otherwise */
    size_t nkeys;
    bool by_position;    /* a v0.2 schema `input` gives its position: a keyword naming it goes to that
                            positional slot before the call (args.c), whatever the function declares */
} fb_param;

typedef struct fb_function_sig {
    char *name;
    bool is_async;
    fb_param *params;
    size_t nparams;
    char *doc;           /* python docstring / js leading comment, NULL if none */
    char *returns;       /* C/C++: the return type, canonical text (c_infer.c); NULL for other languages */
    int line;            /* 1-based line of the definition */
} fb_function_sig;

typedef struct fb_sig_list {
    fb_function_sig *funcs;  /* top-level functions in source order */
    size_t nfuncs;
} fb_sig_list;

void fb_function_sig_free(fb_function_sig *sig);  /* frees members, not sig itself */
void fb_sig_list_free(fb_sig_list *list);         /* frees members, not list itself */
const fb_function_sig *fb_sig_list_find(const fb_sig_list *list, const char *name);
/* Which top-level function a call or `fnbox infer` without functionName means: the only candidate, or
 * NULL with *count candidates (0: no function at all; more than 1: ambiguous) named in `names` (comma-
 * separated, cut to `size`). With skip_private, a name starting with '_' is a helper, not a candidate,
 * while any public function exists; with only helpers, every function is a candidate. */
const fb_function_sig *fb_sig_list_choose(const fb_sig_list *list, bool skip_private, size_t *count, char *names,
                                          size_t size);

/* Inference: find the top-level functions of a source text. Never fooled by comments, strings,
 * nested functions, methods or call sites. Returns 0 and fills *out (caller frees), or -1 with err
 * set (only for resource errors; code that does not parse yields whatever could be found). */
int fb_infer_python(const char *code, size_t len, fb_sig_list *out, fb_error *err);
int fb_infer_javascript(const char *code, size_t len, fb_sig_list *out, fb_error *err);
int fb_infer_ruby(const char *code, size_t len, fb_sig_list *out, fb_error *err);
int fb_infer_php(const char *code, size_t len, fb_sig_list *out, fb_error *err);
/* C/C++ (c_infer.c): each fb_param.annotation is the parameter's type, canonical text ("const char*"). */
int fb_infer_c(const char *code, size_t len, fb_sig_list *out, fb_error *err);
int fb_infer_cpp(const char *code, size_t len, fb_sig_list *out, fb_error *err);

#endif
