/* Issue 16 item 3, "absurd metric values are believed", in core: the bounds of
 * core/plausible.h, and what happens to a value outside them on every way in: a
 * collector's sample (the store refuses it; the source's next OK for the route is
 * recorded as an error naming the value), an admission gauge of +Inf or 4e10, a quota
 * event, and a recording replayed (the same path, so the same stale route). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "collectors/admission.h"
#include "collectors/promtext.h"
#include "core/config.h"
#include "core/dataminute.h"
#include "core/plausible.h"
#include "core/recording.h"
#include "core/util.h"
#include "io/conffile.h"
#include "tests/tap.h"

#define T0 1795946400LL /* 2026-11-29T10:00:00Z */

static const struct {
    enum bt_signal sig;
    double v;
    bool ok;
} table[] = {
    {BT_SIG_INPUT_TOKENS, 0, true},
    {BT_SIG_INPUT_TOKENS, 620000, true},
    {BT_SIG_INPUT_TOKENS, 1e12, true},
    {BT_SIG_INPUT_TOKENS, 1.0000001e12, false},
    {BT_SIG_INPUT_TOKENS, -5000, false},            /* "used -5000, headroom 100.3%" */
    {BT_SIG_INPUT_TOKENS, -0.5, false},
    {BT_SIG_OUTPUT_TOKENS, 1e308, false},           /* "infG" */
    {BT_SIG_ESTIMATED_TPM, 1e15, false},            /* broke the table */
    {BT_SIG_ESTIMATED_TPM, INFINITY, false},
    {BT_SIG_ESTIMATED_TPM, -INFINITY, false},
    {BT_SIG_THROTTLES, 1e308, false},               /* "-nan% of calls are throttled" */
    {BT_SIG_INVOCATIONS, 1e9, true},
    {BT_SIG_INVOCATIONS, 2e9, false},
    {BT_SIG_LATENCY_P99, 86400000, true},           /* a day */
    {BT_SIG_LATENCY_P99, 86400001, false},
    {BT_SIG_TTFT_AVG, -1, false},
    {BT_SIG_ADM_IN_FLIGHT, 40, true},
    {BT_SIG_ADM_IN_FLIGHT, 4e10, false},            /* killed the detail view (item 4) */
    {BT_SIG_ADM_MAX_TOKENS, 4096, true},
    {BT_SIG_ADM_MAX_TOKENS, 2e9, false},
    {BT_SIG_ADM_RESERVED, 1.5e6, true},
    {BT_SIG_DAY_INPUT_TOKENS, 1e12 * 1440, true},
    {BT_SIG_DAY_INPUT_TOKENS, 1e12 * 1441, false},
};

static void bounds(void)
{
    for (size_t i = 0; i < BT_ARRAY_LEN(table); i++) {
        char why[160] = "";
        bool ok = bt_sample_plausible(table[i].sig, table[i].v, why, sizeof why);
        OK(ok == table[i].ok && (ok || why[0]), "%s = %g %s%s%s", bt_signal_info[table[i].sig].name,
           table[i].v, table[i].ok ? "taken" : "refused", why[0] ? ": " : "", why);
    }
    char why[160];
    OK(bt_quota_plausible(BT_Q_TPM, 0, why, sizeof why), "a quota of 0 is a finding, not refused");
    OK(!bt_quota_plausible(BT_Q_TPM, -5, why, sizeof why), "a negative quota is refused");
    OK(!bt_quota_plausible(BT_Q_TPD, NAN, why, sizeof why), "a quota of NaN is refused");
}

static void two_routes(struct bt_config *c)
{
    bt_config_init(c);
    for (int i = 0; i < 2; i++) {
        int k = bt_config_add_route(c, i ? "b" : "a");
        bt_strlcpy(c->routes[k].model, i ? "m2" : "m1", sizeof c->routes[k].model);
    }
    bt_config_finish(c);
}

static struct bt_event ev_of(enum bt_event_type type, int route, enum bt_source src)
{
    return (struct bt_event){.t = T0 + 60, .type = type, .route = route, .source = src};
}

static bool stale_with(const struct bt_store *s, int r, enum bt_source src, const char *needle)
{
    const struct bt_source_status *st = bt_store_status_c(s, r, src);
    return st->last_error && st->last_error >= st->last_ok && strstr(st->error, needle);
}

