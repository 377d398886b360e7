/* The fleet's pure parts: API cost accounting, content negotiation and gzip of
 * bedtop serve, and the round trip exposition -> Prometheus -> store -> the
 * same evaluation (numbers by hand in the comments). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "net/httpd.h"
#include "collectors/promsource.h"
#include "collectors/promtext.h"
#include "core/apicost.h"
#include "render/exposition.h"
#include "core/headroom.h"
#include "render/report.h"
#include "core/util.h"
#include "io/conffile.h"
#include "tests/tap.h"

static const int64_t T0 = 1795946400;      /* 2026-11-29 10:00:00 UTC, a minute start */

static void test_cost(void)
{
    struct bt_api_cost c;
    memset(&c, 0, sizeof c);
    double pm, pd, usd;
    bt_api_cost_rates(&c, T0, &pm, &pd, &usd);
    OK(isnan(pm) && isnan(pd) && isnan(usd), "nothing requested yet: rates unknown, not 0");
    /* 14 metrics per route, 3 routes, one poll a minute for 10 minutes: 42/min,
     * 42 x 1440 = 60,480/day, x USD 0.01/1000 = USD 0.6048/day */
    for (int m = 0; m < 10; m++)
        bt_api_cost_metrics(&c, T0 + 60 * m + 5, 42);
    bt_api_cost_rates(&c, T0 + 9 * 60 + 30, &pm, &pd, &usd);
    NEAR(pm, 42, 1e-9, "42 metrics/min measured over the 10 minutes seen");
    NEAR(pd, 60480, 1e-6, "per day: 42 x 1440 before a day has passed");
    NEAR(usd, 0.6048, 1e-9, "price at USD 0.01 per 1,000 metrics");
    OK(c.metrics_total == 420, "total counted: 420");
    /* an hour later with no polls: the last hour holds nothing */
    bt_api_cost_rates(&c, T0 + 9 * 60 + 3600, &pm, &pd, &usd);
    NEAR(pm, 0, 0, "an idle hour later: 0 per minute");

    bt_api_cost_request(&c, "GetMetricData", BT_API_OK);
    bt_api_cost_request(&c, "GetMetricData", BT_API_THROTTLED);
    bt_api_cost_request(&c, "ListServiceQuotas", BT_API_OK);
    OK(c.napi == 2 && c.api[0].n[BT_API_OK] == 1 && c.api[0].n[BT_API_THROTTLED] == 1 &&
           c.api[1].n[BT_API_OK] == 1,
       "requests counted by API and outcome");
    bt_api_cost_metrics(NULL, T0, 5); /* no counter: nothing happens */
}

