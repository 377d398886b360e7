/* The store's series (core/series.h): the per-route rings of per-minute values (float,
 * scaled or double, with a replay's arrival offsets), taking a sample and reading
 * minutes, ranges, the newest minute, sums and day sums, and the source states a
 * sample touches. Beneath core/model.c, which calls it and which it never calls. */
#include "core/series.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/burndown.h"
#include "core/coverage.h"
#include "core/names.h"
#include "core/plausible.h"
#include "core/store_int.h"
#include "core/util.h"

#define SERIES_FIRST_CAP 16 /* slots of a new series: `check`'s window, doubled as needed */

static size_t slot(const struct bt_series *se, int64_t minute)
{
    int64_t m = minute / 60;
    int64_t c = se->cap;
    return (size_t)(((m % c) + c) % c);
}

#define MAX_SCALE 4
static const double pow10s[MAX_SCALE + 1] = {1, 10, 100, 1000, 10000};

static double sval(const struct bt_series *se, size_t k)
{
    if (se->d)
        return se->d[k];
    /* q / 10^scale rounds once, to the double nearest the decimal (as strtod did) */
    return se->scale ? (double)se->f[k] / pow10s[se->scale] : (double)se->f[k];
}

static bool fits_float(double v)
{
    return isnan(v) || (fabs(v) <= FLT_MAX && (double)(float)v == v);
}

/* Whether v is q / 10^p for a whole q a float holds exactly (|q| < 2^24); *q: it. */
static bool fits_scaled(double v, int p, double *q)
{
    *q = nearbyint(v * pow10s[p]);
    return fabs(*q) < 16777216.0 && *q / pow10s[p] == v;
}

/* A float ring whose values (and v) are all decimals of at most MAX_SCALE places
 * that fit as whole floats: moved to the fewest places that hold them all. */
static bool rescale(struct bt_series *se, double v)
{
    double q;
    for (int p = se->scale + 1; p <= MAX_SCALE; p++) {
        if (!fits_scaled(v, p, &q))
            continue;
        bool all = true;
        for (int i = 0; i < se->cap && all; i++) {
            double x = sval(se, (size_t)i);
            all = isnan(x) || fits_scaled(x, p, &q);
        }
        if (!all)
            continue;
        for (int i = 0; i < se->cap; i++) {
            double x = sval(se, (size_t)i);
            if (!isnan(x) && fits_scaled(x, p, &q))
                se->f[i] = (float)q;
        }
        se->scale = (int8_t)p;
        return true;
    }
    return false;
}

static void sset(struct bt_series *se, size_t k, double v)
{
    double q;
    if (!se->d && !isnan(v) && (se->scale || !fits_float(v))) {
        /* a latency of 2383.7 is no float: kept as 23837 with one decimal place */
        if (fits_scaled(v, se->scale, &q) || (rescale(se, v) && fits_scaled(v, se->scale, &q))) {
            se->f[k] = (float)q;
            return;
        }
    }
    if (!se->d && !isnan(v) && (se->scale || !fits_float(v))) {
        /* the first value a float would round: the whole ring in double from now on */
        double *d = bt_xmalloc((size_t)se->cap * sizeof *d);
        for (int i = 0; i < se->cap; i++)
            d[i] = sval(se, (size_t)i);
        free(se->f);
        se->f = NULL;
        se->d = d;
        se->scale = 0;
    }
    if (se->d)
        se->d[k] = v;
    else
        se->f[k] = (float)v;
}

static bool has_arr(const struct bt_series *se)
{
    return se->arr16 || se->arr;
}

static int32_t aval(const struct bt_series *se, size_t k)
{
    return se->arr ? se->arr[k] : se->arr16[k];
}

/* The series' own copy of the offsets it shares (before a change). */
static void arr_own(struct bt_series *se)
{
    if (!se->arr_shared)
        return;
    size_t c = (size_t)se->cap;
    if (se->arr16) {
        int16_t *n = bt_xmalloc(c * sizeof *n);
        memcpy(n, se->arr16, c * sizeof *n);
        se->arr16 = n;
    }
    if (se->arr) {
        int32_t *n = bt_xmalloc(c * sizeof *n);
        memcpy(n, se->arr, c * sizeof *n);
        se->arr = n;
    }
    se->arr_shared = false;
}

