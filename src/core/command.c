/* What runs for an execute request (command.h). The runtimes are the call drivers' (lang/lang.h: the same
 * search list, so `fnbox doctor` and fnbox_languages describe them), plus the shells. */
#include "core/command.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/launch.h"
#include "lang/lang.h"
#include "request/limits.h"
#include "util/buf.h"
#include "util/utf8.h"

#define BAD(...) fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, __VA_ARGS__)

/* A compiled language's run: compile into /tmp (the program is not the function's file: the result's
 * `files` reports the workdir only), report the compiler's output and status on fd 3, show a failure's
 * output on stderr too and exit with its status, else close fd 3 and become the program. "$0" is the
 * compiler, "$@" the program's arguments; the sources (shell-quoted) go between COMPILE_HEAD and
 * COMPILE_TAIL. */
#define COMPILE_HEAD "out=$(\"$0\" "
#define COMPILE_TAIL                                                                                           \
    " -lm 2>&1); s=$?; "                                                                                       \
    "printf '%s\\nfnbox-compile-exit:%d\\n' \"$out\" \"$s\" >&3; "                                             \
    "if [ \"$s\" -ne 0 ]; then printf '%s\\n' \"$out\" >&2; exit \"$s\"; fi; "                                  \
    "exec 3>&- /tmp/.fnbox_main \"$@\""
#define COMPILE_OUT " -o /tmp/.fnbox_main"
#define COMPILE_MARK "\nfnbox-compile-exit:"

typedef struct exec_lang {
    const char *name;                 /* canonical */
    const char *const *aliases;
    const char *driver;               /* the call driver whose runtimes it uses, or NULL */
    const char *const *runtimes;      /* without a driver: candidate paths */
    const char *file;                 /* where the code goes */
    const char *compile;              /* compiled languages: the compiler's flags (COMPILE_HEAD) */
    const char *version_arg;          /* makes the runtime print its version */
    const char *const *sources;       /* compiled languages, with main: the other files compiled with it
                                         (by the name's ending, as `gcc *.c` picks them) */
} exec_lang;

static const char *const k_none[] = {NULL};
static const char *const k_python[] = {"python", NULL};
static const char *const k_node[] = {"javascript", "js", NULL};
static const char *const k_cpp[] = {"c++", NULL};
static const char *const k_sh[] = {"/bin/sh", "/usr/bin/sh", NULL};
static const char *const k_bash[] = {"/bin/bash", "/usr/bin/bash", NULL};
static const char *const k_c_sources[] = {".c", NULL};
static const char *const k_cpp_sources[] = {".cpp", ".cc", ".cxx", ".c++", NULL};

static const exec_lang k_langs[] = {
    {"python3", k_python, "python", NULL, "/.fnbox/main.py", NULL, "--version", NULL},
    {"node", k_node, "javascript", NULL, "/.fnbox/main.js", NULL, "--version", NULL},
    {"ruby", k_none, "ruby", NULL, "/.fnbox/main.rb", NULL, "--version", NULL},
    {"php", k_none, "php", NULL, "/.fnbox/main.php", NULL, "--version", NULL},
    {"sh", k_none, NULL, k_sh, "/.fnbox/main.sh", NULL, NULL, NULL},
    {"bash", k_none, NULL, k_bash, "/.fnbox/main.sh", NULL, "--version", NULL},
    {"c", k_none, "c", NULL, "/.fnbox/main.c", "-x c -std=gnu17 -O2 -pipe -fdiagnostics-color=never",
     "-dumpfullversion", k_c_sources},
    {"cpp", k_cpp, "cpp", NULL, "/.fnbox/main.cpp", "-x c++ -std=gnu++17 -O2 -pipe -fdiagnostics-color=never",
     "-dumpfullversion", k_cpp_sources},
};
enum { NLANGS = sizeof k_langs / sizeof *k_langs };

static const exec_lang *find_lang(const char *name)
{
    for (size_t i = 0; i < NLANGS; i++) {
        if (strcmp(k_langs[i].name, name) == 0)
            return &k_langs[i];
        for (const char *const *a = k_langs[i].aliases; *a; a++)
            if (strcmp(*a, name) == 0)
                return &k_langs[i];
    }
    return NULL;
}

