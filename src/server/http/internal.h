/* What the server's files share: the server's state and one request's. Not for the CLI (server.h). */
#ifndef FB_HTTP_INTERNAL_H
#define FB_HTTP_INTERNAL_H
#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "server/http/admission.h"
#include "server/http/auth.h"
#include "server/http/listen.h"
#include "server/http/mcp_sessions.h"
#include "server/http/metrics.h"
#include "server/http/router.h"
#include "server/http/server.h"
#include "server/http/sessions.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/media_types.h"

#define FB_HTTP_RETRY_AFTER "1"             /* seconds, in a 503's Retry-After */
#define FB_HTTP_DISCARD_MAX (1024UL * 1024) /* bytes of an oversized chunked body read (and dropped) so
                                               the 413 can still be sent; beyond, the connection is cut */
#define FB_HTTP_HEADER_MEMORY (32 * 1024)   /* request line + headers; over it libmicrohttpd answers 431 */
#define FB_HTTP_IDLE_TIMEOUT_S 60           /* a connection with nothing to read or write is closed */
#define FB_HTTP_SPARE_CONNECTIONS 64        /* connections beyond the admitted requests: probes, metrics,
                                               idle keep-alive, those being refused */
#define FB_HTTP_THREAD_STACK (8u << 20)     /* a connection's thread runs fnbox_call, which parses JSON
                                               nested 2048 levels deep */

typedef struct fb_http_server {
    fb_http_config cfg;
    fb_http_tokens *tokens;   /* NULL: no token needed */
    fb_http_admission adm;
    fb_http_metrics metrics;
    fb_http_sessions sessions;
    bool sessions_closed;     /* fb_http_sessions_shutdown done (at the end of a drain) */
    fb_http_mcp mcp;          /* /mcp's sessions */
    bool mcp_ready, mcp_closed;
    fb_http_listener listener;
    int cancel_pipe[2];       /* [0] is in every running call's cancel watch; written once the grace is over */
    atomic_bool draining;     /* answers say Connection: close; health says "draining" */
    pthread_mutex_t mu;
    unsigned active;          /* requests between their headers and their end (guarded by mu) */
    struct MHD_Daemon *daemon;
    fnbox_engine *engine;     /* warm pools: POST /v1/call and /mcp's call_function run through it (NULL:
                                 fnbox_call) */
    fb_media_types *media;    /* a session file's Content-Type by its extension (NULL: every file is
                                 application/octet-stream) */
} fb_http_server;

enum { FB_HTTP_PLACE_NONE, FB_HTTP_PLACE_QUEUED, FB_HTTP_PLACE_RUNNING };

/* One request, from its headers to its end (libmicrohttpd's completion callback frees it). */
typedef struct fb_http_exchange {
    fb_http_server *srv;
    struct MHD_Connection *conn;
    double t0;                /* monotonic ms at the headers */
    char method[16];
    char *path;
    fb_http_match match;
    bool has_body;            /* Content-Length > 0 or chunked */
    fb_buf body;              /* the body of a route that takes one, at most cfg.max_body bytes */
    uint64_t discarded;       /* bytes dropped once the body went over the maximum */
    bool too_large;
    bool refused;             /* refusal holds the answer decided at the headers */
    fb_error refusal;
    int place;                /* FB_HTTP_PLACE_*: what this request holds of the admission */
    unsigned status;          /* the status sent, 0 before */
    uint64_t bytes;           /* the size of the body sent */
    int owner;                /* the bearer token's index (sessions belong to it); 0 without tokens */
} fb_http_exchange;

/* A route's answer. resp NULL: none (out of memory, or the client is gone): the connection is closed. */
typedef struct fb_http_reply {
    unsigned status;
    struct MHD_Response *resp;
    uint64_t bytes; /* the body's size, for the log */
} fb_http_reply;

/* reply.c */
unsigned fb_http_status_of_kind(fb_errkind kind);
unsigned fb_http_status_of_call(int rc);
fb_http_reply fb_http_reply_error(const fb_error *err);
/* A JSON body that the response frees with free_fn; newline adds "\n" after it (as `fnbox call` prints). */
fb_http_reply fb_http_reply_json(unsigned status, char *text, size_t len, void (*free_fn)(void *), bool newline);
fb_http_reply fb_http_reply_text(unsigned status, const char *content_type, char *text, size_t len);

/* handlers.c, call.c, execute.c, piston.c, sync.c: each route's answer once its request is complete. */
fb_http_reply fb_http_handle_health(fb_http_exchange *x);
fb_http_reply fb_http_handle_metrics(fb_http_exchange *x);
fb_http_reply fb_http_handle_openapi(fb_http_exchange *x);
fb_http_reply fb_http_handle_call(fb_http_exchange *x);
fb_http_reply fb_http_handle_execute(fb_http_exchange *x);
fb_http_reply fb_http_handle_piston_runtimes(fb_http_exchange *x);
fb_http_reply fb_http_handle_piston_execute(fb_http_exchange *x);
fb_http_reply fb_http_handle_sync(fb_http_exchange *x);
/* At the headers of a route that runs something: what refuses it before its body is read; takes a queue
 * place. */
