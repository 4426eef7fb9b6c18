/* The MCP tools: each one's definition for the model (description, schemas, annotations) and its run over
 * the C API. Bad arguments and failed runs are normal results with isError, in words a model can act on;
 * only an unknown tool is a protocol error (server.c). Output sent to the model is capped (cap.c). */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/mcp/mcp.h"
#include "util/base64.h"
#include "util/json.h"

/* ---- results ---- */

static json_t *text_item(const char *text)
{
    return json_pack("{s:s, s:s}", "type", "text", "text", text);
}

/* {content: [text], structuredContent?, isError?}; structured is taken. */
static json_t *tool_result(const char *text, json_t *structured, bool is_error)
{
    json_t *r = json_pack("{s:[o]}", "content", text_item(text));
    if (!r) {
        json_decref(structured);
        return NULL;
    }
    if ((structured && json_object_set_new(r, "structuredContent", structured) < 0) ||
        (is_error && json_object_set_new(r, "isError", json_true()) < 0)) {
        json_decref(r);
        return NULL;
    }
    return r;
}

static json_t *failed(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static json_t *failed(const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return tool_result(msg, NULL, true);
}

/* An API error JSON {"error": {"type", "message"}} as a tool failure. */
static json_t *api_failed(const char *what, const char *error)
{
    json_t *doc = error ? json_loads(error, 0, NULL) : NULL;
    json_t *e = json_object_get(doc, "error");
    const char *type = json_string_value(json_object_get(e, "type"));
    const char *msg = json_string_value(json_object_get(e, "message"));
    /* the kind in words a model reads as such ("not found"), then the message naming the path or field */
    static const char *const words[][2] = {{"NotFound", "not found"}, {"PermissionDenied", "permission denied"},
                                           {"InvalidRequest", "invalid request"}};
    const char *said = type;
    for (size_t i = 0; type && i < sizeof words / sizeof *words; i++)
        if (strcmp(type, words[i][0]) == 0)
            said = words[i][1];
    json_t *r = failed("%s failed: %s%s%s", what, said ? said : "", said ? ": " : "",
                       msg ? msg : "fnbox ran out of memory");
    json_decref(doc);
    return r;
}

/* ---- arguments (the inputSchema again: clients need not validate) ---- */

typedef struct arg_spec {
    const char *name;
    int type;            /* JSON_STRING, JSON_REAL (any number), JSON_TRUE (a boolean), JSON_OBJECT, JSON_ARRAY,
                            -1: array or object */
    bool required;
} arg_spec;

static const char *type_word(int type)
{
    switch (type) {
    case JSON_STRING: return "a string";
    case JSON_REAL: return "a number";
    case JSON_TRUE: return "a boolean";
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    default: return "an array or an object";
    }
}

static bool type_ok(const json_t *v, int type)
{
    if (type == JSON_REAL)
        return json_is_number(v);
    if (type == JSON_TRUE)
        return json_is_boolean(v);
    if (type == -1)
        return json_is_array(v) || json_is_object(v);
    return json_typeof(v) == (json_type)type;
}

/* NULL when args fit the specs; else the isError result naming the argument. */
static json_t *check_args(json_t *args, const arg_spec *specs, size_t n)
{
    const char *key;
    json_t *v;
    json_object_foreach(args, key, v) {
        size_t i = 0;
        while (i < n && strcmp(specs[i].name, key) != 0)
            i++;
        if (i == n)
            return failed("Invalid arguments: unknown argument '%.64s'", key);
        if (!json_is_null(v) && !type_ok(v, specs[i].type))
            return failed("Invalid arguments: '%s' must be %s", key, type_word(specs[i].type));
    }
    for (size_t i = 0; i < n; i++)
        if (specs[i].required && !json_object_get(args, specs[i].name))
            return failed("Invalid arguments: '%s' is required", specs[i].name);
    return NULL;
}

static const char *str_arg(json_t *args, const char *name)
{
    return json_string_value(json_object_get(args, name));
}

/* The run's timeout: the argument, or the default, at most the configured maximum. -1 when invalid. */
static double timeout_of(const fb_mcp_call *c, json_t *args)
{
    json_t *t = json_object_get(args, "timeout");
    if (!t || json_is_null(t))
        return c->cfg->timeout_s < c->cfg->max_timeout_s ? c->cfg->timeout_s : c->cfg->max_timeout_s;
    double s = json_number_value(t);
    if (!(s > 0))
        return -1;
    return s < c->cfg->max_timeout_s ? s : c->cfg->max_timeout_s;
}

/* ---- runs: run_code, call_function, exec_command ---- */

static const char *const k_languages[] = {"python", "javascript", "ruby", "php", "c", "cpp", "sh", "bash",
                                          "python3", "node", "js", "c++", NULL};
static const char *const k_call_languages[] = {"python", "javascript", "ruby", "php", "c", "cpp", "python3",
                                               "py", "node", "js", "c++", NULL};

static bool listed(const char *const *list, const char *s)
{
    for (; *list; list++)
        if (strcmp(*list, s) == 0)
            return true;
    return false;
}

static fnbox_call_options run_options(const fb_mcp_call *c)
{
    fnbox_call_options o = {.size = sizeof o, .cancel_fd = c->cancel_fd, .output = c->output,
                            .output_ctx = c->output_ctx};
    return o;
}

/* stdout / stderr of result capped into structured (and truncated.* set when cut). 0, or -1 (memory). */
static int cap_streams(const fb_mcp_call *c, json_t *result, json_t *structured)
{
    static const char *const names[] = {"stdout", "stderr"};
    json_t *trunc = json_object_get(result, "truncated");
    json_t *t = json_is_object(trunc) ? json_deep_copy(trunc) : json_object();
    for (int i = 0; t && i < 2; i++) {
        json_t *v = json_object_get(result, names[i]);
        const char *s = json_is_string(v) ? json_string_value(v) : "";
        bool cut = false;
        char *capped = fb_mcp_cap(s, json_is_string(v) ? json_string_length(v) : 0, c->cfg->output_bytes, &cut);
        if (!capped || json_object_set_new(structured, names[i], json_string(capped)) < 0) {
            free(capped);
            json_decref(t);
            return -1;
        }
        free(capped);
        if (cut || json_is_true(json_object_get(t, names[i])))
            json_object_set_new(t, names[i], json_true());
        else
            json_object_set_new(t, names[i], json_false());
    }
    return t ? json_object_set_new(structured, "truncated", t) : -1;
}

/* The compact text a model reads: status line, then each non-empty stream and the function's value. */
static char *render(json_t *s)
{
    char *text = NULL, *value = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return NULL;
    json_t *code = json_object_get(s, "exitCode");
    fprintf(f, "status: %s", json_string_value(json_object_get(s, "status")) ?: "unknown");
    if (json_is_integer(code))
        fprintf(f, " (exit code %lld)", (long long)json_integer_value(code));
    fputc('\n', f);
    json_t *err = json_object_get(s, "error");
    if (json_is_object(err))
        fprintf(f, "error: %s: %s\n", json_string_value(json_object_get(err, "type")) ?: "Error",
                json_string_value(json_object_get(err, "message")) ?: "");
    json_t *result = json_object_get(s, "result");
    const char *status = json_string_value(json_object_get(s, "status"));
    if (result && status && strcmp(status, "success") == 0 &&
        /* the shortest text that reads back: a model reads 3.14, not jansson's 3.1400000000000001 */
        (value = fb_json_dumps_shortest(result, JSON_COMPACT | JSON_ENCODE_ANY)))
        fprintf(f, "result: %s\n", value);
    free(value);
    static const char *const names[] = {"stdout", "stderr"};
    for (int i = 0; i < 2; i++) {
        const char *o = json_string_value(json_object_get(s, names[i]));
        if (o && *o)
            fprintf(f, "%s:\n%s%s", names[i], o, o[strlen(o) - 1] == '\n' ? "" : "\n");
        if (json_is_true(json_object_get(json_object_get(s, "truncated"), names[i])))
            fprintf(f, "(%s truncated)\n", names[i]);
    }
    const char *file = json_string_value(json_object_get(s, "outputFile"));
    if (file)
        fprintf(f, "full stdout: %s (read_file, or exec_command with head/tail/grep)\n", file);
    file = json_string_value(json_object_get(s, "errorFile"));
    if (file)
        fprintf(f, "full stderr: %s\n", file);
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

/* A run's result JSON (result_text) as the tool's result; keep picks the fields of the structured content
 * (NULL: all of the result). */
static json_t *run_result(const fb_mcp_call *c, const char *result_text, size_t len, const char *const *keep,
                          json_t *extra)
{
    json_t *result = json_loadb(result_text, len, 0, NULL);
    json_t *s = !result ? NULL : keep ? json_object() : json_deep_copy(result);
    for (size_t i = 0; s && keep && keep[i]; i++) {
        json_t *v = json_object_get(result, keep[i]);
        if (v)
            json_object_set(s, keep[i], v);
    }
    if (!s || cap_streams(c, result, s) < 0 || (extra && json_object_update(s, extra) < 0)) {
        json_decref(result);
        json_decref(s);
        json_decref(extra);
        return NULL;
    }
    json_decref(extra);
    json_decref(result);
    char *text = render(s);
    bool ok = json_is_string(json_object_get(s, "status")) &&
              strcmp(json_string_value(json_object_get(s, "status")), "success") == 0;
    json_t *r = text ? tool_result(text, s, !ok) : NULL;
    if (!text)
        json_decref(s);
    free(text);
    return r;
}

static const char *const k_run_fields[] = {"status", "exitCode", "error", "usage", "compile", NULL};

/* After the API: FNBOX_OK, FNBOX_INVALID_REQUEST and FNBOX_SANDBOX_FAILED carry a result (with the reason);
 * the rest say why nothing ran in an error JSON. extra is taken. */
static json_t *after_run(const fb_mcp_call *c, const char *what, int rc, char *out, size_t len,
                         const char *const *keep, json_t *extra)
{
    json_t *r = NULL;
    bool has_result = rc == FNBOX_OK || rc == FNBOX_INVALID_REQUEST || rc == FNBOX_SANDBOX_FAILED;
    if (out && has_result) {
        r = run_result(c, out, len, keep, extra); /* takes extra */
    } else {
        json_decref(extra);
        r = out ? api_failed(what, out) : NULL;
    }
    fnbox_free(out);
    return r;
}

typedef int (*api_fn)(const char *request, size_t len, const fnbox_call_options *o, char **out, size_t *out_len);

/* The full stream of a capped command, kept as a session file the result names. NULL when it fits. */
static json_t *keep_full(const fb_mcp_call *c, fnbox_session *s, const char *out, size_t len)
{
    static unsigned long counter;
    json_t *result = json_loadb(out, len, 0, NULL), *extra = json_object();
    static const char *const names[] = {"stdout", "stderr"}, *const keys[] = {"outputFile", "errorFile"};
    unsigned long n = __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED);
    for (int i = 0; result && extra && i < 2; i++) {
        json_t *v = json_object_get(result, names[i]);
        if (!json_is_string(v) || json_string_length(v) <= c->cfg->output_bytes)
            continue;
        char path[96];
        snprintf(path, sizeof path, "/tmp/fnbox-mcp/command-%lu.%s", n, names[i]);
        if (fnbox_session_write(s, path, strlen(path), json_string_value(v), json_string_length(v), NULL, NULL) ==
            FNBOX_OK)
            json_object_set_new(extra, keys[i], json_string(path));
    }
    json_decref(result);
    return extra;
}

/* text run in session s when s is given (fnbox_session_exec), else through api; a function call goes through
 * the server's warm pools when it has them, as POST /v1/call does (the engine itself runs cold what no pool
 * fits: a mount, permissions, other limits, C and C++). */
static int run_api(const fb_mcp_call *c, api_fn api, fnbox_session *s, const char *text, char **out, size_t *len)
{
    fnbox_call_options o = run_options(c);
    if (s)
        return fnbox_session_exec(s, text, strlen(text), &o, out, len);
    if (api == fnbox_call && c->engine)
        return fnbox_engine_call(c->engine, text, strlen(text), &o, out, len);
    return api(text, strlen(text), &o, out, len);
}

/* req (taken) dumped and run (run_api); the tool's result. exec_command's full output, when cut for the
 * model, is kept in a session file the result names. */
static json_t *run_request(const fb_mcp_call *c, const char *what, json_t *req, api_fn api, fnbox_session *s,
                           const char *const *keep)
{
    char *text = req ? json_dumps(req, JSON_COMPACT) : NULL, *out = NULL;
    json_decref(req);
    if (!text)
        return NULL;
    size_t len = 0;
    int rc = run_api(c, api, s, text, &out, &len);
    free(text);
    json_t *extra = s && rc == FNBOX_OK && out ? keep_full(c, s, out, len) : NULL;
    return after_run(c, what, rc, out, len, keep, extra);
}

/* The `dependencies` argument: NULL (and *fail NULL) when absent; refused when the configuration does not
 * allow it (allowDependencies). */
static json_t *deps_arg(const fb_mcp_call *c, json_t *args, json_t **fail)
{
    json_t *d = json_object_get(args, "dependencies");
    *fail = NULL;
    if (!d || json_is_null(d))
        return NULL;
    if (!c->cfg->allow_dependencies)
        *fail = failed("Invalid arguments: 'dependencies' is not allowed by this server's configuration "
                       "(allowDependencies: true allows it)");
    return d;
}

/* A one-shot request's `dependencies`: the configuration's session.dependencies, then the argument's, list
 * by list (fnbox normalizes and deduplicates them). */
static int add_deps(const fb_mcp_call *c, json_t *req, const json_t *arg)
{
    json_t *all = c->cfg->dependencies ? json_loads(c->cfg->dependencies, 0, NULL) : NULL;
    if (arg && !all)
        all = json_object();
    const char *eco;
    json_t *list;
    json_object_foreach((json_t *)arg, eco, list) {
        json_t *to = json_object_get(all, eco);
        if (!json_is_array(to) || !json_is_array(list))
            json_object_set(all, eco, list); /* a wrong type is the request decoder's to refuse */
        else
            json_array_extend(to, list);
    }
    return all ? json_object_set_new(req, "dependencies", all) : 0;
}

static json_t *run_code(const fb_mcp_call *c, json_t *args)
{
    static const arg_spec specs[] = {{"language", JSON_STRING, true}, {"code", JSON_STRING, true},
                                     {"stdin", JSON_STRING, false}, {"timeout", JSON_REAL, false},
                                     {"dependencies", JSON_OBJECT, false}};
    json_t *bad = check_args(args, specs, 5), *deps;
    if (bad)
        return bad;
    deps = deps_arg(c, args, &bad);
    if (bad)
        return bad;
    const char *lang = str_arg(args, "language");
    if (!listed(k_languages, lang))
        return failed("Invalid arguments: language '%.64s' is not one of python, javascript, ruby, php, c, cpp, "
                      "sh, bash (list_languages shows what this host has)", lang);
    double t = timeout_of(c, args);
    if (t < 0)
        return failed("Invalid arguments: 'timeout' must be a number of seconds above 0");
    json_t *req = json_pack("{s:s, s:O, s:f}", "language", lang, "code", json_object_get(args, "code"), "timeout", t);
    json_t *in = json_object_get(args, "stdin");
    if (req && json_is_string(in))
        json_object_set(req, "stdin", in);
    if (req && c->cfg->environment) /* the configuration's, as its session's */
        json_object_set_new(req, "environment", json_string(c->cfg->environment));
    if (req && add_deps(c, req, deps) < 0) {
        json_decref(req);
        return NULL;
    }
    return run_request(c, "run_code", req, fnbox_execute, NULL, k_run_fields);
}

static json_t *call_function(const fb_mcp_call *c, json_t *args)
{
    static const arg_spec specs[] = {{"language", JSON_STRING, true}, {"code", JSON_STRING, true},
                                     {"functionName", JSON_STRING, false}, {"args", -1, false},
                                     {"kwargs", JSON_OBJECT, false}, {"timeout", JSON_REAL, false}};
    json_t *bad = check_args(args, specs, 6);
    if (bad)
        return bad;
    const char *lang = str_arg(args, "language");
    if (!listed(k_call_languages, lang))
        return failed("Invalid arguments: language '%.64s' is not one of python, javascript, ruby, php, c, cpp",
                      lang);
    double t = timeout_of(c, args);
    if (t < 0)
        return failed("Invalid arguments: 'timeout' must be a number of seconds above 0");
    json_t *req = json_deep_copy(args);
    if (!req || json_object_set_new(req, "timeout", json_real(t)) < 0 ||
        (c->cfg->environment && json_object_set_new(req, "environment", json_string(c->cfg->environment)) < 0) ||
        add_deps(c, req, NULL) < 0) {
        json_decref(req);
        return NULL;
    }
    const char *key;
    json_t *v;
    void *tmp;
    json_object_foreach_safe(req, tmp, key, v) {
        if (json_is_null(v))
            json_object_del(req, key);
    }
    return run_request(c, "call_function", req, fnbox_call, NULL, NULL);
}

/* The client's one session (opened on first use), for the tools that work in it; NULL with *fail the
 * isError result saying why. */
static fnbox_session *client_session(const fb_mcp_call *c, const char *tool, json_t **fail)
{
    char *error = NULL;
    fnbox_session *s = fb_mcp_session(c->srv, &error);
    if (!s)
        *fail = failed("%s failed: %s", tool, error ? error : "out of memory");
    free(error);
    return s;
}

static json_t *exec_command(const fb_mcp_call *c, json_t *args)
{
    static const arg_spec specs[] = {{"command", JSON_STRING, true}, {"cwd", JSON_STRING, false},
                                     {"timeout", JSON_REAL, false}};
    json_t *bad = check_args(args, specs, 3);
    if (bad)
        return bad;
    double t = timeout_of(c, args);
    if (t < 0)
        return failed("Invalid arguments: 'timeout' must be a number of seconds above 0");
    json_t *fail = NULL;
    fnbox_session *s = client_session(c, "exec_command", &fail);
    if (!s)
        return fail;
    json_t *req = json_pack("{s:O, s:f}", "command", json_object_get(args, "command"), "timeout", t);
    json_t *cwd = json_object_get(args, "cwd");
    if (req && json_is_string(cwd))
        json_object_set(req, "cwd", cwd);
    return run_request(c, "exec_command", req, NULL, s, k_run_fields);
}

/* ---- run_in_kernel: the client's session kernel (docs/internals/kernels.md) ---- */

static const char *const k_kernel_languages[] = {"python", "javascript", "ruby", "php", NULL};
static const char *const k_kernel_fields[] = {"status", "result", "error", "exitCode", "kernelRestarted", NULL};

/* The execute in s's kernel for lang; restart goes in the request, so that the kernel is restarted by the
 * execute that holds it (no other execute between), and kernelRestarted says whether a kernel's state was
 * discarded (not when none had started). */
static json_t *kernel_exec(const fb_mcp_call *c, fnbox_session *s, const char *lang, json_t *code, double t,
                           bool restart)
{
    json_t *req = json_pack("{s:O, s:f, s:b}", "code", code, "timeout", t, "restart", restart);
    char *text = req ? json_dumps(req, JSON_COMPACT) : NULL, *out = NULL;
    json_decref(req);
    if (!text)
        return NULL;
    size_t len = 0;
    fnbox_call_options o = run_options(c);
    int rc = fnbox_session_kernel_exec(s, lang, text, strlen(text), &o, &out, &len);
    free(text);
    return after_run(c, "run_in_kernel", rc, out, len, k_kernel_fields, NULL);
}

static json_t *run_in_kernel(const fb_mcp_call *c, json_t *args)
{
    static const arg_spec specs[] = {{"code", JSON_STRING, true}, {"language", JSON_STRING, false},
                                     {"timeout", JSON_REAL, false}, {"restart", JSON_TRUE, false},
                                     {"dependencies", JSON_OBJECT, false}};
    json_t *bad = check_args(args, specs, 5), *deps;
    if (bad)
        return bad;
    deps = deps_arg(c, args, &bad);
    if (bad)
        return bad;
    const char *lang = str_arg(args, "language");
    if (!lang)
        lang = "python";
    if (!listed(k_kernel_languages, lang))
        return failed("Invalid arguments: language '%.64s' is not one of python, javascript, ruby, php (the languages "
                      "with a kernel)", lang);
    double t = timeout_of(c, args);
    if (t < 0)
        return failed("Invalid arguments: 'timeout' must be a number of seconds above 0");
    json_t *fail = NULL;
    char *error = NULL;
    fnbox_session *s = fb_mcp_session_with(c->srv, deps, &error); /* its kernels see the session's layers */
    if (!s)
        fail = failed("run_in_kernel failed: %s", error ? error : "out of memory");
    free(error);
    if (!s)
        return fail;
    return kernel_exec(c, s, lang, json_object_get(args, "code"), t, json_is_true(json_object_get(args, "restart")));
}

/* ---- files ---- */

static const char *mime_of(const char *path)
{
    static const char *const map[][2] = {
        {".png", "image/png"},   {".jpg", "image/jpeg"},      {".jpeg", "image/jpeg"},      {".gif", "image/gif"},
        {".webp", "image/webp"}, {".svg", "image/svg+xml"},   {".json", "application/json"}, {".pdf", "application/pdf"},
        {".csv", "text/csv"},    {".html", "text/html"},      {".md", "text/markdown"},     {".txt", "text/plain"},
    };
    const char *dot = strrchr(path, '.');
    for (size_t i = 0; dot && !strchr(dot, '/') && i < sizeof map / sizeof *map; i++)
        if (strcasecmp(dot, map[i][0]) == 0)
            return map[i][1];
    return NULL;
}

/* Text a model can read as it is: valid UTF-8 (jansson's own check, as the JSON string needs) without NUL. */
static bool is_text(const char *p, size_t n)
{
    if (memchr(p, '\0', n))
        return false;
    json_t *t = json_stringn(p, n);
    json_decref(t);
    return t != NULL;
}

static json_t *read_result(const fb_mcp_call *c, const char *path, const char *data, size_t len)
{
    const char *mime = mime_of(path);
    bool text = is_text(data, len) && (!mime || strncmp(mime, "image/", 6) != 0 ||
                                                                   strcmp(mime, "image/svg+xml") == 0);
    char *b64 = text ? NULL : fb_base64_encode((const unsigned char *)data, len);
    if (!text && !b64)
        return NULL;
    const char *m = mime ? mime : text ? "text/plain" : "application/octet-stream";
    json_t *s = json_pack("{s:s, s:I, s:s, s:s, s:s}", "path", path, "size", (json_int_t)len, "encoding",
                          text ? "utf8" : "base64", "content", text ? data : b64, "mimeType", m);
    json_t *r = NULL;
    if (s && !text && strncmp(m, "image/", 6) == 0) {
        r = json_pack("{s:[{s:s, s:s, s:s}], s:o}", "content", "type", "image", "data", b64, "mimeType", m,
                      "structuredContent", s);
    } else if (s) {
        bool cut = false;
        char *shown = text ? fb_mcp_cap(data, len, c->cfg->output_bytes, &cut) : NULL, *msg = NULL;
        if (text && shown && asprintf(&msg, "%s%s", shown, cut ? "\n(shown in part: the whole file is in "
                                                                 "structuredContent.content)" : "") < 0)
            msg = NULL;
        if (!text && asprintf(&msg, "%s: %zu bytes of binary (%s), base64 in structuredContent.content", path, len,
                              m) < 0)
            msg = NULL;
        r = msg ? tool_result(msg, s, false) : NULL;
        if (!msg)
            json_decref(s);
        free(shown);
        free(msg);
    }
    free(b64);
    return r;
}

static const arg_spec k_path_only[] = {{"path", JSON_STRING, true}};

static json_t *read_file(const fb_mcp_call *c, json_t *args)
{
    json_t *bad = check_args(args, k_path_only, 1);
    fnbox_session *s = bad ? NULL : client_session(c, "read_file", &bad);
    if (!s)
        return bad;
    const char *path = str_arg(args, "path");
    char *data = NULL, *error = NULL;
    size_t len = 0;
    int rc = fnbox_session_read(s, path, strlen(path), &data, &len, &error, NULL);
    json_t *r;
    if (rc != FNBOX_OK)
        r = api_failed("read_file", error);
    else if (len > c->cfg->read_bytes)
        r = failed("read_file: %s is %zu bytes, over the %zu a read returns: look at a part with exec_command "
                   "(head -c, tail -c, sed -n, grep)", path, len, c->cfg->read_bytes);
    else
        r = read_result(c, path, data, len);
    fnbox_free(data);
    fnbox_free(error);
    return r;
}

static json_t *write_file(const fb_mcp_call *c, json_t *args)
{
    static const arg_spec specs[] = {{"path", JSON_STRING, true}, {"content", JSON_STRING, true},
                                     {"encoding", JSON_STRING, false}};
    json_t *bad = check_args(args, specs, 3);
    const char *enc = str_arg(args, "encoding");
    if (!bad && enc && strcmp(enc, "utf8") != 0 && strcmp(enc, "base64") != 0)
        bad = failed("Invalid arguments: 'encoding' must be \"utf8\" or \"base64\"");
    fnbox_session *s = bad ? NULL : client_session(c, "write_file", &bad);
    if (!s)
        return bad;
    json_t *content = json_object_get(args, "content");
    const char *path = str_arg(args, "path");
    unsigned char *bytes = NULL;
    size_t len = json_string_length(content);
    if (enc && strcmp(enc, "base64") == 0) {
        int d = fb_base64_decode(json_string_value(content), len, &bytes, &len);
        if (d == -2)
            return NULL;
        if (d < 0)
            return failed("Invalid arguments: 'content' is not valid base64");
    }
    char *error = NULL;
    int rc = fnbox_session_write(s, path, strlen(path), bytes ? (const void *)bytes : json_string_value(content), len,
                                 &error, NULL);
    free(bytes);
    json_t *r;
    if (rc != FNBOX_OK) {
        r = api_failed("write_file", error);
    } else {
        char msg[600];
        snprintf(msg, sizeof msg, "wrote %zu bytes to %.500s", len, path);
        r = tool_result(msg, json_pack("{s:s, s:I}", "path", path, "size", (json_int_t)len), false);
    }
    fnbox_free(error);
    return r;
}

static json_t *list_files(const fb_mcp_call *c, json_t *args)
{
    static const arg_spec specs[] = {{"path", JSON_STRING, false}};
    json_t *bad = check_args(args, specs, 1);
    fnbox_session *s = bad ? NULL : client_session(c, "list_files", &bad);
    if (!s)
        return bad;
    const char *path = str_arg(args, "path");
    if (!path)
        path = ".";
    char *list = NULL, *error = NULL;
    size_t len = 0;
    int rc = fnbox_session_list(s, path, strlen(path), &list, &len, &error, NULL);
    json_t *entries = rc == FNBOX_OK ? json_loadb(list, len, 0, NULL) : NULL, *r = NULL;
    if (rc != FNBOX_OK) {
        r = api_failed("list_files", error);
    } else if (entries) {
        char *text = NULL;
        size_t tlen = 0, i;
        json_t *e;
        FILE *f = open_memstream(&text, &tlen);
        if (f) {
            fprintf(f, "%s: %zu entries\n", path, json_array_size(entries));
            json_array_foreach(entries, i, e) {
                fprintf(f, "%s%s\t%lld\n", json_string_value(json_object_get(e, "name")),
                        json_is_true(json_object_get(e, "isDir")) ? "/" : "",
                        (long long)json_integer_value(json_object_get(e, "size")));
            }
        }
        if (f && fclose(f) == 0) {
            bool cut = false;
            char *shown = fb_mcp_cap(text, tlen, c->cfg->output_bytes, &cut);
            r = shown ? tool_result(shown, json_pack("{s:s, s:O}", "path", path, "entries", entries), false) : NULL;
            free(shown);
        }
        free(text);
    }
    json_decref(entries);
    fnbox_free(list);
    fnbox_free(error);
    return r;
}

static json_t *remove_file(const fb_mcp_call *c, json_t *args)
{
    json_t *bad = check_args(args, k_path_only, 1);
    fnbox_session *s = bad ? NULL : client_session(c, "remove_file", &bad);
    if (!s)
        return bad;
    const char *path = str_arg(args, "path");
    char *error = NULL;
    int rc = fnbox_session_remove(s, path, strlen(path), &error, NULL);
    json_t *r;
    if (rc != FNBOX_OK) {
        r = api_failed("remove_file", error);
    } else {
        char msg[600];
        snprintf(msg, sizeof msg, "removed %.500s", path);
        r = tool_result(msg, json_pack("{s:s, s:b}", "path", path, "removed", 1), false);
    }
    fnbox_free(error);
    return r;
}

static json_t *list_languages(const fb_mcp_call *c, json_t *args)
{
    (void)c;
    json_t *bad = check_args(args, NULL, 0);
    if (bad)
        return bad;
    char *json = NULL, *text = NULL;
    size_t len = 0, i, tlen = 0;
    if (fnbox_execute_languages(&json, &len) != 0)
        return NULL;
    json_t *langs = json_loadb(json, len, 0, NULL), *l, *r = NULL;
    fnbox_free(json);
    FILE *f = langs ? open_memstream(&text, &tlen) : NULL;
    if (!f) {
        json_decref(langs);
        return NULL;
    }
    json_array_foreach(langs, i, l) {
        const char *v = json_string_value(json_object_get(l, "version"));
        bool here = json_is_string(json_object_get(l, "runtime"));
        char *aliases = json_dumps(json_object_get(l, "aliases"), JSON_COMPACT | JSON_ENCODE_ANY);
        fprintf(f, "%s%s%s (aliases %s)%s\n", json_string_value(json_object_get(l, "name")), v ? " " : "", v ? v : "",
                aliases ? aliases : "[]", here ? "" : ": not installed on this host");
        free(aliases);
    }
    if (fclose(f) == 0)
        r = tool_result(text, json_pack("{s:O}", "languages", langs), false);
    free(text);
    json_decref(langs);
    return r;
}

/* ---- the table ---- */

#define RUN_OUTPUT                                                                                              \
    "{\"type\":\"object\",\"properties\":{\"status\":{\"type\":\"string\",\"enum\":[\"success\",\"error\","        \
    "\"timeout\",\"terminated\",\"crash\"]},\"exitCode\":{\"type\":\"integer\"},\"stdout\":{\"type\":\"string\"}," \
    "\"stderr\":{\"type\":\"string\"},\"truncated\":{\"type\":\"object\",\"properties\":{\"stdout\":{\"type\":"    \
    "\"boolean\"},\"stderr\":{\"type\":\"boolean\"}}},\"error\":{\"type\":\"object\"},\"usage\":{\"type\":"         \
    "\"object\"},\"compile\":{\"type\":\"object\"}%s},\"required\":[\"status\",\"stdout\",\"stderr\","              \
    "\"truncated\"]}"
#define KERNEL_OUTPUT                                                                                           \
    "{\"type\":\"object\",\"properties\":{\"status\":{\"type\":\"string\",\"enum\":[\"success\",\"error\","        \
    "\"timeout\",\"terminated\",\"crash\"]},\"result\":{},\"stdout\":{\"type\":\"string\"},\"stderr\":{\"type\":"      \
    "\"string\"},\"truncated\":{\"type\":\"object\",\"properties\":{\"stdout\":{\"type\":\"boolean\"},\"stderr\":"   \
    "{\"type\":\"boolean\"}}},\"error\":{\"type\":\"object\"},\"exitCode\":{\"type\":\"integer\"},"                  \
    "\"kernelRestarted\":{\"type\":\"boolean\"}},\"required\":[\"status\",\"stdout\",\"stderr\",\"truncated\","      \
    "\"kernelRestarted\"]}"
#define TIMEOUT_ARG "\"timeout\":{\"type\":\"number\",\"exclusiveMinimum\":0,\"description\":\"seconds (default 30)\"}"
#define PATH_ARG(what) "\"path\":{\"type\":\"string\",\"description\":\"" what "\"}"

static const fb_mcp_tool k_tools[] = {
    {"run_code", "Run code",
     "Runs a program's code in a fresh, isolated sandbox (no network, no host files, nothing kept afterwards) "
     "and returns its exit code, stdout and stderr. For a one-off computation or script; use exec_command to "
     "work with files that persist.",
     "{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"language\",\"code\"],\"properties\":{"
     "\"language\":{\"type\":\"string\",\"enum\":[\"python\",\"javascript\",\"ruby\",\"php\",\"c\",\"cpp\",\"sh\","
     "\"bash\"]},\"code\":{\"type\":\"string\",\"description\":\"the whole program\"},\"stdin\":{\"type\":"
     "\"string\"}," TIMEOUT_ARG "}}",
     "", false, false, false, false, run_code},
    {"call_function", "Call a function",
     "Calls one function defined in the code with the given arguments, in a fresh isolated sandbox, and returns "
     "its JSON-converted return value (result), or the exception it raised (error.type is the language's own "
     "class, e.g. ValueError), with its stdout and stderr.",
     "{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"language\",\"code\"],\"properties\":{"
     "\"language\":{\"type\":\"string\",\"enum\":[\"python\",\"javascript\",\"ruby\",\"php\",\"c\",\"cpp\"]},"
     "\"code\":{\"type\":\"string\",\"description\":\"source defining the function\"},\"functionName\":{\"type\":"
     "\"string\",\"description\":\"default: the only public function\"},\"args\":{\"type\":[\"array\","
     "\"object\"],\"description\":\"positional arguments, or named ones as an object\"},\"kwargs\":{\"type\":"
     "\"object\"}," TIMEOUT_ARG "}}",
     "{\"type\":\"object\",\"properties\":{\"status\":{\"type\":\"string\"},\"success\":{\"type\":\"boolean\"},"
     "\"result\":{},\"error\":{\"type\":\"object\"},\"stdout\":{\"type\":\"string\"},\"stderr\":{\"type\":"
     "\"string\"},\"exitCode\":{\"type\":\"integer\"}},\"required\":[\"status\",\"success\"]}",
     false, false, false, false, call_function},
    {"exec_command", "Run a shell command",
     "Runs a shell command (/bin/sh -c) in this conversation's own sandbox, where files persist between "
     "commands and the file tools (working directory /workspace). Anything the command leaves running is "
     "stopped when it ends. Long output is cut to its head and tail; the full output is then kept in a file "
     "whose path the result names.",
     "{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"command\"],\"properties\":{\"command\":"
     "{\"type\":\"string\"},\"cwd\":{\"type\":\"string\",\"description\":\"absolute, or relative to /workspace\"},"
     TIMEOUT_ARG "}}",
     "", false, true, false, true, exec_command},
    {"read_file", "Read a file",
     "Reads a file of this conversation's sandbox (path absolute, or relative to /workspace): text as UTF-8, "
     "anything else as base64 (images as image content).",
     "{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"path\"],\"properties\":{" PATH_ARG(
         "the file") "}}",
     "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"},\"size\":{\"type\":\"integer\"},"
     "\"encoding\":{\"type\":\"string\",\"enum\":[\"utf8\",\"base64\"]},\"content\":{\"type\":\"string\"},"
     "\"mimeType\":{\"type\":\"string\"}},\"required\":[\"path\",\"size\",\"encoding\",\"content\"]}",
     true, false, true, false, read_file},
    {"write_file", "Write a file",
     "Writes a file in this conversation's sandbox (path absolute, or relative to /workspace), replacing it "
     "whole and creating missing parent directories. encoding base64 for binary content.",
     "{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"path\",\"content\"],\"properties\":{"
     PATH_ARG("the file") ",\"content\":{\"type\":\"string\"},\"encoding\":{\"type\":\"string\",\"enum\":["
     "\"utf8\",\"base64\"],\"default\":\"utf8\"}}}",
     "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"},\"size\":{\"type\":\"integer\"}},"
     "\"required\":[\"path\",\"size\"]}",
     false, true, true, false, write_file},
    {"list_files", "List a directory",
     "Lists a directory of this conversation's sandbox (default /workspace): name, isDir and size of each "
     "entry, sorted by name.",
     "{\"type\":\"object\",\"additionalProperties\":false,\"properties\":{" PATH_ARG(
         "the directory, absolute or relative to /workspace (default .)") "}}",
     "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"},\"entries\":{\"type\":\"array\","
     "\"items\":{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"},\"isDir\":{\"type\":"
     "\"boolean\"},\"size\":{\"type\":\"integer\"}}}}},\"required\":[\"path\",\"entries\"]}",
     true, false, true, false, list_files},
    {"remove_file", "Remove a file",
     "Removes a file or an empty directory of this conversation's sandbox.",
     "{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"path\"],\"properties\":{" PATH_ARG(
         "the file or empty directory") "}}",
     "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"},\"removed\":{\"type\":\"boolean\"}},"
     "\"required\":[\"path\",\"removed\"]}",
     false, true, true, false, remove_file},
    {"list_languages", "List languages",
     "Lists the languages run_code and call_function take, with their versions on this host and aliases.",
     "{\"type\":\"object\",\"additionalProperties\":false,\"properties\":{}}",
     "{\"type\":\"object\",\"properties\":{\"languages\":{\"type\":\"array\",\"items\":{\"type\":\"object\"}}},"
     "\"required\":[\"languages\"]}",
     true, false, true, false, list_languages},
    {"run_in_kernel", "Run code in a persistent kernel",
     "Runs a cell of Python, JavaScript, Ruby or PHP in this conversation's kernel, a long-lived interpreter that KEEPS "
     "its state (variables, imports, loaded data) from one call to the next, as a Jupyter notebook does; it "
     "sees the files of exec_command and the file tools. Returns the value of the last expression (result, as "
     "JSON; PHP: a top-level return or a final expression without ';'), stdout and stderr; an exception is an "
     "error naming its type (e.g. ZeroDivisionError). A timeout interrupts the cell and keeps the state; "
     "restart: true starts a fresh kernel first (all state lost).",
     "{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"code\"],\"properties\":{\"code\":{"
     "\"type\":\"string\",\"description\":\"the cell; its last expression's value is the result\"},\"language\":"
     "{\"type\":\"string\",\"enum\":[\"python\",\"javascript\",\"ruby\",\"php\"],\"default\":\"python\"},"
     TIMEOUT_ARG ","
     "\"restart\":{\"type\":\"boolean\",\"default\":false,\"description\":\"restart the kernel first: every "
     "variable and import is lost\"}}}",
     KERNEL_OUTPUT, false, true, false, true, run_in_kernel},
};
enum { NTOOLS = sizeof k_tools / sizeof k_tools[0] };

