/* What-if and the change typed as words (core/plan.h); the forecast is in
 * forecast.c, the observed ceiling and the limits in planlimits.c. A what-if changes
 * the observations (a copy of the config and the store) the way the change would,
 * then runs the one evaluation frame on them: R, held, used, every side and
 * the binding rule are the frame's, never computed a second time here. */
#include "core/plan.h"

#include <fnmatch.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/eval_int.h"
#include "core/format.h"
#include "core/plan_int.h"
#include "core/util.h"

void bt_plan_change_none(struct bt_plan_change *c)
{
    memset(c, 0, sizeof *c);
    c->max_tokens = c->concurrency = c->traffic = NAN;
    c->tier = BT_TIER_KEEP;
}

bool bt_plan_change_any(const struct bt_plan_change *c)
{
    return !isnan(c->max_tokens) || !isnan(c->concurrency) || !isnan(c->traffic) ||
           c->retries_off || c->tier != BT_TIER_KEEP || c->region[0];
}

/* "--max-tokens" / "max-tokens" / "max_tokens" -> "max_tokens" */
static void plan_word(const char *w, size_t len, char *out, size_t n)
{
    while (len && *w == '-') {
        w++;
        len--;
    }
    size_t k = 0;
    for (; k < len && k + 1 < n; k++)
        out[k] = w[k] == '-' ? '_' : w[k];
    out[k] = '\0';
}

bool bt_plan_change_parse(const char *text, struct bt_plan_change *c, char *why, size_t n)
{
    bt_plan_change_none(c);
    char key[32] = "", val[64];
    const char *p = text;
    for (;;) {
        while (*p == ' ' || *p == '=' || *p == ',')
            p++;
        if (!*p)
            break;
        size_t len = strcspn(p, " =,");
        char word[64];
        if (key[0]) /* a value as typed */
            snprintf(word, sizeof word, "%.*s", (int)(len < sizeof word ? len : sizeof word - 1), p);
        else
            plan_word(p, len, word, sizeof word);
        p += len;
        if (!key[0]) {
            static const char *const keys[] = {"max_tokens", "concurrency", "traffic", "retries",
                                               "retries_off", "tier", "region"};
            bool known = false;
            for (size_t i = 0; i < BT_ARRAY_LEN(keys); i++)
                known = known || !strcmp(word, keys[i]);
            if (!known) {
                snprintf(why, n, "'%.30s' is not a change; use max_tokens N, concurrency N, "
                         "traffic xF, retries off, tier flex|priority, region R", word);
                return false;
            }
            if (!strcmp(word, "retries_off")) {
                c->retries_off = true;
                continue;
            }
            bt_strlcpy(key, word, sizeof key);
            continue;
        }
        bt_strlcpy(val, word, sizeof val);
        double v;
        const char *num = (val[0] == 'x' || val[0] == 'X') ? val + 1 : val;
        bool isnum = bt_parse_double(num, &v) && isfinite(v); /* "traffic nan" is no value */
        if (!strcmp(key, "retries") && (!strcmp(val, "off") || !strcmp(val, "0"))) {
            c->retries_off = true;
        } else if (!strcmp(key, "tier") && (!strcmp(val, "flex") || !strcmp(val, "priority"))) {
            c->tier = !strcmp(val, "flex") ? BT_TIER_FLEX : BT_TIER_PRIORITY;
        } else if (!strcmp(key, "region") && bt_config_valid_region(val)) {
            bt_strlcpy(c->region, val, sizeof c->region);
        } else if (isnum && !strcmp(key, "max_tokens")) {
            c->max_tokens = v;
        } else if (isnum && !strcmp(key, "concurrency")) {
            c->concurrency = v;
        } else if (isnum && !strcmp(key, "traffic")) {
            c->traffic = v;
        } else {
            snprintf(why, n, "%s: '%.30s' is not a value for it", key, val);
            return false;
        }
        key[0] = '\0';
    }
    if (key[0]) {
        snprintf(why, n, "%s: needs a value", key);
        return false;
    }
    return true;
}

void bt_plan_note(struct bt_plan_notes *n, const char *fmt, ...)
{
    if (n->n >= BT_PLAN_MAX_NOTES)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(n->text[n->n++], sizeof n->text[0], fmt, ap);
    va_end(ap);
}

void bt_plan_frame_at(const struct bt_config *cfg, const struct bt_store *st, int64_t m,
                      const struct bt_eval_groups *g, const bool *need, struct bt_eval *evals)
{
    bt_eval_all_with(cfg, st, m + 60 + (int64_t)cfg->cw_lag, g, true, need, evals);
}

