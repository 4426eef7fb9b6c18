/* Large results without a copy: a sealed memfd's pages mapped as a buffer, and the answer built around
 * them in place. A result channel of 64 MB read into the heap costs fnbox a copy and 16,000 page faults
 * (~55 ms); mapped, the value's pages stay the file's until a byte of them is written. */
#ifndef FB_MAPPED_H
#define FB_MAPPED_H
#include <stdbool.h>
#include <stddef.h>

#include "util/buf.h"

/* Below this a read is as cheap as a mapping. */
#define FB_MAPPED_MIN (1u << 20)

/* Seals the memfd fd against every change (write, shrink, grow: whoever else still holds it can no
 * longer touch what is read) and maps its size bytes, followed by a zero byte, as b's data (b->map_len
 * set; b empty before). -1 with errno when the file cannot be sealed (a writable shared mapping of it
 * exists, its seals are sealed) or mapped, or its size is not size: the caller reads it instead. */
int fb_buf_map_sealed(fb_buf *b, int fd, size_t size);

/* The answer head + b's bytes [off, off + len) + tail, NUL-terminated, made of b's mapping (consumed
 * either way: b is empty after). The value's pages are moved, not copied: only the pages that the head
 * and tail touch are copied on write. NULL on failure (out of memory or address space). The answer is
 * released with fb_mapped_release. */
char *fb_mapped_answer(fb_buf *b, size_t off, size_t len, const char *head, size_t head_len, const char *tail,
                       size_t tail_len, size_t *out_len);

/* Unmaps p if it is an answer of fb_mapped_answer (true), else false (p is the caller's to free). */
bool fb_mapped_release(void *p);

#endif
