/* Mount permission rules; see rules.h for the decision order. Parsing is strict and names the field of
 * every rejection; deciding allocates nothing and fails closed (a path it cannot judge is denied). */
#include "fs/rules.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs/glob.h"
#include "util/json.h"

#define BAD(...) fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, __VA_ARGS__)
#define ALL_OPS ((1u << FB_OP_COUNT) - 1)
#define OPS_EXPECTED "(expected read, list, create, modify, delete or \"*\")"
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
    size_t nexcludes;
    rule *rules; /* by descending priority, then declaration order */
    size_t nrules;
    bool any_anchored;
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

/* ---- parsing ---- */

static int parse_default(const json_t *v, const char *field, fb_rules *r, fb_error *err)
{
    if (!json_is_object(v))
        return BAD("%s.default: must be an object", field);
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)v, key, val) {
        fb_op op;
        if (fb_op_parse(key, &op) < 0)
            return BAD("%s.default.%s: unknown field (expected read, list, create, modify or delete)", field, key);
        if (!json_is_boolean(val))
            return BAD("%s.default.%s: must be a boolean", field, key);
        r->defaults[op] = json_is_true(val);
    }
    return 0;
}

/* `allow`/`deny`: "*" or an array of operation names and "*". */
static int parse_ops(const json_t *v, const char *where, unsigned *bits, fb_error *err)
{
    if (json_is_string(v)) {
        if (strcmp(json_string_value(v), "*") != 0)
            return BAD("%s: must be \"*\" or an array of operations, got \"%.64s\"", where, json_string_value(v));
        *bits = ALL_OPS;
        return 0;
    }
    if (!json_is_array(v))
        return BAD("%s: must be \"*\" or an array of operations", where);
    size_t i;
    json_t *e;
    json_array_foreach(v, i, e) {
        if (!json_is_string(e))
            return BAD("%s[%zu]: must be a string " OPS_EXPECTED, where, i);
        const char *name = json_string_value(e);
        fb_op op;
        if (strcmp(name, "*") == 0)
            *bits = ALL_OPS;
        else if (json_string_length(e) == strlen(name) && fb_op_parse(name, &op) == 0)
            *bits |= 1u << op;
        else
            return BAD("%s[%zu]: unknown operation \"%.64s\" " OPS_EXPECTED, where, i, name);
    }
    return 0;
}

/* A pattern string: non-empty, no NUL, not a minimatch comment, no extglob syntax. Its text, or NULL
 * with err set. */
static const char *check_pattern(const json_t *v, const char *where, fb_error *err)
{
    if (!json_is_string(v)) {
        BAD("%s: must be a string", where);
        return NULL;
    }
    const char *p = json_string_value(v);
    size_t len = json_string_length(v);
    if (len == 0)
        BAD("%s: must not be empty", where);
    else if (strlen(p) != len)
        BAD("%s: must not contain a NUL character", where);
    else if (p[0] == '#')
        BAD("%s: a pattern starting with '#' is a comment in minimatch and matches nothing; "
            "write \\# for a literal #", where);
    else if (fb_glob_has_extglob(p, len))
        BAD("%s: extglob syntax such as @(a|b) is not supported; escape the character before '(' "
            "to mean it literally", where);
    else
        return p;
    return NULL;
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

static int parse_rule(const json_t *v, const char *field, size_t i, rule *out, fb_error *err)
{
    char where[256];
    snprintf(where, sizeof where, "%s.rules[%zu]", field, i);
    if (!json_is_object(v))
        return BAD("%s: must be an object", where);
    const json_t *pat = NULL;
    const char *key;
    json_t *val;
    char sub[300];
    json_object_foreach((json_t *)v, key, val) {
        snprintf(sub, sizeof sub, "%s.%.32s", where, key);
        if (strcmp(key, "pattern") == 0) {
            pat = val;
        } else if (strcmp(key, "allow") == 0) {
            if (parse_ops(val, sub, &out->allow, err) < 0)
                return -1;
        } else if (strcmp(key, "deny") == 0) {
            if (parse_ops(val, sub, &out->deny, err) < 0)
                return -1;
        } else if (strcmp(key, "priority") == 0) {
            if (fb_json_bignum(val))
                return BAD("%s: out of range", sub);
            if (!json_is_number(val))
                return BAD("%s: must be a number", sub);
            out->priority = json_number_value(val);
        } else {
            return BAD("%s.%s: unknown field (expected pattern, allow, deny or priority)", where, key);
        }
    }
    if (!pat)
        return BAD("%s.pattern: required", where);
    snprintf(sub, sizeof sub, "%s.pattern", where);
    const char *p = check_pattern(pat, sub, err);
    if (!p || compile_into(p, sub, &out->glob, err) < 0)
        return -1;
    out->anchored = is_anchored(p);
    out->index = i;
    if (asprintf(&out->desc, "rules[%zu] \"%s\"", i, p) < 0) {
        out->desc = NULL;
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, 12 /* ENOMEM */, "%s", where);
    }
    return 0;
}

