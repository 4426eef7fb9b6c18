/* Mount permission rules (fs/rules.h): a table of decisions (permissions JSON, virtual root, relative
 * path, operation -> allowed and the deciding rule), covering the decision order (exclude, rules by
 * priority with declaration order breaking ties, default), allow/deny in one rule, "*" lists, exclude by
 * name at any depth and beneath, '/'-anchored patterns and the mount root as ""; then which paths are
 * excluded (hidden from the view, not merely denied); then a table of permission objects that must be
 * refused with a message naming the field; then the op name helpers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "request/rules.h"

typedef struct decide_case {
    const char *perm; /* JSON; NULL = no permissions object */
    const char *root;
    const char *rel;
    fb_op op;
    bool allowed;
    const char *rule;
} decide_case;

#define R FB_OP_READ
#define L FB_OP_LIST
#define C FB_OP_CREATE
#define M FB_OP_MODIFY
#define D FB_OP_DELETE

/* The seed README's example. */
#define SEED                                                                                               \
    "{\"default\": {\"read\": true, \"list\": true}, \"rules\": [{\"pattern\": \"output/**\", "             \
    "\"allow\": [\"create\", \"modify\"]}], \"exclude\": [\"node_modules\", \".git\"]}"

#define PRIO                                                                                               \
    "{\"rules\": [{\"pattern\": \"**\", \"deny\": [\"read\"], \"priority\": 1},"                             \
    " {\"pattern\": \"public/**\", \"allow\": [\"read\"], \"priority\": 5},"                                 \
    " {\"pattern\": \"public/secret*\", \"deny\": [\"read\"], \"priority\": 5},"                             \
    " {\"pattern\": \"public/secret*\", \"allow\": [\"read\"], \"priority\": 2.5},"                          \
    " {\"pattern\": \"*.md\", \"allow\": \"*\", \"priority\": -1}]}"

#define TIES                                                                                               \
    "{\"rules\": [{\"pattern\": \"a/**\", \"allow\": [\"create\"]},"                                       \
    " {\"pattern\": \"a/b/**\", \"deny\": [\"create\"]},"                                                    \
    " {\"pattern\": \"a/b/**\", \"allow\": [\"delete\"]}]}"

#define BOTH "{\"rules\": [{\"pattern\": \"x/*\", \"allow\": \"*\", \"deny\": [\"delete\"]}," \
             " {\"pattern\": \"y/*\", \"allow\": [\"modify\"], \"deny\": [\"modify\", \"*\"]}]}"

#define EXCL                                                                                               \
    "{\"default\": {\"create\": true, \"modify\": true, \"delete\": true},"                                \
    " \"rules\": [{\"pattern\": \"**\", \"allow\": \"*\", \"priority\": 1000}],"                             \
    " \"exclude\": [\"node_modules\", \"*.log\", \"build/\", \"secret/keys\", \"/data/abs\"]}"

#define ANCH                                                                                               \
    "{\"rules\": [{\"pattern\": \"/data/out/**\", \"allow\": [\"create\"]},"                               \
    " {\"pattern\": \"/other/**\", \"allow\": [\"create\"]},"                                                \
    " {\"pattern\": \"data/x\", \"allow\": [\"create\"]},"                                                   \
    " {\"pattern\": \"!/data/keep/**\", \"allow\": [\"delete\"]}]}"

#define ROOTS "{\"default\": {\"list\": false}, \"rules\": [{\"pattern\": \"**\", \"allow\": [\"list\"]}]}"
#define ROOTS2 "{\"default\": {\"read\": false, \"list\": false, \"create\": true},"                        \
               " \"rules\": [{\"pattern\": \"out/**\", \"allow\": [\"list\"]}, {\"pattern\": \"\\\\#x\", \"deny\": [\"create\"]}]}"

