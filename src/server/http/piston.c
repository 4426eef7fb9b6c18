/* The Piston v2 API (engineer-man/piston, api/src/api/v2.js) over fnbox_execute, so that Piston's clients
 * work unchanged:
 *   GET  /api/v2/runtimes  [{language, version, aliases, runtime?}]: the runtimes installed here, with the
 *                          versions they report of themselves (fnbox_execute_languages)
 *   POST /api/v2/execute   {language, version, files: [{name?, content, encoding?}], stdin?, args?,
 *                          compile_timeout?, run_timeout?, compile_cpu_time?, run_cpu_time?,
 *                          compile_memory_limit?, run_memory_limit?} -> {language, version, run, compile?}
 * Every file is placed in the working directory under its name and the first utf8 one runs from there
 * (the execute request's `main`), as Piston runs it; args are the program's. A bad request is 400 {"message": "..."} with Piston's own texts;
 * every outcome of the program is 200. version: "*", the exact version, or a prefix at a dot ("3",
 * "3.11"); Piston's other semver ranges are not read. Compile and run share one sandbox and one deadline
 * (compile_timeout + run_timeout for compiled languages) and one memory limit (the larger).
 * The named environments (fnbox_environments) add their languages' versions to the runtimes, and a version
 * only an environment has runs there ("environment" in the execute request); the host's comes first. */
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fnbox.h"
#include "server/http/internal.h"
#include "util/base64.h"
#include "util/buf.h"

#define PISTON_TAKES "POST /api/v2/execute takes a Piston execute request JSON"
#define PISTON_RUN_TIMEOUT_MS 3000.0      /* Piston's defaults */
#define PISTON_COMPILE_TIMEOUT_MS 10000.0
#define PISTON_MAX_TIMEOUT_MS 3600000.0   /* fnbox's timeout cap (request/limits.h FB_MAX_TIMEOUT_S) */
#define PISTON_OUTPUT_MAX ((size_t)2 * 1024 * 1024) /* run.output: both default stream caps */

/* fnbox's execute languages under Piston's names (its packages' language and aliases). */
typedef struct piston_lang {
    const char *fnbox;            /* fnbox_execute's name */
    const char *language;         /* Piston's */
    const char *aliases[6];
    const char *runtime;          /* Piston's `runtime` field, or NULL */
    bool compiled;
} piston_lang;

static const piston_lang k_langs[] = {
    {"python3", "python", {"py", "py3", "python3", NULL}, NULL, false},
    {"node", "javascript", {"node-javascript", "node-js", "javascript", "js", "node", NULL}, "node", false},
    {"ruby", "ruby", {"ruby3", "rb", NULL}, NULL, false},
    {"php", "php", {NULL}, NULL, false},
    {"bash", "bash", {"sh", NULL}, NULL, false},
    {"c", "c", {"gcc", NULL}, "gcc", true},
    {"cpp", "c++", {"cpp", "g++", NULL}, "gcc", true},
};
enum { NLANGS = sizeof k_langs / sizeof *k_langs };

/* 400 {"message": text}, as Piston answers a request it refuses. */
static fb_http_reply message_reply(unsigned status, const char *text)
{
    json_t *doc = json_pack("{s:s}", "message", text);
    char *body = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
    json_decref(doc);
    return body ? fb_http_reply_json(status, body, strlen(body), free, false) : (fb_http_reply){0, NULL, 0};
}

/* An environment's language under fnbox_execute's name. */
static const char *execute_name(const char *env_lang)
{
    static const char *const names[][2] = {{"python", "python3"}, {"javascript", "node"}, {"ruby", "ruby"},
                                           {"php", "php"}};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(names[i][0], env_lang) == 0)
            return names[i][1];
    return NULL;
}

