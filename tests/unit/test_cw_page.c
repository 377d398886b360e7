/* bt_cloudwatch_parse_page (collectors/cw_page.c) reads a GetMetricData page without
 * a cJSON tree. What it delivers must be what the cJSON reading delivered, for every
 * input: the same samples (the same doubles, bit for bit), statuses, messages and
 * token, and the same error where the page is refused. The reference below is that
 * reading as 1d9533e had it (cJSON_ParseWithLength, then the same checks), run on
 * the same bytes: hand-made pages for each rule (key order, repeated keys, escapes,
 * surrogates, number forms, nesting, a BOM, what follows the root), then generated
 * pages and thousands of mutations of them (bytes flipped, cut, doubled). */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/cloudwatch.h"
#include "core/util.h"
#include "tests/tap.h"

/* ---- the reference: 1d9533e's reading, on cJSON ---------------------------- */

static bool ref_time(const cJSON *j, int64_t *out)
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

static const char *ref_str_or(const cJSON *o, const char *key, const char *dflt)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(j) ? j->valuestring : dflt;
}

static bool ref_parse(const char *body, size_t len, const struct bt_cw_sink *sink,
                      char **next_token, char *err, size_t errlen)
{
    *next_token = NULL;
    if (!body || !len) {
        snprintf(err, errlen, "empty response body");
        return false;
    }
    cJSON *root = cJSON_ParseWithLength(body, len);
    if (!root) {
        snprintf(err, errlen, "malformed JSON response (%zu bytes)", len);
        return false;
    }
    bool ok = false;
    if (!cJSON_IsObject(root)) {
        snprintf(err, errlen, "response is not a JSON object");
        goto out;
    }
    const cJSON *results = cJSON_GetObjectItemCaseSensitive(root, "MetricDataResults");
    if (results && !cJSON_IsArray(results)) {
        snprintf(err, errlen, "MetricDataResults is not an array");
        goto out;
    }
    const cJSON *res;
    cJSON_ArrayForEach(res, results) {
        const cJSON *ts = cJSON_GetObjectItemCaseSensitive(res, "Timestamps");
        const cJSON *vs = cJSON_GetObjectItemCaseSensitive(res, "Values");
        const char *id = ref_str_or(res, "Id", NULL);
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
            if (!ref_time(t, &when) || !cJSON_IsNumber(v) || !isfinite(v->valuedouble)) {
                snprintf(err, errlen, "result %.40s: bad timestamp or value", id);
                goto out;
            }
            v = v->next;
        }
    }
    const cJSON *nt = cJSON_GetObjectItemCaseSensitive(root, "NextToken");
    if (nt && !cJSON_IsNull(nt)) {
        if (!cJSON_IsString(nt)) {
            snprintf(err, errlen, "NextToken is not a string");
            goto out;
        }
        if (strlen(nt->valuestring) > 4096) {
            snprintf(err, errlen, "NextToken longer than %d bytes", 4096);
            goto out;
        }
        if (*nt->valuestring)
            *next_token = bt_xstrdup(nt->valuestring);
    }
    cJSON_ArrayForEach(res, results) {
        const char *id = ref_str_or(res, "Id", "");
        const cJSON *ts = cJSON_GetObjectItemCaseSensitive(res, "Timestamps");
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(res, "Values");
        v = v ? v->child : NULL;
        const cJSON *t;
        cJSON_ArrayForEach(t, ts) {
            int64_t when = 0;
            ref_time(t, &when);
            sink->sample(sink->arg, id, when, v->valuedouble);
            v = v->next;
        }
        const char *code = ref_str_or(res, "StatusCode", "Complete");
        if (strcmp(code, "Complete") != 0) {
            const cJSON *msgs = cJSON_GetObjectItemCaseSensitive(res, "Messages");
            const cJSON *m0 = cJSON_IsArray(msgs) ? msgs->child : NULL;
            sink->status(sink->arg, id, code, m0 ? ref_str_or(m0, "Value", "") : "");
        }
    }
    const cJSON *msgs = cJSON_GetObjectItemCaseSensitive(root, "Messages");
    const cJSON *m;
    if (cJSON_IsArray(msgs))
        cJSON_ArrayForEach(m, msgs) sink->message(sink->arg, ref_str_or(m, "Code", ""),
                                                  ref_str_or(m, "Value", ""));
    ok = true;