static void test_negotiation(void)
{
    /* what Prometheus 2.x sends */
    OK(bt_httpd_wants_openmetrics("application/openmetrics-text;version=1.0.0,application/"
                                  "openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;"
                                  "q=0.5,*/*;q=0.1"),
       "Prometheus's Accept: OpenMetrics");
    OK(!bt_httpd_wants_openmetrics("text/plain;version=0.0.4"), "text/plain: text 0.0.4");
    OK(!bt_httpd_wants_openmetrics(""), "no Accept: text 0.0.4");
    OK(!bt_httpd_wants_openmetrics("application/openmetrics-text;q=0, text/plain"),
       "OpenMetrics refused with q=0: text");
    OK(!bt_httpd_wants_openmetrics("application/openmetrics-text;q=0.3,text/plain;q=0.9"),
       "text preferred by q-value: text");
    OK(bt_httpd_accepts_gzip("gzip, deflate, br"), "Accept-Encoding gzip");
    OK(!bt_httpd_accepts_gzip("identity"), "identity only: no gzip");
    OK(!bt_httpd_accepts_gzip("gzip;q=0"), "gzip;q=0: no gzip");

    struct bt_httpd_req rq;
    OK(bt_httpd_parse("GET /metrics?x=1 HTTP/1.1\r\nAccept: text/plain\r\nAccept-Encoding: gzip\r\n", &rq) == 0 &&
           !strcmp(rq.method, "GET") && !strcmp(rq.path, "/metrics") && !strcmp(rq.accept, "text/plain") &&
           rq.gzip,
       "request head: method, path without the query, Accept, gzip");
    OK(bt_httpd_parse("POST /metrics HTTP/1.1\r\n", &rq) == 405, "POST: 405");
    OK(bt_httpd_parse("GET metrics HTTP/1.1\r\n", &rq) == 400, "target not starting with /: 400");
    OK(bt_httpd_parse("GET /metrics HTTP/2.0\r\n", &rq) == 400, "not HTTP/1.x: 400");
    OK(bt_httpd_parse("GET /metrics\r\n", &rq) == 400, "HTTP/0.9 line: 400");
    OK(bt_httpd_parse("LONGMETHOD / HTTP/1.1\r\n", &rq) == 400, "method over 7 bytes: 400");
    char longreq[600] = "GET /";
    memset(longreq + 5, 'a', 400);
    snprintf(longreq + 405, sizeof longreq - 405, " HTTP/1.1\r\n");
    OK(bt_httpd_parse(longreq, &rq) == 414, "target over 255 bytes: 414");
    /* keep-alive as RFC 9112 9.3: 1.1 persists unless "close", 1.0 only with "keep-alive",
     * and never after a request with a body (not read, so it would be the next request) */
    OK(bt_httpd_parse("GET /metrics HTTP/1.1\r\nHost: x\r\n", &rq) == 0 && rq.keep_alive,
       "keep-alive: HTTP/1.1 persists");
    OK(bt_httpd_parse("GET /metrics HTTP/1.1\r\nConnection: Upgrade, Close\r\n", &rq) == 0 &&
           !rq.keep_alive, "keep-alive: 1.1 with a close token closes");
    OK(bt_httpd_parse("GET /metrics HTTP/1.0\r\n", &rq) == 0 && !rq.keep_alive,
       "keep-alive: HTTP/1.0 closes");
    OK(bt_httpd_parse("GET /metrics HTTP/1.0\r\nConnection: keep-alive\r\n", &rq) == 0 &&
           rq.keep_alive, "keep-alive: 1.0 asking for keep-alive persists");
    OK(bt_httpd_parse("GET /metrics HTTP/1.1\r\nContent-Length: 5\r\n", &rq) == 0 &&
           !rq.keep_alive, "keep-alive: not after a request with a body (Content-Length)");
    OK(bt_httpd_parse("GET /metrics HTTP/1.1\r\nContent-Length: 0\r\n", &rq) == 0 &&
           rq.keep_alive, "keep-alive: Content-Length 0 is no body");
    OK(bt_httpd_parse("GET /metrics HTTP/1.1\r\nTransfer-Encoding: chunked\r\n", &rq) == 0 &&
           !rq.keep_alive, "keep-alive: not after a chunked body");

    struct bt_buf z = {0};
    const char *text = "bedtop_status 0\nbedtop_status 0\nbedtop_status 0\n";
    OK(bt_gzip(text, strlen(text), &z) && z.len > 10 && (unsigned char)z.buf[0] == 0x1f &&
           (unsigned char)z.buf[1] == 0x8b,
       "gzip member header");
    char back[128];
    uLongf n = sizeof back;
    z_stream s;
    memset(&s, 0, sizeof s);
    inflateInit2(&s, 15 + 16);
    s.next_in = (Bytef *)z.buf;
    s.avail_in = (uInt)z.len;
    s.next_out = (Bytef *)back;
    s.avail_out = (uInt)n;
    int r = inflate(&s, Z_FINISH);
    OK(r == Z_STREAM_END && s.total_out == strlen(text) && !memcmp(back, text, strlen(text)),
       "gzip inflates back to the same bytes");
    inflateEnd(&s);
    bt_buf_free(&z);
}

/* One runtime route, hand-worked: quota 1,000,000 (service-quotas, L-HOT), burndown 1,
 * max_tokens 500; minute 10:07: Invocations 100, Input 920,000, Output 30,000,
 * Estimated 950,000, Throttles 5.
 *   settled 950,000; reserved 920,000 + 100 x 500 = 970,000; used 970,000;
 *   headroom 30,000 = 3 % -> LOW_HEADROOM crit; THROTTLED_BELOW_ESTIMATE. */
static void route_setup(struct bt_config *cfg, struct bt_store *st)
{
    bt_config_init(cfg);
    int r = bt_config_add_route(cfg, "hot \"x\"");
    struct bt_route *rt = &cfg->routes[r];
    bt_strlcpy(rt->model, "anthropic.claude-3-haiku-20240307-v1:0", sizeof rt->model);
    bt_strlcpy(rt->region, "us-east-1", sizeof rt->region);
    rt->max_tokens = 500;
    bt_config_finish(cfg);
    bt_store_init(st, cfg->nroutes, 1440);
    bt_store_bind_routes(st, cfg->routes);
}

/* serve's conditional requests (RFC 9110 13.1): the dates are RFC 9110 5.6.7's own
 * example, Sun, 06 Nov 1994 08:49:37 GMT = 784111777 (date -ud @784111777). */
