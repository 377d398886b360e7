/* CloudWatch, the wire: GetMetricData and ListMetrics request bodies and answers
 * (JSON 1.0), query Ids, the settled-minute window and route names from model IDs. */
#include "collectors/cloudwatch.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/cw_int.h"
#include "core/json.h"

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

/* ---- GetMetricData answers, read without a tree ----------------------------
 * A page of 500 results holds some 90,000 numbers: cJSON made a node of each and
 * read each with strtod after a localeconv() call (at 20,000 routes 40 % of check's
 * instructions). Here a page is read once, left to right, into what the reader
 * needs (each result's Id, its timestamps and values, its StatusCode and first
 * message; the token; the page's messages), accepting what cJSON_ParseWithLength
 * accepts and reading every value as it does: the same grammar (bytes up to 32 are
 * blanks, a BOM is skipped, what follows the root is not read), its nesting limit,
 * its string escapes (a bad \u hex digit reads as 0, as cJSON's parse_hex4 has it)
 * and its numbers: the whole run of [0-9+-eE.] after a '-' or a digit (Debian's
 * 1.7.15 with the CVE-2023-26819 fix: no length limit, a malloc a number),
 * a plain decimal of at most 19 digits and an exponent within 10^22 computed
 * exactly (one IEEE operation on exact operands: what strtod rounds to), anything
 * else through strtod with the locale's decimal point, read once a page. Where a
 * key repeats, the first one counts (cJSON_GetObjectItemCaseSensitive). */

#define JR_NESTING 1000 /* CJSON_NESTING_LIMIT */
#define JR_NONE ((size_t)-1)

struct jr {
    const unsigned char *p, *end;
    int depth;
    char dp;            /* the locale's decimal point, for strtod */
    struct bt_buf pool; /* decoded strings, each ending in '\0' */
};

static void jr_ws(struct jr *r)
{
    while (r->p < r->end && *r->p <= 32)
        r->p++;
}

static bool jr_at(const struct jr *r, char c)
{
    return r->p < r->end && *r->p == (unsigned char)c;
}

static unsigned hex4(const unsigned char *h)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        unsigned c = h[i], d;
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            d = c - 'A' + 10;
        else
            return 0;
        v = v << 4 | d;
    }
    return v;
}

/* A string at r->p, decoded onto the pool (*off: where; off NULL: checked, not kept) */
static bool jr_string(struct jr *r, size_t *off)
{
    if (!jr_at(r, '"'))
        return false;
    const unsigned char *s = r->p + 1, *e = s;
    while (e < r->end && *e != '"') {
        if (*e == '\\') {
            if (e + 1 >= r->end)
                return false;
            e++;
        }
        e++;
    }
    if (e >= r->end)
        return false;
    struct bt_buf *b = &r->pool;
    size_t at = b->len;
    for (const unsigned char *q = s; q < e;) {
        const unsigned char *plain = q;
        while (q < e && *q != '\\')
            q++;
        if (off)
            bt_buf_add(b, plain, (size_t)(q - plain));
        if (q >= e)
            break;
        char c = 0;
        switch (q[1]) {
        case 'b': c = '\b'; break;
        case 'f': c = '\f'; break;
        case 'n': c = '\n'; break;
        case 'r': c = '\r'; break;
        case 't': c = '\t'; break;
        case '"': case '\\': case '/': c = (char)q[1]; break;
        case 'u': {
            if (e - q < 6)
                return false;
            unsigned cp = hex4(q + 2);
            int n = 6;
            if (cp >= 0xDC00 && cp <= 0xDFFF)
                return false;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                const unsigned char *q2 = q + 6;
                if (e - q2 < 6 || q2[0] != '\\' || q2[1] != 'u')
                    return false;
                unsigned lo = hex4(q2 + 2);
                if (lo < 0xDC00 || lo > 0xDFFF)
                    return false;
                cp = 0x10000 + (((cp & 0x3FF) << 10) | (lo & 0x3FF));
                n = 12;
            }
            unsigned char u[4];
            size_t k;
            if (cp < 0x80) {
                u[0] = (unsigned char)cp, k = 1;
            } else if (cp < 0x800) {
                u[0] = (unsigned char)(0xC0 | cp >> 6), u[1] = (unsigned char)(0x80 | (cp & 0x3F)), k = 2;
            } else if (cp < 0x10000) {
                u[0] = (unsigned char)(0xE0 | cp >> 12), u[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
                u[2] = (unsigned char)(0x80 | (cp & 0x3F)), k = 3;
            } else {
                u[0] = (unsigned char)(0xF0 | cp >> 18), u[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3F));
                u[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3F)), u[3] = (unsigned char)(0x80 | (cp & 0x3F));
                k = 4;
            }
            if (off)
                bt_buf_add(b, u, k);
            q += n;
            continue;
        }
        default:
            return false;
        }
        if (off)
            bt_buf_putc(b, c);
        q += 2;
    }
    if (off) {
        bt_buf_putc(b, '\0');
        *off = at;
    }
    r->p = e + 1;
    return true;
}

