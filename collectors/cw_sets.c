/* Which series a route's CloudWatch figures are read from (collectors/cw_int.h):
 * exactly the dimension sets ListMetrics lists for each signal's own metric, summed
 * where there are several, with no cap on how many. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/cw_int.h"
#include "collectors/infprofile.h"

/* The signals asked in AWS/BedrockMantle, by their place in cw_sets.m. */
static const enum bt_signal mantle_sig[CW_SETS_MANTLE] = {BT_SIG_INVOCATIONS, BT_SIG_INPUT_TOKENS,
                                                          BT_SIG_OUTPUT_TOKENS, BT_SIG_CLIENT_ERRORS};
static const enum bt_signal tier_sig[CW_SETS_TIER] = {BT_SIG_TIER_RES_INVOCATIONS, BT_SIG_TIER_RES_INPUT,
                                                      BT_SIG_TIER_RES_OUTPUT};

static void metric_free(struct cw_metric_sets *m)
{
    free(m->set);
    free(m->dims);
    memset(m, 0, sizeof *m);
}

void cw_sets_reset_mantle(struct cw_sets *s)
{
    for (int i = 0; i < CW_SETS_MANTLE; i++)
        metric_free(&s->m[i]);
    s->listed = false;
}

void cw_sets_reset(struct cw_sets *s)
{
    cw_sets_reset_mantle(s);
    for (int i = 0; i < CW_SETS_TIER; i++)
        metric_free(&s->tier[i]);
    memset(s, 0, sizeof *s);
}

/* Whether m holds nothing (as zeroed): read, not written, so the page of a route that
 * ListMetrics showed nothing for stays the kernel's zero page. */
static bool metric_empty(const struct cw_metric_sets *m)
{
    static const struct cw_metric_sets zero;
    return !memcmp(m, &zero, sizeof zero);
}

void cw_sets_take(struct cw_sets *dst, struct cw_sets *src, bool mantle)
{
    struct cw_metric_sets *d = mantle ? dst->m : dst->tier, *f = mantle ? src->m : src->tier;
    int n = mantle ? CW_SETS_MANTLE : CW_SETS_TIER;
    bool reserved = false;
    for (int i = 0; i < n; i++) {
        /* both empty (most routes: no mantle, no reserved tier) is nothing to move,
         * and writing the zeros again made both arrays resident: at 20,000 routes
         * 18 MB each of check's peak */
        if (metric_empty(&f[i]) && metric_empty(&d[i]))
            continue;
        metric_free(&d[i]);
        d[i] = f[i];
        memset(&f[i], 0, sizeof f[i]);
        reserved |= d[i].nset > 0;
    }
    if (!mantle && dst->tier_reserved != reserved)
        dst->tier_reserved = reserved;
}

static bool same_account(const struct bt_route *rt, const char *account)
{
    return !rt->account[0] || !account || strcmp(rt->account, account) == 0;
}

/* The set's dimensions other than the model's (model_dim), appended once. */
static void add_listed(struct cw_metric_sets *ms, const struct bt_cw_dimset *d, const char *model_dim)
{
    struct cw_set x = {0};
    for (int i = 0; i < d->n; i++) {
        if (!strcmp(d->name[i], model_dim))
            continue;
        if (strlen(d->name[i]) >= sizeof x.name[0] || strlen(d->value[i]) >= sizeof x.value[0])
            return; /* a dimension longer than any bedtop asks: not a set it can name */
        bt_strlcpy(x.name[x.n], d->name[i], sizeof x.name[0]);
        bt_strlcpy(x.value[x.n], d->value[i], sizeof x.value[0]);
        x.n++;
    }
    if (x.n == 0) {
        ms->model_only = true;
        return;
    }
    for (int i = 0; i < ms->nset; i++)
        if (!memcmp(&ms->set[i], &x, sizeof x))
            return;
    if (ms->nset == ms->capset) {
        ms->capset = ms->capset ? ms->capset * 2 : 4;
        ms->set = bt_xrealloc(ms->set, (size_t)ms->capset * sizeof *ms->set);
    }
    ms->set[ms->nset++] = x;
}

