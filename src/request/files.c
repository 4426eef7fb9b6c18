/* The request's `files`, decoded (see request_files.h). */
#include "request/files.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "request/limits.h"
#include "util/base64.h"

#define BAD(...) fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, __VA_ARGS__)

static int decode_base64(const char *key, const char *s, size_t len, unsigned char **out, size_t *out_len,
                         fb_error *err)
{
    int rc = fb_base64_decode(s, len, out, out_len);
    if (rc == -2)
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "files[\"%.200s\"]: decoding base64", key);
    return rc < 0 ? BAD("files[\"%.200s\"].base64: not valid base64", key) : 0;
}

static int file_content(const char *key, json_t *v, unsigned char **data, size_t *len, fb_error *err)
{
    if (json_is_string(v)) {
        *len = json_string_length(v);
        *data = malloc(*len + 1);
        if (!*data)
            return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "files[\"%.200s\"]", key);
        memcpy(*data, json_string_value(v), *len);
        return 0;
    }
    json_t *b64 = json_is_object(v) ? json_object_get(v, "base64") : NULL;
    if (!json_is_string(b64) || json_object_size(v) != 1)
        return BAD("files[\"%.200s\"]: must be a string (text) or {\"base64\": \"...\"} (binary)", key);
    return decode_base64(key, json_string_value(b64), json_string_length(b64), data, len, err);
}

/* The absolute, normalized sandbox path of a files key. */
static int file_path(const char *key, const char *workdir, char *out, size_t cap, fb_error *err)
{
    if (!*key)
        return BAD("files: a file name is empty");
    int n = key[0] == '/' ? snprintf(out, cap, "%s", key) : snprintf(out, cap, "%s/%s", workdir, key);
    if (n < 0 || (size_t)n >= cap)
        return BAD("files[\"%.200s\"]: path longer than %zu bytes", key, cap - 1);
    for (const char *seg = out + 1; seg;) {
        const char *end = strchr(seg, '/');
        size_t sl = end ? (size_t)(end - seg) : strlen(seg);
        if (sl == 0 || (sl == 1 && seg[0] == '.') || (sl == 2 && seg[0] == '.' && seg[1] == '.'))
            return BAD("files[\"%.200s\"]: must be a normalized path (no empty, '.' or '..' parts)", key);
        if (sl > 255)
            return BAD("files[\"%.200s\"]: a path part is longer than 255 bytes", key);
        seg = end ? end + 1 : NULL;
    }
    for (const char *p = out; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            return BAD("files[\"%.200s\"]: control characters are not allowed in file names", key);
    if (strlen(out) != (size_t)n)
        return BAD("files[\"%.200s\"]: NUL in a file name", key);
    return 0;
}

/* Fills f from one entry; f's strings and data are the list's once set, whatever happens next. */
static int decode_one(const char *key, json_t *v, const char *workdir, fb_ws_file *f, fb_error *err)
{
    char path[4096] = ""; /* file_path fills it; clang-analyzer cannot see that on every path */
    if (file_path(key, workdir, path, sizeof path, err) < 0 || file_content(key, v, &f->data, &f->len, err) < 0)
        return -1;
    f->name = strdup(key);
    f->path = strdup(path);
    if (!f->name || !f->path)
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "files[\"%.200s\"]", key);
    return 0;
}

int fb_request_files_decode(json_t *files, const char *workdir, uint64_t max_bytes, fb_ws_files *out,
                            fb_error *err)
{
    *out = (fb_ws_files){0};
    if (!files)
        return 0;
    size_t n = json_object_size(files);
    if (n > FB_MAX_REQUEST_FILES)
        return BAD("files: %zu entries is more than the maximum of %d", n, FB_MAX_REQUEST_FILES);
    out->v = calloc(n ? n : 1, sizeof *out->v);
    if (!out->v)
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "files");
    uint64_t total = 0;
    const char *key;
    json_t *v;
    json_object_foreach(files, key, v) {
        fb_ws_file *f = &out->v[out->n++];
        if (decode_one(key, v, workdir, f, err) < 0)
            return -1;
        total += f->len;
        if (total > max_bytes)
            return BAD("files: %llu bytes in all is more than the workspace limit of %llu bytes",
                       (unsigned long long)total, (unsigned long long)max_bytes);
    }
    return 0;
}

void fb_request_files_free(fb_ws_files *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].name);
        free(l->v[i].path);
        free(l->v[i].data);
    }
    free(l->v);
    *l = (fb_ws_files){0};
}
