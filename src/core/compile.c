/* Compiling C and C++ calls: a stage of the call path. The source comes from the driver
 * (lang->compiler->generate: user code + generated main; arguments are never in it), the program from the
 * drivers' compile cache (lang/compile_cache.c) or, on a miss, from the compiler run here in a sandbox of
 * its own (it parses untrusted code): the script reads the source on fd 4 and writes the binary on fd 3.
 * A language with a fixed runtime (C) has it compiled once into an object the same way, cached too, and
 * placed at /.fnbox/runtime.o for the program's link. docs/internals/compile-cache.md. */
#include "core/compile.h"

#include "core/environment.h"
#include "core/pool.h"

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

/* One call's compilation: the driver, the compiler found, the call's deadline and cancel fd, the cache, the
 * warm pools (NULL: none). */
typedef struct build {
    const fb_lang_driver *lang;
    const char *root;        /* the environment's root the compiler is in and runs in; NULL: the host's */
    const char *compiler;
    double timeout_s;
    int cancel_fd;
    fb_compile_cache cache;
    fb_pool *pool;
    const fb_environment *env;  /* the call's named environment (NULL: the host's) */
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

static const char *const k_compile_env[] = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/tmp", "TMPDIR=/tmp",
                                             "LANG=C.UTF-8", NULL};

/* The compiler's sandbox for one step: `sh -c script compiler` with the source on fd 4 (the scripts hand it
 * to the compiler's stdin, so the compiler starts and waits for it: nothing of the caller's runs before the
 * input), argv filled in (5 entries). */
static void compile_spec(const char *root, const char *compiler, const build_step *s, double timeout_s,
                         const char **argv, fb_sandbox_spec *spec)
{
    argv[0] = "/bin/sh";
    argv[1] = "-c";
    argv[2] = s->script;
    argv[3] = compiler;
    argv[4] = NULL;
    double t = timeout_s > FB_COMPILE_MIN_TIMEOUT_S ? timeout_s : FB_COMPILE_MIN_TIMEOUT_S;
    *spec = (fb_sandbox_spec){
        .exec_path = "/bin/sh",
        .argv = (char *const *)argv,
        .envp = (char *const *)k_compile_env,
        .workdir = "/build",
        .files = s->files,
        .nfiles = s->nfiles,
        .input = s->src,
        .input_len = s->src_len,
        .cancel_fd = -1,
        .exec_any = true, /* gcc runs cc1, as, collect2 and ld */
        .sysroot = root,  /* an environment's toolchain and headers, for a program that runs there */
        .inert_until_input = true,
        .limits = {
            .timeout_s = t,
            .memory_bytes = FB_COMPILE_MEMORY_BYTES,
            .pids = FB_DEFAULT_PIDS,
            .nofile = FB_DEFAULT_NOFILE,
            .fsize_bytes = FB_CACHE_MAX_PROGRAM,
            .workspace_bytes = FB_DEFAULT_WORKSPACE_BYTES,
            .tmp_bytes = FB_COMPILE_TMP_BYTES,
            .tmpfs_inodes = FB_DEFAULT_TMPFS_INODES,
            .output_bytes = FB_DEFAULT_OUTPUT_BYTES,
            .result_bytes = FB_CACHE_MAX_PROGRAM,
            .cpu_seconds = (uint64_t)t + (t > (double)(uint64_t)t) + FB_CPU_SLACK_S, /* as the default: 0 */
        },
    };
}

static int compile_in_sandbox(const build *b, const build_step *s, fb_compiled *out, fb_error *err)
{
    const char *argv[5];
    fb_sandbox_spec spec;
    compile_spec(b->root, b->compiler, s, b->timeout_s, argv, &spec);
    spec.cancel_fd = b->cancel_fd;
    fb_sandbox_outcome o = {0};
    if (fb_pool_run(b->pool, b->env, &spec, NULL, &o, err) < 0) {
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
                             .compiler = b->compiler, .root = b->root, .salt = s->salt, .salt_len = s->salt_len, .src = s->src,
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

/* The runtime object lang's programs link (cached on its own), as the file the program step places. */
static int runtime_file(const build *b, fb_compiled *runtime, fb_sandbox_file *file, fb_error *err)
{
    const fb_lang_compiler *cc = b->lang->compiler;
    build_step rt = {.script = cc->runtime_script, .salt = ""};
    rt.src = cc->runtime_source(&rt.src_len);
    if (cached_build(b, &rt, runtime, err) < 0)
        return fb_wrap_error(err, "compiling the %s runtime", b->lang->name);
    *file = (fb_sandbox_file){.path = "/.fnbox/runtime.o", .data = runtime->data, .len = runtime->len};
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
        if (runtime_file(b, &runtime, &file, err) < 0)
            return -1;
        prog.files = &file;
        prog.nfiles = 1;
    }
    int rc = cached_build(b, &prog, out, err);
    fb_compiled_free(&runtime);
    return rc;
}

int fb_compile(const fb_lang_driver *lang, const fb_environment *env, const char *code, size_t code_len,
               const char *function_name, double timeout_s, int cancel_fd, fb_pool *pool, fb_compiled *out,
               fb_error *err)
{
    *out = (fb_compiled){.cache = "off"};
    build b = {.lang = lang, .root = env ? env->root : NULL, .timeout_s = timeout_s, .cancel_fd = cancel_fd,
               .pool = pool, .env = env};
    if (env && env->root) {
        if (!(b.compiler = fb_env_runtime(env, lang, err)))
            return -1;
    } else if (!(b.compiler = fb_lang_find_runtime(lang))) {
        return fb_set_error(err, FB_ERR_KERNEL_FEATURE, 0, "no %s compiler found (looked for %s); run `fnbox doctor`",
                            lang->name, lang->runtimes[0]);
    }
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

int fb_compile_template_make(const fb_lang_driver *lang, const fb_environment *env, fb_compile_template *t,
                             fb_sandbox_spec *spec, fb_error *err)
{
    memset(t, 0, sizeof *t);
    build b = {.lang = lang, .root = env ? env->root : NULL, .cancel_fd = -1, .env = env};
    if (env && env->root) {
        if (!(b.compiler = fb_env_runtime(env, lang, err)))
            return -1;
    } else if (!(b.compiler = fb_lang_find_runtime(lang))) {
        return fb_set_error(err, FB_ERR_KERNEL_FEATURE, 0, "no %s compiler found (looked for %s); run `fnbox doctor`",
                            lang->name, lang->runtimes[0]);
    }
    build_step prog = {.script = lang->compiler->script};
    if (lang->compiler->runtime_source) {
        fb_cache_open(&b.cache, &k_cache_bounds);
        int rc = runtime_file(&b, &t->runtime, &t->file, err);
        fb_cache_close(&b.cache);
        if (rc < 0)
            return -1;
        prog.files = &t->file;
        prog.nfiles = 1;
    }
    compile_spec(b.root, b.compiler, &prog, FB_MAX_TIMEOUT_S, t->argv, spec);
    spec->limits.cpu_seconds = FB_MAX_CPU_SECONDS; /* the widest: each compile lowers it to its own */
    return 0;
}

void fb_compile_template_free(fb_compile_template *t)
{
    fb_compiled_free(&t->runtime);
}

void fb_compiled_free(fb_compiled *c)
{
    free(c->data);
    *c = (fb_compiled){0};
}
