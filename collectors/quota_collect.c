#include "collectors/quotas.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collectors/awsgroup.h"
#include "net/http.h"
#include "collectors/infprofile.h"
#include "collectors/paginate.h"
#include "collectors/skeleton.h"
#include "core/burndown.h"
#include "core/json.h"
#include "io/file.h"

#define MAX_TOKEN_LEN 4096   /* bound on a NextToken we echo back */
#define MAX_QUOTAS 20000     /* bound on quotas kept from one listing */

/* ---- the collector -------------------------------------------------------
 * Per (profile, Region) group of routes: GetInferenceProfile for each
 * application-inference-profile route not resolved in the last 6 hours (its base
 * model and inference type), alongside ListServiceQuotas pages until no
 * NextToken; when both are in, match and emit; then, only if a route still has
 * no quota, ListAWSDefaultServiceQuotas the same way for the published
 * defaults. Every 6 hours (5 minutes after a failure); once in check mode. */

#define SQ_TARGET "ServiceQuotasV20190624."
#define SQ_CTYPE "application/x-amz-json-1.1"
#define SQ_RETRY 300
#define SQ_MAX_PAGES 500

struct sq;

struct sq_group {
    struct sq *sq;
    struct bt_awsgroup *ag;
    char label[96];          /* "quotas us-east-1" */
    struct bt_sq_list list;
    struct bt_pages pages;   /* the listing's pages */
    bool busy, defaults;     /* defaults: the fallback listing is running */
    bool listed;             /* the account listing is complete */
    int profiles_out;        /* GetInferenceProfile requests not answered yet */
    bool *need;              /* per route of the group: still without a quota */
};

/* Per route: the GetInferenceProfile answer (application inference profiles). */
struct sq_profile {
    struct sq_group *g;
    int route;
    int64_t resolved_at;     /* 0: never */
    char error[224];         /* why the last lookup failed, "" none */
};

struct sq {
    struct bt_collector_base b; /* first: the skeleton's (next, started, failed, the groups) */
    struct bt_ctx *ctx;
    struct sq_group *g;
    int ng;
    struct bt_quota_table table;
    char table_error[256];
    struct sq_profile *prof; /* per route */
    unsigned long requests;
};

static void sq_event(struct sq *sq, const struct bt_event *ev)
{
    if (sq->ctx->store)
        bt_store_apply(sq->ctx->store, ev);
}

static void sq_status(struct sq_group *g, enum bt_event_type type, const char *text)
{
    for (int i = 0; i < g->ag->nroutes; i++) {
        struct bt_event ev = {.t = (int64_t)time(NULL), .type = type, .route = g->ag->routes[i],
                              .source = BT_SRC_QUOTAS};
        bt_strlcpy(ev.text, text ? text : "", sizeof ev.text);
        sq_event(g->sq, &ev);
    }
}

/* Why route r has no quota of kind k: kept as the quota's name while it is unknown. */
static void quota_unknown(struct sq *sq, int r, enum bt_quota_kind k, const char *why)
{
    struct bt_event ev = {.t = (int64_t)time(NULL), .type = BT_EV_QUOTA, .route = r,
                          .source = BT_SRC_QUOTAS, .quota_kind = k, .value = NAN,
                          .quota_source = BT_QS_UNKNOWN};
    bt_strlcpy(ev.text, why, sizeof ev.text);
    sq_event(sq, &ev);
}

/* The quotas that bind a route (TPM; mantle: input and output): does it have
 * them all, from the account or config? Provisioned capacity has none to find. */
static bool has_binding_quotas(const struct bt_route *rt, bool defaults_ok)
{
    if (rt->endpoint == BT_EP_RUNTIME && rt->inference == BT_INF_PROVISIONED)
        return true;
    if (rt->endpoint == BT_EP_RUNTIME && !isnan(rt->quota[BT_Q_INPUT_TPM].value) &&
        !isnan(rt->quota[BT_Q_OUTPUT_TPM].value) &&
        (defaults_ok || (rt->quota[BT_Q_INPUT_TPM].source != BT_QS_DEFAULT &&
                         rt->quota[BT_Q_OUTPUT_TPM].source != BT_QS_DEFAULT)))
        return true; /* split input/output quotas: two sides, no combined one */
    enum bt_quota_kind a = rt->endpoint == BT_EP_MANTLE ? BT_Q_INPUT_TPM : BT_Q_TPM;
    enum bt_quota_kind b = rt->endpoint == BT_EP_MANTLE ? BT_Q_OUTPUT_TPM : BT_Q_TPM;
    const struct bt_quota *qa = &rt->quota[a], *qb = &rt->quota[b];
    return !isnan(qa->value) && !isnan(qb->value) &&
           (defaults_ok || (qa->source != BT_QS_DEFAULT && qb->source != BT_QS_DEFAULT));
}

