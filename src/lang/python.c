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

/* The harness's files: the loader as the script (/.fnbox/harness.py), which runs the bytecode compiled at build
 * time (harness.pyc) when this interpreter reads it and compiles the source (harness_source.py) otherwise
 * (src/harness/python_loader.py). Without bytecode (the build found no interpreter) the source itself is the
 * script, as the other interpreted languages have it. */
static int python_exec(const fb_lang_driver *d, const fb_lang_runnable *run, fb_lang_exec *out, fb_error *err)
{
    if (fb_lang_interpreter_exec(d, run, out, err) < 0)
        return -1;
    if (fb_harness_python_bytecode_len == 0)
        return 0;
    fb_lang_file source = out->files[0];
    out->files[0] = (fb_lang_file){.path = source.path, .data = fb_harness_python_loader,
                                   .len = (size_t)fb_harness_python_loader_len};
    source.path = "/.fnbox/harness_source.py";
    if (fb_lang_exec_add_file(out, source, err) < 0)
        return -1;
    return fb_lang_exec_add_file(out, (fb_lang_file){.path = "/.fnbox/harness.pyc", .data = fb_harness_python_bytecode,
                                                    .len = (size_t)fb_harness_python_bytecode_len},
                                 err);
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
    .env_caches = true,
    .normalize = fb_normalize_python,
    .args_as_text = fb_lang_args_as_text,
    /* f() missing 1 required positional argument, unexpected keyword... */
    .arg_errors = {.count = "TypeError", .name = "TypeError"},
    .exec = python_exec,
    .interpreter = &k_interpreter,
    .harness_source = python_harness,
    .kernel_source = python_kernel,
    .kernel_file = "kernel.py",
    .harness_input = fb_lang_harness_input,
};
