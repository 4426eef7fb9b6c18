/* File operations inside a sandbox's root on the host's behalf: inroot.h says what each guarantees. */
#include "fs/inroot.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fs/resolve.h"

#define IN_ROOT (RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS)

/* ---- paths ---- */

/* Appends segment [s, s+n) to out (of length *len) as "/seg", or drops the last one for "..". */
static void push_segment(char *out, size_t *len, const char *s, size_t n)
{
    if (n == 0 || (n == 1 && s[0] == '.'))
        return;
    if (n == 2 && s[0] == '.' && s[1] == '.') {
        while (*len > 0 && out[*len - 1] != '/')
            (*len)--;
        if (*len > 0)
            (*len)--; /* the '/' too; ".." above the root stays at the root */
        return;
    }
    out[(*len)++] = '/';
    memcpy(out + *len, s, n);
    *len += n;
}

static void push_all(char *out, size_t *len, const char *p, size_t plen)
{
    size_t i = 0;
    while (i < plen) {
        size_t j = i;
        while (j < plen && p[j] != '/')
            j++;
        push_segment(out, len, p + i, j - i);
        i = j + 1;
    }
}

int fb_inroot_normalize(const char *cwd, const char *path, size_t len, const char *field, char **out,
                        fb_error *err)
{
    *out = NULL;
    if (len == 0)
        return fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, "%s: empty: a path in the sandbox is needed", field);
    if (memchr(path, '\0', len))
        return fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, "%s: contains a NUL byte", field);
    size_t clen = path[0] == '/' ? 0 : strlen(cwd);
    if (len >= PATH_MAX || clen + len + 2 >= PATH_MAX)
        return fb_set_error(err, FB_ERR_INVALID_REQUEST, ENAMETOOLONG, "%s: longer than %d bytes", field,
                            PATH_MAX - 1);
    char *buf = malloc(clen + len + 3);
    if (!buf)
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "%s", field);
    size_t n = 0;
    push_all(buf, &n, cwd, clen);
    push_all(buf, &n, path, len);
    if (n == 0)
        buf[n++] = '/';
    buf[n] = '\0';
    *out = buf;
    return 0;
}

/* ---- running as the sandbox user ---- */

typedef struct op {
    const fb_inroot *r;
    int (*fn)(struct op *op);
    const char *path;
    /* read */
    size_t max;
    fb_buf *buf;
    /* write */
    const void *data;
    size_t len;
    mode_t mode;
    /* list */
    fb_inroot_entry *entries;
    size_t n;
    fb_error err;
} op;

/* Drops every capability of this thread (capset with pid 0 is per task). */
static int drop_capabilities(fb_error *err)
{
    struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    struct __user_cap_data_struct none[_LINUX_CAPABILITY_U32S_3];
    memset(none, 0, sizeof none);
    if (syscall(SYS_capset, &hdr, none) < 0)
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "capset (drop all) on the file thread");
    return 0;
}

/* Per thread (the kernel's credentials are per task; these are raw syscalls, which glibc does not
 * broadcast to the other threads as it does for setuid). Changing the fsuid away from 0 clears only the
 * file capabilities (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER...) from this thread's effective
 * set; the others are dropped too, since the kernel consults them on what a file shows: with CAP_SYSLOG
 * /proc/kallsyms shows the kernel's addresses (the sandbox sees zeros), with CAP_SYS_ADMIN and
 * CAP_SYS_PTRACE /proc/<pid>/stack and the like open. The thread ends after its one operation. */
static int become_sandbox_user(const fb_inroot *r, fb_error *err)
{
    if (r->switch_creds) {
        if (syscall(SYS_setgroups, 0, NULL) < 0)
            return fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "setgroups(0) on the file thread");
        (void)syscall(SYS_setfsgid, r->gid);
        (void)syscall(SYS_setfsuid, r->uid);
        /* Both return the previous id and never fail visibly: ask again to see what we are now. */
        if ((gid_t)syscall(SYS_setfsgid, -1) != r->gid || (uid_t)syscall(SYS_setfsuid, -1) != r->uid)
            return fb_set_error(err, FB_ERR_SANDBOX_SETUP, EPERM,
                                "could not take the sandbox user's file credentials");
    }
    return drop_capabilities(err);
}

