#include "collectors/demo.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/skeleton.h"
#include "core/util.h"

/*
 * The story (story minute = minutes since 10:00 UTC, modulo 30):
 *   triage      retry storm 12-20: retries reach half of offered load, completions
 *               stay flat, throttles while its quota (shared with triage-app) still
 *               has 40% left: the cause is the retries, not max_tokens. Its worker
 *               b restarts at minute 8 (its admission counters start again from 0).
 *   summarize   max_tokens 64,000 for ~300-token answers: each call holds 66,000 of a
 *               400,000 quota while in flight, so about 6 fit at once; from minute 6
 *               to 18 short bursts are throttled while EstimatedTPMQuotaUsage sits
 *               near 6% of quota. Only ~0.25 calls are in flight on average: its
 *               headroom is ~90%, warn (oversized max_tokens), not crit.
 *   workers     10 workers x 4 parallel calls = 40 in flight against a tested 25
 *               from minute 4. A quarter of its calls are served by a reserved
 *               service tier (ResolvedServiceTier=reserved): taken out of the
 *               on-demand quota's use and measured against the reservation. From 17
 *               to 26 its calls ramp +15 a minute (a forecast: the quota within the
 *               hour at this trend).
 *   agents      a bedrock-mantle route: input and output quotas apart; input
 *               demand grows 20-26; from 24 to 26 answers run long (6,500 output tokens
 *               each): the output quota nears exhaustion, answers would be cut off.
 *   backfill    an offline backlog on online quota; its daily tokens cross 80%
 *               of the daily quota around minute 15.
 *   legacy      nothing but EstimatedTPMQuotaUsage; quota is a published default; its
 *               published default of 95 requests a minute binds before the tokens do
 *               (80 calls a minute: about 16% left on the rpm side, warn).
 *               From minute 20 the service slows: output tokens per second halve
 *               at the same traffic and answer length (SLOWDOWN).
 *   experiments quota unknown; its Region's CloudWatch fails from 18 to 26; its
 *               config says burndown = 1 where AWS's estimate shows 5.
 *   triage-app  an application inference profile on triage's model: the two share
 *               one quota; its CloudWatch queries are refused from 22 to 25, so
 *               triage's group headroom is an upper bound (PARTIAL_GROUP).
 *   preview     a new model whose applied quota is 0 (access not granted yet):
 *               every call throttles.
 *   luna        a bedrock-mantle route whose quotas Service Quotas names "[bedrock-mantle
 *               endpoint] Input/Output tokens per minute for GPT-5.6 Luna" (vendor
 *               dropped), matched by name.
 *   opus48      Claude Opus 4.8, burndown 15: settled = input + output x 15; its quota
 *               was matched by UsageMetric; the detail view shows the bound input +
 *               max_tokens x 15 beside R.
 *   fable       a mantle model with no published quota (internal capacity): information.
 *   reserved    a provisioned-model ARN: model-unit capacity, in no quota group.
 *   legacy      also: ListMetrics lists LegacyModelInvocations for it (LEGACY_MODEL).
 *   workers     also: from 4 to 8 a nightly job outside the config (its own application
 *               inference profile on workers' model) draws on its quota (UNSEEN_CALLERS).
 *   nightly-eval an offline evaluation script on Claude Haiku 4.5 (online quota: a batch
 *               candidate) spending about $4/h at list prices; from minute 14 to 21 it
 *               runs away (8x the calls, about $32/h): SPEND_SPIKE from its second
 *               minute (evaluated minute 15, on screen from story minute 18).
 * Prices: the shipped table (data/prices.conf) prices most routes; luna, opus48, fable
 * and reserved (a model unit has no list price) have none: their cost is unknown, never
 * 0, with the reason.
 * Numbers follow the headroom contract version 3 (docs/headroom.md).
 *
 * Admission counters are written as an application's two workers export them: raw
 * cumulative readings per series (route and worker labels) every DEMO_ADM_STEP
 * seconds, which core rates per series and sums by route, resets included, as for
 * a real scrape (core/counters.c); gauges are the route's sum at the scrape and the
 * output-token quantiles what the collector derives from the histogram buckets.
 */

enum { R_TRIAGE, R_SUMMARIZE, R_WORKERS, R_AGENTS, R_BACKFILL, R_LEGACY, R_EXPERIMENTS,
       R_TRIAGE_APP, R_PREVIEW, R_LUNA, R_OPUS48, R_FABLE, R_RESERVED, R_NIGHTLY, R_N };

#define TRIAGE_MODEL "us.anthropic.claude-sonnet-4-5-20250929-v1:0"

