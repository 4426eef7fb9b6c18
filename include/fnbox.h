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
    FNBOX_NOT_FOUND = 4,          /* sessions: no such file or directory in the session (error.type NotFound) */
    FNBOX_DENIED = 5,             /* sessions: the sandbox's user may not do that there (PermissionDenied:
                                     a read-only system path, a file it cannot read) */
    FNBOX_SESSION_DEAD = 6,       /* sessions: its sandbox died by itself (the memory limit, a
                                     signal from outside): error.type SessionDead names why; open a new one */
    FNBOX_NO_RESULT = -1,         /* out of memory: no result could be built */
};

/* Permission callbacks: the host's say on what a request's `permissions` and `mount` allow (README,
 * Permissions). Each returns nonzero to allow, or 0 to deny, optionally writing a reason (NUL-terminated,
 * at most reason_cap bytes, UTF-8; invalid bytes are replaced) into reason. ctx is
 * fnbox_call_options.permission_ctx. They can only narrow what the request allows: nothing the request
 * refuses is ever asked about.
 *
 * Asked once per requested item, before the call starts (nothing has run yet), on the calling thread,
 * because fnbox cannot mediate these while the function runs (the environment is fixed when the program
 * starts; which programs may be executed is enforced by the kernel, Landlock). One denial refuses the
 * whole call: status "error", error.type "PermissionDenied", the message naming the key or command and
 * the reason; nothing runs.
 *   env:     each key of permissions.env, with its value.
 *   command: each command of permissions.childProcess, as requested ("git") with the file it resolved to
 *            ("/usr/bin/git"); when the request allows every command (childProcess: true or a preset),
 *            once with command "*" and path NULL.
 *
 * Asked at each access, while the function runs (fnbox mediates these itself): nothing is cached, every
 * access asks again, and the function waits for the answer. They are called on fnbox's own threads (the
 * network proxy's thread, each mount's server thread), possibly at the same time as each other, so they
 * must be thread-safe and should be quick: a slow answer stalls the function (and the proxy's other
 * connections), and fnbox waits for every answer, even past the call's timeout.
 *   network: each connection permissions.network allows (HTTP forward, CONNECT or SOCKS5), once the
 *            proxy has resolved the name: host as the function named it, port, and address, the resolved
 *            address it will connect to, in text form ("127.0.0.1", "2001:db8::1"). 0 refuses the
 *            connection (HTTP 403 / SOCKS5 "not allowed"): the result's `network` log lists it with
 *            allowed false and reason "denied by the host: <reason>".
 *   fs:      each operation on a mounted path that mount.permissions allows: path as the function sees it
 *            ("/data/out/x.txt"), operation "read", "list", "create", "modify" or "delete" (the
 *            vocabulary and the syscall mapping of mount.permissions). 0 is a denial exactly like a
 *            rule's: EACCES under onPermissionDenied "throw", pretended under "ignore" / "virtual", and
 *            listed in files.denied as {path, operation, rule: "callback: <reason>"} ("callback" without
 *            a reason). It is asked once more for each change, on the calling thread, just before batch
 *            sync writes it to the host (operation by the host's state then): a change it denies there is
 *            not synced (sync.skipped, rule "callback: <reason>"). fnbox_sync asks no callback. */
typedef int (*fnbox_env_check)(void *ctx, const char *key, const char *value, char *reason, size_t reason_cap);
typedef int (*fnbox_command_check)(void *ctx, const char *command, const char *path, char *reason,
                                   size_t reason_cap);
typedef int (*fnbox_network_check)(void *ctx, const char *host, unsigned port, const char *address, char *reason,
                                   size_t reason_cap);
typedef int (*fnbox_fs_check)(void *ctx, const char *path, const char *operation, char *reason, size_t reason_cap);

/* Events, as the seed's executor emits them (README, Files and mounts: Events), delivered in order on the
 * calling thread, after the function has ended (every sandboxed process is dead):
 *   permissionDenied  each refused operation on a mounted path, in the order they happened (path,
 *                     operation, rule);
 *   beforeSync        each change batch sync is about to check and write (path, real_path, change,
 *                     file_type); the return value decides: FNBOX_SYNC_GO, FNBOX_SYNC_SKIP (not written,
 *                     listed in sync.skipped "skipped by beforeSync"), or FNBOX_SYNC_ABORT (this change and
 *                     the rest are not written, and what was written is undone under onError "rollback")
 *                     when fnbox_call_options.sync_allow_abort is set (the seed's
 *                     syncEventConfig.allowAbort); without it ABORT counts as SKIP;
 *   afterSync         each change sync tried (success 1 written, 0 failed with error);
 *   syncError         each change that failed (path, error), right after its afterSync.
 * A change written and later undone by a rollback had its afterSync with success 1; the result's sync
 * report (rolledBack, undone) says what was undone. The return value matters only for beforeSync. Fields
 * an event does not have are NULL (success 0). The strings live until the callback returns. */
