/* The shared change and denial lists (see change.h). */
#include "fs/change.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int grow(void **v, size_t *cap, size_t n, size_t elem, fb_error *err)
{
    if (n < *cap)
        return 0;
    size_t ncap = *cap ? *cap * 2 : 16;
    void *nv = reallocarray(*v, ncap, elem);
    if (!nv)
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "change list: cannot grow to %zu entries", ncap);
    *v = nv;
    *cap = ncap;
    return 0;
}

int fb_change_add(fb_change_list *l, fb_change_kind kind, fb_file_type type, const char *path, uint64_t size,
                  mode_t mode, unsigned char *content, size_t content_len, bool has_content, fb_error *err)
{
    char *p = strdup(path);
    if (!p || grow((void **)&l->v, &l->cap, l->n, sizeof *l->v, err) < 0) {
        free(p);
        free(content);
        return p ? -1 : fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "change list: copy of path %s", path);
    }
    l->v[l->n++] = (fb_change){.kind = kind, .type = type, .path = p, .size = size, .mode = mode,
                               .content = content, .content_len = content_len, .has_content = has_content};
    return 0;
}

fb_host_stamp fb_host_stamp_of(const struct stat *st)
{
    return (fb_host_stamp){.set = true, .dir = S_ISDIR(st->st_mode), .ino = (uint64_t)st->st_ino,
                           .size = (uint64_t)st->st_size, .mtime_s = st->st_mtim.tv_sec,
                           .mtime_ns = st->st_mtim.tv_nsec};
}

bool fb_host_stamp_changed(const fb_host_stamp *base, bool exists, const struct stat *st)
{
    if (!base->set)
        return false;
    if (base->absent)
        return exists;
    if (!exists || (uint64_t)st->st_ino != base->ino || S_ISDIR(st->st_mode) != base->dir)
        return true;
    return !base->dir && ((uint64_t)st->st_size != base->size || st->st_mtim.tv_sec != base->mtime_s ||
                          st->st_mtim.tv_nsec != base->mtime_ns);
}

void fb_change_list_free(fb_change_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].path);
        free(l->v[i].content);
    }
    free(l->v);
    *l = (fb_change_list){0};
}

const char *fb_change_kind_name(fb_change_kind k)
{
    return k == FB_CHANGE_CREATED ? "created" : k == FB_CHANGE_MODIFIED ? "modified" : "deleted";
}

const char *fb_file_type_name(fb_file_type t)
{
    return t == FB_FILE_REGULAR ? "file" : t == FB_FILE_DIRECTORY ? "directory" : "symlink";
}

int fb_denial_add(fb_denial_list *l, const char *path, const char *operation, const char *rule, fb_error *err)
{
    char *p = strdup(path), *r = strdup(rule ? rule : "default");
    if (!p || !r || grow((void **)&l->v, &l->cap, l->n, sizeof *l->v, err) < 0) {
        bool oom = !p || !r;
        free(p);
        free(r);
        return oom ? fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "denial list: copy of %s", path) : -1;
    }
    l->v[l->n++] = (fb_denial){.path = p, .operation = operation, .rule = r};
    return 0;
}

void fb_denial_list_free(fb_denial_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].path);
        free(l->v[i].rule);
    }
    free(l->v);
    *l = (fb_denial_list){0};
}