/* ---- a copy of the observations, changed ---- */

static void clone_config(struct bt_config *d, const struct bt_config *s)
{
    *d = *s;
    d->routes = bt_xcalloc((size_t)(s->nroutes ? s->nroutes : 1), sizeof *d->routes);
    memcpy(d->routes, s->routes, (size_t)s->nroutes * sizeof *d->routes);
    memset(&d->burndown, 0, sizeof d->burndown); /* borrowed: the frame reads routes only */
}

/* Replaces an observed value (only where one is visible: nothing is invented). */
static void put(struct bt_store *st, int r, enum bt_signal s, int64_t m, double v)
{
    if (isnan(bt_store_at(st, r, s, m)) || isnan(v))
        return;
    struct bt_sample smp = {.t = m, .route = r, .signal = s, .value = v < 0 ? 0 : v};
    bt_store_add(st, &smp, m);
}

static void scale(struct bt_store *st, int r, enum bt_signal s, int64_t m, double k)
{
    put(st, r, s, m, bt_store_at(st, r, s, m) * k);
}

/* What a change of traffic scales: every count of calls and tokens and the gauges of
 * calls in flight (Little's law at unchanged latency). Today's sums so far stay. */
static const enum bt_signal traffic_signals[] = {
    BT_SIG_INVOCATIONS, BT_SIG_INPUT_TOKENS, BT_SIG_OUTPUT_TOKENS, BT_SIG_CACHE_READ,
    BT_SIG_CACHE_WRITE, BT_SIG_THROTTLES, BT_SIG_CLIENT_ERRORS, BT_SIG_SERVER_ERRORS,
    BT_SIG_ESTIMATED_TPM, BT_SIG_ADM_IN_FLIGHT, BT_SIG_ADM_QUEUE, BT_SIG_ADM_ADMITTED,
    BT_SIG_ADM_REJECTED, BT_SIG_ADM_RETRIES, BT_SIG_ADM_THROTTLED, BT_SIG_ADM_COMPLETED,
    BT_SIG_ADM_RESERVED, BT_SIG_ADM_SETTLED, BT_SIG_ADM_RESERVED_HELD, BT_SIG_TIER_RES_INVOCATIONS,
    BT_SIG_TIER_RES_INPUT, BT_SIG_TIER_RES_OUTPUT,
};

static void scale_traffic(struct bt_store *st, int r, int64_t m, double k)
{
    for (size_t i = 0; i < BT_ARRAY_LEN(traffic_signals); i++)
        scale(st, r, traffic_signals[i], m, k);
}

/* Calls in flight at minute m: the admission gauge, else Little's law. */
static double in_flight_at(const struct bt_store *st, int r, int64_t m)
{
    double g = bt_store_at(st, r, BT_SIG_ADM_IN_FLIGHT, m);
    if (!isnan(g))
        return g;
    return bt_littles_law(bt_store_at(st, r, BT_SIG_INVOCATIONS, m),
                          bt_store_at(st, r, BT_SIG_LATENCY_AVG, m));
}

/* The minutes a change is applied to: the replayed hour, the speed's trailing hour
 * and R's fallback before it, up to the newest scrape. */
#define CHANGE_SPAN ((BT_PLAN_WINDOW + BT_SPEED_HOUR + 40) * 60)

static void change_max_tokens(struct bt_config *cfg, struct bt_store *st, int r, int64_t now,
                              double mt)
{
    double cfg_mt = cfg->routes[r].max_tokens;
    for (int64_t m = bt_minute_floor(now + 120) - CHANGE_SPAN; m <= now + 120; m += 60) {
        double old = bt_store_at(st, r, BT_SIG_ADM_MAX_TOKENS, m);
        if (isnan(old))
            old = cfg_mt;
        if (!isnan(old)) {
            double d = mt - old;
            put(st, r, BT_SIG_ADM_RESERVED, m,
                bt_store_at(st, r, BT_SIG_ADM_RESERVED, m) + d * bt_z(bt_store_at(st, r, BT_SIG_ADM_ADMITTED, m)));
            put(st, r, BT_SIG_ADM_RESERVED_HELD, m,
                bt_store_at(st, r, BT_SIG_ADM_RESERVED_HELD, m) +
                    d * bt_z(bt_store_at(st, r, BT_SIG_ADM_IN_FLIGHT, m)));
        }
        put(st, r, BT_SIG_ADM_MAX_TOKENS, m, mt);
        /* answers longer than the allowance are cut at it */
        double inv = bt_store_at(st, r, BT_SIG_INVOCATIONS, m);
        double out = bt_store_at(st, r, BT_SIG_OUTPUT_TOKENS, m);
        if (inv > 0 && out > inv * mt)
            put(st, r, BT_SIG_OUTPUT_TOKENS, m, inv * mt);
    }
    cfg->routes[r].max_tokens = mt;
}

