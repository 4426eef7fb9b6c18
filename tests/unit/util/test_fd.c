/* fb_read_all (util/fd.h): reads straight into the buffer, sized from the file where it has a size. For a
 * pipe (written by a thread, in odd-sized writes), a memfd read from offset 0 and from the middle, and an
 * empty file, with maximums below, at and above the data: exactly min(size, max) bytes kept, in order,
 * NUL-terminated, `truncated` set exactly when bytes were dropped, and the fd read to EOF either way. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/buf.h"
#include "util/fd.h"

#define DATA_LEN ((size_t)300000 + 7) /* several 64 KiB steps, not a multiple of any */

static unsigned char g_data[DATA_LEN];

static void fill(void)
{
    for (size_t i = 0; i < DATA_LEN; i++)
        g_data[i] = (unsigned char)(i * 131 + i / 251);
}

typedef struct feed {
    int fd;
    size_t len;
} feed;

static void *writer(void *arg)
{
    feed *f = arg;
    size_t off = 0, step = 1;
    while (off < f->len) {
        size_t n = step < f->len - off ? step : f->len - off;
        assert_int_equal(fb_write_all(f->fd, g_data + off, n), 0);
        off += n;
        step = step * 3 + 1; /* 1, 4, 13, ... 88574: small and large writes */
    }
    close(f->fd);
    return NULL;
}

static void check(const fb_buf *b, size_t from, size_t len, size_t max)
{
    size_t kept = len < max ? len : max;
    assert_int_equal(b->len, kept);
    assert_int_equal(b->truncated, len > max);
    if (kept) {
        assert_non_null(b->data);
        assert_memory_equal(b->data, g_data + from, kept);
        assert_int_equal(b->data[kept], '\0');
    }
}

static const size_t k_maxes[] = {0, 1, 65535, 65536, 65537, DATA_LEN - 1, DATA_LEN, DATA_LEN + 1, (size_t)-1 / 2};

static void test_pipe(void **state)
{
    (void)state;
    for (size_t m = 0; m < sizeof k_maxes / sizeof *k_maxes; m++) {
        int p[2];
        assert_int_equal(pipe(p), 0);
        feed f = {.fd = p[1], .len = DATA_LEN};
        pthread_t t;
        assert_int_equal(pthread_create(&t, NULL, writer, &f), 0);
        fb_buf b;
        fb_buf_init(&b, k_maxes[m]);
        assert_int_equal(fb_read_all(p[0], &b), 0);
        pthread_join(t, NULL);
        check(&b, 0, DATA_LEN, k_maxes[m]);
        char extra;
        assert_int_equal(read(p[0], &extra, 1), 0); /* at EOF */
        fb_buf_free(&b);
        close(p[0]);
    }
}

static void test_memfd_from_offsets(void **state)
{
    (void)state;
    int fd = memfd_create("test_fd", MFD_CLOEXEC);
    assert_true(fd >= 0);
    assert_int_equal(fb_write_all(fd, g_data, DATA_LEN), 0);
    static const size_t k_from[] = {0, 1, 65536, DATA_LEN - 1, DATA_LEN};
    for (size_t o = 0; o < sizeof k_from / sizeof *k_from; o++) {
        for (size_t m = 0; m < sizeof k_maxes / sizeof *k_maxes; m++) {
            assert_int_equal(lseek(fd, (off_t)k_from[o], SEEK_SET), (off_t)k_from[o]);
            fb_buf b;
            fb_buf_init(&b, k_maxes[m]);
            assert_int_equal(fb_read_all(fd, &b), 0);
            check(&b, k_from[o], DATA_LEN - k_from[o], k_maxes[m]);
            assert_int_equal(lseek(fd, 0, SEEK_CUR), (off_t)DATA_LEN); /* read to EOF */
            fb_buf_free(&b);
        }
    }
    close(fd);
}

/* Appending to a buffer that holds data already: the new bytes follow it. */
static void test_appends_after_existing(void **state)
{
    (void)state;
    int fd = memfd_create("test_fd", MFD_CLOEXEC);
    assert_true(fd >= 0);
    assert_int_equal(fb_write_all(fd, g_data + 10, DATA_LEN - 10), 0);
    assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
    fb_buf b;
    fb_buf_init(&b, DATA_LEN);
    assert_int_equal(fb_buf_append(&b, g_data, 10), 0);
    assert_int_equal(fb_read_all(fd, &b), 0);
    check(&b, 0, DATA_LEN, DATA_LEN);
    fb_buf_free(&b);
    close(fd);
}

static void test_empty(void **state)
{
    (void)state;
    int fd = memfd_create("test_fd", MFD_CLOEXEC);
    assert_true(fd >= 0);
    fb_buf b;
    fb_buf_init(&b, 100);
    assert_int_equal(fb_read_all(fd, &b), 0);
    assert_int_equal(b.len, 0);
    assert_false(b.truncated);
    fb_buf_free(&b);
    close(fd);
}

int main(void)
{
    fill();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pipe),
        cmocka_unit_test(test_memfd_from_offsets),
        cmocka_unit_test(test_appends_after_existing),
        cmocka_unit_test(test_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
