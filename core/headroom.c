#include "core/headroom.h"
#include "core/shares.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/eval_int.h"
#include "core/format.h"
#include "core/util.h"

/* A route's quota code, where known (Service Quotas or config `quota_code`). */
static const char *route_quota_code(const struct bt_route *r)
{
    const struct bt_quota *q = &r->quota[r->endpoint == BT_EP_MANTLE ? BT_Q_INPUT_TPM : BT_Q_TPM];
    return q->code[0] ? q->code : r->endpoint == BT_EP_RUNTIME ? r->quota_code : "";
}

const char *bt_route_account_key(const struct bt_route *r)
{
    return r->account[0] ? r->account : r->profile;
}

/* by model: account or profile, Region, endpoint, inference type, base model, and the
 * context-length variant (a 1M-context quota is not the 200K one) */
static void model_key(const struct bt_route *r, char *out, size_t n)
{
    snprintf(out, n, "%s|%s|%s|%s|%s|ctx=%s", bt_route_account_key(r), r->region,
             bt_endpoint_name(r->endpoint), bt_inference_name(r->inference),
             r->base_model[0] ? r->base_model : r->model, r->context);
}

bool bt_quota_shared_by(const struct bt_route *r, const char *model_id, const char *base_model,
                        int inference)
{
    if (!bt_route_runtime_quotas(r) || !strcmp(r->model, model_id))
        return false;
    struct bt_route other = {.endpoint = BT_EP_RUNTIME,
                             .inference = inference >= 0 && inference < BT_INF_COUNT
                                              ? (enum bt_inference)inference
                                              : bt_inference_from_model(model_id)};
    if (other.inference == BT_INF_PROVISIONED)
        return false;
    if (base_model && base_model[0])
        bt_strlcpy(other.base_model, base_model, sizeof other.base_model);
    bt_strlcpy(other.account, r->account, sizeof other.account);
    bt_strlcpy(other.profile, r->profile, sizeof other.profile);
    bt_strlcpy(other.region, r->region, sizeof other.region);
    bt_strlcpy(other.model, model_id, sizeof other.model);
    bt_strlcpy(other.context, r->context, sizeof other.context);
    char a[512], b[512];
    model_key(r, a, sizeof a);
    model_key(&other, b, sizeof b);
    return !strcmp(a, b);
}

void bt_quota_group_key(const struct bt_route *r, char *out, size_t n)
{
    const char *code = route_quota_code(r);
    if (code[0])
        snprintf(out, n, "%s|%s|%s|code=%s", bt_route_account_key(r), r->region,
                 bt_endpoint_name(r->endpoint), code);
    else
        model_key(r, out, n);
}

/* The quota of a group: the best-sourced value any member knows (first on ties). */
static const struct bt_quota *group_quota(const struct bt_config *cfg, const int *members, int n,
                                          enum bt_quota_kind k)
{
    const struct bt_quota *best = NULL;
    for (int i = 0; i < n; i++) {
        const struct bt_quota *q = &cfg->routes[members[i]].quota[k];
        if (isnan(q->value))
            continue;
        if (!best || bt_quota_rank(q->source) > bt_quota_rank(best->source))
            best = q;
    }
    return best;
}

/* What one more call costs on the mantle output side: its output allowance, else
 * the observed mean output per call. */
static double output_per_call(const struct bt_eval *e)
{
    return !isnan(e->max_tokens) ? e->max_tokens : e->avg_output;
}

/* Each side's route figures: one function per side. */
static void side_tpm(struct bt_side_fig *f, const struct bt_quota *q, const struct bt_eval *e)
{
    bt_side_route(f, q, e->used, e->used_q, e->reservation, e->held_source);
}

static void side_rpm(struct bt_side_fig *f, const struct bt_quota *q, const struct bt_eval *e)
{
    bt_side_route(f, q, e->requests, e->requests_q, 1, e->requests_source);
}

static void side_output(struct bt_side_fig *f, const struct bt_quota *q, const struct bt_eval *e)
{
    enum bt_quality ql = e->state == BT_FR_IDLE ? BT_QL_IDLE : BT_QL_KNOWN;
    bt_side_route(f, q, e->state == BT_FR_UNKNOWN ? NAN : e->output_tokens, ql, output_per_call(e),
                  "cloudwatch");
}

