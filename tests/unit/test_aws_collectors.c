/* The CloudWatch and Service Quotas collectors end to end, in process: real
 * HTTP over loopback to tests/fake/fake_aws.py (which verifies every SigV4
 * signature), the real HTTP layer, credential chain, store and model events.
 * Expected numbers are the scenario's constants (scenario_integration.json);
 * page counts are worked out by hand next to each check. Then the fault
 * cases: each must end in a clear error event and no data, never a crash, and
 * no output may carry a secret. */
#include <cjson/cJSON.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collectors/awsgroup.h"
#include "collectors/cloudwatch.h"
#include "collectors/cw_insights.h"
#include "net/http.h"
#include "collectors/quotas.h"
#include "core/config.h"
#include "core/util.h"
#include "io/file.h"
#include "io/conffile.h"
#include "tests/tap.h"

#define SK "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
#define TOKEN "IQoJb3JpZ2luX2VjEXAMPLESESSIONTOKENVALUE"

static char tmpdir[256];
static pid_t fake_pid;

static bool start_fake(const char *scenario, const char *log, int *port)
{
    int fds[2];
    if (pipe(fds) != 0)
        return false;
    char fake[1024];
    snprintf(fake, sizeof fake, "%s/tests/fake/fake_aws.py", tap_srcdir());
    fake_pid = fork();
    if (fake_pid == 0) {
        dup2(fds[1], 1);
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 2);
        close(fds[0]);
        execlp("python3", "python3", fake, "--port", "0", "--scenario", scenario, "--log", log,
               "--session-token", TOKEN, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    FILE *f = fdopen(fds[0], "r");
    char line[128];
    *port = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "PORT %d", port) == 1)
            break;
    /* keep the pipe open: the fake may print more */
    return *port > 0;
}

static void stop_fake(void)
{
    if (fake_pid > 0) {
        kill(fake_pid, SIGTERM);
        waitpid(fake_pid, NULL, 0);
        fake_pid = 0;
    }
}

struct run {
    struct bt_config cfg;
    struct bt_store store;
    struct bt_http *http;
    struct bt_ctx ctx;
    int64_t now;
    char stderr_path[300];
    char *errout;            /* everything written to stderr during the run */
};

