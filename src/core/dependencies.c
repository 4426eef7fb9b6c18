/* Dependency layers (dependencies.h). docs/internals/dependencies.md has the whole picture.
 *
 *   key    = SHA-256(format, ecosystem, environment name and root, index URL, installer path,
 *                    the normalized list)                         (lang/compile_cache.c's fb_cache_hash)
 *   layer  = <cache dir>/layers/<key>/          pip's --target directory, or npm's node_modules
 *            <cache dir>/layers/<key>.bytes     its size, for the bound
 *            <cache dir>/layers/<key>.lock      flock'ed while it is looked up or built
 *
 * A missing layer is built under an exclusive flock of its lock file. flock belongs to the open file
 * description, so two requests of one process (threads of `fnbox serve`) exclude each other as two
 * processes do: one lock serves both cases, and whoever waited finds the layer built (a "hit"). The build
 * runs the installer in a sandbox of its own (the environment's system tree, the sandbox's user, limits,
 * its network only the index's host:port through the allow-list proxy), into its tmpfs workdir; what the
 * installer left there is copied out (regular files, directories and symlinks only; no set-id bit; mtimes
 * kept, so the .pyc files pip wrote stay valid) into a temporary directory, which is renamed into place:
 * a layer is whole or absent. A failed install leaves nothing behind. After a build the directory is
 * pruned to its bounds, least recently used first (a hit touches its layer). */
#include "core/dependencies.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/launch.h"
#include "lang/lang.h"
#include "net/policy.h"
#include "net/proxy.h"
#include "sandbox/sandbox.h"
#include "util/fd.h"

#define KEY_FORMAT "fnbox-deps-1"
#define LAYERS_DIR "layers"
#define BUILD_DIR "/build"
#define LAYER_PATH "/build/layer" /* where the installer installs, under BUILD_DIR */
#define MAX_DEPTH 64
#define STALE_TMP_S 3600
#define OUTPUT_TAIL 1500 /* the installer's output kept in the error message (FB_ERROR_MSG_MAX) */

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---- the installers ---- */

typedef struct installer {
    fb_env_lang lang;                 /* whose search path the layer joins */
    const char *const *candidates;    /* where the installer is looked for, in the environment's tree */
    const char *layer;                /* what becomes the layer, relative to BUILD_DIR */
    const char *const *env;           /* its environment, after fnbox's base and the proxy's */
} installer;

static const char *const k_pip[] = {"/usr/bin/python3", "/usr/local/bin/python3", NULL};
static const char *const k_npm[] = {"/usr/bin/npm", "/usr/local/bin/npm", NULL};
/* pip: no configuration file or cache of the user's, no version check, no prompt */
static const char *const k_pip_env[] = {"PIP_CONFIG_FILE=/dev/null", "PIP_NO_CACHE_DIR=1",
                                        "PIP_DISABLE_PIP_VERSION_CHECK=1", "PIP_NO_INPUT=1",
                                        "PIP_ROOT_USER_ACTION=ignore", NULL};
/* npm: its cache in the sandbox's /tmp, no user configuration, no update check; the proxy by its own
 * settings (npm does not read HTTP_PROXY for every request) */
static const char *const k_npm_env[] = {"npm_config_userconfig=/dev/null", "npm_config_globalconfig=/tmp/.npmrc-none",
                                        "npm_config_cache=/tmp/.npm", "npm_config_update_notifier=false",
                                        "npm_config_proxy=http://127.0.0.1:3128",
                                        "npm_config_https_proxy=http://127.0.0.1:3128", "npm_config_noproxy=",
                                        "npm_config_fund=false", "npm_config_audit=false", NULL};

static const installer k_installers[FB_DEPS_NECOS] = {
    [FB_DEPS_PYTHON] = {FB_ENV_PYTHON, k_pip, "layer", k_pip_env},
    [FB_DEPS_JAVASCRIPT] = {FB_ENV_JAVASCRIPT, k_npm, "layer/node_modules", k_npm_env},
};

