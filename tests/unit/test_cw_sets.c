/* CloudWatch as accounts list it (issue 20), the pure parts: a mantle model's
 * series asked exactly as ListMetrics lists them (Model, Model+Project, or the sum
 * over projects), an application profile's ARN and bare ID summed, the request
 * body for a summed figure (hidden MetricStats + SUM) and its weight, ListMetrics
 * answers with whole dimension sets, ListInferenceProfiles pages and the prefix
 * list they teach, and route names for ARNs and latency-optimized IDs. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/cw_int.h"
#include "collectors/infprofile.h"
#include "core/util.h"
#include "tests/tap.h"

static void route(struct bt_route *r, const char *model, enum bt_endpoint ep, const char *project)
{
    memset(r, 0, sizeof *r);
    bt_strlcpy(r->model, model, sizeof r->model);
    bt_strlcpy(r->project, project ? project : "", sizeof r->project);
    r->endpoint = ep;
    r->inference = bt_inference_from_model(model);
}

static void listed(struct cw_sets *s, const struct bt_route *rt, const char *model,
                   const char *project, const char *account)
{
    struct bt_cw_listed m;
    memset(&m, 0, sizeof m);
    m.ns = "AWS/BedrockMantle";
    m.metric = "TotalInputTokens";
    m.account = account;
    m.dims.name[0] = "Model";
    m.dims.value[0] = model;
    m.dims.n = 1;
    if (project) {
        m.dims.name[1] = "Project";
        m.dims.value[1] = project;
        m.dims.n = 2;
    }
    cw_sets_note(s, rt, &m);
}

static void test_mantle_sets(void)
{
    struct bt_route rt;
    struct bt_cw_query q[2];
    char why[224];
    struct cw_sets s;
    memset(&s, 0, sizeof s);
    /* listed only per Model+Project, in two projects: the sum of both */
    route(&rt, "openai.gpt-5.6-luna", BT_EP_MANTLE, NULL);
    cw_sets_reset(&s);
    s.listed = true;
    listed(&s, &rt, "openai.gpt-5.6-luna", "alpha", NULL);
    listed(&s, &rt, "openai.gpt-5.6-luna", "beta", NULL);
    listed(&s, &rt, "openai.gpt-5.6-luna", "alpha", NULL);   /* a second metric, same set */
    listed(&s, &rt, "openai.gpt-5.6-sol", "gamma", NULL);    /* another model */
    memset(q, 0, sizeof q);
    q[0].signal = q[1].signal = BT_SIG_INPUT_TOKENS; /* TotalInputTokens, as listed */
    OK(cw_sets_apply(&s, &rt, q, 2, why, sizeof why) && q[0].nsum == 2 && q[1].nsum == 2 &&
           !strcmp(bt_cw_dim(&q[0].sum[0], "Project"), "alpha") &&
           !strcmp(bt_cw_dim(&q[0].sum[1], "Project"), "beta") &&
           !strcmp(bt_cw_dim(&q[0].sum[1], "Model"), "openai.gpt-5.6-luna"),
       "per Model+Project only, two projects: SUM over alpha and beta");
    /* the route's own project listed: that series alone */
    route(&rt, "openai.gpt-5.6-luna", BT_EP_MANTLE, "beta");
    OK(cw_sets_apply(&s, &rt, q, 2, why, sizeof why) && q[0].nsum == 1 &&
           !strcmp(bt_cw_dim(&q[0].sum[0], "Project"), "beta"),
       "project = beta and that series is listed: Model+Project=beta");
    /* a per-Model series listed: by Model, as before */
    route(&rt, "anthropic.claude-opus-4-7", BT_EP_MANTLE, "default");
    cw_sets_reset(&s);
    s.listed = true;
    listed(&s, &rt, "anthropic.claude-opus-4-7", NULL, NULL);
    q[0].signal = q[1].signal = BT_SIG_INPUT_TOKENS;
    OK(cw_sets_apply(&s, &rt, q, 2, why, sizeof why) == 2 && q[0].nsum == 0 && !q[0].sum,
       "only a per-Model series listed, no project's: asked by Model (the only series there is)");
    /* nothing listed for the model: unknown, not idle */
    cw_sets_reset(&s);
    s.listed = true;
    listed(&s, &rt, "anthropic.claude-opus-4-8", NULL, NULL);
    OK(!cw_sets_apply(&s, &rt, q, 2, why, sizeof why) &&
           strstr(why, "ListMetrics lists no AWS/BedrockMantle series") && strstr(why, "not idle"),
       "no series listed: refused with the reason (%s)", why);
    /* not listed yet (ListMetrics failed, never answered): by Model */
    cw_sets_reset(&s);
    OK(cw_sets_apply(&s, &rt, q, 2, why, sizeof why) && q[0].nsum == 0,
       "no listing at all: by Model");
    /* a source account's route takes only that account's series */
    route(&rt, "openai.gpt-5.6-luna", BT_EP_MANTLE, NULL);
    bt_strlcpy(rt.account, "111122223333", sizeof rt.account);
    cw_sets_reset(&s);
    s.listed = true;
    listed(&s, &rt, "openai.gpt-5.6-luna", "alpha", "444455556666");
    OK(!cw_sets_apply(&s, &rt, q, 2, why, sizeof why), "another account's series is not the route's");
    cw_sets_reset(&s); /* the dimension sets it built */
}

