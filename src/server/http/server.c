/* The daemon (libmicrohttpd, one thread per connection: a handler may block for a whole call), each
 * request's way through it, and the server's life: start, serve, drain, stop.
 *
 * A request: at its headers (first call of on_access) the route, the token, the method and the route's
 * own checks decide whether it is refused; a refusal of a request with a body is sent at once (the body
 * is never read, libmicrohttpd closes the connection after it), otherwise at the end. The body of a route
 * that takes one is read into a buffer bounded by --max-body. When the request is complete (last call),
 * the route's handler answers. on_completed logs it, counts it and frees its state. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fnbox.h"
#include "server/http/internal.h"
#include "server/http/log.h"

#define FLUSH_WAIT_MS 5000 /* after the last execution, how long answers still going out are waited for */
#define STOP_POLL_MS 100   /* how often the drain looks at the counts */

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

const char *fb_http_header(const fb_http_exchange *x, const char *name)
{
    return MHD_lookup_connection_value(x->conn, MHD_HEADER_KIND, name);
}

/* ---- one request ---- */

static bool has_body(const fb_http_exchange *x)
{
    if (fb_http_header(x, MHD_HTTP_HEADER_TRANSFER_ENCODING))
        return true; /* chunked: libmicrohttpd refuses any other coding */
    const char *cl = fb_http_header(x, MHD_HTTP_HEADER_CONTENT_LENGTH);
    return cl && strspn(cl, "0") != strlen(cl);
}

static fb_http_exchange *exchange_new(fb_http_server *srv, struct MHD_Connection *c, const char *method,
                                      const char *url)
{
    fb_http_exchange *x = calloc(1, sizeof *x);
    if (!x)
        return NULL;
    x->path = strdup(url ? url : "");
    if (!x->path) {
        free(x);
        return NULL;
    }
    x->srv = srv;
    x->conn = c;
    x->t0 = now_ms();
    snprintf(x->method, sizeof x->method, "%s", method ? method : "");
    fb_buf_init(&x->body, srv->cfg.max_body);
    fb_http_route_match(method, url, &x->match);
    x->has_body = has_body(x);
    pthread_mutex_lock(&srv->mu);
    srv->active++;
    pthread_mutex_unlock(&srv->mu);
    return x;
}

static void exchange_free(fb_http_exchange *x)
{
    fb_http_server *srv = x->srv;
    if (x->place == FB_HTTP_PLACE_QUEUED)
        fb_http_admission_leave(&srv->adm);
    else if (x->place == FB_HTTP_PLACE_RUNNING) /* not reached: a handler gives its slot back itself */
        fb_http_admission_finish(&srv->adm);
    fb_buf_free(&x->body);
    free(x->path);
    free(x);
    pthread_mutex_lock(&srv->mu);
    srv->active--;
    pthread_mutex_unlock(&srv->mu);
}

static bool add_header(struct MHD_Response *r, const char *name, const char *value)
{
    return MHD_add_response_header(r, name, value) == MHD_YES;
}

static enum MHD_Result send_reply(fb_http_exchange *x, fb_http_reply rep)
{
    if (!rep.resp)
        return MHD_NO; /* out of memory, or the client left: close the connection */
    bool ok = true;
    if (atomic_load(&x->srv->draining) || x->too_large)
        ok = add_header(rep.resp, MHD_HTTP_HEADER_CONNECTION, "close");
    if (ok && rep.status == MHD_HTTP_METHOD_NOT_ALLOWED)
        ok = add_header(rep.resp, MHD_HTTP_HEADER_ALLOW, x->match.allow);
    enum MHD_Result r = ok ? MHD_queue_response(x->conn, rep.status, rep.resp) : MHD_NO;
    MHD_destroy_response(rep.resp);
    if (r == MHD_YES) {
        x->status = rep.status;
        x->bytes = strcmp(x->method, "HEAD") == 0 ? 0 : rep.bytes;
    }
    return r;
}

static enum MHD_Result send_error(fb_http_exchange *x, const fb_error *err)
{
    return send_reply(x, fb_http_reply_error(err));
}

