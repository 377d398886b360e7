/* The figures of the quota-increase request, and the statistics they are taken with
 * (the incident write-up's figures are core/incidentcalc.c's). */
#include "core/reportcalc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ceiling.h"
#include "core/incidentcalc.h"
#include "core/util.h"

/* fmax (C99) is the larger known value: NaN only when both are unknown. */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Moves the known values to the front, sorted; returns how many. */
static int sort_known(double *v, int n)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        if (!isnan(v[i]))
            v[k++] = v[i];
    qsort(v, (size_t)k, sizeof *v, cmp_double);
    return k;
}

double bt_stat_median(double *v, int n)
{
    int k = sort_known(v, n);
    if (!k)
        return NAN;
    return k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
}

double bt_stat_percentile(double *v, int n, double pct)
{
    int k = sort_known(v, n);
    if (!k || isnan(pct))
        return NAN;
    /* nearest rank: ceil(p/100 x k), at least 1 (a tiny tolerance keeps 99% of 100
     * values at rank 99, not 100, after 0.99 x 100 = 99.00000000000001) */
    double rank = ceil(pct / 100 * k - 1e-9);
    int i = rank < 1 ? 0 : rank > k ? k - 1 : (int)rank - 1;
    return v[i];
}

double bt_round_up_2sig(double v)
{
    if (isnan(v) || v <= 0 || isinf(v))
        return v;
    double step = pow(10, floor(log10(v)) - 1);
    if (step < 1)
        step = 1; /* whole tokens and requests */
    return ceil(v / step - 1e-9) * step;
}

const char *bt_qr_scope_name(enum bt_qr_scope s)
{
    static const char *const names[] = {"on-demand", "cross-region", "global", "mantle",
                                        "provisioned"};
    return names[s];
}

const char *bt_qr_through_name(enum bt_qr_through t)
{
    return t == BT_QR_AWS_SUPPORT ? "aws-support" : t == BT_QR_NOWHERE ? "none" : "service-quotas";
}

const char *bt_qr_verdict_name(enum bt_qr_verdict v)
{
    static const char *const names[] = {"increase", "no-increase", "lower-max-tokens-first",
                                        "legacy", "provisioned", "quota-unknown"};
    return names[v];
}

static enum bt_qr_through through_of(enum bt_adjustable a, bool mantle)
{
    if (a == BT_ADJ_NO)
        return BT_QR_AWS_SUPPORT;
    if (a == BT_ADJ_YES)
        return BT_QR_SERVICE_QUOTAS;
    return mantle ? BT_QR_AWS_SUPPORT : BT_QR_SERVICE_QUOTAS;
}

static enum bt_qr_scope scope_of(const struct bt_route *r)
{
    if (r->endpoint == BT_EP_MANTLE)
        return BT_QR_MANTLE;
    if (r->inference == BT_INF_PROVISIONED)
        return BT_QR_PROVISIONED;
    return r->inference == BT_INF_CROSS_REGION ? BT_QR_CROSS_REGION
           : r->inference == BT_INF_GLOBAL     ? BT_QR_GLOBAL
                                               : BT_QR_ON_DEMAND;
}

static void stat_of(double *v, int n, struct bt_qr_stat *s)
{
    s->steady = bt_stat_median(v, n);
    s->p99 = bt_stat_percentile(v, n, 99);
    s->max = bt_stat_percentile(v, n, 100);
}

/* The ask for one quota: the peak (max) times the margin, rounded up. */
static void ask_for(double peak, double quota, double margin, double *ask, bool *needed)
{
    *ask = !isnan(peak) && peak > 0 ? bt_round_up_2sig(peak * margin) : NAN;
    *needed = !isnan(*ask) && (isnan(quota) || quota <= 0 || *ask > quota);
}

/* The group's quota of kind k at the value the evaluation resolved (the
 * dashboard's choice among the members), with the source, code and name of the
 * member that carries it. */
