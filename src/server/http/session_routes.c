/* The session routes (/v1/sessions...): open, info, close, commands and code, files. A session is found by
 * its id and the caller's token (sessions.h): anything else is 404, the same as an id that never existed.
 * Commands and code are executions (a queue place and a run slot, cancelled when the client hangs up, like
 * /v1/execute); file operations and info are quick and take none. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "fnbox.h"
#include "server/http/internal.h"
#include "server/http/media.h"
#include "util/json.h"

#define COMMANDS_TAKES "POST /v1/sessions/{id}/commands takes {command, cwd?, env?, timeout?, stdin?}"
#define CODE_TAKES "POST /v1/sessions/{id}/code takes {code, language, cwd?, env?, timeout?, stdin?}"
#define CALL_TAKES "POST /v1/sessions/{id}/call takes a FunctionCallRequest JSON"
#define KERNEL_TAKES "POST /v1/sessions/{id}/kernels/{language}/execute takes {code, timeout?}"

static fb_http_reply not_found(const fb_http_exchange *x)
{
    fb_error err = {0};
    fb_set_error(&err, FB_ERR_NOT_FOUND, 0, "session '%.64s': no such session (closed, expired, or never opened)",
                 x->match.id);
    return fb_http_reply_error(&err);
}

/* No open session by that id: 410 when it is a dead session's tombstone (sessions.h), else 404. */
static fb_http_reply missing(const fb_http_exchange *x)
{
    char reason[96];
    if (!fb_http_sessions_dead(&x->srv->sessions, x->match.id, x->owner, reason, sizeof reason, NULL))
        return not_found(x);
    fb_error err = {0};
    fb_set_error(&err, FB_ERR_SESSION_DEAD, 0,
                 "session '%.64s': its sandbox died (%s): its processes, kernels and files are gone; open a new "
                 "session", x->match.id, reason);
    return fb_http_reply_error(&err);
}

/* An API error JSON (fnbox_session_*) as the answer, its status from the return code. */
static fb_http_reply api_error(int rc, char *error)
{
    if (!error) {
        fb_error err = {0};
        fb_set_error(&err, FB_ERR_OUT_OF_MEMORY, 0, "no answer could be made");
        return fb_http_reply_error(&err);
    }
    return fb_http_reply_json(fb_http_status_of_call(rc), error, strlen(error), fnbox_free, true);
}

static fb_http_reply empty(unsigned status)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    return (fb_http_reply){r ? status : 0, r, 0};
}

/* ---- POST /v1/sessions, GET / DELETE /v1/sessions/{id} ---- */

int fb_http_sessions_begin(fb_http_exchange *x, fb_error *err)
{
    const char *ct = fb_http_header(x, MHD_HTTP_HEADER_CONTENT_TYPE);
    bool sync = x->match.route == FB_HTTP_ROUTE_SESSION_SYNC;
    if (x->has_body && ct && strncasecmp(ct, "application/json", 16) != 0)
        return fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, "Content-Type: '%.100s' is not application/json: %s", ct,
                            sync ? "POST /v1/sessions/{id}/sync takes {onError?} (or nothing)"
                                 : "POST /v1/sessions takes the session's options JSON (or nothing)");
    return 0;
}

fb_http_reply fb_http_handle_sessions(fb_http_exchange *x)
{
    fb_error err = {0};
    char id[FB_HTTP_SESSION_ID_LEN + 1], *info = NULL, *error = NULL;
    int rc = fb_http_sessions_open(&x->srv->sessions, x->owner, x->body.data, x->body.len, id, &info, &error, &err);
    fb_buf_free(&x->body);
    if (rc != FNBOX_OK)
        return error ? api_error(rc, error) : fb_http_reply_error(&err);
    fb_http_reply rep = fb_http_reply_json(MHD_HTTP_CREATED, info, strlen(info), free, true);
    char location[64];
    snprintf(location, sizeof location, "/v1/sessions/%s", id);
    if (rep.resp)
        (void)MHD_add_response_header(rep.resp, MHD_HTTP_HEADER_LOCATION, location);
    return rep;
}

static fb_http_reply info(fb_http_exchange *x, fb_http_session *e)
{
    char *text = NULL;
    if (fnbox_session_info(fb_http_session_api(e), &text, NULL) < 0)
        return api_error(FNBOX_NO_RESULT, NULL);
    json_t *doc = json_loads(text, 0, NULL), *full = json_pack("{s:s}", "id", x->match.id);
    fnbox_free(text);
    char *out = doc && full && json_object_update(full, doc) == 0
                    ? fb_json_dumps_shortest(full, JSON_COMPACT | JSON_PRESERVE_ORDER)
                    : NULL;
    json_decref(doc);
    json_decref(full);
    return out ? fb_http_reply_json(MHD_HTTP_OK, out, strlen(out), free, true) : api_error(FNBOX_NO_RESULT, NULL);
}

