/* bedtop plan's figures (core/plan.c, core/speed.c) on cases worked by hand: the
 * arithmetic is in the comments, the contract's formulas in docs/headroom.md. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/headroom.h"
#include "core/plan.h"
#include "core/recording.h"
#include "core/speed.h"
#include "core/util.h"
#include "io/recfile.h"
#include "io/conffile.h"
#include "tests/tap.h"

static const int64_t NOW = 1795946400 + 7200; /* 12:00:00; last complete minute 11:57 */
static const int64_t M = 1795946400 + 7020;   /* 11:57 */

struct fx {
    struct bt_config cfg;
    struct bt_store st;
};

static int fx_route(struct fx *f, const char *name, const char *code, double quota, double max_tokens)
{
    int r = bt_config_add_route(&f->cfg, name);
    struct bt_route *rt = &f->cfg.routes[r];
    bt_strlcpy(rt->model, "amazon.nova-lite-v1:0", sizeof rt->model); /* burndown 1 */
    bt_strlcpy(rt->region, "us-east-1", sizeof rt->region);
    rt->max_tokens = max_tokens;
    rt->quota[BT_Q_TPM] = (struct bt_quota){quota, BT_QS_SERVICE_QUOTAS, "", "test"};
    bt_strlcpy(rt->quota[BT_Q_TPM].code, code, sizeof rt->quota[BT_Q_TPM].code);
    return r;
}

/* Every route's CloudWatch polled successfully at NOW: with the default 120 s lag every
 * minute up to M is settled, and so is every earlier minute in the replayed hour. */
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

static void minute(struct fx *f, int r, int64_t m, double calls, double in, double out, double lat_ms)
{
    put(f, r, BT_SIG_INVOCATIONS, m, calls);
    put(f, r, BT_SIG_INPUT_TOKENS, m, in);
    put(f, r, BT_SIG_OUTPUT_TOKENS, m, out);
    if (!isnan(lat_ms))
        put(f, r, BT_SIG_LATENCY_AVG, m, lat_ms);
}

static void fx_init(struct fx *f)
{
    bt_config_init(&f->cfg);
}

static void fx_free(struct fx *f)
{
    bt_store_free(&f->st);
    bt_config_free(&f->cfg);
}

static bool has(const struct bt_eval *e, enum bt_wcode c)
{
    return bt_eval_has(e, c);
}

static void test_whatif_domain_example(void)
{
    /* DOMAIN.md: 2,000,000 TPM and 500 input tokens: max_tokens 64,000 reserves 64,500
     * a call and about 31 fit at once; max_tokens 1,000 reserves 1,500 and about 1,333.
     * Here with a little traffic: 10 calls a minute, 5,000 input (500 each), 3,000
     * output (300 each), latency 1,500 ms, so 10/60 x 1.5 = 0.25 in flight.
     *   now:   R 64,500; held 0.25 x 64,500 = 16,125; settled 8,000; used 24,125;
     *          headroom 1,975,875; fits floor(1,975,875 / 64,500) = 30
     *   after: R 1,500; held 375; used 8,375; headroom 1,991,625;
     *          fits floor(1,991,625 / 1,500) = 1,327 (the 8,375 in use takes 6 of 1,333)
     * Answers of 300 tokens are not cut at 1,000. */
    struct fx f;
    fx_init(&f);
    int a = fx_route(&f, "a", "L-A", 2000000, 64000);
    fx_start(&f);
    minute(&f, a, M, 10, 5000, 3000, 1500);
    struct bt_plan_change c;
    bt_plan_change_none(&c);
    c.max_tokens = 1000;
    struct bt_whatif *w = bt_xcalloc(1, sizeof *w);
    char why[160];
    OK(bt_plan_whatif(&f.cfg, &f.st, a, NOW, &c, w, why, sizeof why), "what-if runs");
    NEAR(w->before.reservation, 64500, 1e-9, "now: R = 500 + 64,000");
    NEAR(w->before.fits_more, 30, 0, "now: 30 more fit at once");
    NEAR(w->after.reservation, 1500, 1e-9, "after: R = 500 + 1,000");
    NEAR(w->after.held, 375, 1e-9, "after: held 0.25 x 1,500");
    NEAR(w->after.used, 8375, 1e-9, "after: used 8,000 + 375");
    NEAR(w->after.fits_more, 1327, 0, "after: 1,327 more fit at once (about 1,333)");
    STREQ(bt_side_binding_name(w->after.binding), "tpm", "after: tpm binds");
    OK(w->peak_minute == M, "peak minute: the only busy minute of the hour");
    OK(w->minutes_seen == BT_PLAN_WINDOW, "the whole hour replayed (idle minutes are 0 use)");
    STREQ(w->peak_verdict, "no", "would not throttle at the peak");
    bool said = false;
    for (int i = 0; i < w->notes.n; i++)
        said = said || strstr(w->notes.text[i], "max_tokens 64k -> 1.0k");
    OK(said, "the answer states the change it assumed");
    /* the observed frame is untouched by the what-if */
    struct bt_eval e;
    bt_eval_route(&f.cfg, &f.st, a, NOW, &e);
    NEAR(e.fits_more, 30, 0, "the store and config are not changed by a what-if");
    free(w);
    fx_free(&f);
}

