/* `dependencies` decoded (request/dependencies.h), table-driven: each ecosystem's accepted syntax (pip's
 * specifiers and extras, npm's scoped names and semver ranges) comes out normalized; every refusal (an
 * option, a URL, a path, a VCS reference, whitespace outside a range, shell characters, unknown
 * ecosystems, wrong types, too many or too long entries) is InvalidRequest naming the entry. Lists come
 * out sorted and deduplicated, so equal lists are equal. fb_dependencies_free releases everything (ASan). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "request/dependencies.h"

typedef struct dep_case {
    fb_deps_eco eco;
    const char *entry;
    const char *norm; /* NULL: refused */
} dep_case;

static const dep_case cases[] = {
    /* pip: accepted */
    {FB_DEPS_PYTHON, "six", "six"},
    {FB_DEPS_PYTHON, "six==1.16.0", "six==1.16.0"},
    {FB_DEPS_PYTHON, "Django>=4.2,<5", "django>=4.2,<5"},
    {FB_DEPS_PYTHON, "zope.interface!=5.0", "zope-interface!=5.0"},
    {FB_DEPS_PYTHON, "Foo__Bar-.baz~=1.4", "foo-bar-baz~=1.4"},
    {FB_DEPS_PYTHON, "requests[Socks,security]<=2.31.0", "requests[socks,security]<=2.31.0"},
    {FB_DEPS_PYTHON, "numpy==1.26.*", "numpy==1.26.*"},
    {FB_DEPS_PYTHON, "a>1", "a>1"},
    {FB_DEPS_PYTHON, "pkg==1.0+local.1", "pkg==1.0+local.1"},
    {FB_DEPS_PYTHON, "pkg==1!2.0rc1", "pkg==1!2.0rc1"},
    /* pip: refused */
    {FB_DEPS_PYTHON, "", NULL},
    {FB_DEPS_PYTHON, "--index-url=http://evil/simple", NULL},
    {FB_DEPS_PYTHON, "-e", NULL},
    {FB_DEPS_PYTHON, "-rrequirements.txt", NULL},
    {FB_DEPS_PYTHON, "https://evil.example/six.whl", NULL},
    {FB_DEPS_PYTHON, "six@https://evil.example/six.whl", NULL},
    {FB_DEPS_PYTHON, "six @ file:///tmp/six", NULL},
    {FB_DEPS_PYTHON, "git+https://github.com/x/y", NULL},
    {FB_DEPS_PYTHON, "./six", NULL},
    {FB_DEPS_PYTHON, "/tmp/six.whl", NULL},
    {FB_DEPS_PYTHON, "~/six", NULL},
    {FB_DEPS_PYTHON, "pkgs/six", NULL},
    {FB_DEPS_PYTHON, "six ==1.16.0", NULL},
    {FB_DEPS_PYTHON, "six==1.16.0 ", NULL},
    {FB_DEPS_PYTHON, "six;python_version>'3'", NULL},
    {FB_DEPS_PYTHON, "six|id", NULL},
    {FB_DEPS_PYTHON, "six&&id", NULL},
    {FB_DEPS_PYTHON, "six$(id)", NULL},
    {FB_DEPS_PYTHON, "six`id`", NULL},
    {FB_DEPS_PYTHON, "six'", NULL},
    {FB_DEPS_PYTHON, "six\"", NULL},
    {FB_DEPS_PYTHON, "six===1.0", NULL},
    {FB_DEPS_PYTHON, "six=1.0", NULL},
    {FB_DEPS_PYTHON, "six==", NULL},
    {FB_DEPS_PYTHON, "six==1.0,", NULL},
    {FB_DEPS_PYTHON, "six[", NULL},
    {FB_DEPS_PYTHON, "six-", NULL},
    {FB_DEPS_PYTHON, "six==1.*.0", NULL},
    {FB_DEPS_PYTHON, "six>=1.*", NULL},
    {FB_DEPS_PYTHON, "s\xc3\xafx", NULL},
    /* npm: accepted */
    {FB_DEPS_JAVASCRIPT, "left-pad", "left-pad"},
    {FB_DEPS_JAVASCRIPT, "left-pad@1.3.0", "left-pad@1.3.0"},
    {FB_DEPS_JAVASCRIPT, "@scope/name@^1.2.0", "@scope/name@^1.2.0"},
    {FB_DEPS_JAVASCRIPT, "@types/node", "@types/node"},
    {FB_DEPS_JAVASCRIPT, "lodash@~1.2", "lodash@~1.2"},
    {FB_DEPS_JAVASCRIPT, "lodash@>=1 <2", "lodash@>=1 <2"},
    {FB_DEPS_JAVASCRIPT, "lodash@1.x", "lodash@1.x"},
    {FB_DEPS_JAVASCRIPT, "lodash@*", "lodash@*"},
    {FB_DEPS_JAVASCRIPT, "lodash@1.2.3 - 2.0.0", "lodash@1.2.3 - 2.0.0"},
    {FB_DEPS_JAVASCRIPT, "lodash@latest", "lodash@latest"},
    {FB_DEPS_JAVASCRIPT, "JSONStream@1.3.5", "JSONStream@1.3.5"},
    /* npm: refused */
    {FB_DEPS_JAVASCRIPT, "--registry=http://evil/", NULL},
    {FB_DEPS_JAVASCRIPT, "-g", NULL},
    {FB_DEPS_JAVASCRIPT, "http://evil.example/x.tgz", NULL},
    {FB_DEPS_JAVASCRIPT, "github:user/repo", NULL},
    {FB_DEPS_JAVASCRIPT, "x@github:user/repo", NULL},
    {FB_DEPS_JAVASCRIPT, "x@file:../y", NULL},
    {FB_DEPS_JAVASCRIPT, "x@npm:y@1", NULL},
    {FB_DEPS_JAVASCRIPT, "git+ssh://git@github.com/x/y.git", NULL},
    {FB_DEPS_JAVASCRIPT, "user/repo", NULL},
    {FB_DEPS_JAVASCRIPT, "./pkg", NULL},
    {FB_DEPS_JAVASCRIPT, "/tmp/pkg.tgz", NULL},
    {FB_DEPS_JAVASCRIPT, "~/pkg", NULL},
    {FB_DEPS_JAVASCRIPT, "x.tgz/../y", NULL},
    {FB_DEPS_JAVASCRIPT, " left-pad", NULL},
    {FB_DEPS_JAVASCRIPT, "left-pad @1.3.0", NULL},
    {FB_DEPS_JAVASCRIPT, "left-pad@ 1.3.0", NULL},
    {FB_DEPS_JAVASCRIPT, "left-pad@1.3.0 ", NULL},
    {FB_DEPS_JAVASCRIPT, "left-pad@>=1  <2", NULL},
    {FB_DEPS_JAVASCRIPT, "left-pad@>=1\t<2", NULL},
    {FB_DEPS_JAVASCRIPT, "left-pad@1 || 2", NULL},
    {FB_DEPS_JAVASCRIPT, "left-pad@1;id", NULL},
    {FB_DEPS_JAVASCRIPT, "left-pad@1&id", NULL},
    {FB_DEPS_JAVASCRIPT, "left-pad@$x", NULL},
    {FB_DEPS_JAVASCRIPT, "left-pad@`id`", NULL},
    {FB_DEPS_JAVASCRIPT, "left-pad@'1'", NULL},
    {FB_DEPS_JAVASCRIPT, "left-pad@", NULL},
    {FB_DEPS_JAVASCRIPT, "left-pad@-1", NULL},
    {FB_DEPS_JAVASCRIPT, "@scope", NULL},
    {FB_DEPS_JAVASCRIPT, "@scope/", NULL},
    {FB_DEPS_JAVASCRIPT, "@/name", NULL},
    {FB_DEPS_JAVASCRIPT, ".hidden", NULL},
    {FB_DEPS_JAVASCRIPT, "_private", NULL},
};

