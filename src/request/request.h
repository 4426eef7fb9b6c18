/* Decoding and validating a FunctionCallRequest (flat v0.1 and nested v0.2 shapes). Nothing runs here. */
#ifndef FB_REQUEST_H
#define FB_REQUEST_H
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "request/dependencies.h"
#include "request/environments.h"
#include "request/permissions.h"
#include "fs/mount.h"
#include "lang/lang.h"
#include "util/error.h"

typedef struct fb_reporting {
    bool include_changes, include_contents, include_denied;
} fb_reporting;

/* `limits` (docs/guide/permissions-and-limits.md, Limits): every field set, to the request's value or the default of request/limits.h. */
typedef struct fb_call_limits {
    uint64_t memory_bytes, pids, workspace_bytes, tmp_bytes, inodes, file_size_bytes, open_files;
    uint64_t stdout_bytes, stderr_bytes, result_bytes;
    uint64_t cpu_seconds;         /* per process (RLIMIT_CPU); default: the timeout rounded up + FB_CPU_SLACK_S */
} fb_call_limits;

typedef struct fb_request {
    json_t *root;                 /* the parsed document (owned); the borrowed fields below live in it */
    const fb_lang_driver *lang;
    const char *code;             /* borrowed */
    size_t code_len;
    const char *function_name;    /* borrowed; NULL when omitted */
    json_t *args;                 /* positional arguments, array (owned) */
    json_t *kwargs;               /* keyword arguments, object (owned) */
    fb_json_texts texts;          /* the texts args and kwargs refer to (request/args_text.h): spans of the
                                   * request's text, which must outlive the request (owned table) */
    json_t *schema;               /* borrowed; NULL when absent */
    const char *workdir;          /* borrowed or the default */
    double timeout_s;
    fb_reporting reporting;
    json_t *files;                /* the `files` object (borrowed; checked to be an object) or NULL */
    fb_mount_config *mount;       /* decoded `mount` (owned) or NULL */
    fb_permissions permissions;   /* decoded `permissions` (owned); commands resolved */
    fb_call_limits limits;
    const fb_environment *environment; /* `environment`: one of the process's set (borrowed), or NULL: the
                                        host's system tree */
    fb_dependencies dependencies; /* `dependencies` (at the root or in options), normalized (owned) */
} fb_request;

/* Parses text (len bytes, need not be NUL-terminated), which must outlive *out: large arguments stay in it
 * (request/args_text.h). On failure the kind is FB_ERR_INVALID_REQUEST and the
 * message names the field. On success the caller owns *out (fb_request_free). */
int fb_request_parse(const char *text, size_t len, fb_request *out, fb_error *err);
void fb_request_free(fb_request *r);

/* The decoders a call shares with other requests (request/command.h): `timeout` (NULL or null: the
 * default), `limits` (name: its JSON path for messages; every field set, cpuSeconds defaulting from
 * timeout_s) and `permissions` (commands resolved; on failure *out is zeroed). InvalidRequest naming the
 * field. */
int fb_request_timeout_parse(const json_t *v, double *out, fb_error *err);
int fb_request_limits_parse(const json_t *v, const char *name, double timeout_s, fb_call_limits *out, fb_error *err);
/* `workdir`: an absolute, normalised directory outside the system's (NULL or null: /workspace). */
int fb_request_workdir_parse(const json_t *v, const char **out, fb_error *err);
/* `permissions` of a shell (an execute request, a session): as a call's, but childProcess is allowed
 * unless v says otherwise, since a shell runs other programs by nature. */
int fb_request_shell_permissions_parse(const json_t *v, const char *name, fb_permissions *out, fb_error *err);
int fb_request_permissions_parse(const json_t *v, const char *name, fb_permissions *out, fb_error *err);

#endif
