/* The load rules: what a route's calls do to its quota (the estimate alone, throttles
 * and their cause, max_tokens, retries, calls in flight, headroom, cut-off output,
 * slowdowns); the rows of core/rules.c's warning table point at them. */
#include "core/rulesload.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/eval_int.h"
#include "core/format.h"
#include "core/headroom.h"
#include "core/util.h"

void bt_rule_say(struct bt_warning *w, enum bt_status sev, const char *fmt, ...)
{
    va_list ap;
    w->severity = sev;
    va_start(ap, fmt);
    vsnprintf(w->message, sizeof w->message, fmt, ap);
    va_end(ap);
}

bool bt_rule_estimate_only(const struct bt_config *cfg, const struct bt_route *r,
                           struct bt_eval *e, struct bt_warning *w)
{
    (void)cfg;
    (void)r;
    if (e->state != BT_FR_ACTIVE || e->used_q == BT_QL_UNKNOWN || !isnan(e->reservation) ||
        !isnan(e->held))
        return false;
    char est[32];
    bt_fmt_si(e->mantle ? e->side[BT_SIDE_INPUT].used : bt_nanmax(e->estimated, e->settled), est,
              sizeof est);
    if (e->mantle)
        bt_rule_say(w, BT_ST_WARN,
            "input headroom counts completed input only (%s TPM): no admission counters and no "
            "max_tokens, so the input + max_tokens reservations that admission checks are unseen", est);
    else
        bt_rule_say(w, BT_ST_WARN,
            "headroom rests on EstimatedTPMQuotaUsage/completed tokens alone (%s TPM): no admission "
            "counters and no max_tokens; Bedrock throttles on input + max_tokens reservations held "
            "by calls in flight, which the estimate does not see", est);
    return true;
}

/* Why a route is throttled below the estimate: the first cause the evidence
 * supports, with that cause's remedy (bedtop(1) WARNINGS lists them). */
static const char *const act_daily =
    "Defer work until the daily quota resets at 00:00 UTC, or move it to a batch inference job; "
    "request a higher daily quota if the volume is planned.";
static const char *const act_retries =
    "Cap retries with a retry budget and back off with jitter; lowering max_tokens will not help "
    "while retries are much of the load.";
static const char *const act_held =
    "Lower max_tokens toward the observed output length plus a margin: each call holds "
    "input + max_tokens of the quota while in flight.";
static const char *const act_shared =
    "Find the other callers on this quota (the routes named, or callers outside the config) and "
    "schedule or split their load, or request a quota increase.";
static const char *const act_bursts =
    "Smooth bursts at the admission boundary (a semaphore or a token bucket) so calls in flight "
    "stay near their average.";
static const char *const act_rpm =
    "Send fewer, larger requests (batch prompts, fewer tool round trips) or request an RPM "
    "increase in Service Quotas with steady-state and peak requests per minute; more tokens will "
    "not help.";
static const char *const act_capacity =
    "No quota increase fixes service capacity: retry with backoff and jitter, spread load over "
    "another Region or a cross-Region profile, and check the AWS Health Dashboard.";
static const char *const act_unseen =
    "Expose the admission counters (in-flight gauge, retries) to see bursts and retries, and look "
    "for callers outside the config on this quota.";

bool bt_capacity_evidence(double server_errors, double throttles)
{
    return server_errors > 0 && server_errors >= 0.1 * bt_z(throttles);
}

const char *bt_throttle_cause(const struct bt_warning *w, const char **words)
{
    static const struct {
        const char *const *action;
        const char *name, *words;
    } causes[] = {
        {&act_capacity, "capacity", "service capacity, not a quota"},
        {&act_rpm, "rpm", "the requests-per-minute quota"},
        {&act_daily, "daily", "the daily token quota"},
        {&act_retries, "retries", "a retry storm (throttles feeding on retries)"},
        {&act_held, "reservations", "reservations held in flight (max_tokens far above the "
                                    "output)"},
        {&act_shared, "shared", "other callers on the shared quota"},
        {&act_bursts, "bursts", "bursts of concurrency"},
        {&act_unseen, "unseen", "a cause not in the data (sub-minute bursts, callers outside "
                                "the config)"},
    };
    if (w->code != BT_W_THROTTLED_BELOW_ESTIMATE)
        return NULL;
    for (size_t i = 0; i < sizeof causes / sizeof causes[0]; i++) {
        if (w->action == *causes[i].action) {
            if (words)
                *words = causes[i].words;
            return causes[i].name;
        }
    }
    return NULL;
}

