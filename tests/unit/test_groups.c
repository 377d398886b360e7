/* The quota group object (issue 33): members computed once per config, never
 * capped, read by the evaluation, SHARED_QUOTA, plan --limits, the observed ceiling
 * and the JSON; and the daily group's run-out at its own rate (issue 31 cases 3 and
 * 5). The arithmetic is in the comments; docs/headroom.md states the contract. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ceiling.h"
#include "core/headroom.h"
#include "core/plan.h"
#include "core/shares.h"
#include "core/util.h"
#include "io/conffile.h"
#include "render/report.h"
#include "tests/tap.h"

static const int64_t T0 = 1795946400;        /* 2026-11-29 10:00:00 UTC */
static const int64_t NOW = 1795946400 + 600; /* 10:10:00 */
static const int64_t M = 1795946400 + 420;   /* 10:07, every group's evaluated minute */

struct fx {
    struct bt_config cfg;
    struct bt_store st;
};

/* A runtime route with burndown 1 (from the config) and quota `quota` under `code`. */
static int fx_route(struct fx *f, const char *name, const char *model, double quota, const char *code,
                    double max_tokens)
{
    int r = bt_config_add_route(&f->cfg, name);
    struct bt_route *rt = &f->cfg.routes[r];
    bt_strlcpy(rt->model, model, sizeof rt->model);
    bt_strlcpy(rt->region, "us-east-1", sizeof rt->region);
    rt->max_tokens = max_tokens;
    rt->burndown = 1;
    rt->burndown_source = "config";
    rt->quota[BT_Q_TPM] = (struct bt_quota){quota, BT_QS_SERVICE_QUOTAS, "", "test"};
    bt_strlcpy(rt->quota[BT_Q_TPM].code, code, sizeof rt->quota[BT_Q_TPM].code);
    return r;
}

/* Every route polled at NOW: with the 120 s lag each group is evaluated at M. */
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
    put(f, r, BT_SIG_LATENCY_AVG, m, lat_ms);
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

/* Issue 31 case 5, reconstructed: ten routes g00..g09 on one quota L-ONE of
 * 1,000,000 TPM, each in the minute 10:07 with 60 calls, 6,000 input and 5,000
 * output (burndown 1), InvocationLatency 500 ms, max_tokens 400:
 *   settled = 6,000 + 5,000 = 11,000 (the charged tokens)
 *   R = 6,000 / 60 + 400 = 500; in flight = 60 / 60 x 0.5 s = 0.5; held = 250
 *   used = 11,250 a route; the group: 10 x 11,250 = 112,500
 * plan --limits for g00: the other nine use 9 x 11,250 = 101,250; the reserve is
 * 20 % = 200,000: budget = 1,000,000 - 101,250 - 200,000 = 698,750 TPM
 * (shared_with capped at 8 counted 8 x 11,250 = 90,000 and printed 710,000).
 * g00 throttles once at 10:07, so that minute is the ceiling's: charged tokens
 * max(settled, estimated) of the whole group = 10 x 11,000 = 110,000 TPM (the
 * route and 8 others gave 9 x 11,000 = 99,000). */
