#include "render/plan.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/figures.h"
#include "core/format.h"
#include "core/json.h"
#include "core/sanitize.h"

void bt_plan_change_text(const struct bt_plan_change *c, char *out, size_t n)
{
    size_t len = 0;
    out[0] = '\0';
#define ADD(...) (len += (size_t)snprintf(out + len, len < n ? n - len : 0, __VA_ARGS__))
    if (!isnan(c->max_tokens))
        ADD("%smax_tokens %.0f", len ? ", " : "", c->max_tokens);
    if (!isnan(c->concurrency))
        ADD("%sconcurrency %.0f", len ? ", " : "", c->concurrency);
    if (!isnan(c->traffic))
        ADD("%straffic x%g", len ? ", " : "", c->traffic);
    if (c->retries_off)
        ADD("%sretries off", len ? ", " : "");
    if (c->tier != BT_TIER_KEEP)
        ADD("%stier %s", len ? ", " : "", c->tier == BT_TIER_FLEX ? "flex" : "priority");
    if (c->region[0])
        ADD("%sregion %s", len ? ", " : "", c->region);
#undef ADD
    if (!len)
        snprintf(out, n, "none");
}

/* ---- text ---- */

/* A figure with how sure it is: "41.0% at most", "12.3k at least", "-". */
static void with_q(char *out, size_t n, const char *num, enum bt_quality q)
{
    const char *w = q == BT_QL_UPPER ? " at most" : q == BT_QL_LOWER ? " at least" : "";
    if (!strcmp(num, "-") || q == BT_QL_UNKNOWN)
        snprintf(out, n, "unknown");
    else
        snprintf(out, n, "%s%s", num, w);
}

static void tok_q(char *out, size_t n, double v, enum bt_quality q)
{
    char a[BT_FMT_SHORT];
    with_q(out, n, bt_fmt_count(v, a, sizeof a), isnan(v) ? BT_QL_UNKNOWN : q);
}

static void pct_q(char *out, size_t n, double v, enum bt_quality q)
{
    char a[BT_FMT_SHORT], b[BT_FMT_SHORT + 2];
    snprintf(b, sizeof b, "%s%%", bt_fmt_pct(v, a, sizeof a));
    with_q(out, n, b, isnan(v) ? BT_QL_UNKNOWN : q);
}

/* A figure of the table as the plan prints it: a percentage and a figure with a
 * quality say how sure they are ("41.0% at most"), calls in flight keep their
 * decimals, "unknown" for an unknown one. */
static void plan_cell(const struct bt_figure *f, const struct bt_eval *e, char *out, size_t n)
{
    double v = bt_figure_value(f, e);
    if (f->fmt == BT_FF_PCT_Q) {
        pct_q(out, n, v, f->quality(e));
    } else if (f->fmt == BT_FF_TOKENS) {
        if (f->quality)
            tok_q(out, n, v, f->quality(e));
        else
            bt_fmt_tokens(v, out, n);
    } else if (f->decimals > 0) {
        if (isnan(v))
            snprintf(out, n, "unknown");
        else
            snprintf(out, n, "%.*f", f->decimals, v);
    } else {
        bt_fmt_count(v, out, n);
    }
}

static void row(struct bt_buf *b, bool two, const char *label, const char *now, const char *after)
{
    if (two)
        bt_buf_printf(b, "  %-24s %-22s %s\n", label, now, after);
    else
        bt_buf_printf(b, "  %-24s %s\n", label, now);
}

/* The prose's width for the text being rendered (bt_plan_view.width). */
static size_t wrap_width = 80;

/* Prose wrapped at 80 columns (or the view's width) under an indent; outside text is
 * sanitised. */
static void wrap(struct bt_buf *b, const char *first, const char *indent, const char *text)
{
    char clean[512];
    bt_san_term(clean, sizeof clean, text);
    size_t width = wrap_width, col = strlen(first);
    bool words = false; /* on the current line */
    bt_buf_puts(b, first);
    const char *p = clean;
    for (;;) {
        while (*p == ' ')
            p++;
        size_t wl = strcspn(p, " ");
        if (!wl)
            break;
        if (words && col + 1 + wl > width) {
            bt_buf_printf(b, "\n%s", indent);
            col = strlen(indent);
            words = false;
        }
        if (words) {
            bt_buf_putc(b, ' ');
            col++;
        }
        bt_buf_add(b, p, wl);
        col += wl;
        p += wl;
        words = true;
    }
    bt_buf_putc(b, '\n');
}

