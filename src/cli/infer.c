/* `fnbox infer [FILE|-] [--format F]`: a request-shaped JSON in, the function's signature out. Runs nothing. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "fnbox.h"


static const char k_help[] =
    "usage: fnbox infer [OPTIONS] [FILE|-]\n"
    "\n"
    "Reads a request-shaped JSON ({language, code, functionName?, schema?}; other request fields are\n"
    "ignored) from FILE (or stdin when FILE is '-' or absent) and prints the function's signature. The\n"
    "code is only read, never run. The function is functionName, else the only top-level one (a `_helper`\n"
    "does not count next to a public function, as for `fnbox call`). Types come from the request's schema\n"
    "when given, else from annotations and default values; the description is the first paragraph of the\n"
    "docstring / doc comment.\n"
    "\n"
    "options:\n"
    "  -f, --format F  output shape (default jsonschema):\n"
    "                    jsonschema  {name, description, parameters, signatureSource}\n"
    "                    openai      {type: \"function\", function: {name, description, parameters}}\n"
    "                    anthropic   {name, description, input_schema}\n"
    "                    mcp         {name, description, inputSchema}\n"
    "  -p, --pretty    indent the JSON (default: one line)\n"
    "  -h, --help      this help\n"
    "\n"
    "exit status:\n"
    "  0  the signature was printed\n"
    "  1  fnbox itself failed\n"
    "  2  invalid input or command line: an error JSON like `fnbox call`'s (error.type InvalidRequest,\n"
    "     AmbiguousFunction when several functions and no functionName, FunctionNotFound)\n";


static void print_json(const char *text, size_t len, bool pretty)
{
    json_t *doc = pretty ? json_loadb(text, len, JSON_DECODE_ANY, NULL) : NULL;
    char *indented = doc ? json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
    if (indented)
        fputs(indented, stdout);
    else
        fwrite(text, 1, len, stdout);
    putchar('\n');
    free(indented);
    json_decref(doc);
}

int cli_infer(int argc, char **argv)
{
    const char *path = "-", *format = "jsonschema";
    bool pretty = false, have_path = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(k_help, stdout);
            return CLI_EXIT_OK;
        } else if (strcmp(a, "-p") == 0 || strcmp(a, "--pretty") == 0) {
            pretty = true;
        } else if (strcmp(a, "-f") == 0 || strcmp(a, "--format") == 0) {
            if (i + 1 >= argc) {
                fprintf(stderr, "fnbox infer: %s needs a value\n%s", a, k_help);
                return CLI_EXIT_USAGE;
            }
            format = argv[++i];
        } else if (strncmp(a, "--format=", 9) == 0) {
            format = a + 9;
        } else if (a[0] == '-' && a[1] != '\0') {
            fprintf(stderr, "fnbox infer: unknown option '%s'\n%s", a, k_help);
            return CLI_EXIT_USAGE;
        } else if (have_path) {
            fprintf(stderr, "fnbox infer: only one input file may be given\n");
            return CLI_EXIT_USAGE;
        } else {
            path = a;
            have_path = true;
        }
    }
    char *input = NULL;
    size_t len = 0;
    if (cli_read_input(path, &input, &len) < 0) {
        int e = errno;
        cli_print_json_line(json_pack("{s:s, s:b, s:{s:o, s:s}, s:s, s:s, s:i}", "status", "error", "success", 0,
                                      "error", "message", cli_read_failure("request: ", path, e), "type",
                                      "InvalidRequest", "stdout", "", "stderr", "", "exitCode", 1));
        fprintf(stderr, "fnbox infer: cannot read %s: %s\n", path, strerror(e));
        return CLI_EXIT_USAGE;
    }
    char *result = NULL;
    size_t rlen = 0;
    int rc = fnbox_infer(input, len, format, &result, &rlen);
    free(input);
    if (rc == FNBOX_NO_RESULT || !result) {
        fprintf(stderr, "fnbox infer: out of memory\n");
        return CLI_EXIT_FAILURE;
    }
    print_json(result, rlen, pretty);
    fnbox_free(result);
    if (fflush(stdout) != 0)
        return CLI_EXIT_FAILURE;
    return rc == FNBOX_OK ? CLI_EXIT_OK : CLI_EXIT_USAGE;
}
