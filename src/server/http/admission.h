/* Admission: at most max_running executions at once, at most max_queued more admitted and waiting;
 * beyond that a request is refused at once (503 with Retry-After) instead of piling up. A request takes
 * a queue place when its headers arrive (so the bodies held in memory are bounded too: a body is read
 * only into an admitted request), turns it into a run slot when it is ready to run, and gives the slot
 * back when its execution is over. Waiters are woken in no particular order. */
#ifndef FB_HTTP_ADMISSION_H
#define FB_HTTP_ADMISSION_H
#include <pthread.h>
#include <stdbool.h>

#define FB_HTTP_ADMISSION_TICK_MS 100 /* how often a waiter asks whether its client is still there */

typedef struct fb_http_admission {
    pthread_mutex_t mu;
    pthread_cond_t cv;      /* a run slot came free, or draining began */
    unsigned max_running;   /* >= 1 */
    unsigned max_queued;
    unsigned running;       /* run slots taken */
    unsigned queued;        /* queue places taken: admitted, body being read or waiting for a slot */
    bool draining;          /* shutting down: nothing new is admitted or started */
} fb_http_admission;

typedef enum fb_http_admit {
    FB_HTTP_ADMIT_OK,       /* enter: a queue place is the caller's; start: a run slot is */
    FB_HTTP_ADMIT_FULL,     /* enter: every slot and place is taken */
    FB_HTTP_ADMIT_DRAINING, /* the server is shutting down; no place is held */
    FB_HTTP_ADMIT_GONE,     /* start: gone() said the client left; the place was given back */
} fb_http_admit;

int fb_http_admission_init(fb_http_admission *a, unsigned max_running, unsigned max_queued);
void fb_http_admission_destroy(fb_http_admission *a);
/* Takes a queue place, if running + queued < max_running + max_queued. */
fb_http_admit fb_http_admission_enter(fb_http_admission *a);
/* Turns the caller's queue place into a run slot, waiting for one. Every tick while waiting it asks
 * gone(ctx) (without the lock held) whether to give up. */
fb_http_admit fb_http_admission_start(fb_http_admission *a, bool (*gone)(void *ctx), void *ctx);
/* Gives back a queue place that will not run (the body was refused, the client left). */
void fb_http_admission_leave(fb_http_admission *a);
/* Gives back a run slot. */
void fb_http_admission_finish(fb_http_admission *a);
/* From now on enter and start answer DRAINING; waiters are woken to hear it. */
void fb_http_admission_drain(fb_http_admission *a);
void fb_http_admission_counts(fb_http_admission *a, unsigned *running, unsigned *queued);

#endif
