#include "io/file.h"
#include "core/sanitize.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *read_stream(FILE *f, size_t maxlen, size_t *lenp)
{
    struct bt_buf b = {0};
    errno = 0;
    char chunk[8192];
    for (size_t n = fread(chunk, 1, sizeof chunk, f); n > 0; n = fread(chunk, 1, sizeof chunk, f)) {
        if (b.len + n > maxlen) {
            fclose(f);
            bt_buf_free(&b);
            errno = EFBIG;
            return NULL;
        }
        bt_buf_add(&b, chunk, n);
    }
    int bad = ferror(f), why = errno; /* fread's own reason (EISDIR, EIO) */
    fclose(f);
    if (bad) {
        bt_buf_free(&b);
        errno = why ? why : EIO;
        return NULL;
    }
    if (!b.buf)
        bt_buf_reserve(&b, 0), b.buf[0] = '\0';
    if (lenp)
        *lenp = b.len;
    return b.buf;
}

char *bt_read_file(const char *path, size_t maxlen, size_t *lenp)
{
    FILE *f = fopen(path, "rb");
    struct stat st;
    if (f && fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        errno = EISDIR; /* "Is a directory", not the read's "Input/output error" */
        return NULL;
    }
    return f ? read_stream(f, maxlen, lenp) : NULL;
}

char *bt_read_regular_file(const char *path, size_t maxlen, size_t *lenp)
{
    /* O_NONBLOCK: opening a FIFO planted at the path returns at once */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return NULL;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0) {
        close(fd);
        errno = EINVAL;
        return NULL;
    }
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        close(fd);
        return NULL;
    }
    return read_stream(f, maxlen, lenp);
}

void bt_outset_init(struct bt_outset *s, const char *dir)
{
    *s = (struct bt_outset){.dir = bt_xstrdup(dir)};
}

static const char *kind_of(mode_t m)
{
    return S_ISFIFO(m) ? "a FIFO" : S_ISLNK(m) ? "a symbolic link" : S_ISDIR(m) ? "a directory"
         : S_ISSOCK(m) ? "a socket" : S_ISCHR(m) || S_ISBLK(m) ? "a device" : "not a regular file";
}

/* The final name may be replaced: absent, or a regular file (never followed). */
static bool replaceable(const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (lstat(path, &st) != 0) {
        if (errno == ENOENT)
            return true;
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return false;
    }
    if (S_ISREG(st.st_mode))
        return true;
    snprintf(err, errlen, "%s exists and is %s, not a regular file; remove it or give another -o DIR",
             path, kind_of(st.st_mode));
    return false;
}

bool bt_outset_add(struct bt_outset *s, const char *name, const void *data, size_t len, char *err,
                   size_t errlen)
{
    struct bt_buf final = {0}, tmp = {0};
    bt_buf_printf(&final, "%s/%s", s->dir, name);
    bt_buf_printf(&tmp, "%s/.%s.XXXXXX", s->dir, name);
    bool ok = replaceable(bt_buf_str(&final), err, errlen);
    int fd = ok ? mkstemp(tmp.buf) : -1; /* O_CREAT|O_EXCL, mode 0600: a new regular file */
    if (ok && fd < 0) {
        snprintf(err, errlen, "%s: %s", bt_buf_str(&tmp), strerror(errno));
        ok = false;
    }
    if (fd >= 0) {
        s->f = bt_xrealloc(s->f, (size_t)(s->n + 1) * sizeof *s->f);
        s->f[s->n++] = (struct bt_outfile){.name = bt_xstrdup(name), .tmp = bt_xstrdup(tmp.buf)};
        const char *p = data;
        for (size_t left = len; ok && left;) {
            ssize_t w = write(fd, p, left);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0) {
                snprintf(err, errlen, "%s: %s", bt_buf_str(&final), w < 0 ? strerror(errno) : "short write");
                ok = false;
                break;
            }
            p += w;
            left -= (size_t)w;
        }
        if (ok && fsync(fd) != 0 && errno != EINVAL) {
            snprintf(err, errlen, "%s: %s", bt_buf_str(&final), strerror(errno));
            ok = false;
        }
        if (close(fd) != 0 && ok) {
            snprintf(err, errlen, "%s: %s", bt_buf_str(&final), strerror(errno));
            ok = false;
        }
    }
    bt_buf_free(&final);
    bt_buf_free(&tmp);
    return ok;
}

bool bt_outset_commit(struct bt_outset *s, char *err, size_t errlen)
{
    struct bt_buf final = {0};
    bool ok = true;
    for (int i = 0; ok && i < s->n; i++) { /* all checked again before any is renamed */
        bt_buf_reset(&final);
        bt_buf_printf(&final, "%s/%s", s->dir, s->f[i].name);
        ok = replaceable(bt_buf_str(&final), err, errlen);
    }
    for (int i = 0; ok && i < s->n; i++) {
        bt_buf_reset(&final);
        bt_buf_printf(&final, "%s/%s", s->dir, s->f[i].name);
        if (rename(s->f[i].tmp, bt_buf_str(&final)) != 0) {
            snprintf(err, errlen, "%s: %s", bt_buf_str(&final), strerror(errno));
            ok = false;
            break;
        }
        free(s->f[i].tmp);
        s->f[i].tmp = NULL;
    }
    bt_buf_free(&final);
    return ok;
}

