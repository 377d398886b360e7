/* bedtop: argument parsing and subcommand dispatch only. */
#include <getopt.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "app/app.h"
#include "core/util.h"

/* Which commands an option applies to: giving it to another is an error (a cron
 * job that says `check --route x` must never get every route silently). */
enum { C_DASH = 1, C_CHECK = 2, C_RECORD = 4, C_REPLAY = 8, C_EXPORT = 16, C_SERVE = 32,
       C_REPORT = 64, C_PLAN = 128, C_ALL = 255 };

/* One command's entry (tmux's cmd_entry): its name, synopsis, what it does and how it
 * runs. `bedtop CMD --help` and `bedtop help CMD` print the synopsis, the summary and
 * every option of opt_defs[] that applies to it, so the help lists exactly what
 * parse_args accepts. */
struct command {
    const char *name;
    const char *usage;
    const char *summary; /* lines of what it does, for its --help */
    unsigned bit;
    int (*exec)(struct opts *o);
};

static const struct command commands[] = {
    {.name = "check", .usage = "check [-f text|json|prometheus] [--route R]... [--wide] [-o FILE]",
     .summary = "polls once, prints every route and warning (text, JSON or Prometheus text)\n"
                "and exits as a monitoring plugin does: 0 ok, 1 warn, 2 crit (the worst\n"
                "route; an unknown route counts as --unknown-as), 3 bedtop could not run",
     .bit = C_CHECK, .exec = cmd_check},
    {.name = "record", .usage = "record FILE [--demo] [--duration D] [--since D | --from T --to T]",
     .summary = "polls headless, as the dashboard would, and appends every sample and event\n"
                "to FILE (--since D: backfills the last D from CloudWatch)",
     .bit = C_RECORD, .exec = cmd_record},
    {.name = "replay", .usage = "replay FILE [--at MINUTE [-f text|json] [--route R]... [--wide]]",
     .summary = "opens a recording in the dashboard with time controls; --at MINUTE prints\n"
                "the report of that data minute instead, with check's exit codes",
     .bit = C_REPLAY, .exec = cmd_replay},
    {.name = "export", .usage = "export FILE [-f csv|json] [--from T] [--to T] [--route R] [-o F]",
     .summary = "writes one row per route and data minute of a recording, as CSV or JSON\n"
                "(--source: of the series read from Prometheus instead)",
     .bit = C_EXPORT, .exec = cmd_export},
    {.name = "serve", .usage = "serve [--listen ADDR:PORT] [--replica NAME] [--record FILE]",
     .summary = "the headless poller for a fleet: GET /metrics answers every route's\n"
                "headroom in the Prometheus exposition format",
     .bit = C_SERVE, .exec = cmd_serve},
    {.name = "report",
     .usage = "report quota-request FILE|--since D [-f text|markdown|json]\n"
              "       bedtop report incident FILE [--from T] [--to T] [-o DIR] [--png]",
     .summary = "writes the documents that follow a capacity incident: the quota increase\n"
                "request (quota-request) and the incident write-up with its charts (incident)",
     .bit = C_REPORT, .exec = cmd_report},
    {.name = "plan",
     .usage = "plan ROUTE [--max-tokens N] [--concurrency N] [--traffic xF]\n"
              "              [--retries-off] [--tier flex|priority] [--region R] [--limits]\n"
              "              [-f text|json] [--demo-at M | --replay FILE --at TIME]",
     .summary = "what should change for ROUTE, and would it be enough: the what-ifs of\n"
                "--max-tokens, --concurrency, --traffic, --retries-off, --tier, --region;\n"
                "--limits: the limits to set at the admission boundary",
     .bit = C_PLAN, .exec = cmd_plan},
};
static const struct command dashboard = {.name = "the dashboard", .usage = NULL, .bit = C_DASH, .exec = cmd_dashboard};