static const decide_case cases[] = {
    /* ---- defaults ---- */
    {NULL, "/data", "a.txt", R, true, "default"},
    {NULL, "/data", "a.txt", L, true, "default"},
    {NULL, "/data", "a.txt", C, false, "default"},
    {NULL, "/data", "a.txt", M, false, "default"},
    {NULL, "/data", "a.txt", D, false, "default"},
    {NULL, "/data", "", L, true, "default"},
    {"{}", "/data", "x/y", R, true, "default"},
    {"{}", "/data", "x/y", D, false, "default"},
    {"{\"default\": {}}", "/data", "x", C, false, "default"},
    {"{\"default\": {\"read\": false}}", "/data", "x", R, false, "default"},
    {"{\"default\": {\"read\": false}}", "/data", "x", L, true, "default"},
    {"{\"default\": {\"delete\": true}}", "/data", "x", D, true, "default"},
    {"{\"default\": {\"create\": true, \"modify\": true}}", "/data", "x", M, true, "default"},
    {"{\"default\": {\"create\": true, \"modify\": true}}", "/data", "x", D, false, "default"},
    {"{\"rules\": []}", "/data", "x", R, true, "default"},
    {"{\"exclude\": []}", "/data", "x", R, true, "default"},

    /* ---- the seed README example ---- */
    {SEED, "/data", "output/a.txt", C, true, "rules[0] \"output/**\""},
    {SEED, "/data", "output/a.txt", M, true, "rules[0] \"output/**\""},
    {SEED, "/data", "output/deep/er/a.txt", C, true, "rules[0] \"output/**\""},
    {SEED, "/data", "output/a.txt", D, false, "default"},
    {SEED, "/data", "output/a.txt", R, true, "default"},
    {SEED, "/data", "output", C, false, "default"}, // output/** does not match output itself
    {SEED, "/data", "input/a.txt", C, false, "default"},
    {SEED, "/data", "input/a.txt", R, true, "default"},
    {SEED, "/data", ".git/config", R, false, "exclude \".git\""},
    {SEED, "/data", ".git", L, false, "exclude \".git\""},
    {SEED, "/data", "sub/.git/objects/ab", R, false, "exclude \".git\""},
    {SEED, "/data", ".github/workflows", R, true, "default"},
    {SEED, "/data", ".gitignore", R, true, "default"},
    {SEED, "/data", "node_modules", L, false, "exclude \"node_modules\""},
    {SEED, "/data", "a/node_modules/x/y.js", R, false, "exclude \"node_modules\""},
    {SEED, "/data", "output/node_modules/x", C, false, "exclude \"node_modules\""},
    {SEED, "/data", "node_modules_old/x", R, true, "default"},
    {SEED, "/data", "", L, true, "default"},

    /* ---- priority order, ties by declaration ---- */
    {PRIO, "/w", "a.txt", R, false, "rules[0] \"**\""},
    {PRIO, "/w", "public/a.txt", R, true, "rules[1] \"public/**\""},
    {PRIO, "/w", "public/secret.txt", R, true, "rules[1] \"public/**\""}, /* same priority: rules[1] first */
    {PRIO, "/w", "public/a.txt", L, true, "default"},
    {PRIO, "/w", "doc.md", R, false, "rules[0] \"**\""},           /* priority 1 beats -1 */
    {PRIO, "/w", "doc.md", D, true, "rules[4] \"*.md\""},          /* only rules[4] names delete */
    {PRIO, "/w", "x/doc.md", D, false, "default"},
    {TIES, "/w", "a/b/c", C, true, "rules[0] \"a/**\""},
    {TIES, "/w", "a/b/c", D, true, "rules[2] \"a/b/**\""},          /* rules[1] does not name delete */
    {TIES, "/w", "a/c", D, false, "default"},
    {TIES, "/w", "a", C, false, "default"},

    /* ---- allow and deny in one rule, "*" lists ---- */
    {BOTH, "/w", "x/f", R, true, "rules[0] \"x/*\""},
    {BOTH, "/w", "x/f", C, true, "rules[0] \"x/*\""},
    {BOTH, "/w", "x/f", D, false, "rules[0] \"x/*\""},
    {BOTH, "/w", "y/f", M, false, "rules[1] \"y/*\""},
    {BOTH, "/w", "y/f", R, false, "rules[1] \"y/*\""},
    {BOTH, "/w", "z/f", R, true, "default"},
    {"{\"rules\": [{\"pattern\": \"**\", \"deny\": \"*\"}]}", "/w", "", L, false, "rules[0] \"**\""},
    {"{\"rules\": [{\"pattern\": \"**\", \"deny\": [\"*\"]}]}", "/w", "q", R, false, "rules[0] \"**\""},
    {"{\"rules\": [{\"pattern\": \"**\", \"allow\": [], \"deny\": []}]}", "/w", "q", R, true, "default"},
    {"{\"rules\": [{\"pattern\": \"*.txt\"}]}", "/w", "q.txt", R, true, "default"},

    /* ---- exclude ---- */
    {EXCL, "/data", "src/main.c", D, true, "rules[0] \"**\""},
    {EXCL, "/data", "node_modules", R, false, "exclude \"node_modules\""},
    {EXCL, "/data", "x/y/node_modules/z/w.js", M, false, "exclude \"node_modules\""},
    {EXCL, "/data", "app.log", R, false, "exclude \"*.log\""},
    {EXCL, "/data", "logs/2024/app.log", C, false, "exclude \"*.log\""},
    {EXCL, "/data", "x.log/inner", R, false, "exclude \"*.log\""},
    {EXCL, "/data", "app.logs", R, true, "rules[0] \"**\""},
    {EXCL, "/data", "build", L, false, "exclude \"build/\""},
    {EXCL, "/data", "a/build/out.o", R, false, "exclude \"build/\""},
    {EXCL, "/data", "builds/x", R, true, "rules[0] \"**\""},
    {EXCL, "/data", "secret/keys", R, false, "exclude \"secret/keys\""},
    {EXCL, "/data", "secret/keys/id_rsa", R, false, "exclude \"secret/keys\""},
    {EXCL, "/data", "secret/other", R, true, "rules[0] \"**\""},
    {EXCL, "/data", "x/secret/keys", R, true, "rules[0] \"**\""}, /* a path entry is anchored at the root */
    {EXCL, "/data", "abs", R, false, "exclude \"/data/abs\""},
    {EXCL, "/data", "abs/deep/file", D, false, "exclude \"/data/abs\""},
    {EXCL, "/other", "abs", R, true, "rules[0] \"**\""},
    {EXCL, "/data", "", L, true, "rules[0] \"**\""},

    /* ---- '/'-anchored patterns: the full virtual path ---- */
    {ANCH, "/data", "out/a", C, true, "rules[0] \"/data/out/**\""},
    {ANCH, "/data/", "out/a", C, true, "rules[0] \"/data/out/**\""},
    {ANCH, "/other", "out/a", C, true, "rules[1] \"/other/**\""},
    {ANCH, "/data", "x", C, false, "default"},        /* data/x is relative: it would need rel data/x */
    {ANCH, "/m", "data/x", C, true, "rules[2] \"data/x\""},
    {ANCH, "/data", "keep/a", D, false, "default"},
    {ANCH, "/data", "other/a", D, true, "rules[3] \"!/data/keep/**\""},
    {"{\"rules\": [{\"pattern\": \"/data\", \"deny\": [\"list\"]}]}", "/data", "", L, false,
     "rules[0] \"/data\""},
    {"{\"rules\": [{\"pattern\": \"/*\", \"deny\": [\"list\"]}]}", "/", "top", L, false, "rules[0] \"/*\""},
    {"{\"rules\": [{\"pattern\": \"/\", \"deny\": [\"list\"]}]}", "/", "", L, false, "rules[0] \"/\""},

    /* ---- the mount root is "" ---- */
    {ROOTS, "/data", "", L, true, "rules[0] \"**\""},
    {ROOTS2, "/data", "", L, false, "default"},
    {ROOTS2, "/data", "out", L, false, "default"},
    {ROOTS2, "/data", "out/x", L, true, "rules[0] \"out/**\""},
    {ROOTS2, "/data", "#x", C, false, "rules[1] \"\\#x\""},
    {ROOTS2, "/data", "x", C, true, "default"},
    {"{\"rules\": [{\"pattern\": \"\", \"deny\": [\"list\"]}]}", "/data", "", L, false, NULL}, /* refused */

    /* ---- braces, classes, dotfiles through rules ---- */
    {"{\"rules\": [{\"pattern\": \"**/*.{js,ts}\", \"allow\": [\"modify\"]}]}", "/w", "src/a.ts", M, true,
     "rules[0] \"**/*.{js,ts}\""},
    {"{\"rules\": [{\"pattern\": \"**/*.{js,ts}\", \"allow\": [\"modify\"]}]}", "/w", "src/a.tsx", M, false,
     "default"},
    {"{\"rules\": [{\"pattern\": \"**/.env*\", \"deny\": [\"read\"]}]}", "/w", "a/.env.local", R, false,
     "rules[0] \"**/.env*\""},
    {"{\"rules\": [{\"pattern\": \"file[!0-9].txt\", \"allow\": [\"delete\"]}]}", "/w", "fileA.txt", D, true,
     "rules[0] \"file[!0-9].txt\""},

    /* ---- paths it cannot judge are denied ---- */
    {SEED, "/data", "/input/a.txt", R, false, "invalid path"},
    {SEED, "/data", "input/../.git/config", R, false, "invalid path"},
    {SEED, "/data", "./input", R, false, "invalid path"},
    {SEED, "/data", "input//a", R, false, "invalid path"},
    {SEED, "/data", "input/", R, false, "invalid path"},
    {SEED, "/data", "..", R, false, "invalid path"},
    {SEED, "/data", "a", FB_OP_COUNT, false, "invalid path"},
};

