/* The seccomp filter: an allowlist. Compiled in the parent with libseccomp (which allocates), exported as
 * classic BPF, and loaded in the child with a plain prctl just before execve.
 *
 * Three answers (docs/internals/sandbox.md, "Seccomp"):
 *   - a syscall on k_allowed runs (clone, ioctl, personality, prctl and socket only with the arguments
 *     their rules in add_rules name);
 *   - a syscall of a family the sandbox refuses on purpose (k_refused, clone with a namespace flag,
 *     TIOCSTI/TIOCLINUX) fails with EPERM, which reads as "refused";
 *   - anything else, including syscalls newer than this list and argument values no rule names, fails
 *     with ENOSYS, which is what an older kernel answers: glibc (clone3, faccessat2, close_range...),
 *     CPython, V8 and libuv treat it as "not available here" and fall back.
 * A syscall of another architecture (int 0x80, x32) kills the process. */
#include <errno.h>
#include <linux/filter.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <seccomp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox/internal.h"
#include "util/buf.h"
#include "util/defences.h"
#include "util/fd.h"

/* The library build (Makefile: FB_SECCOMP_EMBEDDED) includes the program tools/seccomp_gen.c printed from
 * this very file: k_embedded_filter[]. Static analysis and the generator itself compile without it. */
#if defined(FB_SECCOMP_EMBEDDED) && __has_include("seccomp_filter.inc")
#define FB_HAVE_EMBEDDED_FILTER 1
#include "seccomp_filter.inc"
#endif

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif
#define FB_MFD_NOEXEC_SEAL 0x0008U /* linux/memfd.h, Linux 6.3 */
#define FB_MFD_EXEC 0x0010U

/* Runs with any arguments. Built from `strace -f` of CPython 3.11, Node 20, Ruby 3.1, PHP 8.2, gcc/g++ (cc1,
 * as, collect2, ld) and the compiled programs running the integration suites, then the whole suite run
 * against the filter. Names this architecture lacks are skipped. Conditional rules: see add_rules. */
static const char *const k_allowed[] = {
    /* processes and threads (clone: see k_ns_flags; clone3: ENOSYS) */
    "fork", "vfork", "execve", "execveat", "exit", "exit_group", "wait4", "waitid", "kill", "tkill", "tgkill",
    "getpid", "getppid", "gettid", "getpgid", "setpgid", "getpgrp", "getsid", "setsid", "set_tid_address",
    "set_robust_list", "get_robust_list", "rseq", "futex", "futex_waitv", "membarrier", "arch_prctl",
    "pidfd_open", "pidfd_send_signal", "uname", "sysinfo", "getrusage", "times", "prlimit64", "getrlimit",
    "setrlimit", "capget",
    /* scheduling */
    "sched_yield", "sched_getaffinity", "sched_setaffinity", "sched_getparam", "sched_setparam",
    "sched_getscheduler", "sched_setscheduler", "sched_get_priority_max", "sched_get_priority_min",
    "sched_rr_get_interval", "sched_getattr", "sched_setattr", "getpriority", "setpriority", "getcpu",
    "ioprio_get", "ioprio_set",
    /* credentials: every capability is gone, so the kernel refuses any change of identity itself (EPERM,
     * as runtimes expect from an unprivileged process) */
    "getuid", "geteuid", "getgid", "getegid", "getresuid", "getresgid", "getgroups", "setuid", "setgid",
    "setreuid", "setregid", "setresuid", "setresgid", "setgroups", "setfsuid", "setfsgid",
    /* signals */
    "rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigpending", "rt_sigtimedwait", "rt_sigsuspend",
    "rt_sigqueueinfo", "rt_tgsigqueueinfo", "sigaltstack", "pause", "restart_syscall", "signalfd",
    "signalfd4", "alarm",
    /* memory */
    "brk", "mmap", "munmap", "mprotect", "mremap", "madvise", "msync", "mincore", "mlock", "mlock2", "munlock",
    "mlockall", "munlockall", "pkey_alloc", "pkey_free", "pkey_mprotect", "get_mempolicy",
    /* time (reading it; setting it is refused) */
    "clock_gettime", "clock_getres", "clock_nanosleep", "nanosleep", "gettimeofday", "time", "getitimer",
    "setitimer", "timer_create", "timer_settime", "timer_gettime", "timer_getoverrun", "timer_delete",
    "timerfd_create", "timerfd_settime", "timerfd_gettime",
    /* file descriptors and I/O (ioctl: see add_rules) */
    "read", "write", "readv", "writev", "pread64", "pwrite64", "preadv", "pwritev", "preadv2", "pwritev2",
    "close", "close_range", "lseek", "dup", "dup2", "dup3", "fcntl", "flock", "fsync", "fdatasync",
    "sync_file_range", "ftruncate", "truncate", "fallocate", "fadvise64", "readahead", "sendfile",
    "copy_file_range", "splice", "tee", "vmsplice", "pipe", "pipe2",
    "poll", "ppoll", "select", "pselect6", "epoll_create", "epoll_create1", "epoll_ctl", "epoll_wait",
    "epoll_pwait", "epoll_pwait2", "eventfd", "eventfd2", "inotify_init", "inotify_init1",
    "inotify_add_watch", "inotify_rm_watch",
    /* paths (Landlock and the mount table decide what they reach) */
    "open", "openat", "openat2", "creat", "stat", "fstat", "lstat", "newfstatat", "statx", "statfs",
    "fstatfs", "access", "faccessat", "faccessat2", "getdents", "getdents64", "getcwd", "chdir", "fchdir",
    "mkdir", "mkdirat", "rmdir", "rename", "renameat", "renameat2", "link", "linkat", "unlink", "unlinkat",
    "symlink", "symlinkat", "readlink", "readlinkat", "chmod", "fchmod", "fchmodat", "fchmodat2", "chown",
    "fchown", "lchown", "fchownat", "umask", "utime", "utimes", "utimensat", "futimesat", "mknod", "mknodat",
    "getxattr", "lgetxattr", "fgetxattr", "listxattr", "llistxattr", "flistxattr", "setxattr", "lsetxattr",
    "fsetxattr", "removexattr", "lremovexattr", "fremovexattr",
    /* sockets (socket: see k_socket_families; the network namespace is empty) */
    "socketpair", "bind", "listen", "accept", "accept4", "connect", "getsockname", "getpeername", "sendto",
    "recvfrom", "sendmsg", "recvmsg", "sendmmsg", "recvmmsg", "shutdown", "setsockopt", "getsockopt",
    /* System V and POSIX IPC: the sandbox has its own IPC namespace */
    "shmget", "shmat", "shmdt", "shmctl", "semget", "semop", "semtimedop", "semctl", "msgget", "msgsnd",
    "msgrcv", "msgctl", "mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify",
    "mq_getsetattr",
    "getrandom",
};

