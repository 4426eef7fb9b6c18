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

        .balign 16
        .global fb_harness_ruby
        .hidden fb_harness_ruby
fb_harness_ruby:
        .incbin "src/harness/ruby_harness.rb"
fb_harness_ruby_end:
        .byte 0
        .balign 8
        .global fb_harness_ruby_len
        .hidden fb_harness_ruby_len
fb_harness_ruby_len:
        .quad fb_harness_ruby_end - fb_harness_ruby

        .balign 16
        .global fb_harness_php
        .hidden fb_harness_php
fb_harness_php:
        .incbin "src/harness/php_harness.php"
fb_harness_php_end:
        .byte 0
        .balign 8
        .global fb_harness_php_len
        .hidden fb_harness_php_len
fb_harness_php_len:
        .quad fb_harness_php_end - fb_harness_php

        .section .note.GNU-stack,"",@progbits
