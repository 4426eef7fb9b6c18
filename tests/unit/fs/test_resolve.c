/* Beneath-only host paths (fs/resolve.h) on a real temp tree:
 *   <top>/root     the mount root: a/b.txt, top.txt, and links: rel_link -> a/b.txt, dir_link -> a,
 *                  abs_link -> <top>/outside/secret, up_link -> ../outside, dangling -> nothing
 *   <top>/outside  what an escape would reach: secret
 * fb_resolve_check_rel is a table (syntax only, nothing on disk). fb_resolve_open is a table of relative
 * paths and the errno each must end with: no symlink is followed anywhere in the path (not even the last
 * component), `..` may move about inside the root but never above it, an absolute path is outside; every
 * fd is O_CLOEXEC. Then fb_resolve_open_parent, fb_resolve_mkdirs (what it creates, where it says it
 * started, that it stops at a link without creating anything beyond it), fb_resolve_open_root, and the
 * fail-closed answer when openat2 is missing (fb_resolve_force_missing). Races (a link swapped in between
 * two steps) are out of scope here; tests/security covers them. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
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

#include "fs/resolve.h"

static char g_top[64];
static char g_root[128], g_outside[128];
static int g_root_fd = -1;

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(p);
}

static void put_file(const char *dir, const char *rel, const char *text)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    FILE *f = fopen(p, "w");
    if (!f)
        fail_msg("%s: %s", p, strerror(errno));
    fputs(text, f);
    fclose(f);
}

static void put_link(const char *target, const char *rel)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", g_root, rel);
    if (symlink(target, p) < 0)
        fail_msg("symlink %s: %s", p, strerror(errno));
}

static int setup(void **state)
{
    (void)state;
    snprintf(g_top, sizeof g_top, "/tmp/fnbox-resolve-test.XXXXXX");
    if (!mkdtemp(g_top))
        return -1;
    snprintf(g_root, sizeof g_root, "%s/root", g_top);
    snprintf(g_outside, sizeof g_outside, "%s/outside", g_top);
    umask(022);
    char a[256];
    snprintf(a, sizeof a, "%s/a", g_root);
    if (mkdir(g_root, 0755) < 0 || mkdir(g_outside, 0755) < 0 || mkdir(a, 0755) < 0)
        return -1;
    put_file(g_root, "a/b.txt", "inside");
    put_file(g_root, "top.txt", "top");
    put_file(g_outside, "secret", "outside");
    char abs_target[256];
    snprintf(abs_target, sizeof abs_target, "%s/secret", g_outside);
    put_link("a/b.txt", "rel_link");
    put_link("a", "dir_link");
    put_link(abs_target, "abs_link");
    put_link("../outside", "up_link");
    put_link("nothing-here", "dangling");
    if (fb_resolve_available(NULL) < 0) {
        print_message("openat2 with RESOLVE_BENEATH is missing on this kernel: nothing to test\n");
        return -1;
    }
    g_root_fd = fb_resolve_open_root(g_root, NULL);
    return g_root_fd < 0 ? -1 : 0;
}

static int teardown(void **state)
{
    (void)state;
    if (g_root_fd >= 0)
        close(g_root_fd);
    g_root_fd = -1;
    return nftw(g_top, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static bool cloexec(int fd)
{
    int fl = fcntl(fd, F_GETFD);
    return fl >= 0 && (fl & FD_CLOEXEC);
}

static bool exists_in(const char *dir, const char *rel)
{
    char p[512];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    return lstat(p, &st) == 0;
}

/* ---- fb_resolve_check_rel ---- */

typedef struct rel_case {
    const char *rel;
    const char *error; /* NULL: valid; else a piece of the message */
} rel_case;

