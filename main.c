/* bedtop: argument parsing and subcommand dispatch only. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <fcntl.h>
#include <locale.h>
#include <sys/stat.h>

#include "collectors/admission.h"
#include "collectors/cloudwatch.h"
#include "collectors/collector.h"
#include "collectors/demo.h"
#include "collectors/http.h"
#include "collectors/loop.h"
#include "collectors/quotas.h"
#include "core/config.h"
#include "core/recording.h"
#include "core/report.h"
#include "core/util.h"
#include "tui/tui.h"

struct opts {
    const char *config, *profile, *region, *endpoint_url, *admission, *theme, *record;
    const char *format, *from, *to, *since, *at, *route;
    const char *file;          /* positional FILE of replay/record/export */
    const char *output;        /* export: write here (0600) instead of stdout */
    double duration;           /* record: stop after this much (simulated) time; NAN none */
    double interval;           /* NAN: config */
    double demo_speed;
    double demo_at;            /* simulated minute; NAN: now */
    bool demo, no_color, ascii, verbose;
};

struct command {
    const char *name;
    const char *usage;
    int (*exec)(struct opts *o);
};

static int cmd_dashboard(struct opts *o);
static int cmd_check(struct opts *o);
static int cmd_record(struct opts *o);
static int cmd_replay(struct opts *o);
static int cmd_export(struct opts *o);

static const struct command commands[] = {
    {"check", "check [--format text|json|prometheus]   one poll, print, exit 0/1/2/3", cmd_check},
    {"record", "record FILE [--demo] [--duration D]      headless recording until signalled", cmd_record},
    {"replay", "replay FILE [--at TIME --format text|json]   replay a recording", cmd_replay},
    {"export", "export FILE --format csv|json [--from T] [--to T] [--route R] [-o OUT]", cmd_export},
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: bedtop [options]                 live dashboard\n"
            "       bedtop --demo                    dashboard on the built-in simulated workload\n");
    for (size_t i = 0; i < BT_ARRAY_LEN(commands); i++)
        fprintf(f, "       bedtop %s\n", commands[i].usage);
    fprintf(f,
            "\noptions:\n"
            "  -c, --config FILE        config file (default $XDG_CONFIG_HOME/bedtop/config)\n"
            "      --profile NAME       AWS profile (as the AWS CLI)\n"
            "      --region R           AWS Region\n"
            "      --endpoint-url URL   override the AWS endpoints (testing, VPC endpoints)\n"
            "  -i, --interval S         seconds between polls (default 60)\n"
            "      --admission URL      admission-controller counters (Prometheus text/JSON)\n"
            "  -f, --format F           check output: text, json or prometheus\n"
            "      --demo               built-in simulated workload; no AWS needed\n"
            "      --demo-speed N       simulated time runs N times faster\n"
            "      --demo-at MINUTE     evaluate the demo at this simulated minute (0-29)\n"
            "      --theme NAME         color theme (default, light, high-contrast, monochrome)\n"
            "      --no-color           no colors (also NO_COLOR)\n"
            "      --ascii              ASCII graphs and borders\n"
            "      --record FILE        record what is watched\n"
            "      --duration D         record: stop after D (e.g. 90s, 30m, 2h) of watched time\n"
            "      --since D            record: backfill the last D (e.g. 3h) from CloudWatch history\n"
            "      --at TIME            replay: print the numbers at TIME (14:32, -30m, +5m, ISO)\n"
            "      --from T, --to T     export: time range; --route NAME: one route\n"
            "  -o, --output FILE        export: write FILE (created 0600) instead of stdout\n"
            "  -v, --verbose            print requests sent to stderr (never credentials)\n"
            "  -h, --help               this help\n"
            "  -V, --version            version\n"
            "\nexit codes of check: 0 ok, 1 warning, 2 critical, 3 unknown or error\n");
}

enum { O_PROFILE = 256, O_REGION, O_ENDPOINT, O_ADMISSION, O_DEMO, O_DEMO_SPEED, O_DEMO_AT,
       O_THEME, O_NO_COLOR, O_ASCII, O_RECORD, O_FROM, O_TO, O_SINCE, O_AT, O_ROUTE,
       O_DURATION };

