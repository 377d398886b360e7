/* Reservation-aware headroom per route and quota group, contract version 3
 * (DESIGN.md, docs/headroom.md): one evaluation frame per quota group, every figure
 * with a quality, one function per side and one rule for the side that binds; the
 * warning rules, table-driven (core/rules.c). */
#ifndef BEDTOP_HEADROOM_H
#define BEDTOP_HEADROOM_H
#include "core/config.h"
#include "core/model.h"
#include "core/speed.h"

enum bt_status { BT_ST_OK, BT_ST_WARN, BT_ST_UNKNOWN, BT_ST_CRIT };
const char *bt_status_name(enum bt_status s); /* ok warn unknown crit */
int bt_status_exit(enum bt_status s);         /* 0 1 3 2 */
enum bt_status bt_status_worse(enum bt_status a, enum bt_status b);

#define BT_WARNINGS(X)                  \
    X(ESTIMATE_ONLY)                    \
    X(THROTTLED_BELOW_ESTIMATE)         \
    X(OVERSIZED_MAX_TOKENS)             \
    X(RETRY_LOAD)                       \
    X(HIDDEN_PARALLELISM)               \
    X(LOW_HEADROOM)                     \
    X(QUOTA_DEFAULT)                    \
    X(QUOTA_UNKNOWN)                    \
    X(STALE)                            \
    X(DAILY_QUOTA)                      \
    X(BATCH_CANDIDATE)                  \
    X(NO_QUOTA)                         \
    X(SHARED_QUOTA)                     \
    X(BURNDOWN_MISMATCH)                \
    X(PARTIAL_GROUP)                    \
    X(OUTPUT_CUTOFF)                    \
    X(SLOWDOWN)                         \
    X(LEGACY_MODEL)                     \
    X(NO_PUBLISHED_QUOTA)               \
    X(PROVISIONED)                      \
    X(UNSEEN_CALLERS)                   \
    X(SPEND_SPIKE)
#define BT_W_ENUM(code) BT_W_##code,
enum bt_wcode { BT_WARNINGS(BT_W_ENUM) BT_W_COUNT };
#undef BT_W_ENUM

struct bt_warning {
    enum bt_wcode code;
    enum bt_status severity;
    char message[320];       /* what was seen, with the numbers */
    const char *action;      /* what to do (the code's action, or the cause's) */
};

const char *bt_wcode_name(enum bt_wcode c);
const char *bt_wcode_title(enum bt_wcode c);   /* short phrase */
const char *bt_wcode_action(enum bt_wcode c);  /* what the engineer should do */
int bt_wcode_by_name(const char *name);
/* The cause a THROTTLED_BELOW_ESTIMATE warning named (core/rules.c, the one rule every
 * view reads): a short name ("capacity", "rpm", "daily", "retries", "reservations",
 * "shared", "bursts", "unseen") and its words ("a retry storm"); NULL for any other
 * warning. */
const char *bt_throttle_cause(const struct bt_warning *w, const char **words);
/* Server errors point to service capacity, not a quota, when they are at least a tenth
 * of the throttles beside them: the rules' test, and the observed ceiling's. */
bool bt_capacity_evidence(double server_errors, double throttles);

/* The contract's pure formulas, exposed for tests and views (docs/headroom.md). */
double bt_settled_tpm(double input, double cache_write, double output, double burndown);
/* Little's law: calls in flight = arrivals per second x average seconds per call. */
double bt_littles_law(double invocations_per_min, double latency_avg_ms);
/* floor(headroom / reservation per call): more calls that fit in flight at once. */
double bt_fits_more(double headroom_tpm, double reservation_per_call);

/* The quota a route draws from: routes with equal keys share one quota (same
 * account or profile and Region, then the quota code, else endpoint, inference type
 * and model: base_model when set). */
void bt_quota_group_key(const struct bt_route *r, char *out, size_t n);
/* Whether a caller of model_id, a ModelId the config does not name, seen in route r's
 * account and Region, draws from r's quota: the same endpoint, inference type and base
 * model (a model called directly that r reaches through an application inference
 * profile, for one); a ModelId cannot tell its context-length variant, so r's is
 * assumed. base_model: what model_id routes to when it is an application inference
 * profile (NULL: model_id itself), with its inference type (-1: from model_id's
 * prefix). Provisioned Throughput never does. */