enum { O_PROFILE = 256, O_REGION, O_ENDPOINT, O_ADMISSION, O_DEMO, O_DEMO_SPEED, O_DEMO_AT,
       O_THEME, O_NO_COLOR, O_ASCII, O_RECORD, O_FROM, O_TO, O_SINCE, O_AT, O_ROUTE,
       O_DURATION, O_WIDE, O_BY, O_UNKNOWN_AS, O_LISTEN, O_SOURCE, O_MATCH, O_MARGIN, O_PNG,
       O_MAX_TOKENS, O_CONCURRENCY, O_TRAFFIC, O_RETRIES_OFF, O_TIER, O_LIMITS, O_REPLAY, O_BELL, O_STATE, O_NO_STATE,
       O_REPLICA };

/* The option table: getopt's view, the commands each option applies to, and its help
 * line. One row per option is all an option needs: parse_args refuses it for the other
 * commands, `bedtop --help` prints every row in this order, `bedtop CMD --help` those that
 * apply to CMD (t_help checks the two agree with what parse_args takes). */
struct opt_def {
    struct option o;
    unsigned applies;
    const char *shown; /* the help's left column without the short option: "--config FILE" */
    const char *help;  /* its text, lines split by \n; "dashboard, record: ..." where it helps */
};

static const struct opt_def opt_defs[] = {
    {.o = {.name = "config", .has_arg = required_argument, .val = 'c'}, .applies = C_DASH | C_CHECK | C_RECORD | C_SERVE | C_EXPORT | C_REPORT | C_PLAN,
     .shown = "--config FILE",
     .help = "config file (default $XDG_CONFIG_HOME/bedtop/config)"},
    {.o = {.name = "profile", .has_arg = required_argument, .val = O_PROFILE}, .applies = C_DASH | C_CHECK | C_RECORD | C_SERVE | C_REPORT | C_PLAN,
     .shown = "--profile NAME",
     .help = "AWS profile (as the AWS CLI)"},
    {.o = {.name = "region", .has_arg = required_argument, .val = O_REGION}, .applies = C_DASH | C_CHECK | C_RECORD | C_SERVE | C_REPORT | C_PLAN,
     .shown = "--region R",
     .help = "AWS Region (else AWS_REGION, the profile, the config)"},
    {.o = {.name = "endpoint-url", .has_arg = required_argument, .val = O_ENDPOINT}, .applies = C_DASH | C_CHECK | C_RECORD | C_SERVE | C_REPORT | C_PLAN,
     .shown = "--endpoint-url URL",
     .help = "override the AWS endpoints (testing, VPC endpoints)"},
    {.o = {.name = "interval", .has_arg = required_argument, .val = 'i'}, .applies = C_DASH | C_RECORD | C_SERVE,
     .shown = "--interval S",
     .help = "dashboard, record, serve: seconds between polls (60)"},
    {.o = {.name = "admission", .has_arg = required_argument, .val = O_ADMISSION}, .applies = C_DASH | C_CHECK | C_RECORD | C_SERVE | C_PLAN,
     .shown = "--admission URL",
     .help = "admission-controller counters (Prometheus text/JSON)"},
    {.o = {.name = "source", .has_arg = required_argument, .val = O_SOURCE}, .applies = C_DASH | C_CHECK | C_RECORD | C_EXPORT | C_PLAN,
     .shown = "--source URL",
     .help = "dashboard, check, record, export: bedtop's own series\n"
             "from prometheus+http://HOST:PORT, not from AWS"},
    {.o = {.name = "match", .has_arg = required_argument, .val = O_MATCH}, .applies = C_DASH | C_CHECK | C_RECORD | C_EXPORT | C_PLAN,
     .shown = "--match M",
     .help = "--source: label matchers, e.g. 'region=\"us-east-1\"'"},
    {.o = {.name = "listen", .has_arg = required_argument, .val = O_LISTEN}, .applies = C_SERVE,
     .shown = "--listen ADDR:PORT",
     .help = "serve: where to listen (default 127.0.0.1:9464)"},
    {.o = {.name = "replica", .has_arg = required_argument, .val = O_REPLICA}, .applies = C_SERVE,
     .shown = "--replica NAME",
     .help = "serve: label every series replica=\"NAME\" (an HA pair)"},
    {.o = {.name = "format", .has_arg = required_argument, .val = 'f'}, .applies = C_CHECK | C_REPLAY | C_EXPORT | C_REPORT | C_PLAN,
     .shown = "--format F",
     .help = "check: text, json or prometheus; replay --at: text or\n"
             "json; export: csv or json; report quota-request:\n"
             "text, markdown or json"},
    {.o = {.name = "demo", .has_arg = no_argument, .val = O_DEMO}, .applies = C_DASH | C_CHECK | C_RECORD | C_PLAN | C_SERVE,
     .shown = "--demo",
     .help = "built-in simulated workload; no AWS needed"},
    {.o = {.name = "demo-speed", .has_arg = required_argument, .val = O_DEMO_SPEED}, .applies = C_DASH | C_RECORD,
     .shown = "--demo-speed N",
     .help = "dashboard, record: simulated time runs N times faster\n"
             "(record: max = no pacing, deterministic)"},
    {.o = {.name = "demo-at", .has_arg = required_argument, .val = O_DEMO_AT}, .applies = C_DASH | C_CHECK | C_RECORD | C_PLAN | C_SERVE,
     .shown = "--demo-at MINUTE",
     .help = "evaluate the demo at data minute 10:MM (0-29),\n"
             "as replay --at; serve: its clock stands still"},
    {.o = {.name = "theme", .has_arg = required_argument, .val = O_THEME}, .applies = C_DASH | C_REPLAY,
     .shown = "--theme NAME",
     .help = "dashboard, replay: color theme (default, light,\n"
             "high-contrast, monochrome)"},
    {.o = {.name = "no-color", .has_arg = no_argument, .val = O_NO_COLOR}, .applies = C_DASH | C_CHECK | C_REPLAY | C_PLAN,
     .shown = "--no-color",
     .help = "no colors (also NO_COLOR)"},
    {.o = {.name = "ascii", .has_arg = no_argument, .val = O_ASCII}, .applies = C_DASH | C_REPLAY,
     .shown = "--ascii",
     .help = "dashboard, replay: ASCII graphs and borders"},
    {.o = {.name = "record", .has_arg = required_argument, .val = O_RECORD}, .applies = C_DASH | C_SERVE,
     .shown = "--record FILE",
     .help = "dashboard, serve: record what is watched"},
    {.o = {.name = "duration", .has_arg = required_argument, .val = O_DURATION}, .applies = C_RECORD,
     .shown = "--duration D",
     .help = "record: stop after D (90s, 30m, 2h) of watched time"},
    {.o = {.name = "since", .has_arg = required_argument, .val = O_SINCE}, .applies = C_RECORD | C_EXPORT | C_REPORT,
     .shown = "--since D",
     .help = "record: backfill the last D (e.g. 3h) from CloudWatch\n"
             "(export --source: the window read from Prometheus;\n"
             "report quota-request: the usage of the last D)"},
    {.o = {.name = "margin", .has_arg = required_argument, .val = O_MARGIN}, .applies = C_REPORT,
     .shown = "--margin PCT",
     .help = "report quota-request: ask for the peak plus PCT (20%)"},
    {.o = {.name = "png", .has_arg = no_argument, .val = O_PNG}, .applies = C_REPORT,
     .shown = "--png",
     .help = "report incident: a PNG beside each SVG chart"},
    {.o = {.name = "at", .has_arg = required_argument, .val = O_AT}, .applies = C_REPLAY | C_PLAN,
     .shown = "--at MINUTE",
     .help = "replay: print the report at data MINUTE (14:32, +5m\n"
             "after the first, -30m before the last, ISO 8601)"},
    {.o = {.name = "from", .has_arg = required_argument, .val = O_FROM}, .applies = C_RECORD | C_EXPORT | C_REPORT,
     .shown = "--from T, --to T",
     .help = "export, report: data minutes T..T; record: the\n"
             "backfill window"},
    {.o = {.name = "to", .has_arg = required_argument, .val = O_TO}, .applies = C_RECORD | C_EXPORT | C_REPORT}, /* shown with --from */
    {.o = {.name = "route", .has_arg = required_argument, .val = O_ROUTE}, .applies = C_CHECK | C_EXPORT | C_REPORT | C_REPLAY,
     .shown = "--route NAME",
     .help = "check, replay --at, export, report: only this route"},
    {.o = {.name = "wide", .has_arg = no_argument, .val = O_WIDE}, .applies = C_CHECK | C_REPLAY,
     .shown = "--wide",
     .help = "check, replay --at: every column, not 80 columns"},
    {.o = {.name = "by", .has_arg = required_argument, .val = O_BY}, .applies = C_CHECK | C_PLAN,
     .shown = "--by KEY",
     .help = "check: who holds each quota, a table by team,\n"
             "tag:KEY, project or route; plan --limits: budgets\n"
             "per holder as admission policy JSON"},
    {.o = {.name = "state", .has_arg = required_argument, .val = O_STATE}, .applies = C_CHECK,
     .shown = "--state FILE",
     .help = "check: keep what this run fetched in FILE (0600;\n"
             "'default': $XDG_STATE_HOME/bedtop/check-state.json)\n"
             "so the next run asks only the minutes it has not seen\n"
             "(on by default: $XDG_CACHE_HOME/bedtop/, one file per\n"
             "configuration and account)"},
    {.o = {.name = "no-state", .has_arg = no_argument, .val = O_NO_STATE}, .applies = C_CHECK,
     .shown = "--no-state",
     .help = "check: no state file read or written (all asked)"},
    {.o = {.name = "bell", .has_arg = no_argument, .val = O_BELL}, .applies = C_DASH,
     .shown = "--bell",
     .help = "dashboard: the terminal bell when a route turns crit"},
    {.o = {.name = "unknown-as", .has_arg = required_argument, .val = O_UNKNOWN_AS}, .applies = C_CHECK | C_REPLAY,
     .shown = "--unknown-as S",
     .help = "check, replay --at: a route whose status is unknown\n"
             "counts as warn (default), crit or unknown"},
    {.o = {.name = "output", .has_arg = required_argument, .val = 'o'}, .applies = C_CHECK | C_EXPORT | C_REPORT,
     .shown = "--output FILE",
     .help = "check, export, report quota-request: write FILE\n"
             "(created 0600), not stdout; report incident: the\n"
             "directory of report.md and the charts; the format\n"
             "is -f (not the AWS CLI's --output json)"},
    {.o = {.name = "max-tokens", .has_arg = required_argument, .val = O_MAX_TOKENS}, .applies = C_PLAN,
     .shown = "--max-tokens N",
     .help = "plan: what if each call asked for N output tokens"},
    {.o = {.name = "concurrency", .has_arg = required_argument, .val = O_CONCURRENCY}, .applies = C_PLAN,
     .shown = "--concurrency N",
     .help = "plan: what if at most N calls were in flight"},
    {.o = {.name = "traffic", .has_arg = required_argument, .val = O_TRAFFIC}, .applies = C_PLAN,
     .shown = "--traffic xF",
     .help = "plan: what if calls were F times as many (x0.5, x2)"},
    {.o = {.name = "retries-off", .has_arg = no_argument, .val = O_RETRIES_OFF}, .applies = C_PLAN,
     .shown = "--retries-off",
     .help = "plan: what if retried attempts were not sent"},
    {.o = {.name = "tier", .has_arg = required_argument, .val = O_TIER}, .applies = C_PLAN,
     .shown = "--tier T",
     .help = "plan: what if the calls used service tier flex or\n"
             "priority (plan --region R: what if the route moved\n"
             "to Region R)"},
    {.o = {.name = "limits", .has_arg = no_argument, .val = O_LIMITS}, .applies = C_PLAN,
     .shown = "--limits",
     .help = "plan: the limits to set at the admission boundary"},
    {.o = {.name = "replay", .has_arg = required_argument, .val = O_REPLAY}, .applies = C_PLAN,
     .shown = "--replay FILE",
     .help = "plan: read a recording instead (with --at TIME)"},
    {.o = {.name = "verbose", .has_arg = no_argument, .val = 'v'}, .applies = C_DASH | C_CHECK | C_RECORD | C_SERVE | C_REPORT | C_PLAN,
     .shown = "--verbose",
     .help = "print requests sent to stderr (never credentials)"},
    {.o = {.name = "help", .has_arg = no_argument, .val = 'h'}, .applies = C_ALL,
     .shown = "--help",
     .help = "this help"},
    {.o = {.name = "version", .has_arg = no_argument, .val = 'V'}, .applies = C_ALL,
     .shown = "--version",
     .help = "version"},
};

