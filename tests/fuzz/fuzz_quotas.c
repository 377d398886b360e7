/* ListServiceQuotas / ListAWSDefaultServiceQuotas pages; every quota name
 * parsed is then classified and matched as the collector does. */
#include <math.h>
#include <string.h>

#include "collectors/quotas.h"
#include "core/config.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct bt_sq_list l = {0};
    char err[256] = "";
    char *next = NULL;
    bool ok = bt_quotas_parse_page((const char *)data, size, &l, &next, err, sizeof err);
    FUZZ_NEED_ERR(ok, err);
    free(next);
    struct bt_route r;
    bt_route_defaults(&r);
    bt_strlcpy(r.name, "triage", sizeof r.name);
    bt_strlcpy(r.model, "us.anthropic.claude-sonnet-4-5-20250929-v1:0", sizeof r.model);
    r.inference = BT_INF_CROSS_REGION;
    static struct bt_quota_table table;
    static bool loaded;
    if (!loaded) {
        char e[256];
        loaded = true;
        (void)bt_quota_table_load_default(&table, e, sizeof e);
    }
    for (int i = 0; i < l.n; i++) {
        struct bt_qname q[2];
        if (bt_quotas_parse_name(&table, l.q[i].name, q) > 0)
            (void)bt_quotas_model_matches(r.model, q[0].model, &table);
    }
    for (int k = 0; k < BT_Q_COUNT; k++) {
        char why[224];
        int m = bt_quotas_match(&r, (enum bt_quota_kind)k, &l, &table, why, sizeof why);
        if (m >= 0)
            (void)bt_quotas_effective_value(&r, (enum bt_quota_kind)k, &l.q[m]);
    }
    bt_sq_list_free(&l);
    return 0;
}