static void test_ten_on_one_quota(void)
{
    struct fx f;
    bt_config_init(&f.cfg);
    char name[16];
    for (int i = 0; i < 10; i++) {
        snprintf(name, sizeof name, "g%02d", i);
        fx_route(&f, name, "amazon.nova-lite-v1:0", 1000000, "L-ONE", 400);
    }
    fx_start(&f);
    for (int r = 0; r < 10; r++)
        minute(&f, r, M, 60, 6000, 5000, 500);
    put(&f, 0, BT_SIG_THROTTLES, M, 1);

    struct bt_eval ev[10];
    bt_eval_all(&f.cfg, &f.st, NOW, ev);
    NEAR(ev[0].used, 11250, 1e-9, "each route uses 11,000 + 0.5 x 500 = 11,250");
    NEAR(bt_eval_group_used(&ev[0]), 112500, 1e-9, "the group uses 10 x 11,250 = 112,500");
    OK(bt_eval_nshared(&ev[9]) == 9 && bt_eval_nshared(&ev[0]) == 9, "nine others for each member");
    int n = 0, last = -1;
    for (int m = ev[9].group.leader; m >= 0; m = bt_group_next(ev, m)) {
        OK(m > last, "members in config order (%d)", m);
        last = m;
        n++;
    }
    OK(n == 10 && last == 9, "the group chain reaches all ten members (%d)", n);

    struct bt_limits *l = bt_xcalloc(1, sizeof *l);
    bt_plan_limits(&f.cfg, &f.st, 0, NOW, l);
    OK(l->others == 9, "plan --limits counts nine other routes (%d)", l->others);
    NEAR(l->others_used, 101250, 1e-9, "the nine others use 101,250, the 9th and 10th included");
    NEAR(l->budget_tpm, 698750, 0, "token budget 1,000,000 - 101,250 - 200,000 = 698,750 (not 710,000)");
    free(l);

    struct bt_ceiling c;
    bt_ceiling_of(&f.cfg, &f.st, &ev[0], &c);
    OK(c.throttled_minutes == 1, "one throttled minute");
    NEAR(c.tokens, 110000, 1e-9, "observed ceiling 10 x 11,000 = 110,000 (not 99,000)");
    struct bt_ceiling all[10];
    bt_ceiling_all(&f.cfg, &f.st, ev, all);
    NEAR(all[9].tokens, 110000, 1e-9, "bt_ceiling_all: the same 110,000 for the last member");
    NEAR(all[0].pct_of_quota, 11, 1e-9, "11 % of the quota");

    /* SHARED_QUOTA names every other member that fits: "g01, ..., g09" (44 bytes),
     * their use 101,250 -> "101k", the group's 112,500 -> "113k" */
    const struct bt_warning *w = warning(&ev[0], BT_W_SHARED_QUOTA);
    OK(w && strstr(w->message, "g01, g02, g03, g04, g05, g06, g07, g08, g09 (") &&
       !strstr(w->message, "more"), "SHARED_QUOTA names all nine others, the 9th included");
    OK(w && strstr(w->message, "they use 101k TPM; 113k together"), "with their use: %s",
       w ? w->message : "none");
    fx_free(&f);
}

/* 20 members with 40-character names: SHARED_QUOTA's names (200 bytes) hold four
 * ("name, " is 42 bytes: 4 x 40 + 3 x 2 = 166, a fifth would make 208), then "and 15
 * more"; the JSON's quota.shared_with lists all 19 others; plan --limits counts
 * them: each uses 11,250 as above, 19 x 11,250 = 213,750, budget 1,000,000 -
 * 213,750 - 200,000 = 586,250. */
static void test_twenty_members(void)
{
    struct fx f;
    bt_config_init(&f.cfg);
    char name[48];
    for (int i = 0; i < 20; i++) {
        snprintf(name, sizeof name, "route-with-a-forty-character-name-%06d", i);
        fx_route(&f, name, "amazon.nova-lite-v1:0", 1000000, "L-ONE", 400);
    }
    fx_start(&f);
    for (int r = 0; r < 20; r++)
        minute(&f, r, M, 60, 6000, 5000, 500);
    struct bt_eval ev[20];
    bt_eval_all(&f.cfg, &f.st, NOW, ev);
    const struct bt_warning *w = warning(&ev[0], BT_W_SHARED_QUOTA);
    OK(w && strstr(w->message, "name-000004 and 15 more (") && !strstr(w->message, "name-000005"),
       "SHARED_QUOTA: four names, then 'and 15 more': %s", w ? w->message : "none");
    w = warning(&ev[19], BT_W_SHARED_QUOTA);
    OK(w && strstr(w->message, "name-000000, ") && strstr(w->message, "and 15 more"),
       "the last member names the first ones and counts the rest");

    struct bt_limits *l = bt_xcalloc(1, sizeof *l);
    bt_plan_limits(&f.cfg, &f.st, 19, NOW, l);
    OK(l->others == 19, "plan --limits: 19 others (%d)", l->others);
    NEAR(l->budget_tpm, 586250, 0, "budget 1,000,000 - 19 x 11,250 - 200,000 = 586,250");
    free(l);

    struct bt_report rep;
    bt_report_build(&rep, &f.cfg, &f.st, NOW);
    cJSON *root = bt_report_route_json(&rep, 7);
    bt_report_free(&rep);
    const cJSON *q = cJSON_GetObjectItemCaseSensitive(root, "quota");
    const cJSON *sw = cJSON_GetObjectItemCaseSensitive(q, "shared_with");
    OK(cJSON_GetArraySize(sw) == 19, "JSON shared_with lists all 19 others (%d)", cJSON_GetArraySize(sw));
    const cJSON *lastn = cJSON_GetArrayItem(sw, 18);
    OK(cJSON_IsString(lastn) && !strcmp(lastn->valuestring, "route-with-a-forty-character-name-000019"),
       "its last is the 20th route");
    cJSON_Delete(root);
    fx_free(&f);
}