typedef struct fnbox_event {
    const char *type;      /* "permissionDenied", "beforeSync", "afterSync", "syncError" */
    const char *path;      /* the virtual path, as the function saw it ("/data/out/x.txt") */
    const char *real_path; /* sync events: the host file */
    const char *change;    /* sync events: "created", "modified", "deleted" */
    const char *file_type; /* sync events: "file", "directory", "symlink" */
    const char *operation; /* permissionDenied: "read", "list", "create", "modify", "delete" */
    const char *rule;      /* permissionDenied: the deciding rule */
    int success;           /* afterSync */
    const char *error;     /* afterSync (failed), syncError */
} fnbox_event;
enum { FNBOX_SYNC_GO = 0, FNBOX_SYNC_SKIP = 1, FNBOX_SYNC_ABORT = 2 };
typedef int (*fnbox_event_fn)(void *ctx, const fnbox_event *event);

/* The function's output as it arrives, on the calling thread, while the call runs (before fnbox_call
 * returns): stream "stdout" or "stderr", and len bytes of valid UTF-8 that never end inside a character
 * (invalid bytes are U+FFFD, as in the result). Joined in order, a stream's chunks are exactly the result's
 * `stdout` / `stderr`: nothing beyond limits.stdoutBytes / stderrBytes is told. data lives until the
 * callback returns. The function's processes keep running while it runs: return quickly. */
typedef void (*fnbox_output_fn)(void *ctx, const char *stream, const char *data, size_t len);

typedef struct fnbox_call_options {
    size_t size;                  /* sizeof(fnbox_call_options): lets later versions add fields; fields
                                     beyond size are taken as absent (NULL / -1) */
    int cancel_fd;                /* when readable, the call is terminated (status "terminated"); -1: none */
    /* since 0.2 */
    void *permission_ctx;         /* passed to the callbacks below */
    fnbox_env_check env;          /* NULL: the request alone decides */
    fnbox_command_check command;  /* NULL: the request alone decides */
    fnbox_network_check network;  /* NULL: the request alone decides */
    fnbox_fs_check fs;            /* NULL: the request alone decides */
    /* since 0.3 */
    fnbox_event_fn event;         /* NULL: events are only logged in the result's `events` */
    void *event_ctx;              /* passed to event */
    int sync_allow_abort;         /* nonzero: beforeSync may abort the whole sync (FNBOX_SYNC_ABORT) */
    /* since 0.4 */
    fnbox_output_fn output;       /* NULL: output only in the result */
    void *output_ctx;             /* passed to output */
} fnbox_call_options;

/* Runs one FunctionCallRequest (JSON text of request_len bytes). On return *result is a NUL-terminated
 * ExecutionResult JSON the caller releases with fnbox_free, and *result_len its length.
 * options may be NULL. As in the seed, the result has no `files` key when the request's reporting says
 * includeChanges false (a batch sync still applies every change; `sync` reports it), and no `files.denied`
 * nor permissionDenied entries in `events` under includeDenied false (options->event still gets them). */
FNBOX_API int fnbox_call(const char *request, size_t request_len, const fnbox_call_options *options,
                         char **result, size_t *result_len);

/* Since 0.5. Runs one execute request (JSON text of request_len bytes) in a fresh sandbox, isolated as a
 * call is: a shell command {"command": "ls -l"} (run as /bin/sh -c command), or a program's code
 * {"code": "print(1)", "language": "python3"} (python3/python, node/javascript/js, ruby, php, sh, bash, c,
 * cpp/c++; C and C++ are compiled first), with optional args (the program's arguments), stdin, env
 * ({NAME: value}, added to the sandbox's minimal environment), cwd (absolute, or relative to the workdir
 * /workspace; created when missing), timeout (seconds, fractions allowed), files, limits and permissions
 * as in a call (childProcess defaults to allowed: a command is a shell), environment (since 0.8: a named
 * environment, fnbox_environments_load; without it, the host's). options as for fnbox_call
 * (cancel_fd, the callbacks, output: the program's stdout and stderr as they arrive).
 * *result is an ExecutionResult JSON {status, success, exitCode, stdout, stderr, usage, truncated, files
 * (created, modified, deleted in the workdir, without contents), meta [, error] [, compile: {exitCode,
 * output}] [, network]} released with fnbox_free: status "success" (exit 0), "error" (another exit code),
 * "timeout" (exitCode 124, the output so far kept), "terminated" (cancelled, 143) or "crash" (killed by
 * signal n: 128 + n; error names the memory limit when that was it). A language that is not known or not
 * installed runs nothing: exitCode 127 and stderr "Language interpreter not found: <language>", as a
 * shell answers for a missing command. Returns as fnbox_call: FNBOX_OK whenever the program ran (or the
 * language was missing), FNBOX_INVALID_REQUEST naming the field, FNBOX_SANDBOX_FAILED, FNBOX_NO_RESULT. */
