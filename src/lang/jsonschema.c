/* Signature -> JSON Schema. Types come from the request schema, else the annotation (Python/PHP syntax),
 * else the default's source text; nothing here runs or fully parses user code. */
#include "lang/jsonschema.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/json.h"

#define MAX_ANN_DEPTH 16 /* List[List[...]]: deeper annotations are just "any" */
#define MAX_UNION 16

typedef struct alias {
    const char *name;
    unsigned bit;
} alias;

static const alias k_aliases[] = {
    {"string", FB_JT_STRING},   {"str", FB_JT_STRING},        {"number", FB_JT_NUMBER},
    {"float", FB_JT_NUMBER},    {"double", FB_JT_NUMBER},     {"decimal", FB_JT_NUMBER},
    {"integer", FB_JT_INTEGER}, {"int", FB_JT_INTEGER},       {"long", FB_JT_INTEGER},
    {"boolean", FB_JT_BOOLEAN}, {"bool", FB_JT_BOOLEAN},      {"true", FB_JT_BOOLEAN},
    {"false", FB_JT_BOOLEAN},   {"array", FB_JT_ARRAY},       {"list", FB_JT_ARRAY},
    {"tuple", FB_JT_ARRAY},     {"set", FB_JT_ARRAY},         {"frozenset", FB_JT_ARRAY},
    {"sequence", FB_JT_ARRAY},  {"iterable", FB_JT_ARRAY},    {"object", FB_JT_OBJECT},
    {"dict", FB_JT_OBJECT},     {"mapping", FB_JT_OBJECT},    {"map", FB_JT_OBJECT},
    {"hash", FB_JT_OBJECT},     {"null", FB_JT_NULL},         {"none", FB_JT_NULL},
    {"nonetype", FB_JT_NULL},   {"nil", FB_JT_NULL},          {"void", FB_JT_NULL},
    {"any", FB_JT_ANY},         {"mixed", FB_JT_ANY},
};

static const char *const k_names[] = {"string", "number", "integer", "boolean", "array", "object", "null"};

unsigned fb_jt_from_name(const char *name)
{
    for (size_t i = 0; i < sizeof k_aliases / sizeof *k_aliases; i++)
        if (strcasecmp(name, k_aliases[i].name) == 0)
            return k_aliases[i].bit;
    return 0;
}

const char *fb_jt_name(unsigned bit)
{
    for (unsigned i = 0; i < 7; i++)
        if (bit == 1U << i)
            return k_names[i];
    return "any";
}

int fb_jt_parse(const json_t *type, unsigned *mask, const char **bad)
{
    *mask = 0;
    *bad = NULL;
    if (!type) {
        *mask = FB_JT_ANY;
        return 0;
    }
    if (json_is_string(type)) {
        *mask = fb_jt_from_name(json_string_value(type));
        if (!*mask)
            *bad = json_string_value(type);
        return *mask ? 0 : -1;
    }
    if (!json_is_array(type) || json_array_size(type) == 0) {
        *bad = "(not a name or a list of names)";
        return -1;
    }
    for (size_t i = 0; i < json_array_size(type); i++) {
        json_t *t = json_array_get(type, i);
        unsigned b = json_is_string(t) ? fb_jt_from_name(json_string_value(t)) : 0;
        if (!b) {
            *bad = json_is_string(t) ? json_string_value(t) : "(not a name)";
            return -1;
        }
        *mask |= b;
    }
    return 0;
}

const char *fb_json_type_of(const json_t *v)
{
    const char *big = fb_json_bignum(v);
    if (big)
        return strpbrk(big, ".eE") ? "number" : "integer";
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "object";
    case JSON_ARRAY: return "array";
    case JSON_STRING: return "string";
    case JSON_INTEGER: return "integer";
    case JSON_REAL: {
        double d = json_real_value(v);
        return isfinite(d) && d == floor(d) ? "integer" : "number";
    }
    case JSON_TRUE:
    case JSON_FALSE: return "boolean";
    default: return "null";
    }
}

