/* The quota matcher (collectors/quota_match.c) over a listing as a real account
 * returns it: each route tied to the quota AWS applies, by UsageMetric first, then
 * a code (configured or learned), then name, and said how (matched_by); near
 * misses refused; and the cost of matching counted (never timed): 5,000 routes x
 * 2,500 quotas in one pass over an index, not 12.5 million comparisons. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/quotas.h"
#include "core/util.h"
#include "io/file.h"
#include "tests/tap.h"

static void add(struct bt_sq_list *l, const char *code, const char *name, double v,
                const char *um_ns, const char *um_model)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 16;
        l->q = bt_xrealloc(l->q, (size_t)l->cap * sizeof *l->q);
    }
    struct bt_sq_quota *q = &l->q[l->n++];
    memset(q, 0, sizeof *q);
    bt_strlcpy(q->code, code, sizeof q->code);
    bt_strlcpy(q->name, name, sizeof q->name);
    q->value = v;
    if (um_model) {
        bt_strlcpy(q->um_ns, um_ns, sizeof q->um_ns);
        bt_strlcpy(q->um_metric, "TokensPerMinute", sizeof q->um_metric);
        bt_strlcpy(q->um_model, um_model, sizeof q->um_model);
    }
}

static void mkroute(struct bt_route *r, const char *model, enum bt_endpoint ep)
{
    memset(r, 0, sizeof *r);
    bt_strlcpy(r->model, model, sizeof r->model);
    r->inference = bt_inference_from_model(model);
    r->endpoint = ep;
    for (int k = 0; k < BT_Q_COUNT; k++)
        r->quota[k].value = NAN;
}

#define AWS_BR "AWS/Bedrock"
#define AWS_BM "AWS/BedrockMantle"

/* A listing in the shapes Service Quotas returns today. */
static void listing(struct bt_sq_list *l)
{
    add(l, "L-OP48OD", "On-demand model inference tokens per minute for Claude Opus 4.8", 500000,
        NULL, NULL);
    add(l, "L-OP48CR", "Cross-region model inference tokens per minute for Claude Opus 4.8 V1",
        4000000, NULL, NULL);
    add(l, "L-OP48GL", "Global cross-region model inference tokens per minute for Anthropic Claude Opus 4.8",
        8000000, NULL, NULL);
    add(l, "L-OP48TD", "Model invocation max tokens per day for Claude Opus 4.8 (doubled for cross-region calls)",
        720000000, NULL, NULL);
    add(l, "L-OP48GD", "Global cross-region model inference tokens per day for Claude Opus 4.8",
        11520000000.0, NULL, NULL);
    add(l, "L-E3F10727", "Cross-Model Max Tokens Per Day", 20000000000.0, NULL, NULL);
    /* Sonnet 4.6: RPM enforced, scoped and scope-less rows */
    add(l, "L-S46RPMOD", "On-demand model inference requests per minute for Anthropic Claude Sonnet 4.6",
        5000, NULL, NULL);
    add(l, "L-S46RPM", "InvokeModel requests per minute for Anthropic Claude Sonnet 4.6", 10000,
        NULL, NULL);
    add(l, "L-S46CR", "Cross-Region InvokeModel tokens per minute for Anthropic Claude Sonnet 4.6",
        5000000, NULL, NULL);
    /* a name that follows no rule, but whose UsageMetric names the ModelId */
    add(l, "L-UMSON5", "Sonnet 5 geo-routed TPM (preview)", 3000000, AWS_BR,
        "us.anthropic.claude-sonnet-5-v1:0");
    /* a UsageMetric quota beside a name quota for the same model: UsageMetric first */
    add(l, "L-UMH45", "On-demand model inference tokens per minute for Anthropic Claude Haiku 4.5",
        900000, AWS_BR, "anthropic.claude-haiku-4-5-20251001-v1:0");
    add(l, "L-NMH45", "On-demand InvokeModel tokens per minute for Claude Haiku 4.5 V1", 800000,
        NULL, NULL);
    /* latency-optimized: its own quota */
    add(l, "L-LO35", "On-demand latency-optimized model inference tokens per minute for Anthropic Claude 3.5 Haiku",
        600000, NULL, NULL);
    add(l, "L-OD35", "On-demand model inference tokens per minute for Anthropic Claude 3.5 Haiku",
        400000, NULL, NULL);
    /* concurrency */
    add(l, "L-RAYC", "On-demand model inference concurrent requests for Luma Ray V2", 10, NULL, NULL);
    /* mantle, both namings */
    add(l, "L-MLUNI", "[bedrock-mantle endpoint] Input tokens per minute for GPT-5.6 Luna", 30000000,
        NULL, NULL);
    add(l, "L-MLUNO", "[bedrock-mantle endpoint] Output tokens per minute for GPT-5.6 Luna", 6000000,
        NULL, NULL);
    add(l, "L-MO47I", "Bedrock Mantle input tokens per minute for Anthropic Claude Opus 4.7",
        20000000, NULL, NULL);
    add(l, "L-MO47O", "Bedrock Mantle output tokens per minute for Anthropic Claude Opus 4.7",
        4000000, NULL, NULL);
    /* mantle by UsageMetric (Model dimension) */
    add(l, "L-UMMTI", "Mantle input capacity (preview) for Fable", 7000000, AWS_BM,
        "anthropic.claude-fable-5-1");
    /* an ambiguous label: two values for one model and kind */
    add(l, "L-NPA", "On-demand model inference tokens per minute for Amazon Nova Pro", 300000, NULL,
        NULL);
    add(l, "L-NPB", "On-demand InvokeModel tokens per minute for Nova Pro V1", 350000, NULL, NULL);
    /* near misses of Claude Opus 4.8 that must not match it */
    add(l, "L-OP4OD", "On-demand model inference tokens per minute for Claude Opus 4", 100000, NULL,
        NULL);
    add(l, "L-OP481", "On-demand model inference tokens per minute for Claude Opus 4.8.1", 100000,
        NULL, NULL);
    add(l, "L-OP48V2", "On-demand model inference tokens per minute for Claude Opus 4.8 V2", 100000,
        NULL, NULL);
    add(l, "L-OP48PT", "Provisioned model units for Claude Opus 4.8", 2, NULL, NULL);
}

