/* Signature -> JSON Schema: tables of annotations, default texts, doc comments and whole signatures (inferred
 * from source or declared by a request schema) with the JSON Schema expected. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lang/jsonschema.h"
#include "lang/plan.h"
#include "lang/signature.h"

/* Compares a JSON value with the expected JSON text (key order ignored). */
static void assert_json(const char *label, json_t *got, const char *want_text)
{
    json_error_t jerr;
    json_t *want = json_loads(want_text, JSON_DECODE_ANY, &jerr);
    if (!want)
        fail_msg("%s: bad expected JSON %s: %s", label, want_text, jerr.text);
    if (!json_equal(got, want)) {
        char *g = json_dumps(got, JSON_COMPACT | JSON_ENCODE_ANY | JSON_SORT_KEYS);
        fail_msg("%s:\n  got  %s\n  want %s", label, g ? g : "(null)", want_text);
    }
    json_decref(want);
}

static const struct {
    const char *annotation, *want;
} k_annotations[] = {
    {"int", "{\"type\":\"integer\"}"},
    {"float", "{\"type\":\"number\"}"},
    {"str", "{\"type\":\"string\"}"},
    {"bool", "{\"type\":\"boolean\"}"},
    {"list", "{\"type\":\"array\"}"},
    {"dict", "{\"type\":\"object\"}"},
    {"List[int]", "{\"type\":\"array\",\"items\":{\"type\":\"integer\"}}"},
    {"list[str]", "{\"type\":\"array\",\"items\":{\"type\":\"string\"}}"},
    {"typing.List[float]", "{\"type\":\"array\",\"items\":{\"type\":\"number\"}}"},
    {"Tuple[int, ...]", "{\"type\":\"array\",\"items\":{\"type\":\"integer\"}}"},
    {"Tuple[int, str]", "{\"type\":\"array\"}"},
    {"Dict[str, int]", "{\"type\":\"object\",\"additionalProperties\":{\"type\":\"integer\"}}"},
    {"Dict[str, Any]", "{\"type\":\"object\"}"},
    {"Optional[int]", "{\"type\":[\"integer\",\"null\"]}"},
    {"Optional[List[str]]", "{\"type\":[\"array\",\"null\"],\"items\":{\"type\":\"string\"}}"},
    {"int | None", "{\"type\":[\"integer\",\"null\"]}"},
    {"None | str", "{\"type\":[\"string\",\"null\"]}"},
    {"int | str", "{\"type\":[\"integer\",\"string\"]}"},
    {"Union[int, None]", "{\"type\":[\"integer\",\"null\"]}"},
    {"Union[int, float]", "{\"type\":[\"integer\",\"number\"]}"},
    {"Union[int, MyClass]", "{}"},
    {"'int'", "{\"type\":\"integer\"}"},
    {"Any", "{}"},
    {"MyClass", "{}"},
    {"Annotated[int, 'meta']", "{\"type\":\"integer\"}"},
    {"List[List[List[int]]]", "{\"type\":\"array\",\"items\":{\"type\":\"array\",\"items\":{\"type\":\"array\",\"items\":{\"type\":\"integer\"}}}}"},
    /* PHP */
    {"string", "{\"type\":\"string\"}"},
    {"array", "{\"type\":\"array\"}"},
    {"?int", "{\"type\":[\"integer\",\"null\"]}"},
    {"?array", "{\"type\":[\"array\",\"null\"]}"},
    {"int|null", "{\"type\":[\"integer\",\"null\"]}"},
    {"\\int", "{\"type\":\"integer\"}"},
    {"mixed", "{}"},
    {"", "{}"},
    {"List[", "{}"},
    {"]]][[[", "{}"},
};

static void test_annotations(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof k_annotations / sizeof *k_annotations; i++) {
        json_t *got = fb_schema_from_annotation(k_annotations[i].annotation);
        assert_non_null(got);
        assert_json(k_annotations[i].annotation, got, k_annotations[i].want);
        json_decref(got);
    }
}

