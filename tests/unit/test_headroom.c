/* Headroom contract version 2 and the warnings, on hand-worked cases (the
 * arithmetic is in the comments; docs/headroom.md states the contract). */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/headroom.h"
#include "core/recording.h"
#include "render/exposition.h"
#include "render/report.h"
#include "core/util.h"
#include "io/recfile.h"
#include "io/conffile.h"
#include "tests/tap.h"

static const int64_t T0 = 1795946400;        /* 2026-11-29 10:00:00 UTC */
static const int64_t NOW = 1795946400 + 600; /* 10:10:00; last complete minute 10:07 */
static const int64_t M = 1795946400 + 420;   /* 10:07 */

struct fx {
    struct bt_config cfg;
    struct bt_store st;
};

static int fx_route(struct fx *f, const char *name, const char *model, double quota, double max_tokens)
{
    int r = bt_config_add_route(&f->cfg, name);
    struct bt_route *rt = &f->cfg.routes[r];
    bt_strlcpy(rt->model, model, sizeof rt->model);
    bt_strlcpy(rt->region, "us-east-1", sizeof rt->region);
    rt->max_tokens = max_tokens;
    if (!isnan(quota)) {
        /* each route its own quota code: routes share only where a test says so */
        rt->quota[BT_Q_TPM] = (struct bt_quota){quota, BT_QS_SERVICE_QUOTAS, "", "test"};
        snprintf(rt->quota[BT_Q_TPM].code, sizeof rt->quota[BT_Q_TPM].code, "L-%s", name);
    }
    return r;
}

static void fx_init(struct fx *f)
{
    bt_config_init(&f->cfg);
}

/* Every route polled successfully at NOW (10:10): with the default 120 s lag that
 * poll settled every minute up to 10:07 (10:07 ends at 10:08, + 120 s = 10:10), so
 * each quota group is evaluated at M. */
static void fx_start(struct fx *f)
{
    bt_config_finish(&f->cfg);
    bt_store_init(&f->st, f->cfg.nroutes, 1440);
    for (int r = 0; r < f->cfg.nroutes; r++) {
        struct bt_event ev = {.t = NOW, .type = BT_EV_OK, .route = r, .source = BT_SRC_CLOUDWATCH};
        bt_model_event(&f->st, f->cfg.routes, &ev);
    }
}

static void put(struct fx *f, int r, enum bt_signal s, int64_t t, double v)
{
    struct bt_sample smp = {.t = t, .route = r, .signal = s, .value = v};
    bt_store_add(&f->st, &smp, NOW);
}

/* One CloudWatch minute of a runtime route. */
static void minute(struct fx *f, int r, int64_t m, double calls, double in, double out,
                   double lat_avg_ms)
{
    put(f, r, BT_SIG_INVOCATIONS, m, calls);
    put(f, r, BT_SIG_INPUT_TOKENS, m, in);
    put(f, r, BT_SIG_OUTPUT_TOKENS, m, out);
    if (!isnan(lat_avg_ms))
        put(f, r, BT_SIG_LATENCY_AVG, m, lat_avg_ms);
}

static void fx_free(struct fx *f)
{
    bt_store_free(&f->st);
    bt_config_free(&f->cfg);
}

static const struct bt_warning *warning(const struct bt_eval *e, enum bt_wcode c)
{
    for (int i = 0; i < e->nwarn; i++)
        if (e->warnings[i].code == c)
            return &e->warnings[i];
    return NULL;
}

static void test_domain_example(void)
{
    /* DOMAIN.md: 2,000,000 TPM, 500 input tokens. max_tokens 1,000 reserves 1,500 per
     * call: 2,000,000 / 1,500 = 1,333.3 -> 1,333 fit in flight at once. max_tokens
     * 64,000 reserves 64,500: 2,000,000 / 64,500 = 31.0 -> 31. */
    NEAR(bt_fits_more(2000000, 1500), 1333, 0, "DOMAIN example: max_tokens 1,000 -> 1,333 in flight");
    NEAR(bt_fits_more(2000000, 64500), 31, 0, "DOMAIN example: max_tokens 64,000 -> 31 in flight");
    NEAR(bt_fits_more(-5, 1500), 0, 0, "negative headroom fits nothing");
    OK(isnan(bt_fits_more(1000, NAN)), "unknown reservation: fits unknown");

    /* The same in an evaluation: 10 calls a minute, 5,000 input (500 each), 3,000
     * output, InvocationLatency average 1,500 ms, burndown 1, quota 2,000,000.
     *   in flight = 10 / 60 x 1.5 s = 0.25 (Little's law)
     *   max_tokens 1,000:  R = 500 + 1,000 = 1,500; held = 0.25 x 1,500 = 375
     *     settled = 5,000 + 3,000 = 8,000; used = 8,000 + 375 = 8,375
     *     headroom = 1,991,625 (99.58 %); fits = floor(1,991,625 / 1,500) = 1,327
     *   max_tokens 64,000: R = 64,500; held = 16,125; used = 24,125
     *     headroom = 1,975,875; fits = floor(1,975,875 / 64,500) = 30
     *     reserved_per_min = 10 x 64,500 = 645,000: version 1 counted all of it as used */
    struct fx f;
    fx_init(&f);
    int a = fx_route(&f, "a", "amazon.nova-lite-v1:0", 2000000, 1000);
    fx_start(&f);
    minute(&f, a, M, 10, 5000, 3000, 1500);
    struct bt_eval e;
    bt_eval_route(&f.cfg, &f.st, a, NOW, &e);
    NEAR(e.in_flight, 0.25, 1e-12, "in flight 0.25 by Little's law");
    STREQ(e.in_flight_source, "littles-law", "in-flight source");
    NEAR(e.reservation, 1500, 1e-9, "R = 1,500");
    NEAR(e.held, 375, 1e-9, "held 375");
    NEAR(e.used, 8375, 1e-9, "used = settled + held");
    NEAR(e.headroom_tpm, 1991625, 1e-6, "headroom 1,991,625");
    NEAR(e.fits_more, 1327, 0, "1,327 more calls fit in flight");
    f.cfg.routes[a].max_tokens = 64000;
    bt_eval_route(&f.cfg, &f.st, a, NOW, &e);
    NEAR(e.held, 16125, 1e-9, "max_tokens 64,000: held 16,125");
    NEAR(e.used, 24125, 1e-9, "used 24,125");
    NEAR(e.fits_more, 30, 0, "30 more fit in flight");
    NEAR(e.reserved_per_min, 645000, 1e-9, "reserved per minute 645,000 (the secondary figure)");
    OK(!(e.used_q == BT_QL_UPPER) && bt_eval_has(&e, BT_W_OVERSIZED_MAX_TOKENS), "not an upper bound; oversized");
    fx_free(&f);
}

static void test_littles_law(void)
{
    /* 300 calls/min with 1,080 ms average: 5 per second x 1.08 s = 5.4 in flight. */
    NEAR(bt_littles_law(300, 1080), 5.4, 1e-12, "Little's law 300/min x 1.08 s = 5.4");
    NEAR(bt_littles_law(0, NAN), 0, 0, "no calls: nothing in flight even without latency");
    OK(isnan(bt_littles_law(10, NAN)), "calls without latency: unknown");

    /* 300 calls, 600,000 input (2,000 each), 60,000 output, latency 2,000 ms,
     * max_tokens 1,000, quota 2,000,000, no admission counters:
     *   in flight = 300 / 60 x 2 = 10; R = 2,000 + 1,000 = 3,000; held = 30,000
     *   settled = 660,000; used = 690,000; headroom = 1,310,000 = 65.5 %
     *   fits = floor(1,310,000 / 3,000) = 436
     * Without the latency metric in flight is unknown: used falls back to the
     * upper bound max(660,000, 300 x 3,000 = 900,000) = 900,000 -> 55 %. */
    struct fx f;
    fx_init(&f);
    int a = fx_route(&f, "a", "amazon.nova-lite-v1:0", 2000000, 1000);
    int b = fx_route(&f, "b", "amazon.nova-pro-v1:0", 2000000, 1000);
    fx_start(&f);
    minute(&f, a, M, 300, 600000, 60000, 2000);
    minute(&f, b, M, 300, 600000, 60000, NAN);
    struct bt_eval e;
    bt_eval_route(&f.cfg, &f.st, a, NOW, &e);
    NEAR(e.in_flight, 10, 1e-12, "10 in flight");
    NEAR(e.held, 30000, 1e-9, "held 30,000");
    NEAR(e.used, 690000, 1e-9, "used 690,000");
    NEAR(e.headroom_pct, 65.5, 1e-9, "headroom 65.5 %");
    NEAR(e.fits_more, 436, 0, "fits 436");
    STREQ(e.held_source, "littles-law", "held from Little's law");
    bt_eval_route(&f.cfg, &f.st, b, NOW, &e);
    OK(isnan(e.in_flight) && (e.used_q == BT_QL_UPPER), "no latency: in flight unknown, upper bound");
    NEAR(e.used, 900000, 1e-9, "upper bound: used = reserved per minute 900,000");
    STREQ(e.held_source, "upper-bound", "held marked upper-bound");
    NEAR(e.headroom_pct, 55, 1e-9, "headroom 55 % from the bound");
    fx_free(&f);
}

static void test_admission(void)
{
    /* Counters: 1,900,000 reserved/min over 1,000 admitted -> R = 1,900; gauge 100
     * in flight -> held 190,000. CloudWatch: 100 calls, 50,000 in, 30,000 out,
     * estimate 70,000: settled 80,000; used = 80,000 + 190,000 = 270,000;
     * headroom 1,730,000 = 86.5 %. With the held gauge at 250,000 used is 330,000. */
    struct fx f;
    fx_init(&f);
    int r = fx_route(&f, "a", "amazon.nova-lite-v1:0", 2000000, 1000);
    fx_start(&f);
    minute(&f, r, M, 100, 50000, 30000, 1000);
    put(&f, r, BT_SIG_ESTIMATED_TPM, M, 70000);
    put(&f, r, BT_SIG_ADM_RESERVED, NOW - 5, 1900000);
    put(&f, r, BT_SIG_ADM_ADMITTED, NOW - 5, 1000);
    put(&f, r, BT_SIG_ADM_IN_FLIGHT, NOW - 5, 100);
    struct bt_eval e;
    bt_eval_route(&f.cfg, &f.st, r, NOW, &e);
    NEAR(e.reservation, 1900, 1e-9, "R from the counters' rates");
    STREQ(e.reservation_source, "admission", "R source admission");
    STREQ(e.in_flight_source, "admission", "in flight from the gauge");
    NEAR(e.held, 190000, 1e-9, "held = 100 x 1,900");
    NEAR(e.used, 270000, 1e-9, "used = max(settled, estimated) + held");
    NEAR(e.headroom_pct, 86.5, 1e-9, "headroom 86.5 %");
    NEAR(e.reserved_per_min, 1900000, 0, "reserved per minute from the counter");
    put(&f, r, BT_SIG_ADM_RESERVED_HELD, NOW - 5, 250000);
    bt_eval_route(&f.cfg, &f.st, r, NOW, &e);
    NEAR(e.held, 250000, 0, "bedrock_admission_reserved_tokens_held wins");
    STREQ(e.held_source, "admission", "held source admission");
    NEAR(e.used, 330000, 1e-9, "used 330,000");
    fx_free(&f);
}

