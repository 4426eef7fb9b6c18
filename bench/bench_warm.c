/* The warm pools' driver for bench/bench_warm.py (built by `make build/bench/bench_warm`): times calls
 * through the C API, one command per line on stdin, one JSON line per answer on stdout, so that the script
 * can alternate these with its own bare-interpreter runs and both see the same machine state.
 *
 *   open LANG=N[,LANG=N...]    an engine with these pools (closing the previous one), waits until full
 *   warm LANG                  waits until the pools are full, then one timed fnbox_engine_call: {ms, warm}
 *   warm LANG@ENV              the same in the named environment ENV (the driver started with
 *                              FNBOX_ENVIRONMENTS naming the file, loaded before anything else; the engine
 *                              opened with LANG@ENV=N)
 *   cold LANG                  one timed fnbox_call of the same request: {ms}
 *   c NONCE                    a C call whose code carries the comment NONCE: a compile-cache miss the
 *                              first time a nonce is seen, a hit after: {ms, cached}
 *   cw NONCE                   the same through an engine with `c=1` (one pooled C compiler and one
 *                              sandbox waiting for a program), full first
 *   load MODE LANG CLIENTS S   CLIENTS threads calling for S seconds, MODE "engine" (a new engine whose
 *                              pool holds CLIENTS sandboxes, full at the start) or "cold":
 *                              {calls, per_second, p50, p90, p99, warm}
 *   memory LANGS S             an engine with one sandbox per language, full, then S seconds of settling:
 *                              {LANG: {cgroup, rss}} (the pool's own figure, and the sandbox's processes'
 *                              resident set from /proc)
 * Every call's result is checked (add(1, 2) == 3); a wrong one ends the driver with its result on stderr. */
#include <dirent.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fnbox.h"

#define MAX_CLIENTS 64
#define MAX_SAMPLES 200000
#define WARM_TIMEOUT_S 60.0

/* The same trivial function in each language, as bench_cold.py calls it. */
static const struct {
    const char *lang, *code;
} FUNCTIONS[] = {
    {"python", "def add(a, b):\n    return a + b\n"},
    {"javascript", "function add(a, b) {\n  return a + b;\n}\n"},
    {"ruby", "def add(a, b)\n  a + b\nend\n"},
    {"php", "function add($a, $b) { return $a + $b; }\n"},
};

static fnbox_engine *engine;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static __attribute__((noreturn, format(printf, 1, 2))) void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

/* add(1, 2)'s request for lang (static buffer per thread). */
static const char *request_for(const char *lang_env)
{
    static __thread char req[512];
    char lang[64], env[96] = "";
    const char *at = strchr(lang_env, '@');
    snprintf(lang, sizeof lang, "%.*s", at ? (int)(at - lang_env) : (int)strlen(lang_env), lang_env);
    if (at)
        snprintf(env, sizeof env, ",\"environment\":\"%.64s\"", at + 1);
    for (size_t i = 0; i < sizeof FUNCTIONS / sizeof *FUNCTIONS; i++)
        if (strcmp(FUNCTIONS[i].lang, lang) == 0) {
            char code[256];
            size_t o = 0;
            for (const char *c = FUNCTIONS[i].code; *c && o < sizeof code - 3; c++) { /* JSON-escape \n and " */
                if (*c == '\n' || *c == '"')
                    code[o++] = '\\';
                code[o++] = *c == '\n' ? 'n' : *c;
            }
            code[o] = '\0';
            snprintf(req, sizeof req,
                     "{\"language\":\"%s\",\"code\":\"%s\",\"functionName\":\"add\",\"args\":[1,2]%s}", lang,
                     code, env);
            return req;
        }
    die("unknown language %s", lang);
}

/* One call (through the engine when e is set); returns its wall time in ms, *warm whether a pooled
 * sandbox served it. Anything but the right answer is fatal: a benchmark of wrong results is no use. */
static double timed_call(fnbox_engine *e, const char *req, int *warm)
{
    char *result = NULL;
    size_t len = 0;
    double t0 = now_ms();
    int rc = e ? fnbox_engine_call(e, req, strlen(req), NULL, &result, &len)
               : fnbox_call(req, strlen(req), NULL, &result, &len);
    double ms = now_ms() - t0;
    if (rc != FNBOX_OK || !result || !strstr(result, "\"status\":\"success\"") || !strstr(result, "\"result\":3"))
        die("call failed (%d): %.800s", rc, result ? result : "(no result)");
    if (warm)
        *warm = strstr(result, "\"warm\":true") != NULL;
    fnbox_free(result);
    return ms;
}

