#include "io/recfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/recfmt.h"
#include "io/conffile.h"
#include "core/util.h"

/* The file behind a recorder: appended to, cut back after a torn line. */
struct recfile {
    int fd;
    char path[512];
};

static int file_write(void *arg, const char *p, size_t n)
{
    struct recfile *f = arg;
    while (n) {
        ssize_t w = write(f->fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return errno;
        if (w == 0)
            return EIO;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static bool file_truncate(void *arg, long long size)
{
    struct recfile *f = arg;
    return ftruncate(f->fd, (off_t)size) == 0;
}

static long long file_size(void *arg)
{
    struct recfile *f = arg;
    struct stat st;
    return fstat(f->fd, &st) == 0 ? (long long)st.st_size : -1;
}

static void file_close(void *arg, bool keep)
{
    struct recfile *f = arg;
    close(f->fd);
    if (!keep)
        unlink(f->path);
    free(f);
}

struct bt_recorder *bt_recorder_open(const char *path, const struct bt_config *cfg,
                                     const char *mode, int64_t now, char *err, size_t errlen)
{
    if (cfg->nroutes > BT_REC_MAX_ROUTES) { /* the reader would refuse the file */
        snprintf(err, errlen, "%s: a recording holds at most %d routes and the config has %d; "
                 "record a smaller config", path, BT_REC_MAX_ROUTES, cfg->nroutes);
        return NULL;
    }
    char *h = bt_recorder_header(cfg, mode, now); /* first: out of memory leaves no file */
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s%s", path, strerror(errno),
                 errno == EEXIST ? " (recordings are never overwritten: choose a new name)" : "");
        bt_recorder_header_free(h);
        return NULL;
    }
    struct recfile *f = bt_xcalloc(1, sizeof *f);
    f->fd = fd;
    bt_strlcpy(f->path, path, sizeof f->path);
    struct bt_rec_sink sink = {.write = file_write, .truncate = file_truncate,
                               .size = file_size, .close = file_close, .arg = f};
    struct bt_recorder *r = bt_recorder_start(&sink, path, h, now, err, errlen);
    bt_recorder_header_free(h);
    return r;
}

/* Lines of a recording file, read with getdelim (a 24-hour file is ~50 MB:
 * never held whole). */
struct file_lines {
    FILE *f;
    char *buf;
    size_t cap;
};

static int file_next(void *arg, char **line, size_t *n)
{
    struct file_lines *ls = arg;
    ssize_t got = getdelim(&ls->buf, &ls->cap, '\n', ls->f);
    if (got <= 0)
        return 0;
    bool nl = ls->buf[got - 1] == '\n';
    ls->buf[got - (nl ? 1 : 0)] = '\0';
    *line = ls->buf;
    *n = (size_t)got - (nl ? 1 : 0);
    return nl ? 1 : 2;
}

static int file_rewind(void *arg)
{
    struct file_lines *ls = arg;
    return fseek(ls->f, 0, SEEK_SET) == 0 ? 0 : errno;
}

bool bt_replay_open(struct bt_replay *rp, const char *path, void (*warn)(void *, const char *),
                    void *warn_arg, char *err, size_t errlen)
{
    struct file_lines ls = {0};
    struct stat st;
    /* O_NONBLOCK: a FIFO must not block the open before it can be refused */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    const char *why = NULL;
    if (fd < 0 || fstat(fd, &st) != 0)
        why = strerror(errno);
    else if (!S_ISREG(st.st_mode))
        /* /dev/zero behind a symlink was read up to 4 GiB into memory */
        why = "not a regular file; replay reads recordings bedtop record wrote (save a "
              "pipe's output to a file first)";
    else if (st.st_size > ((off_t)4 << 30))
        why = "larger than the 4 GiB bedtop reads; split it (the header line with any "
              "run of poll lines is a recording)";
    else {
        ls.f = fdopen(fd, "rb");
        if (!ls.f)
            why = strerror(errno);
    }
    if (why) {
        snprintf(err, errlen, "%s: %s", path, why);
        if (fd >= 0)
            close(fd);
        memset(rp, 0, sizeof *rp);
        bt_strlcpy(rp->path, path, sizeof rp->path);
        return false;
    }
    struct bt_rec_lines src = {.next = file_next, .rewind = file_rewind, .arg = &ls};
    bool ok = bt_replay_open_lines(rp, path, &src, warn, warn_arg, err, errlen);
    if (ok && !rp->prices_recorded) {
        /* a file before 2.2 has no price rows: the spend figures are priced with the
         * installed price table, which may not be the one the recording was made
         * with; said once, on stderr and in the JSON's spend "prices_note" */
        bt_prices_load_default(&rp->cfg);
        char note[sizeof rp->cfg.prices_note];
        bt_fmt_cut(note, sizeof note, "the recording carries no price rows (written before "
                   "format 2.2): its spend is priced with this machine's price table%s%s",
                   rp->cfg.prices_note[0] ? "; " : "", rp->cfg.prices_note);
        bt_strlcpy(rp->cfg.prices_note, note, sizeof rp->cfg.prices_note);
        if (warn) {
            char msg[sizeof rp->path + sizeof note + 4];
            bt_fmt_cut(msg, sizeof msg, "%s: %s", path, note);
            warn(warn_arg, msg);
        }
    }
    fclose(ls.f);
    free(ls.buf);
    return ok;
}
