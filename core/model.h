/* The model every view reads: routes, per-route per-minute series of samples,
 * collector status and events. One kind of record flows in: a sample
 * (time, route, signal, value), plus a few events. Nothing here knows about
 * curses or the network. */
#ifndef BEDTOP_MODEL_H
#define BEDTOP_MODEL_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One source of truth for signals: id, name in recordings/JSON, the
 * AWS/Bedrock metric and statistic, the AWS/BedrockMantle metric, source. */
#define BT_SIGNALS(X)                                                                         \
    X(INVOCATIONS, "invocations", "Invocations", "Sum", "Inferences", CLOUDWATCH)               \
    X(INPUT_TOKENS, "input_tokens", "InputTokenCount", "Sum", "TotalInputTokens", CLOUDWATCH)   \
    X(OUTPUT_TOKENS, "output_tokens", "OutputTokenCount", "Sum", "TotalOutputTokens", CLOUDWATCH) \
    X(CACHE_READ, "cache_read_tokens", "CacheReadInputTokenCount", "Sum", NULL, CLOUDWATCH)     \
    X(CACHE_WRITE, "cache_write_tokens", "CacheWriteInputTokenCount", "Sum", NULL, CLOUDWATCH)  \
    X(THROTTLES, "throttles", "InvocationThrottles", "Sum", NULL, CLOUDWATCH)                   \
    X(CLIENT_ERRORS, "client_errors", "InvocationClientErrors", "Sum", "InferenceClientErrors", CLOUDWATCH) \
    X(SERVER_ERRORS, "server_errors", "InvocationServerErrors", "Sum", NULL, CLOUDWATCH)        \
    X(LATENCY_AVG, "latency_avg_ms", "InvocationLatency", "Average", NULL, CLOUDWATCH)          \
    X(LATENCY_P50, "latency_p50_ms", "InvocationLatency", "p50", NULL, CLOUDWATCH)              \
    X(LATENCY_P90, "latency_p90_ms", "InvocationLatency", "p90", NULL, CLOUDWATCH)              \
    X(LATENCY_P99, "latency_p99_ms", "InvocationLatency", "p99", NULL, CLOUDWATCH)              \
    X(TTFT_AVG, "ttft_avg_ms", "TimeToFirstToken", "Average", NULL, CLOUDWATCH)                 \
    X(ESTIMATED_TPM, "estimated_tpm", "EstimatedTPMQuotaUsage", "Sum", NULL, CLOUDWATCH)        \
    X(ADM_IN_FLIGHT, "adm_in_flight", "bedrock_admission_in_flight", NULL, NULL, ADMISSION)     \
    X(ADM_CONC_LIMIT, "adm_concurrency_limit", "bedrock_admission_concurrency_limit", NULL, NULL, ADMISSION) \
    X(ADM_QUEUE, "adm_queue_depth", "bedrock_admission_queue_depth", NULL, NULL, ADMISSION)     \
    X(ADM_ADMITTED, "adm_admitted_pm", "bedrock_admission_admitted_total", NULL, NULL, ADMISSION) \
    X(ADM_REJECTED, "adm_rejected_pm", "bedrock_admission_rejected_total", NULL, NULL, ADMISSION) \
    X(ADM_RETRIES, "adm_retries_pm", "bedrock_admission_retries_total", NULL, NULL, ADMISSION)  \
    X(ADM_THROTTLED, "adm_throttled_pm", "bedrock_admission_throttled_total", NULL, NULL, ADMISSION) \
    X(ADM_COMPLETED, "adm_completed_pm", "bedrock_admission_completed_total", NULL, NULL, ADMISSION) \
    X(ADM_RESERVED, "adm_reserved_tpm", "bedrock_admission_reserved_tokens_total", NULL, NULL, ADMISSION) \
    X(ADM_SETTLED, "adm_settled_tpm", "bedrock_admission_settled_tokens_total", NULL, NULL, ADMISSION) \
    X(ADM_MAX_TOKENS, "adm_max_tokens", "bedrock_admission_max_tokens", NULL, NULL, ADMISSION)  \
    X(ADM_OUT_P50, "adm_output_p50", "bedrock_admission_output_tokens", "p50", NULL, ADMISSION) \
    X(ADM_OUT_P99, "adm_output_p99", "bedrock_admission_output_tokens", "p99", NULL, ADMISSION) \
    X(DAY_INPUT_TOKENS, "day_input_tokens", "InputTokenCount", "Sum", NULL, CLOUDWATCH)          \
    X(DAY_OUTPUT_TOKENS, "day_output_tokens", "OutputTokenCount", "Sum", NULL, CLOUDWATCH)       \
    X(DAY_CACHE_WRITE, "day_cache_write_tokens", "CacheWriteInputTokenCount", "Sum", NULL, CLOUDWATCH) \
    X(ADM_RESERVED_HELD, "adm_reserved_held", "bedrock_admission_reserved_tokens_held", NULL, NULL, ADMISSION) \
    X(TIER_RES_INVOCATIONS, "tier_reserved_invocations", "Invocations", "Sum", NULL, CLOUDWATCH) \
    X(TIER_RES_INPUT, "tier_reserved_input_tokens", "InputTokenCount", "Sum", NULL, CLOUDWATCH) \
    X(TIER_RES_OUTPUT, "tier_reserved_output_tokens", "OutputTokenCount", "Sum", NULL, CLOUDWATCH) \
    X(DAY_CACHE_READ, "day_cache_read_tokens", "CacheReadInputTokenCount", "Sum", NULL, CLOUDWATCH)

