/* A host mount served over FUSE (see mountfs.h). The FUSE high-level API hands us paths relative to the
 * mount root ("/a/b"); every operation is decided here, in three steps:
 *   1. what exists: the upper layer (overlay.c) first, then the host directory, read beneath its root
 *      only (openat2 RESOLVE_BENEATH; symlinks per security.followSymlinks) and filtered by the loading
 *      options;
 *   2. whether it is allowed: the mount's rules (rules.c) for read / list / create / modify / delete, at
 *      the moment of the operation, then the host's callback (fb_mountfs_set_check) for what the rules
 *      allow; a refusal is recorded and answered per onPermissionDenied;
 *   3. the effect: reads come from the host or the upper layer, every change goes to the upper layer.
 * The host is never written here. The server thread is the only one touching the state until
 * fb_mountfs_stop joins it, except while fb_mountfs_pause holds it between two requests (a session's sync). */
#define FUSE_USE_VERSION 35
#include "fs/mountfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <fuse_lowlevel.h>
#include <limits.h>
#include <linux/openat2.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fs/glob.h"
#include "fs/overlay.h"
#include "fs/rules.h"
#include "util/defences.h"

#define MAX_EAGER_ENTRIES 1000000 /* an eager walk stops here (the rest is decided lazily) */

struct fb_mountfs {
    const fb_mount_config *cfg;
    const fb_mount_dir *dir;
    int root_fd;             /* O_PATH of the host directory */
    char root_path[PATH_MAX]; /* root_fd's path as /proc/self/fd shows it (link_to_excluded) */
    ov_store ov;             /* the upper layer */
    ov_store decided;        /* loading decisions for host files: mode 1 = admitted, 0 = left out */
    ov_store bases;          /* the host entry each changed path was based on (its entry's base) */
    uint64_t admitted_bytes; /* for maxTotalSize */
    fb_denial_list denials;
    fb_fs_check check;       /* the host's say after the rules (NULL: none) */
    void *check_ctx;
    fb_skipped *skipped;
    size_t nskipped, skipped_cap;
    struct fuse *fuse;
    int fuse_fd;
    int stop_fd;             /* eventfd: readable => the server loop returns */
    struct handle *handles;  /* every open file, freed with fs if the call died holding some */
    pthread_t thread;
    pthread_mutex_t serving; /* held while one request is handled: fb_mountfs_pause takes it to read the view */
    bool running;
    size_t denials_dropped;  /* refusals past FB_MOUNTFS_MAX_DENIALS, counted, not kept */
    char failure[256];
};

typedef struct handle {       /* one open file */
    struct handle *prev, *next;
    ov_entry *e;              /* the upper-layer entry (writes, or reads of changed files) */
    int lower_fd;             /* the host file, for reads of unchanged files; -1 if none */
    char *rel;
    bool discard;             /* onPermissionDenied "ignore": writes vanish */
} handle;

static fb_mountfs *self(void)
{
    return fuse_get_context()->private_data;
}

static const char *rel_of(const char *path)
{
    return path[0] == '/' ? path + 1 : path;
}

static void note_failure(fb_mountfs *fs, const char *what, int e)
{
    if (!fs->failure[0])
        snprintf(fs->failure, sizeof fs->failure, "%s: %s", what, strerror(e));
}

/* ---- the host side, beneath the root only ---- */

static int lower_open(const fb_mountfs *fs, const char *rel, int flags)
{
    if (!*rel)
        return openat(fs->root_fd, ".", flags | O_CLOEXEC);
    /* openat2 refuses flags O_PATH does not take (EINVAL), O_NOCTTY among them */
    int extra = (flags & O_PATH) ? O_CLOEXEC : O_CLOEXEC | O_NOCTTY;
    struct open_how how = {.flags = (uint64_t)(flags | extra), .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS};
    /* "restricted": links are followed while they stay beneath the root (RESOLVE_BENEATH refuses the
     * rest with EXDEV). Otherwise no link is followed on the host; with `true` the sandbox sees links as
     * links and resolves them itself, inside its own view. */
    if (fs->cfg->symlinks != FB_SYMLINKS_RESTRICTED)
        how.resolve |= RESOLVE_NO_SYMLINKS;
    if (fb_defence_disabled("beneath")) /* test builds: links followed wherever they lead */
        how.resolve = 0;
    int fd;
    do
        fd = (int)syscall(SYS_openat2, fs->root_fd, rel, &how, sizeof how);
    while (fd < 0 && errno == EAGAIN);
    return fd;
}

static int lower_lstat(const fb_mountfs *fs, const char *rel, struct stat *st)
{
    int flags = O_PATH | (fs->cfg->symlinks == FB_SYMLINKS_RESTRICTED ? 0 : O_NOFOLLOW);
    int fd = lower_open(fs, rel, flags);
    if (fd < 0)
        return -ENOENT; /* ELOOP / EXDEV (a link leading out) read as absent */
    int rc = fstat(fd, st) < 0 ? -errno : 0;
    close(fd);
    return rc;
}

static int add_skipped(fb_mountfs *fs, const char *rel, const char *reason, uint64_t size)
{
    if (fs->nskipped == fs->skipped_cap) {
        size_t ncap = fs->skipped_cap ? fs->skipped_cap * 2 : 16;
        fb_skipped *nv = reallocarray(fs->skipped, ncap, sizeof *nv);
        if (!nv)
            return -ENOMEM;
        fs->skipped = nv;
        fs->skipped_cap = ncap;
    }
    char *p = NULL;
    if (asprintf(&p, "%s%s%s", fs->dir->virtual_path, *rel ? "/" : "", rel) < 0)
        return -ENOMEM;
    fs->skipped[fs->nskipped++] = (fb_skipped){.path = p, .reason = reason, .size = size};
    return 0;
}

static bool included(const fb_mountfs *fs, const char *rel)
{
    for (size_t i = 0; i < fs->cfg->ninclude; i++)
        if (fb_glob_match(fs->cfg->include[i], rel))
            return true;
    return false;
}

/* Whether the loading options let the function see the host file rel (size from st). Decisions are
 * remembered so that a file does not come and go during a call. */
