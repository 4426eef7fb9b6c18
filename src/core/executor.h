/* The call path (executor.c), shared by fnbox_call and the engine's calls (engine.c). */
#ifndef FB_CORE_EXECUTOR_H
#define FB_CORE_EXECUTOR_H
#include <stddef.h>

#include "core/pool.h"
#include "fnbox.h"

/* fnbox_call; with pool, the launch stage takes a prepared sandbox from it when one fits the call. */
int fb_executor_call(const char *request, size_t request_len, const fnbox_call_options *options, fb_pool *pool,
                     char **result, size_t *result_len);

#endif
