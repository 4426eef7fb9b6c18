/* The MCP protocol for one client connection: lifecycle (initialize, version negotiation), ping,
 * tools/list, tools/call (each on a thread of its own, so that ping and notifications/cancelled are read
 * while it runs), progress, logging/setLevel; any other method gets a JSON-RPC error at once. The session
 * the tools share is opened on first use and closed with the connection. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "server/mcp/jsonrpc.h"
#include "server/mcp/mcp.h"

static const char *const k_versions[] = {"2025-11-25", "2025-06-18", "2025-03-26"}; /* newest first */
static const char *const k_levels[] = {"debug", "info", "notice", "warning", "error", "critical", "alert",
                                       "emergency"};

typedef struct run {
    struct run *next;
    fb_mcp_server *srv;
    json_t *id;         /* the request's (owned copy) */
    json_t *token;      /* _meta.progressToken (owned copy), or NULL */
    json_t *args;       /* owned */
    const fb_mcp_tool *tool;
    fb_mcp_sink sink;   /* where its progress and answer go */
    int cancel_fd;      /* eventfd: written by notifications/cancelled or the connection's end */
    bool cancelled;     /* by the client: no answer is sent */
    double progress;    /* the last progress value sent (increasing) */
    double last_sent;   /* CLOCK_MONOTONIC seconds of the last progress (or the start) */
    size_t sent_bytes;  /* output carried by progress so far (at most output_bytes) */
} run;

