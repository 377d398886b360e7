/* Shared by the parts of the evaluation (core/headroom.c, frame.c, sides.c, rules.c);
 * not for views. */
#ifndef BEDTOP_EVAL_INT_H
#define BEDTOP_EVAL_INT_H
#include <math.h>

#include "core/headroom.h"

static inline double bt_z(double v)
{
    return isnan(v) ? 0 : v;
}

static inline double bt_nanmax(double a, double b)
{
    if (isnan(a))
        return b;
    if (isnan(b))
        return a;
    return a > b ? a : b;
}

/* The newest minute route r's last good CloudWatch poll settled and fetched; 0 when
 * its CloudWatch cannot be read (frame.c). A group's evaluated minute is the oldest
 * of its readable members'. */
int64_t bt_frame_settled(const struct bt_config *cfg, const struct bt_store *st, int r,
                         int64_t now);
/* Everything about one route that does not depend on the other routes, at its
 * group's evaluated minute m (frame.c); figures_only leaves out the output speed
 * (context for views: no side, rule or plan reads it). */
void bt_eval_route_part(const struct bt_config *cfg, const struct bt_store *st, int r,
                        int64_t now, int64_t m, bool figures_only, struct bt_eval *e);

/* sides.c: a side's route figures (quota q, NULL: none), sums over a group, the
 * group's headroom and the one binding rule */
void bt_side_route(struct bt_side_fig *f, const struct bt_quota *q, double used,
                   enum bt_quality used_q, double per_call, const char *source);
void bt_side_sum(double *sum, enum bt_quality *q, bool first, const struct bt_side_fig *f);
void bt_side_group(struct bt_side_fig *f, double group_used, enum bt_quality group_q);
enum bt_side bt_side_binding(const struct bt_side_fig *s, enum bt_side token_side);
/* Runs every warning rule on an evaluated route and sets its status (rules.c); g is
 * its quota group (SHARED_QUOTA names the members). */
void bt_rules_apply(const struct bt_config *cfg, const struct bt_route *rt, struct bt_eval *e,
                    const struct bt_group *g);
/* SPEND_SPIKE of the sums, after every route is evaluated (rules.c): a quota group's
 * spend rate off its baseline or past its [group ROUTE] budget, a [team NAME]'s day
 * past its budget, and a Region's day past [bedtop] budget_usd_per_day, each on its
 * biggest spender, naming who spends. */
void bt_rules_spend_sums(const struct bt_config *cfg, const struct bt_store *st,
                         struct bt_eval *evals);
#endif
