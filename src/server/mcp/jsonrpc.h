/* JSON-RPC 2.0 messages as MCP carries them (https://www.jsonrpc.org/specification): one message in,
 * classified; replies, errors and notifications out. Pure: no I/O, no threads. MCP refuses batches (its
 * 2025-06-18 revision removed them), so a JSON array is answered with one error, never silence. */
#ifndef FB_MCP_JSONRPC_H
#define FB_MCP_JSONRPC_H
#include <jansson.h>
#include <stddef.h>

enum {
    FB_RPC_PARSE_ERROR = -32700,
    FB_RPC_INVALID_REQUEST = -32600,
    FB_RPC_METHOD_NOT_FOUND = -32601,
    FB_RPC_INVALID_PARAMS = -32602,
    FB_RPC_INTERNAL_ERROR = -32603,
};

typedef enum {
    FB_RPC_REQUEST,      /* method + id: answer exactly once */
    FB_RPC_NOTIFICATION, /* method, no id: never answered */
    FB_RPC_RESPONSE,     /* result or error + id: a reply to something we sent */
    FB_RPC_INVALID,      /* answer with fb_rpc_error(msg.id, msg.error_code, msg.error) */
} fb_rpc_kind;

typedef struct fb_rpc_msg {
    fb_rpc_kind kind;
    json_t *root;        /* the parsed document (owned), NULL when it did not parse */
    json_t *id;          /* borrowed from root: a string or an integer; NULL when none could be read */
    const char *method;  /* borrowed from root (requests and notifications) */
    json_t *params;      /* borrowed: an object, or NULL when absent */
    int error_code;      /* FB_RPC_INVALID: the code to answer with */
    char error[256];     /* FB_RPC_INVALID: what was wrong, naming the member */
} fb_rpc_msg;

/* Classifies one message of len bytes. Always fills *out (free it with fb_rpc_msg_free), whatever it is. */
void fb_rpc_parse(const char *text, size_t len, fb_rpc_msg *out);
void fb_rpc_msg_free(fb_rpc_msg *m);

/* {"jsonrpc":"2.0","id":id,"result":result}; result is taken (stolen), id copied. NULL on out of memory. */
json_t *fb_rpc_result(const json_t *id, json_t *result);
/* {"jsonrpc":"2.0","id":id or null,"error":{"code","message"}}. NULL on out of memory. */
json_t *fb_rpc_error(const json_t *id, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* {"jsonrpc":"2.0","method":method,"params":params}; params is taken. NULL on out of memory. */
json_t *fb_rpc_notification(const char *method, json_t *params);
/* One message as one line of text (compact, no newline inside, '\n' appended), for the caller to free;
 * releases msg. NULL on out of memory (msg NULL included). */
char *fb_rpc_line(json_t *msg, size_t *len);

#endif