static void store_path(void)
{
    struct bt_config c;
    two_routes(&c);
    struct bt_store s;
    bt_store_init(&s, 2, 60);
    struct bt_sample bad = {.t = T0, .route = 0, .signal = BT_SIG_INPUT_TOKENS, .value = -5000};
    struct bt_sample good = {.t = T0, .route = 0, .signal = BT_SIG_OUTPUT_TOKENS, .value = 300};
    OK(!bt_store_add(&s, &bad, T0 + 60), "the store refuses input_tokens -5000");
    OK(bt_store_add(&s, &good, T0 + 60), "... and takes the route's other samples");
    OK(isnan(bt_store_at(&s, 0, BT_SIG_INPUT_TOKENS, T0)), "no -5000 in the store");
    struct bt_event ok = ev_of(BT_EV_OK, 0, BT_SRC_CLOUDWATCH);
    bt_model_event(&s, c.routes, &ok);
    OK(stale_with(&s, 0, BT_SRC_CLOUDWATCH, "implausible value: input_tokens = -5000 at 10:00 UTC"),
       "the poll's OK became an error naming the value (%s)", bt_store_status(&s, 0, BT_SRC_CLOUDWATCH)->error);
    const struct bt_event *rec = bt_store_event_at(&s, s.nevents - 1);
    OK(rec && rec->type == BT_EV_ERROR && !strcmp(rec->code, "Implausible"),
       "the event recorded (and so replayed) is the error");
    bt_model_event(&s, c.routes, &ok);
    OK(!bt_store_status(&s, 0, BT_SRC_CLOUDWATCH)->last_error, "the next good poll clears it");

    /* an OK for every route (-1): only the route with the bad value goes stale */
    bad.route = 1;
    bad.value = INFINITY;
    OK(!bt_store_add(&s, &bad, T0 + 120), "the store refuses +Inf");
    struct bt_event all = ev_of(BT_EV_OK, -1, BT_SRC_CLOUDWATCH);
    bt_model_event(&s, c.routes, &all);
    OK(!bt_store_status(&s, 0, BT_SRC_CLOUDWATCH)->last_error &&
       stale_with(&s, 1, BT_SRC_CLOUDWATCH, "input_tokens = inf"),
       "an OK for all routes: route b stale, route a not");

    /* a poll that failed anyway reports its own error; the held reason goes with it */
    bt_store_add(&s, &bad, T0 + 180);
    struct bt_event fail = ev_of(BT_EV_ERROR, 1, BT_SRC_CLOUDWATCH);
    bt_strlcpy(fail.text, "timeout", sizeof fail.text);
    bt_model_event(&s, c.routes, &fail);
    bt_model_event(&s, c.routes, &ok);
    ok.route = 1;
    bt_model_event(&s, c.routes, &ok);
    OK(!bt_store_status(&s, 1, BT_SRC_CLOUDWATCH)->last_error, "after an error, the next OK is an OK");

    /* quotas */
    struct bt_event q = ev_of(BT_EV_QUOTA, 0, BT_SRC_QUOTAS);
    q.quota_kind = BT_Q_TPM;
    q.quota_source = BT_QS_SERVICE_QUOTAS;
    q.value = -5;
    bt_model_event(&s, c.routes, &q);
    OK(isnan(c.routes[0].quota[BT_Q_TPM].value) &&
       stale_with(&s, 0, BT_SRC_QUOTAS, "quota tpm = -5"), "a quota of -5 is not used; the quotas source says why");
    q.value = 2000000;
    bt_model_event(&s, c.routes, &q);
    OK(c.routes[0].quota[BT_Q_TPM].value == 2000000, "a plausible quota is used");
    q.value = NAN; /* "unknown, and why" (collectors/quota_collect.c) */
    q.quota_source = BT_QS_CONFIG;
    bt_strlcpy(q.text, "no 1m-context quota listed", sizeof q.text);
    bt_model_event(&s, c.routes, &q);
    OK(isnan(c.routes[0].quota[BT_Q_TPM].value) && !strcmp(c.routes[0].quota[BT_Q_TPM].name, q.text),
       "a quota event of NAN (unknown, with the reason) still applies");
    bt_store_free(&s);
    bt_config_free(&c);
}