static void side_quota(struct bt_qr_side *sd, const struct bt_config *cfg, const int *members,
                       int nm, enum bt_quota_kind k, double value)
{
    sd->quota = value;
    sd->quota_source = BT_QS_UNKNOWN;
    sd->adjustable = BT_ADJ_UNKNOWN;
    sd->code[0] = sd->quota_name[0] = sd->unknown_why[0] = '\0';
    sd->quota_unknown = isnan(value);
    for (int i = 0; i < nm && isnan(value) && !sd->unknown_why[0]; i++)
        bt_strlcpy(sd->unknown_why, cfg->routes[members[i]].quota[k].name, sizeof sd->unknown_why);
    bool mantle = nm > 0 && cfg->routes[members[0]].endpoint == BT_EP_MANTLE;
    sd->through = through_of(BT_ADJ_UNKNOWN, mantle);
    for (int i = 0; i < nm && !isnan(value); i++) {
        const struct bt_route *rt = &cfg->routes[members[i]];
        const struct bt_quota *q = &rt->quota[k];
        if (q->value != value)
            continue;
        sd->quota_source = q->source;
        sd->adjustable = rt->quota_adjustable[k];
        sd->through = through_of(sd->adjustable, mantle);
        bt_strlcpy(sd->code, q->code[0] ? q->code : k == BT_Q_TPM ? rt->quota_code : "",
                   sizeof sd->code);
        /* a config value carries its key as a name ("quota_output_tpm in config"):
         * not a quota AWS knows, so never named as one */
        if (q->source != BT_QS_CONFIG)
            bt_strlcpy(sd->quota_name, q->name, sizeof sd->quota_name);
        return;
    }
}

static void group_figures(const struct bt_config *cfg, const struct bt_store *st,
                          const struct bt_eval *e, int64_t from, int n, const int *members, int nm,
                          double margin, struct bt_qr_group *g)
{
    double *tok[2] = {bt_xcalloc((size_t)n, sizeof(double)), bt_xcalloc((size_t)n, sizeof(double))};
    double *used[2] = {bt_xcalloc((size_t)n, sizeof(double)), bt_xcalloc((size_t)n, sizeof(double))};
    double *rpm = bt_xcalloc((size_t)n, sizeof(double));
    double *offered = bt_xcalloc((size_t)n, sizeof(double));
    double *tier = bt_xcalloc((size_t)n, sizeof(double));
    double inputs = 0, outputs = 0, calls = 0;
    g->max_tokens = NAN;
    g->tier_tpm = (struct bt_qr_stat){NAN, NAN, NAN};
    int busy = 0;
    for (int i = 0; i < n; i++) {
        int64_t m = from + 60 * (int64_t)i;
        struct bt_group_minute x;
        bt_group_minute(cfg, st, members, nm, m, &x);
        bool covered = nm > 0; /* as the ceiling counts them (core/ceiling.c) */
        for (int k = 0; k < nm && covered; k++) {
            bool rec = bt_store_cover_recorded(st, members[k]);
            g->coverage_inferred |= !rec;
            covered = !rec || bt_store_covered(st, members[k], BT_SIG_INPUT_TOKENS, m) == BT_COV_SETTLED;
        }
        g->covered_minutes += covered;
        if (x.inv > 0) { /* per-request averages over minutes that had requests */
            inputs += x.input_total;
            outputs += x.output;
            calls += x.inv;
        }
        for (int k = 0; k < nm; k++)
            g->max_tokens = fmax(g->max_tokens, bt_store_at(st, members[k], BT_SIG_ADM_MAX_TOKENS, m));
        g->minutes_with_data += x.data;
        g->requests += x.inv;
        g->throttled_requests += x.thr;
        g->throttled_minutes += x.thr > 0;
        if (x.tier_seen) {
            g->tier_minutes++;
            g->tier_requests += x.tier_inv;
        }
        if (x.inv > 0 || x.tok[0] > 0 || x.tok[1] > 0 || x.tier_tok > 0) {
            tok[0][busy] = x.tok[0];
            tok[1][busy] = x.tok[1];
            used[0][busy] = x.used[0];
            g->held_unknown_minutes += x.held_unknown;
            used[1][busy] = x.used[1];
            rpm[busy] = x.requests;
            offered[busy] = x.offered;
            tier[busy] = x.tier_seen ? x.tier_tok : NAN;
            busy++;
        }
    }
    g->minutes = n;
    g->busy_minutes = busy;
    for (int k = 0; k < nm; k++)
        g->max_tokens = fmax(g->max_tokens, cfg->routes[members[k]].max_tokens);
    g->avg_input = calls > 0 ? inputs / calls : NAN;
    g->avg_output = calls > 0 ? outputs / calls : NAN;
    /* the observed ceiling: core/ceiling.c, the one the dashboard and plan show */
    struct bt_ceiling ce;
    bt_ceiling_scan(cfg, st, members, nm, from, from + 60 * (int64_t)(n - 1), &ce);
    bt_ceiling_explain(e, &ce);
    g->side[0].ceiling_points_to = ce.points_to;
    bt_strlcpy(g->side[0].ceiling_why, ce.why, sizeof g->side[0].ceiling_why);
    for (int s = 0; s < g->nsides; s++) {
        struct bt_qr_side *sd = &g->side[s];
        stat_of(tok[s], busy, &sd->tpm);
        stat_of(used[s], busy, &sd->used);
        /* the frame's group use at its evaluated minute, when in the window: what
         * `check` shows now is never above the peak the request asks from (an upper
         * bound, held unknown, is not a use: the charged series stands there) */
        const struct bt_side_fig *fs = &e->side[g->scope == BT_QR_MANTLE ? (s ? BT_SIDE_OUTPUT : BT_SIDE_INPUT)
                                                                       : BT_SIDE_TPM];
        if (e->minute >= from && e->minute < from + 60 * (int64_t)n && !isnan(fs->group_used) &&
            fs->group_q != BT_QL_UPPER)
            sd->used.max = fmax(sd->used.max, fs->group_used);
        sd->ceiling = s ? ce.tokens_out : ce.tokens;
        ask_for(sd->used.max, sd->quota, margin, &sd->ask, &sd->increase_needed);
        /* no value to ask "from" (or no quota at all): the size stays, nothing is asked */
        if (sd->quota_unknown || g->scope == BT_QR_PROVISIONED)
            sd->increase_needed = false;
        if (g->scope == BT_QR_PROVISIONED)
            sd->ask = NAN;
        bool charged_needed;
        ask_for(sd->tpm.max, sd->quota, margin, &sd->charged_ask, &charged_needed);
        sd->held_only = sd->increase_needed && !charged_needed && sd->quota > 0;
        sd->peak_pct = !isnan(sd->quota) && sd->quota > 0 && !isnan(sd->used.max)
                           ? 100 * sd->used.max / sd->quota
                           : NAN;
    }
    if (g->tier_minutes)
        stat_of(tier, busy, &g->tier_tpm);
    if (g->scope != BT_QR_MANTLE) {
        stat_of(rpm, busy, &g->rpm);
        stat_of(offered, busy, &g->rpm_offered);
        if (!isnan(g->rpm_quota))
            ask_for(g->rpm.max, g->rpm_quota, margin, &g->rpm_ask, &g->rpm_increase_needed);
        else
            g->rpm_ask = NAN; /* no RPM quota listed: nothing to raise */
    } else {
        g->rpm = g->rpm_offered = (struct bt_qr_stat){NAN, NAN, NAN};
        g->rpm_ask = NAN;
    }
    free(tok[0]);
    free(tok[1]);
    free(used[0]);
    free(used[1]);
    free(offered);
    free(rpm);
    free(tier);
}

