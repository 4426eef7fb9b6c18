/* Scratch-space change tracking (fs/track.h) on real temp directories, table-driven: a baseline tree is
 * written to disk and registered (fb_baseline_add / fb_baseline_seal), a case's steps change the tree, and
 * fb_track_scratch must report exactly the created / modified / deleted entries (type, size, mode, content):
 * an identical rewrite is no change; symlinks are reported as symlinks and never followed (a link to a
 * directory outside the root is not walked); mount points (skip) are neither walked nor reported;
 * max_entries bounds the walk. Plus the cases the table cannot express: a FIFO left behind (tracking must
 * not block on it), a directory replaced by a file or a link.
 * The mount side (fb_track_mount), table-driven too: a host tree is written, a mount view opened on it
 * (fs/mountfs.h, not served), its upper layer given entries as the FUSE operations would leave them
 * (fs/overlay.h), and the change list must say what differs from the host now: content, mode or type;
 * deletions only over what the host has; an identical copy, a request file left alone, what was made under
 * "virtual"/"ignore" and excluded paths are no change. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <jansson.h>

#include "request/mount.h"
#include "fs/change.h"
#include "fs/mount.h"
#include "fs/mountfs.h"
#include "fs/overlay.h"
#include "fs/track.h"

#define VROOT "/workspace"

static char g_top[64];                    /* per test: a fresh temp dir */
static char g_root[128], g_outside[128];  /* <top>/root (the scratch area, seen as /workspace), <top>/outside */

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(p);
}

static int setup(void **state)
{
    (void)state;
    snprintf(g_top, sizeof g_top, "/tmp/fnbox-track-test.XXXXXX");
    if (!mkdtemp(g_top))
        return -1;
    snprintf(g_root, sizeof g_root, "%s/root", g_top);
    snprintf(g_outside, sizeof g_outside, "%s/outside", g_top);
    umask(022);
    if (mkdir(g_root, 0755) < 0 || mkdir(g_outside, 0755) < 0)
        return -1;
    /* what a walk that followed a link out would find */
    char p[256];
    snprintf(p, sizeof p, "%s/secret.txt", g_outside);
    FILE *f = fopen(p, "w");
    if (!f)
        return -1;
    fputs("outside", f);
    fclose(f);
    snprintf(p, sizeof p, "%s/sub", g_outside);
    return mkdir(p, 0755);
}

static int teardown(void **state)
{
    (void)state;
    return nftw(g_top, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static const char *in_root(const char *rel)
{
    static char buf[4][8192];
    static int k;
    char *b = buf[k++ % 4];
    snprintf(b, sizeof buf[0], "%s/%s", g_root, rel);
    return b;
}

static void write_file(const char *path, const void *data, size_t len, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    if (fd < 0)
        fail_msg("%s: %s", path, strerror(errno));
    assert_int_equal(write(fd, data, len), (ssize_t)len);
    assert_int_equal(fchmod(fd, mode), 0);
    close(fd);
}

static void mkdirs(const char *rel) /* rel and its parents under the root */
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", rel);
    for (char *p = buf; (p = strchr(p, '/')); p++) {
        *p = '\0';
        if (mkdir(in_root(buf), 0755) < 0 && errno != EEXIST)
            fail_msg("mkdir %s: %s", buf, strerror(errno));
        *p = '/';
    }
    if (mkdir(in_root(buf), 0755) < 0 && errno != EEXIST)
        fail_msg("mkdir %s: %s", buf, strerror(errno));
}

static void parent_dirs(const char *rel)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", rel);
    char *slash = strrchr(buf, '/');
    if (slash) {
        *slash = '\0';
        mkdirs(buf);
    }
}

/* ---- baseline and steps ---- */

typedef struct base_entry {
    const char *rel;   /* relative to the root */
    const char *data;  /* file content; NULL: a directory */
    bool skip;         /* a mount point */
} base_entry;

/* A step on the tree: "w rel content" (write, 0644), "x rel content" (write, mode 0600), "d rel" (mkdir -p),
 * "l rel target" (symlink; "@outside" / "@outside/sub" name the outside dir), "r rel" (unlink),
 * "R rel" (rmdir). */
typedef const char *stepv;

