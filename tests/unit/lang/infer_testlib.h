/* Shared by the signature-inference tests (test_python_infer.c, test_javascript_infer.c): the table types and
 * their checker, and the tests every language runs the same way (the table, fb_sig_list_find, truncated
 * prefixes and mutations, garbage, the parameter cap). A test file describes its language in an infer_suite
 * (the inference function, its per-parameter check, its table, fragments and sources) and passes it to these
 * tests as their cmocka state: cmocka_unit_test_prestate(test_table, &suite).
 *
 * Sources are copied into exactly-sized heap buffers with no NUL terminator, so reading past the end is an
 * ASan/valgrind error. */
#ifndef FNBOX_TESTS_INFER_TESTLIB_H
#define FNBOX_TESTS_INFER_TESTLIB_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lang/signature.h"
#include "lang/source_scan.h" /* FB_SIG_MAX_PARAMS */

typedef int (*infer_fn)(const char *code, size_t len, fb_sig_list *out, fb_error *err);

typedef struct xparam {
    const char *name;
    fb_param_kind kind;
    const char *def; /* expected default_text, NULL = no default */
    /* Language-specific, checked by the test's check_param function. Python: the expected annotation;
     * JavaScript: the object pattern's keys joined with ',' ("" = object pattern without names). NULL = none. */
    const char *extra;
} xparam;

typedef struct xfunc {
    const char *name; /* NULL ends the list */
    int line;
    bool is_async;
    const char *doc;
    xparam params[10]; /* name NULL ends the list */
} xfunc;

typedef struct infer_case {
    const char *label;
    const char *code;
    xfunc funcs[8];
} infer_case;

/* Checks what a language adds to a parameter (xp->extra against p); fails the test on a mismatch. */
typedef void (*check_param_fn)(const char *label, const xfunc *x, const xparam *xp, const fb_param *p);

/* One language, as the shared tests see it. */
typedef struct infer_suite {
    infer_fn infer;
    check_param_fn check_param;
    const infer_case *cases;
    size_t ncases;
    const char *find_src;     /* defines a(), b(x) and a(y, z), in that order */
    const char *const *frags; /* garbage fragments ("\0" stands for one NUL byte) */
    size_t nfrags;
    const char *cap_head;     /* starts a function `big` whose parameters "p0, p1, ..." follow */
    const char *cap_tail;     /* ends `big`, then defines a function `small` */
    uint64_t rng;             /* the fuzz tests' xorshift state: seeded per language, drawn in test order */
    /* The language's own test of long inputs made for its lexer (it may use check_long_inputs). */
    CMUnitTestFunction test_pathological;
} infer_suite;

/* A long input: prefix, then unit repeated. */
typedef struct repeated_input {
    const char *prefix;
    const char *unit;
} repeated_input;

/* An exactly-sized copy without a terminator: reading past len is an ASan/valgrind error. */
static char *exact_copy(const char *s, size_t n)
{
    char *p = malloc(n ? n : 1);
    assert_non_null(p);
    if (n)
        memcpy(p, s, n);
    return p;
}

static void expect_str(const char *label, const char *what, const char *want, const char *got)
{
    if (!want && !got)
        return;
    if (!want || !got || strcmp(want, got) != 0)
        fail_msg("%s: %s: want [%s] got [%s]", label, what, want ? want : "(null)", got ? got : "(null)");
}

