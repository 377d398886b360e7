/* The route detail's graphs: a table of graph kinds, each answering one question.
 * Every time graph spans the same minutes and ends at the last complete minute
 * ("now"), so events line up from one graph to the next; each series has its own
 * glyph (tui_patterns), so they are told apart without color. */
#include "tui/view.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dataminute.h"
#include "core/figures.h"
#include "core/format.h"
#include "core/headroom.h"
#include "core/oppoint.h"
#include "core/speed.h"
#include "core/util.h"
#include "tui/graph.h"
#include "tui/keys.h"

/* A per-minute value of a derived series at minute m. */
enum skind { S_SETTLED, S_ESTIMATED, S_USED, S_THROTTLES, S_P50, S_P99, S_INFLIGHT,
             S_COMPLETED, S_OUTPUT, S_ADMITTED, S_RETRIES, S_ADM_THROTTLED, S_OTPS, S_TTFT };

/* An admission reading at data minute m: the scrape m is evaluated with (core's
 * one clock), as export's row of m has it, never the scrape of clock minute m. */
static double adm_at(const struct bt_tui *t, int r, enum bt_signal s, int64_t m)
{
    const struct bt_tui_host *h = t->host;
    int64_t am = bt_data_minute_admission(h->cfg, h->store, r, m, h->now);
    return am ? bt_store_at(h->store, r, s, am) : NAN;
}

static double series_at(const struct bt_tui *t, int r, enum skind k, int64_t m)
{
    const struct bt_store *st = t->host->store;
    struct bt_minute_fig f;
    switch (k) {
    case S_SETTLED:
    case S_ESTIMATED:
    case S_USED:
        /* core computes each minute's figures (docs/headroom.md), with the admission
         * readings the minute is evaluated with */
        bt_minute_figures_shown(t->host->cfg, st, r, m, t->host->now, &f);
        return k == S_SETTLED ? f.settled : k == S_ESTIMATED ? f.estimated : f.used;
    case S_THROTTLES: return bt_store_at(st, r, BT_SIG_THROTTLES, m);
    case S_P50: return bt_store_at(st, r, BT_SIG_LATENCY_P50, m);
    case S_P99: return bt_store_at(st, r, BT_SIG_LATENCY_P99, m);
    case S_INFLIGHT: return adm_at(t, r, BT_SIG_ADM_IN_FLIGHT, m);
    case S_COMPLETED: return adm_at(t, r, BT_SIG_ADM_COMPLETED, m);
    case S_OUTPUT: return bt_store_at(st, r, BT_SIG_OUTPUT_TOKENS, m);
    case S_ADMITTED: return adm_at(t, r, BT_SIG_ADM_ADMITTED, m);
    case S_RETRIES: return adm_at(t, r, BT_SIG_ADM_RETRIES, m);
    case S_ADM_THROTTLED: return adm_at(t, r, BT_SIG_ADM_THROTTLED, m);
    case S_OTPS: return bt_otps_at(st, r, m); /* core/speed.h */
    case S_TTFT: return bt_store_at(st, r, BT_SIG_TTFT_AVG, m);
    }
    return NAN;
}


const struct tui_pattern tui_patterns[TUI_NPAT] = {
    [PAT_QUOTA] = {"quota (! where crossed)", 0x2504, '=', BT_ROLE_QUOTA},
    [PAT_SETTLED] = {"settled", 0x25CF, '*', BT_ROLE_SETTLED},
    [PAT_ESTIMATED] = {"estimated", 0x25CB, 'o', BT_ROLE_ESTIMATED},
    [PAT_BOTH] = {"settled and estimated on one point", 0x25C9, '@', BT_ROLE_ESTIMATED},
    [PAT_USED] = {"used (with held reservations)", 0x00D7, 'x', BT_ROLE_RESERVED},
    [PAT_THROTTLE] = {"throttles", 0x2587, '#', BT_ROLE_THROTTLE},
    [PAT_P50] = {"p50", 0x2022, '+', BT_ROLE_P50},
    [PAT_P99] = {"p99", 0x25B2, '^', BT_ROLE_P99},
    [PAT_INFLIGHT] = {"in flight", 0x25CF, '*', BT_ROLE_INFLIGHT},
    [PAT_LIMIT] = {"limit (! where crossed)", 0x2504, '=', BT_ROLE_LIMIT},
    [PAT_POINT] = {"one minute", 0x2022, '*', BT_ROLE_SETTLED},
    [PAT_NOW] = {"now", 0x25C6, '#', BT_ROLE_KNEE},
    [PAT_KNEE] = {"knee", 0x2506, ':', BT_ROLE_KNEE},
    [PAT_ADMITTED] = {"admitted", 0x25A0, 'A', BT_ROLE_SETTLED},
    [PAT_RETRIED] = {"retried", 0x25C7, 'R', BT_ROLE_WARN},
    [PAT_ATHROTTLED] = {"throttled (admission)", 0x2715, 'T', BT_ROLE_THROTTLE},
    [PAT_COMPLETED] = {"completed", 0x25A1, 'C', BT_ROLE_OK},
    [PAT_CURSOR] = {"cursor (< >)", 0x2502, '|', BT_ROLE_KNEE},
    [PAT_OTPS] = {"output tokens/s", 0x25AA, 's', BT_ROLE_SETTLED},
    [PAT_TTFT] = {"time to first token", 0x25E6, 'f', BT_ROLE_P50},
    [PAT_HOUR] = {"the hour before", 0x2508, '-', BT_ROLE_DIM},
    [PAT_SLOWLINE] = {"slow line (! where crossed)", 0x2504, '=', BT_ROLE_WARN},
};

