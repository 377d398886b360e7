/* The figures of the two documents people paste after a capacity incident
 * (bedtop(1), DESCRIPTION, report): the quota-increase request and the incident
 * write-up (its figures in core/incidentcalc.h, included here).
 * Pure functions over the store's per-minute series and the evaluations of
 * core/headroom.h; render/ lays them out, app/ writes the files. */
#ifndef BEDTOP_REPORTCALC_H
#define BEDTOP_REPORTCALC_H
#include <stdbool.h>
#include <stdint.h>

#include "core/config.h"
#include "core/headroom.h"
#include "core/incidentcalc.h"
#include "core/model.h"
#include "core/recording.h"

/* Statistics over a list of values (NAN entries skipped; v is reordered).
 * Median: the middle value, or the mean of the two middle ones. Percentile:
 * nearest rank, the smallest value with at least p% of the values at or below
 * it (p99 of 10 values is the largest). NAN when no value. */
double bt_stat_median(double *v, int n);
double bt_stat_percentile(double *v, int n, double pct);
/* Rounds up to two significant figures (1,234,567 -> 1,300,000): a request
 * asks for a round number and never for less than the figure. */
double bt_round_up_2sig(double v);

/* ---- quota-increase request ---- */
/* provisioned: a Provisioned Throughput route, capacity bought in model units, no
 * tokens-per-minute quota at all (nothing to file with Service Quotas or Support) */
enum bt_qr_scope { BT_QR_ON_DEMAND, BT_QR_CROSS_REGION, BT_QR_GLOBAL, BT_QR_MANTLE,
                   BT_QR_PROVISIONED };
/* on-demand cross-region global mantle provisioned */
const char *bt_qr_scope_name(enum bt_qr_scope s);

/* Steady state and peak of a per-minute figure over the busy minutes. */
struct bt_qr_stat {
    double steady;           /* median of the busy minutes */
    double p99, max;         /* peak */
};

/* How a quota is raised, by Service Quotas' Adjustable flag: an adjustable quota
 * with RequestServiceQuotaIncrease (the console), a non-adjustable one only through
 * an AWS Support case, or not at all. Unknown (not listed, a config value):
 * runtime through Service Quotas, mantle through Support (the older text). */
enum bt_qr_through { BT_QR_SERVICE_QUOTAS, BT_QR_AWS_SUPPORT, BT_QR_NOWHERE };
/* service-quotas aws-support none (a provisioned route: no quota to raise) */
const char *bt_qr_through_name(enum bt_qr_through t);
/* What the group's request comes to: raise it; nothing needed; held reservations,
 * not charged tokens, exceed the quota (lower max_tokens first: the charged series
 * alone fits); a legacy model (AWS refuses increases); Provisioned Throughput (model
 * units, no quota); or a quota bedtop does not know (no value: nothing to ask "from",
 * look it up first). A case is drafted only for increase (and a quota of 0). */
enum bt_qr_verdict { BT_QR_INCREASE, BT_QR_NO_INCREASE, BT_QR_LOWER_MAX_TOKENS, BT_QR_LEGACY,
                     BT_QR_PROVISIONED_CAP, BT_QR_QUOTA_UNKNOWN };
/* increase no-increase lower-max-tokens-first legacy provisioned quota-unknown */
const char *bt_qr_verdict_name(enum bt_qr_verdict v);

/* One quota of the group: the runtime TPM quota, or a mantle side. */
struct bt_qr_side {
    const char *name;        /* "tpm", "input", "output" */
    struct bt_qr_stat tpm;   /* quota tokens per minute charged (burndown applied) */
    struct bt_qr_stat used;  /* the frame's `used` per busy minute: charged + held
                              * reservations (bt_minute_figures), the quota's measure;
                              * the peak includes the evaluated minute's group use */
    double charged_ask;      /* what the charged peak alone would ask (peak x margin) */
    enum bt_adjustable adjustable;
    enum bt_qr_through through;
    double ceiling;          /* observed ceiling: the most accepted in a throttled minute,
                              * a lower bound on the limit that bound; NAN: no throttles */
    const char *ceiling_points_to; /* far below the quota: the limit it points to
                                    * (core/ceiling.h; NULL: not far below) */
    char ceiling_why[200];
    double quota;            /* current applied value (NAN unknown; 0 no usable quota) */
    enum bt_quota_source quota_source;
    char code[32];
    char quota_name[192];    /* the AWS quota's name as Service Quotas lists it ("" when
                              * not learned: a config value's key is never put here) */
    bool quota_unknown;      /* no applied value known: no case is drafted for it */
    char unknown_why[192];   /* why, as the quotas collector said (may be "") */
    double ask;              /* peak of `used` (held in) x margin, rounded up; NAN: no usage */
    bool increase_needed;    /* ask above the current quota (or the quota unknown or 0) */
    bool held_only;          /* needed only with the held reservations: the charged
                              * peak x margin fits the quota */
    double peak_pct;         /* peak `used` as a percentage of the quota (NAN unknown) */
};