static fb_rules *parse_json(const char *text, fb_error *err)
{
    json_t *perm = NULL;
    if (text) {
        json_error_t jerr;
        perm = json_loads(text, 0, &jerr);
        if (!perm)
            print_message("# bad JSON in test: %s: %s\n", text, jerr.text);
        assert_non_null(perm);
    }
    fb_rules *r = NULL;
    int rc = fb_rules_parse(perm, "mount.permissions", &r, err);
    json_decref(perm);
    assert_true(rc == 0 ? r != NULL : r == NULL);
    return r;
}

static void test_decisions(void **state)
{
    (void)state;
    int failed = 0;
    size_t n = sizeof cases / sizeof cases[0];
    for (size_t i = 0; i < n; i++) {
        const decide_case *c = &cases[i];
        fb_error err = {0};
        fb_rules *r = parse_json(c->perm, &err);
        if (!c->rule) { /* a permissions object that must be refused */
            if (r) {
                print_message("# FAIL row %zu: parsed\n", i);
                failed++;
            }
            fb_rules_free(r);
            continue;
        }
        if (!r) {
            print_message("# FAIL row %zu: %s\n", i, err.message);
            failed++;
            continue;
        }
        const char *rule = NULL;
        bool ok = fb_rules_allows(r, c->root, c->rel, c->op, &rule);
        bool ok_no_out = fb_rules_allows(r, c->root, c->rel, c->op, NULL);
        if (ok != c->allowed || ok_no_out != c->allowed || !rule || strcmp(rule, c->rule) != 0) {
            print_message("# FAIL row %zu: %s %s%s%s: want %s by %s, got %s by %s\n", i, fb_op_name(c->op),
                          c->root, *c->rel ? "/" : "", c->rel, c->allowed ? "allowed" : "denied", c->rule,
                          ok ? "allowed" : "denied", rule ? rule : "(null)");
            failed++;
        }
        fb_rules_free(r);
    }
    print_message("# %zu decision rows\n", n);
    assert_int_equal(failed, 0);
}