/* One graph being drawn: its area, plot, and the minutes every time graph shares. */
struct gctx {
    struct bt_tui *t;
    int r;
    const struct bt_eval *e;
    struct bt_rect a, p;   /* the graph (document rows) and its plot area */
    int64_t end;           /* the right edge: the data minute shown (panned: earlier) */
    int n;                 /* columns of values, right-aligned */
    int span;              /* minutes over those columns (n: one a column) */
    int cursor;            /* the column the cursor reads (-1: none) */
};

/* The first minute column c (0..n-1) shows: span minutes over n columns, the newest
 * at the right edge; zoomed out a column holds several, zoomed in one is repeated. */
static int64_t col_minute(const struct gctx *g, int c)
{
    int64_t first = g->end - (int64_t)(g->span - 1) * 60;
    return first + (int64_t)((long long)c * g->span / g->n) * 60;
}

static int64_t col_last_minute(const struct gctx *g, int c)
{
    if (c + 1 >= g->n)
        return g->end;
    int64_t next = col_minute(g, c + 1);
    int64_t m = col_minute(g, c);
    return next > m ? next - 60 : m;
}

static uint32_t pat(const struct gctx *g, int k)
{
    return g->t->utf8 ? tui_patterns[k].utf8 : (uint32_t)tui_patterns[k].ascii;
}

static double *series(const struct gctx *g, enum skind k)
{
    double *v = bt_xcalloc((size_t)g->n + 1, sizeof *v);
    /* a speed is watched for dips: a slow minute is never lost either */
    bool low = k == S_OTPS;
    for (int i = 0; i < g->n; i++) {
        /* several minutes a column (zoomed out): the largest, so a peak is never lost */
        v[i] = NAN;
        for (int64_t m = col_minute(g, i); m <= col_last_minute(g, i); m += 60) {
            double x = series_at(g->t, g->r, k, m);
            if (!isnan(x) && (isnan(v[i]) || (low ? x < v[i] : x > v[i])))
                v[i] = x;
        }
    }
    return v;
}

/* A legend's value: at the cursor's minute when there is one, else now's (core's). */
static double at_cursor(const struct gctx *g, enum skind k, double now)
{
    return g->cursor < 0 ? now : series_at(g->t, g->r, k, col_minute(g, g->cursor));
}

/* The cursor: a column marker in the plot. */
static void draw_cursor(const struct gctx *g, struct bt_canvas *cv)
{
    if (g->cursor < 0)
        return;
    int x = g->p.w - g->n + g->cursor;
    for (int y = 0; y < g->p.h; y++)
        if (!cv->c[y * cv->w + x].ch)
            bt_canvas_set(cv, x, y, pat(g, PAT_CURSOR), BT_ROLE_KNEE);
}

/* Rounds an axis maximum up to two significant digits (350.8 -> 360). */
static double axis_max(double v)
{
    if (!(v > 0) || !isfinite(v))
        return 1;
    double step = pow(10, floor(log10(v)) - 1);
    return ceil(v / step - 1e-9) * step;
}

static double vmax(const double *v, int n, double m)
{
    for (int i = 0; i < n; i++)
        if (isfinite(v[i]) && v[i] > m)
            m = v[i];
    return m;
}

/* A legend item on the title rule: its glyph, its label (with the current value). */
struct item {
    int pat;
    char label[64]; /* "now " two 16-byte figures " in flight, " "/min" */
    char name[32];         /* without the value, when space is short */
};

static int items_width(const struct item *it, int n, bool values)
{
    int w = 0;
    for (int i = 0; i < n; i++)
        w += 4 + tui_width(values ? it[i].label : it[i].name);
    return w;
}

/* The title rule: the question the graph answers, then the legend. When space is
 * short the question shortens, then values go, but the first item (the quota or
 * the limit) is always there. */
static void title_rule(const struct gctx *g, const char *title, const char *short_title,
                       const struct item *it, int n)
{
    const struct bt_tui *t = g->t;
    struct bt_rect a = g->a;
    int room = a.w - 4;
    bool values = true;
    const char *ti = title;
    if (tui_width(ti) + items_width(it, n, true) > room)
        ti = short_title;
    if (tui_width(ti) + items_width(it, n, true) > room)
        values = false;
    while (n > 1 && tui_width(ti) + items_width(it, n, values) > room)
        n--;
    tui_rule(t, a.y, a.x, a.w, ti);
    int x = a.x + 2 + tui_width(ti) + 1, xm = a.x + a.w - 1;
    for (int i = 0; i < n; i++) {
        /* " <glyph> label " over the rule */
        x += tui_text(a.y, x, xm - x, " ", A(t, BT_ROLE_TITLE));
        tui_glyph(a.y, x++, pat(g, it[i].pat), A(t, tui_patterns[it[i].pat].role));
        x += tui_text(a.y, x, xm - x, " ", A(t, BT_ROLE_TITLE));
        x += tui_text(a.y, x, xm - x, values ? it[i].label : it[i].name, A(t, BT_ROLE_TITLE));
        x += tui_text(a.y, x, xm - x, " ", A(t, BT_ROLE_TITLE));
    }
}

typedef void (*yfmt)(double v, char *o, size_t n);

/* Latency ticks in seconds, as the legend reads (0s, 2.5s, 12s). */
static void fmt_secs(double ms, char *o, size_t n)
{
    if (ms == 0)
        snprintf(o, n, "0s");
    else if (ms < 10000)
        snprintf(o, n, "%.1fs", ms / 1000);
    else
        snprintf(o, n, "%.0fs", ms / 1000);
}

static void fmt_count(double v, char *o, size_t n)
{
    bt_fmt_tokens(v, o, n);
}

