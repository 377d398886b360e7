/* The figure table (core/figures.c): every writer's order is a run 1..n with no gap
 * and no place twice, every name a writer prints is unique in it, and the side and
 * reader of each figure are the evaluation's (one side per number, issue 34). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/figures.h"
#include "core/headroom.h"
#include "tests/tap.h"

static void orders(void)
{
    static const struct {
        enum bt_fig_writer w;
        const char *name;
        int n;
    } ws[] = {
        /* tpm: settled estimated held used reserved_per_min group_used;
         * headroom run: reservation_per_call in_flight headroom_tpm headroom_pct fits_more;
         * CSV: settled held reserved used quota headroom_tpm headroom_pct fits_more;
         * series: headroom ratio used held in_flight reservation reserved group_used fits */
        {BT_FW_JSON_TPM, "json tpm", 6},
        {BT_FW_JSON_HEADROOM, "json headroom", 5},
        /* invocations_per_min throttles_per_min; latency_ms: p50 p99 */
        {BT_FW_JSON_CALLS, "json calls", 2},
        {BT_FW_JSON_LATENCY, "json latency", 2},
        {BT_FW_CSV, "csv", 9},
        {BT_FW_PROM, "prom", 9},
        /* check's text: QUOTA SETTLD ESTIM HELD HEAD% FITS THR/M P99; --wide adds INFL */
        {BT_FW_TEXT, "text", 8},
        {BT_FW_TEXT_WIDE, "text wide", 9},
        /* plan: reservation per call, in flight, held, used, headroom %, fits */
        {BT_FW_PLAN, "plan", 6},
        /* concurrency_limit tokens_today tokens_today_group */
        {BT_FW_JSON_TODAY, "json today", 3},
        /* max_tokens burndown (then burndown_source) burndown_measured */
        {BT_FW_JSON_BURNDOWN, "json burndown", 3},
        /* tiers: reserved_share reserved_invocations reserved_input_tokens
         * reserved_output_tokens */
        {BT_FW_JSON_TIERS, "json tiers", 4},
    };
    for (size_t k = 0; k < sizeof ws / sizeof ws[0]; k++) {
        enum bt_fig_id ids[BT_FIG_COUNT];
        int n = bt_figures_of(ws[k].w, ids);
        OK(n == ws[k].n, "%s: %d figures (want %d)", ws[k].name, n, ws[k].n);
        /* a place taken twice would list a figure twice or drop one: count the ids */
        int seen[BT_FIG_COUNT] = {0};
        for (int i = 0; i < n; i++)
            seen[ids[i]]++;
        bool once = true;
        for (int i = 0; i < BT_FIG_COUNT; i++)
            once &= seen[i] <= 1;
        OK(once, "%s: each figure once", ws[k].name);
    }
    enum bt_fig_id ids[BT_FIG_COUNT];
    int n = bt_figures_of(BT_FW_CSV, ids);
    OK(n > 1 && ids[0] == BT_FIG_SETTLED && ids[n - 2] == BT_FIG_FITS &&
           ids[n - 1] == BT_FIG_USD_PER_HOUR,
       "csv: settled_tpm first, fits_more then usd_per_hour last (export's columns)");
    n = bt_figures_of(BT_FW_PROM, ids);
    OK(n > 0 && ids[0] == BT_FIG_HEADROOM_TPM && ids[1] == BT_FIG_HEADROOM_PCT,
       "prom: the headroom families first, as the exposition always listed them");
}