static bool is_num_char(unsigned char c)
{
    return (c >= '0' && c <= '9') || c == '+' || c == '-' || c == 'e' || c == 'E' || c == '.';
}

/* A plain decimal from s (sign, digits, fraction, exponent) read exactly: where it
 * ends, or NULL when it has more than 19 digits, a value past 2^53 or a power of
 * ten past 10^22 (strtod
 * reads it then). Where it ends is not checked here (see jr_number). */
static const unsigned char *exact_decimal(const unsigned char *s, const unsigned char *end,
                                          double *out)
{
    static const double p10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                   1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                   1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    const unsigned char *p = s;
    bool neg = p < end && *p == '-';
    p += neg;
    /* at most 19 digits in all (leading zeros counted: rarer than a lost fast path
     * is costly), so w never wraps */
    unsigned long long w = 0;
    const unsigned char *d0 = p;
    for (; p < end && (unsigned)(*p - '0') < 10; p++)
        w = w * 10 + (unsigned)(*p - '0');
    if (p == d0)
        return NULL;
    ptrdiff_t nd = p - d0, frac = 0;
    if (p < end && *p == '.') {
        const unsigned char *f0 = ++p;
        for (; p < end && (unsigned)(*p - '0') < 10; p++)
            w = w * 10 + (unsigned)(*p - '0');
        frac = p - f0;
        nd += frac;
    }
    if (nd > 19)
        return NULL;
    int ex = 0;
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        bool eneg = false;
        if (p < end && (*p == '+' || *p == '-'))
            eneg = *p++ == '-';
        const unsigned char *e0 = p;
        for (; p < end && *p >= '0' && *p <= '9'; p++)
            if (ex < 1000)
                ex = ex * 10 + (*p - '0');
        if (p == e0)
            return NULL;
        if (eneg)
            ex = -ex;
    }
    int k = ex - (int)frac;
    if (w > (1ull << 53) || k < -22 || k > 22)
        return NULL;
    double v = (double)w;
    v = k < 0 ? v / p10[-k] : v * p10[k];
    *out = neg ? -v : v;
    return p;
}

static bool jr_number(struct jr *r, double *out)
{
    /* exact when the plain decimal is the whole run of number bytes (cJSON's strtod
     * would read the same run, to the same double) */
    const unsigned char *stop = exact_decimal(r->p, r->end, out);
    if (stop && (stop == r->end || !is_num_char(*stop))) {
        r->p = stop;
        return true;
    }
    size_t n = 0;
    while (r->p + n < r->end && is_num_char(r->p[n]))
        n++;
    char stack[64], *buf = n < sizeof stack ? stack : bt_xmalloc(n + 1);
    for (size_t i = 0; i < n; i++)
        buf[i] = r->p[i] == '.' ? r->dp : (char)r->p[i];
    buf[n] = '\0';
    char *e;
    *out = strtod(buf, &e);
    size_t used = (size_t)(e - buf);
    if (buf != stack)
        free(buf);
    if (!used)
        return false;
    r->p += used;
    return true;
}

