/* The function's output as it arrives, for the C API's output callback (fnbox_call_options.output): each
 * stream cut to its own cap (limits.stdoutBytes / stderrBytes) and told as valid UTF-8 that never splits a
 * character, so that a stream's chunks, joined, are exactly that stream in the result (core/result.c
 * sanitizes the captured bytes the same way: every invalid byte becomes U+FFFD). */
#ifndef FB_CORE_OUTPUT_H
#define FB_CORE_OUTPUT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fnbox.h"

typedef struct fb_output_stream {
    uint64_t left;            /* raw bytes still under the stream's cap */
    unsigned char carry[4];   /* the start of a character the next chunk completes (at most 3 bytes) */
    size_t ncarry;
} fb_output_stream;

typedef struct fb_output {
    fnbox_output_fn fn;
    void *ctx;
    fb_output_stream stream[2]; /* stdout, stderr */
    bool failed;                /* out of memory once: nothing more is told (the result stays whole) */
} fb_output;

void fb_output_init(fb_output *o, fnbox_output_fn fn, void *ctx, uint64_t stdout_cap, uint64_t stderr_cap);
/* The sandbox's on_output hook (ctx: an fb_output): stream 1 or 2, raw bytes as read. */
void fb_output_chunk(void *ctx, int stream, const char *data, size_t len);
/* Tells what is left of each stream (a character cut by the cap or the end: U+FFFD per byte). */
void fb_output_finish(fb_output *o);

#endif
