/* The contract's pure formulas (core/formulas.c, docs/headroom.md): figures from
 * figures, no store read. The evaluation's lowest layer with core/sides.h, which calls
 * no other part of it; core/frame.c reads the store and applies them. */
#ifndef BEDTOP_FORMULAS_H
#define BEDTOP_FORMULAS_H

struct bt_eval;

/* The contract's pure formulas, exposed for tests and views (docs/headroom.md). */
double bt_settled_tpm(double input, double cache_write, double output, double burndown);
/* Little's law: calls in flight = arrivals per second x average seconds per call. */
double bt_littles_law(double invocations_per_min, double latency_avg_ms);
/* Requests per minute, the RPM quota's measure: the accepted calls, Invocations
 * (it already counts calls that later failed; throttled ones are not in it), or the
 * admission counters' admitted rate. offered = accepted + throttled (retries
 * included), shown beside it, never the side's use. NAN when accepted is unknown. */
double bt_requests_offered(double accepted, double throttles);
double bt_eval_offered(const struct bt_eval *e);
#endif