void cw_sets_note(struct cw_sets *s, const struct bt_route *rt, const struct bt_cw_listed *m)
{
    const char *model = bt_cw_dim(&m->dims, "Model");
    if (!model || strcmp(model, rt->model) != 0 || !same_account(rt, m->account) || m->more_dims)
        return;
    for (int i = 0; i < CW_SETS_MANTLE; i++) {
        if (strcmp(m->metric, bt_signal_info[mantle_sig[i]].mantle) != 0)
            continue;
        /* Model alone, or Model+Project: the sets of a token total (others, such as
         * per API, are not a total bedtop sums) */
        if (m->dims.n == 1 || (m->dims.n == 2 && bt_cw_dim(&m->dims, "Project")))
            add_listed(&s->m[i], &m->dims, "Model");
    }
}

void cw_sets_note_tier(struct cw_sets *s, const struct bt_route *rt, const struct bt_cw_listed *m)
{
    const char *model = bt_cw_dim(&m->dims, "ModelId");
    const char *tier = bt_cw_dim(&m->dims, "ResolvedServiceTier");
    if (!model || !tier || strcmp(tier, "reserved") != 0 || strcmp(model, rt->model) != 0 ||
        !same_account(rt, m->account) || m->more_dims)
        return;
    for (int i = 0; i < CW_SETS_TIER; i++)
        if (!strcmp(m->metric, bt_signal_info[tier_sig[i]].metric))
            add_listed(&s->tier[i], &m->dims, "ModelId");
    s->tier_reserved = true;
}

void cw_sets_tier_pair(struct cw_sets *s)
{
    struct bt_cw_dimset d = {.n = 2, .name = {"ModelId", "ResolvedServiceTier"},
                             .value = {"", "reserved"}};
    add_listed(&s->tier[0], &d, "ModelId");
    s->tier_reserved = true;
}

/* The sets of ms asked as dimension sets (model_dim = model, then the listed ones);
 * the key names them, for queries of other routes asking the same. */
static void build_dims(struct cw_metric_sets *ms, const char *model_dim, const char *model)
{
    free(ms->dims);
    ms->ndims = ms->nset;
    ms->dims = bt_xcalloc((size_t)(ms->nset ? ms->nset : 1), sizeof *ms->dims);
    uint64_t h = 1469598103934665603ULL;
    for (int i = 0; i < ms->nset; i++) {
        struct bt_cw_dimset *d = &ms->dims[i];
        const struct cw_set *x = &ms->set[i];
        d->name[0] = model_dim;
        d->value[0] = model;
        d->n = 1;
        for (int k = 0; k < x->n && d->n < BT_CW_MAX_DIMS; k++) {
            d->name[d->n] = x->name[k];
            d->value[d->n++] = x->value[k];
            for (const char *p = x->value[k]; *p; p++)
                h = (h ^ (unsigned char)*p) * 1099511628211ULL;
            h = (h ^ 0xff) * 1099511628211ULL;
        }
    }
    snprintf(ms->key, sizeof ms->key, "%d#%016llx", ms->nset, (unsigned long long)h);
}

static void add_prof(struct cw_sets *s, const char *v)
{
    struct bt_cw_dimset *d = &s->prof[s->nprof++];
    memset(d, 0, sizeof *d);
    d->name[0] = "ModelId";
    d->value[0] = v;
    d->n = 1;
}