/* "Legacy" in a quota's name, any case. */
static bool legacy_name(const char *name)
{
    static const char w[] = "legacy";
    for (const char *p = name; *p; p++) {
        size_t k = 0;
        while (w[k] && p[k] && (p[k] | 0x20) == w[k])
            k++;
        if (!w[k])
            return true;
    }
    return false;
}

/* A legacy model: CloudWatch lists LegacyModelInvocations for a member, or a quota
 * of the group carries a legacy name. AWS refuses increases for it, so the request
 * asks for nothing and says what a current model would need instead. */
static void legacy_of(const struct bt_config *cfg, const int *members, int nm, struct bt_qr_group *g)
{
    for (int k = 0; k < nm && !g->legacy; k++) {
        const struct bt_route *rt = &cfg->routes[members[k]];
        if (rt->legacy_seen) {
            g->legacy = true;
            bt_fmt_cut(g->legacy_why, sizeof g->legacy_why, "CloudWatch lists LegacyModelInvocations "
                       "for %s (route %s)", rt->model, rt->name);
        }
    }
    for (int s = 0; s < g->nsides && !g->legacy; s++) {
        if (legacy_name(g->side[s].quota_name)) {
            g->legacy = true;
            snprintf(g->legacy_why, sizeof g->legacy_why, "the quota's name marks it legacy: %s",
                     g->side[s].quota_name);
        }
    }
    g->legacy_size = NAN;
    if (!g->legacy)
        return;
    g->legacy_size = g->side[0].ask;
    for (int s = 0; s < g->nsides; s++) {
        g->side[s].ask = NAN;
        g->side[s].increase_needed = false;
        g->side[s].held_only = false;
    }
    g->rpm_ask = NAN;
    g->rpm_increase_needed = false;
}

