#include "server/http/auth.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static bool is_token_char(char c)
{
    return c > ' ' && c < 0x7f;
}

/* One line, trimmed: a token to add, or nothing when blank. */
static int add_line(const char *s, size_t n, size_t lineno, fb_http_tokens *out, fb_error *err)
{
    while (n && is_space(*s))
        s++, n--;
    while (n && is_space(s[n - 1]))
        n--;
    if (n == 0)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!is_token_char(s[i]))
            return fb_set_error(err, FB_ERR_INVALID_REQUEST, 0,
                                "line %zu: a token is visible ASCII characters without spaces", lineno);
    if (n < FB_HTTP_TOKEN_MIN || n > FB_HTTP_TOKEN_MAX)
        return fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, "line %zu: a token is %d to %d characters, this one has %zu",
                            lineno, FB_HTTP_TOKEN_MIN, FB_HTTP_TOKEN_MAX, n);
    if (out->n == FB_HTTP_TOKENS_MAX)
        return fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, "line %zu: more than %d tokens", lineno,
                            FB_HTTP_TOKENS_MAX);
    memcpy(out->tok[out->n], s, n);
    out->len[out->n++] = n;
    return 0;
}

int fb_http_tokens_parse(const char *text, size_t len, fb_http_tokens *out, fb_error *err)
{
    memset(out, 0, sizeof *out);
    size_t lineno = 1;
    for (size_t start = 0; start < len; lineno++) {
        const char *nl = memchr(text + start, '\n', len - start);
        size_t end = nl ? (size_t)(nl - text) : len;
        if (memchr(text + start, '\0', end - start))
            return fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, "line %zu: a NUL byte", lineno);
        if (add_line(text + start, end - start, lineno, out, err) < 0)
            return -1;
        start = end + 1;
    }
    if (out->n == 0)
        return fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, "no token in it (one per line)");
    return 0;
}

static int read_small(int fd, char *buf, size_t cap, size_t *len, fb_error *err)
{
    size_t n = 0;
    for (;;) {
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return fb_set_error(err, FB_ERR_INVALID_REQUEST, errno, "read");
        if (r == 0)
            break;
        n += (size_t)r;
        if (n == cap)
            return fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, "larger than %d bytes", FB_HTTP_TOKEN_FILE_MAX);
    }
    *len = n;
    return 0;
}

int fb_http_tokens_load(const char *path, fb_http_tokens *out, bool *insecure, fb_error *err)
{
    static char buf[FB_HTTP_TOKEN_FILE_MAX]; /* start-up only, one thread; wiped after parsing */
    *insecure = false;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return fb_set_error(err, FB_ERR_INVALID_REQUEST, errno, "--token-file %s", path);
    struct stat st;
    size_t len = 0;
    int rc = fstat(fd, &st) < 0 ? fb_set_error(err, FB_ERR_INVALID_REQUEST, errno, "fstat")
             : !S_ISREG(st.st_mode) ? fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, "not a regular file")
                                    : read_small(fd, buf, sizeof buf, &len, err);
    close(fd);
    if (rc == 0) {
        *insecure = (st.st_mode & (S_IRWXG | S_IRWXO)) != 0;
        rc = fb_http_tokens_parse(buf, len, out, err);
    }
    explicit_bzero(buf, sizeof buf);
    if (rc < 0)
        return fb_wrap_error(err, "--token-file %s", path);
    return 0;
}

/* Equal in time that depends only on the presented token's length (the client's own knowledge): every
 * byte of the slot is read, the stored length enters as one comparison. */
static bool slot_equal(const unsigned char *p, size_t plen, const unsigned char *slot, size_t slen)
{
    unsigned diff = plen != slen;
    for (size_t i = 0; i < FB_HTTP_TOKEN_MAX; i++)
        diff |= (unsigned)((i < plen ? p[i] : 0) ^ slot[i]);
    return diff == 0;
}

int fb_http_tokens_which(const fb_http_tokens *t, const char *authorization)
{
    static const char k_scheme[] = "Bearer";
    if (!t || !authorization || strncasecmp(authorization, k_scheme, sizeof k_scheme - 1) != 0)
        return -1;
    const char *p = authorization + sizeof k_scheme - 1;
    if (*p != ' ')
        return -1;
    while (*p == ' ')
        p++;
    size_t plen = strlen(p);
    while (plen && is_space(p[plen - 1]))
        plen--;
    if (plen == 0 || plen > FB_HTTP_TOKEN_MAX)
        return -1;
    int which = -1;
    for (size_t i = 0; i < FB_HTTP_TOKENS_MAX; i++) { /* every slot, used or not: no early exit */
        bool hit = slot_equal((const unsigned char *)p, plen, t->tok[i], t->len[i]) && i < t->n;
        which = hit ? (int)i : which;
    }
    return which;
}

bool fb_http_tokens_check(const fb_http_tokens *t, const char *authorization)
{
    return fb_http_tokens_which(t, authorization) >= 0;
}