static void listed_metric(struct cw_sets *s, const struct bt_route *rt, const char *metric,
                          const char *project)
{
    struct bt_cw_listed m;
    memset(&m, 0, sizeof m);
    m.ns = "AWS/BedrockMantle";
    m.metric = metric;
    m.dims.name[0] = "Model";
    m.dims.value[0] = rt->model;
    m.dims.n = 1;
    if (project) {
        m.dims.name[1] = "Project";
        m.dims.value[1] = project;
        m.dims.n = 2;
    }
    cw_sets_note(s, rt, &m);
}

/* Issue 31 case 2: one dimension set per signal, from its own metric's listing.
 * On main, the per-inference OutputTokens listed per Model alone made every signal
 * asked per Model (model_only), where the totals do not exist (zeros: 0 / idle /
 * 100 %), and only 8 projects were summed (8,000 "known" of 10,000). */
static void test_sets_per_signal(void)
{
    struct bt_route rt;
    struct cw_sets s;
    memset(&s, 0, sizeof s);
    char why[224];
    route(&rt, "anthropic.claude-opus-4-7", BT_EP_MANTLE, NULL);
    s.listed = true;
    char proj[10][16];
    for (int i = 0; i < 10; i++) {
        snprintf(proj[i], sizeof proj[i], "team-%d", i % 1000);
        listed_metric(&s, &rt, "TotalOutputTokens", proj[i]);
        listed_metric(&s, &rt, "TotalInputTokens", proj[i]);
    }
    listed_metric(&s, &rt, "OutputTokens", NULL); /* per-inference, listed per Model alone */
    listed_metric(&s, &rt, "Inferences", NULL);   /* Inferences: per Model */
    struct bt_cw_query q[4];
    memset(q, 0, sizeof q);
    q[0].signal = BT_SIG_OUTPUT_TOKENS;
    q[1].signal = BT_SIG_INPUT_TOKENS;
    q[2].signal = BT_SIG_INVOCATIONS;
    q[3].signal = BT_SIG_CLIENT_ERRORS; /* InferenceClientErrors: not listed */
    int n = cw_sets_apply(&s, &rt, q, 4, why, sizeof why);
    OK(n == 3, "the signal whose metric is not listed is dropped (unknown, not idle): %d kept", n);
    OK(q[0].signal == BT_SIG_OUTPUT_TOKENS && q[0].nsum == 10 &&
           !strcmp(bt_cw_dim(&q[0].sum[9], "Project"), "team-9"),
       "TotalOutputTokens: the sum of all 10 listed projects, not per Model, no cap (%d)", q[0].nsum);
    OK(q[1].signal == BT_SIG_INPUT_TOKENS && q[1].nsum == 10, "TotalInputTokens: 10 projects summed");
    OK(q[2].signal == BT_SIG_INVOCATIONS && q[2].nsum == 0 && !q[2].sum,
       "Inferences, listed per Model: asked per Model");
    /* a route naming a project that is listed: that series; one that is not: unknown */
    route(&rt, "anthropic.claude-opus-4-7", BT_EP_MANTLE, "team-3");
    memset(q, 0, sizeof q);
    q[0].signal = BT_SIG_OUTPUT_TOKENS;
    OK(cw_sets_apply(&s, &rt, q, 1, why, sizeof why) == 1 && q[0].nsum == 1 &&
           !strcmp(bt_cw_dim(&q[0].sum[0], "Project"), "team-3"),
       "project team-3, listed: Model+Project=team-3 alone");
    route(&rt, "anthropic.claude-opus-4-7", BT_EP_MANTLE, "team-42");
    memset(q, 0, sizeof q);
    q[0].signal = BT_SIG_OUTPUT_TOKENS;
    q[1].signal = BT_SIG_INPUT_TOKENS;
    OK(cw_sets_apply(&s, &rt, q, 2, why, sizeof why) == 0 && strstr(why, "team-42") &&
           strstr(why, "unknown, not idle"),
       "project team-42, not listed: unknown, never every other project's (%s)", why);
    cw_sets_reset(&s);
}

