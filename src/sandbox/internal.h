/* Functions shared between the files of src/sandbox/. Not used outside it.
 * Functions marked [child] run inside the new namespaces after clone: they must not allocate
 * (the caller may be multi-threaded) and report failures in a fixed fb_error. */
#ifndef FB_SANDBOX_INTERNAL_H
#define FB_SANDBOX_INTERNAL_H
#include <linux/filter.h>
#include <stdbool.h>
#include <sys/types.h>

#include "sandbox/sandbox.h"

#define FB_INNER_UID 1000 /* the sandboxed user's id inside; never 0 */
#define FB_INNER_GID 1000
/* A set-up failure report from inside the sandbox ("E<type>: <message>", then the program's wait status).
 * The sandbox's own caps live here, not in request/limits.h: the sandbox does not include the layers above it. */
#define FB_SANDBOX_MAX_SETUP_MSG 2048

/* userns.c */
typedef struct fb_idmap {
    uid_t outer_uid;
    gid_t outer_gid;
    bool privileged;        /* fnbox runs as root: map to an unprivileged id, drop supplementary groups */
} fb_idmap;
void fb_idmap_choose(fb_idmap *m);
int fb_userns_write_maps(pid_t pid, const fb_idmap *m, fb_error *err);
int fb_userns_become_inner(const fb_idmap *m, fb_error *err);         /* [child] */
int fb_caps_drop_all(fb_error *err);                                   /* [child] */
/* [child] Moves the caller into a user and mount namespace nested in the sandbox's, so that every mount
 * it inherits is locked (MNT_LOCKED): no remounting read-write, no unmounting, whatever its capabilities. */
int fb_userns_lock_mounts(fb_error *err);

/* landlock.c */
/* The kernel's Landlock ABI version, probed once per process (0: unavailable; *why, if given, gets the
 * probe's errno). Thread-safe. */
int fb_landlock_abi(int *why);
/* [child] Restricts the caller (and its future children) to spec's paths and executables; no-op without
 * Landlock or with the "landlock" defence switched off. */
int fb_landlock_apply(const fb_sandbox_spec *spec, fb_error *err);

/* rootfs.c */
/* [child] Mounts the FUSE connections fuse_fds (spec->nfuse of them) and fills scratch_fds (O_PATH, in
 * outcome order) when spec->keep_scratch, then with spec->program_later /.fnbox, opened before it is
 * sealed (O_PATH: files created through it are on the root's writable mount). Does not enter the workdir:
 * a FUSE workdir must be served first. */
int fb_rootfs_build(const fb_sandbox_spec *spec, const int *fuse_fds, int *scratch_fds, size_t *nscratch,
                    fb_error *err);
/* [child] The program, after fb_userns_lock_mounts: /proc becomes read-only (the root is writable, and
 * Landlock's rights on it reach beneath /proc). */
/* [child, init, after the root is built] Enters the program's directory: spec->cwd (created with its
 * parents when missing, as the sandbox user), or the workdir. */
int fb_rootfs_enter_cwd(const fb_sandbox_spec *spec, fb_error *err);
int fb_rootfs_seal_proc(fb_error *err);
/* [child, a spawned program's init] A mount namespace of its own (a copy of the sandbox's: the same files)
 * with a fresh /proc of its own PID namespace, so that /proc/self, ps and the like work in the program. */
int fb_rootfs_fresh_proc(fb_error *err);

/* netns.c: the call's network namespace, from inside (docs/internals/network.md). */
extern const char fb_netns_hosts[];  /* /etc/hosts (rootfs.c writes it): the names that live on lo */
extern const size_t fb_netns_hosts_len;
/* [child] init's network step: lo up (nothing else; test builds without the namespace skip it). */
int fb_netns_up(fb_error *err);
/* [child] The proxy's listening socket: TCP on 127.0.0.1:FB_SANDBOX_PROXY_PORT, opened here, in the call's
 * network namespace, so that it is reachable from inside only; the supervisor accepts on it from outside
 * (a socket stays in the namespace it was created in, whoever holds it). Brings lo up first. */
int fb_netns_proxy_listener(int *fd, fb_error *err);

/* seccomp.c: compiled in the parent (libseccomp allocates), loaded in the child. */
typedef struct fb_bpf {
    struct sock_filter *insns;
    unsigned short len;
} fb_bpf;
/* A copy of the filter: the one generated at build time (tools/seccomp_gen.c, about 2 ms saved per fnbox
 * process), or compiled on first use when the build has none. */
