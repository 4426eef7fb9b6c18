/* Applying a change list to the host (see sync.h and docs/internals/sync.md).
 *
 * Under onError "rollback" every step that destroys something first keeps a backup in the same
 * directory: a replaced file is hard-linked to a hidden backup name before the rename over it (so the
 * target never disappears, even for a moment), a deleted file or directory is renamed to one. An undo log
 * records each step; on the first failure it is replayed backwards (backups renamed back, created files
 * and directories removed), otherwise the backups are removed at the end ("commit"). Under "continue" and
 * "abort" nothing needs undoing, so nothing is backed up. */
#include "fs/sync.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs/resolve.h"
#include "fs/rules.h"
#include "util/defences.h"
#include "util/fd.h"

#define TMP_PREFIX ".fnbox-sync-tmp."
#define BAK_PREFIX ".fnbox-sync-bak."
#define MAX_NAME_TRIES 16

typedef enum { U_UNLINK, U_RMDIR, U_RESTORE } undo_kind;

typedef struct undo {
    undo_kind kind;
    size_t mount;      /* index into m->dirs */
    size_t item;       /* report item that made this step */
    char *rel;         /* the target, relative to the mount root */
    char *backup;      /* U_RESTORE: where the original went (same directory as rel), valid while undoing */
    char *commit_at;   /* U_RESTORE: where that backup is once every step ran (an ancestor directory that
                          was deleted moved it along), for the commit */
    bool dir;          /* U_RESTORE: the backup is a directory */
    bool replaced;     /* U_RESTORE: rel holds new content now (restore over it), else rel is absent */
} undo;

typedef struct ctx {
    const fb_mount_config *m;
    fb_sync_report *rep;
    fb_sync_on_error on_error;
    int *root_fds;     /* per mount, opened on first use; -1 until then */
    undo *log;
    size_t nlog, caplog;
} ctx;

/* ---- small helpers ---- */

static char *xstrdup_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xstrdup_printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    return s;
}

static int item_fail(fb_sync_item *it, const fb_error *e)
{
    free(it->error);
    it->error = strdup(e->message[0] ? e->message : "failed");
    it->state = FB_SYNC_ITEM_FAILED;
    return -1;
}

static int item_failf(fb_sync_item *it, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int item_failf(fb_sync_item *it, const char *fmt, ...)
{
    fb_error e = {0};
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e.message, sizeof e.message, fmt, ap);
    va_end(ap);
    return item_fail(it, &e);
}

static int item_fail_errno(fb_sync_item *it, const char *rel, const char *what, int e)
{
    return item_failf(it, "host path %s: %s: %s", rel, what, strerror(e));
}

static int item_skip(fb_sync_item *it, const char *rule, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int item_skip(fb_sync_item *it, const char *rule, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    free(it->reason);
    it->reason = s;
    if (rule) {
        free(it->rule);
        it->rule = strdup(rule);
    }
    it->state = FB_SYNC_ITEM_SKIPPED;
    return 0;
}

/* A fresh hidden name in dirfd; the caller creates it with O_EXCL / RENAME_NOREPLACE and retries on EEXIST. */
static void fresh_name(char *buf, size_t size, const char *prefix)
{
    static unsigned long counter;
    unsigned char rnd[8];
    if (getrandom(rnd, sizeof rnd, GRND_NONBLOCK) != (ssize_t)sizeof rnd) {
        unsigned long c = __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED) ^ (unsigned long)getpid() << 20;
        memcpy(rnd, &c, sizeof rnd < sizeof c ? sizeof rnd : sizeof c);
    }
    snprintf(buf, size, "%s%02x%02x%02x%02x%02x%02x%02x%02x", prefix, rnd[0], rnd[1], rnd[2], rnd[3], rnd[4],
             rnd[5], rnd[6], rnd[7]);
}

static int log_add(ctx *c, undo u)
{
    if (c->nlog == c->caplog) {
        size_t ncap = c->caplog ? c->caplog * 2 : 32;
        undo *nv = reallocarray(c->log, ncap, sizeof *nv);
        if (!nv) {
            free(u.rel);
            free(u.backup);
            free(u.commit_at);
            return -1;
        }
        c->log = nv;
        c->caplog = ncap;
    }
    c->log[c->nlog++] = u;
    return 0;
}

