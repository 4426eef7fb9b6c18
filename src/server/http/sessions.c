/* The server's session table (sessions.h). */
#include "server/http/sessions.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "server/http/log.h"

#include "util/json.h"

struct fb_http_session {
    char id[FB_HTTP_SESSION_ID_LEN + 1];
    int owner;
    fnbox_session *s;
    unsigned refs;            /* the table's own (while listed) + one per request using it */
    bool unwatched;           /* its watch fd fired without a death to show: no longer polled */
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

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void wake_reaper(fb_http_sessions *t)
{
    if (t->wake[1] >= 0)
        (void)!write(t->wake[1], "w", 1); /* full: a wake-up is pending anyway */
}

/* ---- dead sessions ---- */

/* Drops tombstones past FB_HTTP_DEAD_KEEP_S (under t->mu). */
static void expire_dead(fb_http_sessions *t)
{
    double now = now_s();
    for (unsigned i = 0; t->dead && i < FB_HTTP_MAX_DEAD_SESSIONS; i++)
        if (t->dead[i].id[0] && now - t->dead[i].died >= FB_HTTP_DEAD_KEEP_S) {
            free(t->dead[i].info);
            memset(&t->dead[i], 0, sizeof t->dead[i]);
            t->ndead--;
        }
}

/* Keeps id as a tombstone (under t->mu; takes info), replacing the oldest when the ring is full. */
static void keep_dead(fb_http_sessions *t, const fb_http_session *e, const char *reason, char *info)
{
    if (!t->dead) {
        free(info);
        return;
    }
    fb_http_dead_session *d = &t->dead[t->dead_next];
    t->dead_next = (t->dead_next + 1) % FB_HTTP_MAX_DEAD_SESSIONS;
    if (d->id[0])
        free(d->info);
    else
        t->ndead++;
    memcpy(d->id, e->id, sizeof d->id);
    d->owner = e->owner;
    snprintf(d->reason, sizeof d->reason, "%s", reason);
    d->info = info;
    d->died = now_s();
}

static fb_http_dead_session *find_dead(fb_http_sessions *t, const char *id, int owner)
{
    for (unsigned i = 0; t->dead && i < FB_HTTP_MAX_DEAD_SESSIONS; i++)
        if (t->dead[i].id[0] && t->dead[i].owner == owner && strcmp(t->dead[i].id, id) == 0)
            return &t->dead[i];
    return NULL;
}

static char *info_with_id(fnbox_session *s, const char *id);

/* When e's sandbox has died: takes it out of the table (its resources freed once the last request using it
 * returns), keeps its tombstone, counts and logs it. The caller holds a reference to e. */
static bool bury_if_dead(fb_http_sessions *t, fb_http_session *e)
{
    char reason[96];
    if (!fnbox_session_dead(e->s, reason, sizeof reason))
        return false;
    char *info = info_with_id(e->s, e->id); /* state "dead", reason */
    fb_http_session *last = NULL;
    bool buried = false;
    pthread_mutex_lock(&t->mu);
    for (fb_http_session **link = &t->head; *link; link = &(*link)->next)
        if (*link == e) {
            last = unlist(t, link);
            keep_dead(t, e, reason, info);
            info = NULL;
            t->dead_total++;
            buried = true;
            break;
        }
    pthread_mutex_unlock(&t->mu);
    free(info);
    finish(last); /* never the last here: the caller holds a reference */
    if (buried) {
        char msg[256];
        snprintf(msg, sizeof msg, "session %s died (%s): closed, its resources freed; its requests answer 410",
                 e->id, reason);
        fb_http_log(json_pack("{s:s, s:s, s:s, s:s}", "event", "session-dead", "session", e->id, "reason", reason,
                              "message", msg));
    }
    return true;
}

/* One wait of the reaper: every open session's watch fd and the wake pipe, until a death, a wake-up or
 * until_s; each fd that fired is checked for a death. held and p have room for t->max + 1 entries. */
static void watch_once(fb_http_sessions *t, fb_http_session **held, struct pollfd *p, double until_s)
{
    size_t n = 0;
    pthread_mutex_lock(&t->mu);
    for (fb_http_session *e = t->head; e && n < (size_t)t->max; e = e->next)
        if (!e->unwatched) {
            e->refs++;
            held[n] = e;
            p[++n] = (struct pollfd){.fd = fnbox_session_watch_fd(e->s), .events = POLLIN};
        }
    pthread_mutex_unlock(&t->mu);
    p[0] = (struct pollfd){.fd = t->wake[0], .events = POLLIN};
    double left = until_s - now_s();
    if (poll(p, n + 1, left > 0 ? (int)(left * 1e3) + 1 : 0) > 0 && (p[0].revents & POLLIN)) {
        char drain[64];
        while (read(t->wake[0], drain, sizeof drain) > 0)
            ;
    }
    for (size_t i = 0; i < n; i++) {
        if (p[i + 1].revents && !bury_if_dead(t, held[i])) {
            pthread_mutex_lock(&t->mu);
            held[i]->unwatched = true; /* gone by a shutdown, or not to be told: the expiry reaps it */
            pthread_mutex_unlock(&t->mu);
        }
        fb_http_sessions_put(t, held[i]);
    }
}

static void *reaper_main(void *arg)
{
    fb_http_sessions *t = arg;
    fb_http_session **held = calloc((size_t)t->max + 1, sizeof(fb_http_session *));
    struct pollfd *p = calloc((size_t)t->max + 2, sizeof *p);
    double next_reap = now_s() + FB_HTTP_REAP_INTERVAL_MS / 1e3;
    for (;;) {
        pthread_mutex_lock(&t->mu);
        bool stopping = t->stopping;
        if (!stopping)
            expire_dead(t);
        pthread_mutex_unlock(&t->mu);
        if (stopping)
            break;
        if (held && p) {
            watch_once(t, held, p, next_reap);
        } else { /* no room to watch: deaths are noticed by the requests, expiry still runs */
            struct pollfd w = {.fd = t->wake[0], .events = POLLIN};
            (void)poll(&w, 1, FB_HTTP_REAP_INTERVAL_MS);
        }
        if (now_s() >= next_reap) {
            (void)fb_http_sessions_reap(t);
            next_reap = now_s() + FB_HTTP_REAP_INTERVAL_MS / 1e3;
        }
    }
    free(held);
    free(p);
    return NULL;
}

int fb_http_sessions_init(fb_http_sessions *t, unsigned max, fb_error *err)
{
    memset(t, 0, sizeof *t);
    t->max = max;
    t->wake[0] = t->wake[1] = -1;
    if (pipe2(t->wake, O_CLOEXEC | O_NONBLOCK) < 0)
        return fb_set_error(err, FB_ERR_INTERNAL, errno, "pipe2 (the session reaper's wake-up)");
    t->dead = calloc(FB_HTTP_MAX_DEAD_SESSIONS, sizeof *t->dead); /* NULL: dead sessions are 404 at once */
    pthread_mutex_init(&t->mu, NULL);
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
    pthread_mutex_unlock(&t->mu);
    wake_reaper(t);
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
    for (unsigned i = 0; t->dead && i < FB_HTTP_MAX_DEAD_SESSIONS; i++)
        free(t->dead[i].info);
    free(t->dead);
    t->dead = NULL;
    for (int i = 0; i < 2; i++)
        if (t->wake[i] >= 0)
            close(t->wake[i]);
    pthread_mutex_destroy(&t->mu);
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
    if (!e)
        wake_reaper(t); /* one more watch fd to poll */
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
    if (e && bury_if_dead(t, e)) { /* died, the reaper not there yet: its tombstone answers */
        fb_http_sessions_put(t, e);
        return NULL;
    }
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

unsigned long fb_http_sessions_dead_total(fb_http_sessions *t)
{
    pthread_mutex_lock(&t->mu);
    unsigned long n = t->dead_total;
    pthread_mutex_unlock(&t->mu);
    return n;
}

bool fb_http_sessions_dead(fb_http_sessions *t, const char *id, int owner, char *reason, size_t cap, char **info)
{
    if (info)
        *info = NULL;
    pthread_mutex_lock(&t->mu);
    expire_dead(t);
    fb_http_dead_session *d = find_dead(t, id, owner);
    if (d) {
        snprintf(reason, cap, "%s", d->reason);
        if (info && d->info)
            *info = strdup(d->info);
    }
    pthread_mutex_unlock(&t->mu);
    return d != NULL;
}

bool fb_http_sessions_forget(fb_http_sessions *t, const char *id, int owner)
{
    pthread_mutex_lock(&t->mu);
    fb_http_dead_session *d = find_dead(t, id, owner);
    if (d) {
        free(d->info);
        memset(d, 0, sizeof *d);
        t->ndead--;
    }
    pthread_mutex_unlock(&t->mu);
    return d != NULL;
}
