/* Feature probes. The decisive one starts a real sandbox running /bin/true: if that works, every
 * namespace, mount, seccomp and rlimit step works on this kernel, as this user. */
#include "sandbox/features.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox/internal.h"

static int read_first_line(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    char *r = fgets(buf, (int)cap, f);
    fclose(f);
    if (!r)
        return -1;
    buf[strcspn(buf, "\n")] = '\0';
    return 0;
}

static fb_feature *add(fb_feature *out, size_t cap, size_t *n, const char *name, bool required)
{
    if (*n >= cap)
        return NULL;
    fb_feature *f = &out[(*n)++];
    memset(f, 0, sizeof *f);
    snprintf(f->name, sizeof f->name, "%s", name);
    f->required = required;
    return f;
}

static void probe_userns(fb_feature *f)
{
    char v[64];
    f->ok = true;
    if (read_first_line("/proc/sys/user/max_user_namespaces", v, sizeof v) == 0 && strcmp(v, "0") == 0) {
        f->ok = false;
        snprintf(f->detail, sizeof f->detail, "user.max_user_namespaces is 0");
        snprintf(f->fix, sizeof f->fix, "sysctl -w user.max_user_namespaces=15000");
        return;
    }
    if (geteuid() != 0 && read_first_line("/proc/sys/kernel/unprivileged_userns_clone", v, sizeof v) == 0 &&
        strcmp(v, "0") == 0) {
        f->ok = false;
        snprintf(f->detail, sizeof f->detail, "kernel.unprivileged_userns_clone is 0");
        snprintf(f->fix, sizeof f->fix, "sysctl -w kernel.unprivileged_userns_clone=1, or run fnbox as root");
        return;
    }
    if (geteuid() != 0 && read_first_line("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", v, sizeof v) == 0 &&
        strcmp(v, "1") == 0) {
        snprintf(f->detail, sizeof f->detail, "AppArmor restricts unprivileged user namespaces (Ubuntu 24.04+)");
        snprintf(f->fix, sizeof f->fix, "add an AppArmor profile allowing userns for fnbox, or run fnbox as root");
        return;
    }
    snprintf(f->detail, sizeof f->detail, "enabled");
}

static void probe_seccomp(fb_feature *f)
{
    char v[256];
    f->ok = read_first_line("/proc/sys/kernel/seccomp/actions_avail", v, sizeof v) == 0 && strstr(v, "errno");
    snprintf(f->detail, sizeof f->detail, "%s", f->ok ? v : "seccomp filters are not available");
    if (!f->ok)
        snprintf(f->fix, sizeof f->fix, "use a kernel built with CONFIG_SECCOMP_FILTER");
}

static void probe_pidfd(fb_feature *f)
{
    int fd = (int)syscall(SYS_pidfd_open, getpid(), 0);
    f->ok = fd >= 0;
    if (fd >= 0)
        close(fd);
    snprintf(f->detail, sizeof f->detail, "%s", f->ok ? "available" : strerror(errno));
    if (!f->ok)
        snprintf(f->fix, sizeof f->fix, "Linux 5.3 or later is required");
}

/* Landlock is a second layer for paths (and, from ABI 6, abstract sockets and signals), isolated anyway by
 * the namespaces, read-only locked mounts, dropped capabilities and seccomp; but it alone enforces
 * permissions.childProcess, so without it only calls allowing every command run (fail closed). */
static void probe_landlock(fb_feature *f)
{
    int why = 0;
    int abi = fb_landlock_abi(&why);
    f->ok = abi > 0;
    if (f->ok)
        snprintf(f->detail, sizeof f->detail, "ABI %d: second layer on (paths, execute%s)", abi,
                 abi >= 6 ? ", abstract unix socket and signal scoping" : "; no socket/signal scoping before ABI 6");
    else
        snprintf(f->detail, sizeof f->detail,
                 "unavailable (%s): it alone restricts which programs a function may start, so calls are "
                 "refused (KernelFeatureMissing) unless they allow every command (permissions.childProcess: "
                 "true); namespaces, read-only locked mounts and seccomp still apply",
                 strerror(why));
    if (!f->ok)
        snprintf(f->fix, sizeof f->fix, "boot a kernel with CONFIG_SECURITY_LANDLOCK=y and landlock in its lsm= "
                                        "list (Linux 5.13+; 6.12+ for socket and signal scoping)");
}

