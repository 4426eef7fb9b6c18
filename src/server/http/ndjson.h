/* Streamed answers' pure parts (no threads, no libmicrohttpd; stream.c holds the lock around them):
 * whether a request's Accept asks for NDJSON, the queue of output waiting for a slow client, and the
 * lines themselves, in the format of `fnbox call --stream`. */
#ifndef FB_HTTP_NDJSON_H
#define FB_HTTP_NDJSON_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FB_HTTP_NDJSON_TYPE "application/x-ndjson"

/* The queue's hard cap, in bytes (output data plus each chunk's bookkeeping). The library never tells
 * more than limits.stdoutBytes + stderrBytes (as valid UTF-8: at most 3 bytes per raw byte), so the
 * queue is bounded anyway; this cap keeps one slow client of a call with large output caps from holding
 * more than this much besides the result itself. */
#define FB_HTTP_STREAM_QUEUE_MAX (16UL * 1024 * 1024)
/* A chunk that the client has not taken yet grows by the next output of its stream up to this size, so
 * a slow client gets fewer, larger lines instead of one line per write of the function. */
#define FB_HTTP_CHUNK_MERGE_MAX (64UL * 1024)

/* True when the Accept header's list names application/x-ndjson (case-insensitive, parameters allowed)
 * with a quality above 0, wherever it stands in the list and whatever the other types' qualities are.
 * Wildcards (*\/\*, application/\*) do not select it: the plain JSON answer stays the default. */
bool fb_http_accepts_ndjson(const char *accept);

enum { FB_HTTP_STDOUT = 0, FB_HTTP_STDERR = 1 };

typedef struct fb_http_chunk {
    struct fb_http_chunk *next;
    int stream;   /* FB_HTTP_STDOUT or FB_HTTP_STDERR */
    size_t len;
    size_t cap;
    char *data;   /* valid UTF-8 that ends on a character boundary (what the library told) */
} fb_http_chunk;

typedef struct fb_http_chunkq {
    fb_http_chunk *head, *tail;
    size_t bytes;          /* counted against max: data capacity + sizeof(fb_http_chunk) per chunk */
    size_t max;
    bool dropping;         /* a chunk did not fit (or could not be allocated): it and every later one are
                              dropped, so what the client gets is a prefix of each stream */
    uint64_t dropped[2];   /* bytes dropped, per stream */
} fb_http_chunkq;

void fb_http_chunkq_init(fb_http_chunkq *q, size_t max);
/* Queues len bytes of stream ("stdout" or "stderr"; anything else is ignored). Never blocks and never
 * fails: what does not fit is dropped and counted. */
void fb_http_chunkq_push(fb_http_chunkq *q, const char *stream, const char *data, size_t len);
/* Takes the first chunk out of the queue (the caller frees it with fb_http_chunk_free); NULL if empty. */
fb_http_chunk *fb_http_chunkq_pop(fb_http_chunkq *q);
void fb_http_chunk_free(fb_http_chunk *c);
void fb_http_chunkq_free(fb_http_chunkq *q);

/* One piece of a line to send; a line is at most three of them. */
typedef struct fb_http_piece {
    const char *data;
    size_t len;
} fb_http_piece;

/* {"type":"stdout","data":"..."} (no newline: the caller sends "\n" after it), allocated (free()).
 * NULL on allocation failure. */
char *fb_http_ndjson_chunk_line(const fb_http_chunk *c, size_t *len);
/* {"type":"dropped","stdout":N,"stderr":M}, the line told before the result when the queue dropped
 * output; NULL when nothing was dropped or on allocation failure. */
char *fb_http_ndjson_dropped_line(const fb_http_chunkq *q, size_t *len);
/* The result line, {"type":"result", ...the result's own fields...}\n, as pieces pointing into the
 * result text (a result may be hundreds of megabytes: it is not copied; its text is spliced as it is,
 * so big integers stay exact). Returns the number of pieces, or 0 when the text is not a JSON object. */
unsigned fb_http_ndjson_result_pieces(const char *result, size_t len, fb_http_piece pieces[3]);

#endif
