/* The C/C++ runtime of compiled calls (lang/c_dispatch.c): the JSON converters and the result writer, on the
 * harness protocol's fds (docs/internals/harness-protocol.md). A real C file, embedded by embed.S: for C it
 * is compiled once per compiler into an object every program links (FNBOX__FN empty: the functions are
 * extern); a C++ program holds its text after `#define FNBOX__FN static`. It runs only inside the sandbox. */
#ifndef FNBOX__FN
#define FNBOX__FN
#endif
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* stream: the result value, sent to fd 3 in 1 MiB pieces instead of held whole (a 64 MB result would
 * otherwise need a second 64 MB) */
typedef struct fnbox__buf { char *p; size_t n, cap; int stream; } fnbox__buf;

FNBOX__FN void fnbox__write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            _exit(70);
        p += w;
        n -= (size_t)w;
    }
}

static int fnbox__ok_sent;

/* The result so far to fd 3, after the {"ok":true} line. */
FNBOX__FN void fnbox__flush(fnbox__buf *b)
{
    if (!fnbox__ok_sent) {
        fflush(NULL);
        fnbox__write_all(3, "{\"ok\":true}\n", 12);
        fnbox__ok_sent = 1;
    }
    fnbox__write_all(3, b->p, b->n);
    b->n = 0;
}

FNBOX__FN void fnbox__add(fnbox__buf *b, const char *s, size_t n)
{
    if (b->stream && b->n + n > ((size_t)1 << 20)) {
        fnbox__flush(b);
        if (n > ((size_t)1 << 20)) {
            fnbox__write_all(3, s, n);
            return;
        }
    }
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 256;
        while (cap < b->n + n + 1)
            cap *= 2;
        char *p = (char *)realloc(b->p, cap);
        if (!p)
            abort();
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

FNBOX__FN void fnbox__adds(fnbox__buf *b, const char *s) { fnbox__add(b, s, strlen(s)); }

/* JSON string; invalid UTF-8 becomes U+FFFD */
FNBOX__FN void fnbox__put_strn(fnbox__buf *b, const char *s, size_t n)
{
    fnbox__add(b, "\"", 1);
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            char e[2] = {'\\', (char)c};
            fnbox__add(b, e, 2);
            i++;
        } else if (c < 0x20 || c == 0x7f) {
            char e[8];
            snprintf(e, sizeof e, "\\u%04x", c);
            fnbox__adds(b, e);
            i++;
        } else if (c < 0x80) { /* a run of plain bytes at once */
            size_t j = i + 1;
            while (j < n && (unsigned char)s[j] >= 0x20 && (unsigned char)s[j] < 0x7f && s[j] != '"' &&
                   s[j] != '\\')
                j++;
            fnbox__add(b, s + i, j - i);
            i = j;
        } else {
            size_t len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
            int ok = len > 0 && i + len <= n;
            for (size_t k = 1; ok && k < len; k++)
                ok = ((unsigned char)s[i + k] & 0xc0) == 0x80;
            if (ok && len >= 3) {
                unsigned char d = (unsigned char)s[i + 1];
                ok = !(c == 0xe0 && d < 0xa0) && !(c == 0xed && d > 0x9f) && !(c == 0xf0 && d < 0x90) &&
                     !(c == 0xf4 && d > 0x8f);
            }
            if (ok) {
                fnbox__add(b, s + i, len);
                i += len;
            } else {
                fnbox__adds(b, "\\ufffd");
                i++;
            }
        }
    }
    fnbox__add(b, "\"", 1);
}

FNBOX__FN void fnbox__put_str(fnbox__buf *b, const char *s)
{
    if (!s)
        fnbox__adds(b, "null");
    else
        fnbox__put_strn(b, s, strlen(s));
}

FNBOX__FN void fnbox__put_i64(fnbox__buf *b, long long v)
{
    char t[32];
    snprintf(t, sizeof t, "%lld", v);
    fnbox__adds(b, t);
}

FNBOX__FN void fnbox__put_u64(fnbox__buf *b, unsigned long long v)
{
    char t[32];
    snprintf(t, sizeof t, "%llu", v);
    fnbox__adds(b, t);
}

FNBOX__FN void fnbox__put_bool(fnbox__buf *b, int v) { fnbox__adds(b, v ? "true" : "false"); }

FNBOX__FN void fnbox__put_char(fnbox__buf *b, char c) { fnbox__put_strn(b, &c, 1); }

