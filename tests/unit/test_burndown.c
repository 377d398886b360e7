/* The burndown table as AWS publishes it today (data/burndown.conf, read from
 * "How tokens are counted in Amazon Bedrock", 2026-12-01; DOMAIN.md "Burndown"):
 * 15 for Claude 4.8, 10 for Claude Opus 5 / Opus 5.5 / Sonnet 5 / Fable 5.1 and for
 * GPT-5.6 Sol / Terra / Luna (dotted IDs) on bedrock-runtime only, 5 for every other
 * Anthropic model of version 4.7 and below (Claude 3 included), the family floor 5
 * (unverified) for unlisted Anthropic models, 1 otherwise; rows scoped to an
 * endpoint; the row used is named; a steady measurement wins over the table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/burndown.h"
#include "core/config.h"
#include "core/model.h"
#include "core/util.h"
#include "io/conffile.h"
#include "tests/tap.h"

static void test_installed_table(void)
{
    char path[1024], err[256] = "";
    snprintf(path, sizeof path, "%s/data/burndown.conf", tap_srcdir());
    struct bt_burndown b = {0};
    OK(bt_burndown_load_file(&b, path, err, sizeof err), "data/burndown.conf loads (%s)", err);
    static const struct {
        const char *id;
        int endpoint;
        double want;
    } cases[] = {
        /* 15: Claude models version 4.8 */
        {"anthropic.claude-opus-4-8", BT_EP_RUNTIME, 15},
        {"us.anthropic.claude-opus-4-8-20261015-v1:0", BT_EP_RUNTIME, 15},
        {"global.anthropic.claude-sonnet-4-8-v1:0", BT_EP_RUNTIME, 15},
        /* 10: the fifth generation and GPT-5.6 on runtime */
        {"anthropic.claude-opus-5", BT_EP_RUNTIME, 10},
        {"us.anthropic.claude-opus-5-5-v1:0", BT_EP_RUNTIME, 10},
        {"anthropic.claude-sonnet-5-v1:0", BT_EP_RUNTIME, 10},
        {"anthropic.claude-sonnet-5-20260301-v1:0", BT_EP_RUNTIME, 10},
        {"in.anthropic.claude-sonnet-5", BT_EP_RUNTIME, 10},
        {"eu.anthropic.claude-fable-5-1", BT_EP_RUNTIME, 10},
        /* GPT-5.6's real IDs carry a dot (the dashed spelling matched before and
         * never occurs) */
        {"openai.gpt-5.6-sol", BT_EP_RUNTIME, 10},
        {"us.openai.gpt-5.6-terra", BT_EP_RUNTIME, 10},
        {"global.openai.gpt-5.6-luna", BT_EP_RUNTIME, 10},
        {"openai.gpt-5.6-terra-v1:0", BT_EP_RUNTIME, 10},
        /* GPT-5.6 on mantle: the runtime-only rows do not apply, the catch-all does */
        {"openai.gpt-5.6-luna", BT_EP_MANTLE, 1},
        /* 5: every other Anthropic model of version 4.7 and below */
        {"anthropic.claude-opus-4-7", BT_EP_RUNTIME, 5},
        {"anthropic.claude-sonnet-4-5-20250929-v1:0", BT_EP_RUNTIME, 5},
        {"anthropic.claude-sonnet-4-20250514-v1:0", BT_EP_RUNTIME, 5},
        {"us.anthropic.claude-haiku-4-5-20251001-v1:0", BT_EP_RUNTIME, 5},
        {"anthropic.claude-opus-4-1-20250805-v1:0", BT_EP_RUNTIME, 5},
        {"us.anthropic.claude-3-7-sonnet-20250219-v1:0", BT_EP_RUNTIME, 5},
        {"anthropic.claude-3-5-haiku-20241022-v1:0", BT_EP_RUNTIME, 5},
        {"anthropic.claude-3-5-sonnet-20240620-v1:0", BT_EP_RUNTIME, 5},
        {"anthropic.claude-3-haiku-20240307-v1:0", BT_EP_RUNTIME, 5},
        {"anthropic.claude-3-opus-20240229-v1:0", BT_EP_RUNTIME, 5},
        /* 1: everything else */
        {"amazon.nova-pro-v1:0", BT_EP_RUNTIME, 1},
        {"openai.gpt-oss-120b-1:0", BT_EP_RUNTIME, 1},
    };
    for (size_t i = 0; i < BT_ARRAY_LEN(cases); i++) {
        const struct bt_burndown_rule *r = bt_burndown_find(&b, cases[i].id, cases[i].endpoint);
        double got = r ? r->factor : 1;
        OK(got == cases[i].want, "%s on %s: burndown %g (got %g from %s)", cases[i].id,
           bt_endpoint_name((enum bt_endpoint)cases[i].endpoint), cases[i].want, got,
           r ? r->origin : "no row");
    }
    /* the row used is named, so BURNDOWN_MISMATCH can say which */
    struct bt_route rt;
    memset(&rt, 0, sizeof rt);
    bt_strlcpy(rt.model, "us.anthropic.claude-opus-4-8", sizeof rt.model);
    bt_route_burndown(&rt, &b);
    OK(rt.burndown == 15 && !strcmp(rt.burndown_source, "table") &&
           strstr(rt.burndown_row, "burndown.conf:") && strstr(rt.burndown_row, "= 15"),
       "a route names its row: %s", rt.burndown_row);
    bt_strlcpy(rt.model, "openai.gpt-5.6-sol", sizeof rt.model);
    bt_route_burndown(&rt, &b);
    OK(rt.burndown == 10 && strstr(rt.burndown_row, "(runtime)"),
       "a runtime-scoped row says so: %s", rt.burndown_row);
    bt_strlcpy(rt.model, "amazon.nova-pro-v1:0", sizeof rt.model);
    bt_route_burndown(&rt, &b);
    OK(rt.burndown == 1 && !strcmp(rt.burndown_source, "default") && !rt.burndown_verified,
       "the catch-all row is a default, not a table entry, and unverified");
    /* models launched after the page's last revision: no published rate, no row that
     * pretends; an Anthropic one falls to the family floor 5, unverified */
    static const char *const unlisted[] = {
        "anthropic.claude-haiku-5-5", "us.anthropic.claude-sonnet-5-5-v1:0",
        "anthropic.claude-fable-5", "anthropic.claude-fable-5-20260301-v1:0",
        "global.anthropic.claude-fable-5-2", "anthropic.claude-mythos-5",
    };
    for (size_t i = 0; i < BT_ARRAY_LEN(unlisted); i++) {
        memset(&rt, 0, sizeof rt);
        bt_strlcpy(rt.model, unlisted[i], sizeof rt.model);
        bt_route_burndown(&rt, &b);
        OK(rt.burndown == 5 && !strcmp(rt.burndown_source, "family") && !rt.burndown_verified &&
               strstr(rt.burndown_row, "family floor"),
           "%s: unlisted, the Anthropic family floor 5 unverified (got %g %s, %s)", unlisted[i],
           rt.burndown, rt.burndown_source, rt.burndown_row);
    }
    memset(&rt, 0, sizeof rt);
    bt_strlcpy(rt.model, "us.anthropic.claude-3-haiku-20240307-v1:0", sizeof rt.model);
    bt_route_burndown(&rt, &b);
    OK(rt.burndown == 5 && !strcmp(rt.burndown_source, "table") && rt.burndown_verified,
       "Claude 3 Haiku: 5 from a table row, verified (%s)", rt.burndown_row);
    bt_burndown_free(&b);
}

