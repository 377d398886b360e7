/* Headroom and warnings on hand-worked cases (numbers computed in comments). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/headroom.h"
#include "core/util.h"
#include "tests/tap.h"

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
    if (!isnan(quota))
        rt->quota[BT_Q_TPM] = (struct bt_quota){quota, BT_QS_SERVICE_QUOTAS, "L-TEST", "test"};
    return r;
}

static void fx_start(struct fx *f)
{
    bt_config_finish(&f->cfg);
    bt_store_init(&f->st, f->cfg.nroutes, 1440);
    for (int r = 0; r < f->cfg.nroutes; r++) {
        struct bt_event ev = {.t = NOW - 30, .type = BT_EV_OK, .route = r, .source = BT_SRC_CLOUDWATCH};
        bt_model_event(&f->st, f->cfg.routes, &ev);
    }
}

static void put(struct fx *f, int r, enum bt_signal s, int64_t t, double v)
{
    struct bt_sample smp = {.t = t, .route = r, .signal = s, .value = v};
    bt_store_add(&f->st, &smp, NOW);
}

static void fx_free(struct fx *f)
{
    bt_store_free(&f->st);
    bt_config_free(&f->cfg);
}

static void test_domain_example(void)
{
    /* DOMAIN.md: 2,000,000 TPM, 500 input tokens. max_tokens 1,000 reserves 1,500 per
     * request: 2,000,000 / 1,500 = 1,333.3 -> 1,333. max_tokens 64,000 reserves 64,500:
     * 2,000,000 / 64,500 = 31.0 -> 31. */
    NEAR(bt_fits_more(2000000, 500, 1000), 1333, 0, "DOMAIN example: max_tokens 1,000 -> 1,333 fit");
    NEAR(bt_fits_more(2000000, 500, 64000), 31, 0, "DOMAIN example: max_tokens 64,000 -> 31 fit");
    NEAR(bt_fits_more(-5, 500, 1000), 0, 0, "negative headroom fits nothing");
    OK(isnan(bt_fits_more(1000, NAN, 1000)), "unknown input size: fits unknown");
}

static void test_runtime_route(void)
{
    /* One minute: 100 calls, 50,000 input (500 each), 30,000 output, burndown 1,
     * max_tokens 1,000, estimate 70,000, quota 2,000,000.
     * settled = 50,000 + 0 + 30,000 x 1 = 80,000
     * reserved = 50,000 + 100 x 1,000 = 150,000 -> used = 150,000
     * headroom = 1,850,000 = 92.5 %; fits = floor(1,850,000 / (500 + 1,000)) = 1,233 */
    struct fx f;
    bt_config_defaults(&f.cfg);
    int r = fx_route(&f, "a", "amazon.nova-lite-v1:0", 2000000, 1000);
    fx_start(&f);
    put(&f, r, BT_SIG_INVOCATIONS, M, 100);
    put(&f, r, BT_SIG_INPUT_TOKENS, M, 50000);
    put(&f, r, BT_SIG_OUTPUT_TOKENS, M, 30000);
    put(&f, r, BT_SIG_ESTIMATED_TPM, M, 70000);
    struct bt_eval e;
    bt_eval_route(&f.cfg, &f.st, r, NOW, &e);
    OK(e.minute == M, "evaluates the last complete minute (10:07 at 10:10 with a 2 min lag)");
    NEAR(e.settled, 80000, 0, "settled");
    NEAR(e.reserved, 150000, 0, "reserved from max_tokens");
    OK(e.reserved_source && !strcmp(e.reserved_source, "max_tokens"), "reserved source is max_tokens");
    NEAR(e.used, 150000, 0, "used = max(settled, estimated, reserved)");
    NEAR(e.headroom_tpm, 1850000, 0, "headroom_tpm");
    NEAR(e.headroom_pct, 92.5, 1e-9, "headroom_pct");
    NEAR(e.fits_more, 1233, 0, "fits_more");
    OK(e.status == BT_ST_OK && !bt_eval_has(&e, BT_W_ESTIMATE_ONLY), "ok, no ESTIMATE_ONLY with max_tokens");
    /* mean output 300: max_tokens 1,000 is under 4 x 300, so not oversized */
    OK(!bt_eval_has(&e, BT_W_OVERSIZED_MAX_TOKENS), "1,000 vs mean 300 is not oversized");

    /* Admission counters replace the max_tokens estimate: 1,900,000 reserved/min.
     * headroom = 100,000 = 5 % -> below warn 20 %, not below crit 5 % (strict) -> warn */
    put(&f, r, BT_SIG_ADM_RESERVED, NOW - 5, 1900000);
    put(&f, r, BT_SIG_ADM_ADMITTED, NOW - 5, 1000);
    bt_eval_route(&f.cfg, &f.st, r, NOW, &e);
    NEAR(e.reserved, 1900000, 0, "reserved from admission counters");
    NEAR(e.headroom_pct, 5, 1e-9, "headroom 5 %");
    OK(bt_eval_has(&e, BT_W_LOW_HEADROOM) && e.status == BT_ST_WARN, "LOW_HEADROOM warn at 5 %% (crit is below 5 %%)");
    put(&f, r, BT_SIG_ADM_RESERVED, NOW - 5, 1950000);
    bt_eval_route(&f.cfg, &f.st, r, NOW, &e);
    OK(e.status == BT_ST_CRIT, "LOW_HEADROOM crit at 2.5 %%");
    fx_free(&f);
}

