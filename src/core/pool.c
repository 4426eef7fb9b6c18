/* Warm pools (pool.h; docs/internals/pools.md). One thread per pool set builds sandboxes until every
 * language has its size (or the memory cap is reached), destroys the spent ones, and once a second checks
 * that the idle ones are still waiting (a sandbox whose program died idle is replaced). Calls take from the
 * front (the oldest: the one surest to have finished starting). */
#include "core/pool.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "core/compile.h"
#include "core/launch.h"
#include "lang/lang.h"

#define SPENT_MAX 256        /* spent sandboxes waiting for the thread; past it the caller destroys its own */
#define SWEEP_EVERY_S 1.0
#define BACKOFF_MAX_S 30.0
#define CALM_S 0.01          /* a CPU spare this long is spare: not the gap between a busy client's calls */

typedef struct pool_lang {
    const fb_lang_driver *lang;
    char name[96];           /* in the stats: the language's, or "program", then "@environment" */
    const fb_environment *env; /* what its sandboxes are built in (NULL: the host's system tree) */
    bool program;            /* a compiled language's program sandboxes (spec.program_later) */
    unsigned size;
    fb_launch launch;        /* owns what spec points to (an interpreted language's) */
    fb_compile_template compile; /* or (a compiled language's: its compiler waits for the source) */
    fb_sandbox_spec spec;    /* the template every sandbox of this pool is built from */
    fb_sandbox *idle[FB_POOL_MAX_SIZE];
    uint64_t idle_mem[FB_POOL_MAX_SIZE];
    size_t nidle;
    uint64_t mem_each;       /* the last idle sandbox measured */
    unsigned long served, missed, built, failed, died;
    bool relimit;            /* its sandboxes take a call's memory and pids limits (the first one built says) */
    double backoff_s, retry_at;
    char last_error[256];
} pool_lang;

