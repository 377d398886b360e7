/* The overview: one row per route, the warnings of every visible route. */
#include "tui/view.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/format.h"
#include "core/util.h"
#include "tui/graph.h"

static const char *quota_src_short(enum bt_quota_source s)
{
    switch (s) {
    case BT_QS_SERVICE_QUOTAS: return "acct";
    case BT_QS_CONFIG: return "cfg";
    case BT_QS_DEFAULT: return "dflt";
    default: return "none";
    }
}

static void cell_text(int y, const struct bt_layout *l, enum bt_col c, const char *s, attr_t a)
{
    int x, w;
    if (!bt_layout_has_col(l, c, &x, &w))
        return;
    int len = tui_width(s);
    if (bt_col_info[c].right && len < w)
        x += w - len;
    tui_text_cut(y, x, w, s, a); /* cut text shows it was cut */
}

/* How a row's cell looks: the selected row in one attribute across its whole width
 * (with --no-color too: reverse video everywhere, not only in the gaps); a stale
 * row dimmed; else the cell's own role. */
struct rowlook {
    const struct bt_tui *t;
    bool sel, stale;
};

static attr_t look(const struct rowlook *k, enum bt_role role)
{
    if (k->sel)
        return A(k->t, BT_ROLE_SELECTED);
    if (k->stale)
        return A(k->t, BT_ROLE_DIM) | A_DIM;
    return A(k->t, role);
}

