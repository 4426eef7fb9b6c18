#include "util/buf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

void fb_buf_init(fb_buf *b, size_t max)
{
    memset(b, 0, sizeof *b);
    b->max = max;
}

/* From this size on a buffer asks for transparent huge pages (on hosts where THP is "madvise", the
 * default of many distributions): a 64 MB argument or result is otherwise 16,000 page faults per copy,
 * a third of fnbox's own time for it. Only a hint: where it is refused, small pages are used. */
#define LARGE_BUF (4u << 20)
#define HUGE_PAGE ((uintptr_t)2 << 20)

static void ask_huge_pages(char *p, size_t cap)
{
    if (cap < LARGE_BUF)
        return;
    uintptr_t from = ((uintptr_t)p + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
    uintptr_t to = ((uintptr_t)p + cap) & ~(HUGE_PAGE - 1);
    if (to > from)
        (void)madvise((void *)from, to - from, MADV_HUGEPAGE);
}

static int buf_reserve(fb_buf *b, size_t need)
{
    if (need + 1 <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < need + 1)
        cap *= 2;
    char *p = realloc(b->data, cap);
    if (!p)
        return -1;
    ask_huge_pages(p, cap);
    b->data = p;
    b->cap = cap;
    return 0;
}

int fb_buf_reserve(fb_buf *b, size_t need)
{
    if (need + 1 <= b->cap)
        return 0;
    char *p = realloc(b->data, need + 1);
    if (!p)
        return -1;
    ask_huge_pages(p, need + 1);
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
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}
