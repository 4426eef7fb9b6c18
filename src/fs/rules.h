// Mount permissions: the rules of a mount (request/rules.c decodes `mount.permissions` into them), and the
// decision whether one operation on one path is allowed.
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
#include <stdbool.h>
#include <stddef.h>

#include "util/error.h"

typedef enum fb_op { FB_OP_READ, FB_OP_LIST, FB_OP_CREATE, FB_OP_MODIFY, FB_OP_DELETE, FB_OP_COUNT } fb_op;

/* "read", "list", "create", "modify", "delete"; "?" for anything else. */
const char *fb_op_name(fb_op op);
/* The operation named name (exact, lower case): 0 and *op, or -1. */
int fb_op_parse(const char *name, fb_op *op);

#define FB_OPS_ALL ((1u << FB_OP_COUNT) - 1) /* every operation, as bits 1 << fb_op */

typedef struct fb_rules fb_rules;

/* Building a rule set (request/rules.c decodes `mount.permissions` into these calls). A new set allows
 * read and list only. Rules and exclude entries are added in declaration order; `where` names the field
 * for messages. Patterns are checked: empty, NUL, a leading '#' (a minimatch comment, which would match
 * nothing) and extglob syntax (`@(`, `+(`...) are "InvalidRequest" errors rather than silently meaning
 * something else; nothing is added on error. fb_rules_seal orders the rules by priority: deciding on a
 * set that is not sealed fails closed. */
fb_rules *fb_rules_new(fb_error *err);
void fb_rules_set_default(fb_rules *r, fb_op op, bool allowed);
int fb_rules_add(fb_rules *r, const char *pattern, size_t len, unsigned allow, unsigned deny, double priority,
                 const char *where, fb_error *err);
int fb_rules_add_exclude(fb_rules *r, const char *pattern, size_t len, const char *where, fb_error *err);
void fb_rules_seal(fb_rules *r);
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
