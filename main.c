/* bedtop: argument parsing and subcommand dispatch only. */
#include <getopt.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/app.h"
#include "core/util.h"

/* The commands, each an entry beside its app/cmd_*.c (tmux's cmd_entry): `bedtop --help`
 * lists them in this order, as does a "does not apply" error ("it is for the dashboard,
 * check, ..."). */
static const struct bt_cmd_entry *const commands[] = {
    &bt_cmd_check_entry, &bt_cmd_record_entry, &bt_cmd_replay_entry, &bt_cmd_export_entry,
    &bt_cmd_serve_entry, &bt_cmd_report_entry, &bt_cmd_plan_entry,
};

/* -o/--output names a FILE: one named like a format is the AWS CLI's --output json|text|
 * table habit (bedtop's --format), almost never a file wanted. */
static bool output_is_file(const char *arg)
{
    if (strcmp(arg, "json") && strcmp(arg, "text") && strcmp(arg, "table") && strcmp(arg, "csv") &&
        strcmp(arg, "prometheus"))
        return true;
    bt_err("-o/--output %s: bedtop's --output names a FILE to write; the output "
           "format is --format (-f %s%s); to write a file of that name use -o ./%s",
           arg, strcmp(arg, "table") ? arg : "text",
           strcmp(arg, "table") ? "" : ": text is the table", arg);
    return false;
}

/* The option table: every option bedtop knows, in the order `bedtop --help` lists them:
 * getopt's view, how its value is read and checked, and its help line. A command takes an
 * option by naming it in its entry (app/app.h struct bt_cmd_entry), which says where the
 * value goes; an option no entry names is unknown. A value is checked as it is read,
 * whatever the command, so a wrong one is the first thing said. */
struct opt_def {
    struct option o;
    enum bt_opt_type type; /* of its value (BT_OPT_T_NONE: --help, --version) */
    const char *shown; /* the help's left column without the short option: "--config FILE" */
    const char *help;  /* its text, lines split by \n; "dashboard, record: ..." where it helps */
    /* BT_OPT_T_STR: refused when valid says false (with bad, or its own message when bad
     * is NULL); BT_OPT_T_NUM: read by num, refused outside min..max (min too when
     * above_min), the word read as word_value; BT_OPT_T_LIST: at most APP_MAX_ROUTES */
    bool (*valid)(const char *arg);
    bool (*num)(const char *arg, double *v);
    double min, max;
    bool above_min;
    const char *word;
    double word_value;
    const char *bad;     /* printf format of the refusal: the value (%s), or the most (%d) */
    const char *implies; /* a flag given with it (--demo-at is the demo's) */
};

