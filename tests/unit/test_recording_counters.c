/* Issue 19, raw readings in, figures out: a recording keeps the admission
 * counters as raw readings per series (format 2.0, "k" and "c"), never the
 * rates, and a replay derives the rates again through the same core.
 *
 * Worked by hand (the worker restart of test_admission.c): route triage, two
 * workers, scrapes at T0 (10:00:00), T0+60 and T0+120:
 *   worker a admitted 1,000,000 -> 1,000,600 -> 1,000,900
 *   worker b admitted     5,000 ->        10 ->        60   (restarted at T0+60)
 * Per series and summed: T0+60 600 + 10 = 610 a minute; T0+120 300 + 50 = 350.
 * Summed before the rate it was 1,000,610 at T0+60.
 *
 * Route settings learned at run time are typed setting events, replayed from
 * the time each was learned (test_settings_replay, worked there).
 *
 * Then a committed 1.2 file (tests/data/v1.2-admission.rec, in the 1.2
 * format the writer used before this change) still replays: its rates are samples, taken as they
 * were recorded (adm_admitted_pm 610 at 10:01, 350 at 10:02); its BASE_MODEL info
 * event still sets the route's base model, inference and burndown; and its mantle
 * route's old "table" burndown reads as none. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/recording.h"
#include "core/util.h"
#include "io/file.h"
#include "io/recfile.h"
#include "io/conffile.h"
#include "tests/tap.h"

#define T0 1795946400LL /* 2026-11-29T10:00:00Z */

static void reading(struct bt_store *s, const char *worker, double v, int64_t t)
{
    struct bt_reading rd = {.route = 0, .signal = BT_SIG_ADM_ADMITTED, .t = (double)t, .value = v};
    snprintf(rd.series, sizeof rd.series, "route=\"triage\",worker=\"%s\"", worker);
    bt_store_reading(s, &rd, t);
}

/* A one-route config, its store (routes bound) and a recorder on a new file. */
struct rig {
    char dir[32], path[64], err[256];
    struct bt_config c;
    struct bt_store s;
    struct bt_recorder *r;
};

static bool rig_open(struct rig *g, const char *name, const char *model)
{
    memset(g, 0, sizeof *g);
    snprintf(g->dir, sizeof g->dir, "/tmp/bt-rec-XXXXXX");
    if (!mkdtemp(g->dir)) {
        OK(false, "mkdtemp");
        return false;
    }
    snprintf(g->path, sizeof g->path, "%s/t.rec", g->dir);
    bt_config_init(&g->c);
    int k = bt_config_add_route(&g->c, name);
    bt_strlcpy(g->c.routes[k].model, model, sizeof g->c.routes[k].model);
    bt_config_finish(&g->c);
    bt_store_init(&g->s, 1, 60);
    bt_store_bind_routes(&g->s, g->c.routes);
    g->r = bt_recorder_open(g->path, &g->c, "live", T0, g->err, sizeof g->err);
    OK(g->r != NULL, "recorder opens: %s", g->r ? "" : g->err);
    if (g->r)
        bt_recorder_attach(g->r, &g->s);
    return g->r != NULL;
}

static void rig_free(struct rig *g)
{
    bt_config_free(&g->c);
    unlink(g->path);
    rmdir(g->dir);
}

