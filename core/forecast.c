/* The forecast (core/plan.h): minutes until the binding side reaches its quota at the
 * trend of the last 15 evaluated minutes, least squares on the frame's group use. */
#include "core/plan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/eval_int.h"
#include "core/plan_int.h"
#include "core/util.h"

bool bt_least_squares(const double *x, const double *y, int n, double x0, double *slope,
                      double *at_x0)
{
    if (n < 2)
        return false;
    double mx = 0, my = 0;
    for (int i = 0; i < n; i++) {
        mx += x[i];
        my += y[i];
    }
    mx /= n;
    my /= n;
    double sxx = 0, sxy = 0;
    for (int i = 0; i < n; i++) {
        sxx += (x[i] - mx) * (x[i] - mx);
        sxy += (x[i] - mx) * (y[i] - my);
    }
    if (sxx <= 0)
        return false;
    *slope = sxy / sxx;
    *at_x0 = my + *slope * (x0 - mx);
    return true;
}

/* Flat: the fitted line moves by less than 1 % of the quota in an hour. */
#define FORECAST_FLAT 0.01

/* Route r's forecast from its group's use at the last minutes: ys[i] the frames of
 * minute m0 - i (frames[i] every route's). */
static void forecast_fit(const struct bt_eval *now, struct bt_eval *const *frames, int r,
                         struct bt_forecast *f)
{
    memset(f, 0, sizeof *f);
    f->slope = f->fitted_now = f->quota = f->minutes = NAN;
    f->minutes_q = BT_QL_UNKNOWN;
    f->side = now->binding;
    int64_t m0 = now->minute;
    f->minute = m0;
    const struct bt_side_fig *s = &now->side[f->side];
    f->quota = s->applies ? s->quota : NAN;
    if (f->side == BT_SIDE_DAILY || f->side == BT_SIDE_DAILY_ACCOUNT) {
        f->none = "the daily side binds: see the daily run-out";
        return;
    }
    if (!m0) {
        f->none = "no evaluated minute";
        return;
    }
    if (!(f->quota > 0)) {
        f->none = "no quota to run out of";
        return;
    }
    double x[BT_FORECAST_MINUTES], y[BT_FORECAST_MINUTES];
    enum bt_quality q = BT_QL_KNOWN;
    for (int i = 0; i < BT_FORECAST_MINUTES; i++) {
        const struct bt_eval *e = &frames[i][r];
        const struct bt_side_fig *fi = &e->side[f->side];
        if (e->minute != m0 - 60 * (int64_t)i || fi->group_q == BT_QL_UNKNOWN || isnan(fi->group_used))
            continue;
        x[f->points] = -i;
        y[f->points++] = fi->group_used;
        q = bt_quality_add(q, fi->group_q == BT_QL_IDLE ? BT_QL_KNOWN : fi->group_q);
    }
    if (f->points < BT_FORECAST_MIN_POINTS ||
        !bt_least_squares(x, y, f->points, 0, &f->slope, &f->fitted_now)) {
        f->none = "too few evaluated minutes for a trend";
    } else if (fabs(f->slope) * 60 < FORECAST_FLAT * f->quota) {
        f->none = "flat";
    } else if (f->slope < 0) {
        f->none = "falling";
    } else {
        f->minutes = f->fitted_now >= f->quota ? 0 : (f->quota - f->fitted_now) / f->slope;
        /* an upper-bound use runs out no sooner than this; a lower-bound one no later */
        f->minutes_q = bt_quality_headroom(q);
    }
}

void bt_plan_forecast_all(const struct bt_config *cfg, const struct bt_store *st,
                          const struct bt_eval *evals, struct bt_forecast *out)
{
    int n = cfg->nroutes;
    if (n <= 0)
        return;
    struct bt_eval *frames[BT_FORECAST_MINUTES];
    /* the frames of the groups' evaluated minutes, newest first (groups whose minute
     * differs from the route's are read at their own: frame_at evaluates every route) */
    int64_t m0 = 0;
    for (int r = 0; r < n; r++)
        m0 = evals[r].minute > m0 ? evals[r].minute : m0;
    for (int i = 0; i < BT_FORECAST_MINUTES; i++) {
        frames[i] = bt_xcalloc((size_t)n, sizeof *frames[i]);
        if (m0)
            bt_plan_frame_at(cfg, st, m0 - 60 * (int64_t)i, frames[i]);
    }
    for (int r = 0; r < n; r++) {
        struct bt_eval *shifted[BT_FORECAST_MINUTES];
        int lag = evals[r].minute ? (int)((m0 - evals[r].minute) / 60) : 0;
        for (int i = 0; i < BT_FORECAST_MINUTES; i++)
            shifted[i] = i + lag < BT_FORECAST_MINUTES ? frames[i + lag] : frames[BT_FORECAST_MINUTES - 1];
        forecast_fit(&evals[r], shifted, r, &out[r]);
    }
    for (int i = 0; i < BT_FORECAST_MINUTES; i++)
        free(frames[i]);
}

bool bt_plan_forecast_text(const struct bt_forecast *f, char *out, size_t n)
{
    out[0] = '\0';
    if (isnan(f->minutes))
        return false;
    const char *w = f->minutes_q == BT_QL_LOWER ? "at least" : f->minutes_q == BT_QL_UPPER ? "at most" : "about";
    if (f->minutes < 1)
        snprintf(out, n, "%s reaches its quota within a minute at this trend", bt_side_binding_name(f->side));
    else
        snprintf(out, n, "%s reaches its quota in %s %.0f min at this trend", bt_side_binding_name(f->side),
                 w, floor(f->minutes));
    return true;
}

void bt_plan_forecast(const struct bt_config *cfg, const struct bt_store *st, int r, int64_t now,
                      struct bt_forecast *f)
{
    struct bt_eval *ev = bt_xcalloc((size_t)cfg->nroutes, sizeof *ev);
    struct bt_forecast *all = bt_xcalloc((size_t)cfg->nroutes, sizeof *all);
    bt_eval_all(cfg, st, now, ev);
    bt_plan_forecast_all(cfg, st, ev, all);
    *f = all[r];
    free(all);
    free(ev);
}