#define MAX_ARGV (24 + FB_DEPS_MAX_ENTRIES)

/* The installer's command line: options fnbox chooses, "--", then the entries (request/dependencies.c
 * let through names and versions only). Python: wheels only (--only-binary :all:), so no code of a
 * package runs at install time; dependencies resolved from the same index. */
static void installer_argv(fb_deps_eco eco, const char *exe, const char *index, const fb_dependencies *d,
                           const char **argv)
{
    size_t a = 0;
    argv[a++] = exe;
    if (eco == FB_DEPS_PYTHON) {
        static const char *const k_opts[] = {"-I", "-m", "pip", "install", "--target", LAYER_PATH,
                                             "--only-binary", ":all:", "--no-warn-script-location",
                                             "--progress-bar", "off", "--index-url", NULL};
        for (const char *const *o = k_opts; *o; o++)
            argv[a++] = *o;
    } else {
        static const char *const k_opts[] = {"install", "--prefix", LAYER_PATH, "--no-save",
                                             "--no-package-lock", "--loglevel", "error", "--registry", NULL};
        for (const char *const *o = k_opts; *o; o++)
            argv[a++] = *o;
    }
    argv[a++] = index;
    argv[a++] = "--";
    for (size_t i = 0; i < d->n[eco]; i++)
        argv[a++] = d->items[eco][i];
    argv[a] = NULL;
}

/* The first of candidates executable in env's tree (the host's without a root). */
static const char *find_installer(const char *const *candidates, const fb_environment *env)
{
    for (const char *const *c = candidates; *c; c++)
        if (env && env->root ? fb_lang_executable_in(env->root, *c) : access(*c, X_OK) == 0)
            return *c;
    return NULL;
}

/* ---- the index ---- */

static const char *index_of(fb_deps_eco eco, const fb_environment *env)
{
    if (!env)
        env = fb_environments_find(fb_environments_current(), FB_DEPS_HOST_ENVIRONMENT);
    if (!env)
        return NULL;
    return eco == FB_DEPS_PYTHON ? env->index_python : env->index_npm;
}

/* "host:port" of an http(s) URL (request/environments.c checked the scheme), for the build's policy. */
static int index_destination(const char *url, char *out, size_t cap, fb_error *err)
{
    bool https = strncmp(url, "https://", 8) == 0;
    const char *h = url + (https ? 8 : 7);
    size_t hl = strcspn(h, "/?#");
    const char *at = memchr(h, '@', hl); /* user:password@ */
    if (at) {
        hl -= (size_t)(at + 1 - h);
        h = at + 1;
    }
    const char *colon = NULL;
    if (h[0] == '[') {
        const char *close = memchr(h, ']', hl);
        colon = close && (size_t)(close + 1 - h) < hl && close[1] == ':' ? close + 1 : NULL;
    } else
        colon = memchr(h, ':', hl);
    int n = colon ? snprintf(out, cap, "%.*s", (int)hl, h)
                  : snprintf(out, cap, "%.*s:%d", (int)hl, h, https ? 443 : 80);
    if (hl == 0 || n < 0 || (size_t)n >= cap)
        return fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, "indexes: no host in \"%.200s\"", url);
    return 0;
}

/* ---- the cache directory ---- */