static void test_families(const struct bt_quota_table *t)
{
    struct bt_sq_list l = {0};
    listing(&l);
    struct bt_quota_index *ix = bt_quota_index_build(&l, t);
    static const struct {
        const char *model;
        enum bt_endpoint ep;
        const char *context;
        enum bt_quota_kind kind;
        const char *code;      /* NULL: none; "?": ambiguous */
        enum bt_quota_match by;
    } cases[] = {
        /* Opus 4.8, vendor dropped in two names, "V1" in one */
        {"anthropic.claude-opus-4-8", BT_EP_RUNTIME, "", BT_Q_TPM, "L-OP48OD", BT_QM_NAME},
        {"us.anthropic.claude-opus-4-8", BT_EP_RUNTIME, "", BT_Q_TPM, "L-OP48CR", BT_QM_NAME},
        {"global.anthropic.claude-opus-4-8", BT_EP_RUNTIME, "", BT_Q_TPM, "L-OP48GL", BT_QM_NAME},
        {"us.anthropic.claude-opus-4-8", BT_EP_RUNTIME, "", BT_Q_TPD, "L-OP48TD", BT_QM_NAME},
        /* the global daily quota wins over the scope-less one for a global route */
        {"global.anthropic.claude-opus-4-8", BT_EP_RUNTIME, "", BT_Q_TPD, "L-OP48GD", BT_QM_NAME},
        {"anthropic.claude-opus-4-8", BT_EP_RUNTIME, "", BT_Q_TPD_ACCOUNT, "L-E3F10727", BT_QM_NAME},
        {"us.anthropic.claude-sonnet-4-6", BT_EP_RUNTIME, "", BT_Q_TPD_ACCOUNT, "L-E3F10727",
         BT_QM_NAME},
        {"anthropic.claude-opus-4-8", BT_EP_RUNTIME, "", BT_Q_RPM, NULL, BT_QM_NONE},
        /* Sonnet 4.6: the scoped RPM row for on-demand, the scope-less one otherwise */
        {"anthropic.claude-sonnet-4-6", BT_EP_RUNTIME, "", BT_Q_RPM, "L-S46RPMOD", BT_QM_NAME},
        {"us.anthropic.claude-sonnet-4-6", BT_EP_RUNTIME, "", BT_Q_RPM, "L-S46RPM", BT_QM_NAME},
        {"us.anthropic.claude-sonnet-4-6", BT_EP_RUNTIME, "", BT_Q_TPM, "L-S46CR", BT_QM_NAME},
        {"us.anthropic.claude-sonnet-4-6", BT_EP_RUNTIME, "1m", BT_Q_TPM, NULL, BT_QM_NONE},
        /* UsageMetric: a name no rule reads, tied by the ModelId it names */
        {"us.anthropic.claude-sonnet-5-v1:0", BT_EP_RUNTIME, "", BT_Q_TPM, "L-UMSON5",
         BT_QM_USAGE_METRIC},
        {"anthropic.claude-sonnet-5-v1:0", BT_EP_RUNTIME, "", BT_Q_TPM, NULL, BT_QM_NONE},
        {"anthropic.claude-haiku-4-5-20251001-v1:0", BT_EP_RUNTIME, "", BT_Q_TPM, "L-UMH45",
         BT_QM_USAGE_METRIC},
        /* latency-optimized: its own quota, never the standard one */
        {"anthropic.claude-3-5-haiku-20241022-v1:0+latency-optimized", BT_EP_RUNTIME, "", BT_Q_TPM,
         "L-LO35", BT_QM_NAME},
        {"anthropic.claude-3-5-haiku-20241022-v1:0", BT_EP_RUNTIME, "", BT_Q_TPM, "L-OD35",
         BT_QM_NAME},
        {"luma.ray-v2:0", BT_EP_RUNTIME, "", BT_Q_CONCURRENT, "L-RAYC", BT_QM_NAME},
        /* mantle: the bracketed names (vendor dropped), the documentation's, a UsageMetric */
        {"openai.gpt-5.6-luna", BT_EP_MANTLE, "", BT_Q_INPUT_TPM, "L-MLUNI", BT_QM_NAME},
        {"openai.gpt-5.6-luna", BT_EP_MANTLE, "", BT_Q_OUTPUT_TPM, "L-MLUNO", BT_QM_NAME},
        {"openai.gpt-5.6-luna", BT_EP_RUNTIME, "", BT_Q_TPM, NULL, BT_QM_NONE},
        {"anthropic.claude-opus-4-7", BT_EP_MANTLE, "", BT_Q_INPUT_TPM, "L-MO47I", BT_QM_NAME},
        {"anthropic.claude-fable-5-1", BT_EP_MANTLE, "", BT_Q_INPUT_TPM, "L-UMMTI",
         BT_QM_USAGE_METRIC},
        {"anthropic.claude-fable-5-1", BT_EP_MANTLE, "", BT_Q_OUTPUT_TPM, NULL, BT_QM_NONE},
        /* an ambiguous label is refused */
        {"amazon.nova-pro-v1:0", BT_EP_RUNTIME, "", BT_Q_TPM, "?", BT_QM_NONE},
        /* near misses of Opus 4.8: 4, 4.8.1, V2 and provisioned units are other quotas */
        {"anthropic.claude-opus-4-8-v2:0", BT_EP_RUNTIME, "", BT_Q_TPM, "L-OP48V2", BT_QM_NAME},
        {"anthropic.claude-opus-4", BT_EP_RUNTIME, "", BT_Q_TPM, "L-OP4OD", BT_QM_NAME},
        /* provisioned capacity: no quota kinds at all */
        {"arn:aws:bedrock:us-east-1:123456789012:provisioned-model/abc123", BT_EP_RUNTIME, "",
         BT_Q_TPM, NULL, BT_QM_NONE},
    };
    for (size_t i = 0; i < BT_ARRAY_LEN(cases); i++) {
        struct bt_route r;
        mkroute(&r, cases[i].model, cases[i].ep);
        bt_strlcpy(r.context, cases[i].context, sizeof r.context);
        enum bt_quota_match by;
        char why[224] = "";
        int q = bt_quota_index_match(ix, &r, cases[i].kind, &by, why, sizeof why);
        const char *want = cases[i].code;
        bool good = !want ? q == -1
                    : !strcmp(want, "?") ? q == -2 && why[0]
                                         : q >= 0 && !strcmp(l.q[q].code, want);
        good = good && by == cases[i].by;
        OK(good, "%s (%s%s%s) %s -> %s matched_by %s (got %s, %s%s%s)", cases[i].model,
           bt_endpoint_name(cases[i].ep), cases[i].context[0] ? ", context " : "",
           cases[i].context, bt_quota_kind_name(cases[i].kind), want ? want : "none",
           bt_quota_match_name(cases[i].by) ? bt_quota_match_name(cases[i].by) : "-",
           q >= 0 ? l.q[q].code : q == -2 ? "ambiguous" : "none",
           bt_quota_match_name(by) ? bt_quota_match_name(by) : "-", why[0] ? ": " : "", why);
    }
    /* provisioned: the collector asks for no kind at all */
    struct bt_route pr;
    mkroute(&pr, "arn:aws:bedrock:us-east-1:123456789012:provisioned-model/abc123", BT_EP_RUNTIME);
    const enum bt_quota_kind *kinds;
    OK(pr.inference == BT_INF_PROVISIONED && bt_quotas_route_kinds(&pr, &kinds) == 0,
       "a provisioned-model ARN is provisioned and has no quota kinds (no TPM group)");
    /* a configured code: matched_by code, and it beats the name */
    struct bt_route c;
    mkroute(&c, "anthropic.claude-opus-4-8", BT_EP_RUNTIME);
    bt_strlcpy(c.quota_code, "L-OP48GL", sizeof c.quota_code);
    enum bt_quota_match by;
    int q = bt_quota_index_match(ix, &c, BT_Q_TPM, &by, NULL, 0);
    OK(q >= 0 && !strcmp(l.q[q].code, "L-OP48GL") && by == BT_QM_CODE,
       "configured quota_code: its quota, matched_by code");
    /* a learned code: a quota whose name drifted is found again by the code it had */
    struct bt_route d;
    mkroute(&d, "anthropic.claude-opus-4-9", BT_EP_RUNTIME);
    d.quota[BT_Q_TPM] = (struct bt_quota){123, BT_QS_SERVICE_QUOTAS, "L-OP48OD", "old name"};
    q = bt_quota_index_match(ix, &d, BT_Q_TPM, &by, NULL, 0);
    OK(q >= 0 && !strcmp(l.q[q].code, "L-OP48OD") && by == BT_QM_CODE,
       "learned code: the quota it had at the last listing, matched_by code");
    /* UsageMetric wins over a configured code and over a name */
    struct bt_route h;
    mkroute(&h, "anthropic.claude-haiku-4-5-20251001-v1:0", BT_EP_RUNTIME);
    bt_strlcpy(h.quota_code, "L-NMH45", sizeof h.quota_code);
    q = bt_quota_index_match(ix, &h, BT_Q_TPM, &by, NULL, 0);
    OK(q >= 0 && !strcmp(l.q[q].code, "L-UMH45") && by == BT_QM_USAGE_METRIC,
       "UsageMetric first, then the code, then the name");
    /* an application profile resolved to its base model: the same name match */
    struct bt_route app;
    mkroute(&app, "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/p1",
            BT_EP_RUNTIME);
    bt_strlcpy(app.base_model, "anthropic.claude-opus-4-8", sizeof app.base_model);
    app.inference = BT_INF_CROSS_REGION;
    q = bt_quota_index_match(ix, &app, BT_Q_TPM, &by, NULL, 0);
    OK(q >= 0 && !strcmp(l.q[q].code, "L-OP48CR") && by == BT_QM_NAME,
       "application profile: its base model's cross-region quota");
    /* daily doubling only where the name says so */
    struct bt_route cr, gl;
    mkroute(&cr, "us.anthropic.claude-opus-4-8", BT_EP_RUNTIME);
    mkroute(&gl, "global.anthropic.claude-opus-4-8", BT_EP_RUNTIME);
    NEAR(bt_quotas_effective_value(&cr, BT_Q_TPD, &l.q[3]), 1440000000, 0,
         "720M per day (doubled for cross-region calls): 1,440M for a us. route");
    NEAR(bt_quotas_effective_value(&gl, BT_Q_TPD, &l.q[4]), 11520000000.0, 0,
         "the global daily quota is not doubled");
    bt_quota_index_free(ix);
    bt_sq_list_free(&l);
}

