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
    s->bytes -= e->len;
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
            ov_entry **nv = reallocarray(s->v, ncap, sizeof(ov_entry *));
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
        memmove(s->v + i + 1, s->v + i, (s->n - i) * sizeof(ov_entry *));
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
    memmove(s->v + i, s->v + i + 1, (s->n - i - 1) * sizeof(ov_entry *));
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
        ov_entry **nv = reallocarray(s->v, ncap, sizeof(ov_entry *));
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
    memmove(s->v + i + 1, s->v + i, (s->n - i) * sizeof(ov_entry *));
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

/* The store counts content (lengths), not allocations: growth slack and space given back by a
 * truncation are not charged to the function. Allocations grow by doubling and shrink when a file
 * falls below a quarter of its buffer, so fnbox's own memory stays a small multiple of the content. */
static int set_len(ov_store *s, ov_entry *e, size_t len)
{
    if (len > e->len && s->max_bytes && s->bytes - e->len + len > s->max_bytes)
        return -ENOSPC;
    size_t ncap = e->cap;
    if (len > e->cap) {
        ncap = e->cap ? e->cap : 4096;
        while (ncap < len)
            ncap = ncap > SIZE_MAX / 2 ? len : ncap * 2;
        if (s->max_bytes && ncap > s->max_bytes && len <= s->max_bytes)
            ncap = len; /* no slack beyond what the cap could ever hold */
    } else if (len < e->cap / 4) {
        ncap = len;
    }
    if (ncap != e->cap) {
        if (ncap == 0) {
            free(e->data);
            e->data = NULL;
        } else {
            unsigned char *nd = realloc(e->data, ncap);
            if (!nd) {
                if (len <= e->cap)
                    goto done; /* shrinking is best effort */
                return -ENOMEM;
            }
            e->data = nd;
        }
        e->cap = ncap;
    }
done:
    if (len > e->len)
        memset(e->data + e->len, 0, len - e->len); /* a hole or an extension reads as zeros */
    s->bytes = s->bytes - e->len + len;
    e->len = len;
    return 0;
}

int ov_write(ov_store *s, ov_entry *e, const void *buf, size_t len, off_t off)
{
    if (off < 0 || (uint64_t)off > SIZE_MAX - len)
        return -EFBIG;
    if (len == 0) /* POSIX: writing nothing never extends a file */
        return 0;
    size_t end = (size_t)off + len;
    if (end > e->len) {
        int rc = set_len(s, e, end);
        if (rc < 0)
            return rc;
    }
    memcpy(e->data + off, buf, len);
    clock_gettime(CLOCK_REALTIME, &e->mtime);
    return (int)len;
}

int ov_truncate(ov_store *s, ov_entry *e, off_t size)
{
    if (size < 0)
        return -EINVAL;
    if ((uint64_t)size > SIZE_MAX)
        return -EFBIG;
    int rc = set_len(s, e, (size_t)size);
    if (rc < 0)
        return rc;
    clock_gettime(CLOCK_REALTIME, &e->mtime);
    return 0;
}

int ov_set_data(ov_store *s, ov_entry *e, const void *buf, size_t len)
{
    int rc = set_len(s, e, len);
    if (rc < 0)
        return rc;
    if (len)
        memcpy(e->data, buf, len);
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
