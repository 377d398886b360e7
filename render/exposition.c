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

/* What a render hands its sink at a time: the body is streamed in pieces of about
 * this size, never built whole (issue 38: 5,000 routes were ~50 MB plain before
 * their gzip). */
#define EXPO_CHUNK (64 * 1024)

/* One sample, rendered as soon as it is made. Labels point at strings the report
 * holds (config, evaluations, static names): nothing is copied per sample. */
struct sample {
    int fam;                         /* a figure family's place, or nfig + enum fam */
    int route;                       /* -1: no route labels */
    const char *key[MAX_EXTRA];
    const char *val[MAX_EXTRA];      /* a quota name can be long: cut at LABEL_MAX */
    double v;
};

/* What every sample's labels share, rendered once a render (issue 38: a route's
 * ~30 samples each rendered its six labels): each route's block
 * ({route="...",...,quota_group="..."), and the closing labels (mode, replica). */
struct blocks {
    struct bt_buf b;
    size_t *at;                      /* route i's block: b.buf + at[i], length at[i + 1] - at[i] */
    size_t tail_at, tail_len;        /* ,mode="demo",replica="..." without the leading ',' */
};

/* A render in progress: one family at a time, every route's samples of it in route
 * order (the order they were added in when every sample was kept and sorted). */
struct expo {
    const struct bt_report *r;
    int nfig;                        /* the figure families, in their order */
    enum bt_fig_id fig[BT_FIG_COUNT];
    struct blocks bl;
    int fam;                         /* the family being rendered: other samples are skipped */
    bool counter;                    /* its samples end in _total */
    struct bt_buf *out;              /* rendered text (the sink's piece, or the caller's buffer) */
    const struct bt_expo_sink *sink; /* NULL: everything stays in out */
};

/* Family k of x (figures first, then fams[]). */
static const char *fam_name(const struct expo *x, int k)
{
    return k < x->nfig ? bt_figures[x->fig[k]].prom : fams[k - x->nfig].name;
}

static const char *fam_help(const struct expo *x, int k)
{
    return k < x->nfig ? bt_figures[x->fig[k]].prom_help : fams[k - x->nfig].help;
}

static const char *fam_type(const struct expo *x, int k)
{
    return k < x->nfig ? "gauge" : fams[k - x->nfig].type;
}

static void label(struct bt_buf *b, const char *k, const char *v, bool *first)
{
    bt_buf_putc(b, *first ? '{' : ',');
    bt_buf_puts(b, k);
    bt_buf_add(b, "=\"", 2);
    bt_san_prom_label_buf(b, v);
    bt_buf_putc(b, '"');
    *first = false;
}

static void value(struct bt_buf *b, double v)
{
    if (v == floor(v) && fabs(v) < 1e15) {
        bt_buf_putc(b, ' ');
        bt_buf_fixed0(b, v);
        bt_buf_putc(b, '\n');
        return;
    }
    /* 15 significant digits, every sample alike: what a double carries of a decimal
     * figure, so arithmetic's binary noise (871401.7557000001, 0.43570087785000006)
     * is not exported as if it were measured */
    bt_buf_printf(b, " %.15g\n", v);
}

