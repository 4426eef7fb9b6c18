/* The operator's named environments on the library's side (include/fnbox.h: fnbox_environments_load,
 * fnbox_environments): the file made the process's set (request/environments.h), and what each
 * environment offers, found once when it is loaded: its languages and their versions, which `GET
 * /v1/health`, `fnbox doctor` and Piston's runtimes list, and by which a Piston `version` picks one. */
#ifndef FB_CORE_ENVIRONMENTS_H
#define FB_CORE_ENVIRONMENTS_H
#include <stdbool.h>
#include <stddef.h>

#include "request/environments.h"

#define FB_ENV_VERSION_MAX 32

/* The version of lang's interpreter in env (NULL: the host's), into out (cap bytes): true when env has
 * one. A root's is read from the root's files, never by running anything (the root is untrusted and this
 * runs outside every sandbox): the interpreter's usual name followed through its symlinks inside the root
 * (python3 -> python3.13 says 3.13), then the Debian package database, when the root has one, for the whole
 * version (3.13.5). Without a root, the host's interpreter's own report (fnbox_execute_languages). */
bool fb_env_language_version(const fb_environment *env, fb_env_lang lang, char *out, size_t cap);

/* The host's runtime's version as fnbox_execute_languages reports it, for an execute language's name
 * ("python3", "node", "ruby", "php"), or NULL (core/languages.c; found once per process). */
const char *fb_host_language_version(const char *execute_name);

#endif
