/* Adaptive cadence: how often a route's per-minute CloudWatch signals are asked
 * (bedtop serve, the dashboard, record; never check or a backfill). A route far from
 * every limit (or with no limit known: no headroom to watch shrink) with steady
 * readings is asked every BT_CADENCE_SLOW_S seconds, its minutes backfilled in that
 * request, so the store still has every minute; it goes back to every poll the
 * moment the rule below no longer holds. InvocationThrottles
 * is asked every poll for every route, so a throttle is seen within a minute.
 * The rule is here, in one place; the collector only obeys it. */
#ifndef BEDTOP_CADENCE_H
#define BEDTOP_CADENCE_H
#include <stdbool.h>
#include <stdint.h>

#include "core/config.h"
#include "core/headroom.h"
#include "core/model.h"

#define BT_CADENCE_SLOW_S 300       /* a calm route's per-minute signals: every 5 minutes */
#define BT_CADENCE_CALM_USED_PCT 50 /* calm: every side at most half used */
#define BT_CADENCE_CALM_MINUTES 15  /* calm: no throttle in the last 15 minutes */
#define BT_CADENCE_STEADY_GROWTH 0.5 /* calm: offered load up at most 50 % in 5 minutes */

/* Why a route is asked every poll (BT_CAD_CALM: every BT_CADENCE_SLOW_S will do). */
enum bt_cadence_why {
    BT_CAD_CALM,      /* every condition below holds */
    BT_CAD_UNKNOWN,   /* no evaluated minute, stale, or a limit whose headroom is not
                       * known (a route with no limit known on any side can be calm) */
    BT_CAD_NEAR,      /* a side at or above BT_CADENCE_CALM_USED_PCT used, or past warn */
    BT_CAD_THROTTLED, /* a throttle (CloudWatch or admission) in the last 15 minutes */
    BT_CAD_RISING,    /* calls, input tokens or offered load rose more than
                       * BT_CADENCE_STEADY_GROWTH over the 5 minutes to the evaluated one */
};
const char *bt_cadence_why_name(enum bt_cadence_why w); /* calm unknown near throttled rising */

/* The rule for one route, from its evaluation at now and the store's throttles. */
enum bt_cadence_why bt_cadence_rule(const struct bt_config *cfg, const struct bt_store *st,
                                    const struct bt_eval *e, int64_t now);
/* Every route (evals: bt_eval_all at now): slow[r] true when r and every route on its
 * quota are calm (a quota group's evaluated minute waits for its slowest member, so
 * the group moves together). Returns how many routes are slow. */
int bt_cadence_all(const struct bt_config *cfg, const struct bt_store *st,
                   const struct bt_eval *evals, int64_t now, bool *slow);
#endif
