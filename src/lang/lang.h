/* A language is one driver (this table) plus one harness (src/harness/). Adding a language touches one
 * driver file, one harness and one line of the registry in lang.c. */
#ifndef FB_LANG_H
#define FB_LANG_H
#include <stddef.h>

#include "lang/args.h"
#include "lang/signature.h"
#include "util/error.h"

typedef struct fb_lang_driver {
    const char *name;                  /* canonical name, e.g. "python" */
    const char *const *aliases;        /* NULL-terminated other accepted names */
    const char *const *runtimes;       /* candidate interpreter paths (absolute), NULL-terminated */
    const char *const *runtime_args;   /* arguments before the harness path, NULL-terminated */
    const char *const *env;            /* extra environment for the interpreter, NULL-terminated */
    const char *harness_path;          /* where the harness lives inside the sandbox */
    const char *(*harness_source)(size_t *len);
    fb_arg_style arg_style;
    int (*infer)(const char *code, size_t len, fb_sig_list *out, fb_error *err);
    const char *convention;            /* the signature assumed when nothing is known (for docs/meta) */
    const char *package;               /* the Debian package that provides the runtime (for doctor) */
} fb_lang_driver;

extern const fb_lang_driver fb_lang_python;
extern const fb_lang_driver fb_lang_javascript;
extern const fb_lang_driver fb_lang_ruby;
extern const fb_lang_driver fb_lang_php;

/* Finds a driver by canonical name or alias (case-sensitive); NULL if unknown. */
const fb_lang_driver *fb_lang_lookup(const char *name);
/* "python (py, python3), javascript (js, node, quickjs)" for error messages; static storage. */
const char *fb_lang_supported(void);
/* Iterates the registry: returns the i-th driver or NULL past the end. */
const fb_lang_driver *fb_lang_at(size_t i);
/* The first runtime candidate that exists and is executable, or NULL. */
const char *fb_lang_find_runtime(const fb_lang_driver *d);

#endif