static void test_whatif_group(void)
{
    /* Two routes on one quota (code L-SHARED, 1,000,000 TPM), no latency and no
     * max_tokens: used = settled, known.
     *   a: 200,000 input + 100,000 output = 300,000;  b: 150,000 + 50,000 = 200,000
     *   group 500,000: 50 % left for both.
     * a at traffic x0.5: 150,000; group 350,000: 65 % left for a and for b.
     * a moved to us-west-2: it leaves the group; b alone 200,000: 80 % left, and a's
     * quota there is unknown (no route of the config is in us-west-2). */
    struct fx f;
    fx_init(&f);
    int a = fx_route(&f, "a", "L-SHARED", 1000000, NAN);
    int b = fx_route(&f, "b", "L-SHARED", 1000000, NAN);
    fx_start(&f);
    minute(&f, a, M, 100, 200000, 100000, NAN);
    minute(&f, b, M, 50, 150000, 50000, NAN);
    struct bt_plan_change c;
    bt_plan_change_none(&c);
    c.traffic = 0.5;
    struct bt_whatif *w = bt_xcalloc(1, sizeof *w);
    char why[160];
    OK(bt_plan_whatif(&f.cfg, &f.st, a, NOW, &c, w, why, sizeof why), "what-if traffic runs");
    NEAR(w->before.headroom_pct, 50, 1e-9, "now: 50 % left");
    NEAR(w->after.headroom_pct, 65, 1e-9, "traffic x0.5: 65 % left");
    OK(w->nmembers == 1 && w->members[0].route == b, "the group's other route is listed");
    NEAR(w->members[0].pct_after, 65, 1e-9, "b gains what a gives up");
    OK(!w->members[0].left_group, "b still shares a's quota");

    bt_plan_change_none(&c);
    bt_strlcpy(c.region, "us-west-2", sizeof c.region);
    OK(bt_plan_whatif(&f.cfg, &f.st, a, NOW, &c, w, why, sizeof why), "what-if region runs");
    NEAR(w->members[0].pct_after, 80, 1e-9, "moving a frees its old group: b has 80 % left");
    OK(w->members[0].left_group, "b no longer shares with a");
    OK(w->after.headroom_q == BT_QL_UNKNOWN, "a's quota in us-west-2 is unknown, not assumed");

    /* Limits for b: the quota less a's 300,000, less the 20 % reserve (200,000):
     * 1,000,000 - 300,000 - 200,000 = 500,000 TPM. */
    struct bt_limits *l = bt_xcalloc(1, sizeof *l);
    bt_plan_limits(&f.cfg, &f.st, b, NOW, l);
    NEAR(l->others_used, 300000, 1e-9, "token budget: the other member's use");
    NEAR(l->reserve_tpm, 200000, 1e-9, "token budget: a 20 % reserve");
    NEAR(l->budget_tpm, 500000, 0, "token budget 500,000 TPM for a group of two");
    OK(l->budget_q == BT_QL_KNOWN, "known when every member's use is known");
    OK(!strcmp(l->concurrency_basis, "no-data") && isnan(l->concurrency),
       "no in-flight gauge: no concurrency cap invented");
    free(l);
    free(w);
    fx_free(&f);
}

