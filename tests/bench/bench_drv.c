/* Benchmark driver for tests/bench/bench.py (make bench): the measurements
 * that need bedtop's library in process. Each prints one JSON object on stdout
 * (render: to the file given, its stdout is the terminal). Not a test: it
 * asserts nothing and is never part of make check.
 *   replay FILE N SEED       open a recording, then N seeks to random minutes
 *                            (seek alone, and seek + the report a screen needs)
 *   render FILE N OUT [HOW]  the overview of a recording's routes drawn N times
 *                            on the terminal it runs on (a pty); timing to OUT.
 *                            HOW: eval (default) the store's generation bumped
 *                            before each frame (every route evaluated, then drawn);
 *                            full: every cell drawn again from the evaluation on
 *                            screen, the terminal sent what differs (what a key
 *                            redraws at most); repaint: the same, every cell sent
 *                            (a resize, ^L); tick: the clock one second on inside
 *                            the minute (the live dashboard's idle redraw; N <= 59)
 *   cost CONF URL POLLS      the CloudWatch collector in live mode against the
 *                            fake, POLLS polls a simulated minute apart
 *   config CONF N            bt_config_load of CONF, N times (median)
 *   groups N ONE RUNS        bt_eval_all of N routes with one minute of usage each,
 *                            on one quota (ONE=1) or each on its own (ONE=0): RUNS
 *                            evaluations (median), and the group's figures
 *   scale CONF URL POLLS     a fleet's live polls (CloudWatch and Service Quotas, then
 *                            what serve does each poll for a Prometheus scrape: the
 *                            report built, OpenMetrics rendered and gzipped, both
 *                            kept to the next evaluation, the report freed)
 *                            against the bench's stub, POLLS polls a simulated minute
 *                            apart: each poll's wall and CPU, requests, and memory
 *                            per route (serve's history, 3 hours)
 *   spend CONF URL POLLS REPS  the fleet polled as scale does, then serve's per-poll
 *                            work (report + exposition) REPS times with the price table
 *                            and REPS times without: what the spend figures cost a poll
 *   shares CONF URL POLLS REPS TEAMS PER  the fleet polled as spend does, each route's
 *                            admission counters read per series at each poll (PER series
 *                            a route, each of one of TEAMS teams), then serve's per-poll
 *                            work REPS times with share_label naming the team label and
 *                            REPS times naming none the series carry: what shares cost
 *   discover CONF URL        the CloudWatch collector's ListMetrics discovery (live
 *                            mode: every metric listed, matched to its routes) against
 *                            the stub, to the end of the listing: CPU and requests */
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sys/resource.h>

#include "collectors/cloudwatch.h"
#include "collectors/cw_int.h"
#include "collectors/quotas.h"
#include "core/headroom.h"
#include "net/http.h"
#include "net/httpd.h"
#include "core/config.h"
#include "core/cost.h"
#include "core/recording.h"
#include "core/shares.h"
#include "render/exposition.h"
#include "render/report.h"
#include "core/util.h"
#include "tui/tui.h"
#include "io/recfile.h"
#include "io/conffile.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A /proc/self/status figure in kB ("VmHWM": the peak so far, "VmRSS": now). */
static long status_kb(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    size_t n = strlen(key);
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, key, n) && line[n] == ':' && sscanf(line + n + 1, "%ld", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb;
}

static long peak_kb(void)
{
    return status_kb("VmHWM");
}

/* Bytes the store's series take, and how many series hold data (memory per route). */
static size_t store_bytes(const struct bt_store *st, int *nseries)
{
    size_t b = 0;
    *nseries = 0;
    for (int i = 0; i < st->slots * BT_SIG_COUNT; i++) {
        b += bt_series_bytes(&st->series[i]);
        *nseries += st->series[i].cap > 0;
    }
    return b + (size_t)st->nroutes * (BT_SIG_COUNT * sizeof *st->series +
                                      BT_SRC_COUNT * sizeof *st->status);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n ? (n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2) : NAN;
}

