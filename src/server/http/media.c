#include "server/http/media.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "util/utf8.h"

/* RFC 8187's attr-char: what filename* carries as it is; every other byte is %XX. */
static bool attr_char(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr("!#$&+-.^_`|~", c);
}

/* A byte the quoted filename keeps: printable ASCII but the quote, the backslash and '%' (which some
 * clients decode), and ';' (a few split the header there). */
static bool plain_char(unsigned char c)
{
    return c >= ' ' && c <= '~' && !strchr("\"\\%;", c);
}

/* The longest: "attachment; filename=\"" n "\"; filename*=UTF-8''" and 3 n. */
_Static_assert(sizeof((fb_http_file_headers *)0)->disposition > 42 + 4 * FB_HTTP_FILENAME_MAX,
               "a Content-Disposition of the longest name fits");

static void disposition(const char *name, size_t n, char *out, size_t cap)
{
    size_t o = (size_t)snprintf(out, cap, "attachment");
    if (n == 0 || n > FB_HTTP_FILENAME_MAX)
        return;
    o += (size_t)snprintf(out + o, cap - o, "; filename=\"");
    for (size_t i = 0; i < n; i++)
        out[o++] = plain_char((unsigned char)name[i]) ? name[i] : '_';
    o += (size_t)snprintf(out + o, cap - o, "\"");
    if (!fb_utf8_valid(name, n) || memchr(name, '\0', n))
        return;
    o += (size_t)snprintf(out + o, cap - o, "; filename*=UTF-8''");
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)name[i];
        o += (size_t)(attr_char(c) ? snprintf(out + o, cap - o, "%c", c) : snprintf(out + o, cap - o, "%%%02X", c));
    }
}

void fb_http_file_headers_of(const fb_media_types *t, const char *path, size_t plen, const char *data, size_t len,
                             fb_http_file_headers *h)
{
    const char *type = fb_media_types_find(t, path, plen);
    if (!type || strlen(type) + sizeof "; charset=utf-8" > sizeof h->type)
        type = FB_HTTP_MEDIA_DEFAULT;
    /* A text without a charset is read as ISO-8859-1 by some clients (Python's requests), so say UTF-8
     * where it is: never where it is not, where the client's guess is all there is. */
    bool utf8 = strncmp(type, "text/", 5) == 0 && fb_utf8_valid(data, len);
    snprintf(h->type, sizeof h->type, "%s%s", type, utf8 ? "; charset=utf-8" : "");
    const char *base = path;
    for (const char *p = path; p < path + plen; p++)
        if (*p == '/')
            base = p + 1;
    disposition(base, (size_t)(path + plen - base), h->disposition, sizeof h->disposition);
}
