/* The environments file decoded (request/environments.h), table-driven over real directories made by the
 * test: the issue's own example decodes, paths come out canonical (a symlink and a "/./" resolved), the
 * file's order is kept; every refusal is InvalidRequest naming the field (unknown keys at each level, wrong
 * types, relative and missing paths, a file where a directory belongs, bad names, indexes that are not
 * http(s) URLs, malformed JSON, duplicate keys). Then the `environment` field of a request against the
 * process's set: absent and null are the host's, an unknown name lists the known ones (or says none is
 * configured). Whatever happened, fb_environments_free releases what was decoded (ASan checks). */
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

#include "request/environments.h"

static char g_dir[64];      /* the test's directory: holds root/, sp/, nm/, a file and a link */
static char g_text[4096];

/* Replaces each "@" in fmt by the test's directory. */
static const char *with_dir(const char *fmt)
{
    size_t at = 0;
    for (const char *p = fmt; *p && at < sizeof g_text - 80; p++)
        if (*p == '@')
            at += (size_t)snprintf(g_text + at, sizeof g_text - at, "%s", g_dir);
        else
            g_text[at++] = *p;
    g_text[at] = '\0';
    return g_text;
}

typedef struct env_case {
    const char *label;
    const char *json;  /* "@" is the test's directory */
    const char *error; /* NULL: decodes; else the InvalidRequest message starts with this ("@" too) */
} env_case;

static const env_case cases[] = {
    {"empty set", "{\"environments\": {}}", NULL},
    {"a root", "{\"environments\": {\"py313\": {\"root\": \"@/root\"}}}", NULL},
    {"paths and indexes",
     "{\"environments\": {\"web\": {\"root\": \"@/root\", \"python\": {\"paths\": [\"@/sp\"]},"
     " \"javascript\": {\"paths\": [\"@/nm\"]}, \"ruby\": {\"paths\": []}, \"php\": {},"
     " \"indexes\": {\"python\": \"http://pypi.internal/simple\", \"npm\": \"https://npm.internal/\"}}}}",
     NULL},
    {"no environments key", "{}", "environments: required"},
    {"top-level unknown key", "{\"environments\": {}, \"envs\": 1}", "envs: unknown key"},
    {"not an object", "[]", "environments: the file must hold an object"},
    {"environments not an object", "{\"environments\": []}", "environments: must be an object"},
    {"malformed", "{\"environments\": ", "environments: malformed JSON"},
    {"duplicate name", "{\"environments\": {\"a\": {}, \"a\": {}}}", "environments: malformed JSON"},
    {"bad name", "{\"environments\": {\"a b\": {}}}", "environments.a b: a name is 1 to 64"},
    {"empty name", "{\"environments\": {\"\": {}}}", "environments.: a name is 1 to 64"},
    {"long name",
     "{\"environments\": {\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\": {}}}",
     "environments.aaaaaaaaaa"},
    {"env not an object", "{\"environments\": {\"x\": \"/srv\"}}", "environments.x: must be an object"},
    {"unknown key in env", "{\"environments\": {\"web\": {\"roots\": \"/\"}}}", "environments.web.roots: unknown key"},
    {"root not a string", "{\"environments\": {\"x\": {\"root\": 1}}}", "environments.x.root: must be a string"},
    {"relative root", "{\"environments\": {\"x\": {\"root\": \"srv/rootfs\"}}}",
     "environments.x.root: must be an absolute path, got \"srv/rootfs\""},
    {"missing root", "{\"environments\": {\"x\": {\"root\": \"@/nothing\"}}}",
     "environments.x.root: No such file or directory: @/nothing"},
    {"root is a file", "{\"environments\": {\"x\": {\"root\": \"@/file\"}}}",
     "environments.x.root: not a directory: @/file"},
    {"lang not an object", "{\"environments\": {\"x\": {\"python\": [\"@/sp\"]}}}",
     "environments.x.python: must be an object"},
    {"unknown key in lang", "{\"environments\": {\"x\": {\"python\": {\"path\": []}}}}",
     "environments.x.python.path: unknown key"},
    {"paths not an array", "{\"environments\": {\"x\": {\"ruby\": {\"paths\": \"@/sp\"}}}}",
     "environments.x.ruby.paths: must be an array"},
    {"relative path entry", "{\"environments\": {\"x\": {\"php\": {\"paths\": [\"@/sp\", \"lib\"]}}}}",
     "environments.x.php.paths[1]: must be an absolute path"},
    {"missing path entry", "{\"environments\": {\"x\": {\"javascript\": {\"paths\": [\"@/gone\"]}}}}",
     "environments.x.javascript.paths[0]: No such file or directory"},
    {"path entry not a string", "{\"environments\": {\"x\": {\"python\": {\"paths\": [null]}}}}",
     "environments.x.python.paths[0]: must be a string"},
    {"indexes not an object", "{\"environments\": {\"web\": {\"indexes\": \"http://x\"}}}",
     "environments.web.indexes: must be an object"},
    {"unknown index", "{\"environments\": {\"web\": {\"indexes\": {\"gem\": \"http://x/\"}}}}",
     "environments.web.indexes.gem: unknown key"},
    {"index not a URL", "{\"environments\": {\"web\": {\"indexes\": {\"npm\": \"npm.internal\"}}}}",
     "environments.web.indexes.npm: must be an http(s) URL"},
    {"index file URL", "{\"environments\": {\"web\": {\"indexes\": {\"python\": \"file:///srv/simple\"}}}}",
     "environments.web.indexes.python: must be an http(s) URL"},
    {"index with a space", "{\"environments\": {\"web\": {\"indexes\": {\"python\": \"http://a b/\"}}}}",
     "environments.web.indexes.python: must be an http(s) URL"},
    {"index without host", "{\"environments\": {\"web\": {\"indexes\": {\"python\": \"https:///simple\"}}}}",
     "environments.web.indexes.python: must be an http(s) URL"},
    {"index not a string", "{\"environments\": {\"web\": {\"indexes\": {\"npm\": 3}}}}",
     "environments.web.indexes.npm: must be a string"},
};

