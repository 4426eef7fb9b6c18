/* GET /v1/health, GET /metrics and GET /v1/openapi.json. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "fnbox.h"
#include "server/http/internal.h"

/* The names of the languages whose runtime this host has now (fnbox_languages). */
static json_t *available_languages(void)
{
    char *text = NULL;
    if (fnbox_languages(&text, NULL) < 0)
        return NULL;
    json_t *all = json_loads(text, 0, NULL);
    fnbox_free(text);
    json_t *names = all ? json_array() : NULL;
    size_t i;
    json_t *lang;
    json_array_foreach(all, i, lang) {
        if (names && json_is_string(json_object_get(lang, "runtime")) &&
            json_array_append(names, json_object_get(lang, "name")) < 0) {
            json_decref(names);
            names = NULL;
        }
    }
    json_decref(all);
    return names;
}

/* The named environments (fnbox_environments) as the health check tells them: each one's name and the
 * languages with the versions found in it; not its host paths. */
static json_t *environments(void)
{
    char *text = NULL;
    if (fnbox_environments(&text, NULL) < 0)
        return NULL;
    json_t *all = json_loads(text, 0, NULL);
    fnbox_free(text);
    json_t *out = all ? json_array() : NULL;
    size_t i;
    json_t *e;
    json_array_foreach(all, i, e) {
        if (out && json_array_append_new(out, json_pack("{s:O, s:O}", "name", json_object_get(e, "name"), "languages",
                                                        json_object_get(e, "languages"))) < 0) {
            json_decref(out);
            out = NULL;
        }
    }
    json_decref(all);
    return out;
}

fb_http_reply fb_http_handle_health(fb_http_exchange *x)
{
    /* Draining: 503 so that a load balancer stops sending requests here. */
    bool draining = atomic_load(&x->srv->draining);
    json_t *doc = json_pack("{s:s, s:s, s:o, s:o}", "status", draining ? "draining" : "ok", "version", fnbox_version(),
                            "languages", available_languages(), "environments", environments());
    char *stats = NULL; /* the warm pools' counts (fnbox_engine_stats), when the server has them */
    if (doc && x->srv->engine && fnbox_engine_stats(x->srv->engine, &stats, NULL) == 0) {
        json_t *pools = json_loads(stats, 0, NULL);
        json_object_set(doc, "warm", json_object_get(pools, "pools"));
        json_decref(pools);
    }
    fnbox_free(stats);
    char *text = doc ? json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(doc);
    if (!text)
        return (fb_http_reply){0, NULL, 0};
    return fb_http_reply_json(draining ? MHD_HTTP_SERVICE_UNAVAILABLE : MHD_HTTP_OK, text, strlen(text), free, true);
}

fb_http_reply fb_http_handle_metrics(fb_http_exchange *x)
{
    unsigned running, queued;
    fb_http_admission_counts(&x->srv->adm, &running, &queued);
    fb_buf out;
    fb_buf_init(&out, FB_HTTP_METRICS_MAX);
    size_t len = 0;
    char *text = fb_http_metrics_render(&x->srv->metrics, running, queued, fb_http_sessions_count(&x->srv->sessions),
                                        fb_http_sessions_dead_total(&x->srv->sessions), &out) == 0 ? fb_buf_steal(&out, &len) : NULL;
    fb_buf_free(&out);
    if (!text)
        return (fb_http_reply){0, NULL, 0};
    return fb_http_reply_text(MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", text, len);
}

/* docs/openapi.yaml as JSON, made at build time (Makefile) and embedded (openapi_embed.S). */
extern const char fb_http_openapi_json[];
extern const unsigned long long fb_http_openapi_json_len;

fb_http_reply fb_http_handle_openapi(fb_http_exchange *x)
{
    (void)x;
    struct MHD_Response *r = MHD_create_response_from_buffer((size_t)fb_http_openapi_json_len,
                                                             (void *)fb_http_openapi_json, MHD_RESPMEM_PERSISTENT);
    if (!r)
        return (fb_http_reply){0, NULL, 0};
    if (MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json") != MHD_YES) {
        MHD_destroy_response(r);
        return (fb_http_reply){0, NULL, 0};
    }
    return (fb_http_reply){MHD_HTTP_OK, r, (size_t)fb_http_openapi_json_len};
}
