/* The sandbox: run one program in fresh Linux namespaces, supervised, and report how it ended.
 * It knows nothing of languages or requests: the executor describes what to run in fb_sandbox_spec. */
#ifndef FB_SANDBOX_H
#define FB_SANDBOX_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"
#include "util/error.h"

typedef struct fb_sandbox_file {  /* a file placed in the private root before the program starts */
    const char *path;             /* absolute path inside the sandbox, e.g. "/.fnbox/harness.py" */
    const char *data;
    size_t len;
    bool executable;              /* mode 0555 instead of 0444 (e.g. a compiled program) */
} fb_sandbox_file;

/* A read-only overlay the root gets: the union of srcs (host directories, srcs[0] on top) at dst, an absolute
 * path inside (under /.fnbox, or /node_modules). Each call has its own inodes, as the system tree's. */
typedef struct fb_sandbox_layer {
    const char *dst;
    const char *const *srcs;
    size_t nsrcs;
} fb_sandbox_layer;
#define FB_SANDBOX_MAX_LAYERS 8
#define FB_SANDBOX_MAX_LAYER_SRCS 32

typedef struct fb_sandbox_limits {
    double timeout_s;             /* wall-clock deadline */
    uint64_t memory_bytes;        /* cgroup memory limit, or RLIMIT_DATA fallback */
    uint64_t pids;                /* processes + threads */
    uint64_t nofile;
    uint64_t fsize_bytes;
    uint64_t workspace_bytes;
    uint64_t tmp_bytes;
    uint64_t tmpfs_inodes;
    size_t output_bytes;          /* per stream */
    size_t result_bytes;
    uint64_t cpu_seconds;         /* RLIMIT_CPU, per process; 0: the timeout + 2 s (a backstop) */
} fb_sandbox_limits;

/* No string or buffer a spec points to may lie in the calling process's command-line area (main's argv
 * strings): init, a copy of the caller, blanks that area so that /proc/1/cmdline shows nothing of the host,
 * and the program is forked from init after that. Copy such strings first. */
