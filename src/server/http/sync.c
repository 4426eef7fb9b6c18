/* POST /v1/sync: the body is what `fnbox sync` reads ({changes, mount, onError?}), the answer fnbox_sync's
 * report, byte for byte what `fnbox sync` prints. It is how a remote client applies the changes a call in
 * manual sync mode reported (the seed's executor.syncFiles): the same host directories a call's batch sync
 * may write, the same atomic writes beneath the mount roots. 200 for a report (some changes may have failed:
 * see `success` and `failed`), 400 when the input was refused (nothing written), 503 when host files cannot
 * be written safely here. It takes a run slot: it writes host files as a call does. */
#include "fnbox.h"
#include "server/http/internal.h"

#define SYNC_TAKES "POST /v1/sync takes {changes, mount, onError?} JSON, as `fnbox sync` does"

int fb_http_sync_begin(fb_http_exchange *x, fb_error *err)
{
    return fb_http_run_begin(x, SYNC_TAKES, err);
}

/* fnbox_sync as a run: it asks no option (nothing to cancel or stream); "some changes failed" (1) is a
 * report like any other. */
static int sync_api(const char *request, size_t len, const fnbox_call_options *options, char **result,
                    size_t *result_len)
{
    (void)options;
    int rc = fnbox_sync(request, len, result, result_len);
    return rc == 1 ? FNBOX_OK : rc;
}

static fb_http_reply run(fb_http_exchange *x)
{
    return fb_http_run_reply(x, sync_api);
}

fb_http_reply fb_http_handle_sync(fb_http_exchange *x)
{
    return fb_http_run_admitted(x, SYNC_TAKES, run);
}
