/* The request's `files` object ({"name": "text" | {"base64": "..."}}), decoded into the plain list the files
 * stage takes (fs/workspace.h): each entry's absolute, normalized path (a relative name lies under the
 * workdir) and its bytes. Nothing is placed here; where a file may go is the workspace's to decide. */
#ifndef FB_CORE_REQUEST_FILES_H
#define FB_CORE_REQUEST_FILES_H
#include <jansson.h>
#include <stdint.h>

#include "fs/workspace.h"
#include "util/error.h"

/* files: the `files` object (NULL: none, an empty list). max_bytes: the workspace limit, which the files'
 * bytes together must not pass. Failures are InvalidRequest naming the entry (or OutOfMemory). The caller
 * owns *out (fb_request_files_free) on success and on failure. */
int fb_request_files_decode(json_t *files, const char *workdir, uint64_t max_bytes, fb_ws_files *out,
                            fb_error *err);
void fb_request_files_free(fb_ws_files *l);

#endif
