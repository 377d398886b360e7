/* The exposition parsers against hand-written files in tests/data/promtext/
 * and examples/, generated oversize and garbage input, and histogram
 * quantiles computed by hand. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collectors/promtext.h"
#include "core/util.h"
#include "io/file.h"
#include "tests/tap.h"

static char *load(const char *rel, size_t *len)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", tap_srcdir(), rel);
    char *t = bt_read_file(path, 1 << 22, len);
    if (!t) {
        fprintf(stderr, "# cannot read %s\n", path);
        *len = 0;
        return bt_xstrdup("");
    }
    return t;
}

static bool parse_file(struct bt_prom_doc *d, const char *name, enum bt_prom_format f, char *err,
                       size_t errlen)
{
    char rel[256];
    snprintf(rel, sizeof rel, "tests/data/promtext/%s", name);
    size_t len;
    char *t = load(rel, &len);
    bt_prom_init(d);
    bool ok = bt_prom_parse(d, t, len, f, err, errlen);
    free(t);
    return ok;
}

/* The series with this name whose labels include label=value (NULL: any). */
static const struct bt_prom_series *find(const struct bt_prom_doc *d, const char *name,
                                         const char *label, const char *value)
{
    for (int i = 0; i < d->nseries; i++) {
        const struct bt_prom_series *s = &d->series[i];
        if (strcmp(s->name, name) != 0)
            continue;
        const char *v = label ? bt_prom_label(s, label) : NULL;
        if (!label || (v && strcmp(v, value) == 0))
            return s;
    }
    return NULL;
}

static double val(const struct bt_prom_doc *d, const char *name, const char *label,
                  const char *value)
{
    const struct bt_prom_series *s = find(d, name, label, value);
    return s ? s->value : -12345;
}

static void expect_error(const char *file, enum bt_prom_format f, const char *want)
{
    struct bt_prom_doc d;
    char err[256] = "";
    bool ok = parse_file(&d, file, f, err, sizeof err);
    OK(!ok, "%s (%s) is rejected", file, f == BT_PROM_OPENMETRICS ? "openmetrics" : "0.0.4");
    STREQ(err, want, file);
    OK(d.nseries == 0 && d.series == NULL, "%s: a failed parse leaves the doc empty", file);
    bt_prom_free(&d);
}

static void test_text_004(void)
{
    struct bt_prom_doc d;
    char err[256];
    OK(parse_file(&d, "text-004.prom", BT_PROM_TEXT, err, sizeof err), "0.0.4 parses: %s", err);
    /* 2 in_flight + 2 admitted + odd_label + 4 specials + untyped + spaced
     * + 3 buckets + sum + count + legacy_created_total (its _created dropped) */
    OK(d.nseries == 17, "0.0.4: 17 series (got %d)", d.nseries);
    NEAR(val(&d, "bedrock_admission_in_flight", "route", "triage"), 38, 0, "gauge value");
    const struct bt_prom_series *s = find(&d, "bedrock_admission_admitted_total", "route", "triage");
    OK(s && s->has_time, "0.0.4 timestamp present");
    NEAR(s ? s->time : 0, 1764410400.0, 1e-6, "0.0.4 timestamp is milliseconds");
    NEAR(s ? s->value : 0, 1027, 0, "counter value");
    OK(s && bt_prom_series_type(&d, s) == BT_PROM_COUNTER, "_total counter typed");
    NEAR(val(&d, "bedrock_admission_admitted_total", "route", "agents"), 3500, 0,
         "trailing comma in 0.0.4 label set; exponent value");
    s = find(&d, "bedrock_admission_admitted_total", NULL, NULL);
    int f = s ? s->family : -1;
    OK(f >= 0, "family found");
    STREQ(f >= 0 ? d.families[f].help : "", "Calls admitted.\nSecond help line with a \\ backslash.",
          "HELP unescaped");
    s = find(&d, "odd_label", NULL, NULL);
    STREQ(s ? bt_prom_label(s, "path") : "", "C:\\dir\\file", "escaped backslash");
    STREQ(s ? bt_prom_label(s, "quote") : "", "say \"hi\"", "escaped quote");
    STREQ(s ? bt_prom_label(s, "nl") : "", "a\nb", "escaped newline");
    OK(isnan(val(&d, "specials", "v", "nan")), "NaN value");
    double pinf = val(&d, "specials", "v", "pinf"), ninf = val(&d, "specials", "v", "ninf");
    OK(isinf(pinf) && pinf > 0, "+Inf value");
    OK(isinf(ninf) && ninf < 0, "-Inf value");
    NEAR(val(&d, "specials", "v", "neg"), -0.25, 0, "negative value");
    s = find(&d, "untyped_metric", NULL, NULL);
    OK(s && s->family == -1 && bt_prom_series_type(&d, s) == BT_PROM_UNTYPED,
       "sample without metadata is untyped");
    s = find(&d, "spaced_metric", "b", "2");
    OK(s && s->value == 7 && s->has_time && s->time == -1.0 && s->nlabels == 2,
       "blanks around tokens; negative timestamp");
    s = find(&d, "bedrock_admission_output_tokens_bucket", "le", "+Inf");
    OK(s && s->value == 50 && bt_prom_series_type(&d, s) == BT_PROM_HISTOGRAM,
       "+Inf bucket of a histogram");
    NEAR(val(&d, "bedrock_admission_output_tokens_sum", NULL, NULL), 9000, 0, "histogram _sum");
    NEAR(val(&d, "bedrock_admission_output_tokens_count", NULL, NULL), 50, 0, "histogram _count");
    OK(find(&d, "legacy_created_total", NULL, NULL) != NULL, "counter kept");
    OK(find(&d, "legacy_created_created", NULL, NULL) == NULL, "_created ignored for values");
    OK(d.duplicates == 0, "no duplicates");
    bt_prom_free(&d);
}