static void change_concurrency(struct bt_config *cfg, struct bt_store *st, int r, int64_t now,
                               double cap, int *capped)
{
    *capped = 0;
    for (int64_t m = bt_minute_floor(now + 120) - CHANGE_SPAN; m <= now + 120; m += 60) {
        double x = in_flight_at(st, r, m);
        if (x > cap) {
            scale_traffic(st, r, m, cap / x);
            (*capped)++;
        }
        put(st, r, BT_SIG_ADM_CONC_LIMIT, m, cap);
    }
    cfg->routes[r].concurrency_limit = cap;
}

static void change_retries(struct bt_store *st, int r, int64_t now, bool *seen)
{
    *seen = false;
    for (int64_t m = bt_minute_floor(now + 120) - CHANGE_SPAN; m <= now + 120; m += 60) {
        double re = bt_store_at(st, r, BT_SIG_ADM_RETRIES, m);
        if (isnan(re))
            continue;
        *seen = true;
        /* a retried attempt that was throttled was throttled once more than the work */
        put(st, r, BT_SIG_THROTTLES, m, bt_store_at(st, r, BT_SIG_THROTTLES, m) - re);
        put(st, r, BT_SIG_ADM_THROTTLED, m, bt_store_at(st, r, BT_SIG_ADM_THROTTLED, m) - re);
        put(st, r, BT_SIG_ADM_RETRIES, m, 0);
    }
}

static void change_region(struct bt_config *cfg, int r, const char *region)
{
    struct bt_route *rt = &cfg->routes[r];
    bt_strlcpy(rt->region, region, sizeof rt->region);
    for (int k = 0; k < BT_Q_COUNT; k++) {
        /* a quota's value is the Region's; a member there may know it */
        rt->quota[k].value = NAN;
        rt->quota[k].source = BT_QS_UNKNOWN;
    }
}

/* A tier's effect on use that the observations cannot show: flex calls run longer
 * (they hold reservations longer: use at least as observed), priority calls no longer
 * (use at most as observed). Priority and Flex change price, not quota. */
static void tier_bound(struct bt_eval *e, enum bt_quality q)
{
    static const enum bt_side held_sides[] = {BT_SIDE_TPM, BT_SIDE_INPUT, BT_SIDE_RES_INPUT};
    for (size_t i = 0; i < BT_ARRAY_LEN(held_sides); i++) {
        struct bt_side_fig *f = &e->side[held_sides[i]];
        if (!f->applies || f->group_q == BT_QL_UNKNOWN)
            continue;
        f->used_q = bt_quality_add(f->used_q, q);
        f->group_q = bt_quality_add(f->group_q, q);
        f->headroom_q = bt_quality_headroom(f->group_q);
    }
    e->used_q = bt_quality_add(e->used_q, q); /* the group's is its token side's */
    if (e->side[e->binding].applies)
        e->headroom_q = e->side[e->binding].headroom_q;
}

static void describe_inputs(const struct bt_eval *e, struct bt_plan_notes *n)
{
    char hm[8], am[8];
    if (e->minute) {
        bt_fmt_hhmm(e->minute, hm, sizeof hm);
        if (e->adm_minute) {
            bt_fmt_hhmm(e->adm_minute, am, sizeof am);
            bt_plan_note(n, "CloudWatch minute %s UTC; admission gauges at %s UTC", hm, am);
        } else {
            bt_plan_note(n, "CloudWatch minute %s UTC; no admission counters", hm);
        }
    }
    if (e->reservation_source)
        bt_plan_note(n, "reservation per call from %s%s", e->reservation_source,
             !strcmp(e->reservation_source, "cloudwatch") ? " (average input per call + max_tokens)" : "");
    if (e->in_flight_source)
        bt_plan_note(n, "calls in flight from %s%s", e->in_flight_source,
             !strcmp(e->in_flight_source, "littles-law") ? " (calls/min x average latency)" : "");
}

