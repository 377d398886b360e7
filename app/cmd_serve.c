/* bedtop serve: the headless poller for a fleet (DESIGN.md "Fleet: bedtop
 * serve and Prometheus"). The same collectors, core and recording as the
 * dashboard on the same one loop; an HTTP server (app/httpd.c) whose epoll fd
 * the loop waits on answers GET /metrics from the last evaluation (never
 * waiting on AWS) and GET /healthz. SIGHUP reloads the config without
 * blocking the loop: with no routes configured, the new routes are discovered
 * by requests the running loop drives, and the previous routes are served
 * until the new set is ready. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "app/app.h"
#include "collectors/cloudwatch.h"
#include "collectors/demo.h"
#include "net/httpd.h"
#include "net/loop.h"
#include "core/apicost.h"
#include "render/exposition.h"
#include "core/recording.h"
#include "render/report.h"
#include "core/util.h"
#include "io/file.h"

/* serve's own options (app/app.h APP_OPT_FIELD, APP_OPT_ROW) */
#define SERVE_OPTIONS(X, T)                                                                  \
    X(T, STR, listen, "listen")   /* ADDR:PORT (NULL: BT_HTTPD_DEFAULT_LISTEN) */            \
    X(T, STR, replica, "replica") /* the replica label of every series (an HA pair) */       \
    X(T, STR, record, "record")   /* FILE: record what is polled */
struct serve_opts {
    APP_OPTS_COMMON;
    SERVE_OPTIONS(APP_OPT_FIELD, struct serve_opts)
};

APP_CMD_EXEC(cmd_serve, struct serve_opts)
static const struct bt_cmd_opt serve_options[] = {
    BT_OPT_STR("config", struct serve_opts, config),
    APP_OPTS_AWS(struct serve_opts),
    BT_OPT_NUM("interval", struct serve_opts, interval),
    BT_OPT_STR("admission", struct serve_opts, admission),
    APP_OPTS_DEMO(struct serve_opts),
    SERVE_OPTIONS(APP_OPT_ROW, struct serve_opts)
};
const struct bt_cmd_entry bt_cmd_serve_entry = {
    .name = "serve",
    .usage = "serve [--listen ADDR:PORT] [--replica NAME] [--record FILE]",
    .summary = "the headless poller for a fleet: GET /metrics answers every route's\n"
               "headroom in the Prometheus exposition format",
    .opts = serve_options, .nopts = BT_ARRAY_LEN(serve_options),
    .size = sizeof(struct serve_opts), .exec = cmd_serve_exec,
    .aws = "unless --demo",
};

/* One evaluation's exposition in one format: rendered once, at the first scrape that
 * asks for it, into the coding that scrape takes (gzip: straight into the gzip); the
 * other coding made from it at most once, for the first scrape that asks; each shared
 * with every connection that sends it (net/httpd.h bt_httpd_body: no copy per scrape). */
struct serve_body {
    struct bt_httpd_body *plain, *gz;
    char etag[48], etag_gz[48];
};

struct serve {
    struct serve_opts *o;
    struct app apps[2];      /* the running one and the one a reload builds */
    struct app *a;
    struct bt_httpd *httpd;
    struct bt_api_cost cost; /* kept across reloads */
    struct serve_body body[2]; /* the last evaluation: [0] text 0.0.4, [1] OpenMetrics */
    uint64_t gen;            /* store generation evaluated */
    uint64_t requests;       /* AWS requests counted (cost) when it was evaluated */
    int64_t until;           /* the clock alone changes its figures from then (0: not yet rendered) */
    uint64_t evals;          /* evaluations made: the entity tag's counter */
    uint64_t nonce;          /* this process's: tags never repeat across restarts */
    int64_t built;           /* wall second of the last evaluation: Last-Modified */
    int64_t evaluated;       /* the poller's second evaluated */
    int64_t started;
    int reloads;
    struct bt_loop_view view;
    /* a reload waiting on route discovery: the app it builds (its config loaded)
     * and the discovery, whose requests the running app's loop drives */
    struct app *pending;
    struct bt_cw_discovery *disc;
};

/* The poller's clock: the wall clock, or --demo's simulated one. */
static int64_t serve_now(struct serve *s)
{
    return bt_clock_now(&s->a->loop.clock);
}

/* Every AWS request counted so far: bedtop_api_requests_total moves with it. */
static uint64_t serve_requests(const struct serve *s)
{
    uint64_t n = s->cost.metrics_total;
    for (int a = 0; a < s->cost.napi; a++)
        for (int o = 0; o < BT_API_NOUTCOMES; o++)
            n += s->cost.api[a].n[o];
    return n;
}

