/* The route detail's graphs, one kind each. */
#include "tui/view.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/headroom.h"
#include "core/oppoint.h"
#include "core/util.h"
#include "tui/graph.h"

int tui_detail_graphs(const struct bt_tui *t, int r, enum gkind *g)
{
    const struct bt_eval *e = &t->evals[r];
    const struct bt_store *st = t->host->store;
    int n = 0;
    g[n++] = G_TOKENS;
    if (e->mantle)
        g[n++] = G_MANTLE_OUT;
    else {
        g[n++] = G_THROTTLES;
        g[n++] = G_LATENCY;
    }
    int64_t am = bt_store_newest(st, r, BT_SIG_ADM_IN_FLIGHT, t->host->now);
    if (am || !isnan(e->in_flight))
        g[n++] = G_INFLIGHT;
    if (am && bt_store_newest(st, r, BT_SIG_ADM_COMPLETED, t->host->now))
        g[n++] = G_OPPOINT;
    return n;
}

/* A per-minute value of a derived series at minute m. */
enum skind { S_SETTLED, S_ESTIMATED, S_RESERVED, S_THROTTLES, S_P50, S_P99, S_INFLIGHT,
             S_COMPLETED, S_INPUT, S_OUTPUT };

static double series_at(const struct bt_tui *t, int r, enum skind k, int64_t m)
{
    const struct bt_store *st = t->host->store;
    const struct bt_route *rt = &t->host->cfg->routes[r];
    const struct bt_eval *e = &t->evals[r];
    switch (k) {
    case S_SETTLED: {
        double in = bt_store_at(st, r, BT_SIG_INPUT_TOKENS, m);
        double cw = bt_store_at(st, r, BT_SIG_CACHE_WRITE, m);
        double out = bt_store_at(st, r, BT_SIG_OUTPUT_TOKENS, m);
        if (isnan(in) && isnan(out))
            return NAN;
        return bt_settled_tpm(isnan(in) ? 0 : in, isnan(cw) ? 0 : cw, isnan(out) ? 0 : out,
                              rt->burndown);
    }
    case S_ESTIMATED: return bt_store_at(st, r, BT_SIG_ESTIMATED_TPM, m);
    case S_RESERVED: {
        /* counters where scraped, else the max_tokens reading of DESIGN.md */
        double adm = bt_store_at(st, r, BT_SIG_ADM_RESERVED, m);
        if (!isnan(adm))
            return adm;
        double mt = e->max_tokens;
        double inv = bt_store_at(st, r, BT_SIG_INVOCATIONS, m);
        if (isnan(mt) || isnan(inv))
            return NAN;
        double in = bt_store_at(st, r, BT_SIG_INPUT_TOKENS, m);
        double cw = bt_store_at(st, r, BT_SIG_CACHE_WRITE, m);
        return (isnan(in) ? 0 : in) + (isnan(cw) ? 0 : cw) + inv * mt;
    }
    case S_THROTTLES: return bt_store_at(st, r, BT_SIG_THROTTLES, m);
    case S_P50: return bt_store_at(st, r, BT_SIG_LATENCY_P50, m);
    case S_P99: return bt_store_at(st, r, BT_SIG_LATENCY_P99, m);
    case S_INFLIGHT: return bt_store_at(st, r, BT_SIG_ADM_IN_FLIGHT, m);
    case S_COMPLETED: return bt_store_at(st, r, BT_SIG_ADM_COMPLETED, m);
    case S_INPUT: return bt_store_at(st, r, BT_SIG_INPUT_TOKENS, m);
    case S_OUTPUT: return bt_store_at(st, r, BT_SIG_OUTPUT_TOKENS, m);
    }
    return NAN;
}

static void fill_series(const struct bt_tui *t, int r, enum skind k, int64_t end, int n, double *v)
{
    for (int i = 0; i < n; i++)
        v[i] = series_at(t, r, k, end - (int64_t)(n - 1 - i) * 60);
}

/* Rounds an axis maximum up to two significant digits (350.8 -> 360). */
static double axis_max(double v)
{
    if (!(v > 0) || isinf(v))
        return 1;
    double step = pow(10, floor(log10(v)) - 1);
    return ceil(v / step - 1e-9) * step;
}