static void *op_main(void *arg)
{
    op *o = arg;
    if (become_sandbox_user(o->r, &o->err) == 0)
        (void)o->fn(o);
    return NULL;
}

static int run_op(op *o, fb_error *err)
{
    if (fb_resolve_available(err) < 0)
        return -1;
    pthread_t t;
    int e = pthread_create(&t, NULL, op_main, o);
    if (e != 0)
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, e, "starting the file thread");
    pthread_join(t, NULL);
    if (o->err.kind != FB_ERR_NONE) {
        *err = o->err;
        return -1;
    }
    return 0;
}

/* ---- the operations (on the file thread) ---- */

static int open_in_root(const op *o, const char *path, int flags)
{
    /* O_PATH takes no other flags than O_DIRECTORY and O_NOFOLLOW (openat2 refuses them: EINVAL). */
    int extra = flags & O_PATH ? O_CLOEXEC : O_CLOEXEC | O_NOCTTY;
    struct open_how how = {.flags = (unsigned long long)(flags | extra), .resolve = IN_ROOT};
    long fd;
    while ((fd = syscall(SYS_openat2, o->r->root_fd, path, &how, sizeof how)) < 0 && errno == EAGAIN)
        ; /* a rename raced with the lookup: the kernel asks to retry */
    return (int)fd;
}

static int fail_errno(op *o, int e, const char *what)
{
    fb_errkind kind = FB_ERR_SANDBOX_SETUP;
    const char *why = NULL; /* NULL: fb_set_error adds strerror(e) */
    if (e == ENOENT || e == ENOTDIR) {
        kind = FB_ERR_NOT_FOUND;
        why = e == ENOENT ? "no such file or directory" : "a component of the path is not a directory";
    } else if (e == EACCES || e == EPERM || e == EROFS) {
        kind = FB_ERR_PERMISSION_DENIED;
        why = e == EROFS ? "read-only in the sandbox" : "permission denied (as the sandbox user)";
    } else if (e == ELOOP || e == EXDEV || e == EISDIR || e == ENOTEMPTY || e == ENAMETOOLONG || e == EFBIG) {
        kind = FB_ERR_INVALID_REQUEST;
    } else if (e == ENOSPC || e == EDQUOT) {
        kind = FB_ERR_FILE_SIZE_LIMIT;
        why = "no space left: the session's disk limit (limits.workspaceBytes / tmpBytes)";
    }
    if (!why)
        return fb_set_error(&o->err, kind, e, "path: %s '%.512s'", what, o->path);
    fb_set_error(&o->err, kind, 0, "path: %s '%.512s': %s", what, o->path, why);
    o->err.err_no = e;
    return -1;
}

static int do_read(op *o)
{
    int fd = open_in_root(o, o->path, O_RDONLY | O_NONBLOCK);
    if (fd < 0)
        return fail_errno(o, errno, "reading");
    struct stat st;
    int rc = 0;
    if (fstat(fd, &st) < 0)
        rc = fail_errno(o, errno, "reading");
    else if (S_ISDIR(st.st_mode))
        rc = fb_set_error(&o->err, FB_ERR_INVALID_REQUEST, EISDIR, "path: '%.512s' is a directory (list it instead)",
                          o->path);
    else if (!S_ISREG(st.st_mode))
        rc = fb_set_error(&o->err, FB_ERR_INVALID_REQUEST, EINVAL, "path: '%.512s' is not a regular file", o->path);
    else if ((uint64_t)st.st_size > o->max)
        rc = fb_set_error(&o->err, FB_ERR_INVALID_REQUEST, EFBIG, "path: '%.512s' is %llu bytes, over the %zu a read returns",
                          o->path, (unsigned long long)st.st_size, o->max);
    char chunk[65536];
    ssize_t n = 0;
    while (rc == 0 && (n = read(fd, chunk, sizeof chunk)) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            rc = fail_errno(o, errno, "reading");
        else if (o->buf->len + (size_t)n > o->max) /* it grew while we read */
            rc = fb_set_error(&o->err, FB_ERR_INVALID_REQUEST, EFBIG, "path: '%.512s' is over the %zu bytes a read returns",
                              o->path, o->max);
        else if (fb_buf_append(o->buf, chunk, (size_t)n) < 0)
            rc = fb_set_error(&o->err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "reading '%.512s'", o->path);
    }
    close(fd);
    return rc;
}

