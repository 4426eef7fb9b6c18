/* Large results mapped, not copied (util/mapped.h): a sealed memfd mapped as a buffer (the seals hold
 * against whoever else keeps the file: a write, a truncation, a writable shared mapping), NUL after the
 * data at every size, and answers laid out around the value (head and tail shorter and longer than the
 * room the file leaves) whose bytes are exact, that never write back to the file, and that
 * fb_mapped_release unmaps exactly once; steal and growth of a mapped buffer go to the heap. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "util/buf.h"
#include "util/mapped.h"

/* A result channel of size bytes: byte i is 'a' + i % 26. */
static int channel(size_t size)
{
    int fd = memfd_create("test-result", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    assert_true(fd >= 0);
    char *text = malloc(size);
    assert_non_null(text);
    for (size_t i = 0; i < size; i++)
        text[i] = (char)('a' + i % 26);
    size_t done = 0;
    while (done < size) {
        ssize_t n = write(fd, text + done, size - done);
        assert_true(n > 0);
        done += (size_t)n;
    }
    free(text);
    return fd;
}

static void assert_pattern(const char *p, size_t from, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (p[i] != (char)('a' + (from + i) % 26))
            fail_msg("byte %zu of the value: %d", from + i, p[i]);
}

static void test_sizes_map_with_a_nul_after(void **state)
{
    (void)state;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    const size_t sizes[] = {FB_MAPPED_MIN, FB_MAPPED_MIN + 1, FB_MAPPED_MIN + 17, 3 * FB_MAPPED_MIN - 1, 1, page};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        int fd = channel(sizes[i]);
        fb_buf b;
        fb_buf_init(&b, SIZE_MAX);
        assert_int_equal(fb_buf_map_sealed(&b, fd, sizes[i]), 0);
        assert_true(b.map_len > 0);
        assert_int_equal(b.len, sizes[i]);
        assert_pattern(b.data, 0, b.len);
        assert_int_equal(b.data[b.len], '\0');
        fb_buf_free(&b);
        assert_null(b.data);
        close(fd);
    }
}

