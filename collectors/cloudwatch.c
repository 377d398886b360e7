#include "collectors/cloudwatch.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collectors/awsgroup.h"
#include "net/http.h"
#include "core/json.h"
#include "core/sanitize.h"

#define NS_RUNTIME "AWS/Bedrock"
#define NS_MANTLE "AWS/BedrockMantle"
#define MAX_TOKEN_LEN 4096   /* bound on a NextToken we echo back */

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
                                         BT_SIG_DAY_CACHE_WRITE};
    int n = 0;
    if (rt->endpoint == BT_EP_MANTLE)
        return 0; /* mantle has no daily token quota */
    for (size_t i = 0; i < BT_ARRAY_LEN(day) && n < max; i++) {
        const struct bt_signal_info *si = &bt_signal_info[day[i]];
        out[n++] = (struct bt_cw_query){.route = ri, .signal = day[i], .ns = NS_RUNTIME,
                                        .metric = si->metric, .stat = si->stat, .period = 86400};
        /* unknown cache spelling: both, as for the minute queries */
        if (day[i] == BT_SIG_DAY_CACHE_WRITE && sp && sp->cache_write)
            out[n - 1].metric = sp->cache_write;
        else if (day[i] == BT_SIG_DAY_CACHE_WRITE && sp && sp->both && n < max)
            out[n++] = (struct bt_cw_query){.route = ri, .signal = day[i], .alt = true,
                                            .ns = NS_RUNTIME, .metric = "CacheWriteInputTokens",
                                            .stat = si->stat, .period = 86400};
    }
    return n;
}

void bt_cloudwatch_query_id(int route, enum bt_signal sig, char *out, size_t n)
{
    snprintf(out, n, "r%d_s%d", route, (int)sig);
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
static void dim_json(struct bt_buf *out, const char *name, const char *value, bool first)
{
    bt_buf_printf(out, "%s{\"Name\":\"%s\",\"Value\":", first ? "" : ",", name);
    bt_buf_json_str(out, value);
    bt_buf_putc(out, '}');
}

void bt_cloudwatch_request_json(struct bt_buf *out, const struct bt_route *routes,
                                const struct bt_cw_query *q, int nq, int64_t start,
                                int64_t end, const char *next_token)
{
    bt_buf_reset(out);
    bt_buf_puts(out, "{\"MetricDataQueries\":[");
    for (int i = 0; i < nq; i++) {
        const struct bt_route *rt = &routes[q[i].route];
        char id[32];
        bt_cloudwatch_query_id(q[i].route, q[i].signal, id, sizeof id);
        if (q[i].alt)
            bt_strlcpy(id + strlen(id), "_a", sizeof id - strlen(id));
        bt_buf_printf(out, "%s{\"Id\":\"%s\",\"MetricStat\":{\"Metric\":{\"Namespace\":",
                      i ? "," : "", id);
        bt_buf_json_str(out, q[i].ns);
        bt_buf_puts(out, ",\"MetricName\":");
        bt_buf_json_str(out, q[i].metric);
        bt_buf_puts(out, ",\"Dimensions\":[");
        /* mantle: AWS publishes per Model and per Project, never per pair, so a
         * route's figures are asked by Model alone (the quota is per model too) */
        dim_json(out, strcmp(q[i].ns, NS_MANTLE) == 0 ? "Model" : "ModelId", rt->model, true);
        bt_buf_printf(out, "]},\"Period\":%d,\"Stat\":", q[i].period ? q[i].period : BT_CW_PERIOD);
        bt_buf_json_str(out, q[i].stat);
        bt_buf_puts(out, "},\"ReturnData\":true");
        /* cross-account observability: the source account the metric lives in */
        if (rt->account[0]) {
            bt_buf_puts(out, ",\"AccountId\":");
            bt_buf_json_str(out, rt->account);
        }
        bt_buf_putc(out, '}');
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

void bt_cloudwatch_list_json(struct bt_buf *out, const char *next_token, bool linked,
                             const char *owning_account)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "Namespace", NS_RUNTIME);
    cJSON *dims = cJSON_AddArrayToObject(root, "Dimensions");
    cJSON *d = cJSON_CreateObject();
    cJSON_AddStringToObject(d, "Name", "ModelId");
    cJSON_AddItemToArray(dims, d);
    if (linked)
        cJSON_AddBoolToObject(root, "IncludeLinkedAccounts", true);
    if (linked && owning_account && *owning_account)
        cJSON_AddStringToObject(root, "OwningAccount", owning_account);
    if (next_token && *next_token)
        cJSON_AddStringToObject(root, "NextToken", next_token);
    put_json(out, root);
}

/* ---- response parsing ---------------------------------------------------- */

/* Epoch seconds from a JSON 1.0 timestamp: a number (maybe 1.7096244E9) or,
 * defensively, an ISO-8601 string. */
static bool json_time(const cJSON *j, int64_t *out)
{
    if (cJSON_IsNumber(j)) {
        double d = j->valuedouble;
        if (!isfinite(d) || d < 0 || d > 32503680000.0)
            return false;
        *out = (int64_t)floor(d);
        return true;
    }
    if (cJSON_IsString(j))
        return bt_parse_iso(j->valuestring, out);
    return false;
}

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

static cJSON *parse_body(const char *body, size_t len, char *err, size_t errlen)
{
    if (!body || !len) {
        snprintf(err, errlen, "empty response body");
        return NULL;
    }
    cJSON *root = cJSON_ParseWithLength(body, len);
    if (!root) {
        snprintf(err, errlen, "malformed JSON response (%zu bytes)", len);
        return NULL;
    }
    if (!cJSON_IsObject(root)) {
        snprintf(err, errlen, "response is not a JSON object");
        cJSON_Delete(root);
        return NULL;
    }
    return root;
}

static const char *str_or(const cJSON *o, const char *key, const char *dflt)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(j) ? j->valuestring : dflt;
}