static void test_openmetrics(void)
{
    struct bt_prom_doc d;
    char err[256];
    OK(parse_file(&d, "openmetrics.txt", BT_PROM_OPENMETRICS, err, sizeof err),
       "OpenMetrics parses: %s", err);
    /* 2 reserved + in_flight + 4 buckets + count + sum + build_info */
    OK(d.nseries == 10, "OpenMetrics: 10 series (got %d)", d.nseries);
    const struct bt_prom_series *s =
        find(&d, "bedrock_admission_reserved_tokens_total", "route", "triage");
    OK(s != NULL, "counter family without _total names the _total sample");
    OK(s && bt_prom_series_type(&d, s) == BT_PROM_COUNTER, "typed as counter");
    NEAR(s ? s->value : 0, 1.5e6, 0, "counter value");
    NEAR(s ? s->time : 0, 1764410400.25, 1e-6, "OpenMetrics timestamp is seconds");
    STREQ(s && s->family >= 0 ? d.families[s->family].unit : "", "tokens", "UNIT");
    STREQ(s && s->family >= 0 ? d.families[s->family].name : "",
          "bedrock_admission_reserved_tokens", "family name");
    NEAR(val(&d, "bedrock_admission_reserved_tokens_total", "route", "agents"), 2000, 0,
         "exemplar skipped");
    OK(find(&d, "bedrock_admission_reserved_tokens_created", NULL, NULL) == NULL,
       "counter _created dropped");
    OK(find(&d, "bedrock_admission_output_tokens_created", NULL, NULL) == NULL,
       "histogram _created dropped");
    NEAR(val(&d, "bedrock_admission_output_tokens_bucket", "le", "100.0"), 20, 0,
         "bucket with exemplar");
    s = find(&d, "build_info", NULL, NULL);
    OK(s && bt_prom_series_type(&d, s) == BT_PROM_INFO, "info family");
    bt_prom_free(&d);

    OK(bt_prom_format_of("application/openmetrics-text; version=1.0.0; charset=utf-8") ==
           BT_PROM_OPENMETRICS, "content type: OpenMetrics");
    OK(bt_prom_format_of("text/plain; version=0.0.4; charset=utf-8") == BT_PROM_TEXT,
       "content type: 0.0.4");
    OK(bt_prom_format_of(NULL) == BT_PROM_TEXT, "no content type: 0.0.4");
}

