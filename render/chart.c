/* Line charts with cairo: one time axis, dash patterns and symbols beside colour. */
#include "render/chart.h"

#include <cairo.h>
#include <cairo-svg.h>
#include <fontconfig/fontconfig.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/format.h"
#include "core/sanitize.h"
#include "core/util.h"

/* Okabe-Ito colours (told apart by colour-blind readers), each with its own dash
 * and symbol for monochrome print. */
static const struct bt_chart_style styles[BT_CHART_STYLES] = {
    {0.000, 0.447, 0.698, "#0072B2", {0}, 0, "solid", "circles"},
    {0.835, 0.369, 0.000, "#D55E00", {8, 4}, 2, "dashed", "squares"},
    {0.000, 0.620, 0.451, "#009E73", {2, 3}, 2, "dotted", "triangles"},
    {0.800, 0.475, 0.655, "#CC79A7", {10, 3, 2, 3}, 4, "dash-dot", "diamonds"},
    {0.902, 0.624, 0.000, "#E69F00", {14, 5}, 2, "long dashes", "crosses"},
    {0.337, 0.706, 0.914, "#56B4E9", {4, 2, 4, 6}, 4, "double dashes", "down triangles"},
    {0.200, 0.133, 0.533, "#332288", {0}, 0, "solid thin", "open circles"},
    {0.600, 0.600, 0.600, "#999999", {6, 2, 1, 2}, 4, "dash-dot grey", "plus signs"},
};
const char *const bt_chart_marker_hex = "#8B0000";
static const double marker_rgb[3] = {0.545, 0.0, 0.0};

const struct bt_chart_style *bt_chart_style(int i)
{
    return &styles[((i % BT_CHART_STYLES) + BT_CHART_STYLES) % BT_CHART_STYLES];
}

/* The dashes a series may take apart from its style (a route's sides, offered and
 * accepted): its colour and symbol say which route, the dash which figure. */
static const struct {
    double dash[4];
    int ndash;
    const char *name;
} lines[BT_CHART_LINES] = {
    {{0}, 0, "solid"}, {{8, 4}, 2, "dashed"}, {{2, 3}, 2, "dotted"}, {{10, 3, 2, 3}, 4, "dash-dot"}};

const char *bt_chart_line_name(int k)
{
    return lines[((k % BT_CHART_LINES) + BT_CHART_LINES) % BT_CHART_LINES].name;
}

static int style_of(const struct bt_chart *c, int s)
{
    return c->series[s].style > 0 ? c->series[s].style - 1 : s;
}

void bt_chart_series_look(const struct bt_chart *c, int s, const char **hex, const char **dash,
                          const char **sym)
{
    const struct bt_chart_style *st = bt_chart_style(style_of(c, s));
    *hex = st->hex;
    *dash = c->series[s].line > 0 ? bt_chart_line_name(c->series[s].line - 1) : st->dash_name;
    *sym = st->symbol;
}

enum { W = 900, PLOT_TOP = 46, PLOT_H = 190, LEFT = 72, RIGHT = 110, LEGEND_ROW = 18 };

struct frame {
    double x0, x1, y0, y1; /* plot area in pixels (y0 top) */
    double vmin, vmax;
    int64_t from;
    int n;
};

static double px(const struct frame *f, int i)
{
    return f->n <= 1 ? (f->x0 + f->x1) / 2 : f->x0 + (f->x1 - f->x0) * i / (double)(f->n - 1);
}

static double py(const struct frame *f, double v)
{
    return f->y1 - (f->y1 - f->y0) * (v - f->vmin) / (f->vmax - f->vmin);
}

static double nice_step(double range, int ticks)
{
    double raw = range / ticks, mag = pow(10, floor(log10(raw))), r = raw / mag;
    return (r <= 1 ? 1 : r <= 2 ? 2 : r <= 2.5 ? 2.5 : r <= 5 ? 5 : 10) * mag;
}

