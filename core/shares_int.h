/* Shared by core/shares.c and core/sharesplan.c: building a share list. */
#ifndef BEDTOP_SHARES_INT_H
#define BEDTOP_SHARES_INT_H
#include "core/shares.h"

/* The share named name in l (added at 0, idle, when absent). */
struct bt_share *bt_share_of(struct bt_share_list *l, const char *name, const char *source);
/* Adds a part of quality q: an idle share and an exact part make an exact one; a
 * bound stays a bound. */
void bt_share_add(struct bt_share *s, double v, enum bt_quality q);
/* Sorts the shares (largest first; other, unattributed, outside last) and sets pct. */
void bt_shares_finish(struct bt_share_list *l);
#endif