static void notes_text(struct bt_buf *b, const struct bt_plan_notes *n)
{
    for (int i = 0; i < n->n; i++)
        wrap(b, "  - ", "    ", n->text[i]);
}

static void sides_text(struct bt_buf *b, const struct bt_eval *e, const struct bt_eval *a)
{
    for (int k = 0; k < BT_SIDE_COUNT; k++) {
        const struct bt_side_fig *f = bt_eval_side(e, k), *g = a ? bt_eval_side(a, k) : NULL;
        if (!f->applies && !(g && g->applies))
            continue;
        char q[BT_FMT_SHORT], u1[40], u2[40], h1[40], h2[40], line[200];
        bt_fmt_tokens(f->applies ? f->quota : g->quota, q, sizeof q);
        tok_q(u1, sizeof u1, f->group_used, f->group_q);
        pct_q(h1, sizeof h1, f->pct, f->headroom_q);
        if (g) {
            tok_q(u2, sizeof u2, g->group_used, g->group_q);
            pct_q(h2, sizeof h2, g->pct, g->headroom_q);
            snprintf(line, sizeof line, "%s -> %s used, %s -> %s left", u1, u2, h1, h2);
        } else {
            snprintf(line, sizeof line, "%s used, %s left", u1, h1);
        }
        char label[64];
        snprintf(label, sizeof label, "  %-15s %6s %-4s ", bt_side_name((enum bt_side)k), q,
                 bt_side_unit((enum bt_side)k));
        wrap(b, label, "                                ", line);
    }
}

static void whatif_text(const struct bt_plan_view *v, struct bt_buf *b)
{
    const struct bt_whatif *w = v->w;
    const struct bt_eval *e = &w->before, *a = &w->after;
    bool two = bt_plan_change_any(v->change);
    char c1[40], c2[40];
    if (two)
        row(b, true, "", "now", "after the change");
    /* the figure table's plan rows, the binding side named before its figures */
    enum bt_fig_id ids[BT_FIG_COUNT];
    int nf = bt_figures_of(BT_FW_PLAN, ids);
    bool named = false;
    for (int k = 0; k < nf; k++) {
        const struct bt_figure *f = &bt_figures[ids[k]];
        if (f->side == BT_FS_BINDING && !named) {
            row(b, two, "binding side", bt_side_binding_name(bt_eval_binding(e)),
                bt_side_binding_name(bt_eval_binding(a)));
            named = true;
        }
        plan_cell(f, e, c1, sizeof c1);
        plan_cell(f, a, c2, sizeof c2);
        row(b, two, f->plan_label, c1, c2);
    }
    bt_buf_puts(b, "sides (the group's use against each quota):\n");
    sides_text(b, e, two ? a : NULL);
    if (w->peak_minute) {
        /* coverage (issue 31): how many of the window's minutes it had */
        bt_buf_printf(b, "the last hour (%d of %d min covered%s)%s:\n", w->minutes_seen, BT_PLAN_WINDOW,
                      w->minutes_seen < BT_PLAN_WINDOW ? "; the others unknown, left out"
                                                       : "",
                      two ? ", replayed with the change" : "");
        char hm[8], label[48];
        bt_fmt_hhmm(w->peak_minute, hm, sizeof hm);
        snprintf(label, sizeof label, "peak minute %s UTC", hm);
        pct_q(c1, sizeof c1, w->peak_pct_before, BT_QL_KNOWN);
        pct_q(c2, sizeof c2, w->peak_pct_after, w->peak_q_after);
        row(b, two, label, c1, c2);
        snprintf(c1, sizeof c1, "%d of %d min", w->over_before, w->minutes_seen);
        snprintf(c2, sizeof c2, "%d of %d min", w->over_after, w->minutes_seen);
        row(b, two, "past a quota, last hour", c1, c2);
        if (two)
            bt_buf_printf(b, "would still throttle at the peak minute: %s\n", w->peak_verdict);
    }
    else
        bt_buf_printf(b, "the last hour: not enough data (0 of %d min covered)\n", BT_PLAN_WINDOW);
    if (w->nmembers)
        bt_buf_puts(b, "the quota group's other routes, headroom:\n");
    for (int i = 0; i < w->nmembers; i++) {
        const struct bt_plan_member *m = &w->members[i];
        char label[64], name[40];
        bt_san_term(name, sizeof name, v->cfg->routes[m->route].name);
        snprintf(label, sizeof label, "%s", name);
        pct_q(c1, sizeof c1, m->pct_before, m->q_before);
        pct_q(c2, sizeof c2, m->pct_after, m->q_after);
        if (m->left_group)
            snprintf(c2 + strlen(c2), sizeof c2 - strlen(c2), " (apart)");
        row(b, two, label, c1, c2);
    }
}

