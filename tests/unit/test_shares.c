/* Who holds the quota (issue 35): shares of a quota group by team (the admission
 * counters' team label, per series, a worker restart among them), by mantle project
 * and by route, the callers outside the config beside them, a recording replayed to
 * the same shares, and serve's top N plus "other". The arithmetic is in the
 * comments; DESIGN.md "Who holds the quota" is the contract.
 *
 * The fixture, group L-SON (1,000,000 TPM, burndown 1), evaluated at 10:07 with the
 * admission scrapes at 10:08:00 and 10:09:00 (the newest read, 10:09, is chat's
 * admission minute):
 *   route chat, admission: settled_tokens_total per worker
 *     w1 team=search 100,000 -> 160,000            60,000 a minute
 *     w2 team=search  50,000 ->  20,000 (restarted: its increase is 20,000)
 *     w3 team=ads     10,000 ->  40,000            30,000 a minute
 *   held gauge at 10:09: w1 8,000, w2 2,000, w3 5,000 (15,000 the route's)
 *   CloudWatch 10:07: 100 calls, 60,000 in, 60,000 out: settled 120,000
 *   chat used = 120,000 + 15,000 held = 135,000
 *   route batch, no admission: 50 calls, 20,000 in, 20,000 out, 600 ms, max_tokens
 *   1,000: in flight 50 / 60 x 0.6 = 0.5, R = 400 + 1,000 = 1,400, held 700:
 *   batch used = 40,700
 *   group used = 135,000 + 40,700 = 175,700
 * By team: search 60,000 + 20,000 + 8,000 + 2,000 = 90,000 (51.22 %), ads 30,000 +
 * 5,000 = 35,000 (19.92 %); unattributed: chat's 135,000 - 125,000 = 10,000 the
 * counters do not account for, plus batch's 40,700 = 50,700 (28.86 %). The three
 * sum to 175,700. (Summed by route before the rate, as the route's own figure is,
 * w2's restart would still be right; but the team label was dropped: no team
 * shares at all.) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collectors/admission.h"
#include "collectors/promsource.h"
#include "collectors/promtext.h"
#include "collectors/tags.h"
#include "core/recording.h"
#include "core/shares.h"
#include "core/util.h"
#include "io/conffile.h"
#include "io/recfile.h"
#include "tests/tap.h"

/* NEAR with a formatted description */
#define NEARF(got, want, tol, ...)                  \
    do {                                            \
        char what_[256];                            \
        snprintf(what_, sizeof what_, __VA_ARGS__); \
        NEAR((got), (want), (tol), what_);          \
    } while (0)

static const int64_t T0 = 1795946400;      /* 2026-11-29 10:00:00 UTC */
static const int64_t NOW = T0 + 600;       /* 10:10:00 */
static const int64_t M = T0 + 420;         /* 10:07 */

static int add_route(struct bt_config *c, const char *name, const char *model, double max_tokens)
{
    int r = bt_config_add_route(c, name);
    struct bt_route *rt = &c->routes[r];
    bt_strlcpy(rt->model, model, sizeof rt->model);
    bt_strlcpy(rt->region, "us-east-1", sizeof rt->region);
    rt->max_tokens = max_tokens;
    rt->burndown = 1;
    rt->burndown_source = "config";
    rt->quota[BT_Q_TPM] = (struct bt_quota){1000000, BT_QS_SERVICE_QUOTAS, "L-SON", "test"};
    return r;
}

static void put(struct bt_store *s, int r, enum bt_signal sig, int64_t t, double v)
{
    bt_store_add(s, &(struct bt_sample){.t = t, .route = r, .signal = sig, .value = v}, NOW);
}

static void scrape(struct bt_adm_state *st, const struct bt_config *c, struct bt_store *s,
                   const char *text, double now)
{
    struct bt_prom_doc d;
    char err[256];
    bt_prom_init(&d);
    OK(bt_prom_parse(&d, text, strlen(text), BT_PROM_TEXT, err, sizeof err), "parse: %s", err);
    struct bt_adm_scope sc = {c->routes, c->nroutes, -1, NULL};
    bool cov[4] = {false};
    bt_adm_ingest(st, &d, &sc, now, s, cov);
    bt_prom_free(&d);
}

