/* Reading files for the rooms that compute (core/ never opens one): whole
 * files into memory, "key = value" data files, and where the data files are; and
 * the messages on stderr (core/ writes nothing). */
#ifndef BEDTOP_IO_FILE_H
#define BEDTOP_IO_FILE_H
#include <stdbool.h>
#include <stddef.h>

#include "core/util.h"

/* Reads a whole file (bounded by maxlen); returns NULL and sets errno on failure. */
char *bt_read_file(const char *path, size_t maxlen, size_t *lenp);
/* The same for a file bedtop keeps itself (a cache): only a regular file is
 * read, and a FIFO or device planted at the path never blocks (errno EINVAL). */
char *bt_read_regular_file(const char *path, size_t maxlen, size_t *lenp);

/* bt_parse_kv_lines (core/util.h) on the file at path (at most 1 MiB). */
bool bt_parse_kv_file(const char *path, const char *expect, bt_kv_fn line, void *arg, char *err,
                      size_t errlen);

/* The user's home directory: $HOME if absolute, else the password database's (as
 * OpenSSH finds it), else false: a relative or missing home never means the current
 * directory. */
bool bt_home_dir(char *out, size_t n);
/* A base directory of the XDG spec: $xdg_var if absolute (a relative one is ignored, as
 * the spec says), else HOME/home_sub (bt_home_dir); false when neither: the caller reads
 * and writes nothing there and says so. */
bool bt_xdg_dir(const char *xdg_var, const char *home_sub, char *out, size_t n);

/* bedtop's cache file NAME: $XDG_CACHE_HOME/bedtop/NAME (bt_xdg_dir: else
 * ~/.cache/bedtop/NAME); make_dir creates the directories (0700) for a writer. False
 * when there is no cache directory or the path does not fit. */
bool bt_cache_file(const char *name, bool make_dir, char *out, size_t n);

/* Writes a file bedtop keeps itself (a cache, the state, a token), whole or not at all:
 * a new file of our own beside path (mkstemp: O_EXCL, 0600, so a symlink or FIFO planted
 * at a guessable name is never followed or written through; close-on-exec), the data
 * written (sync: and fsync'd), then renamed over path. False on any failure, with errno
 * set and path as it was. */
bool bt_write_private_file(const char *path, const void *data, size_t len, bool sync);

/* A set of files written together into one directory (report incident's report.md and
 * charts): each is written to a new temporary name there (O_EXCL: never a planted FIFO,
 * device or link) and all are renamed into place at the end, or none: a full disk or
 * any failure leaves the previous set as it was. A final name that exists and is not a
 * regular file (a FIFO, a link, a directory) is refused, naming it. */
struct bt_outset {
    char *dir;
    int n;
    struct bt_outfile { char *name, *tmp; } *f;
};
void bt_outset_init(struct bt_outset *s, const char *dir);
bool bt_outset_add(struct bt_outset *s, const char *name, const void *data, size_t len, char *err,
                   size_t errlen);
bool bt_outset_commit(struct bt_outset *s, char *err, size_t errlen);
void bt_outset_free(struct bt_outset *s); /* removes the temporary files not renamed */

/* Directory of the running binary (from /proc/self/exe). */
bool bt_exe_dir(char *out, size_t n);
/* Finds a data file (burndown.conf, quota-names.conf, ...): $BEDTOP_DATADIR, then
 * data/ beside the binary or its parent (a source-tree build never picks up an
 * older install), then the install directory. */
bool bt_data_path(const char *file, char *out, size_t n);

/* Writes "bedtop: " + message to stderr, one line: outside strings go through the
 * terminal sanitiser. */
void bt_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The out-of-memory hook (bt_set_oom_hook, core/util.h) the program installs at
 * start-up: "bedtop: out of memory" on stderr (core then exits 3). */
void bt_oom_say(void);
#endif
