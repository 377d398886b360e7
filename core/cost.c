#include "core/cost.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/eval_int.h"
#include "core/shares.h"
#include "core/strmap.h"
#include "core/util.h"

double bt_cost_tokens(const struct bt_price_row *row, double in, double out, double cache_read,
                      double cache_write, char *why, size_t n)
{
    const struct {
        double count, price;
        const char *what;
    } part[] = {{in, row->in, "input"},
                {out, row->out, "output"},
                {cache_read, row->cache_read, "cache-read"},
                {cache_write, row->cache_write, "cache-write"}};
    double usd = 0;
    for (size_t i = 0; i < BT_ARRAY_LEN(part); i++) {
        double c = bt_z(part[i].count);
        if (c <= 0)
            continue;
        if (isnan(part[i].price)) {
            if (why)
                bt_fmt_cut(why, n, "no %s price in %s %s", part[i].what, row->origin, row->pattern);
            return NAN;
        }
        usd += c * part[i].price / 1e6;
    }
    return usd;
}

const struct bt_price_row *bt_cost_row(const struct bt_config *cfg, const struct bt_route *r,
                                       char *why, size_t n)
{
    if (!cfg->prices.n) {
        /* a copy, not a format: each route's evaluation says it (a printf a route was a
         * tenth of the dashboard's frame after a data change) */
        bt_strlcpy_cut(why, cfg->prices_note[0] ? cfg->prices_note : "no price table loaded", n);
        return NULL;
    }
    bool prov = r->inference == BT_INF_PROVISIONED;
    const struct bt_price_row *row = bt_prices_find(&cfg->prices, r->model, r->base_model,
                                                    r->region, (int)r->endpoint,
                                                    (int)r->inference, r->tier);
    if (prov) {
        if (!row || isnan(row->unit_hour)) {
            bt_fmt_cut(why, n, "Provisioned Throughput: no unit_hour price for %s in %s; add a "
                     "[prices] row (unit_hour=USD inference=provisioned)",
                     r->base_model[0] ? r->base_model : "its model", r->region);
            return NULL;
        }
        if (isnan(r->model_units)) {
            bt_fmt_cut(why, n, "Provisioned Throughput: model_units not set for the route");
            return NULL;
        }
        return row;
    }
    if (!row || isnan(row->in)) {
        bt_fmt_cut(why, n, "no %s price for %s (%s, %s) in %s; add a [prices] row",
                 bt_tier_name((enum bt_tier)r->tier), r->base_model[0] ? r->base_model : r->model,
                 bt_endpoint_name(r->endpoint), bt_inference_name(r->inference), r->region);
        return NULL;
    }
    return row;
}

/* Whether route r's minute without a datapoint is a known idle minute. */
static bool idle_minute(const struct bt_store *st, int r, int64_t minute)
{
    if (bt_store_cover_recorded(st, r))
        return bt_store_covered(st, r, BT_SIG_INPUT_TOKENS, minute) == BT_COV_SETTLED;
    /* coverage inferred (the demo, a Prometheus source, an old recording): the minutes
     * the series holds, up to its newest */
    const struct bt_series *se = bt_store_series_c(st, r, BT_SIG_INPUT_TOKENS);
    return se->cap && minute >= se->oldest && minute <= se->newest;
}

double bt_cost_minute(const struct bt_store *st, int r, const struct bt_price_row *row,
                      int64_t minute)
{
    double in = bt_store_at(st, r, BT_SIG_INPUT_TOKENS, minute);
    double out = bt_store_at(st, r, BT_SIG_OUTPUT_TOKENS, minute);
    double cr = bt_store_at(st, r, BT_SIG_CACHE_READ, minute);
    double cw = bt_store_at(st, r, BT_SIG_CACHE_WRITE, minute);
    if (isnan(in) && isnan(out) && isnan(cr) && isnan(cw))
        return idle_minute(st, r, minute) ? 0 : NAN;
    return bt_cost_tokens(row, in, out, cr, cw, NULL, 0);
}


/* One minute's USD at row's prices: bt_cost_tokens, with the arithmetic alone where
 * the row prices all four kinds (a window reads it for up to 120 minutes a route). */
