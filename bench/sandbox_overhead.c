/* The sandbox's fixed cost: N runs of a program (default /bin/true) through fb_sandbox_run against a plain
 * fork+exec of it, alternating, with medians. Two sandboxed rows, one per way the program joins the call's
 * cgroup (sandbox/spawn.c): "harness" (inert_until_input: it joins while it starts up, as an interpreter's
 * harness does) and "compiled" (init joins first, while it builds the root, as for a compiled program).
 *
 *     make bench-overhead                      # /bin/true x200
 *     build/bench/sandbox_overhead 100 /usr/bin/php -n -r 'echo 1;'
 *
 * The program gets no input, an empty environment and /workspace as its directory. */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static char *const k_envp[] = {NULL};

static double run_sandbox(char *const *argv, bool inert)
{
    fb_sandbox_spec spec = {.exec_path = argv[0], .argv = argv, .envp = k_envp, .workdir = "/workspace",
                            .cancel_fd = -1, .inert_until_input = inert};
    spec.limits = (fb_sandbox_limits){.timeout_s = 10, .memory_bytes = 256ULL << 20, .pids = 64, .nofile = 256,
                                      .fsize_bytes = 64 << 20, .workspace_bytes = 64 << 20, .tmp_bytes = 64 << 20,
                                      .tmpfs_inodes = 16384, .output_bytes = 1 << 20, .result_bytes = 1 << 20};
    fb_sandbox_outcome out;
    fb_error err = {0};
    double t0 = now_ms();
    int rc = fb_sandbox_run(&spec, &out, &err);
    double dt = now_ms() - t0;
    if (rc < 0 || !out.exited || out.exit_code != 0) {
        fprintf(stderr, "sandbox run of %s failed: %s: %s (exit %d, signal %d)\n", argv[0], fb_error_type(&err), err.message,
                out.exit_code, out.term_signal);
        exit(1);
    }
    fb_sandbox_outcome_free(&out);
    return dt;
}

static double run_bare(char *const *argv)
{
    double t0 = now_ms();
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY); /* as the sandbox's output goes to a pipe, not the terminal */
        if (null >= 0)
            dup2(null, 1);
        execve(argv[0], argv, k_envp);
        _exit(127);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    double dt = now_ms() - t0;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "bare run of %s failed (status %d)\n", argv[0], st);
        exit(1);
    }
    return dt;
}

static void free_argv(char **v)
{
    for (int i = 0; v[i]; i++)
        free(v[i]);
    free(v);
}

int main(int argc, char **argv)
{
    static char *default_argv[] = {"/bin/true", NULL};
    long n = argc > 1 ? strtol(argv[1], NULL, 10) : 200;
    if (n < 1 || n > 100000)
        n = 200;
    if (argc > 2 && argv[2][0] != '/') {
        fprintf(stderr, "usage: sandbox_overhead [N [/absolute/program [args...]]]\n");
        return 2;
    }
    /* Copies: the sandbox's init blanks this process's command-line area (sandbox.h), argv's strings too. */
    char **prog = default_argv;
    if (argc > 2) {
        prog = calloc((size_t)argc - 1, sizeof *prog);
        if (!prog)
            return 1;
        for (int i = 2; i < argc; i++)
            if (!(prog[i - 2] = strdup(argv[i]))) {
                free_argv(prog);
                return 1;
            }
    }
    double *h = calloc((size_t)n, sizeof *h), *c = calloc((size_t)n, sizeof *c), *b = calloc((size_t)n, sizeof *b);
    if (!h || !c || !b) {
        free(h);
        free(c);
        free(b);
        if (prog != default_argv)
            free_argv(prog);
        return 1;
    }
    for (long i = 0; i < n; i++) {
        h[i] = run_sandbox(prog, true);
        c[i] = run_sandbox(prog, false);
        b[i] = run_bare(prog);
    }
    qsort(h, (size_t)n, sizeof *h, cmp);
    qsort(c, (size_t)n, sizeof *c, cmp);
    qsort(b, (size_t)n, sizeof *b, cmp);
    printf("%s x%ld: fork+exec median %.3f ms\n", prog[0], n, b[n / 2]);
    printf("  sandboxed, harness mode:  median %.3f ms (p90 %.3f): fixed cost %.3f ms\n", h[n / 2], h[n * 9 / 10],
           h[n / 2] - b[n / 2]);
    printf("  sandboxed, compiled mode: median %.3f ms (p90 %.3f): fixed cost %.3f ms\n", c[n / 2], c[n * 9 / 10],
           c[n / 2] - b[n / 2]);
    free(h);
    free(c);
    free(b);
    if (prog != default_argv)
        free_argv(prog);
    return 0;
}
