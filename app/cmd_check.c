/* bedtop check: one poll, print, exit 0/1/2/3. */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "app/app.h"
#include "app/check_state.h"
#include "collectors/admission.h"
#include "collectors/cloudwatch.h"
#include "collectors/demo.h"
#include "net/http.h"
#include "net/loop.h"
#include "collectors/quotas.h"
#include "core/recording.h"
#include "render/report.h"
#include "render/shares.h"
#include "core/util.h"
#include "io/file.h"

/* check's own options (app/app.h APP_OPT_FIELD, APP_OPT_ROW) */
#define CHECK_OPTIONS(X, T)                                                                  \
    X(T, STR, format, "format")                                                              \
    X(T, STR, output, "output")         /* write here (0600) instead of stdout */            \
    X(T, STR, by, "by")                 /* team|project|route|tag:KEY: the shares table */   \
    X(T, STR, state, "state")           /* FILE ("default": XDG_STATE_HOME); NULL: the      \
                                         * cache's file for the config and account */       \
    X(T, FLAG, no_state, "no-state")    /* no state file read or written */                  \
    X(T, STR, unknown_as, "unknown-as") /* how an unknown route counts (NULL: warn) */       \
    X(T, LIST, routes, "route")         /* routes[], nroutes; none: every route */           \
    X(T, FLAG, wide, "wide")
struct check_opts {
    APP_OPTS_COMMON;
    CHECK_OPTIONS(APP_OPT_FIELD, struct check_opts)
};

APP_CMD_EXEC(cmd_check, struct check_opts)
static const struct bt_cmd_opt check_options[] = {
    BT_OPT_STR("config", struct check_opts, config),
    APP_OPTS_AWS(struct check_opts),
    BT_OPT_STR("admission", struct check_opts, admission),
    APP_OPTS_SOURCE(struct check_opts),
    APP_OPTS_DEMO(struct check_opts),
    BT_OPT_FLAG("no-color", struct check_opts, no_color),
    CHECK_OPTIONS(APP_OPT_ROW, struct check_opts)
};
const struct bt_cmd_entry bt_cmd_check_entry = {
    .name = "check",
    .usage = "check [-f text|json|prometheus] [--route R]... [--wide] [-o FILE]",
    .summary = "polls once, prints every route and warning (text, JSON or Prometheus text)\n"
               "and exits as a monitoring plugin does: 0 ok, 1 warn, 2 crit (the worst\n"
               "route; an unknown route counts as --unknown-as), 3 bedtop could not run",
    .opts = check_options, .nopts = BT_ARRAY_LEN(check_options),
    .size = sizeof(struct check_opts), .exec = cmd_check_exec,
    .aws = "unless --demo or --source", .aws_once = true,
};

/* True when no usage source (CloudWatch, admission counters) answered for any
 * route shown: nothing says how much is used, so the report says nothing about
 * capacity (exit 3, as when bedtop cannot run). Quotas alone do not count. */
static bool no_usage_read(const struct bt_report *r)
{
    static const enum bt_source usage[] = {BT_SRC_CLOUDWATCH, BT_SRC_ADMISSION};
    for (int i = 0; i < r->n; i++) {
        if (!bt_report_shows(r, i))
            continue;
        for (size_t s = 0; s < BT_ARRAY_LEN(usage); s++)
            if (bt_store_status_c(r->store, i, usage[s])->last_ok)
                return false;
    }
    return true;
}

/* The report's sink: each piece written as it is made (render/report.h) */
static void to_file(void *ctx, struct bt_buf *b)
{
    fwrite(b->buf, 1, b->len, (FILE *)ctx);
    bt_buf_reset(b);
}

/* Once the poll is in, its state saved and its cost read, nothing reads the
 * collectors or the HTTP client again: what they hold (query sets, per-route
 * state, connections: ~5 kB a route) goes before the evaluation needs the room. */
static void drop_collectors(struct app *a)
{
    for (int i = 0; i < a->loop.n; i++)
        if (a->inst[i]) {
            a->ops[i]->destroy(a->inst[i]);
            a->inst[i] = NULL;
        }
    bt_http_free(a->ctx.http);
    a->ctx.http = NULL;
    a->loop.http = NULL;
    /* what was freed lies among what stays (the store grew as the pages came): its
     * pages go back to the system rather than count in the peak */
    malloc_trim(0);
}

