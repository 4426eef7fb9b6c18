/* fnbox_sync: request/sync decodes `{changes, mount, onError}` -> fs/sync applies -> one sync report JSON
 * (see include/fnbox.h and docs/internals/sync.md). */
#include <stdbool.h>
#include <string.h>

#include "fnbox.h"
#include "core/sync_report.h"
#include "fs/sync.h"
#include "request/sync.h"
#include "util/json.h"

static int finish(json_t *out, const fb_error *e, int rc, char **result, size_t *result_len)
{
    *result = NULL;
    *result_len = 0;
    if (rc == FNBOX_NO_RESULT) {
        json_decref(out);
        return rc;
    }
    if (out && e && fb_error_is_set(e)) {
        json_t *eo = json_pack("{s:s, s:s}", "message", e->message, "type", fb_error_type(e));
        if (!eo || json_object_set_new(out, "error", eo) < 0)
            rc = FNBOX_NO_RESULT;
        json_object_set_new(out, "success", json_false());
    }
    char *text = out ? fb_json_dumps(out, JSON_COMPACT) : NULL;
    json_decref(out);
    if (!text)
        return FNBOX_NO_RESULT;
    *result = text;
    *result_len = strlen(text);
    return rc;
}

FNBOX_API int fnbox_sync(const char *input, size_t input_len, char **result, size_t *result_len)
{
    fb_error err = {0};
    fb_sync_request req;
    fb_sync_report rep = {0};
    int rc = FNBOX_OK;
    if (fb_sync_request_parse(input, input_len, &req, &err) < 0) {
        rc = fb_errkind_family(err.kind) == FB_ERRFAM_REQUEST ? FNBOX_INVALID_REQUEST : FNBOX_NO_RESULT;
        rep.on_error = req.on_error >= 0 ? (fb_sync_on_error)req.on_error : FB_ON_ERROR_ROLLBACK;
    } else {
        fb_sync_options opt = {.on_error = req.on_error};
        if (fb_sync_apply_ex(&req.mount, &req.changes, &opt, &rep, &err) < 0)
            rc = err.kind == FB_ERR_KERNEL_FEATURE ? FNBOX_SANDBOX_FAILED : FNBOX_NO_RESULT;
        else if (rep.failed > 0 || rep.rollback_failed)
            rc = 1;
        fb_sync_request_free(&req);
    }
    json_t *out = rc == FNBOX_NO_RESULT ? NULL : fb_sync_report_json(&rep);
    fb_sync_report_free(&rep);
    return finish(out, rc == FNBOX_OK || rc == 1 ? NULL : &err, rc, result, result_len);
}
