/* Every cap of a call that a request may set or hit, in one place. Per-call values are clamped by the FB_MAX_*
 * ones. The caps of a lower layer's own protocol stay in its header (sandbox/internal.h, net/proxy.h,
 * fs/glob.h, ...): sandbox/, fs/ and net/ include neither request/ nor core/. */
#ifndef FB_LIMITS_H
#define FB_LIMITS_H

#define FB_MiB (1024ULL * 1024ULL)

/* Input */
#define FB_MAX_REQUEST_BYTES (256ULL * FB_MiB)  /* whole request JSON */
#define FB_MAX_CODE_BYTES (16ULL * FB_MiB)      /* the `code` string */
#define FB_MAX_REQUEST_FILES 10000             /* entries of `files` */
#define FB_MAX_NAME_BYTES 256                   /* functionName, language, workdir */
/* jansson refuses nesting deeper than JSON_PARSER_MAX_DEPTH (2048) with a clear error. */

/* Time (seconds) */
#define FB_DEFAULT_TIMEOUT_S 30.0
#define FB_MAX_TIMEOUT_S 3600.0

/* Sandbox resources (per call). A request's `limits` sets each one (docs/guide/permissions-and-limits.md, Limits) up to its FB_MAX_*:
 * more is an InvalidRequest naming the field and the maximum, never silently clamped. */
#define FB_DEFAULT_MEMORY_BYTES (256ULL * FB_MiB) /* cgroup memory limit (includes tmpfs pages) */
#define FB_MAX_MEMORY_BYTES (4096ULL * FB_MiB)
#define FB_MIN_MEMORY_BYTES (16ULL * FB_MiB)      /* below this no runtime starts */
#define FB_DEFAULT_PIDS 64                        /* processes + threads */
#define FB_MAX_PIDS 1024
#define FB_DEFAULT_NOFILE 256                     /* open files */
#define FB_MAX_NOFILE 4096
#define FB_MIN_NOFILE 16                          /* fds 0-4 are the harness protocol's */
#define FB_DEFAULT_FSIZE_BYTES (64ULL * FB_MiB)   /* largest file one write may grow (the result channel too) */
#define FB_MAX_FSIZE_BYTES (1024ULL * FB_MiB)
#define FB_DEFAULT_WORKSPACE_BYTES (64ULL * FB_MiB)
#define FB_MAX_WORKSPACE_BYTES (1024ULL * FB_MiB)
#define FB_DEFAULT_TMP_BYTES (64ULL * FB_MiB)     /* /tmp and /dev/shm, each */
#define FB_MAX_TMP_BYTES (1024ULL * FB_MiB)
#define FB_DEFAULT_TMPFS_INODES 16384             /* each tmpfs (workspace, /tmp, /dev/shm) */
#define FB_MAX_TMPFS_INODES 1048576
#define FB_ROOTFS_BYTES (4ULL * FB_MiB)           /* the private root: mount points + /etc + harness */
#define FB_CPU_SLACK_S 2                          /* default CPU limit: the timeout (rounded up) + this */
#define FB_MAX_CPU_SECONDS 7200                   /* limits.cpuSeconds, per process (RLIMIT_CPU) */

/* Output */
#define FB_DEFAULT_OUTPUT_BYTES (1ULL * FB_MiB)   /* per stream (stdout, stderr); more is dropped + flagged */
#define FB_MAX_OUTPUT_BYTES (64ULL * FB_MiB)
#define FB_DEFAULT_RESULT_BYTES (16ULL * FB_MiB)  /* result channel; more is a ResultTooLarge error */
#define FB_MAX_RESULT_BYTES (256ULL * FB_MiB)

/* Permissions (request/permissions.h) */
#define FB_MAX_ENV_VARS 256                       /* permissions.env entries */
#define FB_MAX_ENV_BYTES 131072                   /* their "KEY=value" strings together (128 KiB) */
#define FB_MAX_EXEC_ALLOW 64                      /* permissions.childProcess commands */
#define FB_MAX_NETWORK_ALLOW 256                  /* permissions.network destinations */