static void test_readings_replay(void)
{
    struct rig g;
    if (!rig_open(&g, "triage", "us.anthropic.claude-sonnet-4-5-20250929-v1:0"))
        return;
    struct bt_store *sp = &g.s;
    struct bt_recorder *r = g.r;
    char *path = g.path, *err = g.err;
    const double a[] = {1000000, 1000600, 1000900}, b[] = {5000, 10, 60};
    for (int i = 0; i < 3; i++) {
        reading(sp, "a", a[i], T0 + 60 * i);
        reading(sp, "b", b[i], T0 + 60 * i);
        bt_recorder_flush(r, T0 + 60 * i + 5);
    }
    double live60 = bt_store_at(sp, 0, BT_SIG_ADM_ADMITTED, T0 + 60);
    double live120 = bt_store_at(sp, 0, BT_SIG_ADM_ADMITTED, T0 + 120);
    NEAR(live60, 610, 1e-9, "live: 610 admitted a minute at 10:01 (600 + 10)");
    NEAR(live120, 350, 1e-9, "live: 350 at 10:02 (300 + 50)");
    bt_recorder_close(r);
    bt_store_free(sp);

    size_t n = 0;
    char *text = bt_read_file(path, 1 << 20, &n);
    OK(text && strstr(text, "\"version\":\"2.2\""), "the header says format 2.2");
    /* signal 17 is adm_admitted_pm in this build's header: never written as a sample */
    char needle[32];
    snprintf(needle, sizeof needle, ",%d,610", (int)BT_SIG_ADM_ADMITTED);
    OK(text && !strstr(text, needle), "no derived rate (610) in the file");
    OK(text && strstr(text, "\"k\":[[0,\"route=\\\"triage\\\",worker=\\\"a\\\"\"]"),
       "the first line names series 0 (worker a) in \"k\"");
    OK(text && strstr(text, "\"c\":[[0,0,1795946400,1795946400,["), "readings are in \"c\"");
    free(text);

    struct bt_replay rp;
    OK(bt_replay_open(&rp, path, NULL, NULL, err, sizeof g.err), "replay opens: %s", err);
    NEAR(bt_store_at(&rp.store, 0, BT_SIG_ADM_ADMITTED, T0 + 60), 610, 1e-9,
         "replay derives 610 again from the readings, not 1,000,610");
    NEAR(bt_store_at(&rp.store, 0, BT_SIG_ADM_ADMITTED, T0 + 120), 350, 1e-9,
         "replay derives 350 at 10:02");
    OK(rp.has_admission, "the replay knows it has admission counters");
    bt_replay_seek(&rp, T0 + 30);
    OK(isnan(bt_store_at(&rp.store, 0, BT_SIG_ADM_ADMITTED, T0 + 60)),
       "seeking to 10:00:30 hides the rate that arrived at 10:01");
    bt_replay_free(&rp);
    rig_free(&g);
}

/* Route settings learned at run time are typed events in 2.0: a recording of
 * them replays the route as it was, each setting from the time it was learned.
 * By hand: route app starts with no max_tokens, burndown 1 (default); at
 * T0+10 it learns base model X, cross-region and burndown 5 (table); at T0+70
 * max_tokens 4,096. At T0+30: X, cross-region, 5, table, max_tokens unknown; at
 * T0+90 also 4,096. Before T0+10: the header's route. */
static void test_settings_replay(void)
{
    struct rig g;
    if (!rig_open(&g, "app", "arn:aws:bedrock:us-east-1:111122223333:application-inference-profile/x"))
        return;
    struct bt_store *sp = &g.s;
    struct bt_recorder *r = g.r;
    struct bt_config *cp = &g.c;
    char *path = g.path, *err = g.err;
    struct bt_event ev = {.t = T0 + 10, .type = BT_EV_SETTING, .route = 0,
                          .source = BT_SRC_QUOTAS, .setting = BT_SET_BASE_MODEL};
    bt_strlcpy(ev.str, "anthropic.claude-sonnet-4-5-20250929-v1:0", sizeof ev.str);
    bt_strlcpy(ev.text, "application inference profile in 3 Regions", sizeof ev.text);
    bt_store_apply(sp, &ev);
    ev.setting = BT_SET_INFERENCE;
    bt_strlcpy(ev.str, "cross-region", sizeof ev.str);
    bt_store_apply(sp, &ev);
    ev.setting = BT_SET_BURNDOWN;
    ev.value = 5;
    bt_strlcpy(ev.str, "table", sizeof ev.str);
    bt_store_apply(sp, &ev);
    bt_recorder_flush(r, T0 + 15);
    ev = (struct bt_event){.t = T0 + 70, .type = BT_EV_SETTING, .route = 0,
                           .source = BT_SRC_QUOTAS, .setting = BT_SET_MAX_TOKENS, .value = 4096};
    bt_store_apply(sp, &ev);
    bt_recorder_flush(r, T0 + 75);
    OK(cp->routes[0].max_tokens == 4096 && cp->routes[0].burndown == 5, "live: the events set the route");
    bt_recorder_close(r);
    bt_store_free(sp);
    size_t n = 0;
    char *text = bt_read_file(path, 1 << 20, &n);
    OK(text && strstr(text, "\"type\":\"setting\",\"route\":0,\"source\":\"quotas\",\"setting\":\"burndown\",\"value\":5,\"burndown_source\":\"table\""),
       "the file holds a typed burndown setting");
    OK(text && !strstr(text, "BASE_MODEL"), "no prose BASE_MODEL event");
    free(text);

    struct bt_replay rp;
    OK(bt_replay_open(&rp, path, NULL, NULL, err, sizeof g.err), "replay opens: %s", err);
    const struct bt_route *a = &rp.cfg.routes[0];
    bt_replay_seek(&rp, T0 + 5);
    OK(!a->base_model[0] && a->burndown == 1 && isnan(a->max_tokens), "before 10:00:10: the header's route");
    bt_replay_seek(&rp, T0 + 30);
    OK(!strcmp(a->base_model, "anthropic.claude-sonnet-4-5-20250929-v1:0") &&
           a->inference == BT_INF_CROSS_REGION && a->burndown == 5 &&
           !strcmp(a->burndown_source, "table") && isnan(a->max_tokens),
       "at 10:00:30: base model, cross-region, burndown 5 from the table; max_tokens not yet");
    bt_replay_seek(&rp, T0 + 90);
    OK(a->max_tokens == 4096, "at 10:01:30: max_tokens 4,096");
    bt_replay_free(&rp);
    rig_free(&g);
}

