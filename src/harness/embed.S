/* The in-sandbox harnesses, embedded in the binary at build time (see src/harness/harness.h).
 * Each blob is NUL-terminated so it can be used as a C string; the *_len symbols exclude the NUL. */
        .macro harness name, file
        .balign 16
        .global fb_harness_\name
        .hidden fb_harness_\name
fb_harness_\name:
        .incbin "\file"
fb_harness_\name\()_end:
        .byte 0
        .balign 8
        .global fb_harness_\name\()_len
        .hidden fb_harness_\name\()_len
fb_harness_\name\()_len:
        .quad fb_harness_\name\()_end - fb_harness_\name
        .endm

        .section .rodata
        harness python, "src/harness/python_harness.py"
        harness javascript, "src/harness/javascript_harness.js"
        harness ruby, "src/harness/ruby_harness.rb"
        harness php, "src/harness/php_harness.php"
        /* the build's (the Makefile passes its path): the marshalled harness, or nothing (src/lang/python.c) */
        harness python_bytecode, FB_PYTHON_BYTECODE
        harness python_loader, "src/harness/python_loader.py"
        harness python_kernel, "src/harness/python_kernel.py"
        harness javascript_kernel, "src/harness/javascript_kernel.js"
        harness ruby_kernel, "src/harness/ruby_kernel.rb"
        harness php_kernel, "src/harness/php_kernel.php"
        /* C and C++ (lang/c_dispatch.c): the runtime, the declarations a C main sees, the C++ converters */
        harness c_runtime, "src/harness/c_runtime.c"
        harness c_runtime_decls, "src/harness/c_runtime.h"
        harness cpp_prelude, "src/harness/cpp_prelude.hpp"

        .section .note.GNU-stack,"",@progbits