/* <cache dir>/layers, opened, with its path (for the sandbox's overlay). */
static int layers_open(char *path, size_t cap, fb_error *err)
{
    int cfd = fb_cache_dir_open();
    if (cfd < 0)
        return fb_set_error(err, FB_ERR_KERNEL_FEATURE, 0, "dependencies: no cache directory for their layers "
                            "(set FNBOX_CACHE_DIR to a directory of fnbox's user)");
    /* 0711: a sandbox's init (nobody, when fnbox runs as root) opens a layer by its path; nobody lists them */
    if (mkdirat(cfd, LAYERS_DIR, 0711) < 0 && errno != EEXIST) {
        fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "dependencies: mkdir %s in the cache", LAYERS_DIR);
        fb_close(&cfd);
        return -1;
    }
    int fd = openat(cfd, LAYERS_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    fb_close(&cfd);
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) < 0 || ((st.st_mode & 0777) != 0711 && fchmod(fd, 0711) < 0)))
        fb_close(&fd);
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    ssize_t n = fd >= 0 ? readlink(proc, path, cap - 1) : -1;
    if (n <= 0 || (size_t)n >= cap - 1) {
        fb_close(&fd);
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "dependencies: the cache's %s directory", LAYERS_DIR);
    }
    path[n] = '\0';
    return fd;
}

/* Removes name (a file, or a directory tree) under dfd, never following a symlink. */
static void remove_tree(int dfd, const char *name, int depth)
{
    if (unlinkat(dfd, name, 0) == 0 || (errno != EISDIR && errno != EPERM) || depth <= 0)
        return;
    int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
    if (!dir) {
        fb_close(&fd);
        return;
    }
    struct dirent *de;
    // cppcheck-suppress readdirCalled
    while ((de = readdir(dir)) != NULL)
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
            remove_tree(dirfd(dir), de->d_name, depth - 1);
    closedir(dir);
    unlinkat(dfd, name, AT_REMOVEDIR);
}

/* ---- copying the installer's output out of the build sandbox ---- */

typedef struct copy_budget {
    uint64_t bytes, files;
} copy_budget;

static int copy_file(int sfd, int dfd, const char *name, const struct stat *st, copy_budget *b)
{
    int in = openat(sfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    /* no set-id bit, no group or other write: an executable stays one */
    int out = in >= 0 ? openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                               (st->st_mode & 0111) ? 0755 : 0644)
                      : -1;
    int rc = out >= 0 ? 0 : -1;
    char buf[65536];
    for (ssize_t n; rc == 0 && (n = read(in, buf, sizeof buf)) != 0;) {
        b->bytes += n > 0 ? (uint64_t)n : 0;
        if (n < 0 || b->bytes > FB_DEPS_MAX_LAYER_BYTES || fb_write_all(out, buf, (size_t)n) < 0)
            rc = -1;
    }
    struct timespec times[2] = {st->st_atim, st->st_mtim}; /* pip's .pyc files check their source's mtime */
    if (rc == 0)
        futimens(out, times);
    fb_close(&in);
    fb_close(&out);
    return rc;
}

static int copy_tree(int sfd, int dfd, int depth, copy_budget *b);