/* Issue 32: the reserved tier under any listed set with ResolvedServiceTier=reserved
 * (AWS names ModelId, ServiceTier and ResolvedServiceTier together), summed over the
 * other dimensions; on main only the two-dimension set was taken. */
static void test_tier_any_set(void)
{
    struct bt_route rt;
    route(&rt, "anthropic.claude-sonnet-5", BT_EP_RUNTIME, NULL);
    struct cw_sets s;
    memset(&s, 0, sizeof s);
    const char *tiers[] = {"default", "priority"};
    for (int i = 0; i < 2; i++) {
        struct bt_cw_listed m;
        memset(&m, 0, sizeof m);
        m.ns = "AWS/Bedrock";
        m.metric = "Invocations";
        m.dims = (struct bt_cw_dimset){.n = 3, .name = {"ModelId", "ServiceTier", "ResolvedServiceTier"},
                                       .value = {rt.model, tiers[i], "reserved"}};
        cw_sets_note_tier(&s, &rt, &m);
        m.dims.value[2] = "default"; /* served by Standard: not the reservation's */
        cw_sets_note_tier(&s, &rt, &m);
    }
    struct bt_cw_query q[4];
    int n = cw_sets_tier_queries(&s, &rt, 0, q, 4);
    OK(n == 3 && q[0].nsum == 2 && q[0].sum[0].n == 3 &&
           !strcmp(bt_cw_dim(&q[0].sum[1], "ServiceTier"), "priority") &&
           !strcmp(bt_cw_dim(&q[0].sum[1], "ResolvedServiceTier"), "reserved") && q[2].nsum == 2,
       "ModelId+ServiceTier+ResolvedServiceTier=reserved, two listed: summed (%d queries)", n);
    cw_sets_reset(&s);
}

