/* bedtop plan ROUTE: what a change would do, the limits to set, the forecast, the
 * observed ceiling and the speed (core/plan.h), read the way check reads (config and
 * AWS, --demo, --source) or from a recording (--replay FILE --at TIME). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "app/app.h"
#include "collectors/demo.h"
#include "core/dataminute.h"
#include "core/plan.h"
#include "core/recording.h"
#include "core/util.h"
#include "net/loop.h"
#include "render/plan.h"
#include "render/shares.h"
#include "render/report.h"
#include "io/file.h"
#include "io/recfile.h"

/* plan's options: the change asked (core/plan.h), --limits, --replay FILE --at TIME; the
 * route is the operand (o->file), --region the Region to move to */
#define PLAN_OPTIONS(X, T)                                                                   \
    X(T, STR, format, "format")                                                              \
    X(T, STR, at, "at")                   /* --replay: the recording's time */               \
    X(T, STR, by, "by")                   /* --limits: budgets per holder */                 \
    X(T, STR, max_tokens, "max-tokens")                                                      \
    X(T, STR, concurrency, "concurrency")                                                    \
    X(T, STR, traffic, "traffic")                                                            \
    X(T, FLAG, retries_off, "retries-off")                                                   \
    X(T, STR, tier, "tier")                                                                  \
    X(T, FLAG, limits, "limits")                                                             \
    X(T, STR, replay, "replay")           /* FILE: a recording, not a poll */
struct plan_opts {
    APP_OPTS_COMMON;
    PLAN_OPTIONS(APP_OPT_FIELD, struct plan_opts)
};

APP_CMD_EXEC(cmd_plan, struct plan_opts)
static const struct bt_cmd_opt plan_options[] = {
    BT_OPT_STR("config", struct plan_opts, config),
    APP_OPTS_AWS(struct plan_opts),
    BT_OPT_STR("admission", struct plan_opts, admission),
    APP_OPTS_SOURCE(struct plan_opts),
    APP_OPTS_DEMO(struct plan_opts),
    BT_OPT_FLAG("no-color", struct plan_opts, no_color),
    PLAN_OPTIONS(APP_OPT_ROW, struct plan_opts)
};
const struct bt_cmd_entry bt_cmd_plan_entry = {
    .name = "plan",
    .usage = "plan ROUTE [--max-tokens N] [--concurrency N] [--traffic xF]\n"
             "              [--retries-off] [--tier flex|priority] [--region R] [--limits]\n"
             "              [-f text|json] [--demo-at M | --replay FILE --at TIME]",
    .summary = "what should change for ROUTE, and would it be enough: the what-ifs of\n"
               "--max-tokens, --concurrency, --traffic, --retries-off, --tier, --region;\n"
               "--limits: the limits to set at the admission boundary",
    .opts = plan_options, .nopts = BT_ARRAY_LEN(plan_options),
    .size = sizeof(struct plan_opts), .exec = cmd_plan_exec,
    .aws = "unless --demo, --source or --replay",
};

static bool number(const char *opt, const char *s, double lo, double hi, double *out)
{
    if (!s)
        return true;
    if (*s == 'x' || *s == 'X')
        s++; /* --traffic x2 */
    if (!bt_parse_double(s, out) || *out < lo || *out > hi) {
        bt_err("plan %s: '%s' is out of range; use a number from %g to %g", opt, s, lo, hi);
        return false;
    }
    return true;
}

