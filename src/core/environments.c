/* fnbox_environments_load and fnbox_environments (include/fnbox.h), and what each environment offers
 * (environments.h). The listing is made once, when the file is loaded: a health check or a runtimes
 * listing reads no root and runs nothing. */
#include "core/environments.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/session.h"
#include "fnbox.h"
#include "util/json.h"

#define LINK_HOPS_MAX 8
#define DPKG_STATUS_MAX (64u << 20) /* a root's package database; a full desktop's is ~5 MiB */

/* What a language is called where: its interpreter's usual names in a root (the first found wins), the
 * Debian packages that say its whole version, and the execute language that names the host's. */
typedef struct env_lang_names {
    const char *bins[3];
    const char *packages[3]; /* "*": the interpreter's final file name ("python3.13-minimal") */
    const char *execute;
} env_lang_names;

static const env_lang_names k_names[FB_ENV_NLANGS] = {
    [FB_ENV_PYTHON] = {{"python3", NULL}, {"*-minimal", "*", NULL}, "python3"},
    [FB_ENV_JAVASCRIPT] = {{"node", "nodejs", NULL}, {"nodejs", NULL}, "node"},
    [FB_ENV_RUBY] = {{"ruby", NULL}, {"*", "lib*", NULL}, "ruby"},
    [FB_ENV_PHP] = {{"php", NULL}, {"*-cli", NULL}, "php"},
};