static int do_replay(const char *path, int n, unsigned seed)
{
    struct bt_replay rp;
    char err[600];
    double t0 = now_s();
    if (!bt_replay_open(&rp, path, NULL, NULL, err, sizeof err)) {
        fprintf(stderr, "bench_drv: %s\n", err);
        return 3;
    }
    double open_s = now_s() - t0;
    long open_kb = peak_kb();
    double *seek = bt_xcalloc((size_t)n + 1, sizeof *seek);
    double *full = bt_xcalloc((size_t)n + 1, sizeof *full);
    double worst = 0;
    int nser = 0;
    size_t sbytes = store_bytes(&rp.store, &nser);
    for (int i = 0; i < rp.store.nroutes * BT_SIG_COUNT; i++)
        if (getenv("BENCH_SERIES") && rp.store.series[i].cap)
            fprintf(stderr, "%d %d %d %s\n", i / BT_SIG_COUNT, i % BT_SIG_COUNT, rp.store.series[i].cap,
                    rp.store.series[i].d ? "d" : "f");
    srand(seed);
    for (int i = 0; i < n; i++) {
        int64_t span = rp.end - rp.start;
        int64_t t = rp.start + (span > 0 ? (int64_t)((double)rand() / RAND_MAX * (double)span) : 0);
        double a = now_s();
        bt_replay_seek(&rp, t);
        double b = now_s();
        struct bt_report rep;
        bt_report_build(&rep, &rp.cfg, &rp.store, t);
        double c = now_s();
        bt_report_free(&rep);
        seek[i] = b - a;
        full[i] = c - a;
        if (full[i] > worst)
            worst = full[i];
    }
    printf("{\"open_s\":%.6f,\"open_peak_kb\":%ld,\"seek_median_s\":%.6f,"
           "\"seek_report_median_s\":%.6f,\"seek_report_max_s\":%.6f,\"peak_kb\":%ld,"
           "\"routes\":%d,\"polls\":%zu,\"skipped\":%lu,\"store_bytes\":%zu,\"series\":%d}\n",
           open_s, open_kb, median(seek, n), median(full, n), worst, peak_kb(), rp.cfg.nroutes,
           rp.npolls, rp.skipped, sbytes, nser);
    free(seek);
    free(full);
    bt_replay_free(&rp);
    return 0;
}

static int do_render(const char *path, int n, const char *out, const char *how)
{
    struct bt_replay rp;
    char err[600];
    bool full = !strcmp(how, "full"), tick = !strcmp(how, "tick"), repaint = !strcmp(how, "repaint");
    if (!full && !tick && !repaint && strcmp(how, "eval")) {
        fprintf(stderr, "bench_drv: render: eval, full, repaint or tick, not %s\n", how);
        return 3;
    }
    if (tick && n > 59)
        n = 59; /* the ticks stay inside one minute */
    if (!bt_replay_open(&rp, path, NULL, NULL, err, sizeof err)) {
        fprintf(stderr, "bench_drv: %s\n", err);
        return 3;
    }
    /* the tick starts at a minute's first second, so every tick is in that minute */
    struct bt_tui_host host = {.cfg = &rp.cfg, .store = &rp.store, .mode = "replay",
                               .now = tick ? bt_minute_floor(rp.end) : rp.end,
                               .interval = rp.cfg.interval, .paused = true,
                               .metrics_per_poll = NAN, .metrics_per_day = NAN};
    struct bt_tui_opts o = {0};
    double t0 = now_s();
    struct bt_tui *t = bt_tui_new(&o, &host, err, sizeof err);
    if (!t) {
        fprintf(stderr, "bench_drv: %s\n", err);
        bt_replay_free(&rp);
        return 3;
    }
    bt_tui_update(t); /* the first frame: terminal set-up and the full screen */
    double first = now_s() - t0;
    double *f = bt_xcalloc((size_t)n + 1, sizeof *f);
    for (int i = 0; i < n; i++) {
        if (full)
            bt_tui_redraw(t); /* every cell drawn again, only what differs sent */
        else if (repaint)
            bt_tui_resize(t); /* the same size: every cell drawn and sent again */
        else if (tick)
            host.now++;
        else
            rp.store.generation++; /* the model changed: the overview is rebuilt */
        double a = now_s();
        bt_tui_update(t);
        f[i] = now_s() - a;
    }
    bt_tui_free(t);
    FILE *o_f = fopen(out, "w");
    if (o_f) {
        fprintf(o_f, "{\"first_frame_s\":%.6f,\"frame_median_s\":%.6f,\"routes\":%d,\"how\":\"%s\"}\n",
                first, median(f, n), rp.cfg.nroutes, how);
        fclose(o_f);
    }
    free(f);
    bt_replay_free(&rp);
    return 0;
}

