/* UTF-8 helpers for text that comes from untrusted programs (their stdout may be any bytes). */
#ifndef FB_UTF8_H
#define FB_UTF8_H
#include <stdbool.h>
#include <stddef.h>

/* Returns a newly allocated NUL-terminated copy of s[0..len) in which every invalid or truncated
 * UTF-8 sequence is replaced by U+FFFD; *out_len gets its length. NULL on allocation failure. */
char *fb_utf8_sanitize(const char *s, size_t len, size_t *out_len);

/* Whether s[0..len) is valid UTF-8 as fb_utf8_sanitize judges it (NUL is an ordinary character). */
bool fb_utf8_valid(const char *s, size_t len);

#endif