static const char scrape1[] =
    "# TYPE bedrock_admission_settled_tokens_total counter\n"
    "bedrock_admission_settled_tokens_total{route=\"chat\",team=\"search\",worker=\"w1\"} 100000\n"
    "bedrock_admission_settled_tokens_total{route=\"chat\",team=\"search\",worker=\"w2\"} 50000\n"
    "bedrock_admission_settled_tokens_total{route=\"chat\",team=\"ads\",worker=\"w3\"} 10000\n"
    "# TYPE bedrock_admission_reserved_tokens_held gauge\n"
    "bedrock_admission_reserved_tokens_held{route=\"chat\",team=\"search\",worker=\"w1\"} 7000\n"
    "bedrock_admission_reserved_tokens_held{route=\"chat\",team=\"search\",worker=\"w2\"} 1000\n"
    "bedrock_admission_reserved_tokens_held{route=\"chat\",team=\"ads\",worker=\"w3\"} 4000\n";
static const char scrape2[] =
    "# TYPE bedrock_admission_settled_tokens_total counter\n"
    "bedrock_admission_settled_tokens_total{route=\"chat\",team=\"search\",worker=\"w1\"} 160000\n"
    "bedrock_admission_settled_tokens_total{route=\"chat\",team=\"search\",worker=\"w2\"} 20000\n"
    "bedrock_admission_settled_tokens_total{route=\"chat\",team=\"ads\",worker=\"w3\"} 40000\n"
    "# TYPE bedrock_admission_reserved_tokens_held gauge\n"
    "bedrock_admission_reserved_tokens_held{route=\"chat\",team=\"search\",worker=\"w1\"} 8000\n"
    "bedrock_admission_reserved_tokens_held{route=\"chat\",team=\"search\",worker=\"w2\"} 2000\n"
    "bedrock_admission_reserved_tokens_held{route=\"chat\",team=\"ads\",worker=\"w3\"} 5000\n";

struct fx {
    struct bt_config cfg;
    struct bt_store st;
    struct bt_eval ev[4];
    struct bt_eval_groups *g;
};

static void fx_cloudwatch(struct fx *f)
{
    for (int r = 0; r < f->cfg.nroutes; r++)
        bt_model_event(&f->st, f->cfg.routes,
                       &(struct bt_event){.t = NOW, .type = BT_EV_OK, .route = r,
                                          .source = BT_SRC_CLOUDWATCH});
    put(&f->st, 0, BT_SIG_INVOCATIONS, M, 100);
    put(&f->st, 0, BT_SIG_INPUT_TOKENS, M, 60000);
    put(&f->st, 0, BT_SIG_OUTPUT_TOKENS, M, 60000);
    put(&f->st, 1, BT_SIG_INVOCATIONS, M, 50);
    put(&f->st, 1, BT_SIG_INPUT_TOKENS, M, 20000);
    put(&f->st, 1, BT_SIG_OUTPUT_TOKENS, M, 20000);
    put(&f->st, 1, BT_SIG_LATENCY_AVG, M, 600);
}

static void fx_init(struct fx *f)
{
    memset(f, 0, sizeof *f);
    bt_config_init(&f->cfg);
    add_route(&f->cfg, "chat", "amazon.nova-pro-v1:0", 1000);
    add_route(&f->cfg, "batch", "amazon.nova-pro-v1:0", 1000);
    bt_config_finish(&f->cfg);
    bt_store_init(&f->st, f->cfg.nroutes, 1440);
    bt_store_bind_routes(&f->st, f->cfg.routes);
}

static void fx_eval(struct fx *f)
{
    if (!f->g)
        f->g = bt_eval_groups_new(&f->cfg);
    bt_eval_all_with(&f->cfg, &f->st, NOW, f->g, false, NULL, f->ev);
}

static void fx_free(struct fx *f)
{
    bt_eval_groups_free(f->g);
    bt_store_free(&f->st);
    bt_config_free(&f->cfg);
}

static const struct bt_share *find(const struct bt_share_list *l, const char *name)
{
    for (int i = 0; i < l->n; i++)
        if (!strcmp(l->s[i].name, name))
            return &l->s[i];
    return NULL;
}

