/* Admission counters into samples: per-minute rates from two scrapes (first
 * scrape none, deltas, resets, exposition timestamps), route mapping by
 * label, histogram quantiles from bucket increases, the JSON form and the
 * Prometheus-server queries. Expected numbers are worked by hand in comments. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/admission.h"
#include "core/util.h"
#include "io/file.h"
#include "tests/tap.h"

#define T0 1795946400.0 /* 2026-11-29T10:00:00Z, a minute start */

static struct bt_route routes[3];
static struct bt_store store;

static void setup(void)
{
    static const char *const names[] = {"triage", "agents", "batch"};
    static const char *const models[] = {"us.anthropic.claude-sonnet-4-5-20250929-v1:0",
                                         "anthropic.claude-opus-4-7", "amazon.nova-pro-v1:0"};
    for (int i = 0; i < 3; i++) {
        memset(&routes[i], 0, sizeof routes[i]);
        bt_strlcpy(routes[i].name, names[i], sizeof routes[i].name);
        bt_strlcpy(routes[i].model, models[i], sizeof routes[i].model);
    }
    bt_store_free(&store);
    bt_store_init(&store, 3, 60);
}

static double at(int route, enum bt_signal sig, double t)
{
    return bt_store_at(&store, route, sig, (int64_t)t);
}

/* Parses a 0.0.4 text and ingests it at time now. */
static int scrape(struct bt_adm_state *st, const struct bt_adm_scope *sc, const char *text,
                  double now, bool *covered)
{
    struct bt_prom_doc d;
    char err[256];
    bt_prom_init(&d);
    if (!bt_prom_parse(&d, text, strlen(text), BT_PROM_TEXT, err, sizeof err)) {
        fprintf(stderr, "# parse: %s\n", err);
        return -1;
    }
    bool cov[3] = {false, false, false};
    int n = bt_adm_ingest(st, &d, sc, now, &store, covered ? covered : cov);
    bt_prom_free(&d);
    return n;
}

static void test_rate(void)
{
    /* 1000 -> 2500 over 60 s: 1500 per minute */
    NEAR(bt_counter_rate(1000, 0, 2500, 60), 1500, 1e-9, "delta over a minute");
    /* 0 -> 250000 over 10 s: 25000/s = 1,500,000 per minute */
    NEAR(bt_counter_rate(0, 100, 250000, 110), 1500000, 1e-6, "per-second growth to per-minute");
    /* 5000 -> 300 over 30 s: reset, increase 300 -> 600 per minute */
    NEAR(bt_counter_rate(5000, 0, 300, 30), 600, 1e-9, "reset: v2 is the increase");
    OK(isnan(bt_counter_rate(1, 10, 2, 10)), "no time elapsed: no rate");
    OK(isnan(bt_counter_rate(1, 10, 2, 5)), "time went backwards: no rate");
    OK(isnan(bt_counter_rate(NAN, 0, 2, 5)), "NaN reading: no rate");
}

