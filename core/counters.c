/* Rates from raw admission-counter readings, per series, then summed by route
 * (DESIGN.md "Raw readings in, figures out"). Summing the workers' counters
 * before the rate, as bedtop did, turned one worker's restart into the whole
 * route's cumulative total in one scrape (1,000,610 admitted a minute instead of
 * 610): the route's sum went down, so it was taken for a reset of everything. */
#include "core/counters.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/shares.h"
#include "core/strmap.h"
#include "core/util.h"

struct ctr_series {
    uint64_t hash;
    char *id;
    double t, v;             /* the last reading */
    int64_t arrival;         /* the scrape it came in */
};

/* One route and counter signal. */
struct ctr_sig {
    struct ctr_series *s;
    int n, cap;
    int64_t cur;             /* the scrape acc sums */
    double acc;              /* this scrape's sum of series rates */
    bool full_said;
};

/* One route: its scrapes (any counter reading of the route marks one). */
struct ctr_route {
    int64_t cur, prev;       /* arrival of this scrape and of the one before */
};

struct bt_counter_state {
    struct ctr_route *route; /* nroutes */
    struct ctr_sig *sig;     /* nroutes * BT_SIG_COUNT */
};

bool bt_signal_counter(enum bt_signal sig)
{
    switch (sig) {
    case BT_SIG_ADM_ADMITTED:
    case BT_SIG_ADM_REJECTED:
    case BT_SIG_ADM_RETRIES:
    case BT_SIG_ADM_THROTTLED:
    case BT_SIG_ADM_COMPLETED:
    case BT_SIG_ADM_RESERVED:
    case BT_SIG_ADM_SETTLED:
        return true;
    default:
        return false;
    }
}

/* A rate needs readings at least BT_COUNTER_MIN_INTERVAL apart. Scaled to a minute,
 * an increase over a too-short interval is extrapolated wildly (issue 37: exporter
 * timestamps 1 ms apart gave 60 million calls a minute from one call): under the
 * minimum the rate is unknown, not a number. The minimum is the shortest gap bedtop
 * itself scrapes at (admission_gap's floor, 0.1 s), so check's own two scrapes always
 * make a rate; a closer pair says the exporter's clock, not the traffic, moved. */
static bool apart_enough(double t1, double t2)
{
    return t2 - t1 >= BT_COUNTER_MIN_INTERVAL - 1e-6; /* 100.1 - 100 is 0.09999... */
}

double bt_counter_rate(double v1, double t1, double v2, double t2)
{
    if (!isfinite(v1) || !isfinite(v2) || !isfinite(t1) || !isfinite(t2) || !apart_enough(t1, t2))
        return NAN;
    double inc = v2 >= v1 ? v2 - v1 : v2;
    return inc / (t2 - t1) * 60.0;
}

void bt_counters_free(struct bt_store *s)
{
    bt_series_store_free(s); /* the per-series values go with the series */
    if (!s->counters)
        return;
    for (int i = 0; i < s->nroutes * BT_SIG_COUNT; i++) {
        struct ctr_sig *c = &s->counters->sig[i];
        for (int k = 0; k < c->n; k++)
            free(c->s[k].id);
        free(c->s);
    }
    free(s->counters->route);
    free(s->counters->sig);
    free(s->counters);
    s->counters = NULL;
}

static struct ctr_series *find_series(struct ctr_sig *c, const char *id, bool *fresh)
{
    uint64_t h = bt_str_hash(id);
    *fresh = false;
    for (int k = 0; k < c->n; k++)
        if (c->s[k].hash == h && !strcmp(c->s[k].id, id))
            return &c->s[k];
    if (c->n >= BT_COUNTER_SERIES)
        return NULL;
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 8;
        c->s = bt_xrealloc(c->s, (size_t)c->cap * sizeof *c->s);
    }
    struct ctr_series *se = &c->s[c->n++];
    *se = (struct ctr_series){.hash = h, .id = bt_xstrdup(id)};
    *fresh = true;
    return se;
}

void bt_store_reading(struct bt_store *s, const struct bt_reading *rd, int64_t arrival)
{
    bool gauge = bt_signal_share_gauge(rd->signal);
    if (rd->route < 0 || rd->route >= s->nroutes || (!bt_signal_counter(rd->signal) && !gauge) ||
        !isfinite(rd->value) || rd->value < 0 || !isfinite(rd->t))
        return;
    s->readings_free = bt_counters_free; /* what is kept below goes with bt_store_clear */
    if (s->tap.reading)
        s->tap.reading(s->tap.arg, rd, arrival);
    if (gauge) {
        /* a gauge of one series: kept as it is for the shares; the route's sum
         * comes as a sample of its own */
        bt_series_store_put(s, rd->route, rd->series, rd->signal, rd->value, arrival);
        return;
    }
    if (!s->counters) {
        s->counters = bt_xcalloc(1, sizeof *s->counters);
        s->counters->route = bt_xcalloc((size_t)s->nroutes, sizeof *s->counters->route);
        s->counters->sig = bt_xcalloc((size_t)s->nroutes * BT_SIG_COUNT, sizeof *s->counters->sig);
    }
    struct ctr_route *cr = &s->counters->route[rd->route];
    struct ctr_sig *c = &s->counters->sig[(size_t)rd->route * BT_SIG_COUNT + rd->signal];
    if (arrival != cr->cur) {
        cr->prev = cr->cur;
        cr->cur = arrival;
    }
    if (arrival != c->cur) {
        c->cur = arrival;
        c->acc = 0;
    }
    bool fresh;
    struct ctr_series *se = find_series(c, rd->series, &fresh);
    if (!se) {
        struct bt_source_status *st = bt_store_status(s, rd->route, BT_SRC_ADMISSION);
        if (st && !c->full_said && !st->implausible[0])
            snprintf(st->implausible, BT_STATUS_IMPLAUSIBLE_LEN,
                     "more than %d series of %s: the rest not counted", BT_COUNTER_SERIES,
                     bt_signal_info[rd->signal].metric);
        c->full_said = true;
        return;
    }
    /* a rate needs this series' reading from the route's previous scrape: one
     * seen first now, or back after a gap, starts afresh */
    bool follows = !fresh && cr->prev != 0 && se->arrival == cr->prev;
    double rate = NAN;
    if (follows && rd->t > se->t)
        rate = bt_counter_rate(se->v, se->t, rd->value, rd->t);
    /* a reading too close to the last for a rate (BT_COUNTER_MIN_INTERVAL) keeps the
     * last as the base: the next scrape rates over the whole, longer interval */
    bool too_close = follows && rd->t > se->t && !apart_enough(se->t, rd->t);
    if ((!follows || rd->t > se->t) && !too_close) {
        se->t = rd->t;
        se->v = rd->value;
    }
    se->arrival = arrival;
    if (!isfinite(rate))
        return; /* the same reading again (a cached exposition) adds nothing */
    c->acc += rate;
    bt_series_store_put(s, rd->route, rd->series, rd->signal, rate, arrival);
    /* the route's rate so far this scrape (the last series of it leaves the sum);
     * derived, so not shown to the tap: a replay derives it again */
    struct bt_sample smp = {.t = arrival, .route = rd->route, .signal = rd->signal,
                            .value = c->acc};
    struct bt_store_tap tap = s->tap;
    s->tap.sample = NULL;
    bt_store_add(s, &smp, arrival);
    s->tap = tap;
}
