/* A collector's cache between runs: one JSON object in $XDG_CACHE_HOME/bedtop/NAME
 * (io/file.h bt_cache_file), an entry per key (a profile's ARN), each with its "at".
 * The application inference profiles (collectors/infprofile.c) and their tags
 * (collectors/tags.c) keep one each; what an entry holds, and whether it is whole,
 * is the caller's (the file is ours but may be damaged or edited). */
#ifndef BEDTOP_KEYCACHE_H
#define BEDTOP_KEYCACHE_H
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

/* Whether entry e is whole (the caller's outputs through arg), and its time in *at. */
typedef bool (*bt_keycache_valid_fn)(const cJSON *e, void *arg, int64_t *at);

/* The file's object; an empty one when it is missing, damaged or not an object. */
cJSON *bt_keycache_load(const char *name);

/* The entry under key when valid and fresh (at <= now < at + refresh): true, and valid's
 * outputs filled. */
bool bt_keycache_get(const char *name, const char *key, int64_t now, int64_t refresh,
                     bt_keycache_valid_fn valid, void *arg, int64_t *at);

/* entry (taken) under key, written whole or not at all and never through a planted link
 * (bt_write_private_file). The file stays bounded: entries valid() rejects, those
 * refresh or more older than at, the old one under key and all past the first max - 1
 * kept go. Nothing is written when there is no cache directory. */
void bt_keycache_put(const char *name, const char *key, cJSON *entry, int64_t at,
                     int64_t refresh, int max, bt_keycache_valid_fn valid, void *arg);

#endif