struct iovec;
typedef struct fb_sandbox_spec {
    const char *exec_path;        /* absolute path of the program, visible inside (system dirs are bound) */
    char *const *argv;            /* NULL-terminated */
    char *const *envp;            /* NULL-terminated; the whole environment (nothing is inherited) */
    const char *workdir;          /* absolute; a fresh tmpfs is mounted here and is the cwd */
    const char *cwd;              /* NULL: the workdir; else the program's cwd (absolute, normalized; created
                                     with its parents when missing) */
    const fb_sandbox_file *files; /* placed read-only under /.fnbox (never in the workspace) */
    size_t nfiles;
    const char *input;            /* streamed to the program on fd 4 (a pipe), then EOF; NULL for none.
                                     It is released only once the program is inside the call's cgroup
                                     (see inert_until_input), so nothing it carries runs outside the
                                     limits. */
    size_t input_len;
    /* Or the input in pieces (input then unused; input_len is their total), written with writev: a large
     * argument goes from the request's own buffer to the program without a copy. */
    const struct iovec *input_iov;
    size_t input_iovcnt;
    /* Called once the whole input is written (the pipe then closed), before the run ends: a large input
     * can be freed there, rather than held while the result is read. NULL: not told. */
    void (*on_input_written)(void *ctx);
    void *input_ctx;
    int cancel_fd;                /* readable => terminate the call (status terminated); -1 for none */
    fb_sandbox_limits limits;
    /* The request's files outside mounts: written into the writable areas (workdir, /tmp, /dev/shm; the
     * caller checks the paths) as the sandbox user's own files, mode 0644 (0755 if executable). */
    const fb_sandbox_file *user_files;
    size_t nuser_files;
    /* FUSE file systems mounted at these absolute paths (one equal to workdir replaces its tmpfs). Each
     * connection is handed to on_fuse in the parent before the program starts; the callee owns the fd and
     * must be serving it, or the program blocks on its first access. */
    const char *const *fuse_paths;
    size_t nfuse;
    int (*on_fuse)(void *ctx, size_t index, int fd, fb_error *err);
    void *fuse_ctx;
    bool keep_scratch;            /* hand the writable tmpfs areas out (outcome.scratch_*) to track changes */
    /* permissions.network: init opens a listening TCP socket on 127.0.0.1:FB_SANDBOX_PROXY_PORT inside the
     * call's network namespace (after bringing lo up) and it is handed to on_proxy in the parent before the
     * program starts; the callee owns the fd (even on failure) and serves it (net/proxy.h). Without
     * proxy_listen nothing listens there and the sandbox has no way out at all. */
    bool proxy_listen;
    int (*on_proxy)(void *ctx, int fd, fb_error *err);
    void *proxy_ctx;
    /* Which programs the sandbox may execve (Landlock's execute right, where the kernel has Landlock):
     * exec_path (and the dynamic loader or script interpreter it needs) always; also these absolute paths
     * (NULL-terminated; NULL for none); or, with exec_any, everything (e.g. a compiler's toolchain). */
    const char *const *exec_allow;
    bool exec_any;
    /* True when the program runs nothing of the caller's choosing until it reads its input (an
     * interpreter's harness). On cgroup v2 it may then start before it is inside the call's cgroup, which
     * hides the move (an RCU grace period) behind its start-up; its input is held until the move is done.
     * Otherwise (a compiled program, whose constructors run before main; a compiler, which forks before it
     * reads its source) init joins first and the program is born inside: a child forked before a move
     * would stay outside the call's memory and process limits for good. On v1 the program always moves
     * itself, first thing, which costs no grace period (spawn.c). */
    bool inert_until_input;
    /* Optional: the program's output as it arrives, on the supervising thread, before fb_sandbox_run
     * returns: stream 1 (stdout) or 2 (stderr), the bytes just read, as kept in the outcome's buffers
     * (nothing beyond their cap). Raw bytes: a chunk may end inside a UTF-8 character. */
    void (*on_output)(void *ctx, int stream, const char *data, size_t len);
    void *output_ctx;
    /* A command rather than a harness: the input is the program's stdin (fd 0, a pipe; EOF once given),
     * there is no fd 4, and with no_result_fd no fd 3 either (the result buffer then stays empty). */
    bool input_on_stdin;
    bool no_result_fd;
    /* A prepared sandbox's compiled program (a C or C++ call's, fb_sandbox_prepare): exec_path, a file under
     * /.fnbox not among files, comes with the call (fb_sandbox_call.program). The program process is set up
     * up to its Landlock ruleset (which names the file, so it must exist) and waits for it; with it written,
     * it finishes (Landlock, capabilities, seccomp) and execs it, as a cold call's would. */
    bool program_later;
    /* The system tree (/usr, the /bin, /sbin and /lib* entries, /etc's allowed entries) comes from this
     * directory, an environment's root (absolute), instead of the host's "/" (NULL). Its content is
     * untrusted: every path fnbox opens in it is resolved inside it (its symlinks never lead out), its
     * mounts are nosuid and nodev (no setuid bit, file capability or device node of it takes effect). */
    const char *sysroot;
    /* Read-only overlays placed in the root (an environment's package directories): at most
     * FB_SANDBOX_MAX_LAYERS, each of at most FB_SANDBOX_MAX_LAYER_SRCS directories. */
    const fb_sandbox_layer *layers;
    size_t nlayers;
} fb_sandbox_spec;

#define FB_SANDBOX_MAX_FUSE 16
#define FB_SANDBOX_MAX_SCRATCH 4

/* The writable tmpfs areas, in the order of outcome.scratch_*: the workdir (unless it is inside a FUSE
 * mount), /tmp, /dev/shm, and the root itself ("/": any other path that is not reserved, below). Fills out
 * and returns how many. [child]-safe. */
size_t fb_sandbox_scratch_areas(const fb_sandbox_spec *spec, const char *out[FB_SANDBOX_MAX_SCRATCH]);
/* Whether the absolute, normalized path is at or under what the root keeps read-only: the system
 * directories (/usr and the merged-usr links), /etc, /proc, /dev (but /dev/shm, a scratch area) and
 * the harness's /.fnbox. Everything else the function may create: it lands in the root's own tmpfs. */
