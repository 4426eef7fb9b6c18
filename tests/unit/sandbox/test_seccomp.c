/* The seccomp program the library embeds (generated at build time by tools/seccomp_gen.c) is exactly the one
 * libseccomp compiles from src/sandbox/seccomp.c now: a stale or damaged build step would otherwise load an
 * outdated allowlist. The filter's behaviour is tested against the real kernel in tests/security/. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sandbox/internal.h"

static void test_embedded_filter_is_current(void **state)
{
    (void)state;
    fb_bpf embedded, fresh;
    fb_error err = {0};
    assert_int_equal(fb_seccomp_compile(&embedded, &err), 0);
    assert_int_equal(fb_seccomp_compile_fresh(&fresh, &err), 0);
    assert_true(embedded.len > 100); /* the allowlist is a few hundred instructions */
    assert_int_equal(embedded.len, fresh.len);
    assert_memory_equal(embedded.insns, fresh.insns, fresh.len * sizeof *fresh.insns);
    fb_bpf_free(&embedded);
    fb_bpf_free(&fresh);
}

static void test_each_call_gets_its_own_copy(void **state)
{
    (void)state;
    fb_bpf a, b;
    fb_error err = {0};
    assert_int_equal(fb_seccomp_compile(&a, &err), 0);
    assert_int_equal(fb_seccomp_compile(&b, &err), 0);
    assert_ptr_not_equal(a.insns, b.insns);
    a.insns[0].k ^= 1; /* a caller may not change what the next call gets */
    fb_bpf c;
    assert_int_equal(fb_seccomp_compile(&c, &err), 0);
    assert_memory_equal(b.insns, c.insns, b.len * sizeof *b.insns);
    fb_bpf_free(&a);
    fb_bpf_free(&b);
    fb_bpf_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_embedded_filter_is_current),
        cmocka_unit_test(test_each_call_gets_its_own_copy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