static bool admitted(fb_mountfs *fs, const char *rel, const struct stat *st)
{
    if (S_ISLNK(st->st_mode) && fs->cfg->symlinks == FB_SYMLINKS_NO) {
        if (!ov_find(&fs->decided, rel)) {
            ov_entry *d = ov_put(&fs->decided, rel, OV_FILE, 0);
            if (d)
                (void)add_skipped(fs, rel, "symlink", 0);
        }
        return false;
    }
    if (!S_ISREG(st->st_mode))
        return S_ISDIR(st->st_mode) || S_ISLNK(st->st_mode);
    if (fs->cfg->load == FB_LOAD_EXPLICIT && !included(fs, rel))
        return false;
    if (!fs->cfg->max_file_size && !fs->cfg->max_total_size)
        return true;
    ov_entry *d = ov_find(&fs->decided, rel);
    if (d)
        return d->mode == 1;
    const char *reason = NULL;
    uint64_t size = (uint64_t)st->st_size;
    if (fs->cfg->max_file_size && size > fs->cfg->max_file_size)
        reason = "maxFileSize";
    else if (fs->cfg->max_total_size && fs->admitted_bytes + size > fs->cfg->max_total_size)
        reason = "maxTotalSize";
    d = ov_put(&fs->decided, rel, OV_FILE, reason ? 0 : 1);
    if (!d)
        return false;
    if (reason)
        (void)add_skipped(fs, rel, reason, size);
    else
        fs->admitted_bytes += size;
    return !reason;
}

/* The path /proc/self/fd shows for fd, into buf: 0, or -1. */
static int fd_path(int fd, char *buf, size_t cap)
{
    char proc[48];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(proc, buf, cap - 1);
    if (n < 0 || (size_t)n >= cap - 1)
        return -1;
    buf[n] = '\0';
    return 0;
}

/* Under followSymlinks "restricted" the host's links are followed (beneath the root), so a link, or a
 * path through a linked directory, may land on an excluded entry under another name: it must stay as
 * hidden as the entry itself. The kernel's own resolution is judged (the file's path read back from
 * /proc, against the root's read the same way), not a second walk of ours that a changing link could
 * fool. Unknown means hidden. */
static bool link_to_excluded(const fb_mountfs *fs, const char *rel)
{
    if (fs->cfg->symlinks != FB_SYMLINKS_RESTRICTED || !fb_rules_has_excludes(fs->cfg->rules))
        return false;
    int fd = lower_open(fs, rel, O_PATH);
    if (fd < 0)
        return false; /* absent (or leading out): lower_lstat says so */
    char real[PATH_MAX];
    int rc = fd_path(fd, real, sizeof real);
    close(fd);
    if (rc < 0 || !fs->root_path[0])
        return true;
    const char *root = fs->root_path;
    size_t len = strcmp(root, "/") == 0 ? 0 : strlen(root);
    if (strncmp(real, root, len) != 0 || (real[len] != '/' && real[len] != '\0'))
        return true;
    const char *target = real[len] == '/' ? real + len + 1 : "";
    return *target && fb_rules_excluded(fs->cfg->rules, fs->dir->virtual_path, target, NULL);
}

/* Whether the host entry at rel is left out of the view by `exclude` (the mount root never is: the
 * mount point must exist). Decided on the name before the host is asked anything, so an excluded file
 * is never read, not even stat'ed, and costs no loading budget. */
static bool excluded(const fb_mountfs *fs, const char *rel)
{
    if (!*rel)
        return false;
    if (fb_defence_disabled("mountfs-exclude") || fb_defence_disabled("mountfs-rules"))
        return false; /* test builds: excluded entries visible, their operations still refused */
    return fb_rules_excluded(fs->cfg->rules, fs->dir->virtual_path, rel, NULL) || link_to_excluded(fs, rel);
}

/* The host entry at rel as the function sees it: 0 and *st, or -ENOENT. */
static int lower_visible(fb_mountfs *fs, const char *rel, struct stat *st)
{
    if (ov_hides_lower(&fs->ov, rel) || excluded(fs, rel))
        return -ENOENT;
    if (lower_lstat(fs, rel, st) < 0)
        return -ENOENT;
    return admitted(fs, rel, st) ? 0 : -ENOENT;
}

/* Whether the host has an entry at rel that the view still shows (not deleted or covered in this call,
 * not excluded: what the function cannot see, it cannot delete or modify either). */
static bool host_has(const fb_mountfs *fs, const char *rel)
{
    struct stat st;
    return !ov_hides_lower(&fs->ov, rel) && !excluded(fs, rel) && lower_lstat(fs, rel, &st) == 0;
}

/* ---- permissions ---- */

/* Whether rel, resolved to an upper entry (resolved == 1), is the function's own at an excluded path: made
 * there under "virtual" (or a directory under "ignore"), or a request file. Excluded host entries are
 * never copied up, so reading or listing it back shows nothing of the host; refusing would leave the
 * function something it made but cannot read. */
static bool own_excluded(const fb_mountfs *fs, const char *rel, int resolved)
{
    return resolved == 1 && excluded(fs, rel);
}

typedef enum { DENY_NONE, DENY_THROW, DENY_IGNORE, DENY_VIRTUAL } verdict;

/* Whether the host's callback allows op on vpath; when not, *rule gets "callback[: <reason>]". */
static bool host_allows(fb_mountfs *fs, const char *vpath, fb_op op, char *rule, size_t cap)
{
    char reason[FB_FS_REASON_MAX] = "";
    if (fs->check(fs->check_ctx, vpath, fb_op_name(op), reason, sizeof reason))
        return true;
    reason[sizeof reason - 1] = '\0';
    snprintf(rule, cap, "callback%s%s", reason[0] ? ": " : "", reason);
    return false;
}

