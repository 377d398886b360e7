/* `bedtop check` and `replay --at` as text: 80 columns by default (the figures
 * that say how much is left), every column with --wide; routes and warnings most
 * severe first; every outside string through the terminal sanitiser and every
 * figure through core/format. */
#include "render/report.h"
#include "render/spend.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dataminute.h"
#include "core/figures.h"
#include "core/format.h"
#include "core/sanitize.h"


#define C_RESET "\033[0m"
#define C_BOLD "\033[1m"
#define TEXT_WIDTH 80

static const char *status_color(enum bt_status s)
{
    switch (s) {
    case BT_ST_OK: return "\033[32m";
    case BT_ST_WARN: return "\033[33m";
    case BT_ST_CRIT: return "\033[1;31m";
    default: return "\033[35m";
    }
}

/* Most severe first: crit, warn, unknown, ok (info). */
static int severity_rank(enum bt_status s)
{
    switch (s) {
    case BT_ST_CRIT: return 0;
    case BT_ST_WARN: return 1;
    case BT_ST_UNKNOWN: return 2;
    default: return 3;
    }
}

/* Columns of sanitised UTF-8 text: one per character. */
static int text_cols(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xc0) != 0x80;
    return n;
}

static void pad(struct bt_buf *b, int n)
{
    for (int i = 0; i < n; i++)
        bt_buf_putc(b, ' ');
}

/* Outside text s, sanitised for the terminal, in exactly w columns: padded, or
 * cut with a closing '~' when longer; w < 0: as it is. */
static void put_cell(struct bt_buf *b, const char *s, int w, bool right)
{
    struct bt_buf t = {0};
    bt_san_term_buf(&t, s, false);
    const char *p = bt_buf_str(&t);
    int cols = text_cols(p);
    if (w >= 0 && cols > w) {
        size_t k = 0;
        for (int c = 0; c < w - 1; c++)
            for (k++; (p[k] & 0xc0) == 0x80; k++)
                ;
        bt_buf_add(b, p, k);
        if (w > 0)
            bt_buf_putc(b, '~');
    } else {
        if (right && w > cols)
            pad(b, w - cols);
        bt_buf_puts(b, p);
        if (!right && w > cols)
            pad(b, w - cols);
    }
    bt_buf_free(&t);
}

/* Outside text, sanitised, word-wrapped to width columns (0: one line): the first
 * line follows what is already on it (at column col), the others start with
 * indent spaces. A word longer than a line is cut across lines. */
static void put_wrapped(struct bt_buf *b, const char *text, int col, int indent, int width)
{
    struct bt_buf t = {0};
    bt_san_term_buf(&t, text, false);
    const char *p = bt_buf_str(&t);
    bool first_word = true;
    while (*p) {
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        size_t len = strcspn(p, " ");
        int wc = 0;
        for (size_t k = 0; k < len; k++)
            wc += ((unsigned char)p[k] & 0xc0) != 0x80;
        if (width > 0 && !first_word && col + 1 + wc > width) {
            bt_buf_putc(b, '\n');
            pad(b, indent);
            col = indent;
            first_word = true;
        }
        if (!first_word) {
            bt_buf_putc(b, ' ');
            col++;
        }
        /* the word, cut at the right edge when it cannot fit any line */
        for (size_t k = 0; k < len;) {
            size_t cl = 1;
            while (k + cl < len && ((unsigned char)p[k + cl] & 0xc0) == 0x80)
                cl++;
            if (width > 0 && col >= width) {
                bt_buf_putc(b, '\n');
                pad(b, indent);
                col = indent;
            }
            bt_buf_add(b, p + k, cl);
            col++;
            k += cl;
        }
        first_word = false;
        p += len;
    }
    bt_buf_putc(b, '\n');
    bt_buf_free(&t);
}

/* The routes shown, most severe first (crit, warn, unknown, ok), then as configured. */
static int route_order(const struct bt_report *r, int *idx)
{
    /* worst first, config order within a status: one pass per rank (an insertion
     * sort was quadratic in routes when their statuses mixed) */
    int n = 0;
    for (int rank = 0; rank <= 3; rank++)
        for (int i = 0; i < r->n; i++)
            if (severity_rank(bt_eval_status(&r->evals[i])) == rank && bt_report_shows(r, i))
                idx[n++] = i;
    return n;
}