static void test_counters(void)
{
    setup();
    struct bt_adm_state *st = bt_adm_state_new(3);
    struct bt_adm_scope sc = {routes, 3, -1, NULL};
    bool cov[3] = {false, false, false};
    int n = scrape(st, &sc,
                   "bedrock_admission_admitted_total{route=\"triage\"} 1000\n"
                   "bedrock_admission_reserved_tokens_total{route=\"triage\"} 100000\n"
                   "bedrock_admission_in_flight{route=\"triage\"} 38\n"
                   "bedrock_admission_in_flight{model_id=\"anthropic.claude-opus-4-7\"} 7\n"
                   "bedrock_admission_in_flight{route=\"unknown\"} 99\n"
                   "bedrock_admission_in_flight 55\n"
                   "unrelated_metric{route=\"batch\"} 1\n",
                   T0, cov);
    OK(n == 4, "first scrape: two counter readings and the two gauges (got %d)", n);
    OK(cov[0] && cov[1] && !cov[2], "covered: triage (route), agents (model_id), not batch");
    NEAR(at(0, BT_SIG_ADM_IN_FLIGHT, T0), 38, 0, "gauge by route label");
    NEAR(at(1, BT_SIG_ADM_IN_FLIGHT, T0), 7, 0, "gauge by model_id label");
    OK(isnan(at(0, BT_SIG_ADM_ADMITTED, T0)), "first scrape yields no rate");
    OK(isnan(at(0, BT_SIG_ADM_RESERVED, T0)), "first scrape yields no reserved rate");

    /* 30 s later: admitted +600 -> 600/30*60 = 1200 per minute;
     * reserved +750000 -> 750000/30*60 = 1,500,000 per minute */
    n = scrape(st, &sc,
               "bedrock_admission_admitted_total{route=\"triage\"} 1600\n"
               "bedrock_admission_reserved_tokens_total{route=\"triage\"} 850000\n"
               "bedrock_admission_in_flight{route=\"triage\"} 40\n",
               T0 + 30, NULL);
    OK(n == 3, "second scrape: two readings and a gauge (got %d)", n);
    NEAR(at(0, BT_SIG_ADM_ADMITTED, T0 + 30), 1200, 1e-6, "admitted per minute");
    NEAR(at(0, BT_SIG_ADM_RESERVED, T0 + 30), 1500000, 1e-3, "reserved tokens per minute");
    NEAR(at(0, BT_SIG_ADM_IN_FLIGHT, T0 + 30), 40, 0, "gauge as is");

    /* 30 s later the process restarted: admitted 150 -> 150/30*60 = 300 */
    scrape(st, &sc, "bedrock_admission_admitted_total{route=\"triage\"} 150\n", T0 + 60, NULL);
    NEAR(at(0, BT_SIG_ADM_ADMITTED, T0 + 60), 300, 1e-6, "reset counted from zero, no spike");
    OK(isnan(at(0, BT_SIG_ADM_RESERVED, T0 + 60)), "counter missing from a scrape: no rate");
    /* reserved reappears: the gap restarts it, so no rate on reappearance */
    scrape(st, &sc, "bedrock_admission_reserved_tokens_total{route=\"triage\"} 999999\n",
           T0 + 120, NULL);
    OK(isnan(at(0, BT_SIG_ADM_RESERVED, T0 + 120)), "reappearing counter yields no rate");
    bt_adm_state_free(st);
}

/* Issue 19: counters summed across workers before the rate. Worked by hand,
 * two workers of route triage, scrapes 60 s apart:
 *   T0       a: admitted 1,000,000, reserved 3,000,000,000; b: admitted 5,000,
 *            reserved 15,000,000
 *   T0 + 60  a: admitted 1,000,600, reserved 3,001,200,000 (600 calls x 2,000);
 *            b restarted: admitted 10, reserved 20,000
 * Per series: a admitted 600 a minute, reserved 1,200,000; b went down, so it was
 * reset and its increase is its value: 10 and 20,000. The route: 610 admitted and
 * 1,220,000 reserved tokens a minute. Summed first (1,005,000 -> 1,000,610, a
 * decrease read as a reset of everything) it was 1,000,610 admitted and
 * 3,001,220,000 reserved tokens a minute. A third scrape at T0 + 120 where a
 * (+300) and b (+50) both grow: 350 a minute. */