static void test_shared_quota(void)
{
    /* Two routes on one quota: "a" (nova-lite, quota 1,000,000 code L-TEST) and "b",
     * an application inference profile on the same base model (quota unknown to it).
     *   a: 100 calls, 50,000 in, 20,000 out, 1,200 ms, max_tokens 1,000
     *      settled 70,000; R 1,500; in flight 2; held 3,000; used 73,000
     *   b: 60 calls, 60,000 in, 12,000 out, 3,000 ms, max_tokens 2,000
     *      settled 72,000; R 3,000; in flight 3; held 9,000; used 81,000
     *   group used 154,000; headroom 846,000 = 84.6 % for both
     *   fits: a floor(846,000 / 1,500) = 564; b floor(846,000 / 3,000) = 282
     * "c", the same model in us-west-2, is another quota. */
    struct fx f;
    fx_init(&f);
    int a = fx_route(&f, "a", "amazon.nova-lite-v1:0", 1000000, 1000);
    int b = fx_route(&f, "b", "arn:aws:bedrock:us-east-1:111122223333:application-inference-profile/b1",
                     NAN, 2000);
    int c = fx_route(&f, "c", "amazon.nova-lite-v1:0", 1000000, 1000);
    bt_strlcpy(f.cfg.routes[b].base_model, "amazon.nova-lite-v1:0", sizeof f.cfg.routes[b].base_model);
    bt_strlcpy(f.cfg.routes[c].region, "us-west-2", sizeof f.cfg.routes[c].region);
    fx_start(&f);
    minute(&f, a, M, 100, 50000, 20000, 1200);
    minute(&f, b, M, 60, 60000, 12000, 3000);
    minute(&f, c, M, 100, 50000, 20000, 1200);
    struct bt_eval ev[3];
    bt_eval_all(&f.cfg, &f.st, NOW, ev);
    NEAR(ev[a].used, 73000, 1e-9, "a uses 73,000");
    NEAR(ev[b].used, 81000, 1e-9, "b uses 81,000");
    NEAR(bt_eval_group_used(&ev[a]), 154000, 1e-9, "group used 154,000");
    NEAR(ev[a].headroom_tpm, 846000, 1e-9, "a: headroom of the quota, 846,000");
    NEAR(ev[b].headroom_tpm, 846000, 1e-9, "b: the same headroom");
    NEAR(ev[b].headroom_pct, 84.6, 1e-9, "84.6 %");
    NEAR(ev[a].fits_more, 564, 0, "a fits 564 more");
    NEAR(ev[b].fits_more, 282, 0, "b fits 282 more");
    OK(ev[b].quota == 1000000 && ev[b].quota_source == BT_QS_SERVICE_QUOTAS &&
       !strcmp(ev[b].quota_code, "L-a"), "b draws from a's quota L-a");
    OK(bt_eval_nshared(&ev[a]) == 1 && ev[a].group.leader == a && bt_group_next(ev, a) == b &&
       bt_group_next(ev, b) < 0 && bt_eval_nshared(&ev[b]) == 1 && ev[b].group.leader == a,
       "each names the other");
    const struct bt_warning *w = warning(&ev[a], BT_W_SHARED_QUOTA);
    OK(w && w->severity == BT_ST_OK && strstr(w->message, "b") && strstr(w->message, "invisible"),
       "SHARED_QUOTA (info) names the other route and says outside callers are invisible");
    OK(bt_eval_nshared(&ev[c]) == 0 && !bt_eval_has(&ev[c], BT_W_SHARED_QUOTA), "c in another Region is alone");
    NEAR(ev[c].headroom_tpm, 927000, 1e-9, "c: 1,000,000 - 73,000");
    /* bt_eval_route gives the same as bt_eval_all */
    struct bt_eval one;
    bt_eval_route(&f.cfg, &f.st, b, NOW, &one);
    NEAR(one.headroom_tpm, 846000, 1e-9, "bt_eval_route evaluates the group too");
    fx_free(&f);
}

static void test_cache_read(void)
{
    /* 10 calls: input 10,000, cache read 90,000, cache write 5,000, output 2,000,
     * burndown 5 (Claude Sonnet 4.5 by the table), max_tokens 500, latency 6,000 ms:
     *   settled = 10,000 + 5,000 + 2,000 x 5 = 25,000 (cache reads not charged)
     *   R = (10,000 + 90,000 + 5,000) / 10 + 500 = 11,000 (cache reads reserved)
     *   in flight = 10 / 60 x 6 = 1; held = 11,000; used = 36,000
     *   reserved per minute = 10 x 11,000 = 110,000
     *   fits = floor((1,000,000 - 36,000) / 11,000) = 87 */
    struct fx f;
    fx_init(&f);
    int r = fx_route(&f, "c", "us.anthropic.claude-sonnet-4-5-20250929-v1:0", 1000000, 500);
    fx_start(&f);
    NEAR(f.cfg.routes[r].burndown, 5, 0, "burndown 5 for Claude Sonnet 4.5 from the table");
    minute(&f, r, M, 10, 10000, 2000, 6000);
    put(&f, r, BT_SIG_CACHE_READ, M, 90000);
    put(&f, r, BT_SIG_CACHE_WRITE, M, 5000);
    struct bt_eval e;
    bt_eval_route(&f.cfg, &f.st, r, NOW, &e);
    NEAR(e.settled, 25000, 0, "settled excludes cache reads");
    NEAR(e.reservation, 11000, 1e-9, "R includes cache reads and writes");
    NEAR(e.in_flight, 1, 1e-12, "one call in flight");
    NEAR(e.held, 11000, 1e-9, "held 11,000");
    NEAR(e.used, 36000, 1e-9, "used 36,000");
    NEAR(e.reserved_per_min, 110000, 1e-9, "reserved per minute 110,000");
    NEAR(e.fits_more, 87, 0, "fits 87");
    fx_free(&f);
}

static void test_idle(void)
{
    /* Traffic at 10:00, none since; polled fine at 10:10, which settled minutes up
     * to 10:07 (2 min lag): no datapoints since 10:00 means no calls, so the route
     * is idle at 10:07: used 0, headroom the whole 500,000, ok, not stale. */
    struct fx f;
    fx_init(&f);
    int r = fx_route(&f, "idle", "amazon.nova-lite-v1:0", 500000, 1000);
    fx_start(&f);
    minute(&f, r, T0, 100, 50000, 30000, 1000);
    struct bt_eval e;
    bt_eval_route(&f.cfg, &f.st, r, NOW, &e);
    OK((e.state == BT_FR_IDLE) && e.minute == M, "idle at 10:07");
    NEAR(e.used, 0, 0, "used 0");
    NEAR(e.settled, 0, 0, "settled 0");
    NEAR(e.held, 0, 0, "held 0: nothing in flight");
    NEAR(e.in_flight, 0, 0, "in flight 0");
    NEAR(e.headroom_tpm, 500000, 0, "headroom is the whole quota");
    OK(!e.stale && e.status == BT_ST_OK && e.nwarn == 0, "idle is ok, not stale");

    /* The same route when CloudWatch stopped answering at 09:55: stale. */
    bt_store_free(&f.st);
    bt_store_init(&f.st, 1, 1440);
    struct bt_event ev = {.t = T0 - 300, .type = BT_EV_OK, .route = r, .source = BT_SRC_CLOUDWATCH};
    bt_model_event(&f.st, f.cfg.routes, &ev);
    minute(&f, r, T0 - 360, 100, 50000, 30000, 1000);
    bt_eval_route(&f.cfg, &f.st, r, NOW, &e);
    OK(!(e.state == BT_FR_IDLE) && e.stale && strstr(e.stale_reason, "not answered since 09:55"),
       "no good poll for 15 min: STALE, not idle");
    OK(e.status == BT_ST_UNKNOWN, "stale -> unknown");
    fx_free(&f);

    /* Never polled: unknown, not full. */
    fx_init(&f);
    r = fx_route(&f, "new", "amazon.nova-lite-v1:0", 500000, 1000);
    bt_config_finish(&f.cfg);
    bt_store_init(&f.st, 1, 1440);
    bt_eval_route(&f.cfg, &f.st, r, NOW, &e);
    OK(isnan(e.headroom_tpm) && e.stale && e.status == BT_ST_UNKNOWN, "never polled: headroom unknown, STALE");
    fx_free(&f);
}

static void test_zero_quota(void)
{
    /* Applied quota 0: 0 calls accepted, 20 throttled. NO_QUOTA crit; headroom pct
     * has no divisor (null); fits 0; the throttles are not blamed on retries. */
    struct fx f;
    fx_init(&f);
    int r = fx_route(&f, "z", "anthropic.claude-opus-4-5-20251101-v1:0", 0, 1000);
    fx_start(&f);
    put(&f, r, BT_SIG_INVOCATIONS, M, 0);
    put(&f, r, BT_SIG_THROTTLES, M, 20);
    struct bt_eval e;
    bt_eval_route(&f.cfg, &f.st, r, NOW, &e);
    const struct bt_warning *w = warning(&e, BT_W_NO_QUOTA);
    OK(w && w->severity == BT_ST_CRIT && strstr(w->message, "is 0") && strstr(w->message, "L-z"),
       "NO_QUOTA crit names the quota");
    OK(e.status == BT_ST_CRIT, "status crit");
    OK(isnan(e.headroom_pct) && !isinf(e.headroom_tpm) && !isnan(e.headroom_tpm), "pct null, headroom a number");
    NEAR(e.fits_more, 0, 0, "nothing fits");
    OK(!bt_eval_has(&e, BT_W_RETRY_LOAD) && !bt_eval_has(&e, BT_W_LOW_HEADROOM) &&
       !bt_eval_has(&e, BT_W_QUOTA_UNKNOWN), "no RETRY_LOAD, LOW_HEADROOM or QUOTA_UNKNOWN");
    /* JSON: no NaN anywhere, headroom_pct null */
    struct bt_report rep = {.cfg = &f.cfg, .store = &f.st, .now = NOW, .evals = &e, .n = 1, .mode = "live"};
    cJSON *j = bt_report_route_json(&rep, 0);
    char *s = cJSON_PrintUnformatted(j);
    OK(s && !strstr(s, "nan") && !strstr(s, "NaN") && strstr(s, "\"headroom_pct\":null"),
       "JSON has null, never NaN");
    cJSON_free(s);
    cJSON_Delete(j);
    fx_free(&f);
}

