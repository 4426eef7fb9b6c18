/* ExecutionResult construction. The harness's return value arrives as JSON text on its own channel;
 * it is validated here and spliced in verbatim, so big integers keep every digit. */
#include "core/result.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "fnbox.h"
#include "request/limits.h"
#include "util/defences.h"
#include "util/json_scan.h"
#include "util/mapped.h"
#include "util/utf8.h"

static void set_text(json_t *obj, const char *key, const char *s, size_t len)
{
    size_t clean_len = 0;
    char *clean = fb_utf8_sanitize(s ? s : "", s ? len : 0, &clean_len);
    json_object_set_new(obj, key, clean ? json_stringn(clean, clean_len) : json_string(""));
    free(clean);
}

static void set_error(json_t *obj, const char *type, const char *message, const char *stack)
{
    json_t *e = json_object();
    set_text(e, "message", message, strlen(message));
    set_text(e, "type", type, strlen(type));
    if (stack)
        set_text(e, "stack", stack, strlen(stack));
    json_object_set_new(obj, "error", e);
}

/* A limit was hit: the error also says which (`limit`, the request field) and why, in a sentence. */
static void set_limit_error(json_t *obj, fb_errkind kind, const char *message, const char *limit, const char *reason)
{
    set_error(obj, fb_errkind_name(kind), message, NULL);
    json_t *e = json_object_get(obj, "error");
    json_object_set_new(e, "limit", json_string(limit));
    set_text(e, "reason", reason, strlen(reason));
}

/* "256 MiB", "1.5 KiB" or "1000 bytes". */
static void human_size(uint64_t n, char *buf, size_t cap)
{
    static const char *const units[] = {"GiB", "MiB", "KiB"};
    for (int i = 0; i < 3; i++) {
        uint64_t u = 1ULL << (10 * (3 - i));
        if (n >= u) {
            if (n % u == 0)
                snprintf(buf, cap, "%llu %s", (unsigned long long)(n / u), units[i]);
            else
                snprintf(buf, cap, "%.1f %s", (double)n / (double)u, units[i]);
            return;
        }
    }
    snprintf(buf, cap, "%llu bytes", (unsigned long long)n);
}

static void set_status(json_t *obj, const char *status)
{
    json_object_set_new(obj, "status", json_string(status));
    json_object_set_new(obj, "success", json_boolean(strcmp(status, "success") == 0));
}

int fb_result_from_error(fb_result *r, const fb_error *err, int exit_code, double duration_ms)
{
    memset(r, 0, sizeof *r);
    r->obj = json_object();
    if (!r->obj)
        return -1;
    set_status(r->obj, "error");
    set_error(r->obj, fb_error_type(err), err->message, NULL);
    json_object_set_new(r->obj, "stdout", json_string(""));
    json_object_set_new(r->obj, "stderr", json_string(""));
    json_object_set_new(r->obj, "exitCode", json_integer(exit_code));
    return 0;
}

/* The harness header is one JSON line: {"ok":true} or {"ok":false,"error":{...},"exitCode":n}. */
static json_t *parse_header(const fb_buf *res, size_t *body_off)
{
    if (!res->data || res->len == 0)
        return NULL;
    const char *nl = memchr(res->data, '\n', res->len);
    if (!nl)
        return NULL;
    *body_off = (size_t)(nl - res->data) + 1;
    json_t *h = json_loadb(res->data, (size_t)(nl - res->data), 0, NULL);
    if (h && !json_is_object(h)) {
        json_decref(h);
        return NULL;
    }
    return h;
}

static const char *str_field(json_t *obj, const char *key, const char *dflt)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return s ? s : dflt;
}

/* The result channel is a file (a memfd), so RLIMIT_FSIZE stops it at fileSizeBytes: Python and Node
 * ignore SIGXFSZ and see EFBIG (a cut value), the others die of SIGXFSZ. */
static void fsize_error(fb_result *r, const fb_result_limits *lim)
{
    char size[32], msg[200], reason[300];
    human_size(lim->file_size_bytes, size, sizeof size);
    set_status(r->obj, "error");
    snprintf(msg, sizeof msg, "the return value is larger than %s, the largest file the function may write", size);
    snprintf(reason, sizeof reason,
             "the result channel is a file, which limits.fileSizeBytes (%s) bounds; return less, or raise "
             "fileSizeBytes and resultBytes",
             size);
    set_limit_error(r->obj, FB_ERR_RESULT_TOO_LARGE, msg, "fileSizeBytes", reason);
}

