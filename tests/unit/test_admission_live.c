/* The admission collector end to end through the real HTTP layer against
 * tests/fake/admission_server.py on 127.0.0.1: counters growing at known
 * rates come out as the right per-minute rates, and a scrape that fails or
 * times out marks only its own route stale. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collectors/admission.h"
#include "net/http.h"
#include "core/config.h"
#include "core/util.h"
#include "io/file.h"
#include "io/conffile.h"
#include "tests/tap.h"

static pid_t server_pid = -1;
static char log_path[256];
static char samples_path[256];
static int server_out = -1;

static int start_server(void)
{
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    snprintf(log_path, sizeof log_path, "/tmp/bedtop-adm-%d.log", (int)getpid());
    unlink(log_path);
    snprintf(samples_path, sizeof samples_path, "/tmp/bedtop-adm-%d.samples", (int)getpid());
    unlink(samples_path);
    char script[1024];
    snprintf(script, sizeof script, "%s/tests/fake/admission_server.py", tap_srcdir());
    server_pid = fork();
    if (server_pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        close(fds[1]);
        execlp("python3", "python3", script, "--log", log_path, "--samples", samples_path,
               (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    /* read up to the newline, and keep the pipe open while the server runs:
     * an unbuffered python writes the port and the newline separately */
    char line[32] = "";
    size_t got = 0;
    while (got < sizeof line - 1 && !memchr(line, '\n', got)) {
        ssize_t n = read(fds[0], line + got, sizeof line - 1 - got);
        if (n <= 0)
            break;
        got += (size_t)n;
        line[got] = '\0';
    }
    server_out = fds[0];
    return memchr(line, '\n', got) ? atoi(line) : -1;
}

static void stop_server(void)
{
    if (server_pid > 0) {
        kill(server_pid, SIGTERM);
        waitpid(server_pid, NULL, 0);
    }
    if (server_out >= 0)
        close(server_out);
    unlink(log_path);
    unlink(samples_path);
}

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* main's loop in miniature; ONCE mode ends when the collector is no longer
 * busy, LIVE mode after `seconds`. The bound only guards against a hang. */
static void run(struct bt_http *h, void *c, enum bt_run_mode mode, double seconds)
{
    const struct bt_collector_ops *ops = &bt_admission_collector;
    double end = mono() + seconds;
    for (;;) {
        int64_t t = (int64_t)time(NULL);
        if (t >= ops->next_due(c))
            ops->tick(c, t);
        if (mode == BT_MODE_ONCE && !ops->busy(c))
            break;
        if (mono() > end)
            break;
        bt_http_poll(h, 100, -1, NULL);
    }
}

struct fixture {
    struct bt_config cfg;
    struct bt_store store;
    struct bt_http *http;
    struct bt_ctx ctx;
};

static bool fixture_init(struct fixture *f, const char *ini, enum bt_run_mode mode,
                         const char *admission_url)
{
    char err[256];
    memset(f, 0, sizeof *f);
    bt_config_init(&f->cfg);
    if (!bt_config_parse_string(&f->cfg, ini, "test.ini", err, sizeof err)) {
        fprintf(stderr, "# config: %s\n", err);
        return false;
    }
    bt_config_finish(&f->cfg);
    bt_store_init(&f->store, f->cfg.nroutes, 60);
    bt_store_bind_routes(&f->store, f->cfg.routes);
    f->http = bt_http_new(0);
    f->ctx = (struct bt_ctx){.cfg = &f->cfg, .store = &f->store, .http = f->http, .mode = mode,
                             .admission_url = admission_url};
    return true;
}

static void fixture_free(struct fixture *f)
{
    bt_http_free(f->http);
    bt_store_free(&f->store);
    bt_config_free(&f->cfg);
}

static double newest(struct fixture *f, int route, enum bt_signal sig)
{
    int64_t m = bt_store_newest(&f->store, route, sig, INT64_MAX / 2);
    return m ? bt_store_at(&f->store, route, sig, m) : NAN;
}

static const struct bt_source_status *status(struct fixture *f, int route)
{
    return bt_store_status_c(&f->store, route, BT_SRC_ADMISSION);
}

static void near_rel(double got, double want, double rel, const char *what)
{
    tap_ok(fabs(got - want) <= rel * fabs(want), __FILE__, __LINE__, "%s: got %.1f want %.1f",
           what, got, want);
}

