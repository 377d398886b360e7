/* CloudWatch collector, pure parts: the GetMetricData request for a route
 * set, batching, response pages (captured and hand-written), the
 * settled-minute window. The HTTP path is tested in t_aws_integration.sh. */
#include <cjson/cJSON.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/cloudwatch.h"
#include "core/util.h"
#include "io/file.h"
#include "tests/tap.h"

#define SONNET "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
#define HAIKU "anthropic.claude-3-haiku-20240307-v1:0"
#define OPUS "anthropic.claude-opus-4-7"

static void three_routes(struct bt_route rt[3])
{
    memset(rt, 0, 3 * sizeof *rt);
    bt_strlcpy(rt[0].model, SONNET, sizeof rt[0].model);
    bt_strlcpy(rt[1].model, HAIKU, sizeof rt[1].model);
    bt_strlcpy(rt[2].model, OPUS, sizeof rt[2].model);
    bt_strlcpy(rt[2].project, "proj-agents", sizeof rt[2].project);
    rt[2].endpoint = BT_EP_MANTLE;
}

static char *item_json(const cJSON *arr, const char *id)
{
    const cJSON *q;
    cJSON_ArrayForEach(q, arr) {
        const cJSON *j = cJSON_GetObjectItemCaseSensitive(q, "Id");
        if (cJSON_IsString(j) && strcmp(j->valuestring, id) == 0)
            return cJSON_PrintUnformatted(q);
    }
    return NULL;
}

