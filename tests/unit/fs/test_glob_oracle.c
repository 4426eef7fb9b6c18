/* The glob matcher (fs/glob.h) against minimatch itself: tests/oracle/glob/minimatch_table.js generates a
 * deterministic table of ~20000 patterns x paths (documented patterns, `*`, `?`, classes, escapes, braces,
 * `**`, dots, negation, mixed, extglob syntax, a leading `./`, the caps) and prints what npm minimatch (the
 * version tests/oracle/glob/package.json pins) answers with {dot: true, noext: true}, the options fnbox
 * emulates. Each category is one test: fnbox's answer (compile + fb_glob_test) must equal minimatch's on
 * every row, except where a documented difference below says otherwise, and every such exception must still
 * be needed (a stale one fails too). On every row where turning extglobs on (minimatch's default, the
 * seed's) changes the answer, fb_glob_has_extglob must report the pattern, since fs/rules.c refuses what
 * it reports and fnbox would otherwise read the pattern differently from the seed.
 *
 * The oracle needs node and `npm ci --prefix tests/oracle/glob` (scripts/install-deps.sh): without them
 * every test is skipped, and fails under CI=true. FNBOX_SRCDIR names the source tree if the test is run
 * from elsewhere than the tree or its build/tests/fs/. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "fs/glob.h"

#define ORACLE_SCRIPT "tests/oracle/glob/minimatch_table.js"
#define PINNED_VERSION "11.0.9" /* tests/oracle/glob/package.json; the version glob.h cites */
#define MIN_ROWS 10000
#define MAX_REPORTED 25 /* mismatches printed per category */

typedef struct oracle_row {
    char *cat, *pattern, *path;
    bool noext, ext; /* minimatch's answer with {dot, noext} and with {dot} (extglobs on) */
    int ext_alone;   /* -1, or extglobs on with each brace alternative tested alone, where that differs */
    int promise;     /* -1, or what glob.h promises where it differs from minimatch on purpose */
} oracle_row;

static struct {
    oracle_row *rows;
    size_t n, cap;
    char version[64];
    char missing[512]; /* why the table could not be had ("" if it was) */
} table;

/* ---- documented differences (fs/glob.h, "Where fnbox differs from minimatch, on purpose") ---- */

typedef enum {
    EX_PROMISE, /* fnbox's answer must be the row's promise (computed by the oracle) */
    EX_ANY,     /* fnbox may answer either way */
    EX_REFUSED, /* the pattern must not compile */
} exception_kind;

typedef struct exception {
    const char *name;
    exception_kind kind;
    const char *reason;
    bool (*applies)(const oracle_row *r, const fb_error *refused); /* refused: NULL if the pattern compiled */
    size_t used; /* rows it explained */
} exception;

/* After the leading '!'s. */
static const char *unnegated(const char *p)
{
    while (*p == '!')
        p++;
    return p;
}

static bool leading_dot_slash(const oracle_row *r, const fb_error *refused)
{
    (void)refused;
    return strncmp(unnegated(r->pattern), "./", 2) == 0 || strncmp(r->path, "./", 2) == 0;
}

static bool posix_class_non_ascii(const oracle_row *r, const fb_error *refused)
{
    (void)refused;
    if (!strstr(r->pattern, "[:"))
        return false;
    for (const unsigned char *c = (const unsigned char *)r->path; *c; c++)
        if (*c >= 0x80)
            return true;
    return false;
}

/* Refused for one of the caps (the messages of fs/glob.c), or in the category made of such patterns. */
static bool over_caps(const oracle_row *r, const fb_error *refused)
{
    if (strcmp(r->cat, "caps") == 0)
        return true;
    return refused && refused->kind == FB_ERR_INVALID_PATTERN &&
           (strstr(refused->message, "more than") || strstr(refused->message, "longer than") ||
            strstr(refused->message, "deeper than") || strstr(refused->message, "too large"));
}