/* The language's runtime in root (an environment's; NULL: the host's). */
static const char *find_runtime_in(const exec_lang *l, const char *root)
{
    if (l->driver)
        return fb_lang_find_runtime_in(fb_lang_lookup(l->driver), root);
    for (const char *const *r = l->runtimes; *r; r++)
        if (root ? fb_lang_executable_in(root, *r) : access(*r, X_OK) == 0)
            return *r;
    return NULL;
}

static const char *find_runtime(const exec_lang *l)
{
    return find_runtime_in(l, NULL);
}

bool fb_command_language_at(size_t i, fb_command_language *out)
{
    if (i >= NLANGS)
        return false;
    *out = (fb_command_language){.name = k_langs[i].name, .aliases = k_langs[i].aliases,
                                 .runtime = find_runtime(&k_langs[i]), .version_arg = k_langs[i].version_arg};
    return true;
}

/* coreutils' stdbuf(1) helper: preloaded, it sets each stdio stream's buffering from _STDBUF_O/_STDBUF_E */
#define STDBUF_LIB "/usr/libexec/coreutils/libstdbuf.so"
#define RUBY_STREAM_PATH "/.fnbox/stream.rb"
#define PYTHON_STREAM_DIR "/.fnbox/stream-py"

static bool env_has(const char *const *envp, const char *key)
{
    size_t klen = strlen(key);
    for (; envp && *envp; envp++)
        if (strncmp(*envp, key, klen) == 0 && (*envp)[klen] == '=')
            return true;
    return false;
}

int fb_command_stream_env(const char **envp, size_t cap, fb_error *err)
{
    /* Python through the sitecustomize below, unless the request has a PYTHONPATH of its own (which would
     * hide it): then PYTHONUNBUFFERED, a write per print. libstdbuf only where the library is there: a missing
     * preload makes ld.so complain on every start (the sandbox's /usr is the host's). */
    bool own_path = env_has((const char *const *)envp, "PYTHONPATH");
    const char *const defaults[] = {own_path ? "PYTHONUNBUFFERED=1" : "PYTHONPATH=" PYTHON_STREAM_DIR,
                                    "RUBYOPT=-r" RUBY_STREAM_PATH, NULL};
    static const char *const stdbuf[] = {"LD_PRELOAD=" STDBUF_LIB, "_STDBUF_O=L", NULL};
    if (fb_launch_env_defaults(envp, cap, defaults, err) < 0)
        return -1;
    return access(STDBUF_LIB, R_OK) == 0 ? fb_launch_env_defaults(envp, cap, stdbuf, err) : 0;
}

/* Ruby has no variable that unbuffers its stdout, so RUBYOPT preloads this: the harness's flusher
 * (harness/ruby_harness.rb timed_flush), a thread that flushes the block buffer every 5 ms (sync, a write(2)
 * per puts, made a loop of short lines 8x slower). Without a thread (the pids limit), sync. */
static const char k_ruby_stream[] =
    "# fnbox: a streamed run's stdout, flushed every 5 ms (RUBYOPT=-r" RUBY_STREAM_PATH ")\n"
    "begin\n"
    "  Thread.new do\n"
    "    Thread.current.report_on_exception = false\n"
    "    loop do\n"
    "      sleep 0.005\n"
    "      begin\n"
    "        STDOUT.flush\n"
    "      rescue Exception\n"
    "        nil\n"
    "      end\n"
    "    end\n"
    "  end\n"
    "rescue ThreadError\n"
    "  STDOUT.sync = true\n"
    "end\n";

/* Python's the same (harness/python_harness.py _timed_flush; PYTHONUNBUFFERED, a write(2) per print and
 * another per newline, made a loop of short lines 3.7x slower), as the sitecustomize PYTHONPATH finds first:
 * it leaves sys.path as it was and runs the system's own sitecustomize, which it hides. */