static void names(void)
{
    bool unique = true, complete = true;
    for (int a = 0; a < BT_FIG_COUNT; a++) {
        const struct bt_figure *f = &bt_figures[a];
        complete &= f->name && f->unit && f->value;
        complete &= !f->json_in || f->json;
        complete &= !f->csv_at || f->csv;
        complete &= !f->prom_at || (f->prom && f->prom_help && f->prom_scale > 0);
        complete &= !(f->json_quality || f->json_upper) || f->quality;
        complete &= !(f->json_source || f->csv_source || f->prom_source) || f->source;
        complete &= !f->text_at || (f->text_head && f->text_w > 0);
        complete &= !f->wide_at || (f->wide_head && f->wide_w > 0);
        complete &= !f->plan_at || (f->plan_label && f->json);
        complete &= !f->plan_source || (f->json_source && f->source);
        complete &= !f->plan_quality || (f->json_quality && f->quality);
        for (int b = a + 1; b < BT_FIG_COUNT; b++) {
            const struct bt_figure *g = &bt_figures[b];
            if (f->json && g->json && f->json_in == g->json_in && !strcmp(f->json, g->json))
                unique = false;
            if (f->csv && g->csv && !strcmp(f->csv, g->csv))
                unique = false;
            if (f->prom && g->prom && !strcmp(f->prom, g->prom))
                unique = false;
        }
    }
    OK(complete, "every row names what its writers print and has the readers they call");
    OK(unique, "no JSON key, CSV column or series twice");
}

static void sides(void)
{
    /* legacy at the demo's minute 16: the rpm side binds (16 of 95 left, 16.8 %), the
     * token side is tpm (805,502 of 1,000,000) */
    struct bt_eval e;
    memset(&e, 0, sizeof e);
    e.token_side = BT_SIDE_TPM;
    e.binding = BT_SIDE_RPM;
    e.headroom_tpm = 805502;
    e.headroom_pct = 100.0 * 16 / 95;
    e.fits_more = 16;
    e.quota = 1000000;
    OK(bt_figure_side(&bt_figures[BT_FIG_HEADROOM_TPM], &e) == BT_SIDE_TPM,
       "headroom_tpm is the token side's");
    OK(bt_figure_side(&bt_figures[BT_FIG_HEADROOM_PCT], &e) == BT_SIDE_RPM,
       "headroom_pct is the binding side's");
    OK(bt_figure_side(&bt_figures[BT_FIG_FITS], &e) == BT_SIDE_RPM,
       "fits_more is the binding side's");
    OK(bt_figure_side(&bt_figures[BT_FIG_QUOTA], &e) == BT_SIDE_TPM, "quota_tpm the token side's");
    OK(bt_figure_side(&bt_figures[BT_FIG_IN_FLIGHT], &e) == BT_SIDE_COUNT,
       "calls in flight are of no one side");
    NEAR(bt_figure_value(&bt_figures[BT_FIG_HEADROOM_PCT], &e) / bt_figures[BT_FIG_HEADROOM_PCT].prom_scale,
         0.168421052631579, 1e-12, "the ratio series: 16/95");
    NEAR(bt_figure_value(&bt_figures[BT_FIG_HEADROOM_TPM], &e), 805502, 0, "headroom tokens");
    /* mantle: the token side is the binding input or output side */
    e.token_side = e.binding = BT_SIDE_OUTPUT;
    OK(bt_figure_side(&bt_figures[BT_FIG_USED], &e) == BT_SIDE_OUTPUT,
       "a mantle route's used is its binding token side's");
    STREQ(bt_side_fits_word(BT_SIDE_TPM), "in flight", "tpm: more calls in flight at once");
    STREQ(bt_side_fits_word(BT_SIDE_RPM), "calls this minute", "rpm: more requests this minute");
    STREQ(bt_side_fits_word(BT_SIDE_DAILY), "calls today", "daily: more calls today");
    STREQ(bt_side_fits_word(BT_SIDE_DAILY_ACCOUNT), "calls today", "cross-model daily: today");
    STREQ(bt_side_fits_word(BT_SIDE_CONCURRENT), "in flight", "concurrent: in flight");
}

/* check's text cells (render/report_text.c iterates them): one formatter per figure,
 * the quality marks a bound, in flight is counted out of the limit, a mantle route's
 * throttles are not published (n/p, never 0). */
