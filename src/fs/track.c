/* What the function changed, scratch space and mounts (see track.h). */
#include "fs/track.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fs/overlay.h"

#define TRACK_MAX_FILE ((size_t)1 << 30) /* a tmpfs file larger than this is reported without content */

static fb_file_type type_of(mode_t mode)
{
    return S_ISDIR(mode) ? FB_FILE_DIRECTORY : S_ISLNK(mode) ? FB_FILE_SYMLINK : FB_FILE_REGULAR;
}

/* ---- scratch space: the baseline ---- */

static int baseline_push(fb_baseline *b, const char *area, const char *path, bool dir, bool skip,
                         const unsigned char *data, size_t len, fb_error *err)
{
    for (size_t i = 0; i < b->n; i++)
        if (strcmp(b->v[i].path, path) == 0) {
            b->v[i].skip |= skip;
            return 0;
        }
    if (b->n == b->cap) {
        size_t ncap = b->cap ? b->cap * 2 : 16;
        fb_baseline_entry *nv = reallocarray(b->v, ncap, sizeof *nv);
        if (!nv)
            return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "workspace baseline");
        b->v = nv;
        b->cap = ncap;
    }
    char *p = strdup(path);
    if (!p)
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "workspace baseline");
    b->v[b->n++] = (fb_baseline_entry){.path = p, .area = area, .dir = dir, .skip = skip, .data = data, .len = len};
    return 0;
}

int fb_baseline_add(fb_baseline *b, const char *root, const char *path, bool dir, bool skip,
                    const unsigned char *data, size_t len, fb_error *err)
{
    if (baseline_push(b, root, path, dir, skip, data, len, err) < 0)
        return -1;
    char buf[PATH_MAX];
    size_t rl = strlen(root);
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
        return fb_set_error(err, FB_ERR_INVALID_REQUEST, ENAMETOOLONG, "path too long: %.64s...", path);
    for (char *slash = strrchr(buf, '/'); slash && (size_t)(slash - buf) > rl; slash = strrchr(buf, '/')) {
        *slash = '\0';
        if (baseline_push(b, root, buf, true, false, NULL, 0, err) < 0)
            return -1;
    }
    return 0;
}

static int by_path(const void *a, const void *b)
{
    return strcmp(((const fb_baseline_entry *)a)->path, ((const fb_baseline_entry *)b)->path);
}

void fb_baseline_seal(fb_baseline *b)
{
    if (b->n > 1)
        qsort(b->v, b->n, sizeof *b->v, by_path);
}

void fb_baseline_free(fb_baseline *b)
{
    for (size_t i = 0; i < b->n; i++)
        free(b->v[i].path);
    free(b->v);
    *b = (fb_baseline){0};
}

static const fb_baseline_entry *baseline_find(const fb_baseline *b, const char *path)
{
    fb_baseline_entry key = {.path = (char *)path};
    return b->n ? bsearch(&key, b->v, b->n, sizeof *b->v, by_path) : NULL;
}

/* ---- scratch space: the walk ---- */

typedef struct walk {
    int root_fd;
    const char *vroot;
    const fb_baseline *b;
    bool with_content;
    size_t budget;
    fb_change_list *out;
    fb_error *err;
    dev_t dev; /* the root's file system: what is mounted inside is another area's */
} walk;

static int open_beneath(int root_fd, const char *rel, int flags)
{
    if (!*rel)
        return openat(root_fd, ".", flags | O_CLOEXEC);
    struct open_how how = {.flags = (uint64_t)(flags | O_CLOEXEC | O_NOFOLLOW),
                           .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
                                      RESOLVE_NO_XDEV}; /* another area mounted inside is not this walk's */
    return (int)syscall(SYS_openat2, root_fd, rel, &how, sizeof how);
}

/* Reads a regular file whole. *data is NULL for an empty file. O_NONBLOCK and the type check after
 * opening keep a FIFO (or a file swapped for one since the stat) from blocking fnbox forever. */