static void test_burndown(void)
{
    /* 100,000 input + 20,000 output: burndown 5 -> 200,000; burndown 1 -> 120,000 */
    NEAR(bt_settled_tpm(100000, 0, 20000, 5), 200000, 0, "settled with burndown 5");
    NEAR(bt_settled_tpm(100000, 0, 20000, 1), 120000, 0, "settled with burndown 1");
    struct bt_config c;
    bt_config_init(&c);
    char err[512];
    OK(bt_config_parse_string(&c,
                              "[burndown]\nacme.big-* = 15\n[route x]\nmodel = acme.big-2\n"
                              "[route y]\nmodel = global.anthropic.claude-opus-4-5-v1:0\n"
                              "[route z]\nmodel = anthropic.claude-3-haiku-20240307-v1:0\nburndown = 2\n",
                              "t.conf", err, sizeof err),
       "config with [burndown] parses");
    NEAR(c.routes[0].burndown, 15, 0, "config [burndown] extends the table");
    NEAR(c.routes[1].burndown, 5, 0, "global. profile prefix ignored: Opus 4.5 -> 5");
    NEAR(c.routes[2].burndown, 2, 0, "route burndown overrides the table");
    STREQ(c.routes[2].burndown_source, "config", "burndown source config");
    bt_config_free(&c);

    /* Measured: Sonnet 4.5 (table 5), 100,000 input, 20,000 output.
     *   estimate 200,000: (200,000 - 100,000) / 20,000 = 5.0 -> agrees
     *   estimate 120,000: (120,000 - 100,000) / 20,000 = 1.0 -> BURNDOWN_MISMATCH
     * A route configured with burndown 1 whose estimate says 5 mismatches too. */
    struct fx f;
    fx_init(&f);
    int r = fx_route(&f, "s", "us.anthropic.claude-sonnet-4-5-20250929-v1:0", 2000000, 1000);
    int k = fx_route(&f, "k", "us.anthropic.claude-sonnet-4-5-20250929-v1:0", NAN, 1000);
    bt_strlcpy(f.cfg.routes[k].region, "us-west-2", sizeof f.cfg.routes[k].region);
    f.cfg.routes[k].burndown = 1;
    f.cfg.routes[k].burndown_source = "config";
    fx_start(&f);
    minute(&f, r, M, 100, 100000, 20000, 1000);
    put(&f, r, BT_SIG_ESTIMATED_TPM, M, 200000);
    minute(&f, k, M, 100, 100000, 20000, 1000);
    put(&f, k, BT_SIG_ESTIMATED_TPM, M, 200000);
    struct bt_eval e;
    bt_eval_route(&f.cfg, &f.st, r, NOW, &e);
    NEAR(e.burndown_measured, 5, 1e-12, "measured burndown 5.0");
    OK(!bt_eval_has(&e, BT_W_BURNDOWN_MISMATCH), "agrees with the table");
    put(&f, r, BT_SIG_ESTIMATED_TPM, M, 120000);
    bt_eval_route(&f.cfg, &f.st, r, NOW, &e);
    NEAR(e.burndown_measured, 1, 1e-12, "measured burndown 1.0");
    const struct bt_warning *w = warning(&e, BT_W_BURNDOWN_MISMATCH);
    OK(w && w->severity == BT_ST_WARN && strstr(w->message, "1.00") &&
       strstr(w->message, "the table row burndown.conf:") && strstr(w->message, " = 5 gives 5") &&
           strstr(w->message, "the table row is used"),
       "BURNDOWN_MISMATCH shows both values, names the row and says which one won");
    bt_eval_route(&f.cfg, &f.st, k, NOW, &e);
    w = warning(&e, BT_W_BURNDOWN_MISMATCH);
    OK(w && strstr(w->message, "5.00") && strstr(w->message, "the config gives 1") &&
           strstr(w->message, "the config's value is used"),
       "config burndown 1 vs measured 5");
    fx_free(&f);

    /* A table that cannot be read is an error naming the path, never a silent 1. */
    struct bt_burndown b = {0};
    OK(!bt_burndown_load_file(&b, "/nonexistent/bedtop/burndown.conf", err, sizeof err) &&
       strstr(err, "/nonexistent/bedtop/burndown.conf"), "unreadable table: error names the path");
    bt_burndown_free(&b);
}

static void test_mantle(void)
{
    /* Mantle 20M/4M: 400 inferences, input 12,000,000 (30,000 each), output 320,000,
     * max_tokens 2,000, no admission counters and no latency metric: in flight unknown,
     * so input used is the per-minute bound 400 x (30,000 + 2,000) = 12,800,000
     * -> input headroom 7,200,000 = 36 %; output 3,680,000 = 92 %: input binds.
     * No burndown on mantle even for a burndown-5 model. */
    struct fx f;
    fx_init(&f);
    int r = fx_route(&f, "m", "anthropic.claude-opus-4-7", NAN, 2000);
    f.cfg.routes[r].endpoint = BT_EP_MANTLE;
    f.cfg.routes[r].quota[BT_Q_INPUT_TPM] = (struct bt_quota){20000000, BT_QS_CONFIG, "", ""};
    f.cfg.routes[r].quota[BT_Q_OUTPUT_TPM] = (struct bt_quota){4000000, BT_QS_CONFIG, "", ""};
    fx_start(&f);
    NEAR(f.cfg.routes[r].burndown, 1, 0, "mantle: burndown does not apply");
    minute(&f, r, M, 400, 12000000, 320000, NAN);
    struct bt_eval e;
    bt_eval_route(&f.cfg, &f.st, r, NOW, &e);
    NEAR(e.side[BT_SIDE_INPUT].used, 12800000, 0, "mantle input used: the per-minute bound");
    OK((e.used_q == BT_QL_UPPER), "marked upper bound");
    NEAR(e.side[BT_SIDE_INPUT].headroom, 7200000, 0, "mantle input headroom");
    NEAR(e.side[BT_SIDE_OUTPUT].headroom, 3680000, 0, "mantle output headroom");
    NEAR(e.headroom_pct, 36, 1e-9, "route headroom pct is the input side's");
    OK(e.binding == BT_SIDE_INPUT, "input binds");

    /* Equal quotas 4M/4M: 400 inferences, input 1,000,000 (2,500 each), output
     * 3,900,000. Input used = max(1,000,000, 400 x 4,500) = 1,800,000 -> 55 %;
     * output 3,900,000 -> 100,000 = 2.5 %: output binds, crit. The route's figures
     * (quota, used, settled) are the output side's, for every view. */
    f.cfg.routes[r].quota[BT_Q_INPUT_TPM].value = 4000000;
    f.cfg.routes[r].quota[BT_Q_OUTPUT_TPM].value = 4000000;
    put(&f, r, BT_SIG_INPUT_TOKENS, M, 1000000);
    put(&f, r, BT_SIG_OUTPUT_TOKENS, M, 3900000);
    bt_eval_route(&f.cfg, &f.st, r, NOW, &e);
    NEAR(e.side[BT_SIDE_INPUT].pct, 55, 1e-9, "input side 55 %");
    NEAR(e.side[BT_SIDE_OUTPUT].pct, 2.5, 1e-9, "output side 2.5 %");
    OK(e.binding == BT_SIDE_OUTPUT, "equal quotas: output binds");
    NEAR(e.headroom_pct, 2.5, 1e-9, "route headroom = output side");
    NEAR(e.used, 3900000, 0, "route used = output used (what the bar draws)");
    NEAR(e.settled, 3900000, 0, "route settled = output tokens");
    NEAR(e.quota, 4000000, 0, "route quota = output quota");
    OK(e.status == BT_ST_CRIT && strstr(warning(&e, BT_W_LOW_HEADROOM)->message, "output quota binds"),
       "LOW_HEADROOM crit says output binds");
    struct bt_report rep = {.cfg = &f.cfg, .store = &f.st, .now = NOW, .evals = &e, .n = 1, .mode = "live"};
    cJSON *j = bt_report_route_json(&rep, 0);
    const cJSON *mj = cJSON_GetObjectItem(j, "mantle");
    OK(!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(mj, "binding")), "output") &&
       cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "tpm"), "used")) == 3900000,
       "JSON: binding output, tpm.used the output side's");
    cJSON_Delete(j);

    /* One side unknown: output quota unknown -> input binds (55 %). */
    f.cfg.routes[r].quota[BT_Q_OUTPUT_TPM].value = NAN;
    bt_eval_route(&f.cfg, &f.st, r, NOW, &e);
    OK(e.binding == BT_SIDE_INPUT && fabs(e.headroom_pct - 55) < 1e-9,
       "output quota unknown: input binds at 55 %%");
    /* Input quota unknown -> output binds. */
    f.cfg.routes[r].quota[BT_Q_OUTPUT_TPM].value = 4000000;
    f.cfg.routes[r].quota[BT_Q_INPUT_TPM].value = NAN;
    bt_eval_route(&f.cfg, &f.st, r, NOW, &e);
    OK(e.binding == BT_SIDE_OUTPUT && fabs(e.headroom_pct - 2.5) < 1e-9,
       "input quota unknown: output binds at 2.5 %%");
    fx_free(&f);
}

static void test_throttle_causes(void)
{
    /* Throttles while the estimate is far below the quota; the warning names the
     * cause the evidence points to and that cause's remedy. */
    struct fx f;
    fx_init(&f);
    int big = fx_route(&f, "big", "amazon.nova-lite-v1:0", 1000000, 64000);
    int retry = fx_route(&f, "retry", "amazon.nova-pro-v1:0", 1000000, 1024);
    int unseen = fx_route(&f, "unseen", "amazon.nova-micro-v1:0", 1000000, NAN);
    fx_start(&f);
    /* big: 10 calls, 300 output each; max_tokens 64,000 > 4 x 300 */
    minute(&f, big, M, 10, 20000, 3000, 1440);
    put(&f, big, BT_SIG_THROTTLES, M, 2);
    put(&f, big, BT_SIG_ESTIMATED_TPM, M, 23000);
    /* retry: retries 420 of 360 + 420 + 30 = 810 offered = 52 %; p99 700 vs 1,024 */
    minute(&f, retry, M, 300, 450000, 75000, 1080);
    put(&f, retry, BT_SIG_THROTTLES, M, 60);
    put(&f, retry, BT_SIG_ESTIMATED_TPM, M, 525000);
    put(&f, retry, BT_SIG_ADM_ADMITTED, NOW - 5, 360);
    put(&f, retry, BT_SIG_ADM_RETRIES, NOW - 5, 420);
    put(&f, retry, BT_SIG_ADM_REJECTED, NOW - 5, 30);
    put(&f, retry, BT_SIG_ADM_OUT_P99, NOW - 5, 700);
    /* unseen: only the estimate */
    put(&f, unseen, BT_SIG_INVOCATIONS, M, 100);
    put(&f, unseen, BT_SIG_THROTTLES, M, 5);
    put(&f, unseen, BT_SIG_ESTIMATED_TPM, M, 300000);
    struct bt_eval ev[3];
    bt_eval_all(&f.cfg, &f.st, NOW, ev);
    const struct bt_warning *w = warning(&ev[big], BT_W_THROTTLED_BELOW_ESTIMATE);
    OK(w && strstr(w->message, "max_tokens 64000") && strstr(w->action, "Lower max_tokens"),
       "oversized max_tokens: held reservations, lower max_tokens");
    w = warning(&ev[retry], BT_W_THROTTLED_BELOW_ESTIMATE);
    OK(w && strstr(w->message, "retry storm") && strstr(w->action, "retry budget") &&
       strstr(w->action, "will not help"), "retry storm: retries named, not max_tokens");
    OK(bt_eval_has(&ev[retry], BT_W_RETRY_LOAD), "and RETRY_LOAD");
    w = warning(&ev[unseen], BT_W_THROTTLED_BELOW_ESTIMATE);
    OK(w && strstr(w->message, "not in the data") && strstr(w->action, "admission counters"),
       "no evidence: says so, asks for the counters");
    OK(bt_eval_has(&ev[unseen], BT_W_ESTIMATE_ONLY), "ESTIMATE_ONLY with only the estimate");
    fx_free(&f);

    /* Daily quota used up, and another route on the same quota. */
    fx_init(&f);
    int d = fx_route(&f, "d", "meta.llama3-3-70b-instruct-v1:0", 1000000, 1000);
    int o = fx_route(&f, "o", "meta.llama3-3-70b-instruct-v1:0", NAN, 1000);
    f.cfg.routes[d].quota[BT_Q_TPD] = (struct bt_quota){1e8, BT_QS_SERVICE_QUOTAS, "L-TPD", ""};
    fx_start(&f);
    minute(&f, d, M, 10, 10000, 10000, 1000); /* mean output 1,000: max_tokens fits it */
    put(&f, d, BT_SIG_THROTTLES, M, 8);
    put(&f, d, BT_SIG_ESTIMATED_TPM, M, 20000);
    put(&f, d, BT_SIG_DAY_INPUT_TOKENS, T0 - 36000, 1e8);
    minute(&f, o, M, 100, 100000, 10000, 1000);
    bt_eval_all(&f.cfg, &f.st, NOW, ev);
    w = warning(&ev[d], BT_W_THROTTLED_BELOW_ESTIMATE);
    OK(w && strstr(w->message, "daily token quota is used up") && strstr(w->action, "00:00 UTC"),
       "daily quota used up is the cause");
    /* without the daily total the other route on the quota is the evidence */
    f.cfg.routes[d].quota[BT_Q_TPD].value = NAN;
    bt_eval_all(&f.cfg, &f.st, NOW, ev);
    w = warning(&ev[d], BT_W_THROTTLED_BELOW_ESTIMATE);
    OK(w && strstr(w->message, "shared") && strstr(w->action, "other callers"),
       "another route on the quota is the cause");
    fx_free(&f);
}

