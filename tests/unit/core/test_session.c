/* Sessions through the public C API, on the real kernel with real interpreters: commands and code share
 * the session's files, the file operations resolve inside the sandbox as its user (planted symlinks and
 * FIFOs included), and bad input is refused naming the field. */
#include <jansson.h>
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

#include "fnbox.h"

static fnbox_session *open_session(const char *options)
{
    fnbox_session *s = NULL;
    char *error = NULL;
    int rc = fnbox_session_open(options, strlen(options), &s, &error, NULL);
    if (rc != FNBOX_OK)
        fprintf(stderr, "open: %s\n", error ? error : "(no error)");
    assert_int_equal(rc, FNBOX_OK);
    fnbox_free(error);
    return s;
}

/* Runs request; returns the parsed result (caller decrefs). */
static json_t *exec(fnbox_session *s, const char *request, int want_rc)
{
    char *result = NULL;
    size_t len = 0;
    int rc = fnbox_session_exec(s, request, strlen(request), NULL, &result, &len);
    if (rc != want_rc)
        fprintf(stderr, "exec %s: %d %s\n", request, rc, result ? result : "");
    assert_int_equal(rc, want_rc);
    json_t *doc = json_loadb(result, len, 0, NULL);
    assert_non_null(doc);
    fnbox_free(result);
    return doc;
}

static const char *str(json_t *doc, const char *key)
{
    json_t *v = json_object_get(doc, key);
    return json_is_string(v) ? json_string_value(v) : "";
}

static long long num(json_t *doc, const char *key)
{
    return json_integer_value(json_object_get(doc, key));
}

static void test_commands_and_files_share_the_session(void **state)
{
    (void)state;
    fnbox_session *s = open_session("{\"files\": {\"seed.txt\": \"from options\"}}");
    json_t *r = exec(s, "{\"command\": \"cat seed.txt; echo made > made.txt; pwd\"}", FNBOX_OK);
    assert_string_equal(str(r, "stdout"), "from options/workspace\n");
    assert_string_equal(str(r, "status"), "success");
    json_decref(r);
    char *data = NULL;
    size_t len = 0;
    assert_int_equal(fnbox_session_read(s, "made.txt", 8, &data, &len, NULL, NULL), FNBOX_OK);
    assert_int_equal(len, 5);
    assert_memory_equal(data, "made\n", 5);
    fnbox_free(data);
    const char bin[] = {'\0', '\xff', '\x80', 'a', '\n'};
    assert_int_equal(fnbox_session_write(s, "/workspace/deep/er/bin.dat", 26, bin, sizeof bin, NULL, NULL), FNBOX_OK);
    r = exec(s, "{\"command\": \"od -An -tx1 deep/er/bin.dat | tr -d ' \\\\n'\"}", FNBOX_OK);
    assert_string_equal(str(r, "stdout"), "00ff80610a");
    json_decref(r);
    char *list = NULL;
    assert_int_equal(fnbox_session_list(s, "/workspace", 10, &list, &len, NULL, NULL), FNBOX_OK);
    assert_string_equal(list, "[{\"name\":\"deep\",\"isDir\":true,\"size\":0},{\"name\":\"made.txt\",\"isDir\":false,"
                              "\"size\":5},{\"name\":\"seed.txt\",\"isDir\":false,\"size\":12}]");
    fnbox_free(list);
    assert_int_equal(fnbox_session_remove(s, "made.txt", 8, NULL, NULL), FNBOX_OK);
    char *error = NULL;
    assert_int_equal(fnbox_session_remove(s, "made.txt", 8, &error, NULL), FNBOX_NOT_FOUND);
    assert_non_null(strstr(error, "\"NotFound\""));
    fnbox_free(error);
    assert_int_equal(fnbox_session_read(s, "nope", 4, &data, &len, NULL, NULL), FNBOX_NOT_FOUND);
    assert_int_equal(fnbox_session_list(s, "seed.txt", 8, &list, &len, NULL, NULL), FNBOX_NOT_FOUND);
    fnbox_session_close(s);
}

static void test_code_exit_codes_and_cwd(void **state)
{
    (void)state;
    fnbox_session *s = open_session("{}");
    json_t *r = exec(s, "{\"code\": \"import os\\nprint(os.getcwd(), 6*7)\", \"language\": \"python\", \"cwd\": \"/tmp\"}",
                     FNBOX_OK);
    assert_string_equal(str(r, "stdout"), "/tmp 42\n");
    json_decref(r);
    r = exec(s, "{\"code\": \"x\", \"language\": \"cobol\"}", FNBOX_OK);
    assert_int_equal(num(r, "exitCode"), 127);
    json_decref(r);
    r = exec(s, "{\"command\": \"no-such-command-here\"}", FNBOX_OK);
    assert_int_equal(num(r, "exitCode"), 127);
    json_decref(r);
    r = exec(s, "{\"command\": \"kill -9 $$\"}", FNBOX_OK);
    assert_int_equal(num(r, "exitCode"), 137);
    json_decref(r);
    r = exec(s, "{\"command\": \"echo partial; sleep 20\", \"timeout\": 0.5}", FNBOX_OK);
    assert_int_equal(num(r, "exitCode"), 124);
    assert_string_equal(str(r, "status"), "timeout");
    assert_string_equal(str(r, "stdout"), "partial\n");
    json_decref(r);
    r = exec(s, "{\"command\": \"pwd\", \"cwd\": \"missing-dir/below\"}", FNBOX_OK); /* made, as exec makes it */
    assert_string_equal(str(r, "stdout"), "/workspace/missing-dir/below\n");
    json_decref(r);
    r = exec(s, "{\"command\": \"pwd\", \"cwd\": \"/usr/fnbox-no-dir\"}", FNBOX_INVALID_REQUEST); /* read-only */
    assert_non_null(strstr(json_string_value(json_object_get(json_object_get(r, "error"), "message")), "cwd"));
    json_decref(r);
    r = exec(s, "{\"command\": \"true\", \"files\": {}}", FNBOX_INVALID_REQUEST);
    json_decref(r);
    fnbox_session_close(s);
}

