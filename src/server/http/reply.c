/* Answers: the HTTP status of an error kind or of fnbox_call's return code, and the responses. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "fnbox.h"
#include "server/http/internal.h"
#include "server/http/log.h"

unsigned fb_http_status_of_kind(fb_errkind kind)
{
    /* The server's own refusals have HTTP statuses more precise than their family's. */
    switch (kind) {
    case FB_ERR_NOT_FOUND:
        return MHD_HTTP_NOT_FOUND;
    case FB_ERR_METHOD_NOT_ALLOWED:
        return MHD_HTTP_METHOD_NOT_ALLOWED;
    case FB_ERR_UNAUTHORIZED:
        return MHD_HTTP_UNAUTHORIZED;
    case FB_ERR_PAYLOAD_TOO_LARGE:
        return MHD_HTTP_CONTENT_TOO_LARGE;
    case FB_ERR_SESSION_DEAD:
        return MHD_HTTP_GONE; /* it existed and will not come back: open a new one */
    default:
        break;
    }
    /* Everything else by who is to act on it (docs/internals/error-model.md). */
    switch (fb_errkind_family(kind)) {
    case FB_ERRFAM_REQUEST:
        return MHD_HTTP_BAD_REQUEST;
    case FB_ERRFAM_DENIED:
        return MHD_HTTP_FORBIDDEN;
    case FB_ERRFAM_CALL:
        return MHD_HTTP_OK; /* an execution outcome: the result says what happened */
    case FB_ERRFAM_SETUP:
        return MHD_HTTP_SERVICE_UNAVAILABLE;
    default:
        return MHD_HTTP_INTERNAL_SERVER_ERROR;
    }
}

unsigned fb_http_status_of_call(int rc)
{
    /* fnbox_call's codes follow the families too (fnbox.h): one kind of each stands for its family. */
    switch (rc) {
    case FNBOX_OK:
        return MHD_HTTP_OK;
    case FNBOX_INVALID_REQUEST:
        return fb_http_status_of_kind(FB_ERR_INVALID_REQUEST);
    case FNBOX_SANDBOX_FAILED:
        return fb_http_status_of_kind(FB_ERR_SANDBOX_SETUP);
    case FNBOX_NOT_FOUND:
        return fb_http_status_of_kind(FB_ERR_NOT_FOUND);
    case FNBOX_DENIED:
        return fb_http_status_of_kind(FB_ERR_PERMISSION_DENIED);
    case FNBOX_SESSION_DEAD:
        return fb_http_status_of_kind(FB_ERR_SESSION_DEAD);
    default:
        return fb_http_status_of_kind(FB_ERR_OUT_OF_MEMORY);
    }
}

static bool add_header(struct MHD_Response *r, const char *name, const char *value)
{
    return MHD_add_response_header(r, name, value) == MHD_YES;
}

fb_http_reply fb_http_reply_json(unsigned status, char *text, size_t len, void (*free_fn)(void *), bool newline)
{
    static const char k_newline[] = "\n";
    const struct MHD_IoVec iov[2] = {{text, len}, {k_newline, 1}};
    /* The response owns text from here on, also when it could not be made. */
    struct MHD_Response *r = MHD_create_response_from_iovec(iov, newline ? 2 : 1, free_fn, text);
    if (!r) {
        free_fn(text);
        return (fb_http_reply){0, NULL, 0};
    }
    if (!add_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json")) {
        MHD_destroy_response(r);
        return (fb_http_reply){0, NULL, 0};
    }
    return (fb_http_reply){status, r, len + (newline ? 1 : 0)};
}

fb_http_reply fb_http_reply_text(unsigned status, const char *content_type, char *text, size_t len)
{
    struct MHD_Response *r = MHD_create_response_from_buffer_with_free_callback(len, text, free);
    if (!r) {
        free(text);
        return (fb_http_reply){0, NULL, 0};
    }
    if (!add_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, content_type)) {
        MHD_destroy_response(r);
        return (fb_http_reply){0, NULL, 0};
    }
    return (fb_http_reply){status, r, len};
}

fb_http_reply fb_http_reply_error(const fb_error *err)
{
    unsigned status = fb_http_status_of_kind(err->kind);
    json_t *doc = json_pack("{s:{s:s, s:o}}", "error", "type", fb_error_type(err), "message",
                            fb_http_log_string(err->message, sizeof err->message));
    char *text = doc ? json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(doc);
    if (!text)
        return (fb_http_reply){0, NULL, 0};
    fb_http_reply rep = fb_http_reply_json(status, text, strlen(text), free, true);
    bool ok = rep.resp != NULL;
    if (ok && err->kind == FB_ERR_OVERLOADED)
        ok = add_header(rep.resp, MHD_HTTP_HEADER_RETRY_AFTER, FB_HTTP_RETRY_AFTER);
    if (ok && err->kind == FB_ERR_UNAUTHORIZED)
        ok = add_header(rep.resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer realm=\"fnbox\"");
    if (!ok && rep.resp) {
        MHD_destroy_response(rep.resp);
        rep = (fb_http_reply){0, NULL, 0};
    }
    return rep;
}
