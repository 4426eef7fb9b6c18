/* Execute request decoding (command.h). Every rejection is an "InvalidRequest" whose message starts with
 * the field: `env.FOO: ...`, `cwd: ...`. The shared fields (timeout, limits, permissions, files) use the
 * call request's own decoders, so both refuse the same things with the same words. */
#include "request/command.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "request/limits.h"
#include "request/mount.h"
#include "util/json.h"

#define BAD(...) fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, __VA_ARGS__)
#define OOM(what) fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "%s: out of memory", what)

static const char *const k_fields[] = {"command", "code", "main",  "language", "args",   "stdin",       "env",
                                       "cwd",     "timeout", "files", "mount",    "limits", "permissions", "environment",
                                       "dependencies", NULL};

static bool listed(const char *key, const char *const *list)
{
    for (; list && *list; list++)
        if (strcmp(key, *list) == 0)
            return true;
    return false;
}

static int check_fields(json_t *obj, const char *const *extra, fb_error *err)
{
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v) {
        if (!listed(key, k_fields) && !listed(key, extra))
            return BAD("%.64s: unknown field (expected command, or code or main + language, and args, stdin, env, "
                       "cwd, timeout, files, mount, limits, permissions, environment, dependencies)",
                       key);
    }
    return 0;
}

/* A JSON string (not a big number jansson could not hold, which fb_json_loadb carries as a marked string). */
static bool is_text(const json_t *v)
{
    return json_is_string(v) && !fb_json_bignum(v);
}

static bool has_nul(const json_t *s)
{
    return strlen(json_string_value(s)) != json_string_length(s);
}

static bool has_control(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return true;
    return false;
}

static int parse_command(json_t *v, fb_command *c, fb_error *err)
{
    if (!is_text(v))
        return BAD("command: must be a string (run as /bin/sh -c command), got %s", fb_json_type_name(v));
    if (has_nul(v))
        return BAD("command: contains a NUL character, which no program argument can hold");
    if (json_string_length(v) > FB_MAX_COMMAND_BYTES)
        return BAD("command: %zu bytes is more than the maximum of %d (one program argument); put a longer "
                   "script in `files` and run it",
                   json_string_length(v), FB_MAX_COMMAND_BYTES);
    c->command = json_string_value(v);
    return 0;
}

static int parse_language(json_t *lang, const char *with, fb_command *c, fb_error *err)
{
    if (!lang || json_is_null(lang))
        return BAD("language: required with %s (python3, node, ruby, php, sh, bash, c, cpp...)", with);
    if (!is_text(lang))
        return BAD("language: must be a string, got %s", fb_json_type_name(lang));
    const char *s = json_string_value(lang);
    if (json_string_length(lang) == 0 || json_string_length(lang) > FB_MAX_NAME_BYTES || has_nul(lang) ||
        has_control(s))
        return BAD("language: must be a language name of 1 to %d printable characters", FB_MAX_NAME_BYTES);
    c->language = s;
    return 0;
}

static int parse_code(json_t *v, json_t *lang, fb_command *c, fb_error *err)
{
    if (!is_text(v))
        return BAD("code: must be a string, got %s", fb_json_type_name(v));
    if (json_string_length(v) > FB_MAX_CODE_BYTES)
        return BAD("code: %zu bytes is more than the maximum of %llu", json_string_length(v),
                   (unsigned long long)FB_MAX_CODE_BYTES);
    c->code = json_string_value(v);
    c->code_len = json_string_length(v);
    return parse_language(lang, "code", c, err);
}

/* main: the name of one of `files`, run as the program's code from where it is placed (beside the others:
 * `import helper`, require('./helper'), #include "helper.h" find them, as Piston runs its first file). */