/* An application-profile route whose model is not known (the lookup failed and
 * no earlier answer is cached): no quota name can be matched. */
static bool profile_unresolved(const struct sq *sq, int r)
{
    return sq->prof[r].error[0] && !sq->ctx->cfg->routes[r].base_model[0];
}

/* Emits what the list says for route r (only kinds it lacks when only_missing). */
static void emit_route(struct sq_group *g, struct bt_quota_index *ix, int r,
                       enum bt_quota_source src, bool only_missing)
{
    struct sq *sq = g->sq;
    const struct bt_route *rt = &sq->ctx->cfg->routes[r];
    const enum bt_quota_kind *kinds;
    size_t nk = bt_quotas_route_kinds(rt, &kinds);
    if (nk && profile_unresolved(sq, r)) {
        /* the profile's model is not known: no name can be matched */
        quota_unknown(sq, r, kinds[0], sq->prof[r].error);
        return;
    }
    int rpm = -1;
    bool tpm = false;
    for (size_t k = 0; k < nk; k++) {
        const struct bt_quota *have = &rt->quota[kinds[k]];
        if (only_missing && !isnan(have->value) && have->source != BT_QS_DEFAULT)
            continue;
        char why[224];
        enum bt_quota_match by;
        int i = bt_quota_index_match(ix, rt, kinds[k], &by, why, sizeof why);
        if (i == -2) {
            quota_unknown(sq, r, kinds[k], why);
            continue;
        }
        if (i < 0)
            continue;
        tpm = tpm || kinds[k] == BT_Q_TPM || kinds[k] == BT_Q_INPUT_TPM; /* split sides bind */
        if (kinds[k] == BT_Q_RPM)
            rpm = i;
        struct bt_event ev = {.t = (int64_t)time(NULL), .type = BT_EV_QUOTA, .route = r,
                              .source = BT_SRC_QUOTAS, .quota_kind = kinds[k],
                              .value = bt_quotas_effective_value(rt, kinds[k], &g->list.q[i]),
                              .quota_source = src, .matched_by = by,
                              .adjustable = g->list.q[i].adjustable};
        bt_strlcpy(ev.code, g->list.q[i].code, sizeof ev.code);
        bt_strlcpy(ev.text, g->list.q[i].name, sizeof ev.text);
        sq_event(sq, &ev);
    }
    if (!tpm && rt->endpoint == BT_EP_RUNTIME && nk && rt->context[0] && !rt->quota_code[0]) {
        char why[224];
        snprintf(why, sizeof why,
                 "%s lists no %s-context tokens-per-minute quota for this model (context = %s)",
                 src == BT_QS_DEFAULT ? "AWS's defaults list" : "the account", rt->context,
                 rt->context);
        quota_unknown(sq, r, BT_Q_TPM, why);
    } else if (rpm >= 0 && !tpm) {
        char why[224];
        snprintf(why, sizeof why,
                 "%s lists only a requests-per-minute quota for this model (%s = %g), no "
                 "tokens-per-minute quota",
                 src == BT_QS_DEFAULT ? "AWS's defaults list" : "the account", g->list.q[rpm].code,
                 g->list.q[rpm].value);
        quota_unknown(sq, r, BT_Q_TPM, why);
    }
}

/* A mantle route that neither the account nor AWS's defaults give a quota: AWS
 * publishes mantle quotas for some models only and governs the others by internal
 * service capacity. Information, not a missing setting (core/headroom.c reads the
 * text's BT_MANTLE_NO_QUOTA start). */
static void mantle_unpublished(struct sq *sq, int r)
{
    const struct bt_route *rt = &sq->ctx->cfg->routes[r];
    static const enum bt_quota_kind side[] = {BT_Q_INPUT_TPM, BT_Q_OUTPUT_TPM};
    for (size_t k = 0; k < BT_ARRAY_LEN(side); k++) {
        if (!isnan(rt->quota[side[k]].value))
            continue;
        char why[224];
        snprintf(why, sizeof why,
                 BT_MANTLE_NO_QUOTA ": Service Quotas lists no bedrock-mantle %s-tokens quota for "
                 "%.80s; an increase goes through AWS Support",
                 side[k] == BT_Q_INPUT_TPM ? "input" : "output", bt_quotas_route_model(rt));
        quota_unknown(sq, r, side[k], why);
    }
}

