/* The compile cache of the C and C++ drivers: compiled programs (and the C runtime object), kept under a key
 * of everything they depend on, in a directory outside every sandbox that only fnbox writes. Lookups and
 * stores only; compiling is core/compile.c's (in a sandbox of its own). docs/internals/compile-cache.md. */
#ifndef FB_LANG_COMPILE_CACHE_H
#define FB_LANG_COMPILE_CACHE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

#define FB_CACHE_KEY_SIZE 65 /* 64 hex digits of SHA-256 and a NUL */

/* The bounds the cache keeps (request/limits.h's FB_CACHE_*, passed in by the caller). */
typedef struct fb_cache_bounds {
    uint64_t max_entries;    /* entries in the directory; least recently used out first */
    uint64_t max_bytes;      /* their total size */
    uint64_t max_entry;      /* one entry's body: a bigger file is not an entry */
    long stale_tmp_s;        /* a writer's temporary older than this is garbage */
} fb_cache_bounds;

/* One use of the cache directory (fb_cache_open .. fb_cache_close). */
typedef struct fb_compile_cache {
    int dfd;                 /* the directory; -1: no usable directory, the cache is "off" */
    fb_cache_bounds bounds;
} fb_compile_cache;

/* What a build's output depends on, each a field of its key. */
typedef struct fb_cache_key_input {
    const char *version;     /* fnbox's: the dispatcher generator and the runtime ship with it */
    const char *lang;        /* the driver's name */
    const char *script;      /* the compile script: flags, linker choice */
    const char *compiler;    /* the compiler driver's path (its file identity goes in) */
    const char *root;        /* the system tree the toolchain's paths are in: an environment's root, or NULL
                                for the host's (its files are then identified as the sandbox sees them) */
    const char *salt;        /* what else the output depends on (the runtime's source), salt_len bytes */
    size_t salt_len;
    const char *src;         /* the source compiled, src_len bytes */
    size_t src_len;
} fb_cache_key_input;

/* $FNBOX_CACHE_DIR, else /var/cache/fnbox for root, else $XDG_CACHE_HOME/fnbox, else ~/.cache/fnbox;
 * mode 0711 (others pass through to a dependency layer, list nothing), used only when owned by the caller. Never fails: without a directory c->dfd is -1. */
void fb_cache_open(fb_compile_cache *c, const fb_cache_bounds *bounds);
bool fb_cache_enabled(const fb_compile_cache *c);
void fb_cache_close(fb_compile_cache *c);

/* The key of one build (hex, NUL-terminated), with the identity of the toolchain files it depends on.
 * Errors: "KernelFeatureMissing" (the compiler cannot be stat'ed). */
int fb_cache_key(const fb_cache_key_input *in, char key[FB_CACHE_KEY_SIZE], fb_error *err);
/* A valid entry's body (*data malloc'd, the caller's), or -1: none (a damaged entry is removed; a disabled
 * cache has none). */
int fb_cache_get(const fb_compile_cache *c, const char *key, char **data, size_t *len);
/* Stores an entry atomically, then prunes the directory to its bounds; a failure only means "not cached".
 * Nothing is done when the cache is disabled. */
void fb_cache_put(const fb_compile_cache *c, const char *key, const char *data, size_t len);

/* What other caches of fnbox share with this one (core/dependencies.c's package layers, in a subdirectory). */
/* The cache directory as fb_cache_open finds it (O_DIRECTORY, ours, 0711), or -1: none to use. */
int fb_cache_dir_open(void);
/* SHA-256 (hex) of n length-prefixed fields (field boundaries cannot be shifted to collide). */
void fb_cache_hash(const char *const *fields, size_t n, char key[FB_CACHE_KEY_SIZE]);
/* "<name>.tmp.<pid>.<16 random hex digits>": a writer's unique temporary, which pruning recognises and
 * removes once older than the stale bound. -1 when no random bytes could be had. */
int fb_cache_tmp_name(const char *name, char *out, size_t cap);

#endif