/* The y axis: a line with three ticks (0, half, top), labels in the figure's unit. */
static void y_axis(const struct gctx *g, double ymax, yfmt fmt)
{
    const struct bt_tui *t = g->t;
    int ax = g->p.x - 1;
    for (int y = 0; y < g->p.h; y++)
        tui_glyph(g->p.y + y, ax, t->utf8 ? 0x2502 : '|', A(t, BT_ROLE_AXIS));
    double ticks[3] = {0, ymax / 2, ymax};
    for (int i = 0; i < 3; i++) {
        int row = bt_graph_row(ticks[i], ymax, g->p.h);
        char lab[16];
        fmt(ticks[i], lab, sizeof lab);
        int w = tui_width(lab);
        if (w > 6)
            w = 6;
        tui_text(g->p.y + row, ax - 1 - w, w, lab, A(t, BT_ROLE_AXIS));
        tui_glyph(g->p.y + row, ax, t->utf8 ? 0x2524 : '+', A(t, BT_ROLE_AXIS));
    }
}

/* The time axis every time graph shares: data minutes on whole steps, the right
 * edge's data minute (the one on screen, or the panned-back one) at the right; the
 * cursor's minute under it. */
static void time_axis(const struct gctx *g)
{
    const struct bt_tui *t = g->t;
    int ay = g->a.y + g->a.h - 1;
    static const int steps[] = {5, 10, 15, 30, 60, 120, 240, 480, 1440, 2880, 10080};
    /* labels at least 7 columns apart: a step of that many columns' minutes */
    double per_col = (double)g->span / g->n;
    int step = steps[BT_ARRAY_LEN(steps) - 1];
    for (size_t i = 0; i < BT_ARRAY_LEN(steps); i++)
        if (steps[i] / per_col >= 7 && (g->span > 10 || steps[i] >= 5)) {
            step = steps[i];
            break;
        }
    int c0 = g->p.w - g->n;
    /* the cursor's minute first: the other labels give way to it */
    int cx0 = -1, cx1 = -1;
    if (g->cursor >= 0) {
        char hm[16];
        bt_fmt_hhmm(col_minute(g, g->cursor), hm, sizeof hm);
        int x = g->p.x + c0 + g->cursor - 2;
        if (x < g->p.x)
            x = g->p.x;
        if (x + 5 > g->p.x + g->p.w)
            x = g->p.x + g->p.w - 5;
        tui_text(ay, x, 5, hm, A(t, BT_ROLE_KNEE) | A_BOLD);
        cx0 = x - 1;
        cx1 = x + 5;
    }
    /* the right edge names its data minute (the one clock): "now" read as the clock
     * minute, three minutes later than the figures drawn there */
    char end[16];
    bt_fmt_hhmm(g->end, end, sizeof end);
    int ew = (int)strlen(end);
    int now_x = g->p.x + g->p.w - ew;
    if (now_x > cx1 || now_x + ew < cx0)
        tui_text(ay, now_x, ew, end, A(t, BT_ROLE_AXIS));
    int last_end = g->p.x - 1;
    for (int c = 0; c < g->n; c++) {
        int64_t a = col_minute(g, c), b = col_last_minute(g, c), m = 0;
        for (int64_t k = a; k <= b && !m; k += 60)
            if (!(k % ((int64_t)step * 60)))
                m = k;
        if (!m || (c > 0 && col_minute(g, c - 1) == a))
            continue;
        int x = g->p.x + c0 + c - 2;
        if (x <= last_end || x + 5 >= now_x || (x + 5 >= cx0 && x <= cx1))
            continue;
        char hm[16];
        bt_fmt_hhmm(m, hm, sizeof hm);
        tui_text(ay, x, 5, hm, A(t, BT_ROLE_AXIS));
        last_end = x + 5;
    }
}

static void blit_free(const struct gctx *g, struct bt_canvas *cv)
{
    draw_cursor(g, cv);
    tui_blit(g->t, cv, g->p.y, g->p.x);
    bt_canvas_free(cv);
}