int fb_http_call_begin(fb_http_exchange *x, fb_error *err);
int fb_http_execute_begin(fb_http_exchange *x, fb_error *err);
int fb_http_piston_begin(fb_http_exchange *x, fb_error *err);
int fb_http_sync_begin(fb_http_exchange *x, fb_error *err);
/* session_routes.c */
fb_http_reply fb_http_handle_sessions(fb_http_exchange *x);
fb_http_reply fb_http_handle_session(fb_http_exchange *x);
fb_http_reply fb_http_handle_session_run(fb_http_exchange *x);
fb_http_reply fb_http_handle_session_kernel(fb_http_exchange *x);
fb_http_reply fb_http_handle_session_files(fb_http_exchange *x);
fb_http_reply fb_http_handle_session_sync(fb_http_exchange *x);
int fb_http_sessions_begin(fb_http_exchange *x, fb_error *err);
/* mcp_routes.c: POST and DELETE /mcp. */
fb_http_reply fb_http_handle_mcp(fb_http_exchange *x);
int fb_http_mcp_begin(fb_http_exchange *x, fb_error *err);
int fb_http_session_run_begin(fb_http_exchange *x, fb_error *err);

/* run.c: what those routes share. */
typedef int (*fnbox_api_fn)(const char *request, size_t len, const fnbox_call_options *options, char **result,
                            size_t *result_len);
/* The checks at the headers (Content-Type JSON, Content-Length against --max-body, a body) and a queue
 * place; takes: what the route's body is, for messages ("POST /v1/call takes a FunctionCallRequest JSON"). */
int fb_http_run_begin(fb_http_exchange *x, const char *takes, fb_error *err);
/* The same with any Content-Type (the body is read as JSON whatever it says): Piston's route only, whose
 * clients post JSON as `fetch` sends a string, text/plain;charset=UTF-8 (the npm piston-client does). */
int fb_http_run_begin_any_type(fb_http_exchange *x, const char *takes, fb_error *err);
/* With the body complete: a run slot (waiting in the queue; 503 when draining), run(x), the slot given back. */
fb_http_reply fb_http_run_admitted(fb_http_exchange *x, const char *takes, fb_http_reply (*run)(fb_http_exchange *));
typedef struct fb_http_run_opts {
    fnbox_api_fn api;             /* fnbox_call or fnbox_execute */
    fnbox_session *session;       /* instead: fnbox_session_exec in this session */
    bool session_call;            /* with session: fnbox_session_call instead */
    const char *kernel;           /* with session: fnbox_session_kernel_exec in this language's kernel */
    void (*release)(void *ctx);   /* called once the run is over (NULL: nothing) */
    void *release_ctx;
    fnbox_output_fn output;       /* NULL, or told the output as it arrives */
    void *output_ctx;
} fb_http_run_opts;
/* Runs o->api on body with the cancel watch (the client's hang-up, the server's cancel pipe) and counts
 * the execution in the metrics: the API's return code with *result (the caller's, fnbox_free), or -1 with
 * err (no result). */
int fb_http_run_api(fb_http_exchange *x, const char *body, size_t len, const fb_http_run_opts *o, char **result,
                    size_t *result_len, fb_error *err);
/* fb_http_run_api on the request's body, answered as it comes (the status from the return code). */
fb_http_reply fb_http_run_reply(fb_http_exchange *x, fnbox_api_fn api);
/* The same with fnbox_session_exec (call: fnbox_session_call) in session s; release(ctx) is called once the run is over (a streamed
 * run may outlive the handler), on every path. */
fb_http_reply fb_http_run_reply_in(fb_http_exchange *x, fnbox_session *s, bool call, void (*release)(void *),
                                   void *ctx);
/* The same with fnbox_session_kernel_exec in s's kernel for language (copied). */
fb_http_reply fb_http_run_reply_kernel(fb_http_exchange *x, fnbox_session *s, const char *language,
                                       void (*release)(void *), void *ctx);

/* server.c */
const char *fb_http_header(const fb_http_exchange *x, const char *name);

/* mhd.c: libmicrohttpd loaded (once); -1 with err saying why it cannot be. */
int fb_http_mhd_load(fb_error *err);

/* cancel.c: what cancels a running execution. */
int fb_http_client_fd(const fb_http_exchange *x);
/* The client hung up (for fb_http_admission_start's waiters; ctx is the exchange). */
bool fb_http_client_gone(void *x);
/* The execution's cancel fd (fnbox_call_options.cancel_fd): an epoll set readable when the client hangs
 * up, when the server cancels every execution (drain) or when extra_fd (-1: none) is readable. The
 * caller closes it. -1 with err set on failure. */
int fb_http_cancel_watch(const fb_http_exchange *x, int extra_fd, fb_error *err);

#endif
