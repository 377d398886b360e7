/* The collector interface: behaviour as data (htop's Meter habit). Each
 * collector is a table entry; main's single loop calls tick() when it is due
 * and never blocks on a collector. Collectors only produce samples and events
 * into the store (bt_store_add, bt_store_reading, bt_store_apply); views read the model. */
#ifndef BEDTOP_COLLECTOR_H
#define BEDTOP_COLLECTOR_H
#include <stdbool.h>
#include <stdint.h>

#include "core/config.h"
#include "core/model.h"

struct bt_http; /* net/http.h */
struct bt_api_cost; /* core/apicost.h */

enum bt_run_mode {
    BT_MODE_LIVE,   /* keep polling on the interval */
    BT_MODE_ONCE,   /* `bedtop check`: one evaluation's worth of data, then idle */
};

struct bt_ctx {
    const struct bt_config *cfg; /* read-only: collectors change a route by an event */
    struct bt_store *store;
    struct bt_http *http;    /* shared multi handle; NULL for the demo */
    enum bt_run_mode mode;
    int verbose;             /* --verbose: print requests sent (never secrets) */
    /* Command-line overrides (NULL/empty: none). */
    const char *profile;
    const char *region;
    const char *endpoint_url;
    const char *admission_url;
    /* Backfill (`bedtop record --since`): fetch exactly [window_from, window_to)
     * once, in BT_MODE_ONCE. 0: the collector's own window. */
    int64_t window_from, window_to;
    /* Requests by API and outcome, CloudWatch metrics requested (NULL: not counted). */
    struct bt_api_cost *api_cost;
    /* --source prometheus+http://...: read bedtop's series there, not AWS (NULL: AWS) */
    const char *source_url;
    const char *source_match; /* --match label matchers, or NULL */
};

/* An AWS action a collector's requests need (each is read only) and when: NULL, always
 * while it polls; else the condition, as `bedtop CMD --help` and `bedtop help policy`
 * print it. A collector's list ends with {NULL}. */
struct bt_iam_need {
    const char *action; /* "cloudwatch:GetMetricData" */
    const char *when;   /* NULL: always; "attribute_by = tag:KEY" */
    bool live_only;     /* not asked by one poll (check, a backfill: BT_MODE_ONCE) */
};

struct bt_collector_ops {
    const char *name;                           /* "cloudwatch", "quotas", "admission", "demo" */
    void *(*create)(struct bt_ctx *ctx);        /* NULL: nothing to collect (not configured) */
    void (*tick)(void *self, int64_t now);      /* start what is due; must not block */
    int64_t (*next_due)(void *self);            /* epoch s of the next tick wanted */
    bool (*busy)(void *self);                   /* requests in flight or work still owed */
    void (*destroy)(void *self);
    const struct bt_iam_need *iam;              /* the AWS actions it asks; NULL: none */
};

/* Applies an event to the model: records it, updates route quotas (BT_EV_QUOTA)
 * and source status (BT_EV_ERROR / BT_EV_OK). Declared here, defined in core. */
#endif
