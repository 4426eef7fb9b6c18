/* Streamed answers (stream.h). Two threads and one queue:
 *  - the producer (a thread of the stream's own) runs the execution; the library calls on_output from
 *    the sandbox supervisor's loop, so on_output never waits for the client: it only appends to the
 *    queue under a mutex held for a copy (ndjson.c bounds the queue, dropping beyond its cap);
 *  - the connection's thread (libmicrohttpd, thread per connection) calls read_cb when it can send:
 *    read_cb waits on the condition variable for a chunk or the end, turns it into a line and hands it
 *    out in as many pieces as libmicrohttpd's buffer takes.
 * The stream is the response's: libmicrohttpd calls stream_free when it is done with the answer (sent,
 * or the connection failed), after the request's completion callback; stream_free cancels the run if
 * it is still going and joins the producer, so no thread and no sandbox outlives the answer. */
#include "server/http/stream.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "server/http/ndjson.h"

#define STREAM_BLOCK (16UL * 1024) /* libmicrohttpd's advised read size; its buffer may be smaller */

typedef struct fb_http_stream {
    fb_http_server *srv;
    struct MHD_Connection *conn;
    uint64_t *sent;          /* the exchange's byte count for the log: only read_cb adds to it, and
                                libmicrohttpd never reads a response after the request's completion */
    fb_http_stream_spec spec;
    bool holds_slot;         /* a run slot to give back when run returns */
    int stop;                /* eventfd: written by stream_free, in the run's cancel watch */
    int watch;               /* the run's cancel fd */
    pthread_t thread;
    bool started;
    pthread_mutex_t mu;
    pthread_cond_t cv;       /* a chunk was queued, or the run ended */
    /* guarded by mu */
    fb_http_chunkq q;
    bool done;               /* run returned; no chunk comes after */
    char *result;            /* fnbox_free; NULL: no result */
    size_t rlen;
    /* the connection thread's own (read_cb) */
    enum { SEND_CHUNKS, SEND_RESULT, SEND_END } phase;
    fb_http_piece piece[3];  /* the line being sent */
    unsigned npiece, cur;
    size_t off;              /* into piece[cur] */
    char *owned;             /* the line's allocated text, if any */
} fb_http_stream;

/* ---- the producer ---- */