static void test_request(void)
{
    struct bt_route rt[3];
    three_routes(rt);
    struct bt_cw_query q[64];
    /* route 1's account spells the cache metrics the other way (ListMetrics) */
    struct bt_cw_spelling sp1 = {.cache_read = "CacheReadInputTokens",
                                 .cache_write = "CacheWriteInputTokens"};
    int n = bt_cloudwatch_route_queries(&rt[0], 0, NULL, q, 64);
    OK(n == 14, "runtime route: 14 CloudWatch signals (got %d)", n);
    n += bt_cloudwatch_route_queries(&rt[1], 1, &sp1, q + n, 64 - n);
    int nm = bt_cloudwatch_route_queries(&rt[2], 2, NULL, q + n, 64 - n);
    OK(nm == 4, "mantle route: only the 4 signals with a mantle metric (got %d)", nm);
    n += nm;
    OK(n == 32, "2 runtime + 1 mantle = 32 queries");
    OK(bt_cloudwatch_nrequests(n) == 1, "32 queries fit one request");

    /* 2026-11-29 10:00:00Z = 1795946400; a 10-minute window ending there */
    struct bt_buf b = {0};
    bt_cloudwatch_request_json(&b, rt, q, n, 1795945800, 1795946400, NULL);
    cJSON *root = cJSON_Parse(bt_buf_str(&b));
    OK(root != NULL, "request is JSON");
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "MetricDataQueries");
    OK(cJSON_GetArraySize(arr) == 32, "MetricDataQueries has 32 entries");
    NEAR(cJSON_GetObjectItemCaseSensitive(root, "StartTime")->valuedouble, 1795945800, 0,
         "StartTime");
    NEAR(cJSON_GetObjectItemCaseSensitive(root, "EndTime")->valuedouble, 1795946400, 0,
         "EndTime (exclusive, whole minute)");
    OK(!cJSON_GetObjectItemCaseSensitive(root, "NextToken"), "no NextToken on a first page");

    regex_t re;
    regcomp(&re, "^[a-z][a-zA-Z0-9_]*$", REG_EXTENDED | REG_NOSUB);
    const cJSON *it;
    int bad = 0, dup = 0;
    cJSON_ArrayForEach(it, arr) {
        const char *id = cJSON_GetObjectItemCaseSensitive(it, "Id")->valuestring;
        if (regexec(&re, id, 0, NULL, 0) != 0)
            bad++;
        const cJSON *o;
        int same = 0;
        cJSON_ArrayForEach(o, arr) {
            same += strcmp(cJSON_GetObjectItemCaseSensitive(o, "Id")->valuestring, id) == 0;
        }
        dup += same != 1;
    }
    regfree(&re);
    OK(bad == 0 && dup == 0, "every Id matches ^[a-z][a-zA-Z0-9_]*$ and is unique");

    /* signal numbers from the BT_SIGNALS order: 0 invocations, 3 cache read,
     * 11 latency p99, 13 estimated TPM */
    char *s = item_json(arr, "r0_s11");
    STREQ(s,
          "{\"Id\":\"r0_s11\",\"MetricStat\":{\"Metric\":{\"Namespace\":\"AWS/Bedrock\","
          "\"MetricName\":\"InvocationLatency\",\"Dimensions\":[{\"Name\":\"ModelId\",\"Value\":"
          "\"" SONNET "\"}]},\"Period\":60,\"Stat\":\"p99\"},\"ReturnData\":true}",
          "runtime p99 latency query");
    cJSON_free(s);
    s = item_json(arr, "r0_s13");
    OK(s && strstr(s, "\"MetricName\":\"EstimatedTPMQuotaUsage\"") &&
           strstr(s, "\"Stat\":\"Sum\""),
       "EstimatedTPMQuotaUsage as a Sum");
    cJSON_free(s);
    s = item_json(arr, "r0_s3");
    OK(s && strstr(s, "\"MetricName\":\"CacheReadInputTokenCount\""),
       "route 0: the table's cache-read spelling");
    cJSON_free(s);
    s = item_json(arr, "r1_s3");
    OK(s && strstr(s, "\"MetricName\":\"CacheReadInputTokens\"") &&
           strstr(s, "\"Value\":\"" HAIKU "\""),
       "route 1: the discovered cache-read spelling and its ModelId");
    cJSON_free(s);
    s = item_json(arr, "r1_s4");
    OK(s && strstr(s, "\"MetricName\":\"CacheWriteInputTokens\""),
       "route 1: the discovered cache-write spelling");
    cJSON_free(s);
    /* AWS publishes mantle figures per Model and per Project, never per pair: a
     * route with a project still asks by Model alone, or it would get no data */
    s = item_json(arr, "r2_s0");
    STREQ(s,
          "{\"Id\":\"r2_s0\",\"MetricStat\":{\"Metric\":{\"Namespace\":\"AWS/BedrockMantle\","
          "\"MetricName\":\"Inferences\",\"Dimensions\":[{\"Name\":\"Model\",\"Value\":\"" OPUS
          "\"}]},\"Period\":60,\"Stat\":\"Sum\"},\"ReturnData\":true}",
          "mantle Inferences query by Model alone, project set or not");
    cJSON_free(s);
    s = item_json(arr, "r2_s11");
    OK(s == NULL, "no latency query for mantle (not published there)");
    cJSON_free(s);
    int mantle_ns = 0;
    cJSON_ArrayForEach(it, arr) {
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(it, "MetricStat"), "Metric");
        mantle_ns += strcmp(cJSON_GetObjectItemCaseSensitive(m, "Namespace")->valuestring,
                            "AWS/BedrockMantle") == 0;
    }
    OK(mantle_ns == 4, "exactly the mantle route's 4 queries use AWS/BedrockMantle");
    cJSON_Delete(root);

    bt_cloudwatch_request_json(&b, rt, q, 1, 1795945800, 1795946400, "tok-2");
    OK(strstr(bt_buf_str(&b), "\"NextToken\":\"tok-2\"") != NULL, "NextToken echoed on page 2");
    bt_buf_free(&b);

    {
        /* the body is written by hand: an odd model ID must still come out as valid JSON */
        struct bt_route odd[1];
        bt_route_defaults(&odd[0]);
        bt_strlcpy(odd[0].model, "we\"ird\\model\tid", sizeof odd[0].model);
        struct bt_cw_query oq = {.route = 0, .signal = BT_SIG_INVOCATIONS, .ns = "AWS/Bedrock",
                                 .metric = "Invocations", .stat = "Sum"};
        struct bt_buf ob = {0};
        bt_cloudwatch_request_json(&ob, odd, &oq, 1, 0, 60, "t\"k");
        cJSON *oj = cJSON_Parse(bt_buf_str(&ob));
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(
                cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(
                    cJSON_GetObjectItemCaseSensitive(oj, "MetricDataQueries"), 0), "MetricStat"),
                "Metric"), "Dimensions"), 0), "Value");
        OK(oj && cJSON_IsString(v) && !strcmp(v->valuestring, odd[0].model) &&
               !strcmp(cJSON_GetObjectItemCaseSensitive(oj, "NextToken")->valuestring, "t\"k"),
           "quotes, backslashes and tabs in a model ID and token are escaped");
        cJSON_Delete(oj);
        bt_buf_free(&ob);
    }

    bt_cloudwatch_request_json(&b, rt, q, n, 1795945800, 1795946400, NULL);
    OK(rt[2].project[0] && strstr(bt_buf_str(&b), "AWS/BedrockMantle") &&
           strstr(bt_buf_str(&b), "Project") == NULL && strstr(bt_buf_str(&b), "AccountId") == NULL,
       "no Project dimension (the mantle route has one set) and no AccountId in any query");

    /* account = 111122223333: every query of that route carries AccountId */
    bt_strlcpy(rt[1].account, "111122223333", sizeof rt[1].account);
    bt_cloudwatch_request_json(&b, rt, q, n, 1795945800, 1795946400, NULL);
    root = cJSON_Parse(bt_buf_str(&b));
    arr = cJSON_GetObjectItemCaseSensitive(root, "MetricDataQueries");
    int with = 0, wrong = 0;
    cJSON_ArrayForEach(it, arr) {
        const cJSON *acct = cJSON_GetObjectItemCaseSensitive(it, "AccountId");
        bool r1 = !strncmp(cJSON_GetObjectItemCaseSensitive(it, "Id")->valuestring, "r1_", 3);
        with += r1 && cJSON_IsString(acct) && !strcmp(acct->valuestring, "111122223333");
        wrong += !r1 && acct != NULL;
    }
    OK(with == 14 && wrong == 0, "AccountId in each of route 1's 14 queries (%d), no other (%d)",
       with, wrong);
    cJSON_Delete(root);
    bt_buf_free(&b);
    rt[1].account[0] = '\0';
}