static int do_cost(const char *conf, const char *url, int polls)
{
    struct bt_config cfg;
    struct bt_store store;
    char err[600];
    bt_config_init(&cfg);
    if (!bt_config_load(&cfg, conf, err, sizeof err)) {
        fprintf(stderr, "bench_drv: %s\n", err);
        return 3;
    }
    bt_store_init(&store, cfg.nroutes, cfg.history_minutes);
    bt_store_bind_routes(&store, cfg.routes); /* events (OK, quotas) reach the routes */
    struct bt_http *http = bt_http_new(0);
    struct bt_ctx ctx = {.cfg = &cfg, .store = &store, .http = http, .mode = BT_MODE_LIVE,
                         .endpoint_url = url};
    void *cw = bt_cloudwatch_collector.create(&ctx);
    int64_t t = (int64_t)time(NULL);
    printf("{\"start\":%lld,\"polls\":[", (long long)t);
    for (int p = 0; p < polls; p++) {
        unsigned long before = bt_cloudwatch_requests(cw);
        bt_cloudwatch_collector.tick(cw, t + p * 60);
        for (int i = 0; i < 6000 && bt_cloudwatch_collector.busy(cw); i++)
            bt_http_poll(http, 100, -1, NULL);
        printf("%s{\"now\":%lld,\"requests\":%lu}", p ? "," : "", (long long)(t + p * 60),
               bt_cloudwatch_requests(cw) - before);
    }
    double per_poll = NAN, per_day = NAN;
    bt_cloudwatch_cost(cw, &per_poll, &per_day);
    printf("],\"routes\":%d,\"metrics_per_poll\":%.0f,\"metrics_per_day\":%.0f,"
           "\"samples\":%llu}\n",
           cfg.nroutes, per_poll, per_day, (unsigned long long)store.nsamples);
    bt_cloudwatch_collector.destroy(cw);
    bt_http_free(http);
    bt_store_free(&store);
    bt_config_free(&cfg);
    return 0;
}

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* The peak so far forgotten (VmHWM starts again from VmRSS): the peak of one phase. */
static void peak_reset(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (f) {
        fputs("5", f);
        fclose(f);
    }
}

static long rss_kb(void)
{
    return status_kb("VmRSS");
}

/* serve's gzip sink (app/cmd_serve.c gz_write): each rendered piece deflated as it
 * comes, the plain bytes counted, not kept. */
struct scale_sink {
    struct bt_gzip *z;
    struct bt_buf *out;
    size_t *plain;
};

static void scale_write(void *arg, const char *p, size_t n)
{
    struct scale_sink *k = arg;
    *k->plain += n;
    bt_gzip_write(k->z, p, n, k->out);
}

static int do_scale(const char *conf, const char *url, int polls)
{
    long rss0 = rss_kb();
    double c0 = cpu_s(), w0 = now_s();
    struct bt_config cfg;
    struct bt_store store;
    char err[600];
    bt_config_defaults(&cfg);
    if (!bt_config_load(&cfg, conf, err, sizeof err)) {
        fprintf(stderr, "bench_drv: %s\n", err);
        return 3;
    }
    bt_config_serve_history(&cfg); /* as serve keeps it */
    bt_store_init(&store, cfg.nroutes, cfg.history_minutes);
    bt_store_bind_routes(&store, cfg.routes);
    struct bt_http *http = bt_http_new(0);
    struct bt_ctx ctx = {.cfg = &cfg, .store = &store, .http = http, .mode = BT_MODE_LIVE,
                         .endpoint_url = url};
    const struct bt_collector_ops *ops[] = {&bt_cloudwatch_collector, &bt_quotas_collector};
    void *inst[2];
    for (int i = 0; i < 2; i++)
        inst[i] = ops[i]->create(&ctx);
    struct bt_buf gz = {0};
    size_t plain = 0;
    int known = 0;
    long peak_all = peak_kb(); /* each phase's peak is read, then forgotten: the run's is their largest */
    double start_cpu = cpu_s() - c0, start_wall = now_s() - w0;
    int64_t t = (int64_t)time(NULL) / 60 * 60 + 10;
    printf("{\"routes\":%d,\"start_cpu_s\":%.4f,\"start_wall_s\":%.4f,\"polls\":[", cfg.nroutes,
           start_cpu, start_wall);
    for (int p = 0; p < polls; p++) {
        unsigned long before = bt_cloudwatch_requests(inst[0]) + bt_quotas_requests(inst[1]);
        double c = cpu_s(), w = now_s();
        int64_t now = t + p * 60;
        peak_reset();
        for (int i = 0; i < 2; i++)
            if (inst[i])
                ops[i]->tick(inst[i], now);
        for (int i = 0; i < 600000; i++) {
            bool busy = false;
            for (int k = 0; k < 2; k++)
                busy |= inst[k] && ops[k]->busy(inst[k]);
            if (!busy)
                break;
            bt_http_poll(http, 100, -1, NULL);
        }
        long poll_peak = peak_kb();
        peak_all = poll_peak > peak_all ? poll_peak : peak_all;
        peak_reset();
        /* what serve does with each poll that Prometheus scrapes (app/cmd_serve.c
         * serve_body): OpenMetrics rendered and gzipped piece by piece, the gzip kept
         * until the next evaluation, the report freed */
        struct bt_report rep;
        bt_report_build(&rep, &cfg, &store, now);
        rep.mode = "live";
        bt_buf_free(&gz);
        plain = 0;
        struct scale_sink k = {.z = bt_gzip_new(), .out = &gz, .plain = &plain};
        struct bt_expo_sink sink = {.write = scale_write, .arg = &k};
        bt_expo_render_to(&rep, BT_EXPO_OPENMETRICS, &sink);
        bt_gzip_end(k.z, &gz);
        known = 0;
        for (int r = 0; r < cfg.nroutes; r++)
            known += !isnan(rep.evals[r].quota) && !isnan(rep.evals[r].settled);
        bt_report_free(&rep);
        printf("%s{\"now\":%lld,\"cpu_s\":%.4f,\"wall_s\":%.4f,\"requests\":%lu,"
               "\"poll_peak_kb\":%ld,\"render_peak_kb\":%ld}", p ? "," : "",
               (long long)now, cpu_s() - c, now_s() - w,
               bt_cloudwatch_requests(inst[0]) + bt_quotas_requests(inst[1]) - before, poll_peak,
               peak_kb());
        peak_all = peak_kb() > peak_all ? peak_kb() : peak_all;
    }
    int nser = 0;
    size_t sb = store_bytes(&store, &nser);
    long rss = rss_kb();
    printf("],\"body_bytes\":%zu,\"plain_bytes\":%zu,\"rss_kb\":%ld,\"rss_start_kb\":%ld,\"peak_kb\":%ld,\"store_bytes\":%zu,"
           "\"series\":%d,\"samples\":%llu,\"routes_with_quota_and_usage\":%d}\n",
           gz.len, plain, rss, rss0, peak_all, sb, nser, (unsigned long long)store.nsamples, known);
    bt_buf_free(&gz);
    for (int i = 0; i < 2; i++)
        if (inst[i])
            ops[i]->destroy(inst[i]);
    bt_http_free(http);
    bt_store_free(&store);
    bt_config_free(&cfg);
    return 0;
}

