/* bedtop plan's output: the what-if, forecast, ceiling, speed and the limits to set,
 * as text (80 columns) or JSON (data/plan.schema.json). Figures come from core/plan.h;
 * nothing is computed here. */
#ifndef BEDTOP_RENDER_PLAN_H
#define BEDTOP_RENDER_PLAN_H
#include <stdbool.h>
#include <stdint.h>

#include "core/plan.h"
#include "core/util.h"

struct bt_plan_view {
    const struct bt_config *cfg;
    const char *mode;                /* live demo replay source */
    int64_t now;
    const struct bt_plan_change *change;
    const struct bt_whatif *w;       /* before (and after when a change was given) */
    const struct bt_forecast *forecast;
    const struct bt_ceiling *ceiling;
    const struct bt_limits *limits;  /* NULL: --limits not asked */
    int width;                       /* the prose's columns: 0 is 80 (the dashboard's box: its own) */
};

/* What the change is, in words ("max_tokens 768, traffic x2"); "none" when none. */
void bt_plan_change_text(const struct bt_plan_change *c, char *out, size_t n);
void bt_plan_render_text(const struct bt_plan_view *v, struct bt_buf *out);
void bt_plan_render_json(const struct bt_plan_view *v, struct bt_buf *out);
/* The admission policy an admission controller can load (one JSON object). */
void bt_plan_policy_json(const struct bt_plan_view *v, bool pretty, struct bt_buf *out);
#endif
