/* Adaptive cadence (core/cadence.h): whether a route may be asked every 5 minutes. */
#include "core/cadence.h"

#include <math.h>
#include <stdlib.h>

#include "core/util.h"

const char *bt_cadence_why_name(enum bt_cadence_why w)
{
    static const char *const names[] = {"calm", "unknown", "near", "throttled", "rising"};
    return (unsigned)w < BT_ARRAY_LEN(names) ? names[w] : "unknown";
}

/* A throttle in the minutes [now - 15 min, now): CloudWatch's or the counters'. */
static bool throttled_lately(const struct bt_store *st, int r, int64_t now)
{
    int64_t m = bt_minute_floor(now);
    for (int k = 1; k <= BT_CADENCE_CALM_MINUTES; k++) {
        double t = bt_store_at(st, r, BT_SIG_THROTTLES, m - 60 * k);
        double a = bt_store_at(st, r, BT_SIG_ADM_THROTTLED, m - 60 * k);
        if ((!isnan(t) && t > 0) || (!isnan(a) && a > 0))
            return true;
    }
    return false;
}

/* Growth of the route's calls or input tokens over the 5 minutes to its evaluated
 * minute (first vs last), or the admission counters' offered load; the largest. */
static double growth(const struct bt_store *st, const struct bt_eval *e)
{
    static const enum bt_signal sig[] = {BT_SIG_INVOCATIONS, BT_SIG_INPUT_TOKENS};
    double g = e->offered_growth;
    for (size_t i = 0; e->minute && i < BT_ARRAY_LEN(sig); i++) {
        double a = bt_store_at(st, e->route, sig[i], e->minute - 240);
        double b = bt_store_at(st, e->route, sig[i], e->minute);
        if (!isnan(a) && !isnan(b) && a > 0 && (isnan(g) || (b - a) / a > g))
            g = (b - a) / a;
    }
    return g;
}

/* Whether a headroom of quality q says how far the limit is at least: known, idle, or a
 * lower bound (the use an upper bound: the true headroom is no less). */
static bool headroom_far_known(enum bt_quality q)
{
    return q == BT_QL_KNOWN || q == BT_QL_IDLE || q == BT_QL_LOWER;
}

enum bt_cadence_why bt_cadence_rule(const struct bt_config *cfg, const struct bt_store *st,
                                    const struct bt_eval *e, int64_t now)
{
    /* a throttle first: it is what the fast cadence is for, known or not */
    if ((!isnan(e->throttles) && e->throttles > 0) || throttled_lately(st, e->route, now))
        return BT_CAD_THROTTLED;
    if (!e->minute || e->stale || e->state == BT_FR_UNKNOWN)
        return BT_CAD_UNKNOWN; /* no data to go by: every poll until there is */
    bool limited = false;
    for (int s = 0; s < BT_SIDE_COUNT; s++)
        limited |= e->side[s].applies;
    /* No limit known on any side (no quota configured or listed): there is no headroom
     * the per-minute figures could show shrinking, so they are what a calm route's are,
     * every 5 minutes; the throttles, asked every poll, are the only witness of a limit
     * and bring the route back to every minute (above). A route with a limit whose
     * figure is not known (no evaluated minute, a side unknown) stays every minute. */
    if (limited) {
        if (!headroom_far_known(e->headroom_q) || isnan(e->headroom_pct))
            return BT_CAD_UNKNOWN;
        if (bt_headroom_level(cfg, e) != BT_ST_OK)
            return BT_CAD_NEAR;
    }
    for (int s = 0; s < BT_SIDE_COUNT; s++) {
        const struct bt_side_fig *f = &e->side[s];
        if (!f->applies)
            continue;
        /* a side with no usable figure is not known to be far from its limit */
        if (isnan(f->pct) || !headroom_far_known(f->headroom_q))
            return BT_CAD_UNKNOWN;
        if (100 - f->pct >= BT_CADENCE_CALM_USED_PCT)
            return BT_CAD_NEAR;
    }
    double g = growth(st, e);
    if (!isnan(g) && g > BT_CADENCE_STEADY_GROWTH)
        return BT_CAD_RISING;
    return BT_CAD_CALM;
}

int bt_cadence_all(const struct bt_config *cfg, const struct bt_store *st,
                   const struct bt_eval *evals, int64_t now, bool *slow)
{
    int n = cfg->nroutes;
    /* per group leader: does any member need every poll? */
    bool *busy = bt_xcalloc((size_t)(n ? n : 1), sizeof *busy);
    for (int r = 0; r < n; r++) {
        slow[r] = bt_cadence_rule(cfg, st, &evals[r], now) == BT_CAD_CALM;
        int g = evals[r].group.leader;
        if (!slow[r] && g >= 0 && g < n)
            busy[g] = true;
    }
    int k = 0;
    for (int r = 0; r < n; r++) {
        int g = evals[r].group.leader;
        if (slow[r] && g >= 0 && g < n && busy[g])
            slow[r] = false;
        k += slow[r];
    }
    free(busy);
    return k;
}