static void test_daily(void)
{
    /* Daily quota 100,000,000; today's sums at 10:07 give 85,000,000 charged;
     * the charge now is 100,000/min (100 calls, 100,000 input, no output):
     *   remaining 15,000,000 / 100,000 = 150 min -> runs out 12:37 UTC today
     * At 10,000/min it would last 1,500 min (25 h): not before the 00:00 reset,
     * 13 h 53 min after 10:07. At 100,000,000 it is used up until the reset. */
    struct fx f;
    fx_init(&f);
    int r = fx_route(&f, "d", "meta.llama3-3-70b-instruct-v1:0", 2000000, 1000);
    f.cfg.routes[r].quota[BT_Q_TPD] = (struct bt_quota){1e8, BT_QS_SERVICE_QUOTAS, "L-TPD", ""};
    fx_start(&f);
    int64_t day = T0 - 36000;
    minute(&f, r, M, 100, 100000, 0, 1000);
    put(&f, r, BT_SIG_DAY_INPUT_TOKENS, day, 85e6);
    struct bt_eval e;
    bt_eval_route(&f.cfg, &f.st, r, NOW, &e);
    const struct bt_warning *w = warning(&e, BT_W_DAILY_QUOTA);
    OK(w && strstr(w->message, "runs out at 12:37 UTC today (in 2 h 30 min)"), "runs out today with a time");
    put(&f, r, BT_SIG_INPUT_TOKENS, M, 10000);
    bt_eval_route(&f.cfg, &f.st, r, NOW, &e);
    w = warning(&e, BT_W_DAILY_QUOTA);
    OK(w && strstr(w->message, "does not run out before the reset at 00:00 UTC (in 13 h 53 min)") &&
       strstr(w->message, "last 25 h 0 min"), "after midnight: not before the reset");
    put(&f, r, BT_SIG_DAY_INPUT_TOKENS, day, 1e8);
    bt_eval_route(&f.cfg, &f.st, r, NOW, &e);
    w = warning(&e, BT_W_DAILY_QUOTA);
    OK(w && w->severity == BT_ST_CRIT && strstr(w->message, "used up: calls throttle until the reset"),
       "used up: until the reset");
    fx_free(&f);
}

/* Issue 19: the daily quota is one per model and Region for on-demand and
 * cross-region calls ("Model invocation max tokens per day for X"), so its day is
 * summed across inference types, not per TPM group (which splits them). By hand:
 * daily quota 1,000,000,000; on-demand route od charged 300,000,000 today and
 * cross-region route xr (us.) 420,000,000 (input only): the day is 720,000,000 =
 * 72 % for both, not 30 % and 42 %. A global route's day (its own quota) stays
 * apart: 50,000,000 of 1,000,000,000 = 5 %. Once with the quota's code, once
 * without (then by model, the us. prefix dropped). */
static void test_daily_group(void)
{
    for (int coded = 0; coded < 2; coded++) {
        struct fx f;
        fx_init(&f);
        int od = fx_route(&f, "od", "anthropic.claude-sonnet-4-5-20250929-v1:0", 2000000, 1000);
        int xr = fx_route(&f, "xr", "us.anthropic.claude-sonnet-4-5-20250929-v1:0", 4000000, 1000);
        int gl = fx_route(&f, "gl", "global.anthropic.claude-sonnet-4-5-20250929-v1:0", 4000000, 1000);
        for (int r = 0; r < 3; r++)
            f.cfg.routes[r].quota[BT_Q_TPD] =
                (struct bt_quota){1e9, BT_QS_SERVICE_QUOTAS, "", "tokens per day"};
        if (coded) {
            bt_strlcpy(f.cfg.routes[od].quota[BT_Q_TPD].code, "L-DAY", sizeof f.cfg.routes[od].quota[BT_Q_TPD].code);
            bt_strlcpy(f.cfg.routes[xr].quota[BT_Q_TPD].code, "L-DAY", sizeof f.cfg.routes[xr].quota[BT_Q_TPD].code);
            bt_strlcpy(f.cfg.routes[gl].quota[BT_Q_TPD].code, "L-GDAY", sizeof f.cfg.routes[gl].quota[BT_Q_TPD].code);
        }
        fx_start(&f);
        int64_t day = T0 - 36000;
        put(&f, od, BT_SIG_DAY_INPUT_TOKENS, day, 3e8);
        put(&f, xr, BT_SIG_DAY_INPUT_TOKENS, day, 4.2e8);
        put(&f, gl, BT_SIG_DAY_INPUT_TOKENS, day, 5e7);
        for (int r = 0; r < 3; r++)
            minute(&f, r, M, 10, 10000, 0, 1000);
        struct bt_eval ev[3];
        bt_eval_all(&f.cfg, &f.st, NOW, ev);
        NEAR(bt_eval_group_today(&ev[od]), 7.2e8, 0, coded ? "code: od's day counts xr's calls (720,000,000)"
                                                        : "model: od's day counts xr's calls (720,000,000)");
        NEAR(bt_eval_group_today(&ev[xr]), 7.2e8, 0, "xr's day: the same 720,000,000");
        NEAR(bt_eval_group_today(&ev[gl]), 5e7, 0, "the global route's day is its own (50,000,000)");
        struct bt_eval one;
        bt_eval_route(&f.cfg, &f.st, od, NOW, &one);
        NEAR(bt_eval_group_today(&one), 7.2e8, 0, "bt_eval_route sums the same day");
        fx_free(&f);
    }
}

static void test_warnings(void)
{
    struct fx f;
    fx_init(&f);
    int h = fx_route(&f, "h", "amazon.nova-lite-v1:0", 1000000, 1000);
    int q = fx_route(&f, "q", "amazon.nova-pro-v1:0", NAN, 1000);
    fx_start(&f);
    /* Hidden parallelism: 40 in flight vs 25; retries 100 of 400 offered = 25 % > 20 %. */
    minute(&f, h, M, 10, 10000, 1000, 1000);
    put(&f, h, BT_SIG_ADM_IN_FLIGHT, NOW - 10, 40);
    put(&f, h, BT_SIG_ADM_CONC_LIMIT, NOW - 10, 25);
    put(&f, h, BT_SIG_ADM_ADMITTED, NOW - 10, 300);
    put(&f, h, BT_SIG_ADM_RETRIES, NOW - 10, 100);
    put(&f, h, BT_SIG_ADM_OUT_P99, NOW - 10, 200);
    struct bt_eval e;
    bt_eval_route(&f.cfg, &f.st, h, NOW, &e);
    OK(bt_eval_has(&e, BT_W_HIDDEN_PARALLELISM), "HIDDEN_PARALLELISM 40 > 25");
    OK(bt_eval_has(&e, BT_W_RETRY_LOAD), "RETRY_LOAD at 25 %% retries");
    /* max_tokens 1,000 > 4 x p99 200: recommended = ceil(200 x 1.25 / 64) x 64 = 256 */
    OK(bt_eval_has(&e, BT_W_OVERSIZED_MAX_TOKENS), "OVERSIZED_MAX_TOKENS 1,000 vs p99 200");
    NEAR(e.recommended_max_tokens, 256, 0, "recommended max_tokens = p99 + 25 %% rounded up to 64");

    bt_eval_route(&f.cfg, &f.st, q, NOW, &e);
    OK(bt_eval_has(&e, BT_W_QUOTA_UNKNOWN) && e.status == BT_ST_UNKNOWN, "QUOTA_UNKNOWN -> unknown");

    /* Stale: CloudWatch failing after the data. */
    struct bt_event ev = {.t = NOW, .type = BT_EV_ERROR, .route = h, .source = BT_SRC_CLOUDWATCH};
    bt_strlcpy(ev.text, "ThrottlingException after 3 attempts", sizeof ev.text);
    bt_model_event(&f.st, f.cfg.routes, &ev);
    bt_eval_route(&f.cfg, &f.st, h, NOW, &e);
    OK(bt_eval_has(&e, BT_W_STALE) && strstr(e.stale_reason, "ThrottlingException"), "STALE names the error");

    /* LOW_HEADROOM: used 950,000 of 1,000,000 = 5 % -> warn; 975,000 -> 2.5 % crit. */
    put(&f, q, BT_SIG_ADM_RESERVED_HELD, NOW - 5, 0);
    f.cfg.routes[q].quota[BT_Q_TPM] = (struct bt_quota){1000000, BT_QS_SERVICE_QUOTAS, "L-Q", ""};
    minute(&f, q, M, 100, 950000, 0, 1000);
    put(&f, q, BT_SIG_ADM_IN_FLIGHT, NOW - 5, 0);
    bt_eval_route(&f.cfg, &f.st, q, NOW, &e);
    OK(bt_eval_has(&e, BT_W_LOW_HEADROOM) && e.status == BT_ST_WARN, "LOW_HEADROOM warn at 5 %% (crit is below 5 %%)");
    put(&f, q, BT_SIG_INPUT_TOKENS, M, 975000);
    bt_eval_route(&f.cfg, &f.st, q, NOW, &e);
    OK(e.status == BT_ST_CRIT, "LOW_HEADROOM crit at 2.5 %%");
    fx_free(&f);
}

