/* The long-lived sandbox (fb_sandbox_create / exec / destroy) on the real kernel: programs share its
 * files, each program's processes end with it, deadlines and cancels kill the whole tree, and destroy
 * leaves no process behind. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "request/limits.h"
#include "sandbox/sandbox.h"

static const char *const k_env[] = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/workspace", "LANG=C.UTF-8", NULL};

static fb_sandbox_spec session_spec(void)
{
    fb_sandbox_spec spec = {
        .workdir = "/workspace",
        .cancel_fd = -1,
        .exec_any = true,
        .limits = {.memory_bytes = 256ULL << 20, .pids = 64, .nofile = 256, .fsize_bytes = 64ULL << 20,
                   .workspace_bytes = 64ULL << 20, .tmp_bytes = 64ULL << 20, .tmpfs_inodes = 10000,
                   .output_bytes = 1 << 20},
    };
    return spec;
}

/* Each test gets a sandbox of its own (setup), destroyed after it (teardown). */
typedef struct fixture {
    fb_sandbox_spec spec;
    fb_sandbox *sb;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    f->spec = session_spec();
    fb_error err = {0};
    if (fb_sandbox_create(&f->spec, &f->sb, &err) < 0) {
        fprintf(stderr, "fb_sandbox_create: %s\n", err.message);
        free(f);
        return -1;
    }
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    fb_sandbox_destroy(f->sb);
    free(f);
    return 0;
}

static fb_sandbox *sandbox_of(void **state)
{
    return ((fixture *)*state)->sb;
}

typedef struct run {
    fb_sandbox_outcome out;
    int rc;
    fb_error err;
} run;

static void sh(fb_sandbox *sb, const char *script, double timeout_s, int cancel_fd, run *r)
{
    const char *argv[] = {"/bin/sh", "-c", script, NULL};
    fb_sandbox_program prog = {.exec_path = "/bin/sh", .argv = (char *const *)argv, .envp = (char *const *)k_env,
                               .timeout_s = timeout_s, .output_bytes = 1 << 20, .cancel_fd = cancel_fd};
    memset(&r->err, 0, sizeof r->err);
    r->rc = fb_sandbox_exec(sb, &prog, &r->out, &r->err);
}

static const char *out_text(const run *r)
{
    return r->out.out.data ? r->out.out.data : "";
}

static void test_files_persist_between_programs(void **state)
{
    fb_sandbox *sb = sandbox_of(state);
    run a, b;
    sh(sb, "echo kept > note.txt && pwd", 10, -1, &a);
    assert_int_equal(a.rc, 0);
    assert_true(a.out.exited);
    assert_int_equal(a.out.exit_code, 0);
    assert_string_equal(out_text(&a), "/workspace\n");
    sh(sb, "cat /workspace/note.txt; exit 3", 10, -1, &b);
    assert_int_equal(b.rc, 0);
    assert_int_equal(b.out.exit_code, 3);
    assert_string_equal(out_text(&b), "kept\n");
    fb_sandbox_outcome_free(&a.out);
    fb_sandbox_outcome_free(&b.out);
}

static void test_signal_and_stdin(void **state)
{
    fb_sandbox *sb = sandbox_of(state);
    fb_error err = {0};
    run r;
    /* Its own /proc: /proc/self is the shell (as $$ names it), and PID 1 is its namespace's small init. */
    sh(sb, "read pid rest < /proc/self/stat; [ \"$pid\" = \"$$\" ] && echo same; ls /proc | grep -c '^[0-9]'", 10, -1,
       &r);
    assert_string_equal(out_text(&r), "same\n4\n"); /* init, the shell, ls, grep */
    fb_sandbox_outcome_free(&r.out);
    sh(sb, "kill -9 $$", 10, -1, &r); /* the shell is not its namespace's PID 1: SIGKILL kills it */
    assert_int_equal(r.rc, 0);
    assert_false(r.out.exited);
    assert_int_equal(r.out.term_signal, SIGKILL);
    fb_sandbox_outcome_free(&r.out);
    const char *argv[] = {"/bin/sh", "-c", "tr a-z A-Z", NULL};
    fb_sandbox_program prog = {.exec_path = "/bin/sh", .argv = (char *const *)argv, .envp = (char *const *)k_env,
                               .input = "hello\n", .input_len = 6, .timeout_s = 10, .output_bytes = 1024,
                               .cancel_fd = -1};
    assert_int_equal(fb_sandbox_exec(sb, &prog, &r.out, &err), 0);
    assert_string_equal(out_text(&r), "HELLO\n");
    fb_sandbox_outcome_free(&r.out);
}