enum bt_source { BT_SRC_CLOUDWATCH, BT_SRC_QUOTAS, BT_SRC_ADMISSION, BT_SRC_COUNT };

#define BT_SIG_ENUM(id, name, metric, stat, mantle, src) BT_SIG_##id,
enum bt_signal { BT_SIGNALS(BT_SIG_ENUM) BT_SIG_COUNT };
#undef BT_SIG_ENUM

struct bt_signal_info {
    const char *name;      /* stable name used in recordings and exports */
    const char *metric;    /* CloudWatch AWS/Bedrock metric or admission counter */
    const char *stat;      /* CloudWatch statistic (Sum, Average, p99) or histogram quantile */
    const char *mantle;    /* AWS/BedrockMantle metric, or NULL */
    enum bt_source source;
};

enum bt_endpoint { BT_EP_RUNTIME, BT_EP_MANTLE };
/* latency-optimized: a "+latency-optimized" ModelId, its own quotas; provisioned: a
 * provisioned-model ARN, model-unit capacity with no TPM quota (never in a TPM group). */
enum bt_inference { BT_INF_ON_DEMAND, BT_INF_CROSS_REGION, BT_INF_GLOBAL, BT_INF_LATENCY_OPTIMIZED,
                    BT_INF_PROVISIONED, BT_INF_COUNT };
enum bt_priority { BT_PRIO_ONLINE, BT_PRIO_OFFLINE };
enum bt_quota_source { BT_QS_UNKNOWN, BT_QS_SERVICE_QUOTAS, BT_QS_CONFIG, BT_QS_DEFAULT };
/* Inference-profile prefixes ("us.", "us-gov.", "apac.", "in.", "global.", ...),
 * recognised by pattern, never a fixed list: "global.", or two to four lower-case
 * letters with an optional "-letters" tail, then a '.', then vendor.model (vendor:
 * lower-case letters and digits). Returns the length of id's prefix, 0 when it has
 * none. ListInferenceProfiles confirms them (collectors/infprofile.c). */
size_t bt_profile_prefix_len(const char *id);
/* id without its inference-profile prefix. */
const char *bt_profile_strip(const char *id);
/* Infers the inference route from a model/profile ID: a provisioned-model ARN, a
 * "+latency-optimized" suffix, else the prefix (us., eu., global., ...). */
enum bt_inference bt_inference_from_model(const char *model_id);

/* Which quota of a route: TPM (runtime), RPM, tokens per day, mantle input/output TPM,
 * the reserved service tier's input/output TPM, the account-wide cross-model tokens
 * per day ("Cross-Model Max Tokens Per Day": every model of the Region draws from it;
 * consumption may be pricing-weighted, so token sums against it are an estimate), and
 * concurrent requests (a cap on calls in flight). */
