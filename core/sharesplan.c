/* Shares over time and budgets by holder (core/shares.h): what evaluates the group
 * again (a frame a minute for the last hour, the frame of plan --limits --by), kept
 * apart from the shares themselves, which the evaluation calls. */
#include "core/shares.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/eval_int.h"
#include "core/shares_int.h"
#include "core/util.h"

int bt_shares_history(const struct bt_config *cfg, const struct bt_store *st, int64_t now, int r,
                      enum bt_share_by by, int minutes, struct bt_share_list *out)
{
    out->n = 0;
    out->by = by;
    out->group_used = 0;
    out->group_q = BT_QL_IDLE;
    if (r < 0 || r >= cfg->nroutes || minutes <= 0)
        return 0;
    struct bt_eval_groups *g = bt_eval_groups_new(cfg);
    const struct bt_group *gr = bt_eval_group_of(g, r);
    out->group = gr->leader;
    bool *need = bt_xcalloc((size_t)cfg->nroutes, sizeof *need);
    need[r] = true;
    struct bt_eval *ev = bt_xcalloc((size_t)cfg->nroutes, sizeof *ev);
    struct bt_share_list one = {0};
    int known = 0;
    for (int k = 0; k < minutes; k++) {
        bt_eval_all_with(cfg, st, now - 60 * (int64_t)k, g, true, need, ev);
        bt_shares_group(cfg, st, ev, gr, by, NULL, &one);
        if (one.group_q == BT_QL_UNKNOWN || isnan(one.group_used))
            continue;
        known++;
        out->group_used += one.group_used;
        out->group_q = out->group_q == BT_QL_IDLE ? one.group_q : bt_quality_add(out->group_q, one.group_q);
        for (int i = 0; i < one.n; i++) {
            const struct bt_share *s = &one.s[i];
            if (s->outside || isnan(s->used))
                continue;
            struct bt_share *h = bt_share_of(out, s->name, s->source);
            bt_share_add(h, s->used, s->quality);
            if (s->reason[0] && !h->reason[0])
                bt_strlcpy(h->reason, s->reason, sizeof h->reason);
        }
    }
    if (known) {
        out->group_used /= known;
        for (int i = 0; i < out->n; i++)
            out->s[i].used /= known;
    }
    bt_shares_finish(out);
    bt_shares_free(&one);
    free(ev);
    free(need);
    bt_eval_groups_free(g);
    return known;
}


void bt_shares_budgets_free(struct bt_share_budgets *b)
{
    free(b->b);
    b->b = NULL;
    b->n = 0;
}

static int cmp_demand(const void *a, const void *b)
{
    double x = ((const struct bt_share_budget *)a)->demand, y = ((const struct bt_share_budget *)b)->demand;
    return x < y ? -1 : x > y;
}

bool bt_shares_budgets(const struct bt_config *cfg, const struct bt_store *st, int64_t now, int r,
                       enum bt_share_by by, double reserve_share, struct bt_share_budgets *out,
                       char *why, size_t n)
{
    memset(out, 0, sizeof *out);
    out->by = by;
    out->quota = out->reserve = out->unattributed = out->available = out->cap = NAN;
    struct bt_eval *ev = bt_xcalloc((size_t)cfg->nroutes, sizeof *ev);
    bt_eval_all(cfg, st, now, ev);
    struct bt_share_list l = {0};
    bt_shares_of_route(cfg, st, ev, r, by, NULL, &l);
    const struct bt_eval *e = &ev[r];
    bool ok = false;
    if (isnan(e->quota) || e->quota <= 0) {
        snprintf(why, n, "the quota of %s is unknown or 0: no budget to share", cfg->routes[r].name);
    } else if (l.group_q == BT_QL_UNKNOWN || isnan(l.group_used)) {
        snprintf(why, n, "the group's use is unknown: no demand to share the quota by");
    } else {
        out->quota = e->quota;
        out->reserve = reserve_share * e->quota;
        out->unattributed = 0;
        out->b = bt_xcalloc((size_t)(l.n ? l.n : 1), sizeof *out->b);
        for (int i = 0; i < l.n; i++) {
            const struct bt_share *s = &l.s[i];
            if (s->outside)
                continue;
            if (!strcmp(s->name, BT_SHARE_UNATTRIBUTED)) {
                out->unattributed += bt_z(s->used);
                continue;
            }
            struct bt_share_budget *b = &out->b[out->n++];
            bt_strlcpy(b->name, s->name, sizeof b->name);
            b->demand = bt_z(s->used);
            b->quality = s->quality;
        }
        out->available = fmax(0, out->quota - out->reserve - out->unattributed);
        if (!out->n) {
            snprintf(why, n, "no holder by %s is told apart in %s's group", bt_share_by_name(by),
                     cfg->routes[r].name);
        } else {
            ok = true;
            qsort(out->b, (size_t)out->n, sizeof *out->b, cmp_demand);
            double sum = 0;
            for (int i = 0; i < out->n; i++)
                sum += out->b[i].demand;
            if (sum <= out->available) {
                double extra = (out->available - sum) / out->n;
                for (int i = 0; i < out->n; i++)
                    out->b[i].budget = floor(out->b[i].demand + extra);
            } else {
                /* water-filling: the smallest demands are met whole while they are below
                 * an equal share of what is left; the rest share it equally */
                double left = out->available;
                int i = 0;
                for (; i < out->n && out->b[i].demand <= left / (out->n - i); i++)
                    left -= out->b[i].demand;
                out->cap = i < out->n ? floor(left / (out->n - i)) : NAN;
                for (int k = 0; k < out->n; k++)
                    out->b[k].budget = k < i ? floor(out->b[k].demand) : out->cap;
            }
            /* largest demand first, as the shares are listed */
            for (int a = 0, z = out->n - 1; a < z; a++, z--) {
                struct bt_share_budget t = out->b[a];
                out->b[a] = out->b[z];
                out->b[z] = t;
            }
        }
    }
    bt_shares_free(&l);
    free(ev);
    return ok;
}