static int parse_main(json_t *v, json_t *lang, json_t *files, fb_command *c, fb_error *err)
{
    if (!is_text(v))
        return BAD("main: must be a string (the name of one of files), got %s", fb_json_type_name(v));
    const char *name = json_string_value(v);
    if (!json_is_object(files) || !json_object_getn(files, name, json_string_length(v)))
        return BAD("main: '%.200s' is not one of files: give the program's file in files under that name", name);
    c->main_file = name;
    return parse_language(lang, "main", c, err);
}

/* Exactly one of command, code and main; language goes with code or main only. */
static int parse_what(json_t *root, fb_command *c, fb_error *err)
{
    json_t *cmd = json_object_get(root, "command"), *code = json_object_get(root, "code");
    json_t *main_file = json_object_get(root, "main");
    json_t *lang = json_object_get(root, "language");
    if ((cmd != NULL) + (code != NULL) + (main_file != NULL) > 1)
        return BAD("%s: give one of command, code (with language) or main (with language)",
                   cmd ? "command" : "code");
    if (!cmd && !code && !main_file)
        return BAD("command: required: give command (a shell command), or code or main with language");
    if (cmd && lang)
        return BAD("language: goes with code or main, not with command");
    if (main_file)
        return parse_main(main_file, lang, json_object_get(root, "files"), c, err);
    return cmd ? parse_command(cmd, c, err) : parse_code(code, lang, c, err);
}

/* A NULL-terminated array of n + 1 pointers, zeroed. */
static const char **new_list(size_t n)
{
    return calloc(n + 1, sizeof(char *));
}

static int parse_args(json_t *v, fb_command *c, fb_error *err)
{
    if (v && !json_is_null(v) && !json_is_array(v))
        return BAD("args: must be an array of strings, got %s", fb_json_type_name(v));
    size_t n = json_is_array(v) ? json_array_size(v) : 0;
    if (n > FB_MAX_EXEC_ARGS)
        return BAD("args: %zu arguments is more than the maximum of %d", n, FB_MAX_EXEC_ARGS);
    const char **list = new_list(n);
    if (!list)
        return OOM("args");
    c->args = list;
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        json_t *a = json_array_get(v, i);
        if (!is_text(a))
            return BAD("args[%zu]: must be a string, got %s", i, fb_json_type_name(a));
        if (has_nul(a))
            return BAD("args[%zu]: contains a NUL character, which no program argument can hold", i);
        total += json_string_length(a) + 1;
        if (json_string_length(a) > FB_MAX_COMMAND_BYTES || total > FB_MAX_EXEC_ARGS_BYTES)
            return BAD("args[%zu]: the arguments take more than the maximum of %d bytes each, %llu in all", i,
                       FB_MAX_COMMAND_BYTES, (unsigned long long)FB_MAX_EXEC_ARGS_BYTES);
        list[i] = json_string_value(a);
    }
    c->nargs = n;
    return 0;
}

static int parse_stdin(json_t *v, fb_command *c, fb_error *err)
{
    if (!v || json_is_null(v))
        return 0;
    if (!is_text(v))
        return BAD("stdin: must be a string, got %s", fb_json_type_name(v));
    if (json_string_length(v) > FB_MAX_STDIN_BYTES)
        return BAD("stdin: %zu bytes is more than the maximum of %llu", json_string_length(v),
                   (unsigned long long)FB_MAX_STDIN_BYTES);
    c->stdin_data = json_string_value(v);
    c->stdin_len = json_string_length(v);
    return 0;
}

/* One `env` entry as "KEY=value": the name non-empty, without '=' or NUL, at most FB_MAX_NAME_BYTES; the
 * value a string without NUL (an environment string ends at its first NUL). */