/* Runtime's split quotas ("... model inference input / output tokens per minute for
 * X", where an account lists them): two sides like mantle's, never the combined TPM
 * formula. Input: input + cache writes (cache reads are not charged) + the
 * reservations held in flight; output: output tokens as generated (a burndown
 * weights output against a combined quota only). No quota listed: no side. */
static void side_split(struct bt_side_fig *f, const struct bt_quota *q, const struct bt_eval *e,
                       bool output)
{
    if (!q) {
        bt_side_route(f, q, NAN, BT_QL_UNKNOWN, NAN, NULL);
        return;
    }
    if (output) {
        side_output(f, q, e);
        return;
    }
    double used = NAN;
    enum bt_quality ql = BT_QL_UNKNOWN;
    if (e->state == BT_FR_IDLE) {
        used = bt_z(e->held);
        ql = e->held > 0 ? e->held_q : BT_QL_IDLE;
    } else if (e->state == BT_FR_ACTIVE) {
        used = bt_z(e->input_tokens) + bt_z(e->cache_write) + bt_z(e->held);
        ql = bt_quality_add(BT_QL_KNOWN, isnan(e->held) ? BT_QL_UNKNOWN : e->held_q);
    }
    bt_side_route(f, q, used, ql, e->reservation, e->held_source);
}

/* The reserved tier: its input (with its share of what the calls in flight hold)
 * and its output, against the reservation's two quotas. */
static void side_reserved(struct bt_side_fig *f, const struct bt_quota *q, const struct bt_eval *e,
                          bool output)
{
    double share = e->tier_reserved_share;
    double used = NAN;
    enum bt_quality ql = BT_QL_KNOWN;
    if (!isnan(share)) {
        if (output) {
            used = e->tier_reserved_output;
        } else {
            double held_all = share < 1 ? e->held / (1 - share) : NAN;
            used = e->tier_reserved_input + bt_z(held_all) * share;
            if (isnan(held_all) && e->in_flight > 0)
                ql = BT_QL_LOWER;
        }
    }
    bt_side_route(f, q, used, ql, output ? output_per_call(e) : e->reservation, "cloudwatch");
}

/* Concurrent requests: calls in flight against the quota's cap. The admission gauge
 * is what is in flight at its scrape (known); Little's law gives the minute's mean,
 * which the peak the cap refuses at is at least (a lower bound); none at an idle
 * minute without a gauge is idle. Fits: more calls in flight at once. */
static void side_concurrent(struct bt_side_fig *f, const struct bt_quota *q,
                            const struct bt_eval *e)
{
    const char *src = e->in_flight_source;
    double used = e->in_flight;
    enum bt_quality ql;
    if (src && !strcmp(src, "admission")) {
        ql = BT_QL_KNOWN;
    } else if (!src || isnan(used)) {
        bool idle = e->state == BT_FR_IDLE; /* no calls this minute and no gauge */
        used = idle ? 0 : NAN;
        ql = idle ? BT_QL_IDLE : BT_QL_UNKNOWN;
        src = idle ? "cloudwatch" : NULL;
    } else if (used == 0) {
        ql = e->state == BT_FR_IDLE ? BT_QL_IDLE : BT_QL_KNOWN;
    } else {
        ql = BT_QL_LOWER;
    }
    bt_side_route(f, q, used, ql, 1, src);
}

/* The daily sides. The account-wide cross-model quota (the one AWS enforces since
 * 2026-09-21) is pricing-weighted: a token sum against it is an estimate of unknown
 * weighting, and a lower bound where ModelIds outside the config draw on it
 * (UNSEEN_CALLERS found some); never known. A legacy per-model quota counts raw
 * tokens. */
static void side_daily(struct bt_side_fig *f, const struct bt_quota *q, const struct bt_eval *e,
                       const struct bt_route *rt, bool account)
{
    double per_call = e->invocations > 0 && !isnan(e->settled) ? e->settled / e->invocations : NAN;
    /* the per-model legacy quota: as sure as the day's coverage; the cross-model one:
     * an estimate at best, a lower bound where the sum is one or callers are unseen */
    enum bt_quality tq = e->tokens_today_q;
    enum bt_quality ql = !account                                   ? tq
                         : tq == BT_QL_UNKNOWN                      ? BT_QL_UNKNOWN
                         : rt->unseen[0] || tq == BT_QL_LOWER       ? BT_QL_LOWER
                                                                    : BT_QL_ESTIMATE;
    bt_side_route(f, q, e->tokens_today, ql, per_call, "cloudwatch");
}

