/* The in-sandbox harnesses, embedded in the binary at build time (see src/harness/harness.h).
 * Each blob is NUL-terminated so it can be used as a C string; the *_len symbols exclude the NUL. */
        .section .rodata
        .balign 16
        .global fb_harness_python
        .hidden fb_harness_python
fb_harness_python:
        .incbin "src/harness/python_harness.py"
fb_harness_python_end:
        .byte 0
        .balign 8
        .global fb_harness_python_len
        .hidden fb_harness_python_len
fb_harness_python_len:
        .quad fb_harness_python_end - fb_harness_python

        .balign 16
        .global fb_harness_javascript
        .hidden fb_harness_javascript
fb_harness_javascript:
        .incbin "src/harness/javascript_harness.js"
fb_harness_javascript_end:
        .byte 0
        .balign 8
        .global fb_harness_javascript_len
        .hidden fb_harness_javascript_len
fb_harness_javascript_len:
        .quad fb_harness_javascript_end - fb_harness_javascript

        .section .note.GNU-stack,"",@progbits