static verdict check(fb_mountfs *fs, const char *rel, fb_op op)
{
    if (fb_defence_disabled("mountfs-rules")) /* test builds: every operation allowed */
        return DENY_NONE;
    const char *rule = NULL;
    bool allowed = fb_rules_allows(fs->cfg->rules, fs->dir->virtual_path, rel, op, &rule);
    if (allowed && !fs->check)
        return DENY_NONE;
    char *vpath = NULL, host_rule[FB_FS_REASON_MAX + 16];
    if (asprintf(&vpath, "%s%s%s", fs->dir->virtual_path, *rel ? "/" : "", rel) < 0) {
        vpath = NULL;
        if (allowed) { /* the host cannot be asked: fail closed */
            note_failure(fs, "asking the host", ENOMEM);
            allowed = false;
            rule = "callback: out of memory";
        }
    }
    if (allowed && vpath) {
        if (host_allows(fs, vpath, op, host_rule, sizeof host_rule)) {
            free(vpath);
            return DENY_NONE;
        }
        rule = host_rule;
    }
    if (vpath) {
        fb_error err = {0};
        /* bounded: a session's loop of refused writes must not grow the server without end */
        if (fs->denials.n >= FB_MOUNTFS_MAX_DENIALS)
            fs->denials_dropped++;
        else if (fb_denial_add(&fs->denials, vpath, fb_op_name(op), rule, &err) < 0)
            note_failure(fs, "recording a denial", ENOMEM);
        free(vpath);
    }
    /* Reads and listings have no "pretend" form: they are refused whatever the mode. */
    if (op == FB_OP_READ || op == FB_OP_LIST || fs->cfg->on_denied == FB_DENIED_THROW)
        return DENY_THROW;
    return fs->cfg->on_denied == FB_DENIED_IGNORE ? DENY_IGNORE : DENY_VIRTUAL;
}

/* ---- attributes ---- */

static void fill_owner(struct stat *st)
{
    const struct fuse_context *c = fuse_get_context();
    st->st_uid = c->uid; /* everything looks like the function's own: it is, for this call */
    st->st_gid = c->gid;
}

static void stat_of_entry(const ov_entry *e, struct stat *st)
{
    memset(st, 0, sizeof *st);
    mode_t type = e->kind == OV_DIR ? S_IFDIR : e->kind == OV_SYMLINK ? S_IFLNK : S_IFREG;
    st->st_mode = type | (e->mode & 07777);
    st->st_nlink = e->kind == OV_DIR ? 2 : 1;
    st->st_size = (off_t)e->len;
    st->st_blksize = 4096;
    st->st_blocks = (blkcnt_t)((e->len + 511) / 512);
    st->st_mtim = st->st_ctim = st->st_atim = e->mtime;
    fill_owner(st);
}

/* Looks rel up in the merged view: 1 with *e for an upper entry, 0 with *st for a host entry, -ENOENT. */
static int resolve(fb_mountfs *fs, const char *rel, ov_entry **e, struct stat *st)
{
    *e = ov_find(&fs->ov, rel);
    if (*e)
        return (*e)->kind == OV_WHITEOUT ? -ENOENT : 1;
    return lower_visible(fs, rel, st);
}

static int fs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
    fb_mountfs *fs = self();
    ov_entry *e;
    int rc = resolve(fs, rel_of(path), &e, st);
    if (rc < 0)
        return rc;
    if (rc == 1) {
        stat_of_entry(e, st);
        return 0;
    }
    st->st_mode &= S_IFMT | 0777; /* no setuid/setgid/sticky from the host */
    st->st_nlink = S_ISDIR(st->st_mode) ? 2 : 1;
    if (S_ISDIR(st->st_mode)) { /* a host directory's size counts its entries on tmpfs and btrfs, the
                                 * excluded ones too: show one that says nothing */
        st->st_size = 4096;
        st->st_blocks = 8;
    }
    fill_owner(st);
    return 0;
}

static int fs_access(const char *path, int mask)
{
    fb_mountfs *fs = self();
    const char *rel = rel_of(path);
    ov_entry *e;
    struct stat st;
    int rc = resolve(fs, rel, &e, &st);
    if (rc < 0)
        return rc;
    bool dir = rc == 1 ? e->kind == OV_DIR : S_ISDIR(st.st_mode);
    mode_t mode = rc == 1 ? e->mode : st.st_mode;
    const char *rule;
    /* access(2) is a question, not an operation: answer from the rules without recording a denial. */
    if ((mask & R_OK) && !own_excluded(fs, rel, rc) &&
        !fb_rules_allows(fs->cfg->rules, fs->dir->virtual_path, rel, dir ? FB_OP_LIST : FB_OP_READ, &rule))
        return -EACCES;
    if ((mask & W_OK) && !fb_rules_allows(fs->cfg->rules, fs->dir->virtual_path, rel,
                                          dir ? FB_OP_CREATE : FB_OP_MODIFY, &rule))
        return -EACCES;
    if ((mask & X_OK) && !dir && !(mode & 0111))
        return -EACCES;
    return 0;
}

/* ---- reading ---- */

static int fs_readlink(const char *path, char *buf, size_t size)
{
    fb_mountfs *fs = self();
    const char *rel = rel_of(path);
    ov_entry *e;
    struct stat st;
    int rc = resolve(fs, rel, &e, &st);
    if (rc < 0)
        return rc;
    if (size == 0)
        return -EINVAL;
    if (rc == 1) {
        if (e->kind != OV_SYMLINK)
            return -EINVAL;
        size_t n = e->len < size - 1 ? e->len : size - 1;
        memcpy(buf, e->data, n);
        buf[n] = '\0';
        return 0;
    }
    if (!S_ISLNK(st.st_mode))
        return -EINVAL;
    int fd = lower_open(fs, rel, O_PATH | O_NOFOLLOW);
    if (fd < 0)
        return -ENOENT;
    ssize_t n = readlinkat(fd, "", buf, size - 1);
    int saved = errno;
    close(fd);
    if (n < 0)
        return -saved;
    buf[n] = '\0';
    return 0;
}

static int fs_opendir(const char *path, struct fuse_file_info *fi)
{
    fb_mountfs *fs = self();
    const char *rel = rel_of(path);
    ov_entry *e;
    struct stat st;
    int rc = resolve(fs, rel, &e, &st);
    if (rc < 0)
        return rc;
    if (rc == 1 ? e->kind != OV_DIR : !S_ISDIR(st.st_mode))
        return -ENOTDIR;
    if (own_excluded(fs, rel, rc))
        return 0;
    return check(fs, rel, FB_OP_LIST) == DENY_NONE ? 0 : -EACCES;
}