static inline double minute_usd(const struct bt_price_row *row, double in, double out, double cr,
                                double cw)
{
    if (isnan(row->in) || isnan(row->out) || isnan(row->cache_read) || isnan(row->cache_write))
        return bt_cost_tokens(row, in, out, cr, cw, NULL, 0);
    return (bt_z(in) * row->in + bt_z(out) * row->out + bt_z(cr) * row->cache_read +
            bt_z(cw) * row->cache_write) / 1e6;
}

/* The known minutes' spend in [from, from + n minutes), USD per hour, into v; returns
 * how many. The four token series are read a range at a time (one pass over each
 * ring, not a lookup per minute: a 5,000-route poll reads them for every route above
 * the floor). */
#define SPEND_WINDOW_MAX (BT_SPEND_BASELINE + 64)
static int window_rates(const struct bt_store *st, int r, const struct bt_price_row *row,
                        int64_t from, int n, double *v)
{
    static const enum bt_signal sigs[4] = {BT_SIG_INPUT_TOKENS, BT_SIG_OUTPUT_TOKENS,
                                           BT_SIG_CACHE_READ, BT_SIG_CACHE_WRITE};
    double tok[4][SPEND_WINDOW_MAX];
    if (n > SPEND_WINDOW_MAX)
        n = SPEND_WINDOW_MAX;
    for (int s = 0; s < 4; s++)
        bt_store_range(st, r, sigs[s], from, n, tok[s]);
    int k = 0;
    for (int i = 0; i < n; i++) {
        double usd;
        if (isnan(tok[0][i]) && isnan(tok[1][i]) && isnan(tok[2][i]) && isnan(tok[3][i]))
            usd = idle_minute(st, r, from + 60 * (int64_t)i) ? 0 : NAN;
        else
            usd = minute_usd(row, tok[0][i], tok[1][i], tok[2][i], tok[3][i]);
        if (!isnan(usd))
            v[k++] = usd * 60;
    }
    return k;
}

/* The median of the known minutes' spend in [from, from + n minutes), USD per hour;
 * *known gets how many were known. */
static double median_rate(const struct bt_store *st, int r, const struct bt_price_row *row,
                          int64_t from, int n, int *known)
{
    double v[SPEND_WINDOW_MAX];
    *known = window_rates(st, r, row, from, n, v);
    return bt_median(v, *known);
}

/* The baseline's median where `recent` could be above factor times it, else NAN (the
 * rule needs no more): with c of the k known values below recent / factor, the median
 * is at or above it when 2c < k (the middle value, or both, are). The window is read
 * 30 minutes at a time and left as soon as the minutes at or above recent / factor
 * outnumber those below by more than the minutes still unread (a route spending as it
 * did is read for ~80 of the 120 minutes, and nothing is sorted). */
#define BASELINE_CHUNK 30
static double baseline_rate(const struct bt_store *st, int r, const struct bt_price_row *row,
                            int64_t from, int n, double recent, double factor, int *known)
{
    double v[SPEND_WINDOW_MAX];
    if (n > SPEND_WINDOW_MAX)
        n = SPEND_WINDOW_MAX;
    int k = 0, c = 0;
    for (int done = 0; done < n;) {
        int step = n - done < BASELINE_CHUNK ? n - done : BASELINE_CHUNK;
        int got = window_rates(st, r, row, from + 60 * (int64_t)done, step, v + k);
        for (int i = k; i < k + got; i++)
            c += factor * v[i] < recent;
        k += got;
        done += step;
        if (k - c > c + (n - done)) {
            *known = k; /* the minutes read */
            return NAN;
        }
    }
    *known = k;
    if (2 * c < k)
        return NAN;
    return bt_median(v, k);
}

/* The day's tokens of route r through minute dm, priced: the day sums (hourly
 * datapoints since midnight, and the minutes after the newest) of input, output, cache
 * writes and cache reads. A store whose day sums carry no cache reads (a recording
 * from before DAY_CACHE_READ) reads them from the minutes it holds since midnight,
 * a lower bound where those do not reach midnight. */
