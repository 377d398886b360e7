/* Unseen callers (collectors/cw_insights.h): a Region's two Metrics Insights queries
 * every 5 minutes, then one UNSEEN_CALLERS event per route whose finding changed. */
#include "collectors/cw_insights.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collectors/awsgroup.h"
#include "collectors/cw_int.h"
#include "collectors/infprofile.h"
#include "collectors/skeleton.h"
#include "core/headroom.h"
#include "core/sanitize.h"

#define MAX_INS_PAGES 20      /* 500 series a page: 10,000 ModelIds is plenty */
#define MAX_VALUE 1e12        /* tokens or throttles in one minute: past this, not data */

static const char *const ins_metric[BT_INS_N] = {"InputTokenCount", "InvocationThrottles"};

const char *bt_insights_expression(enum bt_insights_metric k)
{
    static char expr[BT_INS_N][128];
    if (!expr[k][0])
        snprintf(expr[k], sizeof expr[k],
                 "SELECT SUM(%s) FROM SCHEMA(\"" NS_RUNTIME "\", ModelId) GROUP BY ModelId",
                 ins_metric[k]);
    return expr[k];
}

void bt_insights_request_json(struct bt_buf *out, enum bt_insights_metric k, int64_t start,
                              int64_t end, const char *next_token)
{
    bt_buf_reset(out);
    bt_buf_puts(out, "{\"MetricDataQueries\":[{\"Id\":\"q\",\"Expression\":");
    bt_buf_json_str(out, bt_insights_expression(k));
    bt_buf_printf(out, ",\"Period\":%d,\"ReturnData\":true}],\"StartTime\":%lld,\"EndTime\":%lld",
                  BT_CW_PERIOD, (long long)start, (long long)end);
    if (next_token && *next_token) {
        bt_buf_puts(out, ",\"NextToken\":");
        bt_buf_json_str(out, next_token);
    }
    bt_buf_putc(out, '}');
}

bool bt_insights_parse_page(const char *body, size_t len,
                            void (*fn)(void *arg, const char *model_id, double sum, int n),
                            void *arg, int *series, char **next_token, char *err,
                            size_t errlen)
{
    *next_token = NULL;
    *series = 0;
    cJSON *root = cJSON_ParseWithLength(body, len);
    const cJSON *res = root ? cJSON_GetObjectItemCaseSensitive(root, "MetricDataResults") : NULL;
    if (!cJSON_IsArray(res)) {
        snprintf(err, errlen, "GetMetricData (Metrics Insights): %s",
                 root ? "no MetricDataResults array" : "the answer is not JSON");
        cJSON_Delete(root);
        return false;
    }
    const cJSON *r;
    cJSON_ArrayForEach(r, res)
    {
        const cJSON *label = cJSON_GetObjectItemCaseSensitive(r, "Label");
        const cJSON *values = cJSON_GetObjectItemCaseSensitive(r, "Values");
        (*series)++;
        /* a ModelId is printable, without spaces or quotes, and fits a route's model */
        if (!cJSON_IsString(label) || !label->valuestring[0] || !cJSON_IsArray(values) ||
            strlen(label->valuestring) >= sizeof ((struct bt_route *)0)->model ||
            !bt_san_term_clean(label->valuestring) || strpbrk(label->valuestring, " \"\\;,"))
            continue;
        double sum = 0;
        int n = 0;
        bool bad = false;
        const cJSON *v;
        cJSON_ArrayForEach(v, values)
        {
            if (!cJSON_IsNumber(v) || isnan(v->valuedouble) || v->valuedouble < 0 ||
                v->valuedouble > MAX_VALUE) {
                bad = true;
                break;
            }
            sum += v->valuedouble;
            n++;
        }
        if (!bad)
            fn(arg, label->valuestring, sum, n);
    }
    const cJSON *tok = cJSON_GetObjectItemCaseSensitive(root, "NextToken");
    if (cJSON_IsString(tok) && tok->valuestring[0])
        *next_token = bt_xstrdup(tok->valuestring);
    cJSON_Delete(root);
    return true;
}

/* ---- the collector ---- */

struct ins_model {
    char id[192];
    double sum[BT_INS_N];
};