static void body_free(struct serve_body *b)
{
    bt_httpd_body_unref(b->plain);
    bt_httpd_body_unref(b->gz);
    *b = (struct serve_body){0};
}

/* A new evaluation at the poller's second now: the bodies of the last one are let go
 * (connections still sending them keep theirs). A strong entity tag names the bytes
 * of one evaluation in one format and coding. */
static void serve_eval(struct serve *s, int64_t now)
{
    for (int f = 0; f < 2; f++)
        body_free(&s->body[f]);
    s->evals++;
    s->gen = bt_store_generation(&s->a->store);
    s->requests = serve_requests(s);
    s->until = 0;
    s->built = (int64_t)bt_wall_now();
    s->evaluated = now;
}

/* A streamed render's pieces, gzipped as they come: the plain body is never held. */
struct gz_sink {
    struct bt_gzip *z;
    struct bt_buf out;
};

static void gz_write(void *arg, const char *p, size_t n)
{
    struct gz_sink *g = arg;
    bt_gzip_write(g->z, p, n, &g->out); /* a failure shows at bt_gzip_end */
}

/* The evaluation's body in format f (1: OpenMetrics), rendered at its first scrape:
 * Prometheus asks one format, so the other is never built nor kept (a format's body
 * is ~10 kB a route plain, ~0.3 kB gzipped). gz: the scrape takes gzip, so the body is
 * gzipped as it is rendered and only the gzip is kept (issue 38: 5,000 routes built
 * ~50 MB plain before their gzip); a plain scrape of that evaluation later inflates
 * it (the same bytes). A second format of the same evaluation builds the same report
 * again (the store has not changed, or it would be a new evaluation). */
static struct serve_body *serve_body(struct serve *s, int f, bool gz)
{
    struct serve_body *sb = &s->body[f];
    if (sb->plain || sb->gz)
        return sb;
    struct bt_report rep;
    bt_report_build(&rep, &s->a->cfg, &s->a->store, s->evaluated);
    rep.api = &s->cost;
    rep.mode = s->o->demo ? "demo" : "live"; /* --demo: every series says so (mode="demo") */
    rep.replica = s->o->replica;
    app_cost(s->a, &rep.metrics_per_poll, &rep.metrics_per_day);
    enum bt_expo_format format = f ? BT_EXPO_OPENMETRICS : BT_EXPO_TEXT;
    struct gz_sink g = {.z = gz ? bt_gzip_new() : NULL};
    if (g.z) {
        struct bt_expo_sink sink = {.write = gz_write, .arg = &g};
        bt_expo_render_to(&rep, format, &sink);
        if (bt_gzip_end(g.z, &g.out))
            sb->gz = bt_httpd_body_take(&g.out);
        bt_buf_free(&g.out);
    }
    if (!sb->gz) { /* plain asked, or zlib failed: the plain body, gzipped on demand */
        struct bt_buf b = {0};
        bt_expo_render(&rep, format, &b);
        sb->plain = bt_httpd_body_take(&b);
    }
    s->until = bt_expo_changes_at(&rep);
    bt_report_free(&rep);
    const char *fmt = f ? "om" : "text";
    snprintf(sb->etag, sizeof sb->etag, "\"%016llx-%llu-%s\"", (unsigned long long)s->nonce,
             (unsigned long long)s->evals, fmt);
    snprintf(sb->etag_gz, sizeof sb->etag_gz, "\"%016llx-%llu-%s-gz\"", (unsigned long long)s->nonce,
             (unsigned long long)s->evals, fmt);
    return sb;
}

/* /metrics: the last evaluation's body in the format and coding asked, made by the
 * first scrape of the evaluation that wants it (the gzip from the plain body, or the
 * plain body from the gzip). */
