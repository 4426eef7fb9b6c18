/* Request decoding. Every rejection is an "InvalidRequest" naming the field, e.g. "timeout: must be a
 * number of seconds between 0 and 3600, got string". The seed's newer (v0.2) code silently ignores the
 * root-level v0.1 fields; we accept both and refuse a field given in both places. */
#include "request/request.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "request/args_text.h"
#include "request/limits.h"
#include "request/mount.h"
#include "util/json.h"

#define BAD(...) fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, __VA_ARGS__)
#define OOM(what) fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "%s", what)

static const char *const k_root_fields[] = {
    "language", "code", "functionName", "args", "kwargs", "schema", "files", "mount", "workdir",
    "resultOptions", "timeout", "options", "argsMode", "autoModeThreshold", "reporting", "permissions", "limits",
    "environment", "dependencies",
};
static const char *const k_option_fields[] = {"files", "mount", "workdir", "reporting", "timeout", "permissions",
                                              "limits", "environment", "dependencies"};
static const char *const k_reporting_fields[] = {"includeChanges", "includeContents", "includeDenied"};

static bool in_list(const char *key, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(key, list[i]) == 0)
            return true;
    return false;
}

static int check_known(json_t *obj, const char *where, const char *const *list, size_t n, fb_error *err)
{
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v) {
        if (!in_list(key, list, n))
            return BAD("%s%s%s: unknown field", where, *where ? "." : "", key);
    }
    return 0;
}

/* A field that may sit at the root (v0.1) or inside options (v0.2), but not both. */
static json_t *root_or_option(json_t *root, json_t *options, const char *name, fb_error *err, int *rc)
{
    json_t *a = json_object_get(root, name);
    json_t *b = options ? json_object_get(options, name) : NULL;
    if (a && b) {
        *rc = BAD("%s: given both at the root and in options; give it once", name);
        return NULL;
    }
    *rc = 0;
    return a ? a : b;
}

static bool is_identifier(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    if (!*p || (*p >= '0' && *p <= '9'))
        return false;
    for (; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_' ||
              *p == '$' || *p >= 0x80))
            return false;
    return true;
}

static int parse_language_code(json_t *root, fb_request *r, fb_error *err)
{
    json_t *lang = json_object_get(root, "language");
    if (!lang)
        return BAD("language: required (supported: %s)", fb_lang_supported());
    if (!json_is_string(lang))
        return BAD("language: must be a string, got %s", fb_json_type_name(lang));
    r->lang = strlen(json_string_value(lang)) == json_string_length(lang) ? fb_lang_lookup(json_string_value(lang)) : NULL;
    if (!r->lang)
        return BAD("language: unsupported language '%.64s'; supported: %s", json_string_value(lang),
                   fb_lang_supported());
    json_t *code = json_object_get(root, "code");
    if (!code)
        return BAD("code: required");
    if (!json_is_string(code))
        return BAD("code: must be a string, got %s", fb_json_type_name(code));
    r->code = json_string_value(code);
    r->code_len = json_string_length(code);
    if (r->code_len > FB_MAX_CODE_BYTES)
        return BAD("code: %zu bytes is more than the maximum of %llu", r->code_len,
                   (unsigned long long)FB_MAX_CODE_BYTES);
    json_t *fn = json_object_get(root, "functionName");
    if (fn && !json_is_null(fn)) {
        if (!json_is_string(fn))
            return BAD("functionName: must be a string, got %s", fb_json_type_name(fn));
        r->function_name = json_string_value(fn);
        if (json_string_length(fn) > FB_MAX_NAME_BYTES || strlen(r->function_name) != json_string_length(fn) ||
            !is_identifier(r->function_name))
            return BAD("functionName: '%.64s' is not a valid function name", r->function_name);
    }
    return 0;
}

/* Puts value at args[i], padding with null; `taken` remembers which slots were given (a given null is
 * still taken). */
