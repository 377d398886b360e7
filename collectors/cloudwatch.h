/* CloudWatch collector: GetMetricData (JSON 1.0) for every CloudWatch signal
 * of every route, grouped by (profile, Region) and batched 500 queries per
 * request; ListMetrics to learn the cache-metric spelling and, with no routes
 * configured, to discover routes. The pure parts (request building, response
 * parsing, the settled-minute window) are exposed for tests. Files: cw_wire.c (the
 * wire), cw_page.c (a GetMetricData page read), cw_collect.c (the collector),
 * cw_discover.c (route discovery). */
#ifndef BEDTOP_CLOUDWATCH_H
#define BEDTOP_CLOUDWATCH_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "collectors/collector.h"
#include "collectors/cw_page.h"
#include "core/error.h"
#include "core/util.h"

extern const struct bt_collector_ops bt_cloudwatch_collector;

#define BT_CW_MAX_QUERIES 500   /* GetMetricData limit per request */
#define BT_CW_PERIOD 60

/* A dimension set as ListMetrics lists it (Model, or Model and Project). */
#define BT_CW_MAX_DIMS 4
struct bt_cw_dimset {
    int n;
    const char *name[BT_CW_MAX_DIMS];
    const char *value[BT_CW_MAX_DIMS];
};
#define BT_CW_MAX_SUM 8      /* series summed into one figure (projects, profile ID + ARN) */

/* One MetricDataQuery: which route and signal, and what CloudWatch calls it. */
struct bt_cw_query {
    int route;
    enum bt_signal signal;
    bool alt;                /* the other spelling of a cache metric (Id suffix _a) */
    int period;              /* seconds; 0: BT_CW_PERIOD (one day for the DAY_* signals) */
    const char *ns;          /* AWS/Bedrock or AWS/BedrockMantle */
    const char *metric;
    const char *stat;
    /* nsum > 0: the figure is SUM([...]) of the metric over these dimension sets
     * (a mantle model listed only per Model+Project, an application profile under
     * its ARN and its bare ID), each a hidden MetricStat; sumkey tells sets apart
     * when queries are shared. nsum 0: the route's model under ModelId / Model. */
    const struct bt_cw_dimset *sum;
    int nsum;
    const char *sumkey;
};
/* Entries a query takes in a request: 1, or its summed series + the expression. */
int bt_cloudwatch_query_weight(const struct bt_cw_query *q);

/* The metric spellings a route's account publishes for the two cache metrics
 * (ListMetrics); NULL members mean the signal table's spelling. */
struct bt_cw_spelling {
    const char *cache_read;
    const char *cache_write;
    bool both;               /* not listed yet: ask for both spellings (check mode) */
    /* ListMetrics answered and lists neither spelling for the ModelId: not asked (a
     * model that starts caching is seen at the next listing, every 6 hours) */
    bool no_read, no_write;
};

/* Appends route ri's queries to out (at most max); returns how many. */
int bt_cloudwatch_route_queries(const struct bt_route *rt, int ri,
                                const struct bt_cw_spelling *sp, struct bt_cw_query *out,
                                int max);
/* A runtime route's day sums of input, output, cache-write and cache-read tokens
 * (cache tokens where ListMetrics lists them for the ModelId; the DAY_*
 * signals: hourly datapoints from UTC midnight, Period 3600, summed into one value
 * for the day): what `check` needs for the daily-token total instead of every
 * minute since midnight. Returns how many. */
int bt_cloudwatch_day_queries(const struct bt_route *rt, int ri, const struct bt_cw_spelling *sp,
                              struct bt_cw_query *out, int max);
/* Query Id "r<route>_s<signal>" (the other cache spelling: "..._a"), valid for
 * ^[a-z][a-zA-Z0-9_]*$. */
void bt_cloudwatch_query_id(int route, enum bt_signal sig, char *out, size_t n);
bool bt_cloudwatch_parse_id(const char *id, int *route, int *sig);
/* The 5-minute tier: EstimatedTPMQuotaUsage, latency percentiles, client/server
 * errors and time to first token, polled every detail_interval (default 5 minutes,
 * the minutes between backfilled in the same request) instead of every poll; what
 * the headroom frame needs (invocations, throttles, input, output, cache tokens where
 * listed, average latency for Little's law) goes every poll, or every
 * BT_CADENCE_SLOW_S for a calm route (core/cadence.h). */
