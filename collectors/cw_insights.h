/* Unseen callers: one CloudWatch Metrics Insights query per Region and metric every
 * 5 minutes (GetMetricData with an Expression; AWS allows one such query per request)
 *   SELECT SUM(InputTokenCount) FROM SCHEMA("AWS/Bedrock", ModelId) GROUP BY ModelId
 * and the same for InvocationThrottles, lists every ModelId with traffic in the
 * Region. Those the config does not name that draw on a configured route's quota
 * (core: bt_quota_shared_by) are said to that route in an UNSEEN_CALLERS event,
 * with their input tokens and throttles per minute; the UNSEEN_CALLERS warning
 * (core/rules.c) shows them. Each query's returned series are counted as metrics
 * requested (core/apicost.c), as GetMetricData bills a query by the metrics it
 * reads. Live polling only (the dashboard, serve, record): `check` runs once, and from
 * cron it would query every run. The pure parts (request, answer) are exposed for
 * tests. */
#ifndef BEDTOP_CW_INSIGHTS_H
#define BEDTOP_CW_INSIGHTS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "collectors/collector.h"
#include "core/util.h"

extern const struct bt_collector_ops bt_cw_insights_collector;

#define BT_INSIGHTS_EVERY 300     /* seconds between a Region's queries */
#define BT_INSIGHTS_WINDOW 300    /* the minutes summed: the last five settled */
#define BT_INSIGHTS_LAG 120       /* CloudWatch's lag: the window ends this long before now */

enum bt_insights_metric { BT_INS_INPUT, BT_INS_THROTTLES, BT_INS_N };
/* "SELECT SUM(InputTokenCount) FROM SCHEMA(\"AWS/Bedrock\", ModelId) GROUP BY ModelId" */
const char *bt_insights_expression(enum bt_insights_metric k);
/* The GetMetricData body of metric k's query over [start, end), Period 60. */
void bt_insights_request_json(struct bt_buf *out, enum bt_insights_metric k, int64_t start,
                              int64_t end, const char *next_token);
/* One page of the answer: fn(arg, model_id, sum of the values, datapoints) for each
 * series (its Label is the ModelId grouped by); *series counts them (the metrics
 * billed), *next_token gets a malloc'd NextToken or NULL. A series whose Label is no
 * plausible ModelId, or a value negative, NaN or past 1e12, is skipped. */
bool bt_insights_parse_page(const char *body, size_t len,
                            void (*fn)(void *arg, const char *model_id, double sum, int n),
                            void *arg, int *series, char **next_token, char *err,
                            size_t errlen);
/* The queries' metrics a day at their cadence: each query's series of its last whole
 * answer (before one, the Region's configured runtime routes), every
 * BT_INSIGHTS_EVERY. */
void bt_cw_insights_cost(void *self, double *metrics_per_day);
#endif
