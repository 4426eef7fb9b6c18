/* `/mcp`: MCP's streamable HTTP transport (revision 2025-11-25 and the two before it) over the protocol of
 * src/server/mcp. POST carries one JSON-RPC message: a notification or a response is 202 with no body; a
 * request is answered with one JSON body, or, for a tools/call of a client that accepts
 * text/event-stream, with an event stream: the run's progress notifications, then its answer, then the
 * end. initialize without Mcp-Session-Id opens an MCP session (its id in the answer's Mcp-Session-Id);
 * every other message names one (400 without, 404 when it is unknown or ended). DELETE ends it; GET is 405
 * (no server-initiated stream). A browser's Origin must be a loopback one or listed (--mcp-origin): 403
 * otherwise. A client that hangs up cancels its run. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "server/http/internal.h"
#include "server/mcp/jsonrpc.h"

#define MCP_SESSION_HEADER "Mcp-Session-Id"
#define MCP_VERSION_HEADER "MCP-Protocol-Version"
#define WAIT_SLICE_MS 200 /* how often a waiting answer looks whether its client hung up */
#define SSE_BLOCK ((size_t)16 * 1024) /* the event stream's read size */

/* ---- one POST's messages (the sink of the message it carried) ---- */

typedef struct mcp_post {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    char **lines;        /* queued lines, each malloc'd with its '\n' */
    size_t n, cap, next; /* next: the first not yet taken */
    bool final;          /* the answer is queued, at lines[answer] */
    size_t answer;
    bool released;       /* nothing more comes */
    unsigned refs;       /* the sink's (until released) + the answer's */
    fb_http_mcp *table;  /* the answer's reference on session */
    fb_http_mcp_session *session;
    json_t *id;          /* the request's, to cancel its run when the client goes */
    int client_fd;
    uint64_t *sent;      /* the exchange's byte count for the log (only sse_read adds to it) */
    /* the event stream's reader */
    char *event;
    size_t event_len, off;
    bool ended;
} mcp_post;

static void post_unref(mcp_post *p)
{
    pthread_mutex_lock(&p->mu);
    bool last = --p->refs == 0;
    pthread_mutex_unlock(&p->mu);
    if (!last)
        return;
    for (size_t i = 0; i < p->n; i++)
        free(p->lines[i]);
    free(p->lines);
    free(p->event);
    json_decref(p->id);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    free(p);
}

static int post_send(void *ctx, const char *line, size_t len, bool final)
{
    mcp_post *p = ctx;
    char *copy = strndup(line, len);
    pthread_mutex_lock(&p->mu);
    if (copy && p->n == p->cap) {
        size_t ncap = p->cap ? p->cap * 2 : 8;
        char **nl = reallocarray(p->lines, ncap, sizeof *nl);
        if (nl) {
            p->lines = nl;
            p->cap = ncap;
        }
    }
    bool kept = copy && p->n < p->cap;
    if (kept && final) {
        p->final = true;
        p->answer = p->n;
    }
    if (kept)
        p->lines[p->n++] = copy;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    if (!kept)
        free(copy);
    return kept ? 0 : -1;
}

static void post_release(void *ctx)
{
    mcp_post *p = ctx;
    pthread_mutex_lock(&p->mu);
    p->released = true;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    post_unref(p);
}

static mcp_post *post_new(fb_http_exchange *x, fb_http_mcp_session *e, const json_t *id)
{
    mcp_post *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->id = json_deep_copy(id);
    if (!p->id) {
        free(p);
        return NULL;
    }
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    p->refs = 2;
    p->table = &x->srv->mcp;
    p->session = e;
    p->client_fd = fb_http_client_fd(x);
    p->sent = &x->bytes;
    return p;
}

static bool hung_up(int fd)
{
    struct pollfd q = {.fd = fd, .events = POLLRDHUP};
    return fd >= 0 && poll(&q, 1, 0) > 0 && (q.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL));
}