/* Refused with EPERM: the families a function never needs and an attacker wants. Namespace and mount
 * manipulation, cross-process memory access, kernel attack surface (bpf, io_uring, userfaultfd, perf,
 * keyrings), modules, and setting the clock. EPERM reads as "refused", which is what these are. */
static const char *const k_refused[] = {
    "mount", "umount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen", "fsconfig",
    "fsmount", "fspick", "mount_setattr", "name_to_handle_at", "open_by_handle_at", "unshare", "setns",
    "ptrace", "process_vm_readv", "process_vm_writev", "process_madvise", "kcmp", "pidfd_getfd", "bpf",
    "io_uring_setup", "io_uring_enter", "io_uring_register", "userfaultfd", "perf_event_open", "keyctl",
    "add_key", "request_key", "kexec_load", "kexec_file_load", "init_module", "finit_module",
    "delete_module", "create_module", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
};

static const unsigned long k_ns_flags[] = {
    CLONE_NEWUSER, CLONE_NEWNS, CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWIPC, CLONE_NEWUTS, CLONE_NEWCGROUP,
    CLONE_NEWTIME,
};

/* prctl options that run (compared on the low 32 bits: the kernel reads an int). Any other option answers
 * ENOSYS like every call not on the list. Left out on purpose: PR_SET_MM, PR_SET_PTRACER, PR_SET_SECCOMP,
 * PR_SET_SYSCALL_USER_DISPATCH, PR_SET_IO_FLUSHER, PR_SET_SPECULATION_CTRL. */
static const uint32_t k_prctl_options[] = {
    PR_SET_PDEATHSIG, PR_GET_PDEATHSIG, PR_GET_DUMPABLE, PR_SET_DUMPABLE, PR_GET_KEEPCAPS, PR_SET_NAME,
    PR_GET_NAME, PR_GET_SECCOMP, PR_CAPBSET_READ, PR_GET_SECUREBITS, PR_SET_TIMERSLACK, PR_GET_TIMERSLACK,
    PR_SET_CHILD_SUBREAPER, PR_GET_CHILD_SUBREAPER, PR_SET_NO_NEW_PRIVS, PR_GET_NO_NEW_PRIVS,
    PR_GET_TID_ADDRESS, PR_SET_THP_DISABLE /* Ruby */, PR_GET_THP_DISABLE, PR_CAP_AMBIENT,
    PR_GET_SPECULATION_CTRL, 0x53564d41 /* PR_SET_VMA: V8 and glibc name anonymous mappings */,
    0x41555856 /* PR_GET_AUXV */,
};