static void forecast_text(const struct bt_forecast *f, struct bt_buf *b)
{
    char line[320], s[BT_FMT_SHORT];
    if (!isnan(f->minutes)) {
        bt_fmt_tokens(f->slope, s, sizeof s);
        char said[120];
        bt_plan_forecast_text(f, said, sizeof said);
        if (f->minutes < BT_FORECAST_SHOW && f->points < BT_FORECAST_MINUTES)
            snprintf(line, sizeof line, "%s (+%s a minute over %d covered min of the last %d; a "
                     "trend, not a promise)", said, s, f->points, BT_FORECAST_MINUTES);
        else if (f->minutes < BT_FORECAST_SHOW)
            snprintf(line, sizeof line, "%s (+%s a minute over the last %d min; a trend, not a "
                     "promise)", said, s, f->points);
        else
            snprintf(line, sizeof line, "%s rising +%s a minute: over an hour to its quota at this "
                     "trend", bt_side_binding_name(f->side), s);
    } else {
        snprintf(line, sizeof line, "none (%s)", f->none ? f->none : "unknown");
    }
    wrap(b, "forecast: ", "          ", line);
}

static void ceiling_text(const struct bt_ceiling *c, struct bt_buf *b)
{
    char line[400], t[BT_FMT_SHORT], q[BT_FMT_SHORT];
    if ((!c->throttled_minutes || isnan(c->tokens)) && !c->covered_minutes) {
        /* coverage (issue 31): no minute asked is no minute seen unthrottled */
        snprintf(line, sizeof line, "no minute of the last %d min covered by a poll: the ceiling "
                 "is unknown", BT_CEILING_WINDOW);
    } else if (!c->throttled_minutes || isnan(c->tokens)) {
        if (c->covered_minutes < BT_CEILING_WINDOW)
            snprintf(line, sizeof line, "no throttled minute in the %d covered min of the last %d "
                     "(the others unknown): no ceiling observed", c->covered_minutes, BT_CEILING_WINDOW);
        else
            snprintf(line, sizeof line, "no throttled minute in the last %d min: no ceiling observed",
                     BT_CEILING_WINDOW);
    } else {
        char hm[8];
        bt_fmt_hhmm(c->tokens_minute, hm, sizeof hm);
        bt_fmt_tokens(c->tokens, t, sizeof t);
        bt_fmt_tokens(c->quota, q, sizeof q);
        char of[48];
        if (c->covered_minutes < BT_CEILING_WINDOW) /* say how many minutes it had */
            snprintf(of, sizeof of, "%d covered min of the last %d", c->covered_minutes, BT_CEILING_WINDOW);
        else
            snprintf(of, sizeof of, "the last %d min", BT_CEILING_WINDOW);
        int len = snprintf(line, sizeof line, "throttled in %d of %s; the group was charged "
                           "%s TPM at %s UTC while throttled, a lower bound on the limit that bound "
                           "(quota %s",
                           c->throttled_minutes, of, t, hm, q);
        if (!isnan(c->pct_of_quota))
            len += snprintf(line + len, sizeof line - (size_t)len, ", %.1f%% of it", c->pct_of_quota);
        len += snprintf(line + len, sizeof line - (size_t)len, ")");
        if (c->points_to)
            snprintf(line + len, sizeof line - (size_t)len, "; far below it, it points to %s", c->why);
    }
    wrap(b, "ceiling:  ", "          ", line);
}