/* Issue 31 case 3: the daily group's run-out uses the daily group's own rate. The
 * model's daily quota is shared by its on-demand route od and its cross-region
 * route xr (us.), which have quotas of their own per minute (two TPM groups, one
 * daily group). Daily quota 1,000,000; today od charged 400,000 and xr 502,000:
 * 902,000 = 90.2 % (warn at 80). Now od charges 100 tokens a minute and xr 900
 * (input only): the daily group's rate is 1,000/min, so the 98,000 left last
 * 98 min: from 10:07 it runs out at 11:45 UTC (in 1 h 38 min). Divided by od's
 * own TPM group's 100/min it would last 980 min, past the reset 13 h 53 min
 * (833 min) away: "does not run out before the reset" was the bug. */
static void test_daily_runout_own_rate(void)
{
    struct fx f;
    bt_config_init(&f.cfg);
    int od = fx_route(&f, "od", "anthropic.claude-sonnet-4-5-20250929-v1:0", 2000000, "L-OD", 1000);
    int xr = fx_route(&f, "xr", "us.anthropic.claude-sonnet-4-5-20250929-v1:0", 4000000, "L-XR", 1000);
    for (int r = 0; r < 2; r++)
        f.cfg.routes[r].quota[BT_Q_TPD] = (struct bt_quota){1e6, BT_QS_SERVICE_QUOTAS, "L-DAY", "tokens per day"};
    fx_start(&f);
    int64_t day = T0 - 36000; /* 00:00 UTC */
    put(&f, od, BT_SIG_DAY_INPUT_TOKENS, day, 400000);
    put(&f, xr, BT_SIG_DAY_INPUT_TOKENS, day, 502000);
    minute(&f, od, M, 1, 100, 0, 1000);
    minute(&f, xr, M, 9, 900, 0, 1000);
    struct bt_eval ev[2];
    bt_eval_all(&f.cfg, &f.st, NOW, ev);
    OK(bt_eval_nshared(&ev[od]) == 0 && bt_eval_nshared(&ev[xr]) == 0, "two TPM groups of one route each");
    NEAR(bt_eval_group_today(&ev[od]), 902000, 0, "the daily group's day: 902,000");
    NEAR(bt_eval_daily_rate(&ev[od]), 1000, 1e-9, "od's daily rate is its daily group's 1,000/min, not 100");
    NEAR(bt_eval_daily_rate(&ev[xr]), 1000, 1e-9, "xr's the same 1,000/min, not 900");
    const struct bt_group_fig *dod = bt_eval_day_group(&ev[od], BT_SIDE_DAILY),
                              *dxr = bt_eval_day_group(&ev[xr], BT_SIDE_DAILY);
    OK(dod->n == 2 && dod->leader == od && dxr->n == 2 && dxr->leader == od &&
           bt_eval_qgroup(&ev[od])->n == 1 && bt_eval_qgroup(&ev[xr])->leader == xr &&
           bt_eval_daily_side(&ev[od]) == BT_SIDE_DAILY,
       "one daily group object of two (led by od) over two quota groups of one");
    const struct bt_warning *w = warning(&ev[od], BT_W_DAILY_QUOTA);
    OK(w && strstr(w->message, "runs out at 11:45 UTC today (in 1 h 38 min)"),
       "od: runs out at 11:45 UTC: %s", w ? w->message : "none");
    w = warning(&ev[xr], BT_W_DAILY_QUOTA);
    OK(w && strstr(w->message, "runs out at 11:45 UTC today (in 1 h 38 min)"),
       "xr: the same run-out");
    fx_free(&f);
}

