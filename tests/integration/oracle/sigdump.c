/* sigdump: what the signature scanners (src/lang/<language>_infer.c) find, for the oracle test
 * (tests/integration/test_infer_oracle.py), which compares it with each language's own parser.
 *
 * stdin:  a JSON array of {"language": "python|javascript|ruby|php", "code": "..."}
 * stdout: a JSON array, one entry per input, of the top-level functions found in source order:
 *         [{"name", "line", "async", "params": [{"name", "kind", "default", "annotation", "keys"}]}]
 *         kind: positional, positional_only, keyword_only, var_positional, var_keyword, destructured;
 *         default / annotation: the source text or null; keys: a destructured object's names or null.
 *         An input the scanner fails on (out of memory) gives {"error": "..."}.
 * Built by `make unit` into $(BUILD)/tests/oracle/sigdump, against the library under test. */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "lang/signature.h"

typedef int (*infer_fn)(const char *code, size_t len, fb_sig_list *out, fb_error *err);

static const struct {
    const char *name;
    infer_fn infer;
} LANGS[] = {
    {"python", fb_infer_python},
    {"javascript", fb_infer_javascript},
    {"ruby", fb_infer_ruby},
    {"php", fb_infer_php},
};

static const char *const KINDS[] = {
    [FB_PARAM_POSITIONAL] = "positional",         [FB_PARAM_POSITIONAL_ONLY] = "positional_only",
    [FB_PARAM_KEYWORD_ONLY] = "keyword_only",     [FB_PARAM_VAR_POSITIONAL] = "var_positional",
    [FB_PARAM_VAR_KEYWORD] = "var_keyword",       [FB_PARAM_DESTRUCTURED] = "destructured",
};

static json_t *text_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

static json_t *dump_param(const fb_param *p)
{
    json_t *keys = json_null();
    if (p->keys) {
        keys = json_array();
        for (size_t i = 0; i < p->nkeys; i++)
            json_array_append_new(keys, json_string(p->keys[i]));
    }
    return json_pack("{s:o,s:s,s:o,s:o,s:o}", "name", text_or_null(p->name), "kind", KINDS[p->kind], "default",
                     p->has_default ? text_or_null(p->default_text ? p->default_text : "") : json_null(),
                     "annotation", text_or_null(p->annotation), "keys", keys);
}

static json_t *dump_source(const char *lang, const char *code, size_t len)
{
    infer_fn infer = NULL;
    for (size_t i = 0; i < sizeof LANGS / sizeof LANGS[0]; i++)
        if (strcmp(LANGS[i].name, lang) == 0)
            infer = LANGS[i].infer;
    if (!infer)
        return json_pack("{s:s}", "error", "unknown language");
    fb_sig_list list = {0};
    fb_error err = {0};
    if (infer(code, len, &list, &err) != 0)
        return json_pack("{s:s}", "error", err.message);
    json_t *funcs = json_array();
    for (size_t i = 0; i < list.nfuncs; i++) {
        const fb_function_sig *f = &list.funcs[i];
        json_t *params = json_array();
        for (size_t j = 0; j < f->nparams; j++)
            json_array_append_new(params, dump_param(&f->params[j]));
        json_array_append_new(funcs, json_pack("{s:o,s:i,s:b,s:o}", "name", text_or_null(f->name), "line", f->line,
                                               "async", f->is_async, "params", params));
    }
    fb_sig_list_free(&list);
    return funcs;
}

int main(void)
{
    json_error_t jerr;
    json_t *in = json_loadf(stdin, 0, &jerr);
    if (!json_is_array(in)) {
        fprintf(stderr, "sigdump: stdin is not a JSON array: %s\n", jerr.text);
        return 2;
    }
    json_t *out = json_array();
    size_t i;
    json_t *item;
    json_array_foreach(in, i, item) {
        const char *lang = json_string_value(json_object_get(item, "language"));
        json_t *code = json_object_get(item, "code");
        if (!lang || !json_is_string(code)) {
            fprintf(stderr, "sigdump: entry %zu needs a language and a code string\n", i);
            return 2;
        }
        json_array_append_new(out, dump_source(lang, json_string_value(code), json_string_length(code)));
    }
    int rc = json_dumpf(out, stdout, JSON_COMPACT | JSON_ENSURE_ASCII) == 0 ? 0 : 1;
    json_decref(out);
    json_decref(in);
    return rc;
}
