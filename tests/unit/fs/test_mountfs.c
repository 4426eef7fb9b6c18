/* A host mount served over FUSE (fs/mountfs.h).
 * Without a mount: opening (a missing host directory), eager loading with maxFileSize / maxTotalSize
 * (which files the walk leaves out, in name order; excluded entries cost nothing; host links under
 * followSymlinks false), request files placed in the view (no change while untouched, the upper layer's
 * limit).
 * With a real FUSE mount (root and /dev/fuse, as the sandbox has them; skipped otherwise): this test mounts
 * the connection on a temp directory itself, hands it to fb_mountfs_serve, and acts on it with plain
 * syscalls, as the function would. Checked at the operation: reads, listings, creates, modifies, deletes
 * against the rules (EACCES and a recorded denial when refused), exclude (absent, not refused), the
 * operations a mount never allows (hard links, directory renames, chown, links under followSymlinks
 * false), onPermissionDenied ignore / virtual, the host's callback, followSymlinks restricted / true,
 * explicit loading; then, after the mount is gone, the change list (created / modified / deleted, an
 * identical rewrite is no change) and that the host was never written. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "fs/mountfs.h"
#include "fs/track.h"
#include "request/mount.h"

#define WATCHDOG_S 60 /* a server that stops answering would hang the test on its next syscall */

static char g_top[64], g_host[128], g_mnt[128];

typedef struct fixture {
    fb_mount_config cfg;
    fb_mountfs *fs;
    bool mounted;
} fixture;

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(p);
}

static void put(const char *rel, const char *text)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", g_host, rel);
    FILE *f = fopen(p, "w");
    if (!f)
        fail_msg("%s: %s", p, strerror(errno));
    fputs(text, f);
    fclose(f);
}

static void host_mkdir(const char *rel)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", g_host, rel);
    if (mkdir(p, 0755) < 0)
        fail_msg("mkdir %s: %s", p, strerror(errno));
}

static void host_link(const char *target, const char *rel)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", g_host, rel);
    if (symlink(target, p) < 0)
        fail_msg("symlink %s: %s", p, strerror(errno));
}

