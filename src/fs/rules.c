/* Mount permission rules; see rules.h for the decision order. Building checks every pattern and names
 * the field of every rejection (request/rules.c decodes the JSON); deciding allocates nothing and fails
 * closed (a path it cannot judge is denied). */
#include "fs/rules.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs/glob.h"

#define BAD(...) fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, __VA_ARGS__)
#define MAX_FULL_PATH 8192 /* virtual root + "/" + relative path; longer ones are denied */

static const char *const op_names[FB_OP_COUNT] = {"read", "list", "create", "modify", "delete"};

typedef struct rule {
    fb_glob *glob;
    fb_glob *beneath; /* exclude entries: what lies beneath a match */
    bool anchored;    /* matched against the full virtual path */
    unsigned allow, deny; /* 1 << fb_op */
    double priority;
    size_t index;     /* declaration index */
    char *desc;       /* for denied[].rule */
} rule;

struct fb_rules {
    bool defaults[FB_OP_COUNT];
    rule *excludes;
    size_t nexcludes, excludes_cap;
    rule *rules; /* by descending priority, then declaration order, once sealed */
    size_t nrules, rules_cap;
    bool any_anchored;
    bool sealed;  /* deciding on an unsealed set fails closed (denies) */
};

const char *fb_op_name(fb_op op)
{
    return (unsigned)op < FB_OP_COUNT ? op_names[op] : "?";
}

int fb_op_parse(const char *name, fb_op *op)
{
    for (int i = 0; i < FB_OP_COUNT; i++) {
        if (strcmp(name, op_names[i]) == 0) {
            *op = (fb_op)i;
            return 0;
        }
    }
    return -1;
}

static void rule_clear(rule *r)
{
    fb_glob_free(r->glob);
    fb_glob_free(r->beneath);
    free(r->desc);
}

void fb_rules_free(fb_rules *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->nexcludes; i++)
        rule_clear(&r->excludes[i]);
    for (size_t i = 0; i < r->nrules; i++)
        rule_clear(&r->rules[i]);
    free(r->excludes);
    free(r->rules);
    free(r);
}

/* ---- building ---- */

fb_rules *fb_rules_new(fb_error *err)
{
    fb_rules *r = calloc(1, sizeof *r);
    if (!r) {
        fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "permission rules");
        return NULL;
    }
    r->defaults[FB_OP_READ] = r->defaults[FB_OP_LIST] = true;
    return r;
}

void fb_rules_set_default(fb_rules *r, fb_op op, bool allowed)
{
    if ((unsigned)op < FB_OP_COUNT)
        r->defaults[op] = allowed;
}

/* A pattern: non-empty, no NUL, not a minimatch comment, no extglob syntax. */
static int check_pattern(const char *p, size_t len, const char *where, fb_error *err)
{
    if (len == 0)
        return BAD("%s: must not be empty", where);
    if (strlen(p) != len)
        return BAD("%s: must not contain a NUL character", where);
    if (p[0] == '#')
        return BAD("%s: a pattern starting with '#' is a comment in minimatch and matches nothing; "
                   "write \\# for a literal #", where);
    if (fb_glob_has_extglob(p, len))
        return BAD("%s: extglob syntax such as @(a|b) is not supported; escape the character before '(' "
                   "to mean it literally", where);
    return 0;
}

static int compile_into(const char *pattern, const char *where, fb_glob **out, fb_error *err)
{
    *out = fb_glob_compile(pattern, err);
    if (!*out) {
        if (err && err->kind == FB_ERR_INVALID_PATTERN)
            err->kind = FB_ERR_INVALID_REQUEST;
        return fb_wrap_error(err, "%s", where);
    }
    return 0;
}

static bool is_anchored(const char *p)
{
    while (*p == '!')
        p++;
    return *p == '/';
}

/* Room for one more entry in *v (n used, *cap allocated). */
static int grow(rule **v, size_t n, size_t *cap, const char *where, fb_error *err)
{
    if (n < *cap)
        return 0;
    size_t ncap = *cap ? *cap * 2 : 4;
    rule *nv = realloc(*v, ncap * sizeof *nv);
    if (!nv)
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "%s", where);
    *v = nv;
    *cap = ncap;
    return 0;
}

int fb_rules_add(fb_rules *r, const char *pattern, size_t len, unsigned allow, unsigned deny, double priority,
                 const char *where, fb_error *err)
{
    rule ru = {.allow = allow & FB_OPS_ALL, .deny = deny & FB_OPS_ALL, .priority = priority, .index = r->nrules};
    if (check_pattern(pattern, len, where, err) < 0 || grow(&r->rules, r->nrules, &r->rules_cap, where, err) < 0 ||
        compile_into(pattern, where, &ru.glob, err) < 0)
        return -1;
    ru.anchored = is_anchored(pattern);
    if (asprintf(&ru.desc, "rules[%zu] \"%s\"", ru.index, pattern) < 0) {
        ru.desc = NULL;
        rule_clear(&ru);
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "%s", where);
    }
    r->rules[r->nrules++] = ru;
    r->sealed = false;
    return 0;
}

/* An exclude entry: a name (no '/' but trailing ones) denies `** /name` and what is beneath; a path
 * pattern denies itself and what is beneath. */
static int exclude_globs(const char *p, size_t len, bool name, const char *where, rule *out, fb_error *err)
{
    char *self = NULL, *below = NULL;
    int rc = -1;
    if (asprintf(&self, "%s%.*s", name ? "**/" : "", (int)len, p) < 0)
        self = NULL;
    else if (asprintf(&below, "%s/**", self) < 0)
        below = NULL;
    if (!self || !below)
        fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "%s", where);
    else if (compile_into(self, where, &out->glob, err) == 0 && compile_into(below, where, &out->beneath, err) == 0)
        rc = 0;
    free(self);
    free(below);
    return rc;
}

