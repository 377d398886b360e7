#include "render/exposition.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/apicost.h"
#include "core/figures.h"
#include "core/sanitize.h"

/* One source of truth for the exported names: id, name, type, help. Counter
 * names are the family (OpenMetrics); their samples end in _total. The per-route
 * figures' families come first, from the figure table (core/figures.c: name, help,
 * order), then these. */
#define EXPO_FAMILIES(X)                                                                          \
    X(QUOTA, "bedtop_quota_tokens_per_minute", "gauge",                                           \
      "Tokens-per-minute quota (kind tpm; mantle: input_tpm and output_tpm) and where it came from.") \
    X(QUOTA_TPD, "bedtop_quota_tokens_per_day", "gauge", "Daily token quota.")                    \
    X(QUOTA_RPM, "bedtop_quota_requests_per_minute", "gauge",                                     \
      "Requests-per-minute quota where Service Quotas lists one: the route's rpm side.")         \
    X(SIDE_RATIO, "bedtop_side_headroom_ratio", "gauge",                                          \
      "Headroom of each limit that applies (label side; binding=\"true\" on the one that binds; quality: known, upper-bound, estimate, ...).") \
    X(STATUS, "bedtop_route_status", "gauge", "Route status: 0 ok, 1 warn, 2 crit, 3 unknown.")   \
    X(WARNING, "bedtop_warning", "gauge", "A warning active on a route (value 1).")               \
    X(AGE, "bedtop_data_age_seconds", "gauge",                                                    \
      "Seconds from the newest data evaluated (CloudWatch minute, admission scrape) to the evaluation.") \
    X(DATA_TS, "bedtop_data_timestamp_seconds", "gauge",                                          \
      "The CloudWatch minute or admission scrape evaluated (epoch seconds).")                     \
    X(LAST_OK, "bedtop_source_last_success_timestamp_seconds", "gauge",                           \
      "Last successful poll of a source for the route (epoch seconds).")                          \
    X(LAST_ERR, "bedtop_source_last_error_timestamp_seconds", "gauge",                            \
      "Last failed poll of a source for the route, while failing (epoch seconds).")               \
    X(MAX_TOKENS, "bedtop_max_tokens", "gauge", "Output allowance callers request (max_tokens).") \
    X(BURNDOWN, "bedtop_burndown", "gauge", "Output token multiplier of the quota (burndown).")    \
    X(SPEND_HOUR, "bedtop_spend_usd_per_hour", "gauge",                                           \
      "Spend at list prices (an estimate: no discounts or credits) at the evaluated minute's rate, USD per hour (label tier; absent when unpriced).") \
    X(SPEND_TODAY, "bedtop_spend_usd_today", "gauge",                                             \
      "Spend at list prices since 00:00 UTC, USD (label tier, quality: estimate or lower-bound; absent when unpriced).") \
    X(SIGNAL, "bedtop_signal", "gauge",                                                           \
      "Raw input of the evaluation, per minute (CloudWatch) or per scrape (admission).")         \
    X(METRICS, "bedtop_cloudwatch_metrics_requested", "counter",                                  \
      "CloudWatch metrics requested by GetMetricData (billed per metric).")                       \
    X(API, "bedtop_api_requests", "counter", "AWS API requests sent, by API and final outcome.")   \
    X(METRICS_MIN, "bedtop_cloudwatch_metrics_requested_per_minute", "gauge",                     \
      "Metrics requested per minute, measured over the last hour.")                               \
    X(METRICS_DAY, "bedtop_cloudwatch_metrics_requested_per_day", "gauge",                        \
      "Metrics requested per day, measured (the last 24 h, or the hourly rate x 1440).")          \
    X(COST_DAY, "bedtop_cloudwatch_cost_usd_per_day", "gauge",                                    \
      "Price of those metrics per day at the public GetMetricData rate (USD 0.01 per 1,000).")   \
    X(OVERALL, "bedtop_status", "gauge", "Worst route status: 0 ok, 1 warn, 2 crit, 3 unknown.")   \
    X(EVAL_TS, "bedtop_evaluation_timestamp_seconds", "gauge", "When the figures were evaluated.") \
    X(BUILD, "bedtop_build_info", "gauge", "bedtop version (value 1).")

#define F_ENUM(id, name, type, help) F_##id,
enum fam { EXPO_FAMILIES(F_ENUM) F_COUNT };
#undef F_ENUM
#define F_ROW(id, name, type, help) {name, type, help},
static const struct {
    const char *name, *type, *help;
} fams[F_COUNT] = {EXPO_FAMILIES(F_ROW)};
#undef F_ROW