/* Waits (mu held) for a line to take or the release; false when the client hung up meanwhile. */
static bool wait_lines(mcp_post *p, bool for_final)
{
    while (!p->released && (for_final ? !p->final : p->next == p->n)) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += WAIT_SLICE_MS * 1000000L;
        until.tv_sec += until.tv_nsec / 1000000000L;
        until.tv_nsec %= 1000000000L;
        pthread_cond_timedwait(&p->cv, &p->mu, &until);
        if (hung_up(p->client_fd))
            return false;
    }
    return true;
}

/* The client is gone before the answer: its run is cancelled (nothing will be answered). */
static void cancel(mcp_post *p)
{
    fb_mcp_server_cancel(fb_http_mcp_server(p->session), p->id);
}

/* ---- answers ---- */

static fb_http_reply rpc_reply(unsigned status, json_t *msg)
{
    size_t len = 0;
    char *line = fb_rpc_line(msg, &len);
    if (!line)
        return (fb_http_reply){0, NULL, 0};
    line[--len] = '\0';
    return fb_http_reply_json(status, line, len, free, true);
}

static fb_http_reply empty(unsigned status)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    return (fb_http_reply){r ? status : 0, r, 0};
}

static void add_session_header(fb_http_reply *rep, const char *id)
{
    if (rep->resp && MHD_add_response_header(rep->resp, MCP_SESSION_HEADER, id) != MHD_YES) {
        MHD_destroy_response(rep->resp);
        *rep = (fb_http_reply){0, NULL, 0};
    }
}

/* The answer as one JSON body, once it is there. */
static fb_http_reply json_answer(mcp_post *p)
{
    pthread_mutex_lock(&p->mu);
    bool here = wait_lines(p, true);
    if (!here) {
        pthread_mutex_unlock(&p->mu);
        cancel(p);
        return (fb_http_reply){0, NULL, 0}; /* nobody to answer: the connection is closed */
    }
    char *answer = p->final ? p->lines[p->answer] : NULL; /* progress before it is dropped: no stream */
    if (answer)
        p->lines[p->answer] = NULL;
    pthread_mutex_unlock(&p->mu);
    if (!answer)
        return rpc_reply(MHD_HTTP_OK, fb_rpc_error(p->id, FB_RPC_INTERNAL_ERROR,
                                                   "the request was cancelled (notifications/cancelled, or the MCP "
                                                   "session ended)"));
    size_t len = strlen(answer);
    answer[--len] = '\0';
    return fb_http_reply_json(MHD_HTTP_OK, answer, len, free, true);
}

/* The event stream's reader: each line as one `event: message` (its data the JSON), until released. */
static ssize_t sse_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    mcp_post *p = cls;
    if (p->off == p->event_len) {
        pthread_mutex_lock(&p->mu);
        if (!wait_lines(p, false)) {
            pthread_mutex_unlock(&p->mu);
            return MHD_CONTENT_READER_END_WITH_ERROR; /* the free callback cancels the run */
        }
        if (p->next == p->n) {
            p->ended = true;
            pthread_mutex_unlock(&p->mu);
            return MHD_CONTENT_READER_END_OF_STREAM;
        }
        char *line = p->lines[p->next];
        p->lines[p->next++] = NULL;
        pthread_mutex_unlock(&p->mu);
        free(p->event);
        p->event = NULL;
        int n = line ? asprintf(&p->event, "event: message\ndata: %.*s\n\n", (int)(strlen(line) - 1), line) : -1;
        free(line);
        if (n < 0)
            return MHD_CONTENT_READER_END_WITH_ERROR;
        p->event_len = (size_t)n;
        p->off = 0;
    }
    size_t n = p->event_len - p->off < max ? p->event_len - p->off : max;
    memcpy(buf, p->event + p->off, n);
    p->off += n;
    *p->sent += n;
    return (ssize_t)n;
}

static void sse_free(void *cls)
{
    mcp_post *p = cls;
    pthread_mutex_lock(&p->mu);
    bool unanswered = !p->released;
    pthread_mutex_unlock(&p->mu);
    if (unanswered)
        cancel(p);
    fb_http_mcp_put(p->table, p->session);
    post_unref(p);
}