static const struct option long_opts[] = {
    {"config", required_argument, NULL, 'c'},
    {"profile", required_argument, NULL, O_PROFILE},
    {"region", required_argument, NULL, O_REGION},
    {"endpoint-url", required_argument, NULL, O_ENDPOINT},
    {"interval", required_argument, NULL, 'i'},
    {"admission", required_argument, NULL, O_ADMISSION},
    {"format", required_argument, NULL, 'f'},
    {"demo", no_argument, NULL, O_DEMO},
    {"demo-speed", required_argument, NULL, O_DEMO_SPEED},
    {"demo-at", required_argument, NULL, O_DEMO_AT},
    {"theme", required_argument, NULL, O_THEME},
    {"no-color", no_argument, NULL, O_NO_COLOR},
    {"ascii", no_argument, NULL, O_ASCII},
    {"record", required_argument, NULL, O_RECORD},
    {"from", required_argument, NULL, O_FROM},
    {"to", required_argument, NULL, O_TO},
    {"since", required_argument, NULL, O_SINCE},
    {"at", required_argument, NULL, O_AT},
    {"route", required_argument, NULL, O_ROUTE},
    {"duration", required_argument, NULL, O_DURATION},
    {"output", required_argument, NULL, 'o'},
    {"verbose", no_argument, NULL, 'v'},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0},
};

/* Returns 0 to go on, or an exit code + 1. */
static int parse_args(int argc, char **argv, struct opts *o, const struct command **cmd)
{
    *o = (struct opts){.interval = NAN, .demo_speed = 1, .demo_at = NAN, .duration = NAN};
    *cmd = NULL;
    int c;
    while ((c = getopt_long(argc, argv, "c:i:f:o:vhV", long_opts, NULL)) != -1) {
        switch (c) {
        case 'c': o->config = optarg; break;
        case O_PROFILE: o->profile = optarg; break;
        case O_REGION: o->region = optarg; break;
        case O_ENDPOINT: o->endpoint_url = optarg; break;
        case O_ADMISSION: o->admission = optarg; break;
        case 'f': o->format = optarg; break;
        case O_DEMO: o->demo = true; break;
        case O_THEME: o->theme = optarg; break;
        case O_NO_COLOR: o->no_color = true; break;
        case O_ASCII: o->ascii = true; break;
        case O_RECORD: o->record = optarg; break;
        case O_FROM: o->from = optarg; break;
        case O_TO: o->to = optarg; break;
        case O_SINCE: o->since = optarg; break;
        case O_AT: o->at = optarg; break;
        case O_ROUTE: o->route = optarg; break;
        case 'v': o->verbose = true; break;
        case 'o': o->output = optarg; break;
        case O_DURATION:
            if (!bt_parse_duration(optarg, &o->duration) || o->duration <= 0) {
                bt_err("--duration: '%s' is not a duration (e.g. 90s, 30m, 2h)", optarg);
                return 3 + 1;
            }
            break;
        case 'i':
            if (!bt_parse_duration(optarg, &o->interval) || o->interval < 1) {
                bt_err("--interval: '%s' is not a duration of at least 1 s", optarg);
                return 3 + 1;
            }
            break;
        case O_DEMO_SPEED:
            if (!bt_parse_double(optarg, &o->demo_speed) || o->demo_speed < 0.1 ||
                o->demo_speed > 100000) {
                bt_err("--demo-speed: '%s' is not a number from 0.1 to 100000", optarg);
                return 3 + 1;
            }
            break;
        case O_DEMO_AT:
            if (!bt_parse_double(optarg, &o->demo_at) || o->demo_at < -600 || o->demo_at > 100000) {
                bt_err("--demo-at: '%s' is not a simulated minute", optarg);
                return 3 + 1;
            }
            o->demo = true;
            break;
        case 'h': usage(stdout); return 0 + 1;
        case 'V': printf("bedtop %s\n", BEDTOP_VERSION); return 0 + 1;
        default: usage(stderr); return 3 + 1;
        }
    }
    /* GNU getopt moved the operands to the end: [COMMAND] [FILE] */
    for (int i = optind; i < argc; i++) {
        const char *arg = argv[i];
        if (!*cmd && i == optind) {
            for (size_t k = 0; k < BT_ARRAY_LEN(commands); k++)
                if (!strcmp(arg, commands[k].name))
                    *cmd = &commands[k];
            if (*cmd)
                continue;
            bt_err("unknown command '%s' (try --help)", arg);
            return 3 + 1;
        }
        if (o->file || !*cmd) {
            bt_err("unexpected argument '%s' (try --help)", arg);
            return 3 + 1;
        }
        o->file = arg;
    }
    return 0;
}

