#include "core/oppoint.h"

#include <math.h>
#include <string.h>

static bool usable(double v)
{
    return isfinite(v) && v >= 0;
}

void bt_oppoint_compute(const double *xs, const double *ys, int n, struct bt_oppoint *o)
{
    memset(o, 0, sizeof *o);
    o->knee = NAN;
    o->width = 1;
    for (int i = 0; i < n; i++) {
        if (!usable(xs[i]) || !usable(ys[i]))
            continue;
        o->points++;
        o->xmax = fmax(o->xmax, xs[i]);
        o->ymax = fmax(o->ymax, ys[i]);
    }
    /* levels of one call up to 64 in flight; wider ones beyond, so the table is fixed */
    if (o->xmax >= BT_OPPOINT_LEVELS)
        o->width = ceil(o->xmax / (BT_OPPOINT_LEVELS - 1));
    double sum[BT_OPPOINT_LEVELS] = {0};
    int cnt[BT_OPPOINT_LEVELS] = {0};
    for (int i = 0; i < n; i++) {
        if (!usable(xs[i]) || !usable(ys[i]))
            continue;
        double kf = floor(xs[i] / o->width + 0.5);
        int k = kf >= BT_OPPOINT_LEVELS - 1 ? BT_OPPOINT_LEVELS - 1 : (int)kf;
        sum[k] += ys[i];
        cnt[k]++;
    }
    double best = 0;
    int top = -1;
    for (int k = 0; k < BT_OPPOINT_LEVELS; k++) {
        if (!cnt[k])
            continue;
        o->levels++;
        top = k;
        if (sum[k] / cnt[k] > best)
            best = sum[k] / cnt[k];
    }
    o->enough = o->points >= BT_OPPOINT_MIN_POINTS && o->levels >= BT_OPPOINT_MIN_LEVELS;
    if (!o->enough)
        return;
    int knee = -1;
    for (int k = 0; k < BT_OPPOINT_LEVELS && knee < 0; k++)
        if (cnt[k] && sum[k] / cnt[k] >= 0.95 * best)
            knee = k;
    o->knee = knee * o->width;
    o->plateau = knee >= 0 && knee < top - 1;
}
