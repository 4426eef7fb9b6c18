/* MCP over stdio: one JSON-RPC message per line on in, answers and notifications one per line on out (only
 * protocol there: logs go to stderr). Ends at EOF on in, or when stop_fd is readable: every run is then
 * cancelled and the session closed before it returns, so nothing it started outlives it. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/mcp/jsonrpc.h"
#include "server/mcp/mcp.h"
#include "util/buf.h"

typedef struct out_ctx {
    int fd;
    int broken; /* the client stopped reading */
} out_ctx;

static int write_all(void *ctx, const char *line, size_t len, bool final)
{
    (void)final; /* one stream for everything */
    out_ctx *o = ctx;
    while (len > 0 && !o->broken) {
        ssize_t n = write(o->fd, line, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            o->broken = errno;
            break;
        }
        line += n;
        len -= (size_t)n;
    }
    return o->broken ? -1 : 0;
}

/* Hands every whole line of b to the server; keeps the rest. A line over the maximum is refused once and
 * skipped up to its end (*skipping). */
static void dispatch(fb_mcp_server *srv, const fb_mcp_sink *sink, fb_buf *b, bool *skipping)
{
    size_t at = 0;
    for (char *nl; (nl = memchr(b->data + at, '\n', b->len - at));) {
        size_t len = (size_t)(nl - (b->data + at));
        if (len > 0 && b->data[at + len - 1] == '\r')
            len--;
        if (!*skipping && len > 0)
            fb_mcp_server_handle(srv, b->data + at, len, sink);
        *skipping = false;
        at = (size_t)(nl - b->data) + 1;
    }
    if (at == 0 && b->len >= FB_MCP_MAX_MESSAGE && !*skipping) {
        fb_mcp_server_send(srv, fb_rpc_error(NULL, FB_RPC_INVALID_REQUEST,
                                             "message: over the %u bytes a message may have: refused",
                                             FB_MCP_MAX_MESSAGE));
        *skipping = true;
    }
    if (*skipping) {
        b->len = 0;
    } else if (at > 0) {
        memmove(b->data, b->data + at, b->len - at);
        b->len -= at;
    }
}

int fb_mcp_stdio_run(const fb_mcp_config *cfg, fnbox_engine *engine, int in, int out, int stop_fd)
{
    out_ctx o = {.fd = out};
    fb_mcp_sink sink = {.send = write_all, .ctx = &o};
    fb_mcp_server *srv = fb_mcp_server_new(cfg, engine, &sink);
    if (!srv)
        return -1;
    fb_buf b;
    fb_buf_init(&b, (size_t)FB_MCP_MAX_MESSAGE + 65536);
    bool skipping = false;
    int rc = 0;
    char chunk[65536];
    for (;;) {
        struct pollfd p[2] = {{.fd = in, .events = POLLIN}, {.fd = stop_fd, .events = POLLIN}};
        if (poll(p, stop_fd >= 0 ? 2 : 1, -1) < 0) {
            if (errno == EINTR)
                continue;
            rc = -1;
            break;
        }
        if (stop_fd >= 0 && p[1].revents)
            break;
        ssize_t n = read(in, chunk, sizeof chunk);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n <= 0) {
            if (n < 0)
                rc = -1;
            if (b.len > 0 && !skipping)
                fb_mcp_server_handle(srv, b.data, b.len, &sink); /* the last line without its newline */
            break;
        }
        if (fb_buf_append(&b, chunk, (size_t)n) < 0) {
            rc = -1;
            break;
        }
        dispatch(srv, &sink, &b, &skipping);
    }
    fb_mcp_server_free(srv);
    fb_buf_free(&b);
    return rc;
}
