/* core/env_caches.c's key and archive. The key's salt (the fingerprint of a system root: a temp directory
 * here) changes when matplotlib is replaced or a font directory gains a font, and there is none without
 * matplotlib. What the builder hands out is parsed into files under /var/cache, and nothing else is: a name
 * outside matplotlib/, a hidden or path-like name, a size beyond the data, a missing magic line or too many
 * files is refused whole (the caller then places nothing). The builder and the placement run in
 * tests/integration/test_environment_caches.py. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/env_caches.h"
#include "request/limits.h"

#define MAGIC "FNBOXENV1\n"

static void put(const char *root, const char *rel, const char *text)
{
    char path[512], tmp[520];
    snprintf(path, sizeof path, "%s%s", root, rel);
    snprintf(tmp, sizeof tmp, "%s.new", path);
    FILE *f = fopen(tmp, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    assert_int_equal(rename(tmp, path), 0); /* as a package upgrade does: a new inode */
}

static void mkdirs(const char *root, const char *rel)
{
    char path[512];
    snprintf(path, sizeof path, "%s%s", root, rel);
    for (char *p = path + strlen(root) + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            (void)mkdir(path, 0755);
            *p = '/';
        }
    (void)mkdir(path, 0755);
}

static void test_fingerprint_follows_the_root(void **state)
{
    (void)state;
    char root[] = "/tmp/fnbox-env-caches-XXXXXX";
    assert_non_null(mkdtemp(root));
    assert_null(fb_env_caches_fingerprint(root)); /* no matplotlib: nothing to build */
    mkdirs(root, "/usr/lib/python3/dist-packages/matplotlib");
    mkdirs(root, "/usr/share/fonts/truetype/dejavu");
    put(root, "/usr/lib/python3/dist-packages/matplotlib/font_manager.py", "v1\n");
    char *a = fb_env_caches_fingerprint(root);
    assert_non_null(a);
    assert_non_null(strstr(a, root));         /* the root's files, not the host's */
    assert_non_null(strstr(a, "/usr/share/fonts/truetype/dejavu "));
    char *same = fb_env_caches_fingerprint(root);
    assert_string_equal(a, same);
    mkdirs(root, "/usr/share/fonts/truetype/lato"); /* a font package installed */
    char *b = fb_env_caches_fingerprint(root);
    assert_string_not_equal(a, b);
    put(root, "/usr/lib/python3/dist-packages/matplotlib/font_manager.py", "v2\n"); /* matplotlib upgraded */
    char *c = fb_env_caches_fingerprint(root);
    assert_string_not_equal(b, c);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    assert_int_equal(system(cmd), 0);
    free(a);
    free(same);
    free(b);
    free(c);
}

static void test_parses_entries(void **state)
{
    (void)state;
    static const char a[] = MAGIC "matplotlib/fontlist-v330.json\n2\n{}"
                                  "matplotlib/other.bin\n3\n\x00\x01\n"
                                  "matplotlib/empty.json\n0\n";
    fb_ws_files f;
    fb_error err = {0};
    assert_int_equal(fb_env_caches_parse(a, sizeof a - 1, &f, &err), 0);
    assert_int_equal(f.n, 3);
    assert_string_equal(f.v[0].path, FB_ENV_CACHE_DIR "/matplotlib/fontlist-v330.json");
    assert_int_equal(f.v[0].len, 2);
    assert_memory_equal(f.v[0].data, "{}", 2);
    assert_string_equal(f.v[1].path, FB_ENV_CACHE_DIR "/matplotlib/other.bin");
    assert_int_equal(f.v[1].len, 3);
    assert_memory_equal(f.v[1].data, "\x00\x01\n", 3);
    assert_int_equal(f.v[2].len, 0);
    fb_env_caches_files_free(&f);
    assert_int_equal(fb_env_caches_parse(MAGIC, sizeof MAGIC - 1, &f, &err), 0); /* nothing to place */
    assert_int_equal(f.n, 0);
    fb_env_caches_files_free(&f);
}

static void test_refuses_bad_archives(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "",
        "FNBOXENV2\nmatplotlib/x.json\n1\nx",
        MAGIC "other/x.json\n1\nx",            /* not matplotlib's directory */
        MAGIC "fontconfig/x.cache-8\n1\nx",    /* the system's, never a call's copy */
        MAGIC "matplotlib/../x\n1\nx",         /* no path beyond the directory */
        MAGIC "matplotlib/a/b\n1\nx",
        MAGIC "matplotlib/.hidden\n1\nx",
        MAGIC "matplotlib/\n1\nx",
        MAGIC "matplotlib/x.json\n5\nxy",      /* a size beyond the data */
        MAGIC "matplotlib/x.json\n-1\nx",
        MAGIC "matplotlib/x.json\n\nx",
        MAGIC "matplotlib/x.json\n1x\nx",
        MAGIC "matplotlib/x.json",              /* cut short */
        MAGIC "matplotlib/x.json\n1\nxjunk",    /* trailing bytes are no entry */
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        fb_ws_files f;
        fb_error err = {0};
        if (fb_env_caches_parse(bad[i], strlen(bad[i]), &f, &err) == 0)
            fail_msg("accepted archive %zu: %s", i, bad[i]);
        assert_int_equal(f.n, 0);
        assert_null(f.v);
        assert_true(strstr(err.message, "environment caches") != NULL);
    }
}

static void test_file_count_is_capped(void **state)
{
    (void)state;
    size_t cap = sizeof MAGIC + ((size_t)FB_ENV_CACHE_MAX_FILES + 1) * 40;
    char *a = malloc(cap);
    assert_non_null(a);
    size_t len = (size_t)snprintf(a, cap, MAGIC);
    for (int i = 0; i <= FB_ENV_CACHE_MAX_FILES; i++)
        len += (size_t)snprintf(a + len, cap - len, "matplotlib/f%d.json\n1\nx", i);
    fb_ws_files f;
    fb_error err = {0};
    assert_int_equal(fb_env_caches_parse(a, len, &f, &err), -1);
    assert_int_equal(f.n, 0);
    assert_true(strstr(err.message, "more than") != NULL);
    free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fingerprint_follows_the_root),
        cmocka_unit_test(test_parses_entries),
        cmocka_unit_test(test_refuses_bad_archives),
        cmocka_unit_test(test_file_count_is_capped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
