/* The Prometheus API client end to end as --source uses it: a /api/v1/query or
 * query_range answer (vector, matrix, scalar, errors) parsed, then ingested into
 * a store for two routes (collectors/prom_collect.c). Whatever the answer holds
 * (a matrix of many points sharing labels, times of 1e300, a point dated 2100,
 * bedtop_max_tokens of -1e9), the parse is bounded, refused values are never
 * stored, and every stored value passes core/plausible.h. */
#include <math.h>
#include <string.h>

#include "collectors/promsource.h"
#include "collectors/promtext.h"
#include "core/config.h"
#include "core/model.h"
#include "core/plausible.h"
#include "core/util.h"
#include "tests/fuzz/fuzz.h"
#include "io/conffile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct bt_prom_doc d;
    char err[256] = "";
    bt_prom_init(&d);
    bool ok = bt_prom_parse_api(&d, NULL, (const char *)data, size, err, sizeof err);
    FUZZ_NEED_ERR(ok, err);
    if (ok) {
        struct bt_config c;
        bt_config_init(&c);
        const char *names[] = {"a", "b"};
        for (int i = 0; i < 2; i++) {
            int k = bt_config_add_route(&c, names[i]);
            bt_strlcpy(c.routes[k].model, "anthropic.claude-3-haiku-20240307-v1:0",
                       sizeof c.routes[k].model);
        }
        bt_config_finish(&c);
        struct bt_store st;
        bt_store_init(&st, c.nroutes, 60);
        (void)bt_promsrc_ingest(&d, &c, &st);
        char why[160];
        for (int r = 0; r < c.nroutes; r++) {
            const struct bt_route *rt = &c.routes[r];
            if (!isnan(rt->max_tokens) && !bt_setting_plausible(rt->max_tokens, BT_MAX_TOKENS_SETTING, why, sizeof why))
                abort();
            if (!bt_setting_plausible(rt->burndown, BT_MAX_BURNDOWN, why, sizeof why))
                abort();
            for (int s = 0; s < BT_SIG_COUNT; s++) {
                int64_t m = bt_store_newest(&st, r, (enum bt_signal)s, (int64_t)BT_TIME_MAX);
                double v = m ? bt_store_at(&st, r, (enum bt_signal)s, m) : NAN;
                if (!isnan(v) && !bt_sample_plausible((enum bt_signal)s, v, why, sizeof why))
                    abort();
            }
        }
        bt_store_free(&st);
        bt_config_free(&c);
    }
    bt_prom_free(&d);
    return 0;
}
