/* One route's figures in its quota group's evaluation frame: what is read from the
 * store at the evaluated minute and at the newest scrape, and the contract's formulas
 * (DESIGN.md "Headroom: the contract, version 3"). */
#include "core/headroom.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/eval_int.h"
#include "core/format.h"
#include "core/util.h"

/* ---- evaluation ---- */

static const enum bt_signal usage_signals[] = {
    BT_SIG_INVOCATIONS, BT_SIG_INPUT_TOKENS, BT_SIG_OUTPUT_TOKENS, BT_SIG_ESTIMATED_TPM,
    BT_SIG_THROTTLES,
};
static const enum bt_signal adm_signals[] = {
    BT_SIG_ADM_RESERVED, BT_SIG_ADM_IN_FLIGHT, BT_SIG_ADM_ADMITTED, BT_SIG_ADM_MAX_TOKENS,
    BT_SIG_ADM_RESERVED_HELD,
};

static double at(const struct bt_store *st, int r, enum bt_signal s, int64_t m)
{
    return m ? bt_store_at(st, r, s, m) : NAN;
}

/* What the figures of one minute are computed from. */
struct raw {
    double inv, input, output, cache_read, cache_write, estimated, lat_avg;
    double adm_in_flight, adm_held, adm_reserved, adm_admitted, max_tokens;
};

/* CloudWatch at minute m (idle: a successful poll found no datapoints, so every
 * count is 0), admission counters at minute am. */
static void read_raw(const struct bt_store *st, int r, const struct bt_route *rt, int64_t m,
                     int64_t am, bool idle, struct raw *x)
{
    x->inv = at(st, r, BT_SIG_INVOCATIONS, m);
    x->input = at(st, r, BT_SIG_INPUT_TOKENS, m);
    x->output = at(st, r, BT_SIG_OUTPUT_TOKENS, m);
    x->cache_read = at(st, r, BT_SIG_CACHE_READ, m);
    x->cache_write = at(st, r, BT_SIG_CACHE_WRITE, m);
    x->estimated = at(st, r, BT_SIG_ESTIMATED_TPM, m);
    x->lat_avg = at(st, r, BT_SIG_LATENCY_AVG, m);
    if (idle) {
        x->inv = x->input = x->output = x->cache_read = x->cache_write = 0;
        x->estimated = NAN; /* AWS may not publish it for this model at all: not claimed */
    }
    if (isnan(x->inv) && at(st, r, BT_SIG_THROTTLES, m) > 0)
        x->inv = 0; /* only throttles this minute: nothing was accepted */
    x->adm_in_flight = at(st, r, BT_SIG_ADM_IN_FLIGHT, am);
    x->adm_held = at(st, r, BT_SIG_ADM_RESERVED_HELD, am);
    x->adm_reserved = at(st, r, BT_SIG_ADM_RESERVED, am);
    x->adm_admitted = at(st, r, BT_SIG_ADM_ADMITTED, am);
    x->max_tokens = rt->max_tokens;
    double gauge_mt = at(st, r, BT_SIG_ADM_MAX_TOKENS, am);
    if (!isnan(gauge_mt))
        x->max_tokens = gauge_mt; /* what callers really request beats the config */
}

/* The contract, once: R, in flight, held, settled, reserved per minute, used. */
static void figures(const struct bt_route *rt, const struct raw *x, struct bt_minute_fig *f)
{
    bool mantle = rt->endpoint == BT_EP_MANTLE;
    memset(f, 0, sizeof *f);
    f->settled = f->estimated = f->reservation = f->in_flight = f->held = NAN;
    f->reserved_per_min = f->used = NAN;
    /* total input per call: cache reads and writes are reserved at start (runtime);
     * mantle's input quota does not count cache reads */
    double total_in = mantle ? bt_z(x->input) : bt_z(x->input) + bt_z(x->cache_read) + bt_z(x->cache_write);
    if (!isnan(x->adm_reserved) && !isnan(x->adm_admitted) && x->adm_admitted > 0) {
        f->reservation = x->adm_reserved / x->adm_admitted;
        f->reservation_source = "admission";
    } else if (!isnan(x->max_tokens) && !isnan(x->inv) && x->inv > 0) {
        f->reservation = total_in / x->inv + x->max_tokens;
        f->reservation_source = "cloudwatch";
    }
    if (!isnan(x->adm_in_flight)) {
        f->in_flight = x->adm_in_flight;
        f->in_flight_source = "admission";
    } else if (!isnan(bt_littles_law(x->inv, x->lat_avg))) {
        f->in_flight = bt_littles_law(x->inv, x->lat_avg);
        f->in_flight_source = "littles-law";
    }
    if (!isnan(x->adm_held)) {
        f->held = x->adm_held;
        f->held_source = "admission";
    } else if (!isnan(f->in_flight) && (f->in_flight == 0 || !isnan(f->reservation))) {
        f->held = f->in_flight == 0 ? 0 : f->in_flight * f->reservation;
        f->held_source = f->in_flight_source;
    }
    if (!isnan(x->adm_reserved)) {
        f->reserved_per_min = x->adm_reserved;
        f->reserved_source = "admission";
    } else if (!isnan(x->inv) && (x->inv == 0 || !isnan(f->reservation))) {
        f->reserved_per_min = x->inv == 0 ? 0 : x->inv * f->reservation;
        f->reserved_source = "cloudwatch";
    }
    if (mantle)
        f->settled = x->input;
    else if (!isnan(x->input) || !isnan(x->output))
        f->settled = bt_settled_tpm(bt_z(x->input), bt_z(x->cache_write), bt_z(x->output), rt->burndown);
    f->estimated = mantle ? NAN : x->estimated;
    double base = bt_nanmax(f->settled, f->estimated);
    if (!isnan(f->held)) {
        f->used = bt_z(base) + f->held;
    } else if (!isnan(f->reserved_per_min)) {
        /* in flight unknown: every reservation of the minute, an upper bound */
        f->used = bt_nanmax(base, f->reserved_per_min);
        f->upper_bound = true;
        f->held_source = "upper-bound";
    } else {
        f->used = base;
    }
}

