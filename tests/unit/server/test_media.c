/* What a session file is sent as (server/http/media.c): the type by its extension, a charset where a text
 * is UTF-8 and only there, and a Content-Disposition that names the file safely whatever its bytes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "server/http/media.h"

static const char k_table[] = "image/png png\ntext/csv csv\ntext/plain txt\napplication/json json\ntext/html html\n";

#define HEADERS(t, path, data, h) fb_http_file_headers_of(t, path, strlen(path), data, sizeof(data) - 1, h)

static void test_types(void **state)
{
    (void)state;
    fb_error err = {0};
    fb_media_types *t = fb_media_types_parse(k_table, strlen(k_table), &err);
    assert_non_null(t);
    fb_http_file_headers h;
    HEADERS(t, "out/plot.png", "\x89PNG\r\n\x1a\n", &h);
    assert_string_equal(h.type, "image/png");
    HEADERS(t, "data.csv", "a,b\n1,2\n", &h);
    assert_string_equal(h.type, "text/csv; charset=utf-8");
    HEADERS(t, "/workspace/notes.TXT", "caf\xc3\xa9\n", &h);
    assert_string_equal(h.type, "text/plain; charset=utf-8");
    HEADERS(t, "latin1.txt", "caf\xe9\n", &h); /* not UTF-8: no charset claimed */
    assert_string_equal(h.type, "text/plain");
    HEADERS(t, "empty.txt", "", &h);
    assert_string_equal(h.type, "text/plain; charset=utf-8");
    HEADERS(t, "a.json", "{}", &h); /* JSON is UTF-8 by its RFC: no parameter */
    assert_string_equal(h.type, "application/json");
    HEADERS(t, "x.bin", "\x00\x01", &h);
    assert_string_equal(h.type, "application/octet-stream");
    HEADERS(t, "Makefile", "all:\n", &h);
    assert_string_equal(h.type, "application/octet-stream");
    HEADERS(NULL, "plot.png", "x", &h); /* no table: every file as bytes */
    assert_string_equal(h.type, "application/octet-stream");
    fb_media_types_free(t);
}

static void test_disposition(void **state)
{
    (void)state;
    fb_http_file_headers h;
    HEADERS(NULL, "/workspace/out/plot.png", "x", &h);
    assert_string_equal(h.disposition, "attachment; filename=\"plot.png\"; filename*=UTF-8''plot.png");
    HEADERS(NULL, "r\xc3\xa9sum\xc3\xa9 \"v2\";%.txt", "x", &h);
    assert_string_equal(h.disposition, "attachment; filename=\"r__sum__ _v2___.txt\"; "
                                       "filename*=UTF-8''r%C3%A9sum%C3%A9%20%22v2%22%3B%25.txt");
    HEADERS(NULL, "a\r\nSet-Cookie: x=1", "x", &h); /* no header can be smuggled in */
    assert_null(strchr(h.disposition, '\r'));
    assert_null(strchr(h.disposition, '\n'));
    assert_string_equal(h.disposition, "attachment; filename=\"a__Set-Cookie: x=1\"; "
                                       "filename*=UTF-8''a%0D%0ASet-Cookie%3A%20x%3D1");
    HEADERS(NULL, "bad\xff.txt", "x", &h); /* not UTF-8: the plain name only */
    assert_string_equal(h.disposition, "attachment; filename=\"bad_.txt\"");
    HEADERS(NULL, "dir/", "x", &h);
    assert_string_equal(h.disposition, "attachment");
    char longest[FB_HTTP_FILENAME_MAX + 2];
    memset(longest, '\xe9', sizeof longest - 1); /* the worst case: every byte escaped, if it were UTF-8 */
    longest[sizeof longest - 1] = '\0';
    fb_http_file_headers_of(NULL, longest, FB_HTTP_FILENAME_MAX + 1, "x", 1, &h);
    assert_string_equal(h.disposition, "attachment"); /* too long to name */
    static char name[FB_HTTP_FILENAME_MAX + 1];
    for (size_t i = 0; i + 2 <= FB_HTTP_FILENAME_MAX; i += 2)
        memcpy(name + i, "\xc3\xa9", 2);
    name[FB_HTTP_FILENAME_MAX - 1] = '!';
    fb_http_file_headers_of(NULL, name, FB_HTTP_FILENAME_MAX, "x", 1, &h);
    assert_int_equal(strlen(h.disposition), strlen("attachment; filename=\"\"; filename*=UTF-8''") +
                                                FB_HTTP_FILENAME_MAX + 3 * (FB_HTTP_FILENAME_MAX - 1) + 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_types),
        cmocka_unit_test(test_disposition),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