/* "a/b" + "name" -> "a/b/name"; "" + "name" -> "name". */
static char *join(const char *dir, size_t dlen, const char *name)
{
    return dlen ? xstrdup_printf("%.*s/%s", (int)dlen, dir, name) : strdup(name);
}

static size_t dir_len(const char *rel, const char *base)
{
    return base > rel ? (size_t)(base - rel) - 1 : 0;
}

static int root_fd(ctx *c, size_t mi, fb_error *err)
{
    if (c->root_fds[mi] < 0)
        c->root_fds[mi] = fb_resolve_open_root(c->m->dirs[mi].host_path, err);
    return c->root_fds[mi];
}

/* ---- writing one change ---- */

/* Records the directories fb_resolve_mkdirs created (components of dir from offset from on), so a
 * rollback removes them (deepest first, as the log is replayed backwards). */
static int log_created_dirs(ctx *c, size_t mi, size_t item, const char *dir, size_t from)
{
    size_t len = strlen(dir);
    for (size_t i = from; i < len; i++) {
        if (dir[i + 1] != '/' && dir[i + 1] != '\0')
            continue;
        char *p = strndup(dir, i + 1);
        if (!p || log_add(c, (undo){.kind = U_RMDIR, .mount = mi, .item = item, .rel = p}) < 0)
            return -1;
    }
    return 0;
}

/* Opens the parent directory of rel, creating it (and its missing ancestors) when absent. */
static int open_or_make_parent(ctx *c, size_t mi, size_t item, int rfd, const char *rel, const char *base,
                               fb_error *err)
{
    size_t dlen = dir_len(rel, base);
    char *dir = strndup(rel, dlen);
    if (!dir)
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "host path %s", rel);
    size_t from = 0;
    int fd = fb_resolve_mkdirs(rfd, dir, 0755, &from, err);
    if (fd >= 0 && c->on_error == FB_ON_ERROR_ROLLBACK && log_created_dirs(c, mi, item, dir, from) < 0) {
        close(fd);
        fd = fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "host path %s", rel);
    }
    free(dir);
    return fd;
}

/* Writes a temporary holding the new regular content (or a symlink to target) next to the target. */
static int make_temp(int pfd, const fb_change *ch, mode_t mode, char *tmp, size_t tmpsize, const char *rel,
                     fb_sync_item *it)
{
    for (int tries = 0; tries < MAX_NAME_TRIES; tries++) {
        fresh_name(tmp, tmpsize, TMP_PREFIX);
        if (ch->type == FB_FILE_SYMLINK) {
            char *target = strndup((const char *)ch->content, ch->content_len);
            if (!target)
                return item_failf(it, "host path %s: out of memory", rel);
            int rc = symlinkat(target, pfd, tmp);
            int e = errno;
            free(target);
            if (rc == 0)
                return 0;
            if (e != EEXIST)
                return item_fail_errno(it, rel, "creating the symlink", e);
            continue;
        }
        int fd = openat(pfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0) {
            if (errno == EEXIST)
                continue;
            return item_fail_errno(it, rel, "creating a temporary file in its directory", errno);
        }
        /* fchmod after creation: the umask must not change the mode the function gave the file. */
        if (fb_write_all(fd, ch->content, ch->content_len) < 0 || fchmod(fd, mode) < 0 || fsync(fd) < 0) {
            int e = errno;
            close(fd);
            unlinkat(pfd, tmp, 0);
            return item_fail_errno(it, rel, "writing the new content", e);
        }
        if (close(fd) < 0) {
            int e = errno;
            unlinkat(pfd, tmp, 0);
            return item_fail_errno(it, rel, "writing the new content", e);
        }
        return 0;
    }
    return item_failf(it, "host path %s: no free temporary name after %d tries", rel, MAX_NAME_TRIES);
}

/* Moves (rename, NOREPLACE) or links name to a fresh backup name in pfd; *bak gets the name. */
static int make_backup(int pfd, const char *name, bool by_link, char *bak, size_t baksize)
{
    for (int tries = 0; tries < MAX_NAME_TRIES; tries++) {
        fresh_name(bak, baksize, BAK_PREFIX);
        int rc = by_link ? linkat(pfd, name, pfd, bak, 0) : renameat2(pfd, name, pfd, bak, RENAME_NOREPLACE);
        if (rc == 0 || errno != EEXIST)
            return rc;
    }
    errno = EEXIST;
    return -1;
}

