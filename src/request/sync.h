/* Decoding fnbox_sync's input: the changes a caller picked, the mount they go back to, and onError. */
#ifndef FB_REQUEST_SYNC_H
#define FB_REQUEST_SYNC_H
#include <jansson.h>
#include <stddef.h>

#include "fs/change.h"
#include "fs/mount.h"
#include "util/error.h"

typedef struct fb_sync_request {
    fb_change_list changes;  /* with their contents, decoded */
    fb_mount_config mount;   /* a mount without permissions applies every change */
    int on_error;            /* fb_sync_on_error, or -1 when absent (the mount's own) */
} fb_sync_request;

/* Decodes len bytes of JSON text. On failure (InvalidRequest naming the field, or OutOfMemory) nothing
 * is left to free, but out->on_error holds what was decoded of onError (the report names it). */
int fb_sync_request_parse(const char *text, size_t len, fb_sync_request *out, fb_error *err);
void fb_sync_request_free(fb_sync_request *r);
/* `onError`: "rollback" | "continue" | "abort" into *on_error (an fb_sync_on_error); absent or null leaves
 * it as it is. */
int fb_request_on_error_parse(const json_t *v, int *on_error, fb_error *err);

#endif
