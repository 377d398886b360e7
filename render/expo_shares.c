/* serve's and check --format prometheus's share series (render/exposition.h):
 *   bedtop_share_used_tokens_per_minute{group,by,name}
 * per quota group with a route shown, by team (where the admission counters tell any
 * team apart), by mantle project and by route, each
 * bounded to the config's share_top_n holders plus "other" (and "unattributed" where
 * some use cannot be told apart), so 1,000 teams stay a dozen series. */
#include "render/exposition.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sanitize.h"
#include "core/shares.h"

static void label(struct bt_buf *b, const char *k, const char *v, bool first)
{
    bt_buf_putc(b, first ? '{' : ',');
    bt_buf_puts(b, k);
    bt_buf_add(b, "=\"", 2);
    bt_san_prom_label_buf(b, v);
    bt_buf_putc(b, '"');
}

static void sample(const struct bt_report *r, const char *group, const struct bt_share *s,
                   struct bt_buf *out)
{
    bt_buf_puts(out, "bedtop_share_used_tokens_per_minute");
    label(out, "group", group, true);
    label(out, "by", bt_share_by_name(s->by), false);
    label(out, "name", s->name, false);
    if (r->mode && !strcmp(r->mode, "demo"))
        label(out, "mode", "demo", false);
    if (r->replica)
        label(out, "replica", r->replica, false);
    bt_buf_add(out, "} ", 2);
    bt_buf_fixed0(out, s->used);
    bt_buf_putc(out, '\n');
}

void bt_expo_shares(const struct bt_report *r, struct bt_buf *out)
{
    bt_buf_puts(out, "# HELP bedtop_share_used_tokens_per_minute Who holds the quota group: its "
                     "use by team (admission label), project, route; the top holders and other.\n"
                     "# TYPE bedtop_share_used_tokens_per_minute gauge\n");
    int top = r->cfg->share_top_n > 0 ? r->cfg->share_top_n : 10;
    struct bt_share_list l = {0};
    bool *done = bt_xcalloc((size_t)(r->n ? r->n : 1), sizeof *done);
    for (int i = 0; i < r->n; i++) {
        const struct bt_eval *e = &r->evals[i];
        int leader = bt_group_leader(r->evals, i);
        if (leader >= r->n)
            leader = i;
        if ((r->keep && !r->keep[i]) || done[leader])
            continue;
        done[leader] = true;
        char group[320];
        /* the quota_group label's value (core's one rule for who shares a quota) */
        bt_quota_group_key(&r->cfg->routes[leader], group, sizeof group);
        if (group[0] == '|')
            memmove(group, group + 1, strlen(group));
        for (int by = 0; by < BT_SHARE_COUNT; by++) {
            if ((by == BT_SHARE_PROJECT && !bt_eval_mantle(e)) ||
                (by == BT_SHARE_TAG && !r->cfg->attribute_tag[0]))
                continue;
            bt_shares_of_route(r->cfg, r->store, r->evals, i, (enum bt_share_by)by, NULL, &l);
            if (by == BT_SHARE_TEAM && l.n && !strcmp(l.s[0].name, BT_SHARE_UNATTRIBUTED))
                continue; /* no team told apart: the route series say it all */
            bt_shares_top(&l, top);
            for (int k = 0; k < l.n; k++)
                if (!l.s[k].outside && isfinite(l.s[k].used))
                    sample(r, group, &l.s[k], out);
        }
    }
    free(done);
    bt_shares_free(&l);
}
