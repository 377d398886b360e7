/* CloudWatch, the wire: GetMetricData and ListMetrics request bodies, ListMetrics
 * answers (JSON 1.0; a GetMetricData page is read in cw_page.c), query Ids, the
 * settled-minute window and route names from model IDs. */
#include "collectors/cloudwatch.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/cw_int.h"
#include "core/json.h"

/* ---- request building ---------------------------------------------------- */

int bt_cloudwatch_route_queries(const struct bt_route *rt, int ri,
                                const struct bt_cw_spelling *sp, struct bt_cw_query *out,
                                int max)
{
    int n = 0;
    bool mantle = rt->endpoint == BT_EP_MANTLE;
    for (int s = 0; s < BT_SIG_COUNT && n < max; s++) {
        const struct bt_signal_info *si = &bt_signal_info[s];
        if (si->source != BT_SRC_CLOUDWATCH)
            continue;
        const char *metric = mantle ? si->mantle : si->metric;
        if (!metric || bt_signal_daily((enum bt_signal)s) || bt_signal_tier((enum bt_signal)s))
            continue;
        if (!mantle && sp && ((s == BT_SIG_CACHE_READ && sp->no_read) ||
                              (s == BT_SIG_CACHE_WRITE && sp->no_write)))
            continue; /* ListMetrics lists no such series for the ModelId */
        if (!mantle && sp && s == BT_SIG_CACHE_READ && sp->cache_read)
            metric = sp->cache_read;
        if (!mantle && sp && s == BT_SIG_CACHE_WRITE && sp->cache_write)
            metric = sp->cache_write;
        out[n++] = (struct bt_cw_query){.route = ri, .signal = (enum bt_signal)s,
                                        .ns = mantle ? NS_MANTLE : NS_RUNTIME,
                                        .metric = metric, .stat = si->stat};
        /* unknown spelling: both names in the same request, whichever has data wins */
        if (!mantle && sp && sp->both && n < max &&
            (s == BT_SIG_CACHE_READ || s == BT_SIG_CACHE_WRITE))
            out[n++] = (struct bt_cw_query){.route = ri, .signal = (enum bt_signal)s, .alt = true,
                                            .ns = NS_RUNTIME,
                                            .metric = s == BT_SIG_CACHE_READ ? "CacheReadInputTokens"
                                                                             : "CacheWriteInputTokens",
                                            .stat = si->stat};
    }
    return n;
}

int bt_cloudwatch_day_queries(const struct bt_route *rt, int ri, const struct bt_cw_spelling *sp,
                              struct bt_cw_query *out, int max)
{
    static const enum bt_signal day[] = {BT_SIG_DAY_INPUT_TOKENS, BT_SIG_DAY_OUTPUT_TOKENS,
                                         BT_SIG_DAY_CACHE_WRITE, BT_SIG_DAY_CACHE_READ};
    int n = 0;
    if (rt->endpoint == BT_EP_MANTLE)
        return 0; /* mantle has no daily token quota */
    for (size_t i = 0; i < BT_ARRAY_LEN(day) && n < max; i++) {
        const struct bt_signal_info *si = &bt_signal_info[day[i]];
        bool write = day[i] == BT_SIG_DAY_CACHE_WRITE, read = day[i] == BT_SIG_DAY_CACHE_READ;
        if (sp && ((write && sp->no_write) || (read && sp->no_read)))
            continue; /* not listed for the ModelId */
        out[n++] = (struct bt_cw_query){.route = ri, .signal = day[i], .ns = NS_RUNTIME,
                                        .metric = si->metric, .stat = si->stat, .period = 3600};
        /* unknown cache spelling: both, as for the minute queries */
        const char *spelled = !sp ? NULL : write ? sp->cache_write : read ? sp->cache_read : NULL;
        if (spelled)
            out[n - 1].metric = spelled;
        else if ((write || read) && sp && sp->both && n < max)
            out[n++] = (struct bt_cw_query){.route = ri, .signal = day[i], .alt = true,
                                            .ns = NS_RUNTIME,
                                            .metric = write ? "CacheWriteInputTokens"
                                                            : "CacheReadInputTokens",
                                            .stat = si->stat, .period = 3600};
    }
    return n;
}

void bt_cloudwatch_query_id(int route, enum bt_signal sig, char *out, size_t n)
{
    /* "r<route>_s<signal>", as snprintf would write it: once per query of a request */
    char tmp[48];
    char *p = tmp + sizeof tmp;
    *--p = '\0';
    p = bt_fmt_int_before(p, (int)sig);
    *--p = 's';
    *--p = '_';
    p = bt_fmt_int_before(p, route);
    *--p = 'r';
    bt_strlcpy(out, p, n);
}