/* Runs both collectors once (check mode) against endpoint; stderr captured. */
static void run_once(struct run *r, const char *endpoint)
{
    char err[512];
    char conf[1024];
    memset(r, 0, sizeof *r);
    snprintf(conf, sizeof conf, "%s/tests/fake/integration.conf", tap_srcdir());
    bt_config_init(&r->cfg);
    if (!bt_config_load(&r->cfg, conf, err, sizeof err))
        printf("# config: %s\n", err);
    bt_store_init(&r->store, r->cfg.nroutes, r->cfg.history_minutes);
    bt_store_bind_routes(&r->store, r->cfg.routes);
    r->http = bt_http_new(1);
    bt_http_set_backoff(r->http, 0.05, 0.2);
    r->ctx = (struct bt_ctx){.cfg = &r->cfg, .store = &r->store, .http = r->http,
                             .mode = BT_MODE_ONCE, .verbose = 1, .endpoint_url = endpoint};
    snprintf(r->stderr_path, sizeof r->stderr_path, "%s/stderr.txt", tmpdir);
    fflush(stderr);
    int saved = dup(2);
    int fd = open(r->stderr_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(fd, 2);
    close(fd);

    void *cw = bt_cloudwatch_collector.create(&r->ctx);
    void *sq = bt_quotas_collector.create(&r->ctx);
    r->now = (int64_t)time(NULL);
    if (cw)
        bt_cloudwatch_collector.tick(cw, r->now);
    if (sq)
        bt_quotas_collector.tick(sq, r->now);
    /* a guard against hanging forever, not a timing assertion */
    for (int i = 0; i < 600; i++) {
        bool busy = (cw && bt_cloudwatch_collector.busy(cw)) || (sq && bt_quotas_collector.busy(sq));
        if (!busy)
            break;
        bt_http_poll(r->http, 100, -1, NULL);
    }
    OK(cw && !bt_cloudwatch_collector.busy(cw) && bt_cloudwatch_collector.next_due(cw) == INT64_MAX,
       "check mode: cloudwatch finished and wants no more ticks");
    OK(sq && !bt_quotas_collector.busy(sq), "check mode: quotas finished");
    bt_http_free(r->http);
    r->http = NULL;
    bt_cloudwatch_collector.destroy(cw);
    bt_quotas_collector.destroy(sq);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    r->errout = bt_read_file(r->stderr_path, 1 << 24, NULL);
}

static void run_free(struct run *r)
{
    free(r->errout);
    bt_store_free(&r->store);
    bt_config_free(&r->cfg);
}

static int route_of(const struct run *r, const char *name)
{
    return bt_config_find_route(&r->cfg, name);
}

/* The event texts of one type, joined. */
static void events_text(const struct run *r, enum bt_event_type type, enum bt_source src,
                        struct bt_buf *out)
{
    for (uint64_t i = 0; i < r->store.nevents; i++) {
        const struct bt_event *e = bt_store_event_at(&r->store, i);
        if (e && e->type == type && e->source == src)
            bt_buf_printf(out, "%s | ", e->text);
    }
}

static bool no_secret(const char *s)
{
    return !s || (!strstr(s, SK) && !strstr(s, TOKEN) && !strstr(s, "Signature="));
}

static void secrets_check(const struct run *r, const char *what)
{
    struct bt_buf ev = {0};
    for (uint64_t i = 0; i < r->store.nevents; i++) {
        const struct bt_event *e = bt_store_event_at(&r->store, i);
        if (e)
            bt_buf_printf(&ev, "%s %s\n", e->code, e->text);
    }
    OK(no_secret(r->errout) && no_secret(bt_buf_str(&ev)),
       "%s: no secret key, session token or signature in stderr or events", what);
    bt_buf_free(&ev);
}

struct logstat {
    int lines, sig_bad, token_bad;
    int op_count[5], op_ok[5];
    int throttled_gmd, expired, skewed, max_queries, min_queries;
};
static const char *const ops[5] = {"GetMetricData", "ListMetrics", "ListServiceQuotas",
                                   "ListAWSDefaultServiceQuotas", "GetServiceQuota"};

static void read_log(const char *path, struct logstat *ls)
{
    memset(ls, 0, sizeof *ls);
    ls->min_queries = 1 << 30;
    char *text = bt_read_file(path, 1 << 26, NULL);
    for (char *line = text; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        cJSON *j = cJSON_Parse(line);
        if (j) {
            ls->lines++;
            const cJSON *sig = cJSON_GetObjectItem(j, "sig_ok");
            const cJSON *tok = cJSON_GetObjectItem(j, "token_ok");
            ls->sig_bad += !cJSON_IsTrue(sig);
            ls->token_bad += !cJSON_IsTrue(tok);
            const char *op = cJSON_GetStringValue(cJSON_GetObjectItem(j, "op"));
            const char *fault = cJSON_GetStringValue(cJSON_GetObjectItem(j, "fault"));
            const char *error = cJSON_GetStringValue(cJSON_GetObjectItem(j, "error"));
            double status = cJSON_GetNumberValue(cJSON_GetObjectItem(j, "status"));
            for (int i = 0; i < 5; i++) {
                if (op && strcmp(op, ops[i]) == 0) {
                    ls->op_count[i]++;
                    ls->op_ok[i] += status == 200;
                }
            }
            if (op && !strcmp(op, "GetMetricData") && fault && !strcmp(fault, "throttle"))
                ls->throttled_gmd++;
            if (error && strstr(error, "ExpiredToken"))
                ls->expired++;
            if (fault && !strcmp(fault, "skew"))
                ls->skewed++;
            if (error && !strcmp(error, "InvalidSignatureException"))
                ls->skewed++;
            const cJSON *body = cJSON_GetObjectItem(j, "body");
            const cJSON *q = cJSON_GetObjectItem(body, "MetricDataQueries");
            if (cJSON_IsArray(q)) {
                int n = cJSON_GetArraySize(q);
                ls->max_queries = n > ls->max_queries ? n : ls->max_queries;
                ls->min_queries = n < ls->min_queries ? n : ls->min_queries;
            }
            cJSON_Delete(j);
        }
        line = nl ? nl + 1 : line + strlen(line);
    }
    free(text);
}

static double at(const struct run *r, const char *route, enum bt_signal s, int64_t m)
{
    return bt_store_at(&r->store, route_of(r, route), s, m);
}

static void test_integration(void)
{
    char scen[1024], log[300];
    snprintf(scen, sizeof scen, "%s/tests/fake/scenario_integration.json", tap_srcdir());
    snprintf(log, sizeof log, "%s/integration.log", tmpdir);
    int port = 0;
    bool started = start_fake(scen, log, &port);
    OK(started, "fake AWS started on 127.0.0.1:%d", port);
    char ep[64];
    snprintf(ep, sizeof ep, "http://127.0.0.1:%d", port);
    struct run r;
    run_once(&r, ep);
    stop_fake();

    /* the last complete minute; the scenario's series are constants */
    int64_t m = bt_minute_floor(r.now) - 60;
    int tr = route_of(&r, "triage"), ba = route_of(&r, "batch"), ag = route_of(&r, "agents");
    OK(tr >= 0 && ba >= 0 && ag >= 0, "three routes from integration.conf");
    NEAR(at(&r, "triage", BT_SIG_INPUT_TOKENS, m), 300000, 0, "triage input tokens");
    NEAR(at(&r, "triage", BT_SIG_OUTPUT_TOKENS, m), 50000, 0, "triage output tokens");
    NEAR(at(&r, "triage", BT_SIG_INVOCATIONS, m), 100, 0, "triage invocations");
    NEAR(at(&r, "triage", BT_SIG_CACHE_WRITE, m), 20000, 0,
         "triage cache write, published as CacheWriteInputTokens (ListMetrics spelling)");
    NEAR(at(&r, "triage", BT_SIG_CACHE_READ, m), 80000, 0, "triage cache read (other spelling)");
    NEAR(at(&r, "triage", BT_SIG_ESTIMATED_TPM, m), 500000, 0, "triage EstimatedTPMQuotaUsage");
    NEAR(at(&r, "triage", BT_SIG_THROTTLES, m), 0, 0, "triage throttles: a real zero");
    NEAR(at(&r, "triage", BT_SIG_LATENCY_P50, m), 900, 0, "triage latency p50");
    NEAR(at(&r, "triage", BT_SIG_LATENCY_P99, m), 4100, 0, "triage latency p99");
    OK(isnan(at(&r, "triage", BT_SIG_LATENCY_P90, m)), "p90 not served: stays missing, not 0");
    NEAR(at(&r, "triage", BT_SIG_INPUT_TOKENS, m - 9 * 60), 300000, 0,
         "check mode backfills at least 10 minutes");
    NEAR(at(&r, "batch", BT_SIG_INVOCATIONS, m), 10, 0, "batch invocations");
    NEAR(at(&r, "batch", BT_SIG_OUTPUT_TOKENS, m), 700, 0, "batch output tokens");
    NEAR(at(&r, "agents", BT_SIG_INVOCATIONS, m), 20, 0, "agents (mantle) Inferences");
    NEAR(at(&r, "agents", BT_SIG_INPUT_TOKENS, m), 90000, 0, "agents (mantle) TotalInputTokens");
    NEAR(at(&r, "agents", BT_SIG_OUTPUT_TOKENS, m), 30000, 0,
         "agents (mantle) TotalOutputTokens, by Model alone although project = default is set");

    const struct bt_route *rt = r.cfg.routes;
    OK(tr >= 0 && rt[tr].quota[BT_Q_TPM].value == 2000000 &&
           rt[tr].quota[BT_Q_TPM].source == BT_QS_SERVICE_QUOTAS &&
           !strcmp(rt[tr].quota[BT_Q_TPM].code, "L-SON45CR"),
       "triage (us.) TPM: the applied cross-region 2,000,000, not on-demand, global or the default");
    OK(tr >= 0 && rt[tr].quota[BT_Q_RPM].value == 2000, "triage RPM 2,000");
    /* 1,000,000,000 tokens per day, doubled for cross-region calls */
    OK(tr >= 0 && rt[tr].quota[BT_Q_TPD].value == 20000000000.0, "triage TPD 20,000,000,000");
    OK(ba >= 0 && rt[ba].quota[BT_Q_TPM].value == 2000000 &&
           rt[ba].quota[BT_Q_TPM].source == BT_QS_DEFAULT,
       "batch: no applied quota, the published default 2,000,000 (source default)");
    OK(ba >= 0 && rt[ba].quota[BT_Q_RPM].value == 1000 && rt[ba].quota[BT_Q_TPD].value == 2880000000.0,
       "batch: default RPM and (on-demand, not doubled) TPD");
    OK(ag >= 0 && rt[ag].quota[BT_Q_INPUT_TPM].value == 20000000 &&
           rt[ag].quota[BT_Q_INPUT_TPM].source == BT_QS_CONFIG && isnan(rt[ag].quota[BT_Q_TPM].value),
       "agents (mantle): config quotas untouched, nothing from Service Quotas");
    bool all_ok = true;
    for (int i = 0; i < r.cfg.nroutes; i++) {
        const struct bt_source_status *s = bt_store_status_c(&r.store, i, BT_SRC_CLOUDWATCH);
        all_ok = all_ok && s->last_ok > 0 && s->last_error == 0;
    }
    OK(all_ok, "every route: CloudWatch OK event, no error");
    OK(bt_store_status_c(&r.store, tr, BT_SRC_QUOTAS)->last_ok > 0 &&
           bt_store_status_c(&r.store, ba, BT_SRC_QUOTAS)->last_ok > 0,
       "runtime routes: quotas OK event");

    struct logstat ls;
    read_log(log, &ls);
    OK(ls.lines > 0 && ls.sig_bad == 0 && ls.token_bad == 0,
       "fake log: all %d requests signature-verified with the session token", ls.lines);
    /* check mode asks both cache spellings instead of a ListMetrics round trip:
     * (14 + 2) + (14 + 2) + 3 = 35 per-minute queries (agents: the 3 of its 4 mantle
     * metrics AWS/BedrockMantle lists; InferenceClientErrors is not listed, so it is
     * not asked: unknown, not idle): one request (<= 500); 7 results per page:
     * ceil(35 / 7) = 5 pages, plus the first attempt, throttled and retried; and the
     * day's sums in their own request: input, output, cache write and cache read (its
     * own day sum since issue 36), each cache metric in both spellings: (4 + 2) x 2
     * runtime routes = 12 queries, ceil(12 / 7) = 2 pages (the throttle rule may hit
     * either request first) */
    OK(ls.throttled_gmd == 1 && ls.op_count[0] == 8 && ls.op_ok[0] == 7,
       "GetMetricData: 1 throttled + 5 + 2 pages of 7 results (got %d requests, %d ok)",
       ls.op_count[0], ls.op_ok[0]);
    OK(ls.max_queries == 35 && ls.min_queries == 12,
       "pages ask the 35 per-minute queries or the 12 day sums (%d..%d)", ls.min_queries, ls.max_queries);
    /* AWS/BedrockMantle's dimension sets decide what the mantle route asks (DOMAIN.md:
     * a wrong set returns zeros): one ListMetrics page there; in AWS/Bedrock one page
     * listing only the reserved tier's series (ResolvedServiceTier=reserved), which
     * decides whether that tier is asked */
    OK(ls.op_count[1] == 2, "check: two ListMetrics pages, the reserved tier's and mantle's (got %d)",
       ls.op_count[1]);
    /* 8 applied quotas at page sizes 3, 0, 1, 1, ...: 3|0|1|1|1|1|1 = 7 pages */
    OK(ls.op_count[2] == 7 && ls.op_ok[2] == 7,
       "ListServiceQuotas: 7 pages, short and empty ones followed (got %d)", ls.op_count[2]);
    /* 4 default quotas, 2 per page: 2 pages, asked once (batch lacked a TPM quota) */
    OK(ls.op_count[3] == 2 && ls.op_ok[3] == 2, "ListAWSDefaultServiceQuotas: 2 pages (got %d)",
       ls.op_count[3]);
    secrets_check(&r, "integration");
    run_free(&r);
}

/* A fault scenario: the integration data plus faults (JSON text). */
static void write_scenario(const char *path, const char *extra)
{
    char src[1024];
    snprintf(src, sizeof src, "%s/tests/fake/scenario_integration.json", tap_srcdir());
    char *text = bt_read_file(src, 1 << 20, NULL);
    cJSON *j = cJSON_Parse(text ? text : "{}");
    free(text);
    cJSON_DeleteItemFromObject(j, "faults");
    cJSON *x = cJSON_Parse(extra);
    cJSON *it = x ? x->child : NULL;
    while (it) {
        cJSON *next = it->next;
        cJSON_DeleteItemFromObject(j, it->string);
        cJSON_AddItemToObject(j, it->string, cJSON_Duplicate(it, 1));
        it = next;
    }
    cJSON_Delete(x);
    char *out = cJSON_Print(j);
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(out, f);
        fclose(f);
    }
    cJSON_free(out);
    cJSON_Delete(j);
}

