/* libFuzzer target for every parser of collectors/promtext.c: the first byte
 * picks the parser, the rest is the input. Each must return a result or a
 * clear error, never crash, and a quantile over what it parsed must not either.
 * Build: clang -fsanitize=fuzzer,address,undefined -I. -I/usr/include/cjson \
 *   fuzz/fuzz_promtext.c collectors/promtext.c core/util.c -lcjson -lm */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/promtext.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    struct bt_prom_doc d;
    char err[256];
    bt_prom_init(&d);
    bool ok;
    switch (data[0] % 4) {
    case 0:
        ok = bt_prom_parse(&d, text, len, BT_PROM_TEXT, err, sizeof err);
        break;
    case 1:
        ok = bt_prom_parse(&d, text, len, BT_PROM_OPENMETRICS, err, sizeof err);
        break;
    case 2:
        ok = bt_prom_parse_json(&d, text, len, err, sizeof err);
        break;
    default:
        ok = bt_prom_parse_api(&d, "q", text, len, err, sizeof err);
        break;
    }
    if (!ok && !err[0])
        abort(); /* a failure must say why */
    struct bt_prom_bucket b[64];
    size_t nb = 0;
    for (int i = 0; i < d.nseries && nb < 64; i++) {
        const char *le = bt_prom_label(&d.series[i], "le");
        if (le) {
            b[nb].le = strcmp(le, "+Inf") == 0 ? INFINITY : atof(le);
            b[nb++].count = d.series[i].value;
        }
    }
    (void)bt_prom_quantile(0.99, b, nb);
    bt_prom_free(&d);
    return 0;
}