struct fb_mcp_server {
    fb_mcp_config cfg;      /* copy; session_options and environment owned */
    fnbox_engine *engine;   /* borrowed: the transport's owner closes it after freeing this server */
    fb_mcp_sink sink;       /* what no message caused */
    pthread_mutex_t send_mu; /* one message at a time on the wire */
    pthread_mutex_t mu;      /* runs, nruns, stopping, level */
    pthread_cond_t changed;  /* a run ended, or stopping */
    run *runs;
    unsigned nruns;
    bool stopping;
    int level;               /* logging/setLevel's index in k_levels */
    pthread_t ticker;        /* heartbeat progress */
    bool ticker_started;
    pthread_mutex_t session_mu;
    fnbox_session *session;
    json_t *session_deps;    /* the session's `dependencies` option as it opened with it (owned; NULL: none) */
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void send_to(fb_mcp_server *srv, const fb_mcp_sink *sink, json_t *msg, bool final)
{
    size_t len = 0;
    char *line = fb_rpc_line(msg, &len);
    if (!line) {
        fprintf(stderr, "fnbox mcp: out of memory: a message was not sent\n");
        return;
    }
    pthread_mutex_lock(&srv->send_mu);
    sink->send(sink->ctx, line, len, final);
    pthread_mutex_unlock(&srv->send_mu);
    free(line);
}

static void release(const fb_mcp_sink *sink)
{
    if (sink->release)
        sink->release(sink->ctx);
}

void fb_mcp_server_send(fb_mcp_server *srv, json_t *msg)
{
    send_to(srv, &srv->sink, msg, false);
}

/* ---- the session ---- */

fnbox_session *fb_mcp_session(fb_mcp_server *srv, char **error)
{
    return fb_mcp_session_with(srv, NULL, error);
}

/* Whether every entry of deps is in have (both {"python": [...], ...}). */
static bool deps_within(const json_t *deps, const json_t *have)
{
    const char *eco;
    json_t *list, *e;
    size_t i, j;
    json_object_foreach((json_t *)deps, eco, list) {
        json_t *h = json_object_get(have, eco), *x;
        json_array_foreach(list, i, e) {
            bool found = false;
            json_array_foreach(h, j, x)
                found = found || json_equal(x, e);
            if (!found)
                return false;
        }
    }
    return true;
}

/* The session options text with deps added to its `dependencies` (*merged: the whole list, owned). */
static char *options_with(const fb_mcp_server *srv, const json_t *deps, json_t **merged)
{
    json_t *opt = srv->cfg.session_options ? json_loads(srv->cfg.session_options, 0, NULL) : json_object();
    json_t *all = json_object_get(opt, "dependencies");
    if (!json_is_object(all)) {
        all = json_object();
        json_object_set_new(opt, "dependencies", all);
    }
    const char *eco;
    json_t *list;
    json_object_foreach((json_t *)deps, eco, list) {
        json_t *to = json_object_get(all, eco);
        if (!json_is_array(to)) {
            to = json_array();
            json_object_set_new(all, eco, to);
        }
        json_array_extend(to, list);
    }
    char *text = json_dumps(opt, JSON_COMPACT);
    *merged = json_incref(all);
    json_decref(opt);
    return text;
}

fnbox_session *fb_mcp_session_with(fb_mcp_server *srv, const json_t *deps, char **error)
{
    *error = NULL;
    pthread_mutex_lock(&srv->session_mu);
    if (srv->session && deps && !deps_within(deps, srv->session_deps)) {
        char *want = json_dumps(deps, JSON_COMPACT);
        if (asprintf(error, "the conversation's sandbox already started without %s: its dependencies are installed "
                     "when it starts (the first tool call that uses it); put them in the configuration's "
                     "session.dependencies", want ? want : "them") < 0)
            *error = NULL;
        free(want);
        pthread_mutex_unlock(&srv->session_mu);
        return NULL;
    }
    if (!srv->session) {
        char *e = NULL;
        json_t *merged = NULL;
        char *text = deps ? options_with(srv, deps, &merged) : NULL;
        int rc = deps ? fnbox_session_open(text, text ? strlen(text) : 0, &srv->session, &e, NULL)
                      : fnbox_session_open(srv->cfg.session_options, srv->cfg.session_options_len, &srv->session, &e,
                                           NULL);
        free(text);
        if (rc == FNBOX_OK) {
            srv->session_deps = merged ? merged
                                : srv->cfg.dependencies ? json_loads(srv->cfg.dependencies, 0, NULL) : NULL;
        } else
            json_decref(merged);
        if (rc != FNBOX_OK) {
            json_t *doc = e ? json_loads(e, 0, NULL) : NULL;
            const char *msg = json_string_value(json_object_get(json_object_get(doc, "error"), "message"));
            if (asprintf(error, "the sandbox session could not be opened: %s", msg ? msg : "out of memory") < 0)
                *error = NULL;
            json_decref(doc);
            fnbox_free(e);
            srv->session = NULL;
        }
    }
    fnbox_session *s = srv->session;
    pthread_mutex_unlock(&srv->session_mu);
    return s;
}

/* ---- progress ---- */

/* Sends one notifications/progress for r (mu held by the caller: the values stay increasing). */
static void progress_locked(run *r, const char *message, size_t len)
{
    r->progress += 1;
    r->last_sent = now_s();
    json_t *p = json_pack("{s:O, s:f}", "progressToken", r->token, "progress", r->progress);
    if (p && message && json_object_set_new(p, "message", json_stringn(message, len)) < 0) {
        json_decref(p);
        p = NULL;
    }
    send_to(r->srv, &r->sink, p ? fb_rpc_notification("notifications/progress", p) : NULL, false);
}

/* fnbox_output_fn: the run's output as it arrives, carried by progress up to the output cap. */
static void on_output(void *ctx, const char *stream, const char *data, size_t len)
{
    run *r = ctx;
    fb_mcp_server *srv = r->srv;
    pthread_mutex_lock(&srv->mu);
    size_t room = srv->cfg.output_bytes - r->sent_bytes;
    if (room > 0 && !r->cancelled) {
        size_t n = len < room ? len : room;
        while (n < len && n > 0 && ((unsigned char)data[n] & 0xC0) == 0x80)
            n--; /* never a part of a character */
        r->sent_bytes += n;
        char *msg = NULL;
        int m = strcmp(stream, "stderr") == 0 ? asprintf(&msg, "[stderr] %.*s", (int)n, data)
                                              : asprintf(&msg, "%.*s", (int)n, data);
        if (m >= 0)
            progress_locked(r, msg, (size_t)m);
        free(msg);
    }
    pthread_mutex_unlock(&srv->mu);
}

/* Every second: a progress for each run with a token that sent none for FB_MCP_HEARTBEAT_S, so that clients
 * that reset their timeout on progress keep waiting. */
static void *ticker_main(void *arg)
{
    fb_mcp_server *srv = arg;
    pthread_mutex_lock(&srv->mu);
    while (!srv->stopping) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 1;
        pthread_cond_timedwait(&srv->changed, &srv->mu, &until);
        double t = now_s();
        for (run *r = srv->runs; r && !srv->stopping; r = r->next)
            if (r->token && !r->cancelled && t - r->last_sent >= FB_MCP_HEARTBEAT_S) {
                char msg[64];
                int n = snprintf(msg, sizeof msg, "%s still running", r->tool->name);
                progress_locked(r, msg, (size_t)n);
            }
    }
    pthread_mutex_unlock(&srv->mu);
    return NULL;
}

