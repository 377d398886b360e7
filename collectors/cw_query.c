/* CloudWatch, the queries of a poll: which per-minute queries go in it (the adaptive
 * cadence's parts), which of them are the same query (interned keys, one sort), the
 * wire queries sent and what they cost (collectors/cw_int.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/cloudwatch.h"
#include "collectors/cw_int.h"
#include "core/cadence.h"

bool bt_cloudwatch_signal_detail(enum bt_signal s)
{
    return s == BT_SIG_LATENCY_P50 || s == BT_SIG_LATENCY_P90 || s == BT_SIG_LATENCY_P99 ||
           s == BT_SIG_CLIENT_ERRORS || s == BT_SIG_SERVER_ERRORS || s == BT_SIG_TTFT_AVG ||
           s == BT_SIG_ESTIMATED_TPM;
}

/* Which part of a poll a per-minute query q[i] goes in: -1 not this poll, 0 with the
 * queries reaching back to the last poll, 1 with those that backfill minutes (the
 * 5-minute tier, a calm route's per-minute signals): one StartTime per request, so
 * the two share requests only when their windows agree. all: every query, in part 0
 * (the cost count). */
static int wire_part(const struct cw_group *g, int i, bool detail, bool all)
{
    const struct bt_cw_query *x = &g->q[i];
    const struct cw *cw = g->cw;
    if (all)
        return 0;
    if (bt_cloudwatch_signal_detail(x->signal))
        return detail ? 1 : -1;
    if (x->signal == BT_SIG_THROTTLES)
        return 0; /* every route, every poll: a throttle is seen within a minute */
    if (!cw->due[x->route])
        return -1;
    return cw->slow[x->route] ? 1 : 0;
}

/* ---- which queries are the same one ----
 * At 20,000 routes a group has ~320,000 queries; sorting them with string
 * compares (three sorts a rebuild) was most of start-up. Each string is interned
 * once (a hash table: equal text, equal number), every query becomes a tuple of
 * integers, and one sort of those tuples numbers the distinct queries (kinds);
 * a poll's dedup is then a linear pass over the kinds. */

enum { KEY_NS, KEY_METRIC, KEY_STAT, KEY_PERIOD, KEY_MODEL, KEY_ACCOUNT, KEY_SUM, KEY_N };

struct interner {
    const char **str;
    int *id;
    size_t mask;             /* slots - 1 (a power of two, at least twice n) */
    int n;
};

static uint32_t str_hash(const char *s)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        h = (h ^ *p) * 16777619u;
    return h;
}

static void intern_init(struct interner *t, size_t slots)
{
    t->str = bt_xcalloc(slots, sizeof *t->str);
    t->id = bt_xcalloc(slots, sizeof *t->id);
    t->mask = slots - 1;
}

/* The slot holding s, or the empty one where it goes. */
static size_t intern_slot(const struct interner *t, const char *s)
{
    size_t i = str_hash(s) & t->mask;
    while (t->str[i] && t->str[i] != s && strcmp(t->str[i], s) != 0)
        i = (i + 1) & t->mask;
    return i;
}

static int intern(struct interner *t, const char *s)
{
    size_t i = intern_slot(t, s);
    if (t->str[i])
        return t->id[i];
    if ((size_t)(t->n + 1) * 2 > t->mask + 1) { /* half full: twice the slots */
        struct interner u = {.n = t->n};
        intern_init(&u, (t->mask + 1) * 2);
        for (size_t k = 0; k <= t->mask; k++)
            if (t->str[k]) {
                size_t j = intern_slot(&u, t->str[k]);
                u.str[j] = t->str[k];
                u.id[j] = t->id[k];
            }
        free(t->str);
        free(t->id);
        *t = u;
        i = intern_slot(t, s);
    }
    t->str[i] = s;
    return t->id[i] = t->n++;
}

/* intern() with the previous string of the same field remembered: a route's queries
 * share its model and most queries the same namespace and statistic pointers. */
