/* fnbox's MCP server (Model Context Protocol, revisions 2025-11-25, 2025-06-18, 2025-03-26) over the C API
 * of include/fnbox.h: the protocol (server.c) between a transport (stdio.c: `fnbox mcp`) and the tools
 * (tools.c). docs/internals/mcp.md. */
#ifndef FB_MCP_H
#define FB_MCP_H
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "fnbox.h"

#define FB_MCP_DEFAULT_OUTPUT_BYTES 32768u        /* per stream, sent to the model */
#define FB_MCP_MAX_OUTPUT_BYTES (16u << 20)
#define FB_MCP_DEFAULT_TIMEOUT_S 30.0             /* below common clients' 60 s request limit */
#define FB_MCP_DEFAULT_MAX_TIMEOUT_S 300.0
#define FB_MCP_MAX_TIMEOUT_S 3600.0
#define FB_MCP_DEFAULT_READ_BYTES (1u << 20)      /* read_file's largest file */
#define FB_MCP_MAX_RUNS 8                         /* tool calls running at once per client */
#define FB_MCP_MAX_MESSAGE (384u << 20)           /* one message: a 256 MiB file, base64, and some */
#define FB_MCP_HEARTBEAT_S 4.0                    /* progress at least this often during a run (spec: 5 s) */

typedef struct fb_mcp_config {
    char *session_options;  /* JSON text for fnbox_session_open (owned; NULL: the defaults) */
    size_t session_options_len;
    bool network;           /* the session's permissions allow some network (openWorldHint) */
    char *environment;      /* session.environment: the named environment of the session and of run_code's
                               and call_function's sandboxes (owned; NULL: the host's) */
    char *dependencies;     /* session.dependencies as JSON text: the session's and run_code's and
                               call_function's sandboxes' packages (owned; NULL: none) */
    bool allow_dependencies; /* allowDependencies: run_code and run_in_kernel take a `dependencies` argument */
    unsigned disabled;      /* bit i: the i-th tool of tools.c's table is off */
    size_t output_bytes;    /* per stream sent to the model; head and tail kept */
    size_t read_bytes;
    double timeout_s, max_timeout_s;
} fb_mcp_config;

/* The defaults: every tool, no network, no mounts, no host environment (a session's own defaults). */
void fb_mcp_config_init(fb_mcp_config *c);
/* `fnbox mcp --config FILE`'s JSON: {session?, tools?, outputBytes?, readBytes?, timeout?, maxTimeout?}. 0, or -1
 * with a message naming the field in err (err_cap bytes). */
int fb_mcp_config_parse(const char *text, size_t len, fb_mcp_config *c, char *err, size_t err_cap);
void fb_mcp_config_free(fb_mcp_config *c);
/* session.environment against the environments loaded (fnbox_environments_load, which may come after the
 * configuration on the command line): 0, or -1 with "session.environment: unknown environment ..." in err. */
int fb_mcp_config_check_environment(const fb_mcp_config *c, char *err, size_t err_cap);

typedef struct fb_mcp_server fb_mcp_server;
/* Where the messages a client's message causes go: its answer (final: true) and, before it, the progress
 * of its run. stdio sends everything to stdout; HTTP to the response of the POST that carried it. send
 * writes one message line (len bytes, '\n' included) and is called by one thread at a time (nonzero: the
 * client is gone); release (NULL: none) is called once nothing more will be sent to this sink, answered or
 * not (a cancelled run is not answered). */
typedef struct fb_mcp_sink {
    int (*send)(void *ctx, const char *line, size_t len, bool final);
    void (*release)(void *ctx);
    void *ctx;
} fb_mcp_sink;

/* A sink's send that sends nothing (for what is never answered). */
int fb_mcp_send_nowhere(void *ctx, const char *line, size_t len, bool final);

/* A server for one client connection (one session, created on first use). The config is copied; sink
 * takes what no message caused (e.g. a refusal of an oversized line) and is never released. engine (NULL:
 * none) is the warm pools call_function runs through: borrowed, it must outlive the server (no run is left
 * once fb_mcp_server_free returns). NULL on out of memory. */
