/* A request's, a session's or an MCP configuration's `dependencies`: packages installed once into a
 * read-only layer (core/dependencies.h) and placed on the language's search path for the run.
 *
 *   "dependencies": {"python": ["six==1.16.0", "attrs>=21,<24"], "javascript": ["left-pad@1.3.0"]}
 *
 * Every entry is a package name with an optional version or range, in its ecosystem's own syntax, and
 * nothing else: what an installer would read as an option, a URL, a path, a VCS reference or a shell word
 * is refused here, so the installer's command line holds only names and versions. Decoded lists are
 * normalized (names lower-cased, Python names PEP 503-folded; sorted; duplicates dropped), so equal
 * lists are equal strings and share one layer. Nothing runs here. docs/internals/dependencies.md. */
#ifndef FB_REQUEST_DEPENDENCIES_H
#define FB_REQUEST_DEPENDENCIES_H
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "util/error.h"

#define FB_DEPS_MAX_ENTRIES 64   /* entries of one ecosystem's list */
#define FB_DEPS_MAX_ENTRY 256    /* bytes of one entry (npm's longest name is 214) */
#define FB_DEPS_MAX_NAME 214     /* bytes of a package's name (npm's limit; PyPI's are shorter) */

/* The ecosystems, in the order the result's meta.dependencies lists them. */
typedef enum fb_deps_eco {
    FB_DEPS_PYTHON,      /* "python": pip, a PEP 503 index (environment `indexes.python`) */
    FB_DEPS_JAVASCRIPT,  /* "javascript": npm, a registry (environment `indexes.npm`) */
    FB_DEPS_NECOS
} fb_deps_eco;

typedef struct fb_dependencies {
    char **items[FB_DEPS_NECOS]; /* normalized entries (owned strings in an owned array), sorted, unique */
    size_t n[FB_DEPS_NECOS];
} fb_dependencies;

/* Decodes v (field: its JSON path, "dependencies" or "options.dependencies"): absent or null is none; an
 * object of ecosystem keys, each a list of strings (an empty list is none). Failures are InvalidRequest
 * naming the entry, e.g. `dependencies.python[1]: "six; rm -rf /": ';' is not allowed in a requirement`,
 * or `dependencies.ruby: unknown ecosystem (known: python, javascript)`. On failure *out is empty. */
int fb_dependencies_decode(const json_t *v, const char *field, fb_dependencies *out, fb_error *err);
/* One entry checked and normalized (malloc'd into *norm). why gets the reason of a refusal (cap bytes). */
int fb_dependency_check(fb_deps_eco eco, const char *entry, char **norm, char *why, size_t cap);
/* Whether any ecosystem has an entry. */
bool fb_dependencies_any(const fb_dependencies *d);
/* A copy of src into *dst (empty on failure). */
int fb_dependencies_copy(const fb_dependencies *src, fb_dependencies *dst, fb_error *err);
void fb_dependencies_free(fb_dependencies *d);
/* The ecosystem's key ("python", "javascript"). */
const char *fb_deps_eco_key(fb_deps_eco eco);

#endif