static int set_slot(json_t *args, json_t *taken, size_t i, json_t *value)
{
    while (json_array_size(args) <= i)
        if (json_array_append_new(args, json_null()) < 0)
            return -1;
    char key[24];
    snprintf(key, sizeof key, "%zu", i);
    return json_array_set(args, i, value) < 0 || json_object_set_new(taken, key, json_true()) < 0 ? -1 : 0;
}

/* The v0.2 object form: keys are parameter names; {"index": n, "value": v} is positional slot n, any
 * other value is passed by name. */
static int parse_args_object(json_t *args, fb_request *r, fb_error *err)
{
    json_t *taken = json_object();
    const char *key;
    json_t *v;
    int rc = taken ? 0 : OOM("args");
    json_object_foreach(args, key, v) {
        if (rc < 0)
            break;
        json_t *idx = json_object_get(v, "index");
        if (json_is_object(v) && json_object_size(v) == 2 && idx && json_object_get(v, "value")) {
            if (!json_is_integer(idx) || json_integer_value(idx) < 0 || json_integer_value(idx) > 10000) {
                rc = BAD("args.%s.index: must be an integer from 0 to 10000", key);
                break;
            }
            char slot[24];
            snprintf(slot, sizeof slot, "%lld", (long long)json_integer_value(idx));
            if (json_object_get(taken, slot))
                rc = BAD("args.%s.index: position %s is given twice", key, slot);
            else if (set_slot(r->args, taken, (size_t)json_integer_value(idx), json_object_get(v, "value")) < 0)
                rc = OOM("args");
        } else if (json_object_get(r->kwargs, key)) {
            rc = BAD("args.%s: also given in kwargs", key);
        } else if (json_object_set(r->kwargs, key, v) < 0) {
            rc = OOM("args");
        }
    }
    json_decref(taken);
    return rc;
}

/* args: an array of positional values, or the v0.2 object form. kwargs: an object. */
static int parse_args(json_t *root, fb_request *r, fb_error *err)
{
    json_t *args = json_object_get(root, "args");
    json_t *kwargs = json_object_get(root, "kwargs");
    if (kwargs && !json_is_null(kwargs) && !json_is_object(kwargs))
        return BAD("kwargs: must be an object, got %s", fb_json_type_name(kwargs));
    if (args && !json_is_null(args) && !json_is_array(args) && !json_is_object(args))
        return BAD("args: must be an array or an object, got %s", fb_json_type_name(args));
    r->kwargs = json_is_object(kwargs) ? json_deep_copy(kwargs) : json_object();
    r->args = json_is_array(args) ? json_incref(args) : json_array();
    if (!r->kwargs || !r->args)
        return OOM("request");
    return json_is_object(args) ? parse_args_object(args, r, err) : 0;
}

int fb_request_timeout_parse(const json_t *t, double *out, fb_error *err)
{
    *out = FB_DEFAULT_TIMEOUT_S;
    if (!t || json_is_null(t))
        return 0;
    if (!json_is_number(t))
        return BAD("timeout: must be a number of seconds, got %s", fb_json_type_name(t));
    double v = json_number_value(t);
    if (!(v > 0) || v > FB_MAX_TIMEOUT_S || isnan(v))
        return BAD("timeout: must be more than 0 and at most %g seconds, got %g", FB_MAX_TIMEOUT_S, v);
    *out = v;
    return 0;
}