void bt_minute_figures(const struct bt_config *cfg, const struct bt_store *st, int r,
                       int64_t minute, struct bt_minute_fig *out)
{
    struct raw x;
    minute = bt_minute_floor(minute);
    read_raw(st, r, &cfg->routes[r], minute, minute, false, &x);
    figures(&cfg->routes[r], &x, out);
    if (isnan(x.inv) && isnan(x.input) && isnan(x.output) && isnan(x.estimated) &&
        isnan(x.adm_in_flight) && isnan(x.adm_reserved))
        *out = (struct bt_minute_fig){NAN, NAN, NAN, NAN, NAN, NAN, NAN, false, NULL, NULL,
                                      NULL, NULL};
}

/* Settled tokens per minute at minute m (NAN without token counts). */
static double settled_at(const struct bt_store *st, int r, const struct bt_route *rt, int64_t m)
{
    double in = bt_store_at(st, r, BT_SIG_INPUT_TOKENS, m);
    double out = bt_store_at(st, r, BT_SIG_OUTPUT_TOKENS, m);
    if (isnan(in) && isnan(out))
        return NAN;
    return bt_settled_tpm(bt_z(in), bt_z(bt_store_at(st, r, BT_SIG_CACHE_WRITE, m)), bt_z(out),
                          rt->burndown);
}

static bool source_failing(const struct bt_source_status *s)
{
    return s->last_error && s->last_error >= s->last_ok;
}

/* How long a source may go without a good poll before its data is stale. */
static int64_t stale_after(const struct bt_config *cfg)
{
    double s = 3 * cfg->interval;
    return (int64_t)(s > 300 ? s : 300);
}

/* STALE only when a source failed or stopped answering; an idle route is not stale. */
static void check_staleness(const struct bt_config *cfg, const struct bt_store *st, int r,
                            struct bt_eval *e)
{
    const struct bt_source_status *cw = bt_store_status_c(st, r, BT_SRC_CLOUDWATCH);
    const struct bt_source_status *adm = bt_store_status_c(st, r, BT_SRC_ADMISSION);
    char hm[8];
    if (source_failing(cw)) {
        e->stale = true;
        if (e->minute) {
            bt_fmt_hhmm(e->minute, hm, sizeof hm);
            snprintf(e->stale_reason, sizeof e->stale_reason, "CloudWatch failing (%s); newest data %s UTC",
                     cw->error, hm);
        } else {
            snprintf(e->stale_reason, sizeof e->stale_reason, "CloudWatch failing (%s); no data yet",
                     cw->error);
        }
    } else if (cw->last_ok && e->now - cw->last_ok > stale_after(cfg)) {
        e->stale = true;
        bt_fmt_hhmm(cw->last_ok, hm, sizeof hm);
        snprintf(e->stale_reason, sizeof e->stale_reason,
                 "CloudWatch has not answered since %s UTC (%.0f min): collector stopped", hm,
                 (double)(e->now - cw->last_ok) / 60);
    } else if (!e->minute && !cw->last_ok && !adm->last_ok) {
        e->stale = true;
        snprintf(e->stale_reason, sizeof e->stale_reason, "no data yet: CloudWatch has not answered");
    }
    if (source_failing(adm)) {
        char why[224];
        snprintf(why, sizeof why, "admission counters failing (%s)", adm->error);
        if (e->stale) {
            size_t n = strlen(e->stale_reason);
            snprintf(e->stale_reason + n, sizeof e->stale_reason - n, "; %s", why);
        } else {
            bt_strlcpy(e->stale_reason, why, sizeof e->stale_reason);
        }
        e->stale = true;
    } else if (e->adm_minute && e->adm_minute < bt_minute_floor(e->now) - 180 - (int64_t)cfg->interval &&
               !e->stale) {
        e->stale = true;
        bt_fmt_hhmm(e->adm_minute, hm, sizeof hm);
        snprintf(e->stale_reason, sizeof e->stale_reason, "admission counters silent since %s UTC", hm);
    }
}