static void metrics(struct serve *s, const struct bt_httpd_req *req, struct bt_httpd_resp *resp)
{
    /* evaluated from what the store holds once per data generation (a poll's result,
     * a reload: issue 38), not once per second: a scrape between polls is sent the
     * bytes already made. The clock alone re-evaluates only where it changes a figure
     * (a source going stale, a new day: bt_expo_changes_at); the ages and the
     * evaluation's timestamp are those of the evaluation. An evaluation not rendered
     * yet is taken at this scrape's instant. Nothing here waits on AWS: collectors
     * fill the store in the background. */
    int64_t now = serve_now(s);
    bool rendered = s->body[0].plain || s->body[1].plain || s->body[0].gz || s->body[1].gz;
    if (bt_store_generation(&s->a->store) != s->gen || serve_requests(s) != s->requests ||
        (rendered && s->until && now >= s->until) || (!rendered && now != s->evaluated))
        serve_eval(s, now);
    bool om = bt_httpd_wants_openmetrics(req->accept);
    struct serve_body *b = serve_body(s, om, req->gzip);
    resp->status = 200;
    resp->content_type = om ? BT_EXPO_CT_OPENMETRICS : BT_EXPO_CT_TEXT;
    resp->vary = "Accept, Accept-Encoding";
    resp->last_modified = s->built;
    const struct bt_httpd_body *p = b->plain;
    if (req->gzip && !b->gz && bt_httpd_body_len(p) > 0) {
        struct bt_buf z = {0};
        if (bt_gzip(bt_httpd_body_data(p), bt_httpd_body_len(p), &z))
            b->gz = bt_httpd_body_take(&z);
        bt_buf_free(&z);
    }
    if (!req->gzip && !b->plain) {
        struct bt_buf z = {0};
        if (bt_gunzip(bt_httpd_body_data(b->gz), bt_httpd_body_len(b->gz), &z))
            b->plain = bt_httpd_body_take(&z);
        bt_buf_free(&z);
    }
    bool gz = req->gzip && b->gz;
    if (!gz && !b->plain) { /* a gzip that does not inflate: nothing this side of zlib */
        resp->status = 500;
        bt_buf_puts(resp->body, "serve: the kept body could not be inflated\n");
        return;
    }
    resp->shared = gz ? b->gz : b->plain;
    resp->shared_gzip = gz;
    bt_strlcpy(resp->etag, gz ? b->etag_gz : b->etag, sizeof resp->etag);
}

static void healthz(struct serve *s, struct bt_httpd_resp *resp)
{
    /* healthy while some route's CloudWatch data arrived within three polls (or
     * the poller is younger than that): a dead poller is also `up == 0` */
    int64_t now = serve_now(s), newest = 0;
    for (int i = 0; i < s->a->cfg.nroutes; i++) {
        const struct bt_source_status *st = bt_store_status_c(&s->a->store, i, BT_SRC_CLOUDWATCH);
        if (st->last_ok > newest)
            newest = st->last_ok;
    }
    double grace = 3 * s->a->cfg.interval + 120;
    char when[32] = "never";
    if (newest)
        bt_fmt_iso(newest, when, sizeof when);
    bool ok = (newest && now - newest <= grace) || now - s->started <= grace;
    resp->status = ok ? 200 : 503;
    bt_buf_printf(resp->body, "%s: %d routes, last CloudWatch success %s, evaluated %lld\n",
                  ok ? "ok" : "stale", s->a->cfg.nroutes, when, (long long)s->evaluated);
}

static void on_request(void *arg, const struct bt_httpd_req *req, struct bt_httpd_resp *resp)
{
    struct serve *s = arg;
    if (!strcmp(req->path, "/metrics")) {
        metrics(s, req, resp);
    } else if (!strcmp(req->path, "/healthz")) {
        healthz(s, resp);
    } else if (!strcmp(req->path, "/")) {
        resp->status = 200;
        bt_buf_printf(resp->body, "bedtop %s serve: GET /metrics (Prometheus text or OpenMetrics), "
                                  "GET /healthz\n", BEDTOP_VERSION);
    } else {
        resp->status = 404;
        bt_buf_puts(resp->body, "not found: try /metrics or /healthz\n");
    }
}

static void view_input(void *self)
{
    struct serve *s = self;
    bt_httpd_run(s->httpd);
}

static void view_update(void *self, int64_t now)
{
    struct serve *s = self;
    (void)now;
    if (s->httpd) /* the loop woke for an idle connection's deadline, or anything else */
        bt_httpd_expire(s->httpd);
    app_print_new_errors(s->a);
}

static bool view_done(void *self)
{
    /* the loop returns to cmd_serve to put the reloaded app in place */
    struct serve *s = self;
    return s->disc && bt_cloudwatch_discover_done(s->disc);
}

static int view_next_ms(void *self)
{
    struct serve *s = self;
    return bt_httpd_next_ms(s->httpd); /* idle connections time out; nothing else ticks */
}

static void serve_after_tick(void *arg, int64_t now)
{
    struct app *a = arg;
    if (a->rec)
        bt_recorder_flush(a->rec, now);
}

/* --record FILE across reloads: the first run writes FILE; a reload writes a
 * new recording (its header holds the new routes) at FILE if it was moved
 * away (log rotation), else at FILE.N. */
