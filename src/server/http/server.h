/* `fnbox serve`: an HTTP server over include/fnbox.h (libmicrohttpd, one thread per connection). The
 * CLI (src/cli/serve.c) fills the configuration and owns the signals; everything else is here. */
#ifndef FB_HTTP_SERVER_H
#define FB_HTTP_SERVER_H
#include <stddef.h>

#include "server/mcp/mcp.h"
#include "util/error.h"

#define FB_HTTP_MAX_CONCURRENCY 1024  /* --max-concurrency's maximum */
#define FB_HTTP_MAX_QUEUE 4096        /* --max-queue's maximum */
#define FB_HTTP_MAX_GRACE_S 3600.0    /* --grace's maximum */
#define FB_HTTP_MAX_SESSIONS 4096     /* --max-sessions' maximum */
#define FB_HTTP_DEFAULT_SESSIONS 64   /* --max-sessions' default */

typedef struct fb_http_config {
    const char *listen;        /* "HOST:PORT" or "unix:PATH" */
    const char *token_file;    /* NULL: no token is needed, and only loopback or a unix socket is allowed */
    unsigned max_concurrency;  /* executions at once, 1..FB_HTTP_MAX_CONCURRENCY */
    unsigned max_queue;        /* requests admitted beyond those, waiting; 0..FB_HTTP_MAX_QUEUE */
    size_t max_body;           /* bytes of a request body */
    unsigned max_sessions;     /* sessions open at once, 0..FB_HTTP_MAX_SESSIONS */
    double grace_s;            /* on stop: how long running executions may go on before they are cancelled */
    const char *const *mcp_origins; /* browser Origins /mcp accepts besides loopback ones */
    size_t n_mcp_origins;
    fb_mcp_config *mcp;        /* /mcp's tools and sessions (NULL: the defaults); its strings are taken */
    const char *engine;        /* fnbox_engine_open's options (warm pools) for POST /v1/call and /mcp's
                                  call_function; NULL: none */
} fb_http_config;

/* Serves until stop_fd is readable (the CLI's signalfd), then drains: stops accepting, answers queued
 * requests 503, lets running executions finish for grace_s, cancels the rest, waits for their answers to
 * go out, and returns 0 with nothing left behind (threads, sockets, the unix socket file). A second
 * readable event on stop_fd during the grace cancels at once. -1 when the server could not start. */
int fb_http_serve(const fb_http_config *cfg, int stop_fd, fb_error *err);

#endif