static void text(void)
{
    struct bt_eval e;
    memset(&e, 0, sizeof e);
    e.headroom_pct = 41.04;
    e.headroom_q = BT_QL_UPPER;
    e.in_flight = 30;
    e.conc_limit = 50;
    e.throttles = 0;
    e.quota = 2000000;
    char v[40];
    STREQ(bt_figure_text(&bt_figures[BT_FIG_HEADROOM_PCT], &e, v, sizeof v), "<41.0",
          "headroom at most 41.0 %");
    STREQ(bt_figure_text(&bt_figures[BT_FIG_IN_FLIGHT], &e, v, sizeof v), "30/50",
          "30 in flight of a limit of 50");
    e.conc_limit = NAN;
    STREQ(bt_figure_text(&bt_figures[BT_FIG_IN_FLIGHT], &e, v, sizeof v), "30", "no limit: 30");
    STREQ(bt_figure_text(&bt_figures[BT_FIG_QUOTA], &e, v, sizeof v), "2.00M", "quota 2.00M");
    STREQ(bt_figure_text(&bt_figures[BT_FIG_THROTTLES], &e, v, sizeof v), "0", "runtime: 0 throttles");
    e.mantle = true;
    e.throttles = NAN;
    STREQ(bt_figure_text(&bt_figures[BT_FIG_THROTTLES], &e, v, sizeof v), "n/p",
          "mantle: throttles not published");
    enum bt_fig_id ids[BT_FIG_COUNT];
    int n = bt_figures_of(BT_FW_TEXT_WIDE, ids);
    OK(n == 9 && ids[0] == BT_FIG_QUOTA && bt_figures[ids[0]].wide_source_head &&
           ids[n - 1] == BT_FIG_IN_FLIGHT,
       "--wide: QUOTA (then its SOURCE) first, INFL last");
}

/* The views' accessors read what the row reads: a value, the row's quality or
 * KNOWN where it has none, the row's source or the caller's word for none. */
static void accessors(void)
{
    struct bt_eval e;
    memset(&e, 0, sizeof e);
    e.used = 1234;
    e.used_q = BT_QL_UPPER;
    e.settled = NAN;
    e.held_source = NULL;
    e.reservation_source = "admission";
    OK(bt_fig(&e, BT_FIG_USED) == 1234 && isnan(bt_fig(&e, BT_FIG_SETTLED)),
       "bt_fig: the row's value, NAN unknown");
    OK(bt_fig_quality(&e, BT_FIG_USED) == BT_QL_UPPER &&
           bt_fig_quality(&e, BT_FIG_SETTLED) == BT_QL_KNOWN,
       "bt_fig_quality: the row's quality, known where the row has none");
    OK(!strcmp(bt_fig_source(&e, BT_FIG_RESERVATION, "-"), "admission") &&
           !strcmp(bt_fig_source(&e, BT_FIG_HELD, "-"), "-") &&
           !strcmp(bt_fig_source(&e, BT_FIG_SETTLED, "none"), "none"),
       "bt_fig_source: the row's source, the caller's word where none is set or the row has none");
}

/* The output allowance run: a mantle route (burndown source "none") has no burndown,
 * null in the JSON whatever the table's value; a route without a source says
 * "default"; the JSON's order is max_tokens, burndown, burndown_measured. */
static void burndown_rows(void)
{
    struct bt_eval e;
    memset(&e, 0, sizeof e);
    e.max_tokens = 4096;
    e.burndown = 5;
    e.burndown_measured = 4.98;
    e.burndown_source = "table";
    OK(bt_fig(&e, BT_FIG_BURNDOWN) == 5 && !strcmp(bt_fig_source(&e, BT_FIG_BURNDOWN, "-"),
                                                   "table"),
       "burndown 5 from the table");
    e.burndown_source = NULL;
    STREQ(bt_fig_source(&e, BT_FIG_BURNDOWN, "-"), "default", "no source set: default");
    e.mantle = true;
    e.burndown_source = "none";
    OK(isnan(bt_fig(&e, BT_FIG_BURNDOWN)), "mantle: no burndown (null), not the table's 5");
    NEAR(bt_fig(&e, BT_FIG_BURNDOWN_MEASURED), 4.98, 0, "the measured one still shown");
    enum bt_fig_id ids[BT_FIG_COUNT];
    int n = bt_figures_of(BT_FW_JSON_BURNDOWN, ids);
    OK(n == 3 && ids[0] == BT_FIG_MAX_TOKENS && ids[1] == BT_FIG_BURNDOWN &&
           ids[2] == BT_FIG_BURNDOWN_MEASURED && bt_figures[BT_FIG_BURNDOWN].decimals == 2,
       "max_tokens, burndown (two decimals), burndown_measured");
    n = bt_figures_of(BT_FW_JSON_TIERS, ids);
    OK(n == 4 && ids[0] == BT_FIG_TIER_SHARE && ids[3] == BT_FIG_TIER_OUTPUT,
       "tiers: reserved_share first, reserved_output_tokens last");
}