struct ins;
struct ins_group {
    struct ins *in;
    struct bt_awsgroup *ag;
    char label[96];          /* "cloudwatch insights us-east-1" */
    bool running;
    enum bt_insights_metric k; /* the query out */
    bool ok[BT_INS_N];
    struct bt_pages pages;   /* the query's pages */
    int64_t start, end;
    struct ins_model *m;
    int nm, cap;
    struct bt_strmap by_id;  /* m's IDs -> their index: a series finds its model in one lookup */
    char err[160];           /* why this round's query failed ("" none) */
    int series[BT_INS_N];    /* metrics the query read: this round's so far */
    int billed[BT_INS_N];    /* ... and the last whole answer's (the cost forecast) */
    bool answered[BT_INS_N]; /* billed holds an answer */
};

struct ins {
    struct bt_collector_base b; /* first: the skeleton's (next, started, the groups) */
    struct bt_ctx *ctx;
    struct ins_group *g;
    int ng;
    char (*said)[224];       /* per route: the last UNSEEN_CALLERS text said */
};

static void on_series(void *arg, const char *model_id, double sum, int n)
{
    struct ins_group *g = arg;
    (void)n;
    if (!g->nm)
        bt_strmap_clear(&g->by_id); /* a new round */
    char id[sizeof g->m->id];
    bt_strlcpy(id, model_id, sizeof id); /* as kept: a long ID is one model, cut */
    int i = bt_strmap_get(&g->by_id, id);
    if (i < 0) {
        if (g->nm == g->cap) {
            g->cap = g->cap ? 2 * g->cap : 16;
            g->m = bt_xrealloc(g->m, (size_t)g->cap * sizeof *g->m);
            bt_strmap_clear(&g->by_id); /* the keys moved with m */
            for (int k = 0; k < g->nm; k++)
                *bt_strmap_put(&g->by_id, g->m[k].id) = k;
        }
        i = g->nm++;
        memset(&g->m[i], 0, sizeof g->m[i]);
        bt_strlcpy(g->m[i].id, id, sizeof g->m[i].id);
        *bt_strmap_put(&g->by_id, g->m[i].id) = i;
    }
    g->m[i].sum[g->k] += sum;
}

/* The IDs a configured route reads already: its own ModelId, or the bare ID of its
 * application profile ARN (CloudWatch may list either: both are summed). Built once a
 * round, so each listed model is one lookup, not a pass over every route. */
static void index_named(const struct bt_config *cfg, struct bt_strmap *named)
{
    bt_strmap_init(named, (size_t)cfg->nroutes * 2);
    for (int r = 0; r < cfg->nroutes; r++) {
        const char *m = cfg->routes[r].model;
        const char *slash = strrchr(m, '/');
        *bt_strmap_put(named, m) = 1;
        if (bt_infprofile_is_arn(m) && slash)
            *bt_strmap_put(named, slash + 1) = 1;
    }
}

/* Whether an unseen model_id draws on route r's quota: core's rule, with an application
 * profile ARN's base model where bedtop resolved that profile before (its cache). */
static bool on_quota(const struct bt_route *r, const char *model_id, int64_t now)
{
    if (bt_infprofile_is_arn(model_id)) {
        struct bt_infprofile ip;
        int64_t at;
        return bt_infprofile_cache_get(model_id, now, &ip, &at) &&
               bt_quota_shared_by(r, model_id, ip.base_model, (int)ip.inference);
    }
    return bt_quota_shared_by(r, model_id, NULL, -1);
}

/* said[r] starts with BT_SAID_NOTHING, so the first answer is said even when it
 * finds none (the ledger then knows the Region was looked at); a failure is said as
 * "\x01" + why, so that a failure, then an answer, says both. */
#define BT_SAID_NOTHING "\x02"
static void say_code(struct ins *in, int r, const char *code, const char *text)
{
    char key[224];
    bool failed = !strcmp(code, BT_EVCODE_UNSEEN_FAILED);
    bt_fmt_cut(key, sizeof key, "%s%s", failed ? "\x01" : "", text);
    if (!strcmp(in->said[r], key))
        return; /* said already: the finding stands */
    bt_strlcpy(in->said[r], key, sizeof in->said[r]);
    if (!in->ctx->store)
        return;
    struct bt_event ev = {.t = (int64_t)time(NULL), .type = BT_EV_INFO, .route = r,
                          .source = BT_SRC_CLOUDWATCH};
    bt_strlcpy(ev.code, code, sizeof ev.code);
    bt_strlcpy(ev.text, text, sizeof ev.text);
    bt_store_apply(in->ctx->store, &ev);
}