bool bt_cloudwatch_signal_detail(enum bt_signal s);
/* Shared queries: for q[idx[0..n)], rep[i] = the lowest index among those asking
 * the same (namespace, metric, stat, period, dimension value, account), so every
 * route needing one metric costs one query. Returns the number of distinct ones. */
int bt_cloudwatch_dedup(const struct bt_route *routes, const struct bt_cw_query *q,
                        const int *idx, int n, int *rep);
/* Requests needed for n queries: ceil(n / 500). */
int bt_cloudwatch_nrequests(int nqueries);
/* GetMetricData body for queries q[0..nq) over [start, end), with an optional NextToken. */
void bt_cloudwatch_request_json(struct bt_buf *out, const struct bt_route *routes,
                                const struct bt_cw_query *q, int nq, int64_t start,
                                int64_t end, const char *next_token);
/* The same for the queries q[idx[0..nq)] (a poll's wire indices into its query set). */
void bt_cloudwatch_request_json_of(struct bt_buf *out, const struct bt_route *routes,
                                   const struct bt_cw_query *q, const int *idx, int nq,
                                   int64_t start, int64_t end, const char *next_token);

/* ListMetrics: body for AWS/Bedrock metrics with a ModelId dimension; linked: a
 * monitoring account also lists its source accounts' metrics (IncludeLinkedAccounts),
 * only owning_account's when given (OwningAccount). */
void bt_cloudwatch_list_json(struct bt_buf *out, const char *next_token, bool linked,
                             const char *owning_account);
/* The same for a namespace and a dimension every listed metric has (AWS/BedrockMantle,
 * Model). */
void bt_cloudwatch_list_json_ns(struct bt_buf *out, const char *ns, const char *dim,
                                const char *next_token, bool linked, const char *owning_account);
/* The reserved service tier only: AWS/Bedrock Invocations listed with ModelId and
 * ResolvedServiceTier=reserved (check mode's one page instead of the whole listing). */
void bt_cloudwatch_list_tier_json(struct bt_buf *out, const char *next_token, bool linked,
                                  const char *owning_account);
/* One metric of a ListMetrics answer, with its whole dimension set. */
struct bt_cw_listed {
    const char *ns, *metric, *account; /* account: OwningAccounts entry, NULL none */
    struct bt_cw_dimset dims;
    bool more_dims;          /* it had more than BT_CW_MAX_DIMS dimensions */
};
bool bt_cloudwatch_parse_list_sets(const char *body, size_t len,
                                   void (*fn)(void *arg, const struct bt_cw_listed *m), void *arg,
                                   char **next_token, char *err, size_t errlen);
/* The value of dimension name in d, NULL when absent. */
const char *bt_cw_dim(const struct bt_cw_dimset *d, const char *name);
/* Calls fn(arg, metric, model_id, account) for every metric carrying a ModelId
 * dimension; account: its OwningAccounts entry, NULL when the answer has none. */
bool bt_cloudwatch_parse_list(const char *body, size_t len,
                              void (*fn)(void *arg, const char *metric, const char *model_id,
                                         const char *account),
                              void *arg, char **next_token, char *err, size_t errlen);

/* Settled minutes: minute m is complete once now >= m + 60 + lag + 60. */
int64_t bt_cloudwatch_newest_settled(int64_t now, double lag);
/* EndTime of a poll at now: the current (partial) minute is excluded. */
int64_t bt_cloudwatch_end(int64_t now);
/* After a successful poll over [.., end) at now: the newest settled minute
 * fetched (never moves back). */
int64_t bt_cloudwatch_settle(int64_t now, double lag, int64_t end, int64_t prev);
/* StartTime for a route: the minute after the newest settled minute fetched
 * (settled_through, 0: never), else the backfill start. */
