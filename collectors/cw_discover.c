/* Route discovery: with no routes configured, ListMetrics in AWS/Bedrock (every
 * ModelId) and AWS/BedrockMantle (every Model) for the Region, one route each:
 * on-demand, cross-Region and global IDs, "+latency-optimized" IDs
 * (latency-optimized), provisioned-model ARNs (provisioned), an application
 * profile once (its ARN and its bare ID are one route), mantle models (endpoint
 * mantle). Cross-Region prefixes are recognised by pattern (core/model.h);
 * ListInferenceProfiles confirms them per route (collectors/catalogue.c). */
#include "collectors/cloudwatch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/awsgroup.h"
#include "collectors/cw_int.h"
#include "collectors/infprofile.h"
#include "collectors/paginate.h"
#include "net/http.h"
#include "net/loop.h"

#define MAX_DISCOVER 200

enum { STEP_RUNTIME, STEP_MANTLE, STEP_DONE };

struct found_model {
    char id[192];
    bool mantle, legacy;
};

struct discover {
    struct bt_ctx *ctx;
    struct bt_http *http;     /* where its requests go */
    struct bt_awsgroup_provider prov;
    char region[32];
    char url[512];
    int step;
    struct bt_pages pages;    /* the step's ListMetrics pages */
    bool failed;
    enum bt_errkind kind;     /* what kind of failure err is */
    char err[1536];           /* whole: a credentials message lists every source tried */
    struct found_model *models;
    int nmodels;
};

static struct found_model *found(struct discover *d, const char *id, bool mantle)
{
    for (int i = 0; i < d->nmodels; i++)
        if (d->models[i].mantle == mantle && strcmp(d->models[i].id, id) == 0)
            return &d->models[i];
    if (d->nmodels >= MAX_DISCOVER || strlen(id) >= sizeof d->models[0].id)
        return NULL;
    struct found_model *m = &d->models[d->nmodels++];
    bt_strlcpy(m->id, id, sizeof m->id);
    m->mantle = mantle;
    return m;
}

static void on_listed(void *arg, const struct bt_cw_listed *l)
{
    struct discover *d = arg;
    const char *want = d->ctx->cfg->account;
    if (want[0] && l->account && strcmp(l->account, want) != 0)
        return; /* another source account's model */
    bool mantle = d->step == STEP_MANTLE;
    const char *id = bt_cw_dim(&l->dims, mantle ? "Model" : "ModelId");
    struct found_model *m = id ? found(d, id, mantle) : NULL;
    if (m && !mantle && strcmp(l->metric, "LegacyModelInvocations") == 0)
        m->legacy = true;
}

static void discover_step(struct discover *d);

static void next_step(struct discover *d)
{
    d->step++;
    if (d->step < STEP_DONE)
        discover_step(d);
}

static bool discover_finished(void *arg)
{
    return ((const struct discover *)arg)->step >= STEP_DONE;
}

static bool discover_page(void *arg, const struct bt_http_resp *resp, char **next, char *err,
                          size_t errlen)
{
    return bt_cloudwatch_parse_list_sets(resp->body, resp->body_len, on_listed, arg, next, err,
                                         errlen);
}

/* A listing that pages past its bound keeps the models its pages named. */
static void discover_end(void *arg, enum bt_pages_end how, const struct bt_http_resp *resp,
                         const char *err)
{
    struct discover *d = arg;
    const char *op = "ListMetrics";
    char why[1280];
    if (how == BT_PAGES_HTTP) {
        bt_awsgroup_describe(resp, why, sizeof why);
        snprintf(d->err, sizeof d->err, "route discovery (%s %s%s): %s", op,
                 d->step == STEP_MANTLE ? "AWS/BedrockMantle " : "", d->region, why);
        d->kind = resp->kind;
        d->failed = true;
        d->step = STEP_DONE;
        return;
    }
    if (how == BT_PAGES_PARSE) {
        snprintf(d->err, sizeof d->err, "route discovery (%s %s): %s (%s)", op, d->region, err,
                 resp->url ? resp->url : "");
        d->kind = BT_ERR_PARSE;
        d->failed = true;
        d->step = STEP_DONE;
        return;
    }
    next_step(d);
}

static void discover_submit(void *arg, const char *token, bt_http_cb done, void *done_arg)
{
    struct discover *d = arg;
    char label[96];
    struct bt_buf body = {0};
    const char *acct = d->ctx->cfg->account;
    bool mantle = d->step == STEP_MANTLE;
    bt_cloudwatch_list_json_ns(&body, mantle ? NS_MANTLE : NS_RUNTIME, mantle ? "Model" : "ModelId",
                               token, acct[0] != '\0', acct);
    snprintf(label, sizeof label, "cloudwatch %s ListMetrics", d->region);
    struct bt_http_req req = {
        .policy = &bt_aws_policy,
        .method = "POST", .url = d->url, .service = "monitoring", .region = d->region,
        .creds = &d->prov.p, .target = CW_TARGET "ListMetrics", .content_type = CW_CTYPE,
        .body = body.buf ? body.buf : "", .body_len = body.len, .label = label,
        .timeout = bt_awsgroup_timeout(),
    };
    bt_http_submit(d->http, &req, done, done_arg);
    bt_buf_free(&body);
}

static const struct bt_pages_ops discover_pages = {discover_submit, discover_page, discover_end};

static void discover_step(struct discover *d)
{
    bt_pages_start(&d->pages, &discover_pages, d, MAX_PAGES);
}

/* An application profile listed under its ARN and under its bare ID: one route (its
 * CloudWatch figures sum both forms, collectors/cw_sets.c). */