static fb_http_reply (*const k_handlers[FB_HTTP_ROUTE_COUNT])(fb_http_exchange *) = {
    [FB_HTTP_ROUTE_HEALTH] = fb_http_handle_health,
    [FB_HTTP_ROUTE_CALL] = fb_http_handle_call,
    [FB_HTTP_ROUTE_METRICS] = fb_http_handle_metrics,
    [FB_HTTP_ROUTE_EXECUTE] = fb_http_handle_execute,
    [FB_HTTP_ROUTE_PISTON_RUNTIMES] = fb_http_handle_piston_runtimes,
    [FB_HTTP_ROUTE_PISTON_EXECUTE] = fb_http_handle_piston_execute,
    [FB_HTTP_ROUTE_SESSIONS] = fb_http_handle_sessions,
    [FB_HTTP_ROUTE_SESSION] = fb_http_handle_session,
    [FB_HTTP_ROUTE_SESSION_COMMANDS] = fb_http_handle_session_run,
    [FB_HTTP_ROUTE_SESSION_CODE] = fb_http_handle_session_run,
    [FB_HTTP_ROUTE_SESSION_CALL] = fb_http_handle_session_run,
    [FB_HTTP_ROUTE_SESSION_FILES] = fb_http_handle_session_files,
    [FB_HTTP_ROUTE_SESSION_LIST] = fb_http_handle_session_files,
    [FB_HTTP_ROUTE_SESSION_SYNC] = fb_http_handle_session_sync,
    [FB_HTTP_ROUTE_MCP] = fb_http_handle_mcp,
    [FB_HTTP_ROUTE_SYNC] = fb_http_handle_sync,
    [FB_HTTP_ROUTE_SESSION_KERNEL_EXEC] = fb_http_handle_session_run,
    [FB_HTTP_ROUTE_SESSION_KERNEL] = fb_http_handle_session_kernel,
    [FB_HTTP_ROUTE_OPENAPI] = fb_http_handle_openapi,
};

/* Only for a request the router matched (refuse_at_headers let it through). */
static enum MHD_Result answer(fb_http_exchange *x)
{
    return send_reply(x, k_handlers[x->match.route](x));
}

/* What refuses a request at its headers: the token first (unless the path is public), so that nothing,
 * not even which paths exist, is told to a client without one; then the route and method; then the
 * route's own checks. */
static int refuse_at_headers(fb_http_exchange *x, fb_error *err)
{
    const fb_http_server *srv = x->srv;
    if (!x->match.public && srv->tokens) {
        const char *auth = fb_http_header(x, MHD_HTTP_HEADER_AUTHORIZATION);
        x->owner = fb_http_tokens_which(srv->tokens, auth); /* whose sessions it may see */
        if (x->owner < 0)
            return fb_set_error(err, FB_ERR_UNAUTHORIZED, 0,
                                auth ? "the bearer token is not one this server accepts"
                                     : "a bearer token is needed: Authorization: Bearer <token>");
    }
    if (x->match.kind == FB_HTTP_MATCH_NO_PATH)
        return fb_set_error(err, FB_ERR_NOT_FOUND, 0, "no route %.16s %.512s", x->method, x->path);
    if (x->match.kind == FB_HTTP_MATCH_NO_METHOD)
        return fb_set_error(err, FB_ERR_METHOD_NOT_ALLOWED, 0, "%.512s takes %s, not %.16s", x->path, x->match.allow,
                            x->method);
    switch (x->match.route) {
    case FB_HTTP_ROUTE_CALL: return fb_http_call_begin(x, err);
    case FB_HTTP_ROUTE_EXECUTE: return fb_http_execute_begin(x, err);
    case FB_HTTP_ROUTE_SYNC: return fb_http_sync_begin(x, err);
    case FB_HTTP_ROUTE_PISTON_EXECUTE: return fb_http_piston_begin(x, err);
    case FB_HTTP_ROUTE_SESSIONS:
    case FB_HTTP_ROUTE_SESSION_SYNC: return fb_http_sessions_begin(x, err);
    case FB_HTTP_ROUTE_SESSION_COMMANDS:
    case FB_HTTP_ROUTE_SESSION_CODE:
    case FB_HTTP_ROUTE_SESSION_CALL:
    case FB_HTTP_ROUTE_SESSION_KERNEL_EXEC: return fb_http_session_run_begin(x, err);
    case FB_HTTP_ROUTE_MCP: return fb_http_mcp_begin(x, err);
    default: return 0;
    }
}