/* The figure table's text columns (core/figures.h: text_at, or wide_at with --wide),
 * listed once a table: the heads, then each route's cells, right-aligned in their
 * widths. */
struct text_cols {
    enum bt_fig_id ids[BT_FIG_COUNT];
    int n;
    bool wide;
};

static void figure_heads(struct bt_buf *b, struct text_cols *c, bool wide)
{
    c->wide = wide;
    c->n = bt_figures_of(wide ? BT_FW_TEXT_WIDE : BT_FW_TEXT, c->ids);
    for (int k = 0; k < c->n; k++) {
        const struct bt_figure *f = &bt_figures[c->ids[k]];
        bt_buf_printf(b, " %*s", wide ? f->wide_w : f->text_w, wide ? f->wide_head : f->text_head);
        if (wide && f->wide_source_head)
            bt_buf_printf(b, " %-*s", f->wide_source_w, f->wide_source_head);
    }
    bt_buf_putc(b, '\n');
}

static void figure_cells(struct bt_buf *b, const struct text_cols *c, const struct bt_eval *e)
{
    for (int k = 0; k < c->n; k++) {
        const struct bt_figure *f = &bt_figures[c->ids[k]];
        char v[2 * BT_FMT_SHORT + 2];
        bt_buf_printf(b, " %*s", c->wide ? f->wide_w : f->text_w, bt_figure_text(f, e, v, sizeof v));
        if (c->wide && f->wide_source_head) {
            const char *src = f->source ? f->source(e) : NULL;
            bt_buf_printf(b, " %-*s", f->wide_source_w, src ? src : "-");
        }
    }
    bt_buf_putc(b, '\n');
}

/* HEAD% is the binding side's: say which where it is not the route's token quota,
 * and what < and > mean when a headroom is a bound. */
static void sides_note(const struct bt_report *r, const int *idx, int n, struct bt_buf *b)
{
    bool bound = false, any = false, est = false, mantle = false;
    /* the table's: HEAD% is of the side that binds, headroom_tpm of the token side, and
     * THR is not published for some routes */
    const struct bt_figure *pct = &bt_figures[BT_FIG_HEADROOM_PCT],
                           *tok = &bt_figures[BT_FIG_HEADROOM_TPM],
                           *thr = &bt_figures[BT_FIG_THROTTLES];
    for (int k = 0; k < n; k++) {
        const struct bt_eval *e = &r->evals[idx[k]];
        enum bt_quality q = pct->quality(e);
        bool known = !isnan(bt_figure_value(pct, e));
        bound |= known && (q == BT_QL_UPPER || q == BT_QL_LOWER);
        est |= known && q == BT_QL_ESTIMATE;
        mantle |= thr->unpublished(e);
        enum bt_side side = bt_figure_side(pct, e);
        if (side == bt_figure_side(tok, e))
            continue;
        bt_buf_puts(b, any ? ", " : "\nHEAD% of the side that binds: ");
        bt_san_term_buf(b, r->cfg->routes[idx[k]].name, false);
        bt_buf_printf(b, " %s", bt_side_binding_name(side));
        any = true;
    }
    if (any)
        bt_buf_putc(b, '\n');
    if (bound)
        bt_buf_puts(b, any ? "HEAD% < at most, > at least: computed from a bound on use\n"
                           : "\nHEAD% < at most, > at least: computed from a bound on use\n");
    if (est)
        bt_buf_puts(b, any || bound ? "HEAD% ~ an estimate (the cross-model daily quota is "
                                      "pricing-weighted)\n"
                                    : "\nHEAD% ~ an estimate (the cross-model daily quota is "
                                      "pricing-weighted)\n");
    if (mantle)
        bt_buf_puts(b, any || bound || est
                           ? "THR n/p: not published (bedrock-mantle has no throttle metric)\n"
                           : "\nTHR n/p: not published (bedrock-mantle has no throttle metric)\n");
}

/* Requests per minute where an RPM quota applies: the accepted calls (the side's use)
 * and the offered load beside them (accepted + throttled: never the use). */