static int cmd_check(struct check_opts *o)
{
    enum bt_format fmt = BT_FMT_TEXT;
    if (o->format && !bt_format_parse(o->format, &fmt)) {
        bt_err("check --format: '%s' is not a format; use text, json or prometheus", o->format);
        return 3;
    }
    if (o->wide && fmt != BT_FMT_TEXT) {
        bt_err("--wide: applies to --format text only (%s has every field already)", o->format);
        return 3;
    }
    if (o->state && o->no_state) {
        bt_err("check: --state %s and --no-state: give one (the state file is on by default)",
               o->state);
        return 3;
    }
    if (o->by && fmt != BT_FMT_TEXT) {
        bt_err("--by: applies to --format text only (the JSON has every share in \"shares\")");
        return 3;
    }
    struct app a;
    int64_t start = o->demo ? app_demo_now(&o->common, 16) : (int64_t)time(NULL);
    int rc = app_init(&a, &o->common, BT_MODE_ONCE, (double)start);
    if (rc) {
        app_free(&a);
        return rc;
    }
    enum bt_share_by by = BT_SHARE_TEAM;
    char why[224];
    if (o->by && !bt_shares_parse_by(&a.cfg, o->by, &by, why, sizeof why)) {
        bt_err("check --by: %s", why);
        app_free(&a);
        return 3;
    }
    bool *keep;
    if (!app_select_routes(o->routes, o->nroutes, &a.cfg, &keep)) {
        app_free(&a);
        return 3;
    }
    /* from the moment a temp file exists, a signal is the loop's to act on (it then
     * discards the file) rather than death leaving the file behind */
    if (!o->demo)
        bt_loop_signals();
    struct app_output out;
    if (!app_output_open(&out, o->output)) {
        free(keep);
        app_free(&a);
        return 3;
    }
    /* --state (by default the cache's file): the minutes an earlier run fetched are
     * not asked again */
    char state[1024] = "";
    if (!o->state && !o->demo && !o->no_state && !check_state_default_path(&a, state, sizeof state))
        state[0] = '\0';
    if (o->state && !o->demo && !check_state_path(o->state, state, sizeof state)) {
        app_output_discard(&out);
        free(keep);
        app_free(&a);
        return 3;
    }
    if (state[0])
        check_state_load(&a, state, start);
    int sig;
    int64_t now = app_poll_once(&a, start, &sig);
    if (sig > 0) {
        /* stopped before its data was in: no report (a partial one renamed into
         * place would read as a real one), and the exit status says so */
        bt_err("check: stopped by signal %d before the report was complete; %s", sig,
               o->output ? "no report written" : "no report");
        app_output_discard(&out);
        free(keep);
        app_free(&a);
        return 128 + sig;
    }
    if (state[0])
        check_state_save(&a, state, now); /* a failure is said; the report still stands */
    double per_poll, per_day;
    app_cost(&a, &per_poll, &per_day);
    drop_collectors(&a);
    struct bt_report rep;
    bt_report_build(&rep, &a.cfg, &a.store, now);
    bt_report_select(&rep, keep, app_unknown_as(o->unknown_as));
    bt_report_decide(&rep);
    rep.mode = o->demo ? "demo" : "live";
    rep.wide = o->wide;
    rep.metrics_per_poll = per_poll;
    rep.metrics_per_day = per_day;
    rep.api = a.ctx.api_cost;
    bool color = fmt == BT_FMT_TEXT && !o->no_color && out.f == stdout &&
                 isatty(STDOUT_FILENO) && !getenv("NO_COLOR");
    bool blind = !o->demo && no_usage_read(&rep);
    if (blind)
        rep.status = BT_ST_UNKNOWN; /* the JSON status says what the exit code says */
    struct bt_buf buf = {0};
    if (o->by)
        bt_shares_render_table(&rep, by, NULL, &buf);
    else
        bt_report_write(&rep, fmt, color, &buf, &(struct bt_report_sink){to_file, out.f});
    fwrite(buf.buf, 1, buf.len, out.f); /* --by's table (the sink took the rest) */
    rc = bt_status_exit(rep.status);
    if (blind)
        bt_err("check: no usage data: neither CloudWatch nor the admission counters answered "
               "for any route; see the errors above (or bedtop check --demo)");
    bt_buf_free(&buf);
    bt_report_free(&rep);
    free(keep);
    app_free(&a);
    if (!app_output_close(&out))
        rc = 3;
    return rc;
}
