/* Decoding fnbox_sync's input `{changes, mount, onError}` (request/sync.h). Every rejection is an
 * "InvalidRequest" naming the field, e.g. `changes[2].content: /data/a.txt has no content ...`. */
#include "request/sync.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/base64.h"
#include "request/limits.h"
#include "fs/change.h"
#include "request/mount.h"
#include "util/json.h"

#define BAD(...) fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, __VA_ARGS__)
#define OOM(what) fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "%s: out of memory", what)

static const char *const k_fields[] = {"changes", "mount", "onError"};
static const char *const k_kinds[] = {"created", "modified", "deleted"}; /* fb_change_kind order */


static int parse_kind(const json_t *v, const char *where, const char *name, int *kind, fb_error *err)
{
    if (!json_is_string(v))
        return BAD("%s.%s: must be \"created\", \"modified\" or \"deleted\", got %s", where, name,
                   fb_json_type_name(v));
    for (int k = 0; k < 3; k++)
        if (strcmp(json_string_value(v), k_kinds[k]) == 0) {
            *kind = k;
            return 0;
        }
    return BAD("%s.%s: must be \"created\", \"modified\" or \"deleted\", got \"%.64s\"", where, name,
               json_string_value(v));
}

static int parse_mode(const json_t *v, const char *where, mode_t *mode, fb_error *err)
{
    long long m = -1;
    if (json_is_integer(v)) {
        m = json_integer_value(v);
    } else if (json_is_string(v) && !fb_json_bignum(v)) {
        const char *s = json_string_value(v);
        char *end;
        errno = 0;
        m = *s ? strtoll(s, &end, 8) : -1;
        if (errno || !*s || *end)
            m = -1;
    }
    if (m < 0 || m > 07777)
        return BAD("%s.mode: must be a permission mode (an integer, or an octal string such as \"0644\")", where);
    *mode = (mode_t)m & 0777; /* never setuid, setgid or sticky */
    return 0;
}

/* One change object {path, type, kind|operation, content, size, mode}. kind_from_key >= 0: the change
 * came from files.<kind>. Fields a result adds to its change objects that sync does not use are ignored. */
static int parse_change(const json_t *c, const char *where, int kind_from_key, fb_change_list *out, fb_error *err)
{
    if (!json_is_object(c))
        return BAD("%s: must be a change object {path, type, content, ...}, got %s", where, fb_json_type_name(c));
    json_t *p = json_object_get(c, "path");
    if (!p)
        return BAD("%s.path: required", where);
    if (!json_is_string(p) || fb_json_bignum(p))
        return BAD("%s.path: must be a string, got %s", where, fb_json_type_name(p));
    const char *path = json_string_value(p);
    if (strlen(path) != json_string_length(p))
        return BAD("%s.path: contains a NUL character", where);
    if (path[0] != '/')
        return BAD("%s.path: must be an absolute virtual path (as the result reports it), got \"%.200s\"", where,
                   path);
    int kind = kind_from_key;
    json_t *k = json_object_get(c, "kind"), *op = json_object_get(c, "operation");
    int k1 = -1, k2 = -1;
    if ((k && parse_kind(k, where, "kind", &k1, err) < 0) || (op && parse_kind(op, where, "operation", &k2, err) < 0))
        return -1;
    if (k1 >= 0 && k2 >= 0 && k1 != k2)
        return BAD("%s: kind \"%s\" and operation \"%s\" disagree", where, k_kinds[k1], k_kinds[k2]);
    int given = k1 >= 0 ? k1 : k2;
    if (kind >= 0 && given >= 0 && given != kind)
        return BAD("%s: listed under %s but says \"%s\"", where, k_kinds[kind], k_kinds[given]);
    if (kind < 0)
        kind = given >= 0 ? given : FB_CHANGE_MODIFIED; /* none: write it, creating or replacing */
    fb_file_type type = FB_FILE_REGULAR;
    json_t *t = json_object_get(c, "type");
    if (t) {
        const char *ts = json_is_string(t) ? json_string_value(t) : "";
        if (strcmp(ts, "file") == 0)
            type = FB_FILE_REGULAR;
        else if (strcmp(ts, "directory") == 0)
            type = FB_FILE_DIRECTORY;
        else if (strcmp(ts, "symlink") == 0)
            type = FB_FILE_SYMLINK;
        else
            return BAD("%s.type: must be \"file\", \"directory\" or \"symlink\"", where);
    }
    mode_t mode = 0;
    json_t *m = json_object_get(c, "mode");
    if (m && parse_mode(m, where, &mode, err) < 0)
        return -1;
    unsigned char *content = NULL;
    size_t clen = 0;
    bool has = false;
    json_t *ct = json_object_get(c, "content");
    if (ct && !json_is_null(ct)) {
        if (json_is_string(ct) && !fb_json_bignum(ct)) {
            clen = json_string_length(ct);
            content = malloc(clen ? clen : 1);
            if (!content)
                return OOM(where);
            memcpy(content, json_string_value(ct), clen);
        } else if (json_is_object(ct) && json_object_size(ct) == 1 && json_is_string(json_object_get(ct, "base64"))) {
            json_t *b = json_object_get(ct, "base64");
            int rc = fb_base64_decode(json_string_value(b), json_string_length(b), &content, &clen);
            if (rc == -2)
                return OOM(where);
            if (rc < 0)
                return BAD("%s.content.base64: not valid base64", where);
        } else {
            return BAD("%s.content: must be a string (text) or {\"base64\": \"...\"} (binary), got %s", where,
                       fb_json_type_name(ct));
        }
        has = true;
    }
    json_t *sz = json_object_get(c, "size");
    if (sz && (!json_is_integer(sz) || json_integer_value(sz) < 0)) {
        free(content);
        return BAD("%s.size: must be a non-negative integer, got %s", where, fb_json_type_name(sz));
    }
    if (sz && has && type == FB_FILE_REGULAR && kind != FB_CHANGE_DELETED &&
        (unsigned long long)json_integer_value(sz) != clen) {
        free(content);
        return BAD("%s.size: %lld does not match the content's %zu bytes (is the content truncated?)", where,
                   json_integer_value(sz), clen);
    }
    if (kind != FB_CHANGE_DELETED && type != FB_FILE_DIRECTORY && !has)
        return BAD("%s.content: %.200s has no content (the result was produced with includeContents: false?); "
                   "a %s file cannot be synced without it", where, path, k_kinds[kind]);
    if (kind == FB_CHANGE_DELETED || type == FB_FILE_DIRECTORY) {
        free(content); /* not used */
        content = NULL;
        clen = 0;
        has = false;
    }
    return fb_change_add(out, (fb_change_kind)kind, type, path, sz ? (uint64_t)json_integer_value(sz) : clen, mode,
                         content, clen, has, err);
}

