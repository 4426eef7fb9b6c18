/* `fnbox exec [FILE|-]`: one execute request in ({command}, {code, language} or {main, language}), one
 * result out; the options, the stop signals and the exit statuses are `fnbox call`'s (cli_run_request in
 * call.c). */
#include "cli/cli.h"
#include "fnbox.h"

static const char k_help[] =
    "usage: fnbox exec [OPTIONS] [FILE|-]\n"
    "\n"
    "Reads one execute request JSON from FILE (or stdin when FILE is '-' or absent): a shell command\n"
    "{\"command\": \"ls -l\"} or a program {\"code\": \"print(1)\", \"language\": \"python3\"} (or\n"
    "{\"main\": \"app.py\", \"language\": \"python3\"}: one of files, run from the workdir), with optional\n"
    "args, stdin, env, cwd, timeout, files, mount, limits, permissions and environment; runs it in a fresh\n"
    "sandbox and prints exactly one result JSON on stdout (status, exitCode, stdout, stderr, usage,\n"
    "truncated, files, sync).\n"
    "\n"
    "options:\n"
    "  -p, --pretty   indent the result JSON (default: one line)\n"
    "  -s, --stream   NDJSON: the program's output as it arrives, one line per chunk\n"
    "                 ({\"type\":\"stdout\"|\"stderr\",\"data\":\"...\"}), then one line\n"
    "                 {\"type\":\"result\", ...the result's fields...}\n"
    "  --environments FILE\n"
    "                 the named environments a request may choose with \"environment\": NAME (JSON\n"
    "                 {\"environments\": {NAME: {root?, python?: {paths}, javascript?, ruby?, php?,\n"
    "                 indexes?}}}); default: $FNBOX_ENVIRONMENTS, else none\n"
    "  -h, --help     this help\n"
    "\n"
    "exit status:\n"
    "  0  a result was produced, whatever the program did (see its \"status\" and \"exitCode\")\n"
    "  1  fnbox itself failed (no result could be produced)\n"
    "  2  invalid request or command line (the result names the field)\n"
    "  3  the sandbox could not be set up (error.type SandboxSetupFailed or KernelFeatureMissing)\n";

int cli_exec(int argc, char **argv)
{
    static const cli_request_verb verb = {.name = "exec", .help = k_help, .run = fnbox_execute};
    return cli_run_request(&verb, argc, argv);
}
