/* An environment's library caches, built once and copied into each call (env_caches.h). */
#include "core/env_caches.h"

#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "core/launch.h"
#include "fnbox.h"
#include "lang/compile_cache.h"
#include "request/limits.h"
#include "sandbox/sandbox.h"
#include "util/buf.h"

#define ARCHIVE_MAGIC "FNBOXENV1\n"

/* The builder: import matplotlib's font manager (it scans the fonts, through fc-list and the system's
 * fontconfig caches, and writes its font list to MPLCONFIGDIR), then hand the list out on fd 3 as
 * "matplotlib/<name>\n<size>\n<bytes>" after the magic line. Nothing but the environment's own files runs
 * here. */
static const char k_builder[] =
    "import os\n"
    "try:\n"
    "    import matplotlib.font_manager\n"
    "except Exception:\n"
    "    pass\n"
    "out = bytearray(b'" "FNBOXENV1\\n" "')\n"
    "p = '" FB_ENV_CACHE_DIR "/matplotlib'\n"
    "for n in sorted(os.listdir(p)) if os.path.isdir(p) else ():\n"
    "    f = os.path.join(p, n)\n"
    "    if n.endswith('.json') and os.path.isfile(f) and not os.path.islink(f):\n"
    "        with open(f, 'rb') as fh:\n"
    "            data = fh.read()\n"
    "        out += ('matplotlib/%s\\n%d\\n' % (n, len(data))).encode() + data\n"
    "view = memoryview(out)\n"
    "while view:\n"
    "    view = view[os.write(3, view):]\n";

static const char k_python[] = "/usr/bin/python3";

/* ---- what the caches depend on ---- */

typedef struct fingerprint {
    fb_buf text;                 /* one line per file: path, inode, size, mtime */
    size_t nfiles;
    bool has_library;            /* matplotlib is there: something to build */
} fingerprint;

static void add_identity(fingerprint *fp, const char *path, const struct stat *st)
{
    char line[PATH_MAX + 96];
    int n = snprintf(line, sizeof line, "%s %llu %lld %lld.%09ld\n", path, (unsigned long long)st->st_ino,
                     (long long)st->st_size, (long long)st->st_mtim.tv_sec, st->st_mtim.tv_nsec);
    if (n > 0 && (size_t)n < sizeof line)
        (void)fb_buf_append(&fp->text, line, (size_t)n);
    fp->nfiles++;
}

static bool add_file(fingerprint *fp, const char *path)
{
    struct stat st;
    if (stat(path, &st) < 0)
        return false;
    add_identity(fp, path, &st);
    return true;
}

/* A font directory and those beneath it: adding or removing a font changes its directory's mtime. */
static void add_tree(fingerprint *fp, const char *dir, int depth)
{
    struct stat st;
    if (depth > FB_ENV_CACHE_MAX_DEPTH || fp->nfiles >= FB_ENV_CACHE_MAX_DIRS || stat(dir, &st) < 0 ||
        !S_ISDIR(st.st_mode))
        return;
    add_identity(fp, dir, &st);
    DIR *d = opendir(dir);
    if (!d)
        return;
    /* readdir on a DIR only this thread uses is safe (glibc); readdir_r is deprecated */
    // cppcheck-suppress readdirCalled
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        char sub[PATH_MAX];
        if (e->d_name[0] == '.' || (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN) ||
            snprintf(sub, sizeof sub, "%s/%s", dir, e->d_name) >= (int)sizeof sub)
            continue;
        add_tree(fp, sub, depth + 1);
    }
    closedir(d);
}

static void rooted(char *out, size_t cap, const char *sysroot, const char *path)
{
    snprintf(out, cap, "%s%s", strcmp(sysroot, "/") == 0 ? "" : sysroot, path);
}

