/* The environments file decoded (environments.h). Strict, because an operator's typo must not silently
 * run code on the host's system tree: an unknown key, a wrong type, a relative or missing path, a bad name
 * or an index that is not an http(s) URL is InvalidRequest naming the field in the file's own words
 * ("environments.web.indexes.npm: ..."). Paths are made canonical (realpath) here, once, so that what the
 * sandbox mounts later is what the operator named, not whatever a symlink points to at call time. */
#include "request/environments.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/json.h"

#define BAD(...) fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, __VA_ARGS__)
#define OOM(what) fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "%s", what)
#define NAME_MAX_BYTES 64

static const char *const k_lang_keys[FB_ENV_NLANGS] = {"python", "javascript", "ruby", "php"};

const char *fb_env_lang_key(fb_env_lang l)
{
    return l < FB_ENV_NLANGS ? k_lang_keys[l] : NULL;
}

static bool valid_name(const char *s, size_t len)
{
    if (len == 0 || len > NAME_MAX_BYTES || strlen(s) != len)
        return false;
    for (const char *p = s; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '.' ||
              *p == '_' || *p == '-'))
            return false;
    return true;
}

/* An absolute path to an existing directory, made canonical: *out owned. */
static int parse_dir(const json_t *v, const char *field, char **out, fb_error *err)
{
    if (!json_is_string(v))
        return BAD("%s: must be a string (an absolute path), got %s", field, fb_json_type_name(v));
    const char *path = json_string_value(v);
    if (strlen(path) != json_string_length(v) || path[0] != '/')
        return BAD("%s: must be an absolute path, got \"%.256s\"", field, path);
    char *real = realpath(path, NULL);
    if (!real)
        return errno == ENOMEM ? OOM(field) : BAD("%s: %s: %.256s", field, strerror(errno), path);
    struct stat st;
    if (stat(real, &st) < 0 || !S_ISDIR(st.st_mode)) {
        free(real);
        return BAD("%s: not a directory: %.256s", field, path);
    }
    *out = real;
    return 0;
}

static int parse_url(const json_t *v, const char *field, char **out, fb_error *err)
{
    if (!json_is_string(v))
        return BAD("%s: must be a string (an http(s) URL), got %s", field, fb_json_type_name(v));
    const char *url = json_string_value(v);
    size_t scheme = strncmp(url, "http://", 7) == 0 ? 7 : strncmp(url, "https://", 8) == 0 ? 8 : 0;
    bool clean = strlen(url) == json_string_length(v) && strlen(url) <= 2048;
    for (const char *p = url; clean && *p; p++)
        clean = (unsigned char)*p > 0x20 && *p != 0x7f;
    if (!scheme || !clean || !url[scheme] || url[scheme] == '/')
        return BAD("%s: must be an http(s) URL like \"https://pypi.org/simple\", got \"%.256s\"", field, url);
    *out = strdup(url);
    return *out ? 0 : OOM(field);
}

/* `python: {paths: [...]}` and its siblings. */
static int parse_lang(const json_t *v, const char *field, fb_env_paths *out, fb_error *err)
{
    char sub[320];
    if (!json_is_object(v))
        return BAD("%s: must be an object like {\"paths\": [\"/opt/venv/lib/python3/site-packages\"]}, got %s",
                   field, fb_json_type_name(v));
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)v, key, val) {
        if (strcmp(key, "paths") != 0)
            return BAD("%s.%.64s: unknown key (expected paths)", field, key);
    }
    const json_t *paths = json_object_get(v, "paths");
    if (!paths)
        return 0;
    if (!json_is_array(paths))
        return BAD("%s.paths: must be an array of absolute paths, got %s", field, fb_json_type_name(paths));
    if (json_array_size(paths) > FB_ENV_MAX_PATHS)
        return BAD("%s.paths: at most %d directories", field, FB_ENV_MAX_PATHS);
    out->dirs = calloc(json_array_size(paths) + 1, sizeof *out->dirs);
    if (!out->dirs)
        return OOM(field);
    for (size_t i = 0; i < json_array_size(paths); i++) {
        snprintf(sub, sizeof sub, "%.200s.paths[%zu]", field, i);
        if (parse_dir(json_array_get(paths, i), sub, &out->dirs[i], err) < 0)
            return -1;
        out->n++;
    }
    return 0;
}