static void test_precision(void)
{
    /* Series keep doubles: a day's sum of 1,234,567,891 reads back exactly
     * (a float would give 1,234,567,936). */
    struct fx f;
    fx_init(&f);
    int r = fx_route(&f, "p", "amazon.nova-lite-v1:0", 1e9, 1000);
    fx_start(&f);
    put(&f, r, BT_SIG_DAY_INPUT_TOKENS, T0 - 36000, 1234567891);
    NEAR(bt_store_at(&f.st, r, BT_SIG_DAY_INPUT_TOKENS, T0 - 36000), 1234567891, 0,
         "1,234,567,891 stored exactly");
    /* ... and through a recording and back (format 1.2: as many digits as it takes) */
    char path[] = "/tmp/bedtop-precision-XXXXXX";
    int fd = mkstemp(path);
    OK(fd >= 0, "temporary file");
    close(fd);
    unlink(path);
    char err[512] = "";
    struct bt_recorder *rec = bt_recorder_open(path, &f.cfg, "live", NOW, err, sizeof err);
    OK(rec != NULL, "recorder opens: %s", rec ? "" : err);
    if (rec) {
        bt_recorder_attach(rec, &f.st);
        put(&f, r, BT_SIG_DAY_INPUT_TOKENS, T0 - 36000, 1234567891.25);
        put(&f, r, BT_SIG_LATENCY_AVG, M, 0.1);
        bt_recorder_flush(rec, NOW);
        bt_recorder_close(rec);
        struct bt_replay rp;
        OK(bt_replay_open(&rp, path, NULL, NULL, err, sizeof err), "replay opens: %s", err);
        bt_replay_seek(&rp, NOW);
        NEAR(bt_store_at(&rp.store, 0, BT_SIG_DAY_INPUT_TOKENS, T0 - 36000), 1234567891.25, 0,
             "1,234,567,891.25 read back exactly from the recording");
        NEAR(bt_store_at(&rp.store, 0, BT_SIG_LATENCY_AVG, M), 0.1, 0, "0.1 read back exactly");
        bt_replay_free(&rp);
        unlink(path);
    }
    fx_free(&f);
}

static void test_status_codes(void)
{
    OK(bt_status_exit(BT_ST_OK) == 0 && bt_status_exit(BT_ST_WARN) == 1 &&
       bt_status_exit(BT_ST_CRIT) == 2 && bt_status_exit(BT_ST_UNKNOWN) == 3,
       "exit codes follow the monitoring-plugin convention");
    OK(bt_status_worse(BT_ST_UNKNOWN, BT_ST_CRIT) == BT_ST_CRIT, "crit beats unknown");
    for (int i = 0; i < BT_W_COUNT; i++)
        OK(bt_wcode_by_name(bt_wcode_name(i)) == i && strlen(bt_wcode_action(i)) > 20,
           "warning %s has a code and an action", bt_wcode_name(i));
}

/* ---- contract version 3: the frame, qualities, sides (DESIGN.md) ---- */

static void test_quality_rules(void)
{
    OK(bt_quality_add(BT_QL_KNOWN, BT_QL_UNKNOWN) == BT_QL_LOWER, "known + unknown = lower bound");
    OK(bt_quality_add(BT_QL_IDLE, BT_QL_IDLE) == BT_QL_IDLE, "idle + idle = idle");
    OK(bt_quality_add(BT_QL_IDLE, BT_QL_KNOWN) == BT_QL_KNOWN, "idle + known = known");
    OK(bt_quality_add(BT_QL_LOWER, BT_QL_KNOWN) == BT_QL_LOWER, "lower + known = lower");
    OK(bt_quality_add(BT_QL_UPPER, BT_QL_KNOWN) == BT_QL_UPPER, "upper + known = upper");
    OK(bt_quality_add(BT_QL_UPPER, BT_QL_LOWER) == BT_QL_UNKNOWN, "upper + lower bounds nothing");
    OK(bt_quality_add(BT_QL_UNKNOWN, BT_QL_UNKNOWN) == BT_QL_UNKNOWN, "unknown + unknown = unknown");
    OK(bt_quality_headroom(BT_QL_LOWER) == BT_QL_UPPER, "headroom from a lower-bound use: at most");
    OK(bt_quality_headroom(BT_QL_UPPER) == BT_QL_LOWER, "headroom from an upper-bound use: at least");
    OK(bt_quality_headroom(BT_QL_IDLE) == BT_QL_KNOWN, "headroom of an idle route is known");
    STREQ(bt_quality_name(BT_QL_LOWER), "lower-bound", "quality names as in the JSON");
}

static void test_resumption(void)
{
    /* Busy at 09:10 (100 calls), idle since; at 10:08 two calls already published,
     * but the poll at 10:10 settled minutes up to 10:07 only (10:08 ends at 10:09,
     * + 120 s lag = 10:11). Version 2 evaluated the route at 09:10 and showed its
     * 100 calls as current; version 3 evaluates 10:07: idle, used 0, the whole
     * 500,000 free, and it notes the unsettled 10:08. */
    struct fx f;
    fx_init(&f);
    int r = fx_route(&f, "back", "amazon.nova-lite-v1:0", 500000, 1000);
    fx_start(&f);
    minute(&f, r, T0 - 3000, 100, 50000, 30000, 1000); /* 09:10 */
    minute(&f, r, M + 60, 2, 1000, 600, 1000);          /* 10:08, not settled */
    struct bt_eval e;
    bt_eval_route(&f.cfg, &f.st, r, NOW, &e);
    OK(e.minute == M && e.state == BT_FR_IDLE, "evaluated at 10:07, idle (not at 09:10)");
    NEAR(e.used, 0, 0, "used 0 now");
    NEAR(e.headroom_pct, 100, 0, "headroom 100 %");
    OK(e.used_q == BT_QL_IDLE && e.headroom_q == BT_QL_KNOWN, "used idle, headroom known");
    OK(e.fresher_minute == M + 60, "the unsettled 10:08 is noted");
    fx_free(&f);

    /* A brand-new route: admission answers, CloudWatch never has: unknown, not ok. */
    fx_init(&f);
    r = fx_route(&f, "new", "amazon.nova-lite-v1:0", 500000, 1000);
    bt_config_finish(&f.cfg);
    bt_store_init(&f.st, f.cfg.nroutes, 1440);
    struct bt_event ok = {.t = NOW, .type = BT_EV_OK, .route = r, .source = BT_SRC_ADMISSION};
    bt_model_event(&f.st, f.cfg.routes, &ok);
    put(&f, r, BT_SIG_ADM_IN_FLIGHT, NOW - 5, 0);
    bt_eval_route(&f.cfg, &f.st, r, NOW, &e);
    OK(e.status == BT_ST_UNKNOWN && e.stale && e.state == BT_FR_UNKNOWN,
       "brand-new route: unknown until CloudWatch answers");
    fx_free(&f);
}

static void test_burst_gauge(void)
{
    /* CloudWatch idle at 10:07 (a good poll, no datapoints: the burst is not published
     * yet) while the admission gauge says 50 calls in flight, max_tokens 4,000,
     * against 200,000 TPM. With no R this minute, R falls back to max_tokens:
     *   held >= 50 x 4,000 = 200,000 (a lower bound); used >= 0 + 200,000
     *   headroom <= 200,000 - 200,000 = 0 (an upper bound): 0 %, crit, fits 0.
     * Version 2 showed used 0, headroom 100 %, ok. */
    struct fx f;
    fx_init(&f);
    int r = fx_route(&f, "burst", "amazon.nova-lite-v1:0", 200000, 4000);
    fx_start(&f);
    put(&f, r, BT_SIG_ADM_IN_FLIGHT, NOW - 5, 50);
    struct bt_eval e;
    bt_eval_route(&f.cfg, &f.st, r, NOW, &e);
    OK(e.state == BT_FR_IDLE, "CloudWatch idle at 10:07");
    NEAR(e.held, 200000, 0, "held at least 50 x 4,000 = 200,000");
    OK(e.held_q == BT_QL_LOWER && e.used_q == BT_QL_LOWER, "held and used are lower bounds");
    STREQ(e.reservation_source, "max-tokens", "R: max_tokens, the least a call holds");
    NEAR(e.headroom_pct, 0, 0, "headroom at most 0 %");
    OK(e.headroom_q == BT_QL_UPPER, "headroom is an upper bound");
    NEAR(e.fits_more, 0, 0, "nothing more fits");
    OK(e.status == BT_ST_CRIT && bt_eval_has(&e, BT_W_LOW_HEADROOM), "crit: LOW_HEADROOM");
    OK(strstr(warning(&e, BT_W_LOW_HEADROOM)->message, "at most") != NULL,
       "LOW_HEADROOM says at most");

    /* With the last minutes' R: 09:55 had 10 calls and 20,000 input, so R = 2,000 +
     * 4,000 = 6,000: held >= 50 x 6,000 = 300,000; headroom <= -100,000 = -50 %. */
    minute(&f, r, T0 - 300, 10, 20000, 5000, 2000);
    bt_eval_route(&f.cfg, &f.st, r, NOW, &e);
    STREQ(e.reservation_source, "last-minutes", "R from the last minutes");
    NEAR(e.reservation, 6000, 0, "R 6,000");
    NEAR(e.held, 300000, 0, "held at least 300,000");
    NEAR(e.headroom_pct, -50, 1e-9, "headroom at most -50 %");
    fx_free(&f);
}

