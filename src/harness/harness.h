/* The in-sandbox harness programs, embedded by embed.S. */
#ifndef FB_HARNESS_H
#define FB_HARNESS_H
#include <stddef.h>
#include <stdint.h>

extern const char fb_harness_python[];
extern const uint64_t fb_harness_python_len;
extern const char fb_harness_javascript[];
extern const uint64_t fb_harness_javascript_len;
extern const char fb_harness_ruby[];
extern const uint64_t fb_harness_ruby_len;
extern const char fb_harness_php[];
extern const uint64_t fb_harness_php_len;
extern const char fb_harness_python_bytecode[];  /* the Python interpreter's magic + marshalled harness, or empty */
extern const uint64_t fb_harness_python_bytecode_len;
extern const char fb_harness_python_loader[];    /* the `-c` program that runs one or the other */
extern const uint64_t fb_harness_python_loader_len;
extern const char fb_harness_python_kernel[];     /* session kernels (docs/internals/kernels.md) */
extern const uint64_t fb_harness_python_kernel_len;
extern const char fb_harness_javascript_kernel[];
extern const uint64_t fb_harness_javascript_kernel_len;
extern const char fb_harness_ruby_kernel[];
extern const uint64_t fb_harness_ruby_kernel_len;
extern const char fb_harness_php_kernel[];
extern const uint64_t fb_harness_php_kernel_len;
/* C and C++: no interpreter runs these; lang/c_dispatch.c puts them into the program it generates. */
extern const char fb_harness_c_runtime[];        /* c_runtime.c */
extern const uint64_t fb_harness_c_runtime_len;
extern const char fb_harness_c_runtime_decls[];  /* c_runtime.h */
extern const uint64_t fb_harness_c_runtime_decls_len;
extern const char fb_harness_cpp_prelude[];      /* cpp_prelude.hpp */
extern const uint64_t fb_harness_cpp_prelude_len;

#endif
