/* The language registry. */
#include "lang/lang.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
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