/* Growth of a per-minute series over the last 5 minutes (first vs last), NAN if unknown. */
static double growth(const struct bt_store *st, int r, const enum bt_signal *sigs, int n,
                     int64_t m)
{
    double a = 0, b = 0;
    for (int i = 0; i < n; i++) {
        double x = bt_store_at(st, r, sigs[i], m - 240);
        double y = bt_store_at(st, r, sigs[i], m);
        if (isnan(x) || isnan(y))
            return NAN;
        a += x;
        b += y;
    }
    return a > 0 ? (b - a) / a : NAN;
}

/* The CloudWatch minute to evaluate: the newest complete one given the publishing
 * lag. A route whose newest datapoint is older than what the last successful poll
 * could see (one minute of slack for late publishing) went idle: CloudWatch
 * publishes nothing for a minute without calls. */
static int64_t pick_minute(const struct bt_config *cfg, const struct bt_store *st, int r,
                           int64_t now, bool *idle)
{
    int64_t lag = (int64_t)cfg->cw_lag;
    int64_t expect = bt_minute_floor(now - lag) - 60;
    int64_t newest = 0, fresher = 0;
    for (size_t i = 0; i < BT_ARRAY_LEN(usage_signals); i++) {
        int64_t m = bt_store_newest(st, r, usage_signals[i], expect);
        int64_t f = bt_store_newest(st, r, usage_signals[i], now);
        newest = m > newest ? m : newest;
        fresher = f > fresher ? f : fresher;
    }
    const struct bt_source_status *cw = bt_store_status_c(st, r, BT_SRC_CLOUDWATCH);
    *idle = false;
    if (!cw->last_ok || source_failing(cw) || now - cw->last_ok > stale_after(cfg))
        return newest; /* no recent good poll: what there is, and STALE says why */
    if (fresher > expect)
        return newest; /* calls in a minute not complete yet: not idle */
    int64_t seen = bt_minute_floor((cw->last_ok < now ? cw->last_ok : now) - lag) - 60;
    if (newest && newest >= seen - 60)
        return newest;
    *idle = true;
    return seen > newest ? seen : newest + 60;
}