static int read_file(int root_fd, const char *rel, size_t size, unsigned char **data, size_t *len)
{
    *data = NULL;
    *len = 0;
    int fd = open_beneath(root_fd, rel, O_RDONLY | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return -1;
    }
    unsigned char *buf = size ? malloc(size) : NULL;
    size_t got = 0;
    while (buf && got < size) {
        ssize_t n = pread(fd, buf + got, size - got, (off_t)got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(fd);
    if (size && !buf)
        return -1;
    *data = buf;
    *len = got;
    return 0;
}

static int report(walk *w, fb_change_kind kind, const char *vpath, const char *rel, const struct stat *st)
{
    fb_file_type t = type_of(st->st_mode);
    unsigned char *content = NULL;
    size_t len = 0;
    bool has = false;
    if (w->with_content && t == FB_FILE_REGULAR && (size_t)st->st_size <= TRACK_MAX_FILE)
        has = read_file(w->root_fd, rel, (size_t)st->st_size, &content, &len) == 0;
    if (w->with_content && t == FB_FILE_SYMLINK) {
        char target[PATH_MAX];
        int fd = open_beneath(w->root_fd, rel, O_PATH);
        ssize_t n = fd >= 0 ? readlinkat(fd, "", target, sizeof target) : -1;
        if (fd >= 0)
            close(fd);
        if (n >= 0 && (content = malloc((size_t)n + 1))) {
            memcpy(content, target, (size_t)n);
            len = (size_t)n;
            has = true;
        }
    }
    uint64_t size = t == FB_FILE_DIRECTORY ? 0 : (uint64_t)st->st_size;
    return fb_change_add(w->out, kind, t, vpath, size, st->st_mode & 0777, content, len, has, w->err);
}

/* 1 if the file at rel holds exactly data. */
static int same_content(walk *w, const char *rel, const struct stat *st, const fb_baseline_entry *e)
{
    if ((size_t)st->st_size != e->len)
        return 0;
    unsigned char *data;
    size_t len;
    if (read_file(w->root_fd, rel, e->len, &data, &len) < 0)
        return 0;
    int same = len == e->len && (len == 0 || memcmp(data, e->data, len) == 0);
    free(data);
    return same;
}

static int walk_dir(walk *w, const char *rel);

/* The entry `name` of the directory dir_fd (opened beneath the root) as a struct stat (the fields this walk
 * reads), unless it is gone or something is mounted on it (another area's, as RESOLVE_NO_XDEV refused it:
 * the kernel says it is a mount's root, or its device differs). Stat'd by name in its directory without
 * following a symlink: one call where opening it first took three, and no way out of the root (a single
 * component, in a directory itself reached beneath it). */
static bool entry_stat(const walk *w, int dir_fd, const char *name, struct stat *st)
{
    struct statx sx;
    if (statx(dir_fd, name, AT_SYMLINK_NOFOLLOW, STATX_TYPE | STATX_MODE | STATX_SIZE, &sx) < 0)
        return false;
    if ((sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) && (sx.stx_attributes & STATX_ATTR_MOUNT_ROOT))
        return false;
    if (makedev(sx.stx_dev_major, sx.stx_dev_minor) != w->dev)
        return false;
    *st = (struct stat){.st_mode = sx.stx_mode, .st_size = (off_t)sx.stx_size};
    return true;
}

/* The entry `name` of dir_fd, at rel / vpath: reported if new or changed, walked if a directory. */
static int visit(walk *w, int dir_fd, const char *name, const char *rel, const char *vpath)
{
    const fb_baseline_entry *e = baseline_find(w->b, vpath);
    if (e && e->skip)
        return 0;
    struct stat st;
    if (!entry_stat(w, dir_fd, name, &st))
        return 0; /* gone, or another area: nothing to report */
    int rc = 0;
    if (!e)
        rc = report(w, FB_CHANGE_CREATED, vpath, rel, &st);
    else if (e->dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode) || !same_content(w, rel, &st, e))
        rc = report(w, FB_CHANGE_MODIFIED, vpath, rel, &st); /* new content, or a new type */
    if (rc == 0 && S_ISDIR(st.st_mode))
        rc = walk_dir(w, rel);
    return rc;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in directory fd but "." and "..", sorted (the walk's order, and so what a budget cut keeps, is
 * the same every time): *n pointers in *block (the caller frees it; NULL when there are none), after the
 * names they point to. Read with getdents64 on fd itself: scandirat opened the directory again, and
 * fdopendir asks fstat and fcntl first, on every directory of every call. -1 on failure (errno). */
static int read_names(int fd, char **block_out, char ***names, size_t *n)
{
    _Alignas(struct dirent64) char buf[32768];
    size_t cap = 0, used = 0, count = 0;
    char *text = NULL;
    *block_out = NULL;
    *names = NULL;
    *n = 0;
    for (;;) {
        long got = syscall(SYS_getdents64, fd, buf, sizeof buf);
        if (got <= 0) {
            if (got < 0) {
                free(text);
                return -1;
            }
            break;
        }
        for (long off = 0; off < got;) {
            struct dirent64 *d = (struct dirent64 *)(buf + off);
            off += d->d_reclen;
            if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0)
                continue;
            size_t len = strlen(d->d_name) + 1;
            if (used + len > cap) {
                size_t ncap = cap ? cap * 2 : 4096;
                while (ncap < used + len)
                    ncap *= 2;
                char *t = realloc(text, ncap);
                if (!t) {
                    free(text);
                    errno = ENOMEM;
                    return -1;
                }
                text = t;
                cap = ncap;
            }
            memcpy(text + used, d->d_name, len);
            used += len;
            count++;
        }
    }
    if (!count) {
        free(text);
        return 0;
    }
    /* the pointers go after the names, in the same block */
    size_t at = (used + sizeof(char *) - 1) / sizeof(char *) * sizeof(char *);
    char *block = realloc(text, at + count * sizeof(char *));
    if (!block) {
        free(text);
        errno = ENOMEM;
        return -1;
    }
    char **v = (char **)(void *)(block + at);
    for (size_t i = 0, p = 0; i < count; i++, p += strlen(block + p) + 1)
        v[i] = block + p;
    qsort(v, count, sizeof *v, by_name);
    *block_out = block;
    *names = v;
    *n = count;
    return 0;
}

static int walk_dir(walk *w, const char *rel)
{
    int fd = open_beneath(w->root_fd, rel, O_RDONLY | O_DIRECTORY);
    if (fd < 0)
        return 0;
    char *block, **names;
    size_t n;
    int rc = 0;
    if (read_names(fd, &block, &names, &n) < 0)
        n = 0; /* unreadable, as scandirat's failure was: nothing under it is reported */
    for (size_t i = 0; i < n && rc == 0 && w->budget > 0; i++) {
        w->budget--;
        char crel[PATH_MAX], vpath[PATH_MAX];
        int a = snprintf(crel, sizeof crel, "%s%s%s", rel, *rel ? "/" : "", names[i]);
        int b = snprintf(vpath, sizeof vpath, "%s/%s", strcmp(w->vroot, "/") == 0 ? "" : w->vroot, crel);
        if (a > 0 && a < (int)sizeof crel && b > 0 && b < (int)sizeof vpath)
            rc = visit(w, fd, names[i], crel, vpath);
    }
    free(block);
    close(fd);
    return rc;
}

/* Strictly beneath root ("/" holds every other absolute path). */
static bool under(const char *path, const char *root)
{
    size_t n = strcmp(root, "/") == 0 ? 0 : strlen(root);
    return strncmp(path, root, n) == 0 && path[n] == '/' && path[n + 1] != '\0';
}

int fb_track_scratch(int root_fd, const char *vroot, const fb_baseline *b, bool with_content, size_t max_entries,
                     fb_change_list *out, fb_error *err)
{
    walk w = {.root_fd = root_fd, .vroot = vroot, .b = b, .with_content = with_content, .budget = max_entries,
              .out = out, .err = err};
    struct stat root;
    if (fstat(root_fd, &root) < 0)
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "stat of the scratch area %s", vroot);
    w.dev = root.st_dev;
    if (walk_dir(&w, "") < 0)
        return -1;
    /* what the baseline had and the tree lost */
    for (size_t i = 0; i < b->n; i++) {
        const fb_baseline_entry *e = &b->v[i];
        /* another area's entries are that area's to answer: "/" holds every path, and once the sandbox is
         * gone the mounts inside it are too, so /workspace/x looks deleted from the root's side */
        if (e->skip || strcmp(e->area, vroot) != 0 || !under(e->path, vroot))
            continue;
        int fd = open_beneath(root_fd, e->path + (strcmp(vroot, "/") == 0 ? 0 : strlen(vroot)) + 1, O_PATH);
        if (fd >= 0) {
            close(fd);
            continue;
        }
        if (fb_change_add(out, FB_CHANGE_DELETED, e->dir ? FB_FILE_DIRECTORY : FB_FILE_REGULAR, e->path,
                          e->dir ? 0 : e->len, 0, NULL, 0, false, err) < 0)
            return -1;
    }
    return 0;
}