/* An exclude entry: a name (no '/' but trailing ones) denies `** /name` and what is beneath; a path
 * pattern denies itself and what is beneath. */
static int parse_exclude(const json_t *v, const char *field, size_t i, rule *out, fb_error *err)
{
    char where[256];
    snprintf(where, sizeof where, "%s.exclude[%zu]", field, i);
    const char *p = check_pattern(v, where, err);
    if (!p)
        return -1;
    if (p[0] == '!')
        return BAD("%s: negation ('!') is not supported in exclude", where);
    size_t len = strlen(p);
    while (len > 0 && p[len - 1] == '/')
        len--;
    if (len == 0)
        return BAD("%s: must name a file, a directory or a pattern", where);
    bool name = memchr(p, '/', len) == NULL;
    char *self = NULL, *below = NULL;
    int rc = -1;
    if (asprintf(&self, "%s%.*s", name ? "**/" : "", (int)len, p) < 0) {
        self = NULL;
        goto nomem;
    }
    if (asprintf(&below, "%s/**", self) < 0) {
        below = NULL;
        goto nomem;
    }
    if (compile_into(self, where, &out->glob, err) < 0 || compile_into(below, where, &out->beneath, err) < 0)
        goto out;
    out->anchored = !name && p[0] == '/';
    out->allow = 0;
    out->deny = ALL_OPS;
    out->index = i;
    if (asprintf(&out->desc, "exclude \"%s\"", p) < 0) {
        out->desc = NULL;
        goto nomem;
    }
    rc = 0;
    goto out;
nomem:
    fb_set_error(err, FB_ERR_OUT_OF_MEMORY, 12 /* ENOMEM */, "%s", where);
out:
    free(self);
    free(below);
    return rc;
}

typedef int (*item_parser)(const json_t *v, const char *field, size_t i, rule *out, fb_error *err);

static int parse_list(const json_t *v, const char *field, const char *name, item_parser parse, rule **out,
                      size_t *n, fb_error *err)
{
    if (!json_is_array(v))
        return BAD("%s.%s: must be an array", field, name);
    size_t count = json_array_size(v);
    *out = calloc(count ? count : 1, sizeof **out);
    if (!*out)
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, 12 /* ENOMEM */, "%s.%s", field, name);
    for (*n = 0; *n < count; (*n)++)
        if (parse(json_array_get(v, *n), field, *n, &(*out)[*n], err) < 0) {
            (*n)++; /* the failed one may hold partial allocations */
            return -1;
        }
    return 0;
}

static int by_priority(const void *a, const void *b)
{
    const rule *x = a, *y = b;
    if (x->priority != y->priority)
        return x->priority > y->priority ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

int fb_rules_parse(const json_t *perm, const char *field, fb_rules **out, fb_error *err)
{
    *out = NULL;
    fb_rules *r = calloc(1, sizeof *r);
    if (!r)
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, 12 /* ENOMEM */, "%s", field);
    r->defaults[FB_OP_READ] = r->defaults[FB_OP_LIST] = true;
    if (perm) {
        if (!json_is_object(perm)) {
            BAD("%s: must be an object", field);
            goto fail;
        }
        const char *key;
        json_t *val;
        json_object_foreach((json_t *)perm, key, val) {
            int rc;
            if (strcmp(key, "default") == 0)
                rc = parse_default(val, field, r, err);
            else if (strcmp(key, "rules") == 0)
                rc = parse_list(val, field, "rules", parse_rule, &r->rules, &r->nrules, err);
            else if (strcmp(key, "exclude") == 0)
                rc = parse_list(val, field, "exclude", parse_exclude, &r->excludes, &r->nexcludes, err);
            else
                rc = BAD("%s.%s: unknown field (expected default, rules or exclude)", field, key);
            if (rc < 0)
                goto fail;
        }
    }
    if (r->nrules > 1)
        qsort(r->rules, r->nrules, sizeof *r->rules, by_priority);
    for (size_t i = 0; i < r->nrules; i++)
        r->any_anchored = r->any_anchored || r->rules[i].anchored;
    for (size_t i = 0; i < r->nexcludes; i++)
        r->any_anchored = r->any_anchored || r->excludes[i].anchored;
    *out = r;
    return 0;
fail:
    fb_rules_free(r);
    return -1;
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
    return r && rel && rel[0] != '/' && rel_ok(rel) && (!r->any_anchored || full_path(full, cap, root, rel));
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
