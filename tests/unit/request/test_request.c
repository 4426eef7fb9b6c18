/* Request decoding (request/request.h): a table of valid requests (flat v0.1 and nested v0.2 shapes) with the
 * fields they must decode to, a table of invalid requests with the field the InvalidRequest message must
 * name, then edge cases built in code (size and depth limits, big numbers, index bounds) and an
 * allocation-failure pass (every jansson allocation failed in turn).
 *
 * Table JSON is written with ' for " to stay readable (q() swaps them); no case needs a literal '.
 * Every request is copied into a buffer of exactly its length (no NUL) so ASan sees any over-read. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "../alloc_fail.h"
#include "request/limits.h"
#include "request/request.h"
#include "fs/rules.h"
#include "util/json.h"

/* ---- helpers ---- */

/* Records one case's outcome: prints a failed case and counts it in *failed. */
static void verdict(int *failed, const char *label, bool ok, const char *why)
{
    if (!ok) {
        print_message("# FAIL %s: %s\n", label, why);
        (*failed)++;
    }
}

/* ' -> " (malloc'd). */
static char *q(const char *s)
{
    size_t n = strlen(s);
    char *out = malloc(n + 1);
    assert_non_null(out);
    for (size_t i = 0; i <= n; i++)
        out[i] = s[i] == '\'' ? '"' : s[i];
    return out;
}

/* A copy of text[0..len) in a buffer of exactly len bytes (no terminator). */
static char *exact_copy(const char *text, size_t len)
{
    char *p = malloc(len ? len : 1);
    assert_non_null(p);
    memcpy(p, text, len);
    return p;
}

static json_t *load_expected(const char *qtext)
{
    char *t = q(qtext);
    json_error_t e;
    json_t *v = json_loads(t, JSON_DECODE_ANY | JSON_ALLOW_NUL, &e);
    if (!v)
        fail_msg("bad JSON in test table: %s: %s", t, e.text);
    free(t);
    return v;
}

static bool is_zeroed(const fb_request *r)
{
    static const fb_request zero;
    return memcmp(r, &zero, sizeof zero) == 0;
}

/* Parses the (already ' -> " converted) text from an exact-size copy; r is pre-filled with garbage. */
static int parse_text(const char *text, size_t len, fb_request *r, fb_error *err)
{
    char *buf = exact_copy(text, len);
    memset(r, 0xA5, sizeof *r);
    memset(err, 0, sizeof *err);
    int rc = fb_request_parse(buf, len, r, err);
    /* the borrowed fields live in r->root, never in the caller's buffer */
    memset(buf, 'Z', len);
    free(buf);
    return rc;
}

/* ---- valid requests ---- */

typedef struct valid_case {
    const char *label;
    const char *json;
    const char *lang;          /* wanted driver name */
    const char *code;          /* wanted code bytes; NULL = "x" */
    size_t code_len;           /* 0 = strlen(code) */
    const char *fn;            /* wanted function name; NULL = none */
    const char *args, *kwargs; /* wanted JSON (' for "); NULL = [] / {} */
    const char *workdir;       /* NULL = "/workspace" */
    double timeout;            /* 0 = 30 */
    const char *rep;           /* includeChanges/Contents/Denied as "tft"; NULL = "ttt" */
    const char *schema;        /* wanted schema JSON; NULL = absent */
    const char *limits;        /* wanted non-default limits, JSON {requestField: n}; NULL = all defaults */
    const char *perm;          /* wanted permissions: "env=N exec=any|N net=all|N fs=t|f"; NULL = all denied */
} valid_case;

#define N64 "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$"
#define N256 N64 N64 N64 N64