/* One option's line (and its continuation lines) of a help, from its entry. */
static void opt_help(FILE *f, const struct opt_def *d)
{
    if (!d->shown) /* shown on the line of the option before it (--from T, --to T) */
        return;
    if (d->o.val > 0 && d->o.val < 128)
        fprintf(f, "  -%c, %-21s", d->o.val, d->shown);
    else
        fprintf(f, "      %-21s", d->shown);
    for (const char *h = d->help; *h;) {
        size_t n = strcspn(h, "\n");
        fprintf(f, "%s%.*s\n", h == d->help ? "" : "                           ", (int)n, h);
        h += n + (h[n] == '\n');
    }
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: bedtop [options]                 live dashboard\n"
            "       bedtop --demo                    dashboard on the simulated workload\n");
    for (size_t i = 0; i < BT_ARRAY_LEN(commands); i++)
        fprintf(f, "       bedtop %s\n", commands[i].usage);
    fprintf(f, "       bedtop help [COMMAND]            a command's synopsis and options\n");
    fprintf(f, "\noptions (each applies only to the commands named; elsewhere it is an error):\n");
    for (size_t i = 0; i < BT_ARRAY_LEN(opt_defs); i++)
        opt_help(f, &opt_defs[i]);
    fprintf(f, "\nexit codes of check: 0 ok, 1 warning, 2 critical (the worst route; an unknown\n"
               "route counts as --unknown-as), 3 bedtop could not run or read anything\n");
}

