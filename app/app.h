/* The running application shared by the commands: options, config, store,
 * collectors, the loop and the recorder. main.c parses and dispatches only. */
#ifndef BEDTOP_APP_H
#define BEDTOP_APP_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "collectors/collector.h"
#include "net/loop.h"
#include "core/apicost.h"
#include "core/config.h"
#include "core/headroom.h"
#include "core/model.h"
#include "io/file.h" /* bt_err: the commands' messages, and main.c's */

/* The options every command shares: the account and Region to poll, the config, the
 * --source, the demo, the view's looks, and the operand FILE (plan: ROUTE). Each command
 * keeps its own options in its own struct (beside its cmd_*.c), which begins with
 * APP_OPTS_COMMON: its code names the shared ones as its own (o->demo) and hands them
 * to the app as one (&o->common), as the kernel's struct_group does. What a command
 * takes, and where each value goes, is its entry (struct bt_cmd_entry below). */
#define APP_COMMON_FIELDS                                                                    \
    const char *config, *profile, *region, *endpoint_url, *admission, *theme;               \
    const char *source;           /* prometheus+http://HOST:PORT: read bedtop's series back */ \
    const char *match;            /* --source: label matchers, e.g. region="us-east-1" */    \
    const char *file;             /* the operand FILE of replay/record/export/report */      \
    double interval;              /* NAN: config */                                          \
    double demo_speed;                                                                       \
    double demo_at;               /* simulated minute; NAN: now */                           \
    bool demo, no_color, ascii, verbose;                                                     \
    bool serve;                   /* serve: a shorter default history (bt_config_serve_history) */ \
    struct bt_api_cost *api_cost; /* counters that outlive the app (serve's reloads); NULL: the app's own */

struct app_opts {
    APP_COMMON_FIELDS
};
#define APP_OPTS_COMMON                                                                      \
    union {                                                                                  \
        struct app_opts common;                                                              \
        struct {                                                                             \
            APP_COMMON_FIELDS                                                                \
        };                                                                                   \
    }
#define APP_MAX_ROUTES 32 /* --route, repeatable */

/* One command as tmux's cmd_entry: its name, synopsis, what it does, the options it takes
 * and where each value goes, its options struct and how it runs. main.c's option table
 * says how every option is read, checked and helped; a command takes an option by
 * listing it here: `bedtop CMD --help` prints exactly these, any other is refused
 * ("--wide does not apply to serve; it is for check, replay"). */
enum bt_opt_type { BT_OPT_T_NONE, BT_OPT_T_STR, BT_OPT_T_FLAG, BT_OPT_T_NUM, BT_OPT_T_LIST };
struct bt_cmd_opt {
    const char *name;      /* the long option, without "--" */
    enum bt_opt_type type; /* its field's type, which main.c checks against the option's */
    size_t off;            /* offsetof its field in the command's options struct */
    size_t count_off;      /* BT_OPT_T_LIST: offsetof the number of values given */
};
/* 0 when field f of T has C type C, else a compile error (a row cannot point a value
 * at a field of another type) */
#define BT_OPT_IS_(T, f, C) (0 * sizeof(_Generic(((T *)0)->f, C: 1)))
#define BT_OPT_STR(nm, T, f) {.name = nm, .type = BT_OPT_T_STR, .off = offsetof(T, f) + BT_OPT_IS_(T, f, const char *)}
#define BT_OPT_FLAG(nm, T, f) {.name = nm, .type = BT_OPT_T_FLAG, .off = offsetof(T, f) + BT_OPT_IS_(T, f, bool)}
#define BT_OPT_NUM(nm, T, f) {.name = nm, .type = BT_OPT_T_NUM, .off = offsetof(T, f) + BT_OPT_IS_(T, f, double)}
/* repeatable (--route): up to APP_MAX_ROUTES values into f[], their number into n */
#define BT_OPT_LIST(nm, T, f, n)                                                             \
    {.name = nm, .type = BT_OPT_T_LIST, .off = offsetof(T, f) + BT_OPT_IS_(T, f, const char **), \
     .count_off = offsetof(T, n) + BT_OPT_IS_(T, n, int)}
