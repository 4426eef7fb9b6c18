/* Compiling C and C++ calls, with a cache. docs/internals/compile-cache.md has the whole picture.
 *
 *   source  = lang->compiler->generate(code, function)      (user code + generated main; args never in it)
 *   key     = SHA-256(key format, fnbox version, language, compile script, toolchain identity, runtime, source)
 *   entry   = <cache dir>/<key hex>.bin: a 64-byte header {magic, body length, SHA-256 of the body} + body
 *
 * The toolchain identity is the resolved path, inode, size and mtime of each file the artifact depends on
 * (the compiler driver, the linkers, jansson's header and the libjansson fnbox loaded) plus jansson's
 * version: an upgraded compiler or library is a different file, so its programs get new keys (cheaper than
 * running `gcc --version` on every call). A hit is verified against the header (a truncated or corrupted
 * entry is deleted and rebuilt) and touched (mtime = last use). A miss compiles in a sandbox: the script
 * reads the source on fd 4 and writes the binary on fd 3; the entry is written to a unique temporary name
 * and renamed into place, so concurrent first calls each compile and the last rename wins with an equally
 * valid program. After a write the directory is pruned to FB_CACHE_MAX_ENTRIES / FB_CACHE_MAX_BYTES
 * (core/limits.h), least recently used first.
 *
 * SHA-256 is built in (FIPS 180-4), not OpenSSL's: loading and initialising libcrypto cost ~1.3 ms per
 * call, a quarter of a cached call.
 *
 * Cache directory: $FNBOX_CACHE_DIR, else /var/cache/fnbox for root, else $XDG_CACHE_HOME/fnbox, else
 * ~/.cache/fnbox; created 0700. A directory not owned by the caller is not used (cache "off"): only fnbox,
 * as this user, ever writes it. */
#include "core/compile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <dlfcn.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <nettle/sha2.h>

#include "core/limits.h"
#include "fnbox.h"
#include "sandbox/sandbox.h"
#include "util/fd.h"
#include "util/utf8.h"

/* Bumped when the key's composition or the entry format changes. */
#define KEY_FORMAT "fnbox-compile-cache-2"
#define HDR_LEN 64
static const char k_magic[8] = {'F', 'N', 'B', 'X', 'B', 'I', 'N', '1'};

/* SHA-256 from nettle: small and quick to load (libcrypto's start-up alone cost ~1.3 ms per call). */
typedef struct sha256_ctx sha256_ctx;

static void hash_update(sha256_ctx *c, const void *data, size_t len)
{
    sha256_update(c, len, data);
}

static void sha256(const void *data, size_t len, unsigned char md[32])
{
    sha256_ctx c;
    sha256_init(&c);
    sha256_update(&c, len, data);
    sha256_digest(&c, SHA256_DIGEST_SIZE, md);
}

static void hex(const unsigned char *md, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++)
        snprintf(out + 2 * i, 3, "%02x", md[i]);
}

/* Adds one length-prefixed field, so field boundaries cannot be shifted to collide. */
static void key_add(sha256_ctx *c, const void *data, size_t len)
{
    uint64_t n = len;
    hash_update(c, &n, sizeof n);
    hash_update(c, data, len);
}

static void key_add_str(sha256_ctx *c, const char *s)
{
    key_add(c, s, strlen(s));
}

/* Adds the identity of one file the artifact depends on: resolved path, inode, size, mtime ("absent" when
 * there is none: installing it later changes the key too). */
static void key_add_file(sha256_ctx *c, const char *path)
{
    char real[PATH_MAX], ident[PATH_MAX + 128];
    struct stat st;
    int n;
    if (path && realpath(path, real) && stat(real, &st) == 0)
        n = snprintf(ident, sizeof ident, "%s|%llu|%llu|%lld|%lld.%09ld", real, (unsigned long long)st.st_dev,
                     (unsigned long long)st.st_ino, (long long)st.st_size, (long long)st.st_mtim.tv_sec,
                     st.st_mtim.tv_nsec);
    else
        n = snprintf(ident, sizeof ident, "%s|absent", path ? path : "?");
    key_add(c, ident, n > 0 && (size_t)n < sizeof ident ? (size_t)n : sizeof ident - 1);
}

/* What every program also depends on besides the compiler driver: the linkers the scripts pick from, and
 * jansson (header, the shared library, its version). */
static void key_add_toolchain(sha256_ctx *c)
{
    static const char *const k_files[] = {"/usr/bin/ld", "/usr/bin/ld.gold", "/usr/include/jansson.h", NULL};
    for (const char *const *f = k_files; *f; f++)
        key_add_file(c, *f);
    Dl_info info = {0};
    key_add_file(c, dladdr((void *)json_loads, &info) && info.dli_fname ? info.dli_fname : NULL);
    key_add_str(c, JANSSON_VERSION);
#if JANSSON_VERSION_HEX >= 0x020d00
    key_add_str(c, jansson_version_str());
#endif
}

