/* The price table (data/prices.conf, bedtop.conf(5) "THE [prices] SECTION"): list
 * prices in USD per million tokens by model-ID glob, Region, endpoint, inference type
 * and service tier, each row with its source and date. A dated prior: the Price List
 * API's cached rows and the config's come later and win. core/cost.h prices a
 * route's tokens with it. */
#ifndef BEDTOP_PRICES_H
#define BEDTOP_PRICES_H
#include <stdbool.h>
#include <stddef.h>

/* The service tier a route's calls are billed at (the route's `tier` key): the
 * on-demand tiers (standard, priority, flex), the reserved tier, and batch
 * inference jobs. */
enum bt_tier { BT_SVC_STANDARD, BT_SVC_PRIORITY, BT_SVC_FLEX, BT_SVC_RESERVED, BT_SVC_BATCH,
               BT_SVC_COUNT };
const char *bt_tier_name(enum bt_tier t);   /* standard priority flex reserved batch */
int bt_tier_by_name(const char *name);      /* -1 unknown ("default" is standard) */

/* The bounds the config takes (bedtop.conf(5)), and a recording's header too
 * (core/recprices.c): a price in USD per million tokens or per unit-hour; a route's
 * model_units and budget_usd_per_day; [bedtop]'s spend_spike_* keys. */
#define BT_PRICE_MAX 1e6
#define BT_MODEL_UNITS_MAX 100000
#define BT_BUDGET_MIN 0.01
#define BT_BUDGET_MAX 1e9
#define BT_SPIKE_FACTOR_MIN 1.5
#define BT_SPIKE_FACTOR_MAX 1000
#define BT_SPIKE_FLOOR_MAX 1e7
#define BT_SPIKE_MINUTES_MAX 60

struct bt_price_row {
    char pattern[192];       /* fnmatch(3) glob against the model ID (prefix removed) */
    char region[32];         /* fnmatch(3) glob against the route's Region ("*": any) */
    int endpoint;            /* enum bt_endpoint, -1 any */
    int inference;           /* enum bt_inference, -1 any */
    int tier;                /* enum bt_tier */
    /* USD per million tokens; NAN when the row does not give it */
    double in, out, cache_read, cache_write;
    double unit_hour;        /* Provisioned Throughput: USD per model unit and hour */
    char source[128];        /* where the price was read ("price-list-api", a URL) */
    char date[11];           /* YYYY-MM-DD, "" not given */
    char origin[64];         /* where the row was read: "prices.conf:31", "config [prices]" */
};

struct bt_prices {
    struct bt_price_row *rows; /* later rows win */
    int n;
    int cap;                   /* rows allocated (grown geometrically) */
};

/* Parses "pattern = field=value ..." lines (# and ; comments); origin names each row
 * "name:line". On error "name:line: why" in err. */
bool bt_prices_parse(struct bt_prices *p, const char *text, const char *name, char *err,
                     size_t errlen);
/* One row (the config's [prices] lines): false with the reason in err. */
bool bt_prices_add_line(struct bt_prices *p, const char *pattern, const char *fields,
                        const char *origin, char *err, size_t errlen);
/* A whole row from elsewhere (a recording's header): checked as a row of the file
 * is (prices NAN or 0 .. BT_PRICE_MAX, in and out both or neither, token prices or
 * unit_hour, a known tier, endpoint and inference, a date YYYY-MM-DD or "", no
 * control character in its text), then appended; false with the reason in err. */
bool bt_prices_add_row(struct bt_prices *p, const struct bt_price_row *row, char *err,
                       size_t errlen);
/* The row that prices a model on an endpoint, inference type and tier in a Region:
 * the last matching one; NULL when none. base_model (NULL or "": none) is tried
 * when model_id matches no row. */
const struct bt_price_row *bt_prices_find(const struct bt_prices *p, const char *model_id,
                                          const char *base_model, const char *region,
                                          int endpoint, int inference, int tier);
/* "prices.conf:31 anthropic.claude-sonnet-4-5* (standard, aws.amazon.com/..., 2026-12-02)" */
void bt_price_row_text(const struct bt_price_row *row, char *out, size_t n);
void bt_prices_free(struct bt_prices *p);
#endif