static bool oversized(const struct bt_config *cfg, const struct bt_eval *e, double *basis)
{
    *basis = !isnan(e->out_p99) ? e->out_p99 : e->avg_output;
    return !isnan(e->max_tokens) && !isnan(*basis) && *basis > 0 &&
           e->max_tokens > cfg->oversize_factor * *basis;
}

static double retry_share(const struct bt_eval *e)
{
    if (isnan(e->retries) || isnan(e->admitted))
        return NAN;
    double offered = e->admitted + bt_z(e->retries) + bt_z(e->rejected);
    return offered > 0 ? e->retries / offered : NAN;
}

bool bt_rule_throttled_below(const struct bt_config *cfg, const struct bt_route *r,
                             struct bt_eval *e, struct bt_warning *w)
{
    (void)r;
    if (e->mantle || isnan(e->throttles) || e->throttles <= 0 || isnan(e->estimated) ||
        isnan(e->quota) || e->quota <= 0 || e->estimated >= e->quota)
        return false;
    char est[32], q[32], cause[240];
    bt_fmt_si(e->estimated, est, sizeof est);
    bt_fmt_si(e->quota, q, sizeof q);
    double share = retry_share(e), basis;
    const struct bt_side_fig *rpm = &e->side[BT_SIDE_RPM];
    double tpd = bt_eval_tpd(e), today = bt_eval_group_today(e);
    double others_used = bt_eval_group_used(e) - bt_z(e->used);
    int nshared = bt_eval_nshared(e), nunknown = bt_eval_nunknown_others(e);
    /* rising only against a minute a poll asked for (coverage): an unknown one is not 0 */
    bool rising = e->server_errors > 0 && !isnan(e->server_errors_before) &&
                  e->server_errors > e->server_errors_before &&
                  e->throttles >= bt_z(e->throttles_before);
    if (rising && bt_capacity_evidence(e->server_errors, e->throttles)) {
        snprintf(cause, sizeof cause, "service capacity, not a quota: %.0f server errors/min rising "
                 "with the throttles (from %.0f five minutes before): 503/529 overloaded or "
                 "ModelNotReady", e->server_errors, bt_z(e->server_errors_before));
        w->action = act_capacity;
    } else if (rpm->applies && !isnan(rpm->pct) && rpm->pct <= 100 - 90) {
        char g[32], qq[32];
        bt_fmt_si(rpm->group_used, g, sizeof g);
        bt_fmt_si(rpm->quota, qq, sizeof qq);
        snprintf(cause, sizeof cause, "the requests-per-minute quota: %s requests accepted of %s "
                 "RPM%s (many short calls throttle with tokens to spare)", g, qq,
                 rpm->headroom_q == BT_QL_UPPER ? ", at least" : "");
        w->action = act_rpm;
    } else if (!isnan(tpd) && tpd > 0 && !isnan(today) && today >= tpd) {
        char t[32], d[32];
        bt_fmt_si(today, t, sizeof t);
        bt_fmt_si(tpd, d, sizeof d);
        if (e->side[BT_SIDE_DAILY_ACCOUNT].applies) /* pricing-weighted: an estimate */
            snprintf(cause, sizeof cause, "the account-wide cross-model daily quota looks used up "
                     "(about %s of %s, an estimate: it is pricing-weighted): calls throttle until "
                     "it resets at 00:00 UTC (assumed)", t, d);
        else
            snprintf(cause, sizeof cause, "the daily token quota is used up (%s of %s): calls "
                     "throttle until it resets at 00:00 UTC", t, d);
        w->action = act_daily;
    } else if (!isnan(share) && share > cfg->retry_share) {
        snprintf(cause, sizeof cause, "retries are %.0f%% of offered load (%.0f of %.0f calls/min): "
                 "a retry storm, throttles feeding on retries", 100 * share, e->retries,
                 e->admitted + bt_z(e->retries) + bt_z(e->rejected));
        w->action = act_retries;
    } else if (oversized(cfg, e, &basis)) {
        char res[32];
        bt_fmt_si(e->reservation, res, sizeof res);
        snprintf(cause, sizeof cause, "each call holds %s while in flight (max_tokens %.0f against "
                 "a %s output of %.0f), so about %.0f fit in flight at once and short bursts "
                 "throttle", res, e->max_tokens, !isnan(e->out_p99) ? "p99" : "mean", basis,
                 isnan(e->reservation) ? 0 : floor(e->quota / e->reservation));
        w->action = act_held;
    } else if (nshared > 0 && (others_used > 0 || nunknown > 0)) {
        char o[32];
        bt_fmt_si(others_used, o, sizeof o);
        snprintf(cause, sizeof cause, "the quota is shared: %d other route%s use%s %s%s TPM of it, "
                 "and callers outside the config are unseen", nshared, nshared == 1 ? "" : "s",
                 nshared == 1 ? "s" : "", nunknown ? "at least " : "", o);
        w->action = act_shared;
    } else if ((!isnan(e->in_flight) && !isnan(e->littles_in_flight) &&
                !strcmp(e->in_flight_source ? e->in_flight_source : "", "admission") &&
                e->in_flight > 1.5 * e->littles_in_flight + 1) ||
               (!isnan(e->queue_depth) && e->queue_depth > 0)) {
        snprintf(cause, sizeof cause, "bursts of concurrency: %.0f calls in flight now (queue %.0f) "
                 "against an average of %.1f (Little's law)", e->in_flight, bt_z(e->queue_depth),
                 bt_z(e->littles_in_flight));
        w->action = act_bursts;
    } else if (isnan(e->server_errors_before) && bt_capacity_evidence(e->server_errors, e->throttles)) {
        /* errors beside the throttles, but five minutes before was never asked for:
         * whether they rise with them (service capacity) is not known */
        snprintf(cause, sizeof cause, "the cause is not in the data: %.0f server errors/min beside "
                 "the throttles, but five minutes before was not read, so whether they rise with "
                 "them (service capacity) is unknown", e->server_errors);
        w->action = act_unseen;
    } else {
        snprintf(cause, sizeof cause, "the cause is not in the data: bursts shorter than a minute "
                 "or callers outside the config on this quota");
        w->action = act_unseen;
    }
    bt_rule_say(w, BT_ST_WARN, "%.0f throttles/min while EstimatedTPMQuotaUsage is %s of %s TPM (%.0f%%): %s",
        e->throttles, est, q, 100 * e->estimated / e->quota, cause);
    return true;
}

