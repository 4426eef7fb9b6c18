/* `fnbox doctor`: what this machine has and what is missing, with the fix. */
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "fnbox.h"

static const char k_help[] = "usage: fnbox doctor [--json]\n\n"
                             "Checks the kernel features and language runtimes fnbox needs.\n"
                             "  --json   print the report as JSON\n"
                             "exit status: 0 when every required feature is present, 1 otherwise\n";

static void print_text(const char *report)
{
    json_t *doc = json_loads(report, 0, NULL);
    json_t *checks = json_object_get(doc, "checks");
    size_t i;
    json_t *c;
    json_array_foreach(checks, i, c) {
        bool ok = json_is_true(json_object_get(c, "ok"));
        bool req = json_is_true(json_object_get(c, "required"));
        printf("%-8s %-16s %s\n", ok ? "ok" : req ? "MISSING" : "absent", json_string_value(json_object_get(c, "name")),
               json_string_value(json_object_get(c, "detail")));
        if (!ok && json_object_get(c, "fix"))
            printf("         %-16s fix: %s\n", "", json_string_value(json_object_get(c, "fix")));
    }
    printf("%s\n", json_is_true(json_object_get(doc, "ok")) ? "fnbox can run calls on this machine."
                                                            : "fnbox cannot run calls here: fix what is MISSING.");
    json_decref(doc);
}

int cli_doctor(int argc, char **argv)
{
    bool as_json = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0)
            as_json = true;
        else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            fputs(k_help, stdout);
            return CLI_EXIT_OK;
        } else {
            fprintf(stderr, "fnbox doctor: unknown argument '%s'\n%s", argv[i], k_help);
            return CLI_EXIT_USAGE;
        }
    }
    char *report = NULL;
    int rc = fnbox_doctor(&report);
    if (rc < 0 || !report) {
        fprintf(stderr, "fnbox doctor: out of memory\n");
        return CLI_EXIT_FAILURE;
    }
    if (as_json)
        printf("%s\n", report);
    else
        print_text(report);
    fnbox_free(report);
    return rc == 0 ? CLI_EXIT_OK : CLI_EXIT_FAILURE;
}