static int copy_entry(int sfd, int dfd, const char *name, int depth, copy_budget *b)
{
    struct stat st;
    if (fstatat(sfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || ++b->files > FB_DEPS_MAX_LAYER_FILES)
        return -1;
    if (S_ISREG(st.st_mode))
        return copy_file(sfd, dfd, name, &st, b);
    if (S_ISLNK(st.st_mode)) {
        /* kept as it is: it resolves inside the sandbox that mounts the layer, never on the host */
        char target[PATH_MAX];
        ssize_t n = readlinkat(sfd, name, target, sizeof target - 1);
        if (n < 0)
            return -1;
        target[n] = '\0';
        return symlinkat(target, dfd, name);
    }
    if (!S_ISDIR(st.st_mode) || depth <= 0)
        return 0; /* devices, fifos, sockets: nothing a package needs */
    if (mkdirat(dfd, name, 0755) < 0)
        return -1;
    int s2 = openat(sfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int d2 = s2 >= 0 ? openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
    int rc = d2 >= 0 ? copy_tree(s2, d2, depth - 1, b) : -1;
    fb_close(&s2);
    fb_close(&d2);
    return rc;
}

static int copy_tree(int sfd, int dfd, int depth, copy_budget *b)
{
    int fd = fcntl(sfd, F_DUPFD_CLOEXEC, 0);
    DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
    if (!dir) {
        fb_close(&fd);
        return -1;
    }
    int rc = 0;
    struct dirent *de;
    // cppcheck-suppress readdirCalled
    while (rc == 0 && (de = readdir(dir)) != NULL)
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
            rc = copy_entry(sfd, dfd, de->d_name, depth, b);
    closedir(dir);
    return rc;
}

/* ---- the bound ---- */

typedef struct layer_entry {
    char name[FB_CACHE_KEY_SIZE];
    struct timespec mtime;
    uint64_t bytes;
} layer_entry;

static int by_mtime(const void *a, const void *b)
{
    const layer_entry *x = a, *y = b;
    if (x->mtime.tv_sec != y->mtime.tv_sec)
        return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
    return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : x->mtime.tv_nsec > y->mtime.tv_nsec;
}

static uint64_t read_bytes(int dfd, const char *key)
{
    char name[96], text[32] = "";
    snprintf(name, sizeof name, "%.64s.bytes", key);
    int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, text, sizeof text - 1) : -1;
    fb_close(&fd);
    text[n > 0 ? n : 0] = '\0';
    return strtoull(text, NULL, 10);
}

static void drop_layer(int dfd, const char *key)
{
    char name[96];
    remove_tree(dfd, key, MAX_DEPTH + 2);
    snprintf(name, sizeof name, "%.64s.bytes", key);
    unlinkat(dfd, name, 0);
}

/* Keeps the layers within FB_DEPS_MAX_LAYERS and FB_DEPS_MAX_BYTES (least recently used out first) and
 * removes temporaries a crashed build left behind. A layer a running call has mounted stays readable to
 * it: its overlay holds the directories it opened. */
static void prune(int dfd, const char *keep)
{
    int fd = fcntl(dfd, F_DUPFD_CLOEXEC, 0);
    DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
    if (!dir) {
        fb_close(&fd);
        return;
    }
    layer_entry *list = NULL;
    size_t n = 0, cap = 0;
    uint64_t total = 0;
    time_t now = time(NULL);
    struct dirent *de;
    // cppcheck-suppress readdirCalled
    while ((de = readdir(dir)) != NULL) {
        struct stat st;
        if (de->d_name[0] == '.' || fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
            continue;
        if (strstr(de->d_name, ".tmp.")) {
            if (now - st.st_mtim.tv_sec > STALE_TMP_S)
                remove_tree(dfd, de->d_name, MAX_DEPTH + 2);
            continue;
        }
        if (strlen(de->d_name) != FB_CACHE_KEY_SIZE - 1 || strcmp(de->d_name, keep) == 0)
            continue;
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 64;
            layer_entry *p = realloc(list, ncap * sizeof *p);
            if (!p)
                break;
            list = p;
            cap = ncap;
        }
        memcpy(list[n].name, de->d_name, FB_CACHE_KEY_SIZE);
        list[n].mtime = st.st_mtim;
        list[n].bytes = read_bytes(dfd, de->d_name);
        total += list[n].bytes;
        n++;
    }
    closedir(dir);
    total += read_bytes(dfd, keep);
    if (n)
        qsort(list, n, sizeof *list, by_mtime);
    for (size_t i = 0; i < n && (n - i + 1 > FB_DEPS_MAX_LAYERS || total > FB_DEPS_MAX_BYTES); i++) {
        drop_layer(dfd, list[i].name);
        total -= list[i].bytes;
    }
    free(list);
}

/* ---- one build ---- */

/* The installer's output for the error: its stderr then stdout, the last OUTPUT_TAIL bytes of each. */
static int install_failed(const fb_sandbox_outcome *o, fb_deps_eco eco, fb_error *err)
{
    const fb_buf *e = &o->errout, *s = &o->out;
    size_t el = e->len > OUTPUT_TAIL ? OUTPUT_TAIL : e->len, sl = s->len > OUTPUT_TAIL / 3 ? OUTPUT_TAIL / 3 : s->len;
    const char *why = o->timed_out ? "timed out" : o->oom_killed ? "ran out of memory" : "failed";
    return fb_set_error(err, FB_ERR_DEPENDENCY_INSTALL, 0, "dependencies.%s: the installer %s (exit %d):\n%.*s%s%.*s",
                        fb_deps_eco_key(eco), why, o->exited ? o->exit_code : 128 + o->term_signal, (int)el,
                        e->data ? e->data + e->len - el : "", el && sl ? "\n" : "", (int)sl,
                        s->data ? s->data + s->len - sl : "");
}

/* Runs the installer in its sandbox; on success *o holds the scratch areas (keep_scratch). */
static int run_installer(fb_deps_eco eco, const fb_environment *env, const fb_dependencies *d, const char *index,
                         int cancel_fd, fb_sandbox_outcome *o, fb_error *err)
{
    const installer *in = &k_installers[eco];
    const char *exe = find_installer(in->candidates, env);
    if (!exe)
        return fb_set_error(err, FB_ERR_KERNEL_FEATURE, 0, "dependencies.%s: no installer (%s) in %s%s",
                            fb_deps_eco_key(eco), in->candidates[0], env ? "environment " : "the host's system",
                            env ? env->name : "");
    char dest[300];
    const char *pattern = dest;
    fb_net_policy *pol = NULL;
    if (index_destination(index, dest, sizeof dest, err) < 0 ||
        fb_net_policy_from_patterns(false, &pattern, 1, "indexes", &pol, err) < 0)
        return -1;
    const char *argv[MAX_ARGV], *envp[64];
    installer_argv(eco, exe, index, d, argv);
    const char *const *const layers[] = {fb_launch_base_env, fb_proxy_env, in->env};
    fb_proxy_call net = {.policy = pol};
    fb_sandbox_spec spec = {
        .exec_path = exe, .argv = (char *const *)argv, .envp = (char *const *)envp, .workdir = BUILD_DIR,
        .cancel_fd = cancel_fd, .exec_any = true, /* pip's and npm's helpers, a package's install script */
        .keep_scratch = true, .input_on_stdin = true, .no_result_fd = true, .proxy_listen = true,
        .on_proxy = fb_proxy_on_listen, .proxy_ctx = &net,
        .limits = {.timeout_s = FB_DEPS_INSTALL_TIMEOUT_S, .memory_bytes = FB_MAX_MEMORY_BYTES / 4,
                   .pids = FB_MAX_PIDS / 4, .nofile = FB_MAX_NOFILE, .fsize_bytes = FB_DEPS_MAX_LAYER_BYTES,
                   .workspace_bytes = FB_DEPS_MAX_LAYER_BYTES, .tmp_bytes = FB_MAX_TMP_BYTES,
                   .tmpfs_inodes = FB_DEPS_MAX_LAYER_FILES, .output_bytes = (size_t)256 * 1024, .result_bytes = 0,
                   .cpu_seconds = (uint64_t)FB_DEPS_INSTALL_TIMEOUT_S}};
    spec.sysroot = env ? env->root : NULL; /* the environment's installer, in its own system tree */
    int rc = fb_launch_env_build(layers, 3, envp, sizeof envp / sizeof *envp, err);
    if (rc == 0)
        rc = fb_sandbox_run(&spec, o, err);
    fb_proxy_free(net.proxy);
    fb_net_policy_free(pol);
    if (rc < 0)
        return fb_wrap_error(err, "dependency install sandbox");
    if (!o->exited || o->exit_code != 0 || o->cancelled)
        return install_failed(o, eco, err);
    return 0;
}

/* Copies the installer's layer directory out of the sandbox's workdir into tmp (under dfd): its size. */
static int copy_out(const fb_sandbox_outcome *o, fb_deps_eco eco, int dfd, const char *tmp, uint64_t *bytes,
                    fb_error *err)
{
    int wfd = o->nscratch > 0 && strcmp(o->scratch_path[0], BUILD_DIR) == 0 ? o->scratch_fd[0] : -1;
    int sfd = wfd >= 0 ? openat(wfd, k_installers[eco].layer, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
    if (sfd < 0)
        return fb_set_error(err, FB_ERR_DEPENDENCY_INSTALL, errno, "dependencies.%s: the installer left no %s",
                            fb_deps_eco_key(eco), k_installers[eco].layer);
    copy_budget b = {0};
    int d2 = mkdirat(dfd, tmp, 0755) == 0 ? openat(dfd, tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
    int rc = d2 >= 0 ? copy_tree(sfd, d2, MAX_DEPTH, &b) : -1;
    fb_close(&sfd);
    fb_close(&d2);
    *bytes = b.bytes;
    if (rc < 0)
        return fb_set_error(err, b.bytes > FB_DEPS_MAX_LAYER_BYTES || b.files > FB_DEPS_MAX_LAYER_FILES
                                     ? FB_ERR_DEPENDENCY_INSTALL : FB_ERR_SANDBOX_SETUP,
                            errno, "dependencies.%s: copying the layer out (at most %llu bytes, %d files)",
                            fb_deps_eco_key(eco), (unsigned long long)FB_DEPS_MAX_LAYER_BYTES,
                            FB_DEPS_MAX_LAYER_FILES);
    return 0;
}

/* Builds the layer key under dfd: install, copy out, publish (rename), record its size. */
static int build(fb_deps_eco eco, const fb_environment *env, const fb_dependencies *d, const char *index,
                 int cancel_fd, int dfd, const char *key, fb_error *err)
{
    fb_sandbox_outcome o = {0};
    char tmp[128];
    uint64_t bytes = 0;
    int rc = fb_cache_tmp_name(key, tmp, sizeof tmp) < 0
                 ? fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "dependencies: random name")
                 : run_installer(eco, env, d, index, cancel_fd, &o, err);
    if (rc == 0)
        rc = copy_out(&o, eco, dfd, tmp, &bytes, err);
    fb_sandbox_outcome_free(&o);
    if (rc == 0 && renameat(dfd, tmp, dfd, key) < 0)
        rc = fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "dependencies: publishing layer %.12s", key);
    if (rc < 0) {
        remove_tree(dfd, tmp, MAX_DEPTH + 2); /* nothing cached */
        return -1;
    }
    char name[96], text[32];
    snprintf(name, sizeof name, "%.64s.bytes", key);
    int n = snprintf(text, sizeof text, "%llu\n", (unsigned long long)bytes);
    int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0)
        (void)fb_write_all(fd, text, (size_t)n);
    fb_close(&fd);
    prune(dfd, key);
    return 0;
}