/* The files of the environment at sysroot the builder's output depends on, as text for the key. */
static void fingerprint_of(const char *sysroot, fingerprint *fp)
{
    static const char *const libs[] = {"/usr/lib/python3/dist-packages/matplotlib/font_manager.py",
                                       "/usr/local/lib/python3*/dist-packages/matplotlib/font_manager.py"};
    static const char *const inputs[] = {"/usr/bin/python3", "/usr/bin/fc-list", "/etc/fonts/fonts.conf",
                                         "/etc/matplotlibrc"};
    static const char *const trees[] = {"/usr/share/fonts", "/usr/local/share/fonts", "/etc/fonts/conf.d"};
    char path[PATH_MAX];
    fb_buf_init(&fp->text, FB_ENV_CACHE_MAX_FINGERPRINT);
    fp->nfiles = 0;
    fp->has_library = false;
    for (size_t i = 0; i < sizeof libs / sizeof *libs; i++) {
        glob_t g;
        rooted(path, sizeof path, sysroot, libs[i]);
        if (glob(path, GLOB_NOSORT, NULL, &g) != 0)
            continue;
        for (size_t j = 0; j < g.gl_pathc; j++)
            fp->has_library |= add_file(fp, g.gl_pathv[j]);
        globfree(&g);
    }
    for (size_t i = 0; i < sizeof inputs / sizeof *inputs; i++) {
        rooted(path, sizeof path, sysroot, inputs[i]);
        (void)add_file(fp, path);
    }
    for (size_t i = 0; i < sizeof trees / sizeof *trees; i++) {
        rooted(path, sizeof path, sysroot, trees[i]);
        add_tree(fp, path, 0);
    }
}

/* ---- the builder's sandbox ---- */

/* sysroot: "/" is the host's system tree; another root is the sandbox spec's to mount (when it has one),
 * the builder runs the same there. */
static int build(const char *sysroot, char **data, size_t *len, fb_error *err)
{
    if (strcmp(sysroot, "/") != 0)
        return fb_set_error(err, FB_ERR_INTERNAL, ENOTSUP, "environment caches of a root other than the host's");
    static const char *const env[] = {"PYTHONDONTWRITEBYTECODE=1", NULL};
    const char *envp[16] = {NULL};
    const char *const *const layers[] = {fb_launch_base_env, env};
    const char *argv[] = {k_python, "-I", "-c", k_builder, NULL};
    if (fb_launch_env_build(layers, 2, envp, sizeof envp / sizeof *envp, err) < 0)
        return -1;
    fb_sandbox_spec spec = {
        .exec_path = k_python,
        .argv = (char *const *)argv,
        .envp = (char *const *)envp,
        .workdir = "/build",
        .cancel_fd = -1,
        .exec_any = true, /* fc-list, from matplotlib */
        .limits = {
            .timeout_s = FB_ENV_CACHE_TIMEOUT_S,
            .memory_bytes = FB_ENV_CACHE_MEMORY_BYTES,
            .pids = FB_DEFAULT_PIDS,
            .nofile = FB_DEFAULT_NOFILE,
            .fsize_bytes = FB_ENV_CACHE_MAX_BYTES,
            .workspace_bytes = FB_DEFAULT_WORKSPACE_BYTES,
            .tmp_bytes = FB_ENV_CACHE_MAX_BYTES,
            .tmpfs_inodes = FB_DEFAULT_TMPFS_INODES,
            .output_bytes = FB_DEFAULT_OUTPUT_BYTES,
            .result_bytes = FB_ENV_CACHE_MAX_BYTES,
        },
    };
    fb_sandbox_outcome o = {0};
    int rc = fb_sandbox_run(&spec, &o, err);
    if (rc == 0 && (!o.exited || o.exit_code != 0 || o.result.truncated))
        rc = fb_set_error(err, FB_ERR_SANDBOX_SETUP, 0, "the environment caches' builder failed (exit %d, signal %d): "
                          "%.200s", o.exit_code, o.term_signal, o.errout.data ? o.errout.data : "");
    if (rc == 0 && !(*data = fb_buf_steal(&o.result, len)))
        rc = fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "the environment caches");
    fb_sandbox_outcome_free(&o);
    return rc;
}

/* ---- the archive ---- */

void fb_env_caches_files_free(fb_ws_files *files)
{
    for (size_t i = 0; i < files->n; i++) {
        free(files->v[i].path);
        free(files->v[i].data);
    }
    free(files->v);
    *files = (fb_ws_files){0};
}

/* "matplotlib/<name>", name of [A-Za-z0-9._-], not starting with a dot. */
static bool entry_name_ok(const char *s, size_t n)
{
    static const char *const dirs[] = {"matplotlib/"};
    for (size_t d = 0; d < sizeof dirs / sizeof *dirs; d++) {
        size_t dl = strlen(dirs[d]);
        if (n <= dl || n > dl + FB_ENV_CACHE_MAX_NAME || memcmp(s, dirs[d], dl) != 0 || s[dl] == '.')
            continue;
        for (size_t i = dl; i < n; i++)
            if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", s[i]) || !s[i])
                return false;
        return true;
    }
    return false;
}

