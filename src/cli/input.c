/* Reading a verb's JSON input from a file or stdin ("-"). */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

/* A large request on a pipe crosses it in 1 MiB steps instead of 64 KiB ones: each step is a wake-up of
 * this process and of the writer (a 64 MB request: 1,000 round trips otherwise). Asked for once the input
 * has shown itself large; on a file, or when refused (fs.pipe-max-size, the user's pipe quota), nothing
 * changes. */
#define PIPE_BYTES (1 << 20)
#define PIPE_GROW_AFTER (256u << 10)

int cli_read_input(const char *path, char **out, size_t *len)
{
    int fd = strcmp(path, "-") == 0 ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t cap = 65536, n = 0;
    bool grown = false;
    char *buf = malloc(cap);
    while (buf) {
        if (n == cap) {
            if (cap >= CLI_MAX_INPUT)
                break; /* the library reports the size limit */
            char *p = realloc(buf, cap * 2);
            if (!p) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = p;
            cap *= 2;
        }
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            if (r < 0) {
                free(buf);
                buf = NULL;
            }
            break;
        }
        n += (size_t)r;
        if (!grown && n >= PIPE_GROW_AFTER) {
            grown = true;
            (void)fcntl(fd, F_SETPIPE_SZ, PIPE_BYTES);
        }
    }
    int saved = errno;
    if (fd != STDIN_FILENO)
        close(fd);
    errno = saved;
    *out = buf;
    *len = n;
    return buf ? 0 : -1;
}

json_t *cli_read_failure(const char *prefix, const char *path, int err)
{
    const char *name = strcmp(path, "-") == 0 ? "stdin" : path;
    json_t *shown = json_string(name);
    char quoted[4 * 4096 + 1] = "";
    if (!shown) { /* not UTF-8 (jansson checks): its bytes beyond ASCII as \xNN, so the name still shows */
        size_t n = 0;
        for (const unsigned char *p = (const unsigned char *)name; *p && n + 5 < sizeof quoted; p++)
            n += (size_t)snprintf(quoted + n, sizeof quoted - n, *p < 0x80 ? "%c" : "\\x%02x", *p);
        name = quoted;
    }
    json_decref(shown);
    const char *ename = strerrorname_np(err); /* ENOENT: what a script or a search engine matches */
    return json_sprintf("%scannot read '%s': %s (%s)", prefix, name, strerror(err), ename ? ename : "?");
}

void cli_print_json_line(json_t *doc)
{
    if (doc && json_dumpf(doc, stdout, JSON_COMPACT) == 0)
        putchar('\n');
    json_decref(doc);
}
