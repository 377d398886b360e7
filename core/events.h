/* The event log (issue 22): every status change, warning raised or cleared,
 * collector failure and recovery, and marker, stamped with its data minute
 * (core/dataminute.h). It is derived from the evaluations and the store's
 * events, never recorded, so a replay or an export recomputes it from a
 * recording exactly as the live dashboard built it.
 *
 * Feed it in time order: bt_evlog_store_event for each store event, then
 * bt_evlog_observe with every route's evaluation at instant `at`. */
#ifndef BEDTOP_EVENTS_H
#define BEDTOP_EVENTS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/config.h"
#include "core/headroom.h"
#include "core/model.h"

struct bt_replay_cursor; /* core/recording.h */

enum bt_logkind {
    BT_LOG_STATUS,      /* a route's status changed (from -> to) */
    BT_LOG_RAISED,      /* a warning appeared on a route (code) */
    BT_LOG_CLEARED,     /* a warning went away (code) */
    BT_LOG_FAILED,      /* a collector started failing (source; route or -1) */
    BT_LOG_RECOVERED,   /* it answered again */
    BT_LOG_MARKER,      /* a note added with m */
    BT_LOG_KIND_COUNT
};
const char *bt_logkind_name(enum bt_logkind k); /* "status" "raised" "cleared" "failed" "recovered" "marker" */

#define BT_LOGTEXT 360

struct bt_logent {
    int64_t minute;          /* the data minute: the one clock */
    int64_t at;              /* the instant it was seen (evaluated_at, or the event's time) */
    enum bt_logkind kind;
    int route;               /* -1: no route (a marker) or every route of the source */
    enum bt_status from, to; /* BT_LOG_STATUS */
    enum bt_status severity; /* how it is shown: the new status, the warning's severity,
                              * crit for a failure, ok for a recovery or a marker */
    enum bt_wcode code;      /* BT_LOG_RAISED, BT_LOG_CLEARED */
    enum bt_source source;   /* BT_LOG_FAILED, BT_LOG_RECOVERED */
    char *text;              /* one line, as a person reads it (no route name): a warning's
                              * whole message after "CODE raised: "; owned, at most
                              * BT_LOGTEXT - 1 bytes (a day's log is 10^5 entries) */
};

struct bt_evlog {
    struct bt_logent *e;
    size_t n, cap;
    /* A recording's log holds every entry of it (memory in proportion to the file):
     * max 0. A live session's log is unbounded in time, so it keeps the newest max
     * entries (bt_evlog_set_limit) and says what went: every writer that lists
     * events names `dropped` and the data minute they reach to. */
    size_t max;
    size_t dropped;          /* oldest entries dropped past max (0 with max 0) */
    int64_t dropped_through; /* the newest dropped entry's data minute (0: none) */
    bool unordered;          /* an entry's minute is before the one added before it */
    int nroutes;
    bool primed;             /* the first evaluation was seen */
    enum bt_status *status;  /* per route, as last observed */
    uint32_t *codes;         /* per route, warning codes as last observed (bit per code) */
    int64_t *last_crit;      /* per route, the last data minute it was crit, 0 never */
    bool *failing;           /* per route and source */
    uint64_t store_seen;     /* live: the store events already taken */
    uint64_t generation;     /* bumps on every entry added */
    /* replay: the instants still to evaluate and the next recorded event */
    int64_t *steps;
    size_t nsteps, step, next_event;
    int64_t *ev_min_t;       /* [i]: the earliest time of the store's events i.. (nlog + 1) */
    struct bt_eval *evals;   /* the step's evaluations (nroutes), kept between steps */
    int64_t evals_at;        /* the instant they were evaluated at (0: none) */
    struct bt_eval_groups *groups; /* the replay's grouping, renewed as its routes change */
    /* the walk's own place in the recording (the replay's routes and store, sought by
     * the steps: the caller's replay is never moved) */
    struct bt_replay_cursor *cur;
};

