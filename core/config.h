/* The INI configuration of bedtop.conf(5), parsed with inih; errors as file:line: why. */
#ifndef BEDTOP_CONFIG_H
#define BEDTOP_CONFIG_H
#include "core/burndown.h"
#include "core/model.h"
#include "core/prices.h"

/* The longest line bedtop.conf may have (bytes, newline not counted): a longer
 * one is an error naming file and line, never split into two. */
#define BT_CONFIG_MAX_LINE 8190

/* [team NAME] and [group ROUTE] budgets a config may name */
#define BT_BUDGETS_MAX 64

struct bt_config {
    char path[512];
    char profile[64];
    char region[32];
    /* --profile/--region: win over [bedtop] (routes naming their own keep them) */
    char override_profile[64];
    char override_region[32];
    char endpoint_url[512];
    char admission[512];     /* global admission URL */
    char theme[64];
    double interval;         /* seconds between polls */
    double detail_interval;  /* seconds between polls of the detail metrics (latency
                              * percentiles, errors, time to first token); 0: every poll */
    bool adaptive_cadence;   /* calm routes' per-minute signals every 5 minutes (core/cadence.h) */
    bool price_list;         /* read the AWS Price List API daily (collectors/pricing.h) */
    char account[16];        /* CloudWatch AccountId for every route that sets none */
    double admission_gap;    /* seconds between the two scrapes of `check` */
    double cw_lag;           /* seconds CloudWatch needs before a minute is complete */
    struct bt_threshold warn, crit;
    double daily_warn_pct, daily_crit_pct;
    double oversize_factor;  /* OVERSIZED_MAX_TOKENS when max_tokens > factor x p99 */
    double oversize_margin;  /* recommended max_tokens = p99 x (1 + margin) */
    double retry_share;      /* RETRY_LOAD when retries / offered above this */
    char share_label[64];    /* the admission label that names who a call is for (team) */
    int share_top_n;
    char attribute_tag[128]; /* attribute_by = tag:KEY: the profiles' tag KEY ("" none) */         /* serve's share series: this many holders, the rest "other" */
    int history_minutes;
    bool history_set;        /* the config names a history (else the mode's default) */
    struct bt_route *routes;
    int nroutes;
    struct bt_burndown burndown;
    char burndown_error[512]; /* the burndown table could not be read (never a silent 1) */
    /* the price table (core/prices.h): data/prices.conf, the Price List API's cache,
     * then the config's [prices] rows; prices_note says what could not be read (the
     * figures it would price are unknown, with it as the reason) */
    struct bt_prices prices;
    bool prices_loaded;
    char prices_note[320];
    /* SPEND_SPIKE (core/cost.h): a Region's budget (NAN: none), the factor over the
     * trailing baseline and the floor in USD per hour below which no spike is raised */
    double budget_usd_per_day;
    double spend_spike_factor;
    double spend_spike_floor;
    int spend_spike_minutes; /* the recent window whose median is compared */
    /* budget_usd_per_day of a [team NAME] section (the shares' team label) or of a
     * [group ROUTE] section (the quota group route ROUTE draws from), for SPEND_SPIKE */
    struct bt_budget {
        bool team;           /* else a quota group, named by one of its routes */
        char name[96];
        double usd;
    } budgets[BT_BUDGETS_MAX];
    int nbudgets;
};

/* Defaults with no routes and no burndown table: bt_config_init (io/conffile.h)
 * adds the installed table, a recording's header brings its own. */
void bt_config_defaults(struct bt_config *c);
/* Parses an INI text (bt_config_load in io/conffile.h reads the file). On error
 * writes "name:line: why" into err and returns false; so does a burndown table
 * that could not be loaded (burndown_error). */
bool bt_config_parse_string(struct bt_config *c, const char *text, const char *name, char *err,
                            size_t errlen);
/* True when a burndown table is loaded; else burndown_error says why (a table
 * that could not be read, or none loaded: never every model at 1). */
bool bt_config_need_burndown(struct bt_config *c);
/* After routes are known: resolve burndown and inference per route. With no
 * table loaded, burndown_error says so. */
void bt_config_finish(struct bt_config *c);
/* serve keeps 3 hours unless the config names a history: Prometheus keeps the rest,
 * and the day's sums come from CloudWatch's hourly datapoints (a day of minutes for
 * every route was most of serve's memory and of its first poll). */
#define BT_SERVE_HISTORY_MINUTES 180
void bt_config_serve_history(struct bt_config *c);
int bt_config_add_route(struct bt_config *c, const char *name);
int bt_config_find_route(const struct bt_config *c, const char *name);
void bt_config_free(struct bt_config *c);
bool bt_parse_threshold(const char *s, struct bt_threshold *t);
/* An AWS Region name as AWS spells them (us-east-1, us-gov-west-1). */
bool bt_config_valid_region(const char *s);
void bt_route_defaults(struct bt_route *r);
#endif