typedef struct track_case {
    const char *label;
    base_entry base[8];
    stepv steps[10];
    const char *want[10];  /* "kind type path size mode content", sorted; NULL-terminated */
    bool no_content;       /* with_content false */
} track_case;

static const track_case cases[] = {
    {"nothing changed", {{"a.txt", "alpha", false}, {"d/x", "x", false}}, {NULL}, {NULL}, false},
    {"empty baseline, empty tree", {{NULL, NULL, false}}, {NULL}, {NULL}, false},
    {"a new file", {{"a.txt", "alpha", false}}, {"w new.txt abc"},
     {"created file /workspace/new.txt 3 644 =abc"}, false},
    {"a new file with its mode", {{NULL, NULL, false}}, {"x private.txt s3cret"},
     {"created file /workspace/private.txt 6 600 =s3cret"}, false},
    {"an empty new file", {{NULL, NULL, false}}, {"w empty "}, {"created file /workspace/empty 0 644 ="}, false},
    {"an identical rewrite is no change", {{"a.txt", "alpha", false}}, {"w a.txt alpha"}, {NULL}, false},
    {"an identical rewrite of an empty file", {{"e", "", false}}, {"w e "}, {NULL}, false},
    {"an identical rewrite with another mode is no change", {{"a.txt", "alpha", false}}, {"x a.txt alpha"},
     {NULL}, false},
    {"modified, longer", {{"a.txt", "alpha", false}}, {"w a.txt alpha!"},
     {"modified file /workspace/a.txt 6 644 =alpha!"}, false},
    {"modified, same size", {{"a.txt", "alpha", false}}, {"w a.txt ALPHA"},
     {"modified file /workspace/a.txt 5 644 =ALPHA"}, false},
    {"modified to empty", {{"a.txt", "alpha", false}}, {"w a.txt "}, {"modified file /workspace/a.txt 0 644 ="},
     false},
    {"an empty file filled", {{"e", "", false}}, {"w e now"}, {"modified file /workspace/e 3 644 =now"}, false},
    {"deleted file (size of the old one)", {{"a.txt", "alpha", false}, {"b.txt", "b", false}}, {"r a.txt"},
     {"deleted file /workspace/a.txt 5 0 -"}, false},
    {"deleted file in a kept dir", {{"d/x", "x", false}, {"d/y", "yy", false}}, {"r d/x"},
     {"deleted file /workspace/d/x 1 0 -"}, false},
    {"deleted dir with its files", {{"d/x", "x", false}, {"d/e/y", "yy", false}},
     {"r d/x", "r d/e/y", "R d/e", "R d"},
     {"deleted directory /workspace/d 0 0 -", "deleted directory /workspace/d/e 0 0 -",
      "deleted file /workspace/d/e/y 2 0 -", "deleted file /workspace/d/x 1 0 -"}, false},
    {"a baseline dir (no file) deleted", {{"empty", NULL, false}}, {"R empty"},
     {"deleted directory /workspace/empty 0 0 -"}, false},
    {"a new dir with a file", {{NULL, NULL, false}}, {"d n/m", "w n/m/f ff"},
     {"created directory /workspace/n 0 755 -", "created directory /workspace/n/m 0 755 -",
      "created file /workspace/n/m/f 2 644 =ff"}, false},
    {"a new file in a baseline dir", {{"d/x", "x", false}}, {"w d/new n"},
     {"created file /workspace/d/new 1 644 =n"}, false},
    {"delete then recreate identical is no change", {{"a.txt", "alpha", false}}, {"r a.txt", "w a.txt alpha"},
     {NULL}, false},
    {"a symlink is a symlink (target as content)", {{NULL, NULL, false}}, {"l ln some/target"},
     {"created symlink /workspace/ln 11 777 =some/target"}, false},
    {"a link to a file outside is not followed", {{NULL, NULL, false}}, {"l out @outside/secret.txt"},
     {"created symlink /workspace/out * 777 =@outside/secret.txt"}, false},
    {"a link to a dir outside is not walked", {{NULL, NULL, false}}, {"l od @outside"},
     {"created symlink /workspace/od * 777 =@outside"}, false},
    {"a link to a dir inside is not walked twice", {{"d/x", "x", false}}, {"l alias d"},
     {"created symlink /workspace/alias 1 777 =d"}, false},
    {"a dangling link", {{NULL, NULL, false}}, {"l dang /nonexistent/x"},
     {"created symlink /workspace/dang 14 777 =/nonexistent/x"}, false},
    {"a baseline file replaced by a link", {{"a.txt", "alpha", false}}, {"r a.txt", "l a.txt @outside/secret.txt"},
     {"modified symlink /workspace/a.txt * 777 =@outside/secret.txt"}, false},
    {"a baseline file replaced by a dir", {{"a.txt", "alpha", false}}, {"r a.txt", "d a.txt", "w a.txt/in i"},
     {"created file /workspace/a.txt/in 1 644 =i", "modified directory /workspace/a.txt 0 755 -"}, false},
    {"a mount point is neither walked nor reported", {{"mnt", NULL, true}}, {"w mnt/f x", "d mnt/sub"},
     {NULL}, false},
    {"a nested mount point: its parents are baseline dirs", {{"a/b/mnt", NULL, true}},
     {"d a/b/mnt/deep", "w a/b/mnt/f x", "w a/b/g g"}, {"created file /workspace/a/b/g 1 644 =g"}, false},
    {"a mount point gone is not a deletion", {{"mnt", NULL, true}, {"f", "f", false}}, {"R mnt"}, {NULL}, false},
    {"a mount point next to a changed file", {{"mnt", NULL, true}, {"mnt2/f", "f", false}},
     {"w mnt/x x", "w mnt2/f F"}, {"modified file /workspace/mnt2/f 1 644 =F"}, false},
    {"hostile names", {{NULL, NULL, false}}, {"w sp\\x20ace x", "w caf\xc3\xa9 x", "w new\\nline x", "w -dash x"},
     {"created file /workspace/-dash 1 644 =x", "created file /workspace/caf\xc3\xa9 1 644 =x",
      "created file /workspace/new\nline 1 644 =x", "created file /workspace/sp ace 1 644 =x"}, false},
    {"without contents", {{"a.txt", "alpha", false}}, {"w a.txt beta", "w n.txt new", "l ln t"},
     {"created file /workspace/n.txt 3 644 -", "created symlink /workspace/ln 1 777 -",
      "modified file /workspace/a.txt 4 644 -"}, true},
};

