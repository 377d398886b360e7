/* The adaptive cadence's rule (core/cadence.c) on hand-worked cases: which routes
 * may be asked every 5 minutes, and why the others may not. The collector's side
 * (what is sent, the store still holding every minute) is test_aws_collectors.c's
 * test_adaptive_cadence, against the fake. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cadence.h"
#include "core/headroom.h"
#include "core/util.h"
#include "tests/tap.h"

static const int64_t T0 = 1795946400;        /* 2026-11-29 10:00:00 UTC */
static const int64_t NOW = 1795946400 + 1800; /* 10:30; the evaluated minute 10:27 */

struct fx {
    struct bt_config cfg;
    struct bt_store st;
};

static int route(struct fx *f, const char *name, const char *model, double quota)
{
    int r = bt_config_add_route(&f->cfg, name);
    struct bt_route *rt = &f->cfg.routes[r];
    bt_strlcpy(rt->model, model, sizeof rt->model);
    bt_strlcpy(rt->region, "us-east-1", sizeof rt->region);
    rt->max_tokens = 1000;
    if (!isnan(quota)) {
        rt->quota[BT_Q_TPM] = (struct bt_quota){quota, BT_QS_CONFIG, "", "test"};
        snprintf(rt->quota[BT_Q_TPM].code, sizeof rt->quota[BT_Q_TPM].code, "L-%s", model);
    }
    return r;
}

static void put(struct fx *f, int r, enum bt_signal s, int64_t t, double v)
{
    bt_store_add(&f->st, &(struct bt_sample){.t = t, .route = r, .signal = s, .value = v}, NOW);
}

/* Minutes 10:00-10:29 of a route: calls a minute, input tokens, 500 output each
 * minute, 2 s average latency, no throttles. */
static void steady(struct fx *f, int r, double calls, double input)
{
    for (int64_t m = T0; m < NOW; m += 60) {
        put(f, r, BT_SIG_INVOCATIONS, m, calls);
        put(f, r, BT_SIG_INPUT_TOKENS, m, input);
        put(f, r, BT_SIG_OUTPUT_TOKENS, m, 500);
        put(f, r, BT_SIG_LATENCY_AVG, m, 2000);
        put(f, r, BT_SIG_THROTTLES, m, 0);
    }
}

