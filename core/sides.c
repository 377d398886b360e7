/* Figure qualities and their one set of combination rules; one function per side
 * (the limit a route can be bound by) and the one rule that picks the binding side
 * (DESIGN.md "Headroom: the contract, version 3"). */
#include "core/sides.h"

#include <math.h>
#include <string.h>

#include "core/eval_int.h"
#include "core/util.h"

const char *bt_quality_name(enum bt_quality q)
{
    static const char *const names[] = {"known",       "idle",    "lower-bound",
                                         "upper-bound", "unknown", "estimate"};
    return (unsigned)q < BT_ARRAY_LEN(names) ? names[q] : "unknown";
}

const char *bt_frame_state_name(enum bt_frame_state s)
{
    static const char *const names[] = {"active", "idle", "unknown"};
    return (unsigned)s < BT_ARRAY_LEN(names) ? names[s] : "unknown";
}

/* Unknown terms are at least 0, so they turn a sum into a lower bound; a lower and
 * an upper bound together bound nothing. An estimate term keeps a bound a bound (an
 * estimate counts as a known term there) and makes an exact sum an estimate. */
enum bt_quality bt_quality_add(enum bt_quality a, enum bt_quality b)
{
    if (a == BT_QL_ESTIMATE || b == BT_QL_ESTIMATE) {
        enum bt_quality k = bt_quality_add(a == BT_QL_ESTIMATE ? BT_QL_KNOWN : a,
                                           b == BT_QL_ESTIMATE ? BT_QL_KNOWN : b);
        return k == BT_QL_KNOWN || k == BT_QL_IDLE ? BT_QL_ESTIMATE : k;
    }
    if (a == BT_QL_UNKNOWN && b == BT_QL_UNKNOWN)
        return BT_QL_UNKNOWN;
    if (a == BT_QL_UNKNOWN || b == BT_QL_UNKNOWN)
        return (a == BT_QL_UPPER || b == BT_QL_UPPER) ? BT_QL_UNKNOWN : BT_QL_LOWER;
    if ((a == BT_QL_LOWER && b == BT_QL_UPPER) || (a == BT_QL_UPPER && b == BT_QL_LOWER))
        return BT_QL_UNKNOWN;
    if (a == BT_QL_LOWER || b == BT_QL_LOWER)
        return BT_QL_LOWER;
    if (a == BT_QL_UPPER || b == BT_QL_UPPER)
        return BT_QL_UPPER;
    return a == BT_QL_IDLE && b == BT_QL_IDLE ? BT_QL_IDLE : BT_QL_KNOWN;
}

enum bt_quality bt_quality_headroom(enum bt_quality used)
{
    switch (used) {
    case BT_QL_LOWER:
        return BT_QL_UPPER;
    case BT_QL_UPPER:
        return BT_QL_LOWER;
    case BT_QL_UNKNOWN:
        return BT_QL_UNKNOWN;
    case BT_QL_ESTIMATE:
        return BT_QL_ESTIMATE;
    default:
        return BT_QL_KNOWN;
    }
}

const char *bt_side_name(enum bt_side s)
{
    static const char *const names[] = {"tpm", "rpm", "input", "output", "reserved-input",
                                        "reserved-output", "daily", "daily-account",
                                        "concurrent"};
    return (unsigned)s < BT_ARRAY_LEN(names) ? names[s] : "?";
}

const char *bt_side_binding_name(enum bt_side s)
{
    return s == BT_SIDE_DAILY_ACCOUNT ? "daily" : bt_side_name(s);
}

const char *bt_side_unit(enum bt_side s)
{
    if (s == BT_SIDE_RPM)
        return "RPM";
    if (s == BT_SIDE_DAILY || s == BT_SIDE_DAILY_ACCOUNT)
        return "tokens/day";
    if (s == BT_SIDE_CONCURRENT)
        return "in flight";
    return "TPM";
}

void bt_side_route(struct bt_side_fig *f, const struct bt_quota *q, double used,
                   enum bt_quality used_q, double per_call, const char *source)
{
    memset(f, 0, sizeof *f);
    f->quota = q ? q->value : NAN;
    f->applies = q && !isnan(q->value);
    f->source = q ? q->source : BT_QS_UNKNOWN;
    if (q)
        bt_strlcpy(f->code, q->code, sizeof f->code);
    f->used_q = isnan(used) ? BT_QL_UNKNOWN : used_q;
    f->used = f->used_q == BT_QL_UNKNOWN ? NAN : used;
    f->per_call = per_call;
    f->source_name = source;
    f->group_used = f->headroom = f->pct = f->fits = NAN;
    f->group_q = f->headroom_q = BT_QL_UNKNOWN;
}

void bt_side_sum(double *sum, enum bt_quality *q, bool first, const struct bt_side_fig *f)
{
    if (first) {
        *sum = f->used;
        *q = f->used_q;
        return;
    }
    *q = bt_quality_add(*q, f->used_q);
    *sum = *q == BT_QL_UNKNOWN ? NAN : bt_z(*sum) + bt_z(f->used);
}

double bt_fits_more(double headroom_tpm, double reservation_per_call)
{
    if (isnan(headroom_tpm) || isnan(reservation_per_call) || reservation_per_call <= 0)
        return NAN;
    if (headroom_tpm <= 0)
        return 0;
    return floor(headroom_tpm / reservation_per_call);
}

/* headroom = quota - what the side's group uses; the quality follows the use's. A
 * quota of 0 is no divisor: nothing fits, the percentage is unknown. */
void bt_side_group(struct bt_side_fig *f, double group_used, enum bt_quality group_q)
{
    f->group_used = group_used;
    f->group_q = isnan(group_used) ? BT_QL_UNKNOWN : group_q;
    if (!f->applies)
        return;
    if (f->quota == 0) {
        f->headroom = 0;
        f->headroom_q = BT_QL_KNOWN;
        f->fits = 0;
        return;
    }
    if (f->group_q == BT_QL_UNKNOWN)
        return;
    f->headroom = f->quota - group_used;
    f->headroom_q = bt_quality_headroom(f->group_q);
    f->pct = 100 * f->headroom / f->quota;
    f->fits = bt_fits_more(f->headroom, f->per_call);
    if (isnan(f->fits) && f->headroom <= 0)
        f->fits = 0; /* nothing fits, whatever one call costs */
}

/* The one rule: a side with a quota of 0 binds; else the least headroom ratio among
 * the sides whose headroom is computed; a tie goes to the earlier side (tpm before
 * rpm, input before output). With none computed, the route's token side. */
enum bt_side bt_side_binding(const struct bt_side_fig *s, enum bt_side token_side)
{
    for (int k = 0; k < BT_SIDE_COUNT; k++)
        if (s[k].applies && s[k].quota == 0)
            return (enum bt_side)k;
    int best = -1;
    for (int k = 0; k < BT_SIDE_COUNT; k++) {
        if (!s[k].applies || isnan(s[k].pct))
            continue;
        if (best < 0 || s[k].pct < s[best].pct)
            best = k;
    }
    return best < 0 ? token_side : (enum bt_side)best;
}
