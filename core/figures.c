/* The figure table (core/figures.h): one row per figure, read by every writer. */
#include "core/figures.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/format.h"
#include "core/util.h"

#define READ(fn, expr)                                        \
    static double fn(const struct bt_eval *e) { return (expr); }
#define QUAL(fn, expr)                                                 \
    static enum bt_quality fn(const struct bt_eval *e) { return (expr); }
#define SRC(fn, expr)                                             \
    static const char *fn(const struct bt_eval *e) { return (expr); }

READ(v_settled, e->settled)
READ(v_estimated, e->estimated)
READ(v_held, e->held)
READ(v_used, e->used)
READ(v_reserved, e->reserved_per_min)
READ(v_group_used, bt_eval_group_used(e))
READ(v_quota, e->quota)
READ(v_reservation, e->reservation)
READ(v_in_flight, e->in_flight)
READ(v_headroom_tpm, e->headroom_tpm)
READ(v_headroom_pct, e->headroom_pct)
READ(v_fits, e->fits_more)
READ(v_usd_per_hour, e->spend.usd_per_hour)
READ(v_throttles, e->throttles)
READ(v_lat_p99, e->lat_p99)
READ(v_lat_p50, e->lat_p50)
READ(v_invocations, e->invocations)
READ(v_conc_limit, e->conc_limit)
READ(v_tokens_today, e->tokens_today)
READ(v_group_today, bt_eval_group_today(e))
READ(v_max_tokens, e->max_tokens)
/* mantle has no burndown (its source "none"): null, never its table value */
READ(v_burndown, e->burndown_source && !strcmp(e->burndown_source, "none") ? NAN : e->burndown)
READ(v_burndown_measured, e->burndown_measured)
READ(v_avg_output, e->avg_output)
READ(v_requests, e->requests)
READ(v_tier_share, e->tier_reserved_share)
READ(v_tier_inv, e->tier_reserved_inv)
READ(v_tier_input, e->tier_reserved_input)
READ(v_tier_output, e->tier_reserved_output)
READ(v_input_tokens, e->input_tokens)
READ(v_admitted, e->admitted)
READ(v_retries, e->retries)
READ(v_adm_throttled, e->adm_throttled)
READ(v_completed, e->completed)
QUAL(q_held, e->held_q)
QUAL(q_used, e->used_q)
QUAL(q_group_used, bt_eval_group_used_q(e))
QUAL(q_headroom, e->headroom_q)
QUAL(q_spend, e->spend.quality)
QUAL(q_tokens_today, e->tokens_today_q)
SRC(s_held, e->held_source)
SRC(s_reserved, e->reserved_source)
SRC(s_quota, bt_quota_source_name(e->quota_source))
SRC(s_reservation, e->reservation_source)
SRC(s_in_flight, e->in_flight_source)
SRC(s_burndown, e->burndown_source ? e->burndown_source : "default")
SRC(s_requests, e->requests_source)
/* bedrock-mantle publishes no throttle metric: not published, never 0 */
static bool np_mantle(const struct bt_eval *e) { return e->mantle; }

/* Rows in the order of the figures' ids; each writer's order is its *_at. The
 * helps are the exported families' (man 1 bedtop, SERVE). */