static void test_whatif_concurrency_and_traffic(void)
{
    /* Quota 1,000,000; 600 calls a minute, 1,000 input and 200 output tokens each,
     * latency 2,000 ms, max_tokens 1,000, burndown 1:
     *   now: in flight 600 / 60 x 2 = 20; R 2,000; held 40,000; settled 720,000;
     *        used 760,000; headroom 24 %
     *   at most 10 in flight: accepted calls x 10/20 = 300 a minute (the rest wait):
     *        in flight 10; held 20,000; settled 360,000; used 380,000; 62 % left;
     *        fits floor(620,000 / 2,000) = 310
     *   traffic x2: in flight 40; held 80,000; settled 1,440,000; used 1,520,000:
     *        -52 %: past the quota, so it would throttle at the peak */
    struct fx f;
    fx_init(&f);
    int a = fx_route(&f, "a", "L-A", 1000000, 1000);
    fx_start(&f);
    minute(&f, a, M, 600, 600000, 120000, 2000);
    struct bt_plan_change c;
    bt_plan_change_none(&c);
    c.concurrency = 10;
    struct bt_whatif *w = bt_xcalloc(1, sizeof *w);
    char why[160];
    OK(bt_plan_whatif(&f.cfg, &f.st, a, NOW, &c, w, why, sizeof why), "what-if concurrency runs");
    NEAR(w->before.headroom_pct, 24, 1e-9, "now: 24 % left");
    NEAR(w->after.in_flight, 10, 1e-9, "at most 10 in flight");
    NEAR(w->after.used, 380000, 1e-6, "used 380,000 with half the calls accepted");
    NEAR(w->after.headroom_pct, 62, 1e-9, "62 % left");
    NEAR(w->after.fits_more, 310, 0, "310 more fit at once");
    bt_plan_change_none(&c);
    c.traffic = 2;
    OK(bt_plan_whatif(&f.cfg, &f.st, a, NOW, &c, w, why, sizeof why), "what-if traffic runs");
    NEAR(w->after.used, 1520000, 1e-6, "traffic x2: used 1,520,000");
    NEAR(w->after.headroom_pct, -52, 1e-9, "-52 %: past the quota");
    STREQ(w->peak_verdict, "yes", "it would throttle at the peak");
    OK(w->over_before == 0 && w->over_after == 1, "one minute of the hour past the quota after");
    free(w);
    fx_free(&f);
}

static void test_knee_from_load_test(void)
{
    /* tests/data/loadtest.rec (written by tests/data/loadtest.py): the concurrency
     * limit stepped 4, 8, ..., 64, each call 2 s, so a level of N completes 30 x N a
     * minute up to 32 in flight and 960 beyond; throttles from 48. The best level's
     * mean is 960; 95 % of it is 912; 28 in flight gives 840 and 32 gives 960: the
     * knee is 32, below the first throttled level (48), so the cap is 32. */
    char path[1024], err[512];
    snprintf(path, sizeof path, "%s/tests/data/loadtest.rec", tap_srcdir());
    struct bt_replay rp;
    if (!bt_replay_open(&rp, path, NULL, NULL, err, sizeof err)) {
        OK(false, "load test recording opens: %s", err);
        return;
    }
    bt_replay_seek(&rp, rp.end);
    struct bt_limits *l = bt_xcalloc(1, sizeof *l);
    bt_plan_limits(&rp.cfg, &rp.store, 0, rp.end, l);
    OK(l->op.enough && l->op.plateau, "the load test shows a plateau");
    NEAR(l->op.knee, 32, 0, "knee at 32 in flight");
    NEAR(l->concurrency, 32, 0, "concurrency cap 32");
    STREQ(l->concurrency_basis, "knee", "the cap comes from the knee");
    NEAR(l->throttle_level, 48, 0, "first throttled at 48 in flight");
    OK(l->op.points == 48, "48 minutes of evidence");
    /* max_tokens: p99 300 x 1.25 = 375 -> 384 (a multiple of 64) */
    NEAR(l->max_tokens, 384, 0, "max_tokens from p99 + margin");
    STREQ(l->max_tokens_basis, "admission-p99", "max_tokens basis named");
    free(l);
    bt_replay_free(&rp);
}