/* Loads the config (or the demo's), applies command-line overrides. */
static bool setup_config(struct opts *o, struct bt_config *cfg)
{
    char err[512];
    bt_config_defaults(cfg);
    if (o->region)
        bt_strlcpy(cfg->override_region, o->region, sizeof cfg->override_region);
    if (o->profile)
        bt_strlcpy(cfg->override_profile, o->profile, sizeof cfg->override_profile);
    if (o->demo) {
        if (o->config && !bt_config_load(cfg, o->config, err, sizeof err)) {
            bt_err("%s", err);
            bt_config_free(cfg);
            return false;
        }
        bt_config_free(cfg);
        struct bt_config keep = *cfg;
        bt_config_defaults(cfg);
        cfg->warn = keep.warn;
        cfg->crit = keep.crit;
        bt_demo_config(cfg);
    } else if (!bt_config_load(cfg, o->config, err, sizeof err)) {
        bt_err("%s", err);
        bt_config_free(cfg);
        return false;
    }
    if (!isnan(o->interval))
        cfg->interval = o->interval;
    if (o->admission)
        bt_strlcpy(cfg->admission, o->admission, sizeof cfg->admission);
    if (o->theme)
        bt_strlcpy(cfg->theme, o->theme, sizeof cfg->theme);
    return true;
}

static int64_t demo_now(const struct opts *o, double default_minute)
{
    double minute = isnan(o->demo_at) ? default_minute : o->demo_at;
    return BT_DEMO_T0 + (int64_t)llround(minute * 60);
}

/* ---- the running application: config, store, collectors, loop ---- */

static const struct bt_collector_ops *const live_collectors[] = {
    &bt_cloudwatch_collector, &bt_quotas_collector, &bt_admission_collector,
};
static const struct bt_collector_ops *const demo_collectors[] = {&bt_demo_collector};

struct app {
    struct opts *o;
    struct bt_config cfg;
    struct bt_store store;
    struct bt_ctx ctx;
    struct bt_loop loop;
    void *inst[8];
    struct bt_recorder *rec;
    uint64_t errors_seen;      /* events already printed (check, record) */
    char last_error[BT_SRC_COUNT][224]; /* printed once until it changes */
    bool config_ok;
};

static void app_free(struct app *a)
{
    for (int i = 0; i < a->loop.n; i++)
        if (a->inst[i])
            a->loop.ops[i]->destroy(a->inst[i]);
    a->loop.n = 0;
    if (a->rec)
        bt_recorder_close(a->rec);
    a->rec = NULL;
    if (a->ctx.http)
        bt_http_free(a->ctx.http);
    a->ctx.http = NULL;
    bt_store_free(&a->store);
    if (a->config_ok)
        bt_config_free(&a->cfg);
    a->config_ok = false;
}

