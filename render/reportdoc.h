/* The documents of `bedtop report`: the quota-increase request (text that pastes
 * into the request form, Markdown, JSON) and the incident write-up (Markdown with
 * SVG/PNG charts beside it). Figures come from core/reportcalc.h; this lays out. */
#ifndef BEDTOP_REPORTDOC_H
#define BEDTOP_REPORTDOC_H
#include <stdbool.h>

#include "core/config.h"
#include "core/reportcalc.h"
#include "core/util.h"
#include "render/chart.h"

enum bt_doc_format { BT_DOC_TEXT, BT_DOC_MARKDOWN, BT_DOC_JSON };
bool bt_doc_format_parse(const char *s, enum bt_doc_format *out); /* text markdown json */

/* source: where the figures came from, in words ("recording x.rec", "CloudWatch
 * history"); generated: when the document was made (epoch s). */
void bt_qr_render(const struct bt_qr *q, const struct bt_config *cfg, enum bt_doc_format f,
                  const char *source, int64_t generated, struct bt_buf *out);

/* The incident's charts: headroom, throttles, offered vs accepted, latency. */
enum bt_inc_chart { BT_CHART_HEADROOM, BT_CHART_THROTTLES, BT_CHART_TRAFFIC, BT_CHART_LATENCY,
                    BT_CHART_COUNT };
const char *bt_inc_chart_file(enum bt_inc_chart k); /* "headroom" ... (no extension) */
/* Fills c with chart k over the charted routes (bt_inc_charted); free it with
 * bt_chart_free. */
void bt_inc_chart_build(const struct bt_incident *inc, const struct bt_config *cfg,
                        enum bt_inc_chart k, struct bt_chart *c);
/* The routes the charts show, most affected first (at most max); returns how many. */
int bt_inc_charted(const struct bt_incident *inc, int *routes, int max);

/* report.md: summary, causes, routes, timeline, and the charts as images named
 * NAME.svg beside it (png: a PNG beside each too). */
void bt_incident_render_md(const struct bt_incident *inc, const struct bt_replay *rp, bool png,
                           struct bt_buf *out);
/* Who held the quota when it ran out (render/inc_holders.c): the stacked chart of
 * the holders (holders.svg) and the report's section naming them at the minute of
 * the least headroom. */
struct bt_share_minutes;
void bt_inc_holders_chart(const struct bt_share_minutes *sm, const struct bt_config *cfg,
                          struct bt_chart *c);
void bt_inc_holders_md(const struct bt_share_minutes *sm, const struct bt_config *cfg, bool png,
                       struct bt_buf *b);
#endif