static const char *record_path(struct serve *s, char *buf, size_t n)
{
    if (!s->o->record)
        return NULL;
    struct stat st;
    if (s->reloads == 0 || stat(s->o->record, &st) != 0)
        return s->o->record;
    for (int k = s->reloads; k < s->reloads + 1000; k++) {
        snprintf(buf, n, "%s.%d", s->o->record, k);
        if (stat(buf, &st) != 0)
            break;
    }
    return buf;
}

/* What every started app gets: the recorder flush after each tick, the view, a
 * --demo-at clock standing still. */
static void wire_app(struct serve *s, struct app *a)
{
    a->loop.after_tick = serve_after_tick;
    a->loop.after_tick_arg = a;
    a->loop.view = &s->view;
    if (s->o->demo && !isnan(s->o->demo_at)) { /* --demo-at M: one minute, standing still */
        a->loop.paused = true;
        bt_clock_freeze(&a->loop.clock, true);
    }
    if (a->rec)
        fprintf(stderr, "bedtop: serve: recording to %s\n", bt_recorder_path(a->rec));
}

static int start_app(struct serve *s, struct app *a)
{
    char path[1100];
    int64_t start;
    s->o->api_cost = &s->cost;
    s->o->serve = true;
    int rc = app_init_live(a, &s->o->common, record_path(s, path, sizeof path), &start);
    if (rc)
        return rc;
    wire_app(s, a);
    return 0;
}

/* The reloaded app, its routes known, takes the running one's place. */
static void reload_swap(struct serve *s, struct app *next)
{
    char path[1100];
    int64_t start = s->o->demo ? app_demo_now(&s->o->common, 0) : (int64_t)time(NULL);
    bool ok = app_init_start(next, (double)start) == 0;
    if (!ok)
        app_free(next);
    else /* app_record_to frees next when it fails */
        ok = app_record_to(next, record_path(s, path, sizeof path), start) == 0;
    if (!ok) {
        bt_err("serve: config reload failed (above); still serving the previous config");
        return;
    }
    wire_app(s, next);
    app_free(s->a);
    s->a = next;
    serve_eval(s, serve_now(s));
    fprintf(stderr, "bedtop: serve: config reloaded (%d route%s)\n", s->a->cfg.nroutes,
            s->a->cfg.nroutes == 1 ? "" : "s");
}

/* A reload waiting on discovery let go of (a newer SIGHUP, or serve ending): its
 * requests are cancelled and the app it was building freed. */
static void reload_abandon(struct serve *s)
{
    if (!s->pending)
        return;
    char err[2048];
    enum bt_errkind kind;
    if (s->disc)
        bt_cloudwatch_discover_finish(s->disc, &s->pending->cfg, &kind, err, sizeof err);
    s->disc = NULL;
    app_free(s->pending);
    s->pending = NULL;
}

/* SIGHUP: the new config is loaded beside the running one. Routes configured: it
 * takes over now. None: they are discovered by requests the running loop drives
 * (never a wait here: /metrics keeps answering with the previous routes), and
 * reload_discovered puts it in place once they are known. */
static void reload_begin(struct serve *s)
{
    if (s->pending) {
        reload_abandon(s);
        fprintf(stderr, "bedtop: serve: SIGHUP again: the reload in progress starts over\n");
    }
    struct app *next = s->a == &s->apps[0] ? &s->apps[1] : &s->apps[0];
    s->reloads++;
    s->o->api_cost = &s->cost;
    s->o->serve = true;
    if (app_init_config(next, &s->o->common, BT_MODE_LIVE) != 0) {
        app_free(next);
        bt_err("serve: config reload failed (above); still serving the previous config");
        return;
    }
    if (s->o->demo || next->cfg.nroutes > 0) {
        reload_swap(s, next);
        return;
    }
    char err[2048];
    enum bt_errkind kind;
    s->disc = bt_cloudwatch_discover_start(&next->ctx, s->a->ctx.http, &kind, err, sizeof err);
    if (!s->disc) {
        app_free(next);
        bt_err("serve: config reload: %s; still serving the previous config", err);
        return;
    }
    s->pending = next;
    fprintf(stderr, "bedtop: serve: config reload: discovering the routes; the previous %d "
                    "route%s served meanwhile\n",
            s->a->cfg.nroutes, s->a->cfg.nroutes == 1 ? " is" : "s are");
}

