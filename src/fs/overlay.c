/* The mount view's upper layer (see overlay.h). */
#include "fs/overlay.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

static size_t lower_bound(const ov_store *s, const char *rel)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(s->v[mid]->rel, rel) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

ov_entry *ov_find(const ov_store *s, const char *rel)
{
    size_t i = lower_bound(s, rel);
    return i < s->n && strcmp(s->v[i]->rel, rel) == 0 ? s->v[i] : NULL;
}

static void entry_clear(ov_store *s, ov_entry *e)
{
    s->bytes -= e->cap;
    free(e->data);
    e->data = NULL;
    e->len = e->cap = 0;
}

ov_entry *ov_put(ov_store *s, const char *rel, ov_kind kind, mode_t mode)
{
    size_t i = lower_bound(s, rel);
    ov_entry *e = i < s->n && strcmp(s->v[i]->rel, rel) == 0 ? s->v[i] : NULL;
    if (!e) {
        if (s->n == s->cap) {
            size_t ncap = s->cap ? s->cap * 2 : 32;
            ov_entry **nv = reallocarray(s->v, ncap, sizeof *nv);
            if (!nv)
                return NULL;
            s->v = nv;
            s->cap = ncap;
        }
        e = calloc(1, sizeof *e);
        if (!e || !(e->rel = strdup(rel))) {
            free(e);
            return NULL;
        }
        memmove(s->v + i + 1, s->v + i, (s->n - i) * sizeof *s->v);
        s->v[i] = e;
        s->n++;
    } else if (e->open_count > 0) { /* still open under its old identity: keep it for its handles */
        ov_entry *fresh = calloc(1, sizeof *fresh);
        char *r = strdup(rel);
        if (!fresh || !r) {
            free(fresh);
            free(r);
            return NULL;
        }
        e->detached = true;
        fresh->rel = r;
        s->v[i] = fresh;
        e = fresh;
    } else {
        entry_clear(s, e);
        free(e->baseline_data);
        e->baseline_data = NULL;
        e->baseline_len = 0;
        e->opaque = e->unreported = e->ghost = e->baseline = false;
    }
    e->kind = kind;
    e->mode = mode & 07777;
    clock_gettime(CLOCK_REALTIME, &e->mtime);
    return e;
}

static void entry_free(ov_store *s, ov_entry *e)
{
    entry_clear(s, e);
    free(e->baseline_data);
    free(e->rel);
    free(e);
}

static ov_entry *detach(ov_store *s, const char *rel)
{
    size_t i = lower_bound(s, rel);
    if (i >= s->n || strcmp(s->v[i]->rel, rel) != 0)
        return NULL;
    ov_entry *e = s->v[i];
    memmove(s->v + i, s->v + i + 1, (s->n - i - 1) * sizeof *s->v);
    s->n--;
    return e;
}

void ov_remove(ov_store *s, const char *rel)
{
    ov_entry *e = detach(s, rel);
    if (!e)
        return;
    if (e->open_count > 0)
        e->detached = true;
    else
        entry_free(s, e);
}

int ov_rename(ov_store *s, const char *from, const char *to)
{
    char *nrel = strdup(to);
    if (!nrel)
        return -ENOMEM;
    if (s->n == s->cap) { /* make room first so that nothing fails after the entry left its place */
        size_t ncap = s->cap ? s->cap * 2 : 32;
        ov_entry **nv = reallocarray(s->v, ncap, sizeof *nv);
        if (!nv) {
            free(nrel);
            return -ENOMEM;
        }
        s->v = nv;
        s->cap = ncap;
    }
    ov_entry *e = detach(s, from);
    if (!e) {
        free(nrel);
        return -ENOENT;
    }
    ov_remove(s, to);
    free(e->rel);
    e->rel = nrel;
    size_t i = lower_bound(s, nrel);
    memmove(s->v + i + 1, s->v + i, (s->n - i) * sizeof *s->v);
    s->v[i] = e;
    s->n++;
    return 0;
}

void ov_hold(ov_entry *e)
{
    e->open_count++;
}