static const valid_case valid_cases[] = {
    /* ---- shapes ---- */
    {"flat v0.1, every field",
     "{'language':'python','code':'def f(a, k=None): return a','functionName':'f','args':[1,'x',null],"
     "'kwargs':{'k':true},'workdir':'/work','timeout':5,'resultOptions':{'includeChanges':false}}",
     .lang = "python", .code = "def f(a, k=None): return a", .fn = "f", .args = "[1,'x',null]",
     .kwargs = "{'k':true}", .workdir = "/work", .timeout = 5, .rep = "ftt"},
    {"minimal", "{'language':'python','code':'x'}", .lang = "python"},
    {"nested v0.2, every field",
     "{'language':'javascript','code':'function f(a){}','functionName':'f','args':{'a':{'index':0,'value':1}},"
     "'timeout':2.5,'options':{'workdir':'/home/u/proj',"
     "'reporting':{'includeChanges':true,'includeContents':false,'includeDenied':false}}}",
     .lang = "javascript", .code = "function f(a){}", .fn = "f", .args = "[1]", .workdir = "/home/u/proj",
     .timeout = 2.5, .rep = "tff"},
    {"v0.2 timeout inside options", "{'language':'js','code':'x','options':{'timeout':0.25}}", .lang = "javascript",
     .timeout = 0.25},
    {"v0.2 workdir inside options", "{'language':'js','code':'x','options':{'workdir':'/w'}}", .lang = "javascript",
     .workdir = "/w"},
    {"root-level reporting", "{'language':'py','code':'x','reporting':{'includeDenied':false}}", .lang = "python",
     .rep = "ttf"},
    {"resultOptions all false",
     "{'language':'py','code':'x','resultOptions':{'includeChanges':false,'includeContents':false,"
     "'includeDenied':false}}",
     .lang = "python", .rep = "fff"},
    {"resultOptions empty keeps defaults", "{'language':'py','code':'x','resultOptions':{}}", .lang = "python"},
    {"resultOptions null keeps defaults", "{'language':'py','code':'x','resultOptions':null}", .lang = "python"},
    {"options.reporting content only", "{'language':'py','code':'x','options':{'reporting':{'includeContents':false}}}",
     .lang = "python", .rep = "tft"},
    {"options empty", "{'language':'py','code':'x','options':{}}", .lang = "python"},
    {"options null", "{'language':'py','code':'x','options':null}", .lang = "python"},
    {"files, mount null are absent", "{'language':'py','code':'x','files':null,'mount':null}", .lang = "python"},
    {"options.files, options.mount null are absent", "{'language':'py','code':'x','options':{'files':null,'mount':null}}",
     .lang = "python"},
    {"whitespace around everything", " \n\t{ 'language' : 'python' ,\r\n 'code' : 'x' }\n ", .lang = "python"},
    {"schema kept", "{'language':'py','code':'x','schema':{'params':[{'name':'a','required':true}]}}",
     .lang = "python", .schema = "{'params':[{'name':'a','required':true}]}"},
    {"schema null is absent", "{'language':'py','code':'x','schema':null}", .lang = "python"},
    {"argsMode string accepted", "{'language':'py','code':'x','argsMode':'auto'}", .lang = "python"},
    {"argsMode null accepted", "{'language':'py','code':'x','argsMode':null}", .lang = "python"},

    /* ---- languages: every alias ---- */
    {"language python", "{'language':'python','code':'x'}", .lang = "python"},
    {"language py", "{'language':'py','code':'x'}", .lang = "python"},
    {"language python3", "{'language':'python3','code':'x'}", .lang = "python"},
    {"language javascript", "{'language':'javascript','code':'x'}", .lang = "javascript"},
    {"language js", "{'language':'js','code':'x'}", .lang = "javascript"},
    {"language node", "{'language':'node','code':'x'}", .lang = "javascript"},
    {"language nodejs", "{'language':'nodejs','code':'x'}", .lang = "javascript"},
    {"language quickjs", "{'language':'quickjs','code':'x'}", .lang = "javascript"},

    /* ---- code ---- */
    {"code with embedded NUL", "{'language':'py','code':'a\\u0000b'}", .lang = "python", .code = "a\0b",
     .code_len = 3},
    {"code that is only NUL", "{'language':'py','code':'\\u0000'}", .lang = "python", .code = "\0", .code_len = 1},
    {"code empty", "{'language':'py','code':''}", .lang = "python", .code = ""},
    {"code unicode escapes", "{'language':'py','code':'\\u00e9\\u20ac\\ud83d\\ude00'}", .lang = "python",
     .code = "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80"},
    {"code raw UTF-8", "{'language':'py','code':'\xC3\xA9\xE2\x82\xAC'}", .lang = "python", .code = "\xC3\xA9\xE2\x82\xAC"},
    {"code with escaped quotes and newlines", "{'language':'py','code':'print(\\'hi\\')\\nx = 1\\n'}",
     .lang = "python", .code = "print(\"hi\")\nx = 1\n"},

    /* ---- functionName ---- */
    {"functionName omitted", "{'language':'py','code':'x'}", .lang = "python", .fn = NULL},
    {"functionName null", "{'language':'py','code':'x','functionName':null}", .lang = "python", .fn = NULL},
    {"functionName with _ $ digits", "{'language':'js','code':'x','functionName':'_$a9'}", .lang = "javascript",
     .fn = "_$a9"},
    {"functionName non-ASCII", "{'language':'py','code':'x','functionName':'caf\\u00e9'}", .lang = "python",
     .fn = "caf\xC3\xA9"},
    {"functionName of 256 bytes", "{'language':'py','code':'x','functionName':'" N256 "'}", .lang = "python",
     .fn = N256},

    /* ---- args / kwargs ---- */
    {"args array kept as is", "{'language':'py','code':'x','args':[1,[2,{'a':null}],'s',true,1.5]}",
     .lang = "python", .args = "[1,[2,{'a':null}],'s',true,1.5]"},
    {"args and kwargs null", "{'language':'py','code':'x','args':null,'kwargs':null}", .lang = "python"},
    {"args empty object", "{'language':'py','code':'x','args':{}}", .lang = "python"},
    {"kwargs only", "{'language':'py','code':'x','kwargs':{'a':1,'b':[2]}}", .lang = "python",
     .kwargs = "{'a':1,'b':[2]}"},
    {"args object: positional and named",
     "{'language':'python','code':'x','args':{'a':{'index':0,'value':1},'b':{'index':1,'value':[2]},"
     "'c':'named','d':{'x':1}}}",
     .lang = "python", .args = "[1,[2]]", .kwargs = "{'c':'named','d':{'x':1}}"},
    {"args object: indexes out of order",
     "{'language':'py','code':'x','args':{'b':{'index':1,'value':'B'},'a':{'index':0,'value':'A'}}}",
     .lang = "python", .args = "['A','B']"},
    {"args object merged with kwargs", "{'language':'py','code':'x','args':{'c':3},'kwargs':{'e':5}}",
     .lang = "python", .kwargs = "{'e':5,'c':3}"},
    {"args object: {index, value, extra} is a named value",
     "{'language':'py','code':'x','args':{'p':{'index':0,'value':1,'extra':2}}}", .lang = "python",
     .kwargs = "{'p':{'index':0,'value':1,'extra':2}}"},
    {"args object: {index} alone is a named value", "{'language':'py','code':'x','args':{'p':{'index':0}}}",
     .lang = "python", .kwargs = "{'p':{'index':0}}"},
    {"args object: {value} alone is a named value", "{'language':'py','code':'x','args':{'p':{'value':0}}}",
     .lang = "python", .kwargs = "{'p':{'value':0}}"},
    {"args object: positional null value", "{'language':'py','code':'x','args':{'a':{'index':0,'value':null}}}",
     .lang = "python", .args = "[null]"},
    {"args object: a gap is filled with null", "{'language':'py','code':'x','args':{'b':{'index':2,'value':'B'}}}",
     .lang = "python", .args = "[null,null,'B']"},
    {"args object: value is an object",
     "{'language':'py','code':'x','args':{'a':{'index':0,'value':{'index':5,'value':6}}}}", .lang = "python",
     .args = "[{'index':5,'value':6}]"},
    {"args array with kwargs", "{'language':'py','code':'x','args':[1],'kwargs':{'b':2}}", .lang = "python",
     .args = "[1]", .kwargs = "{'b':2}"},

    /* ---- timeout ---- */
    {"timeout fraction", "{'language':'py','code':'x','timeout':0.001}", .lang = "python", .timeout = 0.001},
    {"timeout exponent", "{'language':'py','code':'x','timeout':1e-3}", .lang = "python", .timeout = 0.001},
    {"timeout capital exponent", "{'language':'py','code':'x','timeout':1E1}", .lang = "python", .timeout = 10},
    {"timeout maximum integer", "{'language':'py','code':'x','timeout':3600}", .lang = "python", .timeout = 3600},
    {"timeout maximum real", "{'language':'py','code':'x','timeout':3600.0}", .lang = "python", .timeout = 3600},
    {"timeout null is the default", "{'language':'py','code':'x','timeout':null}", .lang = "python"},
    {"timeout tiny", "{'language':'py','code':'x','timeout':5e-324}", .lang = "python", .timeout = 5e-324},

    /* ---- workdir ---- */
    {"workdir short", "{'language':'py','code':'x','workdir':'/a'}", .lang = "python", .workdir = "/a"},
    {"workdir deep", "{'language':'py','code':'x','workdir':'/workspace/sub/dir'}", .lang = "python",
     .workdir = "/workspace/sub/dir"},
    {"workdir sharing a reserved prefix", "{'language':'py','code':'x','workdir':'/usr2'}", .lang = "python",
     .workdir = "/usr2"},
    {"workdir /procfs is not /proc", "{'language':'py','code':'x','workdir':'/procfs/x'}", .lang = "python",
     .workdir = "/procfs/x"},
    {"workdir dots inside a name", "{'language':'py','code':'x','workdir':'/x..y/.z/..w'}", .lang = "python",
     .workdir = "/x..y/.z/..w"},
    {"workdir with a space", "{'language':'py','code':'x','workdir':'/my dir'}", .lang = "python",
     .workdir = "/my dir"},
    {"workdir non-ASCII", "{'language':'py','code':'x','workdir':'/caf\\u00e9'}", .lang = "python",
     .workdir = "/caf\xC3\xA9"},
    {"workdir under /tmp", "{'language':'py','code':'x','workdir':'/tmp/w'}", .lang = "python", .workdir = "/tmp/w"},
    {"workdir null is the default", "{'language':'py','code':'x','workdir':null}", .lang = "python"},
    {"options.workdir null is the default", "{'language':'py','code':'x','options':{'workdir':null}}",
     .lang = "python"},

    /* ---- limits ---- */
    {"limits: every field",
     "{'language':'py','code':'x','limits':{'memoryBytes':134217728,'pids':8,'workspaceBytes':4096,"
     "'tmpBytes':1048576,'inodes':100,'fileSizeBytes':2097152,'openFiles':32,'stdoutBytes':0,'stderrBytes':10,"
     "'resultBytes':1048576}}",
     .lang = "python",
     .limits = "{'memoryBytes':134217728,'pids':8,'workspaceBytes':4096,'tmpBytes':1048576,'inodes':100,"
               "'fileSizeBytes':2097152,'openFiles':32,'stdoutBytes':0,'stderrBytes':10,'resultBytes':1048576}"},
    {"limits: empty keeps defaults", "{'language':'py','code':'x','limits':{}}", .lang = "python"},
    {"limits: null keeps defaults", "{'language':'py','code':'x','limits':null}", .lang = "python"},
    {"limits: a null field keeps its default", "{'language':'py','code':'x','limits':{'pids':null}}", .lang = "python"},
    {"limits: the maximums", "{'language':'py','code':'x','limits':{'memoryBytes':4294967296,'pids':1024,"
     "'fileSizeBytes':1073741824,'resultBytes':268435456,'openFiles':4096,'stdoutBytes':67108864}}",
     .lang = "python", .limits = "{'memoryBytes':4294967296,'pids':1024,'fileSizeBytes':1073741824,"
     "'resultBytes':268435456,'openFiles':4096,'stdoutBytes':67108864}"},
    {"limits: the minimums", "{'language':'py','code':'x','limits':{'memoryBytes':16777216,'pids':1,"
     "'openFiles':16,'resultBytes':1,'fileSizeBytes':1}}",
     .lang = "python", .limits = "{'memoryBytes':16777216,'pids':1,'openFiles':16,'resultBytes':1,'fileSizeBytes':1}"},
    {"limits: a lower fileSizeBytes lowers the default resultBytes",
     "{'language':'py','code':'x','limits':{'fileSizeBytes':1048576}}", .lang = "python",
     .limits = "{'fileSizeBytes':1048576,'resultBytes':1048576}"},
    {"options.limits", "{'language':'js','code':'x','options':{'limits':{'pids':3}}}", .lang = "javascript",
     .limits = "{'pids':3}"},

    /* ---- permissions (decoded by request/permissions.c: test_permissions.c has the details) ---- */
    {"permissions: a preset name", "{'language':'py','code':'x','permissions':'allowAll'}", .lang = "python",
     .perm = "env=0 exec=any net=all fs=t"},
    {"permissions: env and a command", "{'language':'py','code':'x','permissions':{'env':{'A':'1','B':''},"
     "'childProcess':['sh']}}", .lang = "python", .perm = "env=2 exec=1 net=0 fs=f"},
    {"options.permissions", "{'language':'py','code':'x','options':{'permissions':{'network':['a.example:1']}}}",
     .lang = "python", .perm = "env=0 exec=0 net=1 fs=f"},
    {"permissions null", "{'language':'py','code':'x','permissions':null}", .lang = "python"},
};

