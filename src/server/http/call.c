/* POST /v1/call: the body is a FunctionCallRequest, the answer fnbox_call's ExecutionResult, byte for
 * byte what `fnbox call` prints; with Accept: application/x-ndjson, the stream of `fnbox call --stream`
 * (stream.c). The call is cancelled when its client hangs up or when the server's grace period is over
 * (run.c). */
#include "fnbox.h"
#include "server/http/internal.h"

#define CALL_TAKES "POST /v1/call takes a FunctionCallRequest JSON"

int fb_http_call_begin(fb_http_exchange *x, fb_error *err)
{
    return fb_http_run_begin(x, CALL_TAKES, err);
}

static fb_http_reply run(fb_http_exchange *x)
{
    return fb_http_run_reply(x, fnbox_call);
}

fb_http_reply fb_http_handle_call(fb_http_exchange *x)
{
    return fb_http_run_admitted(x, CALL_TAKES, run);
}