/* salt: what else the output depends on (the runtime's source, for a program that links it). */
static int cache_key(const fb_lang_driver *lang, const char *compiler, const char *script, const char *salt,
                     size_t salt_len, const char *src, size_t len, char out[65], fb_error *err)
{
    struct stat st;
    if (stat(compiler, &st) < 0)
        return fb_set_error(err, FB_ERR_KERNEL_FEATURE, errno, "compiler %s", compiler);
    sha256_ctx c;
    unsigned char md[32];
    sha256_init(&c);
    key_add_str(&c, KEY_FORMAT);
    key_add_str(&c, FNBOX_VERSION);
    key_add_str(&c, lang->name);
    key_add_str(&c, script);
    key_add_file(&c, compiler);
    key_add_toolchain(&c);
    key_add(&c, salt, salt_len);
    key_add(&c, src, len);
    sha256_digest(&c, SHA256_DIGEST_SIZE, md);
    hex(md, 32, out);
    return 0;
}

static int mkdir_p(char *path, mode_t last_mode)
{
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        int rc = mkdir(path, 0755);
        *p = '/';
        if (rc < 0 && errno != EEXIST)
            return -1;
    }
    return mkdir(path, last_mode) < 0 && errno != EEXIST ? -1 : 0;
}

/* The cache directory, opened (O_DIRECTORY, owned by us, mode 0700), or -1 when there is none to use. */
static int cache_dir_open(void)
{
    char path[PATH_MAX];
    const char *env = getenv("FNBOX_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    int n;
    if (env && env[0] == '/')
        n = snprintf(path, sizeof path, "%s", env);
    else if (geteuid() == 0)
        n = snprintf(path, sizeof path, "/var/cache/fnbox");
    else if (xdg && xdg[0] == '/')
        n = snprintf(path, sizeof path, "%s/fnbox", xdg);
    else if (home && home[0] == '/')
        n = snprintf(path, sizeof path, "%s/.cache/fnbox", home);
    else
        return -1;
    if (n < 0 || (size_t)n >= sizeof path || mkdir_p(path, 0700) < 0)
        return -1;
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0 || st.st_uid != geteuid() || ((st.st_mode & 077) && fchmod(fd, 0700) < 0)) {
        fb_close(&fd);
        return -1;
    }
    return fd;
}

/* A valid entry's body, or -1 (missing; a damaged entry is removed). */
static int cache_get(int dfd, const char *name, fb_compiled *out)
{
    int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat st;
    fb_buf b;
    fb_buf_init(&b, FB_CACHE_MAX_PROGRAM + HDR_LEN);
    bool valid = false;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > HDR_LEN &&
        (uint64_t)st.st_size <= FB_CACHE_MAX_PROGRAM + HDR_LEN && fb_read_all(fd, &b) == 0 && !b.truncated &&
        b.len == (size_t)st.st_size && memcmp(b.data, k_magic, 8) == 0) {
        uint64_t body;
        unsigned char md[32];
        memcpy(&body, b.data + 8, 8);
        valid = body == b.len - HDR_LEN;
        if (valid) {
            sha256(b.data + HDR_LEN, body, md);
            valid = memcmp(md, b.data + 16, 32) == 0;
        }
    }
    if (!valid) {
        fb_close(&fd);
        fb_buf_free(&b);
        unlinkat(dfd, name, 0);
        return -1;
    }
    futimens(fd, NULL); /* mtime = last use, for the LRU pruning */
    fb_close(&fd);
    size_t len = 0;
    char *data = fb_buf_steal(&b, &len);
    if (!data)
        return -1;
    memmove(data, data + HDR_LEN, len - HDR_LEN);
    out->data = data;
    out->len = len - HDR_LEN;
    return 0;
}

typedef struct entry {
    char name[80];
    struct timespec mtime;
    uint64_t size;
} entry;

static int by_mtime(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    if (x->mtime.tv_sec != y->mtime.tv_sec)
        return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
    return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : x->mtime.tv_nsec > y->mtime.tv_nsec;
}

/* Keeps the directory within its bounds (least recently used out first) and removes temporaries that a
 * crashed writer left behind. */