/* The last component of a normalised path (never "/"), and its parent ("/" for a top-level name). */
static const char *split(const char *path, char *parent, size_t cap)
{
    const char *slash = strrchr(path, '/');
    size_t plen = (size_t)(slash - path);
    if (plen == 0)
        plen = 1; /* "/" */
    if (plen >= cap)
        plen = cap - 1;
    memcpy(parent, path, plen);
    parent[plen] = '\0';
    return slash + 1;
}

/* Opens directory `dir` (normalised) in the root, creating what is missing, one component at a time:
 * each is made with mkdirat in its parent, itself resolved in the root, then opened in the root again. */
static int open_dirs(op *o, const char *dir)
{
    char prefix[PATH_MAX];
    size_t len = strlen(dir);
    int cur = open_in_root(o, "/", O_PATH | O_DIRECTORY);
    if (cur < 0)
        return fail_errno(o, errno, "opening the root for");
    for (size_t i = 1; i <= len; i++) {
        if (i < len && dir[i] != '/')
            continue;
        memcpy(prefix, dir, i);
        prefix[i] = '\0';
        int next = open_in_root(o, prefix, O_PATH | O_DIRECTORY);
        if (next < 0 && errno == ENOENT) {
            const char *name = strrchr(prefix, '/') + 1;
            if (mkdirat(cur, name, 0755) < 0 && errno != EEXIST) {
                int e = errno;
                close(cur);
                return fail_errno(o, e, "creating a parent directory of");
            }
            next = open_in_root(o, prefix, O_PATH | O_DIRECTORY);
        }
        int e = errno;
        close(cur);
        if (next < 0)
            return fail_errno(o, e, "opening a parent directory of");
        cur = next;
    }
    return cur;
}

static int write_whole(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, data, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

static int do_write(op *o)
{
    char parent[PATH_MAX], tmp[64];
    const char *base = split(o->path, parent, sizeof parent);
    int dir = strcmp(parent, "/") == 0 ? open_in_root(o, "/", O_PATH | O_DIRECTORY) : open_dirs(o, parent);
    if (dir < 0)
        return o->err.kind != FB_ERR_NONE ? -1 : fail_errno(o, errno, "writing");
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    snprintf(tmp, sizeof tmp, ".fnbox-write-%d-%ld", (int)syscall(SYS_gettid), (long)ts.tv_nsec);
    int fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    int rc = 0;
    if (fd < 0) {
        rc = fail_errno(o, errno, "writing");
    } else {
        if (fchmod(fd, o->mode) < 0 || write_whole(fd, o->data, o->len) < 0)
            rc = fail_errno(o, errno, "writing");
        close(fd);
        if (rc == 0 && renameat(dir, tmp, dir, base) < 0)
            rc = fail_errno(o, errno, "writing");
        if (rc < 0)
            (void)unlinkat(dir, tmp, 0);
    }
    close(dir);
    return rc;
}

static int do_remove(op *o)
{
    char parent[PATH_MAX];
    const char *base = split(o->path, parent, sizeof parent);
    int dir = open_in_root(o, parent, O_PATH | O_DIRECTORY);
    if (dir < 0)
        return fail_errno(o, errno, "removing");
    int rc = unlinkat(dir, base, 0);
    if (rc < 0 && errno == EISDIR)
        rc = unlinkat(dir, base, AT_REMOVEDIR);
    if (rc < 0)
        rc = fail_errno(o, errno, "removing");
    close(dir);
    return rc;
}

/* The directory, created with its missing parents (as a write makes them) and opened in the root. */
static int do_make_dir(op *o)
{
    int fd = strcmp(o->path, "/") == 0 ? open_in_root(o, "/", O_PATH | O_DIRECTORY) : open_dirs(o, o->path);
    if (fd < 0)
        return o->err.kind != FB_ERR_NONE ? -1 : fail_errno(o, errno, "creating");
    close(fd);
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const fb_inroot_entry *)a)->name, ((const fb_inroot_entry *)b)->name);
}

