/* Screen layout as a pure function of (terminal size, settings) returning
 * rectangles, so every size from 1x1 up can be unit-tested (nvtop/btop habit).
 * Below BT_LAYOUT_MIN_COLS x BT_LAYOUT_MIN_ROWS the dashboard shows a
 * "terminal too small: need WxH" screen instead of a degraded one: a capacity
 * number cut in half misleads more than no number. */
#ifndef BEDTOP_LAYOUT_H
#define BEDTOP_LAYOUT_H
#include <stdbool.h>

#define BT_LAYOUT_MIN_COLS 60
#define BT_LAYOUT_MIN_ROWS 12
#define BT_LAYOUT_MAX_GRAPHS 8
#define BT_LAYOUT_GRAPH_MIN_H 7   /* title rule, 5 plot rows (3 y ticks), time axis */
#define BT_LAYOUT_GRAPH_MAX_H 12
#define BT_LAYOUT_FBAR_COLS 120   /* from this width the key line is an F-key bar (htop's) */

struct bt_rect {
    int x, y, w, h;
};

enum bt_view { BT_VIEW_OVERVIEW, BT_VIEW_DETAIL };

/* Overview table columns, in display order. */
enum bt_col {
    BT_COL_NAME, BT_COL_MODEL, BT_COL_REGION, BT_COL_EP, BT_COL_INF, BT_COL_STATUS,
    BT_COL_HEADPCT, BT_COL_BAR, BT_COL_FITS, BT_COL_SETTLED, BT_COL_ESTIMATED, BT_COL_RESERVED,
    BT_COL_QUOTA, BT_COL_RPM, BT_COL_THR, BT_COL_P50, BT_COL_P99, BT_COL_INFL, BT_COL_TREND,
    BT_COL_WARN,
    BT_COL_COUNT
};

struct bt_col_info {
    const char *title;
    int width;       /* minimum width */
    int max;         /* flexible columns grow up to this */
    int priority;    /* 0: mandatory; larger numbers are dropped first */
    bool right;      /* right-aligned (numbers) */
};
extern const struct bt_col_info bt_col_info[BT_COL_COUNT];

struct bt_layout_opts {
    enum bt_view view;
    bool banner;         /* an ESTIMATE_ONLY banner line is wanted */
    int nroutes;         /* rows the table would like */
    int nwarn_lines;     /* lines the warnings pane would like */
    int ngraphs;         /* detail graphs wanted (<= BT_LAYOUT_MAX_GRAPHS) */
    int nfig_lines;      /* detail: lines of the figures section (0: none) */
    bool help;           /* help overlay shown */
    int help_lines;      /* lines of help text */
    bool timeline;       /* replay: a one-row timeline above the status bar */
    bool action;         /* overview: the worst route's action, one row above the warnings */
    int warn_min;        /* overview: rows the warnings pane keeps at least (the expanded
                          * warning with the pane's focus, and its title), 0: none */
};

struct bt_layout {
    int cols, rows;
    bool too_small;
    int need_cols, need_rows;
    /* warnings: the overview's pane on screen; in the detail, the pane's place in the
     * scrolled document (below the graphs) */
    struct bt_rect header, banner, table, warnings, status;
    struct bt_rect timeline; /* replay only (h 0 otherwise) */
    struct bt_rect fbar;     /* the key line at the bottom, always: "? help  q quit" and the
                              * answer to the last key; an F-key bar from
                              * BT_LAYOUT_FBAR_COLS columns */
    struct bt_rect action;   /* overview: the worst route's action (h 0: none) */
    /* overview: chosen columns in display order */
    int ncols;
    enum bt_col col[BT_COL_COUNT];
    int col_x[BT_COL_COUNT], col_w[BT_COL_COUNT];
    int mandatory_w;     /* width the mandatory columns need */
    /* detail: the route's identity fixed at the top, then one document scrolled
     * in body: the graphs (the tokens graph first and tallest), every figure with
     * its source, then the warnings. graph[], figures and warnings are in document
     * rows (0 = the top of the document). */
    struct bt_rect info, body, figures;
    struct bt_rect graph[BT_LAYOUT_MAX_GRAPHS];
    int ngraphs;         /* every graph wanted: the document scrolls */
    int doc_h;           /* rows of the whole document */
    struct bt_rect help; /* overlay, drawn over the other panes */
};

void bt_layout_compute(int cols, int rows, const struct bt_layout_opts *o, struct bt_layout *out);
/* True if the column is in the layout; *x and *w get its place. */
bool bt_layout_has_col(const struct bt_layout *l, enum bt_col c, int *x, int *w);
#endif
