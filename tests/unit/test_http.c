/* The HTTP client (net/http.c) with the AWS policy (aws/policy.c) against the fake AWS
 * endpoint (tests/fake/fake_aws.py) over real loopback HTTP: signing as verified by an
 * independent implementation,
 * standard-mode retries and budget, timeouts, resets, truncation, clock skew
 * and credential refresh. Expected counts are worked out in the comments. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <time.h>
#include <unistd.h>

#include "aws/policy.h"
#include "net/http.h"
#include "core/util.h"
#include "io/file.h"
#include "tests/tap.h"

#define AK "AKIDEXAMPLE"
#define SK "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
#define CW_JSON "application/x-amz-json-1.0"
#define T_LIST "GraniteServiceVersion20100801.ListMetrics"
#define T_GMD "GraniteServiceVersion20100801.GetMetricData"
#define MAX_LOOPS 400 /* x 100 ms: an upper bound so a broken client cannot hang the suite */

static char tmpdir[256];
static int nfake;

struct fake {
    pid_t pid;
    int port;
    char log[512];
};

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(2);
    }
    fputs(text, f);
    fclose(f);
}

/* Starts fake_aws.py with a scenario (JSON text) and an optional session token. */
static bool fake_start(struct fake *f, const char *scenario, const char *token)
{
    char scen[512], script[1024];
    int n = ++nfake;
    snprintf(scen, sizeof scen, "%s/scenario%d.json", tmpdir, n);
    snprintf(f->log, sizeof f->log, "%s/fake%d.log", tmpdir, n);
    snprintf(script, sizeof script, "%s/tests/fake/fake_aws.py", tap_srcdir());
    write_file(scen, scenario ? scenario : "{}");
    int pfd[2];
    if (pipe(pfd) != 0)
        return false;
    f->pid = fork();
    if (f->pid < 0)
        return false;
    if (f->pid == 0) {
        dup2(pfd[1], 1);
        close(pfd[0]);
        close(pfd[1]);
        if (token)
            execlp("python3", "python3", script, "--port", "0", "--log", f->log, "--scenario", scen,
                   "--session-token", token, (char *)NULL);
        else
            execlp("python3", "python3", script, "--port", "0", "--log", f->log, "--scenario", scen,
                   (char *)NULL);
        _exit(127);
    }
    close(pfd[1]);
    char buf[128];
    size_t len = 0;
    f->port = 0;
    struct pollfd p = { .fd = pfd[0], .events = POLLIN };
    while (len + 1 < sizeof buf && poll(&p, 1, 10000) > 0) {
        ssize_t r = read(pfd[0], buf + len, sizeof buf - 1 - len);
        if (r <= 0)
            break;
        len += (size_t)r;
        buf[len] = '\0';
        if (strchr(buf, '\n')) {
            long port;
            char *nl = strchr(buf, '\n');
            *nl = '\0';
            if (strncmp(buf, "PORT ", 5) == 0 && bt_parse_long(buf + 5, 1, 65535, &port))
                f->port = (int)port;
            break;
        }
    }
    close(pfd[0]);
    return f->port > 0;
}

static void fake_stop(struct fake *f)
{
    if (f->pid > 0) {
        kill(f->pid, SIGTERM);
        waitpid(f->pid, NULL, 0);
        f->pid = 0;
    }
}

/* The fake's log as a cJSON array (one object per request). */
static cJSON *fake_log(const struct fake *f)
{
    cJSON *arr = cJSON_CreateArray();
    size_t len;
    char *text = bt_read_file(f->log, 1 << 24, &len);
    if (!text)
        return arr;
    char *line = text;
    while (line && *line) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        cJSON *o = cJSON_Parse(line);
        if (o)
            cJSON_AddItemToArray(arr, o);
        line = nl ? nl + 1 : NULL;
    }
    free(text);
    return arr;
}

static const char *log_str(cJSON *log, int i, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(log, i), key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

static double log_num(cJSON *log, int i, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(log, i), key);
    return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

static bool log_true(cJSON *log, int i, const char *key)
{
    return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(log, i), key));
}

/* What a callback saw. */
struct result {
    int calls;
    long status;
    int attempts;
    char code[128], msg[256], transport[256], ctype[128];
    char *body;
    int64_t server_date;
};