/* The account-wide cross-model daily quota beside the group (runtime): its value as
 * the evaluation resolved it, the configured routes' tokens today (an estimate: the
 * quota is pricing-weighted) and how it is raised. */
static void daily_of(const struct bt_config *cfg, const struct bt_eval *e, struct bt_qr_group *g)
{
    const struct bt_side_fig *d = &e->side[BT_SIDE_DAILY_ACCOUNT];
    g->daily_quota = NAN;
    g->daily_used = NAN;
    g->daily_used_q = BT_QL_UNKNOWN;
    g->daily_code[0] = '\0';
    g->daily_adjustable = BT_ADJ_UNKNOWN;
    g->daily_through = BT_QR_AWS_SUPPORT; /* published as "Support case only" */
    if (g->scope == BT_QR_MANTLE || g->scope == BT_QR_PROVISIONED || !d->applies)
        return;
    g->daily_quota = d->quota;
    g->daily_used = d->group_used;
    g->daily_used_q = d->group_q;
    bt_strlcpy(g->daily_code, d->code, sizeof g->daily_code);
    const struct bt_route *rt = &cfg->routes[e->route];
    g->daily_adjustable = rt->quota_adjustable[BT_Q_TPD_ACCOUNT];
    g->daily_through = g->daily_adjustable == BT_ADJ_YES ? BT_QR_SERVICE_QUOTAS : BT_QR_AWS_SUPPORT;
}

/* One verdict per group, from the figures above: a legacy model asks nothing; a
 * side whose charged peak alone needs more (or the RPM quota) is an increase; a side
 * that needs more only with its held reservations is lower-max-tokens-first. */
static void verdict_of(struct bt_qr_group *g)
{
    if (g->legacy) {
        g->verdict = BT_QR_LEGACY;
        return;
    }
    if (g->scope == BT_QR_PROVISIONED) {
        g->verdict = BT_QR_PROVISIONED_CAP;
        return;
    }
    bool inc = g->rpm_increase_needed, held = false, unknown = false;
    for (int s = 0; s < g->nsides; s++) {
        inc |= g->side[s].increase_needed && !g->side[s].held_only;
        held |= g->side[s].held_only;
        unknown |= g->side[s].quota_unknown;
    }
    g->verdict = inc       ? BT_QR_INCREASE
                 : held    ? BT_QR_LOWER_MAX_TOKENS
                 : unknown ? BT_QR_QUOTA_UNKNOWN
                           : BT_QR_NO_INCREASE;
}