/* Issue 36: what the spend figures cost a fleet's poll. The fleet polled live against
 * the stub (CloudWatch and Service Quotas, POLLS polls a simulated minute apart, as
 * do_scale), then the evaluation serve does each poll (the report built: every
 * route evaluated, its spend, SPEND_SPIKE and the sums) and its exposition, REPS
 * times with the price table and REPS times without it (no row: every cost unknown
 * at once), alternated so load drifts alike: the medians, the steady polls' own CPU,
 * and the spend figures alone (spend_work). */
/* BENCH_DRV_BODY=PREFIX: each side's plain body written to PREFIX.prices,
 * PREFIX.noprices (spend), PREFIX.prices, PREFIX.tenant (shares: the team label named
 * or not), the last rep's, so
 * a change's output can be compared byte for byte on the bench's own inputs. */
static void body_dump(const struct bt_config *cfg, const struct bt_buf *body)
{
    const char *pre = getenv("BENCH_DRV_BODY");
    if (!pre || !pre[0])
        return;
    char path[4096];
    snprintf(path, sizeof path, "%s.%s", pre,
             strcmp(cfg->share_label, "team") ? cfg->share_label
                                              : cfg->prices.n ? "prices" : "noprices");
    FILE *f = fopen(path, "w");
    if (f) {
        fwrite(body->buf, 1, body->len, f);
        fclose(f);
    }
}

static void serve_work(const struct bt_config *cfg, struct bt_store *store, int64_t now,
                       double *eval_s, double *expo_s)
{
    double c = cpu_s();
    struct bt_report rep;
    struct bt_buf body = {0};
    bt_report_build(&rep, cfg, store, now);
    rep.mode = "live";
    *eval_s = cpu_s() - c;
    c = cpu_s();
    struct bt_buf gz = {0};
    bt_expo_render(&rep, BT_EXPO_OPENMETRICS, &body); /* as do_scale: rendered and gzipped */
    bt_gzip(body.buf, body.len, &gz);
    *expo_s = cpu_s() - c;
    body_dump(cfg, &body);
    bt_report_free(&rep);
    bt_buf_free(&body);
    bt_buf_free(&gz);
}

/* The two sides of the comparison under names of their own (callgrind counts each) */
__attribute__((noinline)) static void serve_with_prices(struct bt_config *cfg,
                                                        const struct bt_prices *table,
                                                        struct bt_store *store, int64_t now,
                                                        double *eval_s, double *expo_s)
{
    cfg->prices = *table;
    serve_work(cfg, store, now, eval_s, expo_s);
}

