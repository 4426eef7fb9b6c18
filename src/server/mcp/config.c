/* `fnbox mcp`'s configuration: the defaults are safe (a session's own: no network, no mounts, no host
 * environment), a JSON file may widen them. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/mcp/mcp.h"
#include "util/json.h"

void fb_mcp_config_init(fb_mcp_config *c)
{
    memset(c, 0, sizeof *c);
    c->output_bytes = FB_MCP_DEFAULT_OUTPUT_BYTES;
    c->read_bytes = FB_MCP_DEFAULT_READ_BYTES;
    c->timeout_s = FB_MCP_DEFAULT_TIMEOUT_S;
    c->max_timeout_s = FB_MCP_DEFAULT_MAX_TIMEOUT_S;
}

void fb_mcp_config_free(fb_mcp_config *c)
{
    free(c->session_options);
    c->session_options = NULL;
    free(c->environment);
    c->environment = NULL;
    free(c->dependencies);
    c->dependencies = NULL;
}

static int bad(char *err, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad(char *err, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, cap, fmt, ap);
    va_end(ap);
    return -1;
}

static int size_field(json_t *root, const char *name, size_t min, size_t max, size_t *out, char *err, size_t cap)
{
    json_t *v = json_object_get(root, name);
    if (!v)
        return 0;
    if (!json_is_integer(v) || json_integer_value(v) < (json_int_t)min || json_integer_value(v) > (json_int_t)max)
        return bad(err, cap, "%s: must be an integer from %zu to %zu", name, min, max);
    *out = (size_t)json_integer_value(v);
    return 0;
}

static int seconds_field(json_t *root, const char *name, double *out, char *err, size_t cap)
{
    json_t *v = json_object_get(root, name);
    if (!v)
        return 0;
    double s = json_number_value(v);
    if (!json_is_number(v) || !(s > 0) || s > FB_MCP_MAX_TIMEOUT_S)
        return bad(err, cap, "%s: must be a number of seconds above 0, at most %.0f", name, FB_MCP_MAX_TIMEOUT_S);
    *out = s;
    return 0;
}

static int tools_field(json_t *root, fb_mcp_config *c, char *err, size_t cap)
{
    json_t *v = json_object_get(root, "tools"), *t;
    size_t i;
    if (!v)
        return 0;
    if (!json_is_array(v))
        return bad(err, cap, "tools: must be an array of tool names");
    c->disabled = ~0u;
    json_array_foreach(v, i, t) {
        int k = json_is_string(t) ? fb_mcp_tool_index(json_string_value(t)) : -1;
        if (k < 0)
            return bad(err, cap, "tools[%zu]: not a tool (run_code, call_function, exec_command, read_file, "
                                 "write_file, list_files, remove_file, list_languages, "
                                 "run_in_kernel)", i);
        c->disabled &= ~(1u << k);
    }
    return 0;
}

/* session: any JSON object, handed to fnbox_session_open as it is (its errors name the field at first use). */
static int session_field(json_t *root, fb_mcp_config *c, char *err, size_t cap)
{
    json_t *v = json_object_get(root, "session");
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_object(v))
        return bad(err, cap, "session: must be an object (fnbox_session_open's options)");
    json_t *net = json_object_get(json_object_get(v, "permissions"), "network");
    c->network = net && !json_is_null(net) && !json_is_false(net);
    json_t *env = json_object_get(v, "environment");
    if (env && !json_is_null(env) && !json_is_string(env))
        return bad(err, cap, "session.environment: must be the name of an environment (a string)");
    if (json_is_string(env) && !(c->environment = strdup(json_string_value(env))))
        return bad(err, cap, "session: out of memory");
    json_t *deps = json_object_get(v, "dependencies");
    if (deps && !json_is_null(deps) && !json_is_object(deps))
        return bad(err, cap, "session.dependencies: must be an object of package lists, e.g. {\"python\": [\"six\"]}");
    if (json_is_object(deps) && !(c->dependencies = fb_json_dumps(deps, JSON_COMPACT)))
        return bad(err, cap, "session: out of memory");
    c->session_options = fb_json_dumps(v, JSON_COMPACT);
    if (!c->session_options)
        return bad(err, cap, "session: out of memory");
    c->session_options_len = strlen(c->session_options);
    return 0;
}

int fb_mcp_config_check_environment(const fb_mcp_config *c, char *err, size_t cap)
{
    if (!c->environment)
        return 0;
    char *text = NULL;
    if (fnbox_environments(&text, NULL) < 0)
        return bad(err, cap, "session.environment: out of memory");
    json_t *list = json_loads(text, 0, NULL);
    fnbox_free(text);
    char known[1024] = "";
    size_t at = 0, i;
    json_t *e;
    bool found = false;
    json_array_foreach(list, i, e) {
        const char *name = json_string_value(json_object_get(e, "name"));
        found = found || (name && strcmp(name, c->environment) == 0);
        if (name && at < sizeof known)
            at += (size_t)snprintf(known + at, sizeof known - at, "%s%s", i ? ", " : "", name);
    }
    json_decref(list);
    if (found)
        return 0;
    if (!at)
        return bad(err, cap, "session.environment: unknown environment \"%.64s\" (none configured: --environments FILE)",
                   c->environment);
    return bad(err, cap, "session.environment: unknown environment \"%.64s\" (known: %s)", c->environment, known);
}

int fb_mcp_config_parse(const char *text, size_t len, fb_mcp_config *c, char *err, size_t cap)
{
    static const char *const known[] = {"session",  "tools",      "outputBytes", "readBytes",
                                        "timeout", "maxTimeout", "allowDependencies"};
    json_error_t jerr;
    json_t *root = fb_json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root)
        return bad(err, cap, "malformed JSON at line %d, column %d: %s", jerr.line, jerr.column, jerr.text);
    int rc = json_is_object(root) ? 0 : bad(err, cap, "the configuration must be a JSON object");
    const char *key;
    json_t *v;
    json_object_foreach(root, key, v) {
        size_t i = 0;
        while (i < sizeof known / sizeof *known && strcmp(known[i], key) != 0)
            i++;
        if (rc == 0 && i == sizeof known / sizeof *known)
            rc = bad(err, cap, "%.64s: unknown field (expected session, tools, outputBytes, readBytes, timeout, "
                               "maxTimeout, allowDependencies)", key);
    }
    if (rc == 0)
        rc = size_field(root, "outputBytes", 256, FB_MCP_MAX_OUTPUT_BYTES, &c->output_bytes, err, cap);
    if (rc == 0)
        rc = size_field(root, "readBytes", 1, 256u << 20, &c->read_bytes, err, cap);
    if (rc == 0)
        rc = seconds_field(root, "timeout", &c->timeout_s, err, cap);
    if (rc == 0)
        rc = seconds_field(root, "maxTimeout", &c->max_timeout_s, err, cap);
    json_t *allow = json_object_get(root, "allowDependencies");
    if (rc == 0 && allow && !json_is_boolean(allow))
        rc = bad(err, cap, "allowDependencies: must be true or false");
    c->allow_dependencies = json_is_true(allow);
    if (rc == 0)
        rc = tools_field(root, c, err, cap);
    if (rc == 0)
        rc = session_field(root, c, err, cap);
    json_decref(root);
    return rc;
}