static void test_forecast(void)
{
    /* Quota 2,000,000; used = settled (no latency, no max_tokens). A ramp: input
     * 100,000 + 50,000 j at minute M - (14 - j) 60, so 800,000 at M and +50,000 a
     * minute: (2,000,000 - 800,000) / 50,000 = 24 minutes to the quota. A flat route
     * at 800,000 and a falling one get none. */
    struct fx f;
    fx_init(&f);
    int ramp = fx_route(&f, "ramp", "L-R", 2000000, NAN);
    int flat = fx_route(&f, "flat", "L-F", 2000000, NAN);
    int fall = fx_route(&f, "fall", "L-D", 2000000, NAN);
    fx_start(&f);
    for (int j = 0; j < 15; j++) {
        int64_t m = M - (14 - j) * 60;
        minute(&f, ramp, m, 100, 100000 + 50000.0 * j, 0, NAN);
        minute(&f, flat, m, 100, 800000, 0, NAN);
        minute(&f, fall, m, 100, 800000 - 40000.0 * j, 0, NAN);
    }
    struct bt_forecast fc;
    bt_plan_forecast(&f.cfg, &f.st, ramp, NOW, &fc);
    OK(fc.points == 15, "15 evaluated minutes fitted");
    NEAR(fc.slope, 50000, 1e-6, "slope +50,000 TPM a minute");
    NEAR(fc.fitted_now, 800000, 1e-6, "fitted 800,000 now");
    NEAR(fc.minutes, 24, 1e-9, "reaches the quota in 24 minutes at this trend");
    OK(fc.minutes_q == BT_QL_KNOWN, "a known use: the minutes are not a bound");
    bt_plan_forecast(&f.cfg, &f.st, flat, NOW, &fc);
    OK(isnan(fc.minutes) && fc.none && !strcmp(fc.none, "flat"), "flat: no forecast");
    bt_plan_forecast(&f.cfg, &f.st, fall, NOW, &fc);
    OK(isnan(fc.minutes) && fc.none && !strcmp(fc.none, "falling"), "falling: no forecast");
    double x[3] = {0, 1, 2}, y[3] = {1, 3, 5}, s, at;
    OK(bt_least_squares(x, y, 3, 2, &s, &at) && s == 2 && at == 5, "least squares on a line");
    fx_free(&f);
}

static void test_slowdown(void)
{
    /* 100 calls a minute, 300 output tokens each, TimeToFirstToken 300 ms.
     * The hour before: latency 1,300 ms: OTPS = 300 / ((1,300 - 300) / 1000) = 300.
     * The last 5 minutes: latency 2,300 ms: OTPS = 300 / 2.0 = 150, half: SLOWDOWN.
     * "grew": the same slowdown with calls doubled (200/min): traffic grew, none.
     * "queue": TTFT 300 -> 1,300 ms with latency 1,300 -> 2,300 ms: generation still
     * 1.0 s (OTPS 300), output per call flat: queueing, no SLOWDOWN. */
    struct fx f;
    fx_init(&f);
    int s = fx_route(&f, "slow", "L-S", 1e9, NAN);
    int g = fx_route(&f, "grew", "L-G", 1e9, NAN);
    int q = fx_route(&f, "queue", "L-Q", 1e9, NAN);
    fx_start(&f);
    for (int i = 0; i < 65; i++) {
        int64_t m = M - i * 60;
        bool recent = i < BT_SPEED_RECENT;
        minute(&f, s, m, 100, 10000, 30000, recent ? 2300 : 1300);
        put(&f, s, BT_SIG_TTFT_AVG, m, 300);
        minute(&f, g, m, recent ? 200 : 100, 10000, recent ? 60000 : 30000, recent ? 2300 : 1300);
        put(&f, g, BT_SIG_TTFT_AVG, m, 300);
        minute(&f, q, m, 100, 10000, 30000, recent ? 2300 : 1300);
        put(&f, q, BT_SIG_TTFT_AVG, m, recent ? 1300 : 300);
    }
    NEAR(bt_otps(30000, 100, 1300, 300), 300, 1e-9, "OTPS = 300 / 1.0 s");
    OK(isnan(bt_otps(30000, 100, 300, 300)), "no generation time: OTPS unknown, not infinite");
    OK(isnan(bt_otps(30000, 0, 1300, 300)), "no calls: OTPS unknown");
    struct bt_eval e;
    bt_eval_route(&f.cfg, &f.st, s, NOW, &e);
    NEAR(e.speed.otps, 150, 1e-9, "OTPS now 150");
    NEAR(e.speed.otps_hour, 300, 1e-9, "OTPS over the trailing hour 300");
    OK(e.speed.slowdown && has(&e, BT_W_SLOWDOWN), "OTPS halved at flat traffic: SLOWDOWN");
    bt_eval_route(&f.cfg, &f.st, g, NOW, &e);
    OK(!has(&e, BT_W_SLOWDOWN), "traffic doubled: no SLOWDOWN");
    bt_eval_route(&f.cfg, &f.st, q, NOW, &e);
    OK(!has(&e, BT_W_SLOWDOWN) && e.speed.queueing, "TTFT rising with flat output: queueing");
    fx_free(&f);
}