static void speed_text(const struct bt_speed *s, struct bt_buf *b)
{
    char line[300], t1[BT_FMT_SHORT], t2[BT_FMT_SHORT];
    if (isnan(s->otps)) {
        snprintf(line, sizeof line, "output tokens per second unknown (needs OutputTokenCount, "
                 "InvocationLatency and TimeToFirstToken)");
    } else {
        int len = snprintf(line, sizeof line, "%.0f output tokens/s over the last %d min", s->otps,
                           BT_SPEED_RECENT);
        if (!isnan(s->otps_hour))
            len += snprintf(line + len, sizeof line - (size_t)len, " (trailing hour %.0f)", s->otps_hour);
        if (!isnan(s->ttft))
            len += snprintf(line + len, sizeof line - (size_t)len, "; time to first token %s (hour %s)",
                            bt_fmt_latency(s->ttft, t1, sizeof t1), bt_fmt_latency(s->ttft_hour, t2, sizeof t2));
        if (s->slowdown)
            len += snprintf(line + len, sizeof line - (size_t)len, "; SLOWDOWN: calls hold their "
                            "reservations longer at the same traffic");
        if (s->queueing)
            snprintf(line + len, sizeof line - (size_t)len, "; TTFT rose with output flat: queueing");
    }
    wrap(b, "speed:    ", "          ", line);
}

static void limits_text(const struct bt_plan_view *v, struct bt_buf *b)
{
    const struct bt_limits *l = v->limits;
    char x[BT_FMT_SHORT], line[300];
    bt_buf_puts(b, "limits to set at the admission boundary:\n");
    if (!isnan(l->concurrency)) {
        int len = snprintf(line, sizeof line, "%.0f in flight (%s", l->concurrency,
                           !strcmp(l->concurrency_basis, "knee") ? "completions stopped growing past it"
                                                                  : "the largest level seen without throttles");
        if (!isnan(l->throttle_level))
            len += snprintf(line + len, sizeof line - (size_t)len, "; throttled from %.0f",
                            l->throttle_level);
        snprintf(line + len, sizeof line - (size_t)len, ")");
    } else if (!strcmp(l->concurrency_basis, "no-knee")) {
        snprintf(line, sizeof line, "none from evidence: completions still rose at the largest level "
                 "seen (%.0f in flight); keep the tested limit", l->op.xmax);
    } else {
        snprintf(line, sizeof line, "none from evidence (%s)",
                 !strcmp(l->concurrency_basis, "no-data") ? "no in-flight gauge"
                                                          : "throttled at every level seen");
    }
    wrap(b, "  concurrency cap      ", "                       ", line);
    char q[BT_FMT_SHORT], o[BT_FMT_SHORT], r[BT_FMT_SHORT], bud[40];
    tok_q(bud, sizeof bud, l->budget_tpm, l->budget_q);
    if (isnan(l->quota))
        snprintf(line, sizeof line, "unknown: the quota is unknown (set quota_code or quota_tpm)");
    else
        snprintf(line, sizeof line, "%s TPM (quota %s - others %s - reserve %s)", bud,
                 bt_fmt_tokens(l->quota, q, sizeof q), bt_fmt_tokens(l->others_used, o, sizeof o),
                 bt_fmt_tokens(l->reserve_tpm, r, sizeof r));
    wrap(b, "  token budget         ", "                       ", line);
    if (l->max_tokens_basis)
        snprintf(line, sizeof line, "%.0f (now %s); truncation risk %s", l->max_tokens,
                 bt_fmt_count(l->max_tokens_now, x, sizeof x), l->truncation);
    else
        snprintf(line, sizeof line, "no recommendation (no output per call seen)");
    wrap(b, "  max_tokens           ", "                       ", line);
    snprintf(line, sizeof line, "at most %s retries a minute (%.0f%% of admitted), %d attempts, "
             "backoff base %.1f s cap %.0f s, full jitter",
             bt_fmt_count(l->retry_budget_pm, x, sizeof x), 100 * l->retry_share, l->max_attempts,
             l->backoff_base_s, l->backoff_cap_s);
    wrap(b, "  retries              ", "                       ", line);
    bt_buf_puts(b, "evidence and assumptions:\n");
    notes_text(b, &l->notes);
    bt_buf_puts(b, "admission policy (JSON):\n");
    bt_plan_policy_json(v, true, b);
}