static void test_errors(void)
{
    expect_error("bad-escape.prom", BT_PROM_TEXT, "line 4: bad escape \\q in label value");
    expect_error("bad-escape.prom", BT_PROM_OPENMETRICS, "line 4: bad escape \\q in label value");
    expect_error("duplicate.txt", BT_PROM_OPENMETRICS,
                 "line 4: duplicate series bedrock_admission_in_flight (first on line 2)");
    expect_error("no-eof.txt", BT_PROM_OPENMETRICS,
                 "line 3: truncated: OpenMetrics input must end with # EOF");
    expect_error("after-eof.txt", BT_PROM_OPENMETRICS, "line 4: content after # EOF");
    expect_error("truncated.prom", BT_PROM_TEXT, "line 3: unterminated label value");
    expect_error("bad-type.prom", BT_PROM_TEXT, "line 1: unknown metric type \"wibble\" for m");
    expect_error("bad-value.prom", BT_PROM_TEXT, "line 2: bad value \"twelve\" for m");
    expect_error("bad-timestamp.prom", BT_PROM_TEXT,
                 "line 2: bad timestamp \"12.5\" (integer milliseconds)");
    expect_error("bucket-no-le.prom", BT_PROM_TEXT,
                 "line 3: histogram bucket h_bucket without an le label");
    expect_error("openmetrics.txt", BT_PROM_TEXT,
                 "line 4: bad timestamp \"1764410400.250\" (integer milliseconds)");
    expect_error("text-004.prom", BT_PROM_OPENMETRICS, "line 10: trailing comma in label set");

    /* 0.0.4 tolerates a duplicate: the later value wins and it is reported */
    struct bt_prom_doc d;
    char err[256];
    OK(parse_file(&d, "duplicate.txt", BT_PROM_TEXT, err, sizeof err), "0.0.4 duplicate parses");
    OK(d.nseries == 2 && d.duplicates == 1, "one duplicate counted (%d series)", d.nseries);
    NEAR(val(&d, "bedrock_admission_in_flight", "route", "triage"), 5, 0, "later value used");
    OK(strncmp(d.warning, "line 4: duplicate series bedrock_admission_in_flight", 52) == 0,
       "duplicate reported: %s", d.warning);
    bt_prom_free(&d);
    OK(parse_file(&d, "no-eof.txt", BT_PROM_TEXT, err, sizeof err) && d.nseries == 2,
       "# EOF not required in 0.0.4");
    bt_prom_free(&d);
}

static bool parse_mem(const char *t, size_t n, enum bt_prom_format f, char *err, size_t errlen)
{
    struct bt_prom_doc d;
    bt_prom_init(&d);
    bool ok = bt_prom_parse(&d, t, n, f, err, errlen);
    bt_prom_free(&d);
    return ok;
}

static void test_bounds(void)
{
    char err[256];
    /* a 1 MB line on line 2 */
    size_t big = 1 << 20;
    struct bt_buf b = {0};
    bt_buf_puts(&b, "ok_metric 1\nbig{v=\"");
    for (size_t i = 0; i < big; i++)
        bt_buf_putc(&b, 'x');
    bt_buf_puts(&b, "\"} 1\n");
    OK(!parse_mem(b.buf, b.len, BT_PROM_TEXT, err, sizeof err), "1 MB line rejected");
    STREQ(err, "line 2: line longer than 65536 bytes", "1 MB line error");
    bt_buf_free(&b);

    /* exactly the bound is fine; one more byte is not */
    for (int extra = 0; extra <= 1; extra++) {
        bt_buf_puts(&b, "m{v=\"");
        size_t fill = BT_PROM_MAX_LINE - strlen("m{v=\"\"} 1") + (size_t)extra;
        for (size_t i = 0; i < fill; i++)
            bt_buf_putc(&b, 'y');
        bt_buf_puts(&b, "\"} 1\n");
        bool ok = parse_mem(b.buf, b.len, BT_PROM_TEXT, err, sizeof err);
        OK(extra ? !ok : ok, "line of %d bytes %s", BT_PROM_MAX_LINE + extra,
           extra ? "rejected" : "accepted");
        bt_buf_free(&b);
    }

    /* series bound: 100001 distinct series */
    for (int i = 0; i <= BT_PROM_MAX_SERIES; i++)
        bt_buf_printf(&b, "s{i=\"%d\"} %d\n", i, i);
    OK(!parse_mem(b.buf, b.len, BT_PROM_TEXT, err, sizeof err), "series bound enforced");
    STREQ(err, "line 100001: more than 100000 series", "series bound error");
    bt_buf_free(&b);

    /* NUL byte */
    OK(!parse_mem("a 1\nb\0 2\n", 9, BT_PROM_TEXT, err, sizeof err), "NUL rejected");
    STREQ(err, "line 2: NUL byte in input", "NUL error");
    /* invalid UTF-8 in a label value */
    OK(!parse_mem("a{l=\"\xc3\x28\"} 1\n", 14, BT_PROM_TEXT, err, sizeof err), "bad UTF-8");
    STREQ(err, "line 1: invalid UTF-8 in label value", "bad UTF-8 error");
    OK(parse_mem("a{l=\"caf\xc3\xa9\"} 1\n", 15, BT_PROM_TEXT, err, sizeof err), "UTF-8 ok");
    /* empty label value and empty HELP (found by fuzz/fuzz_promtext.c) */
    struct bt_prom_doc ed;
    bt_prom_init(&ed);
    const char *et = "# HELP m\nm{route=\"\"} 1\nm{route=\"a\"} 2\n";
    OK(bt_prom_parse(&ed, et, strlen(et), BT_PROM_TEXT, err, sizeof err) && ed.nseries == 2,
       "empty label value parses");
    STREQ(ed.nseries ? bt_prom_label(&ed.series[0], "route") : "?", "", "empty label value");
    STREQ(ed.nfamilies ? ed.families[0].help : "?", "", "empty HELP text");
    bt_prom_free(&ed);
    /* empty input: fine in 0.0.4, truncated in OpenMetrics */
    OK(parse_mem("", 0, BT_PROM_TEXT, err, sizeof err), "empty 0.0.4");
    OK(!parse_mem("", 0, BT_PROM_OPENMETRICS, err, sizeof err), "empty OpenMetrics rejected");
    STREQ(err, "line 1: truncated: OpenMetrics input must end with # EOF", "empty OM error");
    OK(!parse_mem("# TYPE a gauge\n# TYPE a counter\n", 32, BT_PROM_TEXT, err, sizeof err),
       "second TYPE");
    STREQ(err, "line 2: second TYPE for a", "second TYPE error");
    OK(!parse_mem("\x01\x02garbage 1\n", 12, BT_PROM_TEXT, err, sizeof err), "control bytes");
    STREQ(err, "line 1: expected a metric name, found byte 0x01", "garbage names the byte");
}

