/* What an environment offers, found from its root's files (core/environments.h), on small roots the test
 * builds: the interpreter's usual name followed through its links inside the root (an absolute link is the
 * root's, never the host's), the whole version from the root's Debian package database when it has one,
 * else the digits of the interpreter's name; a language the root lacks is not listed; a link loop or a
 * link out through a symlinked directory finds nothing outside. Then the listing fnbox_environments_load
 * makes once, through the public API. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "core/environments.h"
#include "fnbox.h"

static char g_dir[64];

static void path_of(char *out, size_t cap, const char *rel)
{
    snprintf(out, cap, "%s/%s", g_dir, rel);
}

static void mkdirs(const char *rel)
{
    char p[256], cmd[300];
    path_of(p, sizeof p, rel);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", p);
    assert_int_equal(system(cmd), 0);
}

static void put(const char *rel, const char *text)
{
    char p[256];
    path_of(p, sizeof p, rel);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void link_to(const char *target, const char *rel)
{
    char p[256];
    path_of(p, sizeof p, rel);
    assert_int_equal(symlink(target, p), 0);
}

static fb_environment env_at(const char *rel)
{
    static char root[256];
    path_of(root, sizeof root, rel);
    return (fb_environment){.name = "t", .root = root};
}

/* A Debian-like root: python3 -> /usr/bin/python3.13 (absolute: the root's), node a file, nodejs's and
 * python3.13-minimal's versions in var/lib/dpkg/status. */
static void test_debian_root(void **state)
{
    (void)state;
    mkdirs("deb/usr/bin");
    mkdirs("deb/var/lib/dpkg");
    link_to("usr/bin", "deb/bin");
    put("deb/usr/bin/python3.13", "");
    link_to("/usr/bin/python3.13", "deb/usr/bin/python3");
    put("deb/usr/bin/node", "");
    put("deb/var/lib/dpkg/status", "Package: libc6\nVersion: 2.41-12\n\n"
                                   "Package: python3.13-minimal\nStatus: install ok installed\nVersion: 3.13.5-2\n\n"
                                   "Package: nodejs\nVersion: 20.19.2+dfsg-1\nDepends: libc6\n");
    fb_environment e = env_at("deb");
    char v[FB_ENV_VERSION_MAX];
    assert_true(fb_env_language_version(&e, FB_ENV_PYTHON, v, sizeof v));
    assert_string_equal(v, "3.13.5");
    assert_true(fb_env_language_version(&e, FB_ENV_JAVASCRIPT, v, sizeof v));
    assert_string_equal(v, "20.19.2");
    assert_false(fb_env_language_version(&e, FB_ENV_RUBY, v, sizeof v));
    assert_false(fb_env_language_version(&e, FB_ENV_PHP, v, sizeof v));
}

/* Without a package database: the digits of the name the links end at; an epoch is dropped. */
static void test_names_and_epochs(void **state)
{
    (void)state;
    mkdirs("plain/usr/local/bin");
    mkdirs("plain/usr/bin");
    put("plain/usr/local/bin/ruby3.3", "");
    link_to("ruby3.3", "plain/usr/local/bin/ruby");
    put("plain/usr/bin/php8.4", "");
    link_to("/etc/alternatives/php", "plain/usr/bin/php");
    mkdirs("plain/etc/alternatives");
    link_to("/usr/bin/php8.4", "plain/etc/alternatives/php");
    fb_environment e = env_at("plain");
    char v[FB_ENV_VERSION_MAX];
    assert_true(fb_env_language_version(&e, FB_ENV_RUBY, v, sizeof v));
    assert_string_equal(v, "3.3");
    assert_true(fb_env_language_version(&e, FB_ENV_PHP, v, sizeof v));
    assert_string_equal(v, "8.4");
    mkdirs("plain/var/lib/dpkg");
    put("plain/var/lib/dpkg/status", "Package: php8.4-cli\nVersion: 1:8.4.11-1\n");
    assert_true(fb_env_language_version(&e, FB_ENV_PHP, v, sizeof v));
    assert_string_equal(v, "8.4.11");
}

