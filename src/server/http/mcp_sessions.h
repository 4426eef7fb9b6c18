/* The MCP sessions of `/mcp` (Mcp-Session-Id): each one an fb_mcp_server (src/server/mcp) with the sandbox
 * session its tools share. Issued at initialize, owned by the bearer token that asked (another token gets
 * 404, as for /v1/sessions), ended by DELETE, by idleness (FB_HTTP_MCP_IDLE_S without a request) or by
 * the server's stop. A request holds a reference while it uses one; the last reference ends it (its runs
 * cancelled, its sandbox session closed). */
#ifndef FB_HTTP_MCP_SESSIONS_H
#define FB_HTTP_MCP_SESSIONS_H
#include <pthread.h>
#include <stdbool.h>

#include "server/http/sessions.h"
#include "server/mcp/mcp.h"
#include "util/error.h"

#define FB_HTTP_MCP_IDLE_S 3600.0 /* an MCP session unused this long is ended when another one opens */

typedef struct fb_http_mcp_session fb_http_mcp_session;

typedef struct fb_http_mcp {
    pthread_mutex_t mu;
    fb_http_mcp_session *head;
    unsigned count, max;
    bool stopping;
    fb_mcp_config cfg;        /* for every session (owned) */
    fnbox_engine *engine;     /* the server's warm pools, for call_function (borrowed; NULL: none): set before
                                 the server listens, closed only after fb_http_mcp_shutdown */
} fb_http_mcp;

/* cfg is taken (its strings are the table's). */
int fb_http_mcp_init(fb_http_mcp *t, unsigned max, fb_mcp_config *cfg, fb_error *err);
/* Ends every MCP session and frees the table. */
void fb_http_mcp_shutdown(fb_http_mcp *t);
/* A new MCP session owned by owner, with a reference; id gets its id. NULL with err: the table is full
 * (Overloaded), stopping, or out of memory. */
fb_http_mcp_session *fb_http_mcp_open(fb_http_mcp *t, int owner, char id[FB_HTTP_SESSION_ID_LEN + 1],
                                      fb_error *err);
/* The session with this id and owner, with a reference; NULL when none. */
fb_http_mcp_session *fb_http_mcp_get(fb_http_mcp *t, const char *id, int owner);
fb_mcp_server *fb_http_mcp_server(fb_http_mcp_session *e);
void fb_http_mcp_put(fb_http_mcp *t, fb_http_mcp_session *e);
/* Ends the session with this id and owner (once its references are gone); false when none. */
bool fb_http_mcp_close(fb_http_mcp *t, const char *id, int owner);
unsigned fb_http_mcp_count(fb_http_mcp *t);
/* Tool calls running in every MCP session (the drain waits for them as for executions). */
unsigned fb_http_mcp_running(fb_http_mcp *t);
/* Cancels every running tool call and refuses new ones in every session (the drain's grace is over). */
void fb_http_mcp_stop_all(fb_http_mcp *t);

#endif
