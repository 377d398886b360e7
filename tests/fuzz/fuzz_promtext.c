/* Prometheus text 0.0.4, OpenMetrics 1.0, bedtop's JSON form and a
 * Prometheus server's /api/v1/query answer: the first byte picks the parser.
 * A quantile over whatever buckets were parsed must not crash either. */
#include <math.h>
#include <string.h>

#include "collectors/promtext.h"
#include "core/util.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    struct bt_prom_doc d;
    char err[256] = "";
    bool ok;
    bt_prom_init(&d);
    switch (data[0] % 4) {
    case 0: ok = bt_prom_parse(&d, text, len, BT_PROM_TEXT, err, sizeof err); break;
    case 1: ok = bt_prom_parse(&d, text, len, BT_PROM_OPENMETRICS, err, sizeof err); break;
    case 2: ok = bt_prom_parse_json(&d, text, len, err, sizeof err); break;
    default: ok = bt_prom_parse_api(&d, "q", text, len, err, sizeof err); break;
    }
    FUZZ_NEED_ERR(ok, err);
    struct bt_prom_bucket b[64];
    size_t nb = 0;
    for (int i = 0; i < d.nseries; i++) {
        const struct bt_prom_series *s = &d.series[i];
        (void)bt_prom_series_type(&d, s);
        const char *le = bt_prom_label(s, "le");
        double v;
        if (le && nb < BT_ARRAY_LEN(b) && bt_parse_double(le, &v)) {
            b[nb].le = v;
            b[nb++].count = s->value;
        }
    }
    (void)bt_prom_quantile(0.99, b, nb);
    bt_prom_free(&d);
    return 0;
}