static const struct {
    const char *text;
    unsigned type;
    const char *value; /* JSON text, NULL = no default value */
} k_defaults[] = {
    {"1", FB_JT_INTEGER, "1"},
    {"-3", FB_JT_INTEGER, "-3"},
    {"1.5", FB_JT_NUMBER, "1.5"},
    {"2.0", FB_JT_NUMBER, "2.0"},
    {"1e3", FB_JT_INTEGER, "1000.0"},
    {"1_000", FB_JT_INTEGER, NULL},
    {"0x1F", FB_JT_INTEGER, NULL},
    {"\"hi\"", FB_JT_STRING, "\"hi\""},
    {"'hi'", FB_JT_STRING, "\"hi\""},
    {"'it\\'s'", FB_JT_STRING, NULL},
    {"`tpl`", FB_JT_STRING, "\"tpl\""},
    {"`a${b}`", FB_JT_STRING, NULL},
    {"f\"x{y}\"", FB_JT_STRING, NULL},
    {"True", FB_JT_BOOLEAN, "true"},
    {"False", FB_JT_BOOLEAN, "false"},
    {"None", FB_JT_NULL, "null"},
    {"nil", FB_JT_NULL, "null"},
    {"NULL", FB_JT_NULL, "null"},
    {"true", FB_JT_BOOLEAN, "true"},
    {"undefined", 0, NULL},
    {"[]", FB_JT_ARRAY, "[]"},
    {"[1, 2]", FB_JT_ARRAY, "[1, 2]"},
    {"{}", FB_JT_OBJECT, "{}"},
    {"{\"a\": 1}", FB_JT_OBJECT, "{\"a\": 1}"},
    {"{a: 1}", FB_JT_OBJECT, NULL},
    {"(1, 2)", FB_JT_ARRAY, NULL},
    {"['k' => 1]", FB_JT_OBJECT, NULL},
    {"array()", FB_JT_ARRAY, NULL},
    {"dict()", FB_JT_OBJECT, NULL},
    {":sym", FB_JT_STRING, NULL},
    {"compute()", 0, NULL},
    {"", 0, NULL},
};

static void test_defaults(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof k_defaults / sizeof *k_defaults; i++) {
        unsigned t;
        json_t *v;
        fb_schema_from_default(k_defaults[i].text, &t, &v);
        if (t != k_defaults[i].type)
            fail_msg("default %s: type %u, want %u", k_defaults[i].text, t, k_defaults[i].type);
        if (!k_defaults[i].value) {
            if (v)
                fail_msg("default %s: want no value", k_defaults[i].text);
        } else {
            assert_non_null(v);
            assert_json(k_defaults[i].text, v, k_defaults[i].value);
        }
        json_decref(v);
    }
}

static const struct {
    const char *doc, *summary, *param, *param_desc;
} k_docs[] = {
    {"Adds two numbers.\n\nLonger text.", "Adds two numbers.", "a", NULL},
    {"Adds two\nnumbers.\n\nMore.", "Adds two numbers.", NULL, NULL},
    {"Greets.\n@param {string} name - who to greet\n@returns {string}", "Greets.", "name", "who to greet"},
    {"Sum.\n@param int $a the first", "Sum.", "a", "the first"},
    {"Sum.\n@param {number} [b=2] optional one", "Sum.", "b", "optional one"},
    {"Do it.\n\nArgs:\n    x (int): the x\n    y: the y\n\nReturns:\n    z: not a param", "Do it.", "y", "the y"},
    {"Do it.\n\nArgs:\n    x (int): the x\n\nReturns:\n    z: not a param", "Do it.", "z", NULL},
    {"Do it.\n:param x: an x\n:param int y: a y", "Do it.", "y", "a y"},
    {"@param a first", "", "a", "first"},
    {"", "", "a", NULL},
};

