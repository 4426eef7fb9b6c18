/* The PHP conf.d copy (lang/php_ini.c): which ini texts load readline/opcache, and what a conf.d
 * directory becomes (order, skipped files, section resets, fallbacks). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "lang/php_ini.h"

typedef struct ini_case {
    const char *text;
    bool loads;
} ini_case;

static const ini_case k_cases[] = {
    {"; configuration for php readline module\n; priority=20\nextension=readline.so\n", true},
    {"zend_extension=opcache.so\n", true},
    {"extension=readline\n", true},
    {"  extension = \"readline.so\" ; the shell\n", true},
    {"zend_extension='/usr/lib/php/20220829/opcache.so'\n", true},
    {"extension=readline.so", true},                     /* no final newline */
    {"\r\nextension=opcache.so\r\n", true},               /* CRLF line ends */
    {"extension=ffi.so\n", false},
    {";extension=readline.so\n", false},                 /* commented out */
    {"  ; zend_extension=opcache.so\n", false},
    {"readline.history=/tmp/x\nextension=sockets.so\n", false},
    {"extension=readline_extra.so\n", false},
    {"extension=myreadline.so\n", false},
    {"opcache.enable=1\n", false},
    {"extension\n", false},
    {"", false},
    {"zend_extension=xdebug.so\nextension=pdo.so\n", false},
};

static void test_loads_unused(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof k_cases / sizeof *k_cases; i++) {
        bool got = fb_php_ini_loads_unused(k_cases[i].text, strlen(k_cases[i].text));
        if (got != k_cases[i].loads)
            fail_msg("case %zu (%s): got %d, want %d", i, k_cases[i].text, got, k_cases[i].loads);
    }
}

typedef struct tmpdir {
    char path[64];
} tmpdir;

static void put(const tmpdir *d, const char *name, const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", d->path, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static void cleanup(const tmpdir *d)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", d->path);
    assert_int_equal(system(cmd), 0);
}

static void make_dir(tmpdir *d)
{
    snprintf(d->path, sizeof d->path, "/tmp/fnbox-test-phpini-XXXXXX");
    assert_non_null(mkdtemp(d->path));
}

static void test_conf_dir_copy(void **state)
{
    (void)state;
    tmpdir d;
    make_dir(&d);
    put(&d, "20-sockets.ini", "extension=sockets.so"); /* no final newline: the next "[PHP]" still starts a line */
    put(&d, "10-opcache.ini", "zend_extension=opcache.so\nopcache.jit=off\n");
    put(&d, "05-host.ini", "[HOST=example]\nfoo=1\n");
    put(&d, "20-readline.ini", "extension=readline.so\n");
    put(&d, "30-notes.txt", "extension=ignored.so\n"); /* not *.ini: PHP skips it */
    put(&d, "10-pdo.ini", "extension=pdo.so\n");
    fb_lang_extra x;
    fb_php_ini_extra_from(d.path, &x);
    assert_non_null(x.data);
    assert_string_equal(x.path, FB_PHP_CONF_DIR "/host.ini");
    assert_string_equal(x.env, "PHP_INI_SCAN_DIR=" FB_PHP_CONF_DIR);
    /* by name, as PHP reads them; each after [PHP], so the [HOST=] section ends with its file */
    assert_string_equal(x.data, "[PHP]\n[HOST=example]\nfoo=1\n\n[PHP]\nextension=pdo.so\n\n"
                                "[PHP]\nextension=sockets.so\n");
    assert_int_equal(x.len, strlen(x.data));
    free(x.data);
    cleanup(&d);
}

static void test_nothing_to_skip(void **state)
{
    (void)state;
    tmpdir d;
    make_dir(&d);
    put(&d, "10-pdo.ini", "extension=pdo.so\n");
    fb_lang_extra x;
    fb_php_ini_extra_from(d.path, &x); /* PHP reads its own conf.d: nothing to gain */
    assert_null(x.data);
    assert_null(x.path);
    assert_null(x.env);
    cleanup(&d);
}

static void test_unreadable_file_falls_back(void **state)
{
    (void)state;
    tmpdir d;
    make_dir(&d);
    put(&d, "20-readline.ini", "extension=readline.so\n");
    char link[256];
    snprintf(link, sizeof link, "%s/30-gone.ini", d.path);
    assert_int_equal(symlink("/nonexistent/fnbox-test.ini", link), 0); /* a dangling link: cannot be read */
    fb_lang_extra x;
    fb_php_ini_extra_from(d.path, &x);
    assert_null(x.data); /* never fewer extensions than the host configured */
    assert_null(x.env);
    cleanup(&d);
}

static void test_missing_dir_and_runtime(void **state)
{
    (void)state;
    fb_lang_extra x;
    fb_php_ini_extra_from("/nonexistent/fnbox-conf.d", &x);
    assert_null(x.data);
    fb_php_ini_extra("/nonexistent/php8.2", &x);
    assert_null(x.data);
    fb_php_ini_extra("/bin/sh", &x); /* not a php<version> binary */
    assert_null(x.data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_loads_unused),
        cmocka_unit_test(test_conf_dir_copy),
        cmocka_unit_test(test_nothing_to_skip),
        cmocka_unit_test(test_unreadable_file_falls_back),
        cmocka_unit_test(test_missing_dir_and_runtime),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
