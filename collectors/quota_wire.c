/* Service Quotas, the wire: ListServiceQuotas / ListAWSDefaultServiceQuotas
 * request bodies and pages (JSON 1.1), each quota with its UsageMetric. */
#include "collectors/quotas.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"

#define MAX_TOKEN_LEN 4096   /* bound on a NextToken we echo back */
#define MAX_QUOTAS 20000     /* bound on quotas kept from one listing */

void bt_sq_list_free(struct bt_sq_list *l)
{
    free(l->q);
    memset(l, 0, sizeof *l);
}

/* ---- request and response ------------------------------------------------ */

void bt_quotas_request_json(struct bt_buf *out, const char *next_token)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "ServiceCode", "bedrock");
    cJSON_AddNumberToObject(root, "MaxResults", 100);
    if (next_token && *next_token)
        cJSON_AddStringToObject(root, "NextToken", next_token);
    bt_buf_reset(out);
    bt_buf_json(out, root, false);
    cJSON_Delete(root);
}

/* UsageMetric: {"MetricNamespace", "MetricName", "MetricDimensions": {name: value},
 * "MetricStatisticRecommendation"}; the model it names, if any. Oversized or
 * malformed members leave it empty (the quota is then matched by code or name). */
static void usage_metric(const cJSON *q, struct bt_sq_quota *e)
{
    const cJSON *um = cJSON_GetObjectItemCaseSensitive(q, "UsageMetric");
    const cJSON *ns = cJSON_GetObjectItemCaseSensitive(um, "MetricNamespace");
    const cJSON *mn = cJSON_GetObjectItemCaseSensitive(um, "MetricName");
    const cJSON *dims = cJSON_GetObjectItemCaseSensitive(um, "MetricDimensions");
    if (!cJSON_IsObject(um) || !cJSON_IsString(ns) || !cJSON_IsObject(dims) ||
        strlen(ns->valuestring) >= sizeof e->um_ns)
        return;
    const char *want = strcmp(ns->valuestring, "AWS/BedrockMantle") == 0 ? "Model" : "ModelId";
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(dims, want);
    if (!cJSON_IsString(model) || !model->valuestring[0] ||
        strlen(model->valuestring) >= sizeof e->um_model)
        return;
    bt_strlcpy(e->um_ns, ns->valuestring, sizeof e->um_ns);
    bt_strlcpy(e->um_model, model->valuestring, sizeof e->um_model);
    if (cJSON_IsString(mn) && strlen(mn->valuestring) < sizeof e->um_metric)
        bt_strlcpy(e->um_metric, mn->valuestring, sizeof e->um_metric);
}

bool bt_quotas_parse_page(const char *body, size_t len, struct bt_sq_list *l,
                          char **next_token, char *err, size_t errlen)
{
    *next_token = NULL;
    if (!body || !len) {
        snprintf(err, errlen, "empty response body");
        return false;
    }
    cJSON *root = cJSON_ParseWithLength(body, len);
    if (!cJSON_IsObject(root)) {
        snprintf(err, errlen, "malformed JSON response (%zu bytes)", len);
        cJSON_Delete(root);
        return false;
    }
    const cJSON *quotas = cJSON_GetObjectItemCaseSensitive(root, "Quotas");
    const cJSON *nt = cJSON_GetObjectItemCaseSensitive(root, "NextToken");
    if ((quotas && !cJSON_IsNull(quotas) && !cJSON_IsArray(quotas)) ||
        (nt && !cJSON_IsNull(nt) && !cJSON_IsString(nt))) {
        snprintf(err, errlen, "unexpected ListServiceQuotas response shape");
        cJSON_Delete(root);
        return false;
    }
    if (cJSON_IsString(nt) && strlen(nt->valuestring) > MAX_TOKEN_LEN) {
        snprintf(err, errlen, "NextToken longer than %d bytes", MAX_TOKEN_LEN);
        cJSON_Delete(root);
        return false;
    }
    const cJSON *q;
    const cJSON *arr = cJSON_IsArray(quotas) ? quotas : NULL;
    cJSON_ArrayForEach(q, arr) {
        const cJSON *code = cJSON_GetObjectItemCaseSensitive(q, "QuotaCode");
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(q, "QuotaName");
        const cJSON *val = cJSON_GetObjectItemCaseSensitive(q, "Value");
        /* a quota without a value (ErrorReason) or with an oversized field
         * is skipped: truncating a name could make it match the wrong model */
        if (!cJSON_IsString(code) || !cJSON_IsString(name) || !cJSON_IsNumber(val) ||
            !isfinite(val->valuedouble) || val->valuedouble < 0 ||
            strlen(code->valuestring) >= sizeof l->q->code ||
            strlen(name->valuestring) >= sizeof l->q->name || l->n >= MAX_QUOTAS)
            continue;
        if (l->n == l->cap) {
            l->cap = l->cap ? l->cap * 2 : 64;
            l->q = bt_xrealloc(l->q, (size_t)l->cap * sizeof *l->q);
        }
        struct bt_sq_quota *e = &l->q[l->n++];
        memset(e, 0, sizeof *e);
        bt_strlcpy(e->code, code->valuestring, sizeof e->code);
        bt_strlcpy(e->name, name->valuestring, sizeof e->name);
        e->value = val->valuedouble;
        const cJSON *adj = cJSON_GetObjectItemCaseSensitive(q, "Adjustable");
        e->adjustable = cJSON_IsBool(adj) ? (cJSON_IsTrue(adj) ? BT_ADJ_YES : BT_ADJ_NO)
                                          : BT_ADJ_UNKNOWN;
        usage_metric(q, e);
    }
    if (cJSON_IsString(nt) && nt->valuestring[0])
        *next_token = bt_xstrdup(nt->valuestring);
    cJSON_Delete(root);
    return true;
}

