/* The server's session table (sessions.h). */
#include "server/http/sessions.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "util/json.h"

struct fb_http_session {
    char id[FB_HTTP_SESSION_ID_LEN + 1];
    int owner;
    fnbox_session *s;
    unsigned refs;            /* the table's own (while listed) + one per request using it */
    fb_http_session *next;
};

int fb_http_new_id(char out[FB_HTTP_SESSION_ID_LEN + 1], fb_error *err)
{
    unsigned char raw[FB_HTTP_SESSION_ID_LEN / 2];
    size_t got = 0;
    while (got < sizeof raw) {
        ssize_t n = getrandom(raw + got, sizeof raw - got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return fb_set_error(err, FB_ERR_INTERNAL, errno, "getrandom (a session id)");
        got += (size_t)n;
    }
    for (size_t i = 0; i < sizeof raw; i++)
        snprintf(out + 2 * i, 3, "%02x", raw[i]);
    return 0;
}

/* Drops one reference (under t->mu); the last one closes the session. Returns the entry to close outside
 * the lock, or NULL. */
static fb_http_session *unref(fb_http_session *e)
{
    return --e->refs == 0 ? e : NULL;
}

static void finish(fb_http_session *e)
{
    if (!e)
        return;
    fnbox_session_close(e->s);
    free(e);
}

/* Takes e out of the list (under t->mu) and stops its session: later lookups miss it, what runs in it is
 * killed; the requests still holding it return and the last one frees it. */
static fb_http_session *unlist(fb_http_sessions *t, fb_http_session **link)
{
    fb_http_session *e = *link;
    *link = e->next;
    t->count--;
    fnbox_session_shutdown(e->s);
    return unref(e);
}

static void *reaper_main(void *arg)
{
    fb_http_sessions *t = arg;
    pthread_mutex_lock(&t->mu);
    while (!t->stopping) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_sec += FB_HTTP_REAP_INTERVAL_MS / 1000;
        pthread_cond_timedwait(&t->wake, &t->mu, &ts);
        if (t->stopping)
            break;
        pthread_mutex_unlock(&t->mu);
        (void)fb_http_sessions_reap(t);
        pthread_mutex_lock(&t->mu);
    }
    pthread_mutex_unlock(&t->mu);
    return NULL;
}

int fb_http_sessions_init(fb_http_sessions *t, unsigned max, fb_error *err)
{
    memset(t, 0, sizeof *t);
    t->max = max;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&t->mu, NULL);
    pthread_cond_init(&t->wake, &ca);
    pthread_condattr_destroy(&ca);
    int e = pthread_create(&t->reaper, NULL, reaper_main, t);
    if (e != 0)
        return fb_set_error(err, FB_ERR_INTERNAL, e, "starting the session reaper");
    t->reaper_started = true;
    return 0;
}

void fb_http_sessions_shutdown(fb_http_sessions *t)
{
    pthread_mutex_lock(&t->mu);
    t->stopping = true;
    pthread_cond_broadcast(&t->wake);
    pthread_mutex_unlock(&t->mu);
    if (t->reaper_started)
        pthread_join(t->reaper, NULL);
    t->reaper_started = false;
    for (;;) {
        pthread_mutex_lock(&t->mu);
        fb_http_session *e = t->head ? unlist(t, &t->head) : NULL;
        bool more = t->head != NULL;
        pthread_mutex_unlock(&t->mu);
        finish(e); /* waits for the requests still in it (fnbox_session_close) when it was the last ref */
        if (!more)
            break;
    }
    pthread_mutex_destroy(&t->mu);
    pthread_cond_destroy(&t->wake);
}