static void draw_tokens(struct gctx *g)
{
    const struct bt_eval *e = g->e;
    /* mantle: core's minute figures are the input side */
    bool mantle = bt_eval_mantle(e);
    const struct bt_side_fig *in = bt_eval_side(e, BT_SIDE_INPUT);
    double quota = mantle ? in->quota : bt_fig(e, BT_FIG_QUOTA);
    double *settled = series(g, S_SETTLED);
    double *est = series(g, S_ESTIMATED);
    double *used = series(g, S_USED);
    double ymax = vmax(settled, g->n, vmax(est, g->n, vmax(used, g->n, 0)));
    if (isfinite(quota) && quota > ymax)
        ymax = quota;
    ymax = axis_max(ymax * 1.1);
    struct item it[4];
    int ni = 0;
    char v[16];
    bt_fmt_tokens(quota, v, sizeof v);
    it[ni] = (struct item){.pat = PAT_QUOTA};
    snprintf(it[ni].label, sizeof it[ni].label, isnan(quota) ? "quota unknown" : "quota %s", v);
    snprintf(it[ni++].name, sizeof it[0].name, isnan(quota) ? "quota unknown" : "quota");
    bt_fmt_tokens(at_cursor(g, S_SETTLED, bt_fig(e, mantle ? BT_FIG_INPUT_TOKENS : BT_FIG_SETTLED)),
                  v, sizeof v);
    it[ni] = (struct item){.pat = PAT_SETTLED};
    snprintf(it[ni].label, sizeof it[0].label, "%s %s", mantle ? "input" : "settled", v);
    snprintf(it[ni++].name, sizeof it[0].name, "%s", mantle ? "input" : "settled");
    if (!mantle) {
        bt_fmt_tokens(at_cursor(g, S_ESTIMATED, bt_fig(e, BT_FIG_ESTIMATED)), v, sizeof v);
        it[ni] = (struct item){.pat = PAT_ESTIMATED};
        snprintf(it[ni].label, sizeof it[0].label, "est %s", v);
        snprintf(it[ni++].name, sizeof it[0].name, "est");
    }
    /* now's used is core's figure for the minute on screen; the series' last column is
     * the same minute (the right edge is the data minute, not the clock minute whose
     * CloudWatch figures are not published yet: used fell to ~0 there) */
    bt_fmt_tokens(at_cursor(g, S_USED, mantle ? in->used : bt_fig(e, BT_FIG_USED)), v, sizeof v);
    it[ni] = (struct item){.pat = PAT_USED};
    snprintf(it[ni].label, sizeof it[0].label, "used %s", v);
    snprintf(it[ni++].name, sizeof it[0].name, "used");
    title_rule(g, mantle ? "Input tokens/min against the input quota"
                         : "Tokens/min against the quota",
               mantle ? "input tokens/min" : "tokens/min", it, ni);
    y_axis(g, ymax, fmt_count);
    time_axis(g);
    struct bt_canvas cv;
    bt_canvas_init(&cv, g->p.w, g->p.h);
    struct bt_plot_series sr[] = {
        {.kind = BT_SER_LEVEL, .level = quota, .role = BT_ROLE_QUOTA, .ascii = '=',
         .glyph = pat(g, PAT_QUOTA)},
        {.kind = BT_SER_LINE, .v = used, .n = g->n, .role = BT_ROLE_RESERVED, .ascii = 'x',
         .glyph = pat(g, PAT_USED), .over = true},
        {.kind = BT_SER_LINE, .v = settled, .n = g->n, .role = BT_ROLE_SETTLED, .ascii = '*',
         .glyph = pat(g, PAT_SETTLED), .over = true},
        /* the estimate is drawn last, never hidden: where it meets settled, one glyph says both */
        {.kind = BT_SER_LINE, .v = est, .n = g->n, .role = BT_ROLE_ESTIMATED, .ascii = 'o',
         .glyph = pat(g, PAT_ESTIMATED), .merge_with = 3, .merge_glyph = pat(g, PAT_BOTH),
         .over = true},
    };
    bt_graph_dots(&cv, 0, 0, g->p.w, g->p.h, sr, 4, ymax, g->t->utf8, BT_ROLE_CRIT);
    blit_free(g, &cv);
    free(settled);
    free(est);
    free(used);
}

/* A graph of one series against one level (a quota, a limit), the level first in
 * the legend and marked where the series crosses it. */
struct level_graph {
    enum skind series;
    double level, now;          /* the level and the series' current value */
    int level_pat, line_pat;
    const char *level_name, *no_level, *line_name, *title, *short_title;
    double headroom;            /* the axis top: this much above the largest value */
};

static void draw_level_graph(struct gctx *g, const struct level_graph *d)
{
    double *v = series(g, d->series);
    double ymax = axis_max(vmax(v, g->n, isfinite(d->level) ? d->level : 1) * d->headroom);
    struct item it[2] = {{.pat = d->level_pat}, {.pat = d->line_pat}};
    char s[16];
    bt_fmt_tokens(d->level, s, sizeof s);
    if (isnan(d->level))
        snprintf(it[0].label, sizeof it[0].label, "%s", d->no_level);
    else
        snprintf(it[0].label, sizeof it[0].label, "%s %s", d->level_name, s);
    snprintf(it[0].name, sizeof it[0].name, "%s", d->level_name);
    bt_fmt_tokens(at_cursor(g, d->series, d->now), s, sizeof s);
    snprintf(it[1].label, sizeof it[1].label, "%s %s", d->line_name, s);
    snprintf(it[1].name, sizeof it[1].name, "%s", d->line_name);
    title_rule(g, d->title, d->short_title, it, 2);
    y_axis(g, ymax, fmt_count);
    time_axis(g);
    struct bt_canvas cv;
    bt_canvas_init(&cv, g->p.w, g->p.h);
    const struct tui_pattern *lp = &tui_patterns[d->level_pat], *sp = &tui_patterns[d->line_pat];
    struct bt_plot_series sr[] = {
        {.kind = BT_SER_LEVEL, .level = d->level, .role = (unsigned char)lp->role,
         .ascii = (char)lp->ascii, .glyph = pat(g, d->level_pat)},
        {.kind = BT_SER_LINE, .v = v, .n = g->n, .role = (unsigned char)sp->role,
         .ascii = (char)sp->ascii, .glyph = pat(g, d->line_pat), .over = true},
    };
    bt_graph_dots(&cv, 0, 0, g->p.w, g->p.h, sr, 2, ymax, g->t->utf8, BT_ROLE_CRIT);
    blit_free(g, &cv);
    free(v);
}

static void draw_mantle_out(struct gctx *g)
{
    const struct bt_eval *e = g->e;
    draw_level_graph(g, &(struct level_graph){
        .series = S_OUTPUT, .level = bt_eval_side(e, BT_SIDE_OUTPUT)->quota,
        .now = bt_eval_side(e, BT_SIDE_OUTPUT)->used,
        .level_pat = PAT_QUOTA, .line_pat = PAT_SETTLED, .level_name = "quota",
        .no_level = "quota unknown", .line_name = "output",
        .title = "Output tokens/min against the output quota",
        .short_title = "output tokens/min", .headroom = 1.1});
}