/* Appends each environment's languages to langs as {name, version, runtime: "environment", environment}. */
static int add_environments(json_t *langs)
{
    char *text = NULL;
    if (fnbox_environments(&text, NULL) < 0)
        return -1;
    json_t *envs = json_loads(text, 0, NULL);
    fnbox_free(text);
    size_t i, j;
    json_t *e, *l;
    int rc = envs ? 0 : -1;
    json_array_foreach(envs, i, e) {
        json_array_foreach(json_object_get(e, "languages"), j, l) {
            const char *name = execute_name(json_string_value(json_object_get(l, "name")));
            if (name && rc == 0)
                rc = json_array_append_new(langs, json_pack("{s:s, s:O, s:s, s:O}", "name", name, "version",
                                                            json_object_get(l, "version"), "runtime", "environment",
                                                            "environment", json_object_get(e, "name")));
        }
    }
    json_decref(envs);
    return rc;
}

/* The host's languages (fnbox_execute_languages), then the environments'. */
static json_t *installed_languages(void)
{
    char *text = NULL;
    if (fnbox_execute_languages(&text, NULL) < 0)
        return NULL;
    json_t *v = json_loads(text, 0, NULL);
    fnbox_free(text);
    if (v && add_environments(v) < 0) {
        json_decref(v);
        v = NULL;
    }
    return v;
}

/* Whether list already holds a runtime of language at version (an environment with the host's version). */
static bool listed_runtime(json_t *list, const char *language, const char *version)
{
    size_t i;
    json_t *r;
    json_array_foreach(list, i, r) {
        if (strcmp(json_string_value(json_object_get(r, "language")), language) == 0 &&
            strcmp(json_string_value(json_object_get(r, "version")), version) == 0)
            return true;
    }
    return false;
}

static json_t *runtime_json(const piston_lang *p, const char *version)
{
    json_t *aliases = json_array();
    for (const char *const *a = p->aliases; aliases && *a; a++)
        json_array_append_new(aliases, json_string(*a));
    json_t *o = json_pack("{s:s, s:s, s:o}", "language", p->language, "version", version, "aliases", aliases);
    if (o && p->runtime)
        json_object_set_new(o, "runtime", json_string(p->runtime));
    return o;
}

fb_http_reply fb_http_handle_piston_runtimes(fb_http_exchange *x)
{
    (void)x;
    json_t *langs = installed_languages();
    json_t *list = json_array();
    for (size_t i = 0; langs && list && i < NLANGS; i++) {
        size_t j;
        json_t *l;
        json_array_foreach(langs, j, l) {
            const char *version = json_string_value(json_object_get(l, "version"));
            if (strcmp(json_string_value(json_object_get(l, "name")), k_langs[i].fnbox) == 0 &&
                json_is_string(json_object_get(l, "runtime")) && version &&
                !listed_runtime(list, k_langs[i].language, version))
                json_array_append_new(list, runtime_json(&k_langs[i], version));
        }
    }
    json_decref(langs);
    char *body = list ? json_dumps(list, JSON_COMPACT) : NULL;
    json_decref(list);
    if (!body) {
        fb_error err;
        fb_set_error(&err, FB_ERR_OUT_OF_MEMORY, 0, "runtimes: out of memory");
        return fb_http_reply_error(&err);
    }
    return fb_http_reply_json(MHD_HTTP_OK, body, strlen(body), free, false);
}

/* "*", the exact version, or a prefix ending at a dot of it ("3" and "3.11" match "3.11.2"). */
static bool version_matches(const char *want, const char *have)
{
    size_t n = strlen(want);
    return strcmp(want, "*") == 0 || strcmp(want, have) == 0 ||
           (n > 0 && strncmp(want, have, n) == 0 && have[n] == '.');
}

/* The language and the first runtime of it (the host's, then each environment's) whose version matches:
 * *have its version, *env the environment it is in (NULL: the host's). */