static void test_profile_sets(void)
{
    struct bt_route rt;
    struct bt_cw_query q[1];
    char why[224];
    struct cw_sets s;
    memset(&s, 0, sizeof s);
    route(&rt, "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/ap1",
          BT_EP_RUNTIME, NULL);
    cw_sets_reset(&s);
    memset(q, 0, sizeof q);
    OK(cw_sets_apply(&s, &rt, q, 1, why, sizeof why) && q[0].nsum == 2 &&
           !strcmp(bt_cw_dim(&q[0].sum[0], "ModelId"), rt.model) &&
           !strcmp(bt_cw_dim(&q[0].sum[1], "ModelId"), "ap1") && strstr(q[0].sumkey, "ap1"),
       "an application profile: its ARN and its bare ID, summed");
    route(&rt, "us.anthropic.claude-opus-4-8", BT_EP_RUNTIME, NULL);
    OK(cw_sets_apply(&s, &rt, q, 1, why, sizeof why) && q[0].nsum == 0,
       "a model ID: asked as it is");
}

static void test_request_body(void)
{
    struct bt_route routes[1];
    route(&routes[0], "openai.gpt-5.6-luna", BT_EP_MANTLE, NULL);
    struct cw_sets s;
    memset(&s, 0, sizeof s);
    cw_sets_reset(&s);
    s.listed = true;
    listed(&s, &routes[0], "openai.gpt-5.6-luna", "alpha", NULL);
    listed(&s, &routes[0], "openai.gpt-5.6-luna", "beta", NULL);
    struct bt_cw_query q[BT_SIG_COUNT];
    int n = bt_cloudwatch_route_queries(&routes[0], 0, NULL, q, BT_SIG_COUNT);
    char why[224];
    OK(n > 0 && cw_sets_apply(&s, &routes[0], q, n, why, sizeof why), "mantle queries (%d)", n);
    OK(bt_cloudwatch_query_weight(&q[0]) == 3, "a sum of 2 series takes 3 entries of a request");
    struct bt_buf b = {0};
    bt_cloudwatch_request_json(&b, routes, q, 1, 1795945800, 1795946400, NULL);
    cJSON *root = cJSON_Parse(bt_buf_str(&b));
    const cJSON *qs = cJSON_GetObjectItemCaseSensitive(root, "MetricDataQueries");
    char id[32];
    bt_cloudwatch_query_id(0, q[0].signal, id, sizeof id);
    OK(cJSON_GetArraySize(qs) == 3, "two hidden series and their sum: %d entries", cJSON_GetArraySize(qs));
    const cJSON *a = cJSON_GetArrayItem(qs, 0), *c = cJSON_GetArrayItem(qs, 2);
    const cJSON *dims = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(a, "MetricStat"), "Metric"),
        "Dimensions");
    char want[96], pid[40];
    snprintf(pid, sizeof pid, "%s_p0", id);
    snprintf(want, sizeof want, "SUM([%s_p0,%s_p1])", id, id);
    OK(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(a, "ReturnData")) &&
           !strcmp(cJSON_GetObjectItemCaseSensitive(a, "Id")->valuestring, pid) &&
           cJSON_GetArraySize(dims) == 2,
       "a summed series: hidden, Id %s, Model and Project", pid);
    OK(!strcmp(cJSON_GetObjectItemCaseSensitive(c, "Id")->valuestring, id) &&
           !strcmp(cJSON_GetObjectItemCaseSensitive(c, "Expression")->valuestring, want) &&
           cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "ReturnData")),
       "the figure: Id %s, %s", id, want);
    int r = -1, sig = -1;
    OK(!bt_cloudwatch_parse_id(pid, &r, &sig), "a hidden series' Id is never read as a figure");
    cJSON_Delete(root);
    bt_buf_free(&b);
    cw_sets_reset(&s); /* the dimension sets it built */
}

static void on_set(void *arg, const struct bt_cw_listed *m)
{
    char *out = arg;
    size_t l = strlen(out);
    snprintf(out + l, 512 - l, "%s%s:%d:%s/%s", l ? " " : "", m->metric, m->dims.n,
             bt_cw_dim(&m->dims, "Model") ? bt_cw_dim(&m->dims, "Model") : "-",
             bt_cw_dim(&m->dims, "Project") ? bt_cw_dim(&m->dims, "Project") : "-");
}

