#include "core/util.h"
#include "core/error.h"
#include "core/format.h"
#include "core/plausible.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Out of memory: core writes nowhere (it only computes), so what says it is the
 * program's hook; then exit 3 (bt_status_exit's UNKNOWN), hook or none. */
static bt_oom_fn oom_say;

void bt_set_oom_hook(bt_oom_fn say)
{
    oom_say = say;
}

_Noreturn void bt_out_of_memory(void)
{
    if (oom_say)
        oom_say();
    exit(3);
}

void *bt_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        bt_out_of_memory();
    return p;
}

void *bt_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        bt_out_of_memory();
    return p;
}

void *bt_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        bt_out_of_memory();
    return q;
}

char *bt_xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = bt_xmalloc(n);
    memcpy(d, s, n);
    return d;
}

size_t bt_strlcpy(char *dst, const char *src, size_t dstsize)
{
    size_t n = strlen(src);
    if (dstsize) {
        size_t c = n < dstsize - 1 ? n : dstsize - 1;
        /* a cut falls on a character boundary: never half a UTF-8 sequence, which
         * cairo (the charts) and JSON readers refuse */
        if (c < n)
            while (c > 0 && ((unsigned char)src[c] & 0xC0) == 0x80)
                c--;
        memcpy(dst, src, c);
        dst[c] = '\0';
    }
    return n;
}

bool bt_strlcpy_cut(char *dst, const char *src, size_t dstsize)
{
    size_t n = strlen(src);
    if (!dstsize)
        return n == 0;
    if (n < dstsize) {
        memcpy(dst, src, n + 1);
        return true;
    }
    /* cut on a character boundary, leaving room for the mark */
    size_t c = dstsize > 4 ? dstsize - 4 : 0;
    while (c > 0 && ((unsigned char)src[c] & 0xC0) == 0x80)
        c--;
    memcpy(dst, src, c);
    bt_strlcpy(dst + c, "...", dstsize - c);
    return false;
}

bool bt_fmt_cut(char *dst, size_t dstsize, const char *fmt, ...)
{
    /* one vsnprintf into a stack buffer for the common short text; the heap (and a
     * second pass) only for a longer one */
    char small[512];
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n < sizeof small) {
        va_end(ap2);
        return bt_strlcpy_cut(dst, small, dstsize);
    }
    struct bt_buf b = {0};
    bt_buf_vprintf(&b, fmt, ap2);
    va_end(ap2);
    bool fit = bt_strlcpy_cut(dst, bt_buf_str(&b), dstsize);
    bt_buf_free(&b);
    return fit;
}

void bt_buf_reserve(struct bt_buf *b, size_t extra)
{
    if (b->len + extra + 1 <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + extra + 1)
        cap *= 2;
    b->buf = bt_xrealloc(b->buf, cap);
    b->cap = cap;
}

void bt_buf_add(struct bt_buf *b, const void *data, size_t n)
{
    bt_buf_reserve(b, n);
    memcpy(b->buf + b->len, data, n);
    b->len += n;
    b->buf[b->len] = '\0';
}

void bt_buf_puts(struct bt_buf *b, const char *s)
{
    bt_buf_add(b, s, strlen(s));
}

void bt_buf_putc(struct bt_buf *b, char c)
{
    bt_buf_add(b, &c, 1);
}

void bt_buf_vprintf(struct bt_buf *b, const char *fmt, va_list ap)
{
    if (!fmt)
        return;
    /* formatted once into the room the buffer has; a second time only when it did
     * not fit (a sample line was formatted twice, once to measure it) */
    va_list ap2;
    va_copy(ap2, ap);
    size_t room = b->cap > b->len ? b->cap - b->len : 0;
    int n = vsnprintf(room ? b->buf + b->len : NULL, room, fmt, ap2);
    va_end(ap2);
    if (n < 0) {
        if (room)
            b->buf[b->len] = '\0';
        return;
    }
    if ((size_t)n >= room) {
        bt_buf_reserve(b, (size_t)n);
        vsnprintf(b->buf + b->len, (size_t)n + 1, fmt, ap);
    }
    b->len += (size_t)n;
}

void bt_buf_printf(struct bt_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    bt_buf_vprintf(b, fmt, ap);
    va_end(ap);
}

/* "%.0f" of v where |v| < 1e15, ending just before end (24 bytes before it); NULL
 * beyond (NaN, infinite, huge: printf's own digits) */
