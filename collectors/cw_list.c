/* CloudWatch ListMetrics: which cache-metric spelling a route's account publishes,
 * whether it lists LegacyModelInvocations, and (AWS/BedrockMantle) the dimension sets
 * that carry each mantle model; then the collector's poll (cw->listed: this file
 * calls nothing of cw_collect.c's). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collectors/cw_int.h"
#include "collectors/infprofile.h"

/* --- ListMetrics: which cache-metric spelling exists --- */

/* AWS/Bedrock: the cache-metric spelling, LegacyModelInvocations, and whether the
 * reserved service tier is listed for the model (ResolvedServiceTier=reserved). */
static void on_metric(void *arg, const struct bt_cw_listed *m)
{
    struct cw_group *g = arg;
    struct cw *cw = g->cw;
    const char *model = bt_cw_dim(&m->dims, "ModelId"), *metric = m->metric;
    const char *account = m->account, *tier = bt_cw_dim(&m->dims, "ResolvedServiceTier");
    if (!model)
        return;
    if (tier) {
        /* any listed set with ResolvedServiceTier=reserved (AWS names ModelId,
         * ServiceTier and ResolvedServiceTier together): summed over the others */
        for (int i = bt_strmap_get(&g->by_model, model); i >= 0; i = g->model_next[i]) {
            int r = g->ag->routes[i];
            const struct bt_route *rt = &cw->ctx->cfg->routes[r];
            if (rt->endpoint != BT_EP_RUNTIME ||
                (rt->account[0] && account && strcmp(rt->account, account) != 0))
                continue;
            cw_sets_note_tier(&cw->listing[r], rt, m);
            if (cw->listing[r].tier_reserved)
                cw->seen[r] |= SEEN_TIER;
        }
        return;
    }
    if (m->dims.n != 1)
        return; /* the spelling and the legacy count are read from the ModelId series */
    unsigned bit = strcmp(metric, bt_signal_info[BT_SIG_CACHE_READ].metric) == 0 ? SEEN_READ
                   : strcmp(metric, ALT_READ) == 0                               ? SEEN_READ_ALT
                   : strcmp(metric, bt_signal_info[BT_SIG_CACHE_WRITE].metric) == 0 ? SEEN_WRITE
                   : strcmp(metric, ALT_WRITE) == 0 ? SEEN_WRITE_ALT
                   : strcmp(metric, "LegacyModelInvocations") == 0 ? SEEN_LEGACY
                                                                   : 0;
    if (!bit)
        return;
    for (int i = bt_strmap_get(&g->by_model, model); i >= 0; i = g->model_next[i]) {
        int r = g->ag->routes[i];
        const struct bt_route *rt = &cw->ctx->cfg->routes[r];
        /* a route of a source account takes only that account's metrics */
        if (!rt->account[0] || !account || strcmp(rt->account, account) == 0)
            cw->seen[r] |= bit;
    }
}

/* The group's routes by model, in the group's order (each chain keeps it). */
static void index_models(struct cw_group *g)
{
    const struct bt_route *routes = g->cw->ctx->cfg->routes;
    int n = g->ag->nroutes;
    bt_strmap_free(&g->by_model);
    free(g->model_next);
    bt_strmap_init(&g->by_model, (size_t)n);
    g->model_next = bt_xcalloc((size_t)(n ? n : 1), sizeof *g->model_next);
    for (int i = n - 1; i >= 0; i--) { /* from the end: each head is the first */
        int *head = bt_strmap_put(&g->by_model, routes[g->ag->routes[i]].model);
        g->model_next[i] = *head;
        *head = i;
    }
}

void cw_list_free(struct cw_group *g)
{
    bt_strmap_free(&g->by_model);
    free(g->model_next);
    g->model_next = NULL;
}

/* ListMetrics lists LegacyModelInvocations for the route's model: an event, so a
 * replay shows LEGACY_MODEL where the live screen did. */
