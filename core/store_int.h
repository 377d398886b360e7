/* Shared by the parts of the store (core/model.c, coverage.c, series.c): a replay's
 * carried sums and newest minutes, which the store allocates and clears and the series
 * read, and the coverage's own copy, free and horizon; not for views. */
#ifndef BEDTOP_STORE_INT_H
#define BEDTOP_STORE_INT_H
#include <stdint.h>

#include "core/model.h"

struct bt_sum_memo {
    bool valid, exact;       /* exact: every value added so far was a whole number */
    uint64_t nsamples;       /* the store's then: any sample since may change a minute */
    int64_t from, through;   /* the minutes summed */
    int64_t vis;             /* the horizon they were summed at (INT64_MAX: everything) */
    int64_t hidden;          /* the oldest of them holding a value that had not arrived
                              * by vis (INT64_MAX: none): a later horizon may show it */
    double sum;
    int n;
};

/* the per-minute token signals a sum is carried for (memo_slot, core/series.c) */
#define MEMO_SLOTS 4

struct bt_newest_memo {
    bool valid;
    uint64_t nsamples;
    int64_t limit, vis;      /* the minute asked (at most the series' newest), the horizon */
    int64_t found;           /* the newest minute <= limit visible at vis (0: none) */
    int64_t hidden;          /* the oldest minute of (found, limit] holding a value that had
                              * not arrived by vis (INT64_MAX: none) */
};

/* core/coverage.c's, for the store's what-if copy, views, clearing and horizon */
void bt_cov_free(struct bt_store *s);
void bt_copy_coverage(struct bt_store *dst, const struct bt_store *src);
void bt_cov_to_horizon(struct bt_store *s, int64_t t);
#endif
