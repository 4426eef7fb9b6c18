/* The operator's named environments (`--environments FILE`, FNBOX_ENVIRONMENTS), decoded into plain data:
 * a system tree other than the host's (`root`), package directories placed on a language's own search path
 * (`python.paths`, ...), and the package indexes dependencies may come from (`indexes`). A request, a
 * session or an MCP configuration names one with "environment"; without it, the host's. Nothing runs here. */
#ifndef FB_REQUEST_ENVIRONMENTS_H
#define FB_REQUEST_ENVIRONMENTS_H
#include <jansson.h>
#include <stddef.h>

#include "util/error.h"

#define FB_ENV_MAX_FILE_BYTES 1048576          /* the environments file (1 MiB) */
#define FB_ENV_MAX_COUNT 64                  /* environments in one file */
#define FB_ENV_MAX_PATHS 32                  /* directories in one language's `paths` */

/* The languages whose search path an environment extends, in the file's key order. */
typedef enum fb_env_lang {
    FB_ENV_PYTHON,     /* "python": sys.path */
    FB_ENV_JAVASCRIPT, /* "javascript": Node's resolution, for require and import */
    FB_ENV_RUBY,       /* "ruby": $LOAD_PATH */
    FB_ENV_PHP,        /* "php": include_path */
    FB_ENV_NLANGS
} fb_env_lang;

typedef struct fb_env_paths {
    char **dirs;       /* absolute, canonical, existing directories (owned) */
    size_t n;
} fb_env_paths;

typedef struct fb_environment {
    char *name;        /* [A-Za-z0-9._-], 1-64 bytes (owned) */
    char *root;        /* absolute, canonical, existing directory holding a Linux root filesystem, or NULL:
                          the host's system tree (owned) */
    fb_env_paths paths[FB_ENV_NLANGS];
    char *index_python; /* `indexes.python`: a PEP 503 simple index URL, or NULL (owned) */
    char *index_npm;    /* `indexes.npm`: an npm registry URL, or NULL (owned) */
} fb_environment;

typedef struct fb_environments {
    fb_environment *items; /* in the file's order (owned) */
    size_t n;
} fb_environments;

/* Reads and decodes the file at path. Failures are InvalidRequest naming the field, e.g.
 * "environments.py313.root: not a directory: /srv/x" or "environments.web.indexs: unknown key". On success
 * the caller owns *out (fb_environments_free); on failure *out is empty. */
int fb_environments_load(const char *path, fb_environments *out, fb_error *err);
/* The same from text (len bytes). */
int fb_environments_parse(const char *text, size_t len, fb_environments *out, fb_error *err);
/* The environment called name, or NULL. */
const fb_environment *fb_environments_find(const fb_environments *set, const char *name);
void fb_environments_free(fb_environments *set);

/* The process's set: the operator's file, given once at start (fnbox_environments_load, include/fnbox.h)
 * before any call, and read by every request decoder from then on. set_current takes *set (emptied) and
 * frees the set it replaces, so it must not run while a request holds one of its environments. */
void fb_environments_set_current(fb_environments *set);
const fb_environments *fb_environments_current(void);
/* A request's, a session's or an MCP configuration's `environment` (field: its JSON path): absent or null
 * is the host's (*out NULL); a string names one of the current set. Unknown: InvalidRequest
 * `environment: unknown environment "x" (known: py313, datasci)` or `(none configured: fnbox serve
 * --environments FILE)`. *out lives as long as the current set. */
int fb_environment_decode(const json_t *v, const char *field, const fb_environment **out, fb_error *err);
/* The file's key of a language ("python", ...) as an fb_env_lang, or FB_ENV_NLANGS. */
const char *fb_env_lang_key(fb_env_lang l);

#endif