#define MAX_EXTRA 5

/* A label value is cut to this many bytes (less one), on a character boundary. */
#define LABEL_MAX 192

/* Labels point at strings the report holds (config, evaluations, static names)
 * for as long as it is rendered: nothing is copied per sample (issue 38). */
struct sample {
    int fam;                         /* a figure family's place, or nfig + enum fam */
    int route;                       /* -1: no route labels */
    const char *key[MAX_EXTRA];
    const char *val[MAX_EXTRA];      /* a quota name can be long: cut at LABEL_MAX */
    double v;
};

struct samples {
    struct sample *s;
    size_t n, cap;
    int nfig;                        /* the figure families, in their order */
    enum bt_fig_id fig[BT_FIG_COUNT];
};

/* Family k of ss (figures first, then fams[]). */
static const char *fam_name(const struct samples *ss, int k)
{
    return k < ss->nfig ? bt_figures[ss->fig[k]].prom : fams[k - ss->nfig].name;
}

static const char *fam_help(const struct samples *ss, int k)
{
    return k < ss->nfig ? bt_figures[ss->fig[k]].prom_help : fams[k - ss->nfig].help;
}

static const char *fam_type(const struct samples *ss, int k)
{
    return k < ss->nfig ? "gauge" : fams[k - ss->nfig].type;
}

static void add_va(struct samples *ss, int fam, int route, double v, va_list ap)
{
    if (!isfinite(v))
        return;
    if (ss->n == ss->cap) {
        ss->cap = ss->cap ? 2 * ss->cap : 256;
        ss->s = bt_xrealloc(ss->s, ss->cap * sizeof *ss->s); /* the project's OOM rule: say so, exit 3 */
    }
    struct sample *s = &ss->s[ss->n++];
    memset(s->key, 0, sizeof s->key);
    s->fam = fam;
    s->route = route;
    s->v = v;
    for (int k = 0; k < MAX_EXTRA; k++) {
        const char *key = va_arg(ap, const char *);
        if (!key)
            break;
        s->key[k] = key;
        s->val[k] = va_arg(ap, const char *);
    }
}

/* Adds a sample unless v is unknown (NaN or infinite: absent, never NaN).
 * Extra labels as key, value pairs, NULL-terminated. */
static void add(struct samples *ss, enum fam f, int route, double v, ...)
{
    va_list ap;
    va_start(ap, v);
    add_va(ss, ss->nfig + (int)f, route, v, ap);
    va_end(ap);
}

/* A figure family's sample (k: its place among the figure families). */
static void add_fig(struct samples *ss, int k, int route, double v, ...)
{
    va_list ap;
    va_start(ap, v);
    add_va(ss, k, route, v, ap);
    va_end(ap);
}

void bt_expo_quota_group(const struct bt_config *cfg, int i, char *out, size_t n)
{
    bt_quota_group_key(&cfg->routes[i], out, n); /* core's one rule for who shares a quota */
    if (out[0] == '|') /* no account or profile: the caller's own */
        memmove(out, out + 1, strlen(out));
}

/* The raw inputs of route i's evaluation, where the evaluation read them. */
static void route_signals(const struct bt_report *r, int i, struct samples *ss)
{
    const struct bt_eval *e = &r->evals[i];
    const struct bt_store *st = r->store;
    for (int s = 0; s < BT_SIG_COUNT; s++) {
        const char *name = bt_signal_info[s].name;
        double v = NAN;
        if (bt_signal_daily((enum bt_signal)s) && e->minute) {
            /* through the last whole minute, as check's one-day sums run to the poll's end */
            int64_t through = bt_minute_floor(e->now) - 60;
            int64_t at = through > e->minute ? through : e->minute;
            /* the cache reads' day sum only where it was asked with the others (not the
             * minutes after an hour alone, for a store without it) */
            bool held = s != BT_SIG_DAY_CACHE_READ || !bt_store_has_day_sum(st, i, at) ||
                        bt_store_day_sum_held(st, i, BT_SIG_DAY_CACHE_READ, at);
            if (!e->mantle && held)
                v = bt_store_day_sum(st, i, (enum bt_signal)s, at);
        } else if (bt_signal_info[s].source == BT_SRC_ADMISSION) {
            v = e->adm_minute ? bt_store_at(st, i, (enum bt_signal)s, e->adm_minute) : NAN;
        } else if (e->minute) {
            v = bt_store_at(st, i, (enum bt_signal)s, e->minute);
        }
        add(ss, F_SIGNAL, i, v, "signal", name, NULL);
    }
}

