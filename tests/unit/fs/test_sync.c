/* fs/sync.c on real temp directories: each change kind, atomicity (no temporary or backup file is ever
 * left), rollback restoring originals byte for byte (deletions and directories included), continue and
 * abort, the rules' final check, and the escapes: `..`, `/data` vs `/database`, a host symlink planted in
 * place of a directory (outside stays untouched), hostile names. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
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

#include "fs/change.h"
#include "request/mount.h"
#include "fs/resolve.h"
#include "core/sync_report.h"
#include "fs/sync.h"

static char g_top[64];       /* per test: a fresh temp dir holding data/, database/, outside/ */
static char g_data[128], g_database[128], g_outside[128];

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(p);
}

static int setup(void **state)
{
    (void)state;
    snprintf(g_top, sizeof g_top, "/tmp/fnbox-sync-test.XXXXXX");
    if (!mkdtemp(g_top))
        return -1;
    snprintf(g_data, sizeof g_data, "%s/data", g_top);
    snprintf(g_database, sizeof g_database, "%s/database", g_top);
    snprintf(g_outside, sizeof g_outside, "%s/outside", g_top);
    umask(022);
    return mkdir(g_data, 0755) || mkdir(g_database, 0755) || mkdir(g_outside, 0755) ? -1 : 0;
}

static int teardown(void **state)
{
    (void)state;
    return nftw(g_top, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---- helpers ---- */

static char *hp(const char *base, const char *rel)
{
    static char buf[4][8192];
    static int k;
    char *b = buf[k++ % 4];
    snprintf(b, sizeof buf[0], "%s/%s", base, rel);
    return b;
}

static void put_file(const char *path, const void *data, size_t len, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, data, len), (ssize_t)len);
    assert_int_equal(fchmod(fd, mode), 0);
    close(fd);
}

static void assert_file(const char *path, const void *data, size_t len)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        fail_msg("%s: %s", path, strerror(errno));
    char buf[8192];
    ssize_t n = read(fd, buf, sizeof buf);
    close(fd);
    if (n != (ssize_t)len || memcmp(buf, data, len) != 0)
        fail_msg("%s: content differs (%zd bytes, want %zu)", path, n, len);
}

static bool exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

static int g_leftovers;
static int count_ours(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag;
    if (strncmp(p + ftw->base, ".fnbox-sync-", 12) == 0) {
        fprintf(stderr, "left behind: %s\n", p);
        g_leftovers++;
    }
    return 0;
}

/* No temporary or backup file anywhere under the test dir. */
static void assert_no_leftovers(void)
{
    g_leftovers = 0;
    nftw(g_top, count_ours, 16, FTW_PHYS);
    assert_int_equal(g_leftovers, 0);
}

static size_t count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    size_t n = 0;
    struct dirent *de;
    while ((de = readdir(d)))
        n += strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
    closedir(d);
    return n;
}

/* A mount of /data -> g_data (and /database -> g_database when both), with the given extra JSON fields. */
static void mount_cfg(fb_mount_config *m, bool both, const char *extra)
{
    char text[4096];
    snprintf(text, sizeof text, "{\"dirs\": {\"/data\": \"%s\"%s%s%s}%s%s}", g_data, both ? ", \"/database\": \"" : "",
             both ? g_database : "", both ? "\"" : "", extra ? ", " : "", extra ? extra : "");
    json_error_t jerr;
    json_t *j = json_loads(text, 0, &jerr);
    if (!j)
        fail_msg("bad test JSON: %s", text);
    fb_error err = {0};
    if (fb_mount_config_parse(j, "mount", m, &err) != 0)
        fail_msg("mount refused: %s", err.message);
    json_decref(j);
}

#define ALLOW_ALL "\"permissions\": {\"default\": {\"create\": true, \"modify\": true, \"delete\": true}}"

static void add(fb_change_list *l, fb_change_kind kind, fb_file_type type, const char *path, const char *content)
{
    unsigned char *c = NULL;
    size_t n = 0;
    if (content) {
        n = strlen(content);
        c = malloc(n + 1);
        assert_non_null(c);
        memcpy(c, content, n + 1);
    }
    fb_error err = {0};
    assert_int_equal(fb_change_add(l, kind, type, path, n, 0, c, n, content != NULL, &err), 0);
}

#define F FB_FILE_REGULAR
#define DIRT FB_FILE_DIRECTORY
#define LNK FB_FILE_SYMLINK
#define CR FB_CHANGE_CREATED
#define MO FB_CHANGE_MODIFIED
#define DE FB_CHANGE_DELETED

static void run(const fb_mount_config *m, const fb_change_list *l, fb_sync_report *rep)
{
    fb_error err = {0};
    if (fb_sync_apply(m, l, rep, &err) != 0)
        fail_msg("sync did not run: %s", err.message);
}

static void assert_state(const fb_sync_report *rep, size_t i, fb_sync_state want)
{
    if (rep->items[i].state != want)
        fail_msg("item %zu (%s): state %s, want %s; error: %s; reason: %s", i, rep->items[i].path,
                 fb_sync_state_name(rep->items[i].state), fb_sync_state_name(want),
                 rep->items[i].error ? rep->items[i].error : "-", rep->items[i].reason ? rep->items[i].reason : "-");
}