static int parse_entry(const char **p, const char *end, size_t idx, fb_ws_file *f, fb_error *err)
{
    const char *nl = memchr(*p, '\n', (size_t)(end - *p));
    if (!nl || !entry_name_ok(*p, (size_t)(nl - *p)))
        return fb_set_error(err, FB_ERR_INTERNAL, EINVAL, "environment caches: entry %zu: bad name", idx);
    int n = asprintf(&f->path, FB_ENV_CACHE_DIR "/%.*s", (int)(nl - *p), *p);
    if (n < 0) {
        f->path = NULL;
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "environment caches");
    }
    f->name = f->path;
    char *after;
    errno = 0;
    unsigned long long size = strtoull(nl + 1, &after, 10);
    if (errno || after == nl + 1 || after >= end || *after != '\n' || size > (unsigned long long)(end - after - 1))
        return fb_set_error(err, FB_ERR_INTERNAL, EINVAL, "environment caches: bad size of %s", f->path);
    f->len = (size_t)size;
    f->data = malloc(f->len ? f->len : 1);
    if (!f->data)
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "environment caches");
    memcpy(f->data, after + 1, f->len);
    *p = after + 1 + f->len;
    return 0;
}

int fb_env_caches_parse(const char *data, size_t len, fb_ws_files *out, fb_error *err)
{
    *out = (fb_ws_files){0};
    size_t ml = sizeof ARCHIVE_MAGIC - 1;
    if (len < ml || memcmp(data, ARCHIVE_MAGIC, ml) != 0)
        return fb_set_error(err, FB_ERR_INTERNAL, EINVAL, "environment caches: not an archive");
    const char *p = data + ml, *end = data + len;
    while (p < end) {
        if (out->n == FB_ENV_CACHE_MAX_FILES) {
            fb_env_caches_files_free(out);
            return fb_set_error(err, FB_ERR_INTERNAL, E2BIG, "environment caches: more than %d files",
                                FB_ENV_CACHE_MAX_FILES);
        }
        fb_ws_file *nv = reallocarray(out->v, out->n + 1, sizeof *nv);
        if (!nv) {
            fb_env_caches_files_free(out);
            return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "environment caches");
        }
        out->v = nv;
        out->v[out->n] = (fb_ws_file){0};
        int rc = parse_entry(&p, end, out->n, &out->v[out->n], err);
        out->n++; /* owned from here, freed with the rest */
        if (rc < 0) {
            fb_env_caches_files_free(out);
            return -1;
        }
    }
    return 0;
}

/* ---- one process's copy ---- */

struct fb_env_caches {
    atomic_size_t refs;          /* a call lets its reference go without waiting for a build (g_lock) */
    char *fingerprint;           /* what it was built from */
    fb_ws_files files;
};

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER; /* g_current, and one build at a time */
static fb_env_caches *g_current; /* the last one built or loaded (one reference is g_current's) */

static void unref(fb_env_caches *c)
{
    if (c && atomic_fetch_sub(&c->refs, 1) == 1) {
        fb_env_caches_files_free(&c->files);
        free(c->fingerprint);
        free(c);
    }
}

void fb_env_caches_release(void *c)
{
    unref(c);
}

const fb_ws_files *fb_env_caches_files(const fb_env_caches *c)
{
    return &c->files;
}

static const fb_cache_bounds k_bounds = {
    .max_entries = FB_CACHE_MAX_ENTRIES,
    .max_bytes = FB_CACHE_MAX_BYTES,
    .max_entry = FB_ENV_CACHE_MAX_BYTES,
    .stale_tmp_s = FB_CACHE_STALE_TMP_S,
};