const char *fb_jt_describe(unsigned mask, char *buf, size_t size)
{
    if (mask == FB_JT_ANY || mask == 0) {
        snprintf(buf, size, "any");
        return buf;
    }
    size_t n = 0;
    buf[0] = '\0';
    for (unsigned i = 0; i < 7 && n < size; i++)
        if (mask & (1U << i))
            n += (size_t)snprintf(buf + n, size - n, "%s%s", n ? " or " : "", k_names[i]);
    return buf;
}

json_t *fb_schema_param_spec(json_t *schema, const char *name)
{
    json_t *list = json_object_get(schema, "params");
    if (!list)
        list = json_object_get(schema, "input");
    if (json_is_object(list)) {
        json_t *spec = json_object_get(list, name);
        return json_is_object(spec) ? spec : NULL;
    }
    for (size_t i = 0; i < json_array_size(list); i++) {
        json_t *spec = json_array_get(list, i);
        const char *n = json_string_value(json_object_get(spec, "name"));
        if (n && strcmp(n, name) == 0)
            return spec;
    }
    return NULL;
}

/* ---- annotations ---- */

typedef struct seg {
    const char *s;
    size_t n;
} seg;

static seg trim(const char *s, size_t n)
{
    while (n && isspace((unsigned char)*s))
        s++, n--;
    while (n && isspace((unsigned char)s[n - 1]))
        n--;
    return (seg){s, n};
}

/* Splits at `sep` outside brackets and quotes. Returns the number of parts (at most max). */
static size_t split(seg in, char sep, seg *out, size_t max)
{
    size_t k = 0, start = 0;
    int depth = 0;
    char quote = 0;
    for (size_t i = 0; i <= in.n && k < max; i++) {
        char c = i < in.n ? in.s[i] : sep;
        if (quote) {
            if (c == quote)
                quote = 0;
            continue;
        }
        if (i < in.n && (c == '\'' || c == '"'))
            quote = c;
        else if (c == '[' || c == '(' || c == '<' || c == '{')
            depth++;
        else if (c == ']' || c == ')' || c == '>' || c == '}')
            depth--;
        else if (c == sep && depth == 0) {
            out[k++] = trim(in.s + start, i - start);
            start = i + 1;
        }
    }
    return k;
}

static json_t *type_frag(unsigned bit)
{
    return bit == FB_JT_ANY || bit == 0 ? json_object() : json_pack("{s:s}", "type", fb_jt_name(bit));
}

/* Adds "null" to a fragment's type (a fragment without a type already admits null). */
static json_t *make_nullable(json_t *frag)
{
    if (!frag)
        return NULL;
    json_t *t = json_object_get(frag, "type");
    if (json_is_string(t)) {
        if (strcmp(json_string_value(t), "null") != 0)
            json_object_set_new(frag, "type", json_pack("[Os]", t, "null"));
    } else if (json_is_array(t)) {
        bool has = false;
        for (size_t i = 0; i < json_array_size(t); i++)
            has |= strcmp(json_string_value(json_array_get(t, i)), "null") == 0;
        if (!has)
            json_array_append_new(t, json_string("null"));
    }
    return frag;
}

static json_t *annotation(seg a, int depth);

/* A union of parts: X | None is a nullable X; several simple types become a type list; anything else is
 * "any". */
static json_t *union_of(const seg *parts, size_t n, int depth)
{
    bool null = false;
    size_t other = 0, which = 0;
    for (size_t i = 0; i < n; i++) {
        char name[32];
        if (parts[i].n > 0 && parts[i].n < sizeof name) {
            memcpy(name, parts[i].s, parts[i].n);
            name[parts[i].n] = '\0';
            if (fb_jt_from_name(name) == FB_JT_NULL) {
                null = true;
                continue;
            }
        }
        other++;
        which = i;
    }
    if (other == 1) {
        json_t *f = annotation(parts[which], depth + 1);
        return null ? make_nullable(f) : f;
    }
    json_t *types = json_array();
    for (size_t i = 0; types && i < n; i++) {
        json_t *f = annotation(parts[i], depth + 1);
        json_t *t = json_object_get(f, "type");
        bool simple = json_is_string(t) && json_object_size(f) == 1;
        if (simple)
            json_array_append(types, t);
        json_decref(f);
        if (!simple) {
            json_decref(types);
            return json_object();
        }
    }
    return types ? json_pack("{s:o}", "type", types) : NULL;
}