struct fb_pool {
    pthread_mutex_t mu;
    pthread_cond_t wake;     /* the thread: something to do */
    pthread_cond_t changed;  /* fb_pool_wait_full: a sandbox was added */
    pthread_t thread;
    bool started, stopping;
    pool_lang langs[2 * FB_POOL_MAX_LANGS]; /* a compiled language has two: its compilers, its programs */
    size_t nlangs;
    uint64_t max_memory;
    fb_sandbox *spent[SPENT_MAX];
    size_t nspent;
    unsigned calls;          /* calls running through the engine now, warm or cold (fb_pool_call_begin) */
    unsigned cpus;           /* the CPUs this process may run on */
    double calm_from;        /* when the calls last stopped taking every CPU: builds wait CALM_S after it */
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static bool same_strings(char *const *a, char *const *b)
{
    for (;; a++, b++) {
        if (!*a || !*b)
            return *a == *b;
        if (strcmp(*a, *b) != 0)
            return false;
    }
}

static bool same_files(const fb_sandbox_spec *t, const fb_sandbox_spec *s)
{
    if (t->nfiles != s->nfiles)
        return false;
    for (size_t i = 0; i < t->nfiles; i++) {
        const fb_sandbox_file *a = &t->files[i], *b = &s->files[i];
        if (strcmp(a->path, b->path) != 0 || a->len != b->len || a->executable != b->executable ||
            (a->data != b->data && memcmp(a->data, b->data, a->len) != 0))
            return false;
    }
    return true;
}

/* A program pool's: the call's files are the template's plus its program (at exec_path, which the call
 * brings). */
static bool same_files_but_program(const fb_sandbox_spec *t, const fb_sandbox_spec *s)
{
    size_t j = 0;
    bool program = false;
    for (size_t i = 0; i < s->nfiles; i++) {
        const fb_sandbox_file *b = &s->files[i];
        if (strcmp(b->path, t->exec_path) == 0) {
            program = b->executable && b->len > 0;
            continue;
        }
        const fb_sandbox_file *a = j < t->nfiles ? &t->files[j++] : NULL;
        if (!a || strcmp(a->path, b->path) != 0 || a->len != b->len || a->executable != b->executable ||
            (a->data != b->data && memcmp(a->data, b->data, a->len) != 0))
            return false;
    }
    return program && j == t->nfiles;
}

/* What is fixed when a sandbox is built: the deadline, the CPU limit and the output and result caps are
 * the call's own (fb_sandbox_call), everything else must be the template's. */
/* relimit: the pool's sandboxes take a call's own memory and pids limits (cgroup files, set before the
 * input: fb_sandbox_can_relimit). */
static bool same_limits(const fb_sandbox_limits *t, const fb_sandbox_limits *s, bool relimit)
{
    return ((t->memory_bytes == s->memory_bytes && t->pids == s->pids) || relimit) && t->nofile == s->nofile &&
           t->fsize_bytes == s->fsize_bytes && t->workspace_bytes == s->workspace_bytes &&
           t->tmp_bytes == s->tmp_bytes && t->tmpfs_inodes == s->tmpfs_inodes && s->cpu_seconds > 0 &&
           s->cpu_seconds <= t->cpu_seconds && s->timeout_s <= t->timeout_s;
}

/* The same system tree and layers (an environment's). */
static bool same_tree(const fb_sandbox_spec *t, const fb_sandbox_spec *s)
{
    if ((t->sysroot == NULL) != (s->sysroot == NULL) || (t->sysroot && strcmp(t->sysroot, s->sysroot) != 0) ||
        t->nlayers != s->nlayers)
        return false;
    for (size_t l = 0; l < s->nlayers; l++) {
        const fb_sandbox_layer *a = &t->layers[l], *b = &s->layers[l];
        if (strcmp(a->dst, b->dst) != 0 || a->nsrcs != b->nsrcs)
            return false;
        for (size_t i = 0; i < a->nsrcs; i++)
            if (strcmp(a->srcs[i], b->srcs[i]) != 0)
                return false;
    }
    return true;
}

static bool fits(const pool_lang *pl, const fb_environment *env, const fb_sandbox_spec *s)
{
    if (pl->env != env)
        return false;
    const fb_sandbox_spec *t = &pl->spec;
    /* a compiled program runs its own code from its start: only a program pool waits for it */
    bool files = pl->program ? !s->program_later && same_files_but_program(t, s)
                             : s->inert_until_input && same_files(t, s);
    return strcmp(t->exec_path, s->exec_path) == 0 && same_strings(t->argv, s->argv) &&
           same_strings(t->envp, s->envp) && strcmp(t->workdir, s->workdir) == 0 && !s->cwd && files &&
           same_limits(&t->limits, &s->limits, pl->relimit) && s->nfuse == 0 && !s->proxy_listen &&
           !(s->exec_allow && s->exec_allow[0]) && s->exec_any == t->exec_any && !s->input_on_stdin &&
           !s->no_result_fd && same_tree(t, s);
}

static uint64_t idle_memory(const fb_pool *p)
{
    uint64_t sum = 0;
    for (size_t l = 0; l < p->nlangs; l++)
        for (size_t i = 0; i < p->langs[l].nidle; i++)
            sum += p->langs[l].idle_mem[i];
    return sum;
}

static fb_sandbox *pop_front(pool_lang *pl)
{
    fb_sandbox *sb = pl->idle[0];
    memmove(pl->idle, pl->idle + 1, (pl->nidle - 1) * sizeof(fb_sandbox *));
    memmove(pl->idle_mem, pl->idle_mem + 1, (pl->nidle - 1) * sizeof *pl->idle_mem);
    pl->nidle--;
    return sb;
}

/* [locked] Queues sb for the thread; false when the queue is full (the caller destroys it). */
static bool queue_spent(fb_pool *p, fb_sandbox *sb)
{
    if (p->nspent >= SPENT_MAX)
        return false;
    p->spent[p->nspent++] = sb;
    pthread_cond_signal(&p->wake);
    return true;
}

fb_sandbox *fb_pool_take(fb_pool *p, const fb_environment *env, const fb_sandbox_spec *spec)
{
    fb_sandbox *dead[FB_POOL_MAX_SIZE];
    size_t ndead = 0;
    fb_sandbox *sb = NULL;
    pthread_mutex_lock(&p->mu);
    for (size_t l = 0; l < p->nlangs && !sb; l++) {
        pool_lang *pl = &p->langs[l];
        if (!fits(pl, env, spec))
            continue;
        while (pl->nidle && !sb) {
            fb_sandbox *c = pop_front(pl);
            if (fb_sandbox_waiting(c)) {
                sb = c;
            } else {
                pl->died++;
                if (!queue_spent(p, c))
                    dead[ndead++] = c;
            }
        }
        if (!sb)
            pl->missed++;
        /* no wake-up here: the replacement is built once this one is spent, not while the call runs
         * (on a small machine the build would take the call's CPU) */
        break;
    }
    pthread_mutex_unlock(&p->mu);
    for (size_t i = 0; i < ndead; i++)
        fb_sandbox_destroy(dead[i]);
    return sb;
}

/* The call's program, for a sandbox that waits for it (spec.program_later): its file at exec_path. */
static const fb_sandbox_file *program_of(const fb_sandbox *warm, const fb_sandbox_spec *spec)
{
    if (!fb_sandbox_spec_of(warm)->program_later)
        return NULL;
    for (size_t i = 0; i < spec->nfiles; i++)
        if (strcmp(spec->files[i].path, spec->exec_path) == 0)
            return &spec->files[i];
    return NULL;
}

int fb_pool_run(fb_pool *pool, const fb_environment *env, const fb_sandbox_spec *spec,
                bool (*result_complete)(const char *data, size_t len), fb_sandbox_outcome *out, fb_error *err)
{
    fb_sandbox *warm = pool ? fb_pool_take(pool, env, spec) : NULL;
    if (!warm)
        return fb_sandbox_run(spec, out, err);
    const fb_sandbox_limits *l = &spec->limits;
    fb_sandbox_call call = {.input = spec->input, .input_len = spec->input_len, .input_iov = spec->input_iov,
                            .input_iovcnt = spec->input_iovcnt, .cancel_fd = spec->cancel_fd,
                            .timeout_s = l->timeout_s, .cpu_seconds = l->cpu_seconds,
                            .memory_bytes = l->memory_bytes, .pids = l->pids,
                            .output_bytes = l->output_bytes, .result_bytes = l->result_bytes,
                            .user_files = spec->user_files, .nuser_files = spec->nuser_files,
                            .program = program_of(warm, spec), .keep_scratch = spec->keep_scratch,
                            .on_output = spec->on_output, .output_ctx = spec->output_ctx,
                            .on_input_written = spec->on_input_written, .input_ctx = spec->input_ctx,
                            .result_complete = result_complete};
    int rc = fb_sandbox_run_prepared(warm, &call, out, err);
    fb_pool_spent(pool, warm, rc <= 0);
    if (rc <= 0)
        return rc;
    fb_error_clear(err); /* nothing of the call ran there: cold, as if the pool had been empty */
    fb_sandbox_outcome_free(out);
    return fb_sandbox_run(spec, out, err);
}

void fb_pool_call_begin(fb_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->calls++;
    pthread_mutex_unlock(&p->mu);
}

void fb_pool_call_end(fb_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    if (p->calls-- == p->cpus) { /* a CPU is free again: the thread may build once it stays free */
        p->calm_from = now_s();
        pthread_cond_signal(&p->wake);
    }
    pthread_mutex_unlock(&p->mu);
}

void fb_pool_spent(fb_pool *p, fb_sandbox *sb, bool ran)
{
    pthread_mutex_lock(&p->mu);
    for (size_t l = 0; l < p->nlangs; l++)
        if (fb_sandbox_spec_of(sb) == &p->langs[l].spec) {
            if (ran)
                p->langs[l].served++;
            else
                p->langs[l].missed++;
        }
    bool queued = queue_spent(p, sb);
    pthread_mutex_unlock(&p->mu);
    if (!queued)
        fb_sandbox_destroy(sb);
}

/* [locked] The pool to build for next: the emptiest one below its size, not backing off, whose next
 * sandbox fits under the memory cap; none while the calls running take every CPU, nor until CALM_S after
 * they last did. Building ahead only pays with a CPU to spare: under sustained load a sandbox built ahead
 * is one a call would have built, plus its harness's warm-up, on a CPU the calls needed (2 clients on 2
 * CPUs: 0.97x bare spawns through the pool, 1.04x cold). */
static pool_lang *next_to_build(fb_pool *p, double now)
{
    pool_lang *best = NULL;
    if (p->calls >= p->cpus || now < p->calm_from + CALM_S)
        return NULL;
    uint64_t used = idle_memory(p);
    for (size_t l = 0; l < p->nlangs; l++) {
        pool_lang *pl = &p->langs[l];
        if (pl->nidle >= pl->size || now < pl->retry_at || used + pl->mem_each > p->max_memory)
            continue;
        if (!best || pl->nidle * best->size < best->nidle * pl->size)
            best = pl;
    }
    return best;
}

/* [locked] Replaces idle sandboxes whose program died and measures the others' memory. */
static void sweep(fb_pool *p)
{
    for (size_t l = 0; l < p->nlangs; l++) {
        pool_lang *pl = &p->langs[l];
        for (size_t i = 0; i < pl->nidle;) {
            if (fb_sandbox_waiting(pl->idle[i])) {
                pl->idle_mem[i] = fb_sandbox_memory_now(pl->idle[i]);
                pl->mem_each = pl->idle_mem[i];
                i++;
                continue;
            }
            fb_sandbox *dead = pl->idle[i];
            memmove(pl->idle + i, pl->idle + i + 1, (pl->nidle - i - 1) * sizeof(fb_sandbox *));
            memmove(pl->idle_mem + i, pl->idle_mem + i + 1, (pl->nidle - i - 1) * sizeof *pl->idle_mem);
            pl->nidle--;
            pl->died++;
            if (!queue_spent(p, dead)) { /* full: destroy it here, outside the lock */
                pthread_mutex_unlock(&p->mu);
                fb_sandbox_destroy(dead);
                pthread_mutex_lock(&p->mu);
            }
        }
    }
}

/* [locked; unlocks while building] Builds one sandbox for pl. */
static void build_one(fb_pool *p, pool_lang *pl)
{
    fb_sandbox *sb = NULL;
    fb_error err = {0};
    pthread_mutex_unlock(&p->mu);
    int rc = fb_sandbox_prepare(&pl->spec, &sb, &err);
    pthread_mutex_lock(&p->mu);
    if (rc < 0) { /* e.g. out of memory or pids on the host: try again later, less often each time */
        pl->failed++;
        snprintf(pl->last_error, sizeof pl->last_error, "%.200s", err.message);
        pl->backoff_s = pl->backoff_s > 0 ? pl->backoff_s * 2 : 0.1;
        if (pl->backoff_s > BACKOFF_MAX_S)
            pl->backoff_s = BACKOFF_MAX_S;
        pl->retry_at = now_s() + pl->backoff_s;
        return;
    }
    pl->backoff_s = 0;
    pl->built++;
    pl->relimit = fb_sandbox_can_relimit(sb);
    if (p->stopping || pl->nidle >= pl->size) {
        if (!queue_spent(p, sb)) {
            pthread_mutex_unlock(&p->mu);
            fb_sandbox_destroy(sb);
            pthread_mutex_lock(&p->mu);
        }
        return;
    }
    /* counted at once (its runtime may still be loading: the sweeps measure it again) */
    uint64_t now = fb_sandbox_memory_now(sb);
    if (now > pl->mem_each)
        pl->mem_each = now;
    pl->idle_mem[pl->nidle] = pl->mem_each;
    pl->idle[pl->nidle++] = sb;
    pthread_cond_broadcast(&p->changed);
}

static void *pool_thread(void *arg)
{
    fb_pool *p = arg;
    /* the name every sandbox it builds starts with, until its runtime's execve (prepared.c await_exec) */
    (void)prctl(PR_SET_NAME, "fnbox-pool", 0, 0, 0);
    double next_sweep = now_s() + SWEEP_EVERY_S;
    pthread_mutex_lock(&p->mu);
    while (!p->stopping) {
        if (p->nspent) { /* first: a spent sandbox still holds its cgroup and memory */
            fb_sandbox *sb = p->spent[--p->nspent];
            pthread_mutex_unlock(&p->mu);
            fb_sandbox_destroy(sb);
            pthread_mutex_lock(&p->mu);
            continue;
        }
        double now = now_s();
        if (now >= next_sweep) {
            sweep(p);
            next_sweep = now + SWEEP_EVERY_S;
            continue;
        }
        pool_lang *pl = next_to_build(p, now);
        if (pl) {
            build_one(p, pl);
            continue;
        }
        double until = next_sweep;
        if (p->calls < p->cpus && p->calm_from + CALM_S > now && p->calm_from + CALM_S < until)
            until = p->calm_from + CALM_S;
        for (size_t l = 0; l < p->nlangs; l++)
            if (p->langs[l].nidle < p->langs[l].size && p->langs[l].retry_at > now && p->langs[l].retry_at < until)
                until = p->langs[l].retry_at;
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        double wait = until - now;
        ts.tv_sec += (time_t)wait;
        ts.tv_nsec += (long)((wait - (double)(time_t)wait) * 1e9);
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&p->wake, &p->mu, &ts);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

static int init_sync(fb_pool *p, fb_error *err)
{
    pthread_condattr_t ca;
    if (pthread_condattr_init(&ca) != 0)
        return fb_set_error(err, FB_ERR_INTERNAL, ENOMEM, "pthread_condattr_init");
    (void)pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    int rc = pthread_mutex_init(&p->mu, NULL) || pthread_cond_init(&p->wake, &ca) || pthread_cond_init(&p->changed, &ca);
    pthread_condattr_destroy(&ca);
    return rc ? fb_set_error(err, FB_ERR_INTERNAL, ENOMEM, "initialising the pool's locks") : 0;
}

/* One pool: lang's interpreter, compiler (program: false) or program sandboxes (true). */
static int add_pool(fb_pool *p, const fb_lang_driver *lang, const fb_environment *env, bool program, unsigned size,
                    fb_error *err)
{
    pool_lang *pl = &p->langs[p->nlangs];
    memset(pl, 0, sizeof *pl);
    pl->lang = lang;
    pl->env = env;
    pl->program = program;
    pl->size = size;
    snprintf(pl->name, sizeof pl->name, "%s%s%s", program ? "program" : lang->name, env ? "@" : "",
             env ? env->name : "");
    int rc = lang->compiler && !program ? fb_compile_template_make(lang, env, &pl->compile, &pl->spec, err)
                                        : fb_launch_template(lang, env, &pl->launch, &pl->spec, err);
    if (rc == 0 && !pl->spec.inert_until_input)
        rc = fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, "%s cannot wait for its call", lang->name);
    if (rc < 0) {
        fb_launch_free(&pl->launch);
        fb_compile_template_free(&pl->compile);
        return fb_wrap_error(err, "warm: %s", pl->name);
    }
    p->nlangs++;
    return 0;
}

/* The compiled languages' program sandboxes: C's and C++'s are the same sandbox (the driver's exec, the
 * program's file coming with the call), so they share one pool, as large as their sizes together. */
static int add_programs(fb_pool *p, const fb_lang_driver *lang, const fb_environment *env, unsigned size,
                        fb_error *err)
{
    for (size_t l = 0; l < p->nlangs; l++) {
        pool_lang *pl = &p->langs[l];
        if (pl->program && pl->lang->exec == lang->exec && pl->env == env) {
            pl->size = pl->size + size < FB_POOL_MAX_SIZE ? pl->size + size : FB_POOL_MAX_SIZE;
            return 0;
        }
    }
    return add_pool(p, lang, env, true, size, err);
}

/* A language's pools: a compiled language's compilers wait for a source, and program sandboxes for a
 * program (from the compile cache or a compiler), as many of each. */
static int add_lang(fb_pool *p, const char *name, const fb_environment *env, unsigned size, fb_error *err)
{
    const fb_lang_driver *lang = fb_lang_lookup(name);
    if (!lang)
        return fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, "warm: unknown language '%s'; supported: %s", name,
                            fb_lang_supported());
    if (size < 1 || size > FB_POOL_MAX_SIZE)
        return fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, "warm: %s: a pool holds 1 to %d sandboxes, not %u", name,
                            FB_POOL_MAX_SIZE, size);
    for (size_t l = 0; l < p->nlangs; l++)
        if (p->langs[l].lang == lang && p->langs[l].env == env && !p->langs[l].program)
            return fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, "warm: %s%s%s is given twice", lang->name,
                                env ? "@" : "", env ? env->name : "");
    if (add_pool(p, lang, env, false, size, err) < 0)
        return -1;
    return lang->compiler ? add_programs(p, lang, env, size, err) : 0;
}