/* "\\x20" -> ' ', "\\n" -> newline (names in steps are space-separated). */
static void unescape(char *s)
{
    char *o = s;
    for (char *p = s; *p; p++) {
        if (p[0] == '\\' && p[1] == 'x' && p[2] == '2' && p[3] == '0') {
            *o++ = ' ';
            p += 3;
        } else if (p[0] == '\\' && p[1] == 'n') {
            *o++ = '\n';
            p += 1;
        } else {
            *o++ = *p;
        }
    }
    *o = '\0';
}

static void expand_outside(const char *in, char *out, size_t cap)
{
    if (strncmp(in, "@outside", 8) == 0)
        snprintf(out, cap, "%s%s", g_outside, in + 8);
    else
        snprintf(out, cap, "%s", in);
}

static void apply(const char *step)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", step);
    char op = buf[0];
    char *rel = buf + 2;
    char *arg = strchr(rel, ' ');
    if (arg)
        *arg++ = '\0';
    unescape(rel);
    switch (op) {
    case 'w':
    case 'x':
        parent_dirs(rel);
        write_file(in_root(rel), arg ? arg : "", arg ? strlen(arg) : 0, op == 'x' ? 0600 : 0644);
        break;
    case 'd':
        mkdirs(rel);
        break;
    case 'l': {
        char target[512];
        expand_outside(arg, target, sizeof target);
        parent_dirs(rel);
        if (symlink(target, in_root(rel)) < 0)
            fail_msg("symlink %s: %s", rel, strerror(errno));
        break;
    }
    case 'r':
        if (unlink(in_root(rel)) < 0)
            fail_msg("unlink %s: %s", rel, strerror(errno));
        break;
    case 'R':
        if (rmdir(in_root(rel)) < 0)
            fail_msg("rmdir %s: %s", rel, strerror(errno));
        break;
    default:
        fail_msg("bad step %s", step);
    }
}

