/* The running application shared by the commands: options, config, store,
 * collectors, the loop and the recorder. main.c parses and dispatches only. */
#ifndef BEDTOP_APP_H
#define BEDTOP_APP_H
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "collectors/collector.h"
#include "net/loop.h"
#include "core/apicost.h"
#include "core/config.h"
#include "core/headroom.h"
#include "core/model.h"

struct opts {
    const char *config, *profile, *region, *endpoint_url, *admission, *theme, *record;
    const char *format, *from, *to, *since, *at;
    const char *listen;        /* serve: ADDR:PORT (NULL: BT_HTTPD_DEFAULT_LISTEN) */
    const char *replica;       /* serve: the replica label of every series (an HA pair), NULL none */
    const char *source;        /* prometheus+http://HOST:PORT: read bedtop's series back */
    const char *match;         /* --source: label matchers, e.g. region="us-east-1" */
    struct bt_api_cost *api_cost; /* counters that outlive the app (serve's reloads); NULL: the app's own */
    const char *routes[32];    /* check, export: --route, repeatable; none: every route */
    int nroutes;
    const char *unknown_as;    /* check: how an unknown route counts (NULL: warn) */
    const char *file;          /* positional FILE of replay/record/export/report */
    const char *report;        /* report: which one (quota-request, incident) */
    const char *margin;        /* report quota-request: --margin PCT above the peak */
    const char *output;        /* check, export: write here (0600) instead of stdout */
    const char *by;            /* check --by team|project|route: the shares table */
    const char *state;         /* check --state FILE ("default": XDG_STATE_HOME); NULL: the
                                * cache's file for the config and account (check_state.h) */
    bool no_state;             /* check --no-state: no state file read or written */
    double duration;           /* record: stop after this much (simulated) time; NAN none */
    double interval;           /* NAN: config */
    double demo_speed;
    double demo_at;            /* simulated minute; NAN: now */
    bool demo, no_color, ascii, verbose, wide, bell;
    bool serve;                /* serve: a shorter default history (bt_config_serve_history) */
    bool png;                  /* report incident: PNG beside each SVG */
    /* plan: the change asked (core/plan.h), --limits, --replay FILE */
    const char *max_tokens, *concurrency, *traffic, *tier, *replay;
    bool retries_off, limits;
};


struct bt_recorder;

struct app {
    struct opts *o;
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

/* Loads the config (or the demo's) and applies command-line overrides. */
bool app_setup_config(struct opts *o, struct bt_config *cfg);
/* Simulated start time of the demo (minute --demo-at, else default_minute). */
int64_t app_demo_now(const struct opts *o, double default_minute);
/* Config, HTTP, route discovery, store, collectors, clock. 0 or an exit code. */
int app_init(struct app *a, struct opts *o, enum bt_run_mode mode, double sim_start);
/* app_init in two halves, for a caller that discovers the routes itself without
 * waiting (serve's reload, collectors/cloudwatch.h bt_cloudwatch_discover_start):
 * the config, HTTP and checks (a->cfg.nroutes 0: no route configured), then, the
 * routes known, the store, collectors and clock. 0 or an exit code; app_free
 * either way after a failure. */
int app_init_config(struct app *a, struct opts *o, enum bt_run_mode mode);
int app_init_start(struct app *a, double sim_start);
void app_free(struct app *a);
/* Live watching (dashboard, headless record): app_init at the demo's start or
 * now, and a recorder on rec_path when given. Sets *start; 0 or an exit code
 * (the app is freed on failure). */
int app_init_live(struct app *a, struct opts *o, const char *rec_path, int64_t *start);
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
bool app_select_routes(const struct opts *o, const struct bt_config *cfg, bool **keep);
/* Prints "bedtop: ERR" and, when err names no remedy of its own (no "; ") and the
 * file could not be opened at all, what to do about it, by why (kind: "recording", "config";
 * write: it was being created). */
void app_file_error(const char *err, const char *path, const char *kind, bool write);
/* --unknown-as (warn when not given); app_unknown_as_valid checks the word when parsed. */
enum bt_status app_unknown_as(const struct opts *o);
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

int cmd_check(struct opts *o);
int cmd_record(struct opts *o);
/* record --since/--from/--to: the window from CloudWatch (or --source) history into o->file. */
int cmd_record_backfill(struct opts *o);
int cmd_replay(struct opts *o);
int cmd_export(struct opts *o);
int cmd_dashboard(struct opts *o);
int cmd_serve(struct opts *o);
int cmd_report(struct opts *o);
int cmd_plan(struct opts *o);
#endif