static const struct demo_route {
    const char *name, *model, *base_model, *region;
    enum bt_endpoint ep;
    enum bt_priority prio;
    double max_tokens;         /* config side; NAN: not set */
    const char *admission;     /* shown as the route's admission source */
} demo_routes[R_N] = {
    [R_TRIAGE] = {"triage", TRIAGE_MODEL, NULL, "us-east-1", BT_EP_RUNTIME, BT_PRIO_ONLINE, 1024,
                  "demo://triage"},
    [R_SUMMARIZE] = {"summarize", "anthropic.claude-3-5-haiku-20241022-v1:0", NULL, "us-east-1",
                     BT_EP_RUNTIME, BT_PRIO_ONLINE, 64000, NULL},
    [R_WORKERS] = {"workers", "anthropic.claude-3-haiku-20240307-v1:0", NULL, "us-east-1",
                   BT_EP_RUNTIME, BT_PRIO_ONLINE, NAN, "demo://workers"},
    [R_AGENTS] = {"agents", "anthropic.claude-opus-4-7", NULL, "us-east-1", BT_EP_MANTLE,
                  BT_PRIO_ONLINE, 2000, NULL},
    [R_BACKFILL] = {"backfill", "meta.llama3-3-70b-instruct-v1:0", NULL, "us-west-2",
                    BT_EP_RUNTIME, BT_PRIO_OFFLINE, 1024, NULL},
    [R_LEGACY] = {"legacy", "amazon.nova-lite-v1:0", NULL, "us-east-1", BT_EP_RUNTIME,
                  BT_PRIO_ONLINE, NAN, NULL},
    [R_EXPERIMENTS] = {"experiments", "eu.anthropic.claude-haiku-4-5-20251001-v1:0", NULL,
                       "eu-west-1", BT_EP_RUNTIME, BT_PRIO_ONLINE, 2048, NULL},
    [R_TRIAGE_APP] = {"triage-app",
                      "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/tri4ge0app1",
                      TRIAGE_MODEL, "us-east-1", BT_EP_RUNTIME, BT_PRIO_ONLINE, 1024, NULL},
    [R_PREVIEW] = {"preview", "anthropic.claude-opus-4-5-20251101-v1:0", NULL, "us-east-1",
                   BT_EP_RUNTIME, BT_PRIO_ONLINE, 4096, NULL},
    [R_LUNA] = {"luna", "openai.gpt-5.6-luna", NULL, "us-east-1", BT_EP_MANTLE, BT_PRIO_ONLINE,
                4000, NULL},
    [R_OPUS48] = {"opus48", "us.anthropic.claude-opus-4-8", NULL, "us-east-1", BT_EP_RUNTIME,
                  BT_PRIO_ONLINE, 1000, NULL},
    [R_FABLE] = {"fable", "anthropic.claude-fable-5-1", NULL, "us-east-1", BT_EP_MANTLE,
                 BT_PRIO_ONLINE, 1500, NULL},
    [R_RESERVED] = {"reserved", "arn:aws:bedrock:us-east-1:123456789012:provisioned-model/demo0pt1",
                    NULL, "us-east-1", BT_EP_RUNTIME, BT_PRIO_ONLINE, 512, NULL},
    [R_NIGHTLY] = {"nightly-eval", "anthropic.claude-haiku-4-5-20251001-v1:0", NULL, "us-east-1",
                   BT_EP_RUNTIME, BT_PRIO_OFFLINE, 1024, NULL},
};

/* Quotas as the demo account's Service Quotas would report them. */
static const struct demo_quota {
    int route;
    enum bt_quota_kind kind;
    double value;
    enum bt_quota_source source;
    const char *code, *name;
    enum bt_quota_match by;
} demo_quotas[] = {
    {R_TRIAGE, BT_Q_TPM, 2000000, BT_QS_SERVICE_QUOTAS, "L-DEM00001",
     "Cross-region model inference tokens per minute for Anthropic Claude Sonnet 4.5 V1", BT_QM_NAME},
    {R_TRIAGE_APP, BT_Q_TPM, 2000000, BT_QS_SERVICE_QUOTAS, "L-DEM00001",
     "Cross-region model inference tokens per minute for Anthropic Claude Sonnet 4.5 V1", BT_QM_NAME},
    {R_PREVIEW, BT_Q_TPM, 0, BT_QS_SERVICE_QUOTAS, "L-DEM00008",
     "On-demand model inference tokens per minute for Anthropic Claude Opus 4.5", BT_QM_NAME},
    {R_NIGHTLY, BT_Q_TPM, 2000000, BT_QS_SERVICE_QUOTAS, "L-DEM00030",
     "On-demand model inference tokens per minute for Anthropic Claude Haiku 4.5", BT_QM_NAME},
    {R_TRIAGE, BT_Q_RPM, 2000, BT_QS_SERVICE_QUOTAS, "L-DEM00002",
     "Cross-region model inference requests per minute for Anthropic Claude Sonnet 4.5 V1", BT_QM_NAME},
    {R_SUMMARIZE, BT_Q_TPM, 400000, BT_QS_SERVICE_QUOTAS, "L-DEM00003",
     "On-demand model inference tokens per minute for Anthropic Claude 3.5 Haiku", BT_QM_NAME},
    {R_WORKERS, BT_Q_TPM, 2000000, BT_QS_SERVICE_QUOTAS, "L-DEM00004",
     "On-demand model inference tokens per minute for Anthropic Claude 3 Haiku", BT_QM_NAME},
    {R_BACKFILL, BT_Q_TPM, 1500000, BT_QS_SERVICE_QUOTAS, "L-DEM00005",
     "On-demand model inference tokens per minute for Meta Llama 3.3 70B Instruct", BT_QM_NAME},
    {R_BACKFILL, BT_Q_TPD, 290000000, BT_QS_SERVICE_QUOTAS, "L-DEM00006",
     "Model invocation max tokens per day for Meta Llama 3.3 70B Instruct (doubled for "
     "cross-region calls)", BT_QM_NAME},
    {R_LEGACY, BT_Q_TPM, 1000000, BT_QS_DEFAULT, "L-DEM00007",
     "On-demand model inference tokens per minute for Amazon Nova Lite", BT_QM_NAME},
    {R_LEGACY, BT_Q_RPM, 95, BT_QS_DEFAULT, "L-DEM00009",
     "On-demand model inference requests per minute for Amazon Nova Lite", BT_QM_NAME},
    {R_LUNA, BT_Q_INPUT_TPM, 30000000, BT_QS_SERVICE_QUOTAS, "L-DEM00010",
     "[bedrock-mantle endpoint] Input tokens per minute for GPT-5.6 Luna", BT_QM_NAME},
    {R_LUNA, BT_Q_OUTPUT_TPM, 6000000, BT_QS_SERVICE_QUOTAS, "L-DEM00011",
     "[bedrock-mantle endpoint] Output tokens per minute for GPT-5.6 Luna", BT_QM_NAME},
    {R_OPUS48, BT_Q_TPM, 4000000, BT_QS_SERVICE_QUOTAS, "L-DEM00012",
     "Cross-region model inference tokens per minute for Claude Opus 4.8", BT_QM_USAGE_METRIC},
    {R_FABLE, BT_Q_INPUT_TPM, NAN, BT_QS_UNKNOWN, "",
     BT_MANTLE_NO_QUOTA ": Service Quotas lists no bedrock-mantle input-tokens quota for "
     "anthropic.claude-fable-5-1; an increase goes through AWS Support", BT_QM_NONE},
    {R_FABLE, BT_Q_OUTPUT_TPM, NAN, BT_QS_UNKNOWN, "",
     BT_MANTLE_NO_QUOTA ": Service Quotas lists no bedrock-mantle output-tokens quota for "
     "anthropic.claude-fable-5-1; an increase goes through AWS Support", BT_QM_NONE},
};