static void test_cache_read(void)
{
    /* 10 calls: input 10,000, cache read 90,000, cache write 5,000, output 2,000,
     * burndown 5 (Claude Sonnet 4.5 by the table):
     * settled = 10,000 + 5,000 + 2,000 x 5 = 25,000 (cache reads not charged)
     * reserved (max_tokens 500) = 10,000 + 5,000 + 10 x 500 = 20,000
     * with cache_read_reserved: + 90,000 = 110,000 */
    struct fx f;
    bt_config_defaults(&f.cfg);
    int r = fx_route(&f, "c", "us.anthropic.claude-sonnet-4-5-20250929-v1:0", 1000000, 500);
    fx_start(&f);
    NEAR(f.cfg.routes[r].burndown, 5, 0, "burndown 5 for Claude Sonnet 4.5 from the table");
    put(&f, r, BT_SIG_INVOCATIONS, M, 10);
    put(&f, r, BT_SIG_INPUT_TOKENS, M, 10000);
    put(&f, r, BT_SIG_CACHE_READ, M, 90000);
    put(&f, r, BT_SIG_CACHE_WRITE, M, 5000);
    put(&f, r, BT_SIG_OUTPUT_TOKENS, M, 2000);
    struct bt_eval e;
    bt_eval_route(&f.cfg, &f.st, r, NOW, &e);
    NEAR(e.settled, 25000, 0, "settled excludes cache reads");
    NEAR(e.reserved, 20000, 0, "reserved excludes cache reads by default");
    f.cfg.cache_read_reserved = true;
    bt_eval_route(&f.cfg, &f.st, r, NOW, &e);
    NEAR(e.reserved, 110000, 0, "cache_read_reserved counts them in the reservation");
    fx_free(&f);
}

static void test_burndown(void)
{
    /* 100,000 input + 20,000 output: burndown 5 -> 200,000; burndown 1 -> 120,000 */
    NEAR(bt_settled_tpm(100000, 0, 20000, 5), 200000, 0, "settled with burndown 5");
    NEAR(bt_settled_tpm(100000, 0, 20000, 1), 120000, 0, "settled with burndown 1");
    struct bt_config c;
    bt_config_defaults(&c);
    char err[256];
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
}

