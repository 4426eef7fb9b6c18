/* fnbox_call from a multithreaded host: several threads calling at once, while other threads of the
 * host allocate memory and sit in system calls. The sandbox's init is a raw clone of the calling process,
 * so it must not depend on libc state that other threads own (glibc's set*id wrappers signal every thread
 * glibc knows of and wait for answers that never come in the clone: a deadlock this test caught).
 * Each call must succeed with its own answer; a hang ends the test binary by scripts/test.sh's timeout.
 * Skipped when this machine cannot run calls (fnbox doctor). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "call_testlib.h"
#include "fnbox.h"

#define CALLERS 4
#define CALLS_EACH 5
#define BUSY 2

typedef struct caller {
    pthread_t thread;
    int id;
    int ok;              /* calls that came back as expected */
    char failure[512];   /* the first unexpected result */
} caller;

static atomic_bool stop_busy;

/* A host thread that keeps allocating and sleeping in system calls while the calls run. */
static void *busy(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop_busy)) {
        void *p = malloc(4096 + (size_t)(rand() % 4096));
        free(p);
        usleep(100);
    }
    return NULL;
}

static void *call_loop(void *arg)
{
    caller *c = arg;
    for (int i = 0; i < CALLS_EACH; i++) {
        char request[256];
        int n = snprintf(request, sizeof request,
                         "{\"language\":\"python\",\"code\":\"def f(a, b):\\n    return a * 1000 + b\\n\","
                         "\"args\":[%d,%d],\"timeout\":20}", c->id, i);
        char *text = NULL;
        size_t len = 0;
        int rc = fnbox_call(request, (size_t)n, NULL, &text, &len);
        json_t *res = text ? json_loads(text, 0, NULL) : NULL;
        json_int_t want = (json_int_t)c->id * 1000 + i;
        if (rc == FNBOX_OK && res && json_integer_value(json_object_get(res, "result")) == want &&
            json_is_true(json_object_get(res, "success")))
            c->ok++;
        else if (!c->failure[0])
            snprintf(c->failure, sizeof c->failure, "caller %d call %d: rc %d: %.400s", c->id, i, rc,
                     text ? text : "(no result)");
        json_decref(res);
        fnbox_free(text);
    }
    return NULL;
}

static void test_concurrent_callers(void **state)
{
    (void)state;
    if (!fbt_can_run(false))
        skip();
    pthread_t busy_threads[BUSY];
    atomic_store(&stop_busy, false);
    for (int i = 0; i < BUSY; i++)
        assert_int_equal(pthread_create(&busy_threads[i], NULL, busy, NULL), 0);
    caller callers[CALLERS];
    memset(callers, 0, sizeof callers);
    for (int i = 0; i < CALLERS; i++) {
        callers[i].id = i + 1;
        assert_int_equal(pthread_create(&callers[i].thread, NULL, call_loop, &callers[i]), 0);
    }
    for (int i = 0; i < CALLERS; i++)
        pthread_join(callers[i].thread, NULL);
    atomic_store(&stop_busy, true);
    for (int i = 0; i < BUSY; i++)
        pthread_join(busy_threads[i], NULL);
    for (int i = 0; i < CALLERS; i++) {
        if (callers[i].failure[0])
            fail_msg("%s", callers[i].failure);
        assert_int_equal(callers[i].ok, CALLS_EACH);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_concurrent_callers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