/* UsageMetric from the wire: a ListServiceQuotas page as the service model shapes it. */
static void test_usage_metric_page(void)
{
    const char *page =
        "{\"Quotas\":[{\"ServiceCode\":\"bedrock\",\"QuotaCode\":\"L-UM1\",\"QuotaName\":\"x\","
        "\"Value\":5,\"UsageMetric\":{\"MetricNamespace\":\"AWS/Bedrock\",\"MetricName\":"
        "\"TokensPerMinute\",\"MetricDimensions\":{\"ModelId\":\"us.anthropic.claude-opus-4-8\"},"
        "\"MetricStatisticRecommendation\":\"Maximum\"}},"
        "{\"QuotaCode\":\"L-UM2\",\"QuotaName\":\"y\",\"Value\":6,\"UsageMetric\":{"
        "\"MetricNamespace\":\"AWS/BedrockMantle\",\"MetricName\":\"TotalInputTokens\","
        "\"MetricDimensions\":{\"Model\":\"openai.gpt-5.6-luna\"}}},"
        "{\"QuotaCode\":\"L-UM3\",\"QuotaName\":\"z\",\"Value\":7,\"UsageMetric\":{"
        "\"MetricNamespace\":\"AWS/Bedrock\",\"MetricDimensions\":{\"Other\":\"a\"}}},"
        "{\"QuotaCode\":\"L-UM4\",\"QuotaName\":\"w\",\"Value\":8,\"UsageMetric\":5}]}";
    struct bt_sq_list l = {0};
    char *tok = NULL, err[160] = "";
    OK(bt_quotas_parse_page(page, strlen(page), &l, &tok, err, sizeof err) && l.n == 4,
       "a page with UsageMetric parses (%s)", err);
    OK(l.n == 4 && !strcmp(l.q[0].um_ns, "AWS/Bedrock") &&
           !strcmp(l.q[0].um_model, "us.anthropic.claude-opus-4-8") &&
           !strcmp(l.q[0].um_metric, "TokensPerMinute"),
       "UsageMetric ModelId kept");
    OK(l.n == 4 && !strcmp(l.q[1].um_model, "openai.gpt-5.6-luna"),
       "mantle UsageMetric: the Model dimension");
    OK(l.n == 4 && !l.q[2].um_model[0] && !l.q[3].um_model[0],
       "no model dimension, or a malformed UsageMetric: none (matched by code or name)");
    free(tok);
    bt_sq_list_free(&l);
}

