/* The price table's parser (core/prices.c bt_prices_parse): what io/conffile.c reads
 * from data/prices.conf and the Price List API's cache $XDG_CACHE_HOME/bedtop/prices.conf
 * (written by bedtop, but a file anyone with the account may have edited). Every row
 * taken holds prices that are unknown (NAN) or 0 .. BT_PRICE_MAX, a pattern and Region
 * without a control character, both in and out or neither, a known tier; a refusal
 * says why. Then the rows are looked up and written as text, as a route's cost does,
 * and each is taken again whole (bt_prices_add_row, a recording header's path). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/model.h"
#include "core/prices.h"
#include "tests/fuzz/fuzz.h"

static void check_text(const char *s, size_t max)
{
    size_t n = strnlen(s, max);
    if (n >= max)
        abort();
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    struct bt_prices p = {0};
    char err[512] = "";
    bool ok = bt_prices_parse(&p, text, "fuzz/prices.conf", err, sizeof err);
    free(text);
    FUZZ_NEED_ERR(ok, err);
    struct bt_prices again = {0};
    for (int i = 0; i < p.n; i++) {
        const struct bt_price_row *r = &p.rows[i];
        const double v[] = {r->in, r->out, r->cache_read, r->cache_write, r->unit_hour};
        for (size_t k = 0; k < sizeof v / sizeof v[0]; k++)
            if (!isnan(v[k]) && !(v[k] >= 0 && v[k] <= BT_PRICE_MAX))
                abort();
        if (isnan(r->in) != isnan(r->out) || (isnan(r->in) && isnan(r->unit_hour)))
            abort();
        if ((unsigned)r->tier >= BT_SVC_COUNT || r->endpoint < -1 || r->endpoint > BT_EP_MANTLE ||
            r->inference < -1 || r->inference >= BT_INF_COUNT || !r->pattern[0])
            abort();
        check_text(r->pattern, sizeof r->pattern);
        check_text(r->region, sizeof r->region);
        check_text(r->source, sizeof r->source);
        check_text(r->date, sizeof r->date);
        char out[512], why[256];
        bt_price_row_text(r, out, sizeof out);
        if (!bt_prices_add_row(&again, r, why, sizeof why))
            abort(); /* a row the file gave is a row a recording gives back */
    }
    static const char *const ids[] = {"anthropic.claude-3-haiku-20240307-v1:0",
                                      "us.anthropic.claude-sonnet-4-5-20250929-v1:0", "x", ""};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
        for (int t = 0; t < BT_SVC_COUNT; t++)
            (void)bt_prices_find(&p, ids[i], "amazon.nova-pro-v1:0", "us-east-1", BT_EP_RUNTIME,
                                 BT_INF_ON_DEMAND, t);
    if (again.n != p.n)
        abort();
    bt_prices_free(&again);
    bt_prices_free(&p);
    return 0;
}