int fb_request_workdir_parse(const json_t *w, const char **out, fb_error *err)
{
    static const char *const reserved[] = {"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
                                           "/etc", "/proc", "/dev", "/sys", "/.fnbox"};
    *out = "/workspace";
    if (!w || json_is_null(w))
        return 0;
    if (!json_is_string(w))
        return BAD("workdir: must be a string, got %s", fb_json_type_name(w));
    const char *s = json_string_value(w);
    size_t len = json_string_length(w);
    if (len < 2 || len > FB_MAX_NAME_BYTES || s[0] != '/' || strlen(s) != len || s[len - 1] == '/')
        return BAD("workdir: must be an absolute directory path like /workspace, got '%.64s'", s);
    if (strstr(s, "//") || strstr(s, "/./") || strstr(s, "/../") || strcmp(s + len - 2, "/.") == 0 ||
        (len >= 3 && strcmp(s + len - 3, "/..") == 0))
        return BAD("workdir: must be a normalized path (no '.', '..' or '//'), got '%.64s'", s);
    for (const char *p = s; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            return BAD("workdir: contains a control character");
    for (size_t i = 0; i < sizeof reserved / sizeof *reserved; i++) {
        size_t n = strlen(reserved[i]);
        if (strncmp(s, reserved[i], n) == 0 && (s[n] == '\0' || s[n] == '/'))
            return BAD("workdir: '%s' is reserved for the system; choose a path like /workspace", reserved[i]);
    }
    *out = s;
    return 0;
}

static int parse_reporting(json_t *rep, const char *name, fb_request *r, fb_error *err)
{
    r->reporting = (fb_reporting){true, true, true};
    if (!rep || json_is_null(rep))
        return 0;
    if (!json_is_object(rep))
        return BAD("%s: must be an object, got %s", name, fb_json_type_name(rep));
    if (check_known(rep, name, k_reporting_fields, 3, err) < 0)
        return -1;
    bool *dst[] = {&r->reporting.include_changes, &r->reporting.include_contents, &r->reporting.include_denied};
    for (int i = 0; i < 3; i++) {
        json_t *v = json_object_get(rep, k_reporting_fields[i]);
        if (!v)
            continue;
        if (!json_is_boolean(v))
            return BAD("%s.%s: must be a boolean, got %s", name, k_reporting_fields[i], fb_json_type_name(v));
        *dst[i] = json_is_true(v);
    }
    return 0;
}

/* `limits`: each field an integer from its minimum to its maximum (more is refused, not clamped). */
typedef struct limit_field {
    const char *name;
    size_t offset;                /* in fb_call_limits */
    uint64_t dflt, min, max;
} limit_field;

#define LIMIT(name, member, dflt, min, max) {name, offsetof(fb_call_limits, member), dflt, min, max}
static const limit_field k_limit_fields[] = {
    LIMIT("memoryBytes", memory_bytes, FB_DEFAULT_MEMORY_BYTES, FB_MIN_MEMORY_BYTES, FB_MAX_MEMORY_BYTES),
    LIMIT("pids", pids, FB_DEFAULT_PIDS, 1, FB_MAX_PIDS),
    LIMIT("workspaceBytes", workspace_bytes, FB_DEFAULT_WORKSPACE_BYTES, 4096, FB_MAX_WORKSPACE_BYTES),
    LIMIT("tmpBytes", tmp_bytes, FB_DEFAULT_TMP_BYTES, 4096, FB_MAX_TMP_BYTES),
    LIMIT("inodes", inodes, FB_DEFAULT_TMPFS_INODES, 16, FB_MAX_TMPFS_INODES),
    LIMIT("fileSizeBytes", file_size_bytes, FB_DEFAULT_FSIZE_BYTES, 1, FB_MAX_FSIZE_BYTES),
    LIMIT("openFiles", open_files, FB_DEFAULT_NOFILE, FB_MIN_NOFILE, FB_MAX_NOFILE),
    LIMIT("stdoutBytes", stdout_bytes, FB_DEFAULT_OUTPUT_BYTES, 0, FB_MAX_OUTPUT_BYTES),
    LIMIT("stderrBytes", stderr_bytes, FB_DEFAULT_OUTPUT_BYTES, 0, FB_MAX_OUTPUT_BYTES),
    LIMIT("resultBytes", result_bytes, FB_DEFAULT_RESULT_BYTES, 1, FB_MAX_RESULT_BYTES),
    LIMIT("cpuSeconds", cpu_seconds, 0 /* set from the timeout below */, 1, FB_MAX_CPU_SECONDS),
};
#define N_LIMITS (sizeof k_limit_fields / sizeof *k_limit_fields)

/* The default CPU-time limit follows the (already parsed) timeout: a single-threaded function reaches its
 * wall-clock deadline first, so it is only a backstop unless the request lowers it. */
static void default_cpu_limit(fb_call_limits *l, double timeout_s)
{
    if (l->cpu_seconds == 0)
        l->cpu_seconds = (uint64_t)ceil(timeout_s) + FB_CPU_SLACK_S;
}

int fb_request_limits_parse(const json_t *v, const char *name, double timeout_s, fb_call_limits *out, fb_error *err)
{
    for (size_t i = 0; i < N_LIMITS; i++)
        *(uint64_t *)((char *)out + k_limit_fields[i].offset) = k_limit_fields[i].dflt;
    default_cpu_limit(out, timeout_s);
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_object(v))
        return BAD("%s: must be an object like {\"memoryBytes\": 134217728}, got %s", name, fb_json_type_name(v));
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)v, key, val) {
        const limit_field *f = NULL;
        for (size_t i = 0; i < N_LIMITS && !f; i++)
            if (strcmp(key, k_limit_fields[i].name) == 0)
                f = &k_limit_fields[i];
        if (!f)
            return BAD("%s.%.64s: unknown field (expected memoryBytes, pids, workspaceBytes, tmpBytes, inodes, "
                       "fileSizeBytes, openFiles, stdoutBytes, stderrBytes, resultBytes, cpuSeconds)",
                       name, key);
        if (json_is_null(val))
            continue;
        const char *big = fb_json_bignum(val);
        if (!json_is_integer(val) && !(big && !strpbrk(big, ".eE")))
            return BAD("%s.%s: must be a whole number (no fraction or exponent), got %s", name, key,
                       json_is_real(val) || big ? "a real number" : fb_json_type_name(val));
        long long n = big ? 0 : json_integer_value(val);
        char num[48];
        if (big)
            snprintf(num, sizeof num, "%.40s", big);
        else
            snprintf(num, sizeof num, "%lld", n);
        if (big ? big[0] == '-' : n < 0 || (uint64_t)n < f->min)
            return BAD("%s.%s: must be at least %llu, got %s", name, key, (unsigned long long)f->min, num);
        if (big || (uint64_t)n > f->max)
            return BAD("%s.%s: %s is more than the maximum of %llu", name, key, num, (unsigned long long)f->max);
        *(uint64_t *)((char *)out + f->offset) = (uint64_t)n;
    }
    /* The result travels through a file (a memfd), which RLIMIT_FSIZE bounds too: a lower fileSizeBytes
     * lowers the default result limit with it, and an explicit resultBytes above it is refused. */
    json_t *given = json_object_get(v, "resultBytes");
    if ((!given || json_is_null(given)) && out->result_bytes > out->file_size_bytes)
        out->result_bytes = out->file_size_bytes;
    if (out->result_bytes > out->file_size_bytes)
        return BAD("%s.resultBytes: %llu is more than fileSizeBytes (%llu), which bounds the result channel too; "
                   "raise fileSizeBytes as well",
                   name, (unsigned long long)out->result_bytes, (unsigned long long)out->file_size_bytes);
    return 0;
}