static double usd_today(const struct bt_store *st, int r, const struct bt_price_row *row,
                        int64_t dm, enum bt_quality day_q, bool *partial, char *why, size_t n)
{
    int64_t day = dm - dm % 86400;
    double in = bt_store_day_sum(st, r, BT_SIG_DAY_INPUT_TOKENS, dm);
    double out = bt_store_day_sum(st, r, BT_SIG_DAY_OUTPUT_TOKENS, dm);
    double cw = bt_store_day_sum(st, r, BT_SIG_DAY_CACHE_WRITE, dm);
    const struct bt_series *se = bt_store_series_c(st, r, BT_SIG_CACHE_READ);
    double cr = 0;
    /* the day's sums as sure as the daily sides' (coverage since midnight) */
    *partial = day_q == BT_QL_LOWER;
    if (bt_store_day_sum_held(st, r, BT_SIG_DAY_CACHE_READ, dm)) {
        cr = bt_store_day_sum(st, r, BT_SIG_DAY_CACHE_READ, dm);
    } else if (se->cap) {
        int64_t from = se->oldest > day ? se->oldest : day;
        /* the minutes' sum (a replay carries it from step to step: a day's export
         * summed every minute since midnight at every step) */
        cr = bt_store_sum(st, r, BT_SIG_CACHE_READ, from, dm, NULL);
        if (from > day && cr > 0)
            *partial = true; /* cache reads before the oldest minute kept are not read */
    }
    return bt_cost_tokens(row, in, out, cr, cw, why, n);
}

void bt_cost_eval(const struct bt_config *cfg, const struct bt_store *st, int r, bool rules,
                  enum bt_quality day_q, struct bt_eval *e)
{
    struct bt_spend *sp = &e->spend;
    const struct bt_route *rt = &cfg->routes[r];
    sp->usd_per_hour = sp->usd_today = sp->recent = sp->baseline = NAN;
    sp->baseline_minutes = 0;
    sp->quality = sp->today_q = BT_QL_UNKNOWN;
    sp->reason[0] = '\0';
    sp->row = bt_cost_row(cfg, rt, sp->reason, sizeof sp->reason);
    if (!sp->row)
        return;
    const struct bt_price_row *row = sp->row;
    if (rt->inference == BT_INF_PROVISIONED) {
        /* billed per model unit and hour while it exists, used or not: the day so far
         * is the hours since 00:00 UTC (assumed provisioned all day) */
        sp->usd_per_hour = rt->model_units * row->unit_hour;
        int64_t now = e->now - e->now % 60;
        sp->usd_today = sp->usd_per_hour * (double)(now % 86400) / 3600;
        sp->quality = sp->today_q = BT_QL_ESTIMATE;
        return;
    }
    int64_t m = e->minute;
    if (e->state == BT_FR_UNKNOWN || !m) {
        bt_fmt_cut(sp->reason, sizeof sp->reason, "usage unknown: %s",
                 e->stale_reason[0] ? e->stale_reason : "CloudWatch not read at this minute");
    } else if (e->state == BT_FR_IDLE) {
        sp->usd_per_hour = 0;
    } else {
        sp->usd_per_hour = 60 * bt_cost_tokens(row, bt_store_at(st, r, BT_SIG_INPUT_TOKENS, m),
                                               bt_store_at(st, r, BT_SIG_OUTPUT_TOKENS, m),
                                               bt_store_at(st, r, BT_SIG_CACHE_READ, m),
                                               bt_store_at(st, r, BT_SIG_CACHE_WRITE, m),
                                               sp->reason, sizeof sp->reason);
    }
    if (!isnan(sp->usd_per_hour))
        sp->quality = BT_QL_ESTIMATE;
    if (!rules) {
        /* a figures-only frame (export's rows, past minutes of a graph): the rate only;
         * the day's sums are read where the day is shown */
        if (!sp->reason[0])
            bt_strlcpy(sp->reason, "the day's spend is not evaluated for past frames",
                       sizeof sp->reason);
        return;
    }
    int64_t dm = bt_eval_day_minute(e); /* the frame's reading of the day */
    if (dm) {
        bool partial = false;
        char why[192] = "";
        sp->usd_today = usd_today(st, r, row, dm, day_q, &partial, why, sizeof why);
        if (isnan(sp->usd_today) && !sp->reason[0])
            bt_strlcpy(sp->reason, why, sizeof sp->reason);
        else if (!isnan(sp->usd_today))
            sp->today_q = partial ? BT_QL_LOWER : BT_QL_ESTIMATE;
    } else if (!sp->reason[0]) {
        bt_fmt_cut(sp->reason, sizeof sp->reason, "no CloudWatch reading today");
    }
    /* the spike windows, only where a spike could be raised: a rate at or above the
     * floor (a poll of thousands of quiet routes reads no history for them) */
    if (!rules || isnan(sp->usd_per_hour) || sp->usd_per_hour < cfg->spend_spike_floor ||
        sp->usd_per_hour <= 0)
        return;
    int k = cfg->spend_spike_minutes > 0 ? cfg->spend_spike_minutes : 3;
    int known = 0;
    sp->recent = median_rate(st, r, row, m - 60 * (int64_t)(k - 1), k, &known);
    if (isnan(sp->recent) || sp->recent < cfg->spend_spike_floor)
        return; /* no spike to raise: the baseline is not read */
    sp->baseline = baseline_rate(st, r, row, m - 60 * (int64_t)(k - 1 + BT_SPEND_BASELINE),
                                 BT_SPEND_BASELINE, sp->recent, cfg->spend_spike_factor,
                                 &sp->baseline_minutes);
    if (sp->baseline_minutes < BT_SPEND_BASELINE_MIN)
        sp->baseline = NAN; /* not enough data: no baseline, never a ramp from nothing */
}

