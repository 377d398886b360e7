/* A route's status and the warning rules, table-driven: one row per code (core/rules.c,
 * DESIGN.md "Warnings"; the load rules' own functions are in core/rulesload.h). Above
 * core/sides.h in the evaluation's layers; core/headroom.c runs the rules on what
 * core/frame.c and the sides computed. */
#ifndef BEDTOP_RULES_H
#define BEDTOP_RULES_H
#include <stdbool.h>

#include "core/config.h"

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

struct bt_eval;
struct bt_group;
bool bt_eval_has(const struct bt_eval *e, enum bt_wcode code);

/* The evaluation's own (core/headroom.c runs them); not for views. */
/* Runs every warning rule on an evaluated route and sets its status; g is its quota
 * group (SHARED_QUOTA names the members). */
void bt_rules_apply(const struct bt_config *cfg, const struct bt_route *rt, struct bt_eval *e,
                    const struct bt_group *g);
/* SPEND_SPIKE of the sums, after every route is evaluated: a quota group's spend rate
 * off its baseline or past its [group ROUTE] budget, a [team NAME]'s day past its
 * budget, and a Region's day past [bedtop] budget_usd_per_day, each on its biggest
 * spender, naming who spends. */
void bt_rules_spend_sums(const struct bt_config *cfg, const struct bt_store *st,
                         struct bt_eval *evals);
#endif