static void cache_prune(int dfd)
{
    int d2 = fcntl(dfd, F_DUPFD_CLOEXEC, 0);
    DIR *dir = d2 >= 0 ? fdopendir(d2) : NULL;
    if (!dir) {
        fb_close(&d2);
        return;
    }
    entry *list = NULL;
    size_t n = 0, cap = 0;
    uint64_t total = 0;
    time_t now = time(NULL);
    struct dirent *de;
    /* readdir on a DIR only this call uses is safe (glibc); readdir_r is deprecated */
    // cppcheck-suppress readdirCalled
    while ((de = readdir(dir)) != NULL) {
        struct stat st;
        size_t l = strlen(de->d_name);
        if (l >= sizeof list->name || fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
            continue;
        if (strstr(de->d_name, ".tmp.")) {
            if (now - st.st_mtim.tv_sec > FB_CACHE_STALE_TMP_S)
                unlinkat(dfd, de->d_name, 0);
            continue;
        }
        if (l < 5 || strcmp(de->d_name + l - 4, ".bin") != 0)
            continue;
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 64;
            entry *p = realloc(list, ncap * sizeof *p);
            if (!p)
                break;
            list = p;
            cap = ncap;
        }
        memcpy(list[n].name, de->d_name, l + 1);
        list[n].mtime = st.st_mtim;
        list[n].size = (uint64_t)st.st_size;
        total += list[n].size;
        n++;
    }
    closedir(dir);
    if (n > FB_CACHE_MAX_ENTRIES || total > FB_CACHE_MAX_BYTES) {
        qsort(list, n, sizeof *list, by_mtime);
        for (size_t i = 0; i < n && (n - i > FB_CACHE_MAX_ENTRIES || total > FB_CACHE_MAX_BYTES); i++) {
            unlinkat(dfd, list[i].name, 0);
            total -= list[i].size;
        }
    }
    free(list);
}

/* Writes the entry atomically (unique temporary name, then rename); failures only mean no caching. */
static void cache_put(int dfd, const char *name, const char *data, size_t len)
{
    unsigned char hdr[HDR_LEN] = {0};
    uint64_t body = len;
    memcpy(hdr, k_magic, 8);
    memcpy(hdr + 8, &body, 8);
    sha256(data, len, hdr + 16);
    unsigned char rnd[8] = {0};
    if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd)
        return;
    char rhex[17], tmp[128];
    hex(rnd, sizeof rnd, rhex);
    snprintf(tmp, sizeof tmp, "%.64s.tmp.%ld.%s", name, (long)getpid(), rhex);
    int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return;
    /* No fsync: a reader checks the body's SHA-256, so an entry torn by a crash or power loss is detected,
     * removed and rebuilt like any corrupted one, and a call does not wait for the disk (~4 ms on ext4). */
    bool ok = fb_write_all(fd, hdr, sizeof hdr) == 0 && fb_write_all(fd, data, len) == 0;
    fb_close(&fd);
    if (!ok || renameat(dfd, tmp, dfd, name) < 0) {
        unlinkat(dfd, tmp, 0);
        return;
    }
    cache_prune(dfd);
}

static int compile_in_sandbox(const char *compiler, const char *script, const char *src, size_t len,
                              const fb_sandbox_file *files, size_t nfiles, double timeout_s, int cancel_fd,
                              fb_compiled *out, fb_error *err)
{
    const char *argv[] = {"/bin/sh", "-c", script, compiler, NULL};
    static const char *const envp[] = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/tmp", "TMPDIR=/tmp",
                                       "LANG=C.UTF-8", NULL};
    fb_sandbox_spec spec = {
        .exec_path = "/bin/sh",
        .argv = (char *const *)argv,
        .envp = (char *const *)envp,
        .workdir = "/build",
        .files = files,
        .nfiles = nfiles,
        .input = src,
        .input_len = len,
        .cancel_fd = cancel_fd,
        .exec_any = true, /* gcc runs cc1, as, collect2 and ld */
        .limits = {
            .timeout_s = timeout_s > FB_COMPILE_MIN_TIMEOUT_S ? timeout_s : FB_COMPILE_MIN_TIMEOUT_S,
            .memory_bytes = FB_COMPILE_MEMORY_BYTES,
            .pids = FB_DEFAULT_PIDS,
            .nofile = FB_DEFAULT_NOFILE,
            .fsize_bytes = FB_CACHE_MAX_PROGRAM,
            .workspace_bytes = FB_DEFAULT_WORKSPACE_BYTES,
            .tmp_bytes = FB_COMPILE_TMP_BYTES,
            .tmpfs_inodes = FB_DEFAULT_TMPFS_INODES,
            .output_bytes = FB_DEFAULT_OUTPUT_BYTES,
            .result_bytes = FB_CACHE_MAX_PROGRAM,
        },
    };
    fb_sandbox_outcome o = {0};
    if (fb_sandbox_run(&spec, &o, err) < 0) {
        fb_sandbox_outcome_free(&o);
        return fb_wrap_error(err, "compiler sandbox");
    }
    int rc = -1;
    if (o.exited && o.exit_code == 0 && o.result.len > 0 && !o.result.truncated) {
        out->data = fb_buf_steal(&o.result, &out->len);
        rc = out->data ? 0 : fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "compiled program");
    } else if (o.timed_out) {
        fb_set_error(err, FB_ERR_COMPILE, 0, "the compiler did not finish within %.0f s", spec.limits.timeout_s);
    } else if (o.cancelled) {
        fb_set_error(err, FB_ERR_COMPILE, 0, "the compilation was cancelled");
    } else if (o.oom_killed) {
        fb_set_error(err, FB_ERR_COMPILE, 0, "the compiler ran out of memory (%llu MiB)",
                     (unsigned long long)(FB_COMPILE_MEMORY_BYTES / FB_MiB));
    } else if (!o.exited) {
        fb_set_error(err, FB_ERR_COMPILE, 0, "the compiler was killed by signal %d", o.term_signal);
    } else {
        size_t dlen = 0;
        char *diag = fb_utf8_sanitize(o.errout.data ? o.errout.data : "", o.errout.len, &dlen);
        while (dlen > 0 && diag[dlen - 1] == '\n')
            diag[--dlen] = '\0';
        fb_set_error(err, FB_ERR_COMPILE, 0, "%s", diag && dlen ? diag : "the compiler failed without a message");
        free(diag);
    }
    fb_sandbox_outcome_free(&o);
    return rc;
}