enum jr_kind { JR_BAD, JR_NULL, JR_BOOL, JR_NUMBER, JR_STRING, JR_ARRAY, JR_OBJECT };

static enum jr_kind jr_peek(const struct jr *r)
{
    if (r->p >= r->end)
        return JR_BAD;
    size_t left = (size_t)(r->end - r->p);
    switch (*r->p) {
    case 'n':
        return left >= 4 && !memcmp(r->p, "null", 4) ? JR_NULL : JR_BAD;
    case 'f':
        return left >= 5 && !memcmp(r->p, "false", 5) ? JR_BOOL : JR_BAD;
    case 't':
        return left >= 4 && !memcmp(r->p, "true", 4) ? JR_BOOL : JR_BAD;
    case '"':
        return JR_STRING;
    case '[':
        return JR_ARRAY;
    case '{':
        return JR_OBJECT;
    default:
        return *r->p == '-' || (*r->p >= '0' && *r->p <= '9') ? JR_NUMBER : JR_BAD;
    }
}

/* An array or object: its '[' or '{', each item through item() (an object's key
 * first, read onto the pool: *key), up to its ']' or '}'. */
static bool jr_items(struct jr *r, bool obj, bool (*item)(struct jr *r, void *arg, size_t key, int i),
                     void *arg)
{
    if (r->depth >= JR_NESTING)
        return false;
    r->depth++;
    r->p++;
    jr_ws(r);
    if (jr_at(r, obj ? '}' : ']')) {
        r->p++;
        r->depth--;
        return true;
    }
    for (int i = 0;; i++) {
        size_t key = JR_NONE, mark = r->pool.len;
        if (obj) {
            if (!jr_string(r, &key))
                return false;
            jr_ws(r);
            if (!jr_at(r, ':'))
                return false;
            r->p++;
            jr_ws(r);
        }
        if (!item(r, arg, key, i))
            return false;
        if (obj && key != JR_NONE && r->pool.len == key + strlen(r->pool.buf + key) + 1)
            r->pool.len = mark; /* a key nobody kept */
        jr_ws(r);
        if (jr_at(r, ',')) {
            r->p++;
            jr_ws(r);
            continue;
        }
        if (!jr_at(r, obj ? '}' : ']'))
            return false;
        r->p++;
        r->depth--;
        return true;
    }
}

static bool skip_item(struct jr *r, void *arg, size_t key, int i);

/* Any value, checked and dropped */
static bool jr_skip(struct jr *r)
{
    double d;
    switch (jr_peek(r)) {
    case JR_NULL:
    case JR_BOOL:
        r->p += *r->p == 'f' ? 5 : 4;
        return true;
    case JR_NUMBER:
        return jr_number(r, &d);
    case JR_STRING:
        return jr_string(r, NULL);
    case JR_ARRAY:
        return jr_items(r, false, skip_item, NULL);
    case JR_OBJECT:
        return jr_items(r, true, skip_item, NULL);
    default:
        return false;
    }
}

static bool skip_item(struct jr *r, void *arg, size_t key, int i)
{
    (void)arg, (void)key, (void)i;
    return jr_skip(r);
}

/* A string value kept on the pool (*off), JR_NONE when the value is another kind */
static bool jr_string_or_none(struct jr *r, size_t *off)
{
    *off = JR_NONE;
    return jr_peek(r) == JR_STRING ? jr_string(r, off) : jr_skip(r);
}

struct gmd_t {
    int64_t when;
    bool ok;
};
struct gmd_v {
    double v;
    bool ok;
};
enum { GMD_ABSENT, GMD_ARRAY, GMD_OTHER };  /* a value the reader wants an array */
enum { TOK_ABSENT, TOK_STRING, TOK_NULL, TOK_OTHER }; /* NextToken */
struct gmd_res {
    size_t id, code, msg0; /* pool offsets; JR_NONE: absent or not a string */
    bool has_msg0;         /* Messages is an array with a first item */
    unsigned char has_id, has_code, has_msgs, ts_kind, vs_kind;
    size_t t0, nt, v0, nv; /* into the page's timestamps and values */
};
struct gmd {
    struct gmd_res *res;
    size_t nres, cap_res;
    struct gmd_t *ts;
    size_t nts, cap_ts;
    struct gmd_v *vs;
    size_t nvs, cap_vs;
    size_t *msgs;          /* the page's Messages: Code and Value offsets, in pairs */
    size_t nmsgs, cap_msgs;
    unsigned char results_kind, token_kind, has_msgs;
    size_t token;
    struct gmd_res *cur;
};