enum bt_quota_kind { BT_Q_TPM, BT_Q_RPM, BT_Q_TPD, BT_Q_INPUT_TPM, BT_Q_OUTPUT_TPM,
                     BT_Q_RES_INPUT_TPM, BT_Q_RES_OUTPUT_TPM, BT_Q_TPD_ACCOUNT, BT_Q_CONCURRENT,
                     BT_Q_COUNT };

/* How a quota was tied to a route (DOMAIN.md "Where quota values come from"): the
 * quota's UsageMetric names the route's ModelId, its code (configured, or learned at
 * an earlier listing), its name (data/quota-names.conf), or the config gave the value. */
enum bt_quota_match { BT_QM_NONE, BT_QM_USAGE_METRIC, BT_QM_CODE, BT_QM_NAME, BT_QM_CONFIG };

/* The start of a mantle quota's unknown reason when AWS publishes none for the model
 * (collectors/quota_collect.c): information, not QUOTA_UNKNOWN (core/headroom.c). */
#define BT_MANTLE_NO_QUOTA "no published quota (internal capacity)"

/* Service Quotas' `Adjustable` flag: an adjustable quota is raised with
 * RequestServiceQuotaIncrease, another only through an AWS Support case, or not at
 * all (unknown: not listed, a config value, an older recording). */
enum bt_adjustable { BT_ADJ_UNKNOWN, BT_ADJ_YES, BT_ADJ_NO };
struct bt_quota {
    double value; /* NAN when unknown */
    enum bt_quota_source source;
    char code[32];   /* Service Quotas code, e.g. L-F4DDD3EB */
    char name[192];  /* quota name as Service Quotas spells it */
};

struct bt_route {
    char name[64];
    char model[192];
    char base_model[192];    /* underlying base model when `model` is an application
                              * inference profile (GetInferenceProfile or config
                              * `base_model =`); empty: `model` itself */
    char account[16];        /* CloudWatch AccountId (cross-account observability);
                              * empty: the caller's own account */
    char region[32];
    char profile[64];
    char identity[128];      /* live: the AWS identity its last good CloudWatch poll ran as
                              * (account and role, never a key); empty otherwise */
    char project[64];        /* mantle Project dimension (optional) */
    char context[16];        /* context-length variant of the quota ("" standard, "1m") */
    enum bt_endpoint endpoint;
    enum bt_inference inference;
    enum bt_priority priority;
    bool inference_set;
    double max_tokens;       /* NAN when unknown */
    double concurrency_limit; /* tested concurrency (NAN: unknown); gauge wins */
    double burndown;         /* resolved output multiplier */
    const char *burndown_source; /* "config", "table", "default"; "none" for mantle (no
                              * burndown: output counts once, shown as null) */
    char burndown_row[128];  /* the table row for the model ("burndown.conf:31 pattern = 15"),
                              * named even when the config or a measurement wins; "" none */
    /* the catalogue's prior (core/burndown.c): the config's value, a table row, the
     * family floor or 1, with its source ("config", "table", "family", "default",
     * "none"); burndown/burndown_source above are what is used: the prior, or a
     * steady measurement from EstimatedTPMQuotaUsage ("measured") */
    double burndown_prior;
    const char *burndown_prior_source;
    bool burndown_verified;  /* a table row or a steady measurement backs the value used */
    double burndown_steady;  /* the steady measurement (NAN: none steady) */
    int burndown_steady_minutes; /* minutes it was measured over (0: none) */
    char admission[512];     /* per-route admission URL (empty: global or none) */
    char quota_code[32];
    struct bt_quota quota[BT_Q_COUNT];
    enum bt_quota_match quota_match[BT_Q_COUNT]; /* how each quota was tied to the route */
    enum bt_adjustable quota_adjustable[BT_Q_COUNT]; /* each quota's Adjustable flag */
    bool legacy_seen;        /* ListMetrics lists LegacyModelInvocations for the model
                              * (BT_EVCODE_LEGACY_MODEL): increases are refused for it */
    /* the catalogue (collectors/catalogue.c, BT_SET_LIFECYCLE / BT_SET_PROFILE) */
    char lifecycle[12];      /* "ACTIVE", "LEGACY", "" not known */
    char lifecycle_text[224]; /* its dates ("legacy since 2026-03-01, end of life
                              * 2026-09-01"), or why it is not known */
    char profile_check[12];  /* "confirmed", "unlisted", "unknown", "" not asked */
    char profile_text[224];
    /* spend (core/cost.h): the service tier its calls are billed at (enum bt_tier), the
     * model units of a Provisioned Throughput route (NAN: not given) and its budget */
    int tier;
    double model_units;
    double budget_usd_per_day; /* NAN: none */
    char tag[128];           /* the application profile's tag that attribute_by names
                              * (BT_EVCODE_TAG: its value), "" not known */
    char tag_reason[160];    /* why not (BT_EVCODE_TAG_UNKNOWN), "" none said */
    char unseen[224];        /* ModelIds the config does not name on this route's quota,
                              * with their usage (BT_EVCODE_UNSEEN_CALLERS), "" none */
    bool unseen_asked;       /* a Metrics Insights answer was heard (UNSEEN_CALLERS) */
    char unseen_failed[160]; /* why the last queries failed (BT_EVCODE_UNSEEN_FAILED),
                              * "" they answered */
    int line;                /* config line, for messages */
};

