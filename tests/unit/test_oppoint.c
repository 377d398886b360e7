/* The operating point's knee, on series worked out by hand. */
#include <math.h>

#include "core/oppoint.h"
#include "tests/tap.h"

int main(void)
{
    struct bt_oppoint o;

    /* Completions rise 100 per call in flight up to 18, then stay at 1800: mean of the
     * levels 18..24 is 1800 = the best; 95% of it is 1710, first reached at 18. */
    double xs[25], ys[25];
    for (int i = 0; i < 25; i++) {
        xs[i] = i;
        ys[i] = i < 18 ? 100.0 * i : 1800;
    }
    bt_oppoint_compute(xs, ys, 25, &o);
    OK(o.enough && o.plateau, "a rise then a plateau is judged");
    NEAR(o.knee, 18, 0, "knee at 18 in flight");
    NEAR(o.width, 1, 0, "one call per level below 64 in flight");

    /* Still rising at the top: no plateau seen. */
    bt_oppoint_compute(xs, xs, 25, &o);
    OK(o.enough && !o.plateau, "a straight rise has no plateau");

    /* One dot is not an operating point. */
    double x1 = 30, y1 = 900;
    bt_oppoint_compute(&x1, &y1, 1, &o);
    OK(!o.enough && isnan(o.knee), "one minute: not enough data, no knee");
    /* Five minutes at one level: still no knee to name. */
    double x5[5] = {30, 30, 30, 30, 30}, y5[5] = {900, 910, 905, 900, 901};
    bt_oppoint_compute(x5, y5, 5, &o);
    OK(!o.enough && o.levels == 1, "five minutes at one level: not enough");

    /* Issue 16, break 4: one admission gauge of 4e10 in flight. The levels stay at 64
     * (width ceil(4e10 / 63) = 634920635), nothing is sized by the value. */
    double xh[6] = {10, 20, 30, 40, 50, 4e10}, yh[6] = {100, 200, 300, 400, 500, 500};
    bt_oppoint_compute(xh, yh, 6, &o);
    NEAR(o.width, 634920635, 0, "break 4, 4e10 in flight: 64 levels of 634,920,635");
    NEAR(o.xmax, 4e10, 0, "xmax is the gauge");
    OK(o.levels == 2, "the small values share level 0 (got %d levels)", o.levels);

    /* NaN, negative and infinite values are skipped, never binned. */
    double xb[7] = {NAN, -5, INFINITY, 1, 2, 3, 4}, yb[7] = {1, 1, 1, 10, 20, 30, 30};
    bt_oppoint_compute(xb, yb, 7, &o);
    OK(o.points == 4, "only the four usable minutes count (got %d)", o.points);
    return tap_done();
}