static int parse_indexes(const json_t *v, const char *field, fb_environment *e, fb_error *err)
{
    char sub[320];
    if (!json_is_object(v))
        return BAD("%s: must be an object like {\"python\": \"https://pypi.org/simple\"}, got %s", field,
                   fb_json_type_name(v));
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)v, key, val) {
        snprintf(sub, sizeof sub, "%.200s.%.64s", field, key);
        if (strcmp(key, "python") == 0) {
            if (parse_url(val, sub, &e->index_python, err) < 0)
                return -1;
        } else if (strcmp(key, "npm") == 0) {
            if (parse_url(val, sub, &e->index_npm, err) < 0)
                return -1;
        } else {
            return BAD("%s: unknown key (expected python, npm)", sub);
        }
    }
    return 0;
}

static int lang_of(const char *key)
{
    for (int l = 0; l < FB_ENV_NLANGS; l++)
        if (strcmp(key, k_lang_keys[l]) == 0)
            return l;
    return -1;
}

static int parse_env(const char *name, const json_t *v, fb_environment *e, fb_error *err)
{
    char field[128], sub[320];
    snprintf(field, sizeof field, "environments.%s", name);
    if (!json_is_object(v))
        return BAD("%s: must be an object like {\"root\": \"/srv/rootfs\"}, got %s", field, fb_json_type_name(v));
    e->name = strdup(name);
    if (!e->name)
        return OOM(field);
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)v, key, val) {
        snprintf(sub, sizeof sub, "%.200s.%.64s", field, key);
        int lang = lang_of(key);
        int rc;
        if (strcmp(key, "root") == 0)
            rc = parse_dir(val, sub, &e->root, err);
        else if (strcmp(key, "indexes") == 0)
            rc = parse_indexes(val, sub, e, err);
        else if (lang >= 0)
            rc = parse_lang(val, sub, &e->paths[lang], err);
        else
            rc = BAD("%s: unknown key (expected root, python, javascript, ruby, php, indexes)", sub);
        if (rc < 0)
            return -1;
    }
    return 0;
}

static int parse_set(const json_t *envs, fb_environments *out, fb_error *err)
{
    if (!json_is_object(envs))
        return BAD("environments: must be an object of named environments, got %s", fb_json_type_name(envs));
    if (json_object_size(envs) > FB_ENV_MAX_COUNT)
        return BAD("environments: at most %d environments", FB_ENV_MAX_COUNT);
    out->items = calloc(json_object_size(envs) + 1, sizeof *out->items);
    if (!out->items)
        return OOM("environments");
    const char *name;
    json_t *v;
    json_object_foreach((json_t *)envs, name, v) {
        if (!valid_name(name, strlen(name)))
            return BAD("environments.%.64s: a name is 1 to %d of A-Z a-z 0-9 . _ -", name, NAME_MAX_BYTES);
        out->n++; /* counted first: what parse_env filled is freed with the rest */
        if (parse_env(name, v, &out->items[out->n - 1], err) < 0)
            return -1;
    }
    return 0;
}