/* The steady measurement and which value wins (DESIGN.md "The catalogue is a
 * prior"): a store with minutes of EstimatedTPMQuotaUsage. */
static const int64_t T0 = 1795946400; /* 2026-11-29 10:00:00 UTC */

static void put(struct bt_store *st, int64_t t, enum bt_signal sig, double v)
{
    struct bt_sample smp = {.t = t, .route = 0, .signal = sig, .value = v};
    bt_store_add(st, &smp, t + 120);
}

/* n minutes from T0: input 20,000, cache write 1,000, output 2,000 a minute, and an
 * estimate of input + cache write + output x burndown[i] */
static void minutes(struct bt_store *st, int n, const double *burndown)
{
    for (int i = 0; i < n; i++) {
        int64_t t = T0 + 60 * i;
        put(st, t, BT_SIG_INPUT_TOKENS, 20000);
        put(st, t, BT_SIG_CACHE_WRITE, 1000);
        put(st, t, BT_SIG_OUTPUT_TOKENS, 2000);
        put(st, t, BT_SIG_ESTIMATED_TPM, 21000 + 2000 * burndown[i]);
    }
}

static void route_of(struct bt_route *rt, const char *model, const struct bt_burndown *b)
{
    bt_route_defaults(rt);
    bt_strlcpy(rt->model, model, sizeof rt->model);
    bt_route_burndown(rt, b);
}