bool fb_sandbox_reserved_path(const char *path);
/* The top-level paths fb_sandbox_reserved_path reserves (a static list). */
size_t fb_sandbox_reserved_roots(const char *const **list);
#define FB_SANDBOX_PROXY_PORT 3128 /* the proxy inside: 127.0.0.1:3128 (squid's port, what clients expect) */

typedef struct fb_sandbox_outcome {
    bool timed_out;
    bool cancelled;
    bool exited;                  /* normal exit: exit_code valid */
    int exit_code;
    int term_signal;              /* killed by this signal (0 if none) */
    bool oom_killed;              /* the memory limit killed it */
    uint64_t pids_refused;        /* new processes or threads the pids limit refused (pids.events max) */
    fb_buf out;                   /* the program's stdout (capped; out.truncated) */
    fb_buf errout;                /* its stderr */
    fb_buf result;                /* fd 3: the result channel */
    double wall_ms;
    double cpu_ms;
    uint64_t peak_memory_bytes;
    const char *memory_limit_mechanism; /* "cgroup v1", "cgroup v2", "rlimit" (static string) */
    /* With keep_scratch: O_PATH descriptors of the writable tmpfs roots, valid after the call (no process
     * can change them any more), and their paths inside (fb_sandbox_scratch_areas). */
    int scratch_fd[FB_SANDBOX_MAX_SCRATCH];
    const char *scratch_path[FB_SANDBOX_MAX_SCRATCH];
    size_t nscratch;
    bool prepared;                /* it ran in a prepared sandbox (fb_sandbox_run_prepared) */
    bool ended_early;             /* judged once every process of it was exiting, with a complete result
                                     (fb_sandbox_call.result_complete): no wait status (exited and
                                     term_signal unset), usage read from /proc and the cgroup */
} fb_sandbox_outcome;

/* Runs spec to completion. Returns 0 when the program ran (whatever it did: see out), -1 with
 * FB_ERR_SANDBOX_SETUP (naming the step) or FB_ERR_KERNEL_FEATURE when it could not run.
 * out is always initialised; the caller releases it with fb_sandbox_outcome_free. */
int fb_sandbox_run(const fb_sandbox_spec *spec, fb_sandbox_outcome *out, fb_error *err);
void fb_sandbox_outcome_free(fb_sandbox_outcome *out);

/* ---- A long-lived sandbox: create, exec any number of programs (also at once), destroy. ----
 * The same isolation as fb_sandbox_run: namespaces, root, cgroup (shared by every program of the sandbox),
 * seccomp, Landlock and rlimits per program. spec describes the sandbox (its exec_path, argv, envp, input
 * and inert_until_input are not used; limits.timeout_s is unused too: each program has its own) and must
 * stay valid, with everything it points to, until fb_sandbox_destroy. Each program runs in a PID
 * namespace of its own, nested in the sandbox's: when it ends, is killed at its deadline or cancelled,
 * every process it started ends with it (daemonized ones included). */
typedef struct fb_sandbox fb_sandbox;

typedef struct fb_sandbox_program {
    const char *exec_path;        /* absolute path inside the sandbox */
    char *const *argv;            /* NULL-terminated */
    char *const *envp;            /* NULL-terminated; the whole environment */
    const char *cwd;              /* absolute path inside; NULL: the workdir */
    const char *input;            /* the program's stdin (a pipe, then EOF); NULL: /dev/null */
    size_t input_len;
    const struct iovec *input_iov; /* or in pieces, as fb_sandbox_spec's */
    size_t input_iovcnt;
    double timeout_s;             /* wall-clock deadline */
    size_t output_bytes;          /* per stream */
    int cancel_fd;                /* readable => kill it (outcome.cancelled); -1 for none */
    void (*on_output)(void *ctx, int stream, const char *data, size_t len); /* as fb_sandbox_spec's */
    void *output_ctx;
    size_t result_bytes;          /* > 0: fd 3 is a result channel, read into outcome.result (at most this) */
    bool input_on_fd4;            /* the input goes to fd 4 (a harness's), stdin is /dev/null */
    /* A program the caller talks to itself while it runs (a session's kernel): own_fds become the
     * program's fd 1, 2, 3 and 4 in place of the supervised output pipes, the result memfd and the input
     * (input, output_bytes, on_output and result_bytes are then unused; stdin is /dev/null). Ownership
     * passes to fb_sandbox_exec, which closes them once they are sent (also when it fails), so the caller's
     * other ends see EOF when the program is gone. */
    bool own_io;
    int own_fds[4];
    /* Optional: called on the executing thread once the program's init runs, with a pidfd of that init
     * (the caller may dup it: a signal sent there can never reach a reused pid). The init forwards SIGINT
     * to the program, which is how a kernel is interrupted. */
    void (*on_spawned)(void *ctx, int pidfd);
    void *spawned_ctx;
} fb_sandbox_program;

