/* GetProducts pages and the product documents inside them (collectors/pricing.c): a
 * page is parsed, every row written as the cache's text, and the same bytes are also
 * read as one product document. Every price row holds finite, non-negative prices. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/pricing.h"
#include "tests/fuzz/fuzz.h"

static void check_rows(const struct bt_pl_rows *l)
{
    for (int i = 0; i < l->n; i++) {
        const struct bt_pl_row *r = &l->r[i];
        const double v[] = {r->in, r->out, r->cache_read, r->cache_write};
        for (size_t k = 0; k < sizeof v / sizeof v[0]; k++)
            if (!isnan(v[k]) && (!isfinite(v[k]) || v[k] < 0))
                abort();
        /* the cache's syntax: a pattern with no blank, '=' or '#' */
        if (!r->pattern[0] || strpbrk(r->pattern, " \t=#\n") || strpbrk(r->region, " \t=#\n"))
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct bt_pl_rows l = {0};
    char err[256] = "";
    char *next = NULL;
    int skipped = 0;
    bool ok = bt_pricing_parse_page((const char *)data, size, &l, &skipped, &next, err, sizeof err);
    FUZZ_NEED_ERR(ok, err);
    free(next);
    (void)bt_pricing_parse_product((const char *)data, size, &l);
    check_rows(&l);
    struct bt_buf text = {0};
    bt_pricing_rows_text(&l, "2026-12-02", &text);
    bt_buf_free(&text);
    bt_pl_rows_free(&l);
    return 0;
}