static void child_rel(char *out, size_t cap, const char *dir, const char *name)
{
    snprintf(out, cap, "%s%s%s", dir, *dir ? "/" : "", name);
}

static int fs_readdir(const char *path, void *buf, fuse_fill_dir_t filler, off_t off, struct fuse_file_info *fi,
                      enum fuse_readdir_flags flags)
{
    fb_mountfs *fs = self();
    const char *rel = rel_of(path);
    char crel[PATH_MAX];
    filler(buf, ".", NULL, 0, 0);
    filler(buf, "..", NULL, 0, 0);
    if (!ov_hides_lower(&fs->ov, rel)) {
        int fd = lower_open(fs, rel, O_RDONLY | O_DIRECTORY);
        DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
        if (!d && fd >= 0)
            close(fd);
        for (struct dirent *de = d ? readdir(d) : NULL; de; de = readdir(d)) {
            if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
                continue;
            child_rel(crel, sizeof crel, rel, de->d_name);
            struct stat st;
            if (ov_find(&fs->ov, crel) || lower_visible(fs, crel, &st) < 0)
                continue; /* upper entries are listed below; invisible ones not at all */
            filler(buf, de->d_name, NULL, 0, 0);
        }
        if (d)
            closedir(d);
    }
    for (size_t i = ov_children_start(&fs->ov, rel); i < fs->ov.n; i++) {
        bool direct;
        const ov_entry *e = fs->ov.v[i];
        if (!ov_in_dir(e, rel, &direct))
            break;
        if (direct && e->kind != OV_WHITEOUT)
            filler(buf, strrchr(e->rel, '/') ? strrchr(e->rel, '/') + 1 : e->rel, NULL, 0, 0);
    }
    return 0;
}

/* ---- opening, with copy-up on the first write ---- */

static int read_lower_all(fb_mountfs *fs, const char *rel, ov_entry *e)
{
    int fd = lower_open(fs, rel, O_RDONLY);
    if (fd < 0)
        return -errno;
    int rc = 0;
    char chunk[65536];
    off_t off = 0;
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            rc = n < 0 ? -errno : 0;
            break;
        }
        rc = ov_write(&fs->ov, e, chunk, (size_t)n, off);
        if (rc < 0)
            break;
        off += n;
    }
    close(fd);
    return rc < 0 ? rc : 0;
}

/* The first time the view changes rel, the host entry there is what the change is based on: noted (as
 * sync will see it: the link itself, not its target), so that sync refuses to write over it if the host
 * changes it meanwhile. */
static void note_base(fb_mountfs *fs, const char *rel)
{
    if (ov_find(&fs->bases, rel))
        return;
    int fd = lower_open(fs, rel, O_PATH | O_NOFOLLOW);
    struct stat st;
    if (fd < 0)
        return;
    ov_entry *b = fstat(fd, &st) == 0 ? ov_put(&fs->bases, rel, OV_FILE, 0) : NULL;
    close(fd);
    if (b)
        b->base = fb_host_stamp_of(&st);
    else if (errno == ENOMEM)
        note_failure(fs, "noting a host entry", ENOMEM);
}

/* The upper entry for a host file about to change: a full copy of it, same mode. */
static int copy_up(fb_mountfs *fs, const char *rel, const struct stat *st, ov_entry **out)
{
    note_base(fs, rel);
    ov_entry *e = ov_put(&fs->ov, rel, OV_FILE, st->st_mode & 0777);
    if (!e)
        return -ENOMEM;
    int rc = read_lower_all(fs, rel, e);
    if (rc < 0) {
        ov_remove(&fs->ov, rel);
        return rc;
    }
    e->mtime = st->st_mtim;
    *out = e;
    return 0;
}

static int new_handle(ov_entry *e, int lower_fd, const char *rel, bool discard, struct fuse_file_info *fi)
{
    fb_mountfs *fs = self();
    handle *h = calloc(1, sizeof *h);
    if (!h || !(h->rel = strdup(rel))) {
        free(h);
        if (lower_fd >= 0)
            close(lower_fd);
        return -ENOMEM;
    }
    h->e = e;
    h->lower_fd = lower_fd;
    h->discard = discard;
    if (e)
        ov_hold(e);
    h->next = fs->handles;
    if (fs->handles)
        fs->handles->prev = h;
    fs->handles = h;
    fi->fh = (uint64_t)(uintptr_t)h;
    return 0;
}

/* What a handle holds, released; the list is the caller's concern. */
static void handle_release(fb_mountfs *fs, handle *h)
{
    if (h->e)
        ov_release(&fs->ov, h->e);
    if (h->lower_fd >= 0)
        close(h->lower_fd);
    free(h->rel);
    free(h);
}

static void handle_free(fb_mountfs *fs, handle *h)
{
    if (h->prev)
        h->prev->next = h->next;
    else
        fs->handles = h->next;
    if (h->next)
        h->next->prev = h->prev;
    handle_release(fs, h);
}

static int fs_open(const char *path, struct fuse_file_info *fi)
{
    fb_mountfs *fs = self();
    const char *rel = rel_of(path);
    ov_entry *e;
    struct stat st;
    int rc = resolve(fs, rel, &e, &st);
    if (rc < 0)
        return rc;
    if (rc == 1 ? e->kind == OV_DIR : S_ISDIR(st.st_mode))
        return -EISDIR;
    int acc = fi->flags & O_ACCMODE;
    bool wants_write = acc != O_RDONLY || (fi->flags & O_TRUNC);
    if (acc != O_WRONLY && !own_excluded(fs, rel, rc) && check(fs, rel, FB_OP_READ) != DENY_NONE)
        return -EACCES;
    if (!wants_write) {
        if (rc == 1)
            return new_handle(e, -1, rel, false, fi);
        int fd = lower_open(fs, rel, O_RDONLY);
        return fd < 0 ? -errno : new_handle(NULL, fd, rel, false, fi);
    }
    /* Rewriting a file this call created is part of creating it: the host only ever sees the result. */
    verdict v = check(fs, rel, rc == 1 && !host_has(fs, rel) ? FB_OP_CREATE : FB_OP_MODIFY);
    if (v == DENY_THROW)
        return -EACCES;
    if (v == DENY_IGNORE) /* the writes go nowhere; reads still see the file as it is */
        return new_handle(rc == 1 ? e : NULL, rc == 1 ? -1 : lower_open(fs, rel, O_RDONLY), rel, true, fi);
    if (rc == 0 && (rc = copy_up(fs, rel, &st, &e)) < 0)
        return rc;
    if (v == DENY_VIRTUAL)
        e->unreported = true;
    if ((fi->flags & O_TRUNC) && (rc = ov_truncate(&fs->ov, e, 0)) < 0)
        return rc;
    return new_handle(e, -1, rel, false, fi);
}