const struct bt_figure bt_figures[BT_FIG_COUNT] = {
    [BT_FIG_SETTLED] = {.name = "settled", .unit = "tokens/min", .side = BT_FS_TOKEN,
                        .value = v_settled, .json_in = BT_FJ_TPM, .json_at = 1,
                        .json = "settled", .csv_at = 1, .csv = "settled_tpm",
                        .text_at = 2, .text_head = "SETTLD", .text_w = 6, .wide_at = 2,
                        .wide_head = "SETTLED", .wide_w = 8, .fmt = BT_FF_TOKENS},
    [BT_FIG_ESTIMATED] = {.name = "estimated", .unit = "tokens/min", .side = BT_FS_TOKEN,
                          .value = v_estimated, .json_in = BT_FJ_TPM, .json_at = 2,
                          .json = "estimated",
                          .text_at = 3, .text_head = "ESTIM", .text_w = 6, .wide_at = 3,
                          .wide_head = "ESTIM", .wide_w = 8, .fmt = BT_FF_TOKENS},
    [BT_FIG_HELD] = {.name = "held", .unit = "tokens", .side = BT_FS_TOKEN, .value = v_held,
                     .quality = q_held, .source = s_held, .json_in = BT_FJ_TPM, .json_at = 3,
                     .json = "held", .json_source = "held_source", .json_quality = "held_quality",
                     .csv_at = 2, .csv = "held_tpm", .prom_at = 4, .prom = "bedtop_held_tokens",
                     .prom_help = "Reservations held by calls in flight now (label source: "
                                  "admission, littles-law).",
                     .prom_scale = 1, .prom_source = "source",
                     .text_at = 4, .text_head = "HELD", .text_w = 6, .wide_at = 4,
                     .wide_head = "HELD", .wide_w = 8, .fmt = BT_FF_TOKENS,
                     .plan_at = 3, .plan_label = "held", .plan_quality = true},
    [BT_FIG_USED] = {.name = "used", .unit = "tokens/min", .side = BT_FS_TOKEN, .value = v_used,
                     .quality = q_used, .json_in = BT_FJ_TPM, .json_at = 4, .json = "used",
                     .json_quality = "used_quality", .json_upper = "upper_bound", .csv_at = 4,
                     .csv = "used_tpm", .prom_at = 3, .prom = "bedtop_used_tokens_per_minute",
                     .prom_help = "Tokens per minute counted against the quota: max(settled, "
                                  "estimated) + held, or the per-minute upper bound.",
                     .prom_scale = 1,
                     .plan_at = 4, .plan_label = "used (this route)", .plan_quality = true},
    [BT_FIG_RESERVED] = {.name = "reserved", .unit = "tokens/min", .side = BT_FS_TOKEN,
                         .value = v_reserved, .source = s_reserved, .json_in = BT_FJ_TPM,
                         .json_at = 5, .json = "reserved_per_min", .json_source = "reserved_source",
                         .json_alias = "reserved", .csv_at = 3, .csv = "reserved_tpm",
                         .csv_source = "reserved_source", .prom_at = 7,
                         .prom = "bedtop_reserved_tokens_per_minute",
                         .prom_help = "Reservations started per minute (the bound used when "
                                      "calls in flight are unknown).",
                         .prom_scale = 1},
    [BT_FIG_GROUP_USED] = {.name = "group used", .unit = "tokens/min", .side = BT_FS_TOKEN,
                           .value = v_group_used, .quality = q_group_used, .json_in = BT_FJ_TPM,
                           .json_at = 6, .json = "group_used",
                           .json_quality = "group_used_quality", .prom_at = 8,
                           .prom = "bedtop_group_used_tokens_per_minute",
                           .prom_help = "Used summed over every route of the quota group.",
                           .prom_scale = 1},
    /* the quota's JSON and series are per kind (quota.tpm, quota.rpm, ..., and
     * bedtop_quota_tokens_per_minute{kind}), written beside the quota's code and name */
    [BT_FIG_QUOTA] = {.name = "quota", .unit = "tokens/min", .side = BT_FS_TOKEN,
                      .value = v_quota, .source = s_quota, .csv_at = 5, .csv = "quota_tpm",
                      .csv_source = "quota_source",
                      .text_at = 1, .text_head = "QUOTA", .text_w = 6, .wide_at = 1,
                      .wide_head = "QUOTA", .wide_w = 8, .fmt = BT_FF_TOKENS,
                      .wide_source_head = "SOURCE", .wide_source_w = 14},
    [BT_FIG_RESERVATION] = {.name = "R per call", .unit = "tokens", .side = BT_FS_NONE,
                            .value = v_reservation, .source = s_reservation,
                            .json_in = BT_FJ_HEADROOM, .json_at = 1,
                            .json = "reservation_per_call", .json_source = "reservation_source",
                            .prom_at = 6, .prom = "bedtop_reservation_tokens_per_call",
                            .prom_help = "Reservation per call: total input per call + max_tokens.",
                            .prom_scale = 1,
                            .plan_at = 1, .plan_label = "reservation per call", .plan_source = true},
    [BT_FIG_IN_FLIGHT] = {.name = "in flight", .unit = "calls", .decimals = 2,
                          .side = BT_FS_NONE, .value = v_in_flight, .source = s_in_flight,
                          .json_in = BT_FJ_HEADROOM, .json_at = 2, .json = "in_flight",
                          .json_source = "in_flight_source", .prom_at = 5,
                          .prom = "bedtop_in_flight_calls",
                          .prom_help = "Model calls in flight (label source: admission gauge or "
                                       "littles-law).",
                          .prom_scale = 1, .prom_source = "source",
                          .wide_at = 9, .wide_head = "INFL", .wide_w = 7, .fmt = BT_FF_COUNT,
                          .of = v_conc_limit,
                          .plan_at = 2, .plan_label = "calls in flight", .plan_source = true},
    [BT_FIG_HEADROOM_TPM] = {.name = "headroom", .unit = "tokens/min", .side = BT_FS_TOKEN,
                             .value = v_headroom_tpm, .json_in = BT_FJ_HEADROOM, .json_at = 3,
                             .json = "headroom_tpm", .csv_at = 6, .csv = "headroom_tpm",
                             .prom_at = 1, .prom = "bedtop_headroom_tokens_per_minute",
                             .prom_help = "Quota minus the tokens per minute used by every route "
                                          "of the quota group (label side: the token side).",
                             .prom_scale = 1},
    [BT_FIG_HEADROOM_PCT] = {.name = "headroom %", .unit = "percent", .decimals = 1,
                             .side = BT_FS_BINDING, .value = v_headroom_pct, .quality = q_headroom,
                             .json_in = BT_FJ_HEADROOM, .json_at = 4, .json = "headroom_pct",
                             .json_quality = "headroom_quality", .csv_at = 7,
                             .csv = "headroom_pct", .prom_at = 2, .prom = "bedtop_headroom_ratio",
                             .prom_help = "Headroom as a fraction of the quota (1 idle, 0 at the "
                                          "quota, negative over it), of the side that binds "
                                          "(label side).",
                             .prom_scale = 100,
                             .text_at = 5, .text_head = "HEAD%", .text_w = 6, .wide_at = 5,
                             .wide_head = "HEAD%", .wide_w = 7, .fmt = BT_FF_PCT_Q,
                             .plan_at = 5, .plan_label = "headroom", .plan_quality = true},
    [BT_FIG_FITS] = {.name = "fits", .unit = "calls", .side = BT_FS_BINDING, .value = v_fits,
                     .json_in = BT_FJ_HEADROOM, .json_at = 5, .json = "fits_more", .csv_at = 8,
                     .csv = "fits_more", .prom_at = 9, .prom = "bedtop_fits_more_calls",
                     .prom_help = "More calls of the average size that fit in the headroom "
                                  "of the side that binds (label side).",
                     .prom_scale = 1,
                     .text_at = 6, .text_head = "FITS", .text_w = 5, .wide_at = 6,
                     .wide_head = "FITS", .wide_w = 6, .fmt = BT_FF_COUNT,
                     .plan_at = 6, .plan_label = "fits more at once"},
    /* the spend at list prices (core/cost.c): the JSON's "cost" object and serve's
     * bedtop_spend_usd_per_hour (render/spend.c) carry it with its price row; the
     * CSV a column, so an export has what the spend meter showed */
    [BT_FIG_USD_PER_HOUR] = {.name = "spend", .unit = "USD/hour", .decimals = 4,
                             .side = BT_FS_NONE, .value = v_usd_per_hour, .quality = q_spend,
                             .csv_at = 9, .csv = "usd_per_hour"},
    /* the call rates and latencies: check's text columns and the route JSON's
     * invocations_per_min, throttles_per_min and latency_ms (the exposition writes
     * them with their neighbours) */
    [BT_FIG_INVOCATIONS] = {.name = "invocations", .unit = "calls/min", .side = BT_FS_NONE,
                            .value = v_invocations, .json_in = BT_FJ_CALLS, .json_at = 1,
                            .json = "invocations_per_min"},
    [BT_FIG_THROTTLES] = {.name = "throttles", .unit = "calls/min", .side = BT_FS_NONE,
                          .value = v_throttles, .json_in = BT_FJ_CALLS, .json_at = 2,
                          .json = "throttles_per_min",
                          .text_at = 7, .text_head = "THR/M", .text_w = 5,
                          .wide_at = 7, .wide_head = "THR/MIN", .wide_w = 7, .fmt = BT_FF_COUNT,
                          .unpublished = np_mantle},
    [BT_FIG_LAT_P50] = {.name = "p50 latency", .unit = "ms", .side = BT_FS_NONE, .value = v_lat_p50,
                        .json_in = BT_FJ_LATENCY, .json_at = 1, .json = "p50"},
    [BT_FIG_LAT_P99] = {.name = "p99 latency", .unit = "ms", .side = BT_FS_NONE, .value = v_lat_p99,
                        .json_in = BT_FJ_LATENCY, .json_at = 2, .json = "p99",
                        .text_at = 8, .text_head = "P99", .text_w = 5, .wide_at = 8,
                        .wide_head = "P99", .wide_w = 6, .fmt = BT_FF_LATENCY},
    /* the concurrency limit and the day's tokens: the route JSON's run after latency_ms */
    [BT_FIG_CONC_LIMIT] = {.name = "concurrency limit", .unit = "calls", .side = BT_FS_NONE,
                           .value = v_conc_limit, .json_in = BT_FJ_TODAY, .json_at = 1,
                           .json = "concurrency_limit"},
    [BT_FIG_TOKENS_TODAY] = {.name = "tokens today", .unit = "tokens", .side = BT_FS_NONE,
                             .value = v_tokens_today, .quality = q_tokens_today,
                             .json_in = BT_FJ_TODAY, .json_at = 2, .json = "tokens_today",
                             .json_quality = "tokens_today_quality"},
    [BT_FIG_GROUP_TODAY] = {.name = "group tokens today", .unit = "tokens", .side = BT_FS_NONE,
                            .value = v_group_today, .json_in = BT_FJ_TODAY, .json_at = 3,
                            .json = "tokens_today_group"},
    /* the output allowance: max_tokens, the burndown resolved (and where from) and the
     * one EstimatedTPMQuotaUsage implies */
    [BT_FIG_MAX_TOKENS] = {.name = "max_tokens", .unit = "tokens", .side = BT_FS_NONE,
                           .value = v_max_tokens, .json_in = BT_FJ_BURNDOWN, .json_at = 1,
                           .json = "max_tokens"},
    [BT_FIG_BURNDOWN] = {.name = "burndown", .unit = "multiplier", .decimals = 2,
                         .side = BT_FS_NONE, .value = v_burndown, .source = s_burndown,
                         .json_in = BT_FJ_BURNDOWN, .json_at = 2, .json = "burndown",
                         .json_source = "burndown_source"},
    [BT_FIG_BURNDOWN_MEASURED] = {.name = "burndown measured", .unit = "multiplier",
                                  .decimals = 2, .side = BT_FS_NONE,
                                  .value = v_burndown_measured, .json_in = BT_FJ_BURNDOWN,
                                  .json_at = 3, .json = "burndown_measured"},
    [BT_FIG_AVG_OUTPUT] = {.name = "mean output", .unit = "tokens", .side = BT_FS_NONE,
                           .value = v_avg_output},
    /* requests accepted per minute (the RPM side's use), from Invocations or admission */
    [BT_FIG_REQUESTS] = {.name = "requests", .unit = "calls/min", .side = BT_FS_NONE,
                         .value = v_requests, .source = s_requests},
    /* service tiers: the reserved tier's part of the route's traffic */
    [BT_FIG_TIER_SHARE] = {.name = "reserved tier share", .unit = "fraction", .decimals = 2,
                           .side = BT_FS_NONE, .value = v_tier_share, .json_in = BT_FJ_TIERS,
                           .json_at = 1, .json = "reserved_share"},
    [BT_FIG_TIER_INVOCATIONS] = {.name = "reserved tier calls", .unit = "calls",
                                 .side = BT_FS_NONE, .value = v_tier_inv,
                                 .json_in = BT_FJ_TIERS, .json_at = 2,
                                 .json = "reserved_invocations"},
    [BT_FIG_TIER_INPUT] = {.name = "reserved tier input", .unit = "tokens", .side = BT_FS_NONE,
                           .value = v_tier_input, .json_in = BT_FJ_TIERS, .json_at = 3,
                           .json = "reserved_input_tokens"},
    [BT_FIG_TIER_OUTPUT] = {.name = "reserved tier output", .unit = "tokens",
                            .side = BT_FS_NONE, .value = v_tier_output, .json_in = BT_FJ_TIERS,
                            .json_at = 4, .json = "reserved_output_tokens"},
    /* the minute's InputTokenCount (mantle's tokens graph plots it against the input
     * quota) */
    [BT_FIG_INPUT_TOKENS] = {.name = "input tokens", .unit = "tokens/min", .side = BT_FS_NONE,
                             .value = v_input_tokens},
    /* the admission controller's counters, per minute (offered against accepted load) */
    [BT_FIG_ADMITTED] = {.name = "admitted", .unit = "calls/min", .side = BT_FS_NONE,
                         .value = v_admitted},
    [BT_FIG_RETRIES] = {.name = "retried", .unit = "calls/min", .side = BT_FS_NONE,
                        .value = v_retries},
    [BT_FIG_ADM_THROTTLED] = {.name = "throttled (admission)", .unit = "calls/min",
                              .side = BT_FS_NONE, .value = v_adm_throttled},
    [BT_FIG_COMPLETED] = {.name = "completed", .unit = "calls/min", .side = BT_FS_NONE,
                          .value = v_completed},
};