/* ---- tools/call ---- */

/* Frees r; its sink is the caller's to release. */
static void run_free(run *r)
{
    json_decref(r->id);
    json_decref(r->token);
    json_decref(r->args);
    if (r->cancel_fd >= 0)
        close(r->cancel_fd);
    free(r);
}

static void unlist(fb_mcp_server *srv, run *r)
{
    for (run **p = &srv->runs; *p; p = &(*p)->next)
        if (*p == r) {
            *p = r->next;
            break;
        }
    srv->nruns--;
    pthread_cond_broadcast(&srv->changed);
}

static void *run_main(void *arg)
{
    run *r = arg;
    fb_mcp_server *srv = r->srv;
    fb_mcp_call call = {.srv = srv, .cfg = &srv->cfg, .engine = srv->engine, .cancel_fd = r->cancel_fd,
                        .output = r->token ? on_output : NULL, .output_ctx = r};
    json_t *result = r->tool->run(&call, r->args);
    pthread_mutex_lock(&srv->mu);
    bool answer = !r->cancelled;
    pthread_mutex_unlock(&srv->mu);
    if (answer)
        send_to(srv, &r->sink,
                result ? fb_rpc_result(r->id, result)
                       : fb_rpc_error(r->id, FB_RPC_INTERNAL_ERROR, "fnbox ran out of memory running %s", r->tool->name),
                true);
    else
        json_decref(result);
    release(&r->sink);
    pthread_mutex_lock(&srv->mu);
    unlist(srv, r);
    pthread_mutex_unlock(&srv->mu);
    run_free(r);
    return NULL;
}

static json_t *refusal(const char *text)
{
    return json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text", "text", text, "isError", 1);
}

/* Starts r on a detached thread (the connection's end waits for every run: nruns), which then owns r and
 * its sink: true. Else r is freed and *refused is the answer (NULL when the connection is ending). */
static bool start_run(fb_mcp_server *srv, run *r, json_t **refused)
{
    *refused = NULL;
    pthread_mutex_lock(&srv->mu);
    if (srv->stopping || srv->nruns >= FB_MCP_MAX_RUNS) {
        if (!srv->stopping)
            *refused = refusal("busy: 8 tool calls of this client are running; call again when one ends");
        pthread_mutex_unlock(&srv->mu);
        run_free(r);
        return false;
    }
    r->next = srv->runs;
    srv->runs = r;
    srv->nruns++;
    pthread_attr_t attr;
    pthread_t t;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&t, &attr, run_main, r);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        unlist(srv, r);
        pthread_mutex_unlock(&srv->mu);
        run_free(r);
        *refused = refusal("fnbox could not start a thread for this call: try again");
        return false;
    }
    pthread_mutex_unlock(&srv->mu);
    return true;
}

static run *new_run(fb_mcp_server *srv, const fb_rpc_msg *m, const fb_mcp_tool *tool, const fb_mcp_sink *sink)
{
    json_t *args = json_object_get(m->params, "arguments");
    json_t *token = json_object_get(json_object_get(m->params, "_meta"), "progressToken");
    run *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->srv = srv;
    r->tool = tool;
    r->sink = *sink;
    r->id = json_deep_copy(m->id);
    r->token = json_is_string(token) || json_is_integer(token) ? json_deep_copy(token) : NULL;
    r->args = json_is_object(args) ? json_deep_copy(args) : json_object();
    r->cancel_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    r->last_sent = now_s();
    if (!r->id || !r->args || r->cancel_fd < 0) {
        run_free(r);
        return NULL;
    }
    return r;
}