/* Sets everything up; returns an exit code (3) on failure, 0 on success. */
static int app_init(struct app *a, struct opts *o, enum bt_run_mode mode, double sim_start)
{
    memset(a, 0, sizeof *a);
    a->o = o;
    if (!setup_config(o, &a->cfg))
        return 3;
    a->config_ok = true;
    a->ctx = (struct bt_ctx){.cfg = &a->cfg, .store = &a->store, .mode = mode,
                             .verbose = o->verbose, .profile = o->profile, .region = o->region,
                             .endpoint_url = o->endpoint_url, .admission_url = o->admission};
    if (!o->demo) {
        a->ctx.http = bt_http_new(o->verbose);
        if (!a->ctx.http) {
            bt_err("cannot initialise libcurl");
            return 3;
        }
        if (!a->cfg.nroutes) {
            char err[512];
            int n = bt_cloudwatch_discover(&a->ctx, err, sizeof err);
            if (n < 0) {
                bt_err("route discovery: %s", err);
                return 3;
            }
            if (n == 0) {
                bt_err("no routes configured%s%s and CloudWatch lists no AWS/Bedrock ModelId metrics",
                       a->cfg.path[0] ? " in " : "", a->cfg.path);
                return 3;
            }
            bt_config_finish(&a->cfg);
        }
    }
    bt_store_init(&a->store, a->cfg.nroutes, a->cfg.history_minutes);
    const struct bt_collector_ops *const *ops = o->demo ? demo_collectors : live_collectors;
    int n = o->demo ? (int)BT_ARRAY_LEN(demo_collectors) : (int)BT_ARRAY_LEN(live_collectors);
    a->loop = (struct bt_loop){.ctx = &a->ctx, .ops = ops, .inst = a->inst, .n = n};
    for (int i = 0; i < n; i++)
        a->inst[i] = ops[i]->create(&a->ctx);
    bt_clock_start(&a->loop.clock, sim_start, o->demo ? o->demo_speed : 1);
    return 0;
}

static void *find_inst(struct app *a, const struct bt_collector_ops *ops)
{
    for (int i = 0; i < a->loop.n; i++)
        if (a->loop.ops[i] == ops)
            return a->inst[i];
    return NULL;
}

static void app_cost(struct app *a, double *per_poll, double *per_day)
{
    void *cw = find_inst(a, &bt_cloudwatch_collector);
    *per_poll = *per_day = NAN;
    if (cw)
        bt_cloudwatch_cost(cw, per_poll, per_day);
}

/* Collector errors seen since the last call, once each, on stderr. */
static void print_new_errors(struct app *a)
{
    const struct bt_store *s = &a->store;
    uint64_t from = a->errors_seen;
    if (s->nevents > BT_EVENT_RING && from < s->nevents - BT_EVENT_RING)
        from = s->nevents - BT_EVENT_RING;
    for (uint64_t i = from; i < s->nevents; i++) {
        const struct bt_event *ev = bt_store_event_at(s, i);
        if (!ev || ev->type != BT_EV_ERROR)
            continue;
        bool dup = false;
        for (uint64_t j = from; j < i && !dup; j++) {
            const struct bt_event *p = bt_store_event_at(s, j);
            dup = p && p->type == BT_EV_ERROR && !strcmp(p->text, ev->text);
        }
        if (!dup && strcmp(a->last_error[ev->source], ev->text) != 0) {
            bt_err("%s: %s", bt_source_name(ev->source), ev->text);
            bt_strlcpy(a->last_error[ev->source], ev->text, sizeof a->last_error[0]);
        }
    }
    a->errors_seen = s->nevents;
}

static int cmd_check(struct opts *o)
{
    enum bt_format fmt = BT_FMT_TEXT;
    if (o->format && !bt_format_parse(o->format, &fmt)) {
        bt_err("--format: '%s' is not text, json or prometheus", o->format);
        return 3;
    }
    struct app a;
    int64_t start = o->demo ? demo_now(o, 16) : (int64_t)time(NULL);
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
        print_new_errors(&a);
    }
    struct bt_report rep;
    bt_report_build(&rep, &a.cfg, &a.store, now);
    rep.mode = o->demo ? "demo" : "live";
    app_cost(&a, &rep.metrics_per_poll, &rep.metrics_per_day);
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

/* ---- record ---- */

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
    print_new_errors(a);
}

/* Backfill: a recording built from CloudWatch history, one line per minute as
 * bedtop would have seen it (the minute plus the publishing lag). */
