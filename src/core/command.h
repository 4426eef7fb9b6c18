/* What runs for an execute request (request/command.h): the program, its arguments, its environment and
 * the file its code is in. One-shot execution (core/execute.c) runs it in a fresh sandbox; a session can
 * run the same in its long-lived one. Nothing runs here.
 *
 *   command            /bin/sh -c <command> sh <args...>
 *   code, interpreted  <runtime> /.fnbox/main.<ext> <args...>        (python3, node, ruby, php, sh, bash)
 *   code, compiled     /bin/sh -c <compile; run> <compiler> <args...> (c, cpp): the compiler's output and
 *                      status go to fd 3 (fb_command_compile_report), a failure's output to stderr too,
 *                      then the program replaces the shell
 *   main               the same with the file `main` names where the request's files placed it (the
 *                      workdir) instead of /.fnbox's: the others beside it are found as Piston finds them
 *                      (import, require('./x'), require_relative, include, #include "x.h"); a compiled
 *                      language compiles the other .c (.cpp, .cc, .cxx, .c++) files with it
 *   unknown language   nothing: exit 127 with "Language interpreter not found: <language>" on stderr, as
 *                      Strands' local sandbox answers (also when the language's runtime is not installed) */
#ifndef FB_CORE_COMMAND_H
#define FB_CORE_COMMAND_H
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "request/command.h"
#include "core/dependencies.h"
#include "core/environment.h"
#include "sandbox/sandbox.h"
#include "util/error.h"

#define FB_COMMAND_EXTRA_ENV 20 /* room left in envp for the caller's own entries (the proxy's variables,
                                   fb_command_stream_env) */

#define FB_COMMAND_STREAM_FILES 2 /* fb_command_stream_files */

typedef struct fb_command_program {
    const char *language;         /* the canonical name ("python3", "javascript", "c"...), NULL for a command */
    const char *missing;          /* not NULL: nothing can run; the stderr text (exit 127) */
    const char *exec_path;        /* the file executed */
    const char **argv;            /* NULL-terminated (owned array; the strings are static or the request's) */
    const char **envp;            /* NULL-terminated (owned array; room for FB_COMMAND_EXTRA_ENV more) */
    size_t env_cap;               /* envp's slots, the NULL included */
    fb_sandbox_file file;         /* the code, under /.fnbox (read-only); nfiles 0 for a command or main */
    size_t nfiles;
    const char *source;           /* the code's path in the sandbox: file's, or main's in the workdir */
    bool stream;                  /* the caller takes the output as it arrives (fb_command_stream) */
    fb_sandbox_file spec_files[1 + FB_COMMAND_STREAM_FILES]; /* the spec's: the code's, then
                                     fb_command_stream_files when streamed */
    bool compiled;                /* fd 3 carries the compile report (fb_command_compile_report) */
    const char *const *exec_allow;/* what the program may execute besides exec_path (the request's) */
    bool exec_any;
    const char *cwd;              /* the request's cwd (absolute) or NULL: the workdir */
    char *missing_owned;
    char *main_owned;             /* main's path (source), owned */
    char *script_owned;           /* a compiled language's compile-and-run script (argv[2]), owned */
    fb_env_launch envl;           /* the environment: its root's interpreters, layers and variables */
    const fb_deps_layers *deps;   /* NULL, or the request's dependency layers on the search paths (borrowed;
                                     set before fb_command_prepare, which keeps it) */
} fb_command_program;

/* What runs for cmd. The base environment is fnbox's (PATH, HOME=/tmp, LANG...), then permissions.env,
 * then cmd->env. Errors: "InvalidRequest" naming the field (a cwd on a read-only system path; a compiled
 * language with childProcess not allowed: gcc runs its own programs), "OutOfMemory". An unknown language
 * is not an error: out->missing says what to answer. *out borrows from cmd; released by
 * fb_command_program_free on every path. */
int fb_command_prepare(const fb_command *cmd, fb_command_program *out, fb_error *err);
/* Fills spec's exec_path, argv, envp, files, cwd, execute rights and stdio (the input is stdin; fd 3 only
 * for a compiled language). The caller sets the rest (workdir, limits, input, cancel fd...). */
void fb_command_program_spec(fb_command_program *p, fb_sandbox_spec *spec);
void fb_command_program_free(fb_command_program *p);

/* What a streamed run (the caller takes the output as it arrives) adds to envp (cap slots), unless the
 * request sets the same key: the program is the user's own (`python3 x.py`, `ruby x.rb`, a C program), not a
 * harness that could flush its output, and on a pipe Python, Ruby and C's stdio would hold the output until
 * the end. PYTHONPATH=/.fnbox/stream-py and RUBYOPT=-r/.fnbox/stream.rb (fb_command_stream_files: a thread
 * flushes the runtime's stdout every 5 ms; with a PYTHONPATH of the request's, PYTHONUNBUFFERED=1 instead);
 * coreutils' libstdbuf (what `stdbuf -oL` preloads: C stdio line-buffered) when this host has it.
 * "InternalError" when envp is full. */
int fb_command_stream_env(const char **envp, size_t cap, fb_error *err);
/* The files those variables name, placed read-only under /.fnbox: in a streamed execute's sandbox
 * (fb_command_program_spec) and in every session's (core/session.c), whose commands may stream. */
extern const fb_sandbox_file fb_command_stream_files[FB_COMMAND_STREAM_FILES];
/* A streamed execute: fb_command_stream_env in p's environment, fb_command_stream_files among its files. */
int fb_command_stream(fb_command_program *p, fb_error *err);

/* The compile step's report in fd 3's bytes (a compiled language's run): its output (compiler stdout and
 * stderr, in order) and exit status. false when the compiler did not finish (the run was killed first). */
typedef struct fb_compile_report {
    const char *output;           /* borrowed from the buffer */
    size_t output_len;
    int exit_code;
} fb_compile_report;
bool fb_command_compile_report(const char *data, size_t len, fb_compile_report *out);
/* A result's `compile`: {exitCode, output} from the report on fd 3, or exitCode null when the compiler did
 * not finish (the run's timeout or cancel came first). NULL when out of memory. */
json_t *fb_command_compile_json(const fb_buf *report);
/* p->missing as what a shell answers for a missing command: exit 127, the text on stderr; nothing ran. */
int fb_command_missing_outcome(const fb_command_program *p, fb_sandbox_outcome *o, fb_error *err);

/* The languages an execute request's `language` may name, for listings (fnbox_execute_languages). */
typedef struct fb_command_language {
    const char *name;             /* canonical */
    const char *const *aliases;   /* other accepted names, NULL-terminated */
    const char *runtime;          /* the interpreter or compiler found on this host, NULL when none */
    const char *version_arg;      /* the argument that makes runtime print its version, NULL: none (dash) */
} fb_command_language;
/* The i-th language; false past the end. */
bool fb_command_language_at(size_t i, fb_command_language *out);

#endif