static void test_old_format(void)
{
    char path[1024], err[256];
    snprintf(path, sizeof path, "%s/tests/data/v1.2-admission.rec", tap_srcdir());
    struct bt_replay rp;
    if (!bt_replay_open(&rp, path, NULL, NULL, err, sizeof err)) {
        OK(false, "the 1.2 fixture opens: %s", err);
        return;
    }
    OK(rp.skipped == 0, "no line of the 1.2 file is skipped (%lu)", rp.skipped);
    NEAR(bt_store_at(&rp.store, 0, BT_SIG_ADM_ADMITTED, T0 + 60), 610, 1e-9,
         "1.2: the recorded rate at 10:01 is taken as it was (610)");
    NEAR(bt_store_at(&rp.store, 0, BT_SIG_ADM_ADMITTED, T0 + 120), 350, 1e-9,
         "1.2: 350 at 10:02");
    NEAR(bt_store_at(&rp.store, 0, BT_SIG_ADM_IN_FLIGHT, T0 + 120), 12, 0, "1.2: a gauge");
    OK(rp.has_admission, "1.2: admission samples seen");
    const struct bt_route *app = &rp.cfg.routes[1];
    STREQ(app->base_model, "anthropic.claude-sonnet-4-5-20250929-v1:0",
          "1.2: the BASE_MODEL info event still sets the base model");
    OK(app->inference == BT_INF_CROSS_REGION, "1.2: ... and the inference type");
    NEAR(app->burndown, 5, 0, "1.2: ... and the burndown");
    const struct bt_route *m = &rp.cfg.routes[2];
    STREQ(m->burndown_source, "none", "1.2: a mantle route's \"table\" burndown reads as none");
    bt_replay_free(&rp);
}

/* Hostile "k" and "c": bad indexes, types, times and values change nothing and
 * crash nothing (run under make asan); a good row beside them still counts. The
 * header's signal 0 is adm_admitted_pm. Series 0 at 10:00 reads 100, at 10:01 160:
 * (160 - 100) / 60 s x 60 = 60 a minute. */
static void test_hostile_rows(void)
{
    const char *text =
        "{\"format\":\"bedtop-recording\",\"version\":\"2.0\",\"signals\":[\"adm_admitted_pm\",\"adm_in_flight\"],"
        "\"routes\":[{\"name\":\"a\",\"model\":\"m\"}]}\n"
        "{\"t\":1795946400,\"s\":[],\"k\":[[0,\"w=\\\"1\\\"\"],[-1,\"x\"],[1e300,\"y\"],[2,5],[\"z\"],7,[3]],"
        "\"c\":[[0,0,1795946400,1795946400,[0,100]],[0,9,1795946400,1795946400,[0,1]],[5,0,1,1,[0,1]],"
        "[0,0,1e999,1,[0,1]],[0,0,1795946400,1795946400,[1,5,0,-3,0,\"x\",255,1,-1,2]],[0,0],\"q\",null]}\n"
        "{\"t\":1795946460,\"s\":[],\"c\":[[0,0,1795946460,1795946460,[0,160,0]]]}\n";
    struct bt_replay rp;
    char err[256] = "";
    OK(bt_replay_open_mem(&rp, "h.rec", text, strlen(text), NULL, NULL, err, sizeof err),
       "hostile rows: the file opens (%s)", err);
    OK(rp.skipped == 0, "hostile rows: the lines are read, bad rows ignored");
    NEAR(bt_store_at(&rp.store, 0, BT_SIG_ADM_ADMITTED, T0 + 60), 60, 1e-9,
         "the good rows still rate: 60 a minute");
    OK(isnan(bt_store_at(&rp.store, 0, BT_SIG_ADM_IN_FLIGHT, T0)),
       "a gauge in \"c\" is not a counter reading");
    bt_replay_free(&rp);
}

int main(void)
{
    test_readings_replay();
    test_settings_replay();
    test_old_format();
    test_hostile_rows();
    return tap_done();
}
