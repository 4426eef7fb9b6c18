/* fnbox — run one function of untrusted code in a fresh Linux sandbox and get one JSON result.
 *
 * The whole public C API. Everything else in the library is internal (hidden visibility).
 * Thread-safety: fnbox_call may be called from several threads at once; each call is independent. */
#ifndef FNBOX_H
#define FNBOX_H
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FNBOX_API __attribute__((visibility("default")))
#define FNBOX_VERSION "0.1.0"

/* Return values of fnbox_call. In every case but FNBOX_NO_RESULT, *result holds one ExecutionResult. */
enum {
    FNBOX_OK = 0,                 /* the function ran; its outcome (success, error, timeout...) is in status */
    FNBOX_INVALID_REQUEST = 2,    /* status "error", error.type "InvalidRequest", the field is named */
    FNBOX_SANDBOX_FAILED = 3,     /* the sandbox could not be set up: error.type "SandboxSetupFailed" or
                                     "KernelFeatureMissing"; the function did not run */
    FNBOX_NO_RESULT = -1,         /* out of memory: no result could be built */
};

/* Permission callbacks: the host's say on what a request's `permissions` ask for (README, Permissions).
 * They are asked once per requested item, before the call starts (nothing has run yet), because fnbox
 * cannot mediate these while the function runs: the environment is fixed when the program starts, and
 * which programs may be executed is enforced by the kernel (Landlock). Return nonzero to allow; 0 to deny,
 * optionally writing a reason (NUL-terminated, at most reason_cap bytes) into reason. One denial refuses
 * the whole call: status "error", error.type "PermissionDenied", the message naming the key or command
 * and the reason; nothing runs. ctx is fnbox_call_options.permission_ctx.
 *   env:     each key of permissions.env, with its value.
 *   command: each command of permissions.childProcess, as requested ("git") with the file it resolved to
 *            ("/usr/bin/git"); when the request allows every command (childProcess: true or a preset),
 *            once with command "*" and path NULL.
 * Network (host + port, per connection) and fs (path + operation, per access) callbacks are later work:
 * fnbox can mediate those while the function runs (its network proxy, its FUSE mounts), so they will be
 * asked at the time of each access. */
typedef int (*fnbox_env_check)(void *ctx, const char *key, const char *value, char *reason, size_t reason_cap);
typedef int (*fnbox_command_check)(void *ctx, const char *command, const char *path, char *reason,
                                   size_t reason_cap);

typedef struct fnbox_call_options {
    size_t size;                  /* sizeof(fnbox_call_options): lets later versions add fields; fields
                                     beyond size are taken as absent (NULL / -1) */
    int cancel_fd;                /* when readable, the call is terminated (status "terminated"); -1: none */
    /* since 0.2 */
    void *permission_ctx;         /* passed to the callbacks below */
    fnbox_env_check env;          /* NULL: the request alone decides */
    fnbox_command_check command;  /* NULL: the request alone decides */
} fnbox_call_options;

/* Runs one FunctionCallRequest (JSON text of request_len bytes). On return *result is a NUL-terminated
 * ExecutionResult JSON the caller releases with fnbox_free, and *result_len its length.
 * options may be NULL. */
FNBOX_API int fnbox_call(const char *request, size_t request_len, const fnbox_call_options *options,
                         char **result, size_t *result_len);

/* Probes the kernel features and runtimes fnbox needs. *report is a JSON object
 * {"ok": bool, "checks": [{"name", "ok", "detail", "fix"}...]} to release with fnbox_free.
 * Returns 0 when every required feature is present, 1 when something required is missing,
 * -1 on allocation failure. */
FNBOX_API int fnbox_doctor(char **report);

/* Prints the signature of one function of a request-shaped JSON ({language, code, functionName?, schema?}; other
 * request fields are ignored) without running anything. format: "jsonschema" (NULL means it), "openai",
 * "anthropic" or "mcp". On FNBOX_OK *result is the signature / tool definition JSON; on FNBOX_INVALID_REQUEST
 * it is an ExecutionResult-shaped error (error.type InvalidRequest, AmbiguousFunction or FunctionNotFound).
 * Release with fnbox_free. FNBOX_NO_RESULT on allocation failure. */
FNBOX_API int fnbox_infer(const char *request, size_t request_len, const char *format, char **result,
                          size_t *result_len);

/* Applies file changes to host directories, as `fnbox sync` does (docs/internals/sync.md). input is JSON
 * {"changes": [...] | {created, modified, deleted}, "mount": {...as in a call request...}, "onError":
 * "rollback" | "continue" | "abort" (overrides mount.sync.onError)}; each change is {path, type, content,
 * kind|operation, mode?, size?} as a result reports it (content a string, or {"base64": "..."}). Every
 * change is checked against mount.permissions again and written atomically beneath its mount root.
 * On return *result is the report JSON {success, synced, failed, skipped, notAttempted, rolledBack,
 * undone, onError, details} (plus error {message, type} when the input was refused), released with
 * fnbox_free. Returns FNBOX_OK when every change was synced or skipped by policy; 1 when at least one
 * failed (under "rollback" nothing was kept); FNBOX_INVALID_REQUEST when the input was refused (nothing
 * written; error.message names the field); FNBOX_SANDBOX_FAILED when host files cannot be written safely
 * here (error.type "KernelFeatureMissing": openat2 is missing); FNBOX_NO_RESULT on allocation failure. */
FNBOX_API int fnbox_sync(const char *input, size_t input_len, char **result, size_t *result_len);

FNBOX_API void fnbox_free(void *p);
FNBOX_API const char *fnbox_version(void);

#ifdef __cplusplus
}
#endif
#endif
