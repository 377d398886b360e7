#include "core/headroom.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/format.h"
#include "core/util.h"

const char *bt_status_name(enum bt_status s)
{
    static const char *const names[] = {"ok", "warn", "unknown", "crit"};
    return (unsigned)s < BT_ARRAY_LEN(names) ? names[s] : "unknown";
}

/* Monitoring-plugin convention: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN. */
int bt_status_exit(enum bt_status s)
{
    static const int codes[] = {0, 1, 3, 2};
    return (unsigned)s < BT_ARRAY_LEN(codes) ? codes[s] : 3;
}

/* Order of badness: ok < warn < unknown < crit (a known emergency beats doubt). */
enum bt_status bt_status_worse(enum bt_status a, enum bt_status b)
{
    return a > b ? a : b;
}

double bt_settled_tpm(double input, double cache_write, double output, double burndown)
{
    return input + cache_write + output * burndown;
}

double bt_littles_law(double invocations_per_min, double latency_avg_ms)
{
    if (isnan(invocations_per_min) || invocations_per_min < 0)
        return NAN;
    if (invocations_per_min == 0)
        return 0; /* no arrivals: nothing in flight, whatever the latency */
    if (isnan(latency_avg_ms) || latency_avg_ms < 0)
        return NAN;
    return invocations_per_min / 60 * (latency_avg_ms / 1000);
}

double bt_fits_more(double headroom_tpm, double reservation_per_call)
{
    if (isnan(headroom_tpm) || isnan(reservation_per_call) || reservation_per_call <= 0)
        return NAN;
    if (headroom_tpm <= 0)
        return 0;
    return floor(headroom_tpm / reservation_per_call);
}

const char *bt_side_name(enum bt_side s)
{
    return s == BT_SIDE_OUTPUT ? "output" : "input";
}

/* A route's quota code, where known (Service Quotas or config `quota_code`). */
static const char *route_quota_code(const struct bt_route *r)
{
    const struct bt_quota *q = &r->quota[r->endpoint == BT_EP_MANTLE ? BT_Q_INPUT_TPM : BT_Q_TPM];
    return q->code[0] ? q->code : r->endpoint == BT_EP_RUNTIME ? r->quota_code : "";
}

/* by model: account or profile, Region, endpoint, inference type, base model, and the
 * context-length variant (a 1M-context quota is not the 200K one) */
static void model_key(const struct bt_route *r, char *out, size_t n)
{
    snprintf(out, n, "%s|%s|%s|%s|%s|ctx=%s", r->account[0] ? r->account : r->profile,
             r->region, bt_endpoint_name(r->endpoint), bt_inference_name(r->inference),
             r->base_model[0] ? r->base_model : r->model, r->context);
}

void bt_quota_group_key(const struct bt_route *r, char *out, size_t n)
{
    const char *code = route_quota_code(r);
    if (code[0])
        snprintf(out, n, "%s|%s|%s|code=%s", r->account[0] ? r->account : r->profile, r->region,
                 bt_endpoint_name(r->endpoint), code);
    else
        model_key(r, out, n);
}

static double z(double v)
{
    return isnan(v) ? 0 : v;
}

static double nanmax(double a, double b)
{
    if (isnan(a))
        return b;
    if (isnan(b))
        return a;
    return a > b ? a : b;
}

/* Sums that stay unknown only when every term is. */
static double nanadd(double a, double b)
{
    return isnan(a) ? b : isnan(b) ? a : a + b;
}

/* "3 h 20 min", "45 min", "6.7 days" */
static void fmt_span(double seconds, char *out, size_t n)
{
    double min = seconds / 60;
    if (min < 1)
        snprintf(out, n, "under a minute");
    else if (min < 60)
        snprintf(out, n, "%.0f min", floor(min));
    else if (min < 48 * 60)
        snprintf(out, n, "%.0f h %.0f min", floor(min / 60), fmod(floor(min), 60));
    else
        snprintf(out, n, "%.1f days", min / 1440);
}

/* ---- the warning rules: one row each: {code, title, action, check} ---- */

typedef bool (*bt_rule_fn)(const struct bt_config *cfg, const struct bt_route *r,
                           struct bt_eval *e, struct bt_warning *w);