static void fault_case(const char *name, const char *extra, bool want_ok, const char *want_text)
{
    char scen[300], log[300];
    snprintf(scen, sizeof scen, "%s/%s.json", tmpdir, name);
    snprintf(log, sizeof log, "%s/%s.log", tmpdir, name);
    write_scenario(scen, extra);
    int port;
    if (!start_fake(scen, log, &port)) {
        OK(false, "%s: fake started", name);
        return;
    }
    char ep[64];
    snprintf(ep, sizeof ep, "http://127.0.0.1:%d", port);
    struct run r;
    run_once(&r, ep);
    stop_fake();
    struct bt_buf errs = {0};
    events_text(&r, BT_EV_ERROR, BT_SRC_CLOUDWATCH, &errs);
    int tr = route_of(&r, "triage");
    const struct bt_source_status *s = bt_store_status_c(&r.store, tr, BT_SRC_CLOUDWATCH);
    double v = at(&r, "triage", BT_SIG_INPUT_TOKENS, bt_minute_floor(r.now) - 60);
    if (want_ok) {
        OK(s->last_ok > 0 && s->last_error == 0 && v == 300000,
           "%s: recovered, data arrived (%s)", name, bt_buf_str(&errs));
    } else {
        OK(s->last_error > 0 && s->last_ok == 0 && isnan(v), "%s: error event, no data", name);
        OK(strstr(bt_buf_str(&errs), want_text) != NULL,
           "%s: the error says '%s': %.200s", name, want_text, bt_buf_str(&errs));
    }
    struct logstat ls;
    read_log(log, &ls);
    if (!strcmp(name, "expired-token"))
        OK(ls.expired >= 1, "%s: the fake answered ExpiredTokenException first", name);
    if (!strcmp(name, "clock-skew"))
        OK(ls.skewed >= 1, "%s: the fake refused the skewed signature first", name);
    OK(ls.sig_bad == 0 || !strcmp(name, "clock-skew"), "%s: signatures verified", name);
    secrets_check(&r, name);
    bt_buf_free(&errs);
    run_free(&r);
}

static void test_faults(void)
{
    fault_case("5xx-burst",
               "{\"faults\":[{\"op\":\"*\",\"nth\":1,\"count\":0,\"action\":\"5xx\",\"status\":503}]}",
               false, "after 3 attempts");
    bt_awsgroup_set_timeout(0.5);
    fault_case("timeout",
               "{\"faults\":[{\"op\":\"GetMetricData\",\"nth\":1,\"count\":0,\"action\":\"hang\",\"secs\":20}]}",
               false, "cloudwatch us-east-1: ");
    bt_awsgroup_set_timeout(0);
    fault_case("truncated",
               "{\"faults\":[{\"op\":\"GetMetricData\",\"nth\":1,\"count\":0,\"action\":\"truncate\"}]}",
               false, "cloudwatch us-east-1: ");
    fault_case("malformed",
               "{\"faults\":[{\"op\":\"GetMetricData\",\"nth\":1,\"count\":0,\"action\":\"malformed\"}]}",
               false, "malformed JSON");
    fault_case("expired-token",
               "{\"faults\":[{\"op\":\"GetMetricData\",\"nth\":1,\"count\":1,\"action\":\"expired_token\"}]}",
               true, "");
    fault_case("clock-skew", "{\"clock_offset\":900}", true, "");

    /* connection refused: a port nothing listens on */
    struct run r;
    run_once(&r, "http://127.0.0.1:9");
    struct bt_buf errs = {0};
    events_text(&r, BT_EV_ERROR, BT_SRC_CLOUDWATCH, &errs);
    OK(strstr(bt_buf_str(&errs), "cloudwatch us-east-1: ") &&
           strstr(bt_buf_str(&errs), "(http://127.0.0.1:9"),
       "connection refused: names the endpoint: %.160s", bt_buf_str(&errs));
    OK(r.store.nsamples == 0, "connection refused: no data");
    bt_buf_reset(&errs);
    events_text(&r, BT_EV_ERROR, BT_SRC_QUOTAS, &errs);
    OK(strstr(bt_buf_str(&errs), "quotas us-east-1: ListServiceQuotas: ") != NULL,
       "connection refused: quotas error event too");
    secrets_check(&r, "connection refused");
    bt_buf_free(&errs);
    run_free(&r);
}