/* "python=2,ruby=1" as engine options. */
static fnbox_engine *open_engine(const char *spec)
{
    char opts[512] = "{\"warm\":{", item[64];
    char *copy = strdup(spec), *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq)
            die("open: LANG=N, not %s", tok);
        *eq = '\0';
        snprintf(item, sizeof item, "%s\"%s\":%s", opts[9] ? "," : "", tok, eq + 1);
        strncat(opts, item, sizeof opts - strlen(opts) - 3);
    }
    free(copy);
    strcat(opts, "}}");
    fnbox_engine *e = NULL;
    char *error = NULL;
    if (fnbox_engine_open(opts, strlen(opts), &e, &error, NULL) != FNBOX_OK)
        die("engine_open %s: %s", opts, error ? error : "?");
    if (fnbox_engine_wait_warm(e, WARM_TIMEOUT_S) != FNBOX_OK)
        die("the pools %s did not fill in %.0f s", opts, WARM_TIMEOUT_S);
    return e;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double pct(const double *sorted, size_t n, double q)
{
    return n ? sorted[(size_t)((double)(n - 1) * q + 0.5)] : 0;
}

/* ---- sustained load ---- */

typedef struct client {
    fnbox_engine *e;
    const char *lang;
    double until_ms;
    double *ms;          /* this client's share of the samples */
    size_t n, cap, warm;
} client;

static void *client_loop(void *arg)
{
    client *c = arg;
    const char *req = request_for(c->lang);
    while (now_ms() < c->until_ms && c->n < c->cap) {
        int warm = 0;
        c->ms[c->n++] = timed_call(c->e, req, &warm);
        c->warm += (size_t)warm;
    }
    return NULL;
}

static void load(const char *mode, const char *lang, int clients, double seconds)
{
    if (clients < 1 || clients > MAX_CLIENTS)
        die("load: 1 to %d clients", MAX_CLIENTS);
    fnbox_engine_close(engine); /* its idle sandboxes would take memory and CPU from the load */
    engine = NULL;
    char spec[128];
    snprintf(spec, sizeof spec, "%s=%d", lang, clients);
    fnbox_engine *e = strcmp(mode, "engine") == 0 ? open_engine(spec) : NULL;
    double *ms = malloc(sizeof *ms * MAX_SAMPLES);
    client c[MAX_CLIENTS];
    pthread_t t[MAX_CLIENTS];
    double t0 = now_ms();
    for (int i = 0; i < clients; i++) {
        c[i] = (client){.e = e, .lang = lang, .until_ms = t0 + seconds * 1e3, .ms = ms + i * (MAX_SAMPLES / clients),
                        .cap = MAX_SAMPLES / (size_t)clients};
        pthread_create(&t[i], NULL, client_loop, &c[i]);
    }
    size_t n = 0, warm = 0;
    for (int i = 0; i < clients; i++) {
        pthread_join(t[i], NULL);
        memmove(ms + n, c[i].ms, c[i].n * sizeof *ms);
        n += c[i].n;
        warm += c[i].warm;
    }
    double elapsed_s = (now_ms() - t0) / 1e3; /* the last calls' ends included */
    fnbox_engine_close(e);
    qsort(ms, n, sizeof *ms, by_value);
    printf("{\"calls\":%zu,\"per_second\":%.2f,\"p50\":%.3f,\"p90\":%.3f,\"p99\":%.3f,\"warm\":%zu}\n", n,
           (double)n / elapsed_s, pct(ms, n, 0.5), pct(ms, n, 0.9), pct(ms, n, 0.99), warm);
    free(ms);
}

/* ---- idle memory ---- */

/* A process's parent and resident set (KiB) from /proc/<pid>/status; left as they are when unreadable. */
static void ppid_and_rss(int pid, int *ppid, long *rss)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", pid);
    FILE *f = fopen(path, "r");
    while (f && fgets(line, sizeof line, f)) {
        sscanf(line, "PPid: %d", ppid);
        sscanf(line, "VmRSS: %ld", rss);
    }
    if (f)
        fclose(f);
}

/* The resident set (kB) of this process's descendants whose command line holds needle, and of their
 * parents (each sandbox's init). */
static long rss_kb_of(const char *needle)
{
    long kb = 0;
    DIR *d = opendir("/proc");
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL) {
        int pid = atoi(de->d_name);
        char path[64], buf[4096] = "";
        snprintf(path, sizeof path, "/proc/%d/cmdline", pid);
        FILE *f = pid > 0 ? fopen(path, "r") : NULL;
        if (!f)
            continue;
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        for (size_t i = 0; i < n; i++)
            buf[i] = buf[i] ? buf[i] : ' ';
        buf[n] = '\0';
        if (!strstr(buf, needle))
            continue;
        int ppid = 0, grandparent = 0;
        long rss = 0, init_rss = 0;
        ppid_and_rss(pid, &ppid, &rss);
        ppid_and_rss(ppid, &grandparent, &init_rss); /* init, forked from this process */
        if (grandparent == getpid())
            kb += rss + init_rss;
    }
    if (d)
        closedir(d);
    return kb;
}

