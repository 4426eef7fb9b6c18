/* Trivial kernel executes through the C API (bench/bench_kernel.py builds and runs this): N executes of
 * "1" in one session's kernel for the language (python, javascript, ruby, php), timed; the same cell's cost
 * in-process is the script's. Prints executes per second and the mean per execute in ms. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fnbox.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 2000;
    const char *lang = argc > 2 ? argv[2] : "python";
    fnbox_session *s = NULL;
    char *error = NULL;
    if (fnbox_session_open("", 0, &s, &error, NULL) != FNBOX_OK) {
        fprintf(stderr, "open: %s\n", error ? error : "?");
        return 1;
    }
    const char *req = "{\"code\": \"1\"}";
    char *result = NULL;
    size_t len = 0;
    for (int i = 0; i < 20; i++) { /* start the kernel, warm up */
        fnbox_session_kernel_exec(s, lang, req, strlen(req), NULL, &result, &len);
        fnbox_free(result);
    }
    double t0 = now_ms();
    for (int i = 0; i < n; i++) {
        if (fnbox_session_kernel_exec(s, lang, req, strlen(req), NULL, &result, &len) != FNBOX_OK ||
            !strstr(result, "\"success\"")) {
            fprintf(stderr, "execute %d: %s\n", i, result ? result : "(none)");
            return 1;
        }
        fnbox_free(result);
    }
    double ms = now_ms() - t0;
    printf("{\"executes\": %d, \"ms\": %.1f, \"per_second\": %.0f, \"mean_ms\": %.4f}\n", n, ms, n / (ms / 1e3), ms / n);
    fnbox_session_close(s);
    return 0;
}
