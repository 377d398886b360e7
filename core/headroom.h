/* Reservation-aware headroom per route (DESIGN.md "Headroom: the contract")
 * and the warning rules (DESIGN.md "Warnings"), table-driven. */
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
    X(BATCH_CANDIDATE)
#define BT_W_ENUM(code) BT_W_##code,
enum bt_wcode { BT_WARNINGS(BT_W_ENUM) BT_W_COUNT };
#undef BT_W_ENUM

struct bt_warning {
    enum bt_wcode code;
    enum bt_status severity;
    char message[320];       /* what was seen, with the numbers */
};

const char *bt_wcode_name(enum bt_wcode c);
const char *bt_wcode_title(enum bt_wcode c);   /* short phrase */
const char *bt_wcode_action(enum bt_wcode c);  /* what the engineer should do */
int bt_wcode_by_name(const char *name);

/* The contract's pure formulas, exposed for tests and views. */
double bt_settled_tpm(double input, double cache_write, double output, double burndown);
double bt_fits_more(double headroom_tpm, double avg_input, double max_tokens);

#define BT_MAX_WARN 12
struct bt_eval {
    int route;
    int64_t now;
    int64_t minute;          /* CloudWatch minute evaluated (0: none) */
    int64_t adm_minute;      /* admission minute evaluated (0: none) */
    bool mantle;
    bool has_usage;          /* any usage signal present */
    double settled, estimated, reserved; /* NAN when absent */
    const char *reserved_source; /* "admission", "max_tokens" or NULL */
    double used;
    double quota;            /* TPM (runtime) or the binding mantle quota */
    enum bt_quota_source quota_source;
    double headroom_tpm, headroom_pct, fits_more;
    /* mantle split */
    double in_quota, in_used, in_headroom, in_pct;
    double out_quota, out_used, out_headroom, out_pct;
    /* context */
    double invocations, input_tokens, output_tokens, cache_read, cache_write;
    double avg_input, avg_output, max_tokens;
    double throttles, lat_p50, lat_p90, lat_p99, lat_avg;
    double in_flight, conc_limit, queue_depth;
    double admitted, rejected, retries, completed, adm_throttled, adm_settled;
    double out_p50, out_p99;
    double offered_growth, accepted_growth; /* over 5 minutes, NAN unknown */
    double recommended_max_tokens, fits_more_recommended;
    double tokens_today, tpd;
    double rpm_quota;
    bool stale;
    char stale_reason[224];
    enum bt_status status;
    struct bt_warning warnings[BT_MAX_WARN];
    int nwarn;
};

/* Evaluates one route at time now (the last complete minute before it). */
void bt_eval_route(const struct bt_config *cfg, const struct bt_store *st, int route,
                   int64_t now, struct bt_eval *out);
bool bt_eval_has(const struct bt_eval *e, enum bt_wcode code);
#endif