static void test_check_rel(void **state)
{
    (void)state;
    char seg255[256], seg256[257], very_long[PATH_MAX + 8];
    memset(seg255, 'n', 255);
    seg255[255] = '\0';
    memset(seg256, 'n', 256);
    seg256[256] = '\0';
    for (size_t i = 0; i < sizeof very_long - 1; i++)
        very_long[i] = i % 100 == 99 ? '/' : 'x';
    very_long[sizeof very_long - 1] = '\0';
    const rel_case cases[] = {
        {"", NULL},          {"a", NULL},          {"a/b/c", NULL},       {"..a", NULL},
        {"a..", NULL},       {"...", NULL},        {".hidden", NULL},     {"a/.b/c", NULL},
        {"sp ace/é", NULL},  {seg255, NULL},       {"/a", "empty path segment"},
        {"a/", "empty path segment"},              {"a//b", "empty path segment"},
        {"/", "empty path segment"},               {".", "'.' segments are not allowed"},
        {"..", "'..' segments are not allowed"},   {"a/./b", "'.' segments"},
        {"a/../b", "'..' segments"},               {"a/..", "'..' segments"},
        {seg256, "file name too long (256 bytes"}, {very_long, "bytes long (at most"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fb_error err = {0};
        int rc = fb_resolve_check_rel(cases[i].rel, "files[\"x\"]", &err);
        if (!cases[i].error) {
            if (rc != 0)
                fail_msg("'%.60s' refused: %s", cases[i].rel, err.message);
            continue;
        }
        if (rc == 0)
            fail_msg("'%.60s' accepted, expected '%s'", cases[i].rel, cases[i].error);
        assert_string_equal(fb_error_type(&err), "HostPathError");
        if (!strstr(err.message, cases[i].error) || strncmp(err.message, "files[\"x\"]: ", 12) != 0)
            fail_msg("'%.60s': message '%s' lacks '%s' or the prefix", cases[i].rel, err.message, cases[i].error);
    }
}

/* ---- fb_resolve_open ---- */

typedef struct open_case {
    const char *rel;
    int flags;
    int want_errno;   /* 0: opens */
    const char *text; /* opened for reading: the content; refused: a piece of the message */
} open_case;

static void test_open(void **state)
{
    (void)state;
    const open_case cases[] = {
        {"a/b.txt", O_RDONLY, 0, "inside"},
        {"top.txt", O_RDONLY, 0, "top"},
        {"a/../top.txt", O_RDONLY, 0, "top"}, /* `..` that stays inside is fine */
        {"a/../a/b.txt", O_RDONLY, 0, "inside"},
        {"", O_PATH | O_DIRECTORY, 0, NULL},
        {"a", O_RDONLY | O_DIRECTORY, 0, NULL},
        {"rel_link", O_RDONLY, ELOOP, "symbolic link is in the way"},
        {"rel_link", O_PATH, ELOOP, "symbolic link"},
        {"rel_link", O_RDONLY | O_NOFOLLOW, ELOOP, "symbolic link"},
        {"dir_link/b.txt", O_RDONLY, ELOOP, "symbolic link"},
        {"dir_link", O_RDONLY | O_DIRECTORY, ELOOP, "symbolic link"},
        {"abs_link", O_RDONLY, ELOOP, "symbolic link"},
        {"up_link/secret", O_RDONLY, ELOOP, "symbolic link"},
        {"dangling", O_WRONLY | O_CREAT, ELOOP, "symbolic link"}, /* O_CREAT never creates through a link */
        {"../outside/secret", O_RDONLY, EXDEV, "leads outside the mount root"},
        {"a/../../outside/secret", O_RDONLY, EXDEV, "outside the mount root"},
        {"..", O_PATH, EXDEV, "outside"},
        {"missing", O_RDONLY, ENOENT, "does not exist"},
        {"missing/x", O_RDONLY, ENOENT, "does not exist"},
        {"top.txt/x", O_RDONLY, ENOTDIR, "not a directory"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const open_case *c = &cases[i];
        fb_error err = {0};
        /* a mode on every row: it counts with O_CREAT (and O_TMPFILE) only, not with O_DIRECTORY alone,
         * which shares a bit with O_TMPFILE (openat2 refused such opens with EINVAL before) */
        int fd = fb_resolve_open(g_root_fd, c->rel, c->flags, 0644, &err);
        if (c->want_errno) {
            if (fd >= 0)
                fail_msg("'%s' opened, expected errno %d", c->rel, c->want_errno);
            if (err.err_no != c->want_errno || strcmp(fb_error_type(&err), "HostPathError") != 0 ||
                !strstr(err.message, c->text))
                fail_msg("'%s': %s errno %d '%s', expected errno %d and '%s'", c->rel, fb_error_type(&err), err.err_no,
                         err.message, c->want_errno, c->text);
            continue;
        }
        if (fd < 0)
            fail_msg("'%s' refused: %s", c->rel, err.message);
        assert_true(cloexec(fd));
        if (c->text) {
            char buf[64] = "";
            ssize_t n = read(fd, buf, sizeof buf - 1);
            assert_true(n >= 0);
            buf[n] = '\0';
            assert_string_equal(buf, c->text);
        }
        close(fd);
    }
    /* an absolute path is outside the root, whatever it names */
    fb_error err = {0};
    char abs[256];
    snprintf(abs, sizeof abs, "%s/top.txt", g_root);
    assert_true(fb_resolve_open(g_root_fd, abs, O_RDONLY, 0, &err) < 0);
    assert_int_equal(err.err_no, EXDEV);
    /* nothing was created through the dangling link, here or at its target */
    assert_false(exists_in(g_root, "nothing-here"));
}

static void test_open_create(void **state)
{
    (void)state;
    fb_error err = {0};
    int fd = fb_resolve_open(g_root_fd, "a/new.txt", O_WRONLY | O_CREAT | O_EXCL, 0640, &err);
    if (fd < 0)
        fail_msg("create: %s", err.message);
    assert_true(cloexec(fd));
    assert_int_equal(write(fd, "n", 1), 1);
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0640);
    close(fd);
    /* O_EXCL still refuses an existing file; mode bits beyond 07777 are dropped */
    assert_true(fb_resolve_open(g_root_fd, "a/new.txt", O_WRONLY | O_CREAT | O_EXCL, 0640, &err) < 0);
    assert_int_equal(err.err_no, EEXIST);
    fd = fb_resolve_open(g_root_fd, "a/odd.txt", O_WRONLY | O_CREAT, 0170644, &err);
    assert_true(fd >= 0);
    assert_int_equal(fstat(fd, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(st.st_mode & 07777, 0644);
    close(fd);
    /* O_TMPFILE: an unnamed file in a directory beneath the root, with its mode */
    fd = fb_resolve_open(g_root_fd, "a", O_TMPFILE | O_RDWR, 0600, &err);
    if (fd < 0)
        fail_msg("O_TMPFILE: %s", err.message);
    assert_int_equal(fstat(fd, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0600);
    close(fd);
    assert_true(fb_resolve_open(g_root_fd, "dir_link", O_TMPFILE | O_RDWR, 0600, &err) < 0);
    assert_int_equal(err.err_no, ELOOP);
    /* creating through a linked directory is refused and creates nothing at the target */
    assert_true(fb_resolve_open(g_root_fd, "dir_link/via.txt", O_WRONLY | O_CREAT, 0644, &err) < 0);
    assert_int_equal(err.err_no, ELOOP);
    assert_false(exists_in(g_root, "a/via.txt"));
    assert_true(fb_resolve_open(g_root_fd, "up_link/planted", O_WRONLY | O_CREAT, 0644, &err) < 0);
    assert_false(exists_in(g_outside, "planted"));
}

/* ---- fb_resolve_open_parent ---- */

static void test_open_parent(void **state)
{
    (void)state;
    fb_error err = {0};
    const char *base = NULL;
    int fd = fb_resolve_open_parent(g_root_fd, "a/b.txt", &base, &err);
    if (fd < 0)
        fail_msg("a/b.txt: %s", err.message);
    assert_string_equal(base, "b.txt");
    assert_true(cloexec(fd));
    struct stat st;
    assert_int_equal(fstatat(fd, base, &st, AT_SYMLINK_NOFOLLOW), 0); /* the parent really is a/ */
    assert_int_equal(st.st_size, 6);
    assert_int_equal(fsync(fd), 0); /* O_RDONLY, not O_PATH: it can be fsync'ed */
    close(fd);

    fd = fb_resolve_open_parent(g_root_fd, "top.txt", &base, &err);
    assert_true(fd >= 0);
    assert_string_equal(base, "top.txt");
    assert_int_equal(fstatat(fd, "top.txt", &st, 0), 0);
    close(fd);

    /* the last component may be anything, even absent or a link: only the parent is resolved */
    fd = fb_resolve_open_parent(g_root_fd, "a/absent", &base, &err);
    assert_true(fd >= 0);
    assert_string_equal(base, "absent");
    close(fd);
    fd = fb_resolve_open_parent(g_root_fd, "dir_link", &base, &err);
    assert_true(fd >= 0);
    assert_string_equal(base, "dir_link");
    close(fd);

    assert_true(fb_resolve_open_parent(g_root_fd, "", &base, &err) < 0);
    assert_string_equal(fb_error_type(&err), "HostPathError");
    assert_non_null(strstr(err.message, "no parent"));
    assert_true(fb_resolve_open_parent(g_root_fd, "dir_link/b.txt", &base, &err) < 0);
    assert_int_equal(err.err_no, ELOOP);
    assert_true(fb_resolve_open_parent(g_root_fd, "up_link/secret", &base, &err) < 0);
    assert_int_equal(err.err_no, ELOOP);
    assert_true(fb_resolve_open_parent(g_root_fd, "top.txt/x", &base, &err) < 0);
    assert_int_equal(err.err_no, ENOTDIR);
}

/* ---- fb_resolve_mkdirs ---- */

static void test_mkdirs(void **state)
{
    (void)state;
    fb_error err = {0};
    size_t from = 99;
    int fd = fb_resolve_mkdirs(g_root_fd, "x/y/z", 0700, &from, &err);
    if (fd < 0)
        fail_msg("x/y/z: %s", err.message);
    assert_int_equal(from, 0); /* x was the first created */
    assert_true(cloexec(fd));
    struct stat st, want;
    assert_int_equal(fstat(fd, &st), 0);
    char p[512];
    snprintf(p, sizeof p, "%s/x/y/z", g_root);
    assert_int_equal(stat(p, &want), 0);
    assert_int_equal(st.st_ino, want.st_ino); /* the fd is the deepest directory */
    assert_int_equal(want.st_mode & 0777, 0700);
    close(fd);

    fd = fb_resolve_mkdirs(g_root_fd, "a/new/deeper", 0755, &from, &err);
    assert_true(fd >= 0);
    assert_int_equal(from, 2); /* "a/" existed: creation started at "new" */
    close(fd);

    fd = fb_resolve_mkdirs(g_root_fd, "a", 0755, &from, &err);
    assert_true(fd >= 0);
    assert_int_equal(from, 1); /* nothing created: strlen */
    close(fd);
    fd = fb_resolve_mkdirs(g_root_fd, "", 0755, &from, &err);
    assert_true(fd >= 0);
    assert_int_equal(from, 0);
    close(fd);

    /* a link in the way stops it, and nothing is created beyond the link */
    assert_true(fb_resolve_mkdirs(g_root_fd, "dir_link/made/here", 0755, &from, &err) < 0);
    assert_int_equal(err.err_no, ELOOP);
    assert_false(exists_in(g_root, "a/made"));
    assert_true(fb_resolve_mkdirs(g_root_fd, "up_link/planted", 0755, &from, &err) < 0);
    assert_false(exists_in(g_outside, "planted"));
    assert_true(fb_resolve_mkdirs(g_root_fd, "dangling/sub", 0755, &from, &err) < 0);
    assert_false(exists_in(g_root, "nothing-here"));
    /* a file in the way */
    assert_true(fb_resolve_mkdirs(g_root_fd, "top.txt/sub", 0755, &from, &err) < 0);
    assert_int_equal(err.err_no, ENOTDIR);
    assert_string_equal(fb_error_type(&err), "HostPathError");
}

/* ---- fb_resolve_open_root ---- */

static void test_open_root(void **state)
{
    (void)state;
    fb_error err = {0};
    assert_true(fb_resolve_open_root("relative/path", &err) < 0);
    assert_non_null(strstr(err.message, "not an absolute path"));
    char p[256];
    snprintf(p, sizeof p, "%s/dir_link", g_root);
    assert_true(fb_resolve_open_root(p, &err) < 0); /* the root itself may not be a link */
    assert_int_equal(err.err_no, ENOTDIR);          /* O_NOFOLLOW | O_DIRECTORY on a link */
    assert_non_null(strstr(err.message, "symbolic link"));
    snprintf(p, sizeof p, "%s/top.txt", g_root);
    assert_true(fb_resolve_open_root(p, &err) < 0);
    assert_int_equal(err.err_no, ENOTDIR);
    snprintf(p, sizeof p, "%s/nope", g_root);
    assert_true(fb_resolve_open_root(p, &err) < 0);
    assert_int_equal(err.err_no, ENOENT);
    snprintf(p, sizeof p, "%s/a", g_root);
    int fd = fb_resolve_open_root(p, &err);
    assert_true(fd >= 0);
    assert_true(cloexec(fd));
    assert_int_equal(fcntl(fd, F_GETFL) & O_PATH, O_PATH);
    /* a root below another: its own `..` is now outside */
    assert_true(fb_resolve_open(fd, "../top.txt", O_RDONLY, 0, &err) < 0);
    assert_int_equal(err.err_no, EXDEV);
    close(fd);
}

/* ---- openat2 missing: fail closed ---- */

static void test_missing_openat2(void **state)
{
    (void)state;
    fb_resolve_force_missing(true);
    fb_error err = {0};
    const char *base;
    size_t from;
    assert_int_equal(fb_resolve_available(&err), -1);
    assert_string_equal(fb_error_type(&err), "KernelFeatureMissing");
    assert_non_null(strstr(err.message, "openat2"));
    memset(&err, 0, sizeof err);
    assert_true(fb_resolve_open_root(g_root, &err) < 0);
    assert_string_equal(fb_error_type(&err), "KernelFeatureMissing");
    memset(&err, 0, sizeof err);
    assert_true(fb_resolve_open(g_root_fd, "top.txt", O_RDONLY, 0, &err) < 0);
    assert_string_equal(fb_error_type(&err), "KernelFeatureMissing");
    assert_true(fb_resolve_open_parent(g_root_fd, "a/b.txt", &base, &err) < 0);
    assert_true(fb_resolve_mkdirs(g_root_fd, "m/n", 0755, &from, &err) < 0);
    assert_false(exists_in(g_root, "m"));
    fb_resolve_force_missing(false);
    assert_int_equal(fb_resolve_available(&err), 0);
    int fd = fb_resolve_open(g_root_fd, "top.txt", O_RDONLY, 0, &err);
    assert_true(fd >= 0);
    close(fd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_check_rel),
        cmocka_unit_test_setup_teardown(test_open, setup, teardown),
        cmocka_unit_test_setup_teardown(test_open_create, setup, teardown),
        cmocka_unit_test_setup_teardown(test_open_parent, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mkdirs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_open_root, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_openat2, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
