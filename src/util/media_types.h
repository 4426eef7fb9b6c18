/* A file's media type from its name, by a mime.types table: Debian's media-types package keeps the list
 * of registered types with their usual extensions at /etc/mime.types (what Python's mimetypes, Apache and
 * mailcap read), so fnbox follows it instead of holding a table of its own. */
#ifndef FB_MEDIA_TYPES_H
#define FB_MEDIA_TYPES_H
#include <stddef.h>

#include "util/error.h"

#define FB_MEDIA_TYPES_PATH "/etc/mime.types"
#define FB_MEDIA_TYPES_MAX_BYTES (1u << 20) /* the file (Debian 12's: 74 KB) */
#define FB_MEDIA_TYPE_MAX_EXT 32            /* bytes of an extension looked up; longer ones are unknown */

typedef struct fb_media_types fb_media_types;

/* The table in text (mime.types' format: "type ext ext..." a line, '#' starts a comment, a type without
 * extensions is skipped; an extension listed twice keeps its first type). Entries that could not be sent
 * in a header as they are (not type/subtype of printable ASCII; an extension of other bytes) are skipped.
 * NULL only when out of memory. */
fb_media_types *fb_media_types_parse(const char *text, size_t len, fb_error *err);
/* The table in the file at path: NULL with err naming path and the cause when it cannot be read. */
fb_media_types *fb_media_types_load(const char *path, fb_error *err);
/* The media type of the file named name[0..len) (any bytes; a path's last component is taken), by its
 * extension, ASCII case ignored ("x.PNG" is image/png); NULL for none known, no extension or t NULL. A
 * name whose only dot starts it (".bashrc") has no extension. Owned by t. */
const char *fb_media_types_find(const fb_media_types *t, const char *name, size_t len);
size_t fb_media_types_count(const fb_media_types *t);
void fb_media_types_free(fb_media_types *t);

#endif
