/* --environments FILE, read the same way by every verb that runs something (call, exec, serve, mcp,
 * doctor): the option, else FNBOX_ENVIRONMENTS, loaded once before anything runs (fnbox_environments_load).
 * A bad file stops the verb with exit 2 and the library's message, which names the field. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

/* The message of a library error JSON ({"error": {"type", "message"}}) into why. */
static void error_message(const char *error, char *why, size_t cap)
{
    json_t *doc = error ? json_loads(error, 0, NULL) : NULL;
    const char *msg = json_string_value(json_object_get(json_object_get(doc, "error"), "message"));
    snprintf(why, cap, "%s", msg ? msg : "out of memory");
    json_decref(doc);
}

int cli_environments_load(const char *verb, const char *path, char *why, size_t cap)
{
    const char *from = "--environments";
    if (!path) {
        path = getenv("FNBOX_ENVIRONMENTS");
        from = "FNBOX_ENVIRONMENTS";
    }
    if (!path || !*path)
        return CLI_EXIT_OK;
    char *error = NULL;
    int rc = fnbox_environments_load(path, &error, NULL);
    if (rc != FNBOX_OK) {
        char msg[1024];
        error_message(error, msg, sizeof msg);
        snprintf(why, cap, "%s %s: %s", from, path, msg);
        fprintf(stderr, "fnbox %s: %s\n", verb, why);
    }
    fnbox_free(error);
    return rc == FNBOX_OK ? CLI_EXIT_OK : rc == FNBOX_INVALID_REQUEST ? CLI_EXIT_USAGE : CLI_EXIT_FAILURE;
}