/* the shortest text that reads back as the same value; NaN and infinities are null */
FNBOX__FN void fnbox__put_f(fnbox__buf *b, double v, int is_float)
{
    if (isnan(v) || isinf(v)) {
        fnbox__adds(b, "null");
        return;
    }
    char t[64];
    for (int prec = is_float ? 6 : 15; prec <= 17; prec++) {
        snprintf(t, sizeof t, "%.*g", prec, v);
        if (is_float ? (float)strtod(t, NULL) == (float)v : strtod(t, NULL) == v)
            break;
    }
    fnbox__adds(b, t);
    if (!strpbrk(t, ".eE"))
        fnbox__adds(b, ".0");
}

FNBOX__FN void fnbox__finish_ok(fnbox__buf *value)
{
    fnbox__flush(value);
}

FNBOX__FN void fnbox__fail(const char *type, const char *msg)
{
    fnbox__buf b = {0, 0, 0, 0};
    fnbox__adds(&b, "{\"ok\":false,\"error\":{\"type\":");
    fnbox__put_str(&b, type);
    fnbox__adds(&b, ",\"message\":");
    fnbox__put_str(&b, msg);
    fnbox__adds(&b, "},\"exitCode\":1}\n");
    fflush(NULL);
    fnbox__write_all(3, b.p, b.n);
    exit(1);
}

FNBOX__FN void fnbox__bad_arg(const char *param, const char *type, const char *want, json_t *got)
{
    static const char *const names[] = {"object", "array", "string", "integer", "real", "true", "false", "null"};
    char msg[512];
    snprintf(msg, sizeof msg, "parameter '%s' (%s): expected %s, got %s", param, type, want,
             got ? names[json_typeof(got)] : "nothing");
    fnbox__fail("ArgumentError", msg);
}

/* A digit string: fnbox sends integers beyond 64 bits as strings (they still may fit an unsigned type). */
FNBOX__FN int fnbox__digits(const char *s)
{
    if (*s == '-')
        s++;
    if (!*s)
        return 0;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return 0;
    return 1;
}

FNBOX__FN long long fnbox__get_i64(json_t *j, int bits, const char *param, const char *type)
{
    long long v;
    if (json_is_integer(j)) {
        v = json_integer_value(j);
    } else if (json_is_string(j) && fnbox__digits(json_string_value(j))) {
        fnbox__bad_arg(param, type, "an integer that fits the type", j);
        return 0;
    } else {
        fnbox__bad_arg(param, type, "an integer", j);
        return 0;
    }
    long long max = bits >= 64 ? LLONG_MAX : (1LL << (bits - 1)) - 1, min = -max - 1;
    if (v < min || v > max) {
        char want[128];
        snprintf(want, sizeof want, "an integer in [%lld, %lld] (got %lld)", min, max, v);
        fnbox__fail("ArgumentError", want);
    }
    return v;
}

FNBOX__FN unsigned long long fnbox__get_u64(json_t *j, int bits, const char *param, const char *type)
{
    unsigned long long v;
    unsigned long long max = bits >= 64 ? ULLONG_MAX : (1ULL << bits) - 1;
    if (json_is_integer(j) && json_integer_value(j) >= 0) {
        v = (unsigned long long)json_integer_value(j);
    } else if (json_is_string(j) && fnbox__digits(json_string_value(j)) && json_string_value(j)[0] != '-') {
        errno = 0;
        v = strtoull(json_string_value(j), NULL, 10);
        if (errno == ERANGE)
            v = 0, max = 0, j = NULL;
    } else {
        v = 0, max = 0, j = NULL;
    }
    if (!j || v > max) {
        char want[128];
        snprintf(want, sizeof want, "parameter '%s' (%s): expected an integer in [0, %llu]", param, type,
                 bits >= 64 ? ULLONG_MAX : (1ULL << bits) - 1);
        fnbox__fail("ArgumentError", want);
    }
    return v;
}

FNBOX__FN double fnbox__get_f(json_t *j, const char *param, const char *type)
{
    if (json_is_number(j))
        return json_number_value(j);
    if (json_is_string(j)) { /* a number beyond double range, sent as text */
        const char *s = json_string_value(j);
        char *end;
        double v = strtod(s, &end);
        if (*s && (*s == '-' || (*s >= '0' && *s <= '9')) && *end == '\0')
            return v;
    }
    fnbox__bad_arg(param, type, "a number", j);
    return 0;
}

