/* The Python driver: CPython from the system (/usr/bin/python3: the sandbox binds /usr only). */
#include "harness/harness.h"
#include "lang/lang.h"

static const char *python_kernel(size_t *len)
{
    *len = (size_t)fb_harness_python_kernel_len;
    return fb_harness_python_kernel;
}

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
static const fb_lang_interpreter k_interpreter = {.args = k_args, .env = k_env,
                                                  .harness_path = "/.fnbox/harness.py"};

const fb_lang_driver fb_lang_python = {
    .name = "python",
    .aliases = k_aliases,
    .runtimes = k_runtimes,
    .convention = "def f(*args, **kwargs)",
    .package = "python3",
    .infer = fb_infer_python,
    .underscore_private = true,
    .normalize = fb_normalize_python,
    .args_as_text = fb_lang_args_as_text,
    /* f() missing 1 required positional argument, unexpected keyword... */
    .arg_errors = {.count = "TypeError", .name = "TypeError"},
    .exec = fb_lang_interpreter_exec,
    .interpreter = &k_interpreter,
    .harness_source = python_harness,
    .kernel_source = python_kernel,
    .kernel_file = "kernel.py",
    .harness_input = fb_lang_harness_input,
};
