/* The live dashboard: the TUI on the single loop. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "app/app.h"
#include "app/view.h"
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

/* the dashboard's own options (app/app.h APP_OPT_FIELD, APP_OPT_ROW) */
#define DASH_OPTIONS(X, T)                                                                   \
    X(T, STR, record, "record") /* FILE: record what is watched */                           \
    X(T, FLAG, bell, "bell")    /* the terminal bell when a route turns crit */
struct dash_opts {
    APP_OPTS_COMMON;
    DASH_OPTIONS(APP_OPT_FIELD, struct dash_opts)
};

APP_CMD_EXEC(cmd_dashboard, struct dash_opts)
static const struct bt_cmd_opt dash_options[] = {
    BT_OPT_STR("config", struct dash_opts, config),
    APP_OPTS_AWS(struct dash_opts),
    BT_OPT_NUM("interval", struct dash_opts, interval),
    BT_OPT_STR("admission", struct dash_opts, admission),
    APP_OPTS_SOURCE(struct dash_opts),
    APP_OPTS_DEMO(struct dash_opts),
    BT_OPT_NUM("demo-speed", struct dash_opts, demo_speed),
    BT_OPT_STR("theme", struct dash_opts, theme),
    BT_OPT_FLAG("no-color", struct dash_opts, no_color),
    BT_OPT_FLAG("ascii", struct dash_opts, ascii),
    DASH_OPTIONS(APP_OPT_ROW, struct dash_opts)
};
/* `bedtop` with no command: it has no synopsis line of its own (bedtop --help's first two) */
const struct bt_cmd_entry bt_cmd_dashboard_entry = {
    .name = "the dashboard",
    .opts = dash_options, .nopts = BT_ARRAY_LEN(dash_options),
    .size = sizeof(struct dash_opts), .exec = cmd_dashboard_exec,
    .aws = "unless --demo or --source",
};

struct dash {
    struct app *a;
    struct bt_tui_host host;
};

static void dash_refresh(void *arg)
{
    struct dash *d = arg;
    d->a->loop.refresh = true;
}

static void dash_pause(void *arg, bool paused)
{
    struct dash *d = arg;
    d->a->loop.paused = paused;
    d->host.paused = paused;
    bt_clock_freeze(&d->a->loop.clock, paused);
}

static void dash_interval(void *arg, double s)
{
    struct dash *d = arg;
    d->host.interval = s;
    d->a->cfg.interval = s;
}

static int64_t dash_marker(void *arg, const char *note)
{
    struct dash *d = arg;
    if (!d->a->rec)
        return 0;
    int64_t t = bt_clock_now(&d->a->loop.clock);
    bt_recorder_marker(d->a->rec, &d->a->store, t, note);
    return t;
}

static void dash_before_update(void *arg, int64_t now)
{
    struct dash *d = arg;
    d->host.now = now;
    int64_t due = bt_loop_next_due(&d->a->loop);
    d->host.next_poll = due == INT64_MAX ? 0 : due;
    app_cost(d->a, &d->host.metrics_per_poll, &d->host.metrics_per_day);
    /* measured where requests are sent, once any was: what watching really costs */
    double per_day;
    bt_api_cost_rates(d->a->ctx.api_cost, (int64_t)time(NULL), &d->host.metrics_per_min, &per_day,
                      &d->host.usd_per_day);
    if (!isnan(per_day))
        d->host.metrics_per_day = per_day;
    d->host.recording_failed = d->a->rec && bt_recorder_error(d->a->rec) != NULL;
}

static void dash_after_tick(void *arg, int64_t now)
{
    struct app *a = arg;
    if (a->rec)
        bt_recorder_flush(a->rec, now);
}

static int cmd_dashboard(struct dash_opts *o)
{
    if (isinf(o->demo_speed)) {
        bt_err("--demo-speed max does not apply to the dashboard; it is for record (a screen needs "
               "a pace: use a number up to 100,000)");
        return 3;
    }
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
        bt_err("the dashboard needs a terminal; for plain output use: bedtop check%s",
               o->demo ? " --demo" : "");
        return 3;
    }
    struct app a;
    bool frozen = o->demo && !isnan(o->demo_at);
    int64_t start;
    int rc = app_init_live(&a, &o->common, o->record, &start);
    if (rc)
        return rc;
    /* --demo-at M: the dashboard opens at minute M and stays paused there */
    if (frozen) {
        a.loop.paused = true;
        bt_clock_freeze(&a.loop.clock, true);
    }
    static struct dash d;
    d.a = &a;
    d.host = (struct bt_tui_host){.cfg = &a.cfg, .store = &a.store,
                                  .mode = o->demo ? "demo" : "live", .interval = a.cfg.interval,
                                  .paused = frozen, .metrics_per_poll = NAN,
                                  .metrics_per_day = NAN, .metrics_per_min = NAN,
                                  .usd_per_day = NAN,
                                  .recording = a.rec ? bt_recorder_path(a.rec) : NULL, .arg = &d,
                                  .refresh_now = dash_refresh, .set_paused = dash_pause,
                                  .set_interval = dash_interval,
                                  .add_marker = a.rec ? dash_marker : NULL};
    a.loop.after_tick = dash_after_tick;
    a.loop.after_tick_arg = &a;
    struct app_view v = {.host = &d.host, .loop = &a.loop, .before_update = dash_before_update,
                         .arg = &d, .bell = o->bell};
    rc = app_view_run(&v, &o->common);
    const char *rerr = a.rec ? bt_recorder_error(a.rec) : NULL;
    if (rerr)
        bt_err("%s", rerr);
    if (a.rec) /* where it went, once the screen is back: REC said so all along */
        fprintf(stderr, "bedtop: recorded %lu line%s to %s%s (bedtop replay %s)\n",
                bt_recorder_lines(a.rec), bt_recorder_lines(a.rec) == 1 ? "" : "s",
                bt_recorder_path(a.rec),
                bt_recorder_dropped(a.rec) ? ", some lines dropped" : "", bt_recorder_path(a.rec));
    app_free(&a);
    return rc;
}