static void test_worker_restart(void)
{
    setup();
    struct bt_adm_state *st = bt_adm_state_new(3);
    struct bt_adm_scope sc = {routes, 3, -1, NULL};
    scrape(st, &sc,
           "bedrock_admission_admitted_total{route=\"triage\",worker=\"a\"} 1000000\n"
           "bedrock_admission_admitted_total{route=\"triage\",worker=\"b\"} 5000\n"
           "bedrock_admission_reserved_tokens_total{route=\"triage\",worker=\"a\"} 3000000000\n"
           "bedrock_admission_reserved_tokens_total{route=\"triage\",worker=\"b\"} 15000000\n",
           T0, NULL);
    /* worker b's labels come in the other order: the same series */
    scrape(st, &sc,
           "bedrock_admission_admitted_total{route=\"triage\",worker=\"a\"} 1000600\n"
           "bedrock_admission_admitted_total{worker=\"b\",route=\"triage\"} 10\n"
           "bedrock_admission_reserved_tokens_total{route=\"triage\",worker=\"a\"} 3001200000\n"
           "bedrock_admission_reserved_tokens_total{worker=\"b\",route=\"triage\"} 20000\n",
           T0 + 60, NULL);
    NEAR(at(0, BT_SIG_ADM_ADMITTED, T0 + 60), 610, 1e-9,
         "one worker restarts: 600 + 10 = 610 admitted a minute, not 1,000,610");
    NEAR(at(0, BT_SIG_ADM_RESERVED, T0 + 60), 1220000, 1e-6,
         "reserved: 1,200,000 + 20,000 a minute, not 3.0e9");
    scrape(st, &sc,
           "bedrock_admission_admitted_total{route=\"triage\",worker=\"a\"} 1000900\n"
           "bedrock_admission_admitted_total{route=\"triage\",worker=\"b\"} 60\n",
           T0 + 120, NULL);
    NEAR(at(0, BT_SIG_ADM_ADMITTED, T0 + 120), 350, 1e-9, "after the restart: 300 + 50");
    /* a new worker c appears: no rate of its own yet, a and b still counted */
    scrape(st, &sc,
           "bedrock_admission_admitted_total{route=\"triage\",worker=\"a\"} 1001000\n"
           "bedrock_admission_admitted_total{route=\"triage\",worker=\"b\"} 70\n"
           "bedrock_admission_admitted_total{route=\"triage\",worker=\"c\"} 777777\n",
           T0 + 180, NULL);
    NEAR(at(0, BT_SIG_ADM_ADMITTED, T0 + 180), 110, 1e-9,
         "a new worker's first reading adds nothing: 100 + 10");
    char id[BT_SERIES_ID];
    struct bt_prom_doc d;
    char err[128];
    bt_prom_init(&d);
    const char *txt = "m{z=\"1\",a=\"x\\\"y\"} 1\n";
    OK(bt_prom_parse(&d, txt, strlen(txt), BT_PROM_TEXT, err, sizeof err), "parse");
    bt_adm_series_id(&d.series[0], id, sizeof id);
    STREQ(id, "a=\"x\\\"y\",z=\"1\"", "series identity: labels sorted, quotes escaped");
    bt_prom_free(&d);
    bt_adm_state_free(st);
}

/* The output-token histogram per worker too. Buckets le 100, 200, +Inf:
 *   T0       a: 10, 20, 20   b: 0, 50, 50 (b's old process: 50 calls in 100-200)
 *   T0 + 60  a: 30, 40, 40   b restarted: 10, 10, 10
 * Per series: a's increase 20, 20, 20; b went down, so its buckets are its
 * increase: 10, 10, 10. Summed: 30, 30, 30, every recent call at most 100 tokens:
 *   p50: rank 15 of 30 in (0, 100]: 100 x 15 / 30 = 50
 *   p99: rank 29.7: 100 x 29.7 / 30 = 99
 * Summed before the increase (40, 50, 50 after 10, 70, 70) the 200 bucket fell,
 * which read as a reset of all: the cumulative 40, 50, 50 gave p99 = 100 + 100 x
 * (49.5 - 40) / 10 = 195. */
static void test_histogram_restart(void)
{
    setup();
    struct bt_adm_state *st = bt_adm_state_new(3);
    struct bt_adm_scope sc = {routes, 3, -1, NULL};
#define B(w, le, v) "bedrock_admission_output_tokens_bucket{route=\"triage\",worker=\"" w "\",le=\"" le "\"} " v "\n"
    scrape(st, &sc, B("a", "100", "10") B("a", "200", "20") B("a", "+Inf", "20")
                    B("b", "100", "0") B("b", "200", "50") B("b", "+Inf", "50"), T0, NULL);
    scrape(st, &sc, B("a", "100", "30") B("a", "200", "40") B("a", "+Inf", "40")
                    B("b", "100", "10") B("b", "200", "10") B("b", "+Inf", "10"), T0 + 60, NULL);
#undef B
    NEAR(at(0, BT_SIG_ADM_OUT_P50, T0 + 60), 50, 1e-9, "worker restart: p50 of the recent calls, 50");
    NEAR(at(0, BT_SIG_ADM_OUT_P99, T0 + 60), 99, 1e-9, "worker restart: p99 99, not the cumulative 195");
    bt_adm_state_free(st);
}

