/* The incident report's "who held the quota when it ran out" (render/reportdoc.h): a
 * stacked chart of the holders of the most affected route's quota group, minute by
 * minute, and the holders at the minute of the least headroom. Core computes the
 * holders, their stacked lines and their shares (core/shares.h bt_share_minutes_*);
 * this file only draws and prints them. */
#include "render/reportdoc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/format.h"
#include "core/sanitize.h"
#include "core/shares.h"

void bt_inc_holders_chart(const struct bt_share_minutes *sm, const struct bt_config *cfg,
                          struct bt_chart *c)
{
    memset(c, 0, sizeof *c);
    snprintf(c->title, sizeof c->title, "Who held the quota of %.48s's group, by %s (stacked)",
             sm->route >= 0 && sm->route < cfg->nroutes ? cfg->routes[sm->route].name : "?",
             bt_share_by_name(sm->by));
    bt_strlcpy(c->unit, "tokens/min", sizeof c->unit);
    c->from = sm->from;
    c->n = sm->n;
    c->zero_based = true;
    /* stacked: series h is the sum of the holders 0..h, so the top line is the group's use */
    for (int h = 0; h < sm->nh && c->nseries < BT_CHART_MAX_SERIES; h++) {
        struct bt_chart_series *s = &c->series[c->nseries++];
        snprintf(s->label, sizeof s->label, "%s%s", h ? "+ " : "", sm->name[h]);
        s->v = bt_xcalloc((size_t)(sm->n ? sm->n : 1), sizeof *s->v);
        for (int i = 0; i < sm->n; i++)
            s->v[i] = bt_share_minutes_stacked(sm, h, i);
    }
    double q = sm->n ? sm->quota[sm->n - 1] : NAN;
    if (isfinite(q) && q > 0) {
        bt_strlcpy(c->hline[0].label, "quota", sizeof c->hline[0].label);
        c->hline[0].value = q;
        c->nhline = 1;
    }
}

void bt_inc_holders_md(const struct bt_share_minutes *sm, const struct bt_config *cfg, bool png,
                       struct bt_buf *b)
{
    bt_buf_puts(b, "\n## Who held the quota when it ran out\n\n");
    if (!sm->n || !sm->nh) {
        bt_buf_puts(b, "No holder of the most affected route's quota could be read in the window.\n");
        return;
    }
    struct bt_chart c;
    bt_inc_holders_chart(sm, cfg, &c);
    /* the title names a route: hostile text, not UTF-8 perhaps (as every section's) */
    bt_buf_puts(b, "![");
    bt_san_md_buf(b, c.title);
    bt_buf_puts(b, "](holders.svg)\n");
    if (png)
        bt_buf_puts(b, "\n(PNG: [holders.png](holders.png))\n");
    bt_buf_printf(b, "\nStacked: each line adds a holder to the ones below it, so the top line "
                     "is the group's use; %s.\n",
                  sm->by == BT_SHARE_TEAM ? "holders are the admission counters' teams; what they do "
                                            "not account for is unattributed"
                                          : "no team label was read, so the holders are the routes");
    bt_chart_free(&c);
    if (sm->worst < 0)
        return;
    char hm[8];
    bt_fmt_hhmm(sm->from + 60 * (int64_t)sm->worst, hm, sizeof hm);
    struct bt_share at[BT_SHARE_MINUTES_TOP + 2];
    bt_share_minutes_at(sm, sm->worst, at);
    bt_buf_printf(b, "\nAt %s UTC, the minute of the least headroom:\n\n| holder | tokens/min | share |\n"
                     "|---|---:|---:|\n", hm);
    for (int h = 0; h < sm->nh; h++) {
        char u[32];
        if (isnan(at[h].used))
            bt_strlcpy(u, "unknown", sizeof u);
        else
            bt_fmt_grouped(round(at[h].used), u, sizeof u);
        bt_buf_puts(b, "| ");
        bt_san_md_buf(b, at[h].name);
        if (!isnan(at[h].pct))
            bt_buf_printf(b, " | %s | %.1f %% |\n", u, at[h].pct);
        else
            bt_buf_printf(b, " | %s | - |\n", u);
    }
}