static void test_conditional(void)
{
    OK(bt_httpd_parse_date("Sun, 06 Nov 1994 08:49:37 GMT") == 784111777, "IMF-fixdate");
    OK(bt_httpd_parse_date("Sunday, 06-Nov-94 08:49:37 GMT") == 784111777, "obsolete RFC 850 date");
    OK(bt_httpd_parse_date("Sun Nov  6 08:49:37 1994") == 784111777, "obsolete asctime date");
    OK(bt_httpd_parse_date("Sun, 06 Nov 1994 08:49:37 UTC") == -1, "not GMT: not a date");
    OK(bt_httpd_parse_date("Sun, 6 Nov 1994 08:49:37 GMT") == -1, "one-digit day: not IMF-fixdate");
    OK(bt_httpd_parse_date("Sun, 06 Nov 1994 08:49:37 GMT junk") == -1, "trailing junk: not a date");
    OK(bt_httpd_parse_date("Sun, 06 Foo 1994 08:49:37 GMT") == -1, "no such month");
    OK(bt_httpd_parse_date("Sun, 06 Nov 1994 25:49:37 GMT") == -1, "hour 25");
    OK(bt_httpd_parse_date("") == -1 && bt_httpd_parse_date("yesterday") == -1, "empty, a word");
    OK(bt_httpd_parse_date("Sun Nov  6 08:49:37 1051") == -1 &&
           bt_httpd_parse_date("Thu, 01 Jan 1970 00:00:00 GMT") == 0,
       "a year before 1970 is no validator; the epoch itself is 0 (found by fuzz_httpd)");
    char d[40];
    bt_httpd_fmt_date(784111777, d, sizeof d);
    OK(!strcmp(d, "Sun, 06 Nov 1994 08:49:37 GMT"), "Last-Modified written as IMF-fixdate");
    bt_httpd_fmt_date(T0, d, sizeof d);
    OK(!strcmp(d, "Sun, 29 Nov 2026 10:00:00 GMT") && bt_httpd_parse_date(d) == T0,
       "2026-11-29 10:00 UTC round trip");

    const char *tag = "\"abc-1-text\"";
    OK(bt_httpd_etag_matches("\"abc-1-text\"", tag), "If-None-Match: the same tag");
    OK(bt_httpd_etag_matches("\"x\", W/\"abc-1-text\"", tag), "a list holding it, weakly");
    OK(bt_httpd_etag_matches("*", tag), "*: any current representation");
    OK(!bt_httpd_etag_matches("\"abc-1-text-gz\"", tag), "the gzip variant's tag is another");
    OK(!bt_httpd_etag_matches("\"abc-1-tex\"", tag) && !bt_httpd_etag_matches("abc-1-text", tag),
       "a prefix or an unquoted value does not match");
    OK(!bt_httpd_etag_matches("\"unterminated", tag), "an unterminated tag does not match");

    struct bt_httpd_req rq;
    OK(bt_httpd_parse("GET /metrics HTTP/1.1\r\nIf-None-Match: \"a\"\r\n"
                      "If-Modified-Since: Sun, 06 Nov 1994 08:49:37 GMT\r\n", &rq) == 0 &&
           !strcmp(rq.if_none_match, "\"a\"") && rq.if_modified_since == 784111777,
       "request head: If-None-Match and If-Modified-Since");
    OK(bt_httpd_parse("GET /metrics HTTP/1.1\r\nIf-Modified-Since: soon\r\n", &rq) == 0 &&
           rq.if_modified_since == -1 && !rq.if_none_match[0],
       "an invalid If-Modified-Since is ignored (RFC 9110 13.1.3)");
}