static void draw_row(struct bt_tui *t, const struct bt_layout *l, int y, int r, bool sel)
{
    const struct bt_route *rt = &t->host->cfg->routes[r];
    const struct bt_eval *e = &t->evals[r];
    struct rowlook k = {t, sel, e->stale};
    attr_t base = look(&k, BT_ROLE_NORMAL);
    tui_fill(y, 0, l->cols, base);
    char b[128];
    cell_text(y, l, BT_COL_NAME, rt->name, sel || e->stale ? base : base | A_BOLD);
    cell_text(y, l, BT_COL_MODEL, rt->model, base);
    cell_text(y, l, BT_COL_REGION, rt->region, base);
    cell_text(y, l, BT_COL_EP, bt_endpoint_name(rt->endpoint), base);
    cell_text(y, l, BT_COL_INF, bt_inference_name(rt->inference), base);
    attr_t st = look(&k, tui_status_role(e->status));
    cell_text(y, l, BT_COL_STATUS, tui_status_label(e->status), st);
    if (e->stale) {
        /* stale: the age of the newest data instead of a headroom that is not current */
        char age[16];
        tui_fmt_age(t->host->now - (e->data_minute + 60), age, sizeof age);
        if (e->data_minute)
            snprintf(b, sizeof b, "old%3s", age);
        else
            snprintf(b, sizeof b, "nodata");
    } else if (isnan(e->headroom_pct)) {
        snprintf(b, sizeof b, "-");
    } else {
        bt_fmt_pct(e->headroom_pct, b, sizeof b);
    }
    cell_text(y, l, BT_COL_HEADPCT, b, st);
    int bx, bw;
    if (bt_layout_has_col(l, BT_COL_BAR, &bx, &bw)) {
        struct bt_canvas cv;
        bt_canvas_init(&cv, bw, 1);
        /* core's figures follow the mantle side that binds: nothing to choose here;
         * the last segment is the whole quota group's use, so the bar matches HEAD% */
        double v[BT_SEG_COUNT] = {e->settled, e->estimated, e->group_used};
        double total = e->quota;
        static const unsigned char roles[BT_SEG_COUNT] = {BT_ROLE_SETTLED, BT_ROLE_ESTIMATED,
                                                          BT_ROLE_RESERVED};
        if (bt_graph_hbar(&cv, 0, 0, bw, v, total, roles, BT_ROLE_EMPTY, BT_ROLE_CRIT, t->utf8)) {
            if (sel || e->stale)
                tui_blit_attr(&cv, y, bx, base); /* the glyphs still tell the segments apart */
            else
                tui_blit(t, &cv, y, bx);
        } else {
            char used[16];
            bt_fmt_tokens(e->used, used, sizeof used);
            if (bw >= 24)
                snprintf(b, sizeof b, "%s used, no quota known", used);
            else
                snprintf(b, sizeof b, "no quota");
            cell_text(y, l, BT_COL_BAR, b, look(&k, BT_ROLE_UNKNOWN));
        }
        bt_canvas_free(&cv);
    }
    bt_fmt_tokens(e->settled, b, sizeof b); /* core: the mantle side that binds */
    cell_text(y, l, BT_COL_SETTLED, b, look(&k, BT_ROLE_SETTLED));
    bt_fmt_tokens(e->estimated, b, sizeof b);
    cell_text(y, l, BT_COL_ESTIMATED, b, look(&k, BT_ROLE_ESTIMATED));
    bt_fmt_tokens(e->held, b, sizeof b);
    cell_text(y, l, BT_COL_RESERVED, b, look(&k, BT_ROLE_RESERVED));
    char q[16];
    bt_fmt_tokens(e->quota, q, sizeof q);
    if (isnan(e->quota))
        snprintf(b, sizeof b, "? none");
    else
        snprintf(b, sizeof b, "%s %s", q, quota_src_short(e->quota_source));
    enum bt_role qr = e->quota_source == BT_QS_SERVICE_QUOTAS ? BT_ROLE_NORMAL
                      : e->quota_source == BT_QS_UNKNOWN      ? BT_ROLE_UNKNOWN
                                                              : BT_ROLE_WARN;
    cell_text(y, l, BT_COL_QUOTA, b, look(&k, qr));
    bt_fmt_count(e->invocations, b, sizeof b);
    cell_text(y, l, BT_COL_RPM, b, base);
    bt_fmt_count(e->throttles, b, sizeof b);
    cell_text(y, l, BT_COL_THR, b, look(&k, e->throttles > 0 ? BT_ROLE_CRIT : BT_ROLE_NORMAL));
    bt_fmt_latency(e->lat_p50, b, sizeof b);
    cell_text(y, l, BT_COL_P50, b, base);
    bt_fmt_latency(e->lat_p99, b, sizeof b);
    cell_text(y, l, BT_COL_P99, b, base);
    char lim[BT_FMT_SHORT];
    bt_fmt_count(e->in_flight, b, sizeof b);
    if (!isnan(e->in_flight) && !isnan(e->conc_limit)) {
        size_t len = strlen(b);
        snprintf(b + len, sizeof b - len, "/%s", bt_fmt_count(e->conc_limit, lim, sizeof lim));
    }
    cell_text(y, l, BT_COL_INFL, b,
              look(&k, e->in_flight > e->conc_limit ? BT_ROLE_WARN : BT_ROLE_NORMAL));
    int wx, ww;
    if (bt_layout_has_col(l, BT_COL_WARN, &wx, &ww)) {
        /* worst first, so a cut list still shows what matters; " +N" counts the rest */
        char codes[256] = "";
        int shown = 0;
        for (int rank = 4; rank >= 1 && shown >= 0; rank--)
            for (int w = 0; w < e->nwarn; w++) {
                if (tui_sev_rank(e->warnings[w].severity) != rank)
                    continue;
                const char *c = bt_wcode_name(e->warnings[w].code);
                size_t len = strlen(codes);
                int need = (int)(len + strlen(c)) + (shown ? 1 : 0) +
                           (shown + 1 < e->nwarn ? 3 : 0);
                if (shown && need > ww) {
                    snprintf(codes + len, sizeof codes - len, " +%d", e->nwarn - shown);
                    shown = -1;
                    break;
                }
                snprintf(codes + len, sizeof codes - len, "%s%s", shown ? " " : "", c);
                shown++;
            }
        cell_text(y, l, BT_COL_WARN, codes, look(&k, e->nwarn ? tui_sev_role(e->status) : BT_ROLE_NORMAL));
    }
}