/* Whether route r draws on bedrock-runtime's token quotas (per minute, the model's
 * legacy daily one, the account's cross-model daily one): a bedrock-runtime route, not
 * Provisioned Throughput (reserved model-unit capacity, no token quota); mantle has
 * its own. The quota matcher gives the account-wide rows to these routes, and the
 * daily groups, the cross-model ledger and the shared-quota test count them alike. */
static inline bool bt_route_runtime_quotas(const struct bt_route *r)
{
    return r->endpoint == BT_EP_RUNTIME && r->inference != BT_INF_PROVISIONED;
}

struct bt_threshold {
    double value;
    bool pct;                /* percent of quota, else absolute TPM */
};

/* A ring of per-minute values for one route and one signal; allocated on
 * first sample and grown (doubling, up to the store's history) as the minutes
 * it holds span more, so memory follows what is actually observed: `check`'s
 * ten-minute window takes 16 slots, not a day's 1440. Values are kept as float
 * while every one is exactly a float (token and call counts below 2^24) or a decimal
 * of at most 4 places that is one scaled (a latency's 2383.7 as 23837, scale 1), and
 * the whole ring in double from the first that is neither (a day's sum, an average
 * of many digits), so no number read back ever differs from the one stored; arrival
 * offsets the same way in int16 or int32 (a read recording's series of one route
 * share them where they agree: bt_store_share_arrivals). */
struct bt_series {
    float *f;                /* NAN = no data; while every value fits a float exactly */
    double *d;               /* the same in double, once one did not (then f is NULL) */
    /* replay: first arrival - minute, seconds (both NULL live); int16 while every
     * offset fits (a backfill up to 9 hours late), int32 from the first that does not */
    int16_t *arr16;
    int32_t *arr;
    int cap;                 /* slots: minute m at (m / 60) % cap; 0 before the first sample */
    int8_t scale;            /* f holds value x 10^scale, whole (a latency's 2383.7 as
                              * 23837: read back as the double nearest it), 0: the value */
    bool arr_shared;         /* the offsets are the store's (bt_store_share_arrivals): read
                              * only, copied before a change */
    int64_t oldest;          /* oldest minute stored still inside the history */
    int64_t newest;          /* newest minute present, 0 if none */
};

enum bt_event_type { BT_EV_ERROR, BT_EV_OK, BT_EV_QUOTA, BT_EV_MARKER, BT_EV_INFO,
                      BT_EV_SETTING };
/* Route settings learned at run time (BT_EV_SETTING), applied to the route by
 * the model, live and in replay alike:
 *   max_tokens   value: the output allowance per call (a Prometheus source's)
 *   burndown     value: the multiplier; str: where it came from (table, default)
 *   base_model   str: the base model an application inference profile routes to
 *   inference    str: the inference type (on-demand, cross-region, global)
 *   identity     str: the AWS identity the route's CloudWatch poll ran as */