static void say(struct bt_warning *w, enum bt_status sev, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void say(struct bt_warning *w, enum bt_status sev, const char *fmt, ...)
{
    va_list ap;
    w->severity = sev;
    va_start(ap, fmt);
    vsnprintf(w->message, sizeof w->message, fmt, ap);
    va_end(ap);
}

static bool rule_estimate_only(const struct bt_config *cfg, const struct bt_route *r,
                               struct bt_eval *e, struct bt_warning *w)
{
    (void)cfg;
    (void)r;
    if (e->idle || !e->has_usage || !isnan(e->reservation) || !isnan(e->held))
        return false;
    char est[32];
    bt_fmt_si(e->mantle ? e->in_used : nanmax(e->estimated, e->settled), est, sizeof est);
    if (e->mantle)
        say(w, BT_ST_WARN,
            "input headroom counts completed input only (%s TPM): no admission counters and no "
            "max_tokens, so the input + max_tokens reservations that admission checks are unseen", est);
    else
        say(w, BT_ST_WARN,
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
static const char *const act_unseen =
    "Expose the admission counters (in-flight gauge, retries) to see bursts and retries, and look "
    "for callers outside the config on this quota.";

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
    double offered = e->admitted + z(e->retries) + z(e->rejected);
    return offered > 0 ? e->retries / offered : NAN;
}

static bool rule_throttled_below(const struct bt_config *cfg, const struct bt_route *r,
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
    if (!isnan(e->tpd) && e->tpd > 0 && !isnan(e->group_tokens_today) &&
        e->group_tokens_today >= e->tpd) {
        char t[32], d[32];
        bt_fmt_si(e->group_tokens_today, t, sizeof t);
        bt_fmt_si(e->tpd, d, sizeof d);
        snprintf(cause, sizeof cause, "the daily token quota is used up (%s of %s): calls throttle "
                 "until it resets at 00:00 UTC", t, d);
        w->action = act_daily;
    } else if (!isnan(share) && share > cfg->retry_share) {
        snprintf(cause, sizeof cause, "retries are %.0f%% of offered load (%.0f of %.0f calls/min): "
                 "a retry storm, throttles feeding on retries", 100 * share, e->retries,
                 e->admitted + z(e->retries) + z(e->rejected));
        w->action = act_retries;
    } else if (oversized(cfg, e, &basis)) {
        char res[32];
        bt_fmt_si(e->reservation, res, sizeof res);
        snprintf(cause, sizeof cause, "each call holds %s while in flight (max_tokens %.0f against "
                 "a %s output of %.0f), so about %.0f fit in flight at once and short bursts "
                 "throttle", res, e->max_tokens, !isnan(e->out_p99) ? "p99" : "mean", basis,
                 isnan(e->reservation) ? 0 : floor(e->quota / e->reservation));
        w->action = act_held;
    } else if (e->nshared > 0 && e->group_used - z(e->used) > 0) {
        char o[32];
        bt_fmt_si(e->group_used - z(e->used), o, sizeof o);
        snprintf(cause, sizeof cause, "the quota is shared: %d other route%s use%s %s TPM of it, "
                 "and callers outside the config are unseen", e->nshared, e->nshared == 1 ? "" : "s",
                 e->nshared == 1 ? "s" : "", o);
        w->action = act_shared;
    } else if ((!isnan(e->in_flight) && !isnan(e->littles_in_flight) &&
                !strcmp(e->in_flight_source ? e->in_flight_source : "", "admission") &&
                e->in_flight > 1.5 * e->littles_in_flight + 1) ||
               (!isnan(e->queue_depth) && e->queue_depth > 0)) {
        snprintf(cause, sizeof cause, "bursts of concurrency: %.0f calls in flight now (queue %.0f) "
                 "against an average of %.1f (Little's law)", e->in_flight, z(e->queue_depth),
                 z(e->littles_in_flight));
        w->action = act_bursts;
    } else {
        snprintf(cause, sizeof cause, "the cause is not in the data: bursts shorter than a minute "
                 "or callers outside the config on this quota");
        w->action = act_unseen;
    }
    say(w, BT_ST_WARN, "%.0f throttles/min while EstimatedTPMQuotaUsage is %s of %s TPM (%.0f%%): %s",
        e->throttles, est, q, 100 * e->estimated / e->quota, cause);
    return true;
}

static bool rule_oversized(const struct bt_config *cfg, const struct bt_route *r,
                           struct bt_eval *e, struct bt_warning *w)
{
    (void)r;
    double basis;
    if (isnan(e->recommended_max_tokens) || !oversized(cfg, e, &basis))
        return false;
    bool p99 = !isnan(e->out_p99);
    char gain[96] = "";
    if (!isnan(e->fits_more) && !isnan(e->fits_more_recommended)) {
        char now[32], rec[32];
        bt_fmt_si(e->fits_more, now, sizeof now);
        bt_fmt_si(e->fits_more_recommended, rec, sizeof rec);
        snprintf(gain, sizeof gain, " would fit %s more calls in flight instead of %s", rec, now);
    }
    say(w, BT_ST_WARN,
        "max_tokens %.0f is %.0fx the observed %s output (%.0f tokens%s); recommended max_tokens "
        "%.0f (%s + %.0f%% margin)%s",
        e->max_tokens, e->max_tokens / basis, p99 ? "p99" : "mean", basis,
        p99 ? ", admission histogram" : ", OutputTokenCount/Invocations: no histogram, using the mean",
        e->recommended_max_tokens, p99 ? "p99" : "2 x mean", 100 * cfg->oversize_margin, gain);
    return true;
}

static bool rule_retry_load(const struct bt_config *cfg, const struct bt_route *r,
                            struct bt_eval *e, struct bt_warning *w)
{
    (void)r;
    if (!isnan(e->retries) && !isnan(e->admitted)) {
        double offered = e->admitted + z(e->retries) + z(e->rejected);
        if (offered <= 0)
            return false;
        double share = e->retries / offered;
        if (share > cfg->retry_share) {
            say(w, share > 0.5 ? BT_ST_CRIT : BT_ST_WARN,
                "retries are %.0f%% of offered load (%.0f of %.0f calls/min); accepted completions "
                "%.0f/min: retries add load, not throughput",
                100 * share, e->retries, offered, z(e->completed));
            return true;
        }
        if (e->offered_growth > 0.3 && fabs(e->accepted_growth) < 0.05) {
            say(w, BT_ST_WARN,
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
    say(w, e->throttles / offered > 0.5 ? BT_ST_CRIT : BT_ST_WARN,
        "%.0f%% of calls are throttled (%.0f of %.0f/min, CloudWatch): callers' retries add "
        "offered load, not throughput; admission counters would show retries directly",
        100 * e->throttles / offered, e->throttles, offered);
    return true;
}

static bool rule_hidden_parallelism(const struct bt_config *cfg, const struct bt_route *r,
                                    struct bt_eval *e, struct bt_warning *w)
{
    (void)cfg;
    (void)r;
    if (isnan(e->in_flight) || isnan(e->conc_limit) || e->in_flight <= e->conc_limit)
        return false;
    say(w, BT_ST_WARN,
        "%.0f model calls in flight (%s) against a tested concurrency of %.0f: calls made inside "
        "each worker multiply the worker cap (e.g. 10 workers x 4 calls = 40)",
        e->in_flight, e->in_flight_source ? e->in_flight_source : "?", e->conc_limit);
    return true;
}

static bool threshold_hit(const struct bt_threshold *t, const struct bt_eval *e)
{
    return t->pct ? e->headroom_pct < t->value : e->headroom_tpm < t->value;
}

static const char act_low_runtime[] =
    "Shed or defer offline work, or request an increase of the Cross-Region TPM quota in Service "
    "Quotas (one request there can raise the on-demand and daily quotas too), or move traffic "
    "to another Region or inference profile.";
static const char act_low_mantle[] =
    "Shed or defer offline work, or open an AWS Support limit-increase case for the "
    "bedrock-mantle quota (mantle increases do not go through the Service Quotas console).";

static bool rule_low_headroom(const struct bt_config *cfg, const struct bt_route *r,
                              struct bt_eval *e, struct bt_warning *w)
{
    (void)r;
    if (isnan(e->headroom_pct))
        return false;
    enum bt_status sev;
    if (threshold_hit(&cfg->crit, e))
        sev = BT_ST_CRIT;
    else if (threshold_hit(&cfg->warn, e))
        sev = BT_ST_WARN;
    else
        return false;
    char h[32], q[32], th[BT_FMT_LONG], side[40] = "";
    bt_fmt_si(e->headroom_tpm, h, sizeof h);
    bt_fmt_si(e->quota, q, sizeof q);
    const struct bt_threshold *t = sev == BT_ST_CRIT ? &cfg->crit : &cfg->warn;
    if (t->pct) /* one formatter per figure: no "1e+06" for a threshold */
        bt_fmt_plain(t->value, 1, th, sizeof th);
    else
        bt_fmt_tokens(t->value, th, sizeof th);
    if (e->mantle)
        snprintf(side, sizeof side, " (%s quota binds)", bt_side_name(e->binding));
    w->action = e->mantle ? act_low_mantle : act_low_runtime;
    say(w, sev, "headroom %s of %s TPM (%.1f%%%s) is below the %s threshold of %s%s%s%s", h, q,
        e->headroom_pct, e->upper_bound ? ", from the per-minute upper bound" : "",
        sev == BT_ST_CRIT ? "critical" : "warning", th, t->pct ? "%" : " TPM", side,
        e->nshared ? " (for the whole shared quota)" : "");
    return true;
}

static bool rule_quota_default(const struct bt_config *cfg, const struct bt_route *r,
                               struct bt_eval *e, struct bt_warning *w)
{
    (void)cfg;
    (void)r;
    if (e->quota_source != BT_QS_DEFAULT && e->quota_source != BT_QS_CONFIG)
        return false;
    if (e->quota_source == BT_QS_DEFAULT)
        say(w, BT_ST_OK,
            "quota is AWS's published default, not the value applied to this account; applied "
            "values can be lower");
    else
        say(w, BT_ST_OK, "quota comes from the config, not from Service Quotas");
    return true;
}

/* A mantle model AWS publishes no quota for (collectors/quotas.c says so in the
 * quota's unknown reason). */
static bool mantle_unpublished(const struct bt_route *r, const struct bt_eval *e)
{
    const struct bt_quota *q = &r->quota[BT_Q_INPUT_TPM];
    return e->mantle && isnan(q->value) &&
           strncmp(q->name, BT_MANTLE_NO_QUOTA, strlen(BT_MANTLE_NO_QUOTA)) == 0;
}

static const char act_mantle_support[] =
    "Mantle increases go through an AWS Support limit-increase case (not the Service Quotas "
    "console): give steady-state and peak input/output TPM and average input tokens per "
    "request.";

static bool rule_no_published(const struct bt_config *cfg, const struct bt_route *r,
                              struct bt_eval *e, struct bt_warning *w)
{
    (void)cfg;
    if (!mantle_unpublished(r, e))
        return false;
    say(w, BT_ST_OK,
        "%s for %s on bedrock-mantle: AWS governs it by internal service capacity, so headroom "
        "against a quota cannot be shown; usage is shown as measured",
        BT_MANTLE_NO_QUOTA, r->base_model[0] ? r->base_model : r->model);
    w->action = act_mantle_support;
    return true;
}

static bool rule_provisioned(const struct bt_config *cfg, const struct bt_route *r,
                             struct bt_eval *e, struct bt_warning *w)
{
    (void)cfg;
    (void)e;
    if (r->inference != BT_INF_PROVISIONED)
        return false;
    say(w, BT_ST_OK,
        "Provisioned Throughput (%s): reserved model-unit capacity, not an on-demand "
        "tokens-per-minute quota; it is in no quota group and its usage is shown as measured",
        r->model);
    return true;
}

static bool rule_legacy(const struct bt_config *cfg, const struct bt_route *r, struct bt_eval *e,
                        struct bt_warning *w)
{
    (void)cfg;
    (void)e;
    if (!r->legacy_seen)
        return false;
    say(w, BT_ST_OK,
        "CloudWatch lists LegacyModelInvocations for %s: calls went to a model AWS lists as "
        "legacy, and AWS refuses quota increases for it",
        r->model);
    return true;
}

static bool rule_quota_unknown(const struct bt_config *cfg, const struct bt_route *r,
                               struct bt_eval *e, struct bt_warning *w)
{
    (void)cfg;
    if (!isnan(e->quota) || r->inference == BT_INF_PROVISIONED || mantle_unpublished(r, e))
        return false;
    /* the quotas collector keeps why in the quota's name while it is unknown */
    const struct bt_quota *q = &r->quota[e->mantle ? BT_Q_INPUT_TPM : BT_Q_TPM];
    say(w, BT_ST_UNKNOWN,
        "no %s quota known for %s: headroom cannot be computed%s%s%s",
        e->mantle ? "input/output TPM" : "tokens-per-minute", r->model,
        isnan(q->value) && q->name[0] ? " (" : "", isnan(q->value) ? q->name : "",
        isnan(q->value) && q->name[0] ? ")" : "");
    return true;
}

static bool rule_stale(const struct bt_config *cfg, const struct bt_route *r,
                       struct bt_eval *e, struct bt_warning *w)
{
    (void)cfg;
    (void)r;
    if (!e->stale)
        return false;
    say(w, BT_ST_UNKNOWN, "%s", e->stale_reason);
    return true;
}

/* When the daily quota runs out at the current rate, counted from the evaluated
 * minute: "at 14:10 UTC today (in 3 h 20 min)", or not before the 00:00 UTC reset. */
static void daily_runout(int64_t minute, double remaining, double rate, char *out, size_t n)
{
    int64_t midnight = minute - (minute % 86400) + 86400;
    char span[32], hm[8];
    if (remaining <= 0) {
        fmt_span((double)(midnight - minute), span, sizeof span);
        snprintf(out, n, "; used up: calls throttle until the reset at 00:00 UTC (in %s)", span);
        return;
    }
    if (!(rate > 0)) {
        snprintf(out, n, "; no tokens charged now, so it lasts until the 00:00 UTC reset");
        return;
    }
    double secs = remaining / rate * 60;
    fmt_span(secs, span, sizeof span);
    if ((double)minute + secs >= (double)midnight) {
        char left[32];
        fmt_span((double)(midnight - minute), left, sizeof left);
        snprintf(out, n, "; at the current rate it would last %s, so it does not run out before "
                 "the reset at 00:00 UTC (in %s)", span, left);
        return;
    }
    bt_fmt_hhmm(minute + (int64_t)secs, hm, sizeof hm);
    snprintf(out, n, "; at the current rate it runs out at %s UTC today (in %s)", hm, span);
}

static bool rule_daily(const struct bt_config *cfg, const struct bt_route *r,
                       struct bt_eval *e, struct bt_warning *w)
{
    (void)r;
    if (isnan(e->tpd) || e->tpd <= 0 || isnan(e->group_tokens_today))
        return false;
    double pct = 100 * e->group_tokens_today / e->tpd;
    if (pct < cfg->daily_warn_pct)
        return false;
    char t[32], q[32], when[200];
    bt_fmt_si(e->group_tokens_today, t, sizeof t);
    bt_fmt_si(e->tpd, q, sizeof q);
    daily_runout(e->minute ? e->minute : bt_minute_floor(e->now), e->tpd - e->group_tokens_today,
                 e->daily_rate, when, sizeof when);
    say(w, pct >= cfg->daily_crit_pct ? BT_ST_CRIT : BT_ST_WARN,
        "%s tokens used today of the %s daily quota (%.0f%%%s)%s", t, q, pct,
        e->nshared ? ", whole shared quota" : "", when);
    return true;
}

static bool rule_batch(const struct bt_config *cfg, const struct bt_route *r, struct bt_eval *e,
                       struct bt_warning *w)
{
    (void)cfg;
    if (r->priority != BT_PRIO_OFFLINE || isnan(e->used) || e->used <= 0)
        return false;
    char u[32];
    bt_fmt_si(e->used, u, sizeof u);
    say(w, BT_ST_OK,
        "offline route uses %s TPM of online quota; if its work needs no tools or multi-turn, a "
        "batch inference job (CreateModelInvocationJob) frees this quota for online routes", u);
    return true;
}

static bool rule_no_quota(const struct bt_config *cfg, const struct bt_route *r,
                          struct bt_eval *e, struct bt_warning *w)
{
    (void)cfg;
    bool in0 = e->mantle && e->in_quota == 0, out0 = e->mantle && e->out_quota == 0;
    if (!(e->quota == 0 || in0 || out0))
        return false;
    char thr[48] = "";
    if (!isnan(e->throttles) && e->throttles > 0)
        snprintf(thr, sizeof thr, "; %.0f throttles/min", e->throttles);
    if (e->mantle)
        w->action = "Request model access, or open an AWS Support limit-increase case for the "
                    "bedrock-mantle quota (not the Service Quotas console), or send this traffic "
                    "to a Region that has quota.";
    say(w, BT_ST_CRIT,
        "the applied %s quota for %s in %s is 0 (%s%s%s): the account has no usable quota, "
        "every call will throttle%s",
        e->mantle ? (in0 ? "input tokens-per-minute" : "output tokens-per-minute")
                  : "tokens-per-minute",
        r->base_model[0] ? r->base_model : r->model, r->region,
        bt_quota_source_name(e->quota_source), e->quota_code[0] ? " " : "", e->quota_code, thr);
    return true;
}

static bool rule_shared(const struct bt_config *cfg, const struct bt_route *r,
                        struct bt_eval *e, struct bt_warning *w)
{
    (void)r;
    if (e->nshared <= 0)
        return false;
    char names[200] = "";
    size_t len = 0;
    for (int i = 0; i < e->nshared && i < BT_MAX_SHARED; i++) {
        int n = snprintf(names + len, sizeof names - len, "%s%s", i ? ", " : "",
                         cfg->routes[e->shared_with[i]].name);
        if (n < 0 || (size_t)n >= sizeof names - len)
            break;
        len += (size_t)n;
    }
    char others[32], u[32];
    bt_fmt_si(e->group_used - z(e->used), others, sizeof others);
    bt_fmt_si(e->group_used, u, sizeof u);
    say(w, BT_ST_OK,
        "the %s quota%s%s is shared with %s%s (they use %s TPM; %s together): headroom is the "
        "quota's, and callers outside the config on it are invisible here",
        e->mantle ? "input/output" : "tokens-per-minute", e->quota_code[0] ? " " : "",
        e->quota_code, names, e->nshared > BT_MAX_SHARED ? " and more" : "", others, u);
    return true;
}

/* Burndown measured from AWS's estimate, compared with the table or config. */
static bool burndown_disagrees(double measured, double expected)
{
    return !isnan(measured) && fabs(measured - expected) > fmax(0.5, 0.2 * expected);
}

static bool rule_burndown_mismatch(const struct bt_config *cfg, const struct bt_route *r,
                                   struct bt_eval *e, struct bt_warning *w)
{
    (void)cfg;
    if (e->mantle || !burndown_disagrees(e->burndown_measured, e->burndown))
        return false;
    const char *src = e->burndown_source ? e->burndown_source : "default";
    say(w, BT_ST_WARN,
        "EstimatedTPMQuotaUsage implies burndown %.2f ((estimate - input - cache write) / output) "
        "but %s gives %g for %s%s%s%s: settled tokens and headroom use %g",
        e->burndown_measured,
        !strcmp(src, "config") ? "the config" : !strcmp(src, "table") ? "the burndown table"
                                                                      : "no table entry (default)",
        e->burndown, r->base_model[0] ? r->base_model : r->model,
        strcmp(src, "config") && r->burndown_row[0] ? " (row " : "",
        strcmp(src, "config") ? r->burndown_row : "",
        strcmp(src, "config") && r->burndown_row[0] ? ")" : "", e->burndown);
    return true;
}

static const struct {
    enum bt_wcode code;
    const char *name;
    const char *title;
    const char *action;
    bt_rule_fn check;
} rules[BT_W_COUNT] = {
    {BT_W_ESTIMATE_ONLY, "ESTIMATE_ONLY", "headroom rests on the estimate alone",
     "Expose the admission counters (reserved tokens) or set max_tokens for this route; until "
     "then the headroom shown can be far too optimistic.", rule_estimate_only},
    {BT_W_THROTTLED_BELOW_ESTIMATE, "THROTTLED_BELOW_ESTIMATE", "throttled below the estimate",
     "Act on the cause named: the remedy differs for held reservations, bursts, retries, the "
     "daily quota and other callers on a shared quota.", rule_throttled_below},
    {BT_W_OVERSIZED_MAX_TOKENS, "OVERSIZED_MAX_TOKENS", "max_tokens far above observed output",
     "Lower max_tokens to the recommended value, then watch for truncated answers "
     "(stop_reason max_tokens).", rule_oversized},
    {BT_W_RETRY_LOAD, "RETRY_LOAD", "retries are a large share of load",
     "Cap retries with a retry budget and back off with jitter; shed or queue offered load at "
     "the admission boundary instead of retrying into the quota.", rule_retry_load},
    {BT_W_HIDDEN_PARALLELISM, "HIDDEN_PARALLELISM", "more calls in flight than tested",
     "Bound model calls per worker with a semaphore so workers x calls stays within the tested "
     "concurrency.", rule_hidden_parallelism},
    {BT_W_LOW_HEADROOM, "LOW_HEADROOM", "low headroom",
     "Shed or defer offline work, request a quota increase, or move traffic to another Region "
     "or inference profile.", rule_low_headroom},
    {BT_W_QUOTA_DEFAULT, "QUOTA_DEFAULT", "quota not from the account",
     "Check the applied value in Service Quotas (permissions servicequotas:ListServiceQuotas) "
     "or set quota_code for this route.", rule_quota_default},
    {BT_W_QUOTA_UNKNOWN, "QUOTA_UNKNOWN", "quota unknown",
     "Set quota_code (or quota_tpm) for this route, or grant servicequotas:ListServiceQuotas.",
     rule_quota_unknown},
    {BT_W_STALE, "STALE", "data stale",
     "Check the collector error shown in the status bar (credentials, network, permissions); "
     "numbers shown are from the last good poll.", rule_stale},
    {BT_W_DAILY_QUOTA, "DAILY_QUOTA", "daily token quota nearly used",
     "Defer offline work to tomorrow or to a batch job, or request a daily quota increase.",
     rule_daily},
    {BT_W_BATCH_CANDIDATE, "BATCH_CANDIDATE", "offline work on online quota",
     "Move this backlog to a Bedrock batch inference job if it needs no tools, multi-turn or "
     "structured output.", rule_batch},
    {BT_W_NO_QUOTA, "NO_QUOTA", "no usable quota",
     "Request model access or a quota increase in Service Quotas for this model and Region, or "
     "send this traffic to a Region or inference profile that has quota.", rule_no_quota},
    {BT_W_SHARED_QUOTA, "SHARED_QUOTA", "quota shared with other routes",
     "Read headroom as the quota's, not the route's; give each caller a share at its admission "
     "boundary if one must not starve the others.", rule_shared},
    {BT_W_BURNDOWN_MISMATCH, "BURNDOWN_MISMATCH", "burndown differs from the estimate",
     "Check the model's burndown in AWS's quota documentation and correct data/burndown.conf or "
     "the route's burndown key.", rule_burndown_mismatch},
    {BT_W_LEGACY_MODEL, "LEGACY_MODEL", "legacy model",
     "Plan the move to a current model: AWS refuses quota increases for legacy models.",
     rule_legacy},
    {BT_W_NO_PUBLISHED_QUOTA, "NO_PUBLISHED_QUOTA", "no published quota (internal capacity)",
     act_mantle_support, rule_no_published},
    {BT_W_PROVISIONED, "PROVISIONED", "provisioned throughput",
     "Size it in model units (Provisioned Throughput); it draws on no on-demand quota.",
     rule_provisioned},
};

const char *bt_wcode_name(enum bt_wcode c)
{
    return (unsigned)c < BT_W_COUNT ? rules[c].name : "?";
}

const char *bt_wcode_title(enum bt_wcode c)
{
    return (unsigned)c < BT_W_COUNT ? rules[c].title : "?";
}

const char *bt_wcode_action(enum bt_wcode c)
{
    return (unsigned)c < BT_W_COUNT ? rules[c].action : "";
}

int bt_wcode_by_name(const char *name)
{
    for (int i = 0; i < BT_W_COUNT; i++)
        if (strcmp(rules[i].name, name) == 0)
            return i;
    return -1;
}

bool bt_eval_has(const struct bt_eval *e, enum bt_wcode code)
{
    for (int i = 0; i < e->nwarn; i++)
        if (e->warnings[i].code == code)
            return true;
    return false;
}

/* ---- evaluation ---- */

static const enum bt_signal usage_signals[] = {
    BT_SIG_INVOCATIONS, BT_SIG_INPUT_TOKENS, BT_SIG_OUTPUT_TOKENS, BT_SIG_ESTIMATED_TPM,
    BT_SIG_THROTTLES,
};
static const enum bt_signal adm_signals[] = {
    BT_SIG_ADM_RESERVED, BT_SIG_ADM_IN_FLIGHT, BT_SIG_ADM_ADMITTED, BT_SIG_ADM_MAX_TOKENS,
    BT_SIG_ADM_RESERVED_HELD,
};

static double at(const struct bt_store *st, int r, enum bt_signal s, int64_t m)
{
    return m ? bt_store_at(st, r, s, m) : NAN;
}

/* What the figures of one minute are computed from. */
struct raw {
    double inv, input, output, cache_read, cache_write, estimated, lat_avg;
    double adm_in_flight, adm_held, adm_reserved, adm_admitted, max_tokens;
};

/* CloudWatch at minute m (idle: a successful poll found no datapoints, so every
 * count is 0), admission counters at minute am. */
static void read_raw(const struct bt_store *st, int r, const struct bt_route *rt, int64_t m,
                     int64_t am, bool idle, struct raw *x)
{
    x->inv = at(st, r, BT_SIG_INVOCATIONS, m);
    x->input = at(st, r, BT_SIG_INPUT_TOKENS, m);
    x->output = at(st, r, BT_SIG_OUTPUT_TOKENS, m);
    x->cache_read = at(st, r, BT_SIG_CACHE_READ, m);
    x->cache_write = at(st, r, BT_SIG_CACHE_WRITE, m);
    x->estimated = at(st, r, BT_SIG_ESTIMATED_TPM, m);
    x->lat_avg = at(st, r, BT_SIG_LATENCY_AVG, m);
    if (idle) {
        x->inv = x->input = x->output = x->cache_read = x->cache_write = 0;
        x->estimated = NAN; /* AWS may not publish it for this model at all: not claimed */
    }
    if (isnan(x->inv) && at(st, r, BT_SIG_THROTTLES, m) > 0)
        x->inv = 0; /* only throttles this minute: nothing was accepted */
    x->adm_in_flight = at(st, r, BT_SIG_ADM_IN_FLIGHT, am);
    x->adm_held = at(st, r, BT_SIG_ADM_RESERVED_HELD, am);
    x->adm_reserved = at(st, r, BT_SIG_ADM_RESERVED, am);
    x->adm_admitted = at(st, r, BT_SIG_ADM_ADMITTED, am);
    x->max_tokens = rt->max_tokens;
    double gauge_mt = at(st, r, BT_SIG_ADM_MAX_TOKENS, am);
    if (!isnan(gauge_mt))
        x->max_tokens = gauge_mt; /* what callers really request beats the config */
}

/* The contract, once: R, in flight, held, settled, reserved per minute, used. */
static void figures(const struct bt_route *rt, const struct raw *x, struct bt_minute_fig *f)
{
    bool mantle = rt->endpoint == BT_EP_MANTLE;
    memset(f, 0, sizeof *f);
    f->settled = f->estimated = f->reservation = f->in_flight = f->held = NAN;
    f->reserved_per_min = f->used = NAN;
    /* total input per call: cache reads and writes are reserved at start (runtime);
     * mantle's input quota does not count cache reads */
    double total_in = mantle ? z(x->input) : z(x->input) + z(x->cache_read) + z(x->cache_write);
    if (!isnan(x->adm_reserved) && !isnan(x->adm_admitted) && x->adm_admitted > 0) {
        f->reservation = x->adm_reserved / x->adm_admitted;
        f->reservation_source = "admission";
    } else if (!isnan(x->max_tokens) && !isnan(x->inv) && x->inv > 0) {
        f->reservation = total_in / x->inv + x->max_tokens;
        f->reservation_source = "cloudwatch";
    }
    if (!isnan(x->adm_in_flight)) {
        f->in_flight = x->adm_in_flight;
        f->in_flight_source = "admission";
    } else if (!isnan(bt_littles_law(x->inv, x->lat_avg))) {
        f->in_flight = bt_littles_law(x->inv, x->lat_avg);
        f->in_flight_source = "littles-law";
    }
    if (!isnan(x->adm_held)) {
        f->held = x->adm_held;
        f->held_source = "admission";
    } else if (!isnan(f->in_flight) && (f->in_flight == 0 || !isnan(f->reservation))) {
        f->held = f->in_flight == 0 ? 0 : f->in_flight * f->reservation;
        f->held_source = f->in_flight_source;
    }
    if (!isnan(x->adm_reserved)) {
        f->reserved_per_min = x->adm_reserved;
        f->reserved_source = "admission";
    } else if (!isnan(x->inv) && (x->inv == 0 || !isnan(f->reservation))) {
        f->reserved_per_min = x->inv == 0 ? 0 : x->inv * f->reservation;
        f->reserved_source = "cloudwatch";
    }
    if (mantle)
        f->settled = x->input;
    else if (!isnan(x->input) || !isnan(x->output))
        f->settled = bt_settled_tpm(z(x->input), z(x->cache_write), z(x->output), rt->burndown);
    f->estimated = mantle ? NAN : x->estimated;
    double base = nanmax(f->settled, f->estimated);
    if (!isnan(f->held)) {
        f->used = z(base) + f->held;
    } else if (!isnan(f->reserved_per_min)) {
        /* in flight unknown: every reservation of the minute, an upper bound */
        f->used = nanmax(base, f->reserved_per_min);
        f->upper_bound = true;
        f->held_source = "upper-bound";
    } else {
        f->used = base;
    }
}

void bt_minute_figures(const struct bt_config *cfg, const struct bt_store *st, int r,
                       int64_t minute, struct bt_minute_fig *out)
{
    struct raw x;
    minute = bt_minute_floor(minute);
    read_raw(st, r, &cfg->routes[r], minute, minute, false, &x);
    figures(&cfg->routes[r], &x, out);
    if (isnan(x.inv) && isnan(x.input) && isnan(x.output) && isnan(x.estimated) &&
        isnan(x.adm_in_flight) && isnan(x.adm_reserved))
        *out = (struct bt_minute_fig){NAN, NAN, NAN, NAN, NAN, NAN, NAN, false, NULL, NULL,
                                      NULL, NULL};
}

/* Settled tokens per minute at minute m (NAN without token counts). */
static double settled_at(const struct bt_store *st, int r, const struct bt_route *rt, int64_t m)
{
    double in = bt_store_at(st, r, BT_SIG_INPUT_TOKENS, m);
    double out = bt_store_at(st, r, BT_SIG_OUTPUT_TOKENS, m);
    if (isnan(in) && isnan(out))
        return NAN;
    return bt_settled_tpm(z(in), z(bt_store_at(st, r, BT_SIG_CACHE_WRITE, m)), z(out),
                          rt->burndown);
}

static bool source_failing(const struct bt_source_status *s)
{
    return s->last_error && s->last_error >= s->last_ok;
}

/* How long a source may go without a good poll before its data is stale. */
static int64_t stale_after(const struct bt_config *cfg)
{
    double s = 3 * cfg->interval;
    return (int64_t)(s > 300 ? s : 300);
}

/* STALE only when a source failed or stopped answering; an idle route is not stale. */
static void check_staleness(const struct bt_config *cfg, const struct bt_store *st, int r,
                            struct bt_eval *e)
{
    const struct bt_source_status *cw = bt_store_status_c(st, r, BT_SRC_CLOUDWATCH);
    const struct bt_source_status *adm = bt_store_status_c(st, r, BT_SRC_ADMISSION);
    char hm[8];
    if (source_failing(cw)) {
        e->stale = true;
        if (e->minute) {
            bt_fmt_hhmm(e->minute, hm, sizeof hm);
            snprintf(e->stale_reason, sizeof e->stale_reason, "CloudWatch failing (%s); newest data %s UTC",
                     cw->error, hm);
        } else {
            snprintf(e->stale_reason, sizeof e->stale_reason, "CloudWatch failing (%s); no data yet",
                     cw->error);
        }
    } else if (cw->last_ok && e->now - cw->last_ok > stale_after(cfg)) {
        e->stale = true;
        bt_fmt_hhmm(cw->last_ok, hm, sizeof hm);
        snprintf(e->stale_reason, sizeof e->stale_reason,
                 "CloudWatch has not answered since %s UTC (%.0f min): collector stopped", hm,
                 (double)(e->now - cw->last_ok) / 60);
    } else if (!e->minute && !cw->last_ok && !adm->last_ok) {
        e->stale = true;
        snprintf(e->stale_reason, sizeof e->stale_reason, "no data yet: CloudWatch has not answered");
    }
    if (source_failing(adm)) {
        char why[224];
        snprintf(why, sizeof why, "admission counters failing (%s)", adm->error);
        if (e->stale) {
            size_t n = strlen(e->stale_reason);
            snprintf(e->stale_reason + n, sizeof e->stale_reason - n, "; %s", why);
        } else {
            bt_strlcpy(e->stale_reason, why, sizeof e->stale_reason);
        }
        e->stale = true;
    } else if (e->adm_minute && e->adm_minute < bt_minute_floor(e->now) - 180 - (int64_t)cfg->interval &&
               !e->stale) {
        e->stale = true;
        bt_fmt_hhmm(e->adm_minute, hm, sizeof hm);
        snprintf(e->stale_reason, sizeof e->stale_reason, "admission counters silent since %s UTC", hm);
    }
}

/* Growth of a per-minute series over the last 5 minutes (first vs last), NAN if unknown. */
static double growth(const struct bt_store *st, int r, const enum bt_signal *sigs, int n,
                     int64_t m)
{
    double a = 0, b = 0;
    for (int i = 0; i < n; i++) {
        double x = bt_store_at(st, r, sigs[i], m - 240);
        double y = bt_store_at(st, r, sigs[i], m);
        if (isnan(x) || isnan(y))
            return NAN;
        a += x;
        b += y;
    }
    return a > 0 ? (b - a) / a : NAN;
}

/* The CloudWatch minute to evaluate: the newest complete one given the publishing
 * lag. A route whose newest datapoint is older than what the last successful poll
 * could see (one minute of slack for late publishing) went idle: CloudWatch
 * publishes nothing for a minute without calls. */
static int64_t pick_minute(const struct bt_config *cfg, const struct bt_store *st, int r,
                           int64_t now, bool *idle)
{
    int64_t lag = (int64_t)cfg->cw_lag;
    int64_t expect = bt_minute_floor(now - lag) - 60;
    int64_t newest = 0, fresher = 0;
    for (size_t i = 0; i < BT_ARRAY_LEN(usage_signals); i++) {
        int64_t m = bt_store_newest(st, r, usage_signals[i], expect);
        int64_t f = bt_store_newest(st, r, usage_signals[i], now);
        newest = m > newest ? m : newest;
        fresher = f > fresher ? f : fresher;
    }
    const struct bt_source_status *cw = bt_store_status_c(st, r, BT_SRC_CLOUDWATCH);
    *idle = false;
    if (!cw->last_ok || source_failing(cw) || now - cw->last_ok > stale_after(cfg))
        return newest; /* no recent good poll: what there is, and STALE says why */
    if (fresher > expect)
        return newest; /* calls in a minute not complete yet: not idle */
    int64_t seen = bt_minute_floor((cw->last_ok < now ? cw->last_ok : now) - lag) - 60;
    if (newest && newest >= seen - 60)
        return newest;
    *idle = true;
    return seen > newest ? seen : newest + 60;
}

/* Everything about one route that does not depend on the other routes. */
static void eval_route_part(const struct bt_config *cfg, const struct bt_store *st, int r,
                            int64_t now, struct bt_eval *e)
{
    const struct bt_route *rt = &cfg->routes[r];
    memset(e, 0, sizeof *e);
    e->route = r;
    e->now = now;
    e->mantle = rt->endpoint == BT_EP_MANTLE;
    double *nans[] = {&e->settled, &e->estimated, &e->held, &e->used, &e->reserved_per_min,
                      &e->reservation, &e->in_flight, &e->group_used, &e->quota,
                      &e->headroom_tpm, &e->headroom_pct, &e->fits_more, &e->in_quota,
                      &e->in_used, &e->in_group_used, &e->in_headroom, &e->in_pct,
                      &e->out_quota, &e->out_used, &e->out_group_used, &e->out_headroom,
                      &e->out_pct, &e->burndown_measured, &e->avg_input, &e->avg_output,
                      &e->recommended_max_tokens, &e->fits_more_recommended, &e->tokens_today,
                      &e->group_tokens_today, &e->tpd, &e->daily_rate, &e->offered_growth,
                      &e->accepted_growth, &e->littles_in_flight};
    for (size_t i = 0; i < BT_ARRAY_LEN(nans); i++)
        *nans[i] = NAN;
    e->burndown = rt->burndown;
    e->burndown_source = rt->burndown_source;

    int64_t m = e->minute = pick_minute(cfg, st, r, now, &e->idle);
    for (size_t i = 0; i < BT_ARRAY_LEN(adm_signals); i++) {
        int64_t am = bt_store_newest(st, r, adm_signals[i], now);
        if (am > e->adm_minute)
            e->adm_minute = am;
    }
    int64_t am = e->adm_minute;
    struct raw x;
    read_raw(st, r, rt, m, am, e->idle, &x);
    struct bt_minute_fig f;
    figures(rt, &x, &f);
    e->settled = f.settled;
    e->estimated = f.estimated;
    e->reservation = f.reservation;
    e->in_flight = f.in_flight;
    e->held = f.held;
    e->reserved_per_min = f.reserved_per_min;
    e->used = f.used;
    e->upper_bound = f.upper_bound;
    e->reservation_source = f.reservation_source;
    e->in_flight_source = f.in_flight_source;
    e->held_source = f.held_source;
    e->reserved_source = f.reserved_source;
    e->has_usage = e->idle || !isnan(e->settled) || !isnan(e->estimated) ||
                   !isnan(e->reserved_per_min) || !isnan(e->held);

    e->invocations = x.inv;
    e->input_tokens = x.input;
    e->output_tokens = x.output;
    e->cache_read = x.cache_read;
    e->cache_write = x.cache_write;
    e->lat_avg = x.lat_avg;
    e->throttles = e->idle ? 0 : at(st, r, BT_SIG_THROTTLES, m);
    e->lat_p50 = at(st, r, BT_SIG_LATENCY_P50, m);
    e->lat_p90 = at(st, r, BT_SIG_LATENCY_P90, m);
    e->lat_p99 = at(st, r, BT_SIG_LATENCY_P99, m);
    e->littles_in_flight = bt_littles_law(x.inv, x.lat_avg);
    e->max_tokens = x.max_tokens;
    if (!isnan(x.inv) && x.inv > 0) {
        e->avg_input = (e->mantle ? z(x.input) : z(x.input) + z(x.cache_read) + z(x.cache_write)) /
                       x.inv;
        if (!isnan(x.output))
            e->avg_output = x.output / x.inv;
    }
    if (e->mantle) {
        e->in_used = e->used;
        e->out_used = x.output;
    } else if (!isnan(x.estimated) && !isnan(x.output) && x.output >= 100) {
        /* AWS's estimate is the completion-time charge: solve it for the burndown */
        e->burndown_measured = (x.estimated - z(x.input) - z(x.cache_write)) / x.output;
    }

    e->conc_limit = at(st, r, BT_SIG_ADM_CONC_LIMIT, am);
    if (isnan(e->conc_limit))
        e->conc_limit = rt->concurrency_limit;
    e->queue_depth = at(st, r, BT_SIG_ADM_QUEUE, am);
    e->admitted = x.adm_admitted;
    e->rejected = at(st, r, BT_SIG_ADM_REJECTED, am);
    e->retries = at(st, r, BT_SIG_ADM_RETRIES, am);
    e->completed = at(st, r, BT_SIG_ADM_COMPLETED, am);
    e->adm_throttled = at(st, r, BT_SIG_ADM_THROTTLED, am);
    e->adm_settled = at(st, r, BT_SIG_ADM_SETTLED, am);
    e->out_p50 = at(st, r, BT_SIG_ADM_OUT_P50, am);
    e->out_p99 = at(st, r, BT_SIG_ADM_OUT_P99, am);
    if (am) {
        static const enum bt_signal offered[] = {BT_SIG_ADM_ADMITTED, BT_SIG_ADM_RETRIES,
                                                 BT_SIG_ADM_REJECTED};
        static const enum bt_signal accepted[] = {BT_SIG_ADM_COMPLETED};
        e->offered_growth = growth(st, r, offered, 3, am);
        e->accepted_growth = growth(st, r, accepted, 1, am);
    }
    for (int s = 0; s < BT_SRC_COUNT; s++)
        e->last_ok[s] = bt_store_status_c(st, r, (enum bt_source)s)->last_ok;
    check_staleness(cfg, st, r, e);

    /* Tokens today: the day's sums from CloudWatch (check's one-day queries), else
     * settled per minute summed since UTC midnight (within history). */
    e->rpm_quota = rt->quota[BT_Q_RPM].value;
    int64_t day = m - (m % 86400);
    double day_in = m ? bt_store_at(st, r, BT_SIG_DAY_INPUT_TOKENS, day) : NAN;
    double day_out = m ? bt_store_at(st, r, BT_SIG_DAY_OUTPUT_TOKENS, day) : NAN;
    if (m && (!isnan(day_in) || !isnan(day_out))) {
        e->tokens_today = bt_settled_tpm(z(day_in), z(bt_store_at(st, r, BT_SIG_DAY_CACHE_WRITE, day)),
                                         z(day_out), rt->burndown);
    } else if (m && !isnan(rt->quota[BT_Q_TPD].value)) {
        double sum = 0;
        for (int64_t t = day; t <= m; t += 60) {
            double v = settled_at(st, r, rt, t);
            if (!isnan(v))
                sum += v;
        }
        e->tokens_today = sum;
    }
}

/* The quota of a group: the best-sourced value any member knows (first on ties). */
static const struct bt_quota *group_quota(const struct bt_config *cfg, const int *members, int n,
                                          enum bt_quota_kind k)
{
    const struct bt_quota *best = NULL;
    for (int i = 0; i < n; i++) {
        const struct bt_quota *q = &cfg->routes[members[i]].quota[k];
        if (isnan(q->value))
            continue;
        if (!best || bt_quota_rank(q->source) > bt_quota_rank(best->source))
            best = q;
    }
    return best;
}

static double qval(const struct bt_quota *q)
{
    return q ? q->value : NAN;
}

static double pct_of(double headroom, double quota)
{
    return isnan(headroom) || isnan(quota) || quota <= 0 ? NAN : 100 * headroom / quota;
}

/* A mantle route's binding side: the one with less headroom left (a side with a
 * quota of 0 binds; an unknown side never does; input on a tie). */
static enum bt_side mantle_binding(const struct bt_eval *e)
{
    if (e->in_quota == 0)
        return BT_SIDE_INPUT;
    if (e->out_quota == 0)
        return BT_SIDE_OUTPUT;
    if (isnan(e->out_pct))
        return BT_SIDE_INPUT;
    if (isnan(e->in_pct))
        return BT_SIDE_OUTPUT;
    return e->out_pct < e->in_pct ? BT_SIDE_OUTPUT : BT_SIDE_INPUT;
}

/* Headroom, fits, warnings: ev[0..n) are the evaluations of one quota group's
 * routes members[0..n), their route parts done. */
static void eval_group(const struct bt_config *cfg, struct bt_eval *const *ev, const int *members,
                       int n)
{
    bool mantle = ev[0]->mantle;
    const struct bt_quota *q = group_quota(cfg, members, n, mantle ? BT_Q_INPUT_TPM : BT_Q_TPM);
    const struct bt_quota *qo = mantle ? group_quota(cfg, members, n, BT_Q_OUTPUT_TPM) : NULL;
    const struct bt_quota *qd = group_quota(cfg, members, n, BT_Q_TPD);
    double used = NAN, out_used = NAN, today = NAN, rate = NAN;
    for (int i = 0; i < n; i++) {
        const struct bt_eval *m = ev[i];
        used = nanadd(used, m->used);
        out_used = nanadd(out_used, m->out_used);
        today = nanadd(today, m->tokens_today);
        rate = nanadd(rate, mantle ? NAN : m->settled);
    }
    for (int i = 0; i < n; i++) {
        struct bt_eval *e = ev[i];
        const struct bt_route *rt = &cfg->routes[e->route];
        e->nshared = 0;
        e->group_leader = members[0];
        for (int j = 0; j < n; j++) {
            if (j == i)
                continue;
            if (e->nshared < BT_MAX_SHARED)
                e->shared_with[e->nshared] = members[j];
            e->nshared++;
        }
        e->tpd = qval(qd);
        e->group_tokens_today = isnan(e->tpd) ? NAN : today;
        e->daily_rate = rate;
        double quota = qval(q);
        const struct bt_quota *src = q;
        double head = isnan(quota) || isnan(e->used) ? NAN : quota - used;
        if (mantle) {
            e->in_quota = quota;
            e->in_used = e->used;
            e->in_group_used = used;
            e->in_headroom = head;
            e->in_pct = pct_of(head, quota);
            e->out_quota = qval(qo);
            e->out_group_used = out_used;
            e->out_headroom = isnan(e->out_quota) || isnan(e->out_used) ? NAN
                                                                          : e->out_quota - out_used;
            e->out_pct = pct_of(e->out_headroom, e->out_quota);
            e->binding = mantle_binding(e);
        }
        /* fits and what a right-sized max_tokens would free: from the input side */
        e->fits_more = bt_fits_more(head, e->reservation);
        double basis = !isnan(e->out_p99) ? e->out_p99 : 2 * e->avg_output;
        if (!isnan(basis) && basis > 0 && !isnan(e->max_tokens)) {
            double rec = ceil(basis * (1 + cfg->oversize_margin) / 64) * 64;
            e->recommended_max_tokens = rec;
            if (!isnan(head) && !isnan(e->reservation) && e->reservation > 0) {
                double r2 = e->reservation - e->max_tokens + rec;
                double k = r2 / e->reservation;
                double base = e->upper_bound ? nanmax(e->settled, e->estimated)
                                             : e->used - z(e->held);
                double used2 = e->upper_bound ? nanmax(base, e->reserved_per_min * k)
                                              : z(base) + z(e->held) * k;
                e->fits_more_recommended = bt_fits_more(head + e->used - used2, r2);
            }
        }
        e->group_used = used;
        if (mantle && e->binding == BT_SIDE_OUTPUT) {
            /* the route's figures follow the side that binds */
            src = qo;
            quota = e->out_quota;
            head = e->out_headroom;
            e->group_used = out_used;
            e->settled = e->used = e->out_used;
            e->held = 0;
            e->reserved_per_min = NAN;
            e->upper_bound = false;
            if (!isnan(head) && head <= 0)
                e->fits_more = 0;
        }
        e->quota = quota;
        e->quota_source = src ? src->source : BT_QS_UNKNOWN;
        bt_strlcpy(e->quota_code, src ? src->code : "", sizeof e->quota_code);
        e->headroom_tpm = head;
        e->headroom_pct = pct_of(head, quota);
        if (quota == 0)
            e->fits_more = 0; /* no usable quota: nothing fits, whatever is known */

        e->status = BT_ST_OK;
        e->nwarn = 0;
        for (int k = 0; k < BT_W_COUNT && e->nwarn < BT_MAX_WARN; k++) {
            struct bt_warning *w = &e->warnings[e->nwarn];
            memset(w, 0, sizeof *w);
            if (rules[k].check(cfg, rt, e, w)) {
                w->code = rules[k].code;
                if (!w->action)
                    w->action = rules[k].action;
                e->status = bt_status_worse(e->status, w->severity);
                e->nwarn++;
            }
        }
    }
}

struct keyed {
    int route;
    bool coded;
    char key[512];
};

static int cmp_keyed(const void *a, const void *b)
{
    const struct keyed *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    return c ? c : x->route - y->route;
}

static int find(int *up, int i)
{
    while (up[i] != i)
        i = up[i] = up[up[i]];
    return i;
}

static void unite(int *up, int a, int b)
{
    a = find(up, a);
    b = find(up, b);
    if (a != b)
        up[a > b ? a : b] = a < b ? a : b; /* the lower route index leads */
}

/* The quota group of every route, as the lowest route index in it: routes with
 * the same quota code share; a route whose code is unknown shares with the routes
 * of its model, Region, endpoint and inference type (routes of one model with
 * different known codes, such as a 1M-context quota, stay apart). */
static int *quota_groups(const struct bt_config *cfg)
{
    int n = cfg->nroutes;
    int *up = bt_xcalloc((size_t)n, sizeof *up);
    struct keyed *k = bt_xcalloc((size_t)n, sizeof *k);
    for (int i = 0; i < n; i++)
        up[i] = i;
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < n; i++) {
            const struct bt_route *r = &cfg->routes[i];
            k[i].route = i;
            k[i].coded = route_quota_code(r)[0] != '\0';
            if (pass == 0)
                bt_quota_group_key(r, k[i].key, sizeof k[i].key);
            else
                model_key(r, k[i].key, sizeof k[i].key);
        }
        qsort(k, (size_t)n, sizeof *k, cmp_keyed);
        for (int i = 0; i < n;) {
            int j = i + 1;
            while (j < n && !strcmp(k[j].key, k[i].key))
                j++;
            for (int m = i + 1; m < j; m++)
                if (pass == 0 || !k[m].coded || !k[i].coded)
                    unite(up, k[i].route, k[m].route);
            i = j;
        }
    }
    for (int i = 0; i < n; i++)
        up[i] = find(up, i);
    free(k);
    return up;
}

void bt_eval_all(const struct bt_config *cfg, const struct bt_store *st, int64_t now,
                 struct bt_eval *evals)
{
    int n = cfg->nroutes;
    if (n <= 0)
        return;
    int *group = quota_groups(cfg);
    int *first = bt_xcalloc((size_t)n, sizeof *first); /* members chained by route order */
    int *next = bt_xcalloc((size_t)n, sizeof *next);
    int *members = bt_xcalloc((size_t)n, sizeof *members);
    struct bt_eval **ev = bt_xcalloc((size_t)n, sizeof *ev);
    for (int r = 0; r < n; r++)
        first[r] = -1;
    for (int r = n - 1; r >= 0; r--) {
        eval_route_part(cfg, st, r, now, &evals[r]);
        next[r] = first[group[r]]; /* prepended backwards: each chain in route order */
        first[group[r]] = r;
    }
    for (int g = 0; g < n; g++) {
        if (group[g] != g)
            continue;
        int cnt = 0;
        for (int r = first[g]; r >= 0 && cnt < n; r = next[r]) {
            members[cnt] = r;
            ev[cnt++] = &evals[r];
        }
        eval_group(cfg, ev, members, cnt);
    }
    free(ev);
    free(members);
    free(next);
    free(first);
    free(group);
}

void bt_eval_route(const struct bt_config *cfg, const struct bt_store *st, int r, int64_t now,
                   struct bt_eval *out)
{
    int *group = quota_groups(cfg);
    int n = 0, self = 0;
    int *members = bt_xcalloc((size_t)cfg->nroutes, sizeof *members);
    for (int i = 0; i < cfg->nroutes; i++) {
        if (group[i] == group[r]) {
            if (i == r)
                self = n;
            members[n++] = i;
        }
    }
    struct bt_eval *scratch = bt_xcalloc((size_t)n, sizeof *scratch);
    struct bt_eval **ev = bt_xcalloc((size_t)n, sizeof *ev);
    for (int i = 0; i < n; i++) {
        ev[i] = i == self ? out : &scratch[i];
        eval_route_part(cfg, st, members[i], now, ev[i]);
    }
    eval_group(cfg, ev, members, n);
    free(ev);
    free(scratch);
    free(members);
    free(group);
}
