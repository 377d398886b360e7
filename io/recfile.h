/* Recordings on disk (man 5 bedtop-recording): core/recording.c builds and
 * reads the lines, this opens, writes and cuts back the files. */
#ifndef BEDTOP_IO_RECFILE_H
#define BEDTOP_IO_RECFILE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/recording.h"

/* Creates path (0600, refuses to overwrite) and writes the header. */
struct bt_recorder *bt_recorder_open(const char *path, const struct bt_config *cfg,
                                     const char *mode, int64_t now, char *err, size_t errlen);
/* Reads the recording at path (a regular file of at most 4 GiB, read twice by
 * lines, never whole); warn(arg, msg) is called for each skipped line (may be
 * NULL). Errors read "path: why". */
bool bt_replay_open(struct bt_replay *rp, const char *path, void (*warn)(void *, const char *),
                    void *warn_arg, char *err, size_t errlen);
#endif