/* The limits a case wants: the defaults with its overrides. */
static const struct {
    const char *name;
    size_t off;
    uint64_t dflt;
} k_limits[] = {
    {"memoryBytes", offsetof(fb_call_limits, memory_bytes), FB_DEFAULT_MEMORY_BYTES},
    {"pids", offsetof(fb_call_limits, pids), FB_DEFAULT_PIDS},
    {"workspaceBytes", offsetof(fb_call_limits, workspace_bytes), FB_DEFAULT_WORKSPACE_BYTES},
    {"tmpBytes", offsetof(fb_call_limits, tmp_bytes), FB_DEFAULT_TMP_BYTES},
    {"inodes", offsetof(fb_call_limits, inodes), FB_DEFAULT_TMPFS_INODES},
    {"fileSizeBytes", offsetof(fb_call_limits, file_size_bytes), FB_DEFAULT_FSIZE_BYTES},
    {"openFiles", offsetof(fb_call_limits, open_files), FB_DEFAULT_NOFILE},
    {"stdoutBytes", offsetof(fb_call_limits, stdout_bytes), FB_DEFAULT_OUTPUT_BYTES},
    {"stderrBytes", offsetof(fb_call_limits, stderr_bytes), FB_DEFAULT_OUTPUT_BYTES},
    {"resultBytes", offsetof(fb_call_limits, result_bytes), FB_DEFAULT_RESULT_BYTES},
};

static bool check_limits(const valid_case *c, const fb_request *r, char *why, size_t n)
{
    json_t *want = c->limits ? load_expected(c->limits) : json_object();
    bool ok = true;
    for (size_t i = 0; i < sizeof k_limits / sizeof *k_limits && ok; i++) {
        json_t *w = json_object_get(want, k_limits[i].name);
        uint64_t expect = w ? (uint64_t)json_integer_value(w) : k_limits[i].dflt;
        uint64_t got = *(const uint64_t *)((const char *)&r->limits + k_limits[i].off);
        if (got != expect) {
            snprintf(why, n, "limits.%s: want %llu got %llu", k_limits[i].name, (unsigned long long)expect,
                     (unsigned long long)got);
            ok = false;
        }
    }
    json_decref(want);
    return ok;
}

static bool check_perm(const valid_case *c, const fb_request *r, char *why, size_t n)
{
    const fb_permissions *p = &r->permissions;
    char got[128];
    char exec[16], net[16];
    if (p->exec_any)
        snprintf(exec, sizeof exec, "any");
    else
        snprintf(exec, sizeof exec, "%zu", p->nexec);
    if (p->network_all)
        snprintf(net, sizeof net, "all");
    else
        snprintf(net, sizeof net, "%zu", p->nnetwork);
    snprintf(got, sizeof got, "env=%zu exec=%s net=%s fs=%c", p->nenv, exec, net, p->fs_all ? 't' : 'f');
    const char *want = c->perm ? c->perm : "env=0 exec=0 net=0 fs=f";
    if (strcmp(got, want) == 0)
        return true;
    snprintf(why, n, "permissions: want '%s' got '%s'", want, got);
    return false;
}