static json_t *annotation(seg a, int depth)
{
    a = trim(a.s, a.n);
    if (depth > MAX_ANN_DEPTH || a.n == 0)
        return json_object();
    if (a.n >= 2 && (a.s[0] == '\'' || a.s[0] == '"') && a.s[a.n - 1] == a.s[0])
        return annotation((seg){a.s + 1, a.n - 2}, depth + 1);
    if (a.s[0] == '?')
        return make_nullable(annotation((seg){a.s + 1, a.n - 1}, depth + 1));
    seg parts[MAX_UNION];
    size_t np = split(a, '|', parts, MAX_UNION);
    if (np > 1)
        return union_of(parts, np, depth);
    while (a.n && a.s[0] == '\\') /* PHP: \int, \Foo\Bar */
        a.s++, a.n--;
    static const char *const prefixes[] = {"typing.", "t.", "collections.abc."};
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++) {
        size_t pl = strlen(prefixes[i]);
        if (a.n > pl && strncmp(a.s, prefixes[i], pl) == 0)
            a.s += pl, a.n -= pl;
    }
    const char *br = memchr(a.s, '[', a.n);
    size_t name_len = br ? (size_t)(br - a.s) : a.n;
    char name[32];
    if (name_len == 0 || name_len >= sizeof name)
        return json_object();
    memcpy(name, a.s, name_len);
    name[name_len] = '\0';
    unsigned bit = fb_jt_from_name(name);
    if (!br)
        return type_frag(bit);
    if (a.s[a.n - 1] != ']')
        return json_object();
    seg inner = {br + 1, a.n - name_len - 2};
    seg args[MAX_UNION];
    size_t na = split(inner, ',', args, MAX_UNION);
    if (strcmp(name, "Optional") == 0)
        return make_nullable(annotation(inner, depth + 1));
    if (strcmp(name, "Union") == 0)
        return union_of(args, na, depth);
    if (strcmp(name, "Annotated") == 0 && na >= 1)
        return annotation(args[0], depth + 1);
    json_t *f = type_frag(bit);
    if (!f || (bit != FB_JT_ARRAY && bit != FB_JT_OBJECT))
        return f;
    bool homogeneous = bit == FB_JT_ARRAY && (na == 1 || (na == 2 && args[1].n == 3 && memcmp(args[1].s, "...", 3) == 0));
    json_t *item = homogeneous ? annotation(args[0], depth + 1) : bit == FB_JT_OBJECT && na == 2 ? annotation(args[1], depth + 1) : NULL;
    if (item && json_object_size(item) > 0)
        json_object_set(f, bit == FB_JT_ARRAY ? "items" : "additionalProperties", item);
    json_decref(item);
    return f;
}

json_t *fb_schema_from_annotation(const char *text)
{
    return annotation((seg){text, text ? strlen(text) : 0}, 0);
}

/* ---- defaults ---- */

typedef struct keyword {
    const char *text;
    unsigned type;
    int value; /* 0 false, 1 true, 2 null, -1 no JSON value */
} keyword;

static const keyword k_keywords[] = {
    {"True", FB_JT_BOOLEAN, 1},  {"False", FB_JT_BOOLEAN, 0}, {"None", FB_JT_NULL, 2},
    {"true", FB_JT_BOOLEAN, 1},  {"false", FB_JT_BOOLEAN, 0}, {"null", FB_JT_NULL, 2},
    {"TRUE", FB_JT_BOOLEAN, 1},  {"FALSE", FB_JT_BOOLEAN, 0}, {"NULL", FB_JT_NULL, 2},
    {"nil", FB_JT_NULL, 2},      {"undefined", 0, -1},
};

static bool only_chars(seg s, const char *set)
{
    for (size_t i = 0; i < s.n; i++)
        if (!strchr(set, s.s[i]))
            return false;
    return s.n > 0;
}

static bool has_any(seg s, const char *set)
{
    for (size_t i = 0; i < s.n; i++)
        if (strchr(set, s.s[i]))
            return true;
    return false;
}

static bool starts(seg s, const char *prefix)
{
    size_t n = strlen(prefix);
    return s.n >= n && strncasecmp(s.s, prefix, n) == 0;
}

