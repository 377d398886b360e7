/* What a sample can plausibly be. Every number from outside may be negative, huge
 * or not a number (issue 16: every value -5000 gave "used -5000, headroom 100.3%",
 * 1e308 printed "infG" and "-nan% of calls"); the store takes only samples inside
 * these bounds, and a value outside makes its source's poll an error for the route
 * (it goes stale, with this reason), so no view ever shows one. The bounds sit far
 * above any real account (the largest quotas are a few million tokens a minute):
 *   calls (per minute, or in flight / queued / a limit at once)   0 .. 1e9
 *   tokens per minute (CloudWatch sums, estimate, counter rates)  0 .. 1e12
 *   tokens held by calls in flight (reserved_tokens_held)          0 .. 1e12
 *   tokens per call (max_tokens, output-token quantiles)           0 .. 1e9
 *   tokens per day (the DAY_* sums)                                0 .. 1e12 x 1440
 *   latency and time to first token, milliseconds                  0 .. 86,400,000 (1 day)
 * NAN is "no value" (bt_store_add skips it silently); infinities are out of bounds.
 * A quota (tokens or requests per minute or day) is 0 .. 1e15, as the config allows
 * (a quota event of NAN is not a value: it says why the quota is unknown). */
#ifndef BEDTOP_PLAUSIBLE_H
#define BEDTOP_PLAUSIBLE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/model.h"

#define BT_MAX_CALLS 1e9
#define BT_MAX_TOKENS_PER_MIN 1e12
#define BT_MAX_TOKENS_PER_CALL 1e9
#define BT_MAX_TOKENS_PER_DAY (1e12 * 1440)
#define BT_MAX_LATENCY_MS 86400000.0
#define BT_MAX_QUOTA 1e15

/* true when v is a value sig can have; else false with the reason in why
 * ("a count, rate or time is never negative"). */
bool bt_sample_plausible(enum bt_signal sig, double v, char *why, size_t n);
/* The same for a quota of kind k. */
bool bt_quota_plausible(enum bt_quota_kind k, double v, char *why, size_t n);
/* A route's max_tokens and burndown factor as the config takes them (1 ..
 * BT_MAX_TOKENS_SETTING, 1 .. BT_MAX_BURNDOWN), wherever else they come from
 * (bedtop_max_tokens and bedtop_burndown read back through --source). */
#define BT_MAX_TOKENS_SETTING 1e7
#define BT_MAX_BURNDOWN 1000
bool bt_setting_plausible(double v, double max, char *why, size_t n);

/* The one conversion of a float from outside (a file, an answer, a header) to an
 * integer. A double beyond the integer's range, infinite or NaN converted with a
 * cast is undefined behaviour (issue 37: "cloudwatch_lag": 1e300 in a recording
 * header), so nothing from outside is cast directly: bt_f2i checks that v is
 * finite and within lo .. hi (both well inside int64_t) and gives it truncated
 * toward zero, as a cast would; else false and *out untouched. bt_f2i_clamp
 * gives lo .. hi for any v (NaN: lo), for values already bounded at their source
 * where a wrong one must still not be undefined. */
bool bt_f2i(double v, int64_t lo, int64_t hi, int64_t *out);
int64_t bt_f2i_clamp(double v, int64_t lo, int64_t hi);
#endif
