/* Reading a verb's JSON input from a file or stdin ("-"). */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
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