static void build_baseline(const base_entry *base, fb_baseline *b)
{
    memset(b, 0, sizeof *b);
    for (size_t i = 0; i < 8 && base[i].rel; i++) {
        const base_entry *e = &base[i];
        char vpath[512];
        snprintf(vpath, sizeof vpath, VROOT "/%s", e->rel);
        fb_error err = {0};
        if (e->data) {
            parent_dirs(e->rel);
            write_file(in_root(e->rel), e->data, strlen(e->data), 0644);
        } else {
            mkdirs(e->rel);
        }
        assert_int_equal(fb_baseline_add(b, VROOT, vpath, e->data == NULL, e->skip,
                                          (const unsigned char *)e->data, e->data ? strlen(e->data) : 0, &err),
                         0);
    }
    fb_baseline_seal(b);
}

/* "kind type path size mode content" ('-' for no content; '*' in a wanted size matches any). */
static char *render(const fb_change *c)
{
    char *s = NULL;
    char content[600];
    if (c->has_content) {
        char raw[512];
        snprintf(raw, sizeof raw, "%.*s", (int)c->content_len, c->content ? (const char *)c->content : "");
        /* link targets into the outside dir print as @outside */
        size_t ol = strlen(g_outside);
        if (strncmp(raw, g_outside, ol) == 0)
            snprintf(content, sizeof content, "=@outside%s", raw + ol);
        else
            snprintf(content, sizeof content, "=%s", raw);
    } else {
        snprintf(content, sizeof content, "-");
    }
    if (asprintf(&s, "%s %s %s %llu %o %s", fb_change_kind_name(c->kind), fb_file_type_name(c->type), c->path,
                 (unsigned long long)c->size, (unsigned)c->mode, content) < 0)
        return NULL;
    return s;
}

static bool matches(const char *got, const char *want)
{
    /* the only wildcard: a size written as '*' */
    const char *star = strstr(want, " * ");
    if (!star)
        return strcmp(got, want) == 0;
    size_t pre = (size_t)(star - want) + 1;
    if (strncmp(got, want, pre) != 0)
        return false;
    const char *g = got + pre;
    while (*g >= '0' && *g <= '9')
        g++;
    return g > got + pre && strcmp(g, star + 2) == 0;
}