double bt_cost_window(const struct bt_config *cfg, const struct bt_store *st, int r,
                      int64_t from, int64_t to, double *peak, int *minutes, char *why, size_t n)
{
    const struct bt_route *rt = &cfg->routes[r];
    *peak = NAN;
    *minutes = 0;
    const struct bt_price_row *row = bt_cost_row(cfg, rt, why, n);
    if (!row)
        return NAN;
    if (rt->inference == BT_INF_PROVISIONED) {
        *minutes = (int)((to - from) / 60 + 1);
        *peak = rt->model_units * row->unit_hour;
        return *peak * *minutes / 60;
    }
    double usd = 0;
    for (int64_t m = from; m <= to; m += 60) {
        double v = bt_cost_minute(st, r, row, m);
        if (isnan(v))
            continue;
        usd += v;
        (*minutes)++;
        if (isnan(*peak) || v * 60 > *peak)
            *peak = v * 60;
    }
    return usd;
}

static void sum_add(struct bt_spend_sum *s, const struct bt_eval *e, int route)
{
    s->routes++;
    const struct bt_spend *sp = &e->spend;
    if (isnan(sp->usd_per_hour) || isnan(sp->usd_today)) {
        s->unpriced++;
        s->quality = BT_QL_LOWER;
    } else if (s->top < 0 || sp->usd_per_hour > s->top_usd_per_hour) {
        s->top = route;
        s->top_usd_per_hour = sp->usd_per_hour;
    }
    if (!isnan(sp->usd_per_hour))
        s->usd_per_hour += sp->usd_per_hour;
    if (!isnan(sp->usd_today))
        s->usd_today += sp->usd_today;
    if (sp->today_q == BT_QL_LOWER)
        s->quality = BT_QL_LOWER;
}

/* No member priced: the sum is unknown, never 0. */
static void sum_end(struct bt_spend_sum *s)
{
    if (s->unpriced == s->routes) {
        s->usd_per_hour = s->usd_today = NAN;
        s->quality = BT_QL_UNKNOWN;
    }
}

static void sum_init(struct bt_spend_sum *s, const char *key)
{
    memset(s, 0, sizeof *s);
    bt_strlcpy(s->key, key, sizeof s->key);
    s->quality = BT_QL_ESTIMATE;
    s->top = -1;
}

int bt_spend_by_region(const struct bt_config *cfg, const struct bt_eval *evals, const bool *keep,
                       struct bt_spend_sum **out)
{
    int ns = 0;
    struct bt_spend_sum *s = NULL;
    for (int i = 0; i < cfg->nroutes; i++) {
        if (keep && !keep[i])
            continue;
        const char *reg = cfg->routes[i].region;
        int k = 0;
        while (k < ns && strcmp(s[k].key, reg) != 0)
            k++;
        if (k == ns) {
            s = bt_xrealloc(s, (size_t)(ns + 1) * sizeof *s);
            sum_init(&s[ns++], reg);
        }
        sum_add(&s[k], &evals[i], i);
    }
    for (int k = 0; k < ns; k++)
        sum_end(&s[k]);
    *out = s;
    return ns;
}

void bt_spend_of_group(const struct bt_config *cfg, const struct bt_eval *evals, int i,
                       struct bt_spend_sum *out)
{
    sum_init(out, cfg->routes[evals[i].group.leader].name);
    for (int m = evals[i].group.leader; m >= 0; m = bt_group_next(evals, m))
        sum_add(out, &evals[m], m);
    sum_end(out);
}

