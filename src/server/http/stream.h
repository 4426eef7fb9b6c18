/* A streamed answer (200, Content-Type: application/x-ndjson, chunked) for any route that runs an
 * execution: the route hands over a runner, the stream runs it on a thread of its own and sends, one JSON
 * object per line, {"type":"stdout"|"stderr","data":"..."} as the output arrives and then exactly one
 * {"type":"result", ...the result's fields...} (the format of `fnbox call --stream`). See
 * docs/internals/server.md. */
#ifndef FB_HTTP_STREAM_H
#define FB_HTTP_STREAM_H
#include <stdbool.h>
#include <stddef.h>

#include "fnbox.h"
#include "server/http/internal.h"

/* Runs the execution, on the stream's thread: passes out/out_ctx as the library's output hook
 * (fnbox_call_options.output / output_ctx) and cancel_fd as its cancel fd, and on return leaves the
 * result JSON object in *result (released with fnbox_free; NULL: no result could be made) and its length
 * in *result_len. Returns a fnbox_call code (FNBOX_OK, FNBOX_INVALID_REQUEST, ...; FNBOX_NO_RESULT: no
 * result, the connection is cut). */
typedef int (*fb_http_stream_run_fn)(void *ctx, fnbox_output_fn out, void *out_ctx, int cancel_fd,
                                     char **result, size_t *result_len);

typedef struct fb_http_stream_spec {
    fb_http_stream_run_fn run;
    void *ctx;                  /* the runner's; the stream owns it from fb_http_stream_reply on */
    void (*free_ctx)(void *ctx); /* frees ctx once run returned (or when run never starts); NULL: nothing */
    bool count_execution;       /* count the result's "status" in fnbox_executions_total */
} fb_http_stream_spec;

/* Starts spec->run and answers with its stream. Call it from the route's handler once the request is
 * complete, instead of answering with the result. The exchange's run slot (x->place RUNNING) passes to
 * the stream, which gives it back when run returns. The run is cancelled when the client hangs up, when
 * the server cancels (drain), or when the answer ends early (libmicrohttpd drops it): the stream's free
 * joins its thread. On failure (no memory, no thread) the answer is a 500 error JSON and ctx is freed. */
fb_http_reply fb_http_stream_reply(fb_http_exchange *x, const fb_http_stream_spec *spec);

#endif