static const char k_python_stream[] =
    "# fnbox: a streamed run's stdout, flushed every 5 ms (PYTHONPATH=" PYTHON_STREAM_DIR ")\n"
    "import sys\n"
    "\n"
    "\n"
    "def _fnbox_stream():\n"
    "    import _thread\n"
    "    import os\n"
    "    import time\n"
    "    from importlib.machinery import PathFinder\n"
    "\n"
    "    def flusher():\n"
    "        while True:\n"
    "            time.sleep(0.005)\n"
    "            try:\n"
    "                sys.__stdout__.flush()\n"
    "            except Exception:\n"
    "                pass\n"
    "\n"
    "    def start():\n"
    "        try:\n"
    "            _thread.start_new_thread(flusher, ())\n"
    "        except Exception:\n"
    "            try:\n"
    "                sys.__stdout__.reconfigure(line_buffering=True)\n"
    "            except Exception:\n"
    "                pass\n"
    "\n"
    "    start()\n"
    "    os.register_at_fork(after_in_child=start)\n"
    "    sys.path[:] = [p for p in sys.path if p != '" PYTHON_STREAM_DIR "']\n"
    "    spec = PathFinder.find_spec('sitecustomize', sys.path)\n"
    "    if spec is not None and spec.loader is not None:\n"
    "        mod = type(sys)('sitecustomize')\n"
    "        mod.__file__, mod.__spec__, mod.__loader__ = spec.origin, spec, spec.loader\n"
    "        sys.modules['sitecustomize'] = mod\n"
    "        spec.loader.exec_module(mod)\n"
    "\n"
    "\n"
    "_fnbox_stream()\n";

const fb_sandbox_file fb_command_stream_files[FB_COMMAND_STREAM_FILES] = {
    {.path = RUBY_STREAM_PATH, .data = k_ruby_stream, .len = sizeof k_ruby_stream - 1},
    {.path = PYTHON_STREAM_DIR "/sitecustomize.py", .data = k_python_stream, .len = sizeof k_python_stream - 1},
};

int fb_command_stream(fb_command_program *p, fb_error *err)
{
    if (fb_command_stream_env(p->envp, p->env_cap, err) < 0)
        return -1;
    p->stream = true;
    return 0;
}

/* argv = head (NULL-terminated), then the request's args. */
static int make_argv(fb_command_program *p, const char *const *head, const fb_command *cmd, fb_error *err)
{
    size_t nhead = 0;
    while (head[nhead])
        nhead++;
    p->argv = calloc(nhead + cmd->nargs + 1, sizeof *p->argv);
    if (!p->argv)
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "argv");
    memcpy(p->argv, head, nhead * sizeof *head);
    memcpy(p->argv + nhead, cmd->args, cmd->nargs * sizeof *cmd->args);
    return 0;
}

static int make_env(fb_command_program *p, const fb_command *cmd, fb_error *err)
{
    size_t base = 0;
    while (fb_launch_base_env[base])
        base++;
    p->env_cap = base + FB_ENV_MAX_VARS + cmd->permissions.nenv + cmd->nenv + FB_COMMAND_EXTRA_ENV + 1;
    p->envp = calloc(p->env_cap, sizeof *p->envp);
    if (!p->envp)
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "environment");
    const char *const *const layers[] = {fb_launch_base_env, p->envl.vars, cmd->permissions.env, cmd->env};
    return fb_launch_env_build(layers, 4, p->envp, p->env_cap, err);
}

static int unknown_language(fb_command_program *p, const char *language, fb_error *err)
{
    static const char k_prefix[] = "Language interpreter not found";
    const fb_environment *env = p->envl.env && p->envl.env->root ? p->envl.env : NULL;
    size_t cap = sizeof k_prefix + sizeof " in environment : " + (env ? strlen(env->name) : 0) + strlen(language) + 1;
    p->missing_owned = malloc(cap);
    if (!p->missing_owned)
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "language");
    if (env)
        snprintf(p->missing_owned, cap, "%s in environment %s: %s\n", k_prefix, env->name, language);
    else
        snprintf(p->missing_owned, cap, "%s: %s\n", k_prefix, language);
    p->missing = p->missing_owned;
    return 0;
}

/* Where a file of the request is placed: a relative name under the workdir (request/files.c). */
static char *placed_path(const fb_command *cmd, const char *name)
{
    size_t cap = strlen(cmd->workdir) + strlen(name) + 2;
    char *path = malloc(cap);
    if (path)
        snprintf(path, cap, "%s%s%s", name[0] == '/' ? "" : cmd->workdir, name[0] == '/' ? "" : "/", name);
    return path;
}