static void test_timestamps_and_sums(void)
{
    setup();
    struct bt_adm_state *st = bt_adm_state_new(3);
    struct bt_adm_scope sc = {routes, 3, -1, NULL};
    /* exposition timestamps win over arrival time: 500 over 10 s = 3000 per
     * minute although the scrapes arrived 40 s apart */
    scrape(st, &sc, "bedrock_admission_completed_total{route=\"agents\"} 0 1795946400000\n", T0,
           NULL);
    scrape(st, &sc, "bedrock_admission_completed_total{route=\"agents\"} 500 1795946410000\n",
           T0 + 40, NULL);
    NEAR(at(1, BT_SIG_ADM_COMPLETED, T0 + 40), 3000, 1e-6, "rate from exposition timestamps");
    /* the same cached exposition again: no new rate, the old one stays */
    scrape(st, &sc, "bedrock_admission_completed_total{route=\"agents\"} 500 1795946410000\n",
           T0 + 50, NULL);
    NEAR(at(1, BT_SIG_ADM_COMPLETED, T0 + 50), 3000, 1e-6, "repeated timestamp ignored");

    /* per-worker series of one route are summed; max_tokens takes the max */
    const char *w1 = "bedrock_admission_in_flight{route=\"triage\",worker=\"a\"} 3\n"
                     "bedrock_admission_in_flight{route=\"triage\",worker=\"b\"} 4\n"
                     "bedrock_admission_max_tokens{route=\"triage\",worker=\"a\"} 1024\n"
                     "bedrock_admission_max_tokens{route=\"triage\",worker=\"b\"} 4096\n"
                     "bedrock_admission_retries_total{route=\"triage\",worker=\"a\"} 10\n"
                     "bedrock_admission_retries_total{route=\"triage\",worker=\"b\"} 20\n";
    scrape(st, &sc, w1, T0 + 60, NULL);
    NEAR(at(0, BT_SIG_ADM_IN_FLIGHT, T0 + 60), 7, 0, "in_flight summed over workers");
    NEAR(at(0, BT_SIG_ADM_MAX_TOKENS, T0 + 60), 4096, 0, "max_tokens: the largest");
    /* retries 30 -> 90 over 20 s = 180 per minute */
    scrape(st, &sc,
           "bedrock_admission_retries_total{route=\"triage\",worker=\"a\"} 40\n"
           "bedrock_admission_retries_total{route=\"triage\",worker=\"b\"} 50\n",
           T0 + 80, NULL);
    NEAR(at(0, BT_SIG_ADM_RETRIES, T0 + 80), 180, 1e-6, "rate of the summed counter");
    bt_adm_state_free(st);
}

/* Issue 37 break 14: exporter timestamps 1 ms apart made one call 60 million calls a
 * minute (1 / 0.001 s x 60 = 60,000 per call; 1,000 calls: 60 million). A rate needs
 * readings BT_COUNTER_MIN_INTERVAL (0.1 s) apart: closer, it is unknown, and the first
 * reading stays the base, so the next scrape rates over the whole interval. */
static void test_short_interval(void)
{
    setup();
    OK(isnan(bt_counter_rate(0, 100, 1000, 100.001)), "r4 break 14: 1 ms apart: no rate (not 60 million a minute)");
    NEAR(bt_counter_rate(0, 100, 1, 100.1), 600, 1e-6, "r4 break 14: 0.1 s apart, the shortest gap check scrapes at: 1 call is 600 a minute");
    struct bt_adm_state *st = bt_adm_state_new(3);
    struct bt_adm_scope sc = {routes, 3, -1, NULL};
    scrape(st, &sc, "bedrock_admission_admitted_total{route=\"batch\"} 0 1795946400000\n", T0, NULL);
    scrape(st, &sc, "bedrock_admission_admitted_total{route=\"batch\"} 1000 1795946400001\n", T0 + 5,
           NULL);
    OK(isnan(at(2, BT_SIG_ADM_ADMITTED, T0 + 5)),
       "r4 break 14: admitted over exporter timestamps 1 ms apart is unknown (got %g a minute)",
       at(2, BT_SIG_ADM_ADMITTED, T0 + 5));
    /* the next scrape: 1,060 since the 10:00:00.000 reading, over 60 s = 1,060 a minute */
    scrape(st, &sc, "bedrock_admission_admitted_total{route=\"batch\"} 1060 1795946460000\n", T0 + 65,
           NULL);
    NEAR(at(2, BT_SIG_ADM_ADMITTED, T0 + 65), 1060, 1e-6,
         "r4 break 14: ... and the next scrape rates from the first reading: 1,060 over 60 s");
    bt_adm_state_free(st);
}

