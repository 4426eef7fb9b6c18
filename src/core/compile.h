/* The compile step of compiled languages (C, C++): generated source -> program binary, through the drivers'
 * compile cache (lang/compile_cache.h). The compiler runs in a sandbox of its own (it parses untrusted
 * code); the cache lives outside every sandbox and only fnbox writes it. docs/internals/compile-cache.md. */
#ifndef FB_COMPILE_H
#define FB_COMPILE_H
#include <stddef.h>

#include "lang/lang.h"
#include "request/environments.h"
#include "sandbox/sandbox.h"
#include "util/error.h"

typedef struct fb_pool fb_pool;

typedef struct fb_compiled {
    char *data;          /* the program binary (owned) */
    size_t len;
    const char *cache;   /* "hit", "miss" or "off" (no usable cache directory); static */
} fb_compiled;

/* Builds the program for function_name of code. Errors: "CompileError" (the compiler's diagnostics, or why
 * it stopped), "UnsupportedType" / "FunctionNotFound" (from the dispatcher, before compiling),
 * "SandboxSetupFailed" / "KernelFeatureMissing" (the compiler's sandbox could not run). */
/* env: the call's named environment (NULL: the host's), which the compiler's sandbox is built in. */
int fb_compile(const fb_lang_driver *lang, const fb_environment *env, const char *code, size_t code_len,
               const char *function_name, double timeout_s, int cancel_fd, fb_pool *pool, fb_compiled *out,
               fb_error *err);
void fb_compiled_free(fb_compiled *c);

/* A warm pool's template for lang's compiler (core/pool.c): the sandbox fb_compile runs a program's compile
 * in, with the widest deadline and CPU limit. Builds lang's runtime object first (or takes it from the
 * cache); t owns it and what spec points to, until fb_compile_template_free. */
typedef struct fb_compile_template {
    fb_compiled runtime;
    fb_sandbox_file file;
    const char *argv[5];
} fb_compile_template;
int fb_compile_template_make(const fb_lang_driver *lang, const fb_environment *env, fb_compile_template *t,
                             fb_sandbox_spec *spec, fb_error *err);
void fb_compile_template_free(fb_compile_template *t);

#endif
