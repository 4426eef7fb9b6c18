// Glob matching with the semantics of npm minimatch called with {dot: true, noext: true}, for mount
// permission patterns (the seed library matches its rules with minimatch). A path is a '/'-separated
// string; matching is case-sensitive and works on UTF-8 code points.
//
// What a pattern means (each line checked against minimatch 11 with node):
//  - `*` any run of characters inside one path segment, `?` one character, `[abc]` `[a-z]` `[!x]` `[^x]`
//    classes (a `]` first in a class is a member; `[:alpha:]` and the other POSIX names are understood, for
//    ASCII; non-ASCII characters count as alpha/alnum/word/graph/print only), `\x` the character x.
//  - A class that is never closed is a literal `[`. A class with nothing valid in it (`[z-a]`, or a range
//    ending in a POSIX class) makes its whole segment match nothing, as in minimatch.
//  - `{a,b}` alternatives, nested, with empty members (`x{,y}`), and sequences `{1..3}`, `{01..10}`,
//    `{a..e}`, `{1..9..2}`, as npm brace-expansion does (bash rules: `{a}` and `${a,b}` stay literal, empty
//    results of a top-level set are dropped, `{a},b}` expands to `a}` and `b`). Braces are expanded first,
//    so `{a/b,c}` may hold slashes.
//  - `**` as a whole segment is zero or more segments; a trailing `**` needs at least one, so `output/**`
//    matches `output/x` and `output/` but NOT `output` itself (minimatch 3, 5, 9 and 11 all agree; the
//    directory needs its own pattern, e.g. `output{,/**}`). `**` inside a segment (`a**b`) is `*`.
//  - dot:true: names starting with `.` are matched by wildcards, but the segments `.` and `..` (and the
//    empty segment) are never matched by a segment holding a wildcard; only a literal `.` matches `.`.
//  - Repeated slashes collapse (in the pattern and the path). A path ending in `/` also matches a
//    pattern without the slash (`a/*` matches `a/b/`), not the reverse. `x/..` in a pattern is removed
//    (`a/../b` is `b`), as minimatch's default optimisation does.
//  - A leading `!` negates the pattern (`!!` does not); a pattern starting with `#` is a comment that
//    matches nothing; the empty pattern matches only the empty path.
//  - Extglobs are off (minimatch's noext): `@(a|b)`, `+(x)` are literal text, `*(x)` is `*` then `(x)`.
// Where fnbox differs from minimatch, on purpose:
//  - A leading `./` (repeated, with any slashes after it) is dropped from the pattern AND the path, so
//    `./out/*` matches `out/x` and `out/*` matches `./out/x` (minimatch compares `.` literally).
//  - Caps instead of minimatch's larger ones: pattern at most FB_GLOB_MAX_PATTERN bytes, brace expansion at
//    most FB_GLOB_MAX_ALTERNATIVES results (minimatch matches a numeric range of 100+ values without
//    expanding it, so `{1..5000}` works there and is an error here), braces nested at most
//    FB_GLOB_MAX_BRACE_DEPTH deep, at most FB_GLOB_MAX_EXPANDED bytes of alternatives in all, at most
//    FB_GLOB_MAX_SEGMENTS segments per alternative.
//
// Matching never backtracks: each segment is matched by simulating all positions of its pattern at once
// (Thompson's construction), and `**` by a set of reachable pattern positions over the path's segments, so
// time is O(path length x pattern length) per alternative whatever the pattern. Summed over the alternatives
// that is O(path length x FB_GLOB_MAX_EXPANDED), which is why that cap is small: at 1 MiB, `{a,?}` eight
// times followed by `*?*?...` up to 4096 bytes took 5 s per test of a 4095-byte path at -O2 (over 60 s in
// the tests/fuzz build), and the rule engine tests every rule on every file operation; at 64 KiB the worst
// is ~0.3 s, and 1024 alternatives of up to 63 bytes each still fit.
// Compiling is linear too: a `[` that never closes is a literal, and the scans that found so are remembered
// per segment (a run of 4095 unclosed `[` took 18 s in the fuzz build when each one rescanned the rest).
#ifndef FB_GLOB_H
#define FB_GLOB_H
#include <stdbool.h>
#include <stddef.h>

#include "util/error.h"

#define FB_GLOB_MAX_PATTERN 4096        /* bytes */
#define FB_GLOB_MAX_ALTERNATIVES 1024   /* results of brace expansion */
#define FB_GLOB_MAX_EXPANDED (64 << 10) /* bytes of all brace expansion results together (see above) */
#define FB_GLOB_MAX_BRACE_DEPTH 64      /* nesting of {...} */
#define FB_GLOB_MAX_SEGMENTS 256        /* '/'-separated segments of one alternative */

typedef struct fb_glob fb_glob;

/* Compiles a pattern of len bytes. Errors ("InvalidPattern"): too long, contains NUL, too many brace
 * alternatives, braces nested too deep, too many segments. The caller frees the result with fb_glob_free. */
fb_glob *fb_glob_compile_n(const char *pattern, size_t len, fb_error *err);
fb_glob *fb_glob_compile(const char *pattern, fb_error *err);
void fb_glob_free(fb_glob *g);

/* True if path matches. Allocates nothing. */
bool fb_glob_test(const fb_glob *g, const char *path);

/* Compile + test + free. A pattern that does not compile matches nothing (also when negated). */
bool fb_glob_match(const char *pattern, const char *path);

/* True if the pattern holds minimatch extglob syntax (`@(`, `+(`, `!(` with a `)` after it, `?(` and `*(`
 * closed or not, not escaped, the leading negation `!` excepted), also where brace expansion makes it
 * (`{a,*}(b)`). fnbox reads such text as minimatch's noext does, where minimatch's default would not, so
 * callers that promise minimatch semantics can refuse it instead. */
bool fb_glob_has_extglob(const char *pattern, size_t len);

#endif