/* Random bytes from a fixed seed, and random mutations of a valid file:
 * every outcome is either a parse or a "line N: ..." error, never a crash. */
static void test_garbage(void)
{
    uint32_t seed = 12345;
    char err[256];
    int rejected = 0, clean_errors = 0, runs = 200;
    char *buf = bt_xmalloc(4096);
    for (int r = 0; r < runs; r++) {
        for (int i = 0; i < 4096; i++) {
            seed = seed * 1103515245u + 12345u;
            buf[i] = (char)(seed >> 16);
        }
        enum bt_prom_format f = r % 2 ? BT_PROM_OPENMETRICS : BT_PROM_TEXT;
        if (!parse_mem(buf, 4096, f, err, sizeof err)) {
            rejected++;
            clean_errors += strncmp(err, "line ", 5) == 0;
        }
    }
    free(buf);
    OK(rejected == runs, "random bytes rejected (%d of %d)", rejected, runs);
    OK(clean_errors == rejected, "every garbage error names a line");

    size_t len;
    char *orig = load("tests/data/promtext/text-004.prom", &len);
    char *m = bt_xmalloc(len + 1);
    int bad_msgs = 0;
    for (int r = 0; r < 500; r++) {
        memcpy(m, orig, len);
        for (int k = 0; k < 4; k++) {
            seed = seed * 1103515245u + 12345u;
            size_t at = (seed >> 8) % len;
            seed = seed * 1103515245u + 12345u;
            m[at] = (char)(seed >> 16);
        }
        struct bt_prom_doc d;
        bt_prom_init(&d);
        if (!bt_prom_parse(&d, m, len, r % 2 ? BT_PROM_OPENMETRICS : BT_PROM_TEXT, err, sizeof err))
            bad_msgs += strncmp(err, "line ", 5) != 0;
        bt_prom_free(&d);
    }
    OK(bad_msgs == 0, "mutated input: no crash, errors name a line");
    free(m);
    free(orig);

    /* truncate a valid file at every byte; the LF after # EOF is optional */
    char *om = load("tests/data/promtext/openmetrics.txt", &len);
    int truncated_ok = 0;
    for (size_t cut = 0; cut + 1 < len; cut++)
        truncated_ok += parse_mem(om, cut, BT_PROM_OPENMETRICS, err, sizeof err);
    OK(truncated_ok == 0, "OpenMetrics cut anywhere before # EOF is rejected (%d parsed)",
       truncated_ok);
    OK(parse_mem(om, len, BT_PROM_OPENMETRICS, err, sizeof err), "the whole file parses");
    OK(parse_mem(om, len - 1, BT_PROM_OPENMETRICS, err, sizeof err), "# EOF without its LF");
    free(om);
}

