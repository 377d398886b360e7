/* The spend figures (core/cost.h) in check's JSON and text: each route's `cost`, and
 * the sums per Region and quota group (`spend`). */
#ifndef BEDTOP_RENDER_SPEND_H
#define BEDTOP_RENDER_SPEND_H
#include <cjson/cJSON.h>

#include "render/report.h"

/* "$12.34", "$0.0123" below a dollar, "$1,234" from a thousand; "?" unknown */
void bt_fmt_usd(double usd, char *out, size_t n);
/* Adds route i's "cost" object to its JSON object o. */
void bt_spend_route_json(const struct bt_report *r, int i, struct bt_jw *o);
/* Adds the top-level "spend" object (Regions and quota groups of the routes shown). */
void bt_spend_json(const struct bt_report *r, cJSON *root);
/* Its members in three parts, for a report printed as it goes (the groups one at a
 * time: at 20,000 routes their tree was 15 MB of check's peak): those before
 * "groups" into sp, quota group i's item (NULL: i leads no group shown), those after
 * "groups" into sp. */
void bt_spend_json_head(const struct bt_report *r, cJSON *sp);
cJSON *bt_spend_group_json(const struct bt_report *r, int i);
void bt_spend_json_rest(const struct bt_report *r, cJSON *sp);
/* check's text: a "spend" paragraph (per Region, the biggest spenders, unpriced). */
void bt_spend_text(const struct bt_report *r, struct bt_buf *b);
/* The detail view's line: "$12.30/h, $80.10 today (estimate: list prices; row ...)". */
void bt_spend_line(const struct bt_eval *e, char *out, size_t n);
#endif