FNBOX_API int fnbox_execute(const char *request, size_t request_len, const fnbox_call_options *options,
                            char **result, size_t *result_len);

/* Since 0.5. The languages fnbox_execute runs, as a JSON array [{"name": "python3", "aliases": ["python"],
 * "runtime": "/usr/bin/python3", "version": "3.11.2"}, ...]: runtime is the interpreter or compiler found
 * on this host (null when none: such a request answers 127), version what it reports of itself (asked once
 * per process, then kept; null when it says nothing readable). Released with fnbox_free; -1 on allocation
 * failure. Thread-safe. */
FNBOX_API int fnbox_execute_languages(char **json, size_t *json_len);

/* ---- Sessions (since 0.5): a long-lived sandbox for many commands, files kept between them ----
 * A session is one sandbox (namespaces, root, cgroup) kept alive: commands and code run in it one after
 * another or at once, and see each other's files. Each command runs in a PID namespace of its own, so
 * whatever it leaves running (a background job, a daemon) is killed when it ends. Its isolation from other
 * sessions and calls is a call's. The session functions are thread-safe; a session may be used from
 * several threads at once, until fnbox_session_close.
 *
 * Errors (all but fnbox_session_exec's results) are *error = {"error": {"type", "message"}} JSON, released
 * with fnbox_free (error may be NULL), with the return code: FNBOX_INVALID_REQUEST (the message names the
 * field or path), FNBOX_NOT_FOUND, FNBOX_DENIED, FNBOX_SANDBOX_FAILED, FNBOX_NO_RESULT (no error JSON). */
typedef struct fnbox_session fnbox_session;

/* Opens a session. options is JSON (len 0: every default): {workdir ("/workspace"), files (as a call's:
 * written once the sandbox is up), permissions ({env, network, childProcess} as a call's; childProcess
 * defaults to allowed), limits (as a call's: memory, pids, disk and inodes are the whole session's, its
 * processes share one cgroup; stdoutBytes / stderrBytes are per command; cpuSeconds per process, default
 * a day), idleTimeout (seconds, default 900), maxLifetime (default 3600; each at most 86400)}, mount (as a
 * call's: dirs, permissions, loading, security; its servers live as long as the session; changes reach the
 * host only through fnbox_session_sync), environment (since 0.8: a named environment, fnbox_environments_load,
 * which the session's sandbox is built in: its commands, calls and kernels run there; a command or call
 * naming one is refused). Past idleTimeout or maxLifetime fnbox_session_expired says so; the owner
 * (fnbox serve's reaper) closes it. */
FNBOX_API int fnbox_session_open(const char *options, size_t len, fnbox_session **session, char **error,
                                 size_t *error_len);
/* Runs one command or program's code in the session: {command} or {code, language}, plus args, stdin, env,
 * cwd (absolute or relative to the workdir; must exist), timeout (seconds; default 30, at most 3600) as
 * fnbox_execute takes them (files, limits and permissions are the session's: refused here). options as
 * for fnbox_call (cancel_fd, output). *result: {status, success, exitCode, stdout, stderr, usage,
 * truncated, meta} as fnbox_execute's, without files. Returns as fnbox_execute. */
FNBOX_API int fnbox_session_exec(fnbox_session *s, const char *request, size_t request_len,
                                 const fnbox_call_options *options, char **result, size_t *result_len);
/* Runs one FunctionCallRequest in the session, in its files (the function sees what commands wrote, and
 * what it writes stays): as fnbox_call, with the session's permissions and limits (a request's `files`,
 * `mount`, `permissions`, `limits` and `workdir` are refused), its own timeout, stdout/stderr caps and
 * result cap. *result is fnbox_call's ExecutionResult without `files`. Returns as fnbox_call
 * (FNBOX_NOT_FOUND once the session is closed). */
