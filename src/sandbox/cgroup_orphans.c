/* Call cgroups whose maker is gone. A supervisor that dies without its own cleanup (SIGKILL, the OOM
 * killer) leaves its calls' cgroup directories behind, empty once the sandbox died with it (init's death
 * signal). The first cgroup a process makes under a parent directory sweeps that directory once: a
 * directory named by make_child_dir (limits.c), fnbox-PID-N-NSEC-PIDNS, is removed when PIDNS is this
 * process's PID namespace and no process PID exists there. rmdir removes only an empty cgroup, so one still
 * holding processes stays for a later sweep; a PID reused by another process keeps its directory (the
 * sweep errs towards leaving one); another PID namespace's directories are never touched (their PIDs mean
 * nothing here, and their makers may be alive). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/internal.h"

unsigned long fb_cgroup_pidns_id(void)
{
    struct stat st;
    return stat("/proc/self/ns/pid", &st) == 0 ? (unsigned long)st.st_ino : 0;
}

/* The n decimal fields of name after prefix, '-' between them and nothing after: 0, else -1. */
static int fields(const char *name, const char *prefix, unsigned long long *v, int n)
{
    size_t plen = strlen(prefix);
    if (strncmp(name, prefix, plen) != 0)
        return -1;
    const char *p = name + plen;
    for (int i = 0; i < n; i++) {
        char *end;
        errno = 0;
        if (*p < '0' || *p > '9')
            return -1;
        v[i] = strtoull(p, &end, 10);
        if (errno || *end != (i + 1 < n ? '-' : '\0'))
            return -1;
        p = end + 1;
    }
    return 0;
}

/* Whether name is a call cgroup made in PID namespace ns by a process that no longer exists. */
static bool orphaned(const char *name, unsigned long ns)
{
    unsigned long long v[4]; /* pid, counter, nsec, pidns */
    if (fields(name, "fnbox-", v, 4) < 0 || v[3] != ns || v[0] == 0 || v[0] > INT_MAX ||
        (pid_t)v[0] == getpid())
        return false;
    return kill((pid_t)v[0], 0) < 0 && errno == ESRCH;
}

void fb_cgroup_sweep_orphans(const char *base, int *swept)
{
    if (__atomic_exchange_n(swept, 1, __ATOMIC_ACQ_REL))
        return;
    unsigned long ns = fb_cgroup_pidns_id();
    DIR *d = ns ? opendir(base) : NULL;
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_type == DT_DIR && orphaned(e->d_name, ns))
            (void)unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR); /* EBUSY: it still holds processes */
    closedir(d);
}
