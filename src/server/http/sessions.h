/* The server's open sessions: ids, owners, references, limits and the reaper. A session belongs to the
 * bearer token that opened it: asked with another token (or none), it does not exist (404), so ids
 * cannot be probed across tokens. A request holds a reference while it uses a session; DELETE, the
 * reaper (idleTimeout, maxLifetime) and shutdown take it out of the table at once and kill what runs in
 * it, and the last reference frees it. */
#ifndef FB_HTTP_SESSIONS_H
#define FB_HTTP_SESSIONS_H
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "fnbox.h"
#include "util/error.h"

#define FB_HTTP_SESSION_ID_LEN 32           /* hex characters: 128 random bits */
#define FB_HTTP_REAP_INTERVAL_MS 1000       /* how often the reaper looks for expired sessions */

typedef struct fb_http_session fb_http_session;

/* A new id: FB_HTTP_SESSION_ID_LEN hex characters of the kernel's randomness (sessions, MCP sessions). */
int fb_http_new_id(char out[FB_HTTP_SESSION_ID_LEN + 1], fb_error *err);

typedef struct fb_http_sessions {
    pthread_mutex_t mu;
    pthread_cond_t wake;      /* the reaper's sleep, cut short at shutdown */
    fb_http_session *head;    /* the open sessions (a list: at most FB_HTTP_MAX_SESSIONS) */
    unsigned count, max;
    unsigned long opened, reaped;
    bool stopping;
    bool reaper_started;
    pthread_t reaper;
} fb_http_sessions;

int fb_http_sessions_init(fb_http_sessions *t, unsigned max, fb_error *err);
/* Closes every session (killing what runs in them), waits for their last references, stops the reaper. */
void fb_http_sessions_shutdown(fb_http_sessions *t);

/* Opens a session owned by `owner` (the token's index, -1 for a server without tokens) from the options
 * JSON. On FNBOX_OK, id gets its NUL-terminated id and *info its info JSON (fnbox_session_info, with "id"
 * added; fnbox_free). Otherwise the fnbox code and *error as fnbox_session_open gives them; the table
 * being full is FB_ERR_OVERLOADED in err with FNBOX_SANDBOX_FAILED (and no *error). */
int fb_http_sessions_open(fb_http_sessions *t, int owner, const char *options, size_t len,
                          char id[FB_HTTP_SESSION_ID_LEN + 1], char **info, char **error, fb_error *err);
/* The session with this id and owner, with a reference the caller gives back with fb_http_sessions_put;
 * NULL when there is none (unknown, closed, or another owner's). */
fb_http_session *fb_http_sessions_get(fb_http_sessions *t, const char *id, int owner);
fnbox_session *fb_http_session_api(fb_http_session *e);
void fb_http_sessions_put(fb_http_sessions *t, fb_http_session *e);
/* Closes the session with this id and owner; false when there is none. */
bool fb_http_sessions_close(fb_http_sessions *t, const char *id, int owner);
/* Closes the sessions that are past their idleTimeout or maxLifetime and unused; returns how many. */
unsigned fb_http_sessions_reap(fb_http_sessions *t);
unsigned fb_http_sessions_count(fb_http_sessions *t);

#endif
