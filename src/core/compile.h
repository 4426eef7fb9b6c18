/* The compile step of compiled languages (C, C++): generated source -> program binary, through the drivers'
 * compile cache (lang/compile_cache.h). The compiler runs in a sandbox of its own (it parses untrusted
 * code); the cache lives outside every sandbox and only fnbox writes it. docs/internals/compile-cache.md. */
#ifndef FB_COMPILE_H
#define FB_COMPILE_H
#include <stddef.h>

#include "lang/lang.h"
#include "util/error.h"

typedef struct fb_compiled {
    char *data;          /* the program binary (owned) */
    size_t len;
    const char *cache;   /* "hit", "miss" or "off" (no usable cache directory); static */
} fb_compiled;

/* Builds the program for function_name of code. Errors: "CompileError" (the compiler's diagnostics, or why
 * it stopped), "UnsupportedType" / "FunctionNotFound" (from the dispatcher, before compiling),
 * "SandboxSetupFailed" / "KernelFeatureMissing" (the compiler's sandbox could not run). */
int fb_compile(const fb_lang_driver *lang, const char *code, size_t code_len, const char *function_name,
               double timeout_s, int cancel_fd, fb_compiled *out, fb_error *err);
void fb_compiled_free(fb_compiled *c);

#endif
