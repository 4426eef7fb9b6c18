/* `fnbox serve`: the HTTP server (src/server/http/) in the foreground. This file reads the options and
 * owns the signals: SIGTERM, SIGINT and SIGHUP arrive on a signalfd the server drains on. */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "cli/cli.h"
#include "server/http/server.h"

#define DEFAULT_LISTEN "127.0.0.1:8080"
#define DEFAULT_MAX_QUEUE 64
#define DEFAULT_MAX_BODY (CLI_MAX_INPUT - 1) /* the request size `fnbox call` accepts: 256 MiB */
#define DEFAULT_GRACE_S 10.0

static const char k_help[] =
    "usage: fnbox serve [OPTIONS]\n"
    "\n"
    "Serves fnbox's HTTP API in the foreground:\n"
    "  POST /v1/call                 a function call: a FunctionCallRequest in, what `fnbox call` prints out\n"
    "  POST /v1/execute              a shell command or a program's code: what `fnbox exec` prints\n"
    "  POST /v1/sessions, /v1/sessions/{id}/...\n"
    "                                a session, one sandbox kept alive: commands, code, function calls,\n"
    "                                files (read, write, list, remove), kernels (Python, JavaScript, Ruby,\n"
    "                                PHP: state kept across executes), sync of its mounts to the host\n"
    "  POST /v1/sync                 a call's reported file changes written to the host (`fnbox sync`)\n"
    "  GET /api/v2/runtimes, POST /api/v2/execute\n"
    "                                Piston's v2 API, for Piston's clients\n"
    "  POST /mcp                     the Model Context Protocol over streamable HTTP (`fnbox mcp`'s tools)\n"
    "  GET /v1/health, GET /metrics  health and languages; Prometheus metrics\n"
    "Runs stream as NDJSON with Accept: application/x-ndjson. docs/openapi.yaml describes every route\n"
    "(served at GET /v1/openapi.json). One JSON log line per request on stderr. SIGTERM or SIGINT: stop\n"
    "accepting, let running calls finish for the grace period, cancel the rest, exit 0.\n"
    "\n"
    "options:\n"
    "  --listen HOST:PORT|unix:PATH  where to listen (default " DEFAULT_LISTEN "; [::1]:8080 for IPv6;\n"
    "                                port 0 picks a free one, logged at start). Anything but a loopback\n"
    "                                address or a unix socket (made mode 0600) needs --token-file\n"
    "  --token-file FILE             bearer tokens, one per line (16-256 visible characters each); every\n"
    "                                route but /v1/health then needs Authorization: Bearer <token>\n"
    "  --max-concurrency N           runs at once: calls, executes, session commands, code, calls and\n"
    "                                kernel executes (default: the number of CPUs; 1-1024)\n"
    "  --max-queue N                 requests admitted beyond those, waiting (default 64; 0-4096); when\n"
    "                                both are full a request gets 503 with Retry-After\n"
    "  --max-sessions N              sessions open at once (default 64; 0-4096, 0: no sessions); more is\n"
    "                                503\n"
    "  --max-body BYTES              largest request body (default 268435456, 256 MiB; 1-268435456); more\n"
    "                                is 413\n"
    "  --grace SECONDS               on SIGTERM, how long running calls may go on before they are\n"
    "                                cancelled (default 10; 0-3600; fractions allowed)\n"
    "  --mcp-config FILE             /mcp's tools and sessions, as `fnbox mcp --config` takes them\n"
    "  --mcp-origin ORIGIN           a browser Origin /mcp accepts besides loopback ones (repeatable, 16)\n"
    "  --warm LANG=N[,LANG=N...]|none\n"
    "                                sandboxes kept ready per language for POST /v1/call and /mcp's\n"
    "                                call_function, each built ahead with its runtime started, serving\n"
    "                                one call only (0-64 each; default: 1 for each of python, javascript,\n"
    "                                ruby, php whose runtime is here); for c and cpp, the compiler started\n"
    "                                and waiting for a new program's source; LANG@ENVIRONMENT=N: a pool\n"
    "                                built in a named environment, for its calls\n"
    "  --warm-memory BYTES           no new ready sandbox once the ready ones hold this much memory\n"
    "                                (K, M, G suffixes; default 1G)\n"
    "  --environments FILE           the named environments a request, a session or /mcp's configuration\n"
    "                                may choose with \"environment\": NAME (JSON {\"environments\": {NAME:\n"
    "                                {root?, python?: {paths}, javascript?, ruby?, php?, indexes?}}});\n"
    "                                default: $FNBOX_ENVIRONMENTS, else none. A bad file stops here\n"
    "  --die-with-parent             stop (as on SIGTERM) when the process that started this one exits\n"
    "                                (the thread that started it, as Linux's parent-death signal goes): for\n"
    "                                a client's private server (clients/node, clients/python)\n"
    "  -h, --help                    this help\n"
    "\n"
    "exit status: 0 after a signal, once everything has stopped; 2 for a bad option or configuration\n"
    "(listen address, token file, environments file); 1 when the server could not start.\n";

