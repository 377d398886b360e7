/* CloudWatch, the wire: a GetMetricData answer, one page read left to right without a
 * JSON tree into the samples, statuses, messages and NextToken it delivers. */
#include "collectors/cw_page.h"

#include <locale.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/cw_int.h"
#include "core/util.h"

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