/* A command's own options, as an X-macro list of X(T, KIND, field, "option") rows (KIND:
 * STR, FLAG, NUM or LIST): APP_OPT_FIELD makes each its field of the command's options
 * struct, APP_OPT_ROW its row of the command's entry, so one row is all a command's own
 * option needs beside main.c's (a LIST field f is f[APP_MAX_ROUTES], its count nf). */
#define APP_OPT_FIELD(T, kind, f, nm) APP_OPT_FIELD_##kind(f)
#define APP_OPT_FIELD_STR(f) const char *f;
#define APP_OPT_FIELD_FLAG(f) bool f;
#define APP_OPT_FIELD_NUM(f) double f;
#define APP_OPT_FIELD_LIST(f) const char *f[APP_MAX_ROUTES]; int n##f;
#define APP_OPT_ROW(T, kind, f, nm) APP_OPT_ROW_##kind(nm, T, f),
#define APP_OPT_ROW_STR(nm, T, f) BT_OPT_STR(nm, T, f)
#define APP_OPT_ROW_FLAG(nm, T, f) BT_OPT_FLAG(nm, T, f)
#define APP_OPT_ROW_NUM(nm, T, f) BT_OPT_NUM(nm, T, f)
#define APP_OPT_ROW_LIST(nm, T, f) BT_OPT_LIST(nm, T, f, n##f)
/* The shared options that go together: the AWS account polled (and --verbose, which
 * shows its requests), the demo, the series read back from Prometheus. */
#define APP_OPTS_AWS(T)                                                                      \
    BT_OPT_STR("profile", T, profile), BT_OPT_STR("region", T, region),                      \
        BT_OPT_STR("endpoint-url", T, endpoint_url), BT_OPT_FLAG("verbose", T, verbose)
#define APP_OPTS_DEMO(T) BT_OPT_FLAG("demo", T, demo), BT_OPT_NUM("demo-at", T, demo_at)
#define APP_OPTS_SOURCE(T) BT_OPT_STR("source", T, source), BT_OPT_STR("match", T, match)

struct bt_cmd_entry {
    const char *name;    /* as typed; the dashboard's (typed as no command) "the dashboard" */
    const char *usage;   /* the synopsis after "bedtop " (NULL: the dashboard) */
    const char *summary; /* lines of what it does, for its --help */
    const struct bt_cmd_opt *opts;
    size_t nopts;
    size_t size;         /* sizeof its options struct (which begins with APP_OPTS_COMMON) */
    bool word;           /* its first operand is a word (report KIND [FILE]) kept at word_off */
    size_t word_off;
    void (*init)(void *opts); /* its own defaults, after the common ones; may be NULL */
    int (*exec)(void *opts);
    /* When it asks AWS, which then needs app_iam_needs' actions: "" always, else the
     * condition ("unless --demo or --source"); NULL: never (it reads a file). Its --help
     * prints the actions with it, `bedtop help policy` the IAM policy of them all. */
    const char *aws;
    bool aws_once; /* it polls once (BT_MODE_ONCE): the live-only actions are not asked */
};

/* The AWS actions the live collectors ask (each read only), in their order and each
 * once, then the credential chain's (sts:AssumeRole with a role): what an identity
 * needs. At most max into out; returns how many there are. */
size_t app_iam_needs(const struct bt_iam_need **out, size_t max);
/* The entry's exec: fn run on the command's own options struct T. */
#define APP_CMD_EXEC(fn, T)                                                                  \
    static int fn(T *o);                                                                     \
    static int fn##_exec(void *opts) { return fn(opts); }

extern const struct bt_cmd_entry bt_cmd_dashboard_entry, bt_cmd_check_entry, bt_cmd_record_entry,
    bt_cmd_replay_entry, bt_cmd_export_entry, bt_cmd_serve_entry, bt_cmd_report_entry,
    bt_cmd_plan_entry;

/* record's options: export --source and report quota-request --since make a recording
 * of a window as record --since does (cmd_record_backfill). */
#define RECORD_OPTIONS(X, T)                                                                 \
    X(T, NUM, duration, "duration") /* stop after this much (simulated) time; NAN none */     \
    X(T, STR, since, "since")       /* backfill: the last D */                                \
    X(T, STR, from, "from")         /* backfill: the window from T ... */                     \
    X(T, STR, to, "to")             /* ... to T */
struct record_opts {
    APP_OPTS_COMMON;
    RECORD_OPTIONS(APP_OPT_FIELD, struct record_opts)
};


struct bt_recorder;

