/* A named environment in a launch (environment.h). */
#include "core/environment.h"

#include <stdlib.h>
#include <string.h>

/* Per language: where its paths are placed, and the variables that put that place on its search path.
 * Python runs -I (PYTHONPATH ignored): the harness and kernel read FNBOX_PYTHON_PATH; PYTHONPATH serves an
 * execute's `python3 main.py` and the Python programs a function starts. PHP's include_path has no
 * variable: its harness and kernel read FNBOX_PHP_PATH. */
static const struct {
    const char *dir;
    const char *vars[2];
} k_place[FB_ENV_NLANGS] = {
    [FB_ENV_PYTHON] = {FB_ENV_PYTHON_DIR, {"FNBOX_PYTHON_PATH=" FB_ENV_PYTHON_DIR, "PYTHONPATH=" FB_ENV_PYTHON_DIR}},
    [FB_ENV_JAVASCRIPT] = {FB_ENV_NODE_DIR, {NULL, NULL}},
    [FB_ENV_RUBY] = {FB_ENV_RUBY_DIR, {"RUBYLIB=" FB_ENV_RUBY_DIR, NULL}},
    [FB_ENV_PHP] = {FB_ENV_PHP_DIR, {"FNBOX_PHP_PATH=" FB_ENV_PHP_DIR, NULL}},
};

static void add_vars(fb_env_launch *el, int l)
{
    size_t nv = 0;
    while (el->vars[nv])
        nv++;
    for (int v = 0; v < 2 && k_place[l].vars[v] && nv < FB_ENV_MAX_VARS; v++)
        el->vars[nv++] = k_place[l].vars[v];
    el->vars[nv] = NULL;
}

void fb_env_launch_init(fb_env_launch *el, const fb_environment *env)
{
    *el = (fb_env_launch){.env = env};
    for (int l = 0; env && l < FB_ENV_NLANGS; l++) {
        const fb_env_paths *p = &env->paths[l];
        if (p->n == 0)
            continue;
        el->layers[el->nlayers++] = (fb_sandbox_layer){.dst = k_place[l].dir, .srcs = (const char *const *)p->dirs,
                                                       .nsrcs = p->n};
        add_vars(el, l);
    }
}

int fb_env_launch_add(fb_env_launch *el, fb_env_lang lang, const char *dir)
{
    fb_sandbox_layer *layer = NULL;
    for (size_t i = 0; i < el->nlayers && !layer; i++)
        if (strcmp(el->layers[i].dst, k_place[lang].dir) == 0)
            layer = &el->layers[i];
    if (!layer) {
        layer = &el->layers[el->nlayers++];
        *layer = (fb_sandbox_layer){.dst = k_place[lang].dir};
        add_vars(el, lang);
    }
    if (layer->nsrcs >= FB_SANDBOX_MAX_LAYER_SRCS)
        return -1;
    const char **srcs = el->srcs[lang];
    memmove(srcs + 1, layer->srcs ? layer->srcs : srcs, layer->nsrcs * sizeof *srcs);
    srcs[0] = dir;
    layer->srcs = srcs;
    layer->nsrcs++;
    return 0;
}

void fb_env_launch_apply(const fb_env_launch *el, fb_sandbox_spec *spec)
{
    spec->sysroot = el->env ? el->env->root : NULL;
    spec->layers = el->nlayers ? el->layers : NULL;
    spec->nlayers = el->nlayers;
}

const char *fb_env_runtime(const fb_environment *env, const fb_lang_driver *lang, fb_error *err)
{
    const char *root = env ? env->root : NULL;
    const char *rt = fb_lang_find_runtime_in(lang, root);
    if (rt)
        return rt;
    if (root)
        fb_set_error(err, FB_ERR_KERNEL_FEATURE, 0, "Language interpreter not found in environment %s: %s (looked for %s)",
                     env->name, lang->name, lang->runtimes[0]);
    else
        fb_set_error(err, FB_ERR_KERNEL_FEATURE, 0, "no %s runtime found (looked for %s); run `fnbox doctor`",
                     lang->name, lang->runtimes[0]);
    return NULL;
}