out:
    if (!ok) {
        free(*next_token);
        *next_token = NULL;
    }
    cJSON_Delete(root);
    return ok;
}

/* ---- what each delivers, as one text ---------------------------------------- */

static void on_sample(void *arg, const char *id, int64_t t, double v)
{
    bt_buf_printf(arg, "S %s %lld %a\n", id, (long long)t, v);
}

static void on_status(void *arg, const char *id, const char *code, const char *detail)
{
    bt_buf_printf(arg, "T %s %s %s\n", id, code, detail);
}

static void on_message(void *arg, const char *code, const char *value)
{
    bt_buf_printf(arg, "M %s %s\n", code, value);
}

typedef bool (*parse_fn)(const char *, size_t, const struct bt_cw_sink *, char **, char *, size_t);

static void run(parse_fn f, const char *body, size_t len, struct bt_buf *log)
{
    bt_buf_reset(log);
    struct bt_cw_sink sink = {on_sample, on_status, on_message, log};
    char *tok = NULL, err[256] = "";
    /* the body as it arrives: len bytes, no terminator after them */
    char *copy = bt_xmalloc(len ? len : 1);
    memcpy(copy, body, len);
    bool ok = f(copy, len, &sink, &tok, err, sizeof err);
    free(copy);
    if (ok)
        bt_buf_printf(log, "OK token=%s\n", tok ? tok : "(none)");
    else
        bt_buf_printf(log, "ERR %s\n", err);
    free(tok);
}

static int ncases, nbad;

static bool same(const char *body, size_t len, const char *what)
{
    static struct bt_buf a, b;
    run(bt_cloudwatch_parse_page, body, len, &a);
    run(ref_parse, body, len, &b);
    ncases++;
    bool ok = !strcmp(bt_buf_str(&a), bt_buf_str(&b));
    if (!ok && nbad++ < 5)
        printf("# %s: %.*s\n# got:  %.300s\n# want: %.300s\n", what, (int)(len < 200 ? len : 200),
               body, bt_buf_str(&a), bt_buf_str(&b));
    return ok;
}

static bool same_s(const char *body, const char *what)
{
    return same(body, strlen(body), what);
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return rng;
}

/* A number in one of the forms a page (or a hostile one) may write */
static void put_number(struct bt_buf *b)
{
    uint64_t x = next();
    switch (x % 12) {
    case 0: bt_buf_printf(b, "%llu", (unsigned long long)(x >> 20)); break;
    case 1: bt_buf_printf(b, "%.17g", (double)(x >> 11) / 9007199254740992.0 * 1e6); break;
    case 2: bt_buf_printf(b, "%.3f", (double)(x >> 30) / 1000.0); break;
    case 3: bt_buf_printf(b, "%.7E", (double)(x >> 12)); break;
    case 4: bt_buf_printf(b, "-%llu.%llu", (unsigned long long)(x >> 50), (unsigned long long)(x >> 44)); break;
    case 5: bt_buf_printf(b, "%llue%d", (unsigned long long)(x >> 58), (int)(x >> 40 & 63) - 32); break;
    case 6: bt_buf_printf(b, "%.25g", (double)x * 1e-300); break;
    case 7: bt_buf_printf(b, "%llu%llu", (unsigned long long)x, (unsigned long long)(x >> 3)); break;
    case 8: bt_buf_puts(b, (const char *[]){"0", "-0", "0.0", "1.", "01", "1e400", "-1e-400",
                                            "9007199254740993", "1.7096244E9", "5e-324"}[x >> 60 & 7]); break;
    case 9: bt_buf_printf(b, "%lld", (long long)(x >> 34) - (1ll << 29)); break;
    case 10: bt_buf_printf(b, "%.1f", (double)(x >> 40)); break;
    default: bt_buf_printf(b, "1796%06llu", (unsigned long long)(x % 1000000)); break;
    }
}

