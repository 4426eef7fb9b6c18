#include "server/http/admission.h"

#include <errno.h>
#include <time.h>

int fb_http_admission_init(fb_http_admission *a, unsigned max_running, unsigned max_queued)
{
    *a = (fb_http_admission){.max_running = max_running ? max_running : 1, .max_queued = max_queued};
    pthread_condattr_t attr;
    if (pthread_condattr_init(&attr) != 0)
        return -1;
    /* Waits are timed ticks; the monotonic clock keeps them ticks when the wall clock is set. */
    int rc = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    if (rc == 0)
        rc = pthread_cond_init(&a->cv, &attr);
    pthread_condattr_destroy(&attr);
    if (rc != 0)
        return -1;
    if (pthread_mutex_init(&a->mu, NULL) != 0) {
        pthread_cond_destroy(&a->cv);
        return -1;
    }
    return 0;
}

void fb_http_admission_destroy(fb_http_admission *a)
{
    pthread_cond_destroy(&a->cv);
    pthread_mutex_destroy(&a->mu);
}

fb_http_admit fb_http_admission_enter(fb_http_admission *a)
{
    pthread_mutex_lock(&a->mu);
    fb_http_admit r = a->draining                                               ? FB_HTTP_ADMIT_DRAINING
                      : a->running + a->queued >= a->max_running + a->max_queued ? FB_HTTP_ADMIT_FULL
                                                                                 : FB_HTTP_ADMIT_OK;
    if (r == FB_HTTP_ADMIT_OK)
        a->queued++;
    pthread_mutex_unlock(&a->mu);
    return r;
}

static void tick_deadline(struct timespec *ts)
{
    clock_gettime(CLOCK_MONOTONIC, ts);
    ts->tv_nsec += FB_HTTP_ADMISSION_TICK_MS * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

fb_http_admit fb_http_admission_start(fb_http_admission *a, bool (*gone)(void *ctx), void *ctx)
{
    pthread_mutex_lock(&a->mu);
    fb_http_admit r;
    struct timespec tick;
    tick_deadline(&tick);
    for (;;) {
        if (a->draining) {
            r = FB_HTTP_ADMIT_DRAINING;
            break;
        }
        if (a->running < a->max_running) {
            a->running++;
            r = FB_HTTP_ADMIT_OK;
            break;
        }
        /* A wake-up that finds no slot keeps the tick's deadline: the client is asked about once a
         * tick however busy the slots are. */
        if (pthread_cond_timedwait(&a->cv, &a->mu, &tick) != ETIMEDOUT)
            continue;
        tick_deadline(&tick);
        if (gone) {
            pthread_mutex_unlock(&a->mu);
            bool left = gone(ctx);
            pthread_mutex_lock(&a->mu);
            if (left) {
                r = FB_HTTP_ADMIT_GONE;
                break;
            }
        }
    }
    a->queued--; /* the place is given back in every case: it became a slot, or nothing */
    pthread_mutex_unlock(&a->mu);
    return r;
}

void fb_http_admission_leave(fb_http_admission *a)
{
    pthread_mutex_lock(&a->mu);
    if (a->queued)
        a->queued--;
    pthread_mutex_unlock(&a->mu);
}

void fb_http_admission_finish(fb_http_admission *a)
{
    pthread_mutex_lock(&a->mu);
    if (a->running)
        a->running--;
    /* Every waiter rechecks; one of them takes the slot (at most max_queued threads wake). */
    pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->mu);
}

void fb_http_admission_drain(fb_http_admission *a)
{
    pthread_mutex_lock(&a->mu);
    a->draining = true;
    pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->mu);
}

void fb_http_admission_counts(fb_http_admission *a, unsigned *running, unsigned *queued)
{
    pthread_mutex_lock(&a->mu);
    *running = a->running;
    *queued = a->queued;
    pthread_mutex_unlock(&a->mu);
}
