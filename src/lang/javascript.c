/* The JavaScript driver: Node.js from the system (also serves the seed's "quickjs" name). */
#include <stdio.h>
#include <string.h>

#include "harness/harness.h"
#include "lang/lang.h"
#include "util/json.h"

#define SAFE_INT_MAX 9007199254740991LL /* 2^53 - 1: the largest integer a JS number holds exactly */

static const char *javascript_kernel(size_t *len)
{
    *len = (size_t)fb_harness_javascript_kernel_len;
    return fb_harness_javascript_kernel;
}

static const char *javascript_harness(size_t *len)
{
    *len = (size_t)fb_harness_javascript_len;
    return fb_harness_javascript;
}

static bool beyond_number(json_t *v)
{
    const char *big = fb_json_bignum(v);
    if (big)
        return !strpbrk(big, ".eE");
    json_int_t i = json_is_integer(v) ? json_integer_value(v) : 0;
    return i > SAFE_INT_MAX || i < -SAFE_INT_MAX;
}

/* Appends to out the path (array indexes, object keys) of every integer in v that a JS number would not
 * hold exactly. */
static int collect_bigints(json_t *v, json_t *path, json_t *out)
{
    if (beyond_number(v))
        return json_array_append_new(out, json_copy(path));
    if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++) {
            json_array_append_new(path, json_integer((json_int_t)i));
            int rc = collect_bigints(json_array_get(v, i), path, out);
            json_array_remove(path, json_array_size(path) - 1);
            if (rc < 0)
                return -1;
        }
    } else if (json_is_object(v)) {
        const char *key;
        json_t *child;
        json_object_foreach(v, key, child) {
            json_array_append_new(path, json_string(key));
            int rc = collect_bigints(child, path, out);
            json_array_remove(path, json_array_size(path) - 1);
            if (rc < 0)
                return -1;
        }
    }
    return 0;
}

/* v with every such integer as its decimal string. */
static json_t *stringify_bigints(json_t *v)
{
    const char *big = fb_json_bignum(v);
    if (big && !strpbrk(big, ".eE"))
        return json_string(big);
    if (json_is_integer(v) && beyond_number(v)) {
        char num[32];
        snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return json_string(num);
    }
    if (json_is_array(v)) {
        json_t *a = json_array();
        for (size_t i = 0; i < json_array_size(v); i++)
            json_array_append_new(a, stringify_bigints(json_array_get(v, i)));
        return a;
    }
    if (json_is_object(v)) {
        json_t *o = json_object();
        const char *key;
        json_t *child;
        json_object_foreach(v, key, child) {
            json_object_set_new(o, key, stringify_bigints(child));
        }
        return o;
    }
    return json_incref(v);
}

/* JS numbers lose integers beyond 2^53: those travel as decimal strings with their paths in `bigints`, and
 * the harness makes them BigInts. */
static char *javascript_input(const fb_lang_call *call, size_t *len)
{
    json_t *bigints = json_array(), *path = json_array(), *args = NULL;
    char *text = NULL;
    if (bigints && path && collect_bigints(call->args->args, path, bigints) == 0) {
        args = json_array_size(bigints) > 0 ? stringify_bigints(call->args->args) : json_incref(call->args->args);
        text = args ? fb_lang_harness_input_with(call, args, bigints, len) : NULL;
    }
    json_decref(args);
    json_decref(path);
    json_decref(bigints);
    return text;
}

/* Keywords are merged into an object argument (args_javascript.c) and integers beyond 2^53 need their
 * paths (javascript_input): only arguments with neither may stay text. */
static bool javascript_args_as_text(bool big_int, bool kwargs)
{
    return !big_int && !kwargs;
}

static const char *const k_aliases[] = {"js", "node", "nodejs", "quickjs", NULL};
static const char *const k_runtimes[] = {"/usr/bin/node", "/usr/bin/nodejs", "/usr/local/bin/node", NULL};
static const char *const k_none[] = {NULL};
static const fb_lang_interpreter k_interpreter = {.args = k_none, .env = k_none,
                                                  .harness_path = "/.fnbox/harness.js"};

const fb_lang_driver fb_lang_javascript = {
    .name = "javascript",
    .aliases = k_aliases,
    .runtimes = k_runtimes,
    .convention = "function f(...args, options = {})",
    .package = "nodejs",
    .infer = fb_infer_javascript,
    .underscore_private = true,
    .normalize = fb_normalize_javascript,
    .missing_is_undefined = true,
    .args_as_text = javascript_args_as_text,
    .exec = fb_lang_interpreter_exec,
    .interpreter = &k_interpreter,
    .harness_source = javascript_harness,
    .kernel_source = javascript_kernel,
    .kernel_file = "kernel.js",
    .harness_input = javascript_input,
};
