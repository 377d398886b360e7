/* bedtop's own figures as Prometheus metrics (DESIGN.md "Fleet: bedtop serve
 * and Prometheus"): `bedtop serve`'s GET /metrics and `check --format
 * prometheus` render the same series, in text 0.0.4 or OpenMetrics 1.0.
 *
 * Per route (labels route, model_id, region, endpoint, inference, quota_group):
 *   bedtop_headroom_tokens_per_minute, bedtop_headroom_ratio (0-1),
 *   bedtop_used_tokens_per_minute, bedtop_held_tokens{source}, bedtop_fits_more_calls,
 *   bedtop_in_flight_calls{source}, bedtop_reservation_tokens_per_call,
 *   bedtop_reserved_tokens_per_minute, bedtop_group_used_tokens_per_minute,
 *   bedtop_quota_tokens_per_minute{kind,source,code,name}, bedtop_quota_tokens_per_day{...},
 *   bedtop_quota_requests_per_minute{...}, bedtop_route_status (0 ok, 1 warn,
 *   2 crit, 3 unknown), bedtop_warning{code,severity}, bedtop_data_age_seconds{source},
 *   bedtop_data_timestamp_seconds{source}, bedtop_source_last_success_timestamp_seconds{source},
 *   bedtop_source_last_error_timestamp_seconds{source}, bedtop_max_tokens, bedtop_burndown,
 *   bedtop_signal{signal}: the raw inputs of the evaluation (CloudWatch signals at the
 *   minute evaluated, admission signals at their scrape, day sums at UTC midnight), so a
 *   reader (collectors/prom_collect.c) can put them back in a store and re-evaluate.
 * The poller: bedtop_cloudwatch_metrics_requested_total, bedtop_api_requests_total{api,outcome},
 *   bedtop_cloudwatch_metrics_requested_per_minute, ..._per_day,
 *   bedtop_cloudwatch_cost_usd_per_day, bedtop_status, bedtop_evaluation_timestamp_seconds,
 *   bedtop_build_info{version}.
 * A figure that is unknown is absent: never a NaN sample. */
#ifndef BEDTOP_EXPOSITION_H
#define BEDTOP_EXPOSITION_H
#include <stdbool.h>

#include "render/report.h"

enum bt_expo_format { BT_EXPO_TEXT, BT_EXPO_OPENMETRICS };

#define BT_EXPO_CT_TEXT "text/plain; version=0.0.4; charset=utf-8"
#define BT_EXPO_CT_OPENMETRICS "application/openmetrics-text; version=1.0.0; charset=utf-8"

/* Appends the exposition of report r (and of r->api, when set) to out. */
void bt_expo_render(const struct bt_report *r, enum bt_expo_format f, struct bt_buf *out);
/* Where a streamed render goes: write(arg, p, n) takes each piece in order (about
 * 64 kB each); the pieces joined are what bt_expo_render appends. */
struct bt_expo_sink {
    void (*write)(void *arg, const char *p, size_t n);
    void *arg;
};
/* The same bytes, handed to sink piece by piece as they are rendered: no body is
 * built whole (serve gzips each piece as it comes, issue 38). */
void bt_expo_render_to(const struct bt_report *r, enum bt_expo_format f,
                       const struct bt_expo_sink *sink);
/* bedtop_share_used_tokens_per_minute{group,by,name} of every quota group
 * shown (render/expo_shares.c): the config's share_top_n holders by team, project and
 * route, the rest summed as name="other". */
void bt_expo_shares(const struct bt_report *r, struct bt_buf *out);
/* bedtop_team_spend_usd_per_hour / _today{team,quality} where the admission counters
 * name teams (render/expo_spend.c): the top share_top_n and team="other". */
void bt_expo_spend(const struct bt_report *r, struct bt_buf *out);
/* The first instant after r->now at which the clock alone (the store unchanged)
 * may change a series of r's exposition other than the ages and the evaluation's
 * own instant (bt_eval_changes_at, and the day's sums of bedtop_signal); INT64_MAX:
 * none. serve renders once per data generation and until then (issue 38). */
int64_t bt_expo_changes_at(const struct bt_report *r);
/* The quota_group label of route i: the routes that draw from one quota. */
void bt_expo_quota_group(const struct bt_config *cfg, int i, char *out, size_t n);
#endif
