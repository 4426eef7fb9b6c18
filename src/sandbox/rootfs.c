/* The sandbox's filesystem: a fresh, size-limited tmpfs root holding per-call read-only overlays of the
 * system directories, a generated minimal /etc, a fresh /proc, a minimal /dev, size-limited tmpfs /tmp,
 * /dev/shm and workspace, and the harness files under /.fnbox. /etc, /.fnbox, /dev (and, from the program,
 * /proc) are sealed read-only; the rest of the root is the function's scratch space. [child] code: no
 * allocation. */
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox/internal.h"
#include "util/defences.h"
#include "util/fd.h"

#define NEWROOT "/tmp" /* mount point (in our private mount namespace) where the root is assembled */
#define FAIL(...) fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, __VA_ARGS__)

#define SYSTEM_DIRS "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"
static const char *const k_system_dirs[] = {SYSTEM_DIRS};
/* What the root keeps read-only (fb_sandbox_reserved_path): the system dirs and the root's own system
 * entries; /.fnbox-none exists in test builds only. */
static const char *const k_reserved[] = {SYSTEM_DIRS, "/etc", "/proc", "/dev", "/.fnbox", "/.fnbox-none",
                                         "/node_modules" /* an environment's javascript.paths (spec.layers) */};
/* Directories of the root's own tmpfs sealed read-only by a bind over themselves once they are built: the
 * root stays writable (the function's scratch space), these do not. */
static const char *const k_sealed[] = {"/etc", "/.fnbox", "/dev"}; /* /proc: fb_rootfs_seal_proc */
/* Host /etc entries the sandbox sees. Every mount costs set-up and tear-down time on each call, so small
 * files are copied into the root tmpfs and symlinks recreated; only /etc/alternatives (hundreds of links
 * that commands like awk and cc resolve through) is bound. Nothing else of the host's /etc is visible. */
static const char *const k_etc_copies[] = {
    "ld.so.cache", "localtime", "ssl/openssl.cnf", "python3/debian_config",
    "python3.11/sitecustomize.py", "python3.12/sitecustomize.py", "python3.13/sitecustomize.py",
};
static const char *const k_etc_binds[] = {"alternatives", "php"}; /* php: php.ini and the extensions' conf.d */
#define FB_COPY_MAX (1 << 20) /* larger /etc files are not copied */
static const char *const k_dev_nodes[] = {"null", "zero", "full", "random", "urandom"};

static const char k_passwd[] = "root:x:0:0:root:/root:/usr/sbin/nologin\n"
                               "sandbox:x:1000:1000:fnbox sandbox:/workspace:/bin/sh\n"
                               "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n";
static const char k_group[] = "root:x:0:\nsandbox:x:1000:\nnogroup:x:65534:\n";
static const char k_nsswitch[] = "passwd: files\ngroup: files\nhosts: files\n";

static bool at_or_under(const char *path, const char *root)
{
    size_t n = strlen(root);
    return strncmp(path, root, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

bool fb_sandbox_reserved_path(const char *path)
{
    if (at_or_under(path, "/dev/shm"))
        return false;
    for (size_t i = 0; i < sizeof k_reserved / sizeof *k_reserved; i++)
        if (at_or_under(path, k_reserved[i]))
            return true;
    return false;
}

size_t fb_sandbox_reserved_roots(const char *const **list)
{
    *list = k_reserved;
    return sizeof k_reserved / sizeof *k_reserved;
}

size_t fb_sandbox_scratch_areas(const fb_sandbox_spec *spec, const char *out[FB_SANDBOX_MAX_SCRATCH])
{
    size_t n = 0;
    bool in_fuse = false;
    for (size_t i = 0; i < spec->nfuse; i++)
        in_fuse = in_fuse || at_or_under(spec->workdir, spec->fuse_paths[i]);
    if (!in_fuse)
        out[n++] = spec->workdir;
    out[n++] = "/tmp";
    out[n++] = "/dev/shm";
    out[n++] = "/";
    return n;
}

static int path_join(char *out, size_t cap, const char *a, const char *b, fb_error *err)
{
    int n = snprintf(out, cap, "%s%s", a, b);
    if (n < 0 || (size_t)n >= cap)
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, ENAMETOOLONG, "path %s%s", a, b);
    return 0;
}

static int mkdir_p(const char *path, mode_t mode, fb_error *err)
{
    char tmp[1024];
    if (snprintf(tmp, sizeof tmp, "%s", path) >= (int)sizeof tmp)
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, ENAMETOOLONG, "mkdir %s", path);
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(tmp, mode) < 0 && errno != EEXIST)
            return FAIL("mkdir %s", tmp);
        *p = '/';
    }
    if (mkdir(tmp, mode) < 0 && errno != EEXIST)
        return FAIL("mkdir %s", tmp);
    return 0;
}