static int order_of(const struct bt_figure *f, enum bt_fig_writer w)
{
    switch (w) {
    case BT_FW_JSON_TPM:
        return f->json_in == BT_FJ_TPM ? f->json_at : 0;
    case BT_FW_JSON_HEADROOM:
        return f->json_in == BT_FJ_HEADROOM ? f->json_at : 0;
    case BT_FW_JSON_CALLS:
        return f->json_in == BT_FJ_CALLS ? f->json_at : 0;
    case BT_FW_JSON_LATENCY:
        return f->json_in == BT_FJ_LATENCY ? f->json_at : 0;
    case BT_FW_JSON_TODAY:
        return f->json_in == BT_FJ_TODAY ? f->json_at : 0;
    case BT_FW_JSON_BURNDOWN:
        return f->json_in == BT_FJ_BURNDOWN ? f->json_at : 0;
    case BT_FW_JSON_TIERS:
        return f->json_in == BT_FJ_TIERS ? f->json_at : 0;
    case BT_FW_CSV:
        return f->csv_at;
    case BT_FW_PROM:
        return f->prom_at;
    case BT_FW_TEXT:
        return f->text_at;
    case BT_FW_TEXT_WIDE:
        return f->wide_at;
    case BT_FW_PLAN:
        return f->plan_at;
    case BT_FW_COUNT:
        break;
    }
    return 0;
}