/* The change asked on the command line; o->region is the Region to move to. */
static bool read_change(const struct plan_opts *o, struct bt_plan_change *c)
{
    bt_plan_change_none(c);
    if (!number("--max-tokens", o->max_tokens, 1, 1e7, &c->max_tokens) ||
        !number("--concurrency", o->concurrency, 1, 1e7, &c->concurrency) ||
        !number("--traffic", o->traffic, 0, 1000, &c->traffic))
        return false;
    c->retries_off = o->retries_off;
    if (o->tier) {
        if (!strcmp(o->tier, "flex")) {
            c->tier = BT_TIER_FLEX;
        } else if (!strcmp(o->tier, "priority")) {
            c->tier = BT_TIER_PRIORITY;
        } else {
            bt_err("plan --tier: '%s' is not a service tier to move to; use flex or priority", o->tier);
            return false;
        }
    }
    if (o->region)
        bt_strlcpy(c->region, o->region, sizeof c->region);
    return true;
}

static int route_of(const struct bt_config *cfg, const char *name)
{
    int r = name ? bt_config_find_route(cfg, name) : -1;
    if (r >= 0)
        return r;
    struct bt_buf names = {0};
    for (int i = 0; i < cfg->nroutes && i < 40; i++)
        bt_buf_printf(&names, "%s%s", i ? ", " : "", cfg->routes[i].name);
    if (name)
        bt_err("plan: '%s' is not a route; routes are %s", name, bt_buf_str(&names));
    else
        bt_err("plan: which route?; use bedtop plan ROUTE (routes are %s)", bt_buf_str(&names));
    bt_buf_free(&names);
    return -1;
}

/* plan ROUTE --limits --by KEY: per-holder budgets as admission policy JSON. */
static int plan_by(const struct plan_opts *o, const struct bt_config *cfg, const struct bt_store *st,
                   int64_t now)
{
    enum bt_share_by by;
    char why[224];
    if (!o->limits) {
        bt_err("plan --by: the budgets per holder are limits; add --limits");
        return 3;
    }
    if (!bt_shares_parse_by(cfg, o->by, &by, why, sizeof why)) {
        bt_err("plan --by: %s", why);
        return 3;
    }
    int r = route_of(cfg, o->file);
    if (r < 0)
        return 3;
    struct bt_share_budgets b;
    if (!bt_shares_budgets(cfg, st, now, r, by, BT_LIMITS_RESERVE, &b, why, sizeof why)) {
        bt_err("plan: %s", why);
        bt_shares_budgets_free(&b);
        return 3;
    }
    struct bt_buf out = {0};
    bt_shares_budgets_json(cfg, r, now, &b, &out);
    struct app_output so;
    app_output_open(&so, NULL);
    fwrite(out.buf, 1, out.len, so.f);
    bool written = app_output_close(&so);
    bt_buf_free(&out);
    bt_shares_budgets_free(&b);
    return written ? 0 : 3;
}

/* Everything for one route at now, printed. */
static int plan_print(const struct plan_opts *o, const struct bt_config *cfg, const struct bt_store *st,
                      int64_t now, const char *mode, bool json)
{
    if (o->by)
        return plan_by(o, cfg, st, now);
    struct bt_plan_change c;
    if (!read_change(o, &c))
        return 3;
    int r = route_of(cfg, o->file);
    if (r < 0)
        return 3;
    struct bt_whatif *w = bt_xcalloc(1, sizeof *w);
    char why[640];
    if (!bt_plan_whatif(cfg, st, r, now, &c, w, why, sizeof why)) {
        bt_err("plan: %s", why);
        free(w);
        return 3;
    }
    struct bt_forecast f;
    struct bt_ceiling ce;
    struct bt_limits *lim = NULL;
    bt_plan_forecast(cfg, st, r, now, &f);
    bt_ceiling_of(cfg, st, &w->before, &ce);
    if (o->limits) {
        lim = bt_xcalloc(1, sizeof *lim);
        bt_plan_limits(cfg, st, r, now, lim);
    }
    struct bt_plan_view v = {.cfg = cfg, .mode = mode, .now = now, .change = &c, .w = w,
                             .forecast = &f, .ceiling = &ce, .limits = lim};
    struct bt_buf out = {0};
    if (json)
        bt_plan_render_json(&v, &out);
    else
        bt_plan_render_text(&v, &out);
    /* a write error (a full disk, a closed pipe: >/dev/full) is an error, as coreutils say */
    struct app_output so;
    app_output_open(&so, NULL);
    fwrite(out.buf, 1, out.len, so.f);
    bool written = app_output_close(&so);
    bt_buf_free(&out);
    /* limits from the gauges alone */
    bool read = bt_eval_cw_minute(&w->before) || (lim && lim->window_to);
    free(lim);
    int rc = read && written ? 0 : 3;
    if (!read)
        bt_err("plan: no evaluated minute for %s: CloudWatch has not answered (see the errors above)",
               cfg->routes[r].name);
    free(w);
    return rc;
}