static int env_entry(const char *key, size_t klen, json_t *val, char **out, fb_error *err)
{
    if (klen == 0)
        return BAD("env: a variable name is empty");
    if (strlen(key) != klen)
        return BAD("env.%.64s: the name contains a NUL character", key);
    if (strchr(key, '='))
        return BAD("env.%.64s: the name contains '=', which ends a variable's name", key);
    if (klen > FB_MAX_NAME_BYTES)
        return BAD("env.%.64s...: the name is longer than %d bytes", key, FB_MAX_NAME_BYTES);
    if (!is_text(val))
        return BAD("env.%s: must be a string, got %s", key, fb_json_type_name(val));
    if (has_nul(val))
        return BAD("env.%s: the value contains a NUL character, which ends an environment string", key);
    size_t vlen = json_string_length(val);
    *out = malloc(klen + vlen + 2);
    if (!*out)
        return OOM("env");
    memcpy(*out, key, klen);
    (*out)[klen] = '=';
    memcpy(*out + klen + 1, json_string_value(val), vlen + 1);
    return 0;
}

static int parse_env(json_t *v, fb_command *c, fb_error *err)
{
    if (v && !json_is_null(v) && !json_is_object(v))
        return BAD("env: must be an object {NAME: \"value\"}, got %s", fb_json_type_name(v));
    size_t n = json_is_object(v) ? json_object_size(v) : 0;
    if (n > FB_MAX_ENV_VARS)
        return BAD("env: %zu variables is more than the maximum of %d", n, FB_MAX_ENV_VARS);
    char **list = (char **)new_list(n);
    if (!list)
        return OOM("env");
    c->env = (const char *const *)list;
    if (!n)
        return 0;
    const char *key;
    size_t klen, total = 0;
    json_t *val;
    json_object_keylen_foreach(v, key, klen, val) {
        if (env_entry(key, klen, val, &list[c->nenv], err) < 0)
            return -1;
        total += strlen(list[c->nenv++]) + 1;
        if (total > FB_MAX_ENV_BYTES)
            return BAD("env.%.64s: the variables take more than the maximum of %d bytes", key, FB_MAX_ENV_BYTES);
    }
    return 0;
}

/* Appends one path part to out (len so far) as a lexical walk: "." stays, ".." goes up. */
static int cwd_step(char *out, size_t *len, const char *part, size_t plen, const char *given, fb_error *err)
{
    if (plen == 0 || (plen == 1 && part[0] == '.'))
        return 0;
    if (plen == 2 && part[0] == '.' && part[1] == '.') {
        if (*len == 0)
            return BAD("cwd: '%.200s' goes above /", given);
        while (*len > 0 && out[*len - 1] != '/')
            (*len)--;
        if (*len > 0)
            (*len)--; /* the slash */
        return 0;
    }
    if (plen > 255)
        return BAD("cwd: a part of '%.200s' is longer than 255 bytes", given);
    if (*len + 1 + plen >= FB_MAX_CWD_BYTES + 1)
        return BAD("cwd: longer than %d bytes", FB_MAX_CWD_BYTES);
    out[(*len)++] = '/';
    memcpy(out + *len, part, plen);
    *len += plen;
    return 0;
}

/* cwd: absolute, or relative to the workdir; normalized lexically ("a/../b" is "b"; nothing may go above
 * /). Whether the program may be there (not a read-only system path) is core/command.c's to say, since it
 * knows the sandbox's layout. */
static int parse_cwd(json_t *v, fb_command *c, fb_error *err)
{
    if (!v || json_is_null(v))
        return 0;
    if (!is_text(v))
        return BAD("cwd: must be a string (a directory in the sandbox), got %s", fb_json_type_name(v));
    const char *s = json_string_value(v);
    if (json_string_length(v) == 0)
        return BAD("cwd: empty; leave it out for the workdir %s", c->workdir);
    if (json_string_length(v) > FB_MAX_CWD_BYTES || has_nul(v) || has_control(s))
        return BAD("cwd: must be a path of at most %d bytes without control characters", FB_MAX_CWD_BYTES);
    char *out = malloc(2 * FB_MAX_CWD_BYTES + 2);
    if (!out)
        return OOM("cwd");
    c->cwd = out;
    size_t len = 0;
    const char *parts[2] = {s[0] == '/' ? "" : c->workdir, s};
    for (int i = 0; i < 2; i++)
        for (const char *p = parts[i]; *p;) {
            size_t plen = strcspn(p, "/");
            if (cwd_step(out, &len, p, plen, s, err) < 0)
                return -1;
            p += plen;
            p += *p == '/';
        }
    if (len == 0)
        out[len++] = '/';
    out[len] = '\0';
    return 0;
}