static void test_scope(void)
{
    setup();
    struct bt_prom_series s = {0};
    struct bt_prom_label l[2] = {{"route", "agents"}, {"model_id", "amazon.nova-pro-v1:0"}};
    struct bt_adm_scope g = {routes, 3, -1, NULL};
    s.labels = l;
    s.nlabels = 2;
    OK(bt_adm_route_of(&s, &g) == 1, "route label wins over model_id");
    s.labels = &l[1];
    s.nlabels = 1;
    OK(bt_adm_route_of(&s, &g) == 2, "model_id maps to the route with that model");
    s.nlabels = 0;
    OK(bt_adm_route_of(&s, &g) == -1, "no label, global source: no route");
    struct bt_adm_scope pr = {routes, 3, 1, NULL};
    OK(bt_adm_route_of(&s, &pr) == 1, "no label, per-route source: the scraped route");
    struct bt_prom_label empty = {"route", ""};
    s.labels = &empty;
    s.nlabels = 1;
    OK(bt_adm_route_of(&s, &pr) == 1, "empty route label counts as absent");

    /* a per-route URL writes its own route only; a global one only the
     * routes it serves */
    struct bt_adm_state *st = bt_adm_state_new(3);
    bool cov[3] = {false, false, false};
    scrape(st, &pr,
           "bedrock_admission_queue_depth 5\n"
           "bedrock_admission_queue_depth{route=\"triage\"} 9\n",
           T0, cov);
    NEAR(at(1, BT_SIG_ADM_QUEUE, T0), 5, 0, "unlabelled series -> scraped route");
    OK(isnan(at(0, BT_SIG_ADM_QUEUE, T0)), "other route's series ignored by a per-route URL");
    OK(!cov[0] && cov[1], "only the scraped route covered");
    bool accept[3] = {true, false, true};
    struct bt_adm_scope gs = {routes, 3, -1, accept};
    bool cov2[3] = {false, false, false};
    scrape(st, &gs,
           "bedrock_admission_queue_depth{route=\"triage\"} 9\n"
           "bedrock_admission_queue_depth{route=\"agents\"} 11\n",
           T0 + 1, cov2);
    NEAR(at(0, BT_SIG_ADM_QUEUE, T0), 9, 0, "global source writes a route it serves");
    NEAR(at(1, BT_SIG_ADM_QUEUE, T0), 5, 0, "global source leaves a route with its own URL");
    OK(cov2[0] && !cov2[1], "coverage follows the accepted routes");
    bt_adm_state_free(st);
}

static const char *hist(int c128, int c256, int cinf)
{
    static char buf[512];
    snprintf(buf, sizeof buf,
             "bedrock_admission_output_tokens_bucket{route=\"triage\",le=\"128\"} %d\n"
             "bedrock_admission_output_tokens_bucket{route=\"triage\",le=\"256\"} %d\n"
             "bedrock_admission_output_tokens_bucket{route=\"triage\",le=\"+Inf\"} %d\n"
             "bedrock_admission_output_tokens_sum{route=\"triage\"} 1\n"
             "bedrock_admission_output_tokens_count{route=\"triage\"} %d\n",
             c128, c256, cinf, cinf);
    return buf;
}

