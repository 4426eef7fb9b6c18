/* The JavaScript driver: Node.js from the system (also serves the seed's "quickjs" name). */
#include "harness/harness.h"
#include "lang/lang.h"

static const char *javascript_harness(size_t *len)
{
    *len = (size_t)fb_harness_javascript_len;
    return fb_harness_javascript;
}

static const char *const k_aliases[] = {"js", "node", "nodejs", "quickjs", NULL};
static const char *const k_runtimes[] = {"/usr/bin/node", "/usr/bin/nodejs", "/usr/local/bin/node", NULL};
static const char *const k_args[] = {NULL};
static const char *const k_env[] = {NULL};

const fb_lang_driver fb_lang_javascript = {
    .name = "javascript",
    .aliases = k_aliases,
    .runtimes = k_runtimes,
    .runtime_args = k_args,
    .env = k_env,
    .harness_path = "/.fnbox/harness.js",
    .harness_source = javascript_harness,
    .arg_style = FB_ARGS_JAVASCRIPT,
    .underscore_private = true,
    .infer = fb_infer_javascript,
    .convention = "function f(...args, options = {})",
    .package = "nodejs",
};
