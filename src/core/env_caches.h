/* The caches an environment's libraries rebuild at every start when they find none (matplotlib's font list),
 * built once per environment by fnbox and placed, as a copy, in each call's /var/cache, where the library
 * looks for it (MPLCONFIGDIR, fnbox's base environment). fontconfig's caches need no copy: they are the
 * system's, /var/cache/fontconfig, read-only in the sandbox like /usr (sandbox/rootfs.c).
 * docs/internals/env-caches.md.
 *
 * The builder is the environment's own python3 (and fc-list), run in a sandbox of its own with nothing of any
 * caller's in it; what it leaves is stored in fnbox's cache directory (lang/compile_cache.h: outside every
 * sandbox, written only by fnbox) under a key of the environment's files it depends on (matplotlib's
 * font_manager.py, the font directories, /etc/fonts, fc-list, python3), so installing a font or another
 * matplotlib builds it again. A call gets its own copy in its /tmp: what it writes there is its own, never
 * what a later call reads. The copies are in the call's baseline (fs/workspace.h's preset), so `files`
 * reports them only if the function changed them. /var/cache is in the root's scratch space (its tmpfs):
 * /tmp stays empty at the start, as it always was. */
#ifndef FB_CORE_ENV_CACHES_H
#define FB_CORE_ENV_CACHES_H
#include <stddef.h>

#include "fs/workspace.h"
#include "util/error.h"

/* Where the builder leaves them and a call finds them, inside the sandbox: <dir>/matplotlib (MPLCONFIGDIR
 * in core/launch.c fb_launch_base_env). */
#define FB_ENV_CACHE_DIR "/var/cache"
/* matplotlib's config and cache directory in one (fnbox's base environment): FB_ENV_CACHE_DIR's matplotlib/,
 * one literal (an array of strings in which literals are joined reads as a missing comma) */
#define FB_ENV_CACHE_MPLCONFIGDIR "MPLCONFIGDIR=/var/cache/matplotlib"

/* One environment's caches: files (absolute paths under FB_ENV_CACHE_DIR, data) shared read-only by the
 * calls that hold a reference. */
typedef struct fb_env_caches fb_env_caches;

/* The caches of the system tree at sysroot ("/": the host's), built first if the environment changed or
 * none is stored. NULL when there is nothing to place: the environment has no matplotlib, fnbox has no
 * cache directory, or the build failed (a call then runs as without caches: the libraries rebuild them in its
 * /tmp). The caller owns the reference (fb_env_caches_release). Thread-safe: concurrent callers in one
 * process build once. */
fb_env_caches *fb_env_caches_get(const char *sysroot);
/* The files to place (fb_workspace_config.preset); valid while the reference is held. */
const fb_ws_files *fb_env_caches_files(const fb_env_caches *c);
/* Lets the reference go (NULL: nothing). void * for fb_workspace.preset_release. */
void fb_env_caches_release(void *c);

/* The identity of what sysroot's caches depend on, as text (malloc'd; NULL when sysroot has no library to
 * build them for, or out of memory): the salt of their key, compared again every FB_ENV_CACHE_RECHECK_S.
 * Exposed for the unit tests. */
char *fb_env_caches_fingerprint(const char *sysroot);
/* Parses a builder's output (the archive format of docs/internals/env-caches.md) into files under
 * FB_ENV_CACHE_DIR; exposed for the unit tests. Errors name the entry. */
int fb_env_caches_parse(const char *data, size_t len, fb_ws_files *out, fb_error *err);
void fb_env_caches_files_free(fb_ws_files *files);

#endif