/* Socket families that run: unix, IPv4, IPv6 (the network namespace has only lo; a proxy, when allowed,
 * is reached through it), and netlink with NETLINK_ROUTE only (see add_rules). Any other family
 * (AF_PACKET, AF_ALG, AF_VSOCK, other netlink protocols...) answers ENOSYS. */
static const uint32_t k_socket_families[] = {AF_UNIX, AF_INET, AF_INET6};

/* personality(2) values that run: the query and plain Linux. ADDR_NO_RANDOMIZE, READ_IMPLIES_EXEC and the
 * other flags answer ENOSYS. */
static const uint32_t k_personalities[] = {0 /* PER_LINUX */, 0xffffffffU /* query */};

/* Terminal injection (TIOCSTI, CVE-2017-5226; TIOCLINUX's console selection paste): refused with EPERM,
 * whatever the upper 32 bits of the request hold. */
static const uint32_t k_refused_ioctls[] = {TIOCSTI, TIOCLINUX};

/* What every syscall not named here answers. */
#define DEFAULT_ACTION SCMP_ACT_ERRNO(ENOSYS)

static int add_rule(scmp_filter_ctx ctx, uint32_t action, int nr, const char *what, unsigned count,
                    const struct scmp_arg_cmp *cmp, fb_error *err)
{
    if (action == DEFAULT_ACTION)
        return 0; /* libseccomp refuses a rule that repeats the default (EACCES); it is implied */
    int rc = seccomp_rule_add_array(ctx, action, nr, count, cmp);
    if (rc < 0)
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, -rc, "seccomp rule for %s", what);
    return 0;
}

static bool any_has_prefix(const uint32_t *vals, size_t n, uint32_t mask, uint32_t prefix)
{
    for (size_t i = 0; i < n; i++)
        if ((vals[i] & mask) == prefix)
            return true;
    return false;
}

/* Adds `action` for every value of the low 32 bits of argument `arg` except vals, as the fewest
 * masked-equal rules covering the rest (at most 32 per value: one per bit where a number leaves the
 * excluded value's binary prefix). libseccomp cannot say "not equal under a mask", nor mix an
 * unconditional rule with conditional ones for the same syscall (the unconditional one wins), and the
 * kernel reads int arguments (ioctl's request, prctl's option, socket's family) from the low 32 bits
 * only, so a full 64-bit "not equal" would let 0x1_00005412 through as TIOCSTI. */
static int add_all_but(scmp_filter_ctx ctx, uint32_t action, int nr, const char *what, unsigned arg,
                       const uint32_t *vals, size_t n, uint32_t prefix, unsigned depth, fb_error *err)
{
    uint32_t mask = (uint32_t)(0xffffffff00000000ULL >> depth); /* the top `depth` bits */
    if (!any_has_prefix(vals, n, mask, prefix)) {
        struct scmp_arg_cmp cmp = {arg, SCMP_CMP_MASKED_EQ, mask, prefix};
        return add_rule(ctx, action, nr, what, 1, &cmp, err);
    }
    if (depth == 32)
        return 0; /* an excluded value */
    uint32_t bit = 1U << (31 - depth);
    if (add_all_but(ctx, action, nr, what, arg, vals, n, prefix, depth + 1, err) < 0)
        return -1;
    return add_all_but(ctx, action, nr, what, arg, vals, n, prefix | bit, depth + 1, err);
}

/* `action` when the low 32 bits of argument `arg` equal one of vals. */
static int add_values(scmp_filter_ctx ctx, uint32_t action, int nr, const char *what, unsigned arg,
                      const uint32_t *vals, size_t n, fb_error *err)
{
    for (size_t i = 0; i < n; i++) {
        struct scmp_arg_cmp cmp = {arg, SCMP_CMP_MASKED_EQ, 0xffffffffU, vals[i]};
        if (add_rule(ctx, action, nr, what, 1, &cmp, err) < 0)
            return -1;
    }
    return 0;
}

static int add_list(scmp_filter_ctx ctx, const char *const *names, size_t n, uint32_t action, fb_error *err)
{
    for (size_t i = 0; i < n; i++) {
        int nr = seccomp_syscall_resolve_name(names[i]);
        if (nr == __NR_SCMP_ERROR || nr < 0)
            continue; /* not a syscall on this architecture */
        if (add_rule(ctx, action, nr, names[i], 0, NULL, err) < 0)
            return -1;
    }
    return 0;
}