/* The group object (struct bt_group_fig) as a member reads it: a quota group of four
 * whose unknown members are routes 1 and 3 (two, in config order), and the daily
 * groups' figures. Route 1, itself unknown, has one unknown other (3); route 2,
 * known, has two, the first of them 1. The daily side nearest to running out is the
 * account's: its quota 100,000,000, its group's day 40,000,000 and its group's rate
 * 1,000 a minute (the model's group's 200 is not it); with none applying, each is
 * NAN. */
static void group_reads(void)
{
    static struct bt_eval e; /* three pages: not on the stack */
    memset(&e, 0, sizeof e);
    e.group = (struct bt_group_fig){.leader = 0, .n = 4, .nunknown = 2, .unknown = {1, 3}};
    e.route = 1;
    e.state = BT_FR_UNKNOWN;
    OK(bt_eval_nshared(&e) == 3 && bt_eval_use_unknown(&e) && bt_eval_nunknown_others(&e) == 1 &&
           bt_eval_unknown_other(&e) == 3,
       "an unknown member: three others, one of them unknown, route 3 (%d, %d)",
       bt_eval_nunknown_others(&e), bt_eval_unknown_other(&e));
    e.route = 2;
    e.state = BT_FR_ACTIVE;
    e.side[BT_SIDE_TPM].used_q = BT_QL_KNOWN;
    OK(!bt_eval_use_unknown(&e) && bt_eval_nunknown_others(&e) == 2 && bt_eval_unknown_other(&e) == 1,
       "a known member: two unknown others, the first route 1 (%d, %d)",
       bt_eval_nunknown_others(&e), bt_eval_unknown_other(&e));
    e.group.nunknown = 0;
    OK(bt_eval_nunknown_others(&e) == 0 && bt_eval_unknown_other(&e) == -1, "none unknown: -1");
    e.token_side = BT_SIDE_TPM;
    e.side[BT_SIDE_TPM].group_used = 154000;
    e.side[BT_SIDE_TPM].group_q = BT_QL_LOWER;
    OK(bt_eval_group_used(&e) == 154000 && bt_eval_group_used_q(&e) == BT_QL_LOWER,
       "the group's use is its token side's");
    e.side[BT_SIDE_DAILY_ACCOUNT].quota = 1e8;
    e.side[BT_SIDE_DAILY_ACCOUNT].group_used = 4e7;
    e.day[0].rate = 200;
    e.day[1].rate = 1000;
    e.daily = BT_SIDE_DAILY_ACCOUNT;
    OK(bt_eval_tpd(&e) == 1e8 && bt_eval_group_today(&e) == 4e7 && bt_eval_daily_rate(&e) == 1000 &&
           bt_eval_day_group(&e, BT_SIDE_DAILY) == &e.day[0] && !bt_eval_day_group(&e, BT_SIDE_TPM),
       "the account's day: 100,000,000, 40,000,000 of it, 1,000 a minute");
    e.daily = BT_SIDE_COUNT;
    OK(isnan(bt_eval_tpd(&e)) && isnan(bt_eval_group_today(&e)) && isnan(bt_eval_daily_rate(&e)),
       "no daily quota: each NAN, not 0");
}

/* The reading API of an evaluation (core/headroom.h): what the views read beside the
 * figures, each the evaluation's own; a warning outside 0..nwarn-1 is none. */