/* The file operations are fnbox's, maybe as host root: what the sandbox plants must not lead them to a
 * host file, and they read nothing the sandbox's own user could not. */
static void test_planted_paths_stay_inside(void **state)
{
    (void)state;
    fnbox_session *s = open_session("{}");
    json_t *r = exec(s, "{\"command\": \"ln -s / root-link; ln -s ../../../../etc/hostname up-link; mkfifo fifo; "
                        "ln -s /proc/1/root magic\"}",
                     FNBOX_OK);
    assert_int_equal(num(r, "exitCode"), 0);
    json_decref(r);
    /* Writing through a symlink to / lands in the sandbox's own root (a read-only system path there). */
    char *error = NULL;
    int rc = fnbox_session_write(s, "root-link/etc/fnbox-planted", 27, "x", 1, &error, NULL);
    assert_int_equal(rc, FNBOX_DENIED);
    fnbox_free(error);
    assert_int_equal(access("/etc/fnbox-planted", F_OK), -1);
    rc = fnbox_session_write(s, "root-link/tmp/through-link", 26, "y", 1, NULL, NULL);
    assert_int_equal(rc, FNBOX_OK);
    assert_int_equal(access("/tmp/through-link", F_OK), -1); /* the sandbox's /tmp, not the host's */
    r = exec(s, "{\"command\": \"cat /tmp/through-link\"}", FNBOX_OK);
    assert_string_equal(str(r, "stdout"), "y");
    json_decref(r);
    /* A FIFO would block a reader forever: refused at once. */
    char *data = NULL;
    size_t len = 0;
    assert_int_equal(fnbox_session_read(s, "fifo", 4, &data, &len, NULL, NULL), FNBOX_INVALID_REQUEST);
    /* /proc's magic links are refused, not followed into another root. */
    assert_int_not_equal(fnbox_session_read(s, "magic/etc/hostname", 18, &data, &len, NULL, NULL), FNBOX_OK);
    /* Nothing the sandbox's user cannot read, even when fnbox is root (whose capabilities would). */
    r = exec(s, "{\"command\": \"echo secret > locked && chmod 000 locked\"}", FNBOX_OK);
    assert_int_equal(num(r, "exitCode"), 0);
    json_decref(r);
    assert_int_equal(fnbox_session_read(s, "locked", 6, &data, &len, NULL, NULL), FNBOX_DENIED);
    fnbox_session_close(s);
}

static void test_function_call_in_the_session(void **state)
{
    (void)state;
    fnbox_session *s = open_session("{\"files\": {\"n.txt\": \"41\"}}");
    const char *req = "{\"language\": \"python\", \"code\": \"def f(x):\\n    open('m.txt', 'w').write('made')\\n"
                      "    return int(open('n.txt').read()) + x\\n\", \"args\": [1]}";
    char *result = NULL;
    size_t len = 0;
    assert_int_equal(fnbox_session_call(s, req, strlen(req), NULL, &result, &len), FNBOX_OK);
    json_t *r = json_loadb(result, len, 0, NULL);
    fnbox_free(result);
    assert_int_equal(json_integer_value(json_object_get(r, "result")), 42);
    assert_null(json_object_get(r, "files"));
    json_decref(r);
    char *data = NULL;
    assert_int_equal(fnbox_session_read(s, "m.txt", 5, &data, &len, NULL, NULL), FNBOX_OK);
    assert_string_equal(data, "made");
    fnbox_free(data);
    const char *owned = "{\"language\": \"python\", \"code\": \"def f():\\n    return 1\\n\", \"limits\": {}}";
    assert_int_equal(fnbox_session_call(s, owned, strlen(owned), NULL, &result, &len), FNBOX_INVALID_REQUEST);
    assert_non_null(strstr(result, "limits"));
    fnbox_free(result);
    fnbox_session_close(s);
}

