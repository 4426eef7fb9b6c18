/* Base64 (see base64.h). */
#include "util/base64.h"

#include <nettle/base64.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* One pass of nettle's decoder with the given alphabet; padding is added when the input lacks it. */
static int decode_with(void (*init)(struct base64_decode_ctx *), const char *s, size_t len, unsigned char *buf,
                       size_t *n)
{
    struct base64_decode_ctx ctx;
    init(&ctx);
    size_t got = len / 4 * 3 + 3;
    if (!base64_decode_update(&ctx, &got, buf, len, s))
        return -1;
    static const char pad[] = "==";
    size_t missing = (4 - len % 4) % 4;
    size_t more = 3;
    if (missing == 3)
        return -1;
    if (missing && !base64_decode_update(&ctx, &more, buf + got, missing, pad))
        return -1;
    if (!base64_decode_final(&ctx))
        return -1;
    *n = got + (missing ? more : 0);
    return 0;
}

int fb_base64_decode(const char *s, size_t len, unsigned char **out, size_t *out_len)
{
    if (len > SIZE_MAX / 3 - 8)
        return -2;
    unsigned char *buf = malloc(len / 4 * 3 + 6);
    if (!buf)
        return -2;
    size_t n = 0;
    if (decode_with(base64_decode_init, s, len, buf, &n) < 0 && decode_with(base64url_decode_init, s, len, buf, &n) < 0) {
        free(buf);
        return -1;
    }
    *out = buf;
    *out_len = n;
    return 0;
}

char *fb_base64_encode(const unsigned char *data, size_t len)
{
    if (len > (SIZE_MAX - 1) / 4 * 3 - 3)
        return NULL;
    char *out = malloc(BASE64_ENCODE_RAW_LENGTH(len) + 1);
    if (!out)
        return NULL;
    base64_encode_raw(out, len, data);
    out[BASE64_ENCODE_RAW_LENGTH(len)] = '\0';
    return out;
}