bool bt_quota_shared_by(const struct bt_route *r, const char *model_id, const char *base_model,
                        int inference);

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
/* Requests per minute, the RPM quota's measure: the accepted calls, Invocations
 * (it already counts calls that later failed; throttled ones are not in it), or the
 * admission counters' admitted rate. offered = accepted + throttled (retries
 * included), shown beside it, never the side's use. NAN when accepted is unknown. */
double bt_requests_offered(double accepted, double throttles);
struct bt_eval;
double bt_eval_offered(const struct bt_eval *e);

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
/* The side's one name, as JSON key, Prometheus `side` label and text: tpm rpm input
 * output reserved-input reserved-output daily daily-account concurrent */
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

/* One route's figures for one minute, as the graphs draw them and as the
 * evaluation uses them (NAN unknown). For a mantle route they are the input side. */
struct bt_minute_fig {
    double settled;          /* charged at completion (mantle: input tokens) */
    double estimated;        /* EstimatedTPMQuotaUsage */
    double reservation;      /* R, per call */
    double in_flight;
    double held;             /* reservations held by the calls in flight */
    double reserved_per_min; /* reservations started in the minute */
    double used;             /* max(settled, estimated) + held, or the upper bound */
    enum bt_quality used_q, held_q;
    const char *reservation_source; /* "admission" "cloudwatch" "last-minutes" "max-tokens" NULL */
    const char *in_flight_source;   /* "admission" "littles-law" NULL */
    const char *held_source;        /* "admission" "littles-law" "upper-bound" NULL */
    const char *reserved_source;    /* "admission" "cloudwatch" NULL */
};
void bt_minute_figures(const struct bt_config *cfg, const struct bt_store *st, int route,
                       int64_t minute, struct bt_minute_fig *out);
/* The same, with the admission readings data minute `minute` is evaluated with
 * (core/dataminute.h), as a view at instant now shows that minute: the graphs. */
void bt_minute_figures_shown(const struct bt_config *cfg, const struct bt_store *st, int route,
                             int64_t minute, int64_t now, struct bt_minute_fig *out);
/* Reserved-tier traffic of one minute (ResolvedServiceTier=reserved), which draws on
 * the reserved capacity, not the on-demand quota (NAN: no tier series). */
struct bt_tier_fig {
    double share;            /* of the route's calls, 0-1 */
    double inv, input, output;
};
/* The same with the reserved tier taken out as the evaluation takes it out: the
 * on-demand quota's figures of the minute; *tier gets what was taken out. */
void bt_minute_figures_on_demand(const struct bt_config *cfg, const struct bt_store *st, int route,
                                 int64_t minute, struct bt_minute_fig *out, struct bt_tier_fig *tier);

/* What a route costs at list prices (core/cost.h), evaluated in its group's frame:
 * always an estimate (no discounts or credits), unknown (NAN, with the reason) when
 * no price row or no usage reading prices it, never 0 for want of a price. */
struct bt_price_row;
struct bt_spend {
    double usd_per_hour;     /* the evaluated minute's spend x 60 (NAN unknown) */
    double usd_today;        /* since 00:00 UTC (NAN unknown) */
    enum bt_quality quality; /* estimate, or unknown */
    enum bt_quality today_q; /* estimate; lower-bound when some of the day is not read */
    const struct bt_price_row *row; /* the price row used (NULL: none) */
    char reason[192];        /* why a figure is unknown ("" when both are priced) */
    /* SPEND_SPIKE: the median of the last spend_spike_minutes minutes and of the
     * trailing baseline before them, USD per hour (NAN: not enough minutes; the
     * baseline also where the recent median is under the floor or cannot be above
     * spend_spike_factor times it: the rule needs no more) */
    double recent, baseline;
    int baseline_minutes;
};

