#include "render/report.h"
#include "render/shares.h"

#include "render/exposition.h"
#include "render/spend.h"
#include "core/sanitize.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/figures.h"
#include "core/format.h"
#include "core/json.h"
#include "core/shares.h"

bool bt_format_parse(const char *s, enum bt_format *out)
{
    if (!strcmp(s, "text"))
        *out = BT_FMT_TEXT;
    else if (!strcmp(s, "json"))
        *out = BT_FMT_JSON;
    else if (!strcmp(s, "prometheus") || !strcmp(s, "prom"))
        *out = BT_FMT_PROMETHEUS;
    else
        return false;
    return true;
}

void bt_report_build(struct bt_report *r, const struct bt_config *cfg,
                     const struct bt_store *st, int64_t now)
{
    memset(r, 0, sizeof *r);
    r->cfg = cfg;
    r->store = st;
    r->now = now;
    r->n = cfg->nroutes;
    r->evals = bt_xcalloc((size_t)(r->n ? r->n : 1), sizeof *r->evals);
    r->status = BT_ST_OK;
    r->mode = "live";
    r->metrics_per_poll = r->metrics_per_day = NAN;
    bt_eval_all(cfg, st, now, r->evals); /* routes on one quota are evaluated together */
    bt_report_select(r, NULL, BT_ST_WARN);
}

/* Exit 3 means "bedtop could not run"; a route whose quota or data is unknown
 * counts as --unknown-as (warn by default), so it never masks another route's
 * warn or crit. */
void bt_report_select(struct bt_report *r, const bool *keep, enum bt_status unknown_as)
{
    r->keep = keep;
    r->unknown_as = unknown_as;
    r->status = BT_ST_OK;
    for (int i = 0; i < r->n; i++) {
        if (!bt_report_shows(r, i))
            continue;
        enum bt_status s = bt_eval_status(&r->evals[i]);
        r->status = bt_status_worse(r->status, s == BT_ST_UNKNOWN ? unknown_as : s);
    }
}

bool bt_status_parse(const char *s, enum bt_status *out)
{
    static const enum bt_status all[] = {BT_ST_WARN, BT_ST_CRIT, BT_ST_UNKNOWN};
    for (size_t i = 0; i < BT_ARRAY_LEN(all); i++)
        if (!strcmp(s, bt_status_name(all[i]))) {
            *out = all[i];
            return true;
        }
    return false;
}

void bt_report_decide(struct bt_report *r)
{
    size_t n = (size_t)(r->n ? r->n : 1);
    r->forecast = bt_xcalloc(n, sizeof *r->forecast);
    r->ceiling = bt_xcalloc(n, sizeof *r->ceiling);
    if (r->n <= 0)
        return;
    bt_plan_forecast_all(r->cfg, r->store, r->evals, r->forecast);
    bt_ceiling_all(r->cfg, r->store, r->evals, r->ceiling);
}

void bt_report_free(struct bt_report *r)
{
    free(r->evals);
    free(r->forecast);
    free(r->ceiling);
    r->evals = NULL;
    r->forecast = NULL;
    r->ceiling = NULL;
}

/* Numbers: whole where whole, one decimal for percentages; null when unknown. */
static void add_num(struct bt_jw *o, const char *k, double v)
{
    if (isnan(v) || isinf(v))
        bt_jw_null(o, k);
    else
        bt_jw_num(o, k, round(v));
}

static void add_pct(struct bt_jw *o, const char *k, double v)
{
    bt_jw_round(o, k, v, 1);
}

/* Fractions that matter (0.25 calls in flight, burndown 4.98): two decimals. */
static void add_dec(struct bt_jw *o, const char *k, double v)
{
    bt_jw_round(o, k, v, 2);
}

static void add_str(struct bt_jw *o, const char *k, const char *v)
{
    bt_jw_str_or_null(o, k, v);
}

/* A figure of the table in JSON: its key rounded to its decimals (null unknown),
 * then its source, its quality, "is an upper bound" and an older name, where set. */