static void check_team_shares(const struct fx *f, const char *what)
{
    struct bt_share_list l = {0};
    const struct bt_group *g = bt_eval_group_of(f->g, 0);
    OK(g->n == 2, "%s: chat and batch are one group", what);
    NEARF(f->ev[0].used, 135000, 1e-6, "%s: chat uses 120,000 + 15,000 held", what);
    NEARF(f->ev[1].used, 40700, 1e-6, "%s: batch uses 40,000 + 0.5 x 1,400", what);
    bt_shares_group(&f->cfg, &f->st, f->ev, g, BT_SHARE_TEAM, NULL, &l);
    NEARF(l.group_used, 175700, 1e-6, "%s: the group uses 175,700", what);
    const struct bt_share *s = find(&l, "search"), *a = find(&l, "ads"),
                          *u = find(&l, BT_SHARE_UNATTRIBUTED);
    OK(s && a && u, "%s: search, ads and unattributed", what);
    if (s && a && u) {
        NEARF(s->used, 90000, 1e-6, "%s: search holds 60,000 + 20,000 (w2 restarted) + 10,000 held", what);
        NEARF(s->pct, 51.2237, 1e-3, "%s: search 51.22 %%", what);
        NEARF(a->used, 35000, 1e-6, "%s: ads holds 30,000 + 5,000 held", what);
        NEARF(a->pct, 19.9203, 1e-3, "%s: ads 19.92 %%", what);
        NEARF(u->used, 50700, 1e-6, "%s: 10,000 of chat and all of batch cannot be told apart", what);
        NEARF(s->used + a->used + u->used, l.group_used, 1e-6, "%s: the shares sum to the group's use", what);
        OK(s->quality == BT_QL_KNOWN && !strcmp(s->source, "admission"), "%s: search is known, from admission", what);
        OK(u->reason[0] != '\0', "%s: unattributed says why: %s", what, u->reason);
        OK(l.s[0].used >= l.s[1].used && !strcmp(l.s[l.n - 1].name, BT_SHARE_UNATTRIBUTED),
           "%s: largest first, unattributed last", what);
    }
    bt_shares_free(&l);
}

static void test_teams(void)
{
    struct fx f;
    fx_init(&f);
    struct bt_adm_state *as = bt_adm_state_new(f.cfg.nroutes);
    scrape(as, &f.cfg, &f.st, scrape1, (double)(T0 + 480));
    scrape(as, &f.cfg, &f.st, scrape2, (double)(T0 + 540));
    bt_adm_state_free(as);
    fx_cloudwatch(&f);
    fx_eval(&f);
    check_team_shares(&f, "live");

    /* by route: each member's use, no team needed */
    struct bt_share_list l = {0};
    const struct bt_group *g = bt_eval_group_of(f.g, 0);
    bt_shares_group(&f.cfg, &f.st, f.ev, g, BT_SHARE_ROUTE, NULL, &l);
    OK(l.n == 2 && !strcmp(l.s[0].name, "chat") && !strcmp(l.s[1].name, "batch"),
       "by route: chat then batch");
    NEARF(l.s[0].pct, 100.0 * 135000 / 175700, 1e-9, "by route: chat 76.84 %%");

    /* a label the counters do not carry: every token unattributed, never spread */
    bt_shares_group(&f.cfg, &f.st, f.ev, g, BT_SHARE_TEAM, "tenant", &l);
    OK(l.n == 1 && !strcmp(l.s[0].name, BT_SHARE_UNATTRIBUTED), "share_label tenant: one unattributed share");
    NEARF(l.s[0].used, 175700, 1e-6, "all 175,700 unattributed");

    /* plan --limits --by team. Quota 1,000,000, reserve 20 % = 200,000, unattributed
     * 50,700: the teams have 749,300; their demands 90,000 + 35,000 = 125,000 fit, so
     * each gets its use and half of the 624,300 left, 312,150: search 402,150, ads
     * 347,150. */
    struct bt_share_budgets bud;
    char why[224] = "";
    OK(bt_shares_budgets(&f.cfg, &f.st, NOW, 0, BT_SHARE_TEAM, 0.2, &bud, why, sizeof why),
       "budgets by team: %s", why);
    OK(bud.n == 2 && !strcmp(bud.b[0].name, "search") && !strcmp(bud.b[1].name, "ads"),
       "search first, then ads");
    if (bud.n == 2) {
        NEARF(bud.available, 749300, 1e-6, "749,300 for the teams");
        NEARF(bud.b[0].budget, 402150, 1e-6, "search: 90,000 + 312,150");
        NEARF(bud.b[1].budget, 347150, 1e-6, "ads: 35,000 + 312,150");
        OK(isnan(bud.cap), "the demands fit: no cap");
    }
    bt_shares_budgets_free(&bud);
    /* oversubscribed: quota 200,000, reserve 40,000, unattributed 50,700: 109,300 for
     * the teams; ads' 35,000 is below half of it (54,650) and is kept whole; search
     * gets the rest, 74,300, the cap */
    for (int r = 0; r < 2; r++)
        f.cfg.routes[r].quota[BT_Q_TPM].value = 200000;
    OK(bt_shares_budgets(&f.cfg, &f.st, NOW, 0, BT_SHARE_TEAM, 0.2, &bud, why, sizeof why),
       "budgets oversubscribed: %s", why);
    if (bud.n == 2) {
        NEARF(bud.cap, 74300, 1e-6, "the max-min cap: 109,300 - 35,000");
        NEARF(bud.b[0].budget, 74300, 1e-6, "search capped at 74,300");
        NEARF(bud.b[1].budget, 35000, 1e-6, "ads keeps its 35,000");
        NEARF(bud.b[0].budget + bud.b[1].budget + bud.unattributed + bud.reserve, 200000, 1e-6,
              "budgets, unattributed and reserve fill the quota exactly");
    }
    bt_shares_budgets_free(&bud);
    for (int r = 0; r < 2; r++)
        f.cfg.routes[r].quota[BT_Q_TPM].value = 1000000;
    fx_eval(&f);

    /* SHARED_QUOTA names the biggest holders with their share */
    const struct bt_warning *w = NULL;
    for (int i = 0; i < f.ev[1].nwarn; i++)
        if (f.ev[1].warnings[i].code == BT_W_SHARED_QUOTA)
            w = &f.ev[1].warnings[i];
    OK(w && strstr(w->message, "the biggest holders by team: search 51%, ads 20%"),
       "SHARED_QUOTA names search 51%% and ads 20%%: %s", w ? w->message : "(none)");

    /* the callers outside the config: one share that says what it is, not in the sum */
    struct bt_event ev = {.t = NOW, .type = BT_EV_INFO, .route = 0, .source = BT_SRC_CLOUDWATCH};
    bt_strlcpy(ev.code, BT_EVCODE_UNSEEN_CALLERS, sizeof ev.code);
    bt_strlcpy(ev.text, "amazon.nova-pro-v1:0 called directly: 12.0k TPM", sizeof ev.text);
    bt_store_apply(&f.st, &ev);
    fx_eval(&f);
    bt_shares_group(&f.cfg, &f.st, f.ev, g, BT_SHARE_ROUTE, NULL, &l);
    const struct bt_share *o = find(&l, BT_SHARE_OUTSIDE);
    OK(o && o->outside && isnan(o->used) && strstr(o->reason, "called directly"),
       "outside the config: its own share, named by Metrics Insights");
    NEARF(l.group_used, 175700, 1e-6, "outside callers are not added to the group's use");
    bt_shares_free(&l);
    fx_free(&f);
}

