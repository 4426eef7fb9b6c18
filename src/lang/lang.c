/* The language registry. */
#include "lang/lang.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static const fb_lang_driver *const k_drivers[] = {&fb_lang_python, &fb_lang_javascript, &fb_lang_ruby, &fb_lang_php,
                                               &fb_lang_c, &fb_lang_cpp};
enum { NDRIVERS = 6 };
_Static_assert(sizeof k_drivers == NDRIVERS * sizeof(void *), "NDRIVERS matches the registry");

const fb_lang_driver *fb_lang_at(size_t i)
{
    return i < NDRIVERS ? k_drivers[i] : NULL;
}

const fb_lang_driver *fb_lang_lookup(const char *name)
{
    if (!name)
        return NULL;
    for (size_t i = 0; i < NDRIVERS; i++) {
        const fb_lang_driver *d = k_drivers[i];
        if (strcmp(d->name, name) == 0)
            return d;
        for (const char *const *a = d->aliases; *a; a++)
            if (strcmp(*a, name) == 0)
                return d;
    }
    return NULL;
}

static char g_supported[512];
static pthread_once_t g_supported_once = PTHREAD_ONCE_INIT;

static void build_supported(void)
{
    char *text = g_supported;
    size_t n = 0;
    for (size_t i = 0; i < NDRIVERS && n < sizeof g_supported; i++) {
        const fb_lang_driver *d = k_drivers[i];
        n += (size_t)snprintf(text + n, sizeof g_supported - n, "%s%s", i ? ", " : "", d->name);
        for (const char *const *a = d->aliases; *a && n < sizeof g_supported; a++)
            n += (size_t)snprintf(text + n, sizeof g_supported - n, "%s%s", a == d->aliases ? " (" : ", ", *a);
        if (d->aliases[0] && n < sizeof g_supported)
            n += (size_t)snprintf(text + n, sizeof g_supported - n, ")");
    }
}

const char *fb_lang_supported(void)
{
    pthread_once(&g_supported_once, build_supported);
    return g_supported;
}

const char *fb_lang_find_runtime(const fb_lang_driver *d)
{
    for (const char *const *r = d->runtimes; *r; r++)
        if (access(*r, X_OK) == 0)
            return *r;
    return NULL;
}

/* Whether path (absolute) names an executable regular file inside the tree at rootfd, resolved as the
 * sandbox will resolve it (its symlinks inside that root, never out of it). */
static bool executable_at(int rootfd, const char *path)
{
    struct open_how how = {.flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
    int fd = (int)syscall(SYS_openat2, rootfd, path + 1, &how, sizeof how);
    struct stat st;
    bool ok = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111);
    if (fd >= 0)
        close(fd);
    return ok;
}

const char *fb_lang_find_runtime_in(const fb_lang_driver *d, const char *root)
{
    if (!root)
        return fb_lang_find_runtime(d);
    int rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (rootfd < 0)
        return NULL;
    const char *found = NULL;
    for (const char *const *r = d->runtimes; *r && !found; r++)
        if (executable_at(rootfd, *r))
            found = *r;
    close(rootfd);
    return found;
}

bool fb_lang_executable_in(const char *root, const char *path)
{
    int rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
    bool ok = rootfd >= 0 && executable_at(rootfd, path);
    if (rootfd >= 0)
        close(rootfd);
    return ok;
}