/* Its group's other routes (by the observed frame), before and after. */
static void members(const struct bt_whatif *w, const struct bt_eval *eb, const struct bt_eval *ea,
                    struct bt_whatif *out)
{
    out->nmembers = 0;
    for (int o = eb[w->route].group.leader; o >= 0 && out->nmembers < BT_PLAN_MEMBERS;
         o = bt_group_next(eb, o)) {
        if (o == w->route)
            continue;
        struct bt_plan_member *pm = &out->members[out->nmembers++];
        pm->route = o;
        pm->pct_before = eb[o].headroom_pct;
        pm->q_before = eb[o].headroom_q;
        pm->pct_after = ea[o].headroom_pct;
        pm->q_after = ea[o].headroom_q;
        pm->left_group = ea[o].group.leader != ea[w->route].group.leader;
    }
}

/* Calls of the route that fit in flight at once: those in flight and those that fit more. */
static double calls_at_once(const struct bt_eval *e)
{
    return bt_z(e->in_flight) + e->fits_more;
}

/* The last hour replayed, as observed and changed: its peak minute (least headroom on
 * the binding side) and whether the change would still go past a quota there. */
/* stopped: the change is traffic x0, the route makes no calls after it (issue 37:
 * "nan after the change"): nothing of it can throttle, and no call fits "at once". */
static void replay_peak(const struct bt_config *cb, const struct bt_store *sb, const struct bt_config *ca,
                        const struct bt_store *sa, struct bt_whatif *w, bool stopped)
{
    int r = w->route;
    struct bt_eval *eb = bt_xcalloc((size_t)cb->nroutes, sizeof *eb);
    struct bt_eval *ea = bt_xcalloc((size_t)ca->nroutes, sizeof *ea);
    struct bt_eval_groups *gb = bt_eval_groups_once(cb), *ga = bt_eval_groups_once(ca);
    double best = NAN, peak_fit_b = NAN, peak_fit_a = NAN;
    w->peak_verdict = "unknown";
    for (int i = 0; i < BT_PLAN_WINDOW && w->before.minute; i++) {
        int64_t m = w->before.minute - 60 * (int64_t)i;
        bt_plan_frame_at(cb, sb, m, gb, NULL, eb);
        if (eb[r].minute != m || isnan(eb[r].headroom_pct))
            continue;
        w->minutes_seen++;
        bt_plan_frame_at(ca, sa, m, ga, NULL, ea);
        if (eb[r].headroom_pct < 0)
            w->over_before++;
        if (ea[r].headroom_pct < 0)
            w->over_after++;
        double thr = bt_z(eb[r].throttles);
        /* the least headroom; among equals the most throttles */
        if (isnan(best) || eb[r].headroom_pct < best ||
            (eb[r].headroom_pct == best && thr > w->peak_throttles)) {
            best = eb[r].headroom_pct;
            w->peak_minute = m;
            w->peak_pct_before = eb[r].headroom_pct;
            w->peak_side_before = eb[r].binding;
            w->peak_pct_after = ea[r].headroom_pct;
            w->peak_side_after = ea[r].binding;
            w->peak_q_after = ea[r].headroom_q;
            w->peak_throttles = thr;
            peak_fit_b = calls_at_once(&eb[r]);
            peak_fit_a = calls_at_once(&ea[r]);
        }
    }
    if (w->peak_minute && !isnan(w->peak_pct_after)) {
        if (w->peak_pct_after < 0)
            w->peak_verdict = "yes";
        else if (w->peak_q_after == BT_QL_UPPER || w->peak_q_after == BT_QL_UNKNOWN)
            w->peak_verdict = "maybe";
        else if (w->peak_throttles > 0 && !stopped && !(peak_fit_a >= 2 * peak_fit_b))
            w->peak_verdict = "maybe"; /* throttled with headroom on average: bursts */
        else
            w->peak_verdict = "no";
        char hm[8];
        bt_fmt_hhmm(w->peak_minute, hm, sizeof hm);
        if (w->minutes_seen < BT_PLAN_WINDOW) /* coverage: of the minutes it had */
            bt_plan_note(&w->notes, "peak minute %s UTC of the %d covered min of the last %d (least "
                 "headroom; replayed at the minute's average, bursts within it unseen)", hm,
                 w->minutes_seen, BT_PLAN_WINDOW);
        else
            bt_plan_note(&w->notes, "peak minute %s UTC of the last %d min (least headroom; replayed at the "
                 "minute's average, bursts within it unseen)", hm, BT_PLAN_WINDOW);
        if (w->peak_throttles > 0 && w->peak_pct_before >= 0 && stopped)
            bt_plan_note(&w->notes, "the peak throttled %.0f calls with %.1f%% left on average: bursts above "
                 "the average; %.0f calls fit at once there; after the change the route makes none",
                 w->peak_throttles, w->peak_pct_before, peak_fit_b);
        else if (w->peak_throttles > 0 && w->peak_pct_before >= 0 && !isnan(peak_fit_a))
            bt_plan_note(&w->notes, "the peak throttled %.0f calls with %.1f%% left on average: bursts above "
                 "the average; %.0f calls fit at once there, %.0f after the change",
                 w->peak_throttles, w->peak_pct_before, peak_fit_b, peak_fit_a);
        else if (w->peak_throttles > 0 && w->peak_pct_before >= 0)
            bt_plan_note(&w->notes, "the peak throttled %.0f calls with %.1f%% left on average: bursts above "
                 "the average; %.0f calls fit at once there, unknown after the change",
                 w->peak_throttles, w->peak_pct_before, peak_fit_b);
    }
    bt_eval_groups_free(ga);
    bt_eval_groups_free(gb);
    free(ea);
    free(eb);
}