static void test_json(void)
{
    struct bt_prom_doc j, t;
    char err[256];
    size_t len;
    char *txt = load("examples/admission-counters.json", &len);
    bt_prom_init(&j);
    OK(bt_prom_parse_json(&j, txt, len, err, sizeof err), "examples JSON parses: %s", err);
    free(txt);
    txt = load("examples/admission-counters.prom", &len);
    bt_prom_init(&t);
    OK(bt_prom_parse(&t, txt, len, BT_PROM_TEXT, err, sizeof err), "examples .prom parses: %s",
       err);
    free(txt);
    /* 12 scalar metrics + 6 buckets + _sum + _count */
    OK(j.nseries == 20 && t.nseries == 20, "both examples: 20 series (%d, %d)", j.nseries,
       t.nseries);
    int same = 0;
    for (int i = 0; i < t.nseries; i++) {
        const struct bt_prom_series *s = &t.series[i];
        const char *le = bt_prom_label(s, "le");
        const struct bt_prom_series *o = find(&j, s->name, le ? "le" : "route", le ? le : "triage");
        same += o && o->value == s->value && strcmp(bt_prom_label(o, "route"), "triage") == 0 &&
                bt_prom_series_type(&j, o) == bt_prom_series_type(&t, s);
    }
    OK(same == t.nseries, "JSON form equals the text form series by series (%d)", same);
    bt_prom_free(&t);

    /* p50/p99 of the example histogram, by hand: total 181200.
     * p50: rank 90600 lies in (128,256] holding 150000-61000 = 89000;
     *      128 + 128 * (90600-61000)/89000 = 128 + 42.571 = 170.571
     * p99: rank 179388 lies in (512,1024] holding 2200;
     *      512 + 512 * (179388-179000)/2200 = 602.298 */
    struct bt_prom_bucket bk[8];
    size_t nb = 0;
    for (int i = 0; i < j.nseries && nb < 8; i++) {
        const char *le = bt_prom_label(&j.series[i], "le");
        if (!le)
            continue;
        bk[nb].le = strcmp(le, "+Inf") == 0 ? INFINITY : atof(le);
        bk[nb++].count = j.series[i].value;
    }
    struct bt_prom_bucket bk2[8];
    memcpy(bk2, bk, sizeof bk);
    NEAR(bt_prom_quantile(0.5, bk, nb), 170.571, 0.001, "example p50");
    NEAR(bt_prom_quantile(0.99, bk2, nb), 602.298, 0.001, "example p99");
    bt_prom_free(&j);

    const struct {
        const char *file, *want;
    } bad[] = {
        {"json-bad-type.json",
         "routes.triage.bedrock_admission_in_flight: expected a number or a histogram object"},
        {"json-no-inf.json", "routes.triage.bedrock_admission_output_tokens.buckets: no \"+Inf\" bucket"},
        {"json-syntax.json", "line 2: JSON syntax error"},
    };
    for (size_t i = 0; i < BT_ARRAY_LEN(bad); i++) {
        char rel[256];
        snprintf(rel, sizeof rel, "tests/data/promtext/%s", bad[i].file);
        txt = load(rel, &len);
        bt_prom_init(&j);
        OK(!bt_prom_parse_json(&j, txt, len, err, sizeof err), "%s rejected", bad[i].file);
        STREQ(err, bad[i].want, bad[i].file);
        bt_prom_free(&j);
        free(txt);
    }
    bt_prom_init(&j);
    OK(!bt_prom_parse_json(&j, "{\"other\":1}", 11, err, sizeof err), "no routes object");
    OK(!bt_prom_parse_json(&j, "\x89PNG\r\n", 6, err, sizeof err), "binary JSON rejected");
    bt_prom_free(&j);
}