/* seconds after a minute ends before the demo "publishes" it: the default
 * cloudwatch_lag, so the evaluation frame (minute + 60 s + lag) settles each minute
 * as it arrives */
#define DEMO_CW_LAG 120

/* ---- who holds the quota (issue 35) ----
 * triage's two workers are two teams' (worker a team=search, b team=ads) and do not
 * carry equal load: search sends DEMO_SEARCH_SHARE of triage's calls. Each worker's
 * counters and its calls in flight are its own series, so the shares by team read them
 * per series; the route's sums are what they were. triage-app, the application
 * inference profile on triage's quota, is tagged team=support (attribute_by =
 * tag:team), as ListTagsForResource would say. */
#define DEMO_SEARCH_SHARE 0.75 /* a binary fraction: every worker's total stays exact, so a
                                * replay's rates are check's to the last bit */

static void demo_share_config(struct bt_config *cfg)
{
    bt_strlcpy(cfg->attribute_tag, "team", sizeof cfg->attribute_tag);
}

/* Worker w's part of route r's load. */
static double worker_part(int r, int w)
{
    if (r != R_TRIAGE)
        return 1.0 / 2; /* DEMO_WORKERS */
    return w == 0 ? DEMO_SEARCH_SHARE : 1 - DEMO_SEARCH_SHARE;
}

static const char *worker_team(int r, int w)
{
    return r == R_TRIAGE ? (w == 0 ? "search" : "ads") : NULL;
}

void bt_demo_config(struct bt_config *cfg)
{
    demo_share_config(cfg);
    for (int i = 0; i < R_N; i++) {
        const struct demo_route *d = &demo_routes[i];
        int r = bt_config_add_route(cfg, d->name);
        struct bt_route *rt = &cfg->routes[r];
        bt_strlcpy(rt->model, d->model, sizeof rt->model);
        if (d->base_model) {
            bt_strlcpy(rt->base_model, d->base_model, sizeof rt->base_model);
            rt->inference = bt_inference_from_model(d->base_model);
            rt->inference_set = true;
        }
        bt_strlcpy(rt->region, d->region, sizeof rt->region);
        rt->endpoint = d->ep;
        rt->priority = d->prio;
        rt->max_tokens = d->max_tokens;
        if (d->admission)
            bt_strlcpy(rt->admission, d->admission, sizeof rt->admission);
        if (i == R_AGENTS) {
            rt->quota[BT_Q_INPUT_TPM] = (struct bt_quota){20000000, BT_QS_CONFIG, "",
                                                          "quota_input_tpm in config"};
            rt->quota[BT_Q_OUTPUT_TPM] = (struct bt_quota){4000000, BT_QS_CONFIG, "",
                                                           "quota_output_tpm in config"};
            rt->quota_match[BT_Q_INPUT_TPM] = rt->quota_match[BT_Q_OUTPUT_TPM] = BT_QM_CONFIG;
        }
        if (i == R_WORKERS) {
            rt->concurrency_limit = 25;
            rt->quota[BT_Q_RES_INPUT_TPM] = (struct bt_quota){800000, BT_QS_CONFIG, "",
                                                              "quota_reserved_input_tpm in config"};
            rt->quota[BT_Q_RES_OUTPUT_TPM] = (struct bt_quota){100000, BT_QS_CONFIG, "",
                                                               "quota_reserved_output_tpm in config"};
        }
        if (i == R_EXPERIMENTS) {
            rt->burndown = 1; /* a wrong `burndown = 1` in the config: BURNDOWN_MISMATCH */
            rt->burndown_source = "config";
        }
    }
    if (!cfg->region[0])
        bt_strlcpy(cfg->region, "us-east-1", sizeof cfg->region);
    bt_config_finish(cfg);
}