static void rpm_note(const struct bt_report *r, const int *idx, int n, struct bt_buf *b)
{
    bool first = true;
    for (int k = 0; k < n; k++) {
        const struct bt_eval *e = &r->evals[idx[k]];
        const struct bt_side_fig *f = bt_eval_side(e, BT_SIDE_RPM);
        if (!f->applies)
            continue;
        char u[BT_FMT_SHORT], q[BT_FMT_SHORT], o[BT_FMT_SHORT];
        const char *name = r->cfg->routes[idx[k]].name;
        struct bt_buf t = {0};
        bt_san_term_buf(&t, name, false);
        int w = text_cols(bt_buf_str(&t));
        bt_buf_free(&t);
        bt_buf_puts(b, first ? "\nrpm " : "rpm ");
        put_cell(b, name, w > 16 ? 16 : w, false); /* 80 columns with the widest figures */
        bt_buf_printf(b, ": %s accepted of %s/min, %s offered (+ throttled)\n",
                      bt_fmt_count(f->used, u, sizeof u), bt_fmt_count(f->quota, q, sizeof q),
                      bt_fmt_count(bt_eval_offered(e), o, sizeof o));
        first = false;
    }
}

static void put_status(struct bt_buf *b, const struct bt_eval *e, bool color, int w)
{
    char st[16];
    snprintf(st, sizeof st, "%s%s", bt_status_name(bt_eval_status(e)), bt_eval_stale(e) ? "*" : "");
    bt_buf_puts(b, color ? status_color(bt_eval_status(e)) : "");
    put_cell(b, st, w, false);
    bt_buf_puts(b, color ? C_RESET : "");
}

/* 80 columns: the figures that say how much is left and why. */
static void table_compact(const struct bt_report *r, const int *idx, int n, bool color,
                          struct bt_buf *b)
{
    int wname = 5;
    for (int k = 0; k < n; k++) {
        struct bt_buf t = {0};
        bt_san_term_buf(&t, r->cfg->routes[idx[k]].name, false);
        int c = text_cols(bt_buf_str(&t));
        wname = c > wname ? c : wname;
        bt_buf_free(&t);
    }
    /* 2 + 8 + 5 x (1 + 6) + 3 x (1 + 5) columns follow the name */
    int fixed = 2 + 8 + 5 * 7 + 3 * 6;
    if (wname > TEXT_WIDTH - fixed)
        wname = TEXT_WIDTH - fixed;
    put_cell(b, "ROUTE", wname, false);
    bt_buf_printf(b, "  %-8s", "STATUS");
    struct text_cols cols;
    figure_heads(b, &cols, false);
    bool stale = false;
    for (int k = 0; k < n; k++) {
        const struct bt_eval *e = &r->evals[idx[k]];
        put_cell(b, r->cfg->routes[idx[k]].name, wname, false);
        bt_buf_puts(b, "  ");
        put_status(b, e, color, 8);
        figure_cells(b, &cols, e);
        stale |= bt_eval_stale(e);
    }
    if (stale)
        bt_buf_puts(b, "* stale: the newest data is older than expected (see STALE below)\n");
}

/* --wide: every column, one line per route whatever its length. */
static void table_wide(const struct bt_report *r, const int *idx, int n, bool color,
                       struct bt_buf *b)
{
    int wname = 5, wmodel = 5;
    for (int k = 0; k < n; k++) {
        struct bt_buf t = {0};
        bt_san_term_buf(&t, r->cfg->routes[idx[k]].name, false);
        int a = text_cols(bt_buf_str(&t));
        bt_buf_reset(&t);
        bt_san_term_buf(&t, r->cfg->routes[idx[k]].model, false);
        int m = text_cols(bt_buf_str(&t));
        bt_buf_free(&t);
        wname = a > wname ? a : wname;
        wmodel = m > wmodel ? m : wmodel;
    }
    put_cell(b, "ROUTE", wname, false);
    bt_buf_puts(b, "  ");
    put_cell(b, "STATUS", 8, false);
    bt_buf_puts(b, " ");
    put_cell(b, "MODEL", wmodel, false);
    bt_buf_printf(b, "  %-14s %-7s %-12s", "REGION", "EP", "INFERENCE");
    struct text_cols cols;
    figure_heads(b, &cols, true);
    for (int k = 0; k < n; k++) {
        const struct bt_eval *e = &r->evals[idx[k]];
        const struct bt_route *rt = &r->cfg->routes[idx[k]];
        put_cell(b, rt->name, wname, false);
        bt_buf_puts(b, "  ");
        put_status(b, e, color, 8);
        bt_buf_puts(b, " ");
        put_cell(b, rt->model, wmodel, false);
        bt_buf_puts(b, "  ");
        put_cell(b, rt->region, 14, false);
        bt_buf_printf(b, " %-7s %-12s", bt_endpoint_name(rt->endpoint), bt_inference_name(rt->inference));
        figure_cells(b, &cols, e);
    }
}

