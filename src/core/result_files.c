/* The result's file sections (see result_files.h). */
#include "core/result_files.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/sync_report.h"
#include "util/base64.h"
#include "util/utf8.h"

static json_t *content_json(const fb_change *c)
{
    json_t *s = json_stringn((const char *)c->content, c->content_len); /* NULL unless valid UTF-8 */
    if (s)
        return s;
    char *b64 = fb_base64_encode(c->content, c->content_len);
    if (!b64)
        return NULL;
    json_t *o = json_pack("{s:s}", "base64", b64);
    free(b64);
    return o;
}

static json_t *change_json(const fb_change *c, bool with_content)
{
    json_t *o = json_pack("{s:s, s:s, s:I}", "path", c->path, "type", fb_file_type_name(c->type), "size",
                          (json_int_t)c->size);
    if (o && with_content && c->has_content && c->kind != FB_CHANGE_DELETED)
        json_object_set_new(o, "content", content_json(c));
    return o;
}

json_t *fb_result_denials_json(const fb_denial_list *d)
{
    json_t *denied = json_array();
    for (size_t j = 0; denied && j < d->n; j++)
        json_array_append_new(denied, json_pack("{s:s, s:s, s:s}", "path", d->v[j].path, "operation",
                                                d->v[j].operation, "rule", d->v[j].rule));
    return denied;
}

static void add_denials(const fb_workspace *ws, json_t *files)
{
    json_t *denied = json_array();
    for (size_t i = 0; denied && i < ws->nmounts; i++) {
        json_t *one = fb_result_denials_json(ws->logs[i].denials);
        json_array_extend(denied, one);
        json_decref(one);
    }
    json_object_set_new(files, "denied", denied);
}

static void add_skipped(const fb_workspace *ws, json_t *files)
{
    json_t *skipped = json_array();
    for (size_t i = 0; i < ws->nmounts; i++) {
        const fb_ws_mount_log *l = &ws->logs[i];
        for (size_t j = 0; j < l->nskipped; j++)
            json_array_append_new(skipped, json_pack("{s:s, s:s, s:I}", "path", l->skipped[j].path, "reason",
                                                     l->skipped[j].reason, "size", (json_int_t)l->skipped[j].size));
    }
    if (json_array_size(skipped))
        json_object_set_new(files, "skipped", skipped);
    else
        json_decref(skipped);
}

json_t *fb_result_changes_json(const fb_change_list *l, bool with_content)
{
    json_t *files = json_object();
    json_t *lists[3] = {json_array(), json_array(), json_array()}; /* created, modified, deleted */
    for (size_t i = 0; i < l->n; i++)
        json_array_append_new(lists[l->v[i].kind], change_json(&l->v[i], with_content));
    json_object_set_new(files, "created", lists[0]);
    json_object_set_new(files, "modified", lists[1]);
    json_object_set_new(files, "deleted", lists[2]);
    return files;
}

static json_t *files_json(const fb_workspace *ws, const fb_reporting *rep)
{
    json_t *files = fb_result_changes_json(&ws->changes, rep->include_contents);
    if (rep->include_denied)
        add_denials(ws, files);
    add_skipped(ws, files);
    for (size_t i = 0; i < ws->nmounts; i++)
        if (ws->logs[i].failure)
            json_object_set_new(files, "error", json_string(ws->logs[i].failure));
    return files;
}

/* The log entry for ev. Paths are shown with U+FFFD for bytes that are not UTF-8 (json_string refuses
 * them). */
static json_t *event_json(const fb_ws_event *ev)
{
    json_t *o = json_pack("{s:s}", "type", ev->type);
    if (!o)
        return NULL;
    const char *keys[] = {"path", "realPath", "change", "fileType", "operation", "rule"};
    const char *vals[] = {ev->path, ev->real_path, ev->change, ev->file_type, ev->operation, ev->rule};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        if (!vals[i])
            continue;
        size_t n = 0;
        char *clean = fb_utf8_sanitize(vals[i], strlen(vals[i]), &n);
        if (clean)
            json_object_set_new(o, keys[i], json_stringn(clean, n));
        free(clean);
    }
    if (strcmp(ev->type, "afterSync") == 0)
        json_object_set_new(o, "success", json_boolean(ev->success));
    if (ev->error)
        json_object_set_new(o, "error", json_string(ev->error));
    return o;
}

static json_t *events_json(const fb_ws_event_log *log)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < log->n; i++)
        json_array_append_new(a, event_json(&log->v[i]));
    return a;
}

int fb_result_add_files(fb_result *r, const fb_workspace *ws, const fb_reporting *rep, fb_error *err)
{
    /* includeChanges false: no `files` at all, as the seed leaves it undefined (issue 11); a batch sync
     * has already run on the full change list, its report is `sync`. */
    if (rep->include_changes)
        json_object_set_new(r->obj, "files", files_json(ws, rep));
    if (ws->synced) {
        json_t *sync = fb_sync_report_json(&ws->sync);
        if (!sync)
            return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "sync report");
        json_object_set_new(r->obj, "sync", sync);
    }
    if (ws->events.n)
        json_object_set_new(r->obj, "events", events_json(&ws->events));
    return 0;
}
