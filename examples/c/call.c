/* Calls one Python function through fnbox's C API and prints its ExecutionResult JSON.
 *
 * Build against an installed fnbox (`make install`, which also installs fnbox.pc for pkg-config):
 *
 *     cc call.c -o call $(pkg-config --cflags --libs fnbox)           # libfnbox.so
 *     cc call.c -o call $(pkg-config --cflags --libs fnbox-static)    # libfnbox.a, nothing of fnbox at run time
 *
 *     ./call                                  # add(2, 3): {"status": "success", "result": 5, ...}
 *     ./call '{"language": "python", "code": "def f(x):\n    return x * 2", "args": [21]}'
 *
 * A request is the JSON every way into fnbox takes (README: Requests and results). The exit status is 0 when
 * the function ran (its outcome, success or not, is the result's `status`), 2 when fnbox refused the request
 * or could not set up the sandbox (the result's `error` says why). */
#include <stdio.h>
#include <string.h>

#include <fnbox.h>

static const char DEFAULT_REQUEST[] =
    "{\"language\": \"python\","
    " \"code\": \"def add(a, b):\\n    return a + b\\n\","
    " \"args\": [2, 3]}";

int main(int argc, char **argv)
{
    const char *request = argc > 1 ? argv[1] : DEFAULT_REQUEST;
    char *result = NULL;
    size_t len = 0;
    int rc = fnbox_call(request, strlen(request), NULL, &result, &len);
    if (rc == FNBOX_NO_RESULT) {
        fputs("fnbox_call: out of memory\n", stderr);
        return 2;
    }
    /* Every other return value comes with one ExecutionResult: print it whatever it says. */
    fwrite(result, 1, len, stdout);
    putchar('\n');
    fnbox_free(result);
    return rc == FNBOX_OK ? 0 : 2;
}