static void aset(struct bt_series *se, size_t k, int32_t a)
{
    if (se->arr_shared && aval(se, k) == a)
        return;
    arr_own(se);
    if (!se->arr && (a < INT16_MIN || a > INT16_MAX)) {
        se->arr = bt_xmalloc((size_t)se->cap * sizeof *se->arr);
        for (int i = 0; i < se->cap; i++)
            se->arr[i] = se->arr16[i];
        free(se->arr16);
        se->arr16 = NULL;
    }
    if (se->arr)
        se->arr[k] = a;
    else
        se->arr16[k] = (int16_t)a;
}

/* The ring with cap slots, every minute of [from, newest] it holds carried over. */
static void series_resize(struct bt_series *se, int cap, int64_t from, bool arrival)
{
    struct bt_series n = *se;
    n.cap = cap;
    n.arr_shared = false; /* its offsets are new arrays */
    n.f = se->d ? NULL : bt_xmalloc((size_t)cap * sizeof *n.f);
    n.d = se->d ? bt_xmalloc((size_t)cap * sizeof *n.d) : NULL;
    n.arr16 = arrival && !se->arr ? bt_xcalloc((size_t)cap, sizeof *n.arr16) : NULL;
    n.arr = arrival && se->arr ? bt_xcalloc((size_t)cap, sizeof *n.arr) : NULL;
    /* the slots empty, then each minute kept copied in the ring's own form: n has se's
     * form and scale, so a value's float or double is the one sset would store (a
     * call a slot, two divisions a minute, was most of opening a recording's rings) */
    for (int i = 0; i < cap; i++) {
        if (n.d)
            n.d[i] = NAN;
        else
            n.f[i] = NAN;
    }
    if (se->cap) {
        int64_t lo = se->newest - (int64_t)(se->cap - 1) * 60;
        int64_t m = lo > from ? lo : from;
        size_t k = slot(se, m), j = slot(&n, m);
        for (; m <= se->newest; m += 60) {
            if (n.d)
                n.d[j] = se->d[k];
            else
                n.f[j] = se->f[k];
            if (n.arr16 && se->arr16)
                n.arr16[j] = se->arr16[k];
            else if (n.arr && se->arr)
                n.arr[j] = se->arr[k];
            if (++k == (size_t)se->cap)
                k = 0;
            if (++j == (size_t)cap)
                j = 0;
        }
    }
    free(se->f);
    free(se->d);
    if (!se->arr_shared) {
        free(se->arr16);
        free(se->arr);
    }
    *se = n;
}

void bt_series_copy(struct bt_series *dst, const struct bt_series *src)
{
    *dst = *src;
    size_t c = (size_t)src->cap;
    dst->f = src->f ? bt_xmalloc(c * sizeof *dst->f) : NULL;
    dst->d = src->d ? bt_xmalloc(c * sizeof *dst->d) : NULL;
    dst->arr16 = src->arr16 ? bt_xmalloc(c * sizeof *dst->arr16) : NULL;
    dst->arr = src->arr ? bt_xmalloc(c * sizeof *dst->arr) : NULL;
    if (src->f)
        memcpy(dst->f, src->f, c * sizeof *dst->f);
    if (src->d)
        memcpy(dst->d, src->d, c * sizeof *dst->d);
    if (src->arr16)
        memcpy(dst->arr16, src->arr16, c * sizeof *dst->arr16);
    if (src->arr)
        memcpy(dst->arr, src->arr, c * sizeof *dst->arr);
    dst->arr_shared = false;
}

/* Do b's offsets say a's wherever a holds a value (elsewhere they are never read)? */
static bool arr_agree(const struct bt_series *a, const struct bt_series *b)
{
    if (a->cap != b->cap || !a->arr16 != !b->arr16)
        return false;
    for (int k = 0; k < a->cap; k++)
        if (!isnan(sval(a, (size_t)k)) && aval(a, (size_t)k) != aval(b, (size_t)k))
            return false;
    return true;
}

