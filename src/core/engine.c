/* fnbox_engine (include/fnbox.h): a long-lived object that owns warm pools (core/pool.c) and runs calls
 * through them: the call path is fnbox_call's (core/executor.c), whose launch stage takes a prepared
 * sandbox when one fits. */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "core/executor.h"
#include "core/pool.h"
#include "core/session.h"
#include "fnbox.h"
#include "lang/lang.h"
#include "request/environments.h"
#include "util/json.h"

struct fnbox_engine {
    fb_pool *pool;
};

#define BAD(...) fb_set_error(err, FB_ERR_INVALID_REQUEST, 0, __VA_ARGS__)

/* "default": one sandbox for each interpreted language whose runtime this host has. */
static void default_warm(fb_pool_config *cfg)
{
    const fb_lang_driver *d;
    for (size_t i = 0; (d = fb_lang_at(i)) != NULL && cfg->nlangs < FB_POOL_MAX_LANGS; i++)
        if (!d->compiler && fb_lang_find_runtime(d)) {
            cfg->langs[cfg->nlangs] = d->name;
            cfg->sizes[cfg->nlangs++] = 1;
        }
}

/* "python" or "python@py313": the language and the named environment its pool is built in. */
static int warm_key(const char *key, const fb_lang_driver **lang, const fb_environment **env, fb_error *err)
{
    char field[160], name[96];
    const char *at = strchr(key, '@');
    size_t n = at ? (size_t)(at - key) : strlen(key);
    *env = NULL;
    snprintf(name, sizeof name, "%.*s", (int)(n < sizeof name ? n : sizeof name - 1), key);
    *lang = fb_lang_lookup(name);
    if (!*lang)
        return BAD("warm.%.64s: unknown language; supported: %s", key, fb_lang_supported());
    if (!at)
        return 0;
    snprintf(field, sizeof field, "warm.%.100s", key);
    json_t *v = json_string(at + 1);
    int rc = v ? fb_environment_decode(v, field, env, err) : BAD("%s: out of memory", field);
    json_decref(v);
    return rc;
}

static int parse_warm(const json_t *warm, fb_pool_config *cfg, fb_error *err)
{
    if (!warm || json_is_null(warm))
        return 0;
    if (json_is_string(warm) && strcmp(json_string_value(warm), "default") == 0) {
        default_warm(cfg);
        return 0;
    }
    if (!json_is_object(warm))
        return BAD("warm: must be an object like {\"python\": 4} or \"default\", got %s", fb_json_type_name(warm));
    const char *name;
    json_t *v;
    json_object_foreach((json_t *)warm, name, v) {
        if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > FB_POOL_MAX_SIZE)
            return BAD("warm.%s: must be an integer from 0 to %d", name, FB_POOL_MAX_SIZE);
        if (json_integer_value(v) == 0)
            continue;
        if (cfg->nlangs >= FB_POOL_MAX_LANGS)
            return BAD("warm: at most %d languages", FB_POOL_MAX_LANGS);
        const fb_lang_driver *lang = NULL;
        const fb_environment *env = NULL;
        if (warm_key(name, &lang, &env, err) < 0)
            return -1;
        cfg->envs[cfg->nlangs] = env;
        cfg->langs[cfg->nlangs] = lang->name;
        cfg->sizes[cfg->nlangs++] = (unsigned)json_integer_value(v);
    }
    return 0;
}

static int parse_options(const char *text, size_t len, fb_pool_config *cfg, fb_error *err)
{
    if (len == 0)
        return 0;
    json_error_t jerr;
    json_t *o = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!o)
        return BAD("engine options: invalid JSON at line %d: %s", jerr.line, jerr.text);
    int rc = 0;
    const char *key;
    json_t *v;
    if (!json_is_object(o))
        rc = BAD("engine options: must be an object, got %s", fb_json_type_name(o));
    else
        json_object_foreach(o, key, v) {
            if (strcmp(key, "warm") == 0)
                rc = parse_warm(v, cfg, err);
            else if (strcmp(key, "maxMemoryBytes") == 0 && json_is_integer(v) && json_integer_value(v) > 0)
                cfg->max_memory_bytes = (uint64_t)json_integer_value(v);
            else if (strcmp(key, "maxMemoryBytes") == 0)
                rc = BAD("maxMemoryBytes: must be a positive integer");
            else
                rc = BAD("engine options: unknown field '%s' (known: warm, maxMemoryBytes)", key);
            if (rc < 0)
                break;
        }
    json_decref(o);
    return rc;
}

FNBOX_API int fnbox_engine_open(const char *options, size_t len, fnbox_engine **engine, char **error,
                                size_t *error_len)
{
    fb_error err = {0};
    fb_pool_config cfg = {0};
    *engine = NULL;
    if (error)
        *error = NULL;
    if (error_len)
        *error_len = 0;
    fnbox_engine *e = calloc(1, sizeof *e);
    if (!e) {
        fb_set_error(&err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "engine");
        return fb_session_fail(&err, error, error_len);
    }
    if (parse_options(options, len, &cfg, &err) < 0 || fb_pool_start(&cfg, &e->pool, &err) < 0) {
        free(e);
        return fb_session_fail(&err, error, error_len);
    }
    *engine = e;
    return FNBOX_OK;
}

FNBOX_API int fnbox_engine_call(fnbox_engine *e, const char *request, size_t request_len,
                                const fnbox_call_options *options, char **result, size_t *result_len)
{
    fb_pool_call_begin(e->pool);
    int rc = fb_executor_call(request, request_len, options, e->pool, result, result_len);
    fb_pool_call_end(e->pool);
    return rc;
}

FNBOX_API int fnbox_engine_wait_warm(fnbox_engine *e, double timeout_s)
{
    return fb_pool_wait_full(e->pool, timeout_s) == 0 ? FNBOX_OK : 1;
}

FNBOX_API int fnbox_engine_stats(fnbox_engine *e, char **json, size_t *json_len)
{
    json_t *pools = fb_pool_stats(e->pool);
    json_t *doc = pools ? json_pack("{s:o}", "pools", pools) : NULL;
    *json = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
    json_decref(doc);
    if (json_len)
        *json_len = *json ? strlen(*json) : 0;
    return *json ? 0 : -1;
}

FNBOX_API void fnbox_engine_close(fnbox_engine *e)
{
    if (!e)
        return;
    fb_pool_stop(e->pool);
    free(e);
}
