/* serve's HTTP message helpers that hold no connection: content negotiation (Accept,
 * Accept-Encoding), the gzip coding, and the validators of conditional requests
 * (HTTP dates, ETags: RFC 9110 8.8, 13.1). */
#include "net/httpd.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

/* The q-value of media type `type` in an Accept-like header, -1 when absent. */
static double qvalue(const char *h, const char *type)
{
    double best = -1;
    size_t tl = strlen(type);
    const char *p = h;
    while (*p) {
        while (*p == ' ' || *p == ',')
            p++;
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n >= tl && strncasecmp(p, type, tl) == 0 &&
            (n == tl || p[tl] == ';' || p[tl] == ' ')) {
            double q = 1;
            for (const char *qp = strchr(p, ';'); qp && qp < p + n; qp = strchr(qp, ';')) {
                qp++;
                while (*qp == ' ')
                    qp++;
                if (qp[0] == 'q' && qp[1] == '=')
                    q = strtod(qp + 2, NULL);
            }
            if (q > best)
                best = q;
        }
        p += n;
    }
    return best;
}

bool bt_httpd_wants_openmetrics(const char *accept)
{
    double om = qvalue(accept, "application/openmetrics-text");
    double text = qvalue(accept, "text/plain");
    return om > 0 && om >= text;
}

bool bt_httpd_accepts_gzip(const char *ae)
{
    return qvalue(ae, "gzip") > 0;
}

bool bt_gzip(const char *in, size_t len, struct bt_buf *out)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return false;
    uLong bound = deflateBound(&z, (uLong)len);
    bt_buf_reserve(out, bound + 1);
    z.next_in = (Bytef *)(uintptr_t)in;
    z.avail_in = (uInt)len;
    z.next_out = (Bytef *)out->buf + out->len;
    z.avail_out = (uInt)bound;
    int r = deflate(&z, Z_FINISH);
    if (r == Z_STREAM_END)
        out->len += z.total_out;
    deflateEnd(&z);
    return r == Z_STREAM_END;
}

struct bt_gzip {
    z_stream z;
    bool ok;
};

struct bt_gzip *bt_gzip_new(void)
{
    struct bt_gzip *g = bt_xcalloc(1, sizeof *g);
    if (deflateInit2(&g->z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        free(g);
        return NULL;
    }
    g->ok = true;
    return g;
}

/* Deflates in (flush: Z_NO_FLUSH or Z_FINISH) onto out, growing it as needed. */
static bool gzip_run(struct bt_gzip *g, const char *in, size_t len, int flush, struct bt_buf *out)
{
    if (!g->ok)
        return false;
    g->z.next_in = (Bytef *)(uintptr_t)in;
    g->z.avail_in = (uInt)len;
    for (;;) {
        /* room for what this piece can become (deflateBound of the piece, at least 4 kB) */
        size_t room = len / 2 + 4096;
        bt_buf_reserve(out, room + 1);
        g->z.next_out = (Bytef *)out->buf + out->len;
        g->z.avail_out = (uInt)room;
        int r = deflate(&g->z, flush);
        out->len += room - g->z.avail_out;
        out->buf[out->len] = '\0';
        if (r == Z_STREAM_END)
            return true;
        if (r != Z_OK && r != Z_BUF_ERROR) {
            g->ok = false;
            return false;
        }
        /* all taken, and room was left: nothing more to come out before the next piece */
        if (flush == Z_NO_FLUSH && g->z.avail_in == 0 && g->z.avail_out > 0)
            return true;
    }
}

bool bt_gzip_write(struct bt_gzip *g, const char *in, size_t len, struct bt_buf *out)
{
    return g && gzip_run(g, in, len, Z_NO_FLUSH, out);
}

bool bt_gzip_end(struct bt_gzip *g, struct bt_buf *out)
{
    if (!g)
        return false;
    bool ok = gzip_run(g, "", 0, Z_FINISH, out);
    deflateEnd(&g->z);
    free(g);
    return ok;
}

bool bt_gunzip(const char *in, size_t len, struct bt_buf *out)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, 15 + 16) != Z_OK)
        return false;
    z.next_in = (Bytef *)(uintptr_t)in;
    z.avail_in = (uInt)len;
    int r = Z_OK;
    while (r == Z_OK) {
        size_t room = len * 4 + 4096; /* a body of labels inflates ~30 times: a few rounds */
        bt_buf_reserve(out, room + 1);
        z.next_out = (Bytef *)out->buf + out->len;
        z.avail_out = (uInt)room;
        r = inflate(&z, Z_NO_FLUSH);
        out->len += room - z.avail_out;
        out->buf[out->len] = '\0';
        if (r == Z_BUF_ERROR && z.avail_in > 0)
            r = Z_OK; /* out of room only: another round */
    }
    inflateEnd(&z);
    return r == Z_STREAM_END && z.avail_in == 0;
}

static const char *const months[12] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                       "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