static void test_mantle(void)
{
    /* Mantle: 400 inferences, input 12,000,000, output 320,000, max_tokens 2,000.
     * input used = 12,000,000 + 400 x 2,000 = 12,800,000 of 20,000,000 -> 7,200,000 = 36 %
     * output used = 320,000 of 4,000,000 -> 3,680,000 = 92 %; route pct = min = 36 %.
     * No burndown on mantle even for a burndown-5 model. */
    struct fx f;
    bt_config_defaults(&f.cfg);
    int r = fx_route(&f, "m", "anthropic.claude-opus-4-7", NAN, 2000);
    f.cfg.routes[r].endpoint = BT_EP_MANTLE;
    f.cfg.routes[r].quota[BT_Q_INPUT_TPM] = (struct bt_quota){20000000, BT_QS_CONFIG, "", ""};
    f.cfg.routes[r].quota[BT_Q_OUTPUT_TPM] = (struct bt_quota){4000000, BT_QS_CONFIG, "", ""};
    fx_start(&f);
    NEAR(f.cfg.routes[r].burndown, 1, 0, "mantle: burndown does not apply");
    put(&f, r, BT_SIG_INVOCATIONS, M, 400);
    put(&f, r, BT_SIG_INPUT_TOKENS, M, 12000000);
    put(&f, r, BT_SIG_OUTPUT_TOKENS, M, 320000);
    struct bt_eval e;
    bt_eval_route(&f.cfg, &f.st, r, NOW, &e);
    NEAR(e.in_used, 12800000, 0, "mantle input used = input + inferences x max_tokens");
    NEAR(e.in_headroom, 7200000, 0, "mantle input headroom");
    NEAR(e.out_headroom, 3680000, 0, "mantle output headroom");
    NEAR(e.in_pct, 36, 1e-9, "input headroom pct");
    NEAR(e.out_pct, 92, 1e-9, "output headroom pct");
    NEAR(e.headroom_pct, 36, 1e-9, "route headroom pct is the smaller");
    NEAR(e.headroom_tpm, 7200000, 0, "route headroom_tpm is the binding side");
    /* output binds when output nears its quota: 3,900,000 of 4,000,000 -> 2.5 % */
    put(&f, r, BT_SIG_OUTPUT_TOKENS, M, 3900000);
    bt_eval_route(&f.cfg, &f.st, r, NOW, &e);
    NEAR(e.headroom_pct, 2.5, 1e-9, "output quota binds");
    NEAR(e.headroom_tpm, 100000, 0, "binding headroom from the output side");
    OK(e.status == BT_ST_CRIT, "crit below 5 %%");
    fx_free(&f);
}

static void test_no_usage(void)
{
    /* CloudWatch answered but the route had no calls: nothing used, full quota left. */
    struct fx f;
    bt_config_defaults(&f.cfg);
    int r = fx_route(&f, "idle", "amazon.nova-lite-v1:0", 500000, 1000);
    fx_start(&f);
    struct bt_eval e;
    bt_eval_route(&f.cfg, &f.st, r, NOW, &e);
    OK(!e.has_usage, "no usage data");
    OK(isnan(e.settled) && isnan(e.estimated) && isnan(e.reserved), "usage figures are null, not zero");
    NEAR(e.headroom_tpm, 500000, 0, "idle route: headroom is the whole quota");
    OK(isnan(e.fits_more), "fits unknown without call sizes");
    OK(!e.stale && e.status == BT_ST_OK, "idle is not stale");
    fx_free(&f);

    /* Never polled: unknown, not full. */
    bt_config_defaults(&f.cfg);
    r = fx_route(&f, "new", "amazon.nova-lite-v1:0", 500000, 1000);
    bt_config_finish(&f.cfg);
    bt_store_init(&f.st, 1, 1440);
    bt_eval_route(&f.cfg, &f.st, r, NOW, &e);
    OK(isnan(e.headroom_tpm) && e.stale && e.status == BT_ST_UNKNOWN, "never polled: headroom unknown, STALE");
    fx_free(&f);
}