bool bt_rule_oversized(const struct bt_config *cfg, const struct bt_route *r,
                       struct bt_eval *e, struct bt_warning *w)
{
    (void)r;
    double basis;
    if (isnan(e->recommended_max_tokens) || !oversized(cfg, e, &basis))
        return false;
    bool p99 = !isnan(e->out_p99);
    char gain[2 * 32 + 48] = ""; /* both figures whole */
    if (!isnan(e->fits_more) && !isnan(e->fits_more_recommended)) {
        char now[32], rec[32];
        bt_fmt_si(e->fits_more, now, sizeof now);
        bt_fmt_si(e->fits_more_recommended, rec, sizeof rec);
        snprintf(gain, sizeof gain, " would fit %s more calls in flight instead of %s", rec, now);
    }
    /* "%.0f"'s text without printf's way for each (this rule fires for most routes of
     * a fleet whose max_tokens is a default: half of the dashboard's rule time) */
    char mt[BT_FIXED0_MAX], x[BT_FIXED0_MAX], b[BT_FIXED0_MAX], rec[BT_FIXED0_MAX],
        margin[BT_FIXED0_MAX];
    bt_rule_say(w, BT_ST_WARN,
        "max_tokens %s is %sx the observed %s output (%s tokens%s); recommended max_tokens "
        "%s (%s + %s%% margin)%s",
        bt_fmt_fixed0(e->max_tokens, mt, sizeof mt),
        bt_fmt_fixed0(e->max_tokens / basis, x, sizeof x), p99 ? "p99" : "mean",
        bt_fmt_fixed0(basis, b, sizeof b),
        p99 ? ", admission histogram" : ", OutputTokenCount/Invocations: no histogram, using the mean",
        bt_fmt_fixed0(e->recommended_max_tokens, rec, sizeof rec), p99 ? "p99" : "2 x mean",
        bt_fmt_fixed0(100 * cfg->oversize_margin, margin, sizeof margin), gain);
    return true;
}

