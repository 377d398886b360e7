/* bedtop record: headless recording, and backfill from CloudWatch history. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "app/app.h"
#include "collectors/admission.h"
#include "collectors/cloudwatch.h"
#include "collectors/demo.h"
#include "net/http.h"
#include "net/loop.h"
#include "collectors/quotas.h"
#include "core/recording.h"
#include "render/report.h"
#include "core/util.h"
#include "io/file.h"
#include "io/recfile.h"

APP_CMD_EXEC(cmd_record, struct record_opts)
static void record_init(void *opts)
{
    ((struct record_opts *)opts)->duration = NAN;
}
static const struct bt_cmd_opt record_options[] = {
    BT_OPT_STR("config", struct record_opts, config),
    APP_OPTS_AWS(struct record_opts),
    BT_OPT_NUM("interval", struct record_opts, interval),
    BT_OPT_STR("admission", struct record_opts, admission),
    APP_OPTS_SOURCE(struct record_opts),
    APP_OPTS_DEMO(struct record_opts),
    BT_OPT_NUM("demo-speed", struct record_opts, demo_speed),
    RECORD_OPTIONS(APP_OPT_ROW, struct record_opts)
};
const struct bt_cmd_entry bt_cmd_record_entry = {
    .name = "record",
    .usage = "record FILE [--demo] [--duration D] [--since D | --from T --to T]",
    .summary = "polls headless, as the dashboard would, and appends every sample and event\n"
               "to FILE (--since D: backfills the last D from CloudWatch)",
    .opts = record_options, .nopts = BT_ARRAY_LEN(record_options),
    .size = sizeof(struct record_opts), .init = record_init, .exec = cmd_record_exec,
    .aws = "unless --demo or --source",
};

static void record_after_tick(void *arg, int64_t now)
{
    struct app *a = arg;
    bool had = bt_recorder_error(a->rec) != NULL;
    bt_recorder_flush(a->rec, now);
    const char *e = bt_recorder_error(a->rec);
    if (e && !had)
        bt_err("%s", e);
    else if (!e && had)
        bt_err("recording %s: writing again", bt_recorder_path(a->rec));
    app_print_new_errors(a);
}

/* Backfill: a recording built from CloudWatch history, one line per minute as
 * bedtop would have seen it (the minute plus the publishing lag). */