static fb_http_reply sse_answer(mcp_post *p)
{
    struct MHD_Response *r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, SSE_BLOCK, sse_read, p, sse_free);
    if (!r) {
        sse_free(p);
        return (fb_http_reply){0, NULL, 0};
    }
    if (MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream") != MHD_YES ||
        MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache") != MHD_YES) {
        MHD_destroy_response(r);
        return (fb_http_reply){0, NULL, 0};
    }
    return (fb_http_reply){MHD_HTTP_OK, r, 0};
}

/* ---- the routes ---- */

static bool loopback_origin(const char *o)
{
    static const char *const hosts[] = {"localhost", "127.0.0.1", "[::1]"};
    const char *rest = strncmp(o, "http://", 7) == 0 ? o + 7 : strncmp(o, "https://", 8) == 0 ? o + 8 : NULL;
    for (size_t i = 0; rest && i < sizeof hosts / sizeof *hosts; i++) {
        size_t n = strlen(hosts[i]);
        if (strncmp(rest, hosts[i], n) == 0 &&
            (rest[n] == '\0' || (rest[n] == ':' && rest[n + 1] && strspn(rest + n + 1, "0123456789") ==
                                                                          strlen(rest + n + 1))))
            return true;
    }
    return false;
}

static bool origin_allowed(const fb_http_server *srv, const char *origin)
{
    for (size_t i = 0; i < srv->cfg.n_mcp_origins; i++)
        if (strcmp(srv->cfg.mcp_origins[i], origin) == 0)
            return true;
    return loopback_origin(origin);
}

int fb_http_mcp_begin(fb_http_exchange *x, fb_error *err)
{
    if (atomic_load(&x->srv->draining))
        return fb_set_error(err, FB_ERR_OVERLOADED, 0, "/mcp: the server is shutting down");
    const char *origin = fb_http_header(x, "Origin");
    if (origin && !origin_allowed(x->srv, origin))
        return fb_set_error(err, FB_ERR_PERMISSION_DENIED, 0,
                            "Origin '%.200s' may not use /mcp (loopback origins may; others when listed with "
                            "--mcp-origin)", origin);
    const char *ct = fb_http_header(x, MHD_HTTP_HEADER_CONTENT_TYPE);
    if (strcmp(x->method, "POST") == 0 && ct && strncasecmp(ct, "application/json", 16) != 0)
        return fb_set_error(err, FB_ERR_INVALID_REQUEST, 0,
                            "Content-Type: '%.100s' is not application/json: POST /mcp takes one JSON-RPC message",
                            ct);
    const char *v = fb_http_header(x, MCP_VERSION_HEADER);
    if (v && strcmp(v, "2025-11-25") != 0 && strcmp(v, "2025-06-18") != 0 && strcmp(v, "2025-03-26") != 0)
        return fb_set_error(err, FB_ERR_INVALID_REQUEST, 0,
                            MCP_VERSION_HEADER ": '%.64s' is not a revision this server speaks (2025-11-25, "
                            "2025-06-18, 2025-03-26)", v);
    if (x->srv->cfg.max_sessions == 0)
        return fb_set_error(err, FB_ERR_NOT_FOUND, 0, "/mcp: MCP sessions are off on this server (--max-sessions 0)");
    return 0;
}

static bool wants_stream(const fb_http_exchange *x, const fb_rpc_msg *m)
{
    const char *accept = fb_http_header(x, MHD_HTTP_HEADER_ACCEPT);
    return accept && strcasestr(accept, "text/event-stream") && strcmp(m->method, "tools/call") == 0;
}

