/* Landlock: a second layer over the mount namespace, enforced by the kernel per process and inherited by
 * every child (docs/internals/sandbox.md, "Landlock").
 *
 * The program restricts itself after its root is built and before seccomp: every file right but execute
 * on the root, which is scratch space (the system overlays, /etc, /.fnbox, /dev and /proc are read-only
 * mounts; the FUSE server applies a mount's own rules); execute only on the runtime,
 * the ELF interpreter it needs and spec->exec_allow (or everywhere with spec->exec_any). With ABI >= 6 it
 * also may not connect to abstract unix sockets or signal processes outside its domain (init, the host).
 *
 * Fail closed on the layer we promise: no Landlock in the kernel means calls run without this second
 * layer (doctor says so); Landlock present but a step failing refuses the call. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <linux/landlock.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox/internal.h"
#include "util/defences.h"

/* Debian 12's <linux/landlock.h> stops at ABI 2; the values below are the kernel's uapi (stable ABI). */
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14) /* ABI 3, Linux 6.2 */
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15) /* ABI 5, Linux 6.10 */
#endif
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0) /* ABI 6, Linux 6.12 */
#endif
#ifndef LANDLOCK_SCOPE_SIGNAL
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1) /* ABI 6, Linux 6.12 */
#endif

/* struct landlock_ruleset_attr as of ABI 6 (older headers know only the first field). The kernel accepts
 * a larger struct than it knows as long as the extra fields are zero, so we always pass all of it. */
typedef struct fb_ll_ruleset_attr {
    uint64_t handled_access_fs;
    uint64_t handled_access_net; /* ABI 4: TCP bind/connect; not handled (the network namespace has only lo) */
    uint64_t scoped;             /* ABI 6 */
} fb_ll_ruleset_attr;

#define FB_LL_KNOWN_ABI 6 /* the newest ABI whose rights we use: min(kernel, this) */

#define LL_READ (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)
/* The rights the kernel accepts on a rule whose path is not a directory. */
#define LL_FILE_RIGHTS (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE | \
                        LANDLOCK_ACCESS_FS_TRUNCATE | LANDLOCK_ACCESS_FS_IOCTL_DEV)
/* /dev nodes: /dev/null is opened for writing (and with O_TRUNC by `> /dev/null`) by runtimes and shells. */
#define LL_DEV (LL_READ | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE | LANDLOCK_ACCESS_FS_IOCTL_DEV)