/* A mantle model with two projects (routes m-alpha and m-beta, one quota group: the
 * Project is not in the quota's key). No latency on mantle, no admission: in flight
 * is unknown, so each route's input use is the per-minute bound, an upper bound:
 *   m-alpha 10 calls, 30,000 input: R = 3,000 + 1,000; bound 10 x 4,000 = 40,000
 *   m-beta   5 calls, 10,000 input: R = 2,000 + 1,000; bound  5 x 3,000 = 15,000
 * By project: alpha 40,000 (72.73 %), beta 15,000 (27.27 %), both upper bounds. */
static void test_projects(void)
{
    struct bt_config c;
    bt_config_init(&c);
    const char *names[] = {"m-alpha", "m-beta"}, *proj[] = {"alpha", "beta"};
    for (int i = 0; i < 2; i++) {
        int r = bt_config_add_route(&c, names[i]);
        struct bt_route *rt = &c.routes[r];
        bt_strlcpy(rt->model, "openai.gpt-oss-120b", sizeof rt->model);
        bt_strlcpy(rt->region, "us-east-1", sizeof rt->region);
        bt_strlcpy(rt->project, proj[i], sizeof rt->project);
        rt->endpoint = BT_EP_MANTLE;
        rt->max_tokens = 1000;
        rt->quota[BT_Q_INPUT_TPM] = (struct bt_quota){1000000, BT_QS_CONFIG, "", "in"};
        rt->quota[BT_Q_OUTPUT_TPM] = (struct bt_quota){1000000, BT_QS_CONFIG, "", "out"};
    }
    bt_config_finish(&c);
    struct bt_store st;
    bt_store_init(&st, 2, 1440);
    for (int r = 0; r < 2; r++)
        bt_model_event(&st, c.routes, &(struct bt_event){.t = NOW, .type = BT_EV_OK, .route = r,
                                                         .source = BT_SRC_CLOUDWATCH});
    put(&st, 0, BT_SIG_INVOCATIONS, M, 10);
    put(&st, 0, BT_SIG_INPUT_TOKENS, M, 30000);
    put(&st, 0, BT_SIG_OUTPUT_TOKENS, M, 2000);
    put(&st, 1, BT_SIG_INVOCATIONS, M, 5);
    put(&st, 1, BT_SIG_INPUT_TOKENS, M, 10000);
    put(&st, 1, BT_SIG_OUTPUT_TOKENS, M, 1000);
    struct bt_eval ev[2];
    struct bt_eval_groups *g = bt_eval_groups_new(&c);
    bt_eval_all_with(&c, &st, NOW, g, false, NULL, ev);
    struct bt_share_list l = {0};
    const struct bt_group *gr = bt_eval_group_of(g, 0);
    OK(gr->n == 2, "both projects draw from one quota");
    bt_shares_group(&c, &st, ev, gr, BT_SHARE_PROJECT, NULL, &l);
    const struct bt_share *a = find(&l, "alpha"), *b = find(&l, "beta");
    OK(a && b, "shares alpha and beta");
    if (a && b) {
        NEARF(a->used, 40000, 1e-6, "alpha: 10 calls x 4,000 reserved, the bound");
        NEARF(b->used, 15000, 1e-6, "beta: 5 x 3,000");
        NEARF(a->pct, 100.0 * 40000 / 55000, 1e-9, "alpha 72.73 %%");
        OK(a->quality == BT_QL_UPPER && b->quality == BT_QL_UPPER,
           "a share from an upper bound is an upper bound (%s)", bt_quality_name(a->quality));
    }
    bt_shares_free(&l);
    bt_eval_groups_free(g);
    bt_store_free(&st);
    bt_config_free(&c);
}

