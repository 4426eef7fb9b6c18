/* A session kernel's execute request (docs/internals/kernels.md): {code, timeout?, restart?}. */
#ifndef FB_REQUEST_KERNEL_H
#define FB_REQUEST_KERNEL_H
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "util/error.h"

typedef struct fb_kernel_request {
    json_t *root;                 /* the parsed document (owned); code points into it */
    const char *code;
    size_t code_len;
    double timeout_s;             /* default FB_DEFAULT_TIMEOUT_S, at most FB_MAX_TIMEOUT_S */
    bool restart;                 /* a fresh kernel for this execute (a running one's state is discarded) */
} fb_kernel_request;

/* Decodes text (len bytes). Failures are InvalidRequest naming the field; on success the caller owns
 * *out (fb_kernel_request_free), on failure it is released. */
int fb_kernel_request_parse(const char *text, size_t len, fb_kernel_request *out, fb_error *err);
void fb_kernel_request_free(fb_kernel_request *r);

#endif