void bt_httpd_fmt_date(int64_t t, char *out, size_t n)
{
    static const char *const days[7] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
    time_t tt = (time_t)t;
    struct tm tm;
    if (!gmtime_r(&tt, &tm)) {
        snprintf(out, n, "Thu, 01 Jan 1970 00:00:00 GMT");
        return;
    }
    snprintf(out, n, "%s, %02d %s %04d %02d:%02d:%02d GMT", days[tm.tm_wday], tm.tm_mday,
             months[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

/* Reads a number of 1..maxd digits at *p (exactly maxd when exact). -1: none. */
static int digits(const char **p, int maxd, bool exact)
{
    int v = 0, k = 0;
    while (k < maxd && isdigit((unsigned char)**p)) {
        v = v * 10 + (**p - '0');
        (*p)++;
        k++;
    }
    return k == 0 || (exact && k != maxd) ? -1 : v;
}

static int month_of(const char **p)
{
    for (int m = 0; m < 12; m++)
        if (!strncmp(*p, months[m], 3)) {
            *p += 3;
            return m;
        }
    return -1;
}

/* One field each, for a date read as a chain of fields: false where it does not fit. */
static bool lit(const char **p, char c)
{
    return *(*p)++ == c;
}

static bool num(const char **p, int n, bool exact, int *out)
{
    *out = digits(p, n, exact);
    return *out >= 0;
}

static bool mon(const char **p, int *out)
{
    *out = month_of(p);
    return *out >= 0;
}

/* "HH:MM:SS" */
static bool hms(const char **p, struct tm *tm)
{
    tm->tm_hour = digits(p, 2, true);
    if (tm->tm_hour < 0 || *(*p)++ != ':')
        return false;
    tm->tm_min = digits(p, 2, true);
    if (tm->tm_min < 0 || *(*p)++ != ':')
        return false;
    tm->tm_sec = digits(p, 2, true);
    return tm->tm_sec >= 0 && tm->tm_hour < 24 && tm->tm_min < 60 && tm->tm_sec < 61;
}

/* A parsed date in Unix seconds; -1 for a day past 31 or a year before 1970 (nothing
 * bedtop served was modified then: such a date is no validator to compare). */
static int64_t checked(struct tm *tm)
{
    if (tm->tm_mday < 1 || tm->tm_mday > 31 || tm->tm_year < 70)
        return -1;
    return (int64_t)timegm(tm);
}

int64_t bt_httpd_parse_date(const char *s)
{
    struct tm tm = {0};
    const char *p = s;
    while (isalpha((unsigned char)*p)) /* the day name: not checked against the date */
        p++;
    if (p - s < 3)
        return -1;
    if (*p == ',' && p - s == 3) { /* IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT */
        p++;
        if (!lit(&p, ' ') || !num(&p, 2, true, &tm.tm_mday) || !lit(&p, ' ') ||
            !mon(&p, &tm.tm_mon) || !lit(&p, ' ') || !num(&p, 4, true, &tm.tm_year) ||
            !lit(&p, ' ') || !hms(&p, &tm))
            return -1;
        tm.tm_year -= 1900;
    } else if (*p == ',') { /* RFC 850: Sunday, 06-Nov-94 08:49:37 GMT */
        p++;
        if (!lit(&p, ' ') || !num(&p, 2, true, &tm.tm_mday) || !lit(&p, '-') ||
            !mon(&p, &tm.tm_mon) || !lit(&p, '-') || !num(&p, 2, true, &tm.tm_year) ||
            !lit(&p, ' ') || !hms(&p, &tm))
            return -1;
        if (tm.tm_year < 70) /* two-digit years: RFC 9110 5.6.7's 50-year rule, simplified */
            tm.tm_year += 100;
    } else if (*p == ' ' && p - s == 3) { /* asctime: Sun Nov  6 08:49:37 1994 */
        p++;
        if (!mon(&p, &tm.tm_mon) || !lit(&p, ' '))
            return -1;
        if (*p == ' ')
            p++;
        if (!num(&p, 2, false, &tm.tm_mday) || !lit(&p, ' ') || !hms(&p, &tm) ||
            !lit(&p, ' ') || !num(&p, 4, true, &tm.tm_year))
            return -1;
        tm.tm_year -= 1900;
        return *p ? -1 : checked(&tm);
    } else {
        return -1;
    }
    if (strcmp(p, " GMT") != 0)
        return -1;
    return checked(&tm);
}

bool bt_httpd_etag_matches(const char *inm, const char *etag)
{
    size_t el = strlen(etag);
    for (const char *p = inm; *p;) {
        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        if (*p == '*')
            return true;
        if (!strncmp(p, "W/", 2)) /* weak comparison: W/"x" matches "x" */
            p += 2;
        if (*p != '"')
            return false; /* not a list of entity tags: no match */
        const char *end = strchr(p + 1, '"');
        if (!end)
            return false;
        size_t n = (size_t)(end + 1 - p);
        if (n == el && !memcmp(p, etag, n))
            return true;
        p = end + 1;
    }
    return false;
}