/* Execute requests (request/command.h): a command or code run as a program, not a function */
#define FB_MAX_COMMAND_BYTES 131071               /* `command`: one execve argument (MAX_ARG_STRLEN less NUL) */
#define FB_MAX_STDIN_BYTES (64ULL * FB_MiB)       /* `stdin`, streamed to the program's fd 0 */
#define FB_MAX_EXEC_ARGS 256                      /* `args`: the program's arguments */
#define FB_MAX_EXEC_ARGS_BYTES (1024ULL * 1024)   /* their bytes together (execve's argument space is 2 MiB) */
#define FB_MAX_CWD_BYTES 1024                     /* `cwd`, relative or absolute */
#define FB_EXECUTE_WORKDIR "/workspace"           /* the sandbox's workdir, where a relative cwd starts */

/* Sessions (request/session.h, core/session.c): a long-lived sandbox */
#define FB_SESSION_DEFAULT_IDLE_S 900.0            /* idleTimeout: closed after this long unused */
#define FB_SESSION_DEFAULT_LIFETIME_S 3600.0       /* maxLifetime: closed this long after it opened */
#define FB_SESSION_MAX_LIFETIME_S 86400.0          /* the most either may be */
#define FB_SESSION_MAX_READ_BYTES (256ULL * FB_MiB) /* one file read */
#define FB_SESSION_MAX_LIST_ENTRIES 100000         /* one directory listing */
#define FB_SESSION_CPU_SECONDS 86400               /* default limits.cpuSeconds (per process): its lifetime */

/* Session kernels (request/kernel.c, core/session_kernel.c, docs/internals/kernels.md) */
#define FB_KERNEL_START_TIMEOUT_S 30.0             /* for a new kernel to say it is ready */
#define FB_KERNEL_INTERRUPT_GRACE_MS 1000          /* after SIGINT, before the kernel is killed */
#define FB_KERNEL_MAX_RESULT_BYTES (64ULL * FB_MiB) /* one execute's result frame */
#define FB_KERNEL_MAX_LANGS 8                      /* kernels per session: one per language */

/* Compiled languages (core/compile.c, which passes the cache bounds to lang/compile_cache.c): the compile
 * cache and the compiler's own sandbox */
#define FB_CACHE_MAX_ENTRIES 256                  /* programs + runtime objects in the cache directory */
#define FB_CACHE_MAX_BYTES (256ULL * FB_MiB)      /* their total size; least recently used out first */
#define FB_CACHE_MAX_PROGRAM (128ULL * FB_MiB)    /* one compiled program (bigger: compile error) */
#define FB_CACHE_STALE_TMP_S 600                  /* a writer's temporary older than this is garbage */
#define FB_COMPILE_MIN_TIMEOUT_S 60.0             /* the compiler gets at least this, whatever the call's */
#define FB_COMPILE_MEMORY_BYTES (1024ULL * FB_MiB) /* cc1plus on <iostream> alone takes ~100 MB */
#define FB_COMPILE_TMP_BYTES (256ULL * FB_MiB)

/* An environment's library caches (core/env_caches.c): what the builder may leave and take, what the key
 * looks at */
#define FB_ENV_CACHE_MAX_BYTES (32ULL * FB_MiB)     /* the builder's archive (and its /tmp) */
#define FB_ENV_CACHE_MAX_FILES 256                 /* files in it */
#define FB_ENV_CACHE_MAX_PLACED (2ULL * FB_MiB)    /* what a call gets of them, in the root's tmpfs (its 4 MiB
                                                      beyond tmpBytes): matplotlib's list first, then as many of
                                                      fontconfig's caches as fit (a desktop's fonts can make MBs) */
#define FB_ENV_CACHE_MAX_NAME 128                  /* one file's name */
#define FB_ENV_CACHE_MAX_DIRS 4096                 /* font directories (and files) the key stats */
#define FB_ENV_CACHE_MAX_DEPTH 8                   /* how deep under a font directory */
#define FB_ENV_CACHE_MAX_FINGERPRINT (1ULL * FB_MiB) /* their identities as text */
#define FB_ENV_CACHE_RECHECK_S 1.0                 /* a process looks at the key's files at most this often */
#define FB_ENV_CACHE_TIMEOUT_S 120.0               /* matplotlib scans every font: ~1 s here */
#define FB_ENV_CACHE_MEMORY_BYTES (1024ULL * FB_MiB)

#endif
