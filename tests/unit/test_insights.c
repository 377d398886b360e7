/* Unseen callers' pure parts: the Metrics Insights request, its answer read from hostile
 * bodies, and core's rule for which unseen ModelId draws on a route's quota
 * (DOMAIN.md "A route, and the quota it draws from"). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/cw_insights.h"
#include "core/headroom.h"
#include "core/model.h"
#include "core/util.h"
#include "tests/tap.h"

struct seen {
    char ids[8][200];
    double sum[8];
    int n[8];
    int count;
};

static void collect(void *arg, const char *model_id, double sum, int n)
{
    struct seen *s = arg;
    if (s->count < 8) {
        bt_strlcpy(s->ids[s->count], model_id, sizeof s->ids[0]);
        s->sum[s->count] = sum;
        s->n[s->count] = n;
    }
    s->count++;
}

static void test_request(void)
{
    OK(!strcmp(bt_insights_expression(BT_INS_INPUT),
               "SELECT SUM(InputTokenCount) FROM SCHEMA(\"AWS/Bedrock\", ModelId) GROUP BY ModelId"),
       "the input query, as the issue writes it");
    OK(!strcmp(bt_insights_expression(BT_INS_THROTTLES),
               "SELECT SUM(InvocationThrottles) FROM SCHEMA(\"AWS/Bedrock\", ModelId) GROUP BY ModelId"),
       "the same for InvocationThrottles");
    struct bt_buf b = {0};
    bt_insights_request_json(&b, BT_INS_INPUT, 1795946100, 1795946400, "tok\"1");
    OK(!strcmp(b.buf, "{\"MetricDataQueries\":[{\"Id\":\"q\",\"Expression\":\"SELECT "
                      "SUM(InputTokenCount) FROM SCHEMA(\\\"AWS/Bedrock\\\", ModelId) GROUP BY "
                      "ModelId\",\"Period\":60,\"ReturnData\":true}],\"StartTime\":1795946100,"
                      "\"EndTime\":1795946400,\"NextToken\":\"tok\\\"1\"}"),
       "one query a request, Period 60, the window, a NextToken escaped");
    bt_buf_free(&b);
}

static void test_parse(void)
{
    struct seen s;
    memset(&s, 0, sizeof s);
    int series = 0;
    char *tok = NULL, err[160];
    /* haiku: 5 minutes of 60,000 = 300,000; nova: 1,000 + 2,000 = 3,000 */
    const char *page =
        "{\"MetricDataResults\":[{\"Id\":\"q\",\"Label\":\"anthropic.claude-3-haiku-20240307-v1:0\","
        "\"Timestamps\":[1,2,3,4,5],\"Values\":[60000,60000,60000,60000,60000],\"StatusCode\":\"Complete\"},"
        "{\"Id\":\"q\",\"Label\":\"amazon.nova-lite-v1:0\",\"Timestamps\":[1,2],\"Values\":[1000,2000]}],"
        "\"NextToken\":\"more\"}";
    OK(bt_insights_parse_page(page, strlen(page), collect, &s, &series, &tok, err, sizeof err) &&
           series == 2 && s.count == 2 && tok && !strcmp(tok, "more"),
       "a page: two series, a NextToken");
    OK(!strcmp(s.ids[0], "anthropic.claude-3-haiku-20240307-v1:0") && s.sum[0] == 300000 &&
           s.n[0] == 5 && !strcmp(s.ids[1], "amazon.nova-lite-v1:0") && s.sum[1] == 3000,
       "each Label is the ModelId grouped by, its values summed (300,000; 3,000)");
    free(tok);

    memset(&s, 0, sizeof s);
    const char *hostile =
        "{\"MetricDataResults\":["
        "{\"Label\":\"evil\\u001b[31mred\",\"Values\":[1]},"       /* a terminal escape */
        "{\"Label\":\"a b\",\"Values\":[1]},"                      /* not a ModelId */
        "{\"Label\":\"x\\\"y\",\"Values\":[1]},"
        "{\"Label\":\"neg\",\"Values\":[-5]},"                     /* negative: not data */
        "{\"Label\":\"huge\",\"Values\":[1e300]},"
        "{\"Label\":\"str\",\"Values\":[\"12\"]},"
        "{\"Label\":42,\"Values\":[1]},"
        "{\"Values\":[1]},"
        "{\"Label\":\"ok.model-v1:0\",\"Values\":[]}]}";
    OK(bt_insights_parse_page(hostile, strlen(hostile), collect, &s, &series, &tok, err,
                              sizeof err) &&
           series == 9 && s.count == 1 && !strcmp(s.ids[0], "ok.model-v1:0") && s.sum[0] == 0 &&
           !tok,
       "hostile labels and values skipped, counted as series read all the same");
    char longl[400];
    snprintf(longl, sizeof longl, "{\"MetricDataResults\":[{\"Label\":\"%0300d\",\"Values\":[1]}]}", 7);
    memset(&s, 0, sizeof s);
    OK(bt_insights_parse_page(longl, strlen(longl), collect, &s, &series, &tok, err, sizeof err) &&
           s.count == 0,
       "a Label longer than any ModelId: skipped");
    OK(!bt_insights_parse_page("[1,2]", 5, collect, &s, &series, &tok, err, sizeof err) &&
           strstr(err, "MetricDataResults"),
       "no MetricDataResults: an error naming it");
    OK(!bt_insights_parse_page("{\"Me", 4, collect, &s, &series, &tok, err, sizeof err) &&
           strstr(err, "not JSON"),
       "truncated JSON: an error");
}