/* Builds the sandbox and leaves its init waiting for programs. -1 with FB_ERR_SANDBOX_SETUP or
 * FB_ERR_KERNEL_FEATURE as fb_sandbox_run. Thread-safe. */
int fb_sandbox_create(const fb_sandbox_spec *spec, fb_sandbox **sb, fb_error *err);
/* Runs one program to its end (supervised as fb_sandbox_run's; out.result stays empty). 0 when it ran,
 * whatever it did; -1 when it could not start. out is always initialised; release it with
 * fb_sandbox_outcome_free. Several threads may exec in one sandbox at once. */
int fb_sandbox_exec(fb_sandbox *sb, const fb_sandbox_program *prog, fb_sandbox_outcome *out, fb_error *err);
/* The scratch roots handed out at creation (spec.keep_scratch), valid until destroy. */
const fb_sandbox_outcome *fb_sandbox_scratch(const fb_sandbox *sb);
/* Who the sandbox's user is, as the host sees it (privileged: fnbox is root, and must act as uid/gid). */
typedef struct fb_sandbox_user {
    unsigned uid, gid;
    bool privileged;
} fb_sandbox_user;
/* An O_PATH fd of the sandbox's root directory (owned by the sandbox, valid until destroy), for file
 * operations resolved inside it on the host's behalf (fs/inroot.h), and the user to do them as. */
int fb_sandbox_root(const fb_sandbox *sb, fb_sandbox_user *user);
/* How a long-lived sandbox ended by itself (its init killed from outside, or by the memory limit): what
 * fb_sandbox_ended reports. */
typedef struct fb_sandbox_end {
    int term_signal;              /* init was killed by this signal (0: it exited, exit_code) */
    int exit_code;
    bool memory_limit;            /* the cgroup's OOM killer killed something since the last exec began */
} fb_sandbox_end;
/* Whether the sandbox's init has ended (checked now, without waiting; the pid stays ours until destroy):
 * then every process of it is gone and no exec can run. Not for a sandbox fb_sandbox_kill ended. */
bool fb_sandbox_ended(fb_sandbox *sb, fb_sandbox_end *end);
/* A pidfd of the sandbox's init: readable (POLLIN) once it has ended. The sandbox's own, until destroy. */
int fb_sandbox_pidfd(const fb_sandbox *sb);
/* The kills its cgroup's OOM killer has made so far (0: none, or no memory cgroup). */
uint64_t fb_sandbox_oom_kills(const fb_sandbox *sb);
/* The most memory the sandbox's cgroup held over a window (a session's command, a kernel's cell): begin, run,
 * end. Everything the cgroup holds counts: the sandbox's tmpfs files, its other programs. cgroup v2 keeps a
 * peak per open file of memory.peak (Linux 6.12+), so windows overlap freely; v1 has one peak per cgroup,
 * reset when a window begins with no other open, so an overlapping window's figure covers the others' too
 * (never less than its own). 0 without a memory cgroup. */
