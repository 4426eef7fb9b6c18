/* A session kernel's CPU time, read by the host from /proc (docs/internals/kernels.md, "CPU time"). The kernel
 * is the child of its command init (PID 1 of its own PID namespace); the host finds both by their pids in its
 * own namespace and reads their counters, so the figure is the kernel's own as the kernel counts it, and the
 * code in the kernel cannot make it say anything else (a figure the kernel reported in its result frame could
 * be written by the cell). */
#ifndef FB_CORE_KERNEL_CPU_H
#define FB_CORE_KERNEL_CPU_H
#include <stdbool.h>
#include <sys/types.h>

typedef struct fb_kernel_cpu {
    pid_t init;                   /* the command init, in our PID namespace (0: not found) */
    pid_t kernel;                 /* its child, the kernel (0: not found: no figures) */
    unsigned long long start;     /* the kernel's start time (stat field 22): a reused pid is not it */
} fb_kernel_cpu;

/* Finds the kernel under the command init that pidfd refers to. false (and cpu cleared) when /proc does not
 * show it: figures are then not available. */
bool fb_kernel_cpu_find(fb_kernel_cpu *cpu, int pidfd);
/* CPU milliseconds so far of the kernel (all its threads, user + system) and of the processes it and its init
 * have reaped; -1 when they cannot be read (the kernel is gone). Processes still running under the kernel are
 * counted once reaped. */
double fb_kernel_cpu_ms(const fb_kernel_cpu *cpu);

#endif