int fb_seccomp_compile(fb_bpf *out, fb_error *err);
/* Compiles the filter with libseccomp now (the generator, and the test that the embedded one is current). */
int fb_seccomp_compile_fresh(fb_bpf *out, fb_error *err);
void fb_bpf_free(fb_bpf *bpf);
int fb_seccomp_load(const fb_bpf *bpf, fb_error *err);                 /* [child] */
int fb_seccomp_exit_listener(void);                                    /* [child] */

/* limits.c */
/* How the call's processes get into its cgroup (spawn.c says why there are three). */
typedef enum fb_cgroup_join {
    FB_JOIN_NONE,            /* no cgroup: rlimits only */
    FB_JOIN_PROGRAM_ITSELF,  /* v1: the program writes "0" to the `tasks` fds opened here, first thing */
    FB_JOIN_PARENT_INIT,     /* the parent moves init while it builds the root; init waits before forking */
    FB_JOIN_PARENT_PROGRAM,  /* the parent moves the program while it starts (an interpreter's harness) */
} fb_cgroup_join;

typedef struct fb_cgroup {
    char memory_dir[512];   /* empty if unused */
    char pids_dir[512];
    bool v2;
    const char *mechanism;  /* "cgroup v1", "cgroup v2" or "rlimit" */
    fb_cgroup_join join;
    int tasks_fd[2];        /* FB_JOIN_PROGRAM_ITSELF: memory_dir/tasks, pids_dir/tasks (-1: none) */
} fb_cgroup;
/* Makes the call's cgroup. inert: the program runs none of the caller's code before it reads its input
 * (fb_sandbox_spec.inert_until_input), so it may join while it starts. The pids limit counts init too
 * when init will be inside. */
int fb_cgroup_create(fb_cgroup *cg, const fb_sandbox_limits *lim, bool inert, fb_error *err);
int fb_cgroup_attach(const fb_cgroup *cg, pid_t pid, fb_error *err);
/* [child] FB_JOIN_PROGRAM_ITSELF: moves the calling (single-threaded) process into the cgroup and closes
 * the fds. */
int fb_cgroup_join_self(const int tasks_fd[2], fb_error *err);
/* The cgroup's peak memory, whether the memory limit killed a process, and (pids_refused non-NULL) how
 * often pids.max refused a fork or clone. */
void fb_cgroup_read_stats(const fb_cgroup *cg, uint64_t *peak_bytes, bool *oom_killed, uint64_t *pids_refused);
/* The memory the cgroup holds now (its processes and tmpfs pages); 0 without a memory cgroup. */
uint64_t fb_cgroup_read_current(const fb_cgroup *cg);
/* The kills the memory cgroup's OOM killer made (memory.events oom_kill on v2, memory.oom_control on v1). */
uint64_t fb_cgroup_oom_kills(const fb_cgroup *cg);
/* A peak window (fb_sandbox_peak): v2 opens memory.peak and resets it for that file (-1 where the kernel
 * cannot: the cgroup's whole-life peak is read then); v1 resets the cgroup's peak when reset is true. */
int fb_cgroup_peak_open(const fb_cgroup *cg, bool reset);
uint64_t fb_cgroup_peak_read(const fb_cgroup *cg, int fd);
/* Whether memory and pids limits can change after the program started (both are cgroup files here). */
bool fb_cgroup_can_relimit(const fb_cgroup *cg);
/* Sets the memory and pids limits of to where they differ from from (a prepared call's own limits).
 * Refuses a limit the started program already exceeds: a cold start under it would have gone otherwise. */
int fb_cgroup_relimit(const fb_cgroup *cg, const fb_sandbox_limits *from, const fb_sandbox_limits *to, fb_error *err);
void fb_cgroup_destroy(fb_cgroup *cg);
/* cgroup_orphans.c: removes, once per *swept flag, the empty call cgroups under base whose maker (a process
 * of this PID namespace) is gone; fb_cgroup_pidns_id names this process's PID namespace (0: unknown, and
 * then nothing is swept). */
