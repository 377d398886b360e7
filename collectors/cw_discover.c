/* Route discovery: with no routes configured, ListMetrics in AWS/Bedrock and
 * AWS/BedrockMantle for the Region, one route per ModelId (Model on mantle). */
#include "collectors/cloudwatch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/awsgroup.h"
#include "collectors/cw_int.h"
#include "net/http.h"

/* --- route discovery --- */

struct discover {
    struct bt_ctx *ctx;
    struct bt_awsgroup_provider prov;
    char region[32];
    char url[512];
    char *token;
    int pages;
    bool done, ok;
    char err[1536];           /* whole: a credentials message lists every source tried */
    char (*models)[192];
    int nmodels;
};

#define MAX_DISCOVER 200

static void on_discovered(void *arg, const char *metric, const char *model, const char *account)
{
    struct discover *d = arg;
    const char *want = d->ctx->cfg->account;
    (void)metric;
    if (want[0] && account && strcmp(account, want) != 0)
        return; /* another source account's model */
    for (int i = 0; i < d->nmodels; i++)
        if (strcmp(d->models[i], model) == 0)
            return;
    if (d->nmodels < MAX_DISCOVER)
        bt_strlcpy(d->models[d->nmodels++], model, sizeof d->models[0]);
}

static void discover_submit(struct discover *d);

static void discover_done(void *arg, const struct bt_http_resp *resp)
{
    struct discover *d = arg;
    if (resp->status != 200) {
        char why[1280];
        bt_awsgroup_describe(resp, why, sizeof why);
        snprintf(d->err, sizeof d->err, "route discovery (ListMetrics %s): %s", d->region, why);
        d->done = true;
        return;
    }
    char *token = NULL;
    char err[160];
    if (!bt_cloudwatch_parse_list(resp->body, resp->body_len, on_discovered, d, &token, err,
                                  sizeof err)) {
        snprintf(d->err, sizeof d->err, "route discovery (ListMetrics %s): %s (%s)", d->region,
                 err, resp->url ? resp->url : "");
        d->done = true;
        return;
    }
    if (!token || ++d->pages >= MAX_PAGES || (d->token && strcmp(d->token, token) == 0)) {
        free(token);
        d->ok = d->done = true;
        return;
    }
    free(d->token);
    d->token = token;
    discover_submit(d);
}

static void discover_submit(struct discover *d)
{
    struct bt_buf body = {0};
    const char *acct = d->ctx->cfg->account;
    bt_cloudwatch_list_json(&body, d->token, acct[0] != '\0', acct);
    char label[96];
    snprintf(label, sizeof label, "cloudwatch %s ListMetrics", d->region);
    struct bt_http_req req = {
        .policy = &bt_aws_policy,
        .method = "POST", .url = d->url, .service = "monitoring", .region = d->region,
        .creds = &d->prov.p, .target = CW_TARGET "ListMetrics", .content_type = CW_CTYPE,
        .body = body.buf ? body.buf : "", .body_len = body.len, .label = label,
        .timeout = bt_awsgroup_timeout(),
    };
    bt_http_submit(d->ctx->http, &req, discover_done, d);
    bt_buf_free(&body);
}

int bt_cloudwatch_discover(struct bt_ctx *ctx, char *err, size_t errlen)
{
    struct bt_config *cfg = ctx->cfg;
    if (cfg->nroutes > 0)
        return 0;
    if (!ctx->http) {
        snprintf(err, errlen, "route discovery needs the network");
        return -1;
    }
    struct discover d;
    memset(&d, 0, sizeof d);
    d.ctx = ctx;
    bt_awsgroup_route_region(ctx, NULL, d.region, sizeof d.region);
    if (!d.region[0]) {
        snprintf(err, errlen, "route discovery: no AWS Region is set; set AWS_REGION, pass "
                              "--region, or put region = under [bedtop] in the config");
        return -1;
    }
    const char *profile = ctx->profile && *ctx->profile ? ctx->profile : cfg->profile;
    const char *ep = ctx->endpoint_url && *ctx->endpoint_url ? ctx->endpoint_url : cfg->endpoint_url;
    bt_awsgroup_provider_init(&d.prov, profile, d.region, ep);
    if (bt_aws_endpoint(&d.prov.opts, "monitoring", d.region, d.url, sizeof d.url) != 0) {
        snprintf(err, errlen, "route discovery: no CloudWatch endpoint for Region %s", d.region);
        bt_awsgroup_provider_free(&d.prov);
        return -1;
    }
    d.models = bt_xcalloc(MAX_DISCOVER, sizeof *d.models);
    discover_submit(&d);
    /* startup, before the dashboard: wait here; http bounds every attempt */
    while (!d.done && bt_http_pending(ctx->http) > 0)
        if (bt_http_poll(ctx->http, 1000, -1, NULL) < 0)
            break;
    int added = -1;
    if (!d.done) {
        snprintf(err, errlen, "route discovery (ListMetrics %s): no answer", d.region);
    } else if (!d.ok) {
        snprintf(err, errlen, "%s", d.err);
    } else {
        added = 0;
        for (int i = 0; i < d.nmodels; i++) {
            char name[64], unique[64];
            bt_cloudwatch_short_name(d.models[i], name, sizeof name);
            bt_strlcpy(unique, name, sizeof unique);
            for (int k = 2; bt_config_find_route(cfg, unique) >= 0; k++)
                snprintf(unique, sizeof unique, "%.56s-%d", name, k);
            int r = bt_config_add_route(cfg, unique);
            struct bt_route *rt = &cfg->routes[r];
            bt_strlcpy(rt->model, d.models[i], sizeof rt->model);
            bt_strlcpy(rt->region, d.region, sizeof rt->region);
            rt->endpoint = BT_EP_RUNTIME;
            rt->inference = bt_inference_from_model(rt->model);
            added++;
        }
    }
    free(d.token);
    free(d.models);
    bt_awsgroup_provider_free(&d.prov);
    return added;
}
