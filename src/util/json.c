#include "util/json.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "util/buf.h"

static char g_marker[40];       /* "\0fnbox-num-<16 hex>:" (NUL first) */
static size_t g_marker_len;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void marker_init(void)
{
    unsigned char rnd[8] = {0};
    if (getrandom(rnd, sizeof rnd, 0) != sizeof rnd) /* never fails for 8 bytes after boot; keep going */
        memset(rnd, 0x5a, sizeof rnd);
    int n = snprintf(g_marker + 1, sizeof g_marker - 1, "fnbox-num-%02x%02x%02x%02x%02x%02x%02x%02x:", rnd[0], rnd[1],
                     rnd[2], rnd[3], rnd[4], rnd[5], rnd[6], rnd[7]);
    g_marker[0] = '\0';
    g_marker_len = (size_t)n + 1;
}

/* Does the number token s[0..n) fit jansson: an int64 integer, or a real of finite double range? */
static bool number_fits(const char *s, size_t n)
{
    char tok[400];
    if (n >= sizeof tok)
        return false;
    memcpy(tok, s, n);
    tok[n] = '\0';
    bool is_int = strpbrk(tok, ".eE") == NULL;
    errno = 0;
    if (is_int) {
        (void)strtoll(tok, NULL, 10);
        return errno != ERANGE;
    }
    double d = strtod(tok, NULL);
    return !(errno == ERANGE && isinf(d));
}

static size_t number_len(const char *s, size_t left)
{
    size_t i = 0;
    while (i < left && (strchr("0123456789+-.eE", s[i]) != NULL))
        i++;
    return i;
}

/* Append `"<marker><token>"`, the marker's NUL written as the JSON escape \u0000. */
static int append_marked(fb_buf *b, const char *tok, size_t n)
{
    return fb_buf_append(b, "\"\\u0000", 7) < 0 || fb_buf_append(b, g_marker + 1, g_marker_len - 1) < 0 ||
                   fb_buf_append(b, tok, n) < 0 || fb_buf_append(b, "\"", 1) < 0
               ? -1
               : 0;
}

/* Returns a rewritten copy when some number does not fit, NULL (and *none=1) when none needs it. */
static char *mark_numbers(const char *text, size_t len, size_t *out_len, int *none)
{
    fb_buf b;
    fb_buf_init(&b, (size_t)-1 / 2);
    size_t copied = 0;
    bool in_str = false;
    *none = 1;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (in_str) {
            if (c == '\\')
                i++;
            else if (c == '"')
                in_str = false;
            continue;
        }
        if (c == '"') {
            in_str = true;
            continue;
        }
        if (c != '-' && (c < '0' || c > '9'))
            continue;
        size_t n = number_len(text + i, len - i);
        if (!number_fits(text + i, n)) {
            *none = 0;
            if (fb_buf_append(&b, text + copied, i - copied) < 0 || append_marked(&b, text + i, n) < 0) {
                fb_buf_free(&b);
                return NULL;
            }
            copied = i + n;
        }
        i += n - 1;
    }
    if (*none)
        return NULL;
    if (fb_buf_append(&b, text + copied, len - copied) < 0) {
        fb_buf_free(&b);
        return NULL;
    }
    return fb_buf_steal(&b, out_len);
}

json_t *fb_json_loadb(const char *text, size_t len, size_t flags, json_error_t *jerr)
{
    pthread_once(&g_once, marker_init);
    int none = 1;
    size_t mlen = 0;
    char *marked = mark_numbers(text, len, &mlen, &none);
    if (!marked && !none)
        return NULL;
    json_t *v = json_loadb(marked ? marked : text, marked ? mlen : len, flags | JSON_ALLOW_NUL, jerr);
    free(marked);
    return v;
}

const char *fb_json_bignum(const json_t *v)
{
    pthread_once(&g_once, marker_init);
    if (!json_is_string(v) || json_string_length(v) <= g_marker_len)
        return NULL;
    const char *s = json_string_value(v);
    return memcmp(s, g_marker, g_marker_len) == 0 ? s + g_marker_len : NULL;
}

char *fb_json_dumps(const json_t *v, size_t flags)
{
    pthread_once(&g_once, marker_init);
    char *s = json_dumps(v, flags);
    if (!s)
        return NULL;
    /* In jansson's output the marker appears as "\u0000fnbox-num-...:TOKEN" */
    char needle[64];
    int nl = snprintf(needle, sizeof needle, "\"\\u0000%s", g_marker + 1);
    if (!strstr(s, needle))
        return s;
    fb_buf b;
    fb_buf_init(&b, (size_t)-1 / 2);
    const char *p = s, *hit;
    int rc = 0;
    while (rc == 0 && (hit = strstr(p, needle)) != NULL) {
        const char *tok = hit + nl;
        size_t n = strcspn(tok, "\"");
        rc = fb_buf_append(&b, p, (size_t)(hit - p)) < 0 || fb_buf_append(&b, tok, n) < 0 ? -1 : 0;
        p = tok + n + 1;
    }
    if (rc == 0)
        rc = fb_buf_append(&b, p, strlen(p));
    free(s);
    if (rc < 0) {
        fb_buf_free(&b);
        return NULL;
    }
    return fb_buf_steal(&b, NULL);
}