static void on_done(void *arg, const struct bt_http_resp *r)
{
    struct result *res = arg;
    res->calls++;
    res->status = r->status;
    res->attempts = r->attempts;
    bt_strlcpy(res->code, r->error_code, sizeof res->code);
    bt_strlcpy(res->msg, r->error_message, sizeof res->msg);
    bt_strlcpy(res->transport, r->transport_error, sizeof res->transport);
    bt_strlcpy(res->ctype, r->content_type, sizeof res->ctype);
    free(res->body);
    res->body = bt_xmalloc(r->body_len + 1);
    memcpy(res->body, r->body, r->body_len);
    res->body[r->body_len] = '\0';
    res->server_date = r->server_date;
}

static void run(struct bt_http *h)
{
    for (int i = 0; i < MAX_LOOPS && bt_http_pending(h) > 0; i++)
        bt_http_poll(h, 100, -1, NULL);
}

static char url_buf[64];
static const char *url_of(const struct fake *f)
{
    snprintf(url_buf, sizeof url_buf, "http://127.0.0.1:%d/", f->port);
    return url_buf;
}

static struct bt_creds_provider plain_creds(void)
{
    struct bt_creds_provider p;
    memset(&p, 0, sizeof p);
    bt_strlcpy(p.creds.access_key, AK, sizeof p.creds.access_key);
    bt_strlcpy(p.creds.secret_key, SK, sizeof p.creds.secret_key);
    bt_strlcpy(p.creds.source, "test", sizeof p.creds.source);
    p.valid = true;
    return p;
}

static struct bt_http_req cw_req(const struct fake *f, struct bt_creds_provider *p, const char *target,
                                 const char *body)
{
    struct bt_http_req r = {
        .policy = &bt_aws_policy,
        .method = "POST", .url = url_of(f), .service = "monitoring", .region = "us-east-1",
        .creds = p, .target = target, .content_type = CW_JSON, .body = body,
        .body_len = body ? strlen(body) : 0, .label = "test",
    };
    return r;
}

static void result_free(struct result *r)
{
    free(r->body);
    r->body = NULL;
}

/* ------------------------------------------------------------ pure */

static void test_error_codes(void)
{
    char code[128], msg[256];
    const char *b1 = "{\"__type\":\"com.amazonaws.cloudwatch#ThrottlingException\",\"message\":\"Rate exceeded\"}";
    OK(bt_aws_error_code(b1, strlen(b1), NULL, code, sizeof code, msg, sizeof msg) == 0,
       "error code: JSON 1.0 __type found");
    STREQ(code, "ThrottlingException", "error code: namespace# stripped");
    STREQ(msg, "Rate exceeded", "error code: message");
    /* Captured botocore answer: the header carries the query-compatible code. */
    bt_aws_error_code(b1, strlen(b1), "Throttling;Sender", code, sizeof code, msg, sizeof msg);
    STREQ(code, "Throttling", "error code: x-amzn-query-error wins, before ';'");
    const char *b2 = "{\"__type\": \"TooManyRequestsException\", \"Message\": \"Rate exceeded\"}";
    bt_aws_error_code(b2, strlen(b2), NULL, code, sizeof code, msg, sizeof msg);
    STREQ(code, "TooManyRequestsException", "error code: JSON 1.1 __type");
    STREQ(msg, "Rate exceeded", "error code: Message (capital M)");
    const char *b3 = "{\"__type\":\"aws.protocoltests#FooError:http://internal.amazon.com/coral/com.amazon.coral.validate/\"}";
    bt_aws_error_code(b3, strlen(b3), NULL, code, sizeof code, msg, sizeof msg);
    STREQ(code, "FooError", "error code: ':http...' suffix and namespace stripped");
    const char *b4 = "{\"code\":\"ValidationException\",\"message\":\"bad\\nline\"}";
    bt_aws_error_code(b4, strlen(b4), NULL, code, sizeof code, msg, sizeof msg);
    STREQ(code, "ValidationException", "error code: 'code' member");
    STREQ(msg, "bad line", "error code: control characters in message replaced");
    const char *b5 = "{\"Code\":\"AccessDenied\"}";
    bt_aws_error_code(b5, strlen(b5), NULL, code, sizeof code, msg, sizeof msg);
    STREQ(code, "AccessDenied", "error code: 'Code' member");
    const char *b6 = "<ErrorResponse><Error><Type>Sender</Type><Code>Throttling</Code>"
                     "<Message>Rate exceeded</Message></Error></ErrorResponse>";
    bt_aws_error_code(b6, strlen(b6), NULL, code, sizeof code, msg, sizeof msg);
    STREQ(code, "Throttling", "error code: query protocol XML <Code>");
    STREQ(msg, "Rate exceeded", "error code: XML <Message>");
    const char *b7 = "{\"__type\": \"Thrott";
    OK(bt_aws_error_code(b7, strlen(b7), NULL, code, sizeof code, msg, sizeof msg) == -1 && !code[0],
       "error code: truncated JSON gives none");
    OK(bt_aws_error_code("", 0, NULL, code, sizeof code, msg, sizeof msg) == -1 && !code[0] && !msg[0],
       "error code: empty body gives none");
    OK(bt_aws_error_code("[1,2]", 5, NULL, code, sizeof code, msg, sizeof msg) == -1,
       "error code: a JSON array gives none");
    const char *b8 = "{\"__type\":\"A\"}{\"__type\":\"B\"}";
    bt_aws_error_code(b8, 14, NULL, code, sizeof code, msg, sizeof msg);
    STREQ(code, "A", "error code: only len bytes are read");
    char small[6];
    bt_aws_error_code(b1, strlen(b1), NULL, small, sizeof small, msg, sizeof msg);
    STREQ(small, "Throt", "error code: bounded by the output size");
    OK(bt_aws_is_throttle_code("ThrottlingException") && bt_aws_is_throttle_code("SlowDown") &&
       !bt_aws_is_throttle_code("ValidationError") && !bt_aws_is_throttle_code(NULL),
       "throttle code list");
}