/* Deterministic jitter in [-1, 1] from (route, minute, salt). */
static double jitter(int route, int64_t minute, int salt)
{
    uint64_t x = (uint64_t)(minute / 60) * 0x9E3779B97F4A7C15ull ^ (uint64_t)(route * 131 + salt);
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return (double)(x % 20001) / 10000.0 - 1.0;
}

static double vary(double v, double pct, int route, int64_t minute, int salt)
{
    return round(v * (1 + pct * jitter(route, minute, salt)));
}

static int64_t demo_t0 = BT_DEMO_T0;

int64_t bt_demo_t0(void)
{
    return demo_t0;
}

void bt_demo_set_t0(int64_t t0)
{
    demo_t0 = t0 - ((t0 % 60) + 60) % 60;
}

/* Story minute: -1 before 10:00 (the calm history), else minutes since 10:00 mod 30. */
static int story(int64_t minute)
{
    if (minute < demo_t0)
        return -1;
    return (int)(((minute - demo_t0) / 60) % BT_DEMO_STORY_MINUTES);
}

/* Retry-storm intensity for triage: a triangle over minutes 12..20, peak at 16. */
static double storm(int k)
{
    if (k < 12 || k > 20)
        return 0;
    return 1 - fabs((double)k - 16) / 4;
}

struct cw_minute {
    double v[BT_SIG_COUNT];    /* NAN: not published this minute */
};

