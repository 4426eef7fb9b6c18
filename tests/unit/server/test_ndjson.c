/* Streamed answers' pure parts (server/http/ndjson.c): which Accept headers select NDJSON, the output
 * queue (merging a stream's chunks for a slow client, the hard cap dropping from there on and counting
 * what it dropped) and the lines, in `fnbox call --stream`'s format. */
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "server/http/ndjson.h"

static void test_accept(void **state)
{
    (void)state;
    static const char *const yes[] = {
        "application/x-ndjson",
        "APPLICATION/X-NDJSON",
        "  application/x-ndjson  ",
        "application/json, application/x-ndjson",
        "application/x-ndjson;q=0.5, application/json;q=1",
        "text/html,application/x-ndjson ;q=0.001",
        "application/x-ndjson; charset=utf-8",
        "application/json;foo=\"a,application/x-ndjson\", application/x-ndjson",
        "application/x-ndjson;q=1.0",
        "application/x-ndjson;Q=0.1",
        "application/x-ndjson;q=bogus", /* named, with a malformed weight: still asked for */
        ",,application/x-ndjson,",
    };
    static const char *const no[] = {
        "",
        "application/json",
        "*/*",
        "application/*",
        "application/x-ndjsonx",
        "application/x-ndjso",
        "text/x-ndjson",
        "application/x-ndjson;q=0",
        "application/x-ndjson; q=0.000",
        "application/x-ndjson;q=0.",
        "application/json;foo=\"a,application/x-ndjson\"", /* inside a quoted value */
        "application/json;profile=application/x-ndjson",
    };
    for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
        if (!fb_http_accepts_ndjson(yes[i]))
            fail_msg("'%s' should select NDJSON", yes[i]);
    for (size_t i = 0; i < sizeof no / sizeof *no; i++)
        if (fb_http_accepts_ndjson(no[i]))
            fail_msg("'%s' should not select NDJSON", no[i]);
    assert_false(fb_http_accepts_ndjson(NULL));
}

/* Pops every chunk: "o:text" / "e:text" joined with '|', for comparisons. */
static char *drain(fb_http_chunkq *q)
{
    static char out[4096];
    out[0] = '\0';
    fb_http_chunk *c;
    while ((c = fb_http_chunkq_pop(q))) {
        size_t n = strlen(out);
        snprintf(out + n, sizeof out - n, "%s%c:%.*s", n ? "|" : "", c->stream == FB_HTTP_STDOUT ? 'o' : 'e',
                 (int)c->len, c->data);
        fb_http_chunk_free(c);
    }
    return out;
}

static void test_queue_merges_a_stream(void **state)
{
    (void)state;
    fb_http_chunkq q;
    fb_http_chunkq_init(&q, 1 << 20);
    fb_http_chunkq_push(&q, "stdout", "a", 1);
    fb_http_chunkq_push(&q, "stdout", "bc", 2);
    fb_http_chunkq_push(&q, "stderr", "E", 1);
    fb_http_chunkq_push(&q, "stdout", "d", 1);
    fb_http_chunkq_push(&q, "other", "x", 1); /* not a stream: ignored */
    fb_http_chunkq_push(&q, "stdout", "", 0);
    assert_string_equal(drain(&q), "o:abc|e:E|o:d");
    assert_int_equal(q.bytes, 0);
    assert_null(q.head);
    assert_null(q.tail);
    /* a popped chunk is not merged into any more: the next output starts a new one */
    fb_http_chunkq_push(&q, "stdout", "1", 1);
    fb_http_chunk *c = fb_http_chunkq_pop(&q);
    fb_http_chunkq_push(&q, "stdout", "2", 1);
    assert_int_equal(c->len, 1);
    fb_http_chunk_free(c);
    assert_string_equal(drain(&q), "o:2");
    assert_false(q.dropping);
    fb_http_chunkq_free(&q);
}

static void test_queue_merge_size(void **state)
{
    (void)state;
    fb_http_chunkq q;
    fb_http_chunkq_init(&q, 4 * FB_HTTP_CHUNK_MERGE_MAX);
    char *block = malloc(FB_HTTP_CHUNK_MERGE_MAX);
    assert_non_null(block);
    memset(block, 'x', FB_HTTP_CHUNK_MERGE_MAX);
    fb_http_chunkq_push(&q, "stdout", block, FB_HTTP_CHUNK_MERGE_MAX - 1);
    fb_http_chunkq_push(&q, "stdout", block, 1);
    fb_http_chunkq_push(&q, "stdout", block, 1); /* over the merge size: a chunk of its own */
    fb_http_chunk *c = fb_http_chunkq_pop(&q);
    assert_int_equal(c->len, FB_HTTP_CHUNK_MERGE_MAX);
    fb_http_chunk_free(c);
    c = fb_http_chunkq_pop(&q);
    assert_int_equal(c->len, 1);
    fb_http_chunk_free(c);
    assert_null(fb_http_chunkq_pop(&q));
    free(block);
    fb_http_chunkq_free(&q);
}

