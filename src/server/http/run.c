/* What every route that runs something shares (POST /v1/call, /v1/execute, /api/v2/execute): the checks
 * at the headers and the queue place, the run slot around the handler, and the run itself with its cancel
 * watch (cancelled when the client hangs up or the server's grace period is over) and its metrics. */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
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

static int run_begin(fb_http_exchange *x, const char *takes, bool any_type, fb_error *err)
{
    const fb_http_server *srv = x->srv;
    const char *ct = fb_http_header(x, MHD_HTTP_HEADER_CONTENT_TYPE);
    if (ct && !any_type && !is_json_type(ct))
        return fb_set_error(err, FB_ERR_INVALID_REQUEST, 0,
                            "Content-Type: '%.100s' is not application/json: %s", ct, takes);
    const char *cl = fb_http_header(x, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (cl && content_length(cl) > srv->cfg.max_body)
        return fb_set_error(err, FB_ERR_PAYLOAD_TOO_LARGE, 0,
                            "body: Content-Length %llu is over the server's maximum of %zu bytes (--max-body)",
                            content_length(cl), srv->cfg.max_body);
    if (!x->has_body)
        return fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, "body: empty: %s", takes);
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

int fb_http_run_begin(fb_http_exchange *x, const char *takes, fb_error *err)
{
    return run_begin(x, takes, false, err);
}

int fb_http_run_begin_any_type(fb_http_exchange *x, const char *takes, fb_error *err)
{
    return run_begin(x, takes, true, err);
}

/* The library function a route runs: api (a call through the warm pools when the server has them), or in a
 * session its command or call. */
static int run_api(fnbox_api_fn api, fnbox_engine *engine, fnbox_session *session, bool call, const char *kernel,
                   const char *body, size_t len, const fnbox_call_options *opts, char **result, size_t *result_len)
{
    if (!session && engine && api == fnbox_call)
        return fnbox_engine_call(engine, body, len, opts, result, result_len);
    if (session && kernel)
        return fnbox_session_kernel_exec(session, kernel, body, len, opts, result, result_len);
    if (session && call)
        return fnbox_session_call(session, body, len, opts, result, result_len);
    if (session)
        return fnbox_session_exec(session, body, len, opts, result, result_len);
    return api ? api(body, len, opts, result, result_len) : FNBOX_NO_RESULT;
}

int fb_http_run_api(fb_http_exchange *x, const char *body, size_t len, const fb_http_run_opts *o, char **result,
                    size_t *result_len, fb_error *err)
{
    fb_http_server *srv = x->srv;
    *result = NULL;
    int watch = fb_http_cancel_watch(x, -1, err);
    if (watch < 0)
        return -1;
    fnbox_call_options opts = {.size = sizeof opts, .cancel_fd = watch, .output = o->output,
                               .output_ctx = o->output_ctx};
    int rc = run_api(o->api, srv->engine, o->session, o->session_call, o->kernel, body, len, &opts, result,
                     result_len);
    close(watch);
    if (rc == FNBOX_NO_RESULT || !*result) {
        fnbox_free(*result);
        *result = NULL;
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "no result could be made");
    }
    char status[16];
    fb_http_metrics_execution(&srv->metrics,
                              fb_http_result_status(*result, *result_len, status, sizeof status) ? status : NULL);
    return rc;
}