/* Two quotas whose routes interleave in config order: a and c on L-A, b and d on L-B. */
static void fx_interleaved(struct fx *f)
{
    fx_route(f, "a", "amazon.nova-lite-v1:0", 1000000, "L-A", 400);
    fx_route(f, "b", "amazon.nova-pro-v1:0", 1000000, "L-B", 400);
    fx_route(f, "c", "amazon.nova-lite-v1:0", 1000000, "L-A", 400);
    fx_route(f, "d", "amazon.nova-pro-v1:0", 1000000, "L-B", 400);
}

/* The group objects of a config: one per quota, members in config order, each
 * route's group found by its index. */
static void test_group_objects(void)
{
    struct fx f;
    bt_config_init(&f.cfg);
    fx_interleaved(&f);
    fx_route(&f, "e", "amazon.nova-micro-v1:0", 1000000, "L-E", 400);
    bt_config_finish(&f.cfg);
    struct bt_eval_groups *g = bt_eval_groups_new(&f.cfg);
    OK(g->ngroups == 3, "three quotas, three groups (%d)", g->ngroups);
    const struct bt_group *ga = bt_eval_group_of(g, 2);
    OK(ga && ga->leader == 0 && ga->n == 2 && ga->members[0] == 0 && ga->members[1] == 2,
       "c's group is a's: {a, c}");
    const struct bt_group *gb = bt_eval_group_of(g, 1);
    OK(gb && gb->leader == 1 && gb->n == 2 && gb->members[1] == 3, "b's group: {b, d}");
    const struct bt_group *ge = bt_eval_group_of(g, 4);
    OK(ge && ge->n == 1 && ge->members[0] == 4, "e alone");
    OK(!bt_eval_group_of(g, 5) && !bt_eval_group_of(g, -1), "no group past the routes");
    /* a replay keys its groups once: the same grouping while the routes key the
     * same, a new one once a seek learns a quota code that moves a route */
    struct bt_eval_groups *same = bt_eval_groups_renew(g, &f.cfg);
    OK(same == g, "renewed with no change: the same grouping");
    bt_strlcpy(f.cfg.routes[4].quota[BT_Q_TPM].code, "L-A", sizeof f.cfg.routes[4].quota[BT_Q_TPM].code);
    g = bt_eval_groups_renew(same, &f.cfg);
    ga = bt_eval_group_of(g, 4);
    OK(g->ngroups == 2 && ga && ga->leader == 0 && ga->n == 3,
       "e learns a's code: two groups, e in a's (%d)", g->ngroups);
    bt_eval_groups_free(g);
    bt_config_free(&f.cfg);
}

/* Unknown members counted once per group, each member told of the others: a group
 * of four on one quota where g1, g2 and g3 never had a CloudWatch answer (unknown)
 * and g0 is read. g0: three others unknown, the first g1. g1: two others (g2, g3),
 * the first g2. g3: two others (g1, g2), the first g1. */
