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
    "                 [--warm LANG=N[,LANG=N...]|none] [--warm-memory BYTES] [--environments FILE]\n"
    "\n"
    "Serves the Model Context Protocol on stdin/stdout (JSON-RPC, one message per line; logs on stderr) for\n"
    "one client: tools run_code and call_function (a fresh sandbox each), exec_command, read_file,\n"
    "write_file, list_files, remove_file, run_in_kernel (a Python, JavaScript, Ruby or PHP kernel\n"
    "keeping its state), all in one sandbox session for this client, opened on first use, and\n"
    "list_languages. Ends at EOF on stdin (or SIGTERM/SIGINT), killing everything it started.\n"
    "Client configuration: {\"command\": \"fnbox\", \"args\": [\"mcp\"]}\n"
    "\n"
    "options:\n"
    "  --environments FILE the named environments the configuration's session.environment may choose\n"
    "                      (run_code, call_function and the session run there); default:\n"
    "                      $FNBOX_ENVIRONMENTS, else none. A bad file or name stops here (exit 2)\n"
    "  --config FILE       JSON {session?: session options (mount, permissions, limits, files,\n"
    "                      environment...),\n"
    "                      tools?: [enabled tool names], outputBytes?, readBytes?, timeout?, maxTimeout?}\n"
    "  --output-bytes N    output per stream sent to the model (default 32768; 256-16777216): head and\n"
    "                      tail kept\n"
    "  --timeout S         a run's timeout when the call gives none (default 30)\n"
    "  --max-timeout S     the largest timeout a call may ask for (default 300; at most 3600)\n"
    "  --warm LANG=N[,LANG=N...]|none\n"
    "                      sandboxes kept ready per language for call_function, as for `fnbox serve`:\n"
    "                      each built ahead with its runtime started, serving one call only (0-64\n"
    "                      each; default: 1 for each of python, javascript, ruby, php whose runtime is\n"
    "                      here; for c and cpp, the compiler, waiting for a new program's source);\n"
    "                      a call no ready sandbox fits (an empty pool) runs cold\n"
    "                      LANG@ENVIRONMENT=N: a pool built in a named environment (call_function\n"
    "                      runs in the configuration's session.environment)\n"
    "  --warm-memory BYTES no new ready sandbox once the ready ones hold this much memory (K, M, G\n"
    "                      suffixes; default 1G)\n"
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

/* What the command line sets: the server's configuration and the warm pools'. */
typedef struct mcp_options {
    fb_mcp_config cfg;
    cli_warm warm;
    const char *environments; /* --environments */
} mcp_options;

static int set_environments(void *ctx, const char *opt, const char *v)
{
    if (!*v)
        return bad(opt, v, "empty");
    ((mcp_options *)ctx)->environments = v;
    return 0;
}

/* The environments, loaded once every option is read (the configuration and the warm pools may name one). */
static int load_environments(mcp_options *o)
{
    char why[1536];
    int code = cli_environments_load("mcp", o->environments, why, sizeof why);
    if (code == CLI_EXIT_OK && fb_mcp_config_check_environment(&o->cfg, why, sizeof why) < 0) {
        fprintf(stderr, "fnbox mcp: --config: %s\n", why);
        code = CLI_EXIT_USAGE;
    }
    return code;
}

static int set_config(void *ctx, const char *opt, const char *v)
{
    mcp_options *o = ctx;
    char *text = NULL, err[512];
    size_t len = 0;
    if (cli_read_input(v, &text, &len) < 0)
        return bad(opt, v, strerror(errno));
    int rc = fb_mcp_config_parse(text, len, &o->cfg, err, sizeof err);
    free(text);
    return rc < 0 ? bad(opt, v, err) : 0;
}

static int set_output_bytes(void *ctx, const char *opt, const char *v)
{
    mcp_options *o = ctx;
    char *end = NULL;
    errno = 0;
    unsigned long n = strtoul(v, &end, 10);
    if (errno || end == v || *end || n < 256 || n > FB_MCP_MAX_OUTPUT_BYTES)
        return bad(opt, v, "must be a number of bytes from 256 to 16777216");
    o->cfg.output_bytes = n;
    return 0;
}

static int set_timeout(void *ctx, const char *opt, const char *v)
{
    return seconds(opt, v, &((mcp_options *)ctx)->cfg.timeout_s);
}

static int set_max_timeout(void *ctx, const char *opt, const char *v)
{
    return seconds(opt, v, &((mcp_options *)ctx)->cfg.max_timeout_s);
}

/* --warm and --warm-memory: `fnbox serve`'s options, read by the same code (warm.c). */
static int set_warm(void *ctx, const char *opt, const char *v)
{
    const char *why = cli_warm_set(&((mcp_options *)ctx)->warm, v);
    return why ? bad(opt, v, why) : 0;
}

static int set_warm_memory(void *ctx, const char *opt, const char *v)
{
    const char *why = cli_warm_set_memory(&((mcp_options *)ctx)->warm, v);
    return why ? bad(opt, v, why) : 0;
}

static const cli_option k_options[] = {
    {"--config", set_config},   {"--output-bytes", set_output_bytes}, {"--timeout", set_timeout},
    {"--max-timeout", set_max_timeout}, {"--warm", set_warm},         {"--warm-memory", set_warm_memory},
    {"--environments", set_environments},
};

static int parse_args(int argc, char **argv, mcp_options *o)
{
    for (int i = 1; i < argc; i++)
        if (cli_parse_option("mcp", k_options, sizeof k_options / sizeof *k_options, o, argc, argv, &i) < 0)
            return -1;
    return 0;
}

/* Serves the client with the warm pools open (none for --warm none); the engine closes only once the server
 * is gone, every run of call_function returned. */
static int serve_stdio(mcp_options *o, int stop)
{
    fnbox_engine *engine = NULL;
    int code = cli_warm_open(&o->warm, "mcp", &engine);
    if (code != CLI_EXIT_OK)
        return code;
    int rc = fb_mcp_stdio_run(&o->cfg, engine, STDIN_FILENO, STDOUT_FILENO, stop);
    if (rc < 0)
        fprintf(stderr, "fnbox mcp: reading stdin: %s\n", strerror(errno));
    fnbox_engine_close(engine);
    return rc < 0 ? CLI_EXIT_FAILURE : CLI_EXIT_OK;
}

int cli_mcp(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            fputs(k_help, stdout);
            return CLI_EXIT_OK;
        }
    mcp_options o = {.warm = CLI_WARM_DEFAULT};
    fb_mcp_config_init(&o.cfg);
    if (parse_args(argc, argv, &o) < 0) {
        fb_mcp_config_free(&o.cfg);
        return CLI_EXIT_USAGE;
    }
    int loaded = load_environments(&o);
    if (loaded != CLI_EXIT_OK) {
        fb_mcp_config_free(&o.cfg);
        return loaded;
    }
    signal(SIGPIPE, SIG_IGN); /* a client gone while we write: EPIPE, then EOF on stdin */
    /* before the engine: its pool thread inherits the blocked stop signals, so that a SIGTERM reaches the
       signalfd and the clean shutdown (a thread that let it through would end the process at once, leaving
       the pooled sandboxes' cgroups) */
    int stop = cli_stop_signal_fd(SFD_NONBLOCK);
    if (stop < 0)
        fprintf(stderr, "fnbox mcp: signals: %s (stdin's EOF still ends it)\n", strerror(errno));
    int code = serve_stdio(&o, stop);
    if (stop >= 0)
        close(stop);
    fb_mcp_config_free(&o.cfg);
    return code;
}
