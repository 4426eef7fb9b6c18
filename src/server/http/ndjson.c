/* Streamed answers' pure parts: Accept matching, the output queue, the NDJSON lines (ndjson.h). */
#include "server/http/ndjson.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- Accept ---- */

typedef struct span {
    const char *b, *e;
} span;

/* The span without the optional white space (RFC 9110 OWS) around it. */
static span trimmed(const char *b, const char *e)
{
    while (b < e && (*b == ' ' || *b == '\t'))
        b++;
    while (e > b && (e[-1] == ' ' || e[-1] == '\t'))
        e--;
    return (span){b, e};
}

static bool span_is(span s, const char *word)
{
    size_t n = strlen(word);
    return (size_t)(s.e - s.b) == n && strncasecmp(s.b, word, n) == 0;
}

/* The next sep at or after p, before e, outside a quoted string (a parameter's value may be one, and a
 * comma or semicolon inside it separates nothing); e when there is none. */
static const char *next_sep(const char *p, const char *e, char sep)
{
    bool quoted = false;
    for (; p < e; p++) {
        if (quoted && *p == '\\' && p + 1 < e)
            p++;
        else if (*p == '"')
            quoted = !quoted;
        else if (!quoted && *p == sep)
            return p;
    }
    return e;
}

/* A qvalue of 0 ("0", "0.", "0.000") means "not acceptable". Any other text counts as above 0: a client
 * that names the type with a malformed weight still asked for it. */
static bool is_zero_weight(span v)
{
    if (v.b == v.e || *v.b != '0')
        return false;
    const char *p = v.b + 1;
    if (p < v.e && *p == '.')
        p++;
    while (p < v.e && *p == '0')
        p++;
    return p == v.e;
}

/* One element of the list: "type/subtype *( OWS ; OWS name=value )". */
static bool element_selects(const char *b, const char *e)
{
    const char *semi = next_sep(b, e, ';');
    if (!span_is(trimmed(b, semi), FB_HTTP_NDJSON_TYPE))
        return false;
    for (const char *p = semi; p < e;) {
        const char *next = next_sep(p + 1, e, ';');
        span param = trimmed(p + 1, next);
        const char *eq = memchr(param.b, '=', (size_t)(param.e - param.b));
        if (eq && span_is(trimmed(param.b, eq), "q") && is_zero_weight(trimmed(eq + 1, param.e)))
            return false;
        p = next;
    }
    return true;
}

bool fb_http_accepts_ndjson(const char *accept)
{
    if (!accept)
        return false;
    const char *end = accept + strlen(accept);
    for (const char *p = accept; p < end;) {
        const char *comma = next_sep(p, end, ',');
        if (element_selects(p, comma))
            return true;
        p = comma + (comma < end);
    }
    return false;
}

/* ---- the queue ---- */

void fb_http_chunkq_init(fb_http_chunkq *q, size_t max)
{
    *q = (fb_http_chunkq){.max = max};
}

static void drop(fb_http_chunkq *q, int stream, size_t len)
{
    q->dropping = true;
    q->dropped[stream] += len;
}

/* Appends to the last chunk when it is the same stream and stays under the merge size. False when it
 * cannot (the caller makes a new chunk). */
static bool merge(fb_http_chunkq *q, int stream, const char *data, size_t len)
{
    fb_http_chunk *t = q->tail;
    if (!t || t->stream != stream || t->len + len > FB_HTTP_CHUNK_MERGE_MAX)
        return false;
    if (t->len + len > t->cap) {
        size_t cap = t->cap * 2 < t->len + len ? t->len + len : t->cap * 2;
        if (cap > FB_HTTP_CHUNK_MERGE_MAX)
            cap = FB_HTTP_CHUNK_MERGE_MAX;
        if (q->bytes + (cap - t->cap) > q->max)
            return false;
        char *grown = realloc(t->data, cap);
        if (!grown)
            return false;
        q->bytes += cap - t->cap;
        t->data = grown;
        t->cap = cap;
    }
    memcpy(t->data + t->len, data, len);
    t->len += len;
    return true;
}

static bool append_new(fb_http_chunkq *q, int stream, const char *data, size_t len)
{
    if (len > q->max || q->bytes + sizeof(fb_http_chunk) + len > q->max)
        return false;
    fb_http_chunk *c = calloc(1, sizeof *c);
    char *copy = malloc(len);
    if (!c || !copy) {
        free(c);
        free(copy);
        return false;
    }
    memcpy(copy, data, len);
    *c = (fb_http_chunk){.stream = stream, .len = len, .cap = len, .data = copy};
    if (q->tail)
        q->tail->next = c;
    else
        q->head = c;
    q->tail = c;
    q->bytes += sizeof *c + len;
    return true;
}

void fb_http_chunkq_push(fb_http_chunkq *q, const char *stream, const char *data, size_t len)
{
    int s = strcmp(stream, "stdout") == 0 ? FB_HTTP_STDOUT : strcmp(stream, "stderr") == 0 ? FB_HTTP_STDERR : -1;
    if (s < 0 || len == 0)
        return;
    if (q->dropping) {
        drop(q, s, len);
        return;
    }
    if (!merge(q, s, data, len) && !append_new(q, s, data, len))
        drop(q, s, len);
}

fb_http_chunk *fb_http_chunkq_pop(fb_http_chunkq *q)
{
    fb_http_chunk *c = q->head;
    if (!c)
        return NULL;
    q->head = c->next;
    if (!q->head)
        q->tail = NULL;
    c->next = NULL;
    q->bytes -= sizeof *c + c->cap;
    return c;
}

void fb_http_chunk_free(fb_http_chunk *c)
{
    if (!c)
        return;
    free(c->data);
    free(c);
}

void fb_http_chunkq_free(fb_http_chunkq *q)
{
    fb_http_chunk *c;
    while ((c = fb_http_chunkq_pop(q)))
        fb_http_chunk_free(c);
}

/* ---- lines ---- */

static char *dump(json_t *doc, size_t *len)
{
    char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
    json_decref(doc);
    *len = text ? strlen(text) : 0;
    return text;
}

char *fb_http_ndjson_chunk_line(const fb_http_chunk *c, size_t *len)
{
    /* As `fnbox call --stream` prints it (cli/call.c): the same keys, in the same order. */
    return dump(json_pack("{s:s, s:s%}", "type", c->stream == FB_HTTP_STDOUT ? "stdout" : "stderr", "data",
                          c->data, c->len),
                len);
}

char *fb_http_ndjson_dropped_line(const fb_http_chunkq *q, size_t *len)
{
    *len = 0;
    if (!q->dropping)
        return NULL;
    return dump(json_pack("{s:s, s:I, s:I}", "type", "dropped", "stdout", (json_int_t)q->dropped[FB_HTTP_STDOUT],
                          "stderr", (json_int_t)q->dropped[FB_HTTP_STDERR]),
                len);
}

unsigned fb_http_ndjson_result_pieces(const char *result, size_t len, fb_http_piece pieces[3])
{
    static const char k_head[] = "{\"type\":\"result\",";
    if (len < 2 || result[0] != '{' || result[len - 1] != '}')
        return 0;
    /* "{}" has no field to follow the type: no comma then. */
    pieces[0] = (fb_http_piece){k_head, len > 2 ? sizeof k_head - 1 : sizeof k_head - 2};
    pieces[1] = (fb_http_piece){result + 1, len - 1};
    pieces[2] = (fb_http_piece){"\n", 1};
    return 3;
}