/* The archive for fingerprint fp: from fnbox's cache directory, else built and stored there. */
static int archive_for(const char *sysroot, const char *fp, char **data, size_t *len, fb_error *err)
{
    char key[FB_CACHE_KEY_SIZE], python[PATH_MAX];
    rooted(python, sizeof python, sysroot, k_python);
    fb_cache_key_input in = {.version = FNBOX_VERSION, .lang = "env-caches", .script = k_builder,
                             .compiler = python, .salt = fp, .salt_len = strlen(fp), .src = sysroot,
                             .src_len = strlen(sysroot)};
    if (fb_cache_key(&in, key, err) < 0)
        return -1;
    fb_compile_cache cache;
    fb_cache_open(&cache, &k_bounds);
    int rc = 0;
    /* Without a cache directory nothing is built: a one-shot `fnbox call` would run the builder (~1 s) for
     * every Python call, matplotlib or not; its calls then run as without caches. */
    if (!fb_cache_enabled(&cache))
        rc = fb_set_error(err, FB_ERR_INTERNAL, ENOENT, "no cache directory for the environment caches");
    else if (fb_cache_get(&cache, key, data, len) < 0 && (rc = build(sysroot, data, len, err)) == 0)
        fb_cache_put(&cache, key, *data, *len);
    fb_cache_close(&cache);
    return rc;
}

/* Keeps the files, in the archive's order, up to FB_ENV_CACHE_MAX_PLACED in all (a call's root tmpfs holds
 * them); the rest is rebuilt by the library, in the call, as without any. */
static void keep_placeable(fb_ws_files *files)
{
    uint64_t total = 0;
    size_t keep = 0;
    for (size_t i = 0; i < files->n; i++) {
        fb_ws_file *f = &files->v[i];
        if (total + f->len <= FB_ENV_CACHE_MAX_PLACED) {
            total += f->len;
            files->v[keep++] = *f;
        } else {
            free(f->path);
            free(f->data);
        }
    }
    files->n = keep;
}

/* A new copy for fp (taken). A failed build gives one with no files, so that this process does not try
 * again until the environment changes (a call then runs as without caches); NULL: out of memory. */
static fb_env_caches *load(const char *sysroot, char *fp)
{
    fb_error err = {0};
    char *data = NULL;
    size_t len = 0;
    fb_env_caches *c = calloc(1, sizeof *c);
    if (!c) {
        free(fp);
        return NULL;
    }
    if (archive_for(sysroot, fp, &data, &len, &err) == 0 && fb_env_caches_parse(data, len, &c->files, &err) == 0)
        keep_placeable(&c->files); /* a bad archive: none */
    free(data);
    c->fingerprint = fp;
    atomic_init(&c->refs, 1);
    return c;
}

static double monotonic_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* g_current for sysroot, from its files as they are now: kept while they are what it was built from, else
 * loaded or built again (NULL: nothing to place). Under g_lock. */
char *fb_env_caches_fingerprint(const char *sysroot)
{
    fingerprint fp;
    fingerprint_of(sysroot, &fp);
    if (!fp.has_library) {
        fb_buf_free(&fp.text);
        return NULL;
    }
    return fb_buf_steal(&fp.text, NULL);
}

static void refresh_locked(const char *sysroot)
{
    char *text = fb_env_caches_fingerprint(sysroot);
    if (!text) {
        unref(g_current);
        g_current = NULL;
        return;
    }
    if (g_current && strcmp(g_current->fingerprint, text) == 0) {
        free(text);
        return;
    }
    fb_env_caches *fresh = load(sysroot, text);
    unref(g_current);
    g_current = fresh;
}

static char g_sysroot[PATH_MAX]; /* what g_current is of, checked at g_checked_s (under g_lock) */
static double g_checked_s = -1;

fb_env_caches *fb_env_caches_get(const char *sysroot)
{
    /* One builder at a time in this process: concurrent calls of a server wait for the first one's build
     * rather than each running its own. The environment's files are looked at again at most every
     * FB_ENV_CACHE_RECHECK_S: a warm call does not pay the stats. */
    pthread_mutex_lock(&g_lock);
    double now = monotonic_s();
    if (g_checked_s < 0 || now - g_checked_s >= FB_ENV_CACHE_RECHECK_S || strcmp(g_sysroot, sysroot) != 0) {
        refresh_locked(sysroot);
        snprintf(g_sysroot, sizeof g_sysroot, "%s", sysroot);
        g_checked_s = monotonic_s();
    }
    fb_env_caches *c = g_current && g_current->files.n ? g_current : NULL;
    if (c) /* g_current's own reference keeps it alive until here */
        atomic_fetch_add(&c->refs, 1);
    pthread_mutex_unlock(&g_lock);
    return c;
}
