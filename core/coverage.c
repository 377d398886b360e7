/* Coverage (core/coverage.h): the minutes polls asked for and the part of them settled
 * when asked, per route and signal, and a replay's records of it applied up to the
 * horizon. Beneath the rest of the store: it calls nothing of it. */
#include "core/coverage.h"

#include <stdlib.h>
#include <string.h>

#include "core/store_int.h"
#include "core/util.h"

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

void bt_cov_free(struct bt_store *s)
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
void bt_copy_coverage(struct bt_store *dst, const struct bt_store *src)
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

/* Coverage as it stood at t: the records answered by t (a seek forward over records in
 * arrival order adds the ones since; any other seek rebuilds). */
void bt_cov_to_horizon(struct bt_store *s, int64_t t)
{
    bool forward = !s->covlog_unsorted && s->covlog_applied <= s->ncovlog &&
                   (s->covlog_applied == 0 || !t || s->covlog[s->covlog_applied - 1].arrival <= t);
    if (!forward) {
        bt_cov_free(s);
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