static int record_backfill(struct opts *o)
{
    if (o->demo) {
        bt_err("record: --since/--from/--to read CloudWatch history; the demo has none");
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
    int rc = app_init(&a, o, BT_MODE_ONCE, (double)now);
    if (rc) {
        app_free(&a);
        return rc;
    }
    /* the store must hold the whole window */
    bt_store_free(&a.store);
    a.cfg.history_minutes = (int)((to - from) / 60) + 2;
    bt_store_init(&a.store, a.cfg.nroutes, a.cfg.history_minutes);
    a.ctx.window_from = from;
    a.ctx.window_to = to;
    /* admission counters have no history: only CloudWatch and Service Quotas */
    for (int i = 0; i < a.loop.n; i++) {
        if (a.loop.ops[i] == &bt_admission_collector && a.inst[i]) {
            a.loop.ops[i]->destroy(a.inst[i]);
            a.inst[i] = NULL;
        }
    }
    a.loop.deadline = bt_wall_now() + 300;
    bt_loop_signals();
    bt_loop_run(&a.loop);
    print_new_errors(&a);
    char err[600];
    /* the recording starts when its first minute would have been on screen */
    int64_t lag = (int64_t)a.cfg.cw_lag;
    struct bt_recorder *rec = bt_recorder_open(o->file, &a.cfg, "backfill", from + 60 + lag, err,
                                               sizeof err);
    if (!rec) {
        bt_err("%s", err);
        app_free(&a);
        return 3;
    }
    unsigned long minutes = 0, samples = 0;
    for (int64_t m = from; m < to; m += 60) {
        int64_t seen = m + 60 + lag;
        struct bt_event ok = {.t = seen, .type = BT_EV_OK, .route = -1, .source = BT_SRC_CLOUDWATCH};
        if (m == from)
            bt_strlcpy(ok.text, "backfilled from CloudWatch history (no admission counters)", sizeof ok.text);
        bt_recorder_add_event(rec, &ok);
        for (int r = 0; r < a.cfg.nroutes; r++) {
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

static int cmd_record(struct opts *o)
{
    if (!o->file) {
        bt_err("record: which file? (bedtop record FILE)");
        return 3;
    }
    if (o->since || o->from || o->to)
        return record_backfill(o);
    struct app a;
    int64_t start = o->demo ? demo_now(o, 0) : (int64_t)time(NULL);
    int rc = app_init(&a, o, BT_MODE_LIVE, (double)start);
    if (rc) {
        app_free(&a);
        return rc;
    }
    char err[600];
    a.rec = bt_recorder_open(o->file, &a.cfg, o->demo ? "demo" : "live", start, err, sizeof err);
    if (!a.rec) {
        bt_err("%s", err);
        app_free(&a);
        return 3;
    }
    bt_recorder_attach(a.rec, &a.store);
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

/* ---- replay and export ---- */

static void replay_warn(void *arg, const char *msg)
{
    (void)arg;
    bt_err("%s", msg);
}

static bool open_recording(struct opts *o, struct bt_replay *rp)
{
    char err[600];
    if (!o->file) {
        bt_err("which recording? (bedtop replay FILE)");
        return false;
    }
    if (!bt_replay_open(rp, o->file, replay_warn, NULL, err, sizeof err)) {
        bt_err("%s", err);
        return false;
    }
    if (!rp->npolls) {
        bt_err("%s: no polls recorded", o->file);
        bt_replay_free(rp);
        return false;
    }
    return true;
}

static bool when(const struct bt_replay *rp, const char *what, const char *s, int64_t *out)
{
    int64_t rel = s[0] == '+' ? rp->start : rp->end;
    if (!bt_parse_when(s, rp->start, rp->end, rel, out)) {
        bt_err("%s: '%s' is not a time (14:32, -30m, +5m, 2026-11-29T14:32:00Z)", what, s);
        return false;
    }
    return true;
}

static int replay_print(struct opts *o, struct bt_replay *rp)
{
    enum bt_format fmt = BT_FMT_TEXT;
    if (o->format && !bt_format_parse(o->format, &fmt)) {
        bt_err("--format: '%s' is not text, json or prometheus", o->format);
        return 3;
    }
    int64_t t;
    if (!when(rp, "--at", o->at, &t))
        return 3;
    if (t < rp->start || t > rp->end) {
        char a[32], b[32], c[32];
        bt_fmt_iso(t, a, sizeof a);
        bt_fmt_iso(rp->start, b, sizeof b);
        bt_fmt_iso(rp->end, c, sizeof c);
        bt_err("--at %s is outside the recording (%s to %s)", a, b, c);
        return 3;
    }
    bt_replay_seek(rp, t);
    struct bt_report rep;
    bt_report_build(&rep, &rp->cfg, &rp->store, t);
    rep.mode = "replay";
    bool color = fmt == BT_FMT_TEXT && !o->no_color && isatty(STDOUT_FILENO) && !getenv("NO_COLOR");
    struct bt_buf out = {0};
    bt_report_render(&rep, fmt, color, &out);
    if (fmt == BT_FMT_TEXT && !rp->has_admission)
        bt_buf_puts(&out, "\nnote: this recording has no admission counters (backfilled or none configured)\n");
    fwrite(out.buf, 1, out.len, stdout);
    int rc = bt_status_exit(rep.status);
    bt_buf_free(&out);
    bt_report_free(&rep);
    return rc;
}

static int cmd_replay(struct opts *o)
{
    struct bt_replay rp;
    if (!open_recording(o, &rp))
        return 3;
    int rc;
    if (o->at)
        rc = replay_print(o, &rp);
    else {
        bt_err("replay: the interactive replay needs the dashboard; use --at TIME for now");
        rc = 3;
    }
    bt_replay_free(&rp);
    return rc;
}

static void csv_field(struct bt_buf *b, const char *s)
{
    if (!strpbrk(s, ",\"\n")) {
        bt_buf_puts(b, s);
        return;
    }
    bt_buf_putc(b, '"');
    for (; *s; s++) {
        if (*s == '"')
            bt_buf_putc(b, '"');
        bt_buf_putc(b, *s);
    }
    bt_buf_putc(b, '"');
}

static void csv_num(struct bt_buf *b, double v)
{
    bt_buf_putc(b, ',');
    if (!isnan(v))
        bt_buf_printf(b, "%.10g", v);
}

static int cmd_export(struct opts *o)
{
    bool csv;
    if (!o->format || !strcmp(o->format, "csv"))
        csv = true;
    else if (!strcmp(o->format, "json"))
        csv = false;
    else {
        bt_err("export --format: '%s' is not csv or json", o->format);
        return 3;
    }
    struct bt_replay rp;
    if (!open_recording(o, &rp))
        return 3;
    int64_t from = rp.start, to = rp.end;
    int only = -1;
    if ((o->from && !when(&rp, "--from", o->from, &from)) || (o->to && !when(&rp, "--to", o->to, &to))) {
        bt_replay_free(&rp);
        return 3;
    }
    if (o->route) {
        only = bt_config_find_route(&rp.cfg, o->route);
        if (only < 0) {
            bt_err("--route: no route '%s' in %s", o->route, o->file);
            bt_replay_free(&rp);
            return 3;
        }
    }
    FILE *out = stdout;
    if (o->output) {
        int fd = open(o->output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        out = fd >= 0 ? fdopen(fd, "w") : NULL;
        if (!out) {
            bt_err("%s: %s", o->output, strerror(errno));
            bt_replay_free(&rp);
            return 3;
        }
    }
    struct bt_buf b = {0};
    if (csv) {
        bt_buf_puts(&b, "time,route,model_id,region,endpoint,inference");
        for (int k = 0; k < BT_SIG_COUNT; k++)
            bt_buf_printf(&b, ",%s", bt_signal_info[k].name);
        bt_buf_puts(&b, ",settled_tpm,estimated_tpm,reserved_tpm,reserved_source,used_tpm,quota_tpm,"
                        "quota_source,headroom_tpm,headroom_pct,fits_more,status,warnings\n");
    } else {
        bt_buf_puts(&b, "[\n");
    }
    /* Each minute's row: its signals (final values) and the headroom and warnings
     * bedtop showed when that minute was the newest complete one. */
    int64_t lag = (int64_t)rp.cfg.cw_lag;
    bool first = true;
    for (int64_t m = bt_minute_floor(from - 60 - lag); m + 60 + lag <= to; m += 60) {
        int64_t shown = m + 60 + lag;
        if (shown < from)
            continue;
        bt_replay_seek(&rp, shown);
        for (int r = 0; r < rp.cfg.nroutes; r++) {
            if (only >= 0 && r != only)
                continue;
            const struct bt_route *rt = &rp.cfg.routes[r];
            struct bt_eval e;
            bt_eval_route(&rp.cfg, &rp.store, r, shown, &e);
            char iso[32];
            bt_fmt_iso(m, iso, sizeof iso);
            if (csv) {
                bt_buf_printf(&b, "%s,", iso);
                csv_field(&b, rt->name);
                bt_buf_putc(&b, ',');
                csv_field(&b, rt->model);
                bt_buf_printf(&b, ",%s,%s,%s", rt->region, bt_endpoint_name(rt->endpoint),
                              bt_inference_name(rt->inference));
                for (int k = 0; k < BT_SIG_COUNT; k++)
                    csv_num(&b, bt_store_at(&rp.store, r, (enum bt_signal)k,
                                            bt_signal_info[k].source == BT_SRC_ADMISSION ? e.adm_minute : m));
                csv_num(&b, e.settled);
                csv_num(&b, e.estimated);
                csv_num(&b, e.reserved);
                bt_buf_printf(&b, ",%s", e.reserved_source ? e.reserved_source : "");
                csv_num(&b, e.used);
                csv_num(&b, e.quota);
                bt_buf_printf(&b, ",%s", bt_quota_source_name(e.quota_source));
                csv_num(&b, e.headroom_tpm);
                csv_num(&b, isnan(e.headroom_pct) ? NAN : round(e.headroom_pct * 10) / 10);
                csv_num(&b, e.fits_more);
                bt_buf_printf(&b, ",%s,", bt_status_name(e.status));
                for (int w = 0; w < e.nwarn; w++)
                    bt_buf_printf(&b, "%s%s", w ? ";" : "", bt_wcode_name(e.warnings[w].code));
                bt_buf_putc(&b, '\n');
            } else {
                struct bt_report rep = {.cfg = &rp.cfg, .store = &rp.store, .now = shown,
                                        .evals = &e, .n = 1, .mode = "replay"};
                /* route_json reads cfg->routes[i] and evals[i]: point at this route */
                struct bt_config one = rp.cfg;
                one.routes = &rp.cfg.routes[r];
                one.nroutes = 1;
                rep.cfg = &one;
                cJSON *j = bt_report_route_json(&rep, 0);
                cJSON_AddStringToObject(j, "time", iso);
                cJSON *sig = cJSON_AddObjectToObject(j, "signals");
                for (int k = 0; k < BT_SIG_COUNT; k++) {
                    double v = bt_store_at(&rp.store, r, (enum bt_signal)k,
                                           bt_signal_info[k].source == BT_SRC_ADMISSION ? e.adm_minute : m);
                    if (!isnan(v))
                        cJSON_AddNumberToObject(sig, bt_signal_info[k].name, v);
                }
                char *s = cJSON_PrintUnformatted(j);
                bt_buf_printf(&b, "%s%s", first ? "" : ",\n", s);
                cJSON_free(s);
                cJSON_Delete(j);
            }
            first = false;
        }
        if (b.len > (1 << 20)) {
            fwrite(b.buf, 1, b.len, out);
            bt_buf_reset(&b);
        }
    }
    if (!csv)
        bt_buf_puts(&b, "\n]\n");
    fwrite(b.buf, 1, b.len, out);
    bt_buf_free(&b);
    int rc = 0;
    if (fflush(out) != 0 || ferror(out)) {
        bt_err("%s: %s", o->output ? o->output : "stdout", strerror(errno));
        rc = 3;
    }
    if (out != stdout)
        fclose(out);
    bt_replay_free(&rp);
    return rc;
}

/* ---- the live dashboard ---- */

struct dash {
    struct app *a;
    struct bt_tui *tui;
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

static void dash_marker(void *arg, const char *note)
{
    struct dash *d = arg;
    if (d->a->rec)
        bt_recorder_marker(d->a->rec, &d->a->store, bt_clock_now(&d->a->loop.clock), note);
}

static void dash_input(void *self)
{
    struct dash *d = self;
    bt_tui_input(d->tui);
}

static void dash_update(void *self, int64_t now)
{
    struct dash *d = self;
    d->host.now = now;
    int64_t due = bt_loop_next_due(&d->a->loop);
    d->host.next_poll = due == INT64_MAX ? 0 : due;
    app_cost(d->a, &d->host.metrics_per_poll, &d->host.metrics_per_day);
    bt_tui_update(d->tui);
}

static void dash_resize(void *self)
{
    struct dash *d = self;
    bt_tui_resize(d->tui);
}

static bool dash_done(void *self)
{
    struct dash *d = self;
    return bt_tui_quit(d->tui);
}

static int dash_wakeup(void *self)
{
    struct dash *d = self;
    return bt_tui_next_wakeup_ms(d->tui);
}

static void dash_after_tick(void *arg, int64_t now)
{
    struct app *a = arg;
    if (a->rec)
        bt_recorder_flush(a->rec, now);
}

static int cmd_dashboard(struct opts *o)
{
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
        bt_err("the dashboard needs a terminal; for plain output use: bedtop check%s",
               o->demo ? " --demo" : "");
        return 3;
    }
    struct app a;
    bool frozen = o->demo && !isnan(o->demo_at);
    int64_t start = o->demo ? demo_now(o, 0) : (int64_t)time(NULL);
    int rc = app_init(&a, o, BT_MODE_LIVE, (double)start);
    if (rc) {
        app_free(&a);
        return rc;
    }
    char err[600];
    if (o->record) {
        a.rec = bt_recorder_open(o->record, &a.cfg, o->demo ? "demo" : "live", start, err, sizeof err);
        if (!a.rec) {
            bt_err("%s", err);
            app_free(&a);
            return 3;
        }
        bt_recorder_attach(a.rec, &a.store);
    }
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
                                  .metrics_per_day = NAN,
                                  .recording = a.rec ? bt_recorder_path(a.rec) : NULL, .arg = &d,
                                  .refresh_now = dash_refresh, .set_paused = dash_pause,
                                  .set_interval = dash_interval,
                                  .add_marker = a.rec ? dash_marker : NULL};
    struct bt_tui_opts to = {.theme = o->theme, .ascii = o->ascii, .no_color = o->no_color};
    d.tui = bt_tui_new(&to, &d.host, err, sizeof err);
    if (!d.tui) {
        bt_err("%s", err);
        app_free(&a);
        return 3;
    }
    atexit(bt_tui_emergency_restore);
    struct bt_loop_view view = {.self = &d, .input_fd = STDIN_FILENO, .on_input = dash_input,
                                .on_update = dash_update, .on_resize = dash_resize,
                                .done = dash_done, .next_wakeup_ms = dash_wakeup};
    a.loop.view = &view;
    a.loop.after_tick = dash_after_tick;
    a.loop.after_tick_arg = &a;
    bt_loop_signals();
    int sig = bt_loop_run(&a.loop);
    bt_tui_free(d.tui);
    d.tui = NULL;
    const char *rerr = a.rec ? bt_recorder_error(a.rec) : NULL;
    if (rerr)
        bt_err("%s", rerr);
    app_free(&a);
    return sig > 0 ? 128 + sig : 0;
}

int main(int argc, char **argv)
{
    struct opts o;
    const struct command *cmd;
    setlocale(LC_ALL, "");
    setlocale(LC_NUMERIC, "C"); /* JSON, CSV and recordings need a dot */
    int r = parse_args(argc, argv, &o, &cmd);
    if (r)
        return r - 1;
    return cmd ? cmd->exec(&o) : cmd_dashboard(&o);
}