/* ---- mounts: the upper layer against the host now ---- */

/* Whether the host's regular file holds exactly e's content, with e's permission bits. */
static bool host_file_same(const fb_mountfs *fs, const ov_entry *e, const struct stat *st)
{
    if (!S_ISREG(st->st_mode) || (uint64_t)st->st_size != e->len || (st->st_mode & 0777) != (e->mode & 0777))
        return false;
    int fd = fb_mountfs_host_open(fs, e->rel, O_RDONLY);
    if (fd < 0)
        return false;
    char chunk[65536];
    size_t off = 0;
    bool eq;
    for (;;) {
        ssize_t n = pread(fd, chunk, sizeof chunk, (off_t)off);
        if (n <= 0 || off + (size_t)n > e->len || memcmp(chunk, e->data + off, (size_t)n) != 0) {
            eq = n == 0 && off == e->len;
            break;
        }
        off += (size_t)n;
    }
    close(fd);
    return eq;
}

/* Whether the host's entry is a link with e's target. */
static bool host_link_same(const fb_mountfs *fs, const ov_entry *e, const struct stat *st)
{
    char target[PATH_MAX];
    int fd = S_ISLNK(st->st_mode) ? fb_mountfs_host_open(fs, e->rel, O_PATH | O_NOFOLLOW) : -1;
    ssize_t n = fd >= 0 ? readlinkat(fd, "", target, sizeof target) : -1;
    if (fd >= 0)
        close(fd);
    return n >= 0 && (size_t)n == e->len && memcmp(target, e->data, e->len) == 0;
}