static void test_ceiling(void)
{
    /* Quota 2,000,000. 400,000 settled a minute, throttled (5) at M - 60: the ceiling
     * is at least 400,000 TPM, 20 % of the quota, far below it: held reservations.
     * The same with 3 server errors in that minute: service capacity. And 3 server
     * errors beside 240 throttles (the demo's triage, issue 34 item 5): under the rules'
     * tenth (THROTTLED_BELOW_ESTIMATE's test, bt_capacity_evidence), not capacity. */
    struct fx f;
    fx_init(&f);
    int a = fx_route(&f, "res", "L-C1", 2000000, NAN);
    int b = fx_route(&f, "cap", "L-C2", 2000000, NAN);
    int d = fx_route(&f, "few", "L-C3", 2000000, NAN);
    fx_start(&f);
    for (int i = 0; i < 3; i++) {
        minute(&f, a, M - i * 60, 100, 300000, 100000, NAN);
        minute(&f, b, M - i * 60, 100, 300000, 100000, NAN);
        minute(&f, d, M - i * 60, 100, 300000, 100000, NAN);
    }
    put(&f, a, BT_SIG_THROTTLES, M - 60, 5);
    put(&f, b, BT_SIG_THROTTLES, M - 60, 5);
    put(&f, b, BT_SIG_SERVER_ERRORS, M - 60, 3);
    put(&f, d, BT_SIG_THROTTLES, M - 60, 240);
    put(&f, d, BT_SIG_SERVER_ERRORS, M - 60, 3);
    struct bt_eval e;
    struct bt_ceiling c;
    bt_eval_route(&f.cfg, &f.st, a, NOW, &e);
    bt_ceiling_of(&f.cfg, &f.st, &e, &c);
    OK(c.throttled_minutes == 1, "one throttled minute");
    NEAR(c.tokens, 400000, 1e-9, "ceiling: at least 400,000 TPM");
    NEAR(c.pct_of_quota, 20, 1e-9, "20 % of the quota");
    OK(c.far_below && c.points_to && !strcmp(c.points_to, "reservations"), "points to reservations");
    bt_eval_route(&f.cfg, &f.st, b, NOW, &e);
    bt_ceiling_of(&f.cfg, &f.st, &e, &c);
    OK(c.points_to && !strcmp(c.points_to, "capacity"), "server errors with throttles: capacity");
    bt_eval_route(&f.cfg, &f.st, d, NOW, &e);
    bt_ceiling_of(&f.cfg, &f.st, &e, &c);
    OK(c.points_to && strcmp(c.points_to, "capacity") != 0 && !strstr(c.why, "service capacity"),
       "3 server errors beside 240 throttles: not service capacity (the rules' tenth)");
    fx_free(&f);
}

static void test_change_parse(void)
{
    struct bt_plan_change c;
    char why[160];
    OK(bt_plan_change_parse("max_tokens 768 traffic x2 --concurrency=20 retries off tier flex region us-west-2",
                            &c, why, sizeof why),
       "every change as words");
    OK(c.max_tokens == 768 && c.traffic == 2 && c.concurrency == 20 && c.retries_off &&
           c.tier == BT_TIER_FLEX && !strcmp(c.region, "us-west-2"),
       "... read as the command line's options");
    OK(bt_plan_change_parse("", &c, why, sizeof why) && !bt_plan_change_any(&c), "nothing: no change");
    OK(!bt_plan_change_parse("max_tokens lots", &c, why, sizeof why) && strstr(why, "max_tokens"),
       "a value that is not a number is refused, naming the key");
    OK(!bt_plan_change_parse("speed 2", &c, why, sizeof why) && strstr(why, "not a change"),
       "a word that is not a change is refused");
    OK(!bt_plan_change_parse("region mars", &c, why, sizeof why), "a Region is checked");
    OK(!bt_plan_change_parse("tier", &c, why, sizeof why) && strstr(why, "needs a value"),
       "a key without its value is refused");
}

int main(void)
{
    test_change_parse();
    test_whatif_domain_example();
    test_whatif_group();
    test_whatif_concurrency_and_traffic();
    test_knee_from_load_test();
    test_forecast();
    test_slowdown();
    test_ceiling();
    return tap_done();
}