/* One query per (namespace, metric, dimensions, stat, period, account). */
static void test_dedup(void)
{
    struct bt_route rt[4];
    for (int i = 0; i < 4; i++) {
        bt_route_defaults(&rt[i]);
        bt_strlcpy(rt[i].model, i == 3 ? HAIKU : SONNET, sizeof rt[i].model);
    }
    bt_strlcpy(rt[2].account, "111122223333", sizeof rt[2].account);
    struct bt_cw_query q[64];
    int idx[64], rep[64], n = 0;
    for (int i = 0; i < 4; i++)
        n += bt_cloudwatch_route_queries(&rt[i], i, NULL, q + n, 64 - n);
    for (int i = 0; i < n; i++)
        idx[i] = i;
    /* routes 0 and 1 share SONNET; route 2 is SONNET in another account; 3 is HAIKU */
    int d = bt_cloudwatch_dedup(rt, q, idx, n, rep);
    OK(n == 56 && d == 42, "4 routes x 14 = 56 queries, 42 distinct (routes 0 and 1 share 14)");
    int shared = 0, own = 0;
    for (int i = 0; i < n; i++) {
        shared += q[i].route == 1 && rep[i] == i - 14 && q[rep[i]].route == 0 &&
                  q[rep[i]].signal == q[i].signal;
        own += q[i].route != 1 && rep[i] == i;
    }
    OK(shared == 14 && own == 42, "route 1's queries are route 0's (%d), the rest their own (%d)",
       shared, own);
    int detail = 0;
    for (int i = 0; i < 14; i++)
        detail += bt_cloudwatch_signal_detail(q[i].signal);
    /* the 5-minute tier: p50, p90, p99, client errors, server errors, time to first
     * token and EstimatedTPMQuotaUsage (issue 25: only what the frame needs each minute) */
    OK(detail == 7, "7 of a runtime route's 14 queries are the 5-minute tier (%d)", detail);
    OK(!bt_cloudwatch_signal_detail(BT_SIG_LATENCY_AVG) && !bt_cloudwatch_signal_detail(BT_SIG_THROTTLES) &&
           !bt_cloudwatch_signal_detail(BT_SIG_INVOCATIONS) &&
           !bt_cloudwatch_signal_detail(BT_SIG_INPUT_TOKENS) &&
           !bt_cloudwatch_signal_detail(BT_SIG_OUTPUT_TOKENS) &&
           bt_cloudwatch_signal_detail(BT_SIG_ESTIMATED_TPM),
       "invocations, tokens, average latency and throttles every poll; the estimate every 5 minutes");
}

