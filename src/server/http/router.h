/* The routes of `fnbox serve`: a method and a path to a route, or why there is none (404, or 405 with the
 * methods the path has). Pure: no I/O, no libmicrohttpd. */
#ifndef FB_HTTP_ROUTER_H
#define FB_HTTP_ROUTER_H
#include <stdbool.h>

typedef enum fb_http_route_id {
    FB_HTTP_ROUTE_NONE = 0, /* no such path */
    FB_HTTP_ROUTE_HEALTH,   /* GET /v1/health */
    FB_HTTP_ROUTE_CALL,     /* POST /v1/call */
    FB_HTTP_ROUTE_METRICS,  /* GET /metrics */
    FB_HTTP_ROUTE_EXECUTE,  /* POST /v1/execute */
    FB_HTTP_ROUTE_PISTON_RUNTIMES, /* GET /api/v2/runtimes (Piston) */
    FB_HTTP_ROUTE_PISTON_EXECUTE,  /* POST /api/v2/execute (Piston) */
    FB_HTTP_ROUTE_SESSIONS,        /* POST /v1/sessions */
    FB_HTTP_ROUTE_SESSION,         /* GET, DELETE /v1/sessions/{id} */
    FB_HTTP_ROUTE_SESSION_COMMANDS, /* POST /v1/sessions/{id}/commands */
    FB_HTTP_ROUTE_SESSION_CODE,    /* POST /v1/sessions/{id}/code */
    FB_HTTP_ROUTE_SESSION_CALL,    /* POST /v1/sessions/{id}/call */
    FB_HTTP_ROUTE_SESSION_FILES,   /* GET, PUT, DELETE /v1/sessions/{id}/files?path=P */
    FB_HTTP_ROUTE_SESSION_LIST,    /* GET /v1/sessions/{id}/files/list?path=P */
    FB_HTTP_ROUTE_SESSION_SYNC,    /* POST /v1/sessions/{id}/sync */
    FB_HTTP_ROUTE_MCP,             /* POST, DELETE /mcp (MCP's streamable HTTP) */
    FB_HTTP_ROUTE_SYNC,            /* POST /v1/sync (fnbox sync) */
    FB_HTTP_ROUTE_SESSION_KERNEL_EXEC, /* POST /v1/sessions/{id}/kernels/{lang}/execute */
    FB_HTTP_ROUTE_SESSION_KERNEL,  /* DELETE /v1/sessions/{id}/kernels/{lang} (restart) */
    FB_HTTP_ROUTE_OPENAPI,         /* GET /v1/openapi.json (docs/openapi.yaml) */
    FB_HTTP_ROUTE_COUNT
} fb_http_route_id;

typedef enum fb_http_match_kind {
    FB_HTTP_MATCH_OK,        /* route and method found */
    FB_HTTP_MATCH_NO_PATH,   /* 404 */
    FB_HTTP_MATCH_NO_METHOD, /* 405: the path exists with the methods in `allow` */
} fb_http_match_kind;

#define FB_HTTP_ALLOW_MAX 64
#define FB_HTTP_ID_MAX 64 /* an {id} segment longer than this matches no route */
#define FB_HTTP_LANG_MAX 32 /* nor does a {lang} segment longer than this */

typedef struct fb_http_match {
    fb_http_match_kind kind;
    fb_http_route_id route; /* the path's route (also for NO_METHOD, so that metrics name it); NONE for
                               NO_PATH */
    bool public;            /* the path needs no bearer token (GET /v1/health, for probes; the API's document) */
    bool takes_body;        /* the route reads a request body */
    char allow[FB_HTTP_ALLOW_MAX]; /* NO_METHOD: "GET, HEAD", the Allow header's value */
    char id[FB_HTTP_ID_MAX + 1];   /* the path's {id} segment, when its pattern has one */
    char lang[FB_HTTP_LANG_MAX + 1]; /* the path's {lang} segment (a kernel's language), when it has one */
} fb_http_match;

/* Exact, case-sensitive match of the path (no query string: libmicrohttpd strips it) and the method. A
 * pattern's {id} segment matches any one non-empty segment of at most FB_HTTP_ID_MAX characters, its
 * {lang} segment one of at most FB_HTTP_LANG_MAX. */
void fb_http_route_match(const char *method, const char *path, fb_http_match *m);
/* The route's path as metrics label it ("/v1/call", "/v1/sessions/{id}"), "unmatched" for FB_HTTP_ROUTE_NONE. */
const char *fb_http_route_name(fb_http_route_id id);

#endif