/* The host tree every test starts from. */
static int setup(void **state)
{
    (void)state;
    snprintf(g_top, sizeof g_top, "/tmp/fnbox-mountfs-test.XXXXXX");
    if (!mkdtemp(g_top))
        return -1;
    snprintf(g_host, sizeof g_host, "%s/host", g_top);
    snprintf(g_mnt, sizeof g_mnt, "%s/mnt", g_top);
    umask(022);
    if (mkdir(g_host, 0755) < 0 || mkdir(g_mnt, 0755) < 0)
        return -1;
    put("readme.txt", "hello");
    put("secret.txt", "s3cret");
    put("ro.txt", "read only");
    host_mkdir("out");
    put("out/old.txt", "old");
    put("out/gone.txt", "doomed");
    put("out/same.txt", "same");
    host_mkdir("node_modules");
    put("node_modules/x.js", "module");
    host_mkdir("sub");
    put("sub/inner.txt", "inner");
    alarm(WATCHDOG_S);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    alarm(0);
    umount2(g_mnt, MNT_DETACH);
    return nftw(g_top, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* The mount config from JSON (' for ", HOST for the host dir) at /data. */
static void config(fixture *f, const char *extra)
{
    char text[2048];
    snprintf(text, sizeof text, "{'dirs': {'/data': '%s'}%s%s}", g_host, *extra ? ", " : "", extra);
    for (char *p = text; *p; p++)
        if (*p == '\'')
            *p = '"';
    json_error_t jerr;
    json_t *v = json_loads(text, 0, &jerr);
    if (!v)
        fail_msg("bad test JSON %s: %s", text, jerr.text);
    fb_error err = {0};
    memset(f, 0, sizeof *f);
    if (fb_mount_config_parse(v, "mount", &f->cfg, &err) < 0)
        fail_msg("mount config: %s", err.message);
    json_decref(v);
}

static void open_fs(fixture *f, const char *extra, uint64_t max_upper)
{
    config(f, extra);
    fb_error err = {0};
    if (fb_mountfs_open(&f->cfg, &f->cfg.dirs[0], max_upper, &f->fs, &err) < 0)
        fail_msg("open: %s", err.message);
}

/* Mounts a FUSE connection on g_mnt and serves it; false (the test skips) where this cannot be done. */
static bool serve(fixture *f)
{
    int fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        print_message("no read-write /dev/fuse (%s): skipped\n", strerror(errno));
        return false;
    }
    char opts[128];
    snprintf(opts, sizeof opts, "fd=%d,rootmode=40000,user_id=%u,group_id=%u", fd, (unsigned)getuid(),
             (unsigned)getgid());
    if (mount("fnbox-test", g_mnt, "fuse", MS_NOSUID | MS_NODEV, opts) < 0) {
        print_message("cannot mount FUSE here (%s; needs root): skipped\n", strerror(errno));
        close(fd);
        return false;
    }
    fb_error err = {0};
    if (fb_mountfs_serve(f->fs, fd, &err) < 0)
        fail_msg("serve: %s", err.message);
    f->mounted = true;
    return true;
}

/* Open with the fixture served, or skip the test. */
static void open_served(fixture *f, const char *extra)
{
    open_fs(f, extra, 1 << 20);
    if (!serve(f)) {
        fb_mountfs_free(f->fs);
        fb_mount_config_free(&f->cfg);
        skip();
    }
}

/* Ends the call: unmounts, stops the server. */
static void finish(fixture *f)
{
    if (f->mounted)
        assert_int_equal(umount2(g_mnt, MNT_DETACH), 0);
    f->mounted = false;
    fb_mountfs_stop(f->fs);
    fb_mountfs_stop(f->fs); /* idempotent */
}

static void release(fixture *f)
{
    finish(f);
    fb_mountfs_free(f->fs);
    fb_mount_config_free(&f->cfg);
}

static const char *in_mnt(const char *rel)
{
    static char buf[4][512];
    static int k;
    char *b = buf[k++ % 4];
    snprintf(b, sizeof buf[0], "%s/%s", g_mnt, rel);
    return b;
}

/* open(2) in the mount: the fd, or -errno. */
static int try_open(const char *rel, int flags)
{
    int fd = open(in_mnt(rel), flags | O_CLOEXEC, 0644);
    return fd < 0 ? -errno : fd;
}

static void expect_errno(int rc, int want, const char *what)
{
    if (rc >= 0)
        close(rc);
    if (rc != -want)
        fail_msg("%s: %s, expected %s", what, rc >= 0 ? "succeeded" : strerror(-rc), strerror(want));
}

static void read_text(const char *rel, char *out, size_t cap)
{
    int fd = try_open(rel, O_RDONLY);
    if (fd < 0)
        fail_msg("read %s: %s", rel, strerror(-fd));
    ssize_t n = read(fd, out, cap - 1);
    assert_true(n >= 0);
    out[n] = '\0';
    close(fd);
}

static void write_text(const char *rel, int flags, const char *text)
{
    int fd = try_open(rel, O_WRONLY | flags);
    if (fd < 0)
        fail_msg("write %s: %s", rel, strerror(-fd));
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    assert_int_equal(close(fd), 0);
}

static int sys_rc(int rc)
{
    return rc < 0 ? -errno : rc;
}

/* The names a listing of rel shows, sorted, space-separated. */
static void listing(const char *rel, char *out, size_t cap)
{
    struct dirent **names;
    int n = scandir(in_mnt(rel), &names, NULL, alphasort);
    if (n < 0)
        fail_msg("list %s: %s", rel, strerror(errno));
    size_t o = 0;
    out[0] = '\0';
    for (int i = 0; i < n; i++) {
        if (strcmp(names[i]->d_name, ".") != 0 && strcmp(names[i]->d_name, "..") != 0)
            o += (size_t)snprintf(out + o, cap - o, "%s%s", o ? " " : "", names[i]->d_name);
        free(names[i]);
    }
    free(names);
}

/* "kind type path size content" of each change, "; "-separated. */
static void changes_text(fb_mountfs *fs, bool with_content, char *out, size_t cap)
{
    fb_change_list l = {0};
    fb_error err = {0};
    if (fb_track_mount(fs, with_content, &l, &err) < 0) /* fs/track.c reads the stopped server's view */
        fail_msg("changes: %s", err.message);
    fb_track_sort(&l);
    size_t o = 0;
    out[0] = '\0';
    for (size_t i = 0; i < l.n; i++) {
        const fb_change *c = &l.v[i];
        o += (size_t)snprintf(out + o, cap - o, "%s%s %s %s %llu %.*s", i ? "; " : "", fb_change_kind_name(c->kind),
                              fb_file_type_name(c->type), c->path, (unsigned long long)c->size,
                              c->has_content ? (int)c->content_len : 1, c->has_content ? (const char *)c->content : "-");
    }
    fb_change_list_free(&l);
}

static void denials_text(const fb_mountfs *fs, char *out, size_t cap)
{
    const fb_denial_list *d = fb_mountfs_denials(fs);
    size_t o = 0;
    out[0] = '\0';
    for (size_t i = 0; i < d->n; i++)
        o += (size_t)snprintf(out + o, cap - o, "%s%s %s [%s]", i ? "; " : "", d->v[i].operation, d->v[i].path,
                              d->v[i].rule);
}

static bool host_is(const char *rel, const char *want)
{
    char p[512], buf[256] = "";
    snprintf(p, sizeof p, "%s/%s", g_host, rel);
    FILE *fp = fopen(p, "r");
    if (!fp)
        return want == NULL;
    size_t n = fread(buf, 1, sizeof buf - 1, fp);
    buf[n] = '\0';
    fclose(fp);
    return want && strcmp(buf, want) == 0;
}

/* ---- without a mount ---- */

static void test_open_missing_host(void **state)
{
    (void)state;
    fixture f;
    config(&f, "");
    char missing[256];
    snprintf(missing, sizeof missing, "%s/nope", g_top);
    fb_mount_dir dir = {.virtual_path = "/gone", .host_path = missing};
    fb_error err = {0};
    fb_mountfs *fs = (fb_mountfs *)&err; /* must be left alone or cleared */
    assert_int_equal(fb_mountfs_open(&f.cfg, &dir, 0, &fs, &err), -1);
    assert_string_equal(fb_error_type(&err), "InvalidRequest");
    assert_non_null(strstr(err.message, "mount.dirs[\"/gone\"]: cannot open host directory"));
    assert_int_equal(err.err_no, ENOENT);
    fb_mount_config_free(&f.cfg);
}

static void skipped_text(const fb_mountfs *fs, char *out, size_t cap)
{
    size_t n, o = 0;
    const fb_skipped *s = fb_mountfs_skipped(fs, &n);
    out[0] = '\0';
    for (size_t i = 0; i < n; i++)
        o += (size_t)snprintf(out + o, cap - o, "%s%s %s %llu", i ? "; " : "", s[i].path, s[i].reason,
                              (unsigned long long)s[i].size);
}

static void test_eager_limits(void **state)
{
    (void)state;
    put("big.bin", "0123456789012345678901234567890123456789"); /* 40 bytes */
    host_link("readme.txt", "link");
    /* name order: big.bin(40) link node_modules/x.js(6) out/gone.txt(6) out/old.txt(3) out/same.txt(4)
     * readme.txt(5) ro.txt(9) secret.txt(6) sub/inner.txt(5): 6+6+3+4+5 = 24, ro.txt would make 33, secret.txt
     * makes 30, inner.txt would make 35 */
    fixture f;
    open_fs(&f, "'loading': {'mode': 'eager', 'maxFileSize': 30, 'maxTotalSize': 30}", 1 << 20);
    char text[1024];
    skipped_text(f.fs, text, sizeof text);
    assert_string_equal(text, "/data/big.bin maxFileSize 40; /data/link symlink 0; "
                              "/data/ro.txt maxTotalSize 9; /data/sub/inner.txt maxTotalSize 5");
    release(&f);

    /* an excluded entry is never weighed: without node_modules' 6 bytes ro.txt fits, secret.txt not */
    open_fs(&f, "'loading': {'mode': 'eager', 'maxFileSize': 30, 'maxTotalSize': 30}, "
                "'permissions': {'exclude': ['node_modules']}",
            1 << 20);
    skipped_text(f.fs, text, sizeof text);
    assert_string_equal(text, "/data/big.bin maxFileSize 40; /data/link symlink 0; "
                              "/data/secret.txt maxTotalSize 6; /data/sub/inner.txt maxTotalSize 5");
    release(&f);

    /* without limits the walk is not needed: nothing is skipped up front */
    open_fs(&f, "'loading': {'mode': 'eager'}", 1 << 20);
    skipped_text(f.fs, text, sizeof text);
    assert_string_equal(text, "");
    release(&f);
}

static void test_request_files(void **state)
{
    (void)state;
    fixture f;
    open_fs(&f, "'permissions': {'exclude': ['node_modules']}", 64);
    fb_error err = {0};
    assert_int_equal(fb_mountfs_add_file(f.fs, "new/dir/f.txt", "payload", 7, &err), 0);
    assert_int_equal(fb_mountfs_add_file(f.fs, "readme.txt", "hello", 5, &err), 0);      /* as on the host */
    assert_int_equal(fb_mountfs_add_file(f.fs, "node_modules/y.js", "y", 1, &err), 0);  /* excluded */
    char text[1024];
    changes_text(f.fs, true, text, sizeof text);
    assert_string_equal(text, ""); /* request files the function left alone are no change */
    assert_null(fb_mountfs_failure(f.fs));
    /* the upper layer's limit */
    char big[100];
    memset(big, 'x', sizeof big);
    assert_int_equal(fb_mountfs_add_file(f.fs, "big.txt", big, sizeof big, &err), -1);
    assert_string_equal(fb_error_type(&err), "InvalidRequest");
    assert_non_null(strstr(err.message, "/data/big.txt does not fit in the mount's limit"));
    release(&f);
}

/* ---- served ---- */

#define RULES                                                                                              \
    "'permissions': {'rules': [{'pattern': 'out/**', 'allow': ['create', 'modify', 'delete']}, "            \
    "{'pattern': 'secret.txt', 'deny': ['read']}], 'exclude': ['node_modules']}"

static void test_operations(void **state)
{
    (void)state;
    fixture f;
    open_served(&f, RULES);
    char text[2048];

    /* reads and listings */
    read_text("readme.txt", text, sizeof text);
    assert_string_equal(text, "hello");
    expect_errno(try_open("secret.txt", O_RDONLY), EACCES, "read secret.txt");
    listing("", text, sizeof text);
    assert_string_equal(text, "out readme.txt ro.txt secret.txt sub"); /* denied is listed, excluded is not */
    struct stat st;
    assert_int_equal(sys_rc(stat(in_mnt("node_modules"), &st)), -ENOENT);
    expect_errno(try_open("node_modules/x.js", O_RDONLY), ENOENT, "read an excluded file");
    assert_int_equal(sys_rc(stat(in_mnt("readme.txt"), &st)), 0);
    assert_int_equal(st.st_size, 5);
    assert_int_equal(st.st_uid, getuid());

    /* creates */
    write_text("out/new.txt", O_CREAT | O_EXCL, "new");
    read_text("out/new.txt", text, sizeof text);
    assert_string_equal(text, "new");
    write_text("out/new.txt", O_TRUNC, "newer"); /* the call's own file: rewriting it is creating it */
    expect_errno(try_open("top.txt", O_WRONLY | O_CREAT), EACCES, "create top.txt");
    expect_errno(try_open("node_modules/y.js", O_WRONLY | O_CREAT), ENOENT, "create in an excluded dir");
    assert_int_equal(sys_rc(mkdir(in_mnt("node_modules"), 0755)), -EACCES); /* absent, and not to be made */
    assert_int_equal(sys_rc(mkdir(in_mnt("out/d"), 0755)), 0);
    assert_int_equal(sys_rc(mkdir(in_mnt("nodir"), 0755)), -EACCES);
    write_text("out/d/deep.txt", O_CREAT, "deep");

    /* modifies */
    write_text("out/old.txt", O_TRUNC, "OLD!");
    write_text("out/same.txt", O_TRUNC, "same"); /* identical: no change */
    expect_errno(try_open("ro.txt", O_WRONLY | O_TRUNC), EACCES, "modify ro.txt");
    expect_errno(try_open("ro.txt", O_RDWR), EACCES, "open ro.txt read-write");
    assert_int_equal(sys_rc(truncate(in_mnt("ro.txt"), 0)), -EACCES);
    assert_int_equal(sys_rc(chmod(in_mnt("ro.txt"), 0600)), -EACCES);

    /* deletes */
    assert_int_equal(sys_rc(unlink(in_mnt("out/gone.txt"))), 0);
    assert_int_equal(sys_rc(stat(in_mnt("out/gone.txt"), &st)), -ENOENT);
    assert_int_equal(sys_rc(unlink(in_mnt("readme.txt"))), -EACCES);
    assert_int_equal(sys_rc(unlink(in_mnt("out/new.txt"))), 0); /* its own: no delete right needed... */
    write_text("out/new.txt", O_CREAT, "again");                  /* ...and made again */

    /* never: hard links, directory renames, ownership, links under followSymlinks false */
    assert_int_equal(sys_rc(link(in_mnt("out/old.txt"), in_mnt("out/hard"))), -EPERM);
    assert_int_equal(sys_rc(rename(in_mnt("out/d"), in_mnt("out/e"))), -EXDEV);
    assert_int_equal(sys_rc(chown(in_mnt("out/old.txt"), 1, 1)), -EPERM);
    assert_int_equal(sys_rc(symlink("old.txt", in_mnt("out/ln"))), -EPERM);
    assert_int_equal(sys_rc(rmdir(in_mnt("sub"))), -ENOTEMPTY);
    /* a rename is a delete of the source and a create of the target */
    assert_int_equal(sys_rc(rename(in_mnt("out/old.txt"), in_mnt("out/moved.txt"))), 0);
    assert_int_equal(sys_rc(rename(in_mnt("sub/inner.txt"), in_mnt("out/inner.txt"))), -EACCES);
    struct statvfs sv;
    assert_int_equal(sys_rc(statvfs(in_mnt(""), &sv)), 0);
    assert_int_equal(sv.f_namemax, 255);
    assert_int_equal(sys_rc(access(in_mnt("secret.txt"), R_OK)), -EACCES); /* a question: no denial */

    finish(&f);
    changes_text(f.fs, true, text, sizeof text);
    assert_string_equal(text, "created directory /data/out/d 0 -; created file /data/out/d/deep.txt 4 deep; "
                              "deleted file /data/out/gone.txt 6 -; created file /data/out/moved.txt 4 OLD!; "
                              "created file /data/out/new.txt 5 again; deleted file /data/out/old.txt 3 -");
    denials_text(f.fs, text, sizeof text);
    assert_string_equal(text, "read /data/secret.txt [rules[1] \"secret.txt\"]; create /data/top.txt [default]; "
                              "create /data/node_modules [exclude \"node_modules\"]; "
                              "create /data/nodir [default]; modify /data/ro.txt [default]; "
                              "modify /data/ro.txt [default]; modify /data/ro.txt [default]; "
                              "modify /data/ro.txt [default]; delete /data/readme.txt [default]; "
                              "delete /data/sub/inner.txt [default]");
    /* the host was never written */
    assert_true(host_is("out/old.txt", "old"));
    assert_true(host_is("out/gone.txt", "doomed"));
    assert_true(host_is("out/new.txt", NULL));
    assert_true(host_is("readme.txt", "hello"));
    assert_null(fb_mountfs_failure(f.fs));
    release(&f);
}

static void test_on_denied_modes(void **state)
{
    (void)state;
    fixture f;
    char text[1024];
    /* ignore: the refused create appears to work, and the file is gone once closed */
    open_served(&f, "'onPermissionDenied': 'ignore', 'permissions': {'default': {'read': true, 'list': true}}");
    int fd = try_open("ghost.txt", O_WRONLY | O_CREAT);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "boo", 3), 3);
    close(fd);
    struct stat st;
    assert_int_equal(sys_rc(stat(in_mnt("ghost.txt"), &st)), -ENOENT);
    assert_int_equal(sys_rc(unlink(in_mnt("readme.txt"))), 0); /* pretends */
    read_text("readme.txt", text, sizeof text);
    assert_string_equal(text, "hello");
    write_text("secret.txt", O_TRUNC, "overwritten"); /* pretends: the writes vanish */
    read_text("secret.txt", text, sizeof text);
    assert_string_equal(text, "s3cret");
    finish(&f);
    changes_text(f.fs, true, text, sizeof text);
    assert_string_equal(text, "");
    denials_text(f.fs, text, sizeof text);
    assert_non_null(strstr(text, "create /data/ghost.txt [default]"));
    assert_non_null(strstr(text, "delete /data/readme.txt [default]"));
    release(&f);

    /* virtual: it happens inside the sandbox only */
    open_served(&f, "'onPermissionDenied': 'virtual', 'permissions': {'default': {'read': true, 'list': true}}");
    write_text("virt.txt", O_CREAT, "inside");
    read_text("virt.txt", text, sizeof text);
    assert_string_equal(text, "inside");
    assert_int_equal(sys_rc(unlink(in_mnt("readme.txt"))), 0);
    assert_int_equal(sys_rc(stat(in_mnt("readme.txt"), &st)), -ENOENT);
    finish(&f);
    changes_text(f.fs, true, text, sizeof text);
    assert_string_equal(text, ""); /* neither reported nor synced */
    denials_text(f.fs, text, sizeof text);
    assert_string_equal(text, "create /data/virt.txt [default]; delete /data/readme.txt [default]");
    assert_true(host_is("readme.txt", "hello"));
    release(&f);
}

