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

/* Everything about one route that does not depend on the other routes (frame.c). */
void bt_eval_route_part(const struct bt_config *cfg, const struct bt_store *st, int r,
                        int64_t now, struct bt_eval *e);
/* Runs every warning rule on an evaluated route and sets its status (rules.c). */
void bt_rules_apply(const struct bt_config *cfg, const struct bt_route *rt, struct bt_eval *e);
#endif
