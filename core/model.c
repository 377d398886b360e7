#include "core/model.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/burndown.h"
#include "core/plausible.h"
#include "core/util.h"

#define BT_SIG_INFO(id, name, metric, stat, mantle, src) \
    [BT_SIG_##id] = {name, metric, stat, mantle, BT_SRC_##src},
const struct bt_signal_info bt_signal_info[BT_SIG_COUNT] = {BT_SIGNALS(BT_SIG_INFO)};
#undef BT_SIG_INFO

int bt_signal_by_name(const char *name)
{
    for (int i = 0; i < BT_SIG_COUNT; i++)
        if (strcmp(bt_signal_info[i].name, name) == 0)
            return i;
    return -1;
}

bool bt_signal_daily(enum bt_signal s)
{
    return s == BT_SIG_DAY_INPUT_TOKENS || s == BT_SIG_DAY_OUTPUT_TOKENS || s == BT_SIG_DAY_CACHE_WRITE ||
           s == BT_SIG_DAY_CACHE_READ;
}

enum bt_signal bt_signal_daily_minute(enum bt_signal daily)
{
    return daily == BT_SIG_DAY_OUTPUT_TOKENS ? BT_SIG_OUTPUT_TOKENS
           : daily == BT_SIG_DAY_CACHE_WRITE ? BT_SIG_CACHE_WRITE
           : daily == BT_SIG_DAY_CACHE_READ  ? BT_SIG_CACHE_READ
                                             : BT_SIG_INPUT_TOKENS;
}

bool bt_signal_tier(enum bt_signal s)
{
    return s == BT_SIG_TIER_RES_INVOCATIONS || s == BT_SIG_TIER_RES_INPUT || s == BT_SIG_TIER_RES_OUTPUT;
}

const char *bt_source_name(enum bt_source s)
{
    static const char *const names[] = {"cloudwatch", "quotas", "admission"};
    return (unsigned)s < BT_ARRAY_LEN(names) ? names[s] : "?";
}

const char *bt_endpoint_name(enum bt_endpoint e)
{
    return e == BT_EP_MANTLE ? "mantle" : "runtime";
}

const char *bt_inference_name(enum bt_inference i)
{
    static const char *const names[] = {"on-demand", "cross-region", "global",
                                        "latency-optimized", "provisioned"};
    return (unsigned)i < BT_ARRAY_LEN(names) ? names[i] : "?";
}

int bt_inference_by_name(const char *name)
{
    for (int i = 0; i < BT_INF_COUNT; i++)
        if (name && !strcmp(name, bt_inference_name((enum bt_inference)i)))
            return i;
    return -1;
}

static const char *const match_names[] = {NULL, "usage-metric", "code", "name", "config"};

const char *bt_quota_match_name(enum bt_quota_match m)
{
    return (unsigned)m < BT_ARRAY_LEN(match_names) ? match_names[m] : NULL;
}

int bt_quota_match_by_name(const char *name)
{
    for (size_t i = 1; name && i < BT_ARRAY_LEN(match_names); i++)
        if (!strcmp(name, match_names[i]))
            return (int)i;
    return -1;
}

const char *bt_quota_source_name(enum bt_quota_source s)
{
    static const char *const names[] = {"unknown", "service-quotas", "config", "default"};
    return (unsigned)s < BT_ARRAY_LEN(names) ? names[s] : "?";
}

const char *bt_quota_kind_name(enum bt_quota_kind k)
{
    static const char *const names[] = {"tpm", "rpm", "tpd", "input_tpm", "output_tpm",
                                        "reserved_input_tpm", "reserved_output_tpm",
                                        "tpd_account", "concurrent"};
    return (unsigned)k < BT_ARRAY_LEN(names) ? names[k] : "?";
}

struct bt_status_text {
    char error[BT_STATUS_ERROR_LEN];
    char implausible[BT_STATUS_IMPLAUSIBLE_LEN];
};

/* Points every status at its texts. */
static void status_link(struct bt_store *s)
{
    for (size_t i = 0; i < (size_t)s->slots * BT_SRC_COUNT; i++) {
        s->status[i].error = s->status_text[i].error;
        s->status[i].implausible = s->status_text[i].implausible;
    }
}

/* Every status empty, its texts "" (fresh zeroed pages: none is written before a
 * text is). */
static void status_reset(struct bt_store *s)
{
    size_t n = (size_t)(s->slots ? s->slots : 1) * BT_SRC_COUNT;
    memset(s->status, 0, n * sizeof *s->status);
    free(s->status_text);
    s->status_text = bt_xcalloc(n, sizeof *s->status_text);
    status_link(s);
}

void bt_store_init(struct bt_store *s, int nroutes, int history_minutes)
{
    memset(s, 0, sizeof *s);
    s->nroutes = nroutes;
    s->history = history_minutes > 2 ? history_minutes : 2;
    s->slots = nroutes;
    s->series = bt_xcalloc((size_t)(nroutes ? nroutes : 1) * BT_SIG_COUNT, sizeof *s->series);
    s->status = bt_xcalloc((size_t)(nroutes ? nroutes : 1) * BT_SRC_COUNT, sizeof *s->status);
    s->status_text = bt_xcalloc((size_t)(nroutes ? nroutes : 1) * BT_SRC_COUNT, sizeof *s->status_text);
    status_link(s);
}

/* Moves each signal's (or source's) run of `from` routes to its place in runs of `to`
 * (a new array of n * to, the rest zero). */
static void *relayout(void *a, size_t size, int n, int from, int to)
{
    char *b = bt_xcalloc((size_t)n * (size_t)(to ? to : 1), size);
    for (int k = 0; k < n && from > 0; k++)
        memcpy(b + (size_t)k * (size_t)to * size, (char *)a + (size_t)k * (size_t)from * size,
               (size_t)from * size);
    free(a);
    return b;
}

void bt_store_grow(struct bt_store *s, int slots)
{
    if (slots <= s->slots)
        return;
    s->series = relayout(s->series, sizeof *s->series, BT_SIG_COUNT, s->slots, slots);
    s->status = relayout(s->status, sizeof *s->status, BT_SRC_COUNT, s->slots, slots);
    s->status_text = relayout(s->status_text, sizeof *s->status_text, BT_SRC_COUNT, s->slots, slots);
    s->slots = slots;
    status_link(s);
}

/* ---- coverage ---- */

/* Disjoint, sorted spans of minutes [from, to): what polls asked, and the part of it
 * that was settled when asked. A poll asks a contiguous window, so a live series
 * holds one or two spans; at most COV_SPANS are kept (the oldest go). */
#define COV_SPANS 64
struct bt_span {
    int64_t from, to;
};
/* A list of cap 1 holds its span inline (u.one), a longer one on the heap (u.heap):
 * a check asks each series once, and a malloc of two spans for each of the ~16 a route
 * asked (both lists) was 1.5 kB a route of the peak. Read through spans(). */
struct bt_span_list {
    union {
        struct bt_span *heap; /* cap > 1 */
        struct bt_span one;   /* cap <= 1 */
    } u;
    int n, cap;
};
struct bt_cov_series {
    struct bt_span_list asked, settled;
};
struct bt_cov_rec {
    struct bt_coverage c;
    int64_t arrival;
};

struct bt_sum_memo {
    bool valid, exact;       /* exact: every value added so far was a whole number */
    uint64_t nsamples;       /* the store's then: any sample since may change a minute */
    int64_t from, through;   /* the minutes summed */
    int64_t vis;             /* the horizon they were summed at (INT64_MAX: everything) */
    int64_t hidden;          /* the oldest of them holding a value that had not arrived
                              * by vis (INT64_MAX: none): a later horizon may show it */
    double sum;
    int n;
};

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
#define MEMO_SLOTS 4

struct bt_newest_memo {
    bool valid;
    uint64_t nsamples;
    int64_t limit, vis;      /* the minute asked (at most the series' newest), the horizon */
    int64_t found;           /* the newest minute <= limit visible at vis (0: none) */
    int64_t hidden;          /* the oldest minute of (found, limit] holding a value that had
                              * not arrived by vis (INT64_MAX: none) */
};

static void memo_alloc(struct bt_store *s)
{
    free(s->sum_memo);
    free(s->newest_memo);
    s->sum_memo_routes = s->nroutes > 0 ? s->nroutes : 0;
    size_t n = (size_t)(s->sum_memo_routes ? s->sum_memo_routes : 1);
    s->sum_memo = bt_xcalloc(n * MEMO_SLOTS, sizeof *s->sum_memo);
    s->newest_memo = bt_xcalloc(n * BT_SIG_COUNT, sizeof *s->newest_memo);
}

static struct bt_span *spans(struct bt_span_list *l)
{
    return l->cap > 1 ? l->u.heap : &l->u.one;
}

static const struct bt_span *spans_c(const struct bt_span_list *l)
{
    return l->cap > 1 ? l->u.heap : &l->u.one;
}

static void span_add(struct bt_span_list *l, int64_t from, int64_t to, int64_t keep_after)
{
    if (to <= from)
        return;
    /* merge with every span it touches, then insert in order */
    struct bt_span *s = spans(l);
    int w = 0, at = -1;
    for (int i = 0; i < l->n; i++) {
        struct bt_span x = s[i];
        if (x.to < from || x.from > to) {
            if (x.from > to && at < 0)
                at = w;
            s[w++] = x;
            continue;
        }
        from = x.from < from ? x.from : from;
        to = x.to > to ? x.to : to;
    }
    l->n = w;
    if (at < 0)
        at = l->n;
    if (l->n == l->cap) {
        int cap = l->cap ? l->cap * 2 : 1;
        if (cap > 1) {
            struct bt_span *h = l->cap > 1 ? l->u.heap : NULL;
            h = bt_xrealloc(h, (size_t)cap * sizeof *h);
            if (l->cap <= 1 && l->n)
                h[0] = l->u.one; /* the inline span moves out */
            l->u.heap = h;
        }
        l->cap = cap;
        s = spans(l);
    }
    memmove(s + at + 1, s + at, (size_t)(l->n - at) * sizeof *s);
    s[at] = (struct bt_span){from, to};
    l->n++;
    /* the history: spans that end before it go, and past COV_SPANS the oldest */
    int drop = 0;
    while (drop < l->n && (s[drop].to <= keep_after || l->n - drop > COV_SPANS))
        drop++;
    if (drop) {
        memmove(s, s + drop, (size_t)(l->n - drop) * sizeof *s);
        l->n -= drop;
    }
    if (l->n && s[0].from < keep_after)
        s[0].from = keep_after;
}

static bool span_has(const struct bt_span_list *l, int64_t m)
{
    const struct bt_span *s = spans_c(l);
    for (int i = l->n - 1; i >= 0; i--) {
        if (s[i].from <= m)
            return m < s[i].to;
    }
    return false;
}

static void cov_free(struct bt_store *s)
{
    for (size_t i = 0; s->cov && i < (size_t)s->slots * BT_SIG_COUNT; i++) {
        if (s->cov[i].asked.cap > 1)
            free(s->cov[i].asked.u.heap);
        if (s->cov[i].settled.cap > 1)
            free(s->cov[i].settled.u.heap);
    }
    free(s->cov);
    s->cov = NULL;
}

static void cov_apply(struct bt_store *s, const struct bt_coverage *c)
{
    if (!s->cov)
        s->cov = bt_xcalloc((size_t)(s->slots ? s->slots : 1) * BT_SIG_COUNT, sizeof *s->cov);
    int64_t from = bt_minute_floor(c->from), to = bt_minute_floor(c->to);
    int64_t st = c->settled_to < to ? bt_minute_floor(c->settled_to) : to;
    for (int sig = 0; sig < BT_SIG_COUNT; sig++) {
        if (!(c->signals & BT_SIG_BIT(sig)))
            continue;
        struct bt_cov_series *cs = &s->cov[(size_t)sig * (size_t)s->slots + (size_t)c->route];
        /* the newest minute asked decides what the history still holds */
        int64_t newest = cs->asked.n ? spans(&cs->asked)[cs->asked.n - 1].to : to;
        newest = newest > to ? newest : to;
        int64_t keep = newest - (int64_t)s->history * 60;
        span_add(&cs->asked, from, to, keep);
        span_add(&cs->settled, from, st, keep);
    }
}

void bt_store_cover(struct bt_store *s, const struct bt_coverage *c, int64_t arrival)
{
    if (!c || c->route < 0 || c->route >= s->nroutes || c->to <= c->from || !c->signals)
        return;
    if (!s->cov_recorded)
        s->cov_recorded = bt_xcalloc((size_t)s->nroutes, sizeof *s->cov_recorded);
    s->cov_recorded[c->route] = true;
    if (s->track_arrival) {
        if (s->ncovlog == s->capcovlog) {
            s->capcovlog = s->capcovlog ? s->capcovlog * 2 : 256;
            s->covlog = bt_xrealloc(s->covlog, s->capcovlog * sizeof *s->covlog);
        }
        if (s->ncovlog && arrival < s->covlog[s->ncovlog - 1].arrival)
            s->covlog_unsorted = true;
        s->covlog[s->ncovlog++] = (struct bt_cov_rec){*c, arrival};
    }
    if (!s->horizon || arrival <= s->horizon) {
        cov_apply(s, c);
        if (s->track_arrival && s->covlog_applied == s->ncovlog - 1)
            s->covlog_applied = s->ncovlog;
    }
    if (s->tap.coverage)
        s->tap.coverage(s->tap.arg, c, arrival);
    s->generation++;
}

bool bt_store_cover_recorded(const struct bt_store *s, int route)
{
    return s->cov_recorded && route >= 0 && route < s->nroutes && s->cov_recorded[route];
}

static const struct bt_cov_series *cov_of(const struct bt_store *s, int route, enum bt_signal sig)
{
    if (!s->cov || route < 0 || route >= s->nroutes || (unsigned)sig >= BT_SIG_COUNT)
        return NULL;
    return &s->cov[(size_t)sig * (size_t)s->slots + (size_t)route];
}

enum bt_cover bt_store_covered(const struct bt_store *s, int route, enum bt_signal sig,
                               int64_t minute)
{
    const struct bt_cov_series *cs = cov_of(s, route, sig);
    if (!cs)
        return BT_COV_NONE;
    minute = bt_minute_floor(minute);
    if (span_has(&cs->settled, minute))
        return BT_COV_SETTLED;
    return span_has(&cs->asked, minute) ? BT_COV_ASKED : BT_COV_NONE;
}

int64_t bt_store_covered_newest(const struct bt_store *s, int route, enum bt_signal sig,
                                int64_t limit)
{
    const struct bt_cov_series *cs = cov_of(s, route, sig);
    limit = bt_minute_floor(limit);
    for (int i = cs ? cs->settled.n - 1 : -1; i >= 0; i--) {
        const struct bt_span *x = &spans_c(&cs->settled)[i];
        if (x->from <= limit)
            return limit < x->to ? limit : x->to - 60;
    }
    return 0;
}

int bt_store_covered_count(const struct bt_store *s, int route, enum bt_signal sig, int64_t from,
                           int n)
{
    int c = 0;
    for (int i = 0; i < n; i++)
        c += bt_store_covered(s, route, sig, from + 60 * (int64_t)i) == BT_COV_SETTLED;
    return c;
}

static void span_copy(struct bt_span_list *d, const struct bt_span_list *src)
{
    *d = *src; /* an inline span comes with it */
    if (src->cap > 1) {
        d->u.heap = bt_xmalloc((size_t)src->cap * sizeof *d->u.heap);
        if (src->n)
            memcpy(d->u.heap, src->u.heap, (size_t)src->n * sizeof *d->u.heap);
    }
}

/* dst's coverage becomes a deep copy of src's */
static void copy_coverage(struct bt_store *dst, const struct bt_store *src)
{
    size_t n = (size_t)src->nroutes, ns = (size_t)src->slots;
    dst->cov = NULL;
    dst->cov_recorded = NULL;
    dst->covlog = NULL;
    dst->ncovlog = dst->capcovlog = dst->covlog_applied = 0;
    if (src->cov_recorded) {
        dst->cov_recorded = bt_xcalloc(n ? n : 1, sizeof *dst->cov_recorded);
        memcpy(dst->cov_recorded, src->cov_recorded, n * sizeof *dst->cov_recorded);
    }
    if (src->cov) {
        dst->cov = bt_xcalloc((ns ? ns : 1) * BT_SIG_COUNT, sizeof *dst->cov);
        for (size_t i = 0; i < ns * BT_SIG_COUNT; i++) {
            span_copy(&dst->cov[i].asked, &src->cov[i].asked);
            span_copy(&dst->cov[i].settled, &src->cov[i].settled);
        }
    }
}

void bt_store_clone(struct bt_store *d, const struct bt_store *s)
{
    *d = *s;
    d->tap = (struct bt_store_tap){0};
    d->log = NULL;
    d->nlog = d->caplog = 0;
    /* the rates are already samples; the series' last readings stay the original's
     * (shared, they were freed twice: plan on any admission counters crashed) */
    d->counters = NULL;
    d->series_store = NULL; /* the per-series values too (core/shares.c): the original's */
    /* replay's shared arrival offsets and running day sums are the original's: the
     * copy's series get their own offsets (bt_series_copy), and its sums are summed
     * afresh (the copy's series are about to change: none of the original's hold) */
    d->arr_pool = NULL;
    d->narr_pool = 0;
    d->sum_memo = NULL;
    d->newest_memo = NULL;
    d->sum_memo_routes = 0;
    size_t ns = (size_t)(s->slots ? s->slots : 1) * BT_SIG_COUNT;
    d->series = bt_xcalloc(ns, sizeof *d->series);
    for (size_t i = 0; i < ns && s->slots; i++)
        bt_series_copy(&d->series[i], &s->series[i]);
    size_t nst = (size_t)(s->slots ? s->slots : 1) * BT_SRC_COUNT;
    d->status = bt_xmalloc(nst * sizeof *d->status);
    memcpy(d->status, s->status, nst * sizeof *d->status);
    d->status_text = bt_xmalloc(nst * sizeof *d->status_text);
    memcpy(d->status_text, s->status_text, nst * sizeof *d->status_text);
    status_link(d);
    copy_coverage(d, s);
}

void bt_store_view(struct bt_store *v, const struct bt_store *s)
{
    *v = *s;
    v->view = true;
    v->tap = (struct bt_store_tap){0};
    v->readings_free = NULL;
    /* its own horizon: nothing applied, the first seek rebuilds from the log */
    v->horizon = 0;
    v->hz_valid = false;
    v->hz_next = v->hz_nlog = 0;
    v->hz_gen = 0;
    v->hz_routes = v->hz_base = NULL;
    v->routes = NULL;
    size_t nst = (size_t)(s->slots ? s->slots : 1) * BT_SRC_COUNT;
    v->status = bt_xcalloc(nst, sizeof *v->status);
    v->status_text = bt_xcalloc(nst, sizeof *v->status_text);
    status_link(v);
    if (s->track_arrival) {
        v->cov = NULL; /* applied from the shared records up to each horizon */
        v->covlog_applied = 0;
    } else {
        copy_coverage(v, s); /* no records to apply: s's coverage as it is, its own */
        free(v->cov_recorded);
        v->cov_recorded = s->cov_recorded; /* taken once, never by a horizon: s's */
    }
    v->sum_memo = NULL;
    v->newest_memo = NULL;
    v->sum_memo_routes = 0;
    if (s->sum_memo)
        memo_alloc(v);
}

/* What a view (bt_store_view) owns, freed; the rest is its original's. */
static void view_free(struct bt_store *v)
{
    cov_free(v);
    free(v->status);
    free(v->status_text);
    free(v->sum_memo);
    free(v->newest_memo);
    memset(v, 0, sizeof *v);
}

void bt_store_track_arrival(struct bt_store *s)
{
    s->track_arrival = true;
    memo_alloc(s);
}

void bt_store_clear(struct bt_store *s)
{
    for (size_t i = 0; i < (size_t)s->slots * BT_SIG_COUNT; i++) {
        free(s->series[i].f);
        free(s->series[i].d);
        if (!s->series[i].arr_shared) {
            free(s->series[i].arr16);
            free(s->series[i].arr);
        }
        s->series[i] = (struct bt_series){0};
    }
    for (size_t i = 0; i < s->narr_pool; i++)
        free(s->arr_pool[i]);
    free(s->arr_pool);
    s->arr_pool = NULL;
    s->narr_pool = 0;
    free(s->log);
    s->log = NULL;
    s->nlog = s->caplog = 0;
    cov_free(s);
    free(s->cov_recorded);
    s->cov_recorded = NULL;
    free(s->covlog);
    s->covlog = NULL;
    s->ncovlog = s->capcovlog = s->covlog_applied = 0;
    s->covlog_unsorted = false;
    if (s->readings_free)
        s->readings_free(s); /* bt_counters_free: core/counters.c's */
    if (s->sum_memo)
        memset(s->sum_memo, 0, (size_t)s->sum_memo_routes * MEMO_SLOTS * sizeof *s->sum_memo);
    if (s->newest_memo)
        memset(s->newest_memo, 0, (size_t)s->sum_memo_routes * BT_SIG_COUNT * sizeof *s->newest_memo);
    status_reset(s);
    s->nevents = 0;
    s->nsamples = 0;
    s->generation++;
}

void bt_store_free(struct bt_store *s)
{
    if (s->view) {
        view_free(s);
        return;
    }
    if (!s->series)
        return;
    bt_store_clear(s);
    free(s->series);
    free(s->status);
    free(s->status_text);
    s->status_text = NULL;
    free(s->sum_memo);
    free(s->newest_memo);
    s->sum_memo = NULL;
    s->newest_memo = NULL;
    s->sum_memo_routes = 0;
    s->series = NULL;
    s->status = NULL;
}

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

uint64_t bt_store_generation(const struct bt_store *s)
{
    return s->generation;
}

void bt_store_event(struct bt_store *s, const struct bt_event *ev)
{
    s->events[s->nevents % BT_EVENT_RING] = *ev;
    s->nevents++;
    s->generation++;
    if (s->track_arrival) {
        if (s->nlog == s->caplog) {
            s->caplog = s->caplog ? s->caplog * 2 : 256;
            s->log = bt_xrealloc(s->log, s->caplog * sizeof *s->log);
        }
        s->log[s->nlog++] = *ev;
    }
    if (s->tap.event)
        s->tap.event(s->tap.arg, ev);
}

const struct bt_event *bt_store_event_at(const struct bt_store *s, uint64_t i)
{
    if (i >= s->nevents || s->nevents - i > BT_EVENT_RING)
        return NULL;
    return &s->events[i % BT_EVENT_RING];
}

/* Precedence of quota sources: config beats the account's applied value,
 * which beats a published default. */
int bt_quota_rank(enum bt_quota_source q)
{
    switch (q) {
    case BT_QS_CONFIG: return 3;
    case BT_QS_SERVICE_QUOTAS: return 2;
    case BT_QS_DEFAULT: return 1;
    default: return 0;
    }
}

static void apply_event(struct bt_store *s, struct bt_route *routes, const struct bt_event *ev,
                        int64_t *defer);

static void apply_status(struct bt_store *s, int route, const struct bt_event *ev)
{
    struct bt_source_status *st = bt_store_status(s, route, ev->source);
    if (!st)
        return;
    if (ev->type == BT_EV_OK) {
        st->last_ok = ev->t;
        st->last_error = 0;
        if (st->error[0]) /* "" over "": unwritten, the text's page stays unused */
            st->error[0] = '\0';
    } else {
        st->last_error = ev->t;
        bt_strlcpy(st->error, ev->text, BT_STATUS_ERROR_LEN);
    }
}

const char *bt_setting_name(enum bt_setting k)
{
    static const char *const names[] = {"max_tokens", "burndown", "base_model", "inference",
                                        "identity", "lifecycle", "profile"};
    return (unsigned)k < BT_ARRAY_LEN(names) ? names[k] : "?";
}

int bt_setting_by_name(const char *name)
{
    for (int k = 0; name && k < BT_SET_COUNT; k++)
        if (!strcmp(bt_setting_name((enum bt_setting)k), name))
            return k;
    return -1;
}

bool bt_setting_is_number(enum bt_setting k)
{
    return k == BT_SET_MAX_TOKENS || k == BT_SET_BURNDOWN;
}

/* A BT_EV_SETTING applied to its route; a value out of bounds is not taken. */
static void apply_setting(struct bt_route *r, const struct bt_event *ev)
{
    /* "measured": a poller's measured value read back (--source) */
    static const char *const bsrc[] = {"config", "measured", "table", "family", "default"};
    switch (ev->setting) {
    case BT_SET_MAX_TOKENS:
        if (bt_sample_plausible(BT_SIG_ADM_MAX_TOKENS, ev->value, NULL, 0) && ev->value > 0)
            r->max_tokens = ev->value;
        break;
    case BT_SET_BURNDOWN:
        if (r->endpoint == BT_EP_MANTLE || !isfinite(ev->value) || ev->value < 1 || ev->value > 1000)
            break; /* mantle has none */
        /* the catalogue's prior for the model learned at run time; a steady
         * measurement may still win (bt_route_burndown_settle) */
        r->burndown_prior = ev->value;
        r->burndown_prior_source = "default";
        for (size_t i = 0; i < BT_ARRAY_LEN(bsrc); i++)
            if (!strcmp(ev->str, bsrc[i]))
                r->burndown_prior_source = bsrc[i];
        /* the event's text names the table row it came from ("" for none) */
        bt_strlcpy(r->burndown_row, strcmp(r->burndown_prior_source, "default") ? ev->text : "",
                   sizeof r->burndown_row);
        r->burndown = r->burndown_prior;
        r->burndown_source = r->burndown_prior_source;
        r->burndown_verified = !strcmp(r->burndown_source, "table") || !strcmp(r->burndown_source, "measured");
        break;
    case BT_SET_BASE_MODEL:
        bt_strlcpy(r->base_model, ev->str, sizeof r->base_model);
        break;
    case BT_SET_INFERENCE: {
        int i = bt_inference_by_name(ev->str);
        if (i >= 0)
            r->inference = (enum bt_inference)i;
        break;
    }
    case BT_SET_IDENTITY:
        bt_strlcpy(r->identity, ev->str, sizeof r->identity);
        break;
    case BT_SET_LIFECYCLE:
        bt_strlcpy(r->lifecycle, !strcmp(ev->str, "ACTIVE") || !strcmp(ev->str, "LEGACY") ? ev->str : "",
                   sizeof r->lifecycle);
        bt_strlcpy(r->lifecycle_text, ev->text, sizeof r->lifecycle_text);
        break;
    case BT_SET_PROFILE:
        bt_strlcpy(r->profile_check, ev->str, sizeof r->profile_check);
        bt_strlcpy(r->profile_text, ev->text, sizeof r->profile_text);
        break;
    default:
        break;
    }
}

/* 1.x recordings only (BT_EVCODE_BASE_MODEL): the prose those files carry. */
static void apply_base_model(struct bt_route *r, const char *text)
{
    char model[192], inf[16];
    double burndown;
    if (sscanf(text, "base model %191[^,], %15[^,], burndown %lf", model, inf, &burndown) != 3 ||
        !isfinite(burndown) || burndown < 1 || burndown > 1000)
        return;
    int i = bt_inference_by_name(inf);
    if (i >= 0)
        r->inference = (enum bt_inference)i;
    bt_strlcpy(r->base_model, model, sizeof r->base_model);
    r->burndown = r->burndown_prior = burndown;
}

/* BT_EVCODE_TAG / BT_EVCODE_TAG_UNKNOWN: what the profile's tag says (core/shares.c). */
static void apply_tag(struct bt_route *r, const struct bt_event *ev)
{
    if (!strcmp(ev->code, BT_EVCODE_TAG)) {
        bt_strlcpy(r->tag, ev->text, sizeof r->tag);
        r->tag_reason[0] = '\0';
    } else if (!strcmp(ev->code, BT_EVCODE_TAG_UNKNOWN)) {
        r->tag[0] = '\0';
        bt_strlcpy(r->tag_reason, ev->text, sizeof r->tag_reason);
    }
}

static void record_apply(struct bt_store *s, struct bt_route *routes, const struct bt_event *ev)
{
    bt_store_event(s, ev);
    apply_event(s, routes, ev, NULL);
}

/* The error an OK becomes for route r when its poll brought a value out of
 * bounds; false when none did. */
static bool implausible_error(struct bt_store *s, int r, const struct bt_event *ok,
                              struct bt_event *err)
{
    struct bt_source_status *st = bt_store_status(s, r, ok->source);
    if (!st || !st->implausible[0])
        return false;
    *err = *ok;
    err->type = BT_EV_ERROR;
    err->route = r;
    bt_strlcpy(err->code, "Implausible", sizeof err->code);
    bt_strlcpy(err->text, st->implausible, sizeof err->text);
    st->implausible[0] = '\0';
    return true;
}

void bt_model_event(struct bt_store *s, struct bt_route *routes, const struct bt_event *ev)
{
    struct bt_event e;
    char why[160];
    /* a quota event of NAN says why the quota is unknown (collectors/quota_collect.c) */
    if (ev->type == BT_EV_QUOTA && ev->route >= 0 && !isnan(ev->value) &&
        !bt_quota_plausible(ev->quota_kind, ev->value, why, sizeof why)) {
        e = (struct bt_event){.t = ev->t, .type = BT_EV_ERROR, .route = ev->route,
                              .source = BT_SRC_QUOTAS};
        bt_strlcpy(e.code, "Implausible", sizeof e.code);
        snprintf(e.text, sizeof e.text, "implausible value: quota %s = %.9g: %s; not used",
                 bt_quota_kind_name(ev->quota_kind), ev->value, why);
        record_apply(s, routes, &e);
        return;
    }
    if (ev->type == BT_EV_OK && ev->route >= 0 && implausible_error(s, ev->route, ev, &e)) {
        record_apply(s, routes, &e);
        return;
    }
    if (ev->type == BT_EV_ERROR) {
        /* the poll failed anyway: that error is the reason, no later OK's */
        for (int r = ev->route < 0 ? 0 : ev->route; r < s->nroutes; r++) {
            struct bt_source_status *st = bt_store_status(s, r, ev->source);
            if (st && st->implausible[0])
                st->implausible[0] = '\0';
            if (ev->route >= 0)
                break;
        }
    }
    record_apply(s, routes, ev);
    if (ev->type == BT_EV_OK && ev->route < 0)
        for (int r = 0; r < s->nroutes; r++)
            if (implausible_error(s, r, ev, &e))
                record_apply(s, routes, &e);
}

/* Route r's steady burndown as a CloudWatch poll at t left it: measured from the
 * samples that had arrived by t, as apply_event does live. */
static void settle_at(struct bt_store *s, struct bt_route *routes, int r, int64_t t)
{
    int64_t hz = s->horizon;
    s->horizon = t;
    bt_route_burndown_settle(&routes[r], s, r, t);
    s->horizon = hz;
}

/* A seek's deferred settles (defer[r]: the time of route r's newest CloudWatch poll
 * not yet measured, 0 none). A settle rewrites all of the steady burndown from its
 * measurement and the route's prior, and only a setting or an info event changes the
 * prior: so of the settles between two of those only the last counts, and a seek
 * that applies a day of polls measures each route once, not once a poll. */
static void settle_deferred(struct bt_store *s, struct bt_route *routes, int64_t *defer, int r)
{
    if (defer && r >= 0 && r < s->nroutes && defer[r]) {
        settle_at(s, routes, r, defer[r]);
        defer[r] = 0;
    }
}

/* ev applied to routes; defer NULL: a CloudWatch poll's settle is measured now (live),
 * else it is deferred (a seek, settle_deferred) */
static void apply_event(struct bt_store *s, struct bt_route *routes, const struct bt_event *ev,
                        int64_t *defer)
{
    if (ev->type == BT_EV_INFO || ev->type == BT_EV_SETTING)
        settle_deferred(s, routes, defer, ev->route);
    switch (ev->type) {
    case BT_EV_QUOTA: {
        if (ev->route < 0 || ev->route >= s->nroutes || (unsigned)ev->quota_kind >= BT_Q_COUNT)
            break;
        struct bt_quota *q = &routes[ev->route].quota[ev->quota_kind];
        if (bt_quota_rank(ev->quota_source) < bt_quota_rank(q->source))
            break;
        q->value = ev->value;
        q->source = ev->quota_source;
        routes[ev->route].quota_adjustable[ev->quota_kind] = isnan(ev->value) ? BT_ADJ_UNKNOWN
                                                                              : ev->adjustable;
        routes[ev->route].quota_match[ev->quota_kind] = isnan(ev->value) ? BT_QM_NONE
                                                                         : ev->matched_by;
        bt_strlcpy(q->code, ev->code, sizeof q->code);
        bt_strlcpy(q->name, ev->text, sizeof q->name);
        break;
    }
    case BT_EV_INFO:
        if (ev->route >= 0 && ev->route < s->nroutes && !strcmp(ev->code, BT_EVCODE_BASE_MODEL))
            apply_base_model(&routes[ev->route], ev->text);
        if (ev->route >= 0 && ev->route < s->nroutes && !strcmp(ev->code, BT_EVCODE_LEGACY_MODEL))
            routes[ev->route].legacy_seen = true;
        if (ev->route >= 0 && ev->route < s->nroutes && !strcmp(ev->code, BT_EVCODE_UNSEEN_CALLERS)) {
            bt_strlcpy(routes[ev->route].unseen, ev->text, sizeof routes[ev->route].unseen);
            routes[ev->route].unseen_asked = true;
            routes[ev->route].unseen_failed[0] = '\0';
        }
        if (ev->route >= 0 && ev->route < s->nroutes && !strcmp(ev->code, BT_EVCODE_UNSEEN_FAILED))
            bt_strlcpy(routes[ev->route].unseen_failed, ev->text[0] ? ev->text : "failed",
                       sizeof routes[ev->route].unseen_failed);
        if (ev->route >= 0 && ev->route < s->nroutes)
            apply_tag(&routes[ev->route], ev);
        break;
    case BT_EV_SETTING:
        if (ev->route >= 0 && ev->route < s->nroutes)
            apply_setting(&routes[ev->route], ev);
        break;
    case BT_EV_OK:
    case BT_EV_ERROR:
        if (ev->route >= 0) {
            apply_status(s, ev->route, ev);
        } else {
            for (int r = 0; r < s->nroutes; r++)
                apply_status(s, r, ev);
        }
        /* a CloudWatch poll answered or failed: the steady burndown from the minutes
         * stored before it (the same whether the process saw the earlier polls or not) */
        for (int r = ev->route < 0 ? 0 : ev->route; ev->source == BT_SRC_CLOUDWATCH && r < s->nroutes; r++) {
            if (defer)
                defer[r] = ev->t;
            else
                bt_route_burndown_settle(&routes[r], s, r, ev->t);
            if (ev->route >= 0)
                break;
        }
        break;
    default:
        break;
    }
}

/* Coverage as it stood at t: the records answered by t (a seek forward over records in
 * arrival order adds the ones since; any other seek rebuilds). */
static void cov_to_horizon(struct bt_store *s, int64_t t)
{
    bool forward = !s->covlog_unsorted && s->covlog_applied <= s->ncovlog &&
                   (s->covlog_applied == 0 || !t || s->covlog[s->covlog_applied - 1].arrival <= t);
    if (!forward) {
        cov_free(s);
        s->covlog_applied = 0;
    }
    if (s->covlog_unsorted) {
        for (size_t i = 0; i < s->ncovlog; i++)
            if (!t || s->covlog[i].arrival <= t)
                cov_apply(s, &s->covlog[i].c);
    } else {
        size_t i = s->covlog_applied;
        for (; i < s->ncovlog && (!t || s->covlog[i].arrival <= t); i++)
            cov_apply(s, &s->covlog[i].c);
        s->covlog_applied = i;
    }
}

/* A seek's deferred settles: one time per route, none yet (NULL: no routes). */
static int64_t *defer_new(const struct bt_store *s)
{
    return s->nroutes > 0 ? bt_xcalloc((size_t)s->nroutes, sizeof(int64_t)) : NULL;
}

/* Every route's last deferred settle measured (in route order: each reads only its own
 * series), and the list freed. */
static void defer_flush(struct bt_store *s, struct bt_route *routes, int64_t *defer)
{
    for (int r = 0; defer && r < s->nroutes; r++)
        settle_deferred(s, routes, defer, r);
    free(defer);
}

void bt_store_set_horizon(struct bt_store *s, struct bt_route *routes,
                          const struct bt_route *base_routes, int64_t t)
{
    /* forward from the last horizon over a log in time order, with nothing else
     * changed since: the events in between continue the same sequence of applies */
    if (t && s->hz_valid && s->hz_sorted && s->horizon && t >= s->horizon &&
        s->generation == s->hz_gen && s->nlog == s->hz_nlog && s->hz_routes == routes &&
        s->hz_base == base_routes) {
        size_t i = s->hz_next;
        int64_t *defer = defer_new(s);
        for (; i < s->nlog && s->log[i].t <= t; i++) {
            s->horizon = s->log[i].t;
            apply_event(s, routes, &s->log[i], defer);
        }
        defer_flush(s, routes, defer);
        s->hz_next = i;
        s->horizon = t;
        cov_to_horizon(s, t);
        s->generation++;
        s->hz_gen = s->generation;
        return;
    }
    s->horizon = t;
    status_reset(s);
    for (int r = 0; r < s->nroutes; r++) {
        memcpy(routes[r].quota, base_routes[r].quota, sizeof routes[r].quota);
        memcpy(routes[r].quota_match, base_routes[r].quota_match, sizeof routes[r].quota_match);
        /* what events change besides quotas: the settings learned at run time */
        bt_strlcpy(routes[r].base_model, base_routes[r].base_model, sizeof routes[r].base_model);
        bt_strlcpy(routes[r].identity, base_routes[r].identity, sizeof routes[r].identity);
        routes[r].inference = base_routes[r].inference;
        routes[r].burndown = base_routes[r].burndown;
        routes[r].burndown_source = base_routes[r].burndown_source;
        routes[r].burndown_prior = base_routes[r].burndown_prior;
        routes[r].burndown_prior_source = base_routes[r].burndown_prior_source;
        routes[r].burndown_verified = base_routes[r].burndown_verified;
        routes[r].burndown_steady = base_routes[r].burndown_steady;
        routes[r].burndown_steady_minutes = base_routes[r].burndown_steady_minutes;
        bt_strlcpy(routes[r].burndown_row, base_routes[r].burndown_row, sizeof routes[r].burndown_row);
        routes[r].max_tokens = base_routes[r].max_tokens;
        routes[r].legacy_seen = base_routes[r].legacy_seen;
        bt_strlcpy(routes[r].unseen, base_routes[r].unseen, sizeof routes[r].unseen);
        routes[r].unseen_asked = base_routes[r].unseen_asked;
        bt_strlcpy(routes[r].unseen_failed, base_routes[r].unseen_failed,
                   sizeof routes[r].unseen_failed);
        memcpy(routes[r].lifecycle, base_routes[r].lifecycle, sizeof routes[r].lifecycle);
        memcpy(routes[r].lifecycle_text, base_routes[r].lifecycle_text, sizeof routes[r].lifecycle_text);
        memcpy(routes[r].profile_check, base_routes[r].profile_check, sizeof routes[r].profile_check);
        memcpy(routes[r].profile_text, base_routes[r].profile_text, sizeof routes[r].profile_text);
    }
    /* each event sees the samples that had arrived when it did, as live: a steady
     * burndown (bt_route_burndown_settle) is measured from those, not later ones */
    bool sorted = true;
    size_t next = 0; /* with the log in time order: the first event after t */
    int64_t *defer = defer_new(s);
    for (size_t i = 0; i < s->nlog; i++) {
        if (i && s->log[i].t < s->log[i - 1].t)
            sorted = false;
        if (!t || s->log[i].t <= t) {
            s->horizon = s->log[i].t;
            apply_event(s, routes, &s->log[i], defer);
            if (sorted)
                next = i + 1;
        }
    }
    defer_flush(s, routes, defer);
    s->horizon = t;
    cov_to_horizon(s, t);
    s->generation++;
    s->hz_valid = t != 0;
    s->hz_sorted = sorted;
    s->hz_next = next;
    s->hz_nlog = s->nlog;
    s->hz_gen = s->generation;
    s->hz_routes = routes;
    s->hz_base = base_routes;
}

void bt_store_bind_routes(struct bt_store *s, struct bt_route *routes)
{
    s->routes = routes;
}

void bt_store_apply(struct bt_store *s, const struct bt_event *ev)
{
    if (s->routes)
        bt_model_event(s, s->routes, ev);
    else
        bt_store_event(s, ev);
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