/* ---- excluded (hidden) paths ---- */

typedef struct excluded_case {
    const char *perm;
    const char *root;
    const char *rel;
    const char *rule; /* NULL: not excluded */
} excluded_case;

#define DENYREAD "{\"rules\": [{\"pattern\": \"private/**\", \"deny\": \"*\", \"priority\": 9}]," \
                 " \"exclude\": [\"node_modules\", \"a/b/secret.txt\"]}"

static const excluded_case excluded_cases[] = {
    {NULL, "/data", "node_modules", NULL},
    {"{}", "/data", "x", NULL},
    {SEED, "/data", "", NULL},                                      /* the root is never a name */
    {SEED, "/data", "input/a.txt", NULL},
    {SEED, "/data", "node_modules", "exclude \"node_modules\""},
    {SEED, "/data", "node_modules/lib/x.js", "exclude \"node_modules\""}, /* beneath */
    {SEED, "/data", "deep/er/node_modules", "exclude \"node_modules\""},  /* any depth */
    {SEED, "/data", ".git/config", "exclude \".git\""},
    {SEED, "/data", "node_modules2", NULL},
    {SEED, "/data", "my.git", NULL},
    {EXCL, "/data", "logs/app.log", "exclude \"*.log\""},
    {EXCL, "/data", "build", "exclude \"build/\""},
    {EXCL, "/data", "secret/keys/id_rsa", "exclude \"secret/keys\""},
    {EXCL, "/data", "other/secret/keys", NULL},                     /* a path pattern is from the root */
    {EXCL, "/data", "abs/x", "exclude \"/data/abs\""},
    {EXCL, "/other", "abs/x", NULL},
    {EXCL, "/data", "", NULL},
    /* a deny-everything rule refuses operations but hides nothing */
    {DENYREAD, "/data", "private/key", NULL},
    {DENYREAD, "/data", "a/b/secret.txt", "exclude \"a/b/secret.txt\""},
    {DENYREAD, "/data", "a/b/visible.txt", NULL},
    {DENYREAD, "/data", "a/b", NULL},
    /* paths it cannot judge count as excluded: fail closed */
    {SEED, "/data", "/input", "invalid path"},
    {SEED, "/data", "input/../node_modules", "invalid path"},
    {SEED, "/data", "input//a", "invalid path"},
};