static int deny_modify(void *ctx, const char *path, const char *operation, char *reason, size_t cap)
{
    (void)ctx;
    if (strcmp(operation, "modify") == 0 && strstr(path, "/data/out/")) {
        snprintf(reason, cap, "frozen");
        return 0;
    }
    return 1;
}

static void test_host_callback(void **state)
{
    (void)state;
    fixture f;
    open_fs(&f, RULES, 1 << 20);
    fb_mountfs_set_check(f.fs, deny_modify, NULL);
    if (!serve(&f)) {
        release(&f);
        skip();
    }
    expect_errno(try_open("out/old.txt", O_WRONLY), EACCES, "modify out/old.txt");
    write_text("out/fresh.txt", O_CREAT, "ok"); /* create: the callback allows it */
    expect_errno(try_open("ro.txt", O_WRONLY), EACCES, "modify ro.txt"); /* the rules refuse first */
    finish(&f);
    char text[1024];
    denials_text(f.fs, text, sizeof text);
    assert_string_equal(text, "modify /data/out/old.txt [callback: frozen]; modify /data/ro.txt [default]");
    changes_text(f.fs, false, text, sizeof text);
    assert_string_equal(text, "created file /data/out/fresh.txt 2 -");
    release(&f);
}

static void test_symlink_policies(void **state)
{
    (void)state;
    char outside[256];
    snprintf(outside, sizeof outside, "%s/outside.txt", g_top);
    FILE *fp = fopen(outside, "w");
    assert_non_null(fp);
    fputs("outside", fp);
    fclose(fp);
    host_link("readme.txt", "in_link");
    host_link(outside, "out_link");
    host_link("../outside.txt", "up_link");
    fixture f;
    char text[256];
    struct stat st;

    /* false: host links are not there */
    open_served(&f, "");
    assert_int_equal(sys_rc(lstat(in_mnt("in_link"), &st)), -ENOENT);
    listing("", text, sizeof text);
    assert_null(strstr(text, "link"));
    release(&f);

    /* restricted: followed while they stay beneath the root, and seen as what they point to */
    open_served(&f, "'security': {'followSymlinks': 'restricted'}");
    read_text("in_link", text, sizeof text);
    assert_string_equal(text, "hello");
    assert_int_equal(sys_rc(lstat(in_mnt("in_link"), &st)), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(sys_rc(lstat(in_mnt("out_link"), &st)), -ENOENT);
    assert_int_equal(sys_rc(lstat(in_mnt("up_link"), &st)), -ENOENT);
    release(&f);

    /* true: links are links, resolved by the caller in its own view */
    open_served(&f, "'security': {'followSymlinks': true}");
    assert_int_equal(sys_rc(lstat(in_mnt("out_link"), &st)), 0);
    assert_true(S_ISLNK(st.st_mode));
    char target[256];
    ssize_t n = readlink(in_mnt("up_link"), target, sizeof target - 1);
    assert_true(n > 0);
    target[n] = '\0';
    assert_string_equal(target, "../outside.txt");
    release(&f);
}

static void test_explicit_loading(void **state)
{
    (void)state;
    fixture f;
    open_served(&f, "'loading': {'mode': 'explicit', 'include': ['*.txt', 'out/old.txt']}");
    char text[256];
    listing("", text, sizeof text);
    assert_string_equal(text, "node_modules out readme.txt ro.txt secret.txt sub"); /* directories stay */
    listing("out", text, sizeof text);
    assert_string_equal(text, "old.txt");
    listing("sub", text, sizeof text);
    assert_string_equal(text, "");
    release(&f);

    /* lazy with maxFileSize: too large is invisible, and listed as skipped once looked at */
    open_served(&f, "'loading': {'maxFileSize': 5}");
    struct stat st;
    assert_int_equal(sys_rc(stat(in_mnt("readme.txt"), &st)), 0);
    assert_int_equal(sys_rc(stat(in_mnt("secret.txt"), &st)), -ENOENT);
    finish(&f);
    skipped_text(f.fs, text, sizeof text);
    assert_string_equal(text, "/data/secret.txt maxFileSize 6");
    release(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_open_missing_host, setup, teardown),
        cmocka_unit_test_setup_teardown(test_eager_limits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_request_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_operations, setup, teardown),
        cmocka_unit_test_setup_teardown(test_on_denied_modes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_host_callback, setup, teardown),
        cmocka_unit_test_setup_teardown(test_symlink_policies, setup, teardown),
        cmocka_unit_test_setup_teardown(test_explicit_loading, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