/* The same scrapes recorded and replayed: the file keeps the per-series readings
 * (gauges too), so the replay derives the same team shares in core. */
static void test_replay(void)
{
    char dir[32] = "/tmp/bt-shares-XXXXXX", path[64], err[256];
    if (!mkdtemp(dir)) {
        OK(false, "mkdtemp");
        return;
    }
    snprintf(path, sizeof path, "%s/t.rec", dir);
    struct fx f;
    fx_init(&f);
    struct bt_recorder *r = bt_recorder_open(path, &f.cfg, "live", T0, err, sizeof err);
    OK(r != NULL, "recorder opens: %s", r ? "" : err);
    if (!r) {
        fx_free(&f);
        return;
    }
    bt_recorder_attach(r, &f.st);
    struct bt_adm_state *as = bt_adm_state_new(f.cfg.nroutes);
    scrape(as, &f.cfg, &f.st, scrape1, (double)(T0 + 480));
    bt_recorder_flush(r, T0 + 481);
    scrape(as, &f.cfg, &f.st, scrape2, (double)(T0 + 540));
    bt_recorder_flush(r, T0 + 541);
    bt_adm_state_free(as);
    fx_cloudwatch(&f);
    bt_recorder_flush(r, NOW);
    bt_recorder_close(r);
    fx_free(&f);

    struct bt_replay rp;
    OK(bt_replay_open(&rp, path, NULL, NULL, err, sizeof err), "replay opens: %s", err);
    struct fx g;
    memset(&g, 0, sizeof g);
    g.cfg = rp.cfg;
    g.st = rp.store;
    bt_replay_seek(&rp, NOW);
    g.st = rp.store;
    g.g = bt_eval_groups_new(&rp.cfg);
    bt_eval_all_with(&rp.cfg, &rp.store, NOW, g.g, false, NULL, g.ev);
    check_team_shares(&g, "replay");
    bt_eval_groups_free(g.g);
    bt_replay_free(&rp);
    unlink(path);
    rmdir(dir);
}

/* serve's bound: 1,000 teams on one route, top 10 plus "other" = 11 shares. Team
 * tNNN settles NNN + 1 tokens a minute (two scrapes 60 s apart, no gauge): the top
 * ten are t999..t990; other is t000..t989, 1 + ... + 990 = 490,545 of the teams'
 * 500,500. With no gauge and no latency chat's use is the upper bound 100 calls x
 * (600 + 1,000) = 160,000, below the counters' 500,500: the teams are scaled to it,
 * other = 160,000 x 490,545 / 500,500 = 156,815.98, an upper bound. */