bool bt_cloudwatch_parse_page(const char *body, size_t len, const struct bt_cw_sink *sink,
                              char **next_token, char *err, size_t errlen)
{
    *next_token = NULL;
    cJSON *root = parse_body(body, len, err, errlen);
    if (!root)
        return false;
    bool ok = false;
    const cJSON *results = cJSON_GetObjectItemCaseSensitive(root, "MetricDataResults");
    if (results && !cJSON_IsArray(results)) {
        snprintf(err, errlen, "MetricDataResults is not an array");
        goto out;
    }
    const cJSON *res;
    /* validate everything first so a malformed page delivers nothing */
    cJSON_ArrayForEach(res, results) {
        const cJSON *ts = cJSON_GetObjectItemCaseSensitive(res, "Timestamps");
        const cJSON *vs = cJSON_GetObjectItemCaseSensitive(res, "Values");
        const char *id = str_or(res, "Id", NULL);
        if (!id || !*id || strlen(id) > 255) {
            snprintf(err, errlen, "result without a valid Id");
            goto out;
        }
        if ((ts && !cJSON_IsArray(ts)) || (vs && !cJSON_IsArray(vs)) ||
            cJSON_GetArraySize(ts) != cJSON_GetArraySize(vs)) {
            snprintf(err, errlen, "result %.40s: Timestamps and Values differ", id);
            goto out;
        }
        const cJSON *t, *v = vs ? vs->child : NULL;
        cJSON_ArrayForEach(t, ts) {
            int64_t when;
            if (!json_time(t, &when) || !cJSON_IsNumber(v) || !isfinite(v->valuedouble)) {
                snprintf(err, errlen, "result %.40s: bad timestamp or value", id);
                goto out;
            }
            v = v->next;
        }
    }
    if (!take_token(root, next_token, err, errlen))
        goto out;
    cJSON_ArrayForEach(res, results) {
        const char *id = str_or(res, "Id", "");
        const cJSON *ts = cJSON_GetObjectItemCaseSensitive(res, "Timestamps");
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(res, "Values");
        v = v ? v->child : NULL;
        const cJSON *t;
        cJSON_ArrayForEach(t, ts) {
            int64_t when = 0;
            json_time(t, &when);
            if (sink->sample)
                sink->sample(sink->arg, id, when, v->valuedouble);
            v = v->next;
        }
        const char *code = str_or(res, "StatusCode", "Complete");
        if (strcmp(code, "Complete") != 0 && sink->status) {
            /* the first per-result message, if any, says why */
            const cJSON *msgs = cJSON_GetObjectItemCaseSensitive(res, "Messages");
            const cJSON *m0 = cJSON_IsArray(msgs) ? msgs->child : NULL;
            sink->status(sink->arg, id, code, m0 ? str_or(m0, "Value", "") : "");
        }
    }
    const cJSON *msgs = cJSON_GetObjectItemCaseSensitive(root, "Messages");
    const cJSON *m;
    if (cJSON_IsArray(msgs) && sink->message) {
        cJSON_ArrayForEach(m, msgs) {
            sink->message(sink->arg, str_or(m, "Code", ""), str_or(m, "Value", ""));
        }
    }
    ok = true;
out:
    if (!ok) {
        free(*next_token);
        *next_token = NULL;
    }
    cJSON_Delete(root);
    return ok;
}