static void test_excluded(void **state)
{
    (void)state;
    int failed = 0;
    size_t n = sizeof excluded_cases / sizeof excluded_cases[0];
    for (size_t i = 0; i < n; i++) {
        const excluded_case *c = &excluded_cases[i];
        fb_error err = {0};
        fb_rules *r = parse_json(c->perm, &err);
        assert_non_null(r);
        const char *rule = "unset";
        bool got = fb_rules_excluded(r, c->root, c->rel, &rule);
        bool got_no_out = fb_rules_excluded(r, c->root, c->rel, NULL);
        bool want = c->rule != NULL;
        if (got != want || got_no_out != want || (want ? !rule || strcmp(rule, c->rule) != 0 : rule != NULL)) {
            print_message("# FAIL row %zu: %s/%s: want %s, got %s by %s\n", i, c->root, c->rel,
                          want ? c->rule : "visible", got ? "excluded" : "visible", rule ? rule : "(null)");
            failed++;
        }
        /* an excluded path is denied every operation by the same entry */
        for (int op = 0; want && c->rel[0] != '/' && op < FB_OP_COUNT; op++) {
            const char *deny_rule = NULL;
            if (fb_rules_allows(r, c->root, c->rel, (fb_op)op, &deny_rule) || strcmp(deny_rule, c->rule) != 0) {
                print_message("# FAIL row %zu: %s not denied by %s\n", i, fb_op_name((fb_op)op), c->rule);
                failed++;
            }
        }
        assert_int_equal(fb_rules_has_excludes(r), c->perm && strstr(c->perm, "exclude") != NULL);
        fb_rules_free(r);
    }
    assert_false(fb_rules_has_excludes(NULL));
    const char *rule = NULL;
    assert_true(fb_rules_excluded(NULL, "/data", "x", &rule)); /* no rules to judge by: fail closed */
    assert_string_equal(rule, "invalid path");
    print_message("# %zu excluded rows\n", n);
    assert_int_equal(failed, 0);
}