void bt_plan_render_text(const struct bt_plan_view *v, struct bt_buf *b)
{
    wrap_width = v->width >= 40 ? (size_t)v->width : 80;
    const struct bt_whatif *w = v->w;
    const struct bt_route *rt = &v->cfg->routes[w->route];
    char name[64], model[96], reg[32], hm[8] = "-", ch[160];
    bt_san_term(name, sizeof name, rt->name);
    bt_san_term(model, sizeof model, rt->model);
    bt_san_term(reg, sizeof reg, rt->region);
    if (bt_eval_cw_minute(&w->before))
        bt_fmt_hhmm(bt_eval_cw_minute(&w->before), hm, sizeof hm);
    /* the one clock: the data minute planned for, the clock it is seen at beside it */
    int sod = (int)(((v->now % 86400) + 86400) % 86400);
    bt_buf_printf(b, "bedtop plan %s (%s, %s) data %s UTC, %s %02d:%02d:%02d, %s\n", name, reg,
                  bt_endpoint_name(rt->endpoint), hm, strcmp(v->mode, "replay") ? "now" : "seen",
                  sod / 3600, sod / 60 % 60, sod % 60, v->mode);
    wrap(b, "model:    ", "          ", model);
    if (!v->limits || bt_plan_change_any(v->change)) {
        bt_plan_change_text(v->change, ch, sizeof ch);
        wrap(b, "what if:  ", "          ", ch);
        whatif_text(v, b);
    }
    forecast_text(v->forecast, b);
    ceiling_text(v->ceiling, b);
    speed_text(bt_eval_speed(&w->before), b);
    if (v->limits)
        limits_text(v, b);
    if (!v->limits || bt_plan_change_any(v->change)) {
        bt_buf_puts(b, "assumed:\n");
        notes_text(b, &w->notes);
    }
}

/* ---- JSON ---- */

static void jnum(cJSON *o, const char *k, double v, double scale)
{
    if (!isfinite(v))
        cJSON_AddNullToObject(o, k);
    else
        cJSON_AddNumberToObject(o, k, round(v * scale) / scale + 0.0);
}

static void jstr(cJSON *o, const char *k, const char *v)
{
    if (v)
        cJSON_AddStringToObject(o, k, v);
    else
        cJSON_AddNullToObject(o, k);
}

static cJSON *frame_json(const struct bt_eval *e)
{
    cJSON *o = cJSON_CreateObject();
    /* the figure table's plan rows under their JSON keys, as the route JSON rounds
     * them, the binding side named before its figures */
    enum bt_fig_id ids[BT_FIG_COUNT];
    int nf = bt_figures_of(BT_FW_PLAN, ids);
    bool named = false;
    for (int k = 0; k < nf; k++) {
        const struct bt_figure *f = &bt_figures[ids[k]];
        if (f->side == BT_FS_BINDING && !named) {
            jstr(o, "binding_side", bt_side_binding_name(bt_eval_binding(e)));
            named = true;
        }
        double scale = 1;
        for (int d = 0; d < f->decimals; d++)
            scale *= 10;
        jnum(o, f->json, bt_figure_value(f, e), scale);
        if (f->plan_source)
            jstr(o, f->json_source, f->source(e));
        if (f->plan_quality)
            jstr(o, f->json_quality, bt_quality_name(f->quality(e)));
    }
    cJSON *s = cJSON_AddObjectToObject(o, "sides");
    for (int k = 0; k < BT_SIDE_COUNT; k++) {
        const struct bt_side_fig *f = bt_eval_side(e, k);
        if (!f->applies)
            continue;
        cJSON *x = cJSON_AddObjectToObject(s, bt_side_name((enum bt_side)k));
        jnum(x, "quota", f->quota, 1);
        jnum(x, "group_used", f->group_used, 1);
        jstr(x, "group_used_quality", bt_quality_name(f->group_q));
        jnum(x, "headroom", f->headroom, 1);
        jnum(x, "headroom_pct", f->pct, 10);
        jstr(x, "headroom_quality", bt_quality_name(f->headroom_q));
        jnum(x, "fits_more", f->fits, 1);
    }
    return o;
}