static void value_range(const struct bt_chart *c, double *lo, double *hi)
{
    *lo = INFINITY;
    *hi = -INFINITY;
    for (int s = 0; s < c->nseries; s++) {
        for (int i = 0; i < c->n; i++) {
            double v = c->series[s].v[i];
            if (isnan(v) || isinf(v))
                continue;
            *lo = v < *lo ? v : *lo;
            *hi = v > *hi ? v : *hi;
        }
    }
    for (int h = 0; h < c->nhline; h++) {
        double v = c->hline[h].value;
        if (!isnan(v) && !isinf(v)) {
            *lo = v < *lo ? v : *lo;
            *hi = v > *hi ? v : *hi;
        }
    }
    if (isinf(*lo)) { /* nothing known */
        *lo = 0;
        *hi = 1;
    }
    if (c->zero_based && *lo > 0)
        *lo = 0;
    if (c->pct && *hi < 100)
        *hi = 100;
    if (*hi - *lo < 1e-9)
        *hi = *lo + 1;
    double step = nice_step(*hi - *lo, 5), top = *hi;
    *lo = floor(*lo / step) * step;
    *hi = ceil(*hi / step) * step;
    /* a peak on the frame's top edge reads as cut off: room above it (a percentage
     * keeps its 100 %) */
    if (!c->pct && top > *hi - step / 20)
        *hi += step;
}

/* Every text reaches cairo here, as valid UTF-8: a route name from a recording may be
 * anything, and cairo refuses invalid UTF-8 (the whole chart with it). */
static void text_at(cairo_t *cr, double x, double y, const char *s, double align)
{
    struct bt_buf t = {0};
    bt_san_utf8_buf(&t, s);
    cairo_text_extents_t ex;
    cairo_text_extents(cr, bt_buf_str(&t), &ex);
    cairo_move_to(cr, x - align * ex.x_advance, y);
    cairo_show_text(cr, bt_buf_str(&t));
    bt_buf_free(&t);
}

static void axis_label(double v, char *out, size_t n)
{
    if (fabs(v) >= 1000)
        bt_fmt_tokens(v, out, n);
    else
        bt_fmt_plain(v, 1, out, n);
}

static void draw_axes(cairo_t *cr, const struct bt_chart *c, const struct frame *f)
{
    cairo_set_source_rgb(cr, 0, 0, 0);
    cairo_set_font_size(cr, 13);
    text_at(cr, f->x0, 20, c->title, 0);
    cairo_set_font_size(cr, 10);
    /* horizontal grid and y labels */
    double step = nice_step(f->vmax - f->vmin, 5);
    cairo_set_line_width(cr, 0.5);
    cairo_set_source_rgb(cr, 0.85, 0.85, 0.85);
    for (double v = f->vmin; v <= f->vmax + step / 2; v += step) {
        cairo_move_to(cr, f->x0, round(py(f, v)) + 0.5);
        cairo_line_to(cr, f->x1, round(py(f, v)) + 0.5);
    }
    cairo_stroke(cr);
    cairo_set_source_rgb(cr, 0, 0, 0);
    for (double v = f->vmin; v <= f->vmax + step / 2; v += step) {
        char l[BT_FMT_LONG];
        axis_label(fabs(v) < step / 1e6 ? 0 : v, l, sizeof l);
        text_at(cr, f->x0 - 6, py(f, v) + 3.5, l, 1);
    }
    cairo_save(cr);
    cairo_translate(cr, 14, (f->y0 + f->y1) / 2);
    cairo_rotate(cr, -M_PI / 2);
    text_at(cr, 0, 0, c->unit, 0.5);
    cairo_restore(cr);
    /* the time axis: the same ticks on every chart of the report */
    static const int steps[] = {1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1440, 2880, 10080};
    int tick = steps[BT_ARRAY_LEN(steps) - 1];
    for (size_t k = 0; k < BT_ARRAY_LEN(steps); k++) {
        if (f->n / steps[k] <= 10) {
            tick = steps[k];
            break;
        }
    }
    bool days = (int64_t)f->n * 60 > 86400;
    cairo_set_line_width(cr, 1);
    for (int i = 0; i < f->n; i++) {
        int64_t m = f->from + 60 * (int64_t)i;
        if ((m / 60) % tick)
            continue;
        double x = round(px(f, i)) + 0.5;
        cairo_move_to(cr, x, f->y1);
        cairo_line_to(cr, x, f->y1 + 4);
        char l[32], iso[32];
        bt_fmt_iso(m, iso, sizeof iso);
        if (days)
            snprintf(l, sizeof l, "%.5s %.5s", iso + 5, iso + 11);
        else
            snprintf(l, sizeof l, "%.5s", iso + 11);
        text_at(cr, x, f->y1 + 15, l, 0.5);
    }
    cairo_stroke(cr);
    text_at(cr, f->x1, f->y1 + 28, "UTC, CloudWatch data minute", 1);
    cairo_rectangle(cr, f->x0 + 0.5, f->y0 + 0.5, f->x1 - f->x0, f->y1 - f->y0);
    cairo_stroke(cr);
}