__attribute__((noinline)) static void serve_without_prices(struct bt_config *cfg,
                                                           const struct bt_prices *table,
                                                           struct bt_store *store, int64_t now,
                                                           double *eval_s, double *expo_s)
{
    cfg->prices = *table;
    cfg->prices.n = 0; /* no table: bt_cost_row finds no row, every cost unknown */
    serve_work(cfg, store, now, eval_s, expo_s);
    cfg->prices = *table;
}

/* The spend figures alone over an evaluated report: each route's (bt_cost_eval: its
 * rate, its day, the spike windows), the Region, quota group and team sums, the groups'
 * spike windows: what the price table adds to an evaluation. */
/* noinline: callgrind counts it by its name */
__attribute__((noinline)) static double spend_work(const struct bt_config *cfg,
                                                   struct bt_store *store, int64_t now)
{
    struct bt_report rep;
    bt_report_build(&rep, cfg, store, now);
    double c = cpu_s();
    for (int r = 0; r < cfg->nroutes; r++)
        bt_cost_eval(cfg, store, r, true, rep.evals[r].tokens_today_q, &rep.evals[r]);
    struct bt_spend_sum *sums = NULL;
    bt_spend_by_region(cfg, rep.evals, NULL, &sums);
    free(sums);
    struct bt_spend_team *teams = NULL;
    bt_spend_by_team(cfg, store, rep.evals, NULL, &teams);
    free(teams);
    for (int r = 0; r < cfg->nroutes; r++) {
        if (rep.evals[r].group.leader != r)
            continue;
        struct bt_spend_sum g;
        double recent, base;
        int bmin;
        bt_spend_of_group(cfg, rep.evals, r, &g);
        bt_spend_group_window(cfg, store, rep.evals, r, &recent, &base, &bmin);
    }
    double d = cpu_s() - c;
    bt_report_free(&rep);
    return d;
}

/* One poll of the collectors to its end (noinline: callgrind counts it by its name) */
__attribute__((noinline)) static void spend_poll(const struct bt_collector_ops *const *ops,
                                                 void *const *inst, struct bt_http *http,
                                                 int64_t now)
{
    for (int i = 0; i < 2; i++)
        if (inst[i])
            ops[i]->tick(inst[i], now);
    for (int i = 0; i < 600000; i++) {
        bool busy = false;
        for (int k = 0; k < 2; k++)
            busy |= inst[k] && ops[k]->busy(inst[k]);
        if (!busy)
            break;
        bt_http_poll(http, 100, -1, NULL);
    }
}

/* Issue 38: what shares by team cost a fleet's poll. The fleet polled as do_spend
 * does, and at each poll every route's admission counters read per series (admitted,
 * reserved and settled tokens; `per` series a route, each of one team of `teams`,
 * team t on routes t, t + teams, ...: what core/counters.c takes from an admission
 * scrape), then serve's per-poll work (report + exposition, rendered and gzipped)
 * REPS times with the config's share_label naming the series' team label and REPS
 * times with it naming a label no series carries (every share unattributed: the
 * same store, no team told apart), alternated. */
static void shares_feed(struct bt_store *store, int nroutes, int per, int teams, int p,
                        int64_t now)
{
    static const enum bt_signal sigs[3] = {BT_SIG_ADM_ADMITTED, BT_SIG_ADM_RESERVED,
                                           BT_SIG_ADM_SETTLED};
    static const double rate[3] = {60, 60000, 30000}; /* per minute, per series */
    for (int r = 0; r < nroutes; r++)
        for (int k = 0; k < per; k++) {
            int team = (r * per + k) % (teams > 0 ? teams : 1);
            for (int s = 0; s < 3; s++) {
                struct bt_reading rd = {.route = r, .signal = sigs[s], .t = (double)now,
                                        .value = rate[s] * (1 + k) * (p + 1)};
                snprintf(rd.series, sizeof rd.series, "team=\"t%04d\",worker=\"w%d\"", team, k);
                bt_store_reading(store, &rd, now);
            }
        }
}

/* The fleet do_spend and do_shares poll: the config (serve's history), the store, the
 * CloudWatch and Service Quotas collectors in live mode against url. */
struct fleet {
    struct bt_config cfg;
    struct bt_store store;
    struct bt_http *http;
    struct bt_ctx ctx;
    const struct bt_collector_ops *ops[2];
    void *inst[2];
};

static bool fleet_open(struct fleet *f, const char *conf, const char *url)
{
    char err[600];
    bt_config_defaults(&f->cfg);
    if (!bt_config_load(&f->cfg, conf, err, sizeof err)) {
        fprintf(stderr, "bench_drv: %s\n", err);
        return false;
    }
    bt_config_serve_history(&f->cfg);
    bt_store_init(&f->store, f->cfg.nroutes, f->cfg.history_minutes);
    bt_store_bind_routes(&f->store, f->cfg.routes);
    f->http = bt_http_new(0);
    f->ctx = (struct bt_ctx){.cfg = &f->cfg, .store = &f->store, .http = f->http,
                             .mode = BT_MODE_LIVE, .endpoint_url = url};
    f->ops[0] = &bt_cloudwatch_collector;
    f->ops[1] = &bt_quotas_collector;
    for (int i = 0; i < 2; i++)
        f->inst[i] = f->ops[i]->create(&f->ctx);
    return true;
}

