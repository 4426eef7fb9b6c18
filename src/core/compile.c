/* Compiling C and C++ calls: a stage of the call path. The source comes from the driver
 * (lang->compiler->generate: user code + generated main; arguments are never in it), the program from the
 * drivers' compile cache (lang/compile_cache.c) or, on a miss, from the compiler run here in a sandbox of
 * its own (it parses untrusted code): the script reads the source on fd 4 and writes the binary on fd 3.
 * A language with a fixed runtime (C) has it compiled once into an object the same way, cached too, and
 * placed at /.fnbox/runtime.o for the program's link. docs/internals/compile-cache.md. */
#include "core/compile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "request/limits.h"
#include "fnbox.h"
#include "lang/compile_cache.h"
#include "sandbox/sandbox.h"
#include "util/utf8.h"

static const fb_cache_bounds k_cache_bounds = {
    .max_entries = FB_CACHE_MAX_ENTRIES,
    .max_bytes = FB_CACHE_MAX_BYTES,
    .max_entry = FB_CACHE_MAX_PROGRAM,
    .stale_tmp_s = FB_CACHE_STALE_TMP_S,
};

/* One call's compilation: the driver, the compiler found, the call's deadline and cancel fd, the cache. */
typedef struct build {
    const fb_lang_driver *lang;
    const char *compiler;
    double timeout_s;
    int cancel_fd;
    fb_compile_cache cache;
} build;

/* One compiler run: script on src (with files under /.fnbox); salt is what else its output depends on (for
 * the key: the runtime's source, for a program that links it). */
typedef struct build_step {
    const char *script;
    const char *salt;
    size_t salt_len;
    const char *src;
    size_t src_len;
    const fb_sandbox_file *files;
    size_t nfiles;
} build_step;

static int compile_in_sandbox(const build *b, const build_step *s, fb_compiled *out, fb_error *err)
{
    const char *argv[] = {"/bin/sh", "-c", s->script, b->compiler, NULL};
    static const char *const envp[] = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/tmp", "TMPDIR=/tmp",
                                       "LANG=C.UTF-8", NULL};
    fb_sandbox_spec spec = {
        .exec_path = "/bin/sh",
        .argv = (char *const *)argv,
        .envp = (char *const *)envp,
        .workdir = "/build",
        .files = s->files,
        .nfiles = s->nfiles,
        .input = s->src,
        .input_len = s->src_len,
        .cancel_fd = b->cancel_fd,
        .exec_any = true, /* gcc runs cc1, as, collect2 and ld */
        .limits = {
            .timeout_s = b->timeout_s > FB_COMPILE_MIN_TIMEOUT_S ? b->timeout_s : FB_COMPILE_MIN_TIMEOUT_S,
            .memory_bytes = FB_COMPILE_MEMORY_BYTES,
            .pids = FB_DEFAULT_PIDS,
            .nofile = FB_DEFAULT_NOFILE,
            .fsize_bytes = FB_CACHE_MAX_PROGRAM,
            .workspace_bytes = FB_DEFAULT_WORKSPACE_BYTES,
            .tmp_bytes = FB_COMPILE_TMP_BYTES,
            .tmpfs_inodes = FB_DEFAULT_TMPFS_INODES,
            .output_bytes = FB_DEFAULT_OUTPUT_BYTES,
            .result_bytes = FB_CACHE_MAX_PROGRAM,
        },
    };
    fb_sandbox_outcome o = {0};
    if (fb_sandbox_run(&spec, &o, err) < 0) {
        fb_sandbox_outcome_free(&o);
        return fb_wrap_error(err, "compiler sandbox");
    }
    int rc = -1;
    if (o.exited && o.exit_code == 0 && o.result.len > 0 && !o.result.truncated) {
        out->data = fb_buf_steal(&o.result, &out->len);
        rc = out->data ? 0 : fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "compiled program");
    } else if (o.timed_out) {
        fb_set_error(err, FB_ERR_COMPILE, 0, "the compiler did not finish within %.0f s", spec.limits.timeout_s);
    } else if (o.cancelled) {
        fb_set_error(err, FB_ERR_COMPILE, 0, "the compilation was cancelled");
    } else if (o.oom_killed) {
        fb_set_error(err, FB_ERR_COMPILE, 0, "the compiler ran out of memory (%llu MiB)",
                     (unsigned long long)(FB_COMPILE_MEMORY_BYTES / FB_MiB));
    } else if (!o.exited) {
        fb_set_error(err, FB_ERR_COMPILE, 0, "the compiler was killed by signal %d", o.term_signal);
    } else {
        size_t dlen = 0;
        char *diag = fb_utf8_sanitize(o.errout.data ? o.errout.data : "", o.errout.len, &dlen);
        while (dlen > 0 && diag[dlen - 1] == '\n')
            diag[--dlen] = '\0';
        fb_set_error(err, FB_ERR_COMPILE, 0, "%s", diag && dlen ? diag : "the compiler failed without a message");
        free(diag);
    }
    fb_sandbox_outcome_free(&o);
    return rc;
}