static int bad(const char *opt, const char *value, const char *why)
{
    fprintf(stderr, "fnbox serve: %s '%s': %s (fnbox serve --help)\n", opt, value, why);
    return -1;
}

static int parse_uint(const char *opt, const char *v, unsigned long min, unsigned long max, unsigned long *out)
{
    char *end = NULL;
    errno = 0;
    unsigned long n = strtoul(v, &end, 10);
    if (v[0] < '0' || v[0] > '9' || errno || *end || n < min || n > max) {
        char why[96];
        snprintf(why, sizeof why, "expected a whole number from %lu to %lu", min, max);
        return bad(opt, v, why);
    }
    *out = n;
    return 0;
}

static int set_listen(void *ctx, const char *opt, const char *v)
{
    fb_http_config *o = ctx;
    (void)opt;
    o->listen = v;
    return 0;
}

static int set_token_file(void *ctx, const char *opt, const char *v)
{
    fb_http_config *o = ctx;
    if (!*v)
        return bad(opt, v, "empty");
    o->token_file = v;
    return 0;
}

static int set_concurrency(void *ctx, const char *opt, const char *v)
{
    fb_http_config *o = ctx;
    unsigned long n;
    if (parse_uint(opt, v, 1, FB_HTTP_MAX_CONCURRENCY, &n) < 0)
        return -1;
    o->max_concurrency = (unsigned)n;
    return 0;
}

static int set_queue(void *ctx, const char *opt, const char *v)
{
    fb_http_config *o = ctx;
    unsigned long n;
    if (parse_uint(opt, v, 0, FB_HTTP_MAX_QUEUE, &n) < 0)
        return -1;
    o->max_queue = (unsigned)n;
    return 0;
}

static int set_sessions(void *ctx, const char *opt, const char *v)
{
    fb_http_config *o = ctx;
    unsigned long n;
    if (parse_uint(opt, v, 0, FB_HTTP_MAX_SESSIONS, &n) < 0)
        return -1;
    o->max_sessions = (unsigned)n;
    return 0;
}

static int set_body(void *ctx, const char *opt, const char *v)
{
    fb_http_config *o = ctx;
    unsigned long n;
    if (parse_uint(opt, v, 1, DEFAULT_MAX_BODY, &n) < 0)
        return -1;
    o->max_body = n;
    return 0;
}

static int set_grace(void *ctx, const char *opt, const char *v)
{
    fb_http_config *o = ctx;
    char *end = NULL;
    errno = 0;
    double s = strtod(v, &end);
    if (v[0] < '0' || v[0] > '9' || errno || *end || !isfinite(s) || s > FB_HTTP_MAX_GRACE_S)
        return bad(opt, v, "expected seconds from 0 to 3600");
    o->grace_s = s;
    return 0;
}

#define MAX_ORIGINS 16
static const char *s_origins[MAX_ORIGINS]; /* --mcp-origin's, in argv */
static fb_mcp_config s_mcp;                  /* --mcp-config's */

static int set_origin(void *ctx, const char *opt, const char *v)
{
    fb_http_config *o = ctx;
    if (strncmp(v, "http://", 7) != 0 && strncmp(v, "https://", 8) != 0)
        return bad(opt, v, "expected an origin as browsers send it: http(s)://host[:port]");
    if (o->n_mcp_origins == MAX_ORIGINS)
        return bad(opt, v, "at most 16 origins");
    s_origins[o->n_mcp_origins++] = v;
    o->mcp_origins = s_origins;
    return 0;
}

static int set_mcp_config(void *ctx, const char *opt, const char *v)
{
    fb_http_config *o = ctx;
    char *text = NULL, why[512];
    size_t len = 0;
    if (o->mcp)
        return bad(opt, v, "given twice");
    if (cli_read_input(v, &text, &len) < 0)
        return bad(opt, v, strerror(errno));
    fb_mcp_config_init(&s_mcp);
    int rc = fb_mcp_config_parse(text, len, &s_mcp, why, sizeof why);
    free(text);
    if (rc < 0) {
        fb_mcp_config_free(&s_mcp);
        return bad(opt, v, why);
    }
    o->mcp = &s_mcp;
    return 0;
}

/* --warm and --warm-memory, as fnbox_engine_open's options (fb_http_config.engine); read as `fnbox mcp`
 * reads them (warm.c). */
static cli_warm s_warm = CLI_WARM_DEFAULT;

static int set_warm(void *ctx, const char *opt, const char *v)
{
    (void)ctx;
    const char *why = cli_warm_set(&s_warm, v);
    return why ? bad(opt, v, why) : 0;
}

static int set_warm_memory(void *ctx, const char *opt, const char *v)
{
    (void)ctx;
    const char *why = cli_warm_set_memory(&s_warm, v);
    return why ? bad(opt, v, why) : 0;
}

static const char *s_environments; /* --environments */

