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
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/internal.h"

unsigned long fb_cgroup_pidns_id(void)
{
    struct stat st;
    return stat("/proc/self/ns/pid", &st) == 0 ? (unsigned long)st.st_ino : 0;
}

/* Whether name is a call cgroup made in PID namespace ns by a process that no longer exists. */
static bool orphaned(const char *name, unsigned long ns)
{
    int pid, end = 0;
    unsigned n;
    long nsec;
    unsigned long its_ns;
    if (sscanf(name, "fnbox-%d-%u-%ld-%lu%n", &pid, &n, &nsec, &its_ns, &end) != 4 || name[end] != '\0')
        return false;
    if (its_ns != ns || pid <= 0 || pid == getpid())
        return false;
    return kill(pid, 0) < 0 && errno == ESRCH;
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