void bt_qr_build(const struct bt_config *cfg, const struct bt_store *st,
                 const struct bt_eval *evals, int64_t from, int64_t to, const bool *keep,
                 double margin, struct bt_qr *out)
{
    *out = (struct bt_qr){.from = from, .to = to, .margin = margin};
    int nr = cfg->nroutes;
    if (nr <= 0 || to < from)
        return;
    int n = (int)((to - from) / 60) + 1;
    out->groups = bt_xcalloc((size_t)nr, sizeof *out->groups);
    int *members = bt_xcalloc((size_t)nr, sizeof *members);
    bool *done = bt_xcalloc((size_t)nr, sizeof *done);
    for (int r = 0; r < nr; r++) {
        if (done[r] || (keep && !keep[r]))
            continue;
        /* the group's members that were asked for, in config order */
        int nm = 0; /* the group's own chain: a scan of every route per group was quadratic */
        for (int k = evals[r].group.leader; k >= 0; k = bt_group_next(evals, k)) {
            /* every member, asked for or not: the quota is the group's, and a request
             * sized without a member asks too little (the others are marked added) */
            if (!done[k]) {
                done[k] = true;
                members[nm++] = k;
            }
        }
        if (!done[r]) { /* an eval outside its group's chain: alone */
            done[r] = true;
            members[nm++] = r;
        }
        struct bt_qr_group *g = &out->groups[out->ngroups++];
        const struct bt_route *rt = &cfg->routes[r];
        bt_quota_group_key(rt, g->key, sizeof g->key);
        for (int k = 0; k < nm; k++) {
            bool added = keep && !keep[members[k]];
            g->nadded += added;
            if (k < BT_QR_MAX_ROUTES) {
                g->routes[k] = members[k];
                g->added[k] = added;
            }
        }
        g->nroutes = nm;
        g->scope = scope_of(rt);
        g->model = rt->base_model[0] ? rt->base_model : rt->model;
        g->region = rt->region;
        g->burndown = rt->endpoint == BT_EP_MANTLE ? NAN : rt->burndown;
        g->burndown_source = rt->burndown_source;
        const struct bt_eval *e = &evals[r];
        if (g->scope == BT_QR_PROVISIONED) {
            g->nsides = 1; /* its measured use; no quota, nothing to ask */
            g->side[0].name = "tpm";
            side_quota(&g->side[0], cfg, members, nm, BT_Q_TPM, NAN);
            g->side[0].through = BT_QR_NOWHERE;
            g->rpm_quota = NAN;
            g->rpm_through = BT_QR_NOWHERE;
        } else if (g->scope == BT_QR_MANTLE) {
            g->nsides = 2;
            g->side[0].name = "input";
            g->side[1].name = "output";
            side_quota(&g->side[0], cfg, members, nm, BT_Q_INPUT_TPM, e->side[BT_SIDE_INPUT].quota);
            side_quota(&g->side[1], cfg, members, nm, BT_Q_OUTPUT_TPM, e->side[BT_SIDE_OUTPUT].quota);
            g->rpm_quota = NAN;
        } else {
            g->nsides = 1;
            g->side[0].name = "tpm";
            side_quota(&g->side[0], cfg, members, nm, BT_Q_TPM, e->quota);
            struct bt_qr_side rpm;
            side_quota(&rpm, cfg, members, nm, BT_Q_RPM, e->side[BT_SIDE_RPM].quota);
            g->rpm_quota = rpm.quota;
            g->rpm_source = rpm.quota_source;
            g->rpm_adjustable = rpm.adjustable;
            g->rpm_through = rpm.through;
            bt_strlcpy(g->rpm_code, rpm.code, sizeof g->rpm_code);
        }
        group_figures(cfg, st, e, from, n, members, nm, margin, g);
        legacy_of(cfg, members, nm, g);
        daily_of(cfg, e, g);
        verdict_of(g);
    }
    free(done);
    free(members);
}

/* A cause tallied for one group while the throttled minutes are walked. */
struct qr_tally {
    const char *action;
    int minutes;
    char message[320];
};

/* Whether route r's CloudWatch source was failing at instant t: its last answer
 * (an error or an OK event for it or for every route) at or before t an error. */
static bool cw_failing_at(const struct bt_store *st, int r, int64_t t, size_t *k, bool *state)
{
    for (; *k < st->nlog && st->log[*k].t <= t; (*k)++) {
        const struct bt_event *ev = &st->log[*k];
        if (ev->source == BT_SRC_CLOUDWATCH && (ev->route == r || ev->route < 0) &&
            (ev->type == BT_EV_ERROR || ev->type == BT_EV_OK))
            *state = ev->type == BT_EV_ERROR;
    }
    return *state;
}

/* Route r's minute m is known: a datapoint, or asked for (recorded coverage, else a
 * good poll while it was shown) and idle: the incident report's rule (raw_at). */
static bool minute_known(const struct bt_store *st, int r, int64_t m, bool failing)
{
    return !isnan(bt_store_at(st, r, BT_SIG_INVOCATIONS, m)) ||
           bt_inc_unseen_idle(st, r, BT_SIG_INVOCATIONS, m, !failing);
}

