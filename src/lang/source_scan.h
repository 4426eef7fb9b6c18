/* Helpers shared by the signature inference scanners (python_infer.c, javascript_infer.c).
 * Internal to src/lang/: not part of any public surface.
 *
 * The scanners never rely on NUL termination: every read is bounded by the length they were given, so a
 * truncated or garbage source text can at worst yield fewer functions, never an overrun. */
#ifndef FB_SOURCE_SCAN_H
#define FB_SOURCE_SCAN_H
#include <stdbool.h>
#include <stddef.h>

#include "lang/signature.h"
#include "util/error.h"

/* Named maxima for what inference keeps from one source text. Functions past FB_SIG_MAX_FUNCS are not
 * reported; a function with more than FB_SIG_MAX_PARAMS parameters is not reported (its signature is then
 * unknown, and argument normalization passes arguments through unchecked rather than checking a truncated
 * signature). Template literals nested deeper than FB_SCAN_MAX_NESTING stop the JS scan (it recurses). */
#define FB_SIG_MAX_FUNCS 4096
#define FB_SIG_MAX_PARAMS 1024
#define FB_SCAN_MAX_NESTING 64

/* A growable byte buffer for building doc strings. On allocation failure `oom` is set and further appends
 * are ignored; the owner checks `oom` once at the end. Always NUL-terminated when data != NULL. */
typedef struct fb_scan_buf {
    char *data;
    size_t len;
    size_t cap;
    bool oom;
} fb_scan_buf;

void fb_scan_buf_append(fb_scan_buf *b, const char *s, size_t n);
/* Returns the built string (caller frees) or NULL on allocation failure; resets b. An empty buffer yields
 * an empty heap string. */
char *fb_scan_buf_take(fb_scan_buf *b);
void fb_scan_buf_free(fb_scan_buf *b);

/* Identifier byte for both languages: ASCII letters, digits, '_' and any byte >= 0x80 (so UTF-8 encoded
 * unicode identifiers are kept whole). `$` is added by the JS scanner. */
bool fb_scan_is_ident_byte(unsigned char c);
bool fb_scan_is_space(unsigned char c); /* ' ', \t, \r, \f, \v (not \n) */

/* Heap copy of s[0..n) (memcpy, so embedded NULs simply truncate the C string). NULL on ENOMEM. */
char *fb_scan_dup(const char *s, size_t n);
/* Same, with leading/trailing whitespace (including newlines) removed. */
char *fb_scan_dup_trim(const char *s, size_t n);

/* Appends a zeroed parameter to sig and returns it, or NULL on ENOMEM or when sig already holds
 * FB_SIG_MAX_PARAMS parameters (*over_cap tells which). */
fb_param *fb_scan_add_param(fb_function_sig *sig, bool *over_cap);
/* Moves *sig into list (list owns its members afterwards; *sig is zeroed). Returns 0, 1 if the list is
 * full (FB_SIG_MAX_FUNCS: *sig is freed), or -1 on ENOMEM (*sig is left for the caller to free). */
int fb_scan_push_func(fb_sig_list *list, fb_function_sig *sig);
/* Sets err for an allocation failure during inference; returns -1. */
int fb_scan_oom(fb_error *err);

#endif
