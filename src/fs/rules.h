// Mount permissions: the request's `mount.permissions` decoded into rules, and the decision whether one
// operation on one path is allowed.
//
// Paths: rules see a path RELATIVE to the mount's virtual root, without a leading slash ("output/a.txt");
// the mount root itself is "" (so `list` on the root is decided like any other path: `**` matches "",
// `output/**` does not). A pattern that starts with '/' (after any `!`) is matched against the full
// virtual path instead: virtual root + "/" + relative path ("/data/output/a.txt", the root is "/data").
//
// Decision, in this order:
//  1. `exclude` entries, in declaration order, deny every operation (and hide: see fb_rules_excluded). An entry without '/' (or whose only
//     slashes are trailing, `build/`) is a name: it denies a file or directory of that name at any depth
//     and everything beneath it (`node_modules` denies `a/node_modules/x/y.js`), i.e. `**/E` and
//     `**/E/**`. An entry with '/' is a pattern from the mount root (or the full virtual path when it
//     starts with '/') and also denies everything beneath what it matches (`E` and `E/**`).
//  2. `rules` by descending `priority` (default 0), declaration order breaking ties: the first rule whose
//     pattern matches and whose allow or deny list names the operation decides; deny wins when one rule
//     names the operation in both lists.
//  3. `default`: read and list allowed, create, modify and delete denied, unless `default` says otherwise.
// Patterns are globs with minimatch semantics (fs/glob.h).
#ifndef FB_FS_RULES_H
#define FB_FS_RULES_H
#include <jansson.h>
#include <stdbool.h>

#include "util/error.h"

typedef enum fb_op { FB_OP_READ, FB_OP_LIST, FB_OP_CREATE, FB_OP_MODIFY, FB_OP_DELETE, FB_OP_COUNT } fb_op;

/* "read", "list", "create", "modify", "delete"; "?" for anything else. */
const char *fb_op_name(fb_op op);
/* The operation named name (exact, lower case): 0 and *op, or -1. */
int fb_op_parse(const char *name, fb_op *op);

typedef struct fb_rules fb_rules;

/* Decodes the permissions object perm (NULL = absent: the defaults). field is its JSON path for messages
 * ("mount.permissions"). Strict: unknown fields, wrong types, unknown operation names, bad patterns are
 * "InvalidRequest" errors naming the field, e.g.
 * `mount.permissions.rules[2].allow[0]: unknown operation "write" (expected read, list, create, modify,
 * delete or "*")`. Patterns holding extglob syntax (`@(`, `+(`...) or starting with `#` (a minimatch
 * comment, which would match nothing) are refused rather than silently meaning something else. */
int fb_rules_parse(const json_t *perm, const char *field, fb_rules **out, fb_error *err);
void fb_rules_free(fb_rules *r);

// Whether op on rel_path (relative to the mount root virtual_root, e.g. "/data") is allowed. rule_out
// (may be NULL) receives the deciding rule, owned by r: `exclude "node_modules"`, `rules[1] "output/**"`
// (the index is the declaration index) or `default`. A rel_path that is not normalized (leading '/',
// an empty, "." or ".." segment) is denied with the rule `invalid path`.
bool fb_rules_allows(const fb_rules *r, const char *virtual_root, const char *rel_path, fb_op op,
                     const char **rule_out);

// Whether rel_path is excluded: an `exclude` entry matches it or one of its ancestors. Excluded host
// entries are not loaded at all (the function cannot see them: ENOENT, absent from listings), as the
// seed's loader leaves them out; a plain `deny` rule only refuses the operation. rule_out (may be NULL)
// receives the entry (`exclude "node_modules"`), NULL when not excluded. A path that cannot be judged
// (not normalized, too long) counts as excluded, with the rule `invalid path`: fail closed.
bool fb_rules_excluded(const fb_rules *r, const char *virtual_root, const char *rel_path, const char **rule_out);
/* Whether r has any `exclude` entry. */
bool fb_rules_has_excludes(const fb_rules *r);

#endif