struct memo {
    const char *p;
    int id;
};
static int intern_memo(struct interner *t, struct memo *m, const char *s)
{
    if (m->p != s) {
        m->id = intern(t, s);
        m->p = s;
    }
    return m->id;
}

static const int *sort_keys; /* qsort context: KEY_N integers per position */
static int tuple_cmp(const void *a, const void *b)
{
    int i = *(const int *)a, j = *(const int *)b;
    const int *x = sort_keys + (size_t)i * KEY_N, *y = sort_keys + (size_t)j * KEY_N;
    for (int k = 0; k < KEY_N; k++)
        if (x[k] != y[k])
            return x[k] < y[k] ? -1 : 1;
    return (i > j) - (i < j);
}

/* kind[k] for q[idx[k]], k < n: equal for queries asking the same (namespace,
 * metric, stat, period, dimension value, account, summed sets); returns how many
 * kinds. */
static int query_kinds(const struct bt_route *routes, const struct bt_cw_query *q, const int *idx,
                       int n, int *kind)
{
    struct interner t = {0};
    intern_init(&t, 256);
    int *key = bt_xcalloc((size_t)(n ? n : 1) * KEY_N, sizeof *key);
    int *ord = bt_xcalloc((size_t)(n ? n : 1), sizeof *ord);
    struct memo memo[KEY_N] = {{0}};
    for (int k = 0; k < n; k++) {
        const struct bt_cw_query *x = &q[idx[k]];
        const struct bt_route *rt = &routes[x->route];
        int *kk = key + (size_t)k * KEY_N;
        kk[KEY_NS] = intern_memo(&t, &memo[KEY_NS], x->ns);
        kk[KEY_METRIC] = intern_memo(&t, &memo[KEY_METRIC], x->metric);
        kk[KEY_STAT] = intern_memo(&t, &memo[KEY_STAT], x->stat);
        kk[KEY_PERIOD] = x->period;
        kk[KEY_MODEL] = intern_memo(&t, &memo[KEY_MODEL], rt->model);
        kk[KEY_ACCOUNT] = intern_memo(&t, &memo[KEY_ACCOUNT], rt->account);
        kk[KEY_SUM] = intern_memo(&t, &memo[KEY_SUM], x->sumkey ? x->sumkey : "");
        ord[k] = k;
    }
    sort_keys = key;
    qsort(ord, (size_t)n, sizeof *ord, tuple_cmp);
    int kinds = 0;
    for (int k = 0; k < n; k++) {
        if (k > 0 && memcmp(key + (size_t)ord[k] * KEY_N, key + (size_t)ord[k - 1] * KEY_N,
                            KEY_N * sizeof *key) != 0)
            kinds++;
        kind[ord[k]] = kinds;
    }
    free(ord);
    free(key);
    free(t.str);
    free(t.id);
    return n ? kinds + 1 : 0;
}

/* rep[idx[k]] = the lowest index among idx[0..n) of its kind (kind_of[k]); returns
 * the number of distinct ones. */
static int dedup_kinds(const int *kind_of, int nkinds, const int *idx, int n, int *rep)
{
    int *first = bt_xmalloc((size_t)(nkinds ? nkinds : 1) * sizeof *first);
    for (int k = 0; k < nkinds; k++)
        first[k] = -1;
    int distinct = 0;
    for (int k = 0; k < n; k++) {
        int i = idx[k], kd = kind_of[k];
        if (first[kd] < 0 || first[kd] > i) {
            distinct += first[kd] < 0;
            first[kd] = i;
        }
    }
    for (int k = 0; k < n; k++)
        rep[idx[k]] = first[kind_of[k]];
    free(first);
    return distinct;
}

int bt_cloudwatch_dedup(const struct bt_route *routes, const struct bt_cw_query *q,
                        const int *idx, int n, int *rep)
{
    int *kind = bt_xcalloc((size_t)(n ? n : 1), sizeof *kind);
    int nk = query_kinds(routes, q, idx, n, kind);
    int d = dedup_kinds(kind, nk, idx, n, rep);
    free(kind);
    return d;
}

