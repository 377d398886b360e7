/* export's CSV writer (render/csv.h). */
#include "render/csv.h"

#include <math.h>
#include <stdio.h>

#include "core/figures.h"
#include "core/format.h"
#include "core/sanitize.h"

/* CSV numbers are bedtop's own: quoted like every field, never neutralised. */
static void csv_num(struct bt_buf *b, double v, int decimals)
{
    char n[BT_FMT_LONG];
    bt_buf_printf(b, ",\"%s\"", bt_fmt_plain(bt_round_to(v, decimals), decimals, n, sizeof n));
}

static void csv_str(struct bt_buf *b, const char *s)
{
    bt_buf_putc(b, ',');
    bt_san_csv_buf(b, s ? s : "");
}

static void csv_time(struct bt_buf *b, int64_t t)
{
    char iso[32] = "";
    if (t)
        bt_fmt_iso(t, iso, sizeof iso);
    bt_buf_printf(b, ",\"%s\"", iso);
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
                                            "admission_at", "markers",  "events",
                                            "headroom_quality", "binding_side"};
    for (size_t k = 0; k < BT_ARRAY_LEN(eval_cols); k++)
        bt_buf_printf(b, ",\"%s\"", eval_cols[k]);
    bt_buf_putc(b, '\n');
}

double bt_export_signal(const struct bt_store *st, int r, int k, const struct bt_eval *e,
                        int64_t m)
{
    if (bt_signal_info[k].source == BT_SRC_ADMISSION)
        return e->adm_minute ? bt_store_at(st, r, (enum bt_signal)k, e->adm_minute) : NAN;
    return bt_store_at(st, r, (enum bt_signal)k, m);
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
        bt_buf_printf(b, "%s%s", first ? "" : "; ", x->text);
        first = false;
    }
}

void bt_csv_row(struct bt_buf *b, const struct bt_config *cfg, const struct bt_store *st, int r,
                const struct bt_eval *e, int64_t m, const char *markers,
                const struct bt_evlog *log)
{
    bt_csv_row_head(b, cfg, st, r, e, m);
    bt_csv_row_tail(b, r, m, markers, log, e->headroom_q, e->binding);
}

void bt_csv_row_head(struct bt_buf *b, const struct bt_config *cfg, const struct bt_store *st,
                     int r, const struct bt_eval *e, int64_t m)
{
    const struct bt_route *rt = &cfg->routes[r];
    char iso[32];
    bt_fmt_iso(m, iso, sizeof iso);
    bt_buf_printf(b, "\"%s\"", iso);
    csv_str(b, rt->name);
    csv_str(b, rt->model);
    csv_str(b, rt->region);
    csv_str(b, bt_endpoint_name(rt->endpoint));
    csv_str(b, bt_inference_name(rt->inference));
    for (int k = 0; k < BT_SIG_COUNT; k++)
        csv_num(b, bt_export_signal(st, r, k, e, m), 3);
    /* rounded as check --format json rounds them (the table's decimals): one figure,
     * one reading */
    enum bt_fig_id ids[BT_FIG_COUNT];
    int nf = bt_figures_of(BT_FW_CSV, ids);
    for (int k = 0; k < nf; k++) {
        const struct bt_figure *f = &bt_figures[ids[k]];
        csv_num(b, bt_figure_value(f, e), f->decimals);
        if (f->csv_source)
            csv_str(b, f->source ? f->source(e) : NULL);
    }
    csv_str(b, bt_status_name(e->status));
    struct bt_buf w = {0};
    for (int i = 0; i < e->nwarn; i++)
        bt_buf_printf(&w, "%s%s", i ? ";" : "", bt_wcode_name(e->warnings[i].code));
    csv_str(b, bt_buf_str(&w));
    bt_buf_reset(&w);
    csv_time(b, e->now);
    csv_time(b, e->adm_minute);
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
