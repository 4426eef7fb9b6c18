/* Decoding a mount's `permissions` object into fs/rules (the rule engine). */
#ifndef FB_REQUEST_RULES_H
#define FB_REQUEST_RULES_H
#include <jansson.h>

#include "fs/rules.h"
#include "util/error.h"

/* Decodes the permissions object perm (NULL = absent: the defaults, read and list). field is its JSON
 * path for messages ("mount.permissions"). Strict: unknown fields, wrong types, unknown operation names,
 * bad patterns are "InvalidRequest" errors naming the field, e.g.
 * `mount.permissions.rules[2].allow[0]: unknown operation "write" (expected read, list, create, modify,
 * delete or "*")`. On success *out is sealed and the caller's (fb_rules_free). */
int fb_rules_parse(const json_t *perm, const char *field, fb_rules **out, fb_error *err);

#endif
