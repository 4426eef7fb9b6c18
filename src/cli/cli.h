/* The CLI: a verb table (main.c) and one file per verb. The CLI uses include/fnbox.h only and is the
 * only place that picks exit codes. */
#ifndef FB_CLI_H
#define FB_CLI_H

#define CLI_EXIT_OK 0
#define CLI_EXIT_FAILURE 1  /* fnbox itself failed (I/O, out of memory) */
#define CLI_EXIT_USAGE 2    /* bad command line or invalid request */
#define CLI_EXIT_SANDBOX 3  /* the sandbox could not be set up */

int cli_call(int argc, char **argv);
int cli_doctor(int argc, char **argv);
int cli_infer(int argc, char **argv);

#endif