/* ------------------------------------------------------------ over the wire */

static void test_signed_request(void)
{
    struct fake f;
    OK(fake_start(&f, "{}", "SESSIONTOKEN1"), "signed: fake started");
    struct bt_http *h = bt_http_new(0);
    struct bt_creds_provider p = plain_creds();
    p.creds.session_token = bt_xstrdup("SESSIONTOKEN1");
    struct result res = { 0 };
    char body[64];
    bt_strlcpy(body, "{\"Namespace\":\"AWS/Bedrock\"}", sizeof body);
    struct bt_http_req req = cw_req(&f, &p, T_LIST, body);
    OK(bt_http_submit(h, &req, on_done, &res) == 0, "signed: submitted");
    memset(body, 'x', sizeof body - 1); /* the request must have been copied */
    OK(bt_http_pending(h) == 1, "signed: one pending");
    run(h);
    OK(res.calls == 1, "signed: called back once");
    OK(res.status == 200, "signed: status 200 (got %ld %s %s)", res.status, res.code, res.transport);
    OK(res.body && strstr(res.body, "\"Metrics\"") != NULL, "signed: body delivered");
    STREQ(res.ctype, CW_JSON, "signed: content type");
    OK(res.server_date > 0, "signed: Date header parsed");
    cJSON *log = fake_log(&f);
    OK(cJSON_GetArraySize(log) == 1, "signed: one request reached the fake");
    OK(log_true(log, 0, "sig_ok"), "signed: fake verified the signature");
    OK(log_true(log, 0, "token_ok"), "signed: session token sent and signed");
    STREQ(log_str(log, 0, "target"), T_LIST, "signed: X-Amz-Target");
    STREQ(log_str(log, 0, "user_agent"), "bedtop/" BEDTOP_VERSION, "signed: User-Agent");
    OK(log_num(log, 0, "attempt") == 1, "signed: amz-sdk-request attempt=1");
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(log, 0), "body");
    const cJSON *ns = cJSON_GetObjectItemCaseSensitive(b, "Namespace");
    OK(cJSON_IsString(ns) && strcmp(ns->valuestring, "AWS/Bedrock") == 0, "signed: body copied at submit");
    cJSON_Delete(log);
    const struct bt_http_stats *st = bt_http_get_stats(h);
    OK(st->requests == 1 && st->attempts == 1 && st->retries == 0, "signed: stats 1 request 1 attempt");
    OK(st->bytes_in > 0 && st->bytes_out > strlen("{\"Namespace\":\"AWS/Bedrock\"}"), "signed: bytes counted");
    /* Unsigned request: 403 from the fake, a client error, not retried. */
    struct bt_http_req ureq = req;
    ureq.creds = NULL;
    ureq.service = NULL;
    ureq.body = "{}";
    ureq.body_len = 2;
    bt_http_submit(h, &ureq, on_done, &res);
    run(h);
    OK(res.status == 403 && res.attempts == 1, "unsigned: 403 not retried (got %ld, %d)", res.status,
       res.attempts);
    STREQ(res.code, "IncompleteSignatureException", "unsigned: error code");
    /* Without a policy the client is plain HTTP: the AWS error body is not read (an
     * admission endpoint's JSON is not an AWS error), and credentials cannot be used. */
    struct bt_http_req plain = ureq;
    plain.policy = NULL;
    bt_http_submit(h, &plain, on_done, &res);
    run(h);
    OK(res.status == 403 && res.attempts == 1 && res.code[0] == '\0',
       "no policy: 403 delivered, no AWS error code read ('%s')", res.code);
    struct bt_http_req nopol = req;
    nopol.policy = NULL;
    bt_http_submit(h, &nopol, on_done, &res);
    run(h);
    OK(res.status == 0 && strstr(res.transport, "needs a policy") && res.attempts == 0,
       "no policy: a signed request is refused before sending ('%s')", res.transport);
    log = fake_log(&f);
    OK(cJSON_GetArraySize(log) == 3 && log_num(log, 0, "client_port") > 0 &&
       log_num(log, 0, "client_port") == log_num(log, 1, "client_port"),
       "connection reused for the second request (ports %.0f, %.0f)", log_num(log, 0, "client_port"),
       log_num(log, 1, "client_port"));
    cJSON_Delete(log);
    bt_http_free(h);
    bt_creds_clear(&p.creds);
    result_free(&res);
    fake_stop(&f);
}

