#include "core/headroom.h"

#include <math.h>
#include <stdio.h>
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

double bt_fits_more(double headroom_tpm, double avg_input, double max_tokens)
{
    double per_call = avg_input + max_tokens;
    if (isnan(headroom_tpm) || isnan(per_call) || per_call <= 0)
        return NAN;
    if (headroom_tpm <= 0)
        return 0;
    return floor(headroom_tpm / per_call);
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
    if (!isnan(e->reserved) || !e->has_usage)
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
            "counters and no max_tokens; Bedrock throttles on input + max_tokens reservations, "
            "which the estimate does not see", est);
    return true;
}

static bool rule_throttled_below(const struct bt_config *cfg, const struct bt_route *r,
                                 struct bt_eval *e, struct bt_warning *w)
{
    (void)cfg;
    if (e->mantle || isnan(e->throttles) || e->throttles <= 0 || isnan(e->estimated) ||
        isnan(e->quota) || e->estimated >= e->quota)
        return false;
    char est[32], q[32], res[32];
    bt_fmt_si(e->estimated, est, sizeof est);
    bt_fmt_si(e->quota, q, sizeof q);
    bt_fmt_si(e->reserved, res, sizeof res);
    if (!isnan(e->max_tokens))
        say(w, BT_ST_WARN,
            "%.0f throttles/min while EstimatedTPMQuotaUsage is %s of %s TPM (%.0f%%): reservations "
            "of input + max_tokens (%.0f) are the likely cause; reserved %s TPM",
            e->throttles, est, q, 100 * e->estimated / e->quota, e->max_tokens, res);
    else
        say(w, BT_ST_WARN,
            "%.0f throttles/min while EstimatedTPMQuotaUsage is %s of %s TPM (%.0f%%): reservations "
            "(input + max_tokens%s) are the likely cause; set max_tokens for route %s to see them",
            e->throttles, est, q, 100 * e->estimated / e->quota,
            isnan(e->max_tokens) ? ", unknown here" : "", r->name);
    return true;
}

static bool rule_oversized(const struct bt_config *cfg, const struct bt_route *r,
                           struct bt_eval *e, struct bt_warning *w)
{
    (void)r;
    if (isnan(e->max_tokens) || isnan(e->recommended_max_tokens))
        return false;
    bool p99 = !isnan(e->out_p99);
    double basis = p99 ? e->out_p99 : e->avg_output;
    if (isnan(basis) || basis <= 0 || e->max_tokens <= cfg->oversize_factor * basis)
        return false;
    char gain[96] = "";
    if (!isnan(e->fits_more) && !isnan(e->fits_more_recommended)) {
        char now[32], rec[32];
        bt_fmt_si(e->fits_more, now, sizeof now);
        bt_fmt_si(e->fits_more_recommended, rec, sizeof rec);
        snprintf(gain, sizeof gain, " would fit %s more calls instead of %s", rec, now);
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
    if (isnan(e->throttles) || isnan(e->invocations))
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
        "%.0f model calls in flight against a tested concurrency of %.0f: calls made inside each "
        "worker multiply the worker cap (e.g. 10 workers x 4 calls = 40)",
        e->in_flight, e->conc_limit);
    return true;
}

static bool threshold_hit(const struct bt_threshold *t, const struct bt_eval *e)
{
    return t->pct ? e->headroom_pct < t->value : e->headroom_tpm < t->value;
}

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
    char h[32], q[32], th[BT_FMT_LONG];
    bt_fmt_si(e->headroom_tpm, h, sizeof h);
    bt_fmt_si(e->quota, q, sizeof q);
    const struct bt_threshold *t = sev == BT_ST_CRIT ? &cfg->crit : &cfg->warn;
    if (t->pct) /* one formatter per figure: no "1e+06" for a threshold */
        bt_fmt_plain(t->value, 1, th, sizeof th);
    else
        bt_fmt_tokens(t->value, th, sizeof th);
    say(w, sev, "headroom %s of %s TPM (%.1f%%) is below the %s threshold of %s%s%s", h, q,
        e->headroom_pct, sev == BT_ST_CRIT ? "critical" : "warning", th, t->pct ? "%" : " TPM",
        e->mantle ? (e->in_pct <= e->out_pct ? " (input quota binds)" : " (output quota binds)") : "");
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
        say(w, BT_ST_OK, "quota comes from the config, not from Service Quotas%s",
            e->mantle ? " (mantle quotas are not in Service Quotas)" : "");
    return true;
}

