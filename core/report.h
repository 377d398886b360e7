/* `bedtop check` output: JSON (DESIGN.md schema), an aligned text table and
 * Prometheus text for node-exporter's textfile collector (core/exposition.h). */
#ifndef BEDTOP_REPORT_H
#define BEDTOP_REPORT_H
#include <cjson/cJSON.h>

#include "core/headroom.h"
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
    enum bt_status status;     /* worst route status */
    const char *mode;          /* "live", "demo", "replay" */
    double metrics_per_poll, metrics_per_day; /* NAN: unknown */
    const struct bt_api_cost *api; /* requests and metrics counted (NULL: none) */
};

/* Evaluates every route at now. Caller frees r->evals. */
void bt_report_build(struct bt_report *r, const struct bt_config *cfg,
                     const struct bt_store *st, int64_t now);
void bt_report_free(struct bt_report *r);
cJSON *bt_report_route_json(const struct bt_report *r, int i);
cJSON *bt_report_json(const struct bt_report *r);
void bt_report_render(const struct bt_report *r, enum bt_format f, bool color, struct bt_buf *out);
#endif