static void eval_reads(void)
{
    static struct bt_eval e; /* three pages: not on the stack */
    memset(&e, 0, sizeof e);
    e.route = 3;
    e.group.leader = 1;
    e.status = BT_ST_WARN;
    e.stale = true;
    snprintf(e.stale_reason, sizeof e.stale_reason, "no poll for 12 min");
    e.nwarn = 2;
    e.warnings[0].code = BT_W_COUNT - 1;
    e.warnings[1].code = 0;
    e.mantle = true;
    e.binding = BT_SIDE_RPM;
    e.token_side = BT_SIDE_OUTPUT;
    e.side[BT_SIDE_OUTPUT].quota = 500000;
    snprintf(e.quota_code, sizeof e.quota_code, "L-12345678");
    e.group.n = 5; /* it and four others */
    e.quota_source = BT_QS_CONFIG;
    e.now = 1795910459;
    e.minute = 1795910340;
    e.data_minute = 1795910280;
    e.adm_minute = 1795910400;
    e.state = BT_FR_IDLE;
    e.spend.usd_per_hour = 2.5;
    OK(bt_eval_status(&e) == BT_ST_WARN && bt_eval_stale(&e) &&
           !strcmp(bt_eval_stale_reason(&e), "no poll for 12 min"),
       "status, stale and its reason");
    OK(bt_eval_nwarn(&e) == 2 && bt_eval_warning(&e, 0)->code == BT_W_COUNT - 1 &&
           bt_eval_warning(&e, 1)->code == 0 && !bt_eval_warning(&e, 2) &&
           !bt_eval_warning(&e, -1),
       "two warnings in order; none outside them");
    OK(bt_eval_mantle(&e) && bt_eval_binding(&e) == BT_SIDE_RPM &&
           bt_eval_token_side(&e) == BT_SIDE_OUTPUT &&
           bt_eval_side(&e, BT_SIDE_OUTPUT)->quota == 500000,
       "mantle, the binding side, the token side and a side's figures");
    OK(!strcmp(bt_eval_quota_code(&e), "L-12345678") && bt_eval_nshared(&e) == 4 &&
           bt_eval_quota_source(&e) == BT_QS_CONFIG,
       "the quota's code, its other routes and where it came from");
    OK(bt_eval_now(&e) == 1795910459 && bt_eval_cw_minute(&e) == 1795910340 &&
           bt_eval_data_minute(&e) == 1795910280 && bt_eval_adm_at(&e) == 1795910400 &&
           bt_eval_state(&e) == BT_FR_IDLE,
       "the clocks: evaluated at, the CloudWatch minute, the data minute, the scrape");
    OK(bt_eval_index(&e) == 3 && bt_eval_group_first(&e) == 1 &&
           bt_eval_spend(&e)->usd_per_hour == 2.5,
       "the route, its group's first member and its spend");
}

/* The side figure table: each row a number or a word, never both, its keys unique;
 * the quota table names each quota kind once, of its own side. */
static const struct bt_side_figure *side_row(const char *json)
{
    for (int k = 0; k < bt_side_figures_n; k++)
        if (!strcmp(bt_side_figures[k].json, json))
            return &bt_side_figures[k];
    return NULL;
}