/* The wire queries of q[from, to) that are due (part: wire_part's, -1 every one),
 * appended to the group's poll. */
static void add_wire(struct cw_group *g, int from, int to, int part, bool detail, bool all,
                     int *rep, int *pos)
{
    int *idx = bt_xcalloc((size_t)(to - from + 1), sizeof *idx);
    int *kind = bt_xcalloc((size_t)(to - from + 1), sizeof *kind);
    int n = 0;
    for (int i = from; i < to; i++)
        if (part < 0 || wire_part(g, i, detail, all) == part) {
            kind[n] = g->kind[i];
            idx[n++] = i;
        }
    dedup_kinds(kind, g->nkinds, idx, n, rep);
    free(kind);
    int w0 = g->nwire;
    for (int k = 0; k < n; k++) {
        int i = idx[k];
        if (rep[i] != i)
            continue;
        pos[i] = g->nwire;
        g->wire[g->nwire] = i;
        g->mcount[g->nwire] = 0;
        g->nwire++;
    }
    for (int k = 0; k < n; k++)
        g->mcount[pos[rep[idx[k]]]]++;
    int at = g->nwire > w0 ? g->mfirst[w0] : 0;
    for (int w = w0; w < g->nwire; w++) {
        g->mfirst[w] = at;
        at += g->mcount[w];
        g->mcount[w] = 0;
    }
    for (int k = 0; k < n; k++) {
        int w = pos[rep[idx[k]]];
        g->member[g->mfirst[w] + g->mcount[w]++] = idx[k];
    }
    /* the next range's members start after these */
    if (g->nwire > w0)
        g->mfirst[g->nwire] = g->mfirst[g->nwire - 1] + g->mcount[g->nwire - 1];
    free(idx);
}

/* This poll's distinct queries: the per-minute ones from the last poll on, those
 * that backfill (the detail ones when due, calm routes' when due), then the day
 * sums. all: every query (what each costs, counted once). */
void cw_build_wire(struct cw_group *g, bool detail, bool all)
{
    struct cw *cw = g->cw;
    int *rep = bt_xcalloc((size_t)g->nq + 1, sizeof *rep);
    int *pos = bt_xcalloc((size_t)g->nq + 1, sizeof *pos);
    g->nwire = 0;
    g->mfirst[0] = 0;
    g->detail_now = detail;
    add_wire(g, 0, g->nq_min, 0, detail, all, rep, pos);
    g->nwire_recent = g->nwire;
    add_wire(g, 0, g->nq_min, 1, detail, all, rep, pos);
    g->nwire_min = g->nwire;
    add_wire(g, g->nq_min, g->nq, -1, detail, all, rep, pos);
    for (int w = 0; w < g->nwire; w++) {
        const struct bt_cw_query *x = &g->q[g->wire[w]];
        cw->wire_of[cw_wire_slot(x->route, x->signal, x->alt)] = w;
    }
    free(rep);
    free(pos);
}

void cw_free_queries(struct cw_group *g)
{
    free(g->kind);
    free(g->wire);
    free(g->mfirst);
    free(g->mcount);
    free(g->member);
    g->kind = NULL;
    g->wire = g->mfirst = g->mcount = g->member = NULL;
}