static void test_throttle_retry(void)
{
    struct fake f;
    fake_start(&f, "{\"faults\":[{\"op\":\"GetMetricData\",\"nth\":1,\"action\":\"throttle\"}]}", NULL);
    struct bt_http *h = bt_http_new(0);
    bt_http_set_backoff(h, 0.01, 0.05);
    struct bt_creds_provider p = plain_creds();
    struct result res = { 0 };
    const char *q = "{\"MetricDataQueries\":[],\"StartTime\":0,\"EndTime\":60}";
    struct bt_http_req req = cw_req(&f, &p, T_GMD, q);
    bt_http_submit(h, &req, on_done, &res);
    run(h);
    /* Empty MetricDataQueries is a ValidationError on the real API and the fake: 400, not
     * retried; what matters is that the throttled first attempt was retried. */
    const struct bt_http_stats *st = bt_http_get_stats(h);
    OK(res.calls == 1 && res.attempts == 2, "throttle: retried once (attempts %d)", res.attempts);
    OK(res.status == 400, "throttle: second answer delivered (status %ld)", res.status);
    OK(st->throttled == 1 && st->retries == 1 && st->attempts == 2, "throttle: counted (%lu throttled, %lu retries)",
       st->throttled, st->retries);
    /* 500 - 5 for the retry; the final 400 is a failure so nothing comes back. */
    OK(st->retry_tokens == 495, "throttle: retry cost 5 taken (tokens %ld)", st->retry_tokens);
    cJSON *log = fake_log(&f);
    OK(cJSON_GetArraySize(log) == 2, "throttle: two requests at the fake");
    STREQ(log_str(log, 0, "error"), "ThrottlingException", "throttle: first answered throttled");
    OK(log_num(log, 1, "attempt") == 2 && log_true(log, 1, "sig_ok"), "throttle: attempt 2 re-signed and valid");
    cJSON_Delete(log);
    /* A successful retry refunds its cost: 495 - 5 + 5 = 495. */
    struct bt_http_req ok_req = cw_req(&f, &p, T_LIST, "{}");
    fake_stop(&f);
    fake_start(&f, "{\"faults\":[{\"op\":\"ListMetrics\",\"nth\":1,\"action\":\"throttle\"}]}", NULL);
    ok_req.url = url_of(&f);
    bt_http_submit(h, &ok_req, on_done, &res);
    run(h);
    OK(res.status == 200 && res.attempts == 2, "throttle: then success on attempt 2");
    OK(st->retry_tokens == 495, "throttle: success refunds the retry cost (tokens %ld)", st->retry_tokens);
    bt_http_free(h);
    result_free(&res);
    fake_stop(&f);
}

