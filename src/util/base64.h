/* Base64 for file contents in requests and results ({"base64": "..."}), via nettle. */
#ifndef FB_BASE64_H
#define FB_BASE64_H
#include <stddef.h>

/* Decodes standard or URL-safe base64 (padding optional, no whitespace) into a new buffer (*out, freed by
 * the caller; never NULL on success, even for empty input). -1: not valid base64; -2: out of memory. */
int fb_base64_decode(const char *s, size_t len, unsigned char **out, size_t *out_len);
/* Standard base64 with padding, NUL-terminated; NULL on out of memory. */
char *fb_base64_encode(const unsigned char *data, size_t len);

#endif