int fb_pool_start(const fb_pool_config *cfg, fb_pool **out, fb_error *err)
{
    *out = NULL;
    fb_pool *p = calloc(1, sizeof *p);
    if (!p)
        return fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "allocating the warm pools");
    if (init_sync(p, err) < 0) {
        free(p);
        return -1;
    }
    p->max_memory = cfg->max_memory_bytes ? cfg->max_memory_bytes : FB_POOL_DEFAULT_MAX_MEMORY;
    cpu_set_t set;
    p->cpus = sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0 ? (unsigned)CPU_COUNT(&set) : 1;
    for (size_t i = 0; i < cfg->nlangs && i < FB_POOL_MAX_LANGS; i++)
        if (add_lang(p, cfg->langs[i], cfg->envs[i], cfg->sizes[i], err) < 0) {
            fb_pool_stop(p);
            return -1;
        }
    if (p->nlangs && pthread_create(&p->thread, NULL, pool_thread, p) != 0) {
        fb_pool_stop(p);
        return fb_set_error(err, FB_ERR_INTERNAL, EAGAIN, "starting the warm pools' thread");
    }
    p->started = p->nlangs > 0;
    *out = p;
    return 0;
}

int fb_pool_wait_full(fb_pool *p, double timeout_s)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += (time_t)timeout_s;
    int rc = 0;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        bool full = true;
        for (size_t l = 0; l < p->nlangs; l++)
            full = full && p->langs[l].nidle >= p->langs[l].size;
        if (full)
            break;
        if (pthread_cond_timedwait(&p->changed, &p->mu, &ts) == ETIMEDOUT) {
            rc = -1;
            break;
        }
    }
    pthread_mutex_unlock(&p->mu);
    return rc;
}