static void on_output(void *ctx, const char *stream, const char *data, size_t len)
{
    fb_http_stream *s = ctx;
    pthread_mutex_lock(&s->mu);
    fb_http_chunkq_push(&s->q, stream, data, len);
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

static void free_ctx(fb_http_stream *s)
{
    if (s->spec.free_ctx)
        s->spec.free_ctx(s->spec.ctx);
    s->spec.ctx = NULL;
}

static void give_slot_back(fb_http_stream *s)
{
    if (s->holds_slot)
        fb_http_admission_finish(&s->srv->adm);
    s->holds_slot = false;
}

static void *produce(void *arg)
{
    fb_http_stream *s = arg;
    char *result = NULL;
    size_t rlen = 0;
    int rc = s->spec.run(s->spec.ctx, on_output, s, s->watch, &result, &rlen);
    free_ctx(s); /* the request body, at once: the answer may take long to go out */
    if (rc == FNBOX_NO_RESULT || !result) {
        fnbox_free(result);
        result = NULL;
    }
    if (result && s->spec.count_execution) {
        char status[16];
        fb_http_metrics_execution(&s->srv->metrics,
                                  fb_http_result_status(result, rlen, status, sizeof status) ? status : NULL);
    }
    pthread_mutex_lock(&s->mu);
    s->result = result;
    s->rlen = rlen;
    s->done = true;
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
    /* After the result is queued: once the drain sees no execution running, every result is on its way. */
    give_slot_back(s);
    return NULL;
}

/* ---- the connection's side ---- */

static void set_line(fb_http_stream *s, char *owned, const fb_http_piece *pieces, unsigned n)
{
    free(s->owned);
    s->owned = owned;
    memcpy(s->piece, pieces, n * sizeof *pieces);
    s->npiece = n;
    s->cur = 0;
    s->off = 0;
}

/* The next chunk, or NULL once the run is over and the queue empty. Waits without the connection's idle
 * timeout: time spent waiting for the function's output is not the client's idleness (libmicrohttpd
 * would otherwise close the connection after a function silent for FB_HTTP_IDLE_TIMEOUT_S). Setting the
 * timeout again restarts its clock. */
static fb_http_chunk *next_chunk(fb_http_stream *s)
{
    MHD_set_connection_option(s->conn, MHD_CONNECTION_OPTION_TIMEOUT, 0u);
    pthread_mutex_lock(&s->mu);
    while (!s->q.head && !s->done)
        pthread_cond_wait(&s->cv, &s->mu);
    fb_http_chunk *c = fb_http_chunkq_pop(&s->q);
    pthread_mutex_unlock(&s->mu);
    MHD_set_connection_option(s->conn, MHD_CONNECTION_OPTION_TIMEOUT, (unsigned)FB_HTTP_IDLE_TIMEOUT_S);
    return c;
}

/* Makes the next line the one being sent: 1, or 0 at the end of the stream, -1 when the stream cannot go
 * on (no memory for a line, no result): the connection is then cut, and the client sees a chunked
 * answer without its end. */
static int next_line(fb_http_stream *s)
{
    size_t len;
    if (s->phase == SEND_CHUNKS) {
        fb_http_chunk *c = next_chunk(s);
        if (c) {
            char *text = fb_http_ndjson_chunk_line(c, &len);
            fb_http_chunk_free(c);
            if (!text)
                return -1;
            set_line(s, text, (fb_http_piece[]){{text, len}, {"\n", 1}}, 2);
            return 1;
        }
        s->phase = SEND_RESULT;
        /* The run is over: nothing touches the queue any more. */
        char *dropped = fb_http_ndjson_dropped_line(&s->q, &len);
        if (dropped) {
            set_line(s, dropped, (fb_http_piece[]){{dropped, len}, {"\n", 1}}, 2);
            return 1;
        }
    }
    if (s->phase == SEND_RESULT) {
        s->phase = SEND_END;
        fb_http_piece pieces[3];
        unsigned n = s->result ? fb_http_ndjson_result_pieces(s->result, s->rlen, pieces) : 0;
        if (n == 0)
            return -1;
        set_line(s, NULL, pieces, n);
        return 1;
    }
    return 0;
}

static ssize_t read_cb(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    fb_http_stream *s = cls;
    while (s->cur == s->npiece) {
        int r = next_line(s);
        if (r <= 0)
            return r == 0 ? MHD_CONTENT_READER_END_OF_STREAM : MHD_CONTENT_READER_END_WITH_ERROR;
    }
    size_t n = 0;
    while (n < max && s->cur < s->npiece) {
        const fb_http_piece *p = &s->piece[s->cur];
        size_t take = p->len - s->off < max - n ? p->len - s->off : max - n;
        memcpy(buf + n, p->data + s->off, take);
        n += take;
        s->off += take;
        if (s->off == p->len) {
            s->cur++;
            s->off = 0;
        }
    }
    *s->sent += n;
    return (ssize_t)n;
}

/* ---- life ---- */

/* libmicrohttpd is done with the answer (or it was never queued): stop the run if it still goes, join
 * the producer, free everything. */
static void stream_free(void *cls)
{
    fb_http_stream *s = cls;
    if (s->started) {
        uint64_t one = 1;
        (void)!write(s->stop, &one, sizeof one);
        pthread_join(s->thread, NULL);
    } else {
        free_ctx(s);
        give_slot_back(s);
    }
    if (s->watch >= 0)
        close(s->watch);
    if (s->stop >= 0)
        close(s->stop);
    fnbox_free(s->result);
    fb_http_chunkq_free(&s->q);
    free(s->owned);
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

/* The stream with its lock, its stop fd and the run's cancel watch; NULL with err set on failure (the
 * spec's ctx is then the caller's still). */
static fb_http_stream *stream_new(fb_http_exchange *x, const fb_http_stream_spec *spec, fb_error *err)
{
    fb_http_stream *s = calloc(1, sizeof *s);
    if (!s) {
        fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "stream");
        return NULL;
    }
    *s = (fb_http_stream){.srv = x->srv, .conn = x->conn, .sent = &x->bytes, .spec = *spec, .watch = -1};
    fb_http_chunkq_init(&s->q, FB_HTTP_STREAM_QUEUE_MAX);
    if (pthread_mutex_init(&s->mu, NULL) != 0) {
        free(s);
        fb_set_error(err, FB_ERR_INTERNAL, 0, "pthread_mutex_init");
        return NULL;
    }
    if (pthread_cond_init(&s->cv, NULL) != 0) {
        pthread_mutex_destroy(&s->mu);
        free(s);
        fb_set_error(err, FB_ERR_INTERNAL, 0, "pthread_cond_init");
        return NULL;
    }
    s->stop = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (s->stop < 0)
        fb_set_error(err, FB_ERR_INTERNAL, errno, "eventfd");
    else
        s->watch = fb_http_cancel_watch(x, s->stop, err);
    if (s->watch < 0) {
        s->spec.free_ctx = NULL; /* not ours yet */
        stream_free(s);
        return NULL;
    }
    return s;
}

static int start_thread(fb_http_stream *s)
{
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0)
        return -1;
    /* The run parses the request (JSON nested 2048 levels deep), as a connection's thread does. */
    int rc = pthread_attr_setstacksize(&attr, FB_HTTP_THREAD_STACK);
    if (rc == 0)
        rc = pthread_create(&s->thread, &attr, produce, s);
    pthread_attr_destroy(&attr);
    s->started = rc == 0;
    return rc == 0 ? 0 : -1;
}

fb_http_reply fb_http_stream_reply(fb_http_exchange *x, const fb_http_stream_spec *spec)
{
    fb_error err = {0};
    bool slot = x->place == FB_HTTP_PLACE_RUNNING;
    x->place = FB_HTTP_PLACE_NONE; /* the stream's from here on, on every path */
    fb_http_stream *s = stream_new(x, spec, &err);
    if (!s) {
        if (spec->free_ctx)
            spec->free_ctx(spec->ctx);
        if (slot)
            fb_http_admission_finish(&x->srv->adm);
        return fb_http_reply_error(&err);
    }
    s->holds_slot = slot;
    struct MHD_Response *r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, STREAM_BLOCK, read_cb, s, stream_free);
    if (!r) {
        stream_free(s);
        fb_set_error(&err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "stream response");
        return fb_http_reply_error(&err);
    }
    /* X-Accel-Buffering: a reverse proxy (nginx) passes each chunk on at once instead of buffering. */
    if (MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, FB_HTTP_NDJSON_TYPE) != MHD_YES ||
        MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store") != MHD_YES ||
        MHD_add_response_header(r, "X-Accel-Buffering", "no") != MHD_YES) {
        MHD_destroy_response(r); /* frees the stream */
        fb_set_error(&err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "stream response headers");
        return fb_http_reply_error(&err);
    }
    if (start_thread(s) < 0) {
        MHD_destroy_response(r);
        fb_set_error(&err, FB_ERR_INTERNAL, EAGAIN, "no thread for the stream");
        return fb_http_reply_error(&err);
    }
    /* The size is unknown: the bytes are counted as read_cb gives them. */
    return (fb_http_reply){MHD_HTTP_OK, r, 0};
}