static void test_entries(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const dep_case *c = &cases[i];
        char *norm = NULL, why[160] = "";
        int rc = fb_dependency_check(c->eco, c->entry, &norm, why, sizeof why);
        if (c->norm && rc != 0)
            fail_msg("%s \"%s\": refused: %s", fb_deps_eco_key(c->eco), c->entry, why);
        if (!c->norm && rc == 0)
            fail_msg("%s \"%s\": accepted as \"%s\"", fb_deps_eco_key(c->eco), c->entry, norm);
        if (c->norm && strcmp(norm, c->norm) != 0)
            fail_msg("%s \"%s\": normalized to \"%s\", wanted \"%s\"", fb_deps_eco_key(c->eco), c->entry, norm,
                     c->norm);
        if (!c->norm && (norm || !why[0]))
            fail_msg("%s \"%s\": refused without a reason", fb_deps_eco_key(c->eco), c->entry);
        free(norm);
    }
}

/* The field as a request carries it: the message names the entry. */
static void check_refused(const char *json, const char *want)
{
    json_error_t jerr;
    json_t *v = json_loads(json, JSON_ALLOW_NUL, &jerr);
    assert_non_null(v);
    fb_dependencies d;
    fb_error err = {0};
    if (fb_dependencies_decode(v, "dependencies", &d, &err) == 0)
        fail_msg("%s: accepted", json);
    assert_int_equal(err.kind, FB_ERR_INVALID_REQUEST);
    if (strncmp(err.message, want, strlen(want)) != 0)
        fail_msg("%s: got \"%s\", wanted \"%s...\"", json, err.message, want);
    assert_false(fb_dependencies_any(&d));
    json_decref(v);
}

