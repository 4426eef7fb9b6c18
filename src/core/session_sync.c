/* A session's sync (fnbox_session_sync): its mounts' changes so far written to the host, as a call's
 * batch sync writes them (the rules once more, atomic writes beneath each mount root, onError), while the
 * session lives on. The stages:
 *   request    request/session  `{onError?}`
 *   sync       fs/workspace     the servers paused, the changes listed and applied, the refusals taken
 *   report     core/sync_report the sync report, with the changes it was given and the refusals since the
 *                               last sync (core/result_files)
 * Never implicit: closing a session drops what was not synced. */
#include <errno.h>
#include <pthread.h>

#include "core/result_files.h"
#include "core/session.h"
#include "core/sync_report.h"
#include "request/session.h"
#include "util/json.h"

static json_t *report_json(const fb_ws_live_sync *ls)
{
    json_t *doc = fb_sync_report_json(&ls->report);
    if (!doc)
        return NULL;
    json_t *changes = fb_result_changes_json(&ls->changes, false);
    json_t *denied = fb_result_denials_json(&ls->denied);
    if (!changes || !denied || json_object_set_new(doc, "changes", changes) < 0 ||
        json_object_set_new(doc, "denied", denied) < 0 ||
        (ls->denied_dropped &&
         json_object_set_new(doc, "deniedDropped", json_integer((json_int_t)ls->denied_dropped)) < 0)) {
        json_decref(doc);
        return NULL;
    }
    return doc;
}

static int sync_now(fnbox_session *s, int on_error, char **report, size_t *report_len, fb_error *err)
{
    fb_ws_live_sync ls;
    pthread_mutex_lock(&s->sync_mu);
    int rc = fb_workspace_sync_live(&s->ws, on_error, &ls, err);
    pthread_mutex_unlock(&s->sync_mu);
    if (rc == 0 && fb_json_dump_out(report_json(&ls), report, report_len) < 0)
        rc = fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "sync report");
    fb_ws_live_sync_free(&ls);
    return rc;
}

FNBOX_API int fnbox_session_sync(fnbox_session *s, const char *request, size_t request_len, char **report,
                                 size_t *report_len, char **error, size_t *error_len)
{
    fb_error err = {0};
    int on_error = -1;
    *report = NULL;
    if (report_len)
        *report_len = 0;
    if (error)
        *error = NULL;
    if (error_len)
        *error_len = 0;
    if (fb_session_sync_parse(request, request_len, &on_error, &err) < 0 || fb_session_enter(s, &err) < 0)
        return fb_session_fail(&err, error, error_len);
    int rc = sync_now(s, on_error, report, report_len, &err);
    fb_session_leave(s);
    return rc < 0 ? fb_session_fail(&err, error, error_len) : FNBOX_OK;
}
