/* The Price List API's answers (collectors/pricing.c): a GetProducts page of product
 * documents parsed into price rows, written as the cache in data/prices.conf's syntax.
 * The product documents are AWS's aws_v1 shape (PriceList items are JSON strings); the
 * prices are USD per 1,000 tokens as the price list states them. By hand, x 1,000 per
 * million: Claude Sonnet 4.5 in us-east-1 0.0033 -> 3.3, 0.0165 -> 16.5, cache read
 * 0.00033 -> 0.33, cache write 0.004125 -> 4.125: data/prices.conf's in-Region row
 * (in=3.30 out=16.50 cache_read=0.33 cache_write=4.125); batch 0.00165 -> 1.65, 0.00825
 * -> 8.25 (its tier=batch row). The collector on the fake AWS: t_pricing. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/pricing.h"
#include "tests/tap.h"

/* One product document: provider, model, Region, usage type, unit, USD. */
static void product(struct bt_buf *b, const char *provider, const char *model, const char *region,
                    const char *usage, const char *unit, const char *usd)
{
    struct bt_buf d = {0};
    bt_buf_printf(&d,
                  "{\"product\":{\"productFamily\":\"Amazon Bedrock\",\"sku\":\"SKU1\",\"attributes\":{"
                  "\"servicecode\":\"AmazonBedrock\",\"regionCode\":\"%s\",\"usagetype\":\"%s\","
                  "\"model\":\"%s\",\"provider\":\"%s\"}},\"serviceCode\":\"AmazonBedrock\","
                  "\"terms\":{\"OnDemand\":{\"SKU1.JRTCKXETXF\":{\"priceDimensions\":{"
                  "\"SKU1.JRTCKXETXF.6YS6EN2CT7\":{\"unit\":\"%s\",\"pricePerUnit\":{\"USD\":\"%s\"}}},"
                  "\"sku\":\"SKU1\"}}},\"version\":\"20261101000000\"}",
                  region, usage, model, provider, unit, usd);
    if (b->len && b->buf[b->len - 1] != '[')
        bt_buf_puts(b, ",");
    bt_buf_json_str(b, bt_buf_str(&d)); /* a PriceList item is the document as a string */
    bt_buf_free(&d);
}

static const struct bt_pl_row *find(const struct bt_pl_rows *l, const char *pattern, const char *tier,
                                    bool global)
{
    for (int i = 0; i < l->n; i++)
        if (!strcmp(l->r[i].pattern, pattern) && !strcmp(l->r[i].tier, tier) &&
            l->r[i].global == global)
            return &l->r[i];
    return NULL;
}