int bt_figures_of(enum bt_fig_writer w, enum bt_fig_id *ids)
{
    /* the figures the writer shows, by order and then by id: one pass and an
     * insertion of each (the JSON writer asks twice a route, export for every row) */
    int n = 0, at[BT_FIG_COUNT];
    for (int k = 0; k < BT_FIG_COUNT; k++) {
        int o = order_of(&bt_figures[k], w);
        if (o < 1 || o > BT_FIG_COUNT)
            continue;
        int j = n++;
        for (; j > 0 && at[j - 1] > o; j--) {
            at[j] = at[j - 1];
            ids[j] = ids[j - 1];
        }
        at[j] = o;
        ids[j] = (enum bt_fig_id)k;
    }
    return n;
}

enum bt_side bt_figure_side(const struct bt_figure *f, const struct bt_eval *e)
{
    switch (f->side) {
    case BT_FS_TOKEN:
        return e->token_side;
    case BT_FS_BINDING:
        return e->binding;
    case BT_FS_NONE:
        break;
    }
    return BT_SIDE_COUNT;
}

double bt_figure_value(const struct bt_figure *f, const struct bt_eval *e)
{
    return f->value(e);
}

double bt_fig(const struct bt_eval *e, enum bt_fig_id id)
{
    return bt_figures[id].value(e);
}