static void test_list_sets(void)
{
    const char *page =
        "{\"Metrics\":[{\"Namespace\":\"AWS/BedrockMantle\",\"MetricName\":\"TotalInputTokens\","
        "\"Dimensions\":[{\"Name\":\"Model\",\"Value\":\"m1\"},{\"Name\":\"Project\",\"Value\":\"p\"}]},"
        "{\"Namespace\":\"AWS/BedrockMantle\",\"MetricName\":\"Inferences\",\"Dimensions\":["
        "{\"Name\":\"Model\",\"Value\":\"m1\"}]},"
        "{\"Namespace\":\"AWS/BedrockMantle\",\"MetricName\":\"Bad\",\"Dimensions\":["
        "{\"Name\":\"Model\"}]}],\"NextToken\":\"n2\"}";
    char out[512] = "", err[160] = "", *tok = NULL;
    OK(bt_cloudwatch_parse_list_sets(page, strlen(page), on_set, out, &tok, err, sizeof err) &&
           tok && !strcmp(tok, "n2"),
       "a ListMetrics page with whole dimension sets (%s)", err);
    STREQ(out, "TotalInputTokens:2:m1/p Inferences:1:m1/-",
          "each metric with its set; one without a value skipped");
    free(tok);
    struct bt_buf b = {0};
    bt_cloudwatch_list_json_ns(&b, "AWS/BedrockMantle", "Model", NULL, false, NULL);
    STREQ(bt_buf_str(&b), "{\"Namespace\":\"AWS/BedrockMantle\",\"Dimensions\":[{\"Name\":\"Model\"}]}",
          "ListMetrics body for the mantle namespace");
    bt_buf_free(&b);
}

static void on_prof(void *arg, const char *id)
{
    int *n = arg;
    (*n)++;
    (void)id;
}

static void test_profiles(void)
{
    /* prefixes by pattern (DOMAIN.md): a Region group AWS adds is cross-region before
     * any listing names it */
    OK(bt_inference_from_model("mx.amazon.nova-pro-v1:0") == BT_INF_CROSS_REGION &&
           bt_profile_prefix_len("mx.amazon.nova-pro-v1:0") == 3,
       "mx. is a prefix by pattern");
    OK(bt_inference_from_model("in.anthropic.claude-sonnet-5") == BT_INF_CROSS_REGION &&
           bt_inference_from_model("sa.anthropic.claude-sonnet-5") == BT_INF_CROSS_REGION &&
           bt_profile_prefix_len("apac.amazon.nova-pro-v1:0") == 5 &&
           bt_profile_prefix_len("us-gov.anthropic.claude-3-haiku-20240307-v1:0") == 7,
       "in., sa., apac., us-gov.: cross-region by pattern");
    OK(bt_profile_prefix_len("zai.glm-4.6") == 0 && bt_profile_prefix_len("meta.llama3-70b-instruct-v1:0") == 0 &&
           bt_profile_prefix_len("openai.gpt-5.6-sol") == 0 &&
           bt_profile_prefix_len("us.openai.gpt-5.6-terra") == 3 &&
           bt_profile_prefix_len("global.openai.gpt-5.6-luna") == 7,
       "a vendor with a dotted model is not a prefix; a prefix before it is");
    const char *page = "{\"inferenceProfileSummaries\":[{\"inferenceProfileId\":\"mx.amazon.nova-pro-v1:0\"},"
                       "{\"inferenceProfileId\":\"us.anthropic.claude-opus-4-8\"},"
                       "{\"inferenceProfileId\":\"Weird.id\"},{\"inferenceProfileId\":5}],"
                       "\"nextToken\":\"t\"}";
    int n = 0;
    char err[160] = "", *tok = NULL;
    OK(bt_infprofile_parse_list(page, strlen(page), on_prof, &n, &tok, err, sizeof err) && n == 3 &&
           tok && !strcmp(tok, "t"),
       "a ListInferenceProfiles page: 3 IDs, a token (%s)", err);
    free(tok);
    OK(bt_inference_from_model("Weird.id") == BT_INF_ON_DEMAND && !bt_profile_prefix_len("x.y.z") &&
           !bt_profile_prefix_len("us.anthropic") && !bt_profile_prefix_len("latam1.a.b"),
       "not a prefix: upper case, one letter, no model after it, a digit");
    OK(!bt_infprofile_parse_list("{\"inferenceProfileSummaries\":7}", 33, on_prof, &n, &tok, err,
                                 sizeof err),
       "a malformed page is refused");
    OK(bt_inference_from_model("arn:aws:bedrock:us-east-1:123456789012:provisioned-model/abc") ==
               BT_INF_PROVISIONED &&
           bt_inference_from_model("us.anthropic.claude-3-5-haiku-20241022-v1:0+latency-optimized") ==
               BT_INF_LATENCY_OPTIMIZED,
       "provisioned-model ARNs and +latency-optimized IDs are their own inference types");
}

