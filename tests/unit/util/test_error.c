/* util/error.c: the one table of error kinds, their wire names and families, and the error value. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "util/error.h"

/* Every kind has a name of its own that maps back to it, and a family: the table has no hole. */
static void test_every_kind_named_once(void **state)
{
    (void)state;
    for (int k = FB_ERR_NONE + 1; k < FB_ERR_KIND_COUNT; k++) {
        const char *name = fb_errkind_name((fb_errkind)k);
        assert_non_null(name);
        assert_true(name[0] >= 'A' && name[0] <= 'Z');
        assert_string_not_equal(name, "Error");
        assert_int_equal(fb_errkind_from_name(name), k);
        assert_int_not_equal(fb_errkind_family((fb_errkind)k), FB_ERRFAM_NONE);
        for (int j = k + 1; j < FB_ERR_KIND_COUNT; j++)
            assert_string_not_equal(name, fb_errkind_name((fb_errkind)j));
    }
}

/* The names results have always carried (the contract's error.type values) stay as they are. */
static void test_wire_names(void **state)
{
    (void)state;
    assert_string_equal(fb_errkind_name(FB_ERR_INVALID_REQUEST), "InvalidRequest");
    assert_string_equal(fb_errkind_name(FB_ERR_SANDBOX_SETUP), "SandboxSetupFailed");
    assert_string_equal(fb_errkind_name(FB_ERR_KERNEL_FEATURE), "KernelFeatureMissing");
    assert_string_equal(fb_errkind_name(FB_ERR_TIMEOUT), "TimeoutError");
    assert_string_equal(fb_errkind_name(FB_ERR_ARGUMENT), "ArgumentError");
    assert_string_equal(fb_errkind_name(FB_ERR_OUT_OF_MEMORY), "OutOfMemory");
    assert_string_equal(fb_errkind_name(FB_ERR_INTERNAL), "InternalError");
    assert_string_equal(fb_errkind_name(FB_ERR_NONE), "Error");
    assert_string_equal(fb_errkind_name((fb_errkind)FB_ERR_KIND_COUNT), "Error");
    assert_int_equal(fb_errkind_from_name("ZeroDivisionError"), FB_ERR_NONE);
    assert_int_equal(fb_errkind_from_name("Error"), FB_ERR_NONE);
    assert_int_equal(fb_errkind_from_name(NULL), FB_ERR_NONE);
}

static void test_families(void **state)
{
    (void)state;
    assert_int_equal(fb_errkind_family(FB_ERR_INVALID_REQUEST), FB_ERRFAM_REQUEST);
    assert_int_equal(fb_errkind_family(FB_ERR_PERMISSION_DENIED), FB_ERRFAM_DENIED);
    assert_int_equal(fb_errkind_family(FB_ERR_SANDBOX_SETUP), FB_ERRFAM_SETUP);
    assert_int_equal(fb_errkind_family(FB_ERR_KERNEL_FEATURE), FB_ERRFAM_SETUP);
    assert_int_equal(fb_errkind_family(FB_ERR_TIMEOUT), FB_ERRFAM_CALL);
    assert_int_equal(fb_errkind_family(FB_ERR_OUT_OF_MEMORY), FB_ERRFAM_FNBOX);
    assert_int_equal(fb_errkind_family(FB_ERR_INTERNAL), FB_ERRFAM_FNBOX);
}

static void test_set_error(void **state)
{
    (void)state;
    fb_error err = {0};
    assert_false(fb_error_is_set(&err));
    assert_int_equal(fb_set_error(&err, FB_ERR_HOST_PATH, ENOENT, "mount.dirs[%d]", 2), -1);
    assert_true(fb_error_is_set(&err));
    assert_int_equal(err.kind, FB_ERR_HOST_PATH);
    assert_int_equal(err.err_no, ENOENT);
    assert_string_equal(fb_error_type(&err), "HostPathError");
    assert_string_equal(err.message, "mount.dirs[2]: No such file or directory");
    assert_int_equal(fb_wrap_error(&err, "step %s", "x"), -1);
    assert_string_equal(err.message, "step x: mount.dirs[2]: No such file or directory");
    fb_error_clear(&err);
    assert_false(fb_error_is_set(&err));
    assert_int_equal(fb_set_error(NULL, FB_ERR_INTERNAL, 0, "ignored"), -1);
}

/* A caller's slip (kind NONE or out of range) must not read as "no error". */
static void test_no_kind_is_internal(void **state)
{
    (void)state;
    fb_error err = {0};
    fb_set_error(&err, FB_ERR_NONE, 0, "slip");
    assert_true(fb_error_is_set(&err));
    assert_int_equal(err.kind, FB_ERR_INTERNAL);
    fb_set_error(&err, (fb_errkind)(FB_ERR_KIND_COUNT + 7), 0, "slip");
    assert_int_equal(err.kind, FB_ERR_INTERNAL);
}

/* The language's class travels with the kind ARGUMENT; a later plain error clears it. */
static void test_arg_error(void **state)
{
    (void)state;
    fb_error err = {0};
    assert_int_equal(fb_set_arg_error(&err, "TypeError", "add() missing %d argument", 1), -1);
    assert_int_equal(err.kind, FB_ERR_ARGUMENT);
    assert_int_equal(err.err_no, 0);
    assert_string_equal(fb_error_type(&err), "TypeError");
    assert_string_equal(err.message, "add() missing 1 argument");
    fb_set_error(&err, FB_ERR_INVALID_REQUEST, 0, "args: must be an array");
    assert_string_equal(fb_error_type(&err), "InvalidRequest");
    fb_set_arg_error(&err, NULL, "no class");
    assert_string_equal(fb_error_type(&err), "ArgumentError");
    assert_string_equal(fb_error_type(NULL), "Error");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_kind_named_once), cmocka_unit_test(test_wire_names),
        cmocka_unit_test(test_families),              cmocka_unit_test(test_set_error),
        cmocka_unit_test(test_no_kind_is_internal),   cmocka_unit_test(test_arg_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
