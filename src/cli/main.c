/* fnbox command line: `fnbox VERB [ARGS]`. */
#include <malloc.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "fnbox.h"

typedef struct verb {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} verb;

int cli_sync(int argc, char **argv); /* cli/sync.c */

static const verb k_verbs[] = {
    {"call", cli_call, "run one function call: read a request JSON, print one result JSON"},
    {"exec", cli_exec, "run one command or program's code: read an execute request JSON, print one result"},
    {"infer", cli_infer, "print a function's signature as JSON Schema or a tool definition (runs nothing)"},
    {"sync", cli_sync, "apply file changes a call reported to the mounted host directories"},
    {"mcp", cli_mcp, "serve the Model Context Protocol on stdin/stdout (code and file tools for AI agents)"},
    {"serve", cli_serve,
     "serve the HTTP API in the foreground: function calls, execute, sessions (commands, code,\n"
     "           calls, files, kernels, sync), sync, Piston's API, MCP at /mcp, health, metrics"},
    {"doctor", cli_doctor, "check the kernel features and language runtimes fnbox needs"},
};

static void usage(FILE *to)
{
    fprintf(to, "usage: fnbox VERB [OPTIONS] [ARGS]\n\nRuns untrusted code (a function, a program, a shell command) in a "
                "fresh Linux sandbox.\n\nverbs:\n");
    for (size_t i = 0; i < sizeof k_verbs / sizeof *k_verbs; i++)
        fprintf(to, "  %-8s %s\n", k_verbs[i].name, k_verbs[i].summary);
    fprintf(to, "\noptions:\n  -h, --help     this help (`fnbox VERB --help` for a verb's)\n"
                "  -V, --version  print the version\n");
}

int main(int argc, char **argv)
{
    /* A fixed mmap threshold: glibc otherwise raises it to the size of each large block freed (up to 32
     * MiB), so the next large request, input or result lands on the heap, where growing it copies it (two
     * copies resident) and freeing it may not return the memory. With the threshold fixed, large buffers
     * are mappings: realloc remaps them and free unmaps them (a 10 MB call's peak: 37 -> 27 MiB). */
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
    if (argc < 2) {
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "-h") == 0 || strcmp(name, "--help") == 0 || strcmp(name, "help") == 0) {
        usage(stdout);
        return CLI_EXIT_OK;
    }
    if (strcmp(name, "-V") == 0 || strcmp(name, "--version") == 0) {
        printf("fnbox %s\n", fnbox_version());
        return CLI_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof k_verbs / sizeof *k_verbs; i++)
        if (strcmp(name, k_verbs[i].name) == 0)
            return k_verbs[i].run(argc - 1, argv + 1);
    fprintf(stderr, "fnbox: unknown verb '%s'\n\n", name);
    usage(stderr);
    return CLI_EXIT_USAGE;
}