static void test_round_trip(void)
{
    struct bt_config cfg;
    struct bt_store st;
    route_setup(&cfg, &st);
    const int64_t now = T0 + 600, m = T0 + 420;
    /* polled at 10:10: with the 120 s lag that poll settled 10:07 (the v3 frame) */
    struct bt_event ok = {.t = now, .type = BT_EV_OK, .route = 0, .source = BT_SRC_CLOUDWATCH};
    bt_model_event(&st, cfg.routes, &ok);
    struct bt_event q = {.t = now - 20, .type = BT_EV_QUOTA, .route = 0, .source = BT_SRC_QUOTAS,
                         .quota_kind = BT_Q_TPM, .value = 1000000,
                         .quota_source = BT_QS_SERVICE_QUOTAS, .code = "L-HOT"};
    bt_model_event(&st, cfg.routes, &q);
    const struct {
        enum bt_signal s;
        double v;
    } in[] = {{BT_SIG_INVOCATIONS, 100}, {BT_SIG_INPUT_TOKENS, 920000}, {BT_SIG_OUTPUT_TOKENS, 10000},
              {BT_SIG_ESTIMATED_TPM, 970000}, {BT_SIG_THROTTLES, 5}};
    /* Claude 3 Haiku, 5x: settled 920,000 + 10,000 x 5 = 970,000 = the estimate; in flight
     * unknown (no latency), so used = max(970,000, 970,000, 100 x (9,200 + 500)) = 970,000:
     * headroom 1,000,000 - 970,000 = 30,000 */
    for (size_t i = 0; i < BT_ARRAY_LEN(in); i++) {
        struct bt_sample smp = {m, 0, in[i].s, in[i].v};
        bt_store_add(&st, &smp, now - 20);
    }
    struct bt_report rep;
    bt_report_build(&rep, &cfg, &st, now);
    NEAR(rep.evals[0].headroom_tpm, 30000, 0, "hand-worked headroom 30,000");
    struct bt_buf text = {0};
    bt_expo_render(&rep, BT_EXPO_TEXT, &text);
    const char *x = bt_buf_str(&text);
    OK(strstr(x, "bedtop_headroom_ratio{route=\"hot \\\"x\\\"\",") != NULL,
       "route label escaped (quote in the route name)");
    OK(strstr(x, "signal=\"input_tokens\"} 920000\n") != NULL, "raw signal exported");
    OK(strstr(x, "code=\"LOW_HEADROOM\",severity=\"crit\"} 1\n") != NULL, "warning with severity");
    OK(strstr(x, "NaN") == NULL, "no NaN sample (unknown figures are absent)");
    OK(strstr(x, "bedtop_data_timestamp_seconds{") != NULL, "minute evaluated exported");

    /* Prometheus stores the scrape at time now; read it back as a range answer would */
    struct bt_prom_doc doc;
    bt_prom_init(&doc);
    char err[160];
    OK(bt_prom_parse(&doc, text.buf, text.len, BT_PROM_TEXT, err, sizeof err), "exposition parses: %s",
       err);
    for (int i = 0; i < doc.nseries; i++) {
        doc.series[i].has_time = true;
        doc.series[i].time = (double)now;
    }
    struct bt_config cfg2;
    struct bt_store st2;
    route_setup(&cfg2, &st2);
    OK(bt_promsrc_ingest(&doc, &cfg2, &st2) > 0, "ingested");
    struct bt_eval e1, e2;
    bt_eval_route(&cfg, &st, 0, now, &e1);
    bt_eval_route(&cfg2, &st2, 0, now, &e2);
    OK(e2.minute == m, "same minute back");
    NEAR(e2.used, e1.used, 0, "same used");
    NEAR(e2.headroom_tpm, e1.headroom_tpm, 0, "same headroom");
    NEAR(e2.fits_more, e1.fits_more, 0, "same fits_more");
    OK(e2.quota_source == BT_QS_SERVICE_QUOTAS && !strcmp(cfg2.routes[0].quota[BT_Q_TPM].code, "L-HOT"),
       "quota source and code back");
    OK(e2.status == e1.status && e2.nwarn == e1.nwarn, "same status and warnings");
    bt_prom_free(&doc);
    bt_buf_free(&text);
    bt_report_free(&rep);
    bt_store_free(&st);
    bt_store_free(&st2);
    bt_config_free(&cfg);
    bt_config_free(&cfg2);

    char sel[256];
    OK(bt_promsrc_selector("bedtop_signal", "region=\"us-east-1\"", sel, sizeof sel) &&
           !strcmp(sel, "{__name__=~\"bedtop_signal\",region=\"us-east-1\"}"),
       "selector with matchers");
    OK(!bt_promsrc_selector("x", "a=\"b\"} or vector(1", sel, sizeof sel),
       "matchers cannot close the selector");
    char base[128];
    OK(bt_promsrc_parse("prometheus+http://127.0.0.1:9090", base, sizeof base) &&
           !strcmp(base, "http://127.0.0.1:9090"),
       "prometheus+http:// base");
    OK(!bt_promsrc_parse("http://127.0.0.1:9090", base, sizeof base), "plain http is not a source");
}

/* Parses Prometheus text as a query answer read at `at` (every point stamped then) and
 * ingests it as --source does, into route_setup's one route with max_tokens unset. */
static void source_ingest(const char *text, double at, struct bt_config *cfg, struct bt_store *st)
{
    route_setup(cfg, st);
    cfg->routes[0].max_tokens = NAN;
    struct bt_prom_doc doc;
    bt_prom_init(&doc);
    char err[160];
    OK(bt_prom_parse(&doc, text, strlen(text), BT_PROM_TEXT, err, sizeof err), "parses: %s", err);
    for (int i = 0; i < doc.nseries; i++) {
        doc.series[i].has_time = true;
        if (!doc.series[i].time)
            doc.series[i].time = at;
    }
    bt_promsrc_ingest(&doc, cfg, st);
    bt_prom_free(&doc);
}

static bool error_has(const struct bt_store *st, const char *needle)
{
    const struct bt_source_status *ss = bt_store_status_c(st, 0, BT_SRC_CLOUDWATCH);
    return ss->last_error && ss->last_error >= ss->last_ok && strstr(ss->error, needle);
}

/* Issue 26 breaks 3, 8 and 12 through --source: a point dated 2100, bedtop_max_tokens
 * -1e9 and bedtop_burndown 1e9 believed as given, huge finite times converted (UB). */
