/* Test-only defence switches (see defences.h). */
#include "util/defences.h"

#ifdef FB_DEFENCE_SWITCHES
#include <stdlib.h>
#include <string.h>

bool fb_defence_disabled(const char *name)
{
    const char *list = getenv("FNBOX_DISABLE_DEFENCES");
    size_t n = strlen(name);
    for (const char *p = list; p && *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0)
            return true;
        p = end ? end + 1 : NULL;
    }
    return false;
}
#else
bool fb_defence_disabled(const char *name)
{
    (void)name;
    return false;
}
#endif