/* eval -> series: every figure a route exports, in one place. */
/* Route i's spend (core/cost.h): absent when unknown, never 0 for want of a price. */
static void spend_series(const struct bt_report *r, int i, struct samples *ss)
{
    const struct bt_spend *sp = &r->evals[i].spend;
    const char *tier = bt_tier_name((enum bt_tier)r->cfg->routes[i].tier);
    add(ss, F_SPEND_HOUR, i, sp->usd_per_hour, "tier", tier, NULL);
    add(ss, F_SPEND_TODAY, i, sp->usd_today, "tier", tier, "quality", bt_quality_name(sp->today_q),
        NULL);
}

static void route_series(const struct bt_report *r, int i, struct samples *ss)
{
    const struct bt_eval *e = &r->evals[i];
    const struct bt_route *rt = &r->cfg->routes[i];
    for (int k = 0; k < ss->nfig; k++) { /* the figure table's series */
        const struct bt_figure *f = &bt_figures[ss->fig[k]];
        const char *src = f->prom_source && f->source ? f->source(e) : NULL;
        /* one side per number: the side each figure is of (issue 34) */
        enum bt_side sd = bt_figure_side(f, e);
        const char *side = sd < BT_SIDE_COUNT ? bt_side_name(sd) : "";
        double v = bt_figure_value(f, e) / f->prom_scale;
        if (f->prom_source)
            add_fig(ss, k, i, v, f->prom_source, src ? src : "", "side", side, NULL);
        else
            add_fig(ss, k, i, v, "side", side, NULL);
    }
    static const enum bt_quota_kind tpm_kinds[] = {BT_Q_TPM, BT_Q_INPUT_TPM, BT_Q_OUTPUT_TPM};
    for (size_t k = 0; k < BT_ARRAY_LEN(tpm_kinds); k++) {
        const struct bt_quota *q = &rt->quota[tpm_kinds[k]];
        const char *mb = bt_quota_match_name(rt->quota_match[tpm_kinds[k]]);
        add(ss, F_QUOTA, i, q->value, "kind", bt_quota_kind_name(tpm_kinds[k]), "source",
            bt_quota_source_name(q->source), "code", q->code, "name", q->name, "matched_by",
            mb ? mb : "", NULL);
    }
    const struct bt_quota *tpd = &rt->quota[BT_Q_TPD], *rpm = &rt->quota[BT_Q_RPM];
    add(ss, F_QUOTA_TPD, i, tpd->value, "source", bt_quota_source_name(tpd->source), "code",
        tpd->code, "name", tpd->name, NULL);
    add(ss, F_QUOTA_RPM, i, rpm->value, "source", bt_quota_source_name(rpm->source), "code",
        rpm->code, "name", rpm->name, NULL);
    for (int k = 0; k < BT_SIDE_COUNT; k++)
        if (e->side[k].applies)
            add(ss, F_SIDE_RATIO, i, e->side[k].pct / 100, "side", bt_side_name((enum bt_side)k),
                "binding", (int)e->binding == k ? "true" : "false", "quality",
                bt_quality_name(e->side[k].headroom_q), NULL);
    add(ss, F_STATUS, i, bt_status_exit(e->status), NULL);
    for (int w = 0; w < e->nwarn; w++) {
        const struct bt_warning *wa = &e->warnings[w];
        add(ss, F_WARNING, i, 1, "code", bt_wcode_name(wa->code), "severity",
            wa->severity == BT_ST_OK ? "info" : bt_status_name(wa->severity), NULL);
    }
    if (e->minute) {
        add(ss, F_AGE, i, (double)(e->now - e->minute), "source", "cloudwatch", NULL);
        add(ss, F_DATA_TS, i, (double)e->minute, "source", "cloudwatch", NULL);
    }
    if (e->adm_minute) {
        add(ss, F_AGE, i, (double)(e->now - e->adm_minute), "source", "admission", NULL);
        add(ss, F_DATA_TS, i, (double)e->adm_minute, "source", "admission", NULL);
    }
    for (int s = 0; s < BT_SRC_COUNT; s++) {
        const struct bt_source_status *ss_ = bt_store_status_c(r->store, i, (enum bt_source)s);
        const char *name = bt_source_name((enum bt_source)s);
        if (ss_->last_ok)
            add(ss, F_LAST_OK, i, (double)ss_->last_ok, "source", name, NULL);
        if (ss_->last_error && ss_->last_error >= ss_->last_ok)
            add(ss, F_LAST_ERR, i, (double)ss_->last_error, "source", name, NULL);
    }
    add(ss, F_MAX_TOKENS, i, e->max_tokens, NULL);
    if (!rt->burndown_source || strcmp(rt->burndown_source, "none") != 0) /* mantle: absent */
        add(ss, F_BURNDOWN, i, rt->burndown, "source",
            rt->burndown_source ? rt->burndown_source : "default", NULL);
    spend_series(r, i, ss);
    route_signals(r, i, ss);
}