bool bt_rule_retry_load(const struct bt_config *cfg, const struct bt_route *r,
                        struct bt_eval *e, struct bt_warning *w)
{
    (void)r;
    if (!isnan(e->retries) && !isnan(e->admitted)) {
        double offered = e->admitted + bt_z(e->retries) + bt_z(e->rejected);
        if (offered <= 0)
            return false;
        double share = e->retries / offered;
        if (share > cfg->retry_share) {
            bt_rule_say(w, share > 0.5 ? BT_ST_CRIT : BT_ST_WARN,
                "retries are %.0f%% of offered load (%.0f of %.0f calls/min); accepted completions "
                "%.0f/min: retries add load, not throughput",
                100 * share, e->retries, offered, bt_z(e->completed));
            return true;
        }
        if (e->offered_growth > 0.3 && fabs(e->accepted_growth) < 0.05) {
            bt_rule_say(w, BT_ST_WARN,
                "offered load rose %.0f%% over 5 minutes while accepted completions stayed flat "
                "(%+.0f%%): more callers are not adding throughput",
                100 * e->offered_growth, 100 * e->accepted_growth);
            return true;
        }
        return false;
    }
    /* with no quota every call throttles: NO_QUOTA says so, retries are not the story */
    if (isnan(e->throttles) || isnan(e->invocations) || e->quota == 0)
        return false;
    double offered = e->invocations + e->throttles;
    if (offered <= 0 || e->throttles / offered <= cfg->retry_share)
        return false;
    bt_rule_say(w, e->throttles / offered > 0.5 ? BT_ST_CRIT : BT_ST_WARN,
        "%.0f%% of calls are throttled (%.0f of %.0f/min, CloudWatch): callers' retries add "
        "offered load, not throughput; admission counters would show retries directly",
        100 * e->throttles / offered, e->throttles, offered);
    return true;
}

bool bt_rule_hidden_parallelism(const struct bt_config *cfg, const struct bt_route *r,
                                struct bt_eval *e, struct bt_warning *w)
{
    (void)cfg;
    (void)r;
    if (isnan(e->in_flight) || isnan(e->conc_limit) || e->in_flight <= e->conc_limit)
        return false;
    bt_rule_say(w, BT_ST_WARN,
        "%.0f model calls in flight (%s) against a tested concurrency of %.0f: calls made inside "
        "each worker multiply the worker cap (e.g. 10 workers x 4 calls = 40)",
        e->in_flight, e->in_flight_source ? e->in_flight_source : "?", e->conc_limit);
    return true;
}

static bool threshold_hit(const struct bt_threshold *t, const struct bt_side_fig *b)
{
    return t->pct ? b->pct < t->value : b->headroom < t->value;
}

/* How sure a headroom is, as a few words after the number. */
static const char *bound_words(enum bt_quality q)
{
    return q == BT_QL_UPPER      ? " at most"
           : q == BT_QL_LOWER    ? " at least"
           : q == BT_QL_ESTIMATE ? " about"
                                 : "";
}

/* HEAD%'s colour: the binding side against the thresholds, as LOW_HEADROOM reads it. */
enum bt_status bt_headroom_level(const struct bt_config *cfg, const struct bt_eval *e)
{
    if (e->quota == 0)
        return BT_ST_CRIT; /* a quota known to be 0: nothing fits */
    if (isnan(e->headroom_pct))
        return BT_ST_UNKNOWN;
    const struct bt_side_fig *b = &e->side[e->binding];
    bool tokens = e->binding != BT_SIDE_RPM;
    if ((cfg->crit.pct || tokens) && threshold_hit(&cfg->crit, b))
        return BT_ST_CRIT;
    if ((cfg->warn.pct || tokens) && threshold_hit(&cfg->warn, b))
        return BT_ST_WARN;
    return BT_ST_OK;
}
static const char act_low_runtime[] =
    "Shed or defer offline work, or request an increase of the Cross-Region TPM quota in Service "
    "Quotas (one request there can raise the on-demand and daily quotas too), or move traffic "
    "to another Region or inference profile.";
static const char act_low_mantle[] =
    "Shed or defer offline work, or open an AWS Support limit-increase case for the "
    "bedrock-mantle quota (mantle increases do not go through the Service Quotas console).";

