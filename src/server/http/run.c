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

int fb_http_run_begin(fb_http_exchange *x, const char *takes, fb_error *err)
{
    const fb_http_server *srv = x->srv;
    const char *ct = fb_http_header(x, MHD_HTTP_HEADER_CONTENT_TYPE);
    if (ct && !is_json_type(ct))
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

static int client_fd(const fb_http_exchange *x)
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(x->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    return ci ? ci->connect_fd : -1;
}

/* The peer shut its side (RDHUP), or the socket broke. Unread data alone (a pipelined request) is not a
 * hang-up: only RDHUP, HUP and ERR count. */
static bool client_gone(void *ctx)
{
    struct pollfd p = {.fd = client_fd(ctx), .events = POLLRDHUP};
    return p.fd >= 0 && poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL));
}

/* The call's cancel fd: an epoll set, readable when the client hangs up (its socket's RDHUP, HUP or ERR;
 * not its data) or when the server cancels every call (the cancel pipe). fnbox_call only polls it. One
 * fd per call, owned by the caller. */
static int cancel_watch(int client, int cancel, fb_error *err)
{
    int ep = epoll_create1(EPOLL_CLOEXEC);
    if (ep < 0)
        return fb_set_error(err, FB_ERR_INTERNAL, errno, "epoll_create1");
    struct epoll_event hangup = {.events = EPOLLRDHUP, .data.fd = client};
    struct epoll_event stop = {.events = EPOLLIN, .data.fd = cancel};
    if ((client >= 0 && epoll_ctl(ep, EPOLL_CTL_ADD, client, &hangup) < 0) ||
        epoll_ctl(ep, EPOLL_CTL_ADD, cancel, &stop) < 0) {
        int e = errno;
        close(ep);
        return fb_set_error(err, FB_ERR_INTERNAL, e, "epoll_ctl");
    }
    return ep;
}

int fb_http_run_api(fb_http_exchange *x, const char *body, size_t len, const fb_http_run_opts *o, char **result,
                    size_t *result_len, fb_error *err)
{
    fb_http_server *srv = x->srv;
    *result = NULL;
    int watch = cancel_watch(client_fd(x), srv->cancel_pipe[0], err);
    if (watch < 0)
        return -1;
    fnbox_call_options opts = {.size = sizeof opts, .cancel_fd = watch, .output = o->output,
                               .output_ctx = o->output_ctx};
    int rc = o->session ? fnbox_session_exec(o->session, body, len, &opts, result, result_len)
                        : o->api(body, len, &opts, result, result_len);
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
    fb_http_admit a = fb_http_admission_start(&x->srv->adm, client_gone, x);
    x->place = a == FB_HTTP_ADMIT_OK ? FB_HTTP_PLACE_RUNNING : FB_HTTP_PLACE_NONE;
    if (a == FB_HTTP_ADMIT_GONE)
        return (fb_http_reply){0, NULL, 0}; /* nobody to answer */
    if (a != FB_HTTP_ADMIT_OK) {
        fb_set_error(&err, FB_ERR_OVERLOADED, 0, "the server is shutting down");
        return fb_http_reply_error(&err);
    }
    fb_http_reply rep = run(x);
    fb_http_admission_finish(&x->srv->adm);
    x->place = FB_HTTP_PLACE_NONE;
    return rep;
}

static fb_http_reply run_reply(fb_http_exchange *x, const fb_http_run_opts *o)
{
    fb_error err = {0};
    char *result = NULL;
    size_t rlen = 0;
    int rc = fb_http_run_api(x, x->body.data, x->body.len, o, &result, &rlen, &err);
    fb_buf_free(&x->body);
    if (rc < 0)
        return fb_http_reply_error(&err);
    return fb_http_reply_json(fb_http_status_of_call(rc), result, rlen, fnbox_free, true);
}

fb_http_reply fb_http_run_reply_in(fb_http_exchange *x, fnbox_session *s)
{
    fb_http_run_opts o = {.session = s};
    return run_reply(x, &o);
}

fb_http_reply fb_http_run_reply(fb_http_exchange *x, fnbox_api_fn api)
{
    fb_http_run_opts o = {.api = api};
    return run_reply(x, &o);
}