static void test_warnings(void)
{
    /* Throttled below the estimate: 5 throttles, estimate 300,000 of 1,000,000. */
    struct fx f;
    bt_config_defaults(&f.cfg);
    int r = fx_route(&f, "t", "amazon.nova-lite-v1:0", 1000000, NAN);
    int h = fx_route(&f, "h", "amazon.nova-lite-v1:0", 1000000, 1000);
    int q = fx_route(&f, "q", "amazon.nova-lite-v1:0", NAN, 1000);
    fx_start(&f);
    put(&f, r, BT_SIG_INVOCATIONS, M, 100);
    put(&f, r, BT_SIG_THROTTLES, M, 5);
    put(&f, r, BT_SIG_ESTIMATED_TPM, M, 300000);
    struct bt_eval e;
    bt_eval_route(&f.cfg, &f.st, r, NOW, &e);
    OK(bt_eval_has(&e, BT_W_THROTTLED_BELOW_ESTIMATE), "THROTTLED_BELOW_ESTIMATE");
    OK(bt_eval_has(&e, BT_W_ESTIMATE_ONLY), "ESTIMATE_ONLY with only the estimate");
    OK(!bt_eval_has(&e, BT_W_RETRY_LOAD), "5 of 105 throttled (4.8 %%) is no RETRY_LOAD");

    /* Hidden parallelism: 40 in flight vs 25; retries 100 of 400 offered = 25 % > 20 %. */
    put(&f, h, BT_SIG_INVOCATIONS, M, 10);
    put(&f, h, BT_SIG_INPUT_TOKENS, M, 10000);
    put(&f, h, BT_SIG_OUTPUT_TOKENS, M, 1000);
    put(&f, h, BT_SIG_ADM_IN_FLIGHT, NOW - 10, 40);
    put(&f, h, BT_SIG_ADM_CONC_LIMIT, NOW - 10, 25);
    put(&f, h, BT_SIG_ADM_ADMITTED, NOW - 10, 300);
    put(&f, h, BT_SIG_ADM_RETRIES, NOW - 10, 100);
    put(&f, h, BT_SIG_ADM_OUT_P99, NOW - 10, 200);
    bt_eval_route(&f.cfg, &f.st, h, NOW, &e);
    OK(bt_eval_has(&e, BT_W_HIDDEN_PARALLELISM), "HIDDEN_PARALLELISM 40 > 25");
    OK(bt_eval_has(&e, BT_W_RETRY_LOAD), "RETRY_LOAD at 25 %% retries");
    /* max_tokens 1,000 > 4 x p99 200: recommended = ceil(200 x 1.25 / 64) x 64 = 256 */
    OK(bt_eval_has(&e, BT_W_OVERSIZED_MAX_TOKENS), "OVERSIZED_MAX_TOKENS 1,000 vs p99 200");
    NEAR(e.recommended_max_tokens, 256, 0, "recommended max_tokens = p99 + 25 %% rounded up to 64");

    bt_eval_route(&f.cfg, &f.st, q, NOW, &e);
    OK(bt_eval_has(&e, BT_W_QUOTA_UNKNOWN) && e.status == BT_ST_UNKNOWN, "QUOTA_UNKNOWN -> unknown");

    /* Stale: CloudWatch failing after the data. */
    struct bt_event ev = {.t = NOW - 5, .type = BT_EV_ERROR, .route = r, .source = BT_SRC_CLOUDWATCH};
    bt_strlcpy(ev.text, "ThrottlingException after 3 attempts", sizeof ev.text);
    bt_model_event(&f.st, f.cfg.routes, &ev);
    bt_eval_route(&f.cfg, &f.st, r, NOW, &e);
    OK(bt_eval_has(&e, BT_W_STALE) && strstr(e.stale_reason, "ThrottlingException"), "STALE names the error");
    /* Silent metric: newest data 10 minutes older than expected. */
    bt_eval_route(&f.cfg, &f.st, h, NOW + 600, &e);
    OK(bt_eval_has(&e, BT_W_STALE), "STALE when the newest minute is far behind the lag");
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

int main(void)
{
    test_domain_example();
    test_runtime_route();
    test_cache_read();
    test_burndown();
    test_mantle();
    test_no_usage();
    test_warnings();
    test_status_codes();
    return tap_done();
}