/* BT_SET_LIFECYCLE: ListFoundationModels' modelLifecycle.status for the route's model
 * in str ("ACTIVE", "LEGACY"; "" not listed; "unknown" when the call was refused or
 * failed) and its dates or the reason in text. BT_SET_PROFILE: what
 * ListInferenceProfiles says of the route's profile prefix in str ("confirmed",
 * "unlisted", "unknown") and why in text. */
enum bt_setting { BT_SET_MAX_TOKENS, BT_SET_BURNDOWN, BT_SET_BASE_MODEL, BT_SET_INFERENCE,
                  BT_SET_IDENTITY, BT_SET_LIFECYCLE, BT_SET_PROFILE, BT_SET_COUNT };
/* The names and their lookups: core/names.h. */
#include "core/names.h"
struct bt_event {
    int64_t t;
    enum bt_event_type type;
    int route;               /* -1: all routes of the source */
    enum bt_source source;
    enum bt_quota_kind quota_kind; /* BT_EV_QUOTA */
    double value;            /* BT_EV_QUOTA; BT_EV_SETTING of a number */
    enum bt_quota_source quota_source;
    enum bt_setting setting; /* BT_EV_SETTING */
    char str[192];           /* BT_EV_SETTING: a string setting, or burndown's source */
    enum bt_quota_match matched_by; /* BT_EV_QUOTA */
    enum bt_adjustable adjustable;  /* BT_EV_QUOTA: Service Quotas' Adjustable */
    char code[32];           /* quota code or error code */
    char text[224];
};

#define BT_STATUS_ERROR_LEN 224
#define BT_STATUS_IMPLAUSIBLE_LEN 200
struct bt_source_status {
    int64_t last_ok;         /* last successful poll, 0 never */
    int64_t last_error;      /* 0 none since last_ok */
    int64_t newest_sample;   /* arrival time of the newest sample */
    /* The texts are the store's, out of line (written only when there is one to
     * say: inline, every OK's "" made 424 bytes a route and source resident, 17 MB
     * of a 20,000-route check) */
    char *error;             /* BT_STATUS_ERROR_LEN bytes */
    /* the first value out of bounds (core/plausible.h) or sample dated after
     * its arrival since the source last reported on this route: its next OK
     * becomes an error with this reason */
    char *implausible;       /* BT_STATUS_IMPLAUSIBLE_LEN bytes */
};
struct bt_status_text;

#define BT_EVENT_RING 512

struct bt_sample;
struct bt_event;
struct bt_reading;
struct bt_coverage;
/* Sees every sample, counter reading and event the store takes (the recording
 * writer). Rates the store derives from readings are not samples it is shown:
 * a replay derives them again from the readings. */
struct bt_store_tap {
    void (*sample)(void *arg, const struct bt_sample *smp, int64_t arrival);
    void (*event)(void *arg, const struct bt_event *ev);
    void (*reading)(void *arg, const struct bt_reading *rd, int64_t arrival);
    void (*coverage)(void *arg, const struct bt_coverage *c, int64_t arrival);
    void *arg;
};
struct bt_counter_state; /* core/counters.c */
struct bt_series_store;  /* core/shares.c */
struct bt_cov_series;    /* core/coverage.c: one route and signal's covered minutes */
struct bt_cov_rec;
struct bt_sum_memo;      /* core/store_int.h: replay's running sums since midnight */
struct bt_newest_memo;