static bool layer_present(int dfd, const char *key)
{
    struct stat st;
    if (fstatat(dfd, key, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
        return false;
    utimensat(dfd, key, NULL, AT_SYMLINK_NOFOLLOW); /* mtime = last use, for the pruning */
    return true;
}

static void layer_key(fb_deps_eco eco, const fb_environment *env, const char *index, const fb_dependencies *d,
                      char key[FB_CACHE_KEY_SIZE])
{
    size_t len = 1;
    for (size_t i = 0; i < d->n[eco]; i++)
        len += strlen(d->items[eco][i]) + 1;
    char *list = malloc(len), *p = list;
    for (size_t i = 0; list && i < d->n[eco]; i++)
        p += sprintf(p, "%s\n", d->items[eco][i]);
    if (list)
        *p = '\0';
    const char *exe = find_installer(k_installers[eco].candidates, env);
    const char *fields[] = {KEY_FORMAT, fb_deps_eco_key(eco), env ? env->name : "", env && env->root ? env->root : "",
                            index, exe ? exe : "", list ? list : "?"};
    fb_cache_hash(fields, sizeof fields / sizeof *fields, key);
    free(list);
}

static int prepare_one(fb_deps_eco eco, const fb_dependencies *d, const fb_environment *env, int cancel_fd,
                       fb_deps_layer *out, fb_error *err)
{
    double t0 = now_ms();
    const char *index = index_of(eco, env);
    if (!index)
        return fb_set_error(err, FB_ERR_INVALID_REQUEST, 0,
                            "dependencies.%s: no package index configured for %s%s: set `indexes.%s` of %s in the "
                            "environments file (--environments FILE)",
                            fb_deps_eco_key(eco), env ? "environment " : "the host's environment",
                            env ? env->name : "", eco == FB_DEPS_PYTHON ? "python" : "npm",
                            env ? "it" : "an environment named \"" FB_DEPS_HOST_ENVIRONMENT "\"");
    layer_key(eco, env, index, d, out->key);
    char path[PATH_MAX];
    int dfd = layers_open(path, sizeof path - FB_CACHE_KEY_SIZE - 1, err);
    if (dfd < 0)
        return -1;
    int rc = 0;
    out->hit = layer_present(dfd, out->key);
    if (!out->hit) {
        char lock[96];
        snprintf(lock, sizeof lock, "%.64s.lock", out->key);
        int lfd = openat(dfd, lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        /* one build per key: another request (a thread here, or another process) may be building it */
        if (lfd < 0 || flock(lfd, LOCK_EX) < 0)
            rc = fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "dependencies: lock %s", lock);
        else if (!(out->hit = layer_present(dfd, out->key)))
            rc = build(eco, env, d, index, cancel_fd, dfd, out->key, err);
        fb_close(&lfd); /* releases the lock */
    }
    if (rc == 0) {
        size_t n = strlen(path);
        snprintf(path + n, sizeof path - n, "/%s", out->key);
        if (!(out->dir = strdup(path)))
            rc = fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "dependencies");
    }
    fb_close(&dfd);
    out->ms = now_ms() - t0;
    return rc;
}

int fb_deps_prepare(const fb_dependencies *d, const fb_environment *env, int cancel_fd, fb_deps_layers *out,
                    fb_error *err)
{
    *out = (fb_deps_layers){0};
    for (int e = 0; d && e < FB_DEPS_NECOS; e++)
        if (d->n[e] && prepare_one((fb_deps_eco)e, d, env, cancel_fd, &out->eco[e], err) < 0)
            return -1;
    return 0;
}

int fb_deps_place(const fb_deps_layers *l, fb_env_launch *el, fb_error *err)
{
    for (int e = 0; e < FB_DEPS_NECOS; e++)
        if (l->eco[e].dir && fb_env_launch_add(el, k_installers[e].lang, l->eco[e].dir) < 0)
            return fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, "dependencies.%s: the environment's %s paths "
                                "leave no room for the dependency layer", fb_deps_eco_key((fb_deps_eco)e),
                                fb_env_lang_key(k_installers[e].lang));
    return 0;
}

json_t *fb_deps_meta(const fb_deps_layers *l)
{
    json_t *meta = NULL;
    for (int e = 0; e < FB_DEPS_NECOS; e++) {
        const fb_deps_layer *x = &l->eco[e];
        if (!x->dir)
            continue;
        if (!meta && !(meta = json_object()))
            return NULL;
        json_object_set_new(meta, fb_deps_eco_key((fb_deps_eco)e),
                            json_pack("{s:s, s:s, s:f}", "layer", x->key, "cache", x->hit ? "hit" : "miss",
                                      "installMs", x->ms));
    }
    return meta;
}

void fb_deps_layers_free(fb_deps_layers *l)
{
    for (int e = 0; e < FB_DEPS_NECOS; e++)
        free(l->eco[e].dir);
    *l = (fb_deps_layers){0};
}