static char *fixed0_before(char *end, double v)
{
    if (!(fabs(v) < 1e15))
        return NULL;
    double w = nearbyint(v); /* the default rounding: to nearest, ties to even, as printf */
    char *p = bt_fmt_int_before(end, (long long)w);
    if (w == 0 && signbit(w))
        *--p = '-'; /* "-0", as printf */
    return p;
}

void bt_buf_fixed0(struct bt_buf *b, double v)
{
    char t[24];
    char *p = fixed0_before(t + sizeof t, v);
    if (p)
        bt_buf_add(b, p, (size_t)(t + sizeof t - p));
    else
        bt_buf_printf(b, "%.0f", v);
}

char *bt_fmt_fixed0(double v, char *out, size_t n)
{
    char t[24];
    char *p = fixed0_before(t + sizeof t, v);
    size_t len = p ? (size_t)(t + sizeof t - p) : 0;
    if (!p || len >= n) {
        snprintf(out, n, "%.0f", v);
        return out;
    }
    memcpy(out, p, len);
    out[len] = '\0';
    return out;
}

void bt_buf_reset(struct bt_buf *b)
{
    b->len = 0;
    if (b->buf)
        b->buf[0] = '\0';
}

void bt_buf_free(struct bt_buf *b)
{
    free(b->buf);
    b->buf = NULL;
    b->len = b->cap = 0;
}

void bt_buf_json_str(struct bt_buf *b, const char *s)
{
    bt_buf_putc(b, '"');
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        const unsigned char *q = p; /* a run that needs no escape, appended at once */
        while (*q && *q != '"' && *q != '\\' && *q >= 0x20)
            q++;
        if (q > p)
            bt_buf_add(b, p, (size_t)(q - p));
        if (!*q)
            break;
        if (*q == '"' || *q == '\\') {
            char e[2] = {'\\', (char)*q};
            bt_buf_add(b, e, 2);
        } else {
            bt_buf_printf(b, "\\u%04x", *q);
        }
        p = q + 1;
    }
    bt_buf_putc(b, '"');
}

char *bt_fmt_int_before(char *end, long long v)
{
    char *p = end;
    unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        *--p = '-';
    return p;
}

void bt_buf_put_int(struct bt_buf *b, long long v)
{
    char tmp[24];
    char *p = bt_fmt_int_before(tmp + sizeof tmp, v);
    bt_buf_add(b, p, (size_t)(tmp + sizeof tmp - p));
}

const char *bt_buf_str(struct bt_buf *b)
{
    return b->buf ? b->buf : "";
}

int64_t bt_minute_floor(int64_t t)
{
    int64_t m = t / 60;
    if (t < 0 && t % 60)
        m--;
    return m * 60;
}

bool bt_time_from_double(double v, int64_t *out)
{
    return bt_f2i(v, 0, (int64_t)BT_TIME_MAX, out); /* the one checked conversion */
}

/* gmtime_r fails past year 2^31 (a time from outside): "?" rather than garbage */
static void fmt_utc(int64_t t, const char *fmt, char *out, size_t n)
{
    time_t tt = (time_t)t;
    struct tm tm;
    if (n && (!gmtime_r(&tt, &tm) || !strftime(out, n, fmt, &tm)))
        snprintf(out, n, "?");
}

void bt_fmt_iso(int64_t t, char *out, size_t n)
{
    fmt_utc(t, "%Y-%m-%dT%H:%M:%SZ", out, n);
}

void bt_fmt_hhmm(int64_t t, char *out, size_t n)
{
    fmt_utc(t, "%H:%M", out, n);
}

/* Days from civil date (Howard Hinnant's algorithm): no timegm() needed. */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

/* n decimal digits at *p: their value (p moves past them), or -1. Every field
 * of an ISO time is followed by a separator or the end, so more digits fail there. */
static int digits(const char **p, int n)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (!isdigit((unsigned char)(*p)[i]))
            return -1;
        v = v * 10 + ((*p)[i] - '0');
    }
    *p += n;
    return v;
}

