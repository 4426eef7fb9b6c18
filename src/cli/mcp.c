/* `fnbox mcp`: the MCP server on stdin/stdout (src/server/mcp/). This file reads the options and the
 * configuration file and owns the signals: SIGTERM, SIGINT and SIGHUP end it as stdin's EOF does. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "cli/cli.h"
#include "server/mcp/mcp.h"

static const char k_help[] =
    "usage: fnbox mcp [--config FILE] [--output-bytes N] [--timeout S] [--max-timeout S]\n"
    "\n"
    "Serves the Model Context Protocol on stdin/stdout (JSON-RPC, one message per line; logs on stderr) for\n"
    "one client: tools run_code and call_function (a fresh sandbox each), exec_command, read_file,\n"
    "write_file, list_files, remove_file, run_in_kernel (a Python/JavaScript/Ruby/PHP kernel keeping its state: all\n"
    "in one sandbox session for this client, opened on first use), and list_languages. Ends at EOF on\n"
    "stdin (or SIGTERM/SIGINT), killing everything it started.\n"
    "Client configuration: {\"command\": \"fnbox\", \"args\": [\"mcp\"]}\n"
    "\n"
    "options:\n"
    "  --config FILE       JSON {session?: session options (mount, permissions, limits, files...),\n"
    "                      tools?: [enabled tool names], outputBytes?, readBytes?, timeout?, maxTimeout?}\n"
    "  --output-bytes N    output per stream sent to the model (default 32768; 256-16777216): head and\n"
    "                      tail kept\n"
    "  --timeout S         a run's timeout when the call gives none (default 30)\n"
    "  --max-timeout S     the largest timeout a call may ask for (default 300; at most 3600)\n"
    "  -h, --help          this help\n"
    "\n"
    "Safe defaults: no network, no host files, no host environment in any sandbox.\n"
    "exit status: 0 at EOF or a signal; 2 for a bad option or configuration; 1 when fnbox itself failed.\n";

static int bad(const char *opt, const char *value, const char *why)
{
    fprintf(stderr, "fnbox mcp: %s '%s': %s (fnbox mcp --help)\n", opt, value, why);
    return -1;
}

static int seconds(const char *opt, const char *v, double *out)
{
    char *end = NULL;
    errno = 0;
    double s = strtod(v, &end);
    if (errno || end == v || *end || !(s > 0) || s > FB_MCP_MAX_TIMEOUT_S || !isfinite(s))
        return bad(opt, v, "must be a number of seconds above 0, at most 3600");
    *out = s;
    return 0;
}

static int load_config(const char *path, fb_mcp_config *cfg)
{
    char *text = NULL, err[512];
    size_t len = 0;
    if (cli_read_input(path, &text, &len) < 0)
        return bad("--config", path, strerror(errno));
    int rc = fb_mcp_config_parse(text, len, cfg, err, sizeof err);
    free(text);
    return rc < 0 ? bad("--config", path, err) : 0;
}

static int parse_args(int argc, char **argv, fb_mcp_config *cfg)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        bool takes = strcmp(a, "--config") == 0 || strcmp(a, "--output-bytes") == 0 || strcmp(a, "--timeout") == 0 ||
                     strcmp(a, "--max-timeout") == 0;
        if (!takes)
            return bad("option", a, "unknown");
        if (!v)
            return bad(a, "", "needs a value");
        int rc = 0;
        if (strcmp(a, "--config") == 0) {
            rc = load_config(v, cfg);
        } else if (strcmp(a, "--output-bytes") == 0) {
            char *end = NULL;
            errno = 0;
            unsigned long n = strtoul(v, &end, 10);
            if (errno || end == v || *end || n < 256 || n > FB_MCP_MAX_OUTPUT_BYTES)
                return bad(a, v, "must be a number of bytes from 256 to 16777216");
            cfg->output_bytes = n;
        } else if (strcmp(a, "--timeout") == 0) {
            rc = seconds(a, v, &cfg->timeout_s);
        } else {
            rc = seconds(a, v, &cfg->max_timeout_s);
        }
        if (rc < 0)
            return -1;
        i++;
    }
    return 0;
}

int cli_mcp(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            fputs(k_help, stdout);
            return CLI_EXIT_OK;
        }
    fb_mcp_config cfg;
    fb_mcp_config_init(&cfg);
    if (parse_args(argc, argv, &cfg) < 0) {
        fb_mcp_config_free(&cfg);
        return CLI_EXIT_USAGE;
    }
    signal(SIGPIPE, SIG_IGN); /* a client gone while we write: EPIPE, then EOF on stdin */
    int stop = cli_stop_signal_fd(SFD_NONBLOCK);
    if (stop < 0)
        fprintf(stderr, "fnbox mcp: signals: %s (stdin's EOF still ends it)\n", strerror(errno));
    int rc = fb_mcp_stdio_run(&cfg, STDIN_FILENO, STDOUT_FILENO, stop);
    if (rc < 0)
        fprintf(stderr, "fnbox mcp: reading stdin: %s\n", strerror(errno));
    if (stop >= 0)
        close(stop);
    fb_mcp_config_free(&cfg);
    return rc < 0 ? CLI_EXIT_FAILURE : CLI_EXIT_OK;
}