static enum MHD_Result on_headers(fb_http_server *srv, struct MHD_Connection *c, const char *url,
                                  const char *method, void **req_cls)
{
    fb_http_exchange *x = exchange_new(srv, c, method, url);
    if (!x)
        return MHD_NO;
    *req_cls = x;
    if (refuse_at_headers(x, &x->refusal) < 0) {
        x->refused = true;
        return x->has_body ? send_error(x, &x->refusal) : MHD_YES;
    }
    if (x->has_body && !x->match.takes_body)
        return answer(x); /* a body nobody reads: answered now, and libmicrohttpd drops it */
    return MHD_YES;
}

/* Bytes past the maximum are dropped, up to FB_HTTP_DISCARD_MAX, so that a chunked body a little too
 * large still gets its 413 (libmicrohttpd 0.9.75 queues an answer only before or after the body). */
static enum MHD_Result on_body(fb_http_exchange *x, const char *data, size_t n)
{
    if (!x->too_large && x->body.len + n > x->srv->cfg.max_body) {
        x->too_large = true;
        fb_buf_free(&x->body);
        if (x->place == FB_HTTP_PLACE_QUEUED) {
            fb_http_admission_leave(&x->srv->adm);
            x->place = FB_HTTP_PLACE_NONE;
        }
    }
    if (x->too_large) {
        x->discarded += n;
        return x->discarded > FB_HTTP_DISCARD_MAX ? MHD_NO : MHD_YES;
    }
    return fb_buf_append(&x->body, data, n) < 0 ? MHD_NO : MHD_YES;
}

static enum MHD_Result on_complete(fb_http_exchange *x)
{
    if (x->status)
        return MHD_YES;
    if (x->refused)
        return send_error(x, &x->refusal);
    if (x->too_large) {
        fb_error err;
        fb_set_error(&err, FB_ERR_PAYLOAD_TOO_LARGE, 0, "body: more than the server's maximum of %zu bytes (--max-body)",
                     x->srv->cfg.max_body);
        return send_error(x, &err);
    }
    return answer(x);
}

static enum MHD_Result on_access(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                 const char *version, const char *upload, size_t *upload_size, void **req_cls)
{
    (void)version;
    fb_http_exchange *x = *req_cls;
    if (!x)
        return on_headers(cls, c, url, method, req_cls);
    if (*upload_size) {
        size_t n = *upload_size;
        *upload_size = 0;
        return on_body(x, upload, n);
    }
    return on_complete(x);
}

static const char *termination_text(enum MHD_RequestTerminationCode toe)
{
    switch (toe) {
    case MHD_REQUEST_TERMINATED_COMPLETED_OK:
        return NULL;
    case MHD_REQUEST_TERMINATED_TIMEOUT_REACHED:
        return "idle timeout";
    case MHD_REQUEST_TERMINATED_DAEMON_SHUTDOWN:
        return "server stopped";
    case MHD_REQUEST_TERMINATED_READ_ERROR:
    case MHD_REQUEST_TERMINATED_CLIENT_ABORT:
        return "the client closed the connection";
    default:
        return "the connection failed";
    }
}

static void on_completed(void *cls, struct MHD_Connection *c, void **req_cls, enum MHD_RequestTerminationCode toe)
{
    (void)c;
    fb_http_server *srv = cls;
    fb_http_exchange *x = *req_cls;
    if (!x)
        return;
    *req_cls = NULL;
    double ms = now_ms() - x->t0;
    fb_http_metrics_request(&srv->metrics, x->match.route, x->status, ms / 1e3);
    fb_http_log_request(x->method, x->path, x->status, ms, x->status ? x->bytes : 0, termination_text(toe));
    exchange_free(x);
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    char msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    msg[strcspn(msg, "\n")] = '\0';
    fb_http_log_event("libmicrohttpd", msg);
}