static void gen_page(struct bt_buf *b)
{
    bt_buf_reset(b);
    bt_buf_puts(b, next() % 5 ? "{\"MetricDataResults\":[" : "\xEF\xBB\xBF { \"Messages\":[{\"Code\":\"c\",\"Value\":\"v\"}], \"MetricDataResults\" : [ ");
    int nres = (int)(next() % 6);
    for (int i = 0; i < nres; i++) {
        if (i)
            bt_buf_puts(b, ",");
        int n = (int)(next() % 5);
        bool id_last = next() % 3 == 0;
        bt_buf_puts(b, "{");
        if (!id_last)
            bt_buf_printf(b, "\"Id\":\"q%d_%d\",", i, (int)(next() % 100));
        bt_buf_puts(b, "\"Label\":\"l\\u00e9\\\"x\",\"Timestamps\":[");
        for (int k = 0; k < n; k++) {
            if (k)
                bt_buf_puts(b, ",");
            if (next() % 7 == 0)
                bt_buf_puts(b, "\"2026-12-02T10:00:00Z\"");
            else
                put_number(b);
        }
        bt_buf_puts(b, "],\t\"Values\":\n[");
        for (int k = 0; k < n; k++) {
            if (k)
                bt_buf_puts(b, " , ");
            put_number(b);
        }
        bt_buf_printf(b, "],\"StatusCode\":\"%s\"", next() % 4 ? "Complete" : "PartialData");
        if (next() % 3 == 0)
            bt_buf_puts(b, ",\"Messages\":[{\"Code\":\"ArithmeticError\",\"Value\":\"x\\ud83d\\ude00y\"},{}]");
        if (id_last)
            bt_buf_printf(b, ",\"Id\":\"last%d\"", i);
        bt_buf_puts(b, "}");
    }
    bt_buf_puts(b, "]");
    if (next() % 3 == 0)
        bt_buf_printf(b, ",\"NextToken\":\"tok%d\"", (int)(next() % 1000));
    bt_buf_puts(b, next() % 4 ? ",\"Messages\":[]}" : "}   trailing");
}