static void sq_list(struct sq_group *g);

static void group_end(struct sq_group *g, const char *error)
{
    bt_pages_free(&g->pages);
    bt_sq_list_free(&g->list);
    g->busy = false;
    g->defaults = false;
    g->listed = false;
    if (error) {
        g->sq->b.failed = true;
        sq_status(g, BT_EV_ERROR, error);
    } else {
        sq_status(g, BT_EV_OK, NULL);
    }
}

/* Both the listing and the profile lookups are in: match. */
static void listing_complete(struct sq_group *g)
{
    struct sq *sq = g->sq;
    const struct bt_route *routes = sq->ctx->cfg->routes;
    if (!g->listed || g->profiles_out > 0)
        return;
    /* one index per listing: matching costs O(routes + quotas) */
    struct bt_quota_index *ix = bt_quota_index_build(&g->list, &sq->table);
    if (!g->defaults) {
        bool any = false;
        for (int i = 0; i < g->ag->nroutes; i++) {
            int r = g->ag->routes[i];
            emit_route(g, ix, r, BT_QS_SERVICE_QUOTAS, false);
            g->need[i] = !profile_unresolved(sq, r) && !has_binding_quotas(&routes[r], false);
            any = any || g->need[i];
        }
        bt_quota_index_free(ix);
        if (!any) {
            group_end(g, NULL);
            return;
        }
        /* the published defaults, for routes the account list did not cover */
        bt_sq_list_free(&g->list);
        g->defaults = true;
        g->listed = false;
        sq_list(g);
        return;
    }
    for (int i = 0; i < g->ag->nroutes; i++) {
        int r = g->ag->routes[i];
        if (!g->need[i])
            continue;
        emit_route(g, ix, r, BT_QS_DEFAULT, true);
        if (routes[r].endpoint == BT_EP_MANTLE)
            mantle_unpublished(sq, r);
    }
    bt_quota_index_free(ix);
    group_end(g, NULL);
}

static const char *sq_op(const struct sq_group *g)
{
    return g->defaults ? "ListAWSDefaultServiceQuotas" : "ListServiceQuotas";
}

static bool sq_page(void *arg, const struct bt_http_resp *resp, char **next, char *err,
                    size_t errlen)
{
    struct sq_group *g = arg;
    return bt_quotas_parse_page(resp->body, resp->body_len, &g->list, next, err, errlen);
}

static void sq_end(void *arg, enum bt_pages_end how, const struct bt_http_resp *resp,
                   const char *err)
{
    struct sq_group *g = arg;
    const char *op = sq_op(g);
    char why[224], text[224];
    switch (how) {
    case BT_PAGES_DONE:
        g->listed = true;
        listing_complete(g);
        return;
    case BT_PAGES_RUNAWAY:
        snprintf(text, sizeof text, "%s: %s pagination does not end", g->label, op);
        break;
    case BT_PAGES_HTTP:
        bt_awsgroup_describe(resp, why, sizeof why);
        bt_fmt_cut(text, sizeof text, "%s: %s: %s", g->label, op, why);
        break;
    case BT_PAGES_PARSE:
    default:
        bt_fmt_cut(text, sizeof text, "%s: %s: %s (%s)", g->label, op, err,
                   resp->url ? resp->url : "");
        break;
    }
    group_end(g, text);
}

static void sq_submit(void *arg, const char *token, bt_http_cb done, void *done_arg)
{
    struct sq_group *g = arg;
    struct sq *sq = g->sq;
    struct bt_buf body = {0};
    bt_quotas_request_json(&body, token);
    sq->requests++;
    bt_awsgroup_submit(&sq->b.ag, g->ag, sq->ctx->http, "servicequotas", SQ_TARGET, SQ_CTYPE,
                       g->label, sq_op(g), &body, NULL, NULL, done, done_arg);
    bt_buf_free(&body);
}

static const struct bt_pages_ops sq_pages = {sq_submit, sq_page, sq_end};

/* ListServiceQuotas (or the defaults) from the first page */
static void sq_list(struct sq_group *g)
{
    bt_pages_start(&g->pages, &sq_pages, g, SQ_MAX_PAGES);
}

/* --- GetInferenceProfile --- */