void bt_store_share_arrivals(struct bt_store *s)
{
    for (int r = 0; r < s->nroutes; r++) {
        struct bt_series *own[BT_SIG_COUNT]; /* the route's distinct offsets so far */
        int n = 0;
        for (int g = 0; g < BT_SIG_COUNT; g++) {
            struct bt_series *se = &s->series[(size_t)g * (size_t)s->slots + (size_t)r];
            if (!has_arr(se) || se->arr_shared)
                continue;
            int i = 0;
            while (i < n && !arr_agree(se, own[i]))
                i++;
            if (i < n) { /* another's: this one's are dropped */
                free(se->arr16);
                free(se->arr);
                se->arr16 = own[i]->arr16;
                se->arr = own[i]->arr;
                se->arr_shared = true;
                continue;
            }
            own[n++] = se;
            /* the store keeps them; every series reading them only reads */
            s->arr_pool = bt_xrealloc(s->arr_pool, (s->narr_pool + 1) * sizeof *s->arr_pool);
            s->arr_pool[s->narr_pool++] = se->arr16 ? (void *)se->arr16 : (void *)se->arr;
            se->arr_shared = true;
        }
    }
}

size_t bt_series_bytes(const struct bt_series *se)
{
    size_t c = (size_t)se->cap;
    return (se->f ? c * sizeof *se->f : 0) + (se->d ? c * sizeof *se->d : 0) +
           (se->arr16 ? c * sizeof *se->arr16 : 0) + (se->arr ? c * sizeof *se->arr : 0);
}

static struct bt_series *series_of(const struct bt_store *s, int route, enum bt_signal sig)
{
    if (route < 0 || route >= s->nroutes || (unsigned)sig >= BT_SIG_COUNT)
        return NULL;
    return &s->series[(size_t)sig * (size_t)s->slots + (size_t)route];
}

void bt_store_refused(struct bt_store *s, int route, enum bt_source src, const char *why)
{
    struct bt_source_status *st = bt_store_status(s, route, src);
    if (st && !st->implausible[0])
        bt_strlcpy(st->implausible, why, BT_STATUS_IMPLAUSIBLE_LEN);
}

bool bt_store_add(struct bt_store *s, const struct bt_sample *smp, int64_t arrival)
{
    struct bt_series *se = series_of(s, smp->route, smp->signal);
    if (!se || isnan(smp->value))
        return false;
    char why[160];
    enum bt_source src = bt_signal_info[smp->signal].source;
    if (!bt_sample_plausible(smp->signal, smp->value, why, sizeof why)) {
        /* the signal's name, a %.9g value and the reason in full */
        char hm[8], text[sizeof why + 128];
        bt_fmt_hhmm(bt_minute_floor(smp->t), hm, sizeof hm);
        snprintf(text, sizeof text, "implausible value: %s = %.9g at %s UTC: %s; not used",
                 bt_signal_info[smp->signal].name, smp->value, hm, why);
        bt_store_refused(s, smp->route, src, text);
        return false;
    }
    /* A sample dated after it arrived (beyond clock skew) would become the series'
     * newest minute and every real sample after it "too old" (issue 26 break 3). */
    if (smp->t > arrival + BT_SAMPLE_MAX_SKEW_S) {
        char when[32], got[32], text[200];
        bt_fmt_iso(smp->t, when, sizeof when);
        bt_fmt_iso(arrival, got, sizeof got);
        snprintf(text, sizeof text,
                 "sample from the future: %s dated %s arrived at %s (more than %d s of clock "
                 "skew); not used", bt_signal_info[smp->signal].name, when, got,
                 BT_SAMPLE_MAX_SKEW_S);
        bt_store_refused(s, smp->route, src, text);
        return false;
    }
    int64_t minute = bt_minute_floor(smp->t);
    int64_t span = (int64_t)s->history * 60;
    if (!se->cap) {
        series_resize(se, s->history < SERIES_FIRST_CAP ? s->history : SERIES_FIRST_CAP, 0,
                      s->track_arrival);
        se->newest = se->oldest = minute;
    }
    if (minute <= se->newest - span)
        return false; /* older than the window */
    /* the minutes held after this one: [lo, hi], at most the history; more slots
     * than the ring has: it grows (doubling), so nothing inside the history is lost */
    int64_t hi = minute > se->newest ? minute : se->newest;
    int64_t lo = minute < se->oldest ? minute : se->oldest;
    if (lo <= hi - span)
        lo = hi - span + 60;
    int64_t need = (hi - lo) / 60 + 1;
    if (need > se->cap) {
        int64_t cap = (int64_t)se->cap * 2 > need ? (int64_t)se->cap * 2 : need;
        series_resize(se, (int)(cap < s->history ? cap : s->history), lo, s->track_arrival);
    }
    se->oldest = lo;
    if (minute > se->newest) {
        /* clear the slots skipped over so stale values never reappear */
        int64_t from = se->newest + 60;
        if (minute - from >= (int64_t)se->cap * 60)
            from = minute - (int64_t)se->cap * 60 + 60;
        for (int64_t m = from; m < minute; m += 60)
            sset(se, slot(se, m), NAN);
        se->newest = minute;
    }
    size_t k = slot(se, minute);
    if (has_arr(se)) {
        int64_t a = arrival - minute;
        a = a < INT32_MIN ? INT32_MIN : a > INT32_MAX ? INT32_MAX : a;
        if (isnan(sval(se, k)) || a < aval(se, k))
            aset(se, k, (int32_t)a); /* visible from its first arrival */
    }
    sset(se, k, smp->value);
    if (s->tap.sample)
        s->tap.sample(s->tap.arg, smp, arrival);
    struct bt_source_status *st = bt_store_status(s, smp->route, bt_signal_info[smp->signal].source);
    if (st && arrival > st->newest_sample)
        st->newest_sample = arrival;
    s->nsamples++;
    s->generation++;
    return true;
}

