/* The route table: one line per method a path answers. A new route is one line here, one handler in
 * server.c's dispatch table, and one metrics label (fb_http_route_name). */
#include "server/http/router.h"

#include <stdio.h>
#include <string.h>

typedef struct route {
    const char *method;
    const char *path;
    fb_http_route_id id;
    bool public;
    bool takes_body;
} route;

/* HEAD is GET without the body (libmicrohttpd leaves it out), as HTTP wants for every GET resource. */
static const route k_routes[] = {
    {"GET", "/v1/health", FB_HTTP_ROUTE_HEALTH, true, false},
    {"HEAD", "/v1/health", FB_HTTP_ROUTE_HEALTH, true, false},
    /* Public as health is: the document published with fnbox, nothing of this server's state; API explorers
       and gateways fetch it before they are given a token. */
    {"GET", "/v1/openapi.json", FB_HTTP_ROUTE_OPENAPI, true, false},
    {"HEAD", "/v1/openapi.json", FB_HTTP_ROUTE_OPENAPI, true, false},
    {"POST", "/v1/call", FB_HTTP_ROUTE_CALL, false, true},
    {"GET", "/metrics", FB_HTTP_ROUTE_METRICS, false, false},
    {"HEAD", "/metrics", FB_HTTP_ROUTE_METRICS, false, false},
    {"POST", "/v1/execute", FB_HTTP_ROUTE_EXECUTE, false, true},
    {"GET", "/api/v2/runtimes", FB_HTTP_ROUTE_PISTON_RUNTIMES, false, false},
    {"HEAD", "/api/v2/runtimes", FB_HTTP_ROUTE_PISTON_RUNTIMES, false, false},
    {"POST", "/api/v2/execute", FB_HTTP_ROUTE_PISTON_EXECUTE, false, true},
    {"POST", "/v1/sessions", FB_HTTP_ROUTE_SESSIONS, false, true},
    {"GET", "/v1/sessions/{id}", FB_HTTP_ROUTE_SESSION, false, false},
    {"HEAD", "/v1/sessions/{id}", FB_HTTP_ROUTE_SESSION, false, false},
    {"DELETE", "/v1/sessions/{id}", FB_HTTP_ROUTE_SESSION, false, false},
    {"POST", "/v1/sessions/{id}/commands", FB_HTTP_ROUTE_SESSION_COMMANDS, false, true},
    {"POST", "/v1/sessions/{id}/code", FB_HTTP_ROUTE_SESSION_CODE, false, true},
    {"POST", "/v1/sessions/{id}/call", FB_HTTP_ROUTE_SESSION_CALL, false, true},
    {"GET", "/v1/sessions/{id}/files", FB_HTTP_ROUTE_SESSION_FILES, false, false},
    {"HEAD", "/v1/sessions/{id}/files", FB_HTTP_ROUTE_SESSION_FILES, false, false},
    {"PUT", "/v1/sessions/{id}/files", FB_HTTP_ROUTE_SESSION_FILES, false, true},
    {"DELETE", "/v1/sessions/{id}/files", FB_HTTP_ROUTE_SESSION_FILES, false, false},
    {"GET", "/v1/sessions/{id}/files/list", FB_HTTP_ROUTE_SESSION_LIST, false, false},
    {"HEAD", "/v1/sessions/{id}/files/list", FB_HTTP_ROUTE_SESSION_LIST, false, false},
    {"POST", "/v1/sessions/{id}/sync", FB_HTTP_ROUTE_SESSION_SYNC, false, true},
    {"POST", "/v1/sync", FB_HTTP_ROUTE_SYNC, false, true},
    {"POST", "/v1/sessions/{id}/kernels/{lang}/execute", FB_HTTP_ROUTE_SESSION_KERNEL_EXEC, false, true},
    {"DELETE", "/v1/sessions/{id}/kernels/{lang}", FB_HTTP_ROUTE_SESSION_KERNEL, false, false},
    {"POST", "/mcp", FB_HTTP_ROUTE_MCP, false, true},
    {"DELETE", "/mcp", FB_HTTP_ROUTE_MCP, false, false},
};
enum { NROUTES = sizeof k_routes / sizeof k_routes[0] };