static void fleet_close(struct fleet *f)
{
    for (int i = 0; i < 2; i++)
        if (f->inst[i])
            f->ops[i]->destroy(f->inst[i]);
    bt_http_free(f->http);
    bt_store_free(&f->store);
    bt_config_free(&f->cfg);
}

/* POLLS polls of the fleet a simulated minute apart, each with every route's admission
 * counters read (shares_feed) where per > 0; *now: the last poll's instant; returns
 * the steady polls' CPU (the median after the first). */
static double fleet_polls(struct fleet *f, int polls, int per, int teams, int64_t *now)
{
    int64_t t = (int64_t)time(NULL) / 60 * 60 + 10;
    double *poll = bt_xcalloc((size_t)(polls > 0 ? polls : 1), sizeof *poll);
    *now = t;
    for (int p = 0; p < polls; p++) {
        double c = cpu_s();
        *now = t + p * 60;
        spend_poll(f->ops, f->inst, f->http, *now);
        if (per > 0)
            shares_feed(&f->store, f->cfg.nroutes, per, teams, p, *now);
        poll[p] = cpu_s() - c;
    }
    double steady = polls > 1 ? median(poll + 1, polls - 1) : poll[0];
    free(poll);
    return steady;
}

static int do_spend(const char *conf, const char *url, int polls, int reps)
{
    struct fleet f;
    if (!fleet_open(&f, conf, url))
        return 3;
    struct bt_config *cfg = &f.cfg;
    int64_t now;
    double steady = fleet_polls(&f, polls, 0, 0, &now);
    size_t nr = (size_t)(reps > 0 ? reps : 1);
    double *with = bt_xcalloc(nr, sizeof *with), *without = bt_xcalloc(nr, sizeof *without);
    double *xwith = bt_xcalloc(nr, sizeof *xwith), *xwithout = bt_xcalloc(nr, sizeof *xwithout);
    struct bt_prices table = cfg->prices;
    int priced = 0;
    for (int i = 0; i < reps; i++) {
        serve_with_prices(cfg, &table, &f.store, now, &with[i], &xwith[i]);
        serve_without_prices(cfg, &table, &f.store, now, &without[i], &xwithout[i]);
    }
    cfg->prices = table;
    double *alone = bt_xcalloc((size_t)(reps > 0 ? reps : 1), sizeof *alone);
    for (int i = 0; i < reps; i++)
        alone[i] = spend_work(cfg, &f.store, now);
    for (int r = 0; r < cfg->nroutes; r++) {
        char why[192];
        priced += bt_cost_row(cfg, &cfg->routes[r], why, sizeof why) != NULL;
    }
    printf("{\"routes\":%d,\"priced\":%d,\"price_rows\":%d,\"poll_cpu_s\":%.4f,"
           "\"eval_with_prices_s\":%.4f,\"eval_without_prices_s\":%.4f,"
           "\"expo_with_prices_s\":%.4f,\"expo_without_prices_s\":%.4f,\"spend_alone_s\":%.5f,"
           "\"reps\":%d}\n",
           cfg->nroutes, priced, table.n, steady, median(with, reps), median(without, reps),
           median(xwith, reps), median(xwithout, reps), median(alone, reps), reps);
    free(alone);
    free(xwith);
    free(xwithout);
    free(with);
    free(without);
    fleet_close(&f);
    return 0;
}

__attribute__((noinline)) static void serve_with_teams(struct bt_config *cfg, struct bt_store *store,
                                                       int64_t now, double *eval_s, double *expo_s)
{
    bt_strlcpy(cfg->share_label, "team", sizeof cfg->share_label);
    serve_work(cfg, store, now, eval_s, expo_s);
}

__attribute__((noinline)) static void serve_without_teams(struct bt_config *cfg,
                                                          struct bt_store *store, int64_t now,
                                                          double *eval_s, double *expo_s)
{
    bt_strlcpy(cfg->share_label, "tenant", sizeof cfg->share_label); /* no series has it */
    serve_work(cfg, store, now, eval_s, expo_s);
    bt_strlcpy(cfg->share_label, "team", sizeof cfg->share_label);
}

