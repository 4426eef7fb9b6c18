/* --warm and --warm-memory: the warm pools' options, read the same way by every verb that keeps pools
 * (`fnbox serve`, `fnbox mcp`), so that one syntax, one validation and one default hold for both. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

#define WARM_MAX_SIZE 64 /* fnbox_engine_open's own bound (core/pool.h), said early in the option's words */

const char *cli_warm_set(cli_warm *w, const char *v)
{
    if (strcmp(v, "none") == 0 || strcmp(v, "0") == 0) {
        w->warm[0] = '\0';
        return NULL;
    }
    size_t at = (size_t)snprintf(w->warm, sizeof w->warm, "{");
    for (const char *p = v; *p;) {
        size_t name = strspn(p, "abcdefghijklmnopqrstuvwxyz0123456789+");
        if (name > 0 && p[name] == '@') /* LANG@ENVIRONMENT: a pool built in a named environment */
            name += 1 + strspn(p + name + 1, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-");
        if (name == 0 || p[name] != '=' || p[name + 1] < '0' || p[name + 1] > '9')
            return "expected LANG=N[,LANG=N...] (e.g. python=4,javascript=2; python@py313=2: a pool in a named "
                   "environment) or none";
        char *end;
        unsigned long n = strtoul(p + name + 1, &end, 10);
        if ((*end && *end != ',') || n > WARM_MAX_SIZE)
            return "expected LANG=N[,LANG=N...] (LANG or LANG@ENVIRONMENT) with N from 0 to 64";
        at += (size_t)snprintf(w->warm + at, sizeof w->warm - at, "%s\"%.*s\":%lu", at > 1 ? "," : "", (int)name,
                               p, n);
        if (at >= sizeof w->warm - 2)
            return "too long";
        p = *end ? end + 1 : end;
    }
    snprintf(w->warm + at, sizeof w->warm - at, "}");
    return NULL;
}

const char *cli_warm_set_memory(cli_warm *w, const char *v)
{
    char *end = (char *)v;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    unsigned long long unit = 1;
    if (*end == 'K' || *end == 'k')
        unit = 1ULL << 10;
    else if (*end == 'M' || *end == 'm')
        unit = 1ULL << 20;
    else if (*end == 'G' || *end == 'g')
        unit = 1ULL << 30;
    if (unit > 1)
        end++;
    if (v[0] < '0' || v[0] > '9' || errno || n == 0 || *end != '\0' || n > (1ULL << 50) / unit)
        return "expected a size in bytes, or with K, M or G (e.g. 512M)";
    w->memory = n * unit;
    return NULL;
}

const char *cli_warm_options(cli_warm *w)
{
    if (!w->warm[0])
        return NULL;
    if (w->memory)
        snprintf(w->options, sizeof w->options, "{\"warm\":%s,\"maxMemoryBytes\":%llu}", w->warm, w->memory);
    else
        snprintf(w->options, sizeof w->options, "{\"warm\":%s}", w->warm);
    return w->options;
}

/* The message of fnbox_engine_open's error JSON ({"error": {"type", "message"}}), printed for verb. */
static void say_engine_error(const char *verb, const char *error)
{
    json_t *doc = error ? json_loads(error, 0, NULL) : NULL;
    const char *msg = json_string_value(json_object_get(json_object_get(doc, "error"), "message"));
    /* the engine names the field ("warm.cobol: unknown language"): the option is what the user wrote */
    fprintf(stderr, "fnbox %s: --warm: %s (fnbox %s --help)\n", verb, msg ? msg : "the warm pools could not start",
            verb);
    json_decref(doc);
}

int cli_warm_open(cli_warm *w, const char *verb, fnbox_engine **engine)
{
    *engine = NULL;
    const char *options = cli_warm_options(w);
    if (!options)
        return CLI_EXIT_OK;
    char *why = NULL;
    int rc = fnbox_engine_open(options, strlen(options), engine, &why, NULL);
    if (rc != FNBOX_OK)
        say_engine_error(verb, why);
    fnbox_free(why);
    if (rc == FNBOX_OK)
        return CLI_EXIT_OK;
    return rc == FNBOX_INVALID_REQUEST ? CLI_EXIT_USAGE : CLI_EXIT_FAILURE;
}