static double vmax(const double *v, int n, double m)
{
    for (int i = 0; i < n; i++)
        if (!isnan(v[i]) && v[i] > m)
            m = v[i];
    return m;
}

/* Draws "label value" legend items after a graph title; returns the new x. */
static int legend(const struct bt_tui *t, int y, int x, int xmax, enum bt_role role,
                  uint32_t g, const char *label)
{
    if (x + 3 + (int)strlen(label) >= xmax)
        return x;
    tui_glyph(y, x, g, A(t, role));
    x += 1;
    x += tui_text(y, x, xmax - x, label, A(t, BT_ROLE_TITLE));
    return x + 1;
}

/* Frame common to line/bar graphs: title rule, y labels, x axis; returns the plot area. */
static struct bt_rect graph_frame(const struct bt_tui *t, struct bt_rect a, const char *title,
                                  double ymax, int64_t start, int64_t end, bool time_axis)
{
    tui_rule(t, a.y, a.x, a.w, title);
    struct bt_rect p = {a.x + 7, a.y + 1, a.w - 8, a.h - 2};
    ymax = axis_max(ymax);
    char lab[16];
    bt_fmt_si(ymax, lab, sizeof lab);
    tui_text(p.y, a.x, 6, lab, A(t, BT_ROLE_AXIS));
    tui_text(p.y + p.h - 1, a.x, 6, "0", A(t, BT_ROLE_AXIS));
    int ay = a.y + a.h - 1;
    if (time_axis) {
        char s1[16], s2[16];
        bt_fmt_hhmm(start, s1, sizeof s1);
        bt_fmt_hhmm(end, s2, sizeof s2);
        tui_text(ay, p.x, 5, s1, A(t, BT_ROLE_AXIS));
        if (p.w > 12)
            tui_text(ay, p.x + p.w - 5, 5, s2, A(t, BT_ROLE_AXIS));
    }
    return p;
}

