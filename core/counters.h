/* Admission counters read per series (core/model.h bt_store_reading): the
 * store's state behind the rates. */
#ifndef BEDTOP_COUNTERS_H
#define BEDTOP_COUNTERS_H
#include "core/model.h"

/* Forgets every series, the per-series store too: the store's readings_free, which
 * bt_store_reading sets, so bt_store_clear reaches it without calling up. */
void bt_counters_free(struct bt_store *s);
/* Forgets every per-series value (core/shares.c). */
void bt_series_store_free(struct bt_store *s);
#endif
