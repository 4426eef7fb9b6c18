#include "util/media_types.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/buf.h"
#include "util/fd.h"

typedef struct entry {
    const char *ext; /* lower case */
    const char *type;
    size_t line;     /* the order in the file: the first listing of an extension wins */
} entry;

struct fb_media_types {
    char *text;      /* the file's words, each NUL-terminated in place: the entries point into it */
    entry *e;
    size_t n;
};

#define SPACES " \t\r\v\f"

static char lower(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* A media type as a header may carry it: printable ASCII without the separators of a parameter, one '/'
 * between two non-empty parts. */
static bool sendable_type(const char *s)
{
    const char *slash = strchr(s, '/');
    if (!slash || slash == s || !slash[1] || strchr(slash + 1, '/'))
        return false;
    for (; *s; s++)
        if (*s <= ' ' || *s > '~' || strchr("\"(),;<=>?@[\\]{}", *s))
            return false;
    return true;
}

static bool usable_ext(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > FB_MEDIA_TYPE_MAX_EXT)
        return false;
    for (; *s; s++)
        if (*s <= ' ' || *s > '~' || *s == '/')
            return false;
    return true;
}

static int by_ext_then_line(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    int c = strcmp(x->ext, y->ext);
    return c ? c : (x->line > y->line) - (x->line < y->line);
}

static int add(fb_media_types *t, size_t *cap, const char *type, char *ext, size_t line, fb_error *err)
{
    for (char *c = ext; *c; c++)
        *c = lower(*c);
    if (!usable_ext(ext))
        return 0;
    if (t->n == *cap) {
        size_t ncap = *cap ? *cap * 2 : 1024;
        entry *ne = realloc(t->e, ncap * sizeof *ne);
        if (!ne)
            return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "media types");
        t->e = ne;
        *cap = ncap;
    }
    t->e[t->n++] = (entry){ext, type, line};
    return 0;
}

/* One line (NUL-terminated in place): its type, then its extensions, up to a word that starts a comment. */
static int add_line(fb_media_types *t, size_t *cap, char *line, size_t no, fb_error *err)
{
    char *save = NULL;
    const char *type = strtok_r(line, SPACES, &save);
    if (!type || type[0] == '#' || !sendable_type(type))
        return 0;
    for (char *ext; (ext = strtok_r(NULL, SPACES, &save)) && ext[0] != '#';)
        if (add(t, cap, type, ext, no, err) < 0)
            return -1;
    return 0;
}

/* Sorted by extension, each kept once (its first listing), for bsearch. */
static void sort_unique(fb_media_types *t)
{
    if (t->n == 0)
        return;
    qsort(t->e, t->n, sizeof *t->e, by_ext_then_line);
    size_t kept = 1;
    for (size_t i = 1; i < t->n; i++)
        if (strcmp(t->e[i].ext, t->e[kept - 1].ext) != 0)
            t->e[kept++] = t->e[i];
    t->n = kept;
}

fb_media_types *fb_media_types_parse(const char *text, size_t len, fb_error *err)
{
    fb_media_types *t = calloc(1, sizeof *t);
    char *copy = malloc(len + 1);
    if (!t || !copy) {
        free(t);
        free(copy);
        fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "media types");
        return NULL;
    }
    memcpy(copy, text, len);
    copy[len] = '\0';
    t->text = copy;
    size_t cap = 0, no = 0;
    for (char *line = copy; line < copy + len; no++) {
        char *nl = memchr(line, '\n', (size_t)(copy + len - line));
        char *next = nl ? nl + 1 : copy + len;
        if (nl)
            *nl = '\0';
        if (add_line(t, &cap, line, no, err) < 0) {
            fb_media_types_free(t);
            return NULL;
        }
        line = next;
    }
    sort_unique(t);
    return t;
}

fb_media_types *fb_media_types_load(const char *path, fb_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        fb_set_error(err, FB_ERR_HOST_PATH, errno, "%s: %s", path, strerror(errno));
        return NULL;
    }
    fb_buf b;
    fb_buf_init(&b, FB_MEDIA_TYPES_MAX_BYTES);
    int rc = fb_read_all(fd, &b);
    int saved = errno;
    close(fd);
    fb_media_types *t = NULL;
    if (rc < 0)
        fb_set_error(err, FB_ERR_HOST_PATH, saved, "%s: %s", path, strerror(saved));
    else if (b.truncated)
        fb_set_error(err, FB_ERR_HOST_PATH, EFBIG, "%s: larger than %u bytes", path, FB_MEDIA_TYPES_MAX_BYTES);
    else
        t = fb_media_types_parse(b.data ? b.data : "", b.len, err);
    fb_buf_free(&b);
    return t;
}

static int by_ext(const void *key, const void *e)
{
    return strcmp(key, ((const entry *)e)->ext);
}

const char *fb_media_types_find(const fb_media_types *t, const char *name, size_t len)
{
    if (!t || !name)
        return NULL;
    const char *base = name;
    for (const char *p = name; p < name + len; p++)
        if (*p == '/')
            base = p + 1;
    const char *dot = NULL;
    for (const char *p = base; p < name + len; p++)
        if (*p == '.')
            dot = p;
    size_t n = dot ? (size_t)(name + len - dot - 1) : 0;
    if (!dot || dot == base || n == 0 || n > FB_MEDIA_TYPE_MAX_EXT)
        return NULL;
    char key[FB_MEDIA_TYPE_MAX_EXT + 1];
    for (size_t i = 0; i < n; i++)
        key[i] = lower(dot[1 + i]);
    key[n] = '\0';
    if (strlen(key) != n || t->n == 0) /* a NUL in the name: no extension of the table holds one */
        return NULL;
    const entry *e = bsearch(key, t->e, t->n, sizeof *t->e, by_ext);
    return e ? e->type : NULL;
}

size_t fb_media_types_count(const fb_media_types *t)
{
    return t ? t->n : 0;
}

void fb_media_types_free(fb_media_types *t)
{
    if (!t)
        return;
    free(t->e);
    free(t->text);
    free(t);
}