int64_t bt_cloudwatch_route_start(int64_t now, int64_t settled_through, int backfill_minutes);
/* Backfill on the first poll: live mode at least 3 hours, check mode at least
 * 10 minutes, and in both since UTC midnight (the daily-token total), capped
 * at the store's history. */
int bt_cloudwatch_backfill_minutes(int64_t now, enum bt_run_mode mode, int history_minutes);
/* Whether polls also ask the day's token sums since 00:00 UTC (hourly datapoints):
 * always in check mode (one poll), and live whenever the minutes kept
 * (`history`) cannot reach back to midnight, so tokens today never count only
 * the history window. Not for a backfill window (its minutes are the record). */
bool bt_cloudwatch_day_sums(enum bt_run_mode mode, int history_minutes, bool window);
/* Live day sums asked once an hour, to the hour, the minutes after it kept by the
 * store (a history of 2 hours or more); else with every poll, to its end. */
bool bt_cloudwatch_day_hourly(enum bt_run_mode mode, int history_minutes);
/* Short route name from a model ID: us.anthropic.claude-sonnet-4-5-20250929-v1:0
 * -> us.claude-sonnet-4-5. */
void bt_cloudwatch_short_name(const char *model_id, char *out, size_t n);

/* GetMetricData is billed per metric requested: distinct metrics per poll (the
 * largest poll, detail queries included) and per day (the every-poll queries x
 * 86400 / interval + the detail ones x 86400 / detail_interval). */
void bt_cloudwatch_cost(void *self, double *metrics_per_poll, double *metrics_per_day);
/* What a `check` run fetched, for its state file (app/check_state.c), so the next run
 * asks only the minutes it has not seen: per route the newest settled minute of each
 * tier, the last 5-minute-tier poll and what ListMetrics showed (and when). */
struct bt_cw_resume {
    int64_t settled, settled_detail, settled_throttle;
    int64_t detail_at;       /* the last poll that asked the 5-minute tier (0: none) */
    int64_t listed_at;       /* ListMetrics (AWS/Bedrock) answered then (0: never) */
    unsigned seen;           /* what it listed for the ModelId (cache spellings, tier) */
};
void bt_cloudwatch_resume_get(void *self, int route, struct bt_cw_resume *out);
/* Before the first tick. A group whose every route was listed less than 6 hours ago
 * takes those spellings instead of asking both; one listed longer ago (or never) is
 * listed again first, as the live collector does. */
void bt_cloudwatch_resume_set(void *self, int route, const struct bt_cw_resume *in);
/* A state file is kept (none read yet, or one refused): this run lists AWS/Bedrock
 * too, so the next run knows the spellings. */
void bt_cloudwatch_resume_start(void *self);
/* GetMetricData/ListMetrics requests sent so far (pages included). */
unsigned long bt_cloudwatch_requests(void *self);
/* With no routes configured: ListMetrics AWS/Bedrock (ModelId) for the Region
 * and add one route per ModelId. Runs ctx->http itself until done (startup,
 * before the store exists). Returns routes added, or -1 with err set. */
int bt_cloudwatch_discover(struct bt_ctx *ctx, struct bt_config *cfg, enum bt_errkind *kind,
                           char *err, size_t errlen);
/* The same discovery driven by a running loop (serve's reload: the loop goes on
 * serving while it runs): its requests go on http, the client the loop waits on;
 * ctx (and its cfg: Region, profile, account) must outlive it. NULL, with kind and
 * err set, when it cannot start. */
struct bt_cw_discovery;
struct bt_cw_discovery *bt_cloudwatch_discover_start(struct bt_ctx *ctx, struct bt_http *http,
                                                     enum bt_errkind *kind, char *err,
                                                     size_t errlen);
bool bt_cloudwatch_discover_done(const struct bt_cw_discovery *d);
/* Adds the routes found to cfg and frees d: routes added, or -1 with kind and err
 * set. Not done yet: its requests are cancelled (given up), -1 "no answer". */
int bt_cloudwatch_discover_finish(struct bt_cw_discovery *d, struct bt_config *cfg,
                                  enum bt_errkind *kind, char *err, size_t errlen);
#endif