static void symbol(cairo_t *cr, int kind, double x, double y)
{
    const double s = 3.2;
    switch (kind % BT_CHART_STYLES) {
    case 0: cairo_new_sub_path(cr); cairo_arc(cr, x, y, s, 0, 2 * M_PI); break;
    case 1: cairo_rectangle(cr, x - s, y - s, 2 * s, 2 * s); break;
    case 2: cairo_move_to(cr, x, y - s - 1); cairo_line_to(cr, x + s + 1, y + s);
            cairo_line_to(cr, x - s - 1, y + s); cairo_close_path(cr); break;
    case 3: cairo_move_to(cr, x, y - s - 1); cairo_line_to(cr, x + s + 1, y);
            cairo_line_to(cr, x, y + s + 1); cairo_line_to(cr, x - s - 1, y); cairo_close_path(cr); break;
    case 4: cairo_rectangle(cr, x - s, y - 1, 2 * s, 2); cairo_rectangle(cr, x - 1, y - s, 2, 2 * s); break;
    case 5: cairo_move_to(cr, x, y + s + 1); cairo_line_to(cr, x + s + 1, y - s);
            cairo_line_to(cr, x - s - 1, y - s); cairo_close_path(cr); break;
    case 6: cairo_new_sub_path(cr); cairo_arc(cr, x, y, s, 0, 2 * M_PI);
            cairo_new_sub_path(cr); cairo_arc_negative(cr, x, y, s - 1.4, 2 * M_PI, 0); break;
    default: cairo_rectangle(cr, x - s, y - 0.8, 2 * s, 1.6); cairo_rectangle(cr, x - 0.8, y - s, 1.6, 2 * s); break;
    }
}

static void set_style(cairo_t *cr, const struct bt_chart *c, int s)
{
    int i = style_of(c, s), ln = c->series[s].line;
    const struct bt_chart_style *st = bt_chart_style(i);
    cairo_set_source_rgb(cr, st->r, st->g, st->b);
    cairo_set_line_width(cr, i % BT_CHART_STYLES == 6 ? 1.2 : 2);
    if (ln > 0) {
        int k = (ln - 1) % BT_CHART_LINES;
        cairo_set_dash(cr, lines[k].dash, lines[k].ndash, 0);
    } else {
        cairo_set_dash(cr, st->dash, st->ndash, 0);
    }
}

static const double bound_grey = 0.2; /* the bound arrows: no series' colour */

/* A bound's arrow from the point: down for "at most", up for "at least". */
static void bound_arrow(cairo_t *cr, double x, double y, bool at_most)
{
    double d = at_most ? 1 : -1, a = y + d * 5, b = y + d * 13;
    cairo_move_to(cr, x, a);
    cairo_line_to(cr, x, b);
    cairo_move_to(cr, x - 3, b - d * 3.5);
    cairo_line_to(cr, x, b);
    cairo_line_to(cr, x + 3, b - d * 3.5);
}