static void cw_values(int r, int64_t m, struct cw_minute *o)
{
    for (int i = 0; i < BT_SIG_COUNT; i++)
        o->v[i] = NAN;
    int k = story(m);
    double inv = 0, in_avg = 0, out_avg = 0, thr = 0, p50 = 800, p99 = 3000, cw_avg = 0;
    double burndown = 1;
    switch (r) {
    case R_TRIAGE: {
        double s = storm(k);
        inv = 300, in_avg = 1500, out_avg = 250, cw_avg = 67, burndown = 5;
        thr = round(60 * s);
        p50 = 900 + 600 * s, p99 = 4100 + 5000 * s;
        break;
    }
    case R_SUMMARIZE:
        inv = k >= 6 && k < 18 ? 10 : (k >= 18 ? 5 : 4);
        in_avg = 2000, out_avg = 300, burndown = 5; /* Claude 3.5 Haiku: 5, as every 4.7 and below */
        thr = k >= 6 && k < 18 ? 2 : 0;
        p50 = 1200, p99 = 3500;
        break;
    case R_WORKERS:
        /* from minute 17 a ramp: +15 calls a minute to 26 (the forecast's story) */
        inv = k >= 17 && k < 27 ? 200 + 15 * (k - 16) : k >= 4 ? 200 : 120;
        in_avg = 3000, out_avg = 400, burndown = 5; /* Claude 3 Haiku: 5 */
        p50 = 2000, p99 = 7000;
        break;
    case R_AGENTS:
        inv = k >= 20 && k < 27 ? 520 : 400;
        in_avg = 30000, out_avg = k >= 24 && k < 27 ? 6500 : 800;
        break;
    case R_BACKFILL:
        inv = k >= 5 ? 400 : 150;
        in_avg = 2000, out_avg = 500;
        p50 = 3000, p99 = 9000;
        break;
    case R_LEGACY:
        inv = 80, in_avg = 2000, out_avg = 500;
        p50 = 700, p99 = 2100;
        break;
    case R_EXPERIMENTS:
        inv = 30, in_avg = 1200, out_avg = 600, burndown = 5; /* Haiku 4.5's true burndown */
        p50 = 600, p99 = 1900;
        break;
    case R_TRIAGE_APP:
        inv = 40, in_avg = 1200, out_avg = 300, burndown = 5;
        p50 = 800, p99 = 2600;
        break;
    case R_OPUS48:
        inv = 60, in_avg = 3000, out_avg = 400, burndown = 15;
        p50 = 2500, p99 = 8000;
        break;
    case R_RESERVED:
        inv = 100, in_avg = 1000, out_avg = 200;
        p50 = 700, p99 = 2000;
        break;
    case R_LUNA:
        inv = 200, in_avg = 20000, out_avg = 1500;
        break;
    case R_FABLE:
        inv = 50, in_avg = 5000, out_avg = 600;
        break;
    case R_NIGHTLY:
        /* a runaway from 14 to 21: 8x the calls (SPEND_SPIKE) */
        inv = k >= 14 && k < 22 ? 160 : 20;
        in_avg = 1500, out_avg = 300, burndown = 5; /* Haiku 4.5: 5 */
        p50 = 900, p99 = 2500;
        break;
    case R_PREVIEW:
        /* applied quota 0: nothing is accepted, every call throttles */
        o->v[BT_SIG_INVOCATIONS] = 0;
        o->v[BT_SIG_THROTTLES] = vary(12, 0.2, r, m, 1);
        return;
    default:
        return;
    }
    inv = vary(inv, 0.03, r, m, 1);
    double in = round(inv * vary(in_avg, 0.02, r, m, 2));
    double out = round(inv * vary(out_avg, 0.05, r, m, 3));
    o->v[BT_SIG_INVOCATIONS] = inv;
    o->v[BT_SIG_INPUT_TOKENS] = in;
    o->v[BT_SIG_OUTPUT_TOKENS] = out;
    if (r == R_WORKERS) {
        /* the reserved tier serves a quarter of the calls (ResolvedServiceTier=reserved) */
        double tier = round(inv / 4);
        o->v[BT_SIG_TIER_RES_INVOCATIONS] = tier;
        o->v[BT_SIG_TIER_RES_INPUT] = round(in * tier / inv);
        o->v[BT_SIG_TIER_RES_OUTPUT] = round(out * tier / inv);
    }
    if (r == R_AGENTS || r == R_LUNA || r == R_FABLE) {
        o->v[BT_SIG_CLIENT_ERRORS] = 0;
        return; /* mantle publishes no latency, throttle or estimate metric */
    }
    double cw = round(inv * cw_avg);
    o->v[BT_SIG_CACHE_WRITE] = cw;
    o->v[BT_SIG_CACHE_READ] = round(cw * 5);
    o->v[BT_SIG_THROTTLES] = thr;
    o->v[BT_SIG_CLIENT_ERRORS] = 0;
    o->v[BT_SIG_SERVER_ERRORS] = r == R_TRIAGE && storm(k) > 0.7 ? 1 : 0;
    o->v[BT_SIG_LATENCY_P50] = vary(p50, 0.05, r, m, 4);
    o->v[BT_SIG_LATENCY_P90] = vary((p50 + p99) / 2, 0.05, r, m, 5);
    o->v[BT_SIG_LATENCY_P99] = vary(p99, 0.05, r, m, 6);
    o->v[BT_SIG_LATENCY_AVG] = vary(p50 * 1.2, 0.05, r, m, 7);
    o->v[BT_SIG_TTFT_AVG] = vary(p50 * 0.3, 0.05, r, m, 8);
    if (r == R_LEGACY && k >= 20) {
        /* the service slows: generation takes twice as long at the same traffic and
         * answer length (OTPS halves: SLOWDOWN), so calls hold reservations longer */
        double ttft = o->v[BT_SIG_TTFT_AVG];
        o->v[BT_SIG_LATENCY_AVG] = ttft + 2 * (o->v[BT_SIG_LATENCY_AVG] - ttft);
        o->v[BT_SIG_LATENCY_P50] *= 1.8;
        o->v[BT_SIG_LATENCY_P90] *= 1.8;
        o->v[BT_SIG_LATENCY_P99] *= 1.8;
    }
    /* AWS's estimate: the completion-time formula, computed over completed calls, at
     * each model's real burndown (DOMAIN.md), whatever the table or config says */
    o->v[BT_SIG_ESTIMATED_TPM] = round((in + cw + out * burndown) * (1 + 0.01 * jitter(r, m, 9)));
}

struct adm_values {
    bool present;
    double v[BT_SIG_COUNT];
};