/* The text and JSON forms carry no timestamps: the collector rates a counter over the
 * gap between two scrapes as its own clock measured it (the reading's time), while the
 * fake's counters moved by rate x the gap between the two times it answered at (its
 * --samples log). On an idle machine the two gaps agree within milliseconds; on a loaded
 * one either answer can be late by a tenth of a second and more (4 % of a 2 s gap: a
 * fixed tolerance failed one run in three under a parallel build). So the expected rate
 * is the fake's rate scaled by server gap / client gap, from the last two scrapes of
 * each: exact up to the counters' printed millis. */
struct seen {
    double t[2]; /* the last two reading times of a route's reserved counter */
    int n;
};
static struct seen seen[8];

static void tap_reading(void *arg, const struct bt_reading *rd, int64_t arrival)
{
    (void)arg;
    (void)arrival;
    if (rd->route < 0 || rd->route >= 8 || rd->signal != BT_SIG_ADM_RESERVED)
        return;
    struct seen *s = &seen[rd->route];
    if (s->n && s->t[1] == rd->t)
        return; /* another series of the same scrape */
    s->t[0] = s->t[1];
    s->t[1] = rd->t;
    s->n++;
}

/* The last two times the fake answered path at. */
static bool server_gap(const char *path, double *gap)
{
    FILE *f = fopen(samples_path, "r");
    if (!f)
        return false;
    char line[256];
    double last[2] = {0, 0};
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        char *sp = strrchr(line, ' ');
        if (!sp || (size_t)(sp - line) != strlen(path) || strncmp(line, path, strlen(path)))
            continue;
        last[0] = last[1];
        last[1] = atof(sp + 1);
        n++;
    }
    fclose(f);
    *gap = last[1] - last[0];
    return n >= 2;
}

/* per_s: the fake's counter rate per second; the rate per minute the collector must find
 * for route r, scraped at path */
static void rate_is(struct fixture *f, int r, enum bt_signal sig, const char *path, double per_s,
                    const char *what)
{
    double sgap = 0;
    const struct seen *s = &seen[r];
    if (!server_gap(path, &sgap) || s->n < 2 || !(s->t[1] > s->t[0])) {
        tap_ok(false, __FILE__, __LINE__, "%s: two scrapes of %s on both ends", what, path);
        return;
    }
    double want = per_s * 60 * sgap / (s->t[1] - s->t[0]);
    /* the counters are printed to the thousandth: over a >= 1 s gap of >= 10/s, far below */
    near_rel(newest(f, r, sig), want, 1e-3, what);
}

static void watch_readings(struct fixture *f)
{
    memset(seen, 0, sizeof seen);
    f->store.tap.reading = tap_reading;
}