#define GROW(p, n, cap)                                                                   \
    do {                                                                                  \
        if ((n) == (cap)) {                                                               \
            (cap) = (cap) ? (cap) * 2 : 64;                                               \
            (p) = bt_xrealloc((p), (cap) * sizeof *(p));                                  \
        }                                                                                 \
    } while (0)

/* One timestamp: a number of epoch seconds or, defensively, an ISO-8601 string */
static bool ts_value(struct jr *r, struct gmd_t *t)
{
    t->ok = false;
    t->when = 0;
    enum jr_kind k = jr_peek(r);
    if (k == JR_NUMBER) {
        double d;
        if (!jr_number(r, &d))
            return false;
        t->ok = isfinite(d) && d >= 0 && d <= 32503680000.0;
        t->when = t->ok ? (int64_t)floor(d) : 0;
        return true;
    }
    if (k == JR_STRING) {
        size_t off, mark = r->pool.len;
        if (!jr_string(r, &off))
            return false;
        t->ok = bt_parse_iso(r->pool.buf + off, &t->when);
        r->pool.len = mark;
        return true;
    }
    return jr_skip(r);
}

/* One value: a finite number */
static bool vs_value(struct jr *r, struct gmd_v *v)
{
    v->ok = false;
    v->v = 0;
    if (jr_peek(r) != JR_NUMBER)
        return jr_skip(r);
    if (!jr_number(r, &v->v))
        return false;
    v->ok = isfinite(v->v);
    return true;
}

/* A result's Timestamps or Values: jr_items' grammar, written out for the ~180
 * numbers of each (the page's bulk) */
static bool jr_series(struct jr *r, struct gmd *g, bool ts)
{
    if (r->depth >= JR_NESTING)
        return false;
    r->p++;
    jr_ws(r);
    if (jr_at(r, ']')) {
        r->p++;
        return true;
    }
    r->depth++;
    for (;;) {
        bool ok;
        if (ts) {
            GROW(g->ts, g->nts, g->cap_ts);
            ok = ts_value(r, &g->ts[g->nts++]);
        } else {
            GROW(g->vs, g->nvs, g->cap_vs);
            ok = vs_value(r, &g->vs[g->nvs++]);
        }
        if (!ok)
            return false;
        jr_ws(r);
        if (jr_at(r, ',')) {
            r->p++;
            jr_ws(r);
            continue;
        }
        if (!jr_at(r, ']'))
            return false;
        r->p++;
        r->depth--;
        return true;
    }
}

/* A message object's Code and Value (str_or's "" for absent or not a string) */
struct gmd_msg {
    size_t code, value;
    bool has_code, has_value;
};

static bool msg_member(struct jr *r, void *arg, size_t key, int i)
{
    (void)i;
    struct gmd_msg *m = arg;
    const char *k = r->pool.buf + key;
    if (!strcmp(k, "Code") && !m->has_code) {
        m->has_code = true;
        return jr_string_or_none(r, &m->code);
    }
    if (!strcmp(k, "Value") && !m->has_value) {
        m->has_value = true;
        return jr_string_or_none(r, &m->value);
    }
    return jr_skip(r);
}

static bool jr_msg(struct jr *r, struct gmd_msg *m)
{
    memset(m, 0, sizeof *m);
    m->code = m->value = JR_NONE;
    return jr_peek(r) == JR_OBJECT ? jr_items(r, true, msg_member, m) : jr_skip(r);
}

static bool res_msg_item(struct jr *r, void *arg, size_t key, int i)
{
    (void)key;
    struct gmd_res *res = arg;
    if (i > 0)
        return jr_skip(r);
    struct gmd_msg m;
    if (!jr_msg(r, &m))
        return false;
    res->has_msg0 = true;
    res->msg0 = m.value;
    return true;
}

