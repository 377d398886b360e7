/* bedtop: argument parsing and subcommand dispatch only. */
#include <getopt.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "app/app.h"
#include "core/util.h"

struct command {
    const char *name;
    const char *usage;
    int (*exec)(struct opts *o);
};

static const struct command commands[] = {
    {"check", "check [--format text|json|prometheus]   one poll, print, exit 0/1/2/3", cmd_check},
    {"record", "record FILE [--demo] [--duration D]      headless recording until signalled", cmd_record},
    {"replay", "replay FILE [--at TIME --format text|json]   replay a recording", cmd_replay},
    {"serve", "serve [--listen ADDR:PORT] [--record FILE]   headless poller serving /metrics (default 127.0.0.1:9464)", cmd_serve},
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
            "      --source URL         prometheus+http://HOST:PORT: read bedtop's own series from\n"
            "                           a Prometheus server (fed by bedtop serve) instead of AWS\n"
            "      --match MATCHERS     with --source: label matchers, e.g. 'region=\"us-east-1\"'\n"
            "      --listen ADDR:PORT   serve: where to listen (default 127.0.0.1:9464)\n"
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
       O_DURATION, O_LISTEN, O_SOURCE, O_MATCH };

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
    {"listen", required_argument, NULL, O_LISTEN},
    {"source", required_argument, NULL, O_SOURCE},
    {"match", required_argument, NULL, O_MATCH},
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
        case O_LISTEN: o->listen = optarg; break;
        case O_SOURCE: o->source = optarg; break;
        case O_MATCH: o->match = optarg; break;
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
