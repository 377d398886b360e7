/* The AWS Price List API (AWSPriceListService.GetProducts, JSON 1.1, SigV4 service
 * "pricing", endpoint api.pricing.us-east-1.amazonaws.com): Amazon Bedrock's list
 * prices for each Region the routes use, at start and daily, never blocking a poll,
 * cached as $XDG_CACHE_HOME/bedtop/prices.conf in the syntax of data/prices.conf
 * (bedtop.conf(5), "THE [prices] SECTION"; its rows say source=price-list-api). A
 * refused GetProducts (AccessDenied) leaves the shipped table in use, with a note. */
#ifndef BEDTOP_PRICING_H
#define BEDTOP_PRICING_H
#include <stdbool.h>
#include <stddef.h>

#include "collectors/collector.h"
#include "core/util.h"

extern const struct bt_collector_ops bt_pricing_collector;

#define BT_PRICING_EVERY 86400   /* the price list is read again daily */
#define BT_PRICING_SERVICE_CODE "AmazonBedrock"

/* One price row of the table: USD per million tokens (NAN: not listed). */
struct bt_pl_row {
    char pattern[128];       /* "anthropic.claude-sonnet-4-5*" */
    char region[32];         /* "us-east-1" */
    bool global;             /* inference=global */
    char tier[12];           /* "" standard, "batch", "flex", "priority" */
    double in, out, cache_read, cache_write;
};

struct bt_pl_rows {
    struct bt_pl_row *r;
    int n, cap;
};

/* GetProducts body: ServiceCode AmazonBedrock, products of region (TERM_MATCH on
 * regionCode), FormatVersion aws_v1, MaxResults 100, NextToken when token. */
void bt_pricing_request_json(struct bt_buf *out, const char *region, const char *token);
/* One product document (a PriceList item, itself JSON): its on-demand price per
 * token kind into l. false when it is not a Bedrock token price bedtop reads (skipped). */
bool bt_pricing_parse_product(const char *doc, size_t len, struct bt_pl_rows *l);
/* One GetProducts page: every product into l (*skipped: those not read), *next_token a
 * malloc'd NextToken or NULL. false when the page is not a GetProducts answer. */
bool bt_pricing_parse_page(const char *body, size_t len, struct bt_pl_rows *l, int *skipped,
                           char **next_token, char *err, size_t errlen);
/* The cache file's text: a dated header, then one row per product with input and output
 * prices ("pattern = in=.. out=.. [cache_read=..] [cache_write=..] region=.. [inference=global]
 * [tier=..] source=price-list-api date=YYYY-MM-DD"); the number of rows written. */
int bt_pricing_rows_text(const struct bt_pl_rows *l, const char *date, struct bt_buf *out);
void bt_pl_rows_free(struct bt_pl_rows *l);
#endif