static void test_batching(void)
{
    /* 1,200 queries at 500 per request: 500 + 500 + 200 = 3 requests */
    OK(bt_cloudwatch_nrequests(1200) == 3, "1,200 queries -> 3 requests");
    OK(bt_cloudwatch_nrequests(500) == 1, "500 queries -> 1 request");
    OK(bt_cloudwatch_nrequests(501) == 2, "501 queries -> 2 requests");
    OK(bt_cloudwatch_nrequests(0) == 0, "no queries, no request");
}

struct got {
    int nsamples;
    char ids[16][32];
    int64_t t[16];
    double v[16];
    char status[8][64];
    int nstatus;
    char messages[256];
};

static void on_sample(void *arg, const char *id, int64_t t, double v)
{
    struct got *g = arg;
    if (g->nsamples < 16) {
        bt_strlcpy(g->ids[g->nsamples], id, sizeof g->ids[0]);
        g->t[g->nsamples] = t;
        g->v[g->nsamples] = v;
    }
    g->nsamples++;
}

static void on_status(void *arg, const char *id, const char *code, const char *detail)
{
    struct got *g = arg;
    if (g->nstatus < 8)
        snprintf(g->status[g->nstatus], sizeof g->status[0], "%s %s %s", id, code, detail);
    g->nstatus++;
}

static void on_message(void *arg, const char *code, const char *value)
{
    struct got *g = arg;
    size_t l = strlen(g->messages);
    snprintf(g->messages + l, sizeof g->messages - l, "%s: %s;", code, value);
}

static bool parse(const char *body, struct got *g, char **tok, char *err, size_t errlen)
{
    memset(g, 0, sizeof *g);
    struct bt_cw_sink sink = {on_sample, on_status, on_message, g};
    return bt_cloudwatch_parse_page(body, strlen(body), &sink, tok, err, errlen);
}

/* The 200 response body of the first exchange in the botocore capture. */
static char *captured_response(void)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/testdata/aws/capture-cloudwatch-json1.0-botocore-1.43.11.txt",
             tap_shared());
    char *text = bt_read_file(path, 1 << 20, NULL);
    if (!text)
        return NULL;
    char *r = strstr(text, "---- response 200");
    char *body = r ? strchr(r, '\n') : NULL;
    char *out = NULL;
    if (body) {
        body++;
        char *end = strchr(body, '\n');
        if (end)
            *end = '\0';
        out = bt_xstrdup(body);
    }
    free(text);
    return out;
}

