/* The warning rules, table-driven: one row per code {code, title, action, check}
 * (DESIGN.md "Warnings"; bedtop(1) WARNINGS). */
#include "core/rules.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/burndown.h"
#include "core/cost.h"
#include "core/eval_int.h"
#include "core/format.h"
#include "core/headroom.h"
#include "core/rulesload.h"
#include "core/util.h"

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

static bool rule_quota_default(const struct bt_config *cfg, const struct bt_route *r,
                               struct bt_eval *e, struct bt_warning *w)
{
    (void)cfg;
    (void)r;
    if (e->quota_source != BT_QS_DEFAULT && e->quota_source != BT_QS_CONFIG)
        return false;
    if (e->quota_source == BT_QS_DEFAULT)
        bt_rule_say(w, BT_ST_OK,
            "quota is AWS's published default, not the value applied to this account; applied "
            "values can be lower");
    else
        bt_rule_say(w, BT_ST_OK, "quota comes from the config, not from Service Quotas");
    return true;
}

/* A mantle model AWS publishes no quota for (collectors/quota_collect.c says so in the
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
    bt_rule_say(w, BT_ST_OK,
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
    bt_rule_say(w, BT_ST_OK,
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
    bool listed = !strcmp(r->lifecycle, "LEGACY");
    if (!r->legacy_seen && !listed)
        return false;
    /* ListFoundationModels' lifecycle, with its dates (the 2026-09-07 policy: a legacy
     * period of 6 months or 45 days, then end of life), and/or CloudWatch's count */
    bt_rule_say(w, listed ? BT_ST_WARN : BT_ST_OK,
        "%s%s%s%s%s: calls go to a model AWS lists as legacy; AWS refuses quota increases for "
        "it, new customers cannot use it and existing ones may lose access after about 15 days "
        "without calls",
        listed ? "ListFoundationModels lists " : "CloudWatch lists LegacyModelInvocations for ",
        r->base_model[0] ? r->base_model : r->model, listed ? " as LEGACY (" : "",
        listed ? (r->lifecycle_text[0] ? r->lifecycle_text : "no dates published") : "",
        listed ? ")" : "");
    return true;
}

/* The Metrics Insights queries (collectors/cw_insights.c) found callers the config does
 * not name on this route's quota: its headroom counts only the configured routes. */