void cw_build_queries(struct cw_group *g)
{
    struct cw *cw = g->cw;
    const struct bt_route *routes = cw->ctx->cfg->routes;
    size_t cap = (size_t)g->ag->nroutes * (BT_SIG_COUNT + 4) + 1;
    free(g->q);
    g->q = bt_xcalloc(cap, sizeof *g->q);
    g->nq = 0;
    for (int i = 0; i < g->ag->nroutes; i++) {
        int r = g->ag->routes[i];
        int n = bt_cloudwatch_route_queries(&routes[r], r, &cw->spell[r], g->q + g->nq,
                                            BT_SIG_COUNT);
        /* the series as ListMetrics lists them; none listed: unknown, not idle */
        int kept = cw_sets_apply(&cw->sets[r], &routes[r], g->q + g->nq, n, cw->nodata[r],
                                 sizeof cw->nodata[r]);
        if (kept > 0) {
            if (cw->nodata[r][0]) /* untouched when it was "" (most routes' page stays unused) */
                cw->nodata[r][0] = '\0';
            g->nq += kept;
            /* the reserved tier, where ListMetrics lists it for the ModelId */
            g->nq += cw_sets_tier_queries(&cw->sets[r], &routes[r], r, g->q + g->nq, 3);
        }
    }
    g->nq_min = g->nq;
    /* the day's token sums in one datapoint each, where the minutes since midnight
     * are not all fetched and kept (check; live with a short history) */
    if (bt_cloudwatch_day_sums(cw->ctx->mode, cw->ctx->cfg->history_minutes,
                               cw->ctx->window_to != 0)) {
        for (int i = 0; i < g->ag->nroutes; i++) {
            int r = g->ag->routes[i];
            int n = bt_cloudwatch_day_queries(&routes[r], r, &cw->spell[r], g->q + g->nq, 6);
            for (int k = 0; k < n; k++) {
                g->q[g->nq + k].sum = cw->sets[r].nprof ? cw->sets[r].prof : NULL;
                g->q[g->nq + k].nsum = cw->sets[r].nprof;
                g->q[g->nq + k].sumkey = cw->sets[r].key;
            }
            g->nq += cw->nodata[r][0] ? 0 : n;
        }
    }
    /* built in room for every signal of every route; kept at the size used (at
     * 20,000 routes 16 queries a route of the 38 there was room for, 1.4 kB a route
     * in q) */
    cap = (size_t)g->nq + 1;
    g->q = bt_xrealloc(g->q, cap * sizeof *g->q);
    /* every query's kind, once: the polls below only look them up */
    int *all = bt_xcalloc((size_t)g->nq + 1, sizeof *all);
    for (int i = 0; i < g->nq; i++)
        all[i] = i;
    cw_free_queries(g);
    g->kind = bt_xcalloc((size_t)g->nq + 1, sizeof *g->kind);
    g->nkinds = query_kinds(routes, g->q, all, g->nq, g->kind);
    free(all);
    g->wire = bt_xcalloc(cap, sizeof *g->wire);
    g->mfirst = bt_xcalloc(cap + 1, sizeof *g->mfirst);
    g->mcount = bt_xcalloc(cap, sizeof *g->mcount);
    g->member = bt_xcalloc(cap, sizeof *g->member);
    cw_count_cost(g);
}

/* The cost of each cadence, counted once per distinct query (each series of a summed
 * one: what AWS bills): every poll (throttles,
 * and the per-minute signals of a route that is not calm or shares the query with
 * one that is not), every BT_CADENCE_SLOW_S (a calm route's), every detail_interval
 * (the 5-minute tier), and the day sums with every poll. */
void cw_count_cost(struct cw_group *g)
{
    const struct cw *cw = g->cw;
    cw_build_wire(g, true, true);
    g->nfast = g->nslow = g->ndetail = 0;
    for (int w = 0; w < g->nwire_min; w++) {
        const struct bt_cw_query *x = &g->q[g->wire[w]];
        bool fast = x->signal == BT_SIG_THROTTLES;
        for (int k = g->mfirst[w]; !fast && k < g->mfirst[w] + g->mcount[w]; k++)
            fast = !cw->slow[g->q[g->member[k]].route];
        /* counted as AWS bills it: each series a summed figure reads */
        int billed = (int)cw_billed(x);
        if (bt_cloudwatch_signal_detail(x->signal))
            g->ndetail += billed;
        else if (fast)
            g->nfast += billed;
        else
            g->nslow += billed;
    }
    g->nday = 0;
    for (int w = g->nwire_min; w < g->nwire; w++)
        g->nday += (int)cw_billed(&g->q[g->wire[w]]);
}
