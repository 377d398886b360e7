/* A quota group's charge per data minute and the observed ceiling (core/ceiling.h). */
#include "core/ceiling.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/eval_int.h"

void bt_group_minute(const struct bt_config *cfg, const struct bt_store *st, const int *members,
                     int nm, int64_t m, struct bt_group_minute *g)
{
    memset(g, 0, sizeof *g);
    for (int k = 0; k < nm; k++) {
        int r = members[k];
        const struct bt_route *rt = &cfg->routes[r];
        double inv = bt_store_at(st, r, BT_SIG_INVOCATIONS, m);
        double in = bt_store_at(st, r, BT_SIG_INPUT_TOKENS, m);
        double out = bt_store_at(st, r, BT_SIG_OUTPUT_TOKENS, m);
        double thr = bt_store_at(st, r, BT_SIG_THROTTLES, m);
        double est = bt_store_at(st, r, BT_SIG_ESTIMATED_TPM, m);
        double srv = bt_store_at(st, r, BT_SIG_SERVER_ERRORS, m);
        g->data |= !isnan(inv) || !isnan(in) || !isnan(out) || !isnan(thr) || !isnan(est);
        /* charged work as the dashboard's per-minute figures count it, without the held
         * reservations: max(settled, EstimatedTPMQuotaUsage) of the on-demand tiers;
         * mantle: the input side, and the output as generated */
        struct bt_minute_fig f;
        struct bt_tier_fig tf;
        bt_minute_figures_on_demand(cfg, st, r, m, &f, &tf);
        g->tok[0] += bt_z(bt_nanmax(f.settled, f.estimated));
        /* and the frame's `used`, held reservations in: one definition of "used"; where
         * held cannot be known (no gauge, no latency) the frame's figure is the per-minute
         * upper bound, and the charged figure is what is known to be used */
        bool upper = f.used_q == BT_QL_UPPER;
        g->used[0] += bt_z(upper ? bt_nanmax(f.settled, f.estimated) : f.used);
        g->held_unknown |= upper;
        if (rt->endpoint == BT_EP_MANTLE) {
            g->tok[1] += bt_z(out);
            g->used[1] += bt_z(out); /* output is counted as generated: nothing held */
        }
        if (!isnan(tf.inv)) {
            g->tier_seen = true;
            g->tier_inv += tf.inv;
            g->tier_tok += tf.input + tf.output;
        }
        g->inv += bt_z(inv);
        g->thr += bt_z(thr);
        g->server_errors += bt_z(srv);
        g->requests += bt_z(inv); /* accepted: Invocations counts failed calls already */
        g->offered += bt_z(bt_requests_offered(inv, thr));
        g->input_total += bt_z(in) + bt_z(bt_store_at(st, r, BT_SIG_CACHE_READ, m)) +
                          bt_z(bt_store_at(st, r, BT_SIG_CACHE_WRITE, m));
        g->output += bt_z(out);
    }
}

void bt_ceiling_scan(const struct bt_config *cfg, const struct bt_store *st, const int *members,
                     int nm, int64_t from, int64_t to, struct bt_ceiling *c)
{
    memset(c, 0, sizeof *c);
    c->tokens = c->tokens_out = c->requests = c->submitted_max = c->used = NAN;
    c->quota = c->rpm_quota = c->pct_of_quota = NAN;
    if (!from || to < from)
        return;
    c->from = from;
    c->to = to;
    bool mantle = nm > 0 && cfg->routes[members[0]].endpoint == BT_EP_MANTLE;
    for (int64_t m = from; m <= to; m += 60) {
        bool covered = true; /* a minute never asked says nothing about throttles */
        for (int i = 0; i < nm && covered; i++)
            covered = !bt_store_cover_recorded(st, members[i]) ||
                      bt_store_covered(st, members[i], BT_SIG_THROTTLES, m) == BT_COV_SETTLED;
        c->covered_minutes += covered;
        /* only a throttled minute counts: its throttles summed first, as
         * bt_group_minute sums them (the same order, the same double), and the group's
         * other figures only for such a minute (all of them for each of the 60 minutes
         * were 9 % of check's instructions, most minutes having none) */
        double thr = 0;
        for (int i = 0; i < nm; i++)
            thr += bt_z(bt_store_at(st, members[i], BT_SIG_THROTTLES, m));
        if (thr <= 0)
            continue;
        struct bt_group_minute g;
        bt_group_minute(cfg, st, members, nm, m, &g);
        c->throttled_minutes++;
        c->server_errors += g.server_errors;
        c->throttles += g.thr;
        c->submitted_max = bt_nanmax(c->submitted_max, g.requests);
        if (isnan(c->tokens) || g.tok[0] > c->tokens) {
            c->tokens = g.tok[0];
            c->tokens_minute = m;
        }
        c->used = bt_nanmax(c->used, g.used[0]);
        if (mantle)
            c->tokens_out = bt_nanmax(c->tokens_out, g.tok[1]);
        c->requests = bt_nanmax(c->requests, g.inv);
    }
}

