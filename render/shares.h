/* Who holds the quota, written out (core/shares.h computes): the JSON `shares` of a
 * route's quota group and `check --by` as a plain table. */
#ifndef BEDTOP_RENDER_SHARES_H
#define BEDTOP_RENDER_SHARES_H
#include <cjson/cJSON.h>

#include "core/shares.h"
#include "render/report.h"

/* "shares": [{"by","name","used","pct","quality","source"[,"reason"]}, ...] of route
 * i's quota group, by team, by project (a mantle group) and by route. */
void bt_shares_json(struct bt_jw *route, const struct bt_report *r, int i);
/* The table of check --by: every quota group with a route shown, its shares by `by`
 * (label: the team label, NULL: the config's). */
void bt_shares_render_table(const struct bt_report *r, enum bt_share_by by, const char *label,
                            struct bt_buf *out);
/* "team", "tag:KEY" (the config's attribute_by key), "project", "route" (false: none
 * of them; why says what is accepted). */
bool bt_shares_parse_by(const struct bt_config *cfg, const char *s, enum bt_share_by *by,
                        char *why, size_t n);
/* plan ROUTE --limits --by KEY: the per-holder budgets as admission policy JSON. */
void bt_shares_budgets_json(const struct bt_config *cfg, int r, int64_t now,
                            const struct bt_share_budgets *b, struct bt_buf *out);
#endif