int fb_request_permissions_parse(const json_t *v, const char *name, fb_permissions *out, fb_error *err)
{
    static const char *const search[] = {"/usr/bin", "/bin", NULL};
    char field[64];
    if (fb_permissions_parse(v, name, out, err) < 0)
        return -1;
    snprintf(field, sizeof field, "%s.childProcess", name);
    return fb_permissions_resolve(out, field, search, "/usr/", err);
}

int fb_request_shell_permissions_parse(const json_t *v, const char *name, fb_permissions *out, fb_error *err)
{
    if (fb_request_permissions_parse(v, name, out, err) < 0)
        return -1;
    if (!json_is_object(v) || !json_object_get(v, "childProcess"))
        out->exec_any = true;
    return 0;
}

/* allowAllFs: a mount without its own `permissions` allows every operation by default. */
static int parse_mount(json_t *v, const char *name, fb_request *r, fb_error *err)
{
    r->mount = calloc(1, sizeof *r->mount);
    if (!r->mount)
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "mount");
    return fb_mount_config_parse_ex(v, name, r->permissions.fs_all, r->mount, err);
}

static int parse_options(json_t *root, fb_request *r, fb_error *err)
{
    int rc = 0;
    json_t *options = json_object_get(root, "options");
    if (options && !json_is_null(options)) {
        if (!json_is_object(options))
            return BAD("options: must be an object, got %s", fb_json_type_name(options));
        if (check_known(options, "options", k_option_fields, sizeof k_option_fields / sizeof *k_option_fields, err) < 0)
            return -1;
    } else {
        options = NULL;
    }
    json_t *v = root_or_option(root, options, "timeout", err, &rc);
    if (rc < 0 || fb_request_timeout_parse(v, &r->timeout_s, err) < 0)
        return -1;
    v = root_or_option(root, options, "workdir", err, &rc);
    if (rc < 0 || fb_request_workdir_parse(v, &r->workdir, err) < 0)
        return -1;
    json_t *ro = json_object_get(root, "resultOptions");
    json_t *rep = json_object_get(root, "reporting");
    json_t *orep = options ? json_object_get(options, "reporting") : NULL;
    if ((ro != NULL) + (rep != NULL) + (orep != NULL) > 1)
        return BAD("reporting: give resultOptions (v0.1) or options.reporting (v0.2), not both");
    if (parse_reporting(ro ? ro : rep ? rep : orep, ro ? "resultOptions" : rep ? "reporting" : "options.reporting", r,
                        err) < 0)
        return -1;
    v = root_or_option(root, options, "files", err, &rc);
    if (rc < 0)
        return -1;
    if (v && !json_is_null(v)) {
        if (!json_is_object(v))
            return BAD("files: must be an object {path: content}, got %s", fb_json_type_name(v));
        r->files = v;
    }
    v = root_or_option(root, options, "limits", err, &rc);
    if (rc < 0 || fb_request_limits_parse(v, json_object_get(root, "limits") ? "limits" : "options.limits",
                                          r->timeout_s, &r->limits, err) < 0)
        return -1;
    v = root_or_option(root, options, "permissions", err, &rc);
    if (rc < 0 ||
        fb_request_permissions_parse(v, json_object_get(root, "permissions") ? "permissions" : "options.permissions",
                                     &r->permissions, err) < 0)
        return -1;
    v = root_or_option(root, options, "mount", err, &rc);
    if (rc < 0 || !v || json_is_null(v))
        return rc;
    return parse_mount(v, "mount", r, err);
}

