/* The request's `files`, decoded (request/files.h), table-driven: text and base64 contents (NULs
 * kept), relative names under the workdir, absolute ones as given, in the object's order; refusals are
 * InvalidRequest naming the entry (empty name, '.', '..' or empty parts, a part over 255 bytes, control
 * characters, a content that is neither a string nor {"base64"}, bad base64, more bytes in all than the
 * workspace limit). Whatever happened, fb_request_files_free releases what was decoded (ASan checks). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "request/files.h"

typedef struct want_file {
    const char *path;
    const char *data; /* NULL: end of the list */
    size_t len;
} want_file;

typedef struct files_case {
    const char *label;
    const char *json;      /* the `files` object; NULL: absent */
    uint64_t max_bytes;    /* 0: 1 MiB */
    const char *error;     /* NULL: decodes; else the InvalidRequest message starts with this */
    want_file want[4];
} files_case;

static const files_case cases[] = {
    {"absent", NULL, 0, NULL, {{NULL, NULL, 0}}},
    {"empty", "{}", 0, NULL, {{NULL, NULL, 0}}},
    {"text, relative and absolute, in order", "{\"in.txt\": \"hi\", \"/tmp/a/b\": \"x\", \"sub/c\": \"\"}", 0, NULL,
     {{"/workspace/in.txt", "hi", 2}, {"/tmp/a/b", "x", 1}, {"/workspace/sub/c", "", 0}}},
    {"base64 keeps NULs", "{\"bin\": {\"base64\": \"AAEC\"}}", 0, NULL, {{"/workspace/bin", "\0\1\2", 3}}},
    {"text with a NUL", "{\"t\": \"a\\u0000b\"}", 0, NULL, {{"/workspace/t", "a\0b", 3}}},
    {"exactly the limit", "{\"a\": \"12\", \"b\": \"34\"}", 4, NULL,
     {{"/workspace/a", "12", 2}, {"/workspace/b", "34", 2}}},
    {"over the limit", "{\"a\": \"12\", \"b\": \"345\"}",
     .max_bytes = 4, .error = "files: 5 bytes in all is more than the workspace limit"},
    {"empty name", "{\"\": \"x\"}", .error = "files: a file name is empty"},
    {"dot part", "{\"a/./b\": \"x\"}", .error = "files[\"a/./b\"]: must be a normalized path"},
    {"dot-dot part", "{\"../etc/passwd\": \"x\"}", .error = "files[\"../etc/passwd\"]: must be a normalized path"},
    {"empty part", "{\"/tmp//x\": \"x\"}", .error = "files[\"/tmp//x\"]: must be a normalized path"},
    {"trailing slash", "{\"d/\": \"x\"}", .error = "files[\"d/\"]: must be a normalized path"},
    {"control character", "{\"a\\nb\": \"x\"}", .error = "files[\"a\nb\"]: control characters are not allowed"},
    {"a number", "{\"n\": 1}", .error = "files[\"n\"]: must be a string (text) or {\"base64\""},
    {"base64 with more", "{\"n\": {\"base64\": \"AA==\", \"x\": 1}}", .error = "files[\"n\"]: must be a string"},
    {"bad base64", "{\"n\": {\"base64\": \"!!\"}}", .error = "files[\"n\"].base64: not valid base64"},
    {"second entry bad, first kept for free", "{\"ok\": \"x\", \"..\": \"y\"}", .error = "files[\"..\"]: must be"},
};

static void check_case(const files_case *c)
{
    json_t *j = NULL;
    if (c->json) {
        json_error_t jerr;
        j = json_loads(c->json, JSON_ALLOW_NUL, &jerr);
        if (!j)
            fail_msg("[%s] test JSON: %s", c->label, jerr.text);
    }
    fb_ws_files l;
    fb_error err = {0};
    int rc = fb_request_files_decode(j, "/workspace", c->max_bytes ? c->max_bytes : 1 << 20, &l, &err);
    if (c->error) {
        if (rc == 0 || err.kind != FB_ERR_INVALID_REQUEST || strncmp(err.message, c->error, strlen(c->error)) != 0)
            fail_msg("[%s] rc %d, message '%s', expected InvalidRequest '%s...'", c->label, rc, err.message,
                     c->error);
    } else {
        if (rc != 0)
            fail_msg("[%s] %s", c->label, err.message);
        size_t n = 0;
        while (n < 4 && c->want[n].data)
            n++;
        assert_int_equal(l.n, n);
        for (size_t i = 0; i < n; i++) {
            assert_string_equal(l.v[i].path, c->want[i].path);
            assert_int_equal(l.v[i].len, c->want[i].len);
            if (n)
                assert_memory_equal(l.v[i].data, c->want[i].data, c->want[i].len);
        }
    }
    fb_request_files_free(&l);
    assert_int_equal(l.n, 0);
    json_decref(j);
}

static void test_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        check_case(&cases[i]);
}

/* The name a message quotes is the key as given; the path is the normalized one. */
static void test_name_kept(void **state)
{
    (void)state;
    json_t *j = json_pack("{s:s}", "dir/file.txt", "x");
    fb_ws_files l;
    fb_error err = {0};
    assert_int_equal(fb_request_files_decode(j, "/w/d", 100, &l, &err), 0);
    assert_int_equal(l.n, 1);
    assert_string_equal(l.v[0].name, "dir/file.txt");
    assert_string_equal(l.v[0].path, "/w/d/dir/file.txt");
    fb_request_files_free(&l);
    json_decref(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_name_kept),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