/* The live dashboard's cap (tui/events.c): a week of flapping stays bounded. */
#define BT_EVLOG_LIVE_MAX 20000

void bt_evlog_init(struct bt_evlog *l, int nroutes);
void bt_evlog_free(struct bt_evlog *l);
void bt_evlog_reset(struct bt_evlog *l);
/* Keep only the newest max entries (0: every one, the default); the oldest tenth
 * goes when full, counted in dropped and dropped_through. A live session's log. */
void bt_evlog_set_limit(struct bt_evlog *l, size_t max);
/* "N older events dropped (data minutes through HH:MMZ)" into out; "" when none. */
void bt_evlog_dropped_note(const struct bt_evlog *l, char *out, size_t n);
/* [*lo, *hi): a slice of the entries holding every entry of data minutes from..to
 * (found by binary search while the entries are in minute order, as a replay logs
 * them; the whole log otherwise). Callers still check each entry's minute. */
void bt_evlog_minute_range(const struct bt_evlog *l, int64_t from, int64_t to, size_t *lo,
                           size_t *hi);
/* Takes one store event (error, ok, marker; others are ignored). */
void bt_evlog_store_event(struct bt_evlog *l, const struct bt_config *cfg,
                          const struct bt_event *ev);
/* Live: takes the store's events not seen yet (its ring). */
void bt_evlog_store_events(struct bt_evlog *l, const struct bt_config *cfg,
                           const struct bt_store *st);
/* Compares every route's evaluation at instant at (evals[cfg->nroutes]) with the
 * last one and logs what changed; the first call logs what is not ok. */
void bt_evlog_observe(struct bt_evlog *l, const struct bt_config *cfg,
                      const struct bt_eval *evals, int64_t at);
/* The last data minute route r was crit (0: never). */
int64_t bt_evlog_last_crit(const struct bt_evlog *l, int route);

struct bt_replay;
/* The whole log of a recording: every store event in order and an evaluation at
 * every poll and at every data minute's first instant (as export rows are), so a
 * crit shorter than a minute is still found. The walk is the log's own
 * (bt_replay_cursor): rp shows what it showed before. */
void bt_evlog_from_replay(struct bt_evlog *l, const struct bt_replay *rp);
/* Only what the log holds for data minutes from..to, at the cost of those minutes:
 * the state before them (statuses, warnings, failing sources) is primed from the
 * evaluation just before the window, so the entries are the whole log's (replay --at
 * on a week's recording evaluates a few instants, not every minute of the week). */
void bt_evlog_from_replay_window(struct bt_evlog *l, const struct bt_replay *rp, int64_t from,
                                 int64_t to);
/* The same in steps, for a replay that must stay responsive: each call does one
 * evaluation; false once the log is complete. *upto gets the instant covered so
 * far. rp is not moved: the log's cursor is. */
bool bt_evlog_replay_step(struct bt_evlog *l, const struct bt_replay *rp, int64_t *upto);
/* The same for a caller that uses the step's evaluations too (export's rows, so each
 * minute is evaluated once): false when the log is complete (nothing done); else
 * *at is the step's instant (the log's cursor is sought there) and *evals the routes'
 * evaluations at it, valid until the next step. */
bool bt_evlog_replay_step_evals(struct bt_evlog *l, const struct bt_replay *rp, int64_t *at,
                                struct bt_eval **evals);
/* The log's place in the recording, at the last step's instant: the routes (their
 * quotas then) and the store (as sought there) that step's evaluations were made
 * from, for a caller that writes more of that instant (export's rows). NULL before
 * the first step. */
const struct bt_replay_cursor *bt_evlog_cursor(const struct bt_evlog *l);
/* The data minute the log is complete below: no later step adds an entry of an
 * earlier minute (INT64_MAX once every step is done). */
int64_t bt_evlog_complete_before(const struct bt_evlog *l, const struct bt_replay *rp);
#endif