int fb_environments_parse(const char *text, size_t len, fb_environments *out, fb_error *err)
{
    memset(out, 0, sizeof *out);
    if (len > FB_ENV_MAX_FILE_BYTES)
        return BAD("environments: %zu bytes is more than the maximum of %d", len, FB_ENV_MAX_FILE_BYTES);
    json_error_t jerr;
    /* key order is the file's (jansson keeps insertion order), so listings follow the operator's */
    json_t *doc = fb_json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!doc)
        return BAD("environments: malformed JSON at line %d, column %d: %s", jerr.line, jerr.column, jerr.text);
    int rc = 0;
    const char *key;
    json_t *v;
    if (!json_is_object(doc))
        rc = BAD("environments: the file must hold an object {\"environments\": {...}}, got %s",
                 fb_json_type_name(doc));
    else
        json_object_foreach(doc, key, v) {
            if (strcmp(key, "environments") != 0) {
                rc = BAD("%.64s: unknown key (expected environments)", key);
                break;
            }
        }
    if (rc == 0 && !json_object_get(doc, "environments"))
        rc = BAD("environments: required");
    if (rc == 0)
        rc = parse_set(json_object_get(doc, "environments"), out, err);
    json_decref(doc);
    if (rc < 0)
        fb_environments_free(out);
    return rc;
}

int fb_environments_load(const char *path, fb_environments *out, fb_error *err)
{
    memset(out, 0, sizeof *out);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return BAD("environments file %.256s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > FB_ENV_MAX_FILE_BYTES) {
        close(fd);
        return BAD("environments file %.256s: not a regular file of at most %d bytes", path, FB_ENV_MAX_FILE_BYTES);
    }
    char *text = malloc((size_t)st.st_size + 1);
    size_t got = 0;
    ssize_t n = 1;
    while (text && got < (size_t)st.st_size && (n = read(fd, text + got, (size_t)st.st_size - got)) > 0)
        got += (size_t)n;
    int saved = errno;
    close(fd);
    if (!text)
        return OOM("environments file");
    if (n < 0) {
        free(text);
        return BAD("environments file %.256s: %s", path, strerror(saved));
    }
    int rc = fb_environments_parse(text, got, out, err);
    free(text);
    return rc;
}

const fb_environment *fb_environments_find(const fb_environments *set, const char *name)
{
    for (size_t i = 0; set && name && i < set->n; i++)
        if (strcmp(set->items[i].name, name) == 0)
            return &set->items[i];
    return NULL;
}

static void env_free(fb_environment *e)
{
    free(e->name);
    free(e->root);
    for (int l = 0; l < FB_ENV_NLANGS; l++) {
        for (size_t i = 0; i < e->paths[l].n; i++)
            free(e->paths[l].dirs[i]);
        free(e->paths[l].dirs);
    }
    free(e->index_python);
    free(e->index_npm);
}

void fb_environments_free(fb_environments *set)
{
    for (size_t i = 0; set->items && i <= set->n; i++) /* the one that failed half-way too */
        env_free(&set->items[i]);
    free(set->items);
    memset(set, 0, sizeof *set);
}

/* ---- the process's set ---- */

static fb_environments g_current;

void fb_environments_set_current(fb_environments *set)
{
    fb_environments_free(&g_current);
    g_current = *set;
    memset(set, 0, sizeof *set);
}

const fb_environments *fb_environments_current(void)
{
    return &g_current;
}

int fb_environment_decode(const json_t *v, const char *field, const fb_environment **out, fb_error *err)
{
    *out = NULL;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_string(v))
        return BAD("%s: must be the name of an environment (a string), got %s", field, fb_json_type_name(v));
    const char *name = json_string_value(v);
    *out = strlen(name) == json_string_length(v) ? fb_environments_find(&g_current, name) : NULL;
    if (*out)
        return 0;
    if (g_current.n == 0)
        return BAD("%s: unknown environment \"%.64s\" (none configured: fnbox serve --environments FILE)", field,
                   name);
    char known[1024];
    size_t at = 0;
    for (size_t i = 0; i < g_current.n && at < sizeof known; i++)
        at += (size_t)snprintf(known + at, sizeof known - at, "%s%s", i ? ", " : "", g_current.items[i].name);
    return BAD("%s: unknown environment \"%.64s\" (known: %s)", field, name, known);
}
