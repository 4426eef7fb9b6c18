#include "util/mapped.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static size_t page_size(void)
{
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (size_t)p : 4096;
}

static size_t round_up(size_t n, size_t page)
{
    return (n + page - 1) / page * page;
}

/* len bytes of zeroed private memory, or NULL. */
static char *anon_region(size_t len)
{
    /* cppcheck-suppress invalidFunctionArg ; an anonymous mapping takes fd -1 */
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    /* cppcheck-suppress memleak ; the caller owns the region */
    return p == MAP_FAILED ? NULL : p;
}

int fb_buf_map_sealed(fb_buf *b, int fd, size_t size)
{
    size_t page = page_size();
    struct stat st;
    if (size == 0 || size > SIZE_MAX - 2 * page) {
        errno = EINVAL;
        return -1;
    }
    if (fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW) < 0 || fstat(fd, &st) < 0)
        return -1;
    if ((uint64_t)st.st_size != (uint64_t)size) { /* it changed before the seals held */
        errno = EAGAIN;
        return -1;
    }
    /* The file's pages, then one zero page of our own: the byte after the data reads as the NUL every
     * fb_buf has, even when the size is a multiple of the page (a file page past the end would fault). */
    size_t file_len = round_up(size, page), map_len = file_len + page;
    char *base = anon_region(map_len);
    if (!base)
        return -1;
    /* Private: a write (the answer's head, below) copies the page it lands on and never reaches the file. */
    void *file = mmap(base, file_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, fd, 0);
    if (file == MAP_FAILED) {
        int saved = errno;
        munmap(base, map_len);
        errno = saved;
        return -1;
    }
    fb_buf_free(b);
    b->data = base;
    b->len = size;
    b->cap = 0;
    b->map_len = map_len;
    /* cppcheck-suppress memleak ; file lies at base, which b now owns */
    return 0;
}

/* The answers given out: released by fnbox_free, which must tell them from the heap's blocks. */
typedef struct answer {
    char *text, *base;
    size_t len;
} answer;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static answer *g_answers;
static size_t g_count, g_reserved, g_cap; /* g_count + g_reserved <= g_cap */

/* Room for one more answer, so that registering it cannot fail once it is built. */
static int reserve_slot(void)
{
    int rc = 0;
    pthread_mutex_lock(&g_lock);
    if (g_count + g_reserved == g_cap) {
        size_t cap = g_cap ? g_cap * 2 : 8;
        answer *a = realloc(g_answers, cap * sizeof *a);
        if (a) {
            g_answers = a;
            g_cap = cap;
        } else {
            rc = -1;
        }
    }
    if (rc == 0)
        g_reserved++;
    pthread_mutex_unlock(&g_lock);
    return rc;
}

/* text: the answer, taking its reserved slot; NULL: the slot given back. */
static void use_slot(char *text, char *base, size_t len)
{
    pthread_mutex_lock(&g_lock);
    g_reserved--;
    if (text)
        g_answers[g_count++] = (answer){text, base, len};
    pthread_mutex_unlock(&g_lock);
}

bool fb_mapped_release(void *p)
{
    char *base = NULL;
    size_t len = 0;
    if (!p)
        return false;
    pthread_mutex_lock(&g_lock);
    for (size_t i = 0; i < g_count; i++) {
        if (g_answers[i].text == p) {
            base = g_answers[i].base;
            len = g_answers[i].len;
            g_answers[i] = g_answers[--g_count];
            break;
        }
    }
    if (g_count == 0 && g_reserved == 0) { /* nothing held between calls */
        free(g_answers);
        g_answers = NULL;
        g_cap = 0;
    }
    pthread_mutex_unlock(&g_lock);
    if (!base)
        return false;
    munmap(base, len);
    return true;
}

char *fb_mapped_answer(fb_buf *b, size_t off, size_t len, const char *head, size_t head_len, const char *tail,
                       size_t tail_len, size_t *out_len)
{
    size_t page = page_size();
    if (!b->map_len || off > b->len || len > b->len - off || head_len > SIZE_MAX / 4 || tail_len > SIZE_MAX / 4 ||
        reserve_slot() < 0)
        return NULL;
    char *base = b->data, *x = base; /* x: where the file's first byte lies */
    size_t file_len = b->map_len - page, map_len = b->map_len;
    size_t pre = head_len > off ? round_up(head_len - off, page) : 0;
    size_t end = off + len + tail_len + 1; /* the NUL included */
    if (pre || end > map_len) {
        /* A new region with room before and after the file's pages, which move there whole. */
        size_t total = pre + (end > file_len ? round_up(end, page) : file_len);
        char *r = anon_region(total);
        if (!r) {
            use_slot(NULL, NULL, 0);
            return NULL;
        }
        if (mremap(base, file_len, file_len, MREMAP_MAYMOVE | MREMAP_FIXED, r + pre) == MAP_FAILED) {
            munmap(r, total);
            use_slot(NULL, NULL, 0);
            return NULL;
        }
        munmap(base + file_len, page); /* the old zero page */
        base = r;
        x = r + pre;
        map_len = total;
    }
    char *text = x + off - head_len;
    memcpy(text, head, head_len);
    memcpy(x + off + len, tail, tail_len);
    x[off + len + tail_len] = '\0';
    b->data = NULL;
    b->len = b->cap = b->map_len = 0;
    use_slot(text, base, map_len);
    if (out_len)
        *out_len = head_len + len + tail_len;
    return text;
}