static void test_api(void)
{
    struct bt_prom_doc d;
    char err[256];
    size_t len;
    char *txt = load("tests/data/promtext/api-vector.json", &len);
    bt_prom_init(&d);
    OK(bt_prom_parse_api(&d, "q", txt, len, err, sizeof err), "API vector parses: %s", err);
    free(txt);
    OK(d.nseries == 3, "three results");
    const struct bt_prom_series *s = find(&d, "q", "route", "triage");
    OK(s && s->value == 1500000 && s->time == 1764410400.5, "route result value and time");
    s = find(&d, "q", "model_id", "anthropic.claude-opus-4-7");
    OK(s && isnan(s->value), "NaN result");
    OK(d.nseries == 3 && d.series[2].nlabels == 0 && isinf(d.series[2].value), "+Inf, no labels");
    bt_prom_free(&d);

    txt = load("tests/data/promtext/api-error.json", &len);
    OK(!bt_prom_parse_api(&d, "q", txt, len, err, sizeof err), "API error answer");
    STREQ(err, "query failed: bad_data: invalid parameter \"query\": 1:8: parse error: "
               "unexpected \")\"", "API error message");
    free(txt);
    /* query_range: one series per point, each with its time; name from __name__ */
    txt = load("tests/data/promtext/api-matrix.json", &len);
    OK(bt_prom_parse_api(&d, NULL, txt, len, err, sizeof err), "API matrix parses: %s", err);
    free(txt);
    OK(d.nseries == 4, "two series of two points: four entries");
    OK(d.nseries == 4 && !strcmp(d.series[1].name, "bedtop_signal") && d.series[1].time == 1764410415 &&
           d.series[1].value == 300000,
       "matrix point: name, time, value");
    OK(d.nseries == 4 && !strcmp(d.series[3].name, "bedtop_data_timestamp_seconds") &&
           d.series[3].time == 1764410415.5 && d.series[3].value == 1764410280,
       "second series' second point");
    bt_prom_free(&d);
    const char *str = "{\"status\":\"success\",\"data\":{\"resultType\":\"string\",\"result\":[1,\"x\"]}}";
    OK(!bt_prom_parse_api(&d, "q", str, strlen(str), err, sizeof err), "string result rejected");
    STREQ(err, "resultType \"string\" is not a vector or a matrix", "string result error");
    OK(!bt_prom_parse_api(&d, "q", "<html>", 6, err, sizeof err), "HTML rejected");
    bt_prom_free(&d);
}

static void test_quantile(void)
{
    /* examples/admission-counters.prom's kind of histogram: {128:10, 256:40, +Inf:50}.
     * p50: rank 25 in (128,256] holding 30: 128 + 128*15/30 = 192
     * p10: rank 5 in [0,128] holding 10: 128*5/10 = 64
     * p99: rank 49.5 in the +Inf bucket: the highest finite bound, 256 */
    struct bt_prom_bucket a[] = {{INFINITY, 50}, {128, 10}, {256, 40}}; /* unsorted on purpose */
    NEAR(bt_prom_quantile(0.5, a, 3), 192, 1e-9, "p50 = 192");
    NEAR(bt_prom_quantile(0.1, a, 3), 64, 1e-9, "p10 = 64");
    NEAR(bt_prom_quantile(0.99, a, 3), 256, 1e-9, "p99 in +Inf bucket = 256");
    /* {100:20, 200:70, 400:90, +Inf:100}
     * p50: rank 50 in (100,200] holding 50: 100 + 100*30/50 = 160
     * p90: rank 90 in (200,400] holding 20: 200 + 200*20/20 = 400 */
    struct bt_prom_bucket b[] = {{100, 20}, {200, 70}, {400, 90}, {INFINITY, 100}};
    NEAR(bt_prom_quantile(0.5, b, 4), 160, 1e-9, "p50 = 160");
    NEAR(bt_prom_quantile(0.9, b, 4), 400, 1e-9, "p90 = 400");
    /* non-monotonic counts are raised as Prometheus does: {10:5, 20:5, +Inf:10};
     * p50: rank 5 in [0,10] holding 5: 10 */
    struct bt_prom_bucket c[] = {{10, 5}, {20, 3}, {INFINITY, 10}};
    NEAR(bt_prom_quantile(0.5, c, 3), 10, 1e-9, "non-monotonic fixed");
    struct bt_prom_bucket noinf[] = {{10, 5}, {20, 10}};
    OK(isnan(bt_prom_quantile(0.5, noinf, 2)), "no +Inf bucket: NaN");
    struct bt_prom_bucket empty[] = {{10, 0}, {INFINITY, 0}};
    OK(isnan(bt_prom_quantile(0.5, empty, 2)), "no observations: NaN");
    struct bt_prom_bucket one[] = {{INFINITY, 4}};
    OK(isnan(bt_prom_quantile(0.5, one, 1)), "only +Inf: NaN");
    OK(isinf(bt_prom_quantile(1.5, b, 4)) && bt_prom_quantile(1.5, b, 4) > 0, "q > 1: +Inf");
    OK(isinf(bt_prom_quantile(-1, b, 4)) && bt_prom_quantile(-1, b, 4) < 0, "q < 0: -Inf");
}