struct bt_store {
    int nroutes;
    int history;             /* minutes kept per series */
    /* Both signal-major (one signal's, or one source's, routes together: a signal no
     * source fills, an admission signal in a check without admission, stays untouched
     * pages, never resident), `slots` routes a signal: series[sig * slots + route],
     * status[src * slots + route]; slots is nroutes (the shares' store: its capacity) */
    struct bt_series *series; /* slots * BT_SIG_COUNT */
    struct bt_source_status *status; /* slots * BT_SRC_COUNT */
    struct bt_status_text *status_text; /* their texts, in the same order */
    int slots;
    struct bt_event events[BT_EVENT_RING];
    uint64_t nevents;        /* total ever added; ring index = n % BT_EVENT_RING */
    uint64_t nsamples;       /* total ever added */
    uint64_t generation;     /* bumps on every change (views redraw on change) */
    struct bt_store_tap tap; /* .sample NULL: none */
    /* Replay: every sample keeps its first arrival and every event is logged, so
     * the model can be seen as it was at any time (the horizon). */
    bool track_arrival;
    int64_t horizon;         /* 0: everything visible */
    struct bt_event *log;
    size_t nlog, caplog;
    /* bt_store_set_horizon's place, so a seek forward applies only the events in
     * between: log[0, hz_next) applied for the routes hz_routes from hz_base, the
     * store then at generation hz_gen holding nlog hz_nlog; hz_sorted: the log is
     * in time order (else every seek rebuilds, as the order of applying matters) */
    bool hz_valid, hz_sorted;
    size_t hz_next, hz_nlog;
    uint64_t hz_gen;
    const struct bt_route *hz_routes, *hz_base;
    /* per route and counter signal: each series' last reading (core/counters.c) */
    struct bt_counter_state *counters;
    /* per admission series: its own rates and gauges per minute, the team shares'
     * raw readings (core/shares.c) */
    struct bt_series_store *series_store;
    /* frees counters and series_store (bt_store_clear): core/counters.c, their
     * keeper, sets it at the first reading, so the store never calls up into it */
    void (*readings_free)(struct bt_store *s);
    /* the routes events apply to (the config's; bt_store_bind_routes) */
    struct bt_route *routes;
    /* coverage (bt_store_cover): per route and signal the minutes asked; per route
     * whether any poll recorded coverage (else it is inferred); replay: the log of
     * records, replayed up to the horizon */
    struct bt_cov_series *cov;
    bool *cov_recorded;
    struct bt_cov_rec *covlog;
    size_t ncovlog, capcovlog;
    size_t covlog_applied;   /* replay: records [0, applied) are in cov (the horizon's) */
    bool covlog_unsorted;    /* a record arrived before the one logged before it */
    /* replay (bt_store_track_arrival): per route and per-minute signal a day sums
     * (input, output, cache write, cache read), the last sum bt_store_sum took, carried
     * forward as the horizon and the minute move on (a day's export asks it for every
     * route at every step: summed afresh, it was quadratic in the recording) */
    struct bt_sum_memo *sum_memo;
    /* and per route and signal, the last newest minute bt_store_newest found */
    struct bt_newest_memo *newest_memo;
    int sum_memo_routes;     /* the routes both have room for */
    /* replay: arrival offsets shared by the series of a route that agree on them */
    void **arr_pool;
    size_t narr_pool;
    /* a view of another store (bt_store_view): series, log, coverage records, readings
     * and arrival offsets are that store's, never written or freed through this one */
    bool view;
};

struct bt_sample {
    int64_t t;               /* minute start for CloudWatch, scrape time for admission */
    int route;
    enum bt_signal signal;
    double value;
};

/* A raw reading of a cumulative admission counter (the ADM_* signals whose metric
 * ends in _total): one series of one route, as scraped. The series is the label
 * set that identifies a worker's series. The store derives the route's
 * per-minute rate from readings (core/counters.c): per series, a counter that
 * went down was reset (its increase is the new value), then the series' rates
 * of one scrape are summed by route, as Prometheus's sum(rate()) does. */
#define BT_SERIES_ID 200
struct bt_reading {
    int route;
    enum bt_signal signal;
    double t;                /* the reading's time: the exposition's timestamp, else
                              * when the answer arrived (sub-second) */
    double value;            /* the counter's cumulative value */
    char series[BT_SERIES_ID]; /* `name="value",...` sorted by name (longer: a hash) */
};
/* Is sig a cumulative counter read as bt_reading (admitted, rejected, retries,
 * throttled, completed, reserved and settled tokens)? The in-flight and held gauges
 * are read as bt_reading too, per series (bt_signal_share_gauge, core/shares.h):
 * kept per series for the team shares, never rated; their route's sum comes as a
 * sample. */