/* Whether the host already has what e holds (st: the host's entry): then e is no change. */
static bool same_as_host(const fb_mountfs *fs, const ov_entry *e, const struct stat *st)
{
    if (e->kind == OV_DIR)
        return S_ISDIR(st->st_mode);
    return e->kind == OV_SYMLINK ? host_link_same(fs, e, st) : host_file_same(fs, e, st);
}

/* A request file (or one of the parents made for it) the function left as it came. */
static bool baseline_untouched(const ov_entry *e)
{
    if (!e->baseline)
        return false;
    if (e->kind == OV_DIR)
        return true;
    return e->kind == OV_FILE && e->len == e->baseline_len &&
           (e->len == 0 || memcmp(e->data, e->baseline_data, e->len) == 0);
}

/* The change just added (rc 0) carries the host entry it was based on. The view notes one whenever it
 * changes a path the host has; a path without one was the view's own making (absent on the host then),
 * unless it is a request file, placed over whatever the host had. */
static int based(const fb_mountfs *fs, const ov_entry *e, int rc, fb_change_list *out)
{
    fb_host_stamp *b = rc == 0 ? &out->v[out->n - 1].base : NULL;
    if (b && !fb_mountfs_base(fs, e->rel, b) && !e->baseline)
        *b = (fb_host_stamp){.set = true, .absent = true};
    return rc;
}

static int mount_change(const fb_mountfs *fs, const ov_entry *e, bool with_content, fb_change_list *out,
                        fb_error *err)
{
    char vpath[PATH_MAX + 256];
    snprintf(vpath, sizeof vpath, "%s%s%s", fb_mountfs_vroot(fs), *e->rel ? "/" : "", e->rel);
    struct stat st;
    /* The host as it is now, beneath the root; deletions hide nothing from this question. */
    bool on_host = fb_mountfs_host_stat(fs, e->rel, &st) == 0;
    if (e->kind == OV_WHITEOUT)
        return on_host ? based(fs, e, fb_change_add(out, FB_CHANGE_DELETED, type_of(st.st_mode), vpath,
                                                    S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0, 0, NULL, 0,
                                                    false, err),
                               out)
                       : 0;
    if (baseline_untouched(e) || (on_host && same_as_host(fs, e, &st)))
        return 0;
    fb_file_type t = e->kind == OV_DIR ? FB_FILE_DIRECTORY : e->kind == OV_SYMLINK ? FB_FILE_SYMLINK
                                                                                    : FB_FILE_REGULAR;
    unsigned char *content = NULL;
    bool keep = with_content && e->kind != OV_DIR;
    if (keep && e->len && !(content = malloc(e->len)))
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "change of %s", vpath);
    if (content)
        memcpy(content, e->data, e->len);
    return based(fs, e,
                 fb_change_add(out, on_host ? FB_CHANGE_MODIFIED : FB_CHANGE_CREATED, t, vpath,
                               e->kind == OV_DIR ? 0 : e->len, e->mode, content, keep ? e->len : 0, keep, err),
                 out);
}

int fb_track_mount(const fb_mountfs *fs, bool with_content, fb_change_list *out, fb_error *err)
{
    const ov_store *ov = fb_mountfs_upper(fs);
    for (size_t i = 0; i < ov->n; i++) {
        const ov_entry *e = ov->v[i];
        /* An excluded path is never the host's to change, whatever made the entry (a request file). */
        if (e->unreported || e->ghost || !*e->rel || fb_mountfs_excluded(fs, e->rel))
            continue;
        if (mount_change(fs, e, with_content, out, err) < 0)
            return -1;
    }
    return 0;
}

/* ---- every area ---- */

static int change_by_path(const void *a, const void *b)
{
    return strcmp(((const fb_change *)a)->path, ((const fb_change *)b)->path);
}

void fb_track_sort(fb_change_list *l)
{
    if (l->n > 1)
        qsort(l->v, l->n, sizeof *l->v, change_by_path);
}
