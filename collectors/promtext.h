/* Pure parsers (no I/O) for what admission controllers expose: Prometheus
 * text 0.0.4, OpenMetrics 1.0, bedtop's JSON form and a Prometheus server's
 * /api/v1/query vector; all produce the same flat list of series. */
#ifndef BEDTOP_PROMTEXT_H
#define BEDTOP_PROMTEXT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BT_PROM_MAX_LINE 65536      /* bytes per line, newline excluded */
#define BT_PROM_MAX_SERIES 100000   /* series per document */
#define BT_PROM_MAX_LABELS 64       /* labels per series */

enum bt_prom_format { BT_PROM_TEXT, BT_PROM_OPENMETRICS };

enum bt_prom_type {
    BT_PROM_UNTYPED, BT_PROM_COUNTER, BT_PROM_GAUGE, BT_PROM_HISTOGRAM, BT_PROM_SUMMARY,
    BT_PROM_GAUGE_HISTOGRAM, BT_PROM_STATESET, BT_PROM_INFO
};

struct bt_prom_label {
    char *name;
    char *value;
};

struct bt_prom_family {
    char *name;              /* OpenMetrics: counter family without _total */
    enum bt_prom_type type;
    char *help;              /* unescaped, NULL if none */
    char *unit;              /* OpenMetrics # UNIT, NULL if none */
    bool has_type;
    int line;
};

struct bt_prom_series {
    char *name;              /* the sample name as exposed: foo_total, foo_bucket, foo */
    int family;              /* index in families, -1 when no metadata names it */
    struct bt_prom_label *labels;
    int nlabels;
    double value;            /* may be NaN or +/-Inf */
    bool has_time;
    double time;             /* epoch seconds (0.0.4 milliseconds are converted) */
    int line;                /* source line, 0 for JSON forms */
    bool shared;             /* name and labels are an earlier series' (a matrix point) */
};

struct bt_prom_doc {
    struct bt_prom_family *families;
    int nfamilies, families_cap;
    struct bt_prom_series *series;
    int nseries, series_cap;
    int duplicates;          /* 0.0.4 only: later duplicates replaced earlier ones */
    char warning[160];       /* first duplicate seen, "line N: ..." */
    /* lookup tables (internal) */
    struct bt_prom_slot *fam_idx, *ser_idx;
    size_t fam_cap, ser_cap;
};

struct bt_prom_bucket {
    double le;               /* upper bound, +Inf for the last */
    double count;            /* cumulative count */
};

void bt_prom_init(struct bt_prom_doc *d);
void bt_prom_free(struct bt_prom_doc *d);
/* OpenMetrics when the Content-Type says application/openmetrics-text, else text 0.0.4. */
enum bt_prom_format bt_prom_format_of(const char *content_type);
const char *bt_prom_type_name(enum bt_prom_type t);

/* Parses an exposition into an empty doc. On failure returns false, leaves
 * the doc empty and writes "line N: why" into err. */
bool bt_prom_parse(struct bt_prom_doc *d, const char *text, size_t len, enum bt_prom_format fmt,
                   char *err, size_t errlen);

/* bedtop's JSON form: {"routes":{"<route>":{"<metric>":number |
 * {"buckets":{"<le>":cumulative,...,"+Inf":n},"sum":s,"count":n}}}}.
 * Each value becomes a series with label route="<route>"; a histogram becomes
 * <metric>_bucket{le}, <metric>_sum and <metric>_count as in the text format. */
bool bt_prom_parse_json(struct bt_prom_doc *d, const char *text, size_t len, char *err,
                        size_t errlen);

/* A Prometheus server's /api/v1/query answer (resultType vector or scalar) or
 * /api/v1/query_range answer (matrix: one series per point, each with its
 * time): appends series named `name` (NULL: the __name__ label), labels from
 * "metric". */
bool bt_prom_parse_api(struct bt_prom_doc *d, const char *name, const char *text, size_t len,
                       char *err, size_t errlen);

/* Label value of a series, NULL if absent. */
const char *bt_prom_label(const struct bt_prom_series *s, const char *name);
/* Family type of a series (UNTYPED when it has no metadata). */
enum bt_prom_type bt_prom_series_type(const struct bt_prom_doc *d, const struct bt_prom_series *s);

/* Prometheus's histogram_quantile over cumulative buckets (sorted in place):
 * linear interpolation inside the bucket holding rank q*count; NaN without a
 * +Inf bucket, with fewer than two buckets or with no observations; the
 * highest finite bound when the rank falls in the +Inf bucket. */
double bt_prom_quantile(double q, struct bt_prom_bucket *b, size_t n);
#endif
