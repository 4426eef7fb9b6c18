/* fnbox_doctor: the kernel features (sandbox/features.c) plus the language runtimes, as JSON. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "fnbox.h"
#include "lang/lang.h"
#include "sandbox/features.h"

static json_t *check(const char *name, bool ok, bool required, const char *detail, const char *fix)
{
    json_t *c = json_pack("{s:s, s:b, s:b, s:s}", "name", name, "ok", ok, "required", required, "detail", detail);
    if (c && !ok && fix && *fix)
        json_object_set_new(c, "fix", json_string(fix));
    return c;
}

FNBOX_API int fnbox_doctor(char **report)
{
    fb_feature feats[16];
    size_t n = fb_features_probe(feats, sizeof feats / sizeof *feats);
    json_t *checks = json_array();
    bool all_ok = true;
    for (size_t i = 0; i < n; i++) {
        json_array_append_new(checks, check(feats[i].name, feats[i].ok, feats[i].required, feats[i].detail, feats[i].fix));
        all_ok &= feats[i].ok || !feats[i].required;
    }
    for (size_t i = 0; fb_lang_at(i); i++) {
        const fb_lang_driver *d = fb_lang_at(i);
        const char *rt = fb_lang_find_runtime(d);
        char name[64], fix[160];
        snprintf(name, sizeof name, "runtime %s", d->name);
        snprintf(fix, sizeof fix, "install it: apt-get install %s", d->package);
        json_array_append_new(checks, check(name, rt != NULL, false, rt ? rt : "not found", fix));
    }
    json_t *doc = json_pack("{s:b, s:s, s:o}", "ok", all_ok, "version", FNBOX_VERSION, "checks", checks);
    *report = doc ? json_dumps(doc, JSON_INDENT(2)) : NULL;
    json_decref(doc);
    if (!*report)
        return -1;
    return all_ok ? 0 : 1;
}