static void test_histogram(void)
{
    setup();
    struct bt_adm_state *st = bt_adm_state_new(3);
    struct bt_adm_scope sc = {routes, 3, -1, NULL};
    /* first scrape, cumulative {128:10, 256:40, +Inf:50}:
     * p50 rank 25 in (128,256] holding 30 -> 128 + 128*15/30 = 192;
     * p99 rank 49.5 in +Inf -> 256 */
    scrape(st, &sc, hist(10, 40, 50), T0, NULL);
    NEAR(at(0, BT_SIG_ADM_OUT_P50, T0), 192, 1e-3, "first scrape p50 from cumulative buckets");
    NEAR(at(0, BT_SIG_ADM_OUT_P99, T0), 256, 1e-3, "first scrape p99 from cumulative buckets");
    /* then {30, 70, 80}: increases {20, 30, 30} (30 calls):
     * p50 rank 15 in [0,128] holding 20 -> 128*15/20 = 96;
     * p99 rank 29.7 in (128,256] holding 10 -> 128 + 128*9.7/10 = 252.16
     * (the cumulative buckets would say p50 = 160) */
    scrape(st, &sc, hist(30, 70, 80), T0 + 60, NULL);
    NEAR(at(0, BT_SIG_ADM_OUT_P50, T0 + 60), 96, 1e-3, "p50 from bucket increases");
    NEAR(at(0, BT_SIG_ADM_OUT_P99, T0 + 60), 252.16, 1e-3, "p99 from bucket increases");
    /* no calls since: back to cumulative {30,70,80}: p50 rank 40 in
     * (128,256] holding 40 -> 128 + 128*10/40 = 160 */
    scrape(st, &sc, hist(30, 70, 80), T0 + 120, NULL);
    NEAR(at(0, BT_SIG_ADM_OUT_P50, T0 + 120), 160, 1e-3, "no new calls: cumulative");
    /* reset to {5, 5, 6}: the current buckets are the increase;
     * p50 rank 3 in [0,128] holding 5 -> 128*3/5 = 76.8 */
    scrape(st, &sc, hist(5, 5, 6), T0 + 180, NULL);
    NEAR(at(0, BT_SIG_ADM_OUT_P50, T0 + 180), 76.8, 1e-3, "histogram reset");
    bt_adm_state_free(st);
}

static void test_json_form(void)
{
    setup();
    char path[1024];
    snprintf(path, sizeof path, "%s/examples/admission-counters.json", tap_srcdir());
    size_t len;
    char *txt = bt_read_file(path, 1 << 20, &len);
    OK(txt != NULL, "examples/admission-counters.json readable");
    if (!txt)
        return;
    struct bt_prom_doc d;
    char err[256];
    bt_prom_init(&d);
    OK(bt_prom_parse_json(&d, txt, len, err, sizeof err), "JSON form parses: %s", err);
    free(txt);
    struct bt_adm_state *st = bt_adm_state_new(3);
    struct bt_adm_scope sc = {routes, 3, -1, NULL};
    bool cov[3] = {false, false, false};
    bt_adm_ingest(st, &d, &sc, T0, &store, cov);
    OK(cov[0] && !cov[1], "JSON routes map by name");
    NEAR(at(0, BT_SIG_ADM_IN_FLIGHT, T0), 38, 0, "JSON in_flight");
    NEAR(at(0, BT_SIG_ADM_CONC_LIMIT, T0), 25, 0, "JSON concurrency_limit");
    NEAR(at(0, BT_SIG_ADM_QUEUE, T0), 4, 0, "JSON queue_depth");
    NEAR(at(0, BT_SIG_ADM_MAX_TOKENS, T0), 1024, 0, "JSON max_tokens");
    NEAR(at(0, BT_SIG_ADM_RESERVED_HELD, T0), 98800, 0, "JSON reserved_tokens_held (optional gauge)");
    /* examples' histogram, worked in test_promtext.c: p50 170.571, p99 602.298 */
    NEAR(at(0, BT_SIG_ADM_OUT_P50, T0), 170.571, 0.01, "JSON histogram p50");
    NEAR(at(0, BT_SIG_ADM_OUT_P99, T0), 602.298, 0.01, "JSON histogram p99");
    OK(isnan(at(0, BT_SIG_ADM_RESERVED, T0)), "JSON counters: no rate on the first scrape");
    bt_prom_free(&d);

    /* 20 s later reserved grew by 500,000: 500000/20*60 = 1,500,000 per minute */
    const char *j2 = "{\"routes\":{\"triage\":{\"bedrock_admission_reserved_tokens_total\":"
                     "299360000}}}";
    bt_prom_init(&d);
    OK(bt_prom_parse_json(&d, j2, strlen(j2), err, sizeof err), "second JSON parses");
    bt_adm_ingest(st, &d, &sc, T0 + 20, &store, cov);
    NEAR(at(0, BT_SIG_ADM_RESERVED, T0 + 20), 1500000, 1e-3, "JSON counter rate");
    bt_prom_free(&d);
    bt_adm_state_free(st);
}