static int add_entry(op *o, int dfd, const char *name)
{
    if (o->n >= o->max)
        return fb_set_error(&o->err, FB_ERR_INVALID_REQUEST, E2BIG, "path: '%.512s' has more than %zu entries", o->path,
                            o->max);
    if (o->n % 64 == 0) {
        fb_inroot_entry *grown = realloc(o->entries, (o->n + 64) * sizeof *grown);
        if (!grown)
            return fb_set_error(&o->err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "listing '%.512s'", o->path);
        o->entries = grown;
    }
    struct stat st;
    bool ok = fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0; /* gone meanwhile: listed as size 0 */
    fb_inroot_entry *e = &o->entries[o->n];
    e->name = strdup(name);
    if (!e->name)
        return fb_set_error(&o->err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "listing '%.512s'", o->path);
    e->is_dir = ok && S_ISDIR(st.st_mode);
    e->size = ok && !e->is_dir ? (uint64_t)st.st_size : 0;
    o->n++;
    return 0;
}

static int do_list(op *o)
{
    int fd = open_in_root(o, o->path, O_RDONLY | O_DIRECTORY);
    if (fd < 0)
        return fail_errno(o, errno, "listing");
    DIR *d = fdopendir(fd);
    if (!d) {
        int e = errno;
        close(fd);
        return fail_errno(o, e, "listing");
    }
    int rc = 0;
    struct dirent *de;
    /* readdir on a DIR only this thread uses is safe (glibc); readdir_r is deprecated */
    // cppcheck-suppress readdirCalled
    while (rc == 0 && (errno = 0, de = readdir(d)) != NULL)
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
            rc = add_entry(o, dirfd(d), de->d_name);
    if (rc == 0 && errno != 0)
        rc = fail_errno(o, errno, "listing");
    closedir(d);
    if (rc == 0 && o->n > 1)
        qsort(o->entries, o->n, sizeof *o->entries, by_name);
    return rc;
}

/* ---- the API ---- */

int fb_inroot_read(const fb_inroot *r, const char *path, size_t max, fb_buf *out, fb_error *err)
{
    op o = {.r = r, .fn = do_read, .path = path, .max = max, .buf = out};
    return run_op(&o, err);
}

int fb_inroot_write_mode(const fb_inroot *r, const char *path, const void *data, size_t len, mode_t mode,
                         fb_error *err)
{
    if (strcmp(path, "/") == 0)
        return fb_set_error(err, FB_ERR_INVALID_REQUEST, EISDIR, "path: '/' is a directory");
    op o = {.r = r, .fn = do_write, .path = path, .data = data, .len = len, .mode = mode & 0777};
    return run_op(&o, err);
}

int fb_inroot_write(const fb_inroot *r, const char *path, const void *data, size_t len, fb_error *err)
{
    return fb_inroot_write_mode(r, path, data, len, 0644, err);
}

int fb_inroot_remove(const fb_inroot *r, const char *path, fb_error *err)
{
    if (strcmp(path, "/") == 0)
        return fb_set_error(err, FB_ERR_INVALID_REQUEST, EBUSY, "path: the root cannot be removed");
    op o = {.r = r, .fn = do_remove, .path = path};
    return run_op(&o, err);
}

int fb_inroot_list(const fb_inroot *r, const char *path, size_t max, fb_inroot_entry **entries, size_t *n,
                   fb_error *err)
{
    op o = {.r = r, .fn = do_list, .path = path, .max = max};
    int rc = run_op(&o, err);
    if (rc < 0) {
        fb_inroot_entries_free(o.entries, o.n);
        o.entries = NULL;
        o.n = 0;
    }
    *entries = o.entries;
    *n = o.n;
    return rc;
}

int fb_inroot_make_dir(const fb_inroot *r, const char *path, fb_error *err)
{
    op o = {.r = r, .fn = do_make_dir, .path = path};
    return run_op(&o, err);
}

void fb_inroot_entries_free(fb_inroot_entry *entries, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(entries[i].name);
    free(entries);
}