static int days_in_month(int y, int m)
{
    static const int d[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return m == 2 && leap ? 29 : d[m - 1];
}

/* Strict: YYYY-MM-DD, then optionally T (or a blank) HH:MM[:SS[.fraction]], then
 * optionally Z or a UTC offset +HH:MM, +HHMM or +HH. A real calendar day, every
 * field its width, nothing after it. No zone is UTC. */
bool bt_parse_iso(const char *s, int64_t *out)
{
    const char *p = s;
    int Y = digits(&p, 4);
    if (Y < 0 || *p++ != '-')
        return false;
    int M = digits(&p, 2);
    if (M < 1 || M > 12 || *p++ != '-')
        return false;
    int D = digits(&p, 2);
    if (D < 1 || D > days_in_month(Y, M))
        return false;
    int h = 0, mi = 0, sec = 0;
    if (*p == 'T' || *p == 't' || *p == ' ') {
        p++;
        h = digits(&p, 2);
        if (h < 0 || h > 23 || *p++ != ':')
            return false;
        mi = digits(&p, 2);
        if (mi < 0 || mi > 59)
            return false;
        if (*p == ':') {
            p++;
            sec = digits(&p, 2);
            if (sec < 0 || sec > 60) /* 60: a leap second */
                return false;
            if (*p == '.' || *p == ',') {
                p++;
                if (!isdigit((unsigned char)*p))
                    return false;
                while (isdigit((unsigned char)*p))
                    p++;
            }
        }
    }
    int64_t t = days_from_civil(Y, (unsigned)M, (unsigned)D) * 86400 + h * 3600 + mi * 60 + sec;
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int sign = *p++ == '-' ? -1 : 1;
        int oh = digits(&p, 2), om = 0;
        if (oh < 0 || oh > 23)
            return false;
        if (*p == ':') {
            p++;
            om = digits(&p, 2);
            if (om < 0)
                return false;
        } else if (isdigit((unsigned char)*p)) {
            om = digits(&p, 2); /* +0530 */
        }
        if (om < 0 || om > 59)
            return false;
        t -= sign * (oh * 3600 + om * 60);
    }
    if (*p)
        return false;
    *out = t;
    return true;
}

bool bt_parse_duration(const char *s, double *out)
{
    /* digits with an optional fraction, then an optional unit: no sign, no
     * exponent, no hex, no inf/nan, nothing around it (strtod takes all those) */
    const char *p = s;
    bool any = false;
    while (isdigit((unsigned char)*p))
        p++, any = true;
    if (*p == '.')
        for (p++; isdigit((unsigned char)*p); p++)
            any = true;
    if (!any)
        return false;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end != p || errno || !isfinite(v))
        return false;
    double mul = 1;
    if (*end == 's')
        end++;
    else if (*end == 'm')
        mul = 60, end++;
    else if (*end == 'h')
        mul = 3600, end++;
    else if (*end == 'd')
        mul = 86400, end++;
    if (*end)
        return false;
    v *= mul;
    if (!(v <= BT_DURATION_MAX)) /* callers make int64_t seconds of it */
        return false;
    *out = v;
    return true;
}

void bt_fmt_si(double v, char *out, size_t n)
{
    bt_fmt_tokens(v, out, n); /* one formatter per figure: core/format.h */
}

/* The value sorted order puts at index i of v[0 .. k), the smaller ones left before it
 * (a selection, in place: Hoare's partition about a median of three). */
static double select_nth(double *v, int k, int i)
{
    int lo = 0, hi = k - 1;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        double a = v[lo], b = v[mid], c = v[hi];
        double pv = a < b ? (b < c ? b : a < c ? c : a) : (a < c ? a : b < c ? c : b);
        int l = lo, h = hi;
        while (l <= h) {
            while (v[l] < pv)
                l++;
            while (v[h] > pv)
                h--;
            if (l <= h) {
                double x = v[l];
                v[l++] = v[h];
                v[h--] = x;
            }
        }
        if (i <= h)
            hi = h;
        else if (i >= l)
            lo = l;
        else
            break; /* h < i < l: v[i] is the pivot's value */
    }
    return v[i];
}

double bt_median(double *v, int k)
{
    if (k <= 0)
        return NAN;
    double hi = select_nth(v, k, k / 2);
    if (k % 2)
        return hi;
    double lo = v[0]; /* the largest of those before it: the lower middle value */
    for (int i = 1; i < k / 2; i++)
        if (v[i] > lo)
            lo = v[i];
    return (lo + hi) / 2;
}

bool bt_parse_double(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno || !isfinite(v))
        return false;
    while (isspace((unsigned char)*end))
        end++;
    if (*end)
        return false;
    *out = v;
    return true;
}

bool bt_parse_long(const char *s, long min, long max, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || errno || *end || v < min || v > max)
        return false;
    *out = v;
    return true;
}