static void test_prometheus_server(void)
{
    char base[256], q[512];
    OK(bt_adm_is_prometheus("prometheus+http://127.0.0.1:9090/", base, sizeof base), "scheme");
    STREQ(base, "http://127.0.0.1:9090", "base from prometheus+http://");
    OK(bt_adm_is_prometheus("prometheus+https://prom.example/prefix", base, sizeof base),
       "https scheme");
    STREQ(base, "https://prom.example/prefix", "base keeps a path prefix");
    OK(bt_adm_is_prometheus("http://127.0.0.1:9090/api/v1/query", base, sizeof base),
       "/api/v1/query path");
    STREQ(base, "http://127.0.0.1:9090", "base before /api/v1/query");
    OK(!bt_adm_is_prometheus("http://127.0.0.1:9464/metrics", base, sizeof base),
       "a scrape URL is not a server");

    OK(bt_adm_query(BT_SIG_ADM_RESERVED, q, sizeof q), "reserved query");
    STREQ(q, "sum by (route, model_id) (rate(bedrock_admission_reserved_tokens_total[2m])) * 60",
          "counter query is a per-minute rate");
    OK(bt_adm_query(BT_SIG_ADM_IN_FLIGHT, q, sizeof q), "in_flight query");
    STREQ(q, "sum by (route, model_id) (bedrock_admission_in_flight)", "gauge query sums");
    OK(bt_adm_query(BT_SIG_ADM_MAX_TOKENS, q, sizeof q), "max_tokens query");
    STREQ(q, "max by (route, model_id) (bedrock_admission_max_tokens)", "max_tokens query");
    OK(bt_adm_query(BT_SIG_ADM_OUT_P99, q, sizeof q), "p99 query");
    STREQ(q, "histogram_quantile(0.99, sum by (route, model_id, le) "
             "(rate(bedrock_admission_output_tokens_bucket[5m])))", "quantile query");
    OK(!bt_adm_query(BT_SIG_INVOCATIONS, q, sizeof q), "no query for CloudWatch signals");
    int nq = 0;
    for (int i = 0; i < BT_SIG_COUNT; i++)
        nq += bt_adm_query((enum bt_signal)i, q, sizeof q);
    OK(nq == 14, "one query per admission signal (14 with reserved_tokens_held, got %d)", nq);

    setup();
    const char *ans = "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
                      "{\"metric\":{\"route\":\"triage\"},\"value\":[1795946400,\"1500000\"]},"
                      "{\"metric\":{\"model_id\":\"anthropic.claude-opus-4-7\"},"
                      "\"value\":[1795946400,\"42000\"]},"
                      "{\"metric\":{},\"value\":[1795946400,\"7\"]}]}}";
    struct bt_prom_doc d;
    char err[256];
    bt_prom_init(&d);
    OK(bt_prom_parse_api(&d, "x", ans, strlen(ans), err, sizeof err), "API answer parses");
    struct bt_adm_scope sc = {routes, 3, -1, NULL};
    bool cov[3] = {false, false, false};
    int n = bt_adm_ingest_api(&d, BT_SIG_ADM_RESERVED, &sc, T0, &store, cov);
    OK(n == 2 && cov[0] && cov[1] && !cov[2], "two routes from the server (%d)", n);
    NEAR(at(0, BT_SIG_ADM_RESERVED, T0), 1500000, 0, "server rate stored as is (first round)");
    NEAR(at(1, BT_SIG_ADM_RESERVED, T0), 42000, 0, "model_id result");
    bt_prom_free(&d);
}

int main(void)
{
    test_rate();
    test_counters();
    test_worker_restart();
    test_histogram_restart();
    test_timestamps_and_sums();
    test_short_interval();
    test_scope();
    test_histogram();
    test_json_form();
    test_prometheus_server();
    bt_store_free(&store);
    return tap_done();
}
