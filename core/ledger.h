/* The cross-model daily ledger (DOMAIN.md "Daily quotas", DESIGN.md "Who holds the
 * quota, and what it costs"): per Region, the day's tokens and dollars by model on
 * bedrock-runtime, the biggest holders, the day's use against the account-wide
 * "Cross-Model Max Tokens Per Day" as an estimate (its accounting is pricing-weighted:
 * a raw token sum is of unknown weighting, and a lower bound where callers outside the
 * config draw on it), and the run-out at the current trend before the assumed 00:00
 * UTC reset. */
#ifndef BEDTOP_LEDGER_H
#define BEDTOP_LEDGER_H
#include "core/headroom.h"

struct bt_ledger_model {
    char model[192];         /* the base model (profile prefix removed) */
    double tokens_today;     /* settled since 00:00 UTC: input + cache write + output x
                              * burndown, as the daily sides count them */
    double usd_today;        /* NAN when a route of it is unpriced */
    double share;            /* of the Region's tokens today, 0-1 */
    int routes;
};

#define BT_LEDGER_FIT 15     /* minutes of the trend fit */
#define BT_LEDGER_FIT_MIN 5  /* at least this many of them read */

/* One ledger per account and Region: the routes that draw on one account-wide daily
 * quota, grouped as the account's daily side groups them (bt_route_account_key and the
 * Region), so a config with two accounts in one Region has two ledgers. */
struct bt_ledger {
    char region[32];
    char account[16];        /* the routes' CloudWatch account ("": none set) */
    char profile[64];        /* else their AWS profile ("": the default credentials) */
    /* whose ledger, for a reader: "" when it is the Region's only one, else "account
     * ID", "profile NAME" or "the default credentials" (outside text: sanitise) */
    char who[96];
    struct bt_ledger_model *models; /* biggest holder first */
    int nmodels;
    double tokens_today;     /* every runtime route of the Region */
    double usd_today;        /* the priced ones' (a lower bound with unpriced) */
    enum bt_quality used_q;  /* estimate, or lower-bound (a route unknown, callers
                              * outside the config, some of the day not read) */
    double quota;            /* the cross-model daily quota (NAN: not listed) */
    char quota_code[32];
    double pct;              /* of the quota (an estimate), NAN unknown */
    double rate, slope;      /* tokens per minute at the last minute fitted, and its
                              * change per minute (a least-squares line), NAN unknown */
    int fit_minutes;
    int64_t fit_end;         /* the newest minute fitted (0: none) */
    int64_t reset;           /* the assumed reset: the next 00:00 UTC */
    int64_t runout;          /* when the quota runs out at the trend (0: not before
                              * the reset, or unknown) */
    bool outside;            /* callers outside the config were seen (UNSEEN_CALLERS) */
    char used_why[224];      /* why used_q is a lower bound ("" an estimate): callers
                              * outside the config seen, not looked for (no Metrics
                              * Insights answer: `check` does not run it) or the
                              * query failed, a route unknown, the day not all read */
    /* the observed ceiling (DOMAIN.md "Daily quotas": the first "Too many tokens per
     * day" onset): the first minute today when every runtime route of the Region that
     * was called throttled, each far below its per-minute quota (its quota group's
     * tokens under half the group's quota, as the frame groups them: not its TPM
     * binding), and the day's tokens through the minute before it */
    int64_t onset;           /* that minute (0: none seen today) */
    double ceiling;          /* tokens today through the minute before (NAN: none) */
    int onset_routes;        /* the routes that throttled in it */
    double onset_throttles;  /* InvocationThrottles over them in it */
};

/* Minutes until `remaining` tokens are used at a rate of `rate` tokens per minute now,
 * changing by `slope` per minute: the least m > 0 with rate m + slope m^2 / 2 =
 * remaining; NAN when never (the rate falls to zero first) or unknown. */
double bt_ledger_runout_minutes(double remaining, double rate, double slope);
/* One ledger per account and Region with runtime routes (not provisioned: it has no
 * token quota), in order of first appearance; returns how many (*out malloc'd;
 * bt_ledger_free). */
int bt_ledger_build(const struct bt_config *cfg, const struct bt_store *st,
                    const struct bt_eval *evals, struct bt_ledger **out);
void bt_ledger_free(struct bt_ledger *l, int n);
#endif