static char *info_with_id(fnbox_session *s, const char *id)
{
    char *text = NULL;
    if (fnbox_session_info(s, &text, NULL) < 0)
        return NULL;
    json_t *doc = json_loads(text, 0, NULL);
    fnbox_free(text);
    json_t *full = doc ? json_pack("{s:s}", "id", id) : NULL;
    if (full && json_object_update(full, doc) < 0) {
        json_decref(full);
        full = NULL;
    }
    json_decref(doc);
    char *out = full ? fb_json_dumps_shortest(full, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(full);
    return out;
}

/* Reserves a place in the table (the open itself runs outside the lock: it builds a sandbox). */
static bool reserve(fb_http_sessions *t)
{
    pthread_mutex_lock(&t->mu);
    bool ok = !t->stopping && t->count < t->max;
    if (ok)
        t->count++;
    pthread_mutex_unlock(&t->mu);
    return ok;
}

int fb_http_sessions_open(fb_http_sessions *t, int owner, const char *options, size_t len,
                          char id[FB_HTTP_SESSION_ID_LEN + 1], char **info, char **error, fb_error *err)
{
    *info = NULL;
    *error = NULL;
    if (!reserve(t)) {
        fb_set_error(err, FB_ERR_OVERLOADED, 0, "%u sessions are open, the server's maximum (--max-sessions): close one",
                     t->max);
        return FNBOX_SANDBOX_FAILED;
    }
    fb_http_session *e = calloc(1, sizeof *e);
    if (!e) {
        pthread_mutex_lock(&t->mu);
        t->count--;
        pthread_mutex_unlock(&t->mu);
        fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "a session");
        return FNBOX_NO_RESULT;
    }
    int rc = fb_http_new_id(e->id, err) < 0 ? FNBOX_SANDBOX_FAILED : fnbox_session_open(options, len, &e->s, error, NULL);
    char *text = rc == FNBOX_OK ? info_with_id(e->s, e->id) : NULL;
    pthread_mutex_lock(&t->mu);
    if (rc == FNBOX_OK && text && !t->stopping) {
        e->owner = owner;
        e->refs = 1;
        e->next = t->head;
        t->head = e;
        t->opened++;
        memcpy(id, e->id, sizeof e->id);
        *info = text;
        e = NULL;
    } else {
        t->count--;
    }
    pthread_mutex_unlock(&t->mu);
    if (e) { /* not listed: failed, or the server began to stop meanwhile */
        if (rc == FNBOX_OK) {
            free(text);
            rc = FNBOX_SANDBOX_FAILED;
            fb_set_error(err, FB_ERR_OVERLOADED, 0, "the server is shutting down");
        }
        fnbox_session_close(e->s);
        free(e);
    }
    return rc;
}

static fb_http_session **find(fb_http_sessions *t, const char *id, int owner)
{
    for (fb_http_session **link = &t->head; *link; link = &(*link)->next)
        if ((*link)->owner == owner && strcmp((*link)->id, id) == 0)
            return link;
    return NULL;
}

fb_http_session *fb_http_sessions_get(fb_http_sessions *t, const char *id, int owner)
{
    pthread_mutex_lock(&t->mu);
    fb_http_session **link = find(t, id, owner);
    fb_http_session *e = link ? *link : NULL;
    if (e)
        e->refs++;
    pthread_mutex_unlock(&t->mu);
    return e;
}

fnbox_session *fb_http_session_api(fb_http_session *e)
{
    return e->s;
}

void fb_http_sessions_put(fb_http_sessions *t, fb_http_session *e)
{
    pthread_mutex_lock(&t->mu);
    fb_http_session *last = unref(e);
    pthread_mutex_unlock(&t->mu);
    finish(last);
}

bool fb_http_sessions_close(fb_http_sessions *t, const char *id, int owner)
{
    pthread_mutex_lock(&t->mu);
    fb_http_session **link = find(t, id, owner);
    fb_http_session *last = link ? unlist(t, link) : NULL;
    pthread_mutex_unlock(&t->mu);
    finish(last);
    return link != NULL;
}

unsigned fb_http_sessions_reap(fb_http_sessions *t)
{
    unsigned n = 0;
    for (;;) {
        fb_http_session *last = NULL;
        bool found = false;
        pthread_mutex_lock(&t->mu);
        for (fb_http_session **link = &t->head; *link; link = &(*link)->next)
            if (fnbox_session_expired((*link)->s)) {
                last = unlist(t, link);
                found = true;
                t->reaped++;
                break;
            }
        pthread_mutex_unlock(&t->mu);
        finish(last);
        if (!found)
            return n;
        n++;
    }
}

unsigned fb_http_sessions_count(fb_http_sessions *t)
{
    pthread_mutex_lock(&t->mu);
    unsigned n = t->count;
    pthread_mutex_unlock(&t->mu);
    return n;
}