/* Live mode against the fake: config, store, HTTP and the CloudWatch collector,
 * polled on the tick's clock. */
struct live {
    struct bt_config cfg;
    struct bt_store store;
    struct bt_http *http;
    struct bt_ctx ctx;
    char ep[64];
    void *cw;
};

/* The adaptive cadence off for the next live_start (a test of windows and sharing, not
 * of the cadence: adaptive_cadence() is that one). */
static bool live_every_minute;

static bool live_start(struct live *lv, const char *scen, const char *log, const char *conf)
{
    char err[512];
    int port = 0;
    memset(lv, 0, sizeof *lv);
    if (!start_fake(scen, log, &port))
        return false;
    snprintf(lv->ep, sizeof lv->ep, "http://127.0.0.1:%d", port);
    bt_config_init(&lv->cfg);
    if (!bt_config_load(&lv->cfg, conf, err, sizeof err))
        printf("# config: %s\n", err);
    if (live_every_minute)
        lv->cfg.adaptive_cadence = false;
    live_every_minute = false;
    bt_store_init(&lv->store, lv->cfg.nroutes, lv->cfg.history_minutes);
    bt_store_bind_routes(&lv->store, lv->cfg.routes);
    lv->http = bt_http_new(0);
    bt_http_set_backoff(lv->http, 0.05, 0.2);
    lv->ctx = (struct bt_ctx){.cfg = &lv->cfg, .store = &lv->store, .http = lv->http,
                              .mode = BT_MODE_LIVE, .endpoint_url = lv->ep};
    lv->cw = bt_cloudwatch_collector.create(&lv->ctx);
    return true;
}

static void live_poll(struct live *lv, int64_t now)
{
    bt_cloudwatch_collector.tick(lv->cw, now);
    for (int i = 0; i < 600 && bt_cloudwatch_collector.busy(lv->cw); i++)
        bt_http_poll(lv->http, 100, -1, NULL);
}

/* live_start on the integration scenario and config, the fake's log in tmpdir/logname. */
static bool live_start_integration(struct live *lv, const char *logname)
{
    char scen[1024], log[300], conf[1024];
    snprintf(scen, sizeof scen, "%s/tests/fake/scenario_integration.json", tap_srcdir());
    snprintf(log, sizeof log, "%s/%s", tmpdir, logname);
    snprintf(conf, sizeof conf, "%s/tests/fake/integration.conf", tap_srcdir());
    return live_start(lv, scen, log, conf);
}

/* Stops the collector, HTTP and the fake; the store and config stay for checks. */
static void live_stop(struct live *lv)
{
    bt_cloudwatch_collector.destroy(lv->cw);
    bt_http_free(lv->http);
    stop_fake();
}

/* The GetMetricData requests of a fake log (first pages, answered 200): how many
 * MetricDataQueries each sent, its StartTime, whether it asked route 0's Invocations
 * (Id r0_s0), and whether AccountId sits on exactly the queries of route Ids starting
 * with acct_prefix. */
#define GMD_MAX 64
struct gmd_log {
    int n, queries[GMD_MAX], accounts_ok, model_ok, checked, lists;
    int lists_linked, lists_owned; /* ListMetrics pages with IncludeLinkedAccounts, and
                                    * with OwningAccount 111122223333 */
    int64_t start[GMD_MAX], end[GMD_MAX];
    bool invocations[GMD_MAX];
};

static void read_gmd(const char *log, const char *acct_prefix, struct gmd_log *g)
{
    memset(g, 0, sizeof *g);
    char *text = bt_read_file(log, 1 << 26, NULL);
    for (char *line = text; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        cJSON *j = cJSON_Parse(line);
        const char *op = cJSON_GetStringValue(cJSON_GetObjectItem(j, "op"));
        const cJSON *body = cJSON_GetObjectItem(j, "body");
        g->lists += op && !strcmp(op, "ListMetrics");
        if (op && !strcmp(op, "ListMetrics")) {
            const char *own = cJSON_GetStringValue(cJSON_GetObjectItem(body, "OwningAccount"));
            g->lists_linked += cJSON_IsTrue(cJSON_GetObjectItem(body, "IncludeLinkedAccounts"));
            g->lists_owned += own && !strcmp(own, "111122223333");
        }
        if (op && strcmp(op, "GetInferenceProfile") != 0) {
            g->checked++;
            g->model_ok += cJSON_IsTrue(cJSON_GetObjectItem(j, "model_ok"));
        }
        if (op && !strcmp(op, "GetMetricData") &&
            cJSON_GetNumberValue(cJSON_GetObjectItem(j, "status")) == 200 &&
            !cJSON_GetObjectItem(body, "NextToken") && g->n < GMD_MAX) {
            const cJSON *qs = cJSON_GetObjectItem(body, "MetricDataQueries"), *q;
            g->queries[g->n] = cJSON_GetArraySize(qs);
            g->start[g->n] = (int64_t)cJSON_GetNumberValue(cJSON_GetObjectItem(body, "StartTime"));
            g->end[g->n] = (int64_t)cJSON_GetNumberValue(cJSON_GetObjectItem(body, "EndTime"));
            int good = 1;
            cJSON_ArrayForEach(q, qs) {
                const char *id = cJSON_GetStringValue(cJSON_GetObjectItem(q, "Id"));
                const char *a = cJSON_GetStringValue(cJSON_GetObjectItem(q, "AccountId"));
                bool want = id && !strncmp(id, acct_prefix, strlen(acct_prefix));
                g->invocations[g->n] = g->invocations[g->n] || (id && !strcmp(id, "r0_s0"));
                good = good && (want ? a && !strcmp(a, "111122223333") : a == NULL);
            }
            g->accounts_ok += good;
            g->n++;
        }
        cJSON_Delete(j);
        line = nl ? nl + 1 : line + strlen(line);
    }
    free(text);
}

/* Live mode: three polls a minute apart (the tick's clock, not the wall's).
 * lag 120 (the default): minute m settles once now >= m + 60 + 120 + 60.
 *   poll 1 at T: [end0 - backfill, end0) with end0 = floor(T/60)*60; settled
 *          through S1 = floor((T - 240)/60)*60
 *   poll 2 at T+60: [S1 + 60, end0 + 60); poll 3: [S1 + 120, end0 + 120)
 * so each minute is fetched at most once after it settled. */
/* The series the fake says the Metrics Insights answers returned (its log's
 * "insights_series"), summed per query: [0] input tokens, [1] throttles. */
