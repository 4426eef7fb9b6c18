/* Output for a model's context: bounded, its head and tail kept (the start says what ran, the end how it
 * ended). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/mcp/mcp.h"

#define MARK_ROOM 64 /* bytes kept for the line saying what was left out */

static bool continuation(unsigned char c)
{
    return (c & 0xC0) == 0x80;
}

char *fb_mcp_cap(const char *s, size_t len, size_t cap, bool *cut)
{
    *cut = len > cap;
    if (!*cut)
        return strndup(s, len);
    char mark[96]; /* at most 47 bytes: the whole stays within cap (cap is at least 256) */
    size_t keep = cap > MARK_ROOM ? cap - MARK_ROOM : 0, head = keep / 2, tail = keep - head;
    while (head > 0 && continuation((unsigned char)s[head]))
        head--;
    size_t from = len - tail;
    while (from < len && continuation((unsigned char)s[from]))
        from++;
    int m = snprintf(mark, sizeof mark, "\n[... %zu bytes left out ...]\n", from - head);
    size_t n = head + (size_t)m + (len - from);
    char *out = malloc(n + 1);
    if (!out)
        return NULL;
    memcpy(out, s, head);
    memcpy(out + head, mark, (size_t)m);
    memcpy(out + head + (size_t)m, s + from, len - from);
    out[n] = '\0';
    return out;
}
