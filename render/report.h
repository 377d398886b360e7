/* `bedtop check` output: JSON (data/check.schema.json), an aligned text table and
 * Prometheus text for node-exporter's textfile collector (render/exposition.h). */
#ifndef BEDTOP_REPORT_H
#define BEDTOP_REPORT_H
#include <cjson/cJSON.h>

#include "core/ceiling.h"
#include "core/headroom.h"
#include "core/plan.h"
#include "core/util.h"

struct bt_api_cost;

enum bt_format { BT_FMT_TEXT, BT_FMT_JSON, BT_FMT_PROMETHEUS };
bool bt_format_parse(const char *s, enum bt_format *out);

struct bt_report {
    const struct bt_config *cfg;
    const struct bt_store *store;
    int64_t now;
    struct bt_eval *evals;     /* one per route */
    int n;
    enum bt_status status;     /* worst status of the routes shown, unknown counted
                                * as unknown_as: the exit code of check */
    const char *mode;          /* "live", "demo", "replay" */
    const char *recorded_mode; /* replay: the recording's mode (live, demo, backfill); NULL else */
    const char *replica;       /* serve --replica: a label on every series, NULL none */
    double metrics_per_poll, metrics_per_day; /* NAN: unknown */
    const struct bt_api_cost *api; /* requests and metrics counted (NULL: none) */
    const bool *keep;          /* per route: shown (NULL: every route) */
    enum bt_status unknown_as; /* how a route whose status is unknown counts (BT_ST_WARN) */
    bool wide;                 /* text: every column, no wrapping; else 80 columns */
    /* check: every route's forecast and observed ceiling (NULL: not computed, as in
     * export's rows and serve) */
    struct bt_forecast *forecast;
    struct bt_ceiling *ceiling;
    /* bt_report_write: where what is written goes as it is written (NULL: kept) */
    const struct bt_report_sink *sink;
    /* the quota groups' share lists, each computed once for every member's route
     * JSON (core/shares.h; NULL: each route's computed anew). The JSON writers keep
     * one for the routes they write; the caller of bt_report_route_write may. */
    struct bt_share_memo *share_memo;
};

/* Evaluates every route at now (status as with every route shown and unknown
 * counted as warn). Caller frees r->evals. */
void bt_report_build(struct bt_report *r, const struct bt_config *cfg,
                     const struct bt_store *st, int64_t now);
/* Shows only the routes with keep[i] (NULL: all) and counts an unknown route as
 * unknown_as (BT_ST_WARN, BT_ST_CRIT or BT_ST_UNKNOWN); recomputes r->status. */
void bt_report_select(struct bt_report *r, const bool *keep, enum bt_status unknown_as);
/* Route i is shown (check --route). Inline, as bt_report_flush: the writers the report
 * picks (render/exposition.c, render/report_text.c) read the report without calling
 * back into render/report.c. */
static inline bool bt_report_shows(const struct bt_report *r, int i)
{
    return !r->keep || r->keep[i];
}
/* "warn", "crit" or "unknown" -> the status; false for anything else. */
bool bt_status_parse(const char *s, enum bt_status *out);
/* Computes r->forecast and r->ceiling (core/plan.h, core/ceiling.h) for check. */
void bt_report_decide(struct bt_report *r);
void bt_report_free(struct bt_report *r);
cJSON *bt_report_route_json(const struct bt_report *r, int i);
/* The same route's members written through w into its open object (export streams
 * them as text: core/json.h's bt_jw_text). */
struct bt_jw;
void bt_report_route_write(const struct bt_report *r, int i, struct bt_jw *w);
cJSON *bt_report_json(const struct bt_report *r);
void bt_report_render(const struct bt_report *r, enum bt_format f, bool color, struct bt_buf *out);
/* Where a report goes as it is written: flush takes what out holds (and empties
 * it) whenever it holds some 64 kB, and once at the end. */
struct bt_report_sink {
    void (*flush)(void *ctx, struct bt_buf *out);
    void *ctx;
};
/* bt_report_render, the same bytes, handed to sink as they are written (NULL: all
 * of it left in out). The JSON is built and printed a route at a time. */
void bt_report_write(const struct bt_report *r, enum bt_format f, bool color, struct bt_buf *out,
                     const struct bt_report_sink *sink);
/* Hands out to the sink once it holds this much (and at the end) */
#define BT_REPORT_SINK_AT (64u << 10)
/* out handed to sink (NULL: kept in out) once it holds BT_REPORT_SINK_AT, or if last */
static inline void bt_report_sink_flush(const struct bt_report_sink *sink, struct bt_buf *out,
                                        bool last)
{
    if (sink && sink->flush && (last || out->len >= BT_REPORT_SINK_AT))
        sink->flush(sink->ctx, out);
}
/* A writer's "out may go now": out handed to r's sink once it holds some 64 kB (the
 * text writer calls it between its sections and its warnings). */
static inline void bt_report_flush(const struct bt_report *r, struct bt_buf *out)
{
    bt_report_sink_flush(r->sink, out, false);
}
/* The text format (render/report_text.c); color adds ANSI colours to statuses. */
void bt_report_render_text(const struct bt_report *r, bool color, struct bt_buf *out);
#endif