void fb_cgroup_sweep_orphans(const char *base, int *swept);
unsigned long fb_cgroup_pidns_id(void);
int fb_rlimits_apply(const fb_sandbox_limits *lim, bool memory_by_cgroup, bool pids_by_cgroup,
                     fb_error *err);                                   /* [child] */

/* spawn.c: what init and the program share (a copy of it lives in init, then in each program). */
typedef struct fb_child_ctx {
    const fb_sandbox_spec *spec;
    const fb_bpf *bpf;
    fb_idmap idmap;
    bool memory_by_cgroup, pids_by_cgroup;
    bool await_cgroup; /* init waits for the parent's "joined" before it starts the program */
    int tasks_fd[2];   /* FB_JOIN_PROGRAM_ITSELF: the program moves itself into the call's cgroup */
    int oom_adj;       /* the program's oom_score_adj (the host's own), restored when init's was lowered */
    bool oom_restore;
    int out_w, err_w, report_w, sync_fd, result_fd, input_r; /* init keeps these descriptors only */
    int parent_ends[5]; /* the parent's ends of the same pipes */
    int fuse_fds[FB_SANDBOX_MAX_FUSE];
    /* What the program runs: the spec's (one-shot), or a spawn request's (a long-lived sandbox). */
    const char *exec_path;
    char *const *argv;
    char *const *envp;
    const char *cwd;    /* NULL: init's (the workdir) */
    bool input_on_stdin; /* the input pipe is the program's fd 0 (a command's stdin), not fd 4 */
    bool serve;         /* long-lived: init serves spawn requests on ctl_fd instead of forking one program */
    int ctl_fd;         /* serve: init's end of the control socket (SOCK_SEQPACKET) */
    bool exit_listener; /* prepared: the program sends an exit listener ('x', seccomp.c) before its execve */
    bool program_later; /* prepared: the program waits for its file ("w", then "g": spec.program_later) */
} fb_child_ctx;
/* The parent's and init's ends of a sandbox's pipes and sockets (-1 once closed). */
typedef struct fb_run_fds {
    int out[2], err[2], report[2], sync[2], input[2];
    int ctl[2];          /* serve: the control socket (SOCK_SEQPACKET) */
    int result, pidfd;
} fb_run_fds;

/* A sandbox: its init (our child) and what the parent keeps of it. */
struct fb_sandbox {
    const fb_sandbox_spec *spec;
    fb_cgroup cg;
    fb_bpf bpf;
    fb_idmap idmap;
    pid_t pid;                /* init; -1 once reaped */
    fb_run_fds f;
    fb_sandbox_outcome setup; /* a long-lived sandbox's scratch roots, handed out at creation */
    int root_fd;              /* a long-lived sandbox's root (O_PATH), for fb_sandbox_root */
    pid_t program;            /* a prepared sandbox's program (prepared.c), as our PID namespace sees it */
    int program_fd;           /* its pidfd (-1: none) */
    int ns_held[2];           /* prepared: the program's and init's mount namespaces, held (see prepared.c) */
    int exit_fd;              /* prepared: the program's exit listener (seccomp.c), or -1 */
    int fnbox_dir_fd;         /* spec.program_later: /.fnbox of the root's own (writable) mount, O_PATH */
    bool prepared;            /* prepared and not yet run */
    bool input_later;         /* prepared: keep the input pipe, whatever spec->input says */
    uint64_t inherited_rss;   /* prepared: our RSS when init was cloned, which init's own maxrss reflects */
    uint64_t oom_seen;        /* long-lived: the cgroup's OOM kills when the last exec began (atomic) */
    unsigned peak_windows;    /* long-lived: fb_sandbox_peak windows open now (atomic; cgroup v1's reset) */
};
#define FB_SANDBOX_CREATE_TIMEOUT_S 30 /* a long-lived sandbox's init has this long to build its root */

/* The spawn request a long-lived sandbox's init reads from its control socket (one message): this header,
 * then len bytes of NUL-terminated strings: exec_path, cwd ("" for the workdir), argc argv strings, envc
 * envp strings. The descriptors come with it (SCM_RIGHTS), in this order: stdout and stderr write ends,
 * the report pipe's write end, the command's own SO_PASSCRED socket, with FB_SPAWN_STDIN the stdin pipe's
 * read end, with FB_SPAWN_RESULT the result channel. */
