#include "util/buf.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

void fb_buf_init(fb_buf *b, size_t max)
{
    memset(b, 0, sizeof *b);
    b->max = max;
}

/* A mapped buffer (util/mapped.h) that is to change or leave becomes a heap block first. */
static int to_heap(fb_buf *b, size_t need)
{
    if (!b->map_len)
        return 0;
    size_t cap = (need > b->len ? need : b->len) + 1;
    char *p = malloc(cap);
    if (!p)
        return -1;
    memcpy(p, b->data, b->len);
    p[b->len] = '\0';
    munmap(b->data, b->map_len);
    b->data = p;
    b->cap = cap;
    b->map_len = 0;
    return 0;
}

static int buf_reserve(fb_buf *b, size_t need)
{
    if (to_heap(b, need) < 0)
        return -1;
    if (need + 1 <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < need + 1)
        cap *= 2;
    char *p = realloc(b->data, cap);
    if (!p)
        return -1;
    b->data = p;
    b->cap = cap;
    return 0;
}

int fb_buf_reserve(fb_buf *b, size_t need)
{
    if (to_heap(b, need) < 0)
        return -1;
    if (need + 1 <= b->cap)
        return 0;
    char *p = realloc(b->data, need + 1);
    if (!p)
        return -1;
    b->data = p;
    b->cap = need + 1;
    return 0;
}

int fb_buf_append(fb_buf *b, const void *data, size_t len)
{
    if (b->len + len > b->max) {
        b->truncated = true;
        len = b->max - b->len;
    }
    if (buf_reserve(b, b->len + len) < 0)
        return -1;
    if (len)
        memcpy(b->data + b->len, data, len);
    b->len += len;
    b->data[b->len] = '\0';
    return 0;
}

char *fb_buf_steal(fb_buf *b, size_t *len)
{
    if (buf_reserve(b, b->len) < 0)
        return NULL;
    b->data[b->len] = '\0';
    char *p = b->data;
    if (len)
        *len = b->len;
    b->data = NULL;
    b->len = b->cap = 0;
    return p;
}

void fb_buf_free(fb_buf *b)
{
    if (b->map_len)
        munmap(b->data, b->map_len);
    else
        free(b->data);
    b->data = NULL;
    b->len = b->cap = b->map_len = 0;
}