static void insights_series_logged(const char *log, int out[2])
{
    out[0] = out[1] = 0;
    char *text = bt_read_file(log, 1 << 26, NULL);
    for (char *line = text; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        cJSON *j = cJSON_Parse(line);
        const cJSON *s = cJSON_GetObjectItem(j, "insights_series");
        const cJSON *q = cJSON_GetArrayItem(
            cJSON_GetObjectItem(cJSON_GetObjectItem(j, "body"), "MetricDataQueries"), 0);
        const char *e = cJSON_GetStringValue(cJSON_GetObjectItem(q, "Expression"));
        if (cJSON_IsNumber(s) && e)
            out[strstr(e, "InvocationThrottles") != NULL] += (int)s->valuedouble;
        cJSON_Delete(j);
        line = nl ? nl + 1 : line + strlen(line);
    }
    free(text);
}

/* The unseen-caller queries in the cost forecast: each Region's two queries every 5
 * minutes, billed by the series they read. */
static void test_insights_cost(void)
{
    char log[300];
    snprintf(log, sizeof log, "%s/insights.log", tmpdir);
    struct live lv;
    if (!live_start_integration(&lv, "insights.log")) {
        OK(false, "insights cost: fake started");
        return;
    }
    void *ins = bt_cw_insights_collector.create(&lv.ctx);
    OK(ins != NULL, "insights: a live poller queries Metrics Insights");
    double day = -1;
    bt_cw_insights_cost(ins, &day);
    /* before an answer: at least the Region's 2 runtime routes (the mantle route's
     * namespace has no such query), for each of the 2 queries, 288 times a day (every
     * 300 s): 2 x 2 x 288 = 1,152 */
    OK(day == 1152, "before an answer: 2 routes x 2 queries x 288 a day = 1,152 (%g)", day);
    bt_cw_insights_collector.tick(ins, (int64_t)time(NULL));
    for (int i = 0; i < 600 && bt_cw_insights_collector.busy(ins); i++)
        bt_http_poll(lv.http, 100, -1, NULL);
    bt_cw_insights_cost(ins, &day);
    bt_cw_insights_collector.destroy(ins);
    live_stop(&lv);
    bt_store_free(&lv.store);
    bt_config_free(&lv.cfg);
    /* after: each query's series as the fake counted them; the scenario's throttles
     * are on one of the two models, so the throttle query read 1 series, not the
     * routes' 2: 288 x (2 + 1) = 864 */
    int got[2];
    insights_series_logged(log, got);
    OK(got[0] == 2 && got[1] == 1 && day == 288.0 * (got[0] + got[1]),
       "after the answers (%d and %d series): 288 x %d = 864 a day (%g)", got[0], got[1],
       got[0] + got[1], day);
}

static void test_live(void)
{
    char log[300];
    snprintf(log, sizeof log, "%s/live.log", tmpdir);
    struct live lv;
    live_every_minute = true; /* routes with no quota known may go every 5 minutes (core/cadence.c) */
    if (!live_start_integration(&lv, "live.log")) {
        OK(false, "live: fake started");
        return;
    }
    int64_t T = (int64_t)time(NULL);
    int64_t nows[3] = {T, T + 60, T + 120};
    bool due_ok = true;
    for (int p = 0; p < 3; p++) {
        live_poll(&lv, nows[p]);
        /* the next poll: on the minute grid, 10 s after the boundary */
        int64_t want = ((nows[p] - 10) / 60 + 1) * 60 + 10;
        due_ok = due_ok && bt_cloudwatch_collector.next_due(lv.cw) == want;
    }
    OK(due_ok, "live: next_due is 10 s after the next minute boundary");
    double per_poll = 0, per_day = 0;
    bt_cloudwatch_cost(lv.cw, &per_poll, &per_day);
    /* every poll, what the headroom frame needs: triage invocations, input, output,
     * throttles, average latency + the two cache metrics ListMetrics lists for it = 7,
     * batch the same 5 without caches (none listed), agents (mantle) inferences, input,
     * output = 3: 15, x 1,440 polls a day = 21,600; every 5 minutes (detail_interval 300):
     * p50, p90, p99, client and server errors, time to first token and
     * EstimatedTPMQuotaUsage for each runtime route = 14 (the mantle client errors,
     * InferenceClientErrors, are not listed for agents: not asked), x 288 = 4,032. The
     * largest poll asks 15 + 14 = 29; a day 25,632 (the adaptive cadence off: every
     * route is polled every minute). */
    OK(per_poll == 29 && per_day == 25632, "cost: 29 metrics in the largest poll, 25,632 a day (%g, %g)",
       per_poll, per_day);
    /* 3 ListMetrics pages (AWS/Bedrock) + 1 (AWS/BedrockMantle, for agents) once; poll 1
     * (with the detail queries, one window: the backfill): 29 results at 7 a page = 5
     * pages; polls 2 and 3 (every-poll queries only): 15 -> 3 pages each */
    OK(bt_cloudwatch_requests(lv.cw) == 15, "requests counted: %lu (3 + 1 + 5 + 3 + 3 = 15)",
       bt_cloudwatch_requests(lv.cw));
    live_stop(&lv);

    /* the windows sent, first page of each poll, in order */
    struct gmd_log g;
    read_gmd(log, "-", &g);
    int n = g.n < 8 ? g.n : 8, lists = g.lists;
    const int64_t *start = g.start, *end = g.end;
    int64_t end0 = T / 60 * 60, s1 = (T - 240) / 60 * 60;
    int back = bt_cloudwatch_backfill_minutes(T, BT_MODE_LIVE, lv.cfg.history_minutes);
    OK(n == 3, "live: three polls sent (%d)", n);
    OK(n == 3 && start[0] == end0 - back * 60 && end[0] == end0, "poll 1: the backfill window");
    OK(n == 3 && start[1] == s1 + 60 && end[1] == end0 + 60, "poll 2: from the first unsettled minute");
    OK(n == 3 && start[2] == s1 + 120 && end[2] == end0 + 120, "poll 3: advanced by one minute");
    int twice = 0;
    for (int64_t m = end0 - back * 60; n == 3 && m < end0 + 120; m += 60) {
        int k = 0;
        for (int p = 0; p < 3; p++)
            k += m >= start[p] && m < end[p] && nows[p] >= m + 240;
        twice += k > 1;
    }
    OK(n == 3 && twice == 0, "live: no minute fetched twice once settled");
    OK(lists == 4, "live: ListMetrics (3 pages + 1 mantle) only on the first poll, not every poll");
    bt_store_free(&lv.store);
    bt_config_free(&lv.cfg);
}


/* A test's scenario, fake log and config paths in the scratch directory (each n
 * bytes); returns the config, open for writing. */
static FILE *scratch_files(const char *name, char *scen, char *log, char *conf, size_t n)
{
    snprintf(scen, n, "%s/%s.json", tmpdir, name);
    snprintf(log, n, "%s/%s.log", tmpdir, name);
    snprintf(conf, n, "%s/%s.conf", tmpdir, name);
    return fopen(conf, "w");
}