static int cmp_change(const void *a, const void *b)
{
    return strcmp(((const fb_change *)a)->path, ((const fb_change *)b)->path);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void check_changes(const char *label, fb_change_list *out, const char *const *want_in, size_t nwant)
{
    if (out->n > 1)
        qsort(out->v, out->n, sizeof *out->v, cmp_change);
    char *got[64];
    assert_true(out->n < 64);
    for (size_t i = 0; i < out->n; i++)
        assert_non_null(got[i] = render(&out->v[i]));
    if (out->n > 1)
        qsort(got, out->n, sizeof *got, cmp_str);
    const char *want[16];
    if (nwant)
        memcpy(want, want_in, nwant * sizeof *want);
    if (nwant > 1)
        qsort(want, nwant, sizeof *want, cmp_str);
    bool ok = out->n == nwant;
    for (size_t i = 0; ok && i < nwant; i++)
        ok = matches(got[i], want[i]);
    if (!ok) {
        fprintf(stderr, "[%s] got %zu changes:\n", label, out->n);
        for (size_t i = 0; i < out->n; i++)
            fprintf(stderr, "    %s\n", got[i]);
        fprintf(stderr, "  expected %zu:\n", nwant);
        for (size_t i = 0; i < nwant; i++)
            fprintf(stderr, "    %s\n", want[i]);
    }
    for (size_t i = 0; i < out->n; i++)
        free(got[i]);
    if (!ok)
        fail_msg("[%s] changes differ", label);
}

static void clear_root(void)
{
    nftw(g_root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    assert_int_equal(mkdir(g_root, 0755), 0);
}

static int open_root(void)
{
    int fd = open(g_root, O_PATH | O_DIRECTORY | O_CLOEXEC); /* as the sandbox hands it out */
    assert_true(fd >= 0);
    return fd;
}

static void test_table(void **state)
{
    (void)state;
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        const track_case *tc = &cases[c];
        clear_root();
        fb_baseline b;
        build_baseline(tc->base, &b);
        for (size_t i = 0; i < 10 && tc->steps[i]; i++)
            apply(tc->steps[i]);
        int fd = open_root();
        fb_change_list out = {0};
        fb_error err = {0};
        assert_int_equal(fb_track_scratch(fd, VROOT, &b, !tc->no_content, 100000, &out, &err), 0);
        close(fd);
        size_t nwant = 0;
        while (nwant < 10 && tc->want[nwant])
            nwant++;
        check_changes(tc->label, &out, tc->want, nwant);
        fb_change_list_free(&out);
        fb_baseline_free(&b);
    }
}

static void test_binary_content(void **state)
{
    (void)state;
    static const unsigned char base[] = {0, 1, 2, 0, 255, 0};
    unsigned char now[] = {0, 1, 2, 0, 254, 0};
    write_file(in_root("bin"), base, sizeof base, 0644);
    fb_baseline b = {0};
    fb_error err = {0};
    assert_int_equal(fb_baseline_add(&b, VROOT, VROOT "/bin", false, false, base, sizeof base, &err), 0);
    fb_baseline_seal(&b);
    int fd = open_root();
    fb_change_list out = {0};
    assert_int_equal(fb_track_scratch(fd, VROOT, &b, true, 1000, &out, &err), 0);
    assert_int_equal(out.n, 0); /* NULs compared, not strings */
    write_file(in_root("bin"), now, sizeof now, 0644);
    assert_int_equal(fb_track_scratch(fd, VROOT, &b, true, 1000, &out, &err), 0);
    assert_int_equal(out.n, 1);
    assert_int_equal(out.v[0].kind, FB_CHANGE_MODIFIED);
    assert_true(out.v[0].has_content);
    assert_int_equal(out.v[0].content_len, sizeof now);
    assert_memory_equal(out.v[0].content, now, sizeof now);
    close(fd);
    fb_change_list_free(&out);
    fb_baseline_free(&b);
}

typedef struct budget_case {
    size_t files, max_entries;
} budget_case;

static void test_max_entries(void **state)
{
    (void)state;
    static const budget_case bc[] = {{50, 10}, {50, 50}, {50, 51}, {50, 1}, {50, 0}, {5, 1000}};
    for (size_t c = 0; c < sizeof bc / sizeof *bc; c++) {
        clear_root();
        mkdirs("d");
        char rel[64];
        for (size_t i = 0; i < bc[c].files; i++) {
            snprintf(rel, sizeof rel, "d/f%03zu", i);
            write_file(in_root(rel), "x", 1, 0644);
        }
        fb_baseline b = {0};
        int fd = open_root();
        fb_change_list out = {0};
        fb_error err = {0};
        assert_int_equal(fb_track_scratch(fd, VROOT, &b, true, bc[c].max_entries, &out, &err), 0);
        close(fd);
        size_t total = bc[c].files + 1; /* the dir too */
        size_t want = total < bc[c].max_entries ? total : bc[c].max_entries;
        if (out.n != want)
            fail_msg("%zu files, max_entries %zu: %zu changes, expected %zu", bc[c].files, bc[c].max_entries,
                     out.n, want);
        fb_change_list_free(&out);
        fb_baseline_free(&b);
    }
}

static void test_other_roots_ignored(void **state)
{
    (void)state;
    /* baseline entries of another scratch root (or of a name sharing the prefix) are not "deleted" here */
    fb_baseline b = {0};
    fb_error err = {0};
    static const unsigned char d[] = "x";
    assert_int_equal(fb_baseline_add(&b, "/tmp", "/tmp/t.txt", false, false, d, 1, &err), 0);
    assert_int_equal(fb_baseline_add(&b, "/workspacex", "/workspacex/w.txt", false, false, d, 1, &err), 0);
    assert_int_equal(fb_baseline_add(&b, VROOT, VROOT "/kept", false, false, d, 1, &err), 0);
    fb_baseline_seal(&b);
    write_file(in_root("kept"), "x", 1, 0644);
    int fd = open_root();
    fb_change_list out = {0};
    assert_int_equal(fb_track_scratch(fd, VROOT, &b, true, 1000, &out, &err), 0);
    close(fd);
    check_changes("other roots", &out, NULL, 0);
    fb_change_list_free(&out);
    fb_baseline_free(&b);
}

static void test_baseline_parents(void **state)
{
    (void)state;
    fb_baseline b = {0};
    fb_error err = {0};
    static const unsigned char d[] = "x";
    assert_int_equal(fb_baseline_add(&b, VROOT, VROOT "/a/b/c/f", false, false, d, 1, &err), 0);
    assert_int_equal(fb_baseline_add(&b, VROOT, VROOT "/a/b/g", false, false, d, 1, &err), 0); /* shares parents */
    assert_int_equal(fb_baseline_add(&b, VROOT, VROOT "/a/m", true, true, NULL, 0, &err), 0);
    fb_baseline_seal(&b);
    static const char *const want[] = {VROOT "/a", VROOT "/a/b", VROOT "/a/b/c", VROOT "/a/b/c/f",
                                       VROOT "/a/b/g", VROOT "/a/m"};
    assert_int_equal(b.n, sizeof want / sizeof *want); /* each once, the root itself not */
    for (size_t i = 0; i < b.n; i++) {
        assert_string_equal(b.v[i].path, want[i]);
        assert_int_equal(b.v[i].dir, i != 3 && i != 4);
        assert_int_equal(b.v[i].skip, i == 5);
    }
    fb_baseline_free(&b);
    assert_int_equal(b.n, 0);
}

/* A FIFO left in the scratch space (mkfifo needs no privilege) has no writer once the sandbox is gone:
 * tracking must not open it for reading (that blocks for ever), and reports it without content. The
 * tracking runs in a child with an alarm, so that the bug shows as a failure rather than a hung suite. */
static void test_fifo_does_not_block(void **state)
{
    (void)state;
    assert_int_equal(mkfifo(in_root("pipe"), 0644), 0);
    write_file(in_root("base"), "b", 1, 0644);
    assert_int_equal(unlink(in_root("base")), 0);
    assert_int_equal(mkfifo(in_root("base"), 0644), 0); /* a baseline file replaced by a FIFO */
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        alarm(5);
        fb_baseline b = {0};
        fb_error err = {0};
        static const unsigned char d[] = "b";
        fb_baseline_add(&b, VROOT, VROOT "/base", false, false, d, 1, &err);
        fb_baseline_seal(&b);
        int fd = open(g_root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        fb_change_list out = {0};
        int rc = fb_track_scratch(fd, VROOT, &b, true, 1000, &out, &err);
        _exit(rc == 0 && out.n == 2 ? 0 : 3);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
        fail_msg("fb_track_scratch blocked on a FIFO in the scratch space (open O_RDONLY with no writer): "
                 "fnbox hangs after any call that leaves a FIFO behind");
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

/* A baseline directory replaced by a file or a symlink is a change (the new file's content must be
 * reported: nothing else says it exists); today only the old directory's files show, as deleted. */
static void test_dir_replaced(void **state)
{
    (void)state;
    static const struct {
        const char *label;
        const char *step;
        const char *want;
    } rc[] = {
        {"by a file", "w d file-now", "* file /workspace/d 8 644 =file-now"},
        {"by a symlink", "l d @outside/sub", "* symlink /workspace/d * 777 =@outside/sub"},
    };
    for (size_t c = 0; c < sizeof rc / sizeof *rc; c++) {
        clear_root();
        static const base_entry base[] = {{"d/x", "x", false}, {NULL, NULL, false}};
        fb_baseline b;
        build_baseline(base, &b);
        apply("r d/x");
        apply("R d");
        apply(rc[c].step);
        int fd = open_root();
        fb_change_list out = {0};
        fb_error err = {0};
        assert_int_equal(fb_track_scratch(fd, VROOT, &b, true, 1000, &out, &err), 0);
        close(fd);
        bool found = false, x_deleted = false;
        for (size_t i = 0; i < out.n; i++) {
            char *r = render(&out.v[i]);
            const char *sp = strchr(r, ' ');
            char want_tail[256];
            snprintf(want_tail, sizeof want_tail, "%s", strchr(rc[c].want, ' '));
            if (strcmp(out.v[i].path, VROOT "/d") == 0 && out.v[i].kind != FB_CHANGE_DELETED &&
                matches(sp, want_tail))
                found = true;
            if (strcmp(out.v[i].path, VROOT "/d/x") == 0 && out.v[i].kind == FB_CHANGE_DELETED)
                x_deleted = true;
            free(r);
        }
        assert_true(x_deleted);
        if (!found) {
            for (size_t i = 0; i < out.n; i++) {
                char *r = render(&out.v[i]);
                fprintf(stderr, "    %s\n", r);
                free(r);
            }
            fb_change_list_free(&out);
            fb_baseline_free(&b);
            fail_msg("baseline dir /workspace/d replaced %s: no created/modified change for it", rc[c].label);
        }
        fb_change_list_free(&out);
        fb_baseline_free(&b);
    }
}

/* ---- mounts: the upper layer against the host ---- */

#define MVROOT "/data"

/* An upper-layer step, as the FUSE operations leave the view: "u rel content" (a file, 0644), "U rel
 * content" (a file, 0600), "D rel" (a directory), "L rel target" (a symlink), "W rel" (a whiteout),
 * "v rel content" (a file made under onPermissionDenied "virtual"), "g rel content" (an "ignore" ghost),
 * "q rel content" (a request file, fb_mountfs_add_file), "a rel content" (new content for an existing
 * entry, as a write does). */
static void apply_upper(fb_mountfs *fs, const char *step)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", step);
    char op = buf[0];
    char *rel = buf + 2;
    char *arg = strchr(rel, ' ');
    if (arg)
        *arg++ = '\0';
    size_t len = arg ? strlen(arg) : 0;
    /* the test stands in for the server thread, which is the view's only writer */
    ov_store *ov = (ov_store *)fb_mountfs_upper(fs);
    fb_error err = {0};
    ov_entry *e = NULL;
    switch (op) {
    case 'q':
        assert_int_equal(fb_mountfs_add_file(fs, rel, arg, len, &err), 0);
        return;
    case 'a':
        e = ov_find(ov, rel);
        assert_non_null(e);
        break;
    case 'D':
        assert_non_null(ov_put(ov, rel, OV_DIR, 0755));
        return;
    case 'W':
        assert_non_null(ov_put(ov, rel, OV_WHITEOUT, 0));
        return;
    default:
        e = ov_put(ov, rel, op == 'L' ? OV_SYMLINK : OV_FILE, op == 'L' ? 0777 : op == 'U' ? 0600 : 0644);
        assert_non_null(e);
        e->unreported = op == 'v' || op == 'g';
        e->ghost = op == 'g';
    }
    assert_int_equal(ov_set_data(ov, e, arg, len), 0);
}

typedef struct mount_case {
    const char *label;
    stepv host[6];         /* steps on the host tree (as apply: w, x, d, l) before the view opens */
    stepv upper[6];        /* apply_upper steps */
    const char *want[6];   /* as in track_case, paths under MVROOT */
    bool no_content;
} mount_case;

static const mount_case mount_cases[] = {
    {"nothing made", {"w a.txt alpha"}, {NULL}, {NULL}, false},
    {"a new file", {NULL}, {"u new.txt abc"}, {"created file /data/new.txt 3 644 =abc"}, false},
    {"a new file with its mode", {NULL}, {"U p.txt s3cret"}, {"created file /data/p.txt 6 600 =s3cret"}, false},
    {"a copy identical to the host is no change", {"w a.txt alpha"}, {"u a.txt alpha"}, {NULL}, false},
    {"an empty copy of an empty file", {"w e "}, {"u e "}, {NULL}, false},
    {"modified content", {"w a.txt alpha"}, {"u a.txt ALPHA"}, {"modified file /data/a.txt 5 644 =ALPHA"}, false},
    {"modified mode only", {"w a.txt alpha"}, {"U a.txt alpha"}, {"modified file /data/a.txt 5 600 =alpha"},
     false},
    {"a whiteout over a host file: deleted, its size", {"w a.txt alpha"}, {"W a.txt"},
     {"deleted file /data/a.txt 5 0 -"}, false},
    {"a whiteout over a host directory", {"d sub"}, {"W sub"}, {"deleted directory /data/sub 0 0 -"}, false},
    {"a whiteout over nothing on the host", {NULL}, {"W gone"}, {NULL}, false},
    {"a directory the host has", {"d sub"}, {"D sub"}, {NULL}, false},
    {"a new directory with a file", {NULL}, {"D n", "u n/f ff"},
     {"created directory /data/n 0 755 -", "created file /data/n/f 2 644 =ff"}, false},
    {"a directory where the host has a file", {"w x file"}, {"D x"}, {"modified directory /data/x 0 755 -"},
     false},
    {"a symlink", {NULL}, {"L ln some/target"}, {"created symlink /data/ln 11 777 =some/target"}, false},
    {"a symlink the host has, same target", {"l ln t"}, {"L ln t"}, {NULL}, false},
    {"a symlink the host has, another target", {"l ln t"}, {"L ln u"}, {"modified symlink /data/ln 1 777 =u"},
     false},
    {"made under virtual / ignore: never reported", {"w a.txt alpha"}, {"v v.txt x", "g g.txt y", "v a.txt z"},
     {NULL}, false},
    {"a request file left alone", {NULL}, {"q in/r.txt req"}, {NULL}, false},
    {"a request file rewritten", {NULL}, {"q r.txt req", "a r.txt REQ"}, {"created file /data/r.txt 3 644 =REQ"},
     false},
    {"a request file over a host file, left alone", {"w r.txt host"}, {"q r.txt req"}, {NULL}, false},
    {"excluded paths are never the host's to change", {NULL}, {"u secret new", "D x", "u x/secret s"},
     {"created directory /data/x 0 755 -"}, false},
    {"without contents", {"w a.txt alpha"}, {"u a.txt beta", "u n.txt new", "L ln t"},
     {"created file /data/n.txt 3 644 -", "created symlink /data/ln 1 777 -", "modified file /data/a.txt 4 644 -"},
     true},
};

static void open_view(fb_mount_config *cfg, fb_mountfs **fs)
{
    char text[512];
    snprintf(text, sizeof text, "{\"dirs\": {\"" MVROOT "\": \"%s\"}, \"permissions\": {\"exclude\": [\"secret\"]},"
             " \"security\": {\"followSymlinks\": true}}", g_root);
    json_error_t jerr;
    json_t *j = json_loads(text, 0, &jerr);
    assert_non_null(j);
    fb_error err = {0};
    if (fb_mount_config_parse(j, "mount", cfg, &err) < 0)
        fail_msg("mount config: %s", err.message);
    json_decref(j);
    if (fb_mountfs_open(cfg, &cfg->dirs[0], 1 << 20, fs, &err) < 0)
        fail_msg("mountfs: %s", err.message);
}

static void test_mount_table(void **state)
{
    (void)state;
    for (size_t c = 0; c < sizeof mount_cases / sizeof *mount_cases; c++) {
        const mount_case *mc = &mount_cases[c];
        clear_root();
        for (size_t i = 0; i < 6 && mc->host[i]; i++)
            apply(mc->host[i]);
        fb_mount_config cfg;
        fb_mountfs *fs;
        open_view(&cfg, &fs);
        for (size_t i = 0; i < 6 && mc->upper[i]; i++)
            apply_upper(fs, mc->upper[i]);
        fb_change_list out = {0};
        fb_error err = {0};
        assert_int_equal(fb_track_mount(fs, !mc->no_content, &out, &err), 0);
        size_t nwant = 0;
        while (nwant < 6 && mc->want[nwant])
            nwant++;
        check_changes(mc->label, &out, mc->want, nwant);
        fb_change_list_free(&out);
        fb_mountfs_free(fs);
        fb_mount_config_free(&cfg);
    }
}

/* Both areas end in one list, sorted by path (the result's order, and sync's input order). */
static void test_sort(void **state)
{
    (void)state;
    fb_change_list l = {0};
    fb_error err = {0};
    static const char *const paths[] = {"/tmp/b", "/data/z", "/a", "/data/a/b", "/data/a"};
    for (size_t i = 0; i < sizeof paths / sizeof *paths; i++)
        assert_int_equal(fb_change_add(&l, FB_CHANGE_CREATED, FB_FILE_REGULAR, paths[i], 0, 0644, NULL, 0, false,
                                       &err), 0);
    fb_track_sort(&l);
    static const char *const want[] = {"/a", "/data/a", "/data/a/b", "/data/z", "/tmp/b"};
    for (size_t i = 0; i < l.n; i++)
        assert_string_equal(l.v[i].path, want[i]);
    fb_change_list_free(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_table, setup, teardown),
        cmocka_unit_test_setup_teardown(test_binary_content, setup, teardown),
        cmocka_unit_test_setup_teardown(test_max_entries, setup, teardown),
        cmocka_unit_test_setup_teardown(test_other_roots_ignored, setup, teardown),
        cmocka_unit_test_setup_teardown(test_baseline_parents, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fifo_does_not_block, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dir_replaced, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mount_table, setup, teardown),
        cmocka_unit_test(test_sort),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