static void legacy_event(struct cw *cw, int r)
{
    struct bt_event ev = {.t = (int64_t)time(NULL), .type = BT_EV_INFO, .route = r,
                          .source = BT_SRC_CLOUDWATCH};
    bt_strlcpy(ev.code, BT_EVCODE_LEGACY_MODEL, sizeof ev.code);
    bt_fmt_cut(ev.text, sizeof ev.text, "ListMetrics lists LegacyModelInvocations for %s",
               cw->ctx->cfg->routes[r].model);
    if (cw->ctx->store)
        bt_store_apply(cw->ctx->store, &ev);
}

/* ListMetrics in AWS/BedrockMantle: the dimension sets that carry each route's model. */
static void on_mantle_metric(void *arg, const struct bt_cw_listed *m)
{
    struct cw_group *g = arg;
    struct cw *cw = g->cw;
    for (int i = 0; i < g->ag->nroutes; i++) {
        int r = g->ag->routes[i];
        const struct bt_route *rt = &cw->ctx->cfg->routes[r];
        if (rt->endpoint == BT_EP_MANTLE)
            cw_sets_note(&cw->listing[r], rt, m);
    }
}

/* check without a state file lists in AWS/Bedrock only the reserved tier's series */
static bool tier_only(const struct cw *cw)
{
    return cw->ctx->mode == BT_MODE_ONCE && !cw->resumed;
}

static void list_finish(struct cw_group *g)
{
    struct cw *cw = g->cw;
    g->listing = false;
    g->listed = true;
    bool ok = g->list_ok[0] || cw->ctx->mode == BT_MODE_ONCE;
    ok = ok && (!g->has_mantle || g->list_ok[1]);
    g->listed_at = ok ? g->poll_now : g->poll_now - LIST_EVERY + LIST_RETRY;
    for (int i = 0; i < g->ag->nroutes; i++) {
        int r = g->ag->routes[i];
        /* a failed mantle listing keeps the sets of the last good one (none: by Model) */
        if (g->list_ok[1] && cw->ctx->cfg->routes[r].endpoint == BT_EP_MANTLE) {
            cw_sets_take(&cw->sets[r], &cw->listing[r], true);
            cw->sets[r].listed = true;
        }
        if (!g->list_ok[0])
            continue;
        cw_sets_take(&cw->sets[r], &cw->listing[r], false); /* the reserved tier's sets */
        if (tier_only(cw))
            continue; /* it tells the reserved tier's series, nothing of the cache
                       * spellings: both stay asked */
        cw->listed_at[r] = g->poll_now;
        cw_apply_seen(cw, r);
        if ((cw->seen[r] & SEEN_LEGACY) && !cw->ctx->cfg->routes[r].legacy_seen)
            legacy_event(cw, r);
    }
    cw->listed(g, g->poll_now);
}

void cw_apply_seen(struct cw *cw, int r)
{
    /* the table's spelling unless only the other one exists */
    cw->spell[r].both = false;
    cw->spell[r].cache_read =
        (cw->seen[r] & (SEEN_READ | SEEN_READ_ALT)) == SEEN_READ_ALT ? ALT_READ : NULL;
    cw->spell[r].cache_write =
        (cw->seen[r] & (SEEN_WRITE | SEEN_WRITE_ALT)) == SEEN_WRITE_ALT ? ALT_WRITE : NULL;
    /* cache metrics only where listed; an application profile may be listed under
     * its bare ID, which this listing does not match: asked as before */
    bool arn = bt_infprofile_is_arn(cw->ctx->cfg->routes[r].model);
    cw->spell[r].no_read = !arn && !(cw->seen[r] & (SEEN_READ | SEEN_READ_ALT));
    cw->spell[r].no_write = !arn && !(cw->seen[r] & (SEEN_WRITE | SEEN_WRITE_ALT));
    /* a state file says the tier is listed but not under which sets: the pair */
    if ((cw->seen[r] & SEEN_TIER) && !cw->sets[r].tier_reserved)
        cw_sets_tier_pair(&cw->sets[r]);
}

static void list_start(struct cw_group *g);

/* The phase is over (ok or not): the mantle listing next, if the group needs it. */
static void phase_end(struct cw_group *g, bool ok)
{
    g->list_ok[g->list_phase] = ok;
    if (g->list_phase == 0 && g->has_mantle) {
        g->list_phase = 1;
        for (int i = 0; i < g->ag->nroutes; i++)
            cw_sets_reset_mantle(&g->cw->listing[g->ag->routes[i]]);
        list_start(g);
        return;
    }
    list_finish(g);
}

