/* File operations on paths under a session's mount (core/session.c sends them here; see session.h).
 *
 * Why a program and not fs/inroot: a mount's view exists only inside the sandbox, as a FUSE file system its
 * user namespace mounted, and the kernel lets no task of another user namespace use it (fuse's
 * allow_current_process: a host thread gets EACCES whatever its ids). So the operation runs where the
 * session's own commands run, as a small /bin/sh program in the sandbox, as its user: the path is resolved
 * by the sandbox's kernel view exactly as the session's code would resolve it (nothing outside the
 * sandbox is reachable), and the mount's server decides it by the mount's rules like any other access (a
 * refusal is recorded and reported by the next sync). Data goes in on stdin and comes out on fd 3, raw.
 * It uses sh, cat, mkdir, rm, rmdir and find from the sandbox's /usr: a session whose childProcess list
 * leaves them out gets the refusal as the error. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/host.h"
#include "core/session.h"
#include "request/limits.h"

#define MOUNTED_TIMEOUT_S 120.0
#define LIST_RECORD_BYTES 300 /* "T SIZE NAME\0": a name is at most 255 bytes */

enum { X_MISSING = 10, X_DIR = 11, X_NOT_REGULAR = 12, X_NOT_DIR = 15 }; /* the scripts' own exit codes */

/* $1 is the path; each script checks what the API distinguishes, then does one thing. */
static const char *const k_scripts[] = {
    [FB_MOUNTED_READ] = "[ -e \"$1\" ] || exit 10; [ -d \"$1\" ] && exit 11; [ -f \"$1\" ] || exit 12; "
                        "exec cat -- \"$1\" >&3",
    [FB_MOUNTED_WRITE] = "mkdir -p -- \"${1%/*}/\" || exit 1; [ -d \"$1\" ] && exit 11; exec cat > \"$1\"",
    [FB_MOUNTED_REMOVE] = "[ -e \"$1\" ] || [ -L \"$1\" ] || exit 10; "
                          "if [ -d \"$1\" ] && [ ! -L \"$1\" ]; then exec rmdir -- \"$1\"; fi; exec rm -f -- \"$1\"",
    [FB_MOUNTED_LIST] = "[ -e \"$1\" ] || exit 10; [ -d \"$1\" ] || exit 15; cd -- \"$1\" || exit 1; "
                        "exec find . -mindepth 1 -maxdepth 1 -printf '%y %s %P\\0' >&3",
};

static const char *const k_verbs[] = {[FB_MOUNTED_READ] = "reading", [FB_MOUNTED_WRITE] = "writing",
                                      [FB_MOUNTED_REMOVE] = "removing", [FB_MOUNTED_LIST] = "listing"};

/* What the program's stderr says, as an error kind: the words coreutils print for errno (LANG is C.UTF-8). */
static fb_errkind kind_of(const char *said)
{
    if (strstr(said, "Permission denied") || strstr(said, "Operation not permitted") ||
        strstr(said, "Read-only file system"))
        return FB_ERR_PERMISSION_DENIED;
    if (strstr(said, "No such file") || strstr(said, "Not a directory"))
        return FB_ERR_NOT_FOUND;
    if (strstr(said, "No space left") || strstr(said, "quota"))
        return FB_ERR_FILE_SIZE_LIMIT;
    if (strstr(said, "not empty") || strstr(said, "Is a directory") || strstr(said, "busy"))
        return FB_ERR_INVALID_REQUEST;
    return FB_ERR_SANDBOX_SETUP;
}

static int judge(fb_mounted_op op, const char *path, const fb_sandbox_outcome *o, fb_error *err)
{
    const char *verb = k_verbs[op];
    if (o->exited && o->exit_code == 0)
        return 0;
    if (!o->exited)
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, 0, "path: %s '%.512s': %s", verb, path,
                            o->timed_out ? "took too long" : o->cancelled ? "the session closed" : "killed");
    switch (o->exit_code) {
    case X_MISSING:
        return fb_set_error(err, FB_ERR_NOT_FOUND, ENOENT, "path: %s '%.512s': no such file or directory", verb, path);
    case X_DIR:
        return fb_set_error(err, FB_ERR_INVALID_REQUEST, EISDIR, "path: '%.512s' is a directory%s", path,
                            op == FB_MOUNTED_READ ? " (list it instead)" : "");
    case X_NOT_REGULAR:
        return fb_set_error(err, FB_ERR_INVALID_REQUEST, EINVAL, "path: '%.512s' is not a regular file", path);
    case X_NOT_DIR:
        return fb_set_error(err, FB_ERR_NOT_FOUND, ENOTDIR, "path: listing '%.512s': not a directory", path);
    default: break;
    }
    char said[512] = "";
    size_t n = o->errout.len < sizeof said - 1 ? o->errout.len : sizeof said - 1;
    if (n)
        memcpy(said, o->errout.data, n);
    said[n] = '\0';
    if (n && said[n - 1] == '\n')
        said[n - 1] = '\0';
    return fb_set_error(err, kind_of(said), 0, "path: %s '%.512s' (a mounted path): %s", verb, path,
                        n ? said : "the operation failed");
}