/* 5,000 routes x 2,500 quotas: every route matched in one pass over the index. The
 * cost is counted in entries looked at; a matcher comparing every route with every
 * quota would look at 12,500,000 per kind. */
static void test_scale(const struct bt_quota_table *t)
{
    enum { NQ = 2500, NR = 5000 };
    struct bt_sq_list l = {0};
    char code[32], name[256], model[192];
    for (int i = 0; i < NQ; i++) {
        snprintf(code, sizeof code, "L-%05d", i);
        if (i % 5 == 4) {
            /* one in five by UsageMetric, its name following no rule */
            snprintf(name, sizeof name, "Acme capacity %d", i);
            snprintf(model, sizeof model, "us.acme.model-%d-v1:0", i);
            add(&l, code, name, 1000 + i, AWS_BR, model);
        } else {
            /* the rest by name, half of them with the vendor dropped */
            snprintf(name, sizeof name, "%s model inference tokens per minute for %sModel %d V1",
                     i % 2 ? "Cross-region" : "On-demand", i % 4 < 2 ? "Acme " : "", i);
            add(&l, code, name, 1000 + i, NULL, NULL);
        }
    }
    struct bt_quota_index *ix = bt_quota_index_build(&l, t);
    int matched = 0, right = 0, by_um = 0;
    for (int r = 0; r < NR; r++) {
        int i = r % NQ;
        struct bt_route rt;
        /* the route asks with the inference type its quota was listed for */
        bool cr = i % 5 == 4 || i % 2;
        snprintf(model, sizeof model, "%sacme.model-%d-v1:0", cr ? "us." : "", i);
        mkroute(&rt, model, BT_EP_RUNTIME);
        enum bt_quota_match by;
        int q = bt_quota_index_match(ix, &rt, BT_Q_TPM, &by, NULL, 0);
        matched += q >= 0;
        right += q == i;
        by_um += q == i && by == BT_QM_USAGE_METRIC;
    }
    unsigned long cmp = bt_quota_index_comparisons(ix);
    OK(matched == NR && right == NR, "5,000 routes x 2,500 quotas: every route its own quota (%d, %d)",
       matched, right);
    OK(by_um == NR / 5, "one in five by UsageMetric (%d)", by_um);
    /* per route at most 2 inference types x 1 key, each a chain of a few entries */
    OK(cmp <= 4ul * (NR + NQ), "matching looked at %lu index entries, at most 4 x (routes + quotas) "
       "= %d, not routes x quotas = %d", cmp, 4 * (NR + NQ), NR * NQ);
    bt_quota_index_free(ix);
    bt_sq_list_free(&l);
}