static const struct opt_def opt_defs[] = {
    {.o = {.name = "config", .has_arg = required_argument, .val = 'c'}, .type = BT_OPT_T_STR,
     .shown = "--config FILE",
     .help = "config file (default $XDG_CONFIG_HOME/bedtop/config)"},
    {.o = {.name = "profile", .has_arg = required_argument}, .type = BT_OPT_T_STR,
     .shown = "--profile NAME",
     .help = "AWS profile (as the AWS CLI)"},
    {.o = {.name = "region", .has_arg = required_argument}, .type = BT_OPT_T_STR,
     .valid = bt_config_valid_region, .bad = "--region: '%s' is not an AWS Region; use a name like us-east-1",
     .shown = "--region R",
     .help = "AWS Region (else AWS_REGION, the profile, the config)"},
    {.o = {.name = "endpoint-url", .has_arg = required_argument}, .type = BT_OPT_T_STR,
     .shown = "--endpoint-url URL",
     .help = "override the AWS endpoints (testing, VPC endpoints)"},
    {.o = {.name = "interval", .has_arg = required_argument, .val = 'i'}, .type = BT_OPT_T_NUM,
     .num = bt_parse_duration, .min = 1, .max = INFINITY,
     .bad = "--interval: '%s' is not a duration of at least 1 s; use e.g. 60, 90s, 5m",
     .shown = "--interval S",
     .help = "dashboard, record, serve: seconds between polls (60)"},
    {.o = {.name = "admission", .has_arg = required_argument}, .type = BT_OPT_T_STR,
     .shown = "--admission URL",
     .help = "admission-controller counters (Prometheus text/JSON)"},
    {.o = {.name = "source", .has_arg = required_argument}, .type = BT_OPT_T_STR,
     .shown = "--source URL",
     .help = "dashboard, check, record, export: bedtop's own series\n"
             "from prometheus+http://HOST:PORT, not from AWS"},
    {.o = {.name = "match", .has_arg = required_argument}, .type = BT_OPT_T_STR,
     .shown = "--match M",
     .help = "--source: label matchers, e.g. 'region=\"us-east-1\"'"},
    {.o = {.name = "listen", .has_arg = required_argument}, .type = BT_OPT_T_STR,
     .shown = "--listen ADDR:PORT",
     .help = "serve: where to listen (default 127.0.0.1:9464)"},
    {.o = {.name = "replica", .has_arg = required_argument}, .type = BT_OPT_T_STR,
     .shown = "--replica NAME",
     .help = "serve: label every series replica=\"NAME\" (an HA pair)"},
    {.o = {.name = "format", .has_arg = required_argument, .val = 'f'}, .type = BT_OPT_T_STR,
     .shown = "--format F",
     .help = "check: text, json or prometheus; replay --at: text or\n"
             "json; export: csv or json; report quota-request:\n"
             "text, markdown or json"},
    {.o = {.name = "demo", .has_arg = no_argument}, .type = BT_OPT_T_FLAG,
     .shown = "--demo",
     .help = "built-in simulated workload; no AWS needed"},
    {.o = {.name = "demo-speed", .has_arg = required_argument}, .type = BT_OPT_T_NUM,
     .num = bt_parse_double, .min = 0.1, .max = 100000, .word = "max", .word_value = INFINITY, /* record: unpaced, see bt_clock_start */
     .bad = "--demo-speed: '%s' is out of range; use a number from 0.1 to 100,000 (or max, for record)",
     .shown = "--demo-speed N",
     .help = "dashboard, record: simulated time runs N times faster\n"
             "(record: max = no pacing, deterministic)"},
    {.o = {.name = "demo-at", .has_arg = required_argument}, .type = BT_OPT_T_NUM,
     .num = bt_parse_double, .min = 0, .max = 29, .implies = "demo",
     .bad = "--demo-at: '%s' is not a minute of the demo; use 0 to 29",
     .shown = "--demo-at MINUTE",
     .help = "evaluate the demo at data minute 10:MM (0-29),\n"
             "as replay --at; serve: its clock stands still"},
    {.o = {.name = "theme", .has_arg = required_argument}, .type = BT_OPT_T_STR,
     .shown = "--theme NAME",
     .help = "dashboard, replay: color theme (default, light,\n"
             "high-contrast, monochrome)"},
    {.o = {.name = "no-color", .has_arg = no_argument}, .type = BT_OPT_T_FLAG,
     .shown = "--no-color",
     .help = "no colors (also NO_COLOR)"},
    {.o = {.name = "ascii", .has_arg = no_argument}, .type = BT_OPT_T_FLAG,
     .shown = "--ascii",
     .help = "dashboard, replay: ASCII graphs and borders"},
    {.o = {.name = "record", .has_arg = required_argument}, .type = BT_OPT_T_STR,
     .shown = "--record FILE",
     .help = "dashboard, serve: record what is watched"},
    {.o = {.name = "duration", .has_arg = required_argument}, .type = BT_OPT_T_NUM,
     .num = bt_parse_duration, .min = 0, .above_min = true, .max = INFINITY,
     .bad = "--duration: '%s' is not a duration; use e.g. 90s, 30m, 2h",
     .shown = "--duration D",
     .help = "record: stop after D (90s, 30m, 2h) of watched time"},
    {.o = {.name = "since", .has_arg = required_argument}, .type = BT_OPT_T_STR,
     .shown = "--since D",
     .help = "record: backfill the last D (e.g. 3h) from CloudWatch\n"
             "(export --source: the window read from Prometheus;\n"
             "report quota-request: the usage of the last D)"},
    {.o = {.name = "margin", .has_arg = required_argument}, .type = BT_OPT_T_STR,
     .shown = "--margin PCT",
     .help = "report quota-request: ask for the peak plus PCT (20%)"},
    {.o = {.name = "png", .has_arg = no_argument}, .type = BT_OPT_T_FLAG,
     .shown = "--png",
     .help = "report incident: a PNG beside each SVG chart"},
    {.o = {.name = "at", .has_arg = required_argument}, .type = BT_OPT_T_STR,
     .shown = "--at MINUTE",
     .help = "replay: print the report at data MINUTE (14:32, +5m\n"
             "after the first, -30m before the last, ISO 8601)"},
    {.o = {.name = "from", .has_arg = required_argument}, .type = BT_OPT_T_STR,
     .shown = "--from T, --to T",
     .help = "export, report: data minutes T..T; record: the\n"
             "backfill window"},
    {.o = {.name = "to", .has_arg = required_argument}, .type = BT_OPT_T_STR}, /* shown with --from */
    {.o = {.name = "route", .has_arg = required_argument}, .type = BT_OPT_T_LIST,
     .bad = "--route: at most %d routes; list fewer, or none for every route",
     .shown = "--route NAME",
     .help = "check, replay --at, export, report: only this route"},
    {.o = {.name = "wide", .has_arg = no_argument}, .type = BT_OPT_T_FLAG,
     .shown = "--wide",
     .help = "check, replay --at: every column, not 80 columns"},
    {.o = {.name = "by", .has_arg = required_argument}, .type = BT_OPT_T_STR,
     .shown = "--by KEY",
     .help = "check: who holds each quota, a table by team,\n"
             "tag:KEY, project or route; plan --limits: budgets\n"
             "per holder as admission policy JSON"},
    {.o = {.name = "state", .has_arg = required_argument}, .type = BT_OPT_T_STR,
     .shown = "--state FILE",
     .help = "check: keep what this run fetched in FILE (0600;\n"
             "'default': $XDG_STATE_HOME/bedtop/check-state.json)\n"
             "so the next run asks only the minutes it has not seen\n"
             "(on by default: $XDG_CACHE_HOME/bedtop/, one file per\n"
             "configuration and account)"},
    {.o = {.name = "no-state", .has_arg = no_argument}, .type = BT_OPT_T_FLAG,
     .shown = "--no-state",
     .help = "check: no state file read or written (all asked)"},
    {.o = {.name = "bell", .has_arg = no_argument}, .type = BT_OPT_T_FLAG,
     .shown = "--bell",
     .help = "dashboard: the terminal bell when a route turns crit"},
    {.o = {.name = "unknown-as", .has_arg = required_argument}, .type = BT_OPT_T_STR,
     .valid = app_unknown_as_valid, .bad = "--unknown-as: '%s' is not a status; use warn, crit or unknown",
     .shown = "--unknown-as S",
     .help = "check, replay --at: a route whose status is unknown\n"
             "counts as warn (default), crit or unknown"},
    {.o = {.name = "output", .has_arg = required_argument, .val = 'o'}, .type = BT_OPT_T_STR, .valid = output_is_file,
     .shown = "--output FILE",
     .help = "check, export, report quota-request: write FILE\n"
             "(created 0600), not stdout; report incident: the\n"
             "directory of report.md and the charts; the format\n"
             "is -f (not the AWS CLI's --output json)"},
    {.o = {.name = "max-tokens", .has_arg = required_argument}, .type = BT_OPT_T_STR,
     .shown = "--max-tokens N",
     .help = "plan: what if each call asked for N output tokens"},
    {.o = {.name = "concurrency", .has_arg = required_argument}, .type = BT_OPT_T_STR,
     .shown = "--concurrency N",
     .help = "plan: what if at most N calls were in flight"},
    {.o = {.name = "traffic", .has_arg = required_argument}, .type = BT_OPT_T_STR,
     .shown = "--traffic xF",
     .help = "plan: what if calls were F times as many (x0.5, x2)"},
    {.o = {.name = "retries-off", .has_arg = no_argument}, .type = BT_OPT_T_FLAG,
     .shown = "--retries-off",
     .help = "plan: what if retried attempts were not sent"},
    {.o = {.name = "tier", .has_arg = required_argument}, .type = BT_OPT_T_STR,
     .shown = "--tier T",
     .help = "plan: what if the calls used service tier flex or\n"
             "priority (plan --region R: what if the route moved\n"
             "to Region R)"},
    {.o = {.name = "limits", .has_arg = no_argument}, .type = BT_OPT_T_FLAG,
     .shown = "--limits",
     .help = "plan: the limits to set at the admission boundary"},
    {.o = {.name = "replay", .has_arg = required_argument}, .type = BT_OPT_T_STR,
     .shown = "--replay FILE",
     .help = "plan: read a recording instead (with --at TIME)"},
    {.o = {.name = "verbose", .has_arg = no_argument, .val = 'v'}, .type = BT_OPT_T_FLAG,
     .shown = "--verbose",
     .help = "print requests sent to stderr (never credentials)"},
    {.o = {.name = "help", .has_arg = no_argument, .val = 'h'},
     .shown = "--help",
     .help = "this help"},
    {.o = {.name = "version", .has_arg = no_argument, .val = 'V'},
     .shown = "--version",
     .help = "version"},
};