static cJSON *notes_json(const struct bt_plan_notes *n)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < n->n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateString(n->text[i]));
    return a;
}

static cJSON *policy(const struct bt_plan_view *v)
{
    const struct bt_limits *l = v->limits;
    cJSON *o = cJSON_CreateObject();
    jstr(o, "route", v->cfg->routes[v->w->route].name);
    jnum(o, "concurrency_limit", l->concurrency, 1);
    jnum(o, "tokens_per_minute", l->budget_tpm, 1);
    jnum(o, "max_tokens", l->max_tokens, 1);
    cJSON *r = cJSON_AddObjectToObject(o, "retry");
    jnum(r, "budget_ratio", l->retry_share, 100);
    jnum(r, "max_per_minute", l->retry_budget_pm, 1);
    cJSON_AddNumberToObject(r, "max_attempts", l->max_attempts);
    jnum(r, "backoff_base_ms", 1000 * l->backoff_base_s, 1);
    jnum(r, "backoff_cap_ms", 1000 * l->backoff_cap_s, 1);
    cJSON_AddStringToObject(r, "jitter", "full");
    return o;
}

void bt_plan_policy_json(const struct bt_plan_view *v, bool pretty, struct bt_buf *out)
{
    cJSON *o = policy(v);
    char *s = bt_json_print(o, pretty);
    bt_san_json_text(out, s);
    bt_buf_putc(out, '\n');
    cJSON_free(s);
    cJSON_Delete(o);
}