/* Every filesystem right of an ABI: all handled, so whatever no rule grants is denied. */
static uint64_t handled_fs(int abi)
{
    uint64_t h = (LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1; /* ABI 1: EXECUTE .. MAKE_SYM */
    if (abi >= 2)
        h |= LANDLOCK_ACCESS_FS_REFER;
    if (abi >= 3)
        h |= LANDLOCK_ACCESS_FS_TRUNCATE;
    if (abi >= 5)
        h |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
    return h;
}

static int g_abi = -1; /* -1 not probed yet; 0 unavailable; else the kernel's ABI version */
static int g_abi_errno;

int fb_landlock_abi(int *why)
{
    int abi = __atomic_load_n(&g_abi, __ATOMIC_ACQUIRE);
    if (abi < 0) { /* concurrent first calls both probe and store the same answer */
        long v = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
        if (fb_defence_disabled("landlock-kernel")) { /* test builds: act as a kernel without Landlock */
            v = -1;
            errno = ENOSYS;
        }
        __atomic_store_n(&g_abi_errno, v < 0 ? errno : 0, __ATOMIC_RELAXED);
        abi = v < 0 ? 0 : (int)v;
        __atomic_store_n(&g_abi, abi, __ATOMIC_RELEASE);
    }
    if (why)
        *why = __atomic_load_n(&g_abi_errno, __ATOMIC_RELAXED);
    return abi;
}

typedef struct ll_ctx {
    int ruleset;
    uint64_t handled;
    fb_error *err;
} ll_ctx;

/* Grants access beneath path (or on it, for a file). A path absent from this sandbox's root (e.g. /lib32)
 * needs no rule. */
static int allow(const ll_ctx *ll, const char *path, uint64_t access)
{
    int fd = open(path, O_PATH | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT || errno == ENOTDIR ? 0
                                                   : fb_set_error(ll->err, FB_ERR_SANDBOX_SETUP, errno,
                                                                  "landlock: open %s", path);
    struct stat st;
    if (fstat(fd, &st) < 0) {
        int e = errno;
        close(fd);
        return fb_set_error(ll->err, FB_ERR_SANDBOX_SETUP, e, "landlock: stat %s", path);
    }
    if (!S_ISDIR(st.st_mode))
        access &= LL_FILE_RIGHTS;
    struct landlock_path_beneath_attr rule = {.allowed_access = access & ll->handled, .parent_fd = fd};
    long rc = rule.allowed_access ? syscall(SYS_landlock_add_rule, ll->ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0) : 0;
    int e = errno;
    close(fd);
    if (rc < 0)
        return fb_set_error(ll->err, FB_ERR_SANDBOX_SETUP, e, "landlock: rule for %s", path);
    return 0;
}

/* What execve opens after the file itself, which needs the execute right too (the kernel opens both
 * with FMODE_EXEC): the ELF program interpreter (PT_INTERP, the dynamic loader) or a script's "#!"
 * interpreter. Fills out ("" if none). Native ELF class only: others cannot run here. */
static void exec_interpreter(const char *path, char *out, size_t cap)
{
    out[0] = '\0';
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    union {
        ElfW(Ehdr) eh;
        char text[256];
    } head;
    memset(&head, 0, sizeof head);
    ssize_t n = pread(fd, &head, sizeof head - 1, 0);
    if (n > 2 && head.text[0] == '#' && head.text[1] == '!') {
        const char *p = head.text + 2;
        p += strspn(p, " \t");
        size_t len = strcspn(p, " \t\n");
        bool whole = p[len] != '\0' || n < (ssize_t)sizeof head - 1; /* not a line cut short by our buffer */
        if (len > 0 && len < cap && whole) {
            memcpy(out, p, len);
            out[len] = '\0';
        }
    } else if (n >= (ssize_t)sizeof head.eh && memcmp(head.eh.e_ident, ELFMAG, SELFMAG) == 0 &&
               head.eh.e_ident[EI_CLASS] == (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32) &&
               head.eh.e_phentsize == sizeof(ElfW(Phdr)) && head.eh.e_phnum <= 128) {
        for (unsigned i = 0; i < head.eh.e_phnum; i++) {
            ElfW(Phdr) ph;
            off_t at = (off_t)head.eh.e_phoff + (off_t)i * (off_t)sizeof ph;
            if (pread(fd, &ph, sizeof ph, at) != (ssize_t)sizeof ph)
                break;
            if (ph.p_type != PT_INTERP)
                continue;
            if (ph.p_filesz > 1 && ph.p_filesz <= cap &&
                pread(fd, out, ph.p_filesz, (off_t)ph.p_offset) == (ssize_t)ph.p_filesz && out[ph.p_filesz - 1] == '\0')
                break;
            out[0] = '\0';
            break;
        }
    }
    close(fd);
}

/* The execute right on path and on what its execve opens next (a script's interpreter, the dynamic
 * loader): at most three levels, as the kernel's own binfmt recursion is bounded. */
static int allow_exec(const ll_ctx *ll, const char *path)
{
    char cur[512], next[512];
    int n = snprintf(cur, sizeof cur, "%s", path);
    if (n < 0 || (size_t)n >= sizeof cur)
        return fb_set_error(ll->err, FB_ERR_SANDBOX_SETUP, ENAMETOOLONG, "landlock: %.64s...", path);
    for (int depth = 0; depth < 3 && cur[0] == '/'; depth++) {
        if (allow(ll, cur, LANDLOCK_ACCESS_FS_EXECUTE) < 0)
            return -1;
        exec_interpreter(cur, next, sizeof next);
        memcpy(cur, next, sizeof cur);
    }
    return 0;
}

static int add_rules(const ll_ctx *ll, const fb_sandbox_spec *spec)
{
    /* Reading: the system directories, the generated /etc, the harness; listing any directory (the root
     * is fnbox's own small tree, its names are no secret); /proc read-only (sysctls, other processes'
     * files, /proc/self/mem: nothing to write there). */
    static const char *const k_read[] = {"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc",
                                         "/.fnbox", "/proc"};
    const uint64_t write_all = ll->handled & ~(uint64_t)LANDLOCK_ACCESS_FS_EXECUTE;
    /* The root is the function's scratch space (any path outside the system directories, rootfs.c): every
     * right but execute beneath it. What must stay read-only is a read-only mount (the system overlays,
     * /etc, /.fnbox, /dev, /proc sealed by binds, /proc/sys), whose flags the mount lock keeps. */
    if (allow(ll, "/", write_all) < 0)
        return -1;
    for (size_t i = 0; i < sizeof k_read / sizeof *k_read; i++)
        if (allow(ll, k_read[i], LL_READ) < 0)
            return -1;
    /* /dev holds only the nodes rootfs.c binds (null zero full random urandom) and is read-only: nothing
     * can be added to it. /dev/shm, a writable area, gets its own rule below. */
    if (allow(ll, "/dev", LL_DEV) < 0)
        return -1;
    /* The writable areas: every right but execute. A FUSE mount's server decides each operation itself
     * by the mount's rules; Landlock only must not get in its way. */
    if (allow(ll, spec->workdir, write_all) < 0 || allow(ll, "/tmp", write_all) < 0 ||
        allow(ll, "/dev/shm", write_all) < 0)
        return -1;
    for (size_t i = 0; i < spec->nfuse; i++)
        if (allow(ll, spec->fuse_paths[i], write_all) < 0)
            return -1;
    /* Execute: everything (a compiler runs cc1, as, ld, collect2), or the runtime and what was allowed.
     * The right governs execve only: mmap(PROT_EXEC) of shared libraries needs just the read right. */
    if (spec->exec_any)
        return allow(ll, "/", LANDLOCK_ACCESS_FS_EXECUTE);
    if (allow_exec(ll, spec->exec_path) < 0)
        return -1;
    for (const char *const *p = spec->exec_allow; p && *p; p++)
        if (allow_exec(ll, *p) < 0)
            return -1;
    return 0;
}

int fb_landlock_apply(const fb_sandbox_spec *spec, fb_error *err)
{
    if (fb_defence_disabled("landlock"))
        return 0;
    int why = 0;
    int abi = fb_landlock_abi(&why);
    /* No Landlock in this kernel. Its path rights and scoping are a second layer (namespaces, locked
     * read-only mounts and seccomp stand alone), but nothing else restricts which programs the function
     * may start: fail closed unless the call may start any (childProcess: true, the compile sandbox). */
    if (abi == 0 && spec->exec_any)
        return 0;
    if (abi == 0)
        return fb_set_error(err, FB_ERR_KERNEL_FEATURE, why ? why : ENOSYS,
                            "landlock: unavailable in this kernel, and it alone restricts which programs the "
                            "function may start (permissions.childProcess); allow every command "
                            "(\"childProcess\": true) to run without it, or see fnbox doctor");
    if (abi > FB_LL_KNOWN_ABI)
        abi = FB_LL_KNOWN_ABI;
    fb_ll_ruleset_attr attr = {
        .handled_access_fs = handled_fs(abi),
        .scoped = abi >= 6 ? LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL : 0,
    };
    int rs = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0); /* O_CLOEXEC by the kernel */
    if (rs < 0)
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "landlock: create ruleset (ABI %d)", abi);
    ll_ctx ll = {.ruleset = rs, .handled = attr.handled_access_fs, .err = err};
    int rc = add_rules(&ll, spec);
    /* restrict_self needs no_new_privs (or CAP_SYS_ADMIN); fb_caps_drop_all sets it again later. */
    if (rc == 0 && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        rc = fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "landlock: prctl(PR_SET_NO_NEW_PRIVS)");
    if (rc == 0 && syscall(SYS_landlock_restrict_self, rs, 0) < 0)
        rc = fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "landlock: restrict_self (ABI %d)", abi);
    close(rs);
    return rc;
}
