/* The `mount` parser (fs/mount.c): defaults, every field, and a table of bad inputs, each of which must be
 * refused with an InvalidRequest whose message names the field. Plus fb_mount_find's component-wise
 * matching ("/data" never matches "/database"). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <ftw.h>

#include <cmocka.h>

#include "request/mount.h"

static char g_dir[64];  /* a temp dir with subdirs a, b and a file f */
static char g_a[128], g_b[128];

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(p);
}

static int setup(void **state)
{
    (void)state;
    snprintf(g_dir, sizeof g_dir, "/tmp/fnbox-mount-test.XXXXXX");
    if (!mkdtemp(g_dir))
        return -1;
    snprintf(g_a, sizeof g_a, "%s/a", g_dir);
    snprintf(g_b, sizeof g_b, "%s/b", g_dir);
    char f[160];
    snprintf(f, sizeof f, "%s/f", g_dir);
    FILE *fp = fopen(f, "w");
    if (mkdir(g_a, 0755) < 0 || mkdir(g_b, 0755) < 0 || !fp)
        return -1;
    fclose(fp);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return nftw(g_dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* The JSON text with every "$A" / "$B" / "$D" replaced by the temp dirs. */
static json_t *load(const char *text)
{
    char buf[8192];
    size_t o = 0;
    for (const char *p = text; *p && o < sizeof buf - 200; p++) {
        if (p[0] == '$' && (p[1] == 'A' || p[1] == 'B' || p[1] == 'D')) {
            const char *r = p[1] == 'A' ? g_a : p[1] == 'B' ? g_b : g_dir;
            o += (size_t)snprintf(buf + o, sizeof buf - o, "%s", r);
            p++;
        } else {
            buf[o++] = *p;
        }
    }
    buf[o] = '\0';
    json_error_t jerr;
    json_t *v = json_loads(buf, JSON_DECODE_ANY, &jerr);
    if (!v)
        fail_msg("test JSON does not parse: %s: %s", jerr.text, buf);
    return v;
}

static void test_defaults(void **state)
{
    (void)state;
    json_t *j = load("{\"dirs\": {\"/data\": \"$A\"}}");
    fb_mount_config m;
    fb_error err = {0};
    assert_int_equal(fb_mount_config_parse(j, "mount", &m, &err), 0);
    assert_int_equal(m.ndirs, 1);
    assert_string_equal(m.dirs[0].virtual_path, "/data");
    assert_string_equal(m.dirs[0].host_path, g_a);
    assert_non_null(m.rules);
    assert_int_equal(m.load, FB_LOAD_LAZY);
    assert_int_equal(m.ninclude, 0);
    assert_int_equal(m.max_file_size, 0);
    assert_int_equal(m.max_total_size, 0);
    assert_int_equal(m.sync, FB_SYNC_MANUAL); /* no sync section: reported, never written (the seed's rule) */
    assert_int_equal(m.on_error, FB_ON_ERROR_ROLLBACK);
    assert_false(m.sync_on_function_error);
    assert_int_equal(m.symlinks, FB_SYMLINKS_NO);
    assert_int_equal(m.on_denied, FB_DENIED_THROW);
    /* no permissions, not batch-synced: every operation (the changes are only reported) */
    for (fb_op op = FB_OP_READ; op <= FB_OP_DELETE; op++)
        assert_true(fb_rules_allows(m.rules, "/data", "x", op, NULL));
    fb_mount_config_free(&m);
    json_decref(j);
    /* batch-synced without permissions: the default rules, read and list yes, the rest no */
    j = load("{\"dirs\": {\"/data\": \"$A\"}, \"sync\": {\"mode\": \"batch\"}}");
    assert_int_equal(fb_mount_config_parse(j, "mount", &m, &err), 0);
    assert_int_equal(m.sync, FB_SYNC_BATCH);
    assert_true(fb_rules_allows(m.rules, "/data", "x", FB_OP_READ, NULL));
    assert_true(fb_rules_allows(m.rules, "/data", "x", FB_OP_LIST, NULL));
    assert_false(fb_rules_allows(m.rules, "/data", "x", FB_OP_CREATE, NULL));
    assert_false(fb_rules_allows(m.rules, "/data", "x", FB_OP_MODIFY, NULL));
    assert_false(fb_rules_allows(m.rules, "/data", "x", FB_OP_DELETE, NULL));
    fb_mount_config_free(&m);
    json_decref(j);
}

/* absent_allows_all (fnbox sync, allowAllFs): no permissions is every operation; given ones still decide. */
static void test_absent_permissions_allow_all(void **state)
{
    (void)state;
    json_t *j = load("{\"dirs\": {\"/data\": \"$A\"}}");
    fb_mount_config m;
    fb_error err = {0};
    assert_int_equal(fb_mount_config_parse_ex(j, "mount", true, &m, &err), 0);
    for (int op = 0; op < FB_OP_COUNT; op++)
        assert_true(fb_rules_allows(m.rules, "/data", "x", (fb_op)op, NULL));
    fb_mount_config_free(&m);
    json_decref(j);
    j = load("{\"dirs\": {\"/data\": \"$A\"}, \"permissions\": {\"default\": {\"read\": true}}}");
    assert_int_equal(fb_mount_config_parse_ex(j, "mount", true, &m, &err), 0);
    assert_true(fb_rules_allows(m.rules, "/data", "x", FB_OP_READ, NULL));
    assert_false(fb_rules_allows(m.rules, "/data", "x", FB_OP_CREATE, NULL));
    fb_mount_config_free(&m);
    json_decref(j);
}

static void test_every_field(void **state)
{
    (void)state;
    json_t *j = load("{\"dirs\": {\"/workspace/in\": \"$A\", \"/data\": \"$B\"},"
                     " \"permissions\": {\"default\": {\"create\": true},"
                     "                   \"rules\": [{\"pattern\": \"out/**\", \"allow\": \"*\"}]},"
                     " \"loading\": {\"mode\": \"explicit\", \"include\": [\"*.txt\", \"src/**\"],"
                     "               \"maxFileSize\": 1024, \"maxTotalSize\": 1048576},"
                     " \"sync\": {\"mode\": \"manual\", \"onError\": \"abort\", \"onFunctionError\": \"sync\"},"
                     " \"security\": {\"followSymlinks\": \"restricted\"},"
                     " \"onPermissionDenied\": \"virtual\"}");
    fb_mount_config m;
    fb_error err = {0};
    assert_int_equal(fb_mount_config_parse(j, "mount", &m, &err), 0);
    assert_int_equal(m.ndirs, 2);
    /* sorted by virtual path */
    assert_string_equal(m.dirs[0].virtual_path, "/data");
    assert_string_equal(m.dirs[0].host_path, g_b);
    assert_string_equal(m.dirs[1].virtual_path, "/workspace/in");
    assert_int_equal(m.load, FB_LOAD_EXPLICIT);
    assert_int_equal(m.ninclude, 2);
    assert_string_equal(m.include[0], "*.txt");
    assert_string_equal(m.include[1], "src/**");
    assert_int_equal(m.max_file_size, 1024);
    assert_int_equal(m.max_total_size, 1048576);
    assert_int_equal(m.sync, FB_SYNC_MANUAL);
    assert_int_equal(m.on_error, FB_ON_ERROR_ABORT);
    assert_true(m.sync_on_function_error);
    assert_int_equal(m.symlinks, FB_SYMLINKS_RESTRICTED);
    assert_int_equal(m.on_denied, FB_DENIED_VIRTUAL);
    assert_true(fb_rules_allows(m.rules, "/data", "x", FB_OP_CREATE, NULL));
    assert_true(fb_rules_allows(m.rules, "/data", "out/x", FB_OP_DELETE, NULL));
    assert_false(fb_rules_allows(m.rules, "/data", "x", FB_OP_DELETE, NULL));
    fb_mount_config_free(&m);
    json_decref(j);
}

static void test_enum_values(void **state)
{
    (void)state;
    static const struct {
        const char *json;
        int field; /* 0 load, 1 sync, 2 on_error, 3 symlinks, 4 on_denied, 5 on_fn_error */
        int want;
    } cases[] = {
        {"{\"dirs\": {\"/d\": \"$A\"}, \"loading\": {\"mode\": \"eager\"}}", 0, FB_LOAD_EAGER},
        {"{\"dirs\": {\"/d\": \"$A\"}, \"loading\": {\"mode\": \"lazy\"}}", 0, FB_LOAD_LAZY},
        {"{\"dirs\": {\"/d\": \"$A\"}, \"loading\": {}}", 0, FB_LOAD_LAZY},
        {"{\"dirs\": {\"/d\": \"$A\"}, \"sync\": {\"mode\": \"batch\"}}", 1, FB_SYNC_BATCH},
        {"{\"dirs\": {\"/d\": \"$A\"}, \"sync\": {\"onError\": \"continue\"}}", 1, FB_SYNC_MANUAL},
        {"{\"dirs\": {\"/d\": \"$A\"}, \"sync\": {}}", 1, FB_SYNC_MANUAL},
        {"{\"dirs\": {\"/d\": \"$A\"}, \"sync\": {\"onError\": \"continue\"}}", 2, FB_ON_ERROR_CONTINUE},
        {"{\"dirs\": {\"/d\": \"$A\"}, \"sync\": {\"onError\": \"rollback\"}}", 2, FB_ON_ERROR_ROLLBACK},
        {"{\"dirs\": {\"/d\": \"$A\"}, \"security\": {\"followSymlinks\": true}}", 3, FB_SYMLINKS_YES},
        {"{\"dirs\": {\"/d\": \"$A\"}, \"security\": {\"followSymlinks\": false}}", 3, FB_SYMLINKS_NO},
        {"{\"dirs\": {\"/d\": \"$A\"}, \"security\": {}}", 3, FB_SYMLINKS_NO},
        {"{\"dirs\": {\"/d\": \"$A\"}, \"onPermissionDenied\": \"ignore\"}", 4, FB_DENIED_IGNORE},
        {"{\"dirs\": {\"/d\": \"$A\"}, \"onPermissionDenied\": \"throw\"}", 4, FB_DENIED_THROW},
        {"{\"dirs\": {\"/d\": \"$A\"}, \"sync\": {\"onFunctionError\": \"skip\"}}", 5, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        json_t *j = load(cases[i].json);
        fb_mount_config m;
        fb_error err = {0};
        if (fb_mount_config_parse(j, "mount", &m, &err) != 0)
            fail_msg("case %zu refused: %s", i, err.message);
        int got = cases[i].field == 0   ? (int)m.load
                  : cases[i].field == 1 ? (int)m.sync
                  : cases[i].field == 2 ? (int)m.on_error
                  : cases[i].field == 3 ? (int)m.symlinks
                  : cases[i].field == 4 ? (int)m.on_denied
                                        : (int)m.sync_on_function_error;
        if (got != cases[i].want)
            fail_msg("case %zu: got %d, want %d", i, got, cases[i].want);
        fb_mount_config_free(&m);
        json_decref(j);
    }
}

static void test_relative_host_path(void **state)
{
    (void)state;
    char cwd[4096];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(g_dir), 0);
    json_t *j = load("{\"dirs\": {\"/data\": \"./a\", \"/other\": \"b/../b\"}}");
    fb_mount_config m;
    fb_error err = {0};
    int rc = fb_mount_config_parse(j, "mount", &m, &err);
    assert_int_equal(chdir(cwd), 0);
    assert_int_equal(rc, 0);
    assert_string_equal(m.dirs[0].host_path, g_a);
    assert_string_equal(m.dirs[1].host_path, g_b);
    fb_mount_config_free(&m);
    json_decref(j);
}

/* Every bad input, and a fragment its message must hold (the field path first). */
static const struct {
    const char *json;
    const char *want;
} k_bad[] = {
    {"[]", "mount: must be an object"},
    {"{}", "mount.dirs: required"},
    {"{\"dirs\": []}", "mount.dirs: must be an object"},
    {"{\"dirs\": {}}", "mount.dirs: must map at least one"},
    {"{\"dirs\": {\"/data\": \"$A\"}, \"bogus\": 1}", "mount.bogus: unknown field"},
    {"{\"dirs\": {\"data\": \"$A\"}}", "mount.dirs[\"data\"]: virtual path must be absolute"},
    {"{\"dirs\": {\"/\": \"$A\"}}", "mount.dirs[\"/\"]: the root '/' cannot be a mount point"},
    {"{\"dirs\": {\"/data/\": \"$A\"}}", "mount.dirs[\"/data/\"]: virtual path must be normalized"},
    {"{\"dirs\": {\"/a//b\": \"$A\"}}", "mount.dirs[\"/a//b\"]: virtual path must be normalized"},
    {"{\"dirs\": {\"/a/./b\": \"$A\"}}", "mount.dirs[\"/a/./b\"]: virtual path must be normalized"},
    {"{\"dirs\": {\"/a/../etc\": \"$A\"}}", "mount.dirs[\"/a/../etc\"]: virtual path must be normalized"},
    {"{\"dirs\": {\"/etc\": \"$A\"}}", "mount.dirs[\"/etc\"]: /etc is a system directory"},
    {"{\"dirs\": {\"/usr/local/x\": \"$A\"}}", "mount.dirs[\"/usr/local/x\"]: /usr is a system directory"},
    {"{\"dirs\": {\"/proc\": \"$A\"}}", "/proc is a system directory"},
    {"{\"dirs\": {\"/dev/shm\": \"$A\"}}", "/dev is a system directory"},
    {"{\"dirs\": {\"/sys\": \"$A\"}}", "/sys is a system directory"},
    {"{\"dirs\": {\"/bin\": \"$A\"}}", "/bin is a system directory"},
    {"{\"dirs\": {\"/lib\": \"$A\"}}", "/lib is a system directory"},
    {"{\"dirs\": {\"/lib64\": \"$A\"}}", "/lib64 is a system directory"},
    {"{\"dirs\": {\"/sbin\": \"$A\"}}", "/sbin is a system directory"},
    {"{\"dirs\": {\"/.fnbox/h\": \"$A\"}}", "/.fnbox is a system directory"},
    {"{\"dirs\": {\"/data\": \"$A\", \"/data/sub\": \"$B\"}}", "mount.dirs[\"/data/sub\"]: nested inside the mount /data"},
    {"{\"dirs\": {\"/a\": \"$A\", \"/a-b\": \"$B\", \"/a/c\": \"$B\"}}", "mount.dirs[\"/a/c\"]: nested inside the mount /a"},
    {"{\"dirs\": {\"/data\": 1}}", "mount.dirs[\"/data\"]: host directory must be a string"},
    {"{\"dirs\": {\"/data\": \"\"}}", "mount.dirs[\"/data\"]: host directory must not be empty"},
    {"{\"dirs\": {\"/data\": \"./nope-does-not-exist\"}}",
     "mount.dirs[\"/data\"]: host directory ./nope-does-not-exist does not exist"},
    {"{\"dirs\": {\"/data\": \"$D/f\"}}", "mount.dirs[\"/data\"]: host path"},
    {"{\"dirs\": {\"/data\": \"$A\"}, \"permissions\": []}", "mount.permissions: must be an object"},
    {"{\"dirs\": {\"/data\": \"$A\"}, \"permissions\": {\"bogus\": 1}}", "mount.permissions"},
    {"{\"dirs\": {\"/data\": \"$A\"}, \"permissions\": {\"rules\": [{\"pattern\": \"x\", \"allow\": [\"write\"]}]}}",
     "mount.permissions.rules[0].allow[0]"},
    {"{\"dirs\": {\"/data\": \"$A\"}, \"loading\": 1}", "mount.loading: must be an object"},
    {"{\"dirs\": {\"/data\": \"$A\"}, \"loading\": {\"mode\": \"fast\"}}", "mount.loading.mode: must be one of"},
    {"{\"dirs\": {\"/data\": \"$A\"}, \"loading\": {\"mode\": 1}}", "mount.loading.mode: must be one of"},
    {"{\"dirs\": {\"/data\": \"$A\"}, \"loading\": {\"x\": 1}}", "mount.loading.x: unknown field"},
    {"{\"dirs\": {\"/data\": \"$A\"}, \"loading\": {\"mode\": \"explicit\"}}", "mount.loading.include: required"},
    {"{\"dirs\": {\"/data\": \"$A\"}, \"loading\": {\"include\": [\"*\"]}}", "mount.loading.include: only used"},
    {"{\"dirs\": {\"/data\": \"$A\"}, \"loading\": {\"mode\": \"explicit\", \"include\": \"*\"}}",
     "mount.loading.include: must be an array"},
    {"{\"dirs\": {\"/data\": \"$A\"}, \"loading\": {\"mode\": \"explicit\", \"include\": [1]}}",
     "mount.loading.include[0]: must be a glob pattern string"},
    {"{\"dirs\": {\"/data\": \"$A\"}, \"loading\": {\"mode\": \"explicit\", \"include\": [\"\"]}}",
     "mount.loading.include[0]: must be a non-empty"},
    {"{\"dirs\": {\"/data\": \"$A\"}, \"loading\": {\"maxFileSize\": -1}}", "mount.loading.maxFileSize: must be a positive"},
    {"{\"dirs\": {\"/data\": \"$A\"}, \"loading\": {\"maxFileSize\": 0}}", "mount.loading.maxFileSize: must be a positive"},
    {"{\"dirs\": {\"/data\": \"$A\"}, \"loading\": {\"maxFileSize\": 1.5}}", "mount.loading.maxFileSize: must be a positive"},
    {"{\"dirs\": {\"/data\": \"$A\"}, \"loading\": {\"maxTotalSize\": \"1\"}}", "mount.loading.maxTotalSize: must be a positive"},
    {"{\"dirs\": {\"/data\": \"$A\"}, \"sync\": []}", "mount.sync: must be an object"},
    {"{\"dirs\": {\"/data\": \"$A\"}, \"sync\": {\"mode\": \"later\"}}", "mount.sync.mode: must be one of \"batch\", \"manual\""},
    {"{\"dirs\": {\"/data\": \"$A\"}, \"sync\": {\"onError\": \"ignore\"}}", "mount.sync.onError: must be one of"},
    {"{\"dirs\": {\"/data\": \"$A\"}, \"sync\": {\"onFunctionError\": true}}", "mount.sync.onFunctionError: must be one of"},
    {"{\"dirs\": {\"/data\": \"$A\"}, \"sync\": {\"x\": 1}}", "mount.sync.x: unknown field"},
    {"{\"dirs\": {\"/data\": \"$A\"}, \"security\": 1}", "mount.security: must be an object"},
    {"{\"dirs\": {\"/data\": \"$A\"}, \"security\": {\"followSymlinks\": \"yes\"}}",
     "mount.security.followSymlinks: must be true, false or \"restricted\""},
    {"{\"dirs\": {\"/data\": \"$A\"}, \"security\": {\"followSymlinks\": 1}}", "mount.security.followSymlinks"},
    {"{\"dirs\": {\"/data\": \"$A\"}, \"security\": {\"x\": 1}}", "mount.security.x: unknown field"},
    {"{\"dirs\": {\"/data\": \"$A\"}, \"onPermissionDenied\": \"warn\"}", "mount.onPermissionDenied: must be one of"},
};

static void test_bad_inputs(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof k_bad / sizeof *k_bad; i++) {
        json_t *j = load(k_bad[i].json);
        fb_mount_config m;
        fb_error err = {0};
        int rc = fb_mount_config_parse(j, "mount", &m, &err);
        if (rc != -1)
            fail_msg("case %zu accepted: %s", i, k_bad[i].json);
        if (strcmp(fb_error_type(&err), "InvalidRequest") != 0 || !strstr(err.message, k_bad[i].want))
            fail_msg("case %zu: %s: message \"%s\" (type %s) lacks \"%s\"", i, k_bad[i].json, err.message, fb_error_type(&err),
                     k_bad[i].want);
        assert_int_equal(m.ndirs, 0); /* freed and zeroed */
        assert_null(m.rules);
        json_decref(j);
    }
}

static void test_field_prefix(void **state)
{
    (void)state;
    json_t *j = load("{\"dirs\": {\"/data\": \"./nope\"}}");
    fb_mount_config m;
    fb_error err = {0};
    assert_int_equal(fb_mount_config_parse(j, "options.mount", &m, &err), -1);
    assert_string_equal(err.message, "options.mount.dirs[\"/data\"]: host directory ./nope does not exist");
    json_decref(j);
}

static void test_find(void **state)
{
    (void)state;
    json_t *j = load("{\"dirs\": {\"/data\": \"$A\", \"/database\": \"$B\", \"/w/x\": \"$D\"}}");
    fb_mount_config m;
    fb_error err = {0};
    assert_int_equal(fb_mount_config_parse(j, "mount", &m, &err), 0);
    static const struct {
        const char *vpath, *root, *rel;
    } cases[] = {
        {"/data", "/data", ""},
        {"/data/a.txt", "/data", "a.txt"},
        {"/data/x/y", "/data", "x/y"},
        {"/database", "/database", ""},
        {"/database/t", "/database", "t"},
        {"/data2/t", NULL, NULL},
        {"/dat", NULL, NULL},
        {"/w", NULL, NULL},
        {"/w/x/1", "/w/x", "1"},
        {"/w/xy", NULL, NULL},
        {"/", NULL, NULL},
        {"/tmp/a", NULL, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *rel = "unset";
        const fb_mount_dir *d = fb_mount_find(&m, cases[i].vpath, &rel);
        if (!cases[i].root) {
            if (d)
                fail_msg("%s matched %s", cases[i].vpath, d->virtual_path);
            continue;
        }
        if (!d)
            fail_msg("%s matched nothing", cases[i].vpath);
        assert_string_equal(d->virtual_path, cases[i].root);
        assert_string_equal(rel, cases[i].rel);
    }
    fb_mount_config_free(&m);
    json_decref(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),        cmocka_unit_test(test_every_field),
        cmocka_unit_test(test_enum_values),     cmocka_unit_test(test_relative_host_path),
        cmocka_unit_test(test_bad_inputs),      cmocka_unit_test(test_field_prefix),
        cmocka_unit_test(test_find),            cmocka_unit_test(test_absent_permissions_allow_all),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