static bool has_bounds(const struct bt_chart *c)
{
    for (int s = 0; s < c->nseries; s++)
        for (int i = 0; c->series[s].bound && i < c->n; i++)
            if (c->series[s].bound[i] != BT_CHART_KNOWN && !isnan(c->series[s].v[i]))
                return true;
    return false;
}

static void draw_series(cairo_t *cr, const struct bt_chart *c, const struct frame *f, int s)
{
    const struct bt_chart_series *se = &c->series[s];
    int sym = style_of(c, s);
    set_style(cr, c, s);
    cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
    /* one stroke: a gap (no data) starts a new sub-path */
    bool pen = false;
    for (int i = 0; i < c->n; i++) {
        double v = se->v[i];
        if (isnan(v) || isinf(v)) {
            pen = false;
            continue;
        }
        if (pen)
            cairo_line_to(cr, px(f, i), py(f, v));
        else
            cairo_move_to(cr, px(f, i), py(f, v));
        pen = true;
    }
    cairo_stroke(cr);
    /* symbols every few minutes, offset per series so that they do not sit on each other */
    cairo_set_dash(cr, NULL, 0, 0);
    int every = c->n / 15 > 1 ? c->n / 15 : 1;
    for (int i = s % every; i < c->n; i += every) {
        double v = se->v[i];
        if (!isnan(v) && !isinf(v))
            symbol(cr, sym, px(f, i), py(f, v));
    }
    cairo_fill(cr);
    /* bounds: an arrow at each bound minute (every few where they are dense) */
    if (!se->bound)
        return;
    cairo_set_source_rgb(cr, bound_grey, bound_grey, bound_grey);
    cairo_set_line_width(cr, 1.2);
    /* at most about 15 a series, and the first minute of every run of bounds (a short
     * one is never left unmarked) */
    int ab = c->n / 15 > 1 ? c->n / 15 : 1;
    bool any = false;
    for (int i = 0; i < c->n; i++) {
        double v = se->v[i];
        bool starts = i == 0 || se->bound[i - 1] != se->bound[i];
        if (isnan(v) || isinf(v) || se->bound[i] == BT_CHART_KNOWN || (i % ab && !starts))
            continue;
        bound_arrow(cr, px(f, i), py(f, v), se->bound[i] == BT_CHART_AT_MOST);
        any = true;
    }
    if (any)
        cairo_stroke(cr);
}

/* Reference lines (the quota, thresholds), labelled right of the plot; a label
 * that would touch the one above it moves down. */
static void draw_hlines(cairo_t *cr, const struct bt_chart *c, const struct frame *f)
{
    static const double dash[] = {3, 3};
    int order[BT_CHART_MAX_HLINES], n = 0;
    for (int h = 0; h < c->nhline; h++) {
        double v = c->hline[h].value;
        if (isnan(v) || v < f->vmin || v > f->vmax)
            continue;
        int j = n++;
        for (; j > 0 && c->hline[order[j - 1]].value < v; j--)
            order[j] = order[j - 1];
        order[j] = h;
    }
    cairo_set_font_size(cr, 10);
    double last = -INFINITY;
    for (int k = 0; k < n; k++) {
        int h = order[k];
        double v = c->hline[h].value;
        double g = h == 0 ? 0.25 : 0.45;
        cairo_set_source_rgb(cr, g, g, g);
        cairo_set_line_width(cr, h == 0 ? 1.5 : 1);
        cairo_set_dash(cr, h == 0 ? NULL : dash, h == 0 ? 0 : 2, 0);
        cairo_move_to(cr, f->x0, round(py(f, v)) + 0.5);
        cairo_line_to(cr, f->x1, round(py(f, v)) + 0.5);
        cairo_stroke(cr);
        double y = py(f, v) + 3.5;
        if (y < last + 11)
            y = last + 11;
        last = y;
        text_at(cr, f->x1 + 5, y, c->hline[h].label, 0);
    }
    cairo_set_dash(cr, NULL, 0, 0);
}