fb_http_reply fb_http_run_admitted(fb_http_exchange *x, const char *takes, fb_http_reply (*run)(fb_http_exchange *))
{
    fb_error err = {0};
    if (x->body.len == 0) { /* a chunked body with no data in it */
        fb_set_error(&err, FB_ERR_INVALID_REQUEST, 0, "body: empty: %s", takes);
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
    fb_http_reply rep = run(x);
    if (x->place == FB_HTTP_PLACE_RUNNING) { /* not taken by a stream, which gives it back itself */
        fb_http_admission_finish(&x->srv->adm);
        x->place = FB_HTTP_PLACE_NONE;
    }
    return rep;
}

/* ---- streamed (Accept: application/x-ndjson) ---- */

/* What a streamed run owns: the body (moved out of the exchange: the run may outlive it) and what runs it;
 * a session's reference goes with it and is given back when the run is over. */
typedef struct streamed {
    fb_buf body;
    fnbox_api_fn api;
    fnbox_engine *engine;
    fnbox_session *session;
    bool session_call;
    char kernel[FB_HTTP_LANG_MAX + 1]; /* "" unless a kernel's execute */
    void (*release)(void *ctx);
    void *release_ctx;
} streamed;

static int run_streamed(void *ctx, fnbox_output_fn out, void *out_ctx, int cancel_fd, char **result,
                        size_t *result_len)
{
    const streamed *st = ctx;
    fnbox_call_options opts = {.size = sizeof opts, .cancel_fd = cancel_fd, .output = out, .output_ctx = out_ctx};
    return run_api(st->api, st->engine, st->session, st->session_call, st->kernel[0] ? st->kernel : NULL,
                   st->body.data, st->body.len, &opts, result, result_len);
}

static void free_streamed(void *ctx)
{
    streamed *st = ctx;
    if (st->release)
        st->release(st->release_ctx);
    fb_buf_free(&st->body);
    free(st);
}

/* The output as it arrives, then the result, always with status 200 (the headers go before the outcome
 * is known: an invalid request is told by the result line's error). */
static fb_http_reply stream_reply(fb_http_exchange *x, const fb_http_run_opts *o)
{
    streamed *st = malloc(sizeof *st);
    if (!st) {
        if (o->release)
            o->release(o->release_ctx);
        fb_error err;
        fb_set_error(&err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "body");
        return fb_http_reply_error(&err);
    }
    *st = (streamed){.body = x->body, .api = o->api, .engine = x->srv->engine, .session = o->session, .session_call = o->session_call,
                     .release = o->release,
                     .release_ctx = o->release_ctx};
    if (o->kernel)
        snprintf(st->kernel, sizeof st->kernel, "%s", o->kernel);
    fb_buf_init(&x->body, 0);
    fb_http_stream_spec spec = {.run = run_streamed, .ctx = st, .free_ctx = free_streamed, .count_execution = true};
    return fb_http_stream_reply(x, &spec);
}

static fb_http_reply run_reply(fb_http_exchange *x, const fb_http_run_opts *o)
{
    if (fb_http_accepts_ndjson(fb_http_header(x, MHD_HTTP_HEADER_ACCEPT)))
        return stream_reply(x, o);
    fb_error err = {0};
    char *result = NULL;
    size_t rlen = 0;
    int rc = fb_http_run_api(x, x->body.data, x->body.len, o, &result, &rlen, &err);
    fb_buf_free(&x->body);
    if (o->release)
        o->release(o->release_ctx);
    if (rc < 0)
        return fb_http_reply_error(&err);
    return fb_http_reply_json(fb_http_status_of_call(rc), result, rlen, fnbox_free, true);
}

fb_http_reply fb_http_run_reply_in(fb_http_exchange *x, fnbox_session *s, bool call, void (*release)(void *),
                                   void *ctx)
{
    fb_http_run_opts o = {.session = s, .session_call = call, .release = release, .release_ctx = ctx};
    return run_reply(x, &o);
}

fb_http_reply fb_http_run_reply_kernel(fb_http_exchange *x, fnbox_session *s, const char *language,
                                       void (*release)(void *), void *ctx)
{
    fb_http_run_opts o = {.session = s, .kernel = language, .release = release, .release_ctx = ctx};
    return run_reply(x, &o);
}

fb_http_reply fb_http_run_reply(fb_http_exchange *x, fnbox_api_fn api)
{
    fb_http_run_opts o = {.api = api};
    return run_reply(x, &o);
}