static int fs_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
    fb_mountfs *fs = self();
    const char *rel = rel_of(path);
    ov_entry *e;
    struct stat st;
    if (resolve(fs, rel, &e, &st) >= 0) { /* it appeared meanwhile: an ordinary open */
        if (fi->flags & O_EXCL)
            return -EEXIST;
        return fs_open(path, fi);
    }
    verdict v = check(fs, rel, FB_OP_CREATE);
    if (v == DENY_THROW)
        return -EACCES;
    e = ov_put(&fs->ov, rel, OV_FILE, mode & 0777);
    if (!e)
        return -ENOMEM;
    e->unreported = v != DENY_NONE;
    e->ghost = v == DENY_IGNORE; /* gone with its last handle: "the file is absent afterwards" */
    return new_handle(e, -1, rel, v == DENY_IGNORE, fi);
}

static int fs_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
    fb_mountfs *fs = self();
    handle *h = (handle *)(uintptr_t)fi->fh;
    ov_entry *e = h->e;
    if (!e) { /* opened from the host: follow a copy made since by another handle */
        e = ov_find(&fs->ov, h->rel);
        if (e && e->kind != OV_FILE)
            e = NULL;
    }
    if (e) {
        if (off < 0 || (size_t)off >= e->len)
            return 0;
        size_t n = e->len - (size_t)off < size ? e->len - (size_t)off : size;
        memcpy(buf, e->data + off, n);
        return (int)n;
    }
    if (h->lower_fd < 0)
        return 0;
    ssize_t n = pread(h->lower_fd, buf, size, off);
    return n < 0 ? -errno : (int)n;
}

static int fs_write(const char *path, const char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
    fb_mountfs *fs = self();
    handle *h = (handle *)(uintptr_t)fi->fh;
    if (h->discard || !h->e)
        return (int)size;
    return ov_write(&fs->ov, h->e, buf, size, off);
}

static int fs_release(const char *path, struct fuse_file_info *fi)
{
    fb_mountfs *fs = self();
    handle_free(fs, (handle *)(uintptr_t)fi->fh);
    return 0;
}

static int fs_flush(const char *path, struct fuse_file_info *fi)
{
    return 0;
}

static int fs_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
    return 0;
}

/* ---- changing the tree ---- */

/* The upper entry of rel for an in-place change (truncate, chmod): copied up if needed.
 * 1 = go on with *e, 0 = pretend it worked (ignore), <0 = error. */
static int entry_for_change(fb_mountfs *fs, const char *rel, ov_entry **e)
{
    struct stat st;
    int rc = resolve(fs, rel, e, &st);
    if (rc < 0)
        return rc;
    verdict v = check(fs, rel, rc == 1 && !host_has(fs, rel) ? FB_OP_CREATE : FB_OP_MODIFY);
    if (v == DENY_THROW)
        return -EACCES;
    if (v == DENY_IGNORE)
        return 0;
    if (rc == 0 && S_ISDIR(st.st_mode)) {
        note_base(fs, rel);
        *e = ov_put(&fs->ov, rel, OV_DIR, st.st_mode & 0777);
        if (!*e)
            return -ENOMEM;
    } else if (rc == 0 && (rc = copy_up(fs, rel, &st, e)) < 0) {
        return rc;
    }
    if (v == DENY_VIRTUAL)
        (*e)->unreported = true;
    return 1;
}

static int fs_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
    fb_mountfs *fs = self();
    handle *h = fi ? (handle *)(uintptr_t)fi->fh : NULL;
    if (h && (h->discard || !h->e))
        return 0;
    if (h)
        return ov_truncate(&fs->ov, h->e, size);
    ov_entry *e;
    int rc = entry_for_change(fs, rel_of(path), &e);
    if (rc <= 0)
        return rc;
    return e->kind == OV_FILE ? ov_truncate(&fs->ov, e, size) : -EISDIR;
}

static int fs_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
    fb_mountfs *fs = self();
    ov_entry *e;
    int rc = entry_for_change(fs, rel_of(path), &e);
    if (rc <= 0)
        return rc;
    e->mode = mode & 0777; /* never setuid, setgid or sticky */
    return 0;
}

static int fs_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi)
{
    return -EPERM; /* one user in the sandbox; host ownership is never the function's to change */
}

static int fs_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi)
{
    fb_mountfs *fs = self();
    const char *rel = rel_of(path);
    ov_entry *e;
    struct stat st;
    int rc = resolve(fs, rel, &e, &st);
    if (rc < 0)
        return rc;
    if (check(fs, rel, FB_OP_MODIFY) == DENY_THROW)
        return -EACCES;
    /* Times alone are not a change worth syncing: only an upper entry keeps them. */
    if (rc == 1 && tv[1].tv_nsec != UTIME_OMIT)
        clock_gettime(CLOCK_REALTIME, &e->mtime);
    return 0;
}

static int fs_mkdir(const char *path, mode_t mode)
{
    fb_mountfs *fs = self();
    const char *rel = rel_of(path);
    ov_entry *e;
    struct stat st;
    if (resolve(fs, rel, &e, &st) >= 0)
        return -EEXIST;
    verdict v = check(fs, rel, FB_OP_CREATE);
    if (v == DENY_THROW)
        return -EACCES;
    ov_entry *old = ov_find(&fs->ov, rel);
    bool was_deleted = old && old->kind == OV_WHITEOUT;
    e = ov_put(&fs->ov, rel, OV_DIR, mode & 0777);
    if (!e)
        return -ENOMEM;
    e->opaque = was_deleted; /* the host directory's old entries stay deleted */
    /* A directory cannot be a ghost (the kernel looks it up right after mkdir): under "ignore" it
     * behaves as under "virtual": it exists in the sandbox, is never reported or synced. */
    e->unreported = v != DENY_NONE;
    return 0;
}