static void test_5xx_burst(void)
{
    struct fake f;
    fake_start(&f, "{\"faults\":[{\"op\":\"*\",\"count\":0,\"action\":\"5xx\",\"status\":503}]}", NULL);
    struct bt_http *h = bt_http_new(0);
    bt_http_set_backoff(h, 0.01, 0.05);
    struct bt_creds_provider p = plain_creds();
    struct result res = { 0 };
    struct bt_http_req req = cw_req(&f, &p, T_LIST, "{}");
    bt_http_submit(h, &req, on_done, &res);
    run(h);
    const struct bt_http_stats *st = bt_http_get_stats(h);
    OK(res.calls == 1 && res.status == 503, "5xx: final 503 delivered (got %ld)", res.status);
    OK(res.attempts == 3, "5xx: three attempts (got %d)", res.attempts);
    STREQ(res.code, "InternalServiceError", "5xx: code from x-amzn-query-error");
    OK(st->retries == 2 && st->retry_tokens == 490, "5xx: two retries cost 10 (tokens %ld)", st->retry_tokens);
    cJSON *log = fake_log(&f);
    OK(cJSON_GetArraySize(log) == 3, "5xx: three requests at the fake");
    cJSON_Delete(log);
    /* max_attempts 1: no retry at all. */
    req.max_attempts = 1;
    bt_http_submit(h, &req, on_done, &res);
    run(h);
    OK(res.attempts == 1 && st->retries == 2, "5xx: max_attempts 1 means no retry");
    bt_http_free(h);
    result_free(&res);
    fake_stop(&f);
}

struct counter {
    int calls, failed;
};

static void on_count(void *arg, const struct bt_http_resp *r)
{
    struct counter *c = arg;
    c->calls++;
    if (r->status != 200)
        c->failed++;
}

static void test_budget(void)
{
    struct fake f;
    fake_start(&f, "{\"faults\":[{\"op\":\"*\",\"count\":0,\"action\":\"5xx\"}]}", NULL);
    struct bt_http *h = bt_http_new(0);
    bt_http_set_backoff(h, 0.001, 0.002);
    struct bt_creds_provider p = plain_creds();
    struct counter c = { 0 };
    struct bt_http_req req = cw_req(&f, &p, T_LIST, "{}");
    enum { N = 110 };
    for (int i = 0; i < N; i++)
        bt_http_submit(h, &req, on_count, &c);
    for (int i = 0; i < MAX_LOOPS * 2 && bt_http_pending(h) > 0; i++)
        bt_http_poll(h, 100, -1, NULL);
    const struct bt_http_stats *st = bt_http_get_stats(h);
    /* 110 requests want up to 220 retries; the bucket of 500 pays for 500 / 5 = 100. */
    OK(c.calls == N && c.failed == N, "budget: every request called back once (%d)", c.calls);
    OK(st->retries == 100, "budget: exactly 100 retries paid (got %lu)", st->retries);
    OK(st->retry_tokens == 0, "budget: bucket empty (got %ld)", st->retry_tokens);
    OK(st->retries_denied_by_budget > 0, "budget: retries denied and counted (%lu)",
       st->retries_denied_by_budget);
    OK(st->attempts == N + 100, "budget: attempts = requests + retries (%lu)", st->attempts);
    bt_http_free(h);
    fake_stop(&f);
}

static void test_timeout(void)
{
    struct fake f;
    fake_start(&f, "{\"faults\":[{\"op\":\"*\",\"count\":0,\"action\":\"hang\",\"secs\":30}]}", NULL);
    struct bt_http *h = bt_http_new(0);
    bt_http_set_backoff(h, 0.01, 0.05);
    struct bt_creds_provider p = plain_creds();
    struct result res = { 0 };
    struct bt_http_req req = cw_req(&f, &p, T_LIST, "{}");
    req.timeout = 0.3;
    req.max_attempts = 2;
    bt_http_submit(h, &req, on_done, &res);
    run(h);
    const struct bt_http_stats *st = bt_http_get_stats(h);
    OK(res.calls == 1 && res.status == 0, "timeout: transport failure (status %ld)", res.status);
    OK(strstr(res.transport, "imeout") || strstr(res.transport, "timed out"), "timeout: curl's text '%s'",
       res.transport);
    OK(res.attempts == 2, "timeout: retried (attempts %d)", res.attempts);
    OK(st->retry_tokens == 490, "timeout: a timeout retry costs 10 (tokens %ld)", st->retry_tokens);
    /* Freeing with a request in flight cancels it without a callback. */
    req.max_attempts = 1;
    int before = res.calls;
    bt_http_submit(h, &req, on_done, &res);
    for (int i = 0; i < 3; i++)
        bt_http_poll(h, 20, -1, NULL);
    OK(bt_http_pending(h) == 1, "free: one request still in flight");
    bt_http_free(h);
    OK(res.calls == before, "free: cancelled without a callback");
    result_free(&res);
    fake_stop(&f);
}

