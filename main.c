/* bedtop: argument parsing and subcommand dispatch only. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collectors/collector.h"
#include "collectors/demo.h"
#include "core/config.h"
#include "core/report.h"
#include "core/util.h"

struct opts {
    const char *config, *profile, *region, *endpoint_url, *admission, *theme, *record;
    const char *format, *from, *to, *since, *at, *route;
    const char *file;          /* positional FILE of replay/record/export */
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

static const struct command commands[] = {
    {"check", "check [--format text|json|prometheus]   one poll, print, exit 0/1/2/3", cmd_check},
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
            "  -v, --verbose            print requests sent to stderr (never credentials)\n"
            "  -h, --help               this help\n"
            "  -V, --version            version\n"
            "\nexit codes of check: 0 ok, 1 warning, 2 critical, 3 unknown or error\n");
}

enum { O_PROFILE = 256, O_REGION, O_ENDPOINT, O_ADMISSION, O_DEMO, O_DEMO_SPEED, O_DEMO_AT,
       O_THEME, O_NO_COLOR, O_ASCII, O_RECORD, O_FROM, O_TO, O_SINCE, O_AT, O_ROUTE };

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
    {"verbose", no_argument, NULL, 'v'},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0},
};

/* Returns 0 to go on, or an exit code + 1. */
static int parse_args(int argc, char **argv, struct opts *o, const struct command **cmd)
{
    *o = (struct opts){.interval = NAN, .demo_speed = 1, .demo_at = NAN};
    *cmd = NULL;
    int c;
    while ((c = getopt_long(argc, argv, "+c:i:f:vhV", long_opts, NULL)) != -1) {
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
        /* options may follow the subcommand: restart after it */
        if (optind < argc && !*cmd && argv[optind][0] != '-') {
            for (size_t i = 0; i < BT_ARRAY_LEN(commands); i++)
                if (!strcmp(argv[optind], commands[i].name))
                    *cmd = &commands[i];
            if (*cmd)
                optind++;
        }
    }
    while (optind < argc) {
        const char *a = argv[optind++];
        if (!*cmd) {
            for (size_t i = 0; i < BT_ARRAY_LEN(commands); i++)
                if (!strcmp(a, commands[i].name))
                    *cmd = &commands[i];
            if (!*cmd) {
                bt_err("unknown command '%s' (try --help)", a);
                return 3 + 1;
            }
            /* parse the options after the command */
            int r = 0;
            int sub_argc = argc - optind + 1;
            char **sub_argv = argv + optind - 1;
            optind = 1;
            const struct command *keep = *cmd;
            struct opts saved = *o;
            r = parse_args(sub_argc, sub_argv, o, cmd);
            /* merge: options before the command stay unless repeated after it */
            #define KEEP(f) if (!o->f) o->f = saved.f
            KEEP(config); KEEP(profile); KEEP(region); KEEP(endpoint_url); KEEP(admission);
            KEEP(theme); KEEP(record); KEEP(format); KEEP(from); KEEP(to); KEEP(since);
            KEEP(at); KEEP(route); KEEP(file);
            #undef KEEP
            o->demo |= saved.demo;
            o->no_color |= saved.no_color;
            o->ascii |= saved.ascii;
            o->verbose |= saved.verbose;
            if (isnan(o->interval)) o->interval = saved.interval;
            if (isnan(o->demo_at)) o->demo_at = saved.demo_at;
            if (o->demo_speed == 1) o->demo_speed = saved.demo_speed;
            if (*cmd && *cmd != keep) {
                bt_err("two commands given: %s and %s", keep->name, (*cmd)->name);
                return 3 + 1;
            }
            *cmd = keep;
            return r;
        }
        if (o->file) {
            bt_err("unexpected argument '%s'", a);
            return 3 + 1;
        }
        o->file = a;
    }
    return 0;
}

/* Loads the config (or the demo's), applies command-line overrides. */
static bool setup_config(struct opts *o, struct bt_config *cfg)
{
    char err[512];
    bt_config_defaults(cfg);
    if (o->demo) {
        if (o->config && !bt_config_load(cfg, o->config, err, sizeof err)) {
            bt_err("%s", err);
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

static int64_t demo_now(const struct opts *o)
{
    double minute = isnan(o->demo_at) ? 16 : o->demo_at;
    return BT_DEMO_T0 + (int64_t)llround(minute * 60);
}

static int cmd_check(struct opts *o)
{
    enum bt_format fmt = BT_FMT_TEXT;
    if (o->format && !bt_format_parse(o->format, &fmt)) {
        bt_err("--format: '%s' is not text, json or prometheus", o->format);
        return 3;
    }
    struct bt_config cfg;
    if (!setup_config(o, &cfg))
        return 3;
    struct bt_store store;
    bt_store_init(&store, cfg.nroutes, cfg.history_minutes);
    struct bt_ctx ctx = {.cfg = &cfg, .store = &store, .mode = BT_MODE_ONCE,
                         .verbose = o->verbose, .profile = o->profile, .region = o->region,
                         .endpoint_url = o->endpoint_url, .admission_url = o->admission};
    int64_t now;
    if (o->demo) {
        now = demo_now(o);
        void *d = bt_demo_collector.create(&ctx);
        bt_demo_collector.tick(d, now);
        bt_demo_collector.destroy(d);
    } else {
        now = (int64_t)time(NULL);
        if (!cfg.nroutes) {
            bt_err("no routes configured%s%s (route discovery needs the CloudWatch collector)",
                   cfg.path[0] ? " in " : "", cfg.path);
            bt_store_free(&store);
            bt_config_free(&cfg);
            return 3;
        }
    }
    struct bt_report rep;
    bt_report_build(&rep, &cfg, &store, now);
    rep.mode = o->demo ? "demo" : "live";
    bool color = fmt == BT_FMT_TEXT && !o->no_color && isatty(STDOUT_FILENO) &&
                 !getenv("NO_COLOR");
    struct bt_buf out = {0};
    bt_report_render(&rep, fmt, color, &out);
    fwrite(out.buf, 1, out.len, stdout);
    int rc = bt_status_exit(rep.status);
    bt_buf_free(&out);
    bt_report_free(&rep);
    bt_store_free(&store);
    bt_config_free(&cfg);
    if (fflush(stdout) != 0) {
        bt_err("stdout: %s", strerror(errno));
        return 3;
    }
    return rc;
}

static int cmd_dashboard(struct opts *o)
{
    /* The full-screen dashboard lands with tui/; until then show one check. */
    return cmd_check(o);
}

int main(int argc, char **argv)
{
    struct opts o;
    const struct command *cmd;
    int r = parse_args(argc, argv, &o, &cmd);
    if (r)
        return r - 1;
    return cmd ? cmd->exec(&o) : cmd_dashboard(&o);
}
