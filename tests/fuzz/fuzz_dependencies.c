/* Fuzz target: `dependencies` entries (request/dependencies.h). Input: one byte choosing the ecosystem
 * (even: python, odd: javascript), then the entry's bytes (NUL-terminated here). Checked besides the
 * sanitizers: a refusal gives a reason and no entry; an accepted entry is what an installer reads as a
 * package and nothing else: no leading '-', no "://" or ':', none of ; | & $ ` ' " \, no whitespace in a
 * Python entry and none at either end of an npm one, no '/' but npm's one of @scope/name, printable ASCII
 * only, at most FB_DEPS_MAX_ENTRY bytes; normalizing is idempotent (the normalized entry is accepted and
 * normalizes to itself), so equal lists are equal strings. */
#include "fuzz_common.h"

#include "request/dependencies.h"

static void check_accepted(fb_deps_eco eco, const char *norm)
{
    size_t n = strlen(norm);
    FUZZ_CHECK(n > 0 && n <= FB_DEPS_MAX_ENTRY, "length %zu", n);
    FUZZ_CHECK(norm[0] != '-' && norm[0] != '.' && norm[0] != '~', "'%s' starts like an option or a path", norm);
    FUZZ_CHECK(!strchr(norm, ':'), "'%s' has a scheme", norm);
    FUZZ_CHECK(!strpbrk(norm, ";|&$`'\"\\"), "'%s' has shell characters", norm);
    for (const char *p = norm; *p; p++)
        FUZZ_CHECK(*p >= 0x20 && *p < 0x7f && *p != '\t', "'%s' has a non-printable byte", norm);
    if (eco == FB_DEPS_PYTHON) {
        FUZZ_CHECK(!strpbrk(norm, " /@"), "python '%s' has a space, a path or a reference", norm);
    } else {
        FUZZ_CHECK(norm[n - 1] != ' ' && norm[0] != ' ', "npm '%s' has whitespace at an end", norm);
        const char *slash = strchr(norm, '/');
        FUZZ_CHECK(!slash || (norm[0] == '@' && !strchr(slash + 1, '/')), "npm '%s' is a path", norm);
        const char *at = strchr(norm + 1, '@');
        FUZZ_CHECK(!strchr(norm, ' ') || (at && strchr(norm, ' ') > at), "npm '%s': a space outside its range", norm);
    }
    char *again = NULL, why[160];
    FUZZ_CHECK(fb_dependency_check(eco, norm, &again, why, sizeof why) == 0, "normalized '%s' refused: %s", norm, why);
    FUZZ_CHECK(strcmp(again, norm) == 0, "'%s' normalizes again to '%s'", norm, again);
    free(again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > (size_t)4 * FB_DEPS_MAX_ENTRY)
        return 0;
    fb_deps_eco eco = (data[0] & 1) ? FB_DEPS_JAVASCRIPT : FB_DEPS_PYTHON;
    char *entry = malloc(size);
    if (!entry)
        return 0;
    memcpy(entry, data + 1, size - 1);
    entry[size - 1] = '\0';
    char *norm = (char *)1, why[160] = "";
    if (fb_dependency_check(eco, entry, &norm, why, sizeof why) < 0) {
        FUZZ_CHECK(norm == NULL && why[0], "a refusal left '%s' or no reason", norm ? norm : "");
    } else {
        check_accepted(eco, norm);
        free(norm);
    }
    free(entry);
    return 0;
}
