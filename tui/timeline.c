/* Replay: the timeline row and the markers overlay. */
#include "tui/view.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dataminute.h"
#include "core/util.h"

enum { TL_UNSCANNED, TL_QUIET, TL_EVENT, TL_MARKER };

/* Column of time v on a bar of w columns over [a, b]. */
static int tl_col(int64_t v, int64_t a, int64_t b, int w)
{
    if (b <= a || v <= a)
        return 0;
    if (v >= b)
        return w - 1;
    int c = (int)((double)(v - a) * w / (double)(b - a));
    return c >= w ? w - 1 : c;
}

/* One row: start time, the span scaled to the width with a mark for each minute
 * where a warning or throttling started and for each marker, the position, end time. */
void tui_draw_timeline(struct bt_tui *t, const struct bt_layout *l)
{
    const struct bt_tui_replay *rp = t->host->replay;
    struct bt_rect r = l->timeline;
    if (!rp || r.h < 1)
        return;
    tui_fill(r.y, 0, r.w, A(t, BT_ROLE_NORMAL));
    char a[16], b[16];
    /* the ends as data minutes, the clock every moment is named by */
    bt_fmt_hhmm(bt_data_minute(t->host->cfg, rp->start), a, sizeof a);
    bt_fmt_hhmm(bt_data_minute(t->host->cfg, rp->end), b, sizeof b);
    int x0 = 1 + (int)strlen(a) + 2, w = r.w - x0 - (int)strlen(b) - 3;
    tui_text(r.y, 1, (int)strlen(a), a, A(t, BT_ROLE_AXIS));
    tui_text(r.y, x0 + w + 2, (int)strlen(b), b, A(t, BT_ROLE_AXIS));
    if (w < 4)
        return;
    unsigned char *col = bt_xcalloc((size_t)w, 1);
    /* whole minutes, so a recording that ended a second later scales the same */
    int64_t t0 = bt_minute_floor(rp->start), t1 = bt_minute_floor(rp->end) + 60;
    int64_t span = t1 - t0;
    for (int c = 0; c < w; c++) {
        /* the minutes this column covers: not all scanned yet shows as such */
        int64_t ta = t0 + (int64_t)((double)span * c / w);
        int64_t tb = t0 + (int64_t)((double)span * (c + 1) / w) - 1;
        if (tb < ta)
            tb = ta;
        col[c] = TL_QUIET;
        if (!rp->minutes || !rp->nminutes) {
            col[c] = TL_UNSCANNED;
            continue;
        }
        /* the minutes of the index this column covers: bounded by the index, never
         * by the span (a recording's times come from outside) */
        int64_t k0 = (bt_minute_floor(ta) - rp->minute0) / 60, k1 = (tb - rp->minute0) / 60;
        if (k0 < 0)
            k0 = 0;
        if (k1 >= (int64_t)rp->nminutes)
            k1 = (int64_t)rp->nminutes - 1;
        for (int64_t k = k0; k <= k1; k++)
            if (rp->minutes[k] == 0)
                col[c] = TL_UNSCANNED;
    }
    /* one mark per minute where something started, at the minute's middle */
    for (size_t k = 0; rp->minutes && k < rp->nminutes; k++)
        if (rp->minutes[k] == 2)
            col[tl_col(rp->minute0 + (int64_t)k * 60 + 30, t0, t1, w)] = TL_EVENT;
    for (size_t i = 0; i < rp->nmarkers; i++)
        col[tl_col(rp->markers[i].t, t0, t1, w)] = TL_MARKER;
    int cur = tl_col(t->host->now, t0, t1, w);
    for (int c = 0; c < w; c++) {
        uint32_t g;
        enum bt_role role;
        switch (col[c]) {
        case TL_UNSCANNED: g = t->utf8 ? 0x00B7 : '.'; role = BT_ROLE_DIM; break;
        case TL_EVENT: g = '!'; role = BT_ROLE_WARN; break;
        case TL_MARKER: g = 'M'; role = BT_ROLE_KEY; break;
        default: g = t->utf8 ? 0x2500 : '-'; role = BT_ROLE_RULE; break;
        }
        if (c == cur) {
            g = t->utf8 ? 0x25C6 : '#';
            role = BT_ROLE_SELECTED;
        }
        tui_glyph(r.y, x0 + c, g, A(t, role));
    }
    tui_glyph(r.y, x0 - 1, t->utf8 ? 0x251C : '[', A(t, BT_ROLE_RULE));
    tui_glyph(r.y, x0 + w, t->utf8 ? 0x2524 : ']', A(t, BT_ROLE_RULE));
    free(col);
}

void tui_draw_markers(struct bt_tui *t, const struct bt_layout *l)
{
    const struct bt_tui_replay *rp = t->host->replay;
    int n = (int)rp->nmarkers;
    int w = l->cols - 2 < 76 ? l->cols - 2 : 76;
    int rows = l->rows - 4;
    int hh = (n ? n : 1) + 2;
    if (hh > rows + 2)
        hh = rows + 2;
    struct bt_rect h = {(l->cols - w) / 2, (l->rows - hh) / 2, w, hh};
    if (h.w < 10 || h.h < 3)
        return;
    attr_t a = A(t, BT_ROLE_HELP);
    tui_box(t, h, " markers (Enter jumps, Esc closes) ", a);
    if (!n) {
        tui_text(h.y + 1, h.x + 2, h.w - 4, "no markers in this recording", a);
        return;
    }
    int vis = h.h - 2;
    if (t->marker_sel >= n)
        t->marker_sel = n - 1;
    int first = t->marker_sel >= vis ? t->marker_sel - vis + 1 : 0;
    for (int i = 0; i < vis && first + i < n; i++) {
        int k = first + i;
        char line[300], ts[32], seen[16];
        bt_fmt_iso(bt_data_minute(t->host->cfg, rp->markers[k].t), ts, sizeof ts);
        bt_fmt_hhmm(rp->markers[k].t, seen, sizeof seen);
        snprintf(line, sizeof line, "data %.16s  %s  (added %s)", ts,
                 rp->markers[k].text ? rp->markers[k].text : "", seen);
        attr_t la = k == t->marker_sel ? A(t, BT_ROLE_SELECTED) : a;
        tui_fill(h.y + 1 + i, h.x + 1, h.w - 2, la);
        tui_text(h.y + 1 + i, h.x + 2, h.w - 4, line, la);
    }
}