static void test_top_n(void)
{
    struct fx f;
    fx_init(&f);
    struct bt_adm_state *as = bt_adm_state_new(f.cfg.nroutes);
    for (int pass = 0; pass < 2; pass++) {
        struct bt_buf b = {0};
        bt_buf_puts(&b, "# TYPE bedrock_admission_settled_tokens_total counter\n");
        for (int t = 0; t < 1000; t++)
            bt_buf_printf(&b, "bedrock_admission_settled_tokens_total{route=\"chat\",team=\"t%03d\"} %d\n",
                          t, pass * (t + 1));
        scrape(as, &f.cfg, &f.st, bt_buf_str(&b), (double)(T0 + 480 + 60 * pass));
        bt_buf_free(&b);
    }
    bt_adm_state_free(as);
    fx_cloudwatch(&f);
    fx_eval(&f);
    struct bt_share_list l = {0};
    bt_shares_group(&f.cfg, &f.st, f.ev, bt_eval_group_of(f.g, 0), BT_SHARE_TEAM, NULL, &l);
    OK(l.n >= 1000, "1,000 teams read (%d shares of %d series)", l.n, bt_series_store_count(&f.st, 0));
    bt_shares_top(&l, 10);
    int named = 0;
    for (int i = 0; i < l.n; i++)
        named += strcmp(l.s[i].name, BT_SHARE_UNATTRIBUTED) != 0;
    OK(named == 11, "top 10 plus other: 11 named shares (%d)", named);
    const struct bt_share *o = find(&l, BT_SHARE_OTHER);
    OK(!strcmp(l.s[0].name, "t999"), "t999 first (%s)", l.s[0].name);
    OK(o != NULL, "an other share");
    if (o) {
        NEARF(f.ev[0].used, 160000, 1e-6, "chat's use is the bound 160,000");
        NEARF(o->used, 160000.0 * 490545 / 500500, 1e-6, "other: t000..t989 together");
        OK(o->quality == BT_QL_UPPER, "from the upper bound: an upper bound (%s)",
           bt_quality_name(o->quality));
    }
    bt_shares_free(&l);
    fx_free(&f);
}

/* ListTagsForResource answers, hostile ones included */
static void test_tags_parse(void)
{
    char v[64], err[160];
    bool found;
    const char *ok = "{\"tags\":[{\"key\":\"env\",\"value\":\"prod\"},{\"key\":\"team\",\"value\":\"search\"}]}";
    OK(bt_tags_parse(ok, strlen(ok), "team", &found, v, sizeof v, err, sizeof err) && found &&
           !strcmp(v, "search"), "team=search found among the tags");
    OK(bt_tags_parse(ok, strlen(ok), "owner", &found, v, sizeof v, err, sizeof err) && !found,
       "no owner tag: found is false, not an error");
    const char *esc = "{\"tags\":[{\"key\":\"team\",\"value\":\"a\\u001b[2Jb\"}]}";
    OK(!bt_tags_parse(esc, strlen(esc), "team", &found, v, sizeof v, err, sizeof err) && !found,
       "a value with an escape sequence is refused: %s", err);
    OK(!bt_tags_parse("[1]", 3, "team", &found, v, sizeof v, err, sizeof err), "not an object: refused");
    char big[400];
    snprintf(big, sizeof big, "{\"tags\":[{\"key\":\"team\",\"value\":\"%0200d\"}]}", 7);
    OK(!bt_tags_parse(big, strlen(big), "team", &found, v, sizeof v, err, sizeof err),
       "a value longer than the buffer is refused, never cut");
}

static void test_label(void)
{
    char v[32];
    OK(bt_series_label("route=\"a\",team=\"se\\\"x\",worker=\"1\"", "team", v, sizeof v) &&
           !strcmp(v, "se\"x"), "team label read, escapes undone");
    OK(!bt_series_label("route=\"a\"", "team", v, sizeof v), "no team label");
    OK(!bt_series_label("#0123456789abcdef", "team", v, sizeof v), "a hashed id has none");
}

/* The group view's "last hour" (core/sharesplan.c bt_shares_history): route chat's
 * group evaluated a frame a minute back from 10:10, each holder's use summed and
 * divided by the minutes whose group use was known. Four frames, by hand:
 *   10:10 (data 10:07, admission 10:09): the fixture: search 90,000, ads 35,000,
 *         unattributed 50,700; group 175,700
 *   10:09 (data 10:06: no CloudWatch, idle): chat uses its held 15,000 only, the
 *         teams' 125,000 scaled to it (x 0.12, estimates): search 10,800, ads 4,200;
 *         batch idle; group 15,000
 *   10:08 (admission 10:08, the first scrape: no rate yet, the held gauge only):
 *         search 7,000 + 1,000 = 8,000, ads 4,000; group 12,000
 *   10:07 (no admission yet, data 10:04 idle): group 0, no team told apart
 * means over 4: search (90,000 + 10,800 + 8,000) / 4 = 27,200, ads (35,000 + 4,200 +
 * 4,000) / 4 = 10,800, unattributed 50,700 / 4 = 12,675, group 202,700 / 4 = 50,675;
 * teams told apart in 3 of the 4 minutes (the view says so). */
