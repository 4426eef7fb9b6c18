/* Building the ExecutionResult JSON. Seed fields keep their names; additions: usage, truncated. */
#ifndef FB_RESULT_H
#define FB_RESULT_H
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "net/proxy.h"
#include "request/request.h"
#include "sandbox/sandbox.h"
#include "util/buf.h"
#include "util/error.h"

typedef struct fb_result {
    json_t *obj;          /* the ExecutionResult without "result" (owned) */
    fb_buf raw;           /* the result channel's buffer (owned; a large one mapped, util/mapped.h): the
                           * return value as validated JSON text at result_off, spliced in verbatim; the
                           * header before it is left in place */
    size_t result_off, result_len;
} fb_result;

/* The limits a call ran under, to name the one it hit: error.reason is a sentence naming the limit and
 * its value, error.limit the request field ("memoryBytes", "timeout"...). */
typedef struct fb_result_limits {
    double timeout_s;
    uint64_t memory_bytes, result_bytes, file_size_bytes, cpu_seconds, pids;
    uint64_t stdout_bytes, stderr_bytes; /* each stream is cut to its own cap here (truncated.stdout/stderr) */
    const char *what; /* what ran, as the messages name it: NULL "function" (a call), "command" (a shell
                         command), "code" (a program's code, a kernel's cell) */
} fb_result_limits;

/* The limits of a request (request/request.h's, defaults filled in) as the result stage names them. */
fb_result_limits fb_result_limits_of(double timeout_s, const fb_call_limits *limits);

/* A result for a call that did not run: status "error", error from err, exitCode given. */
int fb_result_from_error(fb_result *r, const fb_error *err, int exit_code, double duration_ms);
/* A result from a finished sandbox run and the harness's report on fd 3. */
int fb_result_from_outcome(fb_result *r, fb_sandbox_outcome *o, const fb_result_limits *lim, fb_error *err);
/* Whether a result channel's bytes are a whole answer: a header, and with "ok": true a value that is JSON
 * (fb_sandbox_call.result_complete: a warm call may then end before its processes are gone). */
bool fb_result_channel_complete(const char *data, size_t len);
/* A program's outcome judged by how it ended, with no harness (execute requests): exit 0 "success", any
 * other exit "error" with that exitCode; a timeout (124), a cancel (143), a signal (128 + n, "crash", the
 * memory limit named) as for a call. */
int fb_result_from_program(fb_result *r, fb_sandbox_outcome *o, const fb_result_limits *lim, fb_error *err);
/* Adds meta {duration, signatureSource}. */
int fb_result_set_meta(fb_result *r, double duration_ms, const char *signature_source);
/* meta.dependencies (core/dependencies.h's fb_deps_meta; taken, NULL: nothing); after set_meta. */
void fb_result_set_dependencies(fb_result *r, json_t *deps);
/* Adds meta.compile ("hit", "miss" or "off": the compile cache) for compiled languages; after set_meta. */
int fb_result_set_compile(fb_result *r, const char *cache);
/* meta.warm: true, the call ran in a warm pool's prepared sandbox (after fb_result_set_meta). */
int fb_result_set_warm(fb_result *r);
/* Adds `network`: every connection the call's proxy allowed or refused ({"protocol", "host", "port",
 * "address" (null when refused before resolution), "allowed", "reason", "bytesUp", "bytesDown"
 * [, "error": why an allowed connection could not be made]}). */
int fb_result_set_network(fb_result *r, const fb_proxy *proxy, fb_error *err);
/* Serializes to one line of JSON (caller frees). */
char *fb_result_render(const fb_result *r, size_t *len);
/* The same, moving the value's text into the answer (its buffer grows around it): a large value is never
 * held twice. r has no value afterwards: render once, then fb_result_free. */
char *fb_result_render_final(fb_result *r, size_t *len);
/* Whether the call's status is "success". */
bool fb_result_succeeded(const fb_result *r);
void fb_result_free(fb_result *r);

/* The C API's return code for a run that failed with err before it ran: FNBOX_SANDBOX_FAILED (set-up),
 * FNBOX_INVALID_REQUEST (the request), else FNBOX_OK (the result says what happened). */
int fb_result_code_of(const fb_error *err);
/* Renders the result of a run that did not happen (status "error", err, exitCode 1, meta) into *result and
 * returns code, or FNBOX_NO_RESULT when out of memory. */
int fb_result_fail(const fb_error *err, int code, double duration_ms, const char *signature_source, char **result,
                   size_t *result_len);

#endif