static void test_check_mode(int port)
{
    char ini[2048];
    snprintf(ini, sizeof ini,
             "[bedtop]\nadmission_gap = 2\n"
             "[route triage]\nmodel = us.anthropic.claude-sonnet-4-5-20250929-v1:0\n"
             "admission = http://127.0.0.1:%d/text/triage\n"
             "[route agents]\nmodel = anthropic.claude-opus-4-7\n"
             "admission = http://127.0.0.1:%d/om/agents\n"
             "[route jsonr]\nmodel = amazon.nova-pro-v1:0\n"
             "admission = http://127.0.0.1:%d/json/jsonr\n"
             "[route slow]\nmodel = m.slow\nadmission = http://127.0.0.1:%d/slow\n"
             "[route broken]\nmodel = m.broken\nadmission = http://127.0.0.1:%d/broken\n"
             "[route garbage]\nmodel = m.garbage\nadmission = http://127.0.0.1:%d/garbage\n"
             "[route plain]\nmodel = m.plain\nadmission = http://127.0.0.1:%d/nolabel\n",
             port, port, port, port, port, port, port);
    struct fixture f;
    if (!fixture_init(&f, ini, BT_MODE_ONCE, NULL)) {
        OK(false, "fixture");
        return;
    }
    watch_readings(&f);
    void *c = bt_admission_collector.create(&f.ctx);
    OK(c != NULL, "collector created for per-route URLs");
    if (!c)
        return;
    OK(bt_admission_collector.busy(c), "busy before the first scrape");
    run(f.http, c, BT_MODE_ONCE, 30);
    OK(!bt_admission_collector.busy(c), "check mode: done after two scrapes");
    OK(bt_admission_collector.next_due(c) == INT64_MAX, "check mode: nothing more due");

    /* text 0.0.4, client-side timing: 25,000/s -> 1,500,000 per minute over the gap the
     * fake answered in (rate_is); admitted and settled were read in the same scrapes */
    rate_is(&f, 0, BT_SIG_ADM_RESERVED, "/text/triage", 25000, "triage reserved tokens/min");
    rate_is(&f, 0, BT_SIG_ADM_ADMITTED, "/text/triage", 10, "triage admitted/min (10/s)");
    rate_is(&f, 0, BT_SIG_ADM_SETTLED, "/text/triage", 12000, "triage settled tokens/min");
    NEAR(newest(&f, 0, BT_SIG_ADM_REJECTED), 0, 0, "flat counter: rate 0");
    NEAR(newest(&f, 0, BT_SIG_ADM_IN_FLIGHT), 38, 0, "triage in_flight");
    NEAR(newest(&f, 0, BT_SIG_ADM_CONC_LIMIT), 25, 0, "triage concurrency_limit");
    NEAR(newest(&f, 0, BT_SIG_ADM_MAX_TOKENS), 1024, 0, "triage max_tokens");
    /* buckets {128:10, 256:40, +Inf:50} unchanged between scrapes -> cumulative:
     * p50 = 128 + 128*15/30 = 192, p99 = 256 (the +Inf bucket) */
    NEAR(newest(&f, 0, BT_SIG_ADM_OUT_P50), 192, 1e-3, "triage output p50");
    NEAR(newest(&f, 0, BT_SIG_ADM_OUT_P99), 256, 1e-3, "triage output p99");
    /* OpenMetrics with server timestamps: 5,000/s -> 300,000 per minute (the
     * server's clock on both ends, so only float rounding of the ms remains) */
    near_rel(newest(&f, 1, BT_SIG_ADM_RESERVED), 300000, 0.002, "OpenMetrics reserved/min");
    NEAR(newest(&f, 1, BT_SIG_ADM_IN_FLIGHT), 38, 0, "OpenMetrics gauge");
    /* JSON form: 1,000/s -> 60,000 per minute */
    rate_is(&f, 2, BT_SIG_ADM_RESERVED, "/json/jsonr", 1000, "JSON reserved/min");
    NEAR(newest(&f, 2, BT_SIG_ADM_CONC_LIMIT), 16, 0, "JSON gauge");
    NEAR(newest(&f, 2, BT_SIG_ADM_OUT_P50), 192, 1e-3, "JSON histogram p50");
    rate_is(&f, 6, BT_SIG_ADM_RESERVED, "/nolabel", 25000, "unlabelled series, own URL");

    const char *names[] = {"triage", "agents", "jsonr", "slow", "broken", "garbage", "plain"};
    for (int r = 0; r < 7; r++) {
        const struct bt_source_status *st = status(&f, r);
        bool bad = r >= 3 && r <= 5;
        OK(st && (bad ? st->last_error != 0 && st->last_ok == 0
                      : st->last_ok != 0 && st->last_error == 0),
           "%s: admission status %s (%s)", names[r], bad ? "error" : "ok",
           st ? st->error : "?");
    }
    const struct bt_source_status *st = status(&f, 4);
    OK(st && strstr(st->error, "HTTP 500") && strstr(st->error, "/broken"),
       "broken route error names endpoint and status: %s", st ? st->error : "");
    st = status(&f, 5);
    OK(st && strstr(st->error, "line 1: expected a metric name, found byte 0x01"),
       "garbage route error names the line: %s", st ? st->error : "");
    st = status(&f, 3);
    OK(st && strstr(st->error, "/slow"), "timed-out route error: %s", st ? st->error : "");
    OK(isnan(newest(&f, 3, BT_SIG_ADM_IN_FLIGHT)), "slow route has no data");
    bt_admission_collector.destroy(c);
    fixture_free(&f);
}

