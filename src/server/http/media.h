/* What a session's file is sent as (GET /v1/sessions/{id}/files): its media type from its name's
 * extension (util/media_types.h: /etc/mime.types), and a download's disposition with its name. */
#ifndef FB_HTTP_MEDIA_H
#define FB_HTTP_MEDIA_H
#include <stddef.h>

#include "util/media_types.h"

#define FB_HTTP_MEDIA_DEFAULT "application/octet-stream"
#define FB_HTTP_FILENAME_MAX 255 /* bytes of a name put in Content-Disposition (NAME_MAX); longer: none */

typedef struct fb_http_file_headers {
    char type[160];         /* Content-Type: a media type the table knows for the name, else octet-stream;
                               a text/ type gets "; charset=utf-8" when the bytes are valid UTF-8 */
    char disposition[1200]; /* Content-Disposition: attachment, with the name's last component as
                               filename (ASCII, others as '_') and filename* (RFC 8187) when it is UTF-8 */
} fb_http_file_headers;

/* The headers for the file at path[0..plen) whose bytes are data[0..len); t may be NULL (no table). */
void fb_http_file_headers_of(const fb_media_types *t, const char *path, size_t plen, const char *data, size_t len,
                             fb_http_file_headers *h);

#endif
