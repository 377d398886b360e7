/* The built-in demo workload: a deterministic simulated account whose story
 * triggers every warning code. It feeds samples through the same store as the
 * real collectors. */
#ifndef BEDTOP_DEMO_H
#define BEDTOP_DEMO_H
#include <stdint.h>

#include "collectors/collector.h"

#define BT_DEMO_T0 1795946400   /* 2026-11-29T10:00:00Z: story minute 0 */
#define BT_DEMO_STORY_MINUTES 30 /* the story repeats every 30 simulated minutes */

/* Story minute 0: BT_DEMO_T0, or the minute set (serve --demo runs the story on the
 * wall clock, so Prometheus stores its samples at their own times). */
int64_t bt_demo_t0(void);
void bt_demo_set_t0(int64_t t0); /* a whole minute */

/* Adds the demo routes (and their config-side settings) to cfg. */
void bt_demo_config(struct bt_config *cfg);
extern const struct bt_collector_ops bt_demo_collector;
#endif