fb_http_reply fb_http_handle_session(fb_http_exchange *x)
{
    if (strcmp(x->method, "DELETE") == 0) { /* a dead session's tombstone is forgotten: closing it succeeds */
        if (!fb_http_sessions_close(&x->srv->sessions, x->match.id, x->owner) &&
            !fb_http_sessions_forget(&x->srv->sessions, x->match.id, x->owner))
            return not_found(x);
        return empty(MHD_HTTP_NO_CONTENT);
    }
    fb_http_session *e = fb_http_sessions_get(&x->srv->sessions, x->match.id, x->owner);
    char reason[96], *last = NULL;
    if (!e && fb_http_sessions_dead(&x->srv->sessions, x->match.id, x->owner, reason, sizeof reason, &last) && last)
        return fb_http_reply_json(MHD_HTTP_OK, last, strlen(last), free, true); /* state "dead", reason */
    if (!e)
        return not_found(x);
    fb_http_reply rep = info(x, e);
    fb_http_sessions_put(&x->srv->sessions, e);
    return rep;
}

/* POST /v1/sessions/{id}/sync: the mounts' changes so far to the host. Quick as file operations are (no run
 * slot): it writes what the session's mounts hold, at most their view's size. */
fb_http_reply fb_http_handle_session_sync(fb_http_exchange *x)
{
    fb_http_session *e = fb_http_sessions_get(&x->srv->sessions, x->match.id, x->owner);
    if (!e) {
        fb_buf_free(&x->body);
        return missing(x);
    }
    char *report = NULL, *error = NULL;
    size_t len = 0;
    int rc = fnbox_session_sync(fb_http_session_api(e), x->body.data, x->body.len, &report, &len, &error, NULL);
    fb_http_sessions_put(&x->srv->sessions, e);
    fb_buf_free(&x->body);
    return rc == FNBOX_OK ? fb_http_reply_json(MHD_HTTP_OK, report, len, fnbox_free, true) : api_error(rc, error);
}

/* ---- commands and code ---- */

static const char *takes(const fb_http_exchange *x)
{
    switch (x->match.route) {
    case FB_HTTP_ROUTE_SESSION_CODE: return CODE_TAKES;
    case FB_HTTP_ROUTE_SESSION_CALL: return CALL_TAKES;
    case FB_HTTP_ROUTE_SESSION_KERNEL_EXEC: return KERNEL_TAKES;
    default: return COMMANDS_TAKES;
    }
}

int fb_http_session_run_begin(fb_http_exchange *x, fb_error *err)
{
    return fb_http_run_begin(x, takes(x), err);
}

/* The route says which kind of request the body is: a command to /commands, code to /code. */
static int check_kind(const fb_http_exchange *x, fb_error *err)
{
    /* a FunctionCallRequest, a kernel's {code}: their decoders say what is wrong */
    if (x->match.route == FB_HTTP_ROUTE_SESSION_CALL || x->match.route == FB_HTTP_ROUTE_SESSION_KERNEL_EXEC)
        return 0;
    json_t *doc = json_loadb(x->body.data, x->body.len, 0, NULL);
    bool code = x->match.route == FB_HTTP_ROUTE_SESSION_CODE;
    int rc = 0;
    if (json_is_object(doc) && code && !json_object_get(doc, "code"))
        rc = fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, "code: missing: %s", CODE_TAKES);
    else if (json_is_object(doc) && !code && !json_object_get(doc, "command"))
        rc = fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, "command: missing: %s", COMMANDS_TAKES);
    json_decref(doc); /* malformed JSON: the session's own decoder names the problem */
    return rc;
}

/* The session's reference, given back when its run is over (a streamed run outlives the handler). */
typedef struct held {
    fb_http_sessions *table;
    fb_http_session *e;
} held;

static void release(void *ctx)
{
    held *h = ctx;
    fb_http_sessions_put(h->table, h->e);
    free(h);
}

static fb_http_reply run(fb_http_exchange *x)
{
    fb_error err = {0};
    if (check_kind(x, &err) < 0)
        return fb_http_reply_error(&err);
    held *h = malloc(sizeof *h);
    if (!h) {
        fb_set_error(&err, FB_ERR_OUT_OF_MEMORY, 0, "session");
        return fb_http_reply_error(&err);
    }
    h->table = &x->srv->sessions;
    h->e = fb_http_sessions_get(h->table, x->match.id, x->owner);
    if (!h->e) {
        free(h);
        return missing(x);
    }
    if (x->match.route == FB_HTTP_ROUTE_SESSION_KERNEL_EXEC)
        return fb_http_run_reply_kernel(x, fb_http_session_api(h->e), x->match.lang, release, h);
    return fb_http_run_reply_in(x, fb_http_session_api(h->e), x->match.route == FB_HTTP_ROUTE_SESSION_CALL, release, h);
}

