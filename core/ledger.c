#include "core/ledger.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/eval_int.h"
#include "core/strmap.h"
#include "core/util.h"

double bt_ledger_runout_minutes(double remaining, double rate, double slope)
{
    if (isnan(remaining) || isnan(rate) || isnan(slope))
        return NAN;
    if (remaining <= 0)
        return 0;
    if (fabs(slope) < 1e-12) /* a steady rate */
        return rate > 0 ? remaining / rate : NAN;
    /* slope / 2 m^2 + rate m - remaining = 0 */
    double disc = rate * rate + 2 * slope * remaining;
    if (disc < 0)
        return NAN; /* a falling rate that stops before the quota is used */
    double m = (-rate + sqrt(disc)) / slope;
    if (slope < 0 && rate <= 0)
        return NAN;
    return m > 0 ? m : NAN;
}

/* Settled tokens, as the daily sides count them (core/frame.c: input + cache write +
 * output x burndown). */
static double route_tokens(const struct bt_store *st, const struct bt_route *rt, int r, int64_t m)
{
    double in = bt_store_at(st, r, BT_SIG_INPUT_TOKENS, m);
    double cw = bt_store_at(st, r, BT_SIG_CACHE_WRITE, m);
    double out = bt_store_at(st, r, BT_SIG_OUTPUT_TOKENS, m);
    if (isnan(in) && isnan(cw) && isnan(out))
        return NAN;
    return bt_settled_tpm(bt_z(in), bt_z(cw), bt_z(out), rt->burndown);
}

static int cmp_model(const void *a, const void *b)
{
    const struct bt_ledger_model *x = a, *y = b;
    if (x->tokens_today != y->tokens_today)
        return x->tokens_today < y->tokens_today ? 1 : -1;
    return strcmp(x->model, y->model);
}

/* Whether route rt is one of ledger l's: it draws on the daily quotas, of l's account
 * and Region (the account's daily group: bt_route_account_key, read off l as of a
 * route, account else profile). */
static bool of_ledger(const struct bt_route *rt, const struct bt_ledger *l)
{
    return bt_route_runtime_quotas(rt) && !strcmp(rt->region, l->region) &&
           !strcmp(bt_route_account_key(rt), l->account[0] ? l->account : l->profile);
}

/* The Region's trend: a least-squares line through its runtime routes' tokens of the
 * BT_LEGDER_FIT minutes through `end` (a minute with none of them read is left out). */
static void fit(const struct bt_config *cfg, const struct bt_store *st, int64_t end,
                struct bt_ledger *l)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    int n = 0;
    for (int i = 0; i < BT_LEDGER_FIT; i++) {
        int64_t m = end - 60 * (int64_t)(BT_LEDGER_FIT - 1 - i);
        double sum = 0;
        bool any = false;
        for (int r = 0; r < cfg->nroutes; r++) {
            const struct bt_route *rt = &cfg->routes[r];
            if (!of_ledger(rt, l))
                continue;
            double v = route_tokens(st, rt, r, m);
            if (!isnan(v)) {
                sum += v;
                any = true;
            }
        }
        if (!any)
            continue;
        double x = i;
        sx += x, sy += sum, sxx += x * x, sxy += x * sum;
        n++;
    }
    l->fit_minutes = n;
    l->fit_end = end;
    if (n < BT_LEDGER_FIT_MIN)
        return; /* not enough data: no trend, never a ramp from zeros */
    double den = n * sxx - sx * sx;
    double slope = den != 0 ? (n * sxy - sx * sy) / den : 0;
    double icpt = (sy - slope * sx) / n;
    l->slope = slope;
    l->rate = icpt + slope * (BT_LEDGER_FIT - 1);
}

/* The groups' sums of one minute, each summed once (a group of N throttled members
 * summed for each of them was N x N): sum[leader] holds minute at[leader]'s. */
struct group_memo {
    double *sum;
    int64_t *at;
};

/* The settled tokens at minute m of route r's quota group (its members in evals, as
 * the frame grouped them), NAN when none was read. */