/* ---- parse errors ---- */

typedef struct err_case {
    const char *perm;
    const char *message; /* the whole message */
} err_case;

static const err_case errs[] = {
    {"[]", "mount.permissions: must be an object"},
    {"\"rw\"", "mount.permissions: must be an object"},
    {"null", "mount.permissions: must be an object"},
    {"{\"defaults\": {}}", "mount.permissions.defaults: unknown field (expected default, rules or exclude)"},
    {"{\"default\": true}", "mount.permissions.default: must be an object"},
    {"{\"default\": {\"write\": true}}",
     "mount.permissions.default.write: unknown field (expected read, list, create, modify or delete)"},
    {"{\"default\": {\"Read\": true}}",
     "mount.permissions.default.Read: unknown field (expected read, list, create, modify or delete)"},
    {"{\"default\": {\"read\": 1}}", "mount.permissions.default.read: must be a boolean"},
    {"{\"default\": {\"list\": \"yes\"}}", "mount.permissions.default.list: must be a boolean"},
    {"{\"rules\": {}}", "mount.permissions.rules: must be an array"},
    {"{\"rules\": [\"**\"]}", "mount.permissions.rules[0]: must be an object"},
    {"{\"rules\": [{\"allow\": \"*\"}]}", "mount.permissions.rules[0].pattern: required"},
    {"{\"rules\": [{\"pattern\": 5}]}", "mount.permissions.rules[0].pattern: must be a string"},
    {"{\"rules\": [{\"pattern\": \"\"}]}", "mount.permissions.rules[0].pattern: must not be empty"},
    {"{\"rules\": [{\"pattern\": \"a\\u0000b\"}]}",
     "mount.permissions.rules[0].pattern: must not contain a NUL character"},
    {"{\"rules\": [{\"pattern\": \"#x\"}]}",
     "mount.permissions.rules[0].pattern: a pattern starting with '#' is a comment in minimatch and matches "
     "nothing; write \\# for a literal #"},
    {"{\"rules\": [{\"pattern\": \"@(a|b)\"}]}",
     "mount.permissions.rules[0].pattern: extglob syntax such as @(a|b) is not supported; escape the "
     "character before '(' to mean it literally"},
    {"{\"rules\": [{\"pattern\": \"{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}\"}]}",
     "mount.permissions.rules[0].pattern: brace expansion gives more than 1024 alternatives"},
    {"{\"rules\": [{\"pattern\": \"a\", \"allow\": [\"read\"]}, {\"pattern\": \"b\"},"
     " {\"pattern\": \"c\", \"allow\": [\"read\", \"write\"]}]}",
     "mount.permissions.rules[2].allow[1]: unknown operation \"write\" (expected read, list, create, modify, "
     "delete or \"*\")"},
    {"{\"rules\": [{\"pattern\": \"c\", \"deny\": [\"READ\"]}]}",
     "mount.permissions.rules[0].deny[0]: unknown operation \"READ\" (expected read, list, create, modify, "
     "delete or \"*\")"},
    {"{\"rules\": [{\"pattern\": \"c\", \"deny\": [\"rea\\u0000d\"]}]}",
     "mount.permissions.rules[0].deny[0]: unknown operation \"rea\" (expected read, list, create, modify, "
     "delete or \"*\")"},
    {"{\"rules\": [{\"pattern\": \"c\", \"allow\": [1]}]}",
     "mount.permissions.rules[0].allow[0]: must be a string (expected read, list, create, modify, delete or "
     "\"*\")"},
    {"{\"rules\": [{\"pattern\": \"c\", \"allow\": \"all\"}]}",
     "mount.permissions.rules[0].allow: must be \"*\" or an array of operations, got \"all\""},
    {"{\"rules\": [{\"pattern\": \"c\", \"deny\": {}}]}",
     "mount.permissions.rules[0].deny: must be \"*\" or an array of operations"},
    {"{\"rules\": [{\"pattern\": \"c\", \"priority\": \"high\"}]}",
     "mount.permissions.rules[0].priority: must be a number"},
    {"{\"rules\": [{\"pattern\": \"c\", \"priority\": null}]}",
     "mount.permissions.rules[0].priority: must be a number"},
    {"{\"rules\": [{\"pattern\": \"c\", \"prio\": 1}]}",
     "mount.permissions.rules[0].prio: unknown field (expected pattern, allow, deny or priority)"},
    {"{\"exclude\": \"node_modules\"}", "mount.permissions.exclude: must be an array"},
    {"{\"exclude\": [\".git\", 3]}", "mount.permissions.exclude[1]: must be a string"},
    {"{\"exclude\": [\"\"]}", "mount.permissions.exclude[0]: must not be empty"},
    {"{\"exclude\": [\"//\"]}", "mount.permissions.exclude[0]: must name a file, a directory or a pattern"},
    {"{\"exclude\": [\"!keep\"]}", "mount.permissions.exclude[0]: negation ('!') is not supported in exclude"},
    {"{\"exclude\": [\"a\", \"#b\"]}",
     "mount.permissions.exclude[1]: a pattern starting with '#' is a comment in minimatch and matches "
     "nothing; write \\# for a literal #"},
    {"{\"exclude\": [\"x{1..2000}\"]}",
     "mount.permissions.exclude[0]: brace sequence gives more than 1024 alternatives"},
};

