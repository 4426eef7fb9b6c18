/* The Python driver: CPython from the system (/usr/bin/python3: the sandbox binds /usr only). */
#include "harness/harness.h"
#include "lang/lang.h"

static const char *python_harness(size_t *len)
{
    *len = (size_t)fb_harness_python_len;
    return fb_harness_python;
}

static const char *const k_aliases[] = {"py", "python3", NULL};
static const char *const k_runtimes[] = {"/usr/bin/python3", "/usr/local/bin/python3", NULL};
/* -I: ignore PYTHON* variables and the user site; -S: skip `site` (the harness adds the system
 * dist-packages itself, which saves several milliseconds per call). */
static const char *const k_args[] = {"-I", "-S", NULL};
static const char *const k_env[] = {"PYTHONDONTWRITEBYTECODE=1", "PYTHONIOENCODING=utf-8", NULL};

const fb_lang_driver fb_lang_python = {
    .name = "python",
    .aliases = k_aliases,
    .runtimes = k_runtimes,
    .runtime_args = k_args,
    .env = k_env,
    .harness_path = "/.fnbox/harness.py",
    .harness_source = python_harness,
    .arg_style = FB_ARGS_PYTHON,
    /* f() missing 1 required positional argument, unexpected keyword... */
    .arg_errors = {.count = "TypeError", .name = "TypeError"},
    .underscore_private = true,
    .infer = fb_infer_python,
    .convention = "def f(*args, **kwargs)",
    .package = "python3",
};
