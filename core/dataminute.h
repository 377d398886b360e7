/* The one clock (issue 22): every moment bedtop names to a person (replay
 * position, --at, export rows, g, n/N, markers, the timeline, the event log) is
 * a CloudWatch *data minute*: the minute the figures describe. The instant it
 * was evaluated at and the admission counters' instant are extra fields
 * (evaluated_at, admission_at), never the label. */
#ifndef BEDTOP_DATAMINUTE_H
#define BEDTOP_DATAMINUTE_H
#include <stdbool.h>
#include <stdint.h>

#include "core/config.h"

/* The newest complete data minute at instant t: floor(t - cloudwatch_lag) - 60
 * (the minute core/headroom.c evaluates at t). */
int64_t bt_data_minute(const struct bt_config *cfg, int64_t t);
/* The first instant at which minute m is the newest complete one: m + 60 + lag. */
int64_t bt_data_minute_shown(const struct bt_config *cfg, int64_t m);
/* The last instant at which it still is: m + 60 + lag + 59. A minute is shown as it
 * stood then, with every datapoint and poll that arrived while it was the newest
 * (the recording's last minute: its last poll). */
int64_t bt_data_minute_last(const struct bt_config *cfg, int64_t m);

/* A moment within the time data minute m is the newest complete one: sec seconds
 * after it first is (0 .. 59), or its last second for sec < 0, the moment replay --at
 * and export's rows show m at. --demo-at M names data minute M (issue 34): a whole M
 * is its last second, M.5 thirty seconds after it appears. */
int64_t bt_data_minute_at(const struct bt_config *cfg, int64_t m, int sec);

/* A recording's clock, in data minutes. */
struct bt_replay;
/* The newest complete data minute at the recording's start and at its last poll. */
void bt_replay_minutes(const struct bt_replay *rp, int64_t *first, int64_t *last);
/* The instant a replay shows data minute m at: the last instant m was the newest
 * complete one (bt_data_minute_last), clamped to the recording (its last minute
 * shows at its last poll). replay --at, export rows and the replay's g all use it. */
int64_t bt_replay_minute_instant(const struct bt_replay *rp, int64_t m);
/* A time typed for a recording, as a data minute (floored): "+D" is D after its
 * first data minute, "-D" D before its last, HH:MM on the recording's day, ISO. */
bool bt_replay_when_minute(const struct bt_replay *rp, const char *s, int64_t *m);
#endif
