/* Which series a route's CloudWatch figures are read from (collectors/cw_int.h):
 * exactly the dimension sets ListMetrics lists, summed where there are several. */
#include <stdio.h>
#include <string.h>

#include "collectors/cw_int.h"
#include "collectors/infprofile.h"

void cw_sets_reset(struct cw_sets *s)
{
    memset(s, 0, sizeof *s);
}

static bool same_account(const struct bt_route *rt, const char *account)
{
    return !rt->account[0] || !account || strcmp(rt->account, account) == 0;
}

void cw_sets_note(struct cw_sets *s, const struct bt_route *rt, const struct bt_cw_listed *m)
{
    const char *model = bt_cw_dim(&m->dims, "Model");
    if (!model || strcmp(model, rt->model) != 0 || !same_account(rt, m->account) || m->more_dims)
        return;
    const char *project = bt_cw_dim(&m->dims, "Project");
    if (m->dims.n == 1) {
        s->model_only = true;
        return;
    }
    if (m->dims.n != 2 || !project || strlen(project) >= sizeof s->proj[0])
        return; /* a set bedtop does not read (e.g. per-API): not a token total it sums */
    for (int i = 0; i < s->nproj; i++)
        if (!strcmp(s->proj[i], project))
            return;
    if (s->nproj < BT_CW_MAX_SUM)
        bt_strlcpy(s->proj[s->nproj++], project, sizeof s->proj[0]);
}

static void add_set(struct cw_sets *s, const char *n1, const char *v1, const char *n2,
                    const char *v2)
{
    struct bt_cw_dimset *d = &s->set[s->nset++];
    memset(d, 0, sizeof *d);
    d->name[0] = n1;
    d->value[0] = v1;
    d->n = 1;
    if (n2) {
        d->name[1] = n2;
        d->value[1] = v2;
        d->n = 2;
    }
}

bool cw_sets_apply(struct cw_sets *s, const struct bt_route *rt, struct bt_cw_query *q, int n,
                   char *why, size_t whylen)
{
    s->nset = 0;
    s->key[0] = '\0';
    if (rt->endpoint == BT_EP_MANTLE && s->listed) {
        bool own = false;
        for (int i = 0; rt->project[0] && i < s->nproj; i++)
            own = own || !strcmp(s->proj[i], rt->project);
        if (own) {
            /* the route names its project and that series exists */
            add_set(s, "Model", rt->model, "Project", rt->project);
        } else if (!s->model_only) {
            if (s->nproj == 0) {
                snprintf(why, whylen,
                         "ListMetrics lists no AWS/BedrockMantle series for Model %.120s (neither "
                         "Model nor Model+Project): usage unknown, not idle",
                         rt->model);
                return false;
            }
            for (int i = 0; i < s->nproj; i++)
                add_set(s, "Model", rt->model, "Project", s->proj[i]);
        }
        /* else: per Model, as listed (a project the listing lacks is not filtered) */
    } else if (rt->endpoint == BT_EP_RUNTIME && bt_infprofile_is_arn(rt->model)) {
        /* callers may pass the profile's ARN or its bare ID: both are this route */
        const char *slash = strrchr(rt->model, '/');
        bt_strlcpy(s->bare_id, slash ? slash + 1 : "", sizeof s->bare_id);
        if (s->bare_id[0]) {
            add_set(s, "ModelId", rt->model, NULL, NULL);
            add_set(s, "ModelId", s->bare_id, NULL, NULL);
        }
    }
    for (int i = 0; i < s->nset; i++) {
        size_t l = strlen(s->key);
        snprintf(s->key + l, sizeof s->key - l, "%s%s", i ? "+" : "",
                 s->set[i].n == 2 ? s->set[i].value[1] : s->set[i].value[0]);
    }
    for (int i = 0; i < n; i++) {
        q[i].sum = s->nset ? s->set : NULL;
        q[i].nsum = s->nset;
        q[i].sumkey = s->key;
    }
    return true;
}

int cw_sets_tier_queries(struct cw_sets *s, const struct bt_route *rt, int ri,
                         struct bt_cw_query *out, int max)
{
    static const enum bt_signal tier[] = {BT_SIG_TIER_RES_INVOCATIONS, BT_SIG_TIER_RES_INPUT,
                                          BT_SIG_TIER_RES_OUTPUT};
    if (!s->tier_reserved || rt->endpoint != BT_EP_RUNTIME)
        return 0;
    memset(&s->tier, 0, sizeof s->tier);
    s->tier.name[0] = "ModelId";
    s->tier.value[0] = rt->model;
    s->tier.name[1] = "ResolvedServiceTier";
    s->tier.value[1] = "reserved";
    s->tier.n = 2;
    int n = 0;
    for (size_t i = 0; i < sizeof tier / sizeof tier[0] && n < max; i++) {
        const struct bt_signal_info *si = &bt_signal_info[tier[i]];
        out[n++] = (struct bt_cw_query){.route = ri, .signal = tier[i], .ns = NS_RUNTIME,
                                        .metric = si->metric, .stat = si->stat, .sum = &s->tier,
                                        .nsum = 1, .sumkey = "tier=reserved"};
    }
    return n;
}
