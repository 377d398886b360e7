/* The load rules (core/rulesload.c): what a route's calls do to its quota, checked for
 * the rows of core/rules.c's warning table, beneath it in the evaluation's layers (its
 * types are core/rules.h's). */
#ifndef BEDTOP_RULESLOAD_H
#define BEDTOP_RULESLOAD_H
#include <stdbool.h>

#include "core/config.h"
#include "core/rules.h"

/* The cause a THROTTLED_BELOW_ESTIMATE warning named (core/rulesload.c, the one rule every
 * view reads): a short name ("capacity", "rpm", "daily", "retries", "reservations",
 * "shared", "bursts", "unseen") and its words ("a retry storm"); NULL for any other
 * warning. */
const char *bt_throttle_cause(const struct bt_warning *w, const char **words);
/* Server errors point to service capacity, not a quota, when they are at least a tenth
 * of the throttles beside them: the rules' test, and the observed ceiling's. */
bool bt_capacity_evidence(double server_errors, double throttles);

struct bt_eval;
/* What the headroom alone says against the warn/crit thresholds (ok, warn, crit;
 * unknown when the headroom is): the dashboard colours HEAD% by it, not by the
 * route's status, which other warnings raise too. */
enum bt_status bt_headroom_level(const struct bt_config *cfg, const struct bt_eval *e);

/* The warning table's own (core/rules.c); not for views. */
/* Sets a warning's severity and its message, printf's way (every rule's). */
void bt_rule_say(struct bt_warning *w, enum bt_status sev, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The checks of the load rules' rows (ESTIMATE_ONLY, THROTTLED_BELOW_ESTIMATE,
 * OVERSIZED_MAX_TOKENS, RETRY_LOAD, HIDDEN_PARALLELISM, LOW_HEADROOM, OUTPUT_CUTOFF,
 * SLOWDOWN): each fills w and says true when its warning is raised. */
typedef bool bt_rule_check(const struct bt_config *cfg, const struct bt_route *r,
                           struct bt_eval *e, struct bt_warning *w);
bt_rule_check bt_rule_estimate_only, bt_rule_throttled_below, bt_rule_oversized,
    bt_rule_retry_load, bt_rule_hidden_parallelism, bt_rule_low_headroom, bt_rule_output_cutoff,
    bt_rule_slowdown;
#endif