void tui_draw_graph(struct bt_tui *t, int r, enum gkind g, struct bt_rect a)
{
    const struct bt_eval *e = &t->evals[r];
    int64_t end = e->minute ? e->minute : bt_minute_floor(t->host->now) - 120;
    if (g == G_INFLIGHT || g == G_OPPOINT)
        end = e->adm_minute ? bt_minute_floor(e->adm_minute) : end;
    int pw = a.w - 8;
    if (pw < 4 || a.h < 3)
        return;
    int npts = bt_graph_points(pw, t->utf8);
    if (npts > t->host->cfg->history_minutes)
        npts = t->host->cfg->history_minutes;
    if (npts < 1)
        npts = 1;
    int64_t start = end - (int64_t)(npts - 1) * 60;
    double *v1 = bt_xcalloc((size_t)npts, sizeof(double));
    double *v2 = bt_xcalloc((size_t)npts, sizeof(double));
    double *v3 = bt_xcalloc((size_t)npts, sizeof(double));
    struct bt_canvas cv;
    char title[160], s1[16], s2[16], s3[16];
    struct bt_rect p;
    uint32_t lg = t->utf8 ? 0x2501 : '*';
    switch (g) {
    case G_TOKENS: {
        double quota = e->mantle ? e->in_quota : e->quota;
        if (e->mantle) {
            fill_series(t, r, S_INPUT, end, npts, v1);
            for (int i = 0; i < npts; i++) {
                double inv = series_at(t, r, S_INPUT, start + i * 60);
                double calls = bt_store_at(t->host->store, r, BT_SIG_INVOCATIONS, start + i * 60);
                v3[i] = isnan(inv) || isnan(calls) || isnan(e->max_tokens)
                            ? NAN : inv + calls * e->max_tokens;
                v2[i] = NAN;
            }
        } else {
            fill_series(t, r, S_SETTLED, end, npts, v1);
            fill_series(t, r, S_ESTIMATED, end, npts, v2);
            fill_series(t, r, S_RESERVED, end, npts, v3);
        }
        double ymax = vmax(v1, npts, vmax(v2, npts, vmax(v3, npts, isnan(quota) ? 1 : quota)));
        ymax = axis_max(ymax * 1.1);
        snprintf(title, sizeof title, e->mantle ? "input tokens/min" : "tokens/min");
        p = graph_frame(t, a, title, ymax, start, end, true);
        bt_canvas_init(&cv, p.w, p.h);
        struct bt_plot_series s[] = {
            {BT_SER_LEVEL, NULL, 0, quota, BT_ROLE_QUOTA, '-'},
            {BT_SER_LINE, v3, npts, 0, BT_ROLE_RESERVED, 'x'},
            {BT_SER_LINE, v2, npts, 0, BT_ROLE_ESTIMATED, '+'},
            {BT_SER_LINE, v1, npts, 0, BT_ROLE_SETTLED, '*'},
        };
        bt_graph_plot(&cv, 0, 0, p.w, p.h, s, 4, ymax, t->utf8);
        int x = a.x + 4 + (int)strlen(title) + 1, xm = a.x + a.w - 1;
        bt_fmt_si(e->mantle ? e->input_tokens : e->settled, s1, sizeof s1);
        bt_fmt_si(e->estimated, s2, sizeof s2);
        bt_fmt_si(e->mantle ? e->in_used : e->reserved, s3, sizeof s3);
        char lab[64];
        snprintf(lab, sizeof lab, "%s %s", e->mantle ? "input" : "settled", s1);
        x = legend(t, a.y, x, xm, BT_ROLE_SETTLED, t->utf8 ? lg : '*', lab);
        if (!e->mantle) {
            snprintf(lab, sizeof lab, "est %s", s2);
            x = legend(t, a.y, x, xm, BT_ROLE_ESTIMATED, t->utf8 ? lg : '+', lab);
        }
        snprintf(lab, sizeof lab, "reserved %s", s3);
        x = legend(t, a.y, x, xm, BT_ROLE_RESERVED, t->utf8 ? lg : 'x', lab);
        bt_fmt_si(quota, s1, sizeof s1);
        snprintf(lab, sizeof lab, "quota %s", s1);
        legend(t, a.y, x, xm, BT_ROLE_QUOTA, '-', lab);
        break;
    }
    case G_MANTLE_OUT: {
        fill_series(t, r, S_OUTPUT, end, npts, v1);
        double ymax = axis_max(vmax(v1, npts, isnan(e->out_quota) ? 1 : e->out_quota) * 1.1);
        bt_fmt_si(e->out_quota, s1, sizeof s1);
        bt_fmt_si(e->out_used, s2, sizeof s2);
        snprintf(title, sizeof title, "output tokens/min %s vs output quota %s", s2, s1);
        p = graph_frame(t, a, title, ymax, start, end, true);
        bt_canvas_init(&cv, p.w, p.h);
        struct bt_plot_series s[] = {
            {BT_SER_LEVEL, NULL, 0, e->out_quota, BT_ROLE_QUOTA, '-'},
            {BT_SER_LINE, v1, npts, 0, BT_ROLE_SETTLED, '*'},
        };
        bt_graph_plot(&cv, 0, 0, p.w, p.h, s, 2, ymax, t->utf8);
        break;
    }
    case G_THROTTLES: {
        int nb = pw < t->host->cfg->history_minutes ? pw : t->host->cfg->history_minutes;
        start = end - (int64_t)(nb - 1) * 60;
        fill_series(t, r, S_THROTTLES, end, nb, v1);
        double ymax = axis_max(vmax(v1, nb, 1));
        bt_fmt_si(e->throttles, s1, sizeof s1);
        snprintf(title, sizeof title, "throttles/min %s", s1);
        p = graph_frame(t, a, title, ymax, start, end, true);
        bt_canvas_init(&cv, p.w, p.h);
        bt_graph_bars(&cv, 0, 0, p.w, p.h, v1, nb, ymax, BT_ROLE_THROTTLE, t->utf8);
        break;
    }
    case G_LATENCY: {
        fill_series(t, r, S_P50, end, npts, v1);
        fill_series(t, r, S_P99, end, npts, v2);
        double ymax = axis_max(vmax(v2, npts, vmax(v1, npts, 1)) * 1.1);
        snprintf(title, sizeof title, "latency ms");
        p = graph_frame(t, a, title, ymax, start, end, true);
        bt_canvas_init(&cv, p.w, p.h);
        struct bt_plot_series s[] = {
            {BT_SER_LINE, v2, npts, 0, BT_ROLE_P99, '*'},
            {BT_SER_LINE, v1, npts, 0, BT_ROLE_P50, 'o'},
        };
        bt_graph_plot(&cv, 0, 0, p.w, p.h, s, 2, ymax, t->utf8);
        int x = a.x + 4 + (int)strlen(title) + 1, xm = a.x + a.w - 1;
        char lab[32];
        tui_fmt_ms(e->lat_p50, s1, sizeof s1);
        snprintf(lab, sizeof lab, "p50 %s", s1);
        x = legend(t, a.y, x, xm, BT_ROLE_P50, t->utf8 ? lg : 'o', lab);
        tui_fmt_ms(e->lat_p99, s1, sizeof s1);
        snprintf(lab, sizeof lab, "p99 %s", s1);
        legend(t, a.y, x, xm, BT_ROLE_P99, t->utf8 ? lg : '*', lab);
        break;
    }
    case G_INFLIGHT: {
        fill_series(t, r, S_INFLIGHT, end, npts, v1);
        double lim = e->conc_limit;
        double ymax = axis_max(vmax(v1, npts, isnan(lim) ? 1 : lim) * 1.2);
        bt_fmt_si(e->in_flight, s1, sizeof s1);
        bt_fmt_si(lim, s2, sizeof s2);
        snprintf(title, sizeof title, "in flight %s vs limit %s", s1, s2);
        p = graph_frame(t, a, title, ymax, start, end, true);
        bt_canvas_init(&cv, p.w, p.h);
        struct bt_plot_series s[] = {
            {BT_SER_LEVEL, NULL, 0, lim, BT_ROLE_LIMIT, '-'},
            {BT_SER_LINE, v1, npts, 0, BT_ROLE_INFLIGHT, '*'},
        };
        bt_graph_plot(&cv, 0, 0, p.w, p.h, s, 2, ymax, t->utf8);
        break;
    }
    case G_OPPOINT: {
        /* every minute of the history window: completions against calls in flight */
        int hist = t->host->cfg->history_minutes;
        double *xs = bt_xcalloc((size_t)hist + 1, sizeof(double));
        double *ys = bt_xcalloc((size_t)hist + 1, sizeof(double));
        int n = 0;
        double xmax = 1, ymx = 1;
        for (int i = 0; i < hist; i++) {
            int64_t m = end - (int64_t)i * 60;
            double x = series_at(t, r, S_INFLIGHT, m), yv = series_at(t, r, S_COMPLETED, m);
            if (isnan(x) || isnan(yv))
                continue;
            xs[n] = x;
            ys[n] = yv;
            n++;
            xmax = x > xmax ? x : xmax;
            ymx = yv > ymx ? yv : ymx;
        }
        struct bt_oppoint op;
        bt_oppoint_compute(xs, ys, n, &op);
        bool plateau = op.enough && op.plateau;
        double knee = op.knee;
        if (plateau)
            snprintf(title, sizeof title, "operating point: completions/min vs in flight; "
                     "flat beyond %.0f in flight", knee);
        else if (op.enough)
            snprintf(title, sizeof title, "operating point: completions/min vs in flight; "
                     "no plateau seen");
        else
            snprintf(title, sizeof title, "operating point: not enough data yet (%d minutes "
                     "at %d in-flight levels)", op.points, op.levels);
        xmax = axis_max(xmax * 1.1);
        ymx = axis_max(ymx * 1.15);
        p = graph_frame(t, a, title, ymx, 0, 0, false);
        char lab[32];
        bt_fmt_si(xmax, lab, sizeof lab);
        int ay = a.y + a.h - 1;
        tui_text(ay, p.x, 1, "0", A(t, BT_ROLE_AXIS));
        if (p.w > 20) {
            char axis[48];
            snprintf(axis, sizeof axis, "in flight %s", lab);
            tui_text(ay, p.x + p.w - (int)strlen(axis), (int)strlen(axis), axis, A(t, BT_ROLE_AXIS));
        }
        bt_canvas_init(&cv, p.w, p.h);
        bt_graph_scatter(&cv, 0, 0, p.w, p.h, xs, ys, n, xmax, ymx, BT_ROLE_SETTLED,
                         plateau ? knee : NAN, BT_ROLE_KNEE, t->utf8);
        free(xs);
        free(ys);
        break;
    }
    default:
        free(v1);
        free(v2);
        free(v3);
        return;
    }
    tui_blit(t, &cv, p.y, p.x);
    bt_canvas_free(&cv);
    free(v1);
    free(v2);
    free(v3);
}