static void test_parse(void)
{
    struct got g;
    char *tok = NULL;
    char err[256] = "";

    char *cap = captured_response();
    OK(cap != NULL, "captured botocore response found in %s", tap_shared());
    if (cap) {
        bool ok = parse(cap, &g, &tok, err, sizeof err);
        OK(ok, "captured page parses (%s)", err);
        /* "Timestamps":[1.7096244E9,1.7096241E9] are 1709624400 and 1709624100 */
        OK(g.nsamples == 2 && strcmp(g.ids[0], "cpu") == 0 && g.t[0] == 1709624400 &&
               g.t[1] == 1709624100,
           "captured: two datapoints with exponent-notation timestamps");
        NEAR(g.v[0], 45.2, 1e-9, "captured: first value");
        NEAR(g.v[1], 62.1, 1e-9, "captured: second value");
        STREQ(g.status[0], "cpu PartialData ", "captured: PartialData reported");
        STREQ(tok, "opaque-token-abc", "captured: NextToken");
        STREQ(g.messages, "MaxMetricsExceeded: example message;", "captured: top-level message");
        free(tok);
        free(cap);
    }

    /* page 1 of 2: r0_s1 partial, r0_s5 forbidden, r1_s0 complete but empty */
    const char *p1 =
        "{\"MetricDataResults\":["
        "{\"Id\":\"r0_s1\",\"Label\":\"InputTokenCount\",\"Timestamps\":[1795945800,1795945860],"
        "\"Values\":[1200,1300],\"StatusCode\":\"PartialData\"},"
        "{\"Id\":\"r0_s5\",\"Timestamps\":[],\"Values\":[],\"StatusCode\":\"Forbidden\","
        "\"Messages\":[{\"Code\":\"Forbidden\",\"Value\":\"not authorized\"}]},"
        "{\"Id\":\"r1_s0\",\"Timestamps\":[],\"Values\":[],\"StatusCode\":\"Complete\"}],"
        "\"NextToken\":\"page2\",\"Messages\":[]}";
    OK(parse(p1, &g, &tok, err, sizeof err), "page 1 parses");
    OK(g.nsamples == 2 && g.t[1] == 1795945860 && g.v[1] == 1300, "page 1: two samples");
    OK(g.nstatus == 2 && strcmp(g.status[0], "r0_s1 PartialData ") == 0 &&
           strcmp(g.status[1], "r0_s5 Forbidden not authorized") == 0,
       "page 1: PartialData and Forbidden (with its message) reported");
    STREQ(tok, "page2", "page 1: NextToken");
    free(tok);
    /* page 2 appends the rest of r0_s1 and carries no token */
    const char *p2 = "{\"MetricDataResults\":[{\"Id\":\"r0_s1\",\"Timestamps\":[1795945920],"
                     "\"Values\":[1400.5],\"StatusCode\":\"Complete\"}]}";
    OK(parse(p2, &g, &tok, err, sizeof err), "page 2 parses");
    OK(g.nsamples == 1 && g.t[0] == 1795945920 && g.v[0] == 1400.5 && g.nstatus == 0,
       "page 2: the next minute of the same Id, Complete");
    OK(tok == NULL, "page 2: last page");

    int r, sig;
    OK(bt_cloudwatch_parse_id("r12_s3", &r, &sig) && r == 12 && sig == 3, "Id r12_s3 -> 12, 3");
    char qid[32];
    bt_cloudwatch_query_id(12, (enum bt_signal)3, qid, sizeof qid);
    OK(!strcmp(qid, "r12_s3"), "12, 3 -> Id r12_s3 (%s)", qid);
    bt_cloudwatch_query_id(19999, (enum bt_signal)0, qid, sizeof qid);
    OK(!strcmp(qid, "r19999_s0"), "19999, 0 -> Id r19999_s0 (%s)", qid);
    OK(!bt_cloudwatch_parse_id("r12_s99", &r, &sig), "Id with an unknown signal rejected");
    OK(!bt_cloudwatch_parse_id("cpu", &r, &sig), "foreign Id rejected");
    OK(bt_cloudwatch_parse_id("r2_s3_a", &r, &sig) && r == 2 && sig == 3,
       "Id of the other cache spelling r2_s3_a -> 2, 3");
    OK(!bt_cloudwatch_parse_id("r2_s3_b", &r, &sig), "unknown Id suffix rejected");
    {
        /* spelling unknown (check mode): both names of each cache metric, 14 + 2 queries */
        struct bt_route rt;
        bt_route_defaults(&rt);
        bt_strlcpy(rt.model, "anthropic.claude-3-haiku-20240307-v1:0", sizeof rt.model);
        struct bt_cw_spelling both = {.both = true};
        struct bt_cw_query q[BT_SIG_COUNT + 4];
        int n = bt_cloudwatch_route_queries(&rt, 0, &both, q, BT_SIG_COUNT + 4);
        int alts = 0;
        for (int i = 0; i < n; i++)
            alts += q[i].alt && (!strcmp(q[i].metric, "CacheReadInputTokens") ||
                                 !strcmp(q[i].metric, "CacheWriteInputTokens"));
        OK(n == 16 && alts == 2, "both spellings: 16 queries, 2 of them the other spelling (%d, %d)", n, alts);
    }

    /* malformed bodies: a clear error, nothing delivered */
    const char *bad[] = {
        "{\"MetricDataResults\":[{\"Id\":\"r0_s1\",\"Timestamps\":[1,2],\"Values\":[1]}]}",
        "{\"MetricDataResults\":[{\"Id\":\"r0_s1\",\"Timestamps\":[\"x\"],\"Values\":[1]}]}",
        "{\"MetricDataResults\":[{\"Id\":\"r0_s1\",\"Timestamps\":[60],\"Values\":[1]}",
        "<html>502</html>",
        "",
        "{\"MetricDataResults\":{}}",
    };
    for (size_t i = 0; i < BT_ARRAY_LEN(bad); i++) {
        err[0] = '\0';
        bool ok = parse(bad[i], &g, &tok, err, sizeof err);
        OK(!ok && g.nsamples == 0 && err[0] && tok == NULL, "malformed body %zu rejected: %s", i,
           err);
    }
}

