#include "core/headroom.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/eval_int.h"
#include "core/format.h"
#include "core/util.h"

const char *bt_status_name(enum bt_status s)
{
    static const char *const names[] = {"ok", "warn", "unknown", "crit"};
    return (unsigned)s < BT_ARRAY_LEN(names) ? names[s] : "unknown";
}

/* Monitoring-plugin convention: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN. */
int bt_status_exit(enum bt_status s)
{
    static const int codes[] = {0, 1, 3, 2};
    return (unsigned)s < BT_ARRAY_LEN(codes) ? codes[s] : 3;
}

/* Order of badness: ok < warn < unknown < crit (a known emergency beats doubt). */
enum bt_status bt_status_worse(enum bt_status a, enum bt_status b)
{
    return a > b ? a : b;
}

double bt_settled_tpm(double input, double cache_write, double output, double burndown)
{
    return input + cache_write + output * burndown;
}

double bt_requests_submitted(double invocations, double throttles, double client_errors,
                             double server_errors)
{
    return bt_z(invocations) + bt_z(throttles) + bt_z(client_errors) + bt_z(server_errors);
}

double bt_littles_law(double invocations_per_min, double latency_avg_ms)
{
    if (isnan(invocations_per_min) || invocations_per_min < 0)
        return NAN;
    if (invocations_per_min == 0)
        return 0; /* no arrivals: nothing in flight, whatever the latency */
    if (isnan(latency_avg_ms) || latency_avg_ms < 0)
        return NAN;
    return invocations_per_min / 60 * (latency_avg_ms / 1000);
}

double bt_fits_more(double headroom_tpm, double reservation_per_call)
{
    if (isnan(headroom_tpm) || isnan(reservation_per_call) || reservation_per_call <= 0)
        return NAN;
    if (headroom_tpm <= 0)
        return 0;
    return floor(headroom_tpm / reservation_per_call);
}

/* A route's quota code, where known (Service Quotas or config `quota_code`). */
static const char *route_quota_code(const struct bt_route *r)
{
    const struct bt_quota *q = &r->quota[r->endpoint == BT_EP_MANTLE ? BT_Q_INPUT_TPM : BT_Q_TPM];
    return q->code[0] ? q->code : r->endpoint == BT_EP_RUNTIME ? r->quota_code : "";
}

/* by model: account or profile, Region, endpoint, inference type, base model, and the
 * context-length variant (a 1M-context quota is not the 200K one) */
static void model_key(const struct bt_route *r, char *out, size_t n)
{
    snprintf(out, n, "%s|%s|%s|%s|%s|ctx=%s", r->account[0] ? r->account : r->profile,
             r->region, bt_endpoint_name(r->endpoint), bt_inference_name(r->inference),
             r->base_model[0] ? r->base_model : r->model, r->context);
}