/* ---- the server's life ---- */

static void server_free(fb_http_server *srv)
{
    if (srv->tokens) {
        explicit_bzero(srv->tokens, sizeof *srv->tokens);
        free(srv->tokens);
    }
    fb_http_listener_close(&srv->listener);
    for (int i = 0; i < 2; i++)
        if (srv->cancel_pipe[i] >= 0)
            close(srv->cancel_pipe[i]);
    if (!srv->sessions_closed)
        fb_http_sessions_shutdown(&srv->sessions);
    if (srv->mcp_ready && !srv->mcp_closed)
        fb_http_mcp_shutdown(&srv->mcp);
    /* No call runs any more: the daemon's threads are gone, and the MCP sessions (whose call_function runs
       through the engine too) have ended, each after waiting for its runs. */
    fnbox_engine_close(srv->engine);
    fb_media_types_free(srv->media);
    fb_http_admission_destroy(&srv->adm);
    fb_http_metrics_destroy(&srv->metrics);
    pthread_mutex_destroy(&srv->mu);
    free(srv);
}

/* Allocates the server with its locks; NULL on failure (nothing to free). */
static fb_http_server *server_new(const fb_http_config *cfg)
{
    fb_http_server *srv = calloc(1, sizeof *srv);
    if (!srv)
        return NULL;
    srv->cfg = *cfg;
    srv->listener.fd = srv->cancel_pipe[0] = srv->cancel_pipe[1] = -1;
    if (pthread_mutex_init(&srv->mu, NULL) != 0) {
        free(srv);
        return NULL;
    }
    if (fb_http_metrics_init(&srv->metrics) < 0) {
        pthread_mutex_destroy(&srv->mu);
        free(srv);
        return NULL;
    }
    fb_error err = {0};
    if (fb_http_admission_init(&srv->adm, cfg->max_concurrency, cfg->max_queue) < 0) {
        fb_http_metrics_destroy(&srv->metrics);
        pthread_mutex_destroy(&srv->mu);
        free(srv);
        return NULL;
    }
    fb_mcp_config mcfg;
    if (cfg->mcp)
        mcfg = *cfg->mcp; /* the table takes its strings: the CLI's copy is cleared below */
    else
        fb_mcp_config_init(&mcfg);
    srv->mcp_ready = fb_http_mcp_init(&srv->mcp, cfg->max_sessions, &mcfg, &err) == 0;
    if (cfg->mcp && srv->mcp_ready)
        memset(cfg->mcp, 0, sizeof *cfg->mcp);
    if (!srv->mcp_ready || fb_http_sessions_init(&srv->sessions, cfg->max_sessions, &err) < 0) {
        if (srv->mcp_ready)
            fb_http_mcp_shutdown(&srv->mcp);
        fb_http_admission_destroy(&srv->adm);
        fb_http_metrics_destroy(&srv->metrics);
        pthread_mutex_destroy(&srv->mu);
        free(srv);
        return NULL;
    }
    return srv;
}

static int load_tokens(fb_http_server *srv, fb_error *err)
{
    if (!srv->cfg.token_file)
        return 0;
    srv->tokens = malloc(sizeof *srv->tokens);
    if (!srv->tokens)
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "tokens");
    bool insecure = false;
    if (fb_http_tokens_load(srv->cfg.token_file, srv->tokens, &insecure, err) < 0)
        return -1;
    if (insecure)
        fb_http_log_event("warning", "the token file is readable or writable by group or others: whoever reads "
                                     "it can run code through this server (chmod 600 it)");
    return 0;
}

/* The media types session files are sent as. Without the table (no media-types package) the files are
 * still served, as application/octet-stream: said once in the log. */