struct app {
    struct app_opts *o;
    struct bt_config cfg;
    struct bt_store store;
    struct bt_ctx ctx;
    struct bt_loop loop;
    const struct bt_collector_ops *const *ops;   /* the collectors of inst[] */
    struct bt_loop_task tasks[8];                /* their timing, for the loop */
    void *inst[8];
    struct bt_recorder *rec;
    uint64_t errors_seen;      /* events already printed (check, record) */
    char last_error[BT_SRC_COUNT][224]; /* printed once until it changes */
    bool config_ok;
    struct bt_api_cost cost;   /* requests and metrics counted, unless o->api_cost */
};

/* What the process sets up before anything runs (main.c, first): core's out-of-memory
 * hook, so out of memory says so on stderr before exit 3. */
void app_process_init(void);
/* Loads the config (or the demo's) and applies command-line overrides. */
bool app_setup_config(struct app_opts *o, struct bt_config *cfg);
/* Simulated start time of the demo (minute --demo-at, else default_minute). */
int64_t app_demo_now(const struct app_opts *o, double default_minute);
/* Config, HTTP, route discovery, store, collectors, clock. 0 or an exit code. */
int app_init(struct app *a, struct app_opts *o, enum bt_run_mode mode, double sim_start);
/* app_init in two halves, for a caller that discovers the routes itself without
 * waiting (serve's reload, collectors/cloudwatch.h bt_cloudwatch_discover_start):
 * the config, HTTP and checks (a->cfg.nroutes 0: no route configured), then, the
 * routes known, the store, collectors and clock. 0 or an exit code; app_free
 * either way after a failure. */
int app_init_config(struct app *a, struct app_opts *o, enum bt_run_mode mode);
int app_init_start(struct app *a, double sim_start);
void app_free(struct app *a);
/* Live watching (dashboard, headless record): app_init at the demo's start or
 * now, and a recorder on rec_path when given. Sets *start; 0 or an exit code
 * (the app is freed on failure). */
int app_init_live(struct app *a, struct app_opts *o, const char *rec_path, int64_t *start);
/* Its recorder on rec_path (NULL: none) from start; 0, or 3 with the app freed. */
int app_record_to(struct app *a, const char *rec_path, int64_t start);
void *app_find_inst(struct app *a, const struct bt_collector_ops *ops);
/* check, plan: one evaluation's worth of data (the demo at start, else every collector
 * once, admission twice a gap apart, within a bound); returns the time to evaluate at.
 * *sig is the signal that stopped the poll before its data was in (0: none). */
int64_t app_poll_once(struct app *a, int64_t start, int *sig);
void app_cost(struct app *a, double *per_poll, double *per_day);
/* Collector errors since the last call on stderr, each text once until it changes. */
void app_print_new_errors(struct app *a);

/* --route NAME... against the routes of cfg: *keep (caller frees) marks the routes
 * to show, NULL when no --route was given. False, with a one-line error listing the
 * route names, when a name is not a route. */
bool app_select_routes(const char **routes, int nroutes, const struct bt_config *cfg, bool **keep);
/* Prints "bedtop: ERR" and, when err names no remedy of its own (no "; ") and the
 * file could not be opened at all, what to do about it, by why (kind: "recording", "config";
 * write: it was being created). */
void app_file_error(const char *err, const char *path, const char *kind, bool write);
/* --unknown-as (warn when not given); app_unknown_as_valid checks the word when parsed. */
enum bt_status app_unknown_as(const char *unknown_as);
bool app_unknown_as_valid(const char *s);
/* -o FILE, or standard output when path is NULL. A regular file is written
 * beside it (mode 0600) and renamed over it when closed, so it is whole or
 * unchanged. */
struct app_output {
    FILE *f;
    const char *path;
    char *tmp;
};
/* False, with a one-line error, when the file cannot be created. */
bool app_output_open(struct app_output *w, const char *path);
/* Flushes, closes and renames into place; false, with a one-line error, when
 * anything could not be written (the old file, if any, is then unchanged). */
bool app_output_close(struct app_output *w);
/* Closes w without renaming its temp file into place (an interrupted report). */
void app_output_discard(struct app_output *w);

/* record --since/--from/--to: the window from CloudWatch (or --source) history into o->file. */
int cmd_record_backfill(struct record_opts *o);
#endif