static bool rule_quota_unknown(const struct bt_config *cfg, const struct bt_route *r,
                               struct bt_eval *e, struct bt_warning *w)
{
    (void)cfg;
    if (!isnan(e->quota))
        return false;
    say(w, BT_ST_UNKNOWN,
        "no %s quota known for %s: headroom cannot be computed",
        e->mantle ? "input/output TPM" : "tokens-per-minute", r->model);
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

static bool rule_daily(const struct bt_config *cfg, const struct bt_route *r,
                       struct bt_eval *e, struct bt_warning *w)
{
    (void)r;
    if (isnan(e->tpd) || e->tpd <= 0 || isnan(e->tokens_today))
        return false;
    double pct = 100 * e->tokens_today / e->tpd;
    if (pct < cfg->daily_warn_pct)
        return false;
    char t[32], q[32];
    bt_fmt_si(e->tokens_today, t, sizeof t);
    bt_fmt_si(e->tpd, q, sizeof q);
    double rate = z(e->settled);
    char when[48] = "";
    if (rate > 0 && e->tokens_today < e->tpd) {
        char hm[8];
        /* from the minute, not the second: an evaluation is a function of the minute */
        bt_fmt_hhmm(bt_minute_floor(e->now) + (int64_t)((e->tpd - e->tokens_today) / rate * 60), hm,
                    sizeof hm);
        snprintf(when, sizeof when, "; at the current rate it runs out at %s UTC", hm);
    }
    say(w, pct >= cfg->daily_crit_pct ? BT_ST_CRIT : BT_ST_WARN,
        "%s tokens used today of the %s daily quota (%.0f%%)%s", t, q, pct, when);
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
     "Lower max_tokens toward the observed output length (plus margin) or spread load; the "
     "quota is spent on reservations, not on tokens actually produced.", rule_throttled_below},
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
};

static double at(const struct bt_store *st, int r, enum bt_signal s, int64_t m)
{
    return m ? bt_store_at(st, r, s, m) : NAN;
}

/* Settled tokens per minute at minute m (NAN without token counts). */
static double settled_at(const struct bt_store *st, int r,
                         const struct bt_route *rt, int64_t m)
{
    double in = bt_store_at(st, r, BT_SIG_INPUT_TOKENS, m);
    double out = bt_store_at(st, r, BT_SIG_OUTPUT_TOKENS, m);
    if (isnan(in) && isnan(out))
        return NAN;
    return bt_settled_tpm(z(in), z(bt_store_at(st, r, BT_SIG_CACHE_WRITE, m)), z(out),
                          rt->burndown);
}