static void load_media_types(fb_http_server *srv)
{
    fb_error err = {0};
    srv->media = fb_media_types_load(FB_MEDIA_TYPES_PATH, &err);
    if (!srv->media) {
        char msg[FB_ERROR_MSG_MAX + 128];
        snprintf(msg, sizeof msg, "%s: session files are sent as application/octet-stream (install Debian's "
                 "media-types package for their types)", err.message);
        fb_http_log_event("warning", msg);
    }
}

/* The warm pools, before listening: a bad --warm is the configuration's error, not a request's. */
static int open_engine(fb_http_server *srv, fb_error *err)
{
    if (!srv->cfg.engine)
        return 0;
    char *why = NULL;
    int rc = fnbox_engine_open(srv->cfg.engine, strlen(srv->cfg.engine), &srv->engine, &why, NULL);
    if (rc != FNBOX_OK) {
        json_t *doc = why ? json_loads(why, 0, NULL) : NULL;
        const char *msg = json_string_value(json_object_get(json_object_get(doc, "error"), "message"));
        fb_set_error(err, rc == FNBOX_INVALID_REQUEST ? FB_ERR_INVALID_REQUEST : FB_ERR_INTERNAL, 0, "%s",
                     msg ? msg : "the warm pools could not start");
        json_decref(doc);
    }
    fnbox_free(why);
    srv->mcp.engine = srv->engine; /* /mcp's call_function runs warm as POST /v1/call does */
    return rc == FNBOX_OK ? 0 : -1;
}