/* The query with every value (and every bare name, which may be a token) as ***. */
static void redact_query(struct bt_buf *b, const char *q, size_t len)
{
    bt_buf_putc(b, '?');
    for (size_t i = 0; i < len;) {
        size_t plen = 0;
        while (i + plen < len && q[i + plen] != '&')
            plen++;
        const char *eq = memchr(q + i, '=', plen);
        if (eq)
            bt_buf_add(b, q + i, (size_t)(eq - (q + i)) + 1);
        if (plen)
            bt_buf_puts(b, "***");
        i += plen;
        if (i < len) {
            bt_buf_putc(b, '&');
            i++;
        }
    }
}

/* The authority is found as curl finds it (net/url.c parses every URL bedtop sends with
 * curl's own URL API): after the scheme and ANY number of slashes (curl takes "http:/u:p@h" and
 * "http:///u:p@h" as Basic auth), up to the first / ? or #; its last @ ends the user part
 * (a backslash is part of it, as curl reads "http:/\\@h": user "\\"). */
void bt_url_redact(const char *url, char *out, size_t n)
{
    if (!n)
        return;
    size_t i = 0;
    if (isalpha((unsigned char)url[0])) {
        size_t k = 1;
        while (isalnum((unsigned char)url[k]) || url[k] == '+' || url[k] == '-' || url[k] == '.')
            k++;
        if (url[k] == ':')
            i = k + 1;
    }
    while (url[i] == '/')
        i++;
    const char *host = url + i;
    size_t hostlen = strcspn(host, "/?#");
    const char *at = NULL;
    for (size_t k = 0; k < hostlen; k++)
        if (host[k] == '@')
            at = host + k; /* the last one */
    struct bt_buf b = {0};
    bt_buf_add(&b, url, i);
    const char *rest = host;
    if (at) {
        const char *colon = memchr(host, ':', (size_t)(at - host));
        if (colon) {
            bt_buf_add(&b, host, (size_t)(colon - host));
            bt_buf_puts(&b, ":***@");
        } else {
            bt_buf_puts(&b, "***@");
        }
        rest = at + 1;
    }
    size_t upto = strcspn(rest, "?#");
    bt_buf_add(&b, rest, upto);
    if (rest[upto] == '?')
        redact_query(&b, rest + upto + 1, strcspn(rest + upto + 1, "#"));
    bt_strlcpy_cut(out, bt_buf_str(&b), n);
    bt_buf_free(&b);
}

int bt_first_long_line(const char *text, size_t max)
{
    int line = 1;
    for (const char *p = text;; line++) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        if (n > max)
            return line;
        if (!nl)
            return 0;
        p = nl + 1;
    }
}

char *bt_trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

bool bt_streq_nocase(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return false;
    return *a == *b;
}

bool bt_parse_kv_lines(const char *text, const char *name, const char *expect, bt_kv_fn line,
                       void *arg, char *err, size_t errlen)
{
    int lineno = 0;
    const char *p = text;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        char buf[512];
        lineno++;
        if (n >= sizeof buf) {
            snprintf(err, errlen, "%s:%d: line too long", name, lineno);
            return false;
        }
        memcpy(buf, p, n);
        buf[n] = '\0';
        p += n + (nl ? 1 : 0);
        char *s = bt_trim(buf);
        if (!*s || *s == '#' || *s == ';')
            continue;
        char *eq = strchr(s, '=');
        if (!eq) {
            snprintf(err, errlen, "%s:%d: expected '%s'", name, lineno, expect);
            return false;
        }
        *eq = '\0';
        if (!line(arg, bt_trim(s), bt_trim(eq + 1), name, lineno, err, errlen))
            return false;
    }
    return true;
}

const char *bt_errkind_name(enum bt_errkind k)
{
    static const char *const names[BT_ERR_COUNT] = {
        [BT_ERR_NONE] = "none",
        [BT_ERR_CREDENTIALS] = "credentials",
        [BT_ERR_ACCESS] = "access",
        [BT_ERR_REGION] = "region",
        [BT_ERR_NETWORK] = "network",
        [BT_ERR_THROTTLED] = "throttled",
        [BT_ERR_PARSE] = "parse",
        [BT_ERR_SERVICE] = "service",
        [BT_ERR_REQUEST] = "request",
    };
    return (unsigned)k < BT_ERR_COUNT ? names[k] : "unknown";
}