static void check_staleness(const struct bt_config *cfg, const struct bt_store *st, int r,
                            int64_t expect, struct bt_eval *e)
{
    const struct bt_source_status *cw = bt_store_status_c(st, r, BT_SRC_CLOUDWATCH);
    const struct bt_source_status *adm = bt_store_status_c(st, r, BT_SRC_ADMISSION);
    char hm[8];
    if (cw->last_error && cw->last_error >= cw->last_ok) {
        e->stale = true;
        if (e->minute) {
            bt_fmt_hhmm(e->minute, hm, sizeof hm);
            snprintf(e->stale_reason, sizeof e->stale_reason, "CloudWatch failing (%s); newest data %s UTC",
                     cw->error, hm);
        } else {
            snprintf(e->stale_reason, sizeof e->stale_reason, "CloudWatch failing (%s); no data yet",
                     cw->error);
        }
    } else if (e->minute && e->minute < expect - 180) {
        e->stale = true;
        bt_fmt_hhmm(e->minute, hm, sizeof hm);
        snprintf(e->stale_reason, sizeof e->stale_reason,
                 "no CloudWatch datapoints since %s UTC (%.0f min older than the publishing lag): "
                 "collector failing or metric silent", hm, (double)(expect - e->minute) / 60);
    } else if (!e->minute && !cw->last_ok && !adm->last_ok) {
        e->stale = true;
        snprintf(e->stale_reason, sizeof e->stale_reason, "no data yet: CloudWatch has not answered");
    }
    if (adm->last_error && adm->last_error >= adm->last_ok) {
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

static void compute_runtime(const struct bt_route *rt, struct bt_eval *e)
{
    e->quota = rt->quota[BT_Q_TPM].value;
    e->quota_source = rt->quota[BT_Q_TPM].source;
    e->used = nanmax(nanmax(e->settled, e->estimated), e->reserved);
}

/* A mantle route's headroom is the side (input or output quota) with less left. */
static bool mantle_in_binds(const struct bt_eval *e)
{
    return isnan(e->out_pct) || (!isnan(e->in_pct) && e->in_pct <= e->out_pct);
}

static void compute_mantle(const struct bt_route *rt, struct bt_eval *e)
{
    e->in_quota = rt->quota[BT_Q_INPUT_TPM].value;
    e->out_quota = rt->quota[BT_Q_OUTPUT_TPM].value;
    e->in_used = !isnan(e->reserved) ? e->reserved : e->input_tokens;
    e->out_used = e->output_tokens;
    e->in_headroom = e->in_quota - z(e->in_used);
    e->out_headroom = e->out_quota - z(e->out_used);
    e->in_pct = 100 * e->in_headroom / e->in_quota;
    e->out_pct = 100 * e->out_headroom / e->out_quota;
    bool in_binds = mantle_in_binds(e);
    e->quota = in_binds ? e->in_quota : e->out_quota;
    e->quota_source = rt->quota[in_binds ? BT_Q_INPUT_TPM : BT_Q_OUTPUT_TPM].source;
    e->used = in_binds ? e->in_used : e->out_used;
    /* Settled on the same side as the quota and used shown beside it: input and
     * output count against different quotas, so their sum is no figure at all. */
    if (!isnan(e->settled))
        e->settled = in_binds ? z(e->input_tokens) : z(e->output_tokens);
}

void bt_eval_route(const struct bt_config *cfg, const struct bt_store *st, int r, int64_t now,
                   struct bt_eval *e)
{
    const struct bt_route *rt = &cfg->routes[r];
    memset(e, 0, sizeof *e);
    e->route = r;
    e->now = now;
    e->mantle = rt->endpoint == BT_EP_MANTLE;
    double *nans[] = {&e->settled, &e->estimated, &e->reserved, &e->used, &e->quota,
                      &e->headroom_tpm, &e->headroom_pct, &e->fits_more, &e->in_quota,
                      &e->in_used, &e->in_headroom, &e->in_pct, &e->out_quota, &e->out_used,
                      &e->out_headroom, &e->out_pct, &e->avg_input, &e->avg_output,
                      &e->recommended_max_tokens, &e->fits_more_recommended, &e->tokens_today,
                      &e->offered_growth, &e->accepted_growth};
    for (size_t i = 0; i < BT_ARRAY_LEN(nans); i++)
        *nans[i] = NAN;

    /* CloudWatch: the newest minute that should be complete given the publishing lag. */
    int64_t expect = bt_minute_floor(now - (int64_t)cfg->cw_lag) - 60;
    for (size_t i = 0; i < BT_ARRAY_LEN(usage_signals); i++) {
        int64_t m = bt_store_newest(st, r, usage_signals[i], expect);
        if (m > e->minute)
            e->minute = m;
    }
    int64_t m = e->minute;
    e->invocations = at(st, r, BT_SIG_INVOCATIONS, m);
    e->input_tokens = at(st, r, BT_SIG_INPUT_TOKENS, m);
    e->output_tokens = at(st, r, BT_SIG_OUTPUT_TOKENS, m);
    e->cache_read = at(st, r, BT_SIG_CACHE_READ, m);
    e->cache_write = at(st, r, BT_SIG_CACHE_WRITE, m);
    e->throttles = at(st, r, BT_SIG_THROTTLES, m);
    e->estimated = at(st, r, BT_SIG_ESTIMATED_TPM, m);
    e->lat_avg = at(st, r, BT_SIG_LATENCY_AVG, m);
    e->lat_p50 = at(st, r, BT_SIG_LATENCY_P50, m);
    e->lat_p90 = at(st, r, BT_SIG_LATENCY_P90, m);
    e->lat_p99 = at(st, r, BT_SIG_LATENCY_P99, m);
    if (m && !e->mantle)
        e->settled = settled_at(st, r, rt, m);
    else if (m && (!isnan(e->input_tokens) || !isnan(e->output_tokens)))
        e->settled = z(e->input_tokens) + z(e->output_tokens);
    /* Cache reads are not charged at completion; one AWS page counts them in the
     * start-time reservation, hence the option. */
    double in_charged = z(e->input_tokens) + z(e->cache_write) +
                        (cfg->cache_read_reserved ? z(e->cache_read) : 0);
    if (!isnan(e->invocations) && e->invocations > 0) {
        e->avg_input = in_charged / e->invocations;
        if (!isnan(e->output_tokens))
            e->avg_output = e->output_tokens / e->invocations;
    }

    /* Admission counters: the freshest view, at scrape time. */
    for (size_t i = 0; i < BT_ARRAY_LEN(adm_signals); i++) {
        int64_t am = bt_store_newest(st, r, adm_signals[i], now);
        if (am > e->adm_minute)
            e->adm_minute = am;
    }
    int64_t am = e->adm_minute;
    e->in_flight = at(st, r, BT_SIG_ADM_IN_FLIGHT, am);
    e->conc_limit = at(st, r, BT_SIG_ADM_CONC_LIMIT, am);
    if (isnan(e->conc_limit))
        e->conc_limit = rt->concurrency_limit;
    e->queue_depth = at(st, r, BT_SIG_ADM_QUEUE, am);
    e->admitted = at(st, r, BT_SIG_ADM_ADMITTED, am);
    e->rejected = at(st, r, BT_SIG_ADM_REJECTED, am);
    e->retries = at(st, r, BT_SIG_ADM_RETRIES, am);
    e->completed = at(st, r, BT_SIG_ADM_COMPLETED, am);
    e->adm_throttled = at(st, r, BT_SIG_ADM_THROTTLED, am);
    e->adm_settled = at(st, r, BT_SIG_ADM_SETTLED, am);
    e->out_p50 = at(st, r, BT_SIG_ADM_OUT_P50, am);
    e->out_p99 = at(st, r, BT_SIG_ADM_OUT_P99, am);
    e->max_tokens = rt->max_tokens;
    double gauge_mt = at(st, r, BT_SIG_ADM_MAX_TOKENS, am);
    if (!isnan(gauge_mt))
        e->max_tokens = gauge_mt; /* what callers really request beats the config */
    if (am) {
        static const enum bt_signal offered[] = {BT_SIG_ADM_ADMITTED, BT_SIG_ADM_RETRIES,
                                                 BT_SIG_ADM_REJECTED};
        static const enum bt_signal accepted[] = {BT_SIG_ADM_COMPLETED};
        e->offered_growth = growth(st, r, offered, 3, am);
        e->accepted_growth = growth(st, r, accepted, 1, am);
    }

    /* reserved: the admission counters' rate, else input + invocations x max_tokens. */
    double adm_res = at(st, r, BT_SIG_ADM_RESERVED, am);
    if (!isnan(adm_res)) {
        e->reserved = adm_res;
        e->reserved_source = "admission";
    } else if (!isnan(e->max_tokens) && !isnan(e->invocations)) {
        e->reserved = in_charged + e->invocations * e->max_tokens;
        e->reserved_source = "max_tokens";
    }
    e->has_usage = !isnan(e->settled) || !isnan(e->estimated) || !isnan(e->reserved);

    if (e->mantle)
        compute_mantle(rt, e);
    else
        compute_runtime(rt, e);

    check_staleness(cfg, st, r, expect, e);

    /* No usage seen: a route that CloudWatch answered for is idle (used 0); a
     * route never polled has unknown usage. */
    const struct bt_source_status *cw = bt_store_status_c(st, r, BT_SRC_CLOUDWATCH);
    double used = e->used;
    if (!e->has_usage && cw->last_ok && !e->stale)
        used = 0;
    if (!isnan(e->quota) && !isnan(used)) {
        if (e->mantle) {
            bool in_binds = mantle_in_binds(e);
            e->headroom_tpm = in_binds ? e->in_headroom : e->out_headroom;
            e->headroom_pct = in_binds ? e->in_pct : e->out_pct;
        } else {
            e->headroom_tpm = e->quota - used;
            e->headroom_pct = 100 * e->headroom_tpm / e->quota;
        }
    }
    double headroom_in = e->mantle ? e->in_headroom : e->headroom_tpm;
    e->fits_more = bt_fits_more(headroom_in, e->avg_input, e->max_tokens);
    if (isnan(e->fits_more) && !isnan(adm_res) && !isnan(e->admitted) && e->admitted > 0)
        e->fits_more = bt_fits_more(headroom_in, 0, adm_res / e->admitted);

    /* What a right-sized max_tokens would free: p99 (or 2 x mean) plus the margin. */
    double basis = !isnan(e->out_p99) ? e->out_p99 : 2 * e->avg_output;
    if (!isnan(basis) && basis > 0 && !isnan(e->max_tokens)) {
        double rec = ceil(basis * (1 + cfg->oversize_margin) / 64) * 64;
        e->recommended_max_tokens = rec;
        if (!isnan(e->quota) && !isnan(e->invocations)) {
            double res2 = in_charged + e->invocations * rec;
            if (e->reserved_source && !strcmp(e->reserved_source, "admission") &&
                !isnan(e->admitted) && e->admitted > 0)
                res2 = e->reserved - e->admitted * (e->max_tokens - rec);
            double used2 = e->mantle ? res2 : nanmax(nanmax(e->settled, e->estimated), res2);
            double q = e->mantle ? e->in_quota : e->quota;
            e->fits_more_recommended = bt_fits_more(q - used2, e->avg_input, rec);
        }
    }

    /* Tokens today: settled per minute summed since UTC midnight (within history). */
    e->tpd = rt->quota[BT_Q_TPD].value;
    e->rpm_quota = rt->quota[BT_Q_RPM].value;
    double day_in = m ? bt_store_at(st, r, BT_SIG_DAY_INPUT_TOKENS, m - (m % 86400)) : NAN;
    double day_out = m ? bt_store_at(st, r, BT_SIG_DAY_OUTPUT_TOKENS, m - (m % 86400)) : NAN;
    if (!isnan(e->tpd) && m && (!isnan(day_in) || !isnan(day_out))) {
        /* the day's sums as CloudWatch gave them (check's one-day-Period queries) */
        e->tokens_today = bt_settled_tpm(
            z(day_in), z(bt_store_at(st, r, BT_SIG_DAY_CACHE_WRITE, m - (m % 86400))), z(day_out),
            rt->burndown);
    } else if (!isnan(e->tpd) && m) {
        int64_t day = m - (m % 86400);
        double sum = 0;
        for (int64_t t = day; t <= m; t += 60) {
            double v = settled_at(st, r, rt, t);
            if (!isnan(v))
                sum += v;
        }
        e->tokens_today = sum;
    }

    e->status = BT_ST_OK;
    for (int i = 0; i < BT_W_COUNT && e->nwarn < BT_MAX_WARN; i++) {
        struct bt_warning *w = &e->warnings[e->nwarn];
        memset(w, 0, sizeof *w);
        if (rules[i].check(cfg, rt, e, w)) {
            w->code = rules[i].code;
            e->status = bt_status_worse(e->status, w->severity);
            e->nwarn++;
        }
    }
}