static int plan_replay(struct plan_opts *o, bool json)
{
    struct bt_replay rp;
    char err[4608];
    if (!o->at) {
        bt_err("plan --replay: at which time?; add --at TIME (14:32, +5m, -30m, ISO 8601)");
        return 3;
    }
    if (!bt_replay_open(&rp, o->replay, NULL, NULL, err, sizeof err)) {
        bt_err("%s", err);
        return 3;
    }
    /* --at names a data minute, as replay --at and export's rows do: the plan is for
     * that minute, evaluated the last second it was the newest (core/dataminute.h) */
    int64_t m, first, last;
    int rc = 3;
    bt_replay_minutes(&rp, &first, &last);
    if (!rp.npolls) {
        bt_err("%s: no polls recorded; record for at least one poll interval", o->replay);
    } else if (!bt_replay_when_minute(&rp, o->at, &m)) {
        bt_err("--at: '%s' is not a time; use 14:32, +5m (after the first data minute), -30m "
               "(before the last) or 2026-11-29T14:32:00Z", o->at);
    } else if (m < first || m > last) {
        char a[32], b[32];
        bt_fmt_iso(first, a, sizeof a);
        bt_fmt_iso(last, b, sizeof b);
        bt_err("--at %s is outside the recording (data minutes %s to %s); pick a minute inside it",
               o->at, a, b);
    } else {
        int64_t t = bt_replay_minute_instant(&rp, m);
        bt_replay_seek(&rp, t);
        rc = plan_print(o, &rp.cfg, &rp.store, t, "replay", json);
    }
    bt_replay_free(&rp);
    return rc;
}

static int cmd_plan(struct plan_opts *o)
{
    enum bt_format fmt = BT_FMT_TEXT;
    if (o->format && (!bt_format_parse(o->format, &fmt) || fmt == BT_FMT_PROMETHEUS)) {
        bt_err("plan --format: '%s' is not a format; use text or json", o->format);
        return 3;
    }
    bool json = fmt == BT_FMT_JSON;
    if (o->at && !o->replay) {
        bt_err("plan --at: applies with --replay FILE (a recording's time)");
        return 3;
    }
    struct bt_plan_change c;
    if (!read_change(o, &c))
        return 3;
    if (o->replay) {
        if (o->demo || o->source) {
            bt_err("plan --replay: reads the recording only; drop --demo/--source");
            return 3;
        }
        return plan_replay(o, json);
    }
    /* plan's --region is the Region to move to, not the one to poll */
    const char *move = o->region;
    o->region = NULL;
    struct app a;
    int64_t start = o->demo ? app_demo_now(&o->common, 16) : (int64_t)time(NULL);
    int rc = app_init(&a, &o->common, BT_MODE_ONCE, (double)start);
    o->region = move;
    if (rc) {
        app_free(&a);
        return rc;
    }
    int sig;
    int64_t now = app_poll_once(&a, start, &sig);
    if (sig > 0) {
        bt_err("plan: stopped by signal %d before its data was in; no answer", sig);
        app_free(&a);
        return 128 + sig;
    }
    rc = plan_print(o, &a.cfg, &a.store, now, o->demo ? "demo" : o->source ? "source" : "live", json);
    app_free(&a);
    return rc;
}