bool bt_cloudwatch_parse_id(const char *id, int *route, int *sig)
{
    long r, s;
    char *end;
    if (!id || id[0] != 'r' || id[1] < '0' || id[1] > '9')
        return false;
    errno = 0;
    r = strtol(id + 1, &end, 10);
    if (errno || end[0] != '_' || end[1] != 's' || end[2] < '0' || end[2] > '9')
        return false;
    s = strtol(end + 2, &end, 10);
    if (!strcmp(end, "_a"))
        end += 2;
    if (errno || *end || r < 0 || r > 1000000 || s < 0 || s >= BT_SIG_COUNT)
        return false;
    *route = (int)r;
    *sig = (int)s;
    return true;
}

int bt_cloudwatch_nrequests(int nqueries)
{
    return nqueries <= 0 ? 0 : (nqueries + BT_CW_MAX_QUERIES - 1) / BT_CW_MAX_QUERIES;
}

static void put_json(struct bt_buf *out, cJSON *root)
{
    bt_buf_reset(out);
    bt_buf_json(out, root, false);
    cJSON_Delete(root);
}

/* Written straight into the buffer: a poll re-sends this body for every page, and
 * building it as a cJSON tree cost more than parsing the answers. */
/* bt_buf_json_str's text: a string with nothing to escape (every name and model
 * ID of a request, some 5 a query) appended whole between its quotes */
static void put_str(struct bt_buf *out, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p >= 0x20 && *p != '"' && *p != '\\')
        p++;
    if (*p) {
        bt_buf_json_str(out, s);
        return;
    }
    size_t n = (size_t)(p - (const unsigned char *)s);
    bt_buf_reserve(out, n + 2);
    out->buf[out->len++] = '"';
    memcpy(out->buf + out->len, s, n);
    out->len += n;
    out->buf[out->len++] = '"';
    out->buf[out->len] = '\0';
}

static void dim_json(struct bt_buf *out, const char *name, const char *value, bool first)
{
    bt_buf_puts(out, first ? "{\"Name\":" : ",{\"Name\":");
    put_str(out, name); /* a listed dimension's name is the answer's: escaped */
    bt_buf_puts(out, ",\"Value\":");
    put_str(out, value);
    bt_buf_putc(out, '}');
}

int bt_cloudwatch_query_weight(const struct bt_cw_query *q)
{
    return q->nsum > 1 ? q->nsum + 1 : 1;
}

const char *bt_cw_dim(const struct bt_cw_dimset *d, const char *name)
{
    for (int i = 0; i < d->n; i++)
        if (!strcmp(d->name[i], name))
            return d->value[i];
    return NULL;
}

/* One MetricStat entry: id, the metric under the dimension set, visible or not. */
static void stat_json(struct bt_buf *out, const struct bt_route *rt, const struct bt_cw_query *q,
                      const char *id, const struct bt_cw_dimset *set, bool visible, bool first)
{
    /* puts, not printf: a request is 500 of these, 20 at 500 routes (a tenth of a check) */
    bt_buf_puts(out, first ? "{\"Id\":\"" : ",{\"Id\":\"");
    bt_buf_puts(out, id);
    bt_buf_puts(out, "\",\"MetricStat\":{\"Metric\":{\"Namespace\":");
    put_str(out, q->ns);
    bt_buf_puts(out, ",\"MetricName\":");
    put_str(out, q->metric);
    bt_buf_puts(out, ",\"Dimensions\":[");
    if (set) {
        for (int d = 0; d < set->n; d++)
            dim_json(out, set->name[d], set->value[d], d == 0);
    } else {
        dim_json(out, strcmp(q->ns, NS_MANTLE) == 0 ? "Model" : "ModelId", rt->model, true);
    }
    bt_buf_puts(out, "]},\"Period\":");
    bt_buf_put_int(out, q->period ? q->period : BT_CW_PERIOD);
    bt_buf_puts(out, ",\"Stat\":");
    put_str(out, q->stat);
    bt_buf_puts(out, visible ? "},\"ReturnData\":true" : "},\"ReturnData\":false");
    /* cross-account observability: the source account the metric lives in */
    if (rt->account[0]) {
        bt_buf_puts(out, ",\"AccountId\":");
        put_str(out, rt->account);
    }
    bt_buf_putc(out, '}');
}

