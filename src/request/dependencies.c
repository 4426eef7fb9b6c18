/* `dependencies` decoded and checked (dependencies.h). The grammar accepted is deliberately smaller than
 * each installer's: a name and versions, nothing an installer would read as an instruction.
 *
 *   python      name ["[" extra {"," extra} "]"] [spec {"," spec}]
 *               name, extra: [A-Za-z0-9] ([A-Za-z0-9._-]* [A-Za-z0-9])?          (PEP 508's identifier)
 *               spec: ("==" | "!=" | ">=" | "<=" | "~=" | "<" | ">") version
 *               version: [A-Za-z0-9] [A-Za-z0-9.+!_-]* [".*"]                     (PEP 440's characters)
 *   javascript  ["@" scope "/"] name ["@" range]
 *               scope, name: [A-Za-z0-9] [A-Za-z0-9._~-]*
 *               range: [A-Za-z0-9.*^~<>=+ -]+, single spaces between comparators, none at either end,
 *               not starting with "-" (semver ranges: ^1.2.0, ~1.2, >=1 <2, 1.x, *, 1.2.3 - 2.0.0; a
 *               dist-tag such as latest)
 *
 * What is refused and why: a leading "-" (an installer option: --index-url, -e), "://" or ":" (a URL, a
 * VCS reference such as git+https:, npm's file:, github:, npm: aliases), "/" or a leading "." or "~" (a
 * path; one "/" is allowed in npm's @scope/name), "@" in a Python entry (PEP 508's `name @ URL`), ";" (an
 * environment marker, or a shell separator), "|", "&", "$", backquotes and quotes (shell syntax; npm's
 * "||" range union is not accepted either), whitespace outside an npm range. The installer is never run
 * through a shell, but a refused entry could still be an option or a source of the installer's own. */
#include "request/dependencies.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BAD(...) fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, __VA_ARGS__)

static const char *const k_eco_keys[FB_DEPS_NECOS] = {"python", "javascript"};

const char *fb_deps_eco_key(fb_deps_eco eco)
{
    return (unsigned)eco < FB_DEPS_NECOS ? k_eco_keys[eco] : "?";
}

static bool alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* The refusals both ecosystems share, with the reason; NULL when none applies. */
static const char *common_refusal(const char *s, bool npm)
{
    static const char k_shell[] = ";|&$`'\"\\";
    if (s[0] == '-')
        return "an installer option is not a package (give a name and a version)";
    if (strstr(s, "://") || strchr(s, ':'))
        return "a URL or VCS reference is not a package (give a name and a version; the index is the "
               "environment's)";
    if (s[0] == '.' || s[0] == '/' || s[0] == '~' || (!npm && strchr(s, '/')))
        return "a path is not a package (give a name and a version)";
    for (const char *p = s; *p; p++) {
        if (strchr(k_shell, *p))
            return *p == ';' ? "';' is not allowed (no environment markers or shell separators)"
                 : *p == '|' ? "'|' is not allowed (no shell syntax; npm's || range union is not accepted)"
                             : "shell characters ($ & ` \\ and quotes) are not allowed";
        if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
            return "only printable ASCII is allowed";
    }
    return NULL;
}

/* [A-Za-z0-9] ([A-Za-z0-9._-]* [A-Za-z0-9])? from *p; advances past it. */
static bool py_identifier(const char **p)
{
    const char *s = *p, *last = NULL;
    if (!alnum(*s))
        return false;
    for (; alnum(*s) || *s == '.' || *s == '_' || *s == '-'; s++)
        if (alnum(*s))
            last = s;
    if (last != s - 1)
        return false;
    *p = s;
    return true;
}

static const char *py_operator(const char *s)
{
    static const char *const k_ops[] = {"==", "!=", ">=", "<=", "~=", "<", ">", NULL};
    if (strncmp(s, "===", 3) == 0)
        return NULL; /* arbitrary equality: matches any string, not a version */
    for (const char *const *o = k_ops; *o; o++)
        if (strncmp(s, *o, strlen(*o)) == 0)
            return s + strlen(*o);
    return NULL;
}

