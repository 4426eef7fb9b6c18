/* Decoding the request's `mount` object into fs/mount.h's fb_mount_config. */
#ifndef FB_REQUEST_MOUNT_H
#define FB_REQUEST_MOUNT_H
#include <jansson.h>
#include <stdbool.h>

#include "fs/mount.h"
#include "util/error.h"

/* Decodes `mount` (field names the JSON path for messages, e.g. "mount"). Relative host paths resolve
 * against the current directory; each must be an existing directory. Strict: unknown fields, wrong types,
 * bad enum values, overlapping or system virtual paths are errors naming the field. */
int fb_mount_config_parse(const json_t *mount, const char *field, fb_mount_config *out, fb_error *err);
/* The same; absent_allows_all: a mount without `permissions` allows every operation instead of read and
 * list only (the allowAllFs preset; `fnbox sync`, whose caller picked each change itself). */
int fb_mount_config_parse_ex(const json_t *mount, const char *field, bool absent_allows_all, fb_mount_config *out,
                             fb_error *err);

#endif