/* The quota kinds of the sides summed over a quota group, and the group's quota of
 * each (found once per group: once per member was quadratic in the group's size). */
static const enum bt_quota_kind group_kinds[] = {BT_Q_TPM, BT_Q_RPM, BT_Q_INPUT_TPM, BT_Q_OUTPUT_TPM,
                                                 BT_Q_RES_INPUT_TPM, BT_Q_RES_OUTPUT_TPM,
                                                 BT_Q_CONCURRENT};
struct group_quotas {
    const struct bt_quota *q[BT_Q_COUNT];
};

static void find_group_quotas(const struct bt_config *cfg, const int *members, int n,
                              struct group_quotas *gq)
{
    memset(gq, 0, sizeof *gq);
    for (size_t k = 0; k < BT_ARRAY_LEN(group_kinds); k++)
        gq->q[group_kinds[k]] = group_quota(cfg, members, n, group_kinds[k]);
}

/* The route-level figures of every side of e, quotas from its group's. */
static void route_sides(struct bt_eval *e, const struct group_quotas *gq)
{
    const struct bt_quota *none = NULL;
    struct bt_side_fig *s = e->side;
    bool mantle = e->mantle;
    for (int k = 0; k < BT_SIDE_COUNT; k++)
        if (k != BT_SIDE_DAILY && k != BT_SIDE_DAILY_ACCOUNT) /* daily_sides() did those */
            bt_side_route(&s[k], none, NAN, BT_QL_UNKNOWN, NAN, NULL);
    if (mantle) {
        side_tpm(&s[BT_SIDE_INPUT], gq->q[BT_Q_INPUT_TPM], e);
        side_output(&s[BT_SIDE_OUTPUT], gq->q[BT_Q_OUTPUT_TPM], e);
        return; /* mantle: no burndown, no RPM, no daily quota of runtime's */
    }
    side_tpm(&s[BT_SIDE_TPM], gq->q[BT_Q_TPM], e);
    side_split(&s[BT_SIDE_INPUT], gq->q[BT_Q_INPUT_TPM], e, false);
    side_split(&s[BT_SIDE_OUTPUT], gq->q[BT_Q_OUTPUT_TPM], e, true);
    side_rpm(&s[BT_SIDE_RPM], gq->q[BT_Q_RPM], e);
    side_reserved(&s[BT_SIDE_RES_INPUT], gq->q[BT_Q_RES_INPUT_TPM], e, false);
    side_reserved(&s[BT_SIDE_RES_OUTPUT], gq->q[BT_Q_RES_OUTPUT_TPM], e, true);
    side_concurrent(&s[BT_SIDE_CONCURRENT], gq->q[BT_Q_CONCURRENT], e);
}

/* The daily sides have groups of their own: the model's daily quota is shared
 * across its inference types (global profiles have their own), the account-wide
 * cross-model quota by every runtime route of the account and Region. */
static void daily_key(const struct bt_route *r, bool account, char *out, size_t n)
{
    const char *model = r->base_model[0] ? r->base_model : r->model;
    /* a system inference profile's ID is its model's with a prefix (us., global.) */
    const char *dot = strchr(model, '.');
    if (bt_inference_from_model(model) != BT_INF_ON_DEMAND && dot && strchr(dot + 1, '.'))
        model = dot + 1;
    if (account)
        snprintf(out, n, "%s|%s", bt_route_account_key(r), r->region);
    else
        snprintf(out, n, "%s|%s|%s|%s|ctx=%s", bt_route_account_key(r), r->region,
                 r->inference == BT_INF_GLOBAL ? "global" : "regional", model, r->context);
}

struct daily_key {
    int route;
    char key[320];
};

static int cmp_daily(const void *a, const void *b)
{
    const struct daily_key *x = *(const struct daily_key *const *)a,
                           *y = *(const struct daily_key *const *)b;
    int c = strcmp(x->key, y->key);
    return c ? c : x->route - y->route;
}