bool bt_signal_counter(enum bt_signal sig);
/* The admission gauges read per series as well as summed by route (in flight, held):
 * a team's calls in flight and the reservations they hold are its own. */
bool bt_signal_share_gauge(enum bt_signal sig);
/* Per-minute rate between two readings of one counter series: (v2 - v1) / (t2 -
 * t1) x 60; a decrease is a reset (the increase is v2). NAN when the readings are
 * less than BT_COUNTER_MIN_INTERVAL seconds apart (never extrapolated from a
 * shorter one, core/counters.c) or a value is not finite. */
#define BT_COUNTER_MIN_INTERVAL 0.1
double bt_counter_rate(double v1, double t1, double v2, double t2);
/* Takes a reading that arrived at `arrival` (the scrape, epoch s; every reading
 * of one scrape shares it). The route's rate for that scrape, the sum over its
 * series that have a previous reading in the route's previous scrape, is stored
 * as the signal's sample at `arrival`. A series seen for the first time, or back
 * after missing a scrape, starts afresh (no rate); the same reading again (a
 * cached exposition) adds nothing. At most BT_COUNTER_SERIES series per route
 * and signal are followed (more: the source's next OK reports it). */
#define BT_COUNTER_SERIES 4096
void bt_store_reading(struct bt_store *s, const struct bt_reading *rd, int64_t arrival);

/* ---- coverage (DESIGN.md "Coverage and the catalogue (version 4)") ----
 * What a good poll asked for, recorded by the collector: a route, the signals of one
 * request (a bit per bt_signal), the minutes [from, to) it asked and the first minute
 * that was not settled when the request was sent (settled_to: a minute m is settled
 * when m + 60 + the collector's lag <= the request's time, not the answer's). A
 * covered, settled minute without a datapoint is idle (0); a minute no poll asked
 * for is unknown. A route with no coverage record at all (the demo, a Prometheus
 * source, a recording of format 2 or older) has its coverage inferred as before:
 * every minute its last good poll settled. */
#define BT_SIG_BIT(s) ((uint64_t)1 << (unsigned)(s))
struct bt_coverage {
    int route;
    uint64_t signals;
    int64_t from, to;        /* minute starts, [from, to) */
    int64_t settled_to;      /* minutes < settled_to were settled when asked */
    int64_t asked;           /* when the request was sent (epoch s) */
};
enum bt_cover { BT_COV_NONE, BT_COV_ASKED, BT_COV_SETTLED };
/* The coverage's functions: core/coverage.h. */
#include "core/coverage.h"

void bt_store_init(struct bt_store *s, int nroutes, int history_minutes);
/* Room for slots routes (at least nroutes), the series and statuses kept: the shares'
 * store, which grows a route (a series) at a time. */
void bt_store_grow(struct bt_store *s, int slots);
/* Route route's series of signal sig (route and sig in range). */
static inline const struct bt_series *bt_store_series_c(const struct bt_store *s, int route,
                                                        enum bt_signal sig)
{
    return &s->series[(size_t)sig * (size_t)s->slots + (size_t)route];
}
/* d becomes a what-if copy of s (plan) that bt_store_free frees on its own: its own
 * series (with their own arrival offsets), source states and coverage; no tap, no
 * replay log, none of s's counter readings, per-series values or carried sums
 * (bt_store_sum: the copy's series are about to change). The routes stay s's. */
void bt_store_clone(struct bt_store *d, const struct bt_store *s);
/* v becomes a second view of replay store s (bt_store_track_arrival) for a walk over
 * it that leaves s alone: the series, the event log, the coverage records, the counter
 * readings and per-series values stay s's, read only; what a horizon changes (the
 * horizon, the source states, the coverage applied, the carried sums) is v's own, with
 * nothing applied until v's first bt_store_set_horizon. bt_store_free(v) frees only
 * v's own. Valid while s is open and takes nothing more (no sample, event or record:
 * a replay's store is complete once read). */
