/* A Prometheus server's /api/v1/query and /api/v1/query_range answers
 * (bt_prom_parse_api). */
#include "collectors/prom_int.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"

static bool api_sample(const cJSON *v, double *t, double *val)
{
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != 2)
        return false;
    const cJSON *a = cJSON_GetArrayItem(v, 0), *b = cJSON_GetArrayItem(v, 1);
    if (!cJSON_IsNumber(a) || !cJSON_IsString(b))
        return false;
    *t = a->valuedouble;
    return bt_promdoc_value(b->valuestring, strlen(b->valuestring), true, val);
}

/* A series named `name` (NULL: the __name__ label) with the labels of `metric`. */
static int add_labelled(struct bt_prom_doc *d, const char *name, const cJSON *metric, int nl)
{
    struct bt_prom_label *l = nl ? bt_xcalloc((size_t)nl, sizeof *l) : NULL;
    int j = 0;
    const char *sname = name;
    const cJSON *lab;
    cJSON_ArrayForEach(lab, metric)
    {
        const char *lv = cJSON_IsString(lab) ? lab->valuestring : "";
        l[j].name = bt_xstrdup(lab->string);
        l[j].value = bt_xstrdup(lv);
        if (!name && !strcmp(lab->string, "__name__"))
            sname = l[j].value;
        j++;
    }
    if (!sname)
        sname = "";
    return bt_promdoc_series_add(d, bt_xstrdup(sname), l, nl, bt_promdoc_series_hash(sname, l, nl));
}

bool bt_prom_parse_api(struct bt_prom_doc *d, const char *name, const char *text, size_t len,
                       char *err, size_t errlen)
{
    cJSON *root = bt_promdoc_json(text, len, err, errlen);
    if (!root)
        return false;
    bool ok = true;
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(root, "status");
    const cJSON *data = cJSON_GetObjectItemCaseSensitive(root, "data");
    if (cJSON_IsString(status) && strcmp(status->valuestring, "error") == 0) {
        const cJSON *et = cJSON_GetObjectItemCaseSensitive(root, "errorType");
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(root, "error");
        ok = bt_promdoc_fail(err, errlen, "query failed: %.40s: %.160s",
                   cJSON_IsString(et) ? et->valuestring : "error",
                   cJSON_IsString(e) ? e->valuestring : "(no message)");
        goto out;
    }
    if (!cJSON_IsString(status) || strcmp(status->valuestring, "success") != 0 ||
        !cJSON_IsObject(data)) {
        ok = bt_promdoc_fail(err, errlen, "not a Prometheus API answer (no status \"success\" and data)");
        goto out;
    }
    const cJSON *rt = cJSON_GetObjectItemCaseSensitive(data, "resultType");
    const cJSON *result = cJSON_GetObjectItemCaseSensitive(data, "result");
    const char *rts = cJSON_IsString(rt) ? rt->valuestring : "";
    double t, v;
    if (strcmp(rts, "scalar") == 0) {
        if (!api_sample(result, &t, &v)) {
            ok = bt_promdoc_fail(err, errlen, "bad scalar result");
            goto out;
        }
        if (bt_promdoc_full(d, err, errlen)) {
            ok = false;
            goto out;
        }
        int i = bt_promdoc_series_add(d, bt_xstrdup(name), NULL, 0, bt_promdoc_series_hash(name, NULL, 0));
        d->series[i].value = v;
        d->series[i].has_time = true;
        d->series[i].time = t;
        goto out;
    }
    bool matrix = strcmp(rts, "matrix") == 0;
    if ((!matrix && strcmp(rts, "vector") != 0) || !cJSON_IsArray(result)) {
        ok = bt_promdoc_fail(err, errlen, "resultType \"%.20s\" is not a vector or a matrix", rts);
        goto out;
    }
    const cJSON *e;
    int k = 0;
    cJSON_ArrayForEach(e, result)
    {
        const cJSON *metric = cJSON_GetObjectItemCaseSensitive(e, "metric");
        const cJSON *values = cJSON_GetObjectItemCaseSensitive(e, matrix ? "values" : "value");
        if ((matrix ? !cJSON_IsArray(values) : !api_sample(values, &t, &v)) ||
            (metric && !cJSON_IsObject(metric))) {
            ok = bt_promdoc_fail(err, errlen, matrix ? "result[%d]: expected {\"metric\":{...},\"values\":[[t,\"v\"],...]}"
                                           : "result[%d]: expected {\"metric\":{...},\"value\":[t,\"v\"]}",
                       k);
            goto out;
        }
        int nl = cJSON_GetArraySize(metric);
        if (nl > BT_PROM_MAX_LABELS) {
            ok = bt_promdoc_fail(err, errlen, "result[%d]: more than %d labels", k, BT_PROM_MAX_LABELS);
            goto out;
        }
        /* a matrix: one series per point, each with its time; the name and labels
         * are copied once per result and shared by its points, never once a point
         * (that made a 1.76 MB answer ~3,400 times larger in memory) */
        const cJSON *pt = matrix ? values->child : NULL;
        int first = -1;
        do {
            if (matrix && !api_sample(pt, &t, &v)) {
                ok = bt_promdoc_fail(err, errlen, "result[%d]: a point is not [t,\"v\"]", k);
                goto out;
            }
            if (bt_promdoc_full(d, err, errlen)) {
                ok = false;
                goto out;
            }
            int i = first >= 0 ? bt_promdoc_point_add(d, first) : add_labelled(d, name, metric, nl);
            if (first < 0)
                first = i;
            d->series[i].value = v;
            d->series[i].has_time = true;
            d->series[i].time = t;
            pt = pt ? pt->next : NULL;
        } while (pt);
        k++;
    }
out:
    cJSON_Delete(root);
    return ok;
}
