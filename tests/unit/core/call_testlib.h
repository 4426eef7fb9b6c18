/* Helpers shared by the unit tests that make real calls through the C API (test_callbacks.c,
 * test_events.c, test_threads.c): whether this machine can run calls at all, and small host-file
 * helpers. Include after cmocka.h. */
#ifndef FB_TEST_CALL_TESTLIB_H
#define FB_TEST_CALL_TESTLIB_H
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "fnbox.h"

/* Whether calls can run here (fnbox doctor), and with need_fuse a read-write /dev/fuse for mounts; says
 * why not (the test then skips). */
static inline bool fbt_can_run(bool need_fuse)
{
    char *report = NULL;
    int rc = fnbox_doctor(&report);
    fnbox_free(report);
    if (rc != 0) {
        print_message("fnbox doctor reports missing features: skipped\n");
        return false;
    }
    int fd = need_fuse ? open("/dev/fuse", O_RDWR | O_CLOEXEC) : -1;
    if (need_fuse && fd < 0) {
        print_message("no read-write /dev/fuse: skipped\n");
        return false;
    }
    if (fd >= 0)
        close(fd);
    return true;
}

/* text as a JSON string literal, quotes included, for building a request (free() it). */
static inline char *fbt_json_quote(const char *text)
{
    json_t *v = json_string(text);
    assert_non_null(v);
    char *out = json_dumps(v, JSON_ENCODE_ANY);
    json_decref(v);
    assert_non_null(out);
    return out;
}

/* Writes dir/rel (mode 0644) with text. */
static inline void fbt_write_file(const char *dir, const char *rel, const char *text)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    chmod(p, 0644);
}

/* dir/rel's content ("" if it cannot be read; *exists says whether it is there). */
static inline void fbt_read_file(const char *dir, const char *rel, char *out, size_t cap, bool *exists)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    out[0] = '\0';
    FILE *f = fopen(p, "r");
    *exists = f != NULL;
    if (!f)
        return;
    size_t n = fread(out, 1, cap - 1, f);
    out[n] = '\0';
    fclose(f);
}

#endif
