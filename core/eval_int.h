/* The figures' NAN helpers, shared by the evaluation and core's other readers of it
 * (each part's own functions are in its header: core/sides.h, formulas.h, rules.h,
 * frame.h, headroom.h); not for views. */
#ifndef BEDTOP_EVAL_INT_H
#define BEDTOP_EVAL_INT_H
#include <math.h>

#include "core/headroom.h"

static inline double bt_z(double v)
{
    return isnan(v) ? 0 : v;
}

static inline double bt_nanmax(double a, double b)
{
    if (isnan(a))
        return b;
    if (isnan(b))
        return a;
    return a > b ? a : b;
}

#endif