/* The daily groups of a config: its runtime routes sorted by daily key, each run of
 * equal keys one group (n log n, not n x n: configs of thousands of routes). */
static void daily_groups(const struct bt_config *cfg, struct bt_eval_groups *g)
{
    int n = cfg->nroutes;
    struct daily_key *rec = bt_xmalloc((size_t)n * sizeof *rec); /* sorted by pointer */
    struct daily_key **keys = bt_xmalloc((size_t)n * sizeof *keys);
    for (int pass = 0; pass < 2; pass++) {
        int m = 0;
        for (int r = 0; r < n; r++) {
            if (!bt_route_runtime_quotas(&cfg->routes[r]))
                continue; /* mantle, provisioned: no daily quota of runtime's */
            rec[m].route = r;
            daily_key(&cfg->routes[r], pass, rec[m].key, sizeof rec[m].key);
            keys[m] = &rec[m];
            m++;
        }
        qsort(keys, (size_t)m, sizeof *keys, cmp_daily);
        g->daily[pass] = bt_xcalloc((size_t)m + 1, sizeof *g->daily[pass]);
        g->daily_run[pass] = bt_xcalloc((size_t)m + 1, sizeof *g->daily_run[pass]);
        int runs = 0;
        for (int i = 0; i < m; i++) {
            g->daily[pass][i] = keys[i]->route;
            if (i == 0 || strcmp(keys[i]->key, keys[i - 1]->key))
                g->daily_run[pass][runs++] = i;
        }
        g->daily_run[pass][runs] = m;
        g->ndaily_runs[pass] = runs;
    }
    free(keys);
    free(rec);
}

/* Each daily side over its group, and each daily group's figures (its members and
 * its settled tokens per minute now, what the day's remaining tokens run out at:
 * DAILY_QUOTA) in every member's day[pass] (the model's group, pass 0, or the
 * account's). */
static void daily_sides(const struct bt_config *cfg, const struct bt_store *st,
                        const struct bt_eval_groups *g, struct bt_eval *evals)
{
    int n = cfg->nroutes;
    for (int r = 0; r < n; r++)
        for (int k = BT_SIDE_DAILY; k <= BT_SIDE_DAILY_ACCOUNT; k++)
            bt_side_route(&evals[r].side[k], NULL, NAN, BT_QL_UNKNOWN, NAN, NULL);
    /* the account's quota first: a per-model daily quota is legacy, used only where
     * the account lists no cross-model one */
    for (int pass = 1; pass >= 0; pass--) {
        enum bt_side side = pass ? BT_SIDE_DAILY_ACCOUNT : BT_SIDE_DAILY;
        enum bt_quota_kind kind = pass ? BT_Q_TPD_ACCOUNT : BT_Q_TPD;
        for (int run = 0; run < g->ndaily_runs[pass]; run++) {
            const int *members = &g->daily[pass][g->daily_run[pass][run]];
            int cnt = g->daily_run[pass][run + 1] - g->daily_run[pass][run];
            const struct bt_quota *q = group_quota(cfg, members, cnt, kind);
            for (int k = 0; !pass && q && k < cnt; k++)
                if (evals[members[k]].side[BT_SIDE_DAILY_ACCOUNT].applies)
                    q = NULL; /* replaced by the cross-model quota */
            double sum = NAN, now = NAN;
            enum bt_quality ql = BT_QL_UNKNOWN;
            for (int k = 0; k < cnt; k++) {
                struct bt_side_fig *f = &evals[members[k]].side[side];
                if (q) /* the group's quota asks for every member's day */
                    bt_eval_read_day(cfg, st, members[k], &evals[members[k]]);
                side_daily(f, q, &evals[members[k]], &cfg->routes[members[k]], pass);
                bt_side_sum(&sum, &ql, k == 0, f);
                if (!isnan(evals[members[k]].settled))
                    now = bt_z(now) + evals[members[k]].settled;
            }
            /* a run is in route order (cmp_daily): its first is its leader */
            struct bt_group_fig day = {.leader = members[0], .n = cnt, .unknown = {-1, -1},
                                       .rate = now};
            for (int k = 0; k < cnt; k++) {
                bt_side_group(&evals[members[k]].side[side], sum, ql);
                evals[members[k]].day[pass] = day;
            }
        }
    }
}