/* Everything about one route that does not depend on the other routes. */
void bt_eval_route_part(const struct bt_config *cfg, const struct bt_store *st, int r,
                            int64_t now, struct bt_eval *e)
{
    const struct bt_route *rt = &cfg->routes[r];
    memset(e, 0, sizeof *e);
    e->route = r;
    e->now = now;
    e->mantle = rt->endpoint == BT_EP_MANTLE;
    double *nans[] = {&e->settled, &e->estimated, &e->held, &e->used, &e->reserved_per_min,
                      &e->reservation, &e->in_flight, &e->group_used, &e->quota,
                      &e->headroom_tpm, &e->headroom_pct, &e->fits_more, &e->in_quota,
                      &e->in_used, &e->in_group_used, &e->in_headroom, &e->in_pct,
                      &e->out_quota, &e->out_used, &e->out_group_used, &e->out_headroom,
                      &e->out_pct, &e->burndown_measured, &e->avg_input, &e->avg_output,
                      &e->recommended_max_tokens, &e->fits_more_recommended, &e->tokens_today,
                      &e->group_tokens_today, &e->tpd, &e->daily_rate, &e->offered_growth,
                      &e->accepted_growth, &e->littles_in_flight};
    for (size_t i = 0; i < BT_ARRAY_LEN(nans); i++)
        *nans[i] = NAN;
    e->burndown = rt->burndown;
    e->burndown_source = rt->burndown_source;

    int64_t m = e->minute = pick_minute(cfg, st, r, now, &e->idle);
    for (size_t i = 0; i < BT_ARRAY_LEN(adm_signals); i++) {
        int64_t am = bt_store_newest(st, r, adm_signals[i], now);
        if (am > e->adm_minute)
            e->adm_minute = am;
    }
    int64_t am = e->adm_minute;
    struct raw x;
    read_raw(st, r, rt, m, am, e->idle, &x);
    struct bt_minute_fig f;
    figures(rt, &x, &f);
    e->settled = f.settled;
    e->estimated = f.estimated;
    e->reservation = f.reservation;
    e->in_flight = f.in_flight;
    e->held = f.held;
    e->reserved_per_min = f.reserved_per_min;
    e->used = f.used;
    e->upper_bound = f.upper_bound;
    e->reservation_source = f.reservation_source;
    e->in_flight_source = f.in_flight_source;
    e->held_source = f.held_source;
    e->reserved_source = f.reserved_source;
    e->has_usage = e->idle || !isnan(e->settled) || !isnan(e->estimated) ||
                   !isnan(e->reserved_per_min) || !isnan(e->held);

    e->invocations = x.inv;
    e->input_tokens = x.input;
    e->output_tokens = x.output;
    e->cache_read = x.cache_read;
    e->cache_write = x.cache_write;
    e->lat_avg = x.lat_avg;
    e->throttles = e->idle ? 0 : at(st, r, BT_SIG_THROTTLES, m);
    e->lat_p50 = at(st, r, BT_SIG_LATENCY_P50, m);
    e->lat_p90 = at(st, r, BT_SIG_LATENCY_P90, m);
    e->lat_p99 = at(st, r, BT_SIG_LATENCY_P99, m);
    e->littles_in_flight = bt_littles_law(x.inv, x.lat_avg);
    e->max_tokens = x.max_tokens;
    if (!isnan(x.inv) && x.inv > 0) {
        e->avg_input = (e->mantle ? bt_z(x.input) : bt_z(x.input) + bt_z(x.cache_read) + bt_z(x.cache_write)) /
                       x.inv;
        if (!isnan(x.output))
            e->avg_output = x.output / x.inv;
    }
    if (e->mantle) {
        e->in_used = e->used;
        e->out_used = x.output;
    } else if (!isnan(x.estimated) && !isnan(x.output) && x.output >= 100) {
        /* AWS's estimate is the completion-time charge: solve it for the burndown */
        e->burndown_measured = (x.estimated - bt_z(x.input) - bt_z(x.cache_write)) / x.output;
    }

    e->conc_limit = at(st, r, BT_SIG_ADM_CONC_LIMIT, am);
    if (isnan(e->conc_limit))
        e->conc_limit = rt->concurrency_limit;
    e->queue_depth = at(st, r, BT_SIG_ADM_QUEUE, am);
    e->admitted = x.adm_admitted;
    e->rejected = at(st, r, BT_SIG_ADM_REJECTED, am);
    e->retries = at(st, r, BT_SIG_ADM_RETRIES, am);
    e->completed = at(st, r, BT_SIG_ADM_COMPLETED, am);
    e->adm_throttled = at(st, r, BT_SIG_ADM_THROTTLED, am);
    e->adm_settled = at(st, r, BT_SIG_ADM_SETTLED, am);
    e->out_p50 = at(st, r, BT_SIG_ADM_OUT_P50, am);
    e->out_p99 = at(st, r, BT_SIG_ADM_OUT_P99, am);
    if (am) {
        static const enum bt_signal offered[] = {BT_SIG_ADM_ADMITTED, BT_SIG_ADM_RETRIES,
                                                 BT_SIG_ADM_REJECTED};
        static const enum bt_signal accepted[] = {BT_SIG_ADM_COMPLETED};
        e->offered_growth = growth(st, r, offered, 3, am);
        e->accepted_growth = growth(st, r, accepted, 1, am);
    }
    for (int s = 0; s < BT_SRC_COUNT; s++)
        e->last_ok[s] = bt_store_status_c(st, r, (enum bt_source)s)->last_ok;
    check_staleness(cfg, st, r, e);

    /* Tokens today: the day's sums from CloudWatch (check's one-day queries), else
     * settled per minute summed since UTC midnight (within history). */
    e->rpm_quota = rt->quota[BT_Q_RPM].value;
    int64_t day = m - (m % 86400);
    double day_in = m ? bt_store_at(st, r, BT_SIG_DAY_INPUT_TOKENS, day) : NAN;
    double day_out = m ? bt_store_at(st, r, BT_SIG_DAY_OUTPUT_TOKENS, day) : NAN;
    if (m && (!isnan(day_in) || !isnan(day_out))) {
        e->tokens_today = bt_settled_tpm(bt_z(day_in), bt_z(bt_store_at(st, r, BT_SIG_DAY_CACHE_WRITE, day)),
                                         bt_z(day_out), rt->burndown);
    } else if (m && !isnan(rt->quota[BT_Q_TPD].value)) {
        double sum = 0;
        for (int64_t t = day; t <= m; t += 60) {
            double v = settled_at(st, r, rt, t);
            if (!isnan(v))
                sum += v;
        }
        e->tokens_today = sum;
    }
}