static void draw_throttles(struct gctx *g)
{
    double *v = series(g, S_THROTTLES);
    double ymax = axis_max(vmax(v, g->n, 1));
    struct item it[1] = {{.pat = PAT_THROTTLE}};
    char s[16];
    bt_fmt_count(at_cursor(g, S_THROTTLES, bt_fig(g->e, BT_FIG_THROTTLES)), s, sizeof s);
    snprintf(it[0].label, sizeof it[0].label, "throttles %s", s);
    snprintf(it[0].name, sizeof it[0].name, "throttles");
    title_rule(g, "Throttles/min: is Bedrock refusing calls?", "throttles/min", it, 1);
    y_axis(g, ymax, fmt_count);
    time_axis(g);
    struct bt_canvas cv;
    bt_canvas_init(&cv, g->p.w, g->p.h);
    bt_graph_bars(&cv, 0, 0, g->p.w, g->p.h, v, g->n, ymax, BT_ROLE_THROTTLE, g->t->utf8);
    blit_free(g, &cv);
    free(v);
}

static void draw_latency(struct gctx *g)
{
    double *p50 = series(g, S_P50), *p99 = series(g, S_P99);
    double ymax = axis_max(vmax(p99, g->n, vmax(p50, g->n, 1)) * 1.1);
    struct item it[2] = {{.pat = PAT_P50}, {.pat = PAT_P99}};
    char s[16];
    bt_fmt_latency(at_cursor(g, S_P50, bt_fig(g->e, BT_FIG_LAT_P50)), s, sizeof s);
    snprintf(it[0].label, sizeof it[0].label, "p50 %s", s);
    snprintf(it[0].name, sizeof it[0].name, "p50");
    bt_fmt_latency(at_cursor(g, S_P99, bt_fig(g->e, BT_FIG_LAT_P99)), s, sizeof s);
    snprintf(it[1].label, sizeof it[1].label, "p99 %s", s);
    snprintf(it[1].name, sizeof it[1].name, "p99");
    title_rule(g, "Latency: are calls slowing down?", "latency", it, 2);
    y_axis(g, ymax, fmt_secs);
    time_axis(g);
    struct bt_canvas cv;
    bt_canvas_init(&cv, g->p.w, g->p.h);
    struct bt_plot_series sr[] = {
        {.kind = BT_SER_LINE, .v = p99, .n = g->n, .role = BT_ROLE_P99, .ascii = '^',
         .glyph = pat(g, PAT_P99)},
        {.kind = BT_SER_LINE, .v = p50, .n = g->n, .role = BT_ROLE_P50, .ascii = '+',
         .glyph = pat(g, PAT_P50)},
    };
    bt_graph_dots(&cv, 0, 0, g->p.w, g->p.h, sr, 2, ymax, g->t->utf8, BT_ROLE_CRIT);
    blit_free(g, &cv);
    free(p50);
    free(p99);
}

/* A speed against the hour before and the line the rule judges by (core/speed.h): output
 * tokens per second with SLOWDOWN's floor, time to first token with queueing's ceiling.
 * The lines are the hour before the data minute on screen; the rule's verdict (SLOWDOWN,
 * QUEUEING) leads the title when it holds. */
struct speed_graph {
    enum skind series;
    double now, hour, line;
    bool floor, verdict;
    const char *title, *verdict_title, *short_title, *verdict_short, *name, *line_name;
    yfmt fmt;
};

static void fmt_per_s(double v, char *o, size_t n)
{
    if (isnan(v))
        snprintf(o, n, "-");
    else
        snprintf(o, n, v < 10 && v != 0 ? "%.1f/s" : "%.0f/s", v);
}

static void draw_speed(struct gctx *g, const struct speed_graph *d)
{
    double *v = series(g, d->series);
    double top = vmax(v, g->n, 0);
    if (isfinite(d->hour) && d->hour > top)
        top = d->hour;
    if (isfinite(d->line) && d->line > top)
        top = d->line;
    double ymax = axis_max(top * 1.2);
    struct item it[3] = {{.pat = PAT_SLOWLINE}, {.pat = PAT_HOUR}, {.pat = d->series == S_OTPS ? PAT_OTPS : PAT_TTFT}};
    char a[16];
    d->fmt(d->line, a, sizeof a);
    if (isnan(d->line))
        snprintf(it[0].label, sizeof it[0].label, "%s: hour too short", d->line_name);
    else
        snprintf(it[0].label, sizeof it[0].label, "%s %s %s", d->line_name, d->floor ? "<" : ">", a);
    snprintf(it[0].name, sizeof it[0].name, "%s", d->line_name);
    d->fmt(d->hour, a, sizeof a);
    snprintf(it[1].label, sizeof it[1].label, "hour %s", isnan(d->hour) ? "-" : a);
    snprintf(it[1].name, sizeof it[1].name, "hour");
    d->fmt(at_cursor(g, d->series, d->now), a, sizeof a);
    snprintf(it[2].label, sizeof it[2].label, "%s %s", d->name, a);
    snprintf(it[2].name, sizeof it[2].name, "%s", d->name);
    title_rule(g, d->verdict ? d->verdict_title : d->title, d->verdict ? d->verdict_short : d->short_title,
               it, 3);
    y_axis(g, ymax, d->fmt);
    time_axis(g);
    struct bt_canvas cv;
    bt_canvas_init(&cv, g->p.w, g->p.h);
    const struct tui_pattern *sp = &tui_patterns[it[2].pat];
    struct bt_plot_series sr[] = {
        {.kind = BT_SER_LEVEL, .level = d->hour, .role = BT_ROLE_DIM, .ascii = '-',
         .glyph = pat(g, PAT_HOUR)},
        {.kind = BT_SER_LEVEL, .level = d->line, .role = BT_ROLE_WARN, .ascii = '=',
         .glyph = pat(g, PAT_SLOWLINE), .below = d->floor, .above = !d->floor},
        {.kind = BT_SER_LINE, .v = v, .n = g->n, .role = (unsigned char)sp->role,
         .ascii = (char)sp->ascii, .glyph = pat(g, it[2].pat)},
    };
    bt_graph_dots(&cv, 0, 0, g->p.w, g->p.h, sr, 3, ymax, g->t->utf8, BT_ROLE_CRIT);
    blit_free(g, &cv);
    free(v);
}