/* A request queued behind the connection cap (MAX_HOST_CONNECTIONS, 4) starts its
 * timeout when it leaves, not when it is queued. Eight requests to one fake whose
 * every answer takes 1.0 s, each with a 1.6 s timeout and no retry: four run at once
 * and answer at ~1.0 s, then the other four leave and answer at ~2.0 s after
 * submission, 1.0 s after they left. Timed from the queue, those four would have
 * timed out at 1.6 s; timed from leaving, all eight answer (0.6 s to spare). */
struct queued { int calls, ok; };
static void on_queued(void *arg, const struct bt_http_resp *r)
{
    struct queued *q = arg;
    q->calls++;
    q->ok += r->status == 200;
}

static void test_queue_timeout(void)
{
    struct fake f;
    fake_start(&f, "{\"faults\":[{\"op\":\"*\",\"count\":0,\"action\":\"delay\",\"secs\":1.0}]}",
               NULL);
    struct bt_http *h = bt_http_new(0);
    struct bt_creds_provider p = plain_creds();
    struct queued q = {0};
    struct bt_http_req req = cw_req(&f, &p, T_LIST, "{}");
    req.timeout = 1.6;
    req.max_attempts = 1;
    for (int i = 0; i < 8; i++)
        bt_http_submit(h, &req, on_queued, &q);
    run(h);
    OK(q.calls == 8 && q.ok == 8, "queued behind the cap: all 8 answered, none timed out in the "
       "queue (%d of %d ok)", q.ok, q.calls);
    cJSON *log = fake_log(&f);
    int n = cJSON_GetArraySize(log), ports[16], nports = 0;
    for (int i = 0; i < n && i < 16; i++) {
        int port = (int)log_num(log, i, "client_port"), k = 0;
        while (k < nports && ports[k] != port)
            k++;
        if (k == nports)
            ports[nports++] = port;
    }
    OK(n == 8 && nports <= 4, "queued behind the cap: 8 requests over at most 4 connections "
       "(%d requests, %d connections)", n, nports);
    cJSON_Delete(log);
    bt_http_free(h);
    fake_stop(&f);
}

static int closed_port(void)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = 0 };
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t al = sizeof a;
    bind(s, (struct sockaddr *)&a, sizeof a);
    getsockname(s, (struct sockaddr *)&a, &al);
    close(s);
    return ntohs(a.sin_port);
}

static void test_refused(void)
{
    struct bt_http *h = bt_http_new(0);
    bt_http_set_backoff(h, 0.01, 0.05);
    struct result res = { 0 };
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/", closed_port());
    struct bt_http_req req = { .method = "POST", .url = url, .body = "{}", .body_len = 2 };
    bt_http_submit(h, &req, on_done, &res);
    run(h);
    const struct bt_http_stats *st = bt_http_get_stats(h);
    OK(res.calls == 1 && res.status == 0 && res.transport[0], "refused: transport error '%s'", res.transport);
    OK(res.attempts == 3 && st->retry_tokens == 490, "refused: 3 attempts, 2 retries x 5 (tokens %ld)",
       st->retry_tokens);
    OK(res.body && res.body[0] == '\0', "refused: empty body, not NULL");
    /* Bad URLs are reported through the callback too. */
    struct bt_http_req bad = { .method = "POST", .url = "ftp://127.0.0.1/x" };
    bt_http_submit(h, &bad, on_done, &res);
    run(h);
    OK(res.calls == 2 && strstr(res.transport, "invalid URL") && res.attempts == 0,
       "bad URL: called back with '%s'", res.transport);
    bt_http_free(h);
    result_free(&res);
}