static void test_history(void)
{
    struct fx f;
    fx_init(&f);
    struct bt_adm_state *as = bt_adm_state_new(f.cfg.nroutes);
    scrape(as, &f.cfg, &f.st, scrape1, (double)(T0 + 480));
    scrape(as, &f.cfg, &f.st, scrape2, (double)(T0 + 540));
    bt_adm_state_free(as);
    fx_cloudwatch(&f);
    struct bt_share_list h = {0};
    int known = bt_shares_history(&f.cfg, &f.st, NOW, 0, BT_SHARE_TEAM, 4, &h);
    OK(known == 4 && h.told == 3, "4 minutes known, teams told apart in 3 (%d, %d)", known, h.told);
    NEARF(h.group_used, 50675, 1e-6, "the group's mean use");
    const struct bt_share *se = find(&h, "search"), *ad = find(&h, "ads"),
                          *un = find(&h, BT_SHARE_UNATTRIBUTED);
    OK(se && ad && un, "search, ads and unattributed over the hour");
    if (se && ad && un) {
        NEARF(se->used, 27200, 1e-6, "search's mean");
        NEARF(ad->used, 10800, 1e-6, "ads' mean");
        NEARF(un->used, 12675, 1e-6, "unattributed's mean");
        OK(se->quality == BT_QL_ESTIMATE, "a minute scaled to the use makes the mean an estimate (%s)",
           bt_quality_name(se->quality));
        NEARF(se->pct + ad->pct + un->pct, 100, 1e-9, "the means sum to the group's");
    }
    bt_shares_free(&h);
    known = bt_shares_history(&f.cfg, &f.st, NOW, 0, BT_SHARE_TEAM, 1, &h);
    OK(known == 1 && h.told == 1 && (se = find(&h, "search")) && fabs(se->used - 90000) < 1e-6,
       "one minute: the shares of now");
    bt_shares_free(&h);
    fx_free(&f);
}

/* --source prometheus: serve's team shares read back (collectors/prom_collect.c), as a
 * query answer would bring them at 10:10: the fixture's group as serve exported it
 * (bedtop_share_used_tokens_per_minute{group,by="team",name}: search 90,000, ads
 * 35,000, unattributed 50,700) with chat's admission stamp 10:09 and its route sums
 * (settled 110,000, held 15,000: chat used 120,000 + 15,000 = 135,000; batch 40,700 as
 * before: group 175,700). Core takes the team shares as read (source "prometheus")
 * and the rest of the group's use, 50,700, as unattributed; hostile series are
 * skipped: a NaN or negative share, another group's, serve's own "unattributed", a
 * by="route" share; a name with a quote and a backslash comes back as it was. */