void bt_store_view(struct bt_store *v, const struct bt_store *s);
void bt_store_free(struct bt_store *s);
void bt_store_clear(struct bt_store *s);
/* Taking samples and reading the series: core/series.h. */
#include "core/series.h"
void bt_store_event(struct bt_store *s, const struct bt_event *ev);
/* Replay: keep arrivals and an event log (call right after init). */
void bt_store_track_arrival(struct bt_store *s);
/* Replay: show the model as at time t: samples that arrived later are hidden,
 * source status and quotas are rebuilt from the events up to t. base_routes
 * holds the routes' quotas before any event (the recording header). */
void bt_store_set_horizon(struct bt_store *s, struct bt_route *routes,
                          const struct bt_route *base_routes, int64_t t);
const struct bt_event *bt_store_event_at(const struct bt_store *s, uint64_t i); /* i < nevents */
/* Events ever added (the newest BT_EVENT_RING are kept: bt_store_event_at). */
static inline uint64_t bt_store_nevents(const struct bt_store *s)
{
    return s->nevents;
}
/* The store's generation: it bumps on every change, so a view or a memo keyed by it
 * is redone once the store changed (read it here, never the field). */
uint64_t bt_store_generation(const struct bt_store *s);


/* Recordings before 2.0 said a resolved application inference profile with
 * BT_EV_INFO, code BT_EVCODE_BASE_MODEL, and the text "base model ID, INFERENCE,
 * burndown N ..."; the model still applies such an event read from an old file.
 * bedtop now says it with BT_EV_SETTING events. */
#define BT_EVCODE_BASE_MODEL "BASE_MODEL"
/* BT_EV_INFO with code BT_EVCODE_LEGACY_MODEL: ListMetrics lists LegacyModelInvocations
 * for the route's ModelId (set route->legacy_seen, live and in replay). */
#define BT_EVCODE_LEGACY_MODEL "LEGACY_MODEL"
/* BT_EV_INFO with code BT_EVCODE_UNSEEN_CALLERS: the Metrics Insights queries of the
 * route's Region found ModelIds the config does not name on the route's quota; text
 * lists them with their usage, "" when the last queries found none (sets
 * route->unseen, live and in replay). */
#define BT_EVCODE_UNSEEN_CALLERS "UNSEEN_CALLERS"
/* BT_EV_INFO with code BT_EVCODE_UNSEEN_FAILED: the Region's Metrics Insights queries
 * failed; text says why (sets route->unseen_failed until they answer again): the
 * cross-model ledger is then a lower bound (core/ledger.h). */
#define BT_EVCODE_UNSEEN_FAILED "UNSEEN_FAILED"
/* BT_EV_INFO with code BT_EVCODE_TAG: ListTagsForResource on the route's application
 * inference profile found the tag attribute_by names; text is its value (sets
 * route->tag). BT_EVCODE_TAG_UNKNOWN: it could not be read or the profile has no such
 * tag; text says why (sets route->tag_reason, clears route->tag). */
#define BT_EVCODE_TAG "TAG"
#define BT_EVCODE_TAG_UNKNOWN "TAG_UNKNOWN"
void bt_base_model_text(char *out, size_t n, const char *model, enum bt_inference inf,
                        double burndown, const char *why);

/* Records an event and applies it: BT_EV_QUOTA sets a route's quota, BT_EVCODE_BASE_MODEL
 * a route's base model,
 * BT_EV_ERROR/BT_EV_OK update the source status (route -1: every route). An OK for
 * a route whose poll brought a value out of bounds is recorded as an error with
 * the reason, and so is a quota out of bounds (core/plausible.h). */
void bt_model_event(struct bt_store *s, struct bt_route *routes, const struct bt_event *ev);
/* The routes the store's events apply to (bt_store_apply): the app binds its
 * config's, so collectors, which see the config read-only, change a route only
 * by an event. */
void bt_store_bind_routes(struct bt_store *s, struct bt_route *routes);
/* bt_model_event on the bound routes (none bound: the event is only recorded). */
void bt_store_apply(struct bt_store *s, const struct bt_event *ev);
#endif
