/* Admission-controller counters (bedtop.conf(5), examples/admission-counters.prom).
 *
 * Sources, each fetched with an unsigned GET through the shared HTTP layer:
 *   - per route: `admission = URL` in a [route] section; only that route's data
 *     is taken from it (series labelled route=<that route>, model_id=<its
 *     model>, or carrying neither label);
 *   - global: `admission = URL` in [bedtop] or `--admission URL` (which wins);
 *     it serves every route without a URL of its own, by label route or model_id.
 * A URL answers Prometheus text 0.0.4, OpenMetrics 1.0 (by Content-Type) or
 * the JSON form {"routes":{"<route>":{...}}} (Content-Type *json*, or a body
 * starting with '{'); see examples/README.md.
 *
 * A Prometheus server that already aggregates a fleet of workers is named as
 *   prometheus+http://HOST:PORT[/PREFIX]   (or prometheus+https://...), or
 *   any URL whose path contains /api/v1/query (the part before it is the base);
 * bedtop then sends one instant query per signal to BASE/api/v1/query:
 *
 *   sum by (route, model_id) (rate(bedrock_admission_admitted_total[2m])) * 60
 *   sum by (route, model_id) (rate(bedrock_admission_rejected_total[2m])) * 60
 *   sum by (route, model_id) (rate(bedrock_admission_retries_total[2m])) * 60
 *   sum by (route, model_id) (rate(bedrock_admission_throttled_total[2m])) * 60
 *   sum by (route, model_id) (rate(bedrock_admission_completed_total[2m])) * 60
 *   sum by (route, model_id) (rate(bedrock_admission_reserved_tokens_total[2m])) * 60
 *   sum by (route, model_id) (rate(bedrock_admission_settled_tokens_total[2m])) * 60
 *   sum by (route, model_id) (bedrock_admission_in_flight)
 *   sum by (route, model_id) (bedrock_admission_concurrency_limit)
 *   sum by (route, model_id) (bedrock_admission_queue_depth)
 *   max by (route, model_id) (bedrock_admission_max_tokens)
 *   histogram_quantile(0.5, sum by (route, model_id, le) (rate(bedrock_admission_output_tokens_bucket[5m])))
 *   histogram_quantile(0.99, sum by (route, model_id, le) (rate(bedrock_admission_output_tokens_bucket[5m])))
 *
 * (generated from the BT_SIGNALS table; --verbose prints each one sent).
 *
 * Timing: live mode scrapes every BT_ADM_INTERVAL seconds (cfg->interval when
 * shorter), so gauges stay fresh between the once-a-minute CloudWatch polls.
 * `bedtop check` (BT_MODE_ONCE) scrapes twice, cfg->admission_gap seconds
 * apart, because rates need two points (a Prometheus server needs one query
 * round: it computes the rates itself). A scrape times out after the scrape
 * period (1..10 s) and is never retried: stale beats late.
 *
 * Counters are raw readings (core/model.h bt_store_reading), one per series
 * with the series' identity (its label set), timed by the exposition's
 * timestamp when the series carries one, else when the answer arrived. Core
 * rates each series, (v2 - v1) / (t2 - t1) * 60, a series that went down
 * having been reset (its increase is v2, as Prometheus's rate()), then sums the
 * series by route; the first scrape yields no rate. Recordings keep the
 * readings, so a replay derives the rates again. Gauges of one route's series
 * (e.g. per-worker labels) are summed at the scrape; max_tokens takes the
 * largest any series requests (the allowance that can be held, not a mean).
 * Output tokens p50/p99: from the bucket increases between scrapes when calls
 * completed in between (the recent distribution), taken per series (a worker's
 * buckets that went down restarted: they are its increase) and summed; on the
 * first scrape, or when nothing completed, from the cumulative buckets summed
 * over the series, which still describe the observed distribution. */
#ifndef BEDTOP_ADMISSION_H
#define BEDTOP_ADMISSION_H
#include <stdbool.h>
#include <stddef.h>

#include "collectors/collector.h"
#include "collectors/promtext.h"

extern const struct bt_collector_ops bt_admission_collector;

#define BT_ADM_INTERVAL 15            /* live scrape period, seconds */
#define BT_ADM_MAX_BODY (16u << 20)   /* bytes accepted from one scrape */

/* A series' identity: its labels, name="value" sorted by name and joined by
 * commas (Prometheus's escapes), or "#" and a 64-bit hash of that when it does
 * not fit in n. */
void bt_adm_series_id(const struct bt_prom_series *s, char *out, size_t n);

/* Which routes a source may write, and how its series map to them. */
struct bt_adm_scope {
    const struct bt_route *routes;
    int nroutes;
    int scraped_route;       /* route whose own URL was scraped (a series with neither
                              * label is its); -1 for a global source */
    const bool *accept;      /* per route: may this source write it (NULL: all, and a
                              * per-route URL only its scraped route) */
};

/* Route of a series: label route (= route name), else model_id (= route
 * model; the scraped route first), else the scraped route. -1: none. */
int bt_adm_route_of(const struct bt_prom_series *s, const struct bt_adm_scope *sc);

/* Is `url` a Prometheus server (see above)? Writes the base URL to base. */
bool bt_adm_is_prometheus(const char *url, char *base, size_t n);
/* The PromQL instant query for an admission signal; false for other signals. */
bool bt_adm_query(enum bt_signal sig, char *out, size_t n);

/* The previous scrape per route, for rates (one per source). */
struct bt_adm_state;
struct bt_adm_state *bt_adm_state_new(int nroutes);
void bt_adm_state_free(struct bt_adm_state *st);

/* Turns one scraped document (text, OpenMetrics or JSON form) into counter
 * readings and gauge and quantile samples at time now (epoch seconds,
 * sub-second precision). covered[r] is set for every route that had admission
 * series. Returns the number of readings and samples. */
int bt_adm_ingest(struct bt_adm_state *st, const struct bt_prom_doc *doc,
                  const struct bt_adm_scope *sc, double now, struct bt_store *store,
                  bool *covered);
/* One /api/v1/query answer for signal sig: values are stored as they are. */
int bt_adm_ingest_api(const struct bt_prom_doc *doc, enum bt_signal sig,
                      const struct bt_adm_scope *sc, double now, struct bt_store *store,
                      bool *covered);
#endif
