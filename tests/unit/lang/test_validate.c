/* Strict schemas: a table of (schema, args, kwargs) -> accepted, or the error type and message expected. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lang/plan.h"
#include "lang/validate.h"
#include "util/json.h"

typedef struct vcase {
    const char *label;
    const char *schema, *args, *kwargs; /* JSON; args/kwargs NULL = absent */
    const char *want_type;              /* NULL = accepted */
    const char *want_msg;               /* substring of the message */
} vcase;

#define S2 "{\"params\":[{\"name\":\"a\",\"type\":\"integer\"},{\"name\":\"b\",\"type\":\"string\",\"default\":\"x\"}]}"
#define SN "{\"params\":[{\"name\":\"n\",\"type\":\"number\"}]}"
#define AE "ArgumentError"

static const vcase k_cases[] = {
    {"all positional", S2, "[1, \"y\"]", NULL, NULL, NULL},
    {"by keyword", S2, NULL, "{\"a\": 1, \"b\": \"y\"}", NULL, NULL},
    {"optional omitted", S2, "[1]", NULL, NULL, NULL},
    {"null hole filled by keyword", S2, "[null, \"y\"]", "{\"a\": 2}", NULL, NULL},
    {"integer for string", S2, "[1, 2]", NULL, AE, "argument 'b': expected string, got integer"},
    {"string for integer", S2, "[\"1\"]", NULL, AE, "argument 'a': expected integer, got string"},
    {"real for integer", S2, "[1.5]", NULL, AE, "argument 'a': expected integer, got number"},
    {"whole real is an integer", S2, "[2.0]", NULL, NULL, NULL},
    {"big integer is an integer", S2, "[123456789012345678901234567890]", NULL, NULL, NULL},
    {"integer is a number", SN, "[3]", NULL, NULL, NULL},
    {"real is a number", SN, "[3.25]", NULL, NULL, NULL},
    {"bool is not a number", SN, "[true]", NULL, AE, "expected number, got boolean"},
    {"null for number", SN, "[null]", NULL, AE, "argument 'n': expected number, got null"},
    {"missing required", S2, NULL, NULL, AE, "missing required argument 'a'"},
    {"missing required, other given", S2, NULL, "{\"b\": \"y\"}", AE, "missing required argument 'a'"},
    {"unknown keyword", S2, "[1]", "{\"zz\": 1}", AE, "unknown parameter 'zz'"},
    {"too many positionals", S2, "[1, \"y\", 3]", NULL, AE, "too many positional arguments"},
    {"variadic takes extras", "{\"params\":[{\"name\":\"a\"}],\"variadic\":true}", "[1, 2, 3]", NULL, NULL, NULL},
    {"acceptsKwargs takes unknown", "{\"params\":[{\"name\":\"a\"}],\"acceptsKwargs\":true}", "[1]", "{\"z\": 1}", NULL, NULL},
    {"no type means any", "{\"params\":[{\"name\":\"a\"}]}", "[{\"x\": []}]", NULL, NULL, NULL},
    {"any", "{\"params\":[{\"name\":\"a\",\"type\":\"any\"}]}", "[null]", NULL, NULL, NULL},
    {"nullable", "{\"params\":[{\"name\":\"a\",\"type\":\"string\",\"nullable\":true}]}", "[null]", NULL, NULL, NULL},
    {"type list with null", "{\"params\":[{\"name\":\"a\",\"type\":[\"string\",\"null\"]}]}", "[null]", NULL, NULL, NULL},
    {"type list mismatch", "{\"params\":[{\"name\":\"a\",\"type\":[\"string\",\"null\"]}]}", "[1]", NULL, AE,
     "expected string or null, got integer"},
    {"null type", "{\"params\":[{\"name\":\"a\",\"type\":\"null\"}]}", "[null]", NULL, NULL, NULL},
    {"array", "{\"params\":[{\"name\":\"a\",\"type\":\"array\"}]}", "[[1]]", NULL, NULL, NULL},
    {"object for array", "{\"params\":[{\"name\":\"a\",\"type\":\"array\"}]}", "[{}]", NULL, AE, "expected array, got object"},
    {"aliases", "{\"params\":[{\"name\":\"a\",\"type\":\"dict\"},{\"name\":\"b\",\"type\":\"bool\"},{\"name\":\"c\",\"type\":\"float\"}]}",
     "[{}, false, 1]", NULL, NULL, NULL},
    {"v0.2 input record", "{\"input\":{\"q\":{\"type\":\"string\"}}}", NULL, "{\"q\": 5}", AE, "argument 'q': expected string"},
    {"v0.2 input list", "{\"input\":[{\"name\":\"q\",\"type\":\"boolean\"}]}", "[true]", NULL, NULL, NULL},
    {"unknown type name", "{\"params\":[{\"name\":\"a\",\"type\":\"widget\"}]}", "[1]", NULL, "InvalidRequest", "unknown type 'widget'"},
    {"empty schema, no args", "{}", NULL, NULL, NULL, NULL},
    {"empty schema, an arg", "{}", "[1]", NULL, AE, "too many positional arguments"},
};

static void test_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof k_cases / sizeof *k_cases; i++) {
        const vcase *c = &k_cases[i];
        json_error_t jerr;
        json_t *schema = json_loads(c->schema, 0, &jerr);
        json_t *args = c->args ? fb_json_loadb(c->args, strlen(c->args), 0, &jerr) : json_array();
        json_t *kwargs = c->kwargs ? json_loads(c->kwargs, 0, &jerr) : json_object();
        assert_non_null(schema);
        assert_non_null(args);
        assert_non_null(kwargs);
        fb_function_sig sig;
        fb_error err = {0};
        assert_int_equal(fb_sig_from_schema(schema, "f", &sig, &err), 0);
        int rc = fb_validate_args(schema, &sig, args, kwargs, &err);
        if (!c->want_type && rc != 0)
            fail_msg("%s: want accepted, got %s: %s", c->label, fb_error_type(&err), err.message);
        if (c->want_type) {
            if (rc == 0)
                fail_msg("%s: want %s, accepted", c->label, c->want_type);
            if (strcmp(fb_error_type(&err), c->want_type) != 0 || !strstr(err.message, c->want_msg))
                fail_msg("%s: want %s '%s', got %s '%s'", c->label, c->want_type, c->want_msg, fb_error_type(&err), err.message);
        }
        fb_function_sig_free(&sig);
        json_decref(schema);
        json_decref(args);
        json_decref(kwargs);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_table)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
