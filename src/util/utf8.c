#include "util/utf8.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at p (RFC 3629: no overlongs, no surrogates, <= U+10FFFF), or 0. */
static size_t valid_seq(const unsigned char *p, size_t left)
{
    unsigned char c = p[0];
    if (c < 0x80)
        return 1;
    size_t n;
    uint32_t cp, min;
    if ((c & 0xE0) == 0xC0) { n = 2; cp = c & 0x1F; min = 0x80; }
    else if ((c & 0xF0) == 0xE0) { n = 3; cp = c & 0x0F; min = 0x800; }
    else if ((c & 0xF8) == 0xF0) { n = 4; cp = c & 0x07; min = 0x10000; }
    else return 0;
    if (left < n)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (p[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return n;
}

char *fb_utf8_sanitize(const char *s, size_t len, size_t *out_len)
{
    static const char repl[] = "\xEF\xBF\xBD";
    if (len > (SIZE_MAX - 1) / 3)
        return NULL;
    char *out = malloc(len * 3 + 1); /* worst case: every byte becomes U+FFFD */
    if (!out)
        return NULL;
    const unsigned char *p = (const unsigned char *)s;
    size_t o = 0;
    for (size_t i = 0; i < len;) {
        size_t n = valid_seq(p + i, len - i);
        if (n == 0) {
            memcpy(out + o, repl, 3);
            o += 3;
            i++;
        } else {
            memcpy(out + o, p + i, n);
            o += n;
            i += n;
        }
    }
    out[o] = '\0';
    *out_len = o;
    return out;
}

bool fb_utf8_valid(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < len;) {
        if (p[i] < 0x80) { /* the common case, a byte at a time */
            i++;
            continue;
        }
        size_t n = valid_seq(p + i, len - i);
        if (n == 0)
            return false;
        i += n;
    }
    return true;
}