int main(void)
{
    {
        struct bt_buf req = {0};
        bt_pricing_request_json(&req, "us-east-1", NULL);
        STREQ(bt_buf_str(&req),
              "{\"ServiceCode\":\"AmazonBedrock\",\"Filters\":[{\"Type\":\"TERM_MATCH\",\"Field\":"
              "\"regionCode\",\"Value\":\"us-east-1\"}],\"FormatVersion\":\"aws_v1\",\"MaxResults\":100}",
              "GetProducts body: AmazonBedrock, the Region's products, aws_v1");
        bt_buf_free(&req);
        bt_pricing_request_json(&req, "us-east-1", "tok\"1");
        OK(strstr(bt_buf_str(&req), ",\"NextToken\":\"tok\\\"1\"}") != NULL, "the NextToken, escaped");
        bt_buf_free(&req);
    }
    {
        /* two pages: the first carries a NextToken */
        struct bt_buf p1 = {0}, p2 = {0};
        bt_buf_puts(&p1, "{\"FormatVersion\":\"aws_v1\",\"PriceList\":[");
        product(&p1, "Anthropic", "Claude Sonnet 4.5", "us-east-1", "USE1-Claude-Sonnet-4.5-input-tokens", "1K tokens", "0.0033000000");
        product(&p1, "Anthropic", "Claude Sonnet 4.5", "us-east-1", "USE1-Claude-Sonnet-4.5-output-tokens", "1K tokens", "0.0165000000");
        product(&p1, "Anthropic", "Claude Sonnet 4.5", "us-east-1", "USE1-Claude-Sonnet-4.5-cache-read-input-tokens", "1K tokens", "0.00033");
        bt_buf_puts(&p1, "],\"NextToken\":\"page-2\"}");
        bt_buf_puts(&p2, "{\"FormatVersion\":\"aws_v1\",\"PriceList\":[");
        product(&p2, "Anthropic", "Claude Sonnet 4.5", "us-east-1", "USE1-Claude-Sonnet-4.5-cache-write-input-tokens", "1K tokens", "0.004125");
        product(&p2, "Anthropic", "Claude Sonnet 4.5", "us-east-1", "USE1-Claude-Sonnet-4.5-batch-input-tokens", "1K tokens", "0.00165");
        product(&p2, "Anthropic", "Claude Sonnet 4.5", "us-east-1", "USE1-Claude-Sonnet-4.5-batch-output-tokens", "1M tokens", "8.25");
        product(&p2, "Anthropic", "Claude Sonnet 4.5", "us-east-1", "USE1-Claude-Sonnet-4.5-ProvisionedThroughput", "Hours", "39.60");
        product(&p2, "Anthropic", "Claude Sonnet 4.5", "us-east-1", "USE1-x-input-tokens", "1K tokens", "-1");
        product(&p2, "Anthropic", "Claude Sonnet 4.5", "us-east-1", "USE1-x-input-tokens", "1K tokens", "NaN");
        product(&p2, "Anthropic", "Claude Sonnet 4.5", "us-east-1", "USE1-x-input-tokens", "1K tokens", "0.0000000000");
        product(&p2, "Anthropic", "Claude Sonnet 4.5", "us-east-1", "USE1-x-input-tokens", "1K tokens", "1e300");
        product(&p2, "Anthropic", "Claude Sonnet 4.5", "US East 1", "USE1-x-input-tokens", "1K tokens", "0.1");
        product(&p2, "", "Claude Sonnet 4.5", "us-east-1", "USE1-x-input-tokens", "1K tokens", "0.1");
        bt_buf_puts(&p2, ",42]}");
        struct bt_pl_rows l = {0};
        char err[160] = "", *next = NULL;
        int skipped = 0;
        OK(bt_pricing_parse_page(p1.buf, p1.len, &l, &skipped, &next, err, sizeof err) && next &&
               !strcmp(next, "page-2"),
           "page 1 read, its NextToken given back");
        free(next);
        OK(bt_pricing_parse_page(p2.buf, p2.len, &l, &skipped, &next, err, sizeof err) && !next,
           "page 2 read, the last (no NextToken)");
        const struct bt_pl_row *std = find(&l, "anthropic.claude-sonnet-4-5*", "", false);
        const struct bt_pl_row *batch = find(&l, "anthropic.claude-sonnet-4-5*", "batch", false);
        OK(std && !strcmp(std->region, "us-east-1"), "Claude Sonnet 4.5 -> anthropic.claude-sonnet-4-5*, us-east-1");
        NEAR(std ? std->in : NAN, 3.3, 1e-9, "input: 0.0033 per 1K = 3.30 per million (the table's in=3.30)");
        NEAR(std ? std->out : NAN, 16.5, 1e-9, "output: 16.50 (the table's out=16.50)");
        NEAR(std ? std->cache_read : NAN, 0.33, 1e-9, "cache read: 0.33 (the table's cache_read=0.33)");
        NEAR(std ? std->cache_write : NAN, 4.125, 1e-9, "cache write, from page 2: 4.125 (the table's)");
        NEAR(batch ? batch->in : NAN, 1.65, 1e-9, "batch input 1.65 (the table's tier=batch in=1.65)");
        NEAR(batch ? batch->out : NAN, 8.25, 1e-9, "batch output, priced per 1M: 8.25");
        OK(skipped == 8, "skipped: the hour price, a negative, NaN, zero (unknown, never 0) and absurd "
                         "price, a bad Region, no provider, an item not a string (8)");
        OK(l.n == 2, "two rows: in-Region standard and batch");
        struct bt_buf text = {0};
        OK(bt_pricing_rows_text(&l, "2026-12-02", &text) == 2, "both written");
        const char *t = bt_buf_str(&text);
        OK(strstr(t, "\nanthropic.claude-sonnet-4-5* = in=3.3 out=16.5 cache_read=0.33 "
                     "cache_write=4.125 region=us-east-1 source=price-list-api date=2026-12-02\n") != NULL,
           "the cache row in data/prices.conf's syntax, dated");
        OK(strstr(t, "\nanthropic.claude-sonnet-4-5* = in=1.65 out=8.25 region=us-east-1 tier=batch "
                     "source=price-list-api date=2026-12-02\n") != NULL,
           "the batch row with tier=batch, no cache prices it lacks");
        OK(t[0] == '#', "a header comment first");
        bt_buf_free(&text);
        bt_pl_rows_free(&l);
        bt_buf_free(&p1);
        bt_buf_free(&p2);
    }
    {
        struct bt_pl_rows l = {0};
        char err[160] = "", *next = NULL;
        int skipped = 0;
        const char *bad[] = {"", "[]", "{\"PriceList\":{}}", "{\"PriceList\":[],\"NextToken\":5}", "{"};
        bool any = false;
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
            any = any || bt_pricing_parse_page(bad[i], strlen(bad[i]), &l, &skipped, &next, err, sizeof err);
        OK(!any && err[0] && !next, "what is not a GetProducts answer is refused, saying so");
        struct bt_buf text = {0};
        OK(bt_pricing_rows_text(&l, "2026-12-02", &text) == 0, "no rows: none written");
        bt_buf_free(&text);
        bt_pl_rows_free(&l);
    }
    return tap_done();
}
