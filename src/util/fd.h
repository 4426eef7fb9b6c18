/* File descriptor helpers. Every fd fnbox opens is O_CLOEXEC. */
#ifndef FB_FD_H
#define FB_FD_H
#include <stddef.h>
#include <sys/types.h>

#include "util/buf.h"
#include "util/error.h"

/* Writes all of data, retrying on EINTR and short writes. Returns 0 or -1 with errno set. */
int fb_write_all(int fd, const void *data, size_t len);
/* write(2) to a pipe whose reader may be gone: EPIPE instead of a SIGPIPE that would kill the whole
 * process. The signal is blocked for the calling thread only and, if the write raised it, consumed;
 * the process's disposition is left alone (library code must not change it). */
ssize_t fb_write_nosigpipe(int fd, const void *data, size_t len);
/* The same for writev(2). */
struct iovec;
ssize_t fb_writev_nosigpipe(int fd, const struct iovec *iov, int n);
/* Reads fd to EOF into buf (which enforces its own maximum). Returns 0 or -1 with errno set. */
int fb_read_all(int fd, fb_buf *buf);
/* Reads a whole file (or stdin for "-") with a maximum size; too big is an error naming path. */
int fb_read_file(const char *path, size_t max, char **out, size_t *out_len, fb_error *err);
/* A sealed-size-free anonymous memory file holding data, positioned at 0. Returns fd or -1. */
int fb_memfd_with(const char *name, const void *data, size_t len, fb_error *err);
/* Writes a whole file at path (created 0644, truncated). */
int fb_write_file(const char *path, const void *data, size_t len, mode_t mode);
/* Reads at most cap - 1 bytes of a small file (/proc's) into buf, NUL-terminated: the length, or -1 (errno). */
ssize_t fb_read_small(const char *path, char *buf, size_t cap);
void fb_close(int *fd);  /* closes if >= 0 and sets -1 */

#endif