static void add_figure(struct bt_jw *o, const struct bt_figure *f, const struct bt_eval *e)
{
    double v = bt_figure_value(f, e);
    if (isnan(v) || isinf(v))
        bt_jw_null(o, f->json);
    else
        bt_jw_num(o, f->json, f->decimals ? bt_round_to(v, f->decimals) : round(v));
    if (f->json_source)
        add_str(o, f->json_source, f->source ? f->source(e) : NULL);
    if (f->json_quality)
        bt_jw_str(o, f->json_quality, bt_quality_name(f->quality(e)));
    if (f->json_upper)
        bt_jw_bool(o, f->json_upper, f->quality(e) == BT_QL_UPPER);
    if (f->json_alias)
        add_num(o, f->json_alias, v);
}

/* The figures of one JSON place, in the table's order. */
static void add_figures(struct bt_jw *o, enum bt_fig_writer w, const struct bt_eval *e)
{
    /* each writer's list is the (constant) table's: ordered once, as csv.c's columns
     * (a route object asks for seven; export writes one a route and minute) */
    static enum bt_fig_id ids[BT_FW_COUNT][BT_FIG_COUNT];
    static int n[BT_FW_COUNT] = {0};
    if (!n[w])
        n[w] = 1 + bt_figures_of(w, ids[w]);
    for (int k = 0; k < n[w] - 1; k++)
        add_figure(o, &bt_figures[ids[w][k]], e);
}

/* One side of a route: its quota, use and headroom, each with how sure it is (the
 * side figure table, core/figures.h). */
static void add_side(struct bt_jw *o, const char *key, const struct bt_side_fig *f, bool tpm_names,
                     const struct bt_eval *offered)
{
    bt_jw_obj(o, key);
    for (int k = 0; k < bt_side_figures_n; k++) {
        const struct bt_side_figure *sf = &bt_side_figures[k];
        const char *name = tpm_names && sf->json_tpm ? sf->json_tpm : sf->json;
        if (sf->text)
            add_str(o, name, sf->text(f));
        else if (sf->decimals)
            bt_jw_round(o, name, sf->value(f), sf->decimals);
        else
            add_num(o, name, sf->value(f));
    }
    if (offered) /* the RPM side: accepted + throttled beside its use */
        add_num(o, "offered", bt_eval_offered(offered));
    bt_jw_end(o);
}

/* The minute the binding side runs out at the trend of the last 15 minutes, with
 * what that assumed; minutes null when there is none (flat, falling, too few). */
static void forecast_json(struct bt_jw *j, const struct bt_forecast *f)
{
    bt_jw_obj(j, "forecast");
    add_str(j, "side", bt_side_binding_name(f->side));
    bool runs_out = !isnan(f->minutes);
    add_dec(j, "minutes_to_quota", f->minutes);
    add_str(j, "minutes_quality", runs_out ? bt_quality_name(f->minutes_q) : NULL);
    /* on the data-minute clock: the minute the fitted line reaches the quota */
    bt_jw_time(j, "runs_out_minute", runs_out && f->minute && f->minutes < 1e6
                                       ? bt_minute_floor(f->minute + (int64_t)ceil(f->minutes * 60))
                                       : 0);
    add_dec(j, "slope_per_minute", f->slope);
    bt_jw_num(j, "points", f->points);
    add_str(j, "none", runs_out ? NULL : f->none);
    char a[300];
    snprintf(a, sizeof a, "least squares on the quota group's %s use, fit over %d minutes (of the "
             "last %d, those a poll covered), extended at that slope: a trend, not a promise",
             bt_side_binding_name(f->side), f->points, BT_FORECAST_MINUTES);
    bt_jw_str(j, "assumption", a);
    bt_jw_end(j);
}

/* The most the group was charged in a throttled minute of the last hour: a lower
 * bound on the limit that bound, beside the quota. */
static void ceiling_json(struct bt_jw *j, const struct bt_ceiling *c)
{
    bt_jw_obj(j, "observed_ceiling");
    bt_jw_num(j, "window_minutes", BT_CEILING_WINDOW);
    bt_jw_num(j, "throttled_minutes", c->throttled_minutes);
    bt_jw_num(j, "covered_minutes", c->covered_minutes);
    add_num(j, "tokens_per_minute", c->tokens);
    add_str(j, "quality", isnan(c->tokens) ? "unknown" : "lower-bound");
    add_num(j, "requests_per_minute", c->requests);
    bt_jw_time(j, "minute", isnan(c->tokens) ? 0 : c->tokens_minute);
    add_num(j, "quota", c->quota);
    add_pct(j, "pct_of_quota", c->pct_of_quota);
    add_str(j, "points_to", c->points_to);
    add_str(j, "why", c->points_to ? c->why : NULL);
    bt_jw_end(j);
}

