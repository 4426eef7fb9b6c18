/* Fuzz target: the mount config parser (fs/mount.h, fb_mount_config_parse). Input: a `mount` JSON
 * document, a line "--", then lines, each a virtual path to look up with fb_mount_find (and decide with
 * the parsed permissions when it lies in a mount):
 *
 *   {"dirs": {"/data": "/tmp"}, "permissions": {"default": {"create": true}}}
 *   --
 *   /data/a.txt
 *   /elsewhere
 *
 * Host paths go through realpath(3) and stat(2) on this machine: only reads, whatever the input. Checked:
 * no crash, leak or UB; a refused object is an error naming `mount`; a parsed config has dirs sorted and
 * never nested, absolute canonical host paths and rules; fb_mount_find answers a mount that contains the
 * path and, for a path without "//", a relative rest without a leading '/'. */
#include "fuzz_common.h"

#include "request/mount.h"

#define MAX_PATHS 16

static void check_config(const fb_mount_config *m)
{
    FUZZ_CHECK(m->ndirs > 0 && m->rules, "parsed without dirs or rules");
    for (size_t i = 0; i < m->ndirs; i++) {
        const fb_mount_dir *d = &m->dirs[i];
        FUZZ_CHECK(d->virtual_path[0] == '/' && d->virtual_path[1] != '\0', "virtual path '%s'",
                   d->virtual_path);
        FUZZ_CHECK(d->host_path[0] == '/', "host path '%s' not absolute", d->host_path);
        if (i > 0)
            FUZZ_CHECK(strcmp(m->dirs[i - 1].virtual_path, d->virtual_path) < 0, "dirs not sorted");
    }
    for (size_t i = 0; i < m->ninclude; i++)
        FUZZ_CHECK(m->include[i] && m->include[i][0], "empty include pattern");
}

static void lookup(const fb_mount_config *m, const char *vpath)
{
    const char *rel = NULL;
    const fb_mount_dir *d = fb_mount_find(m, vpath, &rel);
    FUZZ_CHECK(fb_mount_find(m, vpath, NULL) == d, "rel changes the answer");
    if (!d)
        return;
    size_t n = strlen(d->virtual_path);
    FUZZ_CHECK(strncmp(vpath, d->virtual_path, n) == 0, "'%s' is not under %s", vpath, d->virtual_path);
    FUZZ_CHECK(rel != NULL, "no rel for '%s'", vpath);
    /* Callers pass normalized paths (sync.c checks first, request/files.c normalizes): only there is
     * "never a leading slash" promised; "/data//x" gives "/x", which fb_rules_allows denies as an invalid
     * path. */
    if (!strstr(vpath, "//"))
        FUZZ_CHECK(rel[0] != '/', "rel '%s' of '%s'", rel, vpath);
    for (int op = 0; op < FB_OP_COUNT; op++) {
        const char *rule = NULL;
        (void)fb_rules_allows(m->rules, d->virtual_path, rel, (fb_op)op, &rule);
        FUZZ_CHECK(rule != NULL, "no deciding rule");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_piece pc[2] = {{0}};
    size_t n = fuzz_split(data, size, pc, 2);
    json_t *mount = fuzz_json(pc[0]);
    if (!mount)
        return 0;
    fb_mount_config m;
    fb_error err = {0};
    if (fb_mount_config_parse(mount, "mount", &m, &err) < 0) {
        FUZZ_CHECK(fb_error_type(&err)[0] && strncmp(err.message, "mount", 5) == 0, "error %s '%s' names no field",
                   fb_error_type(&err), err.message);
        FUZZ_CHECK(!m.dirs && !m.rules && !m.include, "a refused config left data behind");
        json_decref(mount);
        return 0;
    }
    check_config(&m);
    fuzz_piece lines = n > 1 ? pc[1] : (fuzz_piece){0};
    for (int i = 0; i < MAX_PATHS; i++) {
        char *line = fuzz_next_line(&lines);
        if (!line)
            break;
        lookup(&m, line);
        free(line);
    }
    for (size_t i = 0; i < m.ndirs; i++)
        lookup(&m, m.dirs[i].virtual_path);
    fb_mount_config_free(&m);
    json_decref(mount);
    return 0;
}
