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

const char *bt_side_name(enum bt_side s)
{
    return s == BT_SIDE_OUTPUT ? "output" : "input";
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

void bt_quota_group_key(const struct bt_route *r, char *out, size_t n)
{
    const char *code = route_quota_code(r);
    if (code[0])
        snprintf(out, n, "%s|%s|%s|code=%s", r->account[0] ? r->account : r->profile, r->region,
                 bt_endpoint_name(r->endpoint), code);
    else
        model_key(r, out, n);
}

/* Sums that stay unknown only when every term is. */
static double nanadd(double a, double b)
{
    return isnan(a) ? b : isnan(b) ? a : a + b;
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

static double qval(const struct bt_quota *q)
{
    return q ? q->value : NAN;
}

static double pct_of(double headroom, double quota)
{
    return isnan(headroom) || isnan(quota) || quota <= 0 ? NAN : 100 * headroom / quota;
}

/* A mantle route's binding side: the one with less headroom left (a side with a
 * quota of 0 binds; an unknown side never does; input on a tie). */
static enum bt_side mantle_binding(const struct bt_eval *e)
{
    if (e->in_quota == 0)
        return BT_SIDE_INPUT;
    if (e->out_quota == 0)
        return BT_SIDE_OUTPUT;
    if (isnan(e->out_pct))
        return BT_SIDE_INPUT;
    if (isnan(e->in_pct))
        return BT_SIDE_OUTPUT;
    return e->out_pct < e->in_pct ? BT_SIDE_OUTPUT : BT_SIDE_INPUT;
}

/* Headroom, fits, warnings: ev[0..n) are the evaluations of one quota group's
 * routes members[0..n), their route parts done. */
static void eval_group(const struct bt_config *cfg, struct bt_eval *const *ev, const int *members,
                       int n)
{
    bool mantle = ev[0]->mantle;
    const struct bt_quota *q = group_quota(cfg, members, n, mantle ? BT_Q_INPUT_TPM : BT_Q_TPM);
    const struct bt_quota *qo = mantle ? group_quota(cfg, members, n, BT_Q_OUTPUT_TPM) : NULL;
    const struct bt_quota *qd = group_quota(cfg, members, n, BT_Q_TPD);
    double used = NAN, out_used = NAN, today = NAN, rate = NAN;
    for (int i = 0; i < n; i++) {
        const struct bt_eval *m = ev[i];
        used = nanadd(used, m->used);
        out_used = nanadd(out_used, m->out_used);
        today = nanadd(today, m->tokens_today);
        rate = nanadd(rate, mantle ? NAN : m->settled);
    }
    for (int i = 0; i < n; i++) {
        struct bt_eval *e = ev[i];
        const struct bt_route *rt = &cfg->routes[e->route];
        e->nshared = 0;
        e->group_leader = members[0];
        for (int j = 0; j < n; j++) {
            if (j == i)
                continue;
            if (e->nshared < BT_MAX_SHARED)
                e->shared_with[e->nshared] = members[j];
            e->nshared++;
        }
        e->tpd = qval(qd);
        e->group_tokens_today = isnan(e->tpd) ? NAN : today;
        e->daily_rate = rate;
        double quota = qval(q);
        const struct bt_quota *src = q;
        double head = isnan(quota) || isnan(e->used) ? NAN : quota - used;
        if (mantle) {
            e->in_quota = quota;
            e->in_used = e->used;
            e->in_group_used = used;
            e->in_headroom = head;
            e->in_pct = pct_of(head, quota);
            e->out_quota = qval(qo);
            e->out_group_used = out_used;
            e->out_headroom = isnan(e->out_quota) || isnan(e->out_used) ? NAN
                                                                          : e->out_quota - out_used;
            e->out_pct = pct_of(e->out_headroom, e->out_quota);
            e->binding = mantle_binding(e);
        }
        /* fits and what a right-sized max_tokens would free: from the input side */
        e->fits_more = bt_fits_more(head, e->reservation);
        double basis = !isnan(e->out_p99) ? e->out_p99 : 2 * e->avg_output;
        if (!isnan(basis) && basis > 0 && !isnan(e->max_tokens)) {
            double rec = ceil(basis * (1 + cfg->oversize_margin) / 64) * 64;
            e->recommended_max_tokens = rec;
            if (!isnan(head) && !isnan(e->reservation) && e->reservation > 0) {
                double r2 = e->reservation - e->max_tokens + rec;
                double k = r2 / e->reservation;
                double base = e->upper_bound ? bt_nanmax(e->settled, e->estimated)
                                             : e->used - bt_z(e->held);
                double used2 = e->upper_bound ? bt_nanmax(base, e->reserved_per_min * k)
                                              : bt_z(base) + bt_z(e->held) * k;
                e->fits_more_recommended = bt_fits_more(head + e->used - used2, r2);
            }
        }
        e->group_used = used;
        if (mantle && e->binding == BT_SIDE_OUTPUT) {
            /* the route's figures follow the side that binds */
            src = qo;
            quota = e->out_quota;
            head = e->out_headroom;
            e->group_used = out_used;
            e->settled = e->used = e->out_used;
            e->held = 0;
            e->reserved_per_min = NAN;
            e->upper_bound = false;
            if (!isnan(head) && head <= 0)
                e->fits_more = 0;
        }
        e->quota = quota;
        e->quota_source = src ? src->source : BT_QS_UNKNOWN;
        bt_strlcpy(e->quota_code, src ? src->code : "", sizeof e->quota_code);
        e->headroom_tpm = head;
        e->headroom_pct = pct_of(head, quota);
        if (quota == 0)
            e->fits_more = 0; /* no usable quota: nothing fits, whatever is known */

        bt_rules_apply(cfg, rt, e);
    }
}

struct keyed {
    int route;
    bool coded;
    char key[512];
};

static int cmp_keyed(const void *a, const void *b)
{
    const struct keyed *x = a, *y = b;
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
    struct keyed *k = bt_xcalloc((size_t)n, sizeof *k);
    for (int i = 0; i < n; i++)
        up[i] = i;
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < n; i++) {
            const struct bt_route *r = &cfg->routes[i];
            k[i].route = i;
            k[i].coded = route_quota_code(r)[0] != '\0';
            if (pass == 0)
                bt_quota_group_key(r, k[i].key, sizeof k[i].key);
            else
                model_key(r, k[i].key, sizeof k[i].key);
        }
        qsort(k, (size_t)n, sizeof *k, cmp_keyed);
        for (int i = 0; i < n;) {
            int j = i + 1;
            while (j < n && !strcmp(k[j].key, k[i].key))
                j++;
            for (int m = i + 1; m < j; m++)
                if (pass == 0 || !k[m].coded || !k[i].coded)
                    unite(up, k[i].route, k[m].route);
            i = j;
        }
    }
    for (int i = 0; i < n; i++)
        up[i] = find(up, i);
    free(k);
    return up;
}