static bool profile_alias(const struct discover *d, const struct found_model *m)
{
    if (m->mantle || strchr(m->id, '.') || strchr(m->id, ':'))
        return false;
    for (int i = 0; i < d->nmodels; i++) {
        const char *a = d->models[i].id;
        const char *slash = strrchr(a, '/');
        if (bt_infprofile_is_arn(a) && slash && strcmp(slash + 1, m->id) == 0)
            return true;
    }
    return false;
}

static void add_route(struct bt_config *cfg, const struct discover *d, const struct found_model *m)
{
    char name[64], unique[64];
    bt_cloudwatch_short_name(m->id, name, sizeof name);
    if (m->mantle) {
        char n2[64];
        snprintf(n2, sizeof n2, "mantle.%.50s", name);
        bt_strlcpy(name, n2, sizeof name);
    }
    bt_strlcpy(unique, name, sizeof unique);
    for (int k = 2; bt_config_find_route(cfg, unique) >= 0; k++)
        snprintf(unique, sizeof unique, "%.52s-%d", name, k); /* 52 + '-' + 10 digits fit */
    int r = bt_config_add_route(cfg, unique);
    struct bt_route *rt = &cfg->routes[r];
    bt_strlcpy(rt->model, m->id, sizeof rt->model);
    bt_strlcpy(rt->region, d->region, sizeof rt->region);
    rt->endpoint = m->mantle ? BT_EP_MANTLE : BT_EP_RUNTIME;
    rt->inference = m->mantle ? BT_INF_ON_DEMAND : bt_inference_from_model(rt->model);
    rt->legacy_seen = m->legacy;
}

/* The handle of a discovery the caller's loop drives (serve's reload), on the heap. */
struct bt_cw_discovery {
    struct discover d;
};

struct bt_cw_discovery *bt_cloudwatch_discover_start(struct bt_ctx *ctx, struct bt_http *http,
                                                     enum bt_errkind *kind, char *err,
                                                     size_t errlen)
{
    *kind = BT_ERR_NONE;
    if (!http) {
        snprintf(err, errlen, "route discovery needs the network");
        *kind = BT_ERR_NETWORK;
        return NULL;
    }
    struct bt_cw_discovery *h = bt_xcalloc(1, sizeof *h);
    struct discover *d = &h->d;
    d->ctx = ctx;
    d->http = http;
    bt_awsgroup_route_region(ctx, NULL, d->region, sizeof d->region);
    if (!d->region[0]) {
        snprintf(err, errlen, "route discovery: no AWS Region is set; set AWS_REGION, pass "
                              "--region, or put region = under [bedtop] in the config");
        *kind = BT_ERR_REGION;
        free(h);
        return NULL;
    }
    const struct bt_config *cfg = ctx->cfg;
    const char *profile = ctx->profile && *ctx->profile ? ctx->profile : cfg->profile;
    const char *ep = ctx->endpoint_url && *ctx->endpoint_url ? ctx->endpoint_url : cfg->endpoint_url;
    bt_awsgroup_provider_init(&d->prov, profile, d->region, ep);
    if (bt_aws_endpoint(&d->prov.opts, "monitoring", d->region, d->url, sizeof d->url) != 0) {
        snprintf(err, errlen, "route discovery: no CloudWatch endpoint for Region %s", d->region);
        *kind = BT_ERR_REGION;
        bt_awsgroup_provider_free(&d->prov);
        free(h);
        return NULL;
    }
    d->step = STEP_RUNTIME;
    d->models = bt_xcalloc(MAX_DISCOVER, sizeof *d->models);
    discover_step(d);
    return h;
}

bool bt_cloudwatch_discover_done(const struct bt_cw_discovery *h)
{
    return h->d.step >= STEP_DONE;
}

int bt_cloudwatch_discover_finish(struct bt_cw_discovery *h, struct bt_config *cfg,
                                  enum bt_errkind *kind, char *err, size_t errlen)
{
    struct discover *d = &h->d;
    *kind = BT_ERR_NONE;
    if (d->step < STEP_DONE)
        bt_http_cancel(d->http, bt_pages_answer, &d->pages); /* given up: no callback reaches d */
    int added = -1;
    if (d->step < STEP_DONE) {
        snprintf(err, errlen, "route discovery (ListMetrics %s): no answer", d->region);
        *kind = BT_ERR_NETWORK;
    } else if (d->failed) {
        snprintf(err, errlen, "%s", d->err);
        *kind = d->kind;
    } else {
        added = 0;
        for (int i = 0; i < d->nmodels; i++) {
            if (profile_alias(d, &d->models[i]))
                continue;
            add_route(cfg, d, &d->models[i]);
            added++;
        }
    }
    bt_pages_free(&d->pages);
    free(d->models);
    bt_awsgroup_provider_free(&d->prov);
    free(h);
    return added;
}

int bt_cloudwatch_discover(struct bt_ctx *ctx, struct bt_config *cfg, enum bt_errkind *kind,
                           char *err, size_t errlen)
{
    *kind = BT_ERR_NONE;
    if (cfg->nroutes > 0)
        return 0;
    struct bt_cw_discovery *h = bt_cloudwatch_discover_start(ctx, ctx->http, kind, err, errlen);
    if (!h)
        return -1;
    /* startup, before the dashboard: wait here; http bounds every attempt, a signal
     * ends the wait at once */
    int sig = bt_loop_wait_http(ctx->http, discover_finished, &h->d);
    bool interrupted = sig && h->d.step < STEP_DONE;
    int added = bt_cloudwatch_discover_finish(h, cfg, kind, err, errlen);
    if (interrupted)
        snprintf(err, errlen, "route discovery: interrupted");
    return added;
}