static void test_measured(void)
{
    char path[1024], err[256] = "";
    snprintf(path, sizeof path, "%s/data/burndown.conf", tap_srcdir());
    struct bt_burndown b = {0};
    OK(bt_burndown_load_file(&b, path, err, sizeof err), "data/burndown.conf loads (%s)", err);
    struct bt_store st;
    struct bt_route rt;
    const int64_t through = T0 + 6 * 60 + 30; /* 10:06:30: minutes 10:00..10:05 have ended */
    static const double ten[6] = {10, 10, 10, 10, 10, 10};

    /* an unlisted anthropic.claude-haiku-5-5 whose estimate measures 10 a minute:
     * (21,000 + 2,000 x 10 - 20,000 - 1,000) / 2,000 = 10 over 6 minutes, spread 0 */
    bt_store_init(&st, 1, 1440);
    minutes(&st, 6, ten);
    route_of(&rt, "anthropic.claude-haiku-5-5", &b);
    bt_route_burndown_settle(&rt, &st, 0, through);
    OK(rt.burndown == 10 && !strcmp(rt.burndown_source, "measured") && rt.burndown_verified &&
           rt.burndown_steady_minutes == 6 && !strcmp(rt.burndown_prior_source, "family"),
       "haiku 5.5 with an estimate: 10 measured, verified, over 6 minutes (got %g %s, %d)",
       rt.burndown, rt.burndown_source, rt.burndown_steady_minutes);
    /* the same route a poll earlier (10:04:30: four minutes) is not yet steady */
    route_of(&rt, "anthropic.claude-haiku-5-5", &b);
    bt_route_burndown_settle(&rt, &st, 0, T0 + 4 * 60 + 30);
    OK(rt.burndown == 5 && !strcmp(rt.burndown_source, "family") && !rt.burndown_verified &&
           rt.burndown_steady_minutes == 4,
       "four minutes are not enough: the family floor 5 stands (got %g %s)", rt.burndown,
       rt.burndown_source);
    bt_store_free(&st);

    /* without an estimate: 5, family, unverified */
    bt_store_init(&st, 1, 1440);
    for (int i = 0; i < 6; i++)
        put(&st, T0 + 60 * i, BT_SIG_OUTPUT_TOKENS, 2000);
    route_of(&rt, "anthropic.claude-haiku-5-5", &b);
    bt_route_burndown_settle(&rt, &st, 0, through);
    OK(rt.burndown == 5 && !strcmp(rt.burndown_source, "family") && !rt.burndown_verified,
       "haiku 5.5 without an estimate: 5 family, unverified (got %g %s)", rt.burndown,
       rt.burndown_source);
    bt_store_free(&st);

    /* a spread measurement is not steady: 8, 10, 12, ... spread (12 - 8) / 10 = 40 % */
    static const double noisy[6] = {8, 12, 10, 8, 12, 10};
    bt_store_init(&st, 1, 1440);
    minutes(&st, 6, noisy);
    route_of(&rt, "anthropic.claude-haiku-5-5", &b);
    bt_route_burndown_settle(&rt, &st, 0, through);
    OK(rt.burndown == 5 && !strcmp(rt.burndown_source, "family"),
       "a spread of 40 %% is not steady: the floor stands (got %g %s)", rt.burndown,
       rt.burndown_source);
    bt_store_free(&st);

    /* a table row that the measurement contradicts loses: Claude 3 Haiku (5) measured
     * at 10 is used at 10, measured; one that agrees stays exact (table, verified) */
    bt_store_init(&st, 1, 1440);
    minutes(&st, 6, ten);
    route_of(&rt, "anthropic.claude-3-haiku-20240307-v1:0", &b);
    bt_route_burndown_settle(&rt, &st, 0, through);
    OK(rt.burndown == 10 && !strcmp(rt.burndown_source, "measured") && rt.burndown_prior == 5 &&
           strstr(rt.burndown_row, "anthropic.claude-3* = 5"),
       "a steady 10 wins over the table's 5, which is still named (%s)", rt.burndown_row);
    route_of(&rt, "us.anthropic.claude-sonnet-5", &b);
    bt_route_burndown_settle(&rt, &st, 0, through);
    OK(rt.burndown == 10 && !strcmp(rt.burndown_source, "table") && rt.burndown_verified,
       "a measurement that agrees keeps the table row (got %g %s)", rt.burndown, rt.burndown_source);
    /* the config always wins, verified only when the measurement agrees */
    route_of(&rt, "anthropic.claude-3-haiku-20240307-v1:0", &b);
    rt.burndown = 5;
    rt.burndown_source = "config";
    bt_route_burndown(&rt, &b);
    bt_route_burndown_settle(&rt, &st, 0, through);
    OK(rt.burndown == 5 && !strcmp(rt.burndown_source, "config") && !rt.burndown_verified,
       "the config's 5 wins over a steady 10, unverified (got %g %s)", rt.burndown,
       rt.burndown_source);
    bt_store_free(&st);
    bt_burndown_free(&b);
}