/* Restricted symlinks: the target, read relative to the link's directory, must stay inside the mount.
 * An absolute target naming a path inside the mount is rewritten relative (the host has no /data). */
static char *restricted_target(const fb_mount_dir *d, const char *rel, const char *base, const fb_change *ch)
{
    size_t tlen = ch->content_len;
    const char *t = (const char *)ch->content;
    if (tlen == 0 || memchr(t, '\0', tlen))
        return NULL;
    if (fb_defence_disabled("beneath")) /* test builds: the link is written as the function made it */
        return strndup(t, tlen);
    size_t depth = 0; /* directories between the mount root and the link */
    for (const char *p = rel; p < base; p++)
        depth += *p == '/';
    char *target = strndup(t, tlen);
    if (!target)
        return NULL;
    if (target[0] == '/') {
        const char *vr = d->virtual_path;
        size_t n = strlen(vr);
        if (strncmp(target, vr, n) != 0 || (target[n] != '/' && target[n] != '\0')) {
            free(target);
            return NULL;
        }
        const char *inside = target[n] ? target + n + 1 : "";
        size_t need = depth * 3 + strlen(inside) + 2, off = 0;
        char *r = malloc(need);
        if (r) {
            for (size_t i = 0; i < depth; i++)
                off += (size_t)snprintf(r + off, need - off, "../");
            snprintf(r + off, need - off, "%s", *inside ? inside : ".");
        }
        free(target);
        if (!r)
            return NULL;
        target = r;
    }
    /* Walk the target lexically from the link's directory: ".." below the root leaves the mount. */
    long level = (long)depth;
    for (char *p = target; *p;) {
        char *slash = strchr(p, '/');
        size_t n = slash ? (size_t)(slash - p) : strlen(p);
        if (n == 2 && p[0] == '.' && p[1] == '.')
            level--;
        else if (n > 0 && !(n == 1 && p[0] == '.'))
            level++;
        if (level < 0) {
            free(target);
            return NULL;
        }
        if (!slash)
            break;
        p = slash + 1;
    }
    return target;
}

/* Regular file or symlink, created or modified. exists/st: the host's current entry (lstat). */
static int write_entry(ctx *c, size_t mi, size_t idx, int rfd, int *pfd, const char *rel, const char *base,
                       bool exists, const struct stat *st, const fb_change *ch, const char *link_target)
{
    fb_sync_item *it = &c->rep->items[idx];
    fb_error e = {0};
    if (exists && S_ISDIR(st->st_mode))
        return item_failf(it, "host path %s: is a directory on the host; not replaced by a %s", rel,
                          fb_file_type_name(ch->type));
    if (ch->kind == FB_CHANGE_CREATED && exists)
        return item_failf(it, "host path %s: already exists on the host (it appeared after the call started); "
                              "a created file never overwrites one", rel);
    if (*pfd < 0 && (*pfd = open_or_make_parent(c, mi, idx, rfd, rel, base, &e)) < 0)
        return item_fail(it, &e);
    mode_t mode = ch->mode & 0777; /* never setuid/setgid/sticky */
    if (ch->mode == 0)
        mode = exists && S_ISREG(st->st_mode) ? st->st_mode & 0777 : 0644;
    fb_change tmpch = *ch;
    if (link_target) {
        tmpch.content = (unsigned char *)(uintptr_t)link_target;
        tmpch.content_len = strlen(link_target);
    }
    char tmp[64], bak[64];
    if (make_temp(*pfd, &tmpch, mode, tmp, sizeof tmp, rel, it) < 0)
        return -1;
    bool backed_up = false, moved = false;
    if (exists && c->on_error == FB_ON_ERROR_ROLLBACK) {
        /* A hard link keeps the original reachable while the target is replaced atomically; where links
         * are not possible (some filesystems), the original is renamed away and the target is briefly absent. */
        if (make_backup(*pfd, base, true, bak, sizeof bak) == 0) {
            backed_up = true;
        } else if (make_backup(*pfd, base, false, bak, sizeof bak) == 0) {
            backed_up = moved = true;
        } else {
            int er = errno;
            unlinkat(*pfd, tmp, 0);
            return item_fail_errno(it, rel, "keeping a backup of the original", er);
        }
    }
    /* Absent target: RENAME_NOREPLACE, so a file that appeared meanwhile is a conflict, not overwritten. */
    int rc = (exists && !moved) ? renameat(*pfd, tmp, *pfd, base) : renameat2(*pfd, tmp, *pfd, base, RENAME_NOREPLACE);
    if (rc < 0) {
        int er = errno;
        unlinkat(*pfd, tmp, 0);
        if (backed_up)
            (void)(moved ? renameat2(*pfd, bak, *pfd, base, RENAME_NOREPLACE) : unlinkat(*pfd, bak, 0));
        if (er == EEXIST)
            return item_failf(it, "host path %s: appeared on the host during the sync; not overwritten", rel);
        return item_fail_errno(it, rel, "renaming the new content into place", er);
    }
    fsync(*pfd);
    if (c->on_error != FB_ON_ERROR_ROLLBACK)
        return 0;
    undo u = {.kind = backed_up ? U_RESTORE : U_UNLINK, .mount = mi, .item = idx, .rel = strdup(rel), .replaced = true};
    if (backed_up) {
        u.backup = join(rel, dir_len(rel, base), bak);
        u.commit_at = u.backup ? strdup(u.backup) : NULL;
    }
    bool oom = !u.rel || (backed_up && (!u.backup || !u.commit_at));
    if (oom) {
        free(u.rel);
        free(u.backup);
        free(u.commit_at);
    }
    if (oom || log_add(c, u) < 0) { /* log_add frees u on failure */
        (void)(backed_up ? renameat(*pfd, bak, *pfd, base) : unlinkat(*pfd, base, 0));
        return item_failf(it, "host path %s: out of memory recording the undo step", rel);
    }
    return 0;
}