#define COUNT(a) (sizeof(a) / sizeof *(a))

static int add_rules(scmp_filter_ctx ctx, fb_error *err)
{
    if (add_list(ctx, k_allowed, COUNT(k_allowed), SCMP_ACT_ALLOW, err) < 0 ||
        add_list(ctx, k_refused, COUNT(k_refused), SCMP_ACT_ERRNO(EPERM), err) < 0)
        return -1;
    /* clone3 passes its flags in memory seccomp cannot read: answer ENOSYS so libc falls back to
     * clone(2), whose flags register we can filter. */
    if (add_rule(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), "clone3", 0, NULL, err) < 0)
        return -1;
    /* clone: allowed without any namespace flag, EPERM with one (the kernel reads the low 32 bits). */
    unsigned long ns_all = 0;
    for (size_t i = 0; i < COUNT(k_ns_flags); i++) {
        struct scmp_arg_cmp cmp = {0, SCMP_CMP_MASKED_EQ, k_ns_flags[i], k_ns_flags[i]};
        if (add_rule(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), "clone flags", 1, &cmp, err) < 0)
            return -1;
        ns_all |= k_ns_flags[i];
    }
    struct scmp_arg_cmp no_ns = {0, SCMP_CMP_MASKED_EQ, ns_all, 0};
    if (add_rule(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), "clone", 1, &no_ns, err) < 0)
        return -1;
    /* memfd_create: only sealed against execution (MFD_NOEXEC_SEAL, Linux 6.3), else EPERM. A memfd has no
     * path, so no Landlock rule covers it: without the seal a function without exec rights could copy any
     * program into one and execveat it (adversarial/test_exec.py exec_memfd). Older kernels refuse the
     * unknown flag (EINVAL): no memfd at all there. */
    struct scmp_arg_cmp sealed = {1, SCMP_CMP_MASKED_EQ, FB_MFD_NOEXEC_SEAL | FB_MFD_EXEC, FB_MFD_NOEXEC_SEAL};
    struct scmp_arg_cmp unsealed = {1, SCMP_CMP_MASKED_EQ, FB_MFD_NOEXEC_SEAL, 0};
    struct scmp_arg_cmp exec = {1, SCMP_CMP_MASKED_EQ, FB_MFD_EXEC, FB_MFD_EXEC};
    if (add_rule(ctx, SCMP_ACT_ALLOW, SCMP_SYS(memfd_create), "memfd_create", 1, &sealed, err) < 0 ||
        add_rule(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(memfd_create), "memfd_create unsealed", 1, &unsealed, err) < 0 ||
        add_rule(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(memfd_create), "memfd_create exec", 1, &exec, err) < 0)
        return -1;
    /* ioctl(fd, request): everything but terminal injection. */
    if (add_values(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), "ioctl", 1, k_refused_ioctls,
                   COUNT(k_refused_ioctls), err) < 0 ||
        add_all_but(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), "ioctl", 1, k_refused_ioctls, COUNT(k_refused_ioctls),
                    0, 0, err) < 0)
        return -1;
    if (add_values(ctx, SCMP_ACT_ALLOW, SCMP_SYS(personality), "personality", 0, k_personalities,
                   COUNT(k_personalities), err) < 0 ||
        add_values(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prctl), "prctl", 0, k_prctl_options, COUNT(k_prctl_options),
                   err) < 0 ||
        add_values(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), "socket", 0, k_socket_families,
                   COUNT(k_socket_families), err) < 0)
        return -1;
    /* getifaddrs(3) (Node's os.networkInterfaces, Ruby's Socket.getifaddrs, PHP's net_get_interfaces) and
     * getaddrinfo's AI_ADDRCONFIG read the interfaces over NETLINK_ROUTE; without capabilities that socket
     * can only read the sandbox's own, empty, network namespace. */
    struct scmp_arg_cmp netlink_route[] = {{0, SCMP_CMP_MASKED_EQ, 0xffffffffU, AF_NETLINK},
                                           {2, SCMP_CMP_MASKED_EQ, 0xffffffffU, 0 /* NETLINK_ROUTE */}};
    if (add_rule(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), "socket", 2, netlink_route, err) < 0)
        return -1;
    return 0;
}