int main(void)
{
    /* each rule by hand */
    static const char *const hand[] = {
        "{\"MetricDataResults\":[{\"Id\":\"a\",\"Timestamps\":[1796205600,1796205660],"
        "\"Values\":[1800,0.25],\"StatusCode\":\"Complete\"}],\"Messages\":[]}",
        /* keys in any order, Id after the arrays; repeated keys: the first counts */
        "{\"MetricDataResults\":[{\"Values\":[1],\"Timestamps\":[60],\"Id\":\"late\",\"Id\":\"x\"}],"
        "\"MetricDataResults\":5}",
        "{\"NextToken\":\"t1\",\"NextToken\":5,\"MetricDataResults\":[]}",
        "{\"NextToken\":null}", "{\"NextToken\":\"\"}", "{\"NextToken\":7}", "{\"NextToken\":[]}",
        "{\"MetricDataResults\":null}", "{\"MetricDataResults\":{}}", "{}", "[]", "5", "\"s\"",
        "null", "", " ", "{", "{\"a\":}", "{\"a\":1,}", "[1,]", "{\"a\" 1}", "{'a':1}",
        /* escapes: every named one, \u in keys, surrogate pairs, a lone or bad one,
         * a bad hex digit (cJSON reads it as 0) */
        "{\"MetricDataResults\":[{\"\\u0049d\":\"\\b\\f\\n\\r\\t\\\"\\\\\\/\\u00e9\\ud83d\\ude00\","
        "\"Timestamps\":[],\"Values\":[]}]}",
        "{\"MetricDataResults\":[{\"Id\":\"\\ud83d\",\"Timestamps\":[],\"Values\":[]}]}",
        "{\"MetricDataResults\":[{\"Id\":\"\\ude00\"}]}",
        "{\"MetricDataResults\":[{\"Id\":\"\\uZZ41x\",\"StatusCode\":\"Bad\"}]}",
        "{\"MetricDataResults\":[{\"Id\":\"a\\u00\"}]}", "{\"MetricDataResults\":[{\"Id\":\"a\\q\"}]}",
        "{\"MetricDataResults\":[{\"Id\":\"a\\",
        /* statuses and messages */
        "{\"MetricDataResults\":[{\"Id\":\"a\",\"StatusCode\":\"PartialData\","
        "\"Messages\":[{\"Code\":\"c\",\"Value\":\"why\"}]},{\"Id\":\"b\",\"StatusCode\":5},"
        "{\"Id\":\"c\",\"StatusCode\":\"Forbidden\",\"Messages\":[7]},{\"Id\":\"d\","
        "\"StatusCode\":\"InternalError\",\"Messages\":{}}],\"Messages\":[{\"Code\":\"Throttled\","
        "\"Value\":\"slow\"},5,{\"Value\":1}]}",
        /* refusals, in their order */
        "{\"MetricDataResults\":[{\"Timestamps\":[1],\"Values\":[1]}]}",
        "{\"MetricDataResults\":[5]}", "{\"MetricDataResults\":[{\"Id\":\"\"}]}",
        "{\"MetricDataResults\":[{\"Id\":5}]}",
        "{\"MetricDataResults\":[{\"Id\":\"a\",\"Timestamps\":[1,2],\"Values\":[1]}]}",
        "{\"MetricDataResults\":[{\"Id\":\"a\",\"Timestamps\":{},\"Values\":[]}]}",
        "{\"MetricDataResults\":[{\"Id\":\"a\",\"Timestamps\":[],\"Values\":null}]}",
        "{\"MetricDataResults\":[{\"Id\":\"a\",\"Timestamps\":[-1],\"Values\":[1]}]}",
        "{\"MetricDataResults\":[{\"Id\":\"a\",\"Timestamps\":[1],\"Values\":[\"1\"]}]}",
        "{\"MetricDataResults\":[{\"Id\":\"a\",\"Timestamps\":[\"2026-12-02T10:00:00Z\"],\"Values\":[1e999]}]}",
        "{\"MetricDataResults\":[{\"Id\":\"a\",\"Timestamps\":[\"2026-12-02T10:00:00Z\",\"nope\"],\"Values\":[1,2]}]}",
        "{\"MetricDataResults\":[{\"Id\":\"a\",\"Timestamps\":[1e20],\"Values\":[1]}],\"NextToken\":5}",
        "{\"MetricDataResults\":[{\"Id\":\"a\",\"Timestamps\":[true],\"Values\":[null]}]}",
        /* numbers: cJSON's run of [0-9+-eE.] and strtod */
        "{\"MetricDataResults\":[{\"Id\":\"n\",\"Timestamps\":[1.7096244E9,0,1.,01,1e2,1E+2,100e-2,"
        "0.5e1,3.99,1796205600.75],\"Values\":[-0,0.1,1e-7,123456789012345678,9007199254740993,"
        "2.2250738585072014e-308,5e-324,0.30000000000000004,1e22,1e23]}]}",
        "{\"MetricDataResults\":[{\"Id\":\"n\",\"Timestamps\":[+1],\"Values\":[1]}]}",
        "{\"MetricDataResults\":[{\"Id\":\"n\",\"Timestamps\":[.5],\"Values\":[1]}]}",
        "{\"MetricDataResults\":[{\"Id\":\"n\",\"Timestamps\":[1-2],\"Values\":[1]}]}",
        "{\"MetricDataResults\":[{\"Id\":\"n\",\"Timestamps\":[1e],\"Values\":[1]}]}",
        "{\"MetricDataResults\":[{\"Id\":\"n\",\"Timestamps\":[-],\"Values\":[1]}]}",
        "{\"MetricDataResults\":[{\"Id\":\"n\",\"Timestamps\":[1],\"Values\":[1e+]}]}",
        "{\"MetricDataResults\":[{\"Id\":\"n\",\"Timestamps\":[1],\"Values\":["
        "1111111111222222222233333333334444444444555555555566666666667777777777]}]}",
        "{\"MetricDataResults\":[{\"Id\":\"n\",\"Timestamps\":[1],\"Values\":[0x10]}]}",
        "{\"MetricDataResults\":[{\"Id\":\"n\",\"Timestamps\":[1],\"Values\":[nul]}]}",
        /* blanks are any byte up to 32; what follows the root is not read */
        "\x01{\"MetricDataResults\":[\x1f]\x7f}", "{\"MetricDataResults\":[]} garbage [",
        "{\"MetricDataResults\":[]}\0{", "\xEF\xBB\xBF{}", "\xEF\xBB\xBF{", "\xEF\xBB\xBF",
    };
    int bad = 0;
    for (size_t i = 0; i < sizeof hand / sizeof hand[0]; i++)
        bad += !same_s(hand[i], "hand");
    bad += !same("{\"MetricDataResults\":[]}\0{", 26, "a NUL after the root");
    bad += !same("\0{}", 3, "a NUL as a blank");
    OK(!bad, "%zu hand-made pages read as cJSON read them (%d differ)", sizeof hand / sizeof hand[0] + 2, bad);

    /* nesting: cJSON's limit of 1000 levels, inside a result and at the root */
    struct bt_buf b = {0};
    bad = 0;
    for (int depth = 997; depth <= 1001; depth++) {
        bt_buf_reset(&b);
        bt_buf_puts(&b, "{\"MetricDataResults\":[],\"x\":");
        for (int i = 0; i < depth - 1; i++)
            bt_buf_puts(&b, i % 2 ? "{\"k\":" : "[");
        for (int i = depth - 2; i >= 0; i--)
            bt_buf_puts(&b, i % 2 ? "}" : "]");
        bt_buf_puts(&b, "}");
        bad += !same(b.buf, b.len, "nesting");
    }
    OK(!bad, "nesting 997 to 1001 levels: refused where cJSON refuses (%d differ)", bad);

    /* generated pages, then each mutated: a byte flipped to one of JSON's own, the
     * page cut short, a stretch doubled */
    static const char flips[] = "{}[],:\"\\0123456789.eE+-nultrfas \t";
    bad = 0;
    int pages = 3000;
    struct bt_buf m = {0};
    for (int p = 0; p < pages; p++) {
        gen_page(&b);
        bad += !same(b.buf, b.len, "generated");
        for (int k = 0; k < 6; k++) {
            bt_buf_reset(&m);
            bt_buf_add(&m, b.buf, b.len);
            size_t at = next() % b.len;
            switch (k % 3) {
            case 0:
                m.buf[at] = flips[next() % (sizeof flips - 1)];
                break;
            case 1:
                m.len = at;
                break;
            default: {
                size_t n = next() % 16;
                n = at + n > b.len ? b.len - at : n;
                bt_buf_reset(&m);
                bt_buf_add(&m, b.buf, at + n);
                bt_buf_add(&m, b.buf + at, b.len - at);
            }
            }
            bad += !same(m.buf ? m.buf : "", m.len, "mutated");
        }
    }
    OK(!bad, "%d generated pages and 6 mutations of each read as cJSON read them (%d of %d differ)",
       pages, bad, ncases);
    bt_buf_free(&b);
    bt_buf_free(&m);
    return tap_done();
}