static int parse_schema(json_t *root, fb_request *r, fb_error *err)
{
    json_t *schema = json_object_get(root, "schema");
    if (!schema || json_is_null(schema))
        return 0;
    if (!json_is_object(schema))
        return BAD("schema: must be an object, got %s", fb_json_type_name(schema));
    r->schema = schema;
    return 0;
}

/* `environment` (at the root or in options, as the other run settings): the named environment; and the
 * `dependencies` placed in it. */
static int parse_environment(json_t *root, fb_request *r, fb_error *err)
{
    int rc;
    json_t *options = json_object_get(root, "options");
    json_t *v = root_or_option(root, json_is_object(options) ? options : NULL, "environment", err, &rc);
    if (rc < 0)
        return rc;
    if (fb_environment_decode(v, json_object_get(root, "environment") ? "environment" : "options.environment",
                              &r->environment, err) < 0)
        return -1;
    v = root_or_option(root, json_is_object(options) ? options : NULL, "dependencies", err, &rc);
    if (rc < 0)
        return rc;
    return fb_dependencies_decode(v, json_object_get(root, "dependencies") ? "dependencies" : "options.dependencies",
                                  &r->dependencies, err);
}

/* The document, with args and kwargs left out as their text when the whole request is valid JSON
 * (request/args_text.h: *sp says where they are); else all of it, by jansson, which words a rejection. */