static void test_truncate_reset(void)
{
    struct fake f;
    fake_start(&f, "{\"faults\":[{\"op\":\"ListMetrics\",\"count\":0,\"action\":\"truncate\"},"
                   "{\"op\":\"GetMetricData\",\"nth\":1,\"action\":\"reset\"},"
                   "{\"op\":\"GetMetricData\",\"nth\":2,\"action\":\"malformed\"}]}", NULL);
    struct bt_http *h = bt_http_new(0);
    bt_http_set_backoff(h, 0.01, 0.05);
    struct bt_creds_provider p = plain_creds();
    struct result res = { 0 };
    struct bt_http_req req = cw_req(&f, &p, T_LIST, "{}");
    bt_http_submit(h, &req, on_done, &res);
    run(h);
    OK(res.status == 0 && res.attempts == 3, "truncated: retried then failed (status %ld, %d attempts)",
       res.status, res.attempts);
    OK(res.transport[0] != '\0', "truncated: reported '%s'", res.transport);
    /* A reset connection is retried; the retry gets a 200 whose body is not JSON: the HTTP
     * layer delivers it as is (the collector's parser reports it). */
    struct bt_http_req g = cw_req(&f, &p, T_GMD, "{}");
    bt_http_submit(h, &g, on_done, &res);
    run(h);
    OK(res.status == 200 && res.attempts == 2, "reset: retried (status %ld, %d attempts, '%s')", res.status,
       res.attempts, res.transport);
    OK(res.body && strncmp(res.body, "{\"MetricDataResults\": [", 23) == 0, "malformed: body delivered as sent");
    /* Body bound: the 200 answer is larger than 10 bytes. */
    bt_http_set_max_body(h, 10);
    struct bt_http_req big = cw_req(&f, &p, T_GMD, "{}");
    bt_http_submit(h, &big, on_done, &res);
    run(h);
    OK(res.status == 0 && strstr(res.transport, "exceeds 10 bytes") && res.attempts == 1,
       "body bound: '%s' after %d attempt(s)", res.transport, res.attempts);
    bt_http_free(h);
    result_free(&res);
    fake_stop(&f);
}

static void test_skew(void)
{
    struct fake f;
    fake_start(&f, "{\"clock_offset\": 900}", NULL);
    struct bt_http *h = bt_http_new(0);
    struct bt_creds_provider p = plain_creds();
    struct result res = { 0 };
    struct bt_http_req req = cw_req(&f, &p, T_LIST, "{}");
    bt_http_submit(h, &req, on_done, &res);
    run(h);
    OK(res.status == 200 && res.attempts == 2, "skew: corrected and retried (status %ld, %d attempts, %s)",
       res.status, res.attempts, res.code);
    cJSON *log = fake_log(&f);
    STREQ(log_str(log, 0, "error"), "InvalidSignatureException", "skew: first refused as expired");
    cJSON_Delete(log);
    bt_http_submit(h, &req, on_done, &res);
    run(h);
    OK(res.status == 200 && res.attempts == 1, "skew: offset kept for the host (%d attempts)", res.attempts);
    const struct bt_http_stats *st = bt_http_get_stats(h);
    OK(st->retry_tokens == BT_HTTP_RETRY_TOKENS && st->retries_denied_by_budget == 0,
       "skew: the correction costs no retry budget");
    bt_http_free(h);
    result_free(&res);
    fake_stop(&f);
}

struct refresher {
    int calls;
    const char *token;   /* what a refresh yields; NULL: refresh fails */
    int64_t expiration;
};

static int refresh_cb(struct bt_creds_provider *p, struct bt_http *h, char *err, size_t errlen)
{
    struct refresher *r = p->arg;
    (void)h;
    r->calls++;
    if (!r->token) {
        snprintf(err, errlen, "profile test: no credentials");
        return -1;
    }
    struct bt_creds c;
    memset(&c, 0, sizeof c);
    bt_strlcpy(c.access_key, AK, sizeof c.access_key);
    bt_strlcpy(c.secret_key, SK, sizeof c.secret_key);
    c.session_token = bt_xstrdup(r->token);
    c.expiration = r->expiration;
    bt_creds_copy(&p->creds, &c);
    bt_creds_clear(&c);
    return 0;
}

