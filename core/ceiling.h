/* A quota group's charge per data minute and the observed ceiling (DOMAIN.md: in
 * minutes with throttles, the accepted tokens per minute are a lower bound on the
 * limit that bound). One computation for every reader: `bedtop plan`, the detail
 * view, `check` and the quota-increase request. */
#ifndef BEDTOP_CEILING_H
#define BEDTOP_CEILING_H
#include <stdbool.h>
#include <stdint.h>

#include "core/config.h"
#include "core/headroom.h"
#include "core/model.h"

/* One quota group's members at one data minute, as the on-demand quota counts them:
 * the reserved service tier taken out (it draws on its own capacity), overflow to
 * Standard left in. Unknown counts add as 0 (data says whether any was seen). */
struct bt_group_minute {
    bool data;               /* some member had a CloudWatch datapoint */
    double used[2];          /* the frame's `used` of the same minute (tok[] + held
                              * reservations: bt_minute_figures), the quota's measure;
                              * tok[] where the frame's is an upper bound (held_unknown) */
    bool held_unknown;       /* some member's held reservations could not be known */
    double tok[2];           /* quota tokens charged: [0] the token quota (runtime
                              * max(settled, EstimatedTPMQuotaUsage), burndown applied;
                              * mantle input), [1] mantle output as generated */
    double inv;              /* calls completed, every tier's */
    double thr;              /* InvocationThrottles */
    double requests;         /* accepted (Invocations): the RPM quota's measure */
    double offered;          /* accepted + InvocationThrottles (bt_requests_offered) */
    double server_errors;
    double input_total;      /* input tokens incl. cache reads and writes, every tier's */
    double output;           /* output tokens, every tier's */
    bool tier_seen;          /* some member had reserved-tier series this minute */
    double tier_inv, tier_tok; /* the reserved tier's calls and tokens (input + output),
                                * taken out of tok[0] */
};
void bt_group_minute(const struct bt_config *cfg, const struct bt_store *st, const int *members,
                     int nm, int64_t m, struct bt_group_minute *out);

#define BT_CEILING_WINDOW 60 /* minutes of the store a route's ceiling is looked for in */

struct bt_ceiling {
    int64_t from, to;           /* the data minutes scanned (0: none) */
    int throttled_minutes;      /* minutes of the window with throttles */
    int covered_minutes;        /* minutes of the window a poll asked the throttles of
                                 * (every member; inferred where none records coverage) */
    double tokens;              /* the most the group was charged on its token quota in one
                                 * of them, TPM: a lower bound on the limit (NAN: none) */
    double tokens_out;          /* mantle: the output side's (NAN otherwise) */
    int64_t tokens_minute;
    double used;                /* the most `used` (held reservations in) in one of them */
    double requests;            /* the most calls the group completed in one of them */
    double submitted_max;       /* the most requests accepted in one of them (RPM's use) */
    double server_errors;       /* over the throttled minutes */
    double throttles;           /* InvocationThrottles over them */
    double quota, rpm_quota;
    double pct_of_quota;        /* tokens as a % of the token quota */
    bool far_below;             /* under half the quota */
    const char *points_to;      /* daily rpm capacity retries reservations (NULL: not far
                                 * below) */
    char why[200];
};
/* The figures over data minutes from..to of the members (quota and cause left empty). */
void bt_ceiling_scan(const struct bt_config *cfg, const struct bt_store *st, const int *members,
                     int nm, int64_t from, int64_t to, struct bt_ceiling *out);
/* Route e->route's group over the BT_CEILING_WINDOW minutes to its evaluated minute,
 * set beside e's quotas, and when far below the quota which limit the evidence
 * points to. */
void bt_ceiling_of(const struct bt_config *cfg, const struct bt_store *st, const struct bt_eval *e,
                   struct bt_ceiling *out);
/* Sets c beside e's quotas (token and RPM) and, when far below the token quota, which
 * limit the evidence points to (the daily quota, RPM, service capacity, a retry
 * storm (RETRY_LOAD), else held reservations): the one rule for every reader of a ceiling. */
void bt_ceiling_explain(const struct bt_eval *e, struct bt_ceiling *c);
/* Every route's (evals[cfg->nroutes]; out holds cfg->nroutes). */
void bt_ceiling_all(const struct bt_config *cfg, const struct bt_store *st,
                    const struct bt_eval *evals, struct bt_ceiling *out);
#endif