/* Whether the value's text is JSON as jansson reads it (numbers as reals, so integers beyond 64 bits pass
 * while the text keeps every digit). The scanner decides without building a tree (a large value would
 * cost tens of times its size); jansson, only on a refusal, words it. 0 valid, else msg says why. */
static int check_value(const char *body, size_t len, char *msg, size_t cap)
{
    fb_json_scan scan = {.reals_in_range = true};
    if (fb_json_scan_text(body, len, &scan) == 0)
        return 0;
    json_error_t jerr;
    json_t *v = json_loadb(body, len, JSON_DECODE_ANY | JSON_ALLOW_NUL | JSON_DECODE_INT_AS_REAL, &jerr);
    if (v) /* jansson drops a NUL byte after a number; spliced in, the answer would not be JSON */
        snprintf(msg, cap, "the return value on the result channel is not valid JSON (invalid byte at byte %zu)",
                 scan.error_at);
    else if (strstr(jerr.text, "depth"))
        snprintf(msg, cap, "the return value nests deeper than %d levels, the limit for JSON documents",
                 JSON_PARSER_MAX_DEPTH);
    else
        snprintf(msg, cap, "the return value on the result channel is not valid JSON (%s at byte %d)", jerr.text,
                 jerr.position);
    json_decref(v);
    return -1;
}

bool fb_result_channel_complete(const char *data, size_t len)
{
    fb_buf res = {.data = (char *)data, .len = len};
    size_t off = 0;
    json_t *h = parse_header(&res, &off);
    bool complete = h && (!json_is_true(json_object_get(h, "ok")) || off < len);
    if (complete && json_is_true(json_object_get(h, "ok"))) {
        fb_json_scan scan = {.reals_in_range = true};
        complete = fb_json_scan_text(data + off, len - off, &scan) == 0;
    }
    json_decref(h);
    return complete;
}

/* The value's text becomes the result's (o->result is emptied) where it lies, after the channel's header:
 * a value may be hundreds of megabytes, and the answer moves it once, into its place (splice). */
static int take_value(fb_result *r, fb_sandbox_outcome *o, size_t off)
{
    fb_buf_free(&r->raw);
    r->raw = o->result;
    r->result_off = off;
    r->result_len = o->result.len - off;
    fb_buf_init(&o->result, 0);
    return 0;
}

static int accept_value(fb_result *r, fb_sandbox_outcome *o, size_t off, const fb_result_limits *lim)
{
    const char *body = o->result.data + off;
    size_t len = o->result.len - off;
    char msg[400];
    bool valid = !o->result.truncated && check_value(body, len, msg, sizeof msg) == 0;
    if (!valid && !o->result.truncated && o->result.len >= lim->file_size_bytes) {
        fsize_error(r, lim);
        return 1;
    }
    if (!valid && o->result.truncated) {
        char size[32], reason[300];
        human_size(lim->result_bytes, size, sizeof size);
        set_status(r->obj, "error");
        snprintf(msg, sizeof msg, "the return value is larger than the result limit of %s", size);
        snprintf(reason, sizeof reason,
                 "the return value took more than limits.resultBytes (%s) on the result channel; return less, or "
                 "raise limits.resultBytes",
                 size);
        set_limit_error(r->obj, FB_ERR_RESULT_TOO_LARGE, msg, "resultBytes", reason);
        return 1;
    }
    if (!valid) {
        set_status(r->obj, "error");
        set_error(r->obj, fb_errkind_name(FB_ERR_SERIALIZATION), msg, NULL);
        return 1;
    }
    if (take_value(r, o, off) < 0)
        return -1;
    set_status(r->obj, "success");
    json_object_set_new(r->obj, "result", json_null()); /* placeholder: keeps the field order */
    return 0;
}

static void from_status(fb_result *r, const fb_sandbox_outcome *o, const fb_result_limits *lim, int *exit_code);

