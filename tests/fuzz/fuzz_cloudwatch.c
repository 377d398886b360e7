/* GetMetricData pages and ListMetrics answers, as CloudWatch (or anything
 * answering on its endpoint) sends them. The first byte picks the parser. */
#include <string.h>

#include "collectors/cloudwatch.h"
#include "tests/fuzz/fuzz.h"

static void on_sample(void *arg, const char *id, int64_t t, double v)
{
    int route, sig;
    (void)bt_cloudwatch_parse_id(id, &route, &sig);
    (void)t;
    (void)v;
    ++*(int *)arg;
}

static void on_status(void *arg, const char *id, const char *code, const char *detail)
{
    (void)arg;
    (void)strlen(id);
    (void)strlen(code);
    (void)strlen(detail);
}

static void on_message(void *arg, const char *code, const char *value)
{
    (void)arg;
    (void)strlen(code);
    (void)strlen(value);
}

static void on_metric(void *arg, const char *metric, const char *model_id, const char *account)
{
    (void)strlen(metric);
    if (account)
        (void)strlen(account);
    char shortname[96];
    bt_cloudwatch_short_name(model_id, shortname, sizeof shortname);
    ++*(int *)arg;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const char *body = (const char *)data + 1;
    size_t len = size - 1;
    char err[256] = "";
    char *next = NULL;
    int n = 0;
    bool ok;
    if (data[0] & 1) {
        ok = bt_cloudwatch_parse_list(body, len, on_metric, &n, &next, err, sizeof err);
    } else {
        struct bt_cw_sink sink = {.sample = on_sample, .status = on_status,
                                  .message = on_message, .arg = &n};
        ok = bt_cloudwatch_parse_page(body, len, &sink, &next, err, sizeof err);
    }
    FUZZ_NEED_ERR(ok, err);
    if (next)
        (void)strlen(next);
    free(next);
    return 0;
}