static exception exceptions[] = {
    {"caps", EX_REFUSED, "patterns beyond FB_GLOB_MAX_* are refused (InvalidPattern, so they match nothing), "
                         "where minimatch expands or matches them", over_caps, 0},
    {"dot-slash", EX_PROMISE, "a leading ./ is dropped from the pattern and the path (glob.h); the row's "
                              "promise is minimatch's answer without it", leading_dot_slash, 0},
    {"posix-non-ascii", EX_ANY, "POSIX classes know ASCII only: every non-ASCII character counts as alpha, "
                                "alnum, word, graph and print, and as nothing else (glob.h), where minimatch "
                                "asks Unicode's categories (\\p{L}, \\p{Nd}, \\p{P}...)", posix_class_non_ascii, 0},
};

/* For the extglob check only: where minimatch with extglobs on answers otherwise than for each brace
 * alternative on its own, fnbox's rule parser need not refuse the pattern. */
static exception merged_alternatives = {
    "merged-alternatives", EX_ANY, "with extglobs on, minimatch 11 merges the brace alternatives into one "
    "@(a|b), where a class may span the '|' ([]?{a,b} is @([]?a|[]?b)); each alternative alone, as "
    "minimatch documents, agrees with noext and fnbox", NULL, 0};

/* The first exception that applies to a row, or NULL (a refusal for the caps comes first). */
static exception *exception_for(const oracle_row *r, const fb_error *refused)
{
    for (size_t k = 0; k < sizeof exceptions / sizeof exceptions[0]; k++)
        if (exceptions[k].applies(r, refused))
            return &exceptions[k];
    return NULL;
}

/* ---- loading the table ---- */