static void test_unknown_members(void)
{
    struct fx f;
    bt_config_init(&f.cfg);
    char name[16];
    for (int i = 0; i < 4; i++) {
        snprintf(name, sizeof name, "g%d", i);
        fx_route(&f, name, "amazon.nova-lite-v1:0", 1000000, "L-ONE", 400);
    }
    bt_config_finish(&f.cfg);
    bt_store_init(&f.st, f.cfg.nroutes, 1440);
    struct bt_event ok = {.t = NOW, .type = BT_EV_OK, .route = 0, .source = BT_SRC_CLOUDWATCH};
    bt_model_event(&f.st, f.cfg.routes, &ok);
    minute(&f, 0, M, 60, 6000, 5000, 500);
    struct bt_eval ev[4];
    bt_eval_all(&f.cfg, &f.st, NOW, ev);
    OK(bt_eval_nunknown_others(&ev[0]) == 3 && bt_eval_unknown_other(&ev[0]) == 1, "g0: 3 unknown others, the first g1 (%d, %d)",
       bt_eval_nunknown_others(&ev[0]), bt_eval_unknown_other(&ev[0]));
    OK(bt_eval_nunknown_others(&ev[1]) == 2 && bt_eval_unknown_other(&ev[1]) == 2, "g1: 2 unknown others, the first g2 (%d, %d)",
       bt_eval_nunknown_others(&ev[1]), bt_eval_unknown_other(&ev[1]));
    OK(bt_eval_nunknown_others(&ev[3]) == 2 && bt_eval_unknown_other(&ev[3]) == 1, "g3: 2 unknown others, the first g1 (%d, %d)",
       bt_eval_nunknown_others(&ev[3]), bt_eval_unknown_other(&ev[3]));
    const struct bt_group_fig *g0 = bt_eval_qgroup(&ev[0]);
    OK(g0->n == 4 && g0->nunknown == 3 && g0->unknown[0] == 1 && g0->unknown[1] == 2 &&
           bt_eval_qgroup(&ev[3])->leader == 0 && bt_eval_qgroup(&ev[3])->nunknown == 3 &&
           bt_eval_qgroup(&ev[3])->unknown[1] == 2,
       "the group object: 4 members, 3 unknown, the first two g1 and g2, the same for every member");
    OK(bt_eval_has(&ev[0], BT_W_PARTIAL_GROUP), "PARTIAL_GROUP on the read member");
    fx_free(&f);
}

/* Each group's shares computed once for all its members (core/shares.h's memo), the
 * same as computed for each route alone. Groups interleave in config order: a, c, e
 * on L-A, b, d on L-B, x alone. In the minute 10:07 (burndown 1, latency 500 ms,
 * max_tokens 400; used = settled + held, held = calls / 60 x 0.5 s x R):
 *   a: 60 calls, 6,000 in, 5,000 out: R = 100 + 400 = 500, held 250, used 11,250
 *   c: 60 calls, 12,000 in, 3,000 out: R = 600, held 300, used 15,300
 *   e: 30 calls, 3,000 in, 1,000 out: R = 500, held 0.25 x 500 = 125, used 4,125
 * L-A's use: 30,675; by route c 15,300 / 30,675 = 49.88 %, a 36.67 %, e 13.45 %. */