static void adm_values(int r, int64_t t, struct adm_values *o)
{
    int64_t m = bt_minute_floor(t);
    int k = story(m);
    o->present = false;
    for (int i = 0; i < BT_SIG_COUNT; i++)
        o->v[i] = NAN;
    if (r == R_TRIAGE) {
        double s = storm(k);
        double admitted = vary(300 + 60 * s, 0.02, r, m, 11);
        double retries = round(20 + 400 * s);
        double completed = vary(300, 0.02, r, m, 12);
        o->v[BT_SIG_ADM_ADMITTED] = admitted;
        o->v[BT_SIG_ADM_RETRIES] = retries;
        o->v[BT_SIG_ADM_REJECTED] = round(30 * s);
        o->v[BT_SIG_ADM_COMPLETED] = completed;
        o->v[BT_SIG_ADM_THROTTLED] = round(60 * s);
        /* each admitted call reserves its total input (1,500 + cache write 67 + cache
         * read 335) + max_tokens 1,024 = 2,926; a retry is admitted again */
        o->v[BT_SIG_ADM_RESERVED] = admitted * 2926;
        o->v[BT_SIG_ADM_SETTLED] = completed * (1567 + 250 * 5);
        o->v[BT_SIG_ADM_IN_FLIGHT] = s > 0 ? 50 : vary(20, 0.1, r, m, 13);
        o->v[BT_SIG_ADM_CONC_LIMIT] = 50;
        o->v[BT_SIG_ADM_QUEUE] = round(60 * s);
        o->v[BT_SIG_ADM_MAX_TOKENS] = 1024;
        o->v[BT_SIG_ADM_OUT_P50] = 220;
        o->v[BT_SIG_ADM_OUT_P99] = 700;
        o->present = true;
    } else if (r == R_WORKERS) {
        bool wide = k >= 4;
        double admitted = vary(wide ? 200 : 120, 0.02, r, m, 11);
        o->v[BT_SIG_ADM_ADMITTED] = admitted;
        o->v[BT_SIG_ADM_RETRIES] = 2;
        o->v[BT_SIG_ADM_REJECTED] = 0;
        o->v[BT_SIG_ADM_COMPLETED] = admitted;
        o->v[BT_SIG_ADM_THROTTLED] = 0;
        o->v[BT_SIG_ADM_RESERVED] = admitted * (3000 + 2048);
        o->v[BT_SIG_ADM_SETTLED] = admitted * 3400;
        /* 10 workers x 4 parallel model calls each */
        o->v[BT_SIG_ADM_IN_FLIGHT] = wide ? 40 : 20;
        o->v[BT_SIG_ADM_CONC_LIMIT] = 25;
        o->v[BT_SIG_ADM_QUEUE] = 0;
        o->v[BT_SIG_ADM_MAX_TOKENS] = 2048;
        o->v[BT_SIG_ADM_OUT_P50] = 350;
        o->v[BT_SIG_ADM_OUT_P99] = 900;
        o->present = true;
    }
}

#define DEMO_ADM_STEP 15 /* seconds between simulated admission scrapes */
#define DEMO_WORKERS 2   /* workers exporting a route's admission counters */
#define DEMO_RESTART 8   /* story minute worker b of triage restarts */
#define DEMO_PREFILL (10 * 60) /* minutes of history before the first tick: since 00:00 */

struct demo {
    struct bt_collector_base b; /* first: the skeleton's (next: the sooner of the next minute's
                                 * arrival and the next scrape) */
    struct bt_ctx *ctx;
    int64_t next_cw;           /* next minute to publish */
    int64_t next_adm;          /* next scrape time */
    int64_t start;             /* first tick: history before it is prefill, without events */
    bool started;
    /* each worker's cumulative admission counters, as it exports them */
    double total[R_N][BT_SIG_COUNT][DEMO_WORKERS];
    /* the day's sums so far (UTC midnight to the minute published), per route and day
     * signal, for the hourly day-sum datapoints (NAN: no datapoint yet today) */
    int64_t day;
    double daysum[R_N][4];
};

static const enum bt_signal day_signals[4] = {BT_SIG_DAY_INPUT_TOKENS, BT_SIG_DAY_OUTPUT_TOKENS,
                                              BT_SIG_DAY_CACHE_WRITE, BT_SIG_DAY_CACHE_READ};

/* No AWS, no work out: the story is played on the clock. */
static const struct bt_collector_kind demo_kind = {0};

static void *demo_create(struct bt_ctx *ctx)
{
    struct demo *d = bt_xcalloc(1, sizeof *d);
    bt_collector_base_init(&d->b, &demo_kind, ctx);
    d->b.mode = BT_MODE_LIVE; /* check mode too: due when the story is, never busy */
    d->ctx = ctx;
    return d;
}

static void put(struct demo *d, int r, enum bt_signal s, int64_t t, double v, int64_t now)
{
    if (isnan(v))
        return;
    struct bt_sample smp = {.t = t, .route = r, .signal = s, .value = v};
    bt_store_add(d->ctx->store, &smp, now);
}

/* Worker w's series identity, labels sorted by name as the admission collector keeps them. */
static void worker_series(const struct demo *d, int r, int w, char *out, size_t n)
{
    static const char *const worker[] = {"a", "b"};
    const char *team = worker_team(r, w);
    if (team)
        snprintf(out, n, "route=\"%s\",team=\"%s\",worker=\"%s\"", d->ctx->cfg->routes[r].name,
                 team, worker[w]);
    else
        snprintf(out, n, "route=\"%s\",worker=\"%s\"", d->ctx->cfg->routes[r].name, worker[w]);
}

/* Each worker's calls in flight as a reading of its own series (the route's sum is
 * a sample, put by the caller), split as its load. */
static void scrape_gauges(struct demo *d, int r, int64_t t, const struct adm_values *a)
{
    if (isnan(a->v[BT_SIG_ADM_IN_FLIGHT]))
        return;
    for (int w = 0; w < DEMO_WORKERS; w++) {
        struct bt_reading rd = {.t = (double)t, .route = r, .signal = BT_SIG_ADM_IN_FLIGHT,
                                .value = a->v[BT_SIG_ADM_IN_FLIGHT] * worker_part(r, w)};
        worker_series(d, r, w, rd.series, sizeof rd.series);
        bt_store_reading(d->ctx->store, &rd, t);
    }
}