/* The pending reload's discovery has its answer: the new routes, or the error. */
static void reload_discovered(struct serve *s)
{
    struct app *next = s->pending;
    char err[2048];
    enum bt_errkind kind;
    int n = bt_cloudwatch_discover_finish(s->disc, &next->cfg, &kind, err, sizeof err);
    s->disc = NULL;
    s->pending = NULL;
    if (n <= 0) {
        if (n == 0)
            snprintf(err, sizeof err, "route discovery: CloudWatch lists no AWS/Bedrock ModelId "
                                      "metrics in this Region");
        app_free(next);
        bt_err("serve: config reload: %s; still serving the previous config", err);
        return;
    }
    bt_config_finish(&next->cfg);
    reload_swap(s, next);
}

/* The SIGHUP the loop returned for is taken, and only it: a SIGTERM or SIGINT that
 * arrived since stays for the loop to end on (clearing the flag outright lost it,
 * and serve then ran on after SIGTERM). */
static void reload_taken(void)
{
    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigprocmask(SIG_BLOCK, &set, &old);
    if (bt_loop_quit_signal == SIGHUP)
        bt_loop_quit_signal = 0;
    sigprocmask(SIG_SETMASK, &old, NULL);
}

/* A replica name as Thanos and Mimir users write them ("a", "prom-1", "us-east-1.b"). */
static bool valid_replica(const char *r)
{
    size_t n = strlen(r);
    return n > 0 && n < 64 && strspn(r, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                        "0123456789._-") == n;
}

static int cmd_serve(struct serve_opts *o)
{
    if (o->file) {
        bt_err("serve: unexpected argument '%s'; serve takes options only (--listen ADDR:PORT)",
               o->file);
        return 3;
    }
    if (o->source) {
        bt_err("serve: --source reads bedtop's series back from Prometheus; serve is what "
               "feeds it, from AWS: drop --source");
        return 3;
    }
    if (o->replica && !valid_replica(o->replica)) {
        bt_err("serve: --replica '%.80s': use 1 to 63 letters, digits, '.', '_' or '-' "
               "(e.g. --replica a)", o->replica);
        return 3;
    }
    static struct serve s;
    memset(&s, 0, sizeof s);
    s.o = o;
    s.started = (int64_t)time(NULL);
    s.nonce = ((uint64_t)(bt_wall_now() * 1e6) << 16) ^ (uint64_t)getpid();
    s.view = (struct bt_loop_view){.self = &s, .on_input = view_input, .on_update = view_update,
                                   .done = view_done, .next_wakeup_ms = view_next_ms};
    s.a = &s.apps[0];
    bt_loop_signals(); /* before anything can take time: a SIGHUP then is a reload, not death */
    /* --demo: the story on the wall clock, from this minute (the fleet path tried on the
     * demo: Prometheus stores each sample at its time, check --source reads it fresh);
     * --demo-at M keeps the story's own clock, 2026-11-29T10:M, standing still */
    if (o->demo && isnan(o->demo_at))
        bt_demo_set_t0((int64_t)time(NULL));
    int rc = start_app(&s, s.a);
    if (rc)
        return rc;
    char err[300];
    s.httpd = bt_httpd_new(o->listen, on_request, &s, err, sizeof err);
    if (!s.httpd) {
        bt_err("serve: %s; pick a free port, e.g. --listen 127.0.0.1:9465", err);
        app_free(s.a);
        return 3;
    }
    s.view.input_fd = bt_httpd_fd(s.httpd);
    s.started = serve_now(&s);
    serve_eval(&s, serve_now(&s));
    fprintf(stderr, "bedtop: serve: listening on http://%s/metrics (%d %sroute%s)%s\n",
            bt_httpd_address(s.httpd), s.a->cfg.nroutes, o->demo ? "simulated demo " : "",
            s.a->cfg.nroutes == 1 ? "" : "s",
            bt_httpd_loopback(s.httpd) ? ""
                                       : "; reachable from other hosts, without authentication");
    for (;;) {
        int sig = bt_loop_run(&s.a->loop);
        if (sig == SIGHUP) {
            reload_taken();
            reload_begin(&s);
        } else if (sig == 0 && s.disc && bt_cloudwatch_discover_done(s.disc)) {
            reload_discovered(&s);
        } else {
            break;
        }
    }
    reload_abandon(&s);
    const char *rerr = s.a->rec ? bt_recorder_error(s.a->rec) : NULL;
    if (rerr)
        bt_err("%s", rerr);
    bt_httpd_free(s.httpd);
    body_free(&s.body[0]);
    body_free(&s.body[1]);
    app_free(s.a);
    return 0;
}