static void draw_otps(struct gctx *g)
{
    const struct bt_speed *s = bt_eval_speed(g->e);
    draw_speed(g, &(struct speed_graph){
        .series = S_OTPS, .now = s->otps, .hour = s->otps_hour, .line = s->otps_floor,
        .floor = true, .verdict = s->slowdown,
        .title = "Output tokens/s: are calls generating slower?",
        .verdict_title = "SLOWDOWN: output tokens/s fell, traffic did not grow",
        .short_title = "output tokens/s", .verdict_short = "SLOWDOWN tokens/s", .name = "now",
        .line_name = "slowdown", .fmt = fmt_per_s});
}

static void draw_ttft(struct gctx *g)
{
    const struct bt_speed *s = bt_eval_speed(g->e);
    draw_speed(g, &(struct speed_graph){
        .series = S_TTFT, .now = s->ttft, .hour = s->ttft_hour, .line = s->ttft_ceiling,
        .floor = false, .verdict = s->queueing,
        .title = "Time to first token: are calls waiting to start?",
        .verdict_title = "QUEUEING: first tokens came later, answers no longer",
        .short_title = "first token", .verdict_short = "QUEUEING first token", .name = "now",
        .line_name = "queueing", .fmt = fmt_secs});
}

/* Offered against accepted load (the admission counters): admitted, retried,
 * throttled and completed calls a minute. A retry storm shows as retries climbing
 * while completions stay flat: what makes the route crit. */
static void draw_offered(struct gctx *g)
{
    static const struct {
        enum skind s;
        int pat;
        const char *name;
    } ser[] = {{S_ADMITTED, PAT_ADMITTED, "admitted"}, {S_RETRIES, PAT_RETRIED, "retried"},
               {S_ADM_THROTTLED, PAT_ATHROTTLED, "throttled"},
               {S_COMPLETED, PAT_COMPLETED, "completed"}};
    enum { NS = 4 };
    double *v[NS];
    double ymax = 1;
    const struct bt_eval *e = g->e;
    const double now[NS] = {bt_fig(e, BT_FIG_ADMITTED), bt_fig(e, BT_FIG_RETRIES),
                            bt_fig(e, BT_FIG_ADM_THROTTLED), bt_fig(e, BT_FIG_COMPLETED)};
    struct item it[NS];
    struct bt_plot_series sr[NS];
    for (int k = 0; k < NS; k++) {
        v[k] = series(g, ser[k].s);
        ymax = vmax(v[k], g->n, ymax);
        char s[16];
        bt_fmt_count(at_cursor(g, ser[k].s, now[k]), s, sizeof s);
        it[k] = (struct item){.pat = ser[k].pat};
        snprintf(it[k].label, sizeof it[k].label, "%s %s", ser[k].name, s);
        snprintf(it[k].name, sizeof it[k].name, "%s", ser[k].name);
        const struct tui_pattern *p = &tui_patterns[ser[k].pat];
        sr[k] = (struct bt_plot_series){.kind = BT_SER_LINE, .v = v[k], .n = g->n,
                                        .role = (unsigned char)p->role, .ascii = (char)p->ascii,
                                        .glyph = pat(g, ser[k].pat)};
    }
    ymax = axis_max(ymax * 1.1);
    title_rule(g, "Calls/min offered and accepted: are retries feeding throttles?",
               "calls/min", it, NS);
    y_axis(g, ymax, fmt_count);
    time_axis(g);
    struct bt_canvas cv;
    bt_canvas_init(&cv, g->p.w, g->p.h);
    bt_graph_dots(&cv, 0, 0, g->p.w, g->p.h, sr, NS, ymax, g->t->utf8, BT_ROLE_CRIT);
    blit_free(g, &cv);
    for (int k = 0; k < NS; k++)
        free(v[k]);
}

static void draw_inflight(struct gctx *g)
{
    const struct bt_eval *e = g->e;
    draw_level_graph(g, &(struct level_graph){
        .series = S_INFLIGHT, .level = bt_fig(e, BT_FIG_CONC_LIMIT),
        .now = bt_fig(e, BT_FIG_IN_FLIGHT),
        .level_pat = PAT_LIMIT, .line_pat = PAT_INFLIGHT, .level_name = "limit",
        .no_level = "no limit known", .line_name = "in flight",
        .title = "Calls in flight against the concurrency limit", .short_title = "in flight",
        .headroom = 1.2});
}

/* Completions per minute against calls in flight, one point a minute of the history;
 * the newest minute marked "now", the knee (core/oppoint) marked and labelled. */
