/* An execute request decoded: a shell command or a program's code run as a program (not a function), with
 * its stdin, arguments, environment, directory and limits. Plain data from here on: nothing below this
 * header sees JSON. One-shot execution (core/execute.c) and sessions take the same struct; what runs for it
 * is core/command.h's to work out. Nothing runs here. */
#ifndef FB_REQUEST_COMMAND_H
#define FB_REQUEST_COMMAND_H
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "fs/mount.h"
#include "request/dependencies.h"
#include "request/environments.h"
#include "request/permissions.h"
#include "request/request.h"
#include "util/error.h"

typedef struct fb_command {
    json_t *root;                 /* the parsed document (owned) when fb_command_parse made it; the borrowed
                                     fields below live in root (or in the object fb_command_decode got) */
    const char *command;          /* `command`, run as /bin/sh -c command; NULL when code is given */
    const char *code;             /* `code`, run with language's interpreter; NULL with command or main */
    size_t code_len;
    const char *main_file;        /* `main`: the name of one of files, the program's code run from where
                                     it is placed; NULL with command or code */
    const char *language;         /* as given ("python3", "cobol"...), with code or main. Not checked against
                                     the languages here: an unknown one is an outcome (exit 127), not an
                                     invalid request (core/command.h) */
    const char *const *args;      /* `args`: the program's arguments ($1... for a command), NULL-terminated,
                                     borrowed strings in an owned array; never NULL */
    size_t nargs;
    const char *stdin_data;       /* `stdin` (borrowed; NULL: none, the program reads EOF) */
    size_t stdin_len;
    const char *const *env;       /* `env` as "KEY=value" strings (owned), NULL-terminated; never NULL */
    size_t nenv;
    char *cwd;                    /* `cwd` made absolute and normalized (owned); NULL: the workdir */
    const char *workdir;          /* FB_EXECUTE_WORKDIR: the tmpfs the program starts in */
    double timeout_s;
    json_t *files;                /* `files` (borrowed; an object, as a call's) or NULL */
    fb_mount_config *mount;       /* `mount`, decoded as a call's (owned) or NULL */
    fb_call_limits limits;        /* `limits`, as a call's, defaults filled in */
    fb_permissions permissions;   /* `permissions`, as a call's, but childProcess defaults to allowed: a
                                     command is a shell (owned) */
    const fb_environment *environment; /* `environment`: one of the process's set (borrowed), or NULL: the
                                          host's system tree */
    fb_dependencies dependencies; /* `dependencies`, normalized (owned) */
} fb_command;

/* Parses text (len bytes, need not be NUL-terminated): a JSON object {command | code + language |
 * main + language, args?, stdin?, env?, cwd?, timeout?, files?, mount?, limits?, permissions?}. Failures
 * are InvalidRequest naming the field (`env.FOO: ...`, `cwd: ...`); an unknown field is refused by name. On
 * success the caller owns *out (fb_command_free); on failure *out is released. */
int fb_command_parse(const char *text, size_t len, fb_command *out, fb_error *err);
/* The same from an object already parsed (a session's message); obj must outlive *out, which borrows
 * from it. `extra` (NULL-terminated, may be NULL) names other fields the caller handles itself, which are
 * then not refused. */
int fb_command_decode(json_t *obj, const char *const *extra, fb_command *out, fb_error *err);
void fb_command_free(fb_command *c);

#endif