/* The type of a default that is not a JSON literal, from its first characters. */
static unsigned type_of_text(seg s)
{
    static const struct {
        const char *prefix;
        unsigned type;
    } calls[] = {{"array(", FB_JT_ARRAY}, {"list(", FB_JT_ARRAY}, {"tuple(", FB_JT_ARRAY}, {"set(", FB_JT_ARRAY},
                 {"dict(", FB_JT_OBJECT}};
    char c = s.s[0];
    bool prefixed = strchr("bfrFRBu", c) && s.n > 1 && (s.s[1] == '"' || s.s[1] == '\''); /* f"..", b'..' */
    if (c == '"' || prefixed)
        return FB_JT_STRING;
    if (c == ':' && s.n > 1 && (isalpha((unsigned char)s.s[1]) || s.s[1] == '_' || s.s[1] == '"'))
        return FB_JT_STRING; /* Ruby symbol */
    if (c == '[' || c == '(') {
        for (size_t i = 0; i + 1 < s.n; i++)
            if (s.s[i] == '=' && s.s[i + 1] == '>')
                return FB_JT_OBJECT; /* PHP ['k' => v] is an associative array */
        return FB_JT_ARRAY;
    }
    if (c == '{')
        return FB_JT_OBJECT;
    for (size_t i = 0; i < sizeof calls / sizeof *calls; i++)
        if (starts(s, calls[i].prefix))
            return calls[i].type;
    if (only_chars(s, "+-0123456789_"))
        return FB_JT_INTEGER;
    if (only_chars(s, "+-0123456789_.eE") && has_any(s, "0123456789"))
        return FB_JT_NUMBER;
    if (s.n > 2 && c == '0' && strchr("xXoObB", s.s[1]) && only_chars((seg){s.s + 2, s.n - 2}, "0123456789abcdefABCDEF_"))
        return FB_JT_INTEGER;
    return 0;
}

void fb_schema_from_default(const char *text, unsigned *type, json_t **value)
{
    *type = 0;
    *value = NULL;
    if (!text)
        return;
    seg s = trim(text, strlen(text));
    if (s.n == 0)
        return;
    for (size_t i = 0; i < sizeof k_keywords / sizeof *k_keywords; i++)
        if (strlen(k_keywords[i].text) == s.n && memcmp(k_keywords[i].text, s.s, s.n) == 0) {
            *type = k_keywords[i].type;
            *value = k_keywords[i].value == 2 ? json_null() : k_keywords[i].value >= 0 ? json_boolean(k_keywords[i].value) : NULL;
            return;
        }
    json_error_t jerr;
    json_t *v = fb_json_loadb(s.s, s.n, JSON_DECODE_ANY, &jerr);
    if (v) {
        *type = fb_jt_from_name(fb_json_type_of(v));
        if (json_is_real(v) && *type == FB_JT_INTEGER && !has_any(s, "eE"))
            *type = FB_JT_NUMBER; /* 2.0 in source means a float */
        *value = v;
        return;
    }
    char c = s.s[0];
    if (c == '\'' || c == '`') {
        /* 'text' (Python, Ruby, PHP, JS) or `text` (JS) without escapes or interpolation: a plain string */
        *type = FB_JT_STRING;
        if (s.n >= 2 && s.s[s.n - 1] == c && !memchr(s.s + 1, c, s.n - 2) && !memchr(s.s, '\\', s.n) &&
            !(c == '`' && memchr(s.s, '$', s.n)))
            *value = json_stringn(s.s + 1, s.n - 2);
        return;
    }
    *type = type_of_text(s);
}

/* ---- doc comments ---- */

char *fb_doc_summary(const char *doc)
{
    if (!doc)
        return strdup("");
    size_t n = strlen(doc);
    char *out = malloc(n + 1);
    if (!out)
        return NULL;
    size_t k = 0;
    const char *p = doc;
    while (*p) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        seg line = trim(p, len);
        bool section = line.n && (line.s[0] == '@' || line.s[0] == ':' || (line.n == 5 && strncmp(line.s, "Args:", 5) == 0));
        if (section)
            break; /* tags, reST fields and Google sections are not the summary */
        if (line.n == 0) {
            if (k > 0)
                break; /* a blank line ends the first paragraph */
        } else {
            if (k > 0)
                out[k++] = ' ';
            memcpy(out + k, line.s, line.n);
            k += line.n;
        }
        p = eol ? eol + 1 : p + len;
    }
    out[k] = '\0';
    return out;
}

