#include "io/recfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
