/* ListFoundationModels answers (Bedrock control plane): every model handed on has a
 * clean ID and one of the two lifecycle statuses, and its dates fit their words. */
#include <string.h>

#include "collectors/catalogue.h"
#include "core/sanitize.h"
#include "tests/fuzz/fuzz.h"

static void on_model(void *arg, const struct bt_fmodel *m)
{
    (void)arg;
    if (!m->id[0] || !bt_san_term_clean(m->id) || (strcmp(m->status, "ACTIVE") && strcmp(m->status, "LEGACY")))
        abort();
    char dates[224];
    bt_fmodel_dates(m, dates, sizeof dates);
    if (strlen(dates) >= sizeof dates)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[160] = "";
    bool ok = bt_fmodels_parse((const char *)data, size, on_model, NULL, err, sizeof err);
    FUZZ_NEED_ERR(ok, err);
    return 0;
}
