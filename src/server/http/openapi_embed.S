/* docs/openapi.yaml as JSON (the Makefile converts it into the file FB_OPENAPI_JSON names), embedded in the
 * server for GET /v1/openapi.json, as src/harness/embed.S embeds the harnesses. */
        .section .rodata
        .balign 16
        .global fb_http_openapi_json
        .hidden fb_http_openapi_json
fb_http_openapi_json:
        .incbin FB_OPENAPI_JSON
fb_http_openapi_json_end:
        .byte 0
        .balign 8
        .global fb_http_openapi_json_len
        .hidden fb_http_openapi_json_len
fb_http_openapi_json_len:
        .quad fb_http_openapi_json_end - fb_http_openapi_json

        .section .note.GNU-stack,"",@progbits
