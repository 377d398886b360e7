/* The poll-line scanner of the recording reader (see core/recfmt.h). */
#include "core/recfmt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/plausible.h"
#include "core/util.h"

bool bt_rec_time(double t, int64_t *out)
{
    return bt_f2i(t, -999999999999999, 999999999999999, out);
}

bool bt_rec_time_ok(double t)
{
    int64_t i;
    return bt_rec_time(t, &i);
}

#define SCAN_DEPTH 1000      /* cJSON's nesting limit */

static const char *skip_ws(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    return p;
}

/* [0-9+-eE.]: one shift of a mask for the ASCII below 128 (the byte after every
 * number of a recording is tested: ',' or ']' nearly always) */
static inline bool num_char(char c)
{
    static const uint64_t lo = 1ull << '+' | 1ull << '-' | 1ull << '.' | 0x3ffull << '0';
    static const uint64_t hi = 1ull << ('E' - 64) | 1ull << ('e' - 64);
    unsigned u = (unsigned char)c;
    return u < 64 ? (lo >> u) & 1 : u < 128 ? (hi >> (u - 64)) & 1 : false;
}

/* scan_number's way for what is not a plain decimal of up to 15 digits: the run of
 * [0-9+-eE.] (at most 63 bytes) given to strtod; out of line, so the plain way saves
 * no registers for it */
__attribute__((noinline, cold)) static const char *scan_number_strtod(const char *p, double *out)
{
    char buf[64];
    size_t n = 0;
    while (n < sizeof buf - 1 && num_char(p[n]))
        n++;
    memcpy(buf, p, n);
    buf[n] = '\0';
    char *end;
    *out = strtod(buf, &end);
    return end == buf ? NULL : p + (end - buf);
}

/* A number as cJSON reads one: the run of [0-9+-eE.] (at most 63 bytes) given to
 * strtod. Plain decimals of up to 15 digits take Clinger's fast path instead
 * (an exact mantissa divided by an exact power of ten rounds once, as strtod).
 * A recording is mostly numbers of a few digits: each digit is one compare (the
 * loops end at 16 digits by pointer), 35 % of opening one before. */