static bool has_warning(const struct bt_eval *e, enum bt_wcode code)
{
    for (int w = 0; w < e->nwarn; w++)
        if (e->warnings[w].code == code)
            return true;
    return false;
}

/* Which limit a ceiling far below the token quota points to (DOMAIN.md: reservations,
 * RPM, the daily quota or capacity). */
void bt_ceiling_explain(const struct bt_eval *e, struct bt_ceiling *c)
{
    c->quota = e->quota;
    c->rpm_quota = e->side[BT_SIDE_RPM].applies ? e->side[BT_SIDE_RPM].quota : NAN;
    c->pct_of_quota = NAN;
    c->far_below = false;
    c->points_to = NULL;
    c->why[0] = '\0';
    if (isnan(c->tokens) || !(c->quota > 0))
        return;
    c->pct_of_quota = 100 * c->tokens / c->quota;
    c->far_below = c->tokens < 0.5 * c->quota;
    if (!c->far_below)
        return;
    double tpd = bt_eval_tpd(e), today = bt_eval_group_today(e);
    if (tpd > 0 && today >= 0.95 * tpd) {
        c->points_to = "daily";
        snprintf(c->why, sizeof c->why, "the daily quota: %.1f%% of it used today",
                 100 * today / tpd);
    } else if (c->rpm_quota > 0 && c->submitted_max >= 0.8 * c->rpm_quota) {
        c->points_to = "rpm";
        snprintf(c->why, sizeof c->why, "the RPM quota: up to %.0f requests accepted a minute "
                 "against %.0f", c->submitted_max, c->rpm_quota);
    } else if (bt_capacity_evidence(c->server_errors, c->throttles)) {
        c->points_to = "capacity";
        snprintf(c->why, sizeof c->why, "service capacity, not a quota: %.0f server errors rose "
                 "with the throttles", c->server_errors);
    } else if (has_warning(e, BT_W_RETRY_LOAD)) {
        c->points_to = "retries";
        if (isnan(e->retries))
            snprintf(c->why, sizeof c->why, "retries: a retry storm (RETRY_LOAD, retried attempts "
                     "a minute unknown), throttles feeding on retries");
        else
            snprintf(c->why, sizeof c->why, "retries: a retry storm (RETRY_LOAD, %.0f retried attempts "
                     "a minute), throttles feeding on retries", e->retries);
    } else {
        c->points_to = "reservations";
        if (c->used > c->tokens)
            snprintf(c->why, sizeof c->why, "reservations held in flight (input + max_tokens per "
                     "call, bursts): with them the group used up to %.0f%% of the quota while "
                     "settled tokens stayed far below", 100 * c->used / c->quota);
        else
            snprintf(c->why, sizeof c->why, "reservations held in flight (input + max_tokens per "
                     "call, bursts): settled tokens stay far below what admission checks");
    }
}

/* The scan of group g's BT_CEILING_WINDOW minutes to e's evaluated minute (the
 * group's frame: every member has the same). */
static void ceiling_scan_group(const struct bt_config *cfg, const struct bt_store *st,
                               const struct bt_eval *e, const struct bt_group *g, struct bt_ceiling *c)
{
    int64_t to = e->minute, from = to ? to - 60 * (int64_t)(BT_CEILING_WINDOW - 1) : 0;
    bt_ceiling_scan(cfg, st, g->members, g->n, from, to, c);
}

void bt_ceiling_of(const struct bt_config *cfg, const struct bt_store *st, const struct bt_eval *e,
                   struct bt_ceiling *c)
{
    /* the group's members from the config (e may be a copy, away from its evals):
     * every member, none dropped */
    struct bt_eval_groups *g = bt_eval_groups_once(cfg);
    const struct bt_group *gr = bt_eval_group_of(g, e->route);
    if (gr) {
        ceiling_scan_group(cfg, st, e, gr, c);
    } else {
        int self = e->route;
        int64_t to = e->minute, from = to ? to - 60 * (int64_t)(BT_CEILING_WINDOW - 1) : 0;
        bt_ceiling_scan(cfg, st, &self, 1, from, to, c);
    }
    bt_ceiling_explain(e, c);
    bt_eval_groups_free(g);
}

void bt_ceiling_all(const struct bt_config *cfg, const struct bt_store *st,
                    const struct bt_eval *evals, struct bt_ceiling *out)
{
    /* one scan a group, read by each member (a scan a member was quadratic in the
     * group's size) */
    struct bt_eval_groups *g = bt_eval_groups_once(cfg);
    for (int i = 0; i < g->ngroups; i++) {
        const struct bt_group *gr = &g->groups[i];
        struct bt_ceiling scan;
        ceiling_scan_group(cfg, st, &evals[gr->leader], gr, &scan);
        for (int k = 0; k < gr->n; k++) {
            out[gr->members[k]] = scan;
            bt_ceiling_explain(&evals[gr->members[k]], &out[gr->members[k]]);
        }
    }
    bt_eval_groups_free(g);
}