#define BT_MAX_WARN BT_W_COUNT
struct bt_eval {
    int route;
    int64_t now;
    int64_t minute;          /* the group's evaluated CloudWatch minute (0: none) */
    int64_t adm_minute;      /* newest admission scrape read (0: none) */
    int64_t data_minute;     /* this route's newest datapoint at or before `minute` */
    int64_t fresher_minute;  /* a datapoint newer than `minute`, not settled yet (0: none) */
    bool mantle;
    enum bt_frame_state state;
    /* this route, tokens per minute; a mantle route's follow its binding token side */
    double settled, estimated, held, used, reserved_per_min;
    enum bt_quality used_q, held_q;
    double reservation;      /* R, tokens per call */
    double in_flight;
    const char *reservation_source, *in_flight_source, *held_source, *reserved_source;
    /* service tiers: reserved-tier traffic (ResolvedServiceTier=reserved) taken out */
    double tier_reserved_share; /* of the route's calls, 0-1 (NAN: no tier series) */
    double tier_reserved_inv, tier_reserved_input, tier_reserved_output;
    /* requests accepted per minute (RPM): Invocations or admission admitted */
    double requests;
    enum bt_quality requests_q;
    const char *requests_source;
    /* the quota group (struct bt_group): every member, none dropped, is reached from
     * group_leader through group_next in the evals it was evaluated with
     * (bt_group_next) */
    int group_leader;        /* its first route in config order: a stable group label */
    int group_next;          /* the next member in config order (-1: the last) */
    int nshared;             /* the other routes on this quota, all of them */
    int unknown_member;      /* another member whose usage is unknown (-1: none) */
    int nunknown;
    /* every side, and the one that binds: headroom_pct and fits_more are its */
    struct bt_side_fig side[BT_SIDE_COUNT];
    enum bt_side binding;
    enum bt_side token_side; /* tpm, or mantle's binding input/output side */
    /* the token side's quota and figures (the route's TPM headline) */
    double group_used;
    enum bt_quality group_used_q;
    double quota;
    enum bt_quota_source quota_source;
    char quota_code[32];
    double headroom_tpm;
    /* the binding side's */
    double headroom_pct, fits_more;
    enum bt_quality headroom_q;
    /* burndown: the resolved value and the one EstimatedTPMQuotaUsage implies */
    double burndown, burndown_measured;
    const char *burndown_source;
    /* context */
    double invocations, input_tokens, output_tokens, cache_read, cache_write;
    double client_errors, server_errors, server_errors_before, throttles_before;
    double avg_input, avg_output, max_tokens;
    double throttles, lat_p50, lat_p90, lat_p99, lat_avg;
    double conc_limit, queue_depth, littles_in_flight;
    double admitted, rejected, retries, completed, adm_throttled, adm_settled;
    double out_p50, out_p99;
    struct bt_speed speed;   /* output tokens per second against the trailing hour */
    double offered_growth, accepted_growth; /* over 5 minutes, NAN unknown */
    double recommended_max_tokens, fits_more_recommended;
    double tokens_today;     /* this route */
    /* known: a day sum, or every minute since midnight covered by a poll; lower-bound:
     * summed from the minutes covered, some of the day never asked (a failed or
     * missing day sum); unknown: none */
    enum bt_quality tokens_today_q;
    double group_tokens_today, tpd; /* the daily side's group, against its daily quota */
    double daily_rate;       /* that daily group's settled tokens per minute now */
    double rpm_quota;
    bool stale;
    char stale_reason[224];
    struct bt_spend spend;   /* what it costs (core/cost.h) */
    int64_t last_ok[BT_SRC_COUNT]; /* freshness per source: last good poll, 0 never */
    bool failing[BT_SRC_COUNT];    /* the source's last answer for this route an error */
    enum bt_status status;
    struct bt_warning warnings[BT_MAX_WARN];
    int nwarn;
};

/* Evaluates every route at time now (the last complete minute before it); evals
 * holds cfg->nroutes entries. Routes on one quota are evaluated together. */
void bt_eval_all(const struct bt_config *cfg, const struct bt_store *st, int64_t now,
                 struct bt_eval *evals);
/* The members of e's quota group in config order, from the evals array e was
 * evaluated in (none dropped, whatever the group's size):
 *     for (int m = e->group_leader; m >= 0; m = bt_group_next(evals, m))
 * A chain that does not move forward (an eval never evaluated) ends. */
static inline int bt_group_next(const struct bt_eval *evals, int m)
{
    int n = evals[m].group_next;
    return n > m ? n : -1;
}

/* A quota group: the routes that draw from one quota (DESIGN.md "quota group"),
 * computed once per config by bt_eval_groups_new (sorted by group key, n log n) and
 * read by the evaluation, the rules, plan --limits, the observed ceiling and the
 * JSON. Issue 35's shares (who holds the quota) are a per-group list that belongs
 * here. */
struct bt_group {
    int leader;            /* its lowest route index */
    int n;                 /* members, the leader included */
    const int *members;    /* route indexes in config order */
};
/* The grouping of a config's routes (quota groups, daily groups): it depends on the
 * config alone, so a caller evaluating many minutes of one config computes it once. */