/* find's records "T SIZE NAME\0" into entries, sorted by name as fs/inroot lists. */
static int by_name(const void *a, const void *b)
{
    return strcmp(((const fb_inroot_entry *)a)->name, ((const fb_inroot_entry *)b)->name);
}

/* One record "T SIZE NAME" (NUL-terminated): the name, with *size; NULL when it is not one. */
static const char *parse_record(const char *rec, unsigned long long *size)
{
    if (!rec[0] || rec[1] != ' ' || !isdigit((unsigned char)rec[2]))
        return NULL;
    char *after = NULL;
    errno = 0;
    *size = strtoull(rec + 2, &after, 10);
    if (errno || *after != ' ' || !after[1])
        return NULL;
    return after + 1;
}

static int parse_list(const fb_buf *b, const char *path, fb_inroot_entry **out, size_t *nout, fb_error *err)
{
    size_t n = 0, cap = 0;
    fb_inroot_entry *v = NULL;
    for (size_t at = 0; at < b->len;) {
        const char *rec = b->data + at, *end = memchr(rec, '\0', b->len - at);
        unsigned long long size;
        const char *name = end ? parse_record(rec, &size) : NULL;
        if (!name) {
            fb_inroot_entries_free(v, n);
            return fb_set_error(err, FB_ERR_SANDBOX_SETUP, 0, "path: listing '%.512s': unreadable listing", path);
        }
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 32;
            fb_inroot_entry *nv = n >= FB_SESSION_MAX_LIST_ENTRIES ? NULL : reallocarray(v, ncap, sizeof *nv);
            if (!nv) {
                fb_inroot_entries_free(v, n);
                return n >= FB_SESSION_MAX_LIST_ENTRIES
                           ? fb_set_error(err, FB_ERR_INVALID_REQUEST, E2BIG, "path: '%.512s' has more than %d entries",
                                          path, FB_SESSION_MAX_LIST_ENTRIES)
                           : fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "listing '%.512s'", path);
            }
            v = nv;
            cap = ncap;
        }
        v[n] = (fb_inroot_entry){.name = strdup(name), .is_dir = rec[0] == 'd', .size = size};
        if (!v[n++].name) {
            fb_inroot_entries_free(v, n);
            return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "listing '%.512s'", path);
        }
        at = (size_t)(end - b->data) + 1;
    }
    if (n)
        qsort(v, n, sizeof *v, by_name);
    *out = v;
    *nout = n;
    return 0;
}

int fb_session_mounted(fnbox_session *s, fb_mounted_op op, const char *path, const void *data, size_t len,
                       fb_session_mounted_out *out, fb_error *err)
{
    char *argv[] = {"sh", "-c", (char *)k_scripts[op], "sh", (char *)path, NULL};
    fb_sandbox_program p = {
        .exec_path = "/bin/sh",
        .argv = argv,
        .envp = (char *const *)s->env,
        .cwd = "/",
        .input = op == FB_MOUNTED_WRITE ? data : NULL,
        .input_len = op == FB_MOUNTED_WRITE ? len : 0,
        .timeout_s = MOUNTED_TIMEOUT_S,
        .result_bytes = op == FB_MOUNTED_READ   ? FB_SESSION_MAX_READ_BYTES + 1
                        : op == FB_MOUNTED_LIST ? (size_t)FB_SESSION_MAX_LIST_ENTRIES * LIST_RECORD_BYTES
                                                : 0,
    };
    fb_call_limits lim = {.stdout_bytes = 4096, .stderr_bytes = 4096};
    fnbox_call_options opts = fb_host_options(NULL);
    fb_sandbox_outcome o = {0};
    int rc = fb_session_run_program(s, &p, &lim, &opts, &o, err);
    if (rc == 0)
        rc = judge(op, path, &o, err);
    if (rc == 0 && op == FB_MOUNTED_READ && o.result.len > FB_SESSION_MAX_READ_BYTES)
        rc = fb_set_error(err, FB_ERR_INVALID_REQUEST, EFBIG, "path: '%.512s' is over the %llu bytes a read returns",
                          path, (unsigned long long)FB_SESSION_MAX_READ_BYTES);
    if (rc == 0 && op == FB_MOUNTED_READ)
        out->data = fb_buf_steal(&o.result, &out->len);
    if (rc == 0 && op == FB_MOUNTED_LIST)
        rc = parse_list(&o.result, path, &out->entries, &out->nentries, err);
    fb_sandbox_outcome_free(&o);
    return rc;
}