/* The route's token side: tpm, or the mantle side (input or output) that binds. */
static enum bt_side token_side(const struct bt_eval *e)
{
    bool split = !e->side[BT_SIDE_TPM].applies &&
                 (e->side[BT_SIDE_INPUT].applies || e->side[BT_SIDE_OUTPUT].applies);
    if (!e->mantle && !split)
        return BT_SIDE_TPM;
    struct bt_side_fig two[BT_SIDE_COUNT];
    memset(two, 0, sizeof two);
    two[BT_SIDE_INPUT] = e->side[BT_SIDE_INPUT];
    two[BT_SIDE_OUTPUT] = e->side[BT_SIDE_OUTPUT];
    return bt_side_binding(two, BT_SIDE_INPUT);
}

/* What a right-sized max_tokens would free on the token side. */
static void recommend(const struct bt_config *cfg, struct bt_eval *e, double head)
{
    double basis = !isnan(e->out_p99) ? e->out_p99 : 2 * e->avg_output;
    if (isnan(basis) || basis <= 0 || isnan(e->max_tokens))
        return;
    double rec = ceil(basis * (1 + cfg->oversize_margin) / 64) * 64;
    e->recommended_max_tokens = rec;
    if (isnan(head) || isnan(e->reservation) || e->reservation <= 0)
        return;
    double r2 = e->reservation - e->max_tokens + rec;
    double k = r2 / e->reservation;
    bool upper = e->used_q == BT_QL_UPPER;
    double base = upper ? bt_nanmax(e->settled, e->estimated) : e->used - bt_z(e->held);
    double used2 = upper ? bt_nanmax(base, e->reserved_per_min * k) : bt_z(base) + bt_z(e->held) * k;
    e->fits_more_recommended = bt_fits_more(head + e->used - used2, r2);
}

/* Sides, the binding one, warnings: evals[] holds the evaluations of quota group g's
 * routes, their route parts and daily sides done. Linear in the group's size: its
 * quotas, sums and unknown members (its struct bt_group_fig) are found once, each
 * member reads them. */
static void eval_group(const struct bt_config *cfg, struct bt_eval *evals, const struct bt_group *g,
                       bool figures_only)
{
    static const enum bt_side grouped[] = {BT_SIDE_TPM, BT_SIDE_RPM, BT_SIDE_INPUT, BT_SIDE_OUTPUT,
                                           BT_SIDE_RES_INPUT, BT_SIDE_RES_OUTPUT,
                                           BT_SIDE_CONCURRENT};
    const int *members = g->members;
    int n = g->n;
    double sum[BT_SIDE_COUNT];
    enum bt_quality sq[BT_SIDE_COUNT];
    struct group_quotas gq;
    find_group_quotas(cfg, members, n, &gq);
    struct bt_group_fig fig = {.leader = g->leader, .n = n, .unknown = {-1, -1}, .rate = NAN};
    for (int i = 0; i < n; i++) {
        struct bt_eval *e = &evals[members[i]];
        route_sides(e, &gq);
        for (size_t k = 0; k < BT_ARRAY_LEN(grouped); k++)
            bt_side_sum(&sum[grouped[k]], &sq[grouped[k]], i == 0, &e->side[grouped[k]]);
        e->group_next = i + 1 < n ? members[i + 1] : -1;
        if (bt_eval_use_unknown(e)) {
            if (fig.nunknown < 2)
                fig.unknown[fig.nunknown] = members[i];
            fig.nunknown++;
        }
    }
    for (int i = 0; i < n; i++) {
        struct bt_eval *e = &evals[members[i]];
        const struct bt_route *rt = &cfg->routes[e->route];
        e->group = fig;
        for (size_t k = 0; k < BT_ARRAY_LEN(grouped); k++)
            bt_side_group(&e->side[grouped[k]], sum[grouped[k]], sq[grouped[k]]);

        /* the token side: the route's TPM headline (quota, used, headroom in tokens) */
        e->token_side = token_side(e);
        const struct bt_side_fig *ts = &e->side[e->token_side];
        if (e->token_side == BT_SIDE_OUTPUT) {
            /* the route's figures follow the side that binds */
            e->settled = e->used = ts->used;
            e->used_q = ts->used_q;
            /* held stays the route's (the input side's reservations, with their own
             * quality): not an exact 0 the output side never measured */
            e->reserved_per_min = NAN;
        }
        e->quota = ts->quota;
        e->quota_source = ts->source;
        bt_strlcpy(e->quota_code, ts->code, sizeof e->quota_code);
        e->headroom_tpm = ts->headroom;
        recommend(cfg, e, e->side[e->mantle ? BT_SIDE_INPUT : BT_SIDE_TPM].headroom);

        /* the one rule: every figure of the headline comes from the side that binds */
        e->binding = bt_side_binding(e->side, e->token_side);
        const struct bt_side_fig *b = &e->side[e->binding];
        e->headroom_pct = b->pct;
        e->headroom_q = b->headroom_q;
        e->fits_more = b->fits;
        if (!b->applies)
            e->headroom_q = BT_QL_UNKNOWN;

        /* the daily quota nearest to running out, for DAILY_QUOTA */
        const struct bt_side_fig *d = &e->side[BT_SIDE_DAILY], *da = &e->side[BT_SIDE_DAILY_ACCOUNT];
        if (da->applies && !isnan(da->pct) && (!d->applies || isnan(d->pct) || da->pct < d->pct))
            d = da;
        /* what that daily group charges now is its own members' rate (e->day), not
         * the TPM group's: a daily group can hold several TPM groups, and back */
        e->daily = d->applies ? (d == da ? BT_SIDE_DAILY_ACCOUNT : BT_SIDE_DAILY) : BT_SIDE_COUNT;
        if (!figures_only)
            bt_rules_apply(cfg, rt, e, g);
    }
}