static void test_source_hostile(void)
{
    const double now = (double)(T0 + 600);
    char text[1024];
    struct bt_config cfg;
    struct bt_store st;
    snprintf(text, sizeof text,
             "bedtop_data_timestamp_seconds{route=\"hot \\\"x\\\"\",source=\"cloudwatch\"} 4102444800\n"
             "bedtop_signal{route=\"hot \\\"x\\\"\",signal=\"input_tokens\"} 5\n"
             "bedtop_source_last_success_timestamp_seconds{route=\"hot \\\"x\\\"\",source=\"cloudwatch\"} %lld\n",
             (long long)T0 + 580);
    source_ingest(text, now, &cfg, &st);
    OK(bt_store_newest(&st, 0, BT_SIG_INPUT_TOKENS, 4102444800LL) == 0,
       "break 3 (--source): a point dated 2100 is not stored");
    OK(error_has(&st, "sample from the future: input_tokens dated 2100-01-01T00:00:00Z"),
       "break 3 (--source): the route is stale, naming it (%s)", bt_store_status(&st, 0, BT_SRC_CLOUDWATCH)->error);
    bt_store_free(&st);
    bt_config_free(&cfg);

    snprintf(text, sizeof text,
             "bedtop_max_tokens{route=\"hot \\\"x\\\"\"} -1e9\n"
             "bedtop_burndown{route=\"hot \\\"x\\\"\",source=\"table\"} 1e9\n"
             "bedtop_source_last_success_timestamp_seconds{route=\"hot \\\"x\\\"\",source=\"cloudwatch\"} %lld\n",
             (long long)T0 + 580);
    source_ingest(text, now, &cfg, &st);
    OK(isnan(cfg.routes[0].max_tokens), "break 8: bedtop_max_tokens -1e9 is not used (%g)",
       cfg.routes[0].max_tokens);
    OK(cfg.routes[0].burndown == 5,
       "break 8: bedtop_burndown 1e9 is not used (the table's 5 for Claude 3 Haiku stays: %g)",
       cfg.routes[0].burndown);
    OK(error_has(&st, "implausible value: bedtop_max_tokens = -1e+09"),
       "break 8: the route is stale, naming the value (%s)", bt_store_status(&st, 0, BT_SRC_CLOUDWATCH)->error);
    bt_store_free(&st);
    bt_config_free(&cfg);
    snprintf(text, sizeof text, "bedtop_max_tokens{route=\"hot \\\"x\\\"\"} 4096\n"
                                "bedtop_burndown{route=\"hot \\\"x\\\"\",source=\"config\"} 5\n");
    source_ingest(text, now, &cfg, &st);
    OK(cfg.routes[0].max_tokens == 4096 && cfg.routes[0].burndown == 5,
       "break 8: plausible bedtop_max_tokens 4096 and bedtop_burndown 5 are used");
    bt_store_free(&st);
    bt_config_free(&cfg);

    /* 1e300 as a time ("failing since 08:29 UTC" from an undefined conversion) */
    snprintf(text, sizeof text,
             "bedtop_source_last_error_timestamp_seconds{route=\"hot \\\"x\\\"\",source=\"cloudwatch\"} 1e300\n"
             "bedtop_data_timestamp_seconds{route=\"hot \\\"x\\\"\",source=\"cloudwatch\"} -1e300\n"
             "bedtop_signal{route=\"hot \\\"x\\\"\",signal=\"invocations\"} 5\n");
    source_ingest(text, now, &cfg, &st);
    OK(!bt_store_status(&st, 0, BT_SRC_CLOUDWATCH)->last_error &&
           bt_store_newest(&st, 0, BT_SIG_INVOCATIONS, T0 + 600) == 0,
       "break 12: times of 1e300 and -1e300 are refused, not converted");
    bt_store_free(&st);
    bt_config_free(&cfg);

    /* Issue 37 break 14: every bedtop_signal NaN read as idle (100 %, exit 0): now
     * the route's CloudWatch poll is an error naming it, so its figures are unknown */
    snprintf(text, sizeof text,
             "bedtop_data_timestamp_seconds{route=\"hot \\\"x\\\"\",source=\"cloudwatch\"} %lld\n"
             "bedtop_signal{route=\"hot \\\"x\\\"\",signal=\"invocations\"} NaN\n"
             "bedtop_signal{route=\"hot \\\"x\\\"\",signal=\"input_tokens\"} NaN\n"
             "bedtop_source_last_success_timestamp_seconds{route=\"hot \\\"x\\\"\",source=\"cloudwatch\"} %lld\n",
             (long long)T0 + 480, (long long)T0 + 580);
    source_ingest(text, now, &cfg, &st);
    OK(error_has(&st, "not a number: bedtop_signal invocations = nan from the source; not used"),
       "r4 break 14: all-NaN signals through --source: the route's poll is an error (%s)",
       bt_store_status(&st, 0, BT_SRC_CLOUDWATCH)->error);
    OK(isnan(bt_store_at(&st, 0, BT_SIG_INVOCATIONS, T0 + 480)),
       "r4 break 14: ... and no invocations stored for the minute");
    bt_store_free(&st);
    bt_config_free(&cfg);
    int64_t t;
    OK(!bt_time_from_double(1e300, &t) && !bt_time_from_double(-1, &t) &&
           !bt_time_from_double(NAN, &t) && bt_time_from_double(4102444800.0, &t) && t == 4102444800LL,
       "break 12: bt_time_from_double: 1e300, -1, NaN refused; 2100 taken");
    char when[32];
    bt_fmt_iso(INT64_MAX, when, sizeof when);
    OK(!strcmp(when, "?"), "break 12: a time gmtime cannot hold formats as '?' (%s)", when);
}

/* Issue 37 break 7: a 7.6 MB discovery answer took 1.3 GB (and a minute of
 * bt_config_find_route per answered route): at most 20,000 routes are discovered,
 * more is refused naming the limit; names are deduplicated in one pass. */
