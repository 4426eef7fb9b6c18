/* The server's open sessions: ids, owners, references, limits and the reaper. A session belongs to the
 * bearer token that opened it: asked with another token (or none), it does not exist (404), so ids
 * cannot be probed across tokens. A request holds a reference while it uses a session; DELETE, the
 * reaper (idleTimeout, maxLifetime) and shutdown take it out of the table at once and kill what runs in
 * it, and the last reference frees it.
 *
 * A session whose sandbox died by itself (its init killed: the memory limit, a signal) is noticed at once:
 * the reaper polls every open session's watch fd (fnbox_session_watch_fd) along with its own wake pipe, and
 * a request that finds its session dead notices it too. Either way the session is taken out of the table
 * and closed (its processes, cgroup and files freed), the server logs a "session-dead" line and counts it
 * (fnbox_sessions_dead_total), and the id is kept as a tombstone: its owner's requests then answer 410
 * SessionDead naming the cause, GET answers its last info (state "dead", reason), DELETE forgets it (204).
 * Tombstones are bounded: at most FB_HTTP_MAX_DEAD_SESSIONS (the oldest goes first) and each for
 * FB_HTTP_DEAD_KEEP_S; after that the id is unknown (404) like any other. */
#ifndef FB_HTTP_SESSIONS_H
#define FB_HTTP_SESSIONS_H
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "fnbox.h"
#include "util/error.h"

#define FB_HTTP_SESSION_ID_LEN 32           /* hex characters: 128 random bits */
#define FB_HTTP_REAP_INTERVAL_MS 1000       /* how often the reaper looks for expired sessions */
#define FB_HTTP_MAX_DEAD_SESSIONS 1024      /* tombstones of dead sessions kept (~0.5 KB each) */
#define FB_HTTP_DEAD_KEEP_S 3600            /* how long a dead session's id answers 410 (then 404) */

typedef struct fb_http_session fb_http_session;

/* A new id: FB_HTTP_SESSION_ID_LEN hex characters of the kernel's randomness (sessions, MCP sessions). */
int fb_http_new_id(char out[FB_HTTP_SESSION_ID_LEN + 1], fb_error *err);

typedef struct fb_http_dead_session {
    char id[FB_HTTP_SESSION_ID_LEN + 1];
    int owner;
    char reason[96];
    char *info;               /* its info JSON at death (with id, state "dead", reason) */
    double died;              /* CLOCK_MONOTONIC seconds */
} fb_http_dead_session;

typedef struct fb_http_sessions {
    pthread_mutex_t mu;
    fb_http_session *head;    /* the open sessions (a list: at most FB_HTTP_MAX_SESSIONS) */
    unsigned count, max;
    unsigned long opened, reaped, dead_total;
    fb_http_dead_session *dead; /* a ring of FB_HTTP_MAX_DEAD_SESSIONS tombstones (NULL: none kept) */
    unsigned dead_next, ndead;
    int wake[2];              /* the reaper's wake pipe: a new session to watch, shutdown */
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
unsigned long fb_http_sessions_dead_total(fb_http_sessions *t);
/* Whether id (of owner) is a dead session's tombstone: reason (cap bytes) gets why, *info (when not NULL) a
 * copy of its last info (free). */
bool fb_http_sessions_dead(fb_http_sessions *t, const char *id, int owner, char *reason, size_t cap, char **info);
/* Forgets a dead session's tombstone (DELETE); false when there is none. */
bool fb_http_sessions_forget(fb_http_sessions *t, const char *id, int owner);

#endif
