/* What polling costs, measured where requests are sent: AWS API requests by
 * API and outcome, and CloudWatch metrics requested (GetMetricData is billed
 * per metric requested). Collectors increment it; bedtop serve's /metrics, the
 * status bar and `check` read it. Pure counters: no I/O, no clock of its own. */
#ifndef BEDTOP_APICOST_H
#define BEDTOP_APICOST_H
#include <stdbool.h>
#include <stdint.h>

/* The public GetMetricData price: USD 0.01 per 1,000 metrics requested. */
#define BT_GMD_USD_PER_METRIC (0.01 / 1000)
#define BT_API_MAX 16            /* distinct API names counted */
#define BT_COST_MINUTES 1440     /* per-minute buckets kept: one day */

enum bt_api_outcome { BT_API_OK, BT_API_THROTTLED, BT_API_ERROR, BT_API_TRANSPORT, BT_API_NOUTCOMES };
const char *bt_api_outcome_name(enum bt_api_outcome o); /* success throttled error transport */

struct bt_api_count {
    char api[48];            /* GetMetricData, ListMetrics, ListServiceQuotas, ... */
    uint64_t n[BT_API_NOUTCOMES];
};

struct bt_api_cost {
    struct bt_api_count api[BT_API_MAX];
    int napi;
    uint64_t metrics_total;  /* CloudWatch metrics requested since start */
    int64_t started;         /* epoch s of the first count (0: none yet) */
    int64_t minute[BT_COST_MINUTES]; /* ring: minute start of each bucket */
    uint32_t per_minute[BT_COST_MINUTES];
};

/* One finished request of api (its final outcome, after retries). */
void bt_api_cost_request(struct bt_api_cost *c, const char *api, enum bt_api_outcome o);
/* n metrics requested at time now (epoch s). c may be NULL (nothing counted). */
void bt_api_cost_metrics(struct bt_api_cost *c, int64_t now, unsigned n);
/* Measured rates at now: metrics requested per minute (mean over the last hour,
 * or since the first request when that is shorter), per day (the last 24 h once
 * a day has passed, else the hourly rate x 1440) and that day's price in USD.
 * All NAN before anything was requested. */
void bt_api_cost_rates(const struct bt_api_cost *c, int64_t now, double *per_min,
                       double *per_day, double *usd_per_day);
#endif