static int load_root(const char *text, size_t len, fb_request *out, fb_args_spans *sp, fb_error *err)
{
    json_error_t jerr;
    size_t skeleton_len = 0;
    char *skeleton = fb_args_text_scan(text, len, sp) && fb_args_text_any(sp)
                         ? fb_args_text_skeleton(text, len, sp, &skeleton_len)
                         : NULL;
    if (!skeleton)
        memset(sp, 0, sizeof *sp);
    out->root = skeleton ? fb_json_loadb(skeleton, skeleton_len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &jerr)
                         : fb_json_loadb(text, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &jerr);
    free(skeleton);
    if (!out->root)
        return BAD("request: malformed JSON at line %d, column %d: %s", jerr.line, jerr.column, jerr.text);
    return 0;
}

/* args and kwargs as references to their text when the language and the request allow it (r->args set),
 * else decoded into the document for parse_args, as if they had never been left out. */
static int args_from_text(fb_request *r, const fb_args_spans *sp, fb_error *err)
{
    if (!sp->args && !sp->kwargs)
        return 0;
    json_t *schema = json_object_get(r->root, "schema");
    int rc = fb_args_text_take(sp, r->lang, schema && !json_is_null(schema), &r->texts, &r->args, &r->kwargs);
    if (rc == 0 && fb_args_text_restore(r->root, sp) < 0)
        rc = -1;
    return rc < 0 ? OOM("request arguments") : 0;
}

int fb_request_parse(const char *text, size_t len, fb_request *out, fb_error *err)
{
    memset(out, 0, sizeof *out);
    if (len > FB_MAX_REQUEST_BYTES)
        return BAD("request: %zu bytes is more than the maximum of %llu", len,
                   (unsigned long long)FB_MAX_REQUEST_BYTES);
    fb_args_spans sp;
    if (load_root(text, len, out, &sp, err) < 0)
        return -1;
    if (!json_is_object(out->root)) {
        BAD("request: must be a JSON object, got %s", fb_json_type_name(out->root));
        goto fail;
    }
    if (check_known(out->root, "", k_root_fields, sizeof k_root_fields / sizeof *k_root_fields, err) < 0 ||
        parse_language_code(out->root, out, err) < 0 || args_from_text(out, &sp, err) < 0 ||
        (!out->args && parse_args(out->root, out, err) < 0) ||
        parse_options(out->root, out, err) < 0 || parse_schema(out->root, out, err) < 0 ||
        parse_environment(out->root, out, err) < 0)
        goto fail;
    /* The seed's transport hints (how its WASM runner passes arguments: stdin or a file, and the size where
     * auto mode switches). fnbox has one channel with no size wall: accepted for seed code, and ignored. */
    json_t *mode = json_object_get(out->root, "argsMode");
    if (mode && !json_is_string(mode) && !json_is_null(mode)) {
        BAD("argsMode: must be a string, got %s", fb_json_type_name(mode));
        goto fail;
    }
    json_t *threshold = json_object_get(out->root, "autoModeThreshold");
    if (threshold && !json_is_null(threshold) && !(json_is_number(threshold) && json_number_value(threshold) >= 0)) {
        BAD("autoModeThreshold: must be a number of bytes (0 or more), got %s", fb_json_type_name(threshold));
        goto fail;
    }
    return 0;
fail:
    fb_request_free(out);
    return -1;
}

void fb_request_free(fb_request *r)
{
    fb_dependencies_free(&r->dependencies);
    fb_permissions_free(&r->permissions);
    if (r->mount) {
        fb_mount_config_free(r->mount);
        free(r->mount);
    }
    json_decref(r->args);
    json_decref(r->kwargs);
    json_decref(r->root);
    fb_json_texts_free(&r->texts);
    memset(r, 0, sizeof *r);
}
