/* Reservation-aware headroom per route and quota group, contract version 2
 * (docs/headroom.md, man 7 bedtop-headroom), and the warning rules, table-driven. */
#ifndef BEDTOP_HEADROOM_H
#define BEDTOP_HEADROOM_H
#include "core/config.h"
#include "core/model.h"

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
    X(LEGACY_MODEL)                     \
    X(NO_PUBLISHED_QUOTA)               \
    X(PROVISIONED)
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

enum bt_side { BT_SIDE_INPUT, BT_SIDE_OUTPUT };
const char *bt_side_name(enum bt_side s); /* "input" "output" */

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
    bool upper_bound;        /* in-flight unknown: used is the per-minute bound */
    const char *reservation_source; /* "admission" "cloudwatch" NULL */
    const char *in_flight_source;   /* "admission" "littles-law" NULL */
    const char *held_source;        /* "admission" "littles-law" "upper-bound" NULL */
    const char *reserved_source;    /* "admission" "cloudwatch" NULL */
};
void bt_minute_figures(const struct bt_config *cfg, const struct bt_store *st, int route,
                       int64_t minute, struct bt_minute_fig *out);

#define BT_MAX_WARN BT_W_COUNT
#define BT_MAX_SHARED 8
struct bt_eval {
    int route;
    int64_t now;
    int64_t minute;          /* CloudWatch minute evaluated (0: none) */
    int64_t adm_minute;      /* admission minute evaluated (0: none) */
    bool mantle;
    bool idle;               /* CloudWatch answered, no datapoints: usage 0 */
    bool has_usage;          /* any usage signal present (or idle) */
    /* this route, tokens per minute; a mantle route's follow its binding side */
    double settled, estimated, held, used, reserved_per_min;
    double reservation;      /* R, tokens per call */
    double in_flight;
    bool upper_bound;
    const char *reservation_source, *in_flight_source, *held_source, *reserved_source;
    /* the quota group (the route itself and the routes in shared_with) */
    int group_leader;        /* its first route in config order: a stable group label */
    int shared_with[BT_MAX_SHARED];
    int nshared;             /* other routes on this quota (may exceed BT_MAX_SHARED) */
    double group_used;       /* used summed over the group (binding side for mantle) */
    double quota;            /* TPM (runtime) or the binding mantle quota */
    enum bt_quota_source quota_source;
    char quota_code[32];
    double headroom_tpm, headroom_pct, fits_more;
    /* mantle: each side its own quota and headroom; `binding` is the one rule */
    enum bt_side binding;
    double in_quota, in_used, in_group_used, in_headroom, in_pct;
    double out_quota, out_used, out_group_used, out_headroom, out_pct;
    /* burndown: the resolved value and the one EstimatedTPMQuotaUsage implies */
    double burndown, burndown_measured;
    const char *burndown_source;
    /* context */
    double invocations, input_tokens, output_tokens, cache_read, cache_write;
    double avg_input, avg_output, max_tokens;
    double throttles, lat_p50, lat_p90, lat_p99, lat_avg;
    double conc_limit, queue_depth, littles_in_flight;
    double admitted, rejected, retries, completed, adm_throttled, adm_settled;
    double out_p50, out_p99;
    double offered_growth, accepted_growth; /* over 5 minutes, NAN unknown */
    double recommended_max_tokens, fits_more_recommended;
    double tokens_today;     /* this route */
    double group_tokens_today, tpd; /* the group's, against its daily quota */
    double daily_rate;       /* the group's settled tokens per minute now */
    double rpm_quota;
    bool stale;
    char stale_reason[224];
    int64_t last_ok[BT_SRC_COUNT]; /* freshness per source: last good poll, 0 never */
    enum bt_status status;
    struct bt_warning warnings[BT_MAX_WARN];
    int nwarn;
};

/* Evaluates every route at time now (the last complete minute before it); evals
 * holds cfg->nroutes entries. Routes on one quota are evaluated together. */
void bt_eval_all(const struct bt_config *cfg, const struct bt_store *st, int64_t now,
                 struct bt_eval *evals);
/* One route (its quota group is evaluated with it). */
void bt_eval_route(const struct bt_config *cfg, const struct bt_store *st, int route,
                   int64_t now, struct bt_eval *out);
bool bt_eval_has(const struct bt_eval *e, enum bt_wcode code);
#endif