static void draw_oppoint(struct gctx *g)
{
    struct bt_tui *t = g->t;
    int hist = t->host->cfg->history_minutes;
    double *xs = bt_xcalloc((size_t)hist + 1, sizeof(double));
    double *ys = bt_xcalloc((size_t)hist + 1, sizeof(double));
    int n = 0;
    /* not a time graph: the admission counters' own newest minutes, not the data minute */
    int64_t end = bt_minute_floor(t->host->now) - 60;
    for (int i = 0; i < hist; i++) {
        int64_t m = end - (int64_t)i * 60;
        double x = series_at(t, g->r, S_INFLIGHT, m), yv = series_at(t, g->r, S_COMPLETED, m);
        if (!isfinite(x) || !isfinite(yv) || x < 0 || yv < 0)
            continue;
        xs[n] = x;
        ys[n] = yv;
        n++;
    }
    struct bt_oppoint op;
    bt_oppoint_compute(xs, ys, n, &op);
    double xmax = axis_max(op.xmax * 1.1), ymax = axis_max(op.ymax * 1.15);
    struct item it[3] = {{.pat = PAT_NOW}, {.pat = PAT_POINT}, {.pat = PAT_KNEE}};
    char a[16], b[16];
    if (n) {
        bt_fmt_count(xs[0], a, sizeof a);
        bt_fmt_count(ys[0], b, sizeof b);
        snprintf(it[0].label, sizeof it[0].label, "now %s in flight, %s/min", a, b);
    } else {
        snprintf(it[0].label, sizeof it[0].label, "now: no data");
    }
    snprintf(it[0].name, sizeof it[0].name, "now");
    snprintf(it[1].label, sizeof it[1].label, "one minute");
    snprintf(it[1].name, sizeof it[1].name, "minute");
    int ni = 2;
    if (op.enough && op.plateau) {
        snprintf(it[2].label, sizeof it[2].label, "flat beyond %.0f in flight", op.knee);
        snprintf(it[2].name, sizeof it[2].name, "knee %.0f", op.knee);
        ni = 3;
    }
    title_rule(g, "Operating point: does more concurrency still pay?", "operating point", it, ni);
    y_axis(g, ymax, fmt_count);
    int ay = g->a.y + g->a.h - 1;
    tui_text(ay, g->p.x, 1, "0", A(t, BT_ROLE_AXIS));
    bt_fmt_count(xmax, a, sizeof a);
    char axis[48];
    snprintf(axis, sizeof axis, "%s in flight", a);
    int aw = tui_width(axis);
    tui_text(ay, g->p.x + g->p.w - aw, aw, axis, A(t, BT_ROLE_AXIS));
    struct bt_canvas cv;
    bt_canvas_init(&cv, g->p.w, g->p.h);
    int pw = g->p.w, ph = g->p.h;
    if (op.enough && op.plateau && pw > 1) {
        int kx = (int)lround(fmin(op.knee / xmax, 1) * (pw - 1));
        for (int y = 0; y < ph; y++)
            bt_canvas_set(&cv, kx, y, pat(g, PAT_KNEE), BT_ROLE_KNEE);
        char kl[32];
        snprintf(kl, sizeof kl, "knee %.0f", op.knee);
        int kw = tui_width(kl), lx = g->p.x + kx - kw / 2;
        if (lx > g->p.x + 1 && lx + kw < g->p.x + g->p.w - aw - 1)
            tui_text(ay, lx, kw, kl, A(t, BT_ROLE_KNEE));
    }
    for (int i = n - 1; i >= 0; i--) {
        int cx = (int)lround(fmin(xs[i] / xmax, 1) * (pw - 1));
        int cy = bt_graph_row(ys[i], ymax, ph);
        bt_canvas_set(&cv, cx, cy, pat(g, i == 0 ? PAT_NOW : PAT_POINT),
                      i == 0 ? BT_ROLE_KNEE : BT_ROLE_SETTLED);
    }
    blit_free(g, &cv);
    if (!op.enough) {
        char msg[160];
        snprintf(msg, sizeof msg, "not enough data yet: %d minute%s at %d in-flight level%s; "
                 "a knee needs %d minutes at %d levels", op.points, op.points == 1 ? "" : "s",
                 op.levels, op.levels == 1 ? "" : "s", BT_OPPOINT_MIN_POINTS,
                 BT_OPPOINT_MIN_LEVELS);
        tui_text_cut(g->p.y + ph / 2, g->p.x + 2, pw - 4, msg, A(t, BT_ROLE_DIM));
    }
    free(xs);
    free(ys);
}

/* The graph kinds: which routes have one, and how it is drawn (has_signal: the store
 * holds the signal for the route). */
static bool has_signal(const struct bt_tui *t, int r, enum bt_signal s)
{
    return bt_store_newest(t->host->store, r, s, t->host->now) != 0;
}

static bool want_always(const struct bt_tui *t, int r)
{
    (void)t, (void)r;
    return true;
}

static bool want_mantle(const struct bt_tui *t, int r)
{
    return bt_eval_mantle(&t->evals[r]);
}

static bool want_runtime(const struct bt_tui *t, int r)
{
    return !bt_eval_mantle(&t->evals[r]);
}

/* a runtime route whose CloudWatch publishes TimeToFirstToken (mantle publishes no latency) */
static bool want_speed(const struct bt_tui *t, int r)
{
    return !bt_eval_mantle(&t->evals[r]) && has_signal(t, r, BT_SIG_TTFT_AVG);
}

static bool want_inflight(const struct bt_tui *t, int r)
{
    return has_signal(t, r, BT_SIG_ADM_IN_FLIGHT) || !isnan(bt_fig(&t->evals[r], BT_FIG_IN_FLIGHT));
}

static bool want_offered(const struct bt_tui *t, int r)
{
    return has_signal(t, r, BT_SIG_ADM_ADMITTED) || has_signal(t, r, BT_SIG_ADM_RETRIES) ||
           has_signal(t, r, BT_SIG_ADM_COMPLETED);
}

static bool want_oppoint(const struct bt_tui *t, int r)
{
    return has_signal(t, r, BT_SIG_ADM_IN_FLIGHT) && has_signal(t, r, BT_SIG_ADM_COMPLETED);
}