bool bt_rule_low_headroom(const struct bt_config *cfg, const struct bt_route *r,
                          struct bt_eval *e, struct bt_warning *w)
{
    (void)r;
    const struct bt_side_fig *b = &e->side[e->binding];
    /* a daily side has its own thresholds (DAILY_QUOTA) */
    if (isnan(e->headroom_pct) || e->binding == BT_SIDE_DAILY || e->binding == BT_SIDE_DAILY_ACCOUNT)
        return false;
    enum bt_status sev;
    /* an absolute threshold is in tokens: it reads token sides only */
    bool tokens = e->binding != BT_SIDE_RPM && e->binding != BT_SIDE_CONCURRENT;
    if ((cfg->crit.pct || tokens) && threshold_hit(&cfg->crit, b))
        sev = BT_ST_CRIT;
    else if ((cfg->warn.pct || tokens) && threshold_hit(&cfg->warn, b))
        sev = BT_ST_WARN;
    else
        return false;
    char h[32], q[32], th[BT_FMT_LONG];
    bt_fmt_si(b->headroom, h, sizeof h);
    bt_fmt_si(b->quota, q, sizeof q);
    const struct bt_threshold *t = sev == BT_ST_CRIT ? &cfg->crit : &cfg->warn;
    if (t->pct) /* one formatter per figure: no "1e+06" for a threshold */
        bt_fmt_plain(t->value, 1, th, sizeof th);
    else
        bt_fmt_tokens(t->value, th, sizeof th);
    const char *side = e->binding == BT_SIDE_RES_INPUT || e->binding == BT_SIDE_RES_OUTPUT
                           ? "reserved"
                           : bt_side_name(e->binding);
    char which[64] = "";
    if (e->binding == BT_SIDE_RES_INPUT || e->binding == BT_SIDE_RES_OUTPUT)
        snprintf(which, sizeof which, " (reserved tier, %s)",
                 e->binding == BT_SIDE_RES_INPUT ? "input" : "output");
    w->action = e->mantle ? act_low_mantle : act_low_runtime;
    bt_rule_say(w, sev, "%s headroom%s %s of %s %s (%.1f%%%s) is below the %s threshold of %s%s: the %s "
        "quota binds%s%s", side, bound_words(b->headroom_q), h, q, bt_side_unit(e->binding),
        e->headroom_pct,
        b->headroom_q == BT_QL_LOWER ? ", from the per-minute upper bound of use" : "",
        sev == BT_ST_CRIT ? "critical" : "warning", th, t->pct ? "%" : " TPM", side, which,
        bt_eval_nshared(e) ? " (for the whole shared quota)" : "");
    return true;
}

/* mantle output and the reserved tier's output are counted as generated: when they
 * run out, answers stop mid-generation rather than throttle */
bool bt_rule_output_cutoff(const struct bt_config *cfg, const struct bt_route *r,
                           struct bt_eval *e, struct bt_warning *w)
{
    (void)r;
    static const enum bt_side outs[] = {BT_SIDE_OUTPUT, BT_SIDE_RES_OUTPUT};
    for (size_t i = 0; i < BT_ARRAY_LEN(outs); i++) {
        const struct bt_side_fig *f = &e->side[outs[i]];
        if (!f->applies || isnan(f->pct) || f->quota <= 0)
            continue;
        enum bt_status sev;
        if (threshold_hit(&cfg->crit, f))
            sev = BT_ST_CRIT;
        else if (threshold_hit(&cfg->warn, f))
            sev = BT_ST_WARN;
        else
            continue;
        char u[32], q[32];
        bt_fmt_si(f->group_used, u, sizeof u);
        bt_fmt_si(f->quota, q, sizeof q);
        bt_rule_say(w, sev,
            "%s output tokens %s of %s TPM (%.1f%% left%s): when it runs out, generation stops "
            "and answers come back cut off (a truncation finish reason), not throttled with 429",
            outs[i] == BT_SIDE_OUTPUT ? "mantle" : "reserved-tier", u, q, f->pct,
            bound_words(f->headroom_q));
        return true;
    }
    return false;
}

/* Calls got slower with no more traffic: each holds its reservation longer, so the
 * same calls take more of the quota (DOMAIN.md, TimeToFirstToken row). */
bool bt_rule_slowdown(const struct bt_config *cfg, const struct bt_route *r, struct bt_eval *e,
                      struct bt_warning *w)
{
    (void)cfg;
    (void)r;
    const struct bt_speed *s = &e->speed;
    if (e->state != BT_FR_ACTIVE || !s->slowdown)
        return false;
    bt_rule_say(w, BT_ST_WARN,
        "output tokens per second %.0f, %.0f%% below the trailing hour's %.0f, with %.0f calls/min "
        "against the hour's %.0f: each call holds its reservation longer, so headroom shrinks with "
        "no more traffic%s",
        s->otps, 100 * (1 - s->otps / s->otps_hour), s->otps_hour, s->inv, s->inv_hour,
        s->queueing ? "; time to first token rose with output per call flat: calls queue before "
                      "generating (service-side queueing)"
                    : "");
    return true;
}