bool bt_cloudwatch_parse_list(const char *body, size_t len,
                              void (*fn)(void *arg, const char *metric, const char *model_id,
                                         const char *account),
                              void *arg, char **next_token, char *err, size_t errlen)
{
    *next_token = NULL;
    cJSON *root = parse_body(body, len, err, errlen);
    if (!root)
        return false;
    const cJSON *metrics = cJSON_GetObjectItemCaseSensitive(root, "Metrics");
    if (metrics && !cJSON_IsArray(metrics)) {
        snprintf(err, errlen, "Metrics is not an array");
        cJSON_Delete(root);
        return false;
    }
    if (!take_token(root, next_token, err, errlen)) {
        cJSON_Delete(root);
        return false;
    }
    /* a monitoring account's answer: OwningAccounts[i] owns Metrics[i] */
    const cJSON *owners = cJSON_GetObjectItemCaseSensitive(root, "OwningAccounts");
    const cJSON *owner = cJSON_IsArray(owners) ? owners->child : NULL;
    const cJSON *m;
    cJSON_ArrayForEach(m, metrics) {
        const char *account = cJSON_IsString(owner) ? owner->valuestring : NULL;
        owner = owner ? owner->next : NULL;
        const char *name = str_or(m, "MetricName", NULL);
        const cJSON *dims = cJSON_GetObjectItemCaseSensitive(m, "Dimensions");
        const cJSON *d;
        if (!name || !cJSON_IsArray(dims))
            continue;
        cJSON_ArrayForEach(d, dims) {
            const char *dn = str_or(d, "Name", "");
            const char *dv = str_or(d, "Value", NULL);
            /* bounded: a model ID longer than a route holds is not ours */
            if (strcmp(dn, "ModelId") == 0 && dv && *dv && strlen(dv) < 192)
                fn(arg, name, dv, account);
        }
    }
    cJSON_Delete(root);
    return true;
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

int bt_cloudwatch_backfill_minutes(int64_t now, enum bt_run_mode mode, int history_minutes)
{
    int since_midnight = (int)((now - (now / 86400) * 86400) / 60) + 1;
    int want = mode == BT_MODE_ONCE ? 10 : 180;
    /* live: every minute since midnight for the daily total; check asks one-day sums */
    if (mode != BT_MODE_ONCE && since_midnight > want)
        want = since_midnight;
    if (history_minutes > 0 && want > history_minutes)
        want = history_minutes;
    return want < 1 ? 1 : want;
}

bool bt_cloudwatch_day_sums(enum bt_run_mode mode, int history_minutes, bool window)
{
    return !window && (mode == BT_MODE_ONCE || history_minutes < 1440);
}

void bt_cloudwatch_short_name(const char *model_id, char *out, size_t n)
{
    static const char *const pre[] = {"us.", "eu.", "apac.", "jp.", "au.", "global.",
                                      "us-gov.", "ca."};
    char prefix[16] = "";
    const char *p = model_id;
    for (size_t i = 0; i < BT_ARRAY_LEN(pre); i++) {
        size_t l = strlen(pre[i]);
        if (strncmp(p, pre[i], l) == 0) {
            bt_strlcpy(prefix, pre[i], sizeof prefix);
            p += l;
            break;
        }
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

/* ---- the collector -------------------------------------------------------
 * Per (profile, Region) group: ListMetrics first (cache-metric spelling,
 * again every 6 hours), then each poll sends ceil(queries / 500)
 * GetMetricData requests concurrently, follows NextToken pages from the
 * callbacks, and when every request of the group is done marks per route
 * either OK (and the newest settled minute fetched) or the first error. */

#define CW_TARGET "GraniteServiceVersion20100801."
#define CW_CTYPE "application/x-amz-json-1.0"
#define LIST_EVERY (6 * 3600)
#define LIST_RETRY 600       /* a failed ListMetrics is tried again after 10 minutes */
#define MAX_PAGES 1000       /* a pagination that never ends is an error */
#define POLL_OFFSET 10       /* poll this long after the minute boundary */
#define ALT_READ "CacheReadInputTokens"
#define ALT_WRITE "CacheWriteInputTokens"

struct cw;
struct cw_group;

struct cw_chunk {
    struct cw_group *g;
    int first, count;        /* wire queries [first, first + count) of the group's poll */
    int64_t start;
    char *token;
    int pages;
};

struct cw_group {
    struct cw *cw;
    struct bt_awsgroup *ag;
    char label[96];          /* "cloudwatch us-east-1" */
    struct bt_cw_query *q;   /* every route's queries */
    int nq;
    int nq_min;              /* q[0, nq_min): per-minute queries; the rest: one-day sums */
    /* One poll's requests: each distinct (namespace, metric, dimensions, stat,
     * period, account) once, shared by every route that needs it. wire[w] is the
     * q index sent (its Id names it), member[mfirst[w] .. + mcount[w]) the q
     * indices it answers. */
    struct bt_cw_query *wq;  /* copies of q[wire[w]], contiguous for the request body */
    int *wire, *mfirst, *mcount, *member;
    int nwire, nwire_min;
    int nfast, ndetail;      /* distinct queries of each cadence (cost) */
    int nday;                /* distinct one-day sums, asked every poll (cost) */
    bool detail_now;         /* this poll includes the detail queries */
    int64_t detail_at;       /* start of the last poll that did (0 never) */
    struct cw_chunk *chunks;
    int nchunks, outstanding;
    bool polling, listing, listed;
    int64_t listed_at;
    int64_t poll_now, poll_end;
    char *list_token;
    int list_pages;
};

/* What ListMetrics showed for a route's model. */
enum { SEEN_READ = 1, SEEN_READ_ALT = 2, SEEN_WRITE = 4, SEEN_WRITE_ALT = 8 };

struct cw {
    struct bt_ctx *ctx;
    struct bt_awsgroups ag;
    struct cw_group *g;
    int ng;
    int nroutes;
    int64_t *settled;        /* per route: newest settled minute fetched (0 none) */
    int64_t *settled_detail; /* the same for the detail queries, fetched less often */
    struct bt_cw_spelling *spell;
    unsigned *seen;
    char (*err)[224];        /* per route: first failure of the running poll */
    int *group_of;           /* per route: group index, -1 none */
    int *wire_of;            /* per (route, signal, alt) of a sent Id: its wire index */
    int64_t next;
    bool started;            /* check mode: the one poll was started */
    unsigned long requests;
};

static void cw_event(struct cw *cw, int route, enum bt_event_type type, const char *text)
{
    if (!cw->ctx->store)
        return;
    struct bt_event ev = {.t = (int64_t)time(NULL), .type = type, .route = route,
                          .source = BT_SRC_CLOUDWATCH};
    bt_strlcpy(ev.text, text ? text : "", sizeof ev.text);
    bt_store_apply(cw->ctx->store, &ev);
}

static void route_fail(struct cw *cw, int r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void route_fail(struct cw *cw, int r, const char *fmt, ...)
{
    if (r < 0 || r >= cw->nroutes || cw->err[r][0])
        return; /* the first failure says the most */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cw->err[r], sizeof cw->err[r], fmt, ap);
    va_end(ap);
}

/* Fails every route a wire query answers. */
static void wire_fail(struct cw_group *g, int w, const char *fmt, const char *a, const char *b)
{
    for (int k = g->mfirst[w]; k < g->mfirst[w] + g->mcount[w]; k++)
        route_fail(g->cw, g->q[g->member[k]].route, fmt, a, b);
}

static int wire_slot(int route, int sig, bool alt)
{
    return (route * BT_SIG_COUNT + sig) * 2 + (alt ? 1 : 0);
}

bool bt_cloudwatch_signal_detail(enum bt_signal s)
{
    return s == BT_SIG_LATENCY_P50 || s == BT_SIG_LATENCY_P90 || s == BT_SIG_LATENCY_P99 ||
           s == BT_SIG_CLIENT_ERRORS || s == BT_SIG_SERVER_ERRORS || s == BT_SIG_TTFT_AVG;
}

/* qsort context: the routes the compared queries belong to */
static const struct bt_route *key_routes;

static int key_cmp(const struct bt_cw_query *x, const struct bt_cw_query *y)
{
    const struct bt_route *rx = &key_routes[x->route], *ry = &key_routes[y->route];
    int c;
    if ((c = strcmp(x->ns, y->ns)) || (c = strcmp(x->metric, y->metric)) ||
        (c = strcmp(x->stat, y->stat)) || (c = x->period - y->period) ||
        (c = strcmp(rx->model, ry->model)) || (c = strcmp(rx->account, ry->account)))
        return c;
    return 0;
}

static const struct bt_cw_query *sort_q;
static int idx_cmp(const void *a, const void *b)
{
    int i = *(const int *)a, j = *(const int *)b;
    int c = key_cmp(&sort_q[i], &sort_q[j]);
    return c ? c : (i > j) - (i < j);
}

int bt_cloudwatch_dedup(const struct bt_route *routes, const struct bt_cw_query *q,
                        const int *idx, int n, int *rep)
{
    int *ord = bt_xcalloc((size_t)(n ? n : 1), sizeof *ord);
    memcpy(ord, idx, (size_t)n * sizeof *ord);
    key_routes = routes;
    sort_q = q;
    qsort(ord, (size_t)n, sizeof *ord, idx_cmp);
    int distinct = 0;
    for (int i = 0; i < n; i++) {
        if (i == 0 || key_cmp(&q[ord[i]], &q[ord[i - 1]]) != 0) {
            distinct++;
            rep[ord[i]] = ord[i]; /* the lowest index of its kind (ties sort by index) */
        } else {
            rep[ord[i]] = rep[ord[i - 1]];
        }
    }
    free(ord);
    return distinct;
}

/* The wire queries of q[from, to) that are due, appended to the group's poll. */
static void add_wire(struct cw_group *g, int from, int to, bool detail, int *rep, int *pos)
{
    const struct bt_route *routes = g->cw->ctx->cfg->routes;
    int *idx = bt_xcalloc((size_t)(to - from + 1), sizeof *idx);
    int n = 0;
    for (int i = from; i < to; i++)
        if (detail || !bt_cloudwatch_signal_detail(g->q[i].signal))
            idx[n++] = i;
    bt_cloudwatch_dedup(routes, g->q, idx, n, rep);
    int w0 = g->nwire;
    for (int k = 0; k < n; k++) {
        int i = idx[k];
        if (rep[i] != i)
            continue;
        pos[i] = g->nwire;
        g->wire[g->nwire] = i;
        g->wq[g->nwire] = g->q[i];
        g->mcount[g->nwire] = 0;
        g->nwire++;
    }
    for (int k = 0; k < n; k++)
        g->mcount[pos[rep[idx[k]]]]++;
    int at = g->nwire > w0 ? g->mfirst[w0] : 0;
    for (int w = w0; w < g->nwire; w++) {
        g->mfirst[w] = at;
        at += g->mcount[w];
        g->mcount[w] = 0;
    }
    for (int k = 0; k < n; k++) {
        int w = pos[rep[idx[k]]];
        g->member[g->mfirst[w] + g->mcount[w]++] = idx[k];
    }
    /* the next range's members start after these */
    if (g->nwire > w0)
        g->mfirst[g->nwire] = g->mfirst[g->nwire - 1] + g->mcount[g->nwire - 1];
    free(idx);
}

/* This poll's distinct queries: every per-minute one (the detail ones only when
 * due), then the one-day sums. */
static void build_wire(struct cw_group *g, bool detail)
{
    struct cw *cw = g->cw;
    int *rep = bt_xcalloc((size_t)g->nq + 1, sizeof *rep);
    int *pos = bt_xcalloc((size_t)g->nq + 1, sizeof *pos);
    g->nwire = 0;
    g->mfirst[0] = 0;
    g->detail_now = detail;
    add_wire(g, 0, g->nq_min, detail, rep, pos);
    g->nwire_min = g->nwire;
    add_wire(g, g->nq_min, g->nq, true, rep, pos);
    for (int w = 0; w < g->nwire; w++) {
        const struct bt_cw_query *x = &g->q[g->wire[w]];
        cw->wire_of[wire_slot(x->route, x->signal, x->alt)] = w;
    }
    free(rep);
    free(pos);
}

static void build_queries(struct cw_group *g)
{
    struct cw *cw = g->cw;
    const struct bt_route *routes = cw->ctx->cfg->routes;
    size_t cap = (size_t)g->ag->nroutes * (BT_SIG_COUNT + 4) + 1;
    free(g->q);
    g->q = bt_xcalloc(cap, sizeof *g->q);
    g->nq = 0;
    for (int i = 0; i < g->ag->nroutes; i++) {
        int r = g->ag->routes[i];
        g->nq += bt_cloudwatch_route_queries(&routes[r], r, &cw->spell[r], g->q + g->nq,
                                             BT_SIG_COUNT);
    }
    g->nq_min = g->nq;
    /* the day's token sums in one datapoint each, where the minutes since midnight
     * are not all fetched and kept (check; live with a short history) */
    if (bt_cloudwatch_day_sums(cw->ctx->mode, cw->ctx->cfg->history_minutes,
                               cw->ctx->window_to != 0)) {
        for (int i = 0; i < g->ag->nroutes; i++) {
            int r = g->ag->routes[i];
            g->nq += bt_cloudwatch_day_queries(&routes[r], r, &cw->spell[r], g->q + g->nq, 4);
        }
    }
    free(g->wq);
    free(g->wire);
    free(g->mfirst);
    free(g->mcount);
    free(g->member);
    g->wq = bt_xcalloc(cap, sizeof *g->wq);
    g->wire = bt_xcalloc(cap, sizeof *g->wire);
    g->mfirst = bt_xcalloc(cap + 1, sizeof *g->mfirst);
    g->mcount = bt_xcalloc(cap, sizeof *g->mcount);
    g->member = bt_xcalloc(cap, sizeof *g->member);
    /* the cost of each cadence, counted once per distinct query */
    build_wire(g, false);
    g->nfast = g->nwire_min;
    build_wire(g, true);
    g->ndetail = g->nwire_min - g->nfast;
    g->nday = g->nwire - g->nwire_min;
}

static void submit(struct cw_group *g, const char *op, const struct bt_buf *body, bt_http_cb cb,
                   void *arg)
{
    struct cw *cw = g->cw;
    cw->requests++;
    bt_awsgroup_submit(&cw->ag, g->ag, cw->ctx->http, "monitoring", CW_TARGET, CW_CTYPE, g->label,
                       op, body, cb, arg);
}

/* --- polling --- */

static void finish_poll(struct cw_group *g)
{
    struct cw *cw = g->cw;
    for (int i = 0; i < g->ag->nroutes; i++) {
        int r = g->ag->routes[i];
        if (cw->err[r][0]) {
            cw_event(cw, r, BT_EV_ERROR, cw->err[r]);
        } else {
            cw->settled[r] = bt_cloudwatch_settle(g->poll_now, cw->ctx->cfg->cw_lag, g->poll_end,
                                                  cw->settled[r]);
            if (g->detail_now)
                cw->settled_detail[r] = bt_cloudwatch_settle(g->poll_now, cw->ctx->cfg->cw_lag,
                                                             g->poll_end, cw->settled_detail[r]);
            cw_event(cw, r, BT_EV_OK, NULL);
            /* who it polled as (never a key), a setting event when it changes */
            const char *who = cw->ag.prov[g->ag->provider].p.creds.source;
            if (cw->ctx->store && strcmp(cw->ctx->cfg->routes[r].identity, who) != 0) {
                struct bt_event ev = {.t = (int64_t)time(NULL), .type = BT_EV_SETTING, .route = r,
                                      .source = BT_SRC_CLOUDWATCH, .setting = BT_SET_IDENTITY};
                bt_strlcpy(ev.str, who, sizeof ev.str);
                bt_store_apply(cw->ctx->store, &ev);
            }
        }
    }
    g->polling = false;
}

static void chunk_done(struct cw_chunk *c)
{
    free(c->token);
    c->token = NULL;
    if (--c->g->outstanding == 0)
        finish_poll(c->g);
}

static void chunk_fail(struct cw_chunk *c, const char *why)
{
    struct cw_group *g = c->g;
    for (int w = c->first; w < c->first + c->count; w++)
        wire_fail(g, w, "%s: %s", g->label, why);
    chunk_done(c);
}

/* The wire query an Id names in this group's poll, or -1. */
static int wire_of_id(const struct cw_group *g, const char *id, int *sig)
{
    const struct cw *cw = g->cw;
    int r;
    if (!bt_cloudwatch_parse_id(id, &r, sig) || r >= cw->nroutes ||
        cw->group_of[r] != (int)(g - cw->g))
        return -1;
    size_t l = strlen(id);
    bool alt = l > 2 && !strcmp(id + l - 2, "_a");
    int w = cw->wire_of[wire_slot(r, *sig, alt)];
    const struct bt_cw_query *x = w >= 0 && w < g->nwire ? &g->q[g->wire[w]] : NULL;
    if (!x || x->route != r || (int)x->signal != *sig || x->alt != alt)
        return -1;
    return w;
}

static void on_sample(void *arg, const char *id, int64_t t, double v)
{
    struct cw_chunk *c = arg;
    struct cw_group *g = c->g;
    struct cw *cw = g->cw;
    int s;
    int w = wire_of_id(g, id, &s);
    /* only what this group asked for, inside the window asked for */
    if (w < 0 || w < c->first || w >= c->first + c->count || t < c->start || t >= g->poll_end ||
        bt_signal_info[s].source != BT_SRC_CLOUDWATCH || !cw->ctx->store)
        return;
    for (int k = g->mfirst[w]; k < g->mfirst[w] + g->mcount[w]; k++)
        bt_store_add(cw->ctx->store,
                     &(struct bt_sample){.t = bt_minute_floor(t), .route = g->q[g->member[k]].route,
                                         .signal = (enum bt_signal)s, .value = v},
                     (int64_t)time(NULL));
}

static void on_status(void *arg, const char *id, const char *code, const char *detail)
{
    struct cw_chunk *c = arg;
    int s;
    int w = wire_of_id(c->g, id, &s);
    if (strcmp(code, "PartialData") == 0 || w < 0)
        return; /* PartialData: the rest comes with NextToken */
    const struct bt_cw_query *x = &c->g->q[c->g->wire[w]];
    char d[128], what[256];
    bt_strlcpy(d, detail, sizeof d);
    snprintf(what, sizeof what, "%s: %s for %s %s (%s)%s", c->g->label, code, x->metric, x->stat,
             c->g->cw->ctx->cfg->routes[x->route].model, d[0] ? ": " : "");
    wire_fail(c->g, w, "%s%s", what, d);
}

static void on_message(void *arg, const char *code, const char *value)
{
    struct cw_chunk *c = arg;
    if (c->g->cw->ctx->verbose) {
        /* the server's words: no escape sequence or forged line reaches the terminal */
        char sc[64], sv[512];
        fprintf(stderr, "bedtop: %s GetMetricData: %s: %s\n", c->g->label,
                bt_san_term(sc, sizeof sc, code), bt_san_term(sv, sizeof sv, value));
    }
}

static void submit_page(struct cw_chunk *c);

static void page_done(void *arg, const struct bt_http_resp *resp)
{
    struct cw_chunk *c = arg;
    char why[224];
    if (resp->status != 200) {
        bt_awsgroup_describe(resp, why, sizeof why);
        chunk_fail(c, why);
        return;
    }
    struct bt_cw_sink sink = {on_sample, on_status, on_message, c};
    char *token = NULL;
    char err[160];
    if (!bt_cloudwatch_parse_page(resp->body, resp->body_len, &sink, &token, err, sizeof err)) {
        snprintf(why, sizeof why, "GetMetricData: %s (%s)", err, resp->url ? resp->url : "");
        chunk_fail(c, why);
        return;
    }
    if (!token) {
        chunk_done(c);
        return;
    }
    if (++c->pages >= MAX_PAGES || (c->token && strcmp(c->token, token) == 0)) {
        free(token);
        chunk_fail(c, "GetMetricData pagination does not end (NextToken repeats)");
        return;
    }
    free(c->token);
    c->token = token;
    submit_page(c);
}

static void submit_page(struct cw_chunk *c)
{
    struct cw_group *g = c->g;
    struct bt_buf body = {0};
    bt_cloudwatch_request_json(&body, g->cw->ctx->cfg->routes, g->wq + c->first, c->count,
                               c->start, g->poll_end, c->token);
    bt_api_cost_metrics(g->cw->ctx->api_cost, (int64_t)time(NULL), (unsigned)c->count);
    submit(g, "GetMetricData", &body, page_done, c);
    bt_buf_free(&body);
}

/* Are the detail queries (latency percentiles, errors, time to first token) due?
 * Every detail_interval; every poll in check mode and backfills. */
static bool detail_due(const struct cw_group *g, int64_t now)
{
    const struct cw *cw = g->cw;
    double iv = cw->ctx->cfg->detail_interval;
    if (cw->ctx->mode == BT_MODE_ONCE || iv <= 0 || !g->detail_at)
        return true;
    /* polls run a little late or early on the interval grid: a few seconds' slack */
    return now - g->detail_at >= (int64_t)iv - 5;
}

static void start_poll(struct cw_group *g, int64_t now)
{
    struct cw *cw = g->cw;
    const struct bt_config *cfg = cw->ctx->cfg;
    int back = bt_cloudwatch_backfill_minutes(now, cw->ctx->mode, cfg->history_minutes);
    for (int i = 0; i < g->ag->nroutes; i++)
        cw->err[g->ag->routes[i]][0] = '\0';
    g->poll_now = now;
    g->poll_end = cw->ctx->window_to ? cw->ctx->window_to : bt_cloudwatch_end(now);
    build_wire(g, detail_due(g, now));
    if (g->detail_now)
        g->detail_at = now;
    /* per-minute queries and one-day sums go in separate requests: one StartTime each */
    int nmin = bt_cloudwatch_nrequests(g->nwire_min);
    /* in the first minute of the day there is no whole minute to sum yet */
    int nday = now % 86400 >= 60 ? bt_cloudwatch_nrequests(g->nwire - g->nwire_min) : 0;
    g->nchunks = nmin + nday;
    free(g->chunks);
    g->chunks = bt_xcalloc((size_t)(g->nchunks ? g->nchunks : 1), sizeof *g->chunks);
    for (int k = 0; k < g->nchunks; k++) {
        struct cw_chunk *c = &g->chunks[k];
        bool day = k >= nmin;
        int base = day ? g->nwire_min : 0, end = day ? g->nwire : g->nwire_min;
        c->g = g;
        c->first = base + (day ? k - nmin : k) * BT_CW_MAX_QUERIES;
        c->count = end - c->first < BT_CW_MAX_QUERIES ? end - c->first : BT_CW_MAX_QUERIES;
        if (day) {
            c->start = now - (now % 86400); /* UTC midnight: one datapoint per query */
            continue;
        }
        /* one StartTime per request: the oldest unsettled minute of what it asks;
         * detail queries reach back to their own last settled minute (backfill) */
        c->start = g->poll_end;
        for (int w = c->first; w < c->first + c->count; w++) {
            for (int m = g->mfirst[w]; m < g->mfirst[w] + g->mcount[w]; m++) {
                const struct bt_cw_query *x = &g->q[g->member[m]];
                int64_t settled = bt_cloudwatch_signal_detail(x->signal)
                                      ? cw->settled_detail[x->route]
                                      : cw->settled[x->route];
                int64_t st = cw->ctx->window_from ? cw->ctx->window_from
                                                  : bt_cloudwatch_route_start(now, settled, back);
                if (st < c->start)
                    c->start = st;
            }
        }
    }
    if (g->nchunks == 0)
        return;
    g->polling = true;
    g->outstanding = g->nchunks;
    for (int k = 0; k < g->nchunks; k++)
        submit_page(&g->chunks[k]);
}

/* --- ListMetrics: which cache-metric spelling exists --- */

static void on_metric(void *arg, const char *metric, const char *model, const char *account)
{
    struct cw_group *g = arg;
    struct cw *cw = g->cw;
    unsigned bit = strcmp(metric, bt_signal_info[BT_SIG_CACHE_READ].metric) == 0 ? SEEN_READ
                   : strcmp(metric, ALT_READ) == 0                               ? SEEN_READ_ALT
                   : strcmp(metric, bt_signal_info[BT_SIG_CACHE_WRITE].metric) == 0 ? SEEN_WRITE
                   : strcmp(metric, ALT_WRITE) == 0 ? SEEN_WRITE_ALT
                                                    : 0;
    if (!bit)
        return;
    for (int i = 0; i < g->ag->nroutes; i++) {
        int r = g->ag->routes[i];
        const struct bt_route *rt = &cw->ctx->cfg->routes[r];
        /* a route of a source account takes only that account's metrics */
        if (strcmp(rt->model, model) == 0 && (!rt->account[0] || !account ||
                                              strcmp(rt->account, account) == 0))
            cw->seen[r] |= bit;
    }
}

static void list_finish(struct cw_group *g, bool ok)
{
    struct cw *cw = g->cw;
    free(g->list_token);
    g->list_token = NULL;
    g->listing = false;
    g->listed = true;
    g->listed_at = ok ? g->poll_now : g->poll_now - LIST_EVERY + LIST_RETRY;
    if (ok) {
        for (int i = 0; i < g->ag->nroutes; i++) {
            int r = g->ag->routes[i];
            /* the table's spelling unless only the other one exists */
            cw->spell[r].cache_read =
                (cw->seen[r] & (SEEN_READ | SEEN_READ_ALT)) == SEEN_READ_ALT ? ALT_READ : NULL;
            cw->spell[r].cache_write =
                (cw->seen[r] & (SEEN_WRITE | SEEN_WRITE_ALT)) == SEEN_WRITE_ALT ? ALT_WRITE : NULL;
        }
    }
    build_queries(g);
    start_poll(g, g->poll_now);
}

static void submit_list(struct cw_group *g);

static void list_done(void *arg, const struct bt_http_resp *resp)
{
    struct cw_group *g = arg;
    char why[224];
    if (resp->status != 200) {
        bt_awsgroup_describe(resp, why, sizeof why);
        if (g->cw->ctx->verbose)
            fprintf(stderr, "bedtop: %s ListMetrics: %s\n", g->label, why);
        list_finish(g, false);
        return;
    }
    char *token = NULL;
    char err[160];
    if (!bt_cloudwatch_parse_list(resp->body, resp->body_len, on_metric, g, &token, err,
                                  sizeof err)) {
        if (g->cw->ctx->verbose)
            fprintf(stderr, "bedtop: %s ListMetrics: %s\n", g->label, err);
        list_finish(g, false);
        return;
    }
    if (!token || ++g->list_pages >= MAX_PAGES ||
        (g->list_token && strcmp(g->list_token, token) == 0)) {
        free(token);
        list_finish(g, true);
        return;
    }
    free(g->list_token);
    g->list_token = token;
    submit_list(g);
}

/* ListMetrics reaches source accounts (IncludeLinkedAccounts) when a route names
 * one, and asks only that account (OwningAccount) when every route names the same. */
static void submit_list(struct cw_group *g)
{
    const struct bt_route *routes = g->cw->ctx->cfg->routes;
    const char *owner = NULL;
    bool linked = false, one = true;
    for (int i = 0; i < g->ag->nroutes; i++) {
        const char *a = routes[g->ag->routes[i]].account;
        linked = linked || a[0];
        if (i == 0)
            owner = a;
        else if (strcmp(owner, a) != 0)
            one = false;
    }
    struct bt_buf body = {0};
    bt_cloudwatch_list_json(&body, g->list_token, linked, linked && one ? owner : NULL);
    submit(g, "ListMetrics", &body, list_done, g);
    bt_buf_free(&body);
}

static void start_list(struct cw_group *g, int64_t now)
{
    for (int i = 0; i < g->ag->nroutes; i++)
        g->cw->seen[g->ag->routes[i]] = 0;
    g->listing = true;
    g->list_pages = 0;
    g->poll_now = now;
    submit_list(g);
}

/* --- the interface --- */

static int64_t next_poll(const struct cw *cw, int64_t now)
{
    int64_t iv = (int64_t)cw->ctx->cfg->interval;
    if (iv < 10)
        iv = 10;
    /* on the interval grid, a little after the minute so the new minute is there */
    int64_t t = ((now - POLL_OFFSET) / iv + 1) * iv + POLL_OFFSET;
    return t > now ? t : now + iv;
}

static void *cw_create(struct bt_ctx *ctx)
{
    if (!ctx->http || ctx->cfg->nroutes == 0)
        return NULL;
    struct cw *cw = bt_xcalloc(1, sizeof *cw);
    cw->ctx = ctx;
    cw->nroutes = ctx->cfg->nroutes;
    bt_awsgroups_build(&cw->ag, ctx, "monitoring", false);
    cw->settled = bt_xcalloc((size_t)cw->nroutes, sizeof *cw->settled);
    cw->settled_detail = bt_xcalloc((size_t)cw->nroutes, sizeof *cw->settled_detail);
    cw->wire_of = bt_xcalloc((size_t)cw->nroutes * BT_SIG_COUNT * 2, sizeof *cw->wire_of);
    for (int i = 0; i < cw->nroutes * BT_SIG_COUNT * 2; i++)
        cw->wire_of[i] = -1;
    cw->spell = bt_xcalloc((size_t)cw->nroutes, sizeof *cw->spell);
    cw->seen = bt_xcalloc((size_t)cw->nroutes, sizeof *cw->seen);
    cw->err = bt_xcalloc((size_t)cw->nroutes, sizeof *cw->err);
    cw->group_of = bt_xcalloc((size_t)cw->nroutes, sizeof *cw->group_of);
    for (int r = 0; r < cw->nroutes; r++)
        cw->group_of[r] = -1;
    cw->ng = cw->ag.n;
    cw->g = bt_xcalloc((size_t)(cw->ng ? cw->ng : 1), sizeof *cw->g);
    for (int i = 0; i < cw->ng; i++) {
        struct cw_group *g = &cw->g[i];
        g->cw = cw;
        g->ag = &cw->ag.g[i];
        snprintf(g->label, sizeof g->label, "cloudwatch %s", g->ag->region[0] ? g->ag->region : "(no region)");
        for (int k = 0; k < g->ag->nroutes; k++)
            cw->group_of[g->ag->routes[k]] = i;
        build_queries(g);
    }
    return cw;
}

static void cw_tick(void *self, int64_t now)
{
    struct cw *cw = self;
    if (cw->ctx->mode == BT_MODE_ONCE && cw->started)
        return;
    cw->started = true;
    for (int i = 0; i < cw->ng; i++) {
        struct cw_group *g = &cw->g[i];
        if (g->polling || g->listing)
            continue; /* the previous poll is still out: never pile up */
        if (!g->ag->url[0]) {
            for (int k = 0; k < g->ag->nroutes; k++) {
                char text[224];
                snprintf(text, sizeof text, "%s: %s", g->label, g->ag->error);
                cw_event(cw, g->ag->routes[k], BT_EV_ERROR, text);
            }
            continue;
        }
        if (cw->ctx->mode == BT_MODE_ONCE) {
            /* one round trip: no ListMetrics, both cache spellings asked at once */
            for (int k = 0; k < g->ag->nroutes; k++)
                cw->spell[g->ag->routes[k]].both = true;
            build_queries(g);
            start_poll(g, now);
        } else if (!g->listed || now - g->listed_at >= LIST_EVERY) {
            start_list(g, now);
        } else {
            start_poll(g, now);
        }
    }
    cw->next = next_poll(cw, now);
}

static int64_t cw_next_due(void *self)
{
    struct cw *cw = self;
    if (cw->ctx->mode == BT_MODE_ONCE)
        return cw->started ? INT64_MAX : 0;
    return cw->next;
}

static bool cw_busy(void *self)
{
    struct cw *cw = self;
    if (cw->ctx->mode == BT_MODE_ONCE && !cw->started)
        return true;
    for (int i = 0; i < cw->ng; i++)
        if (cw->g[i].polling || cw->g[i].listing)
            return true;
    return false;
}

static void cw_destroy(void *self)
{
    struct cw *cw = self;
    if (!cw)
        return;
    for (int i = 0; i < cw->ng; i++) {
        struct cw_group *g = &cw->g[i];
        for (int k = 0; k < g->nchunks; k++)
            free(g->chunks[k].token);
        free(g->chunks);
        free(g->q);
        free(g->wq);
        free(g->wire);
        free(g->mfirst);
        free(g->mcount);
        free(g->member);
        free(g->list_token);
    }
    free(cw->g);
    bt_awsgroups_free(&cw->ag);
    free(cw->settled);
    free(cw->settled_detail);
    free(cw->wire_of);
    free(cw->spell);
    free(cw->seen);
    free(cw->err);
    free(cw->group_of);
    free(cw);
}

const struct bt_collector_ops bt_cloudwatch_collector = {
    .name = "cloudwatch",
    .create = cw_create,
    .tick = cw_tick,
    .next_due = cw_next_due,
    .busy = cw_busy,
    .destroy = cw_destroy,
};

void bt_cloudwatch_cost(void *self, double *metrics_per_poll, double *metrics_per_day)
{
    struct cw *cw = self;
    double fast = 0, detail = 0;
    for (int i = 0; cw && i < cw->ng; i++) {
        fast += cw->g[i].nfast + cw->g[i].nday;
        detail += cw->g[i].ndetail;
    }
    double iv = cw && cw->ctx->cfg->interval > 0 ? cw->ctx->cfg->interval : 60;
    double div = cw ? cw->ctx->cfg->detail_interval : 0;
    if (div < iv)
        div = iv; /* detail queries go with a poll, never more often */
    if (metrics_per_poll)
        *metrics_per_poll = fast + detail;
    if (metrics_per_day)
        *metrics_per_day = fast * 86400.0 / iv + detail * 86400.0 / div;
}

unsigned long bt_cloudwatch_requests(void *self)
{
    const struct cw *cw = self;
    return cw ? cw->requests : 0;
}

/* --- route discovery --- */

struct discover {
    struct bt_ctx *ctx;
    struct bt_awsgroup_provider prov;
    char region[32];
    char url[512];
    char *token;
    int pages;
    bool done, ok;
    char err[1536];           /* whole: a credentials message lists every source tried */
    enum bt_errkind kind;     /* what kind of failure err is */
    char (*models)[192];
    int nmodels;
};

#define MAX_DISCOVER 200

static void on_discovered(void *arg, const char *metric, const char *model, const char *account)
{
    struct discover *d = arg;
    const char *want = d->ctx->cfg->account;
    (void)metric;
    if (want[0] && account && strcmp(account, want) != 0)
        return; /* another source account's model */
    for (int i = 0; i < d->nmodels; i++)
        if (strcmp(d->models[i], model) == 0)
            return;
    if (d->nmodels < MAX_DISCOVER)
        bt_strlcpy(d->models[d->nmodels++], model, sizeof d->models[0]);
}

static void discover_submit(struct discover *d);

static void discover_done(void *arg, const struct bt_http_resp *resp)
{
    struct discover *d = arg;
    if (resp->status != 200) {
        char why[1280];
        bt_awsgroup_describe(resp, why, sizeof why);
        snprintf(d->err, sizeof d->err, "route discovery (ListMetrics %s): %s", d->region, why);
        d->kind = resp->kind;
        d->done = true;
        return;
    }
    char *token = NULL;
    char err[160];
    if (!bt_cloudwatch_parse_list(resp->body, resp->body_len, on_discovered, d, &token, err,
                                  sizeof err)) {
        snprintf(d->err, sizeof d->err, "route discovery (ListMetrics %s): %s (%s)", d->region,
                 err, resp->url ? resp->url : "");
        d->kind = BT_ERR_PARSE;
        d->done = true;
        return;
    }
    if (!token || ++d->pages >= MAX_PAGES || (d->token && strcmp(d->token, token) == 0)) {
        free(token);
        d->ok = d->done = true;
        return;
    }
    free(d->token);
    d->token = token;
    discover_submit(d);
}

static void discover_submit(struct discover *d)
{
    struct bt_buf body = {0};
    const char *acct = d->ctx->cfg->account;
    bt_cloudwatch_list_json(&body, d->token, acct[0] != '\0', acct);
    char label[96];
    snprintf(label, sizeof label, "cloudwatch %s ListMetrics", d->region);
    struct bt_http_req req = {
        .policy = &bt_aws_policy,
        .method = "POST", .url = d->url, .service = "monitoring", .region = d->region,
        .creds = &d->prov.p, .target = CW_TARGET "ListMetrics", .content_type = CW_CTYPE,
        .body = body.buf ? body.buf : "", .body_len = body.len, .label = label,
        .timeout = bt_awsgroup_timeout(),
    };
    bt_http_submit(d->ctx->http, &req, discover_done, d);
    bt_buf_free(&body);
}

int bt_cloudwatch_discover(struct bt_ctx *ctx, struct bt_config *cfg, enum bt_errkind *kind,
                           char *err, size_t errlen)
{
    *kind = BT_ERR_NONE;
    if (cfg->nroutes > 0)
        return 0;
    if (!ctx->http) {
        snprintf(err, errlen, "route discovery needs the network");
        *kind = BT_ERR_NETWORK;
        return -1;
    }
    struct discover d;
    memset(&d, 0, sizeof d);
    d.ctx = ctx;
    bt_awsgroup_route_region(ctx, NULL, d.region, sizeof d.region);
    if (!d.region[0]) {
        snprintf(err, errlen, "route discovery: no AWS Region is set; set AWS_REGION, pass "
                              "--region, or put region = under [bedtop] in the config");
        *kind = BT_ERR_REGION;
        return -1;
    }
    const char *profile = ctx->profile && *ctx->profile ? ctx->profile : cfg->profile;
    const char *ep = ctx->endpoint_url && *ctx->endpoint_url ? ctx->endpoint_url : cfg->endpoint_url;
    bt_awsgroup_provider_init(&d.prov, profile, d.region, ep);
    if (bt_aws_endpoint(&d.prov.opts, "monitoring", d.region, d.url, sizeof d.url) != 0) {
        snprintf(err, errlen, "route discovery: no CloudWatch endpoint for Region %s", d.region);
        *kind = BT_ERR_REGION;
        bt_awsgroup_provider_free(&d.prov);
        return -1;
    }
    d.models = bt_xcalloc(MAX_DISCOVER, sizeof *d.models);
    discover_submit(&d);
    /* startup, before the dashboard: wait here; http bounds every attempt */
    while (!d.done && bt_http_pending(ctx->http) > 0)
        if (bt_http_poll(ctx->http, 1000, -1, NULL) < 0)
            break;
    int added = -1;
    if (!d.done) {
        snprintf(err, errlen, "route discovery (ListMetrics %s): no answer", d.region);
        *kind = BT_ERR_NETWORK;
    } else if (!d.ok) {
        snprintf(err, errlen, "%s", d.err);
        *kind = d.kind;
    } else {
        added = 0;
        for (int i = 0; i < d.nmodels; i++) {
            char name[64], unique[64];
            bt_cloudwatch_short_name(d.models[i], name, sizeof name);
            bt_strlcpy(unique, name, sizeof unique);
            for (int k = 2; bt_config_find_route(cfg, unique) >= 0; k++)
                snprintf(unique, sizeof unique, "%.56s-%d", name, k);
            int r = bt_config_add_route(cfg, unique);
            struct bt_route *rt = &cfg->routes[r];
            bt_strlcpy(rt->model, d.models[i], sizeof rt->model);
            bt_strlcpy(rt->region, d.region, sizeof rt->region);
            rt->endpoint = BT_EP_RUNTIME;
            rt->inference = bt_inference_from_model(rt->model);
            added++;
        }
    }
    free(d.token);
    free(d.models);
    bt_awsgroup_provider_free(&d.prov);
    return added;
}
