/* Session options decoding (session.h). The shared fields use the call request's decoders, so a session
 * refuses the same things with the same words as a call. */
#include "request/session.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "request/files.h"
#include "request/limits.h"
#include "request/mount.h"
#include "request/sync.h"
#include "util/json.h"

#define BAD(...) fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, __VA_ARGS__)

static const char *const k_fields[] = {"workdir", "files", "permissions", "limits", "idleTimeout", "maxLifetime",
                                       "mount", "environment", "dependencies", NULL};

static int check_fields(json_t *obj, fb_error *err)
{
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v) {
        bool known = false;
        for (const char *const *f = k_fields; *f && !known; f++)
            known = strcmp(key, *f) == 0;
        if (!known)
            return BAD("%.64s: unknown field (expected workdir, files, mount, permissions, limits, idleTimeout, "
                       "maxLifetime, environment, dependencies)",
                       key);
    }
    return 0;
}

/* idleTimeout / maxLifetime: seconds, more than 0, at most FB_SESSION_MAX_LIFETIME_S. */
static int parse_seconds(json_t *obj, const char *name, double dflt, double *out, fb_error *err)
{
    json_t *v = json_object_get(obj, name);
    *out = dflt;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_number(v))
        return BAD("%s: must be a number of seconds, got %s", name, fb_json_type_name(v));
    double s = json_number_value(v);
    if (!(s > 0) || s > FB_SESSION_MAX_LIFETIME_S || isnan(s))
        return BAD("%s: must be more than 0 and at most %g seconds, got %g", name, FB_SESSION_MAX_LIFETIME_S, s);
    *out = s;
    return 0;
}


/* `mount` as a call's (permissions.fs's allowAllFs preset included), except for when it syncs: a session
 * syncs when asked (fb_session_sync_parse), never on close, so of `sync` only onError (the default of each
 * sync) applies. Nobody picks the changes of such a sync, as with a call's batch sync: a mount without
 * `permissions` allows read and list only. */
static int parse_mount(json_t *v, fb_session_options *o, fb_error *err)
{
    if (!v || json_is_null(v))
        return 0;
    json_t *sync = json_object_get(v, "sync");
    const char *const call_only[] = {"mode", "onFunctionError"};
    for (size_t i = 0; i < 2; i++)
        if (json_is_object(sync) && json_object_get(sync, call_only[i]))
            return BAD("mount.sync.%s: a session's mount syncs only when asked (POST /v1/sessions/{id}/sync, "
                       "fnbox_session_sync), never on its own; only mount.sync.onError applies",
                       call_only[i]);
    json_t *batch = json_is_object(v) ? json_deep_copy(v) : json_incref(v);
    json_t *bsync = batch && json_is_object(batch) ? json_object_get(batch, "sync") : NULL;
    if (batch && json_is_object(batch) && !bsync)
        json_object_set_new(batch, "sync", bsync = json_object());
    if (!batch || (json_is_object(bsync) && json_object_set_new(bsync, "mode", json_string("batch")) < 0) ||
        !(o->mount = calloc(1, sizeof *o->mount))) {
        json_decref(batch);
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "mount");
    }
    int rc = fb_mount_config_parse_ex(batch, "mount", o->permissions.fs_all, o->mount, err);
    json_decref(batch);
    return rc;
}

static int decode(json_t *root, fb_session_options *o, fb_error *err)
{
    if (!json_is_object(root))
        return BAD("options: must be a JSON object, got %s", fb_json_type_name(root));
    if (check_fields(root, err) < 0)
        return -1;
    if (fb_request_workdir_parse(json_object_get(root, "workdir"), &o->workdir, err) < 0 ||
        fb_request_shell_permissions_parse(json_object_get(root, "permissions"), "permissions", &o->permissions, err) < 0 ||
        fb_request_limits_parse(json_object_get(root, "limits"), "limits", FB_SESSION_CPU_SECONDS, &o->limits, err) < 0 ||
        parse_seconds(root, "idleTimeout", FB_SESSION_DEFAULT_IDLE_S, &o->idle_timeout_s, err) < 0 ||
        parse_seconds(root, "maxLifetime", FB_SESSION_DEFAULT_LIFETIME_S, &o->max_lifetime_s, err) < 0 ||
        fb_environment_decode(json_object_get(root, "environment"), "environment", &o->environment, err) < 0 ||
        fb_dependencies_decode(json_object_get(root, "dependencies"), "dependencies", &o->dependencies, err) < 0)
        return -1;
    if (parse_mount(json_object_get(root, "mount"), o, err) < 0)
        return -1;
    json_t *files = json_object_get(root, "files");
    if (files && !json_is_null(files) && !json_is_object(files))
        return BAD("files: must be an object {path: content}, got %s", fb_json_type_name(files));
    return fb_request_files_decode(json_is_object(files) ? files : NULL, o->workdir, o->limits.workspace_bytes,
                                   &o->files, err);
}

static bool blank(const char *text, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (!isspace((unsigned char)text[i]))
            return false;
    return true;
}

int fb_session_options_parse(const char *text, size_t len, fb_session_options *out, fb_error *err)
{
    memset(out, 0, sizeof *out);
    if (len > FB_MAX_REQUEST_BYTES)
        return BAD("options: %zu bytes is more than the maximum of %llu", len, (unsigned long long)FB_MAX_REQUEST_BYTES);
    json_error_t jerr = {0};
    out->root = !text || blank(text, len) ? json_object()
                                          : fb_json_loadb(text, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &jerr);
    if (!out->root)
        return text && !blank(text, len)
                   ? BAD("options: malformed JSON at line %d, column %d: %s", jerr.line, jerr.column, jerr.text)
                   : fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "options");
    if (decode(out->root, out, err) < 0) {
        fb_session_options_free(out);
        return -1;
    }
    return 0;
}

int fb_session_sync_parse(const char *text, size_t len, int *on_error, fb_error *err)
{
    *on_error = -1;
    if (!text || blank(text, len))
        return 0;
    if (len > FB_MAX_REQUEST_BYTES)
        return BAD("sync: %zu bytes is more than the maximum of %llu", len, (unsigned long long)FB_MAX_REQUEST_BYTES);
    json_error_t jerr = {0};
    json_t *root = fb_json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root)
        return BAD("sync: malformed JSON at line %d, column %d: %s", jerr.line, jerr.column, jerr.text);
    int rc = 0;
    const char *key;
    json_t *v;
    if (!json_is_object(root))
        rc = BAD("sync: must be a JSON object {onError}, got %s", fb_json_type_name(root));
    else
        json_object_foreach(root, key, v) {
            if (rc == 0 && strcmp(key, "onError") != 0)
                rc = BAD("%.64s: unknown field (expected onError)", key);
        }
    if (rc == 0)
        rc = fb_request_on_error_parse(json_object_get(root, "onError"), on_error, err);
    json_decref(root);
    return rc;
}

void fb_session_options_free(fb_session_options *o)
{
    fb_dependencies_free(&o->dependencies);
    if (o->mount) {
        fb_mount_config_free(o->mount);
        free(o->mount);
    }
    fb_request_files_free(&o->files);
    fb_permissions_free(&o->permissions);
    json_decref(o->root);
    memset(o, 0, sizeof *o);
}