enum bt_quality bt_fig_quality(const struct bt_eval *e, enum bt_fig_id id)
{
    const struct bt_figure *f = &bt_figures[id];
    return f->quality ? f->quality(e) : BT_QL_KNOWN;
}

const char *bt_fig_source(const struct bt_eval *e, enum bt_fig_id id, const char *none)
{
    const struct bt_figure *f = &bt_figures[id];
    const char *s = f->source ? f->source(e) : NULL;
    return s ? s : none;
}

const char *bt_side_fits_word(enum bt_side s)
{
    switch (s) {
    case BT_SIDE_RPM:
        return "calls this minute";
    case BT_SIDE_DAILY:
    case BT_SIDE_DAILY_ACCOUNT:
        return "calls today";
    default:
        return "in flight";
    }
}

char *bt_figure_text(const struct bt_figure *f, const struct bt_eval *e, char *out, size_t n)
{
    if (f->unpublished && f->unpublished(e)) {
        snprintf(out, n, "n/p");
        return out;
    }
    double v = f->value(e);
    switch (f->fmt) {
    case BT_FF_TOKENS:
        return bt_fmt_tokens(v, out, n);
    case BT_FF_PCT_Q:
        return bt_fmt_pct_q(v, f->quality ? f->quality(e) : BT_QL_KNOWN, out, n);
    case BT_FF_LATENCY:
        return bt_fmt_latency(v, out, n);
    case BT_FF_COUNT:
        break;
    }
    bt_fmt_count(v, out, n);
    double of = f->of ? f->of(e) : NAN;
    if (!isnan(v) && !isnan(of)) {
        char a[BT_FMT_SHORT], l[BT_FMT_SHORT];
        snprintf(a, sizeof a, "%s", out);
        snprintf(out, n, "%s/%s", a, bt_fmt_count(of, l, sizeof l));
    }
    return out;
}