static const char *const k_names[FB_HTTP_ROUTE_COUNT] = {
    [FB_HTTP_ROUTE_NONE] = "unmatched",
    [FB_HTTP_ROUTE_HEALTH] = "/v1/health",
    [FB_HTTP_ROUTE_CALL] = "/v1/call",
    [FB_HTTP_ROUTE_METRICS] = "/metrics",
    [FB_HTTP_ROUTE_EXECUTE] = "/v1/execute",
    [FB_HTTP_ROUTE_PISTON_RUNTIMES] = "/api/v2/runtimes",
    [FB_HTTP_ROUTE_PISTON_EXECUTE] = "/api/v2/execute",
    [FB_HTTP_ROUTE_SESSIONS] = "/v1/sessions",
    [FB_HTTP_ROUTE_SESSION] = "/v1/sessions/{id}",
    [FB_HTTP_ROUTE_SESSION_COMMANDS] = "/v1/sessions/{id}/commands",
    [FB_HTTP_ROUTE_SESSION_CODE] = "/v1/sessions/{id}/code",
    [FB_HTTP_ROUTE_SESSION_CALL] = "/v1/sessions/{id}/call",
    [FB_HTTP_ROUTE_SESSION_FILES] = "/v1/sessions/{id}/files",
    [FB_HTTP_ROUTE_SESSION_LIST] = "/v1/sessions/{id}/files/list",
    [FB_HTTP_ROUTE_SESSION_SYNC] = "/v1/sessions/{id}/sync",
    [FB_HTTP_ROUTE_MCP] = "/mcp",
    [FB_HTTP_ROUTE_SYNC] = "/v1/sync",
    [FB_HTTP_ROUTE_SESSION_KERNEL_EXEC] = "/v1/sessions/{id}/kernels/{lang}/execute",
    [FB_HTTP_ROUTE_SESSION_KERNEL] = "/v1/sessions/{id}/kernels/{lang}",
    [FB_HTTP_ROUTE_OPENAPI] = "/v1/openapi.json",
};

const char *fb_http_route_name(fb_http_route_id id)
{
    return (unsigned)id < FB_HTTP_ROUTE_COUNT ? k_names[id] : k_names[FB_HTTP_ROUTE_NONE];
}

static void add_allow(fb_http_match *m, const char *method)
{
    size_t n = strlen(m->allow);
    snprintf(m->allow + n, sizeof m->allow - n, "%s%s", n ? ", " : "", method);
}

/* Whether path fits pattern, segment by segment; a "{id}" or "{lang}" segment takes any one non-empty
 * segment (up to its maximum), copied into m. */
static bool path_match(const char *pattern, const char *path, fb_http_match *m)
{
    while (*pattern && *path) {
        size_t plen = strcspn(pattern, "/"), len = strcspn(path, "/");
        char *hole = NULL;
        size_t cap = 0;
        if (plen == 4 && strncmp(pattern, "{id}", 4) == 0) {
            hole = m->id;
            cap = FB_HTTP_ID_MAX;
        } else if (plen == 6 && strncmp(pattern, "{lang}", 6) == 0) {
            hole = m->lang;
            cap = FB_HTTP_LANG_MAX;
        }
        if (hole) {
            if (len == 0 || len > cap)
                return false;
            memcpy(hole, path, len);
            hole[len] = '\0';
        } else if (plen != len || strncmp(pattern, path, len) != 0) {
            return false;
        }
        pattern += plen;
        path += len;
        if (*pattern != *path) /* one has a '/' here, the other ends */
            return false;
        if (*pattern) {
            pattern++;
            path++;
        }
    }
    return *pattern == '\0' && *path == '\0';
}

void fb_http_route_match(const char *method, const char *path, fb_http_match *m)
{
    memset(m, 0, sizeof *m);
    m->kind = FB_HTTP_MATCH_NO_PATH;
    if (!method || !path)
        return;
    for (size_t i = 0; i < NROUTES; i++) {
        const route *r = &k_routes[i];
        if (!path_match(r->path, path, m))
            continue;
        m->route = r->id;
        m->public = r->public;
        if (strcmp(r->method, method) == 0) {
            m->kind = FB_HTTP_MATCH_OK;
            m->takes_body = r->takes_body;
            m->allow[0] = '\0';
            return;
        }
        m->kind = FB_HTTP_MATCH_NO_METHOD;
        add_allow(m, r->method);
    }
}