typedef struct fb_sandbox_peak {
    int fd;                       /* v2: our reset memory.peak, or -1 */
} fb_sandbox_peak;
void fb_sandbox_peak_begin(fb_sandbox *sb, fb_sandbox_peak *w);
uint64_t fb_sandbox_peak_end(fb_sandbox *sb, fb_sandbox_peak *w);
/* Kills every process of the sandbox now (running execs end as killed); destroy still follows. */
void fb_sandbox_kill(fb_sandbox *sb);
/* Kills every process of the sandbox and removes its cgroup; its mounts go with its last process. No exec
 * may be running. NULL is a no-op. */
void fb_sandbox_destroy(fb_sandbox *sb);

/* ---- A one-shot sandbox started ahead of its call (prepared.c; a warm pool's, core/pool.c) ----
 * fb_sandbox_prepare does what fb_sandbox_run does before the input: namespaces, root, cgroup and limits,
 * the program started (spec.inert_until_input: an interpreter's harness, which runs nothing of the
 * caller's before its input) and inside the cgroup, waiting on its fd 4. spec has no user files, mounts or
 * proxy (fb_sandbox_call brings the files; a call that needs the others is not for a prepared sandbox),
 * its input is unused, and it must stay valid until destroy. fb_sandbox_run_prepared then runs the one call
 * it will ever serve, supervised as fb_sandbox_run (the deadline counts from there); fb_sandbox_destroy
 * follows either way. The creating thread must outlive the sandbox (init's death signal follows it). */
typedef struct fb_sandbox_call {
    const char *input;            /* to the program's fd 4, then EOF */
    size_t input_len;
    const struct iovec *input_iov; /* or in pieces, as fb_sandbox_spec's */
    size_t input_iovcnt;
    int cancel_fd;
    double timeout_s;             /* the call's deadline, counted from the run */
    uint64_t cpu_seconds;         /* the program's RLIMIT_CPU from now on (the spec's, a maximum, is lowered
                                     to this; the start-up it already spent counts, as in a cold call) */
    uint64_t memory_bytes, pids;  /* the call's cgroup limits (0: the spec's), set before the input where
                                     fb_sandbox_can_relimit */
    size_t output_bytes, result_bytes;
    const fb_sandbox_file *user_files; /* as fb_sandbox_spec's, written before the input */
    size_t nuser_files;
    const fb_sandbox_file *program; /* spec.program_later: the program, at spec.exec_path (mode 0555) */
    bool keep_scratch;            /* hand the scratch roots to the outcome (the spec must keep_scratch) */
    void (*on_output)(void *ctx, int stream, const char *data, size_t len);
    void *output_ctx;
    void (*on_input_written)(void *ctx); /* as fb_sandbox_spec's */
    void *input_ctx;
    /* Whether the result channel holds a complete answer (the caller's format). With it, the call ends as
     * soon as its stdout and stderr are closed and every process of it is exiting, without waiting for
     * their teardown (unmapping a runtime's memory: 1-3 ms); NULL: the call waits for every process to be
     * gone. */
    bool (*result_complete)(const char *data, size_t len);
} fb_sandbox_call;
int fb_sandbox_prepare(const fb_sandbox_spec *spec, fb_sandbox **sb, fb_error *err);
/* The spec a sandbox was made from. */
const fb_sandbox_spec *fb_sandbox_spec_of(const fb_sandbox *sb);
/* Prepared, not yet run, and its program still waiting (not killed, not crashed). */
bool fb_sandbox_waiting(const fb_sandbox *sb);
/* Whether a call may bring its own memory and pids limits (fb_sandbox_call.memory_bytes, pids). */
bool fb_sandbox_can_relimit(const fb_sandbox *sb);
/* The memory its cgroup holds now (the program and its tmpfs pages; init is outside on cgroup v1). */
uint64_t fb_sandbox_memory_now(const fb_sandbox *sb);
/* As fb_sandbox_run, for a prepared sandbox: 0 when the program ran, -1 when supervising it failed; 1 when
 * the sandbox could not take the call and nothing of it ran (its program died while it waited, the
 * files did not fit; a second run): err says why, run it elsewhere. out is always initialised. */
int fb_sandbox_run_prepared(fb_sandbox *sb, const fb_sandbox_call *call, fb_sandbox_outcome *out, fb_error *err);

#endif
