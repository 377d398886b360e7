/* The store's series (core/series.c): taking a sample and reading the minutes back (a
 * minute, a range, the newest, sums and day sums), the source states, and a series'
 * copy and size; struct bt_series and struct bt_store are core/model.h's. */
#ifndef BEDTOP_SERIES_H
#define BEDTOP_SERIES_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/model.h"

/* A deep copy of src (for a store's what-if copy). */
void bt_series_copy(struct bt_series *dst, const struct bt_series *src);
/* Bytes a series' slots take (the bench's memory per route). */
size_t bt_series_bytes(const struct bt_series *se);
/* Takes a sample. NAN (no value) is skipped; a value out of bounds
 * (bt_sample_plausible) is not stored and is held as the reason the source's next
 * OK for the route is an error. Returns whether the sample was stored. */
/* A sample dated more than this after its arrival is refused (and its source's
 * next OK for the route becomes an error naming it): the skew SigV4 allows
 * between clocks, 5 minutes. */
#define BT_SAMPLE_MAX_SKEW_S 300
/* A value from outside was refused for route (its source src): the source's
 * next OK for the route becomes an error with this reason (the first one kept). */
void bt_store_refused(struct bt_store *s, int route, enum bt_source src, const char *why);
bool bt_store_add(struct bt_store *s, const struct bt_sample *smp, int64_t arrival);
/* Value at a minute, NAN when missing or outside the window. */
double bt_store_at(const struct bt_store *s, int route, enum bt_signal sig, int64_t minute);
/* Newest minute <= limit holding a value (0 if none within the window). */
int64_t bt_store_newest(const struct bt_store *s, int route, enum bt_signal sig, int64_t limit);
/* The day's sum so far of a daily signal (bt_signal_daily) through minute `through`.
 * The route's newest day sums of the day (input and output; cache write with them)
 * sum the day's hourly datapoints from UTC midnight to the minute they are stored at
 * (at midnight itself: to the poll that asked, as check's and older recordings' do);
 * the per-minute signal of each minute after that is added. Without day sums, the
 * per-minute signal since midnight within the history. NAN: no value at all. */
double bt_store_day_sum(const struct bt_store *s, int route, enum bt_signal daily, int64_t through);
bool bt_store_has_day_sum(const struct bt_store *s, int route, int64_t through);
/* Whether the route's newest day sums of the day through `through` hold daily's own:
 * its value stored with them, or (coverage recorded) its day-sum query asked and
 * answered with no datapoint. False: it was not asked (a recording from before
 * DAY_CACHE_READ, a metric ListMetrics does not list) and only minutes can tell. */
bool bt_store_day_sum_held(const struct bt_store *s, int route, enum bt_signal daily, int64_t through);
/* The sum of sig's values visible at the minutes from..through (bt_store_at of each,
 * the missing ones skipped), added in minute order; *n (may be NULL) says how many
 * were added (0: the sum is NAN). A replay's store carries the last sum of each route's
 * per-minute token signal forward while the horizon and `through` only move on (the
 * result is the one the loop gives: carried only while every value is a whole number,
 * whose sums are exact in any order). */
double bt_store_sum(const struct bt_store *s, int route, enum bt_signal sig, int64_t from,
                    int64_t through, int *n);
/* out[i] = bt_store_at(s, route, sig, from + 60 i) for i < n, in one pass over the ring. */
void bt_store_range(const struct bt_store *s, int route, enum bt_signal sig, int64_t from, int n,
                    double *out);
/* The route's burndown settled at `through` (core/burndown.h bt_route_burndown_steady)
 * by the steady measurement over the store's minutes before it: derived from the
 * store only, so a replay recomputes it from the recorded samples. The store runs
 * it at each CloudWatch event (bt_store_event). */
void bt_route_burndown_settle(struct bt_route *r, const struct bt_store *st, int route,
                              int64_t through);
/* Replay, once a recording is read: the series of one route whose minutes arrived
 * together (the signals of one sample line) share one array of arrival offsets (a
 * day of 200 routes: 11.6 MB of offsets, most of them copies). Nothing read changes. */
void bt_store_share_arrivals(struct bt_store *s);
struct bt_source_status *bt_store_status(struct bt_store *s, int route, enum bt_source src);
const struct bt_source_status *bt_store_status_c(const struct bt_store *s, int route,
                                                 enum bt_source src);
#endif