static void test_parse_errors(void **state)
{
    (void)state;
    int failed = 0;
    for (size_t i = 0; i < sizeof errs / sizeof errs[0]; i++) {
        json_error_t jerr;
        json_t *perm = json_loads(errs[i].perm, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
        assert_non_null(perm);
        fb_error err = {0};
        fb_rules *r = (fb_rules *)1;
        int rc = fb_rules_parse(perm, "mount.permissions", &r, &err);
        json_decref(perm);
        if (rc != -1 || r != NULL || strcmp(fb_error_type(&err), "InvalidRequest") != 0 ||
            strcmp(err.message, errs[i].message) != 0) {
            print_message("# FAIL error row %zu: rc %d type '%s'\n#   want '%s'\n#   got  '%s'\n", i, rc,
                          fb_error_type(&err), errs[i].message, err.message);
            failed++;
        }
        fb_rules_free(rc == 0 ? r : NULL);
    }
    print_message("# %zu error rows\n", sizeof errs / sizeof errs[0]);
    assert_int_equal(failed, 0);
}

static void test_op_names(void **state)
{
    (void)state;
    static const char *const names[] = {"read", "list", "create", "modify", "delete"};
    for (int i = 0; i < FB_OP_COUNT; i++) {
        fb_op op = FB_OP_COUNT;
        assert_string_equal(fb_op_name((fb_op)i), names[i]);
        assert_int_equal(fb_op_parse(names[i], &op), 0);
        assert_int_equal(op, i);
    }
    fb_op op;
    assert_int_equal(fb_op_parse("write", &op), -1);
    assert_int_equal(fb_op_parse("", &op), -1);
    assert_int_equal(fb_op_parse("*", &op), -1);
    assert_int_equal(fb_op_parse("Read", &op), -1);
    assert_string_equal(fb_op_name(FB_OP_COUNT), "?");
    assert_string_equal(fb_op_name((fb_op)-1), "?");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decisions),
        cmocka_unit_test(test_excluded),
        cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_op_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