static struct bt_route route(const char *model, const char *base, enum bt_inference inf)
{
    struct bt_route r;
    memset(&r, 0, sizeof r);
    bt_strlcpy(r.model, model, sizeof r.model);
    if (base)
        bt_strlcpy(r.base_model, base, sizeof r.base_model);
    bt_strlcpy(r.region, "us-east-1", sizeof r.region);
    r.endpoint = BT_EP_RUNTIME;
    r.inference = inf;
    return r;
}

static void test_shared(void)
{
    const char *haiku = "anthropic.claude-3-haiku-20240307-v1:0";
    const char *arn = "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/b4tch";
    struct bt_route batch = route(arn, haiku, BT_INF_ON_DEMAND);
    OK(bt_quota_shared_by(&batch, haiku, NULL, -1),
       "the base model called directly draws on the quota a profile route reaches");
    struct bt_route direct = route(haiku, NULL, BT_INF_ON_DEMAND);
    OK(!bt_quota_shared_by(&direct, haiku, NULL, -1), "the route's own ModelId is not unseen");
    OK(bt_quota_shared_by(&direct, "arn:aws:bedrock:us-east-1:1:application-inference-profile/x", haiku,
                          BT_INF_ON_DEMAND),
       "an application profile resolved to the route's model and inference type shares it");
    OK(!bt_quota_shared_by(&direct, "arn:aws:bedrock:us-east-1:1:application-inference-profile/x",
                           NULL, -1),
       "an unresolved profile: not said to share (its model is unknown)");
    OK(!bt_quota_shared_by(&direct, "us.anthropic.claude-3-haiku-20240307-v1:0", NULL, -1),
       "the cross-Region profile of the same model: another quota (not interchangeable)");
    OK(!bt_quota_shared_by(&direct, "amazon.nova-lite-v1:0", NULL, -1), "another model: no");
    OK(!bt_quota_shared_by(&direct, "arn:aws:bedrock:us-east-1:1:provisioned-model/p", NULL, -1),
       "Provisioned Throughput draws on no on-demand quota");
    struct bt_route mantle = route(haiku, NULL, BT_INF_ON_DEMAND);
    mantle.endpoint = BT_EP_MANTLE;
    OK(!bt_quota_shared_by(&mantle, "x.y-v1:0", NULL, -1) &&
           !bt_quota_shared_by(&mantle, haiku, NULL, -1),
       "a mantle route: AWS/Bedrock's ModelIds are another endpoint's");
}

int main(void)
{
    test_request();
    test_parse();
    test_shared();
    return tap_done();
}
