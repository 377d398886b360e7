/* ListFoundationModels answers (collectors/catalogue.c), hostile ones included: each
 * model's modelLifecycle status (ACTIVE / LEGACY only) and its times, ISO 8601 as the
 * bedrock service model's timestampFormat says, or epoch seconds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/catalogue.h"
#include "core/util.h"
#include "tests/tap.h"

struct got {
    struct bt_fmodel m[8];
    int n;
};

static void on_model(void *arg, const struct bt_fmodel *m)
{
    struct got *g = arg;
    if (g->n < 8)
        g->m[g->n++] = *m;
}

static void test_parse(void)
{
    const char *body =
        "{\"modelSummaries\":["
        "{\"modelArn\":\"arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-3-haiku-20240307-v1:0\","
        "\"modelId\":\"anthropic.claude-3-haiku-20240307-v1:0\",\"modelLifecycle\":{\"status\":\"LEGACY\","
        "\"legacyTime\":\"2026-03-01T00:00:00Z\",\"publicExtendedAccessTime\":\"2026-06-01T00:00:00Z\","
        "\"endOfLifeTime\":1788220800}},"
        "{\"modelId\":\"anthropic.claude-sonnet-5\",\"modelLifecycle\":{\"status\":\"ACTIVE\"}},"
        "{\"modelId\":\"x.bad-status\",\"modelLifecycle\":{\"status\":\"RETIRED\"}},"
        "{\"modelId\":\"x.\\u001b[2Jescape\",\"modelLifecycle\":{\"status\":\"ACTIVE\"}},"
        "{\"modelId\":5,\"modelLifecycle\":{\"status\":\"ACTIVE\"}},"
        "{\"modelId\":\"x.no-lifecycle\"},"
        "{\"modelId\":\"x.bad-date\",\"modelLifecycle\":{\"status\":\"LEGACY\",\"endOfLifeTime\":\"soon\"}}]}";
    struct got g = {0};
    char err[160] = "";
    OK(bt_fmodels_parse(body, strlen(body), on_model, &g, err, sizeof err) && g.n == 3,
       "three well-formed models of seven (%s, %d)", err, g.n);
    OK(!strcmp(g.m[0].status, "LEGACY") && g.m[0].legacy_at == 1772323200 &&
           g.m[0].extended_at == 1780272000 && g.m[0].eol_at == 1788220800,
       "LEGACY with its times: ISO 8601 and epoch seconds (%lld %lld %lld)", (long long)g.m[0].legacy_at,
       (long long)g.m[0].extended_at, (long long)g.m[0].eol_at);
    char dates[224];
    bt_fmodel_dates(&g.m[0], dates, sizeof dates);
    STREQ(dates, "legacy since 2026-03-01, public extended access (higher prices) from 2026-06-01, end of life 2026-09-01",
          "the dates in words");
    OK(!strcmp(g.m[1].status, "ACTIVE") && !g.m[1].legacy_at && !strcmp(g.m[1].id, "anthropic.claude-sonnet-5"),
       "ACTIVE, no dates");
    bt_fmodel_dates(&g.m[1], dates, sizeof dates);
    STREQ(dates, "", "no dates, no words");
    OK(!strcmp(g.m[2].id, "x.bad-date") && !strcmp(g.m[2].status, "LEGACY") && !g.m[2].eol_at,
       "a date that is not one: the status kept, no date shown");
    OK(!bt_fmodels_parse("[]", 2, on_model, &g, err, sizeof err) && strstr(err, "ListFoundationModels"),
       "not an object: refused (%s)", err);
    OK(!bt_fmodels_parse("{\"modelSummaries\":{}}", 20, on_model, &g, err, sizeof err),
       "modelSummaries not a list: refused");
    g.n = 0;
    OK(bt_fmodels_parse("{}", 2, on_model, &g, err, sizeof err) && g.n == 0, "no models: none");
}

int main(void)
{
    test_parse();
    return tap_done();
}
