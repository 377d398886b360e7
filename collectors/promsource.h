/* Reading bedtop's own series back from a Prometheus server (`--source
 * prometheus+http://HOST:PORT`), instead of calling AWS: the dashboard,
 * `check`, `record --since` and `export` then show what a fleet of `bedtop
 * serve` pollers exported (render/exposition.h), with no AWS request at all.
 *
 * Per round, two requests to the server (label matchers of --match added to
 * both selectors):
 *   /api/v1/query_range  {__name__=~"bedtop_signal|bedtop_data_timestamp_seconds",M}
 *                        over the window, step BT_PROMSRC_STEP (or wider for long
 *                        windows): every raw input goes back into the store at the
 *                        minute it belongs to (bedtop_data_timestamp_seconds at
 *                        the same step), so the same core evaluates the same numbers;
 *   /api/v1/query        {__name__=~"bedtop_(quota_.*|source_last_.*|max_tokens|burndown)",M}
 *                        the quotas (with source and code) and each source's
 *                        last success and failure, as the poller saw them.
 * Routes are those of the config (matched by label route); with none
 * configured they are discovered from bedtop_route_status. */
#ifndef BEDTOP_PROMSOURCE_H
#define BEDTOP_PROMSOURCE_H
#include <stdbool.h>
#include <stddef.h>

#include "collectors/collector.h"
#include "collectors/promtext.h"

extern const struct bt_collector_ops bt_promsource_collector;

#define BT_PROMSRC_STEP 15            /* seconds between points of a range query */
#define BT_PROMSRC_MAX_POINTS 1000    /* points per series asked for at most */

/* Is src a Prometheus source (prometheus+http[s]://...)? Writes its base URL. */
bool bt_promsrc_parse(const char *src, char *base, size_t n);
/* The PromQL selector {__name__=~"names",matchers}; false when matchers
 * holds a character that cannot be part of label matchers ({, }, newline). */
bool bt_promsrc_selector(const char *names, const char *matchers, char *out, size_t n);
/* Puts one answer (range or instant) into the store and the routes' quotas;
 * routes found by label route. max_tokens and burndown come from the poller
 * unless this config sets them. Returns the number of samples and events. */
int bt_promsrc_ingest(const struct bt_prom_doc *doc, const struct bt_config *cfg,
                      struct bt_store *st);
/* With no routes configured: one instant query of bedtop_route_status (the
 * matchers applied) adds a route per series. Runs ctx->http until done.
 * Returns routes added, or -1 with err set. */
int bt_promsrc_discover(struct bt_ctx *ctx, struct bt_config *cfg, char *err, size_t errlen);
/* The discovery answer's routes into cfg (those not in it yet), linear in the
 * answer; at most BT_PROMSRC_MAX_ROUTES in all (the most a recording holds, too):
 * more is -1 with the reason in err. shown names the server in messages. */
#define BT_PROMSRC_MAX_ROUTES 20000
#define BT_PROMSRC_MAX_DISCOVERY (16 * 1024 * 1024) /* bytes of discovery answer */
int bt_promsrc_add_routes(const struct bt_prom_doc *doc, struct bt_config *cfg, const char *shown,
                          char *err, size_t errlen);
#endif
