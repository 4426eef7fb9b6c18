/* JSON wrappers around jansson that keep numbers jansson cannot hold (integers beyond 64 bits, reals
 * beyond double range) exact: they are carried through the document as marked strings and written back
 * verbatim. The marker starts with a NUL character and holds a per-process random nonce, so no string a
 * request contains can be mistaken for one. */
#ifndef FB_JSON_H
#define FB_JSON_H
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/uio.h>

/* Like json_loadb (flags are jansson's), but out-of-range numbers become marked strings. */
json_t *fb_json_loadb(const char *text, size_t len, size_t flags, json_error_t *jerr);
/* Like json_dumps, with marked strings written back as the original number text. Caller frees. */
char *fb_json_dumps(const json_t *v, size_t flags);
/* The shortest text that reads back as the finite d (15, 16 or 17 significant digits), in jansson's form:
 * no '+' nor leading zeros in the exponent, ".0" when it would read as an integer. Its length (< 32). */
int fb_json_real_text(double d, char *buf, size_t cap);
/* text (a JSON text, taken: freed) with every real number outside strings rewritten by fb_json_real_text:
 * jansson writes a real with 17 digits (0.1 as 0.10000000000000001, a value read from 6.866578 as
 * 6.8665779999999996); this gives each back as it reads. NULL when out of memory (text freed). */
char *fb_json_shortest_reals(char *text);
/* json_dumps (flags are jansson's), its reals as fb_json_shortest_reals writes them. */
char *fb_json_dumps_shortest(const json_t *v, size_t flags);
/* The number text of a marked string, or NULL if v is not one. */
const char *fb_json_bignum(const json_t *v);
/* Dumps v compactly (reals as fb_json_shortest_reals writes them) into *out (the caller frees it) with its length in *len (len may be NULL), and
 * releases v (NULL is taken as an allocation failure). 0, or -1 when out of memory. */
int fb_json_dump_out(json_t *v, char **out, size_t *len);
/* JSON texts a document refers to instead of holding them: a large argument stays the request's text
 * (validated by util/json_scan.h) and the document holds a reference, a marked string like a big
 * number's, which fb_json_dumps_texts writes back as the text itself. The texts are borrowed: each
 * points into a buffer that outlives the table. */
typedef struct fb_json_texts {
    struct fb_json_text {
        const char *text;
        size_t len;
    } *v;
    size_t n, cap;
} fb_json_texts;

/* Adds a text and returns its reference (a new marked string), or NULL when out of memory. */
json_t *fb_json_texts_ref(fb_json_texts *t, const char *text, size_t len);
/* Whether v is a reference (any table's). */
bool fb_json_is_text_ref(const json_t *v);
void fb_json_texts_free(fb_json_texts *t);
/* fb_json_dumps, with every reference to t (may be NULL) written as its text; *len gets the length.
 * NULL when out of memory (a reference t does not hold stays as it was). */
char *fb_json_dumps_texts(const json_t *v, size_t flags, const fb_json_texts *t, size_t *len);
/* The same text without its copy: dumped (fb_json_dumps's output, taken over) cut at each reference to t,
 * the pieces of dumped and the borrowed texts in order; len is their total. Written with writev, a large
 * argument goes from the request's buffer to the harness as it came. */
typedef struct fb_json_pieces {
    char *dumped;
    struct iovec *iov;
    size_t n;
    size_t len;
} fb_json_pieces;
/* 0, or -1 when out of memory (dumped is freed either way; NULL dumped is taken as out of memory). */
int fb_json_pieces_make(char *dumped, const fb_json_texts *t, fb_json_pieces *out);
void fb_json_pieces_free(fb_json_pieces *p);

/* The JSON type of v as a request error names it: "object", "array", "string", "number" (big numbers
 * included), "boolean" or "null". */
const char *fb_json_type_name(const json_t *v);

#endif