/* triage-app's tag, as the tags collector would say it. */
static void demo_tags_learned(struct demo *d, int64_t now)
{
    struct bt_event ev = {.t = now, .type = BT_EV_INFO, .route = R_TRIAGE_APP,
                          .source = BT_SRC_QUOTAS};
    bt_strlcpy(ev.code, BT_EVCODE_TAG, sizeof ev.code);
    bt_strlcpy(ev.text, "support", sizeof ev.text);
    bt_store_apply(d->ctx->store, &ev);
}

/* One scrape of route r's workers at t: each counter's per-minute rate over the
 * step since the last scrape, split evenly between the workers, is added to their
 * totals and read raw; a worker that restarts starts from 0 (its increase is all
 * it holds, as Prometheus's rate() reads a reset). */
static void scrape_counters(struct demo *d, int r, int64_t t, const struct adm_values *a)
{
    /* the scrape of the restart minute's start (the grid holds one at :00) */
    bool restart = r == R_TRIAGE && story(t) == DEMO_RESTART && t % 60 == 0;
    for (int s = 0; s < BT_SIG_COUNT; s++) {
        if (!bt_signal_counter((enum bt_signal)s) || isnan(a->v[s]))
            continue;
        for (int w = 0; w < DEMO_WORKERS; w++) {
            double inc = a->v[s] * worker_part(r, w) * DEMO_ADM_STEP / 60.0;
            double *tot = &d->total[r][s][w];
            /* a reset reads as one only below the last reading */
            if (restart && w == 1 && *tot > inc)
                *tot = 0;
            *tot += inc;
            struct bt_reading rd = {.t = (double)t, .route = r, .signal = (enum bt_signal)s,
                                    .value = *tot};
            worker_series(d, r, w, rd.series, sizeof rd.series);
            bt_store_reading(d->ctx->store, &rd, t);
        }
    }
    scrape_gauges(d, r, t, a);
}

static void event(struct demo *d, int64_t t, enum bt_event_type type, int r, enum bt_source src,
                  const char *text)
{
    struct bt_event ev = {.t = t, .type = type, .route = r, .source = src};
    bt_strlcpy(ev.text, text, sizeof ev.text);
    bt_store_apply(d->ctx->store, &ev);
}

/* Whose CloudWatch fails when (story minutes of the poll): experiments' Region times
 * out 18-26; triage-app's queries are refused 22-25. */
static bool cw_failing(int r, int64_t minute)
{
    int k = story(minute);
    if (r == R_EXPERIMENTS)
        return k >= 18 && k < 26;
    if (r == R_TRIAGE_APP)
        return k >= 22 && k < 26;
    return false;
}

/* Labelled simulated: a demo recording replayed, exported or reported later must not
 * pass its failures for real AWS errors. */
static const char *cw_failure(int r)
{
    return r == R_EXPERIMENTS
               ? "simulated: monitoring.eu-west-1: connection timed out after 10 s (3 attempts)"
               : "simulated: GetMetricData: Forbidden for Invocations Sum (arn:aws:bedrock:"
                 "us-east-1:123456789012:application-inference-profile/tri4ge0app1): AccessDenied";
}

static void publish_minute(struct demo *d, int64_t m, int64_t now)
{
    for (int r = 0; r < R_N && r < d->ctx->cfg->nroutes; r++) {
        if (cw_failing(r, m + 60 + DEMO_CW_LAG))
            continue;
        struct cw_minute cw;
        cw_values(r, m, &cw);
        for (int s = 0; s < BT_SIG_COUNT; s++)
            put(d, r, (enum bt_signal)s, m, cw.v[s], now);
        /* in minute order, as the store would add them */
        for (int k = 0; k < (int)BT_ARRAY_LEN(day_signals); k++) {
            double v = cw.v[bt_signal_daily_minute(day_signals[k])];
            if (!isnan(v))
                d->daysum[r][k] = isnan(d->daysum[r][k]) ? v : d->daysum[r][k] + v;
        }
    }
    /* The day's sums as CloudWatch's hourly datapoints give them (collectors/
     * cw_collect.c day_sums_done): at the last minute of each hour, midnight through
     * it, so a store that keeps fewer minutes than the day (serve: 3 hours) has the
     * day whole, as live serve asks it, and agrees with check. */
    if ((m + 60) % 3600 == 0)
        for (int r = 0; r < R_N && r < d->ctx->cfg->nroutes; r++)
            for (int k = 0; k < (int)BT_ARRAY_LEN(day_signals); k++)
                put(d, r, day_signals[k], m, d->daysum[r][k], now);
}

/* A new UTC day: its sums start empty. */
static void day_start(struct demo *d, int64_t m)
{
    int64_t day = m - m % 86400;
    if (day == d->day)
        return;
    d->day = day;
    for (int r = 0; r < R_N; r++)
        for (int k = 0; k < (int)BT_ARRAY_LEN(day_signals); k++)
            d->daysum[r][k] = NAN;
}

/* Story minutes 4-8: a nightly job outside the config calls workers' model through an
 * application inference profile of its own; the Metrics Insights queries (live:
 * collectors/cw_insights.c) name it from minute 4 and find it gone at 9. */