typedef struct fb_spawn_hdr {
    char tag;                 /* 'x' */
    unsigned char flags;      /* FB_SPAWN_* */
    unsigned short reserved;
    unsigned argc, envc, len;
} fb_spawn_hdr;
#define FB_SPAWN_STDIN 1
#define FB_SPAWN_RESULT 2 /* one more descriptor, after the others: the result channel, the program's fd 3 */
#define FB_SPAWN_INPUT4 4 /* the stdin pipe goes to the program's fd 4 instead, and fd 0 is /dev/null */
#define FB_SPAWN_MAX_ARGS 4096    /* argv and envp entries, each */
#define FB_SPAWN_MAX_BYTES ((size_t)192 * 1024) /* the strings, in all: under a SOCK_SEQPACKET's default buffer */
#define FB_SPAWN_FDS 6

/* spawn.c's steps, shared with prepared.c (a one-shot sandbox started ahead of its input). */
void fb_sandbox_struct_init(fb_sandbox *sb, const fb_sandbox_spec *spec);
void fb_sandbox_outcome_init(const fb_sandbox_spec *spec, fb_sandbox_outcome *out);
/* Makes the cgroup, clones init, releases it; serve: a long-lived sandbox's init (serve.c). */
int fb_sandbox_start(fb_sandbox *sb, bool serve, fb_sandbox_outcome *out, fb_error *err);
/* Kills init if it still runs, reaps it, closes the fds, removes the cgroup. */
void fb_sandbox_stop(fb_sandbox *sb);
/* on_started for FB_JOIN_PARENT_PROGRAM: moves the program (ctx: the fb_cgroup) into the call's cgroup. */
int fb_sandbox_join_program(void *ctx, pid_t program, fb_error *err);
/* What supervising a one-shot sandbox's program takes: its input, deadline and caps (limits), cancel fd,
 * the output as it arrives; started: the program's "started" was already taken (and it joined its
 * cgroup), so the input flows at once. */
typedef struct fb_sandbox_oneshot {
    const char *input;
    size_t input_len;
    const struct iovec *input_iov; /* or in pieces (fb_sandbox_spec's) */
    size_t input_iovcnt;
    int cancel_fd;
    const fb_sandbox_limits *limits;
    void (*on_output)(void *ctx, int stream, const char *data, size_t len);
    void *output_ctx;
    void (*on_input_written)(void *ctx); /* fb_sandbox_spec's */
    void *input_ctx;
    bool started;
    uint64_t inherited_rss;  /* a prepared sandbox's: our RSS when init was cloned (0: now) */
    bool (*ended)(void *ctx); /* fb_supervise_io's */
    void *ended_ctx;
    int exit_fd;              /* fb_supervise_io's (-1: none) */
    void (*sample)(void *ctx); /* fb_supervise_io's */
} fb_sandbox_oneshot;
int fb_sandbox_supervise_one(fb_sandbox *sb, const fb_sandbox_oneshot *run, fb_sandbox_outcome *out, fb_error *err);
/* After it: peak memory, OOM kill, the result channel into out. */
int fb_sandbox_read_outcome(fb_sandbox *sb, fb_sandbox_outcome *out, fb_error *err);
int fb_sandbox_read_result(int fd, fb_buf *result, fb_error *err);

/* early_end.c: a prepared call may end once every process of it is exiting and its result is complete.
 * fb_early_end_ask is fb_supervise_io.ended (ctx: the fb_early_end); after such an end,
 * fb_early_end_usage fills the usage init's wait status would have carried. */
typedef struct fb_early_end {
    const fb_sandbox *sb;
    bool (*result_complete)(const char *data, size_t len);
    uint64_t peak_rss; /* the program's VmHWM, the last time it could be read (it is gone once its memory is) */
} fb_early_end;
bool fb_early_end_ask(void *ctx);
/* Reads the program's VmHWM now (fb_supervise_io.sample): with an exit listener the question is asked only
 * once the program exits, when its memory, and the figure, may be gone already. */
void fb_early_end_sample(void *ctx);
void fb_early_end_usage(const fb_early_end *early, fb_sandbox_outcome *out);
/* From /proc: a process's state letter (R, S, D...; 0 if unreadable), its CPU time so far (all its threads,
 * ms; 0 if unreadable). */
char fb_proc_state(pid_t pid);
double fb_proc_cpu_ms(pid_t pid);