/* The model families AWS offers the Priority and Flex tiers for (DOMAIN.md "Service
 * tiers", AWS's "Service tiers" page: gpt-oss, Qwen, DeepSeek, Nova, Gemma, MiniMax,
 * Mistral, Kimi, Nemotron); not offered for most Claude models. Globs on the model ID
 * without its inference-profile prefix. */
static const struct {
    const char *glob, *family;
} tier_models[] = {
    {"openai.gpt-oss-*", "gpt-oss"},   {"qwen.*", "Qwen"},         {"deepseek.*", "DeepSeek"},
    {"amazon.nova-*", "Nova"},         {"google.gemma-*", "Gemma"}, {"minimax.*", "MiniMax"},
    {"mistral.*", "Mistral"},          {"moonshot*.kimi-*", "Kimi"}, {"nvidia.nemotron-*", "Nemotron"},
};

bool bt_tier_offered(const char *model_id)
{
    const char *id = bt_profile_strip(model_id ? model_id : "");
    for (size_t i = 0; i < BT_ARRAY_LEN(tier_models); i++)
        if (fnmatch(tier_models[i].glob, id, 0) == 0)
            return true;
    return false;
}

/* "plan --tier flex" on a model AWS does not offer it for: refused, saying which
 * models are offered it (the families, and the config's routes on them). */
static bool tier_refused(const struct bt_config *cfg, const struct bt_route *rt,
                         enum bt_plan_tier tier, char *why, size_t n)
{
    const char *model = rt->base_model[0] ? rt->base_model : rt->model;
    if (tier == BT_TIER_KEEP || (rt->endpoint == BT_EP_RUNTIME && bt_tier_offered(model)))
        return false;
    const char *name = tier == BT_TIER_FLEX ? "flex" : "priority";
    struct bt_buf fam = {0}, routes = {0};
    for (size_t i = 0; i < BT_ARRAY_LEN(tier_models); i++)
        bt_buf_printf(&fam, "%s%s", i ? ", " : "", tier_models[i].family);
    int k = 0;
    for (int i = 0; i < cfg->nroutes; i++) {
        const struct bt_route *o = &cfg->routes[i];
        if (o->endpoint == BT_EP_RUNTIME && bt_tier_offered(o->base_model[0] ? o->base_model : o->model))
            bt_buf_printf(&routes, "%s%s", k++ ? ", " : "", o->name);
    }
    snprintf(why, n,
             "the %s tier is not offered for %s%s (AWS offers Priority and Flex on bedrock-runtime for "
             "%s models, not for most Claude models); routes of this config that offer it: %s",
             name, model, rt->endpoint == BT_EP_MANTLE ? " on bedrock-mantle" : "", bt_buf_str(&fam),
             k ? bt_buf_str(&routes) : "none");
    bt_buf_free(&fam);
    bt_buf_free(&routes);
    return true;
}

