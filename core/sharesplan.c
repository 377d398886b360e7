/* Shares over time and budgets by holder (core/shares.h): what evaluates the group
 * again (a frame a minute for the last hour, the frame of plan --limits --by), kept
 * apart from the shares themselves, which the evaluation calls. */
#include "core/shares.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dataminute.h"
#include "core/eval_int.h"
#include "core/recording.h"
#include "core/shares_int.h"
#include "core/util.h"

int bt_shares_history(const struct bt_config *cfg, const struct bt_store *st, int64_t now, int r,
                      enum bt_share_by by, int minutes, struct bt_share_list *out)
{
    out->n = 0;
    out->by = by;
    out->group_used = 0;
    out->group_q = BT_QL_IDLE;
    out->told = 0;
    if (r < 0 || r >= cfg->nroutes || minutes <= 0)
        return 0;
    struct bt_eval_groups *g = bt_eval_groups_once(cfg);
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
        bool told = false;
        for (int i = 0; i < one.n && !told; i++)
            told = !one.s[i].outside && strcmp(one.s[i].name, BT_SHARE_UNATTRIBUTED) != 0;
        out->told += told;
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

void bt_share_minutes_free(struct bt_share_minutes *sm)
{
    free(sm->v);
    free(sm->quota);
    sm->v = sm->quota = NULL;
    sm->nh = 0;
}

void bt_share_minutes_build(const struct bt_replay *rp, int r, int64_t from, int n,
                            struct bt_share_minutes *out)
{
    const struct bt_config *cfg = &rp->cfg;
    memset(out, 0, sizeof *out);
    out->route = r;
    out->from = from;
    out->worst = -1;
    if (r < 0 || r >= cfg->nroutes || n <= 0)
        return;
    out->n = n;
    struct bt_eval *ev = bt_xcalloc((size_t)cfg->nroutes, sizeof *ev);
    struct bt_share_list *team = bt_xcalloc((size_t)n, sizeof *team);
    struct bt_share_list *route = bt_xcalloc((size_t)n, sizeof *route);
    out->quota = bt_xcalloc((size_t)n, sizeof *out->quota);
    bool teams = false;
    double least = INFINITY;
    struct bt_replay_cursor cur;
    bt_replay_cursor_open(&cur, rp);
    for (int i = 0; i < n; i++) {
        int64_t m = from + 60 * (int64_t)i;
        int64_t shown = bt_replay_minute_instant(rp, m); /* as the incident's figures */
        bt_replay_cursor_seek(&cur, shown);
        bt_eval_all(&cur.cfg, &cur.store, shown, ev);
        bt_shares_of_route(&cur.cfg, &cur.store, ev, r, BT_SHARE_TEAM, NULL, &team[i]);
        bt_shares_of_route(&cur.cfg, &cur.store, ev, r, BT_SHARE_ROUTE, NULL, &route[i]);
        for (int k = 0; k < team[i].n && !teams; k++)
            teams = !team[i].s[k].outside && strcmp(team[i].s[k].name, BT_SHARE_UNATTRIBUTED);
        out->quota[i] = ev[r].quota;
        double h = ev[r].headroom_tpm;
        if (!isnan(h) && h < least) {
            least = h;
            out->worst = i;
        }
    }
    bt_replay_cursor_close(&cur);
    struct bt_share_list *use = teams ? team : route;
    out->by = teams ? BT_SHARE_TEAM : BT_SHARE_ROUTE;
    /* the holders by their use over the window */
    struct bt_share_list tot = {0};
    for (int i = 0; i < n; i++)
        for (int k = 0; k < use[i].n; k++)
            if (!use[i].s[k].outside && !isnan(use[i].s[k].used))
                bt_share_add(bt_share_of(&tot, use[i].s[k].name, use[i].s[k].source),
                             use[i].s[k].used, use[i].s[k].quality);
    bt_shares_finish(&tot);
    bool other = false, unattr = false;
    for (int k = 0; k < tot.n; k++) {
        if (!strcmp(tot.s[k].name, BT_SHARE_UNATTRIBUTED))
            unattr = true;
        else if (out->nh < BT_SHARE_MINUTES_TOP)
            bt_strlcpy(out->name[out->nh++], tot.s[k].name, sizeof out->name[0]);
        else
            other = true;
    }
    int ho = other ? out->nh++ : -1;
    if (other)
        bt_strlcpy(out->name[ho], BT_SHARE_OTHER, sizeof out->name[0]);
    int hu = unattr ? out->nh++ : -1;
    if (unattr)
        bt_strlcpy(out->name[hu], BT_SHARE_UNATTRIBUTED, sizeof out->name[0]);
    out->v = bt_xcalloc((size_t)(out->nh ? out->nh : 1) * (size_t)n, sizeof *out->v);
    for (int i = 0; i < n; i++) {
        bool known = use[i].group_q != BT_QL_UNKNOWN && !isnan(use[i].group_used);
        for (int h = 0; h < out->nh; h++)
            out->v[(size_t)h * (size_t)n + (size_t)i] = known ? 0 : NAN;
        for (int k = 0; known && k < use[i].n; k++) {
            const struct bt_share *s = &use[i].s[k];
            if (s->outside || isnan(s->used))
                continue;
            int h = !strcmp(s->name, BT_SHARE_UNATTRIBUTED) ? hu : ho;
            for (int j = 0; j < BT_SHARE_MINUTES_TOP && j < out->nh; j++)
                if (j != ho && j != hu && !strcmp(out->name[j], s->name))
                    h = j;
            if (h >= 0)
                out->v[(size_t)h * (size_t)n + (size_t)i] += s->used;
        }
    }
    for (int i = 0; i < n; i++) {
        bt_shares_free(&team[i]);
        bt_shares_free(&route[i]);
    }
    bt_shares_free(&tot);
    free(team);
    free(route);
    free(ev);
}

double bt_share_minutes_stacked(const struct bt_share_minutes *sm, int h, int i)
{
    double sum = 0;
    for (int k = 0; k <= h && k < sm->nh; k++)
        sum += sm->v[(size_t)k * (size_t)sm->n + (size_t)i];
    return sum;
}

double bt_share_minutes_at(const struct bt_share_minutes *sm, int i,
                           struct bt_share out[BT_SHARE_MINUTES_TOP + 2])
{
    double total = 0;
    for (int h = 0; h < sm->nh; h++)
        total += bt_z(sm->v[(size_t)h * (size_t)sm->n + (size_t)i]);
    for (int h = 0; h < sm->nh; h++) {
        struct bt_share *s = &out[h];
        memset(s, 0, sizeof *s);
        s->by = sm->by;
        bt_strlcpy(s->name, sm->name[h], sizeof s->name);
        s->used = sm->v[(size_t)h * (size_t)sm->n + (size_t)i];
        s->quality = isnan(s->used) ? BT_QL_UNKNOWN : BT_QL_KNOWN;
        s->pct = total > 0 && !isnan(s->used) ? 100 * s->used / total : NAN;
    }
    return total;
}