/* s in single quotes, each ' as '\'' (the shell takes every other byte as it is). */
static int append_quoted(fb_buf *b, const char *s)
{
    int rc = fb_buf_append(b, " '", 2);
    for (const char *q; rc == 0 && (q = strchr(s, '\'')) != NULL; s = q + 1)
        rc = fb_buf_append(b, s, (size_t)(q - s)) < 0 || fb_buf_append(b, "'\\''", 4) < 0 ? -1 : 0;
    return rc < 0 || fb_buf_append(b, s, strlen(s)) < 0 || fb_buf_append(b, "'", 1) < 0 ? -1 : 0;
}

static bool compiled_with_main(const exec_lang *l, const char *name)
{
    size_t n = strlen(name);
    for (const char *const *e = l->sources; *e; e++)
        if (n > strlen(*e) && strcmp(name + n - strlen(*e), *e) == 0)
            return true;
    return false;
}

/* The compile-and-run script (COMPILE_HEAD) for source; with main, the other files of `files` whose names
 * end as the language's sources are compiled and linked with it. */
static int compile_script(fb_command_program *p, const exec_lang *l, const fb_command *cmd, const char *source,
                          fb_error *err)
{
    fb_buf b;
    fb_buf_init(&b, FB_MAX_COMMAND_BYTES + 1);
    int rc = fb_buf_append(&b, COMPILE_HEAD, strlen(COMPILE_HEAD)) < 0 || fb_buf_append(&b, l->compile,
             strlen(l->compile)) < 0 || fb_buf_append(&b, COMPILE_OUT, strlen(COMPILE_OUT)) < 0 ||
             append_quoted(&b, source) < 0 ? -1 : 0;
    const char *name;
    json_t *v;
    json_object_foreach(cmd->main_file ? cmd->files : NULL, name, v) {
        if (rc < 0 || strcmp(name, cmd->main_file) == 0 || !compiled_with_main(l, name))
            continue;
        char *path = placed_path(cmd, name);
        rc = path && append_quoted(&b, path) == 0 ? 0 : -1;
        free(path);
    }
    if (rc < 0 || fb_buf_append(&b, COMPILE_TAIL, strlen(COMPILE_TAIL)) < 0) {
        fb_buf_free(&b);
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "compile script");
    }
    if (b.truncated) {
        fb_buf_free(&b);
        return BAD("files: the names of the %s sources to compile take more than %d bytes", l->name,
                   FB_MAX_COMMAND_BYTES);
    }
    p->script_owned = fb_buf_steal(&b, NULL);
    return p->script_owned ? 0 : fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "compile script");
}

/* The code's file: /.fnbox's (read-only) for code, or main where the request's files placed it. */
static int code_file(fb_command_program *p, const exec_lang *l, const fb_command *cmd, fb_error *err)
{
    if (!cmd->main_file) {
        p->file = (fb_sandbox_file){.path = l->file, .data = cmd->code, .len = cmd->code_len};
        p->nfiles = 1;
        p->source = l->file;
        return 0;
    }
    p->main_owned = placed_path(cmd, cmd->main_file);
    p->source = p->main_owned;
    return p->main_owned ? 0 : fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "main");
}

static int code_program(fb_command_program *p, const fb_command *cmd, fb_error *err)
{
    const exec_lang *l = find_lang(cmd->language);
    const char *runtime = l ? find_runtime_in(l, p->envl.env ? p->envl.env->root : NULL) : NULL;
    if (!runtime)
        return unknown_language(p, cmd->language, err);
    p->language = l->name;
    if (code_file(p, l, cmd, err) < 0)
        return -1;
    if (!l->compile) {
        p->exec_path = runtime;
        /* php.paths: include_path has no variable; before Debian's default, over the root's */
        bool php_paths = strcmp(l->name, "php") == 0 && p->envl.env && p->envl.env->paths[FB_ENV_PHP].n;
        const char *head[] = {runtime, p->source, NULL};
        static const char k_php_include[] = "include_path=.:" FB_ENV_PHP_DIR ":/usr/share/php";
        const char *php_head[] = {runtime, "-d", k_php_include, p->source, NULL};
        return make_argv(p, php_paths ? php_head : head, cmd, err);
    }
    if (!p->exec_any)
        return BAD("permissions.childProcess: %s is compiled by %s, which runs programs of its own (cc1, as, ld) "
                   "and then the program: leave childProcess allowed (the default) to run %s code",
                   l->name, runtime, l->name);
    if (compile_script(p, l, cmd, p->source, err) < 0)
        return -1;
    p->compiled = true;
    p->exec_path = "/bin/sh";
    const char *head[] = {"/bin/sh", "-c", p->script_owned, runtime, NULL};
    return make_argv(p, head, cmd, err);
}