static void test_readback(void)
{
    struct fx f;
    fx_init(&f);
    fx_cloudwatch(&f);
    char key[320];
    bt_quota_group_key(&f.cfg.routes[0], key, sizeof key);
    const char *g = key[0] == '|' ? key + 1 : key;
    char text[4096];
    snprintf(text, sizeof text,
             "bedtop_data_timestamp_seconds{route=\"chat\",source=\"admission\"} %lld\n"
             "bedtop_signal{route=\"chat\",signal=\"adm_settled_tpm\"} 110000\n"
             "bedtop_signal{route=\"chat\",signal=\"adm_reserved_held\"} 15000\n"
             "bedtop_share_used_tokens_per_minute{group=\"%s\",by=\"team\",name=\"se\\\"a\\\\rch\"} 90000\n"
             "bedtop_share_used_tokens_per_minute{group=\"%s\",by=\"team\",name=\"ads\"} 35000\n"
             "bedtop_share_used_tokens_per_minute{group=\"%s\",by=\"team\",name=\"unattributed\"} 50700\n"
             "bedtop_share_used_tokens_per_minute{group=\"%s\",by=\"team\",name=\"nan\"} NaN\n"
             "bedtop_share_used_tokens_per_minute{group=\"%s\",by=\"team\",name=\"neg\"} -5\n"
             "bedtop_share_used_tokens_per_minute{group=\"%s\",by=\"route\",name=\"chat\"} 7\n"
             "bedtop_share_used_tokens_per_minute{group=\"elsewhere\",by=\"team\",name=\"x\"} 9\n",
             (long long)(T0 + 540), g, g, g, g, g, g);
    struct bt_prom_doc d;
    char err[200];
    bt_prom_init(&d);
    OK(bt_prom_parse(&d, text, strlen(text), BT_PROM_TEXT, err, sizeof err), "answer parses: %s", err);
    for (int i = 0; i < d.nseries; i++) {
        d.series[i].has_time = true;
        d.series[i].time = (double)NOW;
    }
    bt_promsrc_ingest(&d, &f.cfg, &f.st);
    bt_prom_free(&d);
    fx_eval(&f);
    NEARF(f.ev[0].used + f.ev[1].used, 175700, 1e-6, "the group's use, re-evaluated");
    struct bt_share_list l = {0};
    bt_shares_of_route(&f.cfg, &f.st, f.ev, 1, BT_SHARE_TEAM, NULL, &l);
    const struct bt_share *se = find(&l, "se\"a\\rch"), *ad = find(&l, "ads"),
                          *un = find(&l, BT_SHARE_UNATTRIBUTED);
    OK(l.n == 3 && se && ad && un, "three shares: the quoted name, ads, unattributed (%d)", l.n);
    if (se && ad && un) {
        NEARF(se->used, 90000, 1e-6, "search as serve had it");
        NEARF(ad->used, 35000, 1e-6, "ads as serve had it");
        NEARF(un->used, 50700, 1e-6, "the rest of the group's use unattributed");
        OK(!strcmp(se->source, "prometheus") && se->quality == l.group_q,
           "source prometheus, of the group use's quality (%s)", bt_quality_name(se->quality));
    }
    /* by route: derived again here, chat and batch (serve's by="route" 7 not read) */
    bt_shares_of_route(&f.cfg, &f.st, f.ev, 0, BT_SHARE_ROUTE, NULL, &l);
    const struct bt_share *ch = find(&l, "chat");
    OK(ch && fabs(ch->used - 135000) < 1e-6, "by route: chat 135,000, derived");
    bt_shares_free(&l);
    char id[BT_SERIES_ID], big[300];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    OK(!bt_share_readback_id(BT_SHARE_TEAM, big, id, sizeof id), "a name too long for a series id is refused");
    fx_free(&f);
}

/* The incident's holders minute by minute: the stacked lines and the shares of a
 * minute are core's (render/inc_holders.c prints them). */
static void test_share_minutes_at(void)
{
    double v[] = {300, 0, 20,   /* search */
                  100, 0, NAN,  /* ads */
                  0, 0, 60};    /* unattributed */
    struct bt_share_minutes sm = {.by = BT_SHARE_TEAM, .n = 3, .nh = 3, .v = v};
    bt_strlcpy(sm.name[0], "search", sizeof sm.name[0]);
    bt_strlcpy(sm.name[1], "ads", sizeof sm.name[0]);
    bt_strlcpy(sm.name[2], BT_SHARE_UNATTRIBUTED, sizeof sm.name[0]);
    struct bt_share at[BT_SHARE_MINUTES_TOP + 2];
    NEAR(bt_share_minutes_at(&sm, 0, at), 400, 0, "minute 0: the holders used 400 together");
    NEAR(at[0].pct, 75, 1e-9, "search held 75 percent");
    NEAR(at[1].pct, 25, 1e-9, "ads 25 percent");
    NEAR(at[2].pct, 0, 0, "unattributed 0 percent of a known use");
    OK(!strcmp(at[1].name, "ads") && at[1].quality == BT_QL_KNOWN, "the holders keep their order");
    NEAR(bt_share_minutes_at(&sm, 1, at), 0, 0, "minute 1: nobody used any");
    OK(isnan(at[0].pct) && at[0].used == 0, "... so no share, not 0 percent");
    NEAR(bt_share_minutes_at(&sm, 2, at), 80, 0, "minute 2: the known holders' sum");
    OK(isnan(at[1].used) && isnan(at[1].pct) && at[1].quality == BT_QL_UNKNOWN,
       "ads unknown: its use and its share unknown");
    NEAR(at[2].pct, 75, 1e-9, "unattributed 60 of 80");
    NEAR(bt_share_minutes_stacked(&sm, 0, 0), 300, 0, "stacked: the first line is search");
    NEAR(bt_share_minutes_stacked(&sm, 2, 0), 400, 0, "the top line is the group's use");
    NEAR(bt_share_minutes_stacked(&sm, 0, 2), 20, 0, "below an unknown holder: known");
    OK(isnan(bt_share_minutes_stacked(&sm, 1, 2)) && isnan(bt_share_minutes_stacked(&sm, 2, 2)),
       "from an unknown holder up: unknown");
}

int main(void)
{
    test_label();
    test_tags_parse();
    test_teams();
    test_projects();
    test_replay();
    test_top_n();
    test_history();
    test_readback();
    test_share_minutes_at();
    return tap_done();
}
