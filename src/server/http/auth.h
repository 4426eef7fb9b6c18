/* Bearer tokens (`--token-file`): the file's parsing, and the check of a request's Authorization header,
 * in time that does not depend on the tokens the server holds. */
#ifndef FB_HTTP_AUTH_H
#define FB_HTTP_AUTH_H
#include <stdbool.h>
#include <stddef.h>

#include "util/error.h"

#define FB_HTTP_TOKENS_MAX 64            /* tokens in one file */
#define FB_HTTP_TOKEN_MIN 16             /* bytes: shorter is too easy to guess to be a secret */
#define FB_HTTP_TOKEN_MAX 256            /* bytes */
#define FB_HTTP_TOKEN_FILE_MAX (64 * 1024) /* bytes */

typedef struct fb_http_tokens {
    size_t n;
    size_t len[FB_HTTP_TOKENS_MAX];
    /* zero-padded to the full width: the check reads every byte of every slot, whatever the lengths */
    unsigned char tok[FB_HTTP_TOKENS_MAX][FB_HTTP_TOKEN_MAX];
} fb_http_tokens;

/* Parses a token file's text: one token per line; blank lines and whitespace around a token are
 * ignored. A token is 16 to 256 visible ASCII characters (RFC 6750's b64token and more; no space). No
 * token at all is an error, as is a line that is not a token (named by its number, never its text). */
int fb_http_tokens_parse(const char *text, size_t len, fb_http_tokens *out, fb_error *err);

/* Reads and parses the file at path. *insecure is set when the file is readable or writable by group or
 * others (the caller warns: anyone who can read it can run code through the server). */
int fb_http_tokens_load(const char *path, fb_http_tokens *out, bool *insecure, fb_error *err);

/* Whether an Authorization header value ("Bearer <token>", scheme case-insensitive) names one of the
 * tokens. NULL (no header) is false. Every slot is compared in full whatever matches, so the time taken
 * says nothing about the tokens held. */
bool fb_http_tokens_check(const fb_http_tokens *t, const char *authorization);
/* Which token the header names (its index in the file), -1 for none; in constant time as the check. */
int fb_http_tokens_which(const fb_http_tokens *t, const char *authorization);

#endif
