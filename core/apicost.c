#include "core/apicost.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "core/util.h"

const char *bt_api_outcome_name(enum bt_api_outcome o)
{
    static const char *const names[] = {"success", "throttled", "error", "transport"};
    return (unsigned)o < BT_ARRAY_LEN(names) ? names[o] : "error";
}

void bt_api_cost_request(struct bt_api_cost *c, const char *api, enum bt_api_outcome o)
{
    if (!c || (unsigned)o >= BT_API_NOUTCOMES)
        return;
    int i = 0;
    while (i < c->napi && strcmp(c->api[i].api, api) != 0)
        i++;
    if (i == c->napi) {
        if (c->napi == BT_API_MAX)
            i = BT_API_MAX - 1; /* the last row takes the overflow: still counted */
        else
            bt_strlcpy(c->api[c->napi++].api, api, sizeof c->api[0].api);
    }
    c->api[i].n[o]++;
}

void bt_api_cost_metrics(struct bt_api_cost *c, int64_t now, unsigned n)
{
    if (!c)
        return;
    int64_t m = bt_minute_floor(now);
    int slot = (int)((m / 60) % BT_COST_MINUTES);
    if (c->minute[slot] != m) {
        c->minute[slot] = m;
        c->per_minute[slot] = 0;
    }
    c->per_minute[slot] += n;
    c->metrics_total += n;
    if (!c->started)
        c->started = now;
}

static double sum_since(const struct bt_api_cost *c, int64_t from, int64_t to)
{
    double s = 0;
    for (int i = 0; i < BT_COST_MINUTES; i++)
        if (c->minute[i] >= from && c->minute[i] <= to)
            s += c->per_minute[i];
    return s;
}

void bt_api_cost_rates(const struct bt_api_cost *c, int64_t now, double *per_min,
                       double *per_day, double *usd_per_day)
{
    *per_min = *per_day = *usd_per_day = NAN;
    if (!c || !c->started)
        return;
    int64_t m = bt_minute_floor(now);
    /* minutes observed, counting the current one: a poll every 5 minutes still
     * reads as its true mean once an hour has passed */
    double span = (double)(m - bt_minute_floor(c->started)) / 60 + 1;
    double hour = span < 60 ? span : 60;
    *per_min = sum_since(c, m - (int64_t)(hour - 1) * 60, m) / hour;
    if (span >= BT_COST_MINUTES)
        *per_day = sum_since(c, m - (BT_COST_MINUTES - 1) * 60, m);
    else
        *per_day = *per_min * 1440;
    *usd_per_day = *per_day * BT_GMD_USD_PER_METRIC;
}