int tui_overview_warnings(struct bt_tui *t, struct wline *lines)
{
    int n = 0;
    for (int rank = 4; rank >= 1; rank--)
        for (int i = 0; i < t->nvis; i++) {
            int r = t->order[i];
            const struct bt_eval *e = &t->evals[r];
            for (int w = 0; w < e->nwarn; w++) {
                const struct bt_warning *wa = &e->warnings[w];
                if (tui_sev_rank(wa->severity) != rank)
                    continue;
                char buf[400];
                snprintf(buf, sizeof buf, "%-4s %-11s %s: %s", tui_sev_label(wa->severity),
                         t->host->cfg->routes[r].name, bt_wcode_name(wa->code), wa->message);
                tui_add_wline(lines, &n, BT_ROLE_NORMAL, buf, 4, tui_sev_role(wa->severity));
                lines[n - 1].route = r;
            }
        }
    return n;
}

/* The bar's glyphs explained in its own heading. */
static void bar_legend(const struct bt_tui *t, int y, int x, int w, attr_t a)
{
    static const char *const names[] = {"settled", "est", "used"};
    int end = x + w;
    for (int k = 0; k < BT_SEG_COUNT; k++) {
        tui_glyph(y, x, bt_graph_seg_glyph((enum bt_seg)k, t->utf8), a);
        x += 1 + tui_text(y, x + 1, end - x - 1, names[k], a) + 1;
    }
    tui_text(y, x, end - x, "/quota", a);
}

void tui_draw_overview(struct bt_tui *t, const struct bt_layout *l, int nw)
{
    /* the selected route stays on screen (the header says which rows are) */
    int rows = l->table.h - 1;
    int pos = tui_sel_pos(t);
    if (pos < t->scroll)
        t->scroll = pos;
    if (rows > 0 && pos >= t->scroll + rows)
        t->scroll = pos - rows + 1;
    if (t->scroll > t->nvis - rows)
        t->scroll = t->nvis - rows > 0 ? t->nvis - rows : 0;
    tui_draw_header(t, l);
    if (l->banner.h)
        tui_draw_banner(t, l, -1);
    /* column headings, the sort column marked */
    int y = l->table.y;
    tui_fill(y, 0, l->cols, A(t, BT_ROLE_COLHEAD));
    for (int i = 0; i < l->ncols; i++) {
        enum bt_col c = l->col[i];
        bool sorted = tui_sort_info[t->sort].col == c;
        attr_t a = A(t, sorted ? BT_ROLE_SORT : BT_ROLE_COLHEAD);
        if (sorted)
            tui_fill(y, l->col_x[c], l->col_w[c], a);
        if (c == BT_COL_BAR && l->col_w[c] >= 32)
            bar_legend(t, y, l->col_x[c], l->col_w[c], a);
        else
            cell_text(y, l, c, bt_col_info[c].title, a);
    }
    for (int i = 0; i < rows; i++) {
        int k = t->scroll + i;
        if (k >= t->nvis) {
            if (t->nvis == 0 && i == 0)
                tui_text(y + 1, 1, l->cols - 1,
                     t->filter[0] ? "no route matches the filter (Esc clears it)"
                                  : "no routes configured",
                     A(t, BT_ROLE_DIM));
            break;
        }
        draw_row(t, l, y + 1 + i, t->order[k], t->order[k] == t->sel_route);
    }
    char title[64];
    snprintf(title, sizeof title, "Warnings (%d)", nw);
    if (nw == 0)
        snprintf(title, sizeof title, "Warnings: none");
    tui_draw_wlines(t, l->warnings, title, t->lines, nw, &t->wsc, t->wfocus);
    tui_draw_status(t, l);
}