static bool word_is(seg w, const char *name)
{
    if (w.n && w.s[0] == '$')
        w.s++, w.n--;
    if (w.n && w.s[0] == '[') /* JSDoc optional [name=default] */
        w.s++, w.n--;
    const char *stop = NULL;
    for (size_t i = 0; i < w.n && !stop; i++)
        if (w.s[i] == '=' || w.s[i] == ']' || w.s[i] == ':')
            stop = w.s + i;
    if (stop)
        w.n = (size_t)(stop - w.s);
    return strlen(name) == w.n && memcmp(w.s, name, w.n) == 0;
}

static seg next_word(seg *rest)
{
    seg r = trim(rest->s, rest->n);
    size_t i = 0;
    if (r.n && r.s[0] == '{') { /* {type} */
        int depth = 0;
        for (; i < r.n; i++) {
            depth += r.s[i] == '{' ? 1 : r.s[i] == '}' ? -1 : 0;
            if (depth == 0) {
                i++;
                break;
            }
        }
    } else {
        while (i < r.n && !isspace((unsigned char)r.s[i]))
            i++;
    }
    *rest = (seg){r.s + i, r.n - i};
    return (seg){r.s, i};
}

static char *desc_from(seg rest)
{
    rest = trim(rest.s, rest.n);
    if (rest.n && (rest.s[0] == '-' || rest.s[0] == ':'))
        rest = trim(rest.s + 1, rest.n - 1);
    return rest.n ? strndup(rest.s, rest.n) : NULL;
}

char *fb_doc_param(const char *doc, const char *name)
{
    if (!doc || !name)
        return NULL;
    bool in_args = false;
    for (const char *p = doc; *p;) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        bool indented = len > 0 && isspace((unsigned char)p[0]);
        seg line = trim(p, len);
        p = eol ? eol + 1 : p + len;
        seg rest = line;
        if (line.n > 6 && strncmp(line.s, "@param", 6) == 0) { /* JSDoc / PHPDoc: @param [{type}|type] [$]name desc */
            rest = (seg){line.s + 6, line.n - 6};
            seg w = next_word(&rest);
            if (w.n && w.s[0] == '{')
                w = next_word(&rest);
            if (!word_is(w, name)) {
                seg w2 = next_word(&rest); /* PHPDoc: the type comes first */
                if (!(w2.n && w2.s[0] == '$' && word_is(w2, name)))
                    continue;
            }
            return desc_from(rest);
        }
        if (line.n > 7 && strncmp(line.s, ":param ", 7) == 0) { /* reST: :param [type] name: desc */
            const char *colon = memchr(line.s + 7, ':', line.n - 7);
            if (!colon)
                continue;
            seg head = trim(line.s + 7, (size_t)(colon - line.s) - 7);
            const char *sp = head.n ? memrchr(head.s, ' ', head.n) : NULL;
            seg nm = sp ? (seg){sp + 1, head.n - (size_t)(sp + 1 - head.s)} : head;
            if (word_is(nm, name))
                return desc_from((seg){colon + 1, line.n - (size_t)(colon + 1 - line.s)});
            continue;
        }
        if (line.n == 5 && strncmp(line.s, "Args:", 5) == 0) { /* Google style */
            in_args = true;
            continue;
        }
        if (in_args && line.n && !indented && line.s[line.n - 1] == ':')
            in_args = false;
        if (in_args && line.n) {
            const char *colon = memchr(line.s, ':', line.n);
            if (!colon)
                continue;
            seg head = trim(line.s, (size_t)(colon - line.s));
            const char *paren = memchr(head.s, '(', head.n); /* name (type): desc */
            if (paren)
                head = trim(head.s, (size_t)(paren - head.s));
            if (word_is(head, name))
                return desc_from((seg){colon + 1, line.n - (size_t)(colon + 1 - line.s)});
        }
    }
    return NULL;
}

/* ---- the parameters object ---- */

