/* A language is one driver (this table) plus one harness (src/harness/). Adding a language touches one
 * driver file, one harness and one line of the registry in lang.c. What differs between languages is
 * behind the driver's functions: no code outside a driver asks which language a call is in. */
#ifndef FB_LANG_H
#define FB_LANG_H
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "lang/args.h"
#include "lang/signature.h"
#include "util/error.h"
#include "util/json.h"

typedef struct fb_lang_driver fb_lang_driver;

/* Compiled languages (C, C++): how to turn code into a program. core/compile.c runs `script` in a sandbox
 * of its own with the generated source on fd 4; the script writes the program binary on fd 3 and
 * diagnostics on stderr; "$0" is the compiler found in `runtimes`. */
typedef struct fb_lang_compiler {
    int (*generate)(const char *code, size_t len, const char *function_name, char **src, size_t *src_len,
                    fb_error *err);
    const char *script;                /* `sh -c` text; "$0" is the compiler */
    /* Optional: a fixed runtime compiled once (by runtime_script, same fd protocol) into an object placed at
     * /.fnbox/runtime.o for `script` to link. NULL when the language has none. */
    const char *(*runtime_source)(size_t *len);
    const char *runtime_script;
} fb_lang_compiler;

/* What the call runs on: the first of the driver's runtimes found on the host (the interpreter; for a
 * compiled language the compiler), and the program compiled for the call (compiled languages only). */
typedef struct fb_lang_runnable {
    const char *runtime;
    const char *program;
    size_t program_len;
} fb_lang_runnable;

/* A file the driver places under /.fnbox in the call's sandbox. */
typedef struct fb_lang_file {
    const char *path;
    const char *data;
    size_t len;
    bool executable;
} fb_lang_file;

#define FB_LANG_MAX_ARGV 32
#define FB_LANG_MAX_ENV 8
#define FB_LANG_MAX_FILES 3

/* What the sandbox starts for one call, as the driver decides it on the host. The strings and file data
 * are static, point into the runnable, or are `owned` (released by fb_lang_exec_free). */
typedef struct fb_lang_exec {
    const char *argv[FB_LANG_MAX_ARGV]; /* NULL-terminated; argv[0] is the file executed */
    const char *env[FB_LANG_MAX_ENV];   /* "KEY=value", NULL-terminated: after fnbox's base environment,
                                           before the request's permissions.env */
    fb_lang_file files[FB_LANG_MAX_FILES];
    size_t nfiles;
    bool inert_until_input;             /* nothing of the user's runs before the input (fb_sandbox_spec) */
    char *owned;
} fb_lang_exec;

/* One planned call, as the harness receives it. */
typedef struct fb_lang_call {
    const char *code;
    size_t code_len;
    const char *function_name;         /* NULL: body mode */
    const fb_call_args *args;          /* normalized */
    const fb_json_texts *texts;        /* the texts args refers to (util/json.h; args_as_text), or NULL */
    const char *workdir;
    /* The caller takes the output as it arrives (a streamed call): the harness then writes the function's
     * stdout a line at a time at least, as on a terminal, where a pipe would hold it in the runtime's block
     * buffer until the end ("stream": true in the input). */
    bool stream;
} fb_lang_call;

/* How an interpreted language starts: `<runtime> <args...> <harness_path>` with `env` (what
 * fb_lang_interpreter_exec reads). */
typedef struct fb_lang_interpreter {
    const char *const *args;           /* NULL-terminated; at most FB_LANG_MAX_ARGV - 3 */
    const char *const *env;            /* NULL-terminated; at most FB_LANG_MAX_ENV - 2 */
    const char *harness_path;          /* where the harness lives inside the sandbox */
} fb_lang_interpreter;

struct fb_lang_driver {
    const char *name;                  /* canonical name, e.g. "python" */
    const char *const *aliases;        /* NULL-terminated other accepted names */
    const char *const *runtimes;       /* candidate interpreter (or compiler) paths, absolute, NULL-terminated */
    const char *convention;            /* the signature assumed when nothing is known (for docs/meta) */
    const char *package;               /* the Debian package that provides the runtime (for doctor) */

    /* Signature: the top-level functions the code defines. */
    int (*infer)(const char *code, size_t len, fb_sig_list *out, fb_error *err);
    /* A top-level function named `_x` is a private helper by the language's convention: without
     * functionName it is not a candidate while a public function exists (fb_sig_list_choose). */
    bool underscore_private;