static void test_global_live(int port)
{
    char url[128];
    snprintf(url, sizeof url, "http://user:secret@127.0.0.1:%d/fleet", port);
    const char *ini = "[bedtop]\ninterval = 1\nadmission_gap = 1\n"
                      "[route triage]\nmodel = us.anthropic.claude-sonnet-4-5-20250929-v1:0\n"
                      "[route agents]\nmodel = anthropic.claude-opus-4-7\n"
                      "[route other]\nmodel = m.other\n";
    struct fixture f;
    if (!fixture_init(&f, ini, BT_MODE_LIVE, url)) {
        OK(false, "fixture");
        return;
    }
    watch_readings(&f);
    void *c = bt_admission_collector.create(&f.ctx);
    OK(c != NULL, "collector created for --admission");
    if (!c)
        return;
    run(f.http, c, BT_MODE_LIVE, 3.5);
    rate_is(&f, 0, BT_SIG_ADM_RESERVED, "/fleet", 25000, "fleet: triage by route label");
    rate_is(&f, 1, BT_SIG_ADM_RESERVED, "/fleet", 25000, "fleet: agents by model_id");
    OK(isnan(newest(&f, 2, BT_SIG_ADM_IN_FLIGHT)), "fleet: a route not exposed gets nothing");
    const struct bt_source_status *st = status(&f, 0);
    OK(st && st->last_ok && !st->last_error, "fleet: triage ok");
    bt_admission_collector.destroy(c);
    fixture_free(&f);

    /* the same source down: every route it served goes stale, and the
     * password in the URL never reaches a message */
    snprintf(url, sizeof url, "http://user:secret@127.0.0.1:%d/broken?token=tok123", port);
    if (!fixture_init(&f, ini, BT_MODE_ONCE, url))
        return;
    c = bt_admission_collector.create(&f.ctx);
    run(f.http, c, BT_MODE_ONCE, 20);
    st = status(&f, 1);
    OK(st && st->last_error && !strstr(st->error, "secret") && !strstr(st->error, "tok123") &&
           strstr(st->error, "http://user:***@127.0.0.1:") && strstr(st->error, "/broken?token=***: HTTP 500"),
       "global failure: error without password (user:***@) or query value: %s", st ? st->error : "");
    bt_admission_collector.destroy(c);
    fixture_free(&f);
}

static void test_prometheus_server(int port)
{
    char url[128];
    snprintf(url, sizeof url, "prometheus+http://127.0.0.1:%d", port);
    const char *ini = "[route triage]\nmodel = us.anthropic.claude-sonnet-4-5-20250929-v1:0\n"
                      "[route agents]\nmodel = anthropic.claude-opus-4-7\n";
    struct fixture f;
    if (!fixture_init(&f, ini, BT_MODE_ONCE, url)) {
        OK(false, "fixture");
        return;
    }
    unlink(log_path);
    void *c = bt_admission_collector.create(&f.ctx);
    OK(c != NULL, "collector created for a Prometheus server");
    if (!c)
        return;
    run(f.http, c, BT_MODE_ONCE, 20);
    OK(!bt_admission_collector.busy(c), "one query round is enough");
    NEAR(newest(&f, 0, BT_SIG_ADM_RESERVED), 1500000, 0, "server's rate stored as is");
    NEAR(newest(&f, 1, BT_SIG_ADM_RESERVED), 1500000, 0, "model_id result mapped");
    NEAR(newest(&f, 0, BT_SIG_ADM_IN_FLIGHT), 38, 0, "server gauge");
    NEAR(newest(&f, 0, BT_SIG_ADM_OUT_P99), 256, 0, "server quantile");
    const struct bt_source_status *st = status(&f, 0);
    OK(st && st->last_ok && !st->last_error, "server source ok: %s", st ? st->error : "");
    size_t len = 0;
    char *log = bt_read_file(log_path, 1 << 20, &len);
    int lines = 0;
    for (size_t i = 0; log && i < len; i++)
        lines += log[i] == '\n';
    OK(lines == 14, "14 queries sent, one per admission signal (got %d)", lines);
    OK(log && strstr(log, "sum by (route, model_id) (rate(bedrock_admission_reserved_tokens_total"
                          "[2m])) * 60\n"),
       "the reserved query arrived URL-decoded intact");
    free(log);
    bt_admission_collector.destroy(c);
    fixture_free(&f);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    int port = start_server();
    OK(port > 0, "fake admission server started on 127.0.0.1:%d", port);
    if (port > 0) {
        test_check_mode(port);
        test_global_live(port);
        test_prometheus_server(port);
    }
    stop_server();
    return tap_done();
}
