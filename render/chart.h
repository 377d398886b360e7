/* Line charts of per-minute series for the incident write-up, drawn with cairo
 * (SVG and PNG surfaces) into memory; app/ writes the files. Every chart of one
 * report shares one time axis (the same minutes at the same x), and each series
 * has a colour, a dash pattern and a point symbol, so a monochrome print still
 * tells them apart. */
#ifndef BEDTOP_CHART_H
#define BEDTOP_CHART_H
#include <stdbool.h>
#include <stdint.h>

#include "core/util.h"

#define BT_CHART_STYLES 8
#define BT_CHART_LINES 4 /* dash patterns a series may take apart from its style */
#define BT_CHART_MAX_SERIES 24
#define BT_CHART_MAX_HLINES 4
#define BT_CHART_MAX_MARKERS 64

/* How series number i is drawn: colour, dash and symbol, in words for a legend. */
struct bt_chart_style {
    double r, g, b;
    const char *hex;         /* "#0072B2" */
    double dash[4];
    int ndash;               /* 0: solid */
    const char *dash_name;   /* "solid", "dashed", ... */
    const char *symbol;      /* "circles", "squares", ... */
};
const struct bt_chart_style *bt_chart_style(int i);
/* The colour of marker lines (never a series colour). */
extern const char *const bt_chart_marker_hex;

/* A point's value as a bound: the true value is at most (an upper bound) or at least
 * (a lower bound) what is drawn; marked with an arrow, never drawn as known. */
enum bt_chart_bound { BT_CHART_KNOWN, BT_CHART_AT_MOST, BT_CHART_AT_LEAST };

struct bt_chart_series {
    char label[96];
    double *v;               /* n values, NAN: no data (a gap); owned (bt_chart_free) */
    unsigned char *bound;    /* n enum bt_chart_bound, or NULL: every value known; owned */
    int style;               /* colour and symbol: 0 by the series' index, k > 0
                              * bt_chart_style(k - 1) (one per route across a report) */
    int line;                /* dash: 0 the style's own, k > 0 bt_chart_line_name(k - 1) */
};

struct bt_chart_hline {
    char label[64];
    double value;
};

struct bt_chart {
    char title[128];
    char unit[48];           /* y axis: "% of quota", "requests/min", "ms" */
    int64_t from;            /* first minute (epoch s) */
    int n;                   /* minutes */
    bool zero_based;         /* y axis starts at 0 (else at the lowest value) */
    bool pct;                /* y axis up to at least 100 */
    struct bt_chart_series series[BT_CHART_MAX_SERIES];
    int nseries;
    struct bt_chart_hline hline[BT_CHART_MAX_HLINES];
    int nhline;
    const int64_t *markers;  /* minutes; drawn as numbered vertical lines */
    const char *const *marker_notes; /* NULL, or nmarkers notes printed under the legend */
    int nmarkers;
};
/* "solid", "dashed", "dotted", "dash-dot" (a series' line k - 1) */
const char *bt_chart_line_name(int k);
/* How series s of c is drawn, in words for a legend table. */
void bt_chart_series_look(const struct bt_chart *c, int s, const char **hex, const char **dash,
                          const char **symbol);

void bt_chart_free(struct bt_chart *c);
/* Releases what cairo and fontconfig keep for the process (font caches), so that
 * a leak checker sees only bedtop's own allocations; call once, at the end. */
void bt_chart_shutdown(void);
/* Renders the chart as SVG, or as PNG (twice the resolution), into out. False
 * with a reason when cairo fails. */
bool bt_chart_svg(const struct bt_chart *c, struct bt_buf *out, char *err, size_t errlen);
bool bt_chart_png(const struct bt_chart *c, struct bt_buf *out, char *err, size_t errlen);
#endif