/* Routes on one model share their queries; a route of another account asks with
 * AccountId; the detail queries go every 5 minutes and backfill the minutes
 * between. Six live polls a minute apart on the tick's clock. */
static void test_shared_and_cadence(void)
{
    char scen[400], log[400], conf[400], err[512];
    FILE *f = scratch_files("shared", scen, log, conf, sizeof scen);
    /* the adaptive cadence off: the routes have no quota (no limit known), so it would
     * ask them every 5 minutes; what is tested here is sharing and the detail tier */
    fputs("[bedtop]\nregion = us-east-1\nadaptive_cadence = no\n"
          "[route a]\nmodel = us.anthropic.claude-sonnet-4-5-20250929-v1:0\nmax_tokens = 1024\n"
          "[route b]\nmodel = us.anthropic.claude-sonnet-4-5-20250929-v1:0\nmax_tokens = 512\n"
          "[route c]\nmodel = us.anthropic.claude-sonnet-4-5-20250929-v1:0\naccount = 111122223333\n",
          f);
    fclose(f);
    /* the ticks run up to 5 minutes ahead of the wall clock: data until 10 minutes on */
    int64_t T = (int64_t)time(NULL);
    f = fopen(scen, "w");
    fprintf(f, "{\"series\":["
               "{\"namespace\":\"AWS/Bedrock\",\"metric\":\"Invocations\",\"stat\":\"Sum\",\"end\":%lld,"
               "\"dimensions\":{\"ModelId\":\"us.anthropic.claude-sonnet-4-5-20250929-v1:0\"},\"generator\":{\"constant\":100}},"
               "{\"namespace\":\"AWS/Bedrock\",\"metric\":\"InvocationLatency\",\"stat\":\"p99\",\"end\":%lld,"
               "\"dimensions\":{\"ModelId\":\"us.anthropic.claude-sonnet-4-5-20250929-v1:0\"},\"generator\":{\"constant\":4100}},"
               "{\"namespace\":\"AWS/Bedrock\",\"metric\":\"Invocations\",\"stat\":\"Sum\",\"account\":\"111122223333\",\"end\":%lld,"
               "\"dimensions\":{\"ModelId\":\"us.anthropic.claude-sonnet-4-5-20250929-v1:0\"},\"generator\":{\"constant\":7}}"
               "]}",
            (long long)(T + 600), (long long)(T + 600), (long long)(T + 600));
    fclose(f);
    struct live lv;
    if (!live_start(&lv, scen, log, conf)) {
        OK(false, "shared: fake started");
        return;
    }
    OK(lv.cfg.nroutes == 3, "shared: three routes configured");
    for (int p = 0; p < 6; p++)
        live_poll(&lv, T + 60 * p);
    double per_poll = 0, per_day = 0;
    bt_cloudwatch_cost(lv.cw, &per_poll, &per_day);
    live_stop(&lv);

    struct gmd_log g;
    read_gmd(log, "r2_", &g);
    /* ListMetrics lists no cache metric for the model (the scenario has none): per set
     * every poll invocations, input, output, throttles, average latency = 5; every 5
     * minutes p50, p90, p99, client and server errors, time to first token and the
     * estimate = 7. a and b share one set; c (another account) has its own. The
     * cadence off: all are asked every poll. */
    OK(g.n == 7 && g.queries[0] == 24, "poll 1: 24 queries for 3 routes (a and b share 12), got %d",
       g.queries[0]);
    /* polls 2-5: the every-poll 5 per set; poll 6, five minutes on, in two requests (one
     * StartTime each): the every-poll 10 from the last poll on, and the 5-minute tier's
     * 2 x 7 reaching back (the fake logs them in either order) */
    int p6 = g.n == 7 && g.queries[5] == 14 ? 5 : 6, p6r = 11 - p6;
    OK(g.n == 7 && g.queries[1] == 10 && g.queries[2] == 10 && g.queries[3] == 10 &&
           g.queries[4] == 10 && g.queries[p6] == 14 && g.queries[p6r] == 10,
       "polls 2-5 ask 2 x 5, poll 6 (5 minutes on) 2 x 5 and 2 x 7 in its own request");
    OK(g.n == 7 && g.accounts_ok == 7, "AccountId on every query of route c and no other (%d of %d)",
       g.accounts_ok, g.n);
    OK(g.checked > 0 && g.model_ok == g.checked,
       "every request fits the CloudWatch model (AccountId, IncludeLinkedAccounts): %d of %d",
       g.model_ok, g.checked);
    /* c names a source account, a and b none: every page reaches the linked accounts
     * and names no one owner */
    OK(g.lists > 0 && g.lists_linked == g.lists && g.lists_owned == 0,
       "ListMetrics: IncludeLinkedAccounts on each of %d pages (%d), no OwningAccount (%d)",
       g.lists, g.lists_linked, g.lists_owned);
    /* poll 1 settled through S1 = floor((T - 240) / 60) * 60; the detail queries of
     * poll 6 start right after it: the minutes between are backfilled; its every-poll
     * queries start after poll 5's settled minute, as polls 2-5 did */
    int64_t s1 = (T - 240) / 60 * 60, end0 = T / 60 * 60;
    OK(g.n == 7 && g.start[p6] == s1 + 60 && g.start[p6r] == s1 + 5 * 60 && g.start[4] == s1 + 4 * 60,
       "poll 6 reaches back to the first minute its detail queries have not settled, and only those");
    int a = bt_config_find_route(&lv.cfg, "a"), b = bt_config_find_route(&lv.cfg, "b"),
        c = bt_config_find_route(&lv.cfg, "c");
    /* minute end0: after poll 1's window, before where poll 6's every-poll queries start
     * (S5 + 60 = end0 + 60): only the backfill of the detail queries asks it */
    int64_t m = end0;
    OK(bt_store_at(&lv.store, b, BT_SIG_INVOCATIONS, end0 + 240) == 100 &&
           bt_store_at(&lv.store, a, BT_SIG_INVOCATIONS, end0 + 240) == 100,
       "one answer feeds both routes on the model");
    OK(bt_store_at(&lv.store, c, BT_SIG_INVOCATIONS, end0 + 240) == 7,
       "route c reads its own account's metric (7, not 100)");
    OK(bt_store_at(&lv.store, a, BT_SIG_LATENCY_P99, m) == 4100 &&
           bt_store_at(&lv.store, b, BT_SIG_LATENCY_P99, m) == 4100,
       "p99 for a minute between detail polls was backfilled by poll 6");
    /* distinct queries: 2 sets x 5 every poll (1,440 a day) + 2 x 7 every 5 minutes (288) */
    OK(per_poll == 24 && per_day == 10 * 1440 + 14 * 288, "cost: %g per poll, %g a day", per_poll,
       per_day);
    bt_store_free(&lv.store);
    bt_config_free(&lv.cfg);

    /* per route per hour, one route not listed yet (its cache metrics asked) and not
     * calm: invocations, input, output, cache read and write, throttles, average latency
     * 7 x 60 + the 5-minute tier 7 x 12 = 504 metrics, against the naive 14 x 60 = 840 */
    struct bt_config one;
    bt_config_init(&one);
    OK(bt_config_parse_string(&one, "[bedtop]\nregion = us-east-1\n[route a]\nmodel = m\n", "x", err,
                              sizeof err),
       "one-route config");
    struct bt_ctx octx = {.cfg = &one, .http = (struct bt_http *)1, .mode = BT_MODE_LIVE,
                          .endpoint_url = "http://127.0.0.1:9"};
    void *ocw = bt_cloudwatch_collector.create(&octx);
    bt_cloudwatch_cost(ocw, &per_poll, &per_day);
    OK(per_day / 24 == 504, "one runtime route: %g metrics an hour (naive 840)", per_day / 24);
    bt_cloudwatch_collector.destroy(ocw);
    bt_config_free(&one);
}