static void test_settled(void)
{
    /* lag 60 s: minute m is settled once now >= m + 60 + 60 + 60 = m + 180.
     * T = 1795946400 (10:00:00Z). Polls at 10:00:25, 10:01:25, 10:02:25, 10:03:25
     * with a 10-minute backfill:
     *   poll 1: end 10:00, start 09:50 -> 09:50..09:59; newest settled
     *           floor(10:00:25 - 180) = 09:57
     *   poll 2: start 09:58, end 10:01 -> 09:58, 09:59, 10:00; settled 09:58
     *   poll 3: start 09:59, end 10:02 -> 09:59..10:01; settled 09:59
     *   poll 4: start 10:00, end 10:03 -> 10:00..10:02; settled 10:00
     * A settled minute is fetched at most once after it settled: 09:58 (settled
     * at 10:01:00) is fetched by poll 2 and never again. */
    const int64_t T = 1795946400;
    const double lag = 60;
    OK(bt_cloudwatch_newest_settled(T + 25, lag) == T - 180, "newest settled at 10:00:25 = 09:57");
    OK(bt_cloudwatch_newest_settled(T + 60, lag) == T - 120, "09:58 settles exactly at 10:01:00");
    OK(bt_cloudwatch_newest_settled(T + 59, lag) == T - 180, "... not at 10:00:59");
    int64_t want_start[4] = {T - 600, T - 120, T - 60, T};
    int64_t want_end[4] = {T, T + 60, T + 120, T + 180};
    int64_t want_settled[4] = {T - 180, T - 120, T - 60, T};
    int fetched_settled[20] = {0}; /* minutes T-600 .. T+540 */
    int64_t through = 0;
    bool all = true;
    for (int p = 0; p < 4; p++) {
        int64_t now = T + 25 + 60 * p;
        int64_t start = bt_cloudwatch_route_start(now, through, 10);
        int64_t end = bt_cloudwatch_end(now);
        all = all && start == want_start[p] && end == want_end[p];
        for (int64_t m = start; m < end; m += 60)
            if (now >= m + 180)
                fetched_settled[(m - (T - 600)) / 60]++;
        through = bt_cloudwatch_settle(now, lag, end, through);
        all = all && through == want_settled[p];
    }
    OK(all, "four polls: windows and settled marks as computed by hand");
    int twice = 0;
    for (int i = 0; i < 20; i++)
        twice += fetched_settled[i] > 1;
    OK(twice == 0, "no minute fetched twice once settled");
    /* a failed poll leaves the mark: the next poll refetches from there */
    OK(bt_cloudwatch_route_start(T + 300, T, 10) == T + 60, "after a failure: from the mark");
    /* after a 2-hour outage only the backfill window is fetched */
    OK(bt_cloudwatch_route_start(T + 7200, T, 10) == T + 7200 - 600,
       "long outage: no more than the backfill");
    /* settle never moves back, never past the window */
    OK(bt_cloudwatch_settle(T + 25, lag, T, T) == T, "settle keeps the newer mark");
    OK(bt_cloudwatch_settle(T + 3600, lag, T, 0) == T - 60, "settle stops at the window end");

    /* backfill: check mode 10 minutes at 00:05 -> 10; at 10:00 since midnight
     * = 601 minutes; live mode at least 180; the store's history caps both */
    OK(bt_cloudwatch_backfill_minutes(1795910700, BT_MODE_ONCE, 1440) == 10,
       "check at 00:05: 10 minutes");
    OK(bt_cloudwatch_backfill_minutes(T, BT_MODE_ONCE, 1440) == 10,
       "check at 10:00: 10 minutes (the day's total comes from one-day sums)");
    OK(bt_cloudwatch_backfill_minutes(T, BT_MODE_LIVE, 1440) == 601, "live at 10:00: since midnight");
    {
        /* a runtime route's day sums: 4 queries of hourly datapoints (Period 3600, summed
         * from midnight: input, output, cache writes, cache reads), 6 with both cache
         * spellings; a cache metric ListMetrics does not list is not asked (one metric
         * per route-hour fewer each); none for mantle */
        struct bt_route rt;
        bt_route_defaults(&rt);
        bt_strlcpy(rt.model, "anthropic.claude-3-haiku-20240307-v1:0", sizeof rt.model);
        struct bt_cw_query q[8];
        struct bt_cw_spelling both = {.both = true};
        int n1 = bt_cloudwatch_day_queries(&rt, 0, NULL, q, 8);
        OK(n1 == 4 && q[0].period == 3600 && q[0].signal == BT_SIG_DAY_INPUT_TOKENS &&
               q[3].signal == BT_SIG_DAY_CACHE_READ && q[3].period == 3600 &&
               !strcmp(q[3].metric, "CacheReadInputTokenCount"),
           "day sums: 4 queries, Period 3600 (hourly), the cache reads' CacheReadInputTokenCount");
        OK(bt_cloudwatch_day_queries(&rt, 0, &both, q, 8) == 6 && q[5].signal == BT_SIG_DAY_CACHE_READ &&
               q[5].alt && !strcmp(q[5].metric, "CacheReadInputTokens"),
           "day sums with both spellings: 6");
        struct bt_cw_spelling noread = {.no_read = true}, none = {.no_read = true, .no_write = true};
        struct bt_cw_spelling old = {.cache_read = "CacheReadInputTokens"};
        OK(bt_cloudwatch_day_queries(&rt, 0, &noread, q, 8) == 3 && q[2].signal == BT_SIG_DAY_CACHE_WRITE,
           "no cache-read metric listed: no cache-read day sum");
        OK(bt_cloudwatch_day_queries(&rt, 0, &none, q, 8) == 2, "no cache metric listed: 2");
        OK(bt_cloudwatch_day_queries(&rt, 0, &old, q, 8) == 4 &&
               !strcmp(q[3].metric, "CacheReadInputTokens"), "the listed spelling is asked");
        rt.endpoint = BT_EP_MANTLE;
        OK(bt_cloudwatch_day_queries(&rt, 0, NULL, q, 8) == 0, "mantle: no day sums");
    }
    OK(bt_cloudwatch_backfill_minutes(1795910700, BT_MODE_LIVE, 1440) == 180, "live: 3 hours");
    OK(bt_cloudwatch_backfill_minutes(T, BT_MODE_LIVE, 120) == 120, "capped by history");
    /* the day's sums since 00:00 UTC: check always; live when history cannot reach
     * back to midnight (30m at 12:00 kept 30 of 720 minutes); never for a backfill */
    OK(bt_cloudwatch_day_sums(BT_MODE_ONCE, 1440, false), "check asks the day's sums");
    OK(bt_cloudwatch_day_sums(BT_MODE_LIVE, 30, false), "live with history 30m asks them");
    OK(!bt_cloudwatch_day_sums(BT_MODE_LIVE, 1440, false), "live with a day of history sums its minutes");
    OK(!bt_cloudwatch_day_sums(BT_MODE_ONCE, 30, true), "a backfill window does not");
}

