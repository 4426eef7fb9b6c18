/* The language registry. */
#include "lang/lang.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const fb_lang_driver *const k_drivers[] = {&fb_lang_python, &fb_lang_javascript};
enum { NDRIVERS = 2 };
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

const char *fb_lang_supported(void)
{
    static char text[512];
    if (text[0])
        return text;
    size_t n = 0;
    for (size_t i = 0; i < NDRIVERS && n < sizeof text; i++) {
        const fb_lang_driver *d = k_drivers[i];
        n += (size_t)snprintf(text + n, sizeof text - n, "%s%s (", i ? ", " : "", d->name);
        for (const char *const *a = d->aliases; *a && n < sizeof text; a++)
            n += (size_t)snprintf(text + n, sizeof text - n, "%s%s", a == d->aliases ? "" : ", ", *a);
        if (n < sizeof text)
            n += (size_t)snprintf(text + n, sizeof text - n, ")");
    }
    return text;
}

const char *fb_lang_find_runtime(const fb_lang_driver *d)
{
    for (const char *const *r = d->runtimes; *r; r++)
        if (access(*r, X_OK) == 0)
            return *r;
    return NULL;
}