/* Marker lines across the plot, their labels above its top edge (never on a
 * series), moved right when they would touch the previous one. */
static void draw_markers(cairo_t *cr, const struct bt_chart *c, const struct frame *f)
{
    static const double dash[] = {6, 3};
    cairo_set_font_size(cr, 10);
    double last_end = -INFINITY;
    for (int k = 0; k < c->nmarkers; k++) {
        int64_t i = (c->markers[k] - f->from) / 60;
        if (i < 0 || i >= f->n)
            continue;
        double x = round(px(f, (int)i)) + 0.5;
        cairo_set_source_rgb(cr, marker_rgb[0], marker_rgb[1], marker_rgb[2]);
        cairo_set_line_width(cr, 1.2);
        cairo_set_dash(cr, dash, 2, 0);
        cairo_move_to(cr, x, f->y0 - 3);
        cairo_line_to(cr, x, f->y1);
        cairo_stroke(cr);
        cairo_set_dash(cr, NULL, 0, 0);
        char l[16];
        snprintf(l, sizeof l, "M%d", k + 1);
        cairo_text_extents_t ex;
        cairo_text_extents(cr, l, &ex);
        double lx = x - ex.x_advance / 2;
        if (lx < last_end + 3)
            lx = last_end + 3;
        last_end = lx + ex.x_advance;
        cairo_move_to(cr, lx, f->y0 - 5);
        cairo_show_text(cr, l);
    }
}

/* Legend columns: three where every label fits a third of the plot's width (at
 * about 6 px a character of the 10 px font), else two, else one. */
static int legend_cols(const struct bt_chart *c)
{
    size_t longest = 0;
    for (int s = 0; s < c->nseries; s++) {
        size_t n = strlen(c->series[s].label);
        longest = n > longest ? n : longest;
    }
    return longest <= 32 ? 3 : longest <= 52 ? 2 : 1;
}

static int legend_rows(const struct bt_chart *c)
{
    int cols = legend_cols(c);
    int notes = c->nmarkers > 0 && c->marker_notes ? c->nmarkers : 0;
    return (c->nseries + cols - 1) / cols + (has_bounds(c) ? 1 : 0) + notes;
}

static void draw_legend(cairo_t *cr, const struct bt_chart *c, const struct frame *f)
{
    cairo_set_font_size(cr, 10);
    int cols = legend_cols(c);
    double colw = (f->x1 - f->x0) / cols;
    for (int s = 0; s < c->nseries; s++) {
        double x = f->x0 + colw * (s % cols), y = f->y1 + 46 + LEGEND_ROW * (s / cols);
        set_style(cr, c, s);
        cairo_move_to(cr, x, y - 4);
        cairo_line_to(cr, x + 34, y - 4);
        cairo_stroke(cr);
        cairo_set_dash(cr, NULL, 0, 0);
        symbol(cr, style_of(c, s), x + 17, y - 4);
        cairo_fill(cr);
        cairo_set_source_rgb(cr, 0, 0, 0);
        text_at(cr, x + 40, y, c->series[s].label, 0);
    }
    double y = f->y1 + 46 + LEGEND_ROW * ((c->nseries + cols - 1) / cols);
    if (has_bounds(c)) {
        cairo_set_source_rgb(cr, bound_grey, bound_grey, bound_grey);
        cairo_set_line_width(cr, 1.2);
        bound_arrow(cr, f->x0 + 10, y - 10, true);
        bound_arrow(cr, f->x0 + 24, y + 4, false);
        cairo_stroke(cr);
        cairo_set_source_rgb(cr, 0, 0, 0);
        text_at(cr, f->x0 + 40, y, "a bound, not a known value: arrow down = at most (upper bound), "
                                   "arrow up = at least (lower bound)", 0);
        y += LEGEND_ROW;
    }
    for (int k = 0; c->marker_notes && k < c->nmarkers; k++) {
        char l[400], iso[32];
        bt_fmt_iso(c->markers[k], iso, sizeof iso);
        bt_fmt_cut(l, sizeof l, "M%d  %.5s  %s", k + 1, iso + 11,
                   c->marker_notes[k] ? c->marker_notes[k] : "");
        cairo_set_source_rgb(cr, marker_rgb[0], marker_rgb[1], marker_rgb[2]);
        text_at(cr, f->x0, y, l, 0);
        y += LEGEND_ROW;
    }
}