static const char *py_check(const char *s)
{
    if (strchr(s, '@'))
        return "'@' is not allowed (no direct references: name @ URL)";
    for (const char *p = s; *p; p++)
        if (isspace((unsigned char)*p))
            return "whitespace is not allowed (write six==1.16.0)";
    const char *p = s;
    if (!py_identifier(&p) || (size_t)(p - s) > FB_DEPS_MAX_NAME)
        return "not a package name (letters, digits and . _ -, starting and ending with a letter or digit)";
    if (*p == '[') {
        do {
            p++;
            if (!py_identifier(&p))
                return "not a list of extras ([name, ...])";
        } while (*p == ',');
        if (*p++ != ']')
            return "not a list of extras ([name, ...])";
    }
    if (!*p)
        return NULL;
    for (;;) {
        const char *v = py_operator(p);
        if (!v)
            return "not a version specifier (==, !=, >=, <=, ~=, <, >, comma-separated)";
        if (!alnum(*v))
            return "not a version (letters, digits and . + ! _ -)";
        while (alnum(*v) || *v == '.' || *v == '+' || *v == '!' || *v == '_' || *v == '-')
            v++;
        if (*v == '*' && v[-1] == '.' && (p[0] == '=' || p[0] == '!'))
            v++; /* ==1.2.* and !=1.2.* */
        if (!*v)
            return NULL;
        if (*v != ',')
            return "not a version (letters, digits and . + ! _ -)";
        p = v + 1;
    }
}

/* PEP 503's name: lower case, every run of - _ . as one "-"; extras lower-cased; the rest as given. */
static char *py_normalize(const char *s)
{
    char *out = malloc(strlen(s) + 1), *o = out;
    if (!out)
        return NULL;
    const char *p = s;
    for (; *p && *p != '[' && !strchr("=!<>~", *p); p++) {
        if (*p == '-' || *p == '_' || *p == '.') {
            if (o == out || o[-1] != '-')
                *o++ = '-';
        } else
            *o++ = (char)tolower((unsigned char)*p);
    }
    bool extras = *p == '[';
    for (; *p; p++) {
        extras = extras && *p != ']';
        *o++ = extras ? (char)tolower((unsigned char)*p) : *p;
    }
    *o = '\0';
    return out;
}

/* [A-Za-z0-9] [A-Za-z0-9._~-]* from *p; advances past it. */
static bool npm_word(const char **p)
{
    const char *s = *p;
    if (!alnum(*s))
        return false;
    while (alnum(*s) || *s == '.' || *s == '_' || *s == '~' || *s == '-')
        s++;
    *p = s;
    return true;
}

static const char *npm_check(const char *s)
{
    const char *p = s;
    if (*p == '@') {
        p++;
        if (!npm_word(&p) || *p++ != '/')
            return "not a scoped package name (@scope/name)";
    }
    if (!npm_word(&p) || (size_t)(p - s) > FB_DEPS_MAX_NAME)
        return "not a package name (letters, digits and . _ ~ -, starting with a letter or digit)";
    if (!*p)
        return NULL;
    if (*p == '/')
        return "a path is not a package (one '/' only, in @scope/name)";
    if (*p != '@')
        return isspace((unsigned char)*p) ? "whitespace is allowed only inside a version range (name@>=1 <2)"
                                          : "not a package name (name or name@range)";
    const char *r = ++p;
    if (!*r || *r == ' ' || *r == '-')
        return *r == '-' ? "a range cannot start with '-'" : "an empty version range, or whitespace before it";
    for (; *p; p++) {
        if (*p == ' ' && (p[1] == ' ' || !p[1]))
            return "whitespace is allowed only inside a version range, one space between its parts";
        if (*p == '/' || *p == '@')
            return "not a version range (no paths, aliases or tags with '/' or '@')";
        if (!(alnum(*p) || strchr(".*^~<>=+ -", *p)))
            return isspace((unsigned char)*p) ? "whitespace other than single spaces is not allowed in a range"
                                              : "not a version range (^1.2.0, ~1.2, >=1 <2, 1.x, *)";
    }
    return NULL;
}

int fb_dependency_check(fb_deps_eco eco, const char *entry, char **norm, char *why, size_t cap)
{
    *norm = NULL;
    size_t len = strlen(entry);
    const char *reason = len == 0                  ? "empty"
                         : len > FB_DEPS_MAX_ENTRY ? "longer than the maximum of 256 bytes"
                                                   : common_refusal(entry, eco == FB_DEPS_JAVASCRIPT);
    if (!reason)
        reason = eco == FB_DEPS_PYTHON ? py_check(entry) : npm_check(entry);
    if (reason) {
        snprintf(why, cap, "%s", reason);
        return -1;
    }
    *norm = eco == FB_DEPS_PYTHON ? py_normalize(entry) : strdup(entry);
    if (!*norm) {
        snprintf(why, cap, "out of memory");
        return -1;
    }
    return 0;
}

