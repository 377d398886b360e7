/* Deciding, not only seeing (issue 23): what a change would do to a route and its
 * quota group, the limits to set at the admission boundary, when the binding side
 * runs out at this trend, and the observed ceiling. Every figure comes from the
 * headroom evaluation frame (core/headroom.h): a what-if is the same frame
 * evaluated on the observations changed as stated, never a second formula. */
#ifndef BEDTOP_PLAN_H
#define BEDTOP_PLAN_H
#include <stdbool.h>
#include <stdint.h>

#include "core/ceiling.h"
#include "core/config.h"
#include "core/headroom.h"
#include "core/model.h"
#include "core/oppoint.h"

enum bt_plan_tier { BT_TIER_KEEP, BT_TIER_FLEX, BT_TIER_PRIORITY };

/* A change to one route; NAN / false / "" leave that input as observed. */
struct bt_plan_change {
    double max_tokens;       /* output allowance per call */
    double concurrency;      /* a cap on calls in flight */
    double traffic;          /* calls scaled by this factor */
    bool retries_off;        /* retried attempts no longer submitted */
    enum bt_plan_tier tier;
    char region[32];         /* the route moved to this Region */
};
void bt_plan_change_none(struct bt_plan_change *c);
/* A change typed as words, as the detail view's `w` prompt takes it: "max_tokens 768
 * traffic x2 concurrency 20 retries off tier flex region us-west-2" (a key may be
 * written --max-tokens, max-tokens or max_tokens; "key=value" too). False, with why,
 * on a word that is not one. */
bool bt_plan_change_parse(const char *text, struct bt_plan_change *c, char *why, size_t n);
bool bt_plan_change_any(const struct bt_plan_change *c);

#define BT_PLAN_WINDOW 60    /* minutes of the store the peak is looked for in */
#define BT_PLAN_MAX_NOTES 12

/* The inputs an answer assumed, in words with their numbers. */
struct bt_plan_notes {
    char text[BT_PLAN_MAX_NOTES][200];
    int n;
};

/* The what-if lists the first BT_PLAN_MEMBERS other members (a screen's list; the
 * group's size is before.nshared). */
#define BT_PLAN_MEMBERS 8

/* Another route of the quota group, before and after. */
struct bt_plan_member {
    int route;
    double pct_before, pct_after;      /* its binding side's headroom % */
    enum bt_quality q_before, q_after;
    bool left_group;                   /* the change took the route out of this one's group */
};

struct bt_whatif {
    int route;
    int64_t now;
    struct bt_eval before, after;      /* the frame at now, as observed and as changed */
    /* the peak minute of the last hour: the least headroom on the binding side */
    int64_t peak_minute;               /* 0: no minute could be evaluated */
    int minutes_seen;                  /* of the window, minutes with a headroom */
    double peak_pct_before, peak_pct_after;
    enum bt_side peak_side_before, peak_side_after;
    enum bt_quality peak_q_after;
    double peak_throttles;             /* observed at the peak minute */
    int over_before, over_after;       /* minutes of the window past a quota */
    const char *peak_verdict;          /* "yes" "no" "unknown" */
    struct bt_plan_member members[BT_PLAN_MEMBERS]; /* the first of before.nshared */
    int nmembers;
    struct bt_plan_notes notes;
};

/* Evaluates route r at time now as observed and with change c applied, the group
 * included, and replays the last hour for its peak minute. False (with why) when the
 * route cannot be planned (no such route, a change out of range). */
/* Whether AWS offers the Priority and Flex tiers for a model (its ID, any
 * inference-profile prefix ignored): gpt-oss, Qwen, DeepSeek, Nova, Gemma, MiniMax,
 * Mistral, Kimi, Nemotron; not most Claude models. A what-if for a tier the route's
 * model is not offered is refused (bt_plan_whatif), naming the models that are. */
bool bt_tier_offered(const char *model_id);
bool bt_plan_whatif(const struct bt_config *cfg, const struct bt_store *st, int r, int64_t now,
                    const struct bt_plan_change *c, struct bt_whatif *out, char *why, size_t n);

/* ---- forecast ---- */
#define BT_FORECAST_MINUTES 15   /* the trend is fitted over the last 15 evaluated minutes */
#define BT_FORECAST_MIN_POINTS 8 /* minutes with a use before a trend is fitted */
#define BT_FORECAST_SHOW 60      /* shown beside headroom when it runs out within an hour */
struct bt_forecast {
    enum bt_side side;          /* the binding side the trend is of */
    int64_t minute;             /* the evaluated (data) minute the fit ends at (0: none) */
    int points;
    double slope;               /* group use, per minute per minute (least squares) */
    double fitted_now;          /* the fitted use at the evaluated minute */
    double quota;
    double minutes;             /* until the fitted line reaches the quota; NAN: none */
    enum bt_quality minutes_q;  /* lower-bound when the use fitted is an upper bound, and back */
    const char *none;           /* why there is none (flat, falling, too few minutes, ...) */
};
/* Least squares over n points (x minutes, y use): slope and the value at x = x0. */
bool bt_least_squares(const double *x, const double *y, int n, double x0, double *slope,
                      double *at_x0);
void bt_plan_forecast(const struct bt_config *cfg, const struct bt_store *st, int r, int64_t now,
                      struct bt_forecast *out);
/* "tpm reaches its quota in about 18 min at this trend" ("at most" / "at least" when
 * the use fitted is a bound); false (out empty) when there is no run-out. */
bool bt_plan_forecast_text(const struct bt_forecast *f, char *out, size_t n);
/* Every route's, from its evaluation evals[r] at now (out holds cfg->nroutes). */
void bt_plan_forecast_all(const struct bt_config *cfg, const struct bt_store *st,
                          const struct bt_eval *evals, struct bt_forecast *out);

/* ---- observed ceiling: core/ceiling.h (bt_ceiling_of) ---- */

/* ---- the limits to set at the admission boundary ---- */
#define BT_LIMITS_RESERVE 0.20  /* of the quota kept for bursts and recovery retries */
#define BT_LIMITS_RETRY_SHARE 0.10 /* retries at most this share of admitted calls */
struct bt_limits {
    /* concurrency cap from the operating point */
    struct bt_oppoint op;
    double concurrency;         /* NAN: not enough evidence */
    const char *concurrency_basis; /* "knee" "throttles" "no-knee" "no-data" */
    double throttle_level;      /* least in flight in a minute with throttles (NAN none) */
    int64_t window_from, window_to;
    /* token budget */
    double budget_tpm, quota, others_used, reserve_tpm;
    enum bt_quality budget_q;   /* upper-bound when another member's use is a lower bound */
    int others, others_unknown;
    /* max_tokens */
    double max_tokens, max_tokens_now, out_basis;
    const char *max_tokens_basis; /* "admission-p99" "mean-output" NULL */
    const char *truncation;     /* the truncation risk, in words */
    /* retries */
    double retry_budget_pm;     /* retried attempts per minute, at most */
    double retry_share;
    int max_attempts;
    double backoff_base_s, backoff_cap_s;
    struct bt_plan_notes notes;
};
void bt_plan_limits(const struct bt_config *cfg, const struct bt_store *st, int r, int64_t now,
                    struct bt_limits *out);
#endif
