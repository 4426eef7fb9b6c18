/* The sync report (fs/sync.h's fb_sync_report) as JSON: the result's `files.sync` and `fnbox sync`'s
 * output (core/sync_report.h). */
#include "core/sync_report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/utf8.h"

static json_t *text(const char *s)
{
    if (!s)
        return json_null();
    json_t *v = json_string(s);
    if (v)
        return v;
    size_t len;
    char *clean = fb_utf8_sanitize(s, strlen(s), &len);
    v = clean ? json_stringn(clean, len) : NULL;
    free(clean);
    return v;
}

static int put(json_t *obj, const char *key, json_t *v)
{
    return v && json_object_set_new(obj, key, v) == 0 ? 0 : -1;
}

static int push(json_t *arr, json_t *v)
{
    return v && json_array_append_new(arr, v) == 0 ? 0 : -1;
}

/* Skipped because a permission rule or the host's callback refused it (the only skips with a rule). */
static size_t denied_count(const fb_sync_report *rep)
{
    size_t n = 0;
    for (size_t i = 0; i < rep->n; i++)
        n += rep->items[i].state == FB_SYNC_ITEM_SKIPPED && rep->items[i].rule;
    return n;
}

/* One sentence on what reached the host, so a report with an empty `synced` always says why. */
static json_t *summary(const fb_sync_report *rep)
{
    size_t denied = denied_count(rep), kept = rep->synced;
    char *s = NULL;
    int rc;
    if (rep->n == 0)
        rc = asprintf(&s, "nothing to sync: there were no changes");
    else if (rep->rolled_back)
        rc = asprintf(&s, "nothing was kept: a change failed and the sync was rolled back (see failed)");
    else if (kept == 0 && denied == rep->n)
        rc = asprintf(&s, "nothing was written: the mount's permissions refused all %zu change%s (each is in "
                          "skipped with the rule that decided)", rep->n, rep->n == 1 ? "" : "s");
    else if (kept == 0 && denied > 0)
        rc = asprintf(&s, "nothing was written: the mount's permissions refused %zu of %zu changes (see skipped), "
                          "%zu failed, %zu skipped for other reasons", denied, rep->n, rep->failed,
                      rep->skipped - denied);
    else
        rc = asprintf(&s, "%zu of %zu change%s written to the host%s", kept, rep->n, rep->n == 1 ? "" : "s",
                      kept == rep->n ? "" : " (the others are in skipped, failed or notAttempted, each with why)");
    json_t *v = rc < 0 ? NULL : json_string(s);
    free(s);
    return v;
}

json_t *fb_sync_report_json(const fb_sync_report *rep)
{
    json_t *o = json_object();
    json_t *synced = json_array(), *failed = json_array(), *skipped = json_array(), *na = json_array(),
           *undone = json_array(), *details = json_array();
    int bad = !o || !synced || !failed || !skipped || !na || !undone || !details;
    for (size_t i = 0; !bad && i < rep->n; i++) {
        const fb_sync_item *it = &rep->items[i];
        json_t *d = json_object();
        bad |= !d;
        if (bad)
            break;
        bad |= put(d, "path", text(it->path)) | put(d, "realPath", text(it->host_path)) |
               put(d, "type", json_string(fb_file_type_name(it->type))) |
               put(d, "kind", json_string(fb_change_kind_name(it->kind))) |
               put(d, "status", json_string(fb_sync_state_name(it->state)));
        if (it->operation)
            bad |= put(d, "operation", json_string(it->operation));
        if (it->error)
            bad |= put(d, "error", text(it->error));
        if (it->reason)
            bad |= put(d, "reason", text(it->reason));
        if (it->rule)
            bad |= put(d, "rule", text(it->rule));
        bad |= push(details, d);
        switch (it->state) {
        case FB_SYNC_ITEM_SYNCED: bad |= push(synced, text(it->path)); break;
        case FB_SYNC_ITEM_ROLLED_BACK: bad |= push(undone, text(it->path)); break;
        case FB_SYNC_ITEM_NOT_ATTEMPTED: bad |= push(na, text(it->path)); break;
        case FB_SYNC_ITEM_FAILED: {
            json_t *f = json_object();
            bad |= !f || put(f, "path", text(it->path)) | put(f, "error", text(it->error)) | push(failed, f);
            break;
        }
        case FB_SYNC_ITEM_SKIPPED: {
            json_t *s = json_object();
            bad |= !s || put(s, "path", text(it->path)) | put(s, "reason", text(it->reason)) |
                             (it->rule ? put(s, "rule", text(it->rule)) : 0) |
                             (it->rule && it->operation ? put(s, "operation", json_string(it->operation)) : 0) |
                             push(skipped, s);
            break;
        }
        }
    }
    if (!bad)
        bad |= put(o, "success", json_boolean(rep->failed == 0 && !rep->rollback_failed)) |
               put(o, "synced", json_incref(synced)) | put(o, "failed", json_incref(failed)) |
               put(o, "skipped", json_incref(skipped)) | put(o, "notAttempted", json_incref(na)) |
               put(o, "rolledBack", json_boolean(rep->rolled_back)) | put(o, "undone", json_incref(undone)) |
               put(o, "onError", json_string(fb_sync_on_error_name(rep->on_error))) |
               put(o, "details", json_incref(details)) |
               put(o, "deniedByPermissions", json_integer((json_int_t)denied_count(rep))) |
               put(o, "message", summary(rep));
    json_decref(synced);
    json_decref(failed);
    json_decref(skipped);
    json_decref(na);
    json_decref(undone);
    json_decref(details);
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}
