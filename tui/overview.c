/* The overview: one row per route, the warnings of every visible route. */
#include "tui/view.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dataminute.h"
#include "core/figures.h"
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

/* The binding side in the FITS column, short (the legend lists them). */
static const char *side_short(enum bt_side s)
{
    switch (s) {
    case BT_SIDE_TPM: return "tpm";
    case BT_SIDE_RPM: return "rpm";
    case BT_SIDE_INPUT: return "in";
    case BT_SIDE_OUTPUT: return "out";
    case BT_SIDE_RES_INPUT: return "r-in";
    case BT_SIDE_RES_OUTPUT: return "r-out";
    case BT_SIDE_DAILY: return "day";
    case BT_SIDE_CONCURRENT: return "conc";
    default: return "acct";
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

/* A status colour keeps its meaning on the selected row too (reverse video of it),
 * so the most urgent route, selected at start, still shows red. */
static attr_t look_status(const struct rowlook *k, enum bt_role role)
{
    if (k->sel)
        return A(k->t, role) | A_REVERSE | A_BOLD;
    if (k->stale)
        return A(k->t, BT_ROLE_DIM) | A_DIM;
    return A(k->t, role);
}

/* A row's figures as text, formatted once per evaluation (and data minute: the trend
 * ends at it), not once per frame: a key, a scroll or the sort redraws the rows from
 * these. What depends on the column's width (the bar, its fallback text, the warning
 * codes) or on the clock (a stale row's age) is drawn each time. */
struct tui_rowtext {
    uint64_t serial;        /* the evaluation formatted (0: none) */
    int64_t end;            /* the data minute the trend ends at */
    char head[128], fits[128], settled[128], estimated[128], held[128], quota[128], rpm[128],
        thr[128], p50[128], p99[128], infl[128];
    double *trend, trend_top; /* the trend's used per column, and its top */
    int ntrend;
};

void tui_overview_free(struct bt_tui *t)
{
    for (int r = 0; r < t->nrowtext; r++)
        free(t->rowtext[r].trend);
    free(t->rowtext);
    t->rowtext = NULL;
    t->nrowtext = 0;
}

static struct tui_rowtext *row_text(struct bt_tui *t, int r, int64_t end)
{
    int n = t->host->cfg->nroutes;
    if (t->nrowtext != n) {
        tui_overview_free(t);
        t->rowtext = bt_xcalloc((size_t)n + 1, sizeof *t->rowtext);
        t->nrowtext = n;
    }
    struct tui_rowtext *x = &t->rowtext[r];
    if (x->serial == t->e_serial && x->end == end)
        return x;
    x->serial = t->e_serial;
    x->end = end;
    x->ntrend = 0; /* the trend again at its next draw */
    const struct bt_eval *e = &t->evals[r];
    /* the figures the table describes are its text, as check prints them (the bound
     * marks: "<55.8" at most, ">38.4" at least; in flight of the limit "3/8") */
    bt_figure_text(&bt_figures[BT_FIG_HEADROOM_PCT], e, x->head, sizeof x->head);
    /* calls that fit in flight now, and the side that limits them */
    char f[BT_FMT_SHORT];
    bt_fmt_count(bt_fig(e, BT_FIG_FITS), f, sizeof f);
    if (isnan(bt_fig(e, BT_FIG_FITS)))
        snprintf(x->fits, sizeof x->fits, "-");
    else
        snprintf(x->fits, sizeof x->fits, "%s %s", f, side_short(bt_eval_binding(e)));
    /* core: the mantle side that binds */
    bt_figure_text(&bt_figures[BT_FIG_SETTLED], e, x->settled, sizeof x->settled);
    bt_figure_text(&bt_figures[BT_FIG_ESTIMATED], e, x->estimated, sizeof x->estimated);
    bt_figure_text(&bt_figures[BT_FIG_HELD], e, x->held, sizeof x->held);
    char q[16];
    bt_fmt_tokens(bt_fig(e, BT_FIG_QUOTA), q, sizeof q);
    if (isnan(bt_fig(e, BT_FIG_QUOTA)))
        snprintf(x->quota, sizeof x->quota, "? none");
    else
        snprintf(x->quota, sizeof x->quota, "%s %s", q, quota_src_short(bt_eval_quota_source(e)));
    bt_fmt_count(bt_fig(e, BT_FIG_INVOCATIONS), x->rpm, sizeof x->rpm);
    bt_fmt_count(bt_fig(e, BT_FIG_THROTTLES), x->thr, sizeof x->thr);
    bt_fmt_latency(bt_fig(e, BT_FIG_LAT_P50), x->p50, sizeof x->p50);
    bt_figure_text(&bt_figures[BT_FIG_LAT_P99], e, x->p99, sizeof x->p99);
    bt_figure_text(&bt_figures[BT_FIG_IN_FLIGHT], e, x->infl, sizeof x->infl);
    return x;
}

/* The trend's columns (tw of them, ending at the data minute end), once per evaluation:
 * the route's used tokens/min, one a column (core's minute figures), and the top the
 * bars are drawn against (the quota, else the largest). */
static const double *row_trend(struct bt_tui *t, struct tui_rowtext *x, int r, int tw, int64_t end,
                               double *top_out)
{
    if (x->ntrend != tw) {
        const struct bt_eval *e = &t->evals[r];
        free(x->trend);
        x->trend = bt_xcalloc((size_t)tw + 1, sizeof *x->trend);
        double top = bt_fig(e, BT_FIG_QUOTA);
        for (int i = 0; i < tw; i++) {
            struct bt_minute_fig f;
            bt_minute_figures_shown(t->host->cfg, t->host->store, r, end - (int64_t)(tw - 1 - i) * 60,
                                    t->host->now, &f); /* admission as each minute is evaluated */
            x->trend[i] = f.used;
            if (!(top > 0) && isfinite(f.used) && f.used > top)
                top = f.used;
        }
        if (!(top > 0) || !isfinite(top))
            top = 1;
        x->trend_top = top;
        x->ntrend = tw;
    }
    *top_out = x->trend_top;
    return x->trend;
}

static void draw_row(struct bt_tui *t, const struct bt_layout *l, int y, int r, bool sel)
{
    const struct bt_route *rt = &t->host->cfg->routes[r];
    const struct bt_eval *e = &t->evals[r];
    struct rowlook k = {t, sel, bt_eval_stale(e)};
    int64_t end = bt_data_minute(t->host->cfg, t->host->now);
    struct tui_rowtext *x = row_text(t, r, end);
    attr_t base = look(&k, BT_ROLE_NORMAL);
    tui_fill(y, 0, l->cols, base);
    char b[128];
    cell_text(y, l, BT_COL_NAME, rt->name, sel || bt_eval_stale(e) ? base : base | A_BOLD);
    cell_text(y, l, BT_COL_MODEL, rt->model, base);
    cell_text(y, l, BT_COL_REGION, rt->region, base);
    cell_text(y, l, BT_COL_EP, bt_endpoint_name(rt->endpoint), base);
    cell_text(y, l, BT_COL_INF, bt_inference_name(rt->inference), base);
    attr_t st = look_status(&k, tui_status_role(bt_eval_status(e)));
    cell_text(y, l, BT_COL_STATUS, tui_status_label(bt_eval_status(e)), st);
    int sx, sw;
    if (tui_was_crit(t, r) && bt_layout_has_col(l, BT_COL_STATUS, &sx, &sw))
        tui_glyph(y, sx + sw, '*', look_status(&k, BT_ROLE_CRIT)); /* crit lately: e lists it */
    if (bt_eval_stale(e)) {
        /* stale: the age of the newest data instead of a headroom that is not current */
        char age[16];
        tui_fmt_age(t->host->now - (bt_eval_data_minute(e) + 60), age, sizeof age);
        if (bt_eval_data_minute(e))
            snprintf(b, sizeof b, "old%3s", age);
        else
            snprintf(b, sizeof b, "nodata");
    } else {
        bt_strlcpy(b, x->head, sizeof b);
    }
    /* HEAD% by its own thresholds: another warning does not turn 90 % yellow */
    enum bt_status lv = bt_eval_stale(e) ? BT_ST_UNKNOWN : bt_headroom_level(t->host->cfg, e);
    cell_text(y, l, BT_COL_HEADPCT, b, look_status(&k, tui_status_role(lv)));
    int bx, bw;
    if (bt_layout_has_col(l, BT_COL_BAR, &bx, &bw)) {
        struct bt_canvas cv;
        bt_canvas_init(&cv, bw, 1);
        /* core's figures follow the mantle side that binds: nothing to choose here;
         * the last segment is the whole quota group's use, so the bar matches HEAD% */
        double v[BT_SEG_COUNT], total;
        /* one side per number: the bar is HEAD%'s side, named after it when that is
         * not the token side (the FITS column that names it is gone at 80 columns);
         * USED/QUOTA sorts by the same values */
        enum bt_side other = tui_bar_values(e, v, &total);
        const char *tag = other < BT_SIDE_COUNT ? side_short(other) : NULL;
        int tw = tag && bw >= 10 ? tui_width(tag) + 1 : 0;
        static const unsigned char roles[BT_SEG_COUNT] = {BT_ROLE_SETTLED, BT_ROLE_ESTIMATED,
                                                          BT_ROLE_RESERVED};
        if (bt_graph_hbar(&cv, 0, 0, bw - tw, v, total, roles, BT_ROLE_EMPTY, BT_ROLE_CRIT,
                          t->utf8)) {
            if (sel || bt_eval_stale(e))
                tui_blit_attr(&cv, y, bx, base); /* the glyphs still tell the segments apart */
            else
                tui_blit(t, &cv, y, bx);
            if (tw)
                tui_text(y, bx + bw - tw + 1, tw - 1, tag, look(&k, BT_ROLE_NORMAL));
        } else {
            char used[16];
            bt_fmt_tokens(bt_fig(e, BT_FIG_USED), used, sizeof used);
            bool zero = bt_fig(e, BT_FIG_QUOTA) == 0; /* known to be 0: nothing can run, not a mystery */
            if (bw >= 24)
                snprintf(b, sizeof b, zero ? "%s used, quota is 0" : "%s used, no quota known",
                         used);
            else
                snprintf(b, sizeof b, zero ? "quota 0" : "quota ?");
            cell_text(y, l, BT_COL_BAR, b, look_status(&k, zero ? BT_ROLE_CRIT : BT_ROLE_UNKNOWN));
        }
        bt_canvas_free(&cv);
    }
    if (bt_layout_has_col(l, BT_COL_FITS, NULL, NULL)) {
        cell_text(y, l, BT_COL_FITS, x->fits, look(&k, bt_fig(e, BT_FIG_FITS) <= 0 ? BT_ROLE_CRIT : BT_ROLE_NORMAL));
    }
    cell_text(y, l, BT_COL_SETTLED, x->settled, look(&k, BT_ROLE_SETTLED));
    cell_text(y, l, BT_COL_ESTIMATED, x->estimated, look(&k, BT_ROLE_ESTIMATED));
    cell_text(y, l, BT_COL_RESERVED, x->held, look(&k, BT_ROLE_RESERVED));
    enum bt_quota_source qs = bt_eval_quota_source(e);
    enum bt_role qr = qs == BT_QS_SERVICE_QUOTAS ? BT_ROLE_NORMAL
                      : qs == BT_QS_UNKNOWN      ? BT_ROLE_UNKNOWN
                                                 : BT_ROLE_WARN;
    cell_text(y, l, BT_COL_QUOTA, x->quota, look(&k, qr));
    cell_text(y, l, BT_COL_RPM, x->rpm, base);
    cell_text(y, l, BT_COL_THR, x->thr, look(&k, bt_fig(e, BT_FIG_THROTTLES) > 0 ? BT_ROLE_CRIT : BT_ROLE_NORMAL));
    cell_text(y, l, BT_COL_P50, x->p50, base);
    cell_text(y, l, BT_COL_P99, x->p99, base);
    const struct bt_figure *inf = &bt_figures[BT_FIG_IN_FLIGHT]; /* of: the limit */
    cell_text(y, l, BT_COL_INFL, x->infl,
              look(&k, inf->value(e) > inf->of(e) ? BT_ROLE_WARN : BT_ROLE_NORMAL));
    int tx, tw;
    if (bt_layout_has_col(l, BT_COL_TREND, &tx, &tw)) {
        /* wide terminals: the route's used tokens/min over the last minutes (one a
         * column, core's minute figures), against its quota: headroom's trend */
        double top;
        const double *v = row_trend(t, x, r, tw, end, &top);
        struct bt_canvas cv;
        bt_canvas_init(&cv, tw, 1);
        bt_graph_bars(&cv, 0, 0, tw, 1, v, tw, top, BT_ROLE_RESERVED, t->utf8);
        if (sel || bt_eval_stale(e))
            tui_blit_attr(&cv, y, tx, base);
        else
            tui_blit(t, &cv, y, tx);
        bt_canvas_free(&cv);
    }
    int wx, ww;
    if (bt_layout_has_col(l, BT_COL_WARN, &wx, &ww)) {
        /* worst first, so a cut list still shows what matters; " +N" counts the rest */
        char codes[256] = "";
        int shown = 0;
        for (int rank = 4; rank >= 1 && shown >= 0; rank--)
            for (int w = 0; w < bt_eval_nwarn(e); w++) {
                if (tui_sev_rank(bt_eval_warning(e, w)->severity) != rank)
                    continue;
                const char *c = bt_wcode_name(bt_eval_warning(e, w)->code);
                size_t len = strlen(codes);
                int need = (int)(len + strlen(c)) + (shown ? 1 : 0) +
                           (shown + 1 < bt_eval_nwarn(e) ? 3 : 0);
                if (shown && need > ww) {
                    snprintf(codes + len, sizeof codes - len, " +%d", bt_eval_nwarn(e) - shown);
                    shown = -1;
                    break;
                }
                snprintf(codes + len, sizeof codes - len, "%s%s", shown ? " " : "", c);
                shown++;
            }
        cell_text(y, l, BT_COL_WARN, codes,
                  look(&k, bt_eval_nwarn(e) ? tui_sev_role(bt_eval_status(e)) : BT_ROLE_NORMAL));
    }
}

/* One warning on the overview: one line, cut at the width; expanded (Enter, or every
 * warning when the terminal has the rows), the whole message and what to do,
 * wrapped. Under the cursor (Tab gives the pane the focus) its lines are selected. */
static void add_warning(struct bt_tui *t, struct wline *lines, int *n, int r,
                        const struct bt_warning *wa, bool expand, int width)
{
    int before = *n;
    char buf[400];
    snprintf(buf, sizeof buf, "%-4s %-11s %s: %s", tui_sev_label(wa->severity),
             t->host->cfg->routes[r].name, bt_wcode_name(wa->code), wa->message);
    if (!expand) {
        tui_add_wline(lines, n, BT_ROLE_NORMAL, buf, 4, tui_sev_role(wa->severity));
    } else {
        /* severity and route in their columns, the code and message wrapped beside */
        char rest[sizeof wa->message + 48]; /* the code and the message whole */
        snprintf(rest, sizeof rest, "%s: %s", bt_wcode_name(wa->code), wa->message);
        tui_wrap(lines, n, rest, width - 17, 0, BT_ROLE_NORMAL);
        for (int k = before; k < *n; k++) {
            char in[sizeof lines[k].s + 96]; /* the severity, the route name and the line whole */
            if (k == before)
                snprintf(in, sizeof in, "%-4s %-11s %s", tui_sev_label(wa->severity),
                         t->host->cfg->routes[r].name, lines[k].s);
            else
                snprintf(in, sizeof in, "%17s%s", "", lines[k].s);
            bt_strlcpy_cut(lines[k].s, in, sizeof lines[k].s);
        }
        if (before < *n) {
            lines[before].lead = 4;
            lines[before].lead_role = tui_sev_role(wa->severity);
        }
        const char *act = wa->action ? wa->action : bt_wcode_action(wa->code);
        snprintf(buf, sizeof buf, "do: %s", act);
        int k0 = *n;
        tui_wrap(lines, n, buf, width - 17, 0, BT_ROLE_HELP);
        for (int k = k0; k < *n; k++) {
            char in[sizeof lines[k].s + 96]; /* the severity, the route name and the line whole */
            snprintf(in, sizeof in, "%17s%s", "", lines[k].s);
            bt_strlcpy_cut(lines[k].s, in, sizeof lines[k].s);
        }
    }
    bool sel = t->wfocus && r == t->wsel_route && (int)wa->code == t->wsel_code;
    for (int k = before; k < *n; k++) {
        lines[k].route = r;
        lines[k].code = (int)wa->code;
        lines[k].first = k == before;
        if (sel) {
            lines[k].role = BT_ROLE_SELECTED;
            lines[k].lead_role = BT_ROLE_SELECTED;
        }
    }
}

/* The overview's warnings, worst first, one line each; the one Enter opened is
 * expanded, and where the terminal has spare rows the worst are expanded too, as
 * many as fit (a big terminal shows whole messages and what to do). */
int tui_overview_warnings(struct bt_tui *t, struct wline *lines, int width, int rows)
{
    /* the same evaluation, order, size and cursor: the lines already built (each is
     * a printf and the long ones a wrap: a fifth of a redraw of 500 routes) */
    struct tui_wkey key = {true,         t->o_version,   width,          rows,           0,
                           t->wfocus,    t->wsel_route,  t->wsel_code,   t->wexp_route,
                           t->wexp_code};
    if (lines == t->lines && t->wkey.valid && t->wkey.o_version == key.o_version &&
        t->wkey.width == width && t->wkey.rows == rows && t->wkey.wfocus == key.wfocus &&
        t->wkey.wsel_route == key.wsel_route && t->wkey.wsel_code == key.wsel_code &&
        t->wkey.wexp_route == key.wexp_route && t->wkey.wexp_code == key.wexp_code)
        return t->wkey.n;
    struct item {
        int r;
        const struct bt_warning *wa;
        bool exp;
    };
    int nitems = 0, cap = 0;
    struct item *it = NULL;
    for (int rank = 4; rank >= 1; rank--)
        for (int i = 0; i < t->nvis; i++) {
            int r = t->order[i];
            const struct bt_eval *e = &t->evals[r];
            for (int w = 0; w < bt_eval_nwarn(e); w++) {
                if (tui_sev_rank(bt_eval_warning(e, w)->severity) != rank)
                    continue;
                if (nitems == cap) {
                    cap = cap ? cap * 2 : 32;
                    it = bt_xrealloc(it, (size_t)cap * sizeof *it);
                }
                bool opened = r == t->wexp_route && (int)bt_eval_warning(e,
                                                                         w)->code == t->wexp_code;
                it[nitems++] = (struct item){r, bt_eval_warning(e, w), opened};
            }
        }
    int n = nitems < MAX_WLINES ? nitems : MAX_WLINES;
    int budget = rows - n;
    for (int k = 0; k < nitems && budget > 0; k++) {
        int m = 0;
        add_warning(t, t->scratch, &m, it[k].r, it[k].wa, true, width);
        if (it[k].exp)
            budget -= m - 1;
        else if (m - 1 <= budget) {
            it[k].exp = true;
            budget -= m - 1;
        }
    }
    n = 0;
    for (int k = 0; k < nitems; k++)
        add_warning(t, lines, &n, it[k].r, it[k].wa, it[k].exp, width);
    free(it);
    if (lines == t->lines) {
        key.n = n;
        t->wkey = key;
    }
    return n;
}

bool tui_expanded_lines(const struct bt_tui *t, int n, int *first, int *last)
{
    for (int k = 0; k < n; k++) {
        if (!t->lines[k].first || t->lines[k].route != t->wexp_route ||
            t->lines[k].code != t->wexp_code)
            continue;
        int end = k;
        while (end + 1 < n && !t->lines[end + 1].first)
            end++;
        *first = k;
        *last = end;
        return true;
    }
    return false;
}

/* Index of the first line of the warning under the cursor (-1: none shown). */
static int cursor_line(const struct bt_tui *t, int n)
{
    for (int k = 0; k < n; k++)
        if (t->lines[k].first && t->lines[k].route == t->wsel_route &&
            t->lines[k].code == t->wsel_code)
            return k;
    return -1;
}

/* Up/Down with the pane's focus: the cursor moves a warning at a time and the
 * pane scrolls to keep it shown. */
void tui_warning_move(struct bt_tui *t, int delta)
{
    int n = t->wsc.lines;
    if (!n)
        return;
    int at = cursor_line(t, n);
    int k = at < 0 ? 0 : at;
    int step = delta > 0 ? 1 : -1;
    for (int moved = 0; moved < (delta > 0 ? delta : -delta);) {
        int j = k + step;
        while (j >= 0 && j < n && !t->lines[j].first)
            j += step;
        if (j < 0 || j >= n) {
            if (!moved && at >= 0)
                snprintf(t->msg, sizeof t->msg, step < 0 ? "first warning" : "last warning");
            break;
        }
        k = j;
        moved++;
    }
    if (at < 0)
        k = 0;
    t->wsel_route = t->lines[k].route;
    t->wsel_code = t->lines[k].code;
    t->sel_route = t->wsel_route; /* the table and the action line follow the warning */
    if (k < t->wsc.pos)
        t->wsc.pos = k;
    int page = t->wsc.page > 0 ? t->wsc.page + 1 : 1;
    if (k >= t->wsc.pos + page)
        t->wsc.pos = k - page + 1;
}

/* Enter on a warning: expands it in place and selects its route; Enter on the
 * expanded one opens that route's detail. */
void tui_warning_enter(struct bt_tui *t)
{
    if (cursor_line(t, t->wsc.lines) < 0) {
        tui_warning_move(t, 0);
        if (cursor_line(t, t->wsc.lines) < 0)
            return;
    }
    t->sel_route = t->wsel_route;
    if (t->wexp_route == t->wsel_route && t->wexp_code == t->wsel_code) {
        tui_open_detail(t);
        return;
    }
    t->wexp_route = t->wsel_route;
    t->wexp_code = t->wsel_code;
    t->wexp_reveal = true;
    snprintf(t->msg, sizeof t->msg, "Enter again opens %s", t->host->cfg->routes[t->wsel_route].name);
}

/* A route's data stale is the cause of the rest: a quota unknown or a status unknown
 * because nothing current answered (credentials, network) is named by STALE, whose
 * message carries the collector's error, so at one severity it goes first. */
static int cause_rank(const struct bt_warning *w)
{
    return w->code == BT_W_STALE;
}

/* The worst warning among the routes shown (hidden: among the routes a filter hides),
 * by the do line's order; *route its route, -1 when none warns. */
static const struct bt_warning *worst_warning(const struct bt_tui *t, bool hidden, int *route)
{
    const struct bt_warning *best = NULL;
    int br = -1, n = t->host->cfg->nroutes;
    char *vis = bt_xcalloc((size_t)n + 1, 1);
    for (int i = 0; i < t->nvis; i++)
        vis[t->order[i]] = 1;
    int count = hidden ? n : t->nvis;
    for (int i = 0; i < count; i++) {
        int r = hidden ? i : t->order[i];
        if (hidden && vis[r])
            continue;
        const struct bt_eval *e = &t->evals[r];
        for (int w = 0; w < bt_eval_nwarn(e); w++) {
            const struct bt_warning *wa = bt_eval_warning(e, w);
            int d = best ? tui_sev_rank(wa->severity) - tui_sev_rank(best->severity) : 1;
            if (!d)
                d = cause_rank(wa) - cause_rank(best);
            double calls = bt_fig(e, BT_FIG_INVOCATIONS);
            double bcalls = br < 0 ? NAN : bt_fig(&t->evals[br], BT_FIG_INVOCATIONS);
            calls = isnan(calls) ? 0 : calls;
            bcalls = isnan(bcalls) ? 0 : bcalls;
            if (d > 0 || (d == 0 && br != r && calls > bcalls)) {
                best = wa;
                br = r;
            }
        }
    }
    free(vis);
    *route = br;
    return best;
}

/* The worst route's action, one line above the warnings: what to do without
 * opening anything. The worst: the most severe warning, then a stale route's STALE
 * (the cause of the rest), then the route carrying the most calls (the largest blast
 * radius), then the list's order. A filter does not hide a worse warning: a route
 * it hides is named, marked "(hidden)". Too long, the action ends at a word in an
 * ellipsis: the warning expanded (Tab, Enter) reads whole. */
void tui_draw_action(struct bt_tui *t, const struct bt_layout *l)
{
    if (!l->action.h)
        return;
    int y = l->action.y;
    tui_fill(y, 0, l->cols, A(t, BT_ROLE_NORMAL));
    int br, hr;
    const struct bt_warning *best = worst_warning(t, false, &br);
    const struct bt_warning *hid = t->filter[0] ? worst_warning(t, true, &hr) : NULL;
    bool hidden = false;
    if (hid && hid->severity != BT_ST_OK &&
        (!best || tui_sev_rank(hid->severity) > tui_sev_rank(best->severity))) {
        best = hid;
        br = hr;
        hidden = true;
    }
    if (!best || best->severity == BT_ST_OK) {
        tui_text(y, 1, l->cols - 1, "nothing to do: no route warns", A(t, BT_ROLE_DIM));
        return;
    }
    char lead[128], line[512];
    snprintf(lead, sizeof lead, "%s %s%s %s: ", tui_sev_label(best->severity),
             t->host->cfg->routes[br].name, hidden ? " (hidden)" : "", bt_wcode_name(best->code));
    /* stale: what failed (the collector's error, credentials or network) is what to
     * look at; the remedy reads in the warning expanded */
    snprintf(line, sizeof line, "%s",
             best->code == BT_W_STALE ? best->message
             : best->action           ? best->action
                                      : bt_wcode_action(best->code));
    int x = 1 + tui_text(y, 1, l->cols - 1, "do ", A(t, BT_ROLE_KEY));
    x += tui_text(y, x, l->cols - x, lead, A(t, tui_sev_role(best->severity)) | A_BOLD);
    tui_text_word(y, x, l->cols - x, line, A(t, BT_ROLE_NORMAL));
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
        if (c == BT_COL_BAR && l->col_w[c] >= 32) {
            bar_legend(t, y, l->col_x[c], l->col_w[c] - (sorted ? 1 : 0), a);
        } else {
            char head[32];
            /* the sort column says which way: ▼ worst (or largest) first, ▲ inverted */
            snprintf(head, sizeof head, "%s%s", bt_col_info[c].title,
                     !sorted ? "" : t->sort_rev ? (t->utf8 ? "\u25b2" : "^") : (t->utf8 ? "\u25bc" : "v"));
            cell_text(y, l, c, head, a);
        }
        if (sorted && c == BT_COL_BAR && l->col_w[c] >= 32)
            tui_glyph(y, l->col_x[c] + l->col_w[c] - 1, t->utf8 ? (t->sort_rev ? 0x25B2 : 0x25BC) : (t->sort_rev ? '^' : 'v'), a);
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
    tui_draw_action(t, l);
    char title[64];
    int nwarn = 0;
    for (int i = 0; i < nw; i++)
        nwarn += t->lines[i].first;
    snprintf(title, sizeof title, t->wfocus ? "Warnings (%d): Enter expands, again opens" : "Warnings (%d)", nwarn);
    if (nw == 0)
        snprintf(title, sizeof title, "Warnings: none");
    if (t->wexp_reveal) {
        /* an expansion the pane cannot show whole is scrolled into view: its last line
         * (what to do) first, never past its first line */
        t->wexp_reveal = false;
        int k, end;
        int page = l->warnings.h - 1;
        if (tui_expanded_lines(t, nw, &k, &end) && page > 0) {
            if (end >= t->wsc.pos + page)
                t->wsc.pos = end - page + 1;
            if (k < t->wsc.pos)
                t->wsc.pos = k;
        }
    }
    tui_draw_wlines(t, l->warnings, title, t->lines, nw, &t->wsc, t->wfocus);
    tui_draw_status(t, l);
}

/* A tick of the clock on the overview (tui.c decides it is one): what reads the clock
 * to the second, drawn over the screen as it is: the header's clock, a stale row's
 * age and the status bar's ages and countdown. The rest is what the last draw left,
 * the same cells a whole draw would write again. */
void tui_overview_tick(struct bt_tui *t, const struct bt_layout *l)
{
    tui_draw_header(t, l);
    int rows = l->table.h - 1;
    for (int i = 0; i < rows && t->scroll + i < t->nvis; i++) {
        int r = t->order[t->scroll + i];
        if (bt_eval_stale(&t->evals[r]))
            draw_row(t, l, l->table.y + 1 + i, r, r == t->sel_route);
    }
    tui_draw_status(t, l);
}
