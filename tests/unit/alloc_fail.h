/* Allocation-failure torture for unit tests (curl's torture mode, for jansson): alloc_fail_begin() routes
 * every jansson allocation through budget_malloc, which fails once alloc_budget allocations have been made.
 * A test sets alloc_budget to 0, 1, 2, ... before each run of the code under test, and back to -1 after it;
 * alloc_fail_end() restores jansson's plain malloc. */
#ifndef FNBOX_TESTS_ALLOC_FAIL_H
#define FNBOX_TESTS_ALLOC_FAIL_H

#include <stddef.h>
#include <stdlib.h>

#include <jansson.h>

static long alloc_budget = -1; /* allocations left before failing; -1 = unlimited */

static void *budget_malloc(size_t n)
{
    if (alloc_budget == 0)
        return NULL;
    if (alloc_budget > 0)
        alloc_budget--;
    return malloc(n);
}

static void alloc_fail_begin(void)
{
    json_set_alloc_funcs(budget_malloc, free);
}

static void alloc_fail_end(void)
{
    json_set_alloc_funcs(malloc, free);
}

#endif