static int from_header(fb_result *r, fb_sandbox_outcome *o, json_t *h, size_t off,
                       const fb_result_limits *lim, int *exit_code)
{
    if (json_is_true(json_object_get(h, "ok"))) {
        int rc = accept_value(r, o, off, lim);
        *exit_code = rc == 0 ? 0 : 1;
        /* Killed while writing the value (the memory limit, a signal): the signal tells what happened, not
         * the half-written text. SIGXFSZ there is the result channel (a file) outgrowing fileSizeBytes. A
         * SIGKILL that neither the memory limit nor fnbox sent is the JavaScript harness ending itself once
         * the value was written (javascript_harness.js, reallyExit): the value's own fault stands. */
        bool own_kill = o->term_signal == SIGKILL && !o->oom_killed && !o->timed_out && !o->cancelled;
        if (rc == 1 && o->term_signal == SIGXFSZ && !o->oom_killed)
            fsize_error(r, lim);
        else if (rc == 1 && o->term_signal && !own_kill) {
            from_status(r, o, lim, exit_code);
        }
        return rc < 0 ? -1 : 0;
    }
    json_t *e = json_object_get(h, "error");
    set_status(r->obj, "error");
    set_error(r->obj, str_field(e, "type", "Error"), str_field(e, "message", ""), str_field(e, "stack", NULL));
    json_t *code = json_object_get(h, "exitCode");
    *exit_code = json_is_integer(code) ? (int)json_integer_value(code) : 1;
    return 0;
}

/* What ran, for the messages: "the function", or what an execute ran ("the command", "the code"). */
static const char *what_of(const fb_result_limits *lim)
{
    return lim->what ? lim->what : "function";
}

/* Whose processes the reasons speak of: a function's are the call's. */
static const char *whose(const fb_result_limits *lim)
{
    return lim->what ? lim->what : "call";
}

/* When the pids limit refused a fork or a thread, the likelier cause of a call that hung, crashed or gave no
 * result: a runtime that cannot start its threads may abort, or wait forever for one (Node does). */
static bool pids_refused(fb_result *r, const fb_sandbox_outcome *o, const fb_result_limits *lim, fb_errkind kind,
                         const char *msg)
{
    if (!o->pids_refused)
        return false;
    char reason[400];
    snprintf(reason, sizeof reason,
             "limits.pids (%llu, processes and threads together) refused %llu new ones during the call; a runtime "
             "that cannot start its threads may fail or wait for them forever (Node does); raise limits.pids "
             "(default %d, at most %d)",
             (unsigned long long)lim->pids, (unsigned long long)o->pids_refused, FB_DEFAULT_PIDS, FB_MAX_PIDS);
    set_limit_error(r->obj, kind, msg, "pids", reason);
    return true;
}

static void from_signal(fb_result *r, const fb_sandbox_outcome *o, const fb_result_limits *lim)
{
    char msg[256], reason[400], size[32];
    if (o->oom_killed && o->term_signal == SIGKILL) {
        human_size(lim->memory_bytes, size, sizeof size);
        snprintf(msg, sizeof msg, "the %s exceeded its memory limit of %s and was killed", what_of(lim), size);
        snprintf(reason, sizeof reason,
                 "the %s's processes together (files in /tmp and the workspace included) used more than "
                 "limits.memoryBytes (%s), and the kernel's out-of-memory killer ended them; use less memory, or "
                 "raise limits.memoryBytes",
                 whose(lim), size);
        set_limit_error(r->obj, FB_ERR_MEMORY_LIMIT, msg, "memoryBytes", reason);
    } else if (o->term_signal == SIGXCPU) {
        unsigned long long cpu = lim->cpu_seconds;
        snprintf(msg, sizeof msg, "the %s used more than %llu s of CPU time and was killed", what_of(lim), cpu);
        snprintf(reason, sizeof reason,
                 "a process used limits.cpuSeconds (%llu s of CPU time; by default the timeout + %d s, which "
                 "threads running in parallel reach before the wall clock does); use less CPU, or raise "
                 "limits.cpuSeconds",
                 cpu, FB_CPU_SLACK_S);
        set_limit_error(r->obj, FB_ERR_CPU_LIMIT, msg, "cpuSeconds", reason);
    } else if (o->term_signal == SIGXFSZ) {
        human_size(lim->file_size_bytes, size, sizeof size);
        snprintf(msg, sizeof msg, "the %s wrote a file larger than %s and was killed", what_of(lim), size);
        snprintf(reason, sizeof reason,
                 "a write would have grown a file beyond limits.fileSizeBytes (%s); the runtime did not catch "
                 "SIGXFSZ (Python does, and raises OSError EFBIG instead)",
                 size);
        set_limit_error(r->obj, FB_ERR_FILE_SIZE_LIMIT, msg, "fileSizeBytes", reason);
    } else {
        snprintf(msg, sizeof msg, "the process was killed by signal %d (SIG%s: %s)", o->term_signal,
                 sigabbrev_np(o->term_signal) ? sigabbrev_np(o->term_signal) : "?",
                 sigdescr_np(o->term_signal) ? sigdescr_np(o->term_signal) : "unknown");
        if (!pids_refused(r, o, lim, FB_ERR_CRASH, msg))
            set_error(r->obj, fb_errkind_name(FB_ERR_CRASH), msg, NULL);
    }
}