double bt_store_at(const struct bt_store *s, int route, enum bt_signal sig, int64_t minute)
{
    const struct bt_series *se = series_of(s, route, sig);
    if (!se || !se->cap)
        return NAN;
    int64_t rem = minute % 60; /* bt_minute_floor, inline: a frame reads ~10^5 */
    if (rem)
        minute -= rem < 0 ? rem + 60 : rem;
    /* the ring holds the newest cap minutes (cap <= history) */
    if (minute > se->newest || minute <= se->newest - (int64_t)se->cap * 60)
        return NAN;
    size_t k = slot(se, minute);
    if (s->horizon && has_arr(se) && minute + aval(se, k) > s->horizon)
        return NAN;
    return sval(se, k);
}

/* out[j] = minute m + 60 j of se at slots k + j (no wrap), j < len: the values in the
 * series' form, then the ones still to arrive hidden, each a loop of its own (one
 * branch a minute was half of reading an hour of a series, the speed means' and the
 * spend windows' way) */
static void range_part(const struct bt_store *s, const struct bt_series *se, size_t k, int len,
                       int64_t m, double *out)
{
    if (se->d) {
        for (int j = 0; j < len; j++)
            out[j] = se->d[k + (size_t)j];
    } else if (se->scale) {
        double div = pow10s[se->scale];
        for (int j = 0; j < len; j++)
            out[j] = (double)se->f[k + (size_t)j] / div;
    } else {
        for (int j = 0; j < len; j++)
            out[j] = (double)se->f[k + (size_t)j];
    }
    int64_t hz = s->horizon;
    if (!hz || !has_arr(se))
        return;
    if (se->arr) {
        for (int j = 0; j < len; j++, m += 60)
            if (m + se->arr[k + (size_t)j] > hz)
                out[j] = NAN;
    } else {
        for (int j = 0; j < len; j++, m += 60)
            if (m + se->arr16[k + (size_t)j] > hz)
                out[j] = NAN;
    }
}

