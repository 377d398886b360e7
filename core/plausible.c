#include "core/plausible.h"

#include <math.h>
#include <stdio.h>

static double bound_of(enum bt_signal sig, const char **unit)
{
    switch (sig) {
    case BT_SIG_INPUT_TOKENS:
    case BT_SIG_OUTPUT_TOKENS:
    case BT_SIG_CACHE_READ:
    case BT_SIG_CACHE_WRITE:
    case BT_SIG_ESTIMATED_TPM:
    case BT_SIG_ADM_RESERVED:
    case BT_SIG_ADM_SETTLED:
        *unit = "tokens per minute";
        return BT_MAX_TOKENS_PER_MIN;
    case BT_SIG_ADM_RESERVED_HELD:
        *unit = "tokens held at once";
        return BT_MAX_TOKENS_PER_MIN;
    case BT_SIG_LATENCY_AVG:
    case BT_SIG_LATENCY_P50:
    case BT_SIG_LATENCY_P90:
    case BT_SIG_LATENCY_P99:
    case BT_SIG_TTFT_AVG:
        *unit = "ms (a day)";
        return BT_MAX_LATENCY_MS;
    case BT_SIG_ADM_MAX_TOKENS:
    case BT_SIG_ADM_OUT_P50:
    case BT_SIG_ADM_OUT_P99:
        *unit = "tokens per call";
        return BT_MAX_TOKENS_PER_CALL;
    case BT_SIG_DAY_INPUT_TOKENS:
    case BT_SIG_DAY_OUTPUT_TOKENS:
    case BT_SIG_DAY_CACHE_WRITE:
    case BT_SIG_DAY_CACHE_READ:
        *unit = "tokens per day";
        return BT_MAX_TOKENS_PER_DAY;
    default:
        /* Invocations, throttles, errors and the admission call counts and gauges
         * (a signal added later is held to the same bound until it has its own) */
        *unit = "calls";
        return BT_MAX_CALLS;
    }
}

static bool within(double v, double max, const char *unit, char *why, size_t n)
{
    if (isnan(v) || isinf(v)) {
        snprintf(why, n, "not a finite number");
        return false;
    }
    if (v < 0) {
        snprintf(why, n, "a count, rate or time is never negative");
        return false;
    }
    if (v > max) {
        snprintf(why, n, "beyond any plausible value (at most %g %s)", max, unit);
        return false;
    }
    return true;
}

bool bt_sample_plausible(enum bt_signal sig, double v, char *why, size_t n)
{
    if ((unsigned)sig >= BT_SIG_COUNT) {
        snprintf(why, n, "signal %d unknown", (int)sig);
        return false;
    }
    const char *unit;
    double max = bound_of(sig, &unit);
    return within(v, max, unit, why, n);
}

bool bt_quota_plausible(enum bt_quota_kind k, double v, char *why, size_t n)
{
    (void)k; /* one bound for every kind */
    return within(v, BT_MAX_QUOTA, "per minute or day", why, n);
}

bool bt_setting_plausible(double v, double max, char *why, size_t n)
{
    if (!within(v, max, "", why, n))
        return false;
    if (v < 1) {
        snprintf(why, n, "below 1");
        return false;
    }
    return true;
}

bool bt_f2i(double v, int64_t lo, int64_t hi, int64_t *out)
{
    /* compared as doubles first: lo and hi are exact as doubles up to 2^53, and a
     * v outside (or NaN, which fails both) never reaches the conversion; 9.2e18
     * is below 2^63, so the cast is defined even for hi near INT64_MAX */
    if (!(v >= (double)lo && v <= (double)hi && v > -9.2e18 && v < 9.2e18))
        return false;
    int64_t i = (int64_t)v;
    if (i < lo || i > hi) /* hi beyond 2^53 rounded up as a double */
        return false;
    *out = i;
    return true;
}

int64_t bt_f2i_clamp(double v, int64_t lo, int64_t hi)
{
    int64_t i;
    if (bt_f2i(v, lo, hi, &i))
        return i;
    return v > 0 ? hi : lo;
}
