/* The figure table (issues 31, 33, 34; htop's Process_fields[] is the model): each
 * per-route figure of an evaluation described once, with its name in every writer
 * (JSON key, CSV column, Prometheus series and help), its unit, its rounding, the
 * side it belongs to and how to read its value, quality and source from a struct
 * bt_eval. render/csv.c, render/exposition.c, render/report.c (JSON),
 * render/report_text.c (check's columns) and tui/detail.c iterate it instead of
 * writing each figure out by hand; adding a figure is one row
 * in core/figures.c (and its test).
 *
 * One side per number (issue 34): every figure belongs to the route's token side
 * (tpm; a mantle route's binding input or output side) or to the side that binds
 * (headroom_pct and fits_more come from one side, chosen, never mixed); a writer
 * that prints a percentage prints it beside figures of its own side and names it. */
#ifndef BEDTOP_FIGURES_H
#define BEDTOP_FIGURES_H
#include <stdbool.h>
#include <stddef.h>

#include "core/headroom.h"

/* Which side a figure is of. */
enum bt_fig_side {
    BT_FS_NONE,    /* of no one side (calls in flight, R per call) */
    BT_FS_TOKEN,   /* the token side: e->token_side (tpm, mantle input/output) */
    BT_FS_BINDING, /* the side that binds: e->binding */
};

/* Where a figure sits in the route's JSON object (order within it: json_at). */
enum bt_fig_json {
    BT_FJ_NONE,
    BT_FJ_TPM,      /* the "tpm" object */
    BT_FJ_HEADROOM, /* the route object's headroom run (reservation_per_call .. fits_more) */
    BT_FJ_CALLS,    /* the route object's call rates (invocations_per_min, throttles_per_min) */
    BT_FJ_LATENCY,  /* the "latency_ms" object */
    BT_FJ_TODAY,    /* the route object's limit and day run (concurrency_limit .. tokens_today_group) */
    BT_FJ_BURNDOWN, /* the route object's output allowance run (max_tokens .. burndown_measured) */
    BT_FJ_TIERS,    /* the "tiers" object (where the route has a tier series) */
};

enum bt_fig_id {
    BT_FIG_SETTLED,
    BT_FIG_ESTIMATED,
    BT_FIG_HELD,
    BT_FIG_USED,
    BT_FIG_RESERVED,
    BT_FIG_GROUP_USED,
    BT_FIG_QUOTA,
    BT_FIG_RESERVATION,
    BT_FIG_IN_FLIGHT,
    BT_FIG_HEADROOM_TPM,
    BT_FIG_HEADROOM_PCT,
    BT_FIG_FITS,
    BT_FIG_USD_PER_HOUR,
    BT_FIG_THROTTLES,
    BT_FIG_LAT_P99,
    BT_FIG_INVOCATIONS,
    BT_FIG_LAT_P50,
    BT_FIG_CONC_LIMIT,
    BT_FIG_TOKENS_TODAY,
    BT_FIG_GROUP_TODAY,
    BT_FIG_MAX_TOKENS,
    BT_FIG_BURNDOWN,
    BT_FIG_BURNDOWN_MEASURED,
    BT_FIG_AVG_OUTPUT,
    BT_FIG_REQUESTS,
    BT_FIG_TIER_SHARE,
    BT_FIG_TIER_INVOCATIONS,
    BT_FIG_TIER_INPUT,
    BT_FIG_TIER_OUTPUT,
    BT_FIG_INPUT_TOKENS,
    BT_FIG_ADMITTED,
    BT_FIG_RETRIES,
    BT_FIG_ADM_THROTTLED,
    BT_FIG_COMPLETED,
    BT_FIG_COUNT
};

/* How a figure is printed as text (core/format.h). */
enum bt_fig_fmt {
    BT_FF_TOKENS,  /* bt_fmt_tokens: 806k, 1.00M */
    BT_FF_COUNT,   /* bt_fmt_count; with `of`: "3/8" (in flight of the limit) */
    BT_FF_PCT_Q,   /* bt_fmt_pct_q: the figure's quality marks it (<41.0 at most) */
    BT_FF_LATENCY, /* bt_fmt_latency: 900ms, 4.1s */
};

struct bt_figure {
    const char *name;       /* the figure's own word, as the detail view names it */
    const char *unit;       /* "tokens/min", "tokens", "calls", "percent" */
    int decimals;           /* JSON and CSV round to this (bt_round_to), every writer alike */
    enum bt_fig_side side;
    double (*value)(const struct bt_eval *e);          /* NAN: unknown */
    enum bt_quality (*quality)(const struct bt_eval *e); /* NULL: none of its own */
    const char *(*source)(const struct bt_eval *e);    /* NULL: none; may return NULL */
    /* JSON: the key, then its source, quality, the version-2 bool "is an upper bound"
     * and an older name of the same value, each after the other where set */
    enum bt_fig_json json_in;
    int json_at;            /* order in its object (1 first) */
    const char *json, *json_source, *json_quality, *json_upper, *json_alias;
    /* CSV: the column (order csv_at, 1 first; 0 no column) and its source column */
    int csv_at;
    const char *csv, *csv_source;
    /* Prometheus: the family (order prom_at among the figure families, 1 first; 0
     * none), its help, a divisor (percent -> ratio) and its source label's key */
    int prom_at;
    const char *prom, *prom_help;
    double prom_scale; /* the value is divided by it (percent: 100, a ratio) */
    const char *prom_source;
    /* Text (check and replay --at, render/report_text.c): the column of the
     * 80-column table (text_at, 1 first; 0 none) and of --wide (wide_at), each with
     * its head and width; how the value prints (fmt), the figure it is counted out
     * of ("3/8": in flight of the concurrency limit), whether it is not published
     * for the route ("n/p": mantle's throttles), and --wide's own SOURCE column
     * after it (its source, left-aligned in wide_source_w) */
    int text_at, wide_at;
    const char *text_head, *wide_head;
    int text_w, wide_w;
    enum bt_fig_fmt fmt;
    double (*of)(const struct bt_eval *e);
    bool (*unpublished)(const struct bt_eval *e);
    const char *wide_source_head;
    int wide_source_w;
    /* plan (render/plan.c): the row of its what-if table (plan_at, 1 first; 0 none)
     * under plan_label, and in its JSON frames the figure's JSON key, then its
     * source (plan_source) and its quality (plan_quality) where set. The binding
     * side's name comes before the first figure of the side that binds. */
    int plan_at;
    const char *plan_label;
    bool plan_source, plan_quality;
};

