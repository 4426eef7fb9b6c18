/* Kernel feature probes, for `fnbox doctor` and for failing closed with a clear message. */
#ifndef FB_FEATURES_H
#define FB_FEATURES_H
#include <stdbool.h>
#include <stddef.h>

typedef struct fb_feature {
    char name[64];
    bool ok;
    bool required;      /* a promised protection depends on it: calls fail without it */
    char detail[256];
    char fix[256];      /* what to do when !ok */
} fb_feature;

/* Fills up to cap entries; returns how many. Runs a real (empty) sandbox as its last probe. */
size_t fb_features_probe(fb_feature *out, size_t cap);

#endif