static inline const char *scan_number(const char *p, double *out)
{
    static const double pow10[] = {1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7,
                                   1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
    if (*p != '-' && (unsigned char)(*p - '0') > 9)
        return NULL;
    const char *q = p + (*p == '-'), *first = q;
    uint64_t v = 0;
    for (; q < first + 16; q++) {
        unsigned d = (unsigned)(unsigned char)*q - '0';
        if (d > 9)
            break;
        v = v * 10 + d;
    }
    int digits = (int)(q - first), frac = 0;
    if (*q == '.' && digits && (unsigned char)(q[1] - '0') < 10) {
        const char *f = ++q;
        for (; q < f + (16 - digits); q++) {
            unsigned d = (unsigned)(unsigned char)*q - '0';
            if (d > 9)
                break;
            v = v * 10 + d;
        }
        frac = (int)(q - f);
        digits += frac;
    }
    if (digits && digits <= 15 && !num_char(*q)) {
        double x = (double)v / pow10[frac];
        *out = *p == '-' ? -x : x;
        return q;
    }
    return scan_number_strtod(p, out);
}

static const char *skip_string(const char *p)
{
    if (*p != '"')
        return NULL;
    for (p++; *p && *p != '"'; p++)
        if (*p == '\\' && !*++p)
            return NULL;
    return *p == '"' ? p + 1 : NULL;
}

/* Any JSON value; NULL when it is not one. */
static const char *skip_value(const char *p, int depth)
{
    double d;
    p = skip_ws(p);
    if (depth > SCAN_DEPTH)
        return NULL;
    switch (*p) {
    case '"':
        return skip_string(p);
    case '[':
    case '{': {
        char close = *p == '[' ? ']' : '}';
        p = skip_ws(p + 1);
        if (*p == close)
            return p + 1;
        for (;;) {
            if (close == '}') {
                p = skip_string(skip_ws(p));
                if (!p)
                    return NULL;
                p = skip_ws(p);
                if (*p != ':')
                    return NULL;
                p++;
            }
            p = skip_value(p, depth + 1);
            if (!p)
                return NULL;
            p = skip_ws(p);
            if (*p == close)
                return p + 1;
            if (*p != ',')
                return NULL;
            p++;
        }
    }
    case 't':
        return strncmp(p, "true", 4) ? NULL : p + 4;
    case 'f':
        return strncmp(p, "false", 5) ? NULL : p + 5;
    case 'n':
        return strncmp(p, "null", 4) ? NULL : p + 4;
    default:
        return scan_number(p, &d);
    }
}

void bt_rec_note_arrival(struct bt_replay *rp, int64_t a)
{
    if (rp->narrivals && rp->arrivals[rp->narrivals - 1] == a)
        return; /* a poll's samples arrive together */
    if (rp->narrivals == rp->caparrivals) {
        rp->caparrivals = rp->caparrivals ? rp->caparrivals * 2 : 1024;
        rp->arrivals = bt_xrealloc(rp->arrivals, rp->caparrivals * sizeof *rp->arrivals);
    }
    rp->arrivals[rp->narrivals++] = a;
}

enum bt_rec_scan bt_rec_scan_samples(struct bt_replay *rp, int nroutes, const int *sigmap,
                                     const char *p, const char **endp, struct bt_rec_span *span)
{
    p = skip_ws(p);
    if (*p != '[')
        return BT_SCAN_SYNTAX;
    p = skip_ws(p + 1);
    if (*p == ']') {
        *endp = p + 1;
        return BT_SCAN_OK;
    }
    for (;;) {
        p = skip_ws(p);
        if (*p != '[')
            return BT_SCAN_BAD_GROUP; /* the caller tells it from broken JSON */
        p++;
        double hd[3];
        bool ok = true;
        int nhead = 0;
        /* the route, minute and arrival */
        for (; nhead < 3; nhead++) {
            p = skip_ws(p);
            if (*p == ']')
                break;
            const char *q = scan_number(p, &hd[nhead]);
            if (!q) {
                ok = false;
                q = skip_value(p, 3);
                if (!q)
                    return BT_SCAN_SYNTAX;
            }
            p = skip_ws(q);
            if (*p == ',')
                p++;
            else if (*p != ']')
                return BT_SCAN_SYNTAX;
        }
        if (nhead < 3 || *p == ']')
            return BT_SCAN_BAD_GROUP;
        int route = 0;
        int64_t m = 0, a = 0, ri = 0;
        if (ok) {
            /* cJSON's valueint truncates toward zero (-0.5 is route 0) */
            ok = hd[0] > -1 && hd[0] < nroutes && bt_f2i(hd[0], -1, nroutes, &ri) &&
                 bt_rec_time(hd[1], &m) && bt_rec_time(hd[2], &a);
            route = ok ? (int)ri : 0;
            if (!ok)
                m = a = 0;
        }
        p = skip_ws(p);
        if (*p != '[')
            return BT_SCAN_BAD_GROUP;
        p = skip_ws(p + 1);
        int count = 0;
        int sig = -1;
        if (*p == ']') {
            p++;
        } else {
            for (;;) {
                double d;
                const char *q = scan_number(skip_ws(p), &d);
                bool isnum = q != NULL;
                if (!q)
                    q = skip_value(p, 4);
                if (!q)
                    return BT_SCAN_SYNTAX;
                if (count % 2 == 0) {
                    /* truncated toward zero, as cJSON's valueint: (-1, 256) holds
                     * only 0 to 255, and NaN fails the test */
                    sig = isnum && d > -1 && d < 256 ? sigmap[(int)d] : -1;
                } else if (sig >= 0 && isnum && ok) {
                    if (span && (!span->min || m < span->min))
                        span->min = m;
                    if (span && m > span->max)
                        span->max = m;
                    if (rp) {
                        struct bt_sample smp = {.t = m, .route = route,
                                                .signal = (enum bt_signal)sig, .value = d};
                        bt_store_add(&rp->store, &smp, a);
                        /* the store keeps a - minute in 32 bits: the instant it shows it */
                        int64_t mf = m - ((m % 60) + 60) % 60, off = a - mf;
                        off = off < INT32_MIN ? INT32_MIN : off > INT32_MAX ? INT32_MAX : off;
                        bt_rec_note_arrival(rp, mf + off);
                        if (bt_signal_info[sig].source == BT_SRC_ADMISSION)
                            rp->has_admission = true;
                    }
                }
                count++;
                p = skip_ws(q);
                if (*p == ']') {
                    p++;
                    break;
                }
                if (*p != ',')
                    return BT_SCAN_SYNTAX;
                p++;
            }
        }
        if (count % 2)
            ok = false;
        /* anything after the four items is ignored, as before */
        for (p = skip_ws(p); *p == ',';) {
            p = skip_value(p + 1, 3);
            if (!p)
                return BT_SCAN_SYNTAX;
            p = skip_ws(p);
        }
        if (*p != ']')
            return BT_SCAN_SYNTAX;
        if (!ok)
            return BT_SCAN_BAD_GROUP;
        p = skip_ws(p + 1);
        if (*p == ']') {
            *endp = p + 1;
            return BT_SCAN_OK;
        }
        if (*p != ',')
            return BT_SCAN_SYNTAX;
        p++;
    }
}

bool bt_rec_scan_line(const char *line, int nroutes, const int *sigmap, struct bt_rec_line *pl,
                      struct bt_rec_span *span, char *why, size_t n)
{
    const char *p = skip_ws(line);
    bool have_t = false, not_array = false, bad_group = false;
    *pl = (struct bt_rec_line){0};
    bool seen_t = false, seen_s = false, seen_e = false, seen_c = false, seen_k = false, seen_v = false;
    if (*p != '{')
        goto syntax;
    p = skip_ws(p + 1);
    if (*p != '}') {
        for (;;) {
            const char *k = skip_ws(p);
            const char *ke = skip_string(k);
            if (!ke)
                goto syntax;
            p = skip_ws(ke);
            if (*p != ':')
                goto syntax;
            p = skip_ws(p + 1);
            size_t klen = (size_t)(ke - k);
            /* the first of duplicate keys counts, as cJSON_GetObjectItem finds it */
            if (klen == 3 && k[1] == 't' && !seen_t) {
                seen_t = true;
                const char *q = scan_number(p, &pl->t);
                have_t = q && isfinite(pl->t);
                if (!q)
                    q = skip_value(p, 1);
                if (!q)
                    goto syntax;
                p = q;
            } else if (klen == 3 && k[1] == 's' && !seen_s) {
                seen_s = true;
                const char *q;
                if (*p != '[') {
                    not_array = true; /* null too: cJSON's null is not an array */
                    q = skip_value(p, 1);
                    if (!q)
                        goto syntax;
                } else if (bt_rec_scan_samples(NULL, nroutes, sigmap, p, &q, span) != BT_SCAN_OK) {
                    /* a bad group, unless the array is not JSON at all */
                    bad_group = true;
                    q = skip_value(p, 1);
                    if (!q)
                        goto syntax;
                } else {
                    pl->s = p;
                }
                p = q;
            } else if (klen == 3 && (k[1] == 'e' || k[1] == 'c' || k[1] == 'k' || k[1] == 'v')) {
                /* events, counter readings, the series they name and coverage: through cJSON */
                const char **at = k[1] == 'e' ? &pl->e : k[1] == 'c' ? &pl->c : k[1] == 'v' ? &pl->v : &pl->k;
                const char **end = k[1] == 'e'   ? &pl->e_end
                                   : k[1] == 'c' ? &pl->c_end
                                   : k[1] == 'v' ? &pl->v_end
                                                 : &pl->k_end;
                bool *seen = k[1] == 'e' ? &seen_e : k[1] == 'c' ? &seen_c : k[1] == 'v' ? &seen_v : &seen_k;
                const char *q = skip_value(p, 1);
                if (!q)
                    goto syntax;
                if (!*seen) {
                    *seen = true;
                    if (*p != '[')
                        not_array = true;
                    else {
                        *at = p;
                        *end = q;
                    }
                }
                p = q;
            } else {
                p = skip_value(p, 1);
                if (!p)
                    goto syntax;
            }
            p = skip_ws(p);
            if (*p == '}')
                break;
            if (*p != ',')
                goto syntax;
            p++;
        }
    }
    /* cJSON_Parse ignores what follows the object */
    if (!have_t || !bt_rec_time_ok(pl->t)) {
        snprintf(why, n, "no poll time \"t\"");
        return false;
    }
    if (not_array) {
        snprintf(why, n, "\"s\" and \"e\" must be arrays");
        return false;
    }
    if (bad_group) {
        snprintf(why, n, "bad sample group (want [route, minute, arrival, [signal, value, ...]])");
        return false;
    }
    return true;
syntax:
    snprintf(why, n, "not valid JSON");
    return false;
}

bool bt_rec_scan_object(const char *line,
                        bool (*each)(void *, const char *, size_t, const char *, const char *),
                        void *arg)
{
    const char *p = skip_ws(line);
    if (*p != '{')
        return false;
    p = skip_ws(p + 1);
    if (*p == '}')
        return true;
    for (;;) {
        const char *k = skip_ws(p);
        const char *ke = skip_string(k);
        if (!ke)
            return false;
        p = skip_ws(ke);
        if (*p != ':')
            return false;
        const char *v = skip_ws(p + 1);
        const char *ve = skip_value(v, 1);
        if (!ve)
            return false;
        if (!each(arg, k + 1, (size_t)(ke - k - 2), v, ve))
            return true;
        p = skip_ws(ve);
        if (*p == '}')
            return true;
        if (*p != ',')
            return false;
        p++;
    }
}

bool bt_rec_scan_array(const char *p, bool (*each)(void *, size_t, const char *, const char *),
                       void *arg)
{
    p = skip_ws(p);
    if (*p != '[')
        return false;
    p = skip_ws(p + 1);
    if (*p == ']')
        return true;
    for (size_t i = 0;; i++) {
        const char *v = skip_ws(p);
        const char *ve = skip_value(v, 1);
        if (!ve)
            return false;
        if (!each(arg, i, v, ve))
            return true;
        p = skip_ws(ve);
        if (*p == ']')
            return true;
        if (*p != ',')
            return false;
        p++;
    }
}