static void poller_series(const struct bt_report *r, struct samples *ss)
{
    const struct bt_api_cost *c = r->api;
    if (c) {
        add(ss, F_METRICS, -1, (double)c->metrics_total, NULL);
        for (int a = 0; a < c->napi; a++)
            for (int o = 0; o < BT_API_NOUTCOMES; o++)
                add(ss, F_API, -1, (double)c->api[a].n[o], "api", c->api[a].api, "outcome",
                    bt_api_outcome_name((enum bt_api_outcome)o), NULL);
        double pm, pd, usd;
        bt_api_cost_rates(c, r->now, &pm, &pd, &usd);
        add(ss, F_METRICS_MIN, -1, pm, NULL);
        add(ss, F_METRICS_DAY, -1, pd, NULL);
        add(ss, F_COST_DAY, -1, usd, NULL);
    }
    add(ss, F_OVERALL, -1, bt_status_exit(r->status), NULL);
    add(ss, F_EVAL_TS, -1, (double)r->now, NULL);
    add(ss, F_BUILD, -1, 1, "version", BEDTOP_VERSION, NULL);
}

static void label(struct bt_buf *b, const char *k, const char *v, bool *first)
{
    bt_buf_printf(b, "%s%s=\"", *first ? "{" : ",", k);
    bt_san_prom_label_buf(b, v);
    bt_buf_putc(b, '"');
    *first = false;
}

static void value(struct bt_buf *b, double v)
{
    if (v == floor(v) && fabs(v) < 1e15) {
        bt_buf_printf(b, " %.0f\n", v);
        return;
    }
    /* 15 significant digits, every sample alike: what a double carries of a decimal
     * figure, so arithmetic's binary noise (871401.7557000001, 0.43570087785000006)
     * is not exported as if it were measured */
    bt_buf_printf(b, " %.15g\n", v);
}

/* What every sample's labels share, rendered once a render (issue 38: a route's
 * ~30 samples each rendered its six labels): each route's block
 * ({route="...",...,quota_group="..."), and the closing labels (mode, replica). */
struct blocks {
    struct bt_buf b;
    size_t *at;                      /* route i's block: b.buf + at[i], length at[i + 1] - at[i] */
    size_t tail_at, tail_len;        /* ,mode="demo",replica="..." without the leading ',' */
};

static void blocks_build(const struct bt_report *r, struct blocks *bl)
{
    bl->at = bt_xcalloc((size_t)r->n + 1, sizeof *bl->at);
    for (int i = 0; i < r->n; i++) {
        bl->at[i] = bl->b.len;
        if (!bt_report_shows(r, i))
            continue;
        const struct bt_route *rt = &r->cfg->routes[i];
        char group[320];
        bool first = true;
        bt_expo_quota_group(r->cfg, i, group, sizeof group);
        label(&bl->b, "route", rt->name, &first);
        label(&bl->b, "model_id", rt->model, &first);
        label(&bl->b, "region", rt->region, &first);
        label(&bl->b, "endpoint", bt_endpoint_name(rt->endpoint), &first);
        label(&bl->b, "inference", bt_inference_name(rt->inference), &first);
        label(&bl->b, "quota_group", group, &first);
    }
    bl->at[r->n] = bl->b.len;
    bl->tail_at = bl->b.len;
    bool first = false; /* each label with its ',' */
    /* simulated figures never pass for real ones, replayed from a demo recording too */
    if ((r->mode && !strcmp(r->mode, "demo")) || (r->recorded_mode && !strcmp(r->recorded_mode, "demo")))
        label(&bl->b, "mode", "demo", &first);
    if (r->replica) /* an HA pair's series differ in this label only */
        label(&bl->b, "replica", r->replica, &first);
    bl->tail_len = bl->b.len - bl->tail_at;
}

