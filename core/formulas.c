/* The contract's pure formulas: settled tokens, requests offered and calls in flight by
 * Little's law, from figures alone (core/formulas.h). */
#include "core/formulas.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "core/eval_int.h"

/* ---- the contract's pure formulas (docs/headroom.md) ---- */

double bt_settled_tpm(double input, double cache_write, double output, double burndown)
{
    return input + cache_write + output * burndown;
}

double bt_requests_offered(double accepted, double throttles)
{
    return isnan(accepted) ? NAN : accepted + bt_z(throttles);
}

/* Offered beside the RPM side's accepted use: the admission counters' throttled
 * responses with their admitted rate, else InvocationThrottles. */
double bt_eval_offered(const struct bt_eval *e)
{
    bool adm = e->requests_source && !strcmp(e->requests_source, "admission");
    return bt_requests_offered(e->requests, adm ? e->adm_throttled : e->throttles);
}

double bt_littles_law(double invocations_per_min, double latency_avg_ms)
{
    if (isnan(invocations_per_min) || invocations_per_min < 0)
        return NAN;
    if (invocations_per_min == 0)
        return 0; /* no arrivals: nothing in flight, whatever the latency */
    if (isnan(latency_avg_ms) || latency_avg_ms < 0)
        return NAN;
    return invocations_per_min / 60 * (latency_avg_ms / 1000);
}
