/* The mount configuration's own operations (fs/mount.h); request/mount.c decodes it from the request. */
#include "fs/mount.h"

#include <stdlib.h>
#include <string.h>

void fb_mount_config_free(fb_mount_config *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->ndirs; i++) {
        free(m->dirs[i].virtual_path);
        free(m->dirs[i].host_path);
    }
    free(m->dirs);
    for (size_t i = 0; i < m->ninclude; i++)
        free(m->include[i]);
    free(m->include);
    fb_rules_free(m->rules);
    *m = (fb_mount_config){0};
}

const fb_mount_dir *fb_mount_find(const fb_mount_config *m, const char *vpath, const char **rel)
{
    for (size_t i = 0; i < m->ndirs; i++) {
        const char *root = m->dirs[i].virtual_path;
        size_t n = strlen(root);
        if (strncmp(root, vpath, n) == 0 && (vpath[n] == '\0' || vpath[n] == '/')) {
            if (rel)
                *rel = vpath[n] == '/' ? vpath + n + 1 : vpath + n;
            return &m->dirs[i];
        }
    }
    return NULL;
}