static int do_shares(const char *conf, const char *url, int polls, int reps, int teams, int per)
{
    struct fleet f;
    if (!fleet_open(&f, conf, url))
        return 3;
    struct bt_config *cfg = &f.cfg;
    int64_t now;
    double steady = fleet_polls(&f, polls, per, teams, &now);
    size_t nr = (size_t)(reps > 0 ? reps : 1);
    double *with = bt_xcalloc(nr, sizeof *with), *without = bt_xcalloc(nr, sizeof *without);
    double *xwith = bt_xcalloc(nr, sizeof *xwith), *xwithout = bt_xcalloc(nr, sizeof *xwithout);
    for (int i = 0; i < reps; i++) {
        serve_with_teams(cfg, &f.store, now, &with[i], &xwith[i]);
        serve_without_teams(cfg, &f.store, now, &without[i], &xwithout[i]);
    }
    /* what the report tells apart: the teams named by the routes' shares */
    struct bt_report rep;
    bt_report_build(&rep, cfg, &f.store, now);
    struct bt_share_list l = {0};
    int told = 0;
    for (int r = 0; r < cfg->nroutes; r++) {
        bt_shares_of_route(cfg, &f.store, rep.evals, r, BT_SHARE_TEAM, NULL, &l);
        for (int k = 0; k < l.n; k++)
            told += strcmp(l.s[k].name, BT_SHARE_UNATTRIBUTED) && !l.s[k].outside;
    }
    bt_shares_free(&l);
    bt_report_free(&rep);
    printf("{\"routes\":%d,\"teams\":%d,\"series_per_route\":%d,\"team_shares\":%d,"
           "\"poll_cpu_s\":%.4f,\"eval_with_teams_s\":%.4f,\"eval_without_teams_s\":%.4f,"
           "\"expo_with_teams_s\":%.4f,\"expo_without_teams_s\":%.4f,\"reps\":%d}\n",
           cfg->nroutes, teams, per, told, steady, median(with, reps), median(without, reps),
           median(xwith, reps), median(xwithout, reps), reps);
    free(xwith);
    free(xwithout);
    free(with);
    free(without);
    fleet_close(&f);
    return 0;
}

static int do_config(const char *path, int n)
{
    double *t = bt_xcalloc((size_t)(n > 0 ? n : 1), sizeof *t);
    int routes = 0;
    for (int i = 0; i < n; i++) {
        struct bt_config c;
        char err[512];
        bt_config_init(&c);
        double t0 = now_s();
        if (!bt_config_load(&c, path, err, sizeof err)) {
            fprintf(stderr, "bench_drv: %s\n", err);
            free(t);
            return 3;
        }
        t[i] = now_s() - t0;
        routes = c.nroutes;
        bt_config_free(&c);
    }
    printf("{\"routes\": %d, \"load_median_s\": %.6f}\n", routes, median(t, n));
    free(t);
    return 0;
}

/* N routes, each with one CloudWatch minute (10 calls, 5,000 input, 1,000 output,
 * 1.5 s average latency, max_tokens 1,000), on one quota code (one group of N) or
 * each on its own: bt_eval_all timed over RUNS evaluations. */
static int do_groups(int n, int one, int runs)
{
    const int64_t now = 1795946400 + 600, m = 1795946400 + 420;
    struct bt_config cfg;
    struct bt_store st;
    bt_config_init(&cfg);
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "r%05d", i);
        int r = bt_config_add_route(&cfg, name);
        struct bt_route *rt = &cfg.routes[r];
        snprintf(rt->model, sizeof rt->model, "amazon.nova-lite-v1:0");
        bt_strlcpy(rt->region, "us-east-1", sizeof rt->region);
        rt->max_tokens = 1000;
        rt->quota[BT_Q_TPM] = (struct bt_quota){1e9, BT_QS_SERVICE_QUOTAS, "", "bench"};
        snprintf(rt->quota[BT_Q_TPM].code, sizeof rt->quota[BT_Q_TPM].code, "L-%05d", one ? 0 : i);
    }
    bt_config_finish(&cfg);
    bt_store_init(&st, cfg.nroutes, 60);
    for (int r = 0; r < n; r++) {
        struct bt_event ev = {.t = now, .type = BT_EV_OK, .route = r, .source = BT_SRC_CLOUDWATCH};
        bt_model_event(&st, cfg.routes, &ev);
        const enum bt_signal sig[] = {BT_SIG_INVOCATIONS, BT_SIG_INPUT_TOKENS, BT_SIG_OUTPUT_TOKENS,
                                      BT_SIG_LATENCY_AVG};
        const double val[] = {10, 5000, 1000, 1500};
        for (int k = 0; k < 4; k++) {
            struct bt_sample smp = {.t = m, .route = r, .signal = sig[k], .value = val[k]};
            bt_store_add(&st, &smp, now);
        }
    }
    struct bt_eval *ev = bt_xcalloc((size_t)n, sizeof *ev);
    double *t = bt_xcalloc((size_t)(runs > 0 ? runs : 1), sizeof *t);
    for (int i = 0; i < runs; i++) {
        double t0 = now_s();
        bt_eval_all(&cfg, &st, now, ev);
        t[i] = now_s() - t0;
    }
    printf("{\"routes\": %d, \"one_group\": %s, \"eval_median_s\": %.6f, \"group_used\": %.0f, "
           "\"others\": %d}\n", n, one ? "true" : "false", median(t, runs), bt_eval_group_used(&ev[n - 1]),
           bt_eval_nshared(&ev[n - 1]));
    free(t);
    free(ev);
    bt_store_free(&st);
    bt_config_free(&cfg);
    return 0;
}