/* What the catalogue says about the route's model (DESIGN.md "Coverage and the
 * catalogue"): whether its burndown is backed, the table row, the steady
 * measurement; the lifecycle. */
static void add_catalogue(struct bt_jw *o, const struct bt_route *rt, const struct bt_eval *e)
{
    if (bt_eval_mantle(e)) {
        bt_jw_null(o, "burndown_verified");
        bt_jw_null(o, "burndown_row");
        bt_jw_null(o, "burndown_steady");
    } else {
        bt_jw_bool(o, "burndown_verified", rt->burndown_verified);
        add_str(o, "burndown_row", rt->burndown_row[0] ? rt->burndown_row : NULL);
        bt_jw_obj(o, "burndown_steady");
        add_dec(o, "value", rt->burndown_steady);
        bt_jw_num(o, "minutes", rt->burndown_steady_minutes);
        bt_jw_end(o);
    }
    /* ListFoundationModels' modelLifecycle; ListInferenceProfiles' word on the prefix */
    bt_jw_obj(o, "lifecycle");
    add_str(o, "status", rt->lifecycle[0] ? rt->lifecycle : NULL);
    add_str(o, "text", rt->lifecycle_text[0] ? rt->lifecycle_text : NULL);
    add_str(o, "profile", rt->profile_check[0] ? rt->profile_check : NULL);
    add_str(o, "profile_text", rt->profile_text[0] ? rt->profile_text : NULL);
    bt_jw_end(o);
}