void bt_qr_walk(struct bt_qr *q, const struct bt_replay *rp)
{
    const struct bt_config *cfg = &rp->cfg;
    const struct bt_store *st = &rp->store;
    int nr = cfg->nroutes;
    if (!q->ngroups || nr <= 0)
        return;
    int n = q->groups[0].minutes;
    /* coverage: minute by minute, each member's CloudWatch state at the instant the
     * minute was shown (the store's events, in time order) */
    size_t *k = bt_xcalloc((size_t)nr, sizeof *k);
    bool *state = bt_xcalloc((size_t)nr, sizeof *state);
    bool *known = bt_xcalloc((size_t)nr, sizeof *known);
    bool *throttled = bt_xcalloc((size_t)(n > 0 ? n : 1), sizeof *throttled);
    for (int i = 0; i < q->ngroups; i++) {
        q->groups[i].covered_minutes = 0;
        q->groups[i].coverage_inferred = false;
        for (int j = 0; j < q->groups[i].nroutes && j < BT_QR_MAX_ROUTES; j++)
            q->groups[i].coverage_inferred |= !bt_store_cover_recorded(st, q->groups[i].routes[j]);
    }
    for (int m = 0; m < n; m++) {
        int64_t t = q->from + 60 * (int64_t)m, at = bt_replay_minute_instant(rp, t);
        for (int r = 0; r < nr; r++)
            known[r] = minute_known(st, r, t, cw_failing_at(st, r, at, &k[r], &state[r]));
        for (int i = 0; i < q->ngroups; i++) {
            struct bt_qr_group *g = &q->groups[i];
            bool all = g->nroutes > 0, thr = false;
            for (int j = 0; j < g->nroutes && j < BT_QR_MAX_ROUTES; j++) {
                all &= known[g->routes[j]];
                thr |= bt_store_at(st, g->routes[j], BT_SIG_THROTTLES, t) > 0;
            }
            g->covered_minutes += all;
            /* the rule names a cause only with throttles below a quota > 0 */
            throttled[m] |= thr && g->scope != BT_QR_MANTLE && g->scope != BT_QR_PROVISIONED &&
                            g->side[0].quota > 0;
        }
    }
    free(k);
    free(state);
    free(known);
    /* the cause: the rules' THROTTLED_BELOW_ESTIMATE, minute by minute as on screen */
    struct qr_tally(*tally)[8] = bt_xcalloc((size_t)q->ngroups, sizeof *tally);
    int *group_of = bt_xcalloc((size_t)nr, sizeof *group_of);
    for (int r = 0; r < nr; r++)
        group_of[r] = -1;
    for (int i = 0; i < q->ngroups; i++)
        for (int j = 0; j < q->groups[i].nroutes && j < BT_QR_MAX_ROUTES; j++)
            group_of[q->groups[i].routes[j]] = i;
    struct bt_eval *evals = bt_xcalloc((size_t)nr, sizeof *evals);
    struct bt_replay_cursor cur;
    bt_replay_cursor_open(&cur, rp);
    for (int m = 0; m < n; m++) {
        if (!throttled[m])
            continue;
        int64_t t = q->from + 60 * (int64_t)m, at = bt_replay_minute_instant(rp, t);
        bt_replay_cursor_seek(&cur, at);
        bt_eval_all(&cur.cfg, &cur.store, at, evals);
        for (int r = 0; r < nr; r++) {
            if (group_of[r] < 0)
                continue;
            for (int w = 0; w < evals[r].nwarn; w++) {
                const struct bt_warning *wn = &evals[r].warnings[w];
                if (!bt_throttle_cause(wn, NULL))
                    continue;
                struct qr_tally *ta = tally[group_of[r]];
                int c = 0;
                while (c < 8 && ta[c].action && ta[c].action != wn->action)
                    c++;
                if (c == 8)
                    continue;
                if (!ta[c].action) {
                    ta[c].action = wn->action;
                    bt_strlcpy(ta[c].message, wn->message, sizeof ta[c].message);
                }
                ta[c].minutes++;
            }
        }
    }
    bt_replay_cursor_close(&cur);
    free(evals);
    free(throttled);
    free(group_of);
    for (int i = 0; i < q->ngroups; i++) {
        struct bt_qr_group *g = &q->groups[i];
        const struct qr_tally *best = NULL;
        for (int c = 0; c < 8 && tally[i][c].action; c++)
            if (!best || tally[i][c].minutes > best->minutes)
                best = &tally[i][c];
        if (!best)
            continue;
        struct bt_warning w = {.code = BT_W_THROTTLED_BELOW_ESTIMATE, .action = best->action};
        g->cause = bt_throttle_cause(&w, &g->cause_words);
        g->cause_action = best->action;
        g->cause_minutes = best->minutes;
        /* the message after "... TPM (43%): ": the rule's cause, with its figures */
        const char *t = strstr(best->message, "%): ");
        bt_strlcpy(g->cause_text, t ? t + 4 : best->message, sizeof g->cause_text);
        struct bt_qr_side *sd = &g->side[0];
        if (sd->ceiling_points_to) { /* far below the quota: the rules' cause, not a second one */
            sd->ceiling_points_to = g->cause;
            bt_fmt_cut(sd->ceiling_why, sizeof sd->ceiling_why, "%s", g->cause_words);
        }
    }
    free(tally);
}

void bt_qr_free(struct bt_qr *q)
{
    free(q->groups);
    q->groups = NULL;
    q->ngroups = 0;
}
