/* One route's figures in its quota group's evaluation frame: what is read from the
 * store at the evaluated minute and at the newest scrape, and the contract's formulas
 * (DESIGN.md "Headroom: the contract, version 3"). */
#include "core/frame.h"

#include <math.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cadence.h"
#include "core/cost.h"
#include "core/dataminute.h"
#include "core/eval_int.h"
#include "core/format.h"
#include "core/headroom.h"
#include "core/plausible.h"
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

int64_t bt_eval_adm_minute(const struct bt_store *st, int r, int64_t limit)
{
    int64_t newest = 0;
    for (size_t i = 0; i < BT_ARRAY_LEN(adm_signals); i++) {
        int64_t am = bt_store_newest(st, r, adm_signals[i], limit);
        if (am > newest)
            newest = am;
    }
    return newest;
}

int64_t bt_data_minute_admission(const struct bt_config *cfg, const struct bt_store *st, int r,
                                 int64_t m, int64_t now)
{
    int64_t limit = bt_data_minute_last(cfg, m);
    if (now < bt_data_minute_shown(cfg, m))
        return 0; /* not yet the newest: nothing is evaluated with it */
    if (now < limit)
        limit = now;
    int64_t iv = bt_f2i_clamp(cfg->interval, 60, (int64_t)BT_DURATION_MAX);
    int64_t am = bt_eval_adm_minute(st, r, limit);
    return am && am >= bt_minute_floor(bt_data_minute_shown(cfg, m) - iv + 1) ? am : 0;
}

/* The signals whose coverage makes a minute known: a minute one of them was asked
 * for, and settled when asked, is idle without a datapoint; one none was is unknown. */
static const enum bt_signal frame_signals[] = {BT_SIG_INVOCATIONS, BT_SIG_INPUT_TOKENS,
                                               BT_SIG_OUTPUT_TOKENS};

/* Whether route r's minute m of sig is known from a poll (asked, and settled when
 * asked); a route whose polls record no coverage (the demo, a Prometheus source, an
 * older recording): inferred, every minute its polls settled. */
static bool known_minute(const struct bt_store *st, int r, enum bt_signal sig, int64_t m)
{
    return !bt_store_cover_recorded(st, r) || bt_store_covered(st, r, sig, m) == BT_COV_SETTLED;
}

static bool frame_covered(const struct bt_store *st, int r, int64_t m)
{
    for (size_t i = 0; i < BT_ARRAY_LEN(frame_signals); i++)
        if (known_minute(st, r, frame_signals[i], m))
            return true;
    return false;
}

/* A count at a known minute: its datapoint, else 0 where the minute was asked for
 * (idle), else unknown. */
static double count_at(const struct bt_store *st, int r, enum bt_signal s, int64_t m)
{
    double v = at(st, r, s, m);
    return isnan(v) && m && known_minute(st, r, s, m) ? 0 : v;
}

/* What the figures of one minute are computed from. */
struct raw {
    double inv, input, output, cache_read, cache_write, estimated, lat_avg;
    double adm_in_flight, adm_held, adm_reserved, adm_admitted, max_tokens;
    double fallback_r;       /* R from the last minutes, for a gauge with no R now */
    const char *fallback_src;
    enum bt_frame_state state;
};

/* A figure read as it is from one signal's sample: the signal and where its value goes
 * (offsetof in the struct it fills). The ladders of `x = at(st, r, SIG, m)` as tables,
 * each read by read_table (issue 33). */
struct sig_field {
    enum bt_signal sig;
    size_t off;
};

static void read_table(const struct bt_store *st, int r, int64_t m, const struct sig_field *t,
                       size_t n, void *dst)
{
    for (size_t i = 0; i < n; i++)
        *(double *)((char *)dst + t[i].off) = at(st, r, t[i].sig, m);
}

/* offsetof field f of T, which must be a double (else a compile error: a row cannot
 * point a value at a field of another type) */
#define DBL_FIELD(T, f) (offsetof(T, f) + 0 * sizeof(_Generic(((T *)0)->f, double: 1)))
#define RAW(f) DBL_FIELD(struct raw, f)
/* CloudWatch's minute (read at m) and admission's newest scrape (read at am) */
static const struct sig_field raw_cw[] = {
    {BT_SIG_INVOCATIONS, RAW(inv)},           {BT_SIG_INPUT_TOKENS, RAW(input)},
    {BT_SIG_OUTPUT_TOKENS, RAW(output)},      {BT_SIG_CACHE_READ, RAW(cache_read)},
    {BT_SIG_CACHE_WRITE, RAW(cache_write)},   {BT_SIG_ESTIMATED_TPM, RAW(estimated)},
    {BT_SIG_LATENCY_AVG, RAW(lat_avg)},
};
static const struct sig_field raw_adm[] = {
    {BT_SIG_ADM_IN_FLIGHT, RAW(adm_in_flight)}, {BT_SIG_ADM_RESERVED_HELD, RAW(adm_held)},
    {BT_SIG_ADM_RESERVED, RAW(adm_reserved)},   {BT_SIG_ADM_ADMITTED, RAW(adm_admitted)},
};
#undef RAW