/* The reserved service tier: queried only where ListMetrics lists ModelId +
 * ResolvedServiceTier=reserved, under exactly that set. */
static void test_tier(void)
{
    struct bt_route routes[1];
    route(&routes[0], "anthropic.claude-sonnet-5", BT_EP_RUNTIME, NULL);
    struct cw_sets s;
    memset(&s, 0, sizeof s);
    cw_sets_reset(&s);
    struct bt_cw_query q[4];
    OK(cw_sets_tier_queries(&s, &routes[0], 0, q, 4) == 0, "tier not listed: no tier queries");
    cw_sets_tier_pair(&s);
    int n = cw_sets_tier_queries(&s, &routes[0], 0, q, 4);
    OK(n == 3 && q[0].signal == BT_SIG_TIER_RES_INVOCATIONS && q[2].signal == BT_SIG_TIER_RES_OUTPUT,
       "tier listed: invocations, input and output of the reserved tier (%d)", n);
    struct bt_buf b = {0};
    bt_cloudwatch_request_json(&b, routes, q, 1, 0, 60, NULL);
    STREQ(strstr(bt_buf_str(&b), "\"Dimensions\""),
          "\"Dimensions\":[{\"Name\":\"ModelId\",\"Value\":\"anthropic.claude-sonnet-5\"},"
          "{\"Name\":\"ResolvedServiceTier\",\"Value\":\"reserved\"}]},\"Period\":60,\"Stat\":"
          "\"Sum\"},\"ReturnData\":true}],\"StartTime\":0,\"EndTime\":60,\"ScanBy\":"
          "\"TimestampAscending\"}",
          "asked under ModelId and ResolvedServiceTier=reserved, one visible series");
    bt_buf_free(&b);
    route(&routes[0], "anthropic.claude-sonnet-5", BT_EP_MANTLE, NULL);
    OK(cw_sets_tier_queries(&s, &routes[0], 0, q, 4) == 0, "mantle has no service tiers");
    cw_sets_reset(&s); /* the dimension sets it built */
}

static void test_names(void)
{
    char n[64];
    bt_cloudwatch_short_name("arn:aws:bedrock:us-east-1:123456789012:provisioned-model/pt01", n, sizeof n);
    STREQ(n, "provisioned-pt01", "a provisioned-model ARN's route name");
    bt_cloudwatch_short_name("arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/ap1",
                             n, sizeof n);
    STREQ(n, "profile-ap1", "an application profile ARN's route name");
    bt_cloudwatch_short_name("anthropic.claude-3-5-haiku-20241022-v1:0+latency-optimized", n, sizeof n);
    STREQ(n, "claude-3-5-haiku-latency", "a latency-optimized ID's route name");
}

int main(void)
{
    test_mantle_sets();
    test_sets_per_signal();
    test_tier_any_set();
    test_profile_sets();
    test_request_body();
    test_list_sets();
    test_profiles();
    test_tier();
    test_names();
    return tap_done();
}