static bool list_read(void *arg, const struct bt_http_resp *resp, char **next, char *err,
                      size_t errlen)
{
    struct cw_group *g = arg;
    return g->list_phase == 0
               ? bt_cloudwatch_parse_list_sets(resp->body, resp->body_len, on_metric, g, next,
                                               err, errlen)
               : bt_cloudwatch_parse_list_sets(resp->body, resp->body_len, on_mantle_metric, g,
                                               next, err, errlen);
}

/* A listing that does not end keeps what its pages showed. */
static void list_end(void *arg, enum bt_pages_end how, const struct bt_http_resp *resp,
                     const char *err)
{
    struct cw_group *g = arg;
    char why[224];
    if (how == BT_PAGES_HTTP || how == BT_PAGES_PARSE) {
        if (how == BT_PAGES_HTTP)
            bt_awsgroup_describe(resp, why, sizeof why);
        if (g->cw->ctx->verbose)
            fprintf(stderr, "bedtop: %s ListMetrics: %s\n", g->label,
                    how == BT_PAGES_HTTP ? why : err);
        phase_end(g, false);
        return;
    }
    phase_end(g, true);
}

/* ListMetrics reaches source accounts (IncludeLinkedAccounts) when a route names
 * one, and asks only that account (OwningAccount) when every route names the same. */
static void list_submit(void *arg, const char *token, bt_http_cb done, void *done_arg)
{
    struct cw_group *g = arg;
    const char *owner = g->list_owner[0] ? g->list_owner : NULL;
    struct bt_buf body = {0};
    if (g->list_phase == 1)
        bt_cloudwatch_list_json_ns(&body, NS_MANTLE, "Model", token, g->list_linked,
                                   owner);
    else if (tier_only(g->cw))
        bt_cloudwatch_list_tier_json(&body, token, g->list_linked, owner);
    else
        bt_cloudwatch_list_json(&body, token, g->list_linked, owner);
    cw_submit(g, "ListMetrics", &body, NULL, NULL, done, done_arg);
    bt_buf_free(&body);
}

static const struct bt_pages_ops list_ops = {list_submit, list_read, list_end};

static void list_start(struct cw_group *g)
{
    /* the scope of every page of this listing (list_submit) */
    const struct bt_route *routes = g->cw->ctx->cfg->routes;
    const char *owner = NULL;
    bool linked = false, one = true;
    for (int i = 0; i < g->ag->nroutes; i++) {
        const char *a = routes[g->ag->routes[i]].account;
        linked = linked || a[0];
        if (i == 0)
            owner = a;
        else if (one && strcmp(owner, a) != 0)
            one = false;
    }
    g->list_linked = linked;
    bt_strlcpy(g->list_owner, linked && one ? owner : "", sizeof g->list_owner);
    bt_pages_start(&g->list, &list_ops, g, MAX_PAGES);
}

/* phase 0: AWS/Bedrock then (mantle routes) AWS/BedrockMantle; phase 1: only the
 * mantle listing. Check mode lists in AWS/Bedrock only the reserved tier's series
 * (it asks both cache spellings instead; with a state file it lists in full, to learn
 * the spellings for the runs after it), and in AWS/BedrockMantle the dimension
 * sets that decide what is asked. */
void cw_start_list(struct cw_group *g, int64_t now, int phase)
{
    if (phase == 0)
        index_models(g); /* the group's routes may have changed since (a reload) */
    for (int i = 0; phase == 0 && i < g->ag->nroutes; i++) {
        g->cw->seen[g->ag->routes[i]] = 0; /* phase 1 keeps the AWS/Bedrock listing's */
        cw_sets_reset(&g->cw->listing[g->ag->routes[i]]);
    }
    g->listing = true;
    g->list_phase = phase;
    g->list_ok[0] = g->list_ok[1] = false;
    g->poll_now = now;
    for (int i = 0; phase == 1 && i < g->ag->nroutes; i++)
        cw_sets_reset_mantle(&g->cw->listing[g->ag->routes[i]]);
    list_start(g);
}