/* check: the observed ceiling beside the quota, for the routes throttled in the last
 * hour, and the forecast of the routes that run out within the hour at this trend. */
static void decide_text(const struct bt_report *r, const int *idx, int n, struct bt_buf *b)
{
    int width = r->wide ? 0 : TEXT_WIDTH;
    bool head = false;
    for (int k = 0; r->ceiling && k < n; k++) {
        const struct bt_ceiling *c = &r->ceiling[idx[k]];
        if (!c->throttled_minutes || isnan(c->tokens))
            continue;
        if (!head)
            bt_buf_printf(b, "\nOBSERVED CEILING (throttled minutes of the last %d min; a lower "
                             "bound)\n", BT_CEILING_WINDOW);
        head = true;
        char tok[BT_FMT_SHORT], q[BT_FMT_SHORT], hm[8], line[400];
        bt_fmt_tokens(c->tokens, tok, sizeof tok);
        bt_fmt_tokens(c->quota, q, sizeof q);
        bt_fmt_hhmm(c->tokens_minute, hm, sizeof hm);
        int len = !(c->tokens > 0)
                      ? snprintf(line, sizeof line, ": nothing accepted in %d throttled min, quota %s",
                                 c->throttled_minutes, q)
                      : c->covered_minutes < BT_CEILING_WINDOW
                          ? snprintf(line, sizeof line, ": at least %s TPM at %s UTC (%d of %d covered min "
                                     "throttled), quota %s", tok, hm, c->throttled_minutes,
                                     c->covered_minutes, q)
                          : snprintf(line, sizeof line, ": at least %s TPM at %s UTC (%d min throttled), "
                                     "quota %s", tok, hm, c->throttled_minutes, q);
        if (!isnan(c->pct_of_quota))
            len += snprintf(line + len, sizeof line - (size_t)len, " (%.1f%%)", c->pct_of_quota);
        if (c->points_to)
            snprintf(line + len, sizeof line - (size_t)len, "; far below it: %s", c->why);
        struct bt_buf l = {0};
        bt_buf_puts(&l, r->cfg->routes[idx[k]].name);
        bt_buf_puts(&l, line);
        pad(b, 2);
        put_wrapped(b, bt_buf_str(&l), 2, 4, width);
        bt_buf_free(&l);
    }
    head = false;
    for (int k = 0; r->forecast && k < n; k++) {
        const struct bt_forecast *f = &r->forecast[idx[k]];
        char said[160];
        if (!(f->minutes < BT_FORECAST_SHOW) || !bt_plan_forecast_text(f, said, sizeof said))
            continue;
        if (!head)
            bt_buf_printf(b, "\nFORECAST (least squares over the last %d min: a trend, not a "
                             "promise)\n", BT_FORECAST_MINUTES);
        head = true;
        struct bt_buf l = {0};
        bt_buf_printf(&l, "%s: %s", r->cfg->routes[idx[k]].name, said);
        pad(b, 2);
        put_wrapped(b, bt_buf_str(&l), 2, 4, width);
        bt_buf_free(&l);
    }
}

struct text_warning {
    int route, pos, w;
};