static void say(struct ins *in, int r, const char *text)
{
    say_code(in, r, BT_EVCODE_UNSEEN_CALLERS, text);
}

/* Both queries answered: each route of the group hears which unseen ModelIds use its
 * quota, per minute over the window ("" when none). A failed query keeps the last
 * finding, and each route hears that the queries failed (UNSEEN_FAILED: the
 * cross-model ledger is a lower bound until they answer again). */
static void finish(struct ins_group *g)
{
    struct ins *in = g->in;
    const struct bt_config *cfg = in->ctx->cfg;
    g->running = false;
    if (!g->ok[BT_INS_INPUT] || !g->ok[BT_INS_THROTTLES]) {
        for (int k = 0; k < g->ag->nroutes; k++)
            say_code(in, g->ag->routes[k], BT_EVCODE_UNSEEN_FAILED,
                     g->err[0] ? g->err : "the Metrics Insights query failed");
        return;
    }
    int64_t now = (int64_t)time(NULL);
    double minutes = (double)(g->end - g->start) / 60;
    struct bt_strmap nm;
    index_named(cfg, &nm);
    bool *named = bt_xcalloc((size_t)(g->nm ? g->nm : 1), sizeof *named);
    for (int i = 0; i < g->nm; i++)
        named[i] = bt_strmap_get(&nm, g->m[i].id) >= 0;
    bt_strmap_free(&nm);
    for (int k = 0; k < g->ag->nroutes; k++) {
        int r = g->ag->routes[k];
        const struct bt_route *rt = &cfg->routes[r];
        char text[224] = "";
        size_t len = 0;
        int listed = 0, left = 0;
        for (int i = 0; i < g->nm; i++) {
            const struct ins_model *m = &g->m[i];
            if ((m->sum[BT_INS_INPUT] <= 0 && m->sum[BT_INS_THROTTLES] <= 0) ||
                named[i] || !on_quota(rt, m->id, now))
                continue;
            char one[300];
            snprintf(one, sizeof one, "%s%s: %.0f input tokens/min, %.1f throttles/min",
                     listed ? "; " : "", m->id, m->sum[BT_INS_INPUT] / minutes,
                     m->sum[BT_INS_THROTTLES] / minutes);
            if (len + strlen(one) + 16 < sizeof text) {
                bt_strlcpy(text + len, one, sizeof text - len);
                len += strlen(one);
                listed++;
            } else {
                left++;
            }
        }
        if (left)
            snprintf(text + len, sizeof text - len, "; %d more", left);
        say(in, r, text);
    }
    free(named);
}

static bool ins_page(void *arg, const struct bt_http_resp *resp, char **next, char *err,
                     size_t errlen)
{
    struct ins_group *g = arg;
    int series = 0;
    if (!bt_insights_parse_page(resp->body, resp->body_len, on_series, g, &series, next, err,
                                errlen))
        return false;
    /* a query is billed by the metrics it reads: at least the series it returned */
    bt_api_cost_metrics(g->in->ctx->api_cost, (int64_t)time(NULL), (unsigned)series);
    g->series[g->k] += series;
    return true;
}

static void ins_query(struct ins_group *g);

/* A query that pages past its bound keeps what its pages read. */
static void ins_end(void *arg, enum bt_pages_end how, const struct bt_http_resp *resp,
                    const char *err)
{
    struct ins_group *g = arg;
    struct ins *in = g->in;
    char why[224];
    if (how == BT_PAGES_HTTP || how == BT_PAGES_PARSE) {
        if (how == BT_PAGES_HTTP)
            bt_awsgroup_describe(resp, why, sizeof why);
        if (in->ctx->verbose)
            fprintf(stderr, "bedtop: %s: %s\n", g->label, how == BT_PAGES_HTTP ? why : err);
        g->ok[g->k] = false;
        bt_fmt_cut(g->err, sizeof g->err, "Metrics Insights: %s",
                   how == BT_PAGES_HTTP ? why : err ? err : "an answer not understood");
    } else {
        g->ok[g->k] = true;
        g->billed[g->k] = g->series[g->k];
        g->answered[g->k] = true;
    }
    if (g->k + 1 < BT_INS_N) {
        g->k = (enum bt_insights_metric)(g->k + 1);
        ins_query(g);
        return;
    }
    finish(g);
}

