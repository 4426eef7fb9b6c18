/* What a call did to files: the change list every fs/ stage shares (track builds it, result reports it,
 * sync applies it). Plain data; one owner per list (fb_change_list_free releases everything). */
#ifndef FB_FS_CHANGE_H
#define FB_FS_CHANGE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "util/error.h"

typedef enum { FB_CHANGE_CREATED, FB_CHANGE_MODIFIED, FB_CHANGE_DELETED } fb_change_kind;
typedef enum { FB_FILE_REGULAR, FB_FILE_DIRECTORY, FB_FILE_SYMLINK } fb_file_type;

/* The host entry a change was based on, as the view saw it when it first changed the path (a file copied up
 * for writing, a deletion, a rename over it): sync writes the change only if the host still has that
 * entry, so that what the host changed meanwhile is never lost under it. */
typedef struct fb_host_stamp {
    bool set;               /* false: nothing known (a request file's, or a change given to fnbox sync) */
    bool absent;            /* the host had nothing there: the change made the path */
    bool dir;               /* a directory: only its identity counts (its own writes change its times) */
    uint64_t ino, size;
    int64_t mtime_s, mtime_ns;
} fb_host_stamp;

typedef struct fb_change {
    fb_change_kind kind;
    fb_file_type type;
    char *path;             /* absolute virtual path inside the sandbox, e.g. "/data/output/a.txt" */
    uint64_t size;          /* bytes of the new content (created/modified), of the old file (deleted) */
    mode_t mode;            /* permission bits of the new file (0644, 0755, ...); 0 for deleted */
    unsigned char *content; /* new content of a created/modified regular file (or a symlink's target);
                               NULL for directories, deletions, or when contents were not kept */
    size_t content_len;
    bool has_content;       /* content is the whole new content (an empty file has has_content && len 0) */
    fb_host_stamp base;     /* the host entry it replaces or deletes, when the view knew one */
} fb_change;

typedef struct fb_change_list {
    fb_change *v;
    size_t n, cap;
} fb_change_list;

/* Appends a copy of path (and takes ownership of content, which must come from malloc). -1 on OOM. */
int fb_change_add(fb_change_list *l, fb_change_kind kind, fb_file_type type, const char *path, uint64_t size,
                  mode_t mode, unsigned char *content, size_t content_len, bool has_content, fb_error *err);
void fb_change_list_free(fb_change_list *l);
/* The stamp of st (an lstat of the host entry). */
fb_host_stamp fb_host_stamp_of(const struct stat *st);
/* Whether the host's entry now (exists, st) is no longer the one base describes. */
bool fb_host_stamp_changed(const fb_host_stamp *base, bool exists, const struct stat *st);
const char *fb_change_kind_name(fb_change_kind k);  /* "created", "modified", "deleted" */
const char *fb_file_type_name(fb_file_type t);      /* "file", "directory", "symlink" */

/* One refused operation, for the result's files.denied and the permissionDenied event. */
typedef struct fb_denial {
    char *path;             /* absolute virtual path */
    const char *operation;  /* static: "read", "list", "create", "modify", "delete" */
    char *rule;             /* the deciding rule as rules.c names it (e.g. `exclude "node_modules"`, `default`) */
} fb_denial;

typedef struct fb_denial_list {
    fb_denial *v;
    size_t n, cap;
} fb_denial_list;

int fb_denial_add(fb_denial_list *l, const char *path, const char *operation, const char *rule, fb_error *err);
void fb_denial_list_free(fb_denial_list *l);

#endif