static void test_discovery_bound(void)
{
    for (int n = 19999; n <= 20000; n++) {
        struct bt_buf b = {0};
        bt_buf_puts(&b, "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[");
        for (int i = 0; i < n; i++)
            bt_buf_printf(&b, "%s{\"metric\":{\"__name__\":\"bedtop_route_status\",\"route\":\"r%d\","
                          "\"model_id\":\"m\"},\"value\":[1795946400,\"1\"]}", i ? "," : "", i);
        /* again: an answered name twice, and one the config has, are one route each */
        bt_buf_puts(&b, ",{\"metric\":{\"route\":\"r7\",\"model_id\":\"m\"},\"value\":[1795946400,\"1\"]}"
                        ",{\"metric\":{\"route\":\"mine\",\"model_id\":\"m\"},\"value\":[1795946400,\"1\"]}]}}");
        struct bt_prom_doc doc;
        char err[256] = "";
        bt_prom_init(&doc);
        bool ok = bt_prom_parse_api(&doc, NULL, b.buf, b.len, err, sizeof err);
        struct bt_config cfg;
        bt_config_defaults(&cfg);
        bt_config_add_route(&cfg, "mine");
        int added = ok ? bt_promsrc_add_routes(&doc, &cfg, "http://127.0.0.1:9", err, sizeof err) : -2;
        if (n == 19999)
            OK(added == 19999 && cfg.nroutes == 20000 && bt_config_find_route(&cfg, "r19998") == 19999,
               "r4 break 7: an answer of 19,999 routes and the config's one fill the limit of 20,000 (added %d, %d routes: %s)",
               added, cfg.nroutes, err);
        else
            OK(added == -1 && strstr(err, "prometheus http://127.0.0.1:9: more than 20000 routes in bedtop_route_status; narrow them with --match"),
               "r4 break 7: one more route is refused, naming the limit (%d: %s)", added, err);
        bt_prom_free(&doc);
        bt_config_free(&cfg);
        bt_buf_free(&b);
    }
    struct bt_buf b = {0};
    bt_buf_puts(&b, "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
                    "{\"metric\":{\"route\":\"a\",\"model_id\":\"m\"},\"value\":[1,\"1\"]},"
                    "{\"metric\":{\"route\":\"a\",\"model_id\":\"m2\"},\"value\":[1,\"1\"]},"
                    "{\"metric\":{\"route\":\"b\",\"model_id\":\"m\"},\"value\":[1,\"1\"]}]}}");
    struct bt_prom_doc doc;
    char err[256] = "";
    bt_prom_init(&doc);
    bt_prom_parse_api(&doc, NULL, b.buf, b.len, err, sizeof err);
    struct bt_config cfg;
    bt_config_defaults(&cfg);
    int added = bt_promsrc_add_routes(&doc, &cfg, "x", err, sizeof err);
    OK(added == 2 && cfg.nroutes == 2 && !strcmp(cfg.routes[0].model, "m"),
       "discovery: a route answered twice is one route, with its first series' model (%d)", added);
    bt_prom_free(&doc);
    bt_config_free(&cfg);
    bt_buf_free(&b);
}

/* The exposition at t without the series that name the instant itself (the ages and
 * the evaluation's timestamp): what serve may keep from one evaluation to the next. */
static void expo_at(const struct bt_config *cfg, const struct bt_store *st, int64_t t,
                    struct bt_buf *out, int64_t *changes)
{
    struct bt_report rep;
    bt_report_build(&rep, cfg, st, t);
    struct bt_buf b = {0};
    bt_expo_render(&rep, BT_EXPO_TEXT, &b);
    *changes = bt_expo_changes_at(&rep);
    bt_report_free(&rep);
    out->len = 0;
    for (const char *l = bt_buf_str(&b); *l;) {
        const char *e = strchr(l, '\n');
        size_t n = e ? (size_t)(e - l) + 1 : strlen(l);
        if (strncmp(l, "bedtop_data_age_seconds{", 24) && strncmp(l, "bedtop_evaluation_timestamp_seconds ", 36))
            bt_buf_add(out, l, n);
        l += n;
    }
    bt_buf_puts(out, "");
    bt_buf_free(&b);
}

/* Issue 38: serve keeps one evaluation per data generation until bt_expo_changes_at.
 * The round trip's route and quota, polled at 10:10:00 (CloudWatch OK, minute 10:07; 3 %
 * headroom, crit), nothing after:
 * stale once now - last_ok > stale_after = max(3 x 60, 300 + 60 with the adaptive
 * cadence) = 360 s, so from 10:16:01 = T0 + 961. With an admission scrape at 10:10 too,
 * the counters fall silent first: once floor(now) > 10:10 + 180 + 60 s, at 10:15:00 =
 * T0 + 900. Every second from 10:10:00 to then renders what 10:10:00 rendered (the ages
 * and the evaluation's timestamp aside); at it the route is stale (a STALE warning; with
 * CloudWatch stale, status 3, unknown): what serve evaluates again for. */
/* The value of the route's bedtop_route_status sample, -1: none. */
static int route_status(const char *text)
{
    const char *l = strstr(text, "\nbedtop_route_status{");
    const char *e = l ? strchr(l + 1, '\n') : NULL;
    if (!e)
        return -1;
    while (e > l && e[-1] != ' ')
        e--;
    return atoi(e);
}