void bt_cloudwatch_request_json(struct bt_buf *out, const struct bt_route *routes,
                                const struct bt_cw_query *q, int nq, int64_t start,
                                int64_t end, const char *next_token)
{
    bt_cloudwatch_request_json_of(out, routes, q, NULL, nq, start, end, next_token);
}

void bt_cloudwatch_request_json_of(struct bt_buf *out, const struct bt_route *routes,
                                   const struct bt_cw_query *q, const int *idx, int nq,
                                   int64_t start, int64_t end, const char *next_token)
{
    bt_buf_reset(out);
    bt_buf_puts(out, "{\"MetricDataQueries\":[");
    for (int i = 0; i < nq; i++) {
        const struct bt_cw_query *x = &q[idx ? idx[i] : i];
        const struct bt_route *rt = &routes[x->route];
        char id[32];
        bt_cloudwatch_query_id(x->route, x->signal, id, sizeof id);
        if (x->alt)
            bt_strlcpy(id + strlen(id), "_a", sizeof id - strlen(id));
        if (x->nsum <= 1) {
            /* one series: asked directly, under its listed dimension set if any */
            stat_json(out, rt, x, id, x->nsum ? &x->sum[0] : NULL, true, i == 0);
            continue;
        }
        /* the series as listed, hidden, and their sum under the figure's Id */
        char sid[sizeof id + 16]; /* the Id, "_p" and any int */
        for (int k = 0; k < x->nsum; k++) {
            snprintf(sid, sizeof sid, "%s_p%d", id, k);
            stat_json(out, rt, x, sid, &x->sum[k], false, i == 0 && k == 0);
        }
        bt_buf_printf(out, ",{\"Id\":\"%s\",\"Expression\":\"SUM([", id);
        for (int k = 0; k < x->nsum; k++)
            bt_buf_printf(out, "%s%s_p%d", k ? "," : "", id, k);
        bt_buf_puts(out, "])\",\"ReturnData\":true}");
    }
    /* oldest first so appended pages extend series in time order */
    bt_buf_printf(out, "],\"StartTime\":%lld,\"EndTime\":%lld,\"ScanBy\":\"TimestampAscending\"",
                  (long long)start, (long long)end);
    if (next_token && *next_token) {
        bt_buf_puts(out, ",\"NextToken\":");
        bt_buf_json_str(out, next_token);
    }
    bt_buf_putc(out, '}');
}

/* A ListMetrics body: metric (NULL: any) in ns with dimension dim, and (tier) the
 * reserved service tier's dimension ResolvedServiceTier=reserved as well. */
static void list_json(struct bt_buf *out, const char *ns, const char *metric, const char *dim,
                      bool tier, const char *next_token, bool linked, const char *owning_account)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "Namespace", ns);
    if (metric)
        cJSON_AddStringToObject(root, "MetricName", metric);
    cJSON *dims = cJSON_AddArrayToObject(root, "Dimensions");
    cJSON *d = cJSON_CreateObject();
    cJSON_AddStringToObject(d, "Name", dim);
    cJSON_AddItemToArray(dims, d);
    if (tier) {
        d = cJSON_CreateObject();
        cJSON_AddStringToObject(d, "Name", "ResolvedServiceTier");
        cJSON_AddStringToObject(d, "Value", "reserved");
        cJSON_AddItemToArray(dims, d);
    }
    if (linked)
        cJSON_AddBoolToObject(root, "IncludeLinkedAccounts", true);
    if (linked && owning_account && *owning_account)
        cJSON_AddStringToObject(root, "OwningAccount", owning_account);
    if (next_token && *next_token)
        cJSON_AddStringToObject(root, "NextToken", next_token);
    put_json(out, root);
}

void bt_cloudwatch_list_json(struct bt_buf *out, const char *next_token, bool linked,
                             const char *owning_account)
{
    list_json(out, NS_RUNTIME, NULL, "ModelId", false, next_token, linked, owning_account);
}

void bt_cloudwatch_list_json_ns(struct bt_buf *out, const char *ns, const char *dim,
                                const char *next_token, bool linked, const char *owning_account)
{
    list_json(out, ns, NULL, dim, false, next_token, linked, owning_account);
}

void bt_cloudwatch_list_tier_json(struct bt_buf *out, const char *next_token, bool linked,
                                  const char *owning_account)
{
    list_json(out, NS_RUNTIME, bt_signal_info[BT_SIG_TIER_RES_INVOCATIONS].metric, "ModelId",
              true, next_token, linked, owning_account);
}

