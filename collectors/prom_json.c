/* bedtop's JSON form of the admission counters (bt_prom_parse_json), and the
 * JSON helpers the Prometheus API answer shares (collectors/prom_api.c). */
#include "collectors/prom_int.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"

bool bt_promdoc_fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return false;
}

cJSON *bt_promdoc_json(const char *text, size_t len, char *err, size_t errlen)
{
    if (errlen)
        err[0] = '\0';
    cJSON *root = cJSON_ParseWithLength(text, len);
    if (!root) {
        const char *at = cJSON_GetErrorPtr();
        int line = 1;
        if (at && at >= text && at <= text + len)
            for (const char *q = text; q < at; q++)
                line += *q == '\n';
        bt_promdoc_fail(err, errlen, "line %d: JSON syntax error", line);
    }
    return root;
}

bool bt_promdoc_full(struct bt_prom_doc *d, char *err, size_t errlen)
{
    if (d->nseries < BT_PROM_MAX_SERIES)
        return false;
    bt_promdoc_fail(err, errlen, "more than %d series", BT_PROM_MAX_SERIES);
    return true;
}

/* Adds name{route=..[,le=..]} with value; the family is created on first use. */
static void json_add(struct bt_prom_doc *d, const char *family, enum bt_prom_type type,
                     const char *name, const char *route, const char *le, double v)
{
    int f = bt_promdoc_family_find(d, family, strlen(family));
    if (f < 0) {
        f = bt_promdoc_family_add(d, family, 0);
        d->families[f].type = type;
        d->families[f].has_type = true;
    }
    int nl = le ? 2 : 1;
    struct bt_prom_label *l = bt_xcalloc((size_t)nl, sizeof *l);
    l[0] = (struct bt_prom_label){bt_xstrdup("route"), bt_xstrdup(route)};
    if (le)
        l[1] = (struct bt_prom_label){bt_xstrdup("le"), bt_xstrdup(le)};
    uint64_t h = bt_promdoc_series_hash(name, l, nl);
    int i = bt_promdoc_series_add(d, bt_xstrdup(name), l, nl, h);
    d->series[i].family = f;
    d->series[i].value = v;
}

static bool json_histogram(struct bt_prom_doc *d, const char *route, const cJSON *m, char *err,
                           size_t errlen)
{
    const cJSON *buckets = cJSON_GetObjectItemCaseSensitive(m, "buckets");
    const cJSON *sum = cJSON_GetObjectItemCaseSensitive(m, "sum");
    const cJSON *count = cJSON_GetObjectItemCaseSensitive(m, "count");
    if (!cJSON_IsObject(buckets))
        return bt_promdoc_fail(err, errlen, "routes.%s.%s: a histogram needs a \"buckets\" object", route,
                     m->string);
    char name[256];
    bool inf = false;
    double inf_count = 0;
    const cJSON *b;
    cJSON_ArrayForEach(b, buckets)
    {
        double le;
        if (!bt_promdoc_value(b->string, strlen(b->string), true, &le) || isnan(le))
            return bt_promdoc_fail(err, errlen, "routes.%s.%s.buckets: bad le \"%.40s\"", route, m->string,
                         b->string);
        if (!cJSON_IsNumber(b))
            return bt_promdoc_fail(err, errlen, "routes.%s.%s.buckets.%.40s: expected a number", route,
                         m->string, b->string);
        if (bt_promdoc_full(d, err, errlen))
            return false;
        if (isinf(le) && le > 0) {
            inf = true;
            inf_count = b->valuedouble;
        }
        snprintf(name, sizeof name, "%s_bucket", m->string);
        json_add(d, m->string, BT_PROM_HISTOGRAM, name, route, b->string, b->valuedouble);
    }
    if (!inf)
        return bt_promdoc_fail(err, errlen, "routes.%s.%s.buckets: no \"+Inf\" bucket", route, m->string);
    if (sum && !cJSON_IsNumber(sum))
        return bt_promdoc_fail(err, errlen, "routes.%s.%s.sum: expected a number", route, m->string);
    if (count && !cJSON_IsNumber(count))
        return bt_promdoc_fail(err, errlen, "routes.%s.%s.count: expected a number", route, m->string);
    if (bt_promdoc_full(d, err, errlen))
        return false;
    if (sum) {
        snprintf(name, sizeof name, "%s_sum", m->string);
        json_add(d, m->string, BT_PROM_HISTOGRAM, name, route, NULL, sum->valuedouble);
    }
    snprintf(name, sizeof name, "%s_count", m->string);
    json_add(d, m->string, BT_PROM_HISTOGRAM, name, route, NULL,
             count ? count->valuedouble : inf_count);
    return true;
}

static bool valid_metric_name(const char *s)
{
    if (!bt_promdoc_name_start((unsigned char)*s) || strlen(s) > 200)
        return false;
    for (s++; *s; s++)
        if (!bt_promdoc_name_char((unsigned char)*s))
            return false;
    return true;
}

bool bt_prom_parse_json(struct bt_prom_doc *d, const char *text, size_t len, char *err,
                        size_t errlen)
{
    cJSON *root = bt_promdoc_json(text, len, err, errlen);
    if (!root)
        return false;
    bool ok = true;
    const cJSON *routes = cJSON_GetObjectItemCaseSensitive(root, "routes");
    if (!cJSON_IsObject(routes)) {
        ok = bt_promdoc_fail(err, errlen, "expected {\"routes\":{\"<route>\":{...}}}");
        goto out;
    }
    const cJSON *r;
    cJSON_ArrayForEach(r, routes)
    {
        if (!cJSON_IsObject(r) || strlen(r->string) > 200) {
            ok = bt_promdoc_fail(err, errlen, "routes.%.64s: expected an object of metrics", r->string);
            goto out;
        }
        const cJSON *m;
        cJSON_ArrayForEach(m, r)
        {
            if (!valid_metric_name(m->string)) {
                ok = bt_promdoc_fail(err, errlen, "routes.%s: bad metric name \"%.64s\"", r->string,
                           m->string);
                goto out;
            }
            if (cJSON_IsNull(m))
                continue; /* not measured yet */
            if (cJSON_IsObject(m)) {
                ok = json_histogram(d, r->string, m, err, errlen);
                if (!ok)
                    goto out;
                continue;
            }
            if (!cJSON_IsNumber(m)) {
                ok = bt_promdoc_fail(err, errlen, "routes.%s.%s: expected a number or a histogram object",
                           r->string, m->string);
                goto out;
            }
            if (bt_promdoc_full(d, err, errlen)) {
                ok = false;
                goto out;
            }
            size_t n = strlen(m->string);
            bool counter = n > 6 && strcmp(m->string + n - 6, "_total") == 0;
            json_add(d, m->string, counter ? BT_PROM_COUNTER : BT_PROM_GAUGE, m->string,
                     r->string, NULL, m->valuedouble);
        }
    }
out:
    cJSON_Delete(root);
    if (!ok)
        bt_prom_free(d);
    return ok;
}