FNBOX_API int fnbox_session_call(fnbox_session *s, const char *request, size_t request_len,
                                 const fnbox_call_options *options, char **result, size_t *result_len);
/* Since 0.6. Runs code in the session's kernel for language (docs/internals/kernels.md): a long-lived
 * interpreter in the session's sandbox (its user, limits, seccomp, Landlock; a PID namespace of its own)
 * that keeps its state (variables, imports, data) from one execute to the next, as a Jupyter kernel does.
 * language: "python" (py, python3) or "javascript" (js, node); another is FNBOX_INVALID_REQUEST naming it.
 * The kernel starts on the first execute. request: {"code": "...", "timeout"?: seconds (default 30, at most
 * 3600), "restart"?: true (a fresh kernel for this code: a running one is killed first, its state lost)}. options as for fnbox_session_exec (cancel_fd, output: the execute's stdout and stderr as they
 * arrive). One execute at a time per kernel: another one waits (its cancel_fd still ends the wait).
 * *result: {status, success, stdout, stderr, result (the value of the last expression, converted to JSON as
 * a call's result; null when the code ends in a statement), error {type (the language's class, e.g.
 * "ZeroDivisionError"), message, stack}, exitCode, kernelRestarted, usage, truncated, meta}. At the timeout
 * (or cancel) the code is interrupted (SIGINT: Python's KeyboardInterrupt) and the kernel keeps its state:
 * status "timeout" ("terminated"), kernelRestarted false; if it does not stop within a second it is killed:
 * kernelRestarted true, its state is lost, the next execute starts a new one. kernelRestarted is also true
 * when the kernel had died by itself (status "crash" for the execute it died in), or when "restart" discarded
 * a started kernel (not when none had started: there was no state to lose). Returns as
 * fnbox_session_exec. */
FNBOX_API int fnbox_session_kernel_exec(fnbox_session *s, const char *language, const char *request,
                                        size_t request_len, const fnbox_call_options *options, char **result,
                                        size_t *result_len);
/* Kills the session's kernel for language (an execute in progress returns, kernelRestarted true); the next
 * execute starts a fresh one. A kernel never started: nothing to do, FNBOX_OK. Errors as the file
 * functions' (FNBOX_INVALID_REQUEST for a language without a kernel). */
FNBOX_API int fnbox_session_kernel_restart(fnbox_session *s, const char *language, char **error,
                                           size_t *error_len);
/* The file at path (absolute, or relative to the workdir; path_len bytes): its bytes in *data (released
 * with fnbox_free; NUL-terminated for convenience, not counted in *data_len). At most 256 MiB. */
FNBOX_API int fnbox_session_read(fnbox_session *s, const char *path, size_t path_len, char **data,
                                 size_t *data_len, char **error, size_t *error_len);
/* Writes len bytes as the file at path, replacing it whole (never seen half-written), creating missing
 * parent directories. */
FNBOX_API int fnbox_session_write(fnbox_session *s, const char *path, size_t path_len, const void *data,
                                  size_t len, char **error, size_t *error_len);
/* Removes the file (or empty directory) at path. */
FNBOX_API int fnbox_session_remove(fnbox_session *s, const char *path, size_t path_len, char **error,
                                   size_t *error_len);
/* Lists the directory at path: *json = [{"name", "isDir", "size"}...] sorted by name, without "." and "..";
 * a symlink is listed as itself. A missing path or a file is FNBOX_NOT_FOUND. */
FNBOX_API int fnbox_session_list(fnbox_session *s, const char *path, size_t path_len, char **json,
                                 size_t *json_len, char **error, size_t *error_len);
/* Writes the changes made so far in the session's mounts to the host, as a call's batch sync would (each
 * checked against mount.permissions once more, written atomically beneath its mount root, onError), while
 * the session goes on (its processes wait on mount accesses meanwhile). request: {"onError"?: "rollback" |
 * "continue" | "abort"} (NULL or "" for the mount's own, mount.sync.onError); the mount's sync mode does not
 * apply: a session syncs only when asked, never on close. What a sync wrote is no longer a change: the next
 * sync writes what changed since. *report: fnbox_sync's report {success, synced, failed, skipped, ...,
 * message} plus changes {created, modified, deleted} ({path, type, size} each) it was given, and denied
 * [{path, operation, rule}], the operations the rules refused since the last sync (deniedDropped: how many
 * more, past 10000). A session without a mount is FNBOX_INVALID_REQUEST. */