void bt_store_range(const struct bt_store *s, int route, enum bt_signal sig, int64_t from, int n,
                    double *out)
{
    const struct bt_series *se = series_of(s, route, sig);
    from = bt_minute_floor(from);
    if (!se || !se->cap) {
        for (int i = 0; i < n; i++)
            out[i] = NAN;
        return;
    }
    /* as bt_store_at: the ring holds (lo, newest]; the minutes of the window inside it
     * are [i, end), read slot after slot with the store's form of value decided once
     * (speed and spend read an hour of several series per route and evaluation) */
    int64_t lo = se->newest - (int64_t)se->cap * 60;
    int64_t skip = from > lo ? 0 : (lo - from) / 60 + 1;
    int64_t upto = se->newest < from ? 0 : (se->newest - from) / 60 + 1;
    int i = skip < n ? (int)skip : n;
    int end = upto < n ? (int)upto : n;
    for (int j = 0; j < i; j++)
        out[j] = NAN;
    int64_t m = from + 60 * (int64_t)i;
    size_t k = slot(se, m);
    while (i < end) { /* up to the ring's end, then from its start */
        int len = end - i;
        if ((size_t)len > (size_t)se->cap - k)
            len = (int)((size_t)se->cap - k);
        range_part(s, se, k, len, m, out + i);
        i += len;
        m += 60 * (int64_t)len;
        k = 0;
    }
    for (; i < n; i++)
        out[i] = NAN;
}

void bt_route_burndown_settle(struct bt_route *r, const struct bt_store *st, int route,
                              int64_t through)
{
    if (!bt_route_burndown_settles(r))
        return; /* mantle, or a route whose prior was never set: nothing to read */
    /* the store reads its own minutes and hands them down (core/burndown.c reads
     * no store), the window's four series a range each: one pass over each ring (this
     * runs at every CloudWatch OK of a replay); the last minute is the newest ended */
    struct bt_burndown_window w;
    int64_t first = bt_minute_floor(through) - 60 * (int64_t)BT_BURNDOWN_WINDOW;
    bt_store_range(st, route, BT_SIG_ESTIMATED_TPM, first, BT_BURNDOWN_WINDOW, w.est);
    bt_store_range(st, route, BT_SIG_OUTPUT_TOKENS, first, BT_BURNDOWN_WINDOW, w.out);
    bt_store_range(st, route, BT_SIG_INPUT_TOKENS, first, BT_BURNDOWN_WINDOW, w.in);
    bt_store_range(st, route, BT_SIG_CACHE_WRITE, first, BT_BURNDOWN_WINDOW, w.cw);
    struct bt_burndown_steady m;
    bt_burndown_measure(&w, &m);
    bt_route_burndown_steady(r, &m);
}

/* The newest minute of (lo, hi] of se holding a value arrived by vis (0: none); a
 * value still to arrive lowers *hidden. */
static int64_t newest_scan(const struct bt_series *se, int64_t hi, int64_t lo, int64_t vis,
                           int64_t *hidden)
{
    bool arr = has_arr(se);
    for (int64_t m = hi; m > lo; m -= 60) {
        size_t k = slot(se, m);
        if (isnan(sval(se, k)))
            continue;
        if (arr && m + aval(se, k) > vis) {
            *hidden = m;
            continue;
        }
        return m;
    }
    return 0;
}

int64_t bt_store_newest(const struct bt_store *s, int route, enum bt_signal sig, int64_t limit)
{
    const struct bt_series *se = series_of(s, route, sig);
    if (!se || !se->cap)
        return 0;
    int64_t m = bt_minute_floor(limit);
    if (m > se->newest)
        m = se->newest;
    int64_t lo = se->newest - (int64_t)se->cap * 60;
    int64_t vis = s->horizon ? s->horizon : INT64_MAX;
    if (!s->newest_memo || route >= s->sum_memo_routes) {
        int64_t hidden = INT64_MAX;
        return newest_scan(se, m, lo, vis, &hidden);
    }
    /* replay: carried from the last answer while the limit and the horizon only move on
     * (the minutes under the last limit are scanned again only from the oldest that
     * held a value still to arrive) */
    struct bt_newest_memo *mm = &s->newest_memo[(size_t)route * BT_SIG_COUNT + (size_t)sig];
    if (mm->valid && mm->nsamples == s->nsamples && m >= mm->limit && vis >= mm->vis) {
        int64_t hidden = INT64_MAX;
        int64_t found = newest_scan(se, m, mm->limit > lo ? mm->limit : lo, vis, &hidden);
        if (!found) {
            if (vis > mm->vis && mm->hidden != INT64_MAX) {
                int64_t old = INT64_MAX;
                found = newest_scan(se, mm->limit, mm->hidden - 60, vis, &old);
                hidden = old < hidden ? old : hidden;
            } else {
                hidden = mm->hidden < hidden ? mm->hidden : hidden;
            }
            if (!found)
                found = mm->found; /* still visible: the horizon only moved on */
        }
        *mm = (struct bt_newest_memo){.valid = true, .nsamples = s->nsamples, .limit = m,
                                      .vis = vis, .found = found, .hidden = hidden};
        return found;
    }
    int64_t hidden = INT64_MAX;
    int64_t found = newest_scan(se, m, lo, vis, &hidden);
    *mm = (struct bt_newest_memo){.valid = true, .nsamples = s->nsamples, .limit = m, .vis = vis,
                                  .found = found, .hidden = hidden};
    return found;
}