static int server_listen(fb_http_server *srv, fb_error *err)
{
    fb_http_listen_spec spec;
    if (fb_http_listen_parse(srv->cfg.listen, &spec, err) < 0 ||
        fb_http_listener_open(&spec, srv->tokens == NULL, &srv->listener, err) < 0)
        return -1;
    if (pipe2(srv->cancel_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
        return fb_set_error(err, FB_ERR_INTERNAL, errno, "pipe2");
    return 0;
}

static int server_start(fb_http_server *srv, fb_error *err)
{
    unsigned limit = srv->cfg.max_concurrency + srv->cfg.max_queue + FB_HTTP_SPARE_CONNECTIONS;
    srv->daemon = MHD_start_daemon(
        MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ITC |
            MHD_USE_ERROR_LOG,
        0, NULL, NULL, on_access, srv, /* the logger first, or libmicrohttpd prints its first words itself */
        MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, srv, MHD_OPTION_LISTEN_SOCKET, srv->listener.fd,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv, MHD_OPTION_CONNECTION_LIMIT, limit,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)FB_HTTP_IDLE_TIMEOUT_S, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
        (size_t)FB_HTTP_HEADER_MEMORY, MHD_OPTION_THREAD_STACK_SIZE, (size_t)FB_HTTP_THREAD_STACK, MHD_OPTION_END);
    if (!srv->daemon)
        return fb_set_error(err, FB_ERR_INTERNAL, errno, "libmicrohttpd could not start");
    return 0;
}

static void log_listening(const fb_http_server *srv)
{
    fb_http_log(json_pack("{s:s, s:s, s:s, s:b, s:i, s:i, s:I, s:f}", "event", "listening", "address",
                          srv->listener.address, "version", fnbox_version(), "tokens", srv->tokens != NULL,
                          "maxConcurrency", (int)srv->cfg.max_concurrency, "maxQueue", (int)srv->cfg.max_queue,
                          "maxBody", (json_int_t)srv->cfg.max_body, "grace", srv->cfg.grace_s));
}

/* Waits for stop_fd to be readable and consumes what made it so (a signalfd record is 128 bytes).
 * timeout_ms < 0: no timeout. True when it was. */
static bool stop_requested(int stop_fd, int timeout_ms)
{
    struct pollfd p = {.fd = stop_fd, .events = POLLIN};
    int n;
    do
        n = poll(&p, 1, timeout_ms);
    while (n < 0 && errno == EINTR && timeout_ms < 0);
    if (n <= 0)
        return false;
    char drop[128];
    (void)!read(stop_fd, drop, sizeof drop);
    return true;
}

static unsigned active_requests(fb_http_server *srv)
{
    pthread_mutex_lock(&srv->mu);
    unsigned n = srv->active;
    pthread_mutex_unlock(&srv->mu);
    return n;
}

static void log_counts(const char *event, fb_http_server *srv)
{
    unsigned running, queued;
    fb_http_admission_counts(&srv->adm, &running, &queued);
    fb_http_log(json_pack("{s:s, s:i, s:i, s:i}", "event", event, "running", (int)running, "queued", (int)queued,
                          "mcpRunning", (int)fb_http_mcp_running(&srv->mcp)));
}

/* Every session is closed (killing what runs in them) once no request can reach them any more. */
static void log_sessions_closed(fb_http_server *srv)
{
    unsigned mcp = fb_http_mcp_count(&srv->mcp);
    fb_http_mcp_shutdown(&srv->mcp);
    srv->mcp_closed = true;
    if (mcp > 0)
        fb_http_log(json_pack("{s:s, s:i}", "event", "MCP sessions closed", "count", (int)mcp));
    unsigned open = fb_http_sessions_count(&srv->sessions);
    fb_http_sessions_shutdown(&srv->sessions);
    srv->sessions_closed = true;
    if (open > 0) /* said only when there were some: the usual stop logs draining, then stopped */
        fb_http_log(json_pack("{s:s, s:i}", "event", "sessions closed", "count", (int)open));
}

/* Stop accepting (the unix socket file goes at once, so new clients fail fast), refuse what waits, let
 * running executions finish for the grace period, cancel the rest, wait until their answers are out. */
static void drain(fb_http_server *srv, int stop_fd)
{
    atomic_store(&srv->draining, true);
    MHD_socket lfd = MHD_quiesce_daemon(srv->daemon);
    srv->listener.fd = lfd == MHD_INVALID_SOCKET ? -1 : lfd; /* back from libmicrohttpd: ours to close */
    fb_http_listener_close(&srv->listener);
    fb_http_admission_drain(&srv->adm);
    log_counts("draining", srv);
    unsigned running, queued;
    double deadline = now_ms() + srv->cfg.grace_s * 1e3;
    unsigned mcp_running = 0;
    for (;;) {
        fb_http_admission_counts(&srv->adm, &running, &queued);
        mcp_running = fb_http_mcp_running(&srv->mcp); /* /mcp's tool calls take no run slot */
        if ((running == 0 && queued == 0 && mcp_running == 0) || now_ms() >= deadline)
            break;
        if (stop_requested(stop_fd, STOP_POLL_MS)) /* asked again: no more grace */
            break;
    }
    if (running > 0 || mcp_running > 0) {
        log_counts("cancelling", srv);
        (void)!write(srv->cancel_pipe[1], "x", 1);
        fb_http_mcp_stop_all(&srv->mcp);
    }
    /* A cancelled call ends as soon as its sandbox is killed. */
    while (fb_http_admission_counts(&srv->adm, &running, &queued), running > 0)
        (void)poll(NULL, 0, 10);
    for (double until = now_ms() + FLUSH_WAIT_MS; active_requests(srv) > 0 && now_ms() < until;)
        (void)poll(NULL, 0, 10);
}

int fb_http_serve(const fb_http_config *cfg, int stop_fd, fb_error *err)
{
    if (fb_http_mhd_load(err) < 0)
        return -1;
    fb_http_server *srv = server_new(cfg);
    if (!srv)
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "server");
    load_media_types(srv);
    if (load_tokens(srv, err) < 0 || open_engine(srv, err) < 0 || server_listen(srv, err) < 0 ||
        server_start(srv, err) < 0) {
        server_free(srv);
        return -1;
    }
    srv->listener.fd = -1; /* libmicrohttpd's until drain() takes it back */
    log_listening(srv);
    stop_requested(stop_fd, -1);
    drain(srv, stop_fd);
    MHD_stop_daemon(srv->daemon);
    log_sessions_closed(srv);
    fb_http_log_event("stopped", NULL);
    server_free(srv);
    return 0;
}