/* Every warning of the routes shown, most severe first, then in route order. */
static void warnings_text(const struct bt_report *r, const int *idx, int n, bool color,
                          struct bt_buf *b)
{
    int total = 0;
    for (int k = 0; k < n; k++)
        total += r->evals[idx[k]].nwarn;
    if (!total)
        return;
    struct text_warning *ws = bt_xcalloc((size_t)total, sizeof *ws);
    int m = 0; /* one pass per rank: an insertion sort was quadratic in warnings */
    for (int rank = 0; rank <= 3; rank++)
        for (int k = 0; k < n; k++)
            for (int w = 0; w < r->evals[idx[k]].nwarn; w++)
                if (severity_rank(r->evals[idx[k]].warnings[w].severity) == rank)
                    ws[m++] = (struct text_warning){idx[k], k, w};
    int width = r->wide ? 0 : TEXT_WIDTH;
    bt_buf_puts(b, "\nWARNINGS (most severe first)\n");
    for (int i = 0; i < m; i++) {
        const struct bt_warning *wa = bt_eval_warning(&r->evals[ws[i].route], ws[i].w);
        const char *sev = wa->severity == BT_ST_OK ? "info" : bt_status_name(wa->severity);
        bt_buf_printf(b, "%s%-9s%s %s", color ? status_color(wa->severity) : "", sev,
                      color ? C_RESET : "", color ? C_BOLD : "");
        struct bt_buf head = {0};
        bt_buf_printf(&head, "%s: %s", r->cfg->routes[ws[i].route].name, bt_wcode_name(wa->code));
        put_wrapped(b, bt_buf_str(&head), 10, 10, width);
        bt_buf_free(&head);
        if (color)
            bt_buf_puts(b, C_RESET);
        pad(b, 10);
        put_wrapped(b, wa->message, 10, 10, width);
        pad(b, 10);
        bt_buf_puts(b, "-> ");
        put_wrapped(b, wa->action ? wa->action : bt_wcode_action(wa->code), 13, 13, width);
        bt_report_flush(r, b); /* check writes as it goes */
    }
    free(ws);
}

void bt_report_render_text(const struct bt_report *r, bool color, struct bt_buf *b)
{
    /* the one clock (core/dataminute.h): the data minute shown, the clock beside it */
    char iso[32], hms[16];
    bool replay = !strcmp(r->mode, "replay");
    bt_fmt_iso(bt_data_minute(r->cfg, r->now), iso, sizeof iso);
    int sod = (int)(((r->now % 86400) + 86400) % 86400); /* the day is the data minute's */
    snprintf(hms, sizeof hms, "%02d:%02d:%02d", sod / 3600, sod / 60 % 60, sod % 60);
    int *idx = bt_xcalloc((size_t)(r->n ? r->n : 1), sizeof *idx);
    int n = route_order(r, idx);
    bool sim = r->recorded_mode && !strcmp(r->recorded_mode, "demo");
    bt_buf_printf(b, "bedtop %s  data %s, %s %s  %d route%s  status %s%s%s%s\n\n",
                  replay ? "replay" : "check", iso, replay ? "seen" : "now", hms, n,
                  n == 1 ? "" : "s", color ? status_color(r->status) : "",
                  bt_status_name(r->status), color ? C_RESET : "",
                  sim ? "  (demo recording: simulated)" : "");
    if (!n) {
        bt_buf_puts(b, "no routes: add [route NAME] sections to the config, or let bedtop\n"
                       "discover them from CloudWatch\n");
        free(idx);
        return;
    }
    if (r->wide)
        table_wide(r, idx, n, color, b);
    else
        table_compact(r, idx, n, color, b);
    bt_report_flush(r, b);
    sides_note(r, idx, n, b);
    rpm_note(r, idx, n, b);
    decide_text(r, idx, n, b);
    bt_report_flush(r, b);
    warnings_text(r, idx, n, color, b);
    bt_spend_text(r, b);
    if (!isnan(r->metrics_per_poll)) {
        char a[BT_FMT_LONG], d[BT_FMT_LONG];
        bt_buf_printf(b, "\ncost: %s metrics requested per poll, %s per day\n",
                      bt_fmt_grouped(r->metrics_per_poll, a, sizeof a),
                      bt_fmt_grouped(r->metrics_per_day, d, sizeof d));
    }
    free(idx);
}