/* A read-only bind must keep the flags the kernel locks on mounts inherited from a more privileged
 * namespace (nosuid, nodev, noexec, atime), or the remount fails with EPERM. */
static unsigned long locked_flags(const char *path)
{
    struct statvfs st;
    unsigned long f = 0;
    if (statvfs(path, &st) < 0)
        return 0;
    if (st.f_flag & ST_NOSUID)
        f |= MS_NOSUID;
    if (st.f_flag & ST_NODEV)
        f |= MS_NODEV;
    if (st.f_flag & ST_NOEXEC)
        f |= MS_NOEXEC;
    if (st.f_flag & ST_NOATIME)
        f |= MS_NOATIME;
    if (st.f_flag & ST_NODIRATIME)
        f |= MS_NODIRATIME;
    if (st.f_flag & ST_RELATIME)
        f |= MS_RELATIME;
    return f;
}

static int bind_ro(const char *src, const char *dst, fb_error *err)
{
    if (mount(src, dst, NULL, MS_BIND | MS_REC, NULL) < 0)
        return FAIL("bind %s", src);
    unsigned long flags = MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | locked_flags(dst);
    if (mount(NULL, dst, NULL, flags, NULL) < 0)
        return FAIL("remount read-only %s", dst);
    return 0;
}

/* A read-only overlay of the host directory src at dst: the same files, but inodes of this call's own
 * superblock. A bind would share the host's inodes, and with them every flock/fcntl lock taken on them: two
 * calls (or a call and the host) could signal each other by locking the interpreter binary. With no upper
 * layer overlayfs needs a second lower one: the empty NEWROOT/proc (proc is mounted over it later, the
 * overlay keeps the empty directory beneath). */
static int overlay_ro(const char *src, const char *name, const char *dst, fb_error *err)
{
    if (fb_defence_disabled("system-overlay")) /* test builds: the host's inodes, as a bind */
        return bind_ro(src, dst, err);
    char opts[1200];
    int n = snprintf(opts, sizeof opts, "lowerdir=%s:" NEWROOT "/proc", src);
    if (n < 0 || (size_t)n >= sizeof opts || strpbrk(src, ",:\\"))
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, EINVAL, "overlay of %s: path unusable as a lower layer", name);
    if (mount("overlay", dst, "overlay", MS_RDONLY | MS_NOSUID | MS_NODEV, opts) < 0)
        return fb_set_error(err, errno == ENODEV || errno == EPERM || errno == EINVAL ? FB_ERR_KERNEL_FEATURE
                                                                                         : FB_ERR_SANDBOX_SETUP,
                            errno, "mount a read-only overlay of %s (overlayfs in a user namespace, Linux 5.11+, "
                            "gives each call its own system tree: `fnbox doctor`)", name);
    return 0;
}

/* Opens path (absolute) in the system tree sys (an fd of "/" or of an environment's root), resolved inside
 * it: a root's symlinks, absolute ones and ".." included, never lead out of it; the last component is not
 * followed (a symlink is opened as itself), so what it is decides what is placed. */