void bt_eval_all(const struct bt_config *cfg, const struct bt_store *st, int64_t now,
                 struct bt_eval *evals)
{
    int n = cfg->nroutes;
    if (n <= 0)
        return;
    int *group = quota_groups(cfg);
    int *first = bt_xcalloc((size_t)n, sizeof *first); /* members chained by route order */
    int *next = bt_xcalloc((size_t)n, sizeof *next);
    int *members = bt_xcalloc((size_t)n, sizeof *members);
    struct bt_eval **ev = bt_xcalloc((size_t)n, sizeof *ev);
    for (int r = 0; r < n; r++)
        first[r] = -1;
    for (int r = n - 1; r >= 0; r--) {
        bt_eval_route_part(cfg, st, r, now, &evals[r]);
        next[r] = first[group[r]]; /* prepended backwards: each chain in route order */
        first[group[r]] = r;
    }
    for (int g = 0; g < n; g++) {
        if (group[g] != g)
            continue;
        int cnt = 0;
        for (int r = first[g]; r >= 0 && cnt < n; r = next[r]) {
            members[cnt] = r;
            ev[cnt++] = &evals[r];
        }
        eval_group(cfg, ev, members, cnt);
    }
    free(ev);
    free(members);
    free(next);
    free(first);
    free(group);
}

void bt_eval_route(const struct bt_config *cfg, const struct bt_store *st, int r, int64_t now,
                   struct bt_eval *out)
{
    int *group = quota_groups(cfg);
    int n = 0, self = 0;
    int *members = bt_xcalloc((size_t)cfg->nroutes, sizeof *members);
    for (int i = 0; i < cfg->nroutes; i++) {
        if (group[i] == group[r]) {
            if (i == r)
                self = n;
            members[n++] = i;
        }
    }
    struct bt_eval *scratch = bt_xcalloc((size_t)n, sizeof *scratch);
    struct bt_eval **ev = bt_xcalloc((size_t)n, sizeof *ev);
    for (int i = 0; i < n; i++) {
        ev[i] = i == self ? out : &scratch[i];
        bt_eval_route_part(cfg, st, members[i], now, ev[i]);
    }
    eval_group(cfg, ev, members, n);
    free(ev);
    free(scratch);
    free(members);
    free(group);
}
