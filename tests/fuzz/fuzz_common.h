/* Shared by the libFuzzer targets in tests/fuzz/: splitting one input into pieces, loading JSON the way a
 * request is loaded, and FUZZ_CHECK, which turns a broken invariant into a crash libFuzzer records (the
 * sanitizers catch memory errors, leaks and UB; these checks catch wrong answers that are certain). */
#ifndef FB_FUZZ_COMMON_H
#define FB_FUZZ_COMMON_H
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond, ...)                                                                              \
    do {                                                                                                   \
        if (!(cond)) {                                                                                     \
            fprintf(stderr, "fuzz invariant broken at %s:%d: %s: ", __FILE__, __LINE__, #cond);           \
            fprintf(stderr, __VA_ARGS__);                                                                  \
            fputc('\n', stderr);                                                                           \
            abort();                                                                                       \
        }                                                                                                  \
    } while (0)

/* Pieces of an input separated by a line holding only "--": "\n--\n". JSON text never holds that (a
 * string cannot contain a raw newline), so a document may be any JSON and the separator stays readable
 * in seed files. Fills at most max pieces (the last one takes the rest); returns how many. */
typedef struct fuzz_piece {
    const char *p;
    size_t n;
} fuzz_piece;

static inline size_t fuzz_split(const uint8_t *data, size_t size, fuzz_piece *out, size_t max)
{
    static const char sep[] = "\n--\n";
    const char *s = (const char *)data;
    size_t k = 0;
    while (k + 1 < max) {
        const char *hit = size >= 4 ? memmem(s, size, sep, 4) : NULL;
        if (!hit)
            break;
        out[k].p = s;
        out[k].n = (size_t)(hit - s);
        k++;
        size -= out[k - 1].n + 4;
        s = hit + 4;
    }
    out[k].p = s;
    out[k].n = size;
    return k + 1;
}

/* The next line of piece *pc (without its '\n') as a fresh NUL-terminated string (caller frees), or NULL
 * at the end. Embedded NUL bytes end the C string early, as they would for any path handed to the API. */
static inline char *fuzz_next_line(fuzz_piece *pc)
{
    if (!pc->p)
        return NULL;
    const char *nl = memchr(pc->p, '\n', pc->n);
    size_t n = nl ? (size_t)(nl - pc->p) : pc->n;
    char *line = malloc(n + 1);
    if (!line)
        abort();
    memcpy(line, pc->p, n);
    line[n] = '\0';
    if (nl) {
        pc->n -= n + 1;
        pc->p = nl + 1;
    } else {
        pc->p = NULL;
        pc->n = 0;
    }
    return line;
}

/* A JSON document the way fb_request_parse loads one (big numbers kept exact, duplicate keys refused,
 * \u0000 allowed), but any value at the top. NULL for an empty piece or malformed JSON. */
static inline json_t *fuzz_json(fuzz_piece pc)
{
    if (pc.n == 0)
        return NULL;
    json_error_t jerr;
    return fb_json_loadb(pc.p, pc.n, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &jerr);
}

#endif
