#include "util/fd.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

int fb_write_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Room to read into at the end of buf, up to its maximum: all of what is left of a file at once (its
 * size is known: a memfd result, a request file), else doubling from 64 KiB. 0 once at the maximum. */
static size_t read_room(int fd, fb_buf *buf, bool first)
{
    if (buf->len >= buf->max)
        return 0;
    size_t left = buf->max - buf->len, want = buf->len > 65536 ? buf->len : 65536;
    struct stat st;
    off_t pos;
    if (first && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (pos = lseek(fd, 0, SEEK_CUR)) >= 0 &&
        st.st_size > pos)
        want = (size_t)(st.st_size - pos) + 1; /* + 1: the read that sees EOF needs no growth */
    size_t room = buf->cap > buf->len + 1 ? buf->cap - buf->len - 1 : 0;
    if (room == 0 && fb_buf_reserve(buf, buf->len + (want < left ? want : left)) < 0)
        return (size_t)-1;
    room = buf->cap - buf->len - 1;
    return room < left ? room : left;
}

/* Straight into the buffer: a 64 MB result is not copied twice (through a chunk on the stack). */
int fb_read_all(int fd, fb_buf *buf)
{
    char drop[4096];
    for (bool first = true;; first = false) {
        size_t room = read_room(fd, buf, first);
        if (room == (size_t)-1) {
            errno = ENOMEM;
            return -1;
        }
        ssize_t n = room ? read(fd, buf->data + buf->len, room) : read(fd, drop, sizeof drop);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (n == 0)
            return 0;
        if (!room) { /* past the maximum: read to EOF, keep nothing */
            buf->truncated = true;
            continue;
        }
        buf->len += (size_t)n;
        buf->data[buf->len] = '\0';
    }
}

int fb_read_file(const char *path, size_t max, char **out, size_t *out_len, fb_error *err)
{
    bool is_stdin = strcmp(path, "-") == 0;
    int fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return fb_set_error(err, FB_ERR_INVALID_REQUEST, errno, "cannot open request file '%s'", path);
    fb_buf b;
    fb_buf_init(&b, max);
    int rc = fb_read_all(fd, &b);
    int saved = errno;
    if (!is_stdin)
        close(fd);
    if (rc < 0) {
        fb_buf_free(&b);
        return fb_set_error(err, FB_ERR_INVALID_REQUEST, saved, "cannot read request from '%s'", path);
    }
    if (b.truncated) {
        fb_buf_free(&b);
        return fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, "request: larger than the maximum of %zu bytes", max);
    }
    *out = fb_buf_steal(&b, out_len);
    if (!*out)
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "reading request");
    return 0;
}

int fb_memfd_with(const char *name, const void *data, size_t len, fb_error *err)
{
    int fd = memfd_create(name, MFD_CLOEXEC);
    if (fd < 0)
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, errno, "memfd_create(%s)", name);
    if (len && fb_write_all(fd, data, len) < 0) {
        int saved = errno;
        close(fd);
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, saved, "writing memfd %s", name);
    }
    if (lseek(fd, 0, SEEK_SET) < 0) {
        int saved = errno;
        close(fd);
        return fb_set_error(err, FB_ERR_SANDBOX_SETUP, saved, "lseek memfd %s", name);
    }
    return fd;
}

int fb_write_file(const char *path, const void *data, size_t len, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
    if (fd < 0)
        return -1;
    int rc = fb_write_all(fd, data, len);
    int saved = errno;
    if (close(fd) < 0 && rc == 0)
        return -1;
    errno = saved;
    return rc;
}

void fb_close(int *fd)
{
    if (*fd >= 0) {
        close(*fd);
        *fd = -1;
    }
}

ssize_t fb_write_nosigpipe(int fd, const void *data, size_t len)
{
    struct iovec one = {.iov_base = (void *)data, .iov_len = len};
    return fb_writev_nosigpipe(fd, &one, 1);
}

ssize_t fb_writev_nosigpipe(int fd, const struct iovec *iov, int n)
{
    sigset_t pipe_set, old, pending;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    /* one already pending (for another reason) must stay pending */
    bool was_pending = sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
    ssize_t w = writev(fd, iov, n);
    int saved = errno;
    if (w < 0 && saved == EPIPE && !was_pending) {
        const struct timespec zero = {0, 0};
        while (sigtimedwait(&pipe_set, NULL, &zero) < 0 && errno == EINTR)
            continue;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    errno = saved;
    return w;
}

ssize_t fb_read_small(const char *path, char *buf, size_t cap)
{
    if (cap == 0)
        return -1;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, cap - 1);
    int saved = errno;
    close(fd);
    errno = saved;
    buf[n > 0 ? n : 0] = '\0';
    return n;
}