/* A route's group key, in one buffer of the keys packed end to end (pool + off, then
 * key once the buffer stops moving): 512 bytes inline a route were 10 MB of a
 * 20,000-route check's peak, made again by every evaluation, forecast and ceiling. */
struct keyed {
    int route;
    bool coded;
    size_t off;
    const char *key;
};

/* Sorted by pointer: moving the records themselves was most of the sort. */
static int cmp_keyed(const void *a, const void *b)
{
    const struct keyed *x = *(const struct keyed *const *)a, *y = *(const struct keyed *const *)b;
    int c = strcmp(x->key, y->key);
    return c ? c : x->route - y->route;
}

static int find(int *up, int i)
{
    while (up[i] != i)
        i = up[i] = up[up[i]];
    return i;
}

static void unite(int *up, int a, int b)
{
    a = find(up, a);
    b = find(up, b);
    if (a != b)
        up[a > b ? a : b] = a < b ? a : b; /* the lower route index leads */
}

/* The quota group of every route, as the lowest route index in it: routes with
 * the same quota code share; a route whose code is unknown shares with the routes
 * of its model, Region, endpoint and inference type (routes of one model with
 * different known codes, such as a 1M-context quota, stay apart). */
static int *quota_groups(const struct bt_config *cfg)
{
    int n = cfg->nroutes;
    int *up = bt_xcalloc((size_t)n, sizeof *up);
    struct keyed *rec = bt_xmalloc((size_t)n * sizeof *rec); /* each filled below */
    struct keyed **k = bt_xmalloc((size_t)n * sizeof *k);
    size_t cap = (size_t)n * 64, len;
    char *pool = bt_xmalloc(cap);
    for (int i = 0; i < n; i++)
        up[i] = i;
    for (int pass = 0; pass < 2; pass++) {
        len = 0;
        for (int i = 0; i < n; i++) {
            const struct bt_route *r = &cfg->routes[i];
            char key[512];
            rec[i].route = i;
            rec[i].coded = route_quota_code(r)[0] != '\0';
            if (pass == 0)
                bt_quota_group_key(r, key, sizeof key);
            else
                model_key(r, key, sizeof key);
            size_t l = strlen(key) + 1;
            while (len + l > cap)
                pool = bt_xrealloc(pool, cap *= 2);
            memcpy(pool + len, key, l);
            rec[i].off = len;
            len += l;
        }
        for (int i = 0; i < n; i++) {
            rec[i].key = pool + rec[i].off;
            k[i] = &rec[i];
        }
        qsort(k, (size_t)n, sizeof *k, cmp_keyed);
        for (int i = 0; i < n;) {
            int j = i + 1;
            while (j < n && !strcmp(k[j]->key, k[i]->key))
                j++;
            for (int m = i + 1; m < j; m++)
                if (pass == 0 || !k[m]->coded || !k[i]->coded)
                    unite(up, k[i]->route, k[m]->route);
            i = j;
        }
    }
    for (int i = 0; i < n; i++)
        up[i] = find(up, i);
    free(pool);
    free(k);
    free(rec);
    return up;
}