static int do_discover(const char *conf, const char *url)
{
    struct bt_config cfg;
    struct bt_store store;
    char err[600];
    bt_config_defaults(&cfg);
    if (!bt_config_load(&cfg, conf, err, sizeof err)) {
        fprintf(stderr, "bench_drv: %s\n", err);
        return 3;
    }
    bt_store_init(&store, cfg.nroutes, cfg.history_minutes);
    bt_store_bind_routes(&store, cfg.routes);
    struct bt_http *http = bt_http_new(0);
    struct bt_ctx ctx = {.cfg = &cfg, .store = &store, .http = http, .mode = BT_MODE_LIVE,
                         .endpoint_url = url};
    struct cw *cw = bt_cloudwatch_collector.create(&ctx);
    int64_t now = (int64_t)time(NULL) / 60 * 60 + 10;
    double c = cpu_s(), w = now_s();
    unsigned long before = bt_cloudwatch_requests(cw);
    for (int i = 0; i < cw->ng; i++)
        cw_start_list(&cw->g[i], now, 0);
    for (int k = 0; k < 600000; k++) { /* to the end of every group's listing */
        bool listing = false;
        for (int i = 0; i < cw->ng; i++)
            listing |= cw->g[i].listing;
        if (!listing)
            break;
        bt_http_poll(http, 100, -1, NULL);
    }
    double cpu = cpu_s() - c, wall = now_s() - w;
    int seen = 0;
    for (int r = 0; r < cfg.nroutes; r++)
        seen += cw->seen[r] != 0;
    printf("{\"routes\":%d,\"cpu_s\":%.4f,\"wall_s\":%.4f,\"requests\":%lu,"
           "\"routes_matched\":%d}\n", cfg.nroutes, cpu, wall,
           bt_cloudwatch_requests(cw) - before, seen);
    bt_cloudwatch_collector.destroy(cw);
    bt_http_free(http);
    bt_store_free(&store);
    bt_config_free(&cfg);
    return 0;
}

int main(int argc, char **argv)
{
    setlocale(LC_ALL, "");
    setlocale(LC_NUMERIC, "C");
    if (argc == 5 && !strcmp(argv[1], "replay"))
        return do_replay(argv[2], atoi(argv[3]), (unsigned)atoi(argv[4]));
    if ((argc == 5 || argc == 6) && !strcmp(argv[1], "render"))
        return do_render(argv[2], atoi(argv[3]), argv[4], argc == 6 ? argv[5] : "eval");
    if (argc == 5 && !strcmp(argv[1], "cost"))
        return do_cost(argv[2], argv[3], atoi(argv[4]));
    if (argc == 5 && !strcmp(argv[1], "scale"))
        return do_scale(argv[2], argv[3], atoi(argv[4]));
    if (argc == 6 && !strcmp(argv[1], "spend"))
        return do_spend(argv[2], argv[3], atoi(argv[4]), atoi(argv[5]));
    if (argc == 8 && !strcmp(argv[1], "shares"))
        return do_shares(argv[2], argv[3], atoi(argv[4]), atoi(argv[5]), atoi(argv[6]),
                         atoi(argv[7]));
    if (argc == 5 && !strcmp(argv[1], "groups"))
        return do_groups(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
    if (argc == 4 && !strcmp(argv[1], "discover"))
        return do_discover(argv[2], argv[3]);
    if (argc == 4 && !strcmp(argv[1], "config"))
        return do_config(argv[2], atoi(argv[3]));
    fprintf(stderr, "usage: bench_drv replay FILE N SEED | render FILE N OUT [eval|full|repaint|tick] | cost CONF URL POLLS"
                    " | discover CONF URL"
                    " | config CONF N | groups N ONE RUNS | scale CONF URL POLLS"
                    " | spend CONF URL POLLS REPS | shares CONF URL POLLS REPS TEAMS PER\n");
    return 3;
}