static void side_rows(void)
{
    struct bt_side_fig f = {.applies = true, .quota = 100, .source = BT_QS_CONFIG, .used = 30,
                            .used_q = BT_QL_LOWER, .group_used = 60, .group_q = BT_QL_KNOWN,
                            .headroom = 40, .pct = 40, .headroom_q = BT_QL_UPPER, .fits = 4,
                            .source_name = "admission"};
    bool one = true, unique = true;
    for (int k = 0; k < bt_side_figures_n; k++) {
        const struct bt_side_figure *a = &bt_side_figures[k];
        one &= a->json && (!a->value != !a->text);
        for (int j = 0; j < k; j++)
            unique &= strcmp(a->json, bt_side_figures[j].json) != 0;
    }
    OK(one, "every side figure has a key and is a number or a word");
    OK(unique, "no side figure key twice");
    NEAR(side_row("headroom")->value(&f), 40, 0, "headroom reads the side's headroom");
    OK(!strcmp(side_row("headroom")->json_tpm, "headroom_tpm"),
       "mantle's input and output name it headroom_tpm");
    OK(!strcmp(side_row("used_quality")->text(&f), "lower-bound"), "used_quality is the side's");
    OK(!strcmp(side_row("source")->text(&f), "config"), "source: the quota's");
    bool kinds = true, sides_ok = true;
    for (int k = 0; k < BT_QUOTA_FIGURES; k++) {
        for (int j = 0; j < k; j++)
            kinds &= bt_quota_figures[k].kind != bt_quota_figures[j].kind;
        sides_ok &= (unsigned)bt_quota_figures[k].side < BT_SIDE_COUNT;
    }
    OK(kinds && BT_QUOTA_FIGURES == BT_Q_COUNT, "every quota kind once in the quota object");
    OK(sides_ok, "each of a side");
    struct bt_eval e;
    memset(&e, 0, sizeof e);
    int shown = 0;
    for (int k = 0; k < BT_QUOTA_FIGURES; k++)
        shown += !bt_quota_figures[k].shown || bt_quota_figures[k].shown(&e);
    OK(shown == 3, "a plain route: tpm, rpm and tpd (got %d)", shown);
    e.mantle = true;
    e.side[BT_SIDE_RES_OUTPUT].applies = true;
    shown = 0;
    for (int k = 0; k < BT_QUOTA_FIGURES; k++)
        shown += !bt_quota_figures[k].shown || bt_quota_figures[k].shown(&e);
    OK(shown == 7, "mantle with a reserved tier: input, output and both reserved too (got %d)", shown);
}

/* The day sums' minute: the last whole minute before now, or the evaluated one. */
static void day_through(void)
{
    struct bt_eval e;
    memset(&e, 0, sizeof e);
    OK(bt_eval_day_through(&e, 86400 + 630) == 0, "no evaluated minute: none");
    e.minute = 86400 + 300;
    OK(bt_eval_day_through(&e, 86400 + 630) == 86400 + 540, "10:30 past: through the minute before");
    OK(bt_eval_day_through(&e, 86400 + 330) == 86400 + 300, "never before the evaluated minute");
}

/* An export row's signals (bt_eval_signal_row): CloudWatch's at the row's minute, an
 * admission counter at the scrape the evaluation read, unknown where it read none. */
static void signal_row(void)
{
    const int64_t m = 1795910400; /* 2026-11-29 00:00 UTC */
    struct bt_store st;
    bt_store_init(&st, 1, 60);
    struct bt_sample in0 = {.t = m - 60, .route = 0, .signal = BT_SIG_INPUT_TOKENS, .value = 900};
    struct bt_sample in1 = {.t = m, .route = 0, .signal = BT_SIG_INPUT_TOKENS, .value = 1200};
    struct bt_sample adm = {.t = m - 30, .route = 0, .signal = BT_SIG_ADM_QUEUE, .value = 7};
    bt_store_add(&st, &in0, m + 120);
    bt_store_add(&st, &in1, m + 120);
    bt_store_add(&st, &adm, m + 120);
    static struct bt_eval e;
    memset(&e, 0, sizeof e);
    e.route = 0;
    e.minute = m;
    e.adm_minute = m - 60; /* the scrape's minute: 23:59 */
    NEAR(bt_eval_signal_row(&st, &e, BT_SIG_INPUT_TOKENS, m - 60), 900, 0,
         "the 23:59 row: its own minute's 900 input tokens, not the evaluated minute's");
    NEAR(bt_eval_signal_row(&st, &e, BT_SIG_INPUT_TOKENS, m), 1200, 0, "the 00:00 row: 1,200");
    NEAR(bt_eval_signal_row(&st, &e, BT_SIG_ADM_QUEUE, m), 7, 0,
         "admission: the queue at the scrape read (7), whatever the row's minute");
    e.adm_minute = 0;
    OK(isnan(bt_eval_signal_row(&st, &e, BT_SIG_ADM_QUEUE, m)),
       "no scrape read: the queue is unknown, never 0");
    bt_store_free(&st);
}

int main(void)
{
    orders();
    accessors();
    names();
    sides();
    text();
    side_rows();
    day_through();
    burndown_rows();
    eval_reads();
    group_reads();
    signal_row();
    return tap_done();
}
