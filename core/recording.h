/* Recordings (man 5 bedtop-recording): JSON Lines. A versioned header carries
 * routes, quotas, thresholds and burndown values, so a recording replays with
 * no config; then one line per poll with its samples and events. Written
 * append-only, flushed per line, created 0600; never a credential in it. */
#ifndef BEDTOP_RECORDING_H
#define BEDTOP_RECORDING_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/config.h"
#include "core/model.h"
#include "core/when.h"

#define BT_REC_FORMAT "bedtop-recording"
/* 2.0: admission counters are raw readings per series ("k", "c"), route
 * settings learned at run time are typed events; 1.x files still replay */
/* 2.1: poll lines carry coverage ("v": what each good poll asked for); files
 * without it replay with coverage inferred */
#define BT_REC_MAJOR 2
/* 2.2: the header carries the spend settings and the price rows in effect
 * ("prices"); files without them are priced with the installed table */
#define BT_REC_MINOR 2

struct bt_recorder;
/* Where a recorder's bytes go (io/recfile.c: a file created 0600). */
struct bt_rec_sink {
    /* Writes all n bytes: 0, or the errno value of the failure (ENOSPC). */
    int (*write)(void *arg, const char *p, size_t n);
    /* Cuts what was written back to size bytes (a torn line); false if it cannot. */
    bool (*truncate)(void *arg, long long size);
    /* The size written so far as the medium has it; -1 if unknown. */
    long long (*size)(void *arg);
    /* Done; keep false: the header never got through, drop what there is. */
    void (*close)(void *arg, bool keep);
    void *arg;
};
/* The header line (without its newline) for cfg; bt_recorder_header_free releases
 * it. Built before anything is opened: out of memory leaves no file. */
char *bt_recorder_header(const struct bt_config *cfg, const char *mode, int64_t now);
void bt_recorder_header_free(char *header);
/* Writes header and a newline through sink; name stands for the file in
 * messages. The recorder owns the sink from here: on failure it is closed
 * (keep false) and NULL returned with "name: why" in err.
 * bt_recorder_open (io/recfile.h) does this on a new file. */
struct bt_recorder *bt_recorder_start(const struct bt_rec_sink *sink, const char *name,
                                      const char *header, int64_t now, char *err, size_t errlen);
/* Taps the store: every sample and event it takes goes into the next line. */
void bt_recorder_attach(struct bt_recorder *r, struct bt_store *s);
/* Writes one line with what was taken since the last (nothing pending: no line).
 * A failed write (disk full) is reported once through bt_recorder_error and the
 * line is dropped; recording resumes when writes succeed. Returns 0 or -1. */
int bt_recorder_flush(struct bt_recorder *r, int64_t t);
/* Adds to the next line directly (backfill writes minutes it fetched itself). */
void bt_recorder_add_sample(struct bt_recorder *r, const struct bt_sample *smp, int64_t arrival);
void bt_recorder_add_coverage(struct bt_recorder *r, const struct bt_coverage *c, int64_t arrival);
void bt_recorder_add_event(struct bt_recorder *r, const struct bt_event *ev);
void bt_recorder_marker(struct bt_recorder *r, struct bt_store *s, int64_t t, const char *note);
const char *bt_recorder_error(const struct bt_recorder *r); /* NULL when fine */
unsigned long bt_recorder_lines(const struct bt_recorder *r);
unsigned long bt_recorder_dropped(const struct bt_recorder *r);
const char *bt_recorder_path(const struct bt_recorder *r);
/* Writes what is pending as a poll at the newest time the recorder took (the
 * last flush, a sample's arrival or an event's time), then closes. */
void bt_recorder_close(struct bt_recorder *r);

struct bt_marker {
    int64_t t;
    char text[224];
};

/* An opened recording: its routes, all samples (each visible from its
 * arrival), the events, the poll times and the markers. */
