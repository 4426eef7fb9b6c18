/* POST /v1/execute: the body is an execute request ({command} or {code, language}, fnbox.h), the answer
 * fnbox_execute's result, byte for byte what `fnbox exec` prints; every outcome of the program is 200.
 * Cancelled like a call (run.c). */
#include "fnbox.h"
#include "server/http/internal.h"

#define EXECUTE_TAKES "POST /v1/execute takes an execute request JSON ({command} or {code, language})"

int fb_http_execute_begin(fb_http_exchange *x, fb_error *err)
{
    return fb_http_run_begin(x, EXECUTE_TAKES, err);
}

static fb_http_reply run(fb_http_exchange *x)
{
    return fb_http_run_reply(x, fnbox_execute);
}

fb_http_reply fb_http_handle_execute(fb_http_exchange *x)
{
    return fb_http_run_admitted(x, EXECUTE_TAKES, run);
}
