/* The compile cache of the C and C++ drivers (compile_cache.h). docs/internals/compile-cache.md has the whole
 * picture.
 *
 *   key     = SHA-256(key format, fnbox version, language, compile script, toolchain identity, runtime, source)
 *   entry   = <cache dir>/<key hex>.bin: a 64-byte header {magic, body length, SHA-256 of the body} + body
 *
 * The toolchain identity is the resolved path, inode, size and mtime of each file the artifact depends on
 * (the compiler driver, the linkers, jansson's header and the libjansson fnbox loaded) plus jansson's
 * version: an upgraded compiler or library is a different file, so its programs get new keys (cheaper than
 * running `gcc --version` on every call). A hit is verified against the header (a truncated or corrupted
 * entry is deleted and rebuilt) and touched (mtime = last use). An entry is written to a unique temporary
 * name and renamed into place, so concurrent first calls each compile and the last rename wins with an
 * equally valid program. After a write the directory is pruned to its bounds (request/limits.h's
 * FB_CACHE_MAX_ENTRIES / FB_CACHE_MAX_BYTES, passed in), least recently used first.
 *
 * SHA-256 is nettle's, not OpenSSL's: loading and initialising libcrypto cost ~1.3 ms per call, a quarter
 * of a cached call.
 *
 * Cache directory: $FNBOX_CACHE_DIR, else /var/cache/fnbox for root, else $XDG_CACHE_HOME/fnbox, else
 * ~/.cache/fnbox; mode 0711. A directory not owned by the caller is not used (cache "off"): only fnbox,
 * as this user, ever writes it. Others may pass through it but not list it (entries are 0600): the
 * dependency layers under it (core/dependencies.c) are opened by a sandbox's init, which runs as nobody
 * when fnbox runs as root. */
#include "lang/compile_cache.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <linux/openat2.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <nettle/sha2.h>

#include "util/buf.h"
#include "util/fd.h"

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

static void key_add_file(sha256_ctx *c, const char *path);

/* stat of path (absolute) in the tree at rootfd as the sandbox resolves it (its links inside it). */
static int stat_in(int rootfd, const char *path, struct stat *st)
{
    struct open_how how = {.flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
    int fd = (int)syscall(SYS_openat2, rootfd, path + 1, &how, sizeof how);
    int rc = fd >= 0 ? fstat(fd, st) : -1;
    if (fd >= 0)
        close(fd);
    return rc;
}

/* Adds the identity of one file the artifact depends on: resolved path, inode, size, mtime ("absent" when
 * there is none: installing it later changes the key too). In a root (rootfd >= 0): the path as given and
 * the identity of the file it leads to there. */
static void key_add_file_in(sha256_ctx *c, int rootfd, const char *path)
{
    char ident[PATH_MAX + 128];
    struct stat st;
    int n;
    if (rootfd < 0) {
        key_add_file(c, path);
        return;
    }
    if (path && path[0] == '/' && stat_in(rootfd, path, &st) == 0)
        n = snprintf(ident, sizeof ident, "root:%s|%llu|%llu|%lld|%lld.%09ld", path, (unsigned long long)st.st_dev,
                     (unsigned long long)st.st_ino, (long long)st.st_size, (long long)st.st_mtim.tv_sec,
                     st.st_mtim.tv_nsec);
    else
        n = snprintf(ident, sizeof ident, "root:%s|absent", path ? path : "?");
    key_add(c, ident, n > 0 && (size_t)n < sizeof ident ? (size_t)n : sizeof ident - 1);
}

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
 * jansson (header, the shared library, its version: fnbox's own, for the host's tree; in a root, the
 * header). */
static void key_add_toolchain(sha256_ctx *c, int rootfd)
{
    static const char *const k_files[] = {"/usr/bin/ld", "/usr/bin/ld.gold", "/usr/include/jansson.h", NULL};
    for (const char *const *f = k_files; *f; f++)
        key_add_file_in(c, rootfd, *f);
    if (rootfd >= 0)
        return; /* the root's jansson.h above: Debian's header and library come in one version */
    Dl_info info = {0};
    key_add_file(c, dladdr((void *)json_loads, &info) && info.dli_fname ? info.dli_fname : NULL);
    key_add_str(c, JANSSON_VERSION);
#if JANSSON_VERSION_HEX >= 0x020d00
    key_add_str(c, jansson_version_str());
#endif
}

int fb_cache_key(const fb_cache_key_input *in, char key[FB_CACHE_KEY_SIZE], fb_error *err)
{
    struct stat st;
    int rootfd = in->root ? open(in->root, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
    if (in->root && rootfd < 0)
        return fb_set_error(err, FB_ERR_KERNEL_FEATURE, errno, "environment root %s", in->root);
    if ((rootfd >= 0 ? stat_in(rootfd, in->compiler, &st) : stat(in->compiler, &st)) < 0) {
        int e = errno;
        if (rootfd >= 0)
            close(rootfd);
        return fb_set_error(err, FB_ERR_KERNEL_FEATURE, e, "compiler %s", in->compiler);
    }
    sha256_ctx c;
    unsigned char md[32];
    sha256_init(&c);
    key_add_str(&c, KEY_FORMAT);
    key_add_str(&c, in->version);
    key_add_str(&c, in->lang);
    key_add_str(&c, in->script);
    key_add_str(&c, in->root ? in->root : "");
    key_add_file_in(&c, rootfd, in->compiler);
    key_add_toolchain(&c, rootfd);
    if (rootfd >= 0)
        close(rootfd);
    key_add(&c, in->salt, in->salt_len);
    key_add(&c, in->src, in->src_len);
    sha256_digest(&c, SHA256_DIGEST_SIZE, md);
    hex(md, 32, key);
    return 0;
}

void fb_cache_hash(const char *const *fields, size_t n, char key[FB_CACHE_KEY_SIZE])
{
    sha256_ctx c;
    unsigned char md[32];
    sha256_init(&c);
    for (size_t i = 0; i < n; i++)
        key_add_str(&c, fields[i] ? fields[i] : "");
    sha256_digest(&c, SHA256_DIGEST_SIZE, md);
    hex(md, 32, key);
}

int fb_cache_tmp_name(const char *name, char *out, size_t cap)
{
    unsigned char rnd[8] = {0};
    if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd)
        return -1;
    char rhex[17];
    hex(rnd, sizeof rnd, rhex);
    int n = snprintf(out, cap, "%s.tmp.%ld.%s", name, (long)getpid(), rhex);
    return n > 0 && (size_t)n < cap ? 0 : -1;
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

/* The cache directory, opened (O_DIRECTORY, owned by us, mode 0711), or -1 when there is none to use. */
int fb_cache_dir_open(void)
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
    if (n < 0 || (size_t)n >= sizeof path || mkdir_p(path, 0711) < 0)
        return -1;
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0 || st.st_uid != geteuid() || ((st.st_mode & 0777) != 0711 && fchmod(fd, 0711) < 0)) {
        fb_close(&fd);
        return -1;
    }
    return fd;
}