/* Issue 26 break 4: every label was copied again for every point of a matrix, so a
 * 1.75 MB answer (64 labels of 25,000 bytes = 1.6 MB, once, and 10,000 points) asked for
 * 10,000 x 1.6 MB = 16 GB. Now the labels are held once per result. */
static char *big_matrix(size_t *len)
{
    struct bt_buf b = {0};
    bt_buf_puts(&b, "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[{\"metric\":{"
                    "\"__name__\":\"bedtop_signal\"");
    char *v = bt_xmalloc(25001);
    memset(v, 'v', 25000);
    v[25000] = '\0';
    for (int i = 1; i < 64; i++)
        bt_buf_printf(&b, ",\"l%02d\":\"%s\"", i, v);
    free(v);
    bt_buf_puts(&b, "},\"values\":[");
    for (int i = 0; i < 10000; i++)
        bt_buf_printf(&b, "%s[%d,\"1\"]", i ? "," : "", 1795946400 + 30 * i);
    bt_buf_puts(&b, "]}]}}");
    *len = b.len;
    return b.buf;
}

static void test_api_matrix_memory(void)
{
    size_t len;
    char *txt = big_matrix(&len);
    OK(len > 1700000 && len < 1900000, "break 4: the answer is about 1.75 MB (%zu bytes)", len);
    bool bounded = true; /* the in-process parse below runs only once the child showed it bounded */
    /* A child parses it. Plainly it runs under a 1 GiB address-space limit (out of
     * memory is bt_xmalloc's abort). AddressSanitizer reserves terabytes of shadow
     * and valgrind its own heap, so there the bound is the child's peak resident set
     * instead: 512 MiB, where the copy per point asked for about 16 GB. */
    bool tooled = getenv("LD_PRELOAD") && strstr(getenv("LD_PRELOAD"), "vgpreload");
#if defined(__SANITIZE_ADDRESS__)
    tooled = true;
#endif
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        if (!tooled) {
            struct rlimit rl = {.rlim_cur = 1UL << 30, .rlim_max = 1UL << 30};
            setrlimit(RLIMIT_AS, &rl);
        }
        struct bt_prom_doc c;
        bt_prom_init(&c);
        char e[200];
        bool cok = bt_prom_parse_api(&c, NULL, txt, len, e, sizeof e);
        bt_prom_free(&c);
        _exit(cok ? 0 : 2);
    }
    int st = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    wait4(pid, &st, 0, &ru);
    long peak_mib = ru.ru_maxrss / 1024; /* kilobytes on Linux */
    bounded = WIFEXITED(st) && WEXITSTATUS(st) == 0 && (!tooled || peak_mib < 512);
    if (tooled)
        OK(bounded, "break 4: the 1.75 MB matrix parses with a peak of %ld MiB resident (< 512; status %d)",
           peak_mib, st);
    else
        OK(bounded, "break 4: the 1.75 MB matrix parses within 1 GiB of address space (status %d)", st);
    if (bounded) {
        struct bt_prom_doc d;
        bt_prom_init(&d);
        char err[200] = "";
        bool ok = bt_prom_parse_api(&d, NULL, txt, len, err, sizeof err);
        OK(ok && d.nseries == 10000 && d.series[9999].nlabels == 64 &&
               !strcmp(bt_prom_label(&d.series[9999], "l63"), bt_prom_label(&d.series[0], "l63")) &&
               d.series[9999].time == 1795946400.0 + 30 * 9999,
           "break 4: 10,000 points, each with its 64 labels and its own time (%s)", err);
        OK(ok && d.series[9999].labels == d.series[0].labels && d.series[1].name == d.series[0].name,
           "break 4: the points share one copy of the name and labels");
        bt_prom_free(&d);
    }
    free(txt);
}

int main(void)
{
    test_api_matrix_memory();
    test_text_004();
    test_openmetrics();
    test_errors();
    test_bounds();
    test_garbage();
    test_json();
    test_api();
    test_quantile();
    return tap_done();
}