static fb_http_reply request(fb_http_exchange *x, fb_http_mcp_session *e, const fb_rpc_msg *m, const char *sid)
{
    mcp_post *p = post_new(x, e, m->id);
    if (!p) {
        fb_http_mcp_put(&x->srv->mcp, e);
        return rpc_reply(MHD_HTTP_INTERNAL_SERVER_ERROR, fb_rpc_error(m->id, FB_RPC_INTERNAL_ERROR, "out of memory"));
    }
    fb_mcp_sink sink = {.send = post_send, .release = post_release, .ctx = p};
    bool stream = wants_stream(x, m);
    fb_mcp_server_handle(fb_http_mcp_server(e), x->body.data, x->body.len, &sink);
    fb_buf_free(&x->body);
    fb_http_reply rep;
    if (stream) {
        rep = sse_answer(p); /* holds e and p until the stream ends */
    } else {
        rep = json_answer(p);
        fb_http_mcp_put(&x->srv->mcp, e);
        post_unref(p);
    }
    add_session_header(&rep, sid);
    return rep;
}

static fb_http_reply post(fb_http_exchange *x)
{
    fb_rpc_msg m;
    fb_rpc_parse(x->body.data ? x->body.data : "", x->body.len, &m);
    if (m.kind == FB_RPC_INVALID) {
        fb_http_reply rep = rpc_reply(MHD_HTTP_BAD_REQUEST, fb_rpc_error(m.id, m.error_code, "%s", m.error));
        fb_rpc_msg_free(&m);
        return rep;
    }
    const char *sid = fb_http_header(x, MCP_SESSION_HEADER);
    char id[FB_HTTP_SESSION_ID_LEN + 1] = "";
    fb_http_mcp_session *e = NULL;
    fb_error err = {0};
    fb_http_reply rep;
    if (!sid && m.kind == FB_RPC_REQUEST && strcmp(m.method, "initialize") == 0) {
        e = fb_http_mcp_open(&x->srv->mcp, x->owner, id, &err);
        if (!e)
            rep = fb_http_reply_error(&err);
    } else if (!sid) {
        rep = rpc_reply(MHD_HTTP_BAD_REQUEST, fb_rpc_error(m.id, FB_RPC_INVALID_REQUEST,
                                                           MCP_SESSION_HEADER ": required (initialize first: its "
                                                                              "answer carries the id)"));
    } else if (!(e = fb_http_mcp_get(&x->srv->mcp, sid, x->owner))) {
        rep = rpc_reply(MHD_HTTP_NOT_FOUND, fb_rpc_error(m.id, FB_RPC_INVALID_REQUEST,
                                                         MCP_SESSION_HEADER ": no such MCP session (ended, or never "
                                                                            "opened): initialize again"));
    } else {
        snprintf(id, sizeof id, "%s", sid);
    }
    if (e && m.kind != FB_RPC_REQUEST) {
        fb_mcp_sink none = {.send = fb_mcp_send_nowhere}; /* a notification or a response is never answered */
        fb_mcp_server_handle(fb_http_mcp_server(e), x->body.data, x->body.len, &none);
        fb_http_mcp_put(&x->srv->mcp, e);
        rep = empty(MHD_HTTP_ACCEPTED);
    } else if (e) {
        rep = request(x, e, &m, id);
    }
    fb_rpc_msg_free(&m);
    return rep;
}

static fb_http_reply end_session(fb_http_exchange *x)
{
    const char *sid = fb_http_header(x, MCP_SESSION_HEADER);
    fb_error err = {0};
    if (!sid)
        fb_set_error(&err, FB_ERR_INVALID_REQUEST, 0, MCP_SESSION_HEADER ": required: which MCP session to end");
    else if (!fb_http_mcp_close(&x->srv->mcp, sid, x->owner))
        fb_set_error(&err, FB_ERR_NOT_FOUND, 0, MCP_SESSION_HEADER ": no such MCP session (ended, or never opened)");
    return err.kind != FB_ERR_NONE ? fb_http_reply_error(&err) : empty(MHD_HTTP_NO_CONTENT);
}

fb_http_reply fb_http_handle_mcp(fb_http_exchange *x)
{
    return strcmp(x->method, "DELETE") == 0 ? end_session(x) : post(x);
}