static void unseen_callers(struct demo *d, int64_t minute, int64_t arrival)
{
    int k = story(minute);
    if (k != 4 && k != 9)
        return;
    struct bt_event ev = {.t = arrival, .type = BT_EV_INFO, .route = R_WORKERS,
                          .source = BT_SRC_CLOUDWATCH};
    bt_strlcpy(ev.code, BT_EVCODE_UNSEEN_CALLERS, sizeof ev.code);
    bt_strlcpy(ev.text,
               k == 9 ? ""
                      : "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/"
                        "n1ghtly0batch: 180000 input tokens/min, 2.4 throttles/min",
               sizeof ev.text);
    bt_model_event(d->ctx->store, d->ctx->cfg->routes, &ev);
}

static void demo_quotas_learned(struct demo *d, int64_t now)
{
    for (size_t i = 0; i < BT_ARRAY_LEN(demo_quotas); i++) {
        const struct demo_quota *q = &demo_quotas[i];
        struct bt_event ev = {.t = now, .type = BT_EV_QUOTA, .route = q->route,
                              .source = BT_SRC_QUOTAS, .quota_kind = q->kind,
                              .value = q->value, .quota_source = q->source,
                              .matched_by = q->by};
        bt_strlcpy(ev.code, q->code, sizeof ev.code);
        bt_strlcpy(ev.text, q->name, sizeof ev.text);
        bt_store_apply(d->ctx->store, &ev);
    }
    /* the legacy model's ListMetrics lists LegacyModelInvocations */
    struct bt_event lg = {.t = now, .type = BT_EV_INFO, .route = R_LEGACY,
                          .source = BT_SRC_CLOUDWATCH};
    bt_strlcpy(lg.code, BT_EVCODE_LEGACY_MODEL, sizeof lg.code);
    bt_strlcpy(lg.text, "ListMetrics lists LegacyModelInvocations for amazon.nova-lite-v1:0",
               sizeof lg.text);
    bt_model_event(d->ctx->store, d->ctx->cfg->routes, &lg);
    event(d, now, BT_EV_OK, -1, BT_SRC_QUOTAS, "demo quotas");
}

static void demo_tick(void *self, int64_t now)
{
    struct demo *d = self;
    if (d->ctx->cfg->nroutes < R_N)
        return;
    if (!d->started) {
        d->started = true;
        d->start = now;
        /* history back to UTC midnight at least, so today's token total is whole */
        int64_t first = bt_minute_floor(now - 60 - DEMO_CW_LAG) - DEMO_PREFILL * 60;
        int64_t midnight = now - (now % 86400);
        d->next_cw = first < midnight ? first : midnight;
        /* scrapes on a fixed 15 s grid, so any run sees the same scrape times */
        d->next_adm = (now - 600) - ((now - 600) % DEMO_ADM_STEP);
        demo_quotas_learned(d, now);
        demo_tags_learned(d, now);
    }
    /* CloudWatch: each minute appears DEMO_CW_LAG seconds after it ends. */
    while (d->next_cw + 60 + DEMO_CW_LAG <= now) {
        int64_t arrival = d->next_cw + 60 + DEMO_CW_LAG;
        day_start(d, d->next_cw);
        publish_minute(d, d->next_cw, arrival);
        unseen_callers(d, d->next_cw, arrival);
        bool fail = false;
        for (int r = 0; r < R_N; r++)
            if (cw_failing(r, arrival)) {
                fail = true;
                event(d, arrival, BT_EV_ERROR, r, BT_SRC_CLOUDWATCH, cw_failure(r));
            }
        if (!fail) {
            /* one OK per poll for every route, like a successful GetMetricData; every
             * poll since start, however coarse the ticks (a loaded recorder) */
            if (arrival >= d->start - 180)
                event(d, arrival, BT_EV_OK, -1, BT_SRC_CLOUDWATCH, "demo poll");
        } else {
            for (int r = 0; r < R_N; r++)
                if (!cw_failing(r, arrival) && arrival >= d->start - 180)
                    event(d, arrival, BT_EV_OK, r, BT_SRC_CLOUDWATCH, "demo poll");
        }
        d->next_cw += 60;
    }
    /* Admission counters: a scrape every DEMO_ADM_STEP seconds. */
    while (d->next_adm <= now) {
        for (int r = 0; r < R_N; r++) {
            struct adm_values a;
            adm_values(r, d->next_adm, &a);
            if (!a.present)
                continue;
            scrape_counters(d, r, d->next_adm, &a);
            for (int s = 0; s < BT_SIG_COUNT; s++)
                if (!bt_signal_counter((enum bt_signal)s))
                    put(d, r, (enum bt_signal)s, d->next_adm, a.v[s], d->next_adm);
            if (d->next_adm >= now - 60) /* staleness reads the scrapes' samples */
                event(d, d->next_adm, BT_EV_OK, r, BT_SRC_ADMISSION, "demo scrape");
        }
        d->next_adm += DEMO_ADM_STEP;
    }
    int64_t cw = d->next_cw + 60 + DEMO_CW_LAG;
    d->b.next = cw < d->next_adm ? cw : d->next_adm;
}

const struct bt_collector_ops bt_demo_collector =
    BT_COLLECTOR_SKELETON("demo", demo_create, demo_tick, NULL);