/* The group's summed spend per minute over [from, from + n minutes), USD per hour,
 * into v (the minutes where every priced member's spend is known); returns how many. */
static int group_rates(const struct bt_config *cfg, const struct bt_store *st,
                       const struct bt_eval *evals, int leader, int64_t from, int n, double *v)
{
    static const enum bt_signal sigs[4] = {BT_SIG_INPUT_TOKENS, BT_SIG_OUTPUT_TOKENS,
                                           BT_SIG_CACHE_READ, BT_SIG_CACHE_WRITE};
    double sum[SPEND_WINDOW_MAX], tok[4][SPEND_WINDOW_MAX];
    bool known[SPEND_WINDOW_MAX];
    if (n > SPEND_WINDOW_MAX)
        n = SPEND_WINDOW_MAX;
    for (int i = 0; i < n; i++) {
        sum[i] = 0;
        known[i] = true;
    }
    for (int m = leader; m >= 0; m = bt_group_next(evals, m)) {
        const struct bt_price_row *row = evals[m].spend.row;
        if (!row || cfg->routes[m].inference == BT_INF_PROVISIONED)
            continue; /* unpriced: the sum is of the priced members */
        for (int s = 0; s < 4; s++)
            bt_store_range(st, m, sigs[s], from, n, tok[s]);
        for (int i = 0; i < n; i++) {
            double usd;
            if (isnan(tok[0][i]) && isnan(tok[1][i]) && isnan(tok[2][i]) && isnan(tok[3][i]))
                usd = idle_minute(st, m, from + 60 * (int64_t)i) ? 0 : NAN;
            else
                usd = minute_usd(row, tok[0][i], tok[1][i], tok[2][i], tok[3][i]);
            if (isnan(usd))
                known[i] = false;
            else
                sum[i] += usd * 60;
        }
    }
    int k = 0;
    for (int i = 0; i < n; i++)
        if (known[i])
            v[k++] = sum[i];
    return k;
}

bool bt_spend_group_window(const struct bt_config *cfg, const struct bt_store *st,
                           const struct bt_eval *evals, int leader, double *recent,
                           double *baseline, int *baseline_minutes)
{
    *recent = *baseline = NAN;
    *baseline_minutes = 0;
    struct bt_spend_sum g;
    bt_spend_of_group(cfg, evals, leader, &g);
    int64_t m = evals[leader].minute;
    if (g.routes < 2 || g.quality == BT_QL_UNKNOWN || isnan(g.usd_per_hour) || !m ||
        g.usd_per_hour < cfg->spend_spike_floor || g.usd_per_hour <= 0)
        return false;
    int k = cfg->spend_spike_minutes > 0 ? cfg->spend_spike_minutes : 3;
    double v[SPEND_WINDOW_MAX];
    int n = group_rates(cfg, st, evals, leader, m - 60 * (int64_t)(k - 1), k, v);
    *recent = bt_median(v, n);
    n = group_rates(cfg, st, evals, leader, m - 60 * (int64_t)(k - 1 + BT_SPEND_BASELINE),
                    BT_SPEND_BASELINE, v);
    *baseline_minutes = n;
    *baseline = n >= BT_SPEND_BASELINE_MIN ? bt_median(v, n) : NAN;
    return true;
}

double bt_spend_team_budget(const struct bt_config *cfg, const char *name)
{
    for (int i = cfg->nbudgets - 1; i >= 0; i--) /* a later section wins */
        if (cfg->budgets[i].team && !strcmp(cfg->budgets[i].name, name))
            return cfg->budgets[i].usd;
    return NAN;
}

double bt_spend_group_budget(const struct bt_config *cfg, const struct bt_eval *evals, int r)
{
    for (int i = cfg->nbudgets - 1; i >= 0; i--) {
        if (cfg->budgets[i].team)
            continue;
        int b = bt_config_find_route(cfg, cfg->budgets[i].name);
        if (b >= 0 && evals[b].group.leader == evals[r].group.leader)
            return cfg->budgets[i].usd;
    }
    return NAN;
}

static enum bt_quality team_q(enum bt_quality a, enum bt_quality share)
{
    if (share == BT_QL_LOWER || share == BT_QL_UNKNOWN || a == BT_QL_LOWER)
        return BT_QL_LOWER;
    if (share == BT_QL_UPPER || a == BT_QL_UPPER)
        return BT_QL_UPPER;
    return BT_QL_ESTIMATE;
}