static const char *const k_copied[] = {"description", "default", "enum", "items", "properties",
                                       "additionalProperties", "minimum", "maximum", "minLength", "maxLength",
                                       "pattern", "format", "examples"};

/* The property of a parameter the request schema declares: its keywords, with type names made canonical. */
static json_t *from_spec(json_t *spec)
{
    json_t *prop = json_object();
    if (!prop || !spec)
        return prop;
    for (size_t i = 0; i < sizeof k_copied / sizeof *k_copied; i++) {
        json_t *v = json_object_get(spec, k_copied[i]);
        if (v)
            json_object_set(prop, k_copied[i], v);
    }
    json_t *type = json_object_get(spec, "type");
    unsigned mask;
    const char *bad;
    if (type && fb_jt_parse(type, &mask, &bad) == 0) {
        if (mask != FB_JT_ANY) {
            json_t *names = json_array();
            for (unsigned i = 0; names && i < 7; i++)
                if (mask & (1U << i))
                    json_array_append_new(names, json_string(k_names[i]));
            if (names && json_array_size(names) == 1)
                json_object_set(prop, "type", json_array_get(names, 0));
            else if (names)
                json_object_set(prop, "type", names);
            json_decref(names);
        }
    } else if (type) {
        json_object_set(prop, "type", type); /* not ours to judge here; strict mode refuses it */
    }
    if (json_is_true(json_object_get(spec, "nullable")))
        make_nullable(prop);
    return prop;
}

static json_t *from_source(const fb_param *p)
{
    json_t *prop = p->annotation ? fb_schema_from_annotation(p->annotation) : json_object();
    if (!prop)
        return NULL;
    unsigned t;
    json_t *v;
    fb_schema_from_default(p->has_default ? p->default_text : NULL, &t, &v);
    if (!json_object_get(prop, "type") && t && t != FB_JT_NULL && t != FB_JT_ANY)
        json_object_set_new(prop, "type", json_string(fb_jt_name(t)));
    if (v) {
        if (json_is_null(v))
            make_nullable(prop); /* `x: int = None` takes None too */
        json_object_set_new(prop, "default", v);
    }
    if (p->kind == FB_PARAM_DESTRUCTURED && p->keys) {
        json_t *keys = json_object();
        for (size_t i = 0; keys && i < p->nkeys; i++)
            json_object_set_new(keys, p->keys[i], json_object());
        json_object_set_new(prop, "type", json_string("object"));
        json_object_set_new(prop, "properties", keys ? keys : json_object());
    } else if (p->kind == FB_PARAM_DESTRUCTURED) {
        json_object_set_new(prop, "type", json_string("array"));
    }
    return prop;
}

json_t *fb_sig_jsonschema(const fb_function_sig *sig, json_t *schema, const char *doc, const char **note,
                          fb_error *err)
{
    json_t *props = json_object(), *required = json_array();
    json_t *out = props && required ? json_pack("{s:s,s:O,s:O}", "type", "object", "properties", props,
                                                "required", required) : NULL;
    bool var_kw = false;
    *note = NULL;
    for (size_t i = 0; out && i < sig->nparams; i++) {
        const fb_param *p = &sig->params[i];
        if (p->kind == FB_PARAM_VAR_POSITIONAL) {
            *note = "Also takes extra positional arguments (variadic), which are not listed as parameters.";
            continue;
        }
        if (p->kind == FB_PARAM_VAR_KEYWORD) {
            var_kw = true;
            continue;
        }
        if (!p->name || !*p->name)
            continue;
        json_t *prop = schema ? from_spec(fb_schema_param_spec(schema, p->name)) : from_source(p);
        if (prop && !json_object_get(prop, "description")) {
            char *d = fb_doc_param(doc, p->name);
            if (d)
                json_object_set_new(prop, "description", json_string(d));
            free(d);
        }
        if (!prop || json_object_set_new(props, p->name, prop) < 0 ||
            (!p->has_default && json_array_append_new(required, json_string(p->name)) < 0)) {
            json_decref(out);
            out = NULL;
        }
    }
    if (out && var_kw)
        json_object_set_new(out, "additionalProperties", json_true());
    json_decref(props);
    json_decref(required);
    if (!out)
        fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "out of memory building the JSON Schema");
    return out;
}