static int make_dir(ctx *c, size_t mi, size_t idx, int rfd, int *pfd, const char *rel, const char *base, bool exists,
                    const struct stat *st, const fb_change *ch)
{
    fb_sync_item *it = &c->rep->items[idx];
    fb_error e = {0};
    if (exists) {
        if (S_ISDIR(st->st_mode))
            return 0; /* already there; directory modes are not synced */
        return item_failf(it, "host path %s: exists on the host and is not a directory", rel);
    }
    if (*pfd < 0 && (*pfd = open_or_make_parent(c, mi, idx, rfd, rel, base, &e)) < 0)
        return item_fail(it, &e);
    mode_t mode = ch->mode ? ch->mode & 0777 : 0755;
    if (mkdirat(*pfd, base, 0700) < 0)
        return item_fail_errno(it, rel, errno == EEXIST ? "appeared on the host during the sync" : "mkdir", errno);
    if (c->on_error == FB_ON_ERROR_ROLLBACK) {
        char *r = strdup(rel);
        if (!r || log_add(c, (undo){.kind = U_RMDIR, .mount = mi, .item = idx, .rel = r}) < 0) {
            unlinkat(*pfd, base, AT_REMOVEDIR);
            return item_failf(it, "host path %s: out of memory recording the undo step", rel);
        }
    }
    int dfd = openat(*pfd, base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0 || fchmod(dfd, mode) < 0) {
        int er = errno;
        if (dfd >= 0)
            close(dfd);
        if (c->on_error != FB_ON_ERROR_ROLLBACK)
            unlinkat(*pfd, base, AT_REMOVEDIR);
        return item_fail_errno(it, rel, "setting the directory's mode", er);
    }
    close(dfd);
    fsync(*pfd);
    return 0;
}

/* Under rollback, a directory to delete may still hold the backups of children deleted before it (they
 * were renamed, not removed). Anything else in it makes it "not empty". */
static bool only_our_backups(ctx *c, size_t mi, int pfd, const char *base, const char *rel)
{
    int dfd = openat(pfd, base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0)
        return false;
    DIR *d = fdopendir(dfd);
    if (!d) {
        close(dfd);
        return false;
    }
    bool ok = true;
    size_t rlen = strlen(rel);
    struct dirent *de;
    while (ok && (de = readdir(d))) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        ok = false;
        for (size_t i = 0; i < c->nlog && !ok; i++) {
            const undo *u = &c->log[i];
            ok = u->kind == U_RESTORE && u->mount == mi && strncmp(u->commit_at, rel, rlen) == 0 &&
                 u->commit_at[rlen] == '/' && strcmp(u->commit_at + rlen + 1, de->d_name) == 0;
        }
    }
    closedir(d);
    return ok;
}