void bt_plan_render_json(const struct bt_plan_view *v, struct bt_buf *out)
{
    const struct bt_whatif *w = v->w;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "plan_version", 1);
    bt_json_add_time(o, "generated_at", v->now);
    jstr(o, "mode", v->mode);
    jstr(o, "route", v->cfg->routes[w->route].name);
    bt_json_add_time(o, "evaluated_minute", bt_eval_cw_minute(&w->before));
    bt_json_add_time(o, "admission_at", bt_eval_adm_at(&w->before));
    const struct bt_plan_change *c = v->change;
    cJSON *ch = cJSON_AddObjectToObject(o, "change");
    jnum(ch, "max_tokens", c->max_tokens, 1);
    jnum(ch, "concurrency", c->concurrency, 1);
    jnum(ch, "traffic", c->traffic, 1000);
    cJSON_AddBoolToObject(ch, "retries_off", c->retries_off);
    jstr(ch, "tier", c->tier == BT_TIER_FLEX ? "flex" : c->tier == BT_TIER_PRIORITY ? "priority" : NULL);
    jstr(ch, "region", c->region[0] ? c->region : NULL);
    cJSON_AddItemToObject(o, "now", frame_json(&w->before));
    if (bt_plan_change_any(c))
        cJSON_AddItemToObject(o, "after", frame_json(&w->after));
    else
        cJSON_AddNullToObject(o, "after");
    cJSON *p = cJSON_AddObjectToObject(o, "peak");
    bt_json_add_time(p, "minute", w->peak_minute);
    cJSON_AddNumberToObject(p, "minutes_seen", w->minutes_seen);
    cJSON_AddNumberToObject(p, "window_minutes", BT_PLAN_WINDOW);
    jnum(p, "headroom_pct_now", w->peak_minute ? w->peak_pct_before : NAN, 10);
    jnum(p, "headroom_pct_after", w->peak_minute ? w->peak_pct_after : NAN, 10);
    jstr(p, "headroom_quality_after", bt_quality_name(w->peak_minute ? w->peak_q_after : BT_QL_UNKNOWN));
    jnum(p, "throttles", w->peak_minute ? w->peak_throttles : NAN, 1);
    cJSON_AddNumberToObject(p, "minutes_over_now", w->over_before);
    cJSON_AddNumberToObject(p, "minutes_over_after", w->over_after);
    jstr(p, "would_throttle", w->peak_verdict);
    cJSON *g = cJSON_AddArrayToObject(o, "group");
    for (int i = 0; i < w->nmembers; i++) {
        const struct bt_plan_member *m = &w->members[i];
        cJSON *x = cJSON_CreateObject();
        jstr(x, "route", v->cfg->routes[m->route].name);
        jnum(x, "headroom_pct_now", m->pct_before, 10);
        jnum(x, "headroom_pct_after", m->pct_after, 10);
        jstr(x, "headroom_quality_after", bt_quality_name(m->q_after));
        cJSON_AddBoolToObject(x, "left_group", m->left_group);
        cJSON_AddItemToArray(g, x);
    }
    const struct bt_forecast *f = v->forecast;
    cJSON *fo = cJSON_AddObjectToObject(o, "forecast");
    jstr(fo, "side", bt_side_binding_name(f->side));
    jnum(fo, "minutes_to_quota", f->minutes, 10);
    jstr(fo, "minutes_quality", bt_quality_name(f->minutes_q));
    jnum(fo, "slope_per_minute", f->slope, 1);
    cJSON_AddNumberToObject(fo, "points", f->points);
    jstr(fo, "none", f->none);
    const struct bt_ceiling *ce = v->ceiling;
    cJSON *co = cJSON_AddObjectToObject(o, "ceiling");
    cJSON_AddNumberToObject(co, "throttled_minutes", ce->throttled_minutes);
    cJSON_AddNumberToObject(co, "covered_minutes", ce->covered_minutes);
    jnum(co, "tokens_per_minute", ce->tokens, 1);
    jnum(co, "requests_per_minute", ce->requests, 1);
    bt_json_add_time(co, "minute", ce->tokens_minute);
    jnum(co, "pct_of_quota", ce->pct_of_quota, 10);
    jstr(co, "points_to", ce->points_to);
    const struct bt_speed *s = bt_eval_speed(&w->before);
    cJSON *so = cJSON_AddObjectToObject(o, "speed");
    jnum(so, "otps", s->otps, 10);
    jnum(so, "otps_hour", s->otps_hour, 10);
    jnum(so, "ttft_ms", s->ttft, 1);
    jnum(so, "ttft_hour_ms", s->ttft_hour, 1);
    cJSON_AddBoolToObject(so, "slowdown", s->slowdown);
    cJSON_AddBoolToObject(so, "queueing", s->queueing);
    cJSON_AddItemToObject(o, "assumptions", notes_json(&w->notes));
    if (v->limits) {
        cJSON *lo = cJSON_AddObjectToObject(o, "limits");
        cJSON_AddItemToObject(lo, "admission_policy", policy(v));
        jstr(lo, "concurrency_basis", v->limits->concurrency_basis);
        jnum(lo, "throttle_level", v->limits->throttle_level, 1);
        bt_json_add_time(lo, "window_from", v->limits->window_from);
        bt_json_add_time(lo, "window_to", v->limits->window_to);
        jstr(lo, "budget_quality", bt_quality_name(v->limits->budget_q));
        jnum(lo, "reserve_tpm", v->limits->reserve_tpm, 1);
        jstr(lo, "max_tokens_basis", v->limits->max_tokens_basis);
        jstr(lo, "truncation_risk", v->limits->truncation);
        cJSON_AddItemToObject(lo, "evidence", notes_json(&v->limits->notes));
    } else {
        cJSON_AddNullToObject(o, "limits");
    }
    char *txt = bt_json_print(o, true);
    bt_san_json_text(out, txt);
    bt_buf_putc(out, '\n');
    cJSON_free(txt);
    cJSON_Delete(o);
}
