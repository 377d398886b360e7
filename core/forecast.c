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

/* One minute of a route's trend: its binding side's group use in the frame of that
 * minute (valid: the frame evaluated the route at that minute, with a known-enough use). */
struct forecast_pt {
    double used;
    unsigned char q;
    bool valid;
};

/* Why no trend can be fitted for the route evaluated as e, or NULL when one can. */
static const char *no_trend(const struct bt_eval *e)
{
    const struct bt_side_fig *s = &e->side[e->binding];
    if (e->binding == BT_SIDE_DAILY || e->binding == BT_SIDE_DAILY_ACCOUNT)
        return "the daily side binds: see the daily run-out";
    if (!e->minute)
        return "no evaluated minute";
    if (!(s->applies && s->quota > 0))
        return "no quota to run out of";
    return NULL;
}

/* Route r's forecast from its group's use at the last minutes: pts[i] the minute
 * m0 - i of its own evaluated minute m0. */
static void forecast_fit(const struct bt_eval *now, const struct forecast_pt *pts,
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
    f->none = no_trend(now);
    if (f->none)
        return;
    double x[BT_FORECAST_MINUTES], y[BT_FORECAST_MINUTES];
    enum bt_quality q = BT_QL_KNOWN;
    for (int i = 0; i < BT_FORECAST_MINUTES; i++) {
        if (!pts[i].valid)
            continue;
        x[f->points] = -i;
        y[f->points++] = pts[i].used;
        q = bt_quality_add(q, pts[i].q == BT_QL_IDLE ? BT_QL_KNOWN : (enum bt_quality)pts[i].q);
    }
    if (f->points < BT_FORECAST_MIN_POINTS ||
        !bt_least_squares(x, y, f->points, 0, &f->slope, &f->fitted_now)) {
        f->none = "not enough data: too few minutes covered by a poll for a trend";
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

/* The points of every needed route's trend from the frames of the last minutes. A
 * point is the route's minute read with the present frame's definitions: where the
 * newest point had admission counters and an older one did not (`check` scrapes only
 * now), or the other way round, the older one is no point (DESIGN.md v4: a gauge read
 * only now does not make the newest point a step above the ones Little's law gave). */
static void collect_points(const struct bt_config *cfg, const struct bt_store *st,
                           const struct bt_eval *evals, const bool *need, const int *slot,
                           int nneed, int64_t m0, struct bt_eval_groups *g, struct bt_eval *frame,
                           struct forecast_pt *pts)
{
    int n = cfg->nroutes;
    unsigned char *adm = bt_xcalloc((size_t)nneed * BT_FORECAST_MINUTES, sizeof *adm);
    for (int k = 0; k < BT_FORECAST_MINUTES && m0; k++) {
        bt_plan_frame_at(cfg, st, m0 - 60 * (int64_t)k, g, need, frame);
        for (int r = 0; r < n; r++) {
            if (!need[r])
                continue;
            int lag = evals[r].minute ? (int)((m0 - evals[r].minute) / 60) : 0;
            int i = k - lag;
            if (i < 0 || i >= BT_FORECAST_MINUTES)
                continue;
            const struct bt_eval *e = &frame[r];
            const struct bt_side_fig *fi = &e->side[evals[r].binding];
            size_t at = (size_t)slot[r] * BT_FORECAST_MINUTES + (size_t)i;
            struct forecast_pt *p = &pts[at];
            p->valid = e->minute == evals[r].minute - 60 * (int64_t)i && fi->group_q != BT_QL_UNKNOWN &&
                       !isnan(fi->group_used);
            p->used = fi->group_used;
            p->q = (unsigned char)fi->group_q;
            adm[at] = e->adm_minute != 0;
        }
    }
    for (int k = 0; k < nneed; k++) {
        struct forecast_pt *p = &pts[(size_t)k * BT_FORECAST_MINUTES];
        const unsigned char *a = &adm[(size_t)k * BT_FORECAST_MINUTES];
        int newest = 0;
        while (newest < BT_FORECAST_MINUTES && !p[newest].valid)
            newest++;
        for (int i = newest + 1; i < BT_FORECAST_MINUTES; i++)
            if (a[i] != a[newest])
                p[i].valid = false;
    }
    free(adm);
}

void bt_plan_forecast_all(const struct bt_config *cfg, const struct bt_store *st,
                          const struct bt_eval *evals, struct bt_forecast *out)
{
    int n = cfg->nroutes;
    if (n <= 0)
        return;
    /* The frames of the last minutes, newest first, one at a time (frame_at evaluates
     * every route, the groups included: a group whose minute differs from the route's
     * is read at its own). Of each frame only what the fits read is kept: the binding
     * side's group use of each route at the minute it needs from that frame (a route
     * whose data lag behind the newest reads frame k as its minute k - lag). A
     * minute no poll asked for is no point (core/model.h coverage): a trend is fitted
     * over the minutes known, never over zeros. */
    int64_t m0 = 0;
    for (int r = 0; r < n; r++)
        m0 = evals[r].minute > m0 ? evals[r].minute : m0;
    struct bt_eval *frame = bt_xcalloc((size_t)n, sizeof *frame);
    struct bt_eval_groups *g = bt_eval_groups_once(cfg);
    /* only the routes a trend can be fitted for, and only their quota side's group:
     * a daily side binding has a run-out of its own; their points only (slot: the
     * route's place among them, -1 none), the others' are none (a check of 20,000
     * routes needs a trend for an eighth: 4 MB of points for all was most zeros) */
    bool *need = bt_xcalloc((size_t)n, sizeof *need);
    int *slot = bt_xmalloc((size_t)n * sizeof *slot);
    int nneed = 0;
    for (int r = 0; r < n; r++) {
        need[r] = !no_trend(&evals[r]);
        slot[r] = need[r] ? nneed++ : -1;
    }
    struct forecast_pt *pts = bt_xcalloc((size_t)(nneed ? nneed : 1) * BT_FORECAST_MINUTES, sizeof *pts);
    if (nneed)
        collect_points(cfg, st, evals, need, slot, nneed, m0, g, frame, pts);
    static const struct forecast_pt none[BT_FORECAST_MINUTES];
    for (int r = 0; r < n; r++)
        forecast_fit(&evals[r], slot[r] < 0 ? none : &pts[(size_t)slot[r] * BT_FORECAST_MINUTES],
                     &out[r]);
    free(slot);
    free(need);
    bt_eval_groups_free(g);
    free(frame);
    free(pts);
}

bool bt_plan_forecast_text(const struct bt_forecast *f, char *out, size_t n)
{
    out[0] = '\0';
    if (isnan(f->minutes))
        return false;
    const char *w = f->minutes_q == BT_QL_LOWER ? "at least" : f->minutes_q == BT_QL_UPPER ? "at most" : "about";
    /* how many minutes it had: the polls' covered ones only */
    if (f->minutes < 1)
        snprintf(out, n, "%s reaches its quota within a minute at this trend (fit over %d minutes)",
                 bt_side_binding_name(f->side), f->points);
    else
        snprintf(out, n, "%s reaches its quota in %s %.0f min at this trend (fit over %d minutes)",
                 bt_side_binding_name(f->side), w, floor(f->minutes), f->points);
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