void ov_release(ov_store *s, ov_entry *e)
{
    if (--e->open_count > 0)
        return;
    if (e->detached)
        entry_free(s, e);
    else if (e->ghost)
        ov_remove(s, e->rel);
}

static int reserve(ov_store *s, ov_entry *e, size_t need)
{
    if (need <= e->cap)
        return 0;
    size_t ncap = e->cap ? e->cap : 4096;
    while (ncap < need)
        ncap = ncap > SIZE_MAX / 2 ? need : ncap * 2;
    if (s->max_bytes && s->bytes - e->cap + ncap > s->max_bytes) {
        ncap = need; /* no slack when close to the cap */
        if (s->bytes - e->cap + ncap > s->max_bytes)
            return -ENOSPC;
    }
    unsigned char *nd = realloc(e->data, ncap);
    if (!nd)
        return -ENOMEM;
    s->bytes += ncap - e->cap;
    e->data = nd;
    e->cap = ncap;
    return 0;
}

int ov_write(ov_store *s, ov_entry *e, const void *buf, size_t len, off_t off)
{
    if (off < 0 || (uint64_t)off > SIZE_MAX - len)
        return -EFBIG;
    size_t end = (size_t)off + len;
    int rc = reserve(s, e, end);
    if (rc < 0)
        return rc;
    if ((size_t)off > e->len) /* a hole reads as zeros */
        memset(e->data + e->len, 0, (size_t)off - e->len);
    memcpy(e->data + off, buf, len);
    if (end > e->len)
        e->len = end;
    clock_gettime(CLOCK_REALTIME, &e->mtime);
    return (int)len;
}

int ov_truncate(ov_store *s, ov_entry *e, off_t size)
{
    if (size < 0)
        return -EINVAL;
    if ((size_t)size > e->len) {
        int rc = reserve(s, e, (size_t)size);
        if (rc < 0)
            return rc;
        memset(e->data + e->len, 0, (size_t)size - e->len);
    }
    e->len = (size_t)size;
    clock_gettime(CLOCK_REALTIME, &e->mtime);
    return 0;
}

int ov_set_data(ov_store *s, ov_entry *e, const void *buf, size_t len)
{
    e->len = 0;
    if (len == 0)
        return 0;
    int rc = reserve(s, e, len);
    if (rc < 0)
        return rc;
    memcpy(e->data, buf, len);
    e->len = len;
    return 0;
}

size_t ov_children_start(const ov_store *s, const char *dir)
{
    if (!*dir)
        return lower_bound(s, "") + (s->n && s->v[0]->rel[0] == '\0'); /* skip the root itself */
    size_t dl = strlen(dir);
    char key[PATH_MAX + 2];
    if (dl > PATH_MAX)
        return s->n;
    memcpy(key, dir, dl);
    key[dl] = '/';
    key[dl + 1] = '\0';
    return lower_bound(s, key);
}

bool ov_in_dir(const ov_entry *e, const char *dir, bool *direct)
{
    const char *rest = e->rel;
    if (*dir) {
        size_t dl = strlen(dir);
        if (strncmp(e->rel, dir, dl) != 0 || e->rel[dl] != '/')
            return false;
        rest = e->rel + dl + 1;
    } else if (!*rest) {
        return false;
    }
    *direct = strchr(rest, '/') == NULL;
    return true;
}

bool ov_hides_lower(const ov_store *s, const char *rel)
{
    ov_entry *e = ov_find(s, rel);
    if (e && (e->kind == OV_WHITEOUT || e->opaque))
        return true;
    size_t len = strlen(rel);
    char buf[PATH_MAX + 1];
    if (len > PATH_MAX)
        return true;
    memcpy(buf, rel, len + 1);
    for (char *slash = strrchr(buf, '/'); slash; slash = strrchr(buf, '/')) {
        *slash = '\0';
        e = ov_find(s, buf);
        if (e && (e->kind == OV_WHITEOUT || e->opaque))
            return true;
    }
    return false;
}

void ov_store_free(ov_store *s)
{
    for (size_t i = 0; i < s->n; i++)
        entry_free(s, s->v[i]);
    free(s->v);
    *s = (ov_store){0};
}
