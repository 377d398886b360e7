/* serve's and check --format prometheus's spend per team (render/exposition.h):
 *   bedtop_team_spend_usd_per_hour{team,quality}
 *   bedtop_team_spend_usd_today{team,quality}
 * where the admission counters name teams (core/cost.h bt_spend_by_team: each route's
 * spend split by the team's share of its use), the config's share_top_n biggest
 * spenders per hour and the rest summed as team="other", so 1,000 teams stay a dozen
 * series. The per-route bedtop_spend_usd_* families are exposition.c's. */
#include "render/exposition.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cost.h"
#include "core/sanitize.h"
#include "core/shares.h"

static void sample(const struct bt_report *r, const char *family, const char *team,
                   enum bt_quality q, double v, struct bt_buf *out)
{
    if (!isfinite(v))
        return; /* unknown is absent, never NaN */
    bt_buf_puts(out, family);
    bt_buf_puts(out, "{team=\"");
    bt_san_prom_label_buf(out, team);
    bt_buf_puts(out, "\",quality=\"");
    bt_buf_puts(out, bt_quality_name(q));
    bt_buf_putc(out, '"');
    if (r->mode && !strcmp(r->mode, "demo"))
        bt_buf_puts(out, ",mode=\"demo\"");
    if (r->replica) {
        bt_buf_puts(out, ",replica=\"");
        bt_san_prom_label_buf(out, r->replica);
        bt_buf_putc(out, '"');
    }
    bt_buf_printf(out, "} %.4f\n", v);
}

void bt_expo_spend(const struct bt_report *r, struct bt_buf *out)
{
    struct bt_spend_team *t = NULL;
    int n = bt_spend_by_team(r->cfg, r->store, r->evals, r->keep, &t);
    if (!n)
        return;
    int top = r->cfg->share_top_n > 0 ? r->cfg->share_top_n : 10;
    /* the top N named teams keep their rows; the rest fold into "other" (unattributed
     * is last in t and keeps its own) */
    struct bt_spend_team other = {.quality = BT_QL_ESTIMATE, .top = -1};
    bt_strlcpy(other.name, BT_SHARE_OTHER, sizeof other.name);
    int kept = 0, folded = 0;
    for (int k = 0; k < n; k++) {
        bool unattr = !strcmp(t[k].name, BT_SHARE_UNATTRIBUTED);
        if (unattr || kept < top) {
            kept += !unattr;
            continue;
        }
        other.usd_per_hour += t[k].usd_per_hour;
        other.usd_today += t[k].usd_today;
        if (t[k].quality != BT_QL_ESTIMATE)
            other.quality = BT_QL_LOWER;
        t[k].routes = -1; /* folded */
        folded++;
    }
    static const char *const fam[2] = {"bedtop_team_spend_usd_per_hour",
                                       "bedtop_team_spend_usd_today"};
    static const char *const help[2] = {
        "Spend of a team (the admission counters' team label) at list prices at the evaluated "
        "minute's rate, USD per hour: each route's spend split by the team's share of its use "
        "(an estimate; top share_top_n teams, the rest as team=\"other\").",
        "Spend of a team at list prices since 00:00 UTC, USD: each route's day split by the "
        "team's share of its use now (an estimate)."};
    for (int f = 0; f < 2; f++) {
        bt_buf_printf(out, "# HELP %s %s\n# TYPE %s gauge\n", fam[f], help[f], fam[f]);
        for (int k = 0; k < n; k++)
            if (t[k].routes >= 0)
                sample(r, fam[f], t[k].name, t[k].quality,
                       f ? t[k].usd_today : t[k].usd_per_hour, out);
        if (folded)
            sample(r, fam[f], other.name, other.quality, f ? other.usd_today : other.usd_per_hour,
                   out);
    }
    free(t);
}