static void test_queue_cap_drops_from_there_on(void **state)
{
    (void)state;
    fb_http_chunkq q;
    size_t max = 2 * sizeof(fb_http_chunk) + 10;
    fb_http_chunkq_init(&q, max);
    fb_http_chunkq_push(&q, "stdout", "12345", 5);
    fb_http_chunkq_push(&q, "stderr", "abcde", 5);
    assert_false(q.dropping);
    assert_true(q.bytes <= max);
    fb_http_chunkq_push(&q, "stdout", "6", 1); /* no room: dropped, and so is everything after */
    assert_true(q.dropping);
    fb_http_chunk *c = fb_http_chunkq_pop(&q); /* room again, but the stream would have a hole */
    fb_http_chunk_free(c);
    fb_http_chunkq_push(&q, "stdout", "78", 2);
    fb_http_chunkq_push(&q, "stderr", "f", 1);
    assert_int_equal(q.dropped[FB_HTTP_STDOUT], 3);
    assert_int_equal(q.dropped[FB_HTTP_STDERR], 1);
    assert_string_equal(drain(&q), "e:abcde");
    size_t len;
    char *line = fb_http_ndjson_dropped_line(&q, &len);
    assert_non_null(line);
    assert_string_equal(line, "{\"type\":\"dropped\",\"stdout\":3,\"stderr\":1}");
    assert_int_equal(len, strlen(line));
    free(line);
    fb_http_chunkq_free(&q);
}

static void test_queue_free_releases_chunks(void **state)
{
    (void)state;
    fb_http_chunkq q;
    fb_http_chunkq_init(&q, 1 << 20);
    fb_http_chunkq_push(&q, "stdout", "a", 1);
    fb_http_chunkq_push(&q, "stderr", "b", 1);
    fb_http_chunkq_free(&q); /* the leak checker (ASan build) sees nothing left */
    assert_null(q.head);
    assert_int_equal(q.bytes, 0);
    size_t len = 99;
    assert_null(fb_http_ndjson_dropped_line(&q, &len));
    assert_int_equal(len, 0);
}

static void test_chunk_line(void **state)
{
    (void)state;
    char data[] = "h\xc3\xa9\"\n\x01";
    fb_http_chunk c = {.stream = FB_HTTP_STDERR, .len = sizeof data - 1, .cap = sizeof data - 1, .data = data};
    size_t len;
    char *line = fb_http_ndjson_chunk_line(&c, &len);
    assert_non_null(line);
    /* the CLI's format: compact, "type" first, UTF-8 kept as it is, no newline (the caller adds it) */
    assert_string_equal(line, "{\"type\":\"stderr\",\"data\":\"h\xc3\xa9\\\"\\n\\u0001\"}");
    assert_int_equal(len, strlen(line));
    free(line);
}

static char *joined(const fb_http_piece *p, unsigned n)
{
    static char out[256];
    size_t at = 0;
    for (unsigned i = 0; i < n; i++) {
        memcpy(out + at, p[i].data, p[i].len);
        at += p[i].len;
    }
    out[at] = '\0';
    return out;
}

static void test_result_pieces(void **state)
{
    (void)state;
    fb_http_piece p[3];
    const char *r = "{\"status\":\"success\",\"result\":123456789012345678901234567890}";
    assert_int_equal(fb_http_ndjson_result_pieces(r, strlen(r), p), 3);
    assert_string_equal(joined(p, 3),
                        "{\"type\":\"result\",\"status\":\"success\",\"result\":123456789012345678901234567890}\n");
    assert_int_equal(fb_http_ndjson_result_pieces("{}", 2, p), 3);
    assert_string_equal(joined(p, 3), "{\"type\":\"result\"}\n");
    assert_int_equal(fb_http_ndjson_result_pieces("[1]", 3, p), 0);
    assert_int_equal(fb_http_ndjson_result_pieces("{", 1, p), 0);
    assert_int_equal(fb_http_ndjson_result_pieces("", 0, p), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_accept),
        cmocka_unit_test(test_queue_merges_a_stream),
        cmocka_unit_test(test_queue_merge_size),
        cmocka_unit_test(test_queue_cap_drops_from_there_on),
        cmocka_unit_test(test_queue_free_releases_chunks),
        cmocka_unit_test(test_chunk_line),
        cmocka_unit_test(test_result_pieces),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