static double group_tokens(const struct bt_config *cfg, const struct bt_store *st,
                           const struct bt_eval *evals, struct group_memo *gm, int r, int64_t m)
{
    int leader = bt_group_leader(evals, r);
    if (gm->at[leader] == m)
        return gm->sum[leader];
    double sum = NAN;
    for (int k = leader; k >= 0; k = bt_group_next(evals, k)) {
        double v = route_tokens(st, &cfg->routes[k], k, m);
        if (!isnan(v))
            sum = bt_z(sum) + v;
    }
    gm->at[leader] = m;
    gm->sum[leader] = sum;
    return sum;
}

/* Whether the Region throttled at minute m as the cross-model day running out reads:
 * every runtime route called in m throttled (one at least), each quota group under
 * half its per-minute token quota (a group at its TPM quota throttles for that
 * instead). The group's quota and members are the frame's (evals): one reading of
 * the TPM quota, not each route's own record (a member listing none could not be
 * told, and members sharing one were each measured against all of it). */
static bool day_throttled(const struct bt_config *cfg, const struct bt_store *st,
                          const struct bt_eval *evals, struct group_memo *gm,
                          const struct bt_ledger *l, int64_t m, int *routes, double *thr)
{
    *routes = 0;
    *thr = 0;
    for (int r = 0; r < cfg->nroutes; r++) {
        const struct bt_route *rt = &cfg->routes[r];
        if (!of_ledger(rt, l))
            continue;
        double t = bt_store_at(st, r, BT_SIG_THROTTLES, m);
        double inv = bt_store_at(st, r, BT_SIG_INVOCATIONS, m);
        if (!(t > 0)) {
            if (inv > 0)
                return false; /* called and served: the day had room */
            continue;
        }
        double q = bt_eval_side(&evals[r], BT_SIDE_TPM)->quota;
        double tok = group_tokens(cfg, st, evals, gm, r, m);
        if (isnan(q) || q <= 0 || bt_z(tok) >= q / 2)
            return false; /* bound by its group's TPM quota, or cannot be told */
        (*routes)++;
        *thr += t;
    }
    return *routes > 0;
}

/* The first minute of the day (end's) that day_throttled reads, the day's tokens
 * through the minute before it as the observed ceiling. Only minutes with throttles
 * are looked at (each route's throttles read a range at a time). */
static void onset(const struct bt_config *cfg, const struct bt_store *st,
                  const struct bt_eval *evals, int64_t end, struct bt_ledger *l)
{
    int64_t day = end - end % 86400, first = 0;
    size_t nr = (size_t)(cfg->nroutes > 0 ? cfg->nroutes : 1);
    struct group_memo gm = {bt_xmalloc(nr * sizeof *gm.sum), bt_xmalloc(nr * sizeof *gm.at)};
    for (size_t i = 0; i < nr; i++)
        gm.at[i] = INT64_MIN; /* no minute summed yet */
    for (int r = 0; r < cfg->nroutes; r++) {
        const struct bt_route *rt = &cfg->routes[r];
        const struct bt_series *se = bt_store_series_c(st, r, BT_SIG_THROTTLES);
        if (!of_ledger(rt, l) || !se->cap || !se->newest)
            continue;
        int64_t from = se->oldest > day ? se->oldest : day;
        int64_t to = first && first - 60 < end ? first - 60 : end;
        double buf[256];
        for (int64_t m = from; m <= to;) {
            int k = (int)((to - m) / 60 + 1);
            if (k > (int)BT_ARRAY_LEN(buf))
                k = (int)BT_ARRAY_LEN(buf);
            bt_store_range(st, r, BT_SIG_THROTTLES, m, k, buf);
            int i = 0;
            for (; i < k; i++) {
                int n;
                double thr;
                if (buf[i] > 0 && day_throttled(cfg, st, evals, &gm, l, m + 60 * (int64_t)i, &n, &thr))
                    break;
            }
            if (i < k) {
                first = m + 60 * (int64_t)i; /* the earliest of this route; later routes
                                              * look before it only */
                break;
            }
            m += 60 * (int64_t)k;
        }
    }
    if (first)
        day_throttled(cfg, st, evals, &gm, l, first, &l->onset_routes, &l->onset_throttles);
    free(gm.sum);
    free(gm.at);
    if (!first)
        return;
    l->onset = first;
    /* the day (its day sums) less the minutes from the onset on (in the store: the
     * onset was found there), as a day's sums cannot be cut at a minute */
    double sum = 0;
    for (int r = 0; r < cfg->nroutes; r++) {
        const struct bt_route *rt = &cfg->routes[r];
        if (!of_ledger(rt, l))
            continue;
        sum += bt_z(bt_day_tokens(st, rt, r, end));
        /* a day sum reaches the poll that asked it: every minute the store holds */
        const struct bt_series *se = bt_store_series_c(st, r, BT_SIG_INPUT_TOKENS);
        int64_t last = se->cap && se->newest > end ? se->newest : end;
        for (int64_t m = first; m <= last; m += 60)
            sum -= bt_z(route_tokens(st, rt, r, m));
    }
    l->ceiling = sum > 0 ? sum : 0;
}