static long long stat_of(const char *stats, const char *lang, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":{", lang);
    const char *p = strstr(stats, pat);
    snprintf(pat, sizeof pat, "\"%s\":", key);
    p = p ? strstr(p, pat) : NULL;
    return p ? atoll(p + strlen(pat)) : -1;
}

static void memory(const char *langs, double settle_s)
{
    fnbox_engine_close(engine); /* only this engine's sandboxes may be counted */
    engine = NULL;
    char spec[256] = "", *copy = strdup(langs), *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
        snprintf(spec + strlen(spec), sizeof spec - strlen(spec), "%s%s=1", spec[0] ? "," : "", tok);
    fnbox_engine *e = open_engine(spec);
    usleep((useconds_t)(settle_s * 1e6));
    char *stats = NULL;
    size_t len = 0;
    if (fnbox_engine_stats(e, &stats, &len) != 0)
        die("stats failed");
    static const struct {
        const char *lang, *harness;
    } H[] = {{"python", "/.fnbox/harness.py"}, {"javascript", "/.fnbox/harness.js"},
             {"ruby", "/.fnbox/harness.rb"}, {"php", "/.fnbox/harness.php"}};
    printf("{");
    const char *sep = "";
    for (size_t i = 0; i < sizeof H / sizeof *H; i++)
        if (strstr(langs, H[i].lang)) {
            printf("%s\"%s\":{\"cgroup\":%lld,\"rss\":%ld}", sep, H[i].lang,
                   stat_of(stats, H[i].lang, "memoryPerSandboxBytes"), rss_kb_of(H[i].harness) * 1024);
            sep = ",";
        }
    printf("}\n");
    fnbox_free(stats);
    free(copy);
    fnbox_engine_close(e);
}

/* ---- the command loop ---- */

/* engine: NULL for fnbox_call, else a C call through it (its pooled compiler compiles a new program). */
static void c_call(fnbox_engine *through, const char *nonce)
{
    static char seen[64][256];
    static size_t nseen;
    int cached = 0;
    for (size_t i = 0; i < nseen; i++)
        cached |= strcmp(seen[i], nonce) == 0;
    if (!cached && nseen < 64)
        snprintf(seen[nseen++], sizeof seen[0], "%s", nonce);
    char req[512];
    snprintf(req, sizeof req,
             "{\"language\":\"c\",\"code\":\"int add(int a, int b) { return a + b; }\\n/* %s */\\n\","
             "\"functionName\":\"add\",\"args\":[1,2]}", nonce);
    printf("{\"ms\":%.3f,\"cached\":%s}\n", timed_call(through, req, NULL), cached ? "true" : "false");
}

static fnbox_engine *c_engine; /* `cw`: one pooled C compiler, one program sandbox */

static void command(char *line)
{
    char verb[16] = "", a[256] = "", b[64] = "";
    int clients = 0;
    double seconds = 0;
    sscanf(line, "%15s %255s %63s %d %lf", verb, a, b, &clients, &seconds);
    if (strcmp(verb, "open") == 0) {
        fnbox_engine_close(engine);
        engine = open_engine(a);
        printf("{}\n");
    } else if (strcmp(verb, "warm") == 0) {
        if (!engine || fnbox_engine_wait_warm(engine, WARM_TIMEOUT_S) != FNBOX_OK)
            die("warm: no engine, or its pools did not fill");
        int warm = 0;
        double ms = timed_call(engine, request_for(a), &warm);
        printf("{\"ms\":%.3f,\"warm\":%s}\n", ms, warm ? "true" : "false");
    } else if (strcmp(verb, "cold") == 0) {
        printf("{\"ms\":%.3f}\n", timed_call(NULL, request_for(a), NULL));
    } else if (strcmp(verb, "c") == 0) {
        c_call(NULL, a);
    } else if (strcmp(verb, "cw") == 0) {
        if (!c_engine)
            c_engine = open_engine("c=1");
        if (fnbox_engine_wait_warm(c_engine, WARM_TIMEOUT_S) != FNBOX_OK)
            die("cw: the C pools did not fill");
        c_call(c_engine, a);
    } else if (strcmp(verb, "load") == 0) {
        load(a, b, clients, seconds);
    } else if (strcmp(verb, "memory") == 0) {
        memory(a, atof(b));
    } else {
        die("unknown command: %s", line);
    }
    fflush(stdout);
}

int main(void)
{
    char line[512];
    const char *envs = getenv("FNBOX_ENVIRONMENTS");
    char *error = NULL;
    if (envs && *envs && fnbox_environments_load(envs, &error, NULL) != FNBOX_OK)
        die("environments %s: %s", envs, error ? error : "?");
    while (fgets(line, sizeof line, stdin))
        command(line);
    fnbox_engine_close(engine);
    fnbox_engine_close(c_engine);
    return 0;
}