/* Removes rel from the merged view: the upper entry goes, a host entry is covered by a whiteout. */
static int remove_entry(fb_mountfs *fs, const char *rel, bool unreported)
{
    ov_entry *e = ov_find(&fs->ov, rel);
    bool on_host = host_has(fs, rel) && (!e || !e->opaque);
    if (e && e->kind == OV_DIR && e->opaque)
        on_host = true; /* keep covering the host directory deleted before */
    ov_remove(&fs->ov, rel);
    if (!on_host)
        return 0;
    note_base(fs, rel);
    ov_entry *w = ov_put(&fs->ov, rel, OV_WHITEOUT, 0);
    if (!w)
        return -ENOMEM;
    w->unreported = unreported;
    return 0;
}

static int fs_unlink(const char *path)
{
    fb_mountfs *fs = self();
    const char *rel = rel_of(path);
    ov_entry *e;
    struct stat st;
    int rc = resolve(fs, rel, &e, &st);
    if (rc < 0)
        return rc;
    if (rc == 1 ? e->kind == OV_DIR : S_ISDIR(st.st_mode))
        return -EISDIR;
    /* Removing what this call created touches nothing on the host: no delete permission needed. */
    verdict v = host_has(fs, rel) ? check(fs, rel, FB_OP_DELETE) : DENY_NONE;
    if (v == DENY_THROW)
        return -EACCES;
    if (v == DENY_IGNORE)
        return 0;
    return remove_entry(fs, rel, v == DENY_VIRTUAL);
}

static bool dir_is_empty(fb_mountfs *fs, const char *rel)
{
    for (size_t i = ov_children_start(&fs->ov, rel); i < fs->ov.n; i++) {
        bool direct;
        const ov_entry *e = fs->ov.v[i];
        if (!ov_in_dir(e, rel, &direct))
            break;
        if (direct && e->kind != OV_WHITEOUT)
            return false;
    }
    if (ov_hides_lower(&fs->ov, rel))
        return true;
    int fd = lower_open(fs, rel, O_RDONLY | O_DIRECTORY);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return true;
    }
    bool empty = true;
    char crel[PATH_MAX];
    for (struct dirent *de = readdir(d); de && empty; de = readdir(d)) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        child_rel(crel, sizeof crel, rel, de->d_name);
        struct stat st;
        if (!ov_find(&fs->ov, crel) && lower_visible(fs, crel, &st) == 0)
            empty = false;
    }
    closedir(d);
    return empty;
}

static int fs_rmdir(const char *path)
{
    fb_mountfs *fs = self();
    const char *rel = rel_of(path);
    ov_entry *e;
    struct stat st;
    int rc = resolve(fs, rel, &e, &st);
    if (rc < 0)
        return rc;
    if (rc == 1 ? e->kind != OV_DIR : !S_ISDIR(st.st_mode))
        return -ENOTDIR;
    if (!*rel)
        return -EBUSY;
    if (!dir_is_empty(fs, rel))
        return -ENOTEMPTY;
    verdict v = host_has(fs, rel) ? check(fs, rel, FB_OP_DELETE) : DENY_NONE;
    if (v == DENY_THROW)
        return -EACCES;
    if (v == DENY_IGNORE)
        return 0;
    return remove_entry(fs, rel, v == DENY_VIRTUAL);
}

static int fs_symlink(const char *target, const char *path)
{
    fb_mountfs *fs = self();
    const char *rel = rel_of(path);
    ov_entry *e;
    struct stat st;
    if (resolve(fs, rel, &e, &st) >= 0)
        return -EEXIST;
    if (fs->cfg->symlinks == FB_SYMLINKS_NO)
        return -EPERM; /* security.followSymlinks false: no links in mounts, neither read nor made */
    verdict v = check(fs, rel, FB_OP_CREATE);
    if (v == DENY_THROW)
        return -EACCES;
    if (v == DENY_IGNORE)
        return 0;
    e = ov_put(&fs->ov, rel, OV_SYMLINK, 0777);
    if (!e)
        return -ENOMEM;
    e->unreported = v == DENY_VIRTUAL;
    return ov_set_data(&fs->ov, e, target, strlen(target));
}

static int fs_link(const char *from, const char *to)
{
    return -EPERM; /* hard links would let one name's permissions leak to another */
}

static int fs_rename(const char *from, const char *to, unsigned int flags)
{
    fb_mountfs *fs = self();
    const char *rfrom = rel_of(from), *rto = rel_of(to);
    ov_entry *e, *te;
    struct stat st, tst;
    int rc = resolve(fs, rfrom, &e, &st);
    if (rc < 0)
        return rc;
    if (flags & RENAME_EXCHANGE)
        return -EINVAL;
    int trc = resolve(fs, rto, &te, &tst);
    if (trc >= 0 && (flags & RENAME_NOREPLACE))
        return -EEXIST;
    /* Directories are not moved (their host contents would have to move too): EXDEV makes mv and
     * shutil.move copy and delete instead, each step checked on its own. */
    if ((rc == 1 ? e->kind == OV_DIR : S_ISDIR(st.st_mode)) || (trc >= 0 && (trc == 1 ? te->kind == OV_DIR
                                                                                       : S_ISDIR(tst.st_mode))))
        return -EXDEV;
    verdict vd = host_has(fs, rfrom) ? check(fs, rfrom, FB_OP_DELETE) : DENY_NONE;
    if (vd == DENY_THROW)
        return -EACCES;
    verdict vc = check(fs, rto, trc >= 0 && host_has(fs, rto) ? FB_OP_MODIFY : FB_OP_CREATE);
    if (vc == DENY_THROW)
        return -EACCES;
    if (vd == DENY_IGNORE || vc == DENY_IGNORE)
        return 0;
    if (rc == 0 && (rc = copy_up(fs, rfrom, &st, &e)) < 0)
        return rc;
    bool host_source = host_has(fs, rfrom);
    if (trc >= 0 && host_has(fs, rto))
        note_base(fs, rto);
    if (host_source)
        note_base(fs, rfrom);
    if ((rc = ov_rename(&fs->ov, rfrom, rto)) < 0)
        return rc;
    e = ov_find(&fs->ov, rto);
    if (e && vc == DENY_VIRTUAL)
        e->unreported = true;
    if (host_source) {
        ov_entry *w = ov_put(&fs->ov, rfrom, OV_WHITEOUT, 0);
        if (!w)
            return -ENOMEM;
        w->unreported = vd == DENY_VIRTUAL;
    }
    return 0;
}