static int set_environments(void *ctx, const char *opt, const char *v)
{
    (void)ctx;
    if (!*v)
        return bad(opt, v, "empty");
    s_environments = v;
    return 0;
}

/* The environments, loaded once every option is read (the warm pools and /mcp's configuration may name one). */
static int load_environments(fb_http_config *o)
{
    char why[1536];
    int code = cli_environments_load("serve", s_environments, why, sizeof why);
    if (code == CLI_EXIT_OK && o->mcp && fb_mcp_config_check_environment(o->mcp, why, sizeof why) < 0) {
        fprintf(stderr, "fnbox serve: --mcp-config: %s\n", why);
        code = CLI_EXIT_USAGE;
    }
    return code;
}

static const cli_option k_options[] = {
    {"--environments", set_environments},
    {"--listen", set_listen},           {"--token-file", set_token_file}, {"--max-concurrency", set_concurrency},
    {"--max-queue", set_queue},         {"--max-body", set_body},         {"--grace", set_grace},
    {"--max-sessions", set_sessions},   {"--mcp-origin", set_origin},     {"--mcp-config", set_mcp_config},
    {"--warm", set_warm},               {"--warm-memory", set_warm_memory},
};

static unsigned cpu_count(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return (unsigned)CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1;
}

/* The stop signals are blocked in every thread (the server's start after this) and read from a
 * signalfd. A sandboxed program gets its own clean mask and dispositions (sandbox/spawn.c). SIGPIPE is
 * ignored: a client gone, or a closed stderr, is an error to handle, not a reason to die. */
static int stop_fd_open(void)
{
    int fd = cli_stop_signal_fd(0);
    signal(SIGPIPE, SIG_IGN);
    return fd;
}

/* Each connection and each running call hold descriptors (a call several), and the connection limit can
 * be in the thousands: the soft limit goes up to the hard one. A sandboxed program gets its own limit
 * (limits.openFiles). */
static void raise_fd_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

/* A client's private server must not outlive the client, even one killed with SIGKILL: the kernel
 * sends SIGTERM when the parent goes, and the signalfd turns it into the usual drain. The parent may
 * already be gone when prctl runs: then getppid() is no longer the pid that started us. */
static int die_with_parent(void)
{
    pid_t parent = getppid();
    if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0) {
        fprintf(stderr, "fnbox serve: --die-with-parent: prctl: %s\n", strerror(errno));
        return -1;
    }
    if (getppid() != parent || parent == 1) {
        fprintf(stderr, "fnbox serve: --die-with-parent: the parent process has already exited\n");
        return -1;
    }
    return 0;
}

int cli_serve(int argc, char **argv)
{
    bool with_parent = false;
    fb_http_config o = {.listen = DEFAULT_LISTEN, .max_concurrency = cpu_count(), .max_queue = DEFAULT_MAX_QUEUE,
                      .max_sessions = FB_HTTP_DEFAULT_SESSIONS,
                        .max_body = DEFAULT_MAX_BODY, .grace_s = DEFAULT_GRACE_S};
    if (o.max_concurrency > FB_HTTP_MAX_CONCURRENCY)
        o.max_concurrency = FB_HTTP_MAX_CONCURRENCY;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            fputs(k_help, stdout);
            return CLI_EXIT_OK;
        }
        if (strcmp(argv[i], "--die-with-parent") == 0) {
            with_parent = true;
            continue;
        }
        if (cli_parse_option("serve", k_options, sizeof k_options / sizeof *k_options, &o, argc, argv, &i) < 0) {
            if (o.mcp)
                fb_mcp_config_free(o.mcp);
            return CLI_EXIT_USAGE;
        }
    }
    int code = load_environments(&o);
    if (code != CLI_EXIT_OK) {
        if (o.mcp)
            fb_mcp_config_free(o.mcp);
        return code;
    }
    o.engine = cli_warm_options(&s_warm);
    raise_fd_limit();
    int stop_fd = stop_fd_open(); /* before the parent watch: its SIGTERM must land on the signalfd */
    if (stop_fd >= 0 && with_parent && die_with_parent() < 0) {
        close(stop_fd);
        if (o.mcp)
            fb_mcp_config_free(o.mcp);
        return CLI_EXIT_FAILURE;
    }
    if (stop_fd < 0) {
        fprintf(stderr, "fnbox serve: signalfd: %s\n", strerror(errno));
        if (o.mcp)
            fb_mcp_config_free(o.mcp);
        return CLI_EXIT_FAILURE;
    }
    fb_error err = {0};
    int rc = fb_http_serve(&o, stop_fd, &err);
    close(stop_fd);
    if (o.mcp)
        fb_mcp_config_free(o.mcp); /* what the server did not take */
    if (rc < 0) {
        fprintf(stderr, "fnbox serve: %s\n", err.message);
        return fb_errkind_family(err.kind) == FB_ERRFAM_REQUEST ? CLI_EXIT_USAGE : CLI_EXIT_FAILURE;
    }
    return CLI_EXIT_OK;
}