static void changes_at_case(bool admission, int64_t want)
{
    struct bt_config cfg;
    struct bt_store st;
    route_setup(&cfg, &st);
    const int64_t now = T0 + 600, m = T0 + 420;
    struct bt_event ok = {.t = now, .type = BT_EV_OK, .route = 0, .source = BT_SRC_CLOUDWATCH};
    bt_model_event(&st, cfg.routes, &ok);
    struct bt_event q = {.t = now - 20, .type = BT_EV_QUOTA, .route = 0, .source = BT_SRC_QUOTAS,
                         .quota_kind = BT_Q_TPM, .value = 1000000,
                         .quota_source = BT_QS_SERVICE_QUOTAS, .code = "L-HOT"};
    bt_model_event(&st, cfg.routes, &q);
    const enum bt_signal sig[] = {BT_SIG_INVOCATIONS, BT_SIG_INPUT_TOKENS, BT_SIG_OUTPUT_TOKENS,
                                  BT_SIG_ESTIMATED_TPM};
    const double v[] = {100, 920000, 10000, 970000};
    for (size_t i = 0; i < BT_ARRAY_LEN(sig); i++) {
        struct bt_sample smp = {m, 0, sig[i], v[i]};
        bt_store_add(&st, &smp, now - 20);
    }
    if (admission) {
        struct bt_event aok = {.t = now, .type = BT_EV_OK, .route = 0, .source = BT_SRC_ADMISSION};
        bt_model_event(&st, cfg.routes, &aok);
        struct bt_sample smp = {now, 0, BT_SIG_ADM_IN_FLIGHT, 4};
        bt_store_add(&st, &smp, now);
    }
    const char *what = admission ? "with admission counters" : "CloudWatch alone";
    struct bt_buf first = {0}, later = {0};
    int64_t until, u2;
    expo_at(&cfg, &st, now, &first, &until);
    OK(until == want, "%s: the clock alone changes a figure first at T0 + %lld (want %lld)", what,
       (long long)(until - T0), (long long)(want - T0));
    OK(route_status(bt_buf_str(&first)) == 2, "%s: at 10:10:00 the route is crit (3 %% headroom: %d)", what,
       route_status(bt_buf_str(&first)));
    int same = 0;
    for (int64_t t = now + 1; t < until && t < now + 3600; t++) {
        expo_at(&cfg, &st, t, &later, &u2);
        same += !strcmp(bt_buf_str(&later), bt_buf_str(&first)) && u2 == until;
    }
    OK(same == (int)(until - now - 1), "%s: each of the %lld seconds before it renders the same series (%d did)",
       what, (long long)(until - now - 1), same);
    expo_at(&cfg, &st, until, &later, &u2);
    OK(!strstr(bt_buf_str(&first), "code=\"STALE\"") && strstr(bt_buf_str(&later), "code=\"STALE\""),
       "%s: at it the series change: the route is stale (bedtop_warning{code=\"STALE\"})", what);
    /* CloudWatch stale: nothing is read (unknown); counters silent: CloudWatch's crit stands
     * (a known emergency beats doubt) */
    OK(route_status(bt_buf_str(&later)) == (admission ? 2 : 3), "%s: ... status %d", what,
       route_status(bt_buf_str(&later)));
    bt_buf_free(&first);
    bt_buf_free(&later);
    bt_store_free(&st);
    bt_config_free(&cfg);
}

static void test_changes_at(void)
{
    changes_at_case(false, T0 + 961);
    changes_at_case(true, T0 + 900);
}

/* Issue 26 break 6: user:password@ in --source or --endpoint-url never reaches a message. */
static void test_url_redact(void)
{
    char out[256];
    bt_url_redact("http://bob:hunter2@127.0.0.1:9090/path?token=x#f", out, sizeof out);
    OK(!strcmp(out, "http://bob:***@127.0.0.1:9090/path?token=***"), "break 6: user:password@ -> user:***@, query values *** (issue 37), no fragment (%s)", out);
    bt_url_redact("https://TOKEN@host/", out, sizeof out);
    OK(!strcmp(out, "https://***@host/"), "break 6: a user alone (maybe a token) -> ***@ (%s)", out);
    bt_url_redact("http://a:b@c@host:1/x@y", out, sizeof out);
    OK(!strcmp(out, "http://a:***@host:1/x@y"), "break 6: the last @ of the authority ends the user part (%s)", out);
    bt_url_redact("http://127.0.0.1:9090", out, sizeof out);
    OK(!strcmp(out, "http://127.0.0.1:9090"), "break 6: a URL without credentials unchanged");
}

/* A streamed render's pieces (serve gzips each as it comes, issue 38). */
struct pieces {
    struct bt_buf joined, gz;
    struct bt_gzip *z;
    int n;
    size_t largest;
};

static void piece(void *arg, const char *p, size_t n)
{
    struct pieces *k = arg;
    k->n++;
    if (n > k->largest)
        k->largest = n;
    bt_buf_add(&k->joined, p, n);
    bt_gzip_write(k->z, p, n, &k->gz);
}