void bt_outset_free(struct bt_outset *s)
{
    for (int i = 0; i < s->n; i++) {
        if (s->f[i].tmp)
            unlink(s->f[i].tmp);
        free(s->f[i].tmp);
        free(s->f[i].name);
    }
    free(s->f);
    free(s->dir);
    *s = (struct bt_outset){0};
}

bool bt_home_dir(char *out, size_t n)
{
    const char *h = getenv("HOME");
    if (!h || h[0] != '/') {
        struct passwd *pw = getpwuid(getuid());
        h = pw ? pw->pw_dir : NULL;
    }
    if (!h || h[0] != '/')
        return false;
    return bt_strlcpy_cut(out, h, n);
}

bool bt_xdg_dir(const char *xdg_var, const char *home_sub, char *out, size_t n)
{
    const char *x = getenv(xdg_var);
    if (x && x[0] == '/')
        return bt_strlcpy_cut(out, x, n);
    char home[900];
    if (!bt_home_dir(home, sizeof home))
        return false;
    int w = snprintf(out, n, "%s/%s", home, home_sub);
    return w > 0 && (size_t)w < n;
}

bool bt_cache_file(const char *name, bool make_dir, char *out, size_t n)
{
    char base[880], dir[900];
    if (!bt_xdg_dir("XDG_CACHE_HOME", ".cache", base, sizeof base)) /* never the cwd */
        return false;
    if (snprintf(dir, sizeof dir, "%s/bedtop", base) >= (int)sizeof dir)
        return false;
    /* the base too (a fresh $HOME has no .cache): 0700, as bedtop's own directory */
    if (make_dir && ((mkdir(base, 0700) != 0 && errno != EEXIST) ||
                     (mkdir(dir, 0700) != 0 && errno != EEXIST)))
        return false;
    int w = snprintf(out, n, "%s/%s", dir, name);
    return w > 0 && (size_t)w < n;
}

bool bt_write_private_file(const char *path, const void *data, size_t len, bool sync)
{
    size_t n = strlen(path) + 8;
    char *tmp = bt_xmalloc(n);
    snprintf(tmp, n, "%s.XXXXXX", path);
    int fd = mkstemp(tmp);
    bool ok = fd >= 0;
    if (ok)
        fcntl(fd, F_SETFD, FD_CLOEXEC);
    const char *p = data;
    for (size_t off = 0; ok && off < len;) {
        ssize_t w = write(fd, p + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = EIO;
            ok = false;
            break;
        }
        off += (size_t)w;
    }
    if (ok && sync && fsync(fd) != 0)
        ok = false;
    if (fd >= 0 && close(fd) != 0)
        ok = false;
    if (ok && rename(tmp, path) != 0)
        ok = false;
    if (!ok && fd >= 0) {
        int e = errno;
        unlink(tmp);
        errno = e;
    }
    free(tmp);
    return ok;
}

bool bt_exe_dir(char *out, size_t n)
{
    char exe[1024];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0)
        return false;
    exe[len] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash)
        *slash = '\0';
    bt_strlcpy(out, exe, n);
    return true;
}

bool bt_data_path(const char *file, char *out, size_t n)
{
    char exe[1024], d1[1100] = "", d2[1100] = "";
    if (bt_exe_dir(exe, sizeof exe)) {
        snprintf(d1, sizeof d1, "%s/data", exe);
        snprintf(d2, sizeof d2, "%s/../data", exe);
    }
    const char *cands[] = {getenv("BEDTOP_DATADIR"), d1, d2, BEDTOP_DATADIR};
    for (size_t i = 0; i < BT_ARRAY_LEN(cands); i++) {
        if (!cands[i] || !*cands[i])
            continue;
        snprintf(out, n, "%s/%s", cands[i], file);
        if (access(out, R_OK) == 0)
            return true;
    }
    return false;
}

bool bt_parse_kv_file(const char *path, const char *expect, bt_kv_fn line, void *arg, char *err,
                      size_t errlen)
{
    char *text = bt_read_file(path, 1 << 20, NULL);
    if (!text) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return false;
    }
    bool ok = bt_parse_kv_lines(text, path, expect, line, arg, err, errlen);
    free(text);
    return ok;
}

/* One line on stderr, whatever the message carries: outside strings (a file
 * name, a server's error text, a ModelId) go through the terminal sanitiser, so
 * no escape sequence and no newline reaches the terminal. */
void bt_err(const char *fmt, ...)
{
    struct bt_buf msg = {0}, line = {0};
    va_list ap;
    va_start(ap, fmt);
    bt_buf_vprintf(&msg, fmt, ap);
    va_end(ap);
    bt_buf_puts(&line, "bedtop: ");
    bt_san_term_buf(&line, bt_buf_str(&msg), false);
    bt_buf_putc(&line, '\n');
    fputs(line.buf, stderr);
    bt_buf_free(&msg);
    bt_buf_free(&line);
}

void bt_oom_say(void)
{
    fputs("bedtop: out of memory\n", stderr); /* allocates nothing: stderr is unbuffered */
}
