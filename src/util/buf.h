/* A growable byte buffer with a named maximum (every buffer fed by outside input has one). */
#ifndef FB_BUF_H
#define FB_BUF_H
#include <stdbool.h>
#include <stddef.h>

typedef struct fb_buf {
    char *data;       /* NUL-terminated when non-NULL */
    size_t len;
    size_t cap;
    size_t max;       /* bytes beyond this are dropped and `truncated` is set */
    bool truncated;
    size_t map_len;   /* nonzero: data is a mapping of map_len bytes (util/mapped.h), not the heap's */
} fb_buf;

void fb_buf_init(fb_buf *b, size_t max);
/* Room for need bytes in all, allocated at once and exactly (a text whose size is known is not grown
 * by doubling, which would hold up to twice it). -1 on allocation failure. */
int fb_buf_reserve(fb_buf *b, size_t need);
/* Appends up to the maximum; returns -1 only on allocation failure. */
int fb_buf_append(fb_buf *b, const void *data, size_t len);
/* Hands the data to the caller (who frees it: a mapped buffer's bytes are copied to the heap first) and
 * resets the buffer. Never NULL unless OOM. */
char *fb_buf_steal(fb_buf *b, size_t *len);
void fb_buf_free(fb_buf *b);

#endif
