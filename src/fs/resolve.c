/* Beneath-only host paths (see resolve.h). */
#include "fs/resolve.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/defences.h"

#define BENEATH (RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS)

/* BENEATH, or nothing in test builds with the "beneath" switch (links followed, `..` and absolute
 * targets escape: what the adversarial suite's weak run shows the flags stop). */
static unsigned long long beneath(void)
{
    return fb_defence_disabled("beneath") ? 0 : BENEATH;
}

/* 0 = not probed yet, 1 = openat2 works, -1 = missing. Racing probes agree, so relaxed order is enough. */
static int g_openat2_state;
static bool g_forced_missing;

void fb_resolve_force_missing(bool missing)
{
    g_forced_missing = missing;
    __atomic_store_n(&g_openat2_state, 0, __ATOMIC_RELAXED);
}

/* An errno the caller can test, and a message that says what it means for a host path. */
static const char *explain(int e)
{
    switch (e) {
    case ELOOP: return "a symbolic link is in the way (links are never followed when writing to the host)";
    case EXDEV: return "the path leads outside the mount root";
    case ENOTDIR: return "a component of the path is not a directory";
    case ENOENT: return "does not exist";
    case ENAMETOOLONG: return "name too long";
    default: return strerror(e);
    }
}

static int host_error(fb_error *err, int e, const char *rel)
{
    fb_set_error(err, FB_ERR_HOST_PATH, 0, "host path %s: %s", *rel ? rel : ".", explain(e));
    if (err)
        err->err_no = e;
    return -1;
}

static long raw_openat2(int dirfd, const char *path, struct open_how *how)
{
    long fd;
    do /* EAGAIN: a concurrent rename made the kernel's lookup retry; retrying is what the man page says */
        fd = syscall(SYS_openat2, dirfd, path, how, sizeof *how);
    while (fd < 0 && (errno == EAGAIN || errno == EINTR));
    return fd;
}

int fb_resolve_available(fb_error *err)
{
    int st = __atomic_load_n(&g_openat2_state, __ATOMIC_RELAXED);
    if (st == 0) {
        st = 1;
        if (g_forced_missing) {
            st = -1;
            errno = ENOSYS;
        } else {
            struct open_how how = {.flags = O_PATH | O_CLOEXEC, .resolve = beneath()};
            int dfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
            long fd = dfd < 0 ? -1 : raw_openat2(dfd, ".", &how);
            int e = errno;
            if (fd >= 0)
                close((int)fd);
            if (dfd >= 0)
                close(dfd);
            /* ENOSYS: kernel before 5.6; EPERM: a seccomp filter (some container runtimes) refuses it. */
            if (fd < 0 && (e == ENOSYS || e == EPERM || e == EINVAL))
                st = -1;
            errno = e;
        }
        __atomic_store_n(&g_openat2_state, st, __ATOMIC_RELAXED);
    }
    if (st > 0)
        return 0;
    return fb_set_error(err, FB_ERR_KERNEL_FEATURE, 0,
                        "openat2 with RESOLVE_BENEATH is not available (needs Linux 5.6 or later, and a seccomp "
                        "policy that allows it); fnbox refuses to write host files without beneath-only path "
                        "resolution (see `fnbox doctor`)");
}

int fb_resolve_check_rel(const char *rel, const char *what, fb_error *err)
{
    size_t total = strlen(rel);
    if (total == 0)
        return 0;
    if (total >= PATH_MAX)
        return fb_set_error(err, FB_ERR_HOST_PATH, 0, "%s: path is %zu bytes long (at most %d)", what, total,
                            PATH_MAX - 1);
    const char *p = rel;
    for (;;) {
        const char *slash = strchr(p, '/');
        size_t n = slash ? (size_t)(slash - p) : strlen(p);
        if (n == 0)
            return fb_set_error(err, FB_ERR_HOST_PATH, 0, "%s: empty path segment (leading, trailing or doubled '/')",
                                what);
        if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
            return fb_set_error(err, FB_ERR_HOST_PATH, 0, "%s: '%.*s' segments are not allowed", what, (int)n, p);
        if (n > NAME_MAX)
            return fb_set_error(err, FB_ERR_HOST_PATH, 0,
                                "%s: file name too long (%zu bytes; at most %d bytes per name)", what, n, NAME_MAX);
        if (!slash)
            return 0;
        p = slash + 1;
    }
}