/* One option's line (and its continuation lines) of a help, from its row. */
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
        fprintf(f, "       bedtop %s\n", commands[i]->usage);
    fprintf(f, "       bedtop help [COMMAND]            a command's options and AWS permissions\n"
               "       bedtop help policy               the IAM policy bedtop needs (read only)\n");
    fprintf(f, "\noptions (each applies only to the commands named; elsewhere it is an error):\n");
    for (size_t i = 0; i < BT_ARRAY_LEN(opt_defs); i++)
        opt_help(f, &opt_defs[i]);
    fprintf(f, "\nexit codes of check: 0 ok, 1 warning, 2 critical (the worst route; an unknown\n"
               "route counts as --unknown-as), 3 bedtop could not run or read anything\n");
}

/* Where c keeps option d (its entry's row), NULL when c does not take it. */
static const struct bt_cmd_opt *slot_of(const struct bt_cmd_entry *c, const struct opt_def *d)
{
    for (size_t i = 0; i < c->nopts; i++)
        if (!strcmp(c->opts[i].name, d->o.name))
            return &c->opts[i];
    return NULL;
}

/* Every command takes --help and --version; the others, those its entry names. */
static bool takes(const struct bt_cmd_entry *c, const struct opt_def *d)
{
    return d->type == BT_OPT_T_NONE || slot_of(c, d);
}