/* A mantle route's query q: its metric's sets for the route (false: none listed). */
static bool mantle_query(struct cw_sets *s, const struct bt_route *rt, struct bt_cw_query *q)
{
    int i = 0;
    while (i < CW_SETS_MANTLE && mantle_sig[i] != q->signal)
        i++;
    if (i == CW_SETS_MANTLE)
        return false;
    struct cw_metric_sets *ms = &s->m[i];
    q->sum = NULL;
    q->nsum = 0;
    q->sumkey = "";
    if (!s->listed)
        return true; /* no listing yet (ListMetrics failed, never answered): by Model */
    if (rt->project[0]) {
        /* the route's own project, where that series exists; where other projects'
         * are listed and not its own: unknown (their sum is not this route's, and
         * its group would count them twice); no project listed at all: the Model's
         * series is the only one there is */
        for (int k = 0; k < ms->ndims; k++) {
            const char *p = bt_cw_dim(&ms->dims[k], "Project");
            if (p && ms->dims[k].n == 2 && !strcmp(p, rt->project)) {
                q->sum = &ms->dims[k];
                q->nsum = 1;
                q->sumkey = p;
                return true;
            }
        }
        return ms->model_only && ms->ndims == 0;
    }
    if (ms->model_only)
        return true; /* per Model, as listed */
    if (!ms->ndims)
        return false;
    q->sum = ms->dims; /* every listed project, summed */
    q->nsum = ms->ndims;
    q->sumkey = ms->key;
    return true;
}

int cw_sets_apply(struct cw_sets *s, const struct bt_route *rt, struct bt_cw_query *q, int n,
                  char *why, size_t whylen)
{
    /* only what changes is written (a route with neither a profile nor mantle sets
     * leaves its cw_sets untouched: cw_sets_take) */
    if (s->nprof)
        s->nprof = 0;
    if (s->key[0])
        s->key[0] = '\0';
    if (rt->endpoint == BT_EP_MANTLE) {
        for (int i = 0; i < CW_SETS_MANTLE; i++)
            build_dims(&s->m[i], "Model", rt->model);
        int kept = 0;
        for (int i = 0; i < n; i++)
            if (mantle_query(s, rt, &q[i]))
                q[kept++] = q[i];
        if (kept == 0 && n > 0) {
            if (rt->project[0])
                snprintf(why, whylen,
                         "ListMetrics lists no AWS/BedrockMantle series for Model %.100s and "
                         "Project %.60s: usage unknown, not idle", rt->model, rt->project);
            else
                snprintf(why, whylen,
                         "ListMetrics lists no AWS/BedrockMantle series for Model %.120s (neither "
                         "Model nor Model+Project): usage unknown, not idle", rt->model);
        }
        return kept;
    }
    if (rt->endpoint == BT_EP_RUNTIME && bt_infprofile_is_arn(rt->model)) {
        /* callers may pass the profile's ARN or its bare ID: both are this route */
        const char *slash = strrchr(rt->model, '/');
        bt_strlcpy(s->bare_id, slash ? slash + 1 : "", sizeof s->bare_id);
        if (s->bare_id[0]) {
            add_prof(s, rt->model);
            add_prof(s, s->bare_id);
            bt_strlcpy(s->key, s->bare_id, sizeof s->key); /* the ID names the profile */
        }
    }
    for (int i = 0; i < n; i++) {
        q[i].sum = s->nprof ? s->prof : NULL;
        q[i].nsum = s->nprof;
        q[i].sumkey = s->key;
    }
    return n;
}

int cw_sets_tier_queries(struct cw_sets *s, const struct bt_route *rt, int ri,
                         struct bt_cw_query *out, int max)
{
    if (!s->tier_reserved || rt->endpoint != BT_EP_RUNTIME)
        return 0;
    /* a tier metric with no sets of its own listed (check lists only Invocations'):
     * the Invocations sets, which are the same tier's */
    for (int i = 0; i < CW_SETS_TIER; i++)
        build_dims(&s->tier[i], "ModelId", rt->model);
    int n = 0;
    for (int i = 0; i < CW_SETS_TIER && n < max; i++) {
        const struct cw_metric_sets *ms = s->tier[i].ndims ? &s->tier[i] : &s->tier[0];
        if (!ms->ndims)
            continue;
        const struct bt_signal_info *si = &bt_signal_info[tier_sig[i]];
        out[n++] = (struct bt_cw_query){.route = ri, .signal = tier_sig[i], .ns = NS_RUNTIME,
                                        .metric = si->metric, .stat = si->stat, .sum = ms->dims,
                                        .nsum = ms->ndims, .sumkey = ms->key};
    }
    return n;
}