/* Issue 32: a runtime quota named "... model inference input tokens per minute for X"
 * (and "... output ...") that carries a UsageMetric is read as two sides, input_tpm
 * and output_tpm, never as the combined TPM quota; a mantle route never takes them
 * (nor a runtime route mantle's). Adjustable is read from the listing. */
static void test_split_runtime(const struct bt_quota_table *t)
{
    struct bt_sq_list l = {0};
    add(&l, "L-SPIN", "On-demand model inference input tokens per minute for Amazon Nova Premier",
        1000000, AWS_BR, "amazon.nova-premier-v1:0");
    add(&l, "L-SPOUT", "On-demand model inference output tokens per minute for Amazon Nova Premier",
        200000, AWS_BR, "amazon.nova-premier-v1:0");
    /* the same words without a row of quota-names.conf, only the UsageMetric to go by */
    add(&l, "L-SPIN2", "Model inference input tokens per minute for Nova Premier (preview)",
        900000, AWS_BR, "us.amazon.nova-premier-v1:0");
    add(&l, "L-MIN", "Bedrock Mantle input tokens per minute for Amazon Nova Premier", 5000000,
        NULL, NULL);
    struct bt_route r;
    char why[224];
    mkroute(&r, "amazon.nova-premier-v1:0", BT_EP_RUNTIME);
    int q = bt_quotas_match(&r, BT_Q_INPUT_TPM, &l, t, why, sizeof why);
    OK(q == 0, "runtime input side: L-SPIN (got %d: %s)", q, why);
    q = bt_quotas_match(&r, BT_Q_OUTPUT_TPM, &l, t, why, sizeof why);
    OK(q == 1, "runtime output side: L-SPOUT (got %d: %s)", q, why);
    q = bt_quotas_match(&r, BT_Q_TPM, &l, t, why, sizeof why);
    OK(q == -1, "no combined TPM quota read from the split ones (got %d: %s)", q, why);
    mkroute(&r, "us.amazon.nova-premier-v1:0", BT_EP_RUNTIME);
    q = bt_quotas_match(&r, BT_Q_INPUT_TPM, &l, t, why, sizeof why);
    OK(q == 2, "by UsageMetric alone: the cross-Region input side (got %d: %s)", q, why);
    q = bt_quotas_match(&r, BT_Q_TPM, &l, t, why, sizeof why);
    OK(q == -1, "... and never the cross-Region TPM quota (got %d: %s)", q, why);
    const enum bt_quota_kind *kinds;
    size_t nk = bt_quotas_route_kinds(&r, &kinds);
    bool in = false, out = false;
    for (size_t k = 0; k < nk; k++) {
        in |= kinds[k] == BT_Q_INPUT_TPM;
        out |= kinds[k] == BT_Q_OUTPUT_TPM;
    }
    OK(in && out, "a runtime route looks for split input and output quotas");
    mkroute(&r, "amazon.nova-premier-v1:0", BT_EP_MANTLE);
    q = bt_quotas_match(&r, BT_Q_INPUT_TPM, &l, t, why, sizeof why);
    OK(q == 3, "mantle takes its own input quota, not runtime's split one (got %d: %s)", q, why);
    bt_sq_list_free(&l);

    const char *page =
        "{\"Quotas\":[{\"QuotaCode\":\"L-A\",\"QuotaName\":\"a\",\"Value\":1,\"Adjustable\":false},"
        "{\"QuotaCode\":\"L-B\",\"QuotaName\":\"b\",\"Value\":2,\"Adjustable\":true},"
        "{\"QuotaCode\":\"L-C\",\"QuotaName\":\"c\",\"Value\":3}]}";
    char *tok = NULL, err[160] = "";
    OK(bt_quotas_parse_page(page, strlen(page), &l, &tok, err, sizeof err) && l.n == 3 &&
           l.q[0].adjustable == BT_ADJ_NO && l.q[1].adjustable == BT_ADJ_YES &&
           l.q[2].adjustable == BT_ADJ_UNKNOWN,
       "Adjustable false, true, absent: no, yes, unknown");
    free(tok);
    bt_sq_list_free(&l);
}

int main(void)
{
    struct bt_quota_table t = {0};
    char path[1024], err[256] = "";
    snprintf(path, sizeof path, "%s/data/quota-names.conf", tap_srcdir());
    char *text = bt_read_file(path, 1 << 20, NULL);
    OK(text && bt_quota_table_parse(&t, text, path, err, sizeof err), "data/quota-names.conf (%s)",
       err);
    free(text);
    test_families(&t);
    test_usage_metric_page();
    test_split_runtime(&t);
    test_scale(&t);
    bt_quota_table_free(&t);
    return tap_done();
}
