#include "util/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int fb_set_error(fb_error *err, const char *type, int err_no, const char *fmt, ...)
{
    if (!err)
        return -1;
    snprintf(err->type, sizeof err->type, "%s", type ? type : "Error");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    err->err_no = err_no;
    if (err_no) {
        size_t n = strlen(err->message);
        snprintf(err->message + n, sizeof err->message - n, ": %s", strerror(err_no));
    }
    return -1;
}

int fb_wrap_error(fb_error *err, const char *fmt, ...)
{
    if (!err)
        return -1;
    char prefix[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(prefix, sizeof prefix - 2, fmt, ap);
    va_end(ap);
    if (n < 0)
        return -1;
    size_t plen = strlen(prefix);
    memcpy(prefix + plen, ": ", 3);
    plen += 2;
    size_t mlen = strnlen(err->message, sizeof err->message - 1);
    if (plen + mlen >= sizeof err->message)
        mlen = sizeof err->message - 1 - plen;
    memmove(err->message + plen, err->message, mlen);
    memcpy(err->message, prefix, plen);
    err->message[plen + mlen] = '\0';
    return -1;
}

void fb_error_clear(fb_error *err)
{
    if (err)
        memset(err, 0, sizeof *err);
}

bool fb_error_is_set(const fb_error *err)
{
    return err && err->type[0] != '\0';
}