/* A resolved profile sets the route's base model, and with it the burndown and
 * (unless the config says) the inference type. */
static void profile_apply(struct sq *sq, int r, const struct bt_infprofile *ip, int64_t cached_at)
{
    const struct bt_config *cfg = sq->ctx->cfg;
    const struct bt_route *rt = &cfg->routes[r];
    char when[32] = "", why[64 + 16 + sizeof when]; /* the words, the count and the time whole */
    if (cached_at)
        bt_fmt_iso(cached_at, when, sizeof when);
    snprintf(why, sizeof why, "application inference profile in %d Region%s; GetInferenceProfile%s%s",
             ip->nregions, ip->nregions == 1 ? "" : "s", cached_at ? " at " : "", when);
    /* typed settings, applied by the model, as a replay of the recording will */
    struct bt_event ev = {.t = (int64_t)time(NULL), .type = BT_EV_SETTING, .route = r,
                          .source = BT_SRC_QUOTAS, .setting = BT_SET_BASE_MODEL};
    bt_strlcpy(ev.str, ip->base_model, sizeof ev.str);
    bt_strlcpy(ev.text, why, sizeof ev.text);
    sq_event(sq, &ev);
    if (!rt->inference_set) {
        ev.setting = BT_SET_INFERENCE;
        bt_strlcpy(ev.str, bt_inference_name(ip->inference), sizeof ev.str);
        sq_event(sq, &ev);
    }
    if (strcmp(rt->burndown_source, "config") != 0 && rt->endpoint == BT_EP_RUNTIME) {
        /* the base model's row of the table, scoped to the route's endpoint; the event's
         * text names the row, as BURNDOWN_MISMATCH will */
        struct bt_route probe = *rt;
        bt_strlcpy(probe.base_model, ip->base_model, sizeof probe.base_model);
        bt_route_burndown(&probe, &cfg->burndown);
        ev.setting = BT_SET_BURNDOWN;
        ev.value = probe.burndown;
        bt_strlcpy(ev.str, probe.burndown_source, sizeof ev.str);
        bt_strlcpy(ev.text, probe.burndown_row, sizeof ev.text);
        sq_event(sq, &ev);
    }
}

static void profile_done(void *arg, const struct bt_http_resp *resp)
{
    struct sq_profile *p = arg;
    struct sq_group *g = p->g;
    struct sq *sq = g->sq;
    char why[200];
    struct bt_infprofile ip;
    if (resp->status != 200) {
        bt_awsgroup_describe(resp, why, sizeof why);
        bt_fmt_cut(p->error, sizeof p->error,
                   "GetInferenceProfile failed: %s; set base_model or allow bedrock:GetInferenceProfile",
                   why);
    } else if (!bt_infprofile_parse(resp->body, resp->body_len, &ip, why, sizeof why)) {
        bt_fmt_cut(p->error, sizeof p->error, "GetInferenceProfile: %s; set base_model", why);
    } else {
        p->error[0] = '\0';
        p->resolved_at = g->sq->b.next - BT_SQ_REFRESH;
        profile_apply(sq, p->route, &ip, 0);
        bt_infprofile_cache_put(sq->ctx->cfg->routes[p->route].model, &ip, p->resolved_at);
    }
    if (p->error[0])
        sq->b.failed = true;
    g->profiles_out--;
    listing_complete(g);
}

static void profile_submit(struct sq_group *g, int r)
{
    struct sq *sq = g->sq;
    struct sq_profile *p = &sq->prof[r];
    const struct bt_route *rt = &sq->ctx->cfg->routes[r];
    char region[32], path[640], base[512], url[sizeof base + sizeof path], label[160];
    bt_infprofile_arn_region(rt->model, region, sizeof region);
    if (!region[0])
        bt_strlcpy(region, g->ag->region, sizeof region);
    struct bt_aws_profile_opts o = sq->b.ag.prov[g->ag->provider].opts;
    o.region = region;
    if (bt_aws_endpoint(&o, "bedrock", region, base, sizeof base) != 0) {
        snprintf(p->error, sizeof p->error, "GetInferenceProfile: no bedrock endpoint for Region %s",
                 region);
        return;
    }
    bt_infprofile_path(rt->model, path, sizeof path);
    snprintf(url, sizeof url, "%s%s", base, path);
    snprintf(label, sizeof label, "bedrock %s GetInferenceProfile", region);
    struct bt_http_req req = {
        .policy = &bt_aws_policy,
        .method = "GET", .url = url, .service = "bedrock", .region = region,
        .creds = &sq->b.ag.prov[g->ag->provider].p, .label = label,
        .timeout = bt_awsgroup_timeout(),
    };
    p->g = g;
    p->route = r;
    g->profiles_out++;
    sq->requests++;
    bt_http_submit(sq->ctx->http, &req, profile_done, p);
}

