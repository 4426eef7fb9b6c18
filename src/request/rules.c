/* `mount.permissions` (request/rules.h): the JSON walk; fs/rules.c checks and compiles each pattern. */
#include "request/rules.h"

#include <stdio.h>
#include <string.h>

#include "util/json.h"

#define BAD(...) fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, __VA_ARGS__)
#define OPS_EXPECTED "(expected read, list, create, modify, delete or \"*\")"

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
        fb_rules_set_default(r, op, json_is_true(val));
    }
    return 0;
}

/* `allow`/`deny`: "*" or an array of operation names and "*". */
static int parse_ops(const json_t *v, const char *where, unsigned *bits, fb_error *err)
{
    if (json_is_string(v)) {
        if (strcmp(json_string_value(v), "*") != 0)
            return BAD("%s: must be \"*\" or an array of operations, got \"%.64s\"", where, json_string_value(v));
        *bits = FB_OPS_ALL;
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
            *bits = FB_OPS_ALL;
        else if (json_string_length(e) == strlen(name) && fb_op_parse(name, &op) == 0)
            *bits |= 1u << op;
        else
            return BAD("%s[%zu]: unknown operation \"%.64s\" " OPS_EXPECTED, where, i, name);
    }
    return 0;
}

typedef struct rule_fields {
    const json_t *pattern;
    unsigned allow, deny;
    double priority;
} rule_fields;

static int rule_field(const char *key, const json_t *val, const char *where, rule_fields *f, fb_error *err)
{
    char sub[300];
    snprintf(sub, sizeof sub, "%s.%.32s", where, key);
    if (strcmp(key, "pattern") == 0)
        f->pattern = val;
    else if (strcmp(key, "allow") == 0)
        return parse_ops(val, sub, &f->allow, err);
    else if (strcmp(key, "deny") == 0)
        return parse_ops(val, sub, &f->deny, err);
    else if (strcmp(key, "priority") != 0)
        return BAD("%s.%s: unknown field (expected pattern, allow, deny or priority)", where, key);
    else if (fb_json_bignum(val))
        return BAD("%s: out of range", sub);
    else if (!json_is_number(val))
        return BAD("%s: must be a number", sub);
    else
        f->priority = json_number_value(val);
    return 0;
}

static int parse_rule(const json_t *v, const char *field, size_t i, fb_rules *r, fb_error *err)
{
    char where[256], sub[300];
    snprintf(where, sizeof where, "%s.rules[%zu]", field, i);
    if (!json_is_object(v))
        return BAD("%s: must be an object", where);
    rule_fields f = {0};
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)v, key, val) {
        if (rule_field(key, val, where, &f, err) < 0)
            return -1;
    }
    if (!f.pattern)
        return BAD("%s.pattern: required", where);
    snprintf(sub, sizeof sub, "%s.pattern", where);
    if (!json_is_string(f.pattern))
        return BAD("%s: must be a string", sub);
    return fb_rules_add(r, json_string_value(f.pattern), json_string_length(f.pattern), f.allow, f.deny, f.priority,
                        sub, err);
}

static int parse_exclude(const json_t *v, const char *field, size_t i, fb_rules *r, fb_error *err)
{
    char where[256];
    snprintf(where, sizeof where, "%s.exclude[%zu]", field, i);
    if (!json_is_string(v))
        return BAD("%s: must be a string", where);
    return fb_rules_add_exclude(r, json_string_value(v), json_string_length(v), where, err);
}

typedef int (*item_parser)(const json_t *v, const char *field, size_t i, fb_rules *r, fb_error *err);

static int parse_list(const json_t *v, const char *field, const char *name, item_parser parse, fb_rules *r,
                      fb_error *err)
{
    if (!json_is_array(v))
        return BAD("%s.%s: must be an array", field, name);
    for (size_t i = 0; i < json_array_size(v); i++)
        if (parse(json_array_get(v, i), field, i, r, err) < 0)
            return -1;
    return 0;
}

static int parse_object(const json_t *perm, const char *field, fb_rules *r, fb_error *err)
{
    if (!json_is_object(perm))
        return BAD("%s: must be an object", field);
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)perm, key, val) {
        int rc;
        if (strcmp(key, "default") == 0)
            rc = parse_default(val, field, r, err);
        else if (strcmp(key, "rules") == 0)
            rc = parse_list(val, field, "rules", parse_rule, r, err);
        else if (strcmp(key, "exclude") == 0)
            rc = parse_list(val, field, "exclude", parse_exclude, r, err);
        else
            rc = BAD("%s.%s: unknown field (expected default, rules or exclude)", field, key);
        if (rc < 0)
            return -1;
    }
    return 0;
}

int fb_rules_parse(const json_t *perm, const char *field, fb_rules **out, fb_error *err)
{
    *out = NULL;
    fb_rules *r = fb_rules_new(err);
    if (!r) {
        fb_wrap_error(err, "%s", field);
        return -1;
    }
    if (perm && parse_object(perm, field, r, err) < 0) {
        fb_rules_free(r);
        return -1;
    }
    fb_rules_seal(r);
    *out = r;
    return 0;
}
