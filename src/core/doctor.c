/* fnbox_doctor: the kernel features (sandbox/features.c) plus the language runtimes, as JSON. */
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* Which cgroup hierarchy this host has and which controllers fnbox uses (the "cgroup limits" probe says
 * whether a per-call cgroup can actually be made). /proc/cgroups lists the v1 controllers with their
 * hierarchy id (0: not mounted as v1, i.e. on v2 or nowhere); /proc/self/cgroup our place in each. */
static void describe_cgroups(char *detail, size_t cap, bool *ok)
{
    char line[512], own[256] = "", ctl_path[400], v1[64] = "", v2ctl[256] = "";
    bool v2_root = access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0;
    bool v2_hybrid = access("/sys/fs/cgroup/unified/cgroup.controllers", F_OK) == 0;
    FILE *f = fopen("/proc/cgroups", "re");
    while (f && fgets(line, sizeof line, f)) { /* "name<TAB>hierarchy<TAB>num_cgroups<TAB>enabled" */
        char *save = NULL;
        char *name = strtok_r(line, "\t", &save), *hier = strtok_r(NULL, "\t", &save);
        char *num = strtok_r(NULL, "\t", &save), *enabled = strtok_r(NULL, "\t\n", &save);
        if (!name || name[0] == '#' || !hier || !num || !enabled)
            continue;
        bool used = strtol(hier, NULL, 10) > 0 && strcmp(enabled, "1") == 0;
        if ((strcmp(name, "memory") == 0 || strcmp(name, "pids") == 0) && used)
            snprintf(v1 + strlen(v1), sizeof v1 - strlen(v1), "%s%.8s", v1[0] ? ", " : "", name);
    }
    if (f)
        fclose(f);
    f = fopen("/proc/self/cgroup", "re");
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "0::", 3) == 0) {
            line[strcspn(line, "\n")] = '\0';
            snprintf(own, sizeof own, "%.250s", strcmp(line + 3, "/") == 0 ? "" : line + 3);
        }
    if (f)
        fclose(f);
    if (v2_root) { /* the controllers a child of our cgroup gets are those our cgroup delegates */
        snprintf(ctl_path, sizeof ctl_path, "/sys/fs/cgroup%s/cgroup.subtree_control", own);
        f = fopen(ctl_path, "re");
        if (f && fgets(v2ctl, sizeof v2ctl, f))
            v2ctl[strcspn(v2ctl, "\n")] = '\0';
        if (f)
            fclose(f);
        bool mem = strstr(v2ctl, "memory") != NULL, pids = strstr(v2ctl, "pids") != NULL;
        *ok = mem && pids;
        snprintf(detail, cap,
                 "cgroup v2 (unified); controllers delegated to fnbox's cgroup %.250s: %.250s; uses memory (memory.max, "
                 "swap 0, oom.group) and pids (pids.max); a call's cgroup is emptied with cgroup.kill%s",
                 own[0] ? own : "/", v2ctl[0] ? v2ctl : "none", *ok ? "" : " — memory or pids missing: enable them");
    } else if (v1[0]) {
        *ok = strstr(v1, "memory") && strstr(v1, "pids");
        snprintf(detail, cap,
                 "cgroup v1%s; controllers used: %s (memory.limit_in_bytes, swappiness 0; pids.max); no "
                 "cgroup.kill on v1: a call ends by killing its PID namespace's init, then any pid left in its "
                 "cgroup",
                 v2_hybrid ? " (hybrid: the v2 hierarchy at /sys/fs/cgroup/unified has no controllers)" : "", v1);
    } else {
        *ok = false;
        snprintf(detail, cap, "no cgroup memory or pids controller is mounted: limits fall back to rlimits");
    }
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
    char cg_detail[1024];
    bool cg_ok = false;
    describe_cgroups(cg_detail, sizeof cg_detail, &cg_ok);
    json_array_append_new(checks, check("cgroup version", cg_ok, false, cg_detail,
                                        "mount the memory and pids controllers (v1), or delegate them to fnbox's "
                                        "cgroup (v2: +memory +pids in cgroup.subtree_control)"));
    for (size_t i = 0; fb_lang_at(i); i++) {
        const fb_lang_driver *d = fb_lang_at(i);
        const char *rt = fb_lang_find_runtime(d);
        char name[64], fix[160];
        snprintf(name, sizeof name, "runtime %s", d->name);
        snprintf(fix, sizeof fix, "install it: apt-get install %s", d->package);
        json_array_append_new(checks, check(name, rt != NULL, false, rt ? rt : "not found", fix));
    }
    /* the named environments loaded (fnbox_environments_load), with the languages and versions found in each */
    char *envs = NULL;
    json_t *environments = fnbox_environments(&envs, NULL) == 0 ? json_loads(envs, 0, NULL) : NULL;
    free(envs);
    json_t *doc = json_pack("{s:b, s:s, s:o, s:o}", "ok", all_ok, "version", FNBOX_VERSION, "checks", checks,
                            "environments", environments ? environments : json_array());
    *report = doc ? json_dumps(doc, JSON_INDENT(2)) : NULL;
    json_decref(doc);
    if (!*report)
        return -1;
    return all_ok ? 0 : 1;
}
