/* JSON-RPC 2.0 message classification and construction (see jsonrpc.h). */
#include "server/mcp/jsonrpc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/json.h"

static void invalid(fb_rpc_msg *m, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void invalid(fb_rpc_msg *m, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->error, sizeof m->error, fmt, ap);
    va_end(ap);
    m->kind = FB_RPC_INVALID;
    m->error_code = code;
}

/* An id is a string or an integer (MCP: never null; JSON-RPC discourages fractions). */
static int read_id(fb_rpc_msg *m, json_t *id)
{
    if (json_is_string(id) || json_is_integer(id)) {
        m->id = id;
        return 0;
    }
    invalid(m, FB_RPC_INVALID_REQUEST, "id: must be a string or an integer, got %s", fb_json_type_name(id));
    return -1;
}

static void classify(fb_rpc_msg *m)
{
    json_t *root = m->root, *v = json_object_get(root, "jsonrpc");
    json_t *id = json_object_get(root, "id"), *method = json_object_get(root, "method");
    json_t *params = json_object_get(root, "params");
    if (!json_is_string(v) || strcmp(json_string_value(v), "2.0") != 0) {
        if (json_is_string(id) || json_is_integer(id))
            m->id = id; /* answerable: the error names its request */
        invalid(m, FB_RPC_INVALID_REQUEST, "jsonrpc: must be \"2.0\"");
    } else if (id && read_id(m, id) < 0) {
        /* said by read_id */
    } else if (!method && id && (json_object_get(root, "result") || json_object_get(root, "error"))) {
        m->kind = FB_RPC_RESPONSE;
    } else if (!method) {
        invalid(m, FB_RPC_INVALID_REQUEST, "method: missing (a request needs a method)");
    } else if (!json_is_string(method)) {
        invalid(m, FB_RPC_INVALID_REQUEST, "method: must be a string, got %s", fb_json_type_name(method));
    } else if (params && !json_is_null(params) && !json_is_object(params)) {
        invalid(m, FB_RPC_INVALID_PARAMS, "params: must be an object, got %s", fb_json_type_name(params));
    } else {
        m->method = json_string_value(method);
        m->params = json_is_object(params) ? params : NULL;
        m->kind = id ? FB_RPC_REQUEST : FB_RPC_NOTIFICATION;
    }
}

void fb_rpc_parse(const char *text, size_t len, fb_rpc_msg *out)
{
    memset(out, 0, sizeof *out);
    json_error_t jerr;
    out->root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!out->root)
        invalid(out, FB_RPC_PARSE_ERROR, "parse error at line %d, column %d: %s", jerr.line, jerr.column,
                jerr.text);
    else if (json_is_array(out->root))
        invalid(out, FB_RPC_INVALID_REQUEST,
                "batch: JSON-RPC batches are not supported (MCP 2025-06-18 and later): send one message a line");
    else if (!json_is_object(out->root))
        invalid(out, FB_RPC_INVALID_REQUEST, "message: must be a JSON object, got %s", fb_json_type_name(out->root));
    else
        classify(out);
}

void fb_rpc_msg_free(fb_rpc_msg *m)
{
    json_decref(m->root);
    memset(m, 0, sizeof *m);
}

static json_t *envelope(const json_t *id)
{
    json_t *o = json_object();
    if (o && (json_object_set_new(o, "jsonrpc", json_string("2.0")) < 0 ||
              json_object_set_new(o, "id", id ? json_deep_copy(id) : json_null()) < 0)) {
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *fb_rpc_result(const json_t *id, json_t *result)
{
    json_t *o = result ? envelope(id) : NULL;
    if (!o || json_object_set_new(o, "result", result) < 0) {
        if (!o)
            json_decref(result);
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *fb_rpc_error(const json_t *id, int code, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    json_t *o = envelope(id);
    if (!o || json_object_set_new(o, "error", json_pack("{s:i, s:s}", "code", code, "message", msg)) < 0) {
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *fb_rpc_notification(const char *method, json_t *params)
{
    json_t *o = json_pack("{s:s, s:s}", "jsonrpc", "2.0", "method", method);
    if (!o || (params && json_object_set_new(o, "params", params) < 0)) {
        if (!o)
            json_decref(params);
        json_decref(o);
        return NULL;
    }
    return o;
}

char *fb_rpc_line(json_t *msg, size_t *len)
{
    /* Reals as they read (0.1, not jansson's 0.10000000000000001): a result parsed from fnbox's text is
     * written back as that text. */
    char *text = msg ? fb_json_dumps_shortest(msg, JSON_COMPACT) : NULL;
    json_decref(msg);
    if (!text)
        return NULL;
    size_t n = strlen(text);
    char *line = realloc(text, n + 2);
    if (!line) {
        free(text);
        return NULL;
    }
    line[n] = '\n';
    line[n + 1] = '\0';
    *len = n + 1;
    return line;
}