/* Each quota group's evaluated minute (minute[g] of its leader g): the oldest of its
 * readable members' newest settled minute (0: none can be read). One pass over the
 * routes: a pass per group was quadratic with thousands of single-route groups. */
static void group_minutes(const struct bt_config *cfg, const struct bt_store *st, const int *group,
                          const bool *want, int64_t now, int64_t *minute)
{
    for (int r = 0; r < cfg->nroutes; r++) {
        if (want && !want[group[r]])
            continue;
        int64_t s = bt_frame_settled(cfg, st, r, now);
        int64_t *m = &minute[group[r]];
        if (s && (!*m || s < *m))
            *m = s;
    }
}

/* Each quota group's members, in config order, one run a group: a counting pass
 * over the routes (leaders come in config order, and so do their members). */
static void group_members(struct bt_eval_groups *g)
{
    int n = g->nroutes;
    g->group_index = bt_xcalloc((size_t)n, sizeof *g->group_index);
    g->member = bt_xcalloc((size_t)n, sizeof *g->member);
    int *count = bt_xcalloc((size_t)n, sizeof *count);
    g->ngroups = 0;
    for (int r = 0; r < n; r++) {
        if (g->group[r] == r)
            g->group_index[r] = g->ngroups++;
        g->group_index[r] = g->group_index[g->group[r]]; /* a leader precedes its members */
        count[g->group_index[r]]++;
    }
    g->groups = bt_xcalloc((size_t)g->ngroups, sizeof *g->groups);
    int at = 0;
    for (int i = 0; i < g->ngroups; i++) {
        g->groups[i].members = &g->member[at];
        at += count[i];
    }
    for (int r = 0; r < n; r++) {
        struct bt_group *gr = &g->groups[g->group_index[r]];
        if (!gr->n)
            gr->leader = r;
        g->member[gr->members - g->member + gr->n++] = r;
    }
    free(count);
}

/* What a route's quota and daily group keys are made of (model_key,
 * bt_quota_group_key, daily_key): equal inputs, equal groups. */
#define BT_ROUTE_FIELD(f) sizeof(((struct bt_route *)0)->f)
struct bt_group_input {
    char account[BT_ROUTE_FIELD(account)];
    char profile[BT_ROUTE_FIELD(profile)];
    char region[BT_ROUTE_FIELD(region)];
    char model[BT_ROUTE_FIELD(model)];
    char base_model[BT_ROUTE_FIELD(base_model)];
    char context[BT_ROUTE_FIELD(context)];
    char code[BT_ROUTE_FIELD(quota_code)]; /* route_quota_code */
    enum bt_endpoint endpoint;
    enum bt_inference inference;
};

static void group_input(const struct bt_route *r, struct bt_group_input *in)
{
    bt_strlcpy(in->account, r->account, sizeof in->account);
    bt_strlcpy(in->profile, r->profile, sizeof in->profile);
    bt_strlcpy(in->region, r->region, sizeof in->region);
    bt_strlcpy(in->model, r->model, sizeof in->model);
    bt_strlcpy(in->base_model, r->base_model, sizeof in->base_model);
    bt_strlcpy(in->context, r->context, sizeof in->context);
    bt_strlcpy(in->code, route_quota_code(r), sizeof in->code);
    in->endpoint = r->endpoint;
    in->inference = r->inference;
}

static bool group_input_same(const struct bt_route *r, const struct bt_group_input *in)
{
    return r->endpoint == in->endpoint && r->inference == in->inference &&
           !strcmp(r->model, in->model) && !strcmp(r->base_model, in->base_model) &&
           !strcmp(route_quota_code(r), in->code) && !strcmp(r->region, in->region) &&
           !strcmp(r->account, in->account) && !strcmp(r->profile, in->profile) &&
           !strcmp(r->context, in->context);
}

