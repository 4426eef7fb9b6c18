/* POST /v1/call: the body is a FunctionCallRequest, the answer fnbox_call's ExecutionResult, byte for
 * byte what `fnbox call` prints; with Accept: application/x-ndjson, the stream of `fnbox call --stream`
 * (stream.c). The call is cancelled when its client hangs up or when the server's grace period is over. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "fnbox.h"
#include "server/http/internal.h"
#include "server/http/ndjson.h"
#include "server/http/stream.h"

static bool is_json_type(const char *ct)
{
    static const char k_json[] = "application/json";
    while (*ct == ' ' || *ct == '\t')
        ct++;
    size_t n = strcspn(ct, ";"); /* parameters (charset=utf-8) are fine: JSON is UTF-8 */
    while (n && (ct[n - 1] == ' ' || ct[n - 1] == '\t'))
        n--;
    return n == sizeof k_json - 1 && strncasecmp(ct, k_json, n) == 0;
}

/* Content-Length as a number; libmicrohttpd has already refused a malformed one. */
static unsigned long long content_length(const char *cl)
{
    unsigned long long n = 0;
    for (; cl && *cl >= '0' && *cl <= '9'; cl++)
        n = n > (~0ULL - 9) / 10 ? ~0ULL : n * 10 + (unsigned)(*cl - '0');
    return n;
}

int fb_http_call_begin(fb_http_exchange *x, fb_error *err)
{
    const fb_http_server *srv = x->srv;
    const char *ct = fb_http_header(x, MHD_HTTP_HEADER_CONTENT_TYPE);
    if (ct && !is_json_type(ct))
        return fb_set_error(err, FB_ERR_INVALID_REQUEST, 0,
                            "Content-Type: '%.100s' is not application/json: the body is a FunctionCallRequest JSON",
                            ct);
    const char *cl = fb_http_header(x, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (cl && content_length(cl) > srv->cfg.max_body)
        return fb_set_error(err, FB_ERR_PAYLOAD_TOO_LARGE, 0,
                            "body: Content-Length %llu is over the server's maximum of %zu bytes (--max-body)",
                            content_length(cl), srv->cfg.max_body);
    if (!x->has_body)
        return fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, "body: empty: POST /v1/call takes a FunctionCallRequest JSON");
    switch (fb_http_admission_enter(&x->srv->adm)) {
    case FB_HTTP_ADMIT_OK:
        x->place = FB_HTTP_PLACE_QUEUED;
        return 0;
    case FB_HTTP_ADMIT_DRAINING:
        return fb_set_error(err, FB_ERR_OVERLOADED, 0, "the server is shutting down");
    default:
        return fb_set_error(err, FB_ERR_OVERLOADED, 0,
                            "%u executions are running and %u requests waiting (--max-concurrency, --max-queue): "
                            "try again later",
                            srv->cfg.max_concurrency, srv->cfg.max_queue);
    }
}

static fb_http_reply run(fb_http_exchange *x)
{
    fb_http_server *srv = x->srv;
    fb_error err = {0};
    int watch = fb_http_cancel_watch(x, -1, &err);
    if (watch < 0)
        return fb_http_reply_error(&err);
    fnbox_call_options opts = {.size = sizeof opts, .cancel_fd = watch};
    char *result = NULL;
    size_t rlen = 0;
    int rc = fnbox_call(x->body.data, x->body.len, &opts, &result, &rlen);
    close(watch);
    fb_buf_free(&x->body);
    if (rc == FNBOX_NO_RESULT || !result) {
        fnbox_free(result);
        fb_set_error(&err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "no result could be made");
        return fb_http_reply_error(&err);
    }
    char status[16];
    fb_http_metrics_execution(&srv->metrics,
                              fb_http_result_status(result, rlen, status, sizeof status) ? status : NULL);
    return fb_http_reply_json(fb_http_status_of_call(rc), result, rlen, fnbox_free, true);
}

/* The streamed run (stream.h): the request body is the context. */
static int run_streamed(void *ctx, fnbox_output_fn out, void *out_ctx, int cancel_fd, char **result,
                        size_t *result_len)
{
    const fb_buf *body = ctx;
    fnbox_call_options opts = {.size = sizeof opts, .cancel_fd = cancel_fd, .output = out, .output_ctx = out_ctx};
    return fnbox_call(body->data, body->len, &opts, result, result_len);
}

static void free_body(void *ctx)
{
    fb_buf_free(ctx);
    free(ctx);
}

/* Accept: application/x-ndjson: the output as it arrives, then the result, always with status 200 (the
 * headers go before the outcome is known: an invalid request is told by the result line's error). */
static fb_http_reply run_stream(fb_http_exchange *x)
{
    fb_buf *body = malloc(sizeof *body);
    if (!body) {
        fb_error err;
        fb_set_error(&err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "body");
        fb_http_admission_finish(&x->srv->adm);
        x->place = FB_HTTP_PLACE_NONE;
        return fb_http_reply_error(&err);
    }
    *body = x->body; /* moved: the run may outlive the exchange */
    fb_buf_init(&x->body, 0);
    fb_http_stream_spec spec = {.run = run_streamed, .ctx = body, .free_ctx = free_body, .count_execution = true};
    return fb_http_stream_reply(x, &spec);
}

fb_http_reply fb_http_handle_call(fb_http_exchange *x)
{
    fb_error err = {0};
    if (x->body.len == 0) { /* a chunked body with no data in it */
        fb_set_error(&err, FB_ERR_INVALID_REQUEST, 0, "body: empty: POST /v1/call takes a FunctionCallRequest JSON");
        return fb_http_reply_error(&err);
    }
    fb_http_admit a = fb_http_admission_start(&x->srv->adm, fb_http_client_gone, x);
    x->place = a == FB_HTTP_ADMIT_OK ? FB_HTTP_PLACE_RUNNING : FB_HTTP_PLACE_NONE;
    if (a == FB_HTTP_ADMIT_GONE)
        return (fb_http_reply){0, NULL, 0}; /* nobody to answer */
    if (a != FB_HTTP_ADMIT_OK) {
        fb_set_error(&err, FB_ERR_OVERLOADED, 0, "the server is shutting down");
        return fb_http_reply_error(&err);
    }
    if (fb_http_accepts_ndjson(fb_http_header(x, MHD_HTTP_HEADER_ACCEPT)))
        return run_stream(x); /* the slot goes with the stream */
    fb_http_reply rep = run(x);
    fb_http_admission_finish(&x->srv->adm);
    x->place = FB_HTTP_PLACE_NONE;
    return rep;
}