/* Application-profile routes of the group whose answer is missing or old. */
static void profiles_start(struct sq_group *g, int64_t now)
{
    struct sq *sq = g->sq;
    for (int i = 0; i < g->ag->nroutes; i++) {
        int r = g->ag->routes[i];
        const struct bt_route *rt = &sq->ctx->cfg->routes[r];
        struct sq_profile *p = &sq->prof[r];
        if (!bt_infprofile_is_arn(rt->model) || (rt->base_model[0] && !p->resolved_at))
            continue; /* not a profile, or base_model from the config */
        if (p->resolved_at && now - p->resolved_at < BT_INFPROFILE_REFRESH)
            continue;
        p->error[0] = '\0';
        struct bt_infprofile ip;
        int64_t at;
        if (!p->resolved_at && bt_infprofile_cache_get(rt->model, now, &ip, &at)) {
            /* resolved by an earlier run within the last hours */
            p->resolved_at = at;
            profile_apply(sq, r, &ip, at);
            continue;
        }
        profile_submit(g, r);
    }
}

static void sq_free_group(void *group)
{
    struct sq_group *g = group;
    bt_pages_free(&g->pages);
    free(g->need);
    bt_sq_list_free(&g->list);
}

static void sq_free(void *self)
{
    struct sq *sq = self;
    bt_quota_table_free(&sq->table);
    free(sq->prof);
}

static const struct bt_collector_kind sq_kind = {
    .service = "servicequotas", .label = "quotas",
    BT_COLLECTOR_GROUPS(struct sq_group, ag, label, busy),
    .free_group = sq_free_group, .free_self = sq_free,
};

static void *sq_create(struct bt_ctx *ctx)
{
    if (!ctx->http || ctx->cfg->nroutes == 0)
        return NULL;
    struct sq *sq = bt_xcalloc(1, sizeof *sq);
    sq->ctx = ctx;
    if (!bt_quota_table_load_default(&sq->table, sq->table_error, sizeof sq->table_error))
        bt_err("quota names: %s; quotas cannot be matched by name (set quota_code or quota_tpm)",
               sq->table_error);
    sq->prof = bt_xcalloc((size_t)ctx->cfg->nroutes, sizeof *sq->prof);
    sq->g = bt_collector_base_init(&sq->b, &sq_kind, ctx);
    sq->ng = sq->b.ngroups;
    for (int i = 0; i < sq->ng; i++) {
        struct sq_group *g = &sq->g[i];
        g->sq = sq;
        g->need = bt_xcalloc((size_t)g->ag->nroutes, sizeof *g->need);
    }
    return sq;
}

static void sq_tick(void *self, int64_t now)
{
    struct sq *sq = self;
    if (sq->ctx->mode == BT_MODE_ONCE && sq->b.started)
        return;
    sq->b.started = true;
    sq->b.failed = false;
    sq->b.next = now + BT_SQ_REFRESH;
    sq->b.retry_at = now + SQ_RETRY;
    for (int i = 0; i < sq->ng; i++) {
        struct sq_group *g = &sq->g[i];
        if (g->busy)
            continue;
        if (!g->ag->url[0]) {
            char text[224];
            bt_fmt_cut(text, sizeof text, "%s: %s", g->label, g->ag->error);
            sq_status(g, BT_EV_ERROR, text);
            sq->b.failed = true;
            continue;
        }
        g->busy = true;
        g->defaults = false;
        g->listed = false;
        profiles_start(g, now);
        sq_list(g);
    }
}

static const struct bt_iam_need sq_iam[] = {
    {"servicequotas:ListServiceQuotas", NULL, false},
    {"servicequotas:ListAWSDefaultServiceQuotas", NULL, false},
    {"bedrock:GetInferenceProfile", "a route on an application inference profile without base_model", false},
    {NULL, NULL, false},
};
const struct bt_collector_ops bt_quotas_collector =
    BT_COLLECTOR_SKELETON("quotas", sq_create, sq_tick, sq_iam);

unsigned long bt_quotas_requests(void *self)
{
    const struct sq *sq = self;
    return sq ? sq->requests : 0;
}
