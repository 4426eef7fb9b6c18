/* The CLI: a verb table (main.c) and one file per verb. The CLI uses include/fnbox.h only and is the
 * only place that picks exit codes. */
#ifndef FB_CLI_H
#define FB_CLI_H
#include <stddef.h>

#include <jansson.h>

#include "fnbox.h"

#define CLI_EXIT_OK 0
#define CLI_EXIT_FAILURE 1  /* fnbox itself failed (I/O, out of memory) */
#define CLI_EXIT_USAGE 2    /* bad command line or invalid request */
#define CLI_EXIT_SANDBOX 3  /* the sandbox could not be set up */

/* One byte more than the library accepts, so that the library reports the size limit by name. */
#define CLI_MAX_INPUT (256UL * 1024 * 1024 + 1)

/* Reads FILE (or stdin for "-") whole, up to CLI_MAX_INPUT bytes; caller frees *out. -1 with errno. */
int cli_read_input(const char *path, char **out, size_t *len);
/* Why cli_read_input failed, for a verb's JSON answer: "PREFIXcannot read 'PATH': STRERROR (ENAME)" as a
 * JSON string ("stdin" for "-"; a name that is not UTF-8 shows its other bytes as \xNN); NULL when out of
 * memory. */
json_t *cli_read_failure(const char *prefix, const char *path, int err);
/* Prints doc (taken; NULL prints nothing) as one compact line on stdout. */
void cli_print_json_line(json_t *doc);

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
/* A verb's options as a table: "--name value" or "--name=value". set takes the value (0, or -1 after printing
 * why); ctx is the verb's own. */
typedef struct cli_option {
    const char *name;
    int (*set)(void *ctx, const char *opt, const char *value);
} cli_option;
/* argv[*i] read through table (n entries); *i moves past what was used. 0, or -1 after printing why (an
 * unknown option, a missing value, or set's own reason) as verb's. */
int cli_parse_option(const char *verb, const cli_option *table, size_t n, void *ctx, int argc, char **argv,
                     int *i);

/* --warm LANG=N[,LANG=N...]|none and --warm-memory BYTES, as every verb that keeps warm pools reads them
 * (fnbox serve, fnbox mcp; warm.c). CLI_WARM_DEFAULT: the engine's "default" pools, its default memory cap. */
typedef struct cli_warm {
    char warm[1024];           /* the options' "warm" member: "default", {"lang": n, ...}, or "" for none */
    unsigned long long memory; /* --warm-memory; 0: the engine's default */
    char options[1200];        /* cli_warm_options' text */
} cli_warm;
#define CLI_WARM_DEFAULT {.warm = "\"default\""}
/* Each takes an option's value: NULL when it is valid (kept in w), else why not, for the verb to print. */
const char *cli_warm_set(cli_warm *w, const char *value);
const char *cli_warm_set_memory(cli_warm *w, const char *value);
/* fnbox_engine_open's options from w; NULL for --warm none. */
const char *cli_warm_options(cli_warm *w);
/* Opens the engine w asks for (*engine NULL for --warm none; the caller closes it with fnbox_engine_close).
 * CLI_EXIT_OK, or the exit code after printing why, naming --warm and verb: CLI_EXIT_USAGE when the engine
 * refused the options (a language with no runtime here), CLI_EXIT_FAILURE when it could not start. */
int cli_warm_open(cli_warm *w, const char *verb, fnbox_engine **engine);
/* Loads the named environments (environments.c): path (--environments FILE), or FNBOX_ENVIRONMENTS when
 * path is NULL; neither: none. CLI_EXIT_OK, or the exit code after printing why on stderr as verb's, why
 * (cap bytes) holding the message ("--environments FILE: environments.x.root: ..."). */
int cli_environments_load(const char *verb, const char *path, char *why, size_t cap);
int cli_doctor(int argc, char **argv);
int cli_infer(int argc, char **argv);
int cli_serve(int argc, char **argv);
int cli_mcp(int argc, char **argv);

#endif