/* A command's AWS permissions, from its entry (when it asks AWS) and the collectors'
 * own lists: each action, and when it is needed, wrapped at 80 columns. */
static void print_aws_needs(FILE *f, const struct bt_cmd_entry *c)
{
    if (!c->aws) {
        fprintf(f, "\nAWS permissions: none (%s asks AWS nothing)\n", c->name);
        return;
    }
    fprintf(f, "\nAWS permissions (each read only)%s%s:\n", *c->aws ? ", " : "", c->aws);
    const struct bt_iam_need *l[64];
    size_t n = app_iam_needs(l, BT_ARRAY_LEN(l));
    for (size_t i = 0; i < n && i < BT_ARRAY_LEN(l); i++) {
        if (c->aws_once && l[i]->live_only)
            continue;
        int col = fprintf(f, l[i]->when ? "  %-30s" : "  %s", l[i]->action);
        for (const char *w = l[i]->when; w && *w;) {
            size_t len = strcspn(w, " ");
            if (col + 1 + (int)len > 80 && col > 33)
                col = fprintf(f, "\n%32s", "") - 1;
            col += fprintf(f, " %.*s", (int)len, w);
            w += len + (w[len] == ' ');
        }
        fputc('\n', f);
    }
    fprintf(f, "  (bedtop help policy prints them as an IAM policy)\n");
}

/* `bedtop CMD --help`, `bedtop help CMD`: the synopsis, what it does, and exactly the
 * options parse_args takes for it (those its entry names). */
static void command_usage(FILE *f, const struct bt_cmd_entry *c)
{
    fprintf(f, "usage: bedtop %s\n\n", c->usage);
    for (const char *s = c->summary; *s;) {
        size_t n = strcspn(s, "\n");
        fprintf(f, "  %.*s\n", (int)n, s);
        s += n + (s[n] == '\n');
    }
    fprintf(f, "\noptions of %s:\n", c->name);
    for (size_t i = 0; i < BT_ARRAY_LEN(opt_defs); i++)
        if (takes(c, &opt_defs[i]))
            opt_help(f, &opt_defs[i]);
    print_aws_needs(f, c);
    fprintf(f, "\nbedtop --help lists every command; bedtop(1) says more.\n");
}

/* `bedtop help policy`: an IAM policy that allows every action bedtop asks (each read
 * only), sorted, to attach to the identity that polls. */
static int cmp_action(const void *a, const void *b)
{
    return strcmp((*(const struct bt_iam_need *const *)a)->action,
                  (*(const struct bt_iam_need *const *)b)->action);
}