/* ---- a side's figures ---- */
#define SREAD(fn, expr)                                           \
    static double fn(const struct bt_side_fig *f) { return (expr); }
#define SWORD(fn, expr)                                                \
    static const char *fn(const struct bt_side_fig *f) { return (expr); }
SREAD(sv_quota, f->quota)
SREAD(sv_used, f->used)
SREAD(sv_group_used, f->group_used)
SREAD(sv_headroom, f->headroom)
SREAD(sv_pct, f->pct)
SREAD(sv_fits, f->fits)
SWORD(sw_source, bt_quota_source_name(f->source))
SWORD(sw_used_q, bt_quality_name(f->used_q))
SWORD(sw_used_source, f->source_name)
SWORD(sw_group_q, bt_quality_name(f->group_q))
SWORD(sw_headroom_q, bt_quality_name(f->headroom_q))

const struct bt_side_figure bt_side_figures[] = {
    {.json = "quota", .value = sv_quota},
    {.json = "source", .text = sw_source},
    {.json = "used", .value = sv_used},
    {.json = "used_quality", .text = sw_used_q},
    {.json = "used_source", .text = sw_used_source},
    {.json = "group_used", .value = sv_group_used},
    {.json = "group_used_quality", .text = sw_group_q},
    {.json = "headroom", .json_tpm = "headroom_tpm", .value = sv_headroom},
    {.json = "headroom_pct", .decimals = 1, .value = sv_pct},
    {.json = "headroom_quality", .text = sw_headroom_q},
    {.json = "fits_more", .value = sv_fits},
};
const int bt_side_figures_n = (int)(sizeof bt_side_figures / sizeof bt_side_figures[0]);

