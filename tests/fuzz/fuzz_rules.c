/* Fuzz target: the permission rule engine (fs/rules.h). Input: a permissions JSON document (the request's
 * `mount.permissions`), a line "--", then lines: a first line starting with '/' is the mount's virtual
 * root (default "/data"), every other line a path relative to it:
 *
 *   {"rules": [{"pattern": "output/[a-z]*.txt", "allow": ["create"]}], "exclude": ["node_modules"]}
 *   --
 *   /data
 *   output/a.txt
 *   a/node_modules/x
 *
 * Each path is decided for every operation (and one invalid operation). Checked: no crash, leak or UB;
 * a refused object is an "InvalidRequest" naming mount.permissions; every decision names its rule
 * (default, invalid path, exclude "...", rules[i] "..."), the same with and without rule_out; a path that
 * is not normalized, or an invalid operation, is denied as `invalid path`; an exclude never allows. */
#include "fuzz_common.h"

#include "request/rules.h"

#define MAX_PATHS 16

static bool rel_normalized(const char *rel)
{
    if (!*rel)
        return true;
    for (const char *s = rel;;) {
        const char *e = strchr(s, '/');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        if (n == 0 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
            return false;
        if (!e)
            return true;
        s = e + 1;
    }
}

static void decide(const fb_rules *r, const char *root, const char *rel)
{
    bool valid = rel_normalized(rel);
    for (int op = 0; op <= FB_OP_COUNT; op++) {
        const char *rule = NULL;
        bool ok = fb_rules_allows(r, root, rel, (fb_op)op, &rule);
        FUZZ_CHECK(rule != NULL, "no deciding rule for %s on '%s'", fb_op_name((fb_op)op), rel);
        if (op == FB_OP_READ) /* once: every decision may cost a glob test per rule */
            FUZZ_CHECK(fb_rules_allows(r, root, rel, (fb_op)op, NULL) == ok, "rule_out changes the answer");
        FUZZ_CHECK(strcmp(rule, "default") == 0 || strcmp(rule, "invalid path") == 0 ||
                       strncmp(rule, "rules[", 6) == 0 || strncmp(rule, "exclude \"", 9) == 0,
                   "odd rule '%s'", rule);
        if (!valid || op == FB_OP_COUNT)
            FUZZ_CHECK(!ok && strcmp(rule, "invalid path") == 0, "'%s' (%s) judged by %s", rel,
                       fb_op_name((fb_op)op), rule);
        if (strncmp(rule, "exclude \"", 9) == 0)
            FUZZ_CHECK(!ok, "an exclude allowed %s on '%s'", fb_op_name((fb_op)op), rel);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_piece pc[2] = {{0}};
    size_t n = fuzz_split(data, size, pc, 2);
    json_t *perm = fuzz_json(pc[0]);
    if (!perm && pc[0].n > 0)
        return 0; /* malformed JSON: nothing of ours to test */
    fb_rules *r = (fb_rules *)1;
    fb_error err = {0};
    if (fb_rules_parse(perm, "mount.permissions", &r, &err) < 0) {
        FUZZ_CHECK(r == NULL, "a refused object left rules behind");
        FUZZ_CHECK(strncmp(err.message, "mount.permissions", 17) == 0, "message '%s' names no field",
                   err.message);
        FUZZ_CHECK(strcmp(fb_error_type(&err), "InvalidRequest") == 0 || err.kind == FB_ERR_OUT_OF_MEMORY,
                   "error type %s", fb_error_type(&err));
        json_decref(perm);
        return 0;
    }
    FUZZ_CHECK(r != NULL, "parsed to NULL");
    fuzz_piece lines = n > 1 ? pc[1] : (fuzz_piece){0};
    char *root = NULL;
    for (int i = 0; i < MAX_PATHS; i++) {
        char *line = fuzz_next_line(&lines);
        if (!line)
            break;
        if (i == 0 && line[0] == '/') {
            root = line;
            continue;
        }
        decide(r, root ? root : "/data", line);
        free(line);
    }
    if (!n || n == 1) {
        decide(r, "/data", "");
        decide(r, "/data", "a/b.txt");
    }
    free(root);
    fb_rules_free(r);
    json_decref(perm);
    return 0;
}
