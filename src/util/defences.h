/* Test-only switches that turn one defence off, so the adversarial suite can prove that each attack is
 * stopped by the defence it names (an attack that still fails with its defence off tests nothing).
 *
 * Only a build made with -DFB_DEFENCE_SWITCHES honours them (`make BUILD=build-weak
 * CFLAGS=-DFB_DEFENCE_SWITCHES`); it reads FNBOX_DISABLE_DEFENCES, a comma-separated list of names
 * ("seccomp", "landlock", "netns", "pids", "memory", "env", "mountfs-rules", ...). In every other build
 * fb_defence_disabled is constant false and the variable is never read. In util/ because every layer has
 * defences to switch off (sandbox/, fs/, core/), and util/ is the one they may all include. */
#ifndef FB_UTIL_DEFENCES_H
#define FB_UTIL_DEFENCES_H
#include <stdbool.h>

/* [child]-safe: no allocation. */
bool fb_defence_disabled(const char *name);

#endif
