/* One route's figures in its quota group's evaluation frame (core/frame.c): what is read
 * from the store at the evaluated minute and at the newest scrape, and the contract's
 * formulas (the pure ones: core/formulas.h, which this header includes). Above
 * core/sides.h and core/formulas.h in the evaluation's layers; core/headroom.c evaluates
 * the groups with it. */
#ifndef BEDTOP_FRAME_H
#define BEDTOP_FRAME_H
#include <stdbool.h>
#include <stdint.h>

#include "core/config.h"
#include "core/formulas.h"
#include "core/sides.h"

struct bt_eval;

/* One route's figures for one minute, as the graphs draw them and as the
 * evaluation uses them (NAN unknown). For a mantle route they are the input side. */
struct bt_minute_fig {
    double settled;          /* charged at completion (mantle: input tokens) */
    double estimated;        /* EstimatedTPMQuotaUsage */
    double reservation;      /* R, per call */
    double in_flight;
    double held;             /* reservations held by the calls in flight */
    double reserved_per_min; /* reservations started in the minute */
    double used;             /* max(settled, estimated) + held, or the upper bound */
    enum bt_quality used_q, held_q;
    const char *reservation_source; /* "admission" "cloudwatch" "last-minutes" "max-tokens" NULL */
    const char *in_flight_source;   /* "admission" "littles-law" NULL */
    const char *held_source;        /* "admission" "littles-law" "upper-bound" NULL */
    const char *reserved_source;    /* "admission" "cloudwatch" NULL */
};
void bt_minute_figures(const struct bt_config *cfg, const struct bt_store *st, int route,
                       int64_t minute, struct bt_minute_fig *out);
/* The same, with the admission readings data minute `minute` is evaluated with
 * (core/dataminute.h), as a view at instant now shows that minute: the graphs. */
void bt_minute_figures_shown(const struct bt_config *cfg, const struct bt_store *st, int route,
                             int64_t minute, int64_t now, struct bt_minute_fig *out);
/* Reserved-tier traffic of one minute (ResolvedServiceTier=reserved), which draws on
 * the reserved capacity, not the on-demand quota (NAN: no tier series). */
struct bt_tier_fig {
    double share;            /* of the route's calls, 0-1 */
    double inv, input, output;
};
/* The same with the reserved tier taken out as the evaluation takes it out: the
 * on-demand quota's figures of the minute; *tier gets what was taken out. */
void bt_minute_figures_on_demand(const struct bt_config *cfg, const struct bt_store *st, int route,
                                 int64_t minute, struct bt_minute_fig *out, struct bt_tier_fig *tier);

/* The first instant after now at which the clock alone, the store unchanged, may
 * change what bt_eval_all at now found (evals), other than e->now itself (ages):
 * a source going stale, admission counters falling silent, a provisioned route's
 * spend today. INT64_MAX: none. */
int64_t bt_eval_changes_at(const struct bt_config *cfg, const struct bt_store *st,
                           const struct bt_eval *evals, int64_t now);
/* Whether bt_eval_all at `later` (> now), the store unchanged, finds what it found at
 * now (evals) but for e->now: the same minute and data minute, before
 * bt_eval_changes_at, and no route stale by an age its reason counts in minutes. */
bool bt_eval_same_at(const struct bt_config *cfg, const struct bt_store *st,
                     const struct bt_eval *evals, int64_t now, int64_t later);
/* Route r's settled tokens since 00:00 UTC through minute dm, as the daily sides count
 * them: the day sums (and the minutes after them) of input + cache write + output x
 * burndown (1 on mantle). NAN when none of them was read. */
double bt_day_tokens(const struct bt_store *st, const struct bt_route *rt, int r, int64_t dm);
/* Route r's tokens today (bt_day_tokens through its day minute, with the quality its
 * coverage gives) into e, where the route's evaluation left it unknown: a member of a
 * daily group whose quota only another member lists (core/headroom.c's daily sides),
 * so the group sums what the cross-model ledger does. */
void bt_eval_read_day(const struct bt_config *cfg, const struct bt_store *st, int r,
                      struct bt_eval *e);
/* The newest admission scrape minute of route r at or before limit (0: none): the
 * minute an evaluation at limit reads the admission counters at (adm_minute). */
int64_t bt_eval_adm_minute(const struct bt_store *st, int r, int64_t limit);
/* The scrape minute of the admission readings that data minute m is evaluated with:
 * the newest of route r's admission scrapes while m was the newest complete minute
 * (no later than now, no earlier than one poll interval before m is first shown), as
 * core/frame.c reads them at m's instant. The detail graphs file an admission reading
 * under the data minute it is evaluated with, as export's rows do. 0: none then. */
int64_t bt_data_minute_admission(const struct bt_config *cfg, const struct bt_store *st, int r,
                                 int64_t m, int64_t now);

/* The Regions of the routes evals[which[0..n-1]] (all cfg->nroutes when which is NULL):
 * how many, and how many are failing: CloudWatch or Service Quotas answers an error for
 * a route there (its route is stale, so unknown, with the reason: core/frame.c). */
struct bt_region_count { int regions, failing; };
struct bt_region_count bt_region_count(const struct bt_config *cfg, const struct bt_eval *evals,
                                       const int *which, int n);

/* The evaluation's own (core/headroom.c runs them); not for views. */
/* The newest minute route r's last good CloudWatch poll settled and fetched; 0 when
 * its CloudWatch cannot be read. A group's evaluated minute is the oldest of its
 * readable members'. */
int64_t bt_frame_settled(const struct bt_config *cfg, const struct bt_store *st, int r,
                         int64_t now);
/* Everything about one route that does not depend on the other routes, at its
 * group's evaluated minute m; figures_only leaves out the output speed (context for
 * views: no side, rule or plan reads it). */
void bt_eval_route_part(const struct bt_config *cfg, const struct bt_store *st, int r,
                        int64_t now, int64_t m, bool figures_only, struct bt_eval *e);
#endif