bool bt_quota_shared_by(const struct bt_route *r, const char *model_id, const char *base_model,
                        int inference)
{
    if (r->endpoint != BT_EP_RUNTIME || r->inference == BT_INF_PROVISIONED ||
        !strcmp(r->model, model_id))
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
        snprintf(out, n, "%s|%s|%s|code=%s", r->account[0] ? r->account : r->profile, r->region,
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

static void side_daily(struct bt_side_fig *f, const struct bt_quota *q, const struct bt_eval *e)
{
    double per_call = e->invocations > 0 && !isnan(e->settled) ? e->settled / e->invocations : NAN;
    bt_side_route(f, q, e->tokens_today, e->tokens_today_q, per_call, "cloudwatch");
}

/* The route-level figures of every side of ev[i], quotas from the group's members. */
static void route_sides(const struct bt_config *cfg, struct bt_eval *e, const int *members, int n)
{
    const struct bt_quota *none = NULL;
    struct bt_side_fig *s = e->side;
    bool mantle = e->mantle;
    for (int k = 0; k < BT_SIDE_COUNT; k++)
        if (k != BT_SIDE_DAILY && k != BT_SIDE_DAILY_ACCOUNT) /* daily_sides() did those */
            bt_side_route(&s[k], none, NAN, BT_QL_UNKNOWN, NAN, NULL);
    if (mantle) {
        side_tpm(&s[BT_SIDE_INPUT], group_quota(cfg, members, n, BT_Q_INPUT_TPM), e);
        side_output(&s[BT_SIDE_OUTPUT], group_quota(cfg, members, n, BT_Q_OUTPUT_TPM), e);
        return; /* mantle: no burndown, no RPM, no daily quota of runtime's */
    }
    side_tpm(&s[BT_SIDE_TPM], group_quota(cfg, members, n, BT_Q_TPM), e);
    side_rpm(&s[BT_SIDE_RPM], group_quota(cfg, members, n, BT_Q_RPM), e);
    side_reserved(&s[BT_SIDE_RES_INPUT], group_quota(cfg, members, n, BT_Q_RES_INPUT_TPM), e, false);
    side_reserved(&s[BT_SIDE_RES_OUTPUT], group_quota(cfg, members, n, BT_Q_RES_OUTPUT_TPM), e, true);
    side_concurrent(&s[BT_SIDE_CONCURRENT], group_quota(cfg, members, n, BT_Q_CONCURRENT), e);
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
        snprintf(out, n, "%s|%s", r->account[0] ? r->account : r->profile, r->region);
    else
        snprintf(out, n, "%s|%s|%s|%s|ctx=%s", r->account[0] ? r->account : r->profile, r->region,
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
            if (cfg->routes[r].endpoint == BT_EP_MANTLE)
                continue; /* mantle: no daily quota of runtime's */
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

/* Each daily side over its group. */
static void daily_sides(const struct bt_config *cfg, const struct bt_eval_groups *g,
                        struct bt_eval *evals)
{
    int n = cfg->nroutes;
    for (int r = 0; r < n; r++)
        for (int k = BT_SIDE_DAILY; k <= BT_SIDE_DAILY_ACCOUNT; k++)
            bt_side_route(&evals[r].side[k], NULL, NAN, BT_QL_UNKNOWN, NAN, NULL);
    for (int pass = 0; pass < 2; pass++) {
        enum bt_side side = pass ? BT_SIDE_DAILY_ACCOUNT : BT_SIDE_DAILY;
        enum bt_quota_kind kind = pass ? BT_Q_TPD_ACCOUNT : BT_Q_TPD;
        for (int run = 0; run < g->ndaily_runs[pass]; run++) {
            const int *members = &g->daily[pass][g->daily_run[pass][run]];
            int cnt = g->daily_run[pass][run + 1] - g->daily_run[pass][run];
            const struct bt_quota *q = group_quota(cfg, members, cnt, kind);
            double sum = NAN;
            enum bt_quality ql = BT_QL_UNKNOWN;
            for (int k = 0; k < cnt; k++) {
                struct bt_side_fig *f = &evals[members[k]].side[side];
                side_daily(f, q, &evals[members[k]]);
                bt_side_sum(&sum, &ql, k == 0, f);
            }
            for (int k = 0; k < cnt; k++)
                bt_side_group(&evals[members[k]].side[side], sum, ql);
        }
    }
}

/* The route's token side: tpm, or the mantle side (input or output) that binds. */
static enum bt_side token_side(const struct bt_eval *e)
{
    if (!e->mantle)
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

/* Sides, the binding one, warnings: ev[0..n) are the evaluations of one quota
 * group's routes members[0..n), their route parts and daily sides done. */
static void eval_group(const struct bt_config *cfg, struct bt_eval *const *ev, const int *members,
                       int n, bool figures_only)
{
    static const enum bt_side grouped[] = {BT_SIDE_TPM, BT_SIDE_RPM, BT_SIDE_INPUT, BT_SIDE_OUTPUT,
                                           BT_SIDE_RES_INPUT, BT_SIDE_RES_OUTPUT,
                                           BT_SIDE_CONCURRENT};
    double sum[BT_SIDE_COUNT];
    enum bt_quality sq[BT_SIDE_COUNT];
    double rate = NAN;
    for (int i = 0; i < n; i++) {
        route_sides(cfg, ev[i], members, n);
        for (size_t k = 0; k < BT_ARRAY_LEN(grouped); k++)
            bt_side_sum(&sum[grouped[k]], &sq[grouped[k]], i == 0, &ev[i]->side[grouped[k]]);
        if (!ev[i]->mantle && !isnan(ev[i]->settled))
            rate = bt_z(rate) + ev[i]->settled;
    }
    for (int i = 0; i < n; i++) {
        struct bt_eval *e = ev[i];
        const struct bt_route *rt = &cfg->routes[e->route];
        e->nshared = e->nunknown = 0;
        e->unknown_member = -1;
        e->group_leader = members[0];
        for (int j = 0; j < n; j++) {
            if (j == i)
                continue;
            if (e->nshared < BT_MAX_SHARED)
                e->shared_with[e->nshared] = members[j];
            e->nshared++;
            if (ev[j]->state == BT_FR_UNKNOWN ||
                ev[j]->side[e->mantle ? BT_SIDE_INPUT : BT_SIDE_TPM].used_q == BT_QL_UNKNOWN) {
                if (e->unknown_member < 0)
                    e->unknown_member = members[j];
                e->nunknown++;
            }
        }
        for (size_t k = 0; k < BT_ARRAY_LEN(grouped); k++)
            bt_side_group(&e->side[grouped[k]], sum[grouped[k]], sq[grouped[k]]);
        e->daily_rate = rate;

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
        e->group_used = ts->group_used;
        e->group_used_q = ts->group_q;
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
        e->tpd = d->applies ? d->quota : NAN;
        e->group_tokens_today = d->applies ? d->group_used : NAN;
        if (!figures_only)
            bt_rules_apply(cfg, rt, e);
    }
}

struct keyed {
    int route;
    bool coded;
    char key[512];
};

/* Sorted by pointer: moving the 520-byte records themselves was most of the sort. */
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
    for (int i = 0; i < n; i++)
        up[i] = i;
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < n; i++) {
            const struct bt_route *r = &cfg->routes[i];
            rec[i].route = i;
            rec[i].coded = route_quota_code(r)[0] != '\0';
            if (pass == 0)
                bt_quota_group_key(r, rec[i].key, sizeof rec[i].key);
            else
                model_key(r, rec[i].key, sizeof rec[i].key);
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

struct bt_eval_groups *bt_eval_groups_new(const struct bt_config *cfg)
{
    struct bt_eval_groups *g = bt_xcalloc(1, sizeof *g);
    g->nroutes = cfg->nroutes;
    if (cfg->nroutes <= 0)
        return g;
    g->group = quota_groups(cfg);
    daily_groups(cfg, g);
    return g;
}

void bt_eval_groups_free(struct bt_eval_groups *g)
{
    if (!g)
        return;
    free(g->group);
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
    int *first = bt_xcalloc((size_t)n, sizeof *first); /* members chained by route order */
    int *next = bt_xcalloc((size_t)n, sizeof *next);
    int *members = bt_xcalloc((size_t)n, sizeof *members);
    int64_t *minute = bt_xcalloc((size_t)n, sizeof *minute);
    struct bt_eval **ev = bt_xcalloc((size_t)n, sizeof *ev);
    for (int r = 0; r < n; r++)
        first[r] = -1;
    group_minutes(cfg, st, group, want, now, minute);
    for (int r = n - 1; r >= 0; r--) {
        if (want && !want[group[r]])
            continue;
        bt_eval_route_part(cfg, st, r, now, minute[group[r]], figures_only, &evals[r]);
        next[r] = first[group[r]]; /* prepended backwards: each chain in route order */
        first[group[r]] = r;
    }
    if (!need)
        daily_sides(cfg, g, evals);
    for (int gl = 0; gl < n; gl++) {
        if (group[gl] != gl || (want && !want[gl]))
            continue;
        int cnt = 0;
        for (int r = first[gl]; r >= 0 && cnt < n; r = next[r]) {
            members[cnt] = r;
            ev[cnt++] = &evals[r];
        }
        eval_group(cfg, ev, members, cnt, figures_only);
    }
    free(ev);
    free(minute);
    free(members);
    free(next);
    free(first);
    free(want);
}

void bt_eval_all(const struct bt_config *cfg, const struct bt_store *st, int64_t now,
                 struct bt_eval *evals)
{
    if (cfg->nroutes <= 0)
        return;
    struct bt_eval_groups *g = bt_eval_groups_new(cfg);
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