static void on_metric(void *arg, const char *metric, const char *model, const char *account)
{
    bt_buf_printf(arg, "%s@%s%s%s;", metric, model, account ? "#" : "", account ? account : "");
}

static void test_list_and_names(void)
{
    const char *page =
        "{\"Metrics\":[{\"Namespace\":\"AWS/Bedrock\",\"MetricName\":\"CacheReadInputTokens\","
        "\"Dimensions\":[{\"Name\":\"ModelId\",\"Value\":\"" SONNET "\"}]},"
        "{\"Namespace\":\"AWS/Bedrock\",\"MetricName\":\"Invocations\",\"Dimensions\":[]},"
        "{\"Namespace\":\"AWS/Bedrock\",\"MetricName\":\"Invocations\","
        "\"Dimensions\":[{\"Name\":\"ModelId\",\"Value\":\"" HAIKU "\"}]}],"
        "\"NextToken\":\"more\"}";
    struct bt_buf seen = {0};
    char *tok = NULL;
    char err[128] = "";
    bool ok = bt_cloudwatch_parse_list(page, strlen(page), on_metric, &seen, &tok, err, sizeof err);
    OK(ok, "ListMetrics page parses (%s)", err);
    STREQ(bt_buf_str(&seen), "CacheReadInputTokens@" SONNET ";Invocations@" HAIKU ";",
          "ListMetrics: metrics with a ModelId dimension only");
    STREQ(tok, "more", "ListMetrics: NextToken");
    free(tok);
    bt_buf_free(&seen);
    OK(!bt_cloudwatch_parse_list("{\"Metrics\":7}", 13, on_metric, &seen, &tok, err, sizeof err),
       "ListMetrics: wrong shape rejected");

    bt_cloudwatch_list_json(&seen, NULL, false, NULL);
    STREQ(bt_buf_str(&seen), "{\"Namespace\":\"AWS/Bedrock\",\"Dimensions\":[{\"Name\":\"ModelId\"}]}",
          "ListMetrics request body");
    bt_cloudwatch_list_json(&seen, "t", true, "111122223333");
    STREQ(bt_buf_str(&seen),
          "{\"Namespace\":\"AWS/Bedrock\",\"Dimensions\":[{\"Name\":\"ModelId\"}],"
          "\"IncludeLinkedAccounts\":true,\"OwningAccount\":\"111122223333\",\"NextToken\":\"t\"}",
          "ListMetrics in a monitoring account: linked accounts, one owning account");
    bt_buf_free(&seen);
    /* a monitoring account's answer: OwningAccounts maps 1:1 onto Metrics */
    const char *linked =
        "{\"Metrics\":[{\"MetricName\":\"Invocations\",\"Dimensions\":[{\"Name\":\"ModelId\",\"Value\":\"m1\"}]},"
        "{\"MetricName\":\"Invocations\",\"Dimensions\":[{\"Name\":\"ModelId\",\"Value\":\"m2\"}]}],"
        "\"OwningAccounts\":[\"111122223333\",\"444455556666\"]}";
    OK(bt_cloudwatch_parse_list(linked, strlen(linked), on_metric, &seen, &tok, err, sizeof err),
       "ListMetrics with OwningAccounts parses");
    STREQ(bt_buf_str(&seen), "Invocations@m1#111122223333;Invocations@m2#444455556666;",
          "each metric with its owning account");
    bt_buf_free(&seen);

    char name[64];
    bt_cloudwatch_short_name(SONNET, name, sizeof name);
    STREQ(name, "us.claude-sonnet-4-5", "short name of a cross-region profile");
    bt_cloudwatch_short_name(HAIKU, name, sizeof name);
    STREQ(name, "claude-3-haiku", "short name drops vendor, date and version");
    bt_cloudwatch_short_name("global.anthropic.claude-opus-4-5-20251101-v1:0", name, sizeof name);
    STREQ(name, "global.claude-opus-4-5", "short name of a global profile");
    bt_cloudwatch_short_name("meta.llama3-1-70b-instruct-v1:0", name, sizeof name);
    STREQ(name, "llama3-1-70b-instruct", "short name of a Llama model");
}

int main(void)
{
    test_request();
    test_batching();
    test_dedup();
    test_parse();
    test_settled();
    test_list_and_names();
    return tap_done();
}