#define EV(f) DBL_FIELD(struct bt_eval, f)
/* the admission counters an evaluation carries as the newest scrape read them */
static const struct sig_field eval_adm[] = {
    {BT_SIG_ADM_QUEUE, EV(queue_depth)},        {BT_SIG_ADM_ADMITTED, EV(admitted)},
    {BT_SIG_ADM_REJECTED, EV(rejected)},        {BT_SIG_ADM_RETRIES, EV(retries)},
    {BT_SIG_ADM_COMPLETED, EV(completed)},      {BT_SIG_ADM_THROTTLED, EV(adm_throttled)},
    {BT_SIG_ADM_SETTLED, EV(adm_settled)},      {BT_SIG_ADM_OUT_P50, EV(out_p50)},
    {BT_SIG_ADM_OUT_P99, EV(out_p99)},
};
/* CloudWatch's latency percentiles at the group's minute: a gauge, unknown where none */
static const struct sig_field eval_latency[] = {
    {BT_SIG_LATENCY_P50, EV(lat_p50)},
    {BT_SIG_LATENCY_P90, EV(lat_p90)},
    {BT_SIG_LATENCY_P99, EV(lat_p99)},
};
#undef EV

/* CloudWatch at minute m (idle: a good poll settled it and found no datapoints, so
 * every count is 0; unknown: nothing from CloudWatch is claimed), admission at the
 * newest scrape am. */
static void read_raw(const struct bt_store *st, int r, const struct bt_route *rt, int64_t m,
                     int64_t am, enum bt_frame_state state, struct raw *x)
{
    x->state = state;
    read_table(st, r, m, raw_cw, BT_ARRAY_LEN(raw_cw), x);
    if (state == BT_FR_IDLE) {
        x->inv = count_at(st, r, BT_SIG_INVOCATIONS, m);
        x->input = count_at(st, r, BT_SIG_INPUT_TOKENS, m);
        x->output = count_at(st, r, BT_SIG_OUTPUT_TOKENS, m);
        x->cache_read = x->cache_write = 0;
        x->estimated = NAN; /* AWS may not publish it for this model at all: not claimed */
    } else if (state == BT_FR_UNKNOWN) {
        x->inv = x->input = x->output = x->cache_read = x->cache_write = NAN;
        x->estimated = x->lat_avg = NAN;
    }
    if (state != BT_FR_UNKNOWN && isnan(x->inv) && at(st, r, BT_SIG_THROTTLES, m) > 0)
        x->inv = 0; /* only throttles this minute: nothing was accepted */
    read_table(st, r, am, raw_adm, BT_ARRAY_LEN(raw_adm), x);
    x->max_tokens = rt->max_tokens;
    double gauge_mt = at(st, r, BT_SIG_ADM_MAX_TOKENS, am);
    if (!isnan(gauge_mt))
        x->max_tokens = gauge_mt; /* what callers really request beats the config */
    x->fallback_r = NAN;
    x->fallback_src = NULL;
}

/* How far back R is looked for when calls are in flight and this minute has none. */
#define FALLBACK_MINUTES 30

/* R from the newest of the last minutes that had one (CloudWatch counts or the
 * admission rates), never below max_tokens: the lower bound for the calls in
 * flight now when the evaluated minute has no R of its own. */
static void fallback_reservation(const struct bt_store *st, int r, const struct bt_route *rt,
                                 int64_t m, int64_t am, struct raw *x)
{
    bool mantle = rt->endpoint == BT_EP_MANTLE;
    double best = NAN;
    for (int i = 0; i <= FALLBACK_MINUTES && isnan(best); i++) {
        int64_t t = am ? bt_minute_floor(am) - 60 * i : 0;
        double res = t ? bt_store_at(st, r, BT_SIG_ADM_RESERVED, t) : NAN;
        double adm = t ? bt_store_at(st, r, BT_SIG_ADM_ADMITTED, t) : NAN;
        if (!isnan(res) && adm > 0) {
            best = res / adm;
            break;
        }
        int64_t c = m ? m - 60 * i : 0;
        double inv = c ? bt_store_at(st, r, BT_SIG_INVOCATIONS, c) : NAN;
        if (inv > 0 && !isnan(x->max_tokens)) {
            double in = bt_z(bt_store_at(st, r, BT_SIG_INPUT_TOKENS, c));
            if (!mantle)
                in += bt_z(bt_store_at(st, r, BT_SIG_CACHE_READ, c)) +
                      bt_z(bt_store_at(st, r, BT_SIG_CACHE_WRITE, c));
            best = in / inv + x->max_tokens;
        }
    }
    if (!isnan(best) && (isnan(x->max_tokens) || best >= x->max_tokens)) {
        x->fallback_r = best;
        x->fallback_src = "last-minutes";
    } else if (!isnan(x->max_tokens)) {
        x->fallback_r = x->max_tokens;
        x->fallback_src = "max-tokens";
    }
}