static void test_refresh(void)
{
    struct fake f;
    fake_start(&f, "{\"expired_tokens\": [\"OLDTOKEN\"]}", "NEWTOKEN");
    struct bt_http *h = bt_http_new(0);
    struct refresher rf = { .token = "NEWTOKEN" };
    struct bt_creds_provider p = plain_creds();
    p.creds.session_token = bt_xstrdup("OLDTOKEN");
    p.refresh = refresh_cb;
    p.arg = &rf;
    struct result res = { 0 };
    struct bt_http_req req = cw_req(&f, &p, T_LIST, "{}");
    bt_http_submit(h, &req, on_done, &res);
    run(h);
    OK(res.status == 200 && res.attempts == 2, "expired token: refreshed and retried (status %ld, %d attempts)",
       res.status, res.attempts);
    OK(rf.calls == 1, "expired token: refresh called once (%d)", rf.calls);
    cJSON *log = fake_log(&f);
    STREQ(log_str(log, 0, "error"), "ExpiredTokenException", "expired token: first answer");
    OK(log_true(log, 1, "token_ok"), "expired token: retry carries the new token");
    cJSON_Delete(log);
    /* Close to expiry (60 s < 5 min): refreshed before sending. */
    p.creds.expiration = (int64_t)time(NULL) + 60;
    rf.expiration = (int64_t)time(NULL) + 3600;
    bt_http_submit(h, &req, on_done, &res);
    run(h);
    OK(rf.calls == 2 && res.status == 200 && res.attempts == 1, "near expiry: refreshed first (%d calls)", rf.calls);
    /* Missing credentials: refresh first; failing refresh: an error naming why, nothing sent. */
    p.valid = false;
    rf.token = NULL;
    bt_http_submit(h, &req, on_done, &res);
    run(h);
    OK(rf.calls == 3 && res.status == 0 && strstr(res.transport, "credentials: profile test: no credentials"),
       "refresh failure reported: '%s'", res.transport);
    STREQ(p.error, "profile test: no credentials", "refresh failure kept for the user");
    log = fake_log(&f);
    OK(cJSON_GetArraySize(log) == 3, "refresh failure: nothing sent");
    cJSON_Delete(log);
    bt_http_free(h);
    bt_creds_clear(&p.creds);
    result_free(&res);
    fake_stop(&f);
}

struct pager {
    struct bt_http *h;
    struct bt_http_req req;
    int pages;
};

static void on_page(void *arg, const struct bt_http_resp *r)
{
    struct pager *pg = arg;
    pg->pages++;
    if (r->status == 200 && pg->pages < 3)
        bt_http_submit(pg->h, &pg->req, on_page, pg);
}

static void test_callback_submits_and_fd(void)
{
    struct fake f;
    fake_start(&f, "{}", NULL);
    struct bt_http *h = bt_http_new(0);
    struct bt_creds_provider p = plain_creds();
    struct pager pg = { .h = h };
    pg.req = cw_req(&f, &p, T_LIST, "{}");
    bt_http_submit(h, &pg.req, on_page, &pg);
    run(h);
    OK(pg.pages == 3 && bt_http_pending(h) == 0, "callbacks may submit (pages %d)", pg.pages);
    int fds[2];
    bool ready = false;
    if (pipe(fds) == 0) {
        OK(write(fds[1], "k", 1) == 1, "extra fd: written");
        int n = 0;
        for (int i = 0; i < 50 && !ready; i++)
            n = bt_http_poll(h, 100, fds[0], &ready);
        OK(ready && n == 0, "extra fd: readable reported");
        close(fds[0]);
        close(fds[1]);
    }
    bt_http_free(h);
    fake_stop(&f);
}

static void test_verbose_no_secrets(void)
{
    struct fake f;
    fake_start(&f, "{}", "TOPSECRETTOKEN");
    char errpath[512];
    snprintf(errpath, sizeof errpath, "%s/stderr.txt", tmpdir);
    fflush(stderr);
    int saved = dup(2);
    int fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(fd, 2);
    close(fd);
    struct bt_http *h = bt_http_new(1);
    struct bt_creds_provider p = plain_creds();
    p.creds.session_token = bt_xstrdup("TOPSECRETTOKEN");
    struct result res = { 0 };
    struct bt_http_req req = cw_req(&f, &p, T_LIST, "{}");
    bt_http_submit(h, &req, on_done, &res);
    run(h);
    bt_http_free(h);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    size_t len;
    char *text = bt_read_file(errpath, 1 << 20, &len);
    char want[256];
    snprintf(want, sizeof want, "bedtop: http: POST http://127.0.0.1:%d/ %s -> 200 (", f.port, T_LIST);
    OK(text && strstr(text, want) && strstr(text, " ms, attempt 1)"), "verbose: one line per attempt: %s",
       text ? text : "(none)");
    OK(text && !strstr(text, "TOPSECRETTOKEN") && !strstr(text, SK) && !strstr(text, "Signature") &&
       !strstr(text, "Authorization"), "verbose: no token, key or signature");
    free(text);
    bt_creds_clear(&p.creds);
    result_free(&res);
    fake_stop(&f);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    snprintf(tmpdir, sizeof tmpdir, "/tmp/bedtop-http.XXXXXX");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 2;
    }
    test_error_codes();
    test_signed_request();
    test_throttle_retry();
    test_5xx_burst();
    test_budget();
    test_timeout();
    test_queue_timeout();
    test_refused();
    test_truncate_reset();
    test_skew();
    test_refresh();
    test_callback_submits_and_fd();
    test_verbose_no_secrets();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
    return tap_done();
}
