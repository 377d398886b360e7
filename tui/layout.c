#include "tui/layout.h"

#include <string.h>

/* Priority says what an engineer gives up last: headroom and status never go;
 * the reservation split and throttles before identity columns (htop drops
 * columns the same way as the width shrinks). */
const struct bt_col_info bt_col_info[BT_COL_COUNT] = {
    [BT_COL_NAME] = {"ROUTE", 11, 11, 0, false},
    [BT_COL_MODEL] = {"MODEL", 24, 44, 13, false},
    [BT_COL_REGION] = {"REGION", 9, 9, 14, false},
    [BT_COL_EP] = {"EP", 7, 7, 16, false},
    [BT_COL_INF] = {"INFERENCE", 12, 12, 15, false},
    [BT_COL_STATUS] = {"ST", 4, 4, 0, false},
    [BT_COL_HEADPCT] = {"HEAD%", 6, 6, 0, true},
    [BT_COL_BAR] = {"USED/QUOTA", 12, 40, 0, false},
    [BT_COL_FITS] = {"FITS", 8, 8, 7, true},
    [BT_COL_SETTLED] = {"SETTLD", 6, 6, 3, true},
    [BT_COL_ESTIMATED] = {"ESTIM", 6, 6, 2, true},
    [BT_COL_RESERVED] = {"HELD", 6, 6, 1, true},
    [BT_COL_QUOTA] = {"QUOTA SRC", 10, 10, 5, false},
    [BT_COL_RPM] = {"INV/m", 5, 5, 10, true},
    [BT_COL_THR] = {"THR/m", 5, 5, 4, true},
    [BT_COL_P50] = {"P50", 5, 5, 11, true},
    [BT_COL_P99] = {"P99", 5, 5, 7, true},
    [BT_COL_INFL] = {"INFL", 5, 5, 6, true},
    [BT_COL_TREND] = {"USED 30m", 12, 30, 16, false},
    [BT_COL_WARN] = {"WARNINGS", 14, 60, 8, false},
};

static struct bt_rect rect(int x, int y, int w, int h)
{
    if (w < 0)
        w = 0;
    if (h < 0)
        h = 0;
    return (struct bt_rect){x, y, w, h};
}

static int imin(int a, int b)
{
    return a < b ? a : b;
}

static int imax(int a, int b)
{
    return a > b ? a : b;
}

/* Chooses columns by priority (greedy, each needs width + one separator),
 * then hands the spare width to the flexible columns in a fixed order. */
static void columns(int width, struct bt_layout *l)
{
    bool on[BT_COL_COUNT] = {false};
    int used = -1; /* n columns take n-1 separators */
    l->mandatory_w = -1;
    for (int c = 0; c < BT_COL_COUNT; c++) {
        if (bt_col_info[c].priority == 0) {
            on[c] = true;
            used += bt_col_info[c].width + 1;
        }
    }
    l->mandatory_w = used;
    for (int p = 1; p <= 16; p++) {
        for (int c = 0; c < BT_COL_COUNT; c++) {
            if (bt_col_info[c].priority != p)
                continue;
            if (used + 1 + bt_col_info[c].width <= width) {
                on[c] = true;
                used += bt_col_info[c].width + 1;
            }
        }
    }
    int w[BT_COL_COUNT];
    for (int c = 0; c < BT_COL_COUNT; c++)
        w[c] = bt_col_info[c].width;
    static const enum bt_col flex[] = {BT_COL_BAR, BT_COL_WARN, BT_COL_TREND, BT_COL_MODEL};
    int spare = width - used;
    for (size_t i = 0; i < sizeof flex / sizeof flex[0] && spare > 0; i++) {
        enum bt_col c = flex[i];
        if (!on[c])
            continue;
        int grow = imin(spare, bt_col_info[c].max - w[c]);
        w[c] += grow;
        spare -= grow;
    }
    l->ncols = 0;
    int x = 0;
    for (int c = 0; c < BT_COL_COUNT; c++) {
        if (!on[c])
            continue;
        l->col[l->ncols++] = (enum bt_col)c;
        l->col_x[c] = x;
        l->col_w[c] = w[c];
        x += w[c] + 1;
    }
}