struct bt_source_status *bt_store_status(struct bt_store *s, int route, enum bt_source src)
{
    if (route < 0 || route >= s->nroutes || (unsigned)src >= BT_SRC_COUNT)
        return NULL;
    return &s->status[(size_t)src * (size_t)s->slots + (size_t)route];
}

const struct bt_source_status *bt_store_status_c(const struct bt_store *s, int route,
                                                 enum bt_source src)
{
    return bt_store_status((struct bt_store *)s, route, src);
}

static int64_t day_sum_minute(const struct bt_store *s, int route, enum bt_signal daily, int64_t day)
{
    int64_t t = bt_store_newest(s, route, daily, day + 86400 - 60);
    return t >= day ? t : -1;
}

/* The minute the route's newest day sums of the day are stored at (-1: none). */
static int64_t day_sums_at(const struct bt_store *s, int route, int64_t day)
{
    int64_t a = day_sum_minute(s, route, BT_SIG_DAY_INPUT_TOKENS, day);
    int64_t b = day_sum_minute(s, route, BT_SIG_DAY_OUTPUT_TOKENS, day);
    return a > b ? a : b;
}

bool bt_store_has_day_sum(const struct bt_store *s, int route, int64_t through)
{
    return day_sums_at(s, route, through - through % 86400) >= 0;
}

bool bt_store_day_sum_held(const struct bt_store *s, int route, enum bt_signal daily, int64_t through)
{
    int64_t day = through - through % 86400;
    int64_t t0 = day_sums_at(s, route, day);
    if (t0 < 0)
        return false;
    if (!isnan(bt_store_at(s, route, daily, t0)))
        return true;
    /* asked with the others and answered without a datapoint: none before them */
    return bt_store_cover_recorded(s, route) &&
           bt_store_covered(s, route, daily, day) == BT_COV_SETTLED;
}

/* ---- sums over minutes (replay carries them forward) ---- */

static int memo_slot(enum bt_signal sig)
{
    switch (sig) {
    case BT_SIG_INPUT_TOKENS: return 0;
    case BT_SIG_OUTPUT_TOKENS: return 1;
    case BT_SIG_CACHE_WRITE: return 2;
    case BT_SIG_CACHE_READ: return 3;
    default: return -1;
    }
}

/* A whole number whose sums (at most a store's minutes of them, < 2^16) stay below
 * 2^53, so they are exact whatever the order of adding; -0 is left to the loop (its
 * sign depends on the order). */
static bool whole(double v)
{
    return fabs(v) < 0x1p36 && v == floor(v) && !(v == 0 && signbit(v));
}

/* Adds minute m of se to the memo when it holds a value that arrived by vis; a value
 * still to arrive lowers *hidden. False: the value is not a whole number. */
static bool memo_take(struct bt_sum_memo *mm, const struct bt_series *se, int64_t m,
                      int64_t after, int64_t vis, int64_t *hidden)
{
    if (m > se->newest || m <= se->newest - (int64_t)se->cap * 60)
        return true;
    size_t k = slot(se, m);
    double v = sval(se, k);
    if (isnan(v))
        return true;
    if (has_arr(se)) {
        int64_t a = m + aval(se, k);
        if (a <= after)
            return true; /* summed already */
        if (a > vis) {
            if (m < *hidden)
                *hidden = m;
            return true;
        }
    }
    if (!whole(v))
        return false;
    mm->sum += v;
    mm->n++;
    return true;
}