static void print_policy(FILE *f)
{
    const struct bt_iam_need *l[64];
    size_t n = app_iam_needs(l, BT_ARRAY_LEN(l));
    if (n > BT_ARRAY_LEN(l))
        n = BT_ARRAY_LEN(l);
    qsort(l, n, sizeof l[0], cmp_action);
    fprintf(f, "{\n  \"Version\": \"2012-10-17\",\n  \"Statement\": [\n    {\n"
               "      \"Sid\": \"BedtopReadOnly\",\n      \"Effect\": \"Allow\",\n"
               "      \"Action\": [\n");
    for (size_t i = 0; i < n; i++)
        fprintf(f, "        \"%s\"%s\n", l[i]->action, i + 1 < n ? "," : "");
    fprintf(f, "      ],\n      \"Resource\": \"*\"\n    }\n  ]\n}\n");
}

/* getopt's value for row i: its short letter, else 256 + i (past every letter) */
static int opt_val(size_t i)
{
    return opt_defs[i].o.val ? opt_defs[i].o.val : 256 + (int)i;
}

static const struct opt_def *opt_by_val(int val)
{
    for (size_t i = 0; i < BT_ARRAY_LEN(opt_defs); i++)
        if (opt_val(i) == val)
            return &opt_defs[i];
    return NULL;
}

static const struct opt_def *opt_by_name(const char *name)
{
    for (size_t i = 0; i < BT_ARRAY_LEN(opt_defs); i++)
        if (!strcmp(opt_defs[i].o.name, name))
            return &opt_defs[i];
    return NULL;
}

/* "the dashboard, check, export": the commands that take d. */
static void applies_text(const struct opt_def *d, char *out, size_t n)
{
    out[0] = '\0';
    size_t len = 0;
    if (takes(&bt_cmd_dashboard_entry, d))
        len += (size_t)snprintf(out + len, n - len, "the dashboard");
    for (size_t i = 0; i < BT_ARRAY_LEN(commands) && len < n; i++)
        if (takes(commands[i], d))
            len += (size_t)snprintf(out + len, n - len, "%s%s", len ? ", " : "", commands[i]->name);
}

/* The option by its long name (the short one, where there is one, means the same). */
static void opt_name(const struct opt_def *d, char *out, size_t n)
{
    snprintf(out, n, "--%s", d->o.name);
}

/* Reads one value of d (optarg) as its row says; false, with its one-line error, when it
 * is refused. *count: the values of a repeatable option given so far. */
static bool read_value(const struct opt_def *d, const char *arg, double *num, int *count)
{
    switch (d->type) {
    case BT_OPT_T_STR:
        if (!d->valid || d->valid(arg))
            return true;
        if (d->bad)
            bt_err(d->bad, arg);
        return false;
    case BT_OPT_T_NUM:
        if (d->word && !strcmp(arg, d->word)) {
            *num = d->word_value;
            return true;
        }
        if (!d->num(arg, num) || *num < d->min || *num > d->max || (d->above_min && *num <= d->min)) {
            bt_err(d->bad, arg);
            return false;
        }
        return true;
    case BT_OPT_T_LIST:
        if (*count >= APP_MAX_ROUTES) {
            bt_err(d->bad, APP_MAX_ROUTES);
            return false;
        }
        ++*count;
        return true;
    case BT_OPT_T_FLAG:
    case BT_OPT_T_NONE:
        break;
    }
    return true;
}

/* One option as given: the row, its text and what was read of it. */
struct given {
    const struct opt_def *d;
    const char *arg;
    double num;
};

/* c's entry names options of the table, each once and as the option's type, and with
 * any option it implies (--demo-at, --demo). Checked on every run, --help too, so a
 * wrong row fails every test that runs the command, not only one that gives the option. */
static bool entry_ok(const struct bt_cmd_entry *c)
{
    for (size_t i = 0; i < c->nopts; i++) {
        const struct bt_cmd_opt *r = &c->opts[i];
        const struct opt_def *d = opt_by_name(r->name);
        const struct opt_def *also = d && d->implies ? opt_by_name(d->implies) : NULL;
        const char *why = !d                               ? "which is no option"
                          : d->type != r->type || !r->type ? "as another type than the option's"
                          : slot_of(c, d) != r             ? "twice"
                          : d->implies && (!also || also->type != BT_OPT_T_FLAG || !slot_of(c, also))
                              ? "without the flag it implies"
                              : NULL;
        if (why) {
            bt_err("internal: the entry of %s keeps --%s %s", c->name, r->name, why);
            return false;
        }
    }
    return true;
}