/* true when a run took the sink (it releases it); false when answered here. */
static bool tools_call(fb_mcp_server *srv, const fb_rpc_msg *m, const fb_mcp_sink *sink)
{
    json_t *name = json_object_get(m->params, "name"), *args = json_object_get(m->params, "arguments");
    const fb_mcp_tool *tool = json_is_string(name) ? fb_mcp_tool_find(&srv->cfg, json_string_value(name)) : NULL;
    json_t *answer = NULL;
    if (!json_is_string(name))
        answer = fb_rpc_error(m->id, FB_RPC_INVALID_PARAMS, "params.name: the tool's name (a string) is required");
    else if (!tool)
        answer = fb_rpc_error(m->id, FB_RPC_INVALID_PARAMS, "Unknown tool: %.100s (tools/list shows the tools)",
                              json_string_value(name));
    else if (args && !json_is_null(args) && !json_is_object(args))
        answer = fb_rpc_error(m->id, FB_RPC_INVALID_PARAMS, "params.arguments: must be an object");
    if (answer) {
        send_to(srv, sink, answer, true);
        return false;
    }
    run *r = new_run(srv, m, tool, sink);
    if (!r) {
        send_to(srv, sink, fb_rpc_error(m->id, FB_RPC_INTERNAL_ERROR, "fnbox could not start the call (%s)",
                                        strerror(errno ? errno : ENOMEM)), true);
        return false;
    }
    json_t *refused = NULL;
    if (start_run(srv, r, &refused))
        return true;
    if (refused)
        send_to(srv, sink, fb_rpc_result(m->id, refused), true);
    return false;
}

static void cancel_run(run *r)
{
    uint64_t one = 1;
    if (write(r->cancel_fd, &one, sizeof one) < 0 && errno != EAGAIN)
        fprintf(stderr, "fnbox mcp: cancelling a run: %s\n", strerror(errno));
}

void fb_mcp_server_cancel(fb_mcp_server *srv, const json_t *id)
{
    pthread_mutex_lock(&srv->mu);
    for (run *r = srv->runs; id && r; r = r->next)
        if (json_equal(r->id, id) && !r->cancelled) {
            r->cancelled = true;
            cancel_run(r);
        }
    pthread_mutex_unlock(&srv->mu);
}

static void cancelled(fb_mcp_server *srv, const fb_rpc_msg *m)
{
    fb_mcp_server_cancel(srv, json_object_get(m->params, "requestId"));
}

/* ---- the other methods ---- */

static json_t *initialize(const fb_rpc_msg *m)
{
    const char *asked = json_string_value(json_object_get(m->params, "protocolVersion"));
    const char *version = k_versions[0];
    for (size_t i = 0; asked && i < sizeof k_versions / sizeof *k_versions; i++)
        if (strcmp(asked, k_versions[i]) == 0)
            version = k_versions[i];
    return json_pack(
        "{s:s, s:{s:{s:b}, s:{}}, s:{s:s, s:s, s:s}, s:s}", "protocolVersion", version, "capabilities", "tools",
        "listChanged", 0, "logging", "serverInfo", "name", "fnbox", "title", "fnbox sandbox", "version",
        fnbox_version(), "instructions",
        "Runs code in isolated Linux sandboxes. run_code and call_function start a fresh sandbox each time; "
        "exec_command, the file tools and run_in_kernel share one sandbox for this conversation, whose files "
        "persist between calls (and run_in_kernel's variables between its calls). No network or host files unless the server was configured to allow them.");
}

static json_t *set_level(fb_mcp_server *srv, const fb_rpc_msg *m, int *code, char *why, size_t cap)
{
    const char *level = json_string_value(json_object_get(m->params, "level"));
    for (int i = 0; level && i < (int)(sizeof k_levels / sizeof *k_levels); i++)
        if (strcmp(level, k_levels[i]) == 0) {
            pthread_mutex_lock(&srv->mu);
            srv->level = i;
            pthread_mutex_unlock(&srv->mu);
            return json_object();
        }
    *code = FB_RPC_INVALID_PARAMS;
    snprintf(why, cap, "params.level: must be one of debug, info, notice, warning, error, critical, alert, "
                       "emergency");
    return NULL;
}

/* true when a run took the sink. */
static bool request(fb_mcp_server *srv, const fb_rpc_msg *m, const fb_mcp_sink *sink)
{
    int code = FB_RPC_METHOD_NOT_FOUND;
    char why[256];
    snprintf(why, sizeof why, "Method not found: %.100s", m->method);
    json_t *result = NULL;
    bool known = true;
    if (strcmp(m->method, "tools/call") == 0)
        return tools_call(srv, m, sink);
    if (strcmp(m->method, "initialize") == 0)
        result = initialize(m);
    else if (strcmp(m->method, "ping") == 0)
        result = json_object();
    else if (strcmp(m->method, "tools/list") == 0)
        result = fb_mcp_tools_list(&srv->cfg);
    else if (strcmp(m->method, "logging/setLevel") == 0)
        result = set_level(srv, m, &code, why, sizeof why);
    else
        known = false;
    json_t *answer;
    if (result)
        answer = fb_rpc_result(m->id, result);
    else if (known && code == FB_RPC_METHOD_NOT_FOUND) /* a method we have, out of memory */
        answer = fb_rpc_error(m->id, FB_RPC_INTERNAL_ERROR, "fnbox ran out of memory");
    else
        answer = fb_rpc_error(m->id, code, "%s", why);
    send_to(srv, sink, answer, true);
    return false;
}