/* The contract, once: R, in flight, held, settled, reserved per minute, used, each
 * with its quality. */
static void figures(const struct bt_route *rt, const struct raw *x, struct bt_minute_fig *f)
{
    bool mantle = rt->endpoint == BT_EP_MANTLE;
    memset(f, 0, sizeof *f);
    f->settled = f->estimated = f->reservation = f->in_flight = f->held = NAN;
    f->reserved_per_min = f->used = NAN;
    f->used_q = f->held_q = BT_QL_UNKNOWN;
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
        f->held_q = BT_QL_KNOWN;
        f->held_source = "admission";
    } else if (f->in_flight == 0) {
        f->held = 0;
        f->held_q = x->state == BT_FR_IDLE ? BT_QL_IDLE : BT_QL_KNOWN;
        f->held_source = f->in_flight_source;
    } else if (!isnan(f->in_flight) && !isnan(f->reservation)) {
        f->held = f->in_flight * f->reservation;
        f->held_q = BT_QL_KNOWN;
        f->held_source = f->in_flight_source;
    } else if (!isnan(f->in_flight) && !isnan(x->fallback_r)) {
        /* calls in flight and no R this minute (a burst CloudWatch has not published):
         * they hold at least max_tokens each */
        f->reservation = x->fallback_r;
        f->reservation_source = x->fallback_src;
        f->held = f->in_flight * x->fallback_r;
        f->held_q = BT_QL_LOWER;
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
    enum bt_quality base_q = isnan(base)                 ? BT_QL_UNKNOWN
                             : x->state == BT_FR_IDLE    ? BT_QL_IDLE
                                                         : BT_QL_KNOWN;
    if (f->held_q != BT_QL_UNKNOWN) {
        f->used_q = bt_quality_add(base_q, f->held_q);
        f->used = bt_z(base) + f->held;
    } else if (!isnan(f->reserved_per_min) && base_q != BT_QL_UNKNOWN) {
        /* in flight unknown: every reservation of the minute, an upper bound */
        f->used = bt_nanmax(base, f->reserved_per_min);
        f->used_q = f->used == 0 ? base_q : BT_QL_UPPER;
        f->held_source = "upper-bound";
    } else if (base_q != BT_QL_UNKNOWN) {
        f->used = base;
        /* calls in flight whose holding cannot be sized: completed charges are only
         * the least of it */
        f->used_q = f->in_flight > 0 ? BT_QL_LOWER : base_q;
    }
}

static void take_out_reserved_tier(const struct bt_store *st, int r, int64_t m, struct raw *x,
                                   struct bt_tier_fig *tf);

static void minute_figures(const struct bt_config *cfg, const struct bt_store *st, int r,
                           int64_t minute, int64_t am, struct bt_minute_fig *out,
                           struct bt_tier_fig *tier)
{
    struct raw x;
    minute = bt_minute_floor(minute);
    read_raw(st, r, &cfg->routes[r], minute, am, BT_FR_ACTIVE, &x);
    if (tier)
        take_out_reserved_tier(st, r, minute, &x, tier);
    figures(&cfg->routes[r], &x, out);
    if (isnan(x.inv) && isnan(x.input) && isnan(x.output) && isnan(x.estimated) &&
        isnan(x.adm_in_flight) && isnan(x.adm_reserved)) {
        memset(out, 0, sizeof *out);
        out->settled = out->estimated = out->reservation = out->in_flight = NAN;
        out->held = out->reserved_per_min = out->used = NAN;
        out->used_q = out->held_q = BT_QL_UNKNOWN;
    }
}

void bt_minute_figures(const struct bt_config *cfg, const struct bt_store *st, int r,
                       int64_t minute, struct bt_minute_fig *out)
{
    minute_figures(cfg, st, r, minute, bt_minute_floor(minute), out, NULL);
}

void bt_minute_figures_shown(const struct bt_config *cfg, const struct bt_store *st, int r,
                             int64_t minute, int64_t now, struct bt_minute_fig *out)
{
    minute_figures(cfg, st, r, minute, bt_data_minute_admission(cfg, st, r, minute, now), out, NULL);
}