extern const struct bt_figure bt_figures[BT_FIG_COUNT];

/* The writers that iterate the table. */
enum bt_fig_writer { BT_FW_JSON_TPM, BT_FW_JSON_HEADROOM, BT_FW_JSON_CALLS, BT_FW_JSON_LATENCY,
                     BT_FW_CSV, BT_FW_PROM, BT_FW_TEXT, BT_FW_TEXT_WIDE, BT_FW_PLAN,
                     BT_FW_JSON_TODAY, BT_FW_JSON_BURNDOWN, BT_FW_JSON_TIERS,
                     BT_FW_COUNT };
/* The figures a writer shows, in its order: ids[0..return-1] (ids holds BT_FIG_COUNT). */
int bt_figures_of(enum bt_fig_writer w, enum bt_fig_id *ids);

/* The side figure f of e belongs to (BT_SIDE_COUNT: none). */
enum bt_side bt_figure_side(const struct bt_figure *f, const struct bt_eval *e);
/* Its value, NAN when unknown. */
double bt_figure_value(const struct bt_figure *f, const struct bt_eval *e);
/* Its value as text (fmt; "n/p" where not published; "-" unknown): out. */
char *bt_figure_text(const struct bt_figure *f, const struct bt_eval *e, char *out, size_t n);

/* Figure id of e as the table reads it (the views read figures so, never the
 * evaluation's fields): its value (NAN unknown), its quality (BT_QL_KNOWN where the
 * figure has none of its own) and its source (none where it has none). */
double bt_fig(const struct bt_eval *e, enum bt_fig_id id);
enum bt_quality bt_fig_quality(const struct bt_eval *e, enum bt_fig_id id);
const char *bt_fig_source(const struct bt_eval *e, enum bt_fig_id id, const char *none);

/* What "fits N more ..." counts on side s: "in flight" (tpm, mantle, reserved,
 * concurrent: calls that could be in flight at once), "calls this minute" (rpm),
 * "calls today" (the daily quotas). */
const char *bt_side_fits_word(enum bt_side s);

/* ---- a side's figures (struct bt_side_fig), each described once ----
 * The route JSON's side objects ("rpm", "daily", ..., mantle's "input" and
 * "output") write these rows in this order; adding a side figure is one row in
 * core/figures.c (and its test). */
struct bt_side_figure {
    const char *json;     /* its key in a side's object */
    const char *json_tpm; /* the key in mantle's input and output objects (NULL: json) */
    int decimals;         /* a number's rounding (bt_round_to; 0: whole) */
    double (*value)(const struct bt_side_fig *f);     /* a number, NAN unknown; or */
    const char *(*text)(const struct bt_side_fig *f); /* a word (NULL or "": null) */
};
extern const struct bt_side_figure bt_side_figures[];
extern const int bt_side_figures_n;

/* The route JSON's "quota" object: the quota of each side under its quota kind's
 * name (bt_quota_kind_name), in this order, where shown(e) (NULL: always). */
struct bt_quota_figure {
    enum bt_quota_kind kind;
    enum bt_side side;
    bool (*shown)(const struct bt_eval *e);
};
#define BT_QUOTA_FIGURES 9
extern const struct bt_quota_figure bt_quota_figures[BT_QUOTA_FIGURES];
/* ---- the raw inputs, as the evaluation read them ---- */
/* The minute a route's day sums run through at `now`: the last whole minute before
 * it, as check's one-day sums run to the poll's end, or the evaluated minute where
 * that is later (0: the route has no evaluated minute). */
int64_t bt_eval_day_through(const struct bt_eval *e, int64_t now);
/* Signal s of route e->route where its evaluation read it (NAN unknown): a daily
 * signal's day sum through bt_eval_day_through (none for mantle; the cache reads'
 * only where they were asked with the others), an admission signal at the newest
 * scrape, the others at the evaluated minute. */
double bt_eval_signal(const struct bt_store *st, const struct bt_eval *e, enum bt_signal s);
/* Signal s of e's route as an export row of data minute m reads it (NAN unknown): an
 * admission signal at the scrape e's evaluation read (none: unknown), every other one,
 * the day sums' minutes too, as the store holds it at m. bt_eval_signal reads a
 * per-minute signal so at the evaluated minute. */
double bt_eval_signal_row(const struct bt_store *st, const struct bt_eval *e, enum bt_signal s,
                          int64_t m);
#endif