static void admission(void)
{
    struct bt_config c;
    two_routes(&c);
    struct bt_store s;
    bt_store_init(&s, 2, 60);
    const char *text = "bedrock_admission_in_flight{route=\"a\"} 4e10\n"
                       "bedrock_admission_in_flight{route=\"b\"} +Inf\n"
                       "bedrock_admission_queue_depth{route=\"a\"} 3\n";
    struct bt_prom_doc doc;
    char err[200];
    bt_prom_init(&doc);
    OK(bt_prom_parse(&doc, text, strlen(text), BT_PROM_TEXT, err, sizeof err), "exposition parses");
    struct bt_adm_state *st = bt_adm_state_new(2);
    bool covered[2] = {false, false};
    struct bt_adm_scope sc = {c.routes, 2, -1, NULL};
    bt_adm_ingest(st, &doc, &sc, (double)T0, &s, covered);
    OK(isnan(bt_store_at(&s, 0, BT_SIG_ADM_IN_FLIGHT, T0)) &&
       isnan(bt_store_at(&s, 1, BT_SIG_ADM_IN_FLIGHT, T0)), "in flight 4e10 and +Inf are not stored");
    OK(bt_store_at(&s, 0, BT_SIG_ADM_QUEUE, T0) == 3, "queue depth 3 is");
    for (int r = 0; r < 2; r++) {
        struct bt_event ok = ev_of(BT_EV_OK, r, BT_SRC_ADMISSION);
        bt_model_event(&s, c.routes, &ok);
    }
    OK(stale_with(&s, 0, BT_SRC_ADMISSION, "adm_in_flight = 4e+10") &&
       stale_with(&s, 1, BT_SRC_ADMISSION, "adm_in_flight = inf"),
       "both routes' admission source is an error naming the value");
    bt_prom_free(&doc);
    bt_adm_state_free(st);
    bt_store_free(&s);
    bt_config_free(&c);
}

/* A recording with an absurd sample (written by hand, or by a bedtop before the
 * bounds): the replayed route is stale with the reason, as live would have been. */
static void replay(void)
{
    char buf[2048];
    snprintf(buf, sizeof buf,
             "{\"format\":\"bedtop-recording\",\"version\":\"1.1\",\"created\":\"2026-11-29T10:00:00Z\","
             "\"signals\":[\"invocations\",\"input_tokens\"],\"routes\":[{\"name\":\"a\",\"model\":\"m1\"}]}\n"
             "{\"t\":%lld,\"s\":[[0,%lld,%lld,[0,100,1,-5000]]],\"e\":[{\"t\":%lld,\"type\":\"ok\",\"route\":0,\"source\":\"cloudwatch\"}]}\n"
             "{\"t\":%lld,\"s\":[[0,%lld,%lld,[0,100,1,5000]]],\"e\":[{\"t\":%lld,\"type\":\"ok\",\"route\":0,\"source\":\"cloudwatch\"}]}\n",
             T0 + 60, T0, T0 + 60, T0 + 60, T0 + 120, T0 + 60, T0 + 120, T0 + 120);
    struct bt_replay rp;
    char err[300];
    bool ok = bt_replay_open_mem(&rp, "absurd.rec", buf, strlen(buf), NULL, NULL, err, sizeof err);
    OK(ok && rp.skipped == 0, "the recording opens, no line skipped (%s)", ok ? "" : err);
    if (!ok)
        return;
    bt_replay_seek(&rp, T0 + 60);
    OK(isnan(bt_store_at(&rp.store, 0, BT_SIG_INPUT_TOKENS, T0)) &&
       bt_store_at(&rp.store, 0, BT_SIG_INVOCATIONS, T0) == 100, "replay: -5000 not taken, 100 is");
    OK(stale_with(&rp.store, 0, BT_SRC_CLOUDWATCH, "input_tokens = -5000"),
       "replay at the bad poll: stale, with the reason");
    bt_replay_seek(&rp, T0 + 120);
    OK(!bt_store_status(&rp.store, 0, BT_SRC_CLOUDWATCH)->last_error &&
       bt_store_at(&rp.store, 0, BT_SIG_INPUT_TOKENS, T0 + 60) == 5000, "replay at the next poll: fine again");
    bt_replay_free(&rp);
}