static int chart_height(const struct bt_chart *c)
{
    return PLOT_TOP + PLOT_H + 40 + LEGEND_ROW * legend_rows(c) + 8;
}

static void draw(cairo_t *cr, const struct bt_chart *c)
{
    struct frame f = {.x0 = LEFT, .x1 = W - RIGHT, .y0 = PLOT_TOP, .y1 = PLOT_TOP + PLOT_H,
                      .from = c->from, .n = c->n};
    value_range(c, &f.vmin, &f.vmax);
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_paint(cr);
    cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    draw_axes(cr, c, &f);
    draw_hlines(cr, c, &f);
    cairo_save(cr);
    cairo_rectangle(cr, f.x0, f.y0 - 4, f.x1 - f.x0, f.y1 - f.y0 + 8);
    cairo_clip(cr);
    for (int s = 0; s < c->nseries; s++)
        draw_series(cr, c, &f, s);
    cairo_restore(cr);
    draw_markers(cr, c, &f);
    draw_legend(cr, c, &f);
}

void bt_chart_free(struct bt_chart *c)
{
    for (int s = 0; s < c->nseries; s++) {
        free(c->series[s].v);
        free(c->series[s].bound);
    }
    c->nseries = 0;
}

void bt_chart_shutdown(void)
{
    cairo_debug_reset_static_data();
    FcFini();
}

static cairo_status_t to_buf(void *closure, const unsigned char *data, unsigned int len)
{
    bt_buf_add(closure, data, len);
    return CAIRO_STATUS_SUCCESS;
}

static bool finish(cairo_t *cr, cairo_surface_t *sf, const char *what, char *err, size_t errlen)
{
    cairo_status_t st = cairo_status(cr);
    cairo_destroy(cr);
    cairo_surface_finish(sf);
    if (st == CAIRO_STATUS_SUCCESS)
        st = cairo_surface_status(sf);
    if (st != CAIRO_STATUS_SUCCESS)
        snprintf(err, errlen, "%s: cairo: %s", what, cairo_status_to_string(st));
    return st == CAIRO_STATUS_SUCCESS;
}

bool bt_chart_svg(const struct bt_chart *c, struct bt_buf *out, char *err, size_t errlen)
{
    cairo_surface_t *sf = cairo_svg_surface_create_for_stream(to_buf, out, W, chart_height(c));
    cairo_t *cr = cairo_create(sf);
    draw(cr, c);
    bool ok = finish(cr, sf, "svg", err, errlen);
    cairo_surface_destroy(sf);
    return ok;
}

bool bt_chart_png(const struct bt_chart *c, struct bt_buf *out, char *err, size_t errlen)
{
    cairo_surface_t *sf = cairo_image_surface_create(CAIRO_FORMAT_RGB24, 2 * W, 2 * chart_height(c));
    cairo_t *cr = cairo_create(sf);
    cairo_scale(cr, 2, 2);
    draw(cr, c);
    cairo_status_t st = cairo_status(cr);
    cairo_destroy(cr);
    if (st == CAIRO_STATUS_SUCCESS)
        st = cairo_surface_write_to_png_stream(sf, to_buf, out);
    cairo_surface_destroy(sf);
    if (st != CAIRO_STATUS_SUCCESS)
        snprintf(err, errlen, "png: cairo: %s", cairo_status_to_string(st));
    return st == CAIRO_STATUS_SUCCESS;
}
