/* fnbox_languages: the language registry (lang/lang.c) as JSON, with the runtime each has on this host. */
#include <jansson.h>
#include <string.h>

#include "fnbox.h"
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
    *json = list ? json_dumps(list, JSON_COMPACT) : NULL;
    json_decref(list);
    if (!*json)
        return -1;
    if (json_len)
        *json_len = strlen(*json);
    return 0;
}