static void from_status(fb_result *r, const fb_sandbox_outcome *o, const fb_result_limits *lim, int *exit_code)
{
    char msg[256], reason[300];
    if (o->timed_out) {
        set_status(r->obj, "timeout");
        snprintf(msg, sizeof msg, "the %s did not finish within the %g s timeout", what_of(lim), lim->timeout_s);
        snprintf(reason, sizeof reason,
                 "the %s's wall-clock time reached its timeout of %g s, and every process %s was killed; raise "
                 "`timeout` (at most %g s)",
                 whose(lim), lim->timeout_s, lim->what ? "it started" : "of the call", FB_MAX_TIMEOUT_S);
        if (!pids_refused(r, o, lim, FB_ERR_TIMEOUT, msg))
            set_limit_error(r->obj, FB_ERR_TIMEOUT, msg, "timeout", reason);
        *exit_code = 124;
    } else if (o->cancelled) {
        set_status(r->obj, "terminated");
        if (lim->what)
            snprintf(msg, sizeof msg, "the %s was terminated before it finished", lim->what);
        else
            snprintf(msg, sizeof msg, "the call was terminated before the function finished");
        set_error(r->obj, fb_errkind_name(FB_ERR_TERMINATED), msg, NULL);
        *exit_code = 143;
    } else if (o->term_signal) {
        set_status(r->obj, "crash");
        from_signal(r, o, lim);
        *exit_code = 128 + o->term_signal;
    } else {
        set_status(r->obj, "error");
        snprintf(msg, sizeof msg, "the process exited with code %d without returning a result", o->exit_code);
        if (!pids_refused(r, o, lim, FB_ERR_NO_RESULT, msg))
            set_error(r->obj, fb_errkind_name(FB_ERR_NO_RESULT), msg, NULL);
        *exit_code = o->exit_code ? o->exit_code : 1;
    }
}

/* The sandbox captured up to the larger of both caps; each stream keeps its own. */
static void cap_stream(fb_buf *b, uint64_t cap)
{
    if (b->len > cap) {
        b->len = (size_t)cap;
        b->truncated = true;
    }
}

static void add_run(fb_result *r, fb_sandbox_outcome *o, const fb_result_limits *lim, int exit_code);

int fb_result_from_outcome(fb_result *r, fb_sandbox_outcome *o, const fb_result_limits *lim, fb_error *err)
{
    memset(r, 0, sizeof *r);
    r->obj = json_object();
    if (!r->obj)
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, 0, "out of memory");
    size_t off = 0;
    int exit_code = 0;
    json_t *h = (o->timed_out || o->cancelled) ? NULL : parse_header(&o->result, &off);
    int rc = 0;
    if (h)
        rc = from_header(r, o, h, off, lim, &exit_code);
    else
        from_status(r, o, lim, &exit_code);
    json_decref(h);
    if (rc < 0)
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, 0, "out of memory");
    add_run(r, o, lim, exit_code);
    return 0;
}

int fb_result_from_program(fb_result *r, fb_sandbox_outcome *o, const fb_result_limits *lim, fb_error *err)
{
    memset(r, 0, sizeof *r);
    r->obj = json_object();
    if (!r->obj)
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, 0, "out of memory");
    int exit_code = o->exit_code;
    if (o->exited && o->oom_killed && o->exit_code == 128 + SIGKILL && !o->timed_out && !o->cancelled) {
        /* A shell whose child the memory limit killed answers 137 itself: say what killed it. */
        fb_sandbox_outcome killed = *o;
        killed.exited = false;
        killed.term_signal = SIGKILL;
        from_status(r, &killed, lim, &exit_code);
    } else if (o->exited && !o->timed_out && !o->cancelled) {
        set_status(r->obj, o->exit_code == 0 ? "success" : "error");
    } else {
        from_status(r, o, lim, &exit_code);
    }
    add_run(r, o, lim, exit_code);
    return 0;
}