struct bt_eval_groups {
    int nroutes;
    int *group;            /* each route's quota group, as its lowest route index */
    int ngroups;
    struct bt_group *groups;  /* in order of their leaders */
    int *group_index;      /* each route's index in groups[] */
    int *member;           /* every group's members, one run a group (groups[].members) */
    int *daily[2];         /* runtime routes by daily key: [0] the model's, [1] the account's */
    int *daily_run[2];     /* where each run of equal keys starts in daily[]; one more: the end */
    int ndaily_runs[2];
};
struct bt_eval_groups *bt_eval_groups_new(const struct bt_config *cfg);
void bt_eval_groups_free(struct bt_eval_groups *g);
/* Route r's quota group (r in 0..g->nroutes-1). */
const struct bt_group *bt_eval_group_of(const struct bt_eval_groups *g, int r);
/* bt_eval_all with g (of this cfg); figures_only leaves the warnings out (status OK,
 * none) and the output speed (zero): the sides, the binding one and the figures are
 * the same. need (NULL: every
 * route): only the quota groups with a route needed are evaluated (the others' evals
 * are left as they were), and the daily sides are left out (not applying): the
 * quota sides' figures of those groups are the same. */
void bt_eval_all_with(const struct bt_config *cfg, const struct bt_store *st, int64_t now,
                      const struct bt_eval_groups *g, bool figures_only, const bool *need,
                      struct bt_eval *evals);
/* The first instant after now at which the clock alone, the store unchanged, may
 * change what bt_eval_all at now found (evals), other than e->now itself (ages):
 * a source going stale, admission counters falling silent, a provisioned route's
 * spend today. INT64_MAX: none. */
int64_t bt_eval_changes_at(const struct bt_config *cfg, const struct bt_store *st,
                           const struct bt_eval *evals, int64_t now);
/* Whether bt_eval_all at `later` (> now), the store unchanged, finds what it found at
 * now (evals) but for e->now: the same minute and data minute, before
 * bt_eval_changes_at, and no route stale by an age its reason counts in minutes. */
bool bt_eval_same_at(const struct bt_config *cfg, const struct bt_store *st,
                     const struct bt_eval *evals, int64_t now, int64_t later);
/* One route (its quota group is evaluated with it). */
void bt_eval_route(const struct bt_config *cfg, const struct bt_store *st, int route,
                   int64_t now, struct bt_eval *out);
bool bt_eval_has(const struct bt_eval *e, enum bt_wcode code);
/* Tokens today, one reading (issue 31): every reader of the day (the daily sides, the
 * day's spend, the cross-model ledger) reads it through this minute, the frame's: the
 * group's evaluated minute, else the route's newest data minute (0: none). A member
 * unknown at its group's minute is read through that minute too, never through its
 * own newest one (which may hold minutes not yet settled). */
static inline int64_t bt_eval_day_minute(const struct bt_eval *e)
{
    return e->minute ? e->minute : e->data_minute;
}
/* Route r's settled tokens since 00:00 UTC through minute dm, as the daily sides count
 * them: the day sums (and the minutes after them) of input + cache write + output x
 * burndown (1 on mantle). NAN when none of them was read. */
double bt_day_tokens(const struct bt_store *st, const struct bt_route *rt, int r, int64_t dm);
/* The newest admission scrape minute of route r at or before limit (0: none): the
 * minute an evaluation at limit reads the admission counters at (adm_minute). */
int64_t bt_eval_adm_minute(const struct bt_store *st, int r, int64_t limit);
/* The scrape minute of the admission readings that data minute m is evaluated with:
 * the newest of route r's admission scrapes while m was the newest complete minute
 * (no later than now, no earlier than one poll interval before m is first shown), as
 * core/frame.c reads them at m's instant. The detail graphs file an admission reading
 * under the data minute it is evaluated with, as export's rows do. 0: none then. */
int64_t bt_data_minute_admission(const struct bt_config *cfg, const struct bt_store *st, int r,
                                 int64_t m, int64_t now);

/* The Regions of the routes evals[which[0..n-1]] (all cfg->nroutes when which is NULL):
 * how many, and how many are failing: CloudWatch or Service Quotas answers an error for
 * a route there (its route is stale, so unknown, with the reason: core/frame.c). */
struct bt_region_count { int regions, failing; };
struct bt_region_count bt_region_count(const struct bt_config *cfg, const struct bt_eval *evals,
                                       const int *which, int n);
/* What the headroom alone says against the warn/crit thresholds (ok, warn, crit;
 * unknown when the headroom is): the dashboard colours HEAD% by it, not by the
 * route's status, which other warnings raise too. */
enum bt_status bt_headroom_level(const struct bt_config *cfg, const struct bt_eval *e);
#endif
