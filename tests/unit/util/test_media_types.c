/* A file's media type from its name (util/media_types.h): mime.types' format as Debian's media-types
 * package writes it (comments, several extensions a line, a type without any, an extension listed twice:
 * the first wins), names of any bytes, and the system's own /etc/mime.types when it is there. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "util/media_types.h"

static const char k_table[] =
    "# This is a comment.\n"
    "\n"
    "application/json\t\t\t\tjson\n"
    "application/octet-stream\tbin deb\n"
    "application/x-csh\t\t\tcsh\n"
    "image/png\t\t\t\t\tpng   # an inline comment: png2 is not an extension\n"
    "text/csv\t\t\t\t\tcsv\r\n"
    "text/html\t\t\t\t\thtml htm shtml\n"
    "text/plain\t\t\t\t\ttxt text\n"
    "text/x-csh\t\t\t\t\tcsh\n"
    "text/x-nothing\n"
    "   \t \n"
    "not-a-type\t\t\t\t\tnat\n"
    "bad/ty;pe\t\t\t\t\tbad\n"
    "text/plain\t\t\t\t\ttoolongextension-toolongextension-toolongextension\n"
    "text/markdown\t\t\t\t\tMD markdown"; /* no newline at the end */

#define FIND(t, s) fb_media_types_find(t, s, strlen(s))

static void test_parse_and_find(void **state)
{
    (void)state;
    fb_error err = {0};
    fb_media_types *t = fb_media_types_parse(k_table, strlen(k_table), &err);
    assert_non_null(t);
    assert_string_equal(FIND(t, "a.json"), "application/json");
    assert_string_equal(FIND(t, "x.png"), "image/png");
    assert_string_equal(FIND(t, "x.PNG"), "image/png");
    assert_string_equal(FIND(t, "data.csv"), "text/csv"); /* the \r of a CRLF line is space */
    assert_string_equal(FIND(t, "index.htm"), "text/html");
    assert_string_equal(FIND(t, "notes.text"), "text/plain");
    assert_string_equal(FIND(t, "a.b.c.txt"), "text/plain");
    assert_string_equal(FIND(t, "x.csh"), "application/x-csh"); /* listed twice: the first */
    assert_string_equal(FIND(t, "README.md"), "text/markdown");
    assert_string_equal(FIND(t, "x.markdown"), "text/markdown");
    assert_string_equal(FIND(t, "/workspace/out/plot.png"), "image/png");
    assert_string_equal(FIND(t, "dir.json/x.png"), "image/png");
    assert_null(FIND(t, "dir.png/x"));          /* the extension is the last component's */
    assert_null(FIND(t, "x.png2"));
    assert_null(FIND(t, "x.comment"));
    assert_null(FIND(t, "x.nat"));              /* not type/subtype */
    assert_null(FIND(t, "x.bad"));              /* not sendable in a header */
    assert_null(FIND(t, ".txt"));               /* a dot file has no extension */
    assert_null(FIND(t, "/w/.png"));
    assert_null(FIND(t, "x."));
    assert_null(FIND(t, "Makefile"));
    assert_null(FIND(t, ""));
    assert_null(FIND(t, "x.toolongextension-toolongextension-toolongextension"));
    assert_null(fb_media_types_find(t, "x.p\0ng", 6)); /* any bytes: an extension with a NUL is none */
    assert_string_equal(fb_media_types_find(t, "x.png\0", 5), "image/png");
    assert_null(fb_media_types_find(NULL, "x.png", 5));
    /* json png csv html htm shtml txt text csh bin deb md markdown: a type with no extension adds none */
    assert_int_equal(fb_media_types_count(t), 13);
    fb_media_types_free(t);
    fb_media_types_free(NULL);
}

static void test_empty_and_odd_texts(void **state)
{
    (void)state;
    fb_error err = {0};
    static const char *const texts[] = {"", "\n\n", "#", "text/plain", "text/plain txt\0json", "\xff\xfe/\x01 x"};
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
        fb_media_types *t = fb_media_types_parse(texts[i], strlen(texts[i]) + (i == 4 ? 5 : 0), &err);
        assert_non_null(t);
        assert_null(FIND(t, "a.json"));
        fb_media_types_free(t);
    }
}

static void test_load(void **state)
{
    (void)state;
    fb_error err = {0};
    assert_null(fb_media_types_load("/nonexistent/mime.types", &err));
    assert_non_null(strstr(err.message, "/nonexistent/mime.types"));
    assert_int_equal(err.err_no, 2 /* ENOENT */);
    if (access(FB_MEDIA_TYPES_PATH, R_OK) != 0) {
        skip(); /* no media-types package here (scripts/install-deps.sh installs it) */
        return;
    }
    fb_media_types *t = fb_media_types_load(FB_MEDIA_TYPES_PATH, &err);
    assert_non_null(t);
    assert_true(fb_media_types_count(t) > 500);
    assert_string_equal(FIND(t, "plot.png"), "image/png");
    assert_string_equal(FIND(t, "data.csv"), "text/csv");
    assert_string_equal(FIND(t, "notes.txt"), "text/plain");
    assert_string_equal(FIND(t, "a.json"), "application/json");
    assert_string_equal(FIND(t, "page.html"), "text/html");
    assert_string_equal(FIND(t, "photo.JPG"), "image/jpeg");
    assert_string_equal(FIND(t, "doc.pdf"), "application/pdf");
    fb_media_types_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_and_find),
        cmocka_unit_test(test_empty_and_odd_texts),
        cmocka_unit_test(test_load),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