/* stdout, stderr (each cut to its own cap), exitCode, usage, truncated. */
static void add_run(fb_result *r, fb_sandbox_outcome *o, const fb_result_limits *lim, int exit_code)
{
    if (!fb_defence_disabled("output-limit")) { /* test builds: the sandbox's caps and these both off */
        cap_stream(&o->out, lim->stdout_bytes);
        cap_stream(&o->errout, lim->stderr_bytes);
    }
    set_text(r->obj, "stdout", o->out.data, o->out.len);
    set_text(r->obj, "stderr", o->errout.data, o->errout.len);
    json_object_set_new(r->obj, "exitCode", json_integer(exit_code));
    json_object_set_new(r->obj, "usage", json_pack("{s:f, s:f, s:I}", "wallMs", o->wall_ms, "cpuMs", o->cpu_ms,
                                                     "peakMemoryBytes", (json_int_t)o->peak_memory_bytes));
    json_object_set_new(r->obj, "truncated", json_pack("{s:b, s:b}", "stdout", o->out.truncated, "stderr",
                                                         o->errout.truncated));
}

int fb_result_set_warm(fb_result *r)
{
    json_t *meta = json_object_get(r->obj, "meta");
    return json_is_object(meta) ? json_object_set_new(meta, "warm", json_true()) : -1;
}

int fb_result_set_meta(fb_result *r, double duration_ms, const char *signature_source)
{
    json_t *meta = json_pack("{s:f}", "duration", duration_ms);
    if (!meta)
        return -1;
    if (signature_source)
        json_object_set_new(meta, "signatureSource", json_string(signature_source));
    return json_object_set_new(r->obj, "meta", meta);
}

int fb_result_set_compile(fb_result *r, const char *cache)
{
    json_t *meta = json_object_get(r->obj, "meta");
    return json_is_object(meta) ? json_object_set_new(meta, "compile", json_string(cache)) : -1;
}

void fb_result_set_dependencies(fb_result *r, json_t *deps)
{
    json_t *meta = json_object_get(r->obj, "meta");
    if (deps && json_is_object(meta))
        json_object_set_new(meta, "dependencies", deps);
    else
        json_decref(deps);
}

/* The result's JSON without the value, a unique marker where the value goes: a JSON string with a random
 * token (a quote inside any other string is escaped, so it cannot occur elsewhere). *at: the marker in
 * the text, *mlen: its length with the quotes. */
static char *render_around(const fb_result *r, char **at, size_t *mlen)
{
    unsigned char rnd[16];
    char marker[64];
    if (getrandom(rnd, sizeof rnd, 0) != sizeof rnd)
        return NULL;
    int m = snprintf(marker, sizeof marker, "fnbox-result-");
    for (size_t i = 0; i < sizeof rnd; i++)
        m += snprintf(marker + m, sizeof marker - (size_t)m, "%02x", rnd[i]);
    json_t *copy = json_copy(r->obj);
    json_object_set_new(copy, "result", json_string(marker));
    char *s = json_dumps(copy, JSON_COMPACT | JSON_REAL_PRECISION(10));
    json_decref(copy);
    if (!s)
        return NULL;
    char quoted[80];
    snprintf(quoted, sizeof quoted, "\"%s\"", marker);
    *at = strstr(s, quoted);
    *mlen = strlen(quoted);
    if (!*at) {
        free(s);
        return NULL;
    }
    return s;
}

static char *render_plain(const fb_result *r, size_t *len)
{
    char *s = json_dumps(r->obj, JSON_COMPACT | JSON_REAL_PRECISION(10));
    if (s && len)
        *len = strlen(s);
    return s;
}

/* r's buffer grown to cap bytes, the value moved to just after the head (in place: a large block grows by
 * remapping, not copying), and taken from r. */
static char *take_buffer(fb_result *r, size_t head, size_t cap)
{
    if (fb_buf_reserve(&r->raw, cap) < 0)
        return NULL;
    char *out = r->raw.data;
    memmove(out + head, out + r->result_off, r->result_len);
    fb_buf_init(&r->raw, 0);
    return out;
}

/* The answer with the value's text put in place of its placeholder: into a new buffer (copy), or, when take
 * (r itself) gives the value up, around it where it lies: a mapped channel's pages stay where they are and
 * the head and tail are written before and after them (util/mapped.h); a heap buffer grows around it, the
 * value moving once, from after the channel's header to after the answer's head. Either way the answer
 * never needs the value's text twice. */