/* A background job does not outlive its program: the next program finds no trace of it. */
static void test_background_job_dies_with_its_program(void **state)
{
    fb_sandbox *sb = sandbox_of(state);
    run a, b;
    sh(sb, "(sleep 1; echo late > /tmp/late) </dev/null >/dev/null 2>&1 & echo started", 10, -1, &a);
    assert_int_equal(a.rc, 0);
    assert_int_equal(a.out.exit_code, 0);
    assert_true(a.out.wall_ms < 900); /* it did not wait for the background job */
    sleep(2);
    sh(sb, "test -e /tmp/late && echo found || echo absent", 10, -1, &b);
    assert_string_equal(out_text(&b), "absent\n");
    fb_sandbox_outcome_free(&a.out);
    fb_sandbox_outcome_free(&b.out);
}

static void test_deadline_kills_the_tree_and_keeps_output(void **state)
{
    fb_sandbox *sb = sandbox_of(state);
    run r;
    sh(sb, "echo before; sleep 30 & sleep 30; echo after", 0.5, -1, &r);
    assert_int_equal(r.rc, 0);
    assert_true(r.out.timed_out);
    assert_string_equal(out_text(&r), "before\n");
    assert_true(r.out.wall_ms < 5000);
    fb_sandbox_outcome_free(&r.out);
    sh(sb, "echo still-alive", 10, -1, &r); /* the sandbox itself lives on */
    assert_string_equal(out_text(&r), "still-alive\n");
    fb_sandbox_outcome_free(&r.out);
}

static void test_cancel(void **state)
{
    fb_sandbox *sb = sandbox_of(state);
    int p[2];
    assert_int_equal(pipe(p), 0);
    assert_int_equal(write(p[1], "x", 1), 1); /* cancelled from the start */
    run r;
    sh(sb, "sleep 30", 30, p[0], &r);
    assert_int_equal(r.rc, 0);
    assert_true(r.out.cancelled);
    assert_true(r.out.wall_ms < 5000);
    fb_sandbox_outcome_free(&r.out);
    close(p[0]);
    close(p[1]);
}

typedef struct par {
    fb_sandbox *sb;
    char script[64];
    run r;
} par;

static void *par_main(void *arg)
{
    par *p = arg;
    sh(p->sb, p->script, 20, -1, &p->r);
    return NULL;
}

/* Programs run at once in one sandbox, each with its own output. */
static void test_concurrent_programs(void **state)
{
    fb_sandbox *sb = sandbox_of(state);
    enum { N = 6 };
    par ps[N];
    pthread_t t[N];
    for (int i = 0; i < N; i++) {
        ps[i].sb = sb;
        snprintf(ps[i].script, sizeof ps[i].script, "sleep 0.3; echo program-%d", i);
        assert_int_equal(pthread_create(&t[i], NULL, par_main, &ps[i]), 0);
    }
    for (int i = 0; i < N; i++) {
        assert_int_equal(pthread_join(t[i], NULL), 0);
        char want[32];
        snprintf(want, sizeof want, "program-%d\n", i);
        assert_int_equal(ps[i].r.rc, 0);
        assert_string_equal(out_text(&ps[i].r), want);
        fb_sandbox_outcome_free(&ps[i].r.out);
    }
}

static void test_bad_program_is_an_error(void **state)
{
    fb_sandbox *sb = sandbox_of(state);
    fb_error err = {0};
    const char *argv[] = {"nope", NULL};
    fb_sandbox_program prog = {.exec_path = "/no/such/program", .argv = (char *const *)argv,
                               .envp = (char *const *)k_env, .timeout_s = 5, .output_bytes = 1024, .cancel_fd = -1};
    fb_sandbox_outcome out;
    assert_int_equal(fb_sandbox_exec(sb, &prog, &out, &err), -1);
    assert_non_null(strstr(err.message, "/no/such/program"));
    fb_sandbox_outcome_free(&out);
    fb_error_clear(&err);
    prog.exec_path = "relative";
    assert_int_equal(fb_sandbox_exec(sb, &prog, &out, &err), -1);
    assert_int_equal(err.kind, FB_ERR_INVALID_REQUEST);
    fb_sandbox_outcome_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_files_persist_between_programs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_signal_and_stdin, setup, teardown),
        cmocka_unit_test_setup_teardown(test_background_job_dies_with_its_program, setup, teardown),
        cmocka_unit_test_setup_teardown(test_deadline_kills_the_tree_and_keeps_output, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cancel, setup, teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_programs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_program_is_an_error, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