static int fs_statfs(const char *path, struct statvfs *sv)
{
    fb_mountfs *fs = self();
    memset(sv, 0, sizeof *sv);
    sv->f_bsize = sv->f_frsize = 4096;
    uint64_t cap = fs->ov.max_bytes ? fs->ov.max_bytes : (uint64_t)1 << 40;
    sv->f_blocks = cap / 4096;
    sv->f_bfree = sv->f_bavail = (cap - (fs->ov.bytes < cap ? fs->ov.bytes : cap)) / 4096;
    sv->f_files = sv->f_ffree = sv->f_favail = 1000000;
    sv->f_namemax = 255;
    return 0;
}

static void *fs_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
    cfg->hard_remove = 1;      /* no .fuse_hidden files for unlinked open files */
    cfg->use_ino = 0;
    cfg->entry_timeout = 1.0;  /* every change goes through us, so the kernel's caches stay right */
    cfg->attr_timeout = 1.0;
    cfg->negative_timeout = 0; /* but a file may appear (create under "ignore" ends): do not cache absence */
    return fuse_get_context()->private_data;
}

static const struct fuse_operations k_ops = {
    .init = fs_init, .getattr = fs_getattr, .access = fs_access, .readlink = fs_readlink,
    .opendir = fs_opendir, .readdir = fs_readdir, .open = fs_open, .create = fs_create, .read = fs_read,
    .write = fs_write, .release = fs_release, .flush = fs_flush, .fsync = fs_fsync,
    .truncate = fs_truncate, .chmod = fs_chmod, .chown = fs_chown, .utimens = fs_utimens,
    .mkdir = fs_mkdir, .unlink = fs_unlink, .rmdir = fs_rmdir, .symlink = fs_symlink, .link = fs_link,
    .rename = fs_rename, .statfs = fs_statfs,
};

/* ---- life cycle ---- */

static int eager_walk(fb_mountfs *fs, const char *rel, size_t *budget)
{
    int fd = lower_open(fs, rel, O_RDONLY | O_DIRECTORY);
    if (fd < 0)
        return 0;
    struct dirent **names = NULL;
    /* scandirat sorts, so that which files the size limits leave out does not depend on disk order */
    int n = scandirat(fd, ".", &names, NULL, alphasort);
    close(fd);
    if (n < 0)
        return 0;
    char crel[PATH_MAX];
    for (int i = 0; i < n; i++) {
        const char *name = names[i]->d_name;
        if (strcmp(name, ".") != 0 && strcmp(name, "..") != 0 && *budget > 0) {
            (*budget)--;
            child_rel(crel, sizeof crel, rel, name);
            struct stat st;
            if (lower_visible(fs, crel, &st) == 0 && S_ISDIR(st.st_mode) &&
                fb_rules_allows(fs->cfg->rules, fs->dir->virtual_path, crel, FB_OP_LIST, NULL))
                eager_walk(fs, crel, budget);
        }
        free(names[i]);
    }
    free(names);
    return 0;
}

int fb_mountfs_open(const fb_mount_config *cfg, const fb_mount_dir *dir, uint64_t max_upper_bytes,
                    fb_mountfs **out, fb_error *err)
{
    fb_mountfs *fs = calloc(1, sizeof *fs);
    if (!fs)
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "mount %s", dir->virtual_path);
    pthread_mutex_init(&fs->serving, NULL);
    fs->cfg = cfg;
    fs->dir = dir;
    fs->fuse_fd = fs->stop_fd = fs->root_fd = -1;
    fs->ov.max_bytes = max_upper_bytes;
    fs->root_fd = open(dir->host_path, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fs->root_fd < 0) {
        fb_set_error(err, FB_ERR_INVALID_REQUEST, errno, "mount.dirs[\"%s\"]: cannot open host directory %s",
                     dir->virtual_path, dir->host_path);
        goto fail;
    }
    char root[PATH_MAX]; /* no /proc: root_path stays empty and restricted mounts with excludes hide all */
    if (fd_path(fs->root_fd, root, sizeof root) == 0)
        memcpy(fs->root_path, root, strlen(root) + 1);
    fs->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (fs->stop_fd < 0) {
        fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "mount %s: eventfd", dir->virtual_path);
        goto fail;
    }
    if (cfg->load == FB_LOAD_EAGER && (cfg->max_file_size || cfg->max_total_size)) {
        size_t budget = MAX_EAGER_ENTRIES;
        eager_walk(fs, "", &budget);
    }
    *out = fs;
    return 0;
fail:
    fb_mountfs_free(fs);
    return -1;
}

void fb_mountfs_set_check(fb_mountfs *fs, fb_fs_check fn, void *ctx)
{
    fs->check = fn;
    fs->check_ctx = ctx;
}

int fb_mountfs_add_file(fb_mountfs *fs, const char *rel, const void *data, size_t len, fb_error *err)
{
    ov_entry *e = ov_put(&fs->ov, rel, OV_FILE, 0644);
    if (!e || ov_set_data(&fs->ov, e, data, len) < 0)
        return fb_set_error(err, FB_ERR_INVALID_REQUEST, ENOSPC, "files: %s/%s does not fit in the mount's limit",
                            fs->dir->virtual_path, rel);
    e->baseline = true;
    if (len && !(e->baseline_data = malloc(len)))
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "files: %s/%s", fs->dir->virtual_path, rel);
    if (len)
        memcpy(e->baseline_data, data, len);
    e->baseline_len = len;
    /* its parent directories exist in the view too */
    char buf[PATH_MAX];
    snprintf(buf, sizeof buf, "%s", rel);
    for (char *slash = strrchr(buf, '/'); slash; slash = strrchr(buf, '/')) {
        *slash = '\0';
        struct stat st;
        if (ov_find(&fs->ov, buf) || (!excluded(fs, buf) && lower_lstat(fs, buf, &st) == 0))
            break;
        ov_entry *d = ov_put(&fs->ov, buf, OV_DIR, 0755);
        if (!d)
            return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "files: %s/%s", fs->dir->virtual_path, buf);
        d->baseline = true;
    }
    return 0;
}