static int delete_entry(ctx *c, size_t mi, size_t idx, int pfd, const char *rel, const char *base, bool exists,
                        const struct stat *st, const fb_change *ch)
{
    fb_sync_item *it = &c->rep->items[idx];
    if (!exists)
        return 0; /* already gone */
    bool is_dir = S_ISDIR(st->st_mode);
    if (is_dir && ch->type != FB_FILE_DIRECTORY)
        return item_failf(it, "host path %s: is a directory on the host, the change deletes a %s", rel,
                          fb_file_type_name(ch->type));
    if (!is_dir && ch->type == FB_FILE_DIRECTORY)
        return item_failf(it, "host path %s: is not a directory on the host, the change deletes a directory", rel);
    if (c->on_error != FB_ON_ERROR_ROLLBACK) {
        if (unlinkat(pfd, base, is_dir ? AT_REMOVEDIR : 0) < 0) {
            if (errno == ENOTEMPTY || errno == EEXIST)
                return item_failf(it, "host path %s: directory not empty on the host (it holds entries the change "
                                      "list does not delete)", rel);
            return item_fail_errno(it, rel, "deleting", errno);
        }
        fsync(pfd);
        return 0;
    }
    if (is_dir && !only_our_backups(c, mi, pfd, base, rel))
        return item_failf(it, "host path %s: directory not empty on the host (it holds entries the change list "
                              "does not delete)", rel);
    char bak[64];
    if (make_backup(pfd, base, false, bak, sizeof bak) < 0)
        return item_fail_errno(it, rel, "moving the original aside", errno);
    fsync(pfd);
    size_t dlen = dir_len(rel, base);
    undo u = {.kind = U_RESTORE, .mount = mi, .item = idx, .rel = strdup(rel), .backup = join(rel, dlen, bak),
              .dir = is_dir};
    u.commit_at = u.backup ? strdup(u.backup) : NULL;
    if (!u.rel || !u.backup || !u.commit_at) {
        renameat2(pfd, bak, pfd, base, RENAME_NOREPLACE);
        free(u.rel);
        free(u.backup);
        free(u.commit_at);
        return item_failf(it, "host path %s: out of memory recording the undo step", rel);
    }
    /* The children's backups moved with the directory: commit them where they are now. */
    size_t rlen = strlen(rel);
    for (size_t i = 0; is_dir && i < c->nlog; i++) {
        undo *o = &c->log[i];
        if (o->kind != U_RESTORE || o->mount != mi || strncmp(o->commit_at, rel, rlen) != 0 ||
            o->commit_at[rlen] != '/')
            continue;
        char *moved = xstrdup_printf("%s%s", u.backup, o->commit_at + rlen);
        if (!moved)
            continue; /* left at its old name: the commit reports it */
        free(o->commit_at);
        o->commit_at = moved;
    }
    if (log_add(c, u) < 0) { /* log_add frees u on failure */
        renameat2(pfd, bak, pfd, base, RENAME_NOREPLACE);
        return item_failf(it, "host path %s: out of memory recording the undo step", rel);
    }
    return 0;
}