static void test_scoped_rows(void)
{
    struct bt_burndown b = {0};
    char err[256] = "";
    OK(bt_burndown_parse(&b, "* = 1\nacme.x* = 7 endpoint=runtime\nacme.x* = 3  endpoint=mantle ; c\n",
                         "b.conf", err, sizeof err) && b.n == 3,
       "rows with endpoint scopes parse (%s)", err);
    const struct bt_burndown_rule *r = bt_burndown_find(&b, "acme.x1", BT_EP_RUNTIME);
    OK(r && r->factor == 7 && !strcmp(r->origin, "b.conf:2"), "runtime row for runtime (%s)",
       r ? r->origin : "none");
    r = bt_burndown_find(&b, "acme.x1", BT_EP_MANTLE);
    OK(r && r->factor == 3 && !strcmp(r->origin, "b.conf:3"), "mantle row for mantle");
    bt_burndown_free(&b);
    OK(!bt_burndown_parse(&b, "acme.* = 7 endpoint=sideways\n", "b.conf", err, sizeof err) &&
           strstr(err, "b.conf:1: bad burndown row"),
       "an unknown endpoint scope is refused with file:line (%s)", err);
    bt_burndown_free(&b);
    OK(!bt_burndown_parse(&b, "acme.* = 7 runtime\n", "b.conf", err, sizeof err),
       "a scope without endpoint= is refused");
    bt_burndown_free(&b);
}

/* A seek (bt_store_set_horizon, core/model.c) measures each route's steady burndown
 * once, from its newest CloudWatch poll, and not at every poll it passes (issue 38: a
 * backward seek of a 24 h recording re-measured every poll of the day, 41 ms). It must
 * leave what measuring at every poll left: each poll sees the minutes that had arrived
 * by it, and a setting between two polls comes after the first and before the second. */