/* Issue 38: serve renders a new generation piece by piece into its gzip, never the
 * whole plain body. 100 routes, each with a minute of usage: the body is ~5 kB a route
 * (~520 kB), so it comes in pieces of about 64 kB (at least 7), which joined are the
 * bytes bt_expo_render appends, in both formats; the gzip made of them inflates to
 * those bytes (bt_gunzip, and zlib itself), and a cut or damaged gzip does not. */
static void test_streamed(void)
{
    struct bt_config cfg;
    struct bt_store st;
    bt_config_init(&cfg);
    for (int i = 0; i < 100; i++) {
        char name[32];
        snprintf(name, sizeof name, "r%03d", i);
        int r = bt_config_add_route(&cfg, name);
        struct bt_route *rt = &cfg.routes[r];
        snprintf(rt->model, sizeof rt->model, "anthropic.claude-3-haiku-20240307-v1:0-s%d", i);
        bt_strlcpy(rt->region, "us-east-1", sizeof rt->region);
        rt->max_tokens = 500;
        rt->quota[BT_Q_TPM].value = 1000000;
        rt->quota[BT_Q_TPM].source = BT_QS_CONFIG;
    }
    bt_config_finish(&cfg);
    bt_store_init(&st, cfg.nroutes, 1440);
    bt_store_bind_routes(&st, cfg.routes);
    const int64_t now = T0 + 600, m = T0 + 420;
    for (int i = 0; i < cfg.nroutes; i++) {
        struct bt_event ok = {.t = now, .type = BT_EV_OK, .route = i, .source = BT_SRC_CLOUDWATCH};
        bt_model_event(&st, cfg.routes, &ok);
        struct bt_sample a = {m, i, BT_SIG_INVOCATIONS, 10 + i}, b = {m, i, BT_SIG_INPUT_TOKENS, 1000.0 * i};
        bt_store_add(&st, &a, now - 20);
        bt_store_add(&st, &b, now - 20);
    }
    struct bt_report rep;
    bt_report_build(&rep, &cfg, &st, now);
    for (int f = 0; f < 2; f++) {
        enum bt_expo_format fmt = f ? BT_EXPO_OPENMETRICS : BT_EXPO_TEXT;
        struct bt_buf whole = {0}, back = {0};
        bt_expo_render(&rep, fmt, &whole);
        struct pieces k = {.z = bt_gzip_new()};
        struct bt_expo_sink sink = {.write = piece, .arg = &k};
        bt_expo_render_to(&rep, fmt, &sink);
        OK(bt_gzip_end(k.z, &k.gz), "%s: the streamed gzip ends", f ? "openmetrics" : "text");
        OK(whole.len > 400 * 1024 && k.n >= 7 && k.largest < 80 * 1024,
           "%s: %zu bytes in %d pieces, the largest %zu bytes", f ? "openmetrics" : "text",
           whole.len, k.n, k.largest);
        OK(k.joined.len == whole.len && !memcmp(k.joined.buf, whole.buf, whole.len),
           "%s: the pieces joined are bt_expo_render's bytes", f ? "openmetrics" : "text");
        OK(bt_gunzip(k.gz.buf, k.gz.len, &back) && back.len == whole.len &&
               !memcmp(back.buf, whole.buf, whole.len),
           "%s: the streamed gzip (%zu bytes) inflates to them", f ? "openmetrics" : "text", k.gz.len);
        /* zlib's own reader agrees (not only bedtop's inflate) */
        char *z = malloc(whole.len + 1);
        z_stream s;
        memset(&s, 0, sizeof s);
        inflateInit2(&s, 15 + 16);
        s.next_in = (Bytef *)k.gz.buf;
        s.avail_in = (uInt)k.gz.len;
        s.next_out = (Bytef *)z;
        s.avail_out = (uInt)whole.len + 1;
        int r = inflate(&s, Z_FINISH);
        OK(r == Z_STREAM_END && s.total_out == whole.len && !memcmp(z, whole.buf, whole.len),
           "%s: zlib inflates the streamed gzip to the same bytes", f ? "openmetrics" : "text");
        inflateEnd(&s);
        free(z);
        bt_buf_reset(&back);
        OK(!bt_gunzip(k.gz.buf, k.gz.len - 9, &back), "a cut gzip does not inflate");
        bt_buf_reset(&back);
        k.gz.buf[k.gz.len / 2] ^= 0x55;
        OK(!bt_gunzip(k.gz.buf, k.gz.len, &back), "a damaged gzip does not inflate");
        bt_buf_reset(&back);
        OK(!bt_gunzip("", 0, &back) && !bt_gunzip("not gzip", 8, &back), "nothing, or not gzip: false");
        bt_buf_free(&back);
        bt_buf_free(&whole);
        bt_buf_free(&k.joined);
        bt_buf_free(&k.gz);
    }
    bt_report_free(&rep);
    bt_store_free(&st);
    bt_config_free(&cfg);
}

int main(void)
{
    test_cost();
    test_negotiation();
    test_conditional();
    test_round_trip();
    test_streamed();
    test_changes_at();
    test_source_hostile();
    test_url_redact();
    test_discovery_bound();
    return tap_done();
}