/* Puts g's value where c's entry row says (entry_ok: the row is there, of its type). */
static void store(void *opts, const struct bt_cmd_entry *c, const struct opt_def *d,
                  const struct given *g)
{
    const struct bt_cmd_opt *r = slot_of(c, d);
    char *at = (char *)opts + r->off;
    switch (r->type) {
    case BT_OPT_T_STR: memcpy(at, &g->arg, sizeof g->arg); break;
    case BT_OPT_T_FLAG: *(bool *)at = true; break;
    case BT_OPT_T_NUM: memcpy(at, &g->num, sizeof g->num); break;
    case BT_OPT_T_LIST: {
        int *n = (int *)((char *)opts + r->count_off);
        memcpy(at + (size_t)*n * sizeof g->arg, &g->arg, sizeof g->arg);
        ++*n;
        break;
    }
    case BT_OPT_T_NONE: break;
    }
}

/* The command line as read: the options given, in their order, and the operands. */
struct cmdline {
    struct given *given;
    int ngiven;
    bool seen[BT_ARRAY_LEN(opt_defs)];  /* by row: given */
    int values[BT_ARRAY_LEN(opt_defs)]; /* by row: values given (--route, repeatable) */
    bool help;                          /* -h/--help or the help command: after the checks */
    bool help_cmd;                      /* `bedtop help [COMMAND]` */
    bool help_policy;                   /* `bedtop help policy` */
    const struct bt_cmd_entry *cmd;     /* NULL: the dashboard */
    const char *file, *word;
};

/* The options, each read and checked by its row as getopt meets it, whatever the command
 * (a wrong value is the first thing said). 0 to go on, or an exit code + 1. */
static int read_options(int argc, char **argv, struct cmdline *cl)
{
    struct option long_opts[BT_ARRAY_LEN(opt_defs) + 1];
    for (size_t i = 0; i < BT_ARRAY_LEN(opt_defs); i++) {
        long_opts[i] = opt_defs[i].o;
        long_opts[i].val = opt_val(i);
    }
    long_opts[BT_ARRAY_LEN(opt_defs)] = (struct option){0};
    opterr = 0; /* our own one-line messages */
    for (;;) {
        int c = getopt_long(argc, argv, ":c:i:f:o:vhV", long_opts, NULL);
        if (c == -1)
            return 0;
        const struct opt_def *d = c == ':' || c == '?' ? NULL : opt_by_val(c);
        if (d)
            cl->seen[d - opt_defs] = true;
        if (c == 'h') {
            cl->help = true;
        } else if (c == 'V') {
            printf("bedtop %s\n", BEDTOP_VERSION);
            return 0 + 1;
        } else if (c == ':') {
            /* optopt is the short option, or the long option's value */
            const struct opt_def *m = opt_by_val(optopt);
            char nm[40];
            if (m)
                opt_name(m, nm, sizeof nm);
            else
                bt_strlcpy(nm, argv[optind - 1], sizeof nm);
            bt_err("%s: needs a value; see bedtop --help", nm);
            return 3 + 1;
        } else if (!d) {
            const char *bad = argv[optind - 1];
            if (optopt && bad[0] == '-' && bad[1] != '-')
                bt_err("unknown option -%c; see bedtop --help", optopt);
            else
                bt_err("unknown option %s; see bedtop --help", bad);
            return 3 + 1;
        } else {
            double num = 0;
            if (!read_value(d, optarg, &num, &cl->values[d - opt_defs]))
                return 3 + 1;
            cl->given[cl->ngiven++] = (struct given){.d = d, .arg = optarg, .num = num};
        }
    }
}

/* The operands, which GNU getopt moved to the end: [help] [COMMAND] [WORD] [FILE]. 0 to go
 * on, or an exit code + 1. */
