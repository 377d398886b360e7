/* The limits to set at the admission boundary (core/plan.h): concurrency from the
 * operating point, the token budget of the group, max_tokens from the output
 * distribution, a retry budget with backoff. */
#include "core/plan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/eval_int.h"
#include "core/format.h"
#include "core/plan_int.h"
#include "core/util.h"

/* ---- the limits to set ---- */

/* Concurrency from the operating point: the knee the detail view draws, lowered to
 * the in-flight levels that went without throttles. */
static void limit_concurrency(const struct bt_config *cfg, const struct bt_store *st, int r,
                              int64_t end, struct bt_limits *l)
{
    int hist = cfg->history_minutes > 0 ? cfg->history_minutes : 60;
    double *xs = bt_xcalloc((size_t)hist, sizeof *xs), *ys = bt_xcalloc((size_t)hist, sizeof *ys);
    bool *thr = bt_xcalloc((size_t)hist, sizeof *thr);
    int n = 0;
    for (int i = 0; i < hist; i++) {
        int64_t m = end - 60 * (int64_t)i;
        double x = bt_store_at(st, r, BT_SIG_ADM_IN_FLIGHT, m);
        double y = bt_store_at(st, r, BT_SIG_ADM_COMPLETED, m);
        if (!isfinite(x) || !isfinite(y) || x < 0 || y < 0)
            continue;
        xs[n] = x;
        ys[n] = y;
        thr[n] = bt_store_at(st, r, BT_SIG_ADM_THROTTLED, m) > 0;
        if (!l->window_to)
            l->window_to = m;
        l->window_from = m;
        n++;
    }
    bt_oppoint_compute(xs, ys, n, &l->op);
    l->throttle_level = NAN;
    for (int i = 0; i < n; i++)
        if (thr[i])
            l->throttle_level = isnan(l->throttle_level) ? xs[i] : fmin(l->throttle_level, xs[i]);
    double knee = l->op.enough && l->op.plateau ? l->op.knee : NAN;
    double cap = knee;
    l->concurrency_basis = !n ? "no-data" : isnan(knee) ? "no-knee" : "knee";
    if (!isnan(l->throttle_level) && (isnan(cap) || l->throttle_level <= cap)) {
        /* the largest level seen below the least throttled one */
        double below = NAN;
        for (int i = 0; i < n; i++)
            if (!thr[i] && xs[i] < l->throttle_level)
                below = bt_nanmax(below, xs[i]);
        cap = below;
        l->concurrency_basis = "throttles";
    }
    l->concurrency = isnan(cap) ? NAN : floor(cap);
    free(thr);
    free(ys);
    free(xs);
}

void bt_plan_limits(const struct bt_config *cfg, const struct bt_store *st, int r, int64_t now,
                    struct bt_limits *l)
{
    memset(l, 0, sizeof *l);
    struct bt_eval *ev = bt_xcalloc((size_t)cfg->nroutes, sizeof *ev);
    bt_eval_all(cfg, st, now, ev);
    const struct bt_eval *e = &ev[r];
    char a[32], b[32];

    limit_concurrency(cfg, st, r, e->adm_minute ? e->adm_minute : bt_minute_floor(now), l);
    if (l->window_to) {
        char f[8], t[8];
        bt_fmt_hhmm(l->window_from, f, sizeof f);
        bt_fmt_hhmm(l->window_to, t, sizeof t);
        bt_plan_note(&l->notes, "concurrency: admission in-flight gauge against completions/min, %d min "
             "%s-%s UTC", l->op.points, f, t);
    } else {
        bt_plan_note(&l->notes, "concurrency: no admission in-flight gauge and completions: no operating "
             "point to read a cap from");
    }

    /* the token side's quota less the other members' use, less the reserve */
    const struct bt_side_fig *ts = &e->side[e->token_side];
    l->quota = ts->applies ? ts->quota : NAN;
    l->budget_tpm = l->others_used = l->reserve_tpm = NAN;
    l->budget_q = BT_QL_UNKNOWN;
    double others = 0;
    enum bt_quality oq = BT_QL_IDLE;
    l->others = bt_eval_nshared(e);
    for (int m = e->group.leader; m >= 0; m = bt_group_next(ev, m)) {
        if (m == r)
            continue; /* every other member of the group, none dropped */
        const struct bt_side_fig *of = &ev[m].side[e->token_side];
        bt_side_sum(&others, &oq, false, of);
        if (of->used_q == BT_QL_UNKNOWN)
            l->others_unknown++;
    }
    if (!l->others)
        oq = BT_QL_KNOWN;
    if (!isnan(l->quota)) {
        l->others_used = bt_z(others);
        l->reserve_tpm = BT_LIMITS_RESERVE * l->quota;
        l->budget_tpm = fmax(0, floor(l->quota - l->others_used - l->reserve_tpm));
        l->budget_q = bt_quality_headroom(oq == BT_QL_IDLE ? BT_QL_KNOWN : oq);
        bt_fmt_tokens(l->quota, a, sizeof a);
        bt_fmt_tokens(l->others_used, b, sizeof b);
        bt_plan_note(&l->notes, "token budget: %s quota - %s used by %d other route%s of the group - %.0f%% "
             "reserve for bursts and recovery", a, b, l->others, l->others == 1 ? "" : "s",
             100 * BT_LIMITS_RESERVE);
    }

    /* max_tokens: the frame's recommendation (p99 + margin) */
    l->max_tokens = e->recommended_max_tokens;
    l->max_tokens_now = e->max_tokens;
    l->out_basis = !isnan(e->out_p99) ? e->out_p99 : e->avg_output;
    l->max_tokens_basis = isnan(l->max_tokens) ? NULL : !isnan(e->out_p99) ? "admission-p99" : "mean-output";
    if (l->max_tokens_basis && !strcmp(l->max_tokens_basis, "admission-p99")) {
        l->truncation = "below 1%: only answers longer than the p99 plus margin are cut";
        bt_plan_note(&l->notes, "max_tokens: p99 output %.0f from the admission histogram + %.0f%% margin, "
             "to a multiple of 64", e->out_p99, 100 * cfg->oversize_margin);
    } else if (l->max_tokens_basis) {
        l->truncation = "unknown: no output distribution; watch stop_reason max_tokens";
        bt_plan_note(&l->notes, "max_tokens: no output histogram; 2 x mean output %.0f + %.0f%% margin",
             e->avg_output, 100 * cfg->oversize_margin);
    } else {
        l->truncation = "unknown";
    }

    /* retries: a share of admitted calls, and never more than half the reserve */
    l->retry_share = BT_LIMITS_RETRY_SHARE;
    double calls = !isnan(e->admitted) ? e->admitted : e->invocations;
    l->retry_budget_pm = NAN;
    if (!isnan(calls)) {
        l->retry_budget_pm = floor(BT_LIMITS_RETRY_SHARE * calls);
        if (e->reservation > 0 && !isnan(l->reserve_tpm))
            l->retry_budget_pm = fmin(l->retry_budget_pm, floor(l->reserve_tpm / 2 / e->reservation));
    }
    l->max_attempts = 3;
    l->backoff_base_s = fmax(1, bt_z(e->lat_p50) / 1000);
    l->backoff_cap_s = 30;
    bt_plan_note(&l->notes, "retries: at most %.0f%% of admitted calls and half the reserve in reservations; "
         "full jitter: sleep random(0, min(cap, base x 2^attempt)), the cap half of the quota's "
         "minute", 100 * BT_LIMITS_RETRY_SHARE);
    free(ev);
}