static const piston_lang *find_lang(const char *language, const char *version, json_t *langs, const char **have,
                                    const char **env)
{
    for (size_t i = 0; i < NLANGS; i++) {
        const piston_lang *p = &k_langs[i];
        bool named = strcmp(p->language, language) == 0;
        for (const char *const *a = p->aliases; !named && *a; a++)
            named = strcmp(*a, language) == 0;
        size_t j;
        json_t *l;
        json_array_foreach(langs, j, l) {
            *have = json_string_value(json_object_get(l, "version"));
            *env = json_string_value(json_object_get(l, "environment"));
            if (named && strcmp(json_string_value(json_object_get(l, "name")), p->fnbox) == 0 &&
                json_is_string(json_object_get(l, "runtime")) && *have && version_matches(version, *have))
                return p;
        }
    }
    *have = *env = NULL;
    return NULL;
}

/* Piston's clients post JSON under any Content-Type (piston-client: text/plain, as fetch labels a string
 * body): the body is read as JSON whatever it says, and a body that is not JSON is Piston's 400. */
int fb_http_piston_begin(fb_http_exchange *x, fb_error *err)
{
    return fb_http_run_begin_any_type(x, PISTON_TAKES, err);
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* One file's bytes as a `files` value of an execute request: text, or {"base64"} for binary. */
static json_t *file_content(json_t *file, const char *encoding, char *msg, size_t cap, size_t i)
{
    const char *content = json_string_value(json_object_get(file, "content"));
    size_t len = json_string_length(json_object_get(file, "content"));
    if (strcmp(encoding, "utf8") == 0)
        return json_stringn(content, len);
    if (strcmp(encoding, "base64") == 0)
        return json_pack("{s:s%}", "base64", content, len);
    if (strcmp(encoding, "hex") != 0 || len % 2) {
        snprintf(msg, cap, "files[%zu].encoding: must be utf8, base64 or hex (with whole bytes)", i);
        return NULL;
    }
    unsigned char *bytes = malloc(len / 2 + 1);
    for (size_t j = 0; bytes && j < len / 2; j++) {
        int hi = hex_digit(content[2 * j]), lo = hex_digit(content[2 * j + 1]);
        if (hi < 0 || lo < 0) {
            snprintf(msg, cap, "files[%zu].content: not hex", i);
            free(bytes);
            return NULL;
        }
        bytes[j] = (unsigned char)(hi << 4 | lo);
    }
    char *b64 = bytes ? fb_base64_encode(bytes, len / 2) : NULL;
    free(bytes);
    json_t *o = b64 ? json_pack("{s:s}", "base64", b64) : NULL;
    free(b64);
    return o;
}

/* Every file into `files` under its name (unnamed ones file<i>.code, as Piston names them; a leading '/'
 * dropped: Piston joins every name to the submission directory), and `main` naming the first utf8 one:
 * each file lands in the working directory and the first runs from there, so `import helper`,
 * require('./helper') or #include "helper.h" finds the others as under Piston. */
static bool split_files(json_t *files, json_t *req, char *msg, size_t cap)
{
    json_t *placed = json_object();
    size_t i;
    json_t *f;
    bool have_main = false;
    json_array_foreach(files, i, f) {
        json_t *enc = json_object_get(f, "encoding");
        const char *encoding = json_is_string(enc) ? json_string_value(enc) : "utf8";
        json_t *content = file_content(f, encoding, msg, cap, i);
        if (!content) {
            json_decref(placed);
            return false;
        }
        const char *name = json_string_value(json_object_get(f, "name"));
        while (name && *name == '/')
            name++;
        char unnamed[32];
        snprintf(unnamed, sizeof unnamed, "file%zu.code", i);
        if (!name || !*name)
            name = unnamed;
        if (!have_main && strcmp(encoding, "utf8") == 0) {
            json_object_set_new(req, "main", json_string(name));
            have_main = true;
        }
        json_object_set_new(placed, name, content);
    }
    if (!have_main) {
        json_decref(placed);
        snprintf(msg, cap, "files must include at least one utf8 encoded file");
        return false;
    }
    json_object_set_new(req, "files", placed);
    return true;
}

/* Piston's constraint: absent or 0 is the default, else a non-negative number; a memory limit may also be
 * negative (Piston's own default, -1: no limit of its own, so fnbox's default). */
static bool constraint(json_t *body, const char *name, double dflt, double *out, char *msg, size_t cap)
{
    bool memory = strstr(name, "memory") != NULL;
    json_t *v = json_object_get(body, name);
    *out = dflt;
    if (!v || json_is_null(v) || (json_is_number(v) && json_number_value(v) == 0) || json_is_false(v))
        return true;
    if (!json_is_number(v)) {
        snprintf(msg, cap, "If specified, %s must be a number", name);
        return false;
    }
    if (json_number_value(v) < 0 && memory)
        return true;
    if (json_number_value(v) < 0) {
        snprintf(msg, cap, "%s must be non-negative", name);
        return false;
    }
    *out = json_number_value(v);
    return true;
}

/* Timeout, memory and CPU time as the execute request's timeout and limits. */
static bool limits(json_t *body, const piston_lang *p, json_t *req, char *msg, size_t cap)
{
    double run_t, compile_t, run_mem, compile_mem, run_cpu, compile_cpu;
    if (!constraint(body, "run_timeout", PISTON_RUN_TIMEOUT_MS, &run_t, msg, cap) ||
        !constraint(body, "compile_timeout", PISTON_COMPILE_TIMEOUT_MS, &compile_t, msg, cap) ||
        !constraint(body, "run_memory_limit", -1, &run_mem, msg, cap) ||
        !constraint(body, "compile_memory_limit", -1, &compile_mem, msg, cap) ||
        !constraint(body, "run_cpu_time", -1, &run_cpu, msg, cap) ||
        !constraint(body, "compile_cpu_time", -1, &compile_cpu, msg, cap))
        return false;
    double timeout_ms = run_t + (p->compiled ? compile_t : 0);
    if (timeout_ms > PISTON_MAX_TIMEOUT_MS) {
        snprintf(msg, cap, "run_timeout cannot exceed the configured limit of %.0f", PISTON_MAX_TIMEOUT_MS);
        return false;
    }
    json_object_set_new(req, "timeout", json_real(timeout_ms / 1000.0));
    json_t *lim = json_object();
    double mem = p->compiled && compile_mem > run_mem ? compile_mem : run_mem;
    if (mem > 0)
        json_object_set_new(lim, "memoryBytes", json_integer((json_int_t)mem));
    double cpu = p->compiled && compile_cpu > 0 && run_cpu > 0 ? compile_cpu + run_cpu : run_cpu;
    json_int_t cpu_s = (json_int_t)(cpu / 1000.0); /* rounded up: a limit in whole seconds */
    if (cpu > 0)
        json_object_set_new(lim, "cpuSeconds", json_integer((double)cpu_s * 1000.0 < cpu ? cpu_s + 1 : cpu_s));
    json_object_set_new(req, "limits", lim);
    return true;
}

/* The request's fields Piston checks first, with its messages (v2.js get_job). */
static bool check_fields(json_t *body, char *msg, size_t cap)
{
    if (!json_is_object(body)) {
        snprintf(msg, cap, "language is required as a string");
        return false;
    }
    json_t *files = json_object_get(body, "files");
    if (!json_is_string(json_object_get(body, "language")))
        snprintf(msg, cap, "language is required as a string");
    else if (!json_is_string(json_object_get(body, "version")))
        snprintf(msg, cap, "version is required as a string");
    else if (!json_is_array(files))
        snprintf(msg, cap, "files is required as an array");
    else
        for (size_t i = 0; i < json_array_size(files); i++)
            if (!json_is_string(json_object_get(json_array_get(files, i), "content"))) {
                snprintf(msg, cap, "files[%zu].content is required as a string", i);
                return false;
            }
    return !msg[0];
}

static bool copy_args(json_t *body, json_t *req, char *msg, size_t cap)
{
    json_t *args = json_object_get(body, "args"), *in = json_object_get(body, "stdin");
    if (args && !json_is_null(args)) {
        if (!json_is_array(args)) {
            snprintf(msg, cap, "args must be an array of strings");
            return false;
        }
        json_object_set(req, "args", args);
    }
    if (in && !json_is_null(in)) {
        if (!json_is_string(in)) {
            snprintf(msg, cap, "stdin must be a string");
            return false;
        }
        json_object_set(req, "stdin", in);
    }
    return true;
}

/* The execute request for a Piston body, or NULL with msg (Piston's words) or without (out of memory). */
static json_t *execute_request(json_t *body, json_t *langs, const piston_lang **lang, const char **version,
                               char *msg, size_t cap)
{
    if (!check_fields(body, msg, cap))
        return NULL;
    const char *language = json_string_value(json_object_get(body, "language"));
    const char *want = json_string_value(json_object_get(body, "version"));
    const char *env = NULL;
    *lang = find_lang(language, want, langs, version, &env);
    if (!*lang) {
        snprintf(msg, cap, "%.100s-%.100s runtime is unknown", language, want);
        return NULL;
    }
    json_t *req = json_pack("{s:s, s:s?}", "language", (*lang)->fnbox, "environment", env);
    if (req && (!split_files(json_object_get(body, "files"), req, msg, cap) || !copy_args(body, req, msg, cap) ||
                !limits(body, *lang, req, msg, cap))) {
        json_decref(req);
        return NULL;
    }
    return req;
}

/* run.output: both streams in the order they arrived (Piston's), up to PISTON_OUTPUT_MAX. */
static void collect_output(void *ctx, const char *stream, const char *data, size_t len)
{
    (void)stream;
    fb_buf_append(ctx, data, len);
}

static json_t *signal_name(int sig)
{
    const char *abbrev = sig > 0 ? sigabbrev_np(sig) : NULL;
    if (!abbrev)
        return json_null();
    char name[32];
    snprintf(name, sizeof name, "SIG%s", abbrev);
    return json_string(name);
}

/* A stage as Piston reports it: {stdout, stderr, output, code, signal, message, status, memory, cpu_time,
 * wall_time}; code is null and signal set when the program was killed (a timeout kills with SIGKILL). */
static json_t *run_stage(json_t *res, const char *output, size_t output_len)
{
    const char *status = json_string_value(json_object_get(res, "status"));
    int code = (int)json_integer_value(json_object_get(res, "exitCode"));
    json_t *usage = json_object_get(res, "usage");
    json_t *o = json_pack("{s:O, s:O, s:s%, s:O, s:O, s:O}", "stdout", json_object_get(res, "stdout"), "stderr",
                          json_object_get(res, "stderr"), "output", output, output_len, "memory",
                          json_object_get(usage, "peakMemoryBytes"), "cpu_time", json_object_get(usage, "cpuMs"),
                          "wall_time", json_object_get(usage, "wallMs"));
    if (!o)
        return NULL;
    char message[64] = "";
    const char *st = NULL;
    bool killed = strcmp(status, "success") != 0 && strcmp(status, "error") != 0;
    json_object_set_new(o, "code", killed ? json_null() : json_integer(code));
    if (strcmp(status, "timeout") == 0) {
        json_object_set_new(o, "signal", json_string("SIGKILL"));
        st = "TO";
        snprintf(message, sizeof message, "Time limit exceeded");
    } else if (killed) {
        json_object_set_new(o, "signal", signal_name(code > 128 ? code - 128 : 0));
        st = "SG";
        snprintf(message, sizeof message, "Caught fatal signal %d", code > 128 ? code - 128 : 0);
    } else {
        json_object_set_new(o, "signal", json_null());
        if (code != 0) {
            st = "RE";
            snprintf(message, sizeof message, "Exited with error status %d", code);
        }
    }
    json_object_set_new(o, "message", st ? json_string(message) : json_null());
    json_object_set_new(o, "status", st ? json_string(st) : json_null());
    return o;
}

/* compile: the compiler's report; its output is what it printed (stdout and stderr together). */
static json_t *compile_stage(json_t *compile)
{
    json_t *code = json_object_get(compile, "exitCode");
    json_t *out = json_object_get(compile, "output");
    bool ok = json_is_integer(code) && json_integer_value(code) == 0;
    return json_pack("{s:s, s:O, s:O, s:O, s:n, s:o, s:o}", "stdout", "", "stderr", out, "output", out, "code",
                     json_is_integer(code) ? code : json_null(), "signal", "message",
                     ok ? json_null() : json_sprintf("Exited with error status %d", (int)json_integer_value(code)),
                     "status", ok ? json_null() : json_string("RE"));
}

/* Piston's answer from fnbox_execute's result: {language, version, run, compile?}; a compile that failed
 * is also `run` (Piston's own backward compatibility: the run stage never started). */
static json_t *piston_result(json_t *res, const piston_lang *lang, const char *version, const fb_buf *output)
{
    json_t *run = run_stage(res, output->data ? output->data : "", output->len);
    json_t *out = json_pack("{s:s, s:s, s:o}", "language", lang->language, "version", version, "run", run);
    json_t *compile = json_object_get(res, "compile");
    if (!out || !compile)
        return out;
    json_t *c = compile_stage(compile);
    json_t *code = json_object_get(compile, "exitCode");
    if (c && !(json_is_integer(code) && json_integer_value(code) == 0) && json_is_integer(code))
        json_object_set(out, "run", c);
    json_object_set_new(out, "compile", c);
    return out;
}

static fb_http_reply answer(fb_http_exchange *x, json_t *req, const piston_lang *lang, const char *version)
{
    fb_error err = {0};
    char *text = json_dumps(req, JSON_COMPACT);
    if (!text) {
        fb_set_error(&err, FB_ERR_OUT_OF_MEMORY, 0, "out of memory");
        return fb_http_reply_error(&err);
    }
    fb_buf output;
    fb_buf_init(&output, PISTON_OUTPUT_MAX);
    fb_http_run_opts o = {.api = fnbox_execute, .output = collect_output, .output_ctx = &output};
    char *result = NULL;
    size_t rlen = 0;
    int rc = fb_http_run_api(x, text, strlen(text), &o, &result, &rlen, &err);
    free(text);
    json_t *res = rc < 0 ? NULL : json_loadb(result, rlen, 0, NULL);
    fnbox_free(result);
    fb_http_reply rep;
    if (rc < 0) {
        rep = fb_http_reply_error(&err);
    } else if (rc != FNBOX_OK || !res) {
        const char *m = json_string_value(json_object_get(json_object_get(res, "error"), "message"));
        rep = message_reply(fb_http_status_of_call(rc), m ? m : "the request could not be run");
    } else {
        json_t *doc = piston_result(res, lang, version, &output);
        char *body = doc ? json_dumps(doc, JSON_COMPACT | JSON_REAL_PRECISION(10)) : NULL;
        json_decref(doc);
        rep = body ? fb_http_reply_json(MHD_HTTP_OK, body, strlen(body), free, false)
                   : message_reply(MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
    }
    json_decref(res);
    fb_buf_free(&output);
    return rep;
}

static fb_http_reply run(fb_http_exchange *x)
{
    json_t *body = json_loadb(x->body.data, x->body.len, 0, NULL);
    fb_buf_free(&x->body);
    json_t *langs = installed_languages();
    char msg[512] = "";
    const piston_lang *lang = NULL;
    const char *version = NULL;
    json_t *req = body && langs ? execute_request(body, langs, &lang, &version, msg, sizeof msg) : NULL;
    fb_http_reply rep;
    if (!body)
        rep = message_reply(MHD_HTTP_BAD_REQUEST, "the body is not valid JSON");
    else if (!req)
        rep = message_reply(msg[0] ? MHD_HTTP_BAD_REQUEST : MHD_HTTP_INTERNAL_SERVER_ERROR,
                            msg[0] ? msg : "out of memory");
    else
        rep = answer(x, req, lang, version);
    json_decref(req);
    json_decref(langs);
    json_decref(body);
    return rep;
}

fb_http_reply fb_http_handle_piston_execute(fb_http_exchange *x)
{
    return fb_http_run_admitted(x, PISTON_TAKES, run);
}