void fb_cache_open(fb_compile_cache *c, const fb_cache_bounds *bounds)
{
    c->dfd = fb_cache_dir_open();
    c->bounds = *bounds;
}

bool fb_cache_enabled(const fb_compile_cache *c)
{
    return c->dfd >= 0;
}

void fb_cache_close(fb_compile_cache *c)
{
    fb_close(&c->dfd);
}

static void entry_name(const char *key, char name[80])
{
    snprintf(name, 80, "%.64s.bin", key);
}

/* Whether b holds a whole entry: magic, body length and the body's SHA-256 as its header says. */
static bool entry_valid(const fb_buf *b)
{
    if (b->len <= HDR_LEN || memcmp(b->data, k_magic, 8) != 0)
        return false;
    uint64_t body;
    unsigned char md[32];
    memcpy(&body, b->data + 8, 8);
    if (body != b->len - HDR_LEN)
        return false;
    sha256(b->data + HDR_LEN, body, md);
    return memcmp(md, b->data + 16, 32) == 0;
}

int fb_cache_get(const fb_compile_cache *c, const char *key, char **data, size_t *len)
{
    char name[80];
    entry_name(key, name);
    int fd = c->dfd >= 0 ? openat(c->dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC) : -1;
    if (fd < 0)
        return -1;
    struct stat st;
    fb_buf b;
    fb_buf_init(&b, c->bounds.max_entry + HDR_LEN);
    bool valid = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > HDR_LEN &&
                 (uint64_t)st.st_size <= c->bounds.max_entry + HDR_LEN && fb_read_all(fd, &b) == 0 && !b.truncated &&
                 b.len == (size_t)st.st_size && entry_valid(&b);
    if (!valid) {
        fb_close(&fd);
        fb_buf_free(&b);
        unlinkat(c->dfd, name, 0);
        return -1;
    }
    futimens(fd, NULL); /* mtime = last use, for the LRU pruning */
    fb_close(&fd);
    size_t n = 0;
    char *p = fb_buf_steal(&b, &n);
    if (!p)
        return -1;
    memmove(p, p + HDR_LEN, n - HDR_LEN);
    *data = p;
    *len = n - HDR_LEN;
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
static void cache_prune(int dfd, const fb_cache_bounds *bounds)
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
            if (now - st.st_mtim.tv_sec > bounds->stale_tmp_s)
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
    if (n > bounds->max_entries || total > bounds->max_bytes) {
        qsort(list, n, sizeof *list, by_mtime);
        for (size_t i = 0; i < n && (n - i > bounds->max_entries || total > bounds->max_bytes); i++) {
            unlinkat(dfd, list[i].name, 0);
            total -= list[i].size;
        }
    }
    free(list);
}

/* Writes the entry atomically (unique temporary name, then rename); failures only mean no caching. */
void fb_cache_put(const fb_compile_cache *c, const char *key, const char *data, size_t len)
{
    if (c->dfd < 0)
        return;
    int dfd = c->dfd;
    char name[80];
    entry_name(key, name);
    unsigned char hdr[HDR_LEN] = {0};
    uint64_t body = len;
    memcpy(hdr, k_magic, 8);
    memcpy(hdr + 8, &body, 8);
    sha256(data, len, hdr + 16);
    char tmp[128];
    if (fb_cache_tmp_name(name, tmp, sizeof tmp) < 0)
        return;
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
    cache_prune(dfd, &c->bounds);
}