struct bt_eval_groups *bt_eval_groups_once(const struct bt_config *cfg)
{
    struct bt_eval_groups *g = bt_xcalloc(1, sizeof *g);
    g->nroutes = cfg->nroutes;
    if (cfg->nroutes <= 0)
        return g;
    g->group = quota_groups(cfg);
    group_members(g);
    daily_groups(cfg, g);
    return g;
}

struct bt_eval_groups *bt_eval_groups_new(const struct bt_config *cfg)
{
    struct bt_eval_groups *g = bt_eval_groups_once(cfg);
    if (cfg->nroutes <= 0)
        return g;
    g->input = bt_xmalloc((size_t)cfg->nroutes * sizeof *g->input);
    for (int r = 0; r < cfg->nroutes; r++)
        group_input(&cfg->routes[r], &g->input[r]);
    return g;
}

struct bt_eval_groups *bt_eval_groups_renew(struct bt_eval_groups *g,
                                            const struct bt_config *cfg)
{
    bool same = g && g->nroutes == cfg->nroutes && (g->input || !cfg->nroutes);
    for (int r = 0; same && r < cfg->nroutes; r++)
        same = group_input_same(&cfg->routes[r], &g->input[r]);
    if (same)
        return g;
    bt_eval_groups_free(g);
    return bt_eval_groups_new(cfg);
}

const struct bt_group *bt_eval_group_of(const struct bt_eval_groups *g, int r)
{
    return r >= 0 && r < g->nroutes ? &g->groups[g->group_index[r]] : NULL;
}

void bt_eval_groups_free(struct bt_eval_groups *g)
{
    if (!g)
        return;
    free(g->group);
    free(g->groups);
    free(g->group_index);
    free(g->member);
    free(g->input);
    for (int p = 0; p < 2; p++) {
        free(g->daily[p]);
        free(g->daily_run[p]);
    }
    free(g);
}

void bt_eval_all_with(const struct bt_config *cfg, const struct bt_store *st, int64_t now,
                      const struct bt_eval_groups *g, bool figures_only, const bool *need,
                      struct bt_eval *evals)
{
    int n = cfg->nroutes;
    if (n <= 0 || n != g->nroutes)
        return;
    const int *group = g->group;
    bool *want = NULL; /* per group leader: a member is needed */
    if (need) {
        want = bt_xcalloc((size_t)n, sizeof *want);
        for (int r = 0; r < n; r++)
            want[group[r]] |= need[r];
    }
    int64_t *minute = bt_xcalloc((size_t)n, sizeof *minute);
    group_minutes(cfg, st, group, want, now, minute);
    for (int r = 0; r < n; r++) {
        if (want && !want[group[r]])
            continue;
        bt_eval_route_part(cfg, st, r, now, minute[group[r]], figures_only, &evals[r]);
    }
    if (!need)
        daily_sides(cfg, st, g, evals);
    for (int i = 0; i < g->ngroups; i++) {
        const struct bt_group *gr = &g->groups[i];
        if (want && !want[gr->leader])
            continue;
        eval_group(cfg, evals, gr, figures_only);
        if (!figures_only && gr->n > 1)
            bt_shares_say_holders(cfg, st, evals, gr);
    }
    if (!figures_only && !need)
        bt_rules_spend_sums(cfg, st, evals);
    free(minute);
    free(want);
}

void bt_eval_all(const struct bt_config *cfg, const struct bt_store *st, int64_t now,
                 struct bt_eval *evals)
{
    if (cfg->nroutes <= 0)
        return;
    struct bt_eval_groups *g = bt_eval_groups_once(cfg);
    bt_eval_all_with(cfg, st, now, g, false, NULL, evals);
    bt_eval_groups_free(g);
}

/* One route: every route is evaluated (its quota group and its daily groups reach
 * across the config), this one copied out. */
void bt_eval_route(const struct bt_config *cfg, const struct bt_store *st, int r, int64_t now,
                   struct bt_eval *out)
{
    struct bt_eval *all = bt_xcalloc((size_t)cfg->nroutes, sizeof *all);
    bt_eval_all(cfg, st, now, all);
    *out = all[r];
    free(all);
}