static int open_sys(int sys, const char *path, int flags)
{
    struct open_how how = {.flags = (uint64_t)(flags | O_NOFOLLOW | O_CLOEXEC),
                           .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
    if (fb_defence_disabled("sysroot-resolve")) /* test builds: the root's symlinks followed as the host's */
        return openat(sys, path + 1, flags | O_NOFOLLOW | O_CLOEXEC);
    return (int)syscall(SYS_openat2, sys, path + 1, &how, sizeof how);
}

/* The path of an fd that the kernel's own lookups (mount sources, overlayfs layers) follow to the file it
 * was opened on, whatever its name: the mount never resolves a root's path a second time. */
static void fd_path(char out[32], int fd)
{
    snprintf(out, 32, "/proc/self/fd/%d", fd);
}

/* The entry fd (opened by open_sys) at dst: a symlink recreated with its text (inside, it resolves in the
 * sandbox's own root), a directory as a read-only overlay, a regular file bound read-only. Anything else (a
 * root's device nodes, fifos, sockets) is not placed. */
static int mirror_fd(int fd, const char *src, const char *dst, fb_error *err)
{
    struct stat st;
    char self[32];
    if (fstat(fd, &st) < 0)
        return FAIL("stat %s", src);
    fd_path(self, fd);
    if (S_ISLNK(st.st_mode)) {
        char target[1024];
        ssize_t n = readlinkat(fd, "", target, sizeof target - 1);
        if (n < 0)
            return FAIL("readlink %s", src);
        target[n] = '\0';
        if (symlink(target, dst) < 0)
            return FAIL("symlink %s", dst);
        return 0;
    }
    if (S_ISDIR(st.st_mode))
        return mkdir_p(dst, 0755, err) < 0 ? -1 : overlay_ro(self, src, dst, err);
    if (!S_ISREG(st.st_mode))
        return 0;
    int out = open(dst, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (out < 0)
        return FAIL("create mount point %s", dst);
    close(out);
    return bind_ro(self, dst, err);
}

/* Places the system tree's entry src (absolute; in sys, see open_sys) at the same place under NEWROOT:
 * bound, overlaid or recreated as a symlink (merged-/usr systems). An absent entry is skipped. */
static int mirror_path(int sys, const char *src, fb_error *err)
{
    char dst[1024];
    if (path_join(dst, sizeof dst, NEWROOT, src, err) < 0)
        return -1;
    int fd = open_sys(sys, src, O_PATH);
    if (fd < 0)
        return errno == ENOENT || errno == ENOTDIR ? 0 : FAIL("open %s in the system tree", src);
    int rc = mirror_fd(fd, src, dst, err);
    close(fd);
    return rc;
}

static int write_root_file(const char *path, const char *data, size_t len, mode_t mode, fb_error *err)
{
    char dst[1024];
    if (path_join(dst, sizeof dst, NEWROOT, path, err) < 0)
        return -1;
    char *slash = strrchr(dst, '/');
    *slash = '\0';
    if (mkdir_p(dst, 0755, err) < 0)
        return -1;
    *slash = '/';
    if (fb_write_file(dst, data, len, mode) < 0)
        return FAIL("write %s", path);
    return 0;
}

static int mount_tmpfs(const char *dst, uint64_t size, uint64_t inodes, const char *mode, fb_error *err)
{
    char opts[160];
    snprintf(opts, sizeof opts, "size=%llu,nr_inodes=%llu,mode=%s,uid=%d,gid=%d", (unsigned long long)size,
             (unsigned long long)inodes, mode, FB_INNER_UID, FB_INNER_GID);
    if (fb_defence_disabled("tmpfs-size")) /* test builds: the kernel's defaults (half of RAM) */
        snprintf(opts, sizeof opts, "mode=%s,uid=%d,gid=%d", mode, FB_INNER_UID, FB_INNER_GID);
    if (mkdir_p(dst, 0755, err) < 0)
        return -1;
    if (mount("tmpfs", dst, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0)
        return FAIL("mount tmpfs on %s", dst);
    return 0;
}

/* Copies a regular file (or recreates a symlink) from the system tree sys into the root. Absent or
 * unreadable entries are skipped: they are conveniences, not requirements. */
static int copy_into_root(int sys, const char *src, fb_error *err)
{
    struct stat st;
    char dst[1024], buf[65536], self[32];
    int at = open_sys(sys, src, O_PATH);
    if (at < 0)
        return 0;
    if (fstat(at, &st) < 0 || (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) || st.st_size > FB_COPY_MAX) {
        close(at);
        return 0;
    }
    if (S_ISLNK(st.st_mode)) {
        close(at);
        return mirror_path(sys, src, err);
    }
    fd_path(self, at); /* reopened for reading as the file found, not by its name again */
    int in = open(self, O_RDONLY | O_CLOEXEC);
    close(at);
    if (in < 0)
        return 0;
    int rc = path_join(dst, sizeof dst, NEWROOT, src, err);
    char *slash = strrchr(dst, '/');
    if (rc == 0) {
        *slash = '\0';
        rc = mkdir_p(dst, 0755, err);
        *slash = '/';
    }
    int out = rc == 0 ? open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644) : -1;
    if (rc == 0 && out < 0)
        rc = FAIL("create %s", dst);
    for (ssize_t n; rc == 0 && (n = read(in, buf, sizeof buf)) != 0;) {
        if (n < 0 || fb_write_all(out, buf, (size_t)n) < 0)
            rc = FAIL("copy %s", src);
    }
    close(in);
    if (out >= 0)
        close(out);
    return rc;
}

static int build_etc(int sys, fb_error *err)
{
    if (write_root_file("/etc/passwd", k_passwd, sizeof k_passwd - 1, 0644, err) < 0 ||
        write_root_file("/etc/group", k_group, sizeof k_group - 1, 0644, err) < 0 ||
        write_root_file("/etc/hosts", fb_netns_hosts, fb_netns_hosts_len, 0644, err) < 0 ||
        write_root_file("/etc/hostname", "fnbox\n", 6, 0644, err) < 0 ||
        write_root_file("/etc/nsswitch.conf", k_nsswitch, sizeof k_nsswitch - 1, 0644, err) < 0)
        return -1;
    char src[256];
    for (size_t i = 0; i < sizeof k_etc_copies / sizeof *k_etc_copies; i++) {
        snprintf(src, sizeof src, "/etc/%s", k_etc_copies[i]);
        if (copy_into_root(sys, src, err) < 0)
            return -1;
    }
    for (size_t i = 0; i < sizeof k_etc_binds / sizeof *k_etc_binds; i++) {
        snprintf(src, sizeof src, "/etc/%s", k_etc_binds[i]);
        if (mirror_path(sys, src, err) < 0)
            return -1;
    }
    return 0;
}

static int build_dev(const fb_sandbox_limits *lim, fb_error *err)
{
    /* /dev is a directory of the (later read-only) root: device nodes are bound onto files in it. */
    if (mkdir_p(NEWROOT "/dev", 0755, err) < 0)
        return -1;
    for (size_t i = 0; i < sizeof k_dev_nodes / sizeof *k_dev_nodes; i++) {
        char src[64], dst[128];
        snprintf(src, sizeof src, "/dev/%s", k_dev_nodes[i]);
        snprintf(dst, sizeof dst, NEWROOT "/dev/%s", k_dev_nodes[i]);
        int fd = open(dst, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
        if (fd < 0)
            return FAIL("create %s", dst);
        close(fd);
        if (mount(src, dst, NULL, MS_BIND, NULL) < 0)
            return FAIL("bind %s", src);
    }
    static const char *const links[][2] = {
        {"/proc/self/fd", "fd"}, {"/proc/self/fd/0", "stdin"}, {"/proc/self/fd/1", "stdout"},
        {"/proc/self/fd/2", "stderr"},
    };
    for (size_t i = 0; i < sizeof links / sizeof *links; i++) {
        char dst[128];
        snprintf(dst, sizeof dst, NEWROOT "/dev/%s", links[i][1]);
        if (symlink(links[i][0], dst) < 0)
            return FAIL("symlink %s", dst);
    }
    return mount_tmpfs(NEWROOT "/dev/shm", lim->tmp_bytes, lim->tmpfs_inodes, "1777", err);
}

static int build_proc(fb_error *err)
{
    if (mkdir_p(NEWROOT "/proc", 0555, err) < 0)
        return -1;
    if (fb_defence_disabled("pidns")) { /* test builds: the host's PID namespace, so the host's /proc */
        if (mount("/proc", NEWROOT "/proc", NULL, MS_BIND | MS_REC, NULL) < 0)
            return FAIL("bind /proc");
    } else if (mount("proc", NEWROOT "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0) {
        return FAIL("mount /proc");
    }
    /* /proc/sys is read-only: sysctls are per-namespace but some (e.g. ipc limits) are still ours. */
    if (fb_defence_disabled("rootfs"))
        return 0;
    return bind_ro(NEWROOT "/proc/sys", NEWROOT "/proc/sys", err);
}

static int enter_root(fb_error *err)
{
    if (mkdir(NEWROOT "/.oldroot", 0700) < 0)
        return FAIL("mkdir /.oldroot");
    if (syscall(SYS_pivot_root, NEWROOT, NEWROOT "/.oldroot") < 0)
        return FAIL("pivot_root");
    if (chdir("/") < 0)
        return FAIL("chdir /");
    if (umount2("/.oldroot", MNT_DETACH) < 0)
        return FAIL("umount old root");
    if (rmdir("/.oldroot") < 0)
        return FAIL("rmdir /.oldroot");
    return 0; /* "/" stays writable: the scratch root (what must not be written was sealed before) */
}

/* Seals the root's own system entries read-only (k_sealed); the binds are recursive, so /dev's nodes and
 * /dev/shm, and /proc/sys, keep their own mounts and flags. */
static int seal_system_entries(fb_error *err)
{
    for (size_t i = 0; i < sizeof k_sealed / sizeof *k_sealed; i++) {
        char dst[64];
        struct stat st;
        snprintf(dst, sizeof dst, NEWROOT "%s", k_sealed[i]);
        if (lstat(dst, &st) < 0 && errno == ENOENT)
            continue;
        if (bind_ro(dst, dst, err) < 0)
            return -1;
    }
    return 0;
}

int fb_rootfs_fresh_proc(fb_error *err)
{
    if (fb_defence_disabled("pidns"))
        return 0;
    if (unshare(CLONE_NEWNS) < 0)
        return FAIL("unshare(CLONE_NEWNS) for the program's /proc");
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
        return FAIL("make the program's mounts private");
    if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
        return FAIL("mount the program's /proc");
    if (fb_defence_disabled("rootfs"))
        return 0;
    return bind_ro("/proc/sys", "/proc/sys", err);
}

/* /proc is sealed by the program itself, once it has written its own user namespace's maps there
 * (fb_userns_lock_mounts). The bind is the program's own mount, not a locked one: the capability drop,
 * seccomp (the mount family) and Landlock (no mount changes) keep it. */
int fb_rootfs_seal_proc(fb_error *err)
{
    if (fb_defence_disabled("rootfs"))
        return 0;
    return bind_ro("/proc", "/proc", err);
}

/* The root's tmpfs: fnbox's own few files (4 MiB, 4096 inodes) plus the function's scratch space, sized like
 * /tmp. */
static int mount_root(const fb_sandbox_limits *lim, fb_error *err)
{
    char opts[160];
    unsigned long long size = (unsigned long long)lim->tmp_bytes + (4ULL << 20);
    unsigned long long inodes = (unsigned long long)lim->tmpfs_inodes + 4096ULL;
    snprintf(opts, sizeof opts, "size=%llu,nr_inodes=%llu,mode=0755", size, inodes);
    if (fb_defence_disabled("tmpfs-size")) /* test builds: the kernel's defaults (half of RAM) */
        snprintf(opts, sizeof opts, "mode=0755");
    if (mount("tmpfs", NEWROOT, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0)
        return FAIL("mount root tmpfs");
    return 0;
}

/* The workdir at or under a FUSE mount gets no tmpfs of its own. */
static bool in_fuse_mount(const fb_sandbox_spec *spec, const char *path)
{
    for (size_t i = 0; i < spec->nfuse; i++)
        if (at_or_under(path, spec->fuse_paths[i]))
            return true;
    return false;
}

static int mount_fuse(const char *path, int fd, fb_error *err)
{
    char dst[1024], opts[128];
    if (path_join(dst, sizeof dst, NEWROOT, path, err) < 0 || mkdir_p(dst, 0755, err) < 0)
        return -1;
    /* default_permissions is off on purpose: fnbox's server decides every access by the mount's rules */
    snprintf(opts, sizeof opts, "fd=%d,rootmode=40000,user_id=%d,group_id=%d", fd, FB_INNER_UID, FB_INNER_GID);
    if (mount("fnbox", dst, "fuse", MS_NOSUID | MS_NODEV, opts) < 0)
        return fb_set_error(err, errno == ENODEV || errno == EPERM ? FB_ERR_KERNEL_FEATURE : FB_ERR_SANDBOX_SETUP,
                            errno, "mount FUSE file system on %s", path);
    return 0;
}

static int open_scratch(const char *path, int *fds, size_t *n, fb_error *err)
{
    char dst[1024];
    if (path_join(dst, sizeof dst, NEWROOT, path, err) < 0)
        return -1;
    int fd = open(dst, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return FAIL("open %s", path);
    fds[(*n)++] = fd;
    return 0;
}

static int write_user_files(const fb_sandbox_spec *spec, fb_error *err)
{
    for (size_t i = 0; i < spec->nuser_files; i++) {
        const fb_sandbox_file *f = &spec->user_files[i];
        if (write_root_file(f->path, f->data, f->len, f->executable ? 0755 : 0644, err) < 0)
            return -1;
    }
    return 0;
}

/* Test builds ("rootfs" switch): the host's tree inside, as if there were no new root. Every top-level host
 * directory the root does not have yet is bound read-write (system calls only: we are a clone). */
static void host_tree_for_tests(void)
{
    int dfd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return;
    char buf[4096];
    long n;
    while ((n = syscall(SYS_getdents64, dfd, buf, sizeof buf)) > 0) {
        for (long off = 0; off < n;) {
            struct {
                unsigned long long ino;
                long long off;
                unsigned short reclen;
                unsigned char type;
                char name[];
            } *e = (void *)(buf + off);
            off += e->reclen;
            char src[300], dst[320];
            struct stat st;
            if (e->type != DT_DIR || e->name[0] == '.' || strlen(e->name) > 255)
                continue;
            snprintf(src, sizeof src, "/%s", e->name);
            snprintf(dst, sizeof dst, NEWROOT "/%s", e->name);
            if (lstat(dst, &st) == 0)
                continue; /* the root has its own (system dirs, /proc, /dev, /tmp, the workspace) */
            if (mkdir(dst, 0755) == 0)
                (void)mount(src, dst, NULL, MS_BIND | MS_REC, NULL);
        }
    }
    close(dfd);
}

/* What the root's system tree and layers come from, opened before the root's tmpfs is mounted on NEWROOT
 * (/tmp), which would hide anything under /tmp; from then on only these fds name them. */
typedef struct sources {
    int sys;                                                   /* "/" or spec.sysroot */
    int layer[FB_SANDBOX_MAX_LAYERS][FB_SANDBOX_MAX_LAYER_SRCS]; /* spec.layers' directories */
} sources;

static void close_sources(const fb_sandbox_spec *spec, sources *s)
{
    if (s->sys >= 0)
        close(s->sys);
    for (size_t l = 0; l < spec->nlayers && l < FB_SANDBOX_MAX_LAYERS; l++)
        for (size_t i = 0; i < spec->layers[l].nsrcs && i < FB_SANDBOX_MAX_LAYER_SRCS; i++)
            if (s->layer[l][i] >= 0)
                close(s->layer[l][i]);
}

static int open_sources(const fb_sandbox_spec *spec, sources *s, fb_error *err)
{
    memset(s, -1, sizeof *s);
    const char *sys = spec->sysroot ? spec->sysroot : "/";
    if (spec->nlayers > FB_SANDBOX_MAX_LAYERS)
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, E2BIG, "more than %d layers", FB_SANDBOX_MAX_LAYERS);
    for (size_t l = 0; l < spec->nlayers; l++) {
        const fb_sandbox_layer *ly = &spec->layers[l];
        if (ly->nsrcs == 0 || ly->nsrcs > FB_SANDBOX_MAX_LAYER_SRCS)
            return fb_set_error(err, FB_ERR_SANDBOX_SETUP, E2BIG, "layer %s: 1 to %d directories", ly->dst,
                                FB_SANDBOX_MAX_LAYER_SRCS);
        for (size_t i = 0; i < ly->nsrcs; i++)
            if ((s->layer[l][i] = open(ly->srcs[i], O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
                return FAIL("open %s (a layer of %s)", ly->srcs[i], ly->dst);
    }
    s->sys = open(sys, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (s->sys < 0)
        return FAIL("open the system root %s", sys);
    return 0;
}

/* One layer: a read-only overlay of its directories (through their fds) at its place in the root. A single
 * directory takes the empty NEWROOT/proc as overlayfs's second lower layer, as overlay_ro does. */
static int mount_layer(const fb_sandbox_layer *ly, const int *fds, fb_error *err)
{
    char opts[FB_SANDBOX_MAX_LAYER_SRCS * 24 + 32], dst[1024];
    size_t n = (size_t)snprintf(opts, sizeof opts, "lowerdir=");
    for (size_t i = 0; i < ly->nsrcs; i++)
        n += (size_t)snprintf(opts + n, sizeof opts - n, "%s/proc/self/fd/%d", i ? ":" : "", fds[i]);
    if (ly->nsrcs == 1)
        snprintf(opts + n, sizeof opts - n, ":" NEWROOT "/proc");
    if (path_join(dst, sizeof dst, NEWROOT, ly->dst, err) < 0 || mkdir_p(dst, 0755, err) < 0)
        return -1;
    if (mount("overlay", dst, "overlay", MS_RDONLY | MS_NOSUID | MS_NODEV, opts) < 0)
        return FAIL("mount the read-only overlay of %s at %s", ly->srcs[0], ly->dst);
    return 0;
}

static int build_root(const fb_sandbox_spec *spec, const sources *srcs, const int *fuse_fds, int *scratch_fds,
                      size_t *nscratch, fb_error *err)
{
    char dst[1024];
    *nscratch = 0;
    bool host_tree = fb_defence_disabled("rootfs");
    /* the host's /tmp, before the root is assembled over it (test builds only) */
    int host_tmp = host_tree ? open("/tmp", O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
        return FAIL("make mounts private");
    if (mount_root(&spec->limits, err) < 0)
        return -1;
    if (mkdir_p(NEWROOT "/proc", 0555, err) < 0) /* first: the system overlays' empty second layer */
        return -1;
    for (size_t i = 0; i < sizeof k_system_dirs / sizeof *k_system_dirs; i++)
        if (mirror_path(srcs->sys, k_system_dirs[i], err) < 0)
            return -1;
    for (size_t l = 0; l < spec->nlayers; l++) /* before /proc is mounted: see mount_layer */
        if (mount_layer(&spec->layers[l], srcs->layer[l], err) < 0)
            return -1;
    if (build_etc(srcs->sys, err) < 0 || build_proc(err) < 0)
        return -1;
    if (host_tree) { /* test builds: the host's /dev and /tmp */
        char fdpath[64];
        snprintf(fdpath, sizeof fdpath, "/proc/self/fd/%d", host_tmp);
        if (mkdir_p(NEWROOT "/dev", 0755, err) < 0 || mkdir_p(NEWROOT "/tmp", 01777, err) < 0)
            return -1;
        if (mount("/dev", NEWROOT "/dev", NULL, MS_BIND | MS_REC, NULL) < 0 ||
            mount(fdpath, NEWROOT "/tmp", NULL, MS_BIND, NULL) < 0) /* not MS_REC: the root is mounted on it */
            return FAIL("bind the host's /dev and /tmp");
        close(host_tmp);
    } else if (build_dev(&spec->limits, err) < 0 ||
               mount_tmpfs(NEWROOT "/tmp", spec->limits.tmp_bytes, spec->limits.tmpfs_inodes, "1777", err) < 0) {
        return -1;
    }
    for (size_t i = 0; i < spec->nfiles; i++)
        if (write_root_file(spec->files[i].path, spec->files[i].data, spec->files[i].len,
                            spec->files[i].executable ? 0555 : 0444, err) < 0)
            return -1;
    bool fuse_workdir = in_fuse_mount(spec, spec->workdir);
    if (!fuse_workdir && (path_join(dst, sizeof dst, NEWROOT, spec->workdir, err) < 0 ||
                          mount_tmpfs(dst, spec->limits.workspace_bytes, spec->limits.tmpfs_inodes, "0755", err) < 0))
        return -1;
    /* The request's files go in before the mounts, so none can land in a mount point's place. */
    if (write_user_files(spec, err) < 0)
        return -1;
    for (size_t i = 0; i < spec->nfuse; i++)
        if (mount_fuse(spec->fuse_paths[i], fuse_fds[i], err) < 0)
            return -1;
    /* test builds: the host's /tmp and /dev/shm are not the call's to track; an empty stand-in is */
    if (host_tree && (mkdir_p(NEWROOT "/.fnbox-none", 0555, err) < 0))
        return -1;
    /* the prepared program's file is written after the seal, through this (prepared.c place_program) */
    int fnbox_dir = -1;
    if (spec->program_later) {
        if (mkdir_p(NEWROOT "/.fnbox", 0755, err) < 0)
            return -1;
        fnbox_dir = open(NEWROOT "/.fnbox", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fnbox_dir < 0)
            return FAIL("open /.fnbox");
    }
    if (host_tree)
        host_tree_for_tests();
    else if (seal_system_entries(err) < 0)
        return -1;
    const char *areas[FB_SANDBOX_MAX_SCRATCH];
    size_t nareas = spec->keep_scratch ? fb_sandbox_scratch_areas(spec, areas) : 0;
    for (size_t i = 0; i < nareas; i++) {
        bool host_area = host_tree && (strcmp(areas[i], "/tmp") == 0 || strcmp(areas[i], "/dev/shm") == 0);
        if (open_scratch(host_area ? "/.fnbox-none" : areas[i], scratch_fds, nscratch, err) < 0)
            return -1;
    }
    if (fnbox_dir >= 0)
        scratch_fds[(*nscratch)++] = fnbox_dir;
    return 0;
}

int fb_rootfs_build(const fb_sandbox_spec *spec, const int *fuse_fds, int *scratch_fds, size_t *nscratch,
                    fb_error *err)
{
    sources srcs;
    *nscratch = 0;
    int rc = open_sources(spec, &srcs, err);
    if (rc == 0)
        rc = build_root(spec, &srcs, fuse_fds, scratch_fds, nscratch, err);
    close_sources(spec, &srcs); /* before the program can see any of them */
    return rc < 0 ? -1 : enter_root(err);
}

int fb_rootfs_enter_cwd(const fb_sandbox_spec *spec, fb_error *err)
{
    if (chdir(spec->workdir) < 0)
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "chdir %s", spec->workdir);
    if (!spec->cwd)
        return 0;
    if (mkdir_p(spec->cwd, 0755, err) < 0)
        return fb_wrap_error(err, "cwd");
    if (chdir(spec->cwd) < 0)
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "cwd: chdir %s", spec->cwd);
    return 0;
}