static void test_the_seals_hold_against_the_files_other_holders(void **state)
{
    (void)state;
    int fd = channel(FB_MAPPED_MIN);
    fb_buf b;
    fb_buf_init(&b, SIZE_MAX);
    assert_int_equal(fb_buf_map_sealed(&b, fd, FB_MAPPED_MIN), 0);
    /* what the sandbox could still do with its copy of the fd, once the value has been read */
    assert_int_equal(pwrite(fd, "XYZ", 3, 10), -1);
    assert_int_equal(errno, EPERM);
    assert_int_equal(ftruncate(fd, 10), -1);
    assert_int_equal(ftruncate(fd, 2 * FB_MAPPED_MIN), -1);
    assert_int_equal(pwrite(fd, "XYZ", 3, FB_MAPPED_MIN), -1);
    void *shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    assert_true(shared == MAP_FAILED);
    assert_pattern(b.data, 0, b.len);
    fb_buf_free(&b);
    close(fd);

    /* a writable shared mapping that exists (a process still writing through it): no seal, no mapping */
    fd = channel(FB_MAPPED_MIN);
    char *w = mmap(NULL, FB_MAPPED_MIN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    assert_true(w != MAP_FAILED);
    fb_buf_init(&b, SIZE_MAX);
    assert_int_equal(fb_buf_map_sealed(&b, fd, FB_MAPPED_MIN), -1);
    assert_int_equal(errno, EBUSY);
    assert_null(b.data);
    munmap(w, FB_MAPPED_MIN);
    close(fd);

    /* the size changed before the seals held: refused, to be read instead */
    fd = channel(FB_MAPPED_MIN + 10);
    assert_int_equal(fb_buf_map_sealed(&b, fd, FB_MAPPED_MIN), -1);
    assert_null(b.data);
    close(fd);
    /* its seals sealed by someone else: refused */
    fd = channel(FB_MAPPED_MIN);
    assert_int_equal(fcntl(fd, F_ADD_SEALS, F_SEAL_SEAL), 0);
    assert_int_equal(fb_buf_map_sealed(&b, fd, FB_MAPPED_MIN), -1);
    close(fd);
}

typedef struct layout {
    const char *label;
    size_t size, off, head, tail;
} layout;

static char *filled(size_t n, char c)
{
    char *p = malloc(n + 1);
    assert_non_null(p);
    memset(p, c, n);
    p[n] = '\0';
    return p;
}

static void test_answers_are_laid_out_around_the_value(void **state)
{
    (void)state;
    size_t page = (size_t)sysconf(_SC_PAGESIZE), M = FB_MAPPED_MIN;
    const layout cases[] = {
        {"head shorter than the channel's header, short tail", M + 100, 40, 30, 20},
        {"head as long as the header", M + 100, 40, 40, 20},
        {"head longer than the header: room made before", M + 100, 40, 41, 20},
        {"head of many pages", M + 100, 40, 5 * page + 3, 20},
        {"tail filling the last page exactly", M, 40, 10, page - 1},
        {"tail past the zero page", M, 40, 10, 3 * page},
        {"value ending before the channel does", M + 100, 40, 10, 20},
        {"size a page multiple, empty tail", M, 0, 0, 0},
        {"both long", M + 1, 2, 2 * page, 2 * page},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const layout *c = &cases[i];
        size_t vlen = c->size - c->off - (strstr(c->label, "before the channel does") ? 7 : 0);
        int fd = channel(c->size);
        fb_buf b;
        fb_buf_init(&b, SIZE_MAX);
        assert_int_equal(fb_buf_map_sealed(&b, fd, c->size), 0);
        char *head = filled(c->head, 'H'), *tail = filled(c->tail, 'T');
        size_t len = 0;
        char *out = fb_mapped_answer(&b, c->off, vlen, head, c->head, tail, c->tail, &len);
        if (!out)
            fail_msg("%s: no answer", c->label);
        assert_null(b.data); /* consumed */
        assert_int_equal(len, c->head + vlen + c->tail);
        assert_memory_equal(out, head, c->head);
        assert_pattern(out + c->head, c->off, vlen);
        assert_memory_equal(out + c->head + vlen, tail, c->tail);
        assert_int_equal(out[len], '\0');
        /* the writes were the answer's own pages: the file still holds the channel as written */
        char first[64];
        assert_int_equal(pread(fd, first, sizeof first, 0), (ssize_t)sizeof first);
        assert_pattern(first, 0, sizeof first);
        assert_true(fb_mapped_release(out));
        assert_false(fb_mapped_release(out)); /* once */
        free(head);
        free(tail);
        close(fd);
    }
    int x;
    assert_false(fb_mapped_release(&x)); /* not an answer: the caller's to free */
    assert_false(fb_mapped_release(NULL));
}

static void test_a_buffer_not_mapped_is_not_laid_out(void **state)
{
    (void)state;
    fb_buf b;
    fb_buf_init(&b, 100);
    assert_int_equal(fb_buf_append(&b, "{\"ok\":true}\n\"v\"", 15), 0);
    assert_null(fb_mapped_answer(&b, 12, 3, "{", 1, "}", 1, NULL));
    assert_non_null(b.data); /* left whole, for the copy */
    fb_buf_free(&b);
}

static void test_steal_and_growth_go_to_the_heap(void **state)
{
    (void)state;
    int fd = channel(FB_MAPPED_MIN + 5);
    fb_buf b;
    fb_buf_init(&b, SIZE_MAX);
    assert_int_equal(fb_buf_map_sealed(&b, fd, FB_MAPPED_MIN + 5), 0);
    assert_int_equal(fb_buf_append(&b, "!", 1), 0);
    assert_int_equal(b.map_len, 0);
    assert_int_equal(b.len, FB_MAPPED_MIN + 6);
    assert_pattern(b.data, 0, FB_MAPPED_MIN + 5);
    assert_int_equal(b.data[b.len - 1], '!');
    fb_buf_free(&b);
    assert_int_equal(fb_buf_map_sealed(&b, fd, FB_MAPPED_MIN + 5), 0); /* sealed already: still maps */
    size_t len = 0;
    char *p = fb_buf_steal(&b, &len);
    assert_non_null(p);
    assert_int_equal(len, FB_MAPPED_MIN + 5);
    assert_pattern(p, 0, len);
    assert_int_equal(p[len], '\0');
    free(p); /* a heap block */
    assert_int_equal(b.map_len, 0);
    close(fd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes_map_with_a_nul_after),
        cmocka_unit_test(test_the_seals_hold_against_the_files_other_holders),
        cmocka_unit_test(test_answers_are_laid_out_around_the_value),
        cmocka_unit_test(test_a_buffer_not_mapped_is_not_laid_out),
        cmocka_unit_test(test_steal_and_growth_go_to_the_heap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