static bool rule_unseen(const struct bt_config *cfg, const struct bt_route *r, struct bt_eval *e,
                        struct bt_warning *w)
{
    (void)cfg;
    (void)e;
    if (!r->unseen[0])
        return false;
    bt_rule_say(w, BT_ST_WARN,
        "ModelIds the config does not name draw on this quota (last 5 minutes): %s; the "
        "headroom shown leaves them out, so less is left than it says",
        r->unseen);
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
    bt_rule_say(w, BT_ST_UNKNOWN,
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
    bt_rule_say(w, BT_ST_UNKNOWN, "%s", e->stale_reason);
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
    double tpd = bt_eval_tpd(e), today = bt_eval_group_today(e);
    if (isnan(tpd) || tpd <= 0 || isnan(today))
        return false;
    double pct = 100 * today / tpd;
    if (pct < cfg->daily_warn_pct)
        return false;
    char t[32], q[32], when[200];
    bt_fmt_si(today, t, sizeof t);
    bt_fmt_si(tpd, q, sizeof q);
    int64_t from = bt_eval_day_minute(e); /* counted from where the day was read */
    daily_runout(from ? from : bt_minute_floor(e->now), tpd - today, bt_eval_daily_rate(e), when,
                 sizeof when);
    /* the cross-model quota (the per-model ones are used only where it is absent) is
     * pricing-weighted: the sum of tokens is an estimate of its use, never known */
    const struct bt_side_fig *acc = &e->side[BT_SIDE_DAILY_ACCOUNT];
    bool est = acc->applies;
    bt_rule_say(w, pct >= cfg->daily_crit_pct ? BT_ST_CRIT : BT_ST_WARN,
        "%s%s tokens used today of the %s %s (%.0f%%%s%s)%s", est ? "about " : "", t, q,
        est ? "account-wide Cross-Model Max Tokens Per Day" : "daily quota", pct,
        bt_eval_nshared(e) && !est ? ", whole shared quota" : "",
        !est ? ""
        : acc->group_q == BT_QL_LOWER
            ? ", an estimate and at least: pricing-weighted, and ModelIds outside the config "
              "draw on it too"
            : ", an estimate: the quota is pricing-weighted, a token sum only estimates its use",
        when);
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
    bt_rule_say(w, BT_ST_OK,
        "offline route uses %s TPM of online quota; if its work needs no tools or multi-turn, a "
        "batch inference job (CreateModelInvocationJob) frees this quota for online routes", u);
    return true;
}

static bool rule_no_quota(const struct bt_config *cfg, const struct bt_route *r,
                          struct bt_eval *e, struct bt_warning *w)
{
    (void)cfg;
    int zero = -1;
    for (int k = 0; k < BT_SIDE_COUNT && zero < 0; k++)
        if (e->side[k].applies && e->side[k].quota == 0)
            zero = k;
    if (zero < 0)
        return false;
    static const char *const what[] = {"tokens-per-minute", "requests-per-minute",
                                       "input tokens-per-minute", "output tokens-per-minute",
                                       "reserved-tier input tokens-per-minute",
                                       "reserved-tier output tokens-per-minute", "tokens-per-day",
                                       "account-wide tokens-per-day"};
    const struct bt_side_fig *f = &e->side[zero];
    char thr[48] = "";
    if (!isnan(e->throttles) && e->throttles > 0)
        snprintf(thr, sizeof thr, "; %.0f throttles/min", e->throttles);
    if (e->mantle)
        w->action = "Request model access, or open an AWS Support limit-increase case for the "
                    "bedrock-mantle quota (not the Service Quotas console), or send this traffic "
                    "to a Region that has quota.";
    bt_rule_say(w, BT_ST_CRIT,
        "the applied %s quota for %s in %s is 0 (%s%s%s): the account has no usable quota, "
        "every call will throttle%s", what[zero],
        r->base_model[0] ? r->base_model : r->model, r->region,
        bt_quota_source_name(f->source), f->code[0] ? " " : "", f->code, thr);
    return true;
}

/* SHARED_QUOTA reads the group itself (every member, none dropped): the names that
 * fit the message, then how many more. */
static bool rule_shared_group(const struct bt_config *cfg, const struct bt_route *r,
                              struct bt_eval *e, struct bt_warning *w, const struct bt_group *g)
{
    (void)r;
    int nshared = bt_eval_nshared(e), nunknown = bt_eval_nunknown_others(e);
    if (nshared <= 0 || !g)
        return false;
    char names[200] = "";
    size_t len = 0;
    int named = 0;
    for (int i = 0; i < g->n; i++) {
        if (g->members[i] == e->route)
            continue;
        int n = snprintf(names + len, sizeof names - len, "%s%s", named ? ", " : "",
                         cfg->routes[g->members[i]].name);
        if (n < 0 || (size_t)n >= sizeof names - len) {
            names[len] = '\0'; /* a name cut is no name */
            break;
        }
        len += (size_t)n;
        named++;
    }
    char more[40] = "";
    if (named < nshared)
        snprintf(more, sizeof more, " and %d more", nshared - named);
    /* both figures and the route name whole */
    char others[32], u[32], use[2 * 32 + sizeof cfg->routes[0].name + 64];
    double used = bt_eval_group_used(e);
    bt_fmt_si(used - bt_z(e->used), others, sizeof others);
    bt_fmt_si(used, u, sizeof u);
    if (nunknown >= nshared)
        snprintf(use, sizeof use, "their use is unknown");
    else if (nunknown)
        snprintf(use, sizeof use, "they use at least %s TPM, %s's unknown; at least %s together",
                 others, cfg->routes[bt_eval_unknown_other(e)].name, u);
    else
        snprintf(use, sizeof use, "they use %s TPM; %s together", others, u);
    bt_rule_say(w, BT_ST_OK,
        "the %s quota%s%s is shared with %s%s (%s): headroom is the "
        "quota's, and callers outside the config on it are invisible here",
        e->mantle ? "input/output" : "tokens-per-minute", e->quota_code[0] ? " " : "",
        e->quota_code, named ? names : "other routes", more, use);
    return true;
}

/* Burndown measured from AWS's estimate, compared with the catalogue's prior (the
 * config, a table row, the family floor or 1): says which one won and names the
 * table row. */
static bool rule_burndown_mismatch(const struct bt_config *cfg, const struct bt_route *r,
                                   struct bt_eval *e, struct bt_warning *w)
{
    (void)cfg;
    if (e->mantle)
        return false;
    const char *prior = r->burndown_prior_source ? r->burndown_prior_source : "default";
    double steady = r->burndown_steady;
    bool steady_off = bt_burndown_disagrees(steady, r->burndown_prior);
    if (!steady_off && !bt_burndown_disagrees(e->burndown_measured, e->burndown))
        return false;
    double m = steady_off ? steady : e->burndown_measured;
    char how[96], said[400];
    const char *model = r->base_model[0] ? r->base_model : r->model;
    if (steady_off)
        snprintf(how, sizeof how, "steady over %d minutes", r->burndown_steady_minutes);
    else
        snprintf(how, sizeof how, "in the evaluated minute, not yet steady");
    if (!strcmp(prior, "config"))
        snprintf(said, sizeof said, "the config gives %g (the table: %.200s)", r->burndown_prior,
                 r->burndown_row[0] ? r->burndown_row : "no row for the model");
    else if (!strcmp(prior, "table"))
        snprintf(said, sizeof said, "the table row %.200s gives %g", r->burndown_row, r->burndown_prior);
    else
        snprintf(said, sizeof said, "no table row has %.150s, so the %s gives %g, unverified%s%.200s%s",
                 model, !strcmp(prior, "family") ? "family floor" : "default", r->burndown_prior,
                 r->burndown_row[0] ? " (" : "", r->burndown_row, r->burndown_row[0] ? ")" : "");
    const char *won = !strcmp(e->burndown_source, "measured") ? "the measurement is used"
                      : !strcmp(prior, "config")              ? "the config's value is used"
                      : !strcmp(prior, "table")               ? "the table row is used"
                                                              : "the unverified floor is used";
    bt_rule_say(w, BT_ST_WARN,
        "EstimatedTPMQuotaUsage implies burndown %.2f ((estimate - input - cache write) / output, "
        "%s) but %s: %s, settled tokens and headroom use %g",
        m, how, said, won, e->burndown);
    return true;
}

static bool rule_partial_group(const struct bt_config *cfg, const struct bt_route *r,
                               struct bt_eval *e, struct bt_warning *w)
{
    (void)r;
    int nunknown = bt_eval_nunknown_others(e), other = bt_eval_unknown_other(e);
    if (nunknown <= 0 || other < 0)
        return false;
    const struct bt_route *m = &cfg->routes[other];
    char pct[48] = "";
    const struct bt_side_fig *t = &e->side[e->token_side];
    if (!isnan(t->pct))
        snprintf(pct, sizeof pct, ": at most %.1f%% free", t->pct);
    bt_rule_say(w, BT_ST_WARN,
        "%s%s on the same quota could not be read (its CloudWatch poll failed, stopped or never "
        "answered): the group's use is a lower bound and its headroom an upper bound%s",
        m->name, nunknown > 1 ? " and other members" : "", pct);
    return true;
}


/* ---- spend (core/cost.h): a rate off its baseline, or a day past its budget ---- */
static const char act_spend[] =
    "Find who is calling (the route's admission counters by team, CloudTrail InvokeModel events "
    "for its ModelId) and stop or throttle it at its admission boundary; move offline work to a "
    "batch inference job (about half the price); set budget_usd_per_day to be warned earlier.";

/* "triage (us.anthropic.claude-sonnet-4-5-..., standard tier)" */
static void spender(const struct bt_route *r, char *out, size_t n)
{
    bt_fmt_cut(out, n, "%s (%s, %s tier)", r->name, r->model, bt_tier_name((enum bt_tier)r->tier));
}

static bool rule_spend_spike(const struct bt_config *cfg, const struct bt_route *r,
                             struct bt_eval *e, struct bt_warning *w)
{
    const struct bt_spend *sp = &e->spend;
    char who[160]; /* named only where the rule speaks (it was formatted every evaluation) */
    if (!isnan(r->budget_usd_per_day) && !isnan(sp->usd_today) &&
        sp->usd_today >= r->budget_usd_per_day) {
        spender(r, who, sizeof who);
        bt_rule_say(w, BT_ST_WARN,
            "today's spend $%.2f%s passes the route's budget_usd_per_day $%.2f: %s spends $%.2f/h "
            "now (list prices: an estimate)",
            sp->usd_today, sp->today_q == BT_QL_LOWER ? " or more" : "", r->budget_usd_per_day, who,
            bt_z(sp->usd_per_hour));
        return true;
    }
    if (isnan(sp->recent) || isnan(sp->baseline) || sp->recent < cfg->spend_spike_floor ||
        sp->recent <= cfg->spend_spike_factor * sp->baseline)
        return false;
    char ratio[48];
    spender(r, who, sizeof who);
    if (sp->baseline > 0)
        snprintf(ratio, sizeof ratio, "%.1fx", sp->recent / sp->baseline);
    else
        snprintf(ratio, sizeof ratio, "up from");
    bt_rule_say(w, BT_ST_WARN,
        "spend $%.2f/h over the last %d minutes, %s the trailing %d-minute median of $%.2f/h: %s "
        "has spent $%.2f today (list prices: an estimate)",
        sp->recent, cfg->spend_spike_minutes, ratio, sp->baseline_minutes, sp->baseline, who,
        bt_z(sp->usd_today));
    return true;
}

/* Raises SPEND_SPIKE on route `on` with message msg, or, where the route has one
 * already (its own spike, another sum's), adds msg to it while it fits. */
static void spend_warn(struct bt_eval *evals, int on, const char *msg)
{
    struct bt_eval *e = &evals[on];
    for (int w = 0; w < e->nwarn; w++) {
        struct bt_warning *x = &e->warnings[w];
        if (x->code != BT_W_SPEND_SPIKE)
            continue;
        size_t len = strlen(x->message);
        if (len + 3 + strlen(msg) < sizeof x->message)
            snprintf(x->message + len, sizeof x->message - len, "; %s", msg);
        return;
    }
    if (e->nwarn >= BT_MAX_WARN)
        return;
    struct bt_warning *w = &e->warnings[e->nwarn];
    memset(w, 0, sizeof *w);
    bt_rule_say(w, BT_ST_WARN, "%s", msg);
    w->code = BT_W_SPEND_SPIKE;
    w->action = act_spend;
    e->status = bt_status_worse(e->status, w->severity);
    e->nwarn++;
}

/* The three routes of `members` (n; NULL: every route of region) spending most by
 * `today` (else per hour), top[] -1 where fewer. */
static void top_spenders(const struct bt_config *cfg, const struct bt_eval *evals,
                         const char *region, int leader, bool today, int top[3])
{
    top[0] = top[1] = top[2] = -1;
    for (int i = 0; i < cfg->nroutes; i++) {
        if (region ? strcmp(cfg->routes[i].region, region) != 0
                   : evals[i].group.leader != leader)
            continue;
        double v = today ? evals[i].spend.usd_today : evals[i].spend.usd_per_hour;
        if (isnan(v))
            continue;
        for (int j = 0; j < 3; j++) {
            int t = top[j];
            double tv = t < 0 ? 0 : today ? evals[t].spend.usd_today : evals[t].spend.usd_per_hour;
            if (t < 0 || v > tv) {
                for (int k = 2; k > j; k--)
                    top[k] = top[k - 1];
                top[j] = i;
                break;
            }
        }
    }
}

static void name_spenders(const struct bt_config *cfg, const struct bt_eval *evals,
                          const int top[3], bool today, struct bt_buf *b)
{
    for (int j = 0; j < 3 && top[j] >= 0; j++)
        bt_buf_printf(b, "%s%s $%.2f%s", j ? ", " : "", cfg->routes[top[j]].name,
                      today ? evals[top[j]].spend.usd_today : evals[top[j]].spend.usd_per_hour,
                      today ? "" : "/h");
}

/* A quota group of more than one route: its summed spend rate off its trailing
 * baseline, or its day past the [group ROUTE] budget; raised on its biggest spender. */
static void group_spend(const struct bt_config *cfg, const struct bt_store *st,
                        struct bt_eval *evals)
{
    for (int i = 0; i < cfg->nroutes; i++) {
        if (evals[i].group.leader != i || bt_group_next(evals, i) < 0)
            continue;
        struct bt_spend_sum g;
        bt_spend_of_group(cfg, evals, i, &g);
        if (g.quality == BT_QL_UNKNOWN)
            continue;
        char msg[320];
        struct bt_buf names = {0};
        double budget = bt_spend_group_budget(cfg, evals, i);
        int top[3];
        if (!isnan(budget) && g.usd_today >= budget) {
            top_spenders(cfg, evals, NULL, i, true, top);
            name_spenders(cfg, evals, top, true, &names);
            bt_fmt_cut(msg, sizeof msg,
                     "quota group %s: today's spend $%.2f%s passes its budget_usd_per_day $%.2f "
                     "([group]); the biggest spenders: %s (list prices: an estimate)",
                     cfg->routes[i].name, g.usd_today, g.quality == BT_QL_LOWER ? " or more" : "",
                     budget, bt_buf_str(&names));
            if (top[0] >= 0)
                spend_warn(evals, top[0], msg);
            bt_buf_free(&names);
            continue;
        }
        double recent, base;
        int bmin;
        if (!bt_spend_group_window(cfg, st, evals, i, &recent, &base, &bmin) || isnan(recent) ||
            isnan(base) || recent < cfg->spend_spike_floor ||
            recent <= cfg->spend_spike_factor * base)
            continue;
        top_spenders(cfg, evals, NULL, i, false, top);
        name_spenders(cfg, evals, top, false, &names);
        char ratio[48];
        if (base > 0)
            snprintf(ratio, sizeof ratio, "%.1fx", recent / base);
        else
            snprintf(ratio, sizeof ratio, "up from");
        bt_fmt_cut(msg, sizeof msg,
                 "quota group %s spends $%.2f/h over the last %d minutes, %s the trailing "
                 "%d-minute median of $%.2f/h; spending now: %s (list prices: an estimate)",
                 cfg->routes[i].name, recent, cfg->spend_spike_minutes, ratio, bmin, base,
                 bt_buf_str(&names));
        if (top[0] >= 0)
            spend_warn(evals, top[0], msg);
        bt_buf_free(&names);
    }
}

/* A [team NAME] budget passed: raised on the route the team spends most on. */
static void team_spend(const struct bt_config *cfg, const struct bt_store *st,
                       struct bt_eval *evals)
{
    bool any = false;
    for (int i = 0; i < cfg->nbudgets && !any; i++)
        any = cfg->budgets[i].team;
    if (!any)
        return;
    struct bt_spend_team *t = NULL;
    int n = bt_spend_by_team(cfg, st, evals, NULL, &t);
    for (int k = 0; k < n; k++) {
        double budget = bt_spend_team_budget(cfg, t[k].name);
        if (isnan(budget) || t[k].usd_today < budget || t[k].top < 0)
            continue;
        char msg[320];
        bt_fmt_cut(msg, sizeof msg,
                 "team %s: today's spend $%.2f%s passes its budget_usd_per_day $%.2f ([team]); "
                 "it spends $%.2f/h now, most on %s ($%.2f/h; the route's spend split by the "
                 "team's share; list prices: an estimate)",
                 t[k].name, t[k].usd_today, t[k].quality == BT_QL_LOWER ? " or more" : "", budget,
                 t[k].usd_per_hour, cfg->routes[t[k].top].name, t[k].top_usd_per_hour);
        spend_warn(evals, t[k].top, msg);
    }
    free(t);
}

void bt_rules_spend_sums(const struct bt_config *cfg, const struct bt_store *st,
                         struct bt_eval *evals)
{
    group_spend(cfg, st, evals);
    team_spend(cfg, st, evals);
    if (isnan(cfg->budget_usd_per_day))
        return;
    struct bt_spend_sum *sums = NULL;
    int ns = bt_spend_by_region(cfg, evals, NULL, &sums);
    for (int k = 0; k < ns; k++) {
        const struct bt_spend_sum *s = &sums[k];
        if (s->usd_today < cfg->budget_usd_per_day)
            continue;
        /* the biggest spenders of the day, the first of them warned */
        int top[3];
        top_spenders(cfg, evals, s->key, -1, true, top);
        if (top[0] < 0)
            continue;
        struct bt_buf names = {0};
        name_spenders(cfg, evals, top, true, &names);
        char msg[320];
        bt_fmt_cut(msg, sizeof msg,
                 "%s's spend today $%.2f%s passes budget_usd_per_day $%.2f; the biggest spenders: "
                 "%s (list prices: an estimate)",
                 s->key, s->usd_today, s->quality == BT_QL_LOWER ? " or more" : "",
                 cfg->budget_usd_per_day, bt_buf_str(&names));
        bt_buf_free(&names);
        spend_warn(evals, top[0], msg);
    }
    free(sums);
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
     "then the headroom shown can be far too optimistic.", bt_rule_estimate_only},
    {BT_W_THROTTLED_BELOW_ESTIMATE, "THROTTLED_BELOW_ESTIMATE", "throttled below the estimate",
     "Act on the cause named: the remedy differs for held reservations, bursts, retries, the "
     "daily quota and other callers on a shared quota.", bt_rule_throttled_below},
    {BT_W_OVERSIZED_MAX_TOKENS, "OVERSIZED_MAX_TOKENS", "max_tokens far above observed output",
     "Lower max_tokens to the recommended value, then watch for truncated answers "
     "(stop_reason max_tokens).", bt_rule_oversized},
    {BT_W_RETRY_LOAD, "RETRY_LOAD", "retries are a large share of load",
     "Cap retries with a retry budget and back off with jitter; shed or queue offered load at "
     "the admission boundary instead of retrying into the quota.", bt_rule_retry_load},
    {BT_W_HIDDEN_PARALLELISM, "HIDDEN_PARALLELISM", "more calls in flight than tested",
     "Bound model calls per worker with a semaphore so workers x calls stays within the tested "
     "concurrency.", bt_rule_hidden_parallelism},
    {BT_W_LOW_HEADROOM, "LOW_HEADROOM", "low headroom",
     "Shed or defer offline work, request a quota increase, or move traffic to another Region "
     "or inference profile.", bt_rule_low_headroom},
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
     "boundary if one must not starve the others.", NULL /* rule_shared_group */},
    {BT_W_BURNDOWN_MISMATCH, "BURNDOWN_MISMATCH", "burndown differs from the estimate",
     "Check the model's burndown in AWS's quota documentation and correct data/burndown.conf or "
     "the route's burndown key.", rule_burndown_mismatch},
    {BT_W_PARTIAL_GROUP, "PARTIAL_GROUP", "a member of the quota group cannot be read",
     "Fix the named route's collector (credentials, permissions, network); until then the "
     "headroom shown is at most what is left.", rule_partial_group},
    {BT_W_OUTPUT_CUTOFF, "OUTPUT_CUTOFF", "output quota nearly used: answers get cut off",
     "Lower max_tokens or shed output-heavy work; request an output quota increase (mantle: an "
     "AWS Support limit-increase case) and watch for truncated answers.", bt_rule_output_cutoff},
    {BT_W_SLOWDOWN, "SLOWDOWN", "calls got slower with no more traffic",
     "Expect less headroom at the same traffic until the service recovers; lower max_tokens or "
     "the concurrency cap meanwhile, and check the AWS Health Dashboard for the model and Region "
     "(bedtop plan ROUTE --limits).", bt_rule_slowdown},
    {BT_W_LEGACY_MODEL, "LEGACY_MODEL", "legacy model",
     "Plan the move to a current model: AWS refuses quota increases for legacy models.",
     rule_legacy},
    {BT_W_NO_PUBLISHED_QUOTA, "NO_PUBLISHED_QUOTA", "no published quota (internal capacity)",
     act_mantle_support, rule_no_published},
    {BT_W_PROVISIONED, "PROVISIONED", "provisioned throughput",
     "Size it in model units (Provisioned Throughput); it draws on no on-demand quota.",
     rule_provisioned},
    {BT_W_UNSEEN_CALLERS, "UNSEEN_CALLERS", "callers outside the config on this quota",
     "Add a route for each named ModelId (the same quota group) so the headroom counts them, "
     "or find who calls it (CloudTrail) and give it a share at its admission boundary.",
     rule_unseen},
    {BT_W_SPEND_SPIKE, "SPEND_SPIKE", "spend rate off its baseline, or over budget", act_spend,
     rule_spend_spike},
};

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

void bt_rules_apply(const struct bt_config *cfg, const struct bt_route *rt, struct bt_eval *e,
                    const struct bt_group *g)
{
    e->status = BT_ST_OK;
    e->nwarn = 0;
    for (int k = 0; k < BT_W_COUNT && e->nwarn < BT_MAX_WARN; k++) {
        struct bt_warning *w = &e->warnings[e->nwarn];
        memset(w, 0, sizeof *w);
        bool hit = rules[k].check ? rules[k].check(cfg, rt, e, w)
                                  : rules[k].code == BT_W_SHARED_QUOTA && rule_shared_group(cfg, rt, e, w, g);
        if (hit) {
            w->code = rules[k].code;
            if (!w->action)
                w->action = rules[k].action;
            e->status = bt_status_worse(e->status, w->severity);
            e->nwarn++;
        }
    }
}