static void overview(const struct bt_layout_opts *o, int top, int avail, struct bt_layout *l)
{
    int cols = l->cols;
    int want_table = imax(o->nroutes, 1) + 1;
    int want_warn = o->nwarn_lines > 0 ? o->nwarn_lines + 1 : 0;
    int action_h = o->action && avail >= 5 ? 1 : 0;
    avail -= action_h;
    int table_h, warn_h;
    if (want_table + want_warn <= avail) {
        table_h = want_table;
        warn_h = avail - table_h;
    } else {
        /* the table first, but never squeeze the warnings below a title and two lines */
        int min_warn = want_warn ? imin(want_warn, imax(3, o->warn_min)) : 0;
        table_h = imax(2, imin(want_table, avail - min_warn));
        warn_h = avail - table_h;
    }
    l->table = rect(0, top, cols, table_h);
    l->action = rect(0, top + table_h, cols, action_h);
    l->warnings = rect(0, top + table_h + action_h, cols, warn_h);
}

/* The detail document: the warnings and what to do first, then the graphs, the
 * tokens graph first and tallest (the question asked first), each across the whole
 * width so that every time graph has the same time axis and events line up; then
 * every figure with its source. */
static void detail(const struct bt_layout_opts *o, int top, int avail, struct bt_layout *l)
{
    int cols = l->cols;
    int info_h = 2;
    l->info = rect(0, top, cols, info_h);
    l->body = rect(0, top + info_h, cols, avail - info_h);
    int body_h = l->body.h;
    int n = imin(o->ngraphs, BT_LAYOUT_MAX_GRAPHS);
    int th = imax(BT_LAYOUT_GRAPH_MIN_H, imin(BT_LAYOUT_GRAPH_MAX_H, body_h / 2));
    int gh = imax(BT_LAYOUT_GRAPH_MIN_H, imin(BT_LAYOUT_GRAPH_MAX_H - 3, body_h / 3));
    /* what to do first: the warnings (with their actions) at the top of the document,
     * then the graphs, then every figure */
    l->warnings = rect(0, 0, cols, 1 + imax(o->nwarn_lines, 1));
    int y = l->warnings.h;
    l->ngraphs = n;
    for (int i = 0; i < n; i++) {
        int h = i == 0 ? th : gh;
        l->graph[i] = rect(0, y, cols, h);
        y += h;
    }
    l->figures = rect(0, y, cols, o->nfig_lines > 0 ? 1 + o->nfig_lines : 0);
    y += l->figures.h;
    l->doc_h = y;
}

void bt_layout_compute(int cols, int rows, const struct bt_layout_opts *o, struct bt_layout *l)
{
    memset(l, 0, sizeof *l);
    l->cols = cols;
    l->rows = rows;
    l->need_cols = BT_LAYOUT_MIN_COLS;
    l->need_rows = BT_LAYOUT_MIN_ROWS;
    if (cols < BT_LAYOUT_MIN_COLS || rows < BT_LAYOUT_MIN_ROWS) {
        l->too_small = true;
        return;
    }
    l->header = rect(0, 0, cols, 1);
    int top = 1;
    if (o->banner) {
        l->banner = rect(0, 1, cols, 1);
        top = 2;
    } else {
        l->banner = rect(0, 1, cols, 0);
    }
    /* the key line at every size: how to get help and quit is never a guess */
    l->fbar = rect(0, rows - 1, cols, 1);
    int bottom = rows - 1;
    l->status = rect(0, bottom - 1, cols, 1);
    int avail = bottom - 1 - top;
    if (o->timeline) {
        l->timeline = rect(0, bottom - 2, cols, 1);
        avail--;
    } else {
        l->timeline = rect(0, bottom - 1, cols, 0);
    }
    columns(cols, l);
    if (o->view == BT_VIEW_DETAIL)
        detail(o, top, avail, l);
    else
        overview(o, top, avail, l);
    if (o->help) {
        int w = imin(cols - 2, 76);
        int h = imin(rows - 2, o->help_lines + 2);
        l->help = rect((cols - w) / 2, (rows - h) / 2, w, h);
    }
}

bool bt_layout_has_col(const struct bt_layout *l, enum bt_col c, int *x, int *w)
{
    for (int i = 0; i < l->ncols; i++) {
        if (l->col[i] == c) {
            if (x)
                *x = l->col_x[c];
            if (w)
                *w = l->col_w[c];
            return true;
        }
    }
    return false;
}