/* Every route in one source account: each ListMetrics page of the listing (one metric a
 * page here) asks that account alone (OwningAccount) with IncludeLinkedAccounts, the
 * scope found once for the listing, and the listing reaches the last page's model. */
static void test_one_source_account(void)
{
    char scen[400], log[400], conf[400];
    FILE *f = scratch_files("owner", scen, log, conf, sizeof scen);
    fputs("[bedtop]\nregion = us-east-1\nadaptive_cadence = no\n"
          "[route a]\nmodel = us.anthropic.claude-sonnet-4-5-20250929-v1:0\naccount = 111122223333\n"
          "[route b]\nmodel = anthropic.claude-3-haiku-20240307-v1:0\naccount = 111122223333\n",
          f);
    fclose(f);
    int64_t T = (int64_t)time(NULL);
    f = fopen(scen, "w");
    fprintf(f, "{\"page_size\":{\"ListMetrics\":1},\"series\":["
               "{\"namespace\":\"AWS/Bedrock\",\"metric\":\"Invocations\",\"stat\":\"Sum\",\"account\":\"111122223333\",\"end\":%lld,"
               "\"dimensions\":{\"ModelId\":\"us.anthropic.claude-sonnet-4-5-20250929-v1:0\"},\"generator\":{\"constant\":3}},"
               "{\"namespace\":\"AWS/Bedrock\",\"metric\":\"Invocations\",\"stat\":\"Sum\",\"account\":\"111122223333\",\"end\":%lld,"
               "\"dimensions\":{\"ModelId\":\"anthropic.claude-3-haiku-20240307-v1:0\"},\"generator\":{\"constant\":5}},"
               "{\"namespace\":\"AWS/Bedrock\",\"metric\":\"InputTokenCount\",\"stat\":\"Sum\",\"account\":\"111122223333\",\"end\":%lld,"
               "\"dimensions\":{\"ModelId\":\"anthropic.claude-3-haiku-20240307-v1:0\"},\"generator\":{\"constant\":900}}"
               "]}",
            (long long)(T + 600), (long long)(T + 600), (long long)(T + 600));
    fclose(f);
    struct live lv;
    if (!live_start(&lv, scen, log, conf)) {
        OK(false, "one source account: fake started");
        return;
    }
    live_poll(&lv, T);
    live_poll(&lv, T + 60);
    int b = bt_config_find_route(&lv.cfg, "b");
    int64_t end0 = T / 60 * 60;
    double inv = bt_store_at(&lv.store, b, BT_SIG_INVOCATIONS, end0 - 300);
    live_stop(&lv);
    struct gmd_log g;
    read_gmd(log, "", &g);
    /* three metrics, one a page: three pages, each the same scope */
    OK(g.lists == 3 && g.lists_linked == 3 && g.lists_owned == 3,
       "one source account: %d ListMetrics pages, %d with IncludeLinkedAccounts, %d with "
       "OwningAccount 111122223333 (want 3, 3, 3)", g.lists, g.lists_linked, g.lists_owned);
    OK(g.checked > 0 && g.model_ok == g.checked, "one source account: every request fits the "
       "CloudWatch model: %d of %d", g.model_ok, g.checked);
    OK(inv == 5, "one source account: route b reads its model's Invocations (5, got %g)", inv);
    bt_store_free(&lv.store);
    bt_config_free(&lv.cfg);
}

/* A transport failure is described by its kind, not its words: the signer's own
 * credentials message whole, anything else through the filter that keeps a quoted
 * canonical request or credential scope out ("Credential=" and after go). */
static void describe_by_kind(void)
{
    struct bt_http_resp r = {.status = 0, .attempts = 1, .url = "https://x"};
    char out[1200];
    r.kind = BT_ERR_CREDENTIALS;
    bt_strlcpy(r.transport_error, "SSO token expired\nrun aws sso login", sizeof r.transport_error);
    bt_awsgroup_describe(&r, out, sizeof out);
    OK(!strcmp(out, "SSO token expired\nrun aws sso login (https://x)"),
       "a credentials failure is kept whole (%s)", out);
    r.kind = BT_ERR_NETWORK;
    bt_strlcpy(r.transport_error, "credentials: Credential=AKIDEXAMPLE/20261129/x", sizeof r.transport_error);
    bt_awsgroup_describe(&r, out, sizeof out);
    OK(!strcmp(out, "credentials: (https://x)"),
       "a network failure that only reads like one is filtered (%s)", out);
}

/* Per poll of a fake log (GetMetricData, first pages, answered 200), by EndTime: how
 * many requests and queries, and whether route 0's Invocations (Id r0_s0) was asked. */
struct poll_log {
    int n;
    int64_t end[GMD_MAX];
    int requests[GMD_MAX], queries[GMD_MAX];
    bool invocations[GMD_MAX];
};

static void read_polls(const char *log, struct poll_log *pl)
{
    struct gmd_log g;
    read_gmd(log, "-", &g);
    memset(pl, 0, sizeof *pl);
    for (int i = 0; i < g.n; i++) {
        int k = 0;
        while (k < pl->n && pl->end[k] != g.end[i])
            k++;
        if (k == pl->n)
            pl->end[pl->n++] = g.end[i];
        pl->requests[k]++;
        pl->queries[k] += g.queries[i];
        pl->invocations[k] = pl->invocations[k] || g.invocations[i];
    }
}

/* The adaptive cadence (core/cadence.c) end to end: a route far from its quota, steady
 * and never throttled slows to a 5-minute cadence (its per-minute signals asked every
 * fifth poll, backfilled; InvocationThrottles every poll); the fake starts to throttle
 * at minute M0 + 7 and the route is asked every minute again from the next poll on;
 * the store still has every minute. Fourteen polls a simulated minute apart (the
 * tick's clock; the fake's data is fixed, nothing waits on the wall clock). */