static int read_operands(int argc, char **argv, struct cmdline *cl)
{
    for (int i = optind; i < argc; i++) {
        const char *arg = argv[i];
        if (!cl->cmd && i == optind && !strcmp(arg, "help")) { /* help [COMMAND] */
            cl->help = cl->help_cmd = true;
            continue;
        }
        if (cl->help_cmd && !cl->cmd && !cl->help_policy && i == optind + 1 && !strcmp(arg, "policy")) {
            cl->help_policy = true;
            continue;
        }
        if (cl->help_cmd && (cl->cmd || cl->help_policy)) {
            bt_err("help: unexpected argument '%s'; use bedtop help COMMAND", arg);
            return 3 + 1;
        }
        if (!cl->cmd && (i == optind || (cl->help && i == optind + 1))) {
            for (size_t k = 0; k < BT_ARRAY_LEN(commands); k++)
                if (!strcmp(arg, commands[k]->name))
                    cl->cmd = commands[k];
            if (cl->cmd)
                continue;
            bt_err("%sunknown command '%s'; commands are check, plan, record, replay, export, serve, "
                   "report (see bedtop --help)", i > optind ? "help: " : "", arg);
            return 3 + 1;
        }
        if (cl->cmd->word && !cl->word) { /* report KIND [FILE] */
            cl->word = arg;
            continue;
        }
        if (cl->file || !cl->cmd) {
            bt_err("unexpected argument '%s'; see bedtop --help", arg);
            return 3 + 1;
        }
        cl->file = arg;
    }
    return 0;
}

/* False, with the one-line error, when an option given is not one run takes (the first
 * in the table's order). */
static bool all_taken(const struct bt_cmd_entry *run, const struct cmdline *cl)
{
    for (size_t i = 0; i < BT_ARRAY_LEN(opt_defs); i++) {
        const struct opt_def *d = &opt_defs[i];
        if (!cl->seen[i] || takes(run, d))
            continue;
        char nm[40], where[96];
        opt_name(d, nm, sizeof nm);
        applies_text(d, where, sizeof where);
        bt_err("%s does not apply to %s; it is for %s (see bedtop --help)", nm, run->name, where);
        return false;
    }
    return true;
}

/* run's own options struct: the common defaults, its own, the operands, then each value
 * given where its entry says. Kept for the process's lifetime. */
static void *opts_mem;
static void *command_opts(const struct bt_cmd_entry *run, const struct cmdline *cl)
{
    opts_mem = bt_xcalloc(1, run->size);
    struct app_opts *common = opts_mem;
    common->interval = NAN;
    common->demo_speed = 1;
    common->demo_at = NAN;
    common->file = cl->file;
    if (run->init)
        run->init(opts_mem);
    if (run->word)
        memcpy((char *)opts_mem + run->word_off, &cl->word, sizeof cl->word);
    for (int i = 0; i < cl->ngiven; i++) {
        const struct opt_def *d = cl->given[i].d;
        store(opts_mem, run, d, &cl->given[i]);
        if (d->implies) /* entry_ok: run takes it */
            store(opts_mem, run, opt_by_name(d->implies), &(struct given){0});
    }
    return opts_mem;
}

/* The command to run and its options (NULL: nothing to run). 0 to go on, or an exit code + 1. */
static int parse_args(int argc, char **argv, void **opts, const struct bt_cmd_entry **cmd)
{
    *opts = NULL;
    *cmd = NULL;
    size_t most = 1; /* options given: at most one a character (-vvv is three) */
    for (int i = 1; i < argc; i++)
        most += strlen(argv[i]);
    struct cmdline cl = {.given = bt_xcalloc(most, sizeof *cl.given)};
    int rc = read_options(argc, argv, &cl);
    if (!rc)
        rc = read_operands(argc, argv, &cl);
    const struct bt_cmd_entry *run = cl.cmd ? cl.cmd : &bt_cmd_dashboard_entry;
    if (!rc && (!entry_ok(run) || !all_taken(run, &cl)))
        rc = 3 + 1;
    if (!rc && cl.help) { /* an option the command does not take was refused above, as kubectl does */
        if (cl.help_policy)
            print_policy(stdout);
        else if (cl.cmd)
            command_usage(stdout, cl.cmd);
        else
            usage(stdout);
        rc = 0 + 1;
    }
    if (!rc) {
        *opts = command_opts(run, &cl);
        *cmd = run;
    }
    free(cl.given);
    return rc;
}

int main(int argc, char **argv)
{
    void *opts;
    const struct bt_cmd_entry *cmd;
    app_process_init(); /* out of memory from here on says so */
    setlocale(LC_ALL, "");
    setlocale(LC_NUMERIC, "C"); /* JSON, CSV and recordings need a dot */
    int r = parse_args(argc, argv, &opts, &cmd);
    if (r)
        return r - 1;
    return cmd->exec(opts);
}