static void *serve_loop(void *arg)
{
    fb_mountfs *fs = arg;
    struct fuse_session *se = fuse_get_session(fs->fuse);
    struct fuse_buf buf = {.mem = NULL};
    struct pollfd p[2] = {{.fd = fuse_session_fd(se), .events = POLLIN}, {.fd = fs->stop_fd, .events = POLLIN}};
    while (!fuse_session_exited(se)) {
        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            note_failure(fs, "poll", errno);
            break;
        }
        if (p[1].revents)
            break;
        int n = fuse_session_receive_buf(se, &buf);
        if (n == -EINTR || n == -EAGAIN)
            continue;
        if (n <= 0) /* -ENODEV: the sandbox is gone and its mount with it */
            break;
        pthread_mutex_lock(&fs->serving);
        fuse_session_process_buf(se, &buf);
        pthread_mutex_unlock(&fs->serving);
    }
    free(buf.mem);
    return NULL;
}

int fb_mountfs_serve(fb_mountfs *fs, int fuse_fd, fb_error *err)
{
    char *argv[] = {"fnbox-mount", NULL};
    struct fuse_args args = FUSE_ARGS_INIT(1, argv);
    char mnt[32];
    fs->fuse_fd = fuse_fd;
    fs->fuse = fuse_new(&args, &k_ops, sizeof k_ops, fs);
    fuse_opt_free_args(&args); /* fuse_new may have made its own copy of argv */
    if (!fs->fuse)
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, 0, "mount %s: fuse_new failed", fs->dir->virtual_path);
    /* "/dev/fd/N" tells libfuse the connection is already mounted (by the sandbox, in its namespace) */
    snprintf(mnt, sizeof mnt, "/dev/fd/%d", fuse_fd);
    if (fuse_mount(fs->fuse, mnt) != 0)
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, 0, "mount %s: fuse_mount(%s) failed",
                            fs->dir->virtual_path, mnt);
    fs->fuse_fd = -1; /* the session owns it now */
    int rc = pthread_create(&fs->thread, NULL, serve_loop, fs);
    if (rc != 0)
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, rc, "mount %s: starting the server thread",
                            fs->dir->virtual_path);
    fs->running = true;
    return 0;
}

void fb_mountfs_pause(fb_mountfs *fs)
{
    pthread_mutex_lock(&fs->serving);
}

void fb_mountfs_resume(fb_mountfs *fs)
{
    pthread_mutex_unlock(&fs->serving);
}

void fb_mountfs_stop(fb_mountfs *fs)
{
    if (!fs || !fs->running)
        return;
    uint64_t one = 1;
    if (write(fs->stop_fd, &one, sizeof one) < 0)
        note_failure(fs, "stopping the server", errno);
    pthread_join(fs->thread, NULL);
    fs->running = false;
}

/* ---- the view as change tracking reads it (fs/track.c) ---- */

const char *fb_mountfs_vroot(const fb_mountfs *fs)
{
    return fs->dir->virtual_path;
}

const ov_store *fb_mountfs_upper(const fb_mountfs *fs)
{
    return &fs->ov;
}

int fb_mountfs_host_stat(const fb_mountfs *fs, const char *rel, struct stat *st)
{
    return lower_lstat(fs, rel, st);
}

int fb_mountfs_host_open(const fb_mountfs *fs, const char *rel, int flags)
{
    return lower_open(fs, rel, flags);
}

bool fb_mountfs_base(const fb_mountfs *fs, const char *rel, fb_host_stamp *out)
{
    const ov_entry *b = ov_find(&fs->bases, rel);
    *out = b ? b->base : (fb_host_stamp){0};
    return b != NULL;
}

void fb_mountfs_rebase(fb_mountfs *fs, const char *rel)
{
    ov_remove(&fs->bases, rel);
    note_base(fs, rel);
}

bool fb_mountfs_excluded(const fb_mountfs *fs, const char *rel)
{
    return excluded(fs, rel);
}

const fb_denial_list *fb_mountfs_denials(const fb_mountfs *fs)
{
    return &fs->denials;
}

size_t fb_mountfs_denials_dropped(const fb_mountfs *fs)
{
    return fs->denials_dropped;
}

void fb_mountfs_take_denials(fb_mountfs *fs, fb_denial_list *out, size_t *dropped)
{
    *out = fs->denials;
    *dropped = fs->denials_dropped;
    fs->denials = (fb_denial_list){0};
    fs->denials_dropped = 0;
}

const fb_skipped *fb_mountfs_skipped(const fb_mountfs *fs, size_t *n)
{
    *n = fs->nskipped;
    return fs->skipped;
}

const char *fb_mountfs_failure(const fb_mountfs *fs)
{
    return fs->failure[0] ? fs->failure : NULL;
}

void fb_mountfs_free(fb_mountfs *fs)
{
    if (!fs)
        return;
    fb_mountfs_stop(fs);
    if (fs->fuse) {
        fuse_unmount(fs->fuse); /* with a "/dev/fd/N" mount point this only closes the connection */
        fuse_destroy(fs->fuse);
    }
    if (fs->fuse_fd >= 0)
        close(fs->fuse_fd);
    if (fs->stop_fd >= 0)
        close(fs->stop_fd);
    if (fs->root_fd >= 0)
        close(fs->root_fd);
    for (handle *h = fs->handles, *next; h; h = next) { /* files still open when the processes were killed */
        next = h->next;
        handle_release(fs, h);
    }
    fs->handles = NULL;
    ov_store_free(&fs->ov);
    ov_store_free(&fs->decided);
    ov_store_free(&fs->bases);
    fb_denial_list_free(&fs->denials);
    pthread_mutex_destroy(&fs->serving);
    for (size_t i = 0; i < fs->nskipped; i++)
        free(fs->skipped[i].path);
    free(fs->skipped);
    free(fs);
}
