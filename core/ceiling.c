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
        if (rt->endpoint == BT_EP_MANTLE)
            g->tok[1] += bt_z(out);
        if (!isnan(tf.inv)) {
            g->tier_seen = true;
            g->tier_inv += tf.inv;
            g->tier_tok += tf.input + tf.output;
        }
        g->inv += bt_z(inv);
        g->thr += bt_z(thr);
        g->server_errors += bt_z(srv);
        g->requests += bt_requests_submitted(inv, thr, bt_store_at(st, r, BT_SIG_CLIENT_ERRORS, m), srv);
        g->input_total += bt_z(in) + bt_z(bt_store_at(st, r, BT_SIG_CACHE_READ, m)) +
                          bt_z(bt_store_at(st, r, BT_SIG_CACHE_WRITE, m));
        g->output += bt_z(out);
    }
}

void bt_ceiling_scan(const struct bt_config *cfg, const struct bt_store *st, const int *members,
                     int nm, int64_t from, int64_t to, struct bt_ceiling *c)
{
    memset(c, 0, sizeof *c);
    c->tokens = c->tokens_out = c->requests = c->submitted_max = NAN;
    c->quota = c->rpm_quota = c->pct_of_quota = NAN;
    if (!from || to < from)
        return;
    c->from = from;
    c->to = to;
    bool mantle = nm > 0 && cfg->routes[members[0]].endpoint == BT_EP_MANTLE;
    for (int64_t m = from; m <= to; m += 60) {
        struct bt_group_minute g;
        bt_group_minute(cfg, st, members, nm, m, &g);
        bool covered = true; /* a minute never asked says nothing about throttles */
        for (int i = 0; i < nm && covered; i++)
            covered = !bt_store_cover_recorded(st, members[i]) ||
                      bt_store_covered(st, members[i], BT_SIG_THROTTLES, m) == BT_COV_SETTLED;
        c->covered_minutes += covered;
        if (g.thr <= 0)
            continue;
        c->throttled_minutes++;
        c->server_errors += g.server_errors;
        c->submitted_max = bt_nanmax(c->submitted_max, g.requests);
        if (isnan(c->tokens) || g.tok[0] > c->tokens) {
            c->tokens = g.tok[0];
            c->tokens_minute = m;
        }
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
    if (e->tpd > 0 && e->group_tokens_today >= 0.95 * e->tpd) {
        c->points_to = "daily";
        snprintf(c->why, sizeof c->why, "the daily quota: %.1f%% of it used today",
                 100 * e->group_tokens_today / e->tpd);
    } else if (c->rpm_quota > 0 && c->submitted_max >= 0.8 * c->rpm_quota) {
        c->points_to = "rpm";
        snprintf(c->why, sizeof c->why, "the RPM quota: up to %.0f requests submitted a minute "
                 "against %.0f", c->submitted_max, c->rpm_quota);
    } else if (c->server_errors > 0) {
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
        snprintf(c->why, sizeof c->why, "reservations held in flight (input + max_tokens per call, "
                 "bursts): settled tokens stay far below what admission checks");
    }
}

void bt_ceiling_of(const struct bt_config *cfg, const struct bt_store *st, const struct bt_eval *e,
                   struct bt_ceiling *c)
{
    int grp[BT_MAX_SHARED + 1], n = 0;
    grp[n++] = e->route;
    for (int i = 0; i < e->nshared && i < BT_MAX_SHARED; i++)
        grp[n++] = e->shared_with[i];
    int64_t to = e->minute, from = to ? to - 60 * (int64_t)(BT_CEILING_WINDOW - 1) : 0;
    bt_ceiling_scan(cfg, st, grp, n, from, to, c);
    bt_ceiling_explain(e, c);
}

void bt_ceiling_all(const struct bt_config *cfg, const struct bt_store *st,
                    const struct bt_eval *evals, struct bt_ceiling *out)
{
    for (int r = 0; r < cfg->nroutes; r++)
        bt_ceiling_of(cfg, st, &evals[r], &out[r]);
}