static bool res_member(struct jr *r, void *arg, size_t key, int i)
{
    (void)i;
    struct gmd *g = arg;
    struct gmd_res *res = g->cur;
    const char *k = r->pool.buf + key;
    enum jr_kind kind = jr_peek(r);
    if (!strcmp(k, "Id") && !res->has_id) {
        res->has_id = true;
        return jr_string_or_none(r, &res->id);
    }
    if (!strcmp(k, "StatusCode") && !res->has_code) {
        res->has_code = true;
        return jr_string_or_none(r, &res->code);
    }
    if (!strcmp(k, "Timestamps") && !res->ts_kind) {
        res->ts_kind = kind == JR_ARRAY ? GMD_ARRAY : GMD_OTHER;
        res->t0 = g->nts;
        bool ok = kind == JR_ARRAY ? jr_series(r, g, true) : jr_skip(r);
        res->nt = g->nts - res->t0;
        return ok;
    }
    if (!strcmp(k, "Values") && !res->vs_kind) {
        res->vs_kind = kind == JR_ARRAY ? GMD_ARRAY : GMD_OTHER;
        res->v0 = g->nvs;
        bool ok = kind == JR_ARRAY ? jr_series(r, g, false) : jr_skip(r);
        res->nv = g->nvs - res->v0;
        return ok;
    }
    if (!strcmp(k, "Messages") && !res->has_msgs) {
        res->has_msgs = true;
        return kind == JR_ARRAY ? jr_items(r, false, res_msg_item, res) : jr_skip(r);
    }
    return jr_skip(r);
}

static bool result_item(struct jr *r, void *arg, size_t key, int i)
{
    (void)key, (void)i;
    struct gmd *g = arg;
    GROW(g->res, g->nres, g->cap_res);
    struct gmd_res *res = &g->res[g->nres++];
    memset(res, 0, sizeof *res);
    res->id = res->code = res->msg0 = JR_NONE;
    if (jr_peek(r) != JR_OBJECT)
        return jr_skip(r);
    g->cur = res;
    return jr_items(r, true, res_member, g);
}

static bool page_msg_item(struct jr *r, void *arg, size_t key, int i)
{
    (void)key, (void)i;
    struct gmd *g = arg;
    struct gmd_msg m;
    if (!jr_msg(r, &m))
        return false;
    if (g->nmsgs + 2 > g->cap_msgs) {
        g->cap_msgs = g->cap_msgs ? g->cap_msgs * 2 : 16;
        g->msgs = bt_xrealloc(g->msgs, g->cap_msgs * sizeof *g->msgs);
    }
    g->msgs[g->nmsgs++] = m.code;
    g->msgs[g->nmsgs++] = m.value;
    return true;
}

static bool root_member(struct jr *r, void *arg, size_t key, int i)
{
    (void)i;
    struct gmd *g = arg;
    const char *k = r->pool.buf + key;
    enum jr_kind kind = jr_peek(r);
    if (!strcmp(k, "MetricDataResults") && !g->results_kind) {
        g->results_kind = kind == JR_ARRAY ? GMD_ARRAY : GMD_OTHER;
        return kind == JR_ARRAY ? jr_items(r, false, result_item, g) : jr_skip(r);
    }
    if (!strcmp(k, "NextToken") && !g->token_kind) {
        g->token_kind = kind == JR_NULL ? TOK_NULL : kind == JR_STRING ? TOK_STRING : TOK_OTHER;
        return jr_string_or_none(r, &g->token);
    }
    if (!strcmp(k, "Messages") && !g->has_msgs) {
        g->has_msgs = true;
        return kind == JR_ARRAY ? jr_items(r, false, page_msg_item, g) : jr_skip(r);
    }
    return jr_skip(r);
}

static void gmd_free(struct gmd *g, struct jr *r)
{
    free(g->res);
    free(g->ts);
    free(g->vs);
    free(g->msgs);
    bt_buf_free(&r->pool);
}