static const struct {
    enum gkind kind;
    bool (*wanted)(const struct bt_tui *t, int r);
    void (*draw)(struct gctx *g);
} gkinds[] = {
    {G_TOKENS, want_always, draw_tokens},          /* first: it takes priority */
    {G_MANTLE_OUT, want_mantle, draw_mantle_out},
    {G_THROTTLES, want_runtime, draw_throttles},
    {G_OFFERED, want_offered, draw_offered},
    {G_LATENCY, want_runtime, draw_latency},
    {G_OTPS, want_speed, draw_otps},
    {G_TTFT, want_speed, draw_ttft},
    {G_INFLIGHT, want_inflight, draw_inflight},
    {G_OPPOINT, want_oppoint, draw_oppoint},
};

int tui_detail_graphs(const struct bt_tui *t, int r, enum gkind *g)
{
    int n = 0;
    for (size_t i = 0; i < BT_ARRAY_LEN(gkinds) && n < BT_LAYOUT_MAX_GRAPHS; i++)
        if (gkinds[i].wanted(t, r))
            g[n++] = gkinds[i].kind;
    return n;
}

void tui_draw_graph(struct bt_tui *t, int r, enum gkind k, struct bt_rect a)
{
    struct gctx g = {.t = t, .r = r, .e = &t->evals[r], .a = a};
    g.p = (struct bt_rect){a.x + 8, a.y + 1, a.w - 9, a.h - 2};
    if (g.p.w < 8 || g.p.h < 3)
        return;
    /* one right edge for every graph: the data minute on screen (the one clock),
     * panned back by [ */
    int hist = t->host->cfg->history_minutes;
    g.end = bt_data_minute(t->host->cfg, t->host->now) - (int64_t)t->goff * 60;
    if (t->gspan > 0) { /* zoomed: span minutes over the whole width */
        g.span = t->gspan < hist ? t->gspan : hist;
        g.n = g.p.w;
    } else {
        g.n = g.p.w < hist ? g.p.w : hist;
        g.span = g.n;
    }
    if (g.n < 1)
        g.n = g.span = 1;
    if (g.span < 1)
        g.span = 1;
    g.cursor = -1;
    if (t->gcursor >= 0) { /* minutes back from the right edge -> its column */
        int64_t m = g.end - (int64_t)t->gcursor * 60;
        for (int c = g.n - 1; c >= 0 && g.cursor < 0; c--)
            if (col_minute(&g, c) <= m)
                g.cursor = c;
    }
    for (size_t i = 0; i < BT_ARRAY_LEN(gkinds); i++)
        if (gkinds[i].kind == k)
            gkinds[i].draw(&g);
}

/* Zoom (+ -), pan ([ ]) and the cursor (< >) of the detail graphs: the window is
 * minutes, not columns, so it does not depend on the terminal's width. */
void tui_graph_key(struct bt_tui *t, int action)
{
    static const int spans[] = {10, 15, 30, 60, 120, 240, 480, 720, 1440, 2880, 10080};
    int hist = t->host->cfg->history_minutes;
    int cur = t->gspan ? t->gspan : (COLS - 9 < hist ? COLS - 9 : hist);
    int n = (int)BT_ARRAY_LEN(spans);
    switch (action) {
    case BT_ACT_ZOOM_IN:
    case BT_ACT_ZOOM_OUT: {
        int next = cur;
        if (action == BT_ACT_ZOOM_IN) {
            for (int i = n - 1; i >= 0; i--)
                if (spans[i] < cur) {
                    next = spans[i];
                    break;
                }
        } else {
            for (int i = 0; i < n; i++)
                if (spans[i] > cur) {
                    next = spans[i];
                    break;
                }
            if (next > hist)
                next = hist;
        }
        if (next == cur) {
            snprintf(t->msg, sizeof t->msg, "graphs show %d min: the %s", cur,
                     action == BT_ACT_ZOOM_IN ? "closest zoom" : "whole history kept");
            return;
        }
        t->gspan = next;
        snprintf(t->msg, sizeof t->msg, "graphs: %d minutes", next);
        return;
    }
    case BT_ACT_PAN_BACK:
    case BT_ACT_PAN_FWD: {
        int step = cur / 4 > 1 ? cur / 4 : 1;
        int off = t->goff + (action == BT_ACT_PAN_BACK ? step : -step);
        if (off < 0)
            off = 0;
        if (off > hist - cur)
            off = hist - cur > 0 ? hist - cur : 0;
        if (off == t->goff) {
            snprintf(t->msg, sizeof t->msg, action == BT_ACT_PAN_FWD ? "graphs end at now"
                                                                    : "graphs at the oldest minute kept");
            return;
        }
        t->goff = off;
        if (off)
            snprintf(t->msg, sizeof t->msg, "graphs end %d min before now (] comes back)", off);
        else
            snprintf(t->msg, sizeof t->msg, "graphs end at now");
        return;
    }
    case BT_ACT_CURSOR_BACK:
        t->gcursor = t->gcursor < 0 ? 0 : t->gcursor + (cur > 120 ? cur / 60 : 1);
        if (t->gcursor >= cur)
            t->gcursor = cur - 1;
        return;
    case BT_ACT_CURSOR_FWD:
        if (t->gcursor < 0)
            snprintf(t->msg, sizeof t->msg, "no cursor: < puts one on the graphs");
        else
            t->gcursor = t->gcursor - (cur > 120 ? cur / 60 : 1);
        if (t->gcursor < 0)
            t->gcursor = -1;
        return;
    default: return;
    }
}