/* `bedtop CMD --help`, `bedtop help CMD`: the synopsis, what it does, and exactly the
 * options parse_args takes for it (those whose applies has its bit). */
static void command_usage(FILE *f, const struct command *c)
{
    fprintf(f, "usage: bedtop %s\n\n", c->usage);
    for (const char *s = c->summary; *s;) {
        size_t n = strcspn(s, "\n");
        fprintf(f, "  %.*s\n", (int)n, s);
        s += n + (s[n] == '\n');
    }
    fprintf(f, "\noptions of %s:\n", c->name);
    for (size_t i = 0; i < BT_ARRAY_LEN(opt_defs); i++)
        if (opt_defs[i].applies & c->bit)
            opt_help(f, &opt_defs[i]);
    fprintf(f, "\nbedtop --help lists every command; bedtop(1) says more.\n");
}

static const struct opt_def *opt_by_val(int val)
{
    for (size_t i = 0; i < BT_ARRAY_LEN(opt_defs); i++)
        if (opt_defs[i].o.val == val)
            return &opt_defs[i];
    return NULL;
}

/* "check, export" for an applies mask. */
static void applies_text(unsigned mask, char *out, size_t n)
{
    out[0] = '\0';
    size_t len = 0;
    if (mask & C_DASH)
        len += (size_t)snprintf(out + len, n - len, "the dashboard");
    for (size_t i = 0; i < BT_ARRAY_LEN(commands) && len < n; i++)
        if (mask & commands[i].bit)
            len += (size_t)snprintf(out + len, n - len, "%s%s", len ? ", " : "", commands[i].name);
}