static void check_case(infer_fn infer, check_param_fn check_param, const infer_case *c)
{
    size_t n = strlen(c->code);
    char *code = exact_copy(c->code, n);
    fb_sig_list list;
    fb_error err = {0};
    int r = infer(code, n, &list, &err);
    free(code);
    if (r != 0)
        fail_msg("%s: returned %d (%s)", c->label, r, err.message);
    size_t nf = 0;
    while (nf < sizeof c->funcs / sizeof c->funcs[0] && c->funcs[nf].name)
        nf++;
    if (list.nfuncs != nf) {
        for (size_t i = 0; i < list.nfuncs; i++)
            print_message("  got %s (line %d)\n", list.funcs[i].name, list.funcs[i].line);
        fail_msg("%s: want %zu functions, got %zu", c->label, nf, list.nfuncs);
    }
    for (size_t i = 0; i < nf; i++) {
        const xfunc *x = &c->funcs[i];
        const fb_function_sig *f = &list.funcs[i];
        expect_str(c->label, "name", x->name, f->name);
        if (f->line != x->line)
            fail_msg("%s: %s: want line %d got %d", c->label, x->name, x->line, f->line);
        if (f->is_async != x->is_async)
            fail_msg("%s: %s: is_async mismatch", c->label, x->name);
        expect_str(c->label, "doc", x->doc, f->doc);
        size_t np = 0;
        while (np < sizeof x->params / sizeof x->params[0] && x->params[np].name)
            np++;
        if (f->nparams != np)
            fail_msg("%s: %s: want %zu params, got %zu", c->label, x->name, np, f->nparams);
        for (size_t j = 0; j < np; j++) {
            const xparam *xp = &x->params[j];
            const fb_param *p = &f->params[j];
            expect_str(c->label, "param name", xp->name, p->name);
            if (p->kind != xp->kind)
                fail_msg("%s: %s.%s: want kind %d got %d", c->label, x->name, xp->name, (int)xp->kind, (int)p->kind);
            if (p->has_default != (xp->def != NULL))
                fail_msg("%s: %s.%s: has_default mismatch", c->label, x->name, xp->name);
            expect_str(c->label, "default", xp->def, p->default_text);
            check_param(c->label, x, xp, p);
        }
    }
    fb_sig_list_free(&list);
}

/* Every case of the table must give exactly its expected signatures. */
static void test_table(void **state)
{
    const infer_suite *su = *state;
    for (size_t i = 0; i < su->ncases; i++)
        check_case(su->infer, su->check_param, &su->cases[i]);
}

/* fb_sig_list_find finds the later of two definitions (the one the language calls) and nothing else. */
static void test_find(void **state)
{
    const infer_suite *su = *state;
    fb_sig_list list;
    fb_error err = {0};
    assert_int_equal(su->infer(su->find_src, strlen(su->find_src), &list, &err), 0);
    const fb_function_sig *a = fb_sig_list_find(&list, "a");
    assert_non_null(a);
    assert_int_equal(a->nparams, 2);
    assert_non_null(fb_sig_list_find(&list, "b"));
    assert_null(fb_sig_list_find(&list, "c"));
    assert_null(fb_sig_list_find(&list, NULL));
    assert_null(fb_sig_list_find(NULL, "a"));
    fb_sig_list_free(&list);
    fb_sig_list_free(&list); /* idempotent */
    assert_int_equal(su->infer(NULL, 0, &list, &err), 0);
    assert_int_equal(list.nfuncs, 0);
    fb_sig_list_free(&list);
}

/* ---- fuzz-style robustness ---- */

/* xorshift64 on the suite's rng, so each language draws the same sequence every run. */
static uint32_t rnd(uint64_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return (uint32_t)(*state >> 16);
}

/* Runs inference on s[0..n) and checks the invariants every result must keep; returns the function count. */
static size_t infer_and_check(infer_fn infer, const char *s, size_t n)
{
    char *code = exact_copy(s, n);
    fb_sig_list list;
    fb_error err = {0};
    assert_int_equal(infer(code, n, &list, &err), 0);
    int lines = 1;
    for (size_t i = 0; i < n; i++)
        lines += s[i] == '\n';
    for (size_t i = 0; i < list.nfuncs; i++) {
        const fb_function_sig *f = &list.funcs[i];
        assert_non_null(f->name);
        assert_true(f->name[0] != '\0');
        assert_true(f->line >= 1 && f->line <= lines);
        for (size_t j = 0; j < f->nparams; j++) {
            const fb_param *p = &f->params[j];
            assert_non_null(p->name);
            assert_true(p->has_default == (p->default_text != NULL));
            assert_true(p->nkeys == 0 || p->keys != NULL);
            for (size_t k = 0; k < p->nkeys; k++)
                assert_non_null(p->keys[k]);
        }
    }
    free(code);
    size_t nfuncs = list.nfuncs;
    fb_sig_list_free(&list);
    return nfuncs;
}

/* Every prefix of every table source, then 40 copies of each with 3 random bytes overwritten. */
static void test_prefixes_and_mutations(void **state)
{
    infer_suite *su = *state;
    infer_fn infer = su->infer;
    uint64_t *rng = &su->rng;
    for (size_t i = 0; i < su->ncases; i++) {
        const char *s = su->cases[i].code;
        size_t n = strlen(s);
        for (size_t k = 0; k <= n; k++)
            infer_and_check(infer, s, k);
        char *m = exact_copy(s, n);
        for (int round = 0; round < 40 && n > 0; round++) {
            memcpy(m, s, n);
            for (int f = 0; f < 3; f++)
                m[rnd(rng) % n] = (char)(rnd(rng) & 0xFF);
            infer_and_check(infer, m, n);
        }
        free(m);
    }
}

