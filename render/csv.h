/* export's CSV (man 1 bedtop, EXPORT): one row per route and data minute, every
 * field quoted, each column named once, text neutralised for spreadsheets. */
#ifndef BEDTOP_CSV_H
#define BEDTOP_CSV_H
#include <stdint.h>

#include "core/config.h"
#include "core/events.h"
#include "core/headroom.h"
#include "core/model.h"
#include "core/shares.h"
#include "core/util.h"

void bt_csv_header(struct bt_buf *b);
/* The share fields after admission_at (shares_team, shares_tag, shares_project,
 * shares_route, each with its leading comma): route r's quota group as evaluated in
 * evals (every route's, as core/shares.h reads them), "name=used (pct%)" joined by
 * "; ", largest first; empty where the JSON has none (no attribute_by, not mantle).
 * The lists are the group's, each worked out once per group and evaluation in memo
 * (core/shares.h; reset before the next evaluation; NULL: worked out for r). */
void bt_csv_shares(struct bt_buf *b, const struct bt_config *cfg, const struct bt_store *st,
                   const struct bt_eval *evals, int r, struct bt_share_memo *memo);
/* Route r's row for data minute m, in three parts, for a writer that evaluates a
 * minute before its log is complete: the fields through admission_at (from the
 * evaluation evals[r], the store as sought then), the shares (bt_csv_shares), then
 * the markers ("; "-joined, may be empty), the route's entries of the event log at
 * that minute (its events column), the evaluation's headroom quality hq, its
 * binding side and the line's end. The row head's route fields (route, model_id,
 * region, endpoint, inference, each with its leading comma) are the same for every
 * row of the route: an export makes them once per route with bt_csv_route_fields. */
void bt_csv_route_fields(struct bt_buf *b, const struct bt_config *cfg, int r);
void bt_csv_row_head_with(struct bt_buf *b, const char *fields, size_t len,
                          const struct bt_store *st, const struct bt_eval *e, int64_t m);
void bt_csv_row_tail(struct bt_buf *b, int r, int64_t m, const char *markers,
                     const struct bt_evlog *log, enum bt_quality hq, enum bt_side binding);
/* The log's entries for route r (or -1: those of no route) at data minute m,
 * "; "-joined as "kind: text". */
void bt_export_events(struct bt_buf *b, const struct bt_evlog *log, int r, int64_t m);
#endif