static void test_share_memo(void)
{
    struct fx f;
    bt_config_init(&f.cfg);
    fx_interleaved(&f);
    fx_route(&f, "e", "amazon.nova-lite-v1:0", 1000000, "L-A", 400);
    fx_route(&f, "x", "amazon.nova-micro-v1:0", 1000000, "L-X", 400);
    fx_start(&f);
    minute(&f, 0, M, 60, 6000, 5000, 500);
    minute(&f, 1, M, 60, 6000, 5000, 500);
    minute(&f, 2, M, 60, 12000, 3000, 500);
    minute(&f, 3, M, 20, 2000, 1000, 500);
    minute(&f, 4, M, 30, 3000, 1000, 500);
    minute(&f, 5, M, 10, 1000, 1000, 500);
    struct bt_report rep;
    bt_report_build(&rep, &f.cfg, &f.st, NOW);

    /* the whole report's JSON (one memo for its routes) against each route alone */
    cJSON *all = bt_report_json(&rep);
    const cJSON *routes = cJSON_GetObjectItemCaseSensitive(all, "routes");
    int same = 0;
    for (int i = 0; i < rep.n; i++) {
        cJSON *one = bt_report_route_json(&rep, i); /* no memo: computed anew */
        same += cJSON_Compare(cJSON_GetObjectItemCaseSensitive(one, "shares"),
                              cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(routes, i),
                                                               "shares"), true);
        cJSON_Delete(one);
    }
    OK(same == 6, "every route's shares through the memo are those computed alone (%d of 6)", same);
    const cJSON *sh = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(routes, 2), "shares");
    const char *want[3] = {"c", "a", "e"};
    const double pct[3] = {49.88, 36.67, 13.45};
    int right = 0, k = 0;
    const cJSON *s;
    cJSON_ArrayForEach(s, sh) {
        const char *by = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(s, "by"));
        if (!by || strcmp(by, "route") || k >= 3)
            continue;
        const char *nm = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(s, "name"));
        double p = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(s, "pct"));
        right += nm && !strcmp(nm, want[k]) && fabs(p - pct[k]) < 1e-9;
        k++;
    }
    OK(right == 3 && k == 3, "c's route shares: c 49.88 %%, a 36.67 %%, e 13.45 %% (%d of 3 right)",
       right);
    cJSON_Delete(all);

    /* the memo itself: a's list is c's and e's, b's another; e (L-A's last) lets it go */
    struct bt_share_memo memo = {0};
    struct bt_share_list scratch = {0};
    const struct bt_share_list *la = bt_share_memo_get(&memo, &f.cfg, &f.st, rep.evals, 0,
                                                       BT_SHARE_ROUTE, &scratch);
    const struct bt_share_list *lb = bt_share_memo_get(&memo, &f.cfg, &f.st, rep.evals, 1,
                                                       BT_SHARE_ROUTE, &scratch);
    const struct bt_share_list *lc = bt_share_memo_get(&memo, &f.cfg, &f.st, rep.evals, 2,
                                                       BT_SHARE_ROUTE, &scratch);
    OK(la == lc && la != lb && la->n == 3 && lb->n == 2, "a and c read one list of 3, b its own of 2");
    bt_share_memo_done(&memo, rep.evals, 2);
    OK(memo.have[0 * BT_SHARE_COUNT + BT_SHARE_ROUTE], "c is not L-A's last: its list stays");
    bt_share_memo_done(&memo, rep.evals, 4);
    OK(!memo.have[0 * BT_SHARE_COUNT + BT_SHARE_ROUTE] && memo.have[1 * BT_SHARE_COUNT + BT_SHARE_ROUTE],
       "after e, L-A's last member, its list is gone; L-B's stays");
    const struct bt_share_list *lx = bt_share_memo_get(&memo, &f.cfg, &f.st, rep.evals, 5,
                                                       BT_SHARE_ROUTE, &scratch);
    OK(lx == &scratch && lx->n == 1, "x, alone on its quota, is computed into the scratch");
    bt_share_memo_free(&memo);
    bt_shares_free(&scratch);

    /* check --route without e: L-A's last member is not written, the shares are the
     * whole group's still */
    bool keep[6] = {true, true, true, true, false, false};
    bt_report_select(&rep, keep, BT_ST_WARN);
    struct bt_buf out = {0};
    bt_report_render(&rep, BT_FMT_JSON, false, &out);
    cJSON *shown = cJSON_Parse(bt_buf_str(&out));
    const cJSON *sr = cJSON_GetObjectItemCaseSensitive(shown, "routes");
    cJSON *c_alone = bt_report_route_json(&rep, 2);
    OK(cJSON_GetArraySize(sr) == 4 &&
           cJSON_Compare(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(sr, 2), "shares"),
                         cJSON_GetObjectItemCaseSensitive(c_alone, "shares"), true),
       "four routes shown; c's shares as computed alone");
    cJSON_Delete(c_alone);
    cJSON_Delete(shown);
    bt_buf_free(&out);
    bt_report_free(&rep);
    fx_free(&f);
}

int main(void)
{
    test_ten_on_one_quota();
    test_twenty_members();
    test_share_memo();
    test_daily_runout_own_rate();
    test_group_objects();
    test_unknown_members();
    return tap_done();
}