static int step_key(const build *b, const build_step *s, char key[FB_CACHE_KEY_SIZE], fb_error *err)
{
    fb_cache_key_input in = {.version = FNBOX_VERSION, .lang = b->lang->name, .script = s->script,
                             .compiler = b->compiler, .salt = s->salt, .salt_len = s->salt_len, .src = s->src,
                             .src_len = s->src_len};
    return fb_cache_key(&in, key, err);
}

static bool from_cache(const build *b, const char *key, fb_compiled *out)
{
    if (fb_cache_get(&b->cache, key, &out->data, &out->len) < 0)
        return false;
    out->cache = "hit";
    return true;
}

/* One cached step: from the cache, or compiled and stored. */
static int cached_build(const build *b, const build_step *s, fb_compiled *out, fb_error *err)
{
    char key[FB_CACHE_KEY_SIZE];
    if (step_key(b, s, key, err) < 0)
        return -1;
    if (from_cache(b, key, out))
        return 0;
    if (compile_in_sandbox(b, s, out, err) < 0)
        return -1;
    out->cache = fb_cache_enabled(&b->cache) ? "miss" : "off";
    fb_cache_put(&b->cache, key, out->data, out->len);
    return 0;
}

/* The program for src: a hit needs neither the runtime nor the compiler; otherwise the runtime object
 * (cached on its own), then the program, looked up once more (a concurrent call may have stored it while
 * the runtime was built). */
static int build_program(const build *b, const char *src, size_t src_len, fb_compiled *out, fb_error *err)
{
    const fb_lang_compiler *cc = b->lang->compiler;
    build_step prog = {.script = cc->script, .salt = "", .src = src, .src_len = src_len};
    if (cc->runtime_source)
        prog.salt = cc->runtime_source(&prog.salt_len);
    char key[FB_CACHE_KEY_SIZE];
    if (step_key(b, &prog, key, err) < 0)
        return -1;
    if (from_cache(b, key, out))
        return 0;
    fb_compiled runtime = {0};
    fb_sandbox_file file = {0};
    if (cc->runtime_source) {
        build_step rt = {.script = cc->runtime_script, .salt = "", .src = prog.salt, .src_len = prog.salt_len};
        if (cached_build(b, &rt, &runtime, err) < 0)
            return fb_wrap_error(err, "compiling the %s runtime", b->lang->name);
        file = (fb_sandbox_file){.path = "/.fnbox/runtime.o", .data = runtime.data, .len = runtime.len};
        prog.files = &file;
        prog.nfiles = 1;
    }
    int rc = cached_build(b, &prog, out, err);
    fb_compiled_free(&runtime);
    return rc;
}

int fb_compile(const fb_lang_driver *lang, const char *code, size_t code_len, const char *function_name,
               double timeout_s, int cancel_fd, fb_compiled *out, fb_error *err)
{
    *out = (fb_compiled){.cache = "off"};
    build b = {.lang = lang, .compiler = fb_lang_find_runtime(lang), .timeout_s = timeout_s, .cancel_fd = cancel_fd};
    if (!b.compiler)
        return fb_set_error(err, FB_ERR_KERNEL_FEATURE, 0, "no %s compiler found (looked for %s); run `fnbox doctor`",
                            lang->name, lang->runtimes[0]);
    char *src = NULL;
    size_t src_len = 0;
    if (lang->compiler->generate(code, code_len, function_name, &src, &src_len, err) < 0)
        return -1;
    fb_cache_open(&b.cache, &k_cache_bounds);
    int rc = build_program(&b, src, src_len, out, err);
    fb_cache_close(&b.cache);
    free(src);
    return rc;
}

void fb_compiled_free(fb_compiled *c)
{
    free(c->data);
    *c = (fb_compiled){0};
}
