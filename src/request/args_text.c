/* A request's arguments kept as its text (args_text.h). */
#include "request/args_text.h"

#include <stdlib.h>
#include <string.h>

#include "util/json_scan.h"

/* The root's members: a key spelled with escapes ("\u0061rgs") is not recognised, and that field is then
 * decoded by jansson with the rest of the request, which is only slower. */
static int root_member(void *ctx, const char *key, size_t key_len, const char *value, size_t value_len)
{
    fb_args_spans *sp = ctx;
    if (key_len == 4 && memcmp(key, "args", 4) == 0)
        sp->args = value, sp->args_len = value_len;
    else if (key_len == 6 && memcmp(key, "kwargs", 6) == 0)
        sp->kwargs = value, sp->kwargs_len = value_len;
    return 0;
}

/* Only an array or object is left out of the skeleton (a stand-in of its kind keeps the field's type). */
static bool container(const char *v)
{
    return v && (v[0] == '[' || v[0] == '{');
}

bool fb_args_text_scan(const char *text, size_t len, fb_args_spans *sp)
{
    memset(sp, 0, sizeof *sp);
    size_t i = 0;
    while (i < len && strchr(" \t\n\r", text[i]) && text[i])
        i++;
    if (i == len || text[i] != '{')
        return false;
    fb_json_scan scan = {.reject_duplicates = true, .member = root_member, .ctx = sp};
    if (fb_json_scan_text(text, len, &scan) < 0) {
        memset(sp, 0, sizeof *sp);
        return false;
    }
    return true;
}

bool fb_args_text_any(const fb_args_spans *sp)
{
    return container(sp->args) || container(sp->kwargs);
}

char *fb_args_text_skeleton(const char *text, size_t len, const fb_args_spans *sp, size_t *out_len)
{
    const struct {
        const char *at;
        size_t len;
        const char *stand_in;
    } cut[2] = {{container(sp->args) ? sp->args : NULL, sp->args_len, sp->args && sp->args[0] == '{' ? "{}" : "[]"},
                {container(sp->kwargs) ? sp->kwargs : NULL, sp->kwargs_len, sp->kwargs && sp->kwargs[0] == '{' ? "{}" : "[]"}};
    int first = cut[1].at && (!cut[0].at || cut[1].at < cut[0].at); /* the one earlier in the text */
    char *out = malloc(len + 1);
    if (!out)
        return NULL;
    size_t o = 0, from = 0;
    for (int k = 0; k < 2; k++) {
        int c = k == 0 ? first : !first;
        if (!cut[c].at)
            continue;
        size_t at = (size_t)(cut[c].at - text);
        memcpy(out + o, text + from, at - from);
        o += at - from;
        memcpy(out + o, cut[c].stand_in, 2);
        o += 2;
        from = at + cut[c].len;
    }
    memcpy(out + o, text + from, len - from);
    o += len - from;
    out[o] = '\0';
    *out_len = o;
    return out;
}

/* The values of the top-level array or object at text, each a reference to its text or (when small) its
 * value, into a new array or object. */
typedef struct collect {
    json_t *into;
    fb_json_texts *texts;
    bool failed;
} collect;

/* Below this, a value costs less decoded than a reference would save, and stays a value like any other
 * (a null too: hole-filling tests it). */
#define TEXT_MIN_BYTES 256

static json_t *value_of(collect *c, const char *value, size_t len)
{
    if (len < TEXT_MIN_BYTES)
        return fb_json_loadb(value, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
    return fb_json_texts_ref(c->texts, value, len);
}

static int collect_member(void *ctx, const char *key, size_t key_len, const char *value, size_t value_len)
{
    collect *c = ctx;
    json_t *v = value_of(c, value, value_len);
    int rc = -1;
    if (v && !key) {
        rc = json_array_append_new(c->into, v);
    } else if (v) {
        /* the key as jansson decodes it: its text with the quotes around it (valid: scanned) */
        json_t *k = json_loadb(key - 1, key_len + 2, JSON_DECODE_ANY, NULL);
        rc = json_is_string(k) ? json_object_set_new(c->into, json_string_value(k), v) : (json_decref(v), -1);
        json_decref(k);
    }
    c->failed |= rc < 0;
    return rc < 0 ? 1 : 0;
}

static json_t *references(const char *text, size_t len, fb_json_texts *texts, bool *big_int)
{
    collect c = {.into = text[0] == '[' ? json_array() : json_object(), .texts = texts};
    fb_json_scan scan = {.member = collect_member, .ctx = &c};
    if (!c.into || fb_json_scan_text(text, len, &scan) < 0) {
        json_decref(c.into);
        return NULL;
    }
    *big_int |= scan.big_int;
    return c.into;
}

int fb_args_text_take(const fb_args_spans *sp, const fb_lang_driver *lang, bool schema, fb_json_texts *texts,
                      json_t **args, json_t **kwargs)
{
    *args = *kwargs = NULL;
    /* the v0.2 object form of args names slots and parameters: decoded as a tree */
    if (!lang->args_as_text || schema || (sp->args && sp->args[0] != '[') || (sp->kwargs && sp->kwargs[0] != '{') ||
        (!sp->args && !sp->kwargs))
        return 0;
    bool big_int = false;
    *args = sp->args ? references(sp->args, sp->args_len, texts, &big_int) : json_array();
    *kwargs = sp->kwargs ? references(sp->kwargs, sp->kwargs_len, texts, &big_int) : json_object();
    if (!*args || !*kwargs) {
        json_decref(*args);
        json_decref(*kwargs);
        *args = *kwargs = NULL;
        return -1;
    }
    if (lang->args_as_text(big_int, json_object_size(*kwargs) > 0))
        return 1;
    json_decref(*args);
    json_decref(*kwargs);
    *args = *kwargs = NULL;
    texts->n = 0; /* the references are gone with them */
    return 0;
}

static int restore(json_t *root, const char *key, const char *text, size_t len)
{
    if (!container(text))
        return 0;
    json_t *v = fb_json_loadb(text, len, JSON_ALLOW_NUL, NULL);
    return v ? json_object_set_new(root, key, v) : -1;
}

int fb_args_text_restore(json_t *root, const fb_args_spans *sp)
{
    return restore(root, "args", sp->args, sp->args_len) < 0 || restore(root, "kwargs", sp->kwargs, sp->kwargs_len) < 0
               ? -1
               : 0;
}