fb_mcp_server *fb_mcp_server_new(const fb_mcp_config *cfg, fnbox_engine *engine, const fb_mcp_sink *sink);
/* One message from the client (without its newline). Answers what needs an answer through sink (released
 * at once, or when the run of a tools/call ends, on the run's thread). */
void fb_mcp_server_handle(fb_mcp_server *srv, const char *text, size_t len, const fb_mcp_sink *sink);
/* Sends msg (taken) to the server's own sink, between whole messages of the runs. */
void fb_mcp_server_send(fb_mcp_server *srv, json_t *msg);
/* Cancels the run of the request with this id, as notifications/cancelled does (no answer is sent). */
void fb_mcp_server_cancel(fb_mcp_server *srv, const json_t *id);
/* Tool calls running now. */
unsigned fb_mcp_server_running(fb_mcp_server *srv);
/* Cancels every run (each is still answered, its result terminated) and refuses new ones, without waiting
 * (the connection or the server is ending). */
void fb_mcp_server_stop(fb_mcp_server *srv);
/* Ends the connection: cancels every run, waits for them, closes the session. Then frees. */
void fb_mcp_server_free(fb_mcp_server *srv);

/* stdio.c: serves one client on fds in/out until EOF on in or stop_fd readable, call_function through engine
 * when there is one (borrowed, as for fb_mcp_server_new). 0, or -1 on a read error. */
int fb_mcp_stdio_run(const fb_mcp_config *cfg, fnbox_engine *engine, int in, int out, int stop_fd);

/* ---- between server.c and tools.c ---- */
typedef struct fb_mcp_call {
    fb_mcp_server *srv;
    const fb_mcp_config *cfg;
    fnbox_engine *engine;      /* warm pools for call_function (NULL: fnbox_call); the server's, borrowed */
    int cancel_fd;             /* readable once the client cancelled, or the connection ends */
    fnbox_output_fn output;    /* the run's output as progress (NULL: no progressToken) */
    void *output_ctx;
} fb_mcp_call;
/* The client's session, opened on first use; NULL with *error (malloc'd) when it cannot be. */
fnbox_session *fb_mcp_session(fb_mcp_server *srv, char **error);
/* The same for a tool that needs the packages deps ({"python": [...], ...}, borrowed; NULL: none) in it:
 * a session not yet open opens with them added to the configuration's; an open one must already have each
 * entry (its layers are placed when its sandbox starts), else NULL with *error saying so. */
fnbox_session *fb_mcp_session_with(fb_mcp_server *srv, const json_t *deps, char **error);

/* tools.c */
typedef json_t *(*fb_mcp_tool_fn)(const fb_mcp_call *c, json_t *args);
typedef struct fb_mcp_tool {
    const char *name;
    const char *title;
    const char *description;
    const char *input_schema;  /* JSON text */
    const char *output_schema; /* JSON text; "" for a run's (tools.c's RUN_OUTPUT) */
    bool read_only, destructive, idempotent, network; /* network: open world when the config allows it */
    fb_mcp_tool_fn run;        /* a CallToolResult, or NULL when out of memory */
} fb_mcp_tool;
/* The tool named name when enabled in cfg, else NULL. */
const fb_mcp_tool *fb_mcp_tool_find(const fb_mcp_config *cfg, const char *name);
/* Index of name in the table, or -1. */
int fb_mcp_tool_index(const char *name);
/* tools/list's result for cfg. NULL on out of memory. */
json_t *fb_mcp_tools_list(const fb_mcp_config *cfg);

/* cap.c: at most cap bytes of s for the model: s itself when it fits, else its head and its tail around a
 * line saying how much was left out, never cut inside a UTF-8 character. *cut says which. Allocated. */
char *fb_mcp_cap(const char *s, size_t len, size_t cap, bool *cut);

#endif
