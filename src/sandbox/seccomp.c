/* The seccomp filter: refuses what a function never needs. Compiled in the parent with libseccomp (which
 * allocates), exported as classic BPF, and loaded in the child with a plain prctl. */
#include <errno.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "sandbox/internal.h"
#include "util/buf.h"
#include "util/fd.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

/* Refused with EPERM: namespace and mount manipulation, cross-process memory access, kernel attack
 * surface no function needs (bpf, io_uring, userfaultfd, perf, keyrings), and host administration. */
static const char *const k_denied[] = {
    "mount", "umount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen", "fsconfig",
    "fsmount", "fspick", "mount_setattr", "unshare", "setns", "ptrace", "process_vm_readv",
    "process_vm_writev", "process_madvise", "kcmp", "pidfd_getfd", "bpf", "io_uring_setup",
    "io_uring_enter", "io_uring_register", "userfaultfd", "perf_event_open", "keyctl", "add_key",
    "request_key", "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
    "create_module", "swapon", "swapoff", "reboot", "settimeofday", "clock_settime", "clock_adjtime",
    "adjtimex", "acct", "quotactl", "quotactl_fd", "lookup_dcookie", "name_to_handle_at",
    "open_by_handle_at", "syslog", "vhangup", "iopl", "ioperm", "nfsservctl", "_sysctl", "uselib", "ustat",
    "sysfs", "sethostname", "setdomainname", "fanotify_init", "personality", "vm86", "vm86old",
    "modify_ldt", "get_kernel_syms", "query_module", "lsm_set_self_attr",
};

static const unsigned long k_ns_flags[] = {
    CLONE_NEWUSER, CLONE_NEWNS, CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWIPC, CLONE_NEWUTS, CLONE_NEWCGROUP,
    CLONE_NEWTIME,
};

static int add_rules(scmp_filter_ctx ctx, fb_error *err)
{
    int rc;
    for (size_t i = 0; i < sizeof k_denied / sizeof *k_denied; i++) {
        int nr = seccomp_syscall_resolve_name(k_denied[i]);
        if (nr == __NR_SCMP_ERROR || nr < 0)
            continue; /* not a syscall on this architecture */
        if ((rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0)) < 0)
            return fb_set_error(err, "SandboxSetupFailed", -rc, "seccomp rule for %s", k_denied[i]);
    }
    /* clone3 passes its flags in memory seccomp cannot read: answer ENOSYS so libc falls back to
     * clone(2), whose flags register we can filter. */
    if ((rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0)) < 0)
        return fb_set_error(err, "SandboxSetupFailed", -rc, "seccomp rule for clone3");
    for (size_t i = 0; i < sizeof k_ns_flags / sizeof *k_ns_flags; i++) {
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
                              SCMP_A0(SCMP_CMP_MASKED_EQ, k_ns_flags[i], k_ns_flags[i]));
        if (rc < 0)
            return fb_set_error(err, "SandboxSetupFailed", -rc, "seccomp rule for clone flags");
    }
    /* TIOCSTI / TIOCLINUX inject input into a terminal; compare only the low 32 bits because the kernel
     * truncates the ioctl number (CVE-2017-5226 and the 64-bit variant). */
    static const unsigned long ioctls[] = {TIOCSTI, TIOCLINUX};
    for (size_t i = 0; i < 2; i++) {
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
                              SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffUL, ioctls[i]));
        if (rc < 0)
            return fb_set_error(err, "SandboxSetupFailed", -rc, "seccomp rule for ioctl");
    }
    return 0;
}

static int export_bpf(scmp_filter_ctx ctx, fb_bpf *out, fb_error *err)
{
    int fd = memfd_create("fnbox-seccomp", MFD_CLOEXEC);
    if (fd < 0)
        return fb_set_error(err, "SandboxSetupFailed", errno, "memfd for seccomp");
    int rc = seccomp_export_bpf(ctx, fd);
    if (rc < 0) {
        close(fd);
        return fb_set_error(err, "SandboxSetupFailed", -rc, "seccomp_export_bpf");
    }
    fb_buf b;
    fb_buf_init(&b, 1 << 20);
    rc = lseek(fd, 0, SEEK_SET) < 0 ? -1 : fb_read_all(fd, &b);
    int saved = errno;
    close(fd);
    if (rc < 0 || b.len == 0 || b.len % sizeof(struct sock_filter) || b.len / sizeof(struct sock_filter) > 0xffff) {
        fb_buf_free(&b);
        return fb_set_error(err, "SandboxSetupFailed", saved, "reading the exported seccomp program");
    }
    size_t len = 0;
    out->insns = (struct sock_filter *)fb_buf_steal(&b, &len);
    out->len = (unsigned short)(len / sizeof(struct sock_filter));
    return 0;
}

int fb_seccomp_compile(fb_bpf *out, fb_error *err)
{
    memset(out, 0, sizeof *out);
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (!ctx)
        return fb_set_error(err, "SandboxSetupFailed", ENOMEM, "seccomp_init");
    int rc = -1;
    /* Only the native ABI: a foreign-architecture syscall (int 0x80 on x86-64, x32) kills the process. */
    int arc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
    if (arc < 0) {
        fb_set_error(err, "SandboxSetupFailed", -arc, "seccomp bad-arch action");
        goto out;
    }
    if (add_rules(ctx, err) < 0 || export_bpf(ctx, out, err) < 0)
        goto out;
    rc = 0;
out:
    seccomp_release(ctx);
    return rc;
}

void fb_bpf_free(fb_bpf *bpf)
{
    free(bpf->insns);
    bpf->insns = NULL;
    bpf->len = 0;
}

int fb_seccomp_load(const fb_bpf *bpf, fb_error *err)
{
    struct sock_fprog prog = {.len = bpf->len, .filter = bpf->insns};
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) < 0)
        return fb_set_error(err, "KernelFeatureMissing", errno, "loading the seccomp filter");
    return 0;
}