/* The sum of route's sig over from..through from the replay's memo: false when it
 * cannot say (no memo, another signal, a value that is not a whole number). */
static bool memo_sum(const struct bt_store *s, int route, enum bt_signal sig, int64_t from,
                     int64_t through, double *sum, int *n)
{
    int k = memo_slot(sig);
    const struct bt_series *se = series_of(s, route, sig);
    if (!s->sum_memo || k < 0 || !se || route >= s->sum_memo_routes)
        return false;
    struct bt_sum_memo *mm = &s->sum_memo[(size_t)route * MEMO_SLOTS + (size_t)k];
    int64_t vis = s->horizon ? s->horizon : INT64_MAX;
    if (!mm->valid || mm->nsamples != s->nsamples || mm->from != from || through < mm->through ||
        vis < mm->vis)
        *mm = (struct bt_sum_memo){.valid = true, .exact = true, .nsamples = s->nsamples,
                                   .from = from, .through = from - 60, .vis = vis,
                                   .hidden = INT64_MAX};
    if (!mm->exact)
        return false;
    if (se->cap && (vis > mm->vis || through > mm->through)) {
        int64_t hidden = INT64_MAX;
        if (vis > mm->vis) { /* the minutes summed before that have arrived since */
            for (int64_t m = mm->hidden; m <= mm->through; m += 60)
                if (!memo_take(mm, se, m, mm->vis, vis, &hidden))
                    return mm->exact = false;
        } else {
            hidden = mm->hidden;
        }
        for (int64_t m = mm->through + 60; m <= through; m += 60)
            if (!memo_take(mm, se, m, INT64_MIN, vis, &hidden))
                return mm->exact = false;
        mm->hidden = hidden;
    }
    mm->through = through > mm->through ? through : mm->through;
    mm->vis = vis;
    *sum = mm->sum;
    *n = mm->n;
    return true;
}

double bt_store_sum(const struct bt_store *s, int route, enum bt_signal sig, int64_t from,
                    int64_t through, int *n)
{
    from = bt_minute_floor(from);
    through = bt_minute_floor(through);
    double sum = 0;
    int k = 0;
    if (!memo_sum(s, route, sig, from, through, &sum, &k)) {
        sum = 0;
        k = 0;
        for (int64_t t = from; t <= through; t += 60) {
            double v = bt_store_at(s, route, sig, t);
            if (!isnan(v)) {
                sum += v;
                k++;
            }
        }
    }
    if (n)
        *n = k;
    return sum;
}

double bt_store_day_sum(const struct bt_store *s, int route, enum bt_signal daily, int64_t through)
{
    int64_t day = through - through % 86400;
    int64_t t0 = day_sums_at(s, route, day);
    double sum = t0 >= 0 ? bt_store_at(s, route, daily, t0) : NAN;
    if (t0 == day)
        return sum; /* to the poll that asked: nothing after it is added */
    enum bt_signal per = bt_signal_daily_minute(daily);
    int64_t from = t0 >= 0 ? t0 + 60 : day;
    double part;
    int n;
    /* whole numbers (token counts) add up exactly in any order: the replay's running
     * sum of the minutes is the loop's */
    if ((isnan(sum) || whole(sum)) &&
        memo_sum(s, route, per, from, bt_minute_floor(through), &part, &n))
        return !n ? sum : isnan(sum) ? part : sum + part;
    /* the minutes from..through read a range at a time, added in the same order (a
     * lookup a minute was most of tokens today and the day's spend) */
    double v[256];
    for (int64_t t = from; t <= through;) {
        int64_t left = (through - t) / 60 + 1; /* the loop's minutes: t, t + 60, ... <= through */
        int len = left < (int64_t)BT_ARRAY_LEN(v) ? (int)left : (int)BT_ARRAY_LEN(v);
        bt_store_range(s, route, per, t, len, v);
        for (int i = 0; i < len; i++)
            if (!isnan(v[i]))
                sum = isnan(sum) ? v[i] : sum + v[i];
        t += 60 * (int64_t)len;
    }
    return sum;
}
