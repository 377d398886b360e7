/* What the tokens cost (DOMAIN.md "What tokens cost", DESIGN.md "Who holds the quota,
 * and what it costs"): a route's spend per hour at the evaluated minute's rate and
 * since 00:00 UTC, priced from the price table (core/prices.h) by model, Region,
 * endpoint, inference type and service tier; cache reads and writes at their own
 * prices; Provisioned Throughput per model unit and hour. List prices only, so
 * every figure is an estimate; a price the table lacks is unknown, never 0. The
 * sums per quota group and Region, and the SPEND_SPIKE baseline. */
#ifndef BEDTOP_COST_H
#define BEDTOP_COST_H
#include "core/headroom.h"
#include "core/prices.h"

/* USD for token counts at a row's prices per million: in x in + out x out + cache
 * reads x cache_read + cache writes x cache_write. NAN when a count above 0 has no
 * price in the row (why says which; NULL: not said); a NAN count is 0. */
double bt_cost_tokens(const struct bt_price_row *row, double in, double out, double cache_read,
                      double cache_write, char *why, size_t n);
/* The row that prices route r (its model, else base model; Region, endpoint,
 * inference type, tier; a provisioned route: a unit_hour row), NULL with the reason. */
const struct bt_price_row *bt_cost_row(const struct bt_config *cfg, const struct bt_route *r,
                                       char *why, size_t n);
/* USD route r spent in one minute, from its token counts at that minute: 0 for a
 * minute covered with no datapoint, NAN when the minute is not known or not priced. */
double bt_cost_minute(const struct bt_store *st, int r, const struct bt_price_row *row,
                      int64_t minute);
/* The SPEND_SPIKE windows: the recent window is BT_SPEND_RECENT... set by
 * spend_spike_minutes; the baseline is the BT_SPEND_BASELINE minutes before it, of
 * which at least BT_SPEND_BASELINE_MIN must be known. */
#define BT_SPEND_BASELINE 120
#define BT_SPEND_BASELINE_MIN 30
/* Fills e->spend for route r of an evaluation in its frame (core/frame.c calls it):
 * the rate per hour; with rules (not figures_only) the day's spend and the spike
 * windows too (a figures-only frame leaves usd_today unknown, saying so). day_q: how
 * sure the day's sums are (known: a day sum or every minute since midnight covered;
 * lower-bound: some of the day never asked), as the daily sides take it. */
void bt_cost_eval(const struct bt_config *cfg, const struct bt_store *st, int r, bool rules,
                  enum bt_quality day_q, struct bt_eval *e);

/* What route r spent in the data minutes [from, to] (inclusive): the known minutes'
 * spend summed (*minutes: how many were known), and the highest minute's rate in USD
 * per hour (*peak); a provisioned route, its unit-hours over the window. NAN (why
 * says so) when no row prices it. */
double bt_cost_window(const struct bt_config *cfg, const struct bt_store *st, int r,
                      int64_t from, int64_t to, double *peak, int *minutes, char *why,
                      size_t n);

/* A sum of spend over routes (a quota group, a Region): unknown members make it a
 * lower bound; with no member priced it is unknown (NAN). */
struct bt_spend_sum {
    char key[64];            /* the Region, or the group's leader route */
    double usd_per_hour, usd_today;
    enum bt_quality quality; /* estimate; lower-bound with an unpriced member */
    int routes, unpriced;    /* members, and those whose cost is unknown */
    int top;                 /* the member spending most per hour (-1: none priced) */
    double top_usd_per_hour;
};
/* Per Region of the routes shown (keep NULL: all), in order of first appearance;
 * returns how many (*out malloc'd, caller frees). Provisioned routes count. */
int bt_spend_by_region(const struct bt_config *cfg, const struct bt_eval *evals, const bool *keep,
                       struct bt_spend_sum **out);
/* The same for route i's quota group (its members from the evals). */
void bt_spend_of_group(const struct bt_config *cfg, const struct bt_eval *evals, int i,
                       struct bt_spend_sum *out);

/* SPEND_SPIKE of a quota group (more than one member): the median of the group's
 * summed spend per minute over the spend_spike_minutes to the evaluated minute of
 * route `leader`'s group, and over the BT_SPEND_BASELINE minutes before, USD per hour
 * (a minute counts where every priced member's spend is known; *baseline_minutes:
 * how many; a baseline of fewer than BT_SPEND_BASELINE_MIN is NAN). False when no
 * member is priced or the group's rate is below the floor. */
bool bt_spend_group_window(const struct bt_config *cfg, const struct bt_store *st,
                           const struct bt_eval *evals, int leader, double *recent,
                           double *baseline, int *baseline_minutes);

/* Spend per team (DESIGN.md "Who holds the quota": the admission counters' team
 * label): each route's spend split by the route's shares by team (core/shares.h: the
 * team's part of the route's use at its admission scrape), summed over the routes
 * shown (keep NULL: all). Use no team label tells apart is BT_SHARE_UNATTRIBUTED's.
 * quality: estimate; a share from a bound makes the team's spend that bound
 * (lower-bound, upper-bound), an unpriced or unknown route a lower bound. The day's
 * spend is each route's day split by its shares now (earlier minutes' shares are not
 * kept): an estimate of the same kind. */
struct bt_spend_team {
    char name[96];
    double usd_per_hour, usd_today;
    enum bt_quality quality;
    int routes;              /* routes it calls on */
    int top;                 /* the route it spends most on per hour (-1: none) */
    double top_usd_per_hour;
};
/* Largest spender per hour first, unattributed last; returns how many (*out
 * malloc'd, caller frees), 0 (*out NULL) when no route's shares name a team. */
int bt_spend_by_team(const struct bt_config *cfg, const struct bt_store *st,
                     const struct bt_eval *evals, const bool *keep, struct bt_spend_team **out);
/* The config's budget_usd_per_day of team `name` ([team NAME]) or of the quota group
 * of route r ([group ROUTE] naming any route of it, r's group by the evals), NAN none. */
double bt_spend_team_budget(const struct bt_config *cfg, const char *name);
double bt_spend_group_budget(const struct bt_config *cfg, const struct bt_eval *evals, int r);
#endif