static void check_case(const env_case *c)
{
    char want[1024];
    snprintf(want, sizeof want, "%s", c->error ? with_dir(c->error) : "");
    const char *json = with_dir(c->json);
    fb_environments set;
    fb_error err = {0};
    int rc = fb_environments_parse(json, strlen(json), &set, &err);
    if (!c->error) {
        if (rc != 0)
            fail_msg("%s: refused: %s", c->label, err.message);
        fb_environments_free(&set);
        return;
    }
    if (rc == 0)
        fail_msg("%s: accepted, wanted \"%s\"", c->label, want);
    assert_int_equal(err.kind, FB_ERR_INVALID_REQUEST);
    if (strncmp(err.message, want, strlen(want)) != 0)
        fail_msg("%s: got \"%s\", wanted \"%s...\"", c->label, err.message, want);
    assert_int_equal(set.n, 0);
    assert_null(set.items);
}

static void test_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        check_case(&cases[i]);
}

/* What the sandbox will use: canonical paths (a link and "/./" resolved), in the file's order. */
static void test_decoded(void **state)
{
    (void)state;
    const char *json = with_dir("{\"environments\": {\"zeta\": {\"root\": \"@/link\"}, \"alpha\": {"
                                "\"python\": {\"paths\": [\"@/./sp\", \"@/nm\"]},"
                                " \"indexes\": {\"npm\": \"http://127.0.0.1:4873/\"}}}}");
    fb_environments set;
    fb_error err = {0};
    assert_int_equal(fb_environments_parse(json, strlen(json), &set, &err), 0);
    assert_int_equal(set.n, 2);
    char want[128];
    assert_string_equal(set.items[0].name, "zeta");
    snprintf(want, sizeof want, "%s/root", g_dir);
    assert_string_equal(set.items[0].root, want);
    const fb_environment *a = fb_environments_find(&set, "alpha");
    assert_ptr_equal(a, &set.items[1]);
    assert_null(a->root);
    assert_int_equal(a->paths[FB_ENV_PYTHON].n, 2);
    snprintf(want, sizeof want, "%s/sp", g_dir);
    assert_string_equal(a->paths[FB_ENV_PYTHON].dirs[0], want);
    snprintf(want, sizeof want, "%s/nm", g_dir);
    assert_string_equal(a->paths[FB_ENV_PYTHON].dirs[1], want);
    assert_int_equal(a->paths[FB_ENV_JAVASCRIPT].n, 0);
    assert_string_equal(a->index_npm, "http://127.0.0.1:4873/");
    assert_null(a->index_python);
    assert_null(fb_environments_find(&set, "beta"));
    fb_environments_free(&set);
}

