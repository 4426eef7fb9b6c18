/* `fnbox sync [FILE|-]`: apply file changes (as a call's result reported them) to host directories. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "fnbox.h"

int cli_sync(int argc, char **argv); /* the verb table's entry (main.c) */

static const char k_help[] =
    "usage: fnbox sync [OPTIONS] [FILE|-]\n"
    "\n"
    "Reads {\"changes\": [...], \"mount\": {...}, \"onError\": \"rollback|continue|abort\"} from FILE (or stdin\n"
    "when FILE is '-' or absent) and writes the changes to the mount's host directories: the same\n"
    "beneath-only, atomic writes as a call's batch sync. A mount without \"permissions\" applies every\n"
    "change given; with \"permissions\" each change is checked against them. `changes` is an array of\n"
    "change objects as a result reports them ({path, type, content, kind: created|modified|deleted}), or\n"
    "a result's whole `files` object {created, modified, deleted}. Prints one report JSON on stdout:\n"
    "{success, synced, failed, skipped, notAttempted, rolledBack, undone, onError, details,\n"
    "deniedByPermissions, message}; message says in one sentence what reached the host, or why nothing did.\n"
    "\n"
    "options:\n"
    "  -p, --pretty   indent the report JSON (default: one line)\n"
    "  -h, --help     this help\n"
    "\n"
    "exit status:\n"
    "  0  every change was synced or skipped by policy (see \"skipped\")\n"
    "  1  at least one change failed (see \"failed\"; under rollback nothing was kept), or fnbox itself\n"
    "     failed (then nothing is printed on stdout)\n"
    "  2  invalid input or command line (the report's error names the field); nothing was written\n"
    "  3  host files cannot be written safely here (error.type KernelFeatureMissing: openat2 is missing)\n";

static void print_pretty(const char *json)
{
    /* Break after the top-level members only: the library's text stays as it is. */
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
}

int cli_sync(int argc, char **argv)
{
    const char *path = "-";
    bool pretty = false, have_path = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            fputs(k_help, stdout);
            return CLI_EXIT_OK;
        } else if (strcmp(argv[i], "-p") == 0 || strcmp(argv[i], "--pretty") == 0) {
            pretty = true;
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            fprintf(stderr, "fnbox sync: unknown option '%s'\n%s", argv[i], k_help);
            return CLI_EXIT_USAGE;
        } else if (have_path) {
            fprintf(stderr, "fnbox sync: only one input file may be given\n");
            return CLI_EXIT_USAGE;
        } else {
            path = argv[i];
            have_path = true;
        }
    }
    char *in = NULL;
    size_t len = 0;
    if (cli_read_input(path, &in, &len) < 0) {
        int e = errno;
        cli_print_json_line(json_pack("{s:b, s:[], s:[], s:[], s:{s:o, s:s}}", "success", 0, "synced", "failed",
                                      "skipped", "error", "message", cli_read_failure("input: ", path, e), "type",
                                      "InvalidRequest"));
        fprintf(stderr, "fnbox sync: cannot read %s: %s\n", path, strerror(e));
        return CLI_EXIT_USAGE;
    }
    char *report = NULL;
    size_t rlen = 0;
    int rc = fnbox_sync(in, len, &report, &rlen);
    free(in);
    if (rc == FNBOX_NO_RESULT || !report) {
        fprintf(stderr, "fnbox sync: out of memory: no report could be produced\n");
        return CLI_EXIT_FAILURE;
    }
    if (pretty) {
        print_pretty(report);
    } else {
        fwrite(report, 1, rlen, stdout);
        putchar('\n');
    }
    fnbox_free(report);
    if (fflush(stdout) != 0)
        return CLI_EXIT_FAILURE;
    switch (rc) {
    case FNBOX_OK: return CLI_EXIT_OK;
    case FNBOX_INVALID_REQUEST: return CLI_EXIT_USAGE;
    case FNBOX_SANDBOX_FAILED: return CLI_EXIT_SANDBOX;
    default: return CLI_EXIT_FAILURE;
    }
}