static int cmp_team(const void *a, const void *b)
{
    const struct bt_spend_team *x = a, *y = b;
    int ux = !strcmp(x->name, BT_SHARE_UNATTRIBUTED), uy = !strcmp(y->name, BT_SHARE_UNATTRIBUTED);
    if (ux != uy)
        return ux - uy;
    double hx = isnan(x->usd_per_hour) ? -1 : x->usd_per_hour;
    double hy = isnan(y->usd_per_hour) ? -1 : y->usd_per_hour;
    if (hx != hy)
        return hx > hy ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* The teams met so far, found by name through an index (1,000 teams over 3,000
 * shares were a linear search each); the index keys point at the teams' own names,
 * so it is rebuilt where the array moves. */
struct team_set {
    struct bt_spend_team *t;
    int n, cap;
    struct bt_strmap idx;
};

static struct bt_spend_team *team_of(struct team_set *ts, const char *name)
{
    int k = bt_strmap_get(&ts->idx, name);
    if (k >= 0)
        return &ts->t[k];
    if (ts->n == ts->cap) {
        ts->cap = ts->cap ? 2 * ts->cap : 16;
        ts->t = bt_xrealloc(ts->t, (size_t)ts->cap * sizeof *ts->t);
        bt_strmap_clear(&ts->idx);
        for (int i = 0; i < ts->n; i++)
            *bt_strmap_put(&ts->idx, ts->t[i].name) = i;
    }
    struct bt_spend_team *s = &ts->t[ts->n];
    memset(s, 0, sizeof *s);
    bt_strlcpy(s->name, name, sizeof s->name);
    s->quality = BT_QL_ESTIMATE;
    s->top = -1;
    *bt_strmap_put(&ts->idx, s->name) = ts->n++;
    return s;
}

int bt_spend_by_team(const struct bt_config *cfg, const struct bt_store *st,
                     const struct bt_eval *evals, const bool *keep, struct bt_spend_team **out)
{
    struct team_set ts = {0};
    bool named = false;
    struct bt_share_list l = {0};
    for (int r = 0; r < cfg->nroutes; r++) {
        if (keep && !keep[r])
            continue;
        const struct bt_spend *sp = &evals[r].spend;
        bool priced = !isnan(sp->usd_per_hour);
        /* a route with no admission series has no team: all of it unattributed, no
         * shares to build (a 5,000-route poll without counters builds none) */
        if (!bt_series_store_count(st, r)) {
            struct bt_spend_team *u = team_of(&ts, BT_SHARE_UNATTRIBUTED);
            u->routes++;
            u->usd_per_hour += bt_z(sp->usd_per_hour);
            u->usd_today += bt_z(sp->usd_today);
            if (!priced || isnan(sp->usd_today) || sp->today_q == BT_QL_LOWER)
                u->quality = BT_QL_LOWER;
            continue;
        }
        int one = r;
        struct bt_group g = {.leader = r, .n = 1, .members = &one};
        bt_shares_group(cfg, st, evals, &g, BT_SHARE_TEAM, NULL, &l);
        for (int k = 0; k < l.n; k++) {
            const struct bt_share *s = &l.s[k];
            if (s->outside)
                continue; /* callers outside the config: not this route's spend */
            double f = !isnan(s->pct) ? s->pct / 100 : NAN;
            struct bt_spend_team *tm = team_of(&ts, s->name);
            if (strcmp(s->name, BT_SHARE_UNATTRIBUTED))
                named = true;
            tm->routes++;
            double h = f * sp->usd_per_hour, d = f * sp->usd_today;
            tm->usd_per_hour += bt_z(h);
            tm->usd_today += bt_z(d);
            tm->quality = team_q(tm->quality, s->quality);
            if (isnan(h) || isnan(d) || sp->today_q == BT_QL_LOWER)
                tm->quality = BT_QL_LOWER;
            if (!isnan(h) && (tm->top < 0 || h > tm->top_usd_per_hour)) {
                tm->top = r;
                tm->top_usd_per_hour = h;
            }
        }
    }
    bt_shares_free(&l);
    bt_strmap_free(&ts.idx);
    if (!named) {
        free(ts.t);
        *out = NULL;
        return 0;
    }
    qsort(ts.t, (size_t)ts.n, sizeof *ts.t, cmp_team);
    *out = ts.t;
    return ts.n;
}