int fb_command_prepare(const fb_command *cmd, fb_command_program *out, fb_error *err)
{
    const fb_deps_layers *deps = out->deps;
    *out = (fb_command_program){.exec_allow = cmd->permissions.exec_allow, .exec_any = cmd->permissions.exec_any,
                                .cwd = cmd->cwd, .deps = deps};
    fb_env_launch_init(&out->envl, cmd->environment);
    if (deps && fb_deps_place(deps, &out->envl, err) < 0)
        return -1;
    if (cmd->cwd && fb_sandbox_reserved_path(cmd->cwd))
        return BAD("cwd: '%.200s' is on a read-only system path; choose a directory under %s, /tmp or another "
                   "path of your own",
                   cmd->cwd, cmd->workdir);
    if (make_env(out, cmd, err) < 0)
        return -1;
    if (cmd->code || cmd->main_file)
        return code_program(out, cmd, err);
    out->exec_path = "/bin/sh";
    const char *head[] = {"/bin/sh", "-c", cmd->command, "sh", NULL};
    return make_argv(out, head, cmd, err);
}

void fb_command_program_spec(fb_command_program *p, fb_sandbox_spec *spec)
{
    spec->exec_path = p->exec_path;
    spec->argv = (char *const *)p->argv;
    spec->envp = (char *const *)p->envp;
    size_t n = 0;
    if (p->nfiles)
        p->spec_files[n++] = p->file;
    for (size_t i = 0; p->stream && i < FB_COMMAND_STREAM_FILES; i++)
        p->spec_files[n++] = fb_command_stream_files[i];
    spec->files = n ? p->spec_files : NULL;
    spec->nfiles = n;
    spec->cwd = p->cwd;
    spec->exec_allow = p->exec_allow;
    spec->exec_any = p->exec_any;
    spec->input_on_stdin = true;
    spec->no_result_fd = !p->compiled;
    fb_env_launch_apply(&p->envl, spec);
}

void fb_command_program_free(fb_command_program *p)
{
    free(p->argv);
    free(p->envp);
    free(p->missing_owned);
    free(p->main_owned);
    free(p->script_owned);
    *p = (fb_command_program){0};
}

bool fb_command_compile_report(const char *data, size_t len, fb_compile_report *out)
{
    static const char k_mark[] = COMPILE_MARK;
    const char *mark = NULL;
    for (const char *p = data; p && len >= sizeof k_mark - 1 && p <= data + len - (sizeof k_mark - 1);) {
        const char *hit = memmem(p, (size_t)(data + len - p), k_mark, sizeof k_mark - 1);
        if (!hit)
            break;
        mark = hit; /* the last one: the compiler's own output could contain the text */
        p = hit + 1;
    }
    if (!mark)
        return false;
    char *end = NULL;
    long code = strtol(mark + sizeof k_mark - 1, &end, 10);
    if (end == mark + sizeof k_mark - 1)
        return false;
    *out = (fb_compile_report){.output = data, .output_len = (size_t)(mark - data), .exit_code = (int)code};
    return true;
}

int fb_command_missing_outcome(const fb_command_program *p, fb_sandbox_outcome *o, fb_error *err)
{
    *o = (fb_sandbox_outcome){.exited = true, .exit_code = 127};
    fb_buf_init(&o->out, 0);
    fb_buf_init(&o->errout, strlen(p->missing));
    fb_buf_init(&o->result, 0);
    if (fb_buf_append(&o->errout, p->missing, strlen(p->missing)) < 0)
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "result");
    return 0;
}

json_t *fb_command_compile_json(const fb_buf *report)
{
    fb_compile_report rep = {0};
    if (!fb_command_compile_report(report->data, report->len, &rep))
        return json_pack("{s:n, s:s}", "exitCode", "output", "");
    size_t n = 0;
    char *text = fb_utf8_sanitize(rep.output, rep.output_len, &n); /* invalid bytes: U+FFFD */
    json_t *c = text ? json_pack("{s:i, s:s%}", "exitCode", rep.exit_code, "output", text, n) : NULL;
    free(text);
    return c;
}
