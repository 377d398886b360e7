/* export's CSV writer (render/csv.h). */
#include "render/csv.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/figures.h"
#include "core/format.h"
#include "core/sanitize.h"
#include "core/shares.h"

/* CSV numbers are bedtop's own: quoted like every field, never neutralised. */
static void csv_num(struct bt_buf *b, double v, int decimals)
{
    char n[BT_FMT_LONG];
    bt_buf_add(b, ",\"", 2);
    bt_buf_puts(b, bt_fmt_plain(bt_round_to(v, decimals), decimals, n, sizeof n));
    bt_buf_putc(b, '"');
}

/* t's ISO text: a row's minute, evaluation and admission instants are shared by every
 * route of the step (export writes 10^5 rows), so the last few are kept. */
static const char *iso_of(int64_t t)
{
    static struct { int64_t t; char iso[32]; } memo[4];
    static bool set[4];
    size_t k = (size_t)((uint64_t)t % 4);
    if (!set[k] || memo[k].t != t) {
        bt_fmt_iso(t, memo[k].iso, sizeof memo[k].iso);
        memo[k].t = t;
        set[k] = true;
    }
    return memo[k].iso;
}

static void csv_str(struct bt_buf *b, const char *s)
{
    bt_buf_putc(b, ',');
    bt_san_csv_buf(b, s ? s : "");
}

static void csv_time(struct bt_buf *b, int64_t t)
{
    bt_buf_add(b, ",\"", 2);
    if (t)
        bt_buf_puts(b, iso_of(t));
    bt_buf_putc(b, '"');
}

/* One header name per column: the signals as recorded, then the evaluation
 * (EstimatedTPMQuotaUsage is the estimated_tpm signal, so it is not repeated),
 * then the instants behind the row and what happened in its minute. */
void bt_csv_header(struct bt_buf *b)
{
    bt_buf_puts(b, "\"time\",\"route\",\"model_id\",\"region\",\"endpoint\",\"inference\"");
    for (int k = 0; k < BT_SIG_COUNT; k++)
        bt_buf_printf(b, ",\"%s\"", bt_signal_info[k].name);
    enum bt_fig_id ids[BT_FIG_COUNT];
    int nf = bt_figures_of(BT_FW_CSV, ids); /* the figure table's columns */
    for (int k = 0; k < nf; k++) {
        const struct bt_figure *f = &bt_figures[ids[k]];
        bt_buf_printf(b, ",\"%s\"", f->csv);
        if (f->csv_source)
            bt_buf_printf(b, ",\"%s\"", f->csv_source);
    }
    static const char *const eval_cols[] = {"status",       "warnings", "evaluated_at",
                                            "admission_at",
                                            /* who held the group (bt_csv_shares) */
                                            "shares_team", "shares_tag", "shares_project",
                                            "shares_route",
                                            "markers",  "events",
                                            "headroom_quality", "binding_side"};
    for (size_t k = 0; k < BT_ARRAY_LEN(eval_cols); k++)
        bt_buf_printf(b, ",\"%s\"", eval_cols[k]);
    bt_buf_putc(b, '\n');
}

void bt_export_events(struct bt_buf *b, const struct bt_evlog *log, int r, int64_t m)
{
    if (!log)
        return;
    bool first = true;
    size_t lo, hi; /* the minute's entries: a binary search, not a scan per row */
    bt_evlog_minute_range(log, m, m, &lo, &hi);
    for (size_t i = lo; i < hi; i++) {
        const struct bt_logent *x = &log->e[i];
        if (x->minute != m || x->route != r || x->kind == BT_LOG_MARKER)
            continue;
        if (!first)
            bt_buf_add(b, "; ", 2);
        bt_buf_puts(b, x->text);
        first = false;
    }
}


/* One share list as a field: "search=324000 (51.27%); ads=..."; a bound says so
 * (<= an upper bound, >= a lower one, ~ an estimate), unknown use is "unknown". */