/* Checks, decides and applies change idx. 0: synced or skipped (the item says); -1: failed. */
static int apply_one(ctx *c, const fb_change *ch, size_t idx, const fb_sync_options *opt, bool *abort_all)
{
    fb_sync_item *it = &c->rep->items[idx];
    fb_error e = {0};
    const char *vp = ch->path;
    if (vp[0] != '/')
        return item_failf(it, "path %s: must be an absolute virtual path", vp);
    if (fb_resolve_check_rel(vp + 1, vp, &e) < 0)
        return item_fail(it, &e);
    const char *rel;
    const fb_mount_dir *d = fb_mount_find(c->m, vp, &rel);
    if (!d)
        return item_skip(it, NULL, "outside every mount: scratch space, never synced");
    size_t mi = (size_t)(d - c->m->dirs);
    it->host_path = *rel ? xstrdup_printf("%s/%s", d->host_path, rel) : strdup(d->host_path);
    if (!*rel)
        return item_skip(it, NULL, "the mount root itself is never created, replaced or deleted by sync");
    bool needs_content = ch->kind != FB_CHANGE_DELETED && ch->type != FB_FILE_DIRECTORY;
    if (needs_content && !ch->has_content)
        return item_failf(it, "path %s: no content (the change was reported with includeContents: false, or "
                              "without content); it cannot be synced", vp);
    if (opt && opt->before) {
        fb_sync_decision dec = opt->before(opt->ctx, ch, it->host_path);
        if (dec == FB_SYNC_SKIP)
            return item_skip(it, NULL, "skipped by beforeSync");
        if (dec == FB_SYNC_ABORT) {
            it->reason = strdup("sync aborted by beforeSync");
            *abort_all = true;
            return 0;
        }
    }
    int rfd = root_fd(c, mi, &e);
    if (rfd < 0)
        return item_fail(it, &e);
    const char *base;
    int pfd = fb_resolve_open_parent(rfd, rel, &base, &e);
    bool exists = false;
    struct stat st = {0};
    if (pfd < 0 && e.err_no != ENOENT)
        return item_fail(it, &e);
    if (pfd >= 0) {
        if (fstatat(pfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0)
            exists = true;
        else if (errno != ENOENT) {
            int er = errno;
            close(pfd);
            return item_fail_errno(it, rel, "stat", er);
        }
    }
    /* The final check, by what the host has now: a modified file that is gone is a create, etc. */
    fb_op op = ch->kind == FB_CHANGE_DELETED ? FB_OP_DELETE
               : exists && !(ch->type == FB_FILE_DIRECTORY && S_ISDIR(st.st_mode)) ? FB_OP_MODIFY
                                                                                   : FB_OP_CREATE;
    it->operation = fb_op_name(op);
    const char *rule = NULL;
    if (!fb_rules_allows(c->m->rules, d->virtual_path, rel, op, &rule)) {
        if (pfd >= 0)
            close(pfd);
        return item_skip(it, rule ? rule : "default", "permission denied: %s (mount.permissions, rule %s)",
                         fb_op_name(op), rule ? rule : "default");
    }
    if (opt && opt->check) {
        char why[256] = "", host_rule[sizeof why + 16];
        if (!opt->check(opt->check_ctx, vp, fb_op_name(op), why, sizeof why)) {
            if (pfd >= 0)
                close(pfd);
            why[sizeof why - 1] = '\0';
            snprintf(host_rule, sizeof host_rule, "callback%s%s", why[0] ? ": " : "", why);
            return item_skip(it, host_rule, "permission denied: %s (rule %s)", fb_op_name(op), host_rule);
        }
    }
    /* The host changed the entry after the view based this change on it (an edit, a replacement, a
     * deletion): writing would lose the host's version. A deletion of what is already gone is done. */
    if (fb_host_stamp_changed(&ch->base, exists, &st) && (exists || ch->kind != FB_CHANGE_DELETED)) {
        if (pfd >= 0)
            close(pfd);
        return item_failf(it, "path %s: conflict: the host's entry changed after the sandbox based this change "
                              "on it; the host's version is kept (read it again and redo the change)", vp);
    }
    char *target = NULL;
    if (ch->type == FB_FILE_SYMLINK && ch->kind != FB_CHANGE_DELETED) {
        if (c->m->symlinks == FB_SYMLINKS_NO) {
            if (pfd >= 0)
                close(pfd);
            return item_skip(it, NULL, "symbolic links are not synced (security.followSymlinks is false)");
        }
        /* Under `true` as under "restricted": a link planted on the host must not point out of the
         * mount, or the function could aim other host programs at files it was never given. */
        if (!(target = restricted_target(d, rel, base, ch))) {
            if (pfd >= 0)
                close(pfd);
            return item_skip(it, NULL, "symbolic link target leaves the mount (links are synced only when "
                                       "they stay inside it)");
        }
    }
    int rc;
    if (ch->kind == FB_CHANGE_DELETED)
        rc = pfd < 0 ? 0 : delete_entry(c, mi, idx, pfd, rel, base, exists, &st, ch);
    else if (ch->type == FB_FILE_DIRECTORY)
        rc = make_dir(c, mi, idx, rfd, &pfd, rel, base, exists, &st, ch);
    else
        rc = write_entry(c, mi, idx, rfd, &pfd, rel, base, exists, &st, ch, target);
    free(target);
    if (pfd >= 0)
        close(pfd);
    if (rc == 0)
        it->state = FB_SYNC_ITEM_SYNCED;
    return rc;
}

/* ---- undo and commit ---- */

static void note_undo_error(ctx *c, const undo *u, const char *what, int e)
{
    fb_sync_item *it = &c->rep->items[u->item];
    char *msg = xstrdup_printf("%s%shost path %s: %s: %s", it->error ? it->error : "", it->error ? "; " : "",
                               u->rel, what, strerror(e));
    if (msg) {
        free(it->error);
        it->error = msg;
    }
}

static int open_parent_of(ctx *c, const undo *u, const char *rel, const char **base)
{
    fb_error e = {0};
    int rfd = root_fd(c, u->mount, &e);
    if (rfd < 0)
        return -1;
    int fd = fb_resolve_open_parent(rfd, rel, base, &e);
    if (fd < 0)
        errno = e.err_no ? e.err_no : EIO;
    return fd;
}

static void undo_all(ctx *c)
{
    for (size_t k = c->nlog; k-- > 0;) {
        const undo *u = &c->log[k];
        const char *base, *bbase;
        int pfd = open_parent_of(c, u, u->rel, &base);
        if (pfd < 0) {
            note_undo_error(c, u, "rollback: opening its directory", errno);
            c->rep->rollback_failed = true;
            continue;
        }
        int rc;
        const char *what;
        if (u->kind == U_UNLINK) {
            rc = unlinkat(pfd, base, 0);
            what = "rollback: removing the created file";
        } else if (u->kind == U_RMDIR) {
            rc = unlinkat(pfd, base, AT_REMOVEDIR);
            what = "rollback: removing the created directory";
        } else {
            bbase = strrchr(u->backup, '/');
            bbase = bbase ? bbase + 1 : u->backup;
            rc = u->replaced ? renameat(pfd, bbase, pfd, base) : renameat2(pfd, bbase, pfd, base, RENAME_NOREPLACE);
            what = "rollback: restoring the original";
        }
        if (rc < 0 && !(errno == ENOENT && u->kind != U_RESTORE)) {
            note_undo_error(c, u, what, errno);
            c->rep->rollback_failed = true;
        } else {
            fsync(pfd);
        }
        close(pfd);
    }
}

static void commit_all(ctx *c)
{
    for (size_t k = 0; k < c->nlog; k++) {
        const undo *u = &c->log[k];
        if (u->kind != U_RESTORE)
            continue;
        const char *base;
        int pfd = open_parent_of(c, u, u->commit_at, &base);
        if (pfd < 0 || unlinkat(pfd, base, u->dir ? AT_REMOVEDIR : 0) < 0)
            note_undo_error(c, u, "removing the backup of the original", errno);
        if (pfd >= 0)
            close(pfd);
    }
}

/* ---- the sync ---- */

static int depth(const char *p)
{
    int n = 0;
    for (; *p; p++)
        n += *p == '/';
    return n;
}

typedef struct order {
    size_t idx;
    int group; /* 0: deletions, 1: the rest */
    int depth; /* deletions: deepest first; the rest: shallowest first */
} order;

static int cmp_order(const void *x, const void *y)
{
    const order *a = x, *b = y;
    if (a->group != b->group)
        return a->group - b->group;
    if (a->depth != b->depth)
        return a->group == 0 ? b->depth - a->depth : a->depth - b->depth;
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

static void count(fb_sync_report *rep)
{
    rep->synced = rep->failed = rep->skipped = rep->not_attempted = rep->undone = 0;
    for (size_t i = 0; i < rep->n; i++) {
        switch (rep->items[i].state) {
        case FB_SYNC_ITEM_SYNCED: rep->synced++; break;
        case FB_SYNC_ITEM_FAILED: rep->failed++; break;
        case FB_SYNC_ITEM_SKIPPED: rep->skipped++; break;
        case FB_SYNC_ITEM_NOT_ATTEMPTED: rep->not_attempted++; break;
        case FB_SYNC_ITEM_ROLLED_BACK: rep->undone++; break;
        }
    }
}

int fb_sync_apply_ex(const fb_mount_config *m, const fb_change_list *changes, const fb_sync_options *opt,
                     fb_sync_report *rep, fb_error *err)
{
    *rep = (fb_sync_report){.on_error = m->on_error};
    if (opt && opt->on_error >= 0)
        rep->on_error = (fb_sync_on_error)opt->on_error;
    size_t n = changes ? changes->n : 0;
    rep->items = calloc(n ? n : 1, sizeof *rep->items);
    order *ord = calloc(n ? n : 1, sizeof *ord);
    ctx c = {.m = m, .rep = rep, .on_error = rep->on_error, .root_fds = malloc((m->ndirs ? m->ndirs : 1) * sizeof(int))};
    if (!rep->items || !ord || !c.root_fds) {
        free(ord);
        free(c.root_fds);
        free(rep->items);
        rep->items = NULL;
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "sync: %zu changes", n);
    }
    rep->n = n;
    for (size_t i = 0; i < m->ndirs; i++)
        c.root_fds[i] = -1;
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        const fb_change *ch = &changes->v[i];
        rep->items[i] = (fb_sync_item){.path = strdup(ch->path), .kind = ch->kind, .type = ch->type};
        if (!rep->items[i].path)
            rc = fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "sync: copy of %s", ch->path);
        ord[i] = (order){.idx = i, .group = ch->kind == FB_CHANGE_DELETED ? 0 : 1, .depth = depth(ch->path)};
    }
    /* Fail closed before touching anything when the host side cannot be resolved safely. */
    if (rc == 0 && n > 0 && fb_resolve_available(err) < 0)
        rc = -1;
    qsort(ord, n, sizeof *ord, cmp_order);
    bool stop = rc < 0;
    for (size_t k = 0; k < n && !stop; k++) {
        size_t i = ord[k].idx;
        bool abort_all = false;
        if (apply_one(&c, &changes->v[i], i, opt, &abort_all) < 0 || abort_all)
            stop = abort_all || c.on_error != FB_ON_ERROR_CONTINUE;
        fb_sync_state st = rep->items[i].state;
        if (opt && opt->after && (st == FB_SYNC_ITEM_SYNCED || st == FB_SYNC_ITEM_FAILED))
            opt->after(opt->ctx, &changes->v[i], &rep->items[i]);
    }
    for (size_t i = 0; rc == 0 && i < n; i++)
        if (rep->items[i].state == FB_SYNC_ITEM_NOT_ATTEMPTED && !rep->items[i].reason)
            rep->items[i].reason = strdup(c.on_error == FB_ON_ERROR_ROLLBACK
                                              ? "not attempted: an earlier change failed and the sync was rolled back"
                                              : "not attempted: an earlier change failed (onError \"abort\")");
    if (stop && c.on_error == FB_ON_ERROR_ROLLBACK && rc == 0) {
        undo_all(&c);
        rep->rolled_back = true;
        for (size_t i = 0; i < n; i++)
            if (rep->items[i].state == FB_SYNC_ITEM_SYNCED)
                rep->items[i].state = FB_SYNC_ITEM_ROLLED_BACK;
    } else {
        commit_all(&c);
    }
    for (size_t k = 0; k < c.nlog; k++) {
        free(c.log[k].rel);
        free(c.log[k].backup);
        free(c.log[k].commit_at);
    }
    free(c.log);
    for (size_t i = 0; i < m->ndirs; i++)
        if (c.root_fds[i] >= 0)
            close(c.root_fds[i]);
    free(c.root_fds);
    free(ord);
    count(rep);
    return rc;
}

int fb_sync_apply(const fb_mount_config *m, const fb_change_list *changes, fb_sync_report *rep, fb_error *err)
{
    return fb_sync_apply_ex(m, changes, NULL, rep, err);
}

void fb_sync_report_free(fb_sync_report *rep)
{
    if (!rep)
        return;
    for (size_t i = 0; i < rep->n; i++) {
        free(rep->items[i].path);
        free(rep->items[i].host_path);
        free(rep->items[i].error);
        free(rep->items[i].reason);
        free(rep->items[i].rule);
    }
    free(rep->items);
    *rep = (fb_sync_report){0};
}

const char *fb_sync_state_name(fb_sync_state s)
{
    static const char *const names[] = {"notAttempted", "synced", "failed", "skipped", "rolledBack"};
    return (unsigned)s < sizeof names / sizeof *names ? names[s] : "unknown";
}

const char *fb_sync_on_error_name(fb_sync_on_error e)
{
    return e == FB_ON_ERROR_CONTINUE ? "continue" : e == FB_ON_ERROR_ABORT ? "abort" : "rollback";
}