static void render_sample(const struct expo *x, const struct sample *s, struct bt_buf *b)
{
    const struct blocks *bl = &x->bl;
    bt_buf_puts(b, fam_name(x, s->fam));
    if (x->counter)
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

/* The piece rendered so far to the sink, once it is big enough (all: whatever is left). */
static void flush(struct expo *x, bool all)
{
    if (!x->sink || !x->out->len || (!all && x->out->len < EXPO_CHUNK))
        return;
    x->sink->write(x->sink->arg, x->out->buf, x->out->len);
    bt_buf_reset(x->out);
}

static void add_va(struct expo *x, int fam, int route, double v, va_list ap)
{
    if (fam != x->fam || !isfinite(v))
        return;
    struct sample s = {.fam = fam, .route = route, .v = v};
    for (int k = 0; k < MAX_EXTRA; k++) {
        const char *key = va_arg(ap, const char *);
        if (!key)
            break;
        s.key[k] = key;
        s.val[k] = va_arg(ap, const char *);
    }
    render_sample(x, &s, x->out);
}

/* Renders a sample of family f unless v is unknown (NaN or infinite: absent, never
 * NaN) or f is not the family being rendered. Extra labels as key, value pairs,
 * NULL-terminated. */
static void add(struct expo *x, enum fam f, int route, double v, ...)
{
    va_list ap;
    va_start(ap, v);
    add_va(x, x->nfig + (int)f, route, v, ap);
    va_end(ap);
}

/* A figure family's sample (k: its place among the figure families). */
static void add_fig(struct expo *x, int k, int route, double v, ...)
{
    va_list ap;
    va_start(ap, v);
    add_va(x, k, route, v, ap);
    va_end(ap);
}

void bt_expo_quota_group(const struct bt_config *cfg, int i, char *out, size_t n)
{
    bt_quota_group_key(&cfg->routes[i], out, n); /* core's one rule for who shares a quota */
    if (out[0] == '|') /* no account or profile: the caller's own */
        memmove(out, out + 1, strlen(out));
}

/* The raw inputs of route i's evaluation, where the evaluation read them. */
static void route_signals(struct expo *x, int i)
{
    const struct bt_report *r = x->r;
    for (int s = 0; s < BT_SIG_COUNT; s++) {
        const char *name = bt_signal_info[s].name;
        double v = bt_eval_signal(r->store, &r->evals[i], (enum bt_signal)s);
        add(x, F_SIGNAL, i, v, "signal", name, NULL);
    }
}

/* eval -> series: every figure a route exports, in one place. */
/* Route i's spend (core/cost.h): absent when unknown, never 0 for want of a price. */
static void spend_series(struct expo *x, int i)
{
    const struct bt_spend *sp = bt_eval_spend(&x->r->evals[i]);
    const char *tier = bt_tier_name((enum bt_tier)x->r->cfg->routes[i].tier);
    add(x, F_SPEND_HOUR, i, sp->usd_per_hour, "tier", tier, NULL);
    add(x, F_SPEND_TODAY, i, sp->usd_today, "tier", tier, "quality", bt_quality_name(sp->today_q),
        NULL);
}

/* Figure family k of route i (the figure table's series). */
static void figure_series(struct expo *x, int i, int k)
{
    const struct bt_eval *e = &x->r->evals[i];
    const struct bt_figure *f = &bt_figures[x->fig[k]];
    const char *src = f->prom_source && f->source ? f->source(e) : NULL;
    /* one side per number: the side each figure is of (issue 34) */
    enum bt_side sd = bt_figure_side(f, e);
    const char *side = sd < BT_SIDE_COUNT ? bt_side_name(sd) : "";
    double v = bt_figure_value(f, e) / f->prom_scale;
    if (f->prom_source)
        add_fig(x, k, i, v, f->prom_source, src ? src : "", "side", side, NULL);
    else
        add_fig(x, k, i, v, "side", side, NULL);
}

static void quota_series(struct expo *x, int i)
{
    const struct bt_route *rt = &x->r->cfg->routes[i];
    static const enum bt_quota_kind tpm_kinds[] = {BT_Q_TPM, BT_Q_INPUT_TPM, BT_Q_OUTPUT_TPM};
    for (size_t k = 0; k < BT_ARRAY_LEN(tpm_kinds); k++) {
        const struct bt_quota *q = &rt->quota[tpm_kinds[k]];
        const char *mb = bt_quota_match_name(rt->quota_match[tpm_kinds[k]]);
        add(x, F_QUOTA, i, q->value, "kind", bt_quota_kind_name(tpm_kinds[k]), "source",
            bt_quota_source_name(q->source), "code", q->code, "name", q->name, "matched_by",
            mb ? mb : "", NULL);
    }
    const struct bt_quota *tpd = &rt->quota[BT_Q_TPD], *rpm = &rt->quota[BT_Q_RPM];
    add(x, F_QUOTA_TPD, i, tpd->value, "source", bt_quota_source_name(tpd->source), "code",
        tpd->code, "name", tpd->name, NULL);
    add(x, F_QUOTA_RPM, i, rpm->value, "source", bt_quota_source_name(rpm->source), "code",
        rpm->code, "name", rpm->name, NULL);
}

static void side_series(struct expo *x, int i)
{
    const struct bt_eval *e = &x->r->evals[i];
    for (int k = 0; k < BT_SIDE_COUNT; k++) {
        const struct bt_side_fig *f = bt_eval_side(e, k);
        if (f->applies)
            add(x, F_SIDE_RATIO, i, f->pct / 100, "side", bt_side_name((enum bt_side)k),
                "binding", (int)bt_eval_binding(e) == k ? "true" : "false", "quality",
                bt_quality_name(f->headroom_q), NULL);
    }
}

static void warning_series(struct expo *x, int i)
{
    const struct bt_eval *e = &x->r->evals[i];
    for (int w = 0; w < bt_eval_nwarn(e); w++) {
        const struct bt_warning *wa = bt_eval_warning(e, w);
        add(x, F_WARNING, i, 1, "code", bt_wcode_name(wa->code), "severity",
            wa->severity == BT_ST_OK ? "info" : bt_status_name(wa->severity), NULL);
    }
}

static void age_series(struct expo *x, int i)
{
    const struct bt_eval *e = &x->r->evals[i];
    if (bt_eval_cw_minute(e)) {
        add(x, F_AGE, i, (double)(bt_eval_now(e) - bt_eval_cw_minute(e)), "source", "cloudwatch",
            NULL);
        add(x, F_DATA_TS, i, (double)bt_eval_cw_minute(e), "source", "cloudwatch", NULL);
    }
    if (bt_eval_adm_at(e)) {
        add(x, F_AGE, i, (double)(bt_eval_now(e) - bt_eval_adm_at(e)), "source", "admission", NULL);
        add(x, F_DATA_TS, i, (double)bt_eval_adm_at(e), "source", "admission", NULL);
    }
}

static void source_series(struct expo *x, int i)
{
    for (int s = 0; s < BT_SRC_COUNT; s++) {
        const struct bt_source_status *st = bt_store_status_c(x->r->store, i, (enum bt_source)s);
        const char *name = bt_source_name((enum bt_source)s);
        if (st->last_ok)
            add(x, F_LAST_OK, i, (double)st->last_ok, "source", name, NULL);
        if (st->last_error && st->last_error >= st->last_ok)
            add(x, F_LAST_ERR, i, (double)st->last_error, "source", name, NULL);
    }
}

/* Route i's samples of the family being rendered. */
static void route_family(struct expo *x, int i)
{
    const struct bt_eval *e = &x->r->evals[i];
    const struct bt_route *rt = &x->r->cfg->routes[i];
    if (x->fam < x->nfig) {
        figure_series(x, i, x->fam);
        return;
    }
    switch ((enum fam)(x->fam - x->nfig)) {
    case F_QUOTA:
    case F_QUOTA_TPD:
    case F_QUOTA_RPM:
        quota_series(x, i);
        break;
    case F_SIDE_RATIO:
        side_series(x, i);
        break;
    case F_STATUS:
        add(x, F_STATUS, i, bt_status_exit(bt_eval_status(e)), NULL);
        break;
    case F_WARNING:
        warning_series(x, i);
        break;
    case F_AGE:
    case F_DATA_TS:
        age_series(x, i);
        break;
    case F_LAST_OK:
    case F_LAST_ERR:
        source_series(x, i);
        break;
    case F_MAX_TOKENS:
        add(x, F_MAX_TOKENS, i, bt_fig(e, BT_FIG_MAX_TOKENS), NULL);
        break;
    case F_BURNDOWN:
        if (!rt->burndown_source || strcmp(rt->burndown_source, "none") != 0) /* mantle: absent */
            add(x, F_BURNDOWN, i, rt->burndown, "source",
                rt->burndown_source ? rt->burndown_source : "default", NULL);
        break;
    case F_SPEND_HOUR:
    case F_SPEND_TODAY:
        spend_series(x, i);
        break;
    case F_SIGNAL:
        route_signals(x, i);
        break;
    default: /* the poller's families */
        break;
    }
}

static void poller_series(struct expo *x)
{
    const struct bt_report *r = x->r;
    const struct bt_api_cost *c = r->api;
    if (c) {
        add(x, F_METRICS, -1, (double)c->metrics_total, NULL);
        for (int a = 0; a < c->napi; a++)
            for (int o = 0; o < BT_API_NOUTCOMES; o++)
                add(x, F_API, -1, (double)c->api[a].n[o], "api", c->api[a].api, "outcome",
                    bt_api_outcome_name((enum bt_api_outcome)o), NULL);
        double pm, pd, usd;
        bt_api_cost_rates(c, r->now, &pm, &pd, &usd);
        add(x, F_METRICS_MIN, -1, pm, NULL);
        add(x, F_METRICS_DAY, -1, pd, NULL);
        add(x, F_COST_DAY, -1, usd, NULL);
    }
    add(x, F_OVERALL, -1, bt_status_exit(r->status), NULL);
    add(x, F_EVAL_TS, -1, (double)r->now, NULL);
    add(x, F_BUILD, -1, 1, "version", BEDTOP_VERSION, NULL);
}

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

/* One family after another, each after its HELP and TYPE: every shown route's
 * samples of it in route order, then the poller's. Nothing is kept per sample; a
 * family's samples are made only in its own pass (route_family), so each is made
 * once. */
static void render(const struct bt_report *r, enum bt_expo_format f, struct bt_buf *out,
                   const struct bt_expo_sink *sink)
{
    struct expo x = {.r = r, .out = out, .sink = sink};
    x.nfig = bt_figures_of(BT_FW_PROM, x.fig);
    blocks_build(r, &x.bl);
    int nfam = x.nfig + F_COUNT;
    for (x.fam = 0; x.fam < nfam; x.fam++) {
        const char *type = fam_type(&x, x.fam), *name = fam_name(&x, x.fam);
        x.counter = !strcmp(type, "counter");
        const char *suffix = x.counter && f == BT_EXPO_TEXT ? "_total" : "";
        bt_buf_printf(out, "# HELP %s%s %s\n# TYPE %s%s %s\n", name, suffix,
                      fam_help(&x, x.fam), name, suffix, type);
        for (int i = 0; i < r->n; i++) {
            if (!bt_report_shows(r, i)) /* check --route */
                continue;
            route_family(&x, i);
            flush(&x, false);
        }
        poller_series(&x);
    }
    free(x.bl.at);
    bt_buf_free(&x.bl.b);
    bt_expo_shares(r, out);
    bt_expo_spend(r, out);
    if (f == BT_EXPO_OPENMETRICS)
        bt_buf_puts(out, "# EOF\n");
    flush(&x, true);
}

void bt_expo_render(const struct bt_report *r, enum bt_expo_format f, struct bt_buf *out)
{
    render(r, f, out, NULL);
}

void bt_expo_render_to(const struct bt_report *r, enum bt_expo_format f,
                       const struct bt_expo_sink *sink)
{
    struct bt_buf piece = {0};
    bt_buf_reserve(&piece, EXPO_CHUNK + 4096);
    render(r, f, &piece, sink);
    bt_buf_free(&piece);
}

int64_t bt_expo_changes_at(const struct bt_report *r)
{
    int64_t at = r->n > 0 ? bt_eval_changes_at(r->cfg, r->store, r->evals, r->now) : INT64_MAX;
    /* route_signals: the day's sums run through the last whole minute before now, so a
     * minute the store holds after that, or the next UTC day, moves them */
    int64_t through = bt_minute_floor(r->now) - 60; /* bt_eval_day_through's */
    int64_t next_day = through - through % 86400 + 86400 + 60;
    for (int i = 0; i < r->n; i++) {
        const struct bt_eval *e = &r->evals[i];
        if (!bt_report_shows(r, i) || !bt_eval_cw_minute(e) || bt_eval_mantle(e))
            continue;
        int64_t upto = bt_eval_day_through(e, r->now);
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
