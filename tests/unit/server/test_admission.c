/* Admission (server/http/admission.c): the counters' bounds (running + queued never above the two
 * maxima; FULL beyond), a waiter started when a slot frees, a waiter whose client left giving its place
 * back, and draining refusing what waits and what comes. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "server/http/admission.h"

static void counts_are(fb_http_admission *a, unsigned running, unsigned queued)
{
    unsigned r, q;
    fb_http_admission_counts(a, &r, &q);
    if (r != running || q != queued)
        fail_msg("running %u queued %u, expected %u %u", r, q, running, queued);
}

static void test_bounds(void **state)
{
    (void)state;
    fb_http_admission a;
    assert_int_equal(fb_http_admission_init(&a, 2, 1), 0);
    for (int i = 0; i < 3; i++)
        assert_int_equal(fb_http_admission_enter(&a), FB_HTTP_ADMIT_OK);
    counts_are(&a, 0, 3);
    assert_int_equal(fb_http_admission_enter(&a), FB_HTTP_ADMIT_FULL);
    assert_int_equal(fb_http_admission_start(&a, NULL, NULL), FB_HTTP_ADMIT_OK);
    assert_int_equal(fb_http_admission_start(&a, NULL, NULL), FB_HTTP_ADMIT_OK);
    counts_are(&a, 2, 1);
    assert_int_equal(fb_http_admission_enter(&a), FB_HTTP_ADMIT_FULL); /* 2 running + 1 waiting */
    fb_http_admission_leave(&a);
    counts_are(&a, 2, 0);
    assert_int_equal(fb_http_admission_enter(&a), FB_HTTP_ADMIT_OK);
    fb_http_admission_leave(&a);
    fb_http_admission_finish(&a);
    fb_http_admission_finish(&a);
    counts_are(&a, 0, 0);
    fb_http_admission_leave(&a); /* never below zero */
    fb_http_admission_finish(&a);
    counts_are(&a, 0, 0);
    fb_http_admission_destroy(&a);
}

static void test_no_queue(void **state)
{
    (void)state;
    fb_http_admission a;
    assert_int_equal(fb_http_admission_init(&a, 1, 0), 0); /* --max-concurrency 1 --max-queue 0 */
    assert_int_equal(fb_http_admission_enter(&a), FB_HTTP_ADMIT_OK);
    assert_int_equal(fb_http_admission_enter(&a), FB_HTTP_ADMIT_FULL);
    assert_int_equal(fb_http_admission_start(&a, NULL, NULL), FB_HTTP_ADMIT_OK);
    assert_int_equal(fb_http_admission_enter(&a), FB_HTTP_ADMIT_FULL);
    fb_http_admission_finish(&a);
    assert_int_equal(fb_http_admission_enter(&a), FB_HTTP_ADMIT_OK);
    fb_http_admission_leave(&a);
    fb_http_admission_destroy(&a);
}

typedef struct waiter {
    fb_http_admission *a;
    atomic_bool client_left;
    atomic_int asked;
    fb_http_admit got;
} waiter;

static bool gone(void *ctx)
{
    waiter *w = ctx;
    atomic_fetch_add(&w->asked, 1);
    return atomic_load(&w->client_left);
}

static void *wait_for_slot(void *arg)
{
    waiter *w = arg;
    w->got = fb_http_admission_start(w->a, gone, w);
    return NULL;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void test_waiter_gets_freed_slot(void **state)
{
    (void)state;
    fb_http_admission a;
    assert_int_equal(fb_http_admission_init(&a, 1, 1), 0);
    assert_int_equal(fb_http_admission_enter(&a), FB_HTTP_ADMIT_OK);
    assert_int_equal(fb_http_admission_start(&a, NULL, NULL), FB_HTTP_ADMIT_OK);
    assert_int_equal(fb_http_admission_enter(&a), FB_HTTP_ADMIT_OK);
    waiter w = {.a = &a};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, wait_for_slot, &w), 0);
    sleep_ms(3 * FB_HTTP_ADMISSION_TICK_MS);
    counts_are(&a, 1, 1);             /* still waiting */
    assert_true(atomic_load(&w.asked) >= 1); /* and asking about its client every tick */
    fb_http_admission_finish(&a);
    pthread_join(t, NULL);
    assert_int_equal(w.got, FB_HTTP_ADMIT_OK);
    counts_are(&a, 1, 0);
    fb_http_admission_finish(&a);
    fb_http_admission_destroy(&a);
}

static void test_waiter_client_left(void **state)
{
    (void)state;
    fb_http_admission a;
    assert_int_equal(fb_http_admission_init(&a, 1, 1), 0);
    assert_int_equal(fb_http_admission_enter(&a), FB_HTTP_ADMIT_OK);
    assert_int_equal(fb_http_admission_start(&a, NULL, NULL), FB_HTTP_ADMIT_OK);
    assert_int_equal(fb_http_admission_enter(&a), FB_HTTP_ADMIT_OK);
    waiter w = {.a = &a};
    atomic_store(&w.client_left, true);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, wait_for_slot, &w), 0);
    pthread_join(t, NULL); /* within a tick or two */
    assert_int_equal(w.got, FB_HTTP_ADMIT_GONE);
    counts_are(&a, 1, 0); /* the place is back */
    assert_int_equal(fb_http_admission_enter(&a), FB_HTTP_ADMIT_OK);
    fb_http_admission_leave(&a);
    fb_http_admission_finish(&a);
    fb_http_admission_destroy(&a);
}

static void test_drain(void **state)
{
    (void)state;
    fb_http_admission a;
    assert_int_equal(fb_http_admission_init(&a, 1, 4), 0);
    assert_int_equal(fb_http_admission_enter(&a), FB_HTTP_ADMIT_OK);
    assert_int_equal(fb_http_admission_start(&a, NULL, NULL), FB_HTTP_ADMIT_OK);
    assert_int_equal(fb_http_admission_enter(&a), FB_HTTP_ADMIT_OK);
    assert_int_equal(fb_http_admission_enter(&a), FB_HTTP_ADMIT_OK); /* still reading its body */
    waiter w = {.a = &a};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, wait_for_slot, &w), 0);
    sleep_ms(FB_HTTP_ADMISSION_TICK_MS / 2);
    fb_http_admission_drain(&a);
    pthread_join(t, NULL);
    assert_int_equal(w.got, FB_HTTP_ADMIT_DRAINING);
    counts_are(&a, 1, 1); /* the running call runs on */
    assert_int_equal(fb_http_admission_enter(&a), FB_HTTP_ADMIT_DRAINING);
    assert_int_equal(fb_http_admission_start(&a, NULL, NULL), FB_HTTP_ADMIT_DRAINING); /* the body's end */
    counts_are(&a, 1, 0);
    fb_http_admission_finish(&a);
    counts_are(&a, 0, 0);
    fb_http_admission_destroy(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bounds),
        cmocka_unit_test(test_no_queue),
        cmocka_unit_test(test_waiter_gets_freed_slot),
        cmocka_unit_test(test_waiter_client_left),
        cmocka_unit_test(test_drain),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