static void test_docs(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof k_docs / sizeof *k_docs; i++) {
        char *s = fb_doc_summary(k_docs[i].doc);
        assert_non_null(s);
        if (strcmp(s, k_docs[i].summary) != 0)
            fail_msg("doc %zu: summary '%s', want '%s'", i, s, k_docs[i].summary);
        free(s);
        if (!k_docs[i].param)
            continue;
        char *d = fb_doc_param(k_docs[i].doc, k_docs[i].param);
        if (!k_docs[i].param_desc ? d != NULL : !d || strcmp(d, k_docs[i].param_desc) != 0)
            fail_msg("doc %zu: param %s description '%s', want '%s'", i, k_docs[i].param, d ? d : "(none)",
                     k_docs[i].param_desc ? k_docs[i].param_desc : "(none)");
        free(d);
    }
    char *s = fb_doc_summary(NULL);
    assert_string_equal(s, "");
    free(s);
}

typedef int (*infer_fn)(const char *code, size_t len, fb_sig_list *out, fb_error *err);

static const struct {
    const char *label;
    infer_fn infer;
    const char *code;
    const char *schema; /* request schema JSON, or NULL */
    const char *want;   /* the parameters object */
    int has_note;
} k_sigs[] = {
    {"py typed with defaults", fb_infer_python, "def f(a: int, b: str = 'x', c=None, *, d: bool = False): pass", NULL,
     "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\"},\"b\":{\"type\":\"string\",\"default\":\"x\"},"
     "\"c\":{\"default\":null},\"d\":{\"type\":\"boolean\",\"default\":false}},\"required\":[\"a\"]}", 0},
    {"py var kinds", fb_infer_python, "def f(a, *args, **kw): pass", NULL,
     "{\"type\":\"object\",\"properties\":{\"a\":{}},\"required\":[\"a\"],\"additionalProperties\":true}", 1},
    {"py Optional with None default", fb_infer_python, "def f(x: int = None): pass", NULL,
     "{\"type\":\"object\",\"properties\":{\"x\":{\"type\":[\"integer\",\"null\"],\"default\":null}},\"required\":[]}", 0},
    {"py docstring param descriptions", fb_infer_python, "def f(a):\n    \"\"\"Do.\n\n    Args:\n        a: an a\n    \"\"\"\n", NULL,
     "{\"type\":\"object\",\"properties\":{\"a\":{\"description\":\"an a\"}},\"required\":[\"a\"]}", 0},
    {"js defaults, rest, destructured", fb_infer_javascript, "function f(a, b = 2, {x, y} = {}, ...r) {}", NULL,
     "{\"type\":\"object\",\"properties\":{\"a\":{},\"b\":{\"type\":\"integer\",\"default\":2},"
     "\"$2\":{\"type\":\"object\",\"default\":{},\"properties\":{\"x\":{},\"y\":{}}}},\"required\":[\"a\"]}", 1},
    {"rb keywords", fb_infer_ruby, "def f(a, b = 'x', k:, j: 1, **o)\nend", NULL,
     "{\"type\":\"object\",\"properties\":{\"a\":{},\"b\":{\"type\":\"string\",\"default\":\"x\"},\"k\":{},"
     "\"j\":{\"type\":\"integer\",\"default\":1}},\"required\":[\"a\",\"k\"],\"additionalProperties\":true}", 0},
    {"php typed nullable variadic", fb_infer_php, "<?php function f(int $a, ?string $b = null, array &$c = [], float ...$r) {}", NULL,
     "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\"},\"b\":{\"type\":[\"string\",\"null\"],\"default\":null},"
     "\"c\":{\"type\":\"array\",\"default\":[]}},\"required\":[\"a\"]}", 1},
    {"schema v0.1 params", fb_infer_python, "def f(a, b): pass",
     "{\"params\":[{\"name\":\"a\",\"type\":\"int\",\"description\":\"an a\"},{\"name\":\"b\",\"type\":\"any\",\"default\":3}]}",
     "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\",\"description\":\"an a\"},\"b\":{\"default\":3}},\"required\":[\"a\"]}", 0},
    {"schema v0.2 input record", fb_infer_python, "def f(a, b): pass",
     "{\"input\":{\"b\":{\"index\":1,\"type\":[\"string\",\"null\"]},\"a\":{\"index\":0,\"type\":\"number\",\"required\":false}},\"acceptsKwargs\":true}",
     "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"number\"},\"b\":{\"type\":[\"string\",\"null\"]}},\"required\":[\"b\"],\"additionalProperties\":true}", 0},
    {"schema nullable", fb_infer_python, "def f(a): pass", "{\"input\":[{\"name\":\"a\",\"type\":\"string\",\"nullable\":true}]}",
     "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":[\"string\",\"null\"]}},\"required\":[\"a\"]}", 0},
};

static void test_signatures(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof k_sigs / sizeof *k_sigs; i++) {
        fb_sig_list list = {0};
        fb_error err = {0};
        assert_int_equal(k_sigs[i].infer(k_sigs[i].code, strlen(k_sigs[i].code), &list, &err), 0);
        if (list.nfuncs != 1)
            fail_msg("%s: inferred %zu functions", k_sigs[i].label, list.nfuncs);
        json_t *schema = k_sigs[i].schema ? json_loads(k_sigs[i].schema, 0, NULL) : NULL;
        fb_function_sig from_schema = {0};
        const fb_function_sig *sig = &list.funcs[0];
        if (schema) {
            assert_int_equal(fb_sig_from_schema(schema, "f", &from_schema, &err), 0);
            sig = &from_schema;
        }
        const char *note = NULL;
        json_t *got = fb_sig_jsonschema(sig, schema, list.funcs[0].doc, &note, &err);
        assert_non_null(got);
        assert_json(k_sigs[i].label, got, k_sigs[i].want);
        if ((note != NULL) != k_sigs[i].has_note)
            fail_msg("%s: variadic note %s", k_sigs[i].label, note ? "unexpected" : "missing");
        json_decref(got);
        json_decref(schema);
        fb_function_sig_free(&from_schema);
        fb_sig_list_free(&list);
    }
}