static void test_seek_settles_once(void)
{
    char path[1024], err[256] = "";
    snprintf(path, sizeof path, "%s/data/burndown.conf", tap_srcdir());
    struct bt_burndown b = {0};
    OK(bt_burndown_load_file(&b, path, err, sizeof err), "data/burndown.conf loads (%s)", err);
    struct bt_store st;
    bt_store_init(&st, 1, 1440);
    bt_store_track_arrival(&st);
    static const double ten[6] = {10, 10, 10, 10, 10, 10};
    minutes(&st, 6, ten); /* 10:00..10:05, each arrived 2 minutes after its minute */
    struct bt_route base, rt;
    route_of(&base, "anthropic.claude-haiku-5-5", &b); /* the family floor 5 */
    rt = base;
    struct bt_event ok = {.type = BT_EV_OK, .route = -1, .source = BT_SRC_CLOUDWATCH};
    ok.t = T0 + 4 * 60 + 30; /* 10:04:30: minutes 10:00..10:02 have arrived */
    bt_store_event(&st, &ok);
    /* 10:05:40: an event after it (a quota), by which four minutes had arrived */
    struct bt_event quota = {.t = T0 + 5 * 60 + 40, .type = BT_EV_QUOTA, .route = 0,
                             .source = BT_SRC_QUOTAS, .quota_kind = BT_Q_TPM, .value = 1e6,
                             .quota_source = BT_QS_SERVICE_QUOTAS};
    bt_store_event(&st, &quota);
    ok.t = T0 + 8 * 60 + 30; /* 10:08:30: all six */
    bt_store_event(&st, &ok);
    /* 10:09: a table row of 7 learned at run time */
    struct bt_event set = {.t = T0 + 9 * 60, .type = BT_EV_SETTING, .route = 0,
                           .source = BT_SRC_CLOUDWATCH, .setting = BT_SET_BURNDOWN, .value = 7};
    bt_strlcpy(set.str, "table", sizeof set.str);
    bt_store_event(&st, &set);
    ok.t = T0 + 10 * 60 + 30; /* 10:10:30: the steady 10 contradicts the row's 7 */
    bt_store_event(&st, &ok);

    for (int pass = 0; pass < 2; pass++) { /* forward, then each seek backward (a rebuild) */
        static const int64_t fwd[] = {6 * 60, 9 * 60 + 30, 11 * 60},
                             back[] = {11 * 60, 9 * 60 + 30, 6 * 60};
        const int64_t *at = pass ? back : fwd;
        for (int i = 0; i < 3; i++) {
            bt_store_set_horizon(&st, &rt, &base, T0 + at[i]);
            int64_t m = at[i];
            if (m == 6 * 60)
                /* 10:06: the 10:04:30 poll's three arrived minutes, not the four that
                 * had arrived by the quota event after it: not steady, the floor stands */
                OK(rt.burndown == 5 && !strcmp(rt.burndown_source, "family") &&
                       rt.burndown_steady_minutes == 3,
                   "%s to 10:06: the 10:04:30 poll measured 3 minutes, floor 5 (%g %s, %d)",
                   pass ? "back" : "forward", rt.burndown, rt.burndown_source,
                   rt.burndown_steady_minutes);
            else if (m == 9 * 60 + 30)
                /* 10:09:30: 10:08:30 measured 10 over 6 minutes, then the 10:09 row set
                 * 7 (table, verified): measured first, the setting after it */
                OK(rt.burndown == 7 && !strcmp(rt.burndown_source, "table") && rt.burndown_verified &&
                       rt.burndown_steady == 10 && rt.burndown_steady_minutes == 6,
                   "%s to 10:09:30: steady 10 measured, then the row's 7 (%g %s, steady %g/%d)",
                   pass ? "back" : "forward", rt.burndown, rt.burndown_source,
                   rt.burndown_steady, rt.burndown_steady_minutes);
            else
                /* 10:11: the 10:10:30 poll's steady 10 contradicts the row: measured */
                OK(rt.burndown == 10 && !strcmp(rt.burndown_source, "measured"),
                   "%s to 10:11: the 10:10:30 poll's steady 10 wins over the row (%g %s)",
                   pass ? "back" : "forward", rt.burndown, rt.burndown_source);
        }
    }
    bt_store_free(&st);
    bt_burndown_free(&b);
}

int main(void)
{
    test_installed_table();
    test_scoped_rows();
    test_measured();
    test_seek_settles_once();
    return tap_done();
}