static int parse_changes(const json_t *v, fb_change_list *out, fb_error *err)
{
    char where[96];
    size_t i;
    json_t *c;
    if (!v)
        return BAD("changes: required (an array of changes, or a result's files object)");
    if (json_is_array(v)) {
        json_array_foreach(v, i, c) {
            snprintf(where, sizeof where, "changes[%zu]", i);
            if (parse_change(c, where, -1, out, err) < 0)
                return -1;
        }
        return 0;
    }
    if (!json_is_object(v))
        return BAD("changes: must be an array of changes or a result's files object {created, modified, deleted}, "
                   "got %s", fb_json_type_name(v));
    /* A result's `files` object: the lists to apply; its other members (denied, ...) are not changes. */
    bool any = false;
    for (int k = 0; k < 3; k++) {
        json_t *list = json_object_get(v, k_kinds[k]);
        if (!list)
            continue;
        any = true;
        if (!json_is_array(list))
            return BAD("changes.%s: must be an array of changes, got %s", k_kinds[k], fb_json_type_name(list));
        json_array_foreach(list, i, c) {
            snprintf(where, sizeof where, "changes.%s[%zu]", k_kinds[k], i);
            if (parse_change(c, where, k, out, err) < 0)
                return -1;
        }
    }
    if (!any)
        return BAD("changes: a files object needs at least one of created, modified, deleted");
    return 0;
}

int fb_request_on_error_parse(const json_t *v, int *on_error, fb_error *err)
{
    static const char *const names[] = {"rollback", "continue", "abort"}; /* fb_sync_on_error order */
    if (!v || json_is_null(v))
        return 0;
    *on_error = -1;
    for (int i = 0; i < 3 && json_is_string(v); i++)
        if (strcmp(json_string_value(v), names[i]) == 0)
            *on_error = i;
    if (*on_error < 0)
        return BAD("onError: must be \"rollback\", \"continue\" or \"abort\"");
    return 0;
}

static int parse_input(const json_t *root, fb_change_list *changes, fb_mount_config *mount, int *on_error,
                       fb_error *err)
{
    if (!json_is_object(root))
        return BAD("input: must be a JSON object {changes, mount, onError}, got %s", fb_json_type_name(root));
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)root, key, v) {
        bool known = false;
        for (size_t i = 0; i < sizeof k_fields / sizeof *k_fields; i++)
            known |= strcmp(key, k_fields[i]) == 0;
        if (!known)
            return BAD("%s: unknown field (expected changes, mount, onError)", key);
    }
    if (fb_request_on_error_parse(json_object_get(root, "onError"), on_error, err) < 0)
        return -1;
    if (parse_changes(json_object_get(root, "changes"), changes, err) < 0)
        return -1;
    json_t *m = json_object_get(root, "mount");
    if (!m)
        return BAD("mount: required (the mount the changes go back to, as in the call request)");
    /* The caller picked each change itself (the seed's syncFiles(changes, {dirs})): a mount without
     * permissions applies them all; one with permissions is checked as in a call. */
    return fb_mount_config_parse_ex(m, "mount", true, mount, err);
}

int fb_sync_request_parse(const char *text, size_t len, fb_sync_request *out, fb_error *err)
{
    *out = (fb_sync_request){.on_error = -1};
    if (len > FB_MAX_REQUEST_BYTES)
        return BAD("input: %zu bytes is more than the maximum of %llu", len, (unsigned long long)FB_MAX_REQUEST_BYTES);
    json_error_t jerr;
    json_t *root = fb_json_loadb(text, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &jerr);
    if (!root)
        return BAD("input: malformed JSON at line %d, column %d: %s", jerr.line, jerr.column, jerr.text);
    int rc = parse_input(root, &out->changes, &out->mount, &out->on_error, err);
    json_decref(root);
    if (rc < 0) {
        fb_change_list_free(&out->changes);
        fb_mount_config_free(&out->mount);
    }
    return rc;
}

void fb_sync_request_free(fb_sync_request *r)
{
    fb_change_list_free(&r->changes);
    fb_mount_config_free(&r->mount);
}