/* Issue 26 break 3: one sample dated 2100 became the series' newest minute, and every
 * real sample after it was dropped as older than the window: the route went blind. */
#define Y2100 4102444800LL /* 2100-01-01T00:00:00Z */
static void future_dated(void)
{
    struct bt_config c;
    two_routes(&c);
    struct bt_store s;
    bt_store_init(&s, 2, 60);
    struct bt_sample fut = {.t = Y2100, .route = 0, .signal = BT_SIG_INPUT_TOKENS, .value = 10};
    OK(!bt_store_add(&s, &fut, T0 + 60), "break 3: a sample dated 2100 arriving in 2026 is refused");
    struct bt_sample real = {.t = T0 + 60, .route = 0, .signal = BT_SIG_INPUT_TOKENS, .value = 920000};
    OK(bt_store_add(&s, &real, T0 + 120) && bt_store_at(&s, 0, BT_SIG_INPUT_TOKENS, T0 + 60) == 920000,
       "break 3: the real sample after it is still taken and read");
    struct bt_event ok = ev_of(BT_EV_OK, 0, BT_SRC_CLOUDWATCH);
    bt_model_event(&s, c.routes, &ok);
    OK(stale_with(&s, 0, BT_SRC_CLOUDWATCH,
                  "sample from the future: input_tokens dated 2100-01-01T00:00:00Z arrived at "
                  "2026-11-29T10:01:00Z (more than 300 s of clock skew)"),
       "break 3: the route is marked, the reason named (%s)", bt_store_status(&s, 0, BT_SRC_CLOUDWATCH)->error);
    /* the stated skew: 300 s ahead is taken, 301 s is not */
    struct bt_sample edge = {.t = T0 + 420, .route = 1, .signal = BT_SIG_INVOCATIONS, .value = 1};
    OK(bt_store_add(&s, &edge, T0 + 120), "break 3: a sample 300 s ahead of its arrival is clock skew, taken");
    edge.t = T0 + 480; /* the next minute: 360 s ahead of its arrival at T0 + 120 */
    OK(!bt_store_add(&s, &edge, T0 + 120), "break 3: 360 s ahead is refused");
    bt_store_free(&s);
    bt_config_free(&c);
}

static void future_dated_replay(void)
{
    /* one sample group dated 2100 (arrival 10:01) before the real minutes: the real ones
     * must still be read, and the poll that carried it replays as an error naming it */
    char buf[2048];
    snprintf(buf, sizeof buf,
             "{\"format\":\"bedtop-recording\",\"version\":\"1.1\",\"created\":\"2026-11-29T10:00:00Z\","
             "\"signals\":[\"invocations\",\"input_tokens\"],\"routes\":[{\"name\":\"a\",\"model\":\"m1\"}]}\n"
             "{\"t\":%lld,\"s\":[[0,%lld,%lld,[0,7,1,7]],[0,%lld,%lld,[0,100,1,5000]]],"
             "\"e\":[{\"t\":%lld,\"type\":\"ok\",\"route\":0,\"source\":\"cloudwatch\"}]}\n"
             "{\"t\":%lld,\"s\":[[0,%lld,%lld,[0,200,1,6000]]],\"e\":[{\"t\":%lld,\"type\":\"ok\",\"route\":0,\"source\":\"cloudwatch\"}]}\n",
             T0 + 60, Y2100, T0 + 60, T0, T0 + 60, T0 + 60, T0 + 120, T0 + 60, T0 + 120, T0 + 120);
    struct bt_replay rp;
    char err[300];
    bool ok = bt_replay_open_mem(&rp, "future.rec", buf, strlen(buf), NULL, NULL, err, sizeof err);
    OK(ok, "break 3: the recording with a 2100 group opens (%s)", ok ? "" : err);
    if (!ok)
        return;
    bt_replay_seek(&rp, T0 + 60);
    OK(bt_store_at(&rp.store, 0, BT_SIG_INVOCATIONS, T0) == 100 &&
           bt_store_at(&rp.store, 0, BT_SIG_INPUT_TOKENS, T0) == 5000,
       "break 3: replay: the real minute beside the 2100 group is read");
    OK(stale_with(&rp.store, 0, BT_SRC_CLOUDWATCH, "sample from the future"),
       "break 3: replay at that poll: stale, naming the future sample");
    bt_replay_seek(&rp, T0 + 120);
    OK(bt_store_at(&rp.store, 0, BT_SIG_INVOCATIONS, T0 + 60) == 200 &&
           !bt_store_status(&rp.store, 0, BT_SRC_CLOUDWATCH)->last_error,
       "break 3: replay: the next minute is read and the route is fine again");
    bt_replay_free(&rp);
}