static const char *pool_or(const struct jr *r, size_t off, const char *dflt)
{
    return off == JR_NONE ? dflt : r->pool.buf + off;
}

/* False with err set for the first thing wrong, in the order the page is checked */
static bool gmd_check(const struct gmd *g, const struct jr *r, char *err, size_t errlen)
{
    if (g->results_kind == GMD_OTHER) {
        snprintf(err, errlen, "MetricDataResults is not an array");
        return false;
    }
    for (size_t k = 0; k < g->nres; k++) {
        const struct gmd_res *res = &g->res[k];
        const char *id = pool_or(r, res->id, NULL);
        if (!id || !*id || strlen(id) > 255) {
            snprintf(err, errlen, "result without a valid Id");
            return false;
        }
        if (res->ts_kind == GMD_OTHER || res->vs_kind == GMD_OTHER || res->nt != res->nv) {
            snprintf(err, errlen, "result %.40s: Timestamps and Values differ", id);
            return false;
        }
        for (size_t j = 0; j < res->nt; j++)
            if (!g->ts[res->t0 + j].ok || !g->vs[res->v0 + j].ok) {
                snprintf(err, errlen, "result %.40s: bad timestamp or value", id);
                return false;
            }
    }
    if (g->token_kind == TOK_OTHER) {
        snprintf(err, errlen, "NextToken is not a string");
        return false;
    }
    const char *tok = g->token_kind == TOK_STRING ? pool_or(r, g->token, "") : "";
    if (strlen(tok) > MAX_TOKEN_LEN) {
        snprintf(err, errlen, "NextToken longer than %d bytes", MAX_TOKEN_LEN);
        return false;
    }
    return true;
}

bool bt_cloudwatch_parse_page(const char *body, size_t len, const struct bt_cw_sink *sink,
                              char **next_token, char *err, size_t errlen)
{
    *next_token = NULL;
    if (!body || !len) {
        snprintf(err, errlen, "empty response body");
        return false;
    }
    struct jr r = {.p = (const unsigned char *)body, .end = (const unsigned char *)body + len,
                   .dp = localeconv()->decimal_point[0]};
    struct gmd g;
    memset(&g, 0, sizeof g);
    g.token = JR_NONE;
    if (len >= 5 && !memcmp(body, "\xEF\xBB\xBF", 3)) /* cJSON's skip_utf8_bom */
        r.p += 3;
    jr_ws(&r);
    bool object = jr_peek(&r) == JR_OBJECT;
    bool parsed = object ? jr_items(&r, true, root_member, &g) : jr_skip(&r);
    if (!parsed || !object) {
        if (!parsed)
            snprintf(err, errlen, "malformed JSON response (%zu bytes)", len);
        else
            snprintf(err, errlen, "response is not a JSON object");
        gmd_free(&g, &r);
        return false;
    }
    /* validate everything first so a malformed page delivers nothing */
    if (!gmd_check(&g, &r, err, errlen)) {
        gmd_free(&g, &r);
        return false;
    }
    const char *tok = g.token_kind == TOK_STRING ? pool_or(&r, g.token, "") : "";
    if (*tok)
        *next_token = bt_xstrdup(tok);
    for (size_t k = 0; k < g.nres; k++) {
        const struct gmd_res *res = &g.res[k];
        const char *id = pool_or(&r, res->id, "");
        if (sink->sample)
            for (size_t j = 0; j < res->nt; j++)
                sink->sample(sink->arg, id, g.ts[res->t0 + j].when, g.vs[res->v0 + j].v);
        const char *code = pool_or(&r, res->code, "Complete");
        if (strcmp(code, "Complete") != 0 && sink->status)
            /* the first per-result message, if any, says why */
            sink->status(sink->arg, id, code, res->has_msg0 ? pool_or(&r, res->msg0, "") : "");
    }
    if (sink->message)
        for (size_t k = 0; k + 1 < g.nmsgs; k += 2)
            sink->message(sink->arg, pool_or(&r, g.msgs[k], ""), pool_or(&r, g.msgs[k + 1], ""));
    gmd_free(&g, &r);
    return true;
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

