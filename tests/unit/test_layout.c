/* Layout is a pure function of size and settings: checked over every size
 * from 1x1 to 250x80, for both views, with and without banner and help. */
#include <stdio.h>
#include <string.h>

#include "tests/tap.h"
#include "tui/layout.h"

static bool inside(struct bt_rect r, int cols, int rows)
{
    if (r.w == 0 || r.h == 0)
        return r.x >= 0 && r.y >= 0;
    return r.x >= 0 && r.y >= 0 && r.w > 0 && r.h > 0 && r.x + r.w <= cols && r.y + r.h <= rows;
}

static bool overlap(struct bt_rect a, struct bt_rect b)
{
    if (!a.w || !a.h || !b.w || !b.h)
        return false;
    return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

/* Returns a description of the first broken rule, or NULL. */
static const char *check(const struct bt_layout *l, const struct bt_layout_opts *o, int cols,
                         int rows)
{
    if (cols < BT_LAYOUT_MIN_COLS || rows < BT_LAYOUT_MIN_ROWS)
        return l->too_small && l->need_cols == BT_LAYOUT_MIN_COLS &&
                       l->need_rows == BT_LAYOUT_MIN_ROWS
                   ? NULL
                   : "below the minimum and not too_small";
    if (l->too_small)
        return "too_small at a usable size";
    struct bt_rect panes[10];
    int n = 0;
    panes[n++] = l->header;
    panes[n++] = l->banner;
    panes[n++] = l->status;
    panes[n++] = l->timeline;
    panes[n++] = l->fbar;
    if (o->view == BT_VIEW_OVERVIEW) {
        panes[n++] = l->table;
        panes[n++] = l->action;
        panes[n++] = l->warnings;
    } else {
        panes[n++] = l->info;
        panes[n++] = l->body;
    }
    for (int i = 0; i < n; i++) {
        if (!inside(panes[i], cols, rows))
            return "pane outside the screen";
        for (int j = i + 1; j < n; j++)
            if (overlap(panes[i], panes[j]))
                return "panes overlap";
    }
    /* every row is used by exactly one pane (no gaps, nothing lost) */
    int covered = 0;
    for (int i = 0; i < n; i++)
        if (panes[i].w == cols)
            covered += panes[i].h;
    if (covered != rows)
        return "rows not all covered";
    if (o->view == BT_VIEW_DETAIL) {
        /* the document: graphs and warnings inside the width, not overlapping, all of it */
        struct bt_rect doc[BT_LAYOUT_MAX_GRAPHS + 2];
        int nd = 0;
        for (int i = 0; i < l->ngraphs; i++)
            doc[nd++] = l->graph[i];
        doc[nd++] = l->figures;
        doc[nd++] = l->warnings;
        for (int i = 0; i < nd; i++) {
            if (!inside(doc[i], cols, l->doc_h))
                return "document pane outside the document";
            for (int j = i + 1; j < nd; j++)
                if (overlap(doc[i], doc[j]))
                    return "document panes overlap";
        }
        if (l->ngraphs != (o->ngraphs < BT_LAYOUT_MAX_GRAPHS ? o->ngraphs : BT_LAYOUT_MAX_GRAPHS))
            return "a graph left out of the document";
        if (l->warnings.h != 1 + (o->nwarn_lines > 0 ? o->nwarn_lines : 1))
            return "warnings not all in the document";
        if (l->figures.h != (o->nfig_lines > 0 ? 1 + o->nfig_lines : 0))
            return "figures not all in the document";
        /* what to do first (issue 22): the warnings open the document, which ends
         * with the figures or, without them, the last graph */
        if (l->warnings.y != 0)
            return "the document does not start with the warnings";
        int end = l->figures.h ? l->figures.y + l->figures.h
                  : l->ngraphs ? l->graph[l->ngraphs - 1].y + l->graph[l->ngraphs - 1].h
                               : l->warnings.h;
        if (end != l->doc_h)
            return "the document's panes do not add up to it";
    }
    if (o->banner != (l->banner.h == 1))
        return "banner shown iff wanted";
    if (o->view == BT_VIEW_OVERVIEW && l->table.h < 2)
        return "table without a data row";
    /* columns: all mandatory present, inside the width, in order, not overlapping */
    int prev_end = -1;
    for (int i = 0; i < l->ncols; i++) {
        enum bt_col c = l->col[i];
        if (l->col_x[c] <= prev_end || l->col_x[c] + l->col_w[c] > cols)
            return "column outside or overlapping";
        if (l->col_w[c] < bt_col_info[c].width)
            return "column narrower than its minimum";
        prev_end = l->col_x[c] + l->col_w[c] - 1;
    }
    for (int c = 0; c < BT_COL_COUNT; c++)
        if (bt_col_info[c].priority == 0 && !bt_layout_has_col(l, (enum bt_col)c, NULL, NULL))
            return "mandatory column dropped";
    if (l->mandatory_w > cols)
        return "table narrower than its mandatory columns";
    for (int i = 0; i < l->ngraphs; i++)
        if (l->graph[i].h < BT_LAYOUT_GRAPH_MIN_H)
            return "graph below its minimum height";
    if (o->help && !inside(l->help, cols, rows))
        return "help overlay outside the screen";
    return NULL;
}

int main(void)
{
    struct bt_layout_opts variants[] = {
        {.view = BT_VIEW_OVERVIEW, .nroutes = 7, .nwarn_lines = 15, .action = true},
        {.view = BT_VIEW_OVERVIEW, .banner = true, .nroutes = 40, .nwarn_lines = 60, .help = true,
         .help_lines = 30, .action = true},
        {.view = BT_VIEW_OVERVIEW, .nroutes = 0, .nwarn_lines = 0},
        {.view = BT_VIEW_DETAIL, .banner = true, .nroutes = 7, .nwarn_lines = 12, .ngraphs = 5,
         .nfig_lines = 9},
        {.view = BT_VIEW_DETAIL, .nroutes = 1, .nwarn_lines = 0, .ngraphs = 8, .help = true,
         .help_lines = 5},
    };
    for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
        int bad = 0;
        char first[160] = "";
        for (int cols = 1; cols <= 250; cols++)
            for (int rows = 1; rows <= 80; rows++) {
                struct bt_layout l;
                bt_layout_compute(cols, rows, &variants[v], &l);
                const char *why = check(&l, &variants[v], cols, rows);
                if (why && !bad++)
                    snprintf(first, sizeof first, "%dx%d: %s", cols, rows, why);
            }
        OK(bad == 0, "variant %zu: every size 1x1..250x80 keeps the rules %s", v, first);
    }

    /* Known answers at the sizes the terminal tests use. */
    struct bt_layout l;
    struct bt_layout_opts o = {.view = BT_VIEW_OVERVIEW, .banner = true, .nroutes = 7,
                               .nwarn_lines = 15, .action = true};
    bt_layout_compute(40, 10, &o, &l);
    OK(l.too_small && l.need_cols == 60 && l.need_rows == 12, "40x10 is too small, need 60x12");
    bt_layout_compute(60, 12, &o, &l);
    OK(!l.too_small, "60x12 is the minimum");
    bt_layout_compute(80, 24, &o, &l);
    /* 24 rows: header 1 + banner 1 + status 1 + the key line 1 (at every width: "? help
     * q quit") leave 20; table 7+1 = 8, the action line 1, warnings 11 */
    OK(l.table.y == 2 && l.table.h == 8 && l.action.y == 10 && l.action.h == 1 &&
           l.warnings.y == 11 && l.warnings.h == 11 && l.status.y == 22 && l.fbar.y == 23 &&
           l.fbar.h == 1,
       "80x24 overview: table 2..9, action 10, warnings 11 rows, status 22, key line 23");
    /* mandatory 11+4+6+12 + 3 separators = 36; by priority RESERV, ESTIM, SETTLD (+7 each)
     * = 57, THR/m +6 = 63, QUOTA SRC +11 = 74, INFL +6 = 80: full; P99 would need 86 */
    OK(l.mandatory_w == 36, "mandatory columns take 36 (got %d)", l.mandatory_w);
    OK(bt_layout_has_col(&l, BT_COL_RESERVED, NULL, NULL) &&
           bt_layout_has_col(&l, BT_COL_QUOTA, NULL, NULL) &&
           bt_layout_has_col(&l, BT_COL_THR, NULL, NULL) &&
           bt_layout_has_col(&l, BT_COL_INFL, NULL, NULL),
       "80 columns keep reserved, quota source, throttles and in-flight");
    OK(!bt_layout_has_col(&l, BT_COL_P99, NULL, NULL), "80 columns drop p99");
    OK(!bt_layout_has_col(&l, BT_COL_MODEL, NULL, NULL), "80 columns drop the model");
    bt_layout_compute(250, 60, &o, &l);
    OK(l.ncols == BT_COL_COUNT, "250 columns show every column (%d)", l.ncols);
    int x, w;
    bt_layout_has_col(&l, BT_COL_BAR, &x, &w);
    OK(w == bt_col_info[BT_COL_BAR].max, "spare width grows the bar first (w=%d)", w);

    o = (struct bt_layout_opts){.view = BT_VIEW_DETAIL, .nroutes = 7, .nwarn_lines = 9,
                                .ngraphs = 5};
    bt_layout_compute(120, 40, &o, &l);
    /* 40 rows: header, status, F-key bar, info 2 leave a body of 35; the warnings first
     * (title + 9 lines = 10 rows), then the tokens graph 35/2 -> 12 (the most), the
     * others 35/3 = 11 -> 9; each across the width */
    OK(l.ngraphs == 5 && l.graph[0].w == 120 && l.graph[0].y == 10 && l.graph[0].h == 12 &&
           l.graph[1].w == 120 && l.graph[1].y == 22 && l.graph[1].h == 9 && l.graph[4].y == 49,
       "120 wide detail: warnings, then tokens first and tallest, every graph across the width");
    OK(l.body.h == 35 && l.warnings.y == 0 && l.warnings.h == 10 && l.doc_h == 58,
       "120x40 detail: body 35 rows, warnings at document row 0, 58 rows in all");
    OK(l.fbar.h == 1 && l.fbar.y == 39 && l.status.y == 38, "120 wide: F-key bar under the status bar");
    bt_layout_compute(80, 24, &o, &l);
    /* body 24 - 5 = 19: warnings 10 rows, tokens graph 9 rows first, the others 7, one a
     * row; the key line at the bottom */
    OK(l.ngraphs == 5 && l.graph[0].w == 80 && l.graph[0].y == 10 && l.graph[0].h == 9 &&
           l.graph[1].y == 19 && l.graph[1].h == 7 && l.fbar.h == 1 && l.fbar.y == 23,
       "80x24 detail: one column, warnings, tokens graph first and tallest, the key line");
    bt_layout_compute(60, 12, &o, &l);
    OK(l.ngraphs == 5 && l.graph[0].h == BT_LAYOUT_GRAPH_MIN_H,
       "60x12 detail: every graph in the document, at its minimum height");
    return tap_done();
}