void bt_report_route_write(const struct bt_report *r, int i, struct bt_jw *o)
{
    const struct bt_eval *e = &r->evals[i];
    const struct bt_route *rt = &r->cfg->routes[i];
    bt_jw_str(o, "name", rt->name);
    bt_jw_str(o, "model_id", rt->model);
    if (rt->base_model[0])
        bt_jw_str(o, "base_model", rt->base_model);
    else
        bt_jw_null(o, "base_model");
    if (rt->project[0])
        bt_jw_str(o, "project", rt->project);
    if (rt->account[0])
        bt_jw_str(o, "account", rt->account);
    bt_jw_str(o, "region", rt->region);
    bt_jw_str(o, "endpoint", bt_endpoint_name(rt->endpoint));
    bt_jw_str(o, "inference", bt_inference_name(rt->inference));
    bt_jw_str(o, "priority", rt->priority == BT_PRIO_OFFLINE ? "offline" : "online");

    /* the quota the route draws from: its group's (docs/headroom.md) */
    bt_jw_obj(o, "quota");
    struct bt_jw *q = o;
    for (int k = 0; k < BT_QUOTA_FIGURES; k++) { /* each side's, under its kind's name */
        const struct bt_quota_figure *qf = &bt_quota_figures[k];
        if (!qf->shown || qf->shown(e))
            add_num(q, bt_quota_kind_name(qf->kind), bt_eval_side(e, qf->side)->quota);
    }
    bt_jw_str(q, "source", bt_quota_source_name(bt_eval_quota_source(e)));
    /* how the quota was tied to the route: usage-metric, code, name or config */
    add_str(q, "matched_by",
            bt_quota_match_name(rt->quota_match[bt_eval_mantle(e) ? BT_Q_INPUT_TPM : BT_Q_TPM]));
    add_str(q, "code", bt_eval_quota_code(e));
    bt_jw_arr(q, "shared_with");
    for (int m = bt_eval_group_first(e); m >= 0; m = bt_group_next(r->evals, m)) /* every member */
        if (m != bt_eval_index(e))
            bt_jw_str(q, NULL, r->cfg->routes[m].name);
    bt_jw_end(q);
    const struct bt_quota *tq = &rt->quota[bt_eval_mantle(e) ? BT_Q_INPUT_TPM : BT_Q_TPM];
    if (tq->name[0])
        bt_jw_str(q, isnan(tq->value) ? "unknown_reason" : "name", tq->name);
    bt_jw_end(q);

    /* the token side's figures (the figure table; upper_bound and reserved: the
     * version 2 and version 1 names, kept for scripts) */
    bt_jw_obj(o, "tpm");
    add_figures(o, BT_FW_JSON_TPM, e);
    bt_jw_end(o);

    /* requests per minute: the RPM side, where Service Quotas lists one */
    /* used: accepted; offered = accepted + throttled, beside it, never the side's use */
    const struct bt_side_fig *rpm = bt_eval_side(e, BT_SIDE_RPM);
    if (rpm->applies) {
        add_side(o, "rpm", rpm, false, e);
    } else {
        bt_jw_null(o, "rpm");
    }
    add_num(o, "requests_per_min", bt_fig(e, BT_FIG_REQUESTS));
    add_num(o, "requests_offered_per_min", bt_eval_offered(e));
    bt_jw_obj(o, "sides");
    for (int k = 0; k < BT_SIDE_COUNT; k++) {
        const struct bt_side_fig *f = bt_eval_side(e, k);
        if (f->applies)
            add_side(o, bt_side_name((enum bt_side)k), f, false, k == BT_SIDE_RPM ? e : NULL);
    }
    bt_jw_end(o);
    bt_jw_str(o, "binding_side", bt_side_binding_name(bt_eval_binding(e)));
    /* one side per number: headroom_pct and fits_more are the binding side's; the tpm
     * object, quota.tpm and headroom_tpm the token side's (tpm, or mantle's binding
     * input or output side), named here, from the figure table */
    bt_jw_str(o, "token_side", bt_side_binding_name(
                                                 bt_figure_side(&bt_figures[BT_FIG_HEADROOM_TPM], e)));
    bt_jw_time(o, "evaluated_minute", bt_eval_cw_minute(e));
    bt_jw_time(o, "admission_at", bt_eval_adm_at(e));
    bt_jw_str(o, "frame_state", bt_frame_state_name(bt_eval_state(e)));
    if (!isnan(bt_fig(e, BT_FIG_TIER_SHARE))) { /* reserved_share .. reserved_output_tokens */
        bt_jw_obj(o, "tiers");
        add_figures(o, BT_FW_JSON_TIERS, e);
        bt_jw_end(o);
    }

    /* reservation_per_call .. fits_more: headroom_tpm the token side's, headroom_pct
     * and fits_more the binding side's (the figure table) */
    add_figures(o, BT_FW_JSON_HEADROOM, e);
    if (bt_eval_mantle(e)) {
        bt_jw_obj(o, "mantle");
        add_side(o, "input", bt_eval_side(e, BT_SIDE_INPUT), true, NULL);
        add_side(o, "output", bt_eval_side(e, BT_SIDE_OUTPUT), true, NULL);
        bt_jw_str(o, "binding", bt_side_name(bt_eval_token_side(e)));
        bt_jw_end(o);
    }
    add_figures(o, BT_FW_JSON_BURNDOWN, e); /* max_tokens, burndown[_source], burndown_measured */
    add_catalogue(o, rt, e);
    add_figures(o, BT_FW_JSON_CALLS, e); /* invocations_per_min, throttles_per_min */
    bt_jw_obj(o, "latency_ms");
    add_figures(o, BT_FW_JSON_LATENCY, e);
    bt_jw_end(o);
    add_figures(o, BT_FW_JSON_TODAY, e); /* concurrency_limit, tokens_today[_quality|_group] */
    bt_jw_time(o, "data_minute", bt_eval_data_minute(e));
    bt_jw_bool(o, "idle", bt_eval_state(e) == BT_FR_IDLE);
    bt_jw_bool(o, "stale", bt_eval_stale(e));
    bt_jw_str(o, "status", bt_status_name(bt_eval_status(e)));
    bt_jw_arr(o, "warnings");
    for (int w = 0; w < bt_eval_nwarn(e); w++) {
        const struct bt_warning *wa = bt_eval_warning(e, w);
        bt_jw_obj(o, NULL);
        bt_jw_str(o, "code", bt_wcode_name(wa->code));
        bt_jw_str(o, "severity", wa->severity == BT_ST_OK ? "info" : bt_status_name(wa->severity));
        bt_jw_str(o, "message", wa->message);
        bt_jw_str(o, "action", wa->action ? wa->action : bt_wcode_action(wa->code));
        bt_jw_end(o);
    }
    bt_jw_end(o);
    bt_spend_route_json(r, i, o);
    bt_shares_json(o, r, i);
    if (r->forecast)
        forecast_json(o, &r->forecast[i]);
    if (r->ceiling)
        ceiling_json(o, &r->ceiling[i]);
}