static void test_unknown_member(void)
{
    /* Two routes on quota L-SHARED (1,000,000). a at 10:07: 60 calls, input 240,000,
     * output 60,000, latency 1,000 ms, max_tokens 1,000, burndown 1:
     *   settled 300,000; R = 4,000 + 1,000 = 5,000; in flight 60 / 60 x 1 s = 1;
     *   held 5,000; used 305,000.
     * b's CloudWatch fails: its use is unknown, so the group's use is at least
     * 305,000 and the headroom at most 695,000 (69.5 %): PARTIAL_GROUP names b and
     * SHARED_QUOTA never says b uses 0. */
    struct fx f;
    fx_init(&f);
    int a = fx_route(&f, "a", "amazon.nova-lite-v1:0", 1000000, 1000);
    int b = fx_route(&f, "b", "amazon.nova-lite-v1:0", NAN, 1000);
    bt_strlcpy(f.cfg.routes[a].quota[BT_Q_TPM].code, "L-SHARED", sizeof f.cfg.routes[a].quota[BT_Q_TPM].code);
    bt_strlcpy(f.cfg.routes[b].quota_code, "L-SHARED", sizeof f.cfg.routes[b].quota_code);
    fx_start(&f);
    minute(&f, a, M, 60, 240000, 60000, 1000);
    minute(&f, b, M - 600, 500, 900000, 100000, 1000); /* b's last good data, 09:57 */
    struct bt_event ev = {.t = NOW, .type = BT_EV_ERROR, .route = b, .source = BT_SRC_CLOUDWATCH};
    bt_strlcpy(ev.text, "AccessDenied", sizeof ev.text);
    bt_model_event(&f.st, f.cfg.routes, &ev);
    struct bt_eval ev2[2];
    bt_eval_all(&f.cfg, &f.st, NOW, ev2);
    NEAR(ev2[a].used, 305000, 0, "a uses 305,000");
    NEAR(bt_eval_group_used(&ev2[a]), 305000, 0, "group: at least 305,000");
    OK(bt_eval_group_used_q(&ev2[a]) == BT_QL_LOWER, "group use is a lower bound");
    NEAR(ev2[a].headroom_pct, 69.5, 1e-9, "headroom at most 69.5 %");
    OK(ev2[a].headroom_q == BT_QL_UPPER, "headroom an upper bound");
    const struct bt_warning *w = warning(&ev2[a], BT_W_PARTIAL_GROUP);
    OK(w && strstr(w->message, "b on the same quota could not be read"), "PARTIAL_GROUP names b");
    w = warning(&ev2[a], BT_W_SHARED_QUOTA);
    OK(w && !strstr(w->message, "use 0") && strstr(w->message, "use is unknown"),
       "SHARED_QUOTA: b's use unknown, never 0");
    OK(ev2[b].state == BT_FR_UNKNOWN && ev2[b].used_q == BT_QL_UNKNOWN && isnan(ev2[b].used),
       "b: unknown, its 09:57 figures not shown as now");
    OK(ev2[b].status == BT_ST_UNKNOWN, "b: status unknown (STALE)");
    /* b's admission gauge still answers: 2 in flight, each holding at least the R of
     * b's last minute with one (09:57: 900,000 / 500 + 1,000 = 2,800), so b uses at
     * least 5,600 (a lower bound, not unknown); its CloudWatch is still unknown, so
     * PARTIAL_GROUP still names it, and the group's use is at least 310,600: at most
     * 68.94 % free. */
    put(&f, b, BT_SIG_ADM_IN_FLIGHT, NOW - 5, 2);
    bt_eval_all(&f.cfg, &f.st, NOW, ev2);
    OK(ev2[b].used_q == BT_QL_LOWER && ev2[b].used == 5600, "b: at least 5,600 (its gauge)");
    NEAR(ev2[a].headroom_pct, 68.94, 1e-9, "a: at most 68.94 %");
    OK(bt_eval_has(&ev2[a], BT_W_PARTIAL_GROUP), "PARTIAL_GROUP still names b");
    fx_free(&f);
}

static void test_mantle_binding_fits(void)
{
    /* Mantle, input 4,000,000 / output 4,000,000, max_tokens 2,000; 400 inferences,
     * input 1,000,000, output 3,900,000, no latency metric (mantle publishes none):
     *   input used <= max(1,000,000, 400 x (2,500 + 2,000)) = 1,800,000: 55 %
     *   output used 3,900,000: headroom 100,000 = 2.5 %: output binds
     *   fits = floor(100,000 / 2,000 max_tokens) = 50 (version 2: 488, the input
     *   side's floor(2,200,000 / 4,500) beside the output side's 2.5 %).
     * OUTPUT_CUTOFF crit: answers get cut off, not throttled. */
    struct fx f;
    fx_init(&f);
    int r = fx_route(&f, "agents", "anthropic.claude-opus-4-7", NAN, 2000);
    f.cfg.routes[r].endpoint = BT_EP_MANTLE;
    f.cfg.routes[r].quota[BT_Q_INPUT_TPM] = (struct bt_quota){4000000, BT_QS_CONFIG, "", ""};
    f.cfg.routes[r].quota[BT_Q_OUTPUT_TPM] = (struct bt_quota){4000000, BT_QS_CONFIG, "", ""};
    fx_start(&f);
    minute(&f, r, M, 400, 1000000, 3900000, NAN);
    struct bt_eval e;
    bt_eval_route(&f.cfg, &f.st, r, NOW, &e);
    OK(e.binding == BT_SIDE_OUTPUT, "output binds");
    NEAR(e.headroom_pct, 2.5, 1e-9, "2.5 %");
    NEAR(e.fits_more, 50, 0, "fits 50, from the output side");
    NEAR(e.side[BT_SIDE_INPUT].fits, 488, 0, "the input side alone would fit 488");
    const struct bt_warning *w = warning(&e, BT_W_OUTPUT_CUTOFF);
    OK(w && w->severity == BT_ST_CRIT && strstr(w->message, "cut off"), "OUTPUT_CUTOFF crit");
    OK(isnan(e.burndown) && !strcmp(e.burndown_source, "none"), "mantle: burndown none, not 1 from the table");
    fx_free(&f);
}

static void test_rpm_binding(void)
{
    /* Nova Lite (burndown 1), 2,000,000 TPM and 10,000 RPM. At 10:07: 9,300
     * invocations (accepted: the RPM side's use) and 300 throttles (offered 9,600,
     * beside it); input 279,000, output 22,000, estimate 301,000, latency 200 ms,
     * max_tokens 100:
     *   tokens: in flight 9,300 / 60 x 0.2 = 31; R = 30 + 100 = 130; held 4,030;
     *           used 305,030; headroom 1,694,970 = 84.75 %
     *   rpm:    headroom 10,000 - 9,300 = 700 = 7 %: binds (warn: 7 < 20, > 5)
     * fits 700 more requests a minute; the throttles are the RPM quota's. */
    struct fx f;
    fx_init(&f);
    int r = fx_route(&f, "chat", "amazon.nova-lite-v1:0", 2000000, 100);
    f.cfg.routes[r].quota[BT_Q_RPM] = (struct bt_quota){10000, BT_QS_SERVICE_QUOTAS, "L-RPM", ""};
    fx_start(&f);
    minute(&f, r, M, 9300, 279000, 22000, 200);
    put(&f, r, BT_SIG_THROTTLES, M, 300);
    put(&f, r, BT_SIG_ESTIMATED_TPM, M, 301000);
    struct bt_eval e;
    bt_eval_route(&f.cfg, &f.st, r, NOW, &e);
    NEAR(e.side[BT_SIDE_TPM].pct, 84.7485, 1e-9, "tokens: 84.75 % free");
    NEAR(e.requests, 9300, 0, "9,300 requests accepted");
    NEAR(bt_eval_offered(&e), 9600, 0, "9,600 offered (accepted + throttled)");
    OK(e.binding == BT_SIDE_RPM, "rpm binds");
    NEAR(e.headroom_pct, 7, 1e-9, "headroom 7 %");
    NEAR(e.fits_more, 700, 0, "700 more requests a minute");
    const struct bt_warning *w = warning(&e, BT_W_LOW_HEADROOM);
    OK(w && w->severity == BT_ST_WARN && strstr(w->message, "rpm headroom"), "LOW_HEADROOM names rpm");
    w = warning(&e, BT_W_THROTTLED_BELOW_ESTIMATE);
    OK(w && strstr(w->message, "requests-per-minute quota") && strstr(w->action, "RPM"),
       "throttles blamed on the RPM quota");
    struct bt_report rep = {.cfg = &f.cfg, .store = &f.st, .now = NOW, .evals = &e, .n = 1, .mode = "live"};
    cJSON *j = bt_report_route_json(&rep, 0);
    OK(!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(j, "binding_side")), "rpm") &&
       cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "rpm"), "headroom")) == 700 &&
       cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "quota"), "rpm")) == 10000,
       "JSON: binding_side rpm, rpm.headroom 700, quota.rpm 10,000");
    OK(!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(j, "evaluated_minute")), "2026-11-29T10:07:00Z"),
       "JSON: evaluated_minute");
    cJSON_Delete(j);

    /* Service capacity: server errors rising with the throttles (40 now, 0 five
     * minutes before) come first: no quota increase fixes them. */
    put(&f, r, BT_SIG_SERVER_ERRORS, M, 40);
    bt_eval_route(&f.cfg, &f.st, r, NOW, &e);
    w = warning(&e, BT_W_THROTTLED_BELOW_ESTIMATE);
    OK(w && strstr(w->message, "service capacity") && strstr(w->action, "No quota increase"),
       "server errors rising: service capacity");
    fx_free(&f);
}

static void test_reserved_tier(void)
{
    /* On-demand 1,000,000 TPM, burndown 1. At 10:07: 300 calls, input 900,000,
     * output 60,000 (every tier), max_tokens 500 (2.5 x the mean output of 200),
     * 0 in flight (gauge); ResolvedServiceTier=reserved
     * served 100 calls, input 300,000, output 20,000:
     *   all tiers: used 960,000: 4 % free (version 2, crit)
     *   on-demand: used 960,000 - 320,000 = 640,000: 36 % free
     * reserved tier, input 1,000,000 / output 100,000: input 300,000 (70 % free),
     * output 20,000 (80 %); tpm binds at 36 %. */
    struct fx f;
    fx_init(&f);
    int r = fx_route(&f, "tiered", "amazon.nova-lite-v1:0", 1000000, 500);
    f.cfg.routes[r].quota[BT_Q_RES_INPUT_TPM] = (struct bt_quota){1000000, BT_QS_CONFIG, "", ""};
    f.cfg.routes[r].quota[BT_Q_RES_OUTPUT_TPM] = (struct bt_quota){100000, BT_QS_CONFIG, "", ""};
    fx_start(&f);
    minute(&f, r, M, 300, 900000, 60000, NAN);
    put(&f, r, BT_SIG_ADM_IN_FLIGHT, NOW - 5, 0);
    put(&f, r, BT_SIG_TIER_RES_INVOCATIONS, M, 100);
    put(&f, r, BT_SIG_TIER_RES_INPUT, M, 300000);
    put(&f, r, BT_SIG_TIER_RES_OUTPUT, M, 20000);
    struct bt_eval e;
    bt_eval_route(&f.cfg, &f.st, r, NOW, &e);
    NEAR(e.tier_reserved_share, 1.0 / 3, 1e-12, "a third of the calls reserved");
    NEAR(e.used, 640000, 0, "on-demand use 640,000");
    NEAR(e.headroom_pct, 36, 1e-9, "36 % free, not 4 %");
    OK(e.binding == BT_SIDE_TPM, "tpm binds");
    NEAR(e.side[BT_SIDE_RES_INPUT].pct, 70, 1e-9, "reserved input 70 % free");
    NEAR(e.side[BT_SIDE_RES_OUTPUT].pct, 80, 1e-9, "reserved output 80 % free");
    OK(e.status == BT_ST_OK, "ok");
    fx_free(&f);
}