static int export_bpf(scmp_filter_ctx ctx, fb_bpf *out, fb_error *err)
{
    int fd = memfd_create("fnbox-seccomp", MFD_CLOEXEC);
    if (fd < 0)
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "memfd for seccomp");
    int rc = seccomp_export_bpf(ctx, fd);
    if (rc < 0) {
        close(fd);
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, -rc, "seccomp_export_bpf");
    }
    fb_buf b;
    fb_buf_init(&b, 1 << 20);
    rc = lseek(fd, 0, SEEK_SET) < 0 ? -1 : fb_read_all(fd, &b);
    int saved = errno;
    close(fd);
    if (rc < 0 || b.len == 0 || b.len % sizeof(struct sock_filter) ||
        b.len / sizeof(struct sock_filter) > BPF_MAXINSNS) {
        fb_buf_free(&b);
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, saved, "reading the exported seccomp program");
    }
    size_t len = 0;
    out->insns = (struct sock_filter *)fb_buf_steal(&b, &len);
    out->len = (unsigned short)(len / sizeof(struct sock_filter));
    return 0;
}

int fb_seccomp_compile_fresh(fb_bpf *out, fb_error *err)
{
    memset(out, 0, sizeof *out);
    scmp_filter_ctx ctx = seccomp_init(DEFAULT_ACTION);
    if (!ctx)
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "seccomp_init");
    int rc = -1;
    /* Only the native ABI: a foreign-architecture syscall (int 0x80 on x86-64) or an x32 one (the native
     * arch token with bit 30 set in the number) kills the process. */
    int arc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
    if (arc < 0) {
        fb_set_error(err, FB_ERR_SANDBOX_SETUP, -arc, "seccomp bad-arch action");
        goto out;
    }
    /* Syscall numbers in a binary tree rather than a list: the allowlist is long. */
    (void)seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
    if (add_rules(ctx, err) < 0 || export_bpf(ctx, out, err) < 0)
        goto out;
    rc = 0;
out:
    seccomp_release(ctx);
    return rc;
}

/* The filter is the same for every call. libseccomp needs 1.3-2.5 ms to compile this list, which every
 * `fnbox call` process would pay, so the build compiles it once (FB_HAVE_EMBEDDED_FILTER); without that it
 * is compiled once per process. Each call gets its own copy. */
#ifdef FB_HAVE_EMBEDDED_FILTER
static int copy_filter(const struct sock_filter *insns, size_t len, fb_bpf *out, fb_error *err)
{
    out->insns = malloc(len * sizeof *insns);
    if (!out->insns)
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "copying the seccomp program");
    memcpy(out->insns, insns, len * sizeof *insns);
    out->len = (unsigned short)len;
    return 0;
}

int fb_seccomp_compile(fb_bpf *out, fb_error *err)
{
    memset(out, 0, sizeof *out);
    return copy_filter(k_embedded_filter, sizeof k_embedded_filter / sizeof *k_embedded_filter, out, err);
}
#else
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static fb_bpf g_filter;
static fb_error g_filter_err;
static int g_filter_rc;

static void compile_once(void)
{
    g_filter_rc = fb_seccomp_compile_fresh(&g_filter, &g_filter_err);
}

int fb_seccomp_compile(fb_bpf *out, fb_error *err)
{
    memset(out, 0, sizeof *out);
    pthread_once(&g_once, compile_once);
    if (g_filter_rc < 0) {
        if (err)
            *err = g_filter_err;
        return -1;
    }
    out->insns = malloc(g_filter.len * sizeof *g_filter.insns);
    if (!out->insns)
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "copying the seccomp program");
    memcpy(out->insns, g_filter.insns, g_filter.len * sizeof *g_filter.insns);
    out->len = g_filter.len;
    return 0;
}
#endif

void fb_bpf_free(fb_bpf *bpf)
{
    free(bpf->insns);
    bpf->insns = NULL;
    bpf->len = 0;
}

/* A second filter, installed before the main one, that lets every system call through and is made with a
 * listener (Linux 5.0). The kernel hangs up the listener once no task uses the filter any more (Linux 5.9,
 * "seccomp: notify about unused filter"), which a task does in do_exit right after it is marked exiting and
 * before its memory is torn down. So the supervisor of a prepared call learns at that moment, without
 * polling /proc on a timer, that the program and all it started have begun to exit (early_end.c). The
 * listener never receives a notification: the filter returns only ALLOW. -1 when the kernel refuses; the
 * supervisor then asks on its timer alone. */
int fb_seccomp_exit_listener(void)
{
    struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    struct sock_fprog prog = {.len = 1, .filter = &allow};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        return -1;
    return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
}

int fb_seccomp_load(const fb_bpf *bpf, fb_error *err)
{
    if (fb_defence_disabled("seccomp")) /* test-only builds (defences.h) */
        return 0;
    struct sock_fprog prog = {.len = bpf->len, .filter = bpf->insns};
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) < 0)
        return fb_set_error(err, FB_ERR_KERNEL_FEATURE, errno, "loading the seccomp filter");
    return 0;
}
