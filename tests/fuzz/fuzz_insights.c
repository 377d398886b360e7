/* Metrics Insights answers (unseen callers, collectors/cw_insights.c): every series
 * delivered has a ModelId fit for a route and a finite, non-negative sum. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/cw_insights.h"
#include "core/model.h"
#include "core/sanitize.h"
#include "tests/fuzz/fuzz.h"

static void each(void *arg, const char *model_id, double sum, int n)
{
    int *delivered = arg;
    (*delivered)++;
    if (!model_id[0] || strlen(model_id) >= sizeof ((struct bt_route *)0)->model ||
        !bt_san_term_clean(model_id) || isnan(sum) || sum < 0 || n < 0)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[160] = "", *tok = NULL;
    int series = 0, delivered = 0;
    bool ok = bt_insights_parse_page((const char *)data, size, each, &delivered, &series, &tok,
                                     err, sizeof err);
    FUZZ_NEED_ERR(ok, err);
    if (delivered > series || (!ok && tok))
        abort(); /* delivered series were read; a failure hands back no token */
    free(tok);
    return 0;
}
