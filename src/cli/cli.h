/* The CLI: a verb table (main.c) and one file per verb. The CLI uses include/fnbox.h only and is the
 * only place that picks exit codes. */
#ifndef FB_CLI_H
#define FB_CLI_H
#include <stddef.h>

#include "fnbox.h"

#define CLI_EXIT_OK 0
#define CLI_EXIT_FAILURE 1  /* fnbox itself failed (I/O, out of memory) */
#define CLI_EXIT_USAGE 2    /* bad command line or invalid request */
#define CLI_EXIT_SANDBOX 3  /* the sandbox could not be set up */

/* One byte more than the library accepts, so that the library reports the size limit by name. */
#define CLI_MAX_INPUT (256UL * 1024 * 1024 + 1)

/* Reads FILE (or stdin for "-") whole, up to CLI_MAX_INPUT bytes; caller frees *out. -1 with errno. */
int cli_read_input(const char *path, char **out, size_t *len);

/* Blocks SIGINT, SIGTERM and SIGHUP (in this thread and the threads it starts after) and returns a
 * signalfd that reads them (flags: more SFD_* flags, e.g. SFD_NONBLOCK), or -1 with errno. */
int cli_stop_signal_fd(int flags);

int cli_call(int argc, char **argv);
int cli_exec(int argc, char **argv);

/* A verb that reads one request and prints one result ([FILE|-], --pretty, --stream, the exit statuses of
 * `fnbox call`), over the C API function run (fnbox_call, fnbox_execute). */
typedef struct cli_request_verb {
    const char *name;
    const char *help;
    int (*run)(const char *request, size_t len, const fnbox_call_options *options, char **result, size_t *result_len);
} cli_request_verb;
int cli_run_request(const cli_request_verb *v, int argc, char **argv);
int cli_doctor(int argc, char **argv);
int cli_infer(int argc, char **argv);
int cli_serve(int argc, char **argv);
int cli_mcp(int argc, char **argv);

#endif