FNBOX__FN int fnbox__get_bool(json_t *j, const char *param, const char *type)
{
    if (!json_is_boolean(j))
        fnbox__bad_arg(param, type, "true or false", j);
    return json_is_true(j);
}

FNBOX__FN char fnbox__get_char(json_t *j, const char *param, const char *type)
{
    if (json_is_string(j) && json_string_length(j) == 1)
        return json_string_value(j)[0];
    if (json_is_integer(j) && json_integer_value(j) >= CHAR_MIN && json_integer_value(j) <= UCHAR_MAX)
        return (char)json_integer_value(j);
    fnbox__bad_arg(param, type, "a one-byte string or a character code", j);
    return 0;
}

/* NULL for JSON null; a private copy (the function may write to a char*) */
FNBOX__FN char *fnbox__get_str(json_t *j, const char *param, const char *type)
{
    if (json_is_null(j))
        return NULL;
    if (!json_is_string(j))
        fnbox__bad_arg(param, type, "a string or null", j);
    if (strlen(json_string_value(j)) != json_string_length(j)) /* it would end at the NUL, silently */
        fnbox__bad_arg(param, type, "a string without NUL characters (a C string ends at the first)", j);
    char *s = (char *)malloc(json_string_length(j) + 1);
    if (!s)
        abort();
    memcpy(s, json_string_value(j), json_string_length(j) + 1);
    return s;
}

static json_t *fnbox__root;

static size_t fnbox__read4(void *buf, size_t len, void *data)
{
    (void)data;
    for (;;) {
        ssize_t r = read(4, buf, len);
        if (r >= 0)
            return (size_t)r;
        if (errno != EINTR)
            return (size_t)-1;
    }
}

/* A streamed call's output reaches the caller as it is written (docs/internals/harness-protocol.md,
 * "stream"): stdio buffers a pipe fully, so it would come at the end. Line buffering would cost a write(2)
 * per line (a 50 MB loop of short lines: 20x the bare program's time), so the block buffer stays and a
 * thread flushes stdout every FNBOX__FLUSH_NS: a line waits that long at most. stdio's lock keeps the flush
 * and the function's own writes apart; C++'s cout goes through stdio too (sync_with_stdio). stderr is
 * unbuffered already. The thread takes no signal (the function's handlers stay the main thread's); a fork's
 * child starts its own. If none can start (the call's pids limit), line buffering it is. */
#define FNBOX__FLUSH_NS 5000000L

static void *fnbox__flusher(void *arg)
{
    (void)arg;
    const struct timespec every = {0, FNBOX__FLUSH_NS};
    for (;;) {
        nanosleep(&every, NULL);
        fflush(stdout);
    }
    return NULL;
}

static void fnbox__start_flusher(void)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_t t;
    int rc = pthread_create(&t, NULL, fnbox__flusher, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc == 0)
        pthread_detach(t);
    else
        setvbuf(stdout, NULL, _IOLBF, BUFSIZ);
}

static void fnbox__timed_flush(void)
{
    fnbox__start_flusher();
    pthread_atfork(NULL, NULL, fnbox__start_flusher);
}

/* jansson parses straight from fd 4 (json_loadfd would read it a byte per syscall): no whole copy of a
 * large input is held besides the parsed values */
FNBOX__FN json_t *fnbox__read_args(size_t nmin, size_t nmax, const char *fname)
{
    json_error_t e;
    json_t *root = fnbox__root = json_load_callback(fnbox__read4, NULL, JSON_ALLOW_NUL, &e);
    close(4);
    json_t *args = root ? json_object_get(root, "args") : NULL;
    if (json_is_true(json_object_get(root, "stream")))
        fnbox__timed_flush();
    if (!json_is_array(args))
        fnbox__fail("HarnessError", "the call input has no args array");
    size_t n = json_array_size(args);
    if (n < nmin || n > nmax) {
        char msg[256];
        snprintf(msg, sizeof msg, "%s() takes %s%zu argument%s but %zu were given", fname,
                 nmin == nmax ? "" : n < nmin ? "at least " : "at most ", n < nmin ? nmin : nmax,
                 (n < nmin ? nmin : nmax) == 1 ? "" : "s", n);
        fnbox__fail("ArgumentError", msg);
    }
    return args;
}

FNBOX__FN json_t *fnbox__arg(json_t *args, size_t i) { return json_array_get(args, i); }

/* Once every argument is converted: the parsed input is not kept during the call. */
FNBOX__FN void fnbox__free_args(void)
{
    json_decref(fnbox__root);
    fnbox__root = NULL;
}