/* DELETE /v1/sessions/{id}/kernels/{lang}: the kernel restarted (killed now; the next execute starts it). */
fb_http_reply fb_http_handle_session_kernel(fb_http_exchange *x)
{
    fb_http_session *e = fb_http_sessions_get(&x->srv->sessions, x->match.id, x->owner);
    if (!e)
        return missing(x);
    char *error = NULL;
    int rc = fnbox_session_kernel_restart(fb_http_session_api(e), x->match.lang, &error, NULL);
    fb_http_sessions_put(&x->srv->sessions, e);
    return rc == FNBOX_OK ? empty(MHD_HTTP_NO_CONTENT) : api_error(rc, error);
}

fb_http_reply fb_http_handle_session_run(fb_http_exchange *x)
{
    return fb_http_run_admitted(x, takes(x), run);
}

/* ---- files ---- */

/* The `path` query argument (URL-decoded by libmicrohttpd), with its length: it may hold any byte. A list
 * without one (or with an empty one) lists the workdir, as MCP's list_files does: "." is relative to it. */
static const char *path_arg(const fb_http_exchange *x, size_t *len, fb_error *err)
{
    const char *v = NULL;
    bool given = MHD_lookup_connection_value_n(x->conn, MHD_GET_ARGUMENT_KIND, "path", 4, &v, len) == MHD_YES && v;
    if (x->match.route == FB_HTTP_ROUTE_SESSION_LIST && (!given || *len == 0)) {
        *len = 1;
        return ".";
    }
    if (!given) {
        fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, "path: missing: add ?path=<a path in the session>");
        return NULL;
    }
    return v;
}

/* The file's type by its name, and what keeps a browser from running it in the server's origin: these
 * are untrusted bytes. nosniff: the type is not guessed from the content (text/plain stays text);
 * attachment: a browser pointed at the URL saves the file rather than showing it; the CSP's sandbox: were
 * it shown all the same, it has no script and an origin of its own (no access to the API). */
static void add_file_headers(struct MHD_Response *r, const fb_media_types *media, const char *path, size_t plen,
                             const char *data, size_t len)
{
    fb_http_file_headers h;
    fb_http_file_headers_of(media, path, plen, data, len, &h);
    (void)MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, h.type);
    (void)MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    (void)MHD_add_response_header(r, "Content-Disposition", h.disposition);
    (void)MHD_add_response_header(r, "Content-Security-Policy", "default-src 'none'; sandbox");
}

static fb_http_reply file_op(fb_http_exchange *x, fnbox_session *s, const char *path, size_t plen)
{
    char *out = NULL, *error = NULL;
    size_t out_len = 0;
    int rc;
    if (x->match.route == FB_HTTP_ROUTE_SESSION_LIST) {
        rc = fnbox_session_list(s, path, plen, &out, &out_len, &error, NULL);
        return rc == FNBOX_OK ? fb_http_reply_json(MHD_HTTP_OK, out, out_len, fnbox_free, true) : api_error(rc, error);
    }
    if (strcmp(x->method, "PUT") == 0)
        rc = fnbox_session_write(s, path, plen, x->body.data, x->body.len, &error, NULL);
    else if (strcmp(x->method, "DELETE") == 0)
        rc = fnbox_session_remove(s, path, plen, &error, NULL);
    else
        rc = fnbox_session_read(s, path, plen, &out, &out_len, &error, NULL);
    fb_buf_free(&x->body);
    if (rc != FNBOX_OK)
        return api_error(rc, error);
    if (!out)
        return empty(MHD_HTTP_NO_CONTENT);
    struct MHD_Response *r = MHD_create_response_from_buffer_with_free_callback(out_len, out, fnbox_free);
    if (!r) {
        fnbox_free(out);
        return (fb_http_reply){0, NULL, 0};
    }
    add_file_headers(r, x->srv->media, path, plen, out, out_len);
    return (fb_http_reply){MHD_HTTP_OK, r, out_len};
}

fb_http_reply fb_http_handle_session_files(fb_http_exchange *x)
{
    fb_error err = {0};
    size_t plen = 0;
    const char *path = path_arg(x, &plen, &err);
    if (!path)
        return fb_http_reply_error(&err);
    fb_http_session *e = fb_http_sessions_get(&x->srv->sessions, x->match.id, x->owner);
    if (!e)
        return missing(x);
    fb_http_reply rep = file_op(x, fb_http_session_api(e), path, plen);
    fb_http_sessions_put(&x->srv->sessions, e);
    return rep;
}