/* An untrusted root's links lead nowhere outside it: python3 -> /usr/bin/python3.11 is the root's (absent
 * there, though the host may have it), usr/bin -> / finds the root's own /, a loop ends. */
static void test_links_stay_inside(void **state)
{
    (void)state;
    mkdirs("hostile/usr/bin");
    link_to("/usr/bin/python3.11", "hostile/usr/bin/python3");
    link_to("/usr/bin/ruby", "hostile/usr/bin/ruby");
    link_to("php", "hostile/usr/bin/php");
    mkdirs("hostile2/usr");
    link_to("/", "hostile2/usr/bin"); /* the root's own /: no bin/node there */
    fb_environment e = env_at("hostile"), e2 = env_at("hostile2");
    char v[FB_ENV_VERSION_MAX];
    assert_false(fb_env_language_version(&e, FB_ENV_PYTHON, v, sizeof v));
    assert_false(fb_env_language_version(&e, FB_ENV_RUBY, v, sizeof v));
    assert_false(fb_env_language_version(&e, FB_ENV_PHP, v, sizeof v));
    assert_false(fb_env_language_version(&e2, FB_ENV_JAVASCRIPT, v, sizeof v));
}

/* Through the API: the listing made at load, in the file's order; a bad file keeps the set in place. */
static void test_listing(void **state)
{
    (void)state;
    char file[128], root[128], text[512];
    path_of(file, sizeof file, "envs.json");
    path_of(root, sizeof root, "deb");
    snprintf(text, sizeof text, "{\"environments\": {\"trixie\": {\"root\": \"%s\"}, \"host\": {}}}", root);
    put("envs.json", text);
    char *error = NULL, *json = NULL;
    assert_int_equal(fnbox_environments_load(file, &error, NULL), FNBOX_OK);
    assert_null(error);
    assert_int_equal(fnbox_environments(&json, NULL), 0);
    json_t *list = json_loads(json, 0, NULL);
    fnbox_free(json);
    assert_int_equal(json_array_size(list), 2);
    json_t *t = json_array_get(list, 0);
    assert_string_equal(json_string_value(json_object_get(t, "name")), "trixie");
    assert_string_equal(json_string_value(json_object_get(t, "root")), root);
    json_t *py = json_array_get(json_object_get(t, "languages"), 0);
    assert_string_equal(json_string_value(json_object_get(py, "name")), "python");
    assert_string_equal(json_string_value(json_object_get(py, "version")), "3.13.5");
    assert_true(json_is_null(json_object_get(json_array_get(list, 1), "root")));
    json_decref(list);

    put("envs.json", "{\"environments\": {\"x\": {\"root\": \"relative\"}}}");
    assert_int_equal(fnbox_environments_load(file, &error, NULL), FNBOX_INVALID_REQUEST);
    assert_non_null(strstr(error, "environments.x.root: must be an absolute path"));
    fnbox_free(error);
    assert_int_equal(fnbox_environments(&json, NULL), 0);
    assert_non_null(strstr(json, "\"trixie\"")); /* the set in place stays */
    fnbox_free(json);
    assert_int_equal(fnbox_environments_load(NULL, NULL, NULL), FNBOX_OK);
    assert_int_equal(fnbox_environments(&json, NULL), 0);
    assert_string_equal(json, "[]");
    fnbox_free(json);
}

static int setup(void **state)
{
    (void)state;
    snprintf(g_dir, sizeof g_dir, "/tmp/fnbox-envroots-XXXXXX");
    return mkdtemp(g_dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_debian_root),
        cmocka_unit_test(test_names_and_epochs),
        cmocka_unit_test(test_links_stay_inside),
        cmocka_unit_test(test_listing),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
