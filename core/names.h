/* The model's names (core/names.c): the signal table, the names of sources, endpoints,
 * inference types, quota sources, kinds and matches and of settings, their lookups by
 * name, and the quota sources' precedence. */
#ifndef BEDTOP_NAMES_H
#define BEDTOP_NAMES_H
#include <stdbool.h>

#include "core/model.h"

extern const struct bt_signal_info bt_signal_info[BT_SIG_COUNT];
int bt_signal_by_name(const char *name); /* -1 if unknown */
/* The DAY_* signals hold one value per UTC day (stored at midnight): the day's sum
 * so far, the hourly datapoints since midnight summed, so that `check` need not fetch
 * every minute since midnight for the daily-token total. */
bool bt_signal_daily(enum bt_signal s);
/* The per-minute signal a daily one sums (DAY_INPUT_TOKENS: INPUT_TOKENS, ...). */
enum bt_signal bt_signal_daily_minute(enum bt_signal daily);
/* The TIER_RES_* signals are the route's ModelId with ResolvedServiceTier=reserved
 * (the tier that actually served): queried only where ListMetrics lists that
 * dimension for the ModelId, never as the plain ModelId series. */
bool bt_signal_tier(enum bt_signal s);
const char *bt_source_name(enum bt_source s);
const char *bt_endpoint_name(enum bt_endpoint e);
const char *bt_inference_name(enum bt_inference i);
/* -1 when the name is none of on-demand, cross-region, global, latency-optimized, provisioned */
int bt_inference_by_name(const char *name);
const char *bt_quota_source_name(enum bt_quota_source s);
/* Precedence of quota sources: config 3 > service-quotas 2 > default 1 > unknown 0. */
int bt_quota_rank(enum bt_quota_source s);
/* The quota kind's name, as the recording's quota key, check's `quota` object, the
 * exposition's `kind` label and the quota-names table spell it: tpm rpm tpd input_tpm
 * output_tpm reserved_input_tpm reserved_output_tpm tpd_account concurrent. A quota's
 * kind, not a side: the side it bounds is named by bt_side_name (reserved-input ...). */
const char *bt_quota_kind_name(enum bt_quota_kind k);
const char *bt_quota_match_name(enum bt_quota_match m); /* "usage-metric", "code", ... ; NONE: NULL */
int bt_quota_match_by_name(const char *name);          /* -1 unknown */
const char *bt_setting_name(enum bt_setting k);
int bt_setting_by_name(const char *name); /* -1 if unknown */
bool bt_setting_is_number(enum bt_setting k);
#endif
