/* Why calls got slow: output tokens per second (OTPS) per route and minute, against
 * the route's trailing hour (DOMAIN.md, the TimeToFirstToken row; AWS's "Diagnose
 * InvocationLatency increases using output tokens per second"). */
#ifndef BEDTOP_SPEED_H
#define BEDTOP_SPEED_H
#include <stdbool.h>
#include <stdint.h>

#include "core/model.h"

#define BT_SPEED_RECENT 5      /* minutes averaged for "now" */
#define BT_SPEED_HOUR 60       /* the trailing hour before them */
#define BT_SPEED_MIN_HOUR 20   /* minutes with an OTPS the hour needs before it is judged */
#define BT_SLOWDOWN_RATIO 0.7  /* SLOWDOWN: OTPS below 70 % of the trailing hour's */
#define BT_SLOWDOWN_GROWTH 1.1 /* ... while invocations grew by no more than 10 % */

/* OutputTokenCount / Invocations / ((InvocationLatency - TimeToFirstToken) / 1000);
 * NAN when a term is missing, there were no calls, or generation took no time. */
double bt_otps(double output_tokens, double invocations, double latency_avg_ms, double ttft_ms);
/* Route r's OTPS at minute m from the store (NAN: not computable). */
double bt_otps_at(const struct bt_store *st, int r, int64_t m);

struct bt_speed {
    double otps, otps_hour;      /* the last BT_SPEED_RECENT minutes' mean, the hour's */
    double ttft, ttft_hour;      /* TimeToFirstToken average, ms */
    double inv, inv_hour;        /* invocations per minute */
    double out_per_call, out_per_call_hour;
    int recent_points, hour_points;
    double otps_floor;           /* SLOWDOWN below it: BT_SLOWDOWN_RATIO x the hour's OTPS
                                  * (NAN: the hour has too few minutes to judge) */
    double ttft_ceiling;         /* queueing above it: 1.5 x the hour's TTFT (NAN: none) */
    bool slowdown;               /* OTPS fell well below the hour while traffic did not grow */
    bool queueing;               /* TTFT rose by half with output per call flat */
};
/* The figures ending at minute m (0: none, all NAN). */
void bt_speed_compute(const struct bt_store *st, int r, int64_t m, struct bt_speed *out);
#endif