static void ins_submit(void *arg, const char *token, bt_http_cb done, void *done_arg)
{
    struct ins_group *g = arg;
    struct bt_buf body = {0};
    bt_insights_request_json(&body, g->k, g->start, g->end, token);
    bt_awsgroup_submit(&g->in->b.ag, g->ag, g->in->ctx->http, "monitoring", CW_TARGET, CW_CTYPE,
                       g->label, "GetMetricData", &body, NULL, NULL, done, done_arg);
    bt_buf_free(&body);
}

static const struct bt_pages_ops ins_pages = {ins_submit, ins_page, ins_end};

/* The query of metric g->k, from its first page */
static void ins_query(struct ins_group *g)
{
    bt_pages_start(&g->pages, &ins_pages, g, MAX_INS_PAGES);
}

static void ins_free_group(void *group)
{
    struct ins_group *g = group;
    bt_pages_free(&g->pages);
    free(g->m);
    bt_strmap_free(&g->by_id);
}

static void ins_free(void *self)
{
    struct ins *in = self;
    free(in->said);
}

static const struct bt_collector_kind ins_kind = {
    .service = "monitoring", .runtime_only = true, .label = "cloudwatch insights",
    BT_COLLECTOR_GROUPS(struct ins_group, ag, label, running),
    .free_group = ins_free_group, .free_self = ins_free,
};

static void *ins_create(struct bt_ctx *ctx)
{
    /* live polling only: not `check` (one run; from cron it would query every run), nor
     * --source, nor a backfill window (its minutes are the record) */
    if (!ctx->http || ctx->cfg->nroutes == 0 || ctx->mode == BT_MODE_ONCE || ctx->source_url ||
        ctx->window_from)
        return NULL;
    struct ins *in = bt_xcalloc(1, sizeof *in);
    in->ctx = ctx;
    in->g = bt_collector_base_init(&in->b, &ins_kind, ctx);
    in->ng = in->b.ngroups;
    in->said = bt_xcalloc((size_t)ctx->cfg->nroutes, sizeof *in->said);
    for (int r = 0; r < ctx->cfg->nroutes; r++)
        bt_strlcpy(in->said[r], BT_SAID_NOTHING, sizeof in->said[r]);
    for (int i = 0; i < in->ng; i++)
        in->g[i].in = in;
    return in;
}

static void ins_tick(void *self, int64_t now)
{
    struct ins *in = self;
    if (!bt_collector_round_due(&in->b, now, BT_INSIGHTS_EVERY))
        return;
    int64_t end = bt_minute_floor(now - BT_INSIGHTS_LAG);
    for (int i = 0; i < in->ng; i++) {
        struct ins_group *g = &in->g[i];
        if (g->running || !g->ag->url[0] || g->ag->nroutes == 0)
            continue; /* the last queries are still out, or no endpoint (cloudwatch says why) */
        g->running = true;
        g->k = BT_INS_INPUT;
        g->ok[0] = g->ok[1] = false;
        g->err[0] = '\0';
        g->series[0] = g->series[1] = 0;
        g->nm = 0;
        g->start = end - BT_INSIGHTS_WINDOW;
        g->end = end;
        ins_query(g);
    }
}

static const struct bt_iam_need ins_iam[] = { /* Metrics Insights: GetMetricData's own */
    {"cloudwatch:GetMetricData", NULL, false},
    {NULL, NULL, false},
};
const struct bt_collector_ops bt_cw_insights_collector =
    BT_COLLECTOR_SKELETON("cloudwatch-insights", ins_create, ins_tick, ins_iam);

void bt_cw_insights_cost(void *self, double *metrics_per_day)
{
    const struct ins *in = self;
    double m = 0;
    for (int i = 0; in && i < in->ng; i++) {
        const struct ins_group *g = &in->g[i];
        if (!g->ag->url[0] || g->ag->nroutes == 0)
            continue;
        for (int k = 0; k < BT_INS_N; k++) {
            /* before its first answer: the Region's configured routes */
            m += g->answered[k] ? g->billed[k] : g->ag->nroutes;
        }
    }
    *metrics_per_day = m * 86400.0 / BT_INSIGHTS_EVERY;
}