/* The option by its long name (the short one, where there is one, means the same). */
static void opt_name(const struct opt_def *d, char *out, size_t n)
{
    snprintf(out, n, "--%s", d->o.name);
}

/* Returns 0 to go on, or an exit code + 1. */
static int parse_args(int argc, char **argv, struct opts *o, const struct command **cmd)
{
    *o = (struct opts){.interval = NAN, .demo_speed = 1, .demo_at = NAN, .duration = NAN};
    *cmd = NULL;
    struct option long_opts[BT_ARRAY_LEN(opt_defs) + 1];
    for (size_t i = 0; i < BT_ARRAY_LEN(opt_defs); i++)
        long_opts[i] = opt_defs[i].o;
    long_opts[BT_ARRAY_LEN(opt_defs)] = (struct option){0};
    unsigned char given[512] = {0}; /* by option value: seen on the command line */
    bool help = false;               /* -h/--help or the help command: after the checks */
    bool help_cmd = false;           /* `bedtop help [COMMAND]` */
    opterr = 0; /* our own one-line messages */
    for (;;) {
        int c = getopt_long(argc, argv, ":c:i:f:o:vhV", long_opts, NULL);
        if (c == -1)
            break;
        if (c > 0 && c < (int)sizeof given)
            given[c] = 1;
        switch (c) {
        case 'c': o->config = optarg; break;
        case O_PROFILE: o->profile = optarg; break;
        case O_REGION:
            if (!bt_config_valid_region(optarg)) {
                bt_err("--region: '%s' is not an AWS Region; use a name like us-east-1", optarg);
                return 3 + 1;
            }
            o->region = optarg;
            break;
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
        case O_WIDE: o->wide = true; break;
        case O_BY: o->by = optarg; break;
        case O_STATE: o->state = optarg; break;
        case O_NO_STATE: o->no_state = true; break;
        case O_BELL: o->bell = true; break;
        case O_LISTEN: o->listen = optarg; break;
        case O_REPLICA: o->replica = optarg; break;
        case O_SOURCE: o->source = optarg; break;
        case O_MATCH: o->match = optarg; break;
        case O_MARGIN: o->margin = optarg; break;
        case O_PNG: o->png = true; break;
        case O_MAX_TOKENS: o->max_tokens = optarg; break;
        case O_CONCURRENCY: o->concurrency = optarg; break;
        case O_TRAFFIC: o->traffic = optarg; break;
        case O_RETRIES_OFF: o->retries_off = true; break;
        case O_TIER: o->tier = optarg; break;
        case O_LIMITS: o->limits = true; break;
        case O_REPLAY: o->replay = optarg; break;
        case O_ROUTE:
            if (o->nroutes >= (int)BT_ARRAY_LEN(o->routes)) {
                bt_err("--route: at most %d routes; list fewer, or none for every route",
                       (int)BT_ARRAY_LEN(o->routes));
                return 3 + 1;
            }
            o->routes[o->nroutes++] = optarg;
            break;
        case O_UNKNOWN_AS:
            if (app_unknown_as_valid(optarg)) {
                o->unknown_as = optarg;
                break;
            }
            bt_err("--unknown-as: '%s' is not a status; use warn, crit or unknown", optarg);
            return 3 + 1;
        case 'v': o->verbose = true; break;
        case 'o':
            /* the AWS CLI's --output json|text|table is bedtop's --format: a file
             * named like a format is almost always that habit, never a file wanted */
            if (!strcmp(optarg, "json") || !strcmp(optarg, "text") || !strcmp(optarg, "table") ||
                !strcmp(optarg, "csv") || !strcmp(optarg, "prometheus")) {
                bt_err("-o/--output %s: bedtop's --output names a FILE to write; the output "
                       "format is --format (-f %s%s); to write a file of that name use -o ./%s",
                       optarg, strcmp(optarg, "table") ? optarg : "text",
                       strcmp(optarg, "table") ? "" : ": text is the table", optarg);
                return 3 + 1;
            }
            o->output = optarg;
            break;
        case O_DURATION:
            if (!bt_parse_duration(optarg, &o->duration) || o->duration <= 0) {
                bt_err("--duration: '%s' is not a duration; use e.g. 90s, 30m, 2h", optarg);
                return 3 + 1;
            }
            break;
        case 'i':
            if (!bt_parse_duration(optarg, &o->interval) || o->interval < 1) {
                bt_err("--interval: '%s' is not a duration of at least 1 s; use e.g. 60, 90s, 5m",
                       optarg);
                return 3 + 1;
            }
            break;
        case O_DEMO_SPEED:
            if (!strcmp(optarg, "max")) { /* record: unpaced, see bt_clock_start */
                o->demo_speed = INFINITY;
                break;
            }
            if (!bt_parse_double(optarg, &o->demo_speed) || o->demo_speed < 0.1 ||
                o->demo_speed > 100000) {
                bt_err("--demo-speed: '%s' is out of range; use a number from 0.1 to 100,000 "
                       "(or max, for record)", optarg);
                return 3 + 1;
            }
            break;
        case O_DEMO_AT:
            if (!bt_parse_double(optarg, &o->demo_at) || o->demo_at < 0 || o->demo_at > 29) {
                bt_err("--demo-at: '%s' is not a minute of the demo; use 0 to 29", optarg);
                return 3 + 1;
            }
            o->demo = true;
            break;
        case 'h': help = true; break;
        case 'V': printf("bedtop %s\n", BEDTOP_VERSION); return 0 + 1;
        case ':': {
            /* optopt is the short option, or the long option's value */
            const struct opt_def *d = opt_by_val(optopt);
            char nm[40];
            if (d)
                opt_name(d, nm, sizeof nm);
            else
                bt_strlcpy(nm, argv[optind - 1], sizeof nm);
            bt_err("%s: needs a value; see bedtop --help", nm);
            return 3 + 1;
        }
        default: {
            const char *bad = argv[optind - 1];
            if (optopt && bad[0] == '-' && bad[1] != '-')
                bt_err("unknown option -%c; see bedtop --help", optopt);
            else
                bt_err("unknown option %s; see bedtop --help", bad);
            return 3 + 1;
        }
        }
    }
    /* GNU getopt moved the operands to the end: [COMMAND] [FILE] */
    for (int i = optind; i < argc; i++) {
        const char *arg = argv[i];
        if (!*cmd && i == optind && !strcmp(arg, "help")) { /* help [COMMAND] */
            help = help_cmd = true;
            continue;
        }
        if (help_cmd && *cmd) {
            bt_err("help: unexpected argument '%s'; use bedtop help COMMAND", arg);
            return 3 + 1;
        }
        if (!*cmd && (i == optind || (help && i == optind + 1))) {
            for (size_t k = 0; k < BT_ARRAY_LEN(commands); k++)
                if (!strcmp(arg, commands[k].name))
                    *cmd = &commands[k];
            if (*cmd)
                continue;
            bt_err("%sunknown command '%s'; commands are check, plan, record, replay, export, serve, "
                   "report (see bedtop --help)", i > optind ? "help: " : "", arg);
            return 3 + 1;
        }
        if ((*cmd)->bit == C_REPORT && !o->report) { /* report KIND [FILE] */
            o->report = arg;
            continue;
        }
        if (o->file || !*cmd) {
            bt_err("unexpected argument '%s'; see bedtop --help", arg);
            return 3 + 1;
        }
        o->file = arg;
    }
    const struct command *run = *cmd ? *cmd : &dashboard;
    for (size_t i = 0; i < BT_ARRAY_LEN(opt_defs); i++) {
        const struct opt_def *d = &opt_defs[i];
        if (d->o.val <= 0 || d->o.val >= (int)sizeof given || !given[d->o.val] ||
            (d->applies & run->bit))
            continue;
        char nm[40], where[96];
        opt_name(d, nm, sizeof nm);
        applies_text(d->applies, where, sizeof where);
        bt_err("%s does not apply to %s; it is for %s (see bedtop --help)", nm, run->name, where);
        return 3 + 1;
    }
    if (help) { /* an option the command does not take was refused above, as kubectl does */
        if (*cmd)
            command_usage(stdout, *cmd);
        else
            usage(stdout);
        return 0 + 1;
    }
    if (isinf(o->demo_speed) && !(run->bit & C_RECORD)) {
        bt_err("--demo-speed max does not apply to %s; it is for record (a screen needs a "
               "pace: use a number up to 100,000)", run->name);
        return 3 + 1;
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