static int open_in_root(int root, const char *path, int flags)
{
    struct open_how how = {.flags = (uint64_t)(flags | O_CLOEXEC),
                           .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
    return (int)syscall(SYS_openat2, root, path, &how, sizeof how);
}

/* Follows path's symlinks inside the root (absolute targets are the root's, as inside the sandbox) to
 * the file they end at; its name into name. False when nothing is there. */
static bool final_name(int root, const char *path, char *name, size_t cap)
{
    char cur[PATH_MAX];
    snprintf(cur, sizeof cur, "%s", path);
    for (int hop = 0; hop < LINK_HOPS_MAX; hop++) {
        char *slash = strrchr(cur, '/');
        const char *base = slash + 1;
        *slash = '\0';
        int dir = open_in_root(root, cur[0] ? cur : "/", O_PATH | O_DIRECTORY);
        if (dir < 0)
            return false;
        char target[PATH_MAX];
        ssize_t n = readlinkat(dir, base, target, sizeof target - 1);
        struct stat st;
        bool exists = n < 0 && fstatat(dir, base, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
        close(dir);
        if (n < 0) {
            if (exists)
                snprintf(name, cap, "%s", base);
            return exists;
        }
        target[n] = '\0';
        char next[PATH_MAX];
        if (target[0] == '/')
            snprintf(next, sizeof next, "%s", target);
        else if (snprintf(next, sizeof next, "%s/%s", cur, target) >= (int)sizeof next)
            return false;
        memcpy(cur, next, sizeof cur);
    }
    return false;
}

/* The digits a versioned name ends in: "python3.13" -> "3.13", "php8.4" -> "8.4", "node" -> none. */
static bool name_version(const char *name, char *out, size_t cap)
{
    const char *p = name + strlen(name);
    while (p > name && (isdigit((unsigned char)p[-1]) || p[-1] == '.'))
        p--;
    while (*p == '.')
        p++;
    if (!*p || !strchr(p, '.') || strlen(p) >= cap)
        return false;
    snprintf(out, cap, "%s", p);
    return true;
}

/* The root's package database (Debian's), NUL-terminated, or NULL. */
static char *read_dpkg_status(int root)
{
    int fd = open_in_root(root, "/var/lib/dpkg/status", O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > DPKG_STATUS_MAX) {
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    char *text = malloc((size_t)st.st_size + 1);
    size_t got = 0;
    ssize_t n = 1;
    while (text && got < (size_t)st.st_size && (n = read(fd, text + got, (size_t)st.st_size - got)) > 0)
        got += (size_t)n;
    close(fd);
    if (text)
        text[got] = '\0';
    return text;
}

/* The upstream part of package's Version in the database: "2:8.4+96" -> "8.4", "3.13.5-2" -> "3.13.5". */
static bool package_version(const char *status, const char *package, char *out, size_t cap)
{
    char head[160];
    int hl = snprintf(head, sizeof head, "Package: %s\n", package);
    for (const char *p = status; p && (p = strstr(p, head)) != NULL; p += hl) {
        if (p != status && p[-1] != '\n')
            continue;
        const char *end = strstr(p, "\n\n");
        const char *v = strstr(p, "\nVersion: ");
        if (!v || (end && v > end))
            return false;
        v += strlen("\nVersion: ");
        const char *colon = strchr(v, ':');
        if (colon && colon < v + strcspn(v, "\n"))
            v = colon + 1;
        size_t n = strspn(v, "0123456789.");
        if (n == 0 || n >= cap)
            return false;
        memcpy(out, v, n);
        out[n] = '\0';
        return true;
    }
    return false;
}

static bool root_version(const char *rootdir, fb_env_lang lang, char *out, size_t cap)
{
    int root = open(rootdir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (root < 0)
        return false;
    const env_lang_names *k = &k_names[lang];
    const char *const dirs[] = {"/usr/local/bin", "/usr/bin", "/bin"};
    char path[PATH_MAX], name[NAME_MAX + 1] = "";
    bool found = false;
    for (size_t b = 0; !found && b < 3 && k->bins[b]; b++)
        for (size_t d = 0; !found && d < 3; d++) {
            snprintf(path, sizeof path, "%s/%s", dirs[d], k->bins[b]);
            found = final_name(root, path, name, sizeof name);
        }
    if (!found) {
        close(root);
        return false;
    }
    char *status = read_dpkg_status(root);
    close(root);
    bool have = false;
    for (size_t i = 0; status && !have && i < 3 && k->packages[i]; i++) {
        char package[NAME_MAX + 16];
        const char *star = strchr(k->packages[i], '*');
        if (star)
            snprintf(package, sizeof package, "%.*s%s%s", (int)(star - k->packages[i]), k->packages[i], name,
                     star + 1);
        else
            snprintf(package, sizeof package, "%s", k->packages[i]);
        have = package_version(status, package, out, cap);
    }
    free(status);
    if (!have && !name_version(name, out, cap))
        snprintf(out, cap, "unknown");
    return true;
}

bool fb_env_language_version(const fb_environment *env, fb_env_lang lang, char *out, size_t cap)
{
    if (lang >= FB_ENV_NLANGS || cap == 0)
        return false;
    if (env && env->root)
        return root_version(env->root, lang, out, cap);
    const char *v = fb_host_language_version(k_names[lang].execute);
    if (!v)
        return false;
    snprintf(out, cap, "%s", v);
    return true;
}

/* ---- the listing, made at load ---- */

static char *g_listing; /* fnbox_environments' JSON for the current set */

static json_t *paths_json(const fb_environment *e)
{
    json_t *o = json_object();
    for (int l = 0; o && l < FB_ENV_NLANGS; l++) {
        if (e->paths[l].n == 0)
            continue;
        json_t *a = json_array();
        for (size_t i = 0; a && i < e->paths[l].n; i++)
            if (json_array_append_new(a, json_string(e->paths[l].dirs[i])) < 0) {
                json_decref(a);
                a = NULL;
            }
        if (!a || json_object_set_new(o, fb_env_lang_key((fb_env_lang)l), a) < 0) {
            json_decref(o);
            return NULL;
        }
    }
    return o;
}

static json_t *environment_json(const fb_environment *e)
{
    json_t *langs = json_array();
    for (int l = 0; langs && l < FB_ENV_NLANGS; l++) {
        char version[FB_ENV_VERSION_MAX];
        if (!fb_env_language_version(e, (fb_env_lang)l, version, sizeof version))
            continue;
        if (json_array_append_new(langs, json_pack("{s:s, s:s}", "name", fb_env_lang_key((fb_env_lang)l),
                                                   "version", version)) < 0) {
            json_decref(langs);
            langs = NULL;
        }
    }
    return json_pack("{s:s, s:s?, s:o, s:o}", "name", e->name, "root", e->root, "languages", langs, "paths",
                     paths_json(e));
}

static char *listing_of(const fb_environments *set)
{
    json_t *list = json_array();
    for (size_t i = 0; list && i < set->n; i++)
        if (json_array_append_new(list, environment_json(&set->items[i])) < 0) {
            json_decref(list);
            list = NULL;
        }
    char *text = list ? json_dumps(list, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(list);
    return text;
}

FNBOX_API int fnbox_environments_load(const char *path, char **error, size_t *error_len)
{
    fb_error err = {0};
    fb_environments set = {0};
    if (error)
        *error = NULL;
    if (error_len)
        *error_len = 0;
    if (path && fb_environments_load(path, &set, &err) < 0)
        return fb_session_fail(&err, error, error_len);
    char *listing = listing_of(&set);
    if (!listing) {
        fb_environments_free(&set);
        fb_set_error(&err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "environments listing");
        return fb_session_fail(&err, error, error_len);
    }
    fb_environments_set_current(&set);
    free(g_listing);
    g_listing = listing;
    return FNBOX_OK;
}

FNBOX_API int fnbox_environments(char **json, size_t *json_len)
{
    *json = strdup(g_listing ? g_listing : "[]");
    if (json_len)
        *json_len = *json ? strlen(*json) : 0;
    return *json ? 0 : -1;
}
