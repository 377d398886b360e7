/* The full-screen dashboard (ncursesw): overview, route detail, help. It only
 * reads the model through the host and never blocks: the app's single loop
 * calls bt_tui_input when stdin is readable and bt_tui_update after data,
 * input, a timer or a resize; signal handlers live in the loop. */
#ifndef BEDTOP_TUI_H
#define BEDTOP_TUI_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/config.h"
#include "core/events.h"
#include "core/model.h"

struct bt_tui_marker {
    int64_t t;
    const char *text;
};

/* Replay's time controls, provided by the app (host->replay; NULL when live).
 * Times are recording times (seconds); the TUI knows no recording format. */
struct bt_tui_replay {
    int64_t start, end;              /* the span the timeline shows */
    const int64_t *polls;            /* poll times, ascending */
    size_t npolls;
    const struct bt_tui_marker *markers;
    size_t nmarkers;
    double speed;                    /* recorded seconds per real second */
    bool playing;
    const char *note;                /* e.g. "backfilled: no admission counters"; NULL none */
    const char *problem;             /* e.g. the first corrupt line; NULL none */
    /* Timeline marks, one per minute from minute0: 0 not scanned yet, 1 quiet,
     * 2 a warning or throttling started in that minute. */
    const unsigned char *minutes;
    size_t nminutes;
    int64_t minute0;
    unsigned version;                /* bumped by the app when anything above changes */
    void *arg;
    void (*seek)(void *arg, int64_t t);      /* shows the model at t (sets host->now) */
    void (*set_speed)(void *arg, double speed);
    void (*set_playing)(void *arg, bool on);
    /* The next (dir +1) or previous (-1) time after/before from at which a warning
     * starts or throttling begins, 0 when none; what gets a short description. */
    int64_t (*find)(void *arg, int64_t from, int dir, char *what, size_t n);
    /* Parses a time as users type it (14:32, -30m, +5m, ISO) into a data minute
     * (core/dataminute.h): every moment the replay names is one. */
    bool (*parse_time)(void *arg, const char *s, int64_t rel, int64_t *out);
};

struct bt_tui_host {                 /* provided by the app; the TUI only reads the model through it */
    const struct bt_config *cfg;
    const struct bt_store *store;
    const char *mode;                /* "live", "demo", "replay" */
    int64_t now;                     /* current (simulated/recorded) time, updated by the loop */
    int64_t next_poll;               /* when the next poll is due (0 unknown) */
    double interval;                 /* poll interval, seconds */
    bool paused;
    double metrics_per_poll, metrics_per_day; /* NAN unknown: cost of watching */
    double metrics_per_min, usd_per_day;      /* measured (core/apicost.h); NAN unknown */
    const char *recording;           /* path being recorded, or NULL */
    bool recording_failed;           /* writes to it fail (disk full): lines are dropped */
    void *arg;                       /* for the actions below */
    void (*refresh_now)(void *arg);
    void (*set_paused)(void *arg, bool paused);
    void (*set_interval)(void *arg, double seconds);
    /* `m` (recording); may be NULL. Returns the instant the marker was filed at (its
     * data minute is the one on screen then: core/dataminute.h), 0 if none. */
    int64_t (*add_marker)(void *arg, const char *note);
    struct bt_tui_replay *replay;    /* replay controls, NULL in the live dashboard */
    /* replay: the event log of the whole recording (core/events.h), entries shown up
     * to the position; NULL live: the dashboard derives its own from what it shows */
    const struct bt_evlog *evlog;
    int64_t evlog_upto;              /* replay: the instant the log is complete to */
};

struct bt_tui_opts {
    const char *theme;               /* NULL: cfg->theme, else "default" */
    bool ascii;                      /* ASCII graphs/borders (automatic when the locale is not UTF-8) */
    bool no_color;                   /* also NO_COLOR in the environment */
    bool bell;                       /* --bell: the terminal bell when a route turns crit */
};

struct bt_tui;
/* Initialises the terminal (setlocale must already be done by main). err gets a reason on failure. */
struct bt_tui *bt_tui_new(const struct bt_tui_opts *o, struct bt_tui_host *host, char *err,
                          size_t errlen);
void bt_tui_input(struct bt_tui *t);       /* stdin readable: read every pending key (nodelay), act */
void bt_tui_update(struct bt_tui *t);      /* redraw iff model generation, clock second, size, or state changed */
void bt_tui_resize(struct bt_tui *t);      /* after SIGWINCH */
/* The next bt_tui_update draws every cell again (host fields the TUI does not watch
 * changed, e.g. the recording path); the terminal still gets only what differs. */
void bt_tui_redraw(struct bt_tui *t);
bool bt_tui_quit(const struct bt_tui *t);
int bt_tui_next_wakeup_ms(const struct bt_tui *t); /* ms until the TUI wants an update (clock tick), -1 none */
/* Restores the terminal (endwin) and frees t; NULL is fine, and the terminal
 * part is idempotent (after bt_tui_emergency_restore it does nothing twice). */
void bt_tui_free(struct bt_tui *t);
void bt_tui_emergency_restore(void);       /* best effort for atexit/crash paths */
#endif