static void test_concurrent_side(void)
{
    /* Nova Lite (burndown 1), 2,000,000 TPM; Service Quotas lists 10 concurrent
     * requests (as for video and async models). max_tokens 500.
     * gauge: at 10:07 600 calls, 600,000 in, 60,000 out, latency 1,000 ms; the
     *   admission gauge says 9 in flight: R = 1,000 + 500 = 1,500, held 13,500,
     *   used 673,500: tokens 66.3 % free; concurrent 9 of 10 (known): 1 = 10 % left,
     *   binds (warn: 10 < 20, > 5), fits 1 more call in flight
     * littles: no gauge; 120 calls, 120,000 in, 12,000 out, 3,000 ms: in flight is
     *   the minute's mean 120 / 60 x 3 = 6, which the peak is at least: headroom at
     *   most 4 = 40 % (upper bound), binds (tokens: 141,000 used, 92.95 % free)
     * quiet: a good poll, no datapoint, no gauge: 0 in flight (idle), 100 % left */
    struct fx f;
    fx_init(&f);
    int g = fx_route(&f, "gauge", "amazon.nova-lite-v1:0", 2000000, 500);
    int l = fx_route(&f, "littles", "amazon.nova-micro-v1:0", 2000000, 500);
    int q = fx_route(&f, "quiet", "amazon.nova-pro-v1:0", 2000000, 500);
    for (int r = 0; r < 3; r++)
        f.cfg.routes[r].quota[BT_Q_CONCURRENT] = (struct bt_quota){10, BT_QS_SERVICE_QUOTAS, "L-CONC", ""};
    fx_start(&f);
    minute(&f, g, M, 600, 600000, 60000, 1000);
    put(&f, g, BT_SIG_ADM_IN_FLIGHT, NOW - 5, 9);
    minute(&f, l, M, 120, 120000, 12000, 3000);
    struct bt_eval ev[3];
    bt_eval_all(&f.cfg, &f.st, NOW, ev);

    const struct bt_side_fig *c = &ev[g].side[BT_SIDE_CONCURRENT];
    OK(c->applies && c->used == 9 && c->used_q == BT_QL_KNOWN && !strcmp(c->source_name, "admission"),
       "gauge: 9 in flight, known, from the admission gauge");
    NEAR(ev[g].side[BT_SIDE_TPM].pct, 66.325, 1e-9, "gauge: tokens 66.3 % free");
    OK(ev[g].binding == BT_SIDE_CONCURRENT, "gauge: the concurrent side binds");
    NEAR(ev[g].headroom_pct, 10, 1e-9, "gauge: 10 % left");
    NEAR(ev[g].fits_more, 1, 0, "gauge: 1 more call in flight");
    OK(ev[g].headroom_q == BT_QL_KNOWN, "gauge: headroom known");
    const struct bt_warning *w = warning(&ev[g], BT_W_LOW_HEADROOM);
    OK(w && w->severity == BT_ST_WARN && strstr(w->message, "concurrent headroom 1 of 10 in flight"),
       "gauge: LOW_HEADROOM names the concurrent side (%s)", w ? w->message : "none");

    c = &ev[l].side[BT_SIDE_CONCURRENT];
    NEAR(c->used, 6, 1e-9, "littles: 6 in flight by Little's law");
    OK(c->used_q == BT_QL_LOWER && !strcmp(c->source_name, "littles-law"),
       "littles: a minute's mean is a lower bound of the peak");
    OK(ev[l].binding == BT_SIDE_CONCURRENT && ev[l].headroom_q == BT_QL_UPPER,
       "littles: binds, headroom an upper bound");
    NEAR(ev[l].headroom_pct, 40, 1e-9, "littles: at most 40 % left");
    NEAR(ev[l].fits_more, 4, 0, "littles: at most 4 more");
    OK(!bt_eval_has(&ev[l], BT_W_LOW_HEADROOM), "littles: no LOW_HEADROOM at 40 %%");

    c = &ev[q].side[BT_SIDE_CONCURRENT];
    OK(ev[q].state == BT_FR_IDLE && c->used == 0 && c->used_q == BT_QL_IDLE && c->pct == 100,
       "quiet: idle, 0 in flight, 100 %% left");

    struct bt_report rep = {.cfg = &f.cfg, .store = &f.st, .now = NOW, .evals = ev, .n = 3, .mode = "live"};
    cJSON *j = bt_report_route_json(&rep, g);
    const cJSON *js = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "sides"), "concurrent");
    OK(!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(j, "binding_side")), "concurrent") &&
           cJSON_GetNumberValue(cJSON_GetObjectItem(js, "used")) == 9 &&
           !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(js, "used_quality")), "known") &&
           cJSON_GetNumberValue(cJSON_GetObjectItem(js, "headroom")) == 1 &&
           cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "quota"), "concurrent")) == 10,
       "JSON: binding_side concurrent, sides.concurrent used 9 (known), headroom 1, quota.concurrent 10");
    cJSON_Delete(j);
    j = bt_report_route_json(&rep, l);
    js = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "sides"), "concurrent");
    OK(!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(js, "headroom_quality")), "upper-bound"),
       "JSON: littles' concurrent headroom is an upper bound");
    cJSON_Delete(j);
    struct bt_buf text = {0};
    bt_expo_render(&rep, BT_EXPO_TEXT, &text);
    OK(strstr(bt_buf_str(&text), "bedtop_side_headroom_ratio{route=\"gauge\"") &&
           strstr(bt_buf_str(&text), "side=\"concurrent\",binding=\"true\",quality=\"known\"} 0.1\n"),
       "/metrics: the concurrent side's ratio 0.1, binding");
    bt_buf_free(&text);
    fx_free(&f);
}

static void test_daily_sides(void)
{
    /* Llama 3.3 70B on-demand (a) and cross-Region us. (b): one daily quota of
     * 100,000,000 for the model, summed across inference types. Today: a 50,000,000,
     * b 35,000,000 (day sums at midnight): 85,000,000 = 85 % used, 15 % left: the
     * daily side binds for both (their tpm sides are ~99 % free) and DAILY_QUOTA
     * warns (80 % <= 85 % < 95 %). Nova Lite (c) lists the account-wide cross-model
     * quota of 200,000,000 and used 30,000,000 today: the account's routes together
     * 115,000,000, so 42.5 % is left on every route's daily-account side. */
    struct fx f;
    fx_init(&f);
    int a = fx_route(&f, "a", "meta.llama3-3-70b-instruct-v1:0", 2000000, 1000);
    int b = fx_route(&f, "b", "us.meta.llama3-3-70b-instruct-v1:0", 2000000, 1000);
    int c = fx_route(&f, "c", "amazon.nova-lite-v1:0", 2000000, 1000);
    f.cfg.routes[a].quota[BT_Q_TPD] = (struct bt_quota){1e8, BT_QS_SERVICE_QUOTAS, "L-TPD", ""};
    f.cfg.routes[c].quota[BT_Q_TPD_ACCOUNT] = (struct bt_quota){2e8, BT_QS_SERVICE_QUOTAS, "L-E3F10727", ""};
    fx_start(&f);
    int64_t day = T0 - 36000;
    int rs[] = {a, b, c};
    double today[] = {50e6, 35e6, 30e6};
    for (int i = 0; i < 3; i++) {
        minute(&f, rs[i], M, 10, 10000, 1000, 1000);
        put(&f, rs[i], BT_SIG_DAY_INPUT_TOKENS, day, today[i]);
    }
    struct bt_eval ev[3];
    bt_eval_all(&f.cfg, &f.st, NOW, ev);
    /* the account lists the cross-model quota: the model's daily quota is legacy and
     * not used; the account-wide side is an estimate (pricing-weighted), never known */
    OK(!ev[a].side[BT_SIDE_DAILY].applies && !ev[b].side[BT_SIDE_DAILY].applies,
       "a, b: the per-model daily quota is replaced by the cross-model one");
    OK(!ev[c].side[BT_SIDE_DAILY].applies, "c: no model daily quota listed");
    NEAR(ev[c].side[BT_SIDE_DAILY_ACCOUNT].group_used, 115e6, 0, "account-wide: every route's tokens");
    NEAR(ev[a].side[BT_SIDE_DAILY_ACCOUNT].pct, 42.5, 1e-9, "42.5 % of the account-wide quota left");
    OK(ev[a].side[BT_SIDE_DAILY_ACCOUNT].used_q == BT_QL_ESTIMATE &&
           ev[a].side[BT_SIDE_DAILY_ACCOUNT].group_q == BT_QL_ESTIMATE &&
           ev[a].side[BT_SIDE_DAILY_ACCOUNT].headroom_q == BT_QL_ESTIMATE,
       "the cross-model side's use and headroom are estimates");
    OK(ev[a].binding == BT_SIDE_DAILY_ACCOUNT && ev[a].headroom_q == BT_QL_ESTIMATE,
       "it binds only as an estimate: headroom_quality estimate, never known");
    OK(!bt_eval_has(&ev[a], BT_W_LOW_HEADROOM), "no LOW_HEADROOM from a daily side");
    /* an account that lists no cross-model quota (legacy): the model's quota holds */
    f.cfg.routes[c].quota[BT_Q_TPD_ACCOUNT] = (struct bt_quota){NAN, BT_QS_UNKNOWN, "", ""};
    bt_eval_all(&f.cfg, &f.st, NOW, ev);
    NEAR(ev[b].side[BT_SIDE_DAILY].group_used, 85e6, 0, "a and b share the model's daily quota");
    NEAR(ev[b].side[BT_SIDE_DAILY].pct, 15, 1e-9, "15 % left for b, whose own route lists none");
    OK(ev[a].binding == BT_SIDE_DAILY && ev[b].binding == BT_SIDE_DAILY, "the daily side binds");
    NEAR(ev[a].headroom_pct, 15, 1e-9, "headroom_pct is the daily side's");
    OK(bt_eval_has(&ev[a], BT_W_DAILY_QUOTA) && !bt_eval_has(&ev[a], BT_W_LOW_HEADROOM),
       "DAILY_QUOTA warns (not LOW_HEADROOM)");
    OK(!ev[a].side[BT_SIDE_DAILY_ACCOUNT].applies, "no cross-model quota listed");
    fx_free(&f);
}

static void test_daily_hourly_sums(void)
{
    /* Live with a short history (serve): the day sums are asked once an hour, to the
     * hour, and stored at the last minute they cover; the minutes after it come from
     * the per-minute signals. At 10:10, the day sums to 10:00 (stored at 09:59): input
     * 40,000,000, output 2,000,000; the minutes 10:00 .. 10:07 (the evaluated one)
     * 8 x 10,000 input and 8 x 1,000 output. Llama's output burns 1x, so today =
     * 40,000,000 + 80,000 + 2,000,000 + 8,000 =
     * 42,088,000 of 100,000,000: 57.912 % left. A minute before 10:00 that is also in
     * the store (09:58) is inside the day sums and not counted again. */
    struct fx f;
    fx_init(&f);
    int a = fx_route(&f, "a", "meta.llama3-3-70b-instruct-v1:0", 2000000, 1000);
    f.cfg.routes[a].quota[BT_Q_TPD] = (struct bt_quota){1e8, BT_QS_SERVICE_QUOTAS, "L-TPD", ""};
    fx_start(&f);
    int64_t hour = NOW - 600; /* 10:00 */
    for (int64_t m = hour - 120; m <= M; m += 60)
        minute(&f, a, m, 10, 10000, 1000, 1000);
    put(&f, a, BT_SIG_DAY_INPUT_TOKENS, hour - 60, 40e6);
    put(&f, a, BT_SIG_DAY_OUTPUT_TOKENS, hour - 60, 2e6);
    struct bt_eval ev[1];
    bt_eval_all(&f.cfg, &f.st, NOW, ev);
    NEAR(ev[a].tokens_today, 42088000, 0, "the hourly day sums and the minutes after them");
    NEAR(ev[a].side[BT_SIDE_DAILY].pct, 57.912, 1e-9, "57.912 % of the daily quota left");
    NEAR(bt_store_day_sum(&f.st, a, BT_SIG_DAY_OUTPUT_TOKENS, M), 2008000, 0,
         "bt_store_day_sum: output 2,000,000 to 10:00, then 8 minutes of 1,000");
    OK(isnan(bt_store_day_sum(&f.st, a, BT_SIG_DAY_CACHE_WRITE, M)),
       "no cache write listed: no day sum, no minutes (NAN)");
    fx_free(&f);
}