int fb_mcp_tool_index(const char *name)
{
    for (int i = 0; i < NTOOLS; i++)
        if (strcmp(k_tools[i].name, name) == 0)
            return i;
    return -1;
}

const fb_mcp_tool *fb_mcp_tool_find(const fb_mcp_config *cfg, const char *name)
{
    int i = fb_mcp_tool_index(name);
    return i >= 0 && !(cfg->disabled & (1u << i)) ? &k_tools[i] : NULL;
}

static json_t *output_schema(const fb_mcp_tool *t)
{
    if (*t->output_schema)
        return json_loads(t->output_schema, 0, NULL);
    char text[2048]; /* a run's; exec_command's with the files of the full output */
    snprintf(text, sizeof text, RUN_OUTPUT,
             strcmp(t->name, "exec_command") == 0
                 ? ",\"outputFile\":{\"type\":\"string\"},\"errorFile\":{\"type\":\"string\"}"
                 : "");
    return json_loads(text, 0, NULL);
}

/* run_code's and run_in_kernel's `dependencies`, listed only when the configuration allows it. */
#define DEPS_ARG                                                                                                   \
    "{\"type\":\"object\",\"additionalProperties\":false,\"description\":\"packages to install first from the "   \
    "server's configured index (once; cached): {\\\"python\\\": [\\\"six==1.16.0\\\"], \\\"javascript\\\": "             \
    "[\\\"left-pad@1.3.0\\\"]}, names and versions only\",\"properties\":{\"python\":{\"type\":\"array\",\"items\":{" \
    "\"type\":\"string\"}},\"javascript\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}}}}"