static int parse_files(json_t *v, fb_command *c, fb_error *err)
{
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_object(v))
        return BAD("files: must be an object {path: content}, got %s", fb_json_type_name(v));
    c->files = v;
    return 0;
}

/* `mount` as a call's (request/mount.h), after permissions: allowAllFs opens a mount without rules. */
static int parse_mount(json_t *v, fb_command *c, fb_error *err)
{
    if (!v || json_is_null(v))
        return 0;
    c->mount = calloc(1, sizeof *c->mount);
    if (!c->mount)
        return OOM("mount");
    return fb_mount_config_parse_ex(v, "mount", c->permissions.fs_all, c->mount, err);
}

int fb_command_decode(json_t *obj, const char *const *extra, fb_command *out, fb_error *err)
{
    memset(out, 0, sizeof *out);
    out->workdir = FB_EXECUTE_WORKDIR;
    if (!json_is_object(obj)) {
        BAD("request: must be a JSON object, got %s", fb_json_type_name(obj));
        goto fail;
    }
    if (check_fields(obj, extra, err) < 0 || parse_what(obj, out, err) < 0 ||
        parse_args(json_object_get(obj, "args"), out, err) < 0 ||
        parse_stdin(json_object_get(obj, "stdin"), out, err) < 0 ||
        parse_env(json_object_get(obj, "env"), out, err) < 0 || parse_cwd(json_object_get(obj, "cwd"), out, err) < 0 ||
        fb_request_timeout_parse(json_object_get(obj, "timeout"), &out->timeout_s, err) < 0 ||
        parse_files(json_object_get(obj, "files"), out, err) < 0 ||
        fb_request_limits_parse(json_object_get(obj, "limits"), "limits", out->timeout_s, &out->limits, err) < 0 ||
        fb_request_shell_permissions_parse(json_object_get(obj, "permissions"), "permissions", &out->permissions, err) < 0 ||
        parse_mount(json_object_get(obj, "mount"), out, err) < 0 ||
        fb_environment_decode(json_object_get(obj, "environment"), "environment", &out->environment, err) < 0 ||
        fb_dependencies_decode(json_object_get(obj, "dependencies"), "dependencies", &out->dependencies, err) < 0)
        goto fail;
    return 0;
fail:
    fb_command_free(out);
    return -1;
}

int fb_command_parse(const char *text, size_t len, fb_command *out, fb_error *err)
{
    memset(out, 0, sizeof *out);
    if (len > FB_MAX_REQUEST_BYTES)
        return BAD("request: %zu bytes is more than the maximum of %llu", len,
                   (unsigned long long)FB_MAX_REQUEST_BYTES);
    json_error_t jerr;
    json_t *root = fb_json_loadb(text, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &jerr);
    if (!root)
        return BAD("request: malformed JSON at line %d, column %d: %s", jerr.line, jerr.column, jerr.text);
    if (fb_command_decode(root, NULL, out, err) < 0) {
        json_decref(root);
        return -1;
    }
    out->root = root;
    return 0;
}

void fb_command_free(fb_command *c)
{
    fb_dependencies_free(&c->dependencies);
    free((void *)c->args);
    for (size_t i = 0; c->env && c->env[i]; i++)
        free((void *)c->env[i]);
    free((void *)c->env);
    free(c->cwd);
    if (c->mount) {
        fb_mount_config_free(c->mount);
        free(c->mount);
    }
    fb_permissions_free(&c->permissions);
    json_decref(c->root);
    memset(c, 0, sizeof *c);
}