int fb_resolve_open_root(const char *host_path, fb_error *err)
{
    if (fb_resolve_available(err) < 0)
        return -1;
    if (host_path[0] != '/')
        return fb_set_error(err, FB_ERR_HOST_PATH, 0, "mount root %s: not an absolute path", host_path);
    int fd = open(host_path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        fb_set_error(err, FB_ERR_HOST_PATH, 0, "mount root %s: %s", host_path,
                     e == ELOOP || e == ENOTDIR ? "is not a directory (or became a symbolic link)" : strerror(e));
        if (err)
            err->err_no = e;
    }
    return fd;
}

int fb_resolve_open(int root_fd, const char *rel, int flags, mode_t mode, fb_error *err)
{
    if (fb_resolve_available(err) < 0)
        return -1;
    /* RESOLVE_NO_SYMLINKS also refuses a symlink as the last component, with or without O_NOFOLLOW
     * (O_PATH | O_NOFOLLOW would otherwise open the link itself). */
    /* openat2 refuses flags O_PATH does not take (O_NOCTTY among them) with EINVAL. */
    unsigned extra = (flags & O_PATH) ? O_CLOEXEC : O_CLOEXEC | O_NOCTTY;
    struct open_how how = {.flags = (unsigned)flags | extra, .resolve = beneath()};
    if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE) /* O_TMPFILE includes O_DIRECTORY */
        how.mode = mode & 07777;
    long fd = raw_openat2(root_fd, *rel ? rel : ".", &how);
    if (fd < 0)
        return host_error(err, errno, rel);
    return (int)fd;
}

int fb_resolve_open_parent(int root_fd, const char *rel, const char **base, fb_error *err)
{
    if (!*rel)
        return fb_set_error(err, FB_ERR_HOST_PATH, 0, "the mount root itself has no parent inside the mount");
    const char *slash = strrchr(rel, '/');
    *base = slash ? slash + 1 : rel;
    if (!slash)
        return fb_resolve_open(root_fd, "", O_RDONLY | O_DIRECTORY, 0, err);
    size_t n = (size_t)(slash - rel);
    char *dir = strndup(rel, n);
    if (!dir)
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "host path %s", rel);
    int fd = fb_resolve_open(root_fd, dir, O_RDONLY | O_DIRECTORY, 0, err);
    free(dir);
    return fd;
}

int fb_resolve_mkdirs(int root_fd, const char *rel_dir, mode_t mode, size_t *created_from, fb_error *err)
{
    size_t len = strlen(rel_dir);
    *created_from = len;
    fb_error first = {0};
    int fd = fb_resolve_open(root_fd, rel_dir, O_RDONLY | O_DIRECTORY, 0, &first);
    if (fd >= 0)
        return fd;
    if (first.err_no != ENOENT) {
        if (err)
            *err = first;
        return -1;
    }
    char *buf = strdup(rel_dir);
    if (!buf)
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "host path %s", rel_dir);
    /* Walk the components: open each prefix beneath the root; create what is missing. */
    int dfd = fb_resolve_open(root_fd, "", O_RDONLY | O_DIRECTORY, 0, err);
    for (size_t i = 0; dfd >= 0 && i < len;) {
        size_t j = i;
        while (j < len && buf[j] != '/')
            j++;
        buf[j] = '\0';
        const char *name = buf + i;
        if (mkdirat(dfd, name, mode & 0777) == 0) {
            if (*created_from == len)
                *created_from = i;
        } else if (errno != EEXIST) {
            int e = errno;
            close(dfd);
            dfd = host_error(err, e, buf);
            break;
        }
        close(dfd);
        /* Reopen the prefix beneath the root: a symlink planted in place of the new directory is ELOOP. */
        dfd = fb_resolve_open(root_fd, buf, O_RDONLY | O_DIRECTORY, 0, err);
        if (j < len)
            buf[j] = '/';
        i = j + 1;
    }
    free(buf);
    return dfd;
}