static int by_string(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted, each entry once. */
static void sort_unique(char **items, size_t *n)
{
    qsort(items, *n, sizeof *items, by_string);
    size_t kept = 0;
    for (size_t i = 0; i < *n; i++) {
        if (kept && strcmp(items[kept - 1], items[i]) == 0)
            free(items[i]);
        else
            items[kept++] = items[i];
    }
    *n = kept;
}

static int decode_list(const json_t *list, const char *field, fb_deps_eco eco, fb_dependencies *out, fb_error *err)
{
    const char *key = k_eco_keys[eco];
    if (!json_is_array(list))
        return BAD("%s.%s: must be a list of package strings, got %s", field, key,
                   json_is_object(list) ? "object" : json_is_string(list) ? "string" : "another type");
    size_t n = json_array_size(list);
    if (n > FB_DEPS_MAX_ENTRIES)
        return BAD("%s.%s: %zu entries is more than the maximum of %d", field, key, n, FB_DEPS_MAX_ENTRIES);
    if (n == 0)
        return 0;
    out->items[eco] = calloc(n, sizeof *out->items[eco]);
    if (!out->items[eco])
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "%s.%s", field, key);
    for (size_t i = 0; i < n; i++) {
        const json_t *e = json_array_get(list, i);
        char why[160];
        if (!json_is_string(e))
            return BAD("%s.%s[%zu]: must be a string such as %s", field, key, i,
                       eco == FB_DEPS_PYTHON ? "\"six==1.16.0\"" : "\"left-pad@1.3.0\"");
        const char *s = json_string_value(e);
        if (strlen(s) != json_string_length(e))
            return BAD("%s.%s[%zu]: contains a NUL character", field, key, i);
        if (fb_dependency_check(eco, s, &out->items[eco][out->n[eco]], why, sizeof why) < 0)
            return BAD("%s.%s[%zu]: \"%.80s\": %s", field, key, i, s, why);
        out->n[eco]++;
    }
    sort_unique(out->items[eco], &out->n[eco]);
    return 0;
}

int fb_dependencies_decode(const json_t *v, const char *field, fb_dependencies *out, fb_error *err)
{
    memset(out, 0, sizeof *out);
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_object(v))
        return BAD("%s: must be an object of package lists, e.g. {\"python\": [\"six==1.16.0\"]}", field);
    const char *key;
    json_t *list;
    json_object_foreach((json_t *)v, key, list) {
        int eco = 0;
        while (eco < FB_DEPS_NECOS && strcmp(key, k_eco_keys[eco]) != 0)
            eco++;
        if (eco == FB_DEPS_NECOS) {
            fb_dependencies_free(out);
            return BAD("%s.%.64s: unknown ecosystem (known: python, javascript)", field, key);
        }
        if (decode_list(list, field, (fb_deps_eco)eco, out, err) < 0) {
            fb_dependencies_free(out);
            return -1;
        }
    }
    return 0;
}

bool fb_dependencies_any(const fb_dependencies *d)
{
    for (int e = 0; d && e < FB_DEPS_NECOS; e++)
        if (d->n[e])
            return true;
    return false;
}

int fb_dependencies_copy(const fb_dependencies *src, fb_dependencies *dst, fb_error *err)
{
    memset(dst, 0, sizeof *dst);
    for (int e = 0; e < FB_DEPS_NECOS; e++) {
        if (!src->n[e])
            continue;
        dst->items[e] = calloc(src->n[e], sizeof *dst->items[e]);
        for (size_t i = 0; dst->items[e] && i < src->n[e]; i++) {
            if (!(dst->items[e][i] = strdup(src->items[e][i])))
                break;
            dst->n[e]++;
        }
        if (dst->n[e] != src->n[e]) {
            fb_dependencies_free(dst);
            return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "dependencies");
        }
    }
    return 0;
}

void fb_dependencies_free(fb_dependencies *d)
{
    for (int e = 0; e < FB_DEPS_NECOS; e++) {
        for (size_t i = 0; d->items[e] && i < d->n[e]; i++)
            free(d->items[e][i]);
        free(d->items[e]);
    }
    memset(d, 0, sizeof *d);
}