/* The program's wait status as an outcome (exited/exit_code or term_signal). */
void fb_sandbox_decode_status(int st, fb_sandbox_outcome *out);

/* [child] Reports a set-up failure on report_fd ("E<kind>: <message>") and exits 127. */
__attribute__((noreturn)) void fb_child_fail(int report_fd, const fb_error *err);
/* [child] The program's half: join the cgroup, fds, rlimits, Landlock, caps, seccomp, execve. */
__attribute__((noreturn)) void fb_program_main(const fb_child_ctx *c);
/* [child] Forks the program, reports its wait status ("S<int>"; with c->serve then "U<struct rusage>" of
 * everything it started), kills what is left of its PID namespace and exits. */
__attribute__((noreturn)) void fb_init_run_program(const fb_child_ctx *c);
/* [child] serve.c: init of a long-lived sandbox, once its root is built: serve spawn requests on
 * c->ctl_fd until the parent closes it, then exit (the kernel kills what is left). */
__attribute__((noreturn)) void fb_init_serve(fb_child_ctx *c);

/* sockmsg.c */
/* Sends len bytes with n descriptors (SCM_RIGHTS) in one message. */
int fb_sock_send_fds(int sock, const void *data, size_t len, const int *fds, size_t n, fb_error *err);
/* Receives a one-byte message (into *tag, if given) and the sender's pid from its credentials (as seen from
 * our PID namespace): the pid, 0 at EOF, -1 on error or when no credentials came. */
pid_t fb_sock_recv_pid(int sock, char *tag);
/* A message tagged `tag` carrying one descriptor, if one is waiting (never blocks): the descriptor, or -1. */
int fb_sock_recv_fd_now(int sock, char tag);
/* Waits for a one-byte message (into *tag) and the descriptor it may carry (*fd, else -1): 1, 0 at EOF, -1
 * on error. */
int fb_sock_recv_tagged(int sock, char *tag, int *fd);

/* supervise.c */
typedef struct fb_supervise_io {
    pid_t init_pid;
    int pidfd;
    bool foreign;          /* init is not our child (a spawned program's): no wait4; the report has its usage */
    int out_fd, err_fd, report_fd, cancel_fd;
    int started_fd;        /* SO_PASSCRED socket: the program says "started" on it, with its pid */
    int *input_fd;         /* non-blocking write end of the program's fd 4 (or -1): closed and set to -1
                              by the supervisor once the input is written */
    const char *input;
    size_t input_len;
    const struct iovec *input_iov; /* or in pieces (input unused; input_len their total) */
    size_t input_iovcnt;
    void (*on_input_written)(void *ctx); /* fb_sandbox_spec's: input is not read after it */
    void *input_ctx;
    /* Called with the program's pid (in our pid namespace) once it has started; the input is written
     * only after it returns 0. */
    int (*on_started)(void *ctx, pid_t program, fb_error *err);
    void *ctx;
    void (*on_output)(void *ctx, int stream, const char *data, size_t len); /* fb_sandbox_spec's */
    void *output_ctx;
    uint64_t inherited_rss;  /* what init and the program started with (our RSS at the clone); 0: ours now */
    /* Asked, once the input is written and stdout and stderr are closed (not killed), whether the call has
     * ended although its processes are still tearing down (prepared.c). True ends supervision at once:
     * init is left alive, unreaped (out->ended_early), for fb_sandbox_stop. NULL: wait for init. */
    bool (*ended)(void *ctx);
    void *ended_ctx;
    /* With ended: hangs up once every process of the program has begun to exit (seccomp.c's exit listener);
     * ended is then asked at once. -1: asked on the timer only. */
    int exit_fd;
    /* With ended: called (ctx: ended_ctx) when stdout and stderr have both closed, a harness's last step
     * before it exits, and before each timed ask. May be NULL. */
    void (*sample)(void *ctx);
} fb_supervise_io;
/* Our resident set now (0 if unknown): what a clone of us starts with. */
uint64_t fb_own_rss_bytes(void);
/* Waits for init to exit (or the deadline / cancel, then kills it), draining output.
 * Fills out's timing, status and buffers; report_msg gets a setup failure text, if any. */
int fb_supervise(const fb_supervise_io *io, const fb_sandbox_limits *lim, fb_sandbox_outcome *out,
                 char *report_msg, size_t report_cap, int *child_wait_status, fb_error *err);

#endif