static char *splice(const fb_result *r, fb_result *take, size_t *len)
{
    if (!r->raw.data)
        return render_plain(r, len);
    char *at;
    size_t qlen;
    char *s = render_around(r, &at, &qlen);
    if (!s)
        return NULL;
    size_t head = (size_t)(at - s), tail = strlen(at + qlen), vlen = r->result_len, total = head + vlen + tail;
    char *out = NULL;
    if (take && take->raw.map_len) /* the value stays in the file's pages; the head and tail go around it */
        out = fb_mapped_answer(&take->raw, r->result_off, vlen, s, head, at + qlen, tail, NULL);
    if (!out) { /* not mapped, or the mapping could not be laid out (the buffer is whole then) */
        if (take)
            out = take_buffer(take, head, r->result_off + vlen > total ? r->result_off + vlen : total);
        else if ((out = malloc(total + 1)) != NULL)
            memcpy(out + head, r->raw.data + r->result_off, vlen);
        if (out) {
            memcpy(out, s, head);
            memcpy(out + head + vlen, at + qlen, tail + 1);
        }
    }
    if (out && len)
        *len = total;
    if (out && take)
        take->result_off = take->result_len = 0;
    free(s);
    return out;
}

char *fb_result_render(const fb_result *r, size_t *len)
{
    return splice(r, NULL, len);
}

char *fb_result_render_final(fb_result *r, size_t *len)
{
    return splice(r, r, len);
}

void fb_result_free(fb_result *r)
{
    json_decref(r->obj);
    fb_buf_free(&r->raw);
    memset(r, 0, sizeof *r);
}

bool fb_result_succeeded(const fb_result *r)
{
    return json_is_true(json_object_get(r->obj, "success"));
}

static json_t *text_or_null(const char *s)
{
    return s && s[0] ? json_string(s) : json_null();
}

static json_t *network_entry(const fb_proxy_log_entry *e)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    int bad = json_object_set_new(o, "protocol", text_or_null(e->protocol)) |
              json_object_set_new(o, "host", text_or_null(e->host)) |
              json_object_set_new(o, "port", e->port ? json_integer(e->port) : json_null()) |
              json_object_set_new(o, "address", text_or_null(e->address)) |
              json_object_set_new(o, "allowed", json_boolean(e->allowed)) |
              json_object_set_new(o, "reason", json_string(e->reason ? e->reason : "")) |
              json_object_set_new(o, "bytesUp", json_integer((json_int_t)e->up)) |
              json_object_set_new(o, "bytesDown", json_integer((json_int_t)e->down));
    if (!bad && e->error && e->error[0])
        bad = json_object_set_new(o, "error", json_string(e->error));
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

int fb_result_set_network(fb_result *r, const fb_proxy *proxy, fb_error *err)
{
    json_t *arr = json_array();
    fb_proxy_log_entry e;
    for (size_t i = 0; arr && fb_proxy_log_at(proxy, i, &e); i++)
        if (json_array_append_new(arr, network_entry(&e)) < 0) {
            json_decref(arr);
            arr = NULL;
        }
    if (!arr || json_object_set_new(r->obj, "network", arr) < 0)
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "the network log");
    return 0;
}

fb_result_limits fb_result_limits_of(double timeout_s, const fb_call_limits *l)
{
    return (fb_result_limits){
        .timeout_s = timeout_s,
        .memory_bytes = l->memory_bytes,
        .result_bytes = l->result_bytes,
        .file_size_bytes = l->file_size_bytes,
        .cpu_seconds = l->cpu_seconds,
        .pids = l->pids,
        .stdout_bytes = l->stdout_bytes,
        .stderr_bytes = l->stderr_bytes,
    };
}

int fb_result_code_of(const fb_error *err)
{
    switch (fb_errkind_family(err->kind)) {
    case FB_ERRFAM_SETUP:
        return FNBOX_SANDBOX_FAILED;
    case FB_ERRFAM_REQUEST:
        return FNBOX_INVALID_REQUEST;
    default:
        return FNBOX_OK;
    }
}

int fb_result_fail(const fb_error *err, int code, double duration_ms, const char *signature_source, char **result,
                   size_t *result_len)
{
    fb_result res;
    if (fb_result_from_error(&res, err, 1, duration_ms) < 0)
        return FNBOX_NO_RESULT;
    fb_result_set_meta(&res, duration_ms, signature_source);
    *result = fb_result_render(&res, result_len);
    fb_result_free(&res);
    return *result ? code : FNBOX_NO_RESULT;
}