/* ---- response parsing ---------------------------------------------------- */

static bool take_token(const cJSON *root, char **next_token, char *err, size_t errlen)
{
    const cJSON *nt = cJSON_GetObjectItemCaseSensitive(root, "NextToken");
    *next_token = NULL;
    if (!nt || cJSON_IsNull(nt))
        return true;
    if (!cJSON_IsString(nt)) {
        snprintf(err, errlen, "NextToken is not a string");
        return false;
    }
    if (!*nt->valuestring)
        return true;
    if (strlen(nt->valuestring) > MAX_TOKEN_LEN) {
        snprintf(err, errlen, "NextToken longer than %d bytes", MAX_TOKEN_LEN);
        return false;
    }
    *next_token = bt_xstrdup(nt->valuestring);
    return true;
}

/* The answer's tree, in an arena (core/json.h): released with bt_json_arena_free. */
static cJSON *parse_body(const char *body, size_t len, struct bt_json_arena **arena, char *err,
                         size_t errlen)
{
    *arena = NULL;
    if (!body || !len) {
        snprintf(err, errlen, "empty response body");
        return NULL;
    }
    cJSON *root = bt_json_parse_arena(body, len, arena);
    if (!root) {
        snprintf(err, errlen, "malformed JSON response (%zu bytes)", len);
        return NULL;
    }
    if (!cJSON_IsObject(root)) {
        snprintf(err, errlen, "response is not a JSON object");
        bt_json_arena_free(*arena);
        *arena = NULL;
        return NULL;
    }
    return root;
}

static const char *str_or(const cJSON *o, const char *key, const char *dflt)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(j) ? j->valuestring : dflt;
}

bool bt_cloudwatch_parse_list_sets(const char *body, size_t len,
                                   void (*fn)(void *arg, const struct bt_cw_listed *m), void *arg,
                                   char **next_token, char *err, size_t errlen)
{
    *next_token = NULL;
    struct bt_json_arena *arena;
    cJSON *root = parse_body(body, len, &arena, err, errlen);
    if (!root)
        return false;
    const cJSON *metrics = cJSON_GetObjectItemCaseSensitive(root, "Metrics");
    if (metrics && !cJSON_IsArray(metrics)) {
        snprintf(err, errlen, "Metrics is not an array");
        bt_json_arena_free(arena);
        return false;
    }
    if (!take_token(root, next_token, err, errlen)) {
        bt_json_arena_free(arena);
        return false;
    }
    /* a monitoring account's answer: OwningAccounts[i] owns Metrics[i] */
    const cJSON *owners = cJSON_GetObjectItemCaseSensitive(root, "OwningAccounts");
    const cJSON *owner = cJSON_IsArray(owners) ? owners->child : NULL;
    const cJSON *m;
    cJSON_ArrayForEach(m, metrics) {
        struct bt_cw_listed l;
        memset(&l, 0, sizeof l);
        l.account = cJSON_IsString(owner) ? owner->valuestring : NULL;
        owner = owner ? owner->next : NULL;
        l.ns = str_or(m, "Namespace", "");
        l.metric = str_or(m, "MetricName", NULL);
        const cJSON *dims = cJSON_GetObjectItemCaseSensitive(m, "Dimensions");
        const cJSON *d;
        if (!l.metric || !cJSON_IsArray(dims))
            continue;
        bool bad = false;
        cJSON_ArrayForEach(d, dims) {
            const char *dn = str_or(d, "Name", NULL);
            const char *dv = str_or(d, "Value", NULL);
            /* bounded: a value longer than a route holds is not ours */
            if (!dn || !dv || !*dv || strlen(dv) >= 192 || strlen(dn) >= 64) {
                bad = true;
                break;
            }
            if (l.dims.n == BT_CW_MAX_DIMS) {
                l.more_dims = true;
                continue;
            }
            l.dims.name[l.dims.n] = dn;
            l.dims.value[l.dims.n++] = dv;
        }
        if (!bad)
            fn(arg, &l);
    }
    bt_json_arena_free(arena);
    return true;
}

struct by_model {
    void (*fn)(void *arg, const char *metric, const char *model_id, const char *account);
    void *arg;
};

static void model_of(void *arg, const struct bt_cw_listed *m)
{
    const struct by_model *b = arg;
    const char *v = bt_cw_dim(&m->dims, "ModelId");
    if (v)
        b->fn(b->arg, m->metric, v, m->account);
}