static void assert_error_has(const fb_sync_report *rep, size_t i, const char *frag)
{
    const char *e = rep->items[i].error ? rep->items[i].error : rep->items[i].reason;
    if (!e || !strstr(e, frag))
        fail_msg("item %zu (%s): \"%s\" lacks \"%s\"", i, rep->items[i].path, e ? e : "(none)", frag);
}

/* ---- the tests ---- */

static void test_each_kind(void **state)
{
    (void)state;
    fb_mount_config m;
    mount_cfg(&m, false, ALLOW_ALL);
    put_file(hp(g_data, "mod.txt"), "old", 3, 0640);
    put_file(hp(g_data, "del.txt"), "bye", 3, 0644);
    assert_int_equal(mkdir(hp(g_data, "olddir"), 0755), 0);
    put_file(hp(g_data, "olddir/inner"), "x", 1, 0644);
    fb_change_list l = {0};
    /* parents listed after children and vice versa: the order of application is sync's business */
    add(&l, DE, DIRT, "/data/olddir", NULL);
    add(&l, DE, F, "/data/olddir/inner", NULL);
    add(&l, CR, F, "/data/new/deep/a.txt", "hello\n");
    add(&l, CR, DIRT, "/data/new", NULL);
    add(&l, CR, DIRT, "/data/emptydir", NULL);
    add(&l, MO, F, "/data/mod.txt", "new content");
    add(&l, DE, F, "/data/del.txt", NULL);
    add(&l, CR, F, "/data/empty.txt", "");
    fb_sync_report rep;
    run(&m, &l, &rep);
    for (size_t i = 0; i < l.n; i++)
        assert_state(&rep, i, FB_SYNC_ITEM_SYNCED);
    assert_int_equal(rep.synced, l.n);
    assert_int_equal(rep.failed, 0);
    assert_false(rep.rolled_back);
    assert_false(exists(hp(g_data, "olddir")));
    assert_false(exists(hp(g_data, "del.txt")));
    assert_file(hp(g_data, "new/deep/a.txt"), "hello\n", 6);
    assert_file(hp(g_data, "mod.txt"), "new content", 11);
    assert_file(hp(g_data, "empty.txt"), "", 0);
    struct stat st;
    assert_int_equal(stat(hp(g_data, "emptydir"), &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    /* a modified file without a mode keeps the host file's mode */
    assert_int_equal(stat(hp(g_data, "mod.txt"), &st), 0);
    assert_int_equal(st.st_mode & 07777, 0640);
    assert_string_equal(rep.items[5].operation, "modify");
    assert_string_equal(rep.items[2].operation, "create");
    assert_string_equal(rep.items[6].operation, "delete");
    assert_no_leftovers();
    fb_sync_report_free(&rep);
    fb_change_list_free(&l);
    fb_mount_config_free(&m);
}

static void test_modes(void **state)
{
    (void)state;
    fb_mount_config m;
    mount_cfg(&m, false, ALLOW_ALL);
    fb_change_list l = {0};
    add(&l, CR, F, "/data/a", "a");
    add(&l, CR, F, "/data/suid", "b");
    add(&l, CR, DIRT, "/data/d", NULL);
    l.v[0].mode = 0600;
    l.v[1].mode = 04755; /* setuid never reaches the host */
    l.v[2].mode = 0700;
    fb_sync_report rep;
    run(&m, &l, &rep);
    struct stat st;
    assert_int_equal(stat(hp(g_data, "a"), &st), 0);
    assert_int_equal(st.st_mode & 07777, 0600);
    assert_int_equal(stat(hp(g_data, "suid"), &st), 0);
    assert_int_equal(st.st_mode & 07777, 0755);
    assert_int_equal(stat(hp(g_data, "d"), &st), 0);
    assert_int_equal(st.st_mode & 07777, 0700);
    fb_sync_report_free(&rep);
    fb_change_list_free(&l);
    fb_mount_config_free(&m);
}

static void test_binary_content(void **state)
{
    (void)state;
    fb_mount_config m;
    mount_cfg(&m, false, ALLOW_ALL);
    unsigned char bin[256];
    for (int i = 0; i < 256; i++)
        bin[i] = (unsigned char)(255 - i);
    unsigned char *c = malloc(sizeof bin);
    assert_non_null(c);
    memcpy(c, bin, sizeof bin);
    fb_change_list l = {0};
    fb_error err = {0};
    assert_int_equal(fb_change_add(&l, CR, F, "/data/bin", sizeof bin, 0644, c, sizeof bin, true, &err), 0);
    fb_sync_report rep;
    run(&m, &l, &rep);
    assert_state(&rep, 0, FB_SYNC_ITEM_SYNCED);
    assert_file(hp(g_data, "bin"), bin, sizeof bin);
    fb_sync_report_free(&rep);
    fb_change_list_free(&l);
    fb_mount_config_free(&m);
}

/* The failing change: a file under a path whose "directory" is a regular file on the host. */
static void add_failing(fb_change_list *l)
{
    put_file(hp(g_data, "blocker"), "i am a file", 11, 0644);
    add(l, CR, F, "/data/blocker/a/b/c/x.txt", "never"); /* the deepest: applied last */
}

static void test_rollback_restores(void **state)
{
    (void)state;
    fb_mount_config m;
    mount_cfg(&m, false, ALLOW_ALL);
    static const unsigned char orig_a[] = {0, 1, 2, 'a', 0xff, '\n', 0};
    put_file(hp(g_data, "a.bin"), orig_a, sizeof orig_a, 0600);
    put_file(hp(g_data, "b.txt"), "original b", 10, 0644);
    assert_int_equal(mkdir(hp(g_data, "dir"), 0750), 0);
    put_file(hp(g_data, "dir/x"), "xx", 2, 0644);
    put_file(hp(g_data, "dir/y"), "yy", 2, 0644);
    fb_change_list l = {0};
    add(&l, MO, F, "/data/a.bin", "replaced");
    add(&l, DE, F, "/data/b.txt", NULL);
    add(&l, CR, F, "/data/c.txt", "created");
    add(&l, CR, F, "/data/n1/n2/deep.txt", "deep");
    add(&l, DE, F, "/data/dir/x", NULL);
    add(&l, DE, F, "/data/dir/y", NULL);
    add(&l, DE, DIRT, "/data/dir", NULL);
    add(&l, CR, DIRT, "/data/newdir", NULL);
    add_failing(&l);
    fb_sync_report rep;
    run(&m, &l, &rep);
    assert_true(rep.rolled_back);
    assert_false(rep.rollback_failed);
    assert_int_equal(rep.failed, 1);
    assert_int_equal(rep.synced, 0);
    assert_state(&rep, 8, FB_SYNC_ITEM_FAILED);
    for (size_t i = 0; i < 8; i++)
        assert_state(&rep, i, FB_SYNC_ITEM_ROLLED_BACK);
    /* byte for byte as before */
    assert_file(hp(g_data, "a.bin"), orig_a, sizeof orig_a);
    assert_file(hp(g_data, "b.txt"), "original b", 10);
    assert_file(hp(g_data, "dir/x"), "xx", 2);
    assert_file(hp(g_data, "dir/y"), "yy", 2);
    struct stat st;
    assert_int_equal(stat(hp(g_data, "a.bin"), &st), 0);
    assert_int_equal(st.st_mode & 07777, 0600);
    assert_int_equal(stat(hp(g_data, "dir"), &st), 0);
    assert_int_equal(st.st_mode & 07777, 0750);
    assert_false(exists(hp(g_data, "c.txt")));
    assert_false(exists(hp(g_data, "n1"))); /* created parents removed too */
    assert_false(exists(hp(g_data, "newdir")));
    assert_file(hp(g_data, "blocker"), "i am a file", 11);
    assert_int_equal(count_entries(g_data), 4); /* a.bin b.txt dir blocker */
    assert_no_leftovers();
    json_t *j = fb_sync_report_json(&rep);
    assert_non_null(j);
    assert_true(json_is_false(json_object_get(j, "success")));
    assert_true(json_is_true(json_object_get(j, "rolledBack")));
    assert_int_equal(json_array_size(json_object_get(j, "synced")), 0);
    assert_int_equal(json_array_size(json_object_get(j, "undone")), 8);
    assert_int_equal(json_array_size(json_object_get(j, "failed")), 1);
    json_decref(j);
    fb_sync_report_free(&rep);
    fb_change_list_free(&l);
    fb_mount_config_free(&m);
}

static void test_continue(void **state)
{
    (void)state;
    fb_mount_config m;
    mount_cfg(&m, false, ALLOW_ALL ", \"sync\": {\"onError\": \"continue\"}");
    put_file(hp(g_data, "m.txt"), "old", 3, 0644);
    put_file(hp(g_data, "exists.txt"), "keep me", 7, 0644);
    fb_change_list l = {0};
    add(&l, CR, F, "/data/one", "1");
    add(&l, CR, F, "/data/exists.txt", "conflict"); /* created, but the host has it: conflict */
    add(&l, MO, F, "/data/m.txt", "new");
    add(&l, DE, F, "/data/gone-already", NULL);
    fb_sync_report rep;
    run(&m, &l, &rep);
    assert_state(&rep, 0, FB_SYNC_ITEM_SYNCED);
    assert_state(&rep, 1, FB_SYNC_ITEM_FAILED);
    assert_error_has(&rep, 1, "already exists on the host");
    assert_state(&rep, 2, FB_SYNC_ITEM_SYNCED);
    assert_state(&rep, 3, FB_SYNC_ITEM_SYNCED); /* nothing to delete: done */
    assert_file(hp(g_data, "one"), "1", 1);
    assert_file(hp(g_data, "exists.txt"), "keep me", 7);
    assert_file(hp(g_data, "m.txt"), "new", 3);
    assert_false(rep.rolled_back);
    assert_int_equal(rep.synced, 3);
    assert_int_equal(rep.failed, 1);
    assert_no_leftovers();
    fb_sync_report_free(&rep);
    fb_change_list_free(&l);
    fb_mount_config_free(&m);
}

static void test_abort(void **state)
{
    (void)state;
    fb_mount_config m;
    mount_cfg(&m, false, ALLOW_ALL ", \"sync\": {\"onError\": \"abort\"}");
    put_file(hp(g_data, "exists.txt"), "keep me", 7, 0644);
    fb_change_list l = {0};
    add(&l, CR, F, "/data/one", "1");
    add(&l, CR, F, "/data/exists.txt", "conflict");
    add(&l, CR, F, "/data/three", "3");
    fb_sync_report rep;
    run(&m, &l, &rep);
    assert_state(&rep, 0, FB_SYNC_ITEM_SYNCED);
    assert_state(&rep, 1, FB_SYNC_ITEM_FAILED);
    assert_state(&rep, 2, FB_SYNC_ITEM_NOT_ATTEMPTED);
    assert_error_has(&rep, 2, "not attempted");
    assert_file(hp(g_data, "one"), "1", 1);
    assert_false(exists(hp(g_data, "three")));
    assert_int_equal(rep.not_attempted, 1);
    assert_no_leftovers();
    fb_sync_report_free(&rep);
    fb_change_list_free(&l);
    fb_mount_config_free(&m);
}

static void test_on_error_override(void **state)
{
    (void)state;
    fb_mount_config m;
    mount_cfg(&m, false, ALLOW_ALL); /* rollback by default ... */
    put_file(hp(g_data, "exists.txt"), "keep me", 7, 0644);
    fb_change_list l = {0};
    add(&l, CR, F, "/data/one", "1");
    add(&l, CR, F, "/data/exists.txt", "conflict");
    fb_sync_options opt = {.on_error = FB_ON_ERROR_CONTINUE}; /* ... overridden */
    fb_sync_report rep;
    fb_error err = {0};
    assert_int_equal(fb_sync_apply_ex(&m, &l, &opt, &rep, &err), 0);
    assert_int_equal(rep.on_error, FB_ON_ERROR_CONTINUE);
    assert_state(&rep, 0, FB_SYNC_ITEM_SYNCED);
    assert_true(exists(hp(g_data, "one")));
    fb_sync_report_free(&rep);
    fb_change_list_free(&l);
    fb_mount_config_free(&m);
}

static void test_rules_final_check(void **state)
{
    (void)state;
    fb_mount_config m;
    mount_cfg(&m, false,
              "\"permissions\": {\"rules\": [{\"pattern\": \"output/**\", \"allow\": [\"create\"]},"
              "                              {\"pattern\": \"edit.txt\", \"allow\": [\"modify\"]}]}");
    put_file(hp(g_data, "secret.txt"), "secret", 6, 0644);
    put_file(hp(g_data, "edit.txt"), "e", 1, 0644);
    fb_change_list l = {0};
    add(&l, CR, F, "/data/output/ok.txt", "ok");        /* allowed: create under output/ */
    add(&l, CR, F, "/data/elsewhere.txt", "no");         /* default: create denied */
    add(&l, MO, F, "/data/secret.txt", "overwritten");   /* default: modify denied */
    add(&l, DE, F, "/data/secret.txt", NULL);            /* default: delete denied */
    add(&l, MO, F, "/data/output/was-deleted.txt", "x"); /* modified but gone on the host: a create, allowed */
    add(&l, MO, F, "/data/edit.txt", "E");               /* modify allowed */
    add(&l, MO, F, "/data/gone.txt", "x");               /* modified, gone: a create, and create is denied */
    fb_sync_report rep;
    run(&m, &l, &rep);
    assert_state(&rep, 0, FB_SYNC_ITEM_SYNCED);
    assert_state(&rep, 1, FB_SYNC_ITEM_SKIPPED);
    assert_string_equal(rep.items[1].rule, "default");
    assert_error_has(&rep, 1, "permission denied: create");
    assert_state(&rep, 2, FB_SYNC_ITEM_SKIPPED);
    assert_error_has(&rep, 2, "permission denied: modify");
    assert_state(&rep, 3, FB_SYNC_ITEM_SKIPPED);
    assert_error_has(&rep, 3, "permission denied: delete");
    assert_state(&rep, 4, FB_SYNC_ITEM_SYNCED);
    assert_string_equal(rep.items[4].operation, "create");
    assert_state(&rep, 5, FB_SYNC_ITEM_SYNCED);
    assert_state(&rep, 6, FB_SYNC_ITEM_SKIPPED);
    assert_string_equal(rep.items[6].operation, "create");
    assert_false(rep.rolled_back); /* a refusal is not a failure */
    assert_file(hp(g_data, "secret.txt"), "secret", 6);
    assert_false(exists(hp(g_data, "elsewhere.txt")));
    assert_false(exists(hp(g_data, "gone.txt")));
    assert_file(hp(g_data, "output/ok.txt"), "ok", 2);
    assert_file(hp(g_data, "edit.txt"), "E", 1);
    /* the report counts the refusals, names each one's rule and operation, and says what was written */
    json_t *j = fb_sync_report_json(&rep);
    assert_non_null(j);
    assert_int_equal(json_integer_value(json_object_get(j, "deniedByPermissions")), 4);
    json_t *sk = json_array_get(json_object_get(j, "skipped"), 0);
    assert_string_equal(json_string_value(json_object_get(sk, "rule")), "default");
    assert_string_equal(json_string_value(json_object_get(sk, "operation")), "create");
    assert_non_null(strstr(json_string_value(json_object_get(sk, "reason")), "mount.permissions, rule default"));
    assert_string_equal(json_string_value(json_object_get(j, "message")),
                        "3 of 7 changes written to the host (the others are in skipped, failed or notAttempted, "
                        "each with why)");
    json_decref(j);
    fb_sync_report_free(&rep);
    fb_change_list_free(&l);
    fb_mount_config_free(&m);
}

/* Nothing written because every change was refused: the report says so in words, not only by an empty list. */
static void test_all_refused_says_why(void **state)
{
    (void)state;
    fb_mount_config m;
    mount_cfg(&m, false, "\"permissions\": {\"default\": {\"read\": true}}");
    fb_change_list l = {0};
    add(&l, CR, F, "/data/a.txt", "a");
    add(&l, CR, F, "/data/b.txt", "b");
    fb_sync_report rep;
    run(&m, &l, &rep);
    json_t *j = fb_sync_report_json(&rep);
    assert_non_null(j);
    assert_true(json_is_true(json_object_get(j, "success"))); /* a refusal is no failure (exit 0) */
    assert_int_equal(json_array_size(json_object_get(j, "synced")), 0);
    assert_int_equal(json_integer_value(json_object_get(j, "deniedByPermissions")), 2);
    assert_string_equal(json_string_value(json_object_get(j, "message")),
                        "nothing was written: the mount's permissions refused all 2 changes (each is in skipped "
                        "with the rule that decided)");
    assert_false(exists(hp(g_data, "a.txt")));
    json_decref(j);
    fb_sync_report_free(&rep);
    fb_change_list_free(&l);
    fb_mount_config_free(&m);
}

static void test_data_vs_database(void **state)
{
    (void)state;
    fb_mount_config m;
    mount_cfg(&m, false, ALLOW_ALL);
    fb_change_list l = {0};
    add(&l, CR, F, "/database/x.txt", "not mounted");
    add(&l, CR, F, "/data/x.txt", "mounted");
    add(&l, CR, F, "/tmp/scratch.txt", "scratch");
    fb_sync_report rep;
    run(&m, &l, &rep);
    assert_state(&rep, 0, FB_SYNC_ITEM_SKIPPED);
    assert_error_has(&rep, 0, "outside every mount");
    assert_state(&rep, 1, FB_SYNC_ITEM_SYNCED);
    assert_state(&rep, 2, FB_SYNC_ITEM_SKIPPED);
    assert_int_equal(count_entries(g_database), 0);
    assert_file(hp(g_data, "x.txt"), "mounted", 7);
    assert_false(exists(hp(g_data, "base/x.txt")));
    fb_sync_report_free(&rep);
    fb_change_list_free(&l);
    fb_mount_config_free(&m);

    /* both mounted: each path goes to its own host directory */
    mount_cfg(&m, true, ALLOW_ALL);
    fb_change_list l2 = {0};
    add(&l2, CR, F, "/database/y.txt", "db");
    add(&l2, CR, F, "/data/y.txt", "data");
    run(&m, &l2, &rep);
    assert_file(hp(g_database, "y.txt"), "db", 2);
    assert_file(hp(g_data, "y.txt"), "data", 4);
    fb_sync_report_free(&rep);
    fb_change_list_free(&l2);
    fb_mount_config_free(&m);
}

static void test_symlink_on_host(void **state)
{
    (void)state;
    fb_mount_config m;
    mount_cfg(&m, false, ALLOW_ALL ", \"sync\": {\"onError\": \"continue\"}");
    put_file(hp(g_outside, "victim"), "untouched", 9, 0644);
    /* host data/output -> ../outside, data/link -> outside/victim */
    assert_int_equal(symlink(g_outside, hp(g_data, "output")), 0);
    assert_int_equal(symlink(hp(g_outside, "victim"), hp(g_data, "link")), 0);
    fb_change_list l = {0};
    add(&l, CR, F, "/data/output/x.txt", "through the link");
    add(&l, CR, F, "/data/output/sub/y.txt", "through the link");
    add(&l, MO, F, "/data/output/victim", "overwrite");
    add(&l, DE, F, "/data/output/victim", NULL);
    add(&l, CR, DIRT, "/data/output/d", NULL);
    add(&l, MO, F, "/data/link", "replaces the link, not its target");
    /* a hard link to an outside file: the new content replaces the name, never writes into the inode */
    assert_int_equal(link(hp(g_outside, "victim"), hp(g_data, "hard")), 0);
    add(&l, MO, F, "/data/hard", "replaces the name only");
    fb_sync_report rep;
    run(&m, &l, &rep);
    assert_state(&rep, 6, FB_SYNC_ITEM_SYNCED);
    assert_file(hp(g_data, "hard"), "replaces the name only", 22);
    for (size_t i = 0; i < 5; i++) {
        assert_state(&rep, i, FB_SYNC_ITEM_FAILED);
        assert_error_has(&rep, i, "symbolic link is in the way");
    }
    assert_state(&rep, 5, FB_SYNC_ITEM_SYNCED);
    /* outside untouched */
    assert_int_equal(count_entries(g_outside), 1);
    assert_file(hp(g_outside, "victim"), "untouched", 9);
    /* the link itself was replaced by a regular file */
    struct stat st;
    assert_int_equal(lstat(hp(g_data, "link"), &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_no_leftovers();
    fb_sync_report_free(&rep);
    fb_change_list_free(&l);
    fb_mount_config_free(&m);
}

static void test_bad_paths(void **state)
{
    (void)state;
    fb_mount_config m;
    mount_cfg(&m, false, ALLOW_ALL ", \"sync\": {\"onError\": \"continue\"}");
    char longname[300], okname[300];
    memset(longname, 'n', 256);
    longname[256] = '\0';
    memset(okname, 'k', 255);
    okname[255] = '\0';
    char lp[400], op[400];
    snprintf(lp, sizeof lp, "/data/%s", longname);
    snprintf(op, sizeof op, "/data/%s", okname);
    fb_change_list l = {0};
    add(&l, CR, F, "/data/../outside/escape", "x");
    add(&l, CR, F, "/data/./x", "x");
    add(&l, CR, F, "/data//x", "x");
    add(&l, CR, F, "/data/x/", "x");
    add(&l, CR, F, "data/x", "x");
    add(&l, CR, F, lp, "too long");
    add(&l, CR, F, op, "255 is fine");
    add(&l, CR, F, "/data/new\nline", "newline in the name");
    add(&l, CR, F, "/data/ünï cödé ✓", "unicode");
    add(&l, CR, F, "/data", "the root");
    fb_sync_report rep;
    run(&m, &l, &rep);
    assert_state(&rep, 0, FB_SYNC_ITEM_FAILED);
    assert_error_has(&rep, 0, "'..' segments are not allowed");
    assert_state(&rep, 1, FB_SYNC_ITEM_FAILED);
    assert_state(&rep, 2, FB_SYNC_ITEM_FAILED);
    assert_error_has(&rep, 2, "empty path segment");
    assert_state(&rep, 3, FB_SYNC_ITEM_FAILED);
    assert_state(&rep, 4, FB_SYNC_ITEM_FAILED);
    assert_error_has(&rep, 4, "absolute");
    assert_state(&rep, 5, FB_SYNC_ITEM_FAILED);
    assert_error_has(&rep, 5, "file name too long (256 bytes; at most 255");
    assert_state(&rep, 6, FB_SYNC_ITEM_SYNCED);
    assert_state(&rep, 7, FB_SYNC_ITEM_SYNCED);
    assert_state(&rep, 8, FB_SYNC_ITEM_SYNCED);
    assert_state(&rep, 9, FB_SYNC_ITEM_SKIPPED);
    assert_file(hp(g_data, "new\nline"), "newline in the name", 19);
    assert_file(hp(g_data, "ünï cödé ✓"), "unicode", 7);
    assert_int_equal(count_entries(g_outside), 0);
    assert_int_equal(count_entries(g_data), 3);
    json_t *j = fb_sync_report_json(&rep); /* renders every hostile name */
    assert_non_null(j);
    json_decref(j);
    assert_no_leftovers();
    fb_sync_report_free(&rep);
    fb_change_list_free(&l);
    fb_mount_config_free(&m);
}

static void test_no_content(void **state)
{
    (void)state;
    fb_mount_config m;
    mount_cfg(&m, false, ALLOW_ALL);
    fb_change_list l = {0};
    add(&l, CR, F, "/data/nocontent.txt", NULL); /* reported with includeContents: false */
    fb_sync_report rep;
    run(&m, &l, &rep);
    assert_state(&rep, 0, FB_SYNC_ITEM_FAILED);
    assert_error_has(&rep, 0, "/data/nocontent.txt: no content");
    assert_false(exists(hp(g_data, "nocontent.txt")));
    fb_sync_report_free(&rep);
    fb_change_list_free(&l);
    fb_mount_config_free(&m);
}

static void test_symlink_changes(void **state)
{
    (void)state;
    static const struct {
        const char *policy;
        const char *target;
        bool synced;
        const char *want_target; /* on the host */
    } cases[] = {
        {"false", "t", false, NULL},
        {"true", "/etc/passwd", false, NULL},          /* never a host link out of the mount */
        {"true", "../anything", true, "../anything"},  /* from sub/: the mount root */
        {"true", "../../anything", false, NULL},
        {"true", "/data/t", true, "../t"},
        {"\"restricted\"", "t", true, "t"},
        {"\"restricted\"", "../t", true, "../t"},      /* from sub/: the mount root */
        {"\"restricted\"", "../../t", false, NULL},    /* leaves the mount */
        {"\"restricted\"", "/etc/passwd", false, NULL},
        {"\"restricted\"", "/data/t", true, "../t"},   /* absolute inside: made relative */
        {"\"restricted\"", "/database/t", false, NULL},
        {"\"restricted\"", "./x/../../..", false, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char extra[512];
        snprintf(extra, sizeof extra, ALLOW_ALL ", \"security\": {\"followSymlinks\": %s}", cases[i].policy);
        fb_mount_config m;
        mount_cfg(&m, false, extra);
        fb_change_list l = {0};
        add(&l, CR, LNK, "/data/sub/link", cases[i].target);
        fb_sync_report rep;
        run(&m, &l, &rep);
        assert_state(&rep, 0, cases[i].synced ? FB_SYNC_ITEM_SYNCED : FB_SYNC_ITEM_SKIPPED);
        if (cases[i].synced) {
            char buf[256];
            ssize_t n = readlink(hp(g_data, "sub/link"), buf, sizeof buf - 1);
            assert_true(n > 0);
            buf[n] = '\0';
            if (strcmp(buf, cases[i].want_target) != 0)
                fail_msg("case %zu: link to \"%s\", want \"%s\"", i, buf, cases[i].want_target);
            assert_int_equal(unlink(hp(g_data, "sub/link")), 0);
        } else {
            assert_false(exists(hp(g_data, "sub/link")));
        }
        assert_no_leftovers();
        fb_sync_report_free(&rep);
        fb_change_list_free(&l);
        fb_mount_config_free(&m);
    }
}

static void test_dir_not_empty(void **state)
{
    (void)state;
    for (int policy = 0; policy < 2; policy++) {
        fb_mount_config m;
        mount_cfg(&m, false, policy ? ALLOW_ALL : ALLOW_ALL ", \"sync\": {\"onError\": \"continue\"}");
        assert_int_equal(mkdir(hp(g_data, "full"), 0755), 0);
        put_file(hp(g_data, "full/stays"), "s", 1, 0644);
        put_file(hp(g_data, "full/goes"), "g", 1, 0644);
        fb_change_list l = {0};
        add(&l, DE, DIRT, "/data/full", NULL);
        add(&l, DE, F, "/data/full/goes", NULL);
        fb_sync_report rep;
        run(&m, &l, &rep);
        assert_state(&rep, 0, FB_SYNC_ITEM_FAILED);
        assert_error_has(&rep, 0, "directory not empty");
        assert_file(hp(g_data, "full/stays"), "s", 1);
        if (policy) /* rollback: the child's deletion is undone */
            assert_file(hp(g_data, "full/goes"), "g", 1);
        else
            assert_false(exists(hp(g_data, "full/goes")));
        assert_no_leftovers();
        fb_sync_report_free(&rep);
        fb_change_list_free(&l);
        fb_mount_config_free(&m);
        assert_int_equal(nftw(hp(g_data, "full"), rm_entry, 16, FTW_DEPTH | FTW_PHYS), 0);
    }
}

static void test_type_change(void **state)
{
    (void)state;
    fb_mount_config m;
    mount_cfg(&m, false, ALLOW_ALL);
    put_file(hp(g_data, "x"), "file", 4, 0644);
    assert_int_equal(mkdir(hp(g_data, "y"), 0755), 0);
    put_file(hp(g_data, "y/inner"), "i", 1, 0644);
    fb_change_list l = {0};
    add(&l, CR, DIRT, "/data/x", NULL); /* the file x became a directory */
    add(&l, CR, F, "/data/x/in.txt", "in");
    add(&l, DE, F, "/data/x", NULL);
    add(&l, CR, F, "/data/y", "now a file"); /* the directory y became a file */
    add(&l, DE, DIRT, "/data/y", NULL);
    add(&l, DE, F, "/data/y/inner", NULL);
    fb_sync_report rep;
    run(&m, &l, &rep);
    for (size_t i = 0; i < l.n; i++)
        assert_state(&rep, i, FB_SYNC_ITEM_SYNCED);
    assert_file(hp(g_data, "x/in.txt"), "in", 2);
    assert_file(hp(g_data, "y"), "now a file", 10);
    assert_no_leftovers();
    fb_sync_report_free(&rep);
    fb_change_list_free(&l);
    fb_mount_config_free(&m);
}

static fb_sync_decision skip_second(void *ctx, const fb_change *c, const char *host_path)
{
    (void)host_path;
    int *n = ctx;
    (*n)++;
    if (strstr(c->path, "skip"))
        return FB_SYNC_SKIP;
    if (strstr(c->path, "abort"))
        return FB_SYNC_ABORT;
    return FB_SYNC_GO;
}

static void test_before_hook(void **state)
{
    (void)state;
    fb_mount_config m;
    mount_cfg(&m, false, ALLOW_ALL);
    fb_change_list l = {0};
    add(&l, CR, F, "/data/a", "a");
    add(&l, CR, F, "/data/skip", "s");
    add(&l, CR, F, "/data/abort", "x");
    add(&l, CR, F, "/data/z", "z");
    int calls = 0;
    fb_sync_options opt = {.on_error = -1, .before = skip_second, .ctx = &calls};
    fb_sync_report rep;
    fb_error err = {0};
    assert_int_equal(fb_sync_apply_ex(&m, &l, &opt, &rep, &err), 0);
    assert_int_equal(calls, 3);
    assert_state(&rep, 0, FB_SYNC_ITEM_ROLLED_BACK); /* rollback: the abort undoes "a" */
    assert_state(&rep, 1, FB_SYNC_ITEM_SKIPPED);
    assert_state(&rep, 2, FB_SYNC_ITEM_NOT_ATTEMPTED);
    assert_error_has(&rep, 2, "aborted by beforeSync");
    assert_state(&rep, 3, FB_SYNC_ITEM_NOT_ATTEMPTED);
    assert_int_equal(count_entries(g_data), 0);
    fb_sync_report_free(&rep);
    fb_change_list_free(&l);
    fb_mount_config_free(&m);
}

static void test_openat2_missing_fails_closed(void **state)
{
    (void)state;
    fb_mount_config m;
    mount_cfg(&m, false, ALLOW_ALL);
    fb_change_list l = {0};
    add(&l, CR, F, "/data/a", "a");
    fb_resolve_force_missing(true);
    fb_sync_report rep;
    fb_error err = {0};
    int rc = fb_sync_apply(&m, &l, &rep, &err);
    fb_resolve_force_missing(false);
    assert_int_equal(rc, -1);
    assert_string_equal(fb_error_type(&err), "KernelFeatureMissing");
    assert_non_null(strstr(err.message, "openat2"));
    assert_state(&rep, 0, FB_SYNC_ITEM_NOT_ATTEMPTED);
    assert_false(exists(hp(g_data, "a")));
    fb_sync_report_free(&rep);
    fb_change_list_free(&l);
    fb_mount_config_free(&m);
}

static void test_resolve(void **state)
{
    (void)state;
    fb_error err = {0};
    int root = fb_resolve_open_root(g_data, &err);
    assert_true(root >= 0);
    assert_int_equal(symlink("/etc", hp(g_data, "esc")), 0);
    assert_int_equal(fb_resolve_open(root, "esc/passwd", O_RDONLY, 0, &err), -1);
    assert_int_equal(err.err_no, ELOOP);
    assert_int_equal(fb_resolve_open(root, "../outside", O_PATH, 0, &err), -1);
    assert_int_equal(err.err_no, EXDEV);
    assert_int_equal(fb_resolve_open(root, "/etc", O_PATH, 0, &err), -1);
    assert_int_equal(err.err_no, EXDEV);
    size_t from = 99;
    int d = fb_resolve_mkdirs(root, "p/q/r", 0755, &from, &err);
    assert_true(d >= 0);
    close(d);
    assert_int_equal(from, 0);
    d = fb_resolve_mkdirs(root, "p/q/s/t", 0755, &from, &err);
    assert_true(d >= 0);
    close(d);
    assert_int_equal(from, 4); /* "s" */
    assert_int_equal(symlink(g_outside, hp(g_data, "esc2")), 0);
    assert_int_equal(fb_resolve_mkdirs(root, "esc2/x", 0755, &from, &err), -1);
    assert_int_equal(err.err_no, ELOOP);
    assert_int_equal(count_entries(g_outside), 0);
    const char *base;
    d = fb_resolve_open_parent(root, "p/q/file", &base, &err);
    assert_true(d >= 0);
    assert_string_equal(base, "file");
    close(d);
    assert_int_equal(fb_resolve_check_rel("a/b", "x", &err), 0);
    assert_int_equal(fb_resolve_check_rel("", "x", &err), 0);
    assert_int_equal(fb_resolve_check_rel("a/../b", "x", &err), -1);
    assert_int_equal(fb_resolve_check_rel("/a", "x", &err), -1);
    close(root);
    assert_int_equal(fb_resolve_open_root(hp(g_data, "esc"), &err), -1); /* the root itself a link */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_each_kind, setup, teardown),
        cmocka_unit_test_setup_teardown(test_modes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_binary_content, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rollback_restores, setup, teardown),
        cmocka_unit_test_setup_teardown(test_continue, setup, teardown),
        cmocka_unit_test_setup_teardown(test_abort, setup, teardown),
        cmocka_unit_test_setup_teardown(test_on_error_override, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rules_final_check, setup, teardown),
        cmocka_unit_test_setup_teardown(test_all_refused_says_why, setup, teardown),
        cmocka_unit_test_setup_teardown(test_data_vs_database, setup, teardown),
        cmocka_unit_test_setup_teardown(test_symlink_on_host, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_paths, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_content, setup, teardown),
        cmocka_unit_test_setup_teardown(test_symlink_changes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dir_not_empty, setup, teardown),
        cmocka_unit_test_setup_teardown(test_type_change, setup, teardown),
        cmocka_unit_test_setup_teardown(test_before_hook, setup, teardown),
        cmocka_unit_test_setup_teardown(test_openat2_missing_fails_closed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resolve, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