cJSON *bt_report_route_json(const struct bt_report *r, int i)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    struct bt_jw w;
    bt_jw_tree(&w, o);
    bt_report_route_write(r, i, &w);
    return o;
}

/* The members before "routes" and after it: the whole report is these around the
 * route objects, whether built as one tree or streamed. */
static void head_json(const struct bt_report *r, cJSON *o)
{
    bt_json_add_time(o, "generated_at", r->now);
    cJSON_AddStringToObject(o, "status", bt_status_name(r->status));
    cJSON_AddStringToObject(o, "mode", r->mode);
    if (r->recorded_mode) /* a demo recording replayed is still simulated */
        cJSON_AddStringToObject(o, "recorded_mode", r->recorded_mode);
}

static void cost_json(const struct bt_report *r, cJSON *o)
{
    if (!isnan(r->metrics_per_poll)) {
        struct bt_jw c;
        bt_jw_tree(&c, o);
        bt_jw_obj(&c, "cost");
        add_num(&c, "metrics_per_poll", r->metrics_per_poll);
        add_num(&c, "metrics_per_day", r->metrics_per_day);
        bt_jw_end(&c);
    }
}

static void tail_json(const struct bt_report *r, cJSON *o)
{
    bt_spend_json(r, o);
    cost_json(r, o);
}

cJSON *bt_report_json(const struct bt_report *r)
{
    cJSON *o = cJSON_CreateObject();
    head_json(r, o);
    cJSON *routes = cJSON_AddArrayToObject(o, "routes");
    struct bt_report with = *r;
    struct bt_share_memo memo = {0};
    if (!with.share_memo)
        with.share_memo = &memo; /* each group's shares once for its members */
    for (int i = 0; i < r->n; i++)
        if (bt_report_shows(r, i))
            cJSON_AddItemToArray(routes, bt_report_route_json(&with, i));
    bt_share_memo_free(&memo);
    tail_json(r, o);
    return o;
}

/* What is printed so far (whole JSON tokens), sanitised into out and handed on */
struct piece_out {
    struct bt_buf *out;
    const struct bt_report_sink *sink;
};

static void piece_done(void *ctx, struct bt_buf *t)
{
    struct piece_out *po = ctx;
    if (t->len < BT_REPORT_SINK_AT)
        return;
    bt_san_json_text(po->out, bt_buf_str(t));
    bt_buf_reset(t);
    bt_report_sink_flush(po->sink, po->out, false);
}

/* The members of o at `depth` of the report (1: the report's own, 2: spend's), each
 * followed by a comma when more follow (`more`: the object goes on after o's last
 * member); with a sink, a big member goes out as it is printed. */
static void put_members(struct bt_buf *t, const cJSON *o, int depth, bool more,
                        struct bt_buf *out, const struct bt_report_sink *sink)
{
    struct piece_out po = {out, sink};
    struct bt_json_piece piece = {piece_done, &po};
    for (const cJSON *m = o->child; m; m = m->next) {
        bt_buf_json_member(t, m, depth, sink ? &piece : NULL);
        if (m->next || more)
            bt_buf_putc(t, ',');
        bt_buf_putc(t, '\n');
    }
}

/* The tail's "spend" member (bt_spend_json's), as cJSON_Print prints it at depth 1,
 * its quota groups built, printed and dropped one at a time (the arena reset), as
 * the routes are: the members before "groups", the groups, the members after. */