static void set_missing(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void set_missing(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(table.missing, sizeof table.missing, fmt, ap);
    va_end(ap);
}

/* The source tree: $FNBOX_SRCDIR, the working directory, or four levels above this program
 * (<tree>/<build>/tests/fs/test_glob_oracle). */
static bool find_script(char *out, size_t cap)
{
    const char *dir = getenv("FNBOX_SRCDIR");
    if (dir && *dir) {
        snprintf(out, cap, "%s/%s", dir, ORACLE_SCRIPT);
        return access(out, R_OK) == 0;
    }
    if (access(ORACLE_SCRIPT, R_OK) == 0) {
        snprintf(out, cap, "%s", ORACLE_SCRIPT);
        return true;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return false;
    exe[n] = '\0';
    for (int up = 0; up < 4; up++) {
        char *slash = strrchr(exe, '/');
        if (!slash)
            return false;
        *slash = '\0';
    }
    snprintf(out, cap, "%s/%s", exe, ORACLE_SCRIPT);
    return access(out, R_OK) == 0;
}

static char *dup_string(const char *s)
{
    char *d = strdup(s);
    if (!d)
        abort();
    return d;
}

static int optional_bool(const json_t *row, const char *key)
{
    const json_t *v = json_object_get(row, key);
    return json_is_boolean(v) ? json_is_true(v) : -1;
}

static bool add_row(const json_t *v)
{
    const char *cat, *pattern, *path;
    int noext, ext;
    if (json_unpack((json_t *)v, "{s:s, s:s, s:s, s:b, s:b}", "c", &cat, "p", &pattern, "s", &path, "m", &noext,
                    "x", &ext) != 0)
        return false;
    if (table.n == table.cap) {
        size_t cap = table.cap ? table.cap * 2 : 4096;
        oracle_row *rows = realloc(table.rows, cap * sizeof *rows);
        if (!rows)
            abort();
        table.rows = rows;
        table.cap = cap;
    }
    oracle_row *r = &table.rows[table.n++];
    r->cat = dup_string(cat);
    r->pattern = dup_string(pattern);
    r->path = dup_string(path);
    r->noext = noext;
    r->ext = ext;
    r->ext_alone = optional_bool(v, "xa");
    r->promise = optional_bool(v, "w");
    return true;
}

/* Runs the oracle and reads its table; on failure table.missing says why. */
static void load_table(void)
{
    char script[PATH_MAX + 64];
    if (!find_script(script, sizeof script)) {
        set_missing("%s not found (set FNBOX_SRCDIR to the source tree)", ORACLE_SCRIPT);
        return;
    }
    if (strchr(script, '\'')) {
        set_missing("cannot quote the path %s", script);
        return;
    }
    char cmd[sizeof script + 32];
    snprintf(cmd, sizeof cmd, "exec node '%s'", script);
    fflush(NULL);
    FILE *p = popen(cmd, "r");
    if (!p) {
        set_missing("popen node: %s", strerror(errno));
        return;
    }
    char *line = NULL;
    size_t cap = 0;
    long expected = -1;
    bool bad = false;
    while (getline(&line, &cap, p) > 0) {
        json_error_t jerr;
        json_t *v = json_loads(line, JSON_DECODE_ANY, &jerr);
        if (expected < 0) {
            const char *ver = json_string_value(json_object_get(v, "minimatch"));
            expected = (long)json_integer_value(json_object_get(v, "rows"));
            snprintf(table.version, sizeof table.version, "%s", ver ? ver : "?");
        } else if (!v || !add_row(v)) {
            if (!bad)
                fprintf(stderr, "glob oracle: bad line %zu: %s", table.n + 2, line);
            bad = true;
        }
        json_decref(v);
    }
    free(line);
    int status = pclose(p);
    if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        int code = status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        set_missing("node %s exited %d%s", script, code,
                    code == 127 ? " (node not found)" : code == 3 ? " (minimatch not installed)" : "");
    } else if (bad || expected < 0 || (size_t)expected != table.n) {
        set_missing("the oracle's output is malformed (%zu rows read, header says %ld)", table.n, expected);
    }
}

static int setup(void **state)
{
    (void)state;
    load_table();
    if (table.missing[0])
        fprintf(stderr, "glob oracle unavailable: %s\n", table.missing);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    for (size_t i = 0; i < table.n; i++) {
        free(table.rows[i].cat);
        free(table.rows[i].pattern);
        free(table.rows[i].path);
    }
    free(table.rows);
    return 0;
}

/* Skip without the oracle, except in CI, where a missing oracle must not pass as a skip. */
static void need_table(void)
{
    if (!table.missing[0])
        return;
    const char *ci = getenv("CI");
    if (ci && strcmp(ci, "true") == 0)
        fail_msg("CI=true and the glob oracle is unavailable: %s", table.missing);
    skip();
}

/* ---- comparing ---- */

static void check_category(const char *cat)
{
    need_table();
    size_t rows = 0, matches = 0, wrong = 0, explained = 0, extglob_missed = 0;
    fb_glob *g = NULL;
    const char *compiled = NULL;
    fb_error err = {0};
    for (size_t i = 0; i < table.n; i++) {
        const oracle_row *r = &table.rows[i];
        if (strcmp(r->cat, cat) != 0)
            continue;
        rows++;
        if (!compiled || strcmp(compiled, r->pattern) != 0) { /* rows come grouped by pattern */
            fb_glob_free(g);
            memset(&err, 0, sizeof err);
            g = fb_glob_compile(r->pattern, &err);
            compiled = r->pattern;
        }
        bool got = g ? fb_glob_test(g, r->path) : false;
        matches += r->noext;
        if (r->noext != r->ext && !fb_glob_has_extglob(r->pattern, strlen(r->pattern))) {
            if (r->ext_alone == r->noext) {
                merged_alternatives.used++;
            } else if (extglob_missed++ < MAX_REPORTED) {
                print_error("%s: extglobs change '%s' on '%s' (%d -> %d), fb_glob_has_extglob misses it\n",
                            cat, r->pattern, r->path, r->noext, r->ext);
            }
        }
        exception *ex = exception_for(r, g ? NULL : &err);
        if (ex && ex->kind == EX_REFUSED) {
            if (g || strcmp(fb_error_type(&err), "InvalidPattern") != 0) {
                if (wrong++ < MAX_REPORTED)
                    print_error("%s: '%.40s...' (%zu bytes) compiled, but it is beyond the caps\n", cat,
                                r->pattern, strlen(r->pattern));
            } else if (got != r->noext) {
                ex->used++;
                explained++;
            }
            continue;
        }
        if (!g) {
            if (wrong++ < MAX_REPORTED)
                print_error("%s: '%s' does not compile: %s: %s\n", cat, r->pattern, fb_error_type(&err), err.message);
            continue;
        }
        if (r->promise >= 0 || (ex && ex->kind == EX_PROMISE)) {
            /* the oracle and this test must agree on which rows have a promise */
            if (!ex || ex->kind != EX_PROMISE || r->promise < 0) {
                if (wrong++ < MAX_REPORTED)
                    print_error("%s: '%s' on '%s': a promise without its exception or the reverse\n", cat,
                                r->pattern, r->path);
            } else if (got != r->promise) {
                if (wrong++ < MAX_REPORTED)
                    print_error("%s: '%s' on '%s': fnbox %d, promised %d (minimatch %d)\n", cat, r->pattern,
                                r->path, got, r->promise, r->noext);
            } else if (got != r->noext) {
                ex->used++;
                explained++;
            }
            continue;
        }
        if (got == r->noext)
            continue;
        if (ex && ex->kind == EX_ANY) {
            ex->used++;
            explained++;
        } else if (wrong++ < MAX_REPORTED) {
            print_error("%s: '%s' on '%s': fnbox %d, minimatch %d\n", cat, r->pattern, r->path, got, r->noext);
        }
    }
    fb_glob_free(g);
    print_message("%s: %zu rows (%zu match in minimatch), %zu differ as documented, %zu wrong, "
                  "%zu extglob rows not flagged\n", cat, rows, matches, explained, wrong, extglob_missed);
    assert_true(rows > 0);
    assert_int_equal(wrong, 0);
    assert_int_equal(extglob_missed, 0);
}

static void test_table(void **state)
{
    (void)state;
    need_table();
    print_message("minimatch %s, %zu rows\n", table.version, table.n);
    assert_string_equal(table.version, PINNED_VERSION);
    assert_true(table.n >= MIN_ROWS);
}

#define CATEGORY(name)                                                                                     \
    static void test_##name(void **state)                                                                  \
    {                                                                                                      \
        (void)state;                                                                                       \
        check_category(#name);                                                                             \
    }
CATEGORY(documented)
CATEGORY(star)
CATEGORY(question)
CATEGORY(class)
CATEGORY(escape)
CATEGORY(brace)
CATEGORY(globstar)
CATEGORY(dots)
CATEGORY(negation)
CATEGORY(mixed)
CATEGORY(extglob)
CATEGORY(dotslash)
CATEGORY(caps)
CATEGORY(brackets)

/* Every documented difference is still one (runs after the categories). */
static void test_exceptions_still_needed(void **state)
{
    (void)state;
    need_table();
    const size_t n = sizeof exceptions / sizeof exceptions[0];
    for (size_t k = 0; k <= n; k++) {
        const exception *ex = k < n ? &exceptions[k] : &merged_alternatives;
        print_message("exception %s: %zu rows (%s)\n", ex->name, ex->used, ex->reason);
        if (ex->used == 0)
            fail_msg("exception '%s' explained no row: remove it, or the table lost its cases", ex->name);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),     cmocka_unit_test(test_documented), cmocka_unit_test(test_star),
        cmocka_unit_test(test_question),  cmocka_unit_test(test_class),      cmocka_unit_test(test_escape),
        cmocka_unit_test(test_brace),     cmocka_unit_test(test_globstar),   cmocka_unit_test(test_dots),
        cmocka_unit_test(test_negation),  cmocka_unit_test(test_mixed),      cmocka_unit_test(test_extglob),
        cmocka_unit_test(test_dotslash),  cmocka_unit_test(test_caps),      cmocka_unit_test(test_brackets),
        cmocka_unit_test(test_exceptions_still_needed),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