int main(void)
{
    char datadir[1100];
    snprintf(datadir, sizeof datadir, "%s/data", tap_srcdir());
    setenv("BEDTOP_DATADIR", datadir, 1);
    struct fx f;
    bt_config_defaults(&f.cfg);
    /* calm: 10 calls, 5,000 input + 500 output (burndown 1 for an unknown model at most
     * 5x: a few thousand), held = 10/60 x 2 s x (500 + 1,000) = 500, of 1,000,000:
     * under 1 % used */
    int calm = route(&f, "calm", "m.calm", 1000000);
    /* near: 600,000 input a minute of 1,000,000: 60 % used, over the 50 % line, while
     * still above the default warn headroom of 20 % */
    int near = route(&f, "near", "m.near", 1000000);
    /* throttled: calm figures, but 2 throttles at 10:20, ten minutes before now */
    int thr = route(&f, "thr", "m.thr", 1000000);
    /* no limit: no quota on any side, so no headroom the per-minute figures could show
     * shrinking: calm like "calm" (its throttles, asked every poll, would bring it back);
     * the same with a throttle 10 minutes ago: throttled */
    int unk = route(&f, "unk", "m.unk", NAN);
    int unkthr = route(&f, "unkthr", "m.unkthr", NAN);
    /* unknown: a quota, but CloudWatch never answered for it (no good poll: no minute to
     * evaluate, not idle): its headroom is not known */
    int nodata = route(&f, "nodata", "m.nodata", 1000000);
    /* bound: calm figures but no latency, so calls in flight are unknown and used is an
     * upper bound: every reservation of the minute, 10 x (5,000 / 10 + 1,000) = 15,000
     * (above the settled 5,000 + 500 x burndown): headroom at least 98.5 %, a lower
     * bound that is still far from the 50 % line: calm */
    int bound = route(&f, "bound", "m.bound", 1000000);
    /* rising: 10 calls a minute until 10:24, then 40: 10 at 10:23, 40 at the evaluated
     * 10:27, growth (40 - 10) / 10 = 3 over 5 minutes */
    int rise = route(&f, "rise", "m.rise", 1000000);
    /* shared: two routes on one quota code: one calm, one at 60 % (the group's used) */
    int sa = route(&f, "sa", "m.shared", 1000000), sb = route(&f, "sb", "m.shared2", 1000000);
    bt_strlcpy(f.cfg.routes[sb].quota[BT_Q_TPM].code, f.cfg.routes[sa].quota[BT_Q_TPM].code,
               sizeof f.cfg.routes[sb].quota[BT_Q_TPM].code);
    bt_config_finish(&f.cfg);
    bt_store_init(&f.st, f.cfg.nroutes, 1440);
    for (int r = 0; r < f.cfg.nroutes; r++) {
        if (r == nodata)
            continue;
        struct bt_event ev = {.t = NOW, .type = BT_EV_OK, .route = r, .source = BT_SRC_CLOUDWATCH};
        bt_model_event(&f.st, f.cfg.routes, &ev);
    }
    steady(&f, calm, 10, 5000);
    steady(&f, near, 10, 600000);
    steady(&f, thr, 10, 5000);
    put(&f, thr, BT_SIG_THROTTLES, T0 + 1200, 2);
    steady(&f, unk, 10, 5000);
    steady(&f, unkthr, 10, 5000);
    put(&f, unkthr, BT_SIG_THROTTLES, T0 + 1200, 2);
    for (int64_t m = T0; m < NOW; m += 60) {
        put(&f, bound, BT_SIG_INVOCATIONS, m, 10);
        put(&f, bound, BT_SIG_INPUT_TOKENS, m, 5000);
        put(&f, bound, BT_SIG_OUTPUT_TOKENS, m, 500);
        put(&f, bound, BT_SIG_THROTTLES, m, 0);
    }
    steady(&f, rise, 10, 5000);
    for (int64_t m = T0 + 1500; m < NOW; m += 60)
        put(&f, rise, BT_SIG_INVOCATIONS, m, 40);
    steady(&f, sa, 10, 5000);
    steady(&f, sb, 10, 600000);

    struct bt_eval *ev = bt_xcalloc((size_t)f.cfg.nroutes, sizeof *ev);
    bt_eval_all(&f.cfg, &f.st, NOW, ev);
    OK(bt_cadence_rule(&f.cfg, &f.st, &ev[calm], NOW) == BT_CAD_CALM,
       "under 1 %% used, steady, never throttled: calm (%s, headroom %.1f %%)",
       bt_cadence_why_name(bt_cadence_rule(&f.cfg, &f.st, &ev[calm], NOW)), ev[calm].headroom_pct);
    OK(bt_cadence_rule(&f.cfg, &f.st, &ev[near], NOW) == BT_CAD_NEAR,
       "60 %% used (headroom %.1f %%): every minute, near (%s)", ev[near].headroom_pct,
       bt_cadence_why_name(bt_cadence_rule(&f.cfg, &f.st, &ev[near], NOW)));
    OK(bt_cadence_rule(&f.cfg, &f.st, &ev[thr], NOW) == BT_CAD_THROTTLED,
       "a throttle 10 minutes ago: every minute, throttled");
    /* the same throttle 16 minutes before now is outside the 15-minute look-back */
    OK(bt_cadence_rule(&f.cfg, &f.st, &ev[thr], NOW + 360) != BT_CAD_THROTTLED,
       "a throttle 16 minutes ago no longer counts");
    OK(bt_cadence_rule(&f.cfg, &f.st, &ev[unk], NOW) == BT_CAD_CALM,
       "no limit known on any side, steady, never throttled: calm (%s)",
       bt_cadence_why_name(bt_cadence_rule(&f.cfg, &f.st, &ev[unk], NOW)));
    OK(bt_cadence_rule(&f.cfg, &f.st, &ev[unkthr], NOW) == BT_CAD_THROTTLED,
       "no limit known and a throttle 10 minutes ago: every minute, throttled");
    OK(bt_cadence_rule(&f.cfg, &f.st, &ev[nodata], NOW) == BT_CAD_UNKNOWN,
       "a quota but no minute to evaluate: every minute, unknown (%s)",
       bt_cadence_why_name(bt_cadence_rule(&f.cfg, &f.st, &ev[nodata], NOW)));
    OK(ev[bound].headroom_q == BT_QL_LOWER && ev[bound].headroom_pct > 90 &&
           bt_cadence_rule(&f.cfg, &f.st, &ev[bound], NOW) == BT_CAD_CALM,
       "headroom at least %.1f %% (a lower bound, %s): calm (%s)", ev[bound].headroom_pct,
       bt_quality_name(ev[bound].headroom_q),
       bt_cadence_why_name(bt_cadence_rule(&f.cfg, &f.st, &ev[bound], NOW)));
    OK(bt_cadence_rule(&f.cfg, &f.st, &ev[rise], NOW) == BT_CAD_RISING,
       "calls x4 in 5 minutes: every minute, rising");
    bool *slow = bt_xcalloc((size_t)f.cfg.nroutes, sizeof *slow);
    int n = bt_cadence_all(&f.cfg, &f.st, ev, NOW, slow);
    OK(slow[calm] && !slow[near] && !slow[thr] && slow[unk] && !slow[unkthr] && !slow[nodata] &&
           slow[bound] && !slow[rise],
       "bt_cadence_all agrees with the rule per route");
    /* slow: calm, unk, bound */
    OK(ev[sa].group.leader == ev[sb].group.leader && !slow[sa] && !slow[sb] && n == 3,
       "a calm route on a quota with a busy member is asked every minute with it (%d slow)", n);
    /* stale: the last good poll 10 minutes before now (over 5 minutes + one interval) */
    bt_eval_all(&f.cfg, &f.st, NOW + 600, ev);
    OK(bt_cadence_rule(&f.cfg, &f.st, &ev[calm], NOW + 600) == BT_CAD_UNKNOWN,
       "no good poll for 10 minutes: every minute, unknown");
    free(slow);
    free(ev);
    bt_store_free(&f.st);
    bt_config_free(&f.cfg);
    return tap_done();
}