static void spend_stream(const struct bt_report *r, struct bt_json_arena *ar, struct bt_buf *t,
                         struct bt_buf *out, const struct bt_report_sink *sink)
{
    bt_json_arena_reset(ar);
    cJSON *head = cJSON_CreateObject();
    if (!head)
        bt_out_of_memory();
    bt_spend_json_head(r, head);
    bt_buf_puts(t, "\t\"spend\":\t{\n");
    put_members(t, head, 2, true, out, sink);
    bt_buf_puts(t, "\t\t\"groups\":\t[");
    bool first = true;
    for (int i = 0; i < r->n; i++) {
        bt_json_arena_reset(ar);
        cJSON *g = bt_spend_group_json(r, i);
        if (!g)
            continue;
        if (!first)
            bt_buf_puts(t, ", ");
        first = false;
        bt_buf_json_pretty(t, g, 3);
        bt_san_json_text(out, bt_buf_str(t));
        bt_buf_reset(t);
        bt_report_sink_flush(sink, out, false);
    }
    bt_json_arena_reset(ar);
    cJSON *rest = cJSON_CreateObject();
    if (!rest)
        bt_out_of_memory();
    bt_spend_json_rest(r, rest);
    bt_buf_putc(t, ']');
    bt_buf_puts(t, rest->child ? ",\n" : "\n");
    put_members(t, rest, 2, false, out, sink);
    bt_buf_puts(t, "\t}");
}

/* bt_report_json printed as cJSON_Print prints it, byte for byte, one route at a
 * time: each route's object is built, printed and dropped (its arena reset) before
 * the next, so neither the whole tree nor (with a sink) the whole text is ever held:
 * at 20,000 routes they were 24 kB and 4.6 kB a route, most of check's peak. */
static void render_json(const struct bt_report *r, struct bt_buf *out,
                        const struct bt_report_sink *sink)
{
    struct bt_json_arena *ar = bt_json_arena_begin();
    struct bt_buf t = {0};
    cJSON *head = cJSON_CreateObject();
    if (!head)
        bt_out_of_memory(); /* cJSON failed to allocate, as bt_json_print */
    head_json(r, head);
    bt_buf_puts(&t, "{\n");
    put_members(&t, head, 1, true, out, sink);
    bt_buf_puts(&t, "\t\"routes\":\t[");
    bool first = true;
    for (int i = 0; i < r->n; i++) {
        if (!bt_report_shows(r, i))
            continue;
        bt_json_arena_reset(ar); /* the head or the route before: printed already */
        cJSON *o = bt_report_route_json(r, i);
        if (!o)
            bt_out_of_memory();
        if (!first)
            bt_buf_puts(&t, ", ");
        first = false;
        bt_buf_json_pretty(&t, o, 2);
        bt_san_json_text(out, bt_buf_str(&t));
        bt_buf_reset(&t);
        bt_report_sink_flush(sink, out, false);
    }
    bt_buf_puts(&t, "],\n");
    spend_stream(r, ar, &t, out, sink);
    bt_json_arena_reset(ar);
    cJSON *tail = cJSON_CreateObject();
    if (!tail)
        bt_out_of_memory();
    cost_json(r, tail);
    bt_buf_puts(&t, tail->child ? ",\n" : "\n");
    put_members(&t, tail, 1, false, out, sink);
    bt_buf_puts(&t, "}\n");
    bt_json_arena_end();
    bt_san_json_text(out, bt_buf_str(&t));
    bt_buf_free(&t);
    bt_json_arena_free(ar);
}

void bt_report_write(const struct bt_report *r, enum bt_format f, bool color, struct bt_buf *out,
                     const struct bt_report_sink *sink)
{
    struct bt_report with = *r;
    struct bt_share_memo memo = {0};
    with.sink = sink;
    if (f == BT_FMT_JSON) {
        if (!with.share_memo)
            with.share_memo = &memo; /* each group's shares once for its members */
        render_json(&with, out, sink);
    } else if (f == BT_FMT_PROMETHEUS) {
        bt_expo_render(&with, BT_EXPO_TEXT, out);
    } else {
        bt_report_render_text(&with, color, out);
    }
    bt_share_memo_free(&memo);
    bt_report_sink_flush(sink, out, true);
}

void bt_report_render(const struct bt_report *r, enum bt_format f, bool color, struct bt_buf *out)
{
    bt_report_write(r, f, color, out, NULL);
}
