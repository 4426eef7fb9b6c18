/* An LD_PRELOAD fault injector for the sync tests (test_sync_faults.py): makes fnbox's host writes fail,
 * or kills fnbox, at a chosen step, so that rollback and atomicity are tested on real failures.
 *
 * FNBOX_FAULT (read once):
 *   fsync:N        the Nth fsync of a sync temporary (".fnbox-sync-tmp.*") fails with EIO
 *   rename:NAME    renaming a temporary onto NAME (renameat / renameat2, new name's last component) fails with EIO
 *   kill-fsync:N   the Nth fsync of a temporary SIGKILLs the process (fnbox dies in the middle of a sync)
 * Everything else goes to libc unchanged. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int g_fsyncs;

static const char *fault(const char *kind)
{
    const char *f = getenv("FNBOX_FAULT");
    size_t n = strlen(kind);
    if (!f || strncmp(f, kind, n) != 0 || f[n] != ':')
        return NULL;
    return f + n + 1;
}

static const char *last(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static int is_temp(int fd)
{
    char link[64], target[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, target, sizeof target - 1);
    if (n <= 0)
        return 0;
    target[n] = '\0';
    return strncmp(last(target), ".fnbox-sync-tmp.", 16) == 0;
}

int fsync(int fd)
{
    static int (*real)(int);
    if (!real)
        real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
    if (is_temp(fd)) {
        g_fsyncs++;
        const char *n = fault("fsync");
        if (n && atoi(n) == g_fsyncs) {
            errno = EIO;
            return -1;
        }
        n = fault("kill-fsync");
        if (n && atoi(n) == g_fsyncs)
            raise(SIGKILL);
    }
    return real(fd);
}

int renameat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath)
{
    static int (*real)(int, const char *, int, const char *);
    if (!real)
        real = (int (*)(int, const char *, int, const char *))dlsym(RTLD_NEXT, "renameat");
    const char *name = fault("rename");
    if (name && strncmp(last(oldpath), ".fnbox-sync-tmp.", 16) == 0 && strcmp(last(newpath), name) == 0) {
        errno = EIO;
        return -1;
    }
    return real(olddirfd, oldpath, newdirfd, newpath);
}

int renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned int flags)
{
    static int (*real)(int, const char *, int, const char *, unsigned int);
    if (!real)
        real = (int (*)(int, const char *, int, const char *, unsigned int))dlsym(RTLD_NEXT, "renameat2");
    const char *name = fault("rename");
    if (name && strncmp(last(oldpath), ".fnbox-sync-tmp.", 16) == 0 && strcmp(last(newpath), name) == 0) {
        errno = EIO;
        return -1;
    }
    return real(olddirfd, oldpath, newdirfd, newpath, flags);
}
