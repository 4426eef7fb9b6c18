/* fnbox_languages: the language registry (lang/lang.c) as JSON, with the runtime each has on this host;
 * fnbox_execute_languages: the languages of execute requests (core/command.c), with their versions. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/command.h"
#include "core/environments.h"
#include "fnbox.h"
#include "util/json.h"
#include "lang/lang.h"

static json_t *language_json(const fb_lang_driver *d)
{
    json_t *aliases = json_array();
    for (const char *const *a = d->aliases; aliases && *a; a++)
        if (json_array_append_new(aliases, json_string(*a)) < 0) {
            json_decref(aliases);
            return NULL;
        }
    const char *rt = fb_lang_find_runtime(d);
    return json_pack("{s:s, s:o, s:s?}", "name", d->name, "aliases", aliases, "runtime", rt);
}

FNBOX_API int fnbox_languages(char **json, size_t *json_len)
{
    *json = NULL;
    json_t *list = json_array();
    for (size_t i = 0; list && fb_lang_at(i); i++)
        if (json_array_append_new(list, language_json(fb_lang_at(i))) < 0) {
            json_decref(list);
            list = NULL;
        }
    return fb_json_dump_out(list, json, json_len);
}

/* ---- fnbox_execute_languages: core/command.c's languages with the runtime's own version ---- */

#define VERSION_OUTPUT_MAX 4096
#define VERSION_WAIT_MS 5000
#define VERSION_MAX 32

/* The first "digits.digits[.digits...]" in text: "Python 3.11.2" -> "3.11.2", "v20.20.2" -> "20.20.2",
 * "ruby 3.1.2p20" -> "3.1.2". */
static bool first_version(const char *text, char out[VERSION_MAX])
{
    for (const char *p = text; *p; p++) {
        if (!isdigit((unsigned char)*p) || (p > text && (isdigit((unsigned char)p[-1]) || p[-1] == '.')))
            continue;
        size_t n = strspn(p, "0123456789.");
        while (n && p[n - 1] == '.')
            n--;
        if (n < VERSION_MAX && memchr(p, '.', n)) {
            memcpy(out, p, n);
            out[n] = '\0';
            return true;
        }
    }
    return false;
}

/* Reads the child's output until EOF, VERSION_OUTPUT_MAX bytes or the deadline. */
static size_t read_output(int fd, char *buf, size_t cap)
{
    size_t len = 0;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (len < cap) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        long left = VERSION_WAIT_MS - ((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000);
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (left <= 0 || poll(&p, 1, (int)left) <= 0)
            break;
        ssize_t n = read(fd, buf + len, cap - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    return len;
}

/* Runs `runtime arg` on the host (the runtime's own binary, a fixed argument, a clean environment and
 * signal state) and reads its version from what it prints. */
static bool runtime_version(const char *runtime, const char *arg, char out[VERSION_MAX])
{
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) < 0)
        return false;
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
    posix_spawn_file_actions_adddup2(&fa, pfd[1], 2);
    posix_spawnattr_init(&attr);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    char *const argv[] = {(char *)runtime, (char *)arg, NULL};
    char *const envp[] = {"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C", NULL};
    pid_t pid;
    int rc = posix_spawn(&pid, runtime, &fa, &attr, argv, envp);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    close(pfd[1]);
    if (rc != 0) {
        close(pfd[0]);
        return false;
    }
    char text[VERSION_OUTPUT_MAX + 1];
    size_t n = read_output(pfd[0], text, VERSION_OUTPUT_MAX);
    close(pfd[0]);
    kill(pid, SIGKILL); /* done or too slow: it has said what it will say */
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
    text[n] = '\0';
    return first_version(text, out);
}

static struct {
    char version[16][VERSION_MAX];
    bool known[16];
} g_versions;
static pthread_once_t g_versions_once = PTHREAD_ONCE_INIT;

static void find_versions(void)
{
    fb_command_language l;
    for (size_t i = 0; i < 16 && fb_command_language_at(i, &l); i++)
        g_versions.known[i] = l.runtime && l.version_arg && runtime_version(l.runtime, l.version_arg,
                                                                           g_versions.version[i]);
}

static json_t *execute_language_json(size_t i, const fb_command_language *l)
{
    json_t *aliases = json_array();
    for (const char *const *a = l->aliases; aliases && *a; a++)
        if (json_array_append_new(aliases, json_string(*a)) < 0) {
            json_decref(aliases);
            return NULL;
        }
    const char *version = i < 16 && g_versions.known[i] ? g_versions.version[i] : NULL;
    return json_pack("{s:s, s:o, s:s?, s:s?}", "name", l->name, "aliases", aliases, "runtime", l->runtime, "version",
                     version);
}

FNBOX_API int fnbox_execute_languages(char **json, size_t *json_len)
{
    pthread_once(&g_versions_once, find_versions);
    *json = NULL;
    json_t *list = json_array();
    fb_command_language l;
    for (size_t i = 0; list && fb_command_language_at(i, &l); i++)
        if (json_array_append_new(list, execute_language_json(i, &l)) < 0) {
            json_decref(list);
            list = NULL;
        }
    return fb_json_dump_out(list, json, json_len);
}

const char *fb_host_language_version(const char *execute_name)
{
    pthread_once(&g_versions_once, find_versions);
    fb_command_language l;
    for (size_t i = 0; i < 16 && fb_command_language_at(i, &l); i++)
        if (strcmp(l.name, execute_name) == 0)
            return g_versions.known[i] ? g_versions.version[i] : NULL;
    return NULL;
}
