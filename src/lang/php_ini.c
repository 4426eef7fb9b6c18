/* PHP start-up without the two extensions a harness never uses.
 *
 * The PHP CLI loads every extension its conf.d names. On Debian that includes readline (for the
 * interactive shell `php -a`) and opcache (which the harness switches off for the CLI anyway,
 * -dopcache.enable_cli=0); loading those two costs ~1.1 ms of a ~13 ms PHP start. So fnbox reads the
 * host's conf.d itself and gives PHP a copy without the files that load them: one file,
 * /.fnbox/php.d/host.ini, holding the kept files in the order PHP reads them (by name, *.ini only), each
 * after a "[PHP]" line so that a [PATH=...] or [HOST=...] section in one file cannot reach into the next,
 * and PHP_INI_SCAN_DIR pointing at its directory. php.ini itself is still read from where PHP looks for it.
 * The harness removes PHP_INI_SCAN_DIR from its environment, so a php that the function starts reads the
 * real conf.d.
 *
 * Anything unexpected (a binary with no /etc/php/<version>/cli/conf.d, a file that cannot be read, more
 * than the size bound) leaves PHP to scan its own conf.d as before: never fewer extensions than the host
 * configured. */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lang/php_ini.h"
#include "util/buf.h"
#include "util/fd.h"

#define CONF_MAX_BYTES (1u << 20) /* all kept files together; a real conf.d is a few KB */
#define CONF_MAX_FILES 512

/* The conf.d of a Debian-style PHP binary: /usr/bin/php -> /usr/bin/php8.2 -> /etc/php/8.2/cli/conf.d. */
static int conf_dir(const char *runtime, char *out, size_t cap)
{
    char real[PATH_MAX];
    if (!realpath(runtime, real))
        return -1;
    const char *base = strrchr(real, '/');
    base = base ? base + 1 : real;
    if (strncmp(base, "php", 3) != 0 || base[3] < '0' || base[3] > '9' || strspn(base + 3, "0123456789.") != strlen(base + 3))
        return -1;
    int n = snprintf(out, cap, "/etc/php/%s/cli/conf.d", base + 3);
    struct stat st;
    return n > 0 && (size_t)n < cap && stat(out, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
}

static const char *skip_blanks(const char *s, const char *end)
{
    while (s < end && (*s == ' ' || *s == '\t'))
        s++;
    return s;
}

/* Whether the ini line [s, end) is `extension=` or `zend_extension=` naming name (with or without a
 * directory, quotes or ".so"). */
static bool line_loads(const char *s, const char *end, const char *name)
{
    s = skip_blanks(s, end);
    const char *eq = memchr(s, '=', (size_t)(end - s));
    if (!eq)
        return false;
    const char *k = eq;
    while (k > s && (k[-1] == ' ' || k[-1] == '\t'))
        k--;
    size_t klen = (size_t)(k - s);
    if (!(klen == 9 && memcmp(s, "extension", 9) == 0) && !(klen == 14 && memcmp(s, "zend_extension", 14) == 0))
        return false;
    const char *v = skip_blanks(eq + 1, end), *vend = v;
    while (vend < end && *vend != ';' && *vend != ' ' && *vend != '\t' && *vend != '\r')
        vend++;
    if (v < vend && (*v == '"' || *v == '\''))
        v++;
    if (vend > v && (vend[-1] == '"' || vend[-1] == '\''))
        vend--;
    for (const char *p = v; p < vend; p++) /* the file name of a path */
        if (*p == '/')
            v = p + 1;
    if (vend - v > 3 && memcmp(vend - 3, ".so", 3) == 0)
        vend -= 3;
    size_t nlen = strlen(name);
    return (size_t)(vend - v) == nlen && memcmp(v, name, nlen) == 0;
}

bool fb_php_ini_loads_unused(const char *text, size_t len)
{
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *eol = nl ? nl : end;
        if (line_loads(p, eol, "readline") || line_loads(p, eol, "opcache"))
            return true;
        p = nl ? nl + 1 : end;
    }
    return false;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The *.ini names in dir, sorted as PHP sorts them (strcmp: PHP reads conf.d before any setlocale). */
static int list_inis(const char *dir, char ***names, size_t *n)
{
    *names = NULL;
    *n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int rc = 0;
    size_t cap = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d))) {
        const char *dot = strrchr(e->d_name, '.');
        if (!dot || strcmp(dot, ".ini") != 0)
            continue;
        if (*n == cap) {
            char **bigger = cap < CONF_MAX_FILES ? realloc(*names, (cap ? cap * 2 : 32) * sizeof **names) : NULL;
            if (!bigger) {
                rc = -1;
                break;
            }
            *names = bigger;
            cap = cap ? cap * 2 : 32;
        }
        if (!((*names)[*n] = strdup(e->d_name)))
            rc = -1;
        else
            (*n)++;
    }
    closedir(d);
    if (rc == 0 && *n > 1)
        qsort(*names, *n, sizeof **names, by_name);
    return rc;
}

static void free_names(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

/* Appends every regular *.ini file of dir that loads neither readline nor opcache, each after "[PHP]". */
static int concat_kept(const char *dir, char **names, size_t n, fb_buf *out, size_t *skipped)
{
    for (size_t i = 0; i < n; i++) {
        char path[PATH_MAX];
        struct stat st;
        if (snprintf(path, sizeof path, "%s/%s", dir, names[i]) >= (int)sizeof path || stat(path, &st) < 0)
            return -1;
        if (!S_ISREG(st.st_mode)) /* PHP skips these too */
            continue;
        char *text = NULL;
        size_t len = 0;
        fb_error err = {0};
        if (fb_read_file(path, CONF_MAX_BYTES, &text, &len, &err) < 0)
            return -1;
        if (fb_php_ini_loads_unused(text, len)) {
            (*skipped)++;
        } else if (fb_buf_append(out, "[PHP]\n", 6) < 0 || fb_buf_append(out, text, len) < 0 ||
                   fb_buf_append(out, "\n", 1) < 0) {
            free(text);
            return -1;
        }
        free(text);
    }
    return out->truncated ? -1 : 0;
}

void fb_php_ini_extra(const char *runtime, fb_lang_extra *out)
{
    char dir[PATH_MAX];
    *out = (fb_lang_extra){0};
    if (conf_dir(runtime, dir, sizeof dir) == 0)
        fb_php_ini_extra_from(dir, out);
}

void fb_php_ini_extra_from(const char *dir, fb_lang_extra *out)
{
    *out = (fb_lang_extra){0};
    char **names = NULL;
    size_t n = 0, skipped = 0;
    if (list_inis(dir, &names, &n) < 0) {
        free_names(names, n);
        return;
    }
    fb_buf text;
    fb_buf_init(&text, CONF_MAX_BYTES);
    int rc = concat_kept(dir, names, n, &text, &skipped);
    free_names(names, n);
    if (rc < 0 || skipped == 0) { /* nothing to gain: PHP reads its conf.d itself */
        fb_buf_free(&text);
        return;
    }
    out->data = fb_buf_steal(&text, &out->len);
    if (!out->data)
        return;
    out->path = FB_PHP_CONF_DIR "/host.ini";
    out->env = "PHP_INI_SCAN_DIR=" FB_PHP_CONF_DIR;
}