FNBOX_API int fnbox_session_sync(fnbox_session *s, const char *request, size_t request_len, char **report,
                                 size_t *report_len, char **error, size_t *error_len);
/* {createdAt, lastUsedAt, expiresAt (ISO 8601 UTC), running (commands now), idleTimeout, maxLifetime,
 * workdir, state ("running", or "dead" once its sandbox died by itself: fnbox_session_dead), reason (when dead:
 * "memory limit", "killed by signal 9", "exited with code 1")} as JSON, released with fnbox_free; -1 on
 * allocation failure. */
FNBOX_API int fnbox_session_info(fnbox_session *s, char **json, size_t *json_len);
/* Whether the session's sandbox has died by itself (its init killed: the session's memory limit,
 * a signal from outside), checked now. 1: dead, every call on it from then on fails with FNBOX_SESSION_DEAD
 * (error.type SessionDead, naming the cause; a call the death ended too), and reason (cap bytes, when not
 * NULL) says why, as fnbox_session_info's; nothing runs in it any more: fnbox_session_close frees the rest.
 * 0: running, or shut down by its owner. */
FNBOX_API int fnbox_session_dead(fnbox_session *s, char *reason, size_t cap);
/* A descriptor that becomes readable (poll for POLLIN) once the session's sandbox is gone, by
 * itself or by fnbox_session_shutdown: poll it with others to notice a death at once, then ask
 * fnbox_session_dead. The session's own: never read or close it; valid until fnbox_session_close. */
FNBOX_API int fnbox_session_watch_fd(fnbox_session *s);
/* Nonzero once the session is past its idleTimeout (counted from its last request's end, not while a
 * command runs) or its maxLifetime. */
FNBOX_API int fnbox_session_expired(fnbox_session *s);
/* Stops the session: every later call on it is refused (NotFound, "it is closed"), every process in it is
 * killed now (running commands return, as killed), the sandbox stays until fnbox_session_close. Safe to
 * call while other threads are in calls on s, and more than once. */
FNBOX_API void fnbox_session_shutdown(fnbox_session *s);
/* Ends the session: shuts it down, waits for the calls in progress on other threads to return, removes
 * its sandbox (cgroup, mounts, files). Never syncs anything. No thread may call into s once this began
 * (count your references). NULL is a no-op. */
FNBOX_API void fnbox_session_close(fnbox_session *s);

/* ---- Engines (since 0.7): warm pools of sandboxes prepared ahead of their calls ----
 * An engine keeps, per language, a number of sandboxes already built (namespaces, root, cgroup and
 * limits, seccomp, Landlock) with the runtime started and the harness loaded, each waiting for one call
 * (docs/internals/pools.md). fnbox_engine_call runs a call as fnbox_call does, in one of them when the
 * request needs nothing a pooled sandbox was not built with (no mount, no permissions, the default workdir
 * and limits; timeout, cpuSeconds, stdout/stderr/result caps and files may be the request's), else cold
 * (also when the pool is empty). **A sandbox serves exactly one call** and is then destroyed; the engine's
 * thread builds a new one in the background. The result is the same as fnbox_call's, plus meta.warm: true
 * when a pooled sandbox served it. For C and C++ ("c", "cpp") a pool holds compilers started and waiting
 * for a program's source: a call whose program is not in the compile cache compiles there; and a pool
 * named "program" (shared by C and C++, as large as their sizes together) holds sandboxes waiting for a
 * compiled program, which the call writes in (read-only to it, as in a cold call): it pays only the
 * program's start.
 *
 * options is JSON (len 0: no pools): {"warm": {"python": 4, "javascript": 2, "python@py313": 2, ...} (language
 * name or alias, optionally @ a named environment (fnbox_environments_load) its sandboxes are built in, for
 * that environment's calls only:
 * sandboxes kept ready, 0 to 64; or "default": one for each of python, javascript, ruby and php whose runtime
 * is installed), "maxMemoryBytes": n (the idle sandboxes' memory, all pools together, as
 * their cgroups count it; no new one is built past it; default 1 GiB)}. Errors as fnbox_session_open's
 * (FNBOX_INVALID_REQUEST naming the field, e.g. a language with no runtime here). fnbox_engine_call is
 * thread-safe. */
typedef struct fnbox_engine fnbox_engine;
FNBOX_API int fnbox_engine_open(const char *options, size_t len, fnbox_engine **engine, char **error,
                                size_t *error_len);