static void test_type_names(void **state)
{
    (void)state;
    static const struct {
        const char *type; /* JSON */
        unsigned mask;
        int rc;
    } cases[] = {
        {"\"string\"", FB_JT_STRING, 0},     {"\"STR\"", FB_JT_STRING, 0},
        {"\"integer\"", FB_JT_INTEGER, 0},   {"\"number\"", FB_JT_NUMBER, 0},
        {"\"any\"", FB_JT_ANY, 0},           {"[\"string\",\"null\"]", FB_JT_STRING | FB_JT_NULL, 0},
        {"\"bogus\"", 0, -1},                {"[]", 0, -1},
        {"3", 0, -1},                        {"[\"int\", 3]", 0, -1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        json_t *t = json_loads(cases[i].type, JSON_DECODE_ANY, NULL);
        unsigned mask;
        const char *bad;
        assert_int_equal(fb_jt_parse(t, &mask, &bad), cases[i].rc);
        if (cases[i].rc == 0)
            assert_int_equal(mask, cases[i].mask);
        else
            assert_non_null(bad);
        json_decref(t);
    }
    unsigned mask;
    const char *bad;
    assert_int_equal(fb_jt_parse(NULL, &mask, &bad), 0);
    assert_int_equal(mask, FB_JT_ANY);
    char buf[96];
    assert_string_equal(fb_jt_describe(FB_JT_STRING | FB_JT_NULL, buf, sizeof buf), "string or null");
    assert_string_equal(fb_jt_describe(FB_JT_ANY, buf, sizeof buf), "any");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_annotations), cmocka_unit_test(test_defaults), cmocka_unit_test(test_docs),
        cmocka_unit_test(test_signatures), cmocka_unit_test(test_type_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