static void test_bad_options_and_paths(void **state)
{
    (void)state;
    fnbox_session *s = NULL;
    char *error = NULL;
    const char *bad[] = {"{\"idleTimeout\": -1}", "{\"workdir\": \"/usr\"}", "{\"bogus\": 1}", "[1]", "{",
                         "{\"limits\": {\"memoryBytes\": \"lots\"}}", "{\"mount\": {\"dirs\": []}}"};
    const char *field[] = {"idleTimeout", "workdir", "bogus", "options", "options", "limits.memoryBytes", "mount"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_equal(fnbox_session_open(bad[i], strlen(bad[i]), &s, &error, NULL), FNBOX_INVALID_REQUEST);
        assert_null(s);
        assert_non_null(strstr(error, field[i]));
        fnbox_free(error);
    }
    s = open_session("");
    assert_int_equal(fnbox_session_write(s, "a\0b", 3, "x", 1, &error, NULL), FNBOX_INVALID_REQUEST);
    assert_non_null(strstr(error, "path"));
    fnbox_free(error);
    assert_int_equal(fnbox_session_write(s, "", 0, "x", 1, NULL, NULL), FNBOX_INVALID_REQUEST);
    assert_int_equal(fnbox_session_write(s, "/", 1, "x", 1, NULL, NULL), FNBOX_INVALID_REQUEST);
    assert_int_equal(fnbox_session_remove(s, "/", 1, NULL, NULL), FNBOX_INVALID_REQUEST);
    char *info = NULL;
    assert_int_equal(fnbox_session_info(s, &info, NULL), 0);
    assert_non_null(strstr(info, "\"expiresAt\""));
    fnbox_free(info);
    assert_int_equal(fnbox_session_expired(s), 0);
    fnbox_session_close(s);
}

/* A mount's changes reach the host only through fnbox_session_sync, and what it wrote is no longer a change. */
static void test_mount_synced_only_when_asked(void **state)
{
    (void)state;
    char dir[] = "/tmp/fnbox-session-mount.XXXXXX";
    assert_non_null(mkdtemp(dir));
    assert_int_equal(chmod(dir, 0777), 0);
    char path[sizeof dir + 16];
    snprintf(path, sizeof path, "%s/a.txt", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("host\n", f);
    fclose(f);
    assert_int_equal(chmod(path, 0666), 0);
    char options[512];
    snprintf(options, sizeof options,
             "{\"mount\": {\"dirs\": {\"/data\": \"%s\"}, \"permissions\": {\"rules\": [{\"pattern\": \"**\", "
             "\"allow\": [\"read\", \"list\", \"create\", \"modify\", \"delete\"]}]}}}",
             dir);
    fnbox_session *s = open_session(options);
    json_t *r = exec(s, "{\"command\": \"cat /data/a.txt; echo sandbox > /data/a.txt; echo new > /data/b.txt\"}",
                     FNBOX_OK);
    assert_string_equal(str(r, "stdout"), "host\n");
    json_decref(r);
    char buf[64] = "";
    f = fopen(path, "r");
    assert_non_null(f);
    assert_non_null(fgets(buf, sizeof buf, f));
    fclose(f);
    assert_string_equal(buf, "host\n"); /* nothing before a sync */
    char *report = NULL, *error = NULL;
    size_t len = 0;
    assert_int_equal(fnbox_session_sync(s, "{\"onError\": \"bogus\"}", 20, &report, &len, &error, NULL),
                     FNBOX_INVALID_REQUEST);
    assert_non_null(strstr(error, "onError"));
    fnbox_free(error);
    assert_int_equal(fnbox_session_sync(s, NULL, 0, &report, &len, NULL, NULL), FNBOX_OK);
    json_t *rep = json_loadb(report, len, 0, NULL);
    fnbox_free(report);
    assert_true(json_is_true(json_object_get(rep, "success")));
    assert_int_equal(json_array_size(json_object_get(rep, "synced")), 2);
    json_decref(rep);
    f = fopen(path, "r");
    assert_non_null(f);
    assert_non_null(fgets(buf, sizeof buf, f));
    fclose(f);
    assert_string_equal(buf, "sandbox\n");
    assert_int_equal(fnbox_session_sync(s, "{}", 2, &report, &len, NULL, NULL), FNBOX_OK);
    rep = json_loadb(report, len, 0, NULL);
    fnbox_free(report);
    assert_int_equal(json_array_size(json_object_get(rep, "synced")), 0);
    json_decref(rep);
    fnbox_session_close(s);
    snprintf(path, sizeof path, "%s/b.txt", dir);
    assert_int_equal(unlink(path), 0);
    snprintf(path, sizeof path, "%s/a.txt", dir);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(rmdir(dir), 0);
    s = open_session("");
    assert_int_equal(fnbox_session_sync(s, "", 0, &report, &len, &error, NULL), FNBOX_INVALID_REQUEST);
    assert_non_null(strstr(error, "no mount"));
    fnbox_free(error);
    fnbox_session_close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_commands_and_files_share_the_session),
        cmocka_unit_test(test_code_exit_codes_and_cwd),
        cmocka_unit_test(test_planted_paths_stay_inside),
        cmocka_unit_test(test_function_call_in_the_session),
        cmocka_unit_test(test_bad_options_and_paths),
        cmocka_unit_test(test_mount_synced_only_when_asked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