FNBOX_API int fnbox_engine_call(fnbox_engine *engine, const char *request, size_t request_len,
                                const fnbox_call_options *options, char **result, size_t *result_len);
/* Waits until every pool is full: FNBOX_OK, or 1 after timeout_s (benchmarks and tests). */
FNBOX_API int fnbox_engine_wait_warm(fnbox_engine *engine, double timeout_s);
/* {"pools": {language (or "program"): {size, idle, served, missed, built, failed, died, idleMemoryBytes,
 * memoryPerSandboxBytes, lastError?}, "maxMemoryBytes": n}} released with fnbox_free; -1 on allocation
 * failure. served: calls a pooled sandbox ran; missed: calls that fitted but found the pool empty (cold);
 * died: idle sandboxes found dead and replaced. */
FNBOX_API int fnbox_engine_stats(fnbox_engine *engine, char **json, size_t *json_len);
/* Destroys every pooled sandbox. No call may be running on the engine. NULL is a no-op. */
FNBOX_API void fnbox_engine_close(fnbox_engine *engine);

/* ---- Named environments (since 0.8): the operator's system trees and package directories ----
 * Loads the environments file at path (`fnbox serve --environments FILE`): {"environments": {NAME: {"root"?:
 * "/srv/rootfs/trixie", "python"?: {"paths": [dir...]}, "javascript"?, "ruby"?, "php"?: likewise,
 * "indexes"?: {"python"?: url, "npm"?: url}}}} and makes it the process's set: from then on a request
 * (fnbox_call, fnbox_execute, fnbox_engine_call), a session's options (fnbox_session_open) and an MCP
 * configuration may say "environment": NAME; without it, the host's. Every path must be absolute and an
 * existing directory (made canonical here), every index an http(s) URL; an unknown key, a wrong type or a
 * bad name is FNBOX_INVALID_REQUEST naming the field ("environments.web.indexes.npm: ..."), and the set in
 * place stays. path NULL: no environments. Call it at start, before any other fnbox call: it must not run
 * while calls, sessions or engines are in progress (the set it replaces is freed). Errors as
 * fnbox_session_open's. The languages each environment offers and their versions are found here, once. */
FNBOX_API int fnbox_environments_load(const char *path, char **error, size_t *error_len);
/* The current set as JSON, in the file's order: [{"name", "root" (null: the host's system tree),
 * "languages": [{"name": "python", "version": "3.13.5"}, ...] (found at load: in a root, the interpreters it
 * holds, read from its files; without one, the host's), "paths": {"python": [dir...], ...}}]. Released with
 * fnbox_free; -1 on allocation failure. Thread-safe. */
FNBOX_API int fnbox_environments(char **json, size_t *json_len);

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
 * kind|operation, mode?, size?} as a result reports it (content a string, or {"base64": "..."}). The
 * caller chose the changes: a mount without `permissions` applies every one (the seed's syncFiles); with
 * `permissions` each is checked against them. Every change is written atomically beneath its mount root.
 * On return *result is the report JSON {success, synced, failed, skipped, notAttempted, rolledBack,
 * undone, onError, details, deniedByPermissions, message} (message: one sentence on what reached the host,
 * e.g. why nothing did) (plus error {message, type} when the input was refused), released with
 * fnbox_free. Returns FNBOX_OK when every change was synced or skipped by policy; 1 when at least one
 * failed (under "rollback" nothing was kept); FNBOX_INVALID_REQUEST when the input was refused (nothing
 * written; error.message names the field); FNBOX_SANDBOX_FAILED when host files cannot be written safely
 * here (error.type "KernelFeatureMissing": openat2 is missing); FNBOX_NO_RESULT on allocation failure. */
FNBOX_API int fnbox_sync(const char *input, size_t input_len, char **result, size_t *result_len);

/* The languages this build can run, in the registry's order, as a JSON array:
 * [{"name": "python", "aliases": ["py", "python3"], "runtime": "/usr/bin/python3"}, ...]. runtime is the
 * interpreter (for C and C++ the compiler) found on this host now, or null when none is installed: a call
 * in that language fails until it is (`fnbox doctor` names the package). On 0 *json is NUL-terminated
 * text released with fnbox_free and *json_len its length (json_len may be NULL); -1 on allocation
 * failure. Thread-safe. */
FNBOX_API int fnbox_languages(char **json, size_t *json_len);

FNBOX_API void fnbox_free(void *p);
FNBOX_API const char *fnbox_version(void);

#ifdef __cplusplus
}
#endif
#endif