/* Issue 37 break 8: "cloudwatch_lag": 1e300 in a recording header reached a bare
 * (int64_t) cast in core/dataminute.c (undefined behaviour: make asan now checks
 * float-cast-overflow). Every float from outside goes through bt_f2i. */
static void float_to_int(void)
{
    int64_t i = 7;
    OK(!bt_f2i(1e300, 0, 100, &i) && !bt_f2i(-1e300, 0, 100, &i) && !bt_f2i(NAN, 0, 100, &i) &&
           !bt_f2i(INFINITY, 0, INT64_MAX, &i) && !bt_f2i(9223372036854775808.0, 0, INT64_MAX, &i) &&
           i == 7,
       "r4 break 8: bt_f2i refuses 1e300, -1e300, NaN, inf and 2^63, leaving the integer alone");
    OK(bt_f2i(99.9, 0, 100, &i) && i == 99 && bt_f2i(-0.5, -1, 100, &i) && i == 0 &&
           !bt_f2i(100.5, 0, 100, &i) && bt_f2i(4102444800.0, 0, 5000000000LL, &i) && i == 4102444800LL,
       "r4 break 8: bt_f2i truncates toward zero within lo .. hi (99.9: 99, -0.5: 0; 100.5 > 100 refused)");
    OK(bt_f2i_clamp(1e300, 0, 86400) == 86400 && bt_f2i_clamp(-1e300, 0, 86400) == 0 &&
           bt_f2i_clamp(NAN, 5, 86400) == 5 && bt_f2i_clamp(120.7, 0, 86400) == 120,
       "r4 break 8: bt_f2i_clamp: 1e300 is the bound, NaN the lower one");
    const char *rec =
        "{\"format\":\"bedtop-recording\",\"version\":\"2.0\",\"created\":\"2026-11-29T10:00:00Z\","
        "\"config\":{\"interval\":1e300,\"cloudwatch_lag\":1e300},"
        "\"routes\":[{\"name\":\"a\",\"model\":\"m\",\"max_tokens\":1e300,\"burndown\":1e300,"
        "\"quotas\":{\"tpm\":{\"value\":1e300,\"source\":\"config\"}}}]}\n"
        "{\"t\":1795946460,\"s\":[]}\n";
    struct bt_replay rp;
    char err[300] = "";
    bool ok = bt_replay_open_mem(&rp, "lag.rec", rec, strlen(rec), NULL, NULL, err, sizeof err);
    OK(ok && rp.cfg.cw_lag == 120 && rp.cfg.interval == 60,
       "r4 break 8: a header's cloudwatch_lag and interval of 1e300 are not used (the defaults stand: %g, %g)",
       ok ? rp.cfg.cw_lag : -1, ok ? rp.cfg.interval : -1);
    /* 10:01:00 polled, lag 120 s: the data minute is 09:58 (10:01 - 2 min, then the minute before) */
    OK(ok && bt_data_minute(&rp.cfg, 1795946460) == 1795946280,
       "r4 break 8: ... and its data minute is 09:58 for a poll at 10:01");
    OK(ok && isnan(rp.cfg.routes[0].max_tokens) && rp.cfg.routes[0].burndown == 1 &&
           isnan(rp.cfg.routes[0].quota[BT_Q_TPM].value),
       "r4 break 8: a route's max_tokens, burndown and quota of 1e300 are not used either");
    if (ok)
        bt_replay_free(&rp);
}

int main(void)
{
    float_to_int();
    bounds();
    store_path();
    admission();
    replay();
    future_dated();
    future_dated_replay();
    return tap_done();
}
