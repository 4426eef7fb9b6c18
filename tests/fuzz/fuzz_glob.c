/* Fuzz target: the glob matcher (fs/glob.h). Input: the pattern, then any number of lines, each a path
 * to test (none: the pattern's own text is the path):
 *
 *   src/{a,b}/x[0-9].{js,ts}
 *   src/a/x1.ts
 *   src/b/x1.css
 *
 * The pattern is everything before the first '\n' (it may hold NUL bytes: the compiler must refuse
 * them). Checked: no crash, leak, UB or timeout (matching must stay O(path x pattern)); a refused pattern
 * is an "InvalidPattern" and matches nothing; and, for inputs small enough to test four times, compile +
 * test, a second test and fb_glob_match agree, and `!P` answers the opposite of `P` wherever both compile
 * (P not starting with '!' or '#'). */
#include "fuzz_common.h"

#include "fs/glob.h"

#define MAX_PATHS 16
#define CROSS_CHECK_WORK (256 * 1024) /* pattern bytes x path bytes */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    const char *nl = memchr(text, '\n', size);
    size_t plen = nl ? (size_t)(nl - text) : size;
    fuzz_piece rest = {nl ? nl + 1 : NULL, nl ? size - plen - 1 : 0};

    char *pattern = malloc(plen + 2);
    if (!pattern)
        abort();
    pattern[0] = '!';
    memcpy(pattern + 1, text, plen);
    pattern[plen + 1] = '\0';
    const char *pat = pattern + 1;
    bool has_nul = strlen(pat) != plen;

    (void)fb_glob_has_extglob(pat, plen);
    fb_error err = {0};
    fb_glob *g = fb_glob_compile_n(pat, plen, &err);
    if (!g) {
        FUZZ_CHECK(strcmp(fb_error_type(&err), "InvalidPattern") == 0 && err.message[0], "refused with %s: %s", fb_error_type(&err),
                   err.message);
        if (!has_nul)
            FUZZ_CHECK(!fb_glob_match(pat, pat), "a refused pattern matched");
        free(pattern);
        return 0;
    }
    /* The negated pattern, when its own compile succeeds. */
    fb_glob *neg = NULL;
    if (plen > 0 && pat[0] != '!' && pat[0] != '#' && !has_nul)
        neg = fb_glob_compile_n(pattern, plen + 1, NULL);

    char *own = NULL;
    if (!rest.p) {
        own = strdup(pat); /* up to a NUL: the path is a C string */
        if (!own)
            abort();
    }
    for (int i = 0; i < MAX_PATHS; i++) {
        char *path = own ? own : fuzz_next_line(&rest);
        if (!path)
            break;
        bool hit = fb_glob_test(g, path);
        /* One test of the largest pattern the caps allow against a 4 KiB path takes ~1 s in this build
         * (glob.h): the cross-checks, 3 more tests each, only where that cannot add up to -timeout. */
        if (plen * strlen(path) <= CROSS_CHECK_WORK) {
            FUZZ_CHECK(fb_glob_test(g, path) == hit, "a second test of '%s' answered differently", path);
            if (!has_nul)
                FUZZ_CHECK(fb_glob_match(pat, path) == hit, "fb_glob_match and fb_glob_test disagree on '%s'",
                           path);
            if (neg)
                FUZZ_CHECK(fb_glob_test(neg, path) == !hit, "'!%s' and '%s' agree on '%s' (%d)", pat, pat, path,
                           hit);
        }
        free(path);
        if (own)
            break;
    }
    fb_glob_free(neg);
    fb_glob_free(g);
    free(pattern);
    return 0;
}