static json_t *lang_stats(const pool_lang *pl)
{
    uint64_t mem = 0;
    for (size_t i = 0; i < pl->nidle; i++)
        mem += pl->idle_mem[i];
    json_t *o = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "size", (json_int_t)pl->size, "idle",
                          (json_int_t)pl->nidle, "served", (json_int_t)pl->served, "missed", (json_int_t)pl->missed,
                          "built", (json_int_t)pl->built, "failed", (json_int_t)pl->failed, "died",
                          (json_int_t)pl->died, "idleMemoryBytes", (json_int_t)mem, "memoryPerSandboxBytes",
                          (json_int_t)pl->mem_each);
    if (o && pl->last_error[0])
        json_object_set_new(o, "lastError", json_string(pl->last_error));
    return o;
}

json_t *fb_pool_stats(fb_pool *p)
{
    json_t *o = json_object();
    pthread_mutex_lock(&p->mu);
    for (size_t l = 0; o && l < p->nlangs; l++)
        if (json_object_set_new(o, p->langs[l].name, lang_stats(&p->langs[l])) < 0) {
            json_decref(o);
            o = NULL;
        }
    if (o)
        json_object_set_new(o, "maxMemoryBytes", json_integer((json_int_t)p->max_memory));
    pthread_mutex_unlock(&p->mu);
    return o;
}

void fb_pool_stop(fb_pool *p)
{
    if (!p)
        return;
    if (p->started) {
        pthread_mutex_lock(&p->mu);
        p->stopping = true;
        pthread_cond_signal(&p->wake);
        pthread_mutex_unlock(&p->mu);
        pthread_join(p->thread, NULL);
    }
    for (size_t l = 0; l < p->nlangs; l++) {
        pool_lang *pl = &p->langs[l];
        for (size_t i = 0; i < pl->nidle; i++)
            fb_sandbox_destroy(pl->idle[i]);
        fb_launch_free(&pl->launch);
        fb_compile_template_free(&pl->compile);
    }
    for (size_t i = 0; i < p->nspent; i++)
        fb_sandbox_destroy(p->spent[i]);
    pthread_cond_destroy(&p->wake);
    pthread_cond_destroy(&p->changed);
    pthread_mutex_destroy(&p->mu);
    free(p);
}