/* Host mounts are served over FUSE: /dev/fuse must open read-write for the user running fnbox. */
static void probe_fuse(fb_feature *f)
{
    int fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
    f->ok = fd >= 0;
    if (fd >= 0)
        close(fd);
    snprintf(f->detail, sizeof f->detail, "%s",
             f->ok ? "/dev/fuse opens: host mounts (mount.dirs) available" : strerror(errno));
    if (!f->ok)
        snprintf(f->fix, sizeof f->fix,
                 "load the fuse module and give the fnbox user read-write access to /dev/fuse; without it "
                 "requests with `mount` are refused (calls without mounts are unaffected)");
}

static void probe_cgroup(fb_feature *f)
{
    fb_sandbox_limits lim = {.memory_bytes = 64ULL << 20, .pids = 16};
    fb_cgroup cg;
    fb_cgroup_create(&cg, &lim, false, NULL);
    f->ok = cg.memory_dir[0] != '\0';
    snprintf(f->detail, sizeof f->detail, "memory limit by %s; pids limit by %s", cg.mechanism,
             cg.pids_dir[0] ? (cg.v2 ? "cgroup v2" : "cgroup v1") : "RLIMIT_NPROC (per user, shared by calls)");
    if (!f->ok)
        snprintf(f->fix, sizeof f->fix,
                 "make a writable cgroup available (run as root, or delegate a cgroup v2 subtree with memory and "
                 "pids controllers); without it memory is capped by RLIMIT_DATA");
    fb_cgroup_destroy(&cg);
}

static void probe_sandbox(fb_feature *f)
{
    char *const argv[] = {"/bin/true", NULL};
    char *const envp[] = {NULL};
    fb_sandbox_spec spec = {.exec_path = "/bin/true", .argv = argv, .envp = envp, .workdir = "/workspace",
                            .cancel_fd = -1};
    spec.limits = (fb_sandbox_limits){.timeout_s = 10, .memory_bytes = 64ULL << 20, .pids = 16, .nofile = 64,
                                      .fsize_bytes = 1 << 20, .workspace_bytes = 1 << 20, .tmp_bytes = 1 << 20,
                                      .tmpfs_inodes = 64, .output_bytes = 4096, .result_bytes = 4096};
    fb_sandbox_outcome out;
    fb_error err = {0};
    int rc = fb_sandbox_run(&spec, &out, &err);
    f->ok = rc == 0 && out.exited && out.exit_code == 0;
    if (rc < 0)
        snprintf(f->detail, sizeof f->detail, "%.40s: %.200s", fb_error_type(&err), err.message);
    else
        snprintf(f->detail, sizeof f->detail, f->ok ? "namespaces, pivot_root, seccomp and limits work"
                                                    : "the test program did not exit cleanly");
    if (!f->ok)
        snprintf(f->fix, sizeof f->fix, "see the detail; run `fnbox doctor` as the user that runs fnbox");
    fb_sandbox_outcome_free(&out);
}

size_t fb_features_probe(fb_feature *out, size_t cap)
{
    size_t n = 0;
    fb_feature *f;
    if ((f = add(out, cap, &n, "user namespaces", true)))
        probe_userns(f);
    if ((f = add(out, cap, &n, "seccomp", true)))
        probe_seccomp(f);
    if ((f = add(out, cap, &n, "pidfd_open", true)))
        probe_pidfd(f);
    if ((f = add(out, cap, &n, "cgroup limits", false)))
        probe_cgroup(f);
    if ((f = add(out, cap, &n, "fuse (host mounts)", false)))
        probe_fuse(f);
    if ((f = add(out, cap, &n, "landlock", true)))
        probe_landlock(f);
    if ((f = add(out, cap, &n, "sandbox start", true)))
        probe_sandbox(f);
    return n;
}
