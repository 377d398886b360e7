/* Figure qualities and their one set of combination rules, the freshness state, and the
 * sides a route can be bound by with one function each (core/sides.c): the lowest layer
 * of the evaluation (core/headroom.h), which calls no other part of it. */
#ifndef BEDTOP_SIDES_H
#define BEDTOP_SIDES_H
#include <stdbool.h>

#include "core/model.h"

/* How sure a figure is. A sum with an unknown or lower-bound term is a lower bound;
 * a headroom from a lower-bound use is an upper bound ("at most 41 %"). An estimate
 * (version 4) is a figure of unknown weighting, neither exact nor a bound: token sums
 * against the pricing-weighted cross-model daily quota. */
enum bt_quality { BT_QL_KNOWN, BT_QL_IDLE, BT_QL_LOWER, BT_QL_UPPER, BT_QL_UNKNOWN,
                  BT_QL_ESTIMATE };
/* known idle lower-bound upper-bound unknown estimate */
const char *bt_quality_name(enum bt_quality q);
/* a + b with their qualities (an unknown term counts as at least 0: a lower bound; an
 * estimate term makes an exact sum an estimate, a bound stays a bound) */
enum bt_quality bt_quality_add(enum bt_quality a, enum bt_quality b);
/* quota - used: a lower-bound use gives an upper-bound headroom and back; an
 * estimate gives an estimate */
enum bt_quality bt_quality_headroom(enum bt_quality used);
/* Where a route's CloudWatch stands in its group's frame (the freshness state). */
enum bt_frame_state {
    BT_FR_ACTIVE,   /* datapoints at the evaluated minute */
    BT_FR_IDLE,     /* a good poll settled the minute and found none: usage 0 */
    BT_FR_UNKNOWN,  /* the poll failed, stopped or never answered */
};
const char *bt_frame_state_name(enum bt_frame_state s); /* active idle unknown */

/* The limits a route can be bound by; each computed by one function (core/sides.c). */
enum bt_side {
    BT_SIDE_TPM,          /* runtime tokens per minute (the v2 formula) */
    BT_SIDE_RPM,          /* requests per minute, where Service Quotas lists one */
    BT_SIDE_INPUT,        /* mantle input tokens per minute */
    BT_SIDE_OUTPUT,       /* mantle output tokens per minute */
    BT_SIDE_RES_INPUT,    /* reserved service tier, input tokens per minute */
    BT_SIDE_RES_OUTPUT,   /* reserved service tier, output tokens per minute */
    BT_SIDE_DAILY,        /* tokens per day for the model (its own group) */
    BT_SIDE_DAILY_ACCOUNT, /* the account-wide cross-model tokens per day */
    BT_SIDE_CONCURRENT,   /* calls in flight, where Service Quotas lists a concurrent-requests quota */
    BT_SIDE_COUNT
};
/* The side's one name, as JSON key, Prometheus `side` label, man page and text: tpm rpm
 * input output reserved-input reserved-output daily daily-account concurrent (DESIGN.md's
 * spelling). reserved_input_tpm and the like are quota kinds (bt_quota_kind_name). */
const char *bt_side_name(enum bt_side s);
/* binding_side value: bt_side_name, except that the account's day binds as "daily"
 * (DESIGN.md's list of binding_side values) */
const char *bt_side_binding_name(enum bt_side s);
const char *bt_side_unit(enum bt_side s); /* "TPM" "RPM" "tokens/day" "in flight" */

struct bt_side_fig {
    bool applies;            /* the limit exists for this route (quota known or 0) */
    double quota;            /* NAN unknown */
    enum bt_quota_source source;
    char code[32];
    double used;             /* this route's use of it */
    enum bt_quality used_q;
    double group_used;       /* every member of the side's group */
    enum bt_quality group_q;
    double headroom, pct;    /* quota - group_used, and as a percentage */
    enum bt_quality headroom_q;
    double per_call;         /* what one more call costs on this side (R, 1 request, ...) */
    double fits;             /* floor(headroom / per_call) */
    const char *source_name; /* where `used` comes from */
};

/* floor(headroom / reservation per call): more calls that fit in flight at once. */
double bt_fits_more(double headroom_tpm, double reservation_per_call);

/* The evaluation's own (core/headroom.c runs them); not for views. */
/* A side's route figures (quota q, NULL: none), sums over a group, the group's
 * headroom and the one binding rule. */
void bt_side_route(struct bt_side_fig *f, const struct bt_quota *q, double used,
                   enum bt_quality used_q, double per_call, const char *source);
void bt_side_sum(double *sum, enum bt_quality *q, bool first, const struct bt_side_fig *f);
void bt_side_group(struct bt_side_fig *f, double group_used, enum bt_quality group_q);
enum bt_side bt_side_binding(const struct bt_side_fig *s, enum bt_side token_side);
#endif
