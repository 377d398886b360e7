/* bedtop serve: the headless poller for a fleet (DESIGN.md "Fleet: bedtop
 * serve and Prometheus"). The same collectors, core and recording as the
 * dashboard on the same one loop; an HTTP server (app/httpd.c) whose epoll fd
 * the loop waits on answers GET /metrics from the last evaluation (never
 * waiting on AWS) and GET /healthz. SIGHUP reloads the config. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "app/app.h"
#include "net/httpd.h"
#include "net/loop.h"
#include "core/apicost.h"
#include "render/exposition.h"
#include "core/recording.h"
#include "render/report.h"
#include "core/util.h"

#define SERVE_REEVAL_S 1     /* a scrape re-evaluates when the last evaluation is older */

struct serve {
    struct opts *o;
    struct app apps[2];      /* the running one and the one a reload builds */
    struct app *a;
    struct bt_httpd *httpd;
    struct bt_api_cost cost; /* kept across reloads */
    struct bt_buf text, om;  /* the last evaluation, rendered */
    uint64_t gen;            /* store generation evaluated */
    double built;            /* wall time of the last evaluation, 0 none */
    int64_t evaluated;
    int64_t started;
    int reloads;
    struct bt_loop_view view;
};

static void serve_eval(struct serve *s, int64_t now)
{
    struct bt_report rep;
    bt_report_build(&rep, &s->a->cfg, &s->a->store, now);
    rep.api = &s->cost;
    app_cost(s->a, &rep.metrics_per_poll, &rep.metrics_per_day);
    bt_buf_reset(&s->text);
    bt_buf_reset(&s->om);
    bt_expo_render(&rep, BT_EXPO_TEXT, &s->text);
    bt_expo_render(&rep, BT_EXPO_OPENMETRICS, &s->om);
    bt_report_free(&rep);
    s->gen = s->a->store.generation;
    s->built = bt_wall_now();
    s->evaluated = now;
}

static void healthz(struct serve *s, struct bt_httpd_resp *resp)
{
    /* healthy while some route's CloudWatch data arrived within three polls (or
     * the poller is younger than that): a dead poller is also `up == 0` */
    int64_t now = (int64_t)time(NULL), newest = 0;
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
        /* evaluated at scrape time from what the store holds (ages are current);
         * nothing here waits on AWS: collectors fill the store in the background */
        if (s->a->store.generation != s->gen || bt_wall_now() - s->built >= SERVE_REEVAL_S)
            serve_eval(s, (int64_t)time(NULL));
        bool om = bt_httpd_wants_openmetrics(req->accept);
        const struct bt_buf *b = om ? &s->om : &s->text;
        resp->status = 200;
        resp->content_type = om ? BT_EXPO_CT_OPENMETRICS : BT_EXPO_CT_TEXT;
        bt_buf_add(resp->body, b->buf, b->len);
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
    (void)self;
    return false;
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

static int start_app(struct serve *s, struct app *a)
{
    char path[1100];
    int64_t start;
    s->o->api_cost = &s->cost;
    int rc = app_init_live(a, s->o, record_path(s, path, sizeof path), &start);
    if (rc)
        return rc;
    a->loop.after_tick = serve_after_tick;
    a->loop.after_tick_arg = a;
    a->loop.view = &s->view;
    if (a->rec)
        fprintf(stderr, "bedtop: serve: recording to %s\n", bt_recorder_path(a->rec));
    return 0;
}

int cmd_serve(struct opts *o)
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
    static struct serve s;
    memset(&s, 0, sizeof s);
    s.o = o;
    s.started = (int64_t)time(NULL);
    s.view = (struct bt_loop_view){.self = &s, .on_input = view_input, .on_update = view_update,
                                   .done = view_done, .next_wakeup_ms = view_next_ms};
    s.a = &s.apps[0];
    bt_loop_signals(); /* before anything can take time: a SIGHUP then is a reload, not death */
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
    serve_eval(&s, (int64_t)time(NULL));
    fprintf(stderr, "bedtop: serve: listening on http://%s/metrics (%d route%s)%s\n",
            bt_httpd_address(s.httpd), s.a->cfg.nroutes, s.a->cfg.nroutes == 1 ? "" : "s",
            bt_httpd_loopback(s.httpd) ? ""
                                       : "; reachable from other hosts, without authentication");
    for (;;) {
        int sig = bt_loop_run(&s.a->loop);
        if (sig != SIGHUP)
            break;
        bt_loop_quit_signal = 0;
        /* reload: build the new app beside the running one; keep serving the old
         * config when the new one does not load */
        struct app *next = s.a == &s.apps[0] ? &s.apps[1] : &s.apps[0];
        s.reloads++;
        if (start_app(&s, next) != 0) {
            bt_err("serve: config reload failed (above); still serving the previous config");
            continue;
        }
        app_free(s.a);
        s.a = next;
        serve_eval(&s, (int64_t)time(NULL));
        fprintf(stderr, "bedtop: serve: config reloaded (%d route%s)\n", s.a->cfg.nroutes,
                s.a->cfg.nroutes == 1 ? "" : "s");
    }
    const char *rerr = s.a->rec ? bt_recorder_error(s.a->rec) : NULL;
    if (rerr)
        bt_err("%s", rerr);
    bt_httpd_free(s.httpd);
    bt_buf_free(&s.text);
    bt_buf_free(&s.om);
    app_free(s.a);
    return 0;
}
