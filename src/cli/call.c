/* `fnbox call [FILE|-]`: one request in, one result out. SIGINT/SIGTERM/SIGHUP terminate the call
 * (status "terminated") instead of killing fnbox, so the result is still printed. `fnbox exec` (exec.c)
 * is the same verb over fnbox_execute: cli_run_request. */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <jansson.h>

#include "cli/cli.h"
#include "fnbox.h"


static const char k_help[] =
    "usage: fnbox call [OPTIONS] [FILE|-]\n"
    "\n"
    "Reads one FunctionCallRequest JSON from FILE (or stdin when FILE is '-' or absent), runs the\n"
    "function in a fresh sandbox and prints exactly one ExecutionResult JSON on stdout.\n"
    "\n"
    "options:\n"
    "  -p, --pretty   indent the result JSON (default: one line)\n"
    "  -s, --stream   NDJSON: the function's output as it arrives, one line per chunk\n"
    "                 ({\"type\":\"stdout\"|\"stderr\",\"data\":\"...\"}), then one line\n"
    "                 {\"type\":\"result\", ...the ExecutionResult's fields...}\n"
    "  --environments FILE\n"
    "                 the named environments a request may choose with \"environment\": NAME (JSON\n"
    "                 {\"environments\": {NAME: {root?, python?: {paths}, javascript?, ruby?, php?,\n"
    "                 indexes?}}}); default: $FNBOX_ENVIRONMENTS, else none\n"
    "  -h, --help     this help\n"
    "\n"
    "exit status:\n"
    "  0  a result was produced, whatever the function did (see its \"status\")\n"
    "  1  fnbox itself failed (no result could be produced)\n"
    "  2  invalid request or command line (the result names the field)\n"
    "  3  the sandbox could not be set up (error.type SandboxSetupFailed or KernelFeatureMissing)\n";


/* --stream: one NDJSON line per chunk, flushed at once (a pipe reader sees it while the function runs). */
static void print_chunk(void *ctx, const char *stream, const char *data, size_t len)
{
    (void)ctx;
    json_t *line = json_pack("{s:s, s:s%}", "type", stream, "data", data, len);
    char *text = line ? json_dumps(line, JSON_COMPACT) : NULL;
    if (text) {
        fputs(text, stdout);
        putchar('\n');
        fflush(stdout);
    }
    free(text);
    json_decref(line);
}

/* --stream's last line: the result's own fields after "type" (its text spliced as it is: big integers
 * stay exact). */
static void print_result_line(const char *result, size_t len)
{
    fputs("{\"type\":\"result\"", stdout);
    if (len > 2) /* "{}" has no field to follow */
        putchar(',');
    fwrite(result + 1, 1, len - 1, stdout);
    putchar('\n');
}

static int print_pretty(const char *json)
{
    /* Re-indenting would need a JSON parser that keeps big integers exact; keep the library's text
     * and only break after the top-level fields. */
    int depth = 0;
    bool in_str = false, esc = false;
    for (const char *p = json; *p; p++) {
        putchar(*p);
        if (in_str) {
            esc = !esc && *p == '\\';
            if (*p == '"' && !esc)
                in_str = false;
            continue;
        }
        if (*p == '"')
            in_str = true, esc = false;
        else if (*p == '{' || *p == '[')
            depth++;
        else if (*p == '}' || *p == ']')
            depth--;
        else if (*p == ',' && depth == 1)
            fputs("\n ", stdout);
    }
    putchar('\n');
    return 0;
}

int cli_call(int argc, char **argv)
{
    static const cli_request_verb verb = {.name = "call", .help = k_help, .run = fnbox_call};
    return cli_run_request(&verb, argc, argv);
}

int cli_run_request(const cli_request_verb *v, int argc, char **argv)
{
    const char *help = v->help;
    const char *path = "-", *environments = NULL;
    bool pretty = false, stream = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            fputs(help, stdout);
            return CLI_EXIT_OK;
        } else if (strncmp(argv[i], "--environments=", 15) == 0) {
            environments = argv[i] + 15;
        } else if (strcmp(argv[i], "--environments") == 0) {
            if (i + 1 >= argc) {
                fprintf(stderr, "fnbox %s: --environments needs a value (fnbox %s --help)\n", v->name, v->name);
                return CLI_EXIT_USAGE;
            }
            environments = argv[++i];
        } else if (strcmp(argv[i], "-p") == 0 || strcmp(argv[i], "--pretty") == 0) {
            pretty = true;
        } else if (strcmp(argv[i], "-s") == 0 || strcmp(argv[i], "--stream") == 0) {
            stream = true;
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            fprintf(stderr, "fnbox %s: unknown option '%s'\n%s", v->name, argv[i], help);
            return CLI_EXIT_USAGE;
        } else if (strcmp(path, "-") != 0) {
            fprintf(stderr, "fnbox %s: only one request file may be given\n", v->name);
            return CLI_EXIT_USAGE;
        } else {
            path = argv[i];
        }
    }
    char why[1536];
    int code = cli_environments_load(v->name, environments, why, sizeof why);
    if (code != CLI_EXIT_OK) { /* still one result on stdout, as for any request that cannot run */
        cli_print_json_line(json_pack("{s:s, s:b, s:{s:s, s:s}, s:s, s:s, s:i}", "status", "error", "success", 0,
                                      "error", "message", why, "type", "InvalidRequest", "stdout", "", "stderr", "",
                                      "exitCode", 1));
        return code;
    }
    char *req = NULL;
    size_t len = 0;
    if (cli_read_input(path, &req, &len) < 0) {
        int e = errno;
        cli_print_json_line(json_pack("{s:s, s:b, s:{s:o, s:s}, s:s, s:s, s:i}", "status", "error", "success", 0,
                                      "error", "message", cli_read_failure("request: ", path, e), "type",
                                      "InvalidRequest", "stdout", "", "stderr", "", "exitCode", 1));
        fprintf(stderr, "fnbox %s: cannot read %s: %s\n", v->name, path, strerror(e));
        return CLI_EXIT_USAGE;
    }
    fnbox_call_options opts = {.size = sizeof opts, .cancel_fd = cli_stop_signal_fd(SFD_NONBLOCK), /* the library's cancel fd */
                               .output = stream ? print_chunk : NULL};
    char *result = NULL;
    size_t rlen = 0;
    int rc = v->run(req, len, &opts, &result, &rlen);
    free(req);
    if (opts.cancel_fd >= 0)
        close(opts.cancel_fd);
    if (rc == FNBOX_NO_RESULT || !result) {
        fprintf(stderr, "fnbox %s: out of memory: no result could be produced\n", v->name);
        return CLI_EXIT_FAILURE;
    }
    if (stream)
        print_result_line(result, rlen);
    else if (pretty)
        print_pretty(result);
    else {
        fwrite(result, 1, rlen, stdout);
        putchar('\n');
    }
    fnbox_free(result);
    if (fflush(stdout) != 0)
        return CLI_EXIT_FAILURE;
    return rc == FNBOX_INVALID_REQUEST ? CLI_EXIT_USAGE : rc == FNBOX_SANDBOX_FAILED ? CLI_EXIT_SANDBOX : CLI_EXIT_OK;
}