/* Compares r with the case; on mismatch writes the first difference into why. */
static bool check_valid(const valid_case *c, const fb_request *r, char *why, size_t n)
{
    const char *code = c->code ? c->code : "x";
    size_t code_len = c->code_len ? c->code_len : strlen(code);
    const char *workdir = c->workdir ? c->workdir : "/workspace";
    double timeout = c->timeout != 0 ? c->timeout : 30.0;
    const char *rep = c->rep ? c->rep : "ttt";
    bool ok = false;
    json_t *want_args = load_expected(c->args ? c->args : "[]");
    json_t *want_kwargs = load_expected(c->kwargs ? c->kwargs : "{}");
    json_t *want_schema = c->schema ? load_expected(c->schema) : NULL;
    char *ga = r->args ? json_dumps(r->args, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
    char *gk = r->kwargs ? json_dumps(r->kwargs, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;

    if (!r->root || !json_is_object(r->root))
        snprintf(why, n, "root is not the parsed object");
    else if (!r->lang || strcmp(r->lang->name, c->lang) != 0)
        snprintf(why, n, "lang: want %s got %s", c->lang, r->lang ? r->lang->name : "(null)");
    else if (!r->code || r->code_len != code_len || memcmp(r->code, code, code_len) != 0)
        snprintf(why, n, "code: want %zu bytes, got %zu bytes", code_len, r->code_len);
    else if (r->code[r->code_len] != '\0')
        snprintf(why, n, "code: not NUL-terminated");
    else if (r->code != json_string_value(json_object_get(r->root, "code")))
        snprintf(why, n, "code: does not point into root");
    else if ((c->fn == NULL) != (r->function_name == NULL) || (c->fn && strcmp(c->fn, r->function_name) != 0))
        snprintf(why, n, "functionName: want %s got %s", c->fn ? c->fn : "(null)",
                 r->function_name ? r->function_name : "(null)");
    else if (!json_is_array(r->args) || !json_equal(r->args, want_args))
        snprintf(why, n, "args: want %s got %s", c->args ? c->args : "[]", ga ? ga : "(null)");
    else if (!json_is_object(r->kwargs) || !json_equal(r->kwargs, want_kwargs))
        snprintf(why, n, "kwargs: want %s got %s", c->kwargs ? c->kwargs : "{}", gk ? gk : "(null)");
    else if ((want_schema == NULL) != (r->schema == NULL) || (want_schema && !json_equal(want_schema, r->schema)))
        snprintf(why, n, "schema: want %s", c->schema ? c->schema : "(absent)");
    else if (!r->workdir || strcmp(r->workdir, workdir) != 0)
        snprintf(why, n, "workdir: want %s got %s", workdir, r->workdir ? r->workdir : "(null)");
    else if (r->timeout_s != timeout)
        snprintf(why, n, "timeout: want %g got %g", timeout, r->timeout_s);
    else if (r->reporting.include_changes != (rep[0] == 't') || r->reporting.include_contents != (rep[1] == 't') ||
             r->reporting.include_denied != (rep[2] == 't'))
        snprintf(why, n, "reporting: want %s got %c%c%c", rep, r->reporting.include_changes ? 't' : 'f',
                 r->reporting.include_contents ? 't' : 'f', r->reporting.include_denied ? 't' : 'f');
    else
        ok = check_limits(c, r, why, n) && check_perm(c, r, why, n);
    free(ga);
    free(gk);
    json_decref(want_args);
    json_decref(want_kwargs);
    json_decref(want_schema);
    return ok;
}

static void test_valid_table(void **state)
{
    (void)state;
    int failed = 0;
    for (size_t i = 0; i < sizeof valid_cases / sizeof *valid_cases; i++) {
        const valid_case *c = &valid_cases[i];
        char *text = q(c->json);
        fb_request r;
        fb_error err;
        char why[2400] = "";
        bool ok;
        if (parse_text(text, strlen(text), &r, &err) != 0) {
            snprintf(why, sizeof why, "want success, got %s [%s]", fb_error_type(&err), err.message);
            ok = false;
        } else {
            ok = check_valid(c, &r, why, sizeof why);
            /* inputs the caller will mutate are owned: args/kwargs outlive the root */
            json_t *args = json_incref(r.args), *kwargs = json_incref(r.kwargs);
            fb_request_free(&r);
            if (ok && !is_zeroed(&r)) {
                snprintf(why, sizeof why, "fb_request_free did not reset the struct");
                ok = false;
            }
            fb_request_free(&r); /* a second free is harmless */
            if (ok && (args->refcount != 1 || kwargs->refcount != 1)) {
                snprintf(why, sizeof why, "args/kwargs still referenced after free (%zu, %zu)", args->refcount,
                         kwargs->refcount);
                ok = false;
            }
            json_decref(args);
            json_decref(kwargs);
        }
        verdict(&failed, c->label, ok, why);
        free(text);
    }
    if (failed)
        fail_msg("%d valid-request case(s) failed", failed);
}

/* ---- invalid requests ---- */

typedef struct invalid_case {
    const char *label;
    const char *json;
    const char *field; /* the message must start with "<field>:" */
    const char *also;  /* and contain this; NULL = nothing more */
} invalid_case;

#define LANGS "python (py, python3), javascript (js, node, nodejs, quickjs), ruby (rb), php, c, cpp (c++, cxx)"
#define P "'language':'python','code':'x'"

static const invalid_case invalid_cases[] = {
    /* ---- the document ---- */
    {"empty input", "", "request", "malformed JSON"},
    {"truncated object", "{'language':", "request", "malformed JSON"},
    {"trailing garbage", "{" P "} x", "request", "malformed JSON"},
    {"two documents", "{" P "}{}", "request", "malformed JSON"},
    {"comment", "{" P " /* c */}", "request", "malformed JSON"},
    {"trailing comma", "{" P ",}", "request", "malformed JSON"},
    {"invalid UTF-8 in a string", "{'language':'python','code':'\xff'}", "request", "malformed JSON"},
    {"overlong UTF-8 in a string", "{'language':'python','code':'\xC0\xAF'}", "request", "malformed JSON"},
    {"lone surrogate escape", "{'language':'python','code':'\\ud800'}", "request", "malformed JSON"},
    {"NaN literal", "{" P ",'timeout':NaN}", "request", "malformed JSON"},
    {"Infinity literal", "{" P ",'timeout':Infinity}", "request", "malformed JSON"},
    {"leading zero", "{" P ",'timeout':05}", "request", "malformed JSON"},
    {"root array", "[]", "request", "must be a JSON object"},
    {"root string", "'x'", "request", NULL},
    {"root null", "null", "request", NULL},
    {"root number", "1", "request", NULL},
    {"duplicate root key", "{'language':'python','language':'js','code':'x'}", "request", "duplicate"},
    {"duplicate key in args", "{" P ",'args':{'a':1,'a':2}}", "request", "duplicate"},
    {"duplicate key in kwargs", "{" P ",'kwargs':{'a':1,'a':2}}", "request", "duplicate"},
    {"duplicate key deep in a value", "{" P ",'args':[[{'k':{'z':1,'z':1}}]]}", "request", "duplicate"},
    {"malformed number that overflows", "{" P ",'args':[1e400e400]}", "request", "malformed JSON"},
    {"malformed number: 1.e400", "{" P ",'args':[1.e400]}", "request", "malformed JSON"},
    {"unquoted number as a key", "{" P ",'kwargs':{99999999999999999999:1}}", "request", NULL},
    {"error after a big number", "{" P ",'args' 1e400}", "request", "malformed JSON"},
    {"error near a big number", "{" P ",'args':[1e400 1]}", "request", "malformed JSON"},

    /* ---- fields ---- */
    {"unknown root field", "{" P ",'foo':1}", "foo", "unknown field"},
    {"root field names are case-sensitive", "{" P ",'Timeout':1}", "Timeout", "unknown field"},
    {"unknown options field", "{" P ",'options':{'foo':1}}", "options.foo", "unknown field"},
    {"v0.1 field inside options", "{" P ",'options':{'resultOptions':{}}}", "options.resultOptions", "unknown field"},
    {"options not an object", "{" P ",'options':[]}", "options", "must be an object, got array"},

    /* ---- language ---- */
    {"language missing", "{'code':'x'}", "language", "required (supported: " LANGS ")"},
    {"language unknown", "{'language':'cobol','code':'x'}", "language", "'cobol'; supported: " LANGS},
    {"language is case-sensitive", "{'language':'Python','code':'x'}", "language", "supported: " LANGS},
    {"language empty", "{'language':'','code':'x'}", "language", "supported: " LANGS},
    {"language with a trailing space", "{'language':'python ','code':'x'}", "language", "supported: " LANGS},
    {"language with an embedded NUL", "{'language':'python\\u0000ruby','code':'x'}", "language", "supported"},
    {"language number", "{'language':3,'code':'x'}", "language", "must be a string, got number"},
    {"language null", "{'language':null,'code':'x'}", "language", "must be a string, got null"},
    {"language array", "{'language':['python'],'code':'x'}", "language", "must be a string, got array"},

    /* ---- code ---- */
    {"code missing", "{'language':'python'}", "code", "required"},
    {"code number", "{'language':'python','code':1}", "code", "must be a string, got number"},
    {"code null", "{'language':'python','code':null}", "code", "must be a string, got null"},
    {"code array", "{'language':'python','code':['x']}", "code", "must be a string, got array"},
    {"code object", "{'language':'python','code':{}}", "code", "must be a string, got object"},

    /* ---- functionName ---- */
    {"functionName number", "{" P ",'functionName':5}", "functionName", "must be a string, got number"},
    {"functionName boolean", "{" P ",'functionName':true}", "functionName", "must be a string, got boolean"},
    {"functionName array", "{" P ",'functionName':['f']}", "functionName", "must be a string, got array"},
    {"functionName with a space", "{" P ",'functionName':'a b'}", "functionName", "'a b' is not a valid"},
    {"functionName starting with a digit", "{" P ",'functionName':'1x'}", "functionName", "not a valid function name"},
    {"functionName empty", "{" P ",'functionName':''}", "functionName", "not a valid function name"},
    {"functionName with a dot", "{" P ",'functionName':'a.b'}", "functionName", "not a valid function name"},
    {"functionName with a dash", "{" P ",'functionName':'a-b'}", "functionName", "not a valid function name"},
    {"functionName with a paren", "{" P ",'functionName':'f()'}", "functionName", "not a valid function name"},
    {"functionName with a newline", "{" P ",'functionName':'f\\n'}", "functionName", "not a valid function name"},
    {"functionName of 257 bytes", "{" P ",'functionName':'" N256 "a'}", "functionName", "not a valid function name"},
    {"functionName with an embedded NUL", "{" P ",'functionName':'f\\u0000; import os'}", "functionName",
     "not a valid function name"},

    /* ---- args / kwargs ---- */
    {"args string", "{" P ",'args':'x'}", "args", "must be an array or an object, got string"},
    {"args number", "{" P ",'args':1}", "args", "must be an array or an object, got number"},
    {"args boolean", "{" P ",'args':false}", "args", "must be an array or an object, got boolean"},
    {"kwargs array", "{" P ",'kwargs':[]}", "kwargs", "must be an object, got array"},
    {"kwargs string", "{" P ",'kwargs':'x'}", "kwargs", "must be an object, got string"},
    {"kwargs number", "{" P ",'kwargs':0}", "kwargs", "must be an object, got number"},
    {"index negative", "{" P ",'args':{'a':{'index':-1,'value':1}}}", "args.a.index", "from 0 to 10000"},
    {"index too large", "{" P ",'args':{'a':{'index':10001,'value':1}}}", "args.a.index", "from 0 to 10000"},
    {"index huge", "{" P ",'args':{'a':{'index':9223372036854775807,'value':1}}}", "args.a.index", NULL},
    {"index beyond 64 bits", "{" P ",'args':{'a':{'index':99999999999999999999,'value':1}}}", "args.a.index", NULL},
    {"index real", "{" P ",'args':{'a':{'index':1.5,'value':1}}}", "args.a.index", "integer"},
    {"index integral real", "{" P ",'args':{'a':{'index':1.0,'value':1}}}", "args.a.index", "integer"},
    {"index string", "{" P ",'args':{'a':{'index':'0','value':1}}}", "args.a.index", "integer"},
    {"index null", "{" P ",'args':{'a':{'index':null,'value':1}}}", "args.a.index", "integer"},
    {"index given twice", "{" P ",'args':{'a':{'index':0,'value':1},'b':{'index':0,'value':2}}}", "args.b.index",
     "position 0 is given twice"},
    {"index given twice, later slot", "{" P ",'args':{'a':{'index':3,'value':1},'b':{'index':3,'value':[]}}}",
     "args.b.index", "position 3 is given twice"},
    {"index given twice, first value null",
     "{" P ",'args':{'a':{'index':0,'value':null},'b':{'index':0,'value':2}}}", "args.b.index", "given twice"},
    {"name in args object and kwargs", "{" P ",'args':{'x':1},'kwargs':{'x':2}}", "args.x", "also given in kwargs"},
    {"name in args object and kwargs, object value", "{" P ",'args':{'x':{'k':1}},'kwargs':{'x':null}}", "args.x",
     "also given in kwargs"},
    {"schema string", "{" P ",'schema':'x'}", "schema", "must be an object, got string"},
    {"schema array", "{" P ",'schema':[]}", "schema", "must be an object, got array"},
    {"argsMode number", "{" P ",'argsMode':1}", "argsMode", "must be a string, got number"},

    /* ---- timeout ---- */
    {"timeout string", "{" P ",'timeout':'5'}", "timeout", "must be a number of seconds, got string"},
    {"timeout boolean", "{" P ",'timeout':true}", "timeout", "must be a number of seconds, got boolean"},
    {"timeout array", "{" P ",'timeout':[5]}", "timeout", "got array"},
    {"timeout zero", "{" P ",'timeout':0}", "timeout", "more than 0"},
    {"timeout zero real", "{" P ",'timeout':0.0}", "timeout", "more than 0"},
    {"timeout negative zero", "{" P ",'timeout':-0.0}", "timeout", "more than 0"},
    {"timeout negative", "{" P ",'timeout':-1}", "timeout", "more than 0"},
    {"timeout above the maximum", "{" P ",'timeout':3601}", "timeout", "at most 3600"},
    {"timeout just above the maximum", "{" P ",'timeout':3600.000001}", "timeout", "at most 3600"},
    {"timeout underflowing to 0", "{" P ",'timeout':1e-400}", "timeout", "more than 0"},
    {"timeout int64 max", "{" P ",'timeout':9223372036854775807}", "timeout", "at most 3600"},
    {"timeout beyond double range", "{" P ",'timeout':1e400}", "timeout", "got number"},
    {"timeout beyond double range, negative", "{" P ",'timeout':-1e400}", "timeout", NULL},
    {"timeout beyond 64 bits", "{" P ",'timeout':99999999999999999999}", "timeout", NULL},
    {"options.timeout string", "{" P ",'options':{'timeout':'1'}}", "timeout", "got string"},
    {"options.timeout zero", "{" P ",'options':{'timeout':0}}", "timeout", "more than 0"},
    {"timeout at root and in options", "{" P ",'timeout':1,'options':{'timeout':1}}", "timeout", "given both"},
    {"timeout at root and null in options", "{" P ",'timeout':1,'options':{'timeout':null}}", "timeout",
     "given both"},

    /* ---- workdir ---- */
    {"workdir relative", "{" P ",'workdir':'work'}", "workdir", "absolute"},
    {"workdir dot-relative", "{" P ",'workdir':'./work'}", "workdir", "absolute"},
    {"workdir empty", "{" P ",'workdir':''}", "workdir", "absolute"},
    {"workdir root", "{" P ",'workdir':'/'}", "workdir", "absolute"},
    {"workdir trailing slash", "{" P ",'workdir':'/work/'}", "workdir", NULL},
    {"workdir double slash", "{" P ",'workdir':'//work'}", "workdir", "normalized"},
    {"workdir inner double slash", "{" P ",'workdir':'/a//b'}", "workdir", "normalized"},
    {"workdir with ..", "{" P ",'workdir':'/a/../b'}", "workdir", "normalized"},
    {"workdir ending in ..", "{" P ",'workdir':'/a/..'}", "workdir", "normalized"},
    {"workdir is /..", "{" P ",'workdir':'/..'}", "workdir", "normalized"},
    {"workdir with .", "{" P ",'workdir':'/./a'}", "workdir", "normalized"},
    {"workdir ending in .", "{" P ",'workdir':'/a/.'}", "workdir", "normalized"},
    {"workdir is /.", "{" P ",'workdir':'/.'}", "workdir", "normalized"},
    {"workdir /usr", "{" P ",'workdir':'/usr'}", "workdir", "'/usr' is reserved"},
    {"workdir under /usr", "{" P ",'workdir':'/usr/local/x'}", "workdir", "'/usr' is reserved"},
    {"workdir under /proc", "{" P ",'workdir':'/proc/x'}", "workdir", "'/proc' is reserved"},
    {"workdir /etc", "{" P ",'workdir':'/etc'}", "workdir", "'/etc' is reserved"},
    {"workdir /dev/shm", "{" P ",'workdir':'/dev/shm'}", "workdir", "'/dev' is reserved"},
    {"workdir /sys", "{" P ",'workdir':'/sys'}", "workdir", "'/sys' is reserved"},
    {"workdir /bin", "{" P ",'workdir':'/bin'}", "workdir", "'/bin' is reserved"},
    {"workdir /sbin", "{" P ",'workdir':'/sbin'}", "workdir", "'/sbin' is reserved"},
    {"workdir /lib", "{" P ",'workdir':'/lib'}", "workdir", "'/lib' is reserved"},
    {"workdir /lib64", "{" P ",'workdir':'/lib64/x'}", "workdir", "'/lib64' is reserved"},
    {"workdir /.fnbox", "{" P ",'workdir':'/.fnbox'}", "workdir", "'/.fnbox' is reserved"},
    {"workdir with a tab", "{" P ",'workdir':'/a\\tb'}", "workdir", "control character"},
    {"workdir with \\u0001", "{" P ",'workdir':'/a\\u0001'}", "workdir", "control character"},
    {"workdir with a newline", "{" P ",'workdir':'/a\\nb'}", "workdir", "control character"},
    {"workdir with DEL", "{" P ",'workdir':'/a\\u007fb'}", "workdir", "control character"},
    {"workdir with an embedded NUL", "{" P ",'workdir':'/a\\u0000/etc'}", "workdir", NULL},
    {"workdir of 257 bytes", "{" P ",'workdir':'/" N256 "'}", "workdir", NULL},
    {"workdir number", "{" P ",'workdir':1}", "workdir", "must be a string, got number"},
    {"workdir at root and in options", "{" P ",'workdir':'/a','options':{'workdir':'/b'}}", "workdir", "given both"},
    {"bad options.workdir", "{" P ",'options':{'workdir':'/etc/x'}}", "workdir", "reserved"},

    /* ---- reporting ---- */
    {"resultOptions and options.reporting", "{" P ",'resultOptions':{},'options':{'reporting':{}}}", "reporting",
     "not both"},
    {"resultOptions and root reporting", "{" P ",'resultOptions':{},'reporting':{}}", "reporting", "not both"},
    {"root reporting and options.reporting", "{" P ",'reporting':{},'options':{'reporting':{}}}", "reporting",
     "not both"},
    {"resultOptions null and options.reporting", "{" P ",'resultOptions':null,'options':{'reporting':{}}}",
     "reporting", "not both"},
    {"resultOptions field not boolean", "{" P ",'resultOptions':{'includeChanges':'yes'}}",
     "resultOptions.includeChanges", "must be a boolean, got string"},
    {"resultOptions field 0", "{" P ",'resultOptions':{'includeContents':0}}", "resultOptions.includeContents",
     "must be a boolean, got number"},
    {"options.reporting field null", "{" P ",'options':{'reporting':{'includeDenied':null}}}",
     "options.reporting.includeDenied", "must be a boolean, got null"},
    {"resultOptions unknown field", "{" P ",'resultOptions':{'bogus':true}}", "resultOptions.bogus", "unknown field"},
    {"options.reporting unknown field", "{" P ",'options':{'reporting':{'includechanges':true}}}",
     "options.reporting.includechanges", "unknown field"},
    {"resultOptions not an object", "{" P ",'resultOptions':[]}", "resultOptions", "must be an object, got array"},
    {"options.reporting not an object", "{" P ",'options':{'reporting':true}}", "options.reporting",
     "must be an object, got boolean"},
    {"root reporting field not boolean", "{" P ",'reporting':{'includeDenied':1}}", "reporting.includeDenied",
     "must be a boolean"},

    /* ---- files and mount (their contents are decoded by request/files.c and request/mount.c) ---- */
    {"files array", "{" P ",'files':[]}", "files", "must be an object"},
    {"files string", "{" P ",'files':'a'}", "files", "must be an object"},
    {"files twice", "{" P ",'files':{},'options':{'files':{}}}", "files", "both"},
    {"mount empty dirs", "{" P ",'mount':{'dirs':{}}}", "mount.dirs", ""},
    {"options.mount string", "{" P ",'options':{'mount':'x'}}", "mount", "object"},
    {"mount unknown field", "{" P ",'mount':{'dirs':{'/d':'/tmp'},'nope':1}}", "mount.nope", ""},
    {"files at root and in options", "{" P ",'files':{},'options':{'files':{}}}", "files", "given both"},

    /* ---- limits: every error names the field (and the maximum when above it) ---- */
    {"limits not an object", "{" P ",'limits':5}", "limits", "must be an object"},
    {"limits unknown field", "{" P ",'limits':{'memory':1}}", "limits.memory", "unknown field"},
    {"limits cpuSeconds zero", "{" P ",'limits':{'cpuSeconds':0}}", "limits.cpuSeconds", "must be at least 1"},
    {"limits cpuSeconds above the maximum", "{" P ",'limits':{'cpuSeconds':7201}}", "limits.cpuSeconds",
     "more than the maximum of 7200"},
    {"limits at root and in options", "{" P ",'limits':{},'options':{'limits':{}}}", "limits", "given both"},
    {"limits memoryBytes above the maximum", "{" P ",'limits':{'memoryBytes':4294967297}}", "limits.memoryBytes",
     "more than the maximum of 4294967296"},
    {"limits memoryBytes below the minimum", "{" P ",'limits':{'memoryBytes':1024}}", "limits.memoryBytes",
     "at least 16777216"},
    {"limits memoryBytes string", "{" P ",'limits':{'memoryBytes':'1G'}}", "limits.memoryBytes",
     "whole number"},
    {"limits memoryBytes fraction", "{" P ",'limits':{'memoryBytes':1.5e8}}", "limits.memoryBytes", "whole number"},
    {"limits memoryBytes huge", "{" P ",'limits':{'memoryBytes':184467440737095516150}}", "limits.memoryBytes",
     "more than the maximum"},
    {"limits memoryBytes huge negative", "{" P ",'limits':{'memoryBytes':-184467440737095516150}}",
     "limits.memoryBytes", "at least"},
    {"limits pids 0", "{" P ",'limits':{'pids':0}}", "limits.pids", "at least 1"},
    {"limits pids negative", "{" P ",'limits':{'pids':-1}}", "limits.pids", "at least 1"},
    {"limits pids above the maximum", "{" P ",'limits':{'pids':1025}}", "limits.pids", "maximum of 1024"},
    {"limits pids boolean", "{" P ",'limits':{'pids':true}}", "limits.pids", "got boolean"},
    {"limits workspaceBytes above", "{" P ",'limits':{'workspaceBytes':1073741825}}", "limits.workspaceBytes",
     "maximum of 1073741824"},
    {"limits workspaceBytes 0 (tmpfs: unlimited)", "{" P ",'limits':{'workspaceBytes':0}}", "limits.workspaceBytes",
     "at least"},
    {"limits tmpBytes above", "{" P ",'limits':{'tmpBytes':1073741825}}", "limits.tmpBytes", "maximum"},
    {"limits inodes 0 (tmpfs: unlimited)", "{" P ",'limits':{'inodes':0}}", "limits.inodes", "at least"},
    {"limits inodes above", "{" P ",'limits':{'inodes':1048577}}", "limits.inodes", "maximum of 1048576"},
    {"limits fileSizeBytes above", "{" P ",'limits':{'fileSizeBytes':1073741825}}", "limits.fileSizeBytes",
     "maximum"},
    {"limits openFiles too few for the protocol", "{" P ",'limits':{'openFiles':4}}", "limits.openFiles",
     "at least 16"},
    {"limits openFiles above", "{" P ",'limits':{'openFiles':4097}}", "limits.openFiles", "maximum of 4096"},
    {"limits stdoutBytes above", "{" P ",'limits':{'stdoutBytes':67108865}}", "limits.stdoutBytes", "maximum"},
    {"limits stderrBytes above", "{" P ",'limits':{'stderrBytes':67108865}}", "limits.stderrBytes", "maximum"},
    {"limits resultBytes above", "{" P ",'limits':{'resultBytes':268435457}}", "limits.resultBytes", "maximum"},
    {"limits resultBytes over fileSizeBytes", "{" P ",'limits':{'resultBytes':67108865}}", "limits.resultBytes",
     "fileSizeBytes"},
    {"options.limits field named", "{" P ",'options':{'limits':{'pids':2000}}}", "options.limits.pids", "maximum"},

    /* ---- permissions (details in test_permissions.c) ---- */
    {"permissions number", "{" P ",'permissions':1}", "permissions", "must be an object"},
    {"permissions unknown preset", "{" P ",'permissions':'allowEverything'}", "permissions", "unknown preset"},
    {"permissions at root and in options", "{" P ",'permissions':{},'options':{'permissions':{}}}", "permissions",
     "given both"},
    {"options.permissions field named", "{" P ",'options':{'permissions':{'env':{'PATH':'/x'}}}}",
     "options.permissions.env.PATH", "reserved"},
    {"permissions unknown command", "{" P ",'permissions':{'childProcess':['sh','no-such-command-xyz']}}",
     "permissions.childProcess[1]", "not found"},
    {"permissions fs refused", "{" P ",'permissions':{'fs':true}}", "permissions.fs", "mount"},
};

static bool check_invalid(const invalid_case *c, int rc, const fb_request *r, const fb_error *err, char *why,
                          size_t n)
{
    size_t fl = strlen(c->field);
    if (rc != -1)
        snprintf(why, n, "want -1, got %d (success: the request was accepted)", rc);
    else if (strcmp(fb_error_type(err), "InvalidRequest") != 0)
        snprintf(why, n, "type: want InvalidRequest got '%s' [%s]", fb_error_type(err), err->message);
    else if (err->err_no != 0)
        snprintf(why, n, "err_no: want 0 got %d", err->err_no);
    else if (strncmp(err->message, c->field, fl) != 0 || err->message[fl] != ':')
        snprintf(why, n, "message should start with '%s:': [%s]", c->field, err->message);
    else if (c->also && !strstr(err->message, c->also))
        snprintf(why, n, "message should contain '%s': [%s]", c->also, err->message);
    else if (strstr(err->message, "fnbox-num-"))
        snprintf(why, n, "message shows the internal number marker: [%s]", err->message);
    else if (!is_zeroed(r))
        snprintf(why, n, "the request struct is not reset after a failure");
    else
        return true;
    return false;
}

static void test_invalid_table(void **state)
{
    (void)state;
    int failed = 0;
    for (size_t i = 0; i < sizeof invalid_cases / sizeof *invalid_cases; i++) {
        const invalid_case *c = &invalid_cases[i];
        char *text = q(c->json);
        fb_request r;
        fb_error err;
        char why[2300] = "";
        int rc = parse_text(text, strlen(text), &r, &err);
        bool ok = check_invalid(c, rc, &r, &err, why, sizeof why);
        fb_request_free(&r); /* after a failure: a free of the reset struct; after a wrong success: cleanup */
        fb_request_free(&r);
        verdict(&failed, c->label, ok, why);
        free(text);
    }
    if (failed)
        fail_msg("%d invalid-request case(s) failed", failed);
}

/* ---- cases built in code ---- */

static char *build_nested(size_t depth_of_args)
{
    /* {"language":"python","code":"x","args": [[[...]]]} with the args value depth_of_args arrays deep */
    const char *head = "{\"language\":\"python\",\"code\":\"x\",\"args\":";
    size_t hl = strlen(head);
    char *t = malloc(hl + 2 * depth_of_args + 2);
    assert_non_null(t);
    memcpy(t, head, hl);
    memset(t + hl, '[', depth_of_args);
    memset(t + hl + depth_of_args, ']', depth_of_args);
    memcpy(t + hl + 2 * depth_of_args, "}", 2);
    return t;
}

/* jansson refuses nesting deeper than JSON_PARSER_MAX_DEPTH; the root object is one level. */
static void test_depth_limit(void **state)
{
    (void)state;
    fb_request r;
    fb_error err;
    char *ok_text = build_nested(JSON_PARSER_MAX_DEPTH - 1);
    assert_int_equal(parse_text(ok_text, strlen(ok_text), &r, &err), 0);
    assert_int_equal(json_array_size(r.args), 1);
    fb_request_free(&r);
    free(ok_text);

    char *deep = build_nested(JSON_PARSER_MAX_DEPTH);
    assert_int_equal(parse_text(deep, strlen(deep), &r, &err), -1);
    assert_string_equal(fb_error_type(&err), "InvalidRequest");
    assert_non_null(strstr(err.message, "request: malformed JSON"));
    assert_non_null(strstr(err.message, "depth"));
    assert_true(is_zeroed(&r));
    fb_request_free(&r);
    free(deep);

    /* far deeper than the stack would survive with a recursive parser without a limit */
    char *very = build_nested(1000000);
    assert_int_equal(parse_text(very, strlen(very), &r, &err), -1);
    assert_non_null(strstr(err.message, "depth"));
    free(very);
}

/* A length above FB_MAX_REQUEST_BYTES is refused before a byte is read: the buffer is an inaccessible
 * mapping, so reading it would crash the test. */
static void test_size_limit_not_read(void **state)
{
    (void)state;
    size_t len = (size_t)FB_MAX_REQUEST_BYTES + 1;
    void *p = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    assert_true(p != MAP_FAILED);
    fb_request r;
    memset(&r, 0xA5, sizeof r);
    fb_error err = {0};
    assert_int_equal(fb_request_parse(p, len, &r, &err), -1);
    assert_string_equal(fb_error_type(&err), "InvalidRequest");
    assert_int_equal(strncmp(err.message, "request:", 8), 0);
    assert_non_null(strstr(err.message, "maximum"));
    assert_true(is_zeroed(&r));
    fb_request_free(&r);
    munmap(p, len);
}

/* A 1 MiB request (1 MiB of code, 10000 arguments) decodes completely. */
static void test_large_request(void **state)
{
    (void)state;
    size_t code_len = 1 << 20, nargs = 10000;
    const char *head = "{\"language\":\"python\",\"code\":\"";
    char *t = malloc(code_len + nargs * 7 + 256);
    assert_non_null(t);
    size_t n = strlen(head);
    memcpy(t, head, n);
    for (size_t i = 0; i < code_len; i++)
        t[n++] = (char)('a' + i % 26);
    n += (size_t)sprintf(t + n, "\",\"args\":[");
    for (size_t i = 0; i < nargs; i++)
        n += (size_t)sprintf(t + n, "%s%zu", i ? "," : "", i);
    n += (size_t)sprintf(t + n, "]}");
    fb_request r;
    fb_error err;
    assert_int_equal(parse_text(t, n, &r, &err), 0);
    assert_int_equal(r.code_len, code_len);
    assert_int_equal(r.code[code_len - 1], 'a' + (code_len - 1) % 26);
    assert_int_equal(json_array_size(r.args), nargs);
    assert_int_equal(json_integer_value(json_array_get(r.args, nargs - 1)), nargs - 1);
    fb_request_free(&r);
    free(t);
}

/* code may be at most FB_MAX_CODE_BYTES. */
static void test_code_limit(void **state)
{
    (void)state;
    size_t code_len = (size_t)FB_MAX_CODE_BYTES + 1;
    const char *head = "{\"language\":\"python\",\"code\":\"", *tail = "\"}";
    size_t hl = strlen(head), tl = strlen(tail), n = hl + code_len + tl;
    char *t = malloc(n);
    assert_non_null(t);
    memcpy(t, head, hl);
    memset(t + hl, 'x', code_len);
    memcpy(t + hl + code_len, tail, tl);
    fb_request r;
    memset(&r, 0xA5, sizeof r);
    fb_error err = {0};
    assert_int_equal(fb_request_parse(t, n, &r, &err), -1);
    assert_string_equal(fb_error_type(&err), "InvalidRequest");
    assert_int_equal(strncmp(err.message, "code:", 5), 0);
    assert_non_null(strstr(err.message, "maximum"));
    assert_true(is_zeroed(&r));
    fb_request_free(&r);
    free(t);
}

/* The text need not be NUL-terminated: bytes after len are never looked at. */
static void test_len_bounds_the_text(void **state)
{
    (void)state;
    const char *text = "{\"language\":\"python\",\"code\":\"x\"}, \"garbage";
    size_t len = strlen("{\"language\":\"python\",\"code\":\"x\"}");
    fb_request r;
    fb_error err = {0};
    assert_int_equal(fb_request_parse(text, len, &r, &err), 0);
    assert_string_equal(r.code, "x");
    fb_request_free(&r);
    /* and a cut inside the document is malformed, not read past */
    assert_int_equal(parse_text(text, len - 1, &r, &err), -1);
    assert_non_null(strstr(err.message, "malformed JSON"));
}

/* Numbers beyond int64/double survive decoding as exact big numbers. */
static void test_big_numbers_in_args(void **state)
{
    (void)state;
    const char *text = "{\"language\":\"python\",\"code\":\"x\",\"args\":[18446744073709551623,-1e400,1],"
                       "\"kwargs\":{\"k\":[100000000000000000000000000000000000000000]}}";
    fb_request r;
    fb_error err;
    assert_int_equal(parse_text(text, strlen(text), &r, &err), 0);
    assert_string_equal(fb_json_bignum(json_array_get(r.args, 0)), "18446744073709551623");
    assert_string_equal(fb_json_bignum(json_array_get(r.args, 1)), "-1e400");
    assert_null(fb_json_bignum(json_array_get(r.args, 2)));
    char *s = fb_json_dumps(r.args, JSON_COMPACT);
    assert_string_equal(s, "[18446744073709551623,-1e400,1]");
    free(s);
    s = fb_json_dumps(r.kwargs, JSON_COMPACT);
    assert_string_equal(s, "{\"k\":[100000000000000000000000000000000000000000]}");
    free(s);
    fb_request_free(&r);
}

/* The highest index allowed makes a 10001-slot args array. */
static void test_index_bounds(void **state)
{
    (void)state;
    const char *text = "{\"language\":\"python\",\"code\":\"x\",\"args\":{\"z\":{\"index\":10000,\"value\":7},"
                       "\"a\":{\"index\":0,\"value\":1}}}";
    fb_request r;
    fb_error err;
    assert_int_equal(parse_text(text, strlen(text), &r, &err), 0);
    assert_int_equal(json_array_size(r.args), 10001);
    assert_int_equal(json_integer_value(json_array_get(r.args, 10000)), 7);
    assert_int_equal(json_integer_value(json_array_get(r.args, 0)), 1);
    assert_true(json_is_null(json_array_get(r.args, 5000)));
    assert_int_equal(json_object_size(r.kwargs), 0);
    fb_request_free(&r);
}

/* The request's own objects are not changed by decoding: args/kwargs are separate from root. */
static void test_root_untouched(void **state)
{
    (void)state;
    const char *text = "{\"language\":\"python\",\"code\":\"x\",\"args\":{\"a\":{\"index\":0,\"value\":1},\"b\":2},"
                       "\"kwargs\":{\"c\":3}}";
    fb_request r;
    fb_error err;
    assert_int_equal(parse_text(text, strlen(text), &r, &err), 0);
    json_t *want = json_loads(text, 0, NULL);
    assert_true(json_equal(r.root, want));
    json_array_append_new(r.args, json_integer(9));
    json_object_set_new(r.kwargs, "d", json_integer(4));
    assert_true(json_equal(r.root, want));
    json_decref(want);
    fb_request_free(&r);
}

/* allowAllFs: a mount without its own permissions allows every operation; one with them keeps them. */
static void test_allow_all_fs_mount(void **state)
{
    (void)state;
    const char *texts[] = {
        "{\"language\":\"python\",\"code\":\"x\",\"permissions\":\"allowAllFs\",\"mount\":{\"dirs\":{\"/d\":\"/tmp\"}}}",
        "{\"language\":\"python\",\"code\":\"x\",\"mount\":{\"dirs\":{\"/d\":\"/tmp\"},\"sync\":{\"mode\":\"batch\"}}}",
        "{\"language\":\"python\",\"code\":\"x\",\"permissions\":\"allowAll\",\"mount\":{\"dirs\":{\"/d\":\"/tmp\"},"
        "\"permissions\":{\"default\":{\"read\":true}}}}",
    };
    const bool create[] = {true, false, false};
    for (size_t i = 0; i < 3; i++) {
        fb_request r;
        fb_error err;
        assert_int_equal(parse_text(texts[i], strlen(texts[i]), &r, &err), 0);
        assert_non_null(r.mount);
        assert_true(fb_rules_allows(r.mount->rules, "/d", "a.txt", FB_OP_READ, NULL));
        assert_int_equal(fb_rules_allows(r.mount->rules, "/d", "a.txt", FB_OP_CREATE, NULL), create[i]);
        assert_int_equal(fb_rules_allows(r.mount->rules, "/d", "a.txt", FB_OP_DELETE, NULL), create[i]);
        /* the request document itself is not changed */
        assert_null(json_object_get(json_object_get(r.root, "mount"), i == 2 ? "nothing" : "permissions"));
        fb_request_free(&r);
    }
}

/* Resolved commands: absolute real paths under /usr, deduplicated (sh and dash are one file on Debian). */
static void test_commands_resolved(void **state)
{
    (void)state;
    const char *text = "{\"language\":\"python\",\"code\":\"x\",\"permissions\":{\"childProcess\":[\"sh\",\"/bin/sh\",\"ls\"]}}";
    fb_request r;
    fb_error err;
    assert_int_equal(parse_text(text, strlen(text), &r, &err), 0);
    assert_int_equal(r.permissions.nexec_names, 3);
    assert_int_equal(r.permissions.nexec, 2);
    assert_null(r.permissions.exec_allow[2]);
    for (size_t i = 0; i < 2; i++)
        assert_int_equal(strncmp(r.permissions.exec_allow[i], "/usr/", 5), 0);
    assert_int_equal(r.permissions.exec_index[0], r.permissions.exec_index[1]);
    assert_string_equal(r.permissions.exec_names[2], "ls");
    assert_false(r.permissions.exec_any);
    fb_request_free(&r);
}

/* ---- allocation failure torture ---- */

/* Every jansson allocation failed in turn, for every valid case: the parse either fails cleanly (reset
 * struct, nothing leaked: ASan/valgrind check that) or succeeds with exactly the table's answer. */
static void test_allocation_failures(void **state)
{
    (void)state;
    int failed = 0, silent = 0;
    char first_silent[1200] = "";
    alarm(20); /* a hang under allocation failure ends the program instead of the CI job */
    alloc_fail_begin();
    for (size_t i = 0; i < sizeof valid_cases / sizeof *valid_cases; i++) {
        const valid_case *c = &valid_cases[i];
        char *text = q(c->json);
        for (long budget = 0;; budget++) {
            fb_request r;
            fb_error err;
            alloc_budget = budget;
            int rc = parse_text(text, strlen(text), &r, &err);
            bool exhausted = alloc_budget == 0;
            alloc_budget = -1;
            if (rc == 0) {
                char why[1024];
                if (!check_valid(c, &r, why, sizeof why)) {
                    if (!silent++)
                        snprintf(first_silent, sizeof first_silent, "%s, budget %ld: %s", c->label, budget, why);
                }
                fb_request_free(&r);
                if (!exhausted)
                    break;
            } else if (!is_zeroed(&r)) {
                print_message("# FAIL %s, budget %ld: struct not reset after failure\n", c->label, budget);
                failed++;
            }
            if (budget > 10000) {
                print_message("# FAIL %s: never succeeds\n", c->label);
                failed++;
                break;
            }
        }
        free(text);
    }
    alloc_fail_end();
    alarm(0);
    char why[1300];
    snprintf(why, sizeof why, "%d success(es) after an allocation failure with a wrong request, first: %s", silent,
             first_silent);
    verdict(&failed, "allocation failures", silent == 0, why);
    if (failed)
        fail_msg("%d allocation-failure problem(s)", failed);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_table),
        cmocka_unit_test(test_invalid_table),
        cmocka_unit_test(test_depth_limit),
        cmocka_unit_test(test_size_limit_not_read),
        cmocka_unit_test(test_large_request),
        cmocka_unit_test(test_code_limit),
        cmocka_unit_test(test_len_bounds_the_text),
        cmocka_unit_test(test_big_numbers_in_args),
        cmocka_unit_test(test_index_bounds),
        cmocka_unit_test(test_root_untouched),
        cmocka_unit_test(test_allow_all_fs_mount),
        cmocka_unit_test(test_commands_resolved),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