static bool qs_mantle(const struct bt_eval *e) { return e->mantle; }
static bool qs_account(const struct bt_eval *e) { return e->side[BT_SIDE_DAILY_ACCOUNT].applies; }
static bool qs_concurrent(const struct bt_eval *e) { return e->side[BT_SIDE_CONCURRENT].applies; }
/* the reserved tier's two quotas come as a pair: both where either applies */
static bool qs_reserved(const struct bt_eval *e)
{
    return e->side[BT_SIDE_RES_INPUT].applies || e->side[BT_SIDE_RES_OUTPUT].applies;
}

const struct bt_quota_figure bt_quota_figures[BT_QUOTA_FIGURES] = {
    {BT_Q_TPM, BT_SIDE_TPM, NULL},
    {BT_Q_RPM, BT_SIDE_RPM, NULL},
    {BT_Q_TPD, BT_SIDE_DAILY, NULL},
    {BT_Q_TPD_ACCOUNT, BT_SIDE_DAILY_ACCOUNT, qs_account},
    {BT_Q_INPUT_TPM, BT_SIDE_INPUT, qs_mantle},
    {BT_Q_OUTPUT_TPM, BT_SIDE_OUTPUT, qs_mantle},
    {BT_Q_CONCURRENT, BT_SIDE_CONCURRENT, qs_concurrent},
    {BT_Q_RES_INPUT_TPM, BT_SIDE_RES_INPUT, qs_reserved},
    {BT_Q_RES_OUTPUT_TPM, BT_SIDE_RES_OUTPUT, qs_reserved},
};

int64_t bt_eval_day_through(const struct bt_eval *e, int64_t now)
{
    if (!e->minute)
        return 0;
    int64_t through = bt_minute_floor(now) - 60;
    return through > e->minute ? through : e->minute;
}

double bt_eval_signal_row(const struct bt_store *st, const struct bt_eval *e, enum bt_signal s,
                          int64_t m)
{
    if (bt_signal_info[s].source == BT_SRC_ADMISSION)
        return e->adm_minute ? bt_store_at(st, e->route, s, e->adm_minute) : NAN;
    return bt_store_at(st, e->route, s, m);
}

double bt_eval_signal(const struct bt_store *st, const struct bt_eval *e, enum bt_signal s)
{
    if (bt_signal_daily(s) && e->minute) {
        int64_t at = bt_eval_day_through(e, e->now);
        /* the cache reads' day sum only where it was asked with the others (not the
         * minutes after an hour alone, for a store without it) */
        bool held = s != BT_SIG_DAY_CACHE_READ || !bt_store_has_day_sum(st, e->route, at) ||
                    bt_store_day_sum_held(st, e->route, BT_SIG_DAY_CACHE_READ, at);
        return !e->mantle && held ? bt_store_day_sum(st, e->route, s, at) : NAN;
    }
    if (bt_signal_info[s].source != BT_SRC_ADMISSION && !e->minute)
        return NAN;
    return bt_eval_signal_row(st, e, s, e->minute);
}
