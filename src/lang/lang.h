/* A language is one driver (this table) plus one harness (src/harness/). Adding a language touches one
 * driver file, one harness and one line of the registry in lang.c. */
#ifndef FB_LANG_H
#define FB_LANG_H
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "lang/args.h"
#include "lang/signature.h"
#include "util/error.h"

/* Compiled languages (C, C++): how to turn code into a program. core/compile.c runs `argv` in a sandbox of
 * its own with the generated source on fd 4; the script writes the program binary on fd 3 and diagnostics
 * on stderr. argv[3] is left NULL here and filled with the compiler found in `runtimes` ($0 of the script). */
typedef struct fb_lang_compiler {
    int (*generate)(const char *code, size_t len, const char *function_name, char **src, size_t *src_len,
                    fb_error *err);
    const char *script;                /* `sh -c` text; "$0" is the compiler */
    /* The call input the program reads on fd 4 (caller frees; NULL on ENOMEM). */
    char *(*call_input)(json_t *args, size_t *len);
    /* Optional: a fixed runtime compiled once (by runtime_script, same fd protocol) into an object placed at
     * /.fnbox/runtime.o for `script` to link. NULL when the language has none. */
    const char *(*runtime_source)(size_t *len);
    const char *runtime_script;
} fb_lang_compiler;

/* What a driver adds to one call's sandbox, decided on the host: a file under /.fnbox and an environment
 * entry. path and env are static strings; data is malloc'd and the caller's to free. */
typedef struct fb_lang_extra {
    const char *path;                  /* NULL: no file */
    char *data;
    size_t len;
    const char *env;                   /* "KEY=value", or NULL */
} fb_lang_extra;

typedef struct fb_lang_driver {
    const char *name;                  /* canonical name, e.g. "python" */
    const char *const *aliases;        /* NULL-terminated other accepted names */
    const char *const *runtimes;       /* candidate interpreter paths (absolute), NULL-terminated */
    const char *const *runtime_args;   /* arguments before the harness path, NULL-terminated */
    const char *const *env;            /* extra environment for the interpreter, NULL-terminated */
    const char *harness_path;          /* where the harness lives inside the sandbox */
    const char *(*harness_source)(size_t *len);
    fb_arg_style arg_style;
    /* The exception classes the language raises for a call that does not fit its function (too many, too
     * few, unknown or doubled arguments): fnbox finds these before running anything and reports them with
     * the language's type, as a call in that language would fail. Zero: "ArgumentError" (C, C++;
     * JavaScript, which accepts any count and has no named arguments to clash). */
    fb_arg_errors arg_errors;
    /* A top-level function named `_x` is a private helper by the language's convention: without
     * functionName it is not a candidate while a public function exists (fb_sig_list_choose). */
    bool underscore_private;
    int (*infer)(const char *code, size_t len, fb_sig_list *out, fb_error *err);
    const char *convention;            /* the signature assumed when nothing is known (for docs/meta) */
    const char *package;               /* the Debian package that provides the runtime (for doctor) */
    const fb_lang_compiler *compiler;  /* NULL for interpreted languages; then runtimes are compilers and
                                          harness_path / harness_source are unused */
    /* NULL, or fills *out (all zero: nothing to add) for a call that runs `runtime`. Cannot fail: a
     * driver that cannot work out its extra runs the runtime as it is. */
    void (*extra)(const char *runtime, fb_lang_extra *out);
} fb_lang_driver;

extern const fb_lang_driver fb_lang_python;
extern const fb_lang_driver fb_lang_javascript;
extern const fb_lang_driver fb_lang_ruby;
extern const fb_lang_driver fb_lang_php;
extern const fb_lang_driver fb_lang_c;
extern const fb_lang_driver fb_lang_cpp;

/* Finds a driver by canonical name or alias (case-sensitive); NULL if unknown. */
const fb_lang_driver *fb_lang_lookup(const char *name);
/* "python (py, python3), javascript (js, node, quickjs)" for error messages; static storage. */
const char *fb_lang_supported(void);
/* Iterates the registry: returns the i-th driver or NULL past the end. */
const fb_lang_driver *fb_lang_at(size_t i);
/* The first runtime candidate that exists and is executable, or NULL. */
const char *fb_lang_find_runtime(const fb_lang_driver *d);

#endif