static void test_load(void **state)
{
    (void)state;
    char path[128];
    snprintf(path, sizeof path, "%s/envs.json", g_dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(with_dir("{\"environments\": {\"py313\": {\"root\": \"@/root\"}}}"), f);
    fclose(f);
    fb_environments set;
    fb_error err = {0};
    assert_int_equal(fb_environments_load(path, &set, &err), 0);
    assert_int_equal(set.n, 1);
    fb_environments_free(&set);
    snprintf(path, sizeof path, "%s/absent.json", g_dir);
    assert_int_equal(fb_environments_load(path, &set, &err), -1);
    assert_int_equal(err.kind, FB_ERR_INVALID_REQUEST);
    assert_non_null(strstr(err.message, "absent.json: No such file or directory"));
    assert_int_equal(fb_environments_load(g_dir, &set, &err), -1);
    assert_non_null(strstr(err.message, "not a regular file"));
}

/* A request's `environment` against the process's set. */
static void test_decode_field(void **state)
{
    (void)state;
    const fb_environment *e = (const fb_environment *)1;
    fb_error err = {0};
    json_t *x = json_string("x");
    assert_int_equal(fb_environment_decode(NULL, "environment", &e, &err), 0);
    assert_null(e);
    assert_int_equal(fb_environment_decode(x, "environment", &e, &err), -1);
    assert_string_equal(err.message,
                        "environment: unknown environment \"x\" (none configured: fnbox serve --environments FILE)");

    const char *json = with_dir("{\"environments\": {\"py313\": {\"root\": \"@/root\"}, \"datasci\": {}}}");
    fb_environments set;
    assert_int_equal(fb_environments_parse(json, strlen(json), &set, &err), 0);
    fb_environments_set_current(&set);
    assert_int_equal(set.n, 0);
    assert_int_equal(fb_environment_decode(x, "environment", &e, &err), -1);
    assert_int_equal(err.kind, FB_ERR_INVALID_REQUEST);
    assert_string_equal(err.message, "environment: unknown environment \"x\" (known: py313, datasci)");
    json_t *num = json_integer(3), *ds = json_string("datasci"), *null = json_null();
    assert_int_equal(fb_environment_decode(num, "options.environment", &e, &err), -1);
    assert_string_equal(err.message, "options.environment: must be the name of an environment (a string), got number");
    assert_int_equal(fb_environment_decode(ds, "environment", &e, &err), 0);
    assert_ptr_equal(e, &fb_environments_current()->items[1]);
    assert_int_equal(fb_environment_decode(null, "environment", &e, &err), 0);
    assert_null(e);
    json_decref(x);
    json_decref(num);
    json_decref(ds);
    json_decref(null);
    fb_environments empty = {0};
    fb_environments_set_current(&empty); /* frees the set */
    assert_int_equal(fb_environments_current()->n, 0);
}

static int setup(void **state)
{
    (void)state;
    snprintf(g_dir, sizeof g_dir, "/tmp/fnbox-envtest-XXXXXX");
    if (!mkdtemp(g_dir))
        return -1;
    char p[128], q[128];
    const char *dirs[] = {"root", "sp", "nm"};
    for (size_t i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "%s/%s", g_dir, dirs[i]);
        if (mkdir(p, 0755) < 0)
            return -1;
    }
    snprintf(p, sizeof p, "%s/file", g_dir);
    FILE *f = fopen(p, "w");
    if (!f)
        return -1;
    fclose(f);
    snprintf(p, sizeof p, "%s/root", g_dir);
    snprintf(q, sizeof q, "%s/link", g_dir);
    return symlink(p, q);
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
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_decoded),
        cmocka_unit_test(test_load),
        cmocka_unit_test(test_decode_field),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