bool bt_plan_whatif(const struct bt_config *cfg, const struct bt_store *st, int r, int64_t now,
                    const struct bt_plan_change *c, struct bt_whatif *w, char *why, size_t n)
{
    memset(w, 0, sizeof *w);
    w->route = r;
    w->now = now;
    if (r < 0 || r >= cfg->nroutes) {
        snprintf(why, n, "no such route");
        return false;
    }
    if ((!isnan(c->max_tokens) && !(c->max_tokens >= 1 && c->max_tokens <= 1e7)) ||
        (!isnan(c->concurrency) && !(c->concurrency >= 1 && c->concurrency <= 1e7)) ||
        (!isnan(c->traffic) && !(c->traffic >= 0 && c->traffic <= 1000))) {
        snprintf(why, n, "a change is out of range (max_tokens and concurrency 1 to 10,000,000, "
                 "traffic x0 to x1000)");
        return false;
    }
    if (tier_refused(cfg, &cfg->routes[r], c->tier, why, n))
        return false;
    struct bt_config ca;
    struct bt_store sa;
    clone_config(&ca, cfg);
    bt_store_clone(&sa, st);
    struct bt_eval *eb = bt_xcalloc((size_t)cfg->nroutes, sizeof *eb);
    struct bt_eval *ea = bt_xcalloc((size_t)cfg->nroutes, sizeof *ea);
    bt_eval_all(cfg, st, now, eb);
    w->before = eb[r];
    describe_inputs(&w->before, &w->notes);
    const struct bt_route *rt = &cfg->routes[r];
    char a[32], b[32];
    if (!isnan(c->traffic)) {
        for (int64_t m = bt_minute_floor(now + 120) - CHANGE_SPAN; m <= now + 120; m += 60)
            scale_traffic(&sa, r, m, c->traffic);
        if (c->traffic == 0)
            bt_plan_note(&w->notes, "traffic x0: the route stops (no calls, tokens or calls in flight); "
                 "today's tokens so far stay");
        else
            bt_plan_note(&w->notes, "traffic x%g: calls, tokens and calls in flight scale with it, latency "
                 "unchanged; today's tokens so far stay", c->traffic);
    }
    if (!isnan(c->concurrency)) {
        int capped;
        change_concurrency(&ca, &sa, r, now, c->concurrency, &capped);
        bt_plan_note(&w->notes, "at most %.0f in flight: calls above it wait in the caller's queue, accepted "
             "calls scale by %.0f / in flight at unchanged latency (%d min capped)", c->concurrency,
             c->concurrency, capped);
    }
    if (!isnan(c->max_tokens)) {
        double old = !isnan(w->before.max_tokens) ? w->before.max_tokens : rt->max_tokens;
        bt_fmt_count(old, a, sizeof a);
        bt_fmt_count(c->max_tokens, b, sizeof b);
        change_max_tokens(&ca, &sa, r, now, c->max_tokens);
        bt_plan_note(&w->notes, "max_tokens %s -> %s: each call reserves its input + %s; answers longer are "
             "cut at %s", a, b, b, b);
        double p99 = w->before.out_p99;
        if (!isnan(p99))
            bt_plan_note(&w->notes, "output length from the admission histogram (p99 %.0f): %s", p99,
                 c->max_tokens >= p99 ? "fewer than 1% of answers would be cut"
                                      : "more than 1% of answers would be cut (truncation)");
        else if (!isnan(w->before.avg_output))
            bt_plan_note(&w->notes, "no output distribution (no admission histogram): mean output %.0f per "
                 "call; truncation risk unknown", w->before.avg_output);
    }
    if (c->retries_off) {
        bool seen;
        change_retries(&sa, r, now, &seen);
        bt_plan_note(&w->notes, seen ? "retries off: retried attempts leave the requests and throttles "
                               "(admission counters); the work they retried stays"
                             : "retries off: no admission counters, so retried attempts cannot be "
                               "told apart: requests unchanged");
    }
    if (c->region[0]) {
        change_region(&ca, r, c->region);
        bt_plan_note(&w->notes, "moved to %s: its traffic leaves this quota group; the quota there is the "
             "one a route of the config in %s knows, else unknown", c->region, c->region);
    }
    bt_eval_all(&ca, &sa, now, ea);
    w->after = ea[r];
    if (c->tier == BT_TIER_FLEX) {
        tier_bound(&w->after, BT_QL_LOWER);
        bt_plan_note(&w->notes, "flex: same quota (Priority and Flex change price, not quota); flex calls "
             "run longer and hold reservations longer, by how much is unknown: use is at least this");
    } else if (c->tier == BT_TIER_PRIORITY) {
        tier_bound(&w->after, BT_QL_UPPER);
        bt_plan_note(&w->notes, "priority: same quota (Priority and Flex change price, not quota); calls no "
             "slower, so use is at most this");
    }
    members(w, eb, ea, w);
    replay_peak(cfg, st, &ca, &sa, w, c->traffic == 0);
    free(ea);
    free(eb);
    bt_store_free(&sa);
    free(ca.routes);
    return true;
}
