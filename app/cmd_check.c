/* bedtop check: one poll, print, exit 0/1/2/3. */
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
#include "collectors/http.h"
#include "collectors/loop.h"
#include "collectors/quotas.h"
#include "core/recording.h"
#include "core/report.h"
#include "core/util.h"

int cmd_check(struct opts *o)
{
    enum bt_format fmt = BT_FMT_TEXT;
    if (o->format && !bt_format_parse(o->format, &fmt)) {
        bt_err("--format: '%s' is not text, json or prometheus", o->format);
        return 3;
    }
    struct app a;
    int64_t start = o->demo ? app_demo_now(o, 16) : (int64_t)time(NULL);
    int rc = app_init(&a, o, BT_MODE_ONCE, (double)start);
    if (rc) {
        app_free(&a);
        return rc;
    }
    int64_t now;
    if (o->demo) {
        now = start;
        bt_demo_collector.tick(a.inst[0], now);
    } else {
        /* One evaluation's worth of data: every collector once (admission twice, a
         * gap apart, for rates); give up after a bound and report what is stale. */
        a.loop.deadline = bt_wall_now() + 30 + 2 * a.cfg.admission_gap;
        bt_loop_signals();
        bt_loop_run(&a.loop);
        now = (int64_t)time(NULL);
        app_print_new_errors(&a);
    }
    struct bt_report rep;
    bt_report_build(&rep, &a.cfg, &a.store, now);
    rep.mode = o->demo ? "demo" : "live";
    app_cost(&a, &rep.metrics_per_poll, &rep.metrics_per_day);
    rep.api = a.ctx.api_cost;
    bool color = fmt == BT_FMT_TEXT && !o->no_color && isatty(STDOUT_FILENO) &&
                 !getenv("NO_COLOR");
    struct bt_buf out = {0};
    bt_report_render(&rep, fmt, color, &out);
    fwrite(out.buf, 1, out.len, stdout);
    rc = bt_status_exit(rep.status);
    bt_buf_free(&out);
    bt_report_free(&rep);
    app_free(&a);
    if (fflush(stdout) != 0) {
        bt_err("stdout: %s", strerror(errno));
        return 3;
    }
    return rc;
}
