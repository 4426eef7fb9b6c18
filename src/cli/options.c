/* The option table every verb with many options reads its command line from (fnbox serve, fnbox mcp). */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

int cli_parse_option(const char *verb, const cli_option *table, size_t n, void *ctx, int argc, char **argv, int *i)
{
    const char *arg = argv[*i];
    size_t len = strcspn(arg, "=");
    for (size_t k = 0; k < n; k++) {
        if (strlen(table[k].name) != len || strncmp(arg, table[k].name, len) != 0)
            continue;
        if (arg[len] == '=')
            return table[k].set(ctx, table[k].name, arg + len + 1);
        if (*i + 1 >= argc) {
            fprintf(stderr, "fnbox %s: %s needs a value (fnbox %s --help)\n", verb, table[k].name, verb);
            return -1;
        }
        return table[k].set(ctx, table[k].name, argv[++*i]);
    }
    fprintf(stderr, "fnbox %s: unknown option '%s' (fnbox %s --help)\n", verb, arg, verb);
    return -1;
}