#define BT_QR_MAX_ROUTES 16
struct bt_qr_group {
    char key[256];           /* core's quota group key */
    int routes[BT_QR_MAX_ROUTES];
    int nroutes;             /* may exceed BT_QR_MAX_ROUTES: only the first are listed */
    bool added[BT_QR_MAX_ROUTES]; /* a member keep did not name, included because it
                                   * draws on the same quota (a request is for the quota) */
    int nadded;
    /* the cause of the throttles as core's rules named it (THROTTLED_BELOW_ESTIMATE,
     * bt_throttle_cause) in the most route-minutes of the window (bt_qr_causes; NULL:
     * none named) */
    const char *cause, *cause_words, *cause_action;
    char cause_text[320];
    int cause_minutes;
    enum bt_qr_scope scope;
    const char *model;       /* the first route's (base) model */
    const char *region;
    bool legacy;             /* a legacy model (DOMAIN.md: AWS refuses increases for models
                              * scheduled for retirement): nothing is asked, ask NAN */
    char legacy_why[240];    /* the evidence: LegacyModelInvocations, or the quota's name */
    double legacy_size;      /* the TPM a current model would need for this load (peak x
                              * margin, rounded up; NAN: no usage) */
    double burndown;         /* output multiplier used (runtime; the first route's) */
    const char *burndown_source;
    struct bt_qr_side side[2];
    int nsides;              /* runtime 1 (tpm), mantle 2 (input, output) */
    enum bt_qr_verdict verdict;
    /* the account-wide cross-model daily quota the group's routes draw on (runtime;
     * NAN: none listed): pricing-weighted, its use an estimate */
    double daily_quota;
    char daily_code[32];
    double daily_used;       /* tokens today of the account's configured routes: estimate */
    enum bt_quality daily_used_q;
    enum bt_adjustable daily_adjustable;
    enum bt_qr_through daily_through;
    /* requests accepted per minute, the RPM quota's measure; no ask without an RPM
     * quota listed (a model without one is limited by tokens only) */
    struct bt_qr_stat rpm;   /* requests accepted per minute (Invocations: failed calls
                              * are in it, throttled ones are not) */
    struct bt_qr_stat rpm_offered; /* accepted + InvocationThrottles, beside it */
    double rpm_quota;        /* NAN: none listed (mantle enforces none) */
    enum bt_quota_source rpm_source;
    char rpm_code[32];
    enum bt_adjustable rpm_adjustable;
    enum bt_qr_through rpm_through;
    double rpm_ask;
    bool rpm_increase_needed;
    double avg_input;        /* input tokens per request, cache reads and writes included */
    double avg_output;       /* output tokens per request */
    double max_tokens;       /* the largest output allowance requested (config or gauge) */
    double requests, throttled_requests; /* over the window */
    int minutes;             /* data minutes in the window */
    int covered_minutes;     /* minutes of the window a good poll asked (and had settled)
                              * the token series of, for every member (DESIGN.md coverage
                              * v4; inferred for a source that records none) */
    bool coverage_inferred;  /* some member's polls recorded no coverage (the demo, an
                              * older recording): its minutes count as covered */
    int minutes_with_data;   /* minutes some member had a datapoint (busy or not) */
    int busy_minutes;        /* minutes with invocations or tokens */
    int throttled_minutes;   /* minutes with InvocationThrottles > 0 */
    int held_unknown_minutes; /* busy minutes whose held reservations could not be known
                               * (no admission gauge, no latency): charged counted there */
    /* the reserved service tier: its own capacity, taken out of the TPM figures above
     * (ResolvedServiceTier=reserved; overflow to Standard stays in them) */
    int tier_minutes;        /* minutes with reserved-tier series (0: none, figures NAN) */
    struct bt_qr_stat tier_tpm; /* its input + output tokens per busy minute */
    double tier_requests;    /* its calls over the window (in `requests`, every tier's) */
};

struct bt_qr {
    int64_t from, to;        /* data minutes, inclusive */
    double margin;           /* the ask is peak x margin (1.2 = 20 % above the peak) */
    struct bt_qr_group *groups;
    int ngroups;
};

/* Per quota group (evals[r].group.leader, from bt_eval_all: the dashboard's
 * groups) of the routes with keep[r] (NULL: all), over the data minutes from..to
 * of the store. The quotas are the ones the evaluations resolved (in a replay,
 * seek to the end and evaluate there: the quotas learned while recording apply). */
void bt_qr_build(const struct bt_config *cfg, const struct bt_store *st,
                 const struct bt_eval *evals, int64_t from, int64_t to, const bool *keep,
                 double margin, struct bt_qr *out);
void bt_qr_free(struct bt_qr *q);
/* From the recording the request was built from (rp seeked to its end, as for
 * bt_qr_build; left there): each group's cause, the THROTTLED_BELOW_ESTIMATE cause
 * core's rules named on its routes in the most minutes of the window (evaluated as on
 * screen, as the incident report does, at the minutes a member was throttled only: the
 * rule needs throttles), so a ceiling far below the quota points to it as every other
 * view says; and its covered minutes as the incident report counts them (a datapoint,
 * or asked for by a good poll: a minute whose CloudWatch poll was failing when it was
 * shown is unknown). */
struct bt_replay;
void bt_qr_walk(struct bt_qr *q, const struct bt_replay *rp);
#endif