static void render_sample(const struct samples *ss, const struct blocks *bl,
                          const struct sample *s, bool counter, struct bt_buf *b)
{
    bt_buf_puts(b, fam_name(ss, s->fam));
    if (counter)
        bt_buf_puts(b, "_total");
    bool first = true;
    if (s->route >= 0) {
        bt_buf_add(b, bl->b.buf + bl->at[s->route], bl->at[s->route + 1] - bl->at[s->route]);
        first = false;
    }
    for (int k = 0; k < MAX_EXTRA && s->key[k]; k++) {
        const char *v = s->val[k];
        char cut[LABEL_MAX];
        if (!v[0])
            continue;
        if (strlen(v) >= sizeof cut) { /* as long as a label value ever was */
            bt_strlcpy(cut, v, sizeof cut);
            v = cut;
        }
        label(b, s->key[k], v, &first);
    }
    if (bl->tail_len) { /* its first label opens the braces when nothing else did */
        size_t skip = first ? 1 : 0;
        if (first)
            bt_buf_putc(b, '{');
        bt_buf_add(b, bl->b.buf + bl->tail_at + skip, bl->tail_len - skip);
        first = false;
    }
    if (!first)
        bt_buf_putc(b, '}');
    value(b, s->v);
}

void bt_expo_render(const struct bt_report *r, enum bt_expo_format f, struct bt_buf *out)
{
    struct samples ss = {0};
    ss.nfig = bt_figures_of(BT_FW_PROM, ss.fig);
    for (int i = 0; i < r->n; i++)
        if (bt_report_shows(r, i)) /* check --route */
            route_series(r, i, &ss);
    poller_series(r, &ss);
    struct blocks bl = {0};
    blocks_build(r, &bl);
    /* one family's samples together, after its HELP and TYPE, in the order they were
     * added: a counting sort by family (a pass over every sample per family was
     * 40 passes over ~30 samples a route) */
    int nfam = ss.nfig + F_COUNT;
    size_t *start = bt_xcalloc((size_t)nfam + 1, sizeof *start);
    size_t *order = bt_xmalloc((ss.n ? ss.n : 1) * sizeof *order);
    for (size_t k = 0; k < ss.n; k++)
        start[ss.s[k].fam + 1]++;
    for (int fa = 0; fa < nfam; fa++)
        start[fa + 1] += start[fa];
    size_t *fill = bt_xmalloc(((size_t)nfam + 1) * sizeof *fill);
    memcpy(fill, start, ((size_t)nfam + 1) * sizeof *fill);
    for (size_t k = 0; k < ss.n; k++)
        order[fill[ss.s[k].fam]++] = k;
    free(fill);
    /* a body of the size the last one had, at once (~10 kB a route) */
    bt_buf_reserve(out, ss.n * 96 + 4096);
    for (int fa = 0; fa < nfam; fa++) {
        const char *type = fam_type(&ss, fa), *name = fam_name(&ss, fa);
        bool counter = !strcmp(type, "counter");
        const char *suffix = counter && f == BT_EXPO_TEXT ? "_total" : "";
        bt_buf_printf(out, "# HELP %s%s %s\n# TYPE %s%s %s\n", name, suffix,
                      fam_help(&ss, fa), name, suffix, type);
        for (size_t k = start[fa]; k < start[fa + 1]; k++)
            render_sample(&ss, &bl, &ss.s[order[k]], counter, out);
    }
    free(start);
    free(order);
    free(bl.at);
    bt_buf_free(&bl.b);
    bt_expo_shares(r, out);
    bt_expo_spend(r, out);
    if (f == BT_EXPO_OPENMETRICS)
        bt_buf_puts(out, "# EOF\n");
    free(ss.s);
}

int64_t bt_expo_changes_at(const struct bt_report *r)
{
    int64_t at = r->n > 0 ? bt_eval_changes_at(r->cfg, r->store, r->evals, r->now) : INT64_MAX;
    /* route_signals: the day's sums run through the last whole minute before now, so a
     * minute the store holds after that, or the next UTC day, moves them */
    int64_t through = bt_minute_floor(r->now) - 60;
    int64_t next_day = through - through % 86400 + 86400 + 60;
    for (int i = 0; i < r->n; i++) {
        const struct bt_eval *e = &r->evals[i];
        if (!bt_report_shows(r, i) || !e->minute || e->mantle)
            continue;
        int64_t upto = through > e->minute ? through : e->minute;
        if (next_day < at)
            at = next_day;
        for (int s = 0; s < BT_SIG_COUNT; s++) {
            if (!bt_signal_daily((enum bt_signal)s))
                continue;
            int64_t m = bt_store_newest(r->store, i, bt_signal_daily_minute((enum bt_signal)s), INT64_MAX);
            if (m > upto && m + 60 > r->now && m + 60 < at)
                at = m + 60;
        }
    }
    return at;
}
