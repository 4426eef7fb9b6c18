/* core/environment.c and lang.c's lookup in a root: an interpreter is found as the sandbox resolves it
 * (a root's absolute link to a host path leads nowhere), a language the root lacks names the environment,
 * and an environment's paths become one layer per language with its variables. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/environment.h"

static char g_root[64];

static void put(const char *rel, mode_t mode)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", g_root, rel);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fclose(f);
    assert_int_equal(chmod(p, mode), 0);
}

static int setup(void **state)
{
    (void)state;
    snprintf(g_root, sizeof g_root, "/tmp/fnbox-envtest-XXXXXX");
    assert_non_null(mkdtemp(g_root));
    char p[256];
    snprintf(p, sizeof p, "%s/usr", g_root);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/usr/bin", g_root);
    mkdir(p, 0755);
    put("usr/bin/nodejs", 0755);           /* node is found by its other usual name */
    put("usr/bin/php", 0644);              /* not executable: not an interpreter */
    snprintf(p, sizeof p, "%s/usr/bin/python3", g_root);
    assert_int_equal(symlink("/usr/bin/python3", p), 0); /* absolute: in the root, <root>/usr/bin/python3 */
    snprintf(p, sizeof p, "%s/usr/bin/ruby", g_root);
    assert_int_equal(symlink("../../../../../../usr/bin/ruby", p), 0); /* ".." stops at the root */
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    const char *names[] = {"usr/bin/nodejs", "usr/bin/php", "usr/bin/python3", "usr/bin/ruby", "usr/bin", "usr"};
    char p[256];
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        snprintf(p, sizeof p, "%s/%s", g_root, names[i]);
        if (unlink(p) < 0)
            rmdir(p);
    }
    rmdir(g_root);
    return 0;
}

static void test_lookup_in_root(void **state)
{
    (void)state;
    assert_string_equal(fb_lang_find_runtime_in(&fb_lang_javascript, g_root), "/usr/bin/nodejs");
    assert_null(fb_lang_find_runtime_in(&fb_lang_python, g_root)); /* the host's python3 is not the root's */
    assert_null(fb_lang_find_runtime_in(&fb_lang_ruby, g_root));
    assert_null(fb_lang_find_runtime_in(&fb_lang_php, g_root));
    assert_null(fb_lang_find_runtime_in(&fb_lang_python, "/nonexistent-root"));
}

static void test_missing_names_the_environment(void **state)
{
    (void)state;
    fb_environment env = {.name = "py313", .root = g_root};
    fb_error err = {0};
    assert_null(fb_env_runtime(&env, &fb_lang_python, &err));
    assert_int_equal(err.kind, FB_ERR_KERNEL_FEATURE);
    assert_non_null(strstr(err.message, "Language interpreter not found in environment py313: python"));
    fb_error ok = {0};
    assert_string_equal(fb_env_runtime(&env, &fb_lang_javascript, &ok), "/usr/bin/nodejs");
}

static void test_paths_become_layers(void **state)
{
    (void)state;
    char *py[] = {"/a", "/b"}, *js[] = {"/c"}, *php[] = {"/d"};
    fb_environment env = {.name = "ds"};
    env.paths[FB_ENV_PYTHON] = (fb_env_paths){.dirs = py, .n = 2};
    env.paths[FB_ENV_JAVASCRIPT] = (fb_env_paths){.dirs = js, .n = 1};
    env.paths[FB_ENV_PHP] = (fb_env_paths){.dirs = php, .n = 1};
    fb_env_launch el;
    fb_env_launch_init(&el, &env);
    assert_int_equal(el.nlayers, 3);
    assert_string_equal(el.layers[0].dst, FB_ENV_PYTHON_DIR);
    assert_int_equal(el.layers[0].nsrcs, 2);
    assert_string_equal(el.layers[0].srcs[1], "/b");
    assert_string_equal(el.layers[1].dst, "/node_modules");
    assert_string_equal(el.layers[2].dst, FB_ENV_PHP_DIR);
    assert_string_equal(el.vars[0], "FNBOX_PYTHON_PATH=" FB_ENV_PYTHON_DIR);
    assert_string_equal(el.vars[1], "PYTHONPATH=" FB_ENV_PYTHON_DIR);
    assert_string_equal(el.vars[2], "FNBOX_PHP_PATH=" FB_ENV_PHP_DIR);
    assert_null(el.vars[3]);
    fb_sandbox_spec spec = {0};
    fb_env_launch_apply(&el, &spec);
    assert_null(spec.sysroot);
    assert_int_equal(spec.nlayers, 3);
    fb_env_launch_init(&el, NULL); /* the host's: nothing changes */
    fb_env_launch_apply(&el, &spec);
    assert_null(spec.layers);
    assert_int_equal(spec.nlayers, 0);
    assert_null(el.vars[0]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lookup_in_root),
        cmocka_unit_test(test_missing_names_the_environment),
        cmocka_unit_test(test_paths_become_layers),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