int fb_rules_add_exclude(fb_rules *r, const char *pattern, size_t plen, const char *where, fb_error *err)
{
    if (check_pattern(pattern, plen, where, err) < 0)
        return -1;
    if (pattern[0] == '!')
        return BAD("%s: negation ('!') is not supported in exclude", where);
    size_t len = plen;
    while (len > 0 && pattern[len - 1] == '/')
        len--;
    if (len == 0)
        return BAD("%s: must name a file, a directory or a pattern", where);
    bool name = memchr(pattern, '/', len) == NULL;
    rule ru = {.deny = FB_OPS_ALL, .index = r->nexcludes, .anchored = !name && pattern[0] == '/'};
    if (grow(&r->excludes, r->nexcludes, &r->excludes_cap, where, err) < 0 ||
        exclude_globs(pattern, len, name, where, &ru, err) < 0) {
        rule_clear(&ru);
        return -1;
    }
    if (asprintf(&ru.desc, "exclude \"%s\"", pattern) < 0) {
        ru.desc = NULL;
        rule_clear(&ru);
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "%s", where);
    }
    r->excludes[r->nexcludes++] = ru;
    return 0;
}

static int by_priority(const void *a, const void *b)
{
    const rule *x = a, *y = b;
    if (x->priority != y->priority)
        return x->priority > y->priority ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

void fb_rules_seal(fb_rules *r)
{
    if (r->nrules > 1)
        qsort(r->rules, r->nrules, sizeof *r->rules, by_priority);
    r->any_anchored = false;
    for (size_t i = 0; i < r->nrules; i++)
        r->any_anchored = r->any_anchored || r->rules[i].anchored;
    for (size_t i = 0; i < r->nexcludes; i++)
        r->any_anchored = r->any_anchored || r->excludes[i].anchored;
    r->sealed = true;
}

/* ---- deciding ---- */

/* "" or segments joined by single slashes, none of them "." or "..". */
static bool rel_ok(const char *rel)
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

/* virtual_root + "/" + rel, the root without trailing slashes; false if it does not fit. */
static bool full_path(char *buf, size_t cap, const char *root, const char *rel)
{
    size_t n = root ? strlen(root) : 0;
    while (n > 0 && root[n - 1] == '/')
        n--;
    int k = *rel ? snprintf(buf, cap, "%.*s/%s", (int)n, root ? root : "", rel)
                 : snprintf(buf, cap, "%.*s", (int)n, root ? root : "");
    if (k < 0 || (size_t)k >= cap)
        return false;
    if (k == 0)
        snprintf(buf, cap, "/");
    return true;
}

static bool rule_hits(const rule *ru, const char *rel, const char *full)
{
    const char *subject = ru->anchored ? full : rel;
    return fb_glob_test(ru->glob, subject) || (ru->beneath && fb_glob_test(ru->beneath, subject));
}

/* The first exclude entry hitting rel (NULL if none); full is the virtual path when any rule is anchored. */
static const rule *exclude_hit(const fb_rules *r, const char *rel, const char *full)
{
    for (size_t i = 0; i < r->nexcludes; i++)
        if (rule_hits(&r->excludes[i], rel, full))
            return &r->excludes[i];
    return NULL;
}

/* Whether rel can be judged: normalized, and its full virtual path (when a rule needs it) fits full. */
static bool judgeable(const fb_rules *r, const char *root, const char *rel, char *full, size_t cap)
{
    return r && r->sealed && rel && rel[0] != '/' && rel_ok(rel) &&
           (!r->any_anchored || full_path(full, cap, root, rel));
}

bool fb_rules_has_excludes(const fb_rules *r)
{
    return r && r->nexcludes > 0;
}

bool fb_rules_excluded(const fb_rules *r, const char *virtual_root, const char *rel_path, const char **rule_out)
{
    static const char invalid[] = "invalid path";
    const char *unused;
    if (!rule_out)
        rule_out = &unused;
    char full[MAX_FULL_PATH] = "";
    if (!judgeable(r, virtual_root, rel_path, full, sizeof full)) {
        *rule_out = invalid;
        return true;
    }
    const rule *hit = exclude_hit(r, rel_path, full);
    *rule_out = hit ? hit->desc : NULL;
    return hit != NULL;
}

bool fb_rules_allows(const fb_rules *r, const char *virtual_root, const char *rel_path, fb_op op,
                     const char **rule_out)
{
    static const char invalid[] = "invalid path";
    const char *unused;
    if (!rule_out)
        rule_out = &unused;
    char full[MAX_FULL_PATH] = "";
    if ((unsigned)op >= FB_OP_COUNT || !judgeable(r, virtual_root, rel_path, full, sizeof full)) {
        *rule_out = invalid;
        return false;
    }
    unsigned bit = 1u << op;
    const rule *hit = exclude_hit(r, rel_path, full);
    if (hit) {
        *rule_out = hit->desc;
        return false;
    }
    for (size_t i = 0; i < r->nrules; i++) {
        const rule *ru = &r->rules[i];
        if (((ru->allow | ru->deny) & bit) && rule_hits(ru, rel_path, full)) {
            *rule_out = ru->desc;
            return !(ru->deny & bit);
        }
    }
    *rule_out = "default";
    return r->defaults[op];
}