void bt_minute_figures_on_demand(const struct bt_config *cfg, const struct bt_store *st, int r,
                                 int64_t minute, struct bt_minute_fig *out, struct bt_tier_fig *tier)
{
    minute_figures(cfg, st, r, minute, bt_minute_floor(minute), out, tier);
}

static bool source_failing(const struct bt_source_status *s)
{
    return s->last_error && s->last_error >= s->last_ok;
}

/* How long a source may go without a good poll before its data is stale. */
static int64_t stale_after(const struct bt_config *cfg)
{
    double s = 3 * cfg->interval;
    /* a calm route answers every BT_CADENCE_SLOW_S (core/cadence.h): a poll late */
    double floor = cfg->adaptive_cadence ? BT_CADENCE_SLOW_S + cfg->interval : 300;
    return (int64_t)(s > floor ? s : floor);
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
        if (e->data_minute) {
            bt_fmt_hhmm(e->data_minute, hm, sizeof hm);
            bt_fmt_cut(e->stale_reason, sizeof e->stale_reason, "CloudWatch failing (%s); newest data %s UTC",
                       cw->error, hm);
        } else {
            bt_fmt_cut(e->stale_reason, sizeof e->stale_reason, "CloudWatch failing (%s); no data yet",
                       cw->error);
        }
    } else if (cw->last_ok && e->now - cw->last_ok > stale_after(cfg)) {
        e->stale = true;
        bt_fmt_hhmm(cw->last_ok, hm, sizeof hm);
        snprintf(e->stale_reason, sizeof e->stale_reason,
                 "CloudWatch has not answered since %s UTC (%.0f min): collector stopped", hm,
                 (double)(e->now - cw->last_ok) / 60);
    } else if (!cw->last_ok) {
        /* a brand-new route is unknown until CloudWatch answers, gauges or not */
        e->stale = true;
        snprintf(e->stale_reason, sizeof e->stale_reason, "no data yet: CloudWatch has not answered");
    }
    /* A Region whose Service Quotas fails (5xx, access denied) leaves a quota read
     * from there unconfirmed: the route is stale with the reason, as for CloudWatch. A
     * quota set in the config does not depend on it. */
    const struct bt_source_status *sq = bt_store_status_c(st, r, BT_SRC_QUOTAS);
    const struct bt_route *rt = &cfg->routes[r];
    enum bt_quota_kind qk = rt->endpoint == BT_EP_MANTLE ? BT_Q_INPUT_TPM : BT_Q_TPM;
    if (source_failing(sq) && rt->quota[qk].source != BT_QS_CONFIG) {
        char why[224];
        if (sq->last_ok) {
            bt_fmt_hhmm(sq->last_ok, hm, sizeof hm);
            bt_fmt_cut(why, sizeof why, "Service Quotas failing (%s); quotas as read at %s UTC",
                       sq->error, hm);
        } else {
            bt_fmt_cut(why, sizeof why, "Service Quotas failing (%s); no quota read yet", sq->error);
        }
        if (e->stale) { /* CloudWatch's reason, often the same error, comes first */
            char cw_why[sizeof e->stale_reason];
            bt_strlcpy(cw_why, e->stale_reason, sizeof cw_why);
            bt_fmt_cut(e->stale_reason, sizeof e->stale_reason, "%s; Service Quotas failing too",
                       cw_why);
        } else {
            bt_strlcpy(e->stale_reason, why, sizeof e->stale_reason);
        }
        e->stale = true;
    }
    if (source_failing(adm)) {
        if (e->stale) {
            char cw_why[sizeof e->stale_reason];
            bt_strlcpy(cw_why, e->stale_reason, sizeof cw_why);
            bt_fmt_cut(e->stale_reason, sizeof e->stale_reason, "%s; admission counters failing (%s)",
                       cw_why, adm->error);
        } else {
            bt_fmt_cut(e->stale_reason, sizeof e->stale_reason, "admission counters failing (%s)",
                       adm->error);
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

/* Whether a route's CloudWatch can be read now: it answered, is not failing and has
 * not stopped answering. */
static bool cw_readable(const struct bt_config *cfg, const struct bt_source_status *cw,
                        int64_t now)
{
    return cw->last_ok && !source_failing(cw) && now - cw->last_ok <= stale_after(cfg);
}

/* The newest minute the route's last good poll has settled (the minute's end plus
 * the collector's lag had passed when it ran) and fetched; 0 when the route's
 * CloudWatch cannot be read. */
int64_t bt_frame_settled(const struct bt_config *cfg, const struct bt_store *st, int r,
                         int64_t now)
{
    const struct bt_source_status *cw = bt_store_status_c(st, r, BT_SRC_CLOUDWATCH);
    if (!cw_readable(cfg, cw, now))
        return 0;
    if (bt_store_cover_recorded(st, r)) {
        /* the newest minute a poll asked for and had settled when it asked (the
         * request's time, not the answer's: a slow answer settles nothing more) */
        int64_t limit = bt_minute_floor(now - (int64_t)cfg->cw_lag) - 60, best = 0;
        for (size_t i = 0; i < BT_ARRAY_LEN(frame_signals); i++) {
            int64_t m = bt_store_covered_newest(st, r, frame_signals[i], limit);
            best = m > best ? m : best;
        }
        return best;
    }
    int64_t polled = cw->last_ok < now ? cw->last_ok : now;
    return bt_minute_floor(polled - (int64_t)cfg->cw_lag) - 60;
}

/* Newest minute <= limit with any usage datapoint (0: none). */
static int64_t newest_usage(const struct bt_store *st, int r, int64_t limit)
{
    int64_t newest = 0;
    for (size_t i = 0; i < BT_ARRAY_LEN(usage_signals); i++) {
        int64_t m = bt_store_newest(st, r, usage_signals[i], limit);
        newest = m > newest ? m : newest;
    }
    return newest;
}

/* Requests per minute, the RPM quota's measure: the calls accepted, the admission
 * counters' admitted rate, else Invocations (it counts the calls that later failed
 * already, and never throttled ones: adding the error counts would count them twice).
 * Offered load (bt_eval_offered) is shown beside it, never used as the side's use. */
static void requests(struct bt_eval *e)
{
    e->requests = NAN;
    e->requests_q = BT_QL_UNKNOWN;
    e->requests_source = NULL;
    if (!isnan(e->admitted)) {
        e->requests = e->admitted;
        e->requests_q = BT_QL_KNOWN;
        e->requests_source = "admission";
    } else if (e->state == BT_FR_IDLE) {
        e->requests = 0;
        e->requests_q = BT_QL_IDLE;
        e->requests_source = "cloudwatch";
    } else if (e->state == BT_FR_ACTIVE && !isnan(e->invocations)) {
        e->requests = e->invocations;
        e->requests_q = BT_QL_KNOWN;
        e->requests_source = "cloudwatch";
    }
}

/* Service tiers: the calls ResolvedServiceTier=reserved served draw on the reserved
 * capacity, not the on-demand quota, so their share is taken out of the route's
 * counts before the contract's formulas (overflow to Standard stays in). */
static void take_out_reserved_tier(const struct bt_store *st, int r, int64_t m, struct raw *x,
                                   struct bt_tier_fig *tf)
{
    tf->share = tf->inv = tf->input = tf->output = NAN;
    if (x->state != BT_FR_ACTIVE)
        return;
    double inv = at(st, r, BT_SIG_TIER_RES_INVOCATIONS, m);
    if (isnan(inv) || !(x->inv > 0))
        return;
    if (inv > x->inv)
        inv = x->inv; /* a tier's calls are some of the route's */
    double share = inv / x->inv, keep = 1 - share;
    tf->inv = inv;
    tf->share = share;
    tf->input = bt_z(at(st, r, BT_SIG_TIER_RES_INPUT, m));
    tf->output = bt_z(at(st, r, BT_SIG_TIER_RES_OUTPUT, m));
    x->inv -= inv;
    x->input = fmax(0, bt_z(x->input) - tf->input);
    x->output = fmax(0, bt_z(x->output) - tf->output);
    x->cache_read *= keep;
    x->cache_write *= keep;
    x->estimated *= keep;
    x->adm_in_flight *= keep;
    x->adm_held *= keep;
    x->adm_reserved *= keep;
    x->adm_admitted *= keep;
}

/* How sure the day's sum through minute dm is: a day sum stored, or the day-sum
 * query asked and answered without a datapoint (nothing before it), is known; else
 * the per-minute sum since midnight is known only when a poll covered every minute
 * of it (a route without coverage records: the minutes its history holds), and a
 * lower bound when some were never asked (a failed day sum: what is covered). */
static enum bt_quality tokens_today_quality(const struct bt_config *cfg, const struct bt_store *st,
                                            int r, int64_t dm)
{
    int64_t day = dm - dm % 86400;
    if (bt_store_has_day_sum(st, r, dm))
        return BT_QL_KNOWN;
    bool recorded = bt_store_cover_recorded(st, r);
    if (recorded && bt_store_covered(st, r, BT_SIG_DAY_INPUT_TOKENS, day) == BT_COV_SETTLED)
        return BT_QL_KNOWN;
    int64_t kept = (int64_t)(cfg->history_minutes > 0 ? cfg->history_minutes : st->history) * 60;
    for (int64_t m = day; m <= dm; m += 60) {
        bool known = recorded ? bt_store_covered(st, r, BT_SIG_INPUT_TOKENS, m) == BT_COV_SETTLED
                              : dm - m < kept && dm - m < (int64_t)st->history * 60;
        if (!known)
            return BT_QL_LOWER;
    }
    return BT_QL_KNOWN;
}

/* The day through minute dm, as sure as day_q, into e's tokens today. */
static void take_day(const struct bt_store *st, const struct bt_route *rt, int r, int64_t dm,
                     enum bt_quality day_q, struct bt_eval *e)
{
    e->tokens_today_q = day_q;
    double t = bt_day_tokens(st, rt, r, dm);
    e->tokens_today = isnan(t) ? 0 : t;
}

void bt_eval_read_day(const struct bt_config *cfg, const struct bt_store *st, int r,
                      struct bt_eval *e)
{
    int64_t dm = bt_eval_day_minute(e);
    if (dm && e->tokens_today_q == BT_QL_UNKNOWN)
        take_day(st, &cfg->routes[r], r, dm, tokens_today_quality(cfg, st, r, dm), e);
}

/* Everything about one route that does not depend on the other routes, in its
 * group's frame: CloudWatch at the group's evaluated minute m, gauges at the newest
 * scrape. */
void bt_eval_route_part(const struct bt_config *cfg, const struct bt_store *st, int r,
                        int64_t now, int64_t m, bool figures_only, struct bt_eval *e)
{
    const struct bt_route *rt = &cfg->routes[r];
    /* the warnings are written by the rules, each before it is read: clearing the
     * ~7 kB of them per route and frame was most of an evaluation's memset */
    memset(e, 0, offsetof(struct bt_eval, warnings));
    e->nwarn = 0;
    e->route = r;
    e->now = now;
    e->mantle = rt->endpoint == BT_EP_MANTLE;
    /* alone until its groups are evaluated (core/headroom.c) */
    e->group = (struct bt_group_fig){.leader = r, .n = 1, .unknown = {-1, -1}, .rate = NAN};
    e->group_next = -1;
    for (int d = 0; d < 2; d++)
        e->day[d] = (struct bt_group_fig){.leader = r, .unknown = {-1, -1}, .rate = NAN};
    e->daily = BT_SIDE_COUNT;
    double *nans[] = {&e->settled, &e->estimated, &e->held, &e->used, &e->reserved_per_min,
                      &e->reservation, &e->in_flight, &e->quota,
                      &e->headroom_tpm, &e->headroom_pct, &e->fits_more,
                      &e->burndown_measured, &e->avg_input, &e->avg_output,
                      &e->recommended_max_tokens, &e->fits_more_recommended, &e->tokens_today,
                      &e->offered_growth,
                      &e->accepted_growth, &e->littles_in_flight, &e->server_errors_before,
                      &e->throttles_before};
    for (size_t i = 0; i < BT_ARRAY_LEN(nans); i++)
        *nans[i] = NAN;
    e->burndown = e->mantle ? NAN : rt->burndown;
    e->burndown_source = e->mantle ? "none" : rt->burndown_source;

    /* the frame: this route's place in its group's evaluated minute */
    e->minute = m;
    e->state = bt_frame_settled(cfg, st, r, now) && m ? BT_FR_ACTIVE : BT_FR_UNKNOWN;
    e->data_minute = newest_usage(st, r, m ? m : now);
    int64_t fresher = newest_usage(st, r, now + 60);
    e->fresher_minute = fresher > m ? fresher : 0;
    if (e->state == BT_FR_ACTIVE && e->data_minute != m)
        e->state = BT_FR_IDLE; /* settled and fetched, no datapoint: no calls */
    if (e->state != BT_FR_UNKNOWN && !frame_covered(st, r, m))
        e->state = BT_FR_UNKNOWN; /* the group's minute, never asked for this member */
    if (e->state == BT_FR_UNKNOWN)
        e->data_minute = newest_usage(st, r, now);
    int64_t cm = e->state == BT_FR_UNKNOWN ? 0 : m; /* what CloudWatch is read at */
    e->adm_minute = bt_eval_adm_minute(st, r, now);
    int64_t am = e->adm_minute;
    struct raw x;
    read_raw(st, r, rt, cm, am, e->state, &x);
    e->invocations = x.inv; /* every tier's */
    double gauge_all = x.adm_in_flight, littles_all = bt_littles_law(x.inv, x.lat_avg);
    struct bt_tier_fig tf;
    take_out_reserved_tier(st, r, cm, &x, &tf);
    e->tier_reserved_share = tf.share;
    e->tier_reserved_inv = tf.inv;
    e->tier_reserved_input = tf.input;
    e->tier_reserved_output = tf.output;
    fallback_reservation(st, r, rt, m, am, &x);
    struct bt_minute_fig f;
    figures(rt, &x, &f);
    e->settled = f.settled;
    e->estimated = f.estimated;
    e->reservation = f.reservation;
    e->in_flight = f.in_flight;
    e->held = f.held;
    e->held_q = f.held_q;
    e->reserved_per_min = f.reserved_per_min;
    e->used = f.used;
    e->used_q = f.used_q;
    e->reservation_source = f.reservation_source;
    e->in_flight_source = f.in_flight_source;
    e->held_source = f.held_source;
    e->reserved_source = f.reserved_source;
    if (!isnan(e->tier_reserved_share) && e->in_flight_source) {
        /* calls in flight on every tier (what the concurrency limit bounds); held is
         * the on-demand share's */
        e->in_flight = !strcmp(e->in_flight_source, "admission") ? gauge_all : littles_all;
    }

    e->input_tokens = x.input;
    e->output_tokens = x.output;
    e->cache_read = x.cache_read;
    e->cache_write = x.cache_write;
    e->lat_avg = x.lat_avg;
    bool idle = e->state == BT_FR_IDLE;
    /* mantle publishes no throttle metric, and InferenceClientErrors leaves out the
     * 429s refused before processing: its throttles are not published, never 0 */
    e->throttles = e->mantle ? NAN : idle ? 0 : at(st, r, BT_SIG_THROTTLES, cm);
    e->client_errors = idle ? 0 : at(st, r, BT_SIG_CLIENT_ERRORS, cm);
    e->server_errors = idle ? 0 : at(st, r, BT_SIG_SERVER_ERRORS, cm);
    /* five minutes before: 0 where a poll asked and found none, unknown where none asked */
    e->server_errors_before = cm ? count_at(st, r, BT_SIG_SERVER_ERRORS, cm - 300) : NAN;
    e->throttles_before = cm ? count_at(st, r, BT_SIG_THROTTLES, cm - 300) : NAN;
    read_table(st, r, cm, eval_latency, BT_ARRAY_LEN(eval_latency), e);
    e->littles_in_flight = bt_littles_law(x.inv, x.lat_avg);
    e->max_tokens = x.max_tokens;
    if (!isnan(x.inv) && x.inv > 0) {
        e->avg_input = (e->mantle ? bt_z(x.input) : bt_z(x.input) + bt_z(x.cache_read) + bt_z(x.cache_write)) /
                       x.inv;
        if (!isnan(x.output))
            e->avg_output = x.output / x.inv;
    }
    if (!e->mantle && !isnan(x.estimated) && !isnan(x.output) && x.output >= 100) {
        /* AWS's estimate is the completion-time charge: solve it for the burndown */
        e->burndown_measured = (x.estimated - bt_z(x.input) - bt_z(x.cache_write)) / x.output;
    }

    e->conc_limit = at(st, r, BT_SIG_ADM_CONC_LIMIT, am);
    if (isnan(e->conc_limit))
        e->conc_limit = rt->concurrency_limit;
    read_table(st, r, am, eval_adm, BT_ARRAY_LEN(eval_adm), e);
    if (am) {
        static const enum bt_signal offered[] = {BT_SIG_ADM_ADMITTED, BT_SIG_ADM_RETRIES,
                                                 BT_SIG_ADM_REJECTED};
        static const enum bt_signal accepted[] = {BT_SIG_ADM_COMPLETED};
        e->offered_growth = growth(st, r, offered, 3, am);
        e->accepted_growth = growth(st, r, accepted, 1, am);
    }
    requests(e);
    for (int s = 0; s < BT_SRC_COUNT; s++) {
        e->last_ok[s] = bt_store_status_c(st, r, (enum bt_source)s)->last_ok;
        e->failing[s] = source_failing(bt_store_status_c(st, r, (enum bt_source)s));
    }
    check_staleness(cfg, st, r, e);
    if (!figures_only)
        bt_speed_compute(st, r, cm, &e->speed);

    /* Tokens today: the day's sums from CloudWatch (hourly datapoints since midnight,
     * and the minutes after them), else settled per minute summed since UTC midnight
     * (within history), with the quality its coverage gives it. */
    e->rpm_quota = rt->quota[BT_Q_RPM].value;
    e->tokens_today_q = BT_QL_UNKNOWN;
    int64_t dm = bt_eval_day_minute(e); /* the one minute the day is read through */
    enum bt_quality day_q = dm ? tokens_today_quality(cfg, st, r, dm) : BT_QL_UNKNOWN;
    /* read where a daily quota of the route's own asks for it; a member of a daily
     * group whose quota another member lists is read by its group (bt_eval_read_day) */
    if (dm && (bt_store_has_day_sum(st, r, dm) || !isnan(rt->quota[BT_Q_TPD].value) ||
               !isnan(rt->quota[BT_Q_TPD_ACCOUNT].value)))
        take_day(st, rt, r, dm, day_q, e);
    bt_cost_eval(cfg, st, r, !figures_only, day_q, e);
}

double bt_day_tokens(const struct bt_store *st, const struct bt_route *rt, int r, int64_t dm)
{
    double in = bt_store_day_sum(st, r, BT_SIG_DAY_INPUT_TOKENS, dm);
    double cw = bt_store_day_sum(st, r, BT_SIG_DAY_CACHE_WRITE, dm);
    double out = bt_store_day_sum(st, r, BT_SIG_DAY_OUTPUT_TOKENS, dm);
    if (isnan(in) && isnan(cw) && isnan(out))
        return NAN;
    return bt_settled_tpm(bt_z(in), bt_z(cw), bt_z(out), rt->endpoint == BT_EP_MANTLE ? 1 : rt->burndown);
}

struct bt_region_count bt_region_count(const struct bt_config *cfg, const struct bt_eval *evals,
                                       const int *which, int n)
{
    struct bt_region_count c = {0, 0};
    if (!which)
        n = cfg->nroutes;
    /* the distinct Regions so far (a fleet has few): each route compared with them,
     * not with every other route (n x n: a quarter of a 500-route frame) */
    const char **seen = bt_xcalloc((size_t)(n > 0 ? n : 1), sizeof *seen);
    bool *fail = bt_xcalloc((size_t)(n > 0 ? n : 1), sizeof *fail);
    int ns = 0;
    for (int i = 0; i < n; i++) {
        int q = which ? which[i] : i;
        const char *reg = cfg->routes[q].region;
        int k = 0;
        while (k < ns && strcmp(seen[k], reg) != 0)
            k++;
        if (k == ns)
            seen[ns++] = reg;
        fail[k] |= evals[q].failing[BT_SRC_CLOUDWATCH] || evals[q].failing[BT_SRC_QUOTAS];
    }
    c.regions = ns;
    for (int k = 0; k < ns; k++)
        c.failing += fail[k];
    free(fail);
    free(seen);
    return c;
}

/* The first instant after now at which the clock alone (the store unchanged) may
 * change what an evaluation at now found, apart from the instant itself (e->now:
 * ages): a source going stale, admission counters falling silent, a provisioned
 * route's day so far. INT64_MAX: none. serve keeps one evaluation until then or
 * until new data arrive (issue 38: one render per data generation). */
int64_t bt_eval_changes_at(const struct bt_config *cfg, const struct bt_store *st,
                           const struct bt_eval *evals, int64_t now)
{
    int64_t at = INT64_MAX, stale = stale_after(cfg);
    int64_t iv = (int64_t)cfg->interval, next_minute = bt_minute_floor(now) + 60;
    for (int r = 0; r < cfg->nroutes; r++) {
        const struct bt_eval *e = &evals[r];
        const struct bt_source_status *cw = bt_store_status_c(st, r, BT_SRC_CLOUDWATCH);
        /* check_staleness and cw_readable: stale once now - last_ok > stale_after */
        int64_t t = cw->last_ok + stale + 1;
        if (cw->last_ok && !source_failing(cw) && t > now && t < at)
            at = t;
        /* admission silent once bt_minute_floor(now) > adm_minute + 180 + interval */
        t = bt_minute_floor(e->adm_minute + 180 + iv) + 60;
        if (e->adm_minute && t > now && t < at)
            at = t;
        /* cost.c: a provisioned route's spend today counts the minutes since 00:00 */
        if (e->spend.row && cfg->routes[r].inference == BT_INF_PROVISIONED && next_minute < at)
            at = next_minute;
    }
    return at;
}

bool bt_eval_same_at(const struct bt_config *cfg, const struct bt_store *st,
                     const struct bt_eval *evals, int64_t now, int64_t later)
{
    if (later <= now || bt_minute_floor(later) != bt_minute_floor(now) ||
        bt_data_minute(cfg, later) != bt_data_minute(cfg, now) ||
        later >= bt_eval_changes_at(cfg, st, evals, now))
        return false;
    for (int r = 0; r < cfg->nroutes; r++) { /* check_staleness: "(%.0f min)" */
        const struct bt_source_status *cw = bt_store_status_c(st, r, BT_SRC_CLOUDWATCH);
        if (cw->last_ok && !source_failing(cw) && later - cw->last_ok > stale_after(cfg))
            return false;
    }
    return true;
}