bool bt_cloudwatch_parse_list(const char *body, size_t len,
                              void (*fn)(void *arg, const char *metric, const char *model_id,
                                         const char *account),
                              void *arg, char **next_token, char *err, size_t errlen)
{
    struct by_model b = {fn, arg};
    return bt_cloudwatch_parse_list_sets(body, len, model_of, &b, next_token, err, errlen);
}

/* ---- the settled-minute window ------------------------------------------ */

int64_t bt_cloudwatch_newest_settled(int64_t now, double lag)
{
    int64_t lag_s = lag > 0 ? (int64_t)ceil(lag) : 0;
    return bt_minute_floor(now - 120 - lag_s);
}

int64_t bt_cloudwatch_end(int64_t now)
{
    return bt_minute_floor(now);
}

int64_t bt_cloudwatch_settle(int64_t now, double lag, int64_t end, int64_t prev)
{
    int64_t s = bt_cloudwatch_newest_settled(now, lag);
    if (s > end - 60)
        s = end - 60;
    return s > prev ? s : prev;
}

int64_t bt_cloudwatch_route_start(int64_t now, int64_t settled_through, int backfill_minutes)
{
    int64_t end = bt_cloudwatch_end(now);
    int64_t back = end - (int64_t)(backfill_minutes > 0 ? backfill_minutes : 1) * 60;
    if (settled_through <= 0)
        return back;
    int64_t next = settled_through + 60;
    /* after a long outage, fetch no more than the backfill would */
    return next < back ? back : next;
}

bool bt_cloudwatch_day_sums(enum bt_run_mode mode, int history_minutes, bool window)
{
    return !window && (mode == BT_MODE_ONCE || history_minutes < 1440);
}

bool bt_cloudwatch_day_hourly(enum bt_run_mode mode, int history_minutes)
{
    /* the minutes after the hour are kept: the hour, the lag and a poll's slack */
    return mode != BT_MODE_ONCE && history_minutes >= 120;
}

int bt_cloudwatch_backfill_minutes(int64_t now, enum bt_run_mode mode, int history_minutes)
{
    int since_midnight = (int)((now - (now / 86400) * 86400) / 60) + 1;
    int want = mode == BT_MODE_ONCE ? 10 : 180;
    /* live: every minute since midnight for the daily total; check asks the day sums */
    if (mode != BT_MODE_ONCE && since_midnight > want)
        want = since_midnight;
    if (history_minutes > 0 && want > history_minutes)
        want = history_minutes;
    return want < 1 ? 1 : want;
}

void bt_cloudwatch_short_name(const char *model_id, char *out, size_t n)
{
    /* ARNs: what they are and their ID (provisioned-abc123, profile-a1b2c3) */
    const char *slash = strrchr(model_id, '/');
    if (strncmp(model_id, "arn:", 4) == 0 && slash && slash[1]) {
        snprintf(out, n, "%s-%.40s",
                 strstr(model_id, ":provisioned-model/") ? "provisioned" : "profile", slash + 1);
        return;
    }
    static const char lo[] = "+latency-optimized";
    size_t idl = strlen(model_id);
    if (idl > sizeof lo - 1 && strcmp(model_id + idl - (sizeof lo - 1), lo) == 0) {
        char base[192], name[64];
        snprintf(base, sizeof base, "%.*s", (int)(idl - (sizeof lo - 1)), model_id);
        bt_cloudwatch_short_name(base, name, sizeof name);
        snprintf(out, n, "%.50s-latency", name);
        return;
    }
    char prefix[16] = "";
    const char *p = model_id;
    size_t pl = bt_profile_prefix_len(model_id);
    if (pl && pl < sizeof prefix) {
        memcpy(prefix, model_id, pl);
        prefix[pl] = '\0';
        p += pl;
    }
    const char *dot = strchr(p, '.');
    if (dot && dot[1])
        p = dot + 1; /* vendor */
    char core[192];
    bt_strlcpy(core, p, sizeof core);
    char *colon = strchr(core, ':');
    if (colon)
        *colon = '\0';
    /* drop "-vN" and an 8-digit date, from the end */
    char *dash = strrchr(core, '-');
    if (dash && dash[1] == 'v' && dash[2] && strspn(dash + 2, "0123456789") == strlen(dash + 2))
        *dash = '\0';
    dash = strrchr(core, '-');
    if (dash && strlen(dash + 1) == 8 && strspn(dash + 1, "0123456789") == 8)
        *dash = '\0';
    if (!core[0])
        bt_strlcpy(core, model_id, sizeof core);
    snprintf(out, n, "%s%s", prefix, core);
}