struct bt_replay {
    char path[512];
    char mode[16];               /* what was recorded: live, demo, backfill */
    char created_by[64];
    struct bt_config cfg;
    struct bt_route *base;       /* routes as in the header (quotas before events) */
    struct bt_store store;
    int64_t start, end;          /* recording start (header) and its end: the last line's
                                  * time, or a later event's (one a reply brought after
                                  * the last poll, written in the final line) */
    int64_t last_event;          /* the newest event's time */
    int64_t *polls;              /* poll times, ascending */
    size_t npolls;
    struct bt_marker *markers;
    size_t nmarkers, capmarkers;
    unsigned long skipped;       /* corrupt or truncated lines */
    char first_problem[256];     /* the first of them, "FILE:LINE: why" */
    bool has_admission;          /* any admission sample or counter reading present */
    char **series;               /* 2.x: counter series the file named ("k"), by index */
    bool prices_recorded;        /* 2.2: the header carried "prices" (cfg.prices holds them);
                                  * false: bt_replay_open prices with the installed table */
    size_t nseries;
    int64_t *arrivals;           /* every instant a sample, reading or coverage record
                                  * becomes visible at, ascending, once each */
    size_t narrivals, caparrivals;
};

/* Lines of a recording, read twice (one pass sizes the store). */
struct bt_rec_lines {
    /* 1 a complete line, 2 a last line without its newline, 0 the end. *line is
     * terminated, without its newline, and valid until the next call. */
    int (*next)(void *arg, char **line, size_t *n);
    /* Back to the first line: 0, or the errno value of the failure. */
    int (*rewind)(void *arg);
    void *arg;
};
/* Reads a recording from src; name stands for the file in messages ("name:line:
 * why"). warn(arg, msg) is called for each skipped line (may be NULL).
 * bt_replay_open (io/recfile.h) does this on a file. */
bool bt_replay_open_lines(struct bt_replay *rp, const char *name, const struct bt_rec_lines *src,
                          void (*warn)(void *, const char *), void *warn_arg, char *err,
                          size_t errlen);
/* The same from memory (data need not be terminated). */
bool bt_replay_open_mem(struct bt_replay *rp, const char *name, const char *data, size_t len,
                        void (*warn)(void *, const char *), void *warn_arg, char *err,
                        size_t errlen);
/* Shows the model as it was at t (clamped to the recording). */
void bt_replay_seek(struct bt_replay *rp, int64_t t);

/* A walk over an opened replay that never moves it: the routes and a view of the store
 * (bt_store_view) of its own, sought on their own, while the caller's replay stays at
 * the instant it shows (the quota request's causes, the incident, its holders, the
 * event log each walk one; so does the dashboard's background scan of a replay). The
 * samples, events and coverage records stay the replay's, read only. Valid while rp is
 * open. */
struct bt_replay_cursor {
    const struct bt_replay *rp;
    struct bt_config cfg;    /* rp's, its routes a copy (a seek sets their quotas and
                              * learned settings); the tables are rp's */
    struct bt_store store;   /* a view of rp's */
    int64_t at;              /* the instant sought (0: none yet) */
};
void bt_replay_cursor_open(struct bt_replay_cursor *c, const struct bt_replay *rp);
/* The model as it was at t (clamped to the recording), as bt_replay_seek shows it. */
void bt_replay_cursor_seek(struct bt_replay_cursor *c, int64_t t);
void bt_replay_cursor_close(struct bt_replay_cursor *c);
/* Whether the store sought to `to` shows what it showed sought to `from` (from < to):
 * no sample, reading or coverage record arrived and no event was logged in (from, to]
 * (false where the log is not in time order). */
bool bt_replay_quiet(const struct bt_replay *rp, int64_t from, int64_t to);
/* Index of the last poll at or before t (0 if before the first). */
size_t bt_replay_poll_at(const struct bt_replay *rp, int64_t t);
void bt_replay_free(struct bt_replay *rp);

/* A time typed for a recording, with one meaning everywhere (replay --at, export
 * --from/--to, `g` in the replay): "+D" is D after the recording's start, "-D" is
 * D before its end, HH:MM on the recording's day, or an ISO time. */
bool bt_replay_when(const struct bt_replay *rp, const char *s, int64_t *out);
#endif
