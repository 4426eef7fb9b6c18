/* The MCP sessions' table (mcp_sessions.h). */
#include "server/http/mcp_sessions.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct fb_http_mcp_session {
    char id[FB_HTTP_SESSION_ID_LEN + 1];
    int owner;
    fb_mcp_server *srv;
    unsigned refs;            /* the table's own (while listed) + one per request using it */
    double last_used;         /* CLOCK_MONOTONIC seconds */
    fb_http_mcp_session *next;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void end(fb_http_mcp_session *e)
{
    fb_mcp_server_free(e->srv); /* cancels its runs, waits for them, closes its sandbox session */
    free(e);
}

/* Takes e out of the list (mu held); the table's reference goes: the entry to end outside the lock, if it
 * was the last. */
static fb_http_mcp_session *unlist(fb_http_mcp *t, fb_http_mcp_session *e)
{
    for (fb_http_mcp_session **p = &t->head; *p; p = &(*p)->next)
        if (*p == e) {
            *p = e->next;
            t->count--;
            fb_mcp_server_stop(e->srv); /* its runs end now; requests still using it answer and let go */
            return --e->refs == 0 ? e : NULL;
        }
    return NULL;
}

int fb_http_mcp_init(fb_http_mcp *t, unsigned max, fb_mcp_config *cfg, fb_error *err)
{
    memset(t, 0, sizeof *t);
    if (pthread_mutex_init(&t->mu, NULL) != 0)
        return fb_set_error(err, FB_ERR_INTERNAL, errno, "MCP sessions' lock");
    t->max = max;
    t->cfg = *cfg;
    memset(cfg, 0, sizeof *cfg);
    return 0;
}

void fb_http_mcp_shutdown(fb_http_mcp *t)
{
    pthread_mutex_lock(&t->mu);
    t->stopping = true;
    fb_http_mcp_session *ending = NULL;
    while (t->head) {
        fb_http_mcp_session *e = unlist(t, t->head);
        if (e) {
            e->next = ending;
            ending = e;
        }
    }
    pthread_mutex_unlock(&t->mu);
    while (ending) {
        fb_http_mcp_session *next = ending->next;
        end(ending);
        ending = next;
    }
    /* Entries still referenced end with their last request (the drain waited for requests to finish). */
    fb_mcp_config_free(&t->cfg);
    pthread_mutex_destroy(&t->mu);
}

/* The idle ones, unlisted (mu held), chained for ending outside the lock. */
static fb_http_mcp_session *take_idle(fb_http_mcp *t)
{
    fb_http_mcp_session *ending = NULL;
    double now = now_s();
    for (fb_http_mcp_session *e = t->head, *next; e; e = next) {
        next = e->next;
        if (e->refs == 1 && now - e->last_used > FB_HTTP_MCP_IDLE_S) {
            fb_http_mcp_session *gone = unlist(t, e);
            if (gone) {
                gone->next = ending;
                ending = gone;
            }
        }
    }
    return ending;
}

fb_http_mcp_session *fb_http_mcp_open(fb_http_mcp *t, int owner, char id[FB_HTTP_SESSION_ID_LEN + 1],
                                      fb_error *err)
{
    fb_http_mcp_session *e = calloc(1, sizeof *e);
    if (!e) {
        fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "an MCP session");
        return NULL;
    }
    fb_mcp_sink sink = {.send = fb_mcp_send_nowhere}; /* what no request caused: nothing, over HTTP */
    if (fb_http_new_id(e->id, err) < 0 || !(e->srv = fb_mcp_server_new(&t->cfg, t->engine, &sink))) {
        if (!e->srv && err->kind == FB_ERR_NONE)
            fb_set_error(err, FB_ERR_OUT_OF_MEMORY, ENOMEM, "an MCP session");
        free(e);
        return NULL;
    }
    e->owner = owner;
    e->refs = 2; /* the table's and the caller's */
    e->last_used = now_s();
    pthread_mutex_lock(&t->mu);
    fb_http_mcp_session *ending = take_idle(t);
    bool full = t->stopping || t->count >= t->max;
    if (!full) {
        e->next = t->head;
        t->head = e;
        t->count++;
    }
    pthread_mutex_unlock(&t->mu);
    while (ending) {
        fb_http_mcp_session *next = ending->next;
        end(ending);
        ending = next;
    }
    if (full) {
        end(e);
        fb_set_error(err, FB_ERR_OVERLOADED, 0, "MCP sessions: %u are open, the server's maximum (--max-sessions)",
                     t->max);
        return NULL;
    }
    memcpy(id, e->id, sizeof e->id);
    return e;
}

fb_http_mcp_session *fb_http_mcp_get(fb_http_mcp *t, const char *id, int owner)
{
    pthread_mutex_lock(&t->mu);
    fb_http_mcp_session *e = t->head;
    while (e && (e->owner != owner || strcmp(e->id, id) != 0))
        e = e->next;
    if (e) {
        e->refs++;
        e->last_used = now_s();
    }
    pthread_mutex_unlock(&t->mu);
    return e;
}

fb_mcp_server *fb_http_mcp_server(fb_http_mcp_session *e)
{
    return e->srv;
}

void fb_http_mcp_put(fb_http_mcp *t, fb_http_mcp_session *e)
{
    pthread_mutex_lock(&t->mu);
    e->last_used = now_s();
    bool last = --e->refs == 0;
    pthread_mutex_unlock(&t->mu);
    if (last)
        end(e);
}

bool fb_http_mcp_close(fb_http_mcp *t, const char *id, int owner)
{
    pthread_mutex_lock(&t->mu);
    fb_http_mcp_session *e = t->head;
    while (e && (e->owner != owner || strcmp(e->id, id) != 0))
        e = e->next;
    fb_http_mcp_session *gone = e ? unlist(t, e) : NULL;
    pthread_mutex_unlock(&t->mu);
    if (gone)
        end(gone);
    return e != NULL;
}

unsigned fb_http_mcp_running(fb_http_mcp *t)
{
    unsigned n = 0;
    pthread_mutex_lock(&t->mu);
    for (fb_http_mcp_session *e = t->head; e; e = e->next)
        n += fb_mcp_server_running(e->srv);
    pthread_mutex_unlock(&t->mu);
    return n;
}

void fb_http_mcp_stop_all(fb_http_mcp *t)
{
    pthread_mutex_lock(&t->mu);
    for (fb_http_mcp_session *e = t->head; e; e = e->next)
        fb_mcp_server_stop(e->srv);
    pthread_mutex_unlock(&t->mu);
}

unsigned fb_http_mcp_count(fb_http_mcp *t)
{
    pthread_mutex_lock(&t->mu);
    unsigned n = t->count;
    pthread_mutex_unlock(&t->mu);
    return n;
}