/* One cached compilation: script on src (with files in /.fnbox), through the cache when dfd >= 0. */
static int cached_build(const fb_lang_driver *lang, const char *compiler, const char *script, const char *salt,
                        size_t salt_len, const char *src, size_t src_len, const fb_sandbox_file *files, size_t nfiles,
                        double timeout_s, int cancel_fd, int dfd, fb_compiled *out, fb_error *err)
{
    char key[65], name[80];
    if (cache_key(lang, compiler, script, salt, salt_len, src, src_len, key, err) < 0)
        return -1;
    snprintf(name, sizeof name, "%s.bin", key);
    if (dfd >= 0 && cache_get(dfd, name, out) == 0) {
        out->cache = "hit";
        return 0;
    }
    if (compile_in_sandbox(compiler, script, src, src_len, files, nfiles, timeout_s, cancel_fd, out, err) < 0)
        return -1;
    out->cache = dfd >= 0 ? "miss" : "off";
    if (dfd >= 0)
        cache_put(dfd, name, out->data, out->len);
    return 0;
}

int fb_compile(const fb_lang_driver *lang, const char *code, size_t code_len, const char *function_name,
               double timeout_s, int cancel_fd, fb_compiled *out, fb_error *err)
{
    *out = (fb_compiled){.cache = "off"};
    const fb_lang_compiler *cc = lang->compiler;
    const char *compiler = fb_lang_find_runtime(lang);
    if (!compiler)
        return fb_set_error(err, FB_ERR_KERNEL_FEATURE, 0, "no %s compiler found (looked for %s); run `fnbox doctor`",
                            lang->name, lang->runtimes[0]);
    char *src = NULL;
    size_t src_len = 0;
    if (cc->generate(code, code_len, function_name, &src, &src_len, err) < 0)
        return -1;
    int dfd = cache_dir_open();
    const char *rt_src = "";
    size_t rt_len = 0, nfiles = 0;
    if (cc->runtime_source)
        rt_src = cc->runtime_source(&rt_len);
    char key[65], name[80];
    if (cache_key(lang, compiler, cc->script, rt_src, rt_len, src, src_len, key, err) < 0) {
        fb_close(&dfd);
        free(src);
        return -1;
    }
    snprintf(name, sizeof name, "%s.bin", key);
    if (dfd >= 0 && cache_get(dfd, name, out) == 0) { /* a hit needs neither the runtime nor the compiler */
        out->cache = "hit";
        fb_close(&dfd);
        free(src);
        return 0;
    }
    fb_compiled runtime = {0};
    fb_sandbox_file file = {0};
    int rc = 0;
    if (cc->runtime_source) {
        rc = cached_build(lang, compiler, cc->runtime_script, "", 0, rt_src, rt_len, NULL, 0, timeout_s, cancel_fd, dfd,
                          &runtime, err);
        if (rc < 0)
            fb_wrap_error(err, "compiling the %s runtime", lang->name);
        file = (fb_sandbox_file){.path = "/.fnbox/runtime.o", .data = runtime.data, .len = runtime.len};
        nfiles = 1;
    }
    if (rc == 0)
        rc = cached_build(lang, compiler, cc->script, rt_src, rt_len, src, src_len, nfiles ? &file : NULL, nfiles,
                          timeout_s, cancel_fd, dfd, out, err);
    fb_compiled_free(&runtime);
    fb_close(&dfd);
    free(src);
    return rc;
}

void fb_compiled_free(fb_compiled *c)
{
    free(c->data);
    *c = (fb_compiled){0};
}
