/* User namespace: who the sandboxed code is. It is never host root: when fnbox runs as root the inner
 * user maps to the unprivileged nobody/nogroup (65534); otherwise to the caller's own ids. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox/internal.h"
#include "util/defences.h"
#include "util/fd.h"

#define FB_NOBODY 65534

void fb_idmap_choose(fb_idmap *m)
{
    m->privileged = geteuid() == 0;
    m->outer_uid = m->privileged ? FB_NOBODY : geteuid();
    m->outer_gid = m->privileged ? FB_NOBODY : getegid();
}

static int write_proc_file(pid_t pid, const char *name, const char *text, fb_error *err)
{
    char path[64];
    if (pid == 0)
        snprintf(path, sizeof path, "/proc/self/%s", name);
    else
        snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, name);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "user namespace: open %s", path);
    int rc = fb_write_all(fd, text, strlen(text));
    int saved = errno;
    close(fd);
    if (rc < 0)
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, saved, "user namespace: write '%s' to %s", text, path);
    return 0;
}

int fb_userns_write_maps(pid_t pid, const fb_idmap *m, fb_error *err)
{
    if (fb_defence_disabled("userns")) /* test builds: no user namespace, no maps */
        return 0;
    char map[64];
    /* Unprivileged callers must deny setgroups(2) before writing gid_map (user_namespaces(7)).
     * As root we keep it allowed so the child can drop host root's supplementary groups. */
    if (!m->privileged && write_proc_file(pid, "setgroups", "deny", err) < 0)
        return -1;
    snprintf(map, sizeof map, "%d %u 1\n", FB_INNER_GID, (unsigned)m->outer_gid);
    if (write_proc_file(pid, "gid_map", map, err) < 0)
        return -1;
    snprintf(map, sizeof map, "%d %u 1\n", FB_INNER_UID, (unsigned)m->outer_uid);
    return write_proc_file(pid, "uid_map", map, err);
}

static int caps_get(struct __user_cap_data_struct data[2])
{
    struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    return (int)syscall(SYS_capget, &hdr, data);
}

static int caps_set(struct __user_cap_data_struct data[2])
{
    struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    return (int)syscall(SYS_capset, &hdr, data);
}

int fb_userns_become_inner(const fb_idmap *m, fb_error *err)
{
    if (fb_defence_disabled("userns")) /* test builds: no user namespace, we stay host root */
        return 0;
    /* The child starts with host root's credentials when fnbox is root; switch to the mapped inner
     * ids first thing, keeping the namespace capabilities we still need to build the root. */
    if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "prctl(PR_SET_KEEPCAPS)");
    /* Raw syscalls, not libc's wrappers: this child came from a raw clone of a possibly multithreaded
     * host, and glibc's set*id wrappers signal every thread glibc believes exists (nptl setxid) and wait
     * for answers that never come (the threads are in the parent): a deadlock. */
    if (m->privileged && syscall(SYS_setgroups, 0, NULL) < 0)
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "setgroups(0)");
    if (syscall(SYS_setresgid, FB_INNER_GID, FB_INNER_GID, FB_INNER_GID) < 0)
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "setresgid(%d)", FB_INNER_GID);
    if (syscall(SYS_setresuid, FB_INNER_UID, FB_INNER_UID, FB_INNER_UID) < 0)
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "setresuid(%d)", FB_INNER_UID);
    struct __user_cap_data_struct data[2];
    if (caps_get(data) < 0)
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "capget");
    data[0].effective = data[0].permitted;
    data[1].effective = data[1].permitted;
    if (caps_set(data) < 0)
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "capset (raise namespace capabilities)");
    if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0)
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "prctl(PR_SET_KEEPCAPS, 0)");
    return 0;
}

/* Test-only ("caps" switch): instead of dropping them, keep every capability across execve (ambient), as
 * if the drop had failed, so the suite can show what the layers behind it (locked mounts) still stop. */
static int caps_keep_for_tests(fb_error *err)
{
    struct __user_cap_data_struct data[2];
    if (caps_get(data) < 0)
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "capget");
    data[0].inheritable = data[0].permitted;
    data[1].inheritable = data[1].permitted;
    if (caps_set(data) < 0)
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "capset (inheritable)");
    for (int cap = 0; cap <= 63; cap++)
        (void)prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap, 0, 0);
    return 0;
}

int fb_caps_drop_all(fb_error *err)
{
    if (fb_defence_disabled("caps"))
        return caps_keep_for_tests(err);
    for (int cap = 0; cap <= 63; cap++) {
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
            return fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "prctl(PR_CAPBSET_DROP, %d)", cap);
    }
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "prctl(PR_CAP_AMBIENT_CLEAR_ALL)");
    struct __user_cap_data_struct data[2];
    memset(data, 0, sizeof data);
    if (caps_set(data) < 0)
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "capset (drop all)");
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "prctl(PR_SET_NO_NEW_PRIVS)");
    return 0;
}

/* The program's mounts are locked: it runs in a user namespace nested in the sandbox's, with a copy of
 * the mount namespace. The kernel marks every mount copied into a namespace owned by a less privileged
 * user namespace MNT_LOCKED, and locks its read-only, nosuid, nodev, noexec and atime flags
 * (mount_namespaces(7), "Restrictions on mount namespaces"): even a process holding every capability in
 * the nested namespace gets EPERM remounting /usr read-write and EINVAL unmounting anything. The program
 * maps its own ids (1000 -> 1000), which the kernel allows any process for a namespace it created
 * (user_namespaces(7): one line, its own euid/egid, setgroups denied first), so init need not help.
 * [child] */
int fb_userns_lock_mounts(fb_error *err)
{
    if (fb_defence_disabled("mountlock") || fb_defence_disabled("userns"))
        return 0;
    /* The program is a fork of init, which is non-dumpable; a non-dumpable process's /proc/self files are
     * owned by host root and it could not write its own maps. execve() would make it dumpable anyway,
     * and nothing else in the sandbox could inspect it before. */
    if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0)
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "prctl(PR_SET_DUMPABLE, 1)");
    if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
        return fb_set_error(err, errno == EPERM || errno == ENOSPC || errno == EUSERS ? FB_ERR_KERNEL_FEATURE
                                                                                        : FB_ERR_SANDBOX_SETUP,
                            errno, "locking the mounts: unshare(CLONE_NEWUSER|CLONE_NEWNS) (nested user namespace)");
    char map[64];
    snprintf(map, sizeof map, "%d %d 1\n", FB_INNER_GID, FB_INNER_GID);
    if (write_proc_file(0, "setgroups", "deny", err) < 0 || write_proc_file(0, "gid_map", map, err) < 0)
        return fb_wrap_error(err, "locking the mounts");
    snprintf(map, sizeof map, "%d %d 1\n", FB_INNER_UID, FB_INNER_UID);
    if (write_proc_file(0, "uid_map", map, err) < 0)
        return fb_wrap_error(err, "locking the mounts");
    return 0;
}