int cmd_record_backfill(struct record_opts *o)
{
    if (o->demo) {
        bt_err("record: --since/--from/--to read CloudWatch (or --source Prometheus) history; the demo has none");
        return 3;
    }
    int64_t now = (int64_t)time(NULL);
    int64_t from, to = bt_minute_floor(now);
    double d;
    if (o->since && (o->from || o->to)) {
        bt_err("record: use --since, or --from/--to, not both");
        return 3;
    }
    if (o->since) {
        if (!bt_parse_duration(o->since, &d) || d < 60) {
            bt_err("--since: '%s' is not a duration of at least 1m (e.g. 3h)", o->since);
            return 3;
        }
        from = now - (int64_t)d;
    } else {
        if (!o->from || !bt_parse_when(o->from, 0, 0, now, &from)) {
            bt_err("--from: '%s' is not a time (ISO 8601, or -3h)", o->from ? o->from : "");
            return 3;
        }
        if (o->to && !bt_parse_when(o->to, 0, 0, now, &to)) {
            bt_err("--to: '%s' is not a time", o->to);
            return 3;
        }
    }
    from = bt_minute_floor(from);
    to = bt_minute_floor(to);
    if (to > bt_minute_floor(now))
        to = bt_minute_floor(now);
    if (from >= to || now - from > 15 * 86400) {
        bt_err("record: the window must be non-empty and within the last 15 days "
               "(CloudWatch keeps 1-minute data that long)");
        return 3;
    }
    struct app a;
    int rc = app_init(&a, &o->common, BT_MODE_ONCE, (double)now);
    if (rc) {
        app_free(&a);
        return rc;
    }
    /* the store must hold the whole window */
    bt_store_free(&a.store);
    a.cfg.history_minutes = (int)((to - from) / 60) + 2;
    bt_store_init(&a.store, a.cfg.nroutes, a.cfg.history_minutes);
    bt_store_bind_routes(&a.store, a.cfg.routes);
    a.ctx.window_from = from;
    a.ctx.window_to = to;
    /* admission counters have no history: only CloudWatch and Service Quotas */
    for (int i = 0; i < a.loop.n; i++) {
        if (a.ops[i] == &bt_admission_collector && a.inst[i]) {
            a.ops[i]->destroy(a.inst[i]);
            a.inst[i] = NULL;
        }
    }
    a.loop.deadline = bt_wall_now() + 300;
    bt_loop_signals();
    bt_loop_run(&a.loop);
    app_print_new_errors(&a);
    char err[600];
    /* the recording starts when its first minute would have been on screen */
    int64_t lag = (int64_t)a.cfg.cw_lag;
    struct bt_recorder *rec = bt_recorder_open(o->file, &a.cfg, "backfill", from + 60 + lag, err,
                                               sizeof err);
    if (!rec) {
        app_file_error(err, o->file, "recording", true);
        app_free(&a);
        return 3;
    }
    unsigned long minutes = 0, samples = 0;
    for (int64_t m = from; m < to; m += 60) {
        int64_t seen = m + 60 + lag;
        struct bt_event ok = {.t = seen, .type = BT_EV_OK, .route = -1, .source = BT_SRC_CLOUDWATCH};
        if (m == from)
            bt_strlcpy(ok.text, o->source ? "backfilled from bedtop's series in Prometheus"
                                          : "backfilled from CloudWatch history (no admission counters)",
                       sizeof ok.text);
        bt_recorder_add_event(rec, &ok);
        for (int r = 0; r < a.cfg.nroutes; r++) {
            /* the minute's coverage: what the backfill's request asked for (2.1), as a
             * poll at `seen`, when the minute had settled (the request's last two
             * minutes were asked a little early: as before, they count as settled) */
            struct bt_coverage cov = {.route = r, .from = m, .to = m + 60, .settled_to = m + 60,
                                      .asked = seen};
            for (int k = 0; k < BT_SIG_COUNT; k++)
                if (bt_store_covered(&a.store, r, (enum bt_signal)k, m) != BT_COV_NONE)
                    cov.signals |= BT_SIG_BIT(k);
            if (cov.signals)
                bt_recorder_add_coverage(rec, &cov, seen);
            for (int k = 0; k < BT_SIG_COUNT; k++) {
                if (bt_signal_info[k].source != BT_SRC_CLOUDWATCH)
                    continue;
                double v = bt_store_at(&a.store, r, (enum bt_signal)k, m);
                if (isnan(v))
                    continue;
                struct bt_sample smp = {.t = m, .route = r, .signal = (enum bt_signal)k, .value = v};
                bt_recorder_add_sample(rec, &smp, seen);
                samples++;
            }
        }
        bt_recorder_flush(rec, seen);
        minutes++;
    }
    const char *werr = bt_recorder_error(rec);
    if (werr)
        bt_err("%s", werr);
    rc = werr ? 3 : 0;
    bt_recorder_close(rec);
    app_free(&a);
    fprintf(stderr, "bedtop: backfilled %lu minutes (%lu samples) to %s\n", minutes, samples, o->file);
    return rc;
}

static int cmd_record(struct record_opts *o)
{
    if (!o->file) {
        bt_err("record: which file? (bedtop record FILE)");
        return 3;
    }
    if (o->since || o->from || o->to)
        return cmd_record_backfill(o);
    struct app a;
    int64_t start;
    int rc = app_init_live(&a, &o->common, o->file, &start);
    if (rc)
        return rc;
    a.loop.after_tick = record_after_tick;
    a.loop.after_tick_arg = &a;
    a.loop.forever = true;
    if (!isnan(o->duration))
        a.loop.until = start + (int64_t)o->duration;
    bt_loop_signals();
    int sig = bt_loop_run(&a.loop);
    bt_recorder_flush(a.rec, bt_clock_now(&a.loop.clock));
    unsigned long lines = bt_recorder_lines(a.rec), dropped = bt_recorder_dropped(a.rec);
    app_free(&a);
    fprintf(stderr, "bedtop: recorded %lu poll%s to %s%s%s\n", lines, lines == 1 ? "" : "s",
            o->file, dropped ? " (some lines dropped: write errors)" : "",
            sig > 0 ? " (stopped by signal)" : "");
    return dropped ? 1 : 0;
}
