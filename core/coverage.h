/* What polls asked for, per route and signal (core/coverage.c): the coverage records the
 * store takes and the minutes they cover; struct bt_coverage is core/model.h's. */
#ifndef BEDTOP_COVERAGE_H
#define BEDTOP_COVERAGE_H
#include <stdbool.h>
#include <stdint.h>

#include "core/model.h"

/* Takes a coverage record that arrived (was answered) at `arrival`; replay: visible
 * from its arrival on (bt_store_set_horizon). Records nothing for a bad route or an
 * empty range. */
void bt_store_cover(struct bt_store *s, const struct bt_coverage *c, int64_t arrival);
/* Whether a poll recorded coverage for route (false: it is inferred). */
bool bt_store_cover_recorded(const struct bt_store *s, int route);
/* What polls asked for at route's minute of sig: NONE, ASKED (not settled when asked)
 * or SETTLED; minutes older than the history are NONE. */
enum bt_cover bt_store_covered(const struct bt_store *s, int route, enum bt_signal sig,
                               int64_t minute);
/* The newest settled, covered minute of sig <= limit (0: none). */
int64_t bt_store_covered_newest(const struct bt_store *s, int route, enum bt_signal sig,
                                int64_t limit);
/* How many of the n minutes from `from` on are settled and covered for sig. */
int bt_store_covered_count(const struct bt_store *s, int route, enum bt_signal sig, int64_t from,
                           int n);
#endif