static void test_region_count(void)
{
    /* routes in us-east-1, eu-west-1, us-east-1, ap-south-1; CloudWatch failing for the
     * third (us-east-1) and Service Quotas for the fourth: 3 Regions, 2 failing; of
     * routes 1 and 2 alone: 2 Regions, 1 failing; of route 1 alone: 1, none */
    struct bt_config cfg;
    bt_config_init(&cfg);
    const char *reg[] = {"us-east-1", "eu-west-1", "us-east-1", "ap-south-1"};
    struct bt_eval ev[4];
    memset(ev, 0, sizeof ev);
    for (int i = 0; i < 4; i++) {
        char name[16];
        snprintf(name, sizeof name, "r%d", i);
        int r = bt_config_add_route(&cfg, name);
        bt_strlcpy(cfg.routes[r].region, reg[i], sizeof cfg.routes[r].region);
    }
    ev[2].failing[BT_SRC_CLOUDWATCH] = true;
    ev[3].failing[BT_SRC_QUOTAS] = true;
    struct bt_region_count c = bt_region_count(&cfg, ev, NULL, 0);
    OK(c.regions == 3 && c.failing == 2, "regions: 3, 2 failing (%d, %d)", c.regions, c.failing);
    int which[] = {1, 2};
    c = bt_region_count(&cfg, ev, which, 2);
    OK(c.regions == 2 && c.failing == 1, "routes 1 and 2: 2 Regions, 1 failing (%d, %d)", c.regions,
       c.failing);
    c = bt_region_count(&cfg, ev, which, 1);
    OK(c.regions == 1 && c.failing == 0, "route 1 alone: 1 Region, none failing");
    c = bt_region_count(&cfg, ev, which, 0);
    OK(c.regions == 0 && c.failing == 0, "no route: no Region");
    bt_config_free(&cfg);
}

static void test_rpm_accepted(void)
{
    /* issue 32: Invocations counts the calls accepted, including those that later
     * failed, never throttled ones. Nova Lite, 10,000 RPM; at 10:07 Invocations 100,
     * InvocationClientErrors 10, InvocationServerErrors 5, InvocationThrottles 50:
     *   rpm used = accepted = 100 (the errors are in it already: not 115, not 165)
     *   offered = 100 + 50 = 150, beside it
     *   headroom 10,000 - 100 = 9,900 = 99 %
     * Little's law on Invocations alone: 100 / 60 x 600 ms = 1 in flight. */
    struct fx f;
    fx_init(&f);
    int r = fx_route(&f, "chat", "amazon.nova-lite-v1:0", 2000000, 100);
    f.cfg.routes[r].quota[BT_Q_RPM] = (struct bt_quota){10000, BT_QS_SERVICE_QUOTAS, "L-RPM", ""};
    fx_start(&f);
    minute(&f, r, M, 100, 3000, 1000, 600);
    put(&f, r, BT_SIG_CLIENT_ERRORS, M, 10);
    put(&f, r, BT_SIG_SERVER_ERRORS, M, 5);
    put(&f, r, BT_SIG_THROTTLES, M, 50);
    struct bt_eval e;
    bt_eval_route(&f.cfg, &f.st, r, NOW, &e);
    NEAR(e.side[BT_SIDE_RPM].used, 100, 0, "rpm used = Invocations, the accepted calls");
    NEAR(bt_eval_offered(&e), 150, 0, "offered = accepted + throttled");
    NEAR(e.side[BT_SIDE_RPM].headroom, 9900, 0, "rpm headroom 9,900");
    NEAR(e.in_flight, 1, 1e-9, "Little's law on Invocations alone");
    struct bt_report rep = {.cfg = &f.cfg, .store = &f.st, .now = NOW, .evals = &e, .n = 1, .mode = "live"};
    cJSON *j = bt_report_route_json(&rep, 0);
    cJSON *rj = cJSON_GetObjectItem(j, "rpm");
    OK(cJSON_GetNumberValue(cJSON_GetObjectItem(rj, "used")) == 100 &&
           cJSON_GetNumberValue(cJSON_GetObjectItem(rj, "offered")) == 150,
       "JSON: rpm.used 100, rpm.offered 150");
    OK(cJSON_GetNumberValue(cJSON_GetObjectItem(j, "requests_offered_per_min")) == 150,
       "JSON: requests_offered_per_min 150");
    cJSON_Delete(j);
    /* offered load alone never binds: 12,000 offered (2,000 accepted + 10,000
     * throttled) against 10,000 RPM; accepted 2,000 leaves 80 % */
    struct fx g;
    fx_init(&g);
    r = fx_route(&g, "chat", "amazon.nova-lite-v1:0", 2000000, 100);
    g.cfg.routes[r].quota[BT_Q_RPM] = (struct bt_quota){10000, BT_QS_SERVICE_QUOTAS, "L-RPM", ""};
    fx_start(&g);
    minute(&g, r, M, 2000, 1800000, 100000, 600);
    put(&g, r, BT_SIG_THROTTLES, M, 10000);
    bt_eval_route(&g.cfg, &g.st, r, NOW, &e);
    NEAR(e.side[BT_SIDE_RPM].pct, 80, 1e-9, "rpm: 80 % left on accepted use");
    OK(e.binding == BT_SIDE_TPM, "tpm binds, not rpm from offered load");
    fx_free(&g);
    fx_free(&f);
}

static void test_mantle_throttles_unpublished(void)
{
    /* a mantle route publishes no throttle metric and InferenceClientErrors leaves out
     * the 429s refused before processing: idle or busy, its throttles are not
     * published (JSON null, text "n/p"), never 0 */
    struct fx f;
    fx_init(&f);
    int r = fx_route(&f, "agents", "anthropic.claude-opus-4-7", NAN, 2000);
    f.cfg.routes[r].endpoint = BT_EP_MANTLE;
    f.cfg.routes[r].quota[BT_Q_INPUT_TPM] = (struct bt_quota){4000000, BT_QS_CONFIG, "", ""};
    f.cfg.routes[r].quota[BT_Q_OUTPUT_TPM] = (struct bt_quota){4000000, BT_QS_CONFIG, "", ""};
    fx_start(&f);
    put(&f, r, BT_SIG_INVOCATIONS, M - 600, 4); /* busy once, idle at 10:07 */
    struct bt_eval e;
    bt_eval_route(&f.cfg, &f.st, r, NOW, &e);
    OK(e.state == BT_FR_IDLE, "idle at the evaluated minute");
    OK(isnan(e.throttles), "throttles unknown, not 0");
    struct bt_report rep = {.cfg = &f.cfg, .store = &f.st, .now = NOW, .evals = &e, .n = 1, .mode = "live"};
    cJSON *j = bt_report_route_json(&rep, 0);
    OK(cJSON_IsNull(cJSON_GetObjectItem(j, "throttles_per_min")), "JSON: throttles_per_min null");
    cJSON_Delete(j);
    struct bt_buf text = {0};
    bt_report_render_text(&rep, false, &text);
    OK(strstr(bt_buf_str(&text), " n/p ") && strstr(bt_buf_str(&text), "THR n/p: not published"),
       "text: n/p, not published");
    bt_buf_free(&text);
    fx_free(&f);
}

static void test_daily_estimate_lower_bound(void)
{
    /* ModelIds outside the config draw on the cross-model quota (UNSEEN_CALLERS found
     * some): the configured routes' sum is a lower bound, the headroom an upper
     * bound; the DAILY_QUOTA text says it is an estimate. Nova Lite, 100,000,000 a
     * day, 90,000,000 today: 10 % left at most, DAILY_QUOTA warns (90 >= 80). */
    struct fx f;
    fx_init(&f);
    int a = fx_route(&f, "a", "amazon.nova-lite-v1:0", 2000000, 1000);
    f.cfg.routes[a].quota[BT_Q_TPD_ACCOUNT] = (struct bt_quota){1e8, BT_QS_SERVICE_QUOTAS, "L-E3F10727", ""};
    bt_strlcpy(f.cfg.routes[a].unseen, "amazon.nova-pro-v1:0", sizeof f.cfg.routes[a].unseen);
    fx_start(&f);
    minute(&f, a, M, 10, 10000, 1000, 1000);
    put(&f, a, BT_SIG_DAY_INPUT_TOKENS, T0 - 36000, 90e6);
    struct bt_eval ev[1];
    bt_eval_all(&f.cfg, &f.st, NOW, ev);
    const struct bt_side_fig *d = &ev[a].side[BT_SIDE_DAILY_ACCOUNT];
    OK(d->used_q == BT_QL_LOWER && d->headroom_q == BT_QL_UPPER, "lower-bound use, upper-bound headroom");
    OK(ev[a].binding == BT_SIDE_DAILY_ACCOUNT && ev[a].headroom_q != BT_QL_KNOWN, "binds, never known");
    const struct bt_warning *w = warning(&ev[a], BT_W_DAILY_QUOTA);
    OK(w && strstr(w->message, "Cross-Model Max Tokens Per Day") && strstr(w->message, "estimate"),
       "DAILY_QUOTA names the cross-model quota and says estimate");
    fx_free(&f);
}

int main(void)
{
    test_region_count();
    test_daily_sides();
    test_daily_hourly_sums();
    test_quality_rules();
    test_resumption();
    test_burst_gauge();
    test_unknown_member();
    test_mantle_binding_fits();
    test_rpm_binding();
    test_rpm_accepted();
    test_mantle_throttles_unpublished();
    test_daily_estimate_lower_bound();
    test_reserved_tier();
    test_concurrent_side();
    test_domain_example();
    test_littles_law();
    test_admission();
    test_shared_quota();
    test_cache_read();
    test_idle();
    test_zero_quota();
    test_burndown();
    test_mantle();
    test_throttle_causes();
    test_daily();
    test_warnings();
    test_daily_group();
    test_precision();
    test_status_codes();
    {
        /* A 1M-context quota is a different quota from the standard one on the same model:
         * with no quota code known, the two routes must not share a group (or the 1M
         * route would borrow the 200K quota's headroom). Same context: one group. */
        struct bt_route a, b;
        bt_route_defaults(&a);
        bt_route_defaults(&b);
        snprintf(a.model, sizeof a.model, "anthropic.claude-haiku-4-5-20251001-v1:0");
        snprintf(b.model, sizeof b.model, "anthropic.claude-haiku-4-5-20251001-v1:0");
        snprintf(a.region, sizeof a.region, "us-east-1");
        snprintf(b.region, sizeof b.region, "us-east-1");
        char ka[512], kb[512];
        bt_quota_group_key(&a, ka, sizeof ka);
        bt_quota_group_key(&b, kb, sizeof kb);
        OK(!strcmp(ka, kb), "same model, Region, endpoint, inference, context: one quota group");
        snprintf(b.context, sizeof b.context, "1m");
        bt_quota_group_key(&b, kb, sizeof kb);
        OK(strcmp(ka, kb) != 0, "context = 1m: a group of its own");
    }
    return tap_done();
}