void fb_mcp_server_handle(fb_mcp_server *srv, const char *text, size_t len, const fb_mcp_sink *sink)
{
    fb_rpc_msg m;
    fb_rpc_parse(text, len, &m);
    bool taken = false;
    switch (m.kind) {
    case FB_RPC_REQUEST: taken = request(srv, &m, sink); break;
    case FB_RPC_NOTIFICATION:
        if (strcmp(m.method, "notifications/cancelled") == 0)
            cancelled(srv, &m);
        break; /* initialized, roots/list_changed...: nothing to do */
    case FB_RPC_RESPONSE: break; /* we send no requests */
    case FB_RPC_INVALID: send_to(srv, sink, fb_rpc_error(m.id, m.error_code, "%s", m.error), true); break;
    }
    fb_rpc_msg_free(&m);
    if (!taken)
        release(sink);
}

int fb_mcp_send_nowhere(void *ctx, const char *line, size_t len, bool final)
{
    (void)ctx;
    (void)line;
    (void)len;
    (void)final;
    return 0;
}

/* ---- life ---- */

fb_mcp_server *fb_mcp_server_new(const fb_mcp_config *cfg, fnbox_engine *engine, const fb_mcp_sink *sink)
{
    fb_mcp_server *srv = calloc(1, sizeof *srv);
    if (!srv)
        return NULL;
    srv->cfg = *cfg;
    srv->cfg.session_options = cfg->session_options ? strndup(cfg->session_options, cfg->session_options_len) : NULL;
    srv->cfg.environment = cfg->environment ? strdup(cfg->environment) : NULL;
    srv->cfg.dependencies = cfg->dependencies ? strdup(cfg->dependencies) : NULL;
    if ((cfg->session_options && !srv->cfg.session_options) || (cfg->environment && !srv->cfg.environment) ||
        (cfg->dependencies && !srv->cfg.dependencies)) {
        free(srv->cfg.session_options);
        free(srv->cfg.environment);
        free(srv->cfg.dependencies);
        free(srv);
        return NULL;
    }
    srv->sink = *sink;
    srv->engine = engine;
    srv->level = 1;
    pthread_mutex_init(&srv->send_mu, NULL);
    pthread_mutex_init(&srv->mu, NULL);
    pthread_mutex_init(&srv->session_mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_cond_init(&srv->changed, &ca);
    pthread_condattr_destroy(&ca);
    srv->ticker_started = pthread_create(&srv->ticker, NULL, ticker_main, srv) == 0;
    return srv;
}

unsigned fb_mcp_server_running(fb_mcp_server *srv)
{
    pthread_mutex_lock(&srv->mu);
    unsigned n = srv->nruns;
    pthread_mutex_unlock(&srv->mu);
    return n;
}

void fb_mcp_server_stop(fb_mcp_server *srv)
{
    pthread_mutex_lock(&srv->mu);
    srv->stopping = true;
    for (run *r = srv->runs; r; r = r->next)
        cancel_run(r); /* still answered: its result says terminated (the client did not cancel it) */
    pthread_cond_broadcast(&srv->changed);
    pthread_mutex_unlock(&srv->mu);
}

void fb_mcp_server_free(fb_mcp_server *srv)
{
    if (!srv)
        return;
    fb_mcp_server_stop(srv);
    pthread_mutex_lock(&srv->mu);
    while (srv->nruns > 0)
        pthread_cond_wait(&srv->changed, &srv->mu);
    pthread_mutex_unlock(&srv->mu);
    if (srv->ticker_started)
        pthread_join(srv->ticker, NULL);
    fnbox_session_close(srv->session);
    pthread_cond_destroy(&srv->changed);
    pthread_mutex_destroy(&srv->session_mu);
    pthread_mutex_destroy(&srv->mu);
    pthread_mutex_destroy(&srv->send_mu);
    free(srv->cfg.session_options);
    free(srv->cfg.environment);
    free(srv->cfg.dependencies);
    json_decref(srv->session_deps);
    free(srv);
}