/* 4000 inputs of up to 511 bytes: the language's fragments mixed with random bytes. */
static void test_garbage(void **state)
{
    infer_suite *su = *state;
    infer_fn infer = su->infer;
    uint64_t *rng = &su->rng;
    char buf[512];
    for (int iter = 0; iter < 4000; iter++) {
        size_t n = 0, want = rnd(rng) % sizeof buf;
        while (n < want) {
            if (rnd(rng) % 4 == 0) {
                buf[n++] = (char)(rnd(rng) & 0xFF);
                continue;
            }
            const char *f = su->frags[rnd(rng) % su->nfrags];
            size_t fl = f[0] ? strlen(f) : 1;
            if (n + fl > want)
                break;
            memcpy(buf + n, f, fl);
            n += fl;
        }
        infer_and_check(infer, buf, n);
    }
}

/* Runs infer_and_check on `prefix` followed by `unit` repeated, at most n bytes in all (whole units only);
 * returns the function count. */
static size_t infer_repeated(infer_fn infer, const char *prefix, const char *unit, size_t n)
{
    size_t plen = strlen(prefix), ulen = strlen(unit);
    assert_true(ulen > 0 && plen <= n);
    char *s = malloc(n);
    assert_non_null(s);
    memcpy(s, prefix, plen);
    size_t len = plen;
    while (len + ulen <= n) {
        memcpy(s + len, unit, ulen);
        len += ulen;
    }
    size_t nfuncs = infer_and_check(infer, s, len);
    free(s);
    return nfuncs;
}

/* Each of the inputs, 200,000 bytes long, must be scanned without recursing deeply; then a run of the
 * function `func` (one short definition) must be capped at FB_SIG_MAX_FUNCS, not be an error. */
static void check_long_inputs(const infer_suite *su, const repeated_input *inputs, size_t ninputs, const char *func)
{
    size_t n = 200000;
    for (size_t i = 0; i < ninputs; i++)
        infer_repeated(su->infer, inputs[i].prefix, inputs[i].unit, n);
    assert_int_equal(infer_repeated(su->infer, "", func, n), FB_SIG_MAX_FUNCS);
}

/* A function with more than FB_SIG_MAX_PARAMS parameters is not reported (a truncated signature would make
 * argument checks wrong); the scan carries on after it. */
static void test_param_cap(void **state)
{
    const infer_suite *su = *state;
    infer_fn infer = su->infer;
    const char *head = su->cap_head;
    const char *tail = su->cap_tail;
    size_t cap = 16 * (FB_SIG_MAX_PARAMS + 10) + 64;
    char *s = malloc(cap);
    assert_non_null(s);
    int n = snprintf(s, cap, "%s", head);
    for (int i = 0; i < FB_SIG_MAX_PARAMS + 1; i++)
        n += snprintf(s + n, cap - (size_t)n, "p%d, ", i);
    n += snprintf(s + n, cap - (size_t)n, "%s", tail);
    fb_sig_list list;
    fb_error err = {0};
    assert_int_equal(infer(s, (size_t)n, &list, &err), 0);
    assert_int_equal(list.nfuncs, 1);
    assert_string_equal(list.funcs[0].name, "small");
    fb_sig_list_free(&list);

    /* exactly at the cap is fine */
    n = snprintf(s, cap, "%s", head);
    for (int i = 0; i < FB_SIG_MAX_PARAMS; i++)
        n += snprintf(s + n, cap - (size_t)n, "p%d, ", i);
    n += snprintf(s + n, cap - (size_t)n, "%s", tail);
    assert_int_equal(infer(s, (size_t)n, &list, &err), 0);
    assert_int_equal(list.nfuncs, 2);
    assert_int_equal(list.funcs[0].nparams, FB_SIG_MAX_PARAMS);
    fb_sig_list_free(&list);
    free(s);
}

/* The test program: the shared tests and the language's test_pathological, in this order, on su. */
static int run_infer_tests(infer_suite *su)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_prestate(test_table, su),
        cmocka_unit_test_prestate(test_find, su),
        cmocka_unit_test_prestate(test_prefixes_and_mutations, su),
        cmocka_unit_test_prestate(test_garbage, su),
        {"test_pathological", su->test_pathological, NULL, NULL, su},
        cmocka_unit_test_prestate(test_param_cap, su),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#endif