static void adaptive_cadence(bool quota)
{
    char scen[400], log[400], conf[400];
    FILE *f = scratch_files(quota ? "cadence" : "cadence-noquota", scen, log, conf, sizeof scen);
    /* 10 calls a minute, 5,000 input + 500 output tokens, 2 s each: in flight 10/60 x 2
     * = 0.33 (Little's law), R = 500 + 1,000 = 1,500, held 500; used 5,000 + 500 x
     * burndown + 500, a few thousand tokens of a 10,000,000 quota: far below 50 %.
     * Without the quota (none configured, none listed: no limit known on any side) the
     * route is calm on the same terms, so every poll below is the same (issue 38). */
    fprintf(f, "[bedtop]\nregion = us-east-1\ninterval = 60\n"
               "[route calm]\nmodel = anthropic.claude-3-haiku-20240307-v1:0\nmax_tokens = 1000\n"
               "%s",
            quota ? "quota_tpm = 10000000\n" : "");
    fclose(f);
    const char *tag = quota ? "cadence" : "cadence, no quota known";
    int64_t T = (int64_t)time(NULL) / 60 * 60 + 10; /* polls 10 s after the minute, as live */
    int back = bt_cloudwatch_backfill_minutes(T, BT_MODE_LIVE, 1440);
    int64_t M0 = T - 10, from = M0 - (back + 60) * 60, to = M0 + 3600;
    int64_t thr_at = M0 + 7 * 60; /* the first throttled minute */
    f = fopen(scen, "w");
    fprintf(f, "{\"series\":[");
    const char *model = "anthropic.claude-3-haiku-20240307-v1:0";
    const struct { const char *metric, *stat; int v; } sig[] = {
        {"Invocations", "Sum", 10}, {"InputTokenCount", "Sum", 5000},
        {"OutputTokenCount", "Sum", 500}, {"InvocationLatency", "Average", 2000}};
    for (size_t i = 0; i < sizeof sig / sizeof sig[0]; i++)
        fprintf(f, "{\"namespace\":\"AWS/Bedrock\",\"metric\":\"%s\",\"stat\":\"%s\",\"start\":%lld,"
                   "\"end\":%lld,\"dimensions\":{\"ModelId\":\"%s\"},\"generator\":{\"constant\":%d}},",
                sig[i].metric, sig[i].stat, (long long)from, (long long)to, model, sig[i].v);
    fprintf(f, "{\"namespace\":\"AWS/Bedrock\",\"metric\":\"InvocationThrottles\",\"stat\":\"Sum\","
               "\"start\":%lld,\"dimensions\":{\"ModelId\":\"%s\"},\"values\":[",
            (long long)from, model);
    for (int64_t m = from; m <= to; m += 60)
        fprintf(f, "%s%d", m == from ? "" : ",", m < thr_at ? 0 : 3);
    fprintf(f, "]}]}");
    fclose(f);
    struct live lv;
    if (!live_start(&lv, scen, log, conf)) {
        OK(false, "%s: fake started", tag);
        return;
    }
    double cost_calm = NAN, cost_busy = NAN, day = 0;
    for (int p = 0; p < 14; p++) {
        live_poll(&lv, T + 60 * p);
        if (p == 4)
            bt_cloudwatch_cost(lv.cw, &day, &cost_calm);
        if (p == 13)
            bt_cloudwatch_cost(lv.cw, &day, &cost_busy);
    }
    live_stop(&lv);
    struct poll_log pl;
    read_polls(log, &pl);
    /* poll p at T + 60p (EndTime M0 + 60p): poll 0 backfills (not calm before any data);
     * polls 1-4 only the throttles (1 query); poll 5, five minutes on, the route's
     * per-minute signals and the 5-minute tier; polls 6-8 throttles again, and poll 8
     * (EndTime M0 + 480) fetches the first throttled minute, M0 + 420; from poll 9 on
     * the route is asked every poll. */
    bool want[14] = {true, false, false, false, false, true, false, false, false,
                     true, true, true, true, true};
    bool match = pl.n == 14;
    char seen[15] = "";
    for (int p = 0; p < pl.n && p < 14; p++) {
        seen[p] = pl.invocations[p] ? 'X' : '.';
        match = match && pl.end[p] == M0 + 60 * p && pl.invocations[p] == want[p];
    }
    OK(match, "%s: per-minute signals asked at polls 0, 5, then every poll from 9 (%s, %d polls)",
       tag, seen, pl.n);
    OK(pl.n == 14 && pl.queries[1] == 1 && pl.queries[2] == 1 && pl.queries[6] == 1 &&
           pl.queries[8] == 1,
       "%s: between a calm route's polls only InvocationThrottles is asked (%d %d %d %d)", tag,
       pl.queries[1], pl.queries[2], pl.queries[6], pl.queries[8]);
    /* every minute from the backfill start to the newest settled one: the poll at
     * T + 780 settles minute floor((T + 780 - 240) / 60) * 60 = M0 + 540 */
    int missing = 0, thr = 0;
    for (int64_t m = M0 - back * 60; m <= M0 + 540; m += 60) {
        missing += bt_store_at(&lv.store, 0, BT_SIG_INVOCATIONS, m) != 10;
        missing += bt_store_at(&lv.store, 0, BT_SIG_INPUT_TOKENS, m) != 5000;
        thr += bt_store_at(&lv.store, 0, BT_SIG_THROTTLES, m) == 3;
    }
    OK(missing == 0, "%s: the store has every minute's invocations and input (%d missing)", tag,
       missing);
    /* throttled minutes M0 + 420 .. M0 + 540: 3 */
    OK(thr == 3, "%s: the throttled minutes are in the store (%d of 3)", tag, thr);
    /* calm, per day: throttles 1 x 1,440 + the other 4 per-minute signals x 288 + the
     * 5-minute tier 7 x 288 = 1,440 + 1,152 + 2,016 = 4,608 (192 an hour); throttled:
     * 5 x 1,440 + 7 x 288 = 7,200 + 2,016 = 9,216 (384 an hour) */
    OK(cost_calm == 4608 && cost_busy == 9216,
       "%s: metrics a day calm 4,608 (192 an hour), throttled 9,216 (384 an hour): %g, %g", tag,
       cost_calm, cost_busy);
    bt_store_free(&lv.store);
    bt_config_free(&lv.cfg);
}

int main(void)
{
    describe_by_kind();
    snprintf(tmpdir, sizeof tmpdir, "%s/bedtop-awsc.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    char datadir[1100];
    snprintf(datadir, sizeof datadir, "%s/data", tap_srcdir());
    setenv("BEDTOP_DATADIR", datadir, 1);
    setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE", 1);
    setenv("AWS_SECRET_ACCESS_KEY", SK, 1);
    setenv("AWS_SESSION_TOKEN", TOKEN, 1);
    setenv("AWS_CONFIG_FILE", "/nonexistent/bedtop-test", 1);
    setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/bedtop-test", 1);
    setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
    unsetenv("AWS_PROFILE");
    unsetenv("AWS_ENDPOINT_URL");
    unsetenv("AWS_ENDPOINT_URL_CLOUDWATCH");
    unsetenv("AWS_ENDPOINT_URL_SERVICE_QUOTAS");
    signal(SIGPIPE, SIG_IGN);
    test_integration();
    test_live();
    test_insights_cost();
    test_shared_and_cadence();
    test_one_source_account();
    adaptive_cadence(true);
    adaptive_cadence(false);
    test_faults();
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        printf("# could not remove %s\n", tmpdir);
    return tap_done();
}
