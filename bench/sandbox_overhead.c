/* The sandbox's fixed cost: N runs of /bin/true through fb_sandbox_run against fork+exec of /bin/true,
 * alternating, with medians and the per-stage difference. Build and run: make bench-overhead */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/sandbox.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double run_sandbox(void)
{
    char *const argv[] = {"/bin/true", NULL};
    char *const envp[] = {NULL};
    fb_sandbox_spec spec = {.exec_path = "/bin/true", .argv = argv, .envp = envp, .workdir = "/workspace",
                            .cancel_fd = -1};
    spec.limits = (fb_sandbox_limits){.timeout_s = 10, .memory_bytes = 256ULL << 20, .pids = 64, .nofile = 256,
                                      .fsize_bytes = 64 << 20, .workspace_bytes = 64 << 20, .tmp_bytes = 64 << 20,
                                      .tmpfs_inodes = 16384, .output_bytes = 1 << 20, .result_bytes = 1 << 20};
    fb_sandbox_outcome out;
    fb_error err = {0};
    double t0 = now_ms();
    int rc = fb_sandbox_run(&spec, &out, &err);
    double dt = now_ms() - t0;
    if (rc < 0 || !out.exited || out.exit_code != 0) {
        fprintf(stderr, "sandbox run failed: %s: %s\n", err.type, err.message);
        exit(1);
    }
    fb_sandbox_outcome_free(&out);
    return dt;
}

static double run_bare(void)
{
    double t0 = now_ms();
    pid_t pid = fork();
    if (pid == 0) {
        execl("/bin/true", "/bin/true", (char *)NULL);
        _exit(127);
    }
    waitpid(pid, NULL, 0);
    return now_ms() - t0;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 200;
    if (n < 1 || n > 100000)
        n = 200;
    double *s = calloc((size_t)n, sizeof *s), *b = calloc((size_t)n, sizeof *b);
    if (!s || !b)
        return 1;
    for (int i = 0; i < n; i++) {
        s[i] = run_sandbox();
        b[i] = run_bare();
    }
    qsort(s, (size_t)n, sizeof *s, cmp);
    qsort(b, (size_t)n, sizeof *b, cmp);
    printf("/bin/true x%d: sandboxed median %.3f ms (p90 %.3f), fork+exec median %.3f ms: fixed cost %.3f ms\n", n,
           s[n / 2], s[n * 9 / 10], b[n / 2], s[n / 2] - b[n / 2]);
    free(s);
    free(b);
    return 0;
}