    /* Arguments: the language's calling convention (one of args.h's fb_normalize_<language>), run by
     * fb_normalize_args. */
    int (*normalize)(const fb_function_sig *sig, const fb_arg_errors *types, fb_call_args *ca, fb_error *err);
    /* The exception classes the language raises for a call that does not fit its function (too many, too
     * few, unknown or doubled arguments): fnbox finds these before running anything and reports them with
     * the language's type, as a call in that language would fail. Zero: "ArgumentError" (C, C++;
     * JavaScript, which accepts any count and has no named arguments to clash). */
    fb_arg_errors arg_errors;
    /* A missing argument binds to `undefined` and raises nothing (JavaScript): a schema's gap before a
     * placed keyword is `undefined`, not a missing parameter. */
    bool missing_is_undefined;
    /* Whether the request's arguments may stay its own text (request/args_text.c: a large argument is then
     * never a tree, nor dumped again), given whether any integer in them is beyond +-(2^53 - 1) and whether
     * kwargs holds anything: true when normalize only moves arguments and tests them for null, and
     * harness_input writes each as given. NULL: never (C, C++ convert every value to its type). */
    bool (*args_as_text)(bool big_int, bool kwargs);

    /* Compiled languages only (NULL for interpreted ones): the compile step (core/compile.c). */
    const fb_lang_compiler *compiler;

    /* The run: fills *out with what the sandbox starts for a call on `run` (argv, environment, files).
     * Cannot fail but for a driver table out of bounds; out is released by fb_lang_exec_free. */
    int (*exec)(const fb_lang_driver *d, const fb_lang_runnable *run, fb_lang_exec *out, fb_error *err);
    const fb_lang_interpreter *interpreter; /* interpreted languages: what fb_lang_interpreter_exec starts */

    /* The harness: its source (interpreted languages; a compiled one has its harness compiled in), and the
     * call input it reads on fd 4 (docs/internals/harness-protocol.md; caller frees; NULL on ENOMEM), its
     * arguments kept as the request's texts still references to call->texts (fb_json_texts_ref): the
     * launch stage writes them in as it sends the input (fb_json_pieces_make). */
    const char *(*harness_source)(size_t *len);
    char *(*harness_input)(const fb_lang_call *call, size_t *len);

    /* Session kernels (core/session_kernel.c, docs/internals/kernels.md): the kernel program, started as the
     * harness is (the interpreter's args and env) from kernel_file, with the harness beside it under the
     * basename of interpreter->harness_path (the kernel loads it). NULL: the language has no kernel. */
    const char *(*kernel_source)(size_t *len);
    const char *kernel_file;
};

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
/* The same in the system tree at root (an environment's root: the path it has inside the sandbox), or the
 * host's when root is NULL. */
const char *fb_lang_find_runtime_in(const fb_lang_driver *d, const char *root);
/* Whether path (absolute, as inside) is an executable regular file in the tree at root. */
bool fb_lang_executable_in(const char *root, const char *path);

/* Entries drivers share (interpreter.c). */
/* args_as_text of a language whose arguments are opaque to normalize and harness_input: always. */
bool fb_lang_args_as_text(bool big_int, bool kwargs);
/* exec of an interpreted language: d->interpreter started on d's harness (placed at its harness_path). */
int fb_lang_interpreter_exec(const fb_lang_driver *d, const fb_lang_runnable *run, fb_lang_exec *out,
                             fb_error *err);
/* harness_input of an interpreted language: the call as JSON (code, functionName, args, kwargs, undefined,
 * bigints, workdir). */
char *fb_lang_harness_input(const fb_lang_call *call, size_t *len);
/* The same with the arguments and the `bigints` paths given (NULL: none), for a driver that encodes
 * arguments its own way (JavaScript's integers beyond 2^53). */
char *fb_lang_harness_input_with(const fb_lang_call *call, json_t *args, json_t *bigints, size_t *len);
/* Adds to an exec: an environment entry (static), a file; -1 with err set when the table is full. */
int fb_lang_exec_add_env(fb_lang_exec *x, const char *kv, fb_error *err);
int fb_lang_exec_add_file(fb_lang_exec *x, fb_lang_file file, fb_error *err);
void fb_lang_exec_free(fb_lang_exec *x);

#endif