static void test_field(void **state)
{
    (void)state;
    check_refused("{\"python\": [\"six\", \"--index-url=http://x/\"]}",
                  "dependencies.python[1]: \"--index-url=http://x/\": an installer option");
    check_refused("{\"javascript\": [\"left-pad@1.3.0\", \"x@file:../y\"]}", "dependencies.javascript[1]: ");
    check_refused("{\"ruby\": [\"rake\"]}", "dependencies.ruby: unknown ecosystem (known: python, javascript)");
    check_refused("{\"python\": \"six\"}", "dependencies.python: must be a list");
    check_refused("{\"python\": [1]}", "dependencies.python[0]: must be a string");
    check_refused("[\"six\"]", "dependencies: must be an object");
    check_refused("{\"python\": [\"six\\u0000x\"]}", "dependencies.python[0]: contains a NUL");
    char big[FB_DEPS_MAX_ENTRY + 64];
    memset(big, 'a', sizeof big);
    snprintf(big, sizeof big, "{\"python\": [\"%.*s\"]}", FB_DEPS_MAX_ENTRY + 1,
             "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
             "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
             "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
    check_refused(big, "dependencies.python[0]: ");
    json_t *many = json_pack("{s:[]}", "python");
    for (int i = 0; i <= FB_DEPS_MAX_ENTRIES; i++) {
        char name[16];
        snprintf(name, sizeof name, "p%d", i);
        json_array_append_new(json_object_get(many, "python"), json_string(name));
    }
    char *text = json_dumps(many, 0);
    check_refused(text, "dependencies.python: 65 entries is more than the maximum of 64");
    free(text);
    json_decref(many);
}

/* Sorted, deduplicated after normalizing: the same list written two ways is one list. */
static void test_normalized_lists(void **state)
{
    (void)state;
    json_error_t jerr;
    json_t *a = json_loads("{\"python\": [\"Six==1.16.0\", \"attrs\", \"six==1.16.0\"], \"javascript\": []}", 0,
                           &jerr);
    json_t *b = json_loads("{\"python\": [\"attrs\", \"six==1.16.0\"]}", 0, &jerr);
    fb_dependencies da, db, dc;
    fb_error err = {0};
    assert_int_equal(fb_dependencies_decode(a, "dependencies", &da, &err), 0);
    assert_int_equal(fb_dependencies_decode(b, "options.dependencies", &db, &err), 0);
    assert_int_equal(da.n[FB_DEPS_PYTHON], 2);
    assert_int_equal(db.n[FB_DEPS_PYTHON], 2);
    assert_int_equal(da.n[FB_DEPS_JAVASCRIPT], 0);
    for (size_t i = 0; i < 2; i++)
        assert_string_equal(da.items[FB_DEPS_PYTHON][i], db.items[FB_DEPS_PYTHON][i]);
    assert_string_equal(da.items[FB_DEPS_PYTHON][0], "attrs");
    assert_true(fb_dependencies_any(&da));
    assert_int_equal(fb_dependencies_copy(&da, &dc, &err), 0);
    assert_string_equal(dc.items[FB_DEPS_PYTHON][1], "six==1.16.0");
    fb_dependencies_free(&dc);
    fb_dependencies_free(&da);
    fb_dependencies_free(&db);
    assert_int_equal(fb_dependencies_decode(NULL, "dependencies", &da, &err), 0);
    assert_false(fb_dependencies_any(&da));
    json_decref(a);
    json_decref(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_entries),
        cmocka_unit_test(test_field),
        cmocka_unit_test(test_normalized_lists),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
