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
    for (int i = 0; i < l.n; i++) {
        enum bt_quota_kind kind;
        enum bt_inference inf;
        bool any;
        char model[192];
        if (bt_quotas_parse_name(l.q[i].name, &kind, &inf, &any, model, sizeof model))
            (void)bt_quotas_model_matches(r.model, model, NULL);
    }
    for (int k = 0; k < BT_Q_COUNT; k++) {
        int m = bt_quotas_match(&r, (enum bt_quota_kind)k, &l, NULL);
        if (m >= 0)
            (void)bt_quotas_effective_value(&r, (enum bt_quota_kind)k, &l.q[m]);
    }
    bt_sq_list_free(&l);
    return 0;
}