static json_t *tool_json(const fb_mcp_tool *t, const fb_mcp_config *cfg)
{
    json_t *in = json_loads(t->input_schema, 0, NULL), *out = output_schema(t);
    if (in && cfg->allow_dependencies && (t->run == run_code || t->run == run_in_kernel))
        json_object_set_new(json_object_get(in, "properties"), "dependencies", json_loads(DEPS_ARG, 0, NULL));
    json_t *ann = json_pack("{s:s, s:b, s:b, s:b, s:b}", "title", t->title, "readOnlyHint", t->read_only,
                            "destructiveHint", t->destructive, "idempotentHint", t->idempotent, "openWorldHint",
                            t->network && cfg->network);
    if (!in || !out || !ann) {
        json_decref(in);
        json_decref(out);
        json_decref(ann);
        return NULL;
    }
    return json_pack("{s:s, s:s, s:s, s:o, s:o, s:o}", "name", t->name, "title", t->title, "description",
                     t->description, "inputSchema", in, "outputSchema", out, "annotations", ann);
}

json_t *fb_mcp_tools_list(const fb_mcp_config *cfg)
{
    json_t *tools = json_array();
    for (int i = 0; tools && i < NTOOLS; i++) {
        if (cfg->disabled & (1u << i))
            continue;
        json_t *t = tool_json(&k_tools[i], cfg);
        if (!t || json_array_append_new(tools, t) < 0) {
            json_decref(tools);
            return NULL;
        }
    }
    return tools ? json_pack("{s:o}", "tools", tools) : NULL;
}