static void shares_field(struct bt_buf *f, const struct bt_share_list *l)
{
    for (int k = 0; k < l->n; k++) {
        const struct bt_share *s = &l->s[k];
        bt_buf_puts(f, k ? "; " : "");
        bt_buf_puts(f, s->name);
        if (!isfinite(s->used)) {
            bt_buf_puts(f, "=unknown");
            continue;
        }
        const char *rel = s->quality == BT_QL_UPPER ? "<=" : s->quality == BT_QL_LOWER ? ">="
                          : s->quality == BT_QL_ESTIMATE ? "~" : s->quality == BT_QL_UNKNOWN ? "=?"
                                                                                            : "=";
        char n[BT_FMT_LONG];
        bt_buf_puts(f, rel); /* puts, not printf: 4 % of an export's instructions */
        bt_buf_puts(f, bt_fmt_plain(round(s->used), 0, n, sizeof n));
        if (isfinite(s->pct)) {
            bt_buf_puts(f, " (");
            bt_buf_puts(f, bt_fmt_plain(bt_round_to(s->pct, 2), 2, n, sizeof n));
            bt_buf_puts(f, "%)");
        }
    }
}

void bt_csv_shares(struct bt_buf *b, const struct bt_config *cfg, const struct bt_store *st,
                   const struct bt_eval *evals, int r, struct bt_share_memo *memo)
{
    struct bt_share_list scratch = {0};
    struct bt_buf f = {0};
    for (int by = 0; by < BT_SHARE_COUNT; by++) {
        bt_buf_reset(&f);
        /* as the JSON: a tag where attribute_by names one, a project on mantle */
        if (!(by == BT_SHARE_TAG && !cfg->attribute_tag[0]) &&
            !(by == BT_SHARE_PROJECT && !bt_eval_mantle(&evals[r])))
            /* the group's lists, once per group (core's memo); the callers outside the
             * config once, in the route field */
            shares_field(&f, bt_share_memo_get(memo, cfg, st, evals, r, (enum bt_share_by)by,
                                               &scratch));
        csv_str(b, bt_buf_str(&f));
    }
    bt_buf_free(&f);
    bt_shares_free(&scratch);
}

void bt_csv_route_fields(struct bt_buf *b, const struct bt_config *cfg, int r)
{
    const struct bt_route *rt = &cfg->routes[r];
    csv_str(b, rt->name);
    csv_str(b, rt->model);
    csv_str(b, rt->region);
    csv_str(b, bt_endpoint_name(rt->endpoint));
    csv_str(b, bt_inference_name(rt->inference));
}


void bt_csv_row_head_with(struct bt_buf *b, const char *fields, size_t len,
                          const struct bt_store *st, const struct bt_eval *e, int64_t m)
{
    bt_buf_putc(b, '"');
    bt_buf_puts(b, iso_of(m));
    bt_buf_putc(b, '"');
    bt_buf_add(b, fields, len);
    for (int k = 0; k < BT_SIG_COUNT; k++)
        csv_num(b, bt_eval_signal_row(st, e, (enum bt_signal)k, m), 3);
    /* rounded as check --format json rounds them (the table's decimals): one figure,
     * one reading */
    static enum bt_fig_id ids[BT_FIG_COUNT]; /* the table's CSV columns: the same every row */
    static int nf = -1;
    if (nf < 0)
        nf = bt_figures_of(BT_FW_CSV, ids);
    for (int k = 0; k < nf; k++) {
        const struct bt_figure *f = &bt_figures[ids[k]];
        csv_num(b, bt_figure_value(f, e), f->decimals);
        if (f->csv_source)
            csv_str(b, f->source ? f->source(e) : NULL);
    }
    csv_str(b, bt_status_name(bt_eval_status(e)));
    struct bt_buf w = {0};
    for (int i = 0; i < bt_eval_nwarn(e); i++) {
        if (i)
            bt_buf_putc(&w, ';');
        bt_buf_puts(&w, bt_wcode_name(bt_eval_warning(e, i)->code));
    }
    csv_str(b, bt_buf_str(&w));
    bt_buf_reset(&w);
    csv_time(b, bt_eval_now(e));
    csv_time(b, bt_eval_adm_at(e));
    bt_buf_free(&w);
}

void bt_csv_row_tail(struct bt_buf *b, int r, int64_t m, const char *markers,
                     const struct bt_evlog *log, enum bt_quality hq, enum bt_side binding)
{
    struct bt_buf w = {0};
    csv_str(b, markers);
    bt_export_events(&w, log, r, m);
    csv_str(b, bt_buf_str(&w));
    bt_buf_free(&w);
    /* how sure headroom_pct is: known, upper-bound, estimate (the cross-model daily side) */
    csv_str(b, bt_quality_name(hq));
    /* the side headroom_pct and fits_more are of (headroom_tpm is the token side's):
     * one side per number, named as check --format json names it */
    csv_str(b, bt_side_binding_name(binding));
    bt_buf_putc(b, '\n');
}
