/* Shared by the parts of planning (core/plan.c what-if, forecast.c, planlimits.c);
 * not for views. */
#ifndef BEDTOP_PLAN_INT_H
#define BEDTOP_PLAN_INT_H
#include <stdint.h>

#include "core/plan.h"

/* Adds an assumption, in words with its numbers (past BT_PLAN_MAX_NOTES: dropped). */
void bt_plan_note(struct bt_plan_notes *n, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Every route's frame as it was evaluated for minute m: the time at which m was the
 * newest settled minute (bt_frame_settled: the minute's end plus the collector's lag).
 * g: cfg's groups (bt_eval_groups_new, once for every minute asked); the figures
 * only, without the warnings (planning reads figures); need: bt_eval_all_with's. */
void bt_plan_frame_at(const struct bt_config *cfg, const struct bt_store *st, int64_t m,
                      const struct bt_eval_groups *g, const bool *need, struct bt_eval *evals);
#endif
