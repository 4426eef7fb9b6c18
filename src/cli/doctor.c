/* `fnbox doctor`: what this machine has and what is missing, with the fix. */
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "fnbox.h"

static const char k_help[] = "usage: fnbox doctor [--json] [--environments FILE]\n\n"
                             "Checks the kernel features and language runtimes fnbox needs.\n"
                             "  --json   print the report as JSON\n"
                             "  --environments FILE\n"
                             "           also list these named environments (default: $FNBOX_ENVIRONMENTS):\n"
                             "           each one's languages with the versions found in it\n"
                             "exit status: 0 when every required feature is present, 1 otherwise\n";

/* "env      py313            root /srv/rootfs/trixie: python 3.13.5, javascript 20.19.2" */
static void print_environments(json_t *envs)
{
    size_t i, j;
    json_t *e, *l;
    json_array_foreach(envs, i, e) {
        const char *root = json_string_value(json_object_get(e, "root"));
        printf("%-8s %-16s %s%s:", "env", json_string_value(json_object_get(e, "name")), root ? "root " : "the host's",
               root ? root : "");
        json_t *langs = json_object_get(e, "languages");
        json_array_foreach(langs, j, l)
            printf("%s %s %s", j ? "," : "", json_string_value(json_object_get(l, "name")),
                   json_string_value(json_object_get(l, "version")));
        printf("%s\n", json_array_size(langs) ? "" : " no language found");
    }
}

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
    print_environments(json_object_get(doc, "environments"));
    printf("%s\n", json_is_true(json_object_get(doc, "ok")) ? "fnbox can run calls on this machine."
                                                            : "fnbox cannot run calls here: fix what is MISSING.");
    json_decref(doc);
}

int cli_doctor(int argc, char **argv)
{
    bool as_json = false;
    const char *environments = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0)
            as_json = true;
        else if (strncmp(argv[i], "--environments=", 15) == 0)
            environments = argv[i] + 15;
        else if (strcmp(argv[i], "--environments") == 0 && i + 1 < argc)
            environments = argv[++i];
        else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            fputs(k_help, stdout);
            return CLI_EXIT_OK;
        } else {
            fprintf(stderr, "fnbox doctor: unknown argument '%s'\n%s", argv[i], k_help);
            return CLI_EXIT_USAGE;
        }
    }
    char why[1536];
    int code = cli_environments_load("doctor", environments, why, sizeof why);
    if (code != CLI_EXIT_OK)
        return code;
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
