/* A validating JSON scanner: says whether a text is one JSON value as fnbox's jansson calls accept it,
 * without building a tree. A large argument or result then costs one pass over its bytes instead of a
 * tree of small allocations (tens of bytes per value: ~40x the text for small records) and a dump back
 * to text. What it accepts is what jansson accepts: RFC 8259, strict UTF-8 (no overlong forms, no
 * surrogates), \u escapes with paired surrogates, \u0000 in strings (JSON_ALLOW_NUL) but not in keys, at
 * most FB_JSON_SCAN_MAX_DEPTH levels (jansson's JSON_PARSER_MAX_DEPTH). It gives no message: a caller
 * that must explain a rejection asks jansson, which then names the cause in its own words. */
#ifndef FB_JSON_SCAN_H
#define FB_JSON_SCAN_H
#include <stdbool.h>
#include <stddef.h>

#define FB_JSON_SCAN_MAX_DEPTH 2048

typedef struct fb_json_scan {
    /* in */
    bool reject_duplicates; /* an object naming a key twice is refused (JSON_REJECT_DUPLICATES) */
    bool reals_in_range;    /* a number beyond a double's range is refused (JSON_DECODE_INT_AS_REAL) */
    /* Called for each value of the top-level array or object, in order: key (its raw text between the
     * quotes, escapes as written) or NULL in an array, and the value's text. Returning nonzero stops
     * the scan, which then fails. May be NULL. */
    int (*member)(void *ctx, const char *key, size_t key_len, const char *value, size_t value_len);
    void *ctx;
    /* out */
    bool big_int;           /* an integer beyond +-(2^53 - 1): a JavaScript number would not hold it */
    bool oom;               /* the failure was running out of memory (the duplicate check's key list) */
    size_t error_at;        /* the byte where the scan failed */
} fb_json_scan;

/* 0 when text[0..len) is exactly one JSON value (whitespace around it allowed), -1 when not. */
int fb_json_scan_text(const char *text, size_t len, fb_json_scan *s);

#endif
