/* The HTTP status of each error kind and of fnbox_call's return codes (server/http/reply.c: the family
 * decides, the server's own refusals have their precise statuses), and the log line's format. */
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fnbox.h"
#include "server/http/internal.h"
#include "server/http/log.h"

static void test_status_of_kind(void **state)
{
    (void)state;
    assert_int_equal(fb_http_status_of_kind(FB_ERR_INVALID_REQUEST), 400);
    assert_int_equal(fb_http_status_of_kind(FB_ERR_INVALID_PATTERN), 400);
    assert_int_equal(fb_http_status_of_kind(FB_ERR_PERMISSION_DENIED), 403);
    assert_int_equal(fb_http_status_of_kind(FB_ERR_UNAUTHORIZED), 401);
    assert_int_equal(fb_http_status_of_kind(FB_ERR_NOT_FOUND), 404);
    assert_int_equal(fb_http_status_of_kind(FB_ERR_METHOD_NOT_ALLOWED), 405);
    assert_int_equal(fb_http_status_of_kind(FB_ERR_PAYLOAD_TOO_LARGE), 413);
    assert_int_equal(fb_http_status_of_kind(FB_ERR_SESSION_DEAD), 410);
    assert_int_equal(fb_http_status_of_kind(FB_ERR_OVERLOADED), 503);
    assert_int_equal(fb_http_status_of_kind(FB_ERR_SANDBOX_SETUP), 503);
    assert_int_equal(fb_http_status_of_kind(FB_ERR_KERNEL_FEATURE), 503);
    assert_int_equal(fb_http_status_of_kind(FB_ERR_TIMEOUT), 200);
    assert_int_equal(fb_http_status_of_kind(FB_ERR_CRASH), 200);
    assert_int_equal(fb_http_status_of_kind(FB_ERR_OUT_OF_MEMORY), 500);
    assert_int_equal(fb_http_status_of_kind(FB_ERR_INTERNAL), 500);
    assert_int_equal(fb_http_status_of_kind(FB_ERR_NONE), 500);
    /* every kind has a status that is an error unless its family is the call's own */
    for (int k = FB_ERR_NONE + 1; k < FB_ERR_KIND_COUNT; k++) {
        unsigned s = fb_http_status_of_kind((fb_errkind)k);
        assert_true(s == 200 ? fb_errkind_family((fb_errkind)k) == FB_ERRFAM_CALL : s >= 400 && s < 600);
    }
}

static void test_status_of_call(void **state)
{
    (void)state;
    assert_int_equal(fb_http_status_of_call(FNBOX_OK), 200);
    assert_int_equal(fb_http_status_of_call(FNBOX_INVALID_REQUEST), 400);
    assert_int_equal(fb_http_status_of_call(FNBOX_SANDBOX_FAILED), 503);
    assert_int_equal(fb_http_status_of_call(FNBOX_SESSION_DEAD), 410);
    assert_int_equal(fb_http_status_of_call(FNBOX_NO_RESULT), 500);
}

static void test_log_line(void **state)
{
    (void)state;
    json_t *f = json_pack("{s:o, s:o, s:i}", "method", fb_http_log_string("GET", 32), "path",
                          fb_http_log_string("/a\"b\n\xff\xc3", 100), "status", 404);
    char *line = fb_http_log_line("2026-11-25T10:00:00.000Z", f);
    json_decref(f);
    assert_non_null(line);
    assert_string_equal(line, "{\"time\":\"2026-11-25T10:00:00.000Z\",\"method\":\"GET\",\"path\":\"/a\\\"b\\n"
                              "\xef\xbf\xbd\xef\xbf\xbd\",\"status\":404}\n");
    free(line);
    json_t *cut = fb_http_log_string("abcdef", 3);
    assert_string_equal(json_string_value(cut), "abc");
    json_decref(cut);
    json_t *none = fb_http_log_string(NULL, 3);
    assert_true(json_is_null(none));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_of_kind),
        cmocka_unit_test(test_status_of_call),
        cmocka_unit_test(test_log_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