/* Why the Region's day is a lower bound (the first reason found), "" when it is not. */
static void lower_why(struct bt_ledger *l, const char *why)
{
    l->used_q = BT_QL_LOWER;
    if (!l->used_why[0])
        bt_strlcpy(l->used_why, why, sizeof l->used_why);
}

int bt_ledger_build(const struct bt_config *cfg, const struct bt_store *st,
                    const struct bt_eval *evals, struct bt_ledger **out)
{
    struct bt_ledger *ls = NULL;
    bool *asked = NULL;      /* per Region: a Metrics Insights answer heard */
    int nl = 0;
    /* each Region's models by ID (a linear search per route was quadratic: 20,000
     * routes on as many models, most of a check's report) */
    struct bt_strmap *by_model = NULL;
    for (int r = 0; r < cfg->nroutes; r++) {
        const struct bt_route *rt = &cfg->routes[r];
        if (!bt_route_runtime_quotas(rt))
            continue; /* the cross-model quota is bedrock-runtime's; PT has no token quota */
        int k = 0;
        while (k < nl && !of_ledger(rt, &ls[k]))
            k++;
        if (k == nl) {
            ls = bt_xrealloc(ls, (size_t)(nl + 1) * sizeof *ls);
            asked = bt_xrealloc(asked, (size_t)(nl + 1) * sizeof *asked);
            asked[nl] = false;
            by_model = bt_xrealloc(by_model, (size_t)(nl + 1) * sizeof *by_model);
            bt_strmap_init(&by_model[nl], 16);
            struct bt_ledger *l = &ls[nl++];
            memset(l, 0, sizeof *l);
            bt_strlcpy(l->region, rt->region, sizeof l->region);
            bt_strlcpy(l->account, rt->account, sizeof l->account);
            bt_strlcpy(l->profile, rt->account[0] ? "" : rt->profile, sizeof l->profile);
            l->usd_today = 0;
            l->used_q = BT_QL_ESTIMATE;
            l->quota = l->pct = l->rate = l->slope = l->ceiling = NAN;
        }
        struct bt_ledger *l = &ls[k];
        const struct bt_eval *e = &evals[r];
        /* the quota of the account's daily group, as its daily side found it (the
         * best-sourced value a member knows): one reading of the group's quota, not
         * the first route's that lists one */
        const struct bt_side_fig *ds = bt_eval_side(e, BT_SIDE_DAILY_ACCOUNT);
        if (isnan(l->quota) && ds->applies) {
            l->quota = ds->quota;
            bt_strlcpy(l->quota_code, ds->code, sizeof l->quota_code);
        }
        if (rt->unseen[0])
            l->outside = true;
        if (rt->unseen_failed[0] && !rt->unseen[0]) {
            char why[224];
            bt_fmt_cut(why, sizeof why, "callers outside the config unknown: %s",
                       rt->unseen_failed);
            lower_why(l, why);
        }
        if (rt->unseen_asked)
            asked[k] = true;
        int64_t dm = bt_eval_day_minute(e); /* the frame's reading of the day */
        double tok = dm ? bt_day_tokens(st, rt, r, dm) : NAN;
        if (isnan(tok) || e->state == BT_FR_UNKNOWN) {
            char why[224];
            bt_fmt_cut(why, sizeof why, "%s's tokens today are unknown", rt->name);
            lower_why(l, why);
        } else if (e->tokens_today_q == BT_QL_LOWER) {
            char why[224];
            bt_fmt_cut(why, sizeof why, "%s's day was not all read", rt->name);
            lower_why(l, why);
        }
        if (dm > l->fit_end)
            l->fit_end = dm;
        const char *model = bt_profile_strip(rt->base_model[0] ? rt->base_model : rt->model);
        int *at = bt_strmap_put(&by_model[k], model);
        if (*at < 0) {
            *at = l->nmodels;
            if (!(l->nmodels & (l->nmodels - 1))) /* 0, 1, 2, 4 ...: room doubles */
                l->models = bt_xrealloc(l->models, (size_t)(l->nmodels ? 2 * l->nmodels : 1) *
                                                       sizeof *l->models);
            struct bt_ledger_model *lm = &l->models[l->nmodels++];
            memset(lm, 0, sizeof *lm);
            bt_strlcpy(lm->model, model, sizeof lm->model);
        }
        struct bt_ledger_model *lm = &l->models[*at];
        lm->routes++;
        lm->tokens_today += bt_z(tok);
        l->tokens_today += bt_z(tok);
        double usd = e->spend.usd_today;
        lm->usd_today = lm->routes == 1 ? usd : lm->usd_today + usd; /* NAN stays NAN */
        l->usd_today += bt_z(usd);
    }
    for (int k = 0; k < nl; k++)
        bt_strmap_free(&by_model[k]);
    free(by_model);
    /* whose: said where two ledgers share a Region (two accounts, or profiles) */
    for (int k = 0; k < nl; k++)
        for (int j = 0; j < nl && !ls[k].who[0]; j++)
            if (j != k && !strcmp(ls[j].region, ls[k].region)) {
                struct bt_ledger *l = &ls[k];
                if (l->account[0])
                    snprintf(l->who, sizeof l->who, "account %s", l->account);
                else if (l->profile[0])
                    snprintf(l->who, sizeof l->who, "profile %s", l->profile);
                else
                    bt_strlcpy(l->who, "the default credentials", sizeof l->who);
            }
    for (int k = 0; k < nl; k++) {
        struct bt_ledger *l = &ls[k];
        /* callers outside the config draw on it too, or may, unlooked for */
        if (l->outside)
            lower_why(l, "callers outside the config draw on it (UNSEEN_CALLERS)");
        else if (!asked[k])
            lower_why(l, "callers outside the config not looked for (no Metrics Insights "
                         "answer: the dashboard, record and serve ask every 5 minutes; check "
                         "does not)");
        for (int j = 0; j < l->nmodels; j++)
            l->models[j].share = l->tokens_today > 0 ? l->models[j].tokens_today / l->tokens_today : 0;
        qsort(l->models, (size_t)l->nmodels, sizeof *l->models, cmp_model);
        int64_t end = l->fit_end;
        l->fit_end = 0;
        if (end) {
            fit(cfg, st, end, l);
            onset(cfg, st, evals, end, l);
        }
        l->reset = end ? end - end % 86400 + 86400 : 0;
        if (!isnan(l->quota) && l->quota > 0) {
            l->pct = 100 * l->tokens_today / l->quota;
            double mins = bt_ledger_runout_minutes(l->quota - l->tokens_today, l->rate, l->slope);
            /* from the end of the newest minute fitted */
            if (!isnan(mins) && end) {
                double at = (double)end + 60 + mins * 60;
                if (at < (double)l->reset)
                    l->runout = (int64_t)at;
            }
        }
    }
    free(asked);
    *out = ls;
    return nl;
}

void bt_ledger_free(struct bt_ledger *l, int n)
{
    for (int k = 0; k < n; k++)
        free(l[k].models);
    free(l);
}
